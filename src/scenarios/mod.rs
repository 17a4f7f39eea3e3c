//! `tablecam eval-scenarios`: the simulator's irregular scenarios and clean rounds through the
//! whole pipeline, scored against their ground truth.
//!
//! For every ruleset asked for: one session of N clean rounds and one single-round session per
//! scenario that applies to the ruleset (`Scenario::applies_to`), each with its own seed derived
//! from `--seed`. Each session is rendered to video (`sim::session::simulate`), then run through
//! the pipeline *from its video frames* — file source, recognizer pool, bet presence against an
//! empty-table frame of that camera (what a real table captures before opening), tracker,
//! verifier — into an in-memory sink. Only then is `rounds.json` read, to score:
//!
//! * **flags**: a flag in force (not superseded) in a round is *found* when the truth expects
//!   that irregularity for that seat; it is *exact* when consequence and citation match too;
//!   every other flag in force is a *false flag*. Latency runs from the truth's
//!   `visible_from_frame` to the frame of the first event raising it;
//! * **outcomes**: each truth round's last `round.outcome`: `unverified` counts as such (never
//!   wrong); a verified one is *correct* when its status and every bet's net multiple match the
//!   truth's settlement, else *wrong*; a round without outcome is *missing*.
//!
//! Rounds are matched by frame: the events of one `round_id` belong to the truth round whose
//! frames hold the first of them.
pub mod backend;
pub mod score;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::calib::Calibration;
use crate::events::Event;
use crate::pipeline::{
    Collector, Hints, LogicFactory, OnnxRecognizers, Pipeline, PipelineError, PipelineOptions, RecognizerFactory,
    TableInput, TableSetup,
};
use crate::presence::{PresenceConfig, PresenceDetector};
use crate::rules::{Ruleset, RulesetId};
use crate::sim::script::{Scenario, FPS};
use crate::sim::session::{simulate, SessionSpec, SIM_VERSION};
use crate::source::VideoFileSource;
use score::mark_seen;
pub use score::{score_session, Finding, FlagDelay, FlagLatency, Tally, TruthRound};

/// Arguments of `tablecam eval-scenarios`.
#[derive(Debug, Clone, clap::Args)]
pub struct EvalScenariosArgs {
    /// Only this ruleset (default: every ruleset).
    #[arg(long)]
    pub ruleset: Option<RulesetId>,
    /// Seed of the simulated sessions (any seed works).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Clean rounds per ruleset.
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Only these scenarios (repeat the option; `clean` for the clean rounds). Default: all.
    #[arg(long = "scenario")]
    pub scenarios: Vec<String>,
    /// Print exactly one JSON object on stdout (progress stays on stderr).
    #[arg(long)]
    pub json: bool,
    /// Frame size: 720p or 1080p.
    #[arg(long, default_value = "720p")]
    pub size: String,
    /// Keep the rendered sessions and each session's events here (default: a temporary
    /// folder, removed afterwards). Sessions already there with the same parameters are reused.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// The card locator model.
    #[arg(long, default_value = "models/locator.onnx")]
    pub locator: PathBuf,
    /// The index-corner classifier model.
    #[arg(long, default_value = "models/classifier.onnx")]
    pub classifier: PathBuf,
    /// The whole-card classifier, read with the index corners (`RecognizerOptions::face_classifier`).
    #[arg(long, default_value = crate::classify::DEFAULT_FACE_PATH)]
    pub face_classifier: PathBuf,
    /// Read the index corners alone (no whole-card classifier).
    #[arg(long)]
    pub no_face_classifier: bool,
    /// The glyph classifier, reading the indexes found in the corners of the cards the other two
    /// leave unnamed (`RecognizerOptions::glyph_classifier`).
    #[arg(long, default_value = crate::classify::DEFAULT_GLYPH_PATH)]
    pub glyph_classifier: PathBuf,
    /// Read no index glyphs on the table's cards (no glyph classifier).
    #[arg(long)]
    pub no_glyph_classifier: bool,
    /// Recognizer worker threads.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    /// Treat every session's deck as one the classifier never saw, even when its design is in
    /// the classifier's `tablecam.designs` (by default such a deck is enrolled: its unsure
    /// readings may confirm cards, docs/pipeline.md).
    #[arg(long)]
    pub unseen_decks: bool,
    /// Send the pipeline what a table backend would, as `tablecam run` receives it: each
    /// round's dealing mode and San Gong's dice as the round opens, each player's fold or play as
    /// the dealer registers it (never cards, bets or faults). Without it: vision alone.
    #[arg(long)]
    pub backend: bool,
}

/// One simulated session to evaluate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Case {
    /// The ruleset.
    pub ruleset: RulesetId,
    /// The scenario every round of the session plays.
    pub scenario: Scenario,
    /// Rounds.
    pub rounds: u32,
    /// The session's seed (derived from `--seed`, the ruleset and the scenario).
    pub seed: u64,
}

impl Case {
    /// The session's folder name.
    pub fn name(&self) -> String {
        format!("{}-{}-s{}", self.ruleset, self.scenario.name(), self.seed)
    }
}

/// The sessions `eval-scenarios` runs: per ruleset, N clean rounds and one round per scenario
/// that applies; `only` (scenario names) narrows them.
pub fn plan_cases(rulesets: &[RulesetId], seed: u64, rounds: u32, only: &[Scenario]) -> Vec<Case> {
    let mut cases = Vec::new();
    for &rs in rulesets {
        let ruleset = Ruleset::new(rs);
        for sc in Scenario::ALL {
            if !sc.applies_to(&ruleset) || (!only.is_empty() && !only.contains(&sc)) {
                continue;
            }
            let n = if sc == Scenario::Clean { rounds } else { 1 };
            if n == 0 {
                continue;
            }
            cases.push(Case { ruleset: rs, scenario: sc, rounds: n, seed: case_seed(seed, rs, sc) });
        }
    }
    cases
}

/// A seed per (seed, ruleset, scenario): FNV-1a of the three, so that sessions differ.
fn case_seed(seed: u64, rs: RulesetId, sc: Scenario) -> u64 {
    let text = format!("{seed}/{rs}/{}", sc.name());
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    // Keep it readable in folder names.
    h % 1_000_000_007
}

/// What the evaluation found, as printed with `--json`.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Every count over all sessions (flattened into the top level).
    #[serde(flatten)]
    pub total: Tally,
    /// From the frame that shows an irregularity (the first frame of the action showing it: a
    /// card dealt face up is still in flight) to its flag event.
    pub flag_latency: FlagLatency,
    /// From the last frame of that action (the card has landed, a removed card has left) to the
    /// flag event: what the tracker and verifier add.
    pub flag_latency_after_action: FlagLatency,
    /// From the first frame after that action showing its card at least half in view (a card
    /// turned while the dealer's hand turns its neighbours is under that hand until it moves
    /// away; [`score::TruthFlag::seen_by_frame`]), or the action's last frame where it moved no card
    /// left on the table: what the tracker and verifier add once the camera can see it.
    pub flag_latency_after_seen: FlagLatency,
    /// All three, per irregularity: `{"from_visible": …, "after_action": …, "after_seen": …}`.
    pub flag_latency_by_irregularity: BTreeMap<String, BTreeMap<String, FlagLatency>>,
    /// Per ruleset.
    pub by_ruleset: BTreeMap<String, Tally>,
    /// Per scenario (`clean` included).
    pub by_scenario: BTreeMap<String, Tally>,
    /// Per deck: `enrolled` (the classifier was trained on the session's design) and `unseen`.
    pub by_deck: BTreeMap<String, Tally>,
    /// The seed given.
    pub seed: u64,
    /// Frame size.
    pub size: String,
    /// Whether the backend's messages were sent (`--backend`), or vision alone.
    pub backend: bool,
    /// Frames run through the pipeline.
    pub frames: u64,
    /// Pipeline throughput over all sessions, frames per second of wall time.
    pub frames_per_s: f64,
    /// The models used: locator, classifier and, when read, the whole-card classifier.
    pub models: Vec<String>,
    /// Per session: its name and tally.
    pub sessions: Vec<(String, Tally)>,
    /// Per session: its name and what it got wrong (false and missed flags, wrong, unverified
    /// and missing outcomes), round by round, to trace (docs/pipeline.md).
    pub findings: Vec<(String, Vec<Finding>)>,
}

fn size_of(size: &str) -> Result<(u32, u32), PipelineError> {
    match size {
        "720p" => Ok((1280, 720)),
        "1080p" => Ok((1920, 1080)),
        other => Err(PipelineError::Invalid(format!("unknown size {other:?}: use 720p or 1080p"))),
    }
}

/// Renders a case's session into `dir`, unless a session with the same parameters is there.
pub fn render(case: &Case, size: (u32, u32), dir: &Path) -> Result<(), PipelineError> {
    let summary = dir.join("session.json");
    if let Ok(text) = std::fs::read_to_string(&summary) {
        let v: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
        let same = v["sim_version"] == SIM_VERSION
            && v["seed"] == case.seed
            && v["rounds"] == case.rounds
            && v["width"] == size.0
            && v["height"] == size.1
            && v["ruleset"] == case.ruleset.as_str();
        if same && dir.join("rounds.json").exists() && dir.join("video.avi").exists() {
            return Ok(());
        }
    }
    let spec = SessionSpec {
        ruleset: case.ruleset,
        rounds: case.rounds,
        seed: case.seed,
        scenario: Some(case.scenario),
        width: size.0,
        height: size.1,
        design: None,
        conditions: None,
        out: dir.to_path_buf(),
    };
    simulate(&spec, |_, _| {})?;
    Ok(())
}

/// The deck designs the classifier at `path` was trained on; none when the file does not exist
/// (a test's recognizer double needs no model; a real run fails on the missing file anyway).
fn trained_designs(path: &Path) -> Result<Vec<String>, PipelineError> {
    if !path.exists() {
        return Ok(Vec::new());
    }
    crate::classify::trained_designs(path).map_err(|e| PipelineError::stage("classifier", e))
}

/// The deck design a rendered session was dealt with (`session.json`).
fn session_design(dir: &Path) -> Result<Option<String>, PipelineError> {
    let path = dir.join("session.json");
    let text =
        std::fs::read_to_string(&path).map_err(|e| PipelineError::Invalid(format!("{}: {e}", path.display())))?;
    let v: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| PipelineError::Invalid(format!("{}: {e}", path.display())))?;
    Ok(v["design"].as_str().map(String::from))
}

/// Runs a rendered session's video through the pipeline and returns its events, in order.
pub fn run_session(
    dir: &Path,
    ruleset: RulesetId,
    recognizers: &dyn RecognizerFactory,
    logic: &LogicFactory,
    workers: usize,
    deck_enrolled: bool,
    hints: Hints,
) -> Result<(Vec<Event>, u64), PipelineError> {
    let geometry = Arc::new(Calibration::load(&dir.join("calibration.json"))?);
    let table_id = "eval";
    let camera_id = geometry.calibration.camera_id.clone();
    let video = dir.join("video.avi");
    let source = VideoFileSource::open_file(&video, &camera_id)
        .map_err(|source| PipelineError::Source { table_id: table_id.into(), source })?;
    // The empty table as this camera sees it before opening: not the rounds' truth.
    let reference = crate::presence::eval::simulated_empty_reference(dir, &geometry)
        .map_err(|e| PipelineError::stage("presence reference", e))?;
    let presence = PresenceDetector::new(&geometry, &reference, PresenceConfig::default())?;
    let logic = logic(&TableSetup { table_id, camera_id: &camera_id, ruleset, geometry: &geometry, deck_enrolled })?;
    let collector = Collector::new();
    let options = PipelineOptions { workers, queue_capacity: 8, health_interval_ms: 0 };
    let table = TableInput {
        table_id: table_id.into(),
        source: Box::new(source),
        geometry,
        presence: Some(presence),
        empty_table: Some(reference),
        logic,
        hints,
    };
    let pipeline = Pipeline::start(
        vec![table],
        recognizers,
        Box::new(collector.clone()),
        &options,
        Arc::new(AtomicBool::new(false)),
    )?;
    let report = pipeline.join();
    if !report.panicked.is_empty() {
        return Err(PipelineError::Thread { name: report.panicked.join(", "), message: "panicked".into() });
    }
    let frames = report.tables[0].stage(crate::pipeline::StageName::Track).map_or(0, |s| s.received);
    let mut events = Vec::new();
    for e in collector.table(table_id) {
        if e.volatile {
            continue;
        }
        events.push(Event::from_json(&e.json).map_err(|err| PipelineError::stage("events", err))?);
    }
    // Keep what the pipeline said next to the session, for whoever looks into a miss.
    let lines: String = collector.deterministic_stream(table_id);
    std::fs::write(dir.join("events.jsonl"), lines)
        .map_err(|source| PipelineError::Io { path: dir.join("events.jsonl"), source })?;
    Ok((events, frames))
}

/// Reads a session's `rounds.json`, each flag's [`score::TruthFlag::seen_by_frame`] filled from its
/// `frames.jsonl` where that is there.
pub fn read_truth(dir: &Path) -> Result<Vec<TruthRound>, PipelineError> {
    let path = dir.join("rounds.json");
    let text = std::fs::read_to_string(&path).map_err(|source| PipelineError::Io { path: path.clone(), source })?;
    let mut truth: Vec<TruthRound> = serde_json::from_str(&text)
        .map_err(|e| PipelineError::stage("rounds.json", format!("{}: {e}", path.display())))?;
    // Sessions rendered before frames.jsonl existed have none: latency then counts from the
    // action. One that is there but damaged is an error, as for the backend's hints.
    let path = dir.join("frames.jsonl");
    if path.exists() {
        #[derive(Deserialize)]
        struct Seen {
            id: u32,
            visibility: f64,
        }
        #[derive(Deserialize)]
        struct Frame {
            frame: u64,
            cards: Vec<Seen>,
        }
        let text = std::fs::read_to_string(&path).map_err(|source| PipelineError::Io { path: path.clone(), source })?;
        let mut frames = Vec::new();
        for (n, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let f: Frame =
                serde_json::from_str(line).map_err(|e| backend::invalid(&path, format!("line {}: {e}", n + 1)))?;
            frames.push((f.frame, f.cards.into_iter().map(|c| (c.id, c.visibility)).collect()));
        }
        mark_seen(&mut truth, frames);
    }
    Ok(truth)
}

/// Runs the evaluation with the given recognizers and table logic; progress on stderr.
pub fn evaluate(
    args: &EvalScenariosArgs,
    recognizers: &dyn RecognizerFactory,
    logic: &LogicFactory,
) -> Result<Summary, PipelineError> {
    let size = size_of(&args.size)?;
    let only: Vec<Scenario> = args
        .scenarios
        .iter()
        .map(|s| {
            Scenario::parse(s).ok_or_else(|| {
                let names: Vec<String> = Scenario::ALL.iter().map(|s| s.name()).collect();
                PipelineError::Invalid(format!("unknown scenario {s:?}; known: {}", names.join(", ")))
            })
        })
        .collect::<Result<_, _>>()?;
    let rulesets: Vec<RulesetId> = match args.ruleset {
        Some(r) => vec![r],
        None => RulesetId::ALL.to_vec(),
    };
    let cases = plan_cases(&rulesets, args.seed, args.rounds, &only);
    if cases.is_empty() {
        return Err(PipelineError::Invalid("no session to run: no scenario applies to the rulesets asked for".into()));
    }
    let (root, temporary) = match &args.out {
        Some(d) => (d.clone(), false),
        None => (std::env::temp_dir().join(format!("tablecam-eval-scenarios-{}", std::process::id())), true),
    };
    let mut summary = Summary {
        total: Tally::default(),
        flag_latency: FlagLatency::default(),
        flag_latency_after_action: FlagLatency::default(),
        flag_latency_after_seen: FlagLatency::default(),
        flag_latency_by_irregularity: BTreeMap::new(),
        by_ruleset: BTreeMap::new(),
        by_scenario: BTreeMap::new(),
        by_deck: BTreeMap::new(),
        seed: args.seed,
        size: args.size.clone(),
        backend: args.backend,
        frames: 0,
        frames_per_s: 0.0,
        models: [
            Some(&args.locator),
            Some(&args.classifier),
            (!args.no_face_classifier).then_some(&args.face_classifier),
            (!args.no_glyph_classifier).then_some(&args.glyph_classifier),
        ]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect(),
        sessions: Vec::new(),
        findings: Vec::new(),
    };
    let mut latencies = Vec::new();
    let mut pipeline_s = 0.0;
    let designs = if args.unseen_decks { Vec::new() } else { trained_designs(&args.classifier)? };
    let result = (|| {
        for (i, case) in cases.iter().enumerate() {
            let dir = root.join(case.name());
            eprintln!("[{}/{}] {}: rendering {} round(s)…", i + 1, cases.len(), case.name(), case.rounds);
            render(case, size, &dir)?;
            let t0 = std::time::Instant::now();
            let enrolled = session_design(&dir)?.is_some_and(|d| designs.contains(&d));
            let hints = if args.backend { Hints::Replayed(backend::backend_hints(&dir)?) } else { Hints::None };
            let (events, frames) =
                run_session(&dir, case.ruleset, recognizers, logic, args.workers.max(1), enrolled, hints)?;
            let secs = t0.elapsed().as_secs_f64();
            pipeline_s += secs;
            summary.frames += frames;
            let truth = read_truth(&dir)?;
            let (tally, lat, findings) = score_session(&truth, &events);
            eprintln!(
                "[{}/{}] {}: {frames} frames in {secs:.1} s; flags {}/{} found, {} false; outcomes {} correct, {} wrong, {} unverified, {} missing",
                i + 1,
                cases.len(),
                case.name(),
                tally.flags_found,
                tally.flags_expected,
                tally.false_flags,
                tally.outcomes_correct,
                tally.outcomes_wrong,
                tally.unverified,
                tally.outcomes_missing
            );
            // what to trace: unverified rounds are many (recognition), so only the rest is listed
            for f in findings.iter().filter(|f| !matches!(f, Finding::Unverified { .. })) {
                eprintln!("    {f}");
            }
            summary.total.add(&tally);
            summary.by_ruleset.entry(case.ruleset.to_string()).or_default().add(&tally);
            summary.by_scenario.entry(case.scenario.name()).or_default().add(&tally);
            summary.by_deck.entry(if enrolled { "enrolled" } else { "unseen" }.into()).or_default().add(&tally);
            summary.sessions.push((case.name(), tally));
            summary.findings.push((case.name(), findings));
            latencies.extend(lat);
        }
        Ok::<(), PipelineError>(())
    })();
    if temporary {
        let _ = std::fs::remove_dir_all(&root);
    }
    result?;
    let fps = f64::from(FPS);
    let of = |delays: &[&FlagDelay]| {
        let visible: Vec<i64> = delays.iter().map(|d| d.from_visible).collect();
        let shown: Vec<i64> = delays.iter().map(|d| d.from_shown).collect();
        let seen: Vec<i64> = delays.iter().map(|d| d.from_seen).collect();
        (FlagLatency::of(&visible, fps), FlagLatency::of(&shown, fps), FlagLatency::of(&seen, fps))
    };
    (summary.flag_latency, summary.flag_latency_after_action, summary.flag_latency_after_seen) =
        of(&latencies.iter().collect::<Vec<_>>());
    let mut kinds: BTreeMap<String, Vec<&FlagDelay>> = BTreeMap::new();
    for d in &latencies {
        kinds.entry(d.kind.as_str().to_string()).or_default().push(d);
    }
    for (kind, delays) in kinds {
        let (visible, shown, seen) = of(&delays);
        summary.flag_latency_by_irregularity.insert(
            kind,
            BTreeMap::from([
                ("from_visible".to_string(), visible),
                ("after_action".to_string(), shown),
                ("after_seen".to_string(), seen),
            ]),
        );
    }
    summary.frames_per_s =
        if pipeline_s > 0.0 { (summary.frames as f64 / pipeline_s * 10.0).round() / 10.0 } else { 0.0 };
    Ok(summary)
}

/// `tablecam eval-scenarios` with the ONNX models and the given table logic: prints the
/// summary (one JSON object with `--json`).
pub fn run_cli(args: &EvalScenariosArgs, logic: &LogicFactory) -> Result<Summary, PipelineError> {
    let recognizers = OnnxRecognizers {
        locator: args.locator.clone(),
        classifier: args.classifier.clone(),
        face_classifier: (!args.no_face_classifier).then(|| args.face_classifier.clone()),
        glyph_classifier: (!args.no_glyph_classifier).then(|| args.glyph_classifier.clone()),
        intra_threads: 1,
    };
    let summary = evaluate(args, &recognizers, logic)?;
    if args.json {
        println!("{}", serde_json::to_string(&summary).map_err(|e| PipelineError::stage("json", e))?);
    } else {
        print!("{}", summary.text());
    }
    Ok(summary)
}

impl Summary {
    /// The readable summary.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let t = &self.total;
        s += &format!(
            "eval-scenarios: {} rounds ({} frames at {}, seed {}, {:.1} frames/s through the pipeline, {})\n",
            t.rounds,
            self.frames,
            self.size,
            self.seed,
            self.frames_per_s,
            if self.backend { "with the backend's messages" } else { "vision alone" }
        );
        s += &format!(
            "  flags:    {}/{} found ({} with the right consequence and citation), {} false\n",
            t.flags_found, t.flags_expected, t.flags_exact, t.false_flags
        );
        s += &format!(
            "  outcomes: {}/{} correct, {} wrong, {} unverified, {} missing; {} cards known by their rank only ({} of a rank the hand does not hold)\n",
            t.outcomes_correct,
            t.outcomes_total,
            t.outcomes_wrong,
            t.unverified,
            t.outcomes_missing,
            t.cards_by_rank,
            t.cards_by_rank_wrong
        );
        let l = &self.flag_latency;
        if l.count > 0 {
            let (a, n) = (&self.flag_latency_after_action, &self.flag_latency_after_seen);
            s += &format!(
                "  flag latency: median {:.0} ms, max {:.0} ms over {} flags ({} within 250 ms); after the action showing it: median {:.0} ms, max {:.0} ms ({} within 250 ms); after its card is in view: median {:.0} ms, max {:.0} ms ({} within 250 ms)\n",
                l.p50_ms.unwrap_or(0.0),
                l.max_ms.unwrap_or(0.0),
                l.count,
                l.within_250ms,
                a.p50_ms.unwrap_or(0.0),
                a.max_ms.unwrap_or(0.0),
                a.within_250ms,
                n.p50_ms.unwrap_or(0.0),
                n.max_ms.unwrap_or(0.0),
                n.within_250ms
            );
            for (kind, all) in &self.flag_latency_by_irregularity {
                let (v, a, n) = (&all["from_visible"], &all["after_action"], &all["after_seen"]);
                s += &format!(
                    "    {kind:<30} {:>2} flags  median {:>5.0} ms ({:>5.0} ms after the action, {:>5.0} ms after its card is in view)\n",
                    v.count,
                    v.p50_ms.unwrap_or(0.0),
                    a.p50_ms.unwrap_or(0.0),
                    n.p50_ms.unwrap_or(0.0)
                );
            }
        }
        for (title, tallies) in
            [("by scenario", &self.by_scenario), ("by ruleset", &self.by_ruleset), ("by deck", &self.by_deck)]
        {
            s += &format!("  {title}:\n");
            for (name, t) in tallies {
                s += &format!(
                    "    {name:<26} rounds {:>3}  flags {:>3}/{:<3} false {:>3}  outcomes {:>3} ok {:>3} wrong {:>3} unverified\n",
                    t.rounds, t.flags_found, t.flags_expected, t.false_flags, t.outcomes_correct, t.outcomes_wrong, t.unverified
                );
            }
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A damaged `frames.jsonl` is an error naming the file and the line, not a latency quietly
    /// counted another way; a session without one (rendered before it existed) still reads.
    #[test]
    fn a_damaged_frames_file_is_an_error_naming_it_and_its_line() {
        let dir = std::env::temp_dir().join(format!("tablecam-read-truth-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("rounds.json"), "[]").unwrap();
        let _ = std::fs::remove_file(dir.join("frames.jsonl"));
        assert!(read_truth(&dir).is_ok(), "no frames.jsonl");
        let good = r#"{"frame": 0, "round": 0, "action": 0, "cards": [{"id": 1, "visibility": 1.0}]}"#;
        std::fs::write(dir.join("frames.jsonl"), format!("{good}\n\n{good}\n")).unwrap();
        assert!(read_truth(&dir).is_ok(), "a well-formed frames.jsonl");
        std::fs::write(dir.join("frames.jsonl"), format!("{good}\n{{\"frame\": 1, \"cards\": [{{\"id\"\n")).unwrap();
        let err = read_truth(&dir).expect_err("a cut-off line").to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(err.contains("frames.jsonl") && err.contains("line 2"), "{err}");
    }

    #[test]
    fn cases_cover_every_applicable_scenario_once_and_clean_rounds() {
        let cases = plan_cases(&[RulesetId::Fortune3cp2025], 7, 4, &[]);
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let applicable = Scenario::ALL.iter().filter(|s| s.applies_to(&rs)).count();
        assert_eq!(cases.len(), applicable);
        assert_eq!(cases[0].scenario, Scenario::Clean);
        assert_eq!(cases[0].rounds, 4);
        assert!(cases[1..].iter().all(|c| c.rounds == 1));
        let mut seeds: Vec<u64> = cases.iter().map(|c| c.seed).collect();
        seeds.dedup();
        assert_eq!(seeds.len(), cases.len(), "every session its own seed");
        assert_eq!(plan_cases(&[RulesetId::Fortune3cp2025], 7, 4, &[]), cases, "deterministic");
        let only = plan_cases(&[RulesetId::Fortune3cp2025], 7, 0, &[Scenario::Clean, Scenario::CardSwapped]);
        assert_eq!(only.iter().map(|c| c.scenario).collect::<Vec<_>>(), vec![Scenario::CardSwapped]);
    }
}
