//! The backend inbound channel: JSON messages from the table's backend (round start, bets,
//! folds, dice, …) on a ZeroMQ ROUTER socket, each answered with an ack or a structured error.
//!
//! ROUTER rather than PULL: the backend needs to know that a message was taken or why it was
//! refused (a typo in a table id must not vanish silently), and a reply per request lets it
//! retry or alert. The backend connects a REQ socket (one request at a time) or a DEALER
//! (pipelined; replies come back in order). Messages are documented in `docs/publishing.md`.
use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::keys::{Security, ZapHandler};
use super::{Attach, PublishError, BACKEND_ZAP_DOMAIN};
use crate::rules::settle::Money;
use crate::rules::{BetKind, DealingMode};

/// Where the inbound channel binds by default.
pub const DEFAULT_INBOUND_ENDPOINT: &str = "tcp://127.0.0.1:5557";

/// Largest accepted message, bytes: hints are small; anything bigger is a mistake or an attack.
pub const MAX_MESSAGE_BYTES: usize = 64 * 1024;

/// The lowest and highest total of San Gong's four dice (Art. 2(2)).
const DICE_TOTAL_RANGE: std::ops::RangeInclusive<u8> = 4..=24;

/// One bet of a hand: the spot and the stake on it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpotStake {
    /// The bet spot (`ante`, `play`, `pair_plus`, `six_card_bonus`, `progressive`, `raise`, `bet`).
    pub spot: BetKind,
    /// The amount, in minor currency units (≥ 0).
    pub stake: Money,
}

/// A message from the table backend (wire format; the pipeline converts it for the tracker).
/// Every message names its `table`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum BackendHint {
    /// Bets are open for a new round.
    RoundStart {
        /// The table.
        table: String,
        /// The backend's id for the round (else tablecam numbers rounds itself).
        #[serde(default)]
        round_id: Option<String>,
    },
    /// How this table deals from now on.
    DealingMode {
        /// The table.
        table: String,
        /// `shoe` or `shuffler`.
        mode: DealingMode,
    },
    /// The bets of one hand, per spot with stakes (replaces what the chips showed).
    Bets {
        /// The table.
        table: String,
        /// The seat, 1..=max seat.
        seat: u8,
        /// Its bets, one per spot.
        bets: Vec<SpotStake>,
    },
    /// A player folded.
    Fold {
        /// The table.
        table: String,
        /// The seat.
        seat: u8,
    },
    /// A player played on: the play or raise bet placed, or in Q Poker the hand kept (a Q Poker
    /// hand with a side bet keeps its cards either way, so the camera cannot tell).
    Play {
        /// The table.
        table: String,
        /// The seat.
        seat: u8,
    },
    /// San Gong: the total of the four dice (4..=24), and the banker's place when the backend knows it.
    SangongDice {
        /// The table.
        table: String,
        /// The dice total.
        total: u8,
        /// The banker's seat.
        #[serde(default)]
        banker: Option<u8>,
        /// The banker's capital on the table (sangong-1996 Art. 5(3)).
        #[serde(default)]
        capital: Option<i64>,
    },
    /// The automatic shuffler reported a fault.
    ShufflerFault {
        /// The table.
        table: String,
        /// The shuffler's own message or code.
        #[serde(default)]
        detail: Option<String>,
    },
    /// Jackpot amounts: the progressive pool and the fixed prizes by hand category.
    Jackpot {
        /// The table.
        table: String,
        /// The progressive pool (≥ 0).
        pool: Money,
        /// Fixed prizes by category name (e.g. `royal_flush`), each ≥ 0.
        #[serde(default)]
        fixed: BTreeMap<String, Money>,
    },
}

impl BackendHint {
    /// The table the message is about.
    pub fn table(&self) -> &str {
        match self {
            BackendHint::RoundStart { table, .. }
            | BackendHint::DealingMode { table, .. }
            | BackendHint::Bets { table, .. }
            | BackendHint::Fold { table, .. }
            | BackendHint::Play { table, .. }
            | BackendHint::SangongDice { table, .. }
            | BackendHint::ShufflerFault { table, .. }
            | BackendHint::Jackpot { table, .. } => table,
        }
    }

    /// The message type as on the wire (`round_start`, …).
    pub fn type_name(&self) -> &'static str {
        match self {
            BackendHint::RoundStart { .. } => "round_start",
            BackendHint::DealingMode { .. } => "dealing_mode",
            BackendHint::Bets { .. } => "bets",
            BackendHint::Fold { .. } => "fold",
            BackendHint::Play { .. } => "play",
            BackendHint::SangongDice { .. } => "sangong_dice",
            BackendHint::ShufflerFault { .. } => "shuffler_fault",
            BackendHint::Jackpot { .. } => "jackpot",
        }
    }
}

/// Every message type, as on the wire.
pub const HINT_TYPES: [&str; 8] =
    ["round_start", "dealing_mode", "bets", "fold", "play", "sangong_dice", "shuffler_fault", "jackpot"];

/// Why a backend message was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HintErrorKind {
    /// Not one frame of UTF-8 JSON (or too large).
    Framing,
    /// Not a JSON object.
    NotJson,
    /// `type` missing or not one of [`HINT_TYPES`].
    UnknownType,
    /// A field missing, unknown or of the wrong type.
    Schema,
    /// `table` is not one of this process's tables.
    UnknownTable,
    /// A negative amount.
    NegativeAmount,
    /// A seat outside 1..=max seat.
    SeatOutOfRange,
    /// A dice total outside 4..=24.
    DiceOutOfRange,
    /// The same spot twice in one `bets`.
    DuplicateSpot,
}

/// A refused backend message: structured, so that the caller can publish it as an `error` event
/// and the backend can act on it (the same JSON is the reply).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("backend message refused ({kind:?}{}): {message}", field.as_ref().map(|f| format!(", field {f}")).unwrap_or_default())]
pub struct HintError {
    /// Why.
    pub kind: HintErrorKind,
    /// The message type, when it could be read.
    pub hint_type: Option<String>,
    /// The table, when it could be read.
    pub table: Option<String>,
    /// The offending field, when there is one.
    pub field: Option<String>,
    /// For people.
    pub message: String,
}

/// What a message is checked against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HintRules {
    /// The table ids this process serves.
    pub tables: BTreeSet<String>,
    /// The highest seat number (seats are 1..=max_seat).
    pub max_seat: u8,
}

/// Parses and validates one backend message. Never panics on any input.
pub fn parse_hint(bytes: &[u8], rules: &HintRules) -> Result<BackendHint, HintError> {
    let fail = |kind, hint_type: Option<&str>, table: Option<&str>, field: Option<&str>, message: String| HintError {
        kind,
        hint_type: hint_type.map(str::to_owned),
        table: table.map(str::to_owned),
        field: field.map(str::to_owned),
        message,
    };
    if bytes.len() > MAX_MESSAGE_BYTES {
        let message = format!("{} bytes, more than the {MAX_MESSAGE_BYTES} accepted", bytes.len());
        return Err(fail(HintErrorKind::Framing, None, None, None, message));
    }
    let value: serde_json::Value = serde_json::from_slice(bytes)
        .map_err(|e| fail(HintErrorKind::NotJson, None, None, None, format!("not JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        return Err(fail(HintErrorKind::NotJson, None, None, None, "not a JSON object".to_owned()));
    };
    let table = object.get("table").and_then(|t| t.as_str());
    let hint_type = match object.get("type").and_then(|t| t.as_str()) {
        Some(t) if HINT_TYPES.contains(&t) => t,
        Some(t) => {
            let message = format!("unknown type {t:?}; expected one of {}", HINT_TYPES.join(", "));
            return Err(fail(HintErrorKind::UnknownType, Some(t), table, Some("type"), message));
        }
        None => {
            let message = "no string `type` field".to_owned();
            return Err(fail(HintErrorKind::UnknownType, None, table, Some("type"), message));
        }
    };
    let hint: BackendHint = serde_json::from_value(value.clone()).map_err(|e| {
        fail(HintErrorKind::Schema, Some(hint_type), table, serde_field(&e.to_string()).as_deref(), e.to_string())
    })?;
    let table = hint.table();
    let refuse = |kind, field: &str, message: String| fail(kind, Some(hint_type), Some(table), Some(field), message);
    if !rules.tables.contains(table) {
        return Err(refuse(HintErrorKind::UnknownTable, "table", format!("table {table:?} is not served here")));
    }
    let seat_ok = |seat: u8| (1..=rules.max_seat).contains(&seat);
    let seat_error = |field: &str, seat: u8| {
        refuse(HintErrorKind::SeatOutOfRange, field, format!("seat {seat} is outside 1..={}", rules.max_seat))
    };
    match &hint {
        BackendHint::Bets { seat, bets, .. } => {
            if !seat_ok(*seat) {
                return Err(seat_error("seat", *seat));
            }
            let mut spots = BTreeSet::new();
            for (i, bet) in bets.iter().enumerate() {
                if bet.stake < 0 {
                    let message = format!("stake {} on {} is negative", bet.stake, bet.spot.as_str());
                    return Err(refuse(HintErrorKind::NegativeAmount, &format!("bets[{i}].stake"), message));
                }
                if !spots.insert(bet.spot) {
                    let message = format!("spot {} appears twice", bet.spot.as_str());
                    return Err(refuse(HintErrorKind::DuplicateSpot, &format!("bets[{i}].spot"), message));
                }
            }
        }
        BackendHint::Fold { seat, .. } | BackendHint::Play { seat, .. } if !seat_ok(*seat) => {
            return Err(seat_error("seat", *seat))
        }
        BackendHint::SangongDice { total, banker, capital, .. } => {
            if !DICE_TOTAL_RANGE.contains(total) {
                let message = format!("dice total {total} is outside 4..=24 (four dice)");
                return Err(refuse(HintErrorKind::DiceOutOfRange, "total", message));
            }
            if let Some(b) = banker.filter(|&b| !seat_ok(b)) {
                return Err(seat_error("banker", b));
            }
            if let Some(c) = capital.filter(|&c| c < 0) {
                let message = format!("banker's capital {c} is negative");
                return Err(refuse(HintErrorKind::NegativeAmount, "capital", message));
            }
        }
        BackendHint::Jackpot { pool, fixed, .. } => {
            if *pool < 0 {
                return Err(refuse(HintErrorKind::NegativeAmount, "pool", format!("pool {pool} is negative")));
            }
            if let Some((name, amount)) = fixed.iter().find(|(_, &a)| a < 0) {
                let message = format!("fixed prize {name} = {amount} is negative");
                return Err(refuse(HintErrorKind::NegativeAmount, &format!("fixed.{name}"), message));
            }
            if let Some(name) = fixed.keys().find(|name| jackpot_category(name).is_none()) {
                let message = format!(
                    "fixed prize {name} is not a hand category (royal_flush, straight_flush, quads, full_house, flush)"
                );
                return Err(refuse(HintErrorKind::Schema, &format!("fixed.{name}"), message));
            }
        }
        _ => {}
    }
    Ok(hint)
}

/// A jackpot's fixed prize name as a five-card category (`royal_flush`, `quads`, …).
pub fn jackpot_category(name: &str) -> Option<crate::rules::eval5::Category5> {
    serde_json::from_value(serde_json::Value::String(name.to_string())).ok()
}

/// The field name in a serde message like "missing field `seat`" or "unknown field `x`".
fn serde_field(message: &str) -> Option<String> {
    let start = message.find('`')? + 1;
    let len = message[start..].find('`')?;
    let field = &message[start..start + len];
    (message.contains("field")).then(|| field.to_owned())
}

/// Inbound channel settings.
#[derive(Debug, Clone)]
pub struct InboundConfig {
    /// Endpoint to bind, e.g. `tcp://127.0.0.1:5557`.
    pub endpoint: String,
    /// What messages are validated against.
    pub rules: HintRules,
    /// Plain, or CURVE server (with the backends' public keys as `allowed_clients`).
    pub security: Security,
}

/// The reply to a taken message: `{"ok":true,"type":…,"table":…}`.
#[derive(Debug, Serialize)]
struct Ack<'a> {
    ok: bool,
    #[serde(rename = "type")]
    hint_type: &'a str,
    table: &'a str,
}

/// The reply to a refused message: `{"ok":false,"error":{…HintError…}}`.
#[derive(Debug, Serialize)]
struct Nack<'a> {
    ok: bool,
    error: &'a HintError,
}

/// The ROUTER socket the backend sends hints to. Every message is answered: an ack, or the
/// [`HintError`] as JSON.
pub struct Inbound {
    socket: zmq::Socket,
    endpoint: String,
    rules: HintRules,
    _zap: Option<ZapHandler>,
    _context: zmq::Context,
}

impl Inbound {
    /// Binds the channel in a new context.
    pub fn bind(config: &InboundConfig) -> Result<Inbound, PublishError> {
        Inbound::bind_in(&zmq::Context::new(), config)
    }

    /// Binds the channel in an existing context (see [`super::Publisher::with_context`] on allow-lists).
    pub fn bind_in(context: &zmq::Context, config: &InboundConfig) -> Result<Inbound, PublishError> {
        let zap = match config.security.allow_list() {
            Some(keys) => {
                Some(ZapHandler::start(context, BTreeMap::from([(BACKEND_ZAP_DOMAIN.to_owned(), keys.clone())]))?)
            }
            None => None,
        };
        let socket =
            context.socket(zmq::ROUTER).map_err(|e| PublishError::Zmq { what: "create a ROUTER socket", source: e })?;
        let opt = |what| move |source| PublishError::Zmq { what, source };
        socket.set_linger(0).map_err(opt("set linger"))?;
        // Refuse oversized messages in libzmq, before they are buffered whole.
        socket.set_maxmsgsize(MAX_MESSAGE_BYTES as i64 + 1024).map_err(opt("set the maximum message size"))?;
        config.security.apply(&socket, BACKEND_ZAP_DOMAIN)?;
        let endpoint = Attach::Bind.attach(&socket, &config.endpoint)?;
        Ok(Inbound { socket, endpoint, rules: config.rules.clone(), _zap: zap, _context: context.clone() })
    }

    /// The endpoint bound (wildcard port resolved).
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// Waits up to `timeout` for one message, answers it, and returns it parsed or refused;
    /// `Ok(None)` when nothing came. Socket failures are the only `Err`.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Result<BackendHint, HintError>>, PublishError> {
        let io = |what| {
            let endpoint = self.endpoint.clone();
            move |source| PublishError::Io { endpoint, what, source }
        };
        let timeout_ms = i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
        if self.socket.poll(zmq::POLLIN, timeout_ms).map_err(io("poll"))? == 0 {
            return Ok(None);
        }
        let mut frames = match self.socket.recv_multipart(zmq::DONTWAIT) {
            Ok(frames) => frames,
            Err(zmq::Error::EAGAIN) => return Ok(None),
            Err(source) => return Err(io("receive")(source)),
        };
        // ROUTER prepends the peer's identity; a REQ peer adds an empty delimiter frame, which the
        // reply must repeat.
        let identity = if frames.is_empty() { Vec::new() } else { frames.remove(0) };
        let delimiter = frames.first().is_some_and(|f| f.is_empty()) && frames.len() > 1;
        if delimiter {
            frames.remove(0);
        }
        let parsed = match frames.as_slice() {
            [payload] => parse_hint(payload, &self.rules),
            _ => Err(HintError {
                kind: HintErrorKind::Framing,
                hint_type: None,
                table: None,
                field: None,
                message: format!("{} frames, expected one JSON frame", frames.len()),
            }),
        };
        let reply = match &parsed {
            Ok(hint) => serde_json::to_vec(&Ack { ok: true, hint_type: hint.type_name(), table: hint.table() }),
            Err(error) => serde_json::to_vec(&Nack { ok: false, error }),
        }
        .unwrap_or_default();
        let mut out: Vec<&[u8]> = vec![&identity];
        if delimiter {
            out.push(b"");
        }
        out.push(&reply);
        // The backend may have gone away; its reply is then undeliverable, not our failure.
        let _ = self.socket.send_multipart(out, zmq::DONTWAIT);
        Ok(Some(parsed))
    }
}
