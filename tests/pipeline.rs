//! The pipeline's plumbing with doubles for the sources, the recognizer and the table logic:
//! order through a multi-worker pool, counts that add up, draining, tables that stay apart,
//! determinism, errors counted rather than fatal, and the live drop policy.
//!
//! Each synthetic frame carries its own number in its pixels (blue = n % 256, green = n / 256,
//! red = a per-table tag), so the recognizer double can say which frame it saw without any
//! side channel, and sleeps a little, differently per frame, so that workers finish out of order.
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use opencv::core::{Mat, Scalar, Vec3b, CV_8UC3};
use opencv::prelude::*;
use tablecam::calib::{Calibration, Point, TableGeometry};
use tablecam::pipeline::{
    CardRecognizer, Collector, EventSink, HealthReport, Hints, ObservedFrame, Pipeline, PipelineError, PipelineOptions,
    PipelineReport, SerializedEvent, StageName, TableHint, TableInput, TableLogic,
};
use tablecam::recognize::{CardIdentity, DetectedCard, Source};
use tablecam::source::{Capture, FrameSource, HealthEvent, Read, SourceError, SourceInfo, SourceKind};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn geometry() -> Arc<TableGeometry> {
    Arc::new(Calibration::load(&root().join("calibration/fortune3cp-2025.json")).expect("example calibration"))
}

/// `frames` tiny frames at 30 fps whose pixels say their number and table.
struct NumberedFrames {
    info: SourceInfo,
    next: u64,
    frames: u64,
    tag: u8,
    /// Pause before each frame (a live camera's frame interval).
    interval: Option<Duration>,
}

impl NumberedFrames {
    fn new(camera: &str, tag: u8, frames: u64, kind: SourceKind) -> NumberedFrames {
        NumberedFrames {
            info: SourceInfo {
                camera_id: Arc::from(camera),
                kind,
                input: format!("numbered:{camera}"),
                nominal_fps: Some(30.0),
                width: 2,
                height: 2,
                frame_count: Some(frames),
            },
            next: 0,
            frames,
            tag,
            interval: None,
        }
    }
}

impl FrameSource for NumberedFrames {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        if self.next == self.frames {
            return Ok(Read::End);
        }
        if let Some(d) = self.interval {
            std::thread::sleep(d);
        }
        let n = self.next;
        self.next += 1;
        let colour = Scalar::new((n % 256) as f64, (n / 256) as f64, f64::from(self.tag), 0.0);
        let image = Mat::new_rows_cols_with_default(2, 2, CV_8UC3, colour).expect("mat");
        Ok(Read::Frame(Capture { source_index: n, timestamp_ms: n as f64 * 1000.0 / 30.0, image }))
    }
}

/// What a frame's pixels say: (table tag, frame number).
fn decode(image: &Mat) -> (u8, u64) {
    let p = *image.at_2d::<Vec3b>(0, 0).expect("pixel");
    (p[2], u64::from(p[0]) + 256 * u64::from(p[1]))
}

/// Answers one card whose confidence encodes the frame it saw; fails on every frame whose
/// number is `fail_every`-th, panics on frame `panic_on`.
struct EchoRecognizer {
    fail_every: Option<u64>,
    panic_on: Option<u64>,
    delay: Duration,
}

impl CardRecognizer for EchoRecognizer {
    fn recognize(&mut self, image: &Mat, _geometry: &TableGeometry) -> Result<Vec<DetectedCard>, PipelineError> {
        let (tag, n) = decode(image);
        // Uneven work so that the pool's results come back out of order.
        std::thread::sleep(self.delay * ((n * 7919 % 5) as u32));
        if self.panic_on == Some(n) {
            panic!("double told to panic on frame {n}");
        }
        if self.fail_every.is_some_and(|k| n % k == k - 1) {
            return Err(PipelineError::stage("recognize", format!("double fails frame {n}")));
        }
        let p = Point { x: n as f64, y: f64::from(tag) };
        Ok(vec![DetectedCard {
            card: CardIdentity::Unknown,
            confidence: 0.5,
            face_up: false,
            quad: [p; 4],
            index_boxes: vec![],
            source: Source::Card,
            reading: None,
            rank: None,
            twin: tablecam::recognize::TwinPrint::Alone,
        }])
    }
}

fn factory(
    fail_every: Option<u64>,
    panic_on: Option<u64>,
    delay: Duration,
) -> impl Fn(usize) -> Result<Box<dyn CardRecognizer>, PipelineError> + Send + Sync {
    move |_| Ok(Box::new(EchoRecognizer { fail_every, panic_on, delay }) as Box<dyn CardRecognizer>)
}

/// One event per frame (`frame`, the frame number the recognizer read from the pixels, the
/// table tag), one per source health event, one per health report, and one at the end.
struct EchoLogic {
    table: Arc<str>,
    seq: u64,
    fail_on: Option<u64>,
}

impl EchoLogic {
    fn event(&mut self, kind: &str, frame: u64, body: String, volatile: bool) -> SerializedEvent {
        self.seq += 1;
        SerializedEvent {
            table_id: self.table.clone(),
            kind: kind.into(),
            topic: format!("{}.{kind}", self.table),
            seq: self.seq,
            frame,
            time_ms: 0.0,
            json: format!(r#"{{"seq":{},"kind":"{kind}","frame":{frame},"body":{body}}}"#, self.seq),
            text: None,
            volatile,
        }
    }
}

impl TableLogic for EchoLogic {
    fn frame(&mut self, f: &ObservedFrame, out: &mut Vec<SerializedEvent>) -> Result<(), PipelineError> {
        if self.fail_on == Some(f.frame) {
            return Err(PipelineError::stage("track", "double fails this frame"));
        }
        let seen = f.cards[0].quad[0];
        let body = format!(r#"{{"seen":{},"tag":{},"t":{}}}"#, seen.x, seen.y, f.timestamp_ms);
        out.push(self.event("frame", f.frame, body, false));
        Ok(())
    }

    fn source_health(&mut self, event: &HealthEvent, out: &mut Vec<SerializedEvent>) {
        let body = serde_json::to_string(event).expect("json");
        // The source's statistics are a snapshot of live counters (`frames_delivered` depends
        // on how far the reader thread got when the file ended): volatile, like health reports.
        let volatile = matches!(event, HealthEvent::Stats { .. });
        out.push(self.event("source", 0, body, volatile));
    }

    fn health(&mut self, report: &HealthReport, out: &mut Vec<SerializedEvent>) {
        let body = serde_json::to_string(report).expect("json");
        out.push(self.event("health", report.frame, body, true));
    }

    fn hint(&mut self, hint: &TableHint, out: &mut Vec<SerializedEvent>) {
        let what = match hint {
            TableHint::Refused(m) => m.clone(),
            TableHint::Hint(h) => format!("{h:?}"),
        };
        out.push(self.event("hint", 0, serde_json::to_string(&what).expect("json"), false));
    }

    fn finish(&mut self, out: &mut Vec<SerializedEvent>) -> Result<(), PipelineError> {
        out.push(self.event("end", 0, "{}".into(), false));
        Ok(())
    }
}

fn table(id: &str, source: NumberedFrames, fail_on: Option<u64>) -> TableInput {
    TableInput {
        table_id: id.into(),
        source: Box::new(source),
        geometry: geometry(),
        presence: None,
        empty_table: None,
        logic: Box::new(EchoLogic { table: Arc::from(id), seq: 0, fail_on }),
        hints: Hints::None,
    }
}

fn run(
    tables: Vec<TableInput>,
    recognizer: &(dyn Fn(usize) -> Result<Box<dyn CardRecognizer>, PipelineError> + Send + Sync),
    options: PipelineOptions,
) -> (Collector, PipelineReport) {
    let collector = Collector::new();
    let pipeline =
        Pipeline::start(tables, &recognizer, Box::new(collector.clone()), &options, Arc::new(AtomicBool::new(false)))
            .expect("pipeline starts");
    let report = pipeline.join();
    assert!(report.panicked.is_empty(), "threads panicked: {:?}", report.panicked);
    (collector, report)
}

fn frame_events(c: &Collector, table: &str) -> Vec<serde_json::Value> {
    c.table(table)
        .iter()
        .filter(|e| e.kind == "frame")
        .map(|e| serde_json::from_str::<serde_json::Value>(&e.json).expect("json"))
        .collect()
}

fn opts(workers: usize) -> PipelineOptions {
    PipelineOptions { workers, queue_capacity: 4, health_interval_ms: 1000 }
}

/// A worker stalled on one frame while the others run far ahead (the OS descheduling it, a
/// slow first ONNX run): the results wait in order and nothing counts as an error. This failed
/// once in a fresh-clone `make test` on a loaded machine, when the wait was capped.
#[test]
fn a_stalled_worker_holds_back_the_order_without_errors() {
    struct Stalling(EchoRecognizer);
    impl CardRecognizer for Stalling {
        fn recognize(&mut self, image: &Mat, g: &TableGeometry) -> Result<Vec<DetectedCard>, PipelineError> {
            if decode(image).1 == 10 {
                std::thread::sleep(Duration::from_millis(400));
            }
            self.0.recognize(image, g)
        }
    }
    let frames = 200;
    let source = NumberedFrames::new("cam-a", 1, frames, SourceKind::Recorded);
    let stalling = |_| {
        let echo = EchoRecognizer { fail_every: None, panic_on: None, delay: Duration::ZERO };
        Ok(Box::new(Stalling(echo)) as Box<dyn CardRecognizer>)
    };
    let (c, report) = run(vec![table("A", source, None)], &stalling, opts(4));
    let got = frame_events(&c, "A");
    assert_eq!(got.len() as u64, frames);
    assert!(got.iter().enumerate().all(|(i, e)| e["frame"] == i as u64), "frame numbers in order");
    let t = &report.tables[0];
    for s in &t.stages {
        assert!(s.balanced(), "{:?}: received {} ≠ sent + dropped + errors", s.stage, s.received);
        assert_eq!(s.errors, 0, "{:?}: {:?}", s.stage, s.last_error);
    }
}

/// A replay applies each backend message before the frame the live run applied it before, in
/// order, and none past the end (a live run never hands the logic a message after its last frame).
#[test]
fn replayed_hints_apply_before_their_frames() {
    let source = NumberedFrames::new("cam-a", 1, 100, SourceKind::Recorded);
    let mut t = table("A", source, None);
    let refused = |f: u64, m: &str| (f, TableHint::Refused(m.into()));
    t.hints = Hints::Replayed(
        [refused(0, "first"), refused(5, "a"), refused(50, "b"), refused(50, "c"), refused(1000, "never")].into(),
    );
    let (c, _) = run(vec![t], &factory(None, None, Duration::ZERO), opts(2));
    let order: Vec<String> = c
        .table("A")
        .iter()
        .filter(|e| e.kind == "frame" || e.kind == "hint")
        .map(|e| {
            let v: serde_json::Value = serde_json::from_str(&e.json).expect("json");
            if e.kind == "frame" {
                format!("f{}", v["frame"])
            } else {
                v["body"].as_str().expect("message").to_string()
            }
        })
        .collect();
    let at = |x: &str| order.iter().position(|o| o == x).unwrap_or_else(|| panic!("{x} missing: {order:?}"));
    assert_eq!(at("first"), 0);
    assert_eq!((at("a"), at("f5")), (at("f4") + 1, at("a") + 1));
    assert_eq!((at("b"), at("c"), at("f50")), (at("f49") + 1, at("f49") + 2, at("f49") + 3));
    assert!(!order.iter().any(|o| o == "never"), "{order:?}");
}

#[test]
fn frames_leave_a_four_worker_pool_in_order_and_every_count_adds_up() {
    let frames = 300;
    let source = NumberedFrames::new("cam-a", 1, frames, SourceKind::Recorded);
    let (c, report) = run(vec![table("A", source, None)], &factory(None, None, Duration::from_micros(300)), opts(4));
    let got = frame_events(&c, "A");
    assert_eq!(got.len() as u64, frames, "recorded input loses nothing");
    for (i, e) in got.iter().enumerate() {
        assert_eq!(e["frame"], i as u64, "frame numbers in order");
        assert_eq!(e["body"]["seen"], i as f64, "the recognizer's result belongs to that frame");
    }
    let t = &report.tables[0];
    for s in &t.stages {
        assert!(s.balanced(), "{:?}: received {} ≠ sent + dropped + errors", s.stage, s.received);
    }
    let count = |st: StageName| t.stage(st).expect("stage").clone();
    assert_eq!(count(StageName::Source).received, frames);
    assert_eq!(count(StageName::Recognize).sent, frames);
    assert_eq!(count(StageName::Track).sent, frames);
    // Items re-ordered: every frame plus the source's health events (its final stats, its end).
    assert_eq!(count(StageName::Reorder).sent, frames + 2);
    assert_eq!(count(StageName::Sink).sent, c.table("A").len() as u64, "the sink took every event");
    assert!(count(StageName::Recognize).latency_p50_ms.is_some());
    // Health every second of frame time (300 frames at 30 fps: after frames 30, 60, … 270)
    // and once at the end.
    let health: Vec<u64> = c.table("A").iter().filter(|e| e.kind == "health").map(|e| e.frame).collect();
    assert_eq!(health, vec![30, 60, 90, 120, 150, 180, 210, 240, 270, frames - 1]);
    let src = t.source.as_ref().expect("source stats");
    assert_eq!((src.frames_read, src.frames_dropped), (frames, 0));
    // The end of the stream: the source's end, then finish.
    let kinds: Vec<String> = c.table("A").iter().rev().take(3).map(|e| e.kind.clone()).collect();
    assert_eq!(kinds, vec!["health", "end", "source"]);
}

#[test]
fn the_same_input_twice_gives_byte_identical_event_streams() {
    let go = || {
        let source = NumberedFrames::new("cam-a", 1, 150, SourceKind::Recorded);
        run(vec![table("A", source, None)], &factory(Some(10), None, Duration::from_micros(200)), opts(3)).0
    };
    let (a, b) = (go(), go());
    let (sa, sb) = (a.deterministic_stream("A"), b.deterministic_stream("A"));
    // 135 frames (every tenth fails recognition), the source's end (its statistics are volatile)
    // and the end.
    assert_eq!(sa.lines().count(), 137);
    assert_eq!(sa, sb);
    // Health reports come after the same frames even though their latencies differ.
    let at = |c: &Collector| c.table("A").iter().filter(|e| e.volatile).map(|e| e.frame).collect::<Vec<_>>();
    assert_eq!(at(&a), at(&b));
}

#[test]
fn two_tables_in_one_process_do_not_mix() {
    let a = NumberedFrames::new("cam-a", 1, 120, SourceKind::Recorded);
    let b = NumberedFrames::new("cam-b", 2, 80, SourceKind::Recorded);
    let (c, report) =
        run(vec![table("A", a, None), table("B", b, None)], &factory(None, None, Duration::from_micros(200)), opts(3));
    for (id, tag, n) in [("A", 1.0, 120u64), ("B", 2.0, 80)] {
        let got = frame_events(&c, id);
        assert_eq!(got.len() as u64, n, "table {id}");
        for (i, e) in got.iter().enumerate() {
            assert_eq!(e["frame"], i as u64);
            assert_eq!(e["body"]["tag"], tag, "table {id} got a frame of the other table");
        }
        assert!(c.table(id).iter().all(|e| e.topic.starts_with(&format!("{id}."))));
    }
    assert_eq!(report.tables[0].stage(StageName::Track).expect("track").sent, 120);
    assert_eq!(report.tables[1].stage(StageName::Track).expect("track").sent, 80);
}

#[test]
fn failing_stages_are_counted_and_reported_not_fatal() {
    let frames = 100;
    let source = NumberedFrames::new("cam-a", 1, frames, SourceKind::Recorded);
    // Recognition fails on frames 9, 19, … (10 frames) and panics on frame 42; the table logic
    // fails on frame 50.
    let (c, report) =
        run(vec![table("A", source, Some(50))], &factory(Some(10), Some(42), Duration::from_micros(100)), opts(2));
    let t = &report.tables[0];
    let rec = t.stage(StageName::Recognize).expect("recognize");
    assert_eq!((rec.received, rec.sent, rec.errors), (frames, frames - 11, 11));
    assert!(rec.last_error.is_some());
    let track = t.stage(StageName::Track).expect("track");
    assert_eq!((track.received, track.sent, track.errors), (frames - 11, frames - 12, 1));
    assert!(track.last_error.as_deref().unwrap_or("").contains("frame 50"), "{:?}", track.last_error);
    let got: Vec<u64> = frame_events(&c, "A").iter().map(|e| e["frame"].as_u64().expect("n")).collect();
    let expected: Vec<u64> = (0..frames).filter(|n| n % 10 != 9 && *n != 42 && *n != 50).collect();
    assert_eq!(got, expected, "the other frames pass, in order");
    // The last health event tells the errors.
    let last = c.table("A").into_iter().rev().find(|e| e.kind == "health").expect("health");
    let v: serde_json::Value = serde_json::from_str(&last.json).expect("json");
    let stages = v["body"]["stages"].as_array().expect("stages");
    let rec = stages.iter().find(|s| s["stage"] == "recognize").expect("recognize");
    assert_eq!(rec["errors"], 11);
}

/// Events pass through a slow sink; nothing may be lost when the input ends or when the stop
/// flag is raised, and the sink is closed only after its last event.
struct SlowSink {
    inner: Collector,
    closed_after: Arc<std::sync::Mutex<Option<usize>>>,
}

impl EventSink for SlowSink {
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError> {
        std::thread::sleep(Duration::from_micros(200));
        self.inner.accept(event)
    }

    fn close(&mut self) -> Result<(), PipelineError> {
        *self.closed_after.lock().expect("lock") = Some(self.inner.events().len());
        Ok(())
    }
}

#[test]
fn draining_loses_nothing_at_end_of_input_or_on_stop() {
    for stop_early in [false, true] {
        let collector = Collector::new();
        let closed_after = Arc::new(std::sync::Mutex::new(None));
        let sink = SlowSink { inner: collector.clone(), closed_after: closed_after.clone() };
        let mut source = NumberedFrames::new("cam-a", 1, 400, SourceKind::Recorded);
        source.interval = Some(Duration::from_micros(500));
        let stop = Arc::new(AtomicBool::new(false));
        let recognizer = factory(None, None, Duration::from_micros(300));
        let pipeline = Pipeline::start(vec![table("A", source, None)], &recognizer, Box::new(sink), &opts(2), stop)
            .expect("start");
        if stop_early {
            std::thread::sleep(Duration::from_millis(60));
            pipeline.stop_flag().store(true, Ordering::Relaxed);
        }
        let report = pipeline.join();
        let t = &report.tables[0];
        let sent_by_source = t.stage(StageName::Source).expect("source").sent;
        let frames = frame_events(&collector, "A");
        if stop_early {
            assert!(sent_by_source < 400, "the stop flag ends the source early ({sent_by_source})");
        } else {
            assert_eq!(sent_by_source, 400);
        }
        assert_eq!(frames.len() as u64, sent_by_source, "every frame the source sent became an event");
        assert_eq!(collector.table("A").last().map(|e| e.kind.as_str()), Some("health"), "final report last");
        assert!(collector.table("A").iter().any(|e| e.kind == "end"), "finish ran");
        assert_eq!(*closed_after.lock().expect("lock"), Some(collector.events().len()), "closed after the last event");
        assert_eq!(t.stage(StageName::Sink).expect("sink").errors, 0);
    }
}

#[test]
fn a_live_source_drops_frames_when_recognition_falls_behind_and_counts_them() {
    let mut source = NumberedFrames::new("cam-live", 1, 200, SourceKind::Live);
    source.interval = Some(Duration::from_micros(200));
    // One slow worker (up to 4 ms a frame) behind a camera delivering a frame every 0.2 ms.
    let (c, report) = run(
        vec![table("L", source, None)],
        &factory(None, None, Duration::from_millis(1)),
        PipelineOptions { workers: 1, queue_capacity: 2, health_interval_ms: 0 },
    );
    let t = &report.tables[0];
    let src = t.stage(StageName::Source).expect("source");
    let ring = t.source.as_ref().expect("source stats").frames_dropped;
    assert!(src.dropped + ring > 0, "nothing dropped: {src:?}, ring {ring}");
    assert!(src.balanced());
    let got: Vec<u64> = frame_events(&c, "L").iter().map(|e| e["frame"].as_u64().expect("n")).collect();
    assert_eq!(got.len() as u64, src.sent, "what the source sent arrives");
    assert!(got.windows(2).all(|w| w[0] < w[1]), "still in order");
}

#[test]
fn starting_without_tables_or_workers_is_an_error() {
    let recognizer = factory(None, None, Duration::ZERO);
    let stop = Arc::new(AtomicBool::new(false));
    let err = Pipeline::start(vec![], &recognizer, Box::new(Collector::new()), &opts(1), stop.clone())
        .err()
        .expect("no tables");
    assert!(err.to_string().contains("no table"), "{err}");
    let source = NumberedFrames::new("cam-a", 1, 1, SourceKind::Recorded);
    let err = Pipeline::start(vec![table("A", source, None)], &recognizer, Box::new(Collector::new()), &opts(0), stop)
        .err()
        .expect("no workers");
    assert!(err.to_string().contains("workers"), "{err}");
}
