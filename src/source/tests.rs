//! Source behaviour: numbering and timestamps, drop counting under a slow
//! consumer, blocking mode losing nothing, corrupt input, reconnection,
//! the simulator as a live source.
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use opencv::core::{Mat, Scalar, Size, CV_8UC3};
use opencv::prelude::*;
use opencv::{imgcodecs, videoio};

use super::*;
use crate::rules::RulesetId;

const W: i32 = 160;
const H: i32 = 120;
const FPS: f64 = 30.0;
/// Frame `i` of the test videos is a flat colour whose blue channel is `i · STEP`.
const STEP: f64 = 8.0;

/// A fresh temporary folder for one test, removed when the test is done with it (a test run
/// must not leave its videos behind in the system's temporary folder).
struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_dir(name: &str) -> TempDir {
    let dir = std::env::temp_dir().join(format!("tablecam-source-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    TempDir(dir)
}

fn flat_frame(i: u32) -> Mat {
    let blue = i as f64 * STEP;
    Mat::new_rows_cols_with_default(H, W, CV_8UC3, Scalar::new(blue, 100.0, 200.0 - blue, 0.0)).expect("frame")
}

/// Writes `n` frames of 160×120 MJPG at 30 fps; frame `i` carries `i` in its blue channel.
fn write_video(path: &Path, n: u32) {
    let fourcc = videoio::VideoWriter::fourcc('M', 'J', 'P', 'G').expect("fourcc");
    let mut w = videoio::VideoWriter::new(path.to_str().expect("utf-8"), fourcc, FPS, Size::new(W, H), true)
        .expect("video writer");
    assert!(w.is_opened().expect("opened"), "OpenCV cannot write MJPG here");
    for i in 0..n {
        w.write(&flat_frame(i)).expect("write frame");
    }
    w.release().expect("close video");
}

/// The frame number encoded in a frame's blue channel.
fn frame_number(image: &Mat) -> u32 {
    let mean = opencv::core::mean_def(image).expect("mean");
    (mean[0] / STEP).round() as u32
}

fn drain(feed: &mut Feed<impl FrameSource>) -> (Vec<Frame>, Vec<HealthEvent>) {
    let (mut frames, mut health) = (Vec::new(), Vec::new());
    while let Some(event) = feed.next_event() {
        match event {
            SourceEvent::Frame(f) => frames.push(f),
            SourceEvent::Health(h) => health.push(h),
        }
    }
    (frames, health)
}

#[test]
fn video_file_frames_are_numbered_in_order_with_container_timestamps() {
    let dir = temp_dir("numbering");
    let path = dir.join("clip.avi");
    write_video(&path, 30);
    let source = VideoFileSource::open_file(&path, "T1-cam1").expect("open");
    let info = source.info().clone();
    assert_eq!(info.kind, SourceKind::Recorded);
    assert_eq!((info.width, info.height), (W as u32, H as u32));
    assert_eq!(info.frame_count, Some(30));
    assert!((info.nominal_fps.expect("fps") - FPS).abs() < 1e-6);

    let mut feed = Feed::new(source, FeedOptions::default());
    let (frames, health) = drain(&mut feed);
    assert_eq!(frames.len(), 30);
    for (i, f) in frames.iter().enumerate() {
        assert_eq!(&*f.camera_id, "T1-cam1");
        assert_eq!(f.seq, i as u64);
        assert_eq!(f.source_index, i as u64);
        assert_eq!(frame_number(&f.image), i as u32, "frame {i} out of order");
        assert_eq!((f.width(), f.height()), (W as u32, H as u32));
        let expected_ms = i as f64 * 1000.0 / FPS;
        assert!((f.timestamp_ms - expected_ms).abs() < 0.5, "frame {i}: {} ms, expected {expected_ms}", f.timestamp_ms);
    }
    assert!(matches!(health.as_slice(), [HealthEvent::Ended { .. }, HealthEvent::Stats(_)]), "{health:?}");
    let stats = feed.stats();
    assert_eq!((stats.frames_read, stats.frames_delivered, stats.gaps, stats.corrupt), (30, 30, 0, 0));
}

/// A live source that produces `n` tiny frames as fast as it can.
struct FastSource {
    info: SourceInfo,
    n: u64,
    next: u64,
    produced: Arc<AtomicU64>,
}

impl FastSource {
    fn new(n: u64, kind: SourceKind) -> (FastSource, Arc<AtomicU64>) {
        let produced = Arc::new(AtomicU64::new(0));
        let info = SourceInfo {
            camera_id: Arc::from("fast"),
            kind,
            input: "fast".to_string(),
            nominal_fps: None,
            width: 4,
            height: 4,
            frame_count: None,
        };
        (FastSource { info, n, next: 0, produced: produced.clone() }, produced)
    }
}

impl FrameSource for FastSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        if self.next == self.n {
            return Ok(Read::End);
        }
        let i = self.next;
        self.next += 1;
        self.produced.fetch_add(1, Ordering::Relaxed);
        let image = Mat::new_rows_cols_with_default(4, 4, CV_8UC3, Scalar::all(0.0)).expect("mat");
        Ok(Read::Frame(Capture { source_index: i, timestamp_ms: i as f64, image }))
    }
}

fn frames_of(feed: LiveFeed, per_frame: Duration) -> (Vec<Frame>, Vec<HealthEvent>, SourceStats) {
    let (mut frames, mut health) = (Vec::new(), Vec::new());
    let mut feed = feed;
    for event in feed.by_ref() {
        match event {
            SourceEvent::Frame(f) => {
                frames.push(f);
                std::thread::sleep(per_frame);
            }
            SourceEvent::Health(h) => health.push(h),
        }
    }
    let stats = feed.stop();
    (frames, health, stats)
}

#[test]
fn live_ring_drops_the_oldest_frames_under_a_slow_consumer_and_counts_them() {
    const N: u64 = 2_000;
    let (source, produced) = FastSource::new(N, SourceKind::Live);
    let feed = spawn_live(Feed::new(source, FeedOptions::default()), 4).expect("spawn");
    // Wait for the producer to finish before consuming: it must never wait for the consumer.
    let start = Instant::now();
    while produced.load(Ordering::Relaxed) < N {
        assert!(start.elapsed() < Duration::from_secs(5), "the live producer blocked on a slow consumer");
        std::thread::sleep(Duration::from_millis(1));
    }
    let (frames, health, stats) = frames_of(feed, Duration::from_millis(5));
    assert_eq!(stats.frames_read, N);
    assert_eq!(stats.frames_delivered, frames.len() as u64);
    assert_eq!(stats.frames_delivered + stats.frames_dropped, N, "{stats:?}");
    assert!(stats.frames_dropped > 0);
    assert!(frames.len() <= 4, "the ring holds 4 frames, got {}", frames.len());
    // What survives is the newest, in order.
    assert!(frames.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(frames.last().map(|f| f.seq), Some(N - 1));
    assert!(health.iter().any(|h| matches!(h, HealthEvent::Ended { .. })));
}

#[test]
fn live_ring_with_a_consumer_reading_while_it_produces_counts_every_frame() {
    const N: u64 = 300;
    let (source, _) = FastSource::new(N, SourceKind::Live);
    let feed = spawn_live(Feed::new(source, FeedOptions::default()), 4).expect("spawn");
    let (frames, _, stats) = frames_of(feed, Duration::from_micros(200));
    assert_eq!(stats.frames_delivered + stats.frames_dropped, N, "{stats:?}");
    assert!(frames.windows(2).all(|w| w[0].seq < w[1].seq));
}

#[test]
fn blocking_mode_drops_nothing_under_a_slow_consumer() {
    const N: u64 = 200;
    let (source, _) = FastSource::new(N, SourceKind::Recorded);
    let feed = spawn_blocking(Feed::new(source, FeedOptions::default()), 4).expect("spawn");
    let (frames, health, stats) = frames_of(feed, Duration::from_micros(500));
    assert_eq!(frames.len() as u64, N);
    assert!(frames.iter().enumerate().all(|(i, f)| f.seq == i as u64 && f.source_index == i as u64));
    assert_eq!((stats.frames_dropped, stats.frames_delivered), (0, N));
    // In blocking mode health events come in order: the end after the last frame.
    assert!(matches!(health.as_slice(), [HealthEvent::Ended { .. }, HealthEvent::Stats(_)]), "{health:?}");
}

#[test]
fn dropping_the_consumer_stops_the_producer() {
    let (source, produced) = FastSource::new(u64::MAX, SourceKind::Recorded);
    let feed = spawn_blocking(Feed::new(source, FeedOptions::default()), 2).expect("spawn");
    assert!(matches!(feed.recv(), Some(SourceEvent::Frame(_))));
    let stats = feed.stop();
    let after = produced.load(Ordering::Relaxed);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(produced.load(Ordering::Relaxed), after, "the producer kept going");
    assert!(stats.frames_read < 100);
}

#[test]
fn a_garbage_file_is_a_clear_error_naming_it() {
    let dir = temp_dir("garbage");
    let path = dir.join("garbage.avi");
    std::fs::write(&path, (0..50_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect::<Vec<_>>())
        .expect("write");
    let err = VideoFileSource::open_file(&path, "g").err().expect("garbage must not open");
    let msg = err.to_string();
    assert!(msg.contains("garbage.avi") && msg.contains("cannot open video file"), "{msg}");

    let missing = VideoFileSource::open_file(dir.join("missing.avi"), "m").err().expect("missing file");
    assert!(matches!(missing, SourceError::NotFound { .. }), "{missing}");
    assert!(missing.to_string().contains("missing.avi"));
}

#[test]
fn a_truncated_file_delivers_its_good_frames_and_reports_where_it_breaks() {
    let dir = temp_dir("truncated");
    let path = dir.join("cut.avi");
    write_video(&path, 30);
    let bytes = std::fs::read(&path).expect("read");
    std::fs::write(&path, &bytes[..bytes.len() * 6 / 10]).expect("truncate");
    let source = VideoFileSource::open_file(&path, "cut").expect("a truncated AVI still opens");
    let (frames, health) = drain(&mut Feed::new(source, FeedOptions::default()));
    assert!(!frames.is_empty() && frames.len() < 30, "{} frames", frames.len());
    for (i, f) in frames.iter().enumerate() {
        assert_eq!((f.seq, f.source_index, frame_number(&f.image)), (i as u64, i as u64, i as u32));
    }
    let corrupt: Vec<_> = health.iter().filter(|h| matches!(h, HealthEvent::Corrupt { .. })).collect();
    assert_eq!(corrupt.len(), 1, "{health:?}");
    if let HealthEvent::Corrupt { position, frames: missing, reason, .. } = corrupt[0] {
        assert_eq!(*position, frames.len() as u64);
        assert_eq!(*missing, 30 - frames.len() as u64);
        assert!(reason.contains("truncated"), "{reason}");
    }
    assert!(health.iter().any(|h| matches!(h, HealthEvent::Ended { .. })));
}

#[test]
fn a_damaged_frame_in_the_middle_is_skipped_or_decoded_but_never_fatal() {
    let dir = temp_dir("damaged");
    let path = dir.join("damaged.avi");
    write_video(&path, 30);
    let mut bytes = std::fs::read(&path).expect("read");
    // Overwrite a stretch in the middle of the movie data with garbage.
    let mid = bytes.len() / 2;
    for (k, b) in bytes[mid..mid + 600].iter_mut().enumerate() {
        *b = (k as u32).wrapping_mul(2_654_435_761).to_be_bytes()[0];
    }
    std::fs::write(&path, &bytes).expect("write");
    let source = VideoFileSource::open_file(&path, "damaged").expect("open");
    let mut feed = Feed::new(source, FeedOptions::default());
    let (frames, health) = drain(&mut feed);
    let stats = feed.stats();
    // Damage in the container makes FFmpeg lose a frame it cannot decode and
    // resynchronise past a few more; what it delivers stays in order, and
    // every frame the file announces is either delivered or reported.
    assert!(frames.len() >= 20 && frames.len() < 30, "{} frames, {health:?}", frames.len());
    assert!(frames.windows(2).all(|w| frame_number(&w[0].image) < frame_number(&w[1].image)));
    assert!(frames.windows(2).all(|w| w[0].source_index < w[1].source_index));
    assert!(frames.iter().enumerate().all(|(i, f)| f.seq == i as u64));
    assert_eq!(stats.frames_read + stats.corrupt + stats.frames_skipped, 30, "{stats:?} {health:?}");
    assert!(health.iter().any(|h| matches!(h, HealthEvent::Corrupt { position, .. } if *position > 0)));
    assert!(health.iter().any(|h| matches!(h, HealthEvent::Ended { .. })), "{health:?}");
}

#[test]
fn an_image_folder_skips_a_garbage_png_and_reports_its_path() {
    let dir = temp_dir("folder");
    for i in 0..5u32 {
        let name = dir.join(format!("{i:06}.png"));
        if i == 2 {
            std::fs::write(&name, b"\x89PNG\r\n\x1a\nthis is not a png").expect("write");
        } else {
            imgcodecs::imwrite_def(name.to_str().expect("utf-8"), &flat_frame(i)).expect("imwrite");
        }
    }
    std::fs::write(dir.join("notes.txt"), "not an image").expect("write");
    let source = ImageFolderSource::open(&dir, "folder", 10.0).expect("open");
    assert_eq!(source.files().len(), 5);
    let mut feed = Feed::new(source, FeedOptions::default());
    let (frames, health) = drain(&mut feed);
    let got: Vec<(u64, u64, u32)> = frames.iter().map(|f| (f.seq, f.source_index, frame_number(&f.image))).collect();
    assert_eq!(got, vec![(0, 0, 0), (1, 1, 1), (2, 3, 3), (3, 4, 4)]);
    let ts: Vec<f64> = frames.iter().map(|f| f.timestamp_ms).collect();
    assert_eq!(ts, vec![0.0, 100.0, 300.0, 400.0]);
    let corrupt: Vec<_> = health.iter().filter(|h| matches!(h, HealthEvent::Corrupt { .. })).collect();
    assert_eq!(corrupt.len(), 1, "{health:?}");
    match corrupt[0] {
        HealthEvent::Corrupt { position, path, .. } => {
            assert_eq!(*position, 2);
            assert!(path.as_deref().is_some_and(|p| p.ends_with("000002.png")), "{path:?}");
        }
        other => panic!("{other:?}"),
    }
    // A skipped corrupt image is not also a gap.
    let stats = feed.stats();
    assert_eq!((stats.corrupt, stats.gaps), (1, 0));

    let empty = temp_dir("folder-empty");
    let err = ImageFolderSource::open(&empty, "e", 30.0).err().expect("empty folder");
    assert!(err.to_string().contains("no image files"), "{err}");
}

/// A live source that fails `failures` times on reopen after its first frame.
struct FlakySource {
    info: SourceInfo,
    reopen_failures_left: u32,
    reopened: bool,
    next: u64,
}

impl FrameSource for FlakySource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        let i = self.next;
        self.next += 1;
        match i {
            0 | 2 | 3 => {}
            1 => {
                return Err(SourceError::Disconnected { input: "flaky".into(), reason: "cable pulled".into() });
            }
            _ => return Ok(Read::End),
        }
        let image = Mat::new_rows_cols_with_default(2, 2, CV_8UC3, Scalar::all(0.0)).expect("mat");
        Ok(Read::Frame(Capture { source_index: i, timestamp_ms: i as f64, image }))
    }

    fn reopen(&mut self) -> Result<(), SourceError> {
        if self.reopen_failures_left > 0 {
            self.reopen_failures_left -= 1;
            return Err(SourceError::StreamUnavailable { url: "rtsp://flaky".into() });
        }
        self.reopened = true;
        Ok(())
    }
}

fn flaky(failures: u32) -> FlakySource {
    FlakySource {
        info: SourceInfo {
            camera_id: Arc::from("flaky"),
            kind: SourceKind::Live,
            input: "flaky".into(),
            nominal_fps: None,
            width: 2,
            height: 2,
            frame_count: None,
        },
        reopen_failures_left: failures,
        reopened: false,
        next: 0,
    }
}

#[test]
fn a_disconnected_live_source_is_retried_with_exponential_backoff() {
    let options = FeedOptions {
        backoff: Backoff { initial_ms: 1, max_ms: 4, jitter: 0.0, max_attempts: None },
        ..FeedOptions::default()
    };
    let mut feed = Feed::new(flaky(3), options);
    let (frames, health) = drain(&mut feed);
    assert!(feed.source().reopened);
    // Frame 1 was lost with the connection: a gap from 1 to 2.
    assert_eq!(frames.iter().map(|f| (f.seq, f.source_index)).collect::<Vec<_>>(), vec![(0, 0), (1, 2), (2, 3)]);
    let attempts: Vec<(u32, u64, bool)> = health
        .iter()
        .filter_map(|h| match h {
            HealthEvent::ReconnectAttempt { attempt, delay_ms, error, .. } => {
                Some((*attempt, *delay_ms, error.is_none()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(attempts, vec![(1, 1, false), (2, 2, false), (3, 4, false), (4, 4, true)]);
    assert!(matches!(health[0], HealthEvent::Disconnected { ref reason, .. } if reason.contains("cable pulled")));
    assert!(health.iter().any(|h| matches!(h, HealthEvent::Reconnected { attempts: 4, .. })));
    assert!(health.iter().any(|h| matches!(h, HealthEvent::Gap { expected: 1, got: 2, .. })));
    let stats = feed.stats();
    assert_eq!((stats.disconnects, stats.reconnects, stats.gaps, stats.frames_skipped), (1, 1, 1, 1));
}

#[test]
fn a_live_source_that_never_comes_back_fails_after_max_attempts() {
    let options = FeedOptions {
        backoff: Backoff { initial_ms: 1, max_ms: 2, jitter: 0.5, max_attempts: Some(3) },
        ..FeedOptions::default()
    };
    let mut feed = Feed::new(flaky(u32::MAX), options);
    let (frames, health) = drain(&mut feed);
    assert_eq!(frames.len(), 1);
    let n = health.iter().filter(|h| matches!(h, HealthEvent::ReconnectAttempt { .. })).count();
    assert_eq!(n, 3);
    assert!(
        health.iter().any(|h| matches!(h, HealthEvent::Failed { reason, .. } if reason.contains("3 reconnection"))),
        "{health:?}"
    );
}

#[test]
fn a_recorded_source_that_fails_is_not_retried() {
    let mut source = flaky(0);
    source.info.kind = SourceKind::Recorded;
    let mut feed = Feed::new(source, FeedOptions::default());
    let (frames, health) = drain(&mut feed);
    assert_eq!(frames.len(), 1);
    assert!(!feed.source().reopened);
    assert!(health.iter().any(|h| matches!(h, HealthEvent::Failed { .. })));
}

#[test]
fn backoff_doubles_up_to_its_maximum_with_bounded_jitter() {
    let b = Backoff::default();
    let mut rng = crate::rng::Rng::seeded(7);
    let plain = Backoff { jitter: 0.0, ..b.clone() };
    let delays: Vec<u64> = (1..=9).map(|a| plain.delay_ms(a, &mut rng)).collect();
    assert_eq!(delays, vec![500, 1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
    for attempt in 1..=6 {
        let base = plain.delay_ms(attempt, &mut rng) as f64;
        let d = b.delay_ms(attempt, &mut rng) as f64;
        assert!(d >= base * 0.8 - 1.0 && d <= base * 1.2 + 1.0, "attempt {attempt}: {d} vs {base}");
    }
}

#[test]
fn the_simulator_is_a_live_source_of_the_requested_size() {
    let spec = SimulatedSpec {
        ruleset: RulesetId::Fortune3cp2025,
        seed: 3,
        width: 320,
        height: 240,
        rounds: Some(1),
        pace: Pace::AsFastAsPossible,
        camera_id: "sim-test".to_string(),
    };
    let source = SimulatedSource::new(spec).expect("simulator");
    assert_eq!(source.info().kind, SourceKind::Live);
    let feed = spawn_live(Feed::new(source, FeedOptions::default()), 64).expect("spawn");
    let mut frames = Vec::new();
    while frames.len() < 12 {
        match feed.recv_timeout(Duration::from_secs(10)).expect("a frame") {
            SourceEvent::Frame(f) => frames.push(f),
            SourceEvent::Health(_) => {}
        }
    }
    feed.stop();
    for f in &frames {
        assert_eq!((f.width(), f.height()), (320, 240));
        assert_eq!(&*f.camera_id, "sim-test");
    }
    assert!(frames.windows(2).all(|w| w[1].timestamp_ms > w[0].timestamp_ms && w[1].seq > w[0].seq));
    let dt = frames[1].timestamp_ms - frames[0].timestamp_ms;
    assert!((dt - 1000.0 / 30.0).abs() < 1e-6 || frames[1].source_index > frames[0].source_index + 1);
}

#[test]
fn inputs_parse_to_source_kinds_with_default_camera_ids() {
    let dir = temp_dir("spec");
    assert_eq!(SourceSpec::parse("camera:2").expect("camera"), SourceSpec::Camera(2));
    assert_eq!(SourceSpec::parse("sim:stud-2004").expect("sim"), SourceSpec::Sim(RulesetId::Stud2004));
    assert!(SourceSpec::parse("sim:poker").is_err());
    assert!(SourceSpec::parse("camera:x").is_err());
    assert!(SourceSpec::parse("ftp://x/y").is_err());
    let url = SourceSpec::parse("rtsp://user:pw@10.0.0.5:554/stream1").expect("url");
    assert_eq!(url.default_camera_id(), "10.0.0.5:554/stream1");
    assert_eq!(SourceSpec::parse(dir.to_str().expect("utf-8")).expect("dir"), SourceSpec::Folder(dir.to_path_buf()));
    let file = SourceSpec::parse("/videos/T1-cam2.avi").expect("file");
    assert_eq!(file.default_camera_id(), "T1-cam2");
    let err = file.open(&OpenOptions::default()).err().expect("missing file");
    assert!(err.to_string().contains("T1-cam2.avi"), "{err}");
}

#[test]
fn probe_reports_a_good_file_and_a_bad_input_independently() {
    let dir = temp_dir("probe");
    let path = dir.join("probe.avi");
    write_video(&path, 30);
    let args = ProbeArgs { inputs: vec![], frames: None, fps: 30.0, ring: 4, fast: true, json: true };
    let good = probe(path.to_str().expect("utf-8"), &args);
    assert!(good.error.is_none(), "{:?}", good.error);
    assert_eq!((good.frames, good.width, good.height, good.gaps, good.corrupt, good.dropped), (30, 160, 120, 0, 0, 0));
    assert!((good.timestamp_fps.expect("fps") - 30.0).abs() < 0.1);
    let bad = probe(dir.join("nope.avi").to_str().expect("utf-8"), &args);
    assert!(bad.error.as_deref().is_some_and(|e| e.contains("nope.avi")), "{:?}", bad.error);
    let limited = probe(path.to_str().expect("utf-8"), &ProbeArgs { frames: Some(5), ..args });
    assert_eq!(limited.frames, 5);
}

#[cfg(feature = "camera")]
#[test]
fn a_missing_camera_is_a_clear_error() {
    let err = CameraSource::open(99, "cam99").err().expect("camera 99 does not exist");
    let msg = err.to_string();
    assert!(msg.contains("camera 99") && msg.contains("video"), "{msg}");
}
