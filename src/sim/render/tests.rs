//! Renderer tests: truth matches pixels, occlusion, lens, determinism,
//! presets, the contact sheet and a speed measurement.
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use super::*;
use crate::calib::layout::{self, default_pose, simulated_calibration, standard_zones};
use crate::calib::{CameraPose, ZoneKind};
use crate::rng::Rng;
use crate::rules::RulesetId;

fn geometry(ruleset: RulesetId, w: u32, h: u32, pose: &CameraPose, radial: Option<(f64, f64)>) -> TableGeometry {
    simulated_calibration(ruleset, "T1", w, h, pose, radial).validate(Path::new("<sim>")).expect("valid calibration")
}

/// Conditions without any photometric change, for pixel checks.
fn clean() -> Conditions {
    Conditions { noise_sigma: 0.0, vignette: 0.0, blur_sigma_px: 0.0, ..Conditions::default() }
}

fn white_card() -> Arc<image::RgbaImage> {
    Arc::new(placeholder_face("", false, layout::CARD_SIZE_MM).expect("placeholder"))
}

fn card(id: u32, image: Arc<image::RgbaImage>, c: Point, angle: f64) -> SceneCard {
    SceneCard {
        id,
        image,
        center_mm: c,
        angle_rad: angle,
        size_mm: layout::CARD_SIZE_MM,
        height_mm: 0.0,
        velocity_mm_per_frame: [0.0, 0.0],
    }
}

fn pixel(img: &image::RgbImage, p: Point) -> [u8; 3] {
    img.get_pixel(p.x.round() as u32, p.y.round() as u32).0
}

fn is_card_white(px: [u8; 3]) -> bool {
    let (mx, mn) = (*px.iter().max().unwrap(), *px.iter().min().unwrap());
    mn > 170 && mx - mn < 40
}

/// Points inside the card, away from its edges, in table mm.
fn inner_points(c: &SceneCard) -> Vec<Point> {
    let (s, co) = c.angle_rad.sin_cos();
    let (hw, hh) = (c.size_mm[0] / 2.0, c.size_mm[1] / 2.0);
    [(0.0, 0.0), (-0.6, -0.6), (0.6, -0.6), (0.6, 0.6), (-0.6, 0.6), (0.0, 0.5), (0.3, -0.2)]
        .iter()
        .map(|&(fx, fy)| {
            let (x, y) = (fx * hw, fy * hh);
            Point::new(c.center_mm.x + x * co - y * s, c.center_mm.y + x * s + y * co)
        })
        .collect()
}

#[test]
fn a_card_is_drawn_where_its_truth_says_and_occlusion_is_counted() {
    let target = Point::new(0.0, 600.0);
    let pose = CameraPose { position_mm: [0.0, 600.0, 1900.0], target_mm: [0.0, 600.0], hfov_deg: 70.0, roll_deg: 0.0 };
    let g = geometry(RulesetId::Fortune3cp2025, 1280, 720, &pose, None);
    let r = Renderer::new(&g, &TableStyle::green(), 1).unwrap();
    let c = card(7, white_card(), target, 0.3);
    let scene = Scene { cards: vec![c.clone()], ..Default::default() };
    let f = r.render(&scene, &clean(), 1).unwrap();
    assert_eq!(f.cards.len(), 1);
    let t = &f.cards[0];
    assert_eq!(t.id, 7);
    for (q, p) in t.quad_px.iter().zip(c.corners_mm()) {
        let expect = g.table_to_image(p).unwrap();
        assert!(q.dist(expect) < 0.5, "{q:?} vs {expect:?}");
    }
    assert!(t.visible_fraction > 0.999, "{}", t.visible_fraction);
    for p in inner_points(&c) {
        let px = pixel(&f.image, g.table_to_image(p).unwrap());
        assert!(is_card_white(px), "inside the card at {p:?}: {px:?}");
    }
    // Just outside each edge the felt shows.
    for (dx, dy) in [(0.0, -55.0), (0.0, 55.0), (-42.0, 0.0), (42.0, 0.0)] {
        let (s, co) = c.angle_rad.sin_cos();
        let p = Point::new(target.x + dx * co - dy * s, target.y + dx * s + dy * co);
        let px = pixel(&f.image, g.table_to_image(p).unwrap());
        assert!(!is_card_white(px), "outside the card at {p:?}: {px:?}");
    }

    // An arm whose sleeve edge runs through the card's centre hides half of it.
    let c0 = card(7, white_card(), target, 0.0);
    let sleeve_radius = 40.0 + 10.0 * (300.0 - 78.0) / 560.0;
    let arm = Occluder {
        kind: OccluderKind::Arm,
        position_mm: Point::new(300.0, target.y - sleeve_radius),
        angle_rad: 0.0,
        scale: 1.0,
        appearance_seed: 3,
    };
    let scene = Scene { cards: vec![c0.clone()], occluders: vec![arm], ..Default::default() };
    let f = r.render(&scene, &clean(), 1).unwrap();
    let v = f.cards[0].visible_fraction;
    assert!((v - 0.5).abs() < 0.1, "visible fraction {v}");
    // The uncovered half is still card-white.
    let p = Point::new(target.x, target.y + 25.0);
    assert!(is_card_white(pixel(&f.image, g.table_to_image(p).unwrap())));
    let p = Point::new(target.x, target.y - 25.0);
    assert!(!is_card_white(pixel(&f.image, g.table_to_image(p).unwrap())), "covered half");

    // A later card over the earlier one hides it; chips hide a little more.
    let c1 = card(8, white_card(), Point::new(target.x + 40.0, target.y), 0.0);
    let stack = ChipStack { center_mm: Point::new(target.x - 30.0, target.y + 40.0), chips: 4, colour_seed: 2 };
    let scene = Scene { cards: vec![c0.clone(), c1], chips: vec![stack], ..Default::default() };
    let f = r.render(&scene, &clean(), 1).unwrap();
    let (a, b) = (f.cards[0].visible_fraction, f.cards[1].visible_fraction);
    let uncovered = (40.0 - 0.0) / 63.5; // the part of card 7 left of card 8
    assert!(a < uncovered && a > uncovered - 0.2, "first card {a} (≤ {uncovered} minus the chips)");
    assert!(b > 0.999, "top card {b}");
}

#[test]
fn with_lens_distortion_the_truth_still_matches_the_drawn_card() {
    let pose = default_pose();
    let g = geometry(RulesetId::Stud2004, 1280, 720, &pose, Some((-0.32, 0.09)));
    let lens = g.calibration.lens.unwrap();
    let r = Renderer::new(&g, &TableStyle::blue(), 2).unwrap();
    // Cards near the image corners, where the lens bends most.
    let inv = g.calibration.table_to_image.inverse().unwrap();
    let mut cards = Vec::new();
    for (i, (fx, fy)) in [(0.13, 0.2), (0.87, 0.2), (0.15, 0.82), (0.85, 0.8), (0.5, 0.5)].iter().enumerate() {
        let target = lens.undistort(Point::new(fx * 1280.0, fy * 720.0));
        cards.push(card(i as u32, white_card(), inv.apply(target).unwrap(), 0.2 * i as f64));
    }
    let f = r.render(&Scene { cards: cards.clone(), ..Default::default() }, &clean(), 3).unwrap();
    assert_eq!(f.cards.len(), cards.len());
    let mut max_bend: f64 = 0.0;
    for (c, t) in cards.iter().zip(&f.cards) {
        assert!(t.visible_fraction > 0.99, "card {}: {}", c.id, t.visible_fraction);
        for (q, p) in t.quad_px.iter().zip(c.corners_mm()) {
            assert!(q.dist(g.table_to_image(p).unwrap()) < 0.5);
        }
        for p in inner_points(c) {
            let at = g.table_to_image(p).unwrap();
            assert!(is_card_white(pixel(&f.image, at)), "card {} at {at:?}: {:?}", c.id, pixel(&f.image, at));
        }
        let centre = g.table_to_image(c.center_mm).unwrap();
        max_bend = max_bend.max(centre.dist(g.calibration.table_to_image.apply(c.center_mm).unwrap()));
    }
    assert!(max_bend > 15.0, "the lens should move corner cards by many pixels, moved {max_bend}");
}

fn busy_scene(g: &TableGeometry, images: &[Arc<image::RgbaImage>], seed: u64, cards: usize, stacks: usize) -> Scene {
    let mut rng = Rng::seeded(seed);
    let zones = &g.calibration.zones;
    let hands: Vec<_> =
        zones.iter().filter(|z| matches!(z.kind, ZoneKind::Hand { .. } | ZoneKind::DealerHand)).collect();
    let spots: Vec<_> = zones.iter().filter(|z| matches!(z.kind, ZoneKind::BetSpot { .. })).collect();
    let mut scene = Scene::default();
    for i in 0..cards {
        let z = hands[i % hands.len()];
        let c = z.polygon_mm.centroid();
        let k = (i / hands.len()) as f64;
        let a = -c.x.atan2(c.y).clamp(-1.4, 1.4);
        let (s, co) = a.sin_cos();
        let off = (k - 1.0) * 68.0;
        let mut sc = card(
            i as u32,
            images[rng.below(images.len() as u32) as usize].clone(),
            Point::new(c.x + off * co + (rng.unit_f64() - 0.5) * 6.0, c.y + off * s + (rng.unit_f64() - 0.5) * 6.0),
            a + (rng.unit_f64() - 0.5) * 0.12,
        );
        if i == 3 {
            sc.height_mm = 25.0;
        }
        if i == 5 {
            sc.velocity_mm_per_frame = [30.0, 12.0];
        }
        scene.cards.push(sc);
    }
    for i in 0..stacks.min(spots.len()) {
        let z = spots[(i * 7) % spots.len()];
        scene.chips.push(ChipStack {
            center_mm: z.polygon_mm.centroid(),
            chips: 1 + rng.below(8) as u8,
            colour_seed: rng.below(1000),
        });
    }
    scene.occluders.push(Occluder {
        kind: OccluderKind::Hand,
        position_mm: Point::new(-150.0, 330.0),
        angle_rad: 1.2,
        scale: 1.0,
        appearance_seed: seed as u32,
    });
    scene
}

fn placeholder_deck() -> Vec<Arc<image::RgbaImage>> {
    let ranks = ["A", "K", "Q", "J", "10", "9", "7", "5", "3"];
    let mut v: Vec<_> = ranks
        .iter()
        .enumerate()
        .map(|(i, r)| Arc::new(placeholder_face(r, i % 2 == 0, layout::CARD_SIZE_MM).unwrap()))
        .collect();
    v.push(Arc::new(placeholder_back([30, 60, 150], layout::CARD_SIZE_MM).unwrap()));
    v
}

/// Real faces from `sim::faces` when its first design renders here, else placeholders.
fn demo_deck() -> Vec<Arc<image::RgbaImage>> {
    use crate::sim::faces;
    let real = || -> Option<Vec<Arc<image::RgbaImage>>> {
        let designs = faces::catalogue();
        let design = designs.first()?;
        let deck = design.load().ok()?;
        let mut v = Vec::new();
        for (i, face) in faces::Face::all().enumerate() {
            if i % 4 == 1 || face == faces::Face::Back {
                v.push(Arc::new(deck.render(face, 356).ok()?));
            }
        }
        Some(v)
    };
    real().unwrap_or_else(placeholder_deck)
}

#[test]
fn renders_are_deterministic_and_the_frame_seed_changes_the_noise() {
    let g = geometry(RulesetId::Fortune3cp2025, 1280, 720, &default_pose(), Some((-0.12, 0.02)));
    let deck = placeholder_deck();
    let scene = busy_scene(&g, &deck, 5, 12, 6);
    let mut cond = Conditions::preset("glare").unwrap();
    cond.noise_sigma = 4.0;
    cond.jpeg_quality = Some(70);
    let a = Renderer::new(&g, &TableStyle::red(), 9).unwrap().render(&scene, &cond, 42).unwrap();
    let r = Renderer::new(&g, &TableStyle::red(), 9).unwrap();
    let b = r.render(&scene, &cond, 42).unwrap();
    assert!(a.image.as_raw() == b.image.as_raw(), "same inputs, different pixels");
    assert_eq!(a.cards, b.cards);
    let c = r.render(&scene, &cond, 43).unwrap();
    assert!(a.image.as_raw() != c.image.as_raw(), "another frame seed, same noise");
    assert_eq!(a.cards, c.cards, "truth does not depend on the noise");
    // The cache of face pyramids does not change a second render.
    let d = r.render(&scene, &cond, 42).unwrap();
    assert!(a.image.as_raw() == d.image.as_raw());
}

#[test]
fn every_preset_renders_at_720p_and_1080p() {
    let deck = placeholder_deck();
    for (w, h) in [(1280, 720), (1920, 1080)] {
        let g = geometry(RulesetId::Qpoker2004, w, h, &default_pose(), Some((-0.1, 0.01)));
        let r = Renderer::new(&g, &TableStyle::dark_teal(), 4).unwrap();
        let scene = busy_scene(&g, &deck, 2, 10, 5);
        for name in Conditions::PRESETS {
            let c = Conditions::preset(name).unwrap();
            let f = r.render(&scene, &c, 1).unwrap();
            assert_eq!((f.image.width(), f.image.height()), (w, h), "{name}");
            assert_eq!(f.cards.len(), scene.cards.len());
        }
        let drift = Drift::gentle(3);
        let base = Conditions::preset("normal").unwrap();
        assert_ne!(drift.at(&base, 0), drift.at(&base, 120));
        assert_eq!(drift.at(&base, 77), drift.at(&base, 77));
        r.render(&scene, &drift.at(&base, 300), 2).unwrap();
    }
    assert!(Conditions::preset("foggy").is_none());
    let bad = Conditions { exposure: -1.0, ..Conditions::default() };
    assert!(matches!(bad.validate(), Err(RenderError::Input(_))));
}

#[test]
fn contact_sheet_of_every_ruleset_style_tilt_and_condition() {
    // Writes docs/images/sim_tables.png when TABLECAM_WRITE_CONTACT_SHEET is set
    // (review the image, then commit it); otherwise into the temp directory.
    let deck = demo_deck();
    let styles = TableStyle::presets();
    let conds = ["bright", "normal", "dim", "glare", "noisy", "compressed", "normal", "bright", "dim"];
    let rulesets = RulesetId::ALL;
    let (cw, ch) = (480u32, 270u32);
    let mut sheet = image::RgbImage::new(cw * 3, ch * 3);
    for i in 0..9usize {
        let ruleset = rulesets[i % rulesets.len()];
        let tilt: f64 = [0.0, 12.0, 22.0, 30.0, 35.0][i % 5];
        let height: f64 = 1900.0;
        let target = [0.0, 560.0];
        let back = height * tilt.to_radians().tan();
        let pose = CameraPose {
            position_mm: [0.0, target[1] - back, height],
            target_mm: target,
            hfov_deg: if tilt > 25.0 { 60.0 } else { 66.0 },
            roll_deg: 0.0,
        };
        let radial = if i % 3 == 1 { Some((-0.18, 0.03)) } else { None };
        let g = geometry(ruleset, 1920, 1080, &pose, radial);
        assert_eq!(g.calibration.zones, standard_zones(ruleset));
        let r = Renderer::new(&g, &styles[i % styles.len()], i as u64).unwrap();
        let scene = busy_scene(&g, &deck, i as u64, 20, 10);
        let f = r.render(&scene, &Conditions::preset(conds[i]).unwrap(), i as u64).unwrap();
        if let Some(dir) = std::env::var_os("TABLECAM_DUMP_FRAMES") {
            f.image.save(Path::new(&dir).join(format!("sim_frame_{i}.png"))).unwrap();
            let crop = image::imageops::crop_imm(&f.image, 480, 400, 960, 540).to_image();
            crop.save(Path::new(&dir).join(format!("sim_crop_{i}.png"))).unwrap();
        }
        let small = image::imageops::resize(&f.image, cw, ch, image::imageops::FilterType::Triangle);
        image::imageops::replace(&mut sheet, &small, ((i % 3) as u32 * cw) as i64, ((i / 3) as u32 * ch) as i64);
    }
    let path = if std::env::var_os("TABLECAM_WRITE_CONTACT_SHEET").is_some() {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/images/sim_tables.png")
    } else {
        std::env::temp_dir().join("tablecam_sim_tables.png")
    };
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    sheet.save(&path).unwrap();
    eprintln!("contact sheet: {}", path.display());
}

#[test]
fn frames_per_second_at_720p_and_1080p() {
    let deck = placeholder_deck();
    for (w, h) in [(1280, 720), (1920, 1080)] {
        let g = geometry(RulesetId::Fortune3cp2025, w, h, &default_pose(), Some((-0.12, 0.02)));
        let t0 = Instant::now();
        let r = Renderer::new(&g, &TableStyle::green(), 1).unwrap();
        let build = t0.elapsed();
        let scene = busy_scene(&g, &deck, 1, 20, 10);
        let cond = Conditions::preset("normal").unwrap();
        r.render(&scene, &cond, 0).unwrap();
        let n = 10;
        let t = Instant::now();
        for i in 0..n {
            r.render(&scene, &cond, i).unwrap();
        }
        let per = t.elapsed().as_secs_f64() / n as f64;
        eprintln!("{w}×{h}: Renderer::new {:.0} ms; render {:.1} ms/frame = {:.1} frames/s (20 cards, 10 stacks, 1 hand, lens on)", build.as_secs_f64() * 1e3, per * 1e3, 1.0 / per);
    }
}

#[test]
fn the_dirty_tile_remap_equals_a_full_remap() {
    let g = geometry(RulesetId::Stud2004, 1280, 720, &default_pose(), Some((-0.3, 0.08)));
    let lens = camera::Lens::new(&g).unwrap();
    let mut rng = Rng::seeded(4);
    let mut background = buf::Buf::zeros(lens.w, lens.h, 3);
    background.data.iter_mut().for_each(|v| *v = rng.below(256) as u8);
    let background_out = lens.apply(background.clone(), imgproc::INTER_LINEAR).unwrap();
    let mut canvas = background.clone();
    // Changes in the middle, at a canvas edge and in a corner the lens bends most.
    for (x0, y0) in [(600, 300), (0, 0), (lens.w - 40, lens.h - 30)] {
        for y in y0..(y0 + 30).min(lens.h) {
            for x in x0..(x0 + 40).min(lens.w) {
                canvas.data[((y * lens.w + x) * 3) as usize] ^= 0x5a;
            }
        }
    }
    let full = lens.apply(canvas.clone(), imgproc::INTER_LINEAR).unwrap();
    let dirty = lens.apply_dirty(canvas, &background, &background_out).unwrap();
    assert!(full.data == dirty.data, "the dirty remap missed changed pixels");
}

/// A face is drawn the way a camera above the table sees a real card: not mirrored. A mark at
/// the top-left of the card's image lands at the top-left corner of its truth quad, and the
/// truth quad (in the image's corner order) runs clockwise on screen, as the image's own
/// corners do.
#[test]
fn faces_are_drawn_unmirrored() {
    let pose = CameraPose { position_mm: [0.0, 600.0, 1900.0], target_mm: [0.0, 600.0], hfov_deg: 70.0, roll_deg: 0.0 };
    let g = geometry(RulesetId::Fortune3cp2025, 1280, 720, &pose, None);
    let r = Renderer::new(&g, &TableStyle::green(), 1).unwrap();
    let mut face = (*white_card()).clone();
    let (w, h) = face.dimensions();
    for y in h / 12..h / 4 {
        for x in w / 12..w / 4 {
            face.put_pixel(x, y, image::Rgba([220, 0, 0, 255]));
        }
    }
    for angle in [0.0, 0.7, 2.0, -2.6] {
        let c = card(1, Arc::new(face.clone()), Point::new(0.0, 600.0), angle);
        let f = r.render(&Scene { cards: vec![c], ..Default::default() }, &clean(), 1).unwrap();
        let q = f.cards[0].quad_px;
        let cross = (q[1].x - q[0].x) * (q[3].y - q[0].y) - (q[1].y - q[0].y) * (q[3].x - q[0].x);
        assert!(cross > 0.0, "angle {angle}: truth quad {q:?} is mirrored");
        let (mut sx, mut sy, mut n) = (0.0, 0.0, 0.0);
        let (x0, x1) = (q.iter().map(|p| p.x).fold(f64::MAX, f64::min), q.iter().map(|p| p.x).fold(f64::MIN, f64::max));
        let (y0, y1) = (q.iter().map(|p| p.y).fold(f64::MAX, f64::min), q.iter().map(|p| p.y).fold(f64::MIN, f64::max));
        for (x, y, px) in f.image.enumerate_pixels() {
            let on_card = (x0..=x1).contains(&f64::from(x)) && (y0..=y1).contains(&f64::from(y));
            if on_card && px.0[0] > 150 && px.0[1] < 80 && px.0[2] < 80 {
                (sx, sy, n) = (sx + f64::from(x), sy + f64::from(y), n + 1.0);
            }
        }
        assert!(n > 20.0, "angle {angle}: the mark is drawn");
        let mark = Point::new(sx / n, sy / n);
        let nearest = (0..4).min_by(|&a, &b| q[a].dist(mark).total_cmp(&q[b].dist(mark))).unwrap();
        assert_eq!(nearest, 0, "angle {angle}: the mark at {mark:?} is nearest corner {nearest} of {q:?}");
    }
}
