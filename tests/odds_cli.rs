//! `tablecam odds --json` through the binary: one JSON object per ruleset with
//! the specified keys, and the engine's error for an unknown ruleset.
use std::process::Command;

fn odds(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_tablecam")).arg("odds").args(args).output().expect("run tablecam")
}

#[test]
fn json_output_of_every_ruleset_parses_with_the_specified_keys() {
    for id in ["fortune3cp-2025", "fortune3cp-2008", "stud-2004", "qpoker-2004", "sangong-1996"] {
        let out = odds(&["--ruleset", id, "--json", "--samples", "300"]);
        assert!(out.status.success(), "{id}: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
        assert_eq!(v["ruleset"], id);
        let bets = v["bets"].as_array().expect("bets");
        assert!(!bets.is_empty());
        for b in bets {
            let name = b["bet"].as_str().expect("bet name");
            assert!(name.chars().all(|c| c.is_ascii_lowercase() || c == '_'), "{name}");
            let edge = b["house_edge"].as_f64().expect("house_edge");
            assert!((b["return_to_player"].as_f64().unwrap() - (1.0 - edge)).abs() < 1e-12);
            match b["method"].as_str() {
                Some("exact") => assert!(b.get("ci95").is_none()),
                Some("monte-carlo") => assert_eq!(b["ci95"].as_array().map(Vec::len), Some(2)),
                m => panic!("{id}: method {m:?}"),
            }
        }
    }
}

#[test]
fn unknown_ruleset_is_the_engines_error() {
    let out = odds(&["--ruleset", "poker-1999"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown ruleset \"poker-1999\""), "{err}");
    let out = odds(&["--ruleset", "stud-2004", "--option", "stud_royal_raise_pays=120"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("50 to 100"));
}
