//! Card decks from Debian packages: one SVG sheet per deck holding every card as an element.
//!
//! `resvg --export-id` ignores parent transforms and cannot find cards defined in `<defs>`, so
//! we append one `<use id="tablecam-ID" xlink:href="#ID"/>` per face to the sheet, parse it once,
//! and render each of those nodes alone, cropped to its visible area
//! (`/work/shared/CARD_ART.md`). The sheets stay where the packages install them; nothing is copied.
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use image::RgbaImage;
use resvg::{tiny_skia, usvg};

use super::{raster, DeckDesign, DesignSource, Face, FacesError};
use crate::rules::card::{Rank, Suit};

/// How a sheet names its card elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SheetNaming {
    /// aisleriot (`gnome-cards-data`): `heart_king`, `spade_1` (ace), `club_10`, `back`.
    Aisleriot,
    /// KDE (`kdegames-card-data-kf5`): `king_heart`, `1_spade` (ace), `10_club`, `back`.
    Kde,
}

impl SheetNaming {
    /// The element id of `face` in a sheet named this way.
    pub fn element_id(self, face: Face) -> String {
        let card = match face {
            Face::Back => return "back".to_string(),
            Face::Card(card) => card,
        };
        let suit = match card.suit() {
            Suit::Spades => "spade",
            Suit::Hearts => "heart",
            Suit::Diamonds => "diamond",
            Suit::Clubs => "club",
        };
        let rank = match card.rank() {
            Rank::Ace => "1",
            Rank::King => "king",
            Rank::Queen => "queen",
            Rank::Jack => "jack",
            other => other.code(),
        };
        match self {
            SheetNaming::Aisleriot => format!("{suit}_{rank}"),
            SheetNaming::Kde => format!("{rank}_{suit}"),
        }
    }
}

const AISLERIOT_DIR: &str = "/usr/share/aisleriot/cards";
const KDE_DIR: &str = "/usr/share/carddecks";
const AISLERIOT_LICENCE: &str = "GPL-3+ (gnome-cards-data)";
const KDE_LICENCE: &str = "GPL-2+ (kdegames-card-data-kf5)";

/// One packaged deck: name, file, naming, art family, licence, card aspect (measured).
struct SheetEntry {
    name: &'static str,
    file: &'static str,
    naming: SheetNaming,
    family: &'static str,
    licence: &'static str,
    aspect: f64,
}

/// The realistic decks (A/K/Q/J indices) of both packages. Left out on purpose: decks with other
/// indices (atlasnye, Атласные, slavic_costumes, ancient_french, tarocco, swiss-xvii, berlin,
/// xskat-german, and lattmann, rheinland, xskat-french, whose queens and jacks read D and B; guyenne-classic, whose court cards have no indices),
/// novelty decks (future, konqi (restricted licence), penguins, oxygen*,
/// ancient-egyptians), and the `_bitmap` copies of vector decks.
const SHEETS: &[SheetEntry] = &[
    // Kennard's anglo family (gnomangelo has the same court cards).
    SheetEntry {
        name: "aisleriot-anglo",
        file: "anglo.svgz",
        naming: SheetNaming::Aisleriot,
        family: "anglo",
        licence: AISLERIOT_LICENCE,
        aspect: 0.6445,
    },
    SheetEntry {
        name: "aisleriot-anglo-poker",
        file: "anglo_poker.svgz",
        naming: SheetNaming::Aisleriot,
        family: "anglo",
        licence: AISLERIOT_LICENCE,
        aspect: 0.7148,
    },
    // Bellot's French-pattern deck under three names.
    SheetEntry {
        name: "aisleriot-bellot",
        file: "bellot.svgz",
        naming: SheetNaming::Aisleriot,
        family: "bellot",
        licence: "LGPL-3+ (David Bellot, SVG-cards 2.0; notice in the sheet; gnome-cards-data)",
        aspect: 0.6914,
    },
    SheetEntry {
        name: "aisleriot-paris",
        file: "paris.svgz",
        naming: SheetNaming::Aisleriot,
        family: "bellot",
        licence: "GPL-3+ (gnome-cards-data; art by David Bellot, SVG-cards, LGPL)",
        aspect: 0.6445,
    },
    SheetEntry {
        name: "kde-gm-paris",
        file: "svg-gm-paris/paris.svgz",
        naming: SheetNaming::Kde,
        family: "bellot",
        licence: "GPL-2+ (kdegames-card-data-kf5; art by David Bellot, SVG-cards, LGPL)",
        aspect: 0.6445,
    },
    SheetEntry {
        name: "aisleriot-dondorf",
        file: "dondorf.svgz",
        naming: SheetNaming::Aisleriot,
        family: "dondorf",
        licence: AISLERIOT_LICENCE,
        aspect: 0.6445,
    },
    SheetEntry {
        name: "kde-dondorf",
        file: "svg-dondorf/dondorf.svgz",
        naming: SheetNaming::Kde,
        family: "dondorf",
        licence: KDE_LICENCE,
        aspect: 0.6445,
    },
    SheetEntry {
        name: "aisleriot-gnomangelo",
        file: "gnomangelo.svgz",
        naming: SheetNaming::Aisleriot,
        family: "anglo",
        licence: AISLERIOT_LICENCE,
        aspect: 0.6445,
    },
    SheetEntry {
        name: "aisleriot-neoclassical",
        file: "neoclassical.svgz",
        naming: SheetNaming::Aisleriot,
        family: "neoclassical",
        licence: AISLERIOT_LICENCE,
        aspect: 0.6719,
    },
    SheetEntry {
        name: "aisleriot-neoclassical-4-color",
        file: "neoclassical_4_color.svgz",
        naming: SheetNaming::Aisleriot,
        family: "neoclassical",
        licence: AISLERIOT_LICENCE,
        aspect: 0.6719,
    },
    // Nicu Buculei's decks (ornamental and white share their court cards).
    SheetEntry {
        name: "aisleriot-ornamental",
        file: "ornamental.svgz",
        naming: SheetNaming::Aisleriot,
        family: "nicu",
        licence: "public domain (Nicu Buculei, per the sheet's metadata; gnome-cards-data GPL-3+)",
        aspect: 0.7383,
    },
    SheetEntry {
        name: "kde-nicu-ornamental",
        file: "svg-nicu-ornamental/ornamental.svgz",
        naming: SheetNaming::Kde,
        family: "nicu",
        licence: KDE_LICENCE,
        aspect: 0.7383,
    },
    SheetEntry {
        name: "kde-nicu-white",
        file: "svg-nicu-white/white.svgz",
        naming: SheetNaming::Kde,
        family: "nicu",
        licence: KDE_LICENCE,
        aspect: 0.7391,
    },
    SheetEntry {
        name: "aisleriot-plastic",
        file: "plastic.svgz",
        naming: SheetNaming::Aisleriot,
        family: "plastic",
        licence: AISLERIOT_LICENCE,
        aspect: 0.7188,
    },
    SheetEntry {
        name: "aisleriot-simplistic",
        file: "simplistic.svgz",
        naming: SheetNaming::Aisleriot,
        family: "simplistic",
        licence: AISLERIOT_LICENCE,
        aspect: 0.6445,
    },
    SheetEntry {
        name: "aisleriot-tango",
        file: "tango.svgz",
        naming: SheetNaming::Aisleriot,
        family: "tango",
        licence: AISLERIOT_LICENCE,
        aspect: 0.7422,
    },
    // Luciano Montanaro's Tigullio.
    SheetEntry {
        name: "aisleriot-tigullio",
        file: "tigullio.svgz",
        naming: SheetNaming::Aisleriot,
        family: "tigullio",
        licence: "LGPL-3+ (Luciano Montanaro, Vincent Bermel; notice in the sheet; gnome-cards-data)",
        aspect: 0.6641,
    },
    SheetEntry {
        name: "kde-tigullio-international",
        file: "svg-tigullio-international/tigullio-international.svgz",
        naming: SheetNaming::Kde,
        family: "tigullio",
        licence: "LGPL-2+ (Luciano Montanaro; notice in the sheet and kdegames-card-data-kf5 copyright file)",
        aspect: 0.6602,
    },
    SheetEntry {
        name: "kde-standard",
        file: "svg-standard/standard.svgz",
        naming: SheetNaming::Kde,
        family: "kde-standard",
        licence: "GPL-2+ (kdegames-card-data-kf5 copyright file)",
        aspect: 0.7422,
    },
    SheetEntry {
        name: "kde-jolly-royal",
        file: "svg-jolly-royal/jolly-royal.svgz",
        naming: SheetNaming::Kde,
        family: "jolly-royal",
        licence: KDE_LICENCE,
        aspect: 0.7323,
    },
];

/// Every packaged deck design, whether installed or not ([`super::catalogue`] filters).
pub(crate) fn designs() -> Vec<DeckDesign> {
    SHEETS
        .iter()
        .map(|e| {
            let dir = if e.name.starts_with("kde-") { KDE_DIR } else { AISLERIOT_DIR };
            DeckDesign {
                name: e.name.to_string(),
                family: e.family.to_string(),
                source: DesignSource::SvgSheet { path: Path::new(dir).join(e.file), naming: e.naming },
                licence: e.licence.to_string(),
                aspect: e.aspect,
            }
        })
        .collect()
}

/// Resolution (pixels per card height) of the pass that finds each face's visible area.
const TRIM_REFERENCE_HEIGHT_PX: f32 = 256.0;
/// Pixels at least this opaque count as part of the card when trimming (above the ~50 %
/// drop shadows some decks draw around their cards).
const TRIM_MIN_ALPHA: u8 = 160;

/// The transform to give `resvg::render_node` so that canvas point `origin` lands on pixel (0, 0)
/// at `sx`, `sy` pixels per canvas unit.
///
/// render_node draws the node in its parent's coordinates (without the parent's transforms, such
/// as the root's viewBox) after shifting its layer box `bbox` (canvas coordinates) to the origin.
/// So the parent's transform is put back, and the shift undone.
fn node_transform(
    node: &usvg::Node,
    bbox: tiny_skia::NonZeroRect,
    sx: f32,
    sy: f32,
    origin: (f32, f32),
) -> tiny_skia::Transform {
    let own = match node {
        usvg::Node::Group(g) => g.transform(),
        _ => tiny_skia::Transform::identity(),
    };
    let parent = node.abs_transform().pre_concat(own.invert().unwrap_or_default());
    tiny_skia::Transform::from_scale(sx, sy)
        .pre_translate(-origin.0, -origin.1)
        .pre_concat(parent)
        .pre_translate(bbox.x(), bbox.y())
}

/// Corner radius (fraction of the card width) cut into every packaged card: a few decks have
/// square corners, which printed cards never have. Decks with rounder corners keep their own.
const MIN_CORNER_RADIUS: f32 = 0.045;

/// A sheet parsed once, with the uses appended.
pub(crate) struct LoadedSheet {
    design: String,
    naming: SheetNaming,
    tree: usvg::Tree,
    /// Visible area of each face in canvas units, found on first render.
    content: [OnceLock<Option<tiny_skia::Rect>>; Face::COUNT],
}

fn use_id(element: &str) -> String {
    format!("tablecam-{element}")
}

impl LoadedSheet {
    pub(crate) fn open(design: &str, path: &PathBuf, naming: SheetNaming) -> Result<LoadedSheet, FacesError> {
        let read_err = |source| FacesError::Read { path: path.clone(), source };
        let raw = std::fs::read(path).map_err(read_err)?;
        let mut text = String::new();
        if raw.starts_with(&[0x1f, 0x8b]) {
            flate2::read::GzDecoder::new(raw.as_slice()).read_to_string(&mut text).map_err(read_err)?;
        } else {
            text = String::from_utf8(raw)
                .map_err(|e| read_err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
        }
        let end = text
            .rfind("</svg>")
            .ok_or_else(|| FacesError::Svg { design: design.to_string(), message: "no closing </svg>".to_string() })?;
        let mut uses = String::new();
        for face in Face::all() {
            let id = naming.element_id(face);
            uses.push_str(&format!(r##"<use id="{}" xlink:href="#{id}"/>"##, use_id(&id)));
        }
        text.insert_str(end, &uses);
        if !text.contains("xmlns:xlink") {
            text = text.replacen("<svg", r#"<svg xmlns:xlink="http://www.w3.org/1999/xlink""#, 1);
        }
        let tree = raster::parse(design, text.as_bytes())?;
        Ok(LoadedSheet { design: design.to_string(), naming, tree, content: std::array::from_fn(|_| OnceLock::new()) })
    }

    fn node(&self, face: Face) -> Result<(&usvg::Node, tiny_skia::NonZeroRect), FacesError> {
        let missing = || FacesError::MissingFace { design: self.design.clone(), id: self.naming.element_id(face) };
        let node = self.tree.node_by_id(&use_id(&self.naming.element_id(face))).ok_or_else(missing)?;
        let bbox = node.abs_layer_bounding_box().ok_or_else(missing)?;
        Ok((node, bbox))
    }

    /// The face's visible area in canvas units: its layer box trimmed of transparent margins.
    fn content_rect(&self, face: Face) -> Result<tiny_skia::Rect, FacesError> {
        let rect = self.content[face.index()].get_or_init(|| {
            let (node, bbox) = self.node(face).ok()?;
            let scale = TRIM_REFERENCE_HEIGHT_PX / bbox.height();
            let w = (bbox.width() * scale).ceil() as u32 + 2;
            let h = (bbox.height() * scale).ceil() as u32 + 2;
            let mut pixmap = tiny_skia::Pixmap::new(w, h)?;
            let origin = (bbox.x() - 1.0 / scale, bbox.y() - 1.0 / scale);
            resvg::render_node(node, node_transform(node, bbox, scale, scale, origin), &mut pixmap.as_mut())?;
            let (mut x0, mut y0, mut x1, mut y1) = (u32::MAX, u32::MAX, 0, 0);
            for (i, p) in pixmap.pixels().iter().enumerate() {
                if p.alpha() >= TRIM_MIN_ALPHA {
                    let (x, y) = (i as u32 % w, i as u32 / w);
                    x0 = x0.min(x);
                    y0 = y0.min(y);
                    x1 = x1.max(x + 1);
                    y1 = y1.max(y + 1);
                }
            }
            if x0 >= x1 || y0 >= y1 {
                return None;
            }
            let to_canvas = |px: u32, origin: f32| origin + (px as f32 - 1.0) / scale;
            tiny_skia::Rect::from_ltrb(
                to_canvas(x0, bbox.x()),
                to_canvas(y0, bbox.y()),
                to_canvas(x1, bbox.x()),
                to_canvas(y1, bbox.y()),
            )
        });
        rect.ok_or_else(|| FacesError::MissingFace { design: self.design.clone(), id: self.naming.element_id(face) })
    }

    /// Renders `face` so that its visible area fills `width_px` × `height_px`.
    pub(crate) fn render(&self, face: Face, width_px: u32, height_px: u32) -> Result<RgbaImage, FacesError> {
        let rect = self.content_rect(face)?;
        let (node, bbox) = self.node(face)?;
        let (sx, sy) = (width_px as f32 / rect.width(), height_px as f32 / rect.height());
        let t = node_transform(node, bbox, sx, sy, (rect.x(), rect.y()));
        let mut pixmap = raster::new_pixmap(width_px, height_px)?;
        resvg::render_node(node, t, &mut pixmap.as_mut());
        let mut img = raster::to_image(&pixmap);
        raster::round_corners(&mut img, MIN_CORNER_RADIUS * width_px as f32);
        Ok(img)
    }

    /// Aspect (width / height) of the visible area of `face`.
    #[cfg(test)]
    pub(crate) fn aspect(&self, face: Face) -> Result<f64, FacesError> {
        let r = self.content_rect(face)?;
        Ok(r.width() as f64 / r.height() as f64)
    }
}
