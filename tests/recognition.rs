//! Card recognition end to end with the tiny random-weight fixture models
//! (models/fixtures/{locator,classifier}_tiny.onnx, `make fixtures`): they have the real models'
//! contracts, so loading, contract checks, decoding, batching and the command lines are all
//! exercised; their answers mean nothing, so nothing here checks what the cards are.
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use opencv::core::Mat;
use opencv::prelude::*;
use tablecam::calib::layout::{default_pose, simulated_calibration, CARD_SIZE_MM};
use tablecam::calib::{Point, TableGeometry, ZoneKind};
use tablecam::classify::{Classifier, PatchKind};
use tablecam::locate::Locator;
use tablecam::onnx::SessionOptions;
use tablecam::recognize::{on_table, CardIdentity, Recognizer, Source};
use tablecam::rules::RulesetId;
use tablecam::sim::render::{placeholder_back, placeholder_face, Conditions, Renderer, Scene, SceneCard, TableStyle};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn locator_fixture() -> PathBuf {
    root().join("models/fixtures/locator_tiny.onnx")
}

fn classifier_fixture() -> PathBuf {
    root().join("models/fixtures/classifier_tiny.onnx")
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "tablecam-recognition-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A simulated 1280×720 fortune3cp table with a dozen cards (two face down), its calibration,
/// and the cards' truth quads.
fn table_frame(seed: u64) -> (Mat, TableGeometry, Vec<([Point; 4], bool)>) {
    let g = simulated_calibration(RulesetId::Fortune3cp2025, "R1", 1280, 720, &default_pose(), Some((-0.08, 0.01)))
        .validate(Path::new("<test>"))
        .unwrap();
    let faces: Vec<_> =
        ["A", "K", "10", "7"].iter().map(|r| Arc::new(placeholder_face(r, *r == "K", CARD_SIZE_MM).unwrap())).collect();
    let back = Arc::new(placeholder_back([160, 30, 40], CARD_SIZE_MM).unwrap());
    let hands: Vec<Point> = g
        .calibration
        .zones
        .iter()
        .filter(|z| matches!(z.kind, ZoneKind::Hand { .. } | ZoneKind::DealerHand))
        .map(|z| z.polygon_mm.centroid())
        .collect();
    let mut scene = Scene::default();
    for i in 0..12 {
        let c = hands[i % hands.len()];
        scene.cards.push(SceneCard {
            id: i as u32,
            image: if i % 6 == 5 { back.clone() } else { faces[i % faces.len()].clone() },
            center_mm: Point::new(c.x + ((i / hands.len()) as f64 - 0.5) * 70.0, c.y),
            angle_rad: 0.15 * i as f64,
            size_mm: CARD_SIZE_MM,
            height_mm: 0.0,
            velocity_mm_per_frame: [0.0, 0.0],
        });
    }
    let r = Renderer::new(&g, &TableStyle::green(), seed).unwrap();
    let frame = r.render(&scene, &Conditions::preset("normal").unwrap(), seed).unwrap();
    let truth = frame.cards.iter().map(|c| (c.quad_px, c.id % 6 != 5)).collect();
    let mat = tablecam::recognize::cli::rgb_to_bgr_mat(&frame.image).unwrap();
    (mat, g, truth)
}

#[test]
fn fixture_models_load_and_run_end_to_end() {
    let opts = SessionOptions::default();
    let mut locator = Locator::load(locator_fixture(), &opts).unwrap();
    assert_eq!(locator.params().card_threshold, 0.35);
    let input = ndarray::Array4::<f32>::from_elem((1, 3, 96, 128), 0.5);
    let (heat, geom) = locator.run_maps(input.view()).unwrap();
    assert_eq!((heat.shape(), geom.shape()), (&[1, 3, 24, 32][..], &[1, 8, 24, 32][..]));
    assert!(heat.iter().all(|v| (0.0..=1.0).contains(v)), "heat is a probability");
    let e = locator.run_maps(ndarray::Array4::<f32>::zeros((1, 3, 100, 128)).view()).unwrap_err();
    assert!(e.to_string().contains("multiples of 32"), "{e}");

    let mut classifier = Classifier::load(classifier_fixture(), &opts).unwrap();
    assert_eq!(classifier.min_confidence(), 0.5);
    let probs = classifier.classify(ndarray::Array4::<f32>::from_elem((5, 3, 40, 40), 0.3).view()).unwrap();
    assert_eq!(probs.shape(), &[5, 54]);
    for row in probs.rows() {
        assert!((row.sum() - 1.0).abs() < 1e-4);
    }

    // v2: upright card-corner patches [N, 3, 48, 32]
    let mut corner = Classifier::load(root().join("models/fixtures/classifier_corner_tiny.onnx"), &opts).unwrap();
    assert_eq!(corner.patch_kind(), PatchKind::CardCorner(tablecam::classify::CornerCut::INDEX));
    assert_eq!(
        corner.classify(ndarray::Array4::<f32>::from_elem((2, 3, 48, 32), 0.3).view()).unwrap().shape(),
        &[2, 54]
    );
    let e = corner.classify(ndarray::Array4::<f32>::from_elem((2, 3, 40, 40), 0.3).view()).unwrap_err().to_string();
    assert!(e.contains("classifier_corner_tiny.onnx"), "{e}");

    let (frame, geometry, truth) = table_frame(3);
    let corner_fixture = root().join("models/fixtures/classifier_corner_tiny.onnx");
    // the placeholder cards' indexes print ~13 px high at 720p, below the default readable size
    let small_ok = tablecam::recognize::RecognizerOptions { min_index_px: 8.0, ..Default::default() };
    let mut corner_recognizer = Recognizer::with_options(locator_fixture(), &corner_fixture, small_ok).unwrap();
    let (cards, times) = corner_recognizer.recognize_timed(&frame, Some(&geometry)).unwrap();
    // two corner patches per located card (all are large enough to read here)
    assert!(times.patches > 0 && times.patches % 2 == 0 && times.patches >= 2 * cards.len(), "{times:?}");
    assert!(!cards.is_empty() && cards.len() <= truth.len(), "located {} of {} cards", cards.len(), truth.len());
    assert!(cards.iter().all(|c| c.source == Source::Card), "no index-only cards with a card-corner classifier");
    let mut recognizer = Recognizer::new(locator_fixture(), classifier_fixture()).unwrap();
    for calibration in [None, Some(&geometry)] {
        let (cards, times) = recognizer.recognize_timed(&frame, calibration).unwrap();
        assert!(times.total_ms >= times.locator_ms && times.locator_ms > 0.0, "{times:?}");
        for c in &cards {
            assert!(c.quad.iter().all(|p| p.x.is_finite() && p.y.is_finite()), "{c:?}");
            assert!((0.0..=1.0).contains(&c.confidence), "{c:?}");
            assert_eq!(tablecam::locate::order_quad(c.quad), c.quad, "quads follow the convention");
            if !c.face_up {
                assert_eq!((c.card, c.source), (CardIdentity::Back, Source::Card), "face down is a back");
            }
            if c.source == Source::IndexOnly {
                assert!(!c.index_boxes.is_empty());
            }
            if let Some(g) = calibration {
                let centre = Point::new(
                    c.quad.iter().map(|p| p.x).sum::<f64>() / 4.0,
                    c.quad.iter().map(|p| p.y).sum::<f64>() / 4.0,
                );
                assert!(g.image_to_table(centre).is_some_and(|t| on_table(t, 1.0)), "off-table detection kept: {c:?}");
                if c.source == Source::Card {
                    // Refined to the exact card rectangle on the table plane.
                    let mm: Vec<Point> = c.quad.iter().map(|&p| g.image_to_table(p).unwrap()).collect();
                    let sides = [mm[0].dist(mm[1]), mm[1].dist(mm[2])];
                    let (short, long) = (sides[0].min(sides[1]), sides[0].max(sides[1]));
                    assert!((short - 63.5).abs() < 0.5 && (long - 88.9).abs() < 0.5, "{sides:?}");
                }
            }
        }
    }
    // A frame of another size than the calibration's is refused, naming both sizes.
    let small =
        Mat::new_rows_cols_with_default(100, 200, opencv::core::CV_8UC3, opencv::core::Scalar::all(90.0)).unwrap();
    let e = recognizer.recognize(&small, Some(&geometry)).unwrap_err().to_string();
    assert!(e.contains("200×100") && e.contains("1280×720"), "{e}");
    // Grey frames are refused with the type, not a panic.
    let grey = Mat::new_rows_cols_with_default(64, 64, opencv::core::CV_8UC1, opencv::core::Scalar::all(0.0)).unwrap();
    assert!(recognizer.recognize(&grey, None).is_err());
}

/// A whole-card classifier (`RecognizerOptions::face_classifier`) is read with the index corners:
/// two more views per card, combined into its verdict, except on a frame's cards whose corners
/// already name them surely; a model with another cut is refused as one, naming the file.
#[test]
fn a_whole_card_classifier_adds_its_views_to_each_cards_verdict() {
    use tablecam::classify::CornerCut;
    let face_fixture = root().join("models/fixtures/classifier_face_tiny.onnx");
    let corner_fixture = root().join("models/fixtures/classifier_corner_tiny.onnx");
    let face = Classifier::load(&face_fixture, &SessionOptions::default()).unwrap();
    assert_eq!(face.patch_kind(), PatchKind::CardCorner(CornerCut::FACE));
    assert_eq!(face.patch_kind().shape(), (64, 40));

    let (frame, geometry, truth) = table_frame(3);
    let options = |face: Option<&Path>| tablecam::recognize::RecognizerOptions {
        min_index_px: 8.0,
        face_classifier: face.map(Path::to_path_buf),
        ..Default::default()
    };
    let mut corners_only = Recognizer::with_options(locator_fixture(), &corner_fixture, options(None)).unwrap();
    let mut with_face =
        Recognizer::with_options(locator_fixture(), &corner_fixture, options(Some(&face_fixture))).unwrap();
    let (a, ta) = corners_only.recognize_timed(&frame, Some(&geometry)).unwrap();
    let (b, tb) = with_face.recognize_timed(&frame, Some(&geometry)).unwrap();
    assert_eq!(a.len(), b.len(), "the same cards are located");
    // The random-weight corner fixture names every card surely (the same card): on a frame the
    // whole-card views of such cards are not read, and the corners' names stand.
    assert!(!a.is_empty() && a.iter().all(|d| d.card.card().is_some() && d.confidence >= 0.999), "{a:?}");
    assert_eq!(tb.patches, ta.patches, "no whole-card view of a card its corners name: {ta:?} {tb:?}");
    assert_eq!(a.iter().map(|d| d.card).collect::<Vec<_>>(), b.iter().map(|d| d.card).collect::<Vec<_>>());

    // known quads: each verdict combines up to four views, and the face views change them
    let quads: Vec<_> = truth.iter().map(|(q, _)| *q).collect();
    let va = corners_only.identify_quads(&frame, &quads).unwrap();
    let vb = with_face.identify_quads(&frame, &quads).unwrap();
    assert!(va.iter().all(|v| v.informative <= 2) && vb.iter().all(|v| v.informative <= 4));
    assert!(va.iter().zip(&vb).any(|(x, y)| y.informative > x.informative), "{va:?}\n{vb:?}");

    // the index-corner fixture is no whole-card classifier
    let e = Recognizer::with_options(locator_fixture(), &corner_fixture, options(Some(&corner_fixture))).unwrap_err();
    let e = e.to_string();
    assert!(e.contains("classifier_corner_tiny.onnx") && e.contains("not a whole-card classifier"), "{e}");
}

/// A glyph classifier (`RecognizerOptions::glyph_classifier`) reads every index proposal of an
/// uncalibrated photo once, in place of the card classifier's guessed card corners; given as
/// the card classifier, or a card classifier given as it, it is refused naming the file.
#[test]
fn a_glyph_classifier_reads_each_index_proposal_of_a_photo_once() {
    let glyph_fixture = root().join("models/fixtures/classifier_glyph_tiny.onnx");
    let corner_fixture = root().join("models/fixtures/classifier_corner_tiny.onnx");
    let glyph = Classifier::load(&glyph_fixture, &SessionOptions::default()).unwrap();
    assert_eq!(glyph.patch_kind(), PatchKind::IndexGlyphs);

    let (frame, _, _) = table_frame(4);
    let options = |index_glyphs: bool, glyph: Option<&Path>| tablecam::recognize::RecognizerOptions {
        min_index_px: 8.0,
        index_glyphs,
        glyph_classifier: glyph.map(Path::to_path_buf),
        ..Default::default()
    };
    let run = |o| {
        let mut r = Recognizer::with_options(locator_fixture(), &corner_fixture, o).unwrap();
        r.recognize_timed(&frame, None).unwrap().1.patches
    };
    let outlines_only = run(options(false, None));
    let guessed = run(options(true, None));
    let with_glyphs = run(options(true, Some(&glyph_fixture)));
    let proposals = |reach| {
        tablecam::locate::glyphs::index_proposals(&frame, reach)
            .unwrap()
            .into_iter()
            .filter(|p| p.height() >= 8.0)
            .count()
    };
    let (glyph_reach, corner_reach) =
        (proposals(tablecam::locate::glyphs::GLYPH_PAIR_REACH), proposals(tablecam::locate::glyphs::CORNER_PAIR_REACH));
    assert!(corner_reach > 0, "the frame's indexes are proposed");
    assert!(glyph_reach >= corner_reach, "the glyph classifier's pairs reach further");
    assert_eq!(with_glyphs, outlines_only + glyph_reach, "one glyph view per proposal");
    assert!(guessed > outlines_only + corner_reach, "the card classifier reads each at one size or three: {guessed}");

    let e = Recognizer::with_options(locator_fixture(), &glyph_fixture, options(true, None)).unwrap_err().to_string();
    assert!(e.contains("classifier_glyph_tiny.onnx") && e.contains("is a glyph classifier"), "{e}");
    let e = Recognizer::with_options(locator_fixture(), &corner_fixture, options(true, Some(&corner_fixture)))
        .unwrap_err()
        .to_string();
    assert!(e.contains("classifier_corner_tiny.onnx") && e.contains("not a glyph classifier"), "{e}");
}

/// On a calibrated table the glyph classifier reads the indexes found in the corners of the
/// faces the card classifiers leave unnamed (`recognize::table_glyphs`): their glyph views are
/// read, and readings below the glyph classifier's threshold change no verdict.
#[test]
fn a_glyph_classifier_reads_the_corner_indexes_of_a_tables_unnamed_faces() {
    let glyph_fixture = root().join("models/fixtures/classifier_glyph_tiny.onnx");
    let corner_fixture = root().join("models/fixtures/classifier_corner_tiny.onnx");
    let (frame, geometry, truth) = table_frame(5);
    let options = |glyph: Option<&Path>| tablecam::recognize::RecognizerOptions {
        min_index_px: 8.0,
        glyph_classifier: glyph.map(Path::to_path_buf),
        ..Default::default()
    };
    let mut plain = Recognizer::with_options(locator_fixture(), &corner_fixture, options(None)).unwrap();
    let mut with_glyphs =
        Recognizer::with_options(locator_fixture(), &corner_fixture, options(Some(&glyph_fixture))).unwrap();
    // the card classifier names nothing (its random weights would name cards at its own
    // threshold), so every located face is read by the glyph classifier; the glyph fixture's
    // readings name nothing either
    for r in [&mut plain, &mut with_glyphs] {
        r.classifier_mut().set_min_confidence(2.0);
    }
    with_glyphs.glyph_classifier_mut().unwrap().set_min_confidence(2.0);
    let (a, ta) = plain.recognize_timed(&frame, Some(&geometry)).unwrap();
    let (b, tb) = with_glyphs.recognize_timed(&frame, Some(&geometry)).unwrap();
    assert_eq!(a.len(), b.len(), "the same cards are located");
    assert!(a.iter().all(|c| c.card.card().is_none()), "{a:?}");
    let faces: Vec<_> = truth.iter().filter(|(_, face_up)| *face_up).map(|(q, _)| *q).collect();
    let proposals: usize =
        faces.iter().map(|q| tablecam::recognize::table_glyphs::corner_proposals(&frame, q).unwrap().len()).sum();
    assert!(proposals > 0, "the placeholder faces' indexes are proposed");
    assert!(tb.patches > ta.patches, "glyph views are read: {ta:?} {tb:?}");
    // readings below the threshold change no verdict
    let all: Vec<_> = truth.iter().map(|(q, _)| *q).collect();
    assert_eq!(plain.identify_quads(&frame, &all).unwrap(), with_glyphs.identify_quads(&frame, &all).unwrap());
    assert_eq!(a, b);
}

/// A batch larger than `classify::MAX_BATCH` runs in pieces and gives each patch the same
/// probabilities as a run of its own.
#[test]
fn a_large_batch_is_classified_in_pieces_with_the_same_result() {
    let mut c = Classifier::load(root().join("models/fixtures/classifier_glyph_tiny.onnx"), &SessionOptions::default())
        .unwrap();
    let n = tablecam::classify::MAX_BATCH + 37;
    let batch = ndarray::Array4::<f32>::from_shape_fn((n, 3, 48, 32), |(i, c, y, x)| {
        ((i * 7 + c * 13 + y * 3 + x) % 97) as f32 / 96.0
    });
    let all = c.classify(batch.view()).unwrap();
    assert_eq!(all.shape(), &[n, 54]);
    for i in [0, tablecam::classify::MAX_BATCH - 1, tablecam::classify::MAX_BATCH, n - 1] {
        let one = c.classify(batch.slice(ndarray::s![i..i + 1, .., .., ..])).unwrap();
        for (a, b) in all.row(i).iter().zip(one.row(0)) {
            assert!((a - b).abs() < 1e-6, "patch {i}: {a} vs {b}");
        }
    }
}

#[test]
fn corrupted_and_truncated_models_name_the_file() {
    let dir = TempDir::new("corrupt");
    let garbage = dir.0.join("garbage.onnx");
    std::fs::write(&garbage, b"\x08\x07this is not an onnx model \xff\xfe\x00\x01 at all").unwrap();
    let truncated = dir.0.join("truncated.onnx");
    let bytes = std::fs::read(locator_fixture()).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    for bad in [&garbage, &truncated] {
        let e = Locator::load(bad, &SessionOptions::default()).unwrap_err().to_string();
        assert!(e.contains(&bad.display().to_string()) && e.contains("make train"), "{e}");
        let e = Recognizer::new(locator_fixture(), bad).unwrap_err().to_string();
        assert!(e.contains(&bad.display().to_string()), "{e}");
    }
    let missing = dir.0.join("missing.onnx");
    let e = Recognizer::new(&missing, classifier_fixture()).unwrap_err().to_string();
    assert!(e.contains(&missing.display().to_string()) && e.contains("not found"), "{e}");
}

#[test]
fn models_with_the_wrong_contract_are_refused_naming_the_file() {
    let affine = root().join("models/fixtures/affine_softmax.onnx");
    let e = Locator::load(&affine, &SessionOptions::default()).unwrap_err().to_string();
    assert!(e.contains(&affine.display().to_string()) && e.contains("does not match its contract"), "{e}");
    assert!(e.contains("no input named \"image\""), "{e}");
    // Each fixture given as the other model.
    let e = Recognizer::new(classifier_fixture(), classifier_fixture()).unwrap_err().to_string();
    assert!(e.contains("classifier_tiny.onnx") && e.contains("\"image\""), "{e}");
    let e = Recognizer::new(locator_fixture(), locator_fixture()).unwrap_err().to_string();
    assert!(e.contains("locator_tiny.onnx") && e.contains("\"patch\""), "{e}");

    // Right tensors, wrong metadata: patch bytes inside the protobuf strings (same lengths, so
    // the file stays a valid model).
    let dir = TempDir::new("contract");
    let patch = |src: PathBuf, from: &[u8], to: &[u8], name: &str| {
        let mut bytes = std::fs::read(src).unwrap();
        let at = bytes.windows(from.len()).position(|w| w == from).expect("pattern in the fixture");
        bytes[at..at + to.len()].copy_from_slice(to);
        let out = dir.0.join(name);
        std::fs::write(&out, bytes).unwrap();
        out
    };
    let kind = patch(locator_fixture(), b"\x12\x07locator", b"\x12\x07lacator", "kind.onnx");
    let e = Locator::load(&kind, &SessionOptions::default()).unwrap_err().to_string();
    assert!(e.starts_with(&format!("{}: metadata tablecam.kind is \"lacator\"", kind.display())), "{e}");
    let order = patch(classifier_fixture(), b"2D,2C,2H", b"2C,2D,2H", "labels.onnx");
    let e = Classifier::load(&order, &SessionOptions::default()).unwrap_err().to_string();
    assert!(e.contains("labels.onnx") && e.contains("tablecam.labels[0] is \"2C\"") && e.contains("make train"), "{e}");
}

fn tablecam() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_tablecam"));
    c.current_dir(root());
    c
}

#[test]
fn detect_reports_each_image_on_its_own_line() {
    let dir = TempDir::new("detect");
    let (frame, _, _) = table_frame(5);
    let good = dir.0.join("table.png");
    opencv::imgcodecs::imwrite(good.to_str().unwrap(), &frame, &opencv::core::Vector::new()).unwrap();
    let missing = dir.0.join("missing.jpg");
    let annotated = dir.0.join("annotated");
    let out = tablecam()
        .args(["detect", "--json", "--locator"])
        .arg(locator_fixture())
        .arg("--classifier")
        .arg(classifier_fixture())
        .arg("--annotate")
        .arg(&annotated)
        .arg(&missing)
        .arg(&good)
        .output()
        .unwrap();
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<serde_json::Value> = stdout.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    assert_eq!(lines[0]["image"], missing.to_str().unwrap());
    assert!(lines[0]["error"].as_str().unwrap().contains("missing.jpg"), "{stdout}");
    assert_eq!(lines[1]["image"], good.to_str().unwrap());
    assert!(lines[1]["error"].is_null(), "{stdout}");
    for card in lines[1]["cards"].as_array().unwrap() {
        assert!(card["card"].is_string() && card["confidence"].is_number() && card["face_up"].is_boolean());
        assert_eq!(card["quad"].as_array().unwrap().len(), 4);
    }
    assert_eq!(out.status.code(), Some(1), "an image failed");
    assert!(annotated.join("table.jpg").is_file());

    // Text mode: the error goes to stderr, the result to stdout.
    let out = tablecam()
        .args(["detect", "--locator"])
        .arg(locator_fixture())
        .arg("--classifier")
        .arg(classifier_fixture())
        .arg(&missing)
        .arg(&good)
        .output()
        .unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(
        stderr.contains("missing.jpg") && stdout.starts_with(&format!("{}: ", good.display())),
        "{stdout}\n{stderr}"
    );

    // Several workers: the same lines in the images' order, the missing image's error in its place.
    let table_b = dir.0.join("table_b.png");
    let (frame_b, _, _) = table_frame(9);
    opencv::imgcodecs::imwrite(table_b.to_str().unwrap(), &frame_b, &opencv::core::Vector::new()).unwrap();
    let run = |workers: &str| {
        let mut c = tablecam();
        c.args(["detect", "--json", "--workers", workers, "--locator"]).arg(locator_fixture());
        c.arg("--classifier").arg(classifier_fixture());
        let out = c.arg(&good).arg(&missing).arg(&table_b).arg(&good).output().unwrap();
        assert_eq!(out.status.code(), Some(1), "an image failed");
        String::from_utf8(out.stdout).unwrap()
    };
    let one = run("1");
    let images: Vec<String> =
        one.lines().map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["image"].to_string()).collect();
    let names = [&good, &missing, &table_b, &good].map(|p| format!("{:?}", p.to_str().unwrap()));
    assert_eq!(images, names, "{one}");
    assert_eq!(run("3"), one);

    // A missing model is an error before any image, naming the file and how to get it.
    let out = tablecam().args(["detect", "--locator", "models/nope.onnx"]).arg(&good).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr.contains("models/nope.onnx") && stderr.contains("make train"), "{stderr}");
}

#[test]
fn eval_recognition_writes_its_reports() {
    let dir = TempDir::new("eval");
    // A two-frame simulator dataset in the annotations.jsonl format.
    let sim = dir.0.join("sim");
    std::fs::create_dir_all(sim.join("test")).unwrap();
    let mut jsonl = String::new();
    let mut truth_cards = 0;
    for k in 0..2u64 {
        let (frame, _, truth) = table_frame(10 + k);
        truth_cards += truth.len();
        let name = format!("test/{k:06}.jpg");
        tablecam::recognize::cli::write_jpeg(&sim.join(&name), &frame).unwrap();
        let cards: Vec<serde_json::Value> = truth
            .iter()
            .map(|(q, up)| {
                serde_json::json!({"card": if *up { "AS" } else { "back" }, "face_up": up,
                    "quad": q.iter().map(|p| [p.x, p.y]).collect::<Vec<_>>(), "visible": 1.0, "corners": []})
            })
            .collect();
        let line = serde_json::json!({"image": name, "split": "test", "design": "placeholder", "family": "placeholder",
            "width": 1280, "height": 720, "cards": cards});
        jsonl.push_str(&format!("{line}\n"));
    }
    jsonl.push_str(&format!(
        "{}\n",
        serde_json::json!({"image": "train/x.jpg", "split": "train", "width": 1, "height": 1, "cards": []})
    ));
    std::fs::write(sim.join("annotations.jsonl"), jsonl).unwrap();
    // A one-photo "real" dataset.
    let real = dir.0.join("real");
    std::fs::create_dir_all(real.join("images")).unwrap();
    let (frame, _, _) = table_frame(20);
    tablecam::recognize::cli::write_jpeg(&real.join("images/p1.jpg"), &frame).unwrap();
    std::fs::write(
        real.join("labels.csv"),
        "file,rank,suit,x1,y1,x2,y2,box_type,n_corners\np1.jpg,A,S,100,100,160,190,union,2\n",
    )
    .unwrap();

    let out_dir = dir.0.join("out");
    let out = tablecam()
        .args(["eval-recognition", "--json", "--locator"])
        .arg(locator_fixture())
        .arg("--classifier")
        .arg(classifier_fixture())
        .arg("--sim")
        .arg(&sim)
        .arg("--real")
        .arg(&real)
        .arg("--out")
        .arg(&out_dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let report: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out_dir.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["sim"]["images"], 2);
    assert_eq!(report["sim"]["counts"]["visible_cards"], truth_cards);
    assert_eq!(report["real"]["counts"]["labels"], 1);
    assert!(report["sim"]["timing"]["locator_ms"].as_f64().unwrap() > 0.0);
    assert!(std::fs::read_to_string(out_dir.join("report.md")).unwrap().contains("localization recall"));
    let grid =
        opencv::imgcodecs::imread(out_dir.join("worst_errors.jpg").to_str().unwrap(), opencv::imgcodecs::IMREAD_COLOR)
            .unwrap();
    assert!(grid.cols() > 0);
}

/// The committed models (models/MODEL_CARD.md) satisfy their contracts and give probabilities;
/// a model committed with a broken export or the wrong labels fails here, not in the field.
#[test]
fn committed_models_meet_their_contracts() {
    let opts = SessionOptions::default();
    let mut locator = Locator::load(root().join("models/locator.onnx"), &opts).unwrap();
    let (heat, geom) = locator.run_maps(ndarray::Array4::<f32>::from_elem((1, 3, 64, 96), 0.4).view()).unwrap();
    assert_eq!((heat.shape(), geom.shape()), (&[1, 3, 16, 24][..], &[1, 8, 16, 24][..]));
    assert!(heat.iter().all(|v| (0.0..=1.0).contains(v)));
    let mut classifier = Classifier::load(root().join("models/classifier.onnx"), &opts).unwrap();
    assert!((0.5..1.0).contains(&classifier.min_confidence()), "calibrated threshold {}", classifier.min_confidence());
    let (ph, pw) = classifier.patch_kind().shape();
    let probs = classifier.classify(ndarray::Array4::<f32>::from_elem((3, 3, ph, pw), 0.7).view()).unwrap();
    for row in probs.rows() {
        assert!((row.sum() - 1.0).abs() < 1e-4);
    }
    let mut face = Classifier::load(root().join(tablecam::classify::DEFAULT_FACE_PATH), &opts).unwrap();
    assert_eq!(face.patch_kind(), PatchKind::CardCorner(tablecam::classify::CornerCut::FACE));
    assert_eq!(face.designs(), classifier.designs(), "both classifiers are trained on the same decks");
    let probs = face.classify(ndarray::Array4::<f32>::from_elem((2, 3, 64, 40), 0.7).view()).unwrap();
    assert_eq!(probs.shape(), &[2, 54]);
    let mut glyph = Classifier::load(root().join(tablecam::classify::DEFAULT_GLYPH_PATH), &opts).unwrap();
    assert_eq!(glyph.patch_kind(), PatchKind::IndexGlyphs);
    assert!((0.5..1.0).contains(&glyph.min_confidence()), "calibrated threshold {}", glyph.min_confidence());
    let probs = glyph.classify(ndarray::Array4::<f32>::from_elem((2, 3, 48, 32), 0.7).view()).unwrap();
    assert_eq!(probs.shape(), &[2, 54]);
}

/// A simulator photo (1280 × 960, normal light, green cloth) through `pose` of face-up cards
/// `(code, x mm, y mm, angle)` of kde-tigullio-international, a test-split design (never
/// trained on, never used for calibration), drawn in order (later cards on top).
fn test_design_photo(
    pose: &tablecam::calib::CameraPose,
    cards: &[(&str, f64, f64, f64)],
) -> (Mat, tablecam::sim::render::RenderedFrame) {
    use tablecam::sim::faces::{design, Face};
    let deck = design("kde-tigullio-international")
        .expect("the KDE card decks are missing: `make setup` installs kdegames-card-data-kf5")
        .load()
        .unwrap();
    let g = simulated_calibration(RulesetId::Fortune3cp2025, "P1", 1280, 960, pose, None)
        .validate(Path::new("<test>"))
        .unwrap();
    let mut scene = Scene::default();
    for (i, &(code, x, y, angle)) in cards.iter().enumerate() {
        scene.cards.push(SceneCard {
            id: i as u32,
            image: Arc::new(deck.render(Face::Card(code.parse().unwrap()), 400).unwrap()),
            center_mm: Point::new(x, y),
            angle_rad: angle,
            size_mm: CARD_SIZE_MM,
            height_mm: 0.0,
            velocity_mm_per_frame: [0.0, 0.0],
        });
    }
    let r = Renderer::new(&g, &TableStyle::green(), 5).unwrap();
    let frame = r.render(&scene, &Conditions::preset("normal").unwrap(), 5).unwrap();
    (tablecam::recognize::cli::rgb_to_bgr_mat(&frame.image).unwrap(), frame)
}

/// A photo with no calibration — a close, slanted camera over a table, rendered by the
/// simulator — of four separate cards of a deck design from the test split (never trained on,
/// never used for calibration): the photo finder (`locate::photo`) outlines every card, and the
/// committed classifier misreads none (it may answer `unknown`).
#[test]
fn an_uncalibrated_photo_outlines_every_card_and_misreads_none() {
    use tablecam::locate::{order_quad, polygon_iou};
    let pose = tablecam::calib::CameraPose {
        position_mm: [40.0, 380.0, 700.0],
        target_mm: [0.0, 520.0],
        hfov_deg: 60.0,
        roll_deg: 0.0,
    };
    let cards =
        [("AS", -170.0, 470.0, 0.2), ("10H", -40.0, 560.0, -0.5), ("QC", 70.0, 630.0, 1.3), ("7D", 190.0, 560.0, 2.9)];
    let (image, frame) = test_design_photo(&pose, &cards);
    let mut recognizer =
        Recognizer::new(root().join("models/locator.onnx"), root().join("models/classifier.onnx")).unwrap();
    let found = recognizer.recognize(&image, None).unwrap();
    let mut right = 0;
    for c in &frame.cards {
        let truth = order_quad(c.quad_px);
        let code = cards[c.id as usize].0;
        let best = found
            .iter()
            .max_by(|a, b| polygon_iou(&a.quad, &truth).total_cmp(&polygon_iou(&b.quad, &truth)))
            .unwrap_or_else(|| panic!("no card found in the photo"));
        let iou = polygon_iou(&best.quad, &truth);
        assert!(iou >= 0.8, "{code}: best outline IoU {iou:.2} ({best:?})");
        assert!(best.face_up, "{code} is face up: {best:?}");
        match best.card {
            CardIdentity::Card(card) => {
                assert_eq!(card.to_string(), code, "misread: {best:?}");
                right += 1;
            }
            other => assert_eq!(other, CardIdentity::Unknown, "{code}: {best:?}"),
        }
    }
    assert_eq!(found.len(), cards.len(), "one detection per card: {found:?}");
    eprintln!("photo: {right} of {} cards named", cards.len());
}

/// The cards of the fan photos below, left to right (each later card on top).
const FAN: [&str; 7] = ["3S", "8H", "KC", "5D", "JS", "9C", "2H"];

/// A fan of [`FAN`] in a photo with no calibration, from close over the table.
fn fan_photo() -> (Mat, tablecam::sim::render::RenderedFrame) {
    let pose = tablecam::calib::CameraPose {
        position_mm: [0.0, 420.0, 520.0],
        target_mm: [0.0, 520.0],
        hfov_deg: 55.0,
        roll_deg: 0.0,
    };
    let cards: Vec<(&str, f64, f64, f64)> =
        FAN.iter().enumerate().map(|(i, &c)| (c, -110.0 + 22.0 * i as f64, 520.0, 0.0)).collect();
    test_design_photo(&pose, &cards)
}

/// The cards `options` (with the committed glyph classifier) find in `image`, uncalibrated.
fn read_photo(image: &Mat, options: tablecam::recognize::RecognizerOptions) -> Vec<tablecam::recognize::DetectedCard> {
    let options = tablecam::recognize::RecognizerOptions {
        glyph_classifier: Some(root().join(tablecam::classify::DEFAULT_GLYPH_PATH)),
        ..options
    };
    let mut rec =
        Recognizer::with_options(root().join("models/locator.onnx"), root().join("models/classifier.onnx"), options)
            .unwrap();
    rec.recognize(image, None).unwrap()
}

/// A fan of seven overlapping cards (each shows only its index strip) in a photo with no
/// calibration, of a deck design from the test split: no outline surrounds a covered card, so
/// only the index glyph proposals (`locate::glyphs`) can name them. The committed classifier
/// at its calibrated threshold (0.999) names few of them — it reads most right, but
/// less surely — yet nothing is misread or named twice, and the proposals name more than the
/// outlines alone.
#[test]
fn a_fan_is_read_from_its_index_strips_without_a_misread() {
    use tablecam::recognize::RecognizerOptions;
    let codes = FAN;
    let (image, _) = fan_photo();
    let read =
        |index_glyphs: bool| read_photo(&image, RecognizerOptions { index_glyphs, ..RecognizerOptions::default() });
    let found = read(true);
    let named: Vec<String> =
        found.iter().filter(|d| matches!(d.card, CardIdentity::Card(_))).map(|d| d.card.code()).collect();
    for code in &named {
        assert!(codes.contains(&code.as_str()), "misread {code}: {found:?}");
        assert_eq!(named.iter().filter(|c| *c == code).count(), 1, "{code} named twice: {found:?}");
    }
    let by_index = found.iter().filter(|d| d.source == Source::IndexOnly && d.card != CardIdentity::Unknown).count();
    assert!(by_index >= 1, "no card named from its index strip: {found:?}");
    let outlines_only = read(false).iter().filter(|d| matches!(d.card, CardIdentity::Card(_))).count();
    assert!(outlines_only < named.len(), "outlines alone name {outlines_only}, with the proposals {}", named.len());
    eprintln!("fan: {} of {} cards named, {by_index} from their index strip", named.len(), codes.len());
}

/// The fan above in a 16:9 photo (the middle 1280 × 720 of it) that an export stretched square
/// (to 720 × 720, as `../shared/real-cards` was): read also as a 16:9 photo squeezed square
/// (`RecognizerOptions::square_aspects`, the default), it names at least as many cards as at its
/// own aspect, misreads none, and each named card lies where that card lies in the square photo.
/// (On the shared real photos, stretched so, it names far more: docs/recognition.md; this
/// rendered fan's large indexes are read at either aspect, so which reading is kept here is a
/// tie, and `best_aspect_reading`'s unit test covers the mapping back.)
#[test]
fn a_photo_stretched_square_is_read_at_its_camera_aspect() {
    use tablecam::calib::Polygon;
    use tablecam::recognize::RecognizerOptions;
    let codes = FAN;
    let (image, frame) = fan_photo();
    let wide = Mat::roi(&image, opencv::core::Rect::new(0, 120, 1280, 720)).unwrap().try_clone().unwrap();
    let mut square = Mat::default();
    let size = opencv::core::Size::new(720, 720);
    opencv::imgproc::resize(&wide, &mut square, size, 0.0, 0.0, opencv::imgproc::INTER_AREA).unwrap();
    let read = |square_aspects: bool| {
        read_photo(&square, RecognizerOptions { square_aspects, ..RecognizerOptions::default() })
    };
    let named = |found: &[tablecam::recognize::DetectedCard]| {
        found.iter().filter(|d| matches!(d.card, CardIdentity::Card(_))).cloned().collect::<Vec<_>>()
    };
    let (own, restored) = (named(&read(false)), named(&read(true)));
    for d in &restored {
        let code = d.card.code();
        let i = codes.iter().position(|&c| c == code).unwrap_or_else(|| panic!("misread {code}: {restored:?}"));
        let truth = frame.cards.iter().find(|c| c.id as usize == i).unwrap();
        let in_square = Polygon(truth.quad_px.iter().map(|p| Point::new(p.x * 0.5625, p.y - 120.0)).collect());
        let c = Point::mean(&d.quad);
        assert!(in_square.contains(c), "{code} named at {c:?}, off its card {in_square:?}");
    }
    assert!(
        !restored.is_empty() && restored.len() >= own.len(),
        "{} named at the camera's aspect, {} at the photo's",
        restored.len(),
        own.len()
    );
    eprintln!(
        "stretched fan: {} of {} cards named ({} at the photo's own aspect)",
        restored.len(),
        codes.len(),
        own.len()
    );
}

/// A fanned hand of `codes` (each later card on top, `step_mm` apart along the row) of deck
/// `design` on a simulated San Gong table seen by a 1920 × 1080 camera, calibrated; with the
/// cards' true outlines in the same order.
fn calibrated_fan(design: &str, codes: &[&str], step_mm: f64, angle: f64) -> (Mat, Vec<[Point; 4]>) {
    use tablecam::sim::faces::{design as deck_design, Face};
    let deck = deck_design(design).expect("the card decks are missing: `make setup` installs them").load().unwrap();
    let g = simulated_calibration(RulesetId::Sangong1996, "T1", 1920, 1080, &default_pose(), None)
        .validate(Path::new("<test>"))
        .unwrap();
    let c = g
        .calibration
        .zones
        .iter()
        .find(|z| matches!(z.kind, ZoneKind::Hand { .. }))
        .map(|z| z.polygon_mm.centroid())
        .unwrap();
    let mut scene = Scene::default();
    for (i, code) in codes.iter().enumerate() {
        let along = (i as f64 - 0.5 * (codes.len() - 1) as f64) * step_mm;
        scene.cards.push(SceneCard {
            id: i as u32,
            image: Arc::new(deck.render(Face::Card(code.parse().unwrap()), 400).unwrap()),
            center_mm: Point::new(c.x + along * angle.cos(), c.y + along * angle.sin()),
            angle_rad: angle,
            size_mm: CARD_SIZE_MM,
            height_mm: 0.0,
            velocity_mm_per_frame: [0.0, 0.0],
        });
    }
    let r = Renderer::new(&g, &TableStyle::green(), 3).unwrap();
    let frame = r.render(&scene, &Conditions::preset("normal").unwrap(), 3).unwrap();
    let mut quads = vec![[Point::default(); 4]; codes.len()];
    for c in &frame.cards {
        quads[c.id as usize] = tablecam::locate::order_quad(c.quad_px);
    }
    (tablecam::recognize::cli::rgb_to_bgr_mat(&frame.image).unwrap(), quads)
}

/// A fanned hand's middle card whose outline lies 9 px along the row from the card (as the
/// table-plane fit puts one that takes the next card's frame line for its edge,
/// docs/recognition.md "Row ends") reads `unknown` from it; read from that outline moved toward
/// its neighbours (`RecognizerOptions::nudge`, the default) it is named, and no card of the fan
/// is misread either way. aisleriot-ornamental is a test design (never trained on); the hand is
/// San Gong seed 9's seat 2 of round 1 (docs/recognition.md, "Nudged outlines").
#[test]
fn a_fans_middle_card_read_off_its_outline_is_named_from_its_outline_nudged() {
    use tablecam::recognize::RecognizerOptions;
    let codes = ["AD", "2H", "AH"];
    let (image, truth) = calibrated_fan("aisleriot-ornamental", &codes, 38.0, -0.5);
    let row = Point::new(truth[2][0].x - truth[1][0].x, truth[2][0].y - truth[1][0].y);
    let n = row.x.hypot(row.y);
    let mut quads = truth.clone();
    quads[1] = quads[1].map(|p| Point::new(p.x + 9.0 * row.x / n, p.y + 9.0 * row.y / n));
    let read = |nudge: Option<f64>| {
        let options = RecognizerOptions {
            face_classifier: Some(root().join(tablecam::classify::DEFAULT_FACE_PATH)),
            glyph_classifier: Some(root().join(tablecam::classify::DEFAULT_GLYPH_PATH)),
            nudge,
            ..RecognizerOptions::default()
        };
        let mut rec = Recognizer::with_options(
            root().join("models/locator.onnx"),
            root().join("models/classifier.onnx"),
            options,
        )
        .unwrap();
        rec.identify_quads(&image, &quads).unwrap().iter().map(|v| v.identity).collect::<Vec<_>>()
    };
    let (off, on) = (read(None), read(Some(tablecam::recognize::NUDGE)));
    for (found, how) in [(&off, "as located"), (&on, "nudged")] {
        for (v, code) in found.iter().zip(codes) {
            assert!(matches!(v, CardIdentity::Unknown) || v.code() == code, "{code} misread {how}: {found:?}");
        }
    }
    assert_eq!(off[1], CardIdentity::Unknown, "the middle card reads unknown from its misplaced outline: {off:?}");
    assert_eq!(on[1].code(), "2H", "nudged, the middle card is named: {on:?}");
}
