//! Bet presence: whether each calibrated bet spot holds chips, frame by frame.
//!
//! Method. Every bet spot of the calibration gets two pixel sets, computed once
//! from the table geometry (lens included): the *disc* (the spot's middle, where
//! a stack stands, with room for its lean towards the image edge) and the
//! *ring* (felt around the spot, minus every other zone and a margin, so that
//! cards and neighbouring stacks do not count as change). Each frame is compared
//! with an empty-table reference of the same camera after cancelling the
//! lighting: a per-channel gain (exposure and white-balance drift) is taken as
//! the median frame/reference ratio over felt samples spread across the table.
//! A pixel has *changed* when any channel differs from the reference by more
//! than an absolute plus a relative tolerance. Then, per spot:
//!
//! * ring changed over [`PresenceConfig::occluded_ring_fraction`] → something
//!   large (a hand, an arm, a sleeve) covers the spot and its surroundings: the
//!   spot is reported *occluded* and keeps its previous decision;
//! * ring changed over [`PresenceConfig::disturbed_ring_fraction`] (but not
//!   occluded) → the felt around changed too, as under a drifting glare spot,
//!   never for chips alone: the disc's share of *new edges* (chip rims and
//!   inserts) above [`PresenceConfig::present_fraction`] means chips;
//! * otherwise the disc's changed fraction (the `score`) above
//!   [`PresenceConfig::present_fraction`] means chips;
//! * a decision changes only after [`PresenceConfig::confirm_frames`]
//!   consecutive unoccluded frames agree (hysteresis against a fingertip or a
//!   passing card).
//!
//! The printed bet circle is part of the empty reference; chips sit on top of it.
//!
//! The reference. A real table captures one frame while the table is empty
//! (`tablecam presence reference`, saved next to the calibration); without one,
//! [`PresenceDetector::without_reference`] keeps a running per-pixel median of
//! sampled frames, which learns the empty felt only where spots are empty for
//! at least half of its window (see `docs/presence.md`).
pub mod cli;
pub mod eval;

use std::sync::Arc;

use opencv::core::{self, Mat, Size};
use opencv::imgproc;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};

use crate::calib::{Point, TableGeometry, ZoneKind};
use crate::rules::BetKind;

/// Errors of bet presence detection.
#[derive(Debug, thiserror::Error)]
pub enum PresenceError {
    /// An OpenCV operation failed.
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done.
        context: String,
        /// OpenCV's error.
        source: opencv::Error,
    },
    /// A frame or reference of the wrong size or type.
    #[error("{0}")]
    Frame(String),
    /// The calibration has no usable bet spot, or a configuration value is out of range.
    #[error("{0}")]
    Config(String),
}

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> PresenceError + '_ {
    move |source| PresenceError::OpenCv { context: context.to_string(), source }
}

/// Tuning of the detector. Every field has a default; names carry their units.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PresenceConfig {
    /// Radius of the disc tested for chips, table mm from the spot's centre
    /// (a 39 mm chip plus the lean of a tall stack).
    pub disc_radius_mm: f64,
    /// Inner radius of the ring of surrounding felt, mm.
    pub ring_inner_mm: f64,
    /// Outer radius of the ring of surrounding felt, mm.
    pub ring_outer_mm: f64,
    /// Ring pixels closer than this to another zone are left out, mm.
    pub zone_margin_mm: f64,
    /// Gaussian smoothing of frame and reference before comparing, σ in pixels.
    pub blur_sigma_px: f64,
    /// A channel differing by more than this many 8-bit levels (plus the relative part) is a change.
    pub diff_levels: f32,
    /// Relative part of the change tolerance: this fraction of the reference level's
    /// distance to the nearer end of the 0–255 range (bright felt under glare is
    /// clipped, and a white chip there differs by little more than the absolute part).
    pub diff_relative: f32,
    /// A gradient magnitude (channel sum, central differences) differing from the
    /// reference's by more than this many 8-bit levels is a change.
    pub edge_levels: f32,
    /// Disc changed fraction above which a spot holds chips.
    pub present_fraction: f32,
    /// Ring changed fraction above which the spot is occluded (decision held).
    pub occluded_ring_fraction: f32,
    /// Ring changed fraction above which the disc's colour change is not taken for chips: chips
    /// change the disc alone, while a drifting glare spot brightens disc and ring together (an
    /// empty Pair Plus spot scored 0.47–0.92 with its ring at 0.08–0.33). Up to
    /// `occluded_ring_fraction` the spot is then decided by the disc's new edges alone (chip
    /// rims and inserts: 0.30–0.34 of that disc for a chip under the glare, 0 for the glare).
    pub disturbed_ring_fraction: f32,
    /// Consecutive unoccluded frames needed to change a decision.
    pub confirm_frames: u32,
    /// Fallback background: take one frame in this many into the running median.
    pub background_every_frames: u32,
    /// Fallback background: frames kept in the running median.
    pub background_history_frames: u32,
}

impl Default for PresenceConfig {
    fn default() -> Self {
        PresenceConfig {
            disc_radius_mm: 30.0,
            ring_inner_mm: 50.0,
            ring_outer_mm: 80.0,
            zone_margin_mm: 14.0,
            blur_sigma_px: 1.2,
            diff_levels: 26.0,
            diff_relative: 0.12,
            edge_levels: 30.0,
            present_fraction: 0.08,
            occluded_ring_fraction: 0.30,
            disturbed_ring_fraction: 0.05,
            confirm_frames: 3,
            background_every_frames: 10,
            background_history_frames: 31,
        }
    }
}

impl PresenceConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), PresenceError> {
        let bad = |m: &str| Err(PresenceError::Config(format!("presence config: {m}")));
        if !(self.disc_radius_mm > 5.0 && self.ring_inner_mm > self.disc_radius_mm) {
            return bad("disc_radius_mm must be > 5 and below ring_inner_mm");
        }
        if self.ring_outer_mm <= self.ring_inner_mm + 5.0 {
            return bad("ring_outer_mm must exceed ring_inner_mm by more than 5 mm");
        }
        if !(0.0..=1.0).contains(&self.present_fraction) || !(0.0..=1.0).contains(&self.occluded_ring_fraction) {
            return bad("present_fraction and occluded_ring_fraction must be in [0, 1]");
        }
        if !(0.0..=self.occluded_ring_fraction).contains(&self.disturbed_ring_fraction) {
            return bad("disturbed_ring_fraction must be in [0, occluded_ring_fraction]");
        }
        if self.confirm_frames == 0 || self.background_every_frames == 0 || self.background_history_frames == 0 {
            return bad("confirm_frames, background_every_frames and background_history_frames must be ≥ 1");
        }
        Ok(())
    }
}

/// Spacing of the [`ChangeMap`] grid, px.
const CHANGE_MAP_STEP_PX: usize = 4;

/// What differs from the empty table in one frame, on a coarse grid of the image (a sample every
/// [`CHANGE_MAP_STEP_PX`] px): a sample is *changed* when its colour differs from the reference
/// as a spot's pixel must to count (lighting gain cancelled). The tracker reads it to tell a
/// card's place left bare (the card is gone) from one covered by an arm (the card may still be
/// there). Made only against a captured empty-table reference: a running median learns the
/// cards that lie long as felt.
#[derive(Debug, Clone, PartialEq)]
pub struct ChangeMap {
    step: u32,
    cols: u32,
    rows: u32,
    cells: Vec<bool>,
}

impl ChangeMap {
    /// A map of `cols` × `rows` samples `step` px apart, row by row: sample (c, r) is pixel
    /// (c·step + step/2, r·step + step/2). `None` if the sizes disagree.
    pub fn new(step: u32, cols: u32, rows: u32, cells: Vec<bool>) -> Option<ChangeMap> {
        (step > 0 && cells.len() == cols as usize * rows as usize).then_some(ChangeMap { step, cols, rows, cells })
    }

    /// Whether the image point `p` (px) differs from the empty table; `None` outside the image.
    pub fn changed(&self, p: Point) -> Option<bool> {
        if !(p.x >= 0.0 && p.y >= 0.0) {
            return None;
        }
        let step = f64::from(self.step);
        let (c, r) = ((p.x / step) as u64, (p.y / step) as u64);
        (c < u64::from(self.cols) && r < u64::from(self.rows))
            .then(|| self.cells[(r * u64::from(self.cols) + c) as usize])
    }
}

/// The state of one bet spot in one frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct SpotState {
    /// The seat.
    pub seat: u8,
    /// The bet spot.
    pub bet: BetKind,
    /// Chips on the spot (held while occluded).
    pub present: bool,
    /// Something large covers the spot and its surroundings in this frame.
    pub occluded: bool,
    /// Changed fraction of the spot's disc, 0..1.
    pub score: f32,
    /// Changed fraction of the ring of felt around it, 0..1.
    pub ring_score: f32,
}

/// Pixels of one spot, as offsets into a width×height image.
#[derive(Debug, Clone)]
struct Spot {
    seat: u8,
    bet: BetKind,
    disc: Vec<u32>,
    ring: Vec<u32>,
    present: bool,
    initialised: bool,
    streak: u32,
}

/// Running per-pixel median of sampled frames at the pixels the detector reads.
#[derive(Debug, Clone)]
struct RunningMedian {
    /// Pixel offsets tracked.
    pixels: Vec<u32>,
    /// history[k] holds 3 bytes per tracked pixel.
    history: Vec<Vec<u8>>,
    next: usize,
    capacity: usize,
    every: u32,
    seen: u64,
}

/// Decides, frame by frame, which bet spots hold chips.
#[derive(Debug, Clone)]
pub struct PresenceDetector {
    config: PresenceConfig,
    width: i32,
    height: i32,
    spots: Vec<Spot>,
    /// Felt sample offsets for the lighting gain.
    felt: Vec<u32>,
    /// Smoothed reference, BGR bytes.
    reference: Vec<u8>,
    background: Option<RunningMedian>,
    /// The last frame's changes (with a captured reference only).
    changes: Option<Arc<ChangeMap>>,
}

impl PresenceDetector {
    /// A detector for the bet spots of `geometry`, against an empty-table
    /// `reference` frame (BGR, 8-bit, the calibration's image size).
    pub fn new(geometry: &TableGeometry, reference: &Mat, config: PresenceConfig) -> Result<Self, PresenceError> {
        let mut d = Self::build(geometry, config)?;
        d.reference = d.smoothed(reference)?;
        Ok(d)
    }

    /// A detector with no empty-table reference: it keeps a running median of
    /// sampled frames as the reference (the first frame seeds it).
    pub fn without_reference(geometry: &TableGeometry, config: PresenceConfig) -> Result<Self, PresenceError> {
        let mut d = Self::build(geometry, config)?;
        let mut pixels: Vec<u32> = d.felt.clone();
        for s in &d.spots {
            pixels.extend(&s.disc);
            pixels.extend(&s.ring);
        }
        pixels.sort_unstable();
        pixels.dedup();
        d.background = Some(RunningMedian {
            pixels,
            history: Vec::new(),
            next: 0,
            capacity: d.config.background_history_frames as usize,
            every: d.config.background_every_frames,
            seen: 0,
        });
        Ok(d)
    }

    fn build(geometry: &TableGeometry, config: PresenceConfig) -> Result<Self, PresenceError> {
        config.validate()?;
        let cal = &geometry.calibration;
        let (w, h) = (cal.image_width as i32, cal.image_height as i32);
        let zones = &cal.zones;
        let mut spots = Vec::new();
        for (i, z) in zones.iter().enumerate() {
            let ZoneKind::BetSpot { seat, bet } = z.kind else { continue };
            let c = z.polygon_mm.centroid();
            let (disc, ring) = spot_pixels(geometry, c, i, &config, w, h);
            if disc.is_empty() {
                continue; // Outside the picture: nothing to decide.
            }
            spots.push(Spot { seat, bet, disc, ring, present: false, initialised: false, streak: 0 });
        }
        if spots.is_empty() {
            return Err(PresenceError::Config(format!(
                "calibration of table {}: no bet spot is inside the {}×{} image",
                cal.table_id, w, h
            )));
        }
        let felt = felt_samples(geometry, &config, w, h);
        Ok(PresenceDetector {
            config,
            width: w,
            height: h,
            spots,
            felt,
            reference: Vec::new(),
            background: None,
            changes: None,
        })
    }

    /// The configuration in use.
    pub fn config(&self) -> &PresenceConfig {
        &self.config
    }

    fn smoothed(&self, frame: &Mat) -> Result<Vec<u8>, PresenceError> {
        if frame.cols() != self.width || frame.rows() != self.height || frame.typ() != core::CV_8UC3 {
            return Err(PresenceError::Frame(format!(
                "frame is {}×{} (type {}), the calibration expects {}×{} BGR 8-bit",
                frame.cols(),
                frame.rows(),
                frame.typ(),
                self.width,
                self.height
            )));
        }
        let mut out = Mat::default();
        let s = self.config.blur_sigma_px;
        if s > 0.05 {
            imgproc::gaussian_blur(frame, &mut out, Size::new(0, 0), s, s, core::BORDER_REFLECT_101)
                .map_err(cv("smoothing the frame"))?;
        } else {
            out = frame.try_clone().map_err(cv("copying the frame"))?;
        }
        let out = if out.is_continuous() { out } else { out.try_clone().map_err(cv("copying the frame"))? };
        Ok(out.data_bytes().map_err(cv("reading the frame"))?.to_vec())
    }

    /// Decides every spot for one frame (BGR, 8-bit, the calibration's size).
    /// `timestamp_ms` is the frame's own time (kept for the stage contract;
    /// decisions depend on frame order only).
    pub fn update(&mut self, frame: &Mat, timestamp_ms: f64) -> Result<Vec<SpotState>, PresenceError> {
        let _ = timestamp_ms;
        let f = self.smoothed(frame)?;
        if let Some(bg) = &mut self.background {
            if self.reference.len() != f.len() {
                self.reference = f.clone();
            }
            if bg.push(&f) {
                bg.write_median(&mut self.reference);
            }
        }
        let gain = self.gain(&f);
        let cfg = &self.config;
        let w = self.width as usize;
        let reference = &self.reference;
        // Edges that the empty table does not have (chip outlines and inserts), which survive
        // where glare washes the colours out.
        let new_edge = |o: u32| -> bool {
            let i = o as usize * 3;
            (gradient(&f, i, w, &gain) - gradient(reference, i, w, &[1.0; 3])).abs() > cfg.edge_levels
        };
        let colour_changed = |o: u32| -> bool {
            let i = o as usize * 3;
            (0..3).any(|c| {
                let r = reference[i + c] as f32;
                let v = f[i + c] as f32 / gain[c];
                (v - r).abs() > cfg.diff_levels + cfg.diff_relative * r.min(255.0 - r)
            })
        };
        let changed = |o: u32| -> bool { colour_changed(o) || new_edge(o) };
        let changes = self.background.is_none().then(|| {
            let (step, h) = (CHANGE_MAP_STEP_PX, self.height as usize);
            let (cols, rows) = (w / step, h / step);
            let cells = (0..rows)
                .flat_map(|r| (0..cols).map(move |c| ((r * step + step / 2) * w + c * step + step / 2) as u32))
                .map(colour_changed)
                .collect();
            ChangeMap::new(step as u32, cols as u32, rows as u32, cells).map(Arc::new)
        });
        let fraction = |px: &[u32], test: &dyn Fn(u32) -> bool| -> f32 {
            if px.is_empty() {
                0.0
            } else {
                px.iter().filter(|&&o| test(o)).count() as f32 / px.len() as f32
            }
        };
        let scores: Vec<(f32, f32)> =
            self.spots.iter().map(|s| (fraction(&s.disc, &changed), fraction(&s.ring, &changed))).collect();
        // a disturbed ring: the disc's new edges alone, which a drifting glare spot lacks
        let edges: Vec<Option<f32>> = self
            .spots
            .iter()
            .zip(&scores)
            .map(|(s, &(_, ring))| {
                (ring > cfg.disturbed_ring_fraction && ring <= cfg.occluded_ring_fraction)
                    .then(|| fraction(&s.disc, &new_edge))
            })
            .collect();
        let mut out = Vec::with_capacity(self.spots.len());
        for ((s, (score, ring_score)), edge) in self.spots.iter_mut().zip(scores).zip(edges) {
            let occluded = ring_score > cfg.occluded_ring_fraction;
            if !occluded {
                let raw = edge.unwrap_or(score) > cfg.present_fraction;
                if !s.initialised {
                    s.present = raw;
                    s.initialised = true;
                    s.streak = 0;
                } else if raw != s.present {
                    s.streak += 1;
                    if s.streak >= cfg.confirm_frames {
                        s.present = raw;
                        s.streak = 0;
                    }
                } else {
                    s.streak = 0;
                }
            }
            out.push(SpotState { seat: s.seat, bet: s.bet, present: s.present, occluded, score, ring_score });
        }
        self.changes = changes.flatten();
        Ok(out)
    }

    /// The [`ChangeMap`] of the frame [`update`](Self::update) saw last: `None` before the first
    /// frame, or without a captured empty-table reference.
    pub fn changes(&self) -> Option<Arc<ChangeMap>> {
        self.changes.clone()
    }

    /// Per-channel frame/reference gain: the median ratio over felt samples.
    fn gain(&self, f: &[u8]) -> [f32; 3] {
        let mut g = [1.0f32; 3];
        for (c, gc) in g.iter_mut().enumerate() {
            let mut ratios: Vec<f32> = self
                .felt
                .iter()
                .filter_map(|&o| {
                    let i = o as usize * 3 + c;
                    let r = self.reference[i] as f32;
                    (r >= 8.0 && f[i] < 250).then(|| f[i] as f32 / r)
                })
                .collect();
            if ratios.len() >= 16 {
                let mid = ratios.len() / 2;
                let (_, m, _) = ratios.select_nth_unstable_by(mid, f32::total_cmp);
                *gc = m.clamp(0.25, 4.0);
            }
        }
        g
    }
}

impl RunningMedian {
    /// Takes every `every`-th frame into the history; whether it took this one.
    fn push(&mut self, f: &[u8]) -> bool {
        self.seen += 1;
        if (self.seen - 1) % u64::from(self.every) != 0 {
            return false;
        }
        let sample: Vec<u8> = self.pixels.iter().flat_map(|&o| (0..3).map(move |c| f[o as usize * 3 + c])).collect();
        if self.history.len() < self.capacity {
            self.history.push(sample);
        } else {
            self.history[self.next] = sample;
        }
        self.next = (self.next + 1) % self.capacity;
        true
    }

    fn write_median(&self, reference: &mut [u8]) {
        let n = self.history.len();
        if n == 0 {
            return;
        }
        let mut vals = vec![0u8; n];
        for (k, &o) in self.pixels.iter().enumerate() {
            for c in 0..3 {
                for (v, h) in vals.iter_mut().zip(&self.history) {
                    *v = h[k * 3 + c];
                }
                vals.sort_unstable();
                reference[o as usize * 3 + c] = vals[n / 2];
            }
        }
    }
}

/// Gradient magnitude (central differences of the channel sum, gain-corrected)
/// at byte offset `i` of a BGR image `w` pixels wide; 0 on the border.
fn gradient(img: &[u8], i: usize, w: usize, gain: &[f32; 3]) -> f32 {
    let s = |j: usize| -> f32 { (0..3).map(|c| img[j + c] as f32 / gain[c]).sum() };
    let row = w * 3;
    if i < row + 3 || i + row + 3 >= img.len() {
        return 0.0;
    }
    let gx = s(i + 3) - s(i - 3);
    let gy = s(i + row) - s(i - row);
    gx.hypot(gy)
}

/// Disc and ring pixels of the spot centred at `c` (zone `index`).
fn spot_pixels(
    g: &TableGeometry,
    c: Point,
    index: usize,
    cfg: &PresenceConfig,
    w: i32,
    h: i32,
) -> (Vec<u32>, Vec<u32>) {
    let zones = &g.calibration.zones;
    let Some(bbox) = image_bbox(g, c, cfg.ring_outer_mm, w, h) else { return (Vec::new(), Vec::new()) };
    let (mut disc, mut ring) = (Vec::new(), Vec::new());
    for y in bbox[1]..bbox[3] {
        for x in bbox[0]..bbox[2] {
            let Some(p) = g.image_to_table(Point::new(x as f64 + 0.5, y as f64 + 0.5)) else { continue };
            let d = p.dist(c);
            let o = (y * w + x) as u32;
            if d <= cfg.disc_radius_mm {
                disc.push(o);
            } else if (cfg.ring_inner_mm..=cfg.ring_outer_mm).contains(&d) {
                let near_other = zones
                    .iter()
                    .enumerate()
                    .any(|(j, z)| j != index && near_polygon(&z.polygon_mm, p, cfg.zone_margin_mm));
                if !near_other {
                    ring.push(o);
                }
            }
        }
    }
    (disc, ring)
}

/// Whether `p` is inside `poly` or within `margin` of its outline.
fn near_polygon(poly: &crate::calib::Polygon, p: Point, margin: f64) -> bool {
    if poly.contains(p) {
        return true;
    }
    let v = &poly.0;
    (0..v.len()).any(|i| segment_dist(v[i], v[(i + 1) % v.len()], p) < margin)
}

fn segment_dist(a: Point, b: Point, p: Point) -> f64 {
    let (dx, dy) = (b.x - a.x, b.y - a.y);
    let l2 = dx * dx + dy * dy;
    let t = if l2 > 0.0 { (((p.x - a.x) * dx + (p.y - a.y) * dy) / l2).clamp(0.0, 1.0) } else { 0.0 };
    p.dist(Point::new(a.x + t * dx, a.y + t * dy))
}

/// Image bounding box [x0, y0, x1, y1) of a table circle, clipped to the image.
fn image_bbox(g: &TableGeometry, c: Point, r: f64, w: i32, h: i32) -> Option<[i32; 4]> {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for k in 0..32 {
        let a = k as f64 / 32.0 * std::f64::consts::TAU;
        let p = g.table_to_image(Point::new(c.x + r * a.cos(), c.y + r * a.sin()))?;
        x0 = x0.min(p.x);
        y0 = y0.min(p.y);
        x1 = x1.max(p.x);
        y1 = y1.max(p.y);
    }
    let b = [
        (x0.floor() as i32 - 1).max(0),
        (y0.floor() as i32 - 1).max(0),
        (x1.ceil() as i32 + 1).min(w),
        (y1.ceil() as i32 + 1).min(h),
    ];
    (b[0] < b[2] && b[1] < b[3]).then_some(b)
}

/// Felt samples for the lighting gain: a grid over the table, away from zones.
fn felt_samples(g: &TableGeometry, cfg: &PresenceConfig, w: i32, h: i32) -> Vec<u32> {
    let zones = &g.calibration.zones;
    let r_table = crate::calib::layout::TABLE_RADIUS_MM - 60.0;
    let mut out = Vec::new();
    let step = 25.0;
    let n = (r_table / step) as i32;
    for i in -n..=n {
        for j in 0..=n {
            let p = Point::new(i as f64 * step, j as f64 * step);
            if p.x.hypot(p.y) > r_table || p.y < 30.0 {
                continue;
            }
            if zones.iter().any(|z| near_polygon(&z.polygon_mm, p, cfg.zone_margin_mm)) {
                continue;
            }
            let Some(q) = g.table_to_image(p) else { continue };
            let (x, y) = (q.x.round() as i32, q.y.round() as i32);
            if (0..w).contains(&x) && (0..h).contains(&y) {
                out.push((y * w + x) as u32);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::eval::{run_case, EvalCase, ReferenceMode};
    use super::*;
    use crate::rules::RulesetId;

    /// A short simulated session per case at 640×360, read back from its video:
    /// the per-round decisions must be right (the full figures are in docs/presence.md).
    #[test]
    fn detects_bets_on_simulated_sessions() {
        let work = std::env::temp_dir().join(format!("tablecam-presence-test-{}", std::process::id()));
        let cases = [(RulesetId::Fortune3cp2025, "glare", 4), (RulesetId::Stud2004, "dim", 5)];
        let mut total = super::eval::Confusion::default();
        for (ruleset, conditions, seed) in cases {
            let case = EvalCase { ruleset, conditions: conditions.into(), seed, rounds: 1, width: 640, height: 360 };
            let r = run_case(&case, &work, &PresenceConfig::default(), ReferenceMode::EmptyTable, false).unwrap();
            assert!(r.per_round.total() >= 6, "{ruleset}: {} spot-rounds", r.per_round.total());
            assert!(r.per_frame.accuracy() > 0.97, "{ruleset} {conditions}: per frame {:?}", r.per_frame);
            total.merge(&r.per_round);
        }
        let _ = std::fs::remove_dir_all(&work);
        assert!(total.accuracy() >= 0.99, "per round {total:?}");
    }

    /// A glare spot drifting over an empty bet spot brightens the disc and its ring together: no
    /// chips. A chip under the same glare shows its rim and inserts: chips.
    #[test]
    fn a_glare_spot_over_an_empty_spot_is_no_bet_and_a_chip_under_it_is() {
        use crate::calib::layout::{default_pose, simulated_calibration};
        use crate::calib::ZoneKind;
        let (w, h) = (960, 540);
        let g = simulated_calibration(RulesetId::Fortune3cp2025, "G1", w, h, &default_pose(), None)
            .validate(std::path::Path::new("<test>"))
            .unwrap();
        let zone = g.calibration.zones.iter().find(|z| matches!(z.kind, ZoneKind::BetSpot { .. })).unwrap();
        let ZoneKind::BetSpot { seat, bet } = zone.kind else { unreachable!() };
        let centre = g.table_to_image(zone.polygon_mm.centroid()).unwrap();
        let felt = [70.0, 120.0, 40.0]; // BGR
        let image = |glare: bool, chip: bool| -> Mat {
            let mut m =
                Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_8UC3, core::Scalar::all(0.0)).unwrap();
            for y in 0..h as i32 {
                for x in 0..w as i32 {
                    let d2 = (x as f64 - centre.x).powi(2) + (y as f64 - centre.y).powi(2);
                    // the glare's peak a little off the spot, its tail over part of the ring
                    let g2 = d2;
                    let add = if glare { 46.0 * (-g2 / (2.0 * 20.0f64.powi(2))).exp() } else { 0.0 };
                    let mut px = felt.map(|c| (c + add).min(255.0));
                    let r = d2.sqrt();
                    if chip && r < 11.0 {
                        // a chip: a dark rim, light inserts at every other twelfth of a turn
                        let a = (y as f64 - centre.y).atan2(x as f64 - centre.x);
                        let insert = ((a / std::f64::consts::TAU * 12.0).floor() as i64).rem_euclid(2) == 0;
                        px = if r > 8.0 {
                            if insert {
                                [235.0; 3]
                            } else {
                                [30.0, 30.0, 160.0]
                            }
                        } else {
                            [200.0, 190.0, 230.0]
                        };
                    }
                    *m.at_2d_mut::<core::Vec3b>(y, x).unwrap() = core::Vec3b::from(px.map(|c| c as u8));
                }
            }
            m
        };
        let decide = |glare: bool, chip: bool| -> (bool, f32) {
            let mut d = PresenceDetector::new(&g, &image(false, false), PresenceConfig::default()).unwrap();
            let frame = image(glare, chip);
            let mut last = None;
            for n in 0..5 {
                last = d.update(&frame, n as f64 * 33.3).unwrap().into_iter().find(|s| s.seat == seat && s.bet == bet);
            }
            let s = last.unwrap();
            assert!(!s.occluded, "{s:?}");
            (s.present, s.ring_score)
        };
        let (present, ring) = decide(true, false);
        assert!((0.05..0.3).contains(&ring), "the glare reaches into the ring: {ring}");
        assert!(!present, "glare alone is no bet");
        assert!(decide(true, true).0, "a chip under the glare");
        assert!(decide(false, true).0, "a chip without glare");
        assert!(!decide(false, false).0, "the empty table");
    }

    /// The change map marks what differs from the captured empty table (a card laid on the
    /// felt), not the felt around it, under a change of exposure too; a detector that learns
    /// its reference makes none.
    #[test]
    fn the_change_map_shows_a_card_on_the_felt_and_only_it() {
        use crate::calib::layout::{default_pose, simulated_calibration};
        let (w, h) = (960, 540);
        let g = simulated_calibration(RulesetId::Fortune3cp2025, "G1", w, h, &default_pose(), None)
            .validate(std::path::Path::new("<test>"))
            .unwrap();
        let card = (400..440, 200..260);
        let image = |gain: f64, with_card: bool| -> Mat {
            let mut m =
                Mat::new_rows_cols_with_default(h as i32, w as i32, core::CV_8UC3, core::Scalar::all(0.0)).unwrap();
            for y in 0..h as i32 {
                for x in 0..w as i32 {
                    let on_card = with_card && card.0.contains(&x) && card.1.contains(&y);
                    let px = if on_card { [235.0; 3] } else { [70.0 * gain, 120.0 * gain, 40.0 * gain] };
                    *m.at_2d_mut::<core::Vec3b>(y, x).unwrap() = core::Vec3b::from(px.map(|c: f64| c as u8));
                }
            }
            m
        };
        let mut d = PresenceDetector::new(&g, &image(1.0, false), PresenceConfig::default()).unwrap();
        assert!(d.changes().is_none(), "no frame yet");
        d.update(&image(1.15, true), 0.0).unwrap();
        let map = d.changes().expect("a captured reference gives a change map");
        assert_eq!(map.changed(Point::new(420.0, 230.0)), Some(true), "the card");
        for felt in [Point::new(380.0, 230.0), Point::new(460.0, 230.0), Point::new(100.0, 400.0)] {
            assert_eq!(map.changed(felt), Some(false), "the felt at {felt:?}");
        }
        assert_eq!(map.changed(Point::new(-1.0, 5.0)), None);
        assert_eq!(map.changed(Point::new(5.0, h as f64 + 1.0)), None);
        let mut learning = PresenceDetector::without_reference(&g, PresenceConfig::default()).unwrap();
        learning.update(&image(1.0, true), 0.0).unwrap();
        assert!(learning.changes().is_none());
    }

    #[test]
    fn config_is_validated_and_defaults_fill_in() {
        let c: PresenceConfig = serde_json::from_str(r#"{"confirm_frames": 5}"#).unwrap();
        assert_eq!(c.confirm_frames, 5);
        assert_eq!(c.disc_radius_mm, PresenceConfig::default().disc_radius_mm);
        assert!(serde_json::from_str::<PresenceConfig>(r#"{"confirm": 5}"#).is_err());
        let bad = PresenceConfig { ring_inner_mm: 10.0, ..Default::default() };
        assert!(bad.validate().is_err());
    }
}
