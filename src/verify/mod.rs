//! The verifier: checks each round the tracker follows against its ruleset and
//! turns what happened into published [`Event`]s.
//!
//! [`Verifier::process`] takes the tracker's [`TrackEvent`]s and
//! [`Verifier::tick`] is called once per frame (timeouts are counted in frames).
//! Flags (`round.flag`) are raised the moment they are detectable, each with the
//! article of the ruleset's irregularity policy; every round ends with exactly
//! one `round.outcome` (a later correction names what it supersedes through the
//! publisher's [`crate::events::Sequencer`]). An outcome is `verified` only when
//! every deciding card was confirmed face up and every decision was seen or told.
//!
//! [`TableMonitor`] is the tracker and the verifier of one table camera together.
use std::collections::{BTreeMap, BTreeSet};

use crate::calib::TableGeometry;
use crate::events::{
    BackendHint, BetResult, CardSeen, Event, EventBody, HandResult, RoundFlag, RoundOutcome, RoundPhase, TableZone,
    Verification, VerificationStatus,
};
use crate::rules::deal::{counter_clockwise, deal_plan, deal_plan_with_turn, DealRequest, SanGongDeal, SANGONG_PLACES};
use crate::rules::payout::Outcome;
use crate::rules::ruleset::{FaceUpByDesign, GameKind};
use crate::rules::settle::{
    settle, Decision, HandRound, Observed, ProgressivePool, Round, RoundStatus, Settlement, Wager,
};
use crate::rules::{
    BetKind, Card, Consequence, DealingMode, IrregularityKind, Position, Rank, Ruleset, RulesetId, Seat, Suit,
};
use crate::track::{FrameObservations, SpotPresence, TrackError, TrackEvent, TrackEventKind, Tracker, TrackerOptions};

/// Errors of the verifier.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    /// The tracker refused its options.
    #[error(transparent)]
    Track(#[from] TrackError),
    /// A bad option.
    #[error("verifier option `{option}`: {message}")]
    BadOption {
        /// The option.
        option: &'static str,
        /// What is wrong.
        message: String,
    },
}

/// The `card_removed` detail of a card gone from `seat`'s hand with no card put in its place
/// within `window` frames.
fn unreplaced(seat: u8, window: u64) -> String {
    format!("a card left seat {seat}'s hand and no card replaced it within {window} frames")
}

/// Verifier settings.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifierOptions {
    /// The table (first part of every topic).
    pub table_id: String,
    /// The camera.
    pub camera_id: String,
    /// After a card leaves a hand, frames to wait for a replacement: one that
    /// comes is a swap, none is a removal.
    pub swap_window_frames: u32,
    /// Cards landing in one zone within this many frames are one packet (shuffler).
    pub packet_frames: u32,
}

impl VerifierOptions {
    /// Defaults for a table and camera.
    pub fn new(table_id: &str, camera_id: &str) -> VerifierOptions {
        VerifierOptions {
            table_id: table_id.to_string(),
            camera_id: camera_id.to_string(),
            swap_window_frames: 30,
            packet_frames: 4,
        }
    }
}

/// A card of the deal seen turned face up without a reading, within this many frames of a card
/// landing in its hand, is not taken as exposed until it is read: the landing card covers half
/// of it, and the classifier calls what remains of its back an unread face (stud seed 7, an
/// unseen back design: seat 2's first card "turned up" as its second landed, and stayed so for
/// 20 frames, two exposure flags and a void round). A card really turned up shows its face and
/// is read; one turned up with no card landing near that time is an exposure as before, raised
/// this many frames late (the cards dealt face up, the usual exposure, are raised on arrival).
const COVER_TURN_FRAMES: u64 = 6;

/// Why a card of an unsettled round has no identity: its face never showed, or it showed and
/// was never read surely enough, or its reading was disputed by another card's print.
fn unread(c: &CardRec) -> String {
    match c.disputed {
        Some((card, Some(by))) => format!("read as {card}, then more often as {by}"),
        Some((card, None)) => format!("read as {card}, as another card whose print differs is"),
        None if c.seen_up => "seen face up but never read".into(),
        None => "never seen face up".into(),
    }
}

/// One card of the round as the verifier knows it.
#[derive(Debug, Clone)]
struct CardRec {
    /// Where it was dealt.
    home: TableZone,
    order: u32,
    arrival_frame: u64,
    identity: Option<Card>,
    /// Its rank, where the tracker confirmed that and no identity ([`TrackEventKind::RankRead`]).
    rank: Option<Rank>,
    /// Its face was seen (dealt face up, or turned up): an unread card says which it was.
    seen_up: bool,
    /// The identity it lost to another card's print, or to its own later reads of another face
    /// ([`TrackEventKind::Disputed`]).
    disputed: Option<(Card, Option<Card>)>,
    /// Left the table (not to the discard rack) or was abandoned with a failed deal.
    gone: bool,
    /// Went to the discard rack.
    collected: bool,
}

#[derive(Debug, Clone)]
struct Deviation {
    index: usize,
    got: TableZone,
    missed: TableZone,
    frame: u64,
}

#[derive(Debug, Default)]
struct RoundRec {
    id: String,
    chips_at_start: Vec<SpotPresence>,
    chips_at_reveal: Option<Vec<SpotPresence>>,
    hinted_wagers: BTreeMap<u8, Vec<Wager>>,
    hinted_decisions: BTreeMap<u8, Decision>,
    dice: Option<SanGongDeal>,
    /// The Progressive pool and fixed sums, as the backend told them for this round.
    jackpot: Option<ProgressivePool>,
    /// San Gong: the banker's capital, as the backend tells it (Art. 5(3)).
    banker_capital: Option<crate::rules::settle::Money>,
    mode_hint: Option<DealingMode>,
    phase: Option<RoundPhase>,
    cards: BTreeMap<u32, CardRec>,
    /// Zones of the current deal's arrivals, in order (hands without bets and the discard left out).
    sequence: Vec<(TableZone, u64)>,
    deviation: Option<Deviation>,
    /// Cards of the deal turned face up without a reading, waiting [`COVER_TURN_FRAMES`] for
    /// a card landing beside them: (track, zone, frame of the turn).
    unread_turns: Vec<(u32, TableZone, u64)>,
    /// Cards of the deal "turned face up" as a card landed on them: an exposure only once read.
    turned_under: BTreeSet<u32>,
    /// The order flag raised at a deviation before it was told whether the hand due was passed
    /// over or served out of turn (no seat); the told one supersedes it.
    provisional_order_flag: Option<u32>,
    order_checked: bool,
    flags: Vec<RoundFlag>,
    raised: BTreeSet<(IrregularityKind, Option<u8>)>,
    /// The exposure flags that count towards "more than one card exposed": player cards, and on
    /// stud (`stud_exposed_count_scope = all_cards`, docs/rules.md C-7) dealer cards too.
    /// Each with whether it was the dealer's.
    exposures: Vec<(u32, bool)>,
    design_up_used: bool,
    /// Cards gone from a seat's hand, waiting for a replacement (a swap): the seat, the frame it
    /// was lost, and the `card_removed` flag already raised for it when its place was seen bare.
    pending_removals: Vec<(u8, u64, Option<u32>)>,
    folds: BTreeSet<u8>,
    /// The dealer card exposed during the deal where the ruleset has it set aside and replaced
    /// (`Consequence::DealerCardSetAside`), until it is seen leaving the hand.
    aside_pending: Option<u32>,
    /// The exposed dealer card was set aside this deal (once a deal).
    aside_done: bool,
    deal_complete: bool,
    outcome: Option<RoundOutcome>,
    shuffler_fault_hinted: bool,
}

/// Checks rounds and writes events.
pub struct Verifier {
    rs: Ruleset,
    opts: VerifierOptions,
    round: Option<RoundRec>,
    rounds_started: u64,
    next_round_id: Option<String>,
    early_hints: Vec<BackendHint>,
}

impl Verifier {
    /// A verifier for `rs`.
    pub fn new(rs: Ruleset, opts: VerifierOptions) -> Result<Verifier, VerifyError> {
        if opts.table_id.trim().is_empty() {
            return Err(VerifyError::BadOption { option: "table_id", message: "empty; name the table".into() });
        }
        Ok(Verifier { rs, opts, round: None, rounds_started: 0, next_round_id: None, early_hints: Vec::new() })
    }

    fn event(&self, frame: u64, time_ms: f64, body: EventBody) -> Event {
        Event {
            table_id: self.opts.table_id.clone(),
            camera_id: self.opts.camera_id.clone(),
            round_id: self.round.as_ref().map(|r| r.id.clone()),
            seq: 0,
            frame,
            time_ms,
            body,
        }
    }

    /// The zone of the dealer's cards: the dealer's, or the San Gong banker's place when known.
    fn dealer_zone(&self, r: &RoundRec) -> Option<TableZone> {
        if self.rs.kind != GameKind::SanGong {
            return Some(TableZone::Dealer);
        }
        if let Some(d) = r.dice {
            return Some(TableZone::Seat(d.banker.0));
        }
        // Without the backend: the one place of eight without chips.
        let with: BTreeSet<u8> =
            r.chips_at_start.iter().map(|s| s.seat).chain(r.hinted_wagers.keys().copied()).collect();
        let free: Vec<u8> = (1..=8).filter(|s| !with.contains(s)).collect();
        (free.len() == 1).then(|| TableZone::Seat(free[0]))
    }

    fn bet_seats(&self, r: &RoundRec) -> BTreeSet<u8> {
        if self.rs.kind == GameKind::SanGong {
            let banker = self.dealer_zone(r);
            return (1..=8).filter(|&s| Some(TableZone::Seat(s)) != banker).collect();
        }
        if !r.hinted_wagers.is_empty() {
            // The backend knows the bets; chips seen at the start may still be
            // the last round's.
            return r.hinted_wagers.iter().filter(|(_, w)| !w.is_empty()).map(|(s, _)| *s).collect();
        }
        let mut seats: BTreeSet<u8> = r
            .chips_at_start
            .iter()
            .filter(|s| !matches!(s.bet, BetKind::Play | BetKind::Raise))
            .map(|s| s.seat)
            .collect();
        for (seat, w) in &r.hinted_wagers {
            if w.is_empty() {
                seats.remove(seat);
            } else {
                seats.insert(*seat);
            }
        }
        seats
    }

    /// Whether a Progressive bet is on the table: `None` when the camera cannot
    /// tell. Where the Progressive shares its spot with the other additional
    /// bet (fortune3cp-2025 Art. 5(3)–(4); `layout::progressive_shares_spot`),
    /// chips on that spot may be either bet, and only the backend knows.
    fn progressive_present(&self, r: &RoundRec) -> Option<bool> {
        if !r.hinted_wagers.is_empty() {
            return Some(r.hinted_wagers.values().flatten().any(|w| w.bet == BetKind::Progressive));
        }
        if r.chips_at_start.iter().any(|s| s.bet == BetKind::Progressive) {
            return Some(true);
        }
        let shared = crate::calib::layout::progressive_shares_spot(&self.rs)
            && r.chips_at_start.iter().any(|s| s.bet == BetKind::SixCardBonus);
        if shared {
            None
        } else {
            Some(false)
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn raise(
        &mut self,
        kind: IrregularityKind,
        seat: Option<u8>,
        frame: u64,
        time_ms: f64,
        detail: String,
        supersedes_flag: Option<u32>,
        out: &mut Vec<Event>,
    ) -> Option<u32> {
        let rule = *self.rs.irregularity(kind)?;
        let r = self.round.as_mut()?;
        if !r.raised.insert((kind, seat)) {
            return None;
        }
        let flag = RoundFlag {
            flag_id: r.flags.len() as u32 + 1,
            irregularity: kind,
            seat,
            consequence: serde_json::to_value(rule.consequence).unwrap_or_default(),
            citation: rule.citation.to_string(),
            evidence_frame: frame,
            detail,
            supersedes_flag,
            card: None,
        };
        let id = flag.flag_id;
        r.flags.push(flag.clone());
        out.push(self.event(frame, time_ms, EventBody::RoundFlag(flag)));
        Some(id)
    }

    /// Names `card` as the face flag `id` of the round is about, in the round's record and in
    /// its `round.flag` event, just raised into `out`.
    fn name_face(&mut self, id: u32, card: Card, out: &mut [Event]) {
        let Some(r) = self.round.as_mut() else { return };
        let raised = r.flags.iter_mut().find(|f| f.flag_id == id);
        // the last flag event in `out` is this one (flag ids restart with each round)
        let published = out.iter_mut().rev().find_map(|e| match &mut e.body {
            EventBody::RoundFlag(f) => Some(f),
            _ => None,
        });
        for f in raised.into_iter().chain(published.filter(|f| f.flag_id == id)) {
            f.card = Some(card);
        }
    }

    /// Flags in force (not superseded by a later one).
    fn effective_flags(r: &RoundRec) -> Vec<&RoundFlag> {
        let superseded: BTreeSet<u32> = r.flags.iter().filter_map(|f| f.supersedes_flag).collect();
        r.flags.iter().filter(|f| !superseded.contains(&f.flag_id)).collect()
    }

    /// Called once per frame after that frame's track events: timeouts.
    pub fn tick(&mut self, frame: u64, time_ms: f64) -> Vec<Event> {
        let mut out = Vec::new();
        let window = u64::from(self.opts.swap_window_frames);
        let expired: Vec<u8> = match self.round.as_mut() {
            Some(r) => {
                let (gone, keep): (Vec<_>, Vec<_>) =
                    r.pending_removals.iter().partition(|(_, f, _)| frame.saturating_sub(*f) >= window);
                r.pending_removals = keep;
                // one flagged already when its place was seen bare
                gone.into_iter().filter(|(_, _, flagged)| flagged.is_none()).map(|(s, _, _)| s).collect()
            }
            None => vec![],
        };
        for seat in expired {
            let detail = unreplaced(seat, window);
            self.raise(IrregularityKind::CardRemoved, Some(seat), frame, time_ms, detail, None, &mut out);
        }
        self.unread_turns_due(frame, time_ms, false, &mut out);
        out
    }

    /// A card turned face up during the deal (`read`: with a reading).
    fn turned_up_in_the_deal(
        &mut self,
        track: u32,
        zone: TableZone,
        read: bool,
        frame: u64,
        t: f64,
        out: &mut Vec<Event>,
    ) {
        if read {
            self.expose(track, zone, frame, t, out);
            return;
        }
        let Some(r) = self.round.as_mut() else { return };
        // (Seen turned up under a card before, it is still under it when it flickers back.) Only
        // a card arriving after this one lands on it: the cards of a shuffler's packet arrive in
        // one frame, and one of them dealt face up is often seen up only frames after it arrived
        // (Q Poker seed 7, `two_player_cards_exposed`: seat 1's exposed first card went unflagged).
        let arrived = r.cards.get(&track).map(|c| c.arrival_frame);
        let landed_on = r.turned_under.contains(&track)
            || r.cards.iter().any(|(k, c)| {
                *k != track
                    && c.home == zone
                    && arrived.map_or(true, |a| c.arrival_frame > a)
                    && frame.saturating_sub(c.arrival_frame) <= COVER_TURN_FRAMES
            });
        if landed_on {
            r.turned_under.insert(track);
        } else {
            r.unread_turns.push((track, zone, frame));
        }
    }

    /// Unread turns with no card landing beside them for [`COVER_TURN_FRAMES`] (all of them when
    /// `all`, at the round's end): exposures.
    fn unread_turns_due(&mut self, frame: u64, t: f64, all: bool, out: &mut Vec<Event>) {
        let Some(r) = self.round.as_mut() else { return };
        let (due, keep): (Vec<_>, Vec<_>) =
            r.unread_turns.iter().partition(|(_, _, f)| all || frame.saturating_sub(*f) > COVER_TURN_FRAMES);
        r.unread_turns = keep;
        for (track, zone, _) in due {
            self.expose(track, zone, frame, t, out);
        }
    }

    /// The exposure of card `track` of `zone`, at its arrival order in the zone.
    fn expose(&mut self, track: u32, zone: TableZone, frame: u64, t: f64, out: &mut Vec<Event>) {
        let order = self.round.as_ref().and_then(|r| r.cards.get(&track)).map_or(0, |c| c.order);
        self.exposure(track, zone, order, frame, t, out);
    }

    /// Processes one tracker event.
    pub fn process(&mut self, ev: &TrackEvent) -> Vec<Event> {
        let mut out = Vec::new();
        let (frame, t) = (ev.frame, ev.time_ms);
        match &ev.kind {
            TrackEventKind::RoundStarted { chips, by_hint } => {
                self.rounds_started += 1;
                let id = self
                    .next_round_id
                    .take()
                    .unwrap_or_else(|| format!("{}-r{:06}", self.opts.table_id, self.rounds_started));
                self.round = Some(RoundRec { id, chips_at_start: chips.clone(), ..RoundRec::default() });
                for h in std::mem::take(&mut self.early_hints) {
                    self.apply_hint(&h, frame, t, &mut out);
                }
                let r = self.round.as_ref().expect("just started");
                let seats: Vec<u8> = self.bet_seats(r).into_iter().collect();
                let source = if *by_hint { "backend" } else { "vision" }.to_string();
                out.push(self.event(
                    frame,
                    t,
                    EventBody::RoundStarted { ruleset: self.rs.id, seats_with_bets: seats, source },
                ));
            }
            TrackEventKind::Hint(h) => {
                out.push(self.event(frame, t, EventBody::BackendHint(h.clone())));
                if let BackendHint::RoundStart { round_id } = h {
                    if let (Some(id), Some(r)) = (round_id, self.round.as_mut()) {
                        if r.cards.is_empty() {
                            r.id = id.clone();
                        }
                    } else if round_id.is_some() {
                        self.next_round_id = round_id.clone();
                    }
                }
                if self.round.is_some() {
                    self.apply_hint(h, frame, t, &mut out);
                } else {
                    self.early_hints.push(h.clone());
                }
            }
            TrackEventKind::BetsSeen { chips } => {
                // No event of its own: the outcome's wagers and the deal's checks take the bets
                // from here on (the round's `round.started` listed those of its opening).
                if let Some(r) = self.round.as_mut() {
                    r.chips_at_start = chips.clone();
                }
            }
            TrackEventKind::Phase { from, to, reason, chips } => {
                out.push(self.event(frame, t, EventBody::RoundState { from: *from, to: *to, reason: reason.clone() }));
                if let Some(r) = self.round.as_mut() {
                    r.phase = Some(*to);
                    if *to == RoundPhase::Reveal {
                        r.chips_at_reveal = Some(chips.clone());
                    }
                }
                match to {
                    RoundPhase::Decisions => self.deal_complete(frame, t, &mut out),
                    RoundPhase::Settlement | RoundPhase::Collection => self.emit_outcome(frame, t, &mut out),
                    _ => {}
                }
            }
            TrackEventKind::Dealt { track, zone, order, face_up, card, phase } => {
                out.push(self.event(
                    frame,
                    t,
                    EventBody::CardDealt { track: *track, zone: *zone, order: *order, face_up: *face_up, card: *card },
                ));
                self.on_dealt(*track, *zone, *order, *face_up, *card, *phase, frame, t, &mut out);
            }
            TrackEventKind::Turned { track, zone, face_up, card, phase } => {
                out.push(self.event(
                    frame,
                    t,
                    EventBody::CardTurned { track: *track, zone: *zone, face_up: *face_up, card: *card },
                ));
                if *face_up {
                    if let Some(c) = self.round.as_mut().and_then(|r| r.cards.get_mut(track)) {
                        c.seen_up = true;
                    }
                }
                if *face_up && *phase == RoundPhase::Dealing && *zone != TableZone::Discard {
                    self.turned_up_in_the_deal(*track, *zone, card.is_some(), frame, t, &mut out);
                }
            }
            TrackEventKind::Identified { track, zone, card, previous, corrects } => {
                out.push(self.event(
                    frame,
                    t,
                    EventBody::CardIdentified {
                        track: *track,
                        zone: *zone,
                        card: *card,
                        previous: *previous,
                        corrects: *corrects,
                    },
                ));
                // a misread corrected is no swap: the card's identity is just the new one
                let swapped_from = previous.filter(|_| !corrects);
                self.on_identified(*track, *card, swapped_from, frame, t, &mut out);
            }
            TrackEventKind::RankRead { track, rank, .. } => {
                // No event of its own: the outcome's cards carry it (`CardSeen::rank`).
                if let Some(c) = self.round.as_mut().and_then(|r| r.cards.get_mut(track)) {
                    c.rank = Some(*rank);
                }
            }
            TrackEventKind::Disputed { track, card, by, .. } => {
                // No event of its own: the outcome's reason tells it (schema unchanged).
                if let Some(c) = self.round.as_mut().and_then(|r| r.cards.get_mut(track)) {
                    if c.identity == Some(*card) {
                        c.identity = None;
                        c.disputed = Some((*card, *by));
                    }
                }
            }
            TrackEventKind::Moved { track, from, to, .. } => {
                out.push(self.event(frame, t, EventBody::CardMoved { track: *track, from: *from, to: *to }));
                if let Some(c) = self.round.as_mut().and_then(|r| r.cards.get_mut(track)) {
                    c.collected = *to == TableZone::Discard;
                }
            }
            TrackEventKind::Removed { track, since, from, card, seen_bare } => {
                out.push(self.event(frame, t, EventBody::CardRemoved { track: *track, from: *from, card: *card }));
                let mut pending = None;
                if let Some(r) = self.round.as_mut().filter(|r| r.phase != Some(RoundPhase::Collection)) {
                    if let Some(c) = r.cards.get_mut(track) {
                        c.gone = true;
                    }
                    let after_deal =
                        matches!(r.phase, Some(RoundPhase::Decisions | RoundPhase::Reveal | RoundPhase::Settlement));
                    if let (true, Some(TableZone::Seat(s))) = (after_deal, from) {
                        pending = Some(*s);
                    }
                }
                if let Some(s) = pending {
                    // Its place seen bare with the rest of the hand in view, or reported only once
                    // the tracker stopped waiting for it to come back (`revive_frames`, as long as
                    // the window) with no card put there meanwhile: taken away, flagged now. A
                    // card put in its place within the window still makes it a swap, which
                    // supersedes this flag.
                    let window = u64::from(self.opts.swap_window_frames);
                    let waited_out = frame.saturating_sub(*since) >= window;
                    let detail = if *seen_bare {
                        Some(format!("a card was taken from seat {s}'s hand: its place is bare"))
                    } else {
                        waited_out.then(|| unreplaced(s, window))
                    };
                    let now = detail.and_then(|detail| {
                        self.raise(IrregularityKind::CardRemoved, Some(s), frame, t, detail, None, &mut out)
                    });
                    if let Some(r) = self.round.as_mut() {
                        // The swap window runs from the frame the card was lost, or from its
                        // report where that came at the window's end.
                        let start = if waited_out { frame } else { *since };
                        r.pending_removals.push((s, start, now));
                    }
                }
            }
            TrackEventKind::SetAside { track } => {
                if let Some(r) = self.round.as_mut() {
                    if let Some(c) = r.cards.get_mut(track) {
                        // Left out of the hand, in view (fortune3cp-2008 Art. 11(2)): no card of
                        // it for the count, the order or the settlement, still one of the deck's.
                        let delivery = (c.home, c.arrival_frame);
                        c.home = TableZone::Discard;
                        r.sequence.retain(|x| *x != delivery);
                        // A deviation its replacement seemed to make is judged again without it.
                        r.deviation = None;
                    }
                    if r.aside_pending == Some(*track) {
                        r.aside_pending = None;
                    }
                    r.aside_done = true;
                }
                self.check_order(frame, t, &mut out);
            }
            TrackEventKind::DealAbandoned => {
                if let Some(r) = self.round.as_mut() {
                    for c in r.cards.values_mut() {
                        c.gone = true;
                    }
                    r.sequence.clear();
                    r.deviation = None;
                    r.exposures.clear();
                    r.design_up_used = false;
                    r.aside_pending = None;
                    r.aside_done = false;
                }
                let detail = "cards collected during the deal: the deal is void and starts again".to_string();
                self.raise(IrregularityKind::ShufflerFailure, None, frame, t, detail, None, &mut out);
            }
            TrackEventKind::Folded { seat } => {
                if let Some(r) = self.round.as_mut() {
                    r.folds.insert(*seat);
                    // The hand's cards went to the discard rack: a card of it
                    // lost on the way (hidden in the gathered stack) was not removed.
                    r.pending_removals.retain(|(s, _, _)| s != seat);
                }
            }
            TrackEventKind::RoundEnded => {
                self.unread_turns_due(frame, t, true, &mut out);
                self.emit_outcome(frame, t, &mut out);
                self.round = None;
            }
        }
        out
    }

    fn apply_hint(&mut self, h: &BackendHint, frame: u64, t: f64, out: &mut Vec<Event>) {
        let Some(r) = self.round.as_mut() else { return };
        match h {
            // The round's jackpot; one told after the outcome is the next round's.
            BackendHint::Jackpot { pool, fixed } if r.outcome.is_none() => {
                // `reset_to` decides only the pool after the round, which is not published.
                r.jackpot = Some(ProgressivePool { pool: *pool, reset_to: 0, fixed: fixed.clone() });
            }
            BackendHint::Jackpot { .. } => self.early_hints.push(h.clone()),
            BackendHint::Bets { seat, wagers } => {
                r.hinted_wagers.insert(*seat, wagers.clone());
            }
            BackendHint::Decision { seat, decision } => {
                r.hinted_decisions.insert(*seat, *decision);
            }
            BackendHint::Dice { banker, total, capital } => {
                r.dice = Some(SanGongDeal { banker: Seat(*banker), dice_total: *total });
                r.banker_capital = *capital;
            }
            BackendHint::DealingMode { mode } => r.mode_hint = Some(*mode),
            BackendHint::ShufflerFault => {
                if !r.shuffler_fault_hinted {
                    r.shuffler_fault_hinted = true;
                    let detail = "the backend reported a shuffler fault".to_string();
                    self.raise(IrregularityKind::ShufflerFailure, None, frame, t, detail, None, out);
                }
            }
            BackendHint::RoundStart { .. } => {}
        }
    }

    /// The `seat` of a flag about a hand in `zone`. The San Gong banker's hand
    /// is a place, numbered like the others (sangong-1996 Art. 3(1): eight
    /// places "incluindo o do banqueiro"; the croupier holds no hand), so its
    /// flags name that place, with or without the dice hint that tells which
    /// place banks; only the dealer's own hand (other games) is `None`.
    fn seat_of_zone(zone: TableZone) -> Option<u8> {
        match zone {
            TableZone::Seat(s) => Some(s),
            _ => None,
        }
    }

    /// Whether `zone` holds an exposed dealer card due to be set aside (`RoundRec::aside_pending`).
    fn aside_pending_in(r: &RoundRec, zone: TableZone) -> bool {
        r.aside_pending.and_then(|k| r.cards.get(&k)).is_some_and(|c| c.home == zone && !c.gone)
    }

    fn zone_count(r: &RoundRec, zone: TableZone) -> usize {
        r.cards.values().filter(|c| c.home == zone && !c.gone).count()
    }

    /// The prescribed deliveries (zone, cards), one list per dealing mode (or
    /// San Gong starting place) still possible.
    fn candidates(&self, r: &RoundRec) -> Vec<Vec<(TableZone, u8)>> {
        let seats: Vec<Seat> = self.bet_seats(r).into_iter().map(Seat).collect();
        let community_in_order = self.rs.options.community_cards_after_dealer();
        let expand = |plan: Vec<crate::rules::Delivery>| -> Vec<(TableZone, u8)> {
            plan.iter()
                .filter_map(|d| {
                    let z = match d.to {
                        Position::Seat(s) => TableZone::Seat(s.0),
                        Position::Dealer => TableZone::Dealer,
                        Position::Community if community_in_order => TableZone::Community,
                        Position::Community | Position::Discard => return None,
                    };
                    Some((z, d.cards))
                })
                .collect()
        };
        if self.rs.kind == GameKind::SanGong {
            if let Some(deal) = r.dice {
                let req = DealRequest {
                    mode: DealingMode::Shuffler,
                    seats_with_bets: vec![],
                    progressive_present: false,
                    shuffler_gives_three_for_community: false,
                    sangong: Some(deal),
                };
                return deal_plan(&self.rs, &req).map(expand).into_iter().collect();
            }
            // Without the dice total any starting place is possible (Art. 2(2));
            // the order is still counter-clockwise, three cards each.
            let per = self.rs.cards_per_hand;
            return (1..=SANGONG_PLACES)
                .map(|first| {
                    (0..SANGONG_PLACES).map(|i| (TableZone::Seat(counter_clockwise(Seat(first), i).0), per)).collect()
                })
                .collect();
        }
        // Unknown Progressive: the deal with and without the community cards.
        let progressive: &[bool] = match self.progressive_present(r) {
            Some(true) => &[true],
            Some(false) => &[false],
            None => &[false, true],
        };
        // … and, where the table's option allows both, either turn of the dealer's cards
        let turns = self.rs.dealer_turns();
        let mut plans: Vec<Vec<(TableZone, u8)>> = Vec::new();
        for p in self.rs.dealing.iter().filter(|p| r.mode_hint.map_or(true, |m| m == p.mode)) {
            for (&progressive_present, &turn) in progressive.iter().flat_map(|pr| turns.iter().map(move |t| (pr, t))) {
                let req = DealRequest {
                    mode: p.mode,
                    seats_with_bets: seats.clone(),
                    progressive_present,
                    shuffler_gives_three_for_community: false,
                    sangong: None,
                };
                if let Some(plan) = deal_plan_with_turn(&self.rs, &req, turn).ok().map(expand) {
                    // a turn that changes nothing (cards dealt several at a time) is one plan
                    if turns.len() == 1 || !plans.contains(&plan) {
                        plans.push(plan);
                    }
                }
            }
        }
        plans
    }

    #[allow(clippy::too_many_arguments)]
    fn on_dealt(
        &mut self,
        track: u32,
        zone: TableZone,
        order: u32,
        face_up: bool,
        card: Option<Card>,
        phase: RoundPhase,
        frame: u64,
        t: f64,
        out: &mut Vec<Event>,
    ) {
        // Once the cards go to the discard rack, a card coming to rest in a zone
        // is one of them in passage (the dealer sweeps hands past the dealer's
        // place), not a card dealt: the outcome is already published (qpoker
        // clean seed 44 round 2 flagged "dealer has 4 cards" and voided it).
        if zone == TableZone::Discard || phase == RoundPhase::Collection || self.round.is_none() {
            return;
        }
        let per = self.rs.cards_per_hand as usize;
        let dealer = self.round.as_ref().and_then(|r| self.dealer_zone(r));
        let bet_seats = self.round.as_ref().map(|r| self.bet_seats(r)).unwrap_or_default();
        let during_deal = matches!(phase, RoundPhase::Dealing | RoundPhase::WaitingForBets);
        {
            let r = self.round.as_mut().expect("checked");
            r.cards.insert(
                track,
                CardRec {
                    home: zone,
                    order,
                    arrival_frame: frame,
                    identity: card,
                    rank: None,
                    seen_up: face_up,
                    disputed: None,
                    gone: false,
                    collected: false,
                },
            );
            // A card of this hand "turned up" just before: this card landing on it.
            let (under, keep): (Vec<_>, Vec<_>) = r
                .unread_turns
                .iter()
                .partition(|(k, z, f)| *k != track && *z == zone && frame.saturating_sub(*f) <= COVER_TURN_FRAMES);
            r.turned_under.extend(under.into_iter().map(|(k, _, _)| k));
            r.unread_turns = keep;
        }
        // A card arriving in a hand after a card left it: a swap.
        if let TableZone::Seat(s) = zone {
            let r = self.round.as_mut().expect("checked");
            if let Some(i) = r.pending_removals.iter().position(|(seat, _, _)| *seat == s) {
                let (_, _, removed) = r.pending_removals.remove(i);
                let detail = format!("a card left seat {s}'s hand and another card was put in its place");
                self.raise(IrregularityKind::CardSwapped, Some(s), frame, t, detail, removed, out);
                return;
            }
        }
        let no_bet_hand = matches!(zone, TableZone::Seat(s) if !bet_seats.contains(&s) && Some(zone) != dealer);
        // Community cards come at any point of the deal by default (fortune3cp-2025 Art. 11(3)
        // names none, docs/rules.md A-6): only `community_card_timing = after_dealer` puts them in
        // the order the deal is checked against.
        let in_order = zone != TableZone::Community || self.rs.options.community_cards_after_dealer();
        if during_deal && !no_bet_hand && in_order {
            let r = self.round.as_mut().expect("checked");
            r.sequence.push((zone, frame));
            self.check_order(frame, t, out);
        }
        // Too many cards.
        let r = self.round.as_ref().expect("checked");
        let n = Self::zone_count(r, zone);
        match zone {
            TableZone::Community => {
                // With no Progressive bet none are due, but two are no breach unless the table
                // says so (Art. 15(2) speaks of them on a table where nobody bet; A-6).
                let none_due = self.progressive_present(r) == Some(false);
                let allowed = if none_due && self.rs.options.community_without_progressive_breach() {
                    0
                } else {
                    self.rs.community_cards as usize
                };
                if n > allowed {
                    let detail = format!("{n} community cards where {allowed} are dealt");
                    self.raise(IrregularityKind::WrongCommunityCards, None, frame, t, detail, None, out);
                }
            }
            _ if n - usize::from(Self::aside_pending_in(r, zone)) > per => {
                let seat = Self::seat_of_zone(zone);
                let detail = format!("{zone} has {n} cards where {per} are dealt");
                self.raise(IrregularityKind::WrongCardCount, seat, frame, t, detail, None, out);
            }
            _ => {}
        }
        if let (true, TableZone::Seat(s)) = (no_bet_hand, zone) {
            let detail = format!("cards dealt to seat {s}, which has no bet");
            self.raise(IrregularityKind::CardsToHandWithoutBet, Some(s), frame, t, detail, None, out);
        }
        if face_up && during_deal {
            self.exposure(track, zone, order, frame, t, out);
        }
    }

    fn exposure(&mut self, track: u32, zone: TableZone, order: u32, frame: u64, t: f64, out: &mut Vec<Event>) {
        let Some(r) = self.round.as_ref() else { return };
        let dealer = self.dealer_zone(r);
        if zone == TableZone::Community {
            return;
        }
        if Some(zone) == dealer {
            // stud-2004 Art. 7: the dealer's last card is dealt face up by design
            // (from a shuffler: one card of the dealer's packet).
            if self.rs.face_up_by_design == FaceUpByDesign::DealerLastCard && !r.design_up_used {
                let shuffler = self.mode(r) == Some(DealingMode::Shuffler);
                if order as usize == self.rs.cards_per_hand as usize || shuffler {
                    self.round.as_mut().expect("checked").design_up_used = true;
                    return;
                }
            }
            // stud-2004 Art. 11(1) "duas ou mais cartas": by default a dealer card counts with
            // the players' (C-7); a second exposure voids the round whoever's it is.
            let counts = self.rs.id == RulesetId::Stud2004 && self.rs.options.stud_exposures_count_dealer_cards();
            let first = r.exposures.first().map(|e| e.0);
            let id = match first.filter(|_| counts) {
                Some(first) => {
                    let detail = format!("a dealer card (no. {order}) was dealt face up: a second card exposed");
                    self.raise(IrregularityKind::SeveralPlayerCardsExposed, None, frame, t, detail, Some(first), out)
                }
                None => {
                    let seat = Self::seat_of_zone(zone);
                    let detail = format!("a dealer card (no. {order}) was dealt face up");
                    self.raise(IrregularityKind::DealerCardExposed, seat, frame, t, detail, None, out)
                }
            };
            let sets_aside = self.rs.exposed_dealer_card() == Some(Consequence::DealerCardSetAside);
            let r = self.round.as_mut().expect("checked");
            if counts && r.exposures.len() < 2 {
                r.exposures.extend(id.map(|id| (id, true)));
            }
            if sets_aside && !r.aside_done && r.aside_pending.is_none() {
                // fortune3cp-2008 Art. 11(2): the card is left out, face up, and the hand gets
                // another; until it is seen leaving, its replacement is no card too many.
                r.aside_pending = Some(track);
            }
            return;
        }
        let TableZone::Seat(s) = zone else { return };
        let r = self.round.as_mut().expect("checked");
        match r.exposures.first().copied() {
            None => {
                let detail = format!("seat {s} card {order} was dealt face up");
                if let Some(id) =
                    self.raise(IrregularityKind::OnePlayerCardExposed, Some(s), frame, t, detail, None, out)
                {
                    self.round.as_mut().expect("checked").exposures.push((id, false));
                }
            }
            Some((first, by_dealer)) if r.exposures.len() == 1 => {
                let detail = if by_dealer {
                    format!("a player card (seat {s} card {order}) was dealt face up after a dealer card")
                } else {
                    format!("a second player card (seat {s} card {order}) was dealt face up")
                };
                if let Some(id) =
                    self.raise(IrregularityKind::SeveralPlayerCardsExposed, None, frame, t, detail, Some(first), out)
                {
                    self.round.as_mut().expect("checked").exposures.push((id, false));
                }
            }
            Some(_) => {}
        }
    }

    /// The dealing mode: told, or seen (several cards landing together in one zone).
    fn mode(&self, r: &RoundRec) -> Option<DealingMode> {
        if let Some(m) = r.mode_hint {
            return Some(m);
        }
        if self.rs.dealing.len() == 1 {
            return Some(self.rs.dealing[0].mode);
        }
        let mut it = r.sequence.iter();
        let (a, b) = (it.next()?, it.next()?);
        Some(if a.0 == b.0 && b.1 - a.1 <= u64::from(self.opts.packet_frames) {
            DealingMode::Shuffler
        } else {
            DealingMode::Shoe
        })
    }

    fn check_order(&mut self, frame: u64, t: f64, out: &mut Vec<Event>) {
        let Some(r) = self.round.as_ref() else { return };
        if r.order_checked {
            return;
        }
        let seq: Vec<TableZone> = r.sequence.iter().map(|x| x.0).collect();
        let candidates = self.candidates(r);
        let results: Vec<Result<(), (usize, TableZone)>> =
            candidates.iter().map(|c| match_deliveries(c, &seq)).collect();
        if results.is_empty() || results.iter().any(Result::is_ok) {
            return;
        }
        // An exposed dealer card due to be set aside may already be replaced while still in view
        // (fortune3cp-2008 Art. 11(2)): its replacement takes its turn.
        if let Some(c) = r.aside_pending.and_then(|k| r.cards.get(&k)) {
            let without: Vec<TableZone> =
                r.sequence.iter().filter(|x| **x != (c.home, c.arrival_frame)).map(|x| x.0).collect();
            if candidates.iter().any(|cand| match_deliveries(cand, &without).is_ok()) {
                return;
            }
        }
        // No prescribed sequence still possible. For each, its first deviation
        // (arrival `at` went to `got` where `missed` was due) is told apart by
        // the first arrival elsewhere after it: the missed hand served next is
        // a swap of two deliveries, anything else means the hand was passed
        // over. With several sequences possible (a San Gong deal without the
        // dice total, Art. 2(2); shoe or shuffler) one that a single swap of
        // two deliveries explains decides at once; otherwise the one followed
        // longest decides once it is told apart.
        let mut best: Option<(usize, TableZone, Option<usize>)> = None;
        let mut swap: Option<usize> = None;
        for (c, res) in candidates.iter().zip(&results) {
            let Err((at, missed)) = *res else { continue };
            let got = seq[at];
            let next = (at + 1..seq.len()).find(|&j| seq[j] != got);
            if let Some(j) = next.filter(|&j| seq[j] == missed) {
                // The two deliveries put back in their order must follow the sequence.
                let run = (j..seq.len()).take_while(|&k| seq[k] == missed).count();
                let mut fixed: Vec<TableZone> = seq[..at].to_vec();
                fixed.extend_from_slice(&seq[j..j + run]);
                fixed.extend_from_slice(&seq[at..j]);
                fixed.extend_from_slice(&seq[j + run..]);
                if candidates.len() == 1 || match_deliveries(c, &fixed).is_ok() {
                    swap = Some(swap.map_or(at, |s: usize| s.min(at)));
                }
            }
            if best.map_or(true, |b| at > b.0) {
                best = Some((at, missed, next));
            }
        }
        let Some((at, missed, next)) = best else { return };
        let dev = Deviation { index: at, got: seq[at], missed, frame: r.sequence[at].1 };
        if let Some(index) = swap {
            self.flag_order(Deviation { index, ..dev }, None, frame, t, out);
            return;
        }
        match next {
            Some(_) => {
                let seat = Self::seat_of_zone(dev.missed);
                self.flag_order(dev, seat, frame, t, out);
            }
            None => {
                // The order is already broken; whether the hand due was passed over (its seat
                // is flagged) or served out of turn (a swap: no seat) shows only with the next
                // delivery elsewhere, often half a second later. The room is told now, without
                // a seat. Only where every sequence still considered (dealing modes, with or
                // without the community cards) breaks at this delivery with this seat due: with
                // San Gong's unknown dice the deciding sequence may still change, and a dealer's
                // card left out is a wrong count, not an order breach.
                let provisional = Self::seat_of_zone(dev.missed).is_some()
                    && results.iter().all(|res| *res == Err((dev.index, dev.missed)));
                let flag_frame = frame.max(dev.frame);
                let detail = format!(
                    "card {} of the deal went to {} where the ruleset prescribes {} (whether {} was passed over shows with the next delivery)",
                    dev.index + 1,
                    dev.got,
                    dev.missed,
                    dev.missed
                );
                self.round.as_mut().expect("checked").deviation = Some(dev);
                if provisional && self.round.as_ref().is_some_and(|r| r.provisional_order_flag.is_none()) {
                    let id = self.raise(IrregularityKind::WrongDealOrder, None, flag_frame, t, detail, None, out);
                    self.round.as_mut().expect("checked").provisional_order_flag = id;
                }
            }
        }
    }

    fn flag_order(&mut self, dev: Deviation, seat: Option<u8>, frame: u64, t: f64, out: &mut Vec<Event>) {
        let mut provisional = None;
        if let Some(r) = self.round.as_mut() {
            r.order_checked = true;
            r.deviation = None;
            provisional = r.provisional_order_flag;
        }
        // A dealer or community card left out at its turn is a wrong count, not an order breach.
        if seat.is_none() && Self::seat_of_zone(dev.missed).is_some() || seat.is_some() {
            let detail = format!(
                "card {} of the deal went to {} where the ruleset prescribes {}",
                dev.index + 1,
                dev.got,
                dev.missed
            );
            // A swap (no seat) is the provisional flag itself, already raised.
            let supersedes = provisional.filter(|_| seat.is_some());
            self.raise(IrregularityKind::WrongDealOrder, seat, frame.max(dev.frame), t, detail, supersedes, out);
        }
    }

    fn deal_complete(&mut self, frame: u64, t: f64, out: &mut Vec<Event>) {
        let Some(r) = self.round.as_mut() else { return };
        if r.deal_complete {
            return;
        }
        r.deal_complete = true;
        if let Some(dev) = r.deviation.clone() {
            let seat = Self::seat_of_zone(dev.missed);
            self.flag_order(dev, seat, frame, t, out);
        }
        let r = self.round.as_ref().expect("checked");
        let per = self.rs.cards_per_hand as usize;
        let dealer = self.dealer_zone(r);
        let mut short: Vec<(Option<u8>, String)> = Vec::new();
        for s in self.bet_seats(r) {
            let n = Self::zone_count(r, TableZone::Seat(s));
            if n < per {
                short.push((Some(s), format!("seat {s} has {n} cards where {per} are dealt")));
            }
        }
        if let Some(d) = dealer {
            let n = Self::zone_count(r, d);
            if n > per && Self::aside_pending_in(r, d) {
                // The exposed card was replaced but never left the hand.
                let detail =
                    format!("the dealer has {n} cards where {per} are dealt (the exposed card was not set aside)");
                short.push((Self::seat_of_zone(d), detail));
            }
            if n < per {
                let who = if d == TableZone::Dealer { "the dealer".to_string() } else { format!("the banker's {d}") };
                short.push((Self::seat_of_zone(d), format!("{who} has {n} cards where {per} are dealt")));
            }
        }
        // With the Progressive unknown, none or all of the community cards are
        // both a legal deal. A part of them is not, but the deal's end is then
        // decided before they are due (the tracker does not wait for them), so
        // it is not judged here: NOT YET flagged without the backend's wagers.
        let community_short = self.progressive_present(r) == Some(true)
            && Self::zone_count(r, TableZone::Community) < self.rs.community_cards as usize;
        for (seat, detail) in short {
            self.raise(IrregularityKind::WrongCardCount, seat, frame, t, detail, None, out);
        }
        if community_short {
            let detail = "fewer community cards than a Progressive bet requires".to_string();
            self.raise(IrregularityKind::WrongCommunityCards, None, frame, t, detail, None, out);
        }
    }

    fn on_identified(
        &mut self,
        track: u32,
        card: Card,
        previous: Option<Card>,
        frame: u64,
        t: f64,
        out: &mut Vec<Event>,
    ) {
        let single_deck = self.rs.decks == 1;
        let Some(r) = self.round.as_mut() else { return };
        // A card seen turned up as a card landed on it, read during the deal: its face showed.
        if r.phase == Some(RoundPhase::Dealing) && r.turned_under.remove(&track) {
            if let Some(zone) = r.cards.get(&track).map(|c| c.home) {
                self.expose(track, zone, frame, t, out);
            }
        }
        let Some(r) = self.round.as_mut() else { return };
        let Some(rec) = r.cards.get_mut(&track) else { return };
        rec.identity = Some(card);
        let (home, arrival) = (rec.home, rec.arrival_frame);
        if previous.is_some_and(|p| p != card) {
            let seat = Self::seat_of_zone(home);
            let detail =
                format!("{home}: the card read {} now reads {card}", previous.map(|c| c.code()).unwrap_or_default());
            self.raise(IrregularityKind::CardSwapped, seat, frame, t, detail, None, out);
            return;
        }
        if single_deck {
            let r = self.round.as_ref().expect("checked");
            let twin = r
                .cards
                .iter()
                .find(|(id, c)| **id != track && !c.gone && c.identity == Some(card))
                .map(|(_, c)| (c.home, c.arrival_frame));
            if let Some((other_home, other_arrival)) = twin {
                let later = if (arrival, track) >= (other_arrival, 0) { home } else { other_home };
                let seat = Self::seat_of_zone(later);
                let detail = format!("{card} seen twice in a single-deck game ({other_home} and {home})");
                if let Some(id) = self.raise(IrregularityKind::DuplicateCard, seat, frame, t, detail, None, out) {
                    self.name_face(id, card, out);
                }
            }
        }
    }

    fn emit_outcome(&mut self, frame: u64, t: f64, out: &mut Vec<Event>) {
        let Some(r) = self.round.as_ref() else { return };
        let outcome = self.build_outcome(r);
        // Exactly one outcome per round; a later one only when the flags in force
        // changed (a correction).
        if r.outcome.as_ref().is_some_and(|o| o.flags == outcome.flags) {
            return;
        }
        // One outcome per round; a changed one later is a correction (the
        // sequencer links it to the first).
        self.round.as_mut().expect("checked").outcome = Some(outcome.clone());
        out.push(self.event(frame, t, EventBody::RoundOutcome(Box::new(outcome))));
    }

    /// A hand's decision: told, seen, or `None` when the camera cannot tell.
    fn decision_of(&self, r: &RoundRec, seat: u8, wagers: &[Wager], reasons: &mut Vec<String>) -> Option<Decision> {
        if let Some(d) = r.hinted_decisions.get(&seat) {
            return Some(*d);
        }
        if r.folds.contains(&seat) {
            return Some(Decision::Folded);
        }
        let chips = r.chips_at_reveal.as_ref();
        match self.rs.kind {
            GameKind::SanGong => Some(Decision::Played),
            GameKind::FortuneThreeCard | GameKind::Stud => {
                let spot = if self.rs.kind == GameKind::Stud { BetKind::Raise } else { BetKind::Play };
                match chips {
                    Some(c) if c.iter().any(|s| s.seat == seat && s.bet == spot) => Some(Decision::Played),
                    Some(_) => Some(Decision::Folded),
                    None => {
                        reasons.push(format!("seat {seat}: decision not seen (no reveal observed)"));
                        None
                    }
                }
            }
            GameKind::QPoker => {
                // A folded hand without side bets is collected at once; with a
                // Pair Plus bet its cards stay and the fold is invisible.
                if wagers.iter().any(|w| w.bet != BetKind::Bet) {
                    reasons.push(format!(
                        "seat {seat}: decision not seen (a Q Poker fold shows only when the cards are collected)"
                    ));
                    return None;
                }
                Some(Decision::Played)
            }
        }
    }

    fn wagers_of(&self, r: &RoundRec, seat: u8) -> Vec<Wager> {
        let order = |b: BetKind| self.rs.bet_spots.iter().position(|(k, _)| *k == b).unwrap_or(usize::MAX);
        let mut w: Vec<Wager> = match r.hinted_wagers.get(&seat) {
            Some(h) => h.iter().filter(|x| !matches!(x.bet, BetKind::Play | BetKind::Raise)).cloned().collect(),
            None => {
                let mut kinds: Vec<BetKind> = r
                    .chips_at_start
                    .iter()
                    .filter(|s| s.seat == seat && !matches!(s.bet, BetKind::Play | BetKind::Raise))
                    .map(|s| s.bet)
                    .collect();
                kinds.dedup();
                kinds.into_iter().map(|bet| Wager { bet, stake: None }).collect()
            }
        };
        if self.rs.kind == GameKind::SanGong && w.is_empty() {
            w.push(Wager { bet: BetKind::Bet, stake: None });
        }
        w.sort_by_key(|x| order(x.bet));
        w
    }

    fn build_outcome(&self, r: &RoundRec) -> RoundOutcome {
        let mut reasons: Vec<String> = Vec::new();
        let dealer_zone = self.dealer_zone(r);
        if dealer_zone.is_none() {
            reasons.push("the banker's place is not known (no dice hint, chips ambiguous)".into());
        }
        let cards_in = |zone: TableZone| -> Vec<(u32, &CardRec)> {
            let mut v: Vec<(u32, &CardRec)> =
                r.cards.iter().filter(|(_, c)| c.home == zone && !c.gone).map(|(id, c)| (*id, c)).collect();
            v.sort_by_key(|(id, c)| (c.order, *id));
            v
        };
        let seen = |v: &[(u32, &CardRec)]| -> Vec<CardSeen> {
            v.iter()
                .map(|(id, c)| CardSeen { track: *id, card: c.identity, rank: c.rank.filter(|_| c.identity.is_none()) })
                .collect()
        };
        let dealer_cards = dealer_zone.map(cards_in).unwrap_or_default();
        let community_cards = cards_in(TableZone::Community);
        let mut seats: BTreeSet<u8> = self.bet_seats(r);
        for c in r.cards.values() {
            if let TableZone::Seat(s) = c.home {
                if Some(c.home) != dealer_zone && !c.gone {
                    seats.insert(s);
                }
            }
        }
        let effective = Self::effective_flags(r);
        let irregularities: Vec<Observed> =
            effective.iter().map(|f| Observed { kind: f.irregularity, seat: f.seat.map(Seat) }).collect();
        let voided = effective.iter().find_map(|f| {
            let rule = self.rs.irregularity(f.irregularity)?;
            rule.consequence.voids_round().then_some(rule)
        });
        for f in &effective {
            if let Some(rule) = self.rs.irregularity(f.irregularity) {
                if rule.consequence == Consequence::SurveillanceReview {
                    reasons.push(format!(
                        "{} at {}: surveillance review ({})",
                        f.irregularity.as_str(),
                        f.seat.map_or("the table".to_string(), |s| format!("seat {s}")),
                        rule.citation
                    ));
                }
            }
        }

        let mut hands: Vec<HandRound> = Vec::new();
        // Cards known by their rank only, settled for every suit they may have.
        let mut open: Vec<(Place, Rank)> = Vec::new();
        let mut hand_cards: BTreeMap<u8, Vec<CardSeen>> = BTreeMap::new();
        let mut unseen_folded: Vec<u8> = Vec::new();
        let mut unsettled = false;
        let mut decisions: BTreeMap<u8, Decision> = BTreeMap::new();
        let mut undecided: Vec<u8> = Vec::new();
        for &s in &seats {
            let cs = cards_in(TableZone::Seat(s));
            hand_cards.insert(s, seen(&cs));
            let wagers = if self.bet_seats(r).contains(&s) { self.wagers_of(r, s) } else { vec![] };
            let seen_decision =
                if wagers.is_empty() { Some(Decision::Played) } else { self.decision_of(r, s, &wagers, &mut reasons) };
            if seen_decision.is_none() {
                undecided.push(s);
            }
            let decision = seen_decision.unwrap_or_default();
            decisions.insert(s, decision);
            let mut wagers = wagers;
            if decision == Decision::Played {
                let extra = match self.rs.kind {
                    GameKind::FortuneThreeCard => Some((BetKind::Play, 1)),
                    GameKind::Stud => Some((BetKind::Raise, 2)),
                    _ => None,
                };
                if let Some((bet, times)) = extra {
                    let ante = wagers.iter().find(|w| w.bet == BetKind::Ante).and_then(|w| w.stake);
                    if !wagers.is_empty() {
                        wagers.push(Wager { bet, stake: ante.map(|a| a * times) });
                    }
                }
            }
            let known: Vec<Card> = cs.iter().filter_map(|(_, c)| c.identity).collect();
            let ranks = by_rank(&cs);
            let complete = known.len() + ranks.len() == cs.len() && cs.len() == self.rs.cards_per_hand as usize;
            if complete {
                open.extend(ranks.into_iter().map(|r| (Place::Seat(s), r)));
            } else {
                if wagers.is_empty() {
                    continue; // a null hand: nothing to settle
                }
                if decision == Decision::Folded && cs.iter().all(|(_, c)| c.collected) {
                    unseen_folded.push(s);
                } else if voided.is_none() {
                    for (k, (_, c)) in cs.iter().enumerate() {
                        if c.identity.is_none() && c.rank.is_none() {
                            reasons.push(format!("seat {s} card {} {}", k + 1, unread(c)));
                        }
                    }
                    if cs.len() != self.rs.cards_per_hand as usize {
                        reasons.push(format!("seat {s} has {} cards", cs.len()));
                    }
                    unsettled = true;
                }
            }
            hands.push(HandRound { seat: Seat(s), cards: known, wagers, decision });
        }
        let dealer_known: Vec<Card> = dealer_cards.iter().filter_map(|(_, c)| c.identity).collect();
        let dealer_ranks = by_rank(&dealer_cards);
        if dealer_known.len() + dealer_ranks.len() == self.rs.cards_per_hand as usize {
            open.extend(dealer_ranks.into_iter().map(|r| (Place::Dealer, r)));
        } else if voided.is_none() {
            for (k, (_, c)) in dealer_cards.iter().enumerate() {
                if c.identity.is_none() && c.rank.is_none() {
                    reasons.push(format!("dealer card {} {}", k + 1, unread(c)));
                }
            }
            unsettled = true;
        }
        // Community cards are dealt only for Progressive bets (fortune3cp-2025 Art. 11(3)); where
        // the Progressive shares the Six Card Bonus spot and no backend named the wagers, the chips
        // there may be either, so the results of those hands cannot be verified.
        if voided.is_none() && self.progressive_present(r).is_none() && !community_cards.is_empty() {
            for h in hands.iter().filter(|h| h.wagers.iter().any(|w| w.bet == BetKind::SixCardBonus)) {
                reasons.push(format!(
                    "seat {}: the chips on the Six Card Bonus spot may be a Progressive wager (community cards \
                     were dealt, Art. 11(3); the backend's wagers tell)",
                    h.seat.0
                ));
            }
        }
        let progressive = hands.iter().any(|h| h.wagers.iter().any(|w| w.bet == BetKind::Progressive));
        let community_known: Vec<Card> = community_cards.iter().filter_map(|(_, c)| c.identity).collect();
        let community_ranks = by_rank(&community_cards);
        if progressive && community_known.len() + community_ranks.len() == self.rs.community_cards as usize {
            open.extend(community_ranks.into_iter().map(|r| (Place::Community, r)));
        } else if voided.is_none() && progressive {
            reasons.push("community cards never seen face up".into());
            unsettled = true;
        }
        let round = Round {
            hands,
            dealer: dealer_known,
            community: if progressive { community_known } else { vec![] },
            irregularities,
            progressive_pool: r.jackpot.clone(),
            max_payout: None,
            // Settled within the banker's capital once the backend has told it (Art. 5(3)).
            sangong_bank: r
                .dice
                .zip(r.banker_capital)
                .map(|(deal, capital)| crate::rules::settle::SanGongBank { deal, capital }),
        };
        let settlement: Option<Settlement> = if voided.is_some() {
            settle(&self.rs, &round).ok()
        } else if unsettled {
            None
        } else {
            self.settle_robust(&round, &unseen_folded, &undecided, &open, &mut reasons)
        };
        if settlement.is_none() && !unsettled && voided.is_none() {
            reasons.push("the rules engine could not settle the cards seen".into());
        }
        let folds: Vec<u8> = decisions
            .iter()
            .filter(|(s, d)| **d == Decision::Folded && !undecided.contains(s))
            .map(|(s, _)| *s)
            .collect();
        let mut results: Vec<HandResult> = Vec::new();
        for &s in &seats {
            let hs = settlement.as_ref().and_then(|st| st.hands.iter().find(|h| h.seat == Seat(s)));
            // A Progressive won without the round's jackpot: its category and article are known,
            // its amount (so its multiple) is not. Left out rather than reported as nothing won.
            let unpaid = |b: &&crate::rules::settle::BetSettlement| {
                b.bet == BetKind::Progressive && b.outcome == Outcome::Win && r.jackpot.is_none()
            };
            if let Some(b) = hs.and_then(|h| h.bets.iter().find(unpaid)) {
                let article = b.citations.first().map(|c| c.to_string()).unwrap_or_default();
                reasons.push(format!(
                    "seat {s}: its Progressive bet wins a jackpot award ({article}) whose amount the backend has not told"
                ));
            }
            let unseen = unseen_folded.contains(&s);
            results.push(HandResult {
                seat: s,
                cards: hand_cards.get(&s).cloned().unwrap_or_default(),
                hand: if unseen { String::new() } else { hs.map(|h| h.hand.clone()).unwrap_or_default() },
                decision: decisions.get(&s).copied().unwrap_or_default(),
                null: hs.and_then(|h| h.null.map(|c| c.to_string())),
                bets: hs
                    .map(|h| {
                        h.bets
                            .iter()
                            .filter(|b| !unpaid(b))
                            .map(|b| BetResult {
                                bet: b.bet,
                                outcome: serde_json::to_value(b.outcome)
                                    .ok()
                                    .and_then(|v| v.as_str().map(str::to_string))
                                    .unwrap_or_default(),
                                net_multiple: b.net_multiple,
                                stake: b.stake,
                                net_amount: b.net_amount,
                                citations: b.citations.iter().map(|c| c.to_string()).collect(),
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
            });
        }
        let (status, void_citation, carries) = match settlement.as_ref().map(|s| &s.status) {
            Some(RoundStatus::Settled) => ("settled", None, None),
            Some(RoundStatus::Void { citation, progressive_carries_over, .. }) => {
                ("void", Some(citation.to_string()), Some(*progressive_carries_over))
            }
            None => ("unsettled", None, None),
        };
        reasons.dedup();
        RoundOutcome {
            ruleset: self.rs.id,
            status: status.to_string(),
            void_citation,
            progressive_carries_over: carries,
            dealer: seen(&dealer_cards),
            dealer_hand: settlement.as_ref().map(|s| s.dealer_hand.clone()).unwrap_or_default(),
            dealer_qualifies: settlement.as_ref().and_then(|s| s.dealer_qualifies),
            community: seen(&community_cards),
            hands: results,
            folds,
            flags: effective.iter().map(|f| f.flag_id).collect(),
            verification: Verification {
                status: if reasons.is_empty() && settlement.is_some() {
                    VerificationStatus::Verified
                } else {
                    VerificationStatus::Unverified
                },
                reasons,
            },
            supersedes: None,
        }
    }

    /// Settles a round with hands whose cards or decision were not seen: folded
    /// hands collected face down (a fold usually loses whatever the cards), Q Poker
    /// decisions the camera cannot see, and cards known by their rank only (`open`).
    /// The round is settled every way those unknowns could go (a weak and a strong
    /// stand-in hand; played and folded; every suit each open card may have, none
    /// twice and none a card seen elsewhere); a bet that comes out the same every way
    /// is settled, one that does not is left out (never guessed) and the reason
    /// reported.
    fn settle_robust(
        &self,
        round: &Round,
        unseen: &[u8],
        undecided: &[u8],
        open: &[(Place, Rank)],
        reasons: &mut Vec<String>,
    ) -> Option<Settlement> {
        if unseen.is_empty() && undecided.is_empty() && open.is_empty() {
            return settle(&self.rs, round)
                .map_err(|e| reasons.push(format!("the rules engine refused the round: {e}")))
                .ok();
        }
        let seen: BTreeSet<Card> = round
            .hands
            .iter()
            .flat_map(|h| h.cards.iter().copied())
            .chain(round.dealer.iter().copied())
            .chain(round.community.iter().copied())
            .collect();
        let Some(suits) = suit_assignments(open, &seen) else {
            reasons.push(format!(
                "{} cards known by their rank only: more suits to try than {MAX_SUIT_VARIANTS} settlements",
                open.len()
            ));
            return None;
        };
        if suits.is_empty() {
            reasons.push("the cards known by their rank only fit no card left in the deck".into());
            return None;
        }
        let n = self.rs.cards_per_hand as usize;
        let mut results: Vec<Settlement> = Vec::new();
        // the stand-in and decision variants only where a hand needs them
        let strongs: &[bool] = if unseen.is_empty() { &[false] } else { &[false, true] };
        let folds: &[bool] = if undecided.is_empty() { &[false] } else { &[false, true] };
        for assigned in &suits {
            for &strong in strongs {
                for &fold in folds {
                    let mut r = round.clone();
                    for (&(place, _), &card) in open.iter().zip(assigned) {
                        match place {
                            Place::Seat(s) => {
                                if let Some(h) = r.hands.iter_mut().find(|h| h.seat.0 == s) {
                                    h.cards.push(card);
                                }
                            }
                            Place::Dealer => r.dealer.push(card),
                            Place::Community => r.community.push(card),
                        }
                    }
                    let mut used: BTreeSet<Card> = seen.iter().chain(assigned).copied().collect();
                    for h in r.hands.iter_mut() {
                        if unseen.contains(&h.seat.0) {
                            let Some(cards) = stand_in(n, strong, &used) else {
                                reasons.push(format!("seat {}: no stand-in hand left for its unseen cards", h.seat.0));
                                return None;
                            };
                            used.extend(cards.iter().copied());
                            h.cards = cards;
                        }
                        if undecided.contains(&h.seat.0) {
                            h.decision = if fold { Decision::Folded } else { Decision::Played };
                        }
                    }
                    match settle(&self.rs, &r) {
                        Ok(st) => results.push(st),
                        Err(e) => {
                            reasons.push(format!("the rules engine refused the round with stand-ins: {e}"));
                            return None;
                        }
                    }
                }
            }
        }
        let mut first = results[0].clone();
        for h in first.hands.iter_mut() {
            let s = h.seat.0;
            if open.is_empty() && !unseen.contains(&s) && !undecided.contains(&s) {
                continue;
            }
            let same = |b: &crate::rules::settle::BetSettlement| {
                results
                    .iter()
                    .all(|r| r.hands.iter().find(|x| x.seat == h.seat).is_some_and(|x| x.bets.iter().any(|y| y == b)))
            };
            let before = h.bets.len();
            h.bets.retain(same);
            if h.bets.len() != before {
                reasons.push(if unseen.contains(&s) {
                    format!("seat {s} folded and was collected face down: its result depends on cards never seen")
                } else if undecided.contains(&s) {
                    format!("seat {s}: bets that depend on the unseen decision are not settled")
                } else {
                    format!("seat {s}: its result depends on the suit of a card known by its rank only")
                });
            }
            // A combination named from a stand-in suit ("flush") is no fact about the hand.
            if results.iter().any(|r| r.hands.iter().find(|x| x.seat == h.seat).is_some_and(|x| x.hand != h.hand)) {
                h.hand = String::new();
            }
        }
        if results.iter().any(|r| r.dealer_hand != first.dealer_hand) {
            first.dealer_hand = String::new();
        }
        if results.iter().any(|r| r.dealer_qualifies != first.dealer_qualifies) {
            first.dealer_qualifies = None;
        }
        if results.iter().any(|r| r.banker_net != first.banker_net) {
            first.banker_net = None;
        }
        Some(first)
    }
}

/// Where a card known by its rank only lies ([`Verifier::settle_robust`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Seat(u8),
    Dealer,
    Community,
}

/// The ranks of a zone's cards known by their rank only, in its order.
fn by_rank(cards: &[(u32, &CardRec)]) -> Vec<Rank> {
    cards.iter().filter(|(_, c)| c.identity.is_none()).filter_map(|(_, c)| c.rank).collect()
}

/// At most this many suit assignments are settled for a round's cards known by their rank
/// only (each times the four stand-in and decision variants): five such cards of four free
/// suits each.
const MAX_SUIT_VARIANTS: usize = 1024;

/// Every way to give the cards known by their rank only (`open`) a suit: each a card not
/// `seen` and none twice. `None` when there are more than [`MAX_SUIT_VARIANTS`].
fn suit_assignments(open: &[(Place, Rank)], seen: &BTreeSet<Card>) -> Option<Vec<Vec<Card>>> {
    let mut out: Vec<Vec<Card>> = vec![Vec::new()];
    for &(_, rank) in open {
        let mut next = Vec::new();
        for partial in &out {
            for suit in Suit::ALL {
                let card = Card::new(rank, suit);
                if !seen.contains(&card) && !partial.contains(&card) {
                    let mut p = partial.clone();
                    p.push(card);
                    next.push(p);
                }
            }
        }
        if next.len() > MAX_SUIT_VARIANTS {
            return None;
        }
        out = next;
    }
    Some(out)
}

/// Whether the cards that arrived (zones in arrival order) follow the prescribed
/// deliveries. Cards of one packet may land a few frames apart (a card hidden
/// under its neighbours is seen late), so a late card of an earlier, unfinished
/// delivery is accepted, and so is the next delivery starting while a packet is
/// still landing. Extra cards are the card count's business. `Err((i, zone))`:
/// arrival `i` went elsewhere than to `zone`, whose turn it was.
fn match_deliveries(cand: &[(TableZone, u8)], seq: &[TableZone]) -> Result<(), (usize, TableZone)> {
    let mut remaining: Vec<u8> = cand.iter().map(|d| d.1).collect();
    let mut k = 0;
    for (i, &z) in seq.iter().enumerate() {
        while k < cand.len() && remaining[k] == 0 {
            k += 1;
        }
        if k >= cand.len() {
            return Ok(());
        }
        if cand[k].0 == z {
            remaining[k] -= 1;
            continue;
        }
        if let Some(j) = (0..k).rev().find(|&j| cand[j].0 == z && remaining[j] > 0) {
            remaining[j] -= 1;
            continue;
        }
        if remaining[k] < cand[k].1 {
            if let Some(j) = (k + 1..cand.len()).find(|&j| remaining[j] > 0).filter(|&j| cand[j].0 == z) {
                remaining[j] -= 1;
                k = j;
                continue;
            }
        }
        return Err((i, cand[k].0));
    }
    Ok(())
}

/// `n` cards not in `used`: a weak hand (no pair, straight or flush) or a
/// strong one (a straight flush, else n of a kind); `None` only when the
/// cards seen leave no such hand. Searched in a fixed order: deterministic.
fn stand_in(n: usize, strong: bool, used: &BTreeSet<Card>) -> Option<Vec<Card>> {
    let card = |rank: u8, suit: u8| Card::from_index(rank * 4 + suit);
    let free = |cards: Option<Vec<Card>>| cards.filter(|c| c.iter().all(|x| !used.contains(x)));
    if strong {
        for top in (n as u8 - 1..=12).rev() {
            for suit in (0..4).rev() {
                if let Some(c) = free((0..n as u8).map(|k| card(top - k, suit)).collect()) {
                    return Some(c);
                }
            }
        }
        // The most of a kind the free cards allow, then the highest free cards to fill.
        for k in (1..=n.min(4)).rev() {
            for rank in (0..13u8).rev() {
                let mut c: Vec<Card> = (0..4).filter_map(|s| card(rank, s)).filter(|x| !used.contains(x)).collect();
                if c.len() < k {
                    continue;
                }
                c.truncate(k);
                let more: Vec<Card> = (0..52u8)
                    .rev()
                    .filter_map(Card::from_index)
                    .filter(|x| !used.contains(x) && !c.contains(x))
                    .take(n - c.len())
                    .collect();
                c.extend(more);
                if c.len() == n {
                    return Some(c);
                }
            }
        }
        return None;
    }
    // n distinct ranks (index 0 = 2 … 12 = A) that make no straight (the
    // wheel A-2-3-4-5 and 3-card A-2-3 included), in free suits that are not
    // all one: no flush, no pair.
    let straight = |r: &[u8]| {
        let wheel = r.contains(&12) && r.iter().filter(|&&x| x != 12).all(|&x| (x as usize) < r.len() - 1);
        r.windows(2).all(|w| w[1] == w[0] + 1) || wheel
    };
    let mut ranks: Vec<u8> = (0..n as u8).collect();
    loop {
        if !straight(&ranks) {
            // A free suit for every rank, the first one that is not all one suit.
            let suits: Vec<Vec<u8>> = ranks
                .iter()
                .map(|&r| (0..4u8).filter(|&s| card(r, s).is_some_and(|c| !used.contains(&c))).collect())
                .collect();
            if suits.iter().all(|s| !s.is_empty()) {
                let mut pick: Vec<u8> = suits.iter().map(|s| s[0]).collect();
                if pick.iter().all(|&s| s == pick[0]) {
                    if let Some((k, other)) =
                        suits.iter().enumerate().find_map(|(k, s)| s.iter().find(|&&x| x != pick[0]).map(|&x| (k, x)))
                    {
                        pick[k] = other;
                    }
                }
                if pick.iter().any(|&s| s != pick[0]) {
                    return ranks.iter().zip(&pick).map(|(&r, &s)| card(r, s)).collect();
                }
            }
        }
        // The next combination of n ranks out of 13, in lexicographic order.
        let mut i = n;
        while i > 0 && ranks[i - 1] == 13 - (n - i + 1) as u8 {
            i -= 1;
        }
        if i == 0 {
            return None;
        }
        ranks[i - 1] += 1;
        for j in i..n {
            ranks[j] = ranks[j - 1] + 1;
        }
    }
}

/// The tracker and the verifier of one table camera: frames in, events out.
pub struct TableMonitor {
    tracker: Tracker,
    verifier: Verifier,
}

impl TableMonitor {
    /// A monitor for the table of `geometry` playing `rs`.
    pub fn new(
        rs: Ruleset,
        geometry: &TableGeometry,
        tracker: TrackerOptions,
        verifier: VerifierOptions,
    ) -> Result<TableMonitor, VerifyError> {
        Ok(TableMonitor {
            tracker: Tracker::new(rs.clone(), geometry, tracker)?,
            verifier: Verifier::new(rs, verifier)?,
        })
    }

    /// One frame: its events, in order (seq not yet stamped).
    pub fn push(&mut self, obs: &FrameObservations) -> Vec<Event> {
        let mut out = Vec::new();
        for ev in self.tracker.push(obs) {
            out.extend(self.verifier.process(&ev));
        }
        out.extend(self.verifier.tick(obs.frame, obs.time_ms));
        out
    }

    /// A backend hint (applied with the next frame).
    pub fn hint(&mut self, hint: BackendHint) {
        self.tracker.hint(hint);
    }

    /// End of the stream: closes an open round (its outcome says what was not seen).
    pub fn finish(&mut self) -> Vec<Event> {
        let mut out = Vec::new();
        for ev in self.tracker.finish() {
            out.extend(self.verifier.process(&ev));
        }
        out
    }

    /// The round's phase now.
    pub fn phase(&self) -> RoundPhase {
        self.tracker.phase()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::BetKind;
    use crate::track::SpotPresence;

    /// A round started at frame 1 with `chips` on the table, its deal begun.
    fn round_opened(chips: &[SpotPresence]) -> Vec<(u64, TrackEventKind)> {
        vec![
            (1, TrackEventKind::RoundStarted { chips: chips.to_vec(), by_hint: false }),
            (
                1,
                TrackEventKind::Phase {
                    from: RoundPhase::WaitingForBets,
                    to: RoundPhase::Dealing,
                    reason: "a card left the shoe".into(),
                    chips: chips.to_vec(),
                },
            ),
        ]
    }

    /// A face-down card dealt: track, zone, order in the zone, phase.
    fn dealt(track: u32, zone: TableZone, order: u32, phase: RoundPhase) -> TrackEventKind {
        TrackEventKind::Dealt { track, zone, order, face_up: false, card: None, phase }
    }

    /// A stud round opened at frame 1 with `chips`, five cards each to seat 1 and the dealer
    /// (frames 2–20), and the decisions from frame 30.
    fn stud_deal_to_seat_1(chips: &[SpotPresence]) -> Vec<(u64, TrackEventKind)> {
        let zones = [TableZone::Seat(1), TableZone::Dealer];
        deal_in_order(chips, &zones.repeat(5))
    }

    /// A round opened at frame 1 with `chips`, one face-down card to each of `zones` in turn
    /// (every other frame from frame 2), and the decisions from frame 30.
    fn deal_in_order(chips: &[SpotPresence], zones: &[TableZone]) -> Vec<(u64, TrackEventKind)> {
        let mut events = round_opened(chips);
        let mut orders = std::collections::HashMap::new();
        for (k, &zone) in zones.iter().enumerate() {
            let order = orders.entry(zone).and_modify(|o| *o += 1).or_insert(1u32);
            events.push((2 + 2 * k as u64, dealt(k as u32 + 2, zone, *order, RoundPhase::Dealing)));
        }
        let to = RoundPhase::Decisions;
        events.push((
            30,
            TrackEventKind::Phase { from: RoundPhase::Dealing, to, reason: "test".into(), chips: chips.to_vec() },
        ));
        events
    }

    /// The flags a stud verifier raises from `events` (frame, event), frames 0..`frames`.
    fn stud_flags(events: &[(u64, TrackEventKind)], frames: u64) -> Vec<(u64, RoundFlag)> {
        flags_of(RulesetId::Stud2004, events, frames)
    }

    /// The flags a verifier of `id` raises from `events` (frame, event), frames 0..`frames`.
    fn flags_of(id: RulesetId, events: &[(u64, TrackEventKind)], frames: u64) -> Vec<(u64, RoundFlag)> {
        flags_with(Ruleset::new(id), events, frames)
    }

    /// The flags a verifier of `rs` raises from `events` (frame, event), frames 0..`frames`.
    fn flags_with(rs: Ruleset, events: &[(u64, TrackEventKind)], frames: u64) -> Vec<(u64, RoundFlag)> {
        let mut v = Verifier::new(rs, VerifierOptions::new("T", "C")).unwrap();
        let mut flags = Vec::new();
        for frame in 0..frames {
            let mut out = Vec::new();
            for (_, kind) in events.iter().filter(|(f, _)| *f == frame) {
                out.extend(v.process(&TrackEvent { frame, time_ms: frame as f64 * 33.3, kind: kind.clone() }));
            }
            out.extend(v.tick(frame, frame as f64 * 33.3));
            flags.extend(out.into_iter().filter_map(|e| match e.body {
                EventBody::RoundFlag(f) => Some((e.frame, f)),
                _ => None,
            }));
        }
        flags
    }

    /// Fortune 2025 seed 9: a round opened as the last one's cards went to the rack, with the
    /// last round's chips still on seat 2's spot; seat 2 bet nothing this round. Read from the
    /// opening, seat 2 was skipped in the deal order and held "0 cards where 5 are dealt"; read
    /// again as the first card lands (`BetsSeen`), nothing is flagged.
    #[test]
    fn bets_read_again_as_the_first_card_lands_replace_the_openings() {
        let ante = |seat| SpotPresence { seat, bet: BetKind::Ante };
        let stale = [ante(1), ante(2)];
        let deal = stud_deal_to_seat_1(&stale);
        let flags = stud_flags(&deal, 60);
        assert!(flags.iter().any(|(_, f)| f.seat == Some(2)), "a seat with stale chips and no cards: {flags:?}");
        let mut again = deal.clone();
        // before the first Dealt (frame 2), in the same frame
        let first = again.iter().position(|(_, e)| matches!(e, TrackEventKind::Dealt { .. })).unwrap();
        again.insert(first, (2, TrackEventKind::BetsSeen { chips: vec![ante(1)] }));
        assert_eq!(stud_flags(&again, 60), vec![]);
    }

    /// fortune3cp-2025 Art. 11(1) (docs/rules.md A-5): a shoe deal that serves the dealer last
    /// in each pass breaks the default order (`after_players`: the dealer's three cards after
    /// every player's) and is legal under `f2025_shoe_dealer_cards = either`, which still
    /// flags a passed-over seat.
    #[test]
    fn either_dealer_turn_accepts_both_readings_of_art_11_1() {
        let chips: Vec<SpotPresence> = [1, 2].map(|seat| SpotPresence { seat, bet: BetKind::Ante }).to_vec();
        let last_each_pass = |zones: &[TableZone]| {
            let mut events = deal_in_order(&chips, &zones.repeat(3));
            // a shoe deal, as the backend says (a shuffler's packets of three fit any order)
            let shoe = BackendHint::DealingMode { mode: DealingMode::Shoe };
            events.insert(2, (1, TrackEventKind::Hint(shoe)));
            events
        };
        let (s1, s2, d) = (TableZone::Seat(1), TableZone::Seat(2), TableZone::Dealer);
        let flags_under = |opts: &str, events: &[(u64, TrackEventKind)]| {
            let rs = Ruleset::with_options(RulesetId::Fortune3cp2025, serde_json::from_str(opts).unwrap()).unwrap();
            flags_with(rs, events, 60)
        };
        let deal = last_each_pass(&[s1, s2, d]);
        let default = flags_under("{}", &deal);
        assert!(default.iter().any(|(_, f)| f.irregularity == IrregularityKind::WrongDealOrder), "{default:?}");
        assert_eq!(flags_under(r#"{"f2025_shoe_dealer_cards": "either"}"#, &deal), vec![]);
        assert_eq!(flags_under(r#"{"f2025_shoe_dealer_cards": "last_each_pass"}"#, &deal), vec![]);
        // seat 2 served before seat 1 in every pass fits neither reading
        let swapped = flags_under(r#"{"f2025_shoe_dealer_cards": "either"}"#, &last_each_pass(&[s2, s1, d]));
        assert!(swapped.iter().any(|(_, f)| f.irregularity == IrregularityKind::WrongDealOrder), "{swapped:?}");
    }

    /// Q Poker clean seed 44 round 2 (track_verify, 60 sessions): a card swept past the
    /// dealer's place on its way to the discard rack came to rest there for a few frames; it
    /// was counted as a fourth dealer card and voided a round already settled.
    #[test]
    fn a_card_at_rest_in_a_hand_during_the_collection_is_not_dealt() {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }];
        let phase = |from, to| TrackEventKind::Phase { from, to, reason: "test".into(), chips: chips.clone() };
        let mut events = stud_deal_to_seat_1(&chips);
        assert_eq!(stud_flags(&events, 60), vec![], "a whole deal raises nothing");
        let sixth = |phase| (50, dealt(99, TableZone::Dealer, 6, phase));
        let mut during_decisions = events.clone();
        during_decisions.push(sixth(RoundPhase::Decisions));
        let flags = stud_flags(&during_decisions, 60);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(flags[0].1.irregularity, IrregularityKind::WrongCardCount);
        events.push((40, phase(RoundPhase::Decisions, RoundPhase::Collection)));
        events.push(sixth(RoundPhase::Collection));
        assert_eq!(stud_flags(&events, 60), vec![], "a card in passage to the rack");
    }

    /// fortune3cp-2008 Art. 11(2): the exposed dealer card is left out and the hand gets the next
    /// card. Its replacement is neither a card out of turn nor one too many, whether the card is
    /// seen leaving before the replacement lands or after; kept in the hand with its replacement,
    /// the dealer's hand is a card too many when the deal ends.
    #[test]
    fn an_exposed_dealer_card_set_aside_leaves_its_turn_to_its_replacement() {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }];
        let (seat, dealer) = (TableZone::Seat(1), TableZone::Dealer);
        let exposed = TrackEventKind::Dealt {
            track: 2,
            zone: dealer,
            order: 3,
            face_up: true,
            card: None,
            phase: RoundPhase::Dealing,
        };
        let moved =
            TrackEventKind::Moved { track: 2, from: dealer, to: TableZone::Discard, phase: RoundPhase::Dealing };
        let set_aside = TrackEventKind::SetAside { track: 2 };
        // 2008's shoe: seat 1, then the dealer, in each of three passes (Art. 7(1)); the dealer's
        // last card is exposed.
        let round = |aside: &[(u64, TrackEventKind)]| {
            let mut e = round_opened(&chips);
            for (k, frame) in [(1u32, 2u64), (2, 6)] {
                e.push((frame, dealt(2 * k + 10, seat, k, RoundPhase::Dealing)));
                e.push((frame + 2, dealt(2 * k + 11, dealer, k, RoundPhase::Dealing)));
            }
            e.push((10, dealt(1, seat, 3, RoundPhase::Dealing)));
            e.push((12, exposed.clone()));
            e.extend(aside.iter().cloned());
            e.push((16, dealt(3, dealer, 3, RoundPhase::Dealing)));
            let to = RoundPhase::Decisions;
            e.push((
                30,
                TrackEventKind::Phase { from: RoundPhase::Dealing, to, reason: "test".into(), chips: chips.clone() },
            ));
            e
        };
        let kinds = |events: &[(u64, TrackEventKind)]| -> Vec<IrregularityKind> {
            flags_of(RulesetId::Fortune3cp2008, events, 60).into_iter().map(|(_, f)| f.irregularity).collect()
        };
        let before = round(&[(14, moved.clone()), (14, set_aside.clone())]);
        assert_eq!(kinds(&before), vec![IrregularityKind::DealerCardExposed], "set aside, then replaced");
        let after = round(&[(17, moved.clone()), (17, set_aside.clone())]);
        assert_eq!(kinds(&after), vec![IrregularityKind::DealerCardExposed], "replaced, then seen leaving");
        let kept = round(&[]);
        assert_eq!(
            kinds(&kept),
            vec![IrregularityKind::DealerCardExposed, IrregularityKind::WrongCardCount],
            "replaced but kept in the hand"
        );
    }

    /// A face read on two cards of a single-deck game is flagged at the later card's hand, the
    /// flag naming the face (`RoundFlag::card`): the evaluation checks it against the truth.
    #[test]
    fn a_duplicate_flag_names_the_face_seen_twice() {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }];
        let mut events = stud_deal_to_seat_1(&chips);
        let read = |track: u32, zone: TableZone| TrackEventKind::Identified {
            track,
            zone: Some(zone),
            card: "8C".parse().unwrap(),
            previous: None,
            corrects: false,
        };
        // the dealer's first card (track 3, dealt at 4) and seat 1's second (track 4, at 6)
        events.push((40, read(3, TableZone::Dealer)));
        events.push((42, read(4, TableZone::Seat(1))));
        let flags = stud_flags(&events, 60);
        let found: Vec<_> = flags.iter().map(|(f, r)| (*f, r.irregularity, r.seat, r.card)).collect();
        assert_eq!(found, vec![(42, IrregularityKind::DuplicateCard, Some(1), Some("8C".parse().unwrap()))]);
    }

    /// A card taken from a hand whose place was seen bare (`Removed { seen_bare }`) is flagged at
    /// once; a card put in its place within the swap window makes it a swap, superseding that
    /// flag. One not seen bare waits for the window before it is called removed; one reported
    /// only at the window's end is flagged then, and the window for its replacement runs from
    /// the report.
    #[test]
    fn a_card_seen_taken_away_is_flagged_at_once_and_a_replacement_makes_it_a_swap() {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }];
        let events = stud_deal_to_seat_1(&chips);
        let lost = |since, seen_bare| TrackEventKind::Removed {
            track: 4,
            since,
            from: Some(TableZone::Seat(1)),
            card: None,
            seen_bare,
        };
        let removed = |seen_bare| lost(50, seen_bare);
        let kinds = |flags: &[(u64, RoundFlag)]| -> Vec<(u64, IrregularityKind, Option<u32>)> {
            flags.iter().map(|(f, r)| (*f, r.irregularity, r.supersedes_flag)).collect()
        };
        let mut bare = events.clone();
        bare.push((52, removed(true)));
        assert_eq!(kinds(&stud_flags(&bare, 120)), vec![(52, IrregularityKind::CardRemoved, None)]);
        bare.push((60, dealt(40, TableZone::Seat(1), 6, RoundPhase::Decisions)));
        assert_eq!(
            kinds(&stud_flags(&bare, 120)),
            vec![(52, IrregularityKind::CardRemoved, None), (60, IrregularityKind::CardSwapped, Some(1))]
        );
        let mut unseen = events.clone();
        unseen.push((52, removed(false)));
        assert_eq!(kinds(&stud_flags(&unseen, 120)), vec![(80, IrregularityKind::CardRemoved, None)]);
        // Reported only when the tracker gave up waiting for it (lost at 50, reported at 80, the
        // window's length later): flagged at the report, and a card put in its place within the
        // window from there is still a swap.
        let mut waited = events;
        waited.push((80, lost(50, false)));
        assert_eq!(kinds(&stud_flags(&waited, 200)), vec![(80, IrregularityKind::CardRemoved, None)]);
        waited.push((105, dealt(40, TableZone::Seat(1), 6, RoundPhase::Decisions)));
        assert_eq!(
            kinds(&stud_flags(&waited, 200)),
            vec![(80, IrregularityKind::CardRemoved, None), (105, IrregularityKind::CardSwapped, Some(1))]
        );
        // A card put there after the window from the report is no swap of it.
        let mut too_late = waited.clone();
        too_late.pop();
        too_late.push((115, dealt(40, TableZone::Seat(1), 6, RoundPhase::Decisions)));
        assert!(!kinds(&stud_flags(&too_late, 200)).iter().any(|(_, k, _)| *k == IrregularityKind::CardSwapped));
    }

    /// A card whose identity another card's differing print disputed (`TrackEventKind::Disputed`)
    /// leaves the round unverified, saying so, rather than settled on a face one of the two
    /// cards does not show.
    #[test]
    fn a_card_that_lost_its_identity_to_a_twins_print_leaves_the_round_unverified() {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }];
        let ace: Card = "AS".parse().unwrap();
        let mut events = round_opened(&chips);
        for order in 1..=5u32 {
            for (k, zone) in [TableZone::Seat(1), TableZone::Dealer].into_iter().enumerate() {
                let (track, face_up) = (2 * order + k as u32, zone == TableZone::Dealer && order == 5);
                let phase = RoundPhase::Dealing;
                events.push((
                    u64::from(2 * order),
                    TrackEventKind::Dealt { track, zone, order, face_up, card: None, phase },
                ));
            }
        }
        events.push((
            40,
            TrackEventKind::Identified {
                track: 2,
                zone: Some(TableZone::Seat(1)),
                card: ace,
                previous: None,
                corrects: false,
            },
        ));
        let disputed = (45, TrackEventKind::Disputed { track: 2, zone: Some(TableZone::Seat(1)), card: ace, by: None });
        events.push((50, TrackEventKind::RoundEnded));
        let reasons = |events: &[(u64, TrackEventKind)]| -> Vec<String> {
            let mut v = Verifier::new(Ruleset::new(RulesetId::Stud2004), VerifierOptions::new("T", "C")).unwrap();
            let mut reasons = Vec::new();
            for (frame, kind) in events {
                for e in v.process(&TrackEvent { frame: *frame, time_ms: *frame as f64 * 33.3, kind: kind.clone() }) {
                    if let EventBody::RoundOutcome(o) = e.body {
                        reasons = o.verification.reasons;
                    }
                }
            }
            reasons
        };
        let before = reasons(&events);
        assert!(!before.iter().any(|r| r.starts_with("seat 1 card 1")), "{before:?}");
        events.insert(events.len() - 1, disputed);
        let after = reasons(&events);
        assert!(
            after.contains(&"seat 1 card 1 read as AS, as another card whose print differs is".to_string()),
            "{after:?}"
        );
    }

    /// The outcome a verifier of `rs` publishes for the round of `events` (frame, event), and the
    /// flags it raises.
    fn round_outcome(rs: Ruleset, events: &[(u64, TrackEventKind)]) -> (RoundOutcome, Vec<RoundFlag>) {
        let mut v = Verifier::new(rs, VerifierOptions::new("T", "C")).unwrap();
        let (mut outcome, mut flags) = (None, Vec::new());
        for (frame, kind) in events {
            for e in v.process(&TrackEvent { frame: *frame, time_ms: *frame as f64 * 33.3, kind: kind.clone() }) {
                match e.body {
                    EventBody::RoundOutcome(o) => outcome = Some(*o),
                    EventBody::RoundFlag(f) => flags.push(f),
                    _ => {}
                }
            }
        }
        (outcome.expect("the round ended"), flags)
    }

    /// A stud round whose cards are all read but seat 1's third (track 6), known by its rank
    /// only: settled for every suit it may have, and verified only where no suit changes a bet.
    fn stud_outcome_with_a_card_known_by_rank(seat: [&str; 5], dealer: [&str; 5]) -> RoundOutcome {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }, SpotPresence { seat: 1, bet: BetKind::Raise }];
        let mut events = stud_deal_to_seat_1(&chips);
        events.push((
            40,
            TrackEventKind::Phase {
                from: RoundPhase::Decisions,
                to: RoundPhase::Reveal,
                reason: "test".into(),
                chips: chips.clone(),
            },
        ));
        for (k, (a, b)) in seat.iter().zip(dealer).enumerate() {
            let order = k as u32 + 1;
            for (track, zone, code) in [(2 * order, TableZone::Seat(1), *a), (2 * order + 1, TableZone::Dealer, b)] {
                let kind = if track == 6 {
                    TrackEventKind::RankRead { track, zone: Some(zone), rank: code.parse::<Card>().unwrap().rank() }
                } else {
                    TrackEventKind::Identified {
                        track,
                        zone: Some(zone),
                        card: code.parse().unwrap(),
                        previous: None,
                        corrects: false,
                    }
                };
                events.push((42, kind));
            }
        }
        events.push((60, TrackEventKind::RoundEnded));
        round_outcome(Ruleset::new(RulesetId::Stud2004), &events).0
    }

    #[test]
    fn a_card_known_by_its_rank_only_verifies_a_round_no_suit_decides() {
        // Seat 1: 2♠ 5♥ K? 9♦ J♣ — no flush whatever the king's suit, K-high; the dealer's A-K high
        // qualifies and wins.
        let o = stud_outcome_with_a_card_known_by_rank(["2S", "5H", "KC", "9D", "JC"], ["AS", "KD", "QH", "7C", "4S"]);
        assert_eq!(o.verification.status, VerificationStatus::Verified, "{:?}", o.verification.reasons);
        let third = &o.hands[0].cards[2];
        assert_eq!((third.card, third.rank), (None, Some(Rank::King)));
        let ante = o.hands[0].bets.iter().find(|b| b.bet == BetKind::Ante).expect("the ante settled");
        assert_eq!(ante.outcome, "lose");
        // The same round in hearts: the king of hearts would make a flush, so the suit decides.
        let o = stud_outcome_with_a_card_known_by_rank(["2H", "5H", "KH", "9H", "JH"], ["AS", "KD", "QH", "7C", "4S"]);
        assert_eq!(o.verification.status, VerificationStatus::Unverified);
        assert!(
            o.verification
                .reasons
                .contains(&"seat 1: its result depends on the suit of a card known by its rank only".into()),
            "{:?}",
            o.verification.reasons
        );
        assert!(o.hands[0].bets.is_empty(), "no bet guessed: {:?}", o.hands[0].bets);
        assert_eq!(o.hands[0].hand, "", "no combination named from a stand-in suit");
    }

    /// A card's identity replaced after a few reads corrects a misread: no swap (stud seed 7's
    /// dealer track, 5♥ four reads, then 8♠). Replaced after many, it is one.
    #[test]
    fn a_misread_corrected_is_no_swapped_card() {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }];
        let (five, eight): (Card, Card) = ("5H".parse().unwrap(), "8S".parse().unwrap());
        let identified = |card, previous, corrects| TrackEventKind::Identified {
            track: 2,
            zone: Some(TableZone::Dealer),
            card,
            previous,
            corrects,
        };
        let events = |corrects| {
            vec![
                (1, TrackEventKind::RoundStarted { chips: chips.clone(), by_hint: false }),
                (
                    1,
                    TrackEventKind::Phase {
                        from: RoundPhase::WaitingForBets,
                        to: RoundPhase::Dealing,
                        reason: "test".into(),
                        chips: chips.clone(),
                    },
                ),
                (
                    2,
                    TrackEventKind::Dealt {
                        track: 2,
                        zone: TableZone::Dealer,
                        order: 1,
                        face_up: true,
                        card: None,
                        phase: RoundPhase::Dealing,
                    },
                ),
                (5, identified(five, None, false)),
                (20, identified(eight, Some(five), corrects)),
            ]
        };
        // (the dealer's card dealt first and face up raises its own flags here)
        let swaps = |corrects| -> Vec<u64> {
            stud_flags(&events(corrects), 40)
                .into_iter()
                .filter(|(_, f)| f.irregularity == IrregularityKind::CardSwapped)
                .map(|(frame, _)| frame)
                .collect()
        };
        assert_eq!(swaps(true), Vec::<u64>::new(), "a misread corrected");
        assert_eq!(swaps(false), vec![20], "a card changed");
    }

    /// Stud seed 7 (an unseen back design): seat 2's first card, face down, was seen "turned
    /// up" as its second card landed on it, flickered, and stayed so: two exposure flags and a
    /// void round. A card turned up with no card landing beside it is still an exposure.
    #[test]
    fn a_card_seen_turned_up_as_a_card_lands_on_it_is_exposed_only_once_read() {
        let run = |events: &[(u64, TrackEventKind)]| stud_flags(events, 80);
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }, SpotPresence { seat: 2, bet: BetKind::Ante }];
        let dealt = |track, seat, order| TrackEventKind::Dealt {
            track,
            zone: TableZone::Seat(seat),
            order,
            face_up: false,
            card: None,
            phase: RoundPhase::Dealing,
        };
        let turned = |track, face_up, card| TrackEventKind::Turned {
            track,
            zone: TableZone::Seat(2),
            face_up,
            card,
            phase: RoundPhase::Dealing,
        };
        let mut base = round_opened(&chips);
        base.extend([(2, dealt(1, 1, 1)), (10, dealt(2, 2, 1)), (20, dealt(3, 1, 2))]);
        // seat 2's second card lands at 30; its first "turns up" at 29, down at 40, up at 42
        let mut under = base.clone();
        under.extend([
            (29, turned(2, true, None)),
            (30, dealt(4, 2, 2)),
            (40, turned(2, false, None)),
            (42, turned(2, true, None)),
        ]);
        assert_eq!(run(&under), vec![], "no exposure while unread under the card that landed");
        // read during the deal: its face showed
        let ace: Card = "AS".parse().unwrap();
        under.push((
            50,
            TrackEventKind::Identified {
                track: 2,
                zone: Some(TableZone::Seat(2)),
                card: ace,
                previous: None,
                corrects: false,
            },
        ));
        let flags = run(&under);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(
            (flags[0].0, flags[0].1.irregularity, flags[0].1.seat),
            (50, IrregularityKind::OnePlayerCardExposed, Some(2))
        );
        // turned up with no card landing near: an exposure, raised COVER_TURN_FRAMES later
        base.push((29, turned(2, true, None)));
        let flags = run(&base);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(flags[0].0, 29 + COVER_TURN_FRAMES + 1);
        assert_eq!(flags[0].1.irregularity, IrregularityKind::OnePlayerCardExposed);
        assert_eq!(flags[0].1.evidence_frame, 29 + COVER_TURN_FRAMES + 1);
    }

    /// Q Poker seed 7, `two_player_cards_exposed`: a shuffler's packet of three lands in one
    /// frame, and its first card, dealt face up, is seen up two frames later, unread. Its
    /// packet's cards arrived with it, not on it: an exposure.
    #[test]
    fn a_card_of_a_packet_seen_turned_up_after_it_landed_is_exposed() {
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Bet }];
        let dealt = |track, order| TrackEventKind::Dealt {
            track,
            zone: TableZone::Seat(1),
            order,
            face_up: false,
            card: None,
            phase: RoundPhase::Dealing,
        };
        let up = TrackEventKind::Turned {
            track: 1,
            zone: TableZone::Seat(1),
            face_up: true,
            card: None,
            phase: RoundPhase::Dealing,
        };
        let mut events = round_opened(&chips);
        events.extend([(24, dealt(1, 1)), (24, dealt(2, 2)), (24, dealt(3, 3)), (26, up)]);
        let flags = flags_of(RulesetId::Qpoker2004, &events, 60);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(
            (flags[0].0, flags[0].1.irregularity, flags[0].1.seat),
            (26 + COVER_TURN_FRAMES + 1, IrregularityKind::OnePlayerCardExposed, Some(1))
        );
    }

    /// `events` with the card dealt `order`-th to `zone` landing face up.
    fn turned_up(mut events: Vec<(u64, TrackEventKind)>, zone: TableZone, order: u32) -> Vec<(u64, TrackEventKind)> {
        for (_, e) in &mut events {
            if let TrackEventKind::Dealt { zone: z, order: o, face_up, .. } = e {
                if *z == zone && *o == order {
                    *face_up = true;
                }
            }
        }
        events
    }

    /// The irregularities a verifier of `id` with the options `opts` (JSON) raises.
    fn kinds_under(id: RulesetId, opts: &str, events: &[(u64, TrackEventKind)]) -> Vec<IrregularityKind> {
        let rs = Ruleset::with_options(id, serde_json::from_str(opts).unwrap()).unwrap();
        flags_with(rs, events, 60).into_iter().map(|(_, f)| f.irregularity).collect()
    }

    /// stud-2004 Art. 11(1) "duas ou mais cartas" (docs/rules.md C-7): by default an exposed
    /// dealer card and an exposed player card are two cards exposed, voiding the round;
    /// `stud_exposed_count_scope = player_cards_only` counts the player's alone (Art. 11(2):
    /// play continues) beside the dealer card's own consequence. The designed up-card (the
    /// dealer's fifth, Art. 7) never counts.
    #[test]
    fn a_stud_dealer_card_exposed_counts_with_a_players_unless_the_table_says_not() {
        use IrregularityKind as K;
        let chips = vec![SpotPresence { seat: 1, bet: BetKind::Ante }];
        let shoe = stud_deal_to_seat_1(&chips);
        let dealer_then_player = turned_up(turned_up(shoe.clone(), TableZone::Dealer, 2), TableZone::Seat(1), 4);
        assert_eq!(
            kinds_under(RulesetId::Stud2004, "{}", &dealer_then_player),
            [K::DealerCardExposed, K::SeveralPlayerCardsExposed]
        );
        let only_players = r#"{"stud_exposed_count_scope": "player_cards_only"}"#;
        assert_eq!(
            kinds_under(RulesetId::Stud2004, only_players, &dealer_then_player),
            [K::DealerCardExposed, K::OnePlayerCardExposed]
        );
        let player_then_dealer = turned_up(turned_up(shoe.clone(), TableZone::Seat(1), 1), TableZone::Dealer, 3);
        let flags = stud_flags(&player_then_dealer, 60);
        let kinds: Vec<K> = flags.iter().map(|(_, f)| f.irregularity).collect();
        assert_eq!(kinds, [K::OnePlayerCardExposed, K::SeveralPlayerCardsExposed]);
        assert_eq!(flags[1].1.supersedes_flag, Some(flags[0].1.flag_id), "the void supersedes the lone exposure");
        assert!(flags[1].1.consequence["kind"] == "round_void", "{:?}", flags[1].1.consequence);
        assert_eq!(
            kinds_under(RulesetId::Stud2004, only_players, &player_then_dealer),
            [K::OnePlayerCardExposed, K::DealerCardExposed]
        );
        let designed = turned_up(turned_up(shoe, TableZone::Dealer, 5), TableZone::Seat(1), 2);
        assert_eq!(kinds_under(RulesetId::Stud2004, "{}", &designed), [K::OnePlayerCardExposed]);
    }

    /// fortune3cp-2025 Art. 11(3) names no point of the deal for the community cards and 15(2)
    /// speaks of them on a table where nobody bet the Progressive (docs/rules.md A-6): by default
    /// they may come first and may lie there without a Progressive bet;
    /// `community_card_timing = after_dealer` and `community_without_progressive = breach` make
    /// each a breach of Art. 11, voiding the round (17(1)(1)).
    #[test]
    fn community_cards_may_come_at_any_point_and_without_a_progressive_unless_the_table_says_not() {
        use IrregularityKind as K;
        let (s1, d, c) = (TableZone::Seat(1), TableZone::Dealer, TableZone::Community);
        let shoe_deal = |chips: &[SpotPresence], zones: &[TableZone]| {
            let mut events = deal_in_order(chips, zones);
            let shoe = BackendHint::DealingMode { mode: DealingMode::Shoe };
            events.insert(2, (1, TrackEventKind::Hint(shoe)));
            events
        };
        let ante = SpotPresence { seat: 1, bet: BetKind::Ante };
        let progressive = [ante, SpotPresence { seat: 1, bet: BetKind::Progressive }];
        let f25 = RulesetId::Fortune3cp2025;
        let after_dealer = r#"{"community_card_timing": "after_dealer"}"#;
        let last = shoe_deal(&progressive, &[s1, s1, s1, d, d, d, c, c]);
        assert_eq!(kinds_under(f25, "{}", &last), []);
        assert_eq!(kinds_under(f25, after_dealer, &last), []);
        let first = shoe_deal(&progressive, &[c, c, s1, s1, s1, d, d, d]);
        assert_eq!(kinds_under(f25, "{}", &first), []);
        assert_eq!(kinds_under(f25, after_dealer, &first), [K::WrongDealOrder]);
        let breach = r#"{"community_without_progressive": "breach"}"#;
        let unbet = shoe_deal(&[ante], &[s1, s1, s1, d, d, d, c, c]);
        assert_eq!(kinds_under(f25, "{}", &unbet), []);
        let flags = flags_with(Ruleset::with_options(f25, serde_json::from_str(breach).unwrap()).unwrap(), &unbet, 60);
        assert_eq!(flags.len(), 1, "{flags:?}");
        assert_eq!(
            (flags[0].1.irregularity, flags[0].1.citation.as_str()),
            (K::WrongCommunityCards, "fortune3cp-2025 Art. 17(1)(1)")
        );
        // three are too many either way
        assert_eq!(
            kinds_under(f25, "{}", &shoe_deal(&[ante], &[s1, s1, s1, d, d, d, c, c, c])),
            [K::WrongCommunityCards]
        );
    }

    /// sangong-1996 Art. 5(3) through the verifier: the backend's `dice` hint carries the
    /// banker's capital, and the outcome pays and collects no more than it. Banker at place 5,
    /// dice 11: place 3 gets the first packet and is settled first, then 2, 1, 8, 7, 6, 4 (E-6).
    #[test]
    fn a_san_gong_outcome_stays_within_the_banker_s_capital_the_backend_told() {
        let outcome_with = |capital: Option<crate::rules::settle::Money>| {
            let wager = |seat| BackendHint::Bets { seat, wagers: vec![Wager { bet: BetKind::Bet, stake: Some(100) }] };
            let mut events = vec![
                (1, TrackEventKind::RoundStarted { chips: vec![], by_hint: false }),
                (1, TrackEventKind::Hint(BackendHint::Dice { banker: 5, total: 11, capital })),
                (
                    1,
                    TrackEventKind::Phase {
                        from: RoundPhase::WaitingForBets,
                        to: RoundPhase::Dealing,
                        reason: "test".into(),
                        chips: vec![],
                    },
                ),
            ];
            let hands = [
                (3, ["KS", "QH", "9D"]), // 9 with two figures: beats the banker's 0
                (2, ["KH", "QD", "8C"]), // 8 with two figures: beats it too
                (1, ["AD", "9C", "10C"]),
                (8, ["2S", "3H", "5D"]),
                (7, ["2C", "3D", "5H"]),
                (6, ["2D", "3C", "5S"]),
                (5, ["4S", "6H", "10D"]), // the banker: 0, no figure
                (4, ["4C", "6D", "10S"]),
            ];
            for (i, (place, cards)) in hands.iter().enumerate() {
                if *place != 5 {
                    // every player's stake: the cap needs them all
                    events.insert(2, (1, TrackEventKind::Hint(wager(*place))));
                }
                for (j, code) in cards.iter().enumerate() {
                    let track = (3 * i + j) as u32 + 1;
                    let zone = TableZone::Seat(*place);
                    events.push((2 + 4 * i as u64 + j as u64, dealt(track, zone, j as u32 + 1, RoundPhase::Dealing)));
                    let card = code.parse().unwrap();
                    let read =
                        TrackEventKind::Identified { track, zone: Some(zone), card, previous: None, corrects: false };
                    events.push((50, read));
                }
            }
            let reveal = |from, to| TrackEventKind::Phase { from, to, reason: "test".into(), chips: vec![] };
            events.push((40, reveal(RoundPhase::Dealing, RoundPhase::Decisions)));
            events.push((45, reveal(RoundPhase::Decisions, RoundPhase::Reveal)));
            events.push((60, TrackEventKind::RoundEnded));
            events.sort_by_key(|e| e.0);
            let (o, flags) = round_outcome(Ruleset::new(RulesetId::Sangong1996), &events);
            assert_eq!(flags, vec![], "a clean round");
            assert_eq!(o.verification.status, VerificationStatus::Verified, "{:?}", o.verification.reasons);
            [3, 2, 1, 8, 7, 6, 4].map(|seat| o.hands.iter().find(|h| h.seat == seat).unwrap().bets[0].net_amount)
        };
        let full = [95, 95, -100, -100, -100, -100, -100].map(Some);
        assert_eq!(outcome_with(None), full, "no capital told: settled in full");
        assert_eq!(outcome_with(Some(1000)), full);
        // Place 2 gets the 50 left (0.95 of it); places 1, 8 and 7 are collected; the banker's
        // gain has then reached the capital, and places 6 and 4 keep their stakes.
        assert_eq!(outcome_with(Some(150)), [95, 48, -100, -100, -100, 0, 0].map(Some));
    }

    /// A stud round at seat 1 (Ante 10, Raise 20, Progressive 5, told by the backend with
    /// `extra` hints) dealt `seat` against `dealer`, every card read.
    fn stud_outcome_told(seat: [&str; 5], dealer: [&str; 5], extra: &[BackendHint]) -> RoundOutcome {
        let bets = [(BetKind::Ante, 10), (BetKind::Raise, 20), (BetKind::Progressive, 5)];
        let chips: Vec<SpotPresence> = bets.iter().map(|&(bet, _)| SpotPresence { seat: 1, bet }).collect();
        let mut events = stud_deal_to_seat_1(&chips);
        let wagers = bets.iter().map(|&(bet, stake)| Wager { bet, stake: Some(stake) }).collect();
        let hints = std::iter::once(BackendHint::Bets { seat: 1, wagers }).chain(extra.iter().cloned());
        for (k, h) in hints.enumerate() {
            events.insert(2 + k, (1, TrackEventKind::Hint(h)));
        }
        let reveal = RoundPhase::Reveal;
        events.push((40, TrackEventKind::Phase { from: RoundPhase::Decisions, to: reveal, reason: "t".into(), chips }));
        for (k, (a, b)) in seat.iter().zip(dealer).enumerate() {
            let order = k as u32 + 1;
            for (track, zone, code) in [(2 * order, TableZone::Seat(1), *a), (2 * order + 1, TableZone::Dealer, b)] {
                let card = code.parse().unwrap();
                events.push((
                    42,
                    TrackEventKind::Identified { track, zone: Some(zone), card, previous: None, corrects: false },
                ));
            }
        }
        events.push((60, TrackEventKind::RoundEnded));
        round_outcome(Ruleset::new(RulesetId::Stud2004), &events).0
    }

    /// stud-2004 Art. 10(4): a flush wins the Progressive's fixed sum, which only the table
    /// knows. With the backend's `jackpot` the outcome pays it; without, the bet is left out and
    /// the round unverified, where it used to read "win" with a multiple and amount of 0.
    #[test]
    fn a_progressive_win_is_paid_from_the_jackpot_told_and_left_out_without_it() {
        let (seat, dealer) = (["2H", "5H", "9H", "JH", "KH"], ["AS", "KD", "QC", "7C", "4S"]);
        let progressive = |o: &RoundOutcome| o.hands[0].bets.iter().find(|b| b.bet == BetKind::Progressive).cloned();
        let untold = stud_outcome_told(seat, dealer, &[]);
        assert_eq!(untold.verification.status, VerificationStatus::Unverified);
        assert_eq!(
            untold.verification.reasons,
            ["seat 1: its Progressive bet wins a jackpot award (stud-2004 Art. 10(4)) whose amount the backend has not told"]
        );
        assert_eq!(progressive(&untold), None);
        let raise = untold.hands[0].bets.iter().find(|b| b.bet == BetKind::Raise).expect("the Raise settled");
        assert_eq!((raise.net_multiple, raise.net_amount), (5.0, Some(100)), "a flush pays 5 to 1 (Art. 9(5)(5))");
        let jackpot = BackendHint::Jackpot {
            pool: 250_000,
            fixed: [(crate::rules::eval5::Category5::Flush, 500)].into_iter().collect(),
        };
        let told = stud_outcome_told(seat, dealer, &[jackpot]);
        assert_eq!(told.verification.status, VerificationStatus::Verified, "{:?}", told.verification.reasons);
        let p = progressive(&told).expect("the Progressive settled");
        assert_eq!((p.outcome.as_str(), p.net_multiple, p.net_amount), ("win", 100.0, Some(500)));
        // a losing Progressive needs no jackpot
        let lost = stud_outcome_told(["2H", "5C", "9H", "JD", "KH"], dealer, &[]);
        assert_eq!(lost.verification.status, VerificationStatus::Verified, "{:?}", lost.verification.reasons);
        assert_eq!(progressive(&lost).map(|p| p.net_amount), Some(Some(-5)));
    }
}
