//! Decks drawn by tablecam: each face generated as an SVG document from a [`ProceduralStyle`].
//!
//! The card is `1000 * aspect` × 1000 user units, drawn edge to edge (the renderer stretches the
//! document to the image). Suit symbols are our own paths, generated from a few shape parameters
//! ([`SuitShape`]); ranks are text in DejaVu or FreeFont faces.
use std::fmt::Write;

use super::fonts::FontFace;
use super::{DeckDesign, DesignSource, Face};
use crate::rules::card::{Card, Rank, Suit};

/// Height of a card in SVG user units.
const H: f64 = 1000.0;

/// Size of the corner indices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexSize {
    /// Ordinary playing cards (rank about 8 % of the card height).
    Standard,
    /// Larger "poker" indices.
    Large,
    /// Casino jumbo indices (rank about 16 % of the height).
    Jumbo,
}

/// How suits are coloured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuitColours {
    /// Hearts and diamonds in `red`, spades and clubs in `black` (CSS colours).
    TwoColour {
        /// Hearts and diamonds.
        red: &'static str,
        /// Spades and clubs.
        black: &'static str,
    },
    /// Spades black, hearts red, diamonds blue, clubs green.
    FourColour,
}

/// Shape family of the suit symbols (all drawn as paths from a few parameters).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SuitShape {
    /// Traditional proportions, slightly concave diamond.
    Classic,
    /// Fat lobes, thick stems.
    Bold,
    /// Blunt heart point, convex diamond.
    Rounded,
    /// Narrow symbols, deep concave diamond.
    Slim,
    /// Straight-edged diamond, straight stems.
    Geometric,
}

/// Arrangement of pips on number cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PipLayout {
    /// The usual positions for 2–10, pips about a sixth of the card wide.
    Standard,
    /// The usual positions squeezed between jumbo indices.
    Compact,
    /// One big pip in the centre (jumbo "peek" decks).
    Single,
}

/// Colours of the court-card figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Palette {
    /// Red, blue, yellow and black, as on most printed decks.
    Traditional,
    /// Darker, desaturated tones.
    Muted,
}

/// Stand-in art for J, Q, K.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CourtArt {
    /// A framed, double-ended stylised figure made of shapes (crown, head, robe, sceptre).
    Figure {
        /// Figure colours.
        palette: Palette,
        /// Split the two ends along a diagonal (else horizontally).
        diagonal: bool,
    },
    /// A framed panel with the rank letter large, double-ended.
    Letter,
}

/// Line drawn inside the card edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Border {
    /// None.
    None,
    /// One thin line.
    Thin,
    /// Two thin lines.
    Double,
}

/// Pattern of the card back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackPattern {
    /// Diagonal lattice of thin lines.
    Lattice,
    /// Diagonal stripes.
    Stripes,
    /// Casino style: solid field, border and a central oval "logo".
    Logo,
    /// Solid colour inside a white margin.
    Solid,
    /// Small dots in rows.
    Dots,
}

/// Everything that defines a procedural deck.
#[derive(Debug, Clone, PartialEq)]
pub struct ProceduralStyle {
    /// Font of the corner ranks (and letter courts).
    pub index_font: FontFace,
    /// Size of the corner indices.
    pub index: IndexSize,
    /// Indices in all four corners instead of two.
    pub four_corner_index: bool,
    /// Suit colours.
    pub colours: SuitColours,
    /// Suit symbol shapes.
    pub suit_shape: SuitShape,
    /// Pip layout of number cards.
    pub pips: PipLayout,
    /// Court-card art.
    pub court: CourtArt,
    /// Border line.
    pub border: Border,
    /// Corner radius as a fraction of the card width (real cards: about 0.055).
    pub corner_radius: f64,
    /// Card stock colour (white to cream).
    pub stock: &'static str,
    /// Width / height.
    pub aspect: f64,
    /// Back pattern.
    pub back: BackPattern,
    /// Back colour.
    pub back_colour: &'static str,
}

/// Poker size, 63.5 × 88.9 mm.
pub const POKER_ASPECT: f64 = 63.5 / 88.9;
/// Bridge size, 57 × 89 mm.
pub const BRIDGE_ASPECT: f64 = 57.0 / 89.0;

const fn font(family: &'static str, weight: u16) -> FontFace {
    FontFace { family, weight, condensed: false }
}

const fn condensed(family: &'static str, weight: u16) -> FontFace {
    FontFace { family, weight, condensed: true }
}

/// Font of the casino logo on `BackPattern::Logo` backs.
const LOGO_FONT: FontFace = font("DejaVu Serif", 700);

const RED: &str = "#d01a2a";
const DEEP_RED: &str = "#b0101e";
const BLACK: &str = "#141414";
const FOUR_RED: &str = "#d3172b";
const FOUR_BLUE: &str = "#1450c4";
const FOUR_GREEN: &str = "#0f8a3a";
const WHITE: &str = "#ffffff";
const IVORY: &str = "#fbf8ef";
const CREAM: &str = "#f6f0dc";

/// The procedural designs: (name, family, style). Families group designs sharing suit shapes
/// and court art, so a test family's artwork is never seen in training.
pub(crate) fn designs() -> Vec<DeckDesign> {
    use BackPattern as B;
    use IndexSize as I;
    use PipLayout as P;
    use SuitShape as S;
    let two = SuitColours::TwoColour { red: RED, black: BLACK };
    let deep = SuitColours::TwoColour { red: DEEP_RED, black: BLACK };
    let four = SuitColours::FourColour;
    let trad = CourtArt::Figure { palette: Palette::Traditional, diagonal: false };
    let trad_diag = CourtArt::Figure { palette: Palette::Traditional, diagonal: true };
    let muted = CourtArt::Figure { palette: Palette::Muted, diagonal: true };
    #[rustfmt::skip]
    let list: Vec<(&str, &str, ProceduralStyle)> = vec![
        ("proc-classic-poker", "proc-classic", style(font("DejaVu Serif", 700), I::Standard, false, two, S::Classic, P::Standard, trad, Border::None, 0.055, WHITE, POKER_ASPECT, B::Lattice, "#b3121f")),
        ("proc-classic-bridge", "proc-classic", style(condensed("DejaVu Serif", 700), I::Standard, false, deep, S::Classic, P::Standard, trad, Border::None, 0.06, IVORY, BRIDGE_ASPECT, B::Lattice, "#1d3f8f")),
        ("proc-classic-large", "proc-classic", style(font("DejaVu Sans", 700), I::Large, false, two, S::Classic, P::Standard, trad, Border::None, 0.05, WHITE, POKER_ASPECT, B::Stripes, "#a01020")),
        ("proc-classic-4c", "proc-classic", style(font("DejaVu Sans", 700), I::Standard, false, four, S::Classic, P::Standard, trad, Border::Thin, 0.055, WHITE, POKER_ASPECT, B::Solid, "#146b3a")),
        ("proc-casino-jumbo-red", "proc-casino", style(font("DejaVu Sans", 700), I::Jumbo, false, two, S::Bold, P::Compact, trad_diag, Border::None, 0.05, WHITE, POKER_ASPECT, B::Logo, "#a3101c")),
        ("proc-casino-jumbo-4c", "proc-casino", style(condensed("DejaVu Sans", 700), I::Jumbo, false, four, S::Bold, P::Compact, trad_diag, Border::None, 0.05, WHITE, POKER_ASPECT, B::Logo, "#17357a")),
        ("proc-casino-bridge", "proc-casino", style(font("FreeSans", 700), I::Large, false, deep, S::Bold, P::Standard, trad_diag, Border::None, 0.06, WHITE, BRIDGE_ASPECT, B::Stripes, "#1a1a1a")),
        ("proc-peek-jumbo", "proc-peek", style(font("FreeSans", 700), I::Jumbo, true, two, S::Geometric, P::Single, CourtArt::Letter, Border::None, 0.045, WHITE, POKER_ASPECT, B::Dots, "#1f4aa8")),
        ("proc-peek-jumbo-4c", "proc-peek", style(font("DejaVu Sans", 700), I::Jumbo, true, four, S::Geometric, P::Single, CourtArt::Letter, Border::None, 0.045, WHITE, POKER_ASPECT, B::Logo, "#9c1622")),
        ("proc-free-serif", "proc-free", style(font("FreeSerif", 700), I::Standard, false, two, S::Rounded, P::Standard, muted, Border::Double, 0.06, CREAM, POKER_ASPECT, B::Stripes, "#1c6b3c")),
        ("proc-free-serif-bridge", "proc-free", style(font("FreeSerif", 700), I::Large, false, deep, S::Rounded, P::Standard, muted, Border::None, 0.065, IVORY, BRIDGE_ASPECT, B::Lattice, "#202020")),
        ("proc-free-sans", "proc-free", style(font("FreeSans", 700), I::Large, false, four, S::Rounded, P::Compact, muted, Border::Thin, 0.05, WHITE, POKER_ASPECT, B::Logo, "#14602f")),
        ("proc-mono-slim", "proc-mono", style(font("FreeMono", 700), I::Standard, false, two, S::Slim, P::Standard, CourtArt::Letter, Border::Thin, 0.05, IVORY, POKER_ASPECT, B::Dots, "#a8141f")),
        ("proc-mono-large-4c", "proc-mono", style(font("DejaVu Sans Mono", 700), I::Large, false, four, S::Slim, P::Standard, CourtArt::Letter, Border::Double, 0.055, WHITE, BRIDGE_ASPECT, B::Solid, "#1b3d94")),
    ];
    list.into_iter()
        .map(|(name, family, style)| DeckDesign {
            name: name.to_string(),
            family: family.to_string(),
            aspect: style.aspect,
            licence: "Apache-2.0 (drawn by tablecam; fonts: DejaVu (Bitstream Vera licence) / GNU FreeFont (GPL-3+ with font exception))".to_string(),
            source: DesignSource::Procedural(Box::new(style)),
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn style(
    index_font: FontFace,
    index: IndexSize,
    four_corner_index: bool,
    colours: SuitColours,
    suit_shape: SuitShape,
    pips: PipLayout,
    court: CourtArt,
    border: Border,
    corner_radius: f64,
    stock: &'static str,
    aspect: f64,
    back: BackPattern,
    back_colour: &'static str,
) -> ProceduralStyle {
    ProceduralStyle {
        index_font,
        index,
        four_corner_index,
        colours,
        suit_shape,
        pips,
        court,
        border,
        corner_radius,
        stock,
        aspect,
        back,
        back_colour,
    }
}

/// Shape parameters of the suit symbols, in a 100 × 100 box centred on (50, 50).
struct ShapeParams {
    /// Heart half width.
    heart_hw: f64,
    /// Depth of the notch between the lobes.
    notch: f64,
    /// Bluntness of the heart's point (0.2 sharp … 0.6 blunt).
    point: f64,
    /// Club leaf radius and horizontal offset of the lower leaves.
    club_r: f64,
    club_spread: f64,
    /// Stem half width at the top, and half width of the foot.
    stem_w: f64,
    stem_flare: f64,
    /// Diamond half width, and concavity of its sides (negative: convex).
    diamond_hw: f64,
    diamond_k: f64,
}

impl SuitShape {
    fn params(self) -> ShapeParams {
        let p = |heart_hw, notch, point, club_r, club_spread, stem_w, stem_flare, diamond_hw, diamond_k| ShapeParams {
            heart_hw,
            notch,
            point,
            club_r,
            club_spread,
            stem_w,
            stem_flare,
            diamond_hw,
            diamond_k,
        };
        match self {
            SuitShape::Classic => p(46.0, 22.0, 0.35, 20.0, 23.0, 3.0, 13.0, 36.0, 0.12),
            SuitShape::Bold => p(49.0, 20.0, 0.45, 22.0, 25.0, 5.0, 15.0, 41.0, 0.05),
            SuitShape::Rounded => p(48.0, 17.0, 0.58, 21.0, 22.0, 4.0, 10.0, 38.0, -0.07),
            SuitShape::Slim => p(40.0, 25.0, 0.28, 17.5, 20.0, 2.5, 12.0, 30.0, 0.2),
            SuitShape::Geometric => p(46.0, 26.0, 0.22, 19.0, 21.0, 6.0, 7.0, 35.0, 0.0),
        }
    }
}

/// Heart outline points as a closed path of cubic segments; `map` transforms each point.
fn heart_path(p: &ShapeParams, map: impl Fn(f64, f64) -> (f64, f64)) -> String {
    let hw = p.heart_hw;
    let n = p.notch;
    let segs: [[(f64, f64); 3]; 6] = [
        [(50.0 - p.point * hw, 77.0), (50.0 - hw, 60.0), (50.0 - hw, 33.0)],
        [(50.0 - hw, 16.0), (50.0 - 0.8 * hw, 5.0), (50.0 - 0.5 * hw, 5.0)],
        [(50.0 - 0.22 * hw, 5.0), (50.0 - 0.02 * hw, n - 10.0), (50.0, n)],
        [(50.0 + 0.02 * hw, n - 10.0), (50.0 + 0.22 * hw, 5.0), (50.0 + 0.5 * hw, 5.0)],
        [(50.0 + 0.8 * hw, 5.0), (50.0 + hw, 16.0), (50.0 + hw, 33.0)],
        [(50.0 + hw, 60.0), (50.0 + p.point * hw, 77.0), (50.0, 95.0)],
    ];
    let (x, y) = map(50.0, 95.0);
    let mut d = format!("M{x:.2},{y:.2}");
    for seg in segs {
        d.push('C');
        for (i, &(px, py)) in seg.iter().enumerate() {
            let (x, y) = map(px, py);
            let _ = write!(d, "{}{x:.2},{y:.2}", if i > 0 { " " } else { "" });
        }
    }
    d.push('Z');
    d
}

/// Stem of spades and clubs from `top` down to the foot at y = 97.
fn stem_path(p: &ShapeParams, top: f64) -> String {
    let (sw, fl) = (p.stem_w, p.stem_flare);
    format!(
        "M{:.2},{top:.2}C{:.2},{:.2} {:.2},90 {:.2},97L{:.2},97C{:.2},90 {:.2},{:.2} {:.2},{top:.2}Z",
        50.0 - sw,
        50.0 - sw,
        top + 22.0,
        50.0 - fl * 0.35,
        50.0 - fl,
        50.0 + fl,
        50.0 + fl * 0.35,
        50.0 + sw,
        top + 22.0,
        50.0 + sw
    )
}

/// The four suit symbols as `<g id="pip-X">` definitions in their colours.
fn suit_defs(shape: SuitShape, colour: impl Fn(Suit) -> &'static str) -> String {
    let p = shape.params();
    let mut out = String::new();
    // Heart.
    let _ = write!(
        out,
        r#"<g id="pip-H"><path fill="{}" d="{}"/></g>"#,
        colour(Suit::Hearts),
        heart_path(&p, |x, y| (x, y))
    );
    // Spade: the heart upside down, squashed to leave room for the stem.
    let squash = 0.78;
    let spade_body = heart_path(&p, |x, y| (x, 3.0 + (95.0 - y) * squash));
    let notch_y = 3.0 + (95.0 - p.notch) * squash;
    let _ = write!(
        out,
        r#"<g id="pip-S" fill="{}"><path d="{spade_body}"/><path d="{}"/></g>"#,
        colour(Suit::Spades),
        stem_path(&p, notch_y - 6.0)
    );
    // Club: three leaves, a filler and the stem.
    let (r, s) = (p.club_r, p.club_spread);
    let top_y = 3.0 + r;
    let low_y = top_y + 1.55 * r;
    let _ = write!(
        out,
        r#"<g id="pip-C" fill="{}"><circle cx="50" cy="{top_y:.2}" r="{r:.2}"/><circle cx="{:.2}" cy="{low_y:.2}" r="{r:.2}"/><circle cx="{:.2}" cy="{low_y:.2}" r="{r:.2}"/><circle cx="50" cy="{:.2}" r="{:.2}"/><path d="{}"/></g>"#,
        colour(Suit::Clubs),
        50.0 - s,
        50.0 + s,
        low_y - 4.0,
        r * 0.55,
        stem_path(&p, low_y - 2.0)
    );
    // Diamond: four quadratic sides bent towards (k > 0) or away from the centre.
    let hw = p.diamond_hw;
    let pts = [(50.0, 3.0), (50.0 + hw, 50.0), (50.0, 97.0), (50.0 - hw, 50.0)];
    let mut d = format!("M{:.2},{:.2}", pts[0].0, pts[0].1);
    for i in 0..4 {
        let (a, b) = (pts[i], pts[(i + 1) % 4]);
        let mid = ((a.0 + b.0) / 2.0, (a.1 + b.1) / 2.0);
        let c = (mid.0 + p.diamond_k * (50.0 - mid.0), mid.1 + p.diamond_k * (50.0 - mid.1));
        let _ = write!(d, "Q{:.2},{:.2} {:.2},{:.2}", c.0, c.1, b.0, b.1);
    }
    let _ = write!(out, r#"<g id="pip-D"><path fill="{}" d="{d}Z"/></g>"#, colour(Suit::Diamonds));
    out
}

/// A pip of `suit`, `size` units wide, centred on (cx, cy), upside down if `flip`.
fn pip(out: &mut String, suit: Suit, cx: f64, cy: f64, size: f64, flip: bool) {
    let rot = if flip { " rotate(180)" } else { "" };
    let _ = write!(
        out,
        r##"<use xlink:href="#pip-{}" transform="translate({cx:.2},{cy:.2}){rot} scale({:.4}) translate(-50,-50)"/>"##,
        suit.letter(),
        size / 100.0
    );
}

/// Standard pip positions for 2–10 in a unit box: (column 0/0.5/1, row 0..1).
fn pip_positions(n: u8) -> Vec<(f64, f64)> {
    let col = |x: f64, rows: &[f64]| rows.iter().map(move |&y| (x, y)).collect::<Vec<_>>();
    let mut v = Vec::new();
    match n {
        2 => v.extend(col(0.5, &[0.0, 1.0])),
        3 => v.extend(col(0.5, &[0.0, 0.5, 1.0])),
        4 => v.extend([col(0.0, &[0.0, 1.0]), col(1.0, &[0.0, 1.0])].concat()),
        5 => v.extend([col(0.0, &[0.0, 1.0]), col(1.0, &[0.0, 1.0]), col(0.5, &[0.5])].concat()),
        6 => v.extend([col(0.0, &[0.0, 0.5, 1.0]), col(1.0, &[0.0, 0.5, 1.0])].concat()),
        7 => v.extend([col(0.0, &[0.0, 0.5, 1.0]), col(1.0, &[0.0, 0.5, 1.0]), col(0.5, &[0.25])].concat()),
        8 => v.extend([col(0.0, &[0.0, 0.5, 1.0]), col(1.0, &[0.0, 0.5, 1.0]), col(0.5, &[0.25, 0.75])].concat()),
        9 => {
            let rows = [0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0];
            v.extend([col(0.0, &rows), col(1.0, &rows), col(0.5, &[0.5])].concat())
        }
        _ => {
            let rows = [0.0, 1.0 / 3.0, 2.0 / 3.0, 1.0];
            v.extend([col(0.0, &rows), col(1.0, &rows), col(0.5, &[1.0 / 6.0, 5.0 / 6.0])].concat())
        }
    }
    v
}

/// Figure colours: (robe, panel, trim, hair, skin, line).
fn palette_colours(palette: Palette, suit: Suit) -> [&'static str; 6] {
    let (a, b, c, hair, skin, line) = match palette {
        Palette::Traditional => ("#c8162c", "#1d4f9e", "#f1c232", "#f1c232", "#f8dcc2", "#111111"),
        Palette::Muted => ("#8e2f35", "#2c4866", "#cfa95a", "#7a4e2a", "#efd6bd", "#2a2a2a"),
    };
    // Swap robe colours by suit so the four kings differ beyond their pip, as on printed decks.
    match suit {
        Suit::Spades | Suit::Diamonds => [a, b, c, hair, skin, line],
        Suit::Hearts | Suit::Clubs => [b, a, c, hair, skin, line],
    }
}

impl ProceduralStyle {
    /// Fonts this style draws with (checked when the design is loaded).
    pub fn fonts_used(&self) -> Vec<FontFace> {
        let mut v = vec![self.index_font];
        if self.back == BackPattern::Logo {
            v.push(LOGO_FONT);
        }
        v
    }

    fn width(&self) -> f64 {
        H * self.aspect
    }

    fn colour(&self, suit: Suit) -> &'static str {
        match (self.colours, suit) {
            (SuitColours::TwoColour { red, .. }, Suit::Hearts | Suit::Diamonds) => red,
            (SuitColours::TwoColour { black, .. }, _) => black,
            (SuitColours::FourColour, Suit::Spades) => BLACK,
            (SuitColours::FourColour, Suit::Hearts) => FOUR_RED,
            (SuitColours::FourColour, Suit::Diamonds) => FOUR_BLUE,
            (SuitColours::FourColour, Suit::Clubs) => FOUR_GREEN,
        }
    }

    /// Inset of the border line from the card edge (0 without a border).
    fn border_inset(&self) -> f64 {
        match self.border {
            Border::None => 0.0,
            Border::Thin | Border::Double => 0.035 * self.width(),
        }
    }

    /// (rank font size, index column centre x, top y, suit pip size) of the corner index.
    fn index_geometry(&self) -> (f64, f64, f64, f64) {
        let w = self.width();
        let inset = self.border_inset();
        let (fs, cx, pip) = match self.index {
            IndexSize::Standard => (0.105 * H, 0.085 * w, 0.07 * H),
            IndexSize::Large => (0.135 * H, 0.105 * w, 0.08 * H),
            IndexSize::Jumbo => (0.215 * H, 0.135 * w, 0.11 * H),
        };
        (fs, cx + inset * 0.9, 0.035 * H + inset * 0.9, pip)
    }

    /// The whole face as an SVG document.
    pub fn face_svg(&self, face: Face) -> String {
        let w = self.width();
        let r = self.corner_radius * w;
        let mut s = String::with_capacity(16 * 1024);
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="{w:.2}" height="{H}" viewBox="0 0 {w:.2} {H}"><defs>{}</defs>"#,
            suit_defs(self.suit_shape, |suit| self.colour(suit))
        );
        // Card stock with a faint grey edge, as a printed card's cut edge looks.
        let _ = write!(
            s,
            r##"<rect x="1.5" y="1.5" width="{:.2}" height="{:.2}" rx="{r:.2}" fill="{}" stroke="#9a9a9a" stroke-width="3"/>"##,
            w - 3.0,
            H - 3.0,
            self.stock
        );
        match face {
            Face::Back => self.back_svg(&mut s),
            Face::Card(card) => self.card_svg(&mut s, card),
        }
        s.push_str("</svg>");
        s
    }

    fn border_svg(&self, s: &mut String, colour: &str) {
        let w = self.width();
        let inset = self.border_inset();
        let r = (self.corner_radius * w - inset).max(4.0);
        let lines: &[f64] = match self.border {
            Border::None => &[],
            Border::Thin => &[0.0],
            Border::Double => &[0.0, 0.012 * w],
        };
        for &extra in lines {
            let i = inset + extra;
            let _ = write!(
                s,
                r#"<rect x="{i:.2}" y="{i:.2}" width="{:.2}" height="{:.2}" rx="{:.2}" fill="none" stroke="{colour}" stroke-width="3"/>"#,
                w - 2.0 * i,
                H - 2.0 * i,
                (r - extra).max(3.0)
            );
        }
    }

    fn rank_text(&self, s: &mut String, rank: Rank, cx: f64, baseline: f64, fs: f64, colour: &str) {
        let code = rank.code();
        // Printed indices squeeze "10"; jumbo indices are drawn narrow and tall.
        let squeeze = match (code.len(), self.index) {
            (2, IndexSize::Jumbo) => 0.56,
            (2, _) => 0.74,
            (_, IndexSize::Jumbo) => 0.86,
            _ => 1.0,
        };
        let spacing = if code.len() == 2 { -0.06 * fs } else { 0.0 };
        let _ = write!(
            s,
            r#"<text transform="translate({cx:.2},{baseline:.2}) scale({squeeze},1)" x="0" y="0" text-anchor="middle" font-family="{}" font-weight="{}" font-stretch="{}" font-size="{fs:.2}" letter-spacing="{spacing:.2}" fill="{colour}">{code}</text>"#,
            self.index_font.family,
            self.index_font.weight,
            self.index_font.stretch_svg()
        );
    }

    /// One corner index (rank above suit) at the top-left, x mirrored when `right`.
    fn index_svg(&self, s: &mut String, card: Card, right: bool) {
        let (fs, cx0, top, pip_size) = self.index_geometry();
        let cx = if right { self.width() - cx0 } else { cx0 };
        let colour = self.colour(card.suit());
        let baseline = top + 0.73 * fs;
        self.rank_text(s, card.rank(), cx, baseline, fs, colour);
        pip(s, card.suit(), cx, baseline + 0.12 * fs + pip_size / 2.0, pip_size, false);
    }

    fn card_svg(&self, s: &mut String, card: Card) {
        let w = self.width();
        let colour = self.colour(card.suit());
        self.border_svg(s, if matches!(self.colours, SuitColours::FourColour) { "#444444" } else { colour });
        // Indices: top-left (and top-right), then the same rotated half a turn.
        let mut idx = String::new();
        self.index_svg(&mut idx, card, false);
        if self.four_corner_index {
            self.index_svg(&mut idx, card, true);
        }
        let _ = write!(s, "{idx}<g transform=\"rotate(180 {:.2} {:.2})\">{idx}</g>", w / 2.0, H / 2.0);
        match card.rank() {
            Rank::Jack | Rank::Queen | Rank::King => self.court_svg(s, card),
            Rank::Ace => {
                let size = if self.pips == PipLayout::Single { 0.42 * w } else { 0.36 * w };
                if card.suit() == Suit::Spades {
                    // The ace of spades is the maker's showpiece: a larger pip in a ring.
                    let _ = write!(
                        s,
                        r#"<circle cx="{:.2}" cy="{:.2}" r="{:.2}" fill="none" stroke="{colour}" stroke-width="5"/><circle cx="{:.2}" cy="{:.2}" r="{:.2}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                        w / 2.0,
                        H / 2.0,
                        size * 0.8,
                        w / 2.0,
                        H / 2.0,
                        size * 0.8 - 12.0
                    );
                    pip(s, Suit::Spades, w / 2.0, H / 2.0, size * 1.05, false);
                } else {
                    pip(s, card.suit(), w / 2.0, H / 2.0, size, false);
                }
            }
            rank => {
                let n = rank.index() + 2;
                match self.pips {
                    PipLayout::Single => pip(s, card.suit(), w / 2.0, H / 2.0, 0.36 * w, false),
                    PipLayout::Standard | PipLayout::Compact => {
                        let (half_span, size, y0, y1) = if self.pips == PipLayout::Standard {
                            (0.21 * w, 0.165 * w, 0.2 * H, 0.8 * H)
                        } else {
                            (0.14 * w, 0.13 * w, 0.25 * H, 0.75 * H)
                        };
                        for (u, v) in pip_positions(n) {
                            let x = w / 2.0 + (u - 0.5) * 2.0 * half_span;
                            let y = y0 + v * (y1 - y0);
                            pip(s, card.suit(), x, y, size, v > 0.5);
                        }
                    }
                }
            }
        }
    }

    /// The court panel: (x0, y0, x1, y1).
    fn court_panel(&self) -> (f64, f64, f64, f64) {
        let w = self.width();
        let (fs, cx, _, _) = self.index_geometry();
        let x0 = match self.index {
            IndexSize::Jumbo => cx + 0.42 * fs,
            _ => cx + 0.5 * fs,
        };
        let y0 = match self.index {
            IndexSize::Jumbo => 0.13 * H,
            _ => 0.08 * H,
        };
        (x0, y0, w - x0, H - y0)
    }

    fn court_svg(&self, s: &mut String, card: Card) {
        let (x0, y0, x1, y1) = self.court_panel();
        let (pw, ph) = (x1 - x0, y1 - y0);
        let (cx, cy) = ((x0 + x1) / 2.0, (y0 + y1) / 2.0);
        let colour = self.colour(card.suit());
        let frame = match self.court {
            CourtArt::Figure { palette: Palette::Muted, .. } => "#2a2a2a",
            _ => colour,
        };
        let _ = write!(
            s,
            r#"<rect x="{x0:.2}" y="{y0:.2}" width="{pw:.2}" height="{ph:.2}" fill="none" stroke="{frame}" stroke-width="4"/>"#
        );
        match self.court {
            CourtArt::Letter => {
                let _ = write!(
                    s,
                    r#"<rect x="{:.2}" y="{:.2}" width="{:.2}" height="{:.2}" fill="{colour}" fill-opacity="0.08" stroke="{colour}" stroke-width="2"/>"#,
                    x0 + 10.0,
                    y0 + 10.0,
                    pw - 20.0,
                    ph - 20.0
                );
                let mut half = String::new();
                let fs = (0.3 * H).min(pw * 0.75);
                self.rank_text(&mut half, card.rank(), cx, cy - 0.12 * ph, fs * 0.85, colour);
                pip(&mut half, card.suit(), x0 + 0.16 * pw, y0 + 0.1 * ph, 0.14 * pw, false);
                let _ = write!(s, "{half}<g transform=\"rotate(180 {cx:.2} {cy:.2})\">{half}</g>");
                let _ = write!(
                    s,
                    r#"<line x1="{:.2}" y1="{cy:.2}" x2="{:.2}" y2="{cy:.2}" stroke="{colour}" stroke-width="2"/>"#,
                    x0 + 10.0,
                    x1 - 10.0
                );
            }
            CourtArt::Figure { palette, diagonal } => {
                // The top half is clipped along the split line; the bottom half is its copy,
                // turned half a turn, as on double-ended court cards.
                let tilt = if diagonal { 0.07 * ph } else { 0.0 };
                let _ = write!(
                    s,
                    r#"<clipPath id="half"><path d="M{x0:.2},{y0:.2}L{x1:.2},{y0:.2}L{x1:.2},{:.2}L{x0:.2},{:.2}Z"/></clipPath>"#,
                    cy - tilt,
                    cy + tilt
                );
                let mut half = String::new();
                let scale = pw / 100.0;
                // The figure's box is 100 wide and 85 high, standing on the split line.
                let fy = cy - 85.0 * scale;
                let _ = write!(
                    half,
                    r#"<g clip-path="url(#half)"><g transform="translate({x0:.2},{fy:.2}) scale({scale:.4})">{}</g></g>"#,
                    figure(card.rank(), palette_colours(palette, card.suit()))
                );
                pip(&mut half, card.suit(), x0 + 0.14 * pw, y0 + 0.09 * ph, 0.14 * pw, false);
                let _ = write!(s, "{half}<g transform=\"rotate(180 {cx:.2} {cy:.2})\">{half}</g>");
                let _ = write!(
                    s,
                    r#"<line x1="{x0:.2}" y1="{:.2}" x2="{x1:.2}" y2="{:.2}" stroke="{frame}" stroke-width="3"/>"#,
                    cy + tilt,
                    cy - tilt
                );
            }
        }
    }

    fn back_svg(&self, s: &mut String) {
        let w = self.width();
        let c = self.back_colour;
        let stock = self.stock;
        let m = 0.06 * w;
        let r = (self.corner_radius * w - m * 0.6).max(6.0);
        let field = |fill: &str| {
            format!(
                r#"<rect x="{m:.2}" y="{m:.2}" width="{:.2}" height="{:.2}" rx="{r:.2}" fill="{fill}"/>"#,
                w - 2.0 * m,
                H - 2.0 * m
            )
        };
        let inner_line = |inset: f64, colour: &str, width: f64| {
            let i = m + inset;
            format!(
                r#"<rect x="{i:.2}" y="{i:.2}" width="{:.2}" height="{:.2}" rx="{:.2}" fill="none" stroke="{colour}" stroke-width="{width}"/>"#,
                w - 2.0 * i,
                H - 2.0 * i,
                (r - inset).max(3.0)
            )
        };
        match self.back {
            BackPattern::Lattice => {
                let p = 0.07 * w;
                let _ = write!(
                    s,
                    r#"<defs><pattern id="bp" width="{p:.2}" height="{p:.2}" patternUnits="userSpaceOnUse"><rect width="{p:.2}" height="{p:.2}" fill="{c}"/><path d="M0,0L{p:.2},{p:.2}M{p:.2},0L0,{p:.2}" stroke="{stock}" stroke-width="{:.2}"/><circle cx="{:.2}" cy="{:.2}" r="{:.2}" fill="{stock}"/></pattern></defs>{}{}"#,
                    p * 0.08,
                    p / 2.0,
                    p / 2.0,
                    p * 0.12,
                    field("url(#bp)"),
                    inner_line(0.02 * w, stock, 4.0)
                );
            }
            BackPattern::Stripes => {
                let p = 0.045 * w;
                let _ = write!(
                    s,
                    r#"<defs><pattern id="bp" width="{p:.2}" height="{p:.2}" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="{p:.2}" height="{p:.2}" fill="{c}"/><rect width="{:.2}" height="{p:.2}" fill="{stock}" fill-opacity="0.75"/></pattern></defs>{}{}"#,
                    p * 0.3,
                    field("url(#bp)"),
                    inner_line(0.025 * w, c, 6.0)
                );
            }
            BackPattern::Dots => {
                let p = 0.05 * w;
                let _ = write!(
                    s,
                    r#"<defs><pattern id="bp" width="{p:.2}" height="{p:.2}" patternUnits="userSpaceOnUse"><rect width="{p:.2}" height="{p:.2}" fill="{c}"/><circle cx="{:.2}" cy="{:.2}" r="{:.2}" fill="{stock}"/></pattern></defs>{}{}"#,
                    p / 2.0,
                    p / 2.0,
                    p * 0.18,
                    field("url(#bp)"),
                    inner_line(0.03 * w, stock, 5.0)
                );
            }
            BackPattern::Solid => {
                let _ = write!(s, "{}{}", field(c), inner_line(0.03 * w, stock, 3.0));
            }
            BackPattern::Logo => {
                let _ = write!(
                    s,
                    r#"{}{}{}<ellipse cx="{:.2}" cy="{:.2}" rx="{:.2}" ry="{:.2}" fill="{stock}"/><ellipse cx="{:.2}" cy="{:.2}" rx="{:.2}" ry="{:.2}" fill="none" stroke="{c}" stroke-width="5"/><text x="{:.2}" y="{:.2}" text-anchor="middle" font-family="{}" font-weight="{}" font-size="{:.2}" fill="{c}">CASINO</text><text x="{:.2}" y="{:.2}" text-anchor="middle" font-family="{}" font-weight="{}" font-size="{:.2}" fill="{c}">MACAU</text>"#,
                    field(c),
                    inner_line(0.025 * w, stock, 6.0),
                    inner_line(0.05 * w, stock, 2.0),
                    w / 2.0,
                    H / 2.0,
                    0.34 * w,
                    0.16 * H,
                    w / 2.0,
                    H / 2.0,
                    0.31 * w,
                    0.14 * H,
                    w / 2.0,
                    H / 2.0 + 0.005 * H,
                    LOGO_FONT.family,
                    LOGO_FONT.weight,
                    0.085 * w,
                    w / 2.0,
                    H / 2.0 + 0.075 * H,
                    LOGO_FONT.family,
                    LOGO_FONT.weight,
                    0.05 * w,
                );
            }
        }
    }
}

/// The upper half of a court figure, in a 100 × 85 box standing on its bottom edge.
fn figure(rank: Rank, [robe, panel, trim, hair, skin, line]: [&'static str; 6]) -> String {
    let st = format!(r#"stroke="{line}" stroke-width="0.8" stroke-linejoin="round""#);
    let mut f = String::new();
    // Held item behind the figure.
    match rank {
        Rank::King => {
            let _ = write!(
                f,
                r##"<path d="M79,6L83,6L81,70Z" fill="#d8d8d8" {st}/><rect x="73" y="58" width="16" height="3" fill="{trim}" {st}/><rect x="79.5" y="61" width="3" height="14" fill="{line}"/>"##
            );
        }
        Rank::Queen => {
            let _ = write!(
                f,
                r##"<path d="M22,82L26,30" stroke="#2f7d32" stroke-width="2" fill="none"/><circle cx="26" cy="26" r="6" fill="{robe}" {st}/><circle cx="26" cy="26" r="2.4" fill="{trim}"/><path d="M24,50Q16,44 20,40Q25,44 24,50Z" fill="#2f7d32"/>"##
            );
        }
        _ => {
            let _ = write!(
                f,
                r##"<path d="M83,8L80,84" stroke="#6b4423" stroke-width="2.4"/><path d="M82,10L92,16L90,26L81,22Z" fill="#cfcfcf" {st}/><path d="M82,4L85,12L79,12Z" fill="#cfcfcf" {st}/>"##
            );
        }
    }
    // Robe, front panel with trim bands, collar, arm.
    let _ = write!(
        f,
        r#"<path d="M20,56Q50,44 80,56L94,86L6,86Z" fill="{robe}" {st}/><path d="M40,52L60,52L67,86L33,86Z" fill="{panel}" {st}/><path d="M36,64L64,64M35,72L65,72M34,80L66,80" stroke="{trim}" stroke-width="2.2"/><path d="M50,52L50,86" stroke="{line}" stroke-width="0.8"/><path d="M20,56L11,82L22,84L29,62Z" fill="{panel}" {st}/><path d="M80,56L86,70L76,74L72,62Z" fill="{panel}" {st}/><circle cx="78" cy="70" r="4" fill="{skin}" {st}/>"#
    );
    let _ = write!(
        f,
        r#"<path d="M31,51Q50,64 69,51L65,46Q50,57 35,46Z" fill="{trim}" {st}/><rect x="45" y="40" width="10" height="9" fill="{skin}" {st}/>"#
    );
    // Hair behind the head (long for the queen).
    match rank {
        Rank::Queen => {
            let _ = write!(
                f,
                r#"<path d="M36,24Q30,44 36,54L44,50L44,30Z" fill="{hair}" {st}/><path d="M64,24Q70,44 64,54L56,50L56,30Z" fill="{hair}" {st}/>"#
            );
        }
        _ => {
            let _ = write!(
                f,
                r#"<path d="M37,24Q34,40 40,46L44,44L44,28Z" fill="{hair}" {st}/><path d="M63,24Q66,40 60,46L56,44L56,28Z" fill="{hair}" {st}/>"#
            );
        }
    }
    // Head and face.
    let _ = write!(
        f,
        r#"<ellipse cx="50" cy="32" rx="12" ry="14" fill="{skin}" {st}/><path d="M43,29Q45,27.5 47,29M53,29Q55,27.5 57,29" stroke="{line}" stroke-width="0.9" fill="none"/><circle cx="45" cy="31" r="1.1" fill="{line}"/><circle cx="55" cy="31" r="1.1" fill="{line}"/><path d="M50,32L48.5,37L51,37" stroke="{line}" stroke-width="0.7" fill="none"/><path d="M46.5,40.5Q50,42.5 53.5,40.5" stroke="{robe}" stroke-width="1.1" fill="none"/>"#
    );
    // Crown, tiara or cap; the king's beard.
    match rank {
        Rank::King => {
            let _ = write!(
                f,
                r#"<path d="M40,40Q50,56 60,40Q56,45 50,45Q44,45 40,40Z" fill="{hair}" {st}/><path d="M36,21L36,7L42,14L50,3L58,14L64,7L64,21Z" fill="{trim}" {st}/><rect x="36" y="18" width="28" height="4" fill="{robe}" {st}/><circle cx="50" cy="12" r="2" fill="{robe}" {st}/>"#
            );
        }
        Rank::Queen => {
            let _ = write!(
                f,
                r#"<path d="M38,21L37,10Q43,15 50,8Q57,15 63,10L62,21Z" fill="{trim}" {st}/><circle cx="37" cy="9" r="1.8" fill="{robe}" {st}/><circle cx="50" cy="7" r="1.8" fill="{robe}" {st}/><circle cx="63" cy="9" r="1.8" fill="{robe}" {st}/>"#
            );
        }
        _ => {
            let _ = write!(
                f,
                r#"<path d="M35,22Q46,4 67,14L69,22Z" fill="{robe}" {st}/><path d="M35,22L69,22L69,19L35,19Z" fill="{trim}" {st}/><path d="M62,14Q76,2 84,6Q74,8 66,17Z" fill="{trim}" {st}/>"#
            );
        }
    }
    f
}
