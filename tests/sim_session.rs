//! End-to-end checks of `tablecam simulate` sessions: determinism, ground truth
//! consistent with the calibration and with the rules engine, and a video that
//! OpenCV reads back frame for frame.
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use opencv::prelude::*;
use opencv::videoio;
use serde_json::Value;
use tablecam::calib::{Calibration, Point, ZoneKind};
use tablecam::rules::settle::{settle, Round};
use tablecam::rules::{Ruleset, RulesetId};
use tablecam::sim::script::Scenario;
use tablecam::sim::session::{simulate, SessionSpec};

fn run(ruleset: RulesetId, seed: u64, scenario: Option<Scenario>, tag: &str) -> PathBuf {
    let out = std::env::temp_dir().join(format!("tablecam-sim-{}-{tag}-{ruleset}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&out);
    let spec = SessionSpec {
        ruleset,
        rounds: 1,
        seed,
        scenario,
        width: 640,
        height: 360,
        design: None,
        conditions: None,
        out: out.clone(),
    };
    simulate(&spec, |_, _| {}).expect("simulate");
    out
}

fn read(p: &Path) -> Vec<u8> {
    std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn same_seed_same_bytes_and_different_seed_differs() {
    let a = run(RulesetId::Qpoker2004, 11, None, "a");
    let b = run(RulesetId::Qpoker2004, 11, None, "b");
    for f in ["frames.jsonl", "rounds.json", "calibration.json", "video.avi"] {
        assert!(read(&a.join(f)) == read(&b.join(f)), "{f} differs between two runs with the same seed");
    }
    let c = run(RulesetId::Qpoker2004, 12, None, "c");
    assert!(read(&a.join("frames.jsonl")) != read(&c.join("frames.jsonl")));
    for d in [a, b, c] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn ground_truth_agrees_with_calibration_video_and_rules_engine() {
    for id in [RulesetId::Fortune3cp2025, RulesetId::Stud2004, RulesetId::Sangong1996] {
        let out = run(id, 5, None, "truth");
        let geometry = Calibration::load(&out.join("calibration.json")).expect("calibration validates");
        let frames: Vec<Value> = std::fs::read_to_string(out.join("frames.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();

        // The video holds exactly the frames of the ground truth.
        let mut cap =
            videoio::VideoCapture::from_file(out.join("video.avi").to_str().unwrap(), videoio::CAP_ANY).unwrap();
        let mut n = 0;
        let mut m = opencv::core::Mat::default();
        while cap.read(&mut m).unwrap() && !m.empty() {
            assert_eq!((m.cols(), m.rows()), (640, 360));
            n += 1;
        }
        assert_eq!(n, frames.len(), "{id}: video frames vs ground-truth lines");

        // A card that has arrived in a hand lies, through the calibration, inside that hand's zone.
        let mut seen_up: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let mut checked = 0;
        for f in &frames {
            for c in f["cards"].as_array().unwrap() {
                let Some(zone) = c["zone"].as_str() else { continue };
                let q = c["quad"].as_array().unwrap();
                let (sx, sy) = q
                    .iter()
                    .fold((0.0, 0.0), |(x, y), p| (x + p[0].as_f64().unwrap() / 4.0, y + p[1].as_f64().unwrap() / 4.0));
                let on_table = geometry.image_to_table(Point::new(sx, sy)).unwrap();
                if let Some(seat) = zone.strip_prefix("seat ") {
                    let seat: u8 = seat.parse().unwrap();
                    let z = geometry.zone_at(on_table).map(|z| z.kind);
                    assert_eq!(
                        z,
                        Some(ZoneKind::Hand { seat }),
                        "{id} frame {}: card {} at {on_table:?}",
                        f["frame"],
                        c["card"]
                    );
                    checked += 1;
                    if c["face_up"].as_bool().unwrap() {
                        seen_up.entry(zone.to_string()).or_default().insert(c["card"].as_str().unwrap().to_string());
                    }
                }
            }
        }
        assert!(checked > 50, "{id}: only {checked} cards checked");

        // The round's truth is the rules engine's settlement of the cards the camera sees.
        let rounds: Value = serde_json::from_slice(&read(&out.join("rounds.json"))).unwrap();
        let r0 = &rounds[0];
        let round: Round = serde_json::from_value(serde_json::json!({
            "hands": r0["round"]["hands"], "dealer": r0["round"]["dealer"], "community": r0["round"]["community"],
            "irregularities": r0["round"]["irregularities"], "progressive_pool": r0["round"]["progressive_pool"]
        }))
        .unwrap();
        let rs = Ruleset::new(id);
        let again = serde_json::to_value(settle(&rs, &round).unwrap()).unwrap();
        assert_eq!(again, r0["settlement"], "{id}");
        for h in r0["round"]["hands"].as_array().unwrap() {
            let seat = format!("seat {}", h["seat"]);
            let cards: BTreeSet<String> =
                h["cards"].as_array().unwrap().iter().map(|c| c.as_str().unwrap().to_string()).collect();
            // Folded hands may be collected unseen; hands that were shown show exactly their cards.
            if let Some(up) = seen_up.get(&seat) {
                assert_eq!(up, &cards, "{id} {seat}");
            }
        }
        let _ = std::fs::remove_dir_all(out);
    }
}

#[test]
fn an_irregular_scenario_session_records_its_flag_with_article_and_frame() {
    let out = run(RulesetId::Fortune3cp2025, 3, Some(Scenario::TwoPlayerCardsExposed), "flag");
    let rounds: Value = serde_json::from_slice(&read(&out.join("rounds.json"))).unwrap();
    let flags = rounds[0]["flags"].as_array().unwrap();
    assert_eq!(flags.len(), 1);
    assert_eq!(flags[0]["kind"], "several_player_cards_exposed");
    assert_eq!(flags[0]["citation"], "fortune3cp-2025 Art. 17(1)(3)");
    let from = flags[0]["visible_from_frame"].as_u64().unwrap();
    // At that frame a player card is face up in the deal.
    let frames: Vec<Value> = std::fs::read_to_string(out.join("frames.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let window = &frames[from as usize..(from as usize + 40).min(frames.len())];
    assert!(window.iter().any(|f| f["cards"].as_array().unwrap().iter().any(|c| c["face_up"] == true)));
    let _ = std::fs::remove_dir_all(out);
}
