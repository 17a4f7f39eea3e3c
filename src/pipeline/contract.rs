//! What flows between the pipeline's threads and the contracts of its pluggable stages: the
//! per-table logic (tracker and verifier) and the sink (journal, then publisher).
use std::sync::Arc;

use opencv::core::Mat;
use serde::Serialize;

use super::stage::StageStats;
use super::PipelineError;
use crate::calib::TableGeometry;
use crate::events::BackendHint;
use crate::presence::{ChangeMap, SpotState};
use crate::recognize::DetectedCard;
use crate::rules::RulesetId;
use crate::source::HealthEvent;

/// One frame of one table after recognition, handed to the table's logic in frame order.
#[derive(Debug, Clone)]
pub struct ObservedFrame {
    /// The camera.
    pub camera_id: Arc<str>,
    /// The frame's number in its feed ([`crate::source::Frame::seq`]): the frame number events
    /// carry. Increases by one per frame unless a live source dropped frames.
    pub frame: u64,
    /// Position in the source ([`crate::source::Frame::source_index`]).
    pub source_index: u64,
    /// The frame's own time, ms: the only clock of every stage after the source.
    pub timestamp_ms: f64,
    /// The cards recognized in it, in the recognizer's order.
    pub cards: Vec<DetectedCard>,
    /// Bet presence per calibrated spot, when the table has a presence detector.
    pub spots: Option<Vec<SpotState>>,
    /// What differs from the empty table, when the table has a captured empty-table reference.
    pub changes: Option<Arc<ChangeMap>>,
    /// The image (shared, not copied), for stages that keep key frames.
    pub image: Arc<Mat>,
}

/// The counters of every stage of one table at one moment of frame time.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HealthReport {
    /// The frame after which the counters were read.
    pub frame: u64,
    /// Its timestamp, ms.
    pub timestamp_ms: f64,
    /// Every stage, in data-flow order.
    pub stages: Vec<StageStats>,
}

/// An event ready to go out: serialized once, journaled then published byte for byte.
#[derive(Debug, Clone, PartialEq)]
pub struct SerializedEvent {
    /// The table.
    pub table_id: Arc<str>,
    /// The event kind (`round.flag`, `round.outcome`, `health`, …).
    pub kind: String,
    /// The publishing topic, `<table>.<kind>`.
    pub topic: String,
    /// The table's sequence number of the event (in its JSON too).
    pub seq: u64,
    /// The frame the event belongs to.
    pub frame: u64,
    /// That frame's timestamp, ms.
    pub time_ms: f64,
    /// The event as one JSON line (no newline).
    pub json: String,
    /// A readable line for the terminal, for the kinds worth showing (outcomes, flags).
    pub text: Option<String>,
    /// Whether the event holds wall-clock measurements (health latencies), so that two runs of
    /// the same input may differ in it; every other event is a function of the input alone.
    pub volatile: bool,
}

/// A table's own logic: bet presence → tracker → round state machine → verifier, as one
/// stateful stage fed frames in order.
///
/// Protocol: [`frame`](TableLogic::frame) is called once per recognized frame, in frame order,
/// on the table's own thread; it appends the events the frame caused to `out` (sequence
/// numbers are the logic's business: one sequence per table). An `Err` is counted as the track
/// stage's error for that frame and the next frame comes as usual. Source health events and
/// the pipeline's periodic [`HealthReport`]s (every N seconds of frame time) go through the
/// logic too, so that they take their place in the table's one sequence.
/// [`finish`](TableLogic::finish) is called once at the end of input or on shutdown, after the
/// last frame, to close what is open (an unfinished round).
pub trait TableLogic: Send {
    /// One frame.
    fn frame(&mut self, frame: &ObservedFrame, out: &mut Vec<SerializedEvent>) -> Result<(), PipelineError>;

    /// Something happened to the source (gap, corrupt frame, disconnection, final counters).
    fn source_health(&mut self, event: &HealthEvent, out: &mut Vec<SerializedEvent>);

    /// The pipeline's periodic counters.
    fn health(&mut self, report: &HealthReport, out: &mut Vec<SerializedEvent>);

    /// A message from the table's backend, applied before the next frame. Default: ignored.
    fn hint(&mut self, hint: &TableHint, out: &mut Vec<SerializedEvent>) {
        let _ = (hint, out);
    }

    /// The end: no more frames.
    fn finish(&mut self, out: &mut Vec<SerializedEvent>) -> Result<(), PipelineError>;
}

/// What the backend's inbound channel hands a table's logic.
#[derive(Debug, Clone, PartialEq)]
pub enum TableHint {
    /// A valid message, converted for the tracker.
    Hint(BackendHint),
    /// A message that was refused (malformed, or nothing the tracker can use): why.
    Refused(String),
}

/// Where events end: the journal then the publisher, a file, or memory.
///
/// Protocol: [`accept`](EventSink::accept) is called on the sink's one thread with every
/// table's events, each table's in its own order. An `Err` is counted as the sink's error for
/// that event (an event that could not be journaled must not be published). [`close`]
/// (EventSink::close) is called last, once every other stage has drained: it flushes the
/// journals.
pub trait EventSink: Send {
    /// One event.
    fn accept(&mut self, event: &SerializedEvent) -> Result<(), PipelineError>;

    /// No more events: flush and close.
    fn close(&mut self) -> Result<(), PipelineError>;
}

/// What a table's logic is built from.
#[derive(Debug, Clone, Copy)]
pub struct TableSetup<'a> {
    /// The table.
    pub table_id: &'a str,
    /// Its camera.
    pub camera_id: &'a str,
    /// The ruleset played there.
    pub ruleset: RulesetId,
    /// Its calibration.
    pub geometry: &'a TableGeometry,
    /// Whether the classifier was trained on the deck dealt here (its design is in the model's
    /// `tablecam.designs`): then agreeing unsure readings confirm a card too
    /// ([`crate::track::TrackerOptions::for_deck`]).
    pub deck_enrolled: bool,
}

/// Builds a table's logic (the real tracker and verifier, or a double).
pub type LogicFactory = dyn Fn(&TableSetup<'_>) -> Result<Box<dyn TableLogic>, PipelineError> + Send + Sync;
