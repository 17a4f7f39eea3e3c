//! Recording what the pipeline decided, so that it survives crashes and stands up in a dispute.
//!
//! [`Journal`]: a per-table, append-only JSON-lines file in which every event is chained to the
//! previous one by SHA-256 (`docs/journal.md`). The pipeline journals an event *before* it
//! publishes it, so an event a subscriber saw is always on disk (with [`FsyncPolicy::Always`]).
//! `tablecam journal verify FILE` checks a journal line by line ([`cli`]).
pub mod cli;
mod journal;
pub mod recording;

pub use journal::{
    entry_hash, verify_file, BadHash, EntryHash, FsyncPolicy, Journal, JournalError, Problem, ProblemKind, Receipt,
    TornTail, VerifyReport, GENESIS,
};
