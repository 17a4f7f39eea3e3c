//! Smoke tests for the native stack: each test really exercises one crate (and the native
//! library behind it): ort/ONNX Runtime through `tablecam::onnx`, OpenCV, ZeroMQ, image,
//! crossbeam-channel and, with the `camera` feature, nokhwa.
//!
//! They need what `make setup` installs (Debian packages and `.native/onnxruntime/`), but no
//! Python packages, no network and no camera.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use tablecam::onnx::{self, fixture, Dim, ModelContract, OnnxError, TensorElementType, TensorSpec};

/// A fresh, empty directory under the system temp dir (removed by [`TempDir`]'s drop).
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        static COUNTER: AtomicUsize = AtomicUsize::new(0);
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!(
            "tablecam-test-{tag}-{}-{nanos}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).expect("create temp dir");
        TempDir(dir)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fixture_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(fixture::PATH)
}

// ---------------------------------------------------------------------------------------------
// ort / ONNX Runtime
// ---------------------------------------------------------------------------------------------

/// softmax(x·W + b), written out independently of the library's `fixture::reference`.
fn softmax_affine(x: &[f32; 4]) -> [f64; 3] {
    let mut z = [0f64; 3];
    for (j, zj) in z.iter_mut().enumerate() {
        *zj = f64::from(fixture::B[j]);
        for (i, xi) in x.iter().enumerate() {
            *zj += f64::from(*xi) * f64::from(fixture::W[i][j]);
        }
    }
    let m = z[0].max(z[1]).max(z[2]);
    let e = z.map(|v| (v - m).exp());
    let s = e[0] + e[1] + e[2];
    e.map(|v| v / s)
}

#[test]
fn ort_runtime_is_found_and_is_1_31() {
    let rt = onnx::runtime().expect("ONNX Runtime should load (run `make setup`)");
    assert_eq!(rt.version(), onnx::ORT_VERSION);
    assert!(rt.library_path().ends_with(onnx::ORT_LIB_FILE), "{}", rt.library_path().display());
    assert!(rt.library_path().is_absolute());
}

#[test]
fn ort_fixture_batch_matches_rust_softmax() {
    let mut model = onnx::load_model(fixture_path(), fixture::contract()).expect("load fixture model");
    assert_eq!(model.metadata("tablecam.fixture").as_deref(), Some("affine_softmax"));

    let rows: [[f32; 4]; 3] = [[1.0, 2.0, 3.0, 4.0], [-1.5, 0.25, -2.0, 0.5], [3.0, -1.0, 0.5, -4.0]];
    let input = ndarray::Array2::from_shape_fn((3, 4), |(r, c)| rows[r][c]);
    let probs = model.run(input.view()).expect("run fixture model");
    assert_eq!(probs.shape(), &[3, 3]);
    for (r, row) in rows.iter().enumerate() {
        let want = softmax_affine(row);
        for c in 0..3 {
            let got = f64::from(probs[[r, c]]);
            assert!((got - want[c]).abs() <= 1e-5, "row {r} col {c}: onnx {got} vs rust {}", want[c]);
        }
        let sum: f32 = (0..3).map(|c| probs[[r, c]]).sum();
        assert!((sum - 1.0).abs() < 1e-5);
    }
    // The rows are different, so the outputs must be too (guards against a constant output).
    assert!((probs[[0, 0]] - probs[[1, 0]]).abs() > 1e-3);

    // A second run on the same session (outputs of the first one were dropped).
    let one = ndarray::Array2::from_shape_fn((1, 4), |(_, c)| rows[2][c]);
    let again = model.run(one.view()).expect("second run");
    assert!((again[[0, 1]] - probs[[2, 1]]).abs() < 1e-6);

    // The library's own self-test agrees.
    assert!(fixture::self_test().expect("self test") <= 1e-5);
}

#[test]
fn ort_corrupt_model_is_a_typed_error_naming_the_file() {
    let dir = TempDir::new("corrupt");
    let path = dir.path().join("garbage.onnx");
    std::fs::write(&path, b"\x08\x07this is not a protobuf \xff\xfe\x00\x01 at all, just garbage bytes").unwrap();
    let err = onnx::load_model(&path, fixture::contract()).expect_err("garbage must not load");
    eprintln!("corrupt model: {err}");
    assert!(matches!(&err, OnnxError::ModelLoad { path: p, .. } if *p == path), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()), "{err}");
}

#[test]
fn ort_missing_model_is_a_typed_error_naming_the_file() {
    let dir = TempDir::new("missing");
    let path = dir.path().join("nope.onnx");
    let err = onnx::load_model(&path, fixture::contract()).expect_err("missing file");
    assert!(matches!(&err, OnnxError::ModelNotFound { path: p } if *p == path), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()), "{err}");
}

#[test]
fn ort_wrong_contract_is_a_typed_error_naming_the_file() {
    let path = fixture_path();
    let good = fixture::contract();
    let wrong_shape = ModelContract { input: TensorSpec::f32("input", [Dim::Any, Dim::Fixed(5)]), ..good.clone() };
    let wrong_rank =
        ModelContract { input: TensorSpec::f32("input", [Dim::Any, Dim::Fixed(4), Dim::Any]), ..good.clone() };
    let wrong_name = ModelContract { input: TensorSpec::f32("image", [Dim::Any, Dim::Fixed(4)]), ..good.clone() };
    let wrong_dtype =
        ModelContract { input: TensorSpec { dtype: TensorElementType::Int64, ..good.input.clone() }, ..good.clone() };
    let wrong_output = ModelContract { output: TensorSpec::f32("logits", [Dim::Any, Dim::Fixed(3)]), ..good.clone() };
    let wrong_output_shape =
        ModelContract { output: TensorSpec::f32("probs", [Dim::Any, Dim::Fixed(52)]), ..good.clone() };
    for (what, contract, needle) in [
        ("shape", wrong_shape, "shape"),
        ("rank", wrong_rank, "shape"),
        ("input name", wrong_name, "\"image\""),
        ("dtype", wrong_dtype, "Int64"),
        ("output name", wrong_output, "\"logits\""),
        ("output shape", wrong_output_shape, "52"),
    ] {
        let err = onnx::load_model(&path, contract).expect_err(what);
        eprintln!("wrong {what}: {err}");
        assert!(matches!(&err, OnnxError::Contract { path: p, .. } if *p == path), "{what}: {err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()) && msg.contains(needle), "{what}: {msg}");
    }
}

#[test]
fn ort_input_of_the_wrong_shape_is_refused_before_running() {
    let mut model = onnx::load_model(fixture_path(), fixture::contract()).unwrap();
    let x = ndarray::Array2::<f32>::zeros((2, 5));
    let err = model.run(x.view()).expect_err("wrong input width");
    assert!(matches!(&err, OnnxError::InputShape { got, .. } if got == &[2, 5]), "{err:?}");
}

// ---------------------------------------------------------------------------------------------
// OpenCV
// ---------------------------------------------------------------------------------------------

mod cv {
    use opencv::core::{self, Mat, Point2f, Scalar, Size, Vec3b, Vector, CV_8UC1, CV_8UC3};
    use opencv::prelude::*;
    use opencv::{calib3d, imgcodecs, imgproc, videoio};

    use super::TempDir;

    /// The true homography: every coefficient is a short binary fraction, and every test point
    /// has w = g·x + h·y + 1 in {1/2, 1, 2}, so the point pairs are exact in f32 (which OpenCV
    /// uses internally) and the recovered matrix can be checked to 1e-6.
    const H: [[f64; 3]; 3] = [[1.5, 0.25, 12.0], [-0.125, 1.25, 8.0], [1.0 / 64.0, -1.0 / 128.0, 1.0]];

    fn apply(h: &[[f64; 3]; 3], x: f64, y: f64) -> (f64, f64) {
        let w = h[2][0] * x + h[2][1] * y + h[2][2];
        ((h[0][0] * x + h[0][1] * y + h[0][2]) / w, (h[1][0] * x + h[1][1] * y + h[1][2]) / w)
    }

    #[test]
    fn find_homography_recovers_a_known_matrix() {
        let src_xy: [(f64, f64); 8] = [
            (0.0, 0.0),
            (16.0, 32.0),
            (40.0, 80.0),
            (64.0, 0.0),
            (80.0, 32.0),
            (100.0, 72.0),
            (0.0, 64.0),
            (24.0, 112.0),
        ];
        let mut src = Vector::<Point2f>::new();
        let mut dst = Vector::<Point2f>::new();
        for &(x, y) in &src_xy {
            let (u, v) = apply(&H, x, y);
            assert_eq!(f64::from(u as f32), u, "test point must be exact in f32");
            assert_eq!(f64::from(v as f32), v, "test point must be exact in f32");
            src.push(Point2f::new(x as f32, y as f32));
            dst.push(Point2f::new(u as f32, v as f32));
        }
        let mut mask = Mat::default();
        let found = calib3d::find_homography(&src, &dst, &mut mask, 0, 3.0).unwrap();
        assert_eq!((found.rows(), found.cols()), (3, 3));
        let mut h = [[0f64; 3]; 3];
        for (r, row) in h.iter_mut().enumerate() {
            for (c, v) in row.iter_mut().enumerate() {
                *v = *found.at_2d::<f64>(r as i32, c as i32).unwrap();
            }
        }
        let scale = h[2][2];
        let h = h.map(|row| row.map(|v| v / scale));
        for r in 0..3 {
            for c in 0..3 {
                assert!((h[r][c] - H[r][c]).abs() < 1e-6, "H[{r}][{c}]: {} vs {}", h[r][c], H[r][c]);
            }
        }
        // The recovered matrix maps the pairs, and points in between, like the true one.
        for &(x, y) in src_xy.iter().chain(&[(50.0, 50.0), (10.5, 90.25)]) {
            let (u, v) = apply(&h, x, y);
            let (tu, tv) = apply(&H, x, y);
            assert!((u - tu).abs() < 1e-6 && (v - tv).abs() < 1e-6, "({x},{y}) -> ({u},{v}) vs ({tu},{tv})");
        }
    }

    #[test]
    fn warp_perspective_moves_a_synthetic_square() {
        let mut img = Mat::new_rows_cols_with_default(64, 64, CV_8UC1, Scalar::all(0.0)).unwrap();
        for y in 16..24 {
            for x in 16..24 {
                *img.at_2d_mut::<u8>(y, x).unwrap() = 255;
            }
        }
        // Translation by (10, 5) and a 2x scale as a homography.
        let m = Mat::from_slice_2d(&[[2.0f64, 0.0, 10.0], [0.0, 2.0, 5.0], [0.0, 0.0, 1.0]]).unwrap();
        let mut out = Mat::default();
        imgproc::warp_perspective(
            &img,
            &mut out,
            &m,
            Size::new(80, 72),
            imgproc::INTER_NEAREST,
            core::BORDER_CONSTANT,
            Scalar::all(0.0),
        )
        .unwrap();
        assert_eq!((out.cols(), out.rows()), (80, 72));
        // The square [16,24) maps to [42,58) in x and [37,53) in y.
        assert_eq!(*out.at_2d::<u8>(45, 50).unwrap(), 255);
        assert_eq!(*out.at_2d::<u8>(38, 43).unwrap(), 255);
        assert_eq!(*out.at_2d::<u8>(20, 20).unwrap(), 0, "the original place is empty now");
        assert_eq!(*out.at_2d::<u8>(60, 60).unwrap(), 0);
        let white = core::count_non_zero(&out).unwrap();
        assert_eq!(white, 16 * 16, "an 8x8 square scaled by 2");
    }

    fn pattern(rows: i32, cols: i32, seed: u8) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(rows, cols, CV_8UC3, Scalar::all(0.0)).unwrap();
        for y in 0..rows {
            for x in 0..cols {
                *img.at_2d_mut::<Vec3b>(y, x).unwrap() =
                    Vec3b::from([(x * 5) as u8 ^ seed, (y * 7) as u8, ((x * y) as u8).wrapping_add(seed)]);
            }
        }
        img
    }

    #[test]
    fn png_encode_decode_round_trip_is_lossless() {
        let img = pattern(32, 48, 3);
        let mut buf = Vector::<u8>::new();
        assert!(imgcodecs::imencode(".png", &img, &mut buf, &Vector::new()).unwrap());
        assert_eq!(&buf.as_slice()[..8], b"\x89PNG\r\n\x1a\n");
        let back = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR).unwrap();
        assert_eq!((back.rows(), back.cols(), back.typ()), (32, 48, CV_8UC3));
        assert_eq!(img.data_bytes().unwrap(), back.data_bytes().unwrap());
    }

    #[test]
    fn mjpg_avi_written_and_read_back() {
        let dir = TempDir::new("video");
        let path = dir.path().join("clip.avi");
        let size = Size::new(160, 120);
        let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').unwrap();
        let mut writer = videoio::VideoWriter::new(path.to_str().unwrap(), fourcc, 10.0, size, true).unwrap();
        assert!(writer.is_opened().unwrap(), "VideoWriter did not open {}", path.display());
        for i in 0..10u8 {
            writer.write(&pattern(120, 160, i * 20)).unwrap();
        }
        writer.release().unwrap();
        assert!(std::fs::metadata(&path).unwrap().len() > 1000);

        let mut cap = videoio::VideoCapture::from_file(path.to_str().unwrap(), videoio::CAP_ANY).unwrap();
        assert!(cap.is_opened().unwrap(), "VideoCapture did not open {}", path.display());
        let mut frame = Mat::default();
        let mut count = 0;
        while cap.read(&mut frame).unwrap() {
            assert_eq!((frame.cols(), frame.rows()), (160, 120));
            count += 1;
            assert!(count <= 10, "more frames than written");
        }
        assert_eq!(count, 10);
    }
}

// ---------------------------------------------------------------------------------------------
// ZeroMQ
// ---------------------------------------------------------------------------------------------

#[test]
fn zmq_pub_sub_over_tcp_filters_topics() {
    let ctx = zmq::Context::new();
    let publisher = ctx.socket(zmq::PUB).unwrap();
    publisher.set_linger(0).unwrap();
    publisher.set_sndhwm(1000).unwrap();
    publisher.bind("tcp://127.0.0.1:*").unwrap();
    let endpoint = publisher.get_last_endpoint().unwrap().expect("utf-8 endpoint");
    assert!(endpoint.starts_with("tcp://127.0.0.1:"), "{endpoint}");

    let subscriber = ctx.socket(zmq::SUB).unwrap();
    subscriber.set_linger(0).unwrap();
    subscriber.set_rcvtimeo(50).unwrap();
    subscriber.set_subscribe(b"t1.").unwrap();
    subscriber.connect(&endpoint).unwrap();

    // Slow joiner: the subscription reaches the publisher some time after connect; until then
    // messages are dropped. Keep publishing until one arrives (bounded by a deadline).
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut joined = false;
    while Instant::now() < deadline && !joined {
        publisher.send("t1.hello", 0).unwrap();
        match subscriber.recv_bytes(0) {
            Ok(msg) => {
                assert_eq!(msg, b"t1.hello");
                joined = true;
            }
            Err(zmq::Error::EAGAIN) => {}
            Err(e) => panic!("recv failed: {e}"),
        }
    }
    assert!(joined, "subscriber never received anything within 10 s");
    // Drain stray hellos from the joining loop.
    while subscriber.recv_bytes(0).is_ok() {}

    // Interleave both topics; order is kept on one connection, so if "t2." were not filtered
    // it would show up before the last "t1." message.
    for i in 0..20 {
        publisher.send(format!("t2.x {i}").as_str(), 0).unwrap();
        publisher.send(format!("t1.x {i}").as_str(), 0).unwrap();
    }
    let mut got = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline && got.len() < 20 {
        match subscriber.recv_bytes(0) {
            Ok(msg) => got.push(String::from_utf8(msg).unwrap()),
            Err(zmq::Error::EAGAIN) => {}
            Err(e) => panic!("recv failed: {e}"),
        }
    }
    let want: Vec<String> = (0..20).map(|i| format!("t1.x {i}")).collect();
    assert_eq!(got, want, "the subscriber to \"t1.\" gets every t1.x message in order and no t2.x");
    assert!(matches!(subscriber.recv_bytes(0), Err(zmq::Error::EAGAIN)), "nothing else arrives");
}

#[test]
fn zmq_reports_version_and_capabilities() {
    let (major, minor, _) = zmq::version();
    assert!(major == 4 && minor >= 3, "libzmq {major}.{minor}");
    // CURVE depends on how libzmq was built (see docs/stack.md); the query itself must work.
    assert!(zmq::has("curve").is_some());
}

// ---------------------------------------------------------------------------------------------
// image
// ---------------------------------------------------------------------------------------------

#[test]
fn image_png_and_jpeg_round_trips() {
    use image::{ImageFormat, RgbImage};
    use std::io::Cursor;

    let img = RgbImage::from_fn(64, 48, |x, y| image::Rgb([(x * 4) as u8, (y * 5) as u8, ((x + y) * 2) as u8]));

    let mut png = Vec::new();
    img.write_to(&mut Cursor::new(&mut png), ImageFormat::Png).unwrap();
    assert_eq!(&png[..4], b"\x89PNG");
    let back = image::load_from_memory_with_format(&png, ImageFormat::Png).unwrap().to_rgb8();
    assert_eq!(back, img, "PNG is lossless");

    let mut jpeg = Vec::new();
    image::codecs::jpeg::JpegEncoder::new_with_quality(&mut jpeg, 95).encode_image(&img).unwrap();
    assert_eq!(&jpeg[..2], b"\xff\xd8");
    let back = image::load_from_memory_with_format(&jpeg, ImageFormat::Jpeg).unwrap().to_rgb8();
    assert_eq!(back.dimensions(), (64, 48));
    let total: u64 = img.as_raw().iter().zip(back.as_raw()).map(|(a, b)| u64::from(a.abs_diff(*b))).sum();
    let mean = total as f64 / img.as_raw().len() as f64;
    assert!(mean < 4.0, "JPEG q95 of a smooth gradient: mean abs error {mean}");
}

// ---------------------------------------------------------------------------------------------
// crossbeam-channel
// ---------------------------------------------------------------------------------------------

#[test]
fn crossbeam_bounded_channel_backpressure_and_order() {
    use crossbeam_channel::{bounded, RecvTimeoutError, TryRecvError, TrySendError};

    let (tx, rx) = bounded::<u32>(2);
    tx.try_send(1).unwrap();
    tx.try_send(2).unwrap();
    assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
    assert_eq!(rx.recv().unwrap(), 1);
    tx.try_send(3).unwrap();
    assert_eq!(rx.recv().unwrap(), 2);
    assert_eq!(rx.recv().unwrap(), 3);
    assert_eq!(rx.try_recv(), Err(TryRecvError::Empty));

    // Across threads, with a blocking sender held back by the bound.
    let producer = std::thread::spawn(move || {
        for i in 10..20 {
            tx.send(i).unwrap();
        }
    });
    let got: Vec<u32> = (0..10).map(|_| rx.recv_timeout(Duration::from_secs(5)).unwrap()).collect();
    assert_eq!(got, (10..20).collect::<Vec<_>>());
    producer.join().unwrap();
    assert_eq!(rx.recv_timeout(Duration::from_millis(10)), Err(RecvTimeoutError::Disconnected));
}

// ---------------------------------------------------------------------------------------------
// nokhwa (cameras)
// ---------------------------------------------------------------------------------------------

#[cfg(feature = "camera")]
#[test]
fn nokhwa_query_works_and_a_missing_camera_is_an_error() {
    use nokhwa::pixel_format::RgbFormat;
    use nokhwa::utils::{ApiBackend, CameraIndex, RequestedFormat, RequestedFormatType};

    let cameras = nokhwa::query(ApiBackend::Video4Linux).expect("query V4L2 cameras");
    let auto = nokhwa::query(ApiBackend::Auto).expect("query cameras (auto backend)");
    assert_eq!(cameras.len(), auto.len());

    let format = RequestedFormat::new::<RgbFormat>(RequestedFormatType::AbsoluteHighestFrameRate);
    let result = nokhwa::Camera::new(CameraIndex::Index(99), format);
    assert!(result.is_err(), "camera index 99 should not exist");
}
