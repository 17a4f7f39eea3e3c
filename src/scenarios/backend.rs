//! What a table backend would have told the pipeline during a simulated session
//! (`tablecam eval-scenarios --backend`): the messages `tablecam run` receives over ZeroMQ
//! (docs/backend.md), timed as a casino's table system sends them.
//!
//! Sent: each round's dealing mode and, in San Gong, the banker's place and the dice total as
//! the round opens (the dealer enters the dice before dealing, sangong-1996 Art. 2(2)); each
//! player's decision, `fold` or `play`, as the dealer registers it (the hand's own play or
//! raise bet, or the folded cards' collection; else once the players have looked at their
//! cards). San Gong has no decisions. Never sent: the cards, the bets (chips are the camera's to
//! measure) or a shuffler fault, so the flags the evaluation scores stay the camera's.
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde::Deserialize;

use crate::events::BackendHint;
use crate::pipeline::{PipelineError, TableHint};
use crate::rules::settle::Decision;
use crate::rules::DealingMode;

/// The parts of a `rounds.json` round the backend knows.
#[derive(Debug, Deserialize)]
struct PlannedRound {
    index: u32,
    first_frame: u64,
    dealing: DealingMode,
    sangong: Option<Dice>,
    round: PlannedHands,
    actions: Vec<serde_json::Value>,
}

#[derive(Debug, Deserialize)]
struct Dice {
    banker: u8,
    dice_total: u8,
}

#[derive(Debug, Deserialize)]
struct PlannedHands {
    hands: Vec<PlannedHand>,
    /// The table's jackpot (sessions rendered since session 67).
    #[serde(default)]
    progressive_pool: Option<crate::rules::settle::ProgressivePool>,
}

#[derive(Debug, Deserialize)]
struct PlannedHand {
    seat: u8,
    #[serde(default)]
    decision: Decision,
}

/// One line of `frames.jsonl`: which round and action a frame shows.
#[derive(Debug, Deserialize)]
struct FrameAction {
    frame: u64,
    round: u32,
    action: usize,
}

pub(super) fn invalid(path: &Path, e: impl std::fmt::Display) -> PipelineError {
    PipelineError::Invalid(format!("{}: {e} (render the session again: `tablecam simulate`)", path.display()))
}

/// The backend's messages for the session rendered in `dir`, each with the frame before which
/// it arrives, in frame order.
pub fn backend_hints(dir: &Path) -> Result<VecDeque<(u64, TableHint)>, PipelineError> {
    let path = dir.join("rounds.json");
    let text = std::fs::read_to_string(&path).map_err(|source| PipelineError::Io { path: path.clone(), source })?;
    let rounds: Vec<PlannedRound> = serde_json::from_str(&text).map_err(|e| invalid(&path, e))?;
    let path = dir.join("frames.jsonl");
    let text = std::fs::read_to_string(&path).map_err(|source| PipelineError::Io { path: path.clone(), source })?;
    // the first frame of each (round, action)
    let mut starts: BTreeMap<(u32, usize), u64> = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let f: FrameAction = serde_json::from_str(line).map_err(|e| invalid(&path, e))?;
        starts.entry((f.round, f.action)).or_insert(f.frame);
    }
    let mut hints = Vec::new();
    for r in &rounds {
        hints.push((r.first_frame, BackendHint::DealingMode { mode: r.dealing }));
        if let Some(p) = &r.round.progressive_pool {
            hints.push((r.first_frame, BackendHint::Jackpot { pool: p.pool, fixed: p.fixed.clone() }));
        }
        if let Some(d) = &r.sangong {
            hints.push((r.first_frame, BackendHint::Dice { banker: d.banker, total: d.dice_total, capital: None }));
        }
        let at = |action: usize| starts.get(&(r.index, action)).copied();
        if r.sangong.is_none() {
            for (seat, decision, action) in decision_actions(r) {
                if let Some(frame) = action.and_then(at) {
                    hints.push((frame, BackendHint::Decision { seat, decision }));
                }
            }
        }
    }
    // stable: a round's opening messages stay before its decisions
    hints.sort_by_key(|h| h.0);
    Ok(hints.into_iter().map(|(f, h)| (f, TableHint::Hint(h))).collect())
}

/// Each hand's decision and the action at which the dealer registers it: the hand's own play
/// or raise bet after the deal, or the collection of its cards; else the first action after
/// the players looked at their cards (the last peek, else the last card dealt).
fn decision_actions(r: &PlannedRound) -> Vec<(u8, Decision, Option<usize>)> {
    fn kind(a: &serde_json::Value) -> &str {
        a["action"].as_str().unwrap_or("")
    }
    let looked =
        r.actions.iter().rposition(|a| kind(a) == "peek").or_else(|| r.actions.iter().rposition(|a| kind(a) == "deal"));
    let Some(looked) = looked else { return Vec::new() };
    // the cards each seat was dealt, by id
    let mut held: BTreeMap<u8, Vec<u64>> = BTreeMap::new();
    for a in &r.actions[..=looked] {
        if let (Some(seat), Some(cards)) = (a["to"]["seat"].as_u64(), a["cards"].as_array()) {
            held.entry(seat as u8).or_default().extend(cards.iter().filter_map(|c| c["id"].as_u64()));
        }
    }
    r.round
        .hands
        .iter()
        .map(|h| {
            let own = r.actions.iter().enumerate().skip(looked + 1).find(|(_, a)| match kind(a) {
                "bet" => a["seat"].as_u64() == Some(u64::from(h.seat)) && a["bet"] != "ante",
                "collect" => {
                    let ids: Vec<u64> =
                        a["ids"].as_array().map(|v| v.iter().filter_map(|x| x.as_u64()).collect()).unwrap_or_default();
                    held.get(&h.seat).is_some_and(|mine| !mine.is_empty() && ids == *mine)
                }
                _ => false,
            });
            let action = own.map(|(i, _)| i).or((looked + 1 < r.actions.len()).then_some(looked + 1));
            (h.seat, h.decision, action)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A round as `rounds.json` holds it: three bets, a packet to each of three seats, all look;
    /// seat 1 folds (its cards collected), seat 2 plays, seat 3 folds keeping its cards for a
    /// side bet (no action of its own); reveal. With `dice`, a San Gong round's (no decisions).
    fn session(dir: &Path, dice: bool) {
        let deal = |seat: u8, ids: [u32; 2]| json!({"action": "deal", "to": {"seat": seat}, "cards": [{"id": ids[0], "card": "AS"}, {"id": ids[1], "card": "KS"}], "face_up": [false, false], "frames": 9});
        let actions = vec![
            json!({"action": "bet", "seat": 1, "bet": "bet", "frames": 1}),
            json!({"action": "bet", "seat": 2, "bet": "bet", "frames": 1}),
            json!({"action": "bet", "seat": 3, "bet": "pair_plus", "frames": 1}),
            deal(1, [1, 2]),
            deal(2, [3, 4]),
            deal(3, [5, 6]),
            json!({"action": "peek", "seat": 1, "frames": 10}),
            json!({"action": "peek", "seat": 2, "frames": 10}),
            json!({"action": "wait", "frames": 6}),
            json!({"action": "collect", "ids": [1, 2], "frames": 10}),
            json!({"action": "flip", "id": 3, "face_up": true, "frames": 8}),
        ];
        let rounds = json!([{
            "index": 0, "first_frame": 100, "last_frame": 199, "dealing": "shuffler",
            "sangong": if dice { json!({"banker": 4, "dice_total": 9}) } else { json!(null) },
            "round": {"hands": [{"seat": 1, "decision": "folded"}, {"seat": 2, "decision": "played"}, {"seat": 3, "decision": "folded"}]},
            "actions": actions,
        }]);
        std::fs::write(dir.join("rounds.json"), rounds.to_string()).unwrap();
        // action i is shown from frame 100 + 10 i
        let frames: String = (0..110u64)
            .map(|k| json!({"frame": 100 + k, "round": 0, "action": k / 10, "cards": []}).to_string() + "\n")
            .collect();
        std::fs::write(dir.join("frames.jsonl"), frames).unwrap();
    }

    fn hints_of(dice: bool) -> Vec<(u64, BackendHint)> {
        let dir = std::env::temp_dir().join(format!("tablecam-backend-hints-{}-{dice}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        session(&dir, dice);
        let hints = backend_hints(&dir)
            .unwrap()
            .into_iter()
            .map(|(f, h)| match h {
                TableHint::Hint(h) => (f, h),
                TableHint::Refused(m) => panic!("refused: {m}"),
            })
            .collect();
        std::fs::remove_dir_all(&dir).unwrap();
        hints
    }

    #[test]
    fn san_gongs_dice_open_the_round() {
        assert_eq!(
            hints_of(true),
            vec![
                (100, BackendHint::DealingMode { mode: DealingMode::Shuffler }),
                (100, BackendHint::Dice { banker: 4, total: 9, capital: None }),
            ]
        );
    }

    #[test]
    fn each_decision_comes_when_the_dealer_registers_it() {
        assert_eq!(
            hints_of(false),
            vec![
                (100, BackendHint::DealingMode { mode: DealingMode::Shuffler }),
                // seat 2's play and seat 3's fold have no action of their own: registered once
                // the players have looked (the last peek is action 7, then a wait)
                (180, BackendHint::Decision { seat: 2, decision: Decision::Played }),
                (180, BackendHint::Decision { seat: 3, decision: Decision::Folded }),
                // seat 1's fold is its cards' collection (action 9)
                (190, BackendHint::Decision { seat: 1, decision: Decision::Folded }),
            ]
        );
    }

    #[test]
    fn a_session_without_its_truth_files_is_an_error_naming_the_file() {
        let dir = std::env::temp_dir().join(format!("tablecam-backend-none-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let e = backend_hints(&dir).unwrap_err().to_string();
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(e.contains("rounds.json"), "{e}");
    }
}
