//! `tablecam eval-scenarios` end to end on one short session: simulated video → the whole
//! pipeline (with the tiny fixture models, so this checks plumbing and scoring, not accuracy) →
//! one JSON object whose counts are consistent.
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `tablecam eval-scenarios --rounds 0 --json --workers 2 ARGS MODELS --out OUT` from the
/// repository root, which must succeed: its stdout and stderr.
fn eval_scenarios(args: &[&str], models: &[&str], out: &Path) -> (String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_tablecam"))
        .current_dir(root())
        .args(["eval-scenarios", "--rounds", "0", "--json", "--workers", "2"])
        .args(args)
        .args(models)
        .arg("--out")
        .arg(out)
        .output()
        .expect("run tablecam");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(output.status.success(), "eval-scenarios failed: {stderr}");
    (String::from_utf8(output.stdout).expect("utf-8"), stderr)
}

#[test]
fn a_one_round_evaluation_prints_one_consistent_json_object() {
    let out = std::env::temp_dir().join(format!("tablecam-scenarios-test-{}", std::process::id()));
    let (stdout, stderr) = eval_scenarios(
        &["--ruleset", "qpoker-2004", "--seed", "5", "--scenario", "player_card_exposed", "--size", "720p"],
        &["--locator", "models/fixtures/locator_tiny.onnx", "--classifier", "models/fixtures/classifier_tiny.onnx"],
        &out,
    );
    assert_eq!(stdout.lines().count(), 1, "exactly one JSON line on stdout: {stdout}");
    let v: serde_json::Value = serde_json::from_str(&stdout).expect("one JSON object");
    let n = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} missing or not a count: {v}"));
    assert_eq!(n("rounds"), 1);
    assert_eq!(n("flags_expected"), 1, "the scenario requires one flag");
    assert!(n("flags_found") <= n("flags_expected"));
    assert!(n("flags_exact") <= n("flags_found"));
    let _ = n("false_flags");
    assert_eq!(n("outcomes_total"), 1);
    assert_eq!(
        n("outcomes_correct") + n("outcomes_wrong") + n("unverified") + n("outcomes_missing"),
        n("outcomes_total")
    );
    assert!(v["flag_latency"]["count"].as_u64().is_some());
    assert_eq!(v["by_ruleset"]["qpoker-2004"]["rounds"], 1);
    assert_eq!(v["by_scenario"]["player_card_exposed"]["flags_expected"], 1);
    assert!(n("frames") > 100, "the session's frames went through the pipeline");
    // what it got wrong, listed: as many findings of each kind as the tally counts
    let findings = v["findings"][0][1].as_array().unwrap_or_else(|| panic!("findings missing: {v}"));
    let count = |kind: &str| findings.iter().filter(|f| f["finding"] == kind).count() as u64;
    assert_eq!(count("false_flag"), n("false_flags"), "{v}");
    assert_eq!(count("missed_flag"), n("flags_expected") - n("flags_found"), "{v}");
    assert_eq!(count("wrong_outcome"), n("outcomes_wrong"), "{v}");
    assert_eq!(count("unverified"), n("unverified"), "{v}");
    assert_eq!(count("missing_outcome"), n("outcomes_missing"), "{v}");
    // Progress went to stderr, and what the pipeline said is kept next to the session.
    assert!(stderr.contains("[1/1]"), "{stderr}");
    let session = std::fs::read_dir(&out).expect("out").flatten().next().expect("a session folder").path();
    let events = std::fs::read_to_string(session.join("events.jsonl")).expect("events.jsonl");
    for line in events.lines() {
        tablecam::events::Event::from_json(line).expect("every kept event parses");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// Q Poker seed 7's `duplicate_card` with the committed models, at 1080p: the seat's 3♣ lies
/// under its 2♥ in a shuffler packet spread, and its covered index corner shows the 2♥'s index.
/// Until the reading of a covered corner was set aside (`recognize::cover`), the two corners
/// contradicted each other in every frame, the 3♣ was never named, and the duplicate of the
/// dealer's 3♣ went unflagged.
#[test]
fn a_card_whose_covered_corner_shows_the_card_over_it_is_still_read() {
    let out = std::env::temp_dir().join(format!("tablecam-scenarios-cover-{}", std::process::id()));
    let (stdout, _) = eval_scenarios(
        &["--ruleset", "qpoker-2004", "--seed", "7", "--scenario", "duplicate_card", "--size", "1080p"],
        &[],
        &out,
    );
    let v: serde_json::Value = serde_json::from_str(stdout.trim()).expect("one JSON object");
    assert_eq!(v["flags_expected"], 1, "{v}");
    assert_eq!(v["flags_found"], 1, "the duplicate 3♣ is flagged: {v}");
    assert_eq!(v["false_flags"], 0, "{v}");
    assert_eq!(v["outcomes_wrong"], 0, "{v}");
    let _ = std::fs::remove_dir_all(&out);
}
