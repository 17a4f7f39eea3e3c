//! `tablecam simulate`: renders whole sessions of rounds to a video file with
//! its calibration and per-frame and per-round ground truth.
//!
//! Output folder:
//! * `video.avi` — MJPG, readable by OpenCV's VideoCapture;
//! * `calibration.json` — the simulated camera's calibration (as for a real table);
//! * `frames.jsonl` — one line per frame: every card's image quadrilateral,
//!   identity, face up/down, position and visible fraction;
//! * `rounds.json` — per round: hands, bets, decisions, the rules engine's
//!   settlement and the expected flags with their articles;
//! * `session.json` — what was simulated (seed, design, table style, conditions);
//! * `empty_table.jpg` — the empty table as the camera sees it before the table
//!   opens (bet presence's reference, `presence_reference` in a run config).
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use opencv::core::{Mat, Size, Vector};
use opencv::prelude::*;
use opencv::videoio;
use serde::Serialize;

use super::faces::{self, Face, LoadedDeck};
use super::render::{ChipStack, Conditions, Drift, Occluder, OccluderKind, Renderer, Scene, SceneCard, TableStyle};
use super::script::{plan_round, ExpectedFlag, RoundPlan, Scenario, FPS};
use super::timeline::{FrameState, Timeline};
use crate::calib::{layout, CameraPose, Point, TableGeometry};
use crate::rng::Rng;
use crate::rules::{Card, Position, Ruleset, RulesetId};

/// Version of the simulator's output; part of the determinism promise
/// (same seed and version → same bytes).
pub const SIM_VERSION: u32 = 1;

/// Errors of the simulator.
#[derive(Debug, thiserror::Error)]
pub enum SimError {
    /// Output could not be written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// OpenCV failed (video writing).
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done.
        context: String,
        /// OpenCV's error.
        source: opencv::Error,
    },
    /// Rendering failed.
    #[error(transparent)]
    Render(#[from] super::render::RenderError),
    /// Card artwork failed.
    #[error(transparent)]
    Faces(#[from] faces::FacesError),
    /// The rules engine refused the round.
    #[error(transparent)]
    Rules(#[from] crate::rules::RulesError),
    /// Calibration failed to validate.
    #[error(transparent)]
    Calib(#[from] crate::calib::CalibError),
    /// A bad request (unknown design, scenario not applicable…).
    #[error("{0}")]
    Bad(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io { path: path.to_path_buf(), source }
}

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> SimError + '_ {
    move |source| SimError::OpenCv { context: context.to_string(), source }
}

/// What to simulate.
#[derive(Debug, Clone)]
pub struct SessionSpec {
    /// The ruleset.
    pub ruleset: RulesetId,
    /// Number of rounds.
    pub rounds: u32,
    /// Seed of everything random.
    pub seed: u64,
    /// Every round plays this scenario (else clean rounds).
    pub scenario: Option<Scenario>,
    /// Image size.
    pub width: u32,
    /// Image size.
    pub height: u32,
    /// Deck design name (else chosen by the seed).
    pub design: Option<String>,
    /// Conditions preset (else chosen by the seed).
    pub conditions: Option<String>,
    /// Output folder.
    pub out: PathBuf,
}

/// What was simulated.
#[derive(Debug, Clone, Serialize)]
pub struct SessionSummary {
    /// Simulator version.
    pub sim_version: u32,
    /// The ruleset.
    pub ruleset: RulesetId,
    /// The seed.
    pub seed: u64,
    /// Rounds.
    pub rounds: u32,
    /// Frames written.
    pub frames: u64,
    /// Frames per second.
    pub fps: u32,
    /// Image size.
    pub width: u32,
    /// Image size.
    pub height: u32,
    /// Deck design and its art family.
    pub design: String,
    /// The design's art family.
    pub family: String,
    /// Table style.
    pub table_style: String,
    /// Conditions preset.
    pub conditions: String,
    /// Camera pose.
    pub camera: CameraPose,
}

/// One card in one frame of ground truth.
#[derive(Debug, Clone, Serialize)]
pub struct CardTruth {
    /// Physical card id (unique in the session).
    pub id: u32,
    /// Identity (`AS`, `10H`).
    pub card: Card,
    /// Face up.
    pub face_up: bool,
    /// Where it belongs (`seat 3`, `dealer`, …) or `null` while moving.
    pub zone: Option<String>,
    /// Image corners, pixels: the card's top-left, top-right, bottom-right, bottom-left.
    pub quad: [[f64; 2]; 4],
    /// Visible fraction 0..1.
    pub visibility: f64,
}

/// One frame of ground truth.
#[derive(Debug, Clone, Serialize)]
pub struct FrameTruth {
    /// Frame number from 0.
    pub frame: u64,
    /// Timestamp, ms (container time).
    pub time_ms: f64,
    /// Round index from 0.
    pub round: u32,
    /// Action index within the round.
    pub action: usize,
    /// Cards drawn.
    pub cards: Vec<CardTruth>,
    /// Bet spots holding chips.
    pub chips: Vec<ChipTruth>,
    /// Hands over the table (palm centre in image pixels), which may hide cards and spots.
    pub hands_px: Vec<[f64; 2]>,
}

/// A bet spot holding chips in a frame.
#[derive(Debug, Clone, Serialize)]
pub struct ChipTruth {
    /// The seat.
    pub seat: u8,
    /// The bet.
    pub bet: crate::rules::BetKind,
}

/// The expected flag of a round with the frame from which a camera can see it.
#[derive(Debug, Clone, Serialize)]
pub struct FlagTruth {
    /// The flag.
    #[serde(flatten)]
    pub flag: ExpectedFlag,
    /// The first frame showing it (the first frame of the action that shows it: a dealt card
    /// is still in flight).
    pub visible_from_frame: u64,
    /// The last frame of that action (a dealt card has landed, a removed card has left).
    pub shown_by_frame: u64,
}

/// Ground truth of one round.
#[derive(Debug, Clone, Serialize)]
pub struct RoundTruth {
    /// Round index from 0 (`round` is the round's hands and bets, from the plan).
    pub index: u32,
    /// First frame.
    pub first_frame: u64,
    /// Last frame.
    pub last_frame: u64,
    /// The plan (hands, bets, settlement, actions).
    #[serde(flatten)]
    pub plan: RoundPlan,
    /// Flags with frames.
    pub flags: Vec<FlagTruth>,
}

/// A random overhead camera: behind the dealer, tilted 0–35° from vertical.
pub fn random_pose(rng: &mut Rng) -> CameraPose {
    let tilt = rng.unit_f64() * 35.0;
    let z = 1750.0 + rng.unit_f64() * 400.0;
    let target = [(rng.unit_f64() - 0.5) * 80.0, 500.0 + rng.unit_f64() * 60.0];
    let back = z * tilt.to_radians().tan();
    CameraPose {
        position_mm: [target[0], target[1] - back, z],
        target_mm: target,
        hfov_deg: 60.0 + rng.unit_f64() * 8.0 - tilt * 0.15,
        roll_deg: (rng.unit_f64() - 0.5) * 4.0,
    }
}

/// A session's camera: a random pose and lens drawn from `rng`, and the
/// calibration of the ruleset's standard table seen through it.
pub fn simulated_camera(
    ruleset: RulesetId,
    seed: u64,
    width: u32,
    height: u32,
    rng: &mut Rng,
) -> (CameraPose, crate::calib::Calibration) {
    let pose = random_pose(rng);
    let k1 = -0.02 - rng.unit_f64() * 0.12;
    let cal = layout::simulated_calibration(ruleset, &format!("SIM-{seed}"), width, height, &pose, Some((k1, 0.01)));
    (pose, cal)
}

/// The faces of a deck rendered once for a session.
pub struct FaceSet {
    images: Vec<Arc<image::RgbaImage>>,
    /// Card size on the table, mm.
    pub size_mm: [f64; 2],
}

impl FaceSet {
    /// Renders the 53 faces of `deck` at `height_px`.
    pub fn new(deck: &LoadedDeck, aspect: f64, height_px: u32) -> Result<FaceSet, SimError> {
        let images = Face::all().map(|f| deck.render(f, height_px).map(Arc::new)).collect::<Result<Vec<_>, _>>()?;
        Ok(FaceSet { images, size_mm: [88.9 * aspect, 88.9] })
    }

    /// The image of a face.
    pub fn image(&self, face: Face) -> Arc<image::RgbaImage> {
        self.images[face.index()].clone()
    }
}

/// Chips per bet spot of a planned round, keyed by (seat, bet name): one chip
/// per 100 staked, 1 to 12, so that bigger bets stand taller.
pub fn chip_heights(plan: &RoundPlan) -> BTreeMap<(u8, String), u8> {
    plan.round
        .hands
        .iter()
        .flat_map(|h| {
            h.wagers
                .iter()
                .map(move |w| ((h.seat.0, w.bet.to_string()), (w.stake.unwrap_or(100) / 100).clamp(1, 12) as u8))
        })
        .collect()
}

/// The renderer's scene for a frame of the timeline.
pub fn scene_of(
    frame: &FrameState,
    faces: &FaceSet,
    timeline: &Timeline<'_>,
    stakes: &BTreeMap<(u8, String), u8>,
) -> Scene {
    let cards = frame
        .cards
        .iter()
        .map(|c| SceneCard {
            id: c.id,
            image: faces.image(if c.face_up { Face::Card(c.card) } else { Face::Back }),
            center_mm: c.center_mm,
            angle_rad: c.angle_rad,
            size_mm: [faces.size_mm[0] * c.width_scale, faces.size_mm[1]],
            height_mm: c.height_mm,
            velocity_mm_per_frame: c.velocity_mm,
        })
        .collect();
    let chips = frame
        .chips
        .iter()
        .filter_map(|(seat, bet)| {
            let center = timeline.bet_spot(*seat, *bet)?;
            let n = stakes.get(&(seat.0, bet.to_string())).copied().unwrap_or(3);
            Some(ChipStack { center_mm: center, chips: n, colour_seed: seat.0 as u32 * 7 + *bet as u32 })
        })
        .collect();
    let occluders = frame
        .hands
        .iter()
        .enumerate()
        .map(|(i, h)| Occluder {
            kind: if h.dealer { OccluderKind::Hand } else { OccluderKind::Arm },
            position_mm: h.position_mm,
            // Fingers point away from where the arm comes from.
            angle_rad: h.angle_rad + std::f64::consts::PI,
            scale: 1.0,
            appearance_seed: if h.dealer { 1 } else { 100 + i as u32 },
        })
        .collect();
    Scene { cards, chips, occluders }
}

fn position_name(p: Position) -> String {
    p.to_string()
}

/// Simulates a session; `progress(frames_done, rounds_done)` is called as it goes.
pub fn simulate(spec: &SessionSpec, mut progress: impl FnMut(u64, u32)) -> Result<SessionSummary, SimError> {
    let rs = Ruleset::new(spec.ruleset);
    if let Some(sc) = spec.scenario {
        if !sc.applies_to(&rs) {
            return Err(SimError::Bad(format!(
                "scenario {} does not apply to {} (see `tablecam simulate --help`)",
                sc.name(),
                rs.id
            )));
        }
    }
    std::fs::create_dir_all(&spec.out).map_err(io(&spec.out))?;
    let mut rng = Rng::seeded(spec.seed);
    let (pose, mut cal) = simulated_camera(rs.id, spec.seed, spec.width, spec.height, &mut rng);

    let catalogue = faces::catalogue();
    let design = match &spec.design {
        Some(name) => catalogue.iter().find(|d| &d.name == name).cloned().ok_or_else(|| {
            let names: Vec<&str> = catalogue.iter().map(|d| d.name.as_str()).collect();
            SimError::Bad(format!("unknown deck design {name:?}; available: {}", names.join(", ")))
        })?,
        None => catalogue[rng.below(catalogue.len() as u32) as usize].clone(),
    };
    cal.card_size_mm = [88.9 * design.aspect, 88.9];
    let cal_path = spec.out.join("calibration.json");
    std::fs::write(&cal_path, cal.to_json()).map_err(io(&cal_path))?;
    let geometry: TableGeometry = cal.validate(&cal_path)?;

    let styles = TableStyle::presets();
    let style = styles[rng.below(styles.len() as u32) as usize].clone();
    let conditions_name = match &spec.conditions {
        Some(c) => c.clone(),
        None => Conditions::PRESETS[rng.below(Conditions::PRESETS.len() as u32) as usize].to_string(),
    };
    let base_conditions = Conditions::preset(&conditions_name).ok_or_else(|| {
        SimError::Bad(format!("unknown conditions {conditions_name:?}; known: {}", Conditions::PRESETS.join(", ")))
    })?;
    let drift = Drift::gentle(spec.seed);

    // Faces at about twice their size in the image, so warping only shrinks them.
    let deck = design.load()?;
    let face_px = (spec.height as f64 * 0.22).clamp(120.0, 360.0) as u32;
    let faceset = FaceSet::new(&deck, design.aspect, face_px)?;
    let renderer = Renderer::new(&geometry, &style, spec.seed)?;
    let timeline = Timeline::new(&geometry, rs.cards_per_hand);

    let video_path = spec.out.join("video.avi");
    let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').map_err(cv("MJPG fourcc"))?;
    let mut writer = videoio::VideoWriter::new(
        video_path.to_str().ok_or_else(|| SimError::Bad(format!("{}: not UTF-8", video_path.display())))?,
        fourcc,
        FPS as f64,
        Size::new(spec.width as i32, spec.height as i32),
        true,
    )
    .map_err(cv("opening the video writer"))?;
    if !writer.is_opened().map_err(cv("video writer"))? {
        return Err(SimError::Bad(format!(
            "{}: OpenCV cannot write MJPG video here (is libopencv-videoio installed?)",
            video_path.display()
        )));
    }
    let frames_path = spec.out.join("frames.jsonl");
    let mut frames_out = BufWriter::new(File::create(&frames_path).map_err(io(&frames_path))?);

    let mut frame_no: u64 = 0;
    let mut rounds = Vec::new();
    let mut next_id = 0u32;
    for r in 0..spec.rounds {
        let scenario = spec.scenario.unwrap_or(Scenario::Clean);
        let plan = plan_round(&rs, scenario, &mut rng, next_id)?;
        next_id += 1000;
        let states = timeline.frames(&plan, &mut rng);
        let stakes = chip_heights(&plan);
        let first_frame = frame_no;
        let mut action_first_frame: Vec<u64> = vec![u64::MAX; plan.actions.len()];
        let mut action_last_frame: Vec<u64> = vec![u64::MAX; plan.actions.len()];
        for state in &states {
            if action_first_frame[state.action] == u64::MAX {
                action_first_frame[state.action] = frame_no;
            }
            action_last_frame[state.action] = frame_no;
            let scene = scene_of(state, &faceset, &timeline, &stakes);
            let conditions = drift.at(&base_conditions, frame_no);
            let rendered = renderer.render(&scene, &conditions, spec.seed ^ frame_no.wrapping_mul(0x9E37_79B9))?;
            write_frame(&mut writer, &rendered.image)?;
            let cards = state
                .cards
                .iter()
                .zip(&scene.cards)
                .filter_map(|(c, _)| {
                    let t = rendered.cards.iter().find(|x| x.id == c.id)?;
                    Some(CardTruth {
                        id: c.id,
                        card: c.card,
                        face_up: c.face_up,
                        zone: c.at.map(position_name),
                        quad: t.quad_px.map(|p: Point| [round3(p.x), round3(p.y)]),
                        visibility: round3(t.visible_fraction),
                    })
                })
                .collect();
            let chips = state.chips.iter().map(|(seat, bet)| ChipTruth { seat: seat.0, bet: *bet }).collect();
            let hands_px = state
                .hands
                .iter()
                .filter_map(|h| geometry.table_to_image(h.position_mm))
                .map(|p| [round3(p.x), round3(p.y)])
                .collect();
            let truth = FrameTruth {
                frame: frame_no,
                time_ms: round3(frame_no as f64 * 1000.0 / FPS as f64),
                round: r,
                action: state.action,
                cards,
                chips,
                hands_px,
            };
            serde_json::to_writer(&mut frames_out, &truth).map_err(|e| SimError::Bad(e.to_string()))?;
            frames_out.write_all(b"\n").map_err(io(&frames_path))?;
            frame_no += 1;
            if frame_no % 30 == 0 {
                progress(frame_no, r);
            }
        }
        let flags = plan
            .expected_flags
            .iter()
            .map(|f| FlagTruth {
                flag: f.clone(),
                visible_from_frame: action_first_frame.get(f.visible_from_action).copied().unwrap_or(first_frame),
                shown_by_frame: action_last_frame.get(f.visible_from_action).copied().unwrap_or(first_frame),
            })
            .collect();
        rounds.push(RoundTruth { index: r, first_frame, last_frame: frame_no.saturating_sub(1), plan, flags });
        progress(frame_no, r + 1);
    }
    writer.release().map_err(cv("closing the video"))?;
    frames_out.flush().map_err(io(&frames_path))?;
    let rounds_path = spec.out.join("rounds.json");
    std::fs::write(&rounds_path, serde_json::to_string_pretty(&rounds).map_err(|e| SimError::Bad(e.to_string()))?)
        .map_err(io(&rounds_path))?;
    let summary = SessionSummary {
        sim_version: SIM_VERSION,
        ruleset: rs.id,
        seed: spec.seed,
        rounds: spec.rounds,
        frames: frame_no,
        fps: FPS,
        width: spec.width,
        height: spec.height,
        design: design.name.clone(),
        family: design.family.clone(),
        table_style: style.name.to_string(),
        conditions: conditions_name,
        camera: pose,
    };
    let summary_path = spec.out.join("session.json");
    std::fs::write(&summary_path, serde_json::to_string_pretty(&summary).map_err(|e| SimError::Bad(e.to_string()))?)
        .map_err(io(&summary_path))?;
    let empty = empty_table_jpeg(&geometry, &style, &base_conditions, spec.seed)?;
    let empty_path = spec.out.join(EMPTY_TABLE_FILE);
    std::fs::write(&empty_path, empty.as_slice()).map_err(io(&empty_path))?;
    Ok(summary)
}

/// A session's empty-table frame (see the module documentation).
pub const EMPTY_TABLE_FILE: &str = "empty_table.jpg";

/// The empty table of a session's camera, felt and lighting, as that camera delivers it (JPEG):
/// what a croupier's camera captures before the table opens. Rendered from the session's seed,
/// not from its rounds.
pub fn empty_table_jpeg(
    geometry: &TableGeometry,
    style: &TableStyle,
    conditions: &Conditions,
    seed: u64,
) -> Result<Vector<u8>, SimError> {
    let renderer = Renderer::new(geometry, style, seed)?;
    let frame = renderer.render(&Scene::default(), &Drift::gentle(seed).at(conditions, 0), seed ^ 0x5eed)?;
    let bgr = to_bgr_mat(&frame.image)?;
    let mut bytes = Vector::<u8>::new();
    let params = Vector::<i32>::from_slice(&[opencv::imgcodecs::IMWRITE_JPEG_QUALITY, 95]);
    opencv::imgcodecs::imencode(".jpg", &bgr, &mut bytes, &params).map_err(cv("encoding the empty table"))?;
    Ok(bytes)
}

/// Rounds to three decimals so that ground truth is compact and stable.
fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// Re-encodes an MJPG `video.avi` in place with `codec`: `mp4v` (MPEG-4 part 2, `FMP4` in the
/// AVI container, about four times smaller) or `h264` (`avc1`, smaller still), for sessions
/// committed to the repository. Frame count, size and rate are kept; the pixels change (lossy),
/// so ground truth stays valid but a recording of it is the re-encoded video.
pub fn transcode(path: &Path, codec: &str) -> Result<(), SimError> {
    let name =
        |p: &Path| p.to_str().map(str::to_string).ok_or_else(|| SimError::Bad(format!("{}: not UTF-8", p.display())));
    let tmp = path.with_extension("mp4v.tmp.avi");
    let mut reader = videoio::VideoCapture::from_file_def(&name(path)?).map_err(cv("opening the MJPG video"))?;
    let fps = reader.get(videoio::CAP_PROP_FPS).map_err(cv("video fps"))?;
    let w = reader.get(videoio::CAP_PROP_FRAME_WIDTH).map_err(cv("video width"))? as i32;
    let h = reader.get(videoio::CAP_PROP_FRAME_HEIGHT).map_err(cv("video height"))? as i32;
    let fourcc = match codec {
        "h264" => videoio::VideoWriter::fourcc('a', 'v', 'c', '1'),
        _ => videoio::VideoWriter::fourcc('F', 'M', 'P', '4'),
    }
    .map_err(cv("fourcc"))?;
    let mut writer = videoio::VideoWriter::new(&name(&tmp)?, fourcc, fps, Size::new(w, h), true)
        .map_err(cv("opening the video writer"))?;
    if !writer.is_opened().map_err(cv("video writer"))? {
        return Err(SimError::Bad(format!(
            "{}: OpenCV cannot write {codec} video here (its FFmpeg lacks the encoder); use --codec mp4v",
            tmp.display()
        )));
    }
    let mut frame = Mat::default();
    while reader.read(&mut frame).map_err(cv("reading the MJPG video"))? {
        writer.write(&frame).map_err(cv("writing the video"))?;
    }
    writer.release().map_err(cv("closing the video"))?;
    std::fs::rename(&tmp, path).map_err(io(path))?;
    Ok(())
}

/// Converts an RGB image to an OpenCV BGR Mat.
pub fn to_bgr_mat(img: &image::RgbImage) -> Result<Mat, SimError> {
    let (w, h) = img.dimensions();
    let mut bgr: Vec<u8> = Vec::with_capacity((w * h * 3) as usize);
    for p in img.pixels() {
        bgr.extend_from_slice(&[p[2], p[1], p[0]]);
    }
    let flat = Mat::from_slice(&bgr).map_err(cv("frame buffer"))?;
    let m = flat.reshape(3, h as i32).map_err(cv("frame reshape"))?;
    m.try_clone().map_err(cv("frame copy"))
}

fn write_frame(writer: &mut videoio::VideoWriter, img: &image::RgbImage) -> Result<(), SimError> {
    let m = to_bgr_mat(img)?;
    writer.write(&m).map_err(cv("writing a frame"))
}

/// Encodes an RGB image as PNG bytes (for contact sheets and samples).
pub fn png_bytes(img: &image::RgbImage) -> Result<Vec<u8>, SimError> {
    let m = to_bgr_mat(img)?;
    let mut buf = Vector::<u8>::new();
    opencv::imgcodecs::imencode(".png", &m, &mut buf, &Vector::new()).map_err(cv("PNG encode"))?;
    Ok(buf.to_vec())
}
