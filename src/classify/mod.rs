//! The index-corner classifier: which card a printed rank-and-suit corner shows.
//!
//! The model (`models/classifier.onnx`) follows this contract, checked at load
//! ([`Classifier::load`]):
//! - input `patch`: float32 `[N, 3, 40, 40]`, RGB, pixel / 255 — see [`patch_rect`] for what a
//!   patch is;
//! - output `probs`: float32 `[N, 54]`, softmax over [`labels`]: the 52 cards in
//!   [`Card::all`] order, then `back`, then `unknown`;
//! - metadata `tablecam.kind` = `classifier`, `tablecam.version` = `1`, `tablecam.patch` = `40`,
//!   `tablecam.labels` (the labels, comma-separated) and `tablecam.min_confidence` (the calibrated
//!   threshold below which the answer is `unknown`; 0.9 when absent).
//!
//! [`combine`] turns the probabilities of a card's patches into one identity.
use std::fmt;
use std::path::{Path, PathBuf};

use ndarray::{Array2, ArrayView4, Ix2};
use opencv::core::{self, Mat, Rect};
use opencv::imgproc;
use opencv::prelude::*;

use crate::calib::Point;
use crate::onnx::{self, Dim, Model, ModelContract, OnnxError, SessionOptions, TensorSpec};
use crate::rules::Card;

/// Where the trained classifier lives, relative to the project root.
pub const DEFAULT_PATH: &str = "models/classifier.onnx";
/// The `tablecam.version` of the contract this build reads.
pub const CONTRACT_VERSION: &str = "1";
/// Side of a patch at the network input, pixels.
pub const PATCH: usize = 40;
/// A patch's side relative to the larger side of its index box.
pub const PATCH_SCALE: f64 = 1.3;
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
    let resized = if resized.is_continuous() { resized } else { resized.try_clone()? };
    let bytes = resized.data_bytes()?;
    let plane = PATCH * PATCH;
    for (i, px) in bytes.chunks_exact(3).enumerate() {
        // BGR in, RGB out.
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
    /// Whether two confident patches named different labels.
    pub conflict: bool,
}

fn argmax(p: &[f32]) -> (usize, f32) {
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
///    are summed over the 53 labels other than `unknown` and normalised (softmax).
/// 4. The best label wins if its combined probability is ≥ `min_confidence`; else `unknown`.
pub fn combine(patches: &[&[f32]], min_confidence: f32) -> Verdict {
    let informative: Vec<&[f32]> =
        patches.iter().copied().filter(|p| p.len() == NUM_LABELS && argmax(p).0 != UNKNOWN).collect();
    if informative.is_empty() {
        return Verdict { identity: CardIdentity::Unknown, confidence: 0.0, informative: 0, conflict: false };
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
    let confident: Vec<usize> =
        informative.iter().map(|p| argmax(p)).filter(|&(_, v)| v >= min_confidence).map(|(i, _)| i).collect();
    let conflict = confident.iter().any(|&i| i != confident[0]);
    let identity =
        if conflict || confidence < min_confidence { CardIdentity::Unknown } else { CardIdentity::from_label(best) };
    Verdict { identity, confidence, informative: informative.len(), conflict }
}

// ---------------------------------------------------------------------------------------------
// The model
// ---------------------------------------------------------------------------------------------

/// The input and output specs of the classifier contract.
pub fn contract() -> ModelContract {
    ModelContract {
        input: TensorSpec::f32("patch", [Dim::Any, Dim::Fixed(3), Dim::Fixed(PATCH as i64), Dim::Fixed(PATCH as i64)]),
        output: TensorSpec::f32("probs", [Dim::Any, Dim::Fixed(NUM_LABELS as i64)]),
    }
}

/// Checks the classifier's metadata (`get` looks a key up) and returns its `min_confidence`; the
/// error names `path` and what differs.
pub fn min_confidence_from_metadata(path: &Path, get: impl Fn(&str) -> Option<String>) -> Result<f32, ClassifyError> {
    let bad = |problem: String| ClassifyError::Metadata { path: path.to_path_buf(), problem };
    for (key, want) in
        [("tablecam.kind", "classifier"), ("tablecam.version", CONTRACT_VERSION), ("tablecam.patch", "40")]
    {
        match get(key) {
            Some(v) if v.trim() == want => {}
            Some(v) => return Err(bad(format!("metadata {key} is {v:?}, expected {want:?}"))),
            None => return Err(bad(format!("metadata {key} is missing, expected {want:?}"))),
        }
    }
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

/// The classifier model, checked against its contract.
#[derive(Debug)]
pub struct Classifier {
    model: Model,
    min_confidence: f32,
}

impl Classifier {
    /// Loads and checks `path` (input, output, metadata); every error names the file.
    pub fn load(path: impl AsRef<Path>, options: &SessionOptions) -> Result<Classifier, ClassifyError> {
        let model = onnx::load_model_with(path.as_ref(), contract(), options)?;
        let min_confidence = min_confidence_from_metadata(model.path(), |k| model.metadata(k))?;
        Ok(Classifier { model, min_confidence })
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

    /// Classifies a batch of patches `[N, 3, 40, 40]` in one run; returns `[N, 54]`.
    pub fn classify(&mut self, patches: ArrayView4<'_, f32>) -> Result<Array2<f32>, ClassifyError> {
        let n = patches.shape()[0];
        if n == 0 {
            return Ok(Array2::zeros((0, NUM_LABELS)));
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
        // Below the threshold even alone.
        let weak = probs(&[(card("7D"), 0.6), (card("7H"), 0.3)]);
        let v = combine(&[&weak], 0.9);
        assert_eq!(v.identity, CardIdentity::Unknown);
        assert!((v.confidence - 0.6).abs() < 0.01, "{v:?}");
        // Patches that see nothing (argmax unknown) are ignored, not counted against the card.
        let blank = probs(&[(UNKNOWN, 0.9)]);
        let v = combine(&[&a, &blank], 0.9);
        assert_eq!((v.identity, v.informative), (CardIdentity::Card("AS".parse().unwrap()), 1));
        assert_eq!(combine(&[&blank], 0.9).identity, CardIdentity::Unknown);
        assert_eq!(combine(&[], 0.9).confidence, 0.0);
        // A back is a label like the others.
        assert_eq!(combine(&[&probs(&[(BACK, 0.99)])], 0.9).identity, CardIdentity::Back);
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
}
