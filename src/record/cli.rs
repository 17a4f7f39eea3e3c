//! `tablecam journal …`: checking journal files from the command line.
use std::path::PathBuf;

use clap::{Args, Subcommand};

use super::journal::{verify_file, EntryHash, JournalError};

/// `tablecam journal` arguments.
#[derive(Debug, Args)]
pub struct JournalArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: JournalCommand,
}

/// `tablecam journal` subcommands.
#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Check every line of a journal (layout, n sequence, hash chain); exit 1 naming the first bad line.
    Verify(VerifyArgs),
}

/// `tablecam journal verify` arguments.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The journal file.
    pub file: PathBuf,
    /// The hash the last entry must have (a receipt kept elsewhere); detects lines cut from the end.
    #[arg(long, value_name = "HASH")]
    pub expect_last: Option<EntryHash>,
}

/// Runs `tablecam journal …`; `Ok(false)` when the journal is not intact (the reason is printed).
pub fn run_cli(args: &JournalArgs) -> Result<bool, JournalError> {
    match &args.command {
        JournalCommand::Verify(v) => {
            let report = verify_file(&v.file, v.expect_last)?;
            let file = v.file.display();
            match report.problem {
                None => {
                    println!("{file}: ok: {} entries, last hash {}", report.entries, report.last_hash);
                    Ok(true)
                }
                Some(problem) => {
                    println!("{file}: NOT intact: {problem}");
                    println!(
                        "{file}: {} entries valid before it, their last hash {}",
                        report.entries, report.last_hash
                    );
                    Ok(false)
                }
            }
        }
    }
}
