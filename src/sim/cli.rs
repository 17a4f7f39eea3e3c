//! Arguments of `tablecam simulate`.
use std::path::PathBuf;

use super::script::Scenario;
use super::session::{simulate, SessionSpec, SimError};
use crate::rules::RulesetId;

/// `tablecam simulate`: render synthetic table sessions with ground truth.
#[derive(Debug, Clone, clap::Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct SimulateArgs {
    /// What else to generate.
    #[command(subcommand)]
    pub command: Option<SimulateCommand>,
    /// Ruleset id (fortune3cp-2025, fortune3cp-2008, stud-2004, qpoker-2004, sangong-1996).
    #[arg(long, default_value = "fortune3cp-2025")]
    pub ruleset: String,
    /// Rounds to play.
    #[arg(long, default_value_t = 2)]
    pub rounds: u32,
    /// Seed: the same seed and version give byte-identical output.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Play every round with this irregular scenario (see `--list-scenarios`).
    #[arg(long)]
    pub scenario: Option<String>,
    /// List the scenarios and the rulesets they apply to, then exit.
    #[arg(long)]
    pub list_scenarios: bool,
    /// Frame size: 720p or 1080p.
    #[arg(long, default_value = "720p")]
    pub size: String,
    /// Deck design (default: chosen by the seed).
    #[arg(long)]
    pub design: Option<String>,
    /// Lighting/camera conditions preset: normal, bright, dim, glare, noisy, compressed.
    #[arg(long)]
    pub conditions: Option<String>,
    /// Output folder.
    #[arg(long, default_value = "datasets/generated/session")]
    pub out: PathBuf,
    /// Video codec of video.avi: `mjpg` (every frame a JPEG, large), `mp4v` (MPEG-4 part 2, ~4×
    /// smaller) or `h264` (smallest, where OpenCV's FFmpeg has an H.264 encoder): for sessions
    /// committed to the repository such as the demo's.
    #[arg(long, default_value = "mjpg")]
    pub codec: String,
}

/// Subcommands of `tablecam simulate`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum SimulateCommand {
    /// A labelled crop dataset: 52 faces + back, split by deck art family.
    Crops(super::crops::CropsArgs),
    /// A detection dataset: table images with every card's quad, identity and index boxes.
    Detections(super::detections::DetectionsArgs),
    /// A PNG contact sheet: every ruleset under several camera conditions.
    ContactSheet {
        /// Output PNG.
        #[arg(long, default_value = "docs/images/sim_contact_sheet.jpg")]
        out: PathBuf,
        /// Seed.
        #[arg(long, default_value_t = 7)]
        seed: u64,
        /// Width of each tile in pixels.
        #[arg(long, default_value_t = 480)]
        tile_width: u32,
    },
}

/// Runs `tablecam simulate`.
pub fn run_cli(args: &SimulateArgs) -> Result<(), SimError> {
    match &args.command {
        Some(SimulateCommand::Crops(c)) => return super::crops::run_cli(c),
        Some(SimulateCommand::Detections(d)) => return super::detections::run_cli(d),
        Some(SimulateCommand::ContactSheet { out, seed, tile_width }) => {
            let sheet = super::contact::contact_sheet(&["normal", "dim", "glare", "compressed"], *seed, *tile_width)?;
            sheet.save(out).map_err(|e| SimError::Bad(format!("{}: {e}", out.display())))?;
            println!("{}: {}×{}", out.display(), sheet.width(), sheet.height());
            return Ok(());
        }
        None => {}
    }
    if args.list_scenarios {
        for sc in Scenario::ALL {
            let applies: Vec<&str> = RulesetId::ALL
                .iter()
                .filter(|id| sc.applies_to(&crate::rules::Ruleset::new(**id)))
                .map(|id| id.as_str())
                .collect();
            println!("{:<26} {}", sc.name(), applies.join(", "));
        }
        return Ok(());
    }
    let ruleset: RulesetId = args.ruleset.parse()?;
    let scenario = match &args.scenario {
        Some(name) => Some(Scenario::parse(name).ok_or_else(|| {
            let names: Vec<String> = Scenario::ALL.iter().map(|s| s.name()).collect();
            SimError::Bad(format!("unknown scenario {name:?}; known: {}", names.join(", ")))
        })?),
        None => None,
    };
    let (width, height) = match args.size.as_str() {
        "720p" => (1280, 720),
        "1080p" => (1920, 1080),
        other => return Err(SimError::Bad(format!("unknown size {other:?}: use 720p or 1080p"))),
    };
    if !matches!(args.codec.as_str(), "mjpg" | "mp4v" | "h264") {
        return Err(SimError::Bad(format!("unknown codec {:?}: use mjpg, mp4v or h264", args.codec)));
    }
    let spec = SessionSpec {
        ruleset,
        rounds: args.rounds,
        seed: args.seed,
        scenario,
        width,
        height,
        design: args.design.clone(),
        conditions: args.conditions.clone(),
        out: args.out.clone(),
    };
    let started = std::time::Instant::now();
    let summary = simulate(&spec, |frames, rounds| {
        eprint!(
            "\rsimulate: {rounds}/{} rounds, {frames} frames, {:.1} s",
            spec.rounds,
            started.elapsed().as_secs_f64()
        );
    })?;
    eprintln!();
    if args.codec != "mjpg" {
        super::session::transcode(&spec.out.join("video.avi"), &args.codec)?;
    }
    println!(
        "{}: {} rounds, {} frames at {}×{} ({} fps), design {} ({}), table {}, conditions {}, camera tilt {:.1}°",
        spec.out.display(),
        summary.rounds,
        summary.frames,
        summary.width,
        summary.height,
        summary.fps,
        summary.design,
        summary.family,
        summary.table_style,
        summary.conditions,
        summary.camera.tilt_deg()
    );
    // The flags each round must raise, as recorded in its ground truth.
    let rounds_path = spec.out.join("rounds.json");
    let text =
        std::fs::read_to_string(&rounds_path).map_err(|source| SimError::Io { path: rounds_path.clone(), source })?;
    let rounds: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| SimError::Bad(format!("{}: {e}", rounds_path.display())))?;
    for r in rounds.as_array().into_iter().flatten() {
        for f in r["flags"].as_array().into_iter().flatten() {
            println!(
                "  round {}: expected flag {} ({}) — {}, visible from frame {}",
                r["index"],
                f["kind"].as_str().unwrap_or("?"),
                f["consequence"]["kind"].as_str().unwrap_or("?"),
                f["citation"].as_str().unwrap_or("?"),
                f["visible_from_frame"]
            );
        }
    }
    Ok(())
}
