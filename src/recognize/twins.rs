//! Two cards of one frame read as the same face: the same print twice, or a misread.
//!
//! A table is dealt from one deck design, so two cards that truly share an identity print the
//! same pixels, whatever the design. On a design the classifiers never saw, they read a suit as
//! the other suit of its colour (K♦ as K♥, A♣ as A♠; docs/pipeline.md, "Thirty clean rounds on
//! a new seed"), surely and frame after frame; the card such a read seems to duplicate lies on
//! the same table, and its print differs where the suits do. Comparing the two cards' own
//! pixels needs no knowledge of the design.
//!
//! The faces are compared in small tiles, each free to shift a few pixels: a card measured
//! under a hand's other cards is outlined a few pixels off, and one global alignment leaves
//! whole strips of a true twin unmatched (docs/pipeline.md, "Twin prints"). The index corners
//! are compared too, aligned as a whole first: where court cards share one picture the suits
//! differ only there. A card is masked by the cards that may lie over it, not by those its own
//! edge is seen to cross (docs/pipeline.md, "Which card lies on top, and index prints"). The
//! whole faces' colours are compared too, against each card's own paper and only where no other
//! card lies: a design that prints one court picture in each suit's colours leaves grey prints
//! too alike at a dim 1080p camera (docs/pipeline.md, "Court cards told apart by their colours").
//! And a number card's pips are compared one by one ([`super::pips`]): where a spade is read as
//! the club of its rank, every tile finds its match, but the pips' outlines differ
//! (docs/pipeline.md, "Pips told apart by their outlines").
//!
//! [`PrintBook`] carries the comparison across frames for the table logic: a round's faces at
//! each place they were read.
use std::collections::BTreeMap;

use opencv::core::Mat;

use super::pips::{self, Pips};
use super::{DetectedCard, RecognizeError};
use crate::calib::{Homography, Point, Polygon};
use crate::classify::{self, CardIdentity, CornerCut};
use crate::locate::geometry::{bounding_box, boxes_meet};
use crate::locate::{order_quad, Quad};
use crate::rules::{Card, Rank};

/// How two faces are compared: the cut, sampled into a patch, and the tiles it is split into.
struct Comparison {
    cut: CornerCut,
    /// Tile side and step, patch pixels.
    tile: usize,
    step: usize,
    /// How far (patch pixels) a tile may shift to find its match.
    shift: usize,
    /// Pixel noise is smoothed first (Gaussian σ, patch pixels).
    blur_sigma: f32,
    /// How the two cards' views (one from each end) are paired. A whole face is one print
    /// either way up: the first card's first view against each of the other's, the better
    /// match counting. Each index corner prints the same index upright: every pair counts, the
    /// better match among those that show at least half as much print in common as the pair that
    /// shows most (a corner mostly covered would match on its last few tiles).
    either_way_up: bool,
    /// How far (patch pixels) the second cut is first shifted as a whole to lie best on the
    /// first: an index corner is small, and two cards' outlines measured a pixel or two off
    /// each other move it more than a tile's own shift makes up for.
    align: usize,
    /// A tile matches when its best normalized cross-correlation reaches this.
    tile_match: f32,
    /// The prints differ when at least this share of their comparable tiles find no match.
    differing: f64,
    /// Whether colours are compared too ([`Comparison::colours_differ`]).
    colour: bool,
}

/// The whole card upright, sampled a little finer than a 1080p camera shows a card over the
/// table (~75 px long).
const WHOLE_FACE: Comparison = Comparison {
    cut: CornerCut { patch: (96, 60), region: (1.0, 1.0) },
    tile: 12,
    step: 6,
    shift: 4,
    blur_sigma: 0.7,
    either_way_up: true,
    align: 0,
    tile_match: 0.7,
    differing: DIFFERING_SHARE,
    colour: true,
};
/// The printed index corners (the classifiers' corner region), sampled 1.5 times finer than
/// the whole face: what a fanned hand's covered cards show, and what read them, and where two
/// suits of one colour differ on a deck whose court cards share their pictures. Aligned as a
/// whole first, true twins' index corners leave almost every tile matched even at a strict
/// 0.85: at most 0.10 unmatched in 193 of the 194 frames of the duplicate-card scenarios of stud
/// seeds 7 and 8, Q Poker, San Gong and Fortune seed 7 (0.48 in one, whose whole faces differed
/// too), a 2♠ read as 2♣ 0.30–0.87 and aisleriot-ornamental's K♠ read as K♣ 0.07–0.30
/// (docs/pipeline.md, "Which card lies on top, and index prints").
const INDEX_CORNERS: Comparison = Comparison {
    cut: CornerCut { patch: (56, 36), region: classify::CORNER_REGION },
    tile: 8,
    step: 4,
    shift: 2,
    blur_sigma: 1.0,
    either_way_up: false,
    align: 6,
    tile_match: 0.85,
    differing: 0.15,
    colour: false,
};
/// Each other card's outline is grown by this share about its centre before it masks a face:
/// a card lying over another shades a pixel or two beyond its quad.
const COVER_GROWTH: f64 = 1.06;
/// A tile whose grey level varies less than this (0..1 scale) is plain card and not compared.
const MIN_TILE_STD: f32 = 0.06;
/// A tile shows colour when its mean colour against the paper ([`paper_chroma`]) reaches this.
const MIN_TILE_CHROMA: f32 = 0.1;
/// A tile's colour matches where its mean colour is at most this far from a window's of the
/// other card.
const CHROMA_MATCH: f32 = 0.08;
/// Two whole faces' colours differ when at least this share of the tiles showing colour find
/// no match. Where court cards print one picture in another suit's colours (kde-dondorf's K♠ and
/// K♣, grey prints 0.11–0.16 unmatched, under [`DIFFERING_SHARE`]) their colours left 0.30–0.41
/// unmatched over 67–69 tiles (Fortune 2025 seed 13, 1080p, dim); true copies in the
/// duplicate-card scenarios at most 0.03 where 10 or more tiles showed colour
/// (docs/pipeline.md, "Court cards told apart by their colours").
const COLOUR_DIFFERING: f64 = 0.25;
/// Fewer tiles showing colour than this compare no colour: a card mostly plain, or mostly
/// under other cards (true copies with 6–8 such tiles left up to 0.17 unmatched).
const MIN_COLOUR_TILES: usize = 10;
/// Patch pixels along the cut's edges where colour is not compared (a card's rounded corner
/// shows the felt).
const COLOUR_MARGIN: usize = 6;
/// Fewer comparable tiles than this (a face mostly covered) compare nothing.
const MIN_TILES: usize = 4;
/// Two whole faces differ when at least this share of their comparable tiles find no match. On
/// 1080p simulator sessions, true twins (the duplicate-card scenarios of stud seeds 7 and 8 and
/// Fortune seed 7, 62 frame pairs) left at most 0.10 unmatched; misread twins (Fortune seed 11,
/// kde-gm-paris: A♣ read as A♠, 3♦ as 3♥) left 0.20–1.00, 0.42 in the median frame.
pub const DIFFERING_SHARE: f64 = 0.16;

/// A card's cut (its whole face, or an index corner) upright from one end, grey and smoothed,
/// with the pixels no other card of the frame covers.
struct FaceView {
    grey: Vec<f32>,
    /// Colour against the card's own paper (white-balanced by it, so a table's light does not
    /// count): red less green, and blue less yellow, smoothed like `grey`.
    chroma: [Vec<f32>; 2],
    shown: Vec<bool>,
    /// Pixels no other card's outline reaches, clear of the corners: where colour is compared
    /// (none where the comparison compares no colour, and `chroma` is then empty).
    clear: Vec<bool>,
}

/// Whether cards `i` and `j` of `quads` print differently: their whole faces or their index
/// corners differ, each laid against the other either way up (the way that matches best
/// counts). `None` when neither shows enough in common to compare.
pub fn prints_differ(image: &Mat, quads: &[Quad], i: usize, j: usize) -> Result<Option<bool>, RecognizeError> {
    let a = Print::cut(image, quads, i)?;
    let b = Print::cut(image, quads, j)?;
    Ok(a.differs(&b))
}

/// A card's print as a frame shows it: its whole face and its index corners, from both ends.
struct Print {
    face: Vec<FaceView>,
    index: Vec<FaceView>,
    pips: Pips,
}

impl Print {
    /// Card `card` of `quads`, masked by the cards that may lie over it ([`covers`]).
    fn cut(image: &Mat, quads: &[Quad], card: usize) -> Result<Print, RecognizeError> {
        let covers = covers(image, quads, card);
        let others: Vec<Polygon> = (0..quads.len()).filter(|&o| o != card).map(|o| grown(&quads[o])).collect();
        Ok(Print {
            face: WHOLE_FACE.views(image, &quads[card], &covers, &others)?,
            index: INDEX_CORNERS.views(image, &quads[card], &covers, &others)?,
            pips: Pips::cut(image, &quads[card], &covers)?,
        })
    }

    /// How much print it shows: its comparable tiles, face and index corners.
    fn tiles(&self) -> usize {
        WHOLE_FACE.print_tiles(&self.face) + INDEX_CORNERS.print_tiles(&self.index)
    }

    /// [`prints_differ`] of two cut prints: either comparison finding them different is enough
    /// (court cards that share one picture differ only in their index corners; a fan's covered
    /// card may show nothing else).
    fn differs(&self, other: &Print) -> Option<bool> {
        let found = [
            WHOLE_FACE.differs(&self.face, &other.face),
            WHOLE_FACE.colours_differ(&self.face, &other.face),
            INDEX_CORNERS.differs(&self.index, &other.index),
            self.pips.differ(&other.pips),
        ];
        if found.contains(&Some(true)) {
            Some(true)
        } else if found.iter().all(Option::is_none) {
            None
        } else {
            Some(false)
        }
    }

    /// Both shares, whole face and index corners, for `TABLECAM_TWIN_DEBUG`.
    fn debug_shares(&self, other: &Print) -> String {
        let face = WHOLE_FACE.unmatched_share(&self.face, &other.face);
        let index = INDEX_CORNERS.unmatched_share(&self.index, &other.index);
        let colour = WHOLE_FACE.chroma_unmatched_share(&self.face, &other.face).map(|(s, n)| format!("{s:.2} of {n}"));
        let pips = self.pips.likeness(&other.pips);
        format!("face {face:.2?} index {index:.2?} colour {colour:?} pips {pips:.3?}")
    }
}

/// What comparing a card with the other cards of its frame read as the same face found
/// ([`DetectedCard::twin`]); a card with several such twins keeps the gravest finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum TwinPrint {
    /// No other card of the frame is read as this face.
    #[default]
    Alone,
    /// Another is, and the two print alike where both show: a second copy of the card.
    Same,
    /// Another is, but the two show too little in common to compare: either may be misread.
    Hidden,
    /// Another is, and its print differs ([`DIFFERING_SHARE`]): one of the two is misread.
    Differs,
}

/// Sets [`DetectedCard::twin`] on the cards of a frame read as the same face. With
/// `TABLECAM_TWIN_DEBUG` set, each comparison goes to stderr.
pub fn compare_twins(image: &Mat, cards: &mut [DetectedCard]) -> Result<(), RecognizeError> {
    let mut pairs = Vec::new();
    for i in 0..cards.len() {
        for j in i + 1..cards.len() {
            if let (CardIdentity::Card(a), CardIdentity::Card(b)) = (cards[i].card, cards[j].card) {
                if a == b {
                    pairs.push((i, j));
                }
            }
        }
    }
    if pairs.is_empty() {
        return Ok(());
    }
    let quads: Vec<Quad> = cards.iter().map(|c| c.quad).collect();
    let debug = std::env::var_os("TABLECAM_TWIN_DEBUG").is_some();
    for (i, j) in pairs {
        let (a, b) = (Print::cut(image, &quads, i)?, Print::cut(image, &quads, j)?);
        let found = match a.differs(&b) {
            None => TwinPrint::Hidden,
            Some(true) => TwinPrint::Differs,
            Some(false) => TwinPrint::Same,
        };
        if debug {
            let (p, q) = (Point::mean(&quads[i]), Point::mean(&quads[j]));
            eprintln!(
                "twins: {} at ({:.0}, {:.0}) and ({:.0}, {:.0}): {found:?} ({})",
                cards[i].card.code(),
                p.x,
                p.y,
                q.x,
                q.y,
                a.debug_shares(&b)
            );
        }
        for k in [i, j] {
            cards[k].twin = cards[k].twin.max(found);
        }
    }
    Ok(())
}

/// A sighting of a face moves with the card read as it while each read falls within this share
/// of the card's long side of the last; a read of the face farther off is another sighting.
const SIGHTING_REACH: f64 = 0.5;
/// A card has lain still after this many frames within [`STILL_PX`] of its last place. A
/// sighting's print is cut again only then (its first cut is at once): a card sliding into
/// place is blurred.
const STILL_FRAMES: u32 = 3;
const STILL_PX: f64 = 2.0;
/// Frames between two cuts of one sighting's print; a cut that shows more pips, or as many and
/// more print tiles, replaces the kept one.
const RECUT_FRAMES: u64 = 15;
/// Frames between two cuts of a number card's print while it shows fewer than
/// [`pips::MIN_PIPS`] pips and another sighting of its face is in the book.
const PIPLESS_RECUT_FRAMES: u64 = 2;
/// Sightings a round may hold (a round deals at most a few dozen cards): past it no new place is
/// noted, so that a round start the tracker never sees cannot grow the book without end (each
/// sighting keeps about 60 kB of print).
const MAX_SIGHTINGS: usize = 256;

/// The faces read in a round, each at the places it was read, with one print per place: a card
/// read as a face that a card elsewhere showed before — since gathered, or read otherwise now —
/// is compared with that card's print, as [`compare_twins`] compares two cards of one frame. On
/// seed 11's unseen designs, a hand whose Q♥ was read as 3♥ was gathered before another seat's
/// real 3♥ turned up: no frame held both, and the round was flagged a duplicate
/// (docs/pipeline.md, "Prints kept through the round").
///
/// Protocol: [`PrintBook::sight`] on every frame in order; [`PrintBook::clear`] when a round
/// starts (a new deck may be brought in between rounds).
#[derive(Default)]
pub struct PrintBook {
    sightings: Vec<Sighting>,
    /// For each pair of sightings of a face (lower index first) whose prints were compared,
    /// whether the latest comparison found them differing.
    differing: BTreeMap<(usize, usize), bool>,
}

/// Where a card was last read, and for how long it has lain there.
struct Spot {
    at: Point,
    /// Consecutive frames the card lay within [`STILL_PX`] of `at`.
    still: u32,
}

impl Spot {
    fn new(at: Point) -> Spot {
        Spot { at, still: 0 }
    }

    /// The card read at `at` now.
    fn follow(&mut self, at: Point) {
        self.still = if self.at.dist(at) <= STILL_PX { self.still + 1 } else { 0 };
        self.at = at;
    }

    /// Whether the card has lain still [`STILL_FRAMES`] frames, this one included.
    fn is_still(&self) -> bool {
        self.still + 1 >= STILL_FRAMES
    }
}

/// Of `spots`, the one nearest `at` within `reach`.
fn nearest<'a>(spots: impl Iterator<Item = (usize, &'a Spot)>, at: Point, reach: f64) -> Option<usize> {
    spots
        .map(|(k, s)| (k, s.at.dist(at)))
        .filter(|&(_, d)| d <= reach)
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(k, _)| k)
}

struct Sighting {
    card: Card,
    spot: Spot,
    print: Option<KeptPrint>,
}

struct KeptPrint {
    print: Print,
    tiles: usize,
    frame: u64,
}

impl PrintBook {
    /// An empty book.
    pub fn new() -> PrintBook {
        PrintBook::default()
    }

    /// Forgets the round's sightings.
    pub fn clear(&mut self) {
        self.sightings.clear();
        self.differing.clear();
    }

    /// Notes the faces read in frame `frame` and marks [`TwinPrint::Differs`] on each card read
    /// as a face that another sighting of it prints differently.
    pub fn sight(&mut self, image: &Mat, frame: u64, cards: &mut [DetectedCard]) -> Result<(), RecognizeError> {
        let quads: Vec<Quad> = cards.iter().map(|c| c.quad).collect();
        let mut taken = vec![false; self.sightings.len()];
        for i in 0..cards.len() {
            let CardIdentity::Card(face) = cards[i].card else { continue };
            let at = Point::mean(&quads[i]);
            let reach = SIGHTING_REACH * long_side(&quads[i]);
            let free = self.sightings.iter().enumerate().filter(|&(k, s)| !taken[k] && s.card == face);
            let k = match nearest(free.map(|(k, s)| (k, &s.spot)), at, reach) {
                Some(k) => {
                    self.sightings[k].spot.follow(at);
                    k
                }
                None if self.sightings.len() >= MAX_SIGHTINGS => continue,
                None => {
                    let spot = Spot::new(at);
                    self.sightings.push(Sighting { card: face, spot, print: None });
                    taken.push(false);
                    self.sightings.len() - 1
                }
            };
            taken[k] = true;
            if self.recut(k, image, &quads, i, frame)? {
                self.compare(k);
            }
            if self.differs(k) {
                cards[i].twin = cards[i].twin.max(TwinPrint::Differs);
            }
        }
        Ok(())
    }

    /// Cuts sighting `k`'s print from card `i` when it is due; whether a better print was kept.
    fn recut(&mut self, k: usize, image: &Mat, quads: &[Quad], i: usize, frame: u64) -> Result<bool, RecognizeError> {
        let s = &self.sightings[k];
        // The first read is cut at once, moving or not: a misread twin must be contested before
        // the tracker's votes confirm it, or its duplicate is flagged on confirmation. A number
        // card's pips are what tell it from the other suit of its colour, and a card just
        // turned, or half under a hand, may show too few: its print is then cut again soon,
        // moving or not, while another sighting of its face is there to compare with (a cut
        // costs milliseconds, and a stud hand's covered cards may never show their pips).
        // Fortune 2025 seed 13 round 2: the real 5♣'s first print showed too few pips, a 5♠ read
        // as 5♣ was confirmed, and the duplicate was flagged a frame before the pips were
        // compared.
        let twinned = || self.sightings.iter().enumerate().any(|(o, t)| o != k && t.card == s.card);
        let due = match &s.print {
            None => true,
            Some(p) if s.card.rank() <= Rank::Ten && p.print.pips.count() < pips::MIN_PIPS && twinned() => {
                frame >= p.frame + PIPLESS_RECUT_FRAMES
            }
            Some(p) => s.spot.is_still() && frame >= p.frame + RECUT_FRAMES,
        };
        if !due {
            return Ok(false);
        }
        let print = Print::cut(image, quads, i)?;
        let tiles = print.tiles();
        let s = &mut self.sightings[k];
        // Pips count first: the other cuts do not tell a number card's suits apart.
        let better = s.print.as_ref().map_or(true, |p| (print.pips.count(), tiles) > (p.print.pips.count(), p.tiles));
        match &mut s.print {
            Some(p) if !better => p.frame = frame,
            _ => s.print = Some(KeptPrint { print, tiles, frame }),
        }
        Ok(better)
    }

    /// Compares sighting `k`'s print with every other sighting's of its face.
    fn compare(&mut self, k: usize) {
        let debug = std::env::var_os("TABLECAM_TWIN_DEBUG").is_some();
        for o in 0..self.sightings.len() {
            let (s, t) = (&self.sightings[k], &self.sightings[o]);
            if o == k || t.card != s.card {
                continue;
            }
            let (Some(a), Some(b)) = (&s.print, &t.print) else { continue };
            let differs = a.print.differs(&b.print);
            if debug {
                eprintln!(
                    "prints: {} at ({:.0}, {:.0}) and ({:.0}, {:.0}): differ {differs:?} ({})",
                    s.card,
                    s.spot.at.x,
                    s.spot.at.y,
                    t.spot.at.x,
                    t.spot.at.y,
                    a.print.debug_shares(&b.print)
                );
            }
            // Hidden (no verdict) keeps what the last comparison found.
            if let Some(d) = differs {
                self.differing.insert((k.min(o), k.max(o)), d);
            }
        }
    }

    /// Whether sighting `k`'s latest print differs from another sighting's.
    fn differs(&self, k: usize) -> bool {
        self.differing.iter().any(|(&(a, b), &d)| d && (a == k || b == k))
    }
}

/// One view of a card cut from a frame (a corner patch, [`classify::cut_corner_patch`]), with
/// what the twin checks need of it: the patch's RGB planes, each patch pixel's place in the
/// image, and whether it is shown there (no outline of `covers` holds that place).
pub(super) struct CutView {
    /// The patch's red, green and blue planes, one after the other, row by row.
    pub rgb: Vec<f32>,
    /// Each patch pixel's place in the image; `None` where the view's map is degenerate.
    pub at: Vec<Option<Point>>,
    /// Whether each patch pixel has a place in the image (`at`) that none of `covers` holds.
    pub shown: Vec<bool>,
}

impl CutView {
    /// `view` of `image` cut as `cut` says, `covers` masking it.
    pub fn cut(image: &Mat, view: &[Point; 4], cut: CornerCut, covers: &[Polygon]) -> Result<CutView, RecognizeError> {
        let (h, w) = cut.patch;
        let plane = h * w;
        let mut rgb = vec![0.0; 3 * plane];
        classify::cut_corner_patch(image, view, cut, &mut rgb)?;
        let m = classify::corner_homography(view, cut).map(Homography);
        // Each patch pixel's place in the image, found once for every mask.
        let at: Vec<Option<Point>> =
            (0..plane).map(|i| m.and_then(|m| m.apply(Point::new((i % w) as f64, (i / w) as f64)))).collect();
        // Only the covers that reach the view's pixels are tested pixel by pixel (a table's other
        // cards mostly lie apart, and a cut has thousands of pixels).
        let reach = bounding_box(at.iter().flatten());
        let covers: Vec<&Polygon> = covers.iter().filter(|c| boxes_meet(reach, bounding_box(&c.0), 0.0)).collect();
        let shown = at.iter().map(|p| p.is_some_and(|p| !covers.iter().any(|c| c.contains(p)))).collect();
        Ok(CutView { rgb, at, shown })
    }
}

/// A quad's longer side, pixels.
fn long_side(quad: &Quad) -> f64 {
    (0..4).map(|k| quad[k].dist(quad[(k + 1) % 4])).fold(0.0, f64::max)
}

impl Comparison {
    /// The card outlined by `quad` cut from both ends ([`FaceView`]), the outlines `covers`
    /// masking it, and `others` (every other card) masking its colour.
    fn views(
        &self,
        image: &Mat,
        quad: &Quad,
        covers: &[Polygon],
        others: &[Polygon],
    ) -> Result<Vec<FaceView>, RecognizeError> {
        let (h, w) = self.cut.patch;
        let plane = h * w;
        let mut out = Vec::new();
        for view in classify::corner_quads(&order_quad(*quad)) {
            let CutView { rgb, at, shown } = CutView::cut(image, &view, self.cut, covers)?;
            let grey: Vec<f32> = (0..plane).map(|i| (rgb[i] + rgb[plane + i] + rgb[2 * plane + i]) / 3.0).collect();
            // Colour is compared only where no other card lies, whichever is on top, and away
            // from the rounded corners, where the felt shows: a coat's colour counts, not a
            // neighbour's or the cloth's.
            let inner = |i: usize| {
                let (x, y) = (i % w, i / w);
                x >= COLOUR_MARGIN && y >= COLOUR_MARGIN && x + COLOUR_MARGIN < w && y + COLOUR_MARGIN < h
            };
            let clear: Vec<bool> = (0..plane)
                .map(|i| self.colour && inner(i) && at[i].is_some_and(|p| !others.iter().any(|c| c.contains(p))))
                .collect();
            let chroma = if self.colour {
                paper_chroma(&rgb, &clear).map(|c| blur(&c, (h, w), self.blur_sigma))
            } else {
                [Vec::new(), Vec::new()]
            };
            out.push(FaceView { grey: blur(&grey, (h, w), self.blur_sigma), chroma, shown, clear });
        }
        Ok(out)
    }

    /// Whether two cut cards differ (`differing`); `None` when they cannot be compared.
    fn differs(&self, a: &[FaceView], b: &[FaceView]) -> Option<bool> {
        self.unmatched_share(a, b).map(|s| s >= self.differing)
    }

    /// The share of the comparable tiles of two cut cards that find no match in the other's
    /// views, the best way round; `None` below [`MIN_TILES`] comparable tiles every way.
    fn unmatched_share(&self, a: &[FaceView], b: &[FaceView]) -> Option<f64> {
        // (unmatched share, comparable tiles) of each pairing
        let mut found: Vec<(f64, usize)> = Vec::new();
        for va in a.iter().take(if self.either_way_up { 1 } else { a.len() }) {
            for vb in b {
                let (oy, ox) = self.alignment(va, vb);
                let mut scores = self.tile_matches(va, vb, (oy, ox));
                scores.extend(self.tile_matches(vb, va, (-oy, -ox)));
                if scores.len() < MIN_TILES {
                    continue;
                }
                let unmatched = scores.iter().filter(|&&s| s < self.tile_match).count();
                found.push((unmatched as f64 / scores.len() as f64, scores.len()));
            }
        }
        let most = if self.either_way_up { 0 } else { found.iter().map(|f| f.1).max().unwrap_or(0) };
        found.iter().filter(|f| 2 * f.1 >= most).map(|f| f.0).min_by(f64::total_cmp)
    }

    /// Whether two cut cards' colours differ ([`COLOUR_DIFFERING`]); `None` where fewer than
    /// [`MIN_COLOUR_TILES`] tiles show colour where no other card lies.
    fn colours_differ(&self, a: &[FaceView], b: &[FaceView]) -> Option<bool> {
        self.chroma_unmatched_share(a, b).map(|(s, _)| s >= COLOUR_DIFFERING)
    }

    /// The share of the tiles showing colour (in either cut) whose colour finds no match in the
    /// other's views within `shift`, the best way round, and how many such tiles; `None` below
    /// [`MIN_COLOUR_TILES`] of them.
    fn chroma_unmatched_share(&self, a: &[FaceView], b: &[FaceView]) -> Option<(f64, usize)> {
        let mut best: Option<(f64, usize)> = None;
        for va in a.iter().take(if self.either_way_up { 1 } else { a.len() }) {
            for vb in b {
                let mut d = self.chroma_tiles(va, vb);
                d.extend(self.chroma_tiles(vb, va));
                if d.len() < MIN_COLOUR_TILES {
                    continue;
                }
                let unmatched = d.iter().filter(|&&x| x > CHROMA_MATCH).count() as f64 / d.len() as f64;
                if best.map_or(true, |b| unmatched < b.0) {
                    best = Some((unmatched, d.len()));
                }
            }
        }
        best
    }

    /// For each tile of `a` shown whole and showing colour (its mean colour at least
    /// [`MIN_TILE_CHROMA`] from the paper's), the least distance of its mean colour from that of
    /// a window of `b` within `shift`. Means, not pixels: a dim camera's colour noise averages
    /// out over a tile, a coat's colour does not.
    fn chroma_tiles(&self, a: &FaceView, b: &FaceView) -> Vec<f32> {
        let (h, w, tile) = (self.cut.patch.0 as isize, self.cut.patch.1 as isize, self.tile as isize);
        let s = self.shift as isize;
        let mean = |v: &FaceView, x: isize, y: isize| -> Option<(f32, f32)> {
            if x < 0 || y < 0 || x + tile > w || y + tile > h {
                return None;
            }
            let (mut p, mut q) = (0.0, 0.0);
            for yy in y..y + tile {
                for xx in x..x + tile {
                    let i = (yy * w + xx) as usize;
                    if !v.clear[i] {
                        return None;
                    }
                    p += v.chroma[0][i];
                    q += v.chroma[1][i];
                }
            }
            let n = (tile * tile) as f32;
            Some((p / n, q / n))
        };
        let mut out = Vec::new();
        for (x, y) in self.tile_origins() {
            let (x, y) = (x as isize, y as isize);
            let Some((p, q)) = mean(a, x, y) else { continue };
            if p.hypot(q) < MIN_TILE_CHROMA {
                continue;
            }
            let least = (y - s..=y + s)
                .flat_map(|by| (x - s..=x + s).map(move |bx| (bx, by)))
                .filter_map(|(bx, by)| mean(b, bx, by))
                .map(|(u, v)| (p - u).hypot(q - v))
                .min_by(f32::total_cmp);
            out.extend(least);
        }
        out
    }

    /// The shift (rows, columns; within `align`) of `b` that lies best on `a`: the highest
    /// normalized cross-correlation over the pixels both show (at least a quarter of the cut).
    fn alignment(&self, a: &FaceView, b: &FaceView) -> (isize, isize) {
        let r = self.align as isize;
        if r == 0 {
            return (0, 0);
        }
        let (h, w) = (self.cut.patch.0 as isize, self.cut.patch.1 as isize);
        let least = (h * w / 4) as usize;
        let mut best = (f32::NEG_INFINITY, (0, 0));
        for dy in -r..=r {
            for dx in -r..=r {
                let mut pairs = Vec::new();
                for y in 0.max(-dy)..h.min(h - dy) {
                    for x in 0.max(-dx)..w.min(w - dx) {
                        let (i, j) = ((y * w + x) as usize, ((y + dy) * w + x + dx) as usize);
                        if a.shown[i] && b.shown[j] {
                            pairs.push((a.grey[i], b.grey[j]));
                        }
                    }
                }
                if pairs.len() < least {
                    continue;
                }
                let n = pairs.len() as f32;
                let (ma, mb) = pairs.iter().fold((0.0, 0.0), |(p, q), &(u, v)| (p + u / n, q + v / n));
                let (mut sab, mut saa, mut sbb) = (0.0f32, 0.0f32, 0.0f32);
                for &(u, v) in &pairs {
                    sab += (u - ma) * (v - mb);
                    saa += (u - ma) * (u - ma);
                    sbb += (v - mb) * (v - mb);
                }
                let r = sab / (saa * sbb).sqrt().max(1e-12);
                if r > best.0 {
                    best = (r, (dy, dx));
                }
            }
        }
        best.1
    }

    /// The tiles that show print in the views compared first (see `either_way_up`).
    fn print_tiles(&self, views: &[FaceView]) -> usize {
        let tiles = |v: &FaceView| self.tile_origins().filter(|&(x, y)| self.print_tile(v, x, y).is_some()).count();
        views.iter().take(if self.either_way_up { 1 } else { views.len() }).map(tiles).sum()
    }

    /// The tiles' top-left corners (patch pixels): every `step` pixels, `shift` in from the
    /// edges so that each may shift whole.
    fn tile_origins(&self) -> impl Iterator<Item = (usize, usize)> {
        let (h, w) = self.cut.patch;
        let (tile, step, shift) = (self.tile, self.step, self.shift);
        let ys = (shift..=h - tile - shift).step_by(step);
        ys.flat_map(move |y| (shift..=w - tile - shift).step_by(step).map(move |x| (x, y)))
    }

    /// The tile of `v` at (x, y) less its mean, where `v` shows it whole.
    fn window(&self, v: &FaceView, x: isize, y: isize) -> Option<Vec<f32>> {
        let (h, w, tile) = (self.cut.patch.0, self.cut.patch.1, self.tile);
        if x < 0 || y < 0 || x as usize + tile > w || y as usize + tile > h {
            return None;
        }
        let (x, y) = (x as usize, y as usize);
        let mut px = Vec::with_capacity(tile * tile);
        for yy in y..y + tile {
            for xx in x..x + tile {
                if !v.shown[yy * w + xx] {
                    return None;
                }
                px.push(v.grey[yy * w + xx]);
            }
        }
        let mean = px.iter().sum::<f32>() / (tile * tile) as f32;
        px.iter_mut().for_each(|p| *p -= mean);
        Some(px)
    }

    /// The tile of `v` at (x, y) where it shows print: whole, and not plain card.
    fn print_tile(&self, v: &FaceView, x: usize, y: usize) -> Option<Vec<f32>> {
        self.window(v, x as isize, y as isize).filter(|t| norm(t) / (self.tile as f32) >= MIN_TILE_STD)
    }

    /// For each tile of `a` that shows print (not plain card, not covered), its best normalized
    /// cross-correlation with `b` shifted by `(oy, ox)` and then within `shift` pixels, over
    /// windows `b` shows whole.
    fn tile_matches(&self, a: &FaceView, b: &FaceView, (oy, ox): (isize, isize)) -> Vec<f32> {
        let mut out = Vec::new();
        let s = self.shift as isize;
        for (x, y) in self.tile_origins() {
            let Some(ta) = self.print_tile(a, x, y) else { continue };
            let na = norm(&ta);
            let mut best: Option<f32> = None;
            let (x, y) = (x as isize + ox, y as isize + oy);
            for by in y - s..=y + s {
                for bx in x - s..=x + s {
                    let Some(tb) = self.window(b, bx, by) else { continue };
                    let nb = norm(&tb);
                    if nb < 1e-6 {
                        continue;
                    }
                    let r = ta.iter().zip(&tb).map(|(p, q)| p * q).sum::<f32>() / (na * nb);
                    best = Some(best.map_or(r, |v| v.max(r)));
                }
            }
            out.extend(best);
        }
        out
    }
}

/// The grown outlines of the cards of `quads` that may lie over card `card`: every other card,
/// less those it is seen to lie over ([`lies_over`]). A fan's cards each overlap both
/// neighbours; masked by both, a middle card kept no index corner to compare.
fn covers(image: &Mat, quads: &[Quad], card: usize) -> Vec<Polygon> {
    let grey = Grey::of(image);
    (0..quads.len())
        .filter(|&o| o != card)
        .filter(|&o| grey.as_ref().and_then(|g| lies_over(g, quads, card, o)) != Some(true))
        .map(|o| grown(&quads[o]))
        .collect()
}

/// Whether card `a` of `quads` is seen to lie over card `b` in `image` ([`lies_over`]): false
/// where they do not overlap, where it is unclear, or for an image that is not 8-bit BGR.
pub fn seen_over(image: &Mat, quads: &[Quad], a: usize, b: usize) -> bool {
    Grey::of(image).and_then(|g| lies_over(&g, quads, a, b)) == Some(true)
}

/// [`seen_over`] for the cards `quads` of one image, each pair measured once: a reading step
/// asks it of the same pairs again and again (each nudged outline, each corner).
pub fn seen_over_once<'a>(image: &'a Mat, quads: &'a [Quad]) -> impl Fn(usize, usize) -> bool + 'a {
    let known = std::cell::RefCell::new(std::collections::HashMap::new());
    move |a, b| {
        if let Some(&seen) = known.borrow().get(&(a, b)) {
            return seen;
        }
        let seen = seen_over(image, quads, a, b);
        known.borrow_mut().insert((a, b), seen);
        seen
    }
}

/// Where (pixels across a card's edge) the contrast across it is measured.
const EDGE_OFFSETS: [f64; 5] = [-2.0, -1.0, 0.0, 1.0, 2.0];
/// Points of an edge, at most one per pixel, needed to judge it.
const MIN_EDGE_POINTS: usize = 6;
/// A card lies over another when the contrast across its edges inside the other (lower quartile,
/// grey levels) exceeds the other's inside it by this factor and by [`MIN_EDGE_CONTRAST`]: the
/// upper card's edge shows, the lower card's is hidden under the upper card's print.
const OVER_RATIO: f64 = 2.0;
const MIN_EDGE_CONTRAST: f64 = 8.0;
/// Where only one card's edges can be measured inside the other: it lies over the other when
/// they show at least this contrast, under it when they show at most [`HIDDEN_EDGE_CONTRAST`].
/// On stud seed 7's 1080p hands an edge shown measured 35–83 grey levels, a hidden one 5–21.
const SOLE_EDGE_CONTRAST: f64 = 24.0;
const HIDDEN_EDGE_CONTRAST: f64 = 12.0;

/// Whether card `a` of `quads` lies over card `b` (`Some(false)`: `b` over `a`), judged by which
/// card's edges show inside the other; `None` where they do not overlap or it is unclear.
fn lies_over(grey: &Grey, quads: &[Quad], a: usize, b: usize) -> Option<bool> {
    let (ea, eb) = (edge_contrast(grey, quads, a, b), edge_contrast(grey, quads, b, a));
    // Where one card's edges cannot be measured inside the other (too few points inside it and
    // clear of third cards), the other's alone must show plainly, or be plainly hidden.
    let shows = |e: Option<f64>, o: Option<f64>| match (e, o) {
        (Some(e), Some(o)) => e >= OVER_RATIO * o && e - o >= MIN_EDGE_CONTRAST,
        (Some(e), None) => e >= SOLE_EDGE_CONTRAST,
        (None, Some(o)) => o <= HIDDEN_EDGE_CONTRAST,
        (None, None) => false,
    };
    if shows(ea, eb) {
        Some(true)
    } else if shows(eb, ea) {
        Some(false)
    } else {
        None
    }
}

/// Points of an edge closer than this (pixels) to a third card's edge are not measured: the
/// offsets across the edge and an outline measured a pixel or two off would take that edge's
/// contrast for this one's.
const EDGE_CLEARANCE: f64 = 5.0;

/// The lower-quartile contrast across card `a`'s edges where they run inside card `b` (its
/// outline shrunk, so that `b`'s own edges do not count) and clear of every other card's edges
/// ([`EDGE_CLEARANCE`]): in a hand fanned about half a card apart, the edge of the card under
/// `a` runs beside the edge of the card over `a` (stud seed 7, 1080p: both measured as shown).
/// Where a third card lies over both, both edges are hidden alike.
fn edge_contrast(grey: &Grey, quads: &[Quad], a: usize, b: usize) -> Option<f64> {
    let inside = shrunk(&quads[b], 3.0);
    let q = &quads[a];
    let mut contrasts = Vec::new();
    for k in 0..4 {
        let (p, r) = (q[k], q[(k + 1) % 4]);
        let len = p.dist(r);
        if len < 1.0 {
            continue;
        }
        // Only the third cards' edges whose boxes come within the clearance of this edge's box
        // can pass within it of one of its points: the rest are not measured point by point
        // (every pair of cards of a frame is judged so, twenty cards' edges at each point).
        let edge_box = bounding_box(&[p, r]);
        let near_edges: Vec<(Point, Point)> = quads
            .iter()
            .enumerate()
            .filter(|&(c, _)| c != a && c != b)
            .flat_map(|(_, quad)| (0..4).map(move |j| (quad[j], quad[(j + 1) % 4])))
            .filter(|&(s, e)| boxes_meet(edge_box, bounding_box(&[s, e]), EDGE_CLEARANCE))
            .collect();
        let beside_a_third = |at: Point| near_edges.iter().any(|&(s, e)| segment_distance(at, s, e) < EDGE_CLEARANCE);
        let (nx, ny) = ((r.y - p.y) / len, (p.x - r.x) / len);
        for s in 0..len as usize {
            let t = (s as f64 + 0.5) / len;
            let at = Point::new(p.x + t * (r.x - p.x), p.y + t * (r.y - p.y));
            if !inside.contains(at) || beside_a_third(at) {
                continue;
            }
            // The grey range across the edge: a card's edge is a step or a thin shadow line.
            let across: Option<Vec<f64>> =
                EDGE_OFFSETS.iter().map(|d| grey.at(Point::new(at.x + d * nx, at.y + d * ny))).collect();
            if let Some(g) = across {
                let (lo, hi) = g.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| (l.min(v), h.max(v)));
                contrasts.push(hi - lo);
            }
        }
    }
    if contrasts.len() < MIN_EDGE_POINTS {
        return None;
    }
    contrasts.sort_by(f64::total_cmp);
    Some(contrasts[contrasts.len() / 4])
}

/// The distance from `p` to the segment from `a` to `b`.
fn segment_distance(p: Point, a: Point, b: Point) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let len2 = dx * dx + dy * dy;
    let t = if len2 > 0.0 { (((p.x - a.x) * dx + (p.y - a.y) * dy) / len2).clamp(0.0, 1.0) } else { 0.0 };
    p.dist(Point::new(a.x + t * dx, a.y + t * dy))
}

/// A quad moved `by` pixels inwards about its centre (by scaling).
fn shrunk(quad: &Quad, by: f64) -> Polygon {
    let c = Point::mean(quad);
    let reach = quad.iter().map(|p| p.dist(c)).fold(f64::INFINITY, f64::min).max(1.0);
    let f = ((reach - by) / reach).max(0.0);
    Polygon(quad.iter().map(|p| Point { x: c.x + f * (p.x - c.x), y: c.y + f * (p.y - c.y) }).collect())
}

/// A frame's grey level (0–255) at any point, bilinear.
struct Grey<'a> {
    bytes: &'a [u8],
    rows: i32,
    cols: i32,
}

impl<'a> Grey<'a> {
    /// `None` for an image that is not continuous 8-bit BGR (then no card is seen over another).
    fn of(image: &'a Mat) -> Option<Grey<'a>> {
        use opencv::prelude::*;
        if image.typ() != opencv::core::CV_8UC3 || !image.is_continuous() {
            return None;
        }
        Some(Grey { bytes: image.data_bytes().ok()?, rows: image.rows(), cols: image.cols() })
    }

    fn at(&self, p: Point) -> Option<f64> {
        let (x0, y0) = (p.x.floor(), p.y.floor());
        if x0 < 0.0 || y0 < 0.0 || x0 + 1.0 >= f64::from(self.cols) || y0 + 1.0 >= f64::from(self.rows) {
            return None;
        }
        let (fx, fy) = (p.x - x0, p.y - y0);
        let px = |x: usize, y: usize| {
            let i = 3 * (y * self.cols as usize + x);
            (f64::from(self.bytes[i]) + f64::from(self.bytes[i + 1]) + f64::from(self.bytes[i + 2])) / 3.0
        };
        let (x, y) = (x0 as usize, y0 as usize);
        let top = px(x, y) * (1.0 - fx) + px(x + 1, y) * fx;
        let bottom = px(x, y + 1) * (1.0 - fx) + px(x + 1, y + 1) * fx;
        Some(top * (1.0 - fy) + bottom * fy)
    }
}

/// The card's paper: the level that this share of the shown pixels reaches.
const PAPER_QUANTILE: f64 = 0.9;

/// The paper's level among a cut's pixel `levels` (0..1): their [`PAPER_QUANTILE`], at least
/// 0.05; 1 where there are none.
pub(super) fn paper_level(mut levels: Vec<f32>) -> f32 {
    if levels.is_empty() {
        return 1.0;
    }
    let k = ((levels.len() - 1) as f64 * PAPER_QUANTILE) as usize;
    levels.select_nth_unstable_by(k, f32::total_cmp).1.max(0.05)
}

/// A cut's colour against its paper (`rgb`: three planes, 0–1): each channel divided by the
/// paper's level of it ([`PAPER_QUANTILE`] of the pixels `clear` holds), then red less green and
/// blue less the mean of red and green. Zero elsewhere.
fn paper_chroma(rgb: &[f32], clear: &[bool]) -> [Vec<f32>; 2] {
    let plane = clear.len();
    let paper: Vec<f32> =
        (0..3).map(|c| paper_level((0..plane).filter(|&i| clear[i]).map(|i| rgb[c * plane + i]).collect())).collect();
    let at = |c: usize, i: usize| rgb[c * plane + i] / paper[c];
    let rg = (0..plane).map(|i| if clear[i] { at(0, i) - at(1, i) } else { 0.0 }).collect();
    let by = (0..plane).map(|i| if clear[i] { at(2, i) - (at(0, i) + at(1, i)) / 2.0 } else { 0.0 }).collect();
    [rg, by]
}

fn grown(quad: &Quad) -> Polygon {
    let c = Point::mean(quad);
    Polygon(
        quad.iter()
            .map(|p| Point { x: c.x + COVER_GROWTH * (p.x - c.x), y: c.y + COVER_GROWTH * (p.y - c.y) })
            .collect(),
    )
}

fn norm(px: &[f32]) -> f32 {
    px.iter().map(|p| p * p).sum::<f32>().sqrt()
}

/// A separable Gaussian blur, edges replicated.
pub(super) fn blur(img: &[f32], (h, w): (usize, usize), sigma: f32) -> Vec<f32> {
    let r = (4.0 * sigma).round() as isize;
    let k: Vec<f32> = (-r..=r).map(|d| (-(d * d) as f32 / (2.0 * sigma * sigma)).exp()).collect();
    let sum: f32 = k.iter().sum();
    let k: Vec<f32> = k.iter().map(|v| v / sum).collect();
    let pass = |src: &[f32], horizontal: bool| -> Vec<f32> {
        let mut out = vec![0.0; src.len()];
        for y in 0..h {
            for x in 0..w {
                let mut acc = 0.0;
                for (t, kv) in k.iter().enumerate() {
                    let d = t as isize - r;
                    let (sx, sy) = if horizontal {
                        ((x as isize + d).clamp(0, w as isize - 1) as usize, y)
                    } else {
                        (x, (y as isize + d).clamp(0, h as isize - 1) as usize)
                    };
                    acc += kv * src[sy * w + sx];
                }
                out[y * w + x] = acc;
            }
        }
        out
    };
    pass(&pass(img, true), false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::geometry::box_quad;
    use crate::recognize::Source;
    use opencv::core::{self, Rect, Scalar};
    use opencv::imgproc;
    use opencv::prelude::*;

    const W: i32 = 50;
    const H: i32 = 75;

    /// How a card's large pips are printed.
    #[derive(Clone, Copy, PartialEq)]
    enum Pip {
        Plain,
        /// The middle pip inside a ring, as kde-gm-paris prints its A♣ (an unseen design whose
        /// A♣ the classifiers read as A♠).
        Ringed,
        /// Another rank in the index (a bar across, where the others print one upright), as an
        /// 8 read as a 10.
        OtherIndex,
        /// A court's picture: a coat in this colour (B, G, R) over the middle pips, as
        /// kde-dondorf prints one king's picture in each suit's own colours.
        Coat([f64; 3]),
        /// The large pips pointed at top and bottom where the others are round, in the same
        /// places and of about the same ink: a spade's outline against a club's.
        Pointed,
    }

    /// Two coats of one grey level (the mean of B, G and R) in other colours.
    const RED_COAT: [f64; 3] = [40.0, 60.0, 200.0];
    const BLUE_COAT: [f64; 3] = [200.0, 60.0, 40.0];

    /// A white card with its top-left corner at (x, y), its edge a grey line (a card's shadow on
    /// what lies under it): an index (a rank bar and a small pip) and three large pips down its
    /// middle.
    fn draw_card(img: &mut Mat, x: i32, y: i32, pip: Pip) {
        let black = Scalar::all(20.0);
        imgproc::rectangle(img, Rect::new(x, y, W, H), Scalar::all(245.0), -1, imgproc::LINE_8, 0).unwrap();
        imgproc::rectangle(img, Rect::new(x, y, W, H), Scalar::all(150.0), 1, imgproc::LINE_8, 0).unwrap();
        let rank = if pip == Pip::OtherIndex { Rect::new(x + 2, y + 7, 8, 4) } else { Rect::new(x + 4, y + 4, 4, 10) };
        imgproc::rectangle(img, rank, black, -1, imgproc::LINE_8, 0).unwrap();
        imgproc::circle(img, core::Point::new(x + 6, y + 18), 2, black, -1, imgproc::LINE_8, 0).unwrap();
        for cy in [18, 37, 56] {
            let (cx, cy) = (x + 25, y + cy);
            if pip == Pip::Pointed {
                let outline = [(0, -7), (6, 0), (0, 7), (-6, 0)].map(|(dx, dy)| core::Point::new(cx + dx, cy + dy));
                let outline = core::Vector::<core::Point>::from_slice(&outline);
                imgproc::fill_convex_poly(img, &outline, black, imgproc::LINE_8, 0).unwrap();
            } else {
                imgproc::circle(img, core::Point::new(cx, cy), 6, black, -1, imgproc::LINE_8, 0).unwrap();
            }
        }
        if pip == Pip::Ringed {
            imgproc::circle(img, core::Point::new(x + 25, y + 37), 13, black, 2, imgproc::LINE_8, 0).unwrap();
        }
        if let Pip::Coat([b, g, r]) = pip {
            let coat = Scalar::new(b, g, r, 0.0);
            imgproc::rectangle(img, Rect::new(x + 13, y + 22, 24, 32), coat, -1, imgproc::LINE_8, 0).unwrap();
            imgproc::rectangle(img, Rect::new(x + 17, y + 30, 16, 6), black, -1, imgproc::LINE_8, 0).unwrap();
        }
    }

    /// Grain of ±12 grey levels, the same every run.
    fn add_grain(img: &mut Mat) {
        let mut state = 12345u32;
        for b in img.data_bytes_mut().unwrap() {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            *b = (i32::from(*b) + (state >> 24) as i32 % 25 - 12).clamp(0, 255) as u8;
        }
    }

    fn card_at(x: i32, y: i32, card: CardIdentity) -> DetectedCard {
        DetectedCard {
            card,
            confidence: 0.9995,
            face_up: card != CardIdentity::Back,
            quad: box_quad([f64::from(x), f64::from(y), f64::from(x + W), f64::from(y + H)]),
            index_boxes: vec![],
            source: Source::Card,
            reading: card.card(),
            rank: None,
            twin: TwinPrint::Alone,
        }
    }

    /// A felt with cards drawn at (x, y) as `pip` says.
    fn felt_with(cards: &[(i32, i32, Pip)]) -> Mat {
        let mut img =
            Mat::new_rows_cols_with_default(240, 360, core::CV_8UC3, Scalar::new(40.0, 110.0, 30.0, 0.0)).unwrap();
        for &(x, y, pip) in cards {
            draw_card(&mut img, x, y, pip);
        }
        img
    }

    /// Two aces of spades, a lone king, and (optionally) a back covering most of the second ace;
    /// the second ace printed with `pip`.
    fn frame_with_twins(pip: Pip, covered: bool) -> Vec<DetectedCard> {
        let mut img = felt_with(&[(40, 60, Pip::Plain), (201, 83, pip), (120, 140, Pip::Ringed)]);
        let ace = CardIdentity::Card("AS".parse().unwrap());
        let mut cards = vec![
            card_at(40, 60, ace),
            card_at(201, 83, ace),
            card_at(120, 140, CardIdentity::Card("KS".parse().unwrap())),
        ];
        if covered {
            imgproc::rectangle(&mut img, Rect::new(196, 78, W, H), Scalar::all(90.0), -1, imgproc::LINE_8, 0).unwrap();
            cards.push(card_at(196, 78, CardIdentity::Back));
        }
        add_grain(&mut img);
        compare_twins(&img, &mut cards).unwrap();
        cards
    }

    #[test]
    fn two_cards_read_as_one_face_are_told_apart_by_their_prints() {
        let twins = |cards: &[DetectedCard]| cards.iter().map(|c| c.twin).collect::<Vec<_>>();
        use TwinPrint::*;
        assert_eq!(twins(&frame_with_twins(Pip::Plain, false)), vec![Same, Same, Alone]);
        assert_eq!(twins(&frame_with_twins(Pip::Ringed, false)), vec![Differs, Differs, Alone]);
        assert_eq!(twins(&frame_with_twins(Pip::Plain, true)), vec![Hidden, Hidden, Alone, Alone]);
    }

    #[test]
    fn a_court_printed_in_another_suits_colours_differs_where_its_grey_print_is_the_same() {
        let king = CardIdentity::Card("KS".parse().unwrap());
        let findings = |second: Pip| {
            let mut img = felt_with(&[(40, 60, Pip::Coat(RED_COAT)), (201, 83, second)]);
            add_grain(&mut img);
            let mut cards = vec![card_at(40, 60, king), card_at(201, 83, king)];
            let quads: Vec<Quad> = cards.iter().map(|c| c.quad).collect();
            let (a, b) = (Print::cut(&img, &quads, 0).unwrap(), Print::cut(&img, &quads, 1).unwrap());
            let grey = WHOLE_FACE.differs(&a.face, &b.face);
            compare_twins(&img, &mut cards).unwrap();
            (grey, cards[0].twin, cards[1].twin)
        };
        use TwinPrint::*;
        // The grey prints alone are one print: only the colours tell the two kings apart.
        assert_eq!(findings(Pip::Coat(BLUE_COAT)), (Some(false), Differs, Differs));
        assert_eq!(findings(Pip::Coat(RED_COAT)), (Some(false), Same, Same));
    }

    #[test]
    fn pips_of_another_outline_differ_where_the_prints_match_tile_by_tile() {
        let five = CardIdentity::Card("5S".parse().unwrap());
        let findings = |second: Pip| {
            let mut img = felt_with(&[(40, 60, Pip::Plain), (201, 83, second)]);
            add_grain(&mut img);
            let mut cards = vec![card_at(40, 60, five), card_at(201, 83, five)];
            let quads: Vec<Quad> = cards.iter().map(|c| c.quad).collect();
            let (a, b) = (Print::cut(&img, &quads, 0).unwrap(), Print::cut(&img, &quads, 1).unwrap());
            let tiles = WHOLE_FACE.differs(&a.face, &b.face);
            let pips = (a.pips.count(), b.pips.count(), a.pips.differ(&b.pips));
            compare_twins(&img, &mut cards).unwrap();
            (tiles, pips, cards[1].twin)
        };
        use TwinPrint::*;
        // Tile by tile the round and the pointed pips match (each tile may shift to find its
        // match): only the pips' own outlines tell the two cards apart.
        assert_eq!(findings(Pip::Pointed), (Some(false), (3, 3, Some(true)), Differs));
        assert_eq!(findings(Pip::Plain), (Some(false), (3, 3, Some(false)), Same));
    }

    #[test]
    fn pips_partly_under_the_next_card_are_still_compared() {
        // A fan's first card: the next card's edge (a back) lies a pixel or two over its pips'
        // right side, as on Fortune 2025 seed 13's 3♠ read as 3♣ (round 7).
        let five = CardIdentity::Card("5S".parse().unwrap());
        let findings = |second: Pip| {
            let mut img = felt_with(&[(40, 60, Pip::Plain), (201, 83, second)]);
            imgproc::rectangle(&mut img, Rect::new(232, 83, W, H), Scalar::all(90.0), -1, imgproc::LINE_8, 0).unwrap();
            add_grain(&mut img);
            let cards = [card_at(40, 60, five), card_at(201, 83, five), card_at(232, 83, CardIdentity::Back)];
            let quads: Vec<Quad> = cards.iter().map(|c| c.quad).collect();
            let (a, b) = (Print::cut(&img, &quads, 0).unwrap(), Print::cut(&img, &quads, 1).unwrap());
            (a.pips.count(), b.pips.count(), a.pips.differ(&b.pips))
        };
        assert_eq!(findings(Pip::Pointed), (3, 3, Some(true)));
        assert_eq!(findings(Pip::Plain), (3, 3, Some(false)));
    }

    #[test]
    fn colour_is_compared_only_where_no_other_card_lies() {
        // The second king's coat is hidden under a blue back, whose colour would differ from the
        // first king's coat: the back is another card, so its colour is not the king's print.
        let king = CardIdentity::Card("KS".parse().unwrap());
        let mut img = felt_with(&[(40, 60, Pip::Coat(RED_COAT)), (201, 83, Pip::Coat(RED_COAT))]);
        imgproc::rectangle(
            &mut img,
            Rect::new(210, 100, W, H),
            Scalar::new(160.0, 60.0, 30.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        add_grain(&mut img);
        let cards = [card_at(40, 60, king), card_at(201, 83, king), card_at(210, 100, CardIdentity::Back)];
        let quads: Vec<Quad> = cards.iter().map(|c| c.quad).collect();
        let (a, b) = (Print::cut(&img, &quads, 0).unwrap(), Print::cut(&img, &quads, 1).unwrap());
        assert_ne!(WHOLE_FACE.colours_differ(&a.face, &b.face), Some(true));
        // Without the back's outline the blue counts as the king's, and the colours differ.
        let (a, b) = (Print::cut(&img, &quads[..2], 0).unwrap(), Print::cut(&img, &quads[..2], 1).unwrap());
        assert_eq!(WHOLE_FACE.colours_differ(&a.face, &b.face), Some(true));
    }

    /// The ace of spades lies at one place for five frames and is gone; then a card at another
    /// place, printed with `pip`, is read as the ace for five frames. The second card's twin
    /// findings, frame by frame.
    fn ace_read_again_elsewhere(pip: Pip, round_between: bool) -> Vec<TwinPrint> {
        let ace = CardIdentity::Card("AS".parse().unwrap());
        let king = CardIdentity::Card("KS".parse().unwrap());
        let mut book = PrintBook::new();
        let mut frame = 0;
        let mut sight = |book: &mut PrintBook, drawn: &[(i32, i32, Pip)], cards: &mut [DetectedCard]| {
            let mut img = felt_with(drawn);
            add_grain(&mut img);
            frame += 1;
            book.sight(&img, frame, cards).unwrap();
        };
        for _ in 0..5 {
            let mut cards = vec![card_at(40, 60, ace), card_at(120, 140, king)];
            sight(&mut book, &[(40, 60, Pip::Plain), (120, 140, Pip::Ringed)], &mut cards);
            assert!(cards.iter().all(|c| c.twin == TwinPrint::Alone));
        }
        if round_between {
            book.clear();
        }
        (0..5)
            .map(|_| {
                let mut cards = vec![card_at(201, 83, ace), card_at(120, 140, king)];
                sight(&mut book, &[(201, 83, pip), (120, 140, Pip::Ringed)], &mut cards);
                assert_eq!(cards[1].twin, TwinPrint::Alone);
                cards[0].twin
            })
            .collect()
    }

    #[test]
    fn a_card_read_as_a_face_a_gone_card_showed_is_compared_with_its_print() {
        use TwinPrint::*;
        // from its first read on, before a tracker could confirm it
        assert_eq!(ace_read_again_elsewhere(Pip::Ringed, false), vec![Differs; 5]);
        // the same print at a new place: the ace moved, or a real second copy
        assert_eq!(ace_read_again_elsewhere(Pip::Plain, false), vec![Alone; 5]);
        // a new round may bring a new deck
        assert_eq!(ace_read_again_elsewhere(Pip::Ringed, true), vec![Alone; 5]);
    }

    #[test]
    fn a_number_card_first_seen_with_its_pips_covered_is_cut_again_once_they_show() {
        // A 5♠ lies still; a second card read as 5♠, its pips pointed, lies still beside it with
        // a back over most of it for its first two frames.
        let five = CardIdentity::Card("5S".parse().unwrap());
        let mut book = PrintBook::new();
        let found: Vec<TwinPrint> = (1..=6)
            .map(|frame| {
                let covered = frame <= 2;
                let mut img = felt_with(&[(40, 60, Pip::Plain), (201, 83, Pip::Pointed)]);
                let mut cards = vec![card_at(40, 60, five), card_at(201, 83, five)];
                if covered {
                    imgproc::rectangle(&mut img, Rect::new(196, 78, W, H), Scalar::all(90.0), -1, imgproc::LINE_8, 0)
                        .unwrap();
                    cards.push(card_at(196, 78, CardIdentity::Back));
                }
                add_grain(&mut img);
                book.sight(&img, frame, &mut cards).unwrap();
                cards[1].twin
            })
            .collect();
        use TwinPrint::*;
        // Its first print shows no pip: no verdict against the other 5♠. Cut again two frames on
        // (not only after the 15 frames of a card that shows its pips), it differs at once.
        assert_eq!(found, vec![Alone, Alone, Differs, Differs, Differs, Differs]);
    }

    #[test]
    fn a_round_notes_a_bounded_number_of_places() {
        let mut book = PrintBook::new();
        let img = felt_with(&[]);
        let mut frame = 0;
        for face in Card::all() {
            for k in 0..5 {
                frame += 1;
                let mut cards = vec![card_at(10 + 60 * k, 60, CardIdentity::Card(face))];
                book.sight(&img, frame, &mut cards).unwrap();
            }
        }
        assert_eq!(book.sightings.len(), MAX_SIGHTINGS);
        book.clear();
        assert!(book.sightings.is_empty());
    }

    /// A fan of three cards dealt left to right `step` pixels apart, each over the last, the
    /// middle one printed with `pip`; and a lone card at (40, 60). Their quads, fan first.
    fn fan_and_lone_card(pip: Pip, step: i32) -> (Mat, Vec<Quad>) {
        let mut img = felt_with(&[(40, 60, Pip::Plain)]);
        for (k, p) in [Pip::Ringed, pip, Pip::Ringed].into_iter().enumerate() {
            draw_card(&mut img, 200 + step * k as i32, 60, p);
        }
        add_grain(&mut img);
        let quads = [200, 200 + step, 200 + 2 * step, 40].map(|x| card_at(x, 60, CardIdentity::Back).quad);
        (img, quads.to_vec())
    }

    #[test]
    fn a_card_is_seen_over_another_where_its_edge_shows() {
        let (img, quads) = fan_and_lone_card(Pip::Plain, 18);
        let grey = Grey::of(&img).unwrap();
        assert_eq!(lies_over(&grey, &quads, 1, 0), Some(true));
        assert_eq!(lies_over(&grey, &quads, 0, 1), Some(false));
        assert_eq!(lies_over(&grey, &quads, 1, 2), Some(false));
        // cards that do not overlap say nothing
        assert_eq!(lies_over(&grey, &quads, 1, 3), None);
    }

    #[test]
    fn a_pair_measured_once_answers_as_measured_each_time() {
        let (img, quads) = fan_and_lone_card(Pip::Plain, 18);
        let over = seen_over_once(&img, &quads);
        for _ in 0..2 {
            for (a, b) in [(1, 0), (0, 1), (1, 2), (2, 1), (1, 3)] {
                assert_eq!(over(a, b), seen_over(&img, &quads, a, b), "({a}, {b})");
            }
        }
        assert!(over(1, 0) && !over(0, 1));
    }

    #[test]
    fn a_hidden_edge_beside_a_third_cards_edge_is_not_taken_for_a_shown_one() {
        // Fanned about half a card apart (stud seed 7's hands at 1080p): the first card's edge
        // hidden under the second runs 2 px from the third card's edge, which shows.
        let (img, quads) = fan_and_lone_card(Pip::Plain, 24);
        let grey = Grey::of(&img).unwrap();
        assert_eq!(lies_over(&grey, &quads, 1, 0), Some(true));
        assert_eq!(lies_over(&grey, &quads, 1, 2), Some(false));
    }

    #[test]
    fn a_fans_middle_card_is_compared_by_the_index_it_shows() {
        // The middle card shows a strip with its index: the card under it masks nothing, and
        // its face shows too little, so its index corners are compared.
        let (img, quads) = fan_and_lone_card(Pip::Plain, 10);
        let (a, b) = (Print::cut(&img, &quads, 1).unwrap(), Print::cut(&img, &quads, 3).unwrap());
        assert_eq!(WHOLE_FACE.unmatched_share(&a.face, &b.face), None);
        assert_eq!(prints_differ(&img, &quads, 1, 3).unwrap(), Some(false), "a second copy");
        let (img, quads) = fan_and_lone_card(Pip::OtherIndex, 10);
        assert_eq!(prints_differ(&img, &quads, 1, 3).unwrap(), Some(true), "another index");
        // A wider strip shows enough of the face, which is compared as before.
        let (img, quads) = fan_and_lone_card(Pip::OtherIndex, 18);
        let (a, b) = (Print::cut(&img, &quads, 1).unwrap(), Print::cut(&img, &quads, 3).unwrap());
        assert!(WHOLE_FACE.unmatched_share(&a.face, &b.face).is_some_and(|s| s >= DIFFERING_SHARE));
    }

    #[test]
    fn index_corners_outlined_a_little_off_are_aligned_before_their_tiles_are_matched() {
        // Two copies of a card, the second outlined 3 px right and 2 px down of where it lies
        // (as a card under its hand's other cards is measured): aligned as a whole first, their
        // index corners match; tiles left to find their own match within their shift do not all.
        let mut img = felt_with(&[(40, 60, Pip::Plain), (200, 60, Pip::Plain)]);
        add_grain(&mut img);
        let mut quads = vec![card_at(40, 60, CardIdentity::Back).quad, card_at(203, 62, CardIdentity::Back).quad];
        let (a, b) = (Print::cut(&img, &quads, 0).unwrap(), Print::cut(&img, &quads, 1).unwrap());
        let aligned = INDEX_CORNERS.unmatched_share(&a.index, &b.index).unwrap();
        assert!(aligned < INDEX_CORNERS.differing, "aligned: {aligned}");
        let unaligned = Comparison { align: 0, ..INDEX_CORNERS }.unmatched_share(&a.index, &b.index).unwrap();
        assert!(unaligned > aligned, "unaligned {unaligned}, aligned {aligned}");
        // another rank's index still differs once aligned
        let mut img = felt_with(&[(40, 60, Pip::Plain), (200, 60, Pip::OtherIndex)]);
        add_grain(&mut img);
        quads[1] = card_at(203, 62, CardIdentity::Back).quad;
        assert_eq!(prints_differ(&img, &quads, 0, 1).unwrap(), Some(true));
    }
}
