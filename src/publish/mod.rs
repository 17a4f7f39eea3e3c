//! Getting events to subscribers: a ZeroMQ PUB [`Publisher`] with per-table heartbeats, a
//! [`Subscriber`] that detects gaps and silent tables, the backend's inbound channel
//! ([`Inbound`], [`BackendHint`]), the XSUB/XPUB proxy ([`ProxyHandle`], [`run_proxy`]) and CURVE
//! keys ([`KeyPair`], [`Security`]). Design, wire formats and deployment: `docs/publishing.md`.
//!
//! The API takes already-serialized events (`topic`, `json`, `seq`): the pipeline serializes, the
//! journal ([`crate::record::Journal`]) records, and only then does the publisher send.
pub mod cli;
mod error;
mod inbound;
mod keys;
mod proxy;
mod publisher;
mod subscriber;

pub use error::PublishError;
pub use inbound::{
    jackpot_category, parse_hint, BackendHint, HintError, HintErrorKind, HintRules, Inbound, InboundConfig, SpotStake,
    DEFAULT_INBOUND_ENDPOINT, HINT_TYPES, MAX_MESSAGE_BYTES,
};
pub use keys::{read_public_key, read_public_keys_dir, CurveKey, KeyPair, Security};
pub use proxy::{run_proxy, ProxyConfig, ProxyHandle};
pub use publisher::{Publisher, PublisherConfig, DEFAULT_ENDPOINT, DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_SEND_HWM};
pub use subscriber::{
    Delivery, Gap, Received, Subscriber, SubscriberConfig, DEFAULT_HEARTBEAT_TIMEOUT_MS, DEFAULT_RECV_HWM,
};

/// The kind of the publisher's heartbeat messages (topic `<table>.heartbeat`).
pub const HEARTBEAT_KIND: &str = "heartbeat";

/// ZAP domains: which allow-list a CURVE server socket checks its clients against.
const SUBSCRIBERS_ZAP_DOMAIN: &str = "tablecam.subscribers";
const PUBLISHERS_ZAP_DOMAIN: &str = "tablecam.publishers";
const BACKEND_ZAP_DOMAIN: &str = "tablecam.backend";

/// Whether a socket binds its endpoint or connects to it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Attach {
    /// Bind: peers connect here (a publisher serving subscribers directly).
    #[default]
    Bind,
    /// Connect: to a peer that binds (a publisher feeding a proxy's frontend).
    Connect,
}

impl Attach {
    /// Binds or connects `socket`; returns the endpoint (for a bind, as resolved by libzmq, so
    /// `tcp://127.0.0.1:*` comes back with its port).
    fn attach(self, socket: &zmq::Socket, endpoint: &str) -> Result<String, PublishError> {
        match self {
            Attach::Bind => {
                socket.bind(endpoint).map_err(|source| PublishError::Bind { endpoint: endpoint.to_owned(), source })?;
                Ok(socket.get_last_endpoint().ok().and_then(Result::ok).unwrap_or_else(|| endpoint.to_owned()))
            }
            Attach::Connect => {
                socket
                    .connect(endpoint)
                    .map_err(|source| PublishError::Connect { endpoint: endpoint.to_owned(), source })?;
                Ok(endpoint.to_owned())
            }
        }
    }
}

/// Splits `<table>.<kind>` at the first dot (kinds may contain dots: `round.flag`).
pub fn split_topic(topic: &str) -> Result<(&str, &str), PublishError> {
    let bad = |reason| PublishError::BadTopic { topic: topic.to_owned(), reason };
    let (table, kind) = topic.split_once('.').ok_or_else(|| bad("expected <table>.<kind>"))?;
    if table.is_empty() || kind.is_empty() {
        return Err(bad("empty table id or kind"));
    }
    if topic.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("contains whitespace"));
    }
    Ok((table, kind))
}
