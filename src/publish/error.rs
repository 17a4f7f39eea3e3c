use std::path::PathBuf;

/// Errors of publishing, subscribing, the backend channel and the proxy. Each names the
/// endpoint or key file concerned.
#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// A ZeroMQ call that is not tied to an endpoint failed.
    #[error("ZeroMQ: cannot {what}: {source}")]
    Zmq {
        /// What was being done.
        what: &'static str,
        /// libzmq's error.
        source: zmq::Error,
    },
    /// Binding failed (address in use, bad endpoint syntax, …).
    #[error("cannot bind {endpoint}: {source}")]
    Bind {
        /// The endpoint.
        endpoint: String,
        /// libzmq's error.
        source: zmq::Error,
    },
    /// Connecting failed (bad endpoint syntax; an absent peer is not an error in ZeroMQ).
    #[error("cannot connect to {endpoint}: {source}")]
    Connect {
        /// The endpoint.
        endpoint: String,
        /// libzmq's error.
        source: zmq::Error,
    },
    /// Sending or receiving on an endpoint failed.
    #[error("{endpoint}: cannot {what}: {source}")]
    Io {
        /// The endpoint.
        endpoint: String,
        /// What was being done.
        what: &'static str,
        /// libzmq's error.
        source: zmq::Error,
    },
    /// A key file is malformed, missing a key, or too widely readable.
    #[error("key file {path}: {reason}")]
    KeyFile {
        /// The file (or key directory).
        path: PathBuf,
        /// What is wrong and how to fix it.
        reason: String,
    },
    /// A file (key file, key directory, events file) cannot be read or written.
    #[error("{path}: {action}: {source}")]
    File {
        /// The file or directory.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// Why it failed.
        source: std::io::Error,
    },
    /// CURVE keys were configured but libzmq was built without CURVE.
    #[error("CURVE keys are configured but this libzmq has no CURVE support (zmq::has(\"curve\") is false); tablecam must link Debian's libzmq5 (vendor/zmq-sys, docs/stack.md)")]
    CurveUnavailable,
    /// A topic that is not `<table>.<kind>` or a table id that cannot be one.
    #[error("bad topic {topic:?}: {reason}")]
    BadTopic {
        /// The topic (or table id).
        topic: String,
        /// What is wrong.
        reason: &'static str,
    },
    /// A helper thread could not be started.
    #[error("cannot start a thread: {0}")]
    Thread(String),
    /// A configuration value is out of range.
    #[error("configuration: {0}")]
    Config(String),
}
