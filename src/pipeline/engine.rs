//! The threads and channels: one source thread per table → a pool of recognizer workers →
//! one thread per table that re-orders, runs presence and the table's logic → one sink thread.
//!
//! Shutdown is by channel closure, upstream first: a source that ends (or sees the stop flag)
//! drops its sender; the workers end when every source has; a table thread ends when every
//! worker has, after handing the logic its last frames and calling `finish`; the sink ends when
//! every table thread has, and closes (flushes) last. Nothing in flight is lost.
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError, Sender, TrySendError};
use opencv::core::Mat;
use serde::Serialize;

use super::contract::{EventSink, HealthReport, ObservedFrame, SerializedEvent, TableHint, TableLogic};
use super::recognizer::{CardRecognizer, RecognizerFactory};
use super::stage::{StageCounters, StageName, StageStats};
use super::PipelineError;
use crate::calib::TableGeometry;
use crate::presence::PresenceDetector;
use crate::recognize::DetectedCard;
use crate::source::{
    spawn_blocking, spawn_live, Feed, FeedOptions, Frame, FrameSource, HealthEvent, LiveFeed, SourceEvent, SourceKind,
    SourceStats,
};

/// How long a source thread waits for a frame before looking at the stop flag again.
const STOP_POLL: Duration = Duration::from_millis(50);

/// One table to run: its source, calibration, optional presence detector and logic.
pub struct TableInput {
    /// The table.
    pub table_id: String,
    /// Its camera's frames (opened; live or recorded decides the backpressure policy).
    pub source: Box<dyn FrameSource>,
    /// Its calibration.
    pub geometry: Arc<TableGeometry>,
    /// Bet presence, run on the table's thread before its logic (stateful, so in frame order).
    pub presence: Option<PresenceDetector>,
    /// The camera's empty table (bet presence's reference): every recognizer worker's
    /// table-plane finder compares this table's frames with it
    /// ([`crate::recognize::Recognizer::set_table_reference`]).
    pub empty_table: Option<Mat>,
    /// Tracker, round state machine and verifier.
    pub logic: Box<dyn TableLogic>,
    /// Messages from the table's backend.
    pub hints: Hints,
}

/// Where a table's backend messages come from.
#[derive(Debug, Default)]
pub enum Hints {
    /// No backend: vision alone.
    #[default]
    None,
    /// A live backend: what arrived since the last frame applies from the next one on.
    Live(Receiver<TableHint>),
    /// A replay: each message applies before the frame it was applied before in the live run
    /// (sorted by frame; the journal's `backend.hint` and backend `error` events say which).
    Replayed(std::collections::VecDeque<(u64, TableHint)>),
}

/// Sizes and intervals of the pipeline.
#[derive(Debug, Clone, PartialEq)]
pub struct PipelineOptions {
    /// Recognizer worker threads (each with its own models).
    pub workers: usize,
    /// Capacity of each channel, in items (frames or events).
    pub queue_capacity: usize,
    /// A health event per table every this many ms of frame time (0: only at the end).
    pub health_interval_ms: u64,
}

impl Default for PipelineOptions {
    fn default() -> Self {
        PipelineOptions { workers: 1, queue_capacity: 8, health_interval_ms: 5_000 }
    }
}

/// The counters of one table when the pipeline ended.
#[derive(Debug, Clone, Serialize)]
pub struct TableReport {
    /// The table.
    pub table_id: String,
    /// Every stage, in data-flow order.
    pub stages: Vec<StageStats>,
    /// The source's own counters (decoded, dropped by the live ring, corrupt, gaps…).
    pub source: Option<SourceStats>,
}

impl TableReport {
    /// The counters of one stage.
    pub fn stage(&self, name: StageName) -> Option<&StageStats> {
        self.stages.iter().find(|s| s.stage == name)
    }
}

/// What a whole run did.
#[derive(Debug, Clone, Serialize)]
pub struct PipelineReport {
    /// Per table, in the order given.
    pub tables: Vec<TableReport>,
    /// The sink's closing error (journal flush), if any.
    pub close_error: Option<String>,
    /// Threads that panicked outside a guarded call (a bug), by name.
    pub panicked: Vec<String>,
}

/// A frame or a source health event on its way to the recognizer pool, with its ticket: the
/// table's dense count of items sent, by which the table thread restores their order.
struct Job {
    table: usize,
    ticket: u64,
    item: JobItem,
}

enum JobItem {
    Frame(Frame),
    Health(HealthEvent),
}

/// What a worker returns to a table thread.
struct Done {
    ticket: u64,
    item: DoneItem,
}

enum DoneItem {
    Cards(Frame, Vec<DetectedCard>),
    /// Recognition failed (counted); only the ticket travels on, to keep the order.
    Failed,
    Health(HealthEvent),
}

type Counters = Arc<[Arc<StageCounters>; 5]>;

fn counters() -> Counters {
    Arc::new(StageName::ALL.map(|s| Arc::new(StageCounters::new(s))))
}

fn c(counters: &Counters, stage: StageName) -> &StageCounters {
    &counters[stage as usize]
}

/// A running pipeline; [`join`](Pipeline::join) waits for it to drain.
pub struct Pipeline {
    stop: Arc<AtomicBool>,
    table_ids: Vec<String>,
    counters: Vec<Counters>,
    source_stats: Vec<Arc<Mutex<Option<SourceStats>>>>,
    close_error: Arc<Mutex<Option<String>>>,
    /// In the order they must end: sources, workers, tables, sink.
    threads: Vec<JoinHandle<()>>,
}

impl Pipeline {
    /// Starts every thread. `stop` ends the sources when set (Ctrl-C); the rest drains.
    /// Every worker's recognizer is made here, so a model that does not load fails the start.
    pub fn start(
        tables: Vec<TableInput>,
        factory: &dyn RecognizerFactory,
        sink: Box<dyn EventSink>,
        options: &PipelineOptions,
        stop: Arc<AtomicBool>,
    ) -> Result<Pipeline, PipelineError> {
        if tables.is_empty() {
            return Err(PipelineError::Invalid("no table to run".into()));
        }
        if options.workers == 0 || options.queue_capacity == 0 {
            return Err(PipelineError::Invalid("workers and queue_capacity must be at least 1".into()));
        }
        let mut seen = std::collections::BTreeSet::new();
        for t in &tables {
            if !seen.insert(t.table_id.clone()) {
                return Err(PipelineError::Invalid(format!("table {} is listed twice", t.table_id)));
            }
        }
        let mut recognizers: Vec<Box<dyn CardRecognizer>> =
            (0..options.workers).map(|w| factory.make(w)).collect::<Result<_, _>>()?;
        for t in &tables {
            if let Some(empty) = &t.empty_table {
                for r in &mut recognizers {
                    r.set_table_reference(&t.geometry, empty)?;
                }
            }
        }

        let cap = options.queue_capacity;
        let (job_tx, job_rx) = bounded::<Job>(cap);
        let (sink_tx, sink_rx) = bounded::<(usize, SerializedEvent)>(cap * 4);
        let mut result_txs = Vec::new();
        let mut result_rxs = Vec::new();
        for _ in &tables {
            let (tx, rx) = bounded::<Done>(cap);
            result_txs.push(tx);
            result_rxs.push(rx);
        }
        let geometries: Arc<Vec<Arc<TableGeometry>>> = Arc::new(tables.iter().map(|t| t.geometry.clone()).collect());
        let all_counters: Vec<Counters> = tables.iter().map(|_| counters()).collect();
        let close_error = Arc::new(Mutex::new(None));
        let mut pipeline = Pipeline {
            stop: stop.clone(),
            table_ids: tables.iter().map(|t| t.table_id.clone()).collect(),
            counters: all_counters.clone(),
            source_stats: tables.iter().map(|_| Arc::new(Mutex::new(None))).collect(),
            close_error: close_error.clone(),
            threads: Vec::new(),
        };

        // Sources first: feeds are opened on their own threads (spawn_* start reading at once).
        let mut logics = Vec::new();
        for (i, t) in tables.into_iter().enumerate() {
            let kind = t.source.info().kind;
            let camera_id = t.source.info().camera_id.to_string();
            // Source stats only at the end: periodic ones run on the wall clock.
            let feed = Feed::new(t.source, FeedOptions { stats_every_ms: 0, ..FeedOptions::default() });
            let live = match kind {
                SourceKind::Live => spawn_live(feed, cap),
                SourceKind::Recorded => spawn_blocking(feed, cap),
            }
            .map_err(|source| PipelineError::Source { table_id: t.table_id.clone(), source })?;
            let ctx = SourceCtx {
                table: i,
                live: kind == SourceKind::Live,
                counters: all_counters[i].clone(),
                stats: pipeline.source_stats[i].clone(),
                stop: stop.clone(),
            };
            let tx = job_tx.clone();
            pipeline.spawn(format!("source-{camera_id}"), move || source_loop(live, tx, ctx))?;
            logics.push((t.table_id, t.presence, t.logic, t.hints));
        }
        drop(job_tx);

        for (w, mut recognizer) in recognizers.into_iter().enumerate() {
            let rx = job_rx.clone();
            let txs = result_txs.clone();
            let geometries = geometries.clone();
            let counters = all_counters.clone();
            pipeline.spawn(format!("recognize-{w}"), move || {
                worker_loop(recognizer.as_mut(), rx, &txs, &geometries, &counters)
            })?;
        }
        drop(job_rx);
        drop(result_txs);

        for (i, ((table_id, presence, logic, hints), rx)) in logics.into_iter().zip(result_rxs).enumerate() {
            let table = TableCtx {
                index: i,
                presence,
                logic,
                hints,
                counters: all_counters[i].clone(),
                sink: sink_tx.clone(),
                health_interval_ms: options.health_interval_ms,
                next_health_ms: None,
                last_frame: None,
            };
            pipeline.spawn(format!("table-{table_id}"), move || table.run(rx))?;
        }
        drop(sink_tx);

        let sink_counters = all_counters.clone();
        pipeline.spawn("sink".into(), move || sink_loop(sink, sink_rx, &sink_counters, &close_error))?;
        Ok(pipeline)
    }

    fn spawn(&mut self, name: String, f: impl FnOnce() + Send + 'static) -> Result<(), PipelineError> {
        let handle = std::thread::Builder::new()
            .name(name.clone())
            .spawn(f)
            .map_err(|e| PipelineError::Thread { name, message: e.to_string() })?;
        self.threads.push(handle);
        Ok(())
    }

    /// The flag that stops the sources (the rest then drains).
    pub fn stop_flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// The counters of every table now.
    pub fn snapshot(&self) -> Vec<TableReport> {
        self.table_ids
            .iter()
            .zip(&self.counters)
            .zip(&self.source_stats)
            .map(|((id, c), s)| TableReport {
                table_id: id.clone(),
                stages: c.iter().map(|s| s.snapshot()).collect(),
                source: s.lock().unwrap_or_else(|p| p.into_inner()).clone(),
            })
            .collect()
    }

    /// Waits until every stage has drained (end of input, or after the stop flag), in order.
    pub fn join(mut self) -> PipelineReport {
        let mut panicked = Vec::new();
        for t in self.threads.drain(..) {
            let name = t.thread().name().unwrap_or("?").to_string();
            if t.join().is_err() {
                panicked.push(name);
            }
        }
        let close_error = self.close_error.lock().unwrap_or_else(|p| p.into_inner()).take();
        PipelineReport { tables: self.snapshot(), close_error, panicked }
    }
}

struct SourceCtx {
    table: usize,
    live: bool,
    counters: Counters,
    stats: Arc<Mutex<Option<SourceStats>>>,
    stop: Arc<AtomicBool>,
}

fn source_loop(feed: LiveFeed, jobs: Sender<Job>, ctx: SourceCtx) {
    let stage = c(&ctx.counters, StageName::Source);
    let mut ticket = 0u64;
    loop {
        if ctx.stop.load(Ordering::Relaxed) {
            break;
        }
        let event = match feed.recv_timeout(STOP_POLL) {
            Ok(e) => e,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => break,
        };
        let job = |item| Job { table: ctx.table, ticket, item };
        match event {
            SourceEvent::Frame(frame) => {
                stage.received();
                let t0 = Instant::now();
                if ctx.live {
                    // The camera does not wait: when the recognizers are behind, this frame goes.
                    match jobs.try_send(job(JobItem::Frame(frame))) {
                        Ok(()) => {
                            stage.sent(Some(t0.elapsed()));
                            ticket += 1;
                        }
                        Err(TrySendError::Full(_)) => stage.dropped(),
                        Err(TrySendError::Disconnected(_)) => break,
                    }
                } else {
                    // Recorded input loses nothing: wait for room.
                    if jobs.send(job(JobItem::Frame(frame))).is_err() {
                        break;
                    }
                    stage.sent(Some(t0.elapsed()));
                    ticket += 1;
                }
            }
            SourceEvent::Health(h) => {
                // Rare, and they say what happened to the frames: never dropped.
                if jobs.send(job(JobItem::Health(h))).is_err() {
                    break;
                }
                ticket += 1;
            }
        }
    }
    *ctx.stats.lock().unwrap_or_else(|p| p.into_inner()) = Some(feed.stop());
}

fn worker_loop(
    recognizer: &mut dyn CardRecognizer,
    jobs: Receiver<Job>,
    results: &[Sender<Done>],
    geometries: &[Arc<TableGeometry>],
    counters: &[Counters],
) {
    for job in jobs {
        let item = match job.item {
            JobItem::Health(h) => DoneItem::Health(h),
            JobItem::Frame(frame) => {
                let stage = c(&counters[job.table], StageName::Recognize);
                stage.received();
                let t0 = Instant::now();
                let geometry = &geometries[job.table];
                match catch_unwind(AssertUnwindSafe(|| recognizer.recognize(&frame.image, geometry))) {
                    Ok(Ok(cards)) => {
                        stage.sent(Some(t0.elapsed()));
                        DoneItem::Cards(frame, cards)
                    }
                    Ok(Err(e)) => {
                        stage.error(format!("frame {}: {e}", frame.seq));
                        DoneItem::Failed
                    }
                    Err(panic) => {
                        stage.error(format!("frame {}: recognizer panicked: {}", frame.seq, panic_message(&panic)));
                        DoneItem::Failed
                    }
                }
            }
        };
        // A table thread that is gone has nobody to tell; the others go on.
        let _ = results[job.table].send(Done { ticket: job.ticket, item });
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

struct TableCtx {
    index: usize,
    presence: Option<PresenceDetector>,
    logic: Box<dyn TableLogic>,
    hints: Hints,
    counters: Counters,
    sink: Sender<(usize, SerializedEvent)>,
    health_interval_ms: u64,
    /// Frame time of the next health report.
    next_health_ms: Option<f64>,
    /// The last frame handled: number and timestamp.
    last_frame: Option<(u64, f64)>,
}

impl TableCtx {
    fn run(mut self, results: Receiver<Done>) {
        let mut pending: BTreeMap<u64, DoneItem> = BTreeMap::new();
        let mut next = 0u64;
        for done in results {
            let reorder = c(&self.counters, StageName::Reorder);
            reorder.received();
            pending.insert(done.ticket, done.item);
            // No limit here: while one worker is stalled on ticket `next`, the others go on and
            // their results wait (small card lists, not frames). A stall shows as the recognize
            // stage's p99 latency; it is not an item's error.
            while let Some(item) = pending.remove(&next) {
                next += 1;
                c(&self.counters, StageName::Reorder).sent(None);
                self.handle(item);
            }
        }
        // Every worker has ended. Anything left waits for a ticket that will never come (a
        // worker died): hand it on in order rather than lose it.
        for (ticket, item) in std::mem::take(&mut pending) {
            c(&self.counters, StageName::Reorder).error(format!("ticket {next}..{ticket} never came back"));
            self.handle(item);
        }
        let mut out = Vec::new();
        let counters = self.counters.clone();
        let track = c(&counters, StageName::Track);
        match catch_unwind(AssertUnwindSafe(|| self.logic.finish(&mut out))) {
            Ok(Ok(())) => {}
            Ok(Err(e)) => track.error(format!("finish: {e}")),
            Err(p) => track.error(format!("finish panicked: {}", panic_message(&p))),
        }
        self.emit(out);
        // The last report counts everything this table did up to here.
        let (frame, timestamp_ms) = self.last_frame.unwrap_or((0, 0.0));
        self.report_health(frame, timestamp_ms);
    }

    fn handle(&mut self, item: DoneItem) {
        let mut out = Vec::new();
        match item {
            DoneItem::Failed => return,
            DoneItem::Health(h) => self.logic.source_health(&h, &mut out),
            DoneItem::Cards(frame, cards) => {
                match &mut self.hints {
                    Hints::None => {}
                    // Backend messages that came since the last frame apply from this one on.
                    Hints::Live(rx) => {
                        for hint in rx.try_iter() {
                            self.logic.hint(&hint, &mut out);
                        }
                    }
                    Hints::Replayed(queue) => {
                        while queue.front().is_some_and(|(f, _)| *f <= frame.seq) {
                            let (_, hint) = queue.pop_front().expect("front exists");
                            self.logic.hint(&hint, &mut out);
                        }
                    }
                }
                let counters = self.counters.clone();
                let track = c(&counters, StageName::Track);
                track.received();
                let t0 = Instant::now();
                match self.observe(frame, cards, &mut out) {
                    Ok(()) => track.sent(Some(t0.elapsed())),
                    Err(e) => track.error(e),
                }
            }
        }
        self.emit(out);
        if let Some((frame, ts)) = self.last_frame {
            self.maybe_health(frame, ts);
        }
    }

    fn observe(
        &mut self,
        frame: Frame,
        cards: Vec<DetectedCard>,
        out: &mut Vec<SerializedEvent>,
    ) -> Result<(), String> {
        self.last_frame = Some((frame.seq, frame.timestamp_ms));
        let spots = match &mut self.presence {
            Some(p) => {
                Some(p.update(&frame.image, frame.timestamp_ms).map_err(|e| format!("frame {}: {e}", frame.seq))?)
            }
            None => None,
        };
        let changes = self.presence.as_ref().and_then(|p| p.changes());
        let observed = ObservedFrame {
            camera_id: frame.camera_id,
            frame: frame.seq,
            source_index: frame.source_index,
            timestamp_ms: frame.timestamp_ms,
            cards,
            spots,
            changes,
            image: frame.image,
        };
        let seq = observed.frame;
        match catch_unwind(AssertUnwindSafe(|| self.logic.frame(&observed, out))) {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(format!("frame {seq}: {e}")),
            Err(p) => Err(format!("frame {seq}: table logic panicked: {}", panic_message(&p))),
        }
    }

    /// A health report each time frame time passes the next multiple of the interval (counted
    /// from the first frame), so that the same input gives reports after the same frames.
    fn maybe_health(&mut self, frame: u64, timestamp_ms: f64) {
        if self.health_interval_ms == 0 {
            return;
        }
        let interval = self.health_interval_ms as f64;
        let next = *self.next_health_ms.get_or_insert(timestamp_ms + interval);
        if timestamp_ms >= next {
            // Skip whole intervals with no frame (a long gap) rather than report each.
            let steps = ((timestamp_ms - next) / interval).floor() + 1.0;
            self.next_health_ms = Some(next + steps * interval);
            self.report_health(frame, timestamp_ms);
        }
    }

    fn report_health(&mut self, frame: u64, timestamp_ms: f64) {
        let report = HealthReport { frame, timestamp_ms, stages: self.counters.iter().map(|s| s.snapshot()).collect() };
        let mut out = Vec::new();
        self.logic.health(&report, &mut out);
        self.emit(out);
    }

    fn emit(&self, events: Vec<SerializedEvent>) {
        for e in events {
            // The sink ends only after every table thread: a failed send means it panicked, and
            // the panic is reported by `join`.
            let _ = self.sink.send((self.index, e));
        }
    }
}

fn sink_loop(
    mut sink: Box<dyn EventSink>,
    events: Receiver<(usize, SerializedEvent)>,
    counters: &[Counters],
    close_error: &Mutex<Option<String>>,
) {
    for (table, event) in events {
        let stage = c(&counters[table], StageName::Sink);
        stage.received();
        let t0 = Instant::now();
        match catch_unwind(AssertUnwindSafe(|| sink.accept(&event))) {
            Ok(Ok(())) => stage.sent(Some(t0.elapsed())),
            Ok(Err(e)) => stage.error(format!("{} #{}: {e}", event.kind, event.frame)),
            Err(p) => stage.error(format!("{}: sink panicked: {}", event.kind, panic_message(&p))),
        }
    }
    // Last of all: every stage upstream has drained, so the journal is complete when flushed.
    if let Err(e) = sink.close() {
        *close_error.lock().unwrap_or_else(|p| p.into_inner()) = Some(e.to_string());
    }
}
