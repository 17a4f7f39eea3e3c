//! Card face and back artwork from many deck designs, rasterised with `resvg`.
//!
//! Two sources of designs:
//! - **procedural** decks drawn by [`procedural`] as SVG (fonts from Debian's DejaVu and FreeFont
//!   packages, suit symbols as our own paths), varied in index font and size, colours, suit
//!   shapes, pip layout, court-card stand-ins, borders, corners, card stock and proportions;
//! - **SVG sheets** from Debian packages (`gnome-cards-data`, `kdegames-card-data-kf5`), read at
//!   generation time from `/usr/share` and never copied into the repository ([`sheet`]).
//!
//! Every design has a stable `name` and an art `family`: the same artwork ships under several
//! names (see `/work/shared/CARD_ART.md`), so dataset splits must be made by family.
//!
//! Every render is trimmed to the card: the image is exactly the card, transparent only outside
//! its rounded outline, `height_px` high and `round(height_px * aspect)` wide. Rendering is
//! deterministic (same inputs, byte-identical pixels).
//!
//! Rendering one card at 300 px takes a few milliseconds (procedural) to tens of milliseconds
//! (detailed SVG sheets); parsing a sheet takes 0.1–0.3 s, so load a design once with
//! [`DeckDesign::load`] and render all faces from the [`LoadedDeck`].
use std::path::PathBuf;

use image::RgbaImage;

use crate::rules::card::{Card, Rank, Suit};

mod fonts;
pub mod procedural;
mod raster;
pub mod sheet;
#[cfg(test)]
mod tests;

pub use procedural::ProceduralStyle;
pub use sheet::SheetNaming;

/// Smallest and largest `height_px` a render accepts.
pub const HEIGHT_PX_RANGE: std::ops::RangeInclusive<u32> = 16..=4096;

/// Errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum FacesError {
    /// A font the procedural decks draw with is not installed.
    #[error("font {family:?} (weight {weight}) is not installed: install the Debian package {package} (bash scripts/setup.sh)")]
    MissingFont {
        /// Font family name as written in the SVG.
        family: String,
        /// Font weight (400 regular, 700 bold).
        weight: u16,
        /// Debian package that provides it.
        package: &'static str,
    },
    /// A card sheet could not be read or decompressed.
    #[error("cannot read card sheet {path}: {source}")]
    Read {
        /// The sheet's path.
        path: PathBuf,
        /// The I/O or gzip error.
        #[source]
        source: std::io::Error,
    },
    /// An SVG (a sheet, or one we generated) could not be parsed.
    #[error("cannot parse the SVG of design {design}: {message}")]
    Svg {
        /// The design's name.
        design: String,
        /// usvg's message.
        message: String,
    },
    /// A sheet lacks the element of one face, or it renders empty.
    #[error("design {design}: the sheet has no visible element {id:?}")]
    MissingFace {
        /// The design's name.
        design: String,
        /// The element id looked up.
        id: String,
    },
    /// `height_px` outside [`HEIGHT_PX_RANGE`].
    #[error("height {0} px is outside 16..=4096")]
    BadHeight(u32),
}

/// One image of a deck: a card face or the back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Face {
    /// The face of one card.
    Card(Card),
    /// The card back (the same for all cards of a deck).
    Back,
}

impl Face {
    /// Number of distinct faces of a deck: 52 cards and the back.
    pub const COUNT: usize = 53;

    /// Every face: the 52 cards in [`Card::all`] order, then the back.
    pub fn all() -> impl Iterator<Item = Face> {
        Card::all().map(Face::Card).chain(std::iter::once(Face::Back))
    }

    /// 0..52 for cards (the card's index), 52 for the back.
    pub fn index(self) -> usize {
        match self {
            Face::Card(c) => c.index() as usize,
            Face::Back => 52,
        }
    }

    /// The dataset label: the card code (`AS`, `10H`) or `back`.
    pub fn label(self) -> String {
        match self {
            Face::Card(c) => c.code(),
            Face::Back => "back".to_string(),
        }
    }
}

/// Where a design's artwork comes from.
#[derive(Debug, Clone, PartialEq)]
pub enum DesignSource {
    /// Drawn by this crate from a style.
    Procedural(Box<ProceduralStyle>),
    /// One SVG file holding every card, each an element with an id.
    SvgSheet {
        /// The installed `.svg`/`.svgz` file.
        path: PathBuf,
        /// How the sheet names its cards.
        naming: SheetNaming,
    },
}

/// A deck design: a named artwork for 52 faces and a back.
#[derive(Debug, Clone, PartialEq)]
pub struct DeckDesign {
    /// Stable unique name (`proc-classic-poker`, `aisleriot-anglo`, `kde-standard`).
    pub name: String,
    /// Art family: designs sharing artwork share a family; split datasets by family.
    pub family: String,
    /// Where the artwork comes from.
    pub source: DesignSource,
    /// Licence of the artwork (SPDX-like), with its source package for packaged decks.
    pub licence: String,
    /// Card width / height (0.60..0.77): poker 63.5×88.9 mm is 0.714, bridge 57×89 mm 0.640.
    pub aspect: f64,
}

/// Every design available on this machine: all procedural ones, and the packaged SVG decks
/// whose files are installed.
pub fn catalogue() -> Vec<DeckDesign> {
    let mut designs = procedural::designs();
    designs.extend(sheet::designs().into_iter().filter(|d| match &d.source {
        DesignSource::SvgSheet { path, .. } => path.is_file(),
        DesignSource::Procedural(_) => true,
    }));
    designs
}

/// The design of that name in [`catalogue`].
pub fn design(name: &str) -> Option<DeckDesign> {
    catalogue().into_iter().find(|d| d.name == name)
}

impl DeckDesign {
    /// Parses what the design needs once (the SVG sheet, fonts), to render many faces.
    pub fn load(&self) -> Result<LoadedDeck, FacesError> {
        let inner = match &self.source {
            DesignSource::Procedural(style) => {
                fonts::check(style.fonts_used())?;
                Loaded::Procedural(style.clone())
            }
            DesignSource::SvgSheet { path, naming } => {
                Loaded::Sheet(Box::new(sheet::LoadedSheet::open(&self.name, path, *naming)?))
            }
        };
        Ok(LoadedDeck { name: self.name.clone(), aspect: self.aspect, inner })
    }

    /// Renders one face `height_px` high (loads the design each call: for many faces use
    /// [`DeckDesign::load`]).
    pub fn render(&self, face: Face, height_px: u32) -> Result<RgbaImage, FacesError> {
        self.load()?.render(face, height_px)
    }

    /// Image width in pixels for a render `height_px` high.
    pub fn width_px(&self, height_px: u32) -> u32 {
        width_for(self.aspect, height_px)
    }
}

fn width_for(aspect: f64, height_px: u32) -> u32 {
    ((height_px as f64 * aspect).round() as u32).max(1)
}

/// A design made ready to render: the sheet parsed once, fonts checked.
pub struct LoadedDeck {
    name: String,
    aspect: f64,
    inner: Loaded,
}

enum Loaded {
    Procedural(Box<ProceduralStyle>),
    Sheet(Box<sheet::LoadedSheet>),
}

impl LoadedDeck {
    /// The design's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Renders one face: an image `height_px` high and `round(height_px * aspect)` wide holding
    /// exactly the card, transparent outside its rounded outline.
    pub fn render(&self, face: Face, height_px: u32) -> Result<RgbaImage, FacesError> {
        if !HEIGHT_PX_RANGE.contains(&height_px) {
            return Err(FacesError::BadHeight(height_px));
        }
        let width_px = width_for(self.aspect, height_px);
        match &self.inner {
            Loaded::Procedural(style) => {
                let svg = style.face_svg(face);
                raster::render_svg_string(&self.name, &svg, width_px, height_px)
            }
            Loaded::Sheet(sheet) => sheet.render(face, width_px, height_px),
        }
    }
}

/// Colour of the contact sheet's background (table felt), so transparent corners show.
const CONTACT_BACKGROUND: [u8; 4] = [24, 92, 52, 255];

/// A grid with one row per design (its name and family on the left) and one column per face,
/// each card `height_px` high; for looking at the designs, not for training.
pub fn contact_sheet(designs: &[DeckDesign], faces: &[Face], height_px: u32) -> Result<RgbaImage, FacesError> {
    let gap = (height_px / 12).max(4);
    let label_w = height_px * 2;
    let cell_w = width_for(0.77, height_px);
    let width = label_w + (cell_w + gap) * faces.len() as u32 + gap;
    let height = (height_px + gap) * designs.len() as u32 + gap;
    let mut sheet = RgbaImage::from_pixel(width, height, image::Rgba(CONTACT_BACKGROUND));
    for (row, design) in designs.iter().enumerate() {
        let y = gap + row as u32 * (height_px + gap);
        let label = raster::render_label(&[&design.name, &design.family], label_w, height_px)?;
        image::imageops::overlay(&mut sheet, &label, 0, y as i64);
        let deck = design.load()?;
        for (col, &face) in faces.iter().enumerate() {
            let img = deck.render(face, height_px)?;
            let x = label_w + gap + col as u32 * (cell_w + gap) + (cell_w - img.width().min(cell_w)) / 2;
            image::imageops::overlay(&mut sheet, &img, x as i64, y as i64);
        }
    }
    Ok(sheet)
}

/// The faces a contact sheet shows by default: AS, 10H, QD, KC, 7S and the back.
pub fn contact_faces() -> Vec<Face> {
    [
        (Rank::Ace, Suit::Spades),
        (Rank::Ten, Suit::Hearts),
        (Rank::Queen, Suit::Diamonds),
        (Rank::King, Suit::Clubs),
        (Rank::Seven, Suit::Spades),
    ]
    .into_iter()
    .map(|(r, s)| Face::Card(Card::new(r, s)))
    .chain(std::iter::once(Face::Back))
    .collect()
}
