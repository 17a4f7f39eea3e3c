//! `tablecam eval-recognition`: how well [`Recognizer`] finds and reads cards, on simulator
//! frames with exact ground truth and on labelled real photos (docs/recognition.md).
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use opencv::core::{self, Mat, Rect, Scalar, Vector};
use opencv::imgproc;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};

use super::cli::{load_image, write_jpeg};
use super::workers::{in_order, workers};
use super::{
    cv, resolve_model, CardIdentity, DetectedCard, ReadStepTimes, RecognizeError, Recognizer, RecognizerOptions,
    Source, StageTimes,
};
use crate::calib::{Point, Polygon};
use crate::locate::geometry::{bounding_box, box_quad, intersect_convex, polygon_area, polygon_iou};
use crate::onnx::SessionOptions;

/// Default simulator dataset.
pub const DEFAULT_SIM: &str = "datasets/generated/detect";
/// Default real-photo dataset.
pub const DEFAULT_REAL: &str = "../shared/real-cards";
/// Quad IoU at which a located card matches a simulator card.
pub const SIM_IOU: f64 = 0.7;
/// Simulator cards less visible than this are optional: finding them is not required, and a
/// detection matching one is no false positive.
pub const SIM_MIN_VISIBLE: f64 = 0.5;
/// IoU with a real label box at which a detection matches it.
pub const REAL_IOU: f64 = 0.3;
/// Tiles in `worst_errors.jpg` (and `localization_errors.jpg`).
pub const WORST_TILES: usize = 24;
/// IoU above which a localization error is a card measured wrong rather than a phantom or a
/// card with nothing on it.
pub const LOC_OVERLAP: f64 = 0.1;

/// Arguments of `tablecam eval-recognition`.
#[derive(Debug, Clone, clap::Args)]
pub struct EvalArgs {
    /// Simulator dataset (DIR/annotations.jsonl). Without --sim and --real, both defaults are
    /// evaluated where present.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = DEFAULT_SIM)]
    pub sim: Option<PathBuf>,
    /// A simulator session (`tablecam simulate --out DIR`: video.avi, frames.jsonl,
    /// calibration.json) to evaluate instead of --sim: calibrated, as the pipeline sees it.
    #[arg(long, value_name = "DIR", conflicts_with = "sim")]
    pub session: Option<PathBuf>,
    /// With --session, evaluate every this many frames.
    #[arg(long, default_value_t = 10)]
    pub every: usize,
    /// With --session, only the frames from A to B (inclusive), e.g. one round's: `--frames
    /// 8750-9210` (the video is still decoded from its start).
    #[arg(long, value_name = "A-B", value_parser = parse_frame_range)]
    pub frames: Option<(u64, u64)>,
    /// The simulator split to evaluate.
    #[arg(long, default_value = "test")]
    pub split: String,
    /// Real-photo dataset (DIR/images/*.jpg and DIR/labels.csv).
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = DEFAULT_REAL)]
    pub real: Option<PathBuf>,
    /// Evaluate only the real images listed in this file (one file name per line), e.g. a
    /// held-out split.
    #[arg(long, value_name = "FILE")]
    pub real_split: Option<PathBuf>,
    /// At most this many images per dataset.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Print report.json instead of the summary table.
    #[arg(long)]
    pub json: bool,
    /// Output folder: report.md, report.json, worst_errors.jpg.
    #[arg(long, default_value = "var/eval-recognition")]
    pub out: PathBuf,
    /// The locator model.
    #[arg(long, default_value = crate::locate::DEFAULT_PATH)]
    pub locator: PathBuf,
    /// The classifier model.
    #[arg(long, default_value = crate::classify::DEFAULT_PATH)]
    pub classifier: PathBuf,
    /// The whole-card classifier, read with the index corners (`RecognizerOptions::face_classifier`).
    #[arg(long, default_value = crate::classify::DEFAULT_FACE_PATH)]
    pub face_classifier: PathBuf,
    /// Read the index corners alone (no whole-card classifier).
    #[arg(long)]
    pub no_face_classifier: bool,
    /// The glyph classifier, which reads the indexes found as glyph pairs in photos without a
    /// calibration, and on a calibrated table those in the corners of the cards the card
    /// classifiers leave unnamed (`RecognizerOptions::glyph_classifier`).
    #[arg(long, default_value = crate::classify::DEFAULT_GLYPH_PATH)]
    pub glyph_classifier: PathBuf,
    /// No glyph classifier: photos' indexes are read by the card classifier at guessed card
    /// sizes (as before the glyph classifier), a table's cards by the card classifiers alone.
    #[arg(long)]
    pub no_glyph_classifier: bool,
    /// ONNX Runtime intra-op threads per model.
    #[arg(long, default_value_t = 1)]
    pub threads: usize,
    /// Recognize this many images (or session frames) at a time, each worker with its own copy
    /// of the models: the same report sooner on as many cores (a session's video still decodes
    /// in order), but each image's timing then shares the machine (time with 1).
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// Find cards with the locator network instead of measuring them on the rectified table
    /// plane (with a calibration) or outlining them in the photo (without; see
    /// docs/recognition.md).
    #[arg(long)]
    pub network_locator: bool,
    /// With --session: do not give the table-plane finder the session's empty table
    /// (`empty_table.jpg`, bet presence's reference); it then compares with the felt's local
    /// median, as on a camera without a reference.
    #[arg(long)]
    pub without_reference: bool,
    /// Do not read printed indexes smaller than this many pixels (their larger side): such cards
    /// are reported `unknown` (see docs/recognition.md).
    #[arg(long, default_value_t = crate::recognize::MIN_INDEX_PX)]
    pub min_index_px: f64,
    /// Read the index corners in which the classifier saw nothing again, cut this many times
    /// wider (docs/recognition.md, "Wider corners"); 0 turns it off.
    #[arg(long, default_value_t = crate::recognize::WIDE_CORNER_SCALE)]
    pub wide_corner_scale: f64,
    /// Read a face-up card left unnamed where it overlaps another card again from its outline
    /// moved ±1 and ±2 times this share of its short side toward its neighbours
    /// (docs/recognition.md, "Nudged outlines"); 0 turns it off.
    #[arg(long, default_value_t = crate::recognize::NUDGE)]
    pub nudge: f64,
    /// Read a square photo only at its own aspect, not also as a 16:9 or 4:3 photo squeezed
    /// square by an export (docs/recognition.md, "Square photos").
    #[arg(long)]
    pub own_aspect: bool,
    /// Override the classifier's calibrated `tablecam.min_confidence` (for a threshold sweep;
    /// the figures then describe that threshold, not the model as shipped).
    #[arg(long)]
    pub min_confidence: Option<f32>,
    /// The same for the glyph classifier.
    #[arg(long)]
    pub glyph_min_confidence: Option<f32>,
    /// Read photos from card outlines only, not from index glyphs on no outline (to measure
    /// what the glyph proposals add, docs/recognition.md).
    #[arg(long)]
    pub without_index_glyphs: bool,
}

// ---------------------------------------------------------------------------------------------
// Datasets
// ---------------------------------------------------------------------------------------------

/// One line of a simulator dataset's `annotations.jsonl`.
#[derive(Debug, Clone, Deserialize)]
pub struct SimImage {
    /// Image path relative to the dataset folder.
    pub image: String,
    /// `train`, `val` or `test`.
    pub split: String,
    /// Deck design.
    #[serde(default)]
    pub design: String,
    /// Deck art family.
    #[serde(default)]
    pub family: String,
    /// Cards in the frame.
    pub cards: Vec<SimCard>,
}

/// A card of a simulator frame.
#[derive(Debug, Clone, Deserialize)]
pub struct SimCard {
    /// `AS`, `10H`, … or `back`.
    pub card: String,
    /// Whether its face shows.
    pub face_up: bool,
    /// Corners in image pixels.
    pub quad: [[f64; 2]; 4],
    /// Visible fraction 0..1.
    pub visible: f64,
}

impl SimCard {
    fn quad(&self) -> [Point; 4] {
        self.quad.map(|[x, y]| Point::new(x, y))
    }

    /// What the card should be read as: `back` when face down.
    fn truth(&self) -> Option<CardIdentity> {
        if self.face_up {
            CardIdentity::parse(&self.card)
        } else {
            Some(CardIdentity::Back)
        }
    }
}

/// Reads `DIR/annotations.jsonl`, keeping the images of `split`.
pub fn read_sim(dir: &Path, split: &str) -> Result<Vec<SimImage>, RecognizeError> {
    let path = dir.join("annotations.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|e| RecognizeError::Dataset {
        path: path.clone(),
        message: format!(
            "cannot read the simulator dataset ({e}); generate it with `tablecam simulate detections --out {}` (docs/simulator.md) or pass --sim DIR",
            dir.display()
        ),
    })?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let img: SimImage = serde_json::from_str(line)
            .map_err(|e| RecognizeError::Dataset { path: path.clone(), message: format!("line {}: {e}", i + 1) })?;
        if img.split == split {
            out.push(img);
        }
    }
    Ok(out)
}

/// One labelled card of a real photo (`labels.csv`).
#[derive(Debug, Clone, PartialEq)]
pub struct RealLabel {
    /// Image file name in `images/`.
    pub file: String,
    /// The card.
    pub identity: CardIdentity,
    /// Union of its labelled index corners, `[x1, y1, x2, y2]`.
    pub bbox: [f64; 4],
    /// How many index corners the box covers (1 or 2).
    pub n_corners: u32,
    /// Its labelled index corners (`corners.csv`, where present), `[x1, y1, x2, y2]` each.
    pub corners: Vec<[f64; 4]>,
}

/// Reads `DIR/labels.csv` (`file,rank,suit,x1,y1,x2,y2,box_type,n_corners`), and each label's
/// index corners from `DIR/corners.csv` (`file,rank,suit,x1,y1,x2,y2`) where it exists: the
/// corner boxes of the label's file and card whose centre lies in the label's box.
pub fn read_real(dir: &Path) -> Result<Vec<RealLabel>, RecognizeError> {
    let mut labels = read_label_rows(&dir.join("labels.csv"), true)?;
    let corners_path = dir.join("corners.csv");
    if corners_path.is_file() {
        let corners = read_label_rows(&corners_path, false)?;
        for l in &mut labels {
            let [x1, y1, x2, y2] = l.bbox;
            l.corners = corners
                .iter()
                .filter(|c| c.file == l.file && c.identity == l.identity)
                .map(|c| c.bbox)
                .filter(|b| {
                    let (cx, cy) = (0.5 * (b[0] + b[2]), 0.5 * (b[1] + b[3]));
                    (x1..=x2).contains(&cx) && (y1..=y2).contains(&cy)
                })
                .collect();
        }
    }
    Ok(labels)
}

/// The rows of a label file: `labels.csv` (with `n_corners`) or `corners.csv` (without; each
/// row then one corner).
fn read_label_rows(path: &Path, with_n_corners: bool) -> Result<Vec<RealLabel>, RecognizeError> {
    let path = path.to_path_buf();
    let text = std::fs::read_to_string(&path).map_err(|e| RecognizeError::Dataset {
        path: path.clone(),
        message: format!("cannot read the real-photo labels ({e}); pass --real DIR with images/ and labels.csv"),
    })?;
    let bad =
        |line: usize, m: String| RecognizeError::Dataset { path: path.clone(), message: format!("line {line}: {m}") };
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = lines.next().map(|(_, h)| h.split(',').map(str::trim).collect()).unwrap_or_default();
    let col = |name: &str| header.iter().position(|h| *h == name).ok_or_else(|| bad(1, format!("no column {name:?}")));
    let names = ["file", "rank", "suit", "x1", "y1", "x2", "y2", "n_corners"];
    let mut idx = [0usize; 8];
    for (i, name) in names.into_iter().enumerate().take(if with_n_corners { 8 } else { 7 }) {
        idx[i] = col(name)?;
    }
    let mut out = Vec::new();
    for (i, line) in lines.filter(|(_, l)| !l.trim().is_empty()) {
        let f: Vec<&str> = line.split(',').map(str::trim).collect();
        let get = |k: usize| f.get(idx[k]).copied().ok_or_else(|| bad(i + 1, "too few columns".into()));
        let num = |k: usize| get(k)?.parse::<f64>().map_err(|e| bad(i + 1, format!("{e}")));
        let code = format!("{}{}", get(1)?, get(2)?);
        let identity = CardIdentity::parse(&code)
            .filter(|c| matches!(c, CardIdentity::Card(_)))
            .ok_or_else(|| bad(i + 1, format!("{code:?} is not a card")))?;
        out.push(RealLabel {
            file: get(0)?.to_string(),
            identity,
            bbox: [num(3)?, num(4)?, num(5)?, num(6)?],
            n_corners: if with_n_corners {
                get(7)?.parse().map_err(|e| bad(i + 1, format!("n_corners: {e}")))?
            } else {
                1
            },
            corners: Vec::new(),
        });
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------------------
// Scoring
// ---------------------------------------------------------------------------------------------

/// A miss or a wrong identity, for `worst_errors.jpg`.
#[derive(Debug, Clone, Serialize)]
pub struct ErrorCase {
    /// The image.
    pub image: PathBuf,
    /// Where, `[x1, y1, x2, y2]` in image pixels.
    pub region: [f64; 4],
    /// The truth.
    pub truth: String,
    /// What was reported (`-` when nothing was).
    pub predicted: String,
    /// The reported confidence (0 for a miss).
    pub confidence: f32,
    /// Sort key, highest worst: wrong identities (2 + confidence) before misses (1 + visibility).
    pub severity: f64,
    /// Outlines drawn on the crop (image pixels): the truth's (green), and what was found (red).
    pub outlines: [Option<[Point; 4]>; 2],
}

/// Counts of the simulator evaluation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SimCounts {
    /// Truth cards with visible ≥ 0.5.
    pub visible_cards: usize,
    /// Of those, matched by a located card (quad IoU ≥ 0.7).
    pub located: usize,
    /// Located-card detections (index-only ones are not localization detections).
    pub detections: usize,
    /// Detections matched to a visible card.
    pub true_positives: usize,
    /// Detections matched to no card.
    pub false_positives: usize,
    /// … of which overlap a card (IoU ≥ [`LOC_OVERLAP`]) without matching it: a card measured
    /// wrong (split, merged, cut short). The rest lie on no card at all (a phantom).
    pub false_misshaped: usize,
    /// Visible cards not located.
    pub unlocated: usize,
    /// … of which a located detection overlaps (IoU ≥ [`LOC_OVERLAP`]), measured wrong; the
    /// rest have nothing on them.
    pub unlocated_misshaped: usize,
    /// Detections matched to a card with visible < 0.5 (neither right nor wrong).
    pub ignored: usize,
    /// Index-only detections.
    pub index_only: usize,
    /// Visible face-up cards.
    pub face_up: usize,
    /// … read right.
    pub correct: usize,
    /// … reported `unknown`.
    pub unknown: usize,
    /// … read as another label.
    pub wrong: usize,
    /// … not found at all (no located card and no index-only detection on it).
    pub missed: usize,
    /// Visible face-down cards.
    pub backs: usize,
    /// … reported `back`.
    pub backs_correct: usize,
    /// Detections naming a card (not `back` or `unknown`), located or index-only.
    pub named: usize,
    /// … naming a card that no face-up card of the frame is (any visibility; the truth names no
    /// face-down card): a misread, or a print of the table read as an index. The per-card counts
    /// above miss those on no face-up card.
    pub named_absent: usize,
}

impl SimCounts {
    fn add(&mut self, o: &SimCounts) {
        self.visible_cards += o.visible_cards;
        self.located += o.located;
        self.detections += o.detections;
        self.true_positives += o.true_positives;
        self.false_positives += o.false_positives;
        self.false_misshaped += o.false_misshaped;
        self.unlocated += o.unlocated;
        self.unlocated_misshaped += o.unlocated_misshaped;
        self.ignored += o.ignored;
        self.index_only += o.index_only;
        self.face_up += o.face_up;
        self.correct += o.correct;
        self.unknown += o.unknown;
        self.wrong += o.wrong;
        self.missed += o.missed;
        self.backs += o.backs;
        self.backs_correct += o.backs_correct;
        self.named += o.named;
        self.named_absent += o.named_absent;
    }
}

/// What [`score_sim`] makes of one simulator frame (error cases with the image path left empty).
#[derive(Debug, Clone, Default)]
pub struct FrameScore {
    /// The counts.
    pub counts: SimCounts,
    /// Wrong readings: (truth, predicted).
    pub confusions: Vec<(String, String)>,
    /// Identity errors (wrong readings and face-up cards not found).
    pub errors: Vec<ErrorCase>,
    /// Localization errors: visible cards not located (`predicted` "none", or "IoU x" of the
    /// best overlapping detection), and located cards on no visible card (`truth` "-", or the
    /// card it overlaps with its IoU).
    pub localization_errors: Vec<ErrorCase>,
    /// Every visible face-up card with what its detection read, named or not.
    pub reads: Vec<CardRead>,
}

/// What was read on one visible face-up card of a simulator frame: the raw material for
/// choosing how a tracker may combine the readings of several frames (`reads.jsonl` of
/// `eval-recognition --session`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CardRead {
    /// The card (`AS`, `10H`).
    pub truth: String,
    /// What the detection reported (`AS`, `back`, `unknown`), `None` when no detection was on it.
    pub card: Option<String>,
    /// The face its classifier leaned to ([`DetectedCard::reading`]).
    pub reading: Option<String>,
    /// The reported confidence: the reading's probability for a card or an `unknown`.
    pub confidence: f32,
    /// The rank the classifiers leaned to ([`DetectedCard::rank`]: `A`, `10`) and its
    /// probability summed over the suits.
    pub rank: Option<(String, f32)>,
    /// The card's visible share.
    pub visible: f64,
    /// The IoU of the located card it was matched to (`None`: read from an index-only
    /// detection, or not found): how much a card's reading suffers from its outline measured a
    /// little off.
    pub iou: Option<f64>,
    /// How far (pixels) that located card's centre lies from the true one.
    pub offset_px: Option<f64>,
    /// That located card's outline.
    pub quad: Option<[Point; 4]>,
}

/// Scores one simulator frame: matches located cards to truth cards one-to-one by quad IoU
/// (≥ [`SIM_IOU`], best pairs first), then reads each visible card's identity from its match,
/// or else from the most confident index-only detection whose centre lies on it.
pub fn score_sim(truth: &[SimCard], dets: &[DetectedCard]) -> FrameScore {
    let mut c = SimCounts::default();
    let located: Vec<usize> = (0..dets.len()).filter(|&d| dets[d].source == Source::Card).collect();
    c.detections = located.len();
    c.index_only = dets.len() - located.len();
    let quads: Vec<[Point; 4]> = truth.iter().map(SimCard::quad).collect();
    let mut pairs: Vec<(f64, usize, usize)> = Vec::new();
    // Best overlap of each detection and of each truth card, for telling measured-wrong cards
    // from phantoms and from cards with nothing on them.
    let mut det_best = vec![(0.0f64, usize::MAX); dets.len()];
    let mut truth_best: Vec<(f64, Option<usize>)> = vec![(0.0, None); truth.len()];
    for &d in &located {
        for (t, q) in quads.iter().enumerate() {
            let iou = polygon_iou(&dets[d].quad, q);
            if iou > det_best[d].0 {
                det_best[d] = (iou, t);
            }
            if iou > truth_best[t].0 {
                truth_best[t] = (iou, Some(d));
            }
            if iou >= SIM_IOU {
                pairs.push((iou, d, t));
            }
        }
    }
    pairs.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut det_to: BTreeMap<usize, usize> = BTreeMap::new();
    let mut truth_to: BTreeMap<usize, usize> = BTreeMap::new();
    for (_, d, t) in pairs {
        if !det_to.contains_key(&d) && !truth_to.contains_key(&t) {
            det_to.insert(d, t);
            truth_to.insert(t, d);
        }
    }
    let mut localization_errors = Vec::new();
    for &d in &located {
        match det_to.get(&d) {
            Some(&t) if truth[t].visible >= SIM_MIN_VISIBLE => c.true_positives += 1,
            Some(_) => c.ignored += 1,
            None => {
                c.false_positives += 1;
                let (iou, t) = det_best[d];
                let on = (iou >= LOC_OVERLAP).then(|| &truth[t]);
                c.false_misshaped += usize::from(on.is_some());
                localization_errors.push(ErrorCase {
                    image: PathBuf::new(),
                    region: bounding_box(&dets[d].quad),
                    truth: on.map_or_else(|| "-".to_string(), |t| format!("{} IoU {iou:.2}", t.card)),
                    predicted: format!("+{}", dets[d].card.code()),
                    confidence: dets[d].confidence,
                    // phantoms first: a tracker counts them as cards
                    severity: if on.is_some() { 1.0 } else { 2.0 },
                    outlines: [on.map(|_| quads[t]), Some(dets[d].quad)],
                });
            }
        }
    }
    let mut confusions = Vec::new();
    let mut errors = Vec::new();
    let mut reads = Vec::new();
    for (t, card) in truth.iter().enumerate().filter(|(_, c)| c.visible >= SIM_MIN_VISIBLE) {
        c.visible_cards += 1;
        let matched = truth_to.get(&t).copied();
        if matched.is_some() {
            c.located += 1;
        } else {
            c.unlocated += 1;
            let (best, best_det) = truth_best[t];
            let misshaped = best >= LOC_OVERLAP;
            c.unlocated_misshaped += usize::from(misshaped);
            localization_errors.push(ErrorCase {
                image: PathBuf::new(),
                region: bounding_box(&quads[t]),
                truth: format!("{}{} v{:.2}", card.card, if card.face_up { "" } else { " down" }, card.visible),
                predicted: if misshaped { format!("IoU {best:.2}") } else { "none".into() },
                confidence: 0.0,
                severity: card.visible,
                outlines: [Some(quads[t]), best_det.map(|d| dets[d].quad)],
            });
        }
        let Some(want) = card.truth() else { continue };
        let poly = Polygon(quads[t].to_vec());
        let read = matched.or_else(|| {
            (0..dets.len())
                .filter(|&d| dets[d].source == Source::IndexOnly && poly.contains(Point::mean(&dets[d].quad)))
                .max_by(|&a, &b| dets[a].confidence.total_cmp(&dets[b].confidence))
        });
        let got = read.map(|d| &dets[d]);
        let region = bounding_box(&quads[t]);
        let found = got.map(|d| d.quad);
        let mut error = |predicted: String, confidence: f32, severity: f64| {
            errors.push(ErrorCase {
                image: PathBuf::new(),
                region,
                truth: want.code(),
                predicted,
                confidence,
                outlines: [Some(quads[t]), found],
                severity,
            })
        };
        if card.face_up {
            c.face_up += 1;
            reads.push(CardRead {
                truth: want.code(),
                card: got.map(|d| d.card.code()),
                reading: got.and_then(|d| d.reading).map(|r| r.to_string()),
                confidence: got.map_or(0.0, |d| d.confidence),
                rank: got.and_then(|d| d.rank).map(|(r, p)| (r.code().to_string(), p)),
                visible: card.visible,
                iou: matched.map(|d| polygon_iou(&dets[d].quad, &quads[t])),
                offset_px: matched.map(|d| Point::mean(&dets[d].quad).dist(Point::mean(&quads[t]))),
                quad: matched.map(|d| dets[d].quad),
            });
            match got {
                None => {
                    c.missed += 1;
                    error("-".into(), 0.0, 1.0 + card.visible);
                }
                Some(d) if d.card == want => c.correct += 1,
                Some(d) if d.card == CardIdentity::Unknown => c.unknown += 1,
                Some(d) => {
                    c.wrong += 1;
                    confusions.push((want.code(), d.card.code()));
                    error(d.card.code(), d.confidence, 2.0 + f64::from(d.confidence));
                }
            }
        } else {
            c.backs += 1;
            match got {
                Some(d) if d.card == CardIdentity::Back => c.backs_correct += 1,
                Some(d) if d.card != CardIdentity::Unknown => {
                    confusions.push(("back".into(), d.card.code()));
                    error(d.card.code(), d.confidence, 2.0 + f64::from(d.confidence));
                }
                _ => {}
            }
        }
    }
    for d in dets {
        let CardIdentity::Card(named) = d.card else { continue };
        c.named += 1;
        if truth.iter().all(|t| CardIdentity::parse(&t.card) != Some(CardIdentity::Card(named))) {
            c.named_absent += 1;
            // one on a visible face-up card was scored with that card above (an error there if it
            // was the card's reading); the rest lie on no card a reading is scored for
            let on_face_up = truth.iter().zip(&quads).any(|(t, q)| {
                t.face_up && t.visible >= SIM_MIN_VISIBLE && Polygon(q.to_vec()).contains(Point::mean(&d.quad))
            });
            if !on_face_up {
                errors.push(ErrorCase {
                    image: PathBuf::new(),
                    region: bounding_box(&d.quad),
                    truth: "-".into(),
                    predicted: format!("+{}", d.card.code()),
                    confidence: d.confidence,
                    outlines: [None, Some(d.quad)],
                    severity: 2.0 + f64::from(d.confidence),
                });
            }
        }
    }
    FrameScore { counts: c, confusions, errors, localization_errors, reads }
}

/// Counts of the real-photo evaluation.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RealCounts {
    /// Labelled cards.
    pub labels: usize,
    /// … found right: a detection of the same identity matches the label.
    pub found_right: usize,
    /// … not found right, but an `unknown` detection matches the label (a no-read).
    pub unknown: usize,
    /// Detections.
    pub detections: usize,
    /// Detections that name a card.
    pub reported: usize,
    /// … that match no label of that card but match a label of another card.
    pub wrong: usize,
}

impl RealCounts {
    fn add(&mut self, o: &RealCounts) {
        self.labels += o.labels;
        self.found_right += o.found_right;
        self.unknown += o.unknown;
        self.detections += o.detections;
        self.reported += o.reported;
        self.wrong += o.wrong;
    }
}

/// Whether a detection matches a real label: quad IoU with the label box ≥ [`REAL_IOU`], or the
/// box centre inside the quad, or (single-corner labels, whose box is just one corner) any
/// overlap, or (since 2026-12-03) quad IoU ≥ [`REAL_CORNER_IOU`] with one of the label's index
/// corners: a card found by one of its two indexes alone (an index-only detection, whose quad is
/// that index) is found, though its quad covers too little of the two corners' union.
pub fn real_match(det: &DetectedCard, label: &RealLabel) -> bool {
    let b = box_quad(label.bbox);
    if polygon_iou(&det.quad, &b) >= REAL_IOU || Polygon(det.quad.to_vec()).contains(Point::mean(&b)) {
        return true;
    }
    if label.corners.iter().any(|&c| on_corner(&det.quad, &box_quad(c))) {
        return true;
    }
    label.n_corners == 1 && polygon_area(&intersect_convex(&det.quad, &b)) > 0.0
}

/// A detection matches a label's index corner from this quad IoU on ([`real_match`])…
pub const REAL_CORNER_IOU: f64 = 0.5;
/// …or when at least this share of it lies inside the corner's box, and it covers at least
/// [`REAL_CORNER_MIN_COVER`] of that box: an index-only detection's quad is the printed index
/// alone, and a labelled corner box also takes in the card's margins (a 2♦'s lower index,
/// IoU 0.41 with its corner, wholly inside it; 2026-12-03).
pub const REAL_CORNER_INSIDE: f64 = 0.8;
/// See [`REAL_CORNER_INSIDE`]: a speck inside a corner is not that corner's card.
pub const REAL_CORNER_MIN_COVER: f64 = 0.2;

/// Whether the quad `det` is on the labelled index corner `corner` ([`REAL_CORNER_IOU`],
/// [`REAL_CORNER_INSIDE`]).
fn on_corner(det: &[Point; 4], corner: &[Point; 4]) -> bool {
    if polygon_iou(det, corner) >= REAL_CORNER_IOU {
        return true;
    }
    let (inside, own, box_area) =
        (polygon_area(&intersect_convex(det, corner)), polygon_area(det), polygon_area(corner));
    own > 0.0 && inside >= REAL_CORNER_INSIDE * own && inside >= REAL_CORNER_MIN_COVER * box_area
}

/// Whether a detection matching the label names its card.
pub fn found_right(label: &RealLabel, dets: &[DetectedCard]) -> bool {
    dets.iter().any(|d| d.card == label.identity && real_match(d, label))
}

/// Scores one real photo (see [`RealCounts`]); a detection over an unlabelled region is
/// neither right nor wrong (some cards at the image edges are not labelled).
pub fn score_real(labels: &[RealLabel], dets: &[DetectedCard]) -> (RealCounts, Vec<(String, String)>, Vec<ErrorCase>) {
    let mut c = RealCounts { labels: labels.len(), detections: dets.len(), ..RealCounts::default() };
    let mut confusions = Vec::new();
    let mut errors = Vec::new();
    for l in labels {
        let matching: Vec<&DetectedCard> = dets.iter().filter(|d| real_match(d, l)).collect();
        if found_right(l, dets) {
            c.found_right += 1;
        } else if matching.iter().any(|d| d.card == CardIdentity::Unknown) {
            c.unknown += 1;
        } else if matching.iter().all(|d| !matches!(d.card, CardIdentity::Card(_))) {
            errors.push(ErrorCase {
                image: PathBuf::new(),
                region: l.bbox,
                truth: l.identity.code(),
                predicted: "-".into(),
                confidence: 0.0,
                severity: 1.0,
                outlines: [None, None],
            });
        }
    }
    for d in dets.iter().filter(|d| matches!(d.card, CardIdentity::Card(_))) {
        c.reported += 1;
        let mine = labels.iter().any(|l| l.identity == d.card && real_match(d, l));
        if mine {
            continue;
        }
        if let Some(l) = labels.iter().find(|l| real_match(d, l)) {
            c.wrong += 1;
            confusions.push((l.identity.code(), d.card.code()));
            errors.push(ErrorCase {
                image: PathBuf::new(),
                region: bounding_box(&d.quad),
                truth: l.identity.code(),
                predicted: d.card.code(),
                confidence: d.confidence,
                severity: 2.0 + f64::from(d.confidence),
                outlines: [None, Some(d.quad)],
            });
        }
    }
    (c, confusions, errors)
}

// ---------------------------------------------------------------------------------------------
// Reports
// ---------------------------------------------------------------------------------------------

/// Time per stage over a dataset.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Timing {
    /// Frames timed.
    pub frames: usize,
    /// Mean locator time (network and decoding), ms.
    pub locator_ms: f64,
    /// Classifier time (patch cutting and network) per patch, ms.
    pub classifier_ms_per_patch: f64,
    /// Mean patches per frame.
    pub patches_per_frame: f64,
    /// Mean time per frame, everything, ms.
    pub total_ms: f64,
    /// 95th percentile of the time per frame, ms.
    pub total_ms_p95: f64,
    /// Mean time per frame of each reading step after the locator, ms.
    pub steps: ReadStepTimes,
}

fn timing(times: &[StageTimes]) -> Timing {
    if times.is_empty() {
        return Timing::default();
    }
    let n = times.len() as f64;
    let patches: usize = times.iter().map(|t| t.patches).sum();
    let mut totals: Vec<f64> = times.iter().map(|t| t.total_ms).collect();
    totals.sort_by(f64::total_cmp);
    let mean = |step: fn(&ReadStepTimes) -> f64| times.iter().map(|t| step(&t.steps)).sum::<f64>() / n;
    Timing {
        frames: times.len(),
        locator_ms: times.iter().map(|t| t.locator_ms).sum::<f64>() / n,
        classifier_ms_per_patch: if patches == 0 {
            0.0
        } else {
            times.iter().map(|t| t.classifier_ms).sum::<f64>() / patches as f64
        },
        patches_per_frame: patches as f64 / n,
        total_ms: totals.iter().sum::<f64>() / n,
        total_ms_p95: totals[((totals.len() as f64 * 0.95).ceil() as usize).clamp(1, totals.len()) - 1],
        steps: ReadStepTimes {
            corners_ms: mean(|s| s.corners_ms),
            faces_ms: mean(|s| s.faces_ms),
            cover_ms: mean(|s| s.cover_ms),
            wider_ms: mean(|s| s.wider_ms),
            glyphs_ms: mean(|s| s.glyphs_ms),
            nudge_ms: mean(|s| s.nudge_ms),
            twins_ms: mean(|s| s.twins_ms),
        },
    }
}

/// A (truth, predicted) pair and how often it occurred.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Confusion {
    /// The truth.
    pub truth: String,
    /// What was reported.
    pub predicted: String,
    /// How often.
    pub count: usize,
}

fn top_confusions(pairs: &[(String, String)], n: usize) -> Vec<Confusion> {
    let mut counts: BTreeMap<&(String, String), usize> = BTreeMap::new();
    for p in pairs {
        *counts.entry(p).or_default() += 1;
    }
    let mut v: Vec<Confusion> =
        counts.into_iter().map(|((t, p), count)| Confusion { truth: t.clone(), predicted: p.clone(), count }).collect();
    v.sort_by(|a, b| b.count.cmp(&a.count).then(a.truth.cmp(&b.truth)));
    v.truncate(n);
    v
}

fn pct(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        100.0 * n as f64 / d as f64
    }
}

/// Identification alone: every visible card read from its **true** quad
/// ([`Recognizer::identify_quads`]), so that the classifier's accuracy is measured apart from
/// localization (the identity target of docs/recognition.md is per visible face-up card).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IdentifyCounts {
    /// Visible (≥ 0.5) face-up cards.
    pub face_up: usize,
    /// … read right.
    pub right: usize,
    /// … `unknown`.
    pub unknown: usize,
    /// … read as another card or as `back`.
    pub wrong: usize,
    /// Visible face-down cards.
    pub backs: usize,
    /// … read `back`.
    pub backs_right: usize,
    /// … read as a card (a wrong identity too).
    pub backs_as_card: usize,
}

impl IdentifyCounts {
    fn add(&mut self, o: &IdentifyCounts) {
        self.face_up += o.face_up;
        self.right += o.right;
        self.unknown += o.unknown;
        self.wrong += o.wrong;
        self.backs += o.backs;
        self.backs_right += o.backs_right;
        self.backs_as_card += o.backs_as_card;
    }
}

/// Pairs of card codes: (truth, what was read).
type CodePairs = Vec<(String, String)>;

/// Reads every visible truth card of one frame from its true quad; returns the counts, the
/// confusions (truth, predicted) of the wrong ones, and what each visible face-up card was read
/// as (truth, read), for `reads.jsonl`.
fn identify_truth(
    recognizer: &mut Recognizer,
    frame: &Mat,
    truth: &[SimCard],
) -> Result<(IdentifyCounts, CodePairs, CodePairs), RecognizeError> {
    let cards: Vec<&SimCard> = truth.iter().filter(|c| c.visible >= SIM_MIN_VISIBLE).collect();
    let quads: Vec<[Point; 4]> = cards.iter().map(|c| c.quad()).collect();
    let verdicts = recognizer.identify_quads(frame, &quads)?;
    let mut c = IdentifyCounts::default();
    let (mut confusions, mut read) = (Vec::new(), Vec::new());
    for (card, v) in cards.iter().zip(&verdicts) {
        let Some(want) = card.truth() else { continue };
        if card.face_up {
            c.face_up += 1;
            read.push((want.code(), v.identity.code()));
            match v.identity {
                id if id == want => c.right += 1,
                CardIdentity::Unknown => c.unknown += 1,
                id => {
                    c.wrong += 1;
                    confusions.push((want.code(), id.code()));
                }
            }
        } else {
            c.backs += 1;
            match v.identity {
                CardIdentity::Back => c.backs_right += 1,
                CardIdentity::Card(_) => {
                    c.backs_as_card += 1;
                    confusions.push((want.code(), v.identity.code()));
                }
                CardIdentity::Unknown => {}
            }
        }
    }
    Ok((c, confusions, read))
}

/// [`IdentifyCounts`] as percentages, with the most frequent wrong readings.
#[derive(Debug, Clone, Serialize)]
pub struct IdentifyReport {
    /// % of visible face-up cards read right from their true quads.
    pub right_pct: f64,
    /// … `unknown`.
    pub unknown_pct: f64,
    /// … wrong.
    pub wrong_pct: f64,
    /// % of visible face-down cards read `back`.
    pub back_pct: f64,
    /// The raw counts.
    pub counts: IdentifyCounts,
    /// The most frequent wrong readings.
    pub top_confusions: Vec<Confusion>,
}

fn identify_report(c: IdentifyCounts, confusions: &[(String, String)]) -> IdentifyReport {
    IdentifyReport {
        right_pct: pct(c.right, c.face_up),
        unknown_pct: pct(c.unknown, c.face_up),
        wrong_pct: pct(c.wrong, c.face_up),
        back_pct: pct(c.backs_right, c.backs),
        top_confusions: top_confusions(confusions, 10),
        counts: c,
    }
}

/// The simulator part of the report.
#[derive(Debug, Clone, Serialize)]
pub struct SimReport {
    /// Dataset folder.
    pub dataset: PathBuf,
    /// Split.
    pub split: String,
    /// Images evaluated.
    pub images: usize,
    /// Images that could not be read.
    pub failed_images: Vec<String>,
    /// Localization recall, % of visible cards located.
    pub recall_pct: f64,
    /// Localization precision, % of located-card detections that match a visible card
    /// (matches of cards with visible < 0.5 left out).
    pub precision_pct: f64,
    /// % of visible face-up cards read right.
    pub correct_pct: f64,
    /// … reported unknown.
    pub unknown_pct: f64,
    /// … read wrong.
    pub wrong_pct: f64,
    /// … not found.
    pub missed_pct: f64,
    /// % of visible face-down cards reported as `back`.
    pub back_accuracy_pct: f64,
    /// % of the detections naming a card that name no card of their frame.
    pub named_absent_pct: f64,
    /// The raw counts.
    pub counts: SimCounts,
    /// The most frequent wrong readings.
    pub top_confusions: Vec<Confusion>,
    /// Time per stage.
    pub timing: Timing,
    /// Identification alone, from the true quads.
    pub identify_on_truth: IdentifyReport,
}

/// The real-photo part of the report.
#[derive(Debug, Clone, Serialize)]
pub struct RealReport {
    /// Dataset folder.
    pub dataset: PathBuf,
    /// The split file, if one restricted the images.
    pub split_file: Option<PathBuf>,
    /// Images evaluated.
    pub images: usize,
    /// Images that could not be read.
    pub failed_images: Vec<String>,
    /// % of labelled cards found with the right identity.
    pub found_right_pct: f64,
    /// % of the detections naming a card that are wrong.
    pub wrong_of_reported_pct: f64,
    /// % of labelled cards whose detection says `unknown`.
    pub unknown_pct: f64,
    /// The raw counts.
    pub counts: RealCounts,
    /// The most frequent wrong readings.
    pub top_confusions: Vec<Confusion>,
    /// Every labelled card not found right, as `image card` (e.g. `IMG_1.jpg 10S`), so that two
    /// runs' reports tell which cards a change gained or lost.
    pub not_found: Vec<String>,
    /// Time per stage.
    pub timing: Timing,
}

/// The whole report (`report.json`).
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    /// The locator file.
    pub locator: PathBuf,
    /// The classifier file.
    pub classifier: PathBuf,
    /// The classifier's threshold.
    pub min_confidence: f32,
    /// Simulator results.
    pub sim: Option<SimReport>,
    /// Real-photo results.
    pub real: Option<RealReport>,
}

// ---------------------------------------------------------------------------------------------
// Running
// ---------------------------------------------------------------------------------------------

/// The error cases of the simulator evaluation, for its pictures.
#[derive(Debug, Default)]
struct SimErrors {
    identity: Vec<ErrorCase>,
    localization: Vec<ErrorCase>,
    /// Session mode: one JSON line per visible face-up card and frame ([`CardRead`], with the
    /// frame and round).
    reads: String,
}

impl SimErrors {
    fn add(&mut self, image: &Path, identity: Vec<ErrorCase>, localization: Vec<ErrorCase>) {
        let at = |e: ErrorCase| ErrorCase { image: image.to_path_buf(), ..e };
        self.identity.extend(identity.into_iter().map(at));
        self.localization.extend(localization.into_iter().map(at));
    }
}

/// A progress counter on stderr, when it is a terminal (logs get the summary only).
fn progress(what: &str, done: usize, total: usize) {
    use std::io::IsTerminal;
    if std::io::stderr().is_terminal() {
        eprint!("\r{what}: {done}/{total} images");
        if done == total {
            eprintln!();
        }
    }
}

/// What one simulator image or session frame gave: its score, what its cards read from their
/// true outlines, and the time of each stage.
struct FrameResult {
    score: FrameScore,
    identified: (IdentifyCounts, CodePairs, CodePairs),
    times: StageTimes,
}

/// Recognizes `frame` and reads its `truth` cards from their true outlines ([`identify_truth`]).
fn score_frame(
    recognizer: &mut Recognizer,
    frame: &Mat,
    geometry: Option<&crate::calib::TableGeometry>,
    truth: &[SimCard],
) -> Result<FrameResult, RecognizeError> {
    let (dets, times) = recognizer.recognize_timed(frame, geometry)?;
    let score = score_sim(truth, &dets);
    let identified = identify_truth(recognizer, frame, truth)?;
    Ok(FrameResult { score, identified, times })
}

fn eval_sim(
    recognizers: &mut [Recognizer],
    dir: &Path,
    split: &str,
    limit: Option<usize>,
    errors: &mut SimErrors,
) -> Result<SimReport, RecognizeError> {
    let mut images = read_sim(dir, split)?;
    if images.is_empty() {
        return Err(RecognizeError::Dataset {
            path: dir.join("annotations.jsonl"),
            message: format!("no images of split {split:?}"),
        });
    }
    images.truncate(limit.unwrap_or(usize::MAX));
    let mut counts = SimCounts::default();
    let mut confusions = Vec::new();
    let (mut identified, mut id_confusions) = (IdentifyCounts::default(), Vec::new());
    let mut times = Vec::new();
    let mut failed = Vec::new();
    let total = images.len();
    // an image that cannot be read is reported, and the others go on
    let work = |recognizer: &mut Recognizer, img: &SimImage| {
        let path = dir.join(&img.image);
        let result = match load_image(&path) {
            Ok(frame) => Ok(score_frame(recognizer, &frame, None, &img.cards)?),
            Err(e) => Err(e.to_string()),
        };
        Ok((path, result))
    };
    let mut done = 0;
    in_order(recognizers, images.iter().map(Ok), work, |(path, result): (PathBuf, Result<FrameResult, String>)| {
        done += 1;
        progress("sim", done, total);
        let FrameResult { score, identified: (c, conf, _), times: t } = match result {
            Ok(r) => r,
            Err(e) => {
                failed.push(e);
                return;
            }
        };
        times.push(t);
        counts.add(&score.counts);
        confusions.extend(score.confusions);
        errors.add(&path, score.errors, score.localization_errors);
        identified.add(&c);
        id_confusions.extend(conf);
    })?;
    let images = images.len() - failed.len();
    let identified = identify_report(identified, &id_confusions);
    Ok(SimReport {
        identify_on_truth: identified,
        ..sim_report(dir, split.to_string(), images, failed, counts, &confusions, &times)
    })
}

/// The simulator report of what [`score_sim`] counted over `images` frames.
fn sim_report(
    dir: &Path,
    split: String,
    images: usize,
    failed_images: Vec<String>,
    counts: SimCounts,
    confusions: &[(String, String)],
    times: &[StageTimes],
) -> SimReport {
    let c = &counts;
    SimReport {
        dataset: dir.to_path_buf(),
        split,
        images,
        failed_images,
        recall_pct: pct(c.located, c.visible_cards),
        precision_pct: pct(c.true_positives, c.true_positives + c.false_positives),
        correct_pct: pct(c.correct, c.face_up),
        unknown_pct: pct(c.unknown, c.face_up),
        wrong_pct: pct(c.wrong, c.face_up),
        missed_pct: pct(c.missed, c.face_up),
        back_accuracy_pct: pct(c.backs_correct, c.backs),
        named_absent_pct: pct(c.named_absent, c.named),
        top_confusions: top_confusions(confusions, 10),
        timing: timing(times),
        counts,
        identify_on_truth: identify_report(IdentifyCounts::default(), &[]),
    }
}

/// One line of a session's `frames.jsonl` (the fields scored here).
#[derive(Debug, Deserialize)]
struct SessionFrame {
    frame: u64,
    #[serde(default)]
    round: u64,
    cards: Vec<SessionCard>,
}

#[derive(Debug, Deserialize)]
struct SessionCard {
    card: String,
    face_up: bool,
    quad: [[f64; 2]; 4],
    visibility: f64,
}

/// `A-B` (frame numbers, A ≤ B) for `--frames`.
fn parse_frame_range(s: &str) -> Result<(u64, u64), String> {
    let bad = || format!("`{s}` is no frame range: write A-B with A <= B, e.g. 8750-9210");
    let (a, b) = s.split_once('-').ok_or_else(bad)?;
    let (a, b): (u64, u64) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
    (a <= b).then_some((a, b)).ok_or_else(bad)
}

/// Scores every `every`-th frame of a simulator session (within `frames`, if given),
/// calibrated (the pipeline's view).
fn eval_session(
    recognizers: &mut [Recognizer],
    dir: &Path,
    every: usize,
    frames: Option<(u64, u64)>,
    limit: Option<usize>,
    with_reference: bool,
    errors: &mut SimErrors,
) -> Result<SimReport, RecognizeError> {
    let bad = |path: PathBuf, message: String| RecognizeError::Dataset { path, message };
    let fix = "render one with `tablecam simulate --out DIR`";
    let geometry = crate::calib::Calibration::load(&dir.join("calibration.json"))?;
    if with_reference {
        let empty = crate::presence::eval::simulated_empty_reference(dir, &geometry)
            .map_err(|e| bad(dir.to_path_buf(), format!("its empty table: {e}")))?;
        for recognizer in recognizers.iter_mut() {
            recognizer.set_table_reference(&geometry, &empty)?;
        }
    }
    let fp = dir.join("frames.jsonl");
    let text = std::fs::read_to_string(&fp).map_err(|e| bad(fp.clone(), format!("{e}; {fix}")))?;
    let mut truth = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        let f: SessionFrame =
            serde_json::from_str(line).map_err(|e| bad(fp.clone(), format!("line {}: {e}", i + 1)))?;
        truth.push(f);
    }
    let vp = dir.join("video.avi");
    let mut video =
        opencv::videoio::VideoCapture::from_file_def(vp.as_os_str()).map_err(cv("opening the session video"))?;
    if !video.is_opened().map_err(cv("opening the session video"))? {
        return Err(bad(vp, format!("cannot be opened as a video; {fix}")));
    }
    let (mut counts, mut confusions, mut times) = (SimCounts::default(), Vec::new(), Vec::new());
    let (mut identified, mut id_confusions) = (IdentifyCounts::default(), Vec::new());
    let mut frame = Mat::default();
    let wanted = |n: u64| n as usize % every == 0 && frames.map_or(true, |(a, b)| (a..=b).contains(&n));
    let picked: Vec<&SessionFrame> = truth.iter().filter(|f| wanted(f.frame)).collect();
    let total = picked.len().min(limit.unwrap_or(usize::MAX));
    // the wanted frames, decoded in order on this thread
    let mut truth_frames = truth.iter().enumerate();
    let frames_wanted = std::iter::from_fn(|| {
        for (k, f) in truth_frames.by_ref() {
            // a frame not scored is only grabbed, not converted to BGR
            match video.grab().map_err(cv("reading the session video")) {
                Err(e) => return Some(Err(e)),
                Ok(false) => return Some(Err(bad(vp.clone(), format!("ends before frame {}", f.frame)))),
                Ok(true) if wanted(f.frame) => {
                    let read = match video.retrieve(&mut frame, 0).map_err(cv("reading the session video")) {
                        Ok(true) => frame.try_clone().map(|m| (k, m)).map_err(cv("a frame")),
                        Ok(false) => Err(bad(vp.clone(), format!("frame {} cannot be decoded", f.frame))),
                        Err(e) => Err(e),
                    };
                    return Some(read);
                }
                Ok(true) => {}
            }
        }
        None
    })
    .take(total);
    let work = |recognizer: &mut Recognizer, (k, frame): (usize, Mat)| {
        let cards: Vec<SimCard> = truth[k]
            .cards
            .iter()
            .map(|c| SimCard { card: c.card.clone(), face_up: c.face_up, quad: c.quad, visible: c.visibility })
            .collect();
        Ok((k, score_frame(recognizer, &frame, Some(&geometry), &cards)?))
    };
    let mut done = 0;
    in_order(recognizers, frames_wanted, work, |(k, result): (usize, FrameResult)| {
        let f = &truth[k];
        done += 1;
        progress("session", done, total);
        let FrameResult { score, identified: (c, conf, on_truth), times: t } = result;
        times.push(t);
        counts.add(&score.counts);
        confusions.extend(score.confusions);
        let image = dir.join(format!("video.avi#frame={}", f.frame));
        errors.add(&image, score.errors, score.localization_errors);
        for r in &score.reads {
            // what the same card reads from its true outline: the reading's loss to localization
            let on_truth = on_truth.iter().find(|(t, _)| *t == r.truth).map(|(_, read)| read);
            let line = serde_json::json!({"frame": f.frame, "round": f.round, "read": r, "on_truth": on_truth});
            errors.reads.push_str(&(line.to_string() + "\n"));
        }
        identified.add(&c);
        id_confusions.extend(conf);
    })?;
    let split = format!("session, every {every} frames, calibrated");
    let identified = identify_report(identified, &id_confusions);
    Ok(SimReport {
        identify_on_truth: identified,
        ..sim_report(dir, split, done, Vec::new(), counts, &confusions, &times)
    })
}

fn eval_real(
    recognizers: &mut [Recognizer],
    dir: &Path,
    split_file: Option<&Path>,
    limit: Option<usize>,
    errors: &mut Vec<ErrorCase>,
) -> Result<RealReport, RecognizeError> {
    let labels = read_real(dir)?;
    let mut by_file: BTreeMap<String, Vec<RealLabel>> = BTreeMap::new();
    let images_dir = dir.join("images");
    let listing = std::fs::read_dir(&images_dir).map_err(|e| RecognizeError::Dataset {
        path: images_dir.clone(),
        message: format!("cannot list the real photos: {e}"),
    })?;
    for entry in listing.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let lower = name.to_ascii_lowercase();
        if lower.ends_with(".jpg") || lower.ends_with(".jpeg") || lower.ends_with(".png") {
            by_file.entry(name).or_default();
        }
    }
    for l in labels {
        by_file.entry(l.file.clone()).or_default().push(l);
    }
    if let Some(f) = split_file {
        let text = std::fs::read_to_string(f).map_err(|source| RecognizeError::Io { path: f.to_path_buf(), source })?;
        let keep: std::collections::BTreeSet<&str> =
            text.lines().map(|l| l.trim()).filter(|l| !l.is_empty() && !l.starts_with('#')).collect();
        by_file.retain(|name, _| keep.contains(name.as_str()));
        if by_file.is_empty() {
            return Err(RecognizeError::Dataset {
                path: f.to_path_buf(),
                message: format!("lists none of the images in {}", images_dir.display()),
            });
        }
    }
    let files: Vec<(String, Vec<RealLabel>)> = by_file.into_iter().take(limit.unwrap_or(usize::MAX)).collect();
    let mut counts = RealCounts::default();
    let mut confusions = Vec::new();
    let mut times = Vec::new();
    let mut failed = Vec::new();
    let mut not_found = Vec::new();
    // an image that cannot be read is reported, and the others go on
    let work = |recognizer: &mut Recognizer, i: usize| {
        let path = images_dir.join(&files[i].0);
        let result = match load_image(&path) {
            Ok(frame) => Ok(recognizer.recognize_timed(&frame, None)?),
            Err(e) => Err(e.to_string()),
        };
        Ok((i, path, result))
    };
    let mut done = 0;
    in_order(recognizers, (0..files.len()).map(Ok), work, |(i, path, result)| {
        let (name, labels) = &files[i];
        done += 1;
        progress("real", done, files.len());
        let (dets, t) = match result {
            Ok(r) => r,
            Err(e) => {
                failed.push(e);
                return;
            }
        };
        times.push(t);
        let (c, conf, errs) = score_real(labels, &dets);
        not_found
            .extend(labels.iter().filter(|l| !found_right(l, &dets)).map(|l| format!("{name} {}", l.identity.code())));
        counts.add(&c);
        confusions.extend(conf);
        errors.extend(errs.into_iter().map(|e| ErrorCase { image: path.clone(), ..e }));
    })?;
    let c = &counts;
    Ok(RealReport {
        dataset: dir.to_path_buf(),
        split_file: split_file.map(Path::to_path_buf),
        images: files.len() - failed.len(),
        failed_images: failed,
        found_right_pct: pct(c.found_right, c.labels),
        wrong_of_reported_pct: pct(c.wrong, c.reported),
        unknown_pct: pct(c.unknown, c.labels),
        top_confusions: top_confusions(&confusions, 10),
        not_found,
        timing: timing(&times),
        counts,
    })
}

fn markdown(r: &Report) -> String {
    let mut s = String::from("# Card recognition evaluation\n\n");
    let _ = writeln!(
        s,
        "Locator `{}`, classifier `{}` (min_confidence {:.3}).\n",
        r.locator.display(),
        r.classifier.display(),
        r.min_confidence
    );
    let confusion_table = |s: &mut String, c: &[Confusion]| {
        if c.is_empty() {
            s.push_str("No wrong readings.\n\n");
            return;
        }
        s.push_str("| truth | read as | count |\n|---|---|---|\n");
        for x in c {
            let _ = writeln!(s, "| {} | {} | {} |", x.truth, x.predicted, x.count);
        }
        s.push('\n');
    };
    let timing_rows = |s: &mut String, t: &Timing| {
        let _ = writeln!(s, "| locator, ms per frame | {:.1} |", t.locator_ms);
        let _ = writeln!(s, "| classifier, ms per patch | {:.2} |", t.classifier_ms_per_patch);
        let _ = writeln!(s, "| patches per frame | {:.1} |", t.patches_per_frame);
        let _ = writeln!(s, "| total, ms per frame (mean / p95) | {:.1} / {:.1} |", t.total_ms, t.total_ms_p95);
        if t.steps != ReadStepTimes::default() {
            let _ = writeln!(s, "| of which reading steps, ms per frame | {} |", t.steps);
        }
    };
    if let Some(m) = &r.sim {
        let c = &m.counts;
        let _ = writeln!(s, "## Simulator: `{}`, split `{}`, {} images\n", m.dataset.display(), m.split, m.images);
        s.push_str("| metric | value |\n|---|---|\n");
        let _ = writeln!(
            s,
            "| localization recall (IoU ≥ 0.7, visible ≥ 0.5) | {:.1} % ({}/{}) |",
            m.recall_pct, c.located, c.visible_cards
        );
        let _ = writeln!(
            s,
            "| localization precision | {:.1} % ({} of {} located cards; {} on barely visible cards left out) |",
            m.precision_pct, c.true_positives, c.detections, c.ignored
        );
        let _ = writeln!(
            s,
            "| … cards not located: measured wrong / nothing on them | {} / {} |",
            c.unlocated_misshaped,
            c.unlocated - c.unlocated_misshaped
        );
        let _ = writeln!(
            s,
            "| … located cards on no card: measured wrong / phantoms | {} / {} |",
            c.false_misshaped,
            c.false_positives - c.false_misshaped
        );
        let _ = writeln!(s, "| face-up cards read right | {:.1} % ({}/{}) |", m.correct_pct, c.correct, c.face_up);
        let _ = writeln!(s, "| … unknown | {:.1} % ({}) |", m.unknown_pct, c.unknown);
        let _ = writeln!(s, "| … wrong | {:.1} % ({}) |", m.wrong_pct, c.wrong);
        let _ = writeln!(s, "| … not found | {:.1} % ({}) |", m.missed_pct, c.missed);
        let _ = writeln!(
            s,
            "| face-down cards read as back | {:.1} % ({}/{}) |",
            m.back_accuracy_pct, c.backs_correct, c.backs
        );
        let _ = writeln!(s, "| index-only detections | {} |", c.index_only);
        let _ = writeln!(
            s,
            "| cards named that no card of the frame is | {:.1} % ({} of {} named) |",
            m.named_absent_pct, c.named_absent, c.named
        );
        timing_rows(&mut s, &m.timing);
        s.push_str("\nMost frequent wrong readings:\n\n");
        confusion_table(&mut s, &m.top_confusions);
        let (i, ic) = (&m.identify_on_truth, &m.identify_on_truth.counts);
        s.push_str("\n### Identification alone (every visible card read from its true quad)\n\n");
        s.push_str("| metric | value |\n|---|---|\n");
        let _ = writeln!(s, "| face-up cards read right | {:.2} % ({}/{}) |", i.right_pct, ic.right, ic.face_up);
        let _ = writeln!(s, "| … unknown | {:.2} % ({}) |", i.unknown_pct, ic.unknown);
        let _ = writeln!(s, "| … wrong | {:.3} % ({}) |", i.wrong_pct, ic.wrong);
        let _ = writeln!(
            s,
            "| face-down cards read back | {:.1} % ({}/{}); read as a card: {} |",
            i.back_pct, ic.backs_right, ic.backs, ic.backs_as_card
        );
        s.push_str("\nMost frequent wrong readings (true quads):\n\n");
        confusion_table(&mut s, &i.top_confusions);
    }
    if let Some(m) = &r.real {
        let c = &m.counts;
        let _ = writeln!(s, "## Real photos: `{}`, {} images\n", m.dataset.display(), m.images);
        if let Some(f) = &m.split_file {
            let _ = writeln!(s, "Images listed in `{}` only.\n", f.display());
        }
        s.push_str("| metric | value |\n|---|---|\n");
        let _ =
            writeln!(s, "| labelled cards found right | {:.1} % ({}/{}) |", m.found_right_pct, c.found_right, c.labels);
        let _ = writeln!(s, "| labelled cards reported unknown | {:.1} % ({}) |", m.unknown_pct, c.unknown);
        let _ = writeln!(
            s,
            "| reported identities wrong | {:.1} % ({}/{}) |",
            m.wrong_of_reported_pct, c.wrong, c.reported
        );
        let _ = writeln!(s, "| detections | {} |", c.detections);
        timing_rows(&mut s, &m.timing);
        s.push_str("\nMost frequent wrong readings:\n\n");
        confusion_table(&mut s, &m.top_confusions);
    }
    s.push_str("`worst_errors.jpg`: the most confident wrong readings, then the misses (truth -> read as).\n");
    if r.sim.is_some() {
        s.push_str(
            "`localization_errors.jpg` (truth green, found red): located cards on no card (`- -> +FOUND`), \
             cards measured wrong (`CARD IoU -> +FOUND`), then the most visible cards not located \
             (`CARD [down] vVISIBILITY -> none` or `-> IoU` of the best overlap).\n",
        );
    }
    s
}

/// The image an error was made on: an image file, or `VIDEO#frame=N` for a session's frame (the
/// session evaluation names its frames so); `None` when it cannot be read back.
fn error_image(path: &Path) -> Option<Mat> {
    let text = path.to_string_lossy();
    let Some((video, frame)) = text.rsplit_once("#frame=") else {
        return load_image(path).ok();
    };
    let frame: f64 = frame.parse().ok()?;
    let mut cap = opencv::videoio::VideoCapture::from_file_def(video).ok()?;
    cap.set(opencv::videoio::CAP_PROP_POS_FRAMES, frame).ok()?;
    let mut img = Mat::default();
    (cap.read(&mut img).ok()? && !img.empty()).then_some(img)
}

/// Draws up to [`WORST_TILES`] error cases, worst first, as a grid of labelled crops.
pub fn worst_errors_grid(errors: &mut [ErrorCase]) -> Result<Mat, RecognizeError> {
    errors.sort_by(|a, b| b.severity.total_cmp(&a.severity));
    let (tile, text_h, cols) = (180, 40, 6);
    let n = errors.len().min(WORST_TILES);
    let rows = n.div_ceil(cols).max(1) as i32;
    let width = tile * (cols as i32).min(n.max(1) as i32);
    let mut grid =
        Mat::new_rows_cols_with_default(rows * (tile + text_h), width.max(tile * 2), core::CV_8UC3, Scalar::all(40.0))
            .map_err(cv("allocating the error grid"))?;
    if n == 0 {
        imgproc::put_text(
            &mut grid,
            "no errors",
            core::Point::new(10, 40),
            imgproc::FONT_HERSHEY_SIMPLEX,
            0.8,
            Scalar::all(230.0),
            2,
            imgproc::LINE_AA,
            false,
        )
        .map_err(cv("drawing the error grid"))?;
        return Ok(grid);
    }
    let mut cache: Option<(PathBuf, Mat)> = None;
    for (k, e) in errors.iter().take(n).enumerate() {
        if !matches!(&cache, Some((p, _)) if *p == e.image) {
            let Some(img) = error_image(&e.image) else { continue };
            cache = Some((e.image.clone(), img));
        }
        let Some((_, img)) = &cache else { continue };
        let [x1, y1, x2, y2] = e.region;
        let pad = ((x2 - x1).max(y2 - y1) * 0.25).max(8.0);
        let (iw, ih) = (f64::from(img.cols()), f64::from(img.rows()));
        let (l, t) = ((x1 - pad).clamp(0.0, iw - 1.0), (y1 - pad).clamp(0.0, ih - 1.0));
        let (r, b) = ((x2 + pad).clamp(l + 1.0, iw), (y2 + pad).clamp(t + 1.0, ih));
        let roi = Mat::roi(img, Rect::new(l as i32, t as i32, ((r - l) as i32).max(1), ((b - t) as i32).max(1)))
            .map_err(cv("cutting an error crop"))?;
        let s = f64::from(tile) / f64::from(roi.cols().max(roi.rows()));
        let size =
            core::Size::new(((f64::from(roi.cols()) * s) as i32).max(1), ((f64::from(roi.rows()) * s) as i32).max(1));
        let mut small = Mat::default();
        imgproc::resize(&roi, &mut small, size, 0.0, 0.0, imgproc::INTER_AREA).map_err(cv("resizing an error crop"))?;
        let (gx, gy) = ((k % cols) as i32 * tile, (k / cols) as i32 * (tile + text_h));
        let mut dst =
            Mat::roi_mut(&mut grid, Rect::new(gx, gy, size.width, size.height)).map_err(cv("placing a crop"))?;
        small.copy_to(&mut dst).map_err(cv("placing a crop"))?;
        for (outline, colour) in
            e.outlines.iter().zip([Scalar::new(60.0, 220.0, 60.0, 0.0), Scalar::new(60.0, 60.0, 255.0, 0.0)])
        {
            let Some(q) = outline else { continue };
            let pts: Vector<core::Point> =
                q.iter().map(|p| core::Point::new(((p.x - l) * s) as i32, ((p.y - t) * s) as i32)).collect();
            imgproc::polylines(
                &mut dst,
                &Vector::<Vector<core::Point>>::from_iter([pts]),
                true,
                colour,
                1,
                imgproc::LINE_AA,
                0,
            )
            .map_err(cv("outlining a crop"))?;
        }
        let colour =
            if e.predicted == "-" { Scalar::new(0.0, 200.0, 255.0, 0.0) } else { Scalar::new(80.0, 80.0, 255.0, 0.0) };
        let line1 = if e.confidence > 0.0 {
            format!("{} -> {} {:.2}", e.truth, e.predicted, e.confidence)
        } else {
            format!("{} -> {}", e.truth, e.predicted)
        };
        let name = e.image.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        // Keep the end of long names (the frame number), so that a label stays in its tile.
        let chars: Vec<char> = name.chars().collect();
        let name: String = chars[chars.len().saturating_sub(24)..].iter().collect();
        for (i, (text, c)) in [(line1, colour), (name, Scalar::all(200.0))].into_iter().enumerate() {
            imgproc::put_text(
                &mut grid,
                &text,
                core::Point::new(gx + 4, gy + tile + 15 + 17 * i as i32),
                imgproc::FONT_HERSHEY_SIMPLEX,
                0.42,
                c,
                1,
                imgproc::LINE_AA,
                false,
            )
            .map_err(cv("labelling a crop"))?;
        }
    }
    Ok(grid)
}

fn summary_table(r: &Report) -> String {
    let mut s = String::new();
    if let Some(m) = &r.sim {
        let _ = writeln!(s, "simulator ({} images, split {}):", m.images, m.split);
        let _ = writeln!(s, "  localization  recall {:5.1} %   precision {:5.1} %", m.recall_pct, m.precision_pct);
        let _ = writeln!(
            s,
            "  face up       right {:5.1} %   unknown {:5.1} %   wrong {:5.1} %   not found {:5.1} %",
            m.correct_pct, m.unknown_pct, m.wrong_pct, m.missed_pct
        );
        let _ = writeln!(s, "  face down     back {:5.1} %", m.back_accuracy_pct);
        let _ = writeln!(
            s,
            "  named         of no card in the frame {:5.1} % ({} of {})",
            m.named_absent_pct, m.counts.named_absent, m.counts.named
        );
        let i = &m.identify_on_truth;
        let _ = writeln!(
            s,
            "  true quads    right {:5.2} %   unknown {:5.2} %   wrong {:5.3} % ({} of {})   back {:5.1} %",
            i.right_pct, i.unknown_pct, i.wrong_pct, i.counts.wrong, i.counts.face_up, i.back_pct
        );
        let _ = writeln!(
            s,
            "  time          locator {:.1} ms   classifier {:.2} ms/patch   total {:.1} ms/frame",
            m.timing.locator_ms, m.timing.classifier_ms_per_patch, m.timing.total_ms
        );
    }
    if let Some(m) = &r.real {
        let _ = writeln!(s, "real photos ({} images, {} labelled cards):", m.images, m.counts.labels);
        let _ = writeln!(
            s,
            "  found right {:5.1} %   unknown {:5.1} %   wrong of reported {:5.1} %",
            m.found_right_pct, m.unknown_pct, m.wrong_of_reported_pct
        );
        let _ = writeln!(s, "  time          total {:.1} ms/frame", m.timing.total_ms);
    }
    s
}

/// Runs `tablecam eval-recognition`; returns the report (also written to `--out`).
pub fn run_eval(args: &EvalArgs) -> Result<Report, RecognizeError> {
    let (sim, real) = match (&args.sim, &args.real) {
        (None, None) if args.session.is_some() => (None, None),
        (None, None) => {
            let sim = Path::new(DEFAULT_SIM);
            let real = Path::new(DEFAULT_REAL);
            let sim = sim.join("annotations.jsonl").is_file().then(|| sim.to_path_buf());
            let real = real.join("labels.csv").is_file().then(|| real.to_path_buf());
            if sim.is_none() && real.is_none() {
                return Err(RecognizeError::Dataset {
                    path: PathBuf::from(DEFAULT_SIM),
                    message: format!(
                        "neither {DEFAULT_SIM}/annotations.jsonl nor {DEFAULT_REAL}/labels.csv exists; pass --sim DIR and/or --real DIR"
                    ),
                });
            }
            (sim, real)
        }
        (s, r) => (s.clone(), r.clone()),
    };
    let options = RecognizerOptions {
        session: SessionOptions { intra_threads: args.threads.max(1) },
        network_locator: args.network_locator,
        min_index_px: args.min_index_px,
        wide_corner_scale: (args.wide_corner_scale > 0.0).then_some(args.wide_corner_scale),
        nudge: (args.nudge > 0.0).then_some(args.nudge),
        square_aspects: !args.own_aspect,
        index_glyphs: !args.without_index_glyphs,
        face_classifier: (!args.no_face_classifier).then(|| args.face_classifier.clone()),
        glyph_classifier: (!args.no_glyph_classifier).then(|| args.glyph_classifier.clone()),
        ..RecognizerOptions::default()
    };
    let (locator, classifier) = (resolve_model(&args.locator), resolve_model(&args.classifier));
    let mut recognizers = workers(args.workers, || {
        let mut recognizer = Recognizer::with_options(&locator, &classifier, options.clone())?;
        if let Some(t) = args.min_confidence {
            recognizer.classifier_mut().set_min_confidence(t);
        }
        if let (Some(t), Some(g)) = (args.glyph_min_confidence, recognizer.glyph_classifier_mut()) {
            g.set_min_confidence(t);
        }
        Ok(recognizer)
    })?;
    let mut sim_errors = SimErrors::default();
    let mut sim = sim.map(|d| eval_sim(&mut recognizers, &d, &args.split, args.limit, &mut sim_errors)).transpose()?;
    if let Some(dir) = &args.session {
        sim = Some(eval_session(
            &mut recognizers,
            dir,
            args.every.max(1),
            args.frames,
            args.limit,
            !args.without_reference,
            &mut sim_errors,
        )?);
    }
    let mut errors = sim_errors.identity;
    let real = real
        .map(|d| eval_real(&mut recognizers, &d, args.real_split.as_deref(), args.limit, &mut errors))
        .transpose()?;
    let min_confidence = recognizers[0].classifier_mut().min_confidence();
    let report = Report { locator, classifier, min_confidence, sim, real };

    std::fs::create_dir_all(&args.out).map_err(|source| RecognizeError::Io { path: args.out.clone(), source })?;
    let write = |name: &str, text: String| {
        let p = args.out.join(name);
        std::fs::write(&p, text).map_err(|source| RecognizeError::Io { path: p, source })
    };
    write("report.json", serde_json::to_string_pretty(&report).expect("JSON of plain data") + "\n")?;
    write("report.md", markdown(&report))?;
    write_jpeg(&args.out.join("worst_errors.jpg"), &worst_errors_grid(&mut errors)?)?;
    if report.sim.is_some() {
        let lines: String = sim_errors
            .localization
            .iter()
            .map(|e| serde_json::to_string(e).expect("JSON of plain data") + "\n")
            .collect();
        write("localization_errors.jsonl", lines)?;
        if args.session.is_some() {
            write("reads.jsonl", std::mem::take(&mut sim_errors.reads))?;
        }
        write_jpeg(&args.out.join("localization_errors.jpg"), &worst_errors_grid(&mut sim_errors.localization)?)?;
    }
    if args.json {
        println!("{}", serde_json::to_string(&report).expect("JSON of plain data"));
    } else {
        print!("{}", summary_table(&report));
        println!("report: {}", args.out.join("report.md").display());
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::RotatedRect;

    #[test]
    fn a_frame_range_is_two_frame_numbers_in_order() {
        assert_eq!(parse_frame_range("8750-9210"), Ok((8750, 9210)));
        assert_eq!(parse_frame_range(" 5 - 5 "), Ok((5, 5)));
        for bad in ["9210-8750", "8750", "a-b", "-3", "1-2-3"] {
            let e = parse_frame_range(bad).expect_err(bad);
            assert!(e.contains(bad) && e.contains("A-B"), "{e}");
        }
    }

    fn sim_card(card: &str, face_up: bool, c: (f64, f64), visible: f64) -> SimCard {
        let q = RotatedRect::new(Point::new(c.0, c.1), 1.2, 90.0, 64.0).quad();
        SimCard { card: card.into(), face_up, quad: q.map(|p| [p.x, p.y]), visible }
    }

    fn det(card: &str, quad: [Point; 4], source: Source, confidence: f32) -> DetectedCard {
        DetectedCard {
            card: CardIdentity::parse(card).unwrap(),
            confidence,
            face_up: card != "back",
            quad,
            index_boxes: vec![],
            source,
            reading: None,
            rank: None,
            twin: crate::recognize::TwinPrint::Alone,
        }
    }

    #[test]
    fn sim_scoring_matches_by_iou_and_reads_identities() {
        let truth = vec![
            sim_card("AS", true, (100.0, 100.0), 1.0),  // read right
            sim_card("KD", true, (300.0, 100.0), 0.9),  // read wrong
            sim_card("7C", true, (500.0, 100.0), 1.0),  // unknown
            sim_card("2H", true, (700.0, 100.0), 0.8),  // found only by its corners
            sim_card("QS", false, (100.0, 300.0), 1.0), // face down, back
            sim_card("9D", true, (300.0, 300.0), 0.3),  // barely visible: optional
            sim_card("5H", true, (500.0, 300.0), 1.0),  // missed
        ];
        let q = |i: usize| truth[i].quad();
        let shifted = |i: usize, dx: f64| q(i).map(|p| Point::new(p.x + dx, p.y));
        let dets = vec![
            det("AS", shifted(0, 3.0), Source::Card, 0.99),
            det("KH", q(1), Source::Card, 0.95),
            DetectedCard { reading: Some("7D".parse().unwrap()), ..det("unknown", q(2), Source::Card, 0.5) },
            det("2H", RotatedRect::new(Point::new(700.0, 100.0), 0.0, 20.0, 12.0).quad(), Source::IndexOnly, 0.97),
            det("back", q(4), Source::Card, 0.8),
            det("9D", q(5), Source::Card, 0.9),
            det("3C", RotatedRect::new(Point::new(900.0, 500.0), 0.0, 90.0, 64.0).quad(), Source::Card, 0.9),
        ];
        let FrameScore { counts: c, confusions, errors, localization_errors, reads } = score_sim(&truth, &dets);
        assert_eq!(
            c,
            SimCounts {
                visible_cards: 6,
                located: 4,
                detections: 6,
                true_positives: 4,
                false_positives: 1,
                false_misshaped: 0,
                unlocated: 2,
                unlocated_misshaped: 0,
                ignored: 1,
                index_only: 1,
                face_up: 5,
                correct: 2,
                unknown: 1,
                wrong: 1,
                missed: 1,
                backs: 1,
                backs_correct: 1,
                // AS, KH, 2H, 9D, 3C; KH (on the KD) and 3C (on no card) are of no card here
                named: 5,
                named_absent: 2,
            }
        );
        assert_eq!(confusions, vec![("KD".to_string(), "KH".to_string())]);
        // every visible face-up card's reading, the unsure one too (7C leaning to 7D at 0.5)
        let read: Vec<(&str, Option<&str>, Option<&str>)> =
            reads.iter().map(|r| (r.truth.as_str(), r.card.as_deref(), r.reading.as_deref())).collect();
        assert_eq!(
            read,
            vec![
                ("AS", Some("AS"), None),
                ("KD", Some("KH"), None),
                ("7C", Some("unknown"), Some("7D")),
                ("2H", Some("2H"), None),
                ("5H", None, None),
            ]
        );
        assert_eq!(reads[2].confidence, 0.5);
        assert_eq!(errors.len(), 3);
        assert!(errors.iter().any(|e| e.truth == "5H" && e.predicted == "-"));
        // the 3C named on no card is an identity error too (the KH is one already, on the KD)
        assert!(errors.iter().any(|e| e.truth == "-" && e.predicted == "+3C"));
        // 2H (found by its corners only) and 5H are not located; 3C lies on no card
        let mut loc: Vec<(String, String)> =
            localization_errors.iter().map(|e| (e.truth.clone(), e.predicted.clone())).collect();
        loc.sort();
        assert_eq!(
            loc,
            vec![
                ("-".to_string(), "+3C".to_string()),
                ("2H v0.80".to_string(), "none".to_string()),
                ("5H v1.00".to_string(), "none".to_string()),
            ]
        );
    }

    #[test]
    fn sim_scoring_tells_cards_measured_wrong_from_phantoms() {
        let truth = vec![sim_card("AS", true, (100.0, 100.0), 1.0), sim_card("KD", false, (400.0, 100.0), 1.0)];
        // AS measured as two half cards; a phantom far from both
        let half = |dy: f64| RotatedRect::new(Point::new(100.0, 100.0 + dy), 1.2, 45.0, 64.0).quad();
        let dets = vec![
            det("unknown", half(-22.0), Source::Card, 0.5),
            det("unknown", half(22.0), Source::Card, 0.5),
            det("back", truth[1].quad(), Source::Card, 0.9),
            det("back", RotatedRect::new(Point::new(700.0, 400.0), 0.0, 90.0, 64.0).quad(), Source::Card, 0.9),
        ];
        let c = score_sim(&truth, &dets).counts;
        assert_eq!((c.true_positives, c.false_positives, c.false_misshaped), (1, 3, 2));
        assert_eq!((c.unlocated, c.unlocated_misshaped), (1, 1));
    }

    #[test]
    fn real_scoring_counts_found_wrong_and_unlabelled() {
        let label = |code: &str, b: [f64; 4], n: u32| RealLabel {
            file: "x.jpg".into(),
            identity: CardIdentity::parse(code).unwrap(),
            bbox: b,
            n_corners: n,
            corners: Vec::new(),
        };
        // two corners labelled; found by its lower corner's index alone
        let nine = RealLabel {
            corners: vec![[800.0, 0.0, 820.0, 30.0], [880.0, 110.0, 900.0, 140.0]],
            ..label("9S", [800.0, 0.0, 900.0, 140.0], 2)
        };
        let labels = vec![
            label("AS", [0.0, 0.0, 100.0, 140.0], 2),
            label("KD", [200.0, 0.0, 300.0, 140.0], 2),
            label("7C", [400.0, 0.0, 420.0, 30.0], 1),
            label("2H", [600.0, 0.0, 700.0, 140.0], 2),
            nine.clone(),
        ];
        let dets = vec![
            // AS found right: IoU with its box is high.
            det("AS", box_quad([5.0, 5.0, 100.0, 140.0]), Source::Card, 0.99),
            // Over KD's box but says KH: wrong.
            det("KH", box_quad([210.0, 10.0, 290.0, 130.0]), Source::Card, 0.95),
            // A corner overlapping the single-corner 7C label, read right.
            det("7C", box_quad([410.0, 10.0, 430.0, 40.0]), Source::IndexOnly, 0.93),
            // 2H: unknown.
            det("unknown", box_quad([600.0, 0.0, 700.0, 140.0]), Source::Card, 0.4),
            // Over nothing labelled: neither right nor wrong.
            det("QS", box_quad([900.0, 900.0, 990.0, 1030.0]), Source::Card, 0.97),
            // 9S by one index: too little of its two corners' box, but on one of its corners.
            det("9S", box_quad([879.0, 108.0, 901.0, 139.0]), Source::IndexOnly, 0.999),
        ];
        let (c, confusions, errors) = score_real(&labels, &dets);
        assert_eq!(c, RealCounts { labels: 5, found_right: 3, unknown: 1, detections: 6, reported: 5, wrong: 1 });
        // without its corners the 9S label is not matched by that index
        let bare = RealLabel { corners: Vec::new(), ..nine };
        assert!(!real_match(&dets[5], &bare) && real_match(&dets[5], &labels[4]));
        assert_eq!(confusions, vec![("KD".to_string(), "KH".to_string())]);
        assert_eq!(errors.len(), 1, "{errors:?}"); // KH over KD; a label read wrong is not also a miss
    }

    #[test]
    fn an_index_inside_its_labelled_corner_matches_it() {
        // a 2♦ labelled by its two corner boxes; its lower index found alone, a narrow quad
        // askew wholly inside the lower corner's box (the real case: IoU 0.41)
        let two = RealLabel {
            file: "x.jpg".into(),
            identity: CardIdentity::parse("2D").unwrap(),
            bbox: [184.0, 145.0, 387.0, 541.0],
            n_corners: 2,
            corners: vec![[184.0, 145.0, 278.0, 224.0], [308.0, 433.0, 387.0, 541.0]],
        };
        let quad = |q: [(f64, f64); 4]| q.map(|(x, y)| Point::new(x, y));
        let index =
            det("2D", quad([(349.0, 438.0), (384.0, 452.0), (350.0, 537.0), (315.0, 523.0)]), Source::IndexOnly, 0.999);
        assert!(polygon_iou(&index.quad, &box_quad(two.corners[1])) < REAL_CORNER_IOU);
        assert!(real_match(&index, &two));
        // a speck inside that corner, or the index shifted half out of it, is not on it
        let speck = det("2D", box_quad([340.0, 470.0, 350.0, 480.0]), Source::IndexOnly, 0.999);
        let shifted =
            det("2D", quad([(389.0, 438.0), (424.0, 452.0), (390.0, 537.0), (355.0, 523.0)]), Source::IndexOnly, 0.999);
        assert!(!real_match(&speck, &two) && !real_match(&shifted, &two));
    }

    #[test]
    fn timing_summarises_stages() {
        let t = |loc: f64, cls: f64, patches: usize, total: f64| StageTimes {
            prepare_ms: 0.0,
            locator_ms: loc,
            classifier_ms: cls,
            patches,
            total_ms: total,
            steps: ReadStepTimes { faces_ms: cls / 2.0, glyphs_ms: cls / 4.0, ..Default::default() },
        };
        let s = timing(&[t(10.0, 4.0, 4, 20.0), t(20.0, 8.0, 4, 40.0)]);
        assert_eq!((s.locator_ms, s.classifier_ms_per_patch, s.patches_per_frame, s.total_ms), (15.0, 1.5, 4.0, 30.0));
        assert_eq!(s.total_ms_p95, 40.0);
        // each reading step is averaged over the frames
        assert_eq!((s.steps.faces_ms, s.steps.glyphs_ms, s.steps.nudge_ms), (3.0, 1.5, 0.0));
    }

    #[test]
    fn real_labels_parse() {
        let dir = std::env::temp_dir().join(format!("tablecam-real-labels-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("labels.csv"),
            "file,rank,suit,x1,y1,x2,y2,box_type,n_corners\na.jpg,10,H,1,2,30,40,union,2\nb.jpg,A,S,5,5,9,9,corner,1\n",
        )
        .unwrap();
        let l = read_real(&dir).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].identity.code(), l[0].bbox, l[0].n_corners), ("10H".into(), [1.0, 2.0, 30.0, 40.0], 2));
        assert!(l[0].corners.is_empty());
        // corners.csv: each label gets its card's corner boxes that lie in its box
        std::fs::write(
            dir.join("corners.csv"),
            "file,rank,suit,x1,y1,x2,y2\na.jpg,10,H,1,2,6,9\na.jpg,10,H,25,33,30,40\na.jpg,10,H,100,100,110,110\na.jpg,9,H,1,2,6,9\n",
        )
        .unwrap();
        let l = read_real(&dir).unwrap();
        assert_eq!(l[0].corners, vec![[1.0, 2.0, 6.0, 9.0], [25.0, 33.0, 30.0, 40.0]]);
        assert!(l[1].corners.is_empty());
        std::fs::remove_file(dir.join("corners.csv")).unwrap();
        std::fs::write(
            dir.join("labels.csv"),
            "file,rank,suit,x1,y1,x2,y2,box_type,n_corners\na.jpg,1,X,1,2,3,4,u,2\n",
        )
        .unwrap();
        let e = read_real(&dir).unwrap_err().to_string();
        assert!(e.contains("labels.csv: line 2") && e.contains("not a card"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
