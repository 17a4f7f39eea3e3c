//! `tablecam sources probe`: open inputs, read them, report what came out.
use std::time::{Duration, Instant};

use serde::Serialize;

use super::sim::Pace;
use super::spec::{OpenOptions, SourceSpec, DEFAULT_FOLDER_FPS};
use super::{
    spawn_blocking, spawn_live, Backoff, Feed, FeedOptions, HealthEvent, SourceError, SourceEvent, SourceKind,
};

/// Frames read from a live source when `--frames` is not given (it never ends).
const DEFAULT_LIVE_FRAMES: u64 = 90;
/// Reconnection attempts before the probe gives up on a live source.
const PROBE_RECONNECT_ATTEMPTS: u32 = 3;
/// Health events kept in a report.
const MAX_NOTES: usize = 20;

/// `tablecam sources …`
#[derive(Debug, clap::Args)]
pub struct SourcesArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: SourcesCommand,
}

/// The `sources` actions.
#[derive(Debug, clap::Subcommand)]
pub enum SourcesCommand {
    /// Open each input, read it (to the end, or --frames N) and report frames, fps, size,
    /// gaps, corrupt frames, drops and decoding speed.
    Probe(ProbeArgs),
}

/// `tablecam sources probe`
#[derive(Debug, Clone, clap::Args)]
pub struct ProbeArgs {
    /// Inputs: a video file, a folder of images, an rtsp:// or http:// URL, camera:N, sim:RULESET.
    #[arg(required = true)]
    pub inputs: Vec<String>,
    /// Read at most N frames of each input (default: files and folders to the end, live sources 90).
    #[arg(long)]
    pub frames: Option<u64>,
    /// Frames per second of image folders (sets their timestamps).
    #[arg(long, default_value_t = DEFAULT_FOLDER_FPS)]
    pub fps: f64,
    /// Frames the live ring holds before it drops the oldest.
    #[arg(long, default_value_t = 4)]
    pub ring: usize,
    /// Render sim: inputs as fast as possible instead of at 30 frames/s.
    #[arg(long)]
    pub fast: bool,
    /// One JSON object per input (one per line).
    #[arg(long)]
    pub json: bool,
}

/// What probing one input found.
#[derive(Debug, Clone, Serialize)]
pub struct ProbeReport {
    /// The input as given.
    pub input: String,
    /// The camera id its frames carry.
    pub camera_id: String,
    /// Live or recorded (absent if it did not open).
    pub kind: Option<SourceKind>,
    /// Why the input could not be opened, if it could not.
    pub error: Option<String>,
    /// Frames read.
    pub frames: u64,
    /// Frames per second the source announces.
    pub nominal_fps: Option<f64>,
    /// Frames per second from the frames' timestamps.
    pub timestamp_fps: Option<f64>,
    /// Frame width, pixels.
    pub width: u32,
    /// Frame height, pixels.
    pub height: u32,
    /// Frames the container or folder announces.
    pub frame_count: Option<u64>,
    /// First frame's timestamp, ms.
    pub first_timestamp_ms: Option<f64>,
    /// Last frame's timestamp, ms.
    pub last_timestamp_ms: Option<f64>,
    /// Jumps in the source's position.
    pub gaps: u64,
    /// Frames missing in those jumps.
    pub frames_skipped: u64,
    /// Frames or images that could not be decoded.
    pub corrupt: u64,
    /// Frames the live ring dropped.
    pub dropped: u64,
    /// Disconnections of a live source.
    pub disconnects: u64,
    /// Frames read per second of wall time (decoding speed for files).
    pub read_fps: f64,
    /// Wall time, s.
    pub seconds: f64,
    /// Health events other than counters (corrupt frames with their positions, gaps, reconnections).
    pub notes: Vec<HealthEvent>,
}

impl ProbeReport {
    fn failed(input: &str, camera_id: String, err: &SourceError) -> ProbeReport {
        ProbeReport { error: Some(err.to_string()), ..ProbeReport::empty(input, camera_id) }
    }

    fn empty(input: &str, camera_id: String) -> ProbeReport {
        ProbeReport {
            input: input.to_string(),
            camera_id,
            kind: None,
            error: None,
            frames: 0,
            nominal_fps: None,
            timestamp_fps: None,
            width: 0,
            height: 0,
            frame_count: None,
            first_timestamp_ms: None,
            last_timestamp_ms: None,
            gaps: 0,
            frames_skipped: 0,
            corrupt: 0,
            dropped: 0,
            disconnects: 0,
            read_fps: 0.0,
            seconds: 0.0,
            notes: Vec::new(),
        }
    }
}

/// Opens `input`, reads it through a feed thread (ring for live sources,
/// blocking queue for recorded ones) and reports.
pub fn probe(input: &str, args: &ProbeArgs) -> ProbeReport {
    let spec = match SourceSpec::parse(input) {
        Ok(s) => s,
        Err(e) => return ProbeReport::failed(input, String::new(), &e),
    };
    let camera_id = spec.default_camera_id();
    let options = OpenOptions {
        folder_fps: args.fps,
        sim_pace: if args.fast { Pace::AsFastAsPossible } else { Pace::RealTime },
        ..OpenOptions::default()
    };
    let start = Instant::now();
    let source = match spec.open(&options) {
        Ok(s) => s,
        Err(e) => return ProbeReport::failed(input, camera_id, &e),
    };
    let info = source.info().clone();
    let limit = args.frames.unwrap_or(match info.kind {
        SourceKind::Live => DEFAULT_LIVE_FRAMES,
        SourceKind::Recorded => u64::MAX,
    });
    let feed_options = FeedOptions {
        backoff: Backoff { max_attempts: Some(PROBE_RECONNECT_ATTEMPTS), ..Backoff::default() },
        stats_every_ms: 0,
        ..FeedOptions::default()
    };
    let feed = Feed::new(source, feed_options);
    let spawned = match info.kind {
        SourceKind::Live => spawn_live(feed, args.ring),
        SourceKind::Recorded => spawn_blocking(feed, args.ring.max(8)),
    };
    let live = match spawned {
        Ok(l) => l,
        Err(e) => return ProbeReport::failed(input, camera_id, &e),
    };
    let mut report = ProbeReport::empty(input, info.camera_id.to_string());
    report.kind = Some(info.kind);
    report.nominal_fps = info.nominal_fps;
    report.frame_count = info.frame_count;
    report.width = info.width;
    report.height = info.height;
    let read_start = Instant::now();
    let mut frames = 0u64;
    while frames < limit {
        let Some(event) = live.recv() else { break };
        match event {
            SourceEvent::Frame(f) => {
                frames += 1;
                report.width = f.width();
                report.height = f.height();
                report.first_timestamp_ms.get_or_insert(f.timestamp_ms);
                report.last_timestamp_ms = Some(f.timestamp_ms);
            }
            SourceEvent::Health(HealthEvent::Stats(_) | HealthEvent::Ended { .. }) => {}
            SourceEvent::Health(h) => {
                if let HealthEvent::Failed { reason, .. } = &h {
                    report.error = Some(reason.clone());
                }
                if report.notes.len() < MAX_NOTES {
                    report.notes.push(h);
                }
            }
        }
    }
    let read_seconds = read_start.elapsed().as_secs_f64();
    // Collect what the thread reported after the last frame read.
    while let Ok(event) = live.recv_timeout(Duration::from_millis(1)) {
        if let SourceEvent::Health(h @ (HealthEvent::Corrupt { .. } | HealthEvent::Gap { .. })) = event {
            if report.notes.len() < MAX_NOTES {
                report.notes.push(h);
            }
        }
    }
    let stats = live.stop();
    report.frames = frames;
    report.gaps = stats.gaps;
    report.frames_skipped = stats.frames_skipped;
    report.corrupt = stats.corrupt;
    report.dropped = stats.frames_dropped;
    report.disconnects = stats.disconnects;
    report.read_fps = if read_seconds > 0.0 { frames as f64 / read_seconds } else { 0.0 };
    report.seconds = start.elapsed().as_secs_f64();
    if let (Some(a), Some(b)) = (report.first_timestamp_ms, report.last_timestamp_ms) {
        if frames > 1 && b > a {
            report.timestamp_fps = Some((frames - 1) as f64 * 1000.0 / (b - a));
        }
    }
    report
}

fn print_human(r: &ProbeReport) {
    if r.kind.is_none() {
        println!("{}: ERROR {}", r.input, r.error.as_deref().unwrap_or("unknown"));
        return;
    }
    let kind = match r.kind {
        Some(SourceKind::Live) => "live",
        _ => "recorded",
    };
    let fps = r.nominal_fps.map_or("? fps".to_string(), |f| format!("{f:.2} fps"));
    let count = r.frame_count.map_or(String::new(), |n| format!(", {n} frames announced"));
    println!("{} [{}]: {kind}, {}x{}, {fps}{count}", r.input, r.camera_id, r.width, r.height);
    let ts = match (r.first_timestamp_ms, r.last_timestamp_ms, r.timestamp_fps) {
        (Some(a), Some(b), Some(f)) => format!("timestamps {a:.1}–{b:.1} ms ({f:.2} fps)"),
        (Some(a), Some(b), None) => format!("timestamps {a:.1}–{b:.1} ms"),
        _ => "no timestamps".to_string(),
    };
    println!(
        "  frames {}, {ts}, gaps {} ({} frames), corrupt {}, dropped {}, disconnects {}, read {:.1} frames/s",
        r.frames, r.gaps, r.frames_skipped, r.corrupt, r.dropped, r.disconnects, r.read_fps
    );
    for note in &r.notes {
        match note {
            HealthEvent::Corrupt { position, frames, path, reason, .. } => {
                let at = match frames {
                    0 | 1 => format!("frame {position}"),
                    n => format!("frames {position}–{}", position + n - 1),
                };
                match path {
                    Some(p) => println!("  corrupt: {at} ({p}): {reason}"),
                    None => println!("  corrupt: {at}: {reason}"),
                }
            }
            HealthEvent::Gap { expected, got, .. } => println!("  gap: expected frame {expected}, got {got}"),
            other => println!("  {}", serde_json::to_string(other).unwrap_or_default()),
        }
    }
    if let Some(e) = &r.error {
        println!("  ERROR {e}");
    }
}

/// Runs `tablecam sources …`; returns whether every input could be read.
pub fn run_cli(args: &SourcesArgs) -> Result<bool, SourceError> {
    match &args.command {
        SourcesCommand::Probe(p) => {
            let mut all_ok = true;
            for input in &p.inputs {
                let report = probe(input, p);
                all_ok &= report.error.is_none();
                if p.json {
                    match serde_json::to_string(&report) {
                        Ok(line) => println!("{line}"),
                        Err(e) => eprintln!("{input}: cannot write JSON: {e}"),
                    }
                } else {
                    print_human(&report);
                }
            }
            Ok(all_ok)
        }
    }
}
