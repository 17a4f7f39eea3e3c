//! `tablecam eval-scenarios` end to end on one short session: simulated video → the whole
//! pipeline (with the tiny fixture models, so this checks plumbing and scoring, not accuracy) →
//! one JSON object whose counts are consistent.
use std::path::PathBuf;
use std::process::Command;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn a_one_round_evaluation_prints_one_consistent_json_object() {
    let out = std::env::temp_dir().join(format!("tablecam-scenarios-test-{}", std::process::id()));
    let output = Command::new(env!("CARGO_BIN_EXE_tablecam"))
        .current_dir(root())
        .args(["eval-scenarios", "--ruleset", "qpoker-2004", "--seed", "5", "--rounds", "0"])
        .args(["--scenario", "player_card_exposed", "--size", "720p", "--json", "--workers", "2"])
        .args([
            "--locator",
            "models/fixtures/locator_tiny.onnx",
            "--classifier",
            "models/fixtures/classifier_tiny.onnx",
        ])
        .arg("--out")
        .arg(&out)
        .output()
        .expect("run tablecam");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "eval-scenarios failed: {stderr}");
    let stdout = String::from_utf8(output.stdout).expect("utf-8");
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
