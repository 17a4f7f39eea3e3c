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
//! whole strips of a true twin unmatched (docs/pipeline.md, "Twin prints").
//!
//! [`PrintBook`] carries the comparison across frames for the table logic: a round's faces at
//! each place they were read.
use std::collections::BTreeMap;

use opencv::core::Mat;

use super::{DetectedCard, RecognizeError};
use crate::calib::{Point, Polygon};
use crate::classify::{self, CardIdentity, CornerCut};
use crate::locate::{order_quad, Quad};
use crate::rules::Card;

/// The face cut compared: the whole card upright, sampled a little finer than a 1080p camera
/// shows a card over the table (~75 px long).
const CUT: CornerCut = CornerCut { patch: (96, 60), region: (1.0, 1.0) };
/// Each other card's outline is grown by this share about its centre before it masks a face:
/// a card lying over another shades a pixel or two beyond its quad.
const COVER_GROWTH: f64 = 1.06;
/// Tile side and step, patch pixels.
const TILE: usize = 12;
const TILE_STEP: usize = 6;
/// How far (patch pixels) a tile may shift to find its match.
const SHIFT: usize = 4;
/// A tile whose grey level varies less than this (0..1 scale) is plain card and not compared.
const MIN_TILE_STD: f32 = 0.06;
/// Pixel noise is smoothed first (Gaussian σ, patch pixels).
const BLUR_SIGMA: f32 = 0.7;
/// A tile matches when its best normalized cross-correlation reaches this.
const TILE_MATCH: f32 = 0.7;
/// Fewer comparable tiles than this (a face mostly covered) compare nothing.
const MIN_TILES: usize = 4;
/// Two prints differ when at least this share of their comparable tiles find no match. On
/// 1080p simulator sessions, true twins (the duplicate-card scenarios of stud seeds 7 and 8 and
/// Fortune seed 7, 62 frame pairs) left at most 0.10 unmatched; misread twins (Fortune seed 11,
/// kde-gm-paris: A♣ read as A♠, 3♦ as 3♥) left 0.20–1.00, 0.42 in the median frame.
pub const DIFFERING_SHARE: f64 = 0.16;

/// A card's whole face upright from one end, grey and smoothed, with the pixels no other card of
/// the frame covers.
struct FaceView {
    grey: Vec<f32>,
    shown: Vec<bool>,
}

/// The share of the comparable tiles of cards `i` and `j` of `quads` that find no match in the
/// other card's face, with the faces laid either way up against each other (the way that
/// matches best counts). `None` when the faces show too little in common to compare.
pub fn differing_share(image: &Mat, quads: &[Quad], i: usize, j: usize) -> Result<Option<f64>, RecognizeError> {
    let a = face_views(image, quads, i)?;
    let b = face_views(image, quads, j)?;
    Ok(unmatched_share(&a, &b))
}

/// [`differing_share`] of two cut faces: `a` upright against each view of `b`.
fn unmatched_share(a: &[FaceView], b: &[FaceView]) -> Option<f64> {
    let mut best: Option<f64> = None;
    for vb in b {
        let mut scores = tile_matches(&a[0], vb);
        scores.extend(tile_matches(vb, &a[0]));
        if scores.len() < MIN_TILES {
            continue;
        }
        let unmatched = scores.iter().filter(|&&s| s < TILE_MATCH).count() as f64 / scores.len() as f64;
        best = Some(best.map_or(unmatched, |b: f64| b.min(unmatched)));
    }
    best
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
        let share = differing_share(image, &quads, i, j)?;
        let found = match share {
            None => TwinPrint::Hidden,
            Some(s) if s >= DIFFERING_SHARE => TwinPrint::Differs,
            Some(_) => TwinPrint::Same,
        };
        if debug {
            let (a, b) = (Point::mean(&quads[i]), Point::mean(&quads[j]));
            eprintln!(
                "twins: {} at ({:.0}, {:.0}) and ({:.0}, {:.0}): unmatched {share:.2?} -> {found:?}",
                cards[i].card.code(),
                a.x,
                a.y,
                b.x,
                b.y
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
/// Frames between two cuts of one sighting's print; a cut that shows more print tiles replaces
/// the kept one.
const RECUT_FRAMES: u64 = 15;
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
    views: Vec<FaceView>,
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
        // the tracker's votes confirm it, or its duplicate is flagged on confirmation.
        let due = match &s.print {
            None => true,
            Some(p) => s.spot.is_still() && frame >= p.frame + RECUT_FRAMES,
        };
        if !due {
            return Ok(false);
        }
        let views = face_views(image, quads, i)?;
        let tiles = tile_origins().filter(|&(x, y)| print_tile(&views[0], x, y).is_some()).count();
        let s = &mut self.sightings[k];
        let better = s.print.as_ref().map_or(true, |p| tiles > p.tiles);
        match &mut s.print {
            Some(p) if !better => p.frame = frame,
            _ => s.print = Some(KeptPrint { views, tiles, frame }),
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
            let share = unmatched_share(&a.views, &b.views);
            if debug {
                eprintln!(
                    "prints: {} at ({:.0}, {:.0}) and ({:.0}, {:.0}): unmatched {share:.2?}",
                    s.card, s.spot.at.x, s.spot.at.y, t.spot.at.x, t.spot.at.y
                );
            }
            // Hidden (no share) keeps what the last comparison found.
            if let Some(v) = share {
                self.differing.insert((k.min(o), k.max(o)), v >= DIFFERING_SHARE);
            }
        }
    }

    /// Whether sighting `k`'s latest print differs from another sighting's.
    fn differs(&self, k: usize) -> bool {
        self.differing.iter().any(|(&(a, b), &d)| d && (a == k || b == k))
    }
}

/// A quad's longer side, pixels.
fn long_side(quad: &Quad) -> f64 {
    (0..4).map(|k| quad[k].dist(quad[(k + 1) % 4])).fold(0.0, f64::max)
}

/// Card `card` of `quads` cut from both ends ([`FaceView`]), every other card's grown outline
/// masking it.
fn face_views(image: &Mat, quads: &[Quad], card: usize) -> Result<Vec<FaceView>, RecognizeError> {
    let covers: Vec<Polygon> = quads.iter().enumerate().filter(|&(o, _)| o != card).map(|(_, q)| grown(q)).collect();
    let quad = &quads[card];
    let (h, w) = CUT.patch;
    let plane = h * w;
    let mut out = Vec::new();
    for view in classify::corner_quads(&order_quad(*quad)) {
        let mut rgb = vec![0.0; 3 * plane];
        classify::cut_corner_patch(image, &view, CUT, &mut rgb)?;
        let grey: Vec<f32> = (0..plane).map(|i| (rgb[i] + rgb[plane + i] + rgb[2 * plane + i]) / 3.0).collect();
        let m = classify::corner_homography(&view, CUT);
        let shown = (0..plane)
            .map(|i| {
                let Some(m) = m else { return false };
                let (x, y) = ((i % w) as f64, (i / w) as f64);
                let z = m[2][0] * x + m[2][1] * y + m[2][2];
                let p = Point {
                    x: (m[0][0] * x + m[0][1] * y + m[0][2]) / z,
                    y: (m[1][0] * x + m[1][1] * y + m[1][2]) / z,
                };
                !covers.iter().any(|c| c.contains(p))
            })
            .collect();
        out.push(FaceView { grey: blur(&grey, (h, w), BLUR_SIGMA), shown });
    }
    Ok(out)
}

fn grown(quad: &Quad) -> Polygon {
    let c = Point::mean(quad);
    Polygon(
        quad.iter()
            .map(|p| Point { x: c.x + COVER_GROWTH * (p.x - c.x), y: c.y + COVER_GROWTH * (p.y - c.y) })
            .collect(),
    )
}

/// A separable Gaussian blur, edges replicated.
fn blur(img: &[f32], (h, w): (usize, usize), sigma: f32) -> Vec<f32> {
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

/// The tiles' top-left corners (patch pixels): every [`TILE_STEP`] pixels, [`SHIFT`] in from the
/// edges so that each may shift whole.
fn tile_origins() -> impl Iterator<Item = (usize, usize)> {
    let (h, w) = CUT.patch;
    let ys = (SHIFT..=h - TILE - SHIFT).step_by(TILE_STEP);
    ys.flat_map(move |y| (SHIFT..=w - TILE - SHIFT).step_by(TILE_STEP).map(move |x| (x, y)))
}

/// The tile of `v` at (x, y) less its mean, where `v` shows it whole.
fn window(v: &FaceView, x: usize, y: usize) -> Option<Vec<f32>> {
    let w = CUT.patch.1;
    let mut px = Vec::with_capacity(TILE * TILE);
    for yy in y..y + TILE {
        for xx in x..x + TILE {
            if !v.shown[yy * w + xx] {
                return None;
            }
            px.push(v.grey[yy * w + xx]);
        }
    }
    let mean = px.iter().sum::<f32>() / (TILE * TILE) as f32;
    px.iter_mut().for_each(|p| *p -= mean);
    Some(px)
}

fn norm(px: &[f32]) -> f32 {
    px.iter().map(|p| p * p).sum::<f32>().sqrt()
}

/// The tile of `v` at (x, y) where it shows print: whole, and not plain card.
fn print_tile(v: &FaceView, x: usize, y: usize) -> Option<Vec<f32>> {
    window(v, x, y).filter(|t| norm(t) / ((TILE * TILE) as f32).sqrt() >= MIN_TILE_STD)
}

/// For each tile of `a` that shows print (not plain card, not covered), its best normalized
/// cross-correlation with `b` within [`SHIFT`] pixels, over windows `b` shows whole.
fn tile_matches(a: &FaceView, b: &FaceView) -> Vec<f32> {
    let mut out = Vec::new();
    for (x, y) in tile_origins() {
        let Some(ta) = print_tile(a, x, y) else { continue };
        let na = norm(&ta);
        let mut best: Option<f32> = None;
        for by in y - SHIFT..=y + SHIFT {
            for bx in x - SHIFT..=x + SHIFT {
                let Some(tb) = window(b, bx, by) else { continue };
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
    }

    /// A white card with its top-left corner at (x, y): an index (a rank bar and a small pip)
    /// and three large pips down its middle.
    fn draw_card(img: &mut Mat, x: i32, y: i32, pip: Pip) {
        let black = Scalar::all(20.0);
        imgproc::rectangle(img, Rect::new(x, y, W, H), Scalar::all(245.0), -1, imgproc::LINE_8, 0).unwrap();
        imgproc::rectangle(img, Rect::new(x + 4, y + 4, 4, 10), black, -1, imgproc::LINE_8, 0).unwrap();
        for (cx, cy, r) in [(6, 18, 2), (25, 18, 6), (25, 37, 6), (25, 56, 6)] {
            imgproc::circle(img, core::Point::new(x + cx, y + cy), r, black, -1, imgproc::LINE_8, 0).unwrap();
        }
        if pip == Pip::Ringed {
            imgproc::circle(img, core::Point::new(x + 25, y + 37), 13, black, 2, imgproc::LINE_8, 0).unwrap();
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
}
