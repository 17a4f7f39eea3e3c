//! [`Feed`]: drives one source synchronously — numbers frames, counts gaps and
//! corrupt frames, reconnects live sources with backoff, reports health.
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Serialize;

use super::{Frame, FrameSource, HealthEvent, Read, SourceEvent, SourceKind};
use crate::rng::Rng;

/// Longest single sleep while waiting to reconnect, so that a stop request is
/// seen promptly.
const SLEEP_SLICE: Duration = Duration::from_millis(20);

/// Exponential backoff between reconnection attempts of a live source.
///
/// Attempt `n` (from 1) waits `min(initial_ms · 2^(n-1), max_ms)`, moved by a
/// random ±`jitter` fraction so that many cameras that lost the same switch
/// do not all retry at the same instant.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Backoff {
    /// Wait before the first attempt, ms.
    pub initial_ms: u64,
    /// Longest wait, ms.
    pub max_ms: u64,
    /// Random spread of each wait, as a fraction (0.2 = ±20%); 0 for none.
    pub jitter: f64,
    /// Give up after this many failed attempts in a row (`None`: never).
    pub max_attempts: Option<u32>,
}

impl Default for Backoff {
    /// 0.5 s doubling to 30 s, ±20%, retrying forever.
    fn default() -> Self {
        Backoff { initial_ms: 500, max_ms: 30_000, jitter: 0.2, max_attempts: None }
    }
}

impl Backoff {
    /// The wait before attempt `attempt` (from 1), ms.
    pub fn delay_ms(&self, attempt: u32, rng: &mut Rng) -> u64 {
        let doublings = attempt.saturating_sub(1).min(40);
        let base = self.initial_ms.saturating_mul(1u64 << doublings).min(self.max_ms) as f64;
        let spread = if self.jitter > 0.0 { self.jitter * (2.0 * rng.unit_f64() - 1.0) } else { 0.0 };
        ((base * (1.0 + spread)).round().max(0.0) as u64).min(self.max_ms)
    }
}

/// How a [`Feed`] behaves.
#[derive(Debug, Clone)]
pub struct FeedOptions {
    /// Reconnection of live sources.
    pub backoff: Backoff,
    /// Emit a [`HealthEvent::Stats`] this often, ms of wall time (0: only at the end).
    pub stats_every_ms: u64,
    /// Seeds the backoff jitter (mixed with the camera id).
    pub seed: u64,
}

impl Default for FeedOptions {
    fn default() -> Self {
        FeedOptions { backoff: Backoff::default(), stats_every_ms: 5_000, seed: 0 }
    }
}

/// A snapshot of a source's counters.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SourceStats {
    /// The camera.
    pub camera_id: String,
    /// Frames read from the source.
    pub frames_read: u64,
    /// Frames handed to the consumer.
    pub frames_delivered: u64,
    /// Frames the live ring dropped because the consumer was slow.
    pub frames_dropped: u64,
    /// Frames (or images) that could not be decoded and were skipped, or that
    /// a file announces but does not hold.
    pub corrupt: u64,
    /// Jumps in the source's position.
    pub gaps: u64,
    /// Frames missing in those jumps.
    pub frames_skipped: u64,
    /// Times a live source failed.
    pub disconnects: u64,
    /// Successful reconnections.
    pub reconnects: u64,
    /// Health events lost because nobody read them (a bounded queue was full).
    pub health_events_lost: u64,
}

/// The counters behind [`SourceStats`], shared between a feed's thread and its consumer.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    pub read: AtomicU64,
    pub delivered: AtomicU64,
    pub dropped: AtomicU64,
    pub corrupt: AtomicU64,
    pub gaps: AtomicU64,
    pub skipped: AtomicU64,
    pub disconnects: AtomicU64,
    pub reconnects: AtomicU64,
    pub health_lost: AtomicU64,
}

impl Counters {
    pub(crate) fn add(counter: &AtomicU64, n: u64) {
        counter.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn snapshot(&self, camera_id: &str) -> SourceStats {
        let g = |c: &AtomicU64| c.load(Ordering::Relaxed);
        SourceStats {
            camera_id: camera_id.to_string(),
            frames_read: g(&self.read),
            frames_delivered: g(&self.delivered),
            frames_dropped: g(&self.dropped),
            corrupt: g(&self.corrupt),
            gaps: g(&self.gaps),
            frames_skipped: g(&self.skipped),
            disconnects: g(&self.disconnects),
            reconnects: g(&self.reconnects),
            health_events_lost: g(&self.health_lost),
        }
    }
}

enum State {
    Reading,
    /// Reconnecting; the next attempt is `attempt`.
    Reconnecting {
        attempt: u32,
    },
    Done,
}

/// Drives one [`FrameSource`] on the calling thread.
///
/// [`next_event`](Feed::next_event) returns frames numbered from 0 and health
/// events, and `None` once the source has ended or failed for good. A live
/// source that fails is reopened with [`Backoff`]; each attempt is one event,
/// so a consumer sees an outage as it happens.
pub struct Feed<S: FrameSource> {
    source: S,
    camera_id: Arc<str>,
    kind: SourceKind,
    options: FeedOptions,
    counters: Arc<Counters>,
    stop: Arc<AtomicBool>,
    pending: VecDeque<SourceEvent>,
    state: State,
    next_seq: u64,
    next_index: Option<u64>,
    rng: Rng,
    last_stats: Instant,
    /// Whether handing out a frame counts as delivering it (false when a
    /// thread adapter counts deliveries on the consumer's side).
    count_delivery: bool,
}

impl<S: FrameSource> Feed<S> {
    /// A feed over an open source.
    pub fn new(source: S, options: FeedOptions) -> Feed<S> {
        let info = source.info();
        let camera_id = info.camera_id.clone();
        let kind = info.kind;
        let seed = options.seed
            ^ camera_id
                .bytes()
                .fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
        Feed {
            source,
            camera_id,
            kind,
            options,
            counters: Arc::new(Counters::default()),
            stop: Arc::new(AtomicBool::new(false)),
            pending: VecDeque::new(),
            state: State::Reading,
            next_seq: 0,
            next_index: None,
            rng: Rng::seeded(seed),
            last_stats: Instant::now(),
            count_delivery: true,
        }
    }

    /// The source.
    pub fn source(&self) -> &S {
        &self.source
    }

    /// The camera id of the frames.
    pub fn camera_id(&self) -> &Arc<str> {
        &self.camera_id
    }

    /// The counters now.
    pub fn stats(&self) -> SourceStats {
        self.counters.snapshot(&self.camera_id)
    }

    pub(crate) fn counters(&self) -> Arc<Counters> {
        self.counters.clone()
    }

    pub(crate) fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    pub(crate) fn set_count_delivery(&mut self, on: bool) {
        self.count_delivery = on;
    }

    fn health(&mut self, event: HealthEvent) {
        self.pending.push_back(SourceEvent::Health(event));
    }

    fn finish(&mut self, last: HealthEvent) {
        self.health(last);
        let stats = self.stats();
        self.health(HealthEvent::Stats(stats));
        self.state = State::Done;
    }

    /// The next frame or health event; `None` when the source is finished
    /// (ended, failed for good, or the feed was asked to stop).
    pub fn next_event(&mut self) -> Option<SourceEvent> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(event);
            }
            if self.stop.load(Ordering::Relaxed) {
                self.state = State::Done;
            }
            match self.state {
                State::Done => return None,
                State::Reading => self.step_read(),
                State::Reconnecting { attempt } => self.step_reconnect(attempt),
            }
        }
    }

    fn step_read(&mut self) {
        if self.options.stats_every_ms > 0
            && self.last_stats.elapsed() >= Duration::from_millis(self.options.stats_every_ms)
        {
            self.last_stats = Instant::now();
            let stats = self.stats();
            self.health(HealthEvent::Stats(stats));
        }
        match self.source.read() {
            Ok(Read::Frame(capture)) => {
                if let Some(expected) = self.next_index {
                    if capture.source_index > expected {
                        Counters::add(&self.counters.gaps, 1);
                        Counters::add(&self.counters.skipped, capture.source_index - expected);
                        let camera_id = self.camera_id.clone();
                        self.health(HealthEvent::Gap { camera_id, expected, got: capture.source_index });
                    }
                }
                self.next_index = Some(capture.source_index + 1);
                Counters::add(&self.counters.read, 1);
                if self.count_delivery {
                    Counters::add(&self.counters.delivered, 1);
                }
                let frame = Frame {
                    camera_id: self.camera_id.clone(),
                    seq: self.next_seq,
                    source_index: capture.source_index,
                    timestamp_ms: capture.timestamp_ms,
                    image: Arc::new(capture.image),
                };
                self.next_seq += 1;
                self.pending.push_back(SourceEvent::Frame(frame));
            }
            Ok(Read::Corrupt { position, frames, path, reason }) => {
                Counters::add(&self.counters.corrupt, frames);
                self.next_index = Some(position + frames);
                let camera_id = self.camera_id.clone();
                self.health(HealthEvent::Corrupt { camera_id, position, frames, path, reason });
            }
            Ok(Read::End) => {
                let camera_id = self.camera_id.clone();
                self.finish(HealthEvent::Ended { camera_id });
            }
            Err(err) => {
                let camera_id = self.camera_id.clone();
                if self.kind == SourceKind::Live {
                    Counters::add(&self.counters.disconnects, 1);
                    self.health(HealthEvent::Disconnected { camera_id, reason: err.to_string() });
                    self.state = State::Reconnecting { attempt: 1 };
                } else {
                    self.finish(HealthEvent::Failed { camera_id, reason: err.to_string() });
                }
            }
        }
    }

    fn step_reconnect(&mut self, attempt: u32) {
        let delay_ms = self.options.backoff.delay_ms(attempt, &mut self.rng);
        let deadline = Instant::now() + Duration::from_millis(delay_ms);
        loop {
            if self.stop.load(Ordering::Relaxed) {
                self.state = State::Done;
                return;
            }
            let now = Instant::now();
            if now >= deadline {
                break;
            }
            std::thread::sleep((deadline - now).min(SLEEP_SLICE));
        }
        let camera_id = self.camera_id.clone();
        match self.source.reopen() {
            Ok(()) => {
                Counters::add(&self.counters.reconnects, 1);
                self.health(HealthEvent::ReconnectAttempt {
                    camera_id: camera_id.clone(),
                    attempt,
                    delay_ms,
                    error: None,
                });
                self.health(HealthEvent::Reconnected { camera_id, attempts: attempt });
                self.state = State::Reading;
            }
            Err(err) => {
                let reason = err.to_string();
                self.health(HealthEvent::ReconnectAttempt {
                    camera_id: camera_id.clone(),
                    attempt,
                    delay_ms,
                    error: Some(reason.clone()),
                });
                if self.options.backoff.max_attempts.is_some_and(|max| attempt >= max) {
                    self.finish(HealthEvent::Failed {
                        camera_id,
                        reason: format!("gave up after {attempt} reconnection attempts; last error: {reason}"),
                    });
                } else {
                    self.state = State::Reconnecting { attempt: attempt + 1 };
                }
            }
        }
    }
}
