//! Dispute evidence packs: rendered for a round of a short recorded session and checked in
//! headless Chromium (timeline rows, key frames that load, flags with their article, the
//! verification status, the journal's hash chain); and the errors a user meets (unknown round,
//! missing journal, corrupt journal, missing recording).
//!
//! Chromium is Debian's `chromium` package (scripts/setup.sh installs it). Without it this test
//! fails and says so, unless TABLECAM_SKIP_BROWSER=1 is set (then only the browser check is skipped).
use std::path::{Path, PathBuf};
use std::process::Command;

use tablecam::dispute::{build, DisputeError, DisputeOptions, EventsFrom};
use tablecam::pipeline::Collector;
use tablecam::record::recording::ModelsUsed;
use tablecam::replay::{self, ReplayOptions, Session};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn fixture_models() -> ModelsUsed {
    ModelsUsed {
        locator: root().join("models/fixtures/locator_tiny.onnx"),
        classifier: root().join("models/fixtures/classifier_tiny.onnx"),
        face_classifier: None,
        glyph_classifier: None,
    }
}

fn fresh(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

/// A recorded live run (frames + journal) of a 1-round 720p simulator session with an exposed card.
fn recorded_session(base: &Path) -> (PathBuf, Collector) {
    let sim = base.join("sim");
    let status = Command::new(env!("CARGO_BIN_EXE_tablecam"))
        .args(["simulate", "--ruleset", "fortune3cp-2025", "--rounds", "1", "--seed", "7", "--size", "720p"])
        .args(["--scenario", "player_card_exposed", "--out"])
        .arg(&sim)
        .status()
        .expect("run tablecam simulate");
    assert!(status.success());
    let rec = base.join("recording");
    let mut options = ReplayOptions::new(fixture_models());
    options.record_to = Some(rec.clone());
    let live = Collector::new();
    replay::run(&Session::open(&sim).expect("session"), &options, Box::new(live.clone())).expect("live run");
    (rec, live)
}

fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        let out = Command::new("sh").arg("-c").arg(format!("command -v {name}")).output().ok()?;
        let path = String::from_utf8_lossy(&out.stdout).trim().to_string();
        (out.status.success() && !path.is_empty()).then(|| PathBuf::from(path))
    })
}

/// The DOM after load, as headless Chromium sees it.
fn dump_dom(browser: &Path, page: &Path) -> String {
    let url = format!("file://{}", page.canonicalize().expect("page path").display());
    let out = Command::new(browser)
        .args(["--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000", "--dump-dom"])
        .arg(&url)
        .output()
        .expect("run chromium");
    assert!(out.status.success(), "chromium failed: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn an_evidence_pack_renders_and_holds_its_key_elements_in_a_browser() {
    let base = fresh("dispute-pack");
    let (rec, live) = recorded_session(&base);
    let session = Session::open(&rec).expect("recording");
    let events: Vec<serde_json::Value> =
        live.table(&session.table_id).iter().map(|e| serde_json::from_str(&e.json).expect("event json")).collect();
    // The round with the most events (and a flag if there is one).
    let mut rounds: Vec<(bool, usize, String)> = Vec::new();
    for e in &events {
        let Some(id) = e["round_id"].as_str() else { continue };
        let flag = e["kind"] == "round.flag";
        match rounds.iter_mut().find(|r| r.2 == id) {
            Some(r) => {
                r.0 |= flag;
                r.1 += 1
            }
            None => rounds.push((flag, 1, id.to_string())),
        }
    }
    rounds.sort();
    let (has_flag, count, round) = rounds.last().cloned().expect("the live run saw no round at all");

    let out = base.join("pack");
    let pack = build(&rec, &round, &out, &DisputeOptions { journal: None, locator: None, classifier: None })
        .expect("evidence pack");
    assert_eq!(pack.events, count);
    assert!(matches!(pack.events_from, EventsFrom::Journal { .. }), "a recording with a journal is read from it");
    let html = std::fs::read_to_string(&pack.index).expect("index.html");
    assert!(!html.contains("http://") && !html.contains("https://"), "the page must not reach out");
    let journal_head = match &pack.events_from {
        EventsFrom::Journal { report, .. } => report.last_hash.to_string(),
        EventsFrom::Replay => unreachable!(),
    };

    let Some(browser) = chromium() else {
        if std::env::var("TABLECAM_SKIP_BROWSER").as_deref() == Ok("1") {
            eprintln!("TABLECAM_SKIP_BROWSER=1: the browser check is skipped");
            return;
        }
        panic!("chromium is not installed: run scripts/setup.sh (or set TABLECAM_SKIP_BROWSER=1 to skip this check)");
    };
    let dom = dump_dom(&browser, &pack.index);
    let rows = dom.matches("<tr class=\"event").count();
    assert_eq!(rows, count, "one timeline row per event of the round");
    let loaded: usize = dom
        .split("data-images-loaded=\"")
        .nth(1)
        .and_then(|s| s.split('"').next())
        .and_then(|n| n.parse().ok())
        .expect("the page's load script ran");
    assert!(loaded >= 1 && loaded == pack.key_frames, "{loaded} of {} key frames loaded", pack.key_frames);
    assert!(!dom.contains("data-natural-width=\"0\""), "a key frame did not decode");
    assert!(dom.contains("id=\"verification-status\""));
    assert!(dom.contains(&journal_head), "the chain head is shown");
    assert!(dom.contains("<span id=\"journal-result\">intact</span>"));
    if has_flag {
        let flags = dom.split("<div id=\"flags\">").nth(1).expect("flags section");
        assert!(flags.contains("class=\"citation\">fortune3cp-2025 Art."), "flags cite their article");
    } else {
        // NOT YET: with the tiny fixture models the tracker may flag nothing; then the page must say so.
        assert!(dom.contains("id=\"no-flags\""));
    }
}

#[test]
fn errors_name_what_is_wrong() {
    let base = fresh("dispute-errors");
    let (rec, live) = recorded_session(&base);
    let session = Session::open(&rec).expect("recording");
    let opts = DisputeOptions { journal: None, locator: None, classifier: None };
    let out = base.join("pack");

    match build(&rec, "no-such-round", &out, &opts) {
        Err(DisputeError::UnknownRound { known, .. }) => {
            let any = live.table(&session.table_id).iter().find_map(|e| {
                serde_json::from_str::<serde_json::Value>(&e.json).ok()?["round_id"].as_str().map(String::from)
            });
            assert_eq!(known.first().cloned(), any, "the known rounds are listed");
        }
        other => panic!("expected UnknownRound, got {other:?}"),
    }

    match build(&base.join("nowhere"), "r", &out, &opts) {
        Err(e @ DisputeError::MissingRecording { .. }) => assert!(e.to_string().contains("nowhere")),
        other => panic!("expected MissingRecording, got {other:?}"),
    }

    // An altered journal: the pack is refused, naming the first bad entry.
    let journal = rec.join("journal").join(format!("{}.jsonl", session.table_id));
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    assert!(lines.len() >= 2);
    lines[1] = lines[1].replacen("\"frame\":", "\"frame\":1", 1);
    let altered = base.join("altered.jsonl");
    std::fs::write(&altered, lines.join("\n") + "\n").unwrap();
    let with = |j: PathBuf| DisputeOptions { journal: Some(j), locator: None, classifier: None };
    match build(&rec, "r", &out, &with(altered)) {
        Err(e @ DisputeError::CorruptJournal { .. }) => assert!(e.to_string().contains("line 2"), "{e}"),
        other => panic!("expected CorruptJournal, got {other:?}"),
    }

    std::fs::remove_file(&journal).unwrap();
    match build(&rec, "r", &out, &opts) {
        Err(DisputeError::MissingJournal { path }) => assert_eq!(path, journal),
        other => panic!("expected MissingJournal, got {other:?}"),
    }
}
