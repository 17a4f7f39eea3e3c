//! Card recognition: one frame in, the cards in it out.
//!
//! ```no_run
//! use tablecam::recognize::Recognizer;
//!
//! let mut recognizer = Recognizer::new("models/locator.onnx", "models/classifier.onnx")?;
//! let frame = opencv::imgcodecs::imread("table.jpg", opencv::imgcodecs::IMREAD_COLOR)?;
//! for card in recognizer.recognize(&frame, None)? {
//!     println!("{} {:.2} {:?}", card.card, card.confidence, card.quad);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Steps ([`Recognizer::recognize`]; docs/recognition.md has the reasons):
//! 1. scale the frame so that cards have the size the locator was trained on ([`plan_input`]);
//! 2. run the locator ([`crate::locate`]) and map cards and index corners back to frame pixels;
//! 3. give each index corner to the highest-scoring card whose quad contains its centre; a
//!    face-up card with fewer than two corners also gets patches where its corners should be;
//! 4. classify every patch of the frame in one batch ([`crate::classify`]) and combine each
//!    card's patches ([`crate::classify::combine`]); face-down cards are `back`;
//! 5. pair the corners that lie on no card into cards of their own ([`Source::IndexOnly`]);
//! 6. with a calibration, drop what is off the table and refine card quads to the exact card
//!    rectangle on the table plane.
//!
//! By default steps 1–2 are replaced: with a calibration cards are measured on the rectified
//! table plane ([`crate::locate::plane`], against the camera's empty table when it has one,
//! [`Recognizer::set_table_reference`]); without one, a card-corner classifier reads the card
//! outlines found in the photo ([`crate::locate::photo`]) at both diagonals, and steps 3–6 do
//! not apply. docs/recognition.md has the measurements.
pub mod cli;
pub mod cover;
pub mod eval;
pub mod nudge;
mod pips;
pub mod table_glyphs;
pub mod twins;
pub mod workers;

use std::path::{Path, PathBuf};
use std::time::Instant;

use ndarray::{Array4, ArrayView2};
use opencv::core::{self, Mat, Rect};
use opencv::imgproc;
use opencv::prelude::*;
use serde::Serialize;

use crate::calib::{layout, Point, Polygon, TableGeometry};
pub use crate::classify::CardIdentity;
use crate::classify::{self, Classifier, ClassifyError, PatchKind};
use crate::locate::geometry::{bounding_box, box_quad, intersect_convex, min_area_rect, polygon_area};
use crate::locate::{self, order_quad, LocateError, Locator, Quad, RotatedRect};
use crate::onnx::SessionOptions;
use crate::rules::{Card, Rank};
pub use twins::TwinPrint;

/// Errors of recognition, its command line and its evaluation.
#[derive(Debug, thiserror::Error)]
pub enum RecognizeError {
    /// The locator failed to load or run.
    #[error(transparent)]
    Locate(#[from] LocateError),
    /// The classifier failed to load or run.
    #[error(transparent)]
    Classify(#[from] ClassifyError),
    /// An OpenCV call failed.
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done.
        context: String,
        /// OpenCV's error.
        source: opencv::Error,
    },
    /// [`RecognizerOptions::wide_corner_scale`] outside 1–2.
    #[error("a wide corner scale of {0} is out of range: use 1 to 2 times the corner cut (1.15 by default; 0 on the command line turns it off)")]
    WideCornerScale(f64),
    /// The frame is not an 8-bit BGR image.
    #[error("frames must be 8-bit BGR (OpenCV type {expected}); got type {got}")]
    FrameType {
        /// `CV_8UC3`.
        expected: i32,
        /// The type given.
        got: i32,
    },
    /// The frame's size differs from the calibration's.
    #[error("the frame is {got_w}×{got_h} but the calibration is for {cal_w}×{cal_h}; use the calibration of this camera at this resolution")]
    CalibrationSize {
        /// Frame width.
        got_w: i32,
        /// Frame height.
        got_h: i32,
        /// Calibration width.
        cal_w: u32,
        /// Calibration height.
        cal_h: u32,
    },
    /// An image file could not be read or decoded.
    #[error("{}: {message}", path.display())]
    Image {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A dataset file is malformed or missing.
    #[error("{}: {message}", path.display())]
    Dataset {
        /// The file or folder.
        path: PathBuf,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A calibration file could not be loaded.
    #[error(transparent)]
    Calibration(#[from] crate::calib::CalibError),
}

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> RecognizeError + '_ {
    move |source| RecognizeError::OpenCv { context: context.to_string(), source }
}

/// Where a detection came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Source {
    /// A card found by the locator (its quad is the card's outline).
    Card,
    /// Index corners with no card around them (fanned or overlapping cards): the quad spans the
    /// corners only.
    IndexOnly,
}

/// One card found in a frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DetectedCard {
    /// What it is.
    pub card: CardIdentity,
    /// For a face or a back from the classifier: the combined probability of that label; for a
    /// face-down card: the locator's heat; for `unknown`: the best label's combined probability
    /// (see [`crate::classify::Verdict`]).
    pub confidence: f32,
    /// Whether the card shows its face.
    pub face_up: bool,
    /// Corners in frame pixels (the [quadrilateral convention](crate::locate::geometry)).
    pub quad: [Point; 4],
    /// The index corners that were read, `[x1, y1, x2, y2]` in frame pixels.
    pub index_boxes: Vec<[f64; 4]>,
    /// Whether the locator found the card or only its corners.
    pub source: Source,
    /// The face the classifier leans to when it did not name one (`card` is `unknown` and
    /// `confidence` is this reading's probability), else the named card or `None`
    /// ([`classify::Verdict::reading`]). Not part of `detect --json`: it is no identity.
    #[serde(skip)]
    pub reading: Option<Card>,
    /// The rank the classifiers lean to, with its probability summed over the suits
    /// ([`classify::Verdict::rank`]); `None` for a back. Not part of `detect --json`.
    #[serde(skip)]
    pub rank: Option<(Rank, f32)>,
    /// Whether another card of the frame is read as the same face, and how their prints
    /// compare ([`twins`]). Not part of `detect --json`.
    #[serde(skip)]
    pub twin: TwinPrint,
}

/// How frames are scaled for the locator, and how its sessions run.
#[derive(Debug, Clone, PartialEq)]
pub struct RecognizerOptions {
    /// ONNX Runtime session options of both models (one intra-op thread by default).
    pub session: SessionOptions,
    /// Without calibration, the frame's longer side is scaled to this many pixels.
    pub long_side: u32,
    /// With calibration, the frame is scaled so that a card's long side at the table centre
    /// measures this many pixels (what the locator is trained on).
    pub card_long_px: f64,
    /// The network input's longer side never exceeds this (the card size gives way). 2560 keeps
    /// cards at 72 px for a 1080p camera over the whole standard table (scale ≈ 1.3).
    pub max_input_side: u32,
    /// Fit each located card's rectangle to the image's edges ([`locate::refine`]): the
    /// locator's centres are good, its orientation and size are coarse.
    pub refine_edges: bool,
    /// Find cards with the locator network instead of the finders that need no learned model:
    /// measuring them on the rectified table plane with a calibration ([`locate::plane`]), and
    /// outlining them in the photo without one ([`locate::photo`], read by a card-corner
    /// classifier).
    pub network_locator: bool,
    /// A printed index whose larger side measures fewer frame pixels than this is not read: the
    /// card is reported face up and `unknown`. Rank and suit in fewer pixels are guesses, and a
    /// misread costs far more than a no-read (the tracker waits for a better frame).
    pub min_index_px: f64,
    /// Without calibration, also read the index corners that no card outline surrounds (the
    /// cards of a fan or a pile, [`locate::glyphs`]).
    pub index_glyphs: bool,
    /// A second classifier that reads each located card's *whole face* upright
    /// ([`classify::CornerCut::FACE`]); its two views are combined with the index corners', and
    /// name a card only where those lean to it too ([`classify::combine_models`]). At 1080p over
    /// a whole table an index prints 5–25 px high while the pips stay countable
    /// (docs/recognition.md, "Whole-card classifier"). Read on table-plane cards, known quads and
    /// photo outlines; not on index strips found without an outline.
    pub face_classifier: Option<PathBuf>,
    /// A classifier of index glyph views ([`PatchKind::IndexGlyphs`]) that reads the index
    /// proposals of uncalibrated photos ([`locate::glyphs`]) instead of the card classifier's
    /// guessed card corners (docs/recognition.md, "the glyph classifier"); on a calibrated
    /// table, the indexes found in the corners of the cards the card classifiers leave unnamed
    /// ([`table_glyphs`]).
    pub glyph_classifier: Option<PathBuf>,
    /// Read the index corners of the face-up cards the card classifiers leave unnamed a second
    /// time, cut this many times wider ([`classify::widened_view`]), and combine both readings
    /// with the whole face's. The card-corner cut fits the largest index of the training designs
    /// (0.27 × 0.44 of the card); a casino deck with a larger ("jumbo") index overflows it, and
    /// the classifier answers `unknown` to a print it sees cut off (docs/recognition.md, "Wider
    /// corners"). `None` turns it off.
    pub wide_corner_scale: Option<f64>,
    /// Read a face-up card left unnamed where it overlaps another card again from its outline
    /// moved ±1 and ±2 times this share of its short side along the line to its neighbours
    /// ([`nudge`]): a fanned hand's middle card is placed by its one visible inner edge, which
    /// can snap to a frame line printed inside the next card's edge (docs/recognition.md,
    /// "Nudged outlines"). `None` turns it off.
    pub nudge: Option<f64>,
    /// Without calibration, read a square photo also as each usual camera aspect squeezed
    /// square, and keep the reading whose cards the others confirm best ([`SQUARE_PHOTO_ASPECTS`],
    /// `best_aspect_reading`): a photo stretched to a square by an export has lost its aspect.
    pub square_aspects: bool,
}

/// The default [`RecognizerOptions::min_index_px`]; docs/recognition.md gives the measurement.
pub const MIN_INDEX_PX: f64 = 14.0;
/// The default [`RecognizerOptions::wide_corner_scale`] (docs/recognition.md, "Wider corners":
/// 1.25 read as many cards with more read wrong).
pub const WIDE_CORNER_SCALE: f64 = 1.15;
/// The default [`RecognizerOptions::nudge`] (docs/recognition.md, "Nudged outlines").
pub const NUDGE: f64 = 0.1;

/// Combined probability of a face (any card, not `back`) from a card-corner classifier above
/// which a card the table plane's white share took for a back is face up; below
/// `1 - FACE_OVERRULE`, a card it took for a face is a back.
pub const FACE_OVERRULE: f32 = 0.99;

impl Default for RecognizerOptions {
    fn default() -> Self {
        RecognizerOptions {
            session: SessionOptions::default(),
            long_side: 640,
            card_long_px: 72.0,
            max_input_side: 2560,
            refine_edges: true,
            network_locator: false,
            index_glyphs: true,
            min_index_px: MIN_INDEX_PX,
            face_classifier: None,
            glyph_classifier: None,
            wide_corner_scale: Some(WIDE_CORNER_SCALE),
            nudge: Some(NUDGE),
            square_aspects: true,
        }
    }
}

/// Milliseconds spent in each stage of one [`Recognizer::recognize_timed`] call.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct StageTimes {
    /// Scaling and converting the frame.
    pub prepare_ms: f64,
    /// The locator network and its decoding.
    pub locator_ms: f64,
    /// Cutting patches and the classifier network.
    pub classifier_ms: f64,
    /// Patches classified.
    pub patches: usize,
    /// Everything.
    pub total_ms: f64,
    /// Where `classifier_ms` (and, on a calibrated table, the twin comparison after it) went:
    /// each reading step of [`Recognizer::recognize`] in turn.
    pub steps: ReadStepTimes,
}

/// Milliseconds of each reading step after the locator (docs/recognition.md, "The steps of
/// `Recognizer::recognize`"), so that a slow frame tells which step made it slow.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ReadStepTimes {
    /// Cutting the index corners of every located card and the corner classifier.
    pub corners_ms: f64,
    /// The whole-card classifier over the cards the corners leave in doubt.
    pub faces_ms: f64,
    /// Combining the views and setting aside covered corners.
    pub cover_ms: f64,
    /// Blank corners read again cut wider.
    pub wider_ms: f64,
    /// Index glyphs searched and read in the corners of cards still unnamed.
    pub glyphs_ms: f64,
    /// Nudged outlines of face-up cards still unnamed.
    pub nudge_ms: f64,
    /// Comparing the prints of cards read as the same face.
    pub twins_ms: f64,
}

impl std::fmt::Display for ReadStepTimes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "corners {:.1}, faces {:.1}, covered {:.1}, wider {:.1}, glyphs {:.1}, nudged {:.1}, twins {:.1} ms",
            self.corners_ms, self.faces_ms, self.cover_ms, self.wider_ms, self.glyphs_ms, self.nudge_ms, self.twins_ms
        )
    }
}

// ---------------------------------------------------------------------------------------------
// Input scaling
// ---------------------------------------------------------------------------------------------

/// How a frame becomes the locator's input: the crop (frame pixels), its size after resizing,
/// and the padded network size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InputPlan {
    /// The crop of the frame: left, top, width, height.
    pub crop: [i32; 4],
    /// Size of the crop after resizing (before padding).
    pub resized: [i32; 2],
    /// Network input width and height (multiples of 32; the padding is the replicated edge).
    pub net: [usize; 2],
}

impl InputPlan {
    /// Horizontal and vertical scale, network pixels per frame pixel.
    pub fn scale(&self) -> (f64, f64) {
        (f64::from(self.resized[0]) / f64::from(self.crop[2]), f64::from(self.resized[1]) / f64::from(self.crop[3]))
    }

    /// A network-input point in frame pixels.
    pub fn to_frame(&self, p: Point) -> Point {
        let (sx, sy) = self.scale();
        Point::new(f64::from(self.crop[0]) + p.x / sx, f64::from(self.crop[1]) + p.y / sy)
    }

    /// Whether a network-input point lies on the resized frame rather than the padding.
    pub fn in_content(&self, p: Point) -> bool {
        p.x >= 0.0 && p.y >= 0.0 && p.x <= f64::from(self.resized[0]) && p.y <= f64::from(self.resized[1])
    }
}

fn round_up(v: i32, m: i32) -> usize {
    (((v.max(1) + m - 1) / m) * m) as usize
}

fn plan_for(crop: [i32; 4], scale: f64) -> InputPlan {
    let rw = ((f64::from(crop[2]) * scale).round() as i32).max(1);
    let rh = ((f64::from(crop[3]) * scale).round() as i32).max(1);
    let m = locate::INPUT_MULTIPLE as i32;
    InputPlan { crop, resized: [rw, rh], net: [round_up(rw, m), round_up(rh, m)] }
}

/// Whether a table point is on the standard table (the felt of [`layout`]'s semicircular table)
/// or within `margin` mm of it.
pub fn on_table(p: Point, margin: f64) -> bool {
    p.y >= -margin && p.x.hypot(p.y) <= layout::TABLE_RADIUS_MM + margin
}

/// Image pixels per table millimetre around a table point (square root of the homography's
/// local area scale, lens included).
pub fn px_per_mm(geometry: &TableGeometry, p: Point) -> Option<f64> {
    let d = 5.0;
    let a = geometry.table_to_image(p)?;
    let b = geometry.table_to_image(Point::new(p.x + d, p.y))?;
    let c = geometry.table_to_image(Point::new(p.x, p.y + d))?;
    let det = ((b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)) / (d * d);
    let s = det.abs().sqrt();
    (s.is_finite() && s > 0.0).then_some(s)
}

/// The table point the card scale is taken at: the mean of the zones' centroids (the playing
/// area), or the table point at the image centre when there are no zones.
pub fn table_centre(geometry: &TableGeometry) -> Option<Point> {
    let zones = &geometry.calibration.zones;
    if zones.is_empty() {
        let c = &geometry.calibration;
        return geometry.image_to_table(Point::new(f64::from(c.image_width) / 2.0, f64::from(c.image_height) / 2.0));
    }
    let n = zones.len() as f64;
    let (x, y) = zones.iter().map(|z| z.polygon_mm.centroid()).fold((0.0, 0.0), |(x, y), c| (x + c.x, y + c.y));
    Some(Point::new(x / n, y / n))
}

/// Chooses the crop and scale of a `width` × `height` frame.
///
/// Without calibration the longer side becomes `long_side` pixels. With one, the scale makes a
/// card's long side at the [`table_centre`] measure `card_long_px`, and the crop is the bounding
/// box of the frame pixels that see the table (sampled on a 33 × 19 grid, then widened by a grid
/// step and a card length); the network side is capped at `max_input_side`.
pub fn plan_input(
    width: i32,
    height: i32,
    calibration: Option<&TableGeometry>,
    options: &RecognizerOptions,
) -> InputPlan {
    let full = [0, 0, width.max(1), height.max(1)];
    let plain = plan_for(full, f64::from(options.long_side) / f64::from(width.max(height).max(1)));
    let Some(g) = calibration else {
        return plain;
    };
    let card_long_mm = g.calibration.card_size_mm[1];
    let Some(card_px) = table_centre(g).and_then(|c| px_per_mm(g, c)).map(|s| s * card_long_mm) else {
        return plain;
    };
    let (nx, ny) = (32, 18);
    let (mut x1, mut y1, mut x2, mut y2) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for gy in 0..=ny {
        for gx in 0..=nx {
            let p = Point::new(
                f64::from(gx) / f64::from(nx) * f64::from(width - 1),
                f64::from(gy) / f64::from(ny) * f64::from(height - 1),
            );
            if g.image_to_table(p).is_some_and(|t| on_table(t, card_long_mm)) {
                (x1, y1, x2, y2) = (x1.min(p.x), y1.min(p.y), x2.max(p.x), y2.max(p.y));
            }
        }
    }
    let crop = if x1 > x2 {
        full
    } else {
        let grow_x = f64::from(width) / f64::from(nx) + card_px;
        let grow_y = f64::from(height) / f64::from(ny) + card_px;
        let l = (x1 - grow_x).floor().max(0.0) as i32;
        let t = (y1 - grow_y).floor().max(0.0) as i32;
        let r = ((x2 + grow_x).ceil() as i32).min(width);
        let b = ((y2 + grow_y).ceil() as i32).min(height);
        [l, t, (r - l).max(1), (b - t).max(1)]
    };
    let mut scale = options.card_long_px / card_px;
    let longest = f64::from(crop[2].max(crop[3]));
    if longest * scale > f64::from(options.max_input_side) {
        scale = f64::from(options.max_input_side) / longest;
    }
    if !(scale.is_finite() && scale > 0.0) {
        return plain;
    }
    plan_for(crop, scale)
}

/// Cuts, resizes (INTER_AREA when shrinking, INTER_LINEAR when enlarging) and pads (replicated
/// edge, right and bottom) a BGR frame into the locator's `[1, 3, H, W]` RGB / 255 input.
pub fn prepare_input(image: &Mat, plan: &InputPlan) -> Result<Array4<f32>, RecognizeError> {
    let mut input = Array4::<f32>::zeros((0, 3, 0, 0));
    prepare_input_into(image, plan, &mut input)?;
    Ok(input)
}

/// [`prepare_input`] into `input`, reallocated only when the network size changes (a fresh
/// 10-30 MB tensor per frame costs its page faults every time).
pub fn prepare_input_into(image: &Mat, plan: &InputPlan, input: &mut Array4<f32>) -> Result<(), RecognizeError> {
    let [x, y, w, h] = plan.crop;
    let roi = Mat::roi(image, Rect::new(x, y, w, h)).map_err(cv("cropping the frame"))?;
    let [rw, rh] = plan.resized;
    let mut resized = Mat::default();
    let interp = if rw < w { imgproc::INTER_AREA } else { imgproc::INTER_LINEAR };
    imgproc::resize(&roi, &mut resized, core::Size::new(rw, rh), 0.0, 0.0, interp).map_err(cv("resizing the frame"))?;
    let [nw, nh] = plan.net;
    let mut padded = Mat::default();
    core::copy_make_border(
        &resized,
        &mut padded,
        0,
        nh as i32 - rh,
        0,
        nw as i32 - rw,
        core::BORDER_REPLICATE,
        core::Scalar::all(0.0),
    )
    .map_err(cv("padding the frame"))?;
    // OpenCV splits the channels and scales them straight into the tensor's planes: several
    // times faster than a per-pixel loop on the 2-3 Mpixel inputs of calibrated frames.
    let mut bgr = core::Vector::<Mat>::new();
    core::split(&padded, &mut bgr).map_err(cv("splitting the frame"))?;
    if input.shape() != [1, 3, nh, nw] {
        *input = Array4::<f32>::zeros((1, 3, nh, nw));
    }
    let data = input.as_slice_mut().expect("standard layout");
    for (plane, dst) in data.chunks_exact_mut(nw * nh).enumerate() {
        let src = bgr.get(2 - plane).map_err(cv("splitting the frame"))?;
        let mut dst = Mat::new_rows_cols_with_data_mut(nh as i32, nw as i32, dst).map_err(cv("wrapping the input"))?;
        src.convert_to(&mut dst, core::CV_32F, 1.0 / 255.0, 0.0).map_err(cv("scaling the frame"))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The recognizer
// ---------------------------------------------------------------------------------------------

/// A located card in frame pixels.
#[derive(Debug, Clone)]
struct FoundCard {
    rect: RotatedRect,
    quad: Quad,
    score: f32,
    face_up: bool,
    corners: Vec<usize>,
}

/// A located index corner in frame pixels.
#[derive(Debug, Clone)]
struct FoundIndex {
    center: Point,
    bbox: [f64; 4],
}

impl FoundIndex {
    fn size(&self) -> (f64, f64) {
        (self.bbox[2] - self.bbox[0], self.bbox[3] - self.bbox[1])
    }
}

/// The expected index-corner positions of a card, in its normalised frame (see
/// [`RotatedRect::card_point`]), and the index box size as fractions of (short, long) side.
pub const EXPECTED_INDEX: [(f64, f64); 2] = [(0.11, 0.16), (0.89, 0.84)];
/// Index box size as fractions of the card's (short, long) sides.
pub const EXPECTED_INDEX_SIZE: (f64, f64) = (0.16, 0.30);
/// Corners not on a card are paired when their centres are at most this many times the larger
/// side of the larger box apart.
pub const PAIR_DISTANCE: f64 = 6.0;

/// The two models and the frame scaling: frame in, cards out.
#[derive(Debug)]
pub struct Recognizer {
    locator: Locator,
    classifier: Classifier,
    /// [`RecognizerOptions::face_classifier`], loaded.
    face: Option<Classifier>,
    /// [`RecognizerOptions::glyph_classifier`], loaded.
    glyph: Option<Classifier>,
    options: RecognizerOptions,
    /// The locator's input, kept between frames.
    input: Array4<f32>,
    /// The table-plane finder of each calibration seen (its map is costly to build; a worker
    /// of a pool serving several tables sees them all).
    planes: Vec<(crate::calib::Calibration, locate::plane::PlaneFinder)>,
}

impl Recognizer {
    /// Loads both models with the default options; errors name the file and the fix.
    pub fn new(locator: impl AsRef<Path>, classifier: impl AsRef<Path>) -> Result<Recognizer, RecognizeError> {
        Recognizer::with_options(locator, classifier, RecognizerOptions::default())
    }

    /// Loads both models.
    pub fn with_options(
        locator: impl AsRef<Path>,
        classifier: impl AsRef<Path>,
        options: RecognizerOptions,
    ) -> Result<Recognizer, RecognizeError> {
        if let Some(scale) = options.wide_corner_scale.filter(|s| !(1.0..=2.0).contains(s)) {
            return Err(RecognizeError::WideCornerScale(scale));
        }
        let locator = Locator::load(locator, &options.session)?;
        let classifier = Classifier::load(classifier, &options.session)?;
        if classifier.patch_kind() == PatchKind::IndexGlyphs {
            return Err(RecognizeError::Classify(ClassifyError::Metadata {
                path: classifier.path().to_path_buf(),
                problem: "is a glyph classifier (tablecam.patch_kind \"index_glyphs\"): it reads index glyphs, not \
                          cards; pass it as the glyph classifier (--glyph-classifier) and a card-corner classifier \
                          as the classifier"
                    .into(),
            }));
        }
        let face = options.face_classifier.as_deref().map(|p| load_face_classifier(p, &options.session)).transpose()?;
        let glyph =
            options.glyph_classifier.as_deref().map(|p| load_glyph_classifier(p, &options.session)).transpose()?;
        Ok(Recognizer {
            locator,
            classifier,
            face,
            glyph,
            options,
            input: Array4::zeros((0, 3, 0, 0)),
            planes: Vec::new(),
        })
    }

    /// Gives the table-plane finder of `g`'s camera its empty table (a frame of that camera with
    /// no cards, chips or hands: bet presence's reference), against which cards are told from the
    /// felt ([`locate::plane::PlaneFinder::set_reference`]). Checked here: a frame of another
    /// size is refused.
    pub fn set_table_reference(&mut self, g: &TableGeometry, empty_table: &Mat) -> Result<(), RecognizeError> {
        let mut finder = locate::plane::PlaneFinder::new(g)?;
        finder.set_reference(empty_table)?;
        self.planes.retain(|(c, _)| *c != g.calibration);
        self.planes.push((g.calibration.clone(), finder));
        Ok(())
    }

    /// The locator (e.g. to benchmark it alone).
    pub fn locator_mut(&mut self) -> &mut Locator {
        &mut self.locator
    }

    /// The classifier.
    pub fn classifier_mut(&mut self) -> &mut Classifier {
        &mut self.classifier
    }

    /// The glyph classifier, if one was loaded (e.g. to override its threshold).
    pub fn glyph_classifier_mut(&mut self) -> Option<&mut Classifier> {
        self.glyph.as_mut()
    }

    /// The options.
    pub fn options(&self) -> &RecognizerOptions {
        &self.options
    }

    /// The cards in a BGR frame (see the [module](self) for the steps).
    pub fn recognize(
        &mut self,
        image: &Mat,
        calibration: Option<&TableGeometry>,
    ) -> Result<Vec<DetectedCard>, RecognizeError> {
        Ok(self.recognize_timed(image, calibration)?.0)
    }

    /// [`Recognizer::recognize`], with the time spent in each stage.
    pub fn recognize_timed(
        &mut self,
        image: &Mat,
        calibration: Option<&TableGeometry>,
    ) -> Result<(Vec<DetectedCard>, StageTimes), RecognizeError> {
        let t0 = Instant::now();
        let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
        if image.typ() != core::CV_8UC3 {
            return Err(RecognizeError::FrameType { expected: core::CV_8UC3, got: image.typ() });
        }
        let (w, h) = (image.cols(), image.rows());
        if let Some(g) = calibration {
            let c = &g.calibration;
            if i64::from(c.image_width) != i64::from(w) || i64::from(c.image_height) != i64::from(h) {
                return Err(RecognizeError::CalibrationSize {
                    got_w: w,
                    got_h: h,
                    cal_w: c.image_width,
                    cal_h: c.image_height,
                });
            }
        }
        let mut times = StageTimes::default();
        let (mut cards, index) = match calibration {
            Some(g) if !self.options.network_locator => {
                times.prepare_ms = ms(t0);
                let t1 = Instant::now();
                let found = self.plane_cards(image, g)?;
                times.locator_ms = ms(t1);
                (found, Vec::new())
            }
            None if !self.options.network_locator && self.classifier.patch_kind().corner_cut().is_some() => {
                times.prepare_ms = ms(t0);
                let out = self.photo_cards_any_aspect(image, &mut times)?;
                times.total_ms = ms(t0);
                return Ok((out, times));
            }
            _ => self.network_cards(image, calibration, &mut times)?,
        };

        let t2 = Instant::now();
        // Each corner goes to the highest-scoring card containing its centre.
        let polys: Vec<Polygon> = cards.iter().map(|c| Polygon(c.quad.to_vec())).collect();
        let mut loose = Vec::new();
        for (i, ix) in index.iter().enumerate() {
            let owner = (0..cards.len())
                .filter(|&k| polys[k].contains(ix.center))
                .max_by(|&a, &b| cards[a].score.total_cmp(&cards[b].score));
            match owner {
                Some(k) => cards[k].corners.push(i),
                None => loose.push(i),
            }
        }
        let kind = self.classifier.patch_kind();
        let mut jobs: Vec<PatchJob> = Vec::new();
        let mut card_patches: Vec<Vec<usize>> = vec![Vec::new(); cards.len()];
        let patch_of = |center: Point, (bw, bh): (f64, f64), jobs: &mut Vec<PatchJob>| {
            jobs.push(PatchJob::Box(classify::patch_rect(center, bw, bh, w, h)));
            jobs.len() - 1
        };
        // An index's printed height: a found corner's box, or the expected share of the card.
        let readable = |height_px: f64| height_px >= self.options.min_index_px;
        let mut loose_patch: Vec<usize> = Vec::new();
        if kind.corner_cut().is_some() {
            // Both index corners of every card, upright in the card's frame; face-down cards too,
            // so that the classifier can overrule a face the plane's white share took for a back.
            for (k, card) in cards.iter().enumerate() {
                if readable(EXPECTED_INDEX_SIZE.1 * card.rect.long) {
                    for view in classify::corner_quads(&card.quad) {
                        jobs.push(PatchJob::Corner(view));
                        card_patches[k].push(jobs.len() - 1);
                    }
                }
            }
        } else {
            for (k, card) in cards.iter().enumerate().filter(|(_, c)| c.face_up) {
                for &i in card.corners.iter().filter(|&&i| readable(index[i].size().0.max(index[i].size().1))) {
                    card_patches[k].push(patch_of(index[i].center, index[i].size(), &mut jobs));
                }
                if card.corners.len() < 2 {
                    let extent = card.rect.aligned_box_extent(EXPECTED_INDEX_SIZE.0, EXPECTED_INDEX_SIZE.1);
                    for (nx, ny) in EXPECTED_INDEX {
                        let e = card.rect.card_point(nx, ny);
                        // A corner already found at this end is read from its own box; a second,
                        // guessed patch of the same print would count the same evidence twice.
                        if card.corners.iter().any(|&i| index[i].center.dist(e) < 0.25 * card.rect.long) {
                            continue;
                        }
                        if readable(EXPECTED_INDEX_SIZE.1 * card.rect.long) {
                            card_patches[k].push(patch_of(e, extent, &mut jobs));
                        }
                    }
                }
            }
            loose_patch = loose.iter().map(|&i| patch_of(index[i].center, index[i].size(), &mut jobs)).collect();
        }
        let batch = cut_batch(image, kind, &jobs)?;
        let probs = self.classifier.classify(batch.view())?;
        times.patches = jobs.len();
        let mut step = t2;
        // the time since the last step ended, restarting the clock
        let mut lap = || {
            let t = ms(step);
            step = Instant::now();
            t
        };
        times.steps.corners_ms = lap();
        let min_conf = self.classifier.min_confidence();
        // The whole faces of the cards whose corners are read, but for cards the corners already
        // name surely (the whole-card view could only confirm or veto them) and for backs beyond
        // doubt: a card the plane measured face down whose corners read `back` surely. Both are
        // needed for a back: corners cut from a quad measured off its card read the felt as a
        // back, and the whole-card view then still sees the face (docs/recognition.md, "Speed").
        let face_cards: Vec<usize> = (0..cards.len())
            .filter(|&k| {
                let corners = prob_rows(&probs, card_patches[k].iter().copied());
                !card_patches[k].is_empty()
                    && !classify::surely_named(&corners, min_conf)
                    && (cards[k].face_up || !classify::surely_back(&corners, min_conf))
            })
            .collect();
        let quads: Vec<Quad> = face_cards.iter().map(|&k| cards[k].quad).collect();
        let face_probs = self.read_faces(image, &quads)?;
        times.steps.faces_ms = lap();
        let mut face_rows: Vec<Vec<usize>> = vec![Vec::new(); cards.len()];
        if face_probs.is_some() {
            for (j, &k) in face_cards.iter().enumerate() {
                face_rows[k] = vec![2 * j, 2 * j + 1];
            }
            times.patches += 2 * face_cards.len();
        }

        let mut verdicts: Vec<classify::Verdict> = (0..cards.len())
            .map(|k| {
                let faces = face_probs.as_ref().map_or_else(Vec::new, |fp| prob_rows(fp, face_rows[k].iter().copied()));
                classify::combine_models(&prob_rows(&probs, card_patches[k].iter().copied()), &faces, min_conf)
            })
            .collect();
        // A covered corner reads the card lying over it ([`cover`]): readings taken under a card
        // named as they read, or seen lying over this one, are set aside and the rest combined
        // again.
        let quads: Vec<Quad> = cards.iter().map(|c| c.quad).collect();
        let corners_left = {
            let patches = Patches { jobs: &jobs, of_card: &card_patches, probs: &probs };
            set_aside_covered(image, kind, &quads, &patches, face_probs.as_ref(), &face_rows, &mut verdicts, min_conf)
        };
        times.steps.cover_ms = lap();
        // A face-up card both of whose index corners were read, and that is still unnamed: what
        // the wider corners and, last, the nudged outlines read again (both only with a
        // card-corner classifier).
        let unread_face = |k: usize, v: &classify::Verdict| {
            card_patches[k].len() == 2 && v.identity.card().is_none() && shows_face(cards[k].face_up, true, v)
        };
        let unnamed: Vec<Unnamed<'_>> = (0..cards.len())
            .filter(|&k| unread_face(k, &verdicts[k]))
            .map(|k| Unnamed {
                card: k,
                views: classify::corner_quads(&cards[k].quad),
                index: prob_rows(&probs, card_patches[k].iter().copied()),
                faces: face_probs.as_ref().map_or_else(Vec::new, |fp| prob_rows(fp, face_rows[k].iter().copied())),
            })
            .collect();
        times.patches += self.name_from_wider_corners(image, &unnamed, &mut verdicts)?;
        times.steps.wider_ms = lap();
        let corner_cut = kind.corner_cut().is_some();
        // On a calibrated table the glyph classifier also reads the indexes found in the corners
        // of every readable face the card classifiers left unnamed (table_glyphs).
        if calibration.is_some() {
            // a card the card classifiers named stands (table_glyphs::reconsider)
            let faces: Vec<usize> = (0..cards.len())
                .filter(|&k| {
                    let v = &verdicts[k];
                    !card_patches[k].is_empty()
                        && shows_face(cards[k].face_up, corner_cut, v)
                        && v.identity.card().is_none()
                })
                .collect();
            times.patches += self.complete_with_glyphs(image, &quads, &mut verdicts, &faces, &corners_left)?;
        }
        times.steps.glyphs_ms = lap();
        // Last, what every reading so far left unnamed, from outlines moved toward the card's
        // neighbours: after the glyphs, so that a neighbour they named is known (nudge::settle).
        let unnamed: Vec<usize> = (0..cards.len()).filter(|&k| unread_face(k, &verdicts[k])).collect();
        times.patches += self.name_from_nudged_outlines(image, &quads, &mut verdicts, &unnamed)?;
        times.steps.nudge_ms = lap();
        times.classifier_ms = ms(t2);
        let mut out = Vec::with_capacity(cards.len() + loose.len());
        for (k, card) in cards.iter().enumerate() {
            let v = verdicts[k];
            let (identity, confidence, rank) = if shows_face(card.face_up, corner_cut, &v) {
                (v.identity, v.confidence, v.rank)
            } else {
                (CardIdentity::Back, card.score, None)
            };
            out.push(DetectedCard {
                card: identity,
                confidence,
                // the classifier outranks the locator (or the plane's white share) on the face
                face_up: identity != CardIdentity::Back,
                quad: card.quad,
                index_boxes: card.corners.iter().map(|&i| index[i].bbox).collect(),
                source: Source::Card,
                reading: v.reading,
                rank,
                twin: TwinPrint::Alone,
            });
        }
        // A card-corner classifier needs a card's rectangle: corners on no located card are not
        // read (docs/recognition.md, what it does not do yet).
        if kind == PatchKind::IndexBox {
            out.extend(group_loose_corners(
                &loose.iter().map(|&i| &index[i]).collect::<Vec<_>>(),
                probs.view(),
                &loose_patch,
                min_conf,
            ));
        }

        if let Some(g) = calibration {
            out = on_table_plane(out, g);
            let t3 = Instant::now();
            twins::compare_twins(image, &mut out)?;
            times.steps.twins_ms = ms(t3);
        }
        times.total_ms = ms(t0);
        Ok((out, times))
    }

    /// The identity of cards whose quads are already known (ground truth, or a tracker's
    /// prediction): each card's two index corners classified in one batch and combined
    /// ([`classify::combine`]). With a card-corner classifier the corners are cut upright in
    /// each quad's frame; with an index-box one, at the expected index positions. The cards left
    /// unnamed are read further as [`Recognizer::recognize`] reads them: wider corners, index
    /// glyphs, nudged outlines.
    pub fn identify_quads(&mut self, image: &Mat, quads: &[Quad]) -> Result<Vec<classify::Verdict>, RecognizeError> {
        let kind = self.classifier.patch_kind();
        let mut jobs = Vec::with_capacity(2 * quads.len());
        for quad in quads {
            let quad = order_quad(*quad);
            match kind {
                PatchKind::CardCorner(_) => jobs.extend(classify::corner_quads(&quad).map(PatchJob::Corner)),
                PatchKind::IndexGlyphs => unreachable!("a glyph classifier is refused as the card classifier at load"),
                PatchKind::IndexBox => {
                    let rect = RotatedRect::from_quad(&quad);
                    let (bw, bh) = rect.aligned_box_extent(EXPECTED_INDEX_SIZE.0, EXPECTED_INDEX_SIZE.1);
                    jobs.extend(EXPECTED_INDEX.map(|(nx, ny)| {
                        PatchJob::Box(classify::patch_rect(rect.card_point(nx, ny), bw, bh, image.cols(), image.rows()))
                    }));
                }
            }
        }
        let batch = cut_batch(image, kind, &jobs)?;
        let probs = self.classifier.classify(batch.view())?;
        let face_probs = self.read_faces(image, quads)?;
        let min_conf = self.classifier.min_confidence();
        let mut verdicts: Vec<classify::Verdict> = (0..quads.len())
            .map(|k| {
                let faces = face_probs.as_ref().map_or_else(Vec::new, |fp| prob_rows(fp, 2 * k..2 * k + 2));
                classify::combine_models(&prob_rows(&probs, 2 * k..2 * k + 2), &faces, min_conf)
            })
            .collect();
        let ordered: Vec<Quad> = quads.iter().map(|q| order_quad(*q)).collect();
        let of_card: Vec<Vec<usize>> = (0..quads.len()).map(|k| vec![2 * k, 2 * k + 1]).collect();
        let patches = Patches { jobs: &jobs, of_card: &of_card, probs: &probs };
        let corners =
            set_aside_covered(image, kind, &ordered, &patches, face_probs.as_ref(), &of_card, &mut verdicts, min_conf);
        let unnamed: Vec<Unnamed<'_>> = (0..quads.len())
            .filter(|&k| verdicts[k].identity == CardIdentity::Unknown && verdicts[k].face >= 0.5)
            .map(|k| Unnamed {
                card: k,
                views: classify::corner_quads(&order_quad(quads[k])),
                index: prob_rows(&probs, 2 * k..2 * k + 2),
                faces: face_probs.as_ref().map_or_else(Vec::new, |fp| prob_rows(fp, 2 * k..2 * k + 2)),
            })
            .collect();
        self.name_from_wider_corners(image, &unnamed, &mut verdicts)?;
        let unnamed: Vec<usize> = (0..quads.len()).filter(|&k| verdicts[k].identity == CardIdentity::Unknown).collect();
        self.complete_with_glyphs(image, quads, &mut verdicts, &unnamed, &corners)?;
        let unnamed: Vec<usize> = (0..quads.len())
            .filter(|&k| verdicts[k].identity == CardIdentity::Unknown && verdicts[k].face >= 0.5)
            .collect();
        self.name_from_nudged_outlines(image, &ordered, &mut verdicts, &unnamed)?;
        Ok(verdicts)
    }

    /// Reads the blank index corners of the `unnamed` face-up cards again, cut
    /// [`RecognizerOptions::wide_corner_scale`] times wider ([`blank_corners`],
    /// [`classify::widened_view`]), and names each card whose views then name it
    /// ([`adopt_if_named`]). Returns the number of patches read: none when the option is off or
    /// the classifier reads no card corners.
    fn name_from_wider_corners(
        &mut self,
        image: &Mat,
        unnamed: &[Unnamed<'_>],
        verdicts: &mut [classify::Verdict],
    ) -> Result<usize, RecognizeError> {
        let Some(scale) = self.options.wide_corner_scale else { return Ok(0) };
        let kind = self.classifier.patch_kind();
        if kind.corner_cut().is_none() {
            return Ok(0);
        }
        let views: Vec<[[Point; 4]; 2]> = unnamed.iter().map(|u| u.views).collect();
        let rows: Vec<Vec<&[f32]>> = unnamed.iter().map(|u| u.index.clone()).collect();
        let (wide, own) = blank_corners(&views, &rows);
        if wide.is_empty() {
            return Ok(0);
        }
        let jobs: Vec<PatchJob> =
            wide.iter().map(|view| PatchJob::Corner(classify::widened_view(view, scale).unwrap_or(*view))).collect();
        let probs = self.classifier.classify(cut_batch(image, kind, &jobs)?.view())?;
        let min_conf = self.classifier.min_confidence();
        for (u, own) in unnamed.iter().zip(&own) {
            let mut index = u.index.clone();
            index.extend(prob_rows(&probs, own.iter().copied()));
            adopt_if_named(&mut verdicts[u.card], classify::combine_models(&index, &u.faces, min_conf));
        }
        Ok(wide.len())
    }

    /// Reads the face-up cards `unnamed` (indexes into `quads`, ordered, and `verdicts`) that
    /// overlap another card again from their outlines moved along the line to their neighbours
    /// ([`nudge`]), and names each whose moved readings settle on one card
    /// ([`nudge::settle`]). Each moved reading is one card's index corners with those that another
    /// card explains set aside ([`cover::unexplained`]), combined alone: the whole-card view of a
    /// moved outline straddles the neighbour. Returns the number of patches read: none when the
    /// option is off or the classifier reads no card corners.
    fn name_from_nudged_outlines(
        &mut self,
        image: &Mat,
        quads: &[Quad],
        verdicts: &mut [classify::Verdict],
        unnamed: &[usize],
    ) -> Result<usize, RecognizeError> {
        let Some(share) = self.options.nudge else { return Ok(0) };
        let kind = self.classifier.patch_kind();
        let Some(cut) = kind.corner_cut() else { return Ok(0) };
        // (card, the cards it overlaps, its first patch)
        let mut plans: Vec<(usize, Vec<usize>, usize)> = Vec::new();
        let mut jobs: Vec<PatchJob> = Vec::new();
        for &k in unnamed {
            let neighbours = nudge::overlapping(quads, k);
            let Some(axis) = nudge::nudge_axis(quads, k, &neighbours) else { continue };
            let step = share * RotatedRect::from_quad(&quads[k]).short;
            plans.push((k, neighbours, jobs.len()));
            for s in nudge::NUDGE_STEPS {
                jobs.extend(classify::corner_quads(&nudge::moved(&quads[k], axis, s * step)).map(PatchJob::Corner));
            }
        }
        if jobs.is_empty() {
            return Ok(0);
        }
        let probs = self.classifier.classify(cut_batch(image, kind, &jobs)?.view())?;
        let min_conf = self.classifier.min_confidence();
        let named: Vec<Option<Card>> = verdicts.iter().map(|v| v.identity.card()).collect();
        let over = twins::seen_over_once(image, quads);
        for (k, neighbours, first) in &plans {
            let readings: Vec<classify::Verdict> = (0..nudge::NUDGE_STEPS.len())
                .map(|m| {
                    let ids = first + 2 * m..first + 2 * m + 2;
                    let rows = prob_rows(&probs, ids.clone());
                    let at: Vec<Point> = ids.map(|i| jobs[i].centre(cut.region)).collect();
                    let kept = cover::unexplained(*k, &rows, &at, &named, quads, &over).unwrap_or(rows);
                    classify::combine(&kept, min_conf)
                })
                .collect();
            let theirs: Vec<Card> = neighbours.iter().filter_map(|&j| named[j]).collect();
            if std::env::var_os("TABLECAM_NUDGE_DEBUG").is_some() {
                let c = Point::mean(&quads[*k]);
                let shown: Vec<String> =
                    readings.iter().map(|v| format!("{} {:.4}", v.identity, v.confidence)).collect();
                eprintln!(
                    "nudge: card at ({:.0},{:.0}) reading {:?} rank {:?}, neighbours {theirs:?}: moves [{}]",
                    c.x,
                    c.y,
                    verdicts[*k].reading.map(|c| c.to_string()),
                    verdicts[*k].rank.map(|(r, _)| r),
                    shown.join(", ")
                );
            }
            if let Some(v) = nudge::settle(&verdicts[*k], &readings, &theirs) {
                verdicts[*k] = v;
            }
        }
        Ok(jobs.len())
    }

    /// Completes the verdicts of the cards `unnamed` (indexes into `quads` and `verdicts`) with
    /// the glyph classifier's readings of the indexes found in their corners
    /// ([`table_glyphs::corner_proposals`], [`table_glyphs::reconsider`]); a card it names that an
    /// overlapping card is named too stays unnamed ([`table_glyphs::drop_overlapping_twins`]),
    /// and so does one that a sure reading of the card classifiers (`corners[k]`, those a
    /// covering card does not explain, [`cover`]; [`CORNER_CONTRADICTS`]) names otherwise: a
    /// card's two corners print one index, and the glyphs found may be those of a card over one
    /// of them.
    /// Returns the number of glyph views read (none without a glyph classifier).
    fn complete_with_glyphs(
        &mut self,
        image: &Mat,
        quads: &[Quad],
        verdicts: &mut [classify::Verdict],
        unnamed: &[usize],
        corners: &[Vec<&[f32]>],
    ) -> Result<usize, RecognizeError> {
        let Some(glyph) = self.glyph.as_mut() else { return Ok(0) };
        let mut found: Vec<(locate::glyphs::IndexProposal, u32)> = Vec::new();
        let mut rows = vec![Vec::new(); unnamed.len()];
        for (j, &k) in unnamed.iter().enumerate() {
            for p in table_glyphs::corner_proposals(image, &quads[k])? {
                rows[j].push(found.len());
                found.push((p, glyph_level(&p)));
            }
        }
        if found.is_empty() {
            return Ok(0);
        }
        let levels = halvings(image, found.iter().map(|&(_, k)| k).max().unwrap_or(0))?;
        let probs = glyph.classify(glyph_batch(image, &levels, &found)?.view())?;
        let threshold = glyph.min_confidence();
        let mut named = Vec::new();
        let debug = std::env::var_os("TABLECAM_GLYPH_DEBUG").is_some();
        // the cards the card classifiers named, whose indexes show in the corners they cover
        let covering: Vec<Option<Card>> = verdicts.iter().map(|v| v.identity.card()).collect();
        let over = twins::seen_over_once(image, quads);
        for (j, &k) in unnamed.iter().enumerate() {
            let mut reads = prob_rows(&probs, rows[j].iter().copied());
            let at: Vec<Point> = rows[j].iter().map(|&i| found[i].0.centre()).collect();
            if let Some(kept) = cover::unexplained(k, &reads, &at, &covering, quads, &over) {
                reads = kept;
            }
            if debug {
                let c = Point::mean(&quads[k]);
                let shown: Vec<String> = reads
                    .iter()
                    .map(|r| {
                        let (label, p) = classify::argmax(r);
                        format!("{} {:.4}", CardIdentity::from_label(label), p)
                    })
                    .collect();
                eprintln!(
                    "glyphs: card at ({:.0},{:.0}) reading {:?} {:.3}: {} proposals [{}]",
                    c.x,
                    c.y,
                    verdicts[k].reading.map(|c| c.to_string()),
                    verdicts[k].confidence,
                    rows[j].len(),
                    shown.join(", ")
                );
            }
            let v = table_glyphs::reconsider(verdicts[k], &reads, threshold);
            let contradicted = |c: Card| {
                corners[k].iter().any(|r| {
                    let (label, p) = classify::argmax(r);
                    p >= CORNER_CONTRADICTS && CardIdentity::from_label(label).card().is_some_and(|o| o != c)
                })
            };
            if !v.identity.card().is_some_and(contradicted) {
                verdicts[k] = v;
            }
            if verdicts[k].identity.card().is_some() {
                named.push(k);
            }
        }
        table_glyphs::drop_overlapping_twins(verdicts, &named, quads);
        Ok(found.len())
    }

    /// The whole-card classifier's probabilities for both upright views of each quad (rows
    /// `2k`, `2k + 1`), or `None` without one.
    fn read_faces(&mut self, image: &Mat, quads: &[Quad]) -> Result<Option<ndarray::Array2<f32>>, RecognizeError> {
        let Some(face) = self.face.as_mut() else { return Ok(None) };
        let jobs: Vec<PatchJob> =
            quads.iter().flat_map(|q| classify::corner_quads(&order_quad(*q)).map(PatchJob::Corner)).collect();
        let batch = cut_batch(image, face.patch_kind(), &jobs)?;
        Ok(Some(face.classify(batch.view())?))
    }

    /// Cards and index corners from the locator network, in frame pixels.
    fn network_cards(
        &mut self,
        image: &Mat,
        calibration: Option<&TableGeometry>,
        times: &mut StageTimes,
    ) -> Result<(Vec<FoundCard>, Vec<FoundIndex>), RecognizeError> {
        let t0 = Instant::now();
        let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
        let plan = plan_input(image.cols(), image.rows(), calibration, &self.options);
        prepare_input_into(image, &plan, &mut self.input)?;
        times.prepare_ms = ms(t0);
        let t1 = Instant::now();
        let decoded = self.locator.run(self.input.view())?;
        let edges = self.options.refine_edges.then(|| locate::refine::EdgeImage::from_input(self.input.view()));
        let cards: Vec<FoundCard> = decoded
            .cards
            .iter()
            .filter(|c| plan.in_content(c.rect.center))
            .map(|c| {
                let rect = edges.as_ref().map_or(c.rect, |e| locate::refine::refine_rect(e, &c.rect));
                let quad = order_quad(rect.quad().map(|p| plan.to_frame(p)));
                FoundCard {
                    rect: RotatedRect::from_quad(&quad),
                    quad,
                    score: c.score,
                    face_up: c.face_up,
                    corners: vec![],
                }
            })
            .collect();
        let index: Vec<FoundIndex> = decoded
            .index
            .iter()
            .filter(|i| plan.in_content(i.center))
            .map(|i| {
                let b = i.bbox();
                let (a, z) = (plan.to_frame(Point::new(b[0], b[1])), plan.to_frame(Point::new(b[2], b[3])));
                FoundIndex { center: plan.to_frame(i.center), bbox: [a.x, a.y, z.x, z.y] }
            })
            .collect();
        times.locator_ms = ms(t1);

        Ok((cards, index))
    }

    /// [`Recognizer::photo_cards`] of a photo whose aspect may not be its camera's: a square
    /// photo is read at its own aspect and as each camera aspect of [`SQUARE_PHOTO_ASPECTS`]
    /// squeezed square, and the reading whose cards the other readings confirm best is kept
    /// ([`best_aspect_reading`]). Other photos, or with [`RecognizerOptions::square_aspects`]
    /// off, are read as they are. Detections are in the photo's own pixels.
    fn photo_cards_any_aspect(
        &mut self,
        image: &Mat,
        times: &mut StageTimes,
    ) -> Result<Vec<DetectedCard>, RecognizeError> {
        let (w, h) = (image.cols(), image.rows());
        if !self.options.square_aspects || !is_square(w, h) {
            return self.photo_cards(image, times);
        }
        let mut readings = vec![((1.0, 1.0), self.photo_cards(image, times)?)];
        for &(sx, sy) in SQUARE_PHOTO_ASPECTS.iter() {
            let mut restored = Mat::default();
            let size = core::Size::new((f64::from(w) * sx).round() as i32, (f64::from(h) * sy).round() as i32);
            imgproc::resize(image, &mut restored, size, 0.0, 0.0, imgproc::INTER_AREA).map_err(cv("aspect"))?;
            let mut t = StageTimes::default();
            readings.push(((sx, sy), self.photo_cards(&restored, &mut t)?));
            times.locator_ms += t.locator_ms;
            times.classifier_ms += t.classifier_ms;
            times.patches += t.patches;
        }
        Ok(best_aspect_reading(readings, f64::from(w.max(h))))
    }

    /// Cards of an uncalibrated photo: outline candidates ([`locate::photo`]), each read at both
    /// diagonals ([`either_diagonal`]), kept where the classifier sees a face or a back, overlaps
    /// suppressed in favour of the better reading ([`suppress_overlaps`]); then the index corners
    /// no outline explains ([`locate::glyphs`], [`index_reads`]). Every patch is cut from a level
    /// of the frame where its card is at most [`MAX_READ_LONG_PX`] long.
    fn photo_cards(&mut self, image: &Mat, times: &mut StageTimes) -> Result<Vec<DetectedCard>, RecognizeError> {
        let ms = |t: Instant| t.elapsed().as_secs_f64() * 1e3;
        let t1 = Instant::now();
        let level_of = |long: f64| (long / MAX_READ_LONG_PX).log2().ceil().max(0.0) as u32;
        // an index printed too small to read tells nothing, not even face or back
        let min_index_px = self.options.min_index_px;
        let quads: Vec<(Quad, u32)> = locate::photo::candidate_quads(image)?
            .into_iter()
            .filter_map(|q| {
                let long = RotatedRect::from_quad(&q).long;
                (EXPECTED_INDEX_SIZE.1 * long >= min_index_px).then(|| (q, level_of(long)))
            })
            .collect();
        let glyphs: Vec<(locate::glyphs::IndexProposal, u32)> = if self.options.index_glyphs {
            let reach =
                if self.glyph.is_some() { locate::glyphs::GLYPH_PAIR_REACH } else { locate::glyphs::CORNER_PAIR_REACH };
            locate::glyphs::index_proposals(image, reach)?
                .into_iter()
                .filter(|p| p.height() >= min_index_px)
                .map(|p| {
                    let level = if self.glyph.is_some() {
                        glyph_level(&p)
                    } else {
                        level_of(p.height() / locate::glyphs::INDEX_SHARES[0])
                    };
                    (p, level)
                })
                .collect()
        } else {
            Vec::new()
        };
        times.locator_ms = ms(t1);
        let t2 = Instant::now();
        // Level k is the frame halved k times (area-averaged): a large card cut straight from the
        // full frame would alias its print into the 48 × 32 patch.
        let top = quads.iter().map(|&(_, k)| k).chain(glyphs.iter().map(|&(_, k)| k)).max().unwrap_or(0);
        let levels = &halvings(image, top)?;
        let min_conf = self.classifier.min_confidence();
        let mut patches = 0;
        // pyramid level `k` and a frame view scaled to it
        let at_level = |view: &[Point; 4], k: u32| {
            let f = 0.5f64.powi(k as i32);
            let level = if k == 0 { image } else { &levels[k as usize - 1] };
            (level, view.map(|p| Point::new(p.x * f, p.y * f)))
        };
        // the views of `views` (each at its pyramid level) through `classifier`
        let mut read_with = |classifier: &mut Classifier,
                             views: &[([Point; 4], u32)]|
         -> Result<ndarray::Array2<f32>, RecognizeError> {
            let cut =
                classifier.patch_kind().corner_cut().expect("photo outlines are read by a card-corner classifier");
            let (ph, pw) = cut.patch;
            let mut batch = Array4::<f32>::zeros((views.len(), 3, ph, pw));
            for ((view, k), mut slot) in views.iter().zip(batch.outer_iter_mut()) {
                let (level, view) = at_level(view, *k);
                classify::cut_corner_patch(level, &view, cut, slot.as_slice_mut().expect("standard layout"))?;
            }
            patches += views.len();
            Ok(classifier.classify(batch.view())?)
        };
        let classifier = &mut self.classifier;
        // With a glyph classifier the card classifier reads the outlines only.
        let guessed_corners: &[(locate::glyphs::IndexProposal, u32)] = if self.glyph.is_some() { &[] } else { &glyphs };
        // First pass: both diagonals of every outline, and each index proposal at the middle
        // card size.
        let first: Vec<([Point; 4], u32)> = quads
            .iter()
            .flat_map(|&(quad, k)| {
                let [a, b] = classify::corner_quads(&quad);
                let [c, d] = classify::corner_quads_turned(&quad);
                [a, b, c, d].map(|v| (v, k))
            })
            .chain(guessed_corners.iter().map(|&(p, k)| (p.views()[1], k)))
            .collect();
        let probs = read_with(classifier, &first)?;
        let row = |i: usize| probs.row(i).to_slice().expect("standard layout");
        // the whole faces of both diagonals' views of every outline, with a whole-card classifier
        let faces = match self.face.as_mut() {
            Some(face) => Some(read_with(face, &first[..4 * quads.len()])?),
            None => None,
        };
        let face_rows = |i: usize| faces.as_ref().map_or_else(Vec::new, |f| prob_rows(f, i..i + 2));
        let read: Vec<DetectedCard> = quads
            .iter()
            .enumerate()
            .filter_map(|(n, (quad, _))| {
                let v = either_diagonal(
                    classify::combine_models(&[row(4 * n), row(4 * n + 1)], &face_rows(4 * n), min_conf),
                    classify::combine_models(&[row(4 * n + 2), row(4 * n + 3)], &face_rows(4 * n + 2), min_conf),
                )?;
                Some(DetectedCard {
                    card: v.identity,
                    confidence: v.confidence,
                    face_up: v.identity != CardIdentity::Back,
                    quad: *quad,
                    index_boxes: Vec::new(),
                    source: Source::Card,
                    reading: v.reading,
                    rank: v.rank,
                    twin: TwinPrint::Alone,
                })
            })
            .collect();
        // Second pass: the other card sizes of the proposals where the first saw some card (most
        // proposals are pips and art, which no size turns into an index).
        let base = 4 * quads.len();
        // the 52 cards come before `back` among the labels
        let best_card = |r: &[f32]| r[..classify::BACK].iter().copied().fold(0.0f32, f32::max);
        let again: Vec<usize> =
            (0..guessed_corners.len()).filter(|&n| best_card(row(base + n)) >= GLYPH_SECOND_LOOK).collect();
        let second: Vec<([Point; 4], u32)> = again
            .iter()
            .flat_map(|&n| {
                let (p, k) = glyphs[n];
                let v = p.views();
                [(v[0], k), (v[2], k)]
            })
            .collect();
        let probs2 = read_with(classifier, &second)?;
        // The indexes are named from the threshold of the classifier that reads them: the glyph
        // classifier's own calibrated one where it reads them, else the card classifier's.
        let index_conf = self.glyph.as_ref().map_or(min_conf, Classifier::min_confidence);
        let mut glyph_reads: Vec<IndexRead> = Vec::new();
        // proposal `n` read as `r`: kept where it names a card, even below the threshold, for
        // the card's other index to confirm (`index_reads`)
        let mut consider = |n: usize, r: &[f32]| {
            let v = classify::combine(&[r], index_conf.min(PAIRED_INDEX_CONFIDENCE));
            if matches!(v.identity, CardIdentity::Card(_)) {
                glyph_reads.push(IndexRead { proposal: glyphs[n].0, card: v.identity, confidence: v.confidence });
            }
        };
        for n in 0..guessed_corners.len() {
            consider(n, row(base + n));
        }
        for (i, &n) in again.iter().enumerate() {
            for j in 0..2 {
                consider(n, probs2.row(2 * i + j).to_slice().expect("standard layout"));
            }
        }
        // The glyph classifier's reading of every proposal's glyph view.
        if let Some(glyph) = self.glyph.as_mut() {
            let batch = glyph_batch(image, levels, &glyphs)?;
            patches += glyphs.len();
            let probs = glyph.classify(batch.view())?;
            let debug = std::env::var_os("TABLECAM_GLYPH_DEBUG").is_some();
            for (n, (proposal, _)) in glyphs.iter().enumerate() {
                if debug {
                    let (label, p) = classify::argmax(probs.row(n).to_slice().expect("standard layout"));
                    let c = proposal.centre();
                    eprintln!(
                        "glyphs: photo {}x{} proposal at ({:.0},{:.0}) height {:.0} reads {} {p:.4}",
                        image.cols(),
                        image.rows(),
                        c.x,
                        c.y,
                        proposal.height(),
                        CardIdentity::from_label(label)
                    );
                }
                consider(n, probs.row(n).to_slice().expect("standard layout"));
            }
        }
        times.patches = patches;
        times.classifier_ms = ms(t2);
        Ok(settle_index_only(index_reads(suppress_overlaps(read), glyph_reads, index_conf)))
    }

    /// Cards measured on the rectified table plane ([`locate::plane`]).
    fn plane_cards(&mut self, image: &Mat, g: &TableGeometry) -> Result<Vec<FoundCard>, RecognizeError> {
        let k = match self.planes.iter().position(|(c, _)| *c == g.calibration) {
            Some(k) => k,
            None => {
                self.planes.push((g.calibration.clone(), locate::plane::PlaneFinder::new(g)?));
                self.planes.len() - 1
            }
        };
        let (_, finder) = &self.planes[k];
        Ok(finder
            .find(image)?
            .into_iter()
            .map(|c| FoundCard {
                rect: RotatedRect::from_quad(&c.quad),
                quad: c.quad,
                score: c.score,
                face_up: c.face_up,
                corners: vec![],
            })
            .collect())
    }
}

/// Whether a located card shows its face: what the table plane measured (`plane_face_up`, its
/// white share), unless the card classifiers' verdict says otherwise.
///
/// A card read on a "face-down" card is a face whose print the white share missed (a court
/// card's picture, dim light, cream stock); so is one a card-corner classifier (`corner_cut`)
/// clearly sees a face on, even before it can tell which ([`FACE_OVERRULE`]). The other way
/// round, a "face-up" card the classifiers clearly see a back on, though below the threshold
/// that names a back, is a back whose print the white share took for a face: cream flowers
/// printed on a design never trained on (stud seed 11, docs/pipeline.md, "Backs the plane took
/// for faces"). Patches that showed nothing are no evidence either way.
fn shows_face(plane_face_up: bool, corner_cut: bool, v: &classify::Verdict) -> bool {
    let clearly_back = corner_cut && v.informative > 0 && v.face <= 1.0 - FACE_OVERRULE;
    (plane_face_up && !clearly_back)
        || (corner_cut && v.face >= FACE_OVERRULE)
        || matches!(v.identity, CardIdentity::Card(_))
}

/// The pyramid level a proposal's glyph view is cut from: the view whole, as the training cut it
/// (at most [`MAX_GLYPH_VIEW_PX`] high).
fn glyph_level(p: &locate::glyphs::IndexProposal) -> u32 {
    (p.height() / locate::glyphs::GLYPH_SPAN / MAX_GLYPH_VIEW_PX).log2().ceil().max(0.0) as u32
}

/// The glyph views of `found` (each proposal with its pyramid level; `levels` from
/// [`halvings`]), one glyph classifier batch.
fn glyph_batch(
    image: &Mat,
    levels: &[Mat],
    found: &[(locate::glyphs::IndexProposal, u32)],
) -> Result<Array4<f32>, RecognizeError> {
    let (ph, pw) = PatchKind::IndexGlyphs.shape();
    let mut batch = Array4::<f32>::zeros((found.len(), 3, ph, pw));
    for ((p, k), mut slot) in found.iter().zip(batch.outer_iter_mut()) {
        let f = 0.5f64.powi(*k as i32);
        let level = if *k == 0 { image } else { &levels[*k as usize - 1] };
        let view = p.glyph_quad().map(|q| Point::new(q.x * f, q.y * f));
        classify::cut_glyph_patch(level, &view, p.inverted, slot.as_slice_mut().expect("standard layout"))?;
    }
    Ok(batch)
}

/// The camera aspects a square photo is also read as, each as the `(x, y)` factors that squeeze
/// the square back to it: 16:9 and 4:3, landscape and portrait. A dataset export that stretches
/// every photo to 640 × 640 (the shared real photos, `../shared/real-cards/README.md`) narrows
/// each glyph of a 16:9 webcam frame to 56 % of its width, and the glyph classifier reads few of
/// them; squeezed back to 640 × 360, three such photos of fans gave 5 → 16, 4 → 10 and 5 → 24 of
/// 25–26 cards, none wrong (2026-12-03, docs/recognition.md, "Square photos").
pub const SQUARE_PHOTO_ASPECTS: [(f64, f64); 4] = [(1.0, 9.0 / 16.0), (9.0 / 16.0, 1.0), (1.0, 0.75), (0.75, 1.0)];

/// Whether a photo is square (to 1 %), the shape a camera seldom gives and an export often does.
fn is_square(w: i32, h: i32) -> bool {
    (w - h).abs() * 100 <= w.max(h)
}

/// The frame halved 1 to `top` times (area-averaged): level `k` is entry `k - 1`. A large print
/// cut straight from the full frame would alias into a small patch.
fn halvings(image: &Mat, top: u32) -> Result<Vec<Mat>, RecognizeError> {
    let mut levels: Vec<Mat> = Vec::new();
    for _ in 0..top {
        let mut half = Mat::default();
        imgproc::resize(
            levels.last().unwrap_or(image),
            &mut half,
            core::Size::new(0, 0),
            0.5,
            0.5,
            imgproc::INTER_AREA,
        )
        .map_err(cv("pyramid"))?;
        levels.push(half);
    }
    Ok(levels)
}

/// A photo's card is read from a pyramid level where its long side is at most this many
/// pixels: the classifier was trained on cards 40–320 px long, and a print reduced more than
/// ~2× by the patch cut aliases.
pub const MAX_READ_LONG_PX: f64 = 200.0;

/// The reading of an outline whose long side is uncertain, from the verdicts of its two
/// diagonals (`a`: the quad's apparent short side first, `b`: turned): a card named by one
/// diagonal (by both only if they agree — two names are a misread somewhere, so `unknown`);
/// else `back` if both see a back (a back's pattern covers every corner, while the blank corners
/// of a face, read at the wrong diagonal, can pass for one); else an unread face if either
/// sees a face or one sees a back; else nothing — no card.
fn either_diagonal(a: classify::Verdict, b: classify::Verdict) -> Option<classify::Verdict> {
    let is_card = |v: &classify::Verdict| matches!(v.identity, CardIdentity::Card(_));
    let face = a.face.max(b.face);
    match (is_card(&a), is_card(&b)) {
        (true, true) if a.identity != b.identity => Some(classify::Verdict {
            identity: CardIdentity::Unknown,
            confidence: a.confidence.max(b.confidence),
            conflict: true,
            face,
            reading: None,
            rank: None,
            ..a
        }),
        (true, _) => Some(a),
        (false, true) => Some(b),
        _ if a.identity == CardIdentity::Back && b.identity == CardIdentity::Back => Some(a),
        _ if face >= 0.5 || a.identity == CardIdentity::Back || b.identity == CardIdentity::Back => {
            let best = if a.face >= b.face { a } else { b };
            Some(classify::Verdict { identity: CardIdentity::Unknown, face, ..best })
        }
        _ => None,
    }
}

/// A glyph view is cut from the pyramid level where it is at most this many pixels high (the
/// training patches were cut from views up to ~125 px, models/training/glyph_patches.py).
const MAX_GLYPH_VIEW_PX: f64 = 128.0;

/// An index proposal is read at its other card sizes when its middle size gives some card at
/// least this probability.
const GLYPH_SECOND_LOOK: f32 = 0.2;

/// A card read at an index proposal of a photo ([`locate::glyphs`]).
#[derive(Debug, Clone, Copy)]
struct IndexRead {
    proposal: locate::glyphs::IndexProposal,
    card: CardIdentity,
    confidence: f32,
}

/// Index readings whose centres are closer than this share of the larger index's height are
/// one index (the pairs of a "10", a glyph pair found in both orders).
const SAME_INDEX: f64 = 0.5;
/// Two indexes of one card lie at most this many index heights apart (the card's diagonal with
/// the index at 0.17 of the long side, and some).
const SAME_CARD_INDEXES: f64 = 8.0;
/// A card whose two indexes both read it with at least this confidence is named even if neither
/// alone reaches the classifier's threshold: two corners are two views of one card, and
/// together (0.99 each: 0.9999) they are surer than either.
const PAIRED_INDEX_CONFIDENCE: f32 = 0.99;
/// The other index of a card lies at least this many index heights away (a card's long side is
/// about five).
const OTHER_CORNER: f64 = 2.0;

/// The photo's detections with the index readings added ([`Recognizer::photo_cards`]):
/// - readings of one index are one reading, and no reading if they name different cards;
/// - an outline its corners did not name that holds the indexes of two different cards is no
///   card (it outlines several); its indexes are read as loose ones;
/// - the readings on an outlined card name that card if its outline read no card (one reading
///   from `min_conf`, or two of its corners read alike), and are dropped otherwise (the outline
///   read the card's own corners);
/// - the two indexes of one card become one detection spanning both;
/// - every other reading is a card of its own index ([`Source::IndexOnly`], quad = the index).
///
/// A reading names a card alone from `min_conf` on; below it (from
/// [`PAIRED_INDEX_CONFIDENCE`]) only together with the card's other index, where the two
/// readings' combined confidence reaches `min_conf`.
fn index_reads(mut cards: Vec<DetectedCard>, mut reads: Vec<IndexRead>, min_conf: f32) -> Vec<DetectedCard> {
    reads.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    // one reading per index, none where readings disagree
    let mut indexes: Vec<(IndexRead, bool)> = Vec::new();
    for r in reads {
        let c = r.proposal.centre();
        let same = indexes
            .iter_mut()
            .find(|(k, _)| c.dist(k.proposal.centre()) < SAME_INDEX * r.proposal.height().max(k.proposal.height()));
        match same {
            Some((k, conflict)) => *conflict |= k.card != r.card,
            None => indexes.push((r, false)),
        }
    }
    let indexes: Vec<IndexRead> = indexes.into_iter().filter(|(_, conflict)| !conflict).map(|(r, _)| r).collect();
    let inside = |d: &DetectedCard, r: &IndexRead| Polygon(d.quad.to_vec()).contains(r.proposal.centre());
    // An unread outline holding the indexes of two different cards outlines several cards (a fan
    // on a sheet of paper, a pile on a cloth of the cards' colour), not one: it is no card, and
    // its indexes are read as the loose indexes they are.
    cards.retain(|d| {
        if d.source != Source::Card || d.card != CardIdentity::Unknown {
            return true;
        }
        let mut named = indexes.iter().filter(|r| inside(d, r)).map(|r| r.card);
        let first = named.next();
        named.all(|c| Some(c) == first)
    });
    let mut loose: Vec<IndexRead> = Vec::new();
    let mut held: Vec<Vec<IndexRead>> = vec![Vec::new(); cards.len()];
    for r in indexes {
        match cards.iter().position(|d| d.source == Source::Card && inside(d, &r)) {
            Some(i) => held[i].push(r),
            None => loose.push(r),
        }
    }
    // An unread outline is named by its indexes: one sure reading, or two of its corners read
    // alike. A read outline keeps its own reading (its corners were read).
    for (d, reads) in cards.iter_mut().zip(held) {
        if d.card != CardIdentity::Unknown {
            continue;
        }
        let Some(best) = reads.first() else { continue };
        let confidence = reads.iter().skip(1).map(|r| paired_confidence(best, r)).fold(best.confidence, f32::max);
        if confidence >= min_conf {
            d.card = best.card;
            d.confidence = confidence;
            d.face_up = true;
            d.reading = best.card.card();
        }
    }
    let mut used = vec![false; loose.len()];
    for a in 0..loose.len() {
        if used[a] {
            continue;
        }
        used[a] = true;
        let reach = |b: usize| SAME_CARD_INDEXES * loose[a].proposal.height().max(loose[b].proposal.height());
        let partner = (0..loose.len())
            .filter(|&b| !used[b] && loose[b].card == loose[a].card)
            .map(|b| (b, loose[a].proposal.centre().dist(loose[b].proposal.centre())))
            .filter(|&(b, d)| d <= reach(b))
            .min_by(|x, y| x.1.total_cmp(&y.1));
        let mut pts = loose[a].proposal.quad().to_vec();
        let mut confidence = loose[a].confidence;
        if let Some((b, _)) = partner {
            used[b] = true;
            pts.extend(loose[b].proposal.quad());
            confidence = paired_confidence(&loose[a], &loose[b]);
        }
        if confidence < min_conf {
            continue;
        }
        let quad = min_area_rect(&pts).map_or_else(|| order_quad(loose[a].proposal.quad()), |r| r.quad());
        let index_boxes = pts.chunks(4).map(bounding_box).collect();
        cards.push(DetectedCard {
            card: loose[a].card,
            confidence,
            face_up: true,
            quad,
            index_boxes,
            source: Source::IndexOnly,
            reading: loose[a].card.card(),
            rank: loose[a].card.card().map(|c| (c.rank(), confidence)),
            twin: TwinPrint::Alone,
        });
    }
    cards
}

/// A named card of one aspect reading is named again by another when that one names the same
/// card within this share of the photo's longer side (centres, in the photo's pixels).
const SAME_PLACE: f64 = 0.06;

/// Of a photo's readings, each at the `(x, y)` factors its image was resized by (the first at
/// its own aspect), its quads and index boxes mapped back to the photo's pixels, the one whose
/// named cards are most often named again, at the same place ([`SAME_PLACE`]), by another
/// reading (then the one naming most cards; ties keep the earlier). A squeezed reading must
/// beat the photo's own on that count: on a photo truly square a squeeze names a few cards no
/// other reading sees, mostly where no card lies, whereas the cards of a photo stretched square
/// are named again at the neighbouring aspect (16:9 and 4:3 both undo most of the stretch).
/// Measured on the shared real photos and the simulator's truly square photos (2026-12-03,
/// docs/recognition.md, "Which aspect reading is kept").
fn best_aspect_reading(readings: Vec<((f64, f64), Vec<DetectedCard>)>, side: f64) -> Vec<DetectedCard> {
    let readings: Vec<Vec<DetectedCard>> = readings
        .into_iter()
        .map(|((sx, sy), mut dets)| {
            for d in &mut dets {
                d.quad = d.quad.map(|p| Point::new(p.x / sx, p.y / sy));
                for b in &mut d.index_boxes {
                    *b = [b[0] / sx, b[1] / sy, b[2] / sx, b[3] / sy];
                }
            }
            dets
        })
        .collect();
    let named = |dets: &[DetectedCard]| -> Vec<(Card, Point)> {
        dets.iter().filter_map(|d| Some((d.card.card()?, Point::mean(&d.quad)))).collect()
    };
    let all: Vec<Vec<(Card, Point)>> = readings.iter().map(|r| named(r)).collect();
    let named_again = |k: usize, &(card, at): &(Card, Point)| {
        all.iter()
            .enumerate()
            .any(|(j, other)| j != k && other.iter().any(|&(c, p)| c == card && p.dist(at) < SAME_PLACE * side))
    };
    let again: Vec<usize> = (0..all.len()).map(|k| all[k].iter().filter(|n| named_again(k, n)).count()).collect();
    let score = |k: usize| (again[k], all[k].len());
    let best = (1..all.len()).fold(0, |best, k| if score(k) > score(best) { k } else { best });
    let best = if again[best] > again[0] { best } else { 0 };
    readings.into_iter().nth(best).unwrap_or_default()
}

/// An index-only detection lying at least this share inside a named outline is on that card.
const ON_OUTLINE: f64 = 0.5;

/// A photo's named outlines against the index-only detections lying on them ([`ON_OUTLINE`];
/// their index centres fell just outside the outline, or `index_reads` would have given them to
/// it): one naming the outline's card is that card again, and is dropped; one naming another
/// card leaves the outline `unknown` (its reading kept as `reading`). The index, read by the
/// glyph classifier, is the surer of the two: on the shared real photos two 8♦s outlined and read
/// as 9♦ had their index strip read 8♦ on the outline (2026-12-03, docs/recognition.md, "Square
/// photos"; an 8♥ read 9♥ has its index beyond its outline's corner, and stands).
fn settle_index_only(mut cards: Vec<DetectedCard>) -> Vec<DetectedCard> {
    let on = |outline: &DetectedCard, index: &DetectedCard| {
        let area = polygon_area(&index.quad);
        area > 0.0 && polygon_area(&intersect_convex(&index.quad, &outline.quad)) >= ON_OUTLINE * area
    };
    let named = |d: &DetectedCard| d.card.card().is_some();
    let outlines: Vec<usize> =
        (0..cards.len()).filter(|&i| cards[i].source == Source::Card && named(&cards[i])).collect();
    let mut drop = vec![false; cards.len()];
    let mut doubted = vec![false; cards.len()];
    for (j, e) in cards.iter().enumerate().filter(|(_, e)| e.source == Source::IndexOnly && named(e)) {
        for &i in outlines.iter().filter(|&&i| on(&cards[i], e)) {
            if cards[i].card == e.card {
                drop[j] = true;
            } else {
                doubted[i] = true;
            }
        }
    }
    for (d, _) in cards.iter_mut().zip(&doubted).filter(|(_, &x)| x) {
        d.card = CardIdentity::Unknown;
    }
    cards.into_iter().zip(drop).filter(|(_, x)| !x).map(|(d, _)| d).collect()
}

/// The confidence in `a`'s card given `b`'s reading too: two corners of one card are
/// independent views, so their odds multiply (0.99 and 0.99: 0.9999), but only if they are two
/// places on the card (at least [`OTHER_CORNER`] index heights apart), not two readings of one
/// index that the merge kept apart, and only if they name the same card; otherwise `a`'s own.
fn paired_confidence(a: &IndexRead, b: &IndexRead) -> f32 {
    let apart = a.proposal.centre().dist(b.proposal.centre());
    if a.card != b.card || apart < OTHER_CORNER * a.proposal.height().max(b.proposal.height()) {
        return a.confidence;
    }
    let (p, q) = (f64::from(a.confidence), f64::from(b.confidence));
    a.confidence.max((p * q / (p * q + (1.0 - p) * (1.0 - q))) as f32)
}

/// One detection per card: the best readings first (a named card, then a back, then an unread
/// face; by confidence), each dropping the later ones that cover more than half of it or of
/// themselves (the same card outlined twice, a court card's picture frame, a card's pip).
fn suppress_overlaps(mut cards: Vec<DetectedCard>) -> Vec<DetectedCard> {
    let rank = |d: &DetectedCard| match d.card {
        CardIdentity::Card(_) => 2,
        CardIdentity::Back => 1,
        CardIdentity::Unknown => 0,
    };
    cards.sort_by(|a, b| rank(b).cmp(&rank(a)).then(b.confidence.total_cmp(&a.confidence)));
    let mut kept: Vec<DetectedCard> = Vec::new();
    for d in cards {
        let area = polygon_area(&d.quad);
        let covered = kept.iter().any(|k| {
            let inter = polygon_area(&intersect_convex(&d.quad, &k.quad));
            inter > 0.5 * area.min(polygon_area(&k.quad))
        });
        if !covered {
            kept.push(d);
        }
    }
    kept
}

/// One patch to cut: an index box (v1 classifier) or an upright card-corner view (v2).
#[derive(Debug, Clone, Copy)]
enum PatchJob {
    Box(classify::PatchRect),
    Corner([Point; 4]),
}

impl PatchJob {
    /// Where the patch is read: its centre in frame pixels. A corner view is the whole card
    /// seen from the corner read; the patch shows its `region` (fractions of the short and long
    /// side) from that corner.
    fn centre(&self, region: (f64, f64)) -> Point {
        match self {
            PatchJob::Box(r) => {
                let half = 0.5 * f64::from(r.side);
                Point::new(f64::from(r.x0) + half, f64::from(r.y0) + half)
            }
            PatchJob::Corner([tl, tr, br, bl]) => {
                // bilinear in the view: a card's quad is near enough a parallelogram this small
                let (u, v) = (0.5 * region.0, 0.5 * region.1);
                let (top, bottom) = (tl.lerp(*tr, u), bl.lerp(*br, u));
                top.lerp(bottom, v)
            }
        }
    }
}

/// A face-up card the card classifiers left unnamed: its index in the frame's cards, its two
/// index-corner views ([`classify::corner_quads`]), their readings and its whole-card readings.
struct Unnamed<'a> {
    card: usize,
    views: [[Point; 4]; 2],
    index: Vec<&'a [f32]>,
    faces: Vec<&'a [f32]>,
}

/// A card-corner reading this sure of another card keeps the glyph classifier from naming a
/// card ([`Recognizer::complete_with_glyphs`]). An unsure one does not: on a design it never saw,
/// the card-corner classifier leans to some card at 0.5–0.9 where the glyphs read the index
/// plainly (San Gong seed 9's 8♠ under a 10♦ reading 0.58).
const CORNER_CONTRADICTS: f32 = 0.99;

/// A frame's classified patches: what was cut, which of them are each card's, and the
/// classifier's probabilities (one row per job).
struct Patches<'a> {
    jobs: &'a [PatchJob],
    of_card: &'a [Vec<usize>],
    probs: &'a ndarray::Array2<f32>,
}

/// [`cover::set_aside_covered`] over a frame's cards (`quads`, ordered): each card's index
/// readings, where each was read, and its whole-card readings (`face_rows[k]` of `face_probs`).
/// Returns each card's index readings left.
#[allow(clippy::too_many_arguments)]
fn set_aside_covered<'a>(
    image: &Mat,
    kind: PatchKind,
    quads: &[Quad],
    patches: &Patches<'a>,
    face_probs: Option<&'a ndarray::Array2<f32>>,
    face_rows: &[Vec<usize>],
    verdicts: &mut [classify::Verdict],
    min_conf: f32,
) -> Vec<Vec<&'a [f32]>> {
    let index: Vec<Vec<&[f32]>> = patches.of_card.iter().map(|p| prob_rows(patches.probs, p.iter().copied())).collect();
    let region = kind.corner_cut().map_or((1.0, 1.0), |c| c.region);
    let at: Vec<Vec<Point>> =
        patches.of_card.iter().map(|p| p.iter().map(|&i| patches.jobs[i].centre(region)).collect()).collect();
    let faces: Vec<Vec<&[f32]>> =
        face_rows.iter().map(|r| face_probs.map_or_else(Vec::new, |fp| prob_rows(fp, r.iter().copied()))).collect();
    let over = twins::seen_over_once(image, quads);
    cover::set_aside_covered(verdicts, quads, &index, &at, &faces, min_conf, &over)
}

/// A wider reading replaces a card's verdict only where it names a card: a no-read stays the
/// first reading's (a wider view of a covered corner reads the felt or a neighbour's back, and a
/// face would be turned into a back by it).
fn adopt_if_named(verdict: &mut classify::Verdict, wider: classify::Verdict) {
    if wider.identity.card().is_some() {
        *verdict = wider;
    }
}

/// The index corners of each card (its two [`classify::corner_quads`] views `views[j]`, read as
/// `rows[j]`) in which the classifier saw nothing (`unknown` its most likely label), to be read again
/// wider ([`Recognizer::name_from_wider_corners`]): their views, and for each card the positions of its
/// own among them.
///
/// Only such corners: a corner read as some card, however unsure, is read again wider by the
/// same network from mostly the same pixels, so its two readings are not independent views and
/// their product would overstate the evidence (an anglo 8♠ whose corners leaned to 10♠ was named
/// 10♠ that way). A corner that saw nothing added nothing, and its wider view is the only reading
/// of that corner.
fn blank_corners(views: &[[[Point; 4]; 2]], rows: &[Vec<&[f32]>]) -> (Vec<[Point; 4]>, Vec<Vec<usize>>) {
    let mut blank = Vec::new();
    let mut own = Vec::with_capacity(views.len());
    for (card, rows) in views.iter().zip(rows) {
        let mut mine = Vec::new();
        for (view, row) in card.iter().zip(rows.iter()) {
            if classify::argmax(row).0 == classify::UNKNOWN {
                blank.push(*view);
                mine.push(blank.len() - 1);
            }
        }
        own.push(mine);
    }
    (blank, own)
}

/// Rows `ids` of a classifier's probabilities, one slice per patch.
fn prob_rows(probs: &ndarray::Array2<f32>, ids: impl IntoIterator<Item = usize>) -> Vec<&[f32]> {
    ids.into_iter().map(|n| probs.row(n).to_slice().expect("standard layout")).collect()
}

/// Loads [`RecognizerOptions::face_classifier`]: a card-corner classifier whose cut is the whole
/// card ([`classify::CornerCut::FACE`]); any other is refused, naming the file.
fn load_face_classifier(path: &Path, session: &SessionOptions) -> Result<Classifier, RecognizeError> {
    let c = Classifier::load(resolve_model(path), session)?;
    if c.patch_kind() != PatchKind::CardCorner(classify::CornerCut::FACE) {
        return Err(RecognizeError::Classify(ClassifyError::Metadata {
            path: c.path().to_path_buf(),
            problem: "is not a whole-card classifier (tablecam.corner \"1,1\" at tablecam.patch \"64x40\"); \
                      pass it as the classifier, or train one with `corners.py --face` and `train_corner.py --face`"
                .into(),
        }));
    }
    Ok(c)
}

/// Loads [`RecognizerOptions::glyph_classifier`]: a classifier of index glyph views
/// ([`PatchKind::IndexGlyphs`]); any other is refused, naming the file.
fn load_glyph_classifier(path: &Path, session: &SessionOptions) -> Result<Classifier, RecognizeError> {
    let c = Classifier::load(resolve_model(path), session)?;
    if c.patch_kind() != PatchKind::IndexGlyphs {
        return Err(RecognizeError::Classify(ClassifyError::Metadata {
            path: c.path().to_path_buf(),
            problem: "is not a glyph classifier (tablecam.patch_kind \"index_glyphs\"); train one with \
                      `glyph_patches.py` and `train_corner.py --glyph` (models/MODEL_CARD.md)"
                .into(),
        }));
    }
    Ok(c)
}

/// Cuts every job into one batch `[N, 3, H, W]` for a classifier of `kind` (each job must be of
/// that kind's sort).
fn cut_batch(image: &Mat, kind: PatchKind, jobs: &[PatchJob]) -> Result<Array4<f32>, RecognizeError> {
    let (ph, pw) = kind.shape();
    let mut batch = Array4::<f32>::zeros((jobs.len(), 3, ph, pw));
    for (job, mut slot) in jobs.iter().zip(batch.outer_iter_mut()) {
        let out = slot.as_slice_mut().expect("standard layout");
        match (kind, job) {
            (PatchKind::IndexBox, PatchJob::Box(rect)) => classify::cut_patch(image, *rect, out)?,
            (PatchKind::CardCorner(cut), PatchJob::Corner(view)) => classify::cut_corner_patch(image, view, cut, out)?,
            _ => unreachable!("patch jobs are made for the classifier's kind"),
        }
    }
    Ok(batch)
}

/// Step 5: corners on no card. Each is classified alone; two with the same confident card
/// identity whose centres are within [`PAIR_DISTANCE`] × the larger box side become one card
/// (closest partners first, most confident corners first), quad = the minimum-area rectangle of
/// both boxes; the others become cards of their own box.
fn group_loose_corners(
    corners: &[&FoundIndex],
    probs: ArrayView2<'_, f32>,
    patch: &[usize],
    min_conf: f32,
) -> Vec<DetectedCard> {
    let row = |k: usize| probs.row(patch[k]).to_slice().expect("standard layout");
    let verdicts: Vec<classify::Verdict> = (0..corners.len()).map(|k| classify::combine(&[row(k)], min_conf)).collect();
    let mut order: Vec<usize> = (0..corners.len()).collect();
    order.sort_by(|&a, &b| verdicts[b].confidence.total_cmp(&verdicts[a].confidence));
    let mut used = vec![false; corners.len()];
    let mut out = Vec::new();
    for &a in &order {
        if used[a] {
            continue;
        }
        used[a] = true;
        let is_card = matches!(verdicts[a].identity, CardIdentity::Card(_));
        let side = |k: usize| {
            let (w, h) = corners[k].size();
            w.max(h)
        };
        let partner = (0..corners.len())
            .filter(|&b| is_card && !used[b] && verdicts[b].identity == verdicts[a].identity)
            .map(|b| (b, corners[a].center.dist(corners[b].center)))
            .filter(|&(b, d)| d <= PAIR_DISTANCE * side(a).max(side(b)))
            .min_by(|x, y| x.1.total_cmp(&y.1))
            .map(|(b, _)| b);
        let (card, confidence, quad, boxes) = match partner {
            Some(b) => {
                used[b] = true;
                let v = classify::combine(&[row(a), row(b)], min_conf);
                let pts: Vec<Point> = box_quad(corners[a].bbox).into_iter().chain(box_quad(corners[b].bbox)).collect();
                let quad = min_area_rect(&pts).map_or_else(|| box_quad(corners[a].bbox), |r| r.quad());
                (v.identity, v.confidence, quad, vec![corners[a].bbox, corners[b].bbox])
            }
            None => (verdicts[a].identity, verdicts[a].confidence, box_quad(corners[a].bbox), vec![corners[a].bbox]),
        };
        let reading = card.card();
        out.push(DetectedCard {
            card,
            confidence,
            face_up: true,
            quad,
            index_boxes: boxes,
            source: Source::IndexOnly,
            reading,
            rank: reading.map(|c| (c.rank(), confidence)),
            twin: TwinPrint::Alone,
        });
    }
    out
}

/// Step 6: drops detections whose centre is off the table and replaces each located card's quad
/// by the exact card rectangle on the table plane (centre and long-axis direction mapped to the
/// table, the card's size from the calibration, corners mapped back).
fn on_table_plane(cards: Vec<DetectedCard>, g: &TableGeometry) -> Vec<DetectedCard> {
    let [card_w, card_h] = g.calibration.card_size_mm;
    cards
        .into_iter()
        .filter_map(|mut d| {
            let rect = RotatedRect::from_quad(&d.quad);
            let centre = g.image_to_table(rect.center)?;
            if !on_table(centre, 0.0) {
                return None;
            }
            if d.source == Source::Card {
                let u = rect.long_axis();
                let tip = Point::new(rect.center.x + u.x * rect.long / 2.0, rect.center.y + u.y * rect.long / 2.0);
                if let Some(tip_mm) = g.image_to_table(tip) {
                    let angle = (tip_mm.y - centre.y).atan2(tip_mm.x - centre.x);
                    let table = Polygon::rect(centre, card_h, card_w, angle);
                    let img: Vec<Point> = table.0.iter().filter_map(|&p| g.table_to_image(p)).collect();
                    if let [a, b, c, e] = img[..] {
                        d.quad = order_quad([a, b, c, e]);
                    }
                }
            }
            Some(d)
        })
        .collect()
}

/// Finds a model file: `path` as given if it exists, else relative to the project directories
/// (see [`crate::onnx::find_project_file`]); returns `path` unchanged when found nowhere, so that
/// the load error names it.
pub fn resolve_model(path: &Path) -> PathBuf {
    if path.is_file() || path.is_absolute() {
        return path.to_path_buf();
    }
    crate::onnx::find_project_file(path).unwrap_or_else(|| path.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncalibrated_plan_scales_the_long_side_to_640_and_pads_to_32() {
        let o = RecognizerOptions::default();
        let p = plan_input(1920, 1080, None, &o);
        assert_eq!((p.crop, p.resized, p.net), ([0, 0, 1920, 1080], [640, 360], [640, 384]));
        assert!(p.to_frame(Point::new(320.0, 180.0)).dist(Point::new(960.0, 540.0)) < 1e-9);
        assert!(p.in_content(Point::new(10.0, 359.0)) && !p.in_content(Point::new(10.0, 370.0)));
        // Small images are scaled up.
        let p = plan_input(200, 300, None, &o);
        assert_eq!((p.resized, p.net), ([427, 640], [448, 640]));
    }

    #[test]
    fn input_is_rgb_over_255_with_the_edge_replicated_into_the_padding() {
        // 20 × 10 BGR frame: blue (255, 0, 0) on the left half, (10, 20, 30) on the right.
        let mut img =
            Mat::new_rows_cols_with_default(10, 20, core::CV_8UC3, core::Scalar::new(10.0, 20.0, 30.0, 0.0)).unwrap();
        imgproc::rectangle(
            &mut img,
            Rect::new(0, 0, 10, 10),
            core::Scalar::new(255.0, 0.0, 0.0, 0.0),
            -1,
            imgproc::LINE_8,
            0,
        )
        .unwrap();
        let plan = InputPlan { crop: [0, 0, 20, 10], resized: [20, 10], net: [32, 32] };
        let mut input = prepare_input(&img, &plan).unwrap();
        assert_eq!(input.shape(), &[1, 3, 32, 32]);
        let px = |input: &Array4<f32>, x: usize, y: usize| [0, 1, 2].map(|c| (input[[0, c, y, x]] * 255.0).round());
        assert_eq!(px(&input, 0, 0), [0.0, 0.0, 255.0], "RGB order");
        assert_eq!(px(&input, 15, 5), [30.0, 20.0, 10.0]);
        assert_eq!(px(&input, 31, 31), [30.0, 20.0, 10.0], "padding replicates the bottom-right pixel");
        assert_eq!(px(&input, 3, 31), [0.0, 0.0, 255.0]);
        // Reused buffer: a second frame overwrites everything.
        let grey = Mat::new_rows_cols_with_default(10, 20, core::CV_8UC3, core::Scalar::all(51.0)).unwrap();
        prepare_input_into(&grey, &plan, &mut input).unwrap();
        assert!(input.iter().all(|&v| (v - 0.2).abs() < 1e-6));
    }

    #[test]
    fn calibrated_plan_makes_cards_72_px_long() {
        let cal = layout::simulated_calibration(
            crate::rules::RulesetId::Fortune3cp2025,
            "T",
            1280,
            720,
            &layout::default_pose(),
            None,
        );
        let g = cal.validate(Path::new("<test>")).unwrap();
        let o = RecognizerOptions { max_input_side: 10_000, ..RecognizerOptions::default() };
        let p = plan_input(1280, 720, Some(&g), &o);
        let c = table_centre(&g).unwrap();
        let long_px = px_per_mm(&g, c).unwrap() * g.calibration.card_size_mm[1];
        let (sx, _) = p.scale();
        assert!((long_px * sx - 72.0).abs() < 0.5, "{long_px} px × {sx}");
        assert_eq!(p.net[0] % 32, 0);
        assert_eq!(p.net[1] % 32, 0);
        // The cap wins over the card size.
        let capped = plan_input(1280, 720, Some(&g), &RecognizerOptions { max_input_side: 320, ..o });
        assert!(capped.resized[0].max(capped.resized[1]) <= 320, "{capped:?}");
    }

    fn verdict(identity: &str, confidence: f32, face: f32) -> classify::Verdict {
        let identity = match identity {
            "back" => CardIdentity::Back,
            "unknown" => CardIdentity::Unknown,
            code => CardIdentity::Card(code.parse().unwrap()),
        };
        let reading = identity.card();
        classify::Verdict { identity, confidence, informative: 2, conflict: false, face, reading, rank: None }
    }

    #[test]
    fn the_classifiers_overrule_the_planes_side_only_when_clearly_sure() {
        let v = |identity: &str, face: f32, informative: usize| classify::Verdict {
            informative,
            ..verdict(identity, 0.5, face)
        };
        // the plane's side stands while the classifiers are unsure either way
        assert!(shows_face(true, true, &v("unknown", 0.5, 2)));
        assert!(!shows_face(false, true, &v("unknown", 0.5, 2)));
        // a face the plane missed: the classifiers see one clearly, or name the card
        assert!(shows_face(false, true, &v("unknown", 0.995, 2)));
        assert!(shows_face(false, true, &v("7H", 0.9995, 2)));
        // a back the plane took for a face (stud seed 11: 0.0006–0.0028 face, no back named)
        assert!(!shows_face(true, true, &v("unknown", 0.0028, 2)));
        assert!(!shows_face(true, true, &v("back", 0.0, 2)));
        // patches that showed nothing are no evidence of a back
        assert!(shows_face(true, true, &v("unknown", 0.0, 0)));
        // an index-box classifier (no corner cut) does not tell faces from backs
        assert!(shows_face(true, false, &v("unknown", 0.0028, 2)));
        assert!(!shows_face(false, false, &v("unknown", 0.995, 2)));
    }

    #[test]
    fn an_outline_is_read_at_the_diagonal_that_names_a_card_and_never_at_two_names() {
        let card = |a, b| either_diagonal(a, b).map(|v| v.identity.code());
        let blank = verdict("unknown", 0.0, 0.0);
        assert_eq!(card(verdict("7H", 0.9995, 1.0), blank).as_deref(), Some("7H"));
        assert_eq!(card(blank, verdict("7H", 0.9995, 1.0)).as_deref(), Some("7H"));
        // two diagonals, two names: one is a misread, so neither is reported
        let v = either_diagonal(verdict("7H", 0.9995, 1.0), verdict("7D", 0.9991, 1.0)).unwrap();
        assert_eq!((v.identity, v.conflict), (CardIdentity::Unknown, true));
        // a face not yet read outranks a back seen in the blank corners of the other diagonal
        assert_eq!(card(verdict("unknown", 0.6, 0.97), verdict("back", 0.9995, 0.0)).as_deref(), Some("unknown"));
        assert_eq!(card(verdict("back", 0.9995, 0.0), verdict("back", 0.9992, 0.0)).as_deref(), Some("back"));
        // a back at one diagonal only: the other corners would show the pattern too
        assert_eq!(card(verdict("back", 0.9995, 0.0), blank).as_deref(), Some("unknown"));
        // neither a face nor a back: the outline is no card
        assert_eq!(card(blank, verdict("unknown", 0.4, 0.2)), None);
    }

    #[test]
    fn overlapping_outlines_keep_the_best_reading_and_separate_cards_stay() {
        let det = |card: &str, confidence: f32, quad: Quad| DetectedCard {
            card: match card {
                "unknown" => CardIdentity::Unknown,
                c => CardIdentity::Card(c.parse().unwrap()),
            },
            confidence,
            face_up: true,
            quad,
            index_boxes: vec![],
            source: Source::Card,
            reading: None,
            rank: None,
            twin: TwinPrint::Alone,
        };
        let card = box_quad([100.0, 100.0, 163.0, 188.0]);
        let picture = box_quad([112.0, 115.0, 151.0, 173.0]); // a court card's frame, inside it
        let twin = box_quad([101.0, 99.0, 164.0, 187.0]); // the same card from another mask
        let other = box_quad([300.0, 100.0, 363.0, 188.0]);
        let kept = suppress_overlaps(vec![
            det("unknown", 0.7, picture),
            det("KS", 0.9992, twin),
            det("KS", 0.9999, card),
            det("unknown", 0.3, other),
        ]);
        let got: Vec<(String, [f64; 4])> = kept.iter().map(|d| (d.card.code(), d.quad.map(|p| p.x))).collect();
        assert_eq!(kept.len(), 2, "{got:?}");
        assert_eq!((kept[0].card.code(), kept[0].quad), ("KS".to_string(), card));
        assert_eq!(kept[1].quad, other);
    }

    #[test]
    fn loose_corners_pair_by_identity_and_distance() {
        let mk = |x: f64, y: f64| FoundIndex { center: Point::new(x, y), bbox: [x - 5.0, y - 10.0, x + 5.0, y + 10.0] };
        let corners = [mk(100.0, 100.0), mk(150.0, 180.0), mk(400.0, 100.0), mk(100.0, 300.0)];
        let refs: Vec<&FoundIndex> = corners.iter().collect();
        let label = |code: &str| code.parse::<crate::rules::Card>().unwrap().index() as usize;
        let mut probs = ndarray::Array2::<f32>::from_elem((4, classify::NUM_LABELS), 0.001);
        // 0 and 1: AS, 94 px apart (≤ 6 × 20): one card. 2: AS but far away. 3: KD alone.
        for (r, l) in [(0, label("AS")), (1, label("AS")), (2, label("AS")), (3, label("KD"))] {
            probs[[r, l]] = 0.95;
        }
        let out = group_loose_corners(&refs, probs.view(), &[0, 1, 2, 3], 0.9);
        assert_eq!(out.len(), 3, "{out:?}");
        let pair = out.iter().find(|d| d.index_boxes.len() == 2).expect("a pair");
        assert_eq!(pair.card.code(), "AS");
        assert_eq!(pair.source, Source::IndexOnly);
        let r = RotatedRect::from_quad(&pair.quad);
        for c in [Point::new(95.0, 90.0), Point::new(155.0, 190.0)] {
            assert!(Polygon(pair.quad.to_vec())
                .contains(Point::new(c.x * 0.999 + r.center.x * 0.001, c.y * 0.999 + r.center.y * 0.001)));
        }
        let single = out.iter().find(|d| d.card.code() == "KD").unwrap();
        assert_eq!(single.quad, box_quad(corners[3].bbox));
    }

    fn index_at(x: f64, y: f64, h: f64) -> locate::glyphs::IndexProposal {
        let (right, down) = (Point::new(1.0, 0.0), Point::new(0.0, 1.0));
        locate::glyphs::IndexProposal {
            u: [x - 0.3 * h, x + 0.3 * h],
            v: [y - 0.5 * h, y + 0.5 * h],
            right,
            down,
            inverted: false,
        }
    }

    fn read(code: &str, at: (f64, f64), confidence: f32) -> IndexRead {
        IndexRead { proposal: index_at(at.0, at.1, 40.0), card: CardIdentity::parse(code).unwrap(), confidence }
    }

    /// A card outlined in a photo at (50, 50)–(250, 330), read as `card`.
    fn outline(card: &str) -> DetectedCard {
        DetectedCard {
            card: CardIdentity::parse(card).unwrap(),
            confidence: 0.5,
            face_up: true,
            quad: box_quad([50.0, 50.0, 250.0, 330.0]),
            index_boxes: vec![],
            source: Source::Card,
            reading: None,
            rank: None,
            twin: TwinPrint::Alone,
        }
    }

    #[test]
    fn a_wide_corner_scale_out_of_range_is_refused_before_any_model_loads() {
        for bad in [0.5, 2.5, f64::NAN] {
            let options = RecognizerOptions { wide_corner_scale: Some(bad), ..RecognizerOptions::default() };
            let err = Recognizer::with_options("no-such-locator.onnx", "no-such-classifier.onnx", options).err();
            assert!(matches!(err, Some(RecognizeError::WideCornerScale(_))), "{bad}: {err:?}");
        }
    }

    #[test]
    fn only_corners_that_saw_nothing_are_read_again_wider() {
        let row = |label: usize, p: f32| {
            let mut r = vec![(1.0 - p) / 53.0; classify::NUM_LABELS];
            r[label] = p;
            r
        };
        let (blank, unsure_card) = (row(classify::UNKNOWN, 0.9), row(7, 0.6));
        let quad =
            |x: f64| [Point::new(x, 0.0), Point::new(x + 63.0, 0.0), Point::new(x + 63.0, 88.0), Point::new(x, 88.0)];
        let views = [classify::corner_quads(&quad(0.0)), classify::corner_quads(&quad(100.0))];
        // card 0: both corners blank; card 1: one corner leaning to a card (however unsure), one blank
        let rows = vec![vec![&blank[..], &blank[..]], vec![&unsure_card[..], &blank[..]]];
        let (wide, own) = blank_corners(&views, &rows);
        assert_eq!(own, vec![vec![0, 1], vec![2]]);
        assert_eq!(wide, vec![views[0][0], views[0][1], views[1][1]]);
        // nothing blank, nothing to read again
        let (wide, own) = blank_corners(&views[1..], &[vec![&unsure_card[..], &unsure_card[..]]]);
        assert!(wide.is_empty() && own == vec![Vec::<usize>::new()]);
    }

    #[test]
    fn index_readings_that_disagree_name_no_card() {
        // two readings of one index (10 px apart, index 40 px high), another index far away
        let out =
            index_reads(vec![], vec![read("5S", (100.0, 100.0), 0.9995), read("5C", (104.0, 108.0), 0.9991)], 0.999);
        assert!(out.is_empty(), "{out:?}");
        let out =
            index_reads(vec![], vec![read("5S", (100.0, 100.0), 0.9995), read("5S", (104.0, 108.0), 0.9991)], 0.999);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].card.code().as_str(), out[0].source), ("5S", Source::IndexOnly));
        assert_eq!(out[0].index_boxes, vec![[88.0, 80.0, 112.0, 120.0]]);
    }

    #[test]
    fn an_index_on_an_outlined_card_names_it_only_if_its_outline_read_nothing() {
        let out = index_reads(vec![outline("unknown")], vec![read("QH", (80.0, 90.0), 0.9993)], 0.999);
        assert_eq!(out.len(), 1);
        assert_eq!((out[0].card.code().as_str(), out[0].quad), ("QH", box_quad([50.0, 50.0, 250.0, 330.0])));
        // the outline read the card's own corners: its reading stands, the index adds nothing
        let out = index_reads(vec![outline("QD")], vec![read("QH", (80.0, 90.0), 0.9993)], 0.999);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].card.code(), "QD");
    }

    #[test]
    fn the_two_indexes_of_one_card_are_one_card_and_other_cards_stay_apart() {
        let reads = vec![
            read("9D", (100.0, 100.0), 0.9995),
            read("9D", (260.0, 330.0), 0.9992),   // the other end of the same card
            read("9C", (150.0, 100.0), 0.9996),   // a neighbour in the fan
            read("9D", (2000.0, 2000.0), 0.9991), // a second deck's 9D, far away
        ];
        let out = index_reads(vec![], reads, 0.999);
        let codes: Vec<String> = out.iter().map(|d| d.card.code()).collect();
        assert_eq!(codes.iter().filter(|c| *c == "9D").count(), 2, "{codes:?}");
        let pair = out.iter().find(|d| d.index_boxes.len() == 2).expect("the card read at both ends");
        assert_eq!(pair.card.code(), "9D");
        assert!(Polygon(pair.quad.to_vec()).contains(Point::new(180.0, 215.0)));
        assert!(out.iter().any(|d| d.card.code() == "9C" && d.index_boxes.len() == 1));
    }

    #[test]
    fn two_unsure_indexes_of_one_card_name_it_and_one_alone_does_not() {
        // each below the threshold; together 0.995 · 0.995 against 0.005 · 0.005
        let both =
            index_reads(vec![], vec![read("7H", (100.0, 100.0), 0.995), read("7H", (260.0, 330.0), 0.995)], 0.999);
        assert_eq!(both.len(), 1, "{both:?}");
        assert_eq!((both[0].card.code().as_str(), both[0].index_boxes.len()), ("7H", 2));
        assert!(both[0].confidence > 0.9999);
        let alone = index_reads(vec![], vec![read("7H", (100.0, 100.0), 0.995)], 0.999);
        assert!(alone.is_empty(), "{alone:?}");
        // two readings a little apart are one index read twice, not two corners
        let twice =
            index_reads(vec![], vec![read("7H", (100.0, 100.0), 0.995), read("7H", (100.0, 150.0), 0.995)], 0.999);
        assert!(twice.is_empty(), "{twice:?}");
        // an unsure reading does not name an outlined card
        let out = index_reads(vec![outline("unknown")], vec![read("7H", (80.0, 90.0), 0.995)], 0.999);
        assert_eq!(out[0].card, CardIdentity::Unknown);
    }

    #[test]
    fn an_unread_outline_is_named_by_its_two_corners_read_alike() {
        // the outline's two index corners, each below the threshold
        let corners = || vec![read("7H", (80.0, 90.0), 0.995), read("7H", (220.0, 290.0), 0.995)];
        let out = index_reads(vec![outline("unknown")], corners(), 0.999);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!((out[0].card.code().as_str(), out[0].source), ("7H", Source::Card));
        assert!(out[0].confidence > 0.9999);
        // one index read twice is one view, not two corners
        let twice = index_reads(vec![outline("unknown")], vec![corners()[0], read("7H", (80.0, 130.0), 0.995)], 0.999);
        assert_eq!(twice[0].card, CardIdentity::Unknown);
        // a read outline keeps its own reading
        let read_outline = index_reads(vec![outline("7D")], corners(), 0.999);
        assert_eq!(read_outline.len(), 1, "{read_outline:?}");
        assert_eq!(read_outline[0].card.code(), "7D");
    }

    #[test]
    fn the_reading_whose_cards_other_readings_confirm_is_kept_in_the_photos_pixels() {
        let at = |card: &str, b: [f64; 4]| DetectedCard { quad: box_quad(b), index_boxes: vec![b], ..outline(card) };
        let own = vec![at("7H", [0.0, 0.0, 100.0, 100.0]), at("unknown", [200.0, 0.0, 300.0, 100.0])];
        // squeezed to 9/16 of its height: two cards named, the 8S named again squeezed to 3/4
        let sixteen_nine = vec![at("7H", [0.0, 0.0, 100.0, 56.25]), at("8S", [200.0, 0.0, 300.0, 56.25])];
        let four_three = vec![at("8S", [200.0, 0.0, 300.0, 75.0])];
        let best = best_aspect_reading(
            vec![((1.0, 1.0), own.clone()), ((1.0, 9.0 / 16.0), sixteen_nine.clone()), ((1.0, 0.75), four_three)],
            300.0,
        );
        assert_eq!(best.iter().map(|d| d.card.code()).collect::<Vec<_>>(), ["7H", "8S"]);
        assert!(best[1].quad.iter().zip(box_quad([200.0, 0.0, 300.0, 100.0])).all(|(a, b)| a.dist(b) < 1e-9));
        assert!(best[1].index_boxes[0].iter().zip([200.0, 0.0, 300.0, 100.0]).all(|(a, b)| (a - b).abs() < 1e-9));
        // a squeeze naming one more card that no other reading names, or one named elsewhere:
        // the photo's own reading stands
        let alone = best_aspect_reading(vec![((1.0, 1.0), own.clone()), ((1.0, 9.0 / 16.0), sixteen_nine)], 300.0);
        assert_eq!(alone.iter().map(|d| d.card.code()).collect::<Vec<_>>(), ["7H", "unknown"]);
        assert_eq!(alone[0].quad, box_quad([0.0, 0.0, 100.0, 100.0]));
        let elsewhere = vec![at("7H", [0.0, 0.0, 100.0, 56.25]), at("8S", [200.0, 0.0, 300.0, 56.25])];
        let far = vec![at("8S", [0.0, 200.0, 100.0, 300.0])];
        let kept =
            best_aspect_reading(vec![((1.0, 1.0), own), ((1.0, 9.0 / 16.0), elsewhere), ((1.0, 1.0), far)], 300.0);
        assert_eq!(kept.iter().map(|d| d.card.code()).collect::<Vec<_>>(), ["7H", "unknown"]);
    }

    #[test]
    fn an_index_only_card_on_a_named_outline_settles_it() {
        // an index strip lying two thirds on the outline (50..250 × 50..330)
        let strip = |code: &str| DetectedCard {
            source: Source::IndexOnly,
            quad: box_quad([40.0, 60.0, 70.0, 300.0]),
            confidence: 0.9995,
            ..outline(code)
        };
        // the same card again: one detection, the outline
        let same = settle_index_only(vec![outline("8D"), strip("8D")]);
        assert_eq!(same.len(), 1, "{same:?}");
        assert_eq!((same[0].card.code().as_str(), same[0].source), ("8D", Source::Card));
        // another card: the outline's reading is in doubt, the index stands
        let other = settle_index_only(vec![outline("9D"), strip("8D")]);
        let codes: Vec<_> = other.iter().map(|d| (d.card.code(), d.source)).collect();
        assert_eq!(codes, [("unknown".to_string(), Source::Card), ("8D".to_string(), Source::IndexOnly)]);
        // an index strip mostly off the outline is another card's
        let off = DetectedCard { quad: box_quad([10.0, 60.0, 60.0, 300.0]), ..strip("8D") };
        let apart = settle_index_only(vec![outline("9D"), off]);
        assert_eq!(apart.iter().map(|d| d.card.code()).collect::<Vec<_>>(), ["9D", "8D"]);
    }

    #[test]
    fn an_unread_outline_holding_two_cards_indexes_is_no_card() {
        // a fan on a sheet of paper: the sheet is outlined, the fan's indexes lie on it
        let fan = vec![read("9D", (80.0, 90.0), 0.9995), read("9C", (130.0, 90.0), 0.9993)];
        let out = index_reads(vec![outline("unknown")], fan.clone(), 0.999);
        let mut named: Vec<_> = out.iter().map(|d| (d.card.code(), d.source)).collect();
        named.sort_by(|a, b| a.0.cmp(&b.0));
        assert_eq!(named, [("9C".to_string(), Source::IndexOnly), ("9D".to_string(), Source::IndexOnly)]);
        // an outline read as a card keeps it, and the indexes on it name no other card
        let out = index_reads(vec![outline("9D")], fan, 0.999);
        assert_eq!(out.len(), 1, "{out:?}");
        assert_eq!(out[0].card.code(), "9D");
    }
}
