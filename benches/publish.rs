//! Events published per second and journal appends per second.
//!
//! Run with `cargo bench --bench publish` (about 20 s). Each figure is a short criterion run
//! (1 s warm-up, 3 s measurement, 10 samples):
//!
//! * `publish/tcp` and `publish/inproc`: one iteration publishes a batch of 1000 events of
//!   ~230 bytes (`[topic, json]`, the shape of a `card.dealt` event) through a `Publisher` and
//!   receives all of them through a `Subscriber` on the same thread (so nothing is dropped at
//!   the high-water mark and every event is also parsed for its seq): end-to-end throughput of
//!   the stream over tcp loopback and over inproc.
//! * `journal/append_always` and `journal/append_never`: one `Journal::append` of the same
//!   event with `FsyncPolicy::Always` (an `fdatasync` per event) and `FsyncPolicy::Never`.
//!
//! Throughput is reported in events (elements) per second.
use std::path::PathBuf;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tablecam::publish::{Delivery, Publisher, PublisherConfig, Subscriber, SubscriberConfig};
use tablecam::record::{FsyncPolicy, Journal};

const BATCH: u64 = 1000;

fn event_json(seq: u64) -> String {
    format!(
        r#"{{"schema":1,"kind":"card.dealt","table_id":"t1","camera_id":"cam1","round_id":"r42","seq":{seq},"frame":{},"time_ms":{}.0,"body":{{"track":17,"zone":"seat 3","order":2,"face_up":true,"card":"Ah"}}}}"#,
        seq * 3,
        seq * 100
    )
}

/// A publisher and a subscriber that has joined (heard a heartbeat).
fn pair(context: &zmq::Context, endpoint: &str) -> (Publisher, Subscriber) {
    let config = PublisherConfig { endpoint: endpoint.into(), heartbeat_interval_ms: 1.0, ..Default::default() };
    let mut publisher = Publisher::with_context(context, &config).expect("bind");
    let sub_config =
        SubscriberConfig { endpoint: publisher.endpoint().to_owned(), heartbeat_timeout_ms: 0, ..Default::default() };
    let mut sub = Subscriber::connect_in(context, &sub_config).expect("connect");
    for t in 1.. {
        publisher.tick("t1", t as f64).expect("heartbeat");
        if let Some(Delivery::Heartbeat { .. }) = sub.recv(Duration::from_millis(20)).expect("recv") {
            break;
        }
        assert!(t < 500, "subscriber never joined");
    }
    while sub.recv(Duration::from_millis(50)).expect("recv").is_some() {}
    (publisher, sub)
}

fn bench_publish(c: &mut Criterion) {
    let mut group = c.benchmark_group("publish");
    group.throughput(Throughput::Elements(BATCH));
    for (name, endpoint) in [("tcp", "tcp://127.0.0.1:*"), ("inproc", "inproc://bench-publish")] {
        let context = zmq::Context::new();
        let (mut publisher, mut sub) = pair(&context, endpoint);
        let events: Vec<String> = (0..BATCH).map(event_json).collect();
        let mut seq = 0u64;
        group.bench_function(name, |b| {
            b.iter(|| {
                for json in &events {
                    seq += 1;
                    publisher.publish("t1.card.dealt", json.as_bytes(), seq).expect("publish");
                }
                let mut received = 0;
                while received < BATCH {
                    match sub.recv(Duration::from_secs(5)).expect("recv") {
                        Some(Delivery::Event(_)) => received += 1,
                        Some(_) => {}
                        None => panic!("events lost: {received} of {BATCH}"),
                    }
                }
            })
        });
    }
    group.finish();
}

fn bench_journal(c: &mut Criterion) {
    let dir = std::env::temp_dir().join(format!("tablecam-bench-journal-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let json = event_json(1);
    let mut group = c.benchmark_group("journal");
    group.throughput(Throughput::Elements(1));
    for (name, policy) in [("append_always", FsyncPolicy::Always), ("append_never", FsyncPolicy::Never)] {
        let path: PathBuf = dir.join(format!("{name}.jsonl"));
        let _ = std::fs::remove_file(&path);
        let mut journal = Journal::open(&path, policy).expect("open");
        group.bench_function(name, |b| b.iter(|| journal.append(json.as_bytes()).expect("append")));
    }
    group.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

fn config() -> Criterion {
    Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3)).sample_size(10)
}

criterion_group! { name = benches; config = config(); targets = bench_publish, bench_journal }
criterion_main!(benches);
