//! The HTTP/1.1 server: a deliberately small parser (one request per connection, bounded headers
//! and bodies, no chunked uploads), the routes, the session gate and the server-sent events.
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;

use super::auth::{constant_time_eq, Sessions, Users};
use super::state::DashboardState;
use super::DashboardError;
use crate::events::Event;
use crate::publish::{Delivery, Subscriber, SubscriberConfig};
use crate::record::{FsyncPolicy, Journal};

const INDEX_HTML: &str = include_str!("assets/index.html");
const LOGIN_HTML: &str = include_str!("assets/login.html");
const APP_JS: &str = include_str!("assets/app.js");
const STYLE_CSS: &str = include_str!("assets/style.css");

const COOKIE: &str = "tc_session";
const MAX_HEAD: usize = 16 * 1024;
const MAX_BODY: usize = 64 * 1024;
const MAX_CONNECTIONS: usize = 256;
/// Browsers get at most one snapshot per this interval: 50 tables at 1 event/s would otherwise
/// mean 50 pushes a second per browser.
const PUSH_INTERVAL: Duration = Duration::from_millis(100);
/// A comment line on idle streams, so that proxies and browsers keep the connection.
const KEEPALIVE: Duration = Duration::from_secs(15);
/// How often a followed events file is checked for new lines.
const FOLLOW_POLL: Duration = Duration::from_millis(50);

/// Where events come from.
pub(super) enum Source {
    /// ZeroMQ SUB endpoint.
    Zmq(String),
    /// JSON-lines file, followed as it grows.
    File(PathBuf),
    /// Simulated tables through the real tracker and verifier (`--demo`).
    Demo(super::demo::DemoOptions),
}

/// Server settings.
pub(super) struct Config {
    pub listen: String,
    pub source: Source,
    pub users: Users,
    pub ack_journal: PathBuf,
    pub evidence: Option<PathBuf>,
    pub test_login_token: Option<String>,
}

struct Shared {
    state: Mutex<DashboardState>,
    changed: Condvar,
    /// The last serialised snapshot and its version: serialised once per change, not per browser.
    cache: Mutex<(u64, Arc<String>)>,
    sessions: Mutex<Sessions>,
    users: Users,
    journal: Mutex<Journal>,
    evidence: Option<PathBuf>,
    test_login_token: Mutex<Option<String>>,
    connections: AtomicUsize,
}

impl Shared {
    fn snapshot(&self) -> (u64, Arc<String>) {
        let state = self.state.lock().expect("state lock");
        let v = state.version();
        let mut cache = self.cache.lock().expect("cache lock");
        if cache.1.is_empty() || cache.0 != v {
            *cache = (v, Arc::new(state.snapshot().to_string()));
        }
        cache.clone()
    }

    fn update(&self, f: impl FnOnce(&mut DashboardState)) {
        f(&mut self.state.lock().expect("state lock"));
        self.changed.notify_all();
    }
}

/// Binds, starts the event thread and serves until the process is killed.
pub(super) fn serve(config: Config) -> Result<(), DashboardError> {
    let listener = TcpListener::bind(&config.listen)
        .map_err(|e| DashboardError::Io { what: format!("binding {}", config.listen), source: e })?;
    let addr = listener.local_addr().map_err(|e| DashboardError::Io { what: "local address".into(), source: e })?;
    let journal = Journal::open(&config.ack_journal, FsyncPolicy::Always)?;
    let mut state = DashboardState::new();
    let restored = restore_acks(&config.ack_journal, &mut state)?;
    let shared = Arc::new(Shared {
        state: Mutex::new(state),
        changed: Condvar::new(),
        cache: Mutex::new((0, Arc::new(String::new()))),
        sessions: Mutex::new(Sessions::default()),
        users: config.users,
        journal: Mutex::new(journal),
        evidence: config.evidence,
        test_login_token: Mutex::new(config.test_login_token.clone()),
        connections: AtomicUsize::new(0),
    });
    // Tests read this line for the port when listening on :0.
    println!("dashboard: listening on http://{addr}");
    if restored > 0 {
        println!("dashboard: {restored} acknowledgement(s) restored from {}", config.ack_journal.display());
    }
    if config.test_login_token.is_some() {
        println!("dashboard: WARNING test login enabled (one use): /test-login?token=…");
    }
    let _ = std::io::stdout().flush();
    let feed = Arc::clone(&shared);
    match config.source {
        Source::File(path) => std::thread::spawn(move || follow_file(&path, &feed)),
        Source::Zmq(endpoint) => std::thread::spawn(move || subscribe(&endpoint, &feed)),
        Source::Demo(options) => std::thread::spawn(move || {
            let ran = super::demo::run(&options, |events| {
                feed.update(|s| events.iter().for_each(|e| s.apply(e)));
            });
            if let Err(e) = ran {
                feed.update(|s| s.input_error(format!("demo stopped: {e}")));
            }
        }),
    };
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let shared = Arc::clone(&shared);
        if shared.connections.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            shared.connections.fetch_sub(1, Ordering::SeqCst);
            let mut s = stream;
            let _ = respond(&mut s, 503, "text/plain", &[], b"too many connections\n");
            continue;
        }
        std::thread::spawn(move || {
            let _ = handle(stream, &shared);
            shared.connections.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

/// Reads the acknowledgements already in the ack journal back into `state`, so that an alert
/// acknowledged before a restart shows as acknowledged when its flag arrives again. The journal
/// was opened (and a torn last line recovered) by `Journal::open` before this runs.
fn restore_acks(path: &Path, state: &mut DashboardState) -> Result<usize, DashboardError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(DashboardError::Io { what: format!("reading {}", path.display()), source: e }),
    };
    let mut n = 0;
    for line in text.lines() {
        let Ok(entry) = serde_json::from_str::<serde_json::Value>(line) else { continue };
        let ack = &entry["event"];
        let (Some("dashboard.ack"), Some(table), Some(flag), Some(user), Some(when)) = (
            ack["kind"].as_str(),
            ack["table_id"].as_str(),
            ack["flag_id"].as_u64().and_then(|f| u32::try_from(f).ok()),
            ack["user"].as_str(),
            ack["wall_time"].as_str(),
        ) else {
            continue;
        };
        state.restore_ack(table, ack["round_id"].as_str(), flag, user, when);
        n += 1;
    }
    Ok(n)
}

fn apply_line(line: &str, shared: &Shared) {
    let line = line.trim();
    if line.is_empty() {
        return;
    }
    match Event::from_json(line) {
        Ok(event) => shared.update(|s| s.apply(&event)),
        Err(e) => shared.update(|s| s.input_error(format!("ignored an event line: {e}"))),
    }
}

/// Replays a JSON-lines file and keeps following it; a line is used only once its newline is
/// there, so a writer caught mid-line is not misread.
fn follow_file(path: &Path, shared: &Shared) {
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            shared.update(|s| s.input_error(format!("cannot open {}: {e}", path.display())));
            return;
        }
    };
    let mut reader = BufReader::new(file);
    let mut pending = String::new();
    loop {
        match reader.read_line(&mut pending) {
            Ok(0) => std::thread::sleep(FOLLOW_POLL),
            Ok(_) if pending.ends_with('\n') => {
                apply_line(&pending, shared);
                pending.clear();
            }
            Ok(_) => {}
            Err(e) => {
                shared.update(|s| s.input_error(format!("reading {}: {e}", path.display())));
                pending.clear();
                std::thread::sleep(FOLLOW_POLL);
            }
        }
    }
}

fn subscribe(endpoint: &str, shared: &Shared) {
    let config = SubscriberConfig { endpoint: endpoint.to_string(), ..SubscriberConfig::default() };
    let mut sub = match Subscriber::connect(&config) {
        Ok(s) => s,
        Err(e) => {
            shared.update(|s| s.input_error(format!("cannot subscribe to {endpoint}: {e}")));
            return;
        }
    };
    loop {
        match sub.recv(Duration::from_secs(1)) {
            Ok(Some(Delivery::Event(r))) => apply_line(&String::from_utf8_lossy(&r.json), shared),
            Ok(Some(Delivery::Gap(g))) => {
                shared.update(|s| s.link_notice(&g.table, format!("missed events seq {}–{}", g.first, g.last)))
            }
            Ok(Some(Delivery::Silent { table, silent_ms })) => {
                shared.update(|s| s.link_notice(&table, format!("silent for {} s", silent_ms / 1000)))
            }
            Ok(Some(Delivery::SeqRestart { table, last, got })) => {
                shared.update(|s| s.link_notice(&table, format!("publisher restarted (seq {got} after {last})")))
            }
            Ok(Some(Delivery::Malformed { reason })) => shared.update(|s| s.input_error(reason)),
            Ok(Some(Delivery::Heartbeat { .. })) | Ok(None) => {}
            Err(e) => {
                shared.update(|s| s.input_error(format!("subscription: {e}")));
                std::thread::sleep(Duration::from_secs(1));
            }
        }
    }
}

struct Request {
    method: String,
    path: String,
    query: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Request {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    fn cookie(&self, name: &str) -> Option<&str> {
        self.header("cookie")?
            .split(';')
            .filter_map(|c| c.trim().split_once('='))
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v)
    }
}

/// Reads one request; `Err(status)` for requests refused before routing.
fn read_request(reader: &mut impl BufRead) -> Result<Request, u16> {
    let mut head_len = 0;
    let mut line = Vec::new();
    let mut next_line = |reader: &mut dyn BufRead| -> Result<String, u16> {
        line.clear();
        let n = reader.take((MAX_HEAD - head_len) as u64 + 1).read_until(b'\n', &mut line).map_err(|_| 400u16)?;
        head_len += n;
        if n == 0 || head_len > MAX_HEAD || line.last() != Some(&b'\n') {
            return Err(if head_len > MAX_HEAD { 431 } else { 400 });
        }
        let text = std::str::from_utf8(&line).map_err(|_| 400u16)?;
        Ok(text.trim_end_matches(['\r', '\n']).to_string())
    };
    let start = next_line(reader)?;
    let mut parts = start.split(' ');
    let (Some(method), Some(target), Some(version), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(400);
    };
    if !version.starts_with("HTTP/1.") || !target.starts_with('/') {
        return Err(400);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = Vec::new();
    loop {
        let l = next_line(reader)?;
        if l.is_empty() {
            break;
        }
        let (k, v) = l.split_once(':').ok_or(400u16)?;
        headers.push((k.trim().to_string(), v.trim().to_string()));
        if headers.len() > 100 {
            return Err(431);
        }
    }
    let mut req =
        Request { method: method.to_string(), path: path.to_string(), query: query.to_string(), headers, body: vec![] };
    if req.header("transfer-encoding").is_some() {
        return Err(501);
    }
    let len: usize = match req.header("content-length") {
        Some(v) => v.parse().map_err(|_| 400u16)?,
        None => 0,
    };
    if len > MAX_BODY {
        return Err(413);
    }
    req.body = vec![0; len];
    reader.read_exact(&mut req.body).map_err(|_| 400u16)?;
    Ok(req)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Error",
    }
}

/// Our own pages load only our own scripts and styles; frames only from here (evidence panel).
const CSP: &str = "default-src 'self'; img-src 'self' data:; frame-src 'self'; frame-ancestors 'self'";
/// Evidence packs are self-contained pages with inline CSS and a little inline script.
const CSP_EVIDENCE: &str = "default-src 'self' 'unsafe-inline' data:; frame-ancestors 'self'";

fn respond(s: &mut TcpStream, status: u16, ctype: &str, extra: &[(&str, String)], body: &[u8]) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n",
        reason(status),
        body.len()
    );
    if !extra.iter().any(|(k, _)| *k == "Content-Security-Policy") {
        head.push_str(&format!("Content-Security-Policy: {CSP}\r\n"));
    }
    for (k, v) in extra {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes())?;
    s.write_all(body)?;
    s.flush()
}

fn redirect(s: &mut TcpStream, to: &str, extra: &[(&str, String)]) -> std::io::Result<()> {
    let mut h = vec![("Location", to.to_string())];
    h.extend(extra.iter().cloned());
    respond(s, 303, "text/plain", &h, b"")
}

fn json_reply(s: &mut TcpStream, status: u16, v: &serde_json::Value) -> std::io::Result<()> {
    respond(s, status, "application/json", &[], v.to_string().as_bytes())
}

fn session_cookie(token: &str) -> (&'static str, String) {
    ("Set-Cookie", format!("{COOKIE}={token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=43200"))
}

fn handle(stream: TcpStream, shared: &Shared) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut s = stream;
    let req = match read_request(&mut reader) {
        Ok(r) => r,
        Err(status) => return respond(&mut s, status, "text/plain", &[], reason(status).as_bytes()),
    };
    let m = req.method.as_str();
    // Public routes: the login page (and its stylesheet), login, the guarded test login.
    match (m, req.path.as_str()) {
        ("GET", "/login") => return login_page(&mut s, 200, ""),
        ("GET", "/style.css") => return respond(&mut s, 200, "text/css", &[], STYLE_CSS.as_bytes()),
        ("POST", "/login") => return login(&mut s, &req, shared),
        ("GET", "/test-login") => return test_login(&mut s, &req, shared),
        _ => {}
    }
    let token = req.cookie(COOKIE).unwrap_or("").to_string();
    let Some(user) = shared.sessions.lock().expect("sessions lock").user(&token) else {
        return if req.path.starts_with("/api/") {
            json_reply(&mut s, 401, &json!({"error": "login required"}))
        } else {
            redirect(&mut s, "/login", &[])
        };
    };
    match (m, req.path.as_str()) {
        ("GET", "/") => respond(&mut s, 200, "text/html; charset=utf-8", &[], INDEX_HTML.as_bytes()),
        ("GET", "/app.js") => respond(&mut s, 200, "text/javascript; charset=utf-8", &[], APP_JS.as_bytes()),
        ("GET", "/api/state") => {
            let (_, snap) = shared.snapshot();
            let body = format!("{{\"user\":{},\"state\":{}}}", json!(user), snap);
            respond(&mut s, 200, "application/json", &[], body.as_bytes())
        }
        ("GET", "/api/stream") => stream_events(s, shared, &token),
        ("POST", "/api/ack") => ack(&mut s, &req, shared, &user),
        ("POST", "/logout") => {
            shared.sessions.lock().expect("sessions lock").close(&token);
            redirect(
                &mut s,
                "/login",
                &[("Set-Cookie", format!("{COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0"))],
            )
        }
        ("GET", p) if p.starts_with("/evidence/") => evidence(&mut s, shared, &p["/evidence/".len()..]),
        (_, "/" | "/app.js" | "/api/state" | "/api/stream" | "/api/ack" | "/logout") => {
            respond(&mut s, 405, "text/plain", &[], b"method not allowed\n")
        }
        _ => respond(&mut s, 404, "text/plain", &[], b"not found\n"),
    }
}

fn login_page(s: &mut TcpStream, status: u16, message: &str) -> std::io::Result<()> {
    let page = LOGIN_HTML.replace("<!--MESSAGE-->", message);
    respond(s, status, "text/html; charset=utf-8", &[], page.as_bytes())
}

/// `application/x-www-form-urlencoded` value decoding.
fn form_value(body: &str, name: &str) -> Option<String> {
    let raw = body.split('&').filter_map(|kv| kv.split_once('=')).find(|(k, _)| *k == name)?.1;
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

fn login(s: &mut TcpStream, req: &Request, shared: &Shared) -> std::io::Result<()> {
    let body = String::from_utf8_lossy(&req.body);
    let (Some(user), Some(password)) = (form_value(&body, "user"), form_value(&body, "password")) else {
        return login_page(s, 400, "<p class=error>Give a user and a password.</p>");
    };
    if !shared.users.check(&user, &password) {
        return login_page(s, 401, "<p class=error>Wrong user or password.</p>");
    }
    let token = match shared.sessions.lock().expect("sessions lock").open(&user) {
        Ok(t) => t,
        Err(e) => return respond(s, 503, "text/plain", &[], e.to_string().as_bytes()),
    };
    redirect(s, "/", &[session_cookie(&token)])
}

fn test_login(s: &mut TcpStream, req: &Request, shared: &Shared) -> std::io::Result<()> {
    let given = req.query.split('&').find_map(|kv| kv.strip_prefix("token=")).unwrap_or("");
    let mut slot = shared.test_login_token.lock().expect("token lock");
    let ok = slot.as_deref().is_some_and(|t| !given.is_empty() && constant_time_eq(t.as_bytes(), given.as_bytes()));
    if !ok {
        return respond(s, 404, "text/plain", &[], b"not found\n");
    }
    // One use: a leaked URL is worthless afterwards.
    *slot = None;
    drop(slot);
    let token = match shared.sessions.lock().expect("sessions lock").open("test") {
        Ok(t) => t,
        Err(e) => return respond(s, 503, "text/plain", &[], e.to_string().as_bytes()),
    };
    redirect(s, "/", &[session_cookie(&token)])
}

/// Server-sent events: a snapshot at connect, then one per change, at most one per
/// [`PUSH_INTERVAL`]; ends when the browser goes or the session is closed.
fn stream_events(mut s: TcpStream, shared: &Shared, token: &str) -> std::io::Result<()> {
    s.write_all(
        b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-store\r\n\
          X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n",
    )?;
    let mut last_sent: Option<u64> = None;
    let mut last_write = Instant::now();
    loop {
        let (v, snap) = shared.snapshot();
        if last_sent != Some(v) {
            s.write_all(format!("data: {snap}\n\n").as_bytes())?;
            s.flush()?;
            last_sent = Some(v);
            last_write = Instant::now();
        } else if last_write.elapsed() >= KEEPALIVE {
            s.write_all(b": keepalive\n\n")?;
            s.flush()?;
            last_write = Instant::now();
        }
        if shared.sessions.lock().expect("sessions lock").user(token).is_none() {
            return Ok(());
        }
        // Coalesce: whatever arrives during this pause goes out in the next snapshot.
        std::thread::sleep(PUSH_INTERVAL);
        let state = shared.state.lock().expect("state lock");
        let _ = shared.changed.wait_timeout_while(state, KEEPALIVE, |st| st.version() == v).expect("state lock");
    }
}

fn ack(s: &mut TcpStream, req: &Request, shared: &Shared, user: &str) -> std::io::Result<()> {
    let id = serde_json::from_slice::<serde_json::Value>(&req.body).ok().and_then(|v| v["alert"].as_u64());
    let Some(id) = id else {
        return json_reply(s, 400, &json!({"error": "body must be {\"alert\": ID}"}));
    };
    let Some(alert) = shared.state.lock().expect("state lock").alert(id).cloned() else {
        return json_reply(s, 404, &json!({"error": "no such alert"}));
    };
    let when = crate::wallclock::rfc3339(SystemTime::now());
    let record = json!({
        "kind": "dashboard.ack",
        "user": user,
        "wall_time": when,
        "table_id": alert.table,
        "round_id": alert.round_id,
        "flag_id": alert.flag_id,
        "irregularity": alert.irregularity,
        "citation": alert.citation,
    });
    // Journal first: an acknowledgement the browsers see is one that is on disk.
    let appended = shared.journal.lock().expect("journal lock").append(record.to_string().as_bytes());
    if let Err(e) = appended {
        return json_reply(s, 503, &json!({"error": format!("ack journal: {e}")}));
    }
    shared.update(|st| {
        st.acknowledge(id, user, &when);
    });
    json_reply(s, 200, &json!({"ok": true, "user": user, "wall_time": when}))
}

fn safe_component(c: &str) -> bool {
    !c.is_empty() && c != "." && c != ".." && c.chars().all(|ch| ch.is_ascii_alphanumeric() || "._-".contains(ch))
}

fn evidence(s: &mut TcpStream, shared: &Shared, rest: &str) -> std::io::Result<()> {
    let parts: Vec<&str> = rest.split('/').collect();
    if parts.len() < 2 || !safe_component(parts[0]) || !safe_component(parts[1]) {
        return respond(s, 404, "text/plain", &[], b"not found\n");
    }
    if parts.len() == 2 {
        // Relative links inside the pack (frames/…) need the trailing slash.
        return redirect(s, &format!("/evidence/{rest}/"), &[]);
    }
    let file: Vec<&str> =
        if parts.len() == 3 && parts[2].is_empty() { vec!["index.html"] } else { parts[2..].to_vec() };
    if !file.iter().all(|c| safe_component(c)) {
        return respond(s, 404, "text/plain", &[], b"not found\n");
    }
    let path = shared.evidence.as_ref().map(|dir| {
        let mut p = dir.join(parts[0]).join(parts[1]);
        p.extend(&file);
        p
    });
    let content = path.as_ref().and_then(|p| std::fs::read(p).ok());
    let Some(body) = content else {
        if file == ["index.html"] {
            let page = no_pack_page(shared, parts[0], parts[1]);
            return respond(s, 404, "text/html; charset=utf-8", &[], page.as_bytes());
        }
        return respond(s, 404, "text/plain", &[], b"not found\n");
    };
    let name = file.last().copied().unwrap_or("");
    let ctype = match name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).as_deref() {
        Some("html") => "text/html; charset=utf-8",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("png") => "image/png",
        Some("svg") => "image/svg+xml",
        Some("css") => "text/css",
        Some("json") => "application/json",
        _ => "application/octet-stream",
    };
    respond(s, 200, ctype, &[("Content-Security-Policy", CSP_EVIDENCE.to_string())], &body)
}

/// Without an evidence pack on disk: says so, and lists the round's events as this dashboard
/// received them (what the journal holds too), so the panel is never empty for a live round.
fn no_pack_page(shared: &Shared, table: &str, round: &str) -> String {
    let mut page = format!(
        "<!doctype html><meta charset=utf-8><title>Round {round}</title><link rel=stylesheet href=/style.css>\
         <p class=noevidence>No evidence pack for round {round} of table {table} yet (key frames need a \
         recording: <code>tablecam dispute --round {round} --out DIR/{table}/{round}</code>). \
         The round's events as received:</p>"
    );
    let state = shared.state.lock().expect("state lock");
    let Some(lines) = state.round_events(table, round) else {
        page.push_str("<p>none kept (older than the last rounds, or none received).</p>");
        return page;
    };
    let events: Vec<serde_json::Value> = lines.iter().map(|l| serde_json::from_str(l).unwrap_or_default()).collect();
    // What a reviewer looks for first: the flags and the outcome, then the whole timeline.
    let mut summary = String::new();
    for v in &events {
        let b = &v["body"];
        match v["kind"].as_str() {
            Some("round.flag") => summary.push_str(&format!(
                "<li class=flag>flag {}: {}{} — {} — {}</li>",
                b["flag_id"],
                html_escape(b["irregularity"].as_str().unwrap_or("?")),
                b["seat"].as_u64().map(|s| format!(" (seat {s})")).unwrap_or_default(),
                html_escape(b["citation"].as_str().unwrap_or("")),
                html_escape(b["detail"].as_str().unwrap_or(""))
            )),
            Some("round.outcome") => summary.push_str(&format!(
                "<li>outcome: {}, {}</li>",
                html_escape(b["status"].as_str().unwrap_or("?")),
                html_escape(b["verification"]["status"].as_str().unwrap_or("?"))
            )),
            _ => {}
        }
    }
    if !summary.is_empty() {
        page.push_str(&format!("<ul class=roundsummary>{summary}</ul>"));
    }
    page.push_str("<table class=roundlog><tr><th>seq</th><th>camera time</th><th>event</th><th>body</th></tr>");
    for v in &events {
        let kind = v["kind"].as_str().unwrap_or("?");
        let class = if kind == "round.flag" { " class=flag" } else { "" };
        page.push_str(&format!(
            "<tr{class}><td>{}</td><td>{:.3} s</td><td>{}</td><td><code>{}</code></td></tr>",
            v["seq"],
            v["time_ms"].as_f64().unwrap_or(0.0) / 1000.0,
            html_escape(kind),
            html_escape(&v["body"].to_string())
        ));
    }
    page.push_str("</table>");
    page
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_request_and_refuses_bad_ones() {
        let raw =
            b"POST /login?x=1 HTTP/1.1\r\nHost: a\r\nCookie: a=b; tc_session=abc\r\nContent-Length: 5\r\n\r\nhello";
        let req = read_request(&mut &raw[..]).unwrap();
        assert_eq!((req.method.as_str(), req.path.as_str(), req.query.as_str()), ("POST", "/login", "x=1"));
        assert_eq!(req.cookie(COOKIE), Some("abc"));
        assert_eq!(req.body, b"hello");
        assert_eq!(read_request(&mut &b"GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"[..]).err(), Some(501));
        assert_eq!(read_request(&mut &b"GET /\r\n\r\n"[..]).err(), Some(400));
        let big = format!("GET / HTTP/1.1\r\nX: {}\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(read_request(&mut big.as_bytes()).err(), Some(431));
    }

    #[test]
    fn form_values_are_decoded() {
        assert_eq!(form_value("user=ana&password=a%26b+c", "password").as_deref(), Some("a&b c"));
        assert_eq!(form_value("user=ana", "password"), None);
        assert_eq!(form_value("password=%zz", "password"), None);
    }

    #[test]
    fn evidence_path_components_are_checked() {
        assert!(safe_component("T1-r000001"));
        assert!(!safe_component(".."));
        assert!(!safe_component("a b"));
        assert!(!safe_component(""));
    }
}
