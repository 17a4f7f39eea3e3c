//! Replay byte-identity: a live run over a short simulator session records its frames and
//! journals its events; replaying the recording gives the same events byte for byte (every event
//! but the volatile `health` ones), and so does a second replay through the `tablecam replay` CLI.
//!
//! One 1-round 720p simulator session, rendered once per test run (about 10 s), with the tiny
//! fixture models: accuracy does not matter for identity, and they keep the test short.
use std::path::{Path, PathBuf};
use std::process::Command;

use tablecam::pipeline::Collector;
use tablecam::record::recording::{ModelsUsed, RecordingReader};
use tablecam::record::verify_file;
use tablecam::replay::{self, ReplayOptions, Session};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_tablecam")
}

fn fixture_models() -> ModelsUsed {
    ModelsUsed {
        locator: root().join("models/fixtures/locator_tiny.onnx"),
        classifier: root().join("models/fixtures/classifier_tiny.onnx"),
    }
}

/// A fresh 1-round 720p simulator session in `dir`.
fn simulate(dir: &Path) {
    let status = Command::new(bin())
        .args(["simulate", "--ruleset", "fortune3cp-2025", "--rounds", "1", "--seed", "7", "--size", "720p"])
        .args(["--scenario", "player_card_exposed", "--out"])
        .arg(dir)
        .status()
        .expect("run tablecam simulate");
    assert!(status.success(), "tablecam simulate failed");
}

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn replay_of_a_recording_is_byte_identical_to_the_live_run_and_to_another_replay() {
    let base = fresh("replay-identity");
    let sim = base.join("sim");
    simulate(&sim);

    // The live run: the simulator's video through the pipeline, recorded and journaled.
    let rec = base.join("recording");
    let live = Collector::new();
    let mut options = ReplayOptions::new(fixture_models());
    options.record_to = Some(rec.clone());
    let session = Session::open(&sim).expect("simulator session");
    let table = session.table_id.clone();
    let report = replay::run(&session, &options, Box::new(live.clone())).expect("live run");
    assert!(report.panicked.is_empty(), "{:?}", report.panicked);
    let live_stream = live.deterministic_stream(&table);
    let frames = RecordingReader::open(&rec).expect("recording").frame_count();
    assert!(frames >= 300, "a whole round is hundreds of frames, recorded {frames}");
    assert!(live_stream.lines().count() > 0, "the live run emitted no event");

    // The journal holds exactly what the live run emitted, and verifies.
    let journal = rec.join("journal").join(format!("{table}.jsonl"));
    let check = verify_file(&journal, None).expect("journal readable");
    assert!(check.problem.is_none(), "{:?}", check.problem);
    assert_eq!(check.entries as usize, live.table(&table).len());

    // Replay of the recording, in-process.
    let replayed = Collector::new();
    let session = Session::open(&rec).expect("recording session");
    assert_eq!(session.models.as_ref(), Some(&fixture_models()), "the recording names its models");
    let options = ReplayOptions::new(session.models(None, None));
    replay::run(&session, &options, Box::new(replayed.clone())).expect("replay");
    let replay_stream = replayed.deterministic_stream(&table);
    if live_stream != replay_stream {
        let first = live_stream.lines().zip(replay_stream.lines()).position(|(a, b)| a != b);
        panic!(
            "replay differs from the live run: {} vs {} lines, first difference at line {:?}",
            live_stream.lines().count(),
            replay_stream.lines().count(),
            first
        );
    }

    // And a second replay through the CLI, paced by a (fast) speed factor, with --out.
    let out = base.join("out");
    let output = Command::new(bin())
        .arg("replay")
        .arg(&rec)
        .args(["--speed", "50", "--deterministic", "--out"])
        .arg(&out)
        .output()
        .expect("run tablecam replay");
    assert!(output.status.success(), "tablecam replay: {}", String::from_utf8_lossy(&output.stderr));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("{frames}/{frames} frames")), "progress bar: {stderr}");
    let cli_stream = std::fs::read_to_string(out.join(format!("{table}.jsonl"))).expect("events file");
    assert!(cli_stream == replay_stream, "the CLI replay differs from the in-process replay");
}

#[test]
fn speed_parses_and_rejects_nonsense() {
    use tablecam::replay::Speed;
    assert_eq!("max".parse::<Speed>().unwrap(), Speed::Max);
    assert_eq!("realtime".parse::<Speed>().unwrap(), Speed::Factor(1.0));
    assert_eq!("2.5".parse::<Speed>().unwrap(), Speed::Factor(2.5));
    for bad in ["0", "-1", "fast", "inf", "NaN"] {
        assert!(bad.parse::<Speed>().is_err(), "{bad}");
    }
}
