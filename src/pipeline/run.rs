//! `tablecam run --config FILE`: the main job. Opens every table of the configuration, runs
//! the pipeline until the inputs end or Ctrl-C, journals every event, then publishes it, and
//! prints each round's start, flags and outcome as they happen.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crossbeam_channel::{bounded, Sender};

use super::config::{CurveConfig, FsyncSetting, RecordingConfig, RunConfig, TableConfig, ValidatedConfig};
use super::contract::{EventSink, SerializedEvent, TableHint, TableSetup};
use super::engine::{Hints, Pipeline, PipelineOptions, PipelineReport, TableInput};
use super::logic::MonitorLogic;
use super::recognizer::OnnxRecognizers;
use super::sink::PrintingSink;
use super::stage::StageName;
use super::PipelineError;
use crate::calib::Calibration;
use crate::events::BackendHint as TrackerHint;
use crate::presence::{PresenceConfig, PresenceDetector};
use crate::publish::{
    read_public_keys_dir, Attach, BackendHint, HintRules, Inbound, InboundConfig, KeyPair, Publisher, PublisherConfig,
    Security,
};
use crate::record::recording::{ModelsUsed, Recorder, RecordingManifest, RecordingTap, RECORDING_VERSION};
use crate::record::{FsyncPolicy, Journal};
use crate::rules::settle::{Decision, Wager};
use crate::source::{FrameSource, OpenOptions, Pace};

/// Arguments of `tablecam run`.
#[derive(Debug, Clone, clap::Args)]
pub struct RunArgs {
    /// The configuration file (docs/pipeline.md; examples in config/).
    #[arg(long)]
    pub config: PathBuf,
    /// Print every event's JSON line instead of the readable lines.
    #[arg(long)]
    pub json: bool,
}

/// Set by SIGINT/SIGTERM; the pipeline's stop flag follows it.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // Only an atomic store: async-signal-safe.
    INTERRUPTED.store(true, Ordering::SeqCst);
}

fn install_signal_handlers() {
    #[cfg(unix)]
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGINT, on_signal as *const () as libc::sighandler_t);
        libc::signal(libc::SIGTERM, on_signal as *const () as libc::sighandler_t);
    }
}

/// Journals every event of each table in `DIR/<table>.jsonl` (hash-chained), then publishes it.
pub struct JournalSink {
    journals: BTreeMap<Arc<str>, Journal>,
    dir: PathBuf,
    policy: FsyncPolicy,
    publisher: Option<Publisher>,
}

impl JournalSink {
    /// Journals in `dir` with `policy`; publishes with `publisher` when there is one.
    pub fn new(dir: &Path, policy: FsyncPolicy, publisher: Option<Publisher>) -> Result<JournalSink, PipelineError> {
        std::fs::create_dir_all(dir).map_err(|source| PipelineError::Io { path: dir.to_path_buf(), source })?;
        Ok(JournalSink { journals: BTreeMap::new(), dir: dir.to_path_buf(), policy, publisher })
    }

    /// Opens a table's journal now (so that a locked or corrupt journal stops the start).
    pub fn open_table(&mut self, table_id: &str) -> Result<(), PipelineError> {
        let path = self.dir.join(format!("{table_id}.jsonl"));
        let journal = Journal::open(&path, self.policy).map_err(|e| PipelineError::Sink(e.to_string()))?;
        if let Some(torn) = journal.recovered() {
            eprintln!("tablecam: {}: repaired a torn last line: {torn:?}", path.display());
        }
        self.journals.insert(Arc::from(table_id), journal);
        Ok(())
    }
}

impl EventSink for JournalSink {
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError> {
        if !self.journals.contains_key(&event.table_id) {
            self.open_table(&event.table_id)?;
        }
        let journal = self.journals.get_mut(&event.table_id).ok_or_else(|| PipelineError::Sink("no journal".into()))?;
        // On record first: an event that could not be journaled is not published.
        journal.append(event.json.as_bytes()).map_err(|e| PipelineError::Sink(e.to_string()))?;
        if let Some(p) = &mut self.publisher {
            p.publish(&event.topic, event.json.as_bytes(), event.seq)
                .map_err(|e| PipelineError::Sink(e.to_string()))?;
            p.tick(&event.table_id, event.time_ms).map_err(|e| PipelineError::Sink(e.to_string()))?;
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), PipelineError> {
        for j in self.journals.values_mut() {
            j.sync().map_err(|e| PipelineError::Sink(e.to_string()))?;
        }
        Ok(())
    }
}

fn fsync_policy(s: FsyncSetting) -> FsyncPolicy {
    match s {
        FsyncSetting::Always => FsyncPolicy::Always,
        FsyncSetting::EveryN(n) => FsyncPolicy::EveryN(n),
        FsyncSetting::IntervalMs(ms) => FsyncPolicy::Interval(Duration::from_millis(ms)),
        FsyncSetting::Never => FsyncPolicy::Never,
    }
}

fn curve_server(c: &CurveConfig, field: &str, path: &Path) -> Result<Security, PipelineError> {
    let bad = |e: crate::publish::PublishError| PipelineError::Config {
        path: path.to_path_buf(),
        field: field.to_string(),
        message: e.to_string(),
    };
    let keys = KeyPair::read(&c.server_secret_key_file).map_err(bad)?;
    let allowed_clients = c.authorized_clients_dir.as_deref().map(read_public_keys_dir).transpose().map_err(bad)?;
    Ok(Security::CurveServer { keys, allowed_clients })
}

/// The tracker's form of a backend message, or why it has none.
pub fn tracker_hint(hint: &BackendHint) -> Result<TrackerHint, String> {
    Ok(match hint {
        BackendHint::RoundStart { round_id, .. } => TrackerHint::RoundStart { round_id: round_id.clone() },
        BackendHint::DealingMode { mode, .. } => TrackerHint::DealingMode { mode: *mode },
        BackendHint::Bets { seat, bets, .. } => TrackerHint::Bets {
            seat: *seat,
            wagers: bets.iter().map(|b| Wager { bet: b.spot, stake: Some(b.stake) }).collect(),
        },
        BackendHint::Fold { seat, .. } => TrackerHint::Decision { seat: *seat, decision: Decision::Folded },
        BackendHint::Play { seat, .. } => TrackerHint::Decision { seat: *seat, decision: Decision::Played },
        BackendHint::SangongDice { total, banker: Some(banker), capital, .. } => {
            TrackerHint::Dice { banker: *banker, total: *total, capital: *capital }
        }
        BackendHint::SangongDice { banker: None, .. } => {
            return Err("sangong_dice without the banker's place: the deal order cannot be checked".into())
        }
        BackendHint::ShufflerFault { .. } => TrackerHint::ShufflerFault,
        BackendHint::Jackpot { pool, fixed, .. } => TrackerHint::Jackpot {
            pool: *pool,
            // names checked when the message was parsed
            fixed: fixed.iter().filter_map(|(name, &a)| Some((crate::publish::jackpot_category(name)?, a))).collect(),
        },
    })
}

/// Receives backend messages until `stop`, routing each to its table.
fn inbound_loop(mut inbound: Inbound, tables: BTreeMap<String, Sender<TableHint>>, stop: Arc<AtomicBool>) {
    while !stop.load(Ordering::Relaxed) {
        let message = match inbound.recv(Duration::from_millis(100)) {
            Ok(Some(m)) => m,
            Ok(None) => continue,
            Err(e) => {
                eprintln!("tablecam: backend channel: {e}");
                return;
            }
        };
        let (table, hint) = match message {
            Ok(h) => {
                let table = h.table().to_string();
                (Some(table), tracker_hint(&h).map(TableHint::Hint).unwrap_or_else(TableHint::Refused))
            }
            Err(e) => (e.table.clone(), TableHint::Refused(format!("{:?}: {}", e.kind, e.message))),
        };
        // A refused message naming no known table goes to every table's record.
        let targets: Vec<&Sender<TableHint>> = match table.as_deref().and_then(|t| tables.get(t)) {
            Some(tx) => vec![tx],
            None => tables.values().collect(),
        };
        for tx in targets {
            let _ = tx.try_send(hint.clone());
        }
    }
}

/// Opens everything a validated configuration names and starts the pipeline.
pub fn start(
    v: &ValidatedConfig,
    print: Box<dyn Write + Send>,
    json: bool,
    stop: Arc<AtomicBool>,
) -> Result<(Pipeline, Option<std::thread::JoinHandle<()>>), PipelineError> {
    let c = &v.config;
    let publisher = match &c.publisher {
        Some(p) => {
            let security = match &p.curve {
                Some(curve) => curve_server(curve, "publisher.curve", &v.path)?,
                None => Security::Plain,
            };
            let config = PublisherConfig {
                endpoint: p.endpoint.clone(),
                attach: Attach::Bind,
                security,
                ..PublisherConfig::default()
            };
            Some(Publisher::new(&config).map_err(|e| PipelineError::Sink(e.to_string()))?)
        }
        None => None,
    };
    let mut sink = JournalSink::new(&c.journal.dir, fsync_policy(c.journal.fsync), publisher)?;
    let mut tables = Vec::new();
    let mut hint_senders = BTreeMap::new();
    // The classifier's designs, read once, for the tables that name their deck.
    let designs = if c.tables.iter().any(|t| t.deck.is_some()) {
        crate::classify::trained_designs(&c.recognizer.classifier).map_err(|e| PipelineError::stage("classifier", e))?
    } else {
        Vec::new()
    };
    for (t, spec) in c.tables.iter().zip(&v.sources) {
        sink.open_table(&t.table_id)?;
        let geometry = Arc::new(Calibration::load(&t.calibration)?);
        let camera_id = t.camera_id.clone().unwrap_or_else(|| geometry.calibration.camera_id.clone());
        let options = OpenOptions {
            camera_id: Some(camera_id.clone()),
            sim_size: (geometry.calibration.image_width, geometry.calibration.image_height),
            sim_seed: t.sim_seed.unwrap_or(1),
            sim_pace: Pace::RealTime,
            ..OpenOptions::default()
        };
        let mut source =
            spec.open(&options).map_err(|source| PipelineError::Source { table_id: t.table_id.clone(), source })?;
        let reference = match &t.presence_reference {
            Some(r) => {
                let image = opencv::imgcodecs::imread(&*r.to_string_lossy(), opencv::imgcodecs::IMREAD_COLOR)
                    .map_err(|e| PipelineError::stage("presence reference", format!("{}: {e}", r.display())))?;
                if opencv::prelude::MatTraitConst::empty(&image) {
                    return Err(PipelineError::stage(
                        "presence reference",
                        format!("{}: not a readable image (an empty-table photo from this camera)", r.display()),
                    ));
                }
                Some(image)
            }
            None => None,
        };
        let presence = match &reference {
            Some(image) => PresenceDetector::new(&geometry, image, PresenceConfig::default())?,
            None => PresenceDetector::without_reference(&geometry, PresenceConfig::default())?,
        };
        let deck_enrolled = match &t.deck {
            Some(deck) => {
                let enrolled = designs.iter().any(|d| d == deck);
                if !enrolled {
                    eprintln!(
                        "tablecam run: table {}: the classifier {} was not trained on deck {deck:?}; only cards it names surely are confirmed (enrol the deck: docs/pipeline.md)",
                        t.table_id,
                        c.recognizer.classifier.display()
                    );
                }
                enrolled
            }
            None => false,
        };
        if let Some(rec) = &c.recording {
            let recorder = start_recording(v, t, &camera_id, &*source, reference.as_ref(), rec, deck_enrolled)?;
            eprintln!("tablecam run: recording {} into {}", t.table_id, recorder.dir().display());
            source = Box::new(RecordingTap::new(source, recorder));
        }
        let logic = MonitorLogic::factory(&TableSetup {
            table_id: &t.table_id,
            camera_id: &camera_id,
            ruleset: t.ruleset,
            geometry: &geometry,
            deck_enrolled,
        })?;
        let hints = if c.backend.is_some() {
            let (tx, rx) = bounded(64);
            hint_senders.insert(t.table_id.clone(), tx);
            Hints::Live(rx)
        } else {
            Hints::None
        };
        tables.push(TableInput {
            table_id: t.table_id.clone(),
            source,
            geometry,
            presence: Some(presence),
            empty_table: reference,
            logic,
            hints,
        });
    }
    let inbound = match &c.backend {
        Some(b) => {
            let security = match &b.curve {
                Some(curve) => curve_server(curve, "backend.curve", &v.path)?,
                None => Security::Plain,
            };
            let rules = HintRules { tables: c.tables.iter().map(|t| t.table_id.clone()).collect(), max_seat: 8 };
            let inbound = Inbound::bind(&InboundConfig { endpoint: b.endpoint.clone(), rules, security })
                .map_err(|e| PipelineError::Sink(e.to_string()))?;
            let stop = stop.clone();
            Some(
                std::thread::Builder::new()
                    .name("backend".into())
                    .spawn(move || inbound_loop(inbound, hint_senders, stop))
                    .map_err(|e| PipelineError::Thread { name: "backend".into(), message: e.to_string() })?,
            )
        }
        None => None,
    };
    let recognizers = OnnxRecognizers {
        locator: c.recognizer.locator.clone(),
        classifier: c.recognizer.classifier.clone(),
        face_classifier: c.recognizer.face_classifier.clone(),
        glyph_classifier: c.recognizer.glyph_classifier.clone(),
        intra_threads: c.recognizer.intra_threads,
    };
    let options = PipelineOptions {
        workers: c.recognizer.workers,
        queue_capacity: c.queue_capacity,
        health_interval_ms: c.health_interval_ms,
    };
    let sink: Box<dyn EventSink> =
        if json { Box::new(PrintingSink::json(sink, print)) } else { Box::new(PrintingSink::new(sink, print)) };
    let pipeline = Pipeline::start(tables, &recognizers, sink, &options, stop)?;
    Ok((pipeline, inbound))
}

/// Creates `<recording.dir>/<table>/<UTC start>/` and its recorder: the manifest names what a
/// replay needs to reproduce this run (models, health interval, journal), the calibration is
/// copied verbatim and the presence reference as a PNG.
fn start_recording(
    v: &ValidatedConfig,
    t: &TableConfig,
    camera_id: &str,
    source: &dyn FrameSource,
    reference: Option<&opencv::core::Mat>,
    rec: &RecordingConfig,
    deck_enrolled: bool,
) -> Result<Recorder, PipelineError> {
    let c = &v.config;
    let fail = |e: String| PipelineError::stage("recording", format!("table {}: {e}", t.table_id));
    // The wall clock only names the folder: one folder per run, sorted by start time; a second
    // start within the same second gets a suffix rather than refusing to start.
    let base = rec.dir.join(&t.table_id);
    let stamp = crate::wallclock::compact(std::time::SystemTime::now());
    let mut dir = base.join(&stamp);
    let mut n = 2;
    while dir.exists() {
        dir = base.join(format!("{stamp}-{n}"));
        n += 1;
    }
    let calibration_json = std::fs::read_to_string(&t.calibration)
        .map_err(|e| fail(format!("reading {}: {e}", t.calibration.display())))?;
    let info = source.info();
    let manifest = RecordingManifest {
        version: RECORDING_VERSION,
        table_id: t.table_id.clone(),
        camera_id: camera_id.to_string(),
        ruleset: t.ruleset,
        input: info.input.clone(),
        nominal_fps: info.nominal_fps,
        jpeg_quality: 0, // set by the recorder from the options
        models: Some(ModelsUsed {
            locator: c.recognizer.locator.clone(),
            classifier: c.recognizer.classifier.clone(),
            face_classifier: c.recognizer.face_classifier.clone(),
            glyph_classifier: c.recognizer.glyph_classifier.clone(),
        }),
        journal: Some(absolute(&c.journal.dir.join(format!("{}.jsonl", t.table_id)))),
        health_interval_ms: c.health_interval_ms,
        deck_enrolled,
    };
    let recorder =
        Recorder::create(&dir, &manifest, &calibration_json, rec.options()).map_err(|e| fail(e.to_string()))?;
    if let Some(image) = reference {
        recorder.keep_presence_reference(image).map_err(|e| fail(e.to_string()))?;
    }
    Ok(recorder)
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf())
    }
}

/// Runs `tablecam run`: returns the final report (printed on stderr) once drained.
pub fn run_cli(args: &RunArgs) -> Result<PipelineReport, PipelineError> {
    let v = RunConfig::load(&args.config)?;
    install_signal_handlers();
    let stop = Arc::new(AtomicBool::new(false));
    let (pipeline, inbound) = start(&v, Box::new(std::io::stdout()), args.json, stop.clone())?;
    eprintln!(
        "tablecam run: {} table(s), journals in {}{}; Ctrl-C stops after draining",
        v.config.tables.len(),
        v.config.journal.dir.display(),
        v.config.publisher.as_ref().map(|p| format!(", publishing on {}", p.endpoint)).unwrap_or_default()
    );
    // The signal handler can only set a static; pass it on to the pipeline.
    let watcher_stop = stop.clone();
    let done = Arc::new(AtomicBool::new(false));
    let watcher_done = done.clone();
    let watcher = std::thread::spawn(move || {
        while !watcher_done.load(Ordering::Relaxed) {
            if INTERRUPTED.load(Ordering::Relaxed) {
                watcher_stop.store(true, Ordering::Relaxed);
                eprintln!("tablecam run: stopping; draining the pipeline…");
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    });
    let report = pipeline.join();
    done.store(true, Ordering::Relaxed);
    stop.store(true, Ordering::Relaxed);
    let _ = watcher.join();
    if let Some(t) = inbound {
        let _ = t.join();
    }
    for t in &report.tables {
        let line: Vec<String> = t
            .stages
            .iter()
            .map(|s| format!("{} {}/{}/{}/{}", s.stage.as_str(), s.received, s.sent, s.dropped, s.errors))
            .collect();
        eprintln!("tablecam run: table {} (received/sent/dropped/errors): {}", t.table_id, line.join(", "));
        for s in t.stages.iter().filter(|s| s.errors > 0) {
            eprintln!("  {}: last error: {}", s.stage.as_str(), s.last_error.as_deref().unwrap_or("?"));
        }
    }
    if let Some(e) = &report.close_error {
        return Err(PipelineError::Sink(format!("closing the journals: {e}")));
    }
    if !report.panicked.is_empty() {
        return Err(PipelineError::Thread { name: report.panicked.join(", "), message: "panicked".into() });
    }
    let sink_errors: u64 = report.tables.iter().filter_map(|t| t.stage(StageName::Sink)).map(|s| s.errors).sum();
    if sink_errors > 0 {
        return Err(PipelineError::Sink(format!("{sink_errors} event(s) could not be journaled or published")));
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::eval5::Category5;

    /// The backend's amounts reach the verifier: a San Gong banker's capital with the dice, a
    /// jackpot's fixed sums by category (the names checked when the message was parsed).
    #[test]
    fn backend_amounts_reach_the_tracker_s_hints() {
        let parse = |json: &str| {
            let rules = crate::publish::HintRules { tables: ["t1".to_string()].into(), max_seat: 8 };
            crate::publish::parse_hint(json.as_bytes(), &rules).unwrap()
        };
        let dice = parse(r#"{"type":"sangong_dice","table":"t1","total":9,"banker":5,"capital":2500}"#);
        assert_eq!(tracker_hint(&dice), Ok(TrackerHint::Dice { banker: 5, total: 9, capital: Some(2500) }));
        let jackpot = parse(r#"{"type":"jackpot","table":"t1","pool":90000,"fixed":{"flush":500,"quads":2000}}"#);
        let fixed = [(Category5::Flush, 500), (Category5::Quads, 2000)].into_iter().collect();
        assert_eq!(tracker_hint(&jackpot), Ok(TrackerHint::Jackpot { pool: 90000, fixed }));
        let no_banker = parse(r#"{"type":"sangong_dice","table":"t1","total":9}"#);
        assert!(tracker_hint(&no_banker).unwrap_err().contains("banker"));
    }
}
