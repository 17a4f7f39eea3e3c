//! The tamper-evident journal: hash chain, tamper detection, torn-tail repair after a crash, and
//! `tablecam journal verify`.
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use tablecam::record::{entry_hash, verify_file, FsyncPolicy, Journal, JournalError, ProblemKind, GENESIS};

/// Env var that turns the ignored `crash_child_writer` test into the child process of `crash_recovery`.
const CHILD_ENV: &str = "TABLECAM_JOURNAL_CRASH_CHILD";

/// A fresh, empty directory under cargo's per-test-target temp dir.
fn scratch(name: &str) -> PathBuf {
    static COUNTER: AtomicU32 = AtomicU32::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "journal-{name}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn event(i: u64) -> String {
    format!(r#"{{"v":1,"table":"t1","kind":"card_dealt","seq":{i},"card":"Ah","spot":"player{}"}}"#, i % 7)
}

/// Writes `count` events and returns the journal's path.
fn write_journal(dir: &Path, count: u64) -> PathBuf {
    let path = dir.join("t1.jsonl");
    let mut j = Journal::open(&path, FsyncPolicy::Never).unwrap();
    for i in 1..=count {
        j.append(event(i).as_bytes()).unwrap();
    }
    path
}

fn lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap().lines().map(str::to_owned).collect()
}

fn first_problem(path: &Path) -> (u64, ProblemKind) {
    let report = verify_file(path, None).unwrap();
    let problem = report.problem.expect("the altered journal must not verify");
    (problem.line, problem.kind)
}

#[test]
fn chain_round_trip() {
    let dir = scratch("roundtrip");
    let path = dir.join("t1.jsonl");
    let mut receipts = Vec::new();
    {
        let mut j = Journal::open(&path, FsyncPolicy::Always).unwrap();
        assert!(j.is_empty());
        for i in 1..=5 {
            receipts.push(j.append(event(i).as_bytes()).unwrap());
        }
        assert!(receipts.iter().all(|r| r.durable));
    }
    assert_eq!(receipts.iter().map(|r| r.n).collect::<Vec<_>>(), [1, 2, 3, 4, 5]);

    // Each line carries the event verbatim and chains to its predecessor.
    let text = lines(&path);
    assert_eq!(text.len(), 5);
    let mut prev = GENESIS.to_string();
    for (i, line) in text.iter().enumerate() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["n"], i as u64 + 1);
        assert_eq!(v["prev"], prev.as_str());
        assert_eq!(v["hash"], receipts[i].hash.to_string().as_str());
        assert!(line.ends_with(&format!(",\"event\":{}}}", event(i as u64 + 1))));
        prev = receipts[i].hash.to_string();
    }

    let report = verify_file(&path, Some(receipts[4].hash)).unwrap();
    assert_eq!((report.entries, report.last_hash, report.problem), (5, receipts[4].hash, None));

    // Reopening continues the chain where it stopped.
    let mut j = Journal::open(&path, FsyncPolicy::EveryN(2)).unwrap();
    assert_eq!((j.len(), j.last_hash()), (5, receipts[4].hash));
    assert!(j.recovered().is_none());
    let r6 = j.append(event(6).as_bytes()).unwrap();
    let r7 = j.append(event(7).as_bytes()).unwrap();
    assert_eq!((r6.n, r6.durable, r7.n, r7.durable), (6, false, 7, true));
    drop(j);
    assert_eq!(verify_file(&path, None).unwrap().entries, 7);
}

/// `line` with its `hash` recomputed from its own contents (what a forger would do).
fn rehash(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    let prev = v["prev"].as_str().unwrap().parse().unwrap();
    let event_at = line.find(",\"event\":").unwrap() + ",\"event\":".len();
    let hash = entry_hash(&prev, v["n"].as_u64().unwrap(), &line.as_bytes()[event_at..line.len() - 1]);
    line.replace(v["hash"].as_str().unwrap(), &hash.to_string())
}

#[test]
fn one_edited_byte_is_detected() {
    let dir = scratch("edit");
    let path = write_journal(&dir, 6);
    let original = std::fs::read(&path).unwrap();

    // The event's seq 3 → 4 (one byte): the line still parses, its stored hash no longer matches.
    let mut text = lines(&path);
    text[2] = text[2].replace("\"seq\":3", "\"seq\":4");
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let (line, kind) = first_problem(&path);
    assert_eq!(line, 3);
    assert!(matches!(kind, ProblemKind::HashMismatch { .. }), "{kind:?}");

    // Recomputing that line's hash does not help: the next line's prev gives it away.
    text[2] = rehash(&text[2]);
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let (line, kind) = first_problem(&path);
    assert_eq!(line, 4);
    assert!(matches!(kind, ProblemKind::BrokenChain { .. }), "{kind:?}");

    // Every single-byte change anywhere in the file is noticed.
    for pos in (0..original.len()).step_by(37) {
        let mut bytes = original.clone();
        bytes[pos] = if bytes[pos] == b'x' { b'y' } else { b'x' };
        std::fs::write(&path, &bytes).unwrap();
        assert!(verify_file(&path, None).unwrap().problem.is_some(), "byte {pos} changed unnoticed");
    }
}

#[test]
fn deleted_line_is_detected() {
    let dir = scratch("delete");
    let path = write_journal(&dir, 6);
    let mut text = lines(&path);
    text.remove(3);
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let (line, kind) = first_problem(&path);
    assert_eq!((line, kind.clone()), (4, ProblemKind::GapInN { expected: 4, found: 5 }), "{kind}");
}

#[test]
fn cut_tail_is_detected_only_with_an_anchor() {
    let dir = scratch("cut");
    let path = write_journal(&dir, 4);
    let head = verify_file(&path, None).unwrap().last_hash;
    let text = lines(&path);
    std::fs::write(&path, text[..3].join("\n") + "\n").unwrap();
    assert_eq!(verify_file(&path, None).unwrap().problem, None, "a shorter chain is still a chain");
    let kind = verify_file(&path, Some(head)).unwrap().problem.unwrap().kind;
    assert!(matches!(kind, ProblemKind::UnexpectedHead { .. }), "{kind:?}");
}

#[test]
fn torn_tail_is_moved_aside_and_the_chain_continues() {
    let dir = scratch("torn");
    let path = write_journal(&dir, 3);
    let intact = std::fs::read(&path).unwrap();
    let partial = br#"{"n":4,"prev":"0123"#;
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(partial).unwrap();
    assert_eq!(first_problem(&path), (4, ProblemKind::Torn));

    let mut j = Journal::open(&path, FsyncPolicy::Always).unwrap();
    let torn = j.recovered().cloned().expect("the torn tail is reported");
    assert_eq!(torn.moved_to, dir.join("t1.jsonl.torn-4"));
    assert_eq!(torn.bytes, partial.len() as u64);
    assert_eq!(std::fs::read(&torn.moved_to).unwrap(), partial, "the torn bytes are kept, not deleted");
    assert_eq!(std::fs::read(&path).unwrap(), intact);
    assert_eq!(j.append(event(4).as_bytes()).unwrap().n, 4);
    drop(j);
    assert_eq!(verify_file(&path, None).unwrap().entries, 4);
}

#[test]
fn unparsable_last_line_is_torn_but_a_forged_one_is_refused() {
    let dir = scratch("garbage");
    let path = write_journal(&dir, 2);
    // A machine crash can leave a zero-filled block that ends in a newline.
    std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"\0\0\0\0\n").unwrap();
    let j = Journal::open(&path, FsyncPolicy::Never).unwrap();
    assert_eq!(j.len(), 2);
    assert_eq!(j.recovered().unwrap().bytes, 5);
    drop(j);

    // A well-formed last line with a wrong hash is tampering, not a tear: refuse, change nothing.
    let mut text = lines(&path);
    text[1] = text[1].replace("\"seq\":2", "\"seq\":9");
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let before = std::fs::read(&path).unwrap();
    match Journal::open(&path, FsyncPolicy::Never) {
        Err(JournalError::Corrupt { problem, .. }) => {
            assert!(matches!(problem.kind, ProblemKind::HashMismatch { .. }), "{problem}")
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    assert_eq!(std::fs::read(&path).unwrap(), before);
}

#[test]
fn one_writer_per_journal() {
    let dir = scratch("lock");
    let path = dir.join("t1.jsonl");
    let _first = Journal::open(&path, FsyncPolicy::Never).unwrap();
    assert!(matches!(Journal::open(&path, FsyncPolicy::Never), Err(JournalError::Locked { .. })));
}

#[test]
fn invalid_events_are_refused_and_nothing_is_written() {
    let dir = scratch("invalid");
    let path = dir.join("t1.jsonl");
    let mut j = Journal::open(&path, FsyncPolicy::Never).unwrap();
    for bad in [&b"{\"a\":"[..], b"{\"a\":\n1}", b"", b"1 2"] {
        assert!(matches!(j.append(bad), Err(JournalError::InvalidEvent { .. })), "{bad:?}");
    }
    // Surrounding whitespace (a trailing newline from a serializer) is not part of the event.
    assert_eq!(j.append(b"{\"a\":1}\n").unwrap().n, 1);
    drop(j);
    assert!(std::fs::read_to_string(&path).unwrap().ends_with(",\"event\":{\"a\":1}}\n"));
}

/// The child of `crash_recovery`: appends with FsyncPolicy::Always until killed, printing
/// `ACK <n>` after each append returned. Run only through `crash_recovery`.
#[test]
#[ignore = "child process of crash_recovery"]
fn crash_child_writer() {
    let path = std::env::var_os(CHILD_ENV).expect("run through crash_recovery");
    let mut j = Journal::open(path, FsyncPolicy::Always).unwrap();
    let stdout = std::io::stdout();
    for i in 1.. {
        // Events of very different sizes, some spanning many pages, so that a kill can land
        // inside a write and leave a torn line.
        let pad = "x".repeat(((i * 7919) % 97) as usize * 4096);
        let ev = format!(r#"{{"seq":{i},"pad":"{pad}"}}"#);
        let receipt = j.append(ev.as_bytes()).unwrap();
        writeln!(stdout.lock(), "ACK {}", receipt.n).unwrap();
    }
}

#[test]
fn crash_recovery() {
    let dir = scratch("crash");
    let path = dir.join("t1.jsonl");
    let mut acked = Vec::new();
    let mut torn_seen = 0;
    // A few rounds, each killing the writer at a different moment.
    for (round, kill_after) in [40u64, 75, 120].into_iter().enumerate() {
        let mut child = Command::new(std::env::current_exe().unwrap())
            .args(["--ignored", "--exact", "crash_child_writer", "--nocapture", "--test-threads=1"])
            .env(CHILD_ENV, &path)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut reader = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        let mut this_round = 0;
        while this_round < kill_after {
            line.clear();
            assert!(reader.read_line(&mut line).unwrap() > 0, "child ended early (round {round})");
            if let Some(n) = line.trim().strip_prefix("ACK ") {
                acked.push(n.parse::<u64>().unwrap());
                this_round += 1;
            }
        }
        child.kill().unwrap(); // SIGKILL: no destructor, no flush
                               // Acks printed between our last read and the kill count too.
        for rest in reader.lines() {
            if let Some(n) = rest.unwrap().trim().strip_prefix("ACK ") {
                acked.push(n.parse().unwrap());
            }
        }
        child.wait().unwrap();

        let j = Journal::open(&path, FsyncPolicy::Always).unwrap();
        torn_seen += usize::from(j.recovered().is_some());
        let last = *acked.last().unwrap();
        assert!(j.len() >= last, "round {round}: acknowledged n={last} but the journal has {} entries", j.len());
        drop(j);
        let report = verify_file(&path, None).unwrap();
        assert_eq!(report.problem, None, "round {round}");
    }
    // Every acknowledged n is present, in order, after repairs and restarts.
    assert!(acked.windows(2).all(|w| w[0] < w[1]), "acknowledged n not increasing: {acked:?}");
    let text = lines(&path);
    for n in &acked {
        let v: serde_json::Value = serde_json::from_str(&text[*n as usize - 1]).unwrap();
        assert_eq!(v["n"], *n);
    }
    eprintln!("crash_recovery: {} acknowledged appends over 3 kills, {torn_seen} torn tail(s) repaired", acked.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn verify_command_reports_intact_and_altered_journals() {
    let dir = scratch("cli");
    let path = write_journal(&dir, 5);
    let bin = env!("CARGO_BIN_EXE_tablecam");
    let out = Command::new(bin).args(["journal", "verify"]).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    let head = verify_file(&path, None).unwrap().last_hash;
    assert!(stdout.contains(&format!("ok: 5 entries, last hash {head}")), "{stdout}");

    let mut text = lines(&path);
    text[1] = text[1].replace("\"card\":\"Ah\"", "\"card\":\"Kh\"");
    std::fs::write(&path, text.join("\n") + "\n").unwrap();
    let out = Command::new(bin).args(["journal", "verify"]).arg(&path).output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("line 2: hash mismatch"), "{stdout}");
}
