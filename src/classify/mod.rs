//! The card classifier: which card a located card's printed index corner shows.
//!
//! Two contract versions, told apart by the model's metadata and checked at load
//! ([`Classifier::load`]):
//! - **v2, card corners** (`tablecam.version` = `2`, `tablecam.patch_kind` = `card_corner`,
//!   `tablecam.patch` = `48x32`, `tablecam.corner` = `0.32,0.46`): input `patch` float32
//!   `[N, 3, 48, 32]`, the corner of a located card cut **upright in the card's own frame**
//!   ([`corner_quads`], [`cut_corner_patch`]). A card's rectangle fixes its orientation up to a
//!   half turn, and a standard card's two index corners both read upright from their own end, so
//!   the network never sees a rotated print.
//! - **v2, index glyphs** (`tablecam.patch_kind` = `index_glyphs`, `tablecam.patch` = `48x32`,
//!   `tablecam.corner` = `1,1`): the same input, the whole glyph view of an index found as a rank
//!   glyph over a suit glyph (`locate::glyphs::IndexProposal::glyph_quad`), rank up, light ink
//!   inverted to dark ([`invert_patch`]). Read on uncalibrated photos, where an index is often
//!   all of a card that shows (fans, piles), and its card's size and layout are unknown.
//! - **v1, index boxes** (`tablecam.version` = `1`, `tablecam.patch` = `40`): input `patch`
//!   `[N, 3, 40, 40]`, the axis-aligned square around an index box ([`patch_rect`],
//!   [`cut_patch`]), any rotation. It needs no card rectangle, which is why it is kept.
//!
//! Both: output `probs` float32 `[N, 54]`, softmax over [`labels`] (the 52 cards in
//! [`Card::all`] order, then `back`, then `unknown`); metadata `tablecam.kind` = `classifier`,
//! `tablecam.labels` (comma-separated) and `tablecam.min_confidence` (the calibrated threshold
//! below which the answer is `unknown`; 0.9 when absent).
//!
//! [`combine`] turns the probabilities of a card's patches into one identity.
use std::fmt;
use std::path::{Path, PathBuf};

use ndarray::{Array2, ArrayView4, Ix2};
use opencv::core::{self, Mat, Rect};
use opencv::imgproc;
use opencv::prelude::*;

use crate::calib::{Homography, Point};
use crate::onnx::{self, Dim, Model, ModelContract, OnnxError, SessionOptions, TensorSpec};
use crate::rules::{Card, Rank};

/// Where the trained classifier lives, relative to the project root.
pub const DEFAULT_PATH: &str = "models/classifier.onnx";
/// Where the trained glyph classifier lives ([`PatchKind::IndexGlyphs`]).
pub const DEFAULT_GLYPH_PATH: &str = "models/glyph_classifier.onnx";
/// Where the trained whole-card classifier lives ([`CornerCut::FACE`]).
pub const DEFAULT_FACE_PATH: &str = "models/face_classifier.onnx";
/// The `tablecam.version` of the index-box contract (v1).
pub const CONTRACT_VERSION: &str = "1";
/// The `tablecam.version` of the card-corner contract (v2).
pub const CORNER_CONTRACT_VERSION: &str = "2";
/// Side of a v1 patch at the network input, pixels.
pub const PATCH: usize = 40;
/// A v2 card-corner patch at the network input: height, width (pixels).
pub const CORNER_PATCH: (usize, usize) = (48, 32);
/// The card-frame region a v2 patch shows: `u ∈ [0, CORNER_REGION.0]` across the card's short
/// side and `v ∈ [0, CORNER_REGION.1]` along its long side, from the corner read. Wide enough
/// for the largest index of the deck designs in models/training (0.27 × 0.44) and the locator's
/// misplacement; models/training/nets.py holds the same numbers.
pub const CORNER_REGION: (f64, f64) = (0.32, 0.46);

/// What a card-corner patch shows of a located card — the region `u ∈ [0, region.0]` across the
/// card's short side, `v ∈ [0, region.1]` along its long side, from the corner read — and the
/// pixels (height, width) it is sampled to. A model names its cut in its metadata
/// (`tablecam.corner`, `tablecam.patch`); only the cuts below are accepted, because the training
/// scripts (models/training/corners.py) make only these.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CornerCut {
    /// Height (along the card's long side) and width of the patch, pixels.
    pub patch: (usize, usize),
    /// The card-frame region shown, as fractions of the short and long side.
    pub region: (f64, f64),
}

impl CornerCut {
    /// The printed index corner (v2's cut).
    pub const INDEX: CornerCut = CornerCut { patch: CORNER_PATCH, region: CORNER_REGION };
    /// The whole card, upright (`corners.py --face`): pips count a number card's rank when its
    /// index prints too small to read.
    pub const FACE: CornerCut = CornerCut { patch: (64, 40), region: (1.0, 1.0) };
    /// The cuts this build makes of a card.
    pub const ALL: [CornerCut; 2] = [CornerCut::INDEX, CornerCut::FACE];
    /// An index's glyph view, whole (`locate::glyphs::IndexProposal::glyph_quad` is the "card"):
    /// the glyph classifier's cut ([`PatchKind::IndexGlyphs`]).
    pub const GLYPH: CornerCut = CornerCut { patch: CORNER_PATCH, region: (1.0, 1.0) };
}
/// A patch's side relative to the larger side of its index box.
pub const PATCH_SCALE: f64 = 1.3;
/// [`Classifier::classify`] runs at most this many patches at once.
pub const MAX_BATCH: usize = 256;
/// Number of labels: 52 cards, `back`, `unknown`.
pub const NUM_LABELS: usize = 54;
/// Label index of `back`.
pub const BACK: usize = 52;
/// Label index of `unknown`.
pub const UNKNOWN: usize = 53;
/// `tablecam.min_confidence` when the model does not set it.
pub const DEFAULT_MIN_CONFIDENCE: f32 = 0.9;

const FIX: &str = "retrain with `make train` or restore the committed models/classifier.onnx";

/// Errors of the classifier.
#[derive(Debug, thiserror::Error)]
pub enum ClassifyError {
    /// The model cannot be loaded, does not have the contract's input and output, or failed to
    /// run.
    #[error("classifier: {0}; {FIX}")]
    Model(#[from] OnnxError),
    /// The model's metadata is not the contract's.
    #[error("{}: {problem}; {FIX}", path.display())]
    Metadata {
        /// The model file.
        path: PathBuf,
        /// What differs, with the expected and found values.
        problem: String,
    },
    /// OpenCV failed while cutting a patch.
    #[error("cutting a classifier patch: {0}")]
    OpenCv(#[from] opencv::Error),
    /// The image to cut patches from is not 8-bit BGR.
    #[error("patches are cut from 8-bit 3-channel (BGR) images; got OpenCV type {0}")]
    ImageType(i32),
}

/// What a card is: a face, a back, or not known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CardIdentity {
    /// A face-up card.
    Card(Card),
    /// A card's back.
    Back,
    /// Not known (below the confidence threshold, contradicted, or not a card).
    Unknown,
}

impl CardIdentity {
    /// The card it names, if it names one.
    pub fn card(self) -> Option<Card> {
        match self {
            CardIdentity::Card(c) => Some(c),
            _ => None,
        }
    }

    /// The label: `AS`, `10H`, `back` or `unknown`.
    pub fn code(&self) -> String {
        match self {
            CardIdentity::Card(c) => c.code(),
            CardIdentity::Back => "back".into(),
            CardIdentity::Unknown => "unknown".into(),
        }
    }

    /// The identity of classifier label `i` (0..54).
    pub fn from_label(i: usize) -> CardIdentity {
        match i {
            BACK => CardIdentity::Back,
            i if i < 52 => Card::from_index(i as u8).map_or(CardIdentity::Unknown, CardIdentity::Card),
            _ => CardIdentity::Unknown,
        }
    }

    /// Parses a label (`AS`, `10H`, `back`, `unknown`).
    pub fn parse(s: &str) -> Option<CardIdentity> {
        match s.trim() {
            "back" => Some(CardIdentity::Back),
            "unknown" => Some(CardIdentity::Unknown),
            other => other.parse::<Card>().ok().map(CardIdentity::Card),
        }
    }
}

impl fmt::Display for CardIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.code())
    }
}

impl serde::Serialize for CardIdentity {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.code())
    }
}

/// The classifier's labels in output order: `2D, 2C, 2H, 2S, 3D, …, AS, back, unknown`.
pub fn labels() -> Vec<String> {
    Card::all().map(Card::code).chain(["back".to_string(), "unknown".to_string()]).collect()
}

// ---------------------------------------------------------------------------------------------
// Patches
// ---------------------------------------------------------------------------------------------

/// An axis-aligned square of the original image, in whole pixels: columns `x0 .. x0 + side`,
/// rows `y0 .. y0 + side` (it may reach outside the image).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchRect {
    /// Left column.
    pub x0: i32,
    /// Top row.
    pub y0: i32,
    /// Side, pixels (≥ 1).
    pub side: i32,
}

/// THE patch geometry — the classifier's training mirrors it exactly, so change both or neither.
///
/// For an index box of `w` × `h` pixels centred at `center` (original-image pixels, continuous
/// coordinates: pixel `i` spans `i .. i + 1`):
/// - `side = min(max(1, round(1.3 · max(w, h))), max(width, height))` (a square larger than the
///   image would be mostly replicated border),
/// - `x0 = floor(cx − side / 2 + 0.5)`, `y0 = floor(cy − side / 2 + 0.5)`, each clamped so
///   that the square keeps at least one pixel inside the `width` × `height` image.
///
/// [`cut_patch`] fills what lies outside the image by replicating the border and resizes the
/// square to 40 × 40 (INTER_AREA when shrinking, INTER_LINEAR when enlarging). No rotation: the
/// classifier is trained rotation-invariant.
pub fn patch_rect(center: Point, w: f64, h: f64, width: i32, height: i32) -> PatchRect {
    let side_f = (PATCH_SCALE * w.max(h)).round();
    let cap = f64::from(width.max(height).max(1));
    let side = if side_f.is_finite() { side_f.clamp(1.0, cap) as i32 } else { 1 };
    let corner = |c: f64| {
        let v = (c - f64::from(side) / 2.0 + 0.5).floor();
        if v.is_finite() {
            v.clamp(-2e6, 2e6) as i32
        } else {
            0
        }
    };
    let x0 = corner(center.x).clamp(1 - side, (width - 1).max(1 - side));
    let y0 = corner(center.y).clamp(1 - side, (height - 1).max(1 - side));
    PatchRect { x0, y0, side }
}

/// Cuts `rect` out of `image` (8-bit BGR), replicating the border where it reaches outside,
/// resizes it to [`PATCH`]² and writes it as RGB / 255, channel-major, into `out`
/// (`3 · 40 · 40` values).
pub fn cut_patch(image: &Mat, rect: PatchRect, out: &mut [f32]) -> Result<(), ClassifyError> {
    if image.typ() != core::CV_8UC3 {
        return Err(ClassifyError::ImageType(image.typ()));
    }
    assert_eq!(out.len(), 3 * PATCH * PATCH, "patch buffer size");
    let (iw, ih) = (image.cols(), image.rows());
    let (x1, y1) = (rect.x0.max(0), rect.y0.max(0));
    let (x2, y2) = ((rect.x0 + rect.side).min(iw), (rect.y0 + rect.side).min(ih));
    let roi = Mat::roi(image, Rect::new(x1, y1, (x2 - x1).max(1), (y2 - y1).max(1)))?;
    let inside = (x1, y1, x2, y2) == (rect.x0, rect.y0, rect.x0 + rect.side, rect.y0 + rect.side);
    let square = if inside {
        roi.try_clone()?
    } else {
        let mut square = Mat::default();
        core::copy_make_border(
            &roi,
            &mut square,
            y1 - rect.y0,
            rect.y0 + rect.side - y2,
            x1 - rect.x0,
            rect.x0 + rect.side - x2,
            core::BORDER_REPLICATE,
            core::Scalar::all(0.0),
        )?;
        square
    };
    let size = PATCH as i32;
    let resized = if rect.side == size {
        square
    } else {
        let interp = if rect.side > size { imgproc::INTER_AREA } else { imgproc::INTER_LINEAR };
        let mut r = Mat::default();
        imgproc::resize(&square, &mut r, core::Size::new(size, size), 0.0, 0.0, interp)?;
        r
    };
    write_rgb(&resized, PATCH * PATCH, out)
}

/// The two upright views of a card's index corners: the card's quad re-ordered so that its
/// first corner is the one read and its first edge runs across the short side, clockwise on
/// screen — `[TL, TR, BR, BL]` of the card seen from one end, then from the other.
///
/// A card's rectangle fixes its orientation up to a half turn; a standard card prints its index
/// at the top-left corner seen from either end, so both views are upright prints whichever way
/// up the card lies. `quad` is any convex quadrilateral in [`crate::locate::order_quad`] order.
pub fn corner_quads(quad: &[Point; 4]) -> [[Point; 4]; 2] {
    let s = if quad[0].dist(quad[1]) <= quad[1].dist(quad[2]) { 0 } else { 1 };
    corner_views(quad, s)
}

/// The views of the *other* diagonal: [`corner_quads`] with the quad's long and short sides
/// taken the other way round. A photo resized without keeping its aspect ratio (or seen at a
/// steep angle) can make a card's short side look the longer; the uncalibrated recognizer reads
/// both diagonals and keeps the one that shows an index.
pub fn corner_quads_turned(quad: &[Point; 4]) -> [[Point; 4]; 2] {
    let s = if quad[0].dist(quad[1]) <= quad[1].dist(quad[2]) { 1 } else { 0 };
    corner_views(quad, s)
}

fn corner_views(quad: &[Point; 4], s: usize) -> [[Point; 4]; 2] {
    let view = |k: usize| [quad[k % 4], quad[(k + 1) % 4], quad[(k + 2) % 4], quad[(k + 3) % 4]];
    [view(s), view(s + 2)]
}

/// A corner view ([`corner_quads`]) widened `scale` times about its read corner in the card's own
/// frame (through the card's homography, so perspective is kept): its [`CornerCut::INDEX`] cut
/// shows the card-frame region `scale` × (0.32, 0.46), sampled to the same patch. `None` for a
/// degenerate quad (or one whose widened corners fall beyond the horizon).
pub fn widened_view(view: &[Point; 4], scale: f64) -> Option<[Point; 4]> {
    let h = Homography(unit_square_to(view)?);
    let at = |u: f64, v: f64| h.apply(Point::new(u, v));
    Some([at(0.0, 0.0)?, at(scale, 0.0)?, at(scale, scale)?, at(0.0, scale)?])
}

/// THE card-corner patch geometry — models/training/corners.py `corner_map` mirrors it exactly.
///
/// The map from patch pixel index `(x, y)` (centre at `x + 0.5, y + 0.5`) to an image position
/// in OpenCV's convention (pixel centres at integers): card-frame `u = (x + 0.5) / 32 · 0.32`,
/// `v = (y + 0.5) / 48 · 0.46` ([`CornerCut::INDEX`]; another cut's numbers likewise), through
/// the homography taking the unit square to `view` (`[TL, TR, BR, BL]`, continuous image
/// coordinates), minus half a pixel. `None` for a degenerate quad.
pub fn corner_homography(view: &[Point; 4], cut: CornerCut) -> Option<[[f64; 3]; 3]> {
    let h = unit_square_to(view)?;
    let (ph, pw) = (cut.patch.0 as f64, cut.patch.1 as f64);
    let (su, sv) = (cut.region.0 / pw, cut.region.1 / ph);
    let s = [[su, 0.0, 0.5 * su], [0.0, sv, 0.5 * sv], [0.0, 0.0, 1.0]];
    let t = [[1.0, 0.0, -0.5], [0.0, 1.0, -0.5], [0.0, 0.0, 1.0]];
    Some(matmul(&matmul(&t, &h), &s))
}

fn matmul(a: &[[f64; 3]; 3], b: &[[f64; 3]; 3]) -> [[f64; 3]; 3] {
    let mut m = [[0.0; 3]; 3];
    for (i, row) in m.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
        }
    }
    m
}

/// The projective map taking (0,0), (1,0), (1,1), (0,1) to `q[0..4]` (Heckbert's closed form).
fn unit_square_to(q: &[Point; 4]) -> Option<[[f64; 3]; 3]> {
    let (x0, y0, x1, y1, x2, y2, x3, y3) = (q[0].x, q[0].y, q[1].x, q[1].y, q[2].x, q[2].y, q[3].x, q[3].y);
    let (sx, sy) = (x0 - x1 + x2 - x3, y0 - y1 + y2 - y3);
    let (dx1, dy1, dx2, dy2) = (x1 - x2, y1 - y2, x3 - x2, y3 - y2);
    let det = dx1 * dy2 - dx2 * dy1;
    if det.abs() < 1e-12 || ![x0, y0, x1, y1, x2, y2, x3, y3].iter().all(|v| v.is_finite()) {
        return None;
    }
    let g = (sx * dy2 - dx2 * sy) / det;
    let h = (dx1 * sy - sx * dy1) / det;
    Some([[x1 - x0 + g * x1, x3 - x0 + h * x3, x0], [y1 - y0 + g * y1, y3 - y0 + h * y3, y0], [g, h, 1.0]])
}

/// Cuts the upright corner patch of `view` ([`corner_quads`]) out of `image` (8-bit BGR):
/// bilinear, border replicated, RGB / 255, channel-major into `out` (`3 · h · w` values of
/// `cut.patch`). A degenerate quad gives a grey patch (the classifier answers `unknown` to it).
pub fn cut_corner_patch(image: &Mat, view: &[Point; 4], cut: CornerCut, out: &mut [f32]) -> Result<(), ClassifyError> {
    if image.typ() != core::CV_8UC3 {
        return Err(ClassifyError::ImageType(image.typ()));
    }
    let (ph, pw) = cut.patch;
    assert_eq!(out.len(), 3 * ph * pw, "patch buffer size");
    let Some(m) = corner_homography(view, cut) else {
        out.fill(0.5);
        return Ok(());
    };
    let m = Mat::from_slice_2d(&m)?;
    let mut patch = Mat::default();
    imgproc::warp_perspective(
        image,
        &mut patch,
        &m,
        core::Size::new(pw as i32, ph as i32),
        imgproc::INTER_LINEAR | imgproc::WARP_INVERSE_MAP,
        core::BORDER_REPLICATE,
        core::Scalar::all(0.0),
    )?;
    write_rgb(&patch, ph * pw, out)
}

/// An index's glyph view (`locate::glyphs::IndexProposal::glyph_quad`, rank up) cut whole for a
/// glyph classifier ([`PatchKind::IndexGlyphs`]); `inverted` (light ink on a dark card) turns
/// the patch into dark ink on light, as models/training/glyph_patches.py does.
pub fn cut_glyph_patch(image: &Mat, view: &[Point; 4], inverted: bool, out: &mut [f32]) -> Result<(), ClassifyError> {
    cut_corner_patch(image, view, CornerCut::GLYPH, out)?;
    if inverted {
        invert_patch(out);
    }
    Ok(())
}

/// A patch's light and dark swapped (values in 0..1).
pub fn invert_patch(patch: &mut [f32]) {
    patch.iter_mut().for_each(|v| *v = 1.0 - *v);
}

/// An 8-bit BGR image of `plane` pixels → RGB / 255, channel-major.
fn write_rgb(img: &Mat, plane: usize, out: &mut [f32]) -> Result<(), ClassifyError> {
    let owned;
    let img = if img.is_continuous() {
        img
    } else {
        owned = img.try_clone()?;
        &owned
    };
    let bytes = img.data_bytes()?;
    for (i, px) in bytes.chunks_exact(3).enumerate().take(plane) {
        out[i] = f32::from(px[2]) / 255.0;
        out[plane + i] = f32::from(px[1]) / 255.0;
        out[2 * plane + i] = f32::from(px[0]) / 255.0;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Combining patches
// ---------------------------------------------------------------------------------------------

/// One card's identity from its patches, with its confidence.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// The identity.
    pub identity: CardIdentity,
    /// For a card or a back: the combined probability of that label. For `unknown`: the
    /// combined probability of the best label, which was below the threshold or contradicted
    /// (0 when no patch showed anything).
    pub confidence: f32,
    /// Patches that showed something (argmax not `unknown`).
    pub informative: usize,
    /// Whether two confident patches named different labels, or the combination named a card
    /// that no patch's own most likely label was ([`combine`], step 3).
    pub conflict: bool,
    /// The combined probability that the card shows its face (any of the 52, not `back`): a
    /// face is told from a back long before its identity is certain (0 when no patch showed
    /// anything).
    pub face: f32,
    /// The face the combined probabilities lean to, named or not (`confidence` is its
    /// probability): a tracker can confirm a card from several agreeing unsure readings of
    /// different frames. `None` when no patch showed anything, `back` leads, or two confident
    /// patches disagree (a conflict is no reading).
    pub reading: Option<Card>,
    /// The rank the combined probabilities lean to, summed over the four suits, with that
    /// probability: on a deck design never trained on, a covered card's suit sign (a few pixels)
    /// is often what keeps its identity below the threshold while its rank is certain, and an
    /// outcome that no suit decides can be verified from ranks ([`combine`], step 5). `None`
    /// when no patch showed anything, `back` leads, or two confident patches name different ranks
    /// or the product leans to a rank no patch's own most likely label has.
    pub rank: Option<(Rank, f32)>,
}

/// The most likely label of a probability vector and its probability.
pub(crate) fn argmax(p: &[f32]) -> (usize, f32) {
    p.iter().enumerate().fold((0, f32::NEG_INFINITY), |best, (i, &v)| if v > best.1 { (i, v) } else { best })
}

/// Combines the probability vectors (54 each) of one card's patches.
///
/// 1. Patches whose most likely label is `unknown` carry no evidence (an occluded or misplaced
///    corner) and are left out.
/// 2. If two of the others are each confident (top probability ≥ `min_confidence`) about
///    different labels, the card is `unknown`: the corners of one card always agree, so one of
///    them is misread, and a misread is far worse than a no-read.
/// 3. Otherwise the patches are independent views of the same card: with a uniform prior the
///    joint posterior is proportional to the product of their posteriors, so log-probabilities
///    are summed over the 53 labels other than `unknown` and normalised (softmax). A card that
///    wins the product without being any patch's own most likely label is a conflict too
///    (`unknown`, no reading): two views leaning to two different cards multiply into a third
///    that neither named. A 7♦ of a stud hand, its visible corner read 7♦ at 0.998 and its
///    other corner, under the next card's 10♣, read 10♣ at 0.66, combined to 7♣ at 0.9999 —
///    the rank of one and the suit of the other — and the tracker confirmed a duplicate 7♣
///    (docs/recognition.md, "A card no view named").
/// 4. The best label wins if its combined probability is ≥ `min_confidence`; else `unknown`.
/// 5. The rank reading is the rank whose four labels' combined probabilities sum highest, under
///    step 3's rules for ranks: no two confident patches naming different ranks, and the rank
///    some patch's own most likely label has (two suits of one rank are no conflict for it).
pub fn combine(patches: &[&[f32]], min_confidence: f32) -> Verdict {
    let informative: Vec<&[f32]> =
        patches.iter().copied().filter(|p| p.len() == NUM_LABELS && argmax(p).0 != UNKNOWN).collect();
    if informative.is_empty() {
        return Verdict {
            identity: CardIdentity::Unknown,
            confidence: 0.0,
            informative: 0,
            conflict: false,
            face: 0.0,
            reading: None,
            rank: None,
        };
    }
    let mut log = [0f64; UNKNOWN];
    for p in &informative {
        for (l, v) in log.iter_mut().zip(p.iter()) {
            *l += f64::from(v.max(1e-12)).ln();
        }
    }
    let max = log.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let sum: f64 = log.iter().map(|l| (l - max).exp()).sum();
    let (best, best_log) =
        log.iter().enumerate().fold((0, f64::NEG_INFINITY), |b, (i, &v)| if v > b.1 { (i, v) } else { b });
    let confidence = ((best_log - max).exp() / sum) as f32;
    let face = (1.0 - (log[BACK] - max).exp() / sum) as f32;
    let tops: Vec<(usize, f32)> = informative.iter().map(|p| argmax(p)).collect();
    let confident: Vec<usize> = tops.iter().filter(|&&(_, v)| v >= min_confidence).map(|&(i, _)| i).collect();
    // Two confident patches naming different labels, or a product that crowns a card no patch
    // named: either way one view shows something else than this card (step 3 of the doc).
    let unsupported = best < BACK && !tops.iter().any(|&(i, _)| i == best);
    let conflict = confident.iter().any(|&i| i != confident[0]) || unsupported;
    let identity =
        if conflict || confidence < min_confidence { CardIdentity::Unknown } else { CardIdentity::from_label(best) };
    let reading = CardIdentity::from_label(best).card().filter(|_| !conflict);
    let rank = rank_reading(&log, max, sum, &tops, min_confidence);
    Verdict { identity, confidence, informative: informative.len(), conflict, face, reading, rank }
}

/// Step 5 of [`combine`]: the leading rank of the combined log-probabilities (`log`, normalised
/// by `max` and `sum`), where the patches' own top labels (`tops`) support it.
fn rank_reading(
    log: &[f64; UNKNOWN],
    max: f64,
    sum: f64,
    tops: &[(usize, f32)],
    min_confidence: f32,
) -> Option<(Rank, f32)> {
    let (rank, p) = leading_rank(|i| (log[i] - max).exp() / sum);
    let best = rank.index() as usize;
    // `back` (or nothing) leads the combined reading: no face, so no rank either.
    let back = (log[BACK] - max).exp() / sum;
    if back >= p {
        return None;
    }
    let card_tops: Vec<(usize, f32)> = tops.iter().copied().filter(|&(i, _)| i < 52).collect();
    let supported = card_tops.iter().any(|&(i, _)| i / 4 == best);
    let confident_ranks: Vec<usize> =
        card_tops.iter().filter(|&&(_, v)| v >= min_confidence).map(|&(i, _)| i / 4).collect();
    let agree = confident_ranks.iter().all(|&r| r == best);
    (supported && agree).then_some((rank, p as f32))
}

/// The rank whose four labels' probabilities (`prob` of a label index below 52) sum highest,
/// with that sum; the lowest such rank among ties.
pub(crate) fn leading_rank(prob: impl Fn(usize) -> f64) -> (Rank, f64) {
    let (best, p) = (0..13)
        .map(|k| (k, (4 * k..4 * k + 4).map(&prob).sum::<f64>()))
        .fold((0, f64::NEG_INFINITY), |b, (k, v)| if v > b.1 { (k, v) } else { b });
    (Rank::from_index(best as u8), p)
}

/// Whether a card's index corners read `back` surely: their combined reading is `back` at
/// `min_confidence` with no conflict (a covered corner, `unknown`, adds nothing either way).
///
/// The recognizer leaves such a card out of the whole-card classifier when the table plane
/// measured it face down too (docs/recognition.md, "Speed"): the whole-card network costs 1.7×
/// the corner network per patch, and at the deal most of a table's cards are backs.
pub fn surely_back(index: &[&[f32]], min_confidence: f32) -> bool {
    combine(index, min_confidence).identity == CardIdentity::Back
}

/// Whether a card's index corners name it surely: their combined reading is a card at
/// `min_confidence` with no conflict.
pub fn surely_named(index: &[&[f32]], min_confidence: f32) -> bool {
    combine(index, min_confidence).identity.card().is_some()
}

/// Combines a card's index-corner patches (`index`) with its whole-card patches (`face`, from a
/// second classifier, [`CornerCut::FACE`]).
///
/// All patches are combined as one card's views ([`combine`]), but the result names a label
/// only where the index corners lean to it too (their combined reading, however unsure). The
/// whole-card view counts pips, which is what reads a number card whose index prints a few
/// pixels high; on a deck design it never saw it can also be sure of a wrong card — a fancy
/// ace of clubs taken for the ace of spades, a crop straddling two cards counting a
/// neighbour's pips, half a card over the felt taken for a back — and in each of those the
/// index corners leaned elsewhere (docs/recognition.md, "Whole-card classifier"). Without
/// that support the card is `unknown`, and its reading too is dropped: a tracker confirms a
/// card from agreeing unsure readings of many frames, and a whole-card view that is steadily
/// wrong on a design (a queen of clubs read as the queen of spades in every frame) would
/// otherwise confirm its wrong card that way. Two models that disagree are no reading, as two
/// confident patches that disagree are none.
pub fn combine_models(index: &[&[f32]], face: &[&[f32]], min_confidence: f32) -> Verdict {
    let all: Vec<&[f32]> = index.iter().chain(face).copied().collect();
    let joint = combine(&all, min_confidence);
    if face.is_empty() {
        return joint;
    }
    let by_index = combine(index, min_confidence);
    let leans = joint.reading.is_some() && by_index.reading == joint.reading;
    let supported = match joint.identity {
        CardIdentity::Card(_) => leans,
        CardIdentity::Back => by_index.informative > 0 && by_index.face < 0.5,
        CardIdentity::Unknown => true,
    };
    let identity = if supported { joint.identity } else { CardIdentity::Unknown };
    // The rank too stands only where the index corners lean to it: the whole-card view counts a
    // neighbour's pips as well as a card's own.
    let rank = joint.rank.filter(|&(r, _)| by_index.rank.is_some_and(|(ri, _)| ri == r));
    if joint.reading.is_some() && !leans {
        return Verdict { identity, reading: None, conflict: true, rank, ..joint };
    }
    Verdict { identity, rank, ..joint }
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// What a classifier's patches are (its contract version).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PatchKind {
    /// v1: the axis-aligned square around an index box, any rotation ([`cut_patch`]).
    IndexBox,
    /// v2: a located card's corner region, upright in the card's frame ([`cut_corner_patch`]).
    CardCorner(CornerCut),
    /// v2: an index's glyph view, rank up ([`CornerCut::GLYPH`] of the view, light ink inverted).
    IndexGlyphs,
}

impl PatchKind {
    /// The network input's (height, width).
    pub fn shape(self) -> (usize, usize) {
        match self {
            PatchKind::IndexBox => (PATCH, PATCH),
            PatchKind::CardCorner(cut) => cut.patch,
            PatchKind::IndexGlyphs => CornerCut::GLYPH.patch,
        }
    }

    /// The corner cut of a card-corner classifier (`None` for index boxes).
    pub fn corner_cut(self) -> Option<CornerCut> {
        match self {
            PatchKind::CardCorner(cut) => Some(cut),
            PatchKind::IndexBox | PatchKind::IndexGlyphs => None,
        }
    }
}

/// The input and output specs of the classifier contract, before the metadata says which
/// version it is (height and width open; [`Classifier::load`] fixes them).
pub fn contract() -> ModelContract {
    ModelContract {
        input: TensorSpec::f32("patch", [Dim::Any, Dim::Fixed(3), Dim::Any, Dim::Any]),
        output: TensorSpec::f32("probs", [Dim::Any, Dim::Fixed(NUM_LABELS as i64)]),
    }
}

/// The input spec of a classifier of `kind`.
pub fn input_spec(kind: PatchKind) -> TensorSpec {
    let (h, w) = kind.shape();
    TensorSpec::f32("patch", [Dim::Any, Dim::Fixed(3), Dim::Fixed(h as i64), Dim::Fixed(w as i64)])
}

/// Checks the classifier's metadata (`get` looks a key up) and returns its patch kind; the
/// error names `path` and what differs.
pub fn patch_kind_from_metadata(path: &Path, get: impl Fn(&str) -> Option<String>) -> Result<PatchKind, ClassifyError> {
    let bad = |problem: String| ClassifyError::Metadata { path: path.to_path_buf(), problem };
    let expect = |key: &str, want: &str| match get(key) {
        Some(v) if v.trim() == want => Ok(()),
        Some(v) => Err(bad(format!("metadata {key} is {v:?}, expected {want:?}"))),
        None => Err(bad(format!("metadata {key} is missing, expected {want:?}"))),
    };
    expect("tablecam.kind", "classifier")?;
    match get("tablecam.version").as_deref().map(str::trim) {
        Some(CONTRACT_VERSION) => {
            expect("tablecam.patch", "40")?;
            Ok(PatchKind::IndexBox)
        }
        Some(CORNER_CONTRACT_VERSION)
            if get("tablecam.patch_kind").as_deref().map(str::trim) == Some("index_glyphs") =>
        {
            let g = CornerCut::GLYPH;
            let region = get("tablecam.corner").unwrap_or_default();
            if !region_of(&region).is_some_and(|r| same_region(r, g.region)) {
                return Err(bad(format!(
                    "metadata tablecam.corner is {region:?}, expected \"1,1\" (the whole glyph view)"
                )));
            }
            expect("tablecam.patch", &format!("{}x{}", g.patch.0, g.patch.1))?;
            Ok(PatchKind::IndexGlyphs)
        }
        Some(CORNER_CONTRACT_VERSION) => {
            expect("tablecam.patch_kind", "card_corner")?;
            let region = get("tablecam.corner").unwrap_or_default();
            let patch = get("tablecam.patch").unwrap_or_default();
            let parsed = region_of(&region);
            let cut = CornerCut::ALL.into_iter().find(|c| {
                parsed.is_some_and(|r| same_region(r, c.region))
                    && patch.trim() == format!("{}x{}", c.patch.0, c.patch.1)
            });
            let known = CornerCut::ALL
                .iter()
                .map(|c| format!("\"{},{}\" at \"{}x{}\"", c.region.0, c.region.1, c.patch.0, c.patch.1))
                .collect::<Vec<_>>()
                .join(" or ");
            cut.map(PatchKind::CardCorner).ok_or_else(|| {
                bad(format!(
                    "metadata tablecam.corner is {region:?} at tablecam.patch {patch:?}, this build cuts the \
                     corner region {known} (the model was trained on other patches)"
                ))
            })
        }
        Some(v) => Err(bad(format!(
            "metadata tablecam.version is {v:?}, expected {CONTRACT_VERSION:?} (index boxes) or \
             {CORNER_CONTRACT_VERSION:?} (card corners)"
        ))),
        None => Err(bad(format!(
            "metadata tablecam.version is missing, expected {CONTRACT_VERSION:?} or {CORNER_CONTRACT_VERSION:?}"
        ))),
    }
}

/// A `tablecam.corner` value (`"u,v"`) as numbers: `"1.0,1.0"` is `"1,1"`.
fn region_of(value: &str) -> Option<(f64, f64)> {
    let parsed: Vec<f64> = value.split(',').map(|v| v.trim().parse().ok()).collect::<Option<_>>()?;
    let [u, v] = parsed[..] else { return None };
    Some((u, v))
}

/// Whether two card-frame regions are the same (to 1e-6: the metadata writes them in decimal).
fn same_region(a: (f64, f64), b: (f64, f64)) -> bool {
    (a.0 - b.0).abs() < 1e-6 && (a.1 - b.1).abs() < 1e-6
}

/// Checks the classifier's metadata (`get` looks a key up) and returns its `min_confidence`; the
/// error names `path` and what differs.
pub fn min_confidence_from_metadata(path: &Path, get: impl Fn(&str) -> Option<String>) -> Result<f32, ClassifyError> {
    let bad = |problem: String| ClassifyError::Metadata { path: path.to_path_buf(), problem };
    patch_kind_from_metadata(path, &get)?;
    let Some(found) = get("tablecam.labels") else {
        return Err(bad("metadata tablecam.labels is missing (the 54 labels, comma-separated)".into()));
    };
    let found: Vec<&str> = found.split(',').map(str::trim).collect();
    let want = labels();
    if found.len() != want.len() {
        return Err(bad(format!("expected {} labels in tablecam.labels, found {}", want.len(), found.len())));
    }
    if let Some(i) = (0..want.len()).find(|&i| found[i] != want[i]) {
        return Err(bad(format!(
            "tablecam.labels[{i}] is {:?}, expected {:?} (labels out of order)",
            found[i], want[i]
        )));
    }
    match get("tablecam.min_confidence") {
        None => Ok(DEFAULT_MIN_CONFIDENCE),
        Some(v) => match v.trim().parse::<f32>() {
            Ok(t) if (0.0..=1.0).contains(&t) => Ok(t),
            _ => Err(bad(format!("metadata tablecam.min_confidence is {v:?}, expected a number between 0 and 1"))),
        },
    }
}

/// The design names of a `tablecam.designs` metadata value.
pub fn designs_from_metadata(value: Option<String>) -> Vec<String> {
    value.unwrap_or_default().split(',').map(str::trim).filter(|d| !d.is_empty()).map(String::from).collect()
}

/// The deck designs the classifier at `path` was trained on ([`Classifier::designs`]). Loads the
/// model (small) to read its metadata; errors name the file.
pub fn trained_designs(path: &Path) -> Result<Vec<String>, ClassifyError> {
    Ok(Classifier::load(path, &SessionOptions::default())?.designs)
}

/// The classifier model, checked against its contract.
#[derive(Debug)]
pub struct Classifier {
    model: Model,
    min_confidence: f32,
    kind: PatchKind,
    designs: Vec<String>,
    quantized: Option<String>,
}

impl Classifier {
    /// Loads and checks `path` (input, output, metadata); every error names the file.
    pub fn load(path: impl AsRef<Path>, options: &SessionOptions) -> Result<Classifier, ClassifyError> {
        let mut model = onnx::load_model_with(path.as_ref(), contract(), options)?;
        let min_confidence = min_confidence_from_metadata(model.path(), |k| model.metadata(k))?;
        let kind = patch_kind_from_metadata(model.path(), |k| model.metadata(k))?;
        model.require_input(input_spec(kind))?;
        let designs = designs_from_metadata(model.metadata("tablecam.designs"));
        let quantized = model.metadata("tablecam.quantized");
        Ok(Classifier { model, min_confidence, kind, designs, quantized })
    }

    /// For a model whose convolutions run in 8 bits, what it was made from (metadata
    /// `tablecam.quantized`: the float original and its activation ranges, written by
    /// models/training/quantize.py); `None` for a float model.
    pub fn quantized(&self) -> Option<&str> {
        self.quantized.as_deref()
    }

    /// One line for people: what the model reads, at what size, in what arithmetic, from what
    /// threshold (e.g. `card corner 48x32, 8-bit, threshold 0.999`).
    pub fn describe(&self) -> String {
        let what = match self.kind {
            PatchKind::IndexBox => "index box",
            PatchKind::CardCorner(cut) if cut == CornerCut::FACE => "whole card",
            PatchKind::CardCorner(_) => "card corner",
            PatchKind::IndexGlyphs => "index glyphs",
        };
        let (h, w) = self.kind.shape();
        let arithmetic = if self.quantized.is_some() { "8-bit" } else { "float" };
        format!("{what} {h}x{w}, {arithmetic}, threshold {}", self.min_confidence)
    }

    /// The deck designs the model was trained on (metadata `tablecam.designs`, comma-separated;
    /// empty when the model does not say): a table dealing one of these has an *enrolled* deck,
    /// whose unsure readings the tracker may combine ([`crate::track::TrackerOptions::for_deck`]).
    pub fn designs(&self) -> &[String] {
        &self.designs
    }

    /// What the model's patches are.
    pub fn patch_kind(&self) -> PatchKind {
        self.kind
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        self.model.path()
    }

    /// The calibrated threshold below which a card is `unknown`.
    pub fn min_confidence(&self) -> f32 {
        self.min_confidence
    }

    /// Overrides the threshold (e.g. for a sweep).
    pub fn set_min_confidence(&mut self, t: f32) {
        self.min_confidence = t;
    }

    /// Classifies a batch of patches `[N, 3, H, W]` ([`PatchKind::shape`]) in one run; returns
    /// `[N, 54]`.
    pub fn classify(&mut self, patches: ArrayView4<'_, f32>) -> Result<Array2<f32>, ClassifyError> {
        let n = patches.shape()[0];
        if n == 0 {
            return Ok(Array2::zeros((0, NUM_LABELS)));
        }
        if n > MAX_BATCH {
            // ONNX Runtime's memory arena keeps what its largest run needed: a photo's ~600
            // glyph views in one run held 2.3 GiB
            let mut out = Array2::zeros((n, NUM_LABELS));
            for start in (0..n).step_by(MAX_BATCH) {
                let end = (start + MAX_BATCH).min(n);
                let part = self.classify(patches.slice(ndarray::s![start..end, .., .., ..]))?;
                out.slice_mut(ndarray::s![start..end, ..]).assign(&part);
            }
            return Ok(out);
        }
        let probs = self.model.run(patches)?;
        if probs.shape() != [n, NUM_LABELS] {
            return Err(ClassifyError::Model(OnnxError::Contract {
                path: self.model.path().to_path_buf(),
                problem: format!("output probs came back with shape {:?}, expected [{n}, {NUM_LABELS}]", probs.shape()),
            }));
        }
        Ok(probs.into_dimensionality::<Ix2>().expect("rank checked"))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn probs(pairs: &[(usize, f32)]) -> Vec<f32> {
        let rest: f32 = 1.0 - pairs.iter().map(|p| p.1).sum::<f32>();
        let mut v = vec![rest / (NUM_LABELS - pairs.len()) as f32; NUM_LABELS];
        for &(i, p) in pairs {
            v[i] = p;
        }
        v
    }

    fn card(code: &str) -> usize {
        code.parse::<Card>().unwrap().index() as usize
    }

    #[test]
    fn labels_are_in_card_order_then_back_and_unknown() {
        let l = labels();
        assert_eq!(l.len(), NUM_LABELS);
        assert_eq!(&l[..5], ["2D", "2C", "2H", "2S", "3D"]);
        assert_eq!(&l[50..], ["AH", "AS", "back", "unknown"]);
        for (i, s) in l.iter().enumerate() {
            assert_eq!(CardIdentity::parse(s), Some(CardIdentity::from_label(i)));
            assert_eq!(CardIdentity::from_label(i).code(), *s);
        }
    }

    #[test]
    fn agreeing_patches_strengthen_each_other() {
        let a = probs(&[(card("AS"), 0.85)]);
        let b = probs(&[(card("AS"), 0.8), (card("AC"), 0.15)]);
        let one = combine(&[&a], 0.9);
        assert_eq!(one.identity, CardIdentity::Unknown, "0.85 alone is below the threshold");
        let both = combine(&[&a, &b], 0.9);
        assert_eq!(both.identity, CardIdentity::Card("AS".parse().unwrap()), "{both:?}");
        assert!(both.confidence > 0.99 && both.informative == 2 && !both.conflict);
    }

    #[test]
    fn disagreement_or_low_confidence_is_unknown() {
        let a = probs(&[(card("AS"), 0.97)]);
        let b = probs(&[(card("AH"), 0.95)]);
        let v = combine(&[&a, &b], 0.9);
        assert!(v.conflict && v.identity == CardIdentity::Unknown, "{v:?}");
        assert_eq!(v.reading, None, "a conflict is no reading");
        // Below the threshold even alone: no identity, but the reading it leans to.
        let weak = probs(&[(card("7D"), 0.6), (card("7H"), 0.3)]);
        let v = combine(&[&weak], 0.9);
        assert_eq!(v.identity, CardIdentity::Unknown);
        assert_eq!(v.reading, Some("7D".parse().unwrap()));
        assert!((v.confidence - 0.6).abs() < 0.01, "{v:?}");
        assert_eq!(combine(&[&probs(&[(BACK, 0.6)])], 0.9).reading, None, "a back is no face reading");
        // Patches that see nothing (argmax unknown) are ignored, not counted against the card.
        let blank = probs(&[(UNKNOWN, 0.9)]);
        let v = combine(&[&a, &blank], 0.9);
        assert_eq!((v.identity, v.informative), (CardIdentity::Card("AS".parse().unwrap()), 1));
        assert_eq!(combine(&[&blank], 0.9).identity, CardIdentity::Unknown);
        assert_eq!(combine(&[], 0.9).confidence, 0.0);
        // A back is a label like the others.
        assert_eq!(combine(&[&probs(&[(BACK, 0.99)])], 0.9).identity, CardIdentity::Back);
    }

    /// Two views leaning to two cards must not multiply into a third card that neither named.
    #[test]
    fn a_card_that_no_patch_names_is_no_reading() {
        // a visible corner sure of 7♦ with a little 7♣; a corner under a 10♣ leaning to it, and
        // to any club: the product favours 7♣, which neither patch named
        let visible = probs(&[(card("7D"), 0.99), (card("7C"), 0.009)]);
        let covered = probs(&[(card("10C"), 0.6), (card("7C"), 0.3999)]);
        let v = combine(&[&visible, &covered], 0.99);
        assert!(v.confidence > 0.99, "the product alone would name it: {v:?}");
        assert!(v.conflict && v.identity == CardIdentity::Unknown && v.reading.is_none(), "{v:?}");
        // the same product, once a patch names 7♣ itself, stands
        let named = probs(&[(card("7C"), 0.6), (card("10C"), 0.3999)]);
        let v = combine(&[&visible, &named], 0.99);
        assert_eq!((v.identity, v.conflict), (CardIdentity::Card("7C".parse().unwrap()), false), "{v:?}");
    }

    /// A covered card's suit sign unresolved: its two black suits share the probability, its
    /// rank does not (step 5 of `combine`).
    #[test]
    fn a_rank_is_read_where_only_the_suit_is_unsure() {
        let index = probs(&[(card("8S"), 0.62), (card("8C"), 0.3795)]);
        let v = combine(&[&index], 0.999);
        assert_eq!(v.identity, CardIdentity::Unknown, "{v:?}");
        let (rank, p) = v.rank.expect("a rank reading");
        assert_eq!(rank, Rank::Eight);
        assert!((0.999..=1.0).contains(&p), "{v:?}");
        // two suits of one rank named surely are a conflict for the card, not for its rank
        let other = probs(&[(card("8C"), 0.9995)]);
        let sure = probs(&[(card("8S"), 0.9995)]);
        let v = combine(&[&sure, &other], 0.999);
        assert!(v.conflict && v.identity == CardIdentity::Unknown, "{v:?}");
        assert_eq!(v.rank.map(|r| r.0), Some(Rank::Eight));
        // two ranks named surely: no rank; a back: no rank
        let nine = probs(&[(card("9C"), 0.9995)]);
        assert_eq!(combine(&[&sure, &nine], 0.999).rank, None);
        assert_eq!(combine(&[&probs(&[(BACK, 0.9)])], 0.999).rank, None);
        // a rank no patch's own best label has (7 from 7D and 7C leanings over a 10C) is no
        // reading: the same rule as for cards
        let a = probs(&[(card("10C"), 0.4), (card("7D"), 0.3), (card("7C"), 0.29)]);
        let v = combine(&[&a], 0.999);
        assert_eq!(v.rank, None, "{v:?}");
        // the whole-card view's rank stands only where the index corners lean to it too
        let face = probs(&[(card("9S"), 0.9), (card("9C"), 0.0999)]);
        let v = combine_models(&[&index], &[&face], 0.999);
        assert_eq!(v.rank, None, "{v:?}");
        let face = probs(&[(card("8C"), 0.9), (card("8S"), 0.0999)]);
        assert_eq!(combine_models(&[&index], &[&face], 0.999).rank.map(|r| r.0), Some(Rank::Eight));
    }

    /// Which cards the recognizer may leave out of the whole-card classifier: those whose
    /// corners read `back` surely, and only those.
    #[test]
    fn only_corners_sure_of_a_back_are_surely_a_back() {
        let back = probs(&[(BACK, 0.9995)]);
        let leaning_back = probs(&[(BACK, 0.97)]);
        let blank = probs(&[(UNKNOWN, 0.9)]);
        let face = probs(&[(card("8D"), 0.9995)]);
        let unsure_face = probs(&[(BACK, 0.6), (card("8D"), 0.35)]);
        assert!(surely_back(&[&back, &back], 0.999));
        assert!(surely_back(&[&back, &blank], 0.999), "a covered corner adds nothing either way");
        assert!(surely_back(&[&leaning_back, &leaning_back], 0.999), "two leaning corners combine");
        assert!(!surely_back(&[&leaning_back, &blank], 0.999), "one corner below the threshold");
        assert!(!surely_back(&[&back, &face], 0.999), "a corner showing a face is a conflict");
        assert!(!surely_back(&[&leaning_back, &face], 0.999), "an unsure back and a sure face");
        assert!(!surely_back(&[&unsure_face], 0.999), "a corner leaning to a back, unsure");
        assert!(surely_back(&[&back, &unsure_face], 0.999), "as `combine` reads it: a sure corner outweighs");
        assert!(!surely_back(&[&blank, &blank], 0.999), "corners that show nothing");
        assert!(!surely_back(&[], 0.999));
    }

    /// The recognizer leaves a card out of the whole-card classifier when its corners name it
    /// surely: one sure corner (the other covered), or two that combine, never a conflict.
    #[test]
    fn only_corners_sure_of_one_card_name_it_surely() {
        let eight = probs(&[(card("8D"), 0.9995)]);
        let leaning = probs(&[(card("8D"), 0.97)]);
        let nine = probs(&[(card("9D"), 0.9995)]);
        let back = probs(&[(BACK, 0.9995)]);
        let blank = probs(&[(UNKNOWN, 0.9)]);
        assert!(surely_named(&[&eight, &eight], 0.999));
        assert!(surely_named(&[&eight, &blank], 0.999), "a covered corner adds nothing either way");
        assert!(surely_named(&[&leaning, &leaning], 0.999), "two leaning corners combine");
        assert!(!surely_named(&[&leaning, &blank], 0.999), "one corner below the threshold");
        assert!(!surely_named(&[&eight, &nine], 0.999), "two sure corners naming two cards");
        assert!(!surely_named(&[&back, &back], 0.999), "a back is no card");
        assert!(!surely_named(&[&blank, &blank], 0.999), "corners that show nothing");
        assert!(!surely_named(&[], 0.999));
    }

    /// The whole-card views name a card only where the index corners lean to it too.
    #[test]
    fn whole_card_views_need_the_index_corners_support() {
        let (ace_spades, ace_clubs) = (card("AS"), card("AC"));
        let named = |code: &str| CardIdentity::from_label(card(code));
        // unsure corners leaning to AS and sure faces of AS: named, surer than the corners alone
        let corner = probs(&[(ace_spades, 0.7), (ace_clubs, 0.2)]);
        let face = probs(&[(ace_spades, 0.9995)]);
        let v = combine_models(&[&corner, &corner], &[&face, &face], 0.999);
        assert_eq!(v.identity, named("AS"));
        assert!(combine(&[&corner, &corner], 0.999).identity == CardIdentity::Unknown, "the corners alone are unsure");
        // the faces sure of AS, the corners leaning to AC: unknown, however sure the faces are
        let corner = probs(&[(ace_clubs, 0.6), (ace_spades, 0.3)]);
        let face = probs(&[(ace_spades, 0.999_999)]);
        let v = combine_models(&[&corner, &corner], &[&face, &face], 0.999);
        assert_eq!(v.identity, CardIdentity::Unknown);
        assert_eq!(v.reading, None, "a reading the corners do not lean to is no vote for the tracker");
        // unsure faces of AS over corners leaning to AC: no reading either
        let unsure_face = probs(&[(ace_spades, 0.9)]);
        let v = combine_models(&[&corner, &corner], &[&unsure_face], 0.999);
        assert_eq!((v.identity, v.reading), (CardIdentity::Unknown, None), "{v:?}");
        // unsure faces agreeing with unsure corners: unknown, read AS
        let leaning = probs(&[(ace_spades, 0.6), (ace_clubs, 0.3)]);
        let v = combine_models(&[&leaning], &[&unsure_face], 0.9999);
        assert_eq!((v.identity, v.reading), (CardIdentity::Unknown, Some("AS".parse::<Card>().unwrap())), "{v:?}");
        assert_eq!(
            combine(&[&corner, &corner, &face, &face], 0.999).identity,
            named("AS"),
            "the plain product would name it"
        );
        // corners that show nothing support nothing; no face views: the corners alone
        let blank = probs(&[(UNKNOWN, 0.9)]);
        assert_eq!(combine_models(&[&blank, &blank], &[&face, &face], 0.999).identity, CardIdentity::Unknown);
        let sure = probs(&[(ace_clubs, 0.9999)]);
        assert_eq!(combine_models(&[&sure], &[], 0.999), combine(&[&sure], 0.999));
        // a back: only where the corners see no face
        let back = probs(&[(BACK, 0.99999)]);
        assert_eq!(combine_models(&[&blank], &[&back, &back], 0.999).identity, CardIdentity::Unknown);
        let corner_back = probs(&[(BACK, 0.8)]);
        assert_eq!(combine_models(&[&corner_back], &[&back, &back], 0.999).identity, CardIdentity::Back);
        assert_eq!(combine_models(&[&corner], &[&back, &back], 0.999).identity, CardIdentity::Unknown);
    }

    #[test]
    fn a_face_is_told_from_a_back_before_its_identity() {
        // A 7 of unsure suit: no identity, but surely a face.
        let seven = probs(&[(card("7D"), 0.6), (card("7H"), 0.39), (BACK, 0.0)]);
        let v = combine(&[&seven], 0.999);
        assert_eq!(v.identity, CardIdentity::Unknown);
        assert!(v.face > 0.99, "{v:?}");
        let back = probs(&[(BACK, 0.8), (card("7D"), 0.1)]);
        assert!(combine(&[&back], 0.999).face < 0.25);
        // one corner hidden (unknown) does not dilute the other's evidence
        let blank = probs(&[(UNKNOWN, 0.9)]);
        assert!(combine(&[&seven, &blank], 0.999).face > 0.99);
        assert_eq!(combine(&[&blank], 0.999).face, 0.0);
    }

    #[test]
    fn patch_geometry_is_a_square_clamped_at_the_borders() {
        let r = patch_rect(Point::new(100.0, 50.0), 10.0, 20.0, 640, 480);
        assert_eq!(r, PatchRect { x0: 87, y0: 37, side: 26 });
        // Near the top-left corner: still square, origin outside the image.
        let r = patch_rect(Point::new(2.0, 3.0), 30.0, 10.0, 640, 480);
        assert_eq!((r.x0, r.y0, r.side), (-17, -16, 39));
        // Entirely outside: moved back so that one pixel stays inside.
        let r = patch_rect(Point::new(900.0, -100.0), 10.0, 10.0, 640, 480);
        assert_eq!((r.x0, r.y0, r.side), (639, -12, 13));

        // Cutting: a 4-pixel-wide red stripe on the left edge of a white image; the border
        // replicates it into the part of the square left of the image.
        let mut img = Mat::new_rows_cols_with_default(60, 60, core::CV_8UC3, core::Scalar::all(255.0)).unwrap();
        imgproc::rectangle(
            &mut img,
            Rect::new(0, 0, 4, 60),
            core::Scalar::new(0.0, 0.0, 255.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let mut out = vec![0f32; 3 * PATCH * PATCH];
        cut_patch(&img, PatchRect { x0: -20, y0: 10, side: 40 }, &mut out).unwrap();
        let px = |c: usize, x: usize, y: usize| out[c * PATCH * PATCH + y * PATCH + x];
        assert_eq!((px(0, 0, 5), px(1, 0, 5), px(2, 0, 5)), (1.0, 0.0, 0.0), "replicated red, as RGB");
        assert_eq!((px(0, 23, 5), px(1, 23, 5)), (1.0, 0.0));
        assert_eq!((px(0, 30, 5), px(1, 30, 5), px(2, 30, 5)), (1.0, 1.0, 1.0));
        // Shrinking keeps the layout: a 120-px square halves into 40 × 40 pixels.
        let big =
            Mat::new_rows_cols_with_default(200, 200, core::CV_8UC3, core::Scalar::new(10.0, 20.0, 30.0, 0.0)).unwrap();
        cut_patch(&big, patch_rect(Point::new(100.0, 100.0), 92.0, 60.0, 200, 200), &mut out).unwrap();
        assert!(out[..PATCH * PATCH].iter().all(|&v| (v - 30.0 / 255.0).abs() < 1e-6));
    }

    #[test]
    fn metadata_checks_labels_and_threshold() {
        let labels = labels().join(",");
        let mut m: BTreeMap<&str, String> = BTreeMap::from([
            ("tablecam.kind", "classifier".to_string()),
            ("tablecam.version", "1".to_string()),
            ("tablecam.patch", "40".to_string()),
            ("tablecam.labels", labels.clone()),
        ]);
        let path = Path::new("models/classifier.onnx");
        let check = |m: &BTreeMap<&str, String>| min_confidence_from_metadata(path, |k| m.get(k).cloned());
        assert_eq!(check(&m).unwrap(), DEFAULT_MIN_CONFIDENCE);
        m.insert("tablecam.min_confidence", "0.8".into());
        assert_eq!(check(&m).unwrap(), 0.8);
        m.insert("tablecam.labels", labels.trim_end_matches(",unknown").to_string());
        let e = check(&m).unwrap_err().to_string();
        assert_eq!(
            e,
            "models/classifier.onnx: expected 54 labels in tablecam.labels, found 53; retrain with `make train` or \
             restore the committed models/classifier.onnx"
        );
        m.insert("tablecam.labels", labels.replace("2D,2C", "2C,2D"));
        assert!(check(&m).unwrap_err().to_string().contains("tablecam.labels[0] is \"2C\", expected \"2D\""));
        m.insert("tablecam.labels", labels);
        m.insert("tablecam.patch", "64".into());
        assert!(check(&m).unwrap_err().to_string().contains("tablecam.patch is \"64\""));
    }

    #[test]
    fn card_corner_metadata_must_name_this_builds_region() {
        let m: BTreeMap<&str, String> = BTreeMap::from([
            ("tablecam.kind", "classifier".to_string()),
            ("tablecam.version", "2".to_string()),
            ("tablecam.patch", "48x32".to_string()),
            ("tablecam.patch_kind", "card_corner".to_string()),
            ("tablecam.corner", "0.32,0.46".to_string()),
            ("tablecam.labels", labels().join(",")),
        ]);
        let path = Path::new("m.onnx");
        let kind = |m: &BTreeMap<&str, String>| patch_kind_from_metadata(path, |k| m.get(k).cloned());
        assert_eq!(kind(&m).unwrap(), PatchKind::CardCorner(CornerCut::INDEX));
        assert_eq!(kind(&m).unwrap().shape(), (48, 32));
        let mut other = m.clone();
        other.insert("tablecam.corner", "0.3,0.4".into());
        assert!(kind(&other).unwrap_err().to_string().contains("tablecam.corner is \"0.3,0.4\""));
        // the whole card: region 1,1 at 64x40, and only at that size
        let mut face = m.clone();
        face.insert("tablecam.corner", "1,1".into());
        assert!(kind(&face).unwrap_err().to_string().contains("at tablecam.patch \"48x32\""));
        face.insert("tablecam.patch", "64x40".into());
        assert_eq!(kind(&face).unwrap(), PatchKind::CardCorner(CornerCut::FACE));
        assert_eq!(kind(&face).unwrap().shape(), (64, 40));
        // index glyph views: region 1,1 at 48x32, and only that
        let mut glyph = m.clone();
        glyph.insert("tablecam.patch_kind", "index_glyphs".into());
        assert!(kind(&glyph).unwrap_err().to_string().contains("tablecam.corner is \"0.32,0.46\", expected \"1,1\""));
        glyph.insert("tablecam.corner", "1,1".into());
        assert_eq!(kind(&glyph).unwrap(), PatchKind::IndexGlyphs);
        assert_eq!(kind(&glyph).unwrap().shape(), (48, 32));
        assert_eq!(kind(&glyph).unwrap().corner_cut(), None, "a glyph classifier reads no card corner");
        glyph.insert("tablecam.patch", "64x40".into());
        assert!(kind(&glyph).unwrap_err().to_string().contains("tablecam.patch is \"64x40\", expected \"48x32\""));
        let mut v3 = m.clone();
        v3.insert("tablecam.version", "3".into());
        assert!(kind(&v3).unwrap_err().to_string().contains("expected \"1\" (index boxes) or \"2\" (card corners)"));
    }

    fn p(x: f64, y: f64) -> Point {
        Point::new(x, y)
    }

    #[test]
    fn corner_views_start_on_a_short_edge_half_a_turn_apart() {
        // a card lying across the image (long side horizontal) and one standing up
        for quad in [
            [p(0.0, 0.0), p(88.0, 0.0), p(88.0, 63.0), p(0.0, 63.0)],
            [p(0.0, 0.0), p(63.0, 0.0), p(63.0, 88.0), p(0.0, 88.0)],
        ] {
            let [a, b] = corner_quads(&quad);
            for v in [a, b] {
                assert!(v[0].dist(v[1]) < v[1].dist(v[2]), "first edge is the short side: {v:?}");
                // clockwise on screen (y down): positive cross product of the first two edges
                let cross = (v[1].x - v[0].x) * (v[2].y - v[1].y) - (v[1].y - v[0].y) * (v[2].x - v[1].x);
                assert!(cross > 0.0, "{v:?}");
            }
            assert_eq!(a[0], b[2]);
            assert_eq!(a[2], b[0]);
            // the turned views read the other diagonal, starting on a long edge
            let [c, d] = corner_quads_turned(&quad);
            for v in [c, d] {
                assert!(v[0].dist(v[1]) > v[1].dist(v[2]), "first edge is the long side: {v:?}");
                assert!(v[0] != a[0] && v[0] != b[0], "{v:?} reads a corner of {a:?} / {b:?}");
            }
            assert_eq!(c[0], d[2]);
        }
    }

    #[test]
    fn a_widened_view_keeps_its_read_corner_and_grows_in_the_cards_own_frame() {
        // a card seen square on: the view grows by the scale about its first corner
        let view = [p(10.0, 20.0), p(73.0, 20.0), p(73.0, 108.0), p(10.0, 108.0)];
        let w = widened_view(&view, 1.5).unwrap();
        for (got, want) in w.iter().zip([p(10.0, 20.0), p(104.5, 20.0), p(104.5, 152.0), p(10.0, 152.0)]) {
            assert!(got.dist(want) < 1e-9, "{w:?}");
        }
        // scale 1 is the view itself, and in perspective the widened view's corner patch maps
        // patch pixels to the card-frame region scaled: the wide patch's half-way pixel is the
        // plain patch's last
        let persp = [p(10.0, 20.0), p(42.0, 22.0), p(40.0, 66.0), p(8.0, 64.0)];
        let same = widened_view(&persp, 1.0).unwrap();
        assert!(same.iter().zip(&persp).all(|(a, b)| a.dist(*b) < 1e-9), "{same:?}");
        let plain = Homography(corner_homography(&persp, CornerCut::INDEX).unwrap());
        let wide = Homography(corner_homography(&widened_view(&persp, 2.0).unwrap(), CornerCut::INDEX).unwrap());
        // continuous patch coordinates (x + 0.5, y + 0.5): (32, 48) plain is (16, 24) wide
        let (a, b) = (plain.apply(p(31.5, 47.5)).unwrap(), wide.apply(p(15.5, 23.5)).unwrap());
        assert!(a.dist(b) < 1e-9, "{a:?} vs {b:?}");
        assert!(widened_view(&[p(1.0, 1.0); 4], 1.2).is_none());
    }

    #[test]
    fn corner_homography_is_the_training_scripts_map() {
        // models/training/corners.py corner_map on the same quad (printed by the script)
        let m =
            corner_homography(&[p(10.0, 20.0), p(42.0, 22.0), p(40.0, 66.0), p(8.0, 64.0)], CornerCut::INDEX).unwrap();
        let at = |x: f64, y: f64| {
            let w = m[2][0] * x + m[2][1] * y + m[2][2];
            ((m[0][0] * x + m[0][1] * y + m[0][2]) / w, (m[1][0] * x + m[1][1] * y + m[1][2]) / w)
        };
        for (x, y, ex, ey) in [
            (0.0, 0.0, 9.650416666666667, 19.720833333333335),
            (31.0, 0.0, 19.570416666666667, 20.340833333333336),
            (0.0, 47.0, 8.749583333333334, 39.539166666666674),
            (31.0, 47.0, 18.669583333333335, 40.15916666666667),
            (16.0, 24.0, 14.310416666666667, 30.160833333333336),
        ] {
            let (gx, gy) = at(x, y);
            assert!((gx - ex).abs() < 1e-9 && (gy - ey).abs() < 1e-9, "({x}, {y}) → ({gx}, {gy}), want ({ex}, {ey})");
        }
        assert!(corner_homography(&[p(1.0, 1.0); 4], CornerCut::INDEX).is_none());
    }

    #[test]
    fn a_corner_patch_shows_the_marked_corner_upright_whichever_way_the_card_lies() {
        // a white card 120 × 168 px with a red mark at its top-left index position, drawn upright,
        // then the whole image turned a quarter and a half turn
        let mut img = Mat::new_rows_cols_with_default(300, 300, core::CV_8UC3, core::Scalar::all(40.0)).unwrap();
        imgproc::rectangle(&mut img, Rect::new(90, 66, 120, 168), core::Scalar::all(255.0), -1, imgproc::LINE_8, 0)
            .unwrap();
        imgproc::rectangle(
            &mut img,
            Rect::new(96, 72, 14, 24),
            core::Scalar::new(0.0, 0.0, 255.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let quad = [p(90.0, 66.0), p(210.0, 66.0), p(210.0, 234.0), p(90.0, 234.0)];
        let turn = |q: Point, k: i32| match k {
            0 => q,
            1 => p(300.0 - q.y, q.x), // cv::ROTATE_90_CLOCKWISE of a 300² image
            _ => p(300.0 - q.x, 300.0 - q.y),
        };
        for (k, code) in [(0, None), (1, Some(core::ROTATE_90_CLOCKWISE)), (2, Some(core::ROTATE_180))] {
            let mut turned = Mat::default();
            match code {
                Some(c) => core::rotate(&img, &mut turned, c).unwrap(),
                None => turned = img.try_clone().unwrap(),
            }
            let q = crate::locate::order_quad(quad.map(|c| turn(c, k)));
            let (ph, pw) = CORNER_PATCH;
            let red_share = |view: &[Point; 4]| {
                let mut out = vec![0f32; 3 * ph * pw];
                cut_corner_patch(&turned, view, CornerCut::INDEX, &mut out).unwrap();
                // red where the mark should be: the patch's top-left quarter
                let (mut red, mut n) = (0, 0);
                for y in 0..ph / 2 {
                    for x in 0..pw / 2 {
                        n += 1;
                        red += usize::from(out[y * pw + x] > 0.8 && out[ph * pw + y * pw + x] < 0.2);
                    }
                }
                red as f64 / n as f64
            };
            let [a, b] = corner_quads(&q);
            let (ra, rb) = (red_share(&a), red_share(&b));
            // one view reads the marked corner upright, the other the unmarked far corner
            assert!(ra.max(rb) > 0.3 && ra.min(rb) == 0.0, "turn {k}: red {ra:.2} / {rb:.2}");
        }
    }

    #[test]
    fn a_deck_is_enrolled_only_where_the_model_lists_its_design() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let committed = root.join("models/classifier.onnx");
        // a training design of the committed classifier, and a test design it never saw
        let designs = trained_designs(&committed).unwrap();
        assert!(designs.iter().any(|d| d == "proc-mono-slim"));
        assert!(!designs.iter().any(|d| d == "kde-dondorf"));
        // the fixture says nothing: no deck is enrolled
        assert!(trained_designs(&root.join("models/fixtures/classifier_tiny.onnx")).unwrap().is_empty());
        assert_eq!(designs_from_metadata(Some(" a, b ,,c".into())), ["a", "b", "c"]);
        assert!(designs_from_metadata(None).is_empty());
    }

    #[test]
    fn the_committed_classifiers_say_they_run_in_8_bits_and_the_fixtures_in_float() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let load = |p: &str| Classifier::load(root.join(p), &SessionOptions::default()).unwrap();
        for (path, what) in [
            (DEFAULT_PATH, "card corner 48x32, 8-bit, threshold 0.999"),
            (DEFAULT_FACE_PATH, "whole card 64x40, 8-bit, threshold 0.999"),
            (DEFAULT_GLYPH_PATH, "index glyphs 48x32, 8-bit, threshold 0.998"),
        ] {
            let c = load(path);
            assert_eq!(c.describe(), what, "{path}");
            // the float original it was made from, for people tracing a model
            assert!(c.quantized().is_some_and(|q| q.contains("sha256")), "{path}: {:?}", c.quantized());
        }
        let tiny = load("models/fixtures/classifier_corner_tiny.onnx");
        assert!(tiny.quantized().is_none());
        assert!(tiny.describe().contains(", float, "), "{}", tiny.describe());
    }
}
