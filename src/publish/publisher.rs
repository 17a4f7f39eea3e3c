//! The event publisher: a ZeroMQ PUB socket sending `[topic, json]` messages, with per-table
//! heartbeats driven by frame time.
use std::collections::{BTreeMap, HashMap};

use super::keys::{Security, ZapHandler};
use super::{split_topic, Attach, PublishError, HEARTBEAT_KIND, SUBSCRIBERS_ZAP_DOMAIN};

/// Where the publisher binds by default.
pub const DEFAULT_ENDPOINT: &str = "tcp://127.0.0.1:5556";

/// Default send high-water mark, in messages per subscriber: about 100 s of a busy table's
/// events at 10 events/s for each of 100 tables before a stalled subscriber starts losing them.
pub const DEFAULT_SEND_HWM: i32 = 100_000;

/// Default heartbeat period, in ms of frame time.
pub const DEFAULT_HEARTBEAT_INTERVAL_MS: f64 = 1000.0;

/// How long unsent messages are kept when the publisher closes, ms.
const DEFAULT_LINGER_MS: i32 = 1000;

/// Publisher settings (runtime form; key files are loaded by the caller into [`Security`]).
#[derive(Debug, Clone)]
pub struct PublisherConfig {
    /// ZeroMQ endpoint, e.g. `tcp://127.0.0.1:5556`, `tcp://*:5556`, `inproc://events`.
    pub endpoint: String,
    /// Bind (subscribers connect here) or connect (into a proxy's frontend).
    pub attach: Attach,
    /// Messages queued per subscriber before new ones are dropped for it (ZMQ_SNDHWM).
    pub send_hwm: i32,
    /// Heartbeat period per table, ms of frame time.
    pub heartbeat_interval_ms: f64,
    /// Plain, or CURVE: server when binding, client when connecting to a CURVE proxy.
    pub security: Security,
}

impl Default for PublisherConfig {
    fn default() -> Self {
        PublisherConfig {
            endpoint: DEFAULT_ENDPOINT.to_owned(),
            attach: Attach::Bind,
            send_hwm: DEFAULT_SEND_HWM,
            heartbeat_interval_ms: DEFAULT_HEARTBEAT_INTERVAL_MS,
            security: Security::Plain,
        }
    }
}

/// What the publisher remembers per table.
#[derive(Debug, Default)]
struct TableState {
    /// The seq of the last event published (0: none yet; seqs start at 1).
    last_seq: u64,
    /// Frame time of the last heartbeat sent.
    last_heartbeat_ms: Option<f64>,
}

/// Publishes already-serialized events on a ZeroMQ PUB socket as two-frame messages
/// `[topic, json]`, topic `<table>.<kind>`.
///
/// PUB never blocks: a subscriber that falls `send_hwm` messages behind loses the newest ones,
/// which it detects from the gap in `seq` (see [`super::Subscriber`]). That is why events are
/// journaled first: the journal, not the stream, is the record.
pub struct Publisher {
    socket: zmq::Socket,
    endpoint: String,
    heartbeat_interval_ms: f64,
    tables: HashMap<String, TableState>,
    sent: u64,
    // Kept alive for the socket's handshakes; dropped after the socket (field order).
    _zap: Option<ZapHandler>,
    context: zmq::Context,
}

impl Publisher {
    /// Opens the socket in a new ZeroMQ context and binds (or connects) it.
    pub fn new(config: &PublisherConfig) -> Result<Publisher, PublishError> {
        Publisher::with_context(&zmq::Context::new(), config)
    }

    /// Like [`Publisher::new`], in an existing context (needed for `inproc://` endpoints, which
    /// only reach sockets of the same context). A context holds at most one client allow-list
    /// handler, so at most one CURVE server with `allowed_clients` per context.
    pub fn with_context(context: &zmq::Context, config: &PublisherConfig) -> Result<Publisher, PublishError> {
        if !config.heartbeat_interval_ms.is_finite() || config.heartbeat_interval_ms <= 0.0 {
            return Err(PublishError::Config(format!(
                "heartbeat interval {} ms: must be positive",
                config.heartbeat_interval_ms
            )));
        }
        if config.send_hwm < 0 {
            return Err(PublishError::Config(format!("send high-water mark {}: must be ≥ 0", config.send_hwm)));
        }
        let zap = match config.security.allow_list() {
            Some(keys) => {
                Some(ZapHandler::start(context, BTreeMap::from([(SUBSCRIBERS_ZAP_DOMAIN.to_owned(), keys.clone())]))?)
            }
            None => None,
        };
        let socket =
            context.socket(zmq::PUB).map_err(|e| PublishError::Zmq { what: "create a PUB socket", source: e })?;
        let opt = |what| move |source| PublishError::Zmq { what, source };
        socket.set_sndhwm(config.send_hwm).map_err(opt("set the send high-water mark"))?;
        socket.set_linger(DEFAULT_LINGER_MS).map_err(opt("set linger"))?;
        config.security.apply(&socket, SUBSCRIBERS_ZAP_DOMAIN)?;
        let endpoint = config.attach.attach(&socket, &config.endpoint)?;
        Ok(Publisher {
            socket,
            endpoint,
            heartbeat_interval_ms: config.heartbeat_interval_ms,
            tables: HashMap::new(),
            sent: 0,
            _zap: zap,
            context: context.clone(),
        })
    }

    /// The endpoint actually bound (a `tcp://…:*` wildcard port resolved), or the one connected to.
    pub fn endpoint(&self) -> &str {
        &self.endpoint
    }

    /// The ZeroMQ context (for `inproc://` subscribers in the same process).
    pub fn context(&self) -> &zmq::Context {
        &self.context
    }

    /// Messages handed to ZeroMQ so far (events and heartbeats).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// Publishes one event: `topic` is `<table>.<kind>` (the table id has no dot), `json` the
    /// serialized event, which must carry the same `seq` (subscribers read it from there to
    /// detect gaps). Call after the event was journaled.
    pub fn publish(&mut self, topic: &str, json: &[u8], seq: u64) -> Result<(), PublishError> {
        let (table, _kind) = split_topic(topic)?;
        self.send(topic, json)?;
        let state = self.tables.entry(table.to_owned()).or_default();
        state.last_seq = state.last_seq.max(seq);
        Ok(())
    }

    /// Sends `<table>.heartbeat` if the table has had none yet or `heartbeat_interval_ms` of frame
    /// time have passed since the last one (or frame time went backwards: a restarted source).
    /// Call it once per processed frame of the table; returns whether a heartbeat went out.
    ///
    /// The heartbeat is `{"schema":1,"kind":"heartbeat","table_id":…,"last_seq":…,"time_ms":…}`:
    /// `last_seq` is the seq of the table's last published event (0 before the first), so a
    /// subscriber that missed the last events before a quiet spell notices it.
    pub fn tick(&mut self, table: &str, frame_time_ms: f64) -> Result<bool, PublishError> {
        let state = self.tables.entry(table.to_owned()).or_default();
        let due = match state.last_heartbeat_ms {
            None => true,
            Some(last) => frame_time_ms - last >= self.heartbeat_interval_ms || frame_time_ms < last,
        };
        if !due {
            return Ok(false);
        }
        let last_seq = state.last_seq;
        let topic = format!("{table}.{HEARTBEAT_KIND}");
        split_topic(&topic)?;
        let json = serde_json::json!({
            "schema": 1,
            "kind": HEARTBEAT_KIND,
            "table_id": table,
            "last_seq": last_seq,
            "time_ms": frame_time_ms,
        });
        self.send(&topic, json.to_string().as_bytes())?;
        if let Some(state) = self.tables.get_mut(table) {
            state.last_heartbeat_ms = Some(frame_time_ms);
        }
        Ok(true)
    }

    fn send(&mut self, topic: &str, json: &[u8]) -> Result<(), PublishError> {
        self.socket.send_multipart([topic.as_bytes(), json], zmq::DONTWAIT).map_err(|source| PublishError::Io {
            endpoint: self.endpoint.clone(),
            what: "send",
            source,
        })?;
        self.sent += 1;
        Ok(())
    }
}
