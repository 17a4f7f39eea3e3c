//! Frames rendered per second by the table simulator's renderer.
//!
//! Run with `cargo bench --bench sim`. Each benchmark renders one frame of a
//! fortune3cp-2025 table seen by the default overhead camera with lens
//! distortion: 20 cards (two of them lifted or moving), 10 chip stacks and
//! one dealer's hand, under the `normal` conditions (sensor noise, vignetting,
//! optical softness) and under `compressed` (plus a JPEG round trip). The
//! static table is built once, outside the measurement.
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use tablecam::calib::layout::{default_pose, simulated_calibration, CARD_SIZE_MM};
use tablecam::calib::{Point, ZoneKind};
use tablecam::rules::RulesetId;
use tablecam::sim::render::{
    placeholder_face, ChipStack, Conditions, Occluder, OccluderKind, Renderer, Scene, SceneCard, TableStyle,
};

fn scene(g: &tablecam::calib::TableGeometry) -> Scene {
    let faces: Vec<_> =
        ["A", "K", "Q", "7"].iter().map(|r| Arc::new(placeholder_face(r, r == &"K", CARD_SIZE_MM).unwrap())).collect();
    let zones = &g.calibration.zones;
    let hands: Vec<_> =
        zones.iter().filter(|z| matches!(z.kind, ZoneKind::Hand { .. } | ZoneKind::DealerHand)).collect();
    let spots: Vec<_> = zones.iter().filter(|z| matches!(z.kind, ZoneKind::BetSpot { .. })).collect();
    let mut s = Scene::default();
    for i in 0..20 {
        let c = hands[i % hands.len()].polygon_mm.centroid();
        let off = ((i / hands.len()) as f64 - 1.0) * 68.0;
        s.cards.push(SceneCard {
            id: i as u32,
            image: faces[i % faces.len()].clone(),
            center_mm: Point::new(c.x + off, c.y),
            angle_rad: 0.1 * i as f64,
            size_mm: CARD_SIZE_MM,
            height_mm: if i == 3 { 25.0 } else { 0.0 },
            velocity_mm_per_frame: if i == 5 { [30.0, 12.0] } else { [0.0, 0.0] },
        });
    }
    for i in 0..10 {
        s.chips.push(ChipStack {
            center_mm: spots[(i * 7) % spots.len()].polygon_mm.centroid(),
            chips: 5,
            colour_seed: i as u32,
        });
    }
    s.occluders.push(Occluder {
        kind: OccluderKind::Hand,
        position_mm: Point::new(-150.0, 330.0),
        angle_rad: 1.2,
        scale: 1.0,
        appearance_seed: 1,
    });
    s
}

fn render(c: &mut Criterion) {
    let mut group = c.benchmark_group("render");
    group.sample_size(20).measurement_time(Duration::from_secs(6));
    for (w, h) in [(1280, 720), (1920, 1080)] {
        let g = simulated_calibration(RulesetId::Fortune3cp2025, "B1", w, h, &default_pose(), Some((-0.12, 0.02)))
            .validate(Path::new("<bench>"))
            .expect("valid calibration");
        let r = Renderer::new(&g, &TableStyle::green(), 1).expect("renderer");
        let s = scene(&g);
        for name in ["normal", "compressed"] {
            let cond = Conditions::preset(name).expect("preset");
            let mut seed = 0u64;
            group.bench_function(format!("{h}p/{name}"), |b| {
                b.iter(|| {
                    seed += 1;
                    r.render(&s, &cond, seed).expect("frame").cards.len()
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, render);
criterion_main!(benches);
