//! Replay: the whole pipeline again over a recorded session, giving byte-identical events.
//!
//! A session is either a **recording** (a folder written by [`crate::record::recording`]:
//! `recording.json`, `index.jsonl`, `seg-*.avi`, `calibration.json`, usually a `journal/`) or a
//! **simulator session** (`tablecam simulate`: `video.avi` + `calibration.json`). [`run`] feeds
//! its frames, with their recorded positions and timestamps, through the same stages as
//! `tablecam run` (recognizer pool, bet presence without a reference, tracker and verifier), so the
//! events are a function of the frames alone: every event but the `health` ones (which hold
//! wall-clock latencies, [`SerializedEvent::volatile`]) is byte-identical to the live run's.
//!
//! [`ReplayOptions::record_to`] makes a run over a simulator session act as a live run: it
//! records the frames ([`RecordingTap`]) and journals the events, so that the recording can be
//! replayed and disputed later (`docs/disputes.md`).
pub mod cli;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use opencv::core::Mat;

use crate::calib::{Calibration, TableGeometry};
use crate::pipeline::{
    EventSink, Hints, MonitorLogic, OnnxRecognizers, Pipeline, PipelineError, PipelineOptions, PipelineReport,
    SerializedEvent, TableHint, TableInput, TableSetup,
};
use crate::presence::{PresenceConfig, PresenceDetector};
use crate::record::recording::{
    ModelsUsed, Recorder, RecordingError, RecordingManifest, RecordingOptions, RecordingReader, RecordingTap,
    CALIBRATION_FILE, MANIFEST_FILE, PRESENCE_REFERENCE_FILE, RECORDING_VERSION,
};
use crate::record::{verify_file, FsyncPolicy, Journal};
use crate::rules::RulesetId;
use crate::source::{FrameSource, Read, SourceError, SourceInfo, VideoFileSource};

/// The video of a simulator session.
pub const SIM_VIDEO_FILE: &str = "video.avi";
/// The journal folder of a recording made by [`run`] with [`ReplayOptions::record_to`].
pub const JOURNAL_DIR: &str = "journal";
/// The models a replay uses when neither the options nor the recording name any.
pub const DEFAULT_MODELS: (&str, &str) = ("models/locator.onnx", "models/classifier.onnx");
/// Health interval of a simulator session (the `tablecam run` default).
pub const DEFAULT_HEALTH_INTERVAL_MS: u64 = 5_000;

/// Errors of replay.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The folder is neither a recording nor a simulator session.
    #[error("{} is not a session: it has neither recording.json (a recording) nor video.avi (a simulator session)", path.display())]
    NotASession {
        /// The folder.
        path: PathBuf,
    },
    /// The session has no calibration.
    #[error("{}: no calibration.json in the session", path.display())]
    NoCalibration {
        /// The folder.
        path: PathBuf,
    },
    /// The calibration is invalid.
    #[error(transparent)]
    Calibration(#[from] crate::calib::CalibError),
    /// The recording is unreadable.
    #[error(transparent)]
    Recording(#[from] RecordingError),
    /// The video cannot be read.
    #[error(transparent)]
    Source(#[from] SourceError),
    /// The pipeline failed to start or run.
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
    /// The journal of a run that records could not be opened.
    #[error(transparent)]
    Journal(#[from] crate::record::JournalError),
    /// The live run's journal, which holds the backend messages to replay, is damaged.
    #[error("the journal {} fails verification ({problem}); its backend messages cannot be trusted: restore it, or replay on vision alone with --no-hints", path.display())]
    BadJournal {
        /// The journal.
        path: PathBuf,
        /// The first problem found.
        problem: String,
    },
    /// A bad `--speed`.
    #[error("speed {0:?}: use realtime, max, or a factor such as 2 or 0.5")]
    BadSpeed(String),
    /// The session has fewer frames than asked for.
    #[error("frame {frame} is not in the session (it has {frames} frames)")]
    NoSuchFrame {
        /// The frame.
        frame: u64,
        /// How many the session has.
        frames: u64,
    },
    /// Writing output failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
}

/// How fast frames are fed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Speed {
    /// As fast as the pipeline takes them.
    Max,
    /// Paced by the frames' timestamps, `factor` times real time (1: real time).
    Factor(f64),
}

impl FromStr for Speed {
    type Err = ReplayError;
    fn from_str(s: &str) -> Result<Speed, ReplayError> {
        match s {
            "max" => Ok(Speed::Max),
            "realtime" => Ok(Speed::Factor(1.0)),
            _ => match s.parse::<f64>() {
                Ok(f) if f.is_finite() && f > 0.0 => Ok(Speed::Factor(f)),
                _ => Err(ReplayError::BadSpeed(s.to_string())),
            },
        }
    }
}

/// Where a session's frames are.
#[derive(Debug, Clone)]
pub enum Frames {
    /// A recording (boxed: the reader is large and sessions are few).
    Recording(Box<RecordingReader>),
    /// A video file (simulator session).
    Video(PathBuf),
}

/// An opened session: its table, calibration, frames, and journal if it has one.
#[derive(Debug, Clone)]
pub struct Session {
    /// The folder.
    pub dir: PathBuf,
    /// The table.
    pub table_id: String,
    /// The camera.
    pub camera_id: String,
    /// The ruleset.
    pub ruleset: RulesetId,
    /// The calibration.
    pub geometry: Arc<TableGeometry>,
    /// The calibration file's text.
    pub calibration_json: String,
    /// The frames.
    pub frames: Frames,
    /// The journal the live run wrote, as the recording names it (it may have been removed since).
    pub journal: Option<PathBuf>,
    /// The live run's bet-presence reference image, if the recording kept one.
    pub presence_reference: Option<PathBuf>,
    /// The models the live run used, if recorded.
    pub models: Option<ModelsUsed>,
    /// The live run's health interval, ms.
    pub health_interval_ms: u64,
    /// Whether the live run's deck was enrolled (its classifier trained on it).
    pub deck_enrolled: bool,
}

impl Session {
    /// Opens a recording or a simulator session folder.
    pub fn open(dir: &Path) -> Result<Session, ReplayError> {
        let cpath = dir.join(CALIBRATION_FILE);
        if dir.join(MANIFEST_FILE).exists() {
            let reader = RecordingReader::open(dir)?;
            if !cpath.exists() {
                return Err(ReplayError::NoCalibration { path: dir.to_path_buf() });
            }
            let calibration_json =
                std::fs::read_to_string(&cpath).map_err(|source| ReplayError::Io { path: cpath.clone(), source })?;
            let geometry = Arc::new(Calibration::parse(&calibration_json, &cpath)?);
            let m = reader.manifest().clone();
            // A relative journal path is relative to the recording.
            let journal = m.journal.as_ref().map(|j| if j.is_absolute() { j.clone() } else { dir.join(j) });
            return Ok(Session {
                dir: dir.to_path_buf(),
                table_id: m.table_id,
                camera_id: m.camera_id,
                ruleset: m.ruleset,
                geometry,
                calibration_json,
                frames: Frames::Recording(Box::new(reader)),
                journal,
                presence_reference: Some(dir.join(PRESENCE_REFERENCE_FILE)).filter(|p| p.exists()),
                models: m.models,
                health_interval_ms: m.health_interval_ms,
                deck_enrolled: m.deck_enrolled,
            });
        }
        let video = dir.join(SIM_VIDEO_FILE);
        if !video.exists() {
            return Err(ReplayError::NotASession { path: dir.to_path_buf() });
        }
        if !cpath.exists() {
            return Err(ReplayError::NoCalibration { path: dir.to_path_buf() });
        }
        let calibration_json =
            std::fs::read_to_string(&cpath).map_err(|source| ReplayError::Io { path: cpath.clone(), source })?;
        let geometry = Arc::new(Calibration::parse(&calibration_json, &cpath)?);
        let c = &geometry.calibration;
        Ok(Session {
            dir: dir.to_path_buf(),
            table_id: c.table_id.clone(),
            camera_id: c.camera_id.clone(),
            ruleset: c.ruleset,
            geometry: geometry.clone(),
            calibration_json,
            frames: Frames::Video(video),
            journal: None,
            // The empty table the simulator rendered before the session, as `eval-scenarios`
            // uses it: without it every bet spot reads empty and every hand "has no bet".
            presence_reference: Some(dir.join(crate::sim::session::EMPTY_TABLE_FILE)).filter(|p| p.exists()),
            models: None,
            health_interval_ms: DEFAULT_HEALTH_INTERVAL_MS,
            // A simulator session replays as a deck the classifier never saw (as strict as
            // confirming gets); `eval-scenarios` decides from the classifier's designs instead.
            deck_enrolled: false,
        })
    }

    /// The session's frames as a recorded source, numbered as the live run numbered them.
    pub fn source(&self) -> Result<Box<dyn FrameSource>, ReplayError> {
        Ok(match &self.frames {
            Frames::Recording(r) => Box::new((**r).clone().into_source()),
            Frames::Video(v) => Box::new(VideoFileSource::open_file(v, &self.camera_id)?),
        })
    }

    /// The frames `wanted` (by the pipeline's frame numbers), as the live pipeline saw them.
    pub fn frames(&self, wanted: &BTreeSet<u64>) -> Result<BTreeMap<u64, Mat>, ReplayError> {
        let mut out = BTreeMap::new();
        match &self.frames {
            Frames::Recording(r) => {
                for &n in wanted {
                    out.insert(n, r.frame(n)?);
                }
            }
            Frames::Video(_) => {
                // A video is read in order once: frame n is the n-th frame the file gives.
                let Some(&last) = wanted.iter().next_back() else { return Ok(out) };
                let mut source = self.source()?;
                let mut n = 0u64;
                while n <= last {
                    match source.read()? {
                        Read::Frame(c) => {
                            if wanted.contains(&n) {
                                out.insert(n, c.image);
                            }
                            n += 1;
                        }
                        Read::Corrupt { .. } => {}
                        Read::End => return Err(ReplayError::NoSuchFrame { frame: last, frames: n }),
                    }
                }
            }
        }
        Ok(out)
    }

    /// The models to use: `locator`/`classifier` if given, else the recording's, else the defaults
    /// (`eval-scenarios`' three: locator, index-corner and whole-card classifiers).
    pub fn models(&self, locator: Option<&Path>, classifier: Option<&Path>) -> ModelsUsed {
        let recorded = self.models.clone();
        ModelsUsed {
            locator: locator
                .map(Path::to_path_buf)
                .or_else(|| recorded.as_ref().map(|m| m.locator.clone()))
                .unwrap_or_else(|| DEFAULT_MODELS.0.into()),
            classifier: classifier
                .map(Path::to_path_buf)
                .or_else(|| recorded.as_ref().map(|m| m.classifier.clone()))
                .unwrap_or_else(|| DEFAULT_MODELS.1.into()),
            // a classifier given alone replaces the recording's pair; else the recording's; a
            // simulator session (no live run) reads as `eval-scenarios` reads it, whole-card
            // classifier included
            face_classifier: match (classifier, &recorded) {
                (Some(_), _) => None,
                (None, Some(m)) => m.face_classifier.clone(),
                (None, None) => Some(crate::classify::DEFAULT_FACE_PATH.into()),
            },
            glyph_classifier: match (classifier, &recorded) {
                (Some(_), _) => None,
                (None, Some(m)) => m.glyph_classifier.clone(),
                (None, None) => Some(crate::classify::DEFAULT_GLYPH_PATH.into()),
            },
        }
    }
}

/// How to run a replay.
#[derive(Debug, Clone)]
pub struct ReplayOptions {
    /// Pacing.
    pub speed: Speed,
    /// The recognition models (see [`Session::models`]).
    pub models: ModelsUsed,
    /// Recognizer workers.
    pub workers: usize,
    /// A progress bar on stderr.
    pub progress: bool,
    /// Record the frames into this new folder and journal the events in `<it>/journal/`: the run
    /// becomes a live run whose recording can be replayed and disputed.
    pub record_to: Option<PathBuf>,
    /// Recording options when recording.
    pub recording: RecordingOptions,
    /// Apply the live run's backend messages (from its journal) at the frames it applied them.
    pub hints: bool,
}

impl ReplayOptions {
    /// Max speed, no progress bar, no recording, one worker.
    pub fn new(models: ModelsUsed) -> ReplayOptions {
        ReplayOptions {
            speed: Speed::Max,
            models,
            workers: 1,
            progress: false,
            record_to: None,
            recording: RecordingOptions::default(),
            hints: true,
        }
    }
}

/// The backend messages a live run applied, from its journal, each with the frame it was applied
/// before: accepted ones are its `backend.hint` events, refused ones its `error` events from
/// `"backend"` (both carry that frame, see docs/events.md). The journal is verified first.
pub fn journaled_hints(path: &Path) -> Result<VecDeque<(u64, TableHint)>, ReplayError> {
    let check = verify_file(path, None)?;
    if let Some(problem) = check.problem {
        return Err(ReplayError::BadJournal { path: path.to_path_buf(), problem: problem.to_string() });
    }
    let text = std::fs::read_to_string(path).map_err(|source| ReplayError::Io { path: path.to_path_buf(), source })?;
    let bad = |n: usize, why: String| ReplayError::BadJournal {
        path: path.to_path_buf(),
        problem: format!("line {n}: {why}"),
    };
    let mut hints = VecDeque::new();
    for (i, line) in text.lines().enumerate() {
        let entry: serde_json::Value = serde_json::from_str(line).map_err(|e| bad(i + 1, e.to_string()))?;
        let event = &entry["event"];
        let frame = event["frame"].as_u64().ok_or_else(|| bad(i + 1, "event without a frame".into()))?;
        let hint = match event["kind"].as_str() {
            Some("backend.hint") => TableHint::Hint(
                serde_json::from_value(event["body"].clone()).map_err(|e| bad(i + 1, format!("backend.hint: {e}")))?,
            ),
            Some("error") if event["body"]["source"] == "backend" => {
                TableHint::Refused(event["body"]["message"].as_str().unwrap_or_default().to_string())
            }
            _ => continue,
        };
        hints.push_back((frame, hint));
    }
    Ok(hints)
}

/// Runs the pipeline over `session`, handing every event to `sink`; returns the run's report.
pub fn run(
    session: &Session,
    options: &ReplayOptions,
    sink: Box<dyn EventSink>,
) -> Result<PipelineReport, ReplayError> {
    let mut source = session.source()?;
    let mut sink = sink;
    // As `tablecam run` did: with the recording's reference image if the live run had one.
    let reference = match &session.presence_reference {
        Some(p) => {
            let image = opencv::imgcodecs::imread(&*p.to_string_lossy(), opencv::imgcodecs::IMREAD_COLOR)
                .ok()
                .filter(|m| !opencv::prelude::MatTraitConst::empty(m))
                .ok_or_else(|| ReplayError::Io {
                    path: p.clone(),
                    source: std::io::Error::new(std::io::ErrorKind::InvalidData, "not a readable image"),
                })?;
            Some(image)
        }
        None => None,
    };
    if let Some(dir) = &options.record_to {
        let journal = PathBuf::from(JOURNAL_DIR).join(format!("{}.jsonl", session.table_id));
        let manifest = RecordingManifest {
            version: RECORDING_VERSION,
            table_id: session.table_id.clone(),
            camera_id: session.camera_id.clone(),
            ruleset: session.ruleset,
            input: source.info().input.clone(),
            nominal_fps: source.info().nominal_fps,
            jpeg_quality: options.recording.jpeg_quality,
            models: Some(options.models.clone()),
            journal: Some(journal.clone()),
            health_interval_ms: session.health_interval_ms,
            deck_enrolled: session.deck_enrolled,
        };
        let recorder = Recorder::create(dir, &manifest, &session.calibration_json, options.recording.clone())?;
        if let (Some(from), Some(image)) = (&session.presence_reference, &reference) {
            let to = dir.join(PRESENCE_REFERENCE_FILE);
            if from.extension().is_some_and(|e| e.eq_ignore_ascii_case("png")) {
                std::fs::copy(from, &to).map_err(|source| ReplayError::Io { path: from.clone(), source })?;
            } else {
                // A simulator session's empty table is a JPEG: the recording keeps PNG.
                let written = opencv::imgcodecs::imwrite(&*to.to_string_lossy(), image, &opencv::core::Vector::new())
                    .unwrap_or(false);
                if !written {
                    return Err(ReplayError::Io {
                        path: to,
                        source: std::io::Error::other("could not write the presence reference"),
                    });
                }
            }
        }
        source = Box::new(RecordingTap::new(source, recorder));
        std::fs::create_dir_all(dir.join(JOURNAL_DIR))
            .map_err(|e| ReplayError::Io { path: dir.join(JOURNAL_DIR), source: e })?;
        let journal = Journal::open(dir.join(journal), FsyncPolicy::Never)?;
        sink = Box::new(Tee { journal: Some(journal), inner: sink });
    }
    if options.progress || options.speed != Speed::Max {
        source = Box::new(Paced::new(source, options.speed, options.progress));
    }
    let geometry = session.geometry.clone();
    let logic = MonitorLogic::factory(&TableSetup {
        table_id: &session.table_id,
        camera_id: &session.camera_id,
        ruleset: session.ruleset,
        geometry: &geometry,
        deck_enrolled: session.deck_enrolled,
    })?;
    let presence = match &reference {
        Some(image) => PresenceDetector::new(&geometry, image, PresenceConfig::default()),
        None => PresenceDetector::without_reference(&geometry, PresenceConfig::default()),
    }
    .map_err(PipelineError::from)?;
    // The live run's backend messages, at the frames it applied them (a simulator session, or a
    // recording whose journal is gone, has none: vision alone).
    let hints = match (&session.journal, options.hints) {
        (Some(j), true) if j.exists() => Hints::Replayed(journaled_hints(j)?),
        _ => Hints::None,
    };
    let table = TableInput {
        table_id: session.table_id.clone(),
        source,
        geometry,
        presence: Some(presence),
        empty_table: reference,
        logic,
        hints,
    };
    let recognizers = OnnxRecognizers {
        locator: options.models.locator.clone(),
        classifier: options.models.classifier.clone(),
        face_classifier: options.models.face_classifier.clone(),
        glyph_classifier: options.models.glyph_classifier.clone(),
        intra_threads: 1,
    };
    let pipeline_options = PipelineOptions {
        workers: options.workers.max(1),
        health_interval_ms: session.health_interval_ms,
        ..PipelineOptions::default()
    };
    let stop = Arc::new(AtomicBool::new(false));
    let pipeline = Pipeline::start(vec![table], &recognizers, sink, &pipeline_options, stop)?;
    let report = pipeline.join();
    if let Some(e) = &report.close_error {
        return Err(PipelineError::Sink(e.clone()).into());
    }
    Ok(report)
}

/// Journals every event (the live run's record), then hands it on.
struct Tee {
    journal: Option<Journal>,
    inner: Box<dyn EventSink>,
}

impl EventSink for Tee {
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError> {
        if let Some(j) = &mut self.journal {
            j.append(event.json.as_bytes()).map_err(|e| PipelineError::Sink(e.to_string()))?;
        }
        self.inner.accept(event)
    }

    fn close(&mut self) -> Result<(), PipelineError> {
        if let Some(mut j) = self.journal.take() {
            j.sync().map_err(|e| PipelineError::Sink(e.to_string()))?;
        }
        self.inner.close()
    }
}

/// Writes every event's JSON line to a writer (stdout, a file); `deterministic` leaves out the
/// volatile (`health`) ones, so that two runs' outputs compare byte for byte.
pub struct LinesSink {
    out: Box<dyn Write + Send>,
    deterministic: bool,
}

impl LinesSink {
    /// Lines to `out`.
    pub fn new(out: Box<dyn Write + Send>, deterministic: bool) -> LinesSink {
        LinesSink { out, deterministic }
    }
}

impl EventSink for LinesSink {
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError> {
        if self.deterministic && event.volatile {
            return Ok(());
        }
        writeln!(self.out, "{}", event.json).map_err(|e| PipelineError::Sink(e.to_string()))
    }

    fn close(&mut self) -> Result<(), PipelineError> {
        self.out.flush().map_err(|e| PipelineError::Sink(e.to_string()))
    }
}

/// Paces a recorded source by its timestamps and draws a progress bar on stderr.
struct Paced {
    inner: Box<dyn FrameSource>,
    speed: Speed,
    progress: bool,
    /// Wall clock and frame time of the first frame.
    start: Option<(Instant, f64)>,
    frames: u64,
    last_draw: Option<Instant>,
}

impl Paced {
    fn new(inner: Box<dyn FrameSource>, speed: Speed, progress: bool) -> Paced {
        Paced { inner, speed, progress, start: None, frames: 0, last_draw: None }
    }

    fn draw(&mut self, done: bool) {
        if !self.progress {
            return;
        }
        let now = Instant::now();
        if !done && self.last_draw.is_some_and(|t| now.duration_since(t) < Duration::from_millis(200)) {
            return;
        }
        self.last_draw = Some(now);
        let total = self.inner.info().frame_count.unwrap_or(0);
        let elapsed = self.start.map(|(t, _)| now.duration_since(t).as_secs_f64()).unwrap_or(0.0);
        let fps = if elapsed > 0.0 { self.frames as f64 / elapsed } else { 0.0 };
        const WIDTH: u64 = 30;
        let filled = (self.frames * WIDTH).checked_div(total).unwrap_or(0).min(WIDTH) as usize;
        let bar = format!("{}{}", "#".repeat(filled), "-".repeat(WIDTH as usize - filled));
        eprint!("\rreplay [{bar}] {}/{} frames, {fps:.1} frames/s", self.frames, total);
        if done {
            eprintln!();
        }
    }
}

impl FrameSource for Paced {
    fn info(&self) -> &SourceInfo {
        self.inner.info()
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        let read = self.inner.read()?;
        match &read {
            Read::Frame(c) => {
                let (t0, ts0) = *self.start.get_or_insert((Instant::now(), c.timestamp_ms));
                if let Speed::Factor(f) = self.speed {
                    let due = Duration::from_secs_f64(((c.timestamp_ms - ts0) / f).max(0.0) / 1000.0);
                    let elapsed = t0.elapsed();
                    if due > elapsed {
                        std::thread::sleep(due - elapsed);
                    }
                }
                self.frames += 1;
                self.draw(false);
            }
            Read::End => self.draw(true),
            Read::Corrupt { .. } => {}
        }
        Ok(read)
    }
}
