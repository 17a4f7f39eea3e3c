//! Frames decoded per second from video files through `tablecam::source`.
//!
//! Run with `cargo bench --bench decode`. Before measuring, the bench renders
//! 60 frames of a fortune3cp-2025 table with the simulator (as a
//! `SimulatedSource`, unpaced) at 1280×720 and at 1920×1080 and writes each
//! set to a temporary MJPG `.avi` (JPEG quality OpenCV's default, 95) and,
//! where the installed OpenCV writes it, an mp4v `.mp4`. Each iteration then
//! opens one file and reads all 60 frames into BGR `Mat`s:
//!
//! * `decode/<size>/<codec>`: a `VideoFileSource` driven by a `Feed` on the
//!   bench thread (what decoding costs);
//! * `decode_thread/<size>/mjpg`: the same through `spawn_blocking`, the
//!   source on its own thread and the frames crossing a bounded queue (what
//!   the threading adapter adds).
//!
//! Throughput is reported in frames (elements) per second.
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use opencv::core::Size;
use opencv::prelude::*;
use opencv::videoio;
use tablecam::rules::RulesetId;
use tablecam::source::{
    spawn_blocking, Feed, FeedOptions, FrameSource, Pace, SimulatedSource, SimulatedSpec, SourceEvent, VideoFileSource,
};

const FRAMES: usize = 60;

/// Renders `FRAMES` simulator frames of `width`×`height`.
fn render_frames(width: u32, height: u32) -> Vec<opencv::core::Mat> {
    let spec = SimulatedSpec {
        ruleset: RulesetId::Fortune3cp2025,
        seed: 11,
        width,
        height,
        rounds: None,
        pace: Pace::AsFastAsPossible,
        camera_id: "bench".to_string(),
    };
    let mut feed = Feed::new(SimulatedSource::new(spec).expect("simulator"), FeedOptions::default());
    let mut frames = Vec::with_capacity(FRAMES);
    while frames.len() < FRAMES {
        match feed.next_event().expect("the simulator runs forever") {
            SourceEvent::Frame(f) => frames.push((*f.image).clone()),
            SourceEvent::Health(_) => {}
        }
    }
    frames
}

/// Writes `frames` with `fourcc`; false if this OpenCV cannot write that codec.
fn write_video(path: &Path, fourcc: [char; 4], frames: &[opencv::core::Mat]) -> bool {
    let code = videoio::VideoWriter::fourcc(fourcc[0], fourcc[1], fourcc[2], fourcc[3]).expect("fourcc");
    let size = Size::new(frames[0].cols(), frames[0].rows());
    let Ok(mut w) = videoio::VideoWriter::new(path.to_str().expect("utf-8"), code, 30.0, size, true) else {
        return false;
    };
    if !w.is_opened().unwrap_or(false) {
        return false;
    }
    for f in frames {
        w.write(f).expect("write frame");
    }
    w.release().expect("close video");
    true
}

fn read_all(path: &Path) -> usize {
    let source = VideoFileSource::open_file(path, "bench").expect("open");
    let mut feed = Feed::new(source, FeedOptions::default());
    let mut n = 0;
    while let Some(event) = feed.next_event() {
        if let SourceEvent::Frame(f) = event {
            assert!(f.image.cols() > 0);
            n += 1;
        }
    }
    assert_eq!(n, FRAMES, "{}: frames lost", path.display());
    n
}

fn read_all_threaded(path: &Path) -> usize {
    let source = VideoFileSource::open_file(path, "bench").expect("open");
    let info_frames = source.info().frame_count;
    let feed = spawn_blocking(Feed::new(source, FeedOptions::default()), 8).expect("thread");
    let n = feed.filter(|e| matches!(e, SourceEvent::Frame(_))).count();
    assert_eq!(Some(n as u64), info_frames);
    n
}

fn decode(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("tablecam-bench-decode-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut files: Vec<(String, PathBuf)> = Vec::new();
    for (w, h) in [(1280, 720), (1920, 1080)] {
        let frames = render_frames(w, h);
        for (codec, fourcc, ext) in [("mjpg", ['M', 'J', 'P', 'G'], "avi"), ("mp4v", ['m', 'p', '4', 'v'], "mp4")] {
            let path = dir.join(format!("{h}p-{codec}.{ext}"));
            if write_video(&path, fourcc, &frames) {
                let mb = std::fs::metadata(&path).map(|m| m.len() as f64 / 1e6).unwrap_or(0.0);
                eprintln!("{}: {FRAMES} frames, {mb:.1} MB", path.display());
                files.push((format!("{h}p/{codec}"), path));
            } else {
                eprintln!("{h}p/{codec}: this OpenCV cannot write {codec}; skipped");
            }
        }
    }

    let mut group = c.benchmark_group("decode");
    group.sample_size(10).measurement_time(Duration::from_secs(8)).throughput(Throughput::Elements(FRAMES as u64));
    for (name, path) in &files {
        group.bench_function(name.as_str(), |b| b.iter(|| read_all(path)));
    }
    group.finish();

    let mut group = c.benchmark_group("decode_thread");
    group.sample_size(10).measurement_time(Duration::from_secs(8)).throughput(Throughput::Elements(FRAMES as u64));
    for (name, path) in files.iter().filter(|(n, _)| n.ends_with("mjpg")) {
        group.bench_function(name.as_str(), |b| b.iter(|| read_all_threaded(path)));
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, decode);
criterion_main!(benches);
