//! Card recognition speed: the locator on a 1080p frame, the classifier on a batch of 64
//! patches (crops/s), the table-plane finder on a 1080p simulator frame with 20 cards (with and
//! without the camera's empty table), and the whole `Recognizer::recognize` on that frame —
//! without calibration (longer side scaled to 640 px) and with it (the table-plane finder, with
//! and without the empty table), and the twin-print check on two of its cards read as one face.
//!
//! That frame's faces are placeholders (a rank, no suit), which no classifier can name: its
//! `recognize` figures are the worst case, every fallback read run for every face-up card. The
//! `printed/` benches run the same frame dealt from a printed deck (`proc-classic-poker`), read
//! by the three classifiers the pipeline loads (corner, whole card, glyphs): what a table costs.
//!
//! Run with `cargo bench --bench recognition`. Uses models/locator.onnx and
//! models/classifier.onnx when present, else the random-weight fixtures (whose networks are far
//! smaller than the real ones: their figures measure the Rust side, not the models). ONNX Runtime
//! runs one intra-op thread per session unless `TABLECAM_BENCH_THREADS` says otherwise; OpenCV's
//! thread pool gets as many threads (the 20 ms target is for one core).
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tablecam::calib::layout::{default_pose, simulated_calibration, CARD_SIZE_MM};
use tablecam::calib::{Point, TableGeometry, ZoneKind};
use tablecam::classify::CardIdentity;
use tablecam::locate::plane::PlaneFinder;
use tablecam::onnx::SessionOptions;
use tablecam::recognize::twins::compare_twins;
use tablecam::recognize::{plan_input, prepare_input, Recognizer, RecognizerOptions};
use tablecam::rules::{Card, RulesetId};
use tablecam::sim::faces::{design, Face};
use tablecam::sim::render::{placeholder_back, placeholder_face, Conditions, Renderer, Scene, SceneCard, TableStyle};

fn model(name: &str, fixture: &str) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let real = root.join("models").join(name);
    if real.is_file() {
        real
    } else {
        root.join("models/fixtures").join(fixture)
    }
}

/// The faces a bench frame is dealt from: placeholders (a rank, no suit: nothing can name
/// them) or a printed deck.
enum Faces {
    Placeholder,
    Printed(&'static str),
}

/// The printed deck of the `printed/` benches (procedural, so installed wherever the crate builds).
const PRINTED_DECK: &str = "proc-classic-poker";

/// A 1080p fortune3cp frame with 20 cards (2 face down) dealt as a dealer lays them (rows of
/// three, half a card apart, along each hand zone, as the simulator's sessions do), the same
/// table without them, and its calibration.
fn frame(deck: Faces) -> (opencv::core::Mat, opencv::core::Mat, TableGeometry) {
    let g = simulated_calibration(RulesetId::Fortune3cp2025, "B1", 1920, 1080, &default_pose(), Some((-0.08, 0.01)))
        .validate(Path::new("<bench>"))
        .expect("calibration");
    let (faces, back): (Vec<_>, _) = match deck {
        Faces::Placeholder => (
            ["A", "K", "Q", "10", "7"]
                .iter()
                .map(|r| Arc::new(placeholder_face(r, *r == "K" || *r == "10", CARD_SIZE_MM).expect("face")))
                .collect(),
            Arc::new(placeholder_back([160, 30, 40], CARD_SIZE_MM).expect("back")),
        ),
        Faces::Printed(name) => {
            let deck = design(name).unwrap_or_else(|| panic!("deck design {name}")).load().expect("deck");
            let render = |face| Arc::new(deck.render(face, 356).expect("face"));
            // 17 different cards, every suit and court, 9 in steps of 3 through the deck
            (Card::all().step_by(3).map(|c| render(Face::Card(c))).collect(), render(Face::Back))
        }
    };
    // each hand zone's centre and the direction of its first edge (sim::timeline's anchors)
    let hands: Vec<(Point, f64)> = g
        .calibration
        .zones
        .iter()
        .filter(|z| matches!(z.kind, ZoneKind::Hand { .. } | ZoneKind::DealerHand))
        .map(|z| {
            let v = &z.polygon_mm.0;
            (z.polygon_mm.centroid(), (v[1].y - v[0].y).atan2(v[1].x - v[0].x))
        })
        .collect();
    let mut scene = Scene::default();
    for i in 0..20 {
        let ((c, angle), k) = (hands[i / 3], (i % 3) as f64 - 1.0);
        let step = 0.62 * CARD_SIZE_MM[0];
        scene.cards.push(SceneCard {
            id: i as u32,
            image: if i % 7 == 6 { back.clone() } else { faces[i % faces.len()].clone() },
            center_mm: Point::new(c.x + k * step * angle.cos(), c.y + k * step * angle.sin()),
            angle_rad: angle,
            size_mm: CARD_SIZE_MM,
            height_mm: 0.0,
            velocity_mm_per_frame: [0.0, 0.0],
        });
    }
    let r = Renderer::new(&g, &TableStyle::green(), 1).expect("renderer");
    let light = Conditions::preset("normal").expect("preset");
    let f = r.render(&scene, &light, 1).expect("frame");
    let empty = r.render(&Scene::default(), &light, 0).expect("empty table");
    let bgr = |image| tablecam::recognize::cli::rgb_to_bgr_mat(image).expect("mat");
    (bgr(&f.image), bgr(&empty.image), g)
}

fn recognition(c: &mut Criterion) {
    let threads = std::env::var("TABLECAM_BENCH_THREADS").ok().and_then(|v| v.parse().ok()).unwrap_or(1);
    let options = RecognizerOptions { session: SessionOptions { intra_threads: threads }, ..Default::default() };
    let (locator, classifier) =
        (model("locator.onnx", "locator_tiny.onnx"), model("classifier.onnx", "classifier_tiny.onnx"));
    eprintln!("recognition bench: {} and {}, {threads} intra-op thread(s)", locator.display(), classifier.display());
    opencv::core::set_num_threads(threads as i32).expect("OpenCV threads");
    let mut rec = Recognizer::with_options(&locator, &classifier, options.clone()).expect("models");
    let (image, empty, geometry) = frame(Faces::Placeholder);

    let mut group = c.benchmark_group("recognition");
    group.sample_size(20).measurement_time(Duration::from_secs(8));
    for (name, cal) in [("uncalibrated", None), ("calibrated", Some(&geometry))] {
        let plan = plan_input(1920, 1080, cal, &options);
        let input = prepare_input(&image, &plan).expect("input");
        let [w, h] = plan.net;
        group.bench_function(format!("locator/1080p-{name}-{w}x{h}"), |b| {
            b.iter(|| rec.locator_mut().run(input.view()).expect("locator").cards.len())
        });
    }

    let (ph, pw) = rec.classifier_mut().patch_kind().shape();
    let batch = ndarray::Array4::<f32>::from_shape_fn((64, 3, ph, pw), |(n, ch, y, x)| {
        ((n * 7 + ch * 31 + y * 3 + x) % 255) as f32 / 255.0
    });
    group.throughput(Throughput::Elements(64));
    group.bench_function("classifier/batch-64-patches", |b| {
        b.iter(|| rec.classifier_mut().classify(batch.view()).expect("classifier").nrows())
    });
    group.throughput(Throughput::Elements(1));

    let mut finder = PlaneFinder::new(&geometry).expect("plane finder");
    group.bench_function("plane/1080p-20-cards-no-empty-table", |b| {
        b.iter(|| finder.find(&image).expect("plane").len())
    });
    finder.set_reference(&empty).expect("empty table");

    group.bench_function("plane/1080p-20-cards-empty-table", |b| b.iter(|| finder.find(&image).expect("plane").len()));

    for (name, cal) in [("uncalibrated", None), ("calibrated", Some(&geometry))] {
        group.bench_function(format!("recognize/1080p-20-cards-{name}"), |b| {
            b.iter(|| rec.recognize(&image, cal).expect("recognize").len())
        });
    }
    rec.set_table_reference(&geometry, &empty).expect("empty table");
    group.bench_function("recognize/1080p-20-cards-calibrated-empty-table", |b| {
        b.iter(|| rec.recognize(&image, Some(&geometry)).expect("recognize").len())
    });

    // Two of the frame's face-up cards read as one face: the twin-print check (whole faces in
    // grey and in colour, index corners) that a frame holding a duplicate, or a misread, adds.
    let mut cards = rec.recognize(&image, Some(&geometry)).expect("recognize");
    let up: Vec<usize> = (0..cards.len()).filter(|&i| cards[i].face_up).take(2).collect();
    if let [a, b] = up[..] {
        let face = CardIdentity::Card("KS".parse().expect("card"));
        (cards[a].card, cards[b].card) = (face, face);
        group.bench_function("twins/two-cards-read-as-one-face", |bench| {
            bench.iter(|| {
                let mut read = cards.clone();
                compare_twins(&image, &mut read).expect("twins");
                read[a].twin
            })
        });
    }

    // The same table dealt from a printed deck: the corner classifier alone, then the three
    // classifiers the pipeline loads (tablecam run, eval-scenarios, detect).
    let (printed, printed_empty, printed_geometry) = frame(Faces::Printed(PRINTED_DECK));
    let all = RecognizerOptions {
        face_classifier: Some(model("face_classifier.onnx", "classifier_face_tiny.onnx")),
        glyph_classifier: Some(model("glyph_classifier.onnx", "classifier_glyph_tiny.onnx")),
        ..options.clone()
    };
    let mut rec_all = Recognizer::with_options(&locator, &classifier, all).expect("models");
    for (name, r) in [("corner-classifier", &mut rec), ("three-classifiers", &mut rec_all)] {
        r.set_table_reference(&printed_geometry, &printed_empty).expect("empty table");
        let read = r.recognize(&printed, Some(&printed_geometry)).expect("recognize");
        let named = read.iter().filter(|c| c.card.card().is_some()).count();
        eprintln!("printed/{name}: {} cards found, {named} named", read.len());
        group.bench_function(format!("printed/recognize/1080p-20-cards-calibrated-empty-table-{name}"), |b| {
            b.iter(|| r.recognize(&printed, Some(&printed_geometry)).expect("recognize").len())
        });
    }
    group.finish();
}

criterion_group!(benches, recognition);
criterion_main!(benches);
