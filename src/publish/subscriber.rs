//! The event subscriber: topic filters, per-table gap detection from `seq`, heartbeat timeouts,
//! and receives that always have a timeout.
use std::collections::{HashMap, VecDeque};
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::keys::Security;
use super::{split_topic, Attach, PublishError, HEARTBEAT_KIND};
use crate::publish::publisher::DEFAULT_ENDPOINT;

/// Default receive high-water mark, messages.
pub const DEFAULT_RECV_HWM: i32 = 100_000;

/// Default: a table is reported silent after this long without any message, ms (wall clock at
/// the subscriber; five missed heartbeats at the default period).
pub const DEFAULT_HEARTBEAT_TIMEOUT_MS: u64 = 5000;

/// The longest single wait inside [`Subscriber::recv`], so heartbeat timeouts are noticed
/// while no message arrives.
const POLL_SLICE_MS: u64 = 100;

/// Subscriber settings.
#[derive(Debug, Clone)]
pub struct SubscriberConfig {
    /// The publisher's (or proxy's) endpoint.
    pub endpoint: String,
    /// Topic prefixes to receive (`t1.` = everything of table t1, `t1.round.` = its round events);
    /// empty = everything.
    pub filters: Vec<String>,
    /// Messages queued before ZeroMQ drops new ones (ZMQ_RCVHWM).
    pub recv_hwm: i32,
    /// Report a table silent after this long without a message, ms; 0 = never.
    pub heartbeat_timeout_ms: u64,
    /// Plain, or CURVE client (the server's public key and this subscriber's key pair).
    pub security: Security,
}

impl Default for SubscriberConfig {
    fn default() -> Self {
        SubscriberConfig {
            endpoint: DEFAULT_ENDPOINT.to_owned(),
            filters: Vec::new(),
            recv_hwm: DEFAULT_RECV_HWM,
            heartbeat_timeout_ms: DEFAULT_HEARTBEAT_TIMEOUT_MS,
            security: Security::Plain,
        }
    }
}

/// One received event.
#[derive(Debug, Clone, PartialEq)]
pub struct Received {
    /// `<table>.<kind>`.
    pub topic: String,
    /// The table id (topic up to the first dot).
    pub table: String,
    /// The event kind (topic after the first dot), e.g. `round.flag`.
    pub kind: String,
    /// The event's `seq`, if its JSON has one.
    pub seq: Option<u64>,
    /// The event JSON as published.
    pub json: Vec<u8>,
}

/// Events the subscriber missed: `first..=last` of `table`'s seqs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gap {
    /// The table.
    pub table: String,
    /// The first missing seq.
    pub first: u64,
    /// The last missing seq.
    pub last: u64,
}

/// What [`Subscriber::recv`] hands out.
#[derive(Debug, Clone, PartialEq)]
pub enum Delivery {
    /// An event.
    Event(Received),
    /// A heartbeat: the table's publisher is alive and has published up to `last_seq`.
    Heartbeat {
        /// The table.
        table: String,
        /// The seq of its last published event (0: none yet).
        last_seq: u64,
    },
    /// Events missed (reported before the message that revealed it).
    Gap(Gap),
    /// A table that was heard before has been silent for `silent_ms` (reported once until it is
    /// heard again).
    Silent {
        /// The table.
        table: String,
        /// How long, ms.
        silent_ms: u64,
    },
    /// A seq lower than or equal to one already seen: the publisher restarted, or a duplicate.
    SeqRestart {
        /// The table.
        table: String,
        /// The highest seq seen before.
        last: u64,
        /// The seq received.
        got: u64,
    },
    /// A message that is not `[topic, json]` with a `<table>.<kind>` topic and JSON content.
    Malformed {
        /// What is wrong.
        reason: String,
    },
}

#[derive(Debug)]
struct TableWatch {
    last_seq: Option<u64>,
    last_heard: Instant,
    reported_silent: bool,
}

/// Subscribes to published events. Every receive has a timeout; gaps and silent tables come out
/// of the same [`Subscriber::recv`] as the events.
///
/// Gap detection needs every event of a table: it runs only for tables whose whole topic space
/// `<table>.` is covered by a filter (or with no filters); with a kind filter like `t1.round.`
/// the seqs of the table's other kinds are legitimately absent.
pub struct Subscriber {
    socket: zmq::Socket,
    endpoint: String,
    filters: Vec<String>,
    heartbeat_timeout: Option<Duration>,
    tables: HashMap<String, TableWatch>,
    pending: VecDeque<Delivery>,
    _context: zmq::Context,
}

impl Subscriber {
    /// Connects in a new ZeroMQ context.
    pub fn connect(config: &SubscriberConfig) -> Result<Subscriber, PublishError> {
        Subscriber::connect_in(&zmq::Context::new(), config)
    }

    /// Connects in an existing context (needed for `inproc://`).
    pub fn connect_in(context: &zmq::Context, config: &SubscriberConfig) -> Result<Subscriber, PublishError> {
        let socket =
            context.socket(zmq::SUB).map_err(|e| PublishError::Zmq { what: "create a SUB socket", source: e })?;
        let opt = |what| move |source| PublishError::Zmq { what, source };
        socket.set_rcvhwm(config.recv_hwm).map_err(opt("set the receive high-water mark"))?;
        socket.set_linger(0).map_err(opt("set linger"))?;
        config.security.apply(&socket, "")?;
        let filters = if config.filters.is_empty() { vec![String::new()] } else { config.filters.clone() };
        for filter in &filters {
            socket.set_subscribe(filter.as_bytes()).map_err(opt("subscribe"))?;
        }
        let endpoint = Attach::Connect.attach(&socket, &config.endpoint)?;
        Ok(Subscriber {
            socket,
            endpoint,
            filters,
            heartbeat_timeout: (config.heartbeat_timeout_ms > 0)
                .then(|| Duration::from_millis(config.heartbeat_timeout_ms)),
            tables: HashMap::new(),
            pending: VecDeque::new(),
            _context: context.clone(),
        })
    }

    /// The endpoint connected to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The next delivery, waiting at most `timeout`; `Ok(None)` when nothing came.
    pub fn recv(&mut self, timeout: Duration) -> Result<Option<Delivery>, PublishError> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(d) = self.pending.pop_front() {
                return Ok(Some(d));
            }
            self.check_silence();
            if let Some(d) = self.pending.pop_front() {
                return Ok(Some(d));
            }
            let now = Instant::now();
            if now >= deadline && !timeout.is_zero() {
                return Ok(None);
            }
            let slice = (deadline.saturating_duration_since(now)).min(Duration::from_millis(POLL_SLICE_MS));
            let ready = self.socket.poll(zmq::POLLIN, slice.as_millis() as i64).map_err(|source| PublishError::Io {
                endpoint: self.endpoint.clone(),
                what: "poll",
                source,
            })?;
            if ready > 0 {
                match self.socket.recv_multipart(zmq::DONTWAIT) {
                    Ok(frames) => self.accept(frames),
                    Err(zmq::Error::EAGAIN) => {}
                    Err(source) => {
                        return Err(PublishError::Io { endpoint: self.endpoint.clone(), what: "receive", source })
                    }
                }
            } else if timeout.is_zero() {
                self.check_silence();
                return Ok(self.pending.pop_front());
            }
        }
    }

    /// Turns one message into deliveries (queued in order).
    fn accept(&mut self, frames: Vec<Vec<u8>>) {
        let [topic, json] = match <[Vec<u8>; 2]>::try_from(frames) {
            Ok(pair) => pair,
            Err(frames) => {
                let reason = format!("{} frames, expected 2 ([topic, json])", frames.len());
                return self.pending.push_back(Delivery::Malformed { reason });
            }
        };
        let Ok(topic) = String::from_utf8(topic) else {
            return self.pending.push_back(Delivery::Malformed { reason: "topic is not UTF-8".to_owned() });
        };
        let (table, kind) = match split_topic(&topic) {
            Ok((t, k)) => (t.to_owned(), k.to_owned()),
            Err(e) => return self.pending.push_back(Delivery::Malformed { reason: e.to_string() }),
        };
        #[derive(Deserialize)]
        struct Seqs {
            seq: Option<u64>,
            last_seq: Option<u64>,
        }
        let seqs: Seqs = match serde_json::from_slice(&json) {
            Ok(s) => s,
            Err(e) => {
                let reason = format!("{topic}: content is not a JSON object: {e}");
                return self.pending.push_back(Delivery::Malformed { reason });
            }
        };
        let gaps_apply = self.covers_table(&table);
        let watch = self.tables.entry(table.clone()).or_insert(TableWatch {
            last_seq: None,
            last_heard: Instant::now(),
            reported_silent: false,
        });
        watch.last_heard = Instant::now();
        watch.reported_silent = false;

        if kind == HEARTBEAT_KIND {
            let last_seq = seqs.last_seq.unwrap_or(0);
            if gaps_apply && last_seq > 0 {
                match watch.last_seq {
                    Some(seen) if last_seq > seen => {
                        self.pending.push_back(Delivery::Gap(Gap {
                            table: table.clone(),
                            first: seen + 1,
                            last: last_seq,
                        }));
                        watch.last_seq = Some(last_seq);
                    }
                    // Joined during a quiet spell: nothing to compare with yet.
                    None => watch.last_seq = Some(last_seq),
                    _ => {}
                }
            }
            return self.pending.push_back(Delivery::Heartbeat { table, last_seq });
        }
        if let (true, Some(seq)) = (gaps_apply, seqs.seq) {
            match watch.last_seq {
                Some(seen) if seq == seen + 1 => {}
                Some(seen) if seq > seen + 1 => {
                    self.pending.push_back(Delivery::Gap(Gap { table: table.clone(), first: seen + 1, last: seq - 1 }))
                }
                Some(seen) => {
                    self.pending.push_back(Delivery::SeqRestart { table: table.clone(), last: seen, got: seq })
                }
                None => {}
            }
            watch.last_seq = Some(seq);
        }
        self.pending.push_back(Delivery::Event(Received { topic, table, kind, seq: seqs.seq, json }));
    }

    /// Whether every topic of `table` passes the filters.
    fn covers_table(&self, table: &str) -> bool {
        let all = format!("{table}.");
        self.filters.iter().any(|f| all.starts_with(f.as_str()))
    }

    fn check_silence(&mut self) {
        let Some(timeout) = self.heartbeat_timeout else { return };
        let mut silent: Vec<(String, u64)> = self
            .tables
            .iter_mut()
            .filter(|(_, w)| !w.reported_silent && w.last_heard.elapsed() >= timeout)
            .map(|(table, w)| {
                w.reported_silent = true;
                (table.clone(), w.last_heard.elapsed().as_millis() as u64)
            })
            .collect();
        silent.sort();
        self.pending.extend(silent.into_iter().map(|(table, silent_ms)| Delivery::Silent { table, silent_ms }));
    }
}
