//! CURVE keys: the key files, generating them, and how a socket is secured with them.
//!
//! Key files are text (format in `docs/publishing.md`):
//!
//! ```text
//! # tablecam CURVE key pair "server" (ZeroMQ Z85); SECRET: keep private
//! public rq:rM>}U?@Lns47E1%kR.o@n%FcmmsL/@{H8]yf7
//! secret JTKVSB%%)wK0E.X)V>+}o?pNmC{O&4W4b!Ni{Lh6
//! ```
//!
//! `NAME.key` holds both halves, `NAME.pub` only the `public` line. Both are written with mode
//! 0600, and a file holding a secret is refused if group or others can read it (as ssh does).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::PublishError;

/// Length of a CURVE key in Z85 text.
const Z85_KEY_LEN: usize = 40;

/// The ZAP endpoint libzmq asks for authentication (fixed by the ZAP specification, RFC 27).
const ZAP_ENDPOINT: &str = "inproc://zeromq.zap.01";

/// How often the ZAP handler checks whether it should stop.
const ZAP_POLL_MS: i64 = 100;

/// A 32-byte CURVE key (public or secret).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CurveKey(pub [u8; 32]);

impl CurveKey {
    /// Parses the 40-character Z85 form.
    pub fn from_z85(text: &str) -> Option<CurveKey> {
        if text.len() != Z85_KEY_LEN {
            return None;
        }
        zmq::z85_decode(text).ok().and_then(|bytes| bytes.try_into().ok()).map(CurveKey)
    }

    /// The 40-character Z85 form.
    pub fn to_z85(&self) -> String {
        // 32 bytes is a multiple of 4, the only thing z85_encode can refuse.
        zmq::z85_encode(&self.0).unwrap_or_default()
    }
}

impl fmt::Display for CurveKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_z85())
    }
}

impl fmt::Debug for CurveKey {
    // Never print key material by accident: Debug shows only a prefix.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CurveKey({}…)", &self.to_z85()[..8])
    }
}

/// A CURVE key pair.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyPair {
    /// The public half, given to peers.
    pub public: CurveKey,
    /// The secret half, never leaves its owner.
    pub secret: CurveKey,
}

impl fmt::Debug for KeyPair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyPair {{ public: {:?}, secret: <hidden> }}", self.public)
    }
}

impl KeyPair {
    /// A fresh key pair from libzmq (libsodium's random generator).
    pub fn generate() -> Result<KeyPair, PublishError> {
        check_curve()?;
        let pair =
            zmq::CurveKeyPair::new().map_err(|e| PublishError::Zmq { what: "generate a CURVE key pair", source: e })?;
        Ok(KeyPair { public: CurveKey(pair.public_key), secret: CurveKey(pair.secret_key) })
    }

    /// Reads a `NAME.key` file (both halves).
    pub fn read(path: &Path) -> Result<KeyPair, PublishError> {
        check_private(path)?;
        let fields = read_fields(path)?;
        let get = |name: &str| {
            fields
                .get(name)
                .copied()
                .ok_or_else(|| key_file(path, format!("no `{name}` line (expected `public …` and `secret …`)")))
        };
        Ok(KeyPair { public: get("public")?, secret: get("secret")? })
    }

    /// Writes `DIR/NAME.key` (both halves) and `DIR/NAME.pub` (public only), mode 0600, refusing
    /// to overwrite existing files. Returns the two paths.
    pub fn write(&self, dir: &Path, name: &str) -> Result<(PathBuf, PathBuf), PublishError> {
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
            return Err(key_file(dir, format!("key name {name:?}: use letters, digits, '-' and '_'")));
        }
        fs::create_dir_all(dir).map_err(|e| key_io(dir, "cannot create the key directory", e))?;
        let key_path = dir.join(format!("{name}.key"));
        let pub_path = dir.join(format!("{name}.pub"));
        for path in [&key_path, &pub_path] {
            if path.exists() {
                return Err(key_file(path, "exists already; not overwritten (delete it first to replace the key)"));
            }
        }
        let secret = format!(
            "# tablecam CURVE key pair {name:?} (ZeroMQ Z85); SECRET: keep private\npublic {}\nsecret {}\n",
            self.public, self.secret
        );
        let public = format!("# tablecam CURVE public key {name:?} (ZeroMQ Z85)\npublic {}\n", self.public);
        write_private(&key_path, &secret)?;
        write_private(&pub_path, &public)?;
        Ok((key_path, pub_path))
    }
}

/// Reads a public key file (`NAME.pub`, or the `public` line of a `NAME.key`).
pub fn read_public_key(path: &Path) -> Result<CurveKey, PublishError> {
    read_fields(path)?.get("public").copied().ok_or_else(|| key_file(path, "no `public …` line"))
}

/// Reads every `*.pub` file of a directory: the clients allowed to connect.
pub fn read_public_keys_dir(dir: &Path) -> Result<BTreeSet<CurveKey>, PublishError> {
    let entries = fs::read_dir(dir).map_err(|e| key_io(dir, "cannot list the authorized keys directory", e))?;
    let mut keys = BTreeSet::new();
    for entry in entries {
        let path = entry.map_err(|e| key_io(dir, "cannot list the authorized keys directory", e))?.path();
        if path.extension().is_some_and(|ext| ext == "pub") {
            keys.insert(read_public_key(&path)?);
        }
    }
    if keys.is_empty() {
        return Err(key_file(
            dir,
            "no *.pub file: no client could connect (generate keys with `tablecam keys generate`)",
        ));
    }
    Ok(keys)
}

/// How a socket authenticates and encrypts.
#[derive(Debug, Clone, Default)]
pub enum Security {
    /// No encryption, no authentication (loopback and trusted networks only).
    #[default]
    Plain,
    /// CURVE server: the side that binds. `allowed_clients` (`None` = any client that knows the
    /// server's public key) is enforced by a ZAP handler.
    CurveServer {
        /// The server's key pair.
        keys: KeyPair,
        /// The client public keys admitted; `None` admits every client (encryption only).
        allowed_clients: Option<BTreeSet<CurveKey>>,
    },
    /// CURVE client: the side that connects.
    CurveClient {
        /// The client's own key pair.
        keys: KeyPair,
        /// The server's public key.
        server: CurveKey,
    },
}

impl Security {
    /// Applies the security options to `socket` (before it binds or connects). `zap_domain`
    /// names the allow-list in the context's [`ZapHandler`].
    pub(crate) fn apply(&self, socket: &zmq::Socket, zap_domain: &str) -> Result<(), PublishError> {
        let err = |what| move |source| PublishError::Zmq { what, source };
        match self {
            Security::Plain => Ok(()),
            Security::CurveServer { keys, .. } => {
                check_curve()?;
                socket.set_curve_server(true).map_err(err("set CURVE server mode"))?;
                socket.set_curve_secretkey(&keys.secret.0).map_err(err("set the CURVE secret key"))?;
                socket.set_zap_domain(zap_domain).map_err(err("set the ZAP domain"))
            }
            Security::CurveClient { keys, server } => {
                check_curve()?;
                socket.set_curve_serverkey(&server.0).map_err(err("set the CURVE server key"))?;
                socket.set_curve_publickey(&keys.public.0).map_err(err("set the CURVE public key"))?;
                socket.set_curve_secretkey(&keys.secret.0).map_err(err("set the CURVE secret key"))
            }
        }
    }

    /// Whether this is a CURVE server with a client allow-list (which needs a [`ZapHandler`]).
    pub(crate) fn allow_list(&self) -> Option<&BTreeSet<CurveKey>> {
        match self {
            Security::CurveServer { allowed_clients: Some(keys), .. } => Some(keys),
            _ => None,
        }
    }
}

/// Answers libzmq's authentication requests (ZAP, RFC 27) for one context: a CURVE client is
/// admitted if its public key is in the allow-list of the socket's ZAP domain. Runs on its own
/// thread until dropped. Without a handler libzmq admits every CURVE client that knows the
/// server key, which encrypts but does not authenticate.
pub(crate) struct ZapHandler {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl ZapHandler {
    /// Binds the ZAP endpoint in `ctx` and starts answering. `domains` maps a ZAP domain to its
    /// allowed client keys; requests for any other domain are refused.
    pub(crate) fn start(
        ctx: &zmq::Context,
        domains: BTreeMap<String, BTreeSet<CurveKey>>,
    ) -> Result<ZapHandler, PublishError> {
        let socket =
            ctx.socket(zmq::REP).map_err(|e| PublishError::Zmq { what: "create the ZAP socket", source: e })?;
        socket.bind(ZAP_ENDPOINT).map_err(|e| PublishError::Bind { endpoint: ZAP_ENDPOINT.to_owned(), source: e })?;
        let stop = Arc::new(AtomicBool::new(false));
        let stop_flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("tablecam-zap".to_owned())
            .spawn(move || zap_loop(&socket, &domains, &stop_flag))
            .map_err(|e| PublishError::Thread(e.to_string()))?;
        Ok(ZapHandler { stop, thread: Some(thread) })
    }
}

impl Drop for ZapHandler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn zap_loop(socket: &zmq::Socket, domains: &BTreeMap<String, BTreeSet<CurveKey>>, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        match socket.poll(zmq::POLLIN, ZAP_POLL_MS) {
            Ok(0) => continue,
            Ok(_) => {}
            Err(_) => return, // the context is terminating
        }
        let Ok(request) = socket.recv_multipart(zmq::DONTWAIT) else { continue };
        // version, request id, domain, address, identity, mechanism, credentials…
        let (status, text): (&[u8], &[u8]) = match request.as_slice() {
            [version, _, domain, _, _, mechanism, key, ..]
                if version.as_slice() == b"1.0" && mechanism.as_slice() == b"CURVE" && key.len() == 32 =>
            {
                let admitted = std::str::from_utf8(domain)
                    .ok()
                    .and_then(|d| domains.get(d))
                    .is_some_and(|allowed| key.as_slice().try_into().is_ok_and(|k| allowed.contains(&CurveKey(k))));
                if admitted {
                    (b"200", b"OK")
                } else {
                    (b"400", b"client key not authorized")
                }
            }
            _ => (b"400", b"unsupported ZAP request"),
        };
        let request_id = request.get(1).cloned().unwrap_or_default();
        let reply: [&[u8]; 6] = [b"1.0", &request_id, status, text, b"", b""];
        let _ = socket.send_multipart(reply, 0);
    }
}

/// Fails unless this libzmq was built with CURVE (see docs/stack.md).
pub(crate) fn check_curve() -> Result<(), PublishError> {
    if zmq::has("curve") == Some(true) {
        Ok(())
    } else {
        Err(PublishError::CurveUnavailable)
    }
}

/// `name z85` lines of a key file (comments and blank lines skipped).
fn read_fields(path: &Path) -> Result<BTreeMap<String, CurveKey>, PublishError> {
    let text = fs::read_to_string(path).map_err(|e| key_io(path, "cannot read the key file", e))?;
    let mut fields = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (name, value) = line
            .split_once(char::is_whitespace)
            .ok_or_else(|| key_file(path, format!("line {}: expected `public <key>` or `secret <key>`", i + 1)))?;
        if name != "public" && name != "secret" {
            return Err(key_file(path, format!("line {}: unknown field {name:?} (expected public or secret)", i + 1)));
        }
        let key = CurveKey::from_z85(value.trim())
            .ok_or_else(|| key_file(path, format!("line {}: not a 40-character Z85 CURVE key", i + 1)))?;
        fields.insert(name.to_owned(), key);
    }
    Ok(fields)
}

/// Refuses a secret key file that group or others can read.
fn check_private(path: &Path) -> Result<(), PublishError> {
    let mode = fs::metadata(path).map_err(|e| key_io(path, "cannot read the key file", e))?.permissions().mode();
    if mode & 0o077 != 0 {
        return Err(key_file(
            path,
            format!("holds a secret key but its mode is {:o}: run `chmod 600` on it", mode & 0o777),
        ));
    }
    Ok(())
}

fn write_private(path: &Path, text: &str) -> Result<(), PublishError> {
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| key_io(path, "cannot create the key file", e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| key_io(path, "cannot write the key file", e))
}

fn key_file(path: &Path, reason: impl Into<String>) -> PublishError {
    PublishError::KeyFile { path: path.to_path_buf(), reason: reason.into() }
}

fn key_io(path: &Path, action: &'static str, source: std::io::Error) -> PublishError {
    PublishError::File { path: path.to_path_buf(), action, source }
}
