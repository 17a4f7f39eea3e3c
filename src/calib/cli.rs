//! `tablecam calibrate`: validate, check, build and example calibrations.
use std::path::{Path, PathBuf};

use opencv::core::{Mat, Vector};
use opencv::imgcodecs;
use opencv::prelude::*;

use super::build::{self, BuildSpec, DEFAULT_MAX_ERROR_PX};
use super::overlay;
use super::{layout, CalibError, Calibration};
use crate::rules::RulesetId;

/// `tablecam calibrate`.
#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateArgs {
    /// What to do.
    #[command(subcommand)]
    pub command: CalibrateCommand,
}

/// Subcommands of `tablecam calibrate`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum CalibrateCommand {
    /// Check a calibration file on its own (exit 0 when valid).
    Validate {
        /// The calibration file.
        #[arg(long)]
        calibration: PathBuf,
    },
    /// Draw the zones over a frame (PNG) and report the reprojection error of marked points.
    Check {
        /// The calibration file.
        #[arg(long)]
        calibration: PathBuf,
        /// A frame of this camera (PNG/JPEG).
        #[arg(long)]
        frame: PathBuf,
        /// Output picture.
        #[arg(long, default_value = "calibration-check.png")]
        out: PathBuf,
        /// Points file: report how far the calibration puts them from where they are marked.
        #[arg(long)]
        points: Option<PathBuf>,
        /// Scale the picture to this width in pixels.
        #[arg(long)]
        width: Option<i32>,
    },
    /// Compute a calibration from a frame and four or more marked table points.
    Build(BuildArgs),
    /// Write the simulator's standard calibration of a ruleset's table.
    Example {
        /// Ruleset id.
        #[arg(long)]
        ruleset: String,
        /// Output calibration file.
        #[arg(long)]
        out: PathBuf,
        /// Also render a frame of that table (chips on every bet spot) to this PNG.
        #[arg(long)]
        frame_out: Option<PathBuf>,
        /// Image width.
        #[arg(long, default_value_t = 1920)]
        width: u32,
        /// Image height.
        #[arg(long, default_value_t = 1080)]
        height: u32,
    },
}

/// `tablecam calibrate build`.
#[derive(Debug, Clone, clap::Args)]
pub struct BuildArgs {
    /// Ruleset played at the table (its standard zones are used).
    #[arg(long)]
    pub ruleset: String,
    /// Table id.
    #[arg(long)]
    pub table_id: String,
    /// Camera id (default: <table-id>-cam1).
    #[arg(long)]
    pub camera_id: Option<String>,
    /// A frame of the camera (PNG/JPEG): its size is the calibration's; markers are found in it.
    #[arg(long)]
    pub frame: PathBuf,
    /// Points file (JSON; see calibration/README.md).
    #[arg(long)]
    pub points: PathBuf,
    /// The points file names ArUco markers (DICT_4X4_50) to find in the frame.
    #[arg(long)]
    pub aruco: bool,
    /// Reuse the lens of an existing calibration of this camera (else the image is taken as undistorted).
    #[arg(long)]
    pub lens_from: Option<PathBuf>,
    /// Card size in millimetres, width,height.
    #[arg(long, default_value = "63.5,88.9")]
    pub card_size_mm: String,
    /// Refuse when a point reprojects further than this, px.
    #[arg(long, default_value_t = DEFAULT_MAX_ERROR_PX)]
    pub max_error_px: f64,
    /// Output calibration file.
    #[arg(long)]
    pub out: PathBuf,
}

fn read_frame(path: &Path) -> anyhow::Result<Mat> {
    let name = path.to_str().ok_or_else(|| anyhow::anyhow!("{}: not UTF-8", path.display()))?;
    let m = imgcodecs::imread(name, imgcodecs::IMREAD_COLOR)?;
    if m.empty() {
        anyhow::bail!("{}: cannot read the image (PNG or JPEG expected)", path.display());
    }
    Ok(m)
}

fn write_png(path: &Path, m: &Mat) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)?;
    }
    let name = path.to_str().ok_or_else(|| anyhow::anyhow!("{}: not UTF-8", path.display()))?;
    let params = if name.ends_with(".jpg") || name.ends_with(".jpeg") {
        Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, 88])
    } else {
        Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_PNG_COMPRESSION, 9])
    };
    if !imgcodecs::imwrite(name, m, &params)? {
        anyhow::bail!("{}: cannot write the picture", path.display());
    }
    Ok(())
}

fn print_reprojection(r: &build::Reprojection) {
    for p in &r.points {
        println!(
            "  {:<24} marked ({:8.2}, {:8.2})  projected ({:8.2}, {:8.2})  error {:6.2} px",
            p.name, p.image_px[0], p.image_px[1], p.projected_px[0], p.projected_px[1], p.error_px
        );
    }
    println!("reprojection error: RMS {:.2} px, max {:.2} px over {} points", r.rms_px, r.max_px, r.points.len());
}

/// Runs `tablecam calibrate`; `Ok(false)` means "invalid" (exit status 1).
pub fn run_cli(args: &CalibrateArgs) -> anyhow::Result<bool> {
    match &args.command {
        CalibrateCommand::Validate { calibration } => match Calibration::load(calibration) {
            Ok(g) => {
                let c = &g.calibration;
                println!(
                    "{}: valid — table {} camera {}, {}, {}×{}, {} zones{}",
                    calibration.display(),
                    c.table_id,
                    c.camera_id,
                    c.ruleset,
                    c.image_width,
                    c.image_height,
                    c.zones.len(),
                    if c.lens.is_some() { ", lens known" } else { "" }
                );
                if let Some(w) = build::scale_warning(&g) {
                    println!("warning: {w}");
                }
                Ok(true)
            }
            Err(e) => {
                eprintln!("tablecam: invalid calibration: {e}");
                Ok(false)
            }
        },
        CalibrateCommand::Check { calibration, frame, out, points, width } => {
            let g = Calibration::load(calibration)?;
            let img = read_frame(frame)?;
            overlay::check_frame_size(&g, &img)?;
            let corr = match points {
                Some(p) => build::correspondences(&build::read_points(p)?, Some(&img))?,
                None => Vec::new(),
            };
            let pic = overlay::draw_zones(&g, &img, &corr, *width)?;
            write_png(out, &pic)?;
            println!("{}: {} zones drawn over {}", out.display(), g.calibration.zones.len(), frame.display());
            if !corr.is_empty() {
                print_reprojection(&build::reprojection(&g, &corr));
            }
            if let Some(w) = build::scale_warning(&g) {
                println!("warning: {w}");
            }
            Ok(true)
        }
        CalibrateCommand::Build(a) => {
            let ruleset: RulesetId = a.ruleset.parse()?;
            let img = read_frame(&a.frame)?;
            let points = build::read_points(&a.points)?;
            if !a.aruco && points.iter().any(|p| p.aruco_id.is_some()) {
                anyhow::bail!("{}: names ArUco markers; add --aruco to find them in the frame", a.points.display());
            }
            let corr = build::correspondences(&points, Some(&img))?;
            let lens = match &a.lens_from {
                Some(p) => Calibration::load(p)?.calibration.lens,
                None => None,
            };
            let card: Vec<f64> =
                a.card_size_mm
                    .split(',')
                    .map(|s| s.trim().parse::<f64>())
                    .collect::<Result<_, _>>()
                    .map_err(|e| anyhow::anyhow!("--card-size-mm {:?}: {e} (e.g. 63.5,88.9)", a.card_size_mm))?;
            let [cw, ch] = card[..] else { anyhow::bail!("--card-size-mm needs width,height (e.g. 63.5,88.9)") };
            let spec = BuildSpec {
                ruleset,
                table_id: a.table_id.clone(),
                camera_id: a.camera_id.clone().unwrap_or_else(|| format!("{}-cam1", a.table_id)),
                image_width: img.cols() as u32,
                image_height: img.rows() as u32,
                lens,
                card_size_mm: [cw, ch],
                max_error_px: a.max_error_px,
            };
            let built = build::build(&spec, &corr)?;
            print_reprojection(&built.reprojection);
            if let Some(w) = &built.warning {
                println!("warning: {w}");
            }
            std::fs::write(&a.out, built.geometry.calibration.to_json())
                .map_err(|source| CalibError::Io { path: a.out.clone(), source })?;
            println!("{}: written ({} zones of {ruleset})", a.out.display(), built.geometry.calibration.zones.len());
            Ok(true)
        }
        CalibrateCommand::Example { ruleset, out, frame_out, width, height } => {
            let id: RulesetId = ruleset.parse()?;
            let cal = example_calibration(id, *width, *height);
            let g = cal.clone().validate(out)?;
            if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(out, cal.to_json() + "\n").map_err(|source| CalibError::Io { path: out.clone(), source })?;
            println!("{}: the simulator's standard {id} table ({} zones)", out.display(), cal.zones.len());
            if let Some(f) = frame_out {
                let m = render_example_frame(&g)?;
                write_png(f, &m)?;
                println!("{}: a simulated frame of that table", f.display());
            }
            Ok(true)
        }
    }
}

/// Radial lens coefficients of the example calibrations (a mild barrel lens).
pub const EXAMPLE_LENS_K: (f64, f64) = (-0.08, 0.01);

/// The example calibration of a ruleset's standard table: the simulator's
/// default camera pose over [`layout::standard_zones`].
pub fn example_calibration(id: RulesetId, width: u32, height: u32) -> Calibration {
    let mut c =
        layout::simulated_calibration(id, "EXAMPLE", width, height, &layout::default_pose(), Some(EXAMPLE_LENS_K));
    c.camera_id = "EXAMPLE-cam1".into();
    c
}

/// A simulated frame of a calibrated table (green felt, normal light) with a
/// stack of chips on every bet spot.
fn render_example_frame(g: &super::TableGeometry) -> anyhow::Result<Mat> {
    use crate::sim::render::{ChipStack, Conditions, Renderer, Scene, TableStyle};
    let style = TableStyle::preset("green").ok_or_else(|| anyhow::anyhow!("no green table style"))?;
    let renderer = Renderer::new(g, &style, 7)?;
    let chips = g
        .calibration
        .zones
        .iter()
        .enumerate()
        .filter(|(_, z)| matches!(z.kind, super::ZoneKind::BetSpot { .. }))
        .map(|(i, z)| ChipStack { center_mm: z.polygon_mm.centroid(), chips: 2 + (i % 5) as u8, colour_seed: i as u32 })
        .collect();
    let scene = Scene { chips, ..Default::default() };
    let frame = renderer.render(&scene, &Conditions::default(), 7)?;
    Ok(crate::sim::session::to_bgr_mat(&frame.image)?)
}
