//! `tablecam dashboard --demo`: several simulated tables feeding the dashboard without cameras.
//!
//! Each table plays the simulator's scripted rounds (`sim::script::plan_round`, clean rounds
//! alternating with the irregular scenarios that apply to its ruleset) through the simulator's
//! timeline; every frame's ground truth is turned into noisy detections (cards lost under hands
//! and other cards, flicker, unread and misread faces, quad jitter, shuffled order — no video is
//! rendered and no recognition model runs) and pushed through the real tracker and verifier
//! (`verify::TableMonitor`), with the backend's bets as hints; a `Sequencer` stamps the events.
//! Frames are paced in simulated real time (30 fps per table, times `speed`), forever.
//!
//! The noise model is `sim::observe` at its realistic level, as tests/track_verify.rs uses it.
use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::calib::TableGeometry;
use crate::events::{BackendHint, Event, EventBody, Sequencer, StageHealth};
use crate::rng::Rng;
use crate::rules::{Ruleset, RulesetId};
use crate::sim::observe::{backend_hints, observe, Noise};
use crate::sim::script::{plan_round, Scenario, FPS};
use crate::sim::timeline::{FrameState, Timeline};
use crate::track::{FrameObservations, TrackerOptions};
use crate::verify::{TableMonitor, VerifierOptions};

use super::DashboardError;

/// The simulated camera's picture size (detections outside it are not seen).
const WIDTH: f64 = 1920.0;
const HEIGHT: f64 = 1080.0;
/// An empty table between rounds, so that a settled tile stays readable for a moment.
const IDLE_FRAMES: u32 = 3 * FPS;
/// A health event per table every this many frames (5 s).
const HEALTH_FRAMES: u64 = 5 * FPS as u64;

/// What `--demo` runs.
#[derive(Debug, Clone)]
pub(super) struct DemoOptions {
    /// Tables (rulesets in turn: every ruleset appears once there are five).
    pub tables: usize,
    /// Simulated seconds per wall-clock second.
    pub speed: f64,
    /// Seed of everything random.
    pub seed: u64,
}

/// One simulated table.
struct Table {
    id: String,
    camera: String,
    rs: Ruleset,
    geometry: TableGeometry,
    monitor: TableMonitor,
    rng: Rng,
    noise: Rng,
    bursts: BTreeMap<u32, u32>,
    scenarios: Vec<Scenario>,
    next_scenario: usize,
    rounds: u32,
    /// Round ids carry the demo's start time, so that acks journaled by an earlier demo run never
    /// match this run's flags.
    round_prefix: String,
    /// Frames still to show: `None` is an empty table between rounds.
    pending: VecDeque<Option<FrameState>>,
    /// Hints of the round in `pending`, given with its first frame.
    hints: Vec<BackendHint>,
    frame: u64,
    /// When this table's frame 0 is due, simulated ms after the demo's start (tables are staggered).
    offset_ms: f64,
    /// Tracker + verifier time per frame since the last health event, µs.
    push_us: Vec<f64>,
    frames_since_health: u64,
}

impl Table {
    fn new(k: usize, options: &DemoOptions, stamp: &str) -> Result<Table, DashboardError> {
        let ruleset = RulesetId::ALL[k % RulesetId::ALL.len()];
        let rs = Ruleset::new(ruleset);
        let seed = options.seed.wrapping_add(k as u64 * 7919);
        let mut rng = Rng::seeded(seed ^ 0xCA11);
        let (_, cal) = crate::sim::session::simulated_camera(ruleset, seed, WIDTH as u32, HEIGHT as u32, &mut rng);
        let geometry = cal
            .validate(std::path::Path::new("<demo>"))
            .map_err(|e| DashboardError::Usage(format!("demo table {k}: simulated calibration: {e}")))?;
        let id = format!("T{}", k + 1);
        let camera = format!("{id}-cam1");
        let monitor =
            TableMonitor::new(rs.clone(), &geometry, TrackerOptions::default(), VerifierOptions::new(&id, &camera))
                .map_err(|e| DashboardError::Usage(format!("demo table {id}: {e}")))?;
        // Clean rounds between the irregular ones; each table starts at another scenario.
        let mut scenarios = Vec::new();
        for sc in Scenario::ALL.into_iter().filter(|&sc| sc != Scenario::Clean && sc.applies_to(&rs)) {
            scenarios.push(sc);
            scenarios.push(Scenario::Clean);
        }
        let next_scenario = (2 * k) % scenarios.len();
        Ok(Table {
            round_prefix: format!("{id}-{stamp}"),
            id,
            camera,
            rs,
            geometry,
            monitor,
            rng: Rng::seeded(seed),
            noise: Rng::seeded(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 7),
            bursts: BTreeMap::new(),
            scenarios,
            next_scenario,
            rounds: 0,
            pending: VecDeque::new(),
            hints: Vec::new(),
            frame: 0,
            offset_ms: (k as f64 * 977.0) % 9000.0,
            push_us: Vec::new(),
            frames_since_health: 0,
        })
    }

    fn due_ms(&self) -> f64 {
        self.offset_ms + self.frame as f64 * 1000.0 / FPS as f64
    }

    /// Plans the next round (an idle gap, then its frames).
    fn plan_next(&mut self) {
        // A scenario that cannot be planned on this draw is skipped (plan_round says why).
        for _ in 0..self.scenarios.len() {
            let sc = self.scenarios[self.next_scenario];
            self.next_scenario = (self.next_scenario + 1) % self.scenarios.len();
            let first_card_id = 1000 * (self.rounds % 4_000_000);
            let Ok(plan) = plan_round(&self.rs, sc, &mut self.rng, first_card_id) else { continue };
            self.rounds += 1;
            let states = Timeline::new(&self.geometry, self.rs.cards_per_hand).frames(&plan, &mut self.rng);
            self.pending.extend((0..IDLE_FRAMES).map(|_| None));
            self.pending.extend(states.into_iter().map(Some));
            self.hints = backend_hints(&plan, Some(format!("{}-r{:04}", self.round_prefix, self.rounds)));
            return;
        }
        // Nothing plannable: keep the table empty for a while.
        self.pending.extend((0..IDLE_FRAMES).map(|_| None));
    }

    /// Shows the next frame to the tracker and verifier; its events (unstamped).
    fn step(&mut self) -> Vec<Event> {
        if self.pending.is_empty() {
            self.plan_next();
        }
        let state = self.pending.pop_front().flatten();
        if state.is_some() && !self.hints.is_empty() {
            for h in std::mem::take(&mut self.hints) {
                self.monitor.hint(h);
            }
        }
        let empty = FrameState { action: 0, cards: vec![], chips: vec![], hands: vec![] };
        let obs = observe(
            &self.geometry,
            state.as_ref().unwrap_or(&empty),
            self.frame,
            &Noise::realistic(),
            &mut self.noise,
            &mut self.bursts,
            (WIDTH, HEIGHT),
        );
        let t = Instant::now();
        let mut events = self.monitor.push(&obs);
        self.push_us.push(t.elapsed().as_secs_f64() * 1e6);
        self.frame += 1;
        self.frames_since_health += 1;
        if self.frames_since_health >= HEALTH_FRAMES {
            events.push(self.health(&obs));
        }
        events
    }

    fn health(&mut self, obs: &FrameObservations) -> Event {
        let n = self.frames_since_health;
        self.frames_since_health = 0;
        let mut us = std::mem::take(&mut self.push_us);
        us.sort_by(f64::total_cmp);
        let pct = |p: f64| us.get(((us.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or(0.0) / 1000.0;
        let round3 = |x: f64| (x * 1000.0).round() / 1000.0;
        let stage = |name: &str, p50: f64, p99: f64| StageHealth {
            stage: name.to_string(),
            received: n,
            sent: n,
            dropped: 0,
            errors: 0,
            latency_ms_p50: round3(p50),
            latency_ms_p99: round3(p99),
        };
        Event {
            table_id: self.id.clone(),
            camera_id: self.camera.clone(),
            round_id: None,
            seq: 0,
            frame: obs.frame,
            time_ms: obs.time_ms,
            body: EventBody::Health {
                // The detector is simulated: it has no latency worth reporting.
                stages: vec![stage("detect (simulated)", 0.0, 0.0), stage("track+verify", pct(0.5), pct(0.99))],
            },
        }
    }
}

/// Runs the demo forever, handing each batch of stamped events to `sink` as their frames fall due.
pub(super) fn run(options: &DemoOptions, mut sink: impl FnMut(Vec<Event>)) -> Result<(), DashboardError> {
    if options.tables == 0 || !(options.speed > 0.0 && options.speed.is_finite()) {
        return Err(DashboardError::Usage("--demo-tables must be at least 1 and --demo-speed positive".into()));
    }
    let start_secs = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let stamp = format!("{start_secs:x}");
    let mut tables = (0..options.tables).map(|k| Table::new(k, options, &stamp)).collect::<Result<Vec<_>, _>>()?;
    let mut seq = Sequencer::new();
    let start = Instant::now();
    loop {
        let now_ms = start.elapsed().as_secs_f64() * 1000.0 * options.speed;
        let mut batch = Vec::new();
        for t in &mut tables {
            // A table that fell behind (a slow machine) catches up, at most one second at a time.
            let mut n = 0;
            while t.due_ms() <= now_ms && n < FPS {
                batch.extend(t.step());
                n += 1;
            }
        }
        if !batch.is_empty() {
            for e in &mut batch {
                seq.stamp(e);
            }
            sink(batch);
        }
        let next = tables.iter().map(Table::due_ms).fold(f64::INFINITY, f64::min);
        let wait_ms =
            ((next - start.elapsed().as_secs_f64() * 1000.0 * options.speed) / options.speed).clamp(1.0, 100.0);
        std::thread::sleep(Duration::from_secs_f64(wait_ms / 1000.0));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_demo_table_deals_flags_and_settles_through_the_tracker_and_verifier() {
        let options = DemoOptions { tables: 1, speed: 1.0, seed: 3 };
        let mut t = Table::new(0, &options, "test").unwrap();
        let mut seq = Sequencer::new();
        let mut events = Vec::new();
        // Six rounds: three irregular, three clean.
        while t.rounds < 7 {
            for mut e in t.step() {
                seq.stamp(&mut e);
                events.push(e);
            }
        }
        let kinds = |k: &str| events.iter().filter(|e| e.kind() == k).count();
        assert!(kinds("card.dealt") > 20, "cards dealt: {}", kinds("card.dealt"));
        assert!(kinds("round.flag") >= 1, "no flag in three irregular rounds");
        assert!(kinds("round.outcome") >= 5, "outcomes: {}", kinds("round.outcome"));
        assert!(kinds("health") >= 1);
        assert!(events.iter().any(|e| e.round_id.as_deref() == Some("T1-test-r0001")));
        assert!(events.windows(2).all(|w| w[0].seq + 1 == w[1].seq));
    }
}
