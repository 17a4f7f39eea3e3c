//! The dashboard's picture of every table, folded from events; what the browsers are sent.
use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::Serialize;
use serde_json::{json, Value};

use crate::events::{BackendHint, Event, EventBody, StageHealth, TableZone};

/// Alerts kept in memory; older ones are dropped (the journal and the event stream keep them all).
const MAX_ALERTS: usize = 500;
/// Rounds whose received events are kept for the evidence panel (the oldest go first).
const MAX_ROUND_LOGS: usize = 600;

/// A flag as acks name it: table, round, flag number within the round.
type FlagKey = (String, Option<String>, u32);

/// One card as the tile shows it.
#[derive(Debug, Clone, Serialize)]
struct CardView {
    track: u32,
    zone: String,
    order: u32,
    face_up: bool,
    /// The code (`"QH"`) when confirmed, else `null` (shown as `?` face up, a back face down).
    card: Option<String>,
}

/// One table's tile.
#[derive(Debug, Clone, Default, Serialize)]
struct TableView {
    table: String,
    camera: String,
    ruleset: Option<String>,
    round_id: Option<String>,
    phase: String,
    seats_with_bets: Vec<u8>,
    /// Backend-told wagers by seat (`[{"bet":"ante","stake":200}]`).
    wagers: BTreeMap<u8, Value>,
    /// Cards on the table this round, by tracker id (removed and discarded cards leave).
    cards: BTreeMap<u32, CardView>,
    /// The round's outcome once settled (the `round.outcome` body as published).
    outcome: Option<Value>,
    /// Flags of the current round (alert ids).
    flags: Vec<u64>,
    last_seq: u64,
    last_time_ms: f64,
}

/// A flag in the alert list.
#[derive(Debug, Clone, Serialize)]
pub struct Alert {
    /// The dashboard's number for it (what `/api/ack` names).
    pub id: u64,
    /// The table.
    pub table: String,
    /// The round.
    pub round_id: Option<String>,
    /// The flag's number within its round.
    pub flag_id: u32,
    /// The irregularity (snake case).
    pub irregularity: Value,
    /// The seat concerned (none: dealer or whole round).
    pub seat: Option<u8>,
    /// The consequence object as published.
    pub consequence: Value,
    /// The article.
    pub citation: String,
    /// What was seen.
    pub detail: String,
    /// The event's frame time, ms (camera time, not the wall clock).
    pub time_ms: f64,
    /// Who acknowledged it and when (wall clock, RFC 3339), if anyone did.
    pub acked: Option<(String, String)>,
}

/// Health of one camera: its stages' last counters and link problems seen by the subscriber.
#[derive(Debug, Clone, Default, Serialize)]
struct HealthView {
    table: String,
    camera: String,
    stages: Vec<StageHealth>,
    /// Latest link notice (gap, silence, publisher restart), for people.
    link: Option<String>,
}

/// Everything the page shows, folded from the events received so far.
#[derive(Debug, Default)]
pub struct DashboardState {
    tables: BTreeMap<String, TableView>,
    /// Newest last here; served newest first.
    alerts: Vec<Alert>,
    health: BTreeMap<String, HealthView>,
    next_alert: u64,
    events: u64,
    /// Input that could not be used (malformed lines), last few, for people.
    input_errors: Vec<String>,
    version: u64,
    /// Every acknowledgement (from the ack journal at start, then this run's), by flag: a flag
    /// that arrives again after a restart shows as acknowledged.
    acks: HashMap<FlagKey, (String, String)>,
    /// The events received for each recent round, as JSON lines, for the evidence panel.
    round_logs: HashMap<(String, String), Vec<String>>,
    round_order: VecDeque<(String, String)>,
}

impl DashboardState {
    /// An empty state.
    pub fn new() -> DashboardState {
        DashboardState { next_alert: 1, ..DashboardState::default() }
    }

    /// Bumped on every change; browsers are pushed a snapshot when it moves.
    pub fn version(&self) -> u64 {
        self.version
    }

    /// Folds one event in.
    pub fn apply(&mut self, event: &Event) {
        self.version += 1;
        self.events += 1;
        if let Some(round) = &event.round_id {
            self.log_round_event(&event.table_id, round, event.to_json());
        }
        if let EventBody::Health { stages } = &event.body {
            let key = format!("{}/{}", event.table_id, event.camera_id);
            let h = self.health.entry(key).or_default();
            h.table.clone_from(&event.table_id);
            h.camera.clone_from(&event.camera_id);
            h.stages.clone_from(stages);
            return;
        }
        let t = self.tables.entry(event.table_id.clone()).or_default();
        t.table.clone_from(&event.table_id);
        t.camera.clone_from(&event.camera_id);
        t.last_seq = event.seq;
        t.last_time_ms = event.time_ms;
        // A new round id clears the tile: the previous round's cards and outcome are history.
        if event.round_id.is_some() && event.round_id != t.round_id {
            t.round_id.clone_from(&event.round_id);
            t.cards.clear();
            t.wagers.clear();
            t.seats_with_bets.clear();
            t.outcome = None;
            t.flags.clear();
        }
        match &event.body {
            EventBody::RoundStarted { ruleset, seats_with_bets, .. } => {
                t.ruleset = Some(ruleset.to_string());
                t.seats_with_bets.clone_from(seats_with_bets);
                if t.phase.is_empty() || t.phase == "waiting_for_bets" {
                    t.phase = "dealing".into();
                }
            }
            EventBody::CardDealt { track, zone, order, face_up, card } => {
                if *zone == TableZone::Discard {
                    t.cards.remove(track);
                } else {
                    t.cards.insert(
                        *track,
                        CardView {
                            track: *track,
                            zone: zone.to_string(),
                            order: *order,
                            face_up: *face_up,
                            card: card.map(|c| c.to_string()),
                        },
                    );
                }
            }
            EventBody::CardTurned { track, zone, face_up, card } => {
                let c = t.cards.entry(*track).or_insert_with(|| CardView {
                    track: *track,
                    zone: zone.to_string(),
                    order: 0,
                    face_up: *face_up,
                    card: None,
                });
                c.face_up = *face_up;
                if card.is_some() {
                    c.card = card.map(|c| c.to_string());
                }
            }
            EventBody::CardIdentified { track, card, .. } => {
                if let Some(c) = t.cards.get_mut(track) {
                    c.card = Some(card.to_string());
                }
            }
            EventBody::CardMoved { track, to, .. } => {
                if *to == TableZone::Discard {
                    t.cards.remove(track);
                } else if let Some(c) = t.cards.get_mut(track) {
                    c.zone = to.to_string();
                }
            }
            EventBody::CardRemoved { track, .. } => {
                t.cards.remove(track);
            }
            EventBody::RoundState { to, .. } => t.phase = to.as_str().to_string(),
            EventBody::RoundFlag(flag) => {
                let id = self.next_alert;
                self.next_alert += 1;
                t.flags.push(id);
                self.alerts.push(Alert {
                    id,
                    table: event.table_id.clone(),
                    round_id: event.round_id.clone(),
                    flag_id: flag.flag_id,
                    irregularity: serde_json::to_value(flag.irregularity).unwrap_or(Value::Null),
                    seat: flag.seat,
                    consequence: flag.consequence.clone(),
                    citation: flag.citation.clone(),
                    detail: flag.detail.clone(),
                    time_ms: event.time_ms,
                    acked: self.acks.get(&(event.table_id.clone(), event.round_id.clone(), flag.flag_id)).cloned(),
                });
                if self.alerts.len() > MAX_ALERTS {
                    self.alerts.remove(0);
                }
            }
            EventBody::RoundOutcome(outcome) => {
                t.ruleset = Some(outcome.ruleset.to_string());
                t.outcome = serde_json::to_value(outcome).ok();
            }
            EventBody::BackendHint(BackendHint::Bets { seat, wagers }) => {
                t.wagers.insert(*seat, serde_json::to_value(wagers).unwrap_or(Value::Null));
            }
            EventBody::Health { .. } | EventBody::BackendHint(_) | EventBody::Error { .. } => {}
        }
    }

    /// Notes a problem with the event link of a table (gap, silence, restart).
    pub fn link_notice(&mut self, table: &str, notice: String) {
        self.version += 1;
        let h = self.health.entry(format!("{table}/(link)")).or_default();
        h.table = table.to_string();
        h.camera = "(link)".into();
        h.link = Some(notice);
    }

    /// Notes input that could not be used (a malformed line), keeping the last few.
    pub fn input_error(&mut self, message: String) {
        self.version += 1;
        self.input_errors.push(message);
        if self.input_errors.len() > 20 {
            self.input_errors.remove(0);
        }
    }

    /// The alert with this id, if still kept.
    pub fn alert(&self, id: u64) -> Option<&Alert> {
        self.alerts.iter().find(|a| a.id == id)
    }

    /// Marks an alert acknowledged; false if it is unknown.
    pub fn acknowledge(&mut self, id: u64, user: &str, wall_time: &str) -> bool {
        let Some(a) = self.alerts.iter_mut().find(|a| a.id == id) else { return false };
        let ack = (user.to_string(), wall_time.to_string());
        a.acked = Some(ack.clone());
        self.acks.insert((a.table.clone(), a.round_id.clone(), a.flag_id), ack);
        self.version += 1;
        true
    }

    /// An acknowledgement read back from the ack journal: its flag (already here or still to
    /// come) shows as acknowledged by `user` at `wall_time`.
    pub fn restore_ack(&mut self, table: &str, round_id: Option<&str>, flag_id: u32, user: &str, wall_time: &str) {
        let key = (table.to_string(), round_id.map(str::to_string), flag_id);
        let ack = (user.to_string(), wall_time.to_string());
        for a in &mut self.alerts {
            if (&a.table, &a.round_id, a.flag_id) == (&key.0, &key.1, key.2) {
                a.acked = Some(ack.clone());
            }
        }
        self.acks.insert(key, ack);
        self.version += 1;
    }

    fn log_round_event(&mut self, table: &str, round: &str, json: String) {
        let key = (table.to_string(), round.to_string());
        if let Some(log) = self.round_logs.get_mut(&key) {
            log.push(json);
            return;
        }
        self.round_order.push_back(key.clone());
        self.round_logs.insert(key, vec![json]);
        if self.round_order.len() > MAX_ROUND_LOGS {
            if let Some(old) = self.round_order.pop_front() {
                self.round_logs.remove(&old);
            }
        }
    }

    /// The events received for a round (JSON lines, in arrival order), if it is still kept.
    pub fn round_events(&self, table: &str, round: &str) -> Option<&[String]> {
        self.round_logs.get(&(table.to_string(), round.to_string())).map(Vec::as_slice)
    }

    /// The whole picture as JSON: tables by id, alerts newest first, health, counters.
    pub fn snapshot(&self) -> Value {
        let tables: Vec<Value> = self
            .tables
            .values()
            .map(|t| {
                let mut v = serde_json::to_value(t).unwrap_or(Value::Null);
                // Cards as a list in zone then arrival order, which is how the tile lays them out.
                let mut cards: Vec<&CardView> = t.cards.values().collect();
                cards.sort_by(|a, b| (&a.zone, a.order, a.track).cmp(&(&b.zone, b.order, b.track)));
                v["cards"] = serde_json::to_value(cards).unwrap_or(Value::Null);
                v
            })
            .collect();
        let alerts: Vec<&Alert> = self.alerts.iter().rev().collect();
        json!({
            "version": self.version,
            "events": self.events,
            "tables": tables,
            "alerts": alerts,
            "health": self.health.values().collect::<Vec<_>>(),
            "input_errors": self.input_errors,
        })
    }
}
