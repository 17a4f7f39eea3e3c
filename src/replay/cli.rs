//! `tablecam replay SESSION`: the pipeline over a recording or a simulator session.
use std::path::PathBuf;

use clap::Args;

use super::{run, LinesSink, ReplayError, ReplayOptions, Session, Speed};
use crate::pipeline::{EventSink, PipelineReport};

/// `tablecam replay` arguments.
#[derive(Debug, Clone, Args)]
pub struct ReplayArgs {
    /// A recording folder (recording.json, index.jsonl, seg-*.avi) or a simulator session folder
    /// (video.avi, calibration.json).
    pub session: PathBuf,
    /// `realtime`, `max` (as fast as possible), or a factor of real time such as 2 or 0.5.
    #[arg(long, default_value = "max")]
    pub speed: String,
    /// Write the events to DIR/<table>.jsonl instead of printing them on stdout.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Leave out the `health` events (wall-clock latencies), so that outputs compare byte for byte.
    #[arg(long)]
    pub deterministic: bool,
    /// Record the frames into this new folder and journal the events in DIR/journal/ (a run over a
    /// simulator session then acts as a live run that can be replayed and disputed).
    #[arg(long, value_name = "DIR")]
    pub record: Option<PathBuf>,
    /// Locator model (default: the one the recording names, else models/locator.onnx).
    #[arg(long)]
    pub locator: Option<PathBuf>,
    /// Classifier model (default: the one the recording names, else models/classifier.onnx).
    #[arg(long)]
    pub classifier: Option<PathBuf>,
    /// Recognizer worker threads.
    #[arg(long, default_value_t = 1)]
    pub workers: usize,
    /// No progress bar on stderr.
    #[arg(long)]
    pub quiet: bool,
    /// Ignore the backend messages the live run's journal holds: vision alone (events then differ
    /// from the live run's wherever a hint mattered).
    #[arg(long)]
    pub no_hints: bool,
}

/// Runs `tablecam replay`.
pub fn run_cli(args: &ReplayArgs) -> Result<PipelineReport, ReplayError> {
    let session = Session::open(&args.session)?;
    let speed: Speed = args.speed.parse()?;
    let mut options = ReplayOptions::new(session.models(args.locator.as_deref(), args.classifier.as_deref()));
    options.speed = speed;
    options.workers = args.workers;
    options.progress = !args.quiet;
    options.record_to = args.record.clone();
    options.hints = !args.no_hints;
    let out: Box<dyn std::io::Write + Send> = match &args.out {
        Some(dir) => {
            std::fs::create_dir_all(dir).map_err(|source| ReplayError::Io { path: dir.clone(), source })?;
            let path = dir.join(format!("{}.jsonl", session.table_id));
            let file = std::fs::File::create(&path).map_err(|source| ReplayError::Io { path: path.clone(), source })?;
            Box::new(std::io::BufWriter::new(file))
        }
        None => Box::new(std::io::stdout()),
    };
    let sink: Box<dyn EventSink> = Box::new(LinesSink::new(out, args.deterministic));
    let report = run(&session, &options, sink)?;
    for t in &report.tables {
        let line: Vec<String> = t
            .stages
            .iter()
            .map(|s| format!("{} {}/{}/{}/{}", s.stage.as_str(), s.received, s.sent, s.dropped, s.errors))
            .collect();
        eprintln!("tablecam replay: table {} (received/sent/dropped/errors): {}", t.table_id, line.join(", "));
    }
    Ok(report)
}
