//! Operators and sessions: the users file (PBKDF2-HMAC-SHA256 hashes) and session tokens.
//!
//! PBKDF2 is written here over the `sha2` crate already in the build (RFC 2104 HMAC, RFC 8018
//! PBKDF2, checked against the RFC 7914 vectors below) rather than adding crates.
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::DashboardError;

/// Iterations for new users (OWASP's 2023 figure for PBKDF2-HMAC-SHA256 is 600 000; this is
/// a compromise for the slow machines at the tables, stored per user so it can be raised).
pub const DEFAULT_ITERATIONS: u32 = 200_000;

/// A session lasts this long after login (one shift).
const SESSION_TTL: Duration = Duration::from_secs(12 * 3600);

/// One line of the users file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRecord {
    /// The login name.
    pub user: String,
    /// Random salt, hex.
    pub salt: String,
    /// PBKDF2 iterations.
    pub iterations: u32,
    /// PBKDF2-HMAC-SHA256(password, salt, iterations), 32 bytes, hex.
    pub hash: String,
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut k = [0u8; 64];
    if key.len() > 64 {
        k[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        k[..key.len()].copy_from_slice(key);
    }
    let mut inner = Sha256::new();
    inner.update(k.map(|b| b ^ 0x36));
    for p in parts {
        inner.update(p);
    }
    let mut outer = Sha256::new();
    outer.update(k.map(|b| b ^ 0x5c));
    outer.update(inner.finalize());
    outer.finalize().into()
}

/// PBKDF2-HMAC-SHA256 with a 32-byte output (one block).
pub fn pbkdf2_sha256(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let mut u = hmac_sha256(password, &[salt, &1u32.to_be_bytes()]);
    let mut out = u;
    for _ in 1..iterations {
        u = hmac_sha256(password, &[&u]);
        for (o, x) in out.iter_mut().zip(u) {
            *o ^= x;
        }
    }
    out
}

/// Equality whose time does not depend on where the inputs differ.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// `n` bytes from the kernel's CSPRNG.
pub fn random_bytes(n: usize) -> Result<Vec<u8>, DashboardError> {
    let mut buf = vec![0u8; n];
    File::open("/dev/urandom")
        .and_then(|mut f| f.read_exact(&mut buf))
        .map_err(|e| DashboardError::Io { what: "reading /dev/urandom".into(), source: e })?;
    Ok(buf)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok()).collect()
}

/// A new users-file record for `user` with `password` (fresh 16-byte salt).
pub fn make_user(user: &str, password: &str) -> Result<UserRecord, DashboardError> {
    let salt = random_bytes(16)?;
    let hash = pbkdf2_sha256(password.as_bytes(), &salt, DEFAULT_ITERATIONS);
    Ok(UserRecord { user: user.to_string(), salt: hex(&salt), iterations: DEFAULT_ITERATIONS, hash: hex(&hash) })
}

/// The operators allowed to log in.
#[derive(Debug, Default)]
pub struct Users {
    users: HashMap<String, UserRecord>,
}

impl Users {
    /// Reads a users file: JSON lines of [`UserRecord`]; blank lines and `#` comments skipped.
    pub fn load(path: &Path) -> Result<Users, DashboardError> {
        let file = File::open(path).map_err(|e| DashboardError::Io {
            what: format!("opening the users file {}", path.display()),
            source: e,
        })?;
        let mut users = HashMap::new();
        for (n, line) in BufReader::new(file).lines().enumerate() {
            let line =
                line.map_err(|e| DashboardError::Io { what: format!("reading {}", path.display()), source: e })?;
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: String| DashboardError::Users { path: path.display().to_string(), line: n + 1, why };
            let rec: UserRecord = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            if unhex(&rec.salt).is_none() || unhex(&rec.hash).map(|h| h.len()) != Some(32) || rec.iterations == 0 {
                return Err(bad("salt and hash must be hex (hash 32 bytes), iterations > 0".into()));
            }
            users.insert(rec.user.clone(), rec);
        }
        Ok(Users { users })
    }

    /// Whether `password` is `user`'s. Unknown users cost the same PBKDF2 work, so that the
    /// answer's timing does not tell which names exist.
    pub fn check(&self, user: &str, password: &str) -> bool {
        match self.users.get(user) {
            Some(rec) => {
                let salt = unhex(&rec.salt).unwrap_or_default();
                let want = unhex(&rec.hash).unwrap_or_default();
                constant_time_eq(&pbkdf2_sha256(password.as_bytes(), &salt, rec.iterations), &want)
            }
            None => {
                let _ = pbkdf2_sha256(password.as_bytes(), b"no such user", DEFAULT_ITERATIONS);
                false
            }
        }
    }
}

/// Live sessions, keyed by the SHA-256 of their token so that a lookup's timing says nothing
/// about the tokens themselves.
#[derive(Debug, Default)]
pub struct Sessions {
    by_hash: HashMap<[u8; 32], (String, Instant)>,
}

impl Sessions {
    /// Opens a session for `user`; returns the token for the cookie (128 random bits, hex).
    pub fn open(&mut self, user: &str) -> Result<String, DashboardError> {
        let token = hex(&random_bytes(16)?);
        let now = Instant::now();
        self.by_hash.retain(|_, (_, at)| now.duration_since(*at) < SESSION_TTL);
        self.by_hash.insert(Sha256::digest(token.as_bytes()).into(), (user.to_string(), now));
        Ok(token)
    }

    /// The user of a live session.
    pub fn user(&self, token: &str) -> Option<String> {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.by_hash.get(&key).filter(|(_, at)| at.elapsed() < SESSION_TTL).map(|(u, _)| u.clone())
    }

    /// Ends a session.
    pub fn close(&mut self, token: &str) {
        let key: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        self.by_hash.remove(&key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pbkdf2_matches_rfc7914_vectors() {
        // RFC 7914 §11 / widely published PBKDF2-HMAC-SHA256 vectors.
        assert_eq!(
            hex(&pbkdf2_sha256(b"password", b"salt", 1)),
            "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"
        );
        assert_eq!(
            hex(&pbkdf2_sha256(b"password", b"salt", 2)),
            "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"
        );
        assert_eq!(
            hex(&pbkdf2_sha256(b"passwd", b"salt", 1)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn users_check_and_sessions() {
        let rec = make_user("ana", "s3cret").unwrap();
        let users = Users { users: HashMap::from([("ana".to_string(), rec)]) };
        assert!(users.check("ana", "s3cret"));
        assert!(!users.check("ana", "s3cret "));
        assert!(!users.check("bob", "s3cret"));
        let mut s = Sessions::default();
        let t = s.open("ana").unwrap();
        assert_eq!(t.len(), 32);
        assert_eq!(s.user(&t).as_deref(), Some("ana"));
        s.close(&t);
        assert_eq!(s.user(&t), None);
    }
}
