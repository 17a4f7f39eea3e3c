//! The streaming pipeline: frames of one or more tables in, verified round events out.
//!
//! ```text
//!  table A source ─┐                     ┌─▶ table A thread ─┐
//!                  ├─▶ jobs ─▶ N workers ┤   (reorder, presence,├─▶ sink (journal, then publish)
//!  table B source ─┘   (bounded)  (recognize)└─▶ table B thread ─┘    tracker, verifier)
//! ```
//!
//! * Every channel is a bounded `crossbeam-channel`. A recorded source (file, folder, replay)
//!   blocks when the recognizers are behind and loses nothing; a live one (camera, stream)
//!   drops the frame instead, counted as the source stage's `dropped`.
//! * Each worker has its own [`CardRecognizer`] (its own ONNX sessions). Results come back out
//!   of order; each table thread puts them back in order by the ticket its source gave them
//!   (while one worker is stalled the others' results wait there: card lists, not frames).
//! * The table thread runs bet presence and the table's [`TableLogic`] (tracker, round state
//!   machine, verifier) frame by frame. Time is the frames' timestamps, never the wall clock:
//!   the same input gives the same events, byte for byte. Every stage counts received / sent /
//!   dropped / errors and its latency ([`StageStats`]); a [`HealthReport`] goes out every N
//!   seconds of frame time and at the end. Its latencies are the only wall-clock numbers, and
//!   health events are marked [`SerializedEvent::volatile`].
//! * Shutdown (the stop flag, e.g. Ctrl-C, or the end of every input) drains every stage in
//!   order; the sink closes (flushes its journals) last. See `docs/pipeline.md`.
pub mod config;
mod contract;
mod engine;
mod error;
mod logic;
mod recognizer;
pub mod run;
mod sink;
mod stage;

pub use contract::{
    EventSink, HealthReport, LogicFactory, ObservedFrame, SerializedEvent, TableHint, TableLogic, TableSetup,
};
pub use engine::{Hints, Pipeline, PipelineOptions, PipelineReport, TableInput, TableReport};
pub use error::PipelineError;
pub use logic::{frame_observations, observation, readable, MonitorLogic};
pub use recognizer::{CardRecognizer, OnnxRecognizers, RecognizerFactory};
pub use sink::{Collector, JsonLinesSink, PrintingSink};
pub use stage::{StageCounters, StageName, StageStats, LATENCY_WINDOW};
