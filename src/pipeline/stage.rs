//! Per-stage counters (received / sent / dropped / errors) and latency percentiles over a
//! sliding window, shared between a stage's thread and whoever reports health.
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;

/// Latency samples kept per stage for the percentiles (the most recent ones).
pub const LATENCY_WINDOW: usize = 512;

/// The stages of the pipeline, in data-flow order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StageName {
    /// Reads frames from the table's source and hands them to the recognizer pool.
    Source,
    /// Localizes and classifies the cards of a frame (worker pool).
    Recognize,
    /// Puts the pool's results back in frame order.
    Reorder,
    /// Bet presence, tracking, the round state machine and verification (one thread per table).
    Track,
    /// Journals, then publishes, every event.
    Sink,
}

impl StageName {
    /// Every stage, in data-flow order.
    pub const ALL: [StageName; 5] =
        [StageName::Source, StageName::Recognize, StageName::Reorder, StageName::Track, StageName::Sink];

    /// The stage's name as in health events.
    pub fn as_str(self) -> &'static str {
        match self {
            StageName::Source => "source",
            StageName::Recognize => "recognize",
            StageName::Reorder => "reorder",
            StageName::Track => "track",
            StageName::Sink => "sink",
        }
    }
}

/// A stage's counters for one table. Every item a stage receives ends as exactly one of sent,
/// dropped (on purpose: backpressure) or errors (it failed), so `received = sent + dropped +
/// errors` once the stage is idle.
#[derive(Debug)]
pub struct StageCounters {
    name: StageName,
    received: AtomicU64,
    sent: AtomicU64,
    dropped: AtomicU64,
    errors: AtomicU64,
    /// Latencies (ms) and the last error message: touched once per item, never contended for long.
    detail: Mutex<Detail>,
}

#[derive(Debug, Default)]
struct Detail {
    latencies_ms: VecDeque<f64>,
    last_error: Option<String>,
}

impl StageCounters {
    /// Zeroed counters of a stage.
    pub fn new(name: StageName) -> StageCounters {
        StageCounters {
            name,
            received: AtomicU64::new(0),
            sent: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            detail: Mutex::new(Detail::default()),
        }
    }

    /// One item came in.
    pub fn received(&self) {
        self.received.fetch_add(1, Ordering::Relaxed);
    }

    /// One item went on, after `latency` in this stage.
    pub fn sent(&self, latency: Option<Duration>) {
        self.sent.fetch_add(1, Ordering::Relaxed);
        if let Some(l) = latency {
            let mut d = self.lock();
            if d.latencies_ms.len() == LATENCY_WINDOW {
                d.latencies_ms.pop_front();
            }
            d.latencies_ms.push_back(l.as_secs_f64() * 1e3);
        }
    }

    /// One item was dropped on purpose (a live source whose recognizer fell behind).
    pub fn dropped(&self) {
        self.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// One item failed; `message` says why (kept as the stage's last error).
    pub fn error(&self, message: impl Into<String>) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.lock().last_error = Some(message.into());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Detail> {
        // A panicking stage thread cannot leave the detail half-written (plain pushes), so a
        // poisoned lock still holds good data.
        self.detail.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The counters now.
    pub fn snapshot(&self) -> StageStats {
        let d = self.lock();
        let mut sorted: Vec<f64> = d.latencies_ms.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        StageStats {
            stage: self.name,
            received: self.received.load(Ordering::Relaxed),
            sent: self.sent.load(Ordering::Relaxed),
            dropped: self.dropped.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            latency_p50_ms: percentile(&sorted, 0.50),
            latency_p99_ms: percentile(&sorted, 0.99),
            last_error: d.last_error.clone(),
        }
    }
}

/// Nearest-rank percentile of sorted values, rounded to µs; `None` when empty.
fn percentile(sorted: &[f64], q: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    Some((sorted[rank - 1] * 1e3).round() / 1e3)
}

/// A snapshot of one stage's counters for one table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StageStats {
    /// The stage.
    pub stage: StageName,
    /// Items that came in.
    pub received: u64,
    /// Items passed on.
    pub sent: u64,
    /// Items dropped on purpose (backpressure on a live source).
    pub dropped: u64,
    /// Items that failed.
    pub errors: u64,
    /// Median time per item in this stage over the last [`LATENCY_WINDOW`] items, ms (wall
    /// clock: the only numbers of the pipeline that differ between two runs of one input).
    pub latency_p50_ms: Option<f64>,
    /// 99th percentile of the same, ms.
    pub latency_p99_ms: Option<f64>,
    /// The last error, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl StageStats {
    /// Whether every item that came in is accounted for.
    pub fn balanced(&self) -> bool {
        self.received == self.sent + self.dropped + self.errors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_percentiles() {
        let c = StageCounters::new(StageName::Track);
        for ms in 1..=100u64 {
            c.received();
            c.sent(Some(Duration::from_millis(ms)));
        }
        c.received();
        c.error("bad frame");
        c.received();
        c.dropped();
        let s = c.snapshot();
        assert_eq!((s.received, s.sent, s.errors, s.dropped), (102, 100, 1, 1));
        assert!(s.balanced());
        assert_eq!(s.latency_p50_ms, Some(50.0));
        assert_eq!(s.latency_p99_ms, Some(99.0));
        assert_eq!(s.last_error.as_deref(), Some("bad frame"));
    }

    #[test]
    fn window_keeps_the_latest_samples() {
        let c = StageCounters::new(StageName::Sink);
        for _ in 0..LATENCY_WINDOW {
            c.sent(Some(Duration::from_millis(1000)));
        }
        for _ in 0..LATENCY_WINDOW {
            c.sent(Some(Duration::from_millis(2)));
        }
        assert_eq!(c.snapshot().latency_p99_ms, Some(2.0));
        assert_eq!(StageCounters::new(StageName::Sink).snapshot().latency_p50_ms, None);
    }
}
