//! `tablecam simulate detections`: a card detection and recognition dataset —
//! whole simulated table images with every card's quadrilateral, identity and
//! visible fraction, and the image boxes of its two printed indices (rank and
//! suit in the top-left and bottom-right corners) with their visible fractions.
//!
//! Layout: `OUT/{train,val,test}/NNNNNN.jpg`, one `OUT/annotations.jsonl`
//! (one JSON object per image, see [`ImageAnnotation`]) and `OUT/summary.json`.
//! Splits are by deck art family ([`super::crops::splits`]): test families
//! never appear in training. Everything is deterministic from `--seed`.
//!
//! Scenes are deliberately varied (domain randomisation): random rulesets and
//! cameras, close-ups with oblique tilts, random felt colours and non-casino
//! surfaces, dealt hands, stud-style fans, scattered cards and piles, face-down
//! and lifted cards, motion blur, chips and hands over cards, and recoloured
//! decks (dark stock with gold print, inverted luminance, tinted stock).
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use image::RgbaImage;
use opencv::core::{Mat, Point as CvPoint, Rect, Scalar, Vector};
use opencv::prelude::*;
use opencv::{imgcodecs, imgproc};
use serde::Serialize;

use super::crops::splits;
use super::faces::{self, DeckDesign, Face};
use super::render::{
    CardRegion, ChipStack, Conditions, FeltTexture, Occluder, OccluderKind, Renderer, Scene, SceneCard, TableStyle,
};
use super::session::{random_pose, to_bgr_mat, SimError};
use crate::calib::{layout, CameraPose, Point, TableGeometry};
use crate::rng::Rng;
use crate::rules::{Card, RulesetId};

/// Height in pixels at which faces are rendered (for the scenes and for
/// measuring where each design prints its index).
pub const FACE_HEIGHT_PX: u32 = 400;
/// The index box used when a design's cannot be measured: `[u1, v1, u2, v2]`
/// in fractions of the card's width and height from its top-left corner.
pub const DEFAULT_INDEX_BOX: [f64; 4] = [0.03, 0.03, 0.17, 0.30];
/// The part of the card searched for the top-left index (fractions of width, height).
pub const INDEX_SEARCH: [f64; 2] = [0.28, 0.46];
/// Ink this close to the card's edge (fraction of width/height) is its outline, not its index.
const EDGE_MARGIN: f64 = 0.02;
/// The three splits, in output order.
pub const SPLITS: [&str; 3] = ["train", "val", "test"];

/// Arguments of `tablecam simulate detections`.
#[derive(Debug, Clone, clap::Args)]
pub struct DetectionsArgs {
    /// Output folder (git-ignored bulk data).
    #[arg(long, default_value = "datasets/generated/detect")]
    pub out: PathBuf,
    /// Seed: the same seed and version give the same dataset.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Training images.
    #[arg(long, default_value_t = 3000)]
    pub train: u32,
    /// Validation images.
    #[arg(long, default_value_t = 300)]
    pub val: u32,
    /// Test images (deck families never seen in train or val).
    #[arg(long, default_value_t = 600)]
    pub test: u32,
    /// Only these designs (comma-separated names).
    #[arg(long, value_delimiter = ',')]
    pub designs: Vec<String>,
    /// Images rendered on each random table and camera (drawing the static
    /// table is most of the cost of an image).
    #[arg(long, default_value_t = 8)]
    pub scenes_per_table: u32,
    /// Worker threads (default: the machine's cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Instead of a dataset, write a picture of each design's A♠ and 10♥ with
    /// their measured index boxes to this PNG (e.g. docs/images/index_boxes.png).
    #[arg(long)]
    pub index_picture: Option<PathBuf>,
    /// Instead of a dataset, write every design's 53 faces (PNG, RGBA, [`FACE_HEIGHT_PX`]
    /// high) and `faces.json` (family, split, index box) to this folder: the raw material
    /// of the classifier's index-patch synthesiser (models/training/patches.py).
    #[arg(long)]
    pub faces: Option<PathBuf>,
}

/// One image's line of `annotations.jsonl`.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct ImageAnnotation {
    /// Path relative to the dataset folder (`train/000012.jpg`).
    pub image: String,
    /// `train`, `val` or `test`.
    pub split: String,
    /// Deck design.
    pub design: String,
    /// The design's art family.
    pub family: String,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// Every card whose corners project, in drawing order (later ones on top).
    pub cards: Vec<CardAnnotation>,
}

/// One card of an [`ImageAnnotation`].
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CardAnnotation {
    /// `AS`, `10H`… or `back` for a face-down card.
    pub card: String,
    /// Face up.
    pub face_up: bool,
    /// Image corners of the card: top-left, top-right, bottom-right, bottom-left of its upright face.
    pub quad: [[f64; 2]; 4],
    /// Visible fraction of the card, 0..=1.
    pub visible: f64,
    /// Face-up cards: the top-left index, then the bottom-right one; backs: none.
    pub corners: Vec<CornerAnnotation>,
}

/// One printed index (rank and suit) of a face-up card.
#[derive(Debug, Clone, Serialize, serde::Deserialize)]
pub struct CornerAnnotation {
    /// Axis-aligned image box `[x1, y1, x2, y2]` of the index rectangle's projected corners.
    #[serde(rename = "box")]
    pub bbox: [f64; 4],
    /// Visible fraction of the index rectangle, 0..=1.
    pub visible: f64,
}

/// Where one design prints its top-left index.
#[derive(Debug, Clone, Serialize)]
pub struct IndexBox {
    /// `[u1, v1, u2, v2]`, fractions of the card's width and height from its top-left.
    pub rect: [f64; 4],
    /// Measured from the rendered faces (false: [`DEFAULT_INDEX_BOX`]).
    pub measured: bool,
}

/// `OUT/summary.json`.
#[derive(Debug, Clone, Serialize, Default)]
pub struct Summary {
    /// The seed.
    pub seed: u64,
    /// Images rendered on each table and camera.
    pub scenes_per_table: u32,
    /// Images per split.
    pub images_by_split: BTreeMap<String, u64>,
    /// Card annotations per split.
    pub cards_by_split: BTreeMap<String, u64>,
    /// Art families per split.
    pub families_by_split: BTreeMap<String, Vec<String>>,
    /// Designs per split.
    pub designs_by_split: BTreeMap<String, Vec<String>>,
    /// Index box of each design used.
    pub index_boxes: BTreeMap<String, IndexBox>,
    /// Wall-clock seconds the run took.
    pub elapsed_s: f64,
}

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> SimError + '_ {
    move |source| SimError::OpenCv { context: context.to_string(), source }
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io { path: path.to_path_buf(), source }
}

// ---------------------------------------------------------------------------
// Index boxes
// ---------------------------------------------------------------------------

/// The paper colour of a face: the median colour of a strip along its left
/// edge at mid-height (between the outline and the pips).
fn paper_colour(img: &RgbaImage) -> [u8; 3] {
    let (w, h) = (img.width() as f64, img.height() as f64);
    let mut chans: [Vec<u8>; 3] = Default::default();
    for y in (0.42 * h) as u32..(0.58 * h) as u32 {
        for x in (0.04 * w) as u32..(0.12 * w).max(0.04 * w + 2.0) as u32 {
            let p = img.get_pixel(x.min(img.width() - 1), y.min(img.height() - 1));
            if p[3] > 200 {
                for c in 0..3 {
                    chans[c].push(p[c]);
                }
            }
        }
    }
    let mut out = [255u8; 3];
    for c in 0..3 {
        if !chans[c].is_empty() {
            chans[c].sort_unstable();
            out[c] = chans[c][chans[c].len() / 2];
        }
    }
    out
}

/// Whether a pixel is ink on `paper`.
fn is_ink(p: &image::Rgba<u8>, paper: [u8; 3]) -> bool {
    p[3] > 128 && (0..3).map(|c| (p[c] as i32 - paper[c] as i32).abs()).max().unwrap_or(0) > 70
}

/// The ink bounding box of the top-left index of one face, in fractions of
/// its width and height. Ink is searched in [`INDEX_SEARCH`] but not within
/// [`EDGE_MARGIN`] of the edge, in connected pieces that do not reach the
/// search area's far sides (those are pips, frames or artwork running on).
/// The index is the piece nearest the corner (the rank's first glyph) grown by
/// the pieces just below it (the suit) or just beside it (the `0` of `10`).
pub fn face_index_box(img: &RgbaImage) -> Result<Option<[f64; 4]>, SimError> {
    let (w, h) = (img.width() as i32, img.height() as i32);
    let paper = paper_colour(img);
    let (x0, y0) = ((EDGE_MARGIN * w as f64).ceil() as i32, (EDGE_MARGIN * h as f64).ceil() as i32);
    let (x1, y1) = ((INDEX_SEARCH[0] * w as f64) as i32, (INDEX_SEARCH[1] * h as f64) as i32);
    let (rw, rh) = (x1 - x0, y1 - y0);
    if rw < 4 || rh < 4 {
        return Ok(None);
    }
    // Distance of each pixel to the transparent outside, to skip the outline
    // (and rounded corners) of the card.
    let alpha: Vec<u8> = img.pixels().map(|p| if p[3] > 128 { 255 } else { 0 }).collect();
    let alpha = Mat::new_rows_cols_with_data::<u8>(h, w, &alpha).map_err(cv("index alpha"))?;
    let mut inside = Mat::default();
    let mut padded = Mat::default();
    // Pad with transparency so that the image border counts as outside.
    opencv::core::copy_make_border(&alpha, &mut padded, 1, 1, 1, 1, opencv::core::BORDER_CONSTANT, Scalar::all(0.0))
        .map_err(cv("index alpha"))?;
    imgproc::distance_transform(&padded, &mut inside, imgproc::DIST_L2, 3, opencv::core::CV_32F)
        .map_err(cv("index distance"))?;
    let margin = (EDGE_MARGIN * w as f64) as f32;
    let mut mask = vec![0u8; (rw * rh) as usize];
    for y in 0..rh {
        for x in 0..rw {
            let d = inside.at_2d::<f32>(y + y0 + 1, x + x0 + 1).copied().unwrap_or(0.0);
            if d > margin && is_ink(img.get_pixel((x + x0) as u32, (y + y0) as u32), paper) {
                mask[(y * rw + x) as usize] = 255;
            }
        }
    }
    let m = Mat::new_rows_cols_with_data::<u8>(rh, rw, &mask).map_err(cv("index mask"))?;
    let (mut labels, mut stats, mut centroids) = (Mat::default(), Mat::default(), Mat::default());
    let n =
        imgproc::connected_components_with_stats(&m, &mut labels, &mut stats, &mut centroids, 8, opencv::core::CV_32S)
            .map_err(cv("index components"))?;
    let min_area = ((w * h) as f64 * 2e-5).max(3.0) as i32;
    // Pieces as [left, top, right, bottom] (exclusive) in search-area pixels.
    let mut pieces: Vec<[i32; 4]> = Vec::new();
    let tail = ((0.03 * h as f64) as i32).max(3);
    for i in 1..n {
        let at = |k: i32| stats.at_2d::<i32>(i, k).copied().unwrap_or(0);
        let (l, t, cw, ch, area) = (at(0), at(1), at(2), at(3), at(4));
        // Skip specks, and rules (long thin lines).
        let (thin, long) = (cw.min(ch) as f64, cw.max(ch) as f64);
        let line = (thin < 0.02 * w as f64 && long > 0.1 * h as f64)
            || (thin <= (0.012 * w as f64).max(2.0) && long >= 3.0 * thin);
        if area < min_area || line {
            continue;
        }
        let p = trim_tails(&labels, i, [l, t, l + cw, t + ch], tail, ((0.016 * w as f64) as i32).max(2));
        // What is left of a frame's corner once its lines are trimmed is no glyph.
        let tiny = ((p[2] - p[0]) as f64) < 0.02 * w as f64 && ((p[3] - p[1]) as f64) < 0.025 * h as f64;
        let trimmed = p != [l, t, l + cw, t + ch];
        if p[2] < rw && p[3] < rh && !(tiny && trimmed) {
            pieces.push(p);
        }
    }
    // The seed: the piece nearest the corner, starting in its first eighth.
    let near = |p: &[i32; 4]| p[0] < (0.12 * w as f64) as i32 && p[1] < (0.14 * h as f64) as i32;
    let Some(seed) = pieces.iter().filter(|p| near(p)).min_by_key(|p| p[0] + p[1]).copied() else {
        return Ok(None);
    };
    let (gap_below, gap_beside) = ((0.05 * h as f64) as i32, (0.025 * w as f64) as i32);
    let mut b = seed;
    let mut taken = vec![false; pieces.len()];
    loop {
        let mut grew = false;
        for (i, p) in pieces.iter().enumerate() {
            if taken[i] {
                continue;
            }
            let x_overlap = p[2].min(b[2]) - p[0].max(b[0]);
            let y_overlap = p[3].min(b[3]) - p[1].max(b[1]);
            let below = x_overlap > (p[2] - p[0]).min(b[2] - b[0]) / 3 && p[1] - b[3] <= gap_below && p[3] > b[1];
            let beside = y_overlap > (p[3] - p[1]).min(b[3] - b[1]) / 2
                && p[0] - b[2] <= gap_beside
                && b[0] - p[2] <= gap_beside;
            if below || beside {
                taken[i] = true;
                b = [b[0].min(p[0]), b[1].min(p[1]), b[2].max(p[2]), b[3].max(p[3])];
                grew = true;
            }
        }
        if !grew {
            break;
        }
    }
    Ok(Some([
        (b[0] + x0) as f64 / w as f64,
        (b[1] + y0) as f64 / h as f64,
        (b[2] + x0) as f64 / w as f64,
        (b[3] + y0) as f64 / h as f64,
    ]))
}

/// The box `b` of piece `id` of `labels` without thin tails: a run of at
/// least `min_run` rows (columns) at its bottom or top (right or left) with
/// less than a third of its widest row's (column's) ink is a line running on
/// from the glyph (some decks hang their suit on a rule), and is cut off.
fn trim_tails(labels: &Mat, id: i32, b: [i32; 4], min_run: i32, thin_px: i32) -> [i32; 4] {
    let is = |x: i32, y: i32| labels.at_2d::<i32>(y, x).copied().unwrap_or(0) == id;
    // (ink count, mean position) of each row, then of each column.
    let profile = |outer: std::ops::Range<i32>, inner: std::ops::Range<i32>, rows: bool| -> Vec<(i32, f64)> {
        outer
            .map(|o| {
                let hits: Vec<i32> = inner.clone().filter(|&i| if rows { is(i, o) } else { is(o, i) }).collect();
                let mean = hits.iter().sum::<i32>() as f64 / hits.len().max(1) as f64;
                (hits.len() as i32, mean)
            })
            .collect()
    };
    let rows = profile(b[1]..b[3], b[0]..b[2], true);
    let cols = profile(b[0]..b[2], b[1]..b[3], false);
    // How many thin entries in a straight line end (or start) the profile, if at least `min_run`.
    let cut = |v: &[(i32, f64)], from_end: bool| -> i32 {
        let max = v.iter().map(|e| e.0).max().unwrap_or(0);
        let ordered: Vec<&(i32, f64)> = if from_end { v.iter().rev().collect() } else { v.iter().collect() };
        let Some(first) = ordered.first() else { return 0 };
        let run = ordered
            .iter()
            .take_while(|e| e.0 * 3 < max && e.0 > 0 && e.0 <= thin_px && (e.1 - first.1).abs() <= 2.5)
            .count() as i32;
        if run >= min_run && (run as usize) < v.len() {
            run
        } else {
            0
        }
    };
    let (top, bottom) = (cut(&rows, false), cut(&rows, true));
    let (left, right) = (cut(&cols, false), cut(&cols, true));
    [b[0] + left, b[1] + top, b[2] - right, b[3] - bottom]
}

/// Whether a measured index box is plausible: inside the search area, not a
/// sliver, starting near the corner.
pub fn plausible_index_box(r: &[f64; 4]) -> bool {
    let (w, h) = (r[2] - r[0], r[3] - r[1]);
    r.iter().all(|v| v.is_finite())
        && r[0] >= 0.01
        && r[1] >= 0.01
        && r[2] <= INDEX_SEARCH[0] + 0.01
        && r[3] <= INDEX_SEARCH[1] + 0.01
        && (0.04..=0.25).contains(&w)
        && (0.07..=0.44).contains(&h)
        && r[0] < 0.12
        && r[1] < 0.12
}

/// Where a deck prints its top-left index: the union over the number cards
/// A–10 of all suits of [`face_index_box`], grown by half a percent. A face
/// whose box reaches more than 5 % of the card's height above or below the
/// median face's is left out (artwork joined to its suit), widths are
/// never filtered (the `10` is wider than the rest). Falls
/// back to [`DEFAULT_INDEX_BOX`] (with a warning on stderr) when the result is
/// implausible.
pub fn index_box(name: &str, face_of: impl Fn(Face) -> Arc<RgbaImage>) -> Result<IndexBox, SimError> {
    use crate::rules::card::Rank;
    let mut boxes = Vec::new();
    for card in Card::all().filter(|c| !matches!(c.rank(), Rank::Jack | Rank::Queen | Rank::King)) {
        if let Some(b) = face_index_box(&face_of(Face::Card(card)))? {
            boxes.push(b);
        }
    }
    let median = |k: usize| {
        let mut v: Vec<f64> = boxes.iter().map(|b| b[k]).collect();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    let (top, bottom) = (median(1), median(3));
    let kept: Vec<&[f64; 4]> = boxes.iter().filter(|b| b[1] >= top - 0.05 && b[3] <= bottom + 0.05).collect();
    let union = kept.iter().fold(None, |u: Option<[f64; 4]>, b| {
        Some(match u {
            None => **b,
            Some(u) => [u[0].min(b[0]), u[1].min(b[1]), u[2].max(b[2]), u[3].max(b[3])],
        })
    });
    match union {
        Some(u) if kept.len() >= 20 && plausible_index_box(&u) => {
            let pad = 0.005;
            let r = [(u[0] - pad).max(0.0), (u[1] - pad).max(0.0), u[2] + pad, u[3] + pad];
            return Ok(IndexBox { rect: r.map(|v| (v * 1e4).round() / 1e4), measured: true });
        }
        Some(u) => eprintln!(
            "detections: design {name}: measured index box {u:?} ({} of {} faces) is implausible; using the default {DEFAULT_INDEX_BOX:?}",
            kept.len(),
            boxes.len()
        ),
        None => eprintln!("detections: design {name}: no index ink found; using the default {DEFAULT_INDEX_BOX:?}"),
    }
    Ok(IndexBox { rect: DEFAULT_INDEX_BOX, measured: false })
}

/// The bottom-right index: the top-left one turned 180° about the card's centre.
pub fn rotated_box(r: &[f64; 4]) -> [f64; 4] {
    [1.0 - r[2], 1.0 - r[3], 1.0 - r[0], 1.0 - r[1]]
}

/// A deck's 53 faces rendered once at [`FACE_HEIGHT_PX`], and its index box.
pub struct Deck {
    /// The design.
    pub design: DeckDesign,
    /// Faces in [`Face::index`] order.
    pub images: Vec<Arc<RgbaImage>>,
    /// Card size on the table, mm.
    pub size_mm: [f64; 2],
    /// Where it prints its top-left index.
    pub index: IndexBox,
}

impl Deck {
    /// Loads and renders `design`, and measures its index.
    pub fn new(design: &DeckDesign) -> Result<Deck, SimError> {
        let loaded = design.load()?;
        let images =
            Face::all().map(|f| loaded.render(f, FACE_HEIGHT_PX).map(Arc::new)).collect::<Result<Vec<_>, _>>()?;
        let index = index_box(&design.name, |f| images[f.index()].clone())?;
        Ok(Deck { design: design.clone(), images, size_mm: [88.9 * design.aspect, 88.9], index })
    }
}

/// One design's line of `faces.json` (see [`write_faces`]).
#[derive(Debug, Clone, Serialize)]
pub struct FaceSheet {
    /// The design (also its folder name).
    pub design: String,
    /// Its art family.
    pub family: String,
    /// The split its family belongs to (`train`, `val`, `test`).
    pub split: String,
    /// Card width / height.
    pub aspect: f64,
    /// Where it prints its top-left index.
    pub index: IndexBox,
}

/// Writes `OUT/<design>/<label>.png` for the 53 faces of every design (or of `only`) and
/// `OUT/faces.json`; returns the number of designs. Designs render in parallel.
pub fn write_faces(only: &[String], out: &Path) -> Result<usize, SimError> {
    let catalogue = faces::catalogue();
    let families: Vec<String> = catalogue.iter().map(|d| d.family.clone()).collect();
    let split_of = splits(&families);
    let designs: Vec<DeckDesign> =
        catalogue.into_iter().filter(|d| only.is_empty() || only.contains(&d.name)).collect();
    let next = AtomicUsize::new(0);
    let sheets = Mutex::new(Vec::new());
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(designs.len().max(1));
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| -> Result<(), SimError> {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(d) = designs.get(i) else { return Ok(()) };
                        let deck = Deck::new(d)?;
                        let dir = out.join(&d.name);
                        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
                        for f in Face::all() {
                            let p = dir.join(format!("{}.png", f.label()));
                            deck.images[f.index()]
                                .save(&p)
                                .map_err(|e| io(&p)(std::io::Error::other(e.to_string())))?;
                        }
                        let split = split_of.get(&d.family).copied().unwrap_or("train").to_string();
                        let sheet = FaceSheet {
                            design: d.name.clone(),
                            family: d.family.clone(),
                            split,
                            aspect: d.aspect,
                            index: deck.index.clone(),
                        };
                        sheets.lock().unwrap_or_else(|e| e.into_inner()).push(sheet);
                        eprint!(".");
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .try_for_each(|w| w.join().unwrap_or_else(|_| Err(SimError::Bad("face worker panicked".into()))))
    })?;
    eprintln!();
    let mut sheets = sheets.into_inner().unwrap_or_else(|e| e.into_inner());
    sheets.sort_by(|a, b| a.design.cmp(&b.design));
    let p = out.join("faces.json");
    let json = serde_json::to_string_pretty(&sheets).map_err(|e| SimError::Bad(e.to_string()))?;
    std::fs::write(&p, json).map_err(io(&p))?;
    Ok(sheets.len())
}

/// Writes a picture of each design's A♠ and 10♥ with the index boxes (top-left
/// green, bottom-right magenta; red when the default had to be used).
pub fn index_picture(designs: &[DeckDesign], out: &Path) -> Result<(), SimError> {
    let card_h = 180;
    let cols = 6;
    let (cell_w, cell_h) = (2 * 140 + 30, card_h + 34);
    let rows = designs.len().div_ceil(cols);
    let mut sheet = Mat::new_rows_cols_with_default(
        (rows * cell_h) as i32 + 10,
        (cols * cell_w) as i32 + 10,
        opencv::core::CV_8UC3,
        Scalar::new(52.0, 92.0, 24.0, 0.0),
    )
    .map_err(cv("index picture"))?;
    for (i, d) in designs.iter().enumerate() {
        let deck = Deck::new(d)?;
        let (ox, oy) = (10 + (i % cols) * cell_w, 10 + (i / cols) * cell_h);
        let label = format!("{}{}", d.name, if deck.index.measured { "" } else { " (DEFAULT)" });
        imgproc::put_text(
            &mut sheet,
            &label,
            CvPoint::new(ox as i32, oy as i32 + 14),
            imgproc::FONT_HERSHEY_SIMPLEX,
            0.45,
            Scalar::new(255.0, 255.0, 255.0, 0.0),
            1,
            imgproc::LINE_AA,
            false,
        )
        .map_err(cv("index picture"))?;
        for (k, code) in ["AS", "10H"].iter().enumerate() {
            let card: Card = code.parse().map_err(|_| SimError::Bad("card code".into()))?;
            let img = &deck.images[Face::Card(card).index()];
            let small = image::imageops::resize(
                img.as_ref(),
                (card_h as f64 * img.width() as f64 / img.height() as f64).round() as u32,
                card_h as u32,
                image::imageops::FilterType::Triangle,
            );
            let (x0, y0) = (ox + k * 150, oy + 22);
            for (x, y, p) in small.enumerate_pixels() {
                let a = p[3] as f64 / 255.0;
                let px = sheet
                    .at_2d_mut::<opencv::core::Vec3b>((y0 + y as usize) as i32, (x0 + x as usize) as i32)
                    .map_err(cv("index picture"))?;
                for c in 0..3 {
                    px[c] = (p[2 - c] as f64 * a + px[c] as f64 * (1.0 - a)).round() as u8;
                }
            }
            let (sw, sh) = (small.width() as f64, small.height() as f64);
            let colour =
                if deck.index.measured { Scalar::new(0.0, 200.0, 0.0, 0.0) } else { Scalar::new(0.0, 0.0, 255.0, 0.0) };
            for (r, col) in
                [(deck.index.rect, colour), (rotated_box(&deck.index.rect), Scalar::new(255.0, 0.0, 255.0, 0.0))]
            {
                let rect = Rect::new(
                    x0 as i32 + (r[0] * sw).round() as i32,
                    y0 as i32 + (r[1] * sh).round() as i32,
                    ((r[2] - r[0]) * sw).round() as i32,
                    ((r[3] - r[1]) * sh).round() as i32,
                );
                imgproc::rectangle(&mut sheet, rect, col, 1, imgproc::LINE_8, 0).map_err(cv("index picture"))?;
            }
        }
    }
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let mut buf = Vector::<u8>::new();
    imgcodecs::imencode(".png", &sheet, &mut buf, &Vector::new()).map_err(cv("PNG encode"))?;
    std::fs::write(out, buf.as_slice()).map_err(io(out))?;
    Ok(())
}

// ---------------------------------------------------------------------------
// Scene variety
// ---------------------------------------------------------------------------

/// A camera: 65 % the session cameras of [`random_pose`], 35 % close-ups
/// (lower, narrower, up to 50° tilt, aimed anywhere over the felt) in which
/// cards are 2–5× larger.
fn random_camera(rng: &mut Rng) -> CameraPose {
    if rng.unit_f64() >= 0.35 {
        return random_pose(rng);
    }
    let tilt = rng.unit_f64() * 50.0;
    let hfov = 35.0 + rng.unit_f64() * 25.0;
    let magnify = 2.0 + rng.unit_f64() * 3.0;
    // The session camera covers ~1126 mm of half-width at the target.
    let half_width = 1126.0 / magnify;
    let dist = half_width / (hfov.to_radians() / 2.0).tan();
    let z = dist * tilt.to_radians().cos();
    let ang = rng.unit_f64() * std::f64::consts::PI;
    let r = 150.0 + rng.unit_f64() * 700.0;
    let target = [r * ang.cos() * 0.9, (r * ang.sin()).max(300.0)];
    let back = dist * tilt.to_radians().sin();
    // Lean from behind the dealer mostly, from the side sometimes.
    let dir = -std::f64::consts::FRAC_PI_2 + (rng.unit_f64() - 0.5) * 1.6;
    CameraPose {
        position_mm: [target[0] + back * dir.cos(), target[1] + back * dir.sin(), z],
        target_mm: target,
        hfov_deg: hfov,
        roll_deg: (rng.unit_f64() - 0.5) * 20.0,
    }
}

fn hsv(h: f64, s: f64, v: f64) -> [u8; 3] {
    let h = h.rem_euclid(1.0) * 6.0;
    let i = h.floor();
    let f = h - i;
    let (p, q, t) = (v * (1.0 - s), v * (1.0 - s * f), v * (1.0 - s * (1.0 - f)));
    let (r, g, b) = match i as i32 {
        0 => (v, t, p),
        1 => (q, v, p),
        2 => (p, v, t),
        3 => (p, q, v),
        4 => (t, p, v),
        _ => (v, p, q),
    };
    [r, g, b].map(|c| (c * 255.0).round().clamp(0.0, 255.0) as u8)
}

/// A domain-randomised surface without a printed layout: a felt of any colour
/// (near-black to near-white), wood, a grey desk, a white table or dark cloth.
fn random_surface(rng: &mut Rng) -> TableStyle {
    let textures = [FeltTexture::Baize, FeltTexture::Twill, FeltTexture::Suede];
    let texture = textures[rng.below(3) as usize];
    let (name, felt): (&'static str, [u8; 3]) = match rng.below(6) {
        0 | 1 => ("random-felt", hsv(rng.unit_f64(), 0.2 + rng.unit_f64() * 0.8, 0.06 + rng.unit_f64() * 0.9)),
        2 => ("wood", hsv(0.05 + rng.unit_f64() * 0.06, 0.45 + rng.unit_f64() * 0.35, 0.25 + rng.unit_f64() * 0.5)),
        3 => {
            let g = 70.0 + rng.unit_f64() * 110.0;
            ("grey-desk", [g, g, g * (0.95 + rng.unit_f64() * 0.1)].map(|v| v.min(255.0) as u8))
        }
        4 => {
            let g = 215.0 + rng.unit_f64() * 40.0;
            (
                "white-table",
                [g, g * (0.97 + rng.unit_f64() * 0.03), g * (0.93 + rng.unit_f64() * 0.07)].map(|v| v as u8),
            )
        }
        _ => ("dark-cloth", hsv(rng.unit_f64(), rng.unit_f64() * 0.5, 0.04 + rng.unit_f64() * 0.12)),
    };
    TableStyle {
        name,
        felt_rgb: felt,
        felt_texture: texture,
        texture_seed: rng.next_u64(),
        // Print in the felt's own colour: no visible layout.
        print_rgb: felt,
        accent_rgb: felt,
        rail_rgb: hsv(rng.unit_f64(), rng.unit_f64() * 0.6, 0.05 + rng.unit_f64() * 0.6),
        labels: false,
        hand_boxes: false,
    }
}

/// How a recoloured deck maps its pixels.
#[derive(Debug, Clone, Copy)]
enum Recolour {
    /// Luminance inverted, chroma kept.
    Invert,
    /// Paper → a dark colour, ink → a metal (gold, silver) or other light colour; red ink to a second one.
    DarkStock { paper: [f64; 3], ink: [f64; 3], red: [f64; 3] },
    /// Paper tinted (cream, pastel); ink kept.
    Tint { paper: [f64; 3] },
}

impl Recolour {
    fn random(rng: &mut Rng) -> Recolour {
        match rng.below(3) {
            0 => Recolour::Invert,
            1 => {
                let metals = [[212.0, 175.0, 55.0], [200.0, 200.0, 206.0], [230.0, 200.0, 120.0], [180.0, 120.0, 60.0]];
                let ink = if rng.below(4) == 0 {
                    hsv(rng.unit_f64(), 0.3 + rng.unit_f64() * 0.5, 0.8 + rng.unit_f64() * 0.2).map(|v| v as f64)
                } else {
                    metals[rng.below(4) as usize]
                };
                let red = if rng.below(2) == 0 { ink } else { [220.0, 60.0 + rng.unit_f64() * 60.0, 50.0] };
                let paper = hsv(rng.unit_f64(), rng.unit_f64() * 0.7, 0.03 + rng.unit_f64() * 0.2).map(|v| v as f64);
                Recolour::DarkStock { paper, ink, red }
            }
            _ => Recolour::Tint {
                paper: hsv(rng.unit_f64(), 0.1 + rng.unit_f64() * 0.4, 0.75 + rng.unit_f64() * 0.25).map(|v| v as f64),
            },
        }
    }

    fn apply(&self, img: &RgbaImage, paper_rgb: [u8; 3]) -> RgbaImage {
        let lum = |p: [f64; 3]| 0.299 * p[0] + 0.587 * p[1] + 0.114 * p[2];
        let paper_y = lum(paper_rgb.map(|v| v as f64)).max(40.0);
        let mut out = img.clone();
        for p in out.pixels_mut() {
            let c = [p[0] as f64, p[1] as f64, p[2] as f64];
            let y = lum(c);
            let n: [f64; 3] = match *self {
                Recolour::Invert => {
                    let d = (255.0 - y) - y;
                    c.map(|v| v + d)
                }
                Recolour::DarkStock { paper, ink, red } => {
                    let t = ((paper_y - y) / (paper_y - 15.0).max(1.0)).clamp(0.0, 1.0);
                    let redness = ((c[0] - (c[1] + c[2]) / 2.0) / 120.0).clamp(0.0, 1.0);
                    let target: [f64; 3] = std::array::from_fn(|k| ink[k] * (1.0 - redness) + red[k] * redness);
                    let t = t.max(redness);
                    std::array::from_fn(|k| paper[k] * (1.0 - t) + target[k] * t)
                }
                Recolour::Tint { paper } => std::array::from_fn(|k| c[k] * paper[k] / 255.0),
            };
            for k in 0..3 {
                p[k] = n[k].round().clamp(0.0, 255.0) as u8;
            }
        }
        out
    }
}

/// One table to render images of, with one deck.
struct Job<'a> {
    deck: &'a Deck,
    split: &'static str,
    /// Number within the split (the file name) of its first image.
    first: usize,
    /// Images (scenes) on this table.
    count: usize,
    /// Seeds the table and its scenes.
    seed: u64,
}

/// A card placed on the table before rendering.
struct Placed {
    card: SceneCard,
    face: Face,
}

/// Builds the cards of one image: 3–20 cards in dealt hands, stud fans,
/// scattered singles and piles, some face down, one sometimes lifted.
struct Composer<'a> {
    rng: &'a mut Rng,
    geometry: &'a TableGeometry,
    size_mm: [f64; 2],
    deck: Vec<Card>,
    next: usize,
    placed: Vec<Placed>,
    w: f64,
    h: f64,
    face_for: &'a dyn Fn(Face) -> Arc<RgbaImage>,
}

impl Composer<'_> {
    /// A table point seen in the image, on the felt.
    fn spot(&mut self) -> Option<Point> {
        for _ in 0..40 {
            let u =
                Point::new(self.w * (0.04 + 0.92 * self.rng.unit_f64()), self.h * (0.04 + 0.92 * self.rng.unit_f64()));
            let Some(p) = self.geometry.image_to_table(u) else { continue };
            let on_felt = p.x.hypot(p.y) < layout::TABLE_RADIUS_MM - 40.0 && p.y > 25.0;
            let on_tray = p.x.abs() < 260.0 && p.y < 130.0;
            if on_felt && !on_tray {
                return Some(p);
            }
        }
        None
    }

    fn in_view(&self, p: Point) -> bool {
        self.geometry.table_to_image(p).is_some_and(|u| u.x > 0.0 && u.y > 0.0 && u.x < self.w && u.y < self.h)
    }

    fn push(&mut self, center: Point, angle: f64) {
        let card = self.deck[self.next % 52];
        self.next += 1;
        let face = if self.rng.unit_f64() < 0.15 { Face::Back } else { Face::Card(card) };
        let id = self.placed.len() as u32 + 1;
        self.placed.push(Placed {
            card: SceneCard {
                id,
                image: (self.face_for)(face),
                center_mm: center,
                angle_rad: angle,
                size_mm: self.size_mm,
                height_mm: 0.0,
                velocity_mm_per_frame: [0.0, 0.0],
            },
            face,
        });
    }

    fn jitter(&mut self, s: f64) -> f64 {
        (self.rng.unit_f64() - 0.5) * 2.0 * s
    }

    /// A hand dealt in a hand zone: 1–5 cards side by side or overlapping, neat or sloppy.
    fn hand(&mut self, zones: &[(Point, f64)], room: usize) {
        let (center, axis) = zones[self.rng.below(zones.len() as u32) as usize];
        let n = (1 + self.rng.below(5) as usize).min(room);
        let sloppy = self.rng.below(2) == 0;
        let step = self.size_mm[0] * (0.45 + self.rng.unit_f64() * 0.65);
        let flip = if self.rng.below(2) == 0 { 0.0 } else { std::f64::consts::PI };
        for k in 0..n {
            let off = (k as f64 - (n as f64 - 1.0) / 2.0) * step;
            let (dj, aj) = if sloppy { (8.0, 0.25) } else { (1.5, 0.03) };
            let c = Point::new(
                center.x + off * axis.cos() + self.jitter(dj),
                center.y + off * axis.sin() + self.jitter(dj),
            );
            let a = axis + flip + self.jitter(aj);
            self.push(c, a);
        }
    }

    /// A stud-style fan: 3–5 cards, each later one covering the previous but a
    /// strip of 20–40 % of its width holding its left index.
    fn fan(&mut self, room: usize) {
        let Some(base) = self.spot() else { return };
        let n = (3 + self.rng.below(3) as usize).min(room);
        let a = self.rng.unit_f64() * std::f64::consts::TAU;
        let strip = self.size_mm[0] * (0.2 + self.rng.unit_f64() * 0.2);
        let drift = self.jitter(4.0);
        let (s, c) = a.sin_cos();
        for k in 0..n {
            let (dx, dy) = (k as f64 * strip, k as f64 * drift);
            let p = Point::new(base.x + dx * c - dy * s, base.y + dx * s + dy * c);
            let aj = self.jitter(0.04);
            self.push(p, a + aj);
        }
    }

    /// Single cards anywhere at any angle, sometimes touching the previous one.
    fn scatter(&mut self, room: usize) {
        let n = (1 + self.rng.below(3) as usize).min(room);
        for _ in 0..n {
            let touching = !self.placed.is_empty() && self.rng.below(4) == 0;
            let p = if touching {
                let prev = self.placed.last().map(|p| p.card.center_mm).unwrap_or(Point::new(0.0, 500.0));
                let d = self.size_mm[0] * (0.95 + self.rng.unit_f64() * 0.3);
                let t = self.rng.unit_f64() * std::f64::consts::TAU;
                Point::new(prev.x + d * t.cos(), prev.y + d * t.sin())
            } else {
                match self.spot() {
                    Some(p) => p,
                    None => return,
                }
            };
            let a = self.rng.unit_f64() * std::f64::consts::TAU;
            self.push(p, a);
        }
    }

    /// A small pile: 2–4 cards overlapping heavily at random angles.
    fn pile(&mut self, room: usize) {
        let Some(base) = self.spot() else { return };
        let n = (2 + self.rng.below(3) as usize).min(room);
        for _ in 0..n {
            let p = Point::new(base.x + self.jitter(18.0), base.y + self.jitter(18.0));
            let a = self.rng.unit_f64() * std::f64::consts::TAU;
            self.push(p, a);
        }
    }
}

/// Whether an occluder stays well in front of the camera and near the image:
/// its whole extent (the arm reaches ~0.8 m back from the palm, up to 12 cm
/// above the felt) must project within a few image sizes. Oblique close-ups
/// can otherwise put an arm next to the lens, where its shadow would cover a
/// huge canvas.
fn occluder_fits(geometry: &TableGeometry, o: &Occluder) -> bool {
    let cal = &geometry.calibration;
    let (w, h) = (cal.image_width as f64, cal.image_height as f64);
    let Some(cam) = cal.simulated_pose.map(|p| p.position_mm) else { return false };
    let lift = 130.0;
    if cam[2] < 3.0 * lift {
        return false;
    }
    let back = match o.kind {
        OccluderKind::Hand => 380.0,
        OccluderKind::Arm => 560.0,
    } + 140.0;
    let (s, c) = o.angle_rad.sin_cos();
    let k = o.scale;
    let mut ok = true;
    for (u, v) in [(-back, -60.0), (-back, 60.0), (120.0, -60.0), (120.0, 60.0), (-back / 2.0, 0.0)] {
        let p = Point::new(o.position_mm.x + k * (u * c - v * s), o.position_mm.y + k * (u * s + v * c));
        let f = cam[2] / (cam[2] - lift);
        let lifted = Point::new(cam[0] + (p.x - cam[0]) * f, cam[1] + (p.y - cam[1]) * f);
        for q in [p, lifted] {
            ok &= geometry
                .table_to_image(q)
                .is_some_and(|i| i.x > -1.5 * w && i.x < 2.5 * w && i.y > -1.5 * h && i.y < 2.5 * h);
        }
    }
    ok
}

/// Renders one table's images: a random table, camera and surface, and
/// `job.count` scenes on it (the static table is drawn once per camera).
fn render_table(job: &Job<'_>) -> Result<Vec<(image::RgbImage, ImageAnnotation)>, SimError> {
    let mut rng = Rng::seeded(job.seed);
    let deck = job.deck;
    let sizes = [(1280, 720), (960, 720), (1024, 1024)];
    let (w, h) = sizes[rng.below(3) as usize];
    let mut attempt = 0;
    let (geometry, renderer) = loop {
        attempt += 1;
        let id = RulesetId::ALL[rng.below(RulesetId::ALL.len() as u32) as usize];
        let mut pose = random_camera(&mut rng);
        // Poses are made for 16:9; narrow the view of taller images a little so
        // that the table, not the floor, fills them.
        pose.hfov_deg *= ((w as f64 / h as f64) / (16.0 / 9.0)).sqrt();
        // Half the cameras with barrel distortion, half already corrected.
        let lens = (rng.unit_f64() < 0.5).then(|| (-0.02 - rng.unit_f64() * 0.1, 0.01));
        let mut cal = layout::simulated_calibration(id, "DETECT", w, h, &pose, lens);
        cal.card_size_mm = deck.size_mm;
        let style = if rng.unit_f64() < 0.4 {
            random_surface(&mut rng)
        } else {
            let styles = TableStyle::presets();
            styles[rng.below(styles.len() as u32) as usize].clone()
        };
        let made = cal
            .validate(Path::new("<detections>"))
            .map_err(SimError::from)
            .and_then(|g| Renderer::new(&g, &style, rng.next_u64()).map(|r| (g, r)).map_err(SimError::from));
        match made {
            Ok(ok) => break ok,
            Err(e) if attempt >= 8 => return Err(e),
            Err(_) => continue,
        }
    };
    (0..job.count)
        .map(|k| {
            let number = job.first + k;
            let seed = job.seed ^ (k as u64 + 1).wrapping_mul(0xA24B_AED4_963E_E407);
            render_scene(&geometry, &renderer, deck, job.split, number, &mut Rng::seeded(seed))
        })
        .collect()
}

/// Renders one scene on a table: returns the image and its annotation.
fn render_scene(
    geometry: &TableGeometry,
    renderer: &Renderer,
    deck: &Deck,
    split: &'static str,
    number: usize,
    rng: &mut Rng,
) -> Result<(image::RgbImage, ImageAnnotation), SimError> {
    let (w, h) = (geometry.calibration.image_width, geometry.calibration.image_height);
    let conditions = Conditions::preset(Conditions::PRESETS[rng.below(Conditions::PRESETS.len() as u32) as usize])
        .ok_or_else(|| SimError::Bad("conditions preset".into()))?;

    // The deck's faces, recoloured in a fifth of the images.
    let recolour = (rng.unit_f64() < 0.2).then(|| Recolour::random(rng));
    let cache: Mutex<BTreeMap<usize, Arc<RgbaImage>>> = Mutex::new(BTreeMap::new());
    let paper = paper_colour(&deck.images[0]);
    let face_for = |f: Face| -> Arc<RgbaImage> {
        let original = deck.images[f.index()].clone();
        let Some(r) = recolour else { return original };
        let mut map = cache.lock().unwrap_or_else(|e| e.into_inner());
        map.entry(f.index()).or_insert_with(|| Arc::new(r.apply(&original, paper))).clone()
    };

    let mut cards: Vec<Card> = Card::all().collect();
    rng.shuffle(&mut cards);
    let zones = super::crops::card_zone_axes(geometry);
    let target = 3 + rng.below(18) as usize;
    let mut comp = Composer {
        rng,
        geometry,
        size_mm: deck.size_mm,
        deck: cards,
        next: 0,
        placed: Vec::new(),
        w: w as f64,
        h: h as f64,
        face_for: &face_for,
    };
    let zones: Vec<(Point, f64)> = zones.into_iter().filter(|z| comp.in_view(z.0)).collect();
    let mut tries = 0;
    while comp.placed.len() < target && tries < 40 {
        tries += 1;
        let room = target - comp.placed.len();
        match comp.rng.below(10) {
            0..=2 if !zones.is_empty() => comp.hand(&zones, room),
            0..=4 if room >= 3 => comp.fan(room),
            5..=6 if room >= 2 => comp.pile(room),
            _ => comp.scatter(room),
        }
    }
    let mut placed = std::mem::take(&mut comp.placed);
    // A card being turned (lifted, narrowing) sometimes; motion blur sometimes.
    if !placed.is_empty() && comp.rng.unit_f64() < 0.15 {
        let i = comp.rng.below(placed.len() as u32) as usize;
        let c = &mut placed[i].card;
        c.height_mm = 5.0 + comp.rng.unit_f64() * 35.0;
        c.size_mm[0] *= 0.35 + comp.rng.unit_f64() * 0.65;
    }
    if comp.rng.unit_f64() < 0.15 {
        for p in placed.iter_mut() {
            if comp.rng.below(3) == 0 {
                p.card.velocity_mm_per_frame = [(comp.rng.unit_f64() - 0.5) * 50.0, (comp.rng.unit_f64() - 0.5) * 50.0];
            }
        }
    }
    // Chips, sometimes over a card's corner.
    let mut chips = Vec::new();
    if comp.rng.unit_f64() < 0.35 {
        for _ in 0..1 + comp.rng.below(4) {
            let at = if !placed.is_empty() && comp.rng.below(2) == 0 {
                let c = &placed[comp.rng.below(placed.len() as u32) as usize].card;
                let corner = c.corners_mm()[comp.rng.below(4) as usize];
                let t = 0.6 + comp.rng.unit_f64() * 0.5;
                Point::new(
                    c.center_mm.x + (corner.x - c.center_mm.x) * t,
                    c.center_mm.y + (corner.y - c.center_mm.y) * t,
                )
            } else {
                match comp.spot() {
                    Some(p) => p,
                    None => continue,
                }
            };
            chips.push(ChipStack {
                center_mm: at,
                chips: 1 + comp.rng.below(8) as u8,
                colour_seed: comp.rng.below(1000),
            });
        }
    }
    // The dealer's hands and arms in 40 % of images, sometimes over cards.
    let mut occluders = Vec::new();
    if comp.rng.unit_f64() < 0.4 {
        for _ in 0..1 + comp.rng.below(2) {
            let at = if !placed.is_empty() && comp.rng.below(2) == 0 {
                let c = placed[comp.rng.below(placed.len() as u32) as usize].card.center_mm;
                Point::new(c.x + (comp.rng.unit_f64() - 0.5) * 80.0, c.y + (comp.rng.unit_f64() - 0.5) * 80.0)
            } else {
                match comp.spot() {
                    Some(p) => p,
                    None => continue,
                }
            };
            let o = Occluder {
                kind: if comp.rng.below(2) == 0 { OccluderKind::Hand } else { OccluderKind::Arm },
                position_mm: at,
                angle_rad: std::f64::consts::FRAC_PI_2 + (comp.rng.unit_f64() - 0.5) * 2.0,
                scale: 0.9 + comp.rng.unit_f64() * 0.25,
                appearance_seed: comp.rng.below(1000),
            };
            if occluder_fits(geometry, &o) {
                occluders.push(o);
            }
        }
    }

    let tl: CardRegion = deck.index.rect;
    let br: CardRegion = rotated_box(&tl);
    let regions: Vec<Vec<CardRegion>> =
        placed.iter().map(|p| if matches!(p.face, Face::Card(_)) { vec![tl, br] } else { vec![] }).collect();
    let faces_of: BTreeMap<u32, Face> = placed.iter().map(|p| (p.card.id, p.face)).collect();
    let scene = Scene { cards: placed.into_iter().map(|p| p.card).collect(), chips, occluders };
    let noise_seed = rng.next_u64();
    let render = |scene: &Scene| renderer.render_with_regions(scene, &conditions, noise_seed, &regions);
    // A last resort: should the renderer still fail on an extreme hand or
    // arm (a panic), the scene is rendered without them rather than ending the run.
    let frame = match std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| render(&scene))) {
        Ok(frame) => frame?,
        Err(_) => {
            eprintln!("\ndetections: {split}/{number:06}: rendering failed; rendered again without hands and arms");
            render(&Scene { occluders: Vec::new(), ..scene.clone() })?
        }
    };

    let r2 = |v: f64| (v * 100.0).round() / 100.0;
    let r3 = |v: f64| (v * 1000.0).round() / 1000.0;
    let cards = frame
        .cards
        .iter()
        .map(|t| {
            let face = faces_of.get(&t.id).copied().unwrap_or(Face::Back);
            CardAnnotation {
                card: face.label(),
                face_up: matches!(face, Face::Card(_)),
                quad: t.quad_px.map(|p| [r2(p.x), r2(p.y)]),
                visible: r3(t.visible_fraction),
                corners: t
                    .regions
                    .iter()
                    .map(|r| {
                        let xs = r.quad_px.map(|p| p.x);
                        let ys = r.quad_px.map(|p| p.y);
                        let min = |v: [f64; 4]| v.iter().copied().fold(f64::INFINITY, f64::min);
                        let max = |v: [f64; 4]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                        CornerAnnotation {
                            bbox: [r2(min(xs)), r2(min(ys)), r2(max(xs)), r2(max(ys))],
                            visible: r3(r.visible_fraction),
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    let ann = ImageAnnotation {
        image: format!("{split}/{number:06}.jpg"),
        split: split.to_string(),
        design: deck.design.name.clone(),
        family: deck.design.family.clone(),
        width: w,
        height: h,
        cards,
    };
    Ok((frame.image, ann))
}

/// Encodes as JPEG at `quality`.
fn jpeg_bytes(img: &image::RgbImage, quality: i32) -> Result<Vec<u8>, SimError> {
    let m = to_bgr_mat(img)?;
    let mut buf = Vector::<u8>::new();
    let params = Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality]);
    imgcodecs::imencode(".jpg", &m, &mut buf, &params).map_err(cv("JPEG encode"))?;
    Ok(buf.to_vec())
}

/// Generates the dataset described by `args` (not `index_picture`).
pub fn generate(args: &DetectionsArgs) -> Result<Summary, SimError> {
    let started = Instant::now();
    let catalogue = faces::catalogue();
    let families: Vec<String> = catalogue.iter().map(|d| d.family.clone()).collect();
    let split_of = splits(&families);
    let mut designs = catalogue.clone();
    if !args.designs.is_empty() {
        designs.retain(|d| args.designs.contains(&d.name));
        if designs.is_empty() {
            return Err(SimError::Bad(format!(
                "none of the designs {:?} exists; see docs/images/card_designs.png",
                args.designs
            )));
        }
    }
    let counts = [args.train, args.val, args.test];
    for split in SPLITS {
        let dir = args.out.join(split);
        std::fs::create_dir_all(&dir).map_err(io(&dir))?;
    }
    let threads = args.threads.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get())).max(1);
    let total: usize = SPLITS
        .iter()
        .zip(counts)
        .filter(|(s, _)| designs.iter().any(|d| split_of.get(&d.family).copied() == Some(**s)))
        .map(|(_, n)| n as usize)
        .sum();
    let mut summary = Summary { seed: args.seed, scenes_per_table: args.scenes_per_table, ..Default::default() };
    // Annotations are written as each deck's block is done (in order), so an
    // interrupted run keeps what it finished.
    let ap = args.out.join("annotations.jsonl");
    let mut annotations = std::io::BufWriter::new(std::fs::File::create(&ap).map_err(io(&ap))?);
    let done = AtomicUsize::new(0);
    let last_report = Mutex::new(Instant::now());
    let report = |force: bool| {
        let mut last = last_report.lock().unwrap_or_else(|e| e.into_inner());
        if force || last.elapsed().as_secs_f64() >= 3.0 {
            *last = Instant::now();
            let n = done.load(Ordering::Relaxed);
            let t = started.elapsed().as_secs_f64();
            eprint!("\rdetections: {n}/{total} images, {:.1} images/s, {t:.0} s   ", n as f64 / t.max(1e-3));
        }
    };
    for (si, split) in SPLITS.iter().enumerate() {
        let of_split: Vec<&DeckDesign> =
            designs.iter().filter(|d| split_of.get(&d.family).copied() == Some(*split)).collect();
        let n = counts[si] as usize;
        if n == 0 {
            continue;
        }
        if of_split.is_empty() {
            eprintln!("detections: no design of the {split} split is selected; skipping its {n} images");
            continue;
        }
        // Images in contiguous blocks per design, so that each deck is rendered once.
        for (di, design) in of_split.iter().enumerate() {
            let (first, end) = (di * n / of_split.len(), (di + 1) * n / of_split.len());
            if first == end {
                continue;
            }
            let deck = Deck::new(design)?;
            summary.index_boxes.insert(design.name.clone(), deck.index.clone());
            let fams = summary.families_by_split.entry(split.to_string()).or_default();
            if !fams.contains(&design.family) {
                fams.push(design.family.clone());
            }
            summary.designs_by_split.entry(split.to_string()).or_default().push(design.name.clone());
            let per_table = args.scenes_per_table.max(1) as usize;
            let jobs: Vec<Job<'_>> = (first..end)
                .step_by(per_table)
                .map(|number| Job {
                    deck: &deck,
                    split,
                    first: number,
                    count: per_table.min(end - number),
                    seed: args.seed.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                        ^ ((si as u64) << 40 | number as u64).wrapping_add(1).wrapping_mul(0xD1B5_4A32_D192_ED03),
                })
                .collect();
            type Lines = Result<Vec<String>, SimError>;
            let results: Vec<Mutex<Option<Lines>>> = jobs.iter().map(|_| Mutex::new(None)).collect();
            let next = AtomicUsize::new(0);
            std::thread::scope(|s| {
                for _ in 0..threads.min(jobs.len()) {
                    s.spawn(|| loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(job) = jobs.get(i) else { break };
                        let r = (|| {
                            let mut lines = Vec::with_capacity(job.count);
                            for (k, (img, ann)) in render_table(job)?.into_iter().enumerate() {
                                // JPEG quality 75..=95, drawn per image.
                                let quality = 75 + Rng::seeded(job.seed ^ ((k as u64 + 1) << 48)).below(21) as i32;
                                let path = args.out.join(&ann.image);
                                std::fs::write(&path, jpeg_bytes(&img, quality)?).map_err(io(&path))?;
                                lines.push(serde_json::to_string(&ann).map_err(|e| SimError::Bad(e.to_string()))?);
                                done.fetch_add(1, Ordering::Relaxed);
                                report(false);
                            }
                            Ok(lines)
                        })();
                        *results[i].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                    });
                }
            });
            for (job, r) in jobs.iter().zip(results) {
                let table = r
                    .into_inner()
                    .unwrap_or_else(|e| e.into_inner())
                    .unwrap_or_else(|| Err(SimError::Bad("internal: a table was not rendered".into())))?;
                for line in table {
                    let cards = line.matches("\"face_up\"").count() as u64;
                    *summary.images_by_split.entry(job.split.to_string()).or_default() += 1;
                    *summary.cards_by_split.entry(job.split.to_string()).or_default() += cards;
                    writeln!(annotations, "{line}").map_err(io(&ap))?;
                }
            }
            annotations.flush().map_err(io(&ap))?;
        }
    }
    report(true);
    eprintln!();
    annotations.flush().map_err(io(&ap))?;
    summary.elapsed_s = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let sp = args.out.join("summary.json");
    std::fs::write(&sp, serde_json::to_string_pretty(&summary).map_err(|e| SimError::Bad(e.to_string()))?)
        .map_err(io(&sp))?;
    Ok(summary)
}

/// Runs `tablecam simulate detections`.
pub fn run_cli(args: &DetectionsArgs) -> Result<(), SimError> {
    if let Some(out) = &args.faces {
        let n = write_faces(&args.designs, out)?;
        println!("{}: faces of {n} designs", out.display());
        return Ok(());
    }
    if let Some(out) = &args.index_picture {
        let mut designs = faces::catalogue();
        if !args.designs.is_empty() {
            designs.retain(|d| args.designs.contains(&d.name));
        }
        index_picture(&designs, out)?;
        println!("{}: index boxes of {} designs", out.display(), designs.len());
        return Ok(());
    }
    let s = generate(args)?;
    println!(
        "{}: {:?} images, {:?} cards, {:.0} s",
        args.out.display(),
        s.images_by_split,
        s.cards_by_split,
        s.elapsed_s
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_design_has_a_plausible_index_box() {
        for d in faces::catalogue() {
            let deck = Deck::new(&d).unwrap();
            assert!(deck.index.measured, "{}: index box not measured", d.name);
            assert!(plausible_index_box(&deck.index.rect), "{}: {:?}", d.name, deck.index.rect);
        }
    }

    #[test]
    fn three_images_are_annotated_consistently() {
        let out = std::env::temp_dir().join(format!("tablecam-detections-test-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&out);
        let args = DetectionsArgs {
            out: out.clone(),
            seed: 5,
            train: 1,
            val: 1,
            test: 1,
            designs: vec![],
            scenes_per_table: 1,
            threads: Some(2),
            index_picture: None,
            faces: None,
        };
        let summary = generate(&args).unwrap();
        assert_eq!(summary.images_by_split.values().sum::<u64>(), 3);
        let families: Vec<String> = faces::catalogue().iter().map(|d| d.family.clone()).collect();
        let split_of = splits(&families);
        let text = std::fs::read_to_string(out.join("annotations.jsonl")).unwrap();
        let anns: Vec<ImageAnnotation> = text.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(anns.len(), 3);
        let mut cards = 0;
        for a in &anns {
            assert_eq!(split_of[&a.family], a.split, "{}", a.image);
            assert!(a.image.starts_with(&format!("{}/", a.split)));
            let img = image::open(out.join(&a.image)).unwrap();
            assert_eq!((img.width(), img.height()), (a.width, a.height));
            assert!(!a.cards.is_empty(), "{}: no cards", a.image);
            let (w, h) = (a.width as f64, a.height as f64);
            for c in &a.cards {
                cards += 1;
                assert!((0.0..=1.0).contains(&c.visible), "{c:?}");
                let xs = c.quad.map(|p| p[0]);
                let ys = c.quad.map(|p| p[1]);
                let (x0, x1) =
                    (xs.iter().copied().fold(f64::MAX, f64::min), xs.iter().copied().fold(f64::MIN, f64::max));
                let (y0, y1) =
                    (ys.iter().copied().fold(f64::MAX, f64::min), ys.iter().copied().fold(f64::MIN, f64::max));
                if c.visible > 0.0 {
                    assert!(x1 > -2.0 && y1 > -2.0 && x0 < w + 2.0 && y0 < h + 2.0, "{c:?} outside {w}×{h}");
                }
                assert!(x0 > -3.0 * w && x1 < 4.0 * w && y0 > -3.0 * h && y1 < 4.0 * h, "{c:?} far outside");
                if c.face_up {
                    assert_eq!(c.corners.len(), 2, "{c:?}");
                    assert!(c.card.parse::<Card>().is_ok(), "{}", c.card);
                } else {
                    assert!(c.corners.is_empty(), "{c:?}");
                    assert_eq!(c.card, "back");
                }
                for k in &c.corners {
                    let b = k.bbox;
                    assert!((0.0..=1.0).contains(&k.visible), "{k:?}");
                    assert!(b[0] < b[2] && b[1] < b[3], "{k:?}");
                    let tol = 1.0;
                    assert!(
                        b[0] >= x0 - tol && b[2] <= x1 + tol && b[1] >= y0 - tol && b[3] <= y1 + tol,
                        "{k:?} not inside the card's box {:?}",
                        [x0, y0, x1, y1]
                    );
                    // An index cannot be more visible than allowed by the card's own visibility
                    // when the card is entirely hidden.
                    if c.visible == 0.0 {
                        assert_eq!(k.visible, 0.0, "{c:?}");
                    }
                }
            }
        }
        assert!(cards >= 9, "{cards} cards in 3 images");
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["seed"], 5);
        let _ = std::fs::remove_dir_all(&out);
    }

    #[test]
    #[ignore]
    fn debug_index_boxes() {
        let name = std::env::var("DESIGN").unwrap_or("kde-jolly-royal".into());
        let d = faces::design(&name).unwrap();
        let deck = d.load().unwrap();
        for card in Card::all() {
            let img = deck.render(Face::Card(card), FACE_HEIGHT_PX).unwrap();
            println!("{} {:?}", card.code(), face_index_box(&img).unwrap());
        }
    }
}
