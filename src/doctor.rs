//! `tablecam doctor`: checks that the native stack is usable on this machine.
//!
//! One line per component: ONNX Runtime (library path, version, and a run of the committed
//! fixture model), OpenCV (version and a PNG encode/decode), ZeroMQ (libzmq version, a message
//! over inproc, and whether CURVE encryption is available), cameras (whether the `camera`
//! feature is compiled in and which cameras are found) and the committed models (each loaded
//! and checked against its contract, the classifiers run once; what each reads, in what
//! arithmetic, from what threshold). A broken required component makes the command exit
//! non-zero and prints the fix.

use std::process::ExitCode;
use std::time::Duration;

use crate::onnx;

/// How a check ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ok,
    Warn,
    Fail,
}

/// The outcome of checking one component.
#[derive(Debug)]
struct Check {
    component: &'static str,
    status: Status,
    detail: String,
    fix: Option<String>,
}

impl Check {
    fn ok(component: &'static str, detail: String) -> Self {
        Check { component, status: Status::Ok, detail, fix: None }
    }
    fn warn(component: &'static str, detail: String, fix: impl Into<String>) -> Self {
        Check { component, status: Status::Warn, detail, fix: Some(fix.into()) }
    }
    fn fail(component: &'static str, detail: String, fix: impl Into<String>) -> Self {
        Check { component, status: Status::Fail, detail, fix: Some(fix.into()) }
    }
}

/// Runs every check, prints one line per component (plus a fix line under each problem) and
/// returns success only when no required component is broken.
pub fn run() -> ExitCode {
    let checks = [check_onnx(), check_opencv(), check_zmq(), check_camera(), check_models()];
    for check in &checks {
        let tag = match check.status {
            Status::Ok => "ok  ",
            Status::Warn => "warn",
            Status::Fail => "FAIL",
        };
        println!("[{tag}] {:<13} {}", check.component, check.detail);
        if let Some(fix) = &check.fix {
            let label = if check.status == Status::Fail { "fix" } else { "note" };
            println!("       {:<13} {label}: {fix}", "");
        }
    }
    let failed = checks.iter().filter(|c| c.status == Status::Fail).count();
    if failed == 0 {
        println!("doctor: the native stack is usable");
        ExitCode::SUCCESS
    } else {
        println!("doctor: {failed} required component(s) broken; see the fix lines above");
        ExitCode::FAILURE
    }
}

fn check_onnx() -> Check {
    const NAME: &str = "ONNX Runtime";
    let rt = match onnx::runtime() {
        Ok(rt) => rt,
        Err(err) => {
            return Check::fail(NAME, err.to_string(), format!("run `make setup` (or set {})", onnx::ORT_LIB_ENV))
        }
    };
    let base = format!("{} from {}", rt.version(), rt.library_path().display());
    if onnx::fixture::path().is_none() {
        return Check::warn(
            NAME,
            format!("{base}; fixture {} not found, so no model was run", onnx::fixture::PATH),
            "run tablecam from the project checkout (or `make fixtures`) to test a model run",
        );
    }
    match onnx::fixture::self_test() {
        Ok(diff) if diff <= 1e-5 => {
            Check::ok(NAME, format!("{base}; fixture model ran OK (max error {diff:.1e})"))
        }
        Ok(diff) => Check::fail(
            NAME,
            format!("{base}; fixture model output is off by {diff:.1e} (more than 1e-5)"),
            "regenerate the fixture with `make fixtures`; if that does not help, reinstall ONNX Runtime with `rm -rf .native/onnxruntime && make setup`",
        ),
        Err(err) => Check::fail(NAME, format!("{base}; fixture model failed: {err}"), "run `make fixtures` and `make setup`"),
    }
}

fn check_opencv() -> Check {
    use opencv::core::{Mat, Scalar, Vector, CV_8UC3};
    use opencv::prelude::*;
    use opencv::{core, imgcodecs};
    const NAME: &str = "OpenCV";
    let fix = "install Debian's OpenCV: `make setup` (apt package libopencv-dev)";
    let version = match core::get_version_string() {
        Ok(v) => v,
        Err(err) => return Check::fail(NAME, format!("cannot query the version: {err}"), fix),
    };
    let roundtrip = || -> opencv::Result<bool> {
        let img = Mat::new_rows_cols_with_default(8, 8, CV_8UC3, Scalar::new(10.0, 20.0, 30.0, 0.0))?;
        let mut buf = Vector::<u8>::new();
        imgcodecs::imencode(".png", &img, &mut buf, &Vector::new())?;
        let back = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR)?;
        Ok(back.rows() == 8 && back.cols() == 8 && *back.at_2d::<core::Vec3b>(3, 3)? == core::Vec3b::from([10, 20, 30]))
    };
    match roundtrip() {
        Ok(true) => Check::ok(NAME, format!("{version}; PNG encode/decode OK")),
        Ok(false) => Check::fail(NAME, format!("{version}; PNG round-trip changed the image"), fix),
        Err(err) => Check::fail(NAME, format!("{version}; PNG round-trip failed: {err}"), fix),
    }
}

fn check_zmq() -> Check {
    const NAME: &str = "ZeroMQ";
    let (major, minor, patch) = zmq::version();
    let version = format!("libzmq {major}.{minor}.{patch}");
    let roundtrip = || -> zmq::Result<bool> {
        let ctx = zmq::Context::new();
        let a = ctx.socket(zmq::PAIR)?;
        let b = ctx.socket(zmq::PAIR)?;
        let endpoint = format!("inproc://tablecam-doctor-{}", std::process::id());
        a.bind(&endpoint)?;
        b.connect(&endpoint)?;
        b.set_rcvtimeo(i32::try_from(Duration::from_secs(2).as_millis()).unwrap_or(2000))?;
        a.send("ping", 0)?;
        Ok(b.recv_bytes(0)? == b"ping")
    };
    let curve = zmq::has("curve");
    let curve_text = match curve {
        Some(true) => "CURVE available",
        Some(false) => "CURVE not available",
        None => "CURVE unknown (libzmq cannot report capabilities)",
    };
    match roundtrip() {
        Ok(true) if curve == Some(true) => Check::ok(NAME, format!("{version}; inproc message OK; {curve_text}")),
        Ok(true) => Check::warn(
            NAME,
            format!("{version}; inproc message OK; {curve_text}"),
            "tablecam links the system libzmq (vendor/zmq-sys); it was built without libsodium, so publishing cannot use CURVE: install Debian's libzmq5 (`make setup`) and rebuild (docs/stack.md)",
        ),
        Ok(false) => Check::fail(NAME, format!("{version}; inproc message came back changed"), "rebuild: `cargo build --release`"),
        Err(err) => Check::fail(NAME, format!("{version}; inproc message failed: {err}"), "rebuild: `cargo build --release`"),
    }
}

/// The committed models under `models/` (as `tablecam run` and the evaluation commands find them
/// by default): each loads and passes its contract, and each classifier answers one patch.
fn check_models() -> Check {
    const NAME: &str = "Models";
    let fix = "run from the repository root; restore the committed files (`git checkout models/`) or retrain \
               (`make train`)";
    let options = onnx::SessionOptions::default();
    if let Err(err) = crate::locate::Locator::load(crate::locate::DEFAULT_PATH, &options) {
        return Check::fail(NAME, err.to_string(), fix);
    }
    let mut parts = vec![format!("{}: ok", crate::locate::DEFAULT_PATH.trim_start_matches("models/"))];
    for path in [crate::classify::DEFAULT_PATH, crate::classify::DEFAULT_FACE_PATH, crate::classify::DEFAULT_GLYPH_PATH]
    {
        match describe_classifier(path, &options) {
            Ok(d) => parts.push(format!("{}: {d}", path.trim_start_matches("models/"))),
            Err(err) => return Check::fail(NAME, err.to_string(), fix),
        }
    }
    Check::ok(NAME, parts.join("; "))
}

/// Loads the classifier at `path`, runs it on one blank patch and describes it.
fn describe_classifier(path: &str, options: &onnx::SessionOptions) -> Result<String, crate::classify::ClassifyError> {
    let mut c = crate::classify::Classifier::load(path, options)?;
    let (h, w) = c.patch_kind().shape();
    c.classify(ndarray::Array4::<f32>::zeros((1, 3, h, w)).view())?;
    Ok(c.describe())
}

#[cfg(feature = "camera")]
fn check_camera() -> Check {
    use nokhwa::utils::ApiBackend;
    const NAME: &str = "Camera";
    match nokhwa::query(ApiBackend::Auto) {
        Ok(cams) if cams.is_empty() => Check::ok(NAME, "feature on; no cameras found".to_owned()),
        Ok(cams) => {
            let names: Vec<String> = cams.iter().map(|c| format!("{} ({})", c.human_name(), c.index())).collect();
            Check::ok(NAME, format!("feature on; {} camera(s): {}", cams.len(), names.join(", ")))
        }
        Err(err) => Check::warn(
            NAME,
            format!("feature on; listing cameras failed: {err}"),
            "check /dev/video* permissions (the user needs the `video` group)",
        ),
    }
}

#[cfg(not(feature = "camera"))]
fn check_camera() -> Check {
    Check::ok("Camera", "feature off (built without `camera`); no camera support".to_owned())
}
