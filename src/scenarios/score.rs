//! Scoring one session's events against its ground truth (`rounds.json`).
use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::events::{Event, EventBody, RoundFlag, RoundOutcome, VerificationStatus};
use crate::rules::settle::Round;
use crate::rules::{BetKind, Card, IrregularityKind, RulesetId};
use crate::sim::script::Scenario;

/// Latency target from the frame that shows an irregularity to its flag event, ms (issue 6).
pub const FLAG_LATENCY_TARGET_MS: f64 = 250.0;

/// The part of a round's ground truth the evaluation reads.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthRound {
    /// Round index from 0.
    pub index: u32,
    /// First frame.
    pub first_frame: u64,
    /// Last frame.
    pub last_frame: u64,
    /// The ruleset.
    pub ruleset: RulesetId,
    /// The scenario.
    pub scenario: Scenario,
    /// The settlement by the rules engine.
    pub settlement: TruthSettlement,
    /// The flags the regulation requires, with the first frame showing each.
    pub flags: Vec<TruthFlag>,
    /// The round as dealt: each hand's cards and the dealer's (San Gong: the banker's place);
    /// absent from older truth files.
    #[serde(default)]
    pub round: Option<Round>,
    /// The round's scripted actions as written (`sim::script::Action`): which cards the action
    /// showing a flag moved ([`action_cards`]).
    #[serde(default)]
    pub actions: Vec<serde_json::Value>,
}

/// An expected flag.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthFlag {
    /// The irregularity.
    pub kind: IrregularityKind,
    /// The hand (none: dealer or whole round).
    pub seat: Option<u8>,
    /// The regulation's consequence, as the rules engine writes it.
    pub consequence: serde_json::Value,
    /// The article.
    pub citation: String,
    /// The first frame a camera can see it in (the first frame of the action that shows it).
    pub visible_from_frame: u64,
    /// The last frame of that action: a dealt card has landed, a removed card has left
    /// (absent in sessions rendered before 2026-11-26: then `visible_from_frame`).
    #[serde(default)]
    pub shown_by_frame: Option<u64>,
    /// The index of that action in the round's actions (absent in older sessions).
    #[serde(default)]
    pub visible_from_action: Option<usize>,
    /// The first frame from `shown_by_frame` on in which a card that action moved lies at least
    /// half in view ([`SEEN_VISIBILITY`]): a card turned while the dealer's hand goes on turning
    /// its neighbours is under that hand until the hand moves away. Not in `rounds.json`: filled
    /// from `frames.jsonl` by [`mark_seen`]; `None` where the action moved no card still on the
    /// table (a card taken away, a hand passed over) or the frames are not there.
    #[serde(default)]
    pub seen_by_frame: Option<u64>,
}

/// The least share of a card in view for a camera to see it ([`TruthFlag::seen_by_frame`]).
pub const SEEN_VISIBILITY: f64 = 0.5;

/// The ids of the cards an action (as `rounds.json` writes it) moves onto or over the table:
/// a deal's cards, a turned card, a card introduced or set aside; none for the rest (a card
/// taken away is not seen afterwards).
pub fn action_cards(action: &serde_json::Value) -> Vec<u32> {
    let id = |v: &serde_json::Value| v.get("id").and_then(serde_json::Value::as_u64).map(|n| n as u32);
    match action.get("action").and_then(serde_json::Value::as_str) {
        Some("deal") => action
            .get("cards")
            .and_then(serde_json::Value::as_array)
            .map(|cards| cards.iter().filter_map(id).collect())
            .unwrap_or_default(),
        Some("flip" | "set_aside") => id(action).into_iter().collect(),
        Some("introduce") => action.get("card").and_then(id).into_iter().collect(),
        _ => Vec::new(),
    }
}

/// Fills each flag's [`TruthFlag::seen_by_frame`] from the frames' truth: `frames` yields, frame
/// by frame in order, each card's id and visible share.
pub fn mark_seen(truth: &mut [TruthRound], frames: impl IntoIterator<Item = (u64, Vec<(u32, f64)>)>) {
    // (round, flag, the cards to see, from which frame, up to which)
    let mut wanted: Vec<(usize, usize, Vec<u32>, u64, u64)> = Vec::new();
    for (r, round) in truth.iter().enumerate() {
        for (f, flag) in round.flags.iter().enumerate() {
            let cards =
                flag.visible_from_action.and_then(|a| round.actions.get(a)).map(action_cards).unwrap_or_default();
            if !cards.is_empty() {
                let from = flag.shown_by_frame.unwrap_or(flag.visible_from_frame);
                wanted.push((r, f, cards, from, round.last_frame));
            }
        }
    }
    if wanted.is_empty() {
        return;
    }
    for (frame, cards) in frames {
        wanted.retain(|(r, f, ids, from, to)| {
            if frame < *from || frame > *to {
                return frame < *from;
            }
            let seen = cards.iter().any(|(id, share)| ids.contains(id) && *share >= SEEN_VISIBILITY);
            if seen {
                truth[*r].flags[*f].seen_by_frame = Some(frame);
            }
            !seen
        });
        if wanted.is_empty() {
            break;
        }
    }
}

/// How long after the truth's frames a found flag was first raised.
#[derive(Debug, Clone, PartialEq)]
pub struct FlagDelay {
    /// The irregularity.
    pub kind: IrregularityKind,
    /// Frames from the first frame of the action that shows it ([`TruthFlag::visible_from_frame`]).
    pub from_visible: i64,
    /// Frames from that action's last frame ([`TruthFlag::shown_by_frame`]): what the tracker
    /// and verifier add once a dealt card has landed.
    pub from_shown: i64,
    /// Frames from the first frame that shows the action's card at least half in view
    /// ([`TruthFlag::seen_by_frame`]; the action's last frame where none is known): what the
    /// tracker and verifier add once the camera can see the card.
    pub from_seen: i64,
}

/// Something a session's events got wrong against its truth, named by round and frame so it can
/// be traced (`TABLECAM_TRACK_DEBUG`, docs/pipeline.md): the tally counts them, this says which.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "finding", rename_all = "snake_case")]
pub enum Finding {
    /// A flag in force that the truth does not expect.
    FalseFlag {
        /// The truth's round index (from 0).
        round: u32,
        /// The flag's frame.
        frame: u64,
        /// The irregularity flagged.
        irregularity: IrregularityKind,
        /// Its hand.
        seat: Option<u8>,
        /// The flag's own words.
        detail: String,
    },
    /// A flag the regulation requires that was not raised.
    MissedFlag {
        /// The truth's round index.
        round: u32,
        /// The first frame that shows it.
        frame: u64,
        /// The irregularity.
        irregularity: IrregularityKind,
        /// Its hand.
        seat: Option<u8>,
    },
    /// A verified outcome that the truth's settlement contradicts.
    WrongOutcome {
        /// The truth's round index.
        round: u32,
        /// The outcome's frame.
        frame: u64,
    },
    /// An outcome marked unverified, with the verifier's reasons.
    Unverified {
        /// The truth's round index.
        round: u32,
        /// The outcome's frame.
        frame: u64,
        /// What could not be verified.
        reasons: Vec<String>,
    },
    /// A round without any outcome event.
    MissingOutcome {
        /// The truth's round index.
        round: u32,
    },
}

impl std::fmt::Display for Finding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let seat = |s: &Option<u8>| s.map(|s| format!(" seat {s}")).unwrap_or_default();
        match self {
            Finding::FalseFlag { round, frame, irregularity, seat: s, detail } => {
                write!(f, "round {} frame {frame}: false {}{}: {detail}", round + 1, irregularity.as_str(), seat(s))
            }
            Finding::MissedFlag { round, frame, irregularity, seat: s } => {
                write!(f, "round {} frame {frame}: missed {}{}", round + 1, irregularity.as_str(), seat(s))
            }
            Finding::WrongOutcome { round, frame } => write!(f, "round {} frame {frame}: wrong outcome", round + 1),
            Finding::Unverified { round, frame, reasons } => {
                write!(f, "round {} frame {frame}: unverified: {}", round + 1, reasons.join("; "))
            }
            Finding::MissingOutcome { round } => write!(f, "round {}: no outcome", round + 1),
        }
    }
}

/// The settlement's status and bets.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthSettlement {
    /// `{"status": "settled"}` or `{"status": "void", …}`.
    pub status: TruthStatus,
    /// Per hand.
    pub hands: Vec<TruthHand>,
}

/// A settlement's status.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthStatus {
    /// `settled` or `void`.
    pub status: String,
}

/// One hand of the settlement.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthHand {
    /// The seat.
    pub seat: u8,
    /// Its bets.
    pub bets: Vec<TruthBet>,
}

/// One bet of the settlement.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct TruthBet {
    /// The bet spot.
    pub bet: BetKind,
    /// Net result per unit staked.
    pub net_multiple: f64,
}

/// Counts of one session, ruleset, scenario or of everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// Rounds in the ground truth.
    pub rounds: u64,
    /// Flags the regulation requires.
    pub flags_expected: u64,
    /// Of those, flags raised (same irregularity, same seat).
    pub flags_found: u64,
    /// Of those found, with the right consequence and citation too.
    pub flags_exact: u64,
    /// Flags in force that the truth does not expect.
    pub false_flags: u64,
    /// Rounds that must have an outcome (every round).
    pub outcomes_total: u64,
    /// Verified outcomes that match the truth's settlement.
    pub outcomes_correct: u64,
    /// Verified outcomes that do not.
    pub outcomes_wrong: u64,
    /// Outcomes marked unverified (a deciding card not confirmed).
    pub unverified: u64,
    /// Rounds without any outcome event.
    pub outcomes_missing: u64,
    /// Cards of the outcomes known by their rank only (`CardSeen::rank`).
    #[serde(default)]
    pub cards_by_rank: u64,
    /// … of which the hand holds no card of that rank in the truth.
    #[serde(default)]
    pub cards_by_rank_wrong: u64,
}

impl Tally {
    /// Adds another tally.
    pub fn add(&mut self, o: &Tally) {
        self.rounds += o.rounds;
        self.flags_expected += o.flags_expected;
        self.flags_found += o.flags_found;
        self.flags_exact += o.flags_exact;
        self.false_flags += o.false_flags;
        self.outcomes_total += o.outcomes_total;
        self.outcomes_correct += o.outcomes_correct;
        self.outcomes_wrong += o.outcomes_wrong;
        self.unverified += o.unverified;
        self.outcomes_missing += o.outcomes_missing;
        self.cards_by_rank += o.cards_by_rank;
        self.cards_by_rank_wrong += o.cards_by_rank_wrong;
    }

    /// Whether the counts are consistent with one another.
    pub fn consistent(&self) -> bool {
        self.flags_found <= self.flags_expected
            && self.flags_exact <= self.flags_found
            && self.outcomes_total == self.rounds
            && self.outcomes_total
                == self.outcomes_correct + self.outcomes_wrong + self.unverified + self.outcomes_missing
    }
}

/// Flag latencies over many flags.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FlagLatency {
    /// Flags found (each with a latency).
    pub count: u64,
    /// Median, frames.
    pub p50_frames: Option<f64>,
    /// Largest, frames.
    pub max_frames: Option<f64>,
    /// Median, ms (at the video's frame rate).
    pub p50_ms: Option<f64>,
    /// Largest, ms.
    pub max_ms: Option<f64>,
    /// Flags raised within [`FLAG_LATENCY_TARGET_MS`].
    pub within_250ms: u64,
}

impl FlagLatency {
    /// From latencies in frames (negative: raised before the truth says it was visible).
    pub fn of(frames: &[i64], fps: f64) -> FlagLatency {
        if frames.is_empty() {
            return FlagLatency::default();
        }
        let mut sorted = frames.to_vec();
        sorted.sort_unstable();
        let p50 = sorted[(sorted.len() - 1) / 2] as f64;
        let max = *sorted.last().unwrap_or(&0) as f64;
        let ms = |f: f64| (f * 1000.0 / fps * 10.0).round() / 10.0;
        FlagLatency {
            count: frames.len() as u64,
            p50_frames: Some(p50),
            max_frames: Some(max),
            p50_ms: Some(ms(p50)),
            max_ms: Some(ms(max)),
            within_250ms: frames.iter().filter(|&&f| ms(f as f64) <= FLAG_LATENCY_TARGET_MS).count() as u64,
        }
    }
}

/// The truth round holding `frame` (the last one that starts at or before it).
fn round_at(truth: &[TruthRound], frame: u64) -> Option<usize> {
    truth.iter().rposition(|r| r.first_frame <= frame).or(if truth.is_empty() { None } else { Some(0) })
}

/// One flag event as raised.
struct Raised<'a> {
    frame: u64,
    flag: &'a RoundFlag,
}

/// Scores a session: its tally, per flag found its latency, and what it got wrong, round by round.
pub fn score_session(truth: &[TruthRound], events: &[Event]) -> (Tally, Vec<FlagDelay>, Vec<Finding>) {
    // Which truth round each round id belongs to: the one holding most of its events (the
    // earliest of those tied). Not the one holding its first event: a round the tracker opens a
    // few frames before the truth's next round begins (a card of the collection taken for the
    // next deal's first) would take the round before's place, its outcome scored against that
    // round's and the next round's found missing (Q Poker seed 13 rounds 19-21, session 54).
    let mut votes: BTreeMap<&str, BTreeMap<usize, u32>> = BTreeMap::new();
    for e in events {
        if let (Some(id), Some(r)) = (&e.round_id, round_at(truth, e.frame)) {
            *votes.entry(id.as_str()).or_default().entry(r).or_default() += 1;
        }
    }
    let round_of_id: BTreeMap<&str, usize> = votes
        .into_iter()
        .filter_map(|(id, v)| {
            let most = v.values().copied().max()?;
            v.into_iter().find(|&(_, n)| n == most).map(|(r, _)| (id, r))
        })
        .collect();
    let round_of = |e: &Event| match &e.round_id {
        Some(id) => round_of_id.get(id.as_str()).copied(),
        None => round_at(truth, e.frame),
    };
    let mut flags: Vec<Vec<Raised>> = truth.iter().map(|_| Vec::new()).collect();
    let mut outcomes: Vec<Option<(u64, &RoundOutcome)>> = vec![None; truth.len()];
    for e in events {
        let Some(r) = round_of(e) else { continue };
        match &e.body {
            EventBody::RoundFlag(f) => flags[r].push(Raised { frame: e.frame, flag: f }),
            // The last outcome of a round is the one in force (corrections supersede).
            EventBody::RoundOutcome(o) => outcomes[r] = Some((e.frame, o)),
            _ => {}
        }
    }
    let mut tally = Tally::default();
    let mut latencies = Vec::new();
    let mut findings = Vec::new();
    for (r, round) in truth.iter().enumerate() {
        tally.rounds += 1;
        tally.outcomes_total += 1;
        // Flags in force: those no later flag of the round supersedes (by round id and
        // flag id; flag ids are per round).
        let superseded: BTreeSet<u32> = flags[r].iter().filter_map(|x| x.flag.supersedes_flag).collect();
        let in_force: Vec<&Raised> = flags[r].iter().filter(|x| !superseded.contains(&x.flag.flag_id)).collect();
        let mut matched = vec![false; in_force.len()];
        // A flag that names a face must name one the truth has: a duplicate flagged at the right
        // seat on a misread names a card that was not dealt twice.
        let dealt_twice = round.round.as_ref().map(faces_dealt_twice);
        let names_truth = |f: &RoundFlag| match (f.card, &dealt_twice) {
            (Some(card), Some(twice)) if f.irregularity == IrregularityKind::DuplicateCard => twice.contains(&card),
            _ => true,
        };
        for want in &round.flags {
            tally.flags_expected += 1;
            let hit = in_force.iter().enumerate().find(|(i, x)| {
                !matched[*i] && x.flag.irregularity == want.kind && x.flag.seat == want.seat && names_truth(x.flag)
            });
            if hit.is_none() {
                findings.push(Finding::MissedFlag {
                    round: round.index,
                    frame: want.visible_from_frame,
                    irregularity: want.kind,
                    seat: want.seat,
                });
            }
            if let Some((i, x)) = hit {
                matched[i] = true;
                tally.flags_found += 1;
                if x.flag.consequence == want.consequence && x.flag.citation == want.citation {
                    tally.flags_exact += 1;
                }
                // When it was first raised: superseded forms of it included, those of the same
                // seat and those it supersedes of the same irregularity (a provisional flag whose
                // seat was not known yet: the room was alerted then).
                let mut first = flags[r]
                    .iter()
                    .filter(|y| y.flag.irregularity == want.kind && y.flag.seat == want.seat)
                    .map(|y| y.frame)
                    .min()
                    .unwrap_or(x.frame);
                let mut link = x.flag.supersedes_flag;
                while let Some(y) = link.and_then(|id| flags[r].iter().find(|y| y.flag.flag_id == id)) {
                    if y.flag.irregularity != want.kind {
                        break;
                    }
                    first = first.min(y.frame);
                    link = y.flag.supersedes_flag.filter(|&id| id != y.flag.flag_id);
                }
                latencies.push(FlagDelay {
                    kind: want.kind,
                    from_visible: first as i64 - want.visible_from_frame as i64,
                    from_shown: first as i64 - want.shown_by_frame.unwrap_or(want.visible_from_frame) as i64,
                    from_seen: first as i64
                        - want.seen_by_frame.or(want.shown_by_frame).unwrap_or(want.visible_from_frame) as i64,
                });
            }
        }
        tally.false_flags += matched.iter().filter(|m| !**m).count() as u64;
        findings.extend(in_force.iter().zip(&matched).filter(|(_, m)| !**m).map(|(x, _)| Finding::FalseFlag {
            round: round.index,
            frame: x.frame,
            irregularity: x.flag.irregularity,
            seat: x.flag.seat,
            detail: x.flag.detail.clone(),
        }));
        if let Some((_, o)) = outcomes[r] {
            let (by_rank, wrong) = cards_by_rank(o, round.round.as_ref());
            tally.cards_by_rank += by_rank;
            tally.cards_by_rank_wrong += wrong;
        }
        match outcomes[r] {
            None => {
                tally.outcomes_missing += 1;
                findings.push(Finding::MissingOutcome { round: round.index });
            }
            Some((frame, o)) if o.verification.status == VerificationStatus::Unverified => {
                tally.unverified += 1;
                findings.push(Finding::Unverified {
                    round: round.index,
                    frame,
                    reasons: o.verification.reasons.clone(),
                });
            }
            Some((_, o)) if outcome_matches(o, &round.settlement) => tally.outcomes_correct += 1,
            Some((frame, _)) => {
                tally.outcomes_wrong += 1;
                findings.push(Finding::WrongOutcome { round: round.index, frame });
            }
        }
    }
    (tally, latencies, findings)
}

/// The outcome's cards known by their rank only, and how many of them the truth's hand (or the
/// dealer's) holds no card of that rank (all of them wrong when the truth has no cards).
fn cards_by_rank(o: &RoundOutcome, truth: Option<&Round>) -> (u64, u64) {
    let mut counts = (0, 0);
    let mut count = |cards: &[crate::events::CardSeen], held: Option<&Vec<Card>>| {
        for rank in cards.iter().filter(|c| c.card.is_none()).filter_map(|c| c.rank) {
            counts.0 += 1;
            counts.1 += u64::from(!held.is_some_and(|h| h.iter().any(|c| c.rank() == rank)));
        }
    };
    for h in &o.hands {
        count(&h.cards, truth.and_then(|t| t.hands.iter().find(|x| x.seat.0 == h.seat)).map(|x| &x.cards));
    }
    count(&o.dealer, truth.map(|t| &t.dealer));
    counts
}

/// Whether a verified outcome says what the truth's settlement says: the same status and, for
/// every bet of the truth, the same net multiple (and no bet the truth does not have).
///
/// A void round returns every stake, so its bets only have to be the truth's and all at zero:
/// the truth is settled from the script's plan, which lists the bets a voided deal never
/// reached (a stud Raise, a Play), while the camera saw only the bets placed before the void.
pub fn outcome_matches(o: &RoundOutcome, truth: &TruthSettlement) -> bool {
    if o.status != truth.status.status {
        return false;
    }
    let key = |m: f64| (m * 1000.0).round() as i64;
    let want: BTreeSet<(u8, BetKind, i64)> =
        truth.hands.iter().flat_map(|h| h.bets.iter().map(move |b| (h.seat, b.bet, key(b.net_multiple)))).collect();
    let got: BTreeSet<(u8, BetKind, i64)> =
        o.hands.iter().flat_map(|h| h.bets.iter().map(move |b| (h.seat, b.bet, key(b.net_multiple)))).collect();
    if o.status == "void" {
        return got.is_subset(&want) && want.iter().all(|&(_, _, net)| net == 0);
    }
    want == got
}

/// The faces dealt more than once in a round (its hands, the dealer's and the community cards).
fn faces_dealt_twice(round: &Round) -> BTreeSet<Card> {
    let mut seen = BTreeSet::new();
    let all = round.hands.iter().flat_map(|h| h.cards.iter()).chain(&round.dealer).chain(&round.community);
    all.filter(|&&c| !seen.insert(c)).copied().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::events::{BetResult, CardSeen, HandResult, TableZone};
    use crate::rules::settle::{Decision, HandRound};
    use crate::rules::Rank;
    use crate::rules::Seat;

    fn truth(flags: Vec<TruthFlag>) -> Vec<TruthRound> {
        vec![
            TruthRound {
                index: 0,
                first_frame: 0,
                last_frame: 99,
                ruleset: RulesetId::Fortune3cp2025,
                scenario: Scenario::PlayerCardExposed,
                settlement: TruthSettlement {
                    status: TruthStatus { status: "settled".into() },
                    hands: vec![TruthHand { seat: 1, bets: vec![TruthBet { bet: BetKind::Ante, net_multiple: 1.0 }] }],
                },
                flags,
                round: None,
                actions: vec![],
            },
            TruthRound {
                index: 1,
                first_frame: 100,
                last_frame: 199,
                ruleset: RulesetId::Fortune3cp2025,
                scenario: Scenario::Clean,
                settlement: TruthSettlement { status: TruthStatus { status: "settled".into() }, hands: vec![] },
                flags: vec![],
                round: None,
                actions: vec![],
            },
        ]
    }

    fn flag(id: u32, kind: IrregularityKind, seat: Option<u8>, supersedes: Option<u32>) -> RoundFlag {
        RoundFlag {
            flag_id: id,
            irregularity: kind,
            seat,
            consequence: serde_json::json!({"kind": "continues"}),
            citation: "fortune3cp-2025 Art. 17(4)(1)".into(),
            evidence_frame: 0,
            detail: String::new(),
            supersedes_flag: supersedes,
            card: None,
        }
    }

    /// An expected flag of `kind` at `seat`, visible from frame 20, with `flag`'s consequence and
    /// citation.
    fn truth_flag(kind: IrregularityKind, seat: Option<u8>) -> TruthFlag {
        TruthFlag {
            kind,
            seat,
            consequence: serde_json::json!({"kind": "continues"}),
            citation: "fortune3cp-2025 Art. 17(4)(1)".into(),
            visible_from_frame: 20,
            shown_by_frame: None,
            visible_from_action: None,
            seen_by_frame: None,
        }
    }

    fn ev(round: &str, frame: u64, body: EventBody) -> Event {
        Event {
            table_id: "T".into(),
            camera_id: "C".into(),
            round_id: Some(round.into()),
            seq: 0,
            frame,
            time_ms: 0.0,
            body,
        }
    }

    fn outcome(status: VerificationStatus, multiple: f64) -> EventBody {
        let mut o = RoundOutcome::blank(RulesetId::Fortune3cp2025, "settled", status);
        o.hands = vec![HandResult {
            seat: 1,
            cards: vec![],
            hand: String::new(),
            decision: Decision::Played,
            null: None,
            bets: vec![BetResult {
                bet: BetKind::Ante,
                outcome: "win".into(),
                net_multiple: multiple,
                stake: None,
                net_amount: None,
                citations: vec![],
            }],
        }];
        EventBody::RoundOutcome(Box::new(o))
    }

    /// Cards known by their rank are counted, and checked against the hand's true cards.
    #[test]
    fn cards_known_by_rank_are_counted_against_the_truth() {
        let EventBody::RoundOutcome(mut o) = outcome(VerificationStatus::Verified, 1.0) else { unreachable!() };
        let seen = |rank: Option<Rank>| CardSeen { track: 1, card: None, rank };
        o.hands[0].cards = vec![seen(Some(Rank::King)), seen(Some(Rank::Two)), seen(None)];
        o.dealer = vec![seen(Some(Rank::Ace))];
        let cards = |c: &[&str]| c.iter().map(|x| x.parse().unwrap()).collect::<Vec<Card>>();
        let truth = Round {
            hands: vec![HandRound {
                seat: Seat(1),
                cards: cards(&["KS", "9D", "4C"]),
                wagers: vec![],
                decision: Decision::Played,
            }],
            dealer: cards(&["AH", "2C", "3D"]),
            community: vec![],
            irregularities: vec![],
            progressive_pool: None,
            max_payout: None,
            sangong_bank: None,
        };
        // K held, 2 not (the dealer's 2 is not the hand's), A held by the dealer
        assert_eq!(cards_by_rank(&o, Some(&truth)), (3, 1));
        assert_eq!(cards_by_rank(&o, None), (3, 3), "without the truth's cards nothing is taken as right");
    }

    /// San Gong seed 13's `duplicate_card`: both 8♣ copies (seats 3 and 4) were read as 10♣, and
    /// "10C seen twice" was raised at seat 4, the truth's seat. A duplicate flag naming a face
    /// dealt once is no duplicate found: the expected flag is missed and that flag false.
    #[test]
    fn a_duplicate_flag_counts_only_where_it_names_the_face_dealt_twice() {
        let k = IrregularityKind::DuplicateCard;
        let cards = |c: &[&str]| c.iter().map(|x| x.parse().unwrap()).collect::<Vec<Card>>();
        let hand = |seat: u8, c: &[&str]| HandRound {
            seat: Seat(seat),
            cards: cards(c),
            wagers: vec![],
            decision: Decision::Played,
        };
        let mut t = truth(vec![truth_flag(k, Some(4))]);
        t[0].round = Some(Round {
            hands: vec![hand(3, &["8C", "KH", "5H"]), hand(4, &["8C", "2C", "4H"]), hand(5, &["7H", "AC", "10C"])],
            dealer: cards(&["AH", "JS", "JC"]),
            community: vec![],
            irregularities: vec![],
            progressive_pool: None,
            max_payout: None,
            sangong_bank: None,
        });
        let found = |card: Option<&str>| {
            let f = RoundFlag { card: card.map(|c| c.parse().unwrap()), ..flag(1, k, Some(4), None) };
            let events =
                vec![ev("r1", 30, EventBody::RoundFlag(f)), ev("r1", 90, outcome(VerificationStatus::Verified, 1.0))];
            let (tally, _, _) = score_session(&t, &events);
            (tally.flags_found, tally.false_flags)
        };
        assert_eq!(found(Some("10C")), (0, 1), "a misread named at the right seat");
        assert_eq!(found(Some("8C")), (1, 0));
        // a flag written before flags named their face: matched by kind and seat, as before
        assert_eq!(found(None), (1, 0));
    }

    #[test]
    fn flags_found_false_and_superseded() {
        let k = IrregularityKind::OnePlayerCardExposed;
        let t = truth(vec![TruthFlag { shown_by_frame: Some(22), ..truth_flag(k, Some(1)) }]);
        let events = vec![
            ev(
                "r1",
                5,
                EventBody::RoundStarted {
                    ruleset: RulesetId::Fortune3cp2025,
                    seats_with_bets: vec![],
                    source: "vision".into(),
                },
            ),
            // Raised at 23, superseded, raised again: found once, latency from the first.
            ev("r1", 23, EventBody::RoundFlag(flag(1, k, Some(1), None))),
            ev("r1", 30, EventBody::RoundFlag(flag(2, k, Some(1), Some(1)))),
            ev("r1", 40, EventBody::RoundFlag(flag(3, IrregularityKind::WrongDealOrder, None, None))),
            ev("r1", 150, outcome(VerificationStatus::Verified, 1.0)),
            ev("r2", 120, EventBody::RoundFlag(flag(1, IrregularityKind::DuplicateCard, None, None))),
            ev("r2", 190, outcome(VerificationStatus::Unverified, 1.0)),
        ];
        let (tally, lat, findings) = score_session(&t, &events);
        assert_eq!(
            tally,
            Tally {
                rounds: 2,
                flags_expected: 1,
                flags_found: 1,
                flags_exact: 1,
                false_flags: 2,
                outcomes_total: 2,
                outcomes_correct: 1,
                outcomes_wrong: 0,
                unverified: 1,
                outcomes_missing: 0,
                cards_by_rank: 0,
                cards_by_rank_wrong: 0,
            }
        );
        assert!(tally.consistent());
        // each false flag and the unverified round, named by round and frame
        let false_flag = |round, frame, irregularity| Finding::FalseFlag {
            round,
            frame,
            irregularity,
            seat: None,
            detail: String::new(),
        };
        assert_eq!(
            findings,
            vec![
                false_flag(0, 40, IrregularityKind::WrongDealOrder),
                false_flag(1, 120, IrregularityKind::DuplicateCard),
                Finding::Unverified { round: 1, frame: 190, reasons: vec![] },
            ]
        );
        assert_eq!(findings[0].to_string(), "round 1 frame 40: false wrong_deal_order: ");
        // without the flag the regulation requires: missed, named at the frame that shows it
        let (_, _, findings) = score_session(&t, &events[..1]);
        assert_eq!(
            findings[0],
            Finding::MissedFlag { round: 0, frame: 20, irregularity: k, seat: Some(1) },
            "{findings:?}"
        );
        assert!(findings.contains(&Finding::MissingOutcome { round: 1 }), "{findings:?}");
        assert_eq!(lat, vec![FlagDelay { kind: k, from_visible: 3, from_shown: 1, from_seen: 1 }]);
        let l = FlagLatency::of(&[lat[0].from_visible], 30.0);
        assert_eq!((l.p50_ms, l.within_250ms), (Some(100.0), 1));
    }

    /// Q Poker seed 7's `duplicate_card`: the second 3♣ was turned by frame 225, but the
    /// dealer's hand went on turning its neighbours over it (4–8 % of it in view) until frame
    /// 241; the flag came at 244, 3 frames after the card could be seen.
    #[test]
    fn a_flags_latency_also_counts_from_the_first_frame_its_card_is_seen() {
        let k = IrregularityKind::DuplicateCard;
        let mut t = truth(vec![TruthFlag {
            kind: k,
            seat: None,
            consequence: serde_json::json!({"kind": "round_void"}),
            citation: "qpoker-2004 Art. 11(1)".into(),
            visible_from_frame: 17,
            shown_by_frame: Some(25),
            visible_from_action: Some(1),
            seen_by_frame: None,
        }]);
        t[0].actions = vec![
            serde_json::json!({"action": "flip", "id": 7, "face_up": true, "frames": 8}),
            serde_json::json!({"action": "flip", "id": 1, "face_up": true, "frames": 8}),
            serde_json::json!({"action": "flip", "id": 2, "face_up": true, "frames": 8}),
        ];
        // card 1 under the hand (6 % in view) until frame 41; card 2 in view all along
        let frames = (0..100u64).map(|n| (n, vec![(1, if n < 41 { 0.06 } else { 0.9 }), (2, 1.0)]));
        mark_seen(&mut t, frames);
        assert_eq!(t[0].flags[0].seen_by_frame, Some(41));
        let events = vec![
            ev(
                "r1",
                5,
                EventBody::RoundStarted {
                    ruleset: RulesetId::Qpoker2004,
                    seats_with_bets: vec![],
                    source: "vision".into(),
                },
            ),
            ev("r1", 44, EventBody::RoundFlag(flag(1, k, None, None))),
        ];
        let (_, lat, _) = score_session(&t, &events);
        assert_eq!(lat, vec![FlagDelay { kind: k, from_visible: 27, from_shown: 19, from_seen: 3 }]);
        // which cards an action moves: a deal's, a turned or introduced card; not a removal's
        let cards = |v: serde_json::Value| action_cards(&v);
        assert_eq!(
            cards(serde_json::json!({"action": "deal", "cards": [{"id": 4, "card": "2C"}, {"id": 5, "card": "3C"}]})),
            [4, 5]
        );
        assert_eq!(cards(serde_json::json!({"action": "introduce", "card": {"id": 19, "card": "2C"}})), [19]);
        assert!(cards(serde_json::json!({"action": "remove", "id": 3})).is_empty());
        // an action that moved no card on the table: counted from its last frame
        let mut t2 = t.clone();
        t2[0].flags[0].seen_by_frame = None;
        t2[0].actions[1] = serde_json::json!({"action": "remove", "id": 1, "frames": 8});
        mark_seen(&mut t2, (0..100u64).map(|n| (n, vec![(1, 0.9)])));
        assert_eq!(t2[0].flags[0].seen_by_frame, None);
        let (_, lat, _) = score_session(&t2, &events);
        assert_eq!(lat[0].from_seen, 19);
    }

    #[test]
    fn a_flag_refined_from_a_provisional_one_counts_from_the_provisional_one() {
        let k = IrregularityKind::WrongDealOrder;
        let want = |seat| truth_flag(k, seat);
        let started = EventBody::RoundStarted {
            ruleset: RulesetId::Fortune3cp2025,
            seats_with_bets: vec![],
            source: "vision".into(),
        };
        let events = |refined: Option<u8>, other: IrregularityKind| {
            vec![
                ev("r1", 5, started.clone()),
                // A provisional flag of another irregularity is not this one's first alert.
                ev("r1", 21, EventBody::RoundFlag(flag(1, other, None, None))),
                ev("r1", 25, EventBody::RoundFlag(flag(2, k, None, Some(1)))),
                ev("r1", 40, EventBody::RoundFlag(flag(3, k, refined, Some(2)))),
            ]
        };
        let t = truth(vec![want(Some(1))]);
        let (tally, lat, _) = score_session(&t, &events(Some(1), IrregularityKind::CardRemoved));
        assert_eq!((tally.flags_found, tally.false_flags), (1, 0));
        // No shown_by_frame (an older session): counted from the visible frame.
        assert_eq!(lat, vec![FlagDelay { kind: k, from_visible: 5, from_shown: 5, from_seen: 5 }]);
        // Through a chain of the same irregularity, back to the first.
        let (_, lat, _) = score_session(&t, &events(Some(1), k));
        assert_eq!(lat[0].from_visible, 1);
        // The refined flag names another seat: not found, and counted false.
        let (tally, lat, _) = score_session(&t, &events(Some(2), k));
        assert_eq!((tally.flags_found, tally.false_flags, lat.len()), (0, 1, 0));
    }

    #[test]
    fn a_void_round_matches_on_the_bets_placed_before_the_void() {
        let bet = |bet, net_multiple| TruthBet { bet, net_multiple };
        let truth = TruthSettlement {
            status: TruthStatus { status: "void".into() },
            hands: vec![TruthHand { seat: 1, bets: vec![bet(BetKind::Ante, 0.0), bet(BetKind::Play, 0.0)] }],
        };
        let with = |status: &str, bets: &[(BetKind, f64)]| {
            let EventBody::RoundOutcome(mut o) = outcome(VerificationStatus::Verified, 0.0) else { unreachable!() };
            o.status = status.into();
            let template = o.hands[0].bets[0].clone();
            o.hands[0].bets =
                bets.iter().map(|&(bet, net_multiple)| BetResult { bet, net_multiple, ..template.clone() }).collect();
            o
        };
        // The Play the voided deal never reached is not missing.
        assert!(outcome_matches(&with("void", &[(BetKind::Ante, 0.0)]), &truth));
        assert!(outcome_matches(&with("void", &[(BetKind::Ante, 0.0), (BetKind::Play, 0.0)]), &truth));
        // A bet the truth does not have, a stake not returned, a round not void: wrong.
        assert!(!outcome_matches(&with("void", &[(BetKind::PairPlus, 0.0)]), &truth));
        assert!(!outcome_matches(&with("void", &[(BetKind::Ante, 1.0)]), &truth));
        assert!(!outcome_matches(&with("settled", &[(BetKind::Ante, 0.0)]), &truth));
        // A settled round still needs every bet of the truth.
        let settled = TruthSettlement { status: TruthStatus { status: "settled".into() }, ..truth };
        assert!(!outcome_matches(&with("settled", &[(BetKind::Ante, 0.0)]), &settled));
    }

    #[test]
    fn a_wrong_payout_is_wrong_and_no_outcome_is_missing() {
        let t = truth(vec![]);
        let events = vec![ev("r1", 10, outcome(VerificationStatus::Verified, 2.0))];
        let (tally, _, _) = score_session(&t, &events);
        assert_eq!((tally.outcomes_wrong, tally.outcomes_missing, tally.outcomes_correct), (1, 1, 0));
        assert!(tally.consistent());
    }

    /// A round opened a few frames before the truth's next round begins (a card of the
    /// collection taken for the next deal's first: Q Poker seed 13, session 54) is that next
    /// round: scored by its first event, its outcome took the round before's place and the next
    /// round's was missing.
    #[test]
    fn a_round_opened_just_before_the_truths_round_begins_is_scored_as_that_round() {
        let t = truth(vec![]);
        let dealt =
            |track| EventBody::CardDealt { track, zone: TableZone::Seat(1), order: track, face_up: false, card: None };
        let started = EventBody::RoundStarted {
            ruleset: RulesetId::Fortune3cp2025,
            seats_with_bets: vec![1],
            source: "vision".into(),
        };
        let mut o = RoundOutcome::blank(RulesetId::Fortune3cp2025, "settled", VerificationStatus::Verified);
        o.hands.clear();
        let events = vec![
            ev("r1", 5, started.clone()),
            ev("r1", 90, outcome(VerificationStatus::Verified, 1.0)),
            // r2 opens at frame 95, in the truth's first round, and goes on in its second
            ev("r2", 95, started),
            ev("r2", 110, dealt(1)),
            ev("r2", 120, dealt(2)),
            ev("r2", 190, EventBody::RoundOutcome(Box::new(o))),
        ];
        let (tally, _, findings) = score_session(&t, &events);
        assert_eq!((tally.outcomes_correct, tally.outcomes_wrong, tally.outcomes_missing), (2, 0, 0), "{findings:?}");
    }
}
