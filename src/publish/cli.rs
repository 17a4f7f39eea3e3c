//! `tablecam subscribe`, `tablecam proxy`, `tablecam keys` and `tablecam publish`.
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::{Args, Subcommand};

use super::keys::{read_public_key, read_public_keys_dir, KeyPair, Security};
use super::{
    run_proxy, Attach, Delivery, ProxyConfig, PublishError, Publisher, PublisherConfig, Subscriber, SubscriberConfig,
    DEFAULT_ENDPOINT, DEFAULT_HEARTBEAT_INTERVAL_MS, DEFAULT_HEARTBEAT_TIMEOUT_MS, DEFAULT_RECV_HWM, DEFAULT_SEND_HWM,
};

/// Longest text of one field in the readable `subscribe` output, characters.
const FIELD_TEXT_MAX: usize = 60;

/// `tablecam subscribe` arguments.
#[derive(Debug, Args)]
pub struct SubscribeArgs {
    /// The publisher's or proxy's endpoint.
    #[arg(long, default_value = DEFAULT_ENDPOINT)]
    pub endpoint: String,
    /// Topic prefix to receive (repeatable): `t1.` = table t1, `t1.round.` = its round events; none = all.
    #[arg(long = "filter", value_name = "PREFIX")]
    pub filters: Vec<String>,
    /// Print each event as its JSON line instead of a readable line.
    #[arg(long)]
    pub json: bool,
    /// Also print heartbeats.
    #[arg(long)]
    pub heartbeats: bool,
    /// The server's public key file (NAME.pub): turns CURVE on.
    #[arg(long, value_name = "FILE", requires = "client_keys")]
    pub server_key: Option<PathBuf>,
    /// This subscriber's key pair: a NAME.key file, or a directory holding client.key.
    #[arg(long, value_name = "DIR|FILE", requires = "server_key")]
    pub client_keys: Option<PathBuf>,
    /// Warn when a table has been silent this long, ms (0 = never).
    #[arg(long, default_value_t = DEFAULT_HEARTBEAT_TIMEOUT_MS)]
    pub heartbeat_timeout_ms: u64,
    /// Exit after this many events (default: run until interrupted).
    #[arg(long)]
    pub count: Option<u64>,
    /// Exit after this long, ms (default: run until interrupted).
    #[arg(long)]
    pub duration_ms: Option<u64>,
}

/// `tablecam proxy` arguments.
#[derive(Debug, Args)]
pub struct ProxyArgs {
    /// Endpoint the pipeline processes' publishers connect to (XSUB, bound), e.g. tcp://*:5555.
    #[arg(long)]
    pub frontend: String,
    /// Endpoint the subscribers connect to (XPUB, bound), e.g. tcp://*:5556.
    #[arg(long)]
    pub backend: String,
    /// The proxy's key pair (NAME.key): turns CURVE on for both sides.
    #[arg(long, value_name = "FILE")]
    pub server_key: Option<PathBuf>,
    /// Directory of the publishers' public keys (*.pub) admitted on the frontend (default: any publisher that knows the server key).
    #[arg(long, value_name = "DIR", requires = "server_key")]
    pub publisher_keys: Option<PathBuf>,
    /// Directory of the subscribers' public keys (*.pub) admitted on the backend (default: any subscriber that knows the server key).
    #[arg(long, value_name = "DIR", requires = "server_key")]
    pub subscriber_keys: Option<PathBuf>,
    /// High-water mark of both sides, messages per peer.
    #[arg(long, default_value_t = DEFAULT_SEND_HWM)]
    pub hwm: i32,
}

/// `tablecam keys` arguments.
#[derive(Debug, Args)]
pub struct KeysArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: KeysCommand,
}

/// `tablecam keys` subcommands.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate a CURVE key pair: DIR/NAME.key (public + secret) and DIR/NAME.pub, mode 0600.
    Generate {
        /// The directory (created if needed).
        #[arg(long)]
        out: PathBuf,
        /// The key's name: `server`, `proxy`, or one per subscriber/publisher/backend.
        #[arg(long, default_value = "server")]
        name: String,
    },
}

/// `tablecam publish` arguments.
#[derive(Debug, Args)]
pub struct PublishArgs {
    /// Event JSON lines (or a journal, whose lines carry the event under `event`); `-` = stdin.
    pub file: PathBuf,
    /// Endpoint to bind (or connect to with --connect).
    #[arg(long, default_value = DEFAULT_ENDPOINT)]
    pub endpoint: String,
    /// Connect to a proxy's frontend instead of binding.
    #[arg(long)]
    pub connect: bool,
    /// This publisher's key pair (NAME.key): CURVE server when binding, client with --proxy-key.
    #[arg(long, value_name = "FILE")]
    pub server_key: Option<PathBuf>,
    /// With --server-key and binding: directory of the subscribers' public keys admitted.
    #[arg(long, value_name = "DIR", requires = "server_key")]
    pub subscriber_keys: Option<PathBuf>,
    /// With --connect: the proxy's public key (NAME.pub); --server-key is then this publisher's key pair.
    #[arg(long, value_name = "FILE", requires_all = ["connect", "server_key"])]
    pub proxy_key: Option<PathBuf>,
    /// Wait this long before the first event so that subscribers can join, ms.
    #[arg(long, default_value_t = 500)]
    pub wait_ms: u64,
    /// Pause between events, ms.
    #[arg(long, default_value_t = 0)]
    pub interval_ms: u64,
}

/// Runs `tablecam subscribe`. Returns when `--count`/`--duration-ms` is reached.
pub fn run_subscribe(args: &SubscribeArgs) -> Result<(), PublishError> {
    let security = match (&args.server_key, &args.client_keys) {
        (Some(server), Some(client)) => {
            let key_file = if client.is_dir() { client.join("client.key") } else { client.clone() };
            Security::CurveClient { keys: KeyPair::read(&key_file)?, server: read_public_key(server)? }
        }
        _ => Security::Plain,
    };
    let config = SubscriberConfig {
        endpoint: args.endpoint.clone(),
        filters: args.filters.clone(),
        recv_hwm: DEFAULT_RECV_HWM,
        heartbeat_timeout_ms: args.heartbeat_timeout_ms,
        security,
    };
    let mut sub = Subscriber::connect(&config)?;
    eprintln!(
        "subscribe: connected to {} (filters: {})",
        sub.endpoint(),
        if args.filters.is_empty() { "all".to_owned() } else { args.filters.join(", ") }
    );
    let stop_at = args.duration_ms.map(|ms| Instant::now() + Duration::from_millis(ms));
    let mut events = 0u64;
    let stdout = std::io::stdout();
    loop {
        if args.count.is_some_and(|c| events >= c) || stop_at.is_some_and(|t| Instant::now() >= t) {
            return Ok(());
        }
        let wait = stop_at.map_or(Duration::from_millis(500), |t| {
            t.saturating_duration_since(Instant::now()).min(Duration::from_millis(500))
        });
        let Some(delivery) = sub.recv(wait)? else { continue };
        let mut out = stdout.lock();
        let line = match delivery {
            Delivery::Event(ev) => {
                events += 1;
                if args.json {
                    String::from_utf8_lossy(&ev.json).into_owned()
                } else {
                    readable_line(&ev.table, &ev.kind, &ev.json)
                }
            }
            Delivery::Heartbeat { table, last_seq } if args.heartbeats => {
                if args.json {
                    serde_json::json!({"kind": "heartbeat", "table_id": table, "last_seq": last_seq}).to_string()
                } else {
                    format!("{} {table} heartbeat last_seq={last_seq}", clock())
                }
            }
            Delivery::Heartbeat { .. } => continue,
            Delivery::Gap(gap) => {
                let n = gap.last - gap.first + 1;
                eprintln!("subscribe: GAP {}: missed seq {}..={} ({n} event(s))", gap.table, gap.first, gap.last);
                continue;
            }
            Delivery::Silent { table, silent_ms } => {
                eprintln!(
                    "subscribe: {table}: no message for {:.1} s (publisher down or table idle?)",
                    silent_ms as f64 / 1000.0
                );
                continue;
            }
            Delivery::SeqRestart { table, last, got } => {
                eprintln!("subscribe: {table}: seq {got} after {last}: the publisher restarted or repeated an event");
                continue;
            }
            Delivery::Malformed { reason } => {
                eprintln!("subscribe: malformed message ignored: {reason}");
                continue;
            }
        };
        // A closed stdout (`| head`) ends the command through SIGPIPE (main restores it).
        let _ = writeln!(out, "{line}");
    }
}

/// One readable line: receive time (UTC), table, kind, seq, frame time, then the body's fields.
fn readable_line(table: &str, kind: &str, json: &[u8]) -> String {
    let value: serde_json::Value = serde_json::from_slice(json).unwrap_or(serde_json::Value::Null);
    let mut line = format!("{} {table} {kind}", clock());
    if let Some(seq) = value.get("seq").and_then(|s| s.as_u64()) {
        line.push_str(&format!(" seq={seq}"));
    }
    if let Some(t) = value.get("time_ms").and_then(|t| t.as_f64()) {
        line.push_str(&format!(" t={:.3}s", t / 1000.0));
    }
    if let Some(round) = value.get("round_id").and_then(|r| r.as_str()) {
        line.push_str(&format!(" round={round}"));
    }
    // Kind-specific fields live under `body` (docs/events.md); other shapes print their top level.
    let fields = value.get("body").or(Some(&value)).and_then(|b| b.as_object());
    for (name, field) in fields.into_iter().flatten() {
        if value.get("body").is_none()
            && ["schema", "kind", "table_id", "seq", "time_ms", "round_id"].contains(&name.as_str())
        {
            continue;
        }
        let text = match field {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let text = if text.chars().count() > FIELD_TEXT_MAX {
            format!("{}…", text.chars().take(FIELD_TEXT_MAX).collect::<String>())
        } else {
            text
        };
        let quoted = if text.contains(' ') { format!("{text:?}") } else { text };
        line.push_str(&format!(" {name}={quoted}"));
    }
    line
}

/// The wall clock as `HH:MM:SS.mmm` UTC (when the line was received; event times are frame times).
fn clock() -> String {
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let ms = now.as_millis() % 86_400_000;
    format!("{:02}:{:02}:{:02}.{:03}", ms / 3_600_000, ms / 60_000 % 60, ms / 1000 % 60, ms % 1000)
}

/// Runs `tablecam proxy` until the process is stopped.
pub fn run_proxy_cli(args: &ProxyArgs) -> Result<(), PublishError> {
    let (frontend_security, backend_security) = match &args.server_key {
        None => (Security::Plain, Security::Plain),
        Some(key_file) => {
            let keys = KeyPair::read(key_file)?;
            let allow = |dir: &Option<PathBuf>| dir.as_deref().map(read_public_keys_dir).transpose();
            (
                Security::CurveServer { keys: keys.clone(), allowed_clients: allow(&args.publisher_keys)? },
                Security::CurveServer { keys, allowed_clients: allow(&args.subscriber_keys)? },
            )
        }
    };
    let curve = args.server_key.is_some();
    let config = ProxyConfig {
        frontend: args.frontend.clone(),
        backend: args.backend.clone(),
        frontend_security,
        backend_security,
        hwm: args.hwm,
    };
    run_proxy(&config, |frontend, backend| {
        eprintln!(
            "proxy: publishers → {frontend} (XSUB), subscribers → {backend} (XPUB){}",
            if curve { ", CURVE on" } else { ", plain (no CURVE)" }
        );
    })
}

/// Runs `tablecam keys …`.
pub fn run_keys(args: &KeysArgs) -> Result<(), PublishError> {
    match &args.command {
        KeysCommand::Generate { out, name } => {
            let pair = KeyPair::generate()?;
            let (key, public) = pair.write(out, name)?;
            println!("secret key pair: {} (keep private; mode 0600)", key.display());
            println!("public key:      {} (give to peers)", public.display());
            println!("public key text: {}", pair.public);
            Ok(())
        }
    }
}

/// Runs `tablecam publish`: sends event JSON lines (a journal's events, a recorded stream) with
/// topics `<table_id>.<kind>` and heartbeats from their `time_ms`. Returns the events sent.
pub fn run_publish(args: &PublishArgs) -> Result<u64, PublishError> {
    let security = match (&args.server_key, &args.proxy_key, args.connect) {
        (Some(own), Some(proxy), true) => {
            Security::CurveClient { keys: KeyPair::read(own)?, server: read_public_key(proxy)? }
        }
        (Some(own), None, false) => Security::CurveServer {
            keys: KeyPair::read(own)?,
            allowed_clients: args.subscriber_keys.as_deref().map(read_public_keys_dir).transpose()?,
        },
        (Some(_), None, true) => {
            return Err(PublishError::Config(
                "--connect with --server-key needs --proxy-key (the proxy's public key)".into(),
            ))
        }
        _ => Security::Plain,
    };
    let config = PublisherConfig {
        endpoint: args.endpoint.clone(),
        attach: if args.connect { Attach::Connect } else { Attach::Bind },
        send_hwm: DEFAULT_SEND_HWM,
        heartbeat_interval_ms: DEFAULT_HEARTBEAT_INTERVAL_MS,
        security,
    };
    let mut publisher = Publisher::new(&config)?;
    eprintln!("publish: {} on {}", if args.connect { "connected" } else { "bound" }, publisher.endpoint());
    std::thread::sleep(Duration::from_millis(args.wait_ms));
    let reader: Box<dyn BufRead> = if args.file == Path::new("-") {
        Box::new(std::io::stdin().lock())
    } else {
        let file = std::fs::File::open(&args.file).map_err(|e| PublishError::File {
            path: args.file.clone(),
            action: "cannot open the events file",
            source: e,
        })?;
        Box::new(std::io::BufReader::new(file))
    };
    let mut sent = 0;
    for (i, line) in reader.lines().enumerate() {
        let line =
            line.map_err(|e| PublishError::File { path: args.file.clone(), action: "cannot read", source: e })?;
        if line.trim().is_empty() {
            continue;
        }
        let Some((topic, json, seq, time_ms)) = event_of_line(&line) else {
            eprintln!("publish: {}:{}: skipped: not an event with table_id, kind and seq", args.file.display(), i + 1);
            continue;
        };
        let table = topic.split('.').next().unwrap_or_default().to_owned();
        publisher.tick(&table, time_ms)?;
        publisher.publish(&topic, json.as_bytes(), seq)?;
        sent += 1;
        if args.interval_ms > 0 {
            std::thread::sleep(Duration::from_millis(args.interval_ms));
        }
    }
    // Let ZeroMQ deliver before the socket closes (linger covers the rest).
    std::thread::sleep(Duration::from_millis(200));
    eprintln!("publish: {sent} events sent");
    Ok(sent)
}

/// `(topic, event json, seq, time_ms)` of an event line or of a journal line.
fn event_of_line(line: &str) -> Option<(String, String, u64, f64)> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    // A journal line: {"n":…,"prev":…,"hash":…,"event":{…}}; the event is the text after "event":.
    let (event, json) = match (value.get("hash"), value.get("event")) {
        (Some(_), Some(event)) => {
            let at = line.find(",\"event\":")? + ",\"event\":".len();
            (event.clone(), line.get(at..line.len().checked_sub(1)?)?.to_owned())
        }
        _ => (value.clone(), line.trim().to_owned()),
    };
    let table = event.get("table_id")?.as_str()?;
    let kind = event.get("kind")?.as_str()?;
    let seq = event.get("seq")?.as_u64()?;
    let time_ms = event.get("time_ms").and_then(|t| t.as_f64()).unwrap_or(0.0);
    Some((format!("{table}.{kind}"), json, seq, time_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readable_line_shows_envelope_and_body_fields() {
        let json = br#"{"schema":1,"kind":"card.dealt","table_id":"t1","camera_id":"c1","round_id":"r7","seq":12,"frame":300,"time_ms":12000.0,"body":{"track":4,"zone":"seat 2","card":"Ah"}}"#;
        let line = readable_line("t1", "card.dealt", json);
        assert!(line.contains(" t1 card.dealt seq=12 t=12.000s round=r7 "), "{line}");
        // Body fields in the order serde_json keeps them.
        for field in [" track=4", r#" zone="seat 2""#, " card=Ah"] {
            assert!(line.contains(field), "{line}");
        }
        assert!(!line.contains("camera_id"), "{line}");
    }

    #[test]
    fn journal_lines_publish_their_event_verbatim() {
        let event = r#"{"schema":1,"kind":"error","table_id":"t2","seq":5,"time_ms":40.0,"body":{}}"#;
        let line = format!(r#"{{"n":1,"prev":"{}","hash":"{}","event":{event}}}"#, "0".repeat(64), "1".repeat(64));
        assert_eq!(event_of_line(&line), Some(("t2.error".to_owned(), event.to_owned(), 5, 40.0)));
        assert_eq!(event_of_line(event), Some(("t2.error".to_owned(), event.to_owned(), 5, 40.0)));
        assert_eq!(event_of_line(r#"{"kind":"x"}"#), None);
    }
}
