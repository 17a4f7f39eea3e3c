//! Accuracy of bet presence on simulator sessions.
//!
//! A session is simulated (`sim::session::simulate`), its video is read back
//! with OpenCV's VideoCapture and every frame goes through a
//! [`PresenceDetector`]; only then is `frames.jsonl` read, to score the
//! decisions against the truth:
//!
//! * **per spot per round**: the decision at the frame the round's first card
//!   appears (when bet presence decides which hands receive cards) against the
//!   spots holding chips in that frame;
//! * **per spot per frame**: every frame, the held decision included while a
//!   spot is occluded.
//!
//! The empty-table reference is what a real table captures before opening:
//! the same camera and table (calibration, felt, lighting preset of
//! `session.json`) rendered with nothing on it and passed through JPEG like
//! the video's frames. `--no-reference` uses the running-median fallback.
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use opencv::core::{Mat, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, videoio};
use serde::{Deserialize, Serialize};

use super::{PresenceConfig, PresenceDetector, PresenceError, SpotState};
use crate::calib::{Calibration, TableGeometry};
use crate::rules::{BetKind, RulesetId};
use crate::sim::render::{Conditions, TableStyle};
use crate::sim::session::{empty_table_jpeg, simulate, SessionSpec, EMPTY_TABLE_FILE};

/// Errors of the evaluation.
#[derive(Debug, thiserror::Error)]
pub enum EvalError {
    /// Detection failed.
    #[error(transparent)]
    Presence(#[from] PresenceError),
    /// The simulator failed.
    #[error(transparent)]
    Sim(#[from] crate::sim::session::SimError),
    /// The session's calibration is invalid.
    #[error(transparent)]
    Calib(#[from] crate::calib::CalibError),
    /// Rendering the reference failed.
    #[error(transparent)]
    Render(#[from] crate::sim::render::RenderError),
    /// A session file is missing or malformed.
    #[error("{path}: {message}")]
    Session {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
    /// OpenCV failed reading the video.
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done.
        context: String,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> EvalError + '_ {
    move |source| EvalError::OpenCv { context: context.to_string(), source }
}

/// Where the empty-table reference comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceMode {
    /// An empty-table frame of the same camera (rendered for simulator tables).
    EmptyTable,
    /// No reference: the detector's running-median background.
    RunningMedian,
}

/// A confusion matrix: chips present (positive) or absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Confusion {
    /// Chips, said chips.
    pub true_present: u64,
    /// No chips, said none.
    pub true_absent: u64,
    /// No chips, said chips.
    pub false_present: u64,
    /// Chips, said none.
    pub false_absent: u64,
}

impl Confusion {
    /// Counts one decision.
    pub fn add(&mut self, truth: bool, said: bool) {
        match (truth, said) {
            (true, true) => self.true_present += 1,
            (false, false) => self.true_absent += 1,
            (false, true) => self.false_present += 1,
            (true, false) => self.false_absent += 1,
        }
    }

    /// Adds another matrix.
    pub fn merge(&mut self, o: &Confusion) {
        self.true_present += o.true_present;
        self.true_absent += o.true_absent;
        self.false_present += o.false_present;
        self.false_absent += o.false_absent;
    }

    /// Decisions counted.
    pub fn total(&self) -> u64 {
        self.true_present + self.true_absent + self.false_present + self.false_absent
    }

    /// Correct fraction (1 when empty).
    pub fn accuracy(&self) -> f64 {
        let t = self.total();
        if t == 0 {
            1.0
        } else {
            (self.true_present + self.true_absent) as f64 / t as f64
        }
    }
}

/// A wrong per-round decision, for diagnosis.
#[derive(Debug, Clone, Serialize)]
pub struct Miss {
    /// Frame.
    pub frame: u64,
    /// The spot's state then.
    pub state: SpotState,
    /// Whether chips were there.
    pub truth: bool,
}

/// The result of one session.
#[derive(Debug, Clone, Serialize)]
pub struct SessionResult {
    /// Ruleset.
    pub ruleset: RulesetId,
    /// Seed.
    pub seed: u64,
    /// Conditions preset.
    pub conditions: String,
    /// Felt (table style).
    pub table_style: String,
    /// Frames read from the video.
    pub frames: u64,
    /// Rounds.
    pub rounds: u32,
    /// Per spot per round, at the first dealt card.
    pub per_round: Confusion,
    /// Per spot per frame.
    pub per_frame: Confusion,
    /// Spot-frames reported occluded.
    pub occluded_spot_frames: u64,
    /// Wrong per-round decisions.
    pub misses: Vec<Miss>,
    /// Detector time per frame, ms (this machine).
    pub ms_per_frame: f64,
    /// Spot-frames with chips and no hand over the table: their lowest scores
    /// (minimum, 0.5th and 1st percentile: the margin to the threshold).
    pub present_scores_low: [f32; 3],
    /// Spot-frames without chips and no hand over the table: their highest scores.
    pub absent_scores_high: [f32; 3],
}

/// The 0th, 0.5th and 1st percentile of `v` (sorted ascending or descending by `desc`).
fn tail(mut v: Vec<f32>, desc: bool) -> [f32; 3] {
    if v.is_empty() {
        return [f32::NAN; 3];
    }
    v.sort_by(f32::total_cmp);
    if desc {
        v.reverse();
    }
    let at = |q: f64| v[((v.len() - 1) as f64 * q) as usize];
    [at(0.0), at(0.005), at(0.01)]
}

#[derive(Deserialize)]
struct FrameLine {
    frame: u64,
    round: u32,
    cards: Vec<serde_json::Value>,
    chips: Vec<ChipLine>,
    #[serde(default)]
    hands_px: Vec<[f64; 2]>,
}

#[derive(Deserialize)]
struct ChipLine {
    seat: u8,
    bet: BetKind,
}

#[derive(Deserialize)]
struct SessionFile {
    seed: u64,
    ruleset: RulesetId,
    rounds: u32,
    table_style: String,
    conditions: String,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, EvalError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| EvalError::Session { path: path.to_path_buf(), message: e.to_string() })?;
    serde_json::from_str(&text).map_err(|e| EvalError::Session { path: path.to_path_buf(), message: e.to_string() })
}

/// The empty table of a simulated session as its camera sees it (for a real
/// table: a frame captured while the table is empty).
pub fn simulated_empty_reference(dir: &Path, geometry: &TableGeometry) -> Result<Mat, EvalError> {
    // As a camera delivers it: through (M)JPEG. Sessions the simulator writes now carry it;
    // older ones have it rendered again from session.json (the same bytes).
    let bytes = match std::fs::read(dir.join(EMPTY_TABLE_FILE)) {
        Ok(b) => Vector::<u8>::from_slice(&b),
        Err(_) => {
            let path = dir.join("session.json");
            let s: SessionFile = read_json(&path)?;
            let bad = |message: String| EvalError::Session { path: path.clone(), message };
            let style = TableStyle::preset(&s.table_style)
                .ok_or_else(|| bad(format!("unknown table style {}", s.table_style)))?;
            let base =
                Conditions::preset(&s.conditions).ok_or_else(|| bad(format!("unknown conditions {}", s.conditions)))?;
            empty_table_jpeg(geometry, &style, &base, s.seed)?
        }
    };
    imgcodecs::imdecode(&bytes, imgcodecs::IMREAD_COLOR).map_err(cv("decoding the reference"))
}

/// Runs the detector over a simulated session folder and scores it.
pub fn evaluate_session(dir: &Path, config: &PresenceConfig, mode: ReferenceMode) -> Result<SessionResult, EvalError> {
    let geometry = Calibration::load(&dir.join("calibration.json"))?;
    let session: SessionFile = read_json(&dir.join("session.json"))?;
    let mut detector = match mode {
        ReferenceMode::EmptyTable => {
            let reference = simulated_empty_reference(dir, &geometry)?;
            PresenceDetector::new(&geometry, &reference, config.clone())?
        }
        ReferenceMode::RunningMedian => PresenceDetector::without_reference(&geometry, config.clone())?,
    };
    // 1. Detection from the video alone.
    let video = dir.join("video.avi");
    let name = video.to_str().ok_or_else(|| EvalError::Session { path: video.clone(), message: "not UTF-8".into() })?;
    let mut cap = videoio::VideoCapture::from_file(name, videoio::CAP_ANY).map_err(cv("opening the video"))?;
    let fps = cap.get(videoio::CAP_PROP_FPS).unwrap_or(30.0).max(1.0);
    let mut states: Vec<Vec<SpotState>> = Vec::new();
    let mut m = Mat::default();
    let started = std::time::Instant::now();
    while cap.read(&mut m).map_err(cv("reading the video"))? && !m.empty() {
        let t = states.len() as f64 * 1000.0 / fps;
        states.push(detector.update(&m, t)?);
    }
    let ms_per_frame = started.elapsed().as_secs_f64() * 1000.0 / states.len().max(1) as f64;
    // 2. Scoring against the truth.
    let path = dir.join("frames.jsonl");
    let text = std::fs::read_to_string(&path)
        .map_err(|e| EvalError::Session { path: path.clone(), message: e.to_string() })?;
    let mut per_round = Confusion::default();
    let mut per_frame = Confusion::default();
    let mut occluded = 0;
    let mut misses = Vec::new();
    let mut decided_round: BTreeSet<u32> = BTreeSet::new();
    let (mut present_scores, mut absent_scores) = (Vec::new(), Vec::new());
    for line in text.lines() {
        let f: FrameLine = serde_json::from_str(line)
            .map_err(|e| EvalError::Session { path: path.clone(), message: e.to_string() })?;
        let Some(st) = states.get(f.frame as usize) else {
            return Err(EvalError::Session {
                path: video.clone(),
                message: format!("the video has {} frames, the truth more", states.len()),
            });
        };
        let truth: BTreeSet<(u8, BetKind)> = f.chips.iter().map(|c| (c.seat, c.bet)).collect();
        let first_card = !f.cards.is_empty() && decided_round.insert(f.round);
        for s in st {
            let t = truth.contains(&(s.seat, s.bet));
            per_frame.add(t, s.present);
            if !s.occluded && f.hands_px.is_empty() {
                if t {
                    present_scores.push(s.score)
                } else {
                    absent_scores.push(s.score)
                }
            }
            occluded += u64::from(s.occluded);
            if first_card {
                per_round.add(t, s.present);
                if t != s.present {
                    misses.push(Miss { frame: f.frame, state: *s, truth: t });
                }
            }
        }
    }
    Ok(SessionResult {
        ruleset: session.ruleset,
        seed: session.seed,
        conditions: session.conditions,
        table_style: session.table_style,
        frames: states.len() as u64,
        rounds: session.rounds,
        per_round,
        per_frame,
        occluded_spot_frames: occluded,
        misses,
        ms_per_frame,
        present_scores_low: tail(present_scores, false),
        absent_scores_high: tail(absent_scores, true),
    })
}

/// One simulated session to evaluate.
#[derive(Debug, Clone)]
pub struct EvalCase {
    /// Ruleset.
    pub ruleset: RulesetId,
    /// Conditions preset.
    pub conditions: String,
    /// Seed (also picks the felt and the camera).
    pub seed: u64,
    /// Rounds.
    pub rounds: u32,
    /// Image size.
    pub width: u32,
    /// Image size.
    pub height: u32,
}

/// Simulates a case into `work/<name>` and evaluates it.
pub fn run_case(
    case: &EvalCase,
    work: &Path,
    config: &PresenceConfig,
    mode: ReferenceMode,
    keep: bool,
) -> Result<SessionResult, EvalError> {
    let out = work.join(format!("{}-{}-s{}", case.ruleset, case.conditions, case.seed));
    let spec = SessionSpec {
        ruleset: case.ruleset,
        rounds: case.rounds,
        seed: case.seed,
        scenario: None,
        width: case.width,
        height: case.height,
        design: None,
        conditions: Some(case.conditions.clone()),
        out: out.clone(),
    };
    if !out.join("frames.jsonl").exists() || !keep {
        simulate(&spec, |_, _| {})?;
    }
    let r = evaluate_session(&out, config, mode);
    // Videos are large; keep only what failed to evaluate (or what was asked for).
    if r.is_ok() && !keep {
        let _ = std::fs::remove_dir_all(&out);
    }
    r
}
