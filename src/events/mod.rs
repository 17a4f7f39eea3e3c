//! The versioned event model: what tablecam tells the world about a table.
//!
//! Every event is an [`Event`]: a fixed envelope (`schema`, `kind`, `table_id`,
//! `camera_id`, `round_id`, `seq`, `frame`, `time_ms`) and a kind-specific
//! [`EventBody`] under `body`. Times are frame timestamps, never the wall clock,
//! and every collection is a `Vec` in a defined order, so that the same frames
//! give byte-identical JSON (`docs/events.md` is the reference; the JSON Schema
//! is `docs/events.schema.json`).
//!
//! `seq` is the table's sequence number. Stages leave it at 0; whoever publishes
//! stamps it with a [`Sequencer`], which also fills `supersedes` of corrected
//! outcomes.
use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::rules::settle::{Decision, Money, Wager};
use crate::rules::{BetKind, Card, DealingMode, IrregularityKind, Rank, RulesetId};

/// Version of the event schema. Bumped on any change that an existing consumer
/// could misread (a field removed, renamed or given a new meaning); adding an
/// optional field or a new kind does not bump it (docs/events.md, "Versioning").
pub const SCHEMA_VERSION: u32 = 1;

/// Errors of the event model.
#[derive(Debug, thiserror::Error)]
pub enum EventsError {
    /// Not JSON, or not an event of this schema.
    #[error("not a tablecam event: {0}")]
    Parse(String),
    /// A schema version this build does not read.
    #[error("event schema version {found}, but this build reads version {expected}")]
    Version {
        /// The version in the event.
        found: u32,
        /// The version this build reads.
        expected: u32,
    },
    /// A `kind` this build does not know.
    #[error("unknown event kind {0:?}")]
    UnknownKind(String),
    /// A zone name that is not `seat N`, `dealer`, `community` or `discard`.
    #[error("bad zone name {0:?}: expected \"seat N\", \"dealer\", \"community\" or \"discard\"")]
    BadZone(String),
}

/// A card zone of the table, written as the simulator's ground truth writes it:
/// `"seat 3"`, `"dealer"`, `"community"`, `"discard"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TableZone {
    /// A player's hand zone (San Gong: every place, the banker's included).
    Seat(u8),
    /// The dealer's hand zone.
    Dealer,
    /// The community-card spot.
    Community,
    /// The discard rack.
    Discard,
}

impl fmt::Display for TableZone {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TableZone::Seat(s) => write!(f, "seat {s}"),
            TableZone::Dealer => f.write_str("dealer"),
            TableZone::Community => f.write_str("community"),
            TableZone::Discard => f.write_str("discard"),
        }
    }
}

impl FromStr for TableZone {
    type Err = EventsError;
    fn from_str(s: &str) -> Result<TableZone, EventsError> {
        match s {
            "dealer" => Ok(TableZone::Dealer),
            "community" => Ok(TableZone::Community),
            "discard" => Ok(TableZone::Discard),
            _ => s
                .strip_prefix("seat ")
                .and_then(|n| n.parse::<u8>().ok())
                .filter(|&n| n > 0)
                .map(TableZone::Seat)
                .ok_or_else(|| EventsError::BadZone(s.to_string())),
        }
    }
}

impl Serialize for TableZone {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TableZone {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TableZone, D::Error> {
        let s = String::deserialize(deserializer)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// The phases of a round (`round.state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RoundPhase {
    /// No cards out; bets may be placed.
    WaitingForBets,
    /// Cards are leaving the shoe or shuffler.
    Dealing,
    /// Every hand has its cards; players decide.
    Decisions,
    /// The dealer's (banker's) cards are being turned.
    Reveal,
    /// Every deciding card is face up; the round is settled.
    Settlement,
    /// Cards are going to the discard rack.
    Collection,
}

impl RoundPhase {
    /// The snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            RoundPhase::WaitingForBets => "waiting_for_bets",
            RoundPhase::Dealing => "dealing",
            RoundPhase::Decisions => "decisions",
            RoundPhase::Reveal => "reveal",
            RoundPhase::Settlement => "settlement",
            RoundPhase::Collection => "collection",
        }
    }
}

/// What the table's backend (or a dealer input) tells tablecam: things the
/// camera cannot see. Every hint is optional; without any, tablecam works from
/// vision alone and says what it could not verify.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "hint", deny_unknown_fields)]
pub enum BackendHint {
    /// Bets are open for a new round, with the backend's id for it.
    RoundStart {
        /// The backend's round id (else tablecam numbers rounds itself).
        #[serde(default)]
        round_id: Option<String>,
    },
    /// The bets (and stakes) of one hand, replacing what chips showed.
    Bets {
        /// The seat.
        seat: u8,
        /// Its bets.
        wagers: Vec<Wager>,
    },
    /// A player's decision after seeing the cards.
    Decision {
        /// The seat.
        seat: u8,
        /// Played or folded.
        decision: Decision,
    },
    /// San Gong: the banker's place and the four dice's total (Art. 2(2)), and the banker's
    /// capital on the table when the backend knows it (Art. 5(3)).
    Dice {
        /// The banker's place (1..=8).
        banker: u8,
        /// The dice total (4..=24).
        total: u8,
        /// The banker's capital for the round: no bet is settled beyond it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capital: Option<crate::rules::settle::Money>,
    },
    /// Shoe or shuffler for this round.
    DealingMode {
        /// The mode.
        mode: DealingMode,
    },
    /// The automatic shuffler reported a fault.
    ShufflerFault,
    /// The Progressive jackpot for this round (fortune3cp-2025 Art. 15–16, stud-2004 Art. 10):
    /// the pool and the house's fixed sums by category. It applies to the one round it was told
    /// in (or, told between rounds, the next one): the pool changes every round.
    Jackpot {
        /// The pool.
        pool: Money,
        /// Fixed sums by category (`royal_flush`, `straight_flush`, `quads`, `full_house`, `flush`).
        #[serde(default)]
        fixed: BTreeMap<crate::rules::eval5::Category5, Money>,
    },
}

/// A flag raised against a round (`round.flag`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundFlag {
    /// Number of the flag within its round, from 1.
    pub flag_id: u32,
    /// The irregularity.
    pub irregularity: IrregularityKind,
    /// The hand concerned (none for the dealer or the whole round).
    pub seat: Option<u8>,
    /// What the regulation says happens (`{"kind": "round_void", …}`).
    pub consequence: serde_json::Value,
    /// The article, e.g. `fortune3cp-2025 Art. 17(1)(1)`.
    pub citation: String,
    /// The frame that showed it.
    pub evidence_frame: u64,
    /// What was seen, for people.
    pub detail: String,
    /// A flag of this round that this one replaces (e.g. one exposed card
    /// became several), by `flag_id`.
    pub supersedes_flag: Option<u32>,
    /// The face the flag is about, where it names one: `duplicate_card`'s face seen twice.
    /// Optional (absent in events written before 2026-12-07, and for other irregularities).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub card: Option<Card>,
}

/// One card of a hand in an outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CardSeen {
    /// Tracker's card id.
    pub track: u32,
    /// The identity, when confirmed face up (`null` otherwise).
    pub card: Option<Card>,
    /// The rank (`A`, `2` … `10`, `J`, `Q`, `K`), where `card` is `null` but the rank was read
    /// surely: the outcome was settled for every suit the card may have (absent otherwise;
    /// since 2026-11-29, schema 1 unchanged: an optional field).
    #[serde(default, skip_serializing_if = "Option::is_none", with = "rank_code")]
    pub rank: Option<Rank>,
}

/// A rank as its code in card codes (`A`, `10`), for [`CardSeen::rank`].
mod rank_code {
    use crate::rules::Rank;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(rank: &Option<Rank>, s: S) -> Result<S::Ok, S::Error> {
        match rank {
            Some(r) => s.serialize_str(r.code()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Rank>, D::Error> {
        let code: Option<String> = Option::deserialize(d)?;
        code.map(|c| {
            Rank::ALL
                .into_iter()
                .find(|r| r.code() == c)
                .ok_or_else(|| serde::de::Error::custom(format!("`{c}` is no rank (A, 2 … 10, J, Q, K)")))
        })
        .transpose()
    }
}

/// One bet's result in an outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BetResult {
    /// The bet spot.
    pub bet: BetKind,
    /// `win`, `lose`, `push` or `void`.
    pub outcome: String,
    /// Net result as a multiple of the stake (−1 lost, 0 returned, 1 paid 1:1 …).
    pub net_multiple: f64,
    /// The stake, when the backend told it.
    pub stake: Option<Money>,
    /// Net amount won (+) or lost (−), when the stake is known.
    pub net_amount: Option<Money>,
    /// The articles that decided it.
    pub citations: Vec<String>,
}

/// One hand in an outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandResult {
    /// The seat.
    pub seat: u8,
    /// Its cards in arrival order.
    pub cards: Vec<CardSeen>,
    /// The combination in words (empty when void or not seen).
    pub hand: String,
    /// Played or folded.
    pub decision: Decision,
    /// Why the hand is null, if it is (an article).
    pub null: Option<String>,
    /// Each bet present.
    pub bets: Vec<BetResult>,
}

/// Whether an outcome can be trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerificationStatus {
    /// Every deciding card was confirmed face up and every decision was seen or told.
    Verified,
    /// Something deciding was not seen; `reasons` says what.
    Unverified,
}

/// The verification verdict of an outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Verification {
    /// Verified or not.
    pub status: VerificationStatus,
    /// What could not be verified, e.g. `seat 3 card 2 never seen face up` or `dealer card 1 seen
    /// face up but never read`.
    pub reasons: Vec<String>,
}

/// A round's outcome (`round.outcome`); exactly one per round, or a correction
/// that names the one it supersedes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RoundOutcome {
    /// The ruleset.
    pub ruleset: RulesetId,
    /// `settled`, `void` or `unsettled` (cards missing: nothing could be computed).
    pub status: String,
    /// For a void round: the article that voids it.
    pub void_citation: Option<String>,
    /// For a void round: whether Progressive bets carry over.
    pub progressive_carries_over: Option<bool>,
    /// The dealer's (San Gong: banker's) cards.
    pub dealer: Vec<CardSeen>,
    /// The dealer's combination in words.
    pub dealer_hand: String,
    /// Whether the dealer qualified (`null` where the game has none or it is unknown).
    pub dealer_qualifies: Option<bool>,
    /// Community cards (fortune3cp-2025 with a Progressive bet).
    pub community: Vec<CardSeen>,
    /// Player hands, by seat.
    pub hands: Vec<HandResult>,
    /// Seats that folded.
    pub folds: Vec<u8>,
    /// The flags of the round still in force, by `flag_id`.
    pub flags: Vec<u32>,
    /// Whether the outcome can be trusted.
    pub verification: Verification,
    /// The `seq` of the outcome this one corrects (stamped by the [`Sequencer`]).
    pub supersedes: Option<u64>,
}

#[cfg(test)]
impl RoundOutcome {
    /// An outcome with no cards, hands, flags or reasons (tests fill in what they need).
    pub(crate) fn blank(ruleset: RulesetId, status: &str, verification: VerificationStatus) -> RoundOutcome {
        RoundOutcome {
            ruleset,
            status: status.into(),
            void_citation: None,
            progressive_carries_over: None,
            dealer: vec![],
            dealer_hand: String::new(),
            dealer_qualifies: None,
            community: vec![],
            hands: vec![],
            folds: vec![],
            flags: vec![],
            verification: Verification { status: verification, reasons: vec![] },
            supersedes: None,
        }
    }
}

/// One pipeline stage's counters (`health`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StageHealth {
    /// The stage (`source`, `recognize`, `track`, …).
    pub stage: String,
    /// Items received.
    pub received: u64,
    /// Items sent on.
    pub sent: u64,
    /// Items dropped (e.g. a live camera's oldest frames).
    pub dropped: u64,
    /// Items that failed.
    pub errors: u64,
    /// Median processing latency, ms.
    pub latency_ms_p50: f64,
    /// 99th-percentile processing latency, ms.
    pub latency_ms_p99: f64,
}

/// The kind-specific part of an event.
#[derive(Debug, Clone, PartialEq)]
pub enum EventBody {
    /// `round.started`: a round began (first card out, or the backend said so).
    RoundStarted {
        /// The ruleset.
        ruleset: RulesetId,
        /// Seats with a bet when the round started.
        seats_with_bets: Vec<u8>,
        /// `vision` or `backend`.
        source: String,
    },
    /// `card.dealt`: a card arrived and settled in a zone.
    CardDealt {
        /// Tracker's card id.
        track: u32,
        /// The zone.
        zone: TableZone,
        /// Its arrival order in that zone this round, from 1.
        order: u32,
        /// Face up on arrival.
        face_up: bool,
        /// Identity when confirmed, else `null`.
        card: Option<Card>,
    },
    /// `card.turned`: a card lying in a zone was turned over.
    CardTurned {
        /// Tracker's card id.
        track: u32,
        /// The zone.
        zone: TableZone,
        /// Face up afterwards.
        face_up: bool,
        /// Identity when confirmed, else `null`.
        card: Option<Card>,
    },
    /// `card.identified`: a face-up card's identity was confirmed (or changed).
    CardIdentified {
        /// Tracker's card id.
        track: u32,
        /// The zone, if the card lies in one.
        zone: Option<TableZone>,
        /// The identity.
        card: Card,
        /// The identity confirmed before, if it changed.
        previous: Option<Card>,
        /// The change corrects a misread (`previous` rested on a few reads), not a swap.
        corrects: bool,
    },
    /// `card.moved`: a card left one zone and settled in another.
    CardMoved {
        /// Tracker's card id.
        track: u32,
        /// Where from.
        from: TableZone,
        /// Where to.
        to: TableZone,
    },
    /// `card.removed`: a card left the table (not to the discard rack).
    CardRemoved {
        /// Tracker's card id.
        track: u32,
        /// The zone it was in, if any.
        from: Option<TableZone>,
        /// Its identity, if it was confirmed.
        card: Option<Card>,
    },
    /// `round.state`: the round moved to another phase.
    RoundState {
        /// Before.
        from: RoundPhase,
        /// After.
        to: RoundPhase,
        /// Why, for people.
        reason: String,
    },
    /// `round.flag`: an irregularity.
    RoundFlag(RoundFlag),
    /// `round.outcome`: the round's result.
    RoundOutcome(Box<RoundOutcome>),
    /// `health`: per-stage counters.
    Health {
        /// One entry per stage, in pipeline order.
        stages: Vec<StageHealth>,
    },
    /// `backend.hint`: a hint received, echoed for the record.
    BackendHint(BackendHint),
    /// `error`: malformed input (a hint, a frame) that was ignored.
    Error {
        /// Where it came from.
        source: String,
        /// What was wrong.
        message: String,
    },
}

impl EventBody {
    /// Every kind, in the order of docs/events.md.
    pub const KINDS: [&'static str; 13] = [
        "round.started",
        "card.dealt",
        "card.turned",
        "card.identified",
        "card.moved",
        "card.removed",
        "round.state",
        "round.flag",
        "round.outcome",
        "health",
        "backend.hint",
        "error",
        // Reserved for the publisher's heartbeats (src/publish), listed so that
        // consumers know the name.
        "heartbeat",
    ];

    /// The event kind, e.g. `card.dealt`.
    pub fn kind(&self) -> &'static str {
        match self {
            EventBody::RoundStarted { .. } => "round.started",
            EventBody::CardDealt { .. } => "card.dealt",
            EventBody::CardTurned { .. } => "card.turned",
            EventBody::CardIdentified { .. } => "card.identified",
            EventBody::CardMoved { .. } => "card.moved",
            EventBody::CardRemoved { .. } => "card.removed",
            EventBody::RoundState { .. } => "round.state",
            EventBody::RoundFlag(_) => "round.flag",
            EventBody::RoundOutcome(_) => "round.outcome",
            EventBody::Health { .. } => "health",
            EventBody::BackendHint(_) => "backend.hint",
            EventBody::Error { .. } => "error",
        }
    }

    fn to_value(&self) -> serde_json::Value {
        use serde_json::json;
        match self {
            EventBody::RoundStarted { ruleset, seats_with_bets, source } => {
                json!({"ruleset": ruleset, "seats_with_bets": seats_with_bets, "source": source})
            }
            EventBody::CardDealt { track, zone, order, face_up, card } => {
                json!({"track": track, "zone": zone, "order": order, "face_up": face_up, "card": card})
            }
            EventBody::CardTurned { track, zone, face_up, card } => {
                json!({"track": track, "zone": zone, "face_up": face_up, "card": card})
            }
            EventBody::CardIdentified { track, zone, card, previous, corrects } => {
                let mut body = json!({"track": track, "zone": zone, "card": card, "previous": previous});
                // only when true: streams and journals without corrections read as before
                if *corrects {
                    body["corrects"] = json!(true);
                }
                body
            }
            EventBody::CardMoved { track, from, to } => json!({"track": track, "from": from, "to": to}),
            EventBody::CardRemoved { track, from, card } => json!({"track": track, "from": from, "card": card}),
            EventBody::RoundState { from, to, reason } => json!({"from": from, "to": to, "reason": reason}),
            EventBody::RoundFlag(f) => serde_json::to_value(f).unwrap_or_default(),
            EventBody::RoundOutcome(o) => serde_json::to_value(o).unwrap_or_default(),
            EventBody::Health { stages } => json!({ "stages": stages }),
            EventBody::BackendHint(h) => serde_json::to_value(h).unwrap_or_default(),
            EventBody::Error { source, message } => json!({"source": source, "message": message}),
        }
    }

    fn from_value(kind: &str, v: serde_json::Value) -> Result<EventBody, EventsError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Started {
            ruleset: RulesetId,
            seats_with_bets: Vec<u8>,
            source: String,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Dealt {
            track: u32,
            zone: TableZone,
            order: u32,
            face_up: bool,
            card: Option<Card>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Turned {
            track: u32,
            zone: TableZone,
            face_up: bool,
            card: Option<Card>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Identified {
            track: u32,
            zone: Option<TableZone>,
            card: Card,
            previous: Option<Card>,
            #[serde(default)]
            corrects: bool,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Moved {
            track: u32,
            from: TableZone,
            to: TableZone,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Removed {
            track: u32,
            from: Option<TableZone>,
            card: Option<Card>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct State {
            from: RoundPhase,
            to: RoundPhase,
            reason: String,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Health {
            stages: Vec<StageHealth>,
        }
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Error {
            source: String,
            message: String,
        }
        let e = |e: serde_json::Error| EventsError::Parse(format!("{kind} body: {e}"));
        Ok(match kind {
            "round.started" => {
                let b: Started = serde_json::from_value(v).map_err(e)?;
                EventBody::RoundStarted { ruleset: b.ruleset, seats_with_bets: b.seats_with_bets, source: b.source }
            }
            "card.dealt" => {
                let b: Dealt = serde_json::from_value(v).map_err(e)?;
                EventBody::CardDealt { track: b.track, zone: b.zone, order: b.order, face_up: b.face_up, card: b.card }
            }
            "card.turned" => {
                let b: Turned = serde_json::from_value(v).map_err(e)?;
                EventBody::CardTurned { track: b.track, zone: b.zone, face_up: b.face_up, card: b.card }
            }
            "card.identified" => {
                let b: Identified = serde_json::from_value(v).map_err(e)?;
                EventBody::CardIdentified {
                    track: b.track,
                    zone: b.zone,
                    card: b.card,
                    previous: b.previous,
                    corrects: b.corrects,
                }
            }
            "card.moved" => {
                let b: Moved = serde_json::from_value(v).map_err(e)?;
                EventBody::CardMoved { track: b.track, from: b.from, to: b.to }
            }
            "card.removed" => {
                let b: Removed = serde_json::from_value(v).map_err(e)?;
                EventBody::CardRemoved { track: b.track, from: b.from, card: b.card }
            }
            "round.state" => {
                let b: State = serde_json::from_value(v).map_err(e)?;
                EventBody::RoundState { from: b.from, to: b.to, reason: b.reason }
            }
            "round.flag" => EventBody::RoundFlag(serde_json::from_value(v).map_err(e)?),
            "round.outcome" => EventBody::RoundOutcome(Box::new(serde_json::from_value(v).map_err(e)?)),
            "health" => EventBody::Health { stages: serde_json::from_value::<Health>(v).map_err(e)?.stages },
            "backend.hint" => EventBody::BackendHint(serde_json::from_value(v).map_err(e)?),
            "error" => {
                let b: Error = serde_json::from_value(v).map_err(e)?;
                EventBody::Error { source: b.source, message: b.message }
            }
            other => return Err(EventsError::UnknownKind(other.to_string())),
        })
    }
}

/// One event: the envelope and its body.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The table.
    pub table_id: String,
    /// The camera that saw it.
    pub camera_id: String,
    /// The round (`null` outside a round).
    pub round_id: Option<String>,
    /// Per-table sequence number; 0 until a [`Sequencer`] stamps it.
    pub seq: u64,
    /// The frame that produced it.
    pub frame: u64,
    /// That frame's timestamp, ms (never the wall clock).
    pub time_ms: f64,
    /// What happened.
    pub body: EventBody,
}

impl Event {
    /// The event kind, e.g. `round.flag`.
    pub fn kind(&self) -> &'static str {
        self.body.kind()
    }

    /// The publishing topic: `<table_id>.<kind>`.
    pub fn topic(&self) -> String {
        format!("{}.{}", self.table_id, self.kind())
    }

    /// The event as one line of JSON (no newline), fields in the documented order.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("events serialise")
    }

    /// Parses one event, checking the schema version and the kind.
    pub fn from_json(text: &str) -> Result<Event, EventsError> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Raw {
            schema: u32,
            kind: String,
            table_id: String,
            camera_id: String,
            round_id: Option<String>,
            seq: u64,
            frame: u64,
            time_ms: f64,
            body: serde_json::Value,
        }
        let raw: Raw = serde_json::from_str(text).map_err(|e| EventsError::Parse(e.to_string()))?;
        if raw.schema != SCHEMA_VERSION {
            return Err(EventsError::Version { found: raw.schema, expected: SCHEMA_VERSION });
        }
        let body = EventBody::from_value(&raw.kind, raw.body)?;
        Ok(Event {
            table_id: raw.table_id,
            camera_id: raw.camera_id,
            round_id: raw.round_id,
            seq: raw.seq,
            frame: raw.frame,
            time_ms: raw.time_ms,
            body,
        })
    }
}

impl Serialize for Event {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        // serde_json's Map keeps insertion order only with `preserve_order`, which
        // we do not enable: the body's own fields are sorted by key, which is just
        // as deterministic. The envelope's order is fixed here.
        let mut s = serializer.serialize_struct("Event", 9)?;
        s.serialize_field("schema", &SCHEMA_VERSION)?;
        s.serialize_field("kind", self.kind())?;
        s.serialize_field("table_id", &self.table_id)?;
        s.serialize_field("camera_id", &self.camera_id)?;
        s.serialize_field("round_id", &self.round_id)?;
        s.serialize_field("seq", &self.seq)?;
        s.serialize_field("frame", &self.frame)?;
        s.serialize_field("time_ms", &self.time_ms)?;
        s.serialize_field("body", &self.body.to_value())?;
        s.end()
    }
}

/// Stamps per-table sequence numbers on events, in the order they are published,
/// and fills `supersedes` of an outcome that corrects an earlier one.
#[derive(Debug, Default, Clone)]
pub struct Sequencer {
    next: BTreeMap<String, u64>,
    outcomes: BTreeMap<(String, String), u64>,
}

impl Sequencer {
    /// A sequencer starting every table at seq 1.
    pub fn new() -> Sequencer {
        Sequencer::default()
    }

    /// Gives `event` its table's next sequence number. A second `round.outcome`
    /// of the same round is a correction: its `supersedes` becomes the earlier
    /// one's seq.
    pub fn stamp(&mut self, event: &mut Event) {
        let n = self.next.entry(event.table_id.clone()).or_insert(1);
        event.seq = *n;
        *n += 1;
        if let (EventBody::RoundOutcome(o), Some(round)) = (&mut event.body, &event.round_id) {
            let key = (event.table_id.clone(), round.clone());
            if let Some(prev) = self.outcomes.insert(key, event.seq) {
                o.supersedes = Some(prev);
            }
        }
    }

    /// The seq the table's next event will get.
    pub fn peek(&self, table_id: &str) -> u64 {
        self.next.get(table_id).copied().unwrap_or(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeSet;

    fn ev(body: EventBody) -> Event {
        Event {
            table_id: "T1".into(),
            camera_id: "T1-cam1".into(),
            round_id: Some("T1-r000001".into()),
            seq: 0,
            frame: 12,
            time_ms: 400.0,
            body,
        }
    }

    #[test]
    fn envelope_order_is_fixed_and_events_round_trip() {
        let e = ev(EventBody::CardDealt { track: 4, zone: TableZone::Seat(3), order: 1, face_up: false, card: None });
        let json = e.to_json();
        assert!(json.starts_with(r#"{"schema":1,"kind":"card.dealt","table_id":"T1","camera_id":"T1-cam1","round_id":"T1-r000001","seq":0,"frame":12,"time_ms":400.0,"body":{"#), "{json}");
        assert_eq!(Event::from_json(&json).unwrap(), e);
        assert_eq!(e.topic(), "T1.card.dealt");
        let bad = json.replace("\"schema\":1", "\"schema\":2");
        assert!(matches!(Event::from_json(&bad), Err(EventsError::Version { found: 2, .. })));
        let bad = json.replace("card.dealt", "card.eaten");
        assert!(matches!(Event::from_json(&bad), Err(EventsError::UnknownKind(_))));
    }

    #[test]
    fn sequencer_numbers_per_table_and_links_corrections() {
        let mut s = Sequencer::new();
        let mut outcome = RoundOutcome::blank(RulesetId::Qpoker2004, "settled", VerificationStatus::Unverified);
        outcome.verification.reasons = vec!["x".into()];
        let mut a = ev(EventBody::RoundOutcome(Box::new(outcome.clone())));
        let mut other = ev(EventBody::Error { source: "hint".into(), message: "bad".into() });
        other.table_id = "T2".into();
        let mut b = ev(EventBody::RoundOutcome(Box::new(outcome)));
        s.stamp(&mut a);
        s.stamp(&mut other);
        s.stamp(&mut b);
        assert_eq!((a.seq, other.seq, b.seq), (1, 1, 2));
        match (&a.body, &b.body) {
            (EventBody::RoundOutcome(x), EventBody::RoundOutcome(y)) => {
                assert_eq!((x.supersedes, y.supersedes), (None, Some(1)))
            }
            _ => unreachable!(),
        }
    }

    #[test]
    fn every_example_in_docs_events_md_parses_and_every_kind_has_one() {
        let doc = include_str!("../../docs/events.md");
        let mut kinds = BTreeSet::new();
        let mut in_block = false;
        for line in doc.lines() {
            match line.trim() {
                "```json" => in_block = true,
                "```" => in_block = false,
                l if in_block && !l.is_empty() => {
                    let raw: serde_json::Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
                    for field in
                        ["schema", "kind", "table_id", "camera_id", "round_id", "seq", "frame", "time_ms", "body"]
                    {
                        assert!(raw.get(field).is_some(), "{field} missing: {l}");
                    }
                    let e = Event::from_json(l).unwrap_or_else(|e| panic!("{e}: {l}"));
                    assert!(EventBody::KINDS.contains(&e.kind()));
                    kinds.insert(e.kind());
                }
                _ => {}
            }
        }
        let want: BTreeSet<&str> = EventBody::KINDS.iter().copied().filter(|k| *k != "heartbeat").collect();
        assert_eq!(kinds, want);
    }

    #[test]
    fn zones_parse_as_written() {
        for z in [TableZone::Seat(7), TableZone::Dealer, TableZone::Community, TableZone::Discard] {
            assert_eq!(z.to_string().parse::<TableZone>().unwrap(), z);
        }
        assert!("seat 0".parse::<TableZone>().is_err());
        assert!("shoe".parse::<TableZone>().is_err());
    }
}
