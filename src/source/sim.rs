//! [`SimulatedSource`]: the table simulator as a live camera.
use std::collections::{BTreeMap, VecDeque};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Capture, FrameSource, Read, SourceError, SourceInfo, SourceKind};
use crate::rng::Rng;
use crate::rules::{Ruleset, RulesetId};
use crate::sim::faces;
use crate::sim::render::{Conditions, Drift, Renderer, TableStyle};
use crate::sim::script::{plan_round, Scenario, FPS};
use crate::sim::session::{chip_heights, scene_of, simulated_camera, to_bgr_mat, FaceSet, SimError};
use crate::sim::timeline::{FrameState, Timeline};

/// How fast a [`SimulatedSource`] produces frames.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pace {
    /// One frame every 1/30 s of wall time, like a camera (it cannot go
    /// faster than it renders: about 60 frames/s at 720p on one core).
    RealTime,
    /// As fast as frames render (tests, benchmarks).
    AsFastAsPossible,
}

/// What a [`SimulatedSource`] shows.
#[derive(Debug, Clone)]
pub struct SimulatedSpec {
    /// The table's ruleset.
    pub ruleset: RulesetId,
    /// Seed of everything random (camera pose, deck, rounds).
    pub seed: u64,
    /// Image width, pixels.
    pub width: u32,
    /// Image height, pixels.
    pub height: u32,
    /// Rounds to play before the source ends (`None`: forever).
    pub rounds: Option<u32>,
    /// Real time or as fast as possible.
    pub pace: Pace,
    /// The camera id the frames carry.
    pub camera_id: String,
}

impl SimulatedSpec {
    /// A 1280×720 real-time camera over `ruleset` playing clean rounds forever.
    pub fn new(ruleset: RulesetId, seed: u64) -> SimulatedSpec {
        SimulatedSpec {
            ruleset,
            seed,
            width: 1280,
            height: 720,
            rounds: None,
            pace: Pace::RealTime,
            camera_id: format!("sim-{ruleset}"),
        }
    }
}

/// The table simulator rendering rounds frame by frame, as a live source.
///
/// It builds the same camera, deck, table style and conditions from a seed as
/// `tablecam simulate` does, then plans clean rounds one after the other and
/// renders each frame when it is read. `source_index` is the frame number and
/// `timestamp_ms` the simulated time (`frame · 1000 / 30`), which the
/// [`Pace::RealTime`] pace keeps in step with the wall clock.
pub struct SimulatedSource {
    info: SourceInfo,
    spec: SimulatedSpec,
    ruleset: Ruleset,
    rng: Rng,
    renderer: Renderer,
    faces: FaceSet,
    conditions: Conditions,
    drift: Drift,
    queue: VecDeque<FrameState>,
    stakes: BTreeMap<(u8, String), u8>,
    rounds_started: u32,
    next_card_id: u32,
    frame: u64,
    epoch: Option<Instant>,
}

impl SimulatedSource {
    /// Sets up the simulated table and camera (renders the deck once: about a
    /// second).
    pub fn new(spec: SimulatedSpec) -> Result<SimulatedSource, SourceError> {
        let ruleset = Ruleset::new(spec.ruleset);
        let mut rng = Rng::seeded(spec.seed);
        let (_, mut cal) = simulated_camera(ruleset.id, spec.seed, spec.width, spec.height, &mut rng);
        let catalogue = faces::catalogue();
        if catalogue.is_empty() {
            return Err(SimError::Bad("no card designs in the catalogue".to_string()).into());
        }
        let design = catalogue[rng.below(catalogue.len() as u32) as usize].clone();
        cal.card_size_mm = [88.9 * design.aspect, 88.9];
        let geometry = cal.validate(Path::new("<simulated camera>")).map_err(SimError::from)?;
        let styles = TableStyle::presets();
        let style = styles[rng.below(styles.len() as u32) as usize].clone();
        let conditions = Conditions::preset("normal")
            .ok_or_else(|| SimError::Bad("the `normal` conditions preset is missing".to_string()))?;
        let deck = design.load().map_err(SimError::from)?;
        let face_px = (spec.height as f64 * 0.22).clamp(120.0, 360.0) as u32;
        let faces = FaceSet::new(&deck, design.aspect, face_px)?;
        let renderer = Renderer::new(&geometry, &style, spec.seed).map_err(SimError::from)?;
        let info = SourceInfo {
            camera_id: Arc::from(spec.camera_id.as_str()),
            kind: SourceKind::Live,
            input: format!("sim:{}", spec.ruleset),
            nominal_fps: Some(FPS as f64),
            width: spec.width,
            height: spec.height,
            frame_count: None,
        };
        Ok(SimulatedSource {
            info,
            drift: Drift::gentle(spec.seed),
            spec,
            ruleset,
            rng,
            renderer,
            faces,
            conditions,
            queue: VecDeque::new(),
            stakes: BTreeMap::new(),
            rounds_started: 0,
            next_card_id: 0,
            frame: 0,
            epoch: None,
        })
    }

    /// Plans the next round; false when all rounds have been played.
    fn plan_next_round(&mut self) -> Result<bool, SourceError> {
        if self.spec.rounds.is_some_and(|n| self.rounds_started >= n) {
            return Ok(false);
        }
        let plan =
            plan_round(&self.ruleset, Scenario::Clean, &mut self.rng, self.next_card_id).map_err(SimError::from)?;
        self.next_card_id += 1000;
        self.rounds_started += 1;
        let timeline = Timeline::new(self.renderer.geometry(), self.ruleset.cards_per_hand);
        self.queue = timeline.frames(&plan, &mut self.rng).into();
        self.stakes = chip_heights(&plan);
        Ok(true)
    }
}

impl FrameSource for SimulatedSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        if self.queue.is_empty() && !self.plan_next_round()? {
            return Ok(Read::End);
        }
        let Some(state) = self.queue.pop_front() else {
            return Ok(Read::End);
        };
        let timeline = Timeline::new(self.renderer.geometry(), self.ruleset.cards_per_hand);
        let scene = scene_of(&state, &self.faces, &timeline, &self.stakes);
        let conditions = self.drift.at(&self.conditions, self.frame);
        let rendered = self
            .renderer
            .render(&scene, &conditions, self.spec.seed ^ self.frame.wrapping_mul(0x9E37_79B9))
            .map_err(SimError::from)?;
        let image = to_bgr_mat(&rendered.image)?;
        let index = self.frame;
        self.frame += 1;
        let timestamp_ms = index as f64 * 1000.0 / FPS as f64;
        if self.spec.pace == Pace::RealTime {
            let epoch = *self.epoch.get_or_insert_with(Instant::now);
            let due = epoch + Duration::from_secs_f64(timestamp_ms / 1000.0);
            let now = Instant::now();
            if due > now {
                std::thread::sleep(due - now);
            }
        }
        Ok(Read::Frame(Capture { source_index: index, timestamp_ms, image }))
    }
}
