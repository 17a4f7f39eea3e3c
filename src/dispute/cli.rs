//! `tablecam dispute --session SESSION --round ID --out DIR`.
use std::path::PathBuf;

use clap::Args;

use super::{build, DisputeError, DisputeOptions, EventsFrom, EvidencePack};

/// `tablecam dispute` arguments.
#[derive(Debug, Clone, Args)]
pub struct DisputeArgs {
    /// The session: a recording folder (with its journal) or a simulator session folder.
    #[arg(long)]
    pub session: PathBuf,
    /// The round id, as the events name it (e.g. T1-r000001).
    #[arg(long)]
    pub round: String,
    /// Folder for the pack: index.html and frames/.
    #[arg(long)]
    pub out: PathBuf,
    /// The journal to take the events from (default: the one the recording names).
    #[arg(long)]
    pub journal: Option<PathBuf>,
    /// Locator model for the key frames (default: the recording's, else models/locator.onnx).
    #[arg(long)]
    pub locator: Option<PathBuf>,
    /// Classifier model for the key frames (default: the recording's, else models/classifier.onnx).
    #[arg(long)]
    pub classifier: Option<PathBuf>,
}

/// Runs `tablecam dispute` and prints what it wrote.
pub fn run_cli(args: &DisputeArgs) -> Result<EvidencePack, DisputeError> {
    let options = DisputeOptions {
        journal: args.journal.clone(),
        locator: args.locator.clone(),
        classifier: args.classifier.clone(),
    };
    let pack = build(&args.session, &args.round, &args.out, &options)?;
    let from = match &pack.events_from {
        EventsFrom::Journal { path, report } => {
            format!("journal {} (intact, {} entries, head {})", path.display(), report.entries, report.last_hash)
        }
        EventsFrom::Replay => "a replay (the session has no journal)".into(),
    };
    println!(
        "{}: round {}: {} events, {} flags, {} key frames; events from {from}",
        pack.index.display(),
        pack.round_id,
        pack.events,
        pack.flags,
        pack.key_frames
    );
    Ok(pack)
}
