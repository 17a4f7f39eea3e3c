//! Tracker + verifier driven by the simulator's ground truth, without rendering:
//! `plan_round` and the timeline give every card's state per frame; the cards
//! are projected through a simulated camera's calibration into image quads,
//! and realistic noise is added (detections lost under hands and other cards,
//! flicker, confidence jitter, unread and occasionally misread faces, quad
//! jitter, shuffled order within a frame).
//!
//! Flags are checked against the plan's expected flags (kind, seat,
//! consequence, citation) and against the frame from which the evidence is
//! complete (see [`evidence_frame`]); clean rounds must raise none and settle as
//! the plan does.
use std::collections::{BTreeMap, BTreeSet};

use tablecam::calib::TableGeometry;
use tablecam::events::{Event, EventBody, RoundFlag, Sequencer, TableZone, VerificationStatus};
use tablecam::rng::Rng;
use tablecam::rules::deal::{deal_plan, DealRequest, SanGongDeal};
use tablecam::rules::settle::Decision;
use tablecam::rules::{BetKind, IrregularityKind, Position, Ruleset, RulesetId};
use tablecam::sim::observe::{backend_hints, observe, Noise};
use tablecam::sim::script::{plan_round, Action, RoundPlan, Scenario};
use tablecam::sim::timeline::{FrameState, Timeline};
use tablecam::track::{FrameObservations, SpotPresence, TrackerOptions};
use tablecam::verify::{TableMonitor, VerifierOptions};

/// Frames after the evidence is complete within which a flag must be raised (250 ms at 30 fps).
const LATENCY_FRAMES: u64 = 8;

struct RoundTruth {
    plan: RoundPlan,
    /// First and last frame of every action.
    action_frames: Vec<(u64, u64)>,
    first_frame: u64,
    states: Vec<FrameState>,
}

struct Session {
    geometry: TableGeometry,
    rounds: Vec<RoundTruth>,
    frames: Vec<FrameObservations>,
}

fn geometry_for(id: RulesetId, seed: u64) -> TableGeometry {
    let mut rng = Rng::seeded(seed ^ 0xCA11);
    let (_, cal) = tablecam::sim::session::simulated_camera(id, seed, 1920, 1080, &mut rng);
    cal.validate(std::path::Path::new("<sim>")).expect("simulated calibration validates")
}

fn session(id: RulesetId, scenarios: &[Scenario], seed: u64, noise: Noise) -> Session {
    let rs = Ruleset::new(id);
    let geometry = geometry_for(id, seed);
    let timeline = Timeline::new(&geometry, rs.cards_per_hand);
    let mut rng = Rng::seeded(seed);
    let mut noise_rng = Rng::seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 7);
    let mut rounds = Vec::new();
    let mut frames = Vec::new();
    let mut frame_no = 0u64;
    let mut bursts: BTreeMap<u32, u32> = BTreeMap::new();
    for (k, &sc) in scenarios.iter().enumerate() {
        let plan = plan_round(&rs, sc, &mut rng, 1000 * k as u32).expect("scenario applies");
        let states = timeline.frames(&plan, &mut rng);
        let first_frame = frame_no;
        let mut action_frames = vec![(u64::MAX, 0u64); plan.actions.len()];
        for st in &states {
            let a = &mut action_frames[st.action];
            a.0 = a.0.min(frame_no);
            a.1 = frame_no;
            frames.push(observe(&geometry, st, frame_no, &noise, &mut noise_rng, &mut bursts, (1920.0, 1080.0)));
            frame_no += 1;
        }
        rounds.push(RoundTruth { plan, action_frames, first_frame, states });
    }
    Session { geometry, rounds, frames }
}

struct Run {
    events: Vec<Event>,
    /// Events per round, by the order of `round.started`.
    per_round: Vec<Vec<Event>>,
}

fn run(s: &Session, id: RulesetId, with_hints: bool) -> Run {
    let rs = Ruleset::new(id);
    let mut m = TableMonitor::new(rs, &s.geometry, TrackerOptions::default(), VerifierOptions::new("T1", "T1-cam1"))
        .expect("monitor");
    let mut events = Vec::new();
    let starts: BTreeMap<u64, usize> = s.rounds.iter().enumerate().map(|(i, r)| (r.first_frame, i)).collect();
    for f in &s.frames {
        if with_hints {
            if let Some(&i) = starts.get(&f.frame) {
                for h in backend_hints(&s.rounds[i].plan, None) {
                    m.hint(h);
                }
            }
        }
        events.extend(m.push(f));
    }
    events.extend(m.finish());
    let mut seq = Sequencer::new();
    for e in &mut events {
        seq.stamp(e);
    }
    let mut ids: Vec<String> = Vec::new();
    let mut per_round: Vec<Vec<Event>> = Vec::new();
    for e in &events {
        let Some(rid) = &e.round_id else { continue };
        let i = match ids.iter().position(|x| x == rid) {
            Some(i) => i,
            None => {
                ids.push(rid.clone());
                per_round.push(Vec::new());
                ids.len() - 1
            }
        };
        per_round[i].push(e.clone());
    }
    Run { events, per_round }
}

fn flags(evs: &[Event]) -> Vec<(RoundFlag, u64)> {
    let all: Vec<(RoundFlag, u64)> = evs
        .iter()
        .filter_map(|e| match &e.body {
            EventBody::RoundFlag(f) => Some((f.clone(), e.frame)),
            _ => None,
        })
        .collect();
    let superseded: BTreeSet<u32> = all.iter().filter_map(|(f, _)| f.supersedes_flag).collect();
    all.into_iter().filter(|(f, _)| !superseded.contains(&f.flag_id)).collect()
}

fn outcomes(evs: &[Event]) -> Vec<tablecam::events::RoundOutcome> {
    evs.iter()
        .filter_map(|e| match &e.body {
            EventBody::RoundOutcome(o) => Some((**o).clone()),
            _ => None,
        })
        .collect()
}

/// The frame from which a camera has all the evidence for a flag, from the
/// ground truth alone. The plan's `visible_from_action` names where the
/// irregularity starts; some need more to be told apart:
/// * a card dealt (face up, to a hand without a bet) is evidence once it has
///   landed: the end of that action; one too many once it has rested there
///   `extra_card_settle_frames` too;
/// * a wrong order is a swap or a skipped hand only once the next delivery lands;
/// * a hand left short is short only when the deal is over (no card for
///   `deal_idle_frames`);
/// * a removed card is removed only when no replacement came (`swap_window_frames`);
///   a swap once the replacement has landed;
/// * a duplicate only once both copies have been face up and in view long
///   enough to be read (`identity_votes` frames);
/// * a shuffler failure (seen, not told) once the partial deal is collected.
///
/// `None`: no camera can see it, e.g. a San Gong order that is wrong only for
/// a dice total the backend did not tell (`hints`; see [`sangong_order_legal_for_some_dice`]).
fn evidence_frame(
    id: RulesetId,
    geometry: &TableGeometry,
    r: &RoundTruth,
    f: &tablecam::sim::script::ExpectedFlag,
    hints: bool,
) -> Option<u64> {
    let rs = Ruleset::new(id);
    let end = |a: usize| r.action_frames[a].1;
    let deals_after = |a: usize| deal_actions_from(r, a);
    let to = TrackerOptions::default();
    let vo = VerifierOptions::new("T", "C");
    let n = rs.cards_per_hand as usize;
    match f.kind {
        IrregularityKind::WrongDealOrder if !hints && sangong_order_legal_for_some_dice(&rs, &r.plan) => None,
        IrregularityKind::WrongDealOrder => Some(end(deals_after(f.visible_from_action)[1])),
        IrregularityKind::WrongCardCount => {
            // The San Gong banker's place is a seat (sangong-1996 Art. 3(1)) whose
            // cards the plan keeps as the dealer's.
            let banker = r.plan.sangong.map(|g| g.banker);
            let short = match f.seat {
                Some(s) if Some(s) == banker => r.plan.round.dealer.len() < n,
                Some(s) => r.plan.round.hands.iter().any(|h| h.seat == s && h.cards.len() < n),
                None => r.plan.round.dealer.len() < n,
            };
            let last_deal = *deals_after(0).iter().rfind(|&&i| i <= f.visible_from_action).unwrap_or(&0);
            Some(if short {
                end(last_deal) + u64::from(to.deal_idle_frames) + u64::from(to.settle_frames)
            } else {
                // A card beyond a full hand counts once it has rested there
                // `extra_card_settle_frames` (an arm over a hand is measured as one card
                // more for a few frames; see TrackerOptions).
                end(f.visible_from_action) + u64::from(to.extra_card_settle_frames)
            })
        }
        IrregularityKind::CardRemoved => {
            Some(end(f.visible_from_action) + u64::from(to.lost_moving_frames) + u64::from(vo.swap_window_frames))
        }
        IrregularityKind::CardSwapped => Some(end(f.visible_from_action + 1)),
        IrregularityKind::DuplicateCard => {
            let mut ids_by_card: BTreeMap<tablecam::rules::Card, BTreeSet<u32>> = BTreeMap::new();
            for st in &r.states {
                for c in &st.cards {
                    ids_by_card.entry(c.card).or_default().insert(c.id);
                }
            }
            let pair: Vec<u32> =
                ids_by_card.values().find(|v| v.len() > 1).expect("a duplicate").iter().copied().collect();
            // A copy is read once it has shown its face to the camera for
            // `identity_votes` frames: face up, in view (the tests of `observe`:
            // not under a card drawn above it or under a hand, e.g. the dealer's
            // as the next card of the hand is turned) and readable (not blurred
            // or edge-on). A copy never turned face up (a folded hand collected
            // unseen) cannot be seen.
            let [cw, _] = geometry.calibration.card_size_mm;
            let readable = |id: u32| {
                let mut shown = 0u32;
                r.states.iter().position(|st| {
                    let Some(i) = st.cards.iter().position(|c| c.id == id) else { return false };
                    let c = &st.cards[i];
                    let covered = st.cards[i + 1..].iter().any(|o| o.center_mm.dist(c.center_mm) < 0.45 * cw);
                    let under_hand = st.hands.iter().any(|h| h.position_mm.dist(c.center_mm) < 45.0);
                    let still = c.velocity_mm[0].hypot(c.velocity_mm[1]) <= 15.0;
                    if c.face_up && !covered && !under_hand && still && c.width_scale >= 0.6 {
                        shown += 1;
                    }
                    shown >= to.identity_votes
                })
            };
            Some(r.first_frame + readable(pair[0])?.max(readable(pair[1])?) as u64)
        }
        IrregularityKind::ShufflerFailure => {
            let collect = (0..r.plan.actions.len())
                .find(|&i| matches!(r.plan.actions[i].action, Action::Collect { .. }))
                .expect("the partial deal is collected");
            Some(end(collect) + u64::from(to.lost_moving_frames))
        }
        _ => Some(end(f.visible_from_action)),
    }
}

/// Whether a San Gong round's places were served in the order that some dice
/// total prescribes. The dice total alone fixes the place that receives the
/// first cards (sangong-1996 Art. 2(2)); every place is the first for some
/// total of four dice, and the camera does not see the dice. Without the
/// backend's total such an order is a legal deal to the camera, whatever total
/// was thrown: a place served late and short (a skipped place made up last)
/// is evidence of its short count only. The counts are not compared here:
/// they are the count flag's business.
fn sangong_order_legal_for_some_dice(rs: &Ruleset, plan: &RoundPlan) -> bool {
    let Some(thrown) = plan.sangong else { return false };
    let served: Vec<Position> = plan
        .actions
        .iter()
        .filter_map(|st| match &st.action {
            Action::Deal { to, .. } => Some(*to),
            _ => None,
        })
        .collect();
    (4..=24u8).any(|dice_total| {
        let req = DealRequest {
            mode: plan.dealing,
            seats_with_bets: vec![],
            progressive_present: false,
            shuffler_gives_three_for_community: false,
            sangong: Some(SanGongDeal { dice_total, ..thrown }),
        };
        deal_plan(rs, &req).is_ok_and(|d| d.iter().map(|x| x.to).eq(served.iter().copied()))
    })
}

fn zone_name(p: Position) -> TableZone {
    match p {
        Position::Seat(s) => TableZone::Seat(s.0),
        Position::Dealer => TableZone::Dealer,
        Position::Community => TableZone::Community,
        Position::Discard => TableZone::Discard,
    }
}

/// Hands (`None`: the dealer's) holding a dealt card that the noise model
/// above never lets the detector see at rest: in every frame it lies under a
/// card drawn above it or under a hand (a shuffler packet landing stacked).
/// No camera can count such a card; a hand short of it is what the table shows.
fn hands_with_invisible_cards(g: &TableGeometry, r: &RoundTruth) -> BTreeSet<Option<u8>> {
    invisible_deliveries(g, r)
        .into_iter()
        .filter_map(|to| match to {
            Position::Seat(s) => Some(Some(s.0)),
            Position::Dealer => Some(None),
            _ => None,
        })
        .collect()
}

/// Where each dealt card no camera ever sees at rest went (stacked under another, under the
/// dealer's hand).
fn invisible_deliveries(g: &TableGeometry, r: &RoundTruth) -> Vec<Position> {
    let [cw, _] = g.calibration.card_size_mm;
    let mut seen_at_rest: BTreeMap<u32, bool> = BTreeMap::new();
    for st in &r.states {
        for (i, c) in st.cards.iter().enumerate() {
            // The same tests as `observe`.
            let covered = st.cards[i + 1..].iter().any(|o| o.center_mm.dist(c.center_mm) < 0.45 * cw);
            let under_hand = st.hands.iter().any(|h| h.position_mm.dist(c.center_mm) < 45.0);
            let at_rest = c.velocity_mm[0].hypot(c.velocity_mm[1]) < 1.0;
            *seen_at_rest.entry(c.id).or_default() |= !covered && !under_hand && at_rest;
        }
    }
    // Only the deal that stands counts: a partial deal collected before a
    // redeal (a shuffler failure) is void, its cards no hand's.
    let redeal = r.plan.actions.iter().enumerate().rev().find_map(|(i, st)| {
        let collect = matches!(st.action, Action::Collect { .. });
        let dealt_after = r.plan.actions[i..].iter().any(|a| matches!(a.action, Action::Deal { .. }));
        (collect && dealt_after).then_some(i)
    });
    let mut out = Vec::new();
    for st in &r.plan.actions[redeal.unwrap_or(0)..] {
        if let Action::Deal { cards, to, .. } = &st.action {
            out.extend(cards.iter().filter(|c| seen_at_rest.get(&c.id) == Some(&false)).map(|_| *to));
        }
    }
    out
}

/// Hands (`None`: the dealer's; a San Gong banker's is its place) holding a
/// card that the noise model never lets the detector read: never face up,
/// still and in view for `identity_votes` frames (the tests of `observe`), e.g.
/// a card that a card dealt after it covers for the rest of the round. No
/// camera can read it; an outcome it decides is unverified, not wrong.
fn hands_with_unreadable_cards(g: &TableGeometry, r: &RoundTruth) -> BTreeSet<Option<u8>> {
    let [cw, _] = g.calibration.card_size_mm;
    let votes = TrackerOptions::default().identity_votes;
    let mut shown: BTreeMap<u32, u32> = BTreeMap::new();
    for st in &r.states {
        for (i, c) in st.cards.iter().enumerate() {
            let covered = st.cards[i + 1..].iter().any(|o| o.center_mm.dist(c.center_mm) < 0.45 * cw);
            let under_hand = st.hands.iter().any(|h| h.position_mm.dist(c.center_mm) < 45.0);
            let still = c.velocity_mm[0].hypot(c.velocity_mm[1]) <= 15.0;
            let n = shown.entry(c.id).or_default();
            if c.face_up && !covered && !under_hand && still && c.width_scale >= 0.6 {
                *n += 1;
            }
        }
    }
    let mut out = BTreeSet::new();
    for st in &r.plan.actions {
        if let Action::Deal { cards, to, .. } = &st.action {
            for c in cards {
                if shown.get(&c.id).copied().unwrap_or(0) < votes {
                    match *to {
                        Position::Seat(s) => out.insert(Some(s.0)),
                        Position::Dealer => out.insert(None),
                        _ => false,
                    };
                }
            }
        }
    }
    out
}

/// The plan's deal actions from action `a` on.
fn deal_actions_from(r: &RoundTruth, a: usize) -> Vec<usize> {
    (a..r.plan.actions.len()).filter(|&i| matches!(r.plan.actions[i].action, Action::Deal { .. })).collect()
}

/// Checks one round's flags against the plan (`hints`: the backend's hints were
/// given); returns a description of every mismatch.
fn check_flags(id: RulesetId, geometry: &TableGeometry, r: &RoundTruth, evs: &[Event], hints: bool) -> Vec<String> {
    let mut problems = Vec::new();
    let got = flags(evs);
    let key = |kind: IrregularityKind, seat: Option<u8>, consequence: &serde_json::Value, citation: &str| {
        format!("{} seat={seat:?} {consequence} {citation}", kind.as_str())
    };
    let mut want: Vec<String> = Vec::new();
    for f in &r.plan.expected_flags {
        let k =
            key(f.kind, f.seat.map(|s| s.0), &serde_json::to_value(f.consequence).unwrap(), &f.citation.to_string());
        let Some(evidence) = evidence_frame(id, geometry, r, f, hints) else {
            // Not visible to a camera at all (e.g. a duplicate whose copy was
            // never turned up, a San Gong order wrong only for the untold dice).
            continue;
        };
        want.push(k.clone());
        match got.iter().find(|(g, _)| key(g.irregularity, g.seat, &g.consequence, &g.citation) == k) {
            Some((_, frame)) => {
                if *frame > evidence + LATENCY_FRAMES {
                    problems.push(format!("{k}: raised at frame {frame}, evidence complete at {evidence}"));
                }
                if *frame < r.first_frame {
                    problems.push(format!("{k}: raised before the round began"));
                }
            }
            None => problems.push(format!("missing {k}")),
        }
        // The room is told of a broken order when the first card lands out of turn, before the
        // next delivery shows whether a hand was passed over (a provisional flag without a seat,
        // superseded by the seat's). Not for San Gong, whose sequence the dice choose (Art. 2(2)).
        if f.kind == IrregularityKind::WrongDealOrder && id != RulesetId::Sangong1996 {
            let first_out_of_turn = r.action_frames[deal_actions_from(r, f.visible_from_action)[0]].1;
            let first_alert = evs
                .iter()
                .filter_map(|e| match &e.body {
                    EventBody::RoundFlag(g) if g.irregularity == f.kind => Some(e.frame),
                    _ => None,
                })
                .min();
            if first_alert.map_or(true, |a| a > first_out_of_turn + LATENCY_FRAMES) {
                problems.push(format!(
                    "{k}: first told at frame {first_alert:?}, the card out of turn landed at {first_out_of_turn}"
                ));
            }
        }
    }
    // A hand holding a card no camera ever sees at rest shows one card short:
    // its wrong count flag is what the table shows (as in the clean rounds,
    // see `hands_with_invisible_cards`), raised once the deal is over.
    let rs = Ruleset::new(id);
    if let Some(rule) = rs.irregularity(IrregularityKind::WrongCardCount) {
        for seat in hands_with_invisible_cards(geometry, r) {
            let k = key(rule.kind, seat, &serde_json::to_value(rule.consequence).unwrap(), &rule.citation.to_string());
            if want.contains(&k) {
                continue;
            }
            if !got.iter().any(|(g, _)| key(g.irregularity, g.seat, &g.consequence, &g.citation) == k) {
                problems.push(format!("missing {k} (a card never visible)"));
            }
            want.push(k);
        }
    }
    for (g, frame) in &got {
        let k = key(g.irregularity, g.seat, &g.consequence, &g.citation);
        if !want.contains(&k) {
            problems.push(format!("unexpected {k} at frame {frame}: {}", g.detail));
        }
    }
    problems
}

/// A count of seeds or sessions, widened for a slower check, e.g.
/// `TV_SEEDS=24 TV_CLEAN_SESSIONS=40 cargo test --release --test track_verify`.
fn wide(var: &str, default: u64) -> u64 {
    std::env::var(var).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

// Every run passes over 12 seeds, 1392 runs (was 3, 11, 116, 246 of 348 wrong
// over 3 seeds; then 22 of 1392). Fixed on the way: fold
// collections read as removals, a late-collected card of the void deal
// abandoning the redeal; the simulator's redeal after a shuffler failure landing
// past the ends of the hand zones, stale tracks of the void deal taking the
// redeal's cards; duplicates (the harness waits until both copies could be
// read: the dealer's hand turning the next card covers the one just turned);
// hands dealt without a bet counted in the deal; San Gong order without the
// dice; a card palmed before its hand was folded read as gathered; a card slid
// into a hand that is gathered at once (it slows down there, never rests); a
// card brought in from off the table that enters the view in flight and lands
// in a hand gathered at once (Q Poker: followed from its second detection, it
// is seen to slow down where it lands); a San Gong skipped place without the
// dice hint: the order served is the one another dice total prescribes, so no
// camera can see the order breach (Art. 2(2)), only the short count (the
// harness no longer expects it, see `sangong_order_legal_for_some_dice`); a
// San Gong banker's count and duplicate flags named the dealer, not the
// banker's place (Art. 3(1)); a card landing on a card at rest during the deal
// took over its track. A hand holding a card that the simulator stacks under
// another for the whole round shows one card short: its count flag is
// expected, as in the clean rounds (`hands_with_invisible_cards`).
// NOT YET, beyond these seeds (TV_SEEDS=36 TV_CLEAN_SESSIONS=60, 2026-11-27: 2 of 4176
// runs, 2 of 3000 clean rounds; 20 and 6, then 16 and 3 before. Fixed since: a card swept
// past the Q Poker dealer's place during the collection counted as dealt; a card put into a
// hand gathered at once, unseen as it touched down, read as a removal
// (`a_card_put_into_a_hand_gathered_at_once_arrives_there_unseen`); a card palmed 12 frames
// before its hand was gathered unseen went with the hand
// (`a_card_gone_well_before_its_hand_was_gathered_unseen_was_removed`); a card too many
// after the deal read as a swap for a card hidden under its neighbour
// (`a_card_too_many_after_the_deal_is_no_swap_for_a_card_hidden_under_its_neighbour`).
// Fixed 2026-12-05: a stray wrong_deal_order (fortune3cp-2025 duplicate_card seed 34: seat 2's card
// unseen for ten frames as it landed, then taken for a new card after seat 3's;
// `a_dealt_card_unseen_as_it_landed_arrives_before_the_next_hands_card`). Every scenario run
// passes at that width since. Left, clean: a false card_removed (stud seed 50: a card hidden 9 frames before its hand
// was folded, where the card_removed scenario's palmed card vanishes 12 frames before: no
// lead separates them). Fixed 2026-12-07: a face-up card never read (stud seed 30 round 8: a
// sure misread of its neighbour gave the card's track, unseen for 12 frames, the neighbour's
// detection; `a_card_unseen_for_frames_leaves_its_neighbour_s_misread_detection_to_its_neighbour`).
// 2026-12-08, TV_SEEDS=60 TV_CLEAN_SESSIONS=100: all 6960 scenario runs pass; of 5000 clean
// rounds only stud seed 50's (above) fails.
#[test]
fn every_scenario_raises_exactly_its_flags_in_time() {
    let mut failures = Vec::new();
    let mut checked = 0;
    for id in RulesetId::ALL {
        let rs = Ruleset::new(id);
        for (k, sc) in Scenario::ALL.into_iter().enumerate() {
            if !sc.applies_to(&rs) || sc == Scenario::Clean {
                continue;
            }
            for seed in 0..wide("TV_SEEDS", 12) {
                let s = session(id, &[sc], 1000 + 37 * seed + k as u64, Noise::realistic());
                for hints in [false, true] {
                    let run = run(&s, id, hints);
                    checked += 1;
                    if run.per_round.len() != 1 {
                        failures.push(format!(
                            "{id} {} seed {seed} hints={hints}: {} rounds seen, one played",
                            sc.name(),
                            run.per_round.len()
                        ));
                        continue;
                    }
                    let probs = check_flags(id, &s.geometry, &s.rounds[0], &run.per_round[0], hints);
                    for p in probs {
                        failures.push(format!("{id} {} seed {seed} hints={hints}: {p}", sc.name()));
                    }
                    let outs = outcomes(&run.per_round[0]);
                    assert!(!outs.is_empty(), "{id} {} seed {seed}: no outcome", sc.name());
                }
            }
        }
    }
    eprintln!("{checked} scenario runs checked");
    assert!(failures.is_empty(), "{} of {checked} runs wrong:\n{}", failures.len(), failures.join("\n"));
}

/// fortune3cp-2008 Art. 11(2): an exposed dealer card "é deixada de fora, à vista" and the rest is
/// dealt face down. The simulator's dealer sets it aside face up at the discard rack and the hand
/// gets the next card; the deal goes on. The round raises the exposure alone (before, a face-up
/// card to the rack during the deal was the deal taken back: a shuffler failure, the round void),
/// and the dealer's hand is the three cards it kept, the set-aside card's delivery no turn of the
/// deal.
#[test]
fn an_exposed_dealer_card_set_aside_is_replaced_and_the_round_goes_on() {
    let id = RulesetId::Fortune3cp2008;
    let mut failures = Vec::new();
    let mut settled_as_planned = 0;
    for seed in 0..12u64 {
        let s = session(id, &[Scenario::DealerCardExposed], 4000 + seed, Noise::realistic());
        let plan = &s.rounds[0].plan;
        let aside: Vec<u32> = plan
            .actions
            .iter()
            .filter_map(|st| match st.action {
                Action::SetAside { id } => Some(id),
                _ => None,
            })
            .collect();
        assert_eq!(aside.len(), 1, "seed {seed}: the simulator sets the exposed dealer card aside");
        let aside_card = plan
            .actions
            .iter()
            .find_map(|st| match &st.action {
                Action::Deal { cards, .. } => cards.iter().find(|c| c.id == aside[0]).map(|c| c.card),
                _ => None,
            })
            .expect("the set-aside card was dealt");
        assert_eq!(plan.round.dealer.len(), 3, "seed {seed}: the truth's dealer hand");
        assert!(!plan.round.dealer.contains(&aside_card), "seed {seed}: the set-aside card is no dealer card");
        for hints in [false, true] {
            let what = format!("seed {seed} hints={hints}");
            let run = run(&s, id, hints);
            let evs = &run.per_round[0];
            let got: Vec<(IrregularityKind, String)> =
                flags(evs).iter().map(|(f, _)| (f.irregularity, f.consequence["kind"].to_string())).collect();
            if got != [(IrregularityKind::DealerCardExposed, "\"dealer_card_set_aside\"".to_string())] {
                failures.push(format!("{what}: flags {got:?}"));
            }
            let set_aside_moved = evs.iter().any(|e| {
                matches!(e.body, EventBody::CardMoved { from: TableZone::Dealer, to: TableZone::Discard, .. })
                    && e.frame < s.rounds[0].action_frames[plan.actions.len() - 1].0
            });
            if !set_aside_moved {
                failures.push(format!("{what}: no dealer card went to the discard rack during the round"));
            }
            let outs = outcomes(evs);
            let Some(o) = outs.last() else {
                failures.push(format!("{what}: no outcome"));
                continue;
            };
            if o.dealer.len() != 3 || o.dealer.iter().any(|c| c.card == Some(aside_card)) {
                failures.push(format!("{what}: dealer {:?}, {aside_card} set aside", o.dealer));
            }
            let read: Vec<_> = o.dealer.iter().filter_map(|c| c.card).collect();
            if read.iter().any(|c| !plan.round.dealer.contains(c)) {
                failures.push(format!("{what}: dealer read {read:?}, truth {:?}", plan.round.dealer));
            }
            if o.verification.status == VerificationStatus::Verified {
                match compare_outcome(plan, o, !hints, false) {
                    Some(why) => failures.push(format!("{what}: verified but {why}")),
                    None => settled_as_planned += 1,
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} wrong:\n{}", failures.len(), failures.join("\n"));
    // Not a formality: most of these rounds are read whole and settled as the truth has it.
    assert!(settled_as_planned >= 12, "only {settled_as_planned} of 24 runs verified and settled as planned");
}

/// Compares an outcome with the plan's settlement, bet by bet; `None` if equal.
/// `settled_only`: an unverified outcome leaves out the bets it could not
/// decide (docs/events.md); every bet it did settle must still be the plan's.
fn compare_outcome(
    plan: &RoundPlan,
    o: &tablecam::events::RoundOutcome,
    unseen_folds_ok: bool,
    settled_only: bool,
) -> Option<String> {
    let st = &plan.settlement;
    if o.status != "settled" {
        return Some(format!("status {} ({:?})", o.status, o.verification.reasons));
    }
    if st.dealer_qualifies != o.dealer_qualifies {
        return Some(format!("dealer qualifies {:?} vs plan {:?}", o.dealer_qualifies, st.dealer_qualifies));
    }
    for h in &st.hands {
        let Some(mine) = o.hands.iter().find(|x| x.seat == h.seat.0) else {
            return Some(format!("seat {} missing", h.seat.0));
        };
        let theirs: Vec<(BetKind, f64, Option<i64>)> =
            h.bets.iter().map(|b| (b.bet, b.net_multiple, b.net_amount)).collect();
        let ours: Vec<(BetKind, f64, Option<i64>)> =
            mine.bets.iter().map(|b| (b.bet, b.net_multiple, b.net_amount)).collect();
        let theirs_no_money: Vec<(BetKind, f64)> = theirs.iter().map(|x| (x.0, x.1)).collect();
        let ours_no_money: Vec<(BetKind, f64)> = ours.iter().map(|x| (x.0, x.1)).collect();
        let same = match (unseen_folds_ok, settled_only) {
            (true, false) => theirs_no_money == ours_no_money,
            (false, false) => theirs == ours,
            (true, true) => ours_no_money.iter().all(|b| theirs_no_money.contains(b)),
            (false, true) => ours.iter().all(|b| theirs.contains(b)),
        };
        if !same {
            return Some(format!("seat {}: {ours:?} vs plan {theirs:?}", h.seat.0));
        }
        if !mine.hand.is_empty() && mine.hand != h.hand {
            return Some(format!("seat {}: hand {} vs plan {}", h.seat.0, mine.hand, h.hand));
        }
    }
    None
}

// Passes over these 1000 rounds. Fixed on the way: a card landing on a still
// card took over its track (stud-2004 seed 18 round 7: the hand seen one card
// short); that hidden card stays under the next for the rest of the round, so
// no camera reads it and the outcome is unverified, which
// `hands_with_unreadable_cards` explains.
#[test]
fn clean_rounds_raise_nothing_and_settle_as_planned() {
    // 200 rounds per ruleset: 20 sessions of 10 rounds, alternately with and without backend hints.
    let mut failures = Vec::new();
    let mut verified = 0;
    let mut total = 0;
    // Rounds in which the simulator stacks a dealt card under another for the whole round.
    let mut stacked = 0;
    for id in RulesetId::ALL {
        for seed in 0..wide("TV_CLEAN_SESSIONS", 20) {
            let s = session(id, &[Scenario::Clean; 10], 500 + seed, Noise::realistic());
            let hints = seed % 2 == 0;
            let run = run(&s, id, hints);
            assert_eq!(run.per_round.len(), 10, "{id} seed {seed}: rounds seen");
            for (i, (r, evs)) in s.rounds.iter().zip(&run.per_round).enumerate() {
                total += 1;
                let what = format!("{id} seed {seed} round {i} hints={hints}");
                let invisible = hands_with_invisible_cards(&s.geometry, r);
                if !invisible.is_empty() {
                    // The table shows a hand one card short: exactly its wrong
                    // count flag (and the void it brings), nothing else.
                    stacked += 1;
                    let rule = *Ruleset::new(id).irregularity(IrregularityKind::WrongCardCount).expect("a rule");
                    let got: BTreeSet<Option<u8>> = flags(evs)
                        .iter()
                        .filter(|(f, _)| {
                            f.irregularity == IrregularityKind::WrongCardCount
                                && f.citation == rule.citation.to_string()
                                && f.consequence == serde_json::to_value(rule.consequence).unwrap()
                        })
                        .map(|(f, _)| f.seat)
                        .collect();
                    if got != invisible || flags(evs).len() != invisible.len() {
                        failures.push(format!("{what}: a card never visible in {invisible:?}; flags {:?}", flags(evs)));
                    }
                    let outs = outcomes(evs);
                    if outs.len() != 1 || outs[0].status != "void" {
                        failures.push(format!("{what}: a card never visible: outcomes {outs:?}"));
                    }
                    continue;
                }
                for (f, frame) in flags(evs) {
                    failures.push(format!(
                        "{what}: flag {} seat {:?} at {frame}: {}",
                        f.irregularity.as_str(),
                        f.seat,
                        f.detail
                    ));
                }
                let outs = outcomes(evs);
                if outs.len() != 1 {
                    failures.push(format!(
                        "{what}: {} outcomes: {:?}",
                        outs.len(),
                        outs.iter().map(|o| (o.status.clone(), o.verification.reasons.clone())).collect::<Vec<_>>()
                    ));
                    continue;
                }
                let o = &outs[0];
                match o.verification.status {
                    VerificationStatus::Verified => {
                        verified += 1;
                        if let Some(p) = compare_outcome(&r.plan, o, !hints, false) {
                            failures.push(format!("{what}: verified but wrong: {p}"));
                        }
                    }
                    VerificationStatus::Unverified => {
                        // Never wrong: whatever it settled must agree with the plan.
                        if o.status == "settled" {
                            if let Some(p) = compare_outcome(&r.plan, o, !hints, true) {
                                failures.push(format!("{what}: unverified and wrong: {p}"));
                            }
                        }
                        // Only what no camera can see leaves an outcome
                        // unverified, and the reasons say which: a card no
                        // camera can read (they name its hand) or, without
                        // hints, a Q Poker fold that keeps its cards on the
                        // table (a Pair Plus bet).
                        let unreadable = hands_with_unreadable_cards(&s.geometry, r);
                        let banker = r.plan.sangong.map(|g| g.banker.0);
                        let explained = |reason: &String| {
                            let unread = reason
                                .strip_suffix(" never seen face up")
                                .or_else(|| reason.strip_suffix(" seen face up but never read"));
                            let hand = unread.and_then(|x| {
                                if x.starts_with("dealer card ") {
                                    Some(banker)
                                } else {
                                    x.strip_prefix("seat ")?.split(' ').next()?.parse::<u8>().ok().map(Some)
                                }
                            });
                            hand.is_some_and(|h| unreadable.contains(&h))
                        };
                        let unseen_fold = |reason: &String| {
                            !hints
                                && id == RulesetId::Qpoker2004
                                && (reason.ends_with("(a Q Poker fold shows only when the cards are collected)")
                                    || reason.ends_with("bets that depend on the unseen decision are not settled"))
                        };
                        // Without hints no one tells the jackpot a Progressive win is paid from.
                        let untold_jackpot =
                            |reason: &String| !hints && reason.ends_with("whose amount the backend has not told");
                        let reasons = &o.verification.reasons;
                        if reasons.is_empty()
                            || !reasons.iter().all(|x| explained(x) || unseen_fold(x) || untold_jackpot(x))
                        {
                            failures.push(format!("{what}: unverified: {reasons:?}"));
                        }
                    }
                }
            }
        }
    }
    eprintln!("{verified} of {total} clean rounds verified, {stacked} with a card no camera can see");
    assert!(failures.is_empty(), "{} problems:\n{}", failures.len(), failures.join("\n"));
    assert!(stacked * 100 <= total, "{stacked} of {total} clean rounds have a card no camera can see");
    // Every unverified round is explained above (a Q Poker fold without hints,
    // a card no camera can read): a share of verified rounds would depend on
    // how many Q Poker rounds lack hints (10 % of the rounds here).
    assert!(verified > 0, "no clean round verified");
}

/// What a camera sees of fortune3cp-2025's bets: the Progressive shares the Six Card Bonus spot
/// (Art. 5(3)–(4)), so its chips show only as chips on that spot. Without the backend's wagers
/// the verifier cannot know whether community cards are due (Art. 11(3)): dealing them, or not,
/// is no irregularity. (The demo's only Progressive round was flagged void for its community
/// cards before.) Dealt, they say a Progressive is on some Six Card Bonus spot: those hands'
/// results are then unverified, with the reason.
#[test]
fn community_cards_are_no_flag_when_only_the_backend_knows_the_progressive() {
    let id = RulesetId::Fortune3cp2025;
    let mut dealt_community = 0;
    let mut ambiguous = 0;
    for seed in 0..3u64 {
        let mut s = session(id, &[Scenario::Clean; 6], 700 + seed, Noise::realistic());
        for f in &mut s.frames {
            let mut seen: Vec<SpotPresence> =
                f.spots
                    .iter()
                    .map(|p| {
                        if p.bet == BetKind::Progressive {
                            SpotPresence { bet: BetKind::SixCardBonus, ..*p }
                        } else {
                            *p
                        }
                    })
                    .collect();
            seen.sort();
            seen.dedup();
            f.spots = seen;
        }
        dealt_community += s
            .rounds
            .iter()
            .filter(|r| {
                r.plan.actions.iter().any(|a| matches!(&a.action, Action::Deal { to: Position::Community, .. }))
            })
            .count();
        let run = run(&s, id, false);
        for (i, (r, evs)) in s.rounds.iter().zip(&run.per_round).enumerate() {
            if !invisible_deliveries(&s.geometry, r).is_empty() {
                // a card stacked under another all round: its count flag is due
                continue;
            }
            let got = flags(evs);
            assert!(got.is_empty(), "seed {seed} round {i}: {got:?}");
            // community cards dealt: a Progressive is on some Six Card Bonus spot, whose results
            // no camera can then vouch for
            let community =
                r.plan.actions.iter().any(|a| matches!(&a.action, Action::Deal { to: Position::Community, .. }));
            let outs = outcomes(evs);
            let o = outs.last().expect("an outcome");
            if community && o.status == "settled" {
                assert_eq!(o.verification.status, VerificationStatus::Unverified, "seed {seed} round {i}");
                assert!(
                    o.verification.reasons.iter().any(|m| m.contains("may be a Progressive wager")),
                    "seed {seed} round {i}: {:?}",
                    o.verification.reasons
                );
                ambiguous += 1;
            }
        }
    }
    assert!(dealt_community > 0, "no round dealt community cards: the test shows nothing");
    assert!(ambiguous > 0, "no settled round with community cards: the reason is not shown");
}

#[test]
fn a_deciding_card_never_read_leaves_the_outcome_unverified_not_wrong() {
    for id in RulesetId::ALL {
        let probe = session(id, &[Scenario::Clean], 77, Noise::realistic());
        let plan = &probe.rounds[0].plan;
        // The dealer's (banker's) first card.
        let dealer = plan.sangong.map_or(Position::Dealer, |g| Position::Seat(g.banker));
        let victim = plan
            .actions
            .iter()
            .find_map(|st| match &st.action {
                Action::Deal { cards, to, .. } if *to == dealer => Some(cards[0].id),
                _ => None,
            })
            .expect("the dealer is dealt");
        let s = session(id, &[Scenario::Clean], 77, Noise { never_read: Some(victim), ..Noise::realistic() });
        let run = run(&s, id, true);
        let outs = outcomes(&run.per_round[0]);
        assert_eq!(outs.len(), 1, "{id}");
        let o = &outs[0];
        assert_eq!(o.verification.status, VerificationStatus::Unverified, "{id}");
        assert!(
            o.verification.reasons.iter().any(|r| r.ends_with("seen face up but never read")),
            "{id}: {:?}",
            o.verification.reasons
        );
        assert!(o.hands.iter().all(|h| h.bets.is_empty()), "{id}: no bet settled on a guess");
        assert!(flags(&run.per_round[0]).is_empty(), "{id}");
        let _ = zone_name(dealer);
    }
}

#[test]
fn order_of_detections_within_a_frame_does_not_change_the_events() {
    for id in [RulesetId::Fortune3cp2025, RulesetId::Sangong1996, RulesetId::Stud2004] {
        let mut s = session(id, &[Scenario::Clean, Scenario::PlayerCardExposed], 9, Noise::realistic());
        let a: Vec<String> = run(&s, id, false).events.iter().map(Event::to_json).collect();
        let mut rng = Rng::seeded(4242);
        for f in &mut s.frames {
            rng.shuffle(&mut f.cards);
            f.cards.reverse();
        }
        let b: Vec<String> = run(&s, id, false).events.iter().map(Event::to_json).collect();
        assert_eq!(a, b, "{id}");
    }
}

#[test]
fn no_card_is_in_two_hands_and_hands_hold_what_was_dealt() {
    for id in RulesetId::ALL {
        let s = session(id, &[Scenario::Clean, Scenario::Clean], 31, Noise::realistic());
        let run = run(&s, id, false);
        let mut home: BTreeMap<(String, u32), TableZone> = BTreeMap::new();
        for e in &run.events {
            if let EventBody::CardDealt { track, zone, .. } = &e.body {
                let key = (e.round_id.clone().unwrap_or_default(), *track);
                assert!(home.insert(key, *zone).is_none(), "{id}: card {track} dealt twice");
            }
        }
        for (i, (r, evs)) in s.rounds.iter().zip(&run.per_round).enumerate() {
            let dealt: BTreeMap<TableZone, usize> = evs.iter().fold(BTreeMap::new(), |mut m, e| {
                if let EventBody::CardDealt { zone, .. } = &e.body {
                    *m.entry(*zone).or_default() += 1;
                }
                m
            });
            let mut want: BTreeMap<TableZone, usize> = BTreeMap::new();
            for st in &r.plan.actions {
                if let Action::Deal { cards, to, .. } = &st.action {
                    *want.entry(zone_name(*to)).or_default() += cards.len();
                }
            }
            assert_eq!(dealt, want, "{id} round {i}");
            // Every outcome card of a hand is that hand's card.
            let o = &outcomes(evs)[0];
            let mut seen = BTreeSet::new();
            for h in &o.hands {
                for c in &h.cards {
                    assert!(seen.insert(c.track), "{id}: card {} in two hands", c.track);
                }
            }
        }
    }
}

#[test]
fn without_hints_decisions_and_folds_come_from_the_table() {
    // Folds in fortune3cp and stud show as a missing Play/Raise stack or collected cards.
    let mut folds = 0;
    for seed in 0..6u64 {
        let id = RulesetId::Fortune3cp2025;
        let s = session(id, &[Scenario::Clean; 3], 900 + seed, Noise::realistic());
        let run = run(&s, id, false);
        for (r, evs) in s.rounds.iter().zip(&run.per_round) {
            let o = &outcomes(evs)[0];
            let want: Vec<u8> =
                r.plan.round.hands.iter().filter(|h| h.decision == Decision::Folded).map(|h| h.seat.0).collect();
            assert_eq!(o.folds, want);
            folds += want.len();
        }
    }
    assert!(folds > 0, "the seeds exercise at least one fold");
}

#[test]
fn a_frame_with_twenty_cards_is_tracked_in_well_under_a_millisecond() {
    let id = RulesetId::Stud2004;
    let s = session(id, &[Scenario::Clean; 2], 5, Noise::realistic());
    let busiest = s.frames.iter().map(|f| f.cards.len()).max().unwrap_or(0);
    assert!(busiest >= 20, "the stud table shows {busiest} cards at most");
    let mut m = TableMonitor::new(
        Ruleset::new(id),
        &s.geometry,
        TrackerOptions::default(),
        VerifierOptions::new("T1", "T1-cam1"),
    )
    .unwrap();
    let t0 = std::time::Instant::now();
    let mut heavy = std::time::Duration::ZERO;
    let mut heavy_n = 0u32;
    for f in &s.frames {
        let t = std::time::Instant::now();
        m.push(f);
        if f.cards.len() >= 20 {
            heavy += t.elapsed();
            heavy_n += 1;
        }
    }
    let per = heavy / heavy_n.max(1);
    eprintln!("{} frames in {:?}; frames with >= 20 cards: {per:?} each", s.frames.len(), t0.elapsed());
    assert!(per < std::time::Duration::from_micros(500), "{per:?} per 20-card frame");
}

/// Golden event streams: regenerate with `TABLECAM_BLESS=1 cargo test --release --test track_verify golden`.
#[test]
fn golden_event_streams() {
    let cases: [(&str, RulesetId, &[Scenario], u64, bool); 3] = [
        ("fortune3cp-2025-clean", RulesetId::Fortune3cp2025, &[Scenario::Clean, Scenario::Clean], 1, true),
        ("stud-2004-exposed", RulesetId::Stud2004, &[Scenario::TwoPlayerCardsExposed], 2, false),
        ("sangong-1996-swap", RulesetId::Sangong1996, &[Scenario::CardSwapped], 3, true),
    ];
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var_os("TABLECAM_BLESS").is_some();
    for (name, id, scenarios, seed, hints) in cases {
        let s = session(id, scenarios, seed, Noise::realistic());
        let run = run(&s, id, hints);
        let mut text = String::new();
        for e in &run.events {
            text.push_str(&e.to_json());
            text.push('\n');
        }
        let path = dir.join(format!("{name}.jsonl"));
        if bless {
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(&path, &text).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e} (bless with TABLECAM_BLESS=1)", path.display()));
        if want != text {
            let line = want.lines().zip(text.lines()).position(|(a, b)| a != b).unwrap_or(0);
            panic!(
                "{name}: event stream differs from {} at line {} (bless with TABLECAM_BLESS=1 after review):\n want {}\n  got {}",
                path.display(),
                line + 1,
                want.lines().nth(line).unwrap_or("<end>"),
                text.lines().nth(line).unwrap_or("<end>")
            );
        }
        // Every golden line parses back to the same event.
        for l in want.lines() {
            assert_eq!(Event::from_json(l).unwrap().to_json(), l);
        }
    }
}

/// Prints a session's events next to the plan's actions:
/// `DEBUG_TV=fortune3cp-2025,clean,5,10,0 cargo test --release --test track_verify debug_dump -- --ignored --nocapture`
/// (ruleset, scenario, seed, rounds, hints 0/1[, id of a physical card never read]).
#[test]
#[ignore]
fn debug_dump() {
    let spec = std::env::var("DEBUG_TV").unwrap_or_else(|_| "fortune3cp-2025,clean,1,1,0".into());
    let p: Vec<&str> = spec.split(',').collect();
    let id: RulesetId = p[0].parse().unwrap();
    let sc = Scenario::parse(p[1]).unwrap();
    let seed: u64 = p[2].parse().unwrap();
    let n: usize = p[3].parse().unwrap();
    let hints = p[4] == "1";
    let never_read = p.get(5).map(|x| x.parse().unwrap());
    let s = session(id, &vec![sc; n], seed, Noise { never_read, ..Noise::realistic() });
    for (i, r) in s.rounds.iter().enumerate() {
        println!("== round {i} from frame {}", r.first_frame);
        for (a, st) in r.plan.actions.iter().enumerate() {
            println!("  action {a} frames {:?}: {}", r.action_frames[a], serde_json::to_string(&st.action).unwrap());
        }
        println!("  hands with a card never visible: {:?}", hands_with_invisible_cards(&s.geometry, r));
        for f in &r.plan.expected_flags {
            println!(
                "  expect {:?} seat {:?} from action {} evidence {:?}",
                f.kind,
                f.seat,
                f.visible_from_action,
                evidence_frame(id, &s.geometry, r, f, hints)
            );
        }
    }
    for e in run(&s, id, hints).events {
        println!("{}", e.to_json());
    }
}
