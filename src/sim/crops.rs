//! `tablecam simulate crops`: a labelled dataset of rectified card crops —
//! 52 faces, `back` and `unknown` (felt, chips, print: not a card) — cut from
//! rendered table frames, split train/val/test by deck **art family** so that
//! the test designs are never seen in training.
//!
//! Layout: `OUT/{train,val,test}/LABEL/DESIGN-NNNNN.png` and `OUT/labels.csv`
//! (`path,label,design,family,split,visibility`), plus `OUT/summary.json`.
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use opencv::core::{Mat, Point2f, Size, Vector};
use opencv::{imgcodecs, imgproc};
use serde::Serialize;

use super::faces::{self, DeckDesign, Face};
use super::render::{Conditions, Occluder, OccluderKind, Renderer, Scene, SceneCard, TableStyle};
use super::session::{random_pose, to_bgr_mat, FaceSet, SimError};
use crate::calib::{layout, Point, ZoneKind};
use crate::rng::Rng;
use crate::rules::{Card, RulesetId};

/// Crop size in pixels (width × height), the classifier's input.
pub const CROP_SIZE: (i32, i32) = (64, 88);
/// Crops of cards less visible than this are not labelled.
pub const MIN_VISIBILITY: f64 = 0.5;

/// Arguments of `tablecam simulate crops`.
#[derive(Debug, Clone, clap::Args)]
pub struct CropsArgs {
    /// Output folder (git-ignored bulk data).
    #[arg(long, default_value = "datasets/generated/crops")]
    pub out: PathBuf,
    /// Random tables per deck design.
    #[arg(long, default_value_t = 4)]
    pub frames_per_design: u32,
    /// Scenes rendered on each table.
    #[arg(long, default_value_t = 4)]
    pub scenes_per_table: u32,
    /// Seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Only these designs (comma-separated names), e.g. for a quick sample.
    #[arg(long, value_delimiter = ',')]
    pub designs: Vec<String>,
}

/// Which split each family goes to: families ordered by a stable hash of their
/// name (FNV-1a), the first fifth to `test`, the next sixth to `val`, the rest
/// to `train` — always all three splits, and never one family in two splits.
pub fn splits(families: &[String]) -> BTreeMap<String, &'static str> {
    let fnv = |f: &str| f.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3));
    let mut unique: Vec<&String> = families.iter().collect();
    unique.sort_by_key(|f| (fnv(f), f.as_str()));
    unique.dedup();
    let n = unique.len();
    let n_test = n.div_ceil(5).max(1);
    let n_val = n.div_ceil(6).max(1);
    unique
        .into_iter()
        .enumerate()
        .map(|(i, f)| {
            (
                f.clone(),
                if i < n_test {
                    "test"
                } else if i < n_test + n_val {
                    "val"
                } else {
                    "train"
                },
            )
        })
        .collect()
}

#[derive(Serialize, Default)]
struct Summary {
    crops: u64,
    by_split: BTreeMap<String, u64>,
    by_label: BTreeMap<String, u64>,
    families_by_split: BTreeMap<String, Vec<String>>,
}

/// Runs `tablecam simulate crops`.
pub fn run_cli(args: &CropsArgs) -> Result<(), SimError> {
    let mut designs: Vec<DeckDesign> = faces::catalogue();
    if !args.designs.is_empty() {
        designs.retain(|d| args.designs.contains(&d.name));
        if designs.is_empty() {
            return Err(SimError::Bad(format!(
                "none of the designs {:?} exists; see docs/images/card_designs.png",
                args.designs
            )));
        }
    }
    std::fs::create_dir_all(&args.out).map_err(|source| SimError::Io { path: args.out.clone(), source })?;
    let csv_path = args.out.join("labels.csv");
    let mut csv = std::io::BufWriter::new(
        std::fs::File::create(&csv_path).map_err(|source| SimError::Io { path: csv_path.clone(), source })?,
    );
    writeln!(csv, "path,label,design,family,split,visibility")
        .map_err(|source| SimError::Io { path: csv_path.clone(), source })?;
    let mut summary = Summary::default();
    let families: Vec<String> = faces::catalogue().iter().map(|d| d.family.clone()).collect();
    let split_by_family = splits(&families);
    let started = std::time::Instant::now();
    for (di, design) in designs.iter().enumerate() {
        let split = split_by_family.get(&design.family).copied().unwrap_or("train");
        let fams = summary.families_by_split.entry(split.to_string()).or_default();
        if !fams.contains(&design.family) {
            fams.push(design.family.clone());
        }
        let deck = design.load()?;
        let faceset = Arc::new(FaceSet::new(&deck, design.aspect, 200)?);
        let mut rng = Rng::seeded(args.seed ^ (di as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15));
        for f in 0..args.frames_per_design {
            let crops =
                render_crops(design, &faceset, &mut rng, args.seed.wrapping_add(f as u64 * 64), args.scenes_per_table)?;
            for (k, crop) in crops.into_iter().enumerate() {
                let dir = args.out.join(split).join(&crop.label);
                std::fs::create_dir_all(&dir).map_err(|source| SimError::Io { path: dir.clone(), source })?;
                let name = format!("{}-{:03}-{:03}.png", design.name, f, k);
                let path = dir.join(&name);
                let mut buf = Vector::<u8>::new();
                imgcodecs::imencode(".png", &crop.image, &mut buf, &Vector::new()).map_err(cv("PNG encode"))?;
                std::fs::write(&path, buf.as_slice()).map_err(|source| SimError::Io { path: path.clone(), source })?;
                writeln!(
                    csv,
                    "{split}/{}/{name},{},{},{},{split},{:.3}",
                    crop.label, crop.label, design.name, design.family, crop.visibility
                )
                .map_err(|source| SimError::Io { path: csv_path.clone(), source })?;
                summary.crops += 1;
                *summary.by_split.entry(split.to_string()).or_default() += 1;
                *summary.by_label.entry(crop.label.clone()).or_default() += 1;
            }
        }
        eprint!(
            "\rcrops: {}/{} designs, {} crops, {:.0} s",
            di + 1,
            designs.len(),
            summary.crops,
            started.elapsed().as_secs_f64()
        );
    }
    eprintln!();
    csv.flush().map_err(|source| SimError::Io { path: csv_path.clone(), source })?;
    let sp = args.out.join("summary.json");
    std::fs::write(&sp, serde_json::to_string_pretty(&summary).map_err(|e| SimError::Bad(e.to_string()))?)
        .map_err(|source| SimError::Io { path: sp.clone(), source })?;
    println!("{}: {} crops ({:?})", args.out.display(), summary.crops, summary.by_split);
    Ok(())
}

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> SimError + '_ {
    move |source| SimError::OpenCv { context: context.to_string(), source }
}

/// One labelled crop.
pub struct Crop {
    /// `AS`, `10H`, `back` or `unknown`.
    pub label: String,
    /// BGR image of [`CROP_SIZE`].
    pub image: Mat,
    /// Visible fraction of the card (1 for `unknown`).
    pub visibility: f64,
}

/// Renders `scenes` random frames of one random table (ruleset, camera, felt,
/// conditions) with cards of `design`, and cuts the crops. The table's static
/// background is drawn once per call, so several scenes per table are cheap.
pub fn render_crops(
    design: &DeckDesign,
    faceset: &FaceSet,
    rng: &mut Rng,
    frame_seed: u64,
    scenes: u32,
) -> Result<Vec<Crop>, SimError> {
    let id = RulesetId::ALL[rng.below(5) as usize];
    let (w, h) = if rng.below(2) == 0 { (1280, 720) } else { (1920, 1080) };
    let pose = random_pose(rng);
    let mut cal = layout::simulated_calibration(id, "CROPS", w, h, &pose, Some((-0.02 - rng.unit_f64() * 0.1, 0.01)));
    cal.card_size_mm = faceset.size_mm;
    let geometry = cal.validate(std::path::Path::new("<crops>"))?;
    let styles = TableStyle::presets();
    let style = &styles[rng.below(styles.len() as u32) as usize];
    let renderer = Renderer::new(&geometry, style, frame_seed)?;
    let mut crops = Vec::new();
    for scene_no in 0..scenes {
        let conditions = Conditions::preset(Conditions::PRESETS[rng.below(Conditions::PRESETS.len() as u32) as usize])
            .ok_or_else(|| SimError::Bad("conditions preset".into()))?;

        // Cards in the hand zones, overlapping like dealt hands, mostly face up.
        let mut deck: Vec<Card> = Card::all().collect();
        rng.shuffle(&mut deck);
        let zones = card_zone_axes(&geometry);
        let mut cards = Vec::new();
        let mut faces_of = Vec::new();
        let mut next = 0;
        for (center, angle) in zones {
            let n = 1 + rng.below(3) as usize;
            for k in 0..n {
                let card = deck[next % 52];
                next += 1;
                let face = if rng.below(7) == 0 { Face::Back } else { Face::Card(card) };
                let off = (k as f64 - (n as f64 - 1.0) / 2.0) * faceset.size_mm[0] * (0.45 + rng.unit_f64() * 0.5);
                let a =
                    angle + (rng.unit_f64() - 0.5) * 0.5 + if rng.below(2) == 0 { 0.0 } else { std::f64::consts::PI };
                cards.push(SceneCard {
                    id: cards.len() as u32 + 1,
                    image: faceset.image(face),
                    center_mm: Point::new(center.x + off * angle.cos(), center.y + off * angle.sin()),
                    angle_rad: a,
                    size_mm: faceset.size_mm,
                    height_mm: 0.0,
                    velocity_mm_per_frame: if rng.below(8) == 0 {
                        [rng.unit_f64() * 20.0, rng.unit_f64() * 10.0]
                    } else {
                        [0.0, 0.0]
                    },
                });
                faces_of.push(face);
            }
        }
        let occluders = if rng.below(2) == 0 {
            let c = cards[rng.below(cards.len() as u32) as usize].center_mm;
            vec![Occluder {
                kind: OccluderKind::Hand,
                position_mm: Point::new(c.x, c.y - 60.0),
                angle_rad: std::f64::consts::FRAC_PI_2,
                scale: 1.0,
                appearance_seed: rng.below(1000),
            }]
        } else {
            vec![]
        };
        let scene = Scene { cards, chips: vec![], occluders };
        let frame = renderer.render(&scene, &conditions, frame_seed.wrapping_add(scene_no as u64))?;
        let image = to_bgr_mat(&frame.image)?;
        for (truth, face) in frame.cards.iter().zip(&faces_of) {
            if truth.visible_fraction < MIN_VISIBILITY {
                continue;
            }
            let label = match face {
                Face::Card(c) => c.code(),
                Face::Back => "back".to_string(),
            };
            crops.push(Crop { label, image: rectify(&image, &truth.quad_px)?, visibility: truth.visible_fraction });
        }
        // A few `unknown` crops: card-sized patches of table with no card in them.
        for _ in 0..2 {
            let c = Point::new((rng.unit_f64() - 0.5) * 1600.0, 100.0 + rng.unit_f64() * 800.0);
            if scene.cards.iter().any(|s| s.center_mm.dist(c) < 120.0) {
                continue;
            }
            let probe = SceneCard {
                id: 0,
                image: faceset.image(Face::Back),
                center_mm: c,
                angle_rad: rng.unit_f64() * 6.3,
                size_mm: faceset.size_mm,
                height_mm: 0.0,
                velocity_mm_per_frame: [0.0, 0.0],
            };
            let quad: Vec<Point> = probe.corners_mm().iter().filter_map(|&p| geometry.table_to_image(p)).collect();
            if quad.len() == 4
                && quad.iter().all(|p| p.x > 0.0 && p.y > 0.0 && p.x < w as f64 - 1.0 && p.y < h as f64 - 1.0)
            {
                crops.push(Crop {
                    label: "unknown".into(),
                    image: rectify(&image, &[quad[0], quad[1], quad[2], quad[3]])?,
                    visibility: 1.0,
                });
            }
        }
    }
    let _ = design;
    Ok(crops)
}

/// Centre and direction (radians, along the polygon's first edge) of every zone that holds cards:
/// hands, the dealer's hand and the community cards.
pub(crate) fn card_zone_axes(geometry: &crate::calib::TableGeometry) -> Vec<(Point, f64)> {
    geometry
        .calibration
        .zones
        .iter()
        .filter(|z| matches!(z.kind, ZoneKind::Hand { .. } | ZoneKind::DealerHand | ZoneKind::Community))
        .map(|z| {
            let v = &z.polygon_mm.0;
            (z.polygon_mm.centroid(), (v[1].y - v[0].y).atan2(v[1].x - v[0].x))
        })
        .collect()
}

/// Warps the image region inside `quad` (top-left, top-right, bottom-right,
/// bottom-left of the card) to an upright crop of [`CROP_SIZE`].
pub fn rectify(image: &Mat, quad: &[Point; 4]) -> Result<Mat, SimError> {
    let (cw, ch) = CROP_SIZE;
    let src: Vector<Point2f> = quad.iter().map(|p| Point2f::new(p.x as f32, p.y as f32)).collect();
    let dst: Vector<Point2f> = [(0.0, 0.0), (cw as f32, 0.0), (cw as f32, ch as f32), (0.0, ch as f32)]
        .iter()
        .map(|&(x, y)| Point2f::new(x, y))
        .collect();
    let m = imgproc::get_perspective_transform(&src, &dst, opencv::core::DECOMP_LU).map_err(cv("crop transform"))?;
    let mut out = Mat::default();
    imgproc::warp_perspective(
        image,
        &mut out,
        &m,
        Size::new(cw, ch),
        imgproc::INTER_AREA,
        opencv::core::BORDER_REPLICATE,
        opencv::core::Scalar::all(0.0),
    )
    .map_err(cv("crop warp"))?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use opencv::prelude::*;

    use super::*;

    #[test]
    fn splits_are_by_family_and_cover_all_three() {
        let families: Vec<String> = faces::catalogue().iter().map(|d| d.family.clone()).collect();
        let by_family = splits(&families);
        let used: std::collections::BTreeSet<&str> = by_family.values().copied().collect();
        assert_eq!(used.into_iter().collect::<Vec<_>>(), ["test", "train", "val"], "{by_family:?}");
        // Designs of one family (e.g. Bellot's paris/bellot/gm-paris) share a split by construction:
        // the map is keyed by family. And the assignment is stable.
        assert_eq!(by_family, splits(&families));
    }

    #[test]
    fn crops_are_labelled_and_of_the_classifier_size() {
        let design = faces::catalogue().into_iter().next().unwrap();
        let faceset = FaceSet::new(&design.load().unwrap(), design.aspect, 160).unwrap();
        let crops = render_crops(&design, &faceset, &mut Rng::seeded(2), 2, 1).unwrap();
        assert!(crops.len() >= 5, "{} crops", crops.len());
        for c in &crops {
            assert_eq!((c.image.cols(), c.image.rows()), CROP_SIZE);
            assert!(c.label == "back" || c.label == "unknown" || c.label.parse::<Card>().is_ok(), "{}", c.label);
            assert!(c.visibility >= MIN_VISIBILITY);
        }
    }
}
