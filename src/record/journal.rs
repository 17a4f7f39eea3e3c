//! The tamper-evident event journal: one append-only JSON-lines file per table, each line
//! chained to the previous one by SHA-256 (format and guarantees in `docs/journal.md`).
//!
//! A line is, byte for byte (`render_line`):
//!
//! ```text
//! {"n":<n>,"prev":"<64 hex>","hash":"<64 hex>","event":<event JSON verbatim>}\n
//! ```
//!
//! with `n` = 1 for the first line and +1 per line, `prev` = the previous line's `hash` (64 zeros
//! for the first line) and `hash` = SHA-256 of `prev ‖ "|" ‖ n ‖ "|" ‖ event` (`prev` as its 64
//! hex characters, `n` in decimal, the event's exact bytes). Any change of a byte in any line,
//! a deleted, inserted or reordered line breaks the chain at or after that line; only dropping
//! lines from the end needs an outside anchor (a receipt's hash kept elsewhere).

use std::fmt;
use std::fs::{File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

/// The `prev` of the first line: no predecessor.
pub const GENESIS: EntryHash = EntryHash([0; 32]);

/// How long `open` waits for another holder of the journal's lock to let go.
const LOCK_WAIT: Duration = Duration::from_secs(1);
/// Pause between two attempts to take the lock.
const LOCK_RETRY: Duration = Duration::from_millis(10);

/// How much of the file is read per step when looking backwards for the last line.
const TAIL_CHUNK_BYTES: u64 = 64 * 1024;

/// Errors of the journal. Each names the journal file.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The file (or its directory, or the side file of a torn tail) cannot be read or written.
    #[error("{path}: {action}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// Why it failed.
        source: io::Error,
    },
    /// Another process (or another `Journal` in this one) has the journal open for appending
    /// (its lock stayed held for a second).
    #[error("{path}: the journal is open for appending elsewhere (its lock is held); one writer per journal")]
    Locked {
        /// The file.
        path: PathBuf,
    },
    /// The end of the file is damaged in a way a crash during an append cannot explain, so it is
    /// not repaired automatically.
    #[error("{path}: the journal's tail is damaged ({problem}); run `tablecam journal verify {path}` and investigate — it is not repaired automatically")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: Problem,
    },
    /// The event given to `append` is not one line of JSON.
    #[error("{path}: event not appended: {reason}")]
    InvalidEvent {
        /// The file.
        path: PathBuf,
        /// Why the event was refused.
        reason: String,
    },
    /// An earlier append failed midway; the file's end is unknown until it is reopened (which
    /// repairs a partial line).
    #[error(
        "{path}: an earlier append failed; reopen the journal (Journal::open repairs its tail) before appending again"
    )]
    Poisoned {
        /// The file.
        path: PathBuf,
    },
    /// `FsyncPolicy::EveryN(0)`.
    #[error("fsync policy EveryN(0): the batch size must be at least 1")]
    BadPolicy,
}

/// When appended lines are forced to disk (`fdatasync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncPolicy {
    /// After every append, before `append` returns: an acknowledged event survives a crash of
    /// the process or of the machine.
    Always,
    /// After every n-th append; up to n − 1 acknowledged events can be lost if the machine
    /// (not just the process) crashes.
    EveryN(u32),
    /// On the first append at least this long after the previous sync (checked at append time:
    /// call [`Journal::sync`] from a timer if appends can stop for long).
    Interval(Duration),
    /// Never explicitly; the OS writes back when it likes. A process crash loses nothing that
    /// `append` acknowledged, a machine crash can.
    Never,
}

/// A SHA-256 digest of a journal line, shown as 64 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct EntryHash(pub [u8; 32]);

impl fmt::Display for EntryHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for byte in self.0 {
            write!(f, "{byte:02x}")?;
        }
        Ok(())
    }
}

impl fmt::Debug for EntryHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "EntryHash({self})")
    }
}

/// The text is not 64 lowercase hex characters.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a SHA-256 hash (64 lowercase hex characters): {0:?}")]
pub struct BadHash(pub String);

impl FromStr for EntryHash {
    type Err = BadHash;
    fn from_str(s: &str) -> Result<Self, BadHash> {
        parse_hex32(s.as_bytes()).map(EntryHash).ok_or_else(|| BadHash(s.to_owned()))
    }
}

/// The proof that an event was appended: its line number and hash.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Receipt {
    /// The entry's index (`n`), equal to its line number, from 1.
    pub n: u64,
    /// The entry's hash: the head of the chain after this append.
    pub hash: EntryHash,
    /// Whether the line was forced to disk before `append` returned (per the [`FsyncPolicy`]).
    pub durable: bool,
}

/// What [`Journal::open`] found and moved aside at the end of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TornTail {
    /// Where the removed bytes now are (`<file>.torn-<n>`, n = the entry they would have been).
    pub moved_to: PathBuf,
    /// How many bytes were removed from the journal.
    pub bytes: u64,
}

/// Why a line of a journal is not a valid continuation of the chain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProblemKind {
    /// The line is not valid JSON.
    BadJson(String),
    /// Valid JSON, but not the journal's exact line layout (fields, order, spacing).
    NotCanonical,
    /// `n` is not the previous line's `n` + 1.
    GapInN {
        /// The `n` the line should have.
        expected: u64,
        /// The `n` it has.
        found: u64,
    },
    /// `prev` is not the previous line's `hash`.
    BrokenChain {
        /// The previous line's hash.
        expected: EntryHash,
        /// The line's `prev`.
        found: EntryHash,
    },
    /// `hash` is not the SHA-256 of the line's own contents.
    HashMismatch {
        /// The hash written in the line.
        stored: EntryHash,
        /// The hash of its `prev`, `n` and event.
        computed: EntryHash,
    },
    /// The last line has no newline: an append that did not finish.
    Torn,
    /// The head is not the expected anchor (lines missing at the end, or another journal).
    UnexpectedHead {
        /// The anchor given.
        expected: EntryHash,
        /// The journal's last hash.
        found: EntryHash,
    },
}

impl fmt::Display for ProblemKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ProblemKind::BadJson(msg) => write!(f, "bad JSON: {msg}"),
            ProblemKind::NotCanonical => {
                write!(f, "not in the journal's line layout {{\"n\":…,\"prev\":\"…\",\"hash\":\"…\",\"event\":…}}")
            }
            ProblemKind::GapInN { expected, found } => write!(f, "gap in n: expected n={expected}, found n={found}"),
            ProblemKind::BrokenChain { expected, found } => {
                write!(f, "broken chain: prev is {found}, the previous line's hash is {expected}")
            }
            ProblemKind::HashMismatch { stored, computed } => {
                write!(f, "hash mismatch: the line says {stored}, its contents hash to {computed}")
            }
            ProblemKind::Torn => write!(f, "incomplete last line (no newline): an append that did not finish"),
            ProblemKind::UnexpectedHead { expected, found } => {
                write!(f, "the last hash is {found}, expected {expected} (lines missing at the end?)")
            }
        }
    }
}

/// A bad line: where and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    /// 1-based line number in the file (0 when it is not known: a damage found from the end).
    pub line: u64,
    /// Why.
    pub kind: ProblemKind,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "last line: {}", self.kind)
        } else {
            write!(f, "line {}: {}", self.line, self.kind)
        }
    }
}

/// The outcome of checking a whole journal file ([`verify_file`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Valid entries before the first problem (all of them when there is none).
    pub entries: u64,
    /// The hash of the last valid entry ([`GENESIS`] for none).
    pub last_hash: EntryHash,
    /// The first bad line, if any.
    pub problem: Option<Problem>,
}

/// One parsed journal line, borrowing the line's bytes.
struct Line<'a> {
    n: u64,
    prev: EntryHash,
    hash: EntryHash,
    event: &'a [u8],
}

/// An open, locked, append-only journal file.
///
/// Create with [`Journal::open`]; [`Journal::append`] adds one event. One writer per file: the
/// file is locked (`flock`) while the `Journal` lives.
#[derive(Debug)]
pub struct Journal {
    path: PathBuf,
    file: File,
    policy: FsyncPolicy,
    /// `n` of the last line (0 when empty).
    last_n: u64,
    last_hash: EntryHash,
    unsynced: u32,
    last_sync: Instant,
    poisoned: bool,
    recovered: Option<TornTail>,
}

impl Journal {
    /// Opens (or creates) the journal at `path` for appending.
    ///
    /// Checks the tail: the last line must be well formed, hash to its own `hash` and follow
    /// the line before it. A torn tail — bytes after the last newline, or an unparsable last
    /// line, as a crash during an append leaves — is copied to `<path>.torn-<n>` (durably), then
    /// cut from the journal, and the chain continues from the last good line ([`Journal::recovered`]
    /// says what happened). Any other damage is [`JournalError::Corrupt`]: nothing is changed.
    /// The whole file is not re-verified here; [`verify_file`] does that.
    pub fn open(path: impl AsRef<Path>, policy: FsyncPolicy) -> Result<Journal, JournalError> {
        let path = path.as_ref().to_path_buf();
        if policy == FsyncPolicy::EveryN(0) {
            return Err(JournalError::BadPolicy);
        }
        let existed = path.exists();
        let file = OpenOptions::new()
            .read(true)
            .append(true)
            .create(true)
            .open(&path)
            .map_err(|source| io_err(&path, "cannot open the journal", source))?;
        lock_exclusive(&file, &path)?;
        if !existed {
            // The new file's directory entry must be durable too, or a crash could lose the
            // whole file together with its acknowledged lines.
            sync_parent_dir(&path)?;
        }
        let mut journal = Journal {
            path,
            file,
            policy,
            last_n: 0,
            last_hash: GENESIS,
            unsynced: 0,
            last_sync: Instant::now(),
            poisoned: false,
            recovered: None,
        };
        journal.check_tail()?;
        Ok(journal)
    }

    /// Appends one event (a single JSON value; surrounding whitespace is dropped, a newline inside
    /// is refused) and returns its receipt. With [`FsyncPolicy::Always`] the line is on disk
    /// (`fdatasync`) before this returns.
    pub fn append(&mut self, event_json: &[u8]) -> Result<Receipt, JournalError> {
        if self.poisoned {
            return Err(JournalError::Poisoned { path: self.path.clone() });
        }
        let event = event_json.trim_ascii();
        if let Err(reason) = check_event(event) {
            return Err(JournalError::InvalidEvent { path: self.path.clone(), reason });
        }
        let n = self.last_n + 1;
        let hash = entry_hash(&self.last_hash, n, event);
        let line = render_line(n, &self.last_hash, &hash, event);
        // One write of the whole line: a crash leaves either the line or a prefix of it without
        // its newline, which `open` recognises as torn.
        if let Err(source) = self.file.write_all(&line) {
            self.poisoned = true;
            return Err(io_err(&self.path, "cannot append to the journal", source));
        }
        self.last_n = n;
        self.last_hash = hash;
        self.unsynced += 1;
        let durable = match self.policy {
            FsyncPolicy::Always => true,
            FsyncPolicy::EveryN(batch) => self.unsynced >= batch,
            FsyncPolicy::Interval(every) => self.last_sync.elapsed() >= every,
            FsyncPolicy::Never => false,
        };
        if durable {
            self.sync()?;
        }
        Ok(Receipt { n, hash, durable })
    }

    /// Forces every appended line to disk now (`fdatasync`).
    pub fn sync(&mut self) -> Result<(), JournalError> {
        if let Err(source) = self.file.sync_data() {
            // After a failed fsync the kernel may have dropped the dirty pages: what is on disk
            // is unknown, so no further append may claim durability.
            self.poisoned = true;
            return Err(io_err(&self.path, "cannot fsync the journal", source));
        }
        self.unsynced = 0;
        self.last_sync = Instant::now();
        Ok(())
    }

    /// The journal file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Number of entries (= `n` of the last one).
    pub fn len(&self) -> u64 {
        self.last_n
    }

    /// Whether the journal has no entry yet.
    pub fn is_empty(&self) -> bool {
        self.last_n == 0
    }

    /// The hash of the last entry ([`GENESIS`] when empty): the head of the chain.
    pub fn last_hash(&self) -> EntryHash {
        self.last_hash
    }

    /// The torn tail `open` moved aside, if there was one.
    pub fn recovered(&self) -> Option<&TornTail> {
        self.recovered.as_ref()
    }

    /// Finds the last line, checks it and its link to the line before, and repairs a torn tail.
    fn check_tail(&mut self) -> Result<(), JournalError> {
        let len = self.file.metadata().map_err(|e| io_err(&self.path, "cannot stat the journal", e))?.len();
        if len == 0 {
            return Ok(());
        }
        // The end of the last newline-terminated line (0 if none); anything after it is torn.
        let good_end = self.rfind_newline(len)?.map_or(0, |pos| pos + 1);
        let mut torn_from = (good_end < len).then_some(good_end);
        if good_end > 0 {
            let start = self.line_start(good_end - 1)?;
            let last = self.read_range(start, good_end - 1)?;
            match parse_line(&last) {
                Ok(line) => self.adopt_last(&line, start)?,
                // An unparsable *last* line is what a machine crash can leave (garbage in the last
                // block). If bytes follow it, two lines are bad: that is corruption, not a tear.
                Err(_) if torn_from.is_none() => {
                    torn_from = Some(start);
                    if start > 0 {
                        let prev_start = self.line_start(start - 1)?;
                        let prev_line = self.read_range(prev_start, start - 1)?;
                        let line = parse_line(&prev_line).map_err(|kind| self.corrupt(kind))?;
                        self.adopt_last(&line, prev_start)?;
                    }
                }
                Err(kind) => return Err(self.corrupt(kind)),
            }
        }
        if let Some(from) = torn_from {
            self.move_aside(from, len)?;
        }
        Ok(())
    }

    /// Accepts `line` (starting at byte `start`) as the last good line after checking its hash
    /// and its link to the line before it.
    fn adopt_last(&mut self, line: &Line<'_>, start: u64) -> Result<(), JournalError> {
        let computed = entry_hash(&line.prev, line.n, line.event);
        if computed != line.hash {
            return Err(self.corrupt(ProblemKind::HashMismatch { stored: line.hash, computed }));
        }
        if start == 0 {
            if line.n != 1 {
                return Err(self.corrupt(ProblemKind::GapInN { expected: 1, found: line.n }));
            }
            if line.prev != GENESIS {
                return Err(self.corrupt(ProblemKind::BrokenChain { expected: GENESIS, found: line.prev }));
            }
        } else {
            let prev_start = self.line_start(start - 1)?;
            let bytes = self.read_range(prev_start, start - 1)?;
            let before = parse_line(&bytes).map_err(|kind| self.corrupt(kind))?;
            if line.n != before.n + 1 {
                return Err(self.corrupt(ProblemKind::GapInN { expected: before.n + 1, found: line.n }));
            }
            if line.prev != before.hash {
                return Err(self.corrupt(ProblemKind::BrokenChain { expected: before.hash, found: line.prev }));
            }
        }
        self.last_n = line.n;
        self.last_hash = line.hash;
        Ok(())
    }

    /// Copies bytes `from..len` to `<path>.torn-<n>` (durably), then truncates the journal to `from`.
    fn move_aside(&mut self, from: u64, len: u64) -> Result<(), JournalError> {
        let torn = self.read_range(from, len)?;
        let next_n = self.last_n + 1;
        let mut side = PathBuf::from(format!("{}.torn-{next_n}", self.path.display()));
        let mut k = 1;
        let mut out = loop {
            match OpenOptions::new().write(true).create_new(true).open(&side) {
                Ok(f) => break f,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    side = PathBuf::from(format!("{}.torn-{next_n}.{k}", self.path.display()));
                    k += 1;
                }
                Err(e) => return Err(io_err(&side, "cannot create the file for the torn tail", e)),
            }
        };
        out.write_all(&torn)
            .and_then(|()| out.sync_all())
            .map_err(|e| io_err(&side, "cannot save the torn tail", e))?;
        sync_parent_dir(&side)?;
        // Only now that the bytes are safe elsewhere is the journal cut.
        self.file.set_len(from).map_err(|e| io_err(&self.path, "cannot truncate the torn tail", e))?;
        self.file.sync_all().map_err(|e| io_err(&self.path, "cannot fsync the journal", e))?;
        self.recovered = Some(TornTail { moved_to: side, bytes: len - from });
        Ok(())
    }

    fn corrupt(&self, kind: ProblemKind) -> JournalError {
        JournalError::Corrupt { path: self.path.clone(), problem: Problem { line: 0, kind } }
    }

    /// The position of the last `\n` before `end`, if any.
    fn rfind_newline(&mut self, end: u64) -> Result<Option<u64>, JournalError> {
        let mut hi = end;
        while hi > 0 {
            let lo = hi.saturating_sub(TAIL_CHUNK_BYTES);
            let chunk = self.read_range(lo, hi)?;
            if let Some(i) = chunk.iter().rposition(|&b| b == b'\n') {
                return Ok(Some(lo + i as u64));
            }
            hi = lo;
        }
        Ok(None)
    }

    /// The start of the line whose terminating newline is at `newline`.
    fn line_start(&mut self, newline: u64) -> Result<u64, JournalError> {
        Ok(self.rfind_newline(newline)?.map_or(0, |p| p + 1))
    }

    fn read_range(&mut self, from: u64, to: u64) -> Result<Vec<u8>, JournalError> {
        let mut buf = vec![0; usize::try_from(to - from).unwrap_or(usize::MAX)];
        self.file
            .seek(SeekFrom::Start(from))
            .and_then(|_| self.file.read_exact(&mut buf))
            .map_err(|e| io_err(&self.path, "cannot read the journal", e))?;
        Ok(buf)
    }
}

impl Drop for Journal {
    fn drop(&mut self) {
        if self.unsynced > 0 && !self.poisoned {
            // Best effort: nothing can report an error from a drop; `sync` is the checked way.
            let _ = self.file.sync_data();
        }
    }
}

/// Checks every line of the journal at `path` from the start: layout, `n` sequence, chain and
/// hashes. Stops at the first problem. `expect_last`, when given, must be the last hash (an
/// anchor kept elsewhere: without one, lines cut from the end cannot be noticed).
pub fn verify_file(path: impl AsRef<Path>, expect_last: Option<EntryHash>) -> Result<VerifyReport, JournalError> {
    let path = path.as_ref();
    let file = File::open(path).map_err(|e| io_err(path, "cannot open the journal", e))?;
    let mut reader = BufReader::new(file);
    let mut report = VerifyReport { entries: 0, last_hash: GENESIS, problem: None };
    let mut buf = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        let read = reader.read_until(b'\n', &mut buf).map_err(|e| io_err(path, "cannot read the journal", e))?;
        if read == 0 {
            break;
        }
        line_no += 1;
        let fail = |kind| Some(Problem { line: line_no, kind });
        if buf.last() != Some(&b'\n') {
            report.problem = fail(ProblemKind::Torn);
            return Ok(report);
        }
        buf.pop();
        let line = match parse_line(&buf) {
            Ok(line) => line,
            Err(kind) => {
                report.problem = fail(kind);
                return Ok(report);
            }
        };
        let expected_n = report.entries + 1;
        let kind = if line.n != expected_n {
            Some(ProblemKind::GapInN { expected: expected_n, found: line.n })
        } else if line.prev != report.last_hash {
            Some(ProblemKind::BrokenChain { expected: report.last_hash, found: line.prev })
        } else {
            let computed = entry_hash(&line.prev, line.n, line.event);
            (computed != line.hash).then_some(ProblemKind::HashMismatch { stored: line.hash, computed })
        };
        if kind.is_some() {
            report.problem = kind.and_then(fail);
            return Ok(report);
        }
        report.entries = line.n;
        report.last_hash = line.hash;
    }
    if let Some(expected) = expect_last {
        if expected != report.last_hash {
            report.problem = Some(Problem {
                line: line_no,
                kind: ProblemKind::UnexpectedHead { expected, found: report.last_hash },
            });
        }
    }
    Ok(report)
}

/// SHA-256 of `prev ‖ "|" ‖ n ‖ "|" ‖ event` (prev as 64 hex characters, n in decimal).
pub fn entry_hash(prev: &EntryHash, n: u64, event: &[u8]) -> EntryHash {
    let mut h = Sha256::new();
    h.update(prev.to_string().as_bytes());
    h.update(b"|");
    h.update(n.to_string().as_bytes());
    h.update(b"|");
    h.update(event);
    EntryHash(h.finalize().into())
}

/// The exact bytes of a journal line, newline included.
fn render_line(n: u64, prev: &EntryHash, hash: &EntryHash, event: &[u8]) -> Vec<u8> {
    let mut line = format!("{{\"n\":{n},\"prev\":\"{prev}\",\"hash\":\"{hash}\",\"event\":").into_bytes();
    line.reserve(event.len() + 2);
    line.extend_from_slice(event);
    line.extend_from_slice(b"}\n");
    line
}

/// Parses one line (without its newline). The layout is fixed, so a line is valid only if it
/// is byte-identical to what `render_line` writes for its fields.
fn parse_line(bytes: &[u8]) -> Result<Line<'_>, ProblemKind> {
    if let Err(err) = serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
        return Err(ProblemKind::BadJson(err.to_string()));
    }
    let rest = bytes.strip_prefix(b"{\"n\":").ok_or(ProblemKind::NotCanonical)?;
    let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
    let n: u64 = std::str::from_utf8(&rest[..digits])
        .ok()
        .filter(|d| !d.is_empty() && (d.len() == 1 || !d.starts_with('0')))
        .and_then(|d| d.parse().ok())
        .ok_or(ProblemKind::NotCanonical)?;
    let rest = rest[digits..].strip_prefix(b",\"prev\":\"").ok_or(ProblemKind::NotCanonical)?;
    let prev = rest.get(..64).and_then(parse_hex32).ok_or(ProblemKind::NotCanonical)?;
    let rest = rest[64..].strip_prefix(b"\",\"hash\":\"").ok_or(ProblemKind::NotCanonical)?;
    let hash = rest.get(..64).and_then(parse_hex32).ok_or(ProblemKind::NotCanonical)?;
    let rest = rest[64..].strip_prefix(b"\",\"event\":").ok_or(ProblemKind::NotCanonical)?;
    let event = rest.strip_suffix(b"}").ok_or(ProblemKind::NotCanonical)?;
    // The whole line is valid JSON, so `event` is a single value unless the line's closing brace
    // belongs to it; re-check it alone, and the same rules `append` applies.
    check_event(event).map_err(|_| ProblemKind::NotCanonical)?;
    Ok(Line { n, prev: EntryHash(prev), hash: EntryHash(hash), event })
}

/// An event must be exactly one JSON value on one line, without surrounding whitespace.
fn check_event(event: &[u8]) -> Result<(), String> {
    if event.is_empty() {
        return Err("the event is empty".to_owned());
    }
    if event.iter().any(|&b| b == b'\n' || b == b'\r') {
        return Err("the event JSON spans several lines (serialize it compactly)".to_owned());
    }
    if event.trim_ascii().len() != event.len() {
        return Err("the event JSON has surrounding whitespace".to_owned());
    }
    serde_json::from_slice::<serde::de::IgnoredAny>(event).map_err(|e| format!("the event is not valid JSON: {e}"))?;
    Ok(())
}

fn parse_hex32(hex: &[u8]) -> Option<[u8; 32]> {
    if hex.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in hex.chunks_exact(2).enumerate() {
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

fn io_err(path: &Path, action: &'static str, source: io::Error) -> JournalError {
    JournalError::Io { path: path.to_path_buf(), action, source }
}

/// Takes the journal's exclusive lock, waiting up to [`LOCK_WAIT`] for it.
///
/// Waiting a moment matters: a process forked by any thread of ours (or of the previous writer)
/// shares the lock until it executes its program, and a writer that is just exiting still holds
/// it; neither is a second writer.
fn lock_exclusive(file: &File, path: &Path) -> Result<(), JournalError> {
    let start = Instant::now();
    loop {
        // SAFETY: flock on a descriptor we own; no memory is involved.
        let rc = unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
        if rc == 0 {
            return Ok(());
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() != Some(libc::EWOULDBLOCK) {
            return Err(io_err(path, "cannot lock the journal", err));
        }
        if start.elapsed() >= LOCK_WAIT {
            return Err(JournalError::Locked { path: path.to_path_buf() });
        }
        std::thread::sleep(LOCK_RETRY);
    }
}

fn sync_parent_dir(path: &Path) -> Result<(), JournalError> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_err(dir, "cannot fsync the directory", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_round_trips_through_parse() {
        let event = br#"{"table":"t1","kind":"round_start","seq":7}"#;
        let hash = entry_hash(&GENESIS, 1, event);
        let line = render_line(1, &GENESIS, &hash, event);
        let parsed = parse_line(&line[..line.len() - 1]).expect("parses");
        assert_eq!((parsed.n, parsed.prev, parsed.hash, parsed.event), (1, GENESIS, hash, &event[..]));
    }

    #[test]
    fn hash_is_sha256_of_documented_bytes() {
        // Documented in docs/journal.md: printf '%s|%s|%s' "$prev" 1 '{"a":1}' | sha256sum
        let mut h = Sha256::new();
        h.update(format!("{}|1|{{\"a\":1}}", "0".repeat(64)).as_bytes());
        let expected = EntryHash(h.finalize().into());
        assert_eq!(entry_hash(&GENESIS, 1, br#"{"a":1}"#), expected);
    }

    #[test]
    fn non_canonical_layouts_are_refused() {
        let event = br#"{"a":1}"#;
        let hash = entry_hash(&GENESIS, 1, event);
        let good = String::from_utf8(render_line(1, &GENESIS, &hash, event)).unwrap();
        let good = good.trim_end();
        for bad in [
            good.replace("{\"n\":1", "{\"n\": 1"),
            good.replace("\"n\":1", "\"n\":01"),
            good.replacen(&hash.to_string(), &hash.to_string().to_uppercase(), 1),
            format!("{good} "),
        ] {
            assert!(parse_line(bad.as_bytes()).is_err(), "accepted {bad}");
        }
        assert!(matches!(parse_line(b"{\"n\":1,"), Err(ProblemKind::BadJson(_))));
    }

    #[test]
    fn events_must_be_one_json_line() {
        assert!(check_event(br#"{"a":1}"#).is_ok());
        assert!(check_event(b"{\"a\":\n1}").is_err());
        assert!(check_event(b"{\"a\":1").is_err());
        assert!(check_event(b"").is_err());
        assert!(check_event(br#"{"a":1} {"b":2}"#).is_err());
    }

    #[test]
    fn hash_text_round_trips() {
        let h = entry_hash(&GENESIS, 3, b"null");
        assert_eq!(h.to_string().parse::<EntryHash>(), Ok(h));
        assert!("abc".parse::<EntryHash>().is_err());
    }
}
