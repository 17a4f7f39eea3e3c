//! The font database every render uses: DejaVu and FreeFont loaded by path from Debian's
//! packages (not the whole system's fonts, so that renders do not change with whatever else is
//! installed on a machine).
use std::sync::{Arc, OnceLock};

use resvg::usvg::fontdb;

use super::FacesError;

/// Font folders loaded, with the Debian package that fills each.
pub(crate) const FONT_DIRS: [(&str, &str); 2] = [
    ("/usr/share/fonts/truetype/dejavu", "fonts-dejavu-core"),
    ("/usr/share/fonts/truetype/freefont", "fonts-freefont-ttf"),
];

/// A font a procedural design draws with: SVG family name and weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FontFace {
    /// `font-family` as written in the SVG.
    pub family: &'static str,
    /// `font-weight` (400 regular, 700 bold).
    pub weight: u16,
    /// The semi-condensed width (`font-stretch="semi-condensed"`, DejaVu's "Condensed" faces).
    pub condensed: bool,
}

impl FontFace {
    /// The SVG `font-stretch` value.
    pub fn stretch_svg(self) -> &'static str {
        if self.condensed {
            "semi-condensed"
        } else {
            "normal"
        }
    }

    fn stretch(self) -> fontdb::Stretch {
        if self.condensed {
            fontdb::Stretch::SemiCondensed
        } else {
            fontdb::Stretch::Normal
        }
    }

    /// The Debian package that provides this family.
    pub fn package(self) -> &'static str {
        if self.family.starts_with("Free") {
            "fonts-freefont-ttf"
        } else {
            "fonts-dejavu-core"
        }
    }
}

/// The shared font database (loaded once per process).
pub(crate) fn database() -> Arc<fontdb::Database> {
    static DB: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = fontdb::Database::new();
        for (dir, _) in FONT_DIRS {
            db.load_fonts_dir(dir);
        }
        db.set_sans_serif_family("DejaVu Sans");
        db.set_serif_family("DejaVu Serif");
        db.set_monospace_family("DejaVu Sans Mono");
        Arc::new(db)
    })
    .clone()
}

/// Fails naming the package to install when one of `faces` is not in the database (usvg would
/// otherwise fall back to another font, or draw no text, without a word).
pub(crate) fn check(faces: impl IntoIterator<Item = FontFace>) -> Result<(), FacesError> {
    let db = database();
    for face in faces {
        let query = fontdb::Query {
            families: &[fontdb::Family::Name(face.family)],
            weight: fontdb::Weight(face.weight),
            stretch: face.stretch(),
            style: fontdb::Style::Normal,
        };
        let found = db.query(&query).and_then(|id| db.face(id)).is_some_and(|info| {
            // FreeFont's bold faces declare weight 600: near enough.
            info.families.iter().any(|(name, _)| name == face.family)
                && info.weight.0.abs_diff(face.weight) <= 100
                && info.stretch == face.stretch()
        });
        if !found {
            return Err(FacesError::MissingFont {
                family: face.family.to_string(),
                weight: face.weight,
                package: face.package(),
            });
        }
    }
    Ok(())
}
