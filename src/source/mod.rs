//! Frame sources: video files and network streams, image folders, USB/V4L2
//! cameras and the simulator, behind one [`FrameSource`] trait.
//!
//! The stage has three layers (see `docs/sources.md`):
//!
//! 1. **Sources** ([`VideoFileSource`], [`ImageFolderSource`], [`SimulatedSource`],
//!    `CameraSource` with the `camera` feature) read one [`Capture`] at a time
//!    and say nothing about threads, counters or retries.
//! 2. A [`Feed`] drives one source synchronously: it numbers the frames it
//!    hands out ([`Frame::seq`]), counts gaps and corrupt frames, reopens a
//!    live source that fails with exponential [`Backoff`], and reports all of
//!    it as [`HealthEvent`]s.
//! 3. [`spawn_live`] and [`spawn_blocking`] run a feed on its own thread:
//!    live sources push into a small ring that drops the *oldest* frame when
//!    the consumer is slow (the camera never waits), recorded sources block
//!    and lose nothing.
//!
//! Every frame carries its camera id, its sequence number, its position in
//! the source and a timestamp: container time for files, the capture time for
//! cameras and streams (see [`Frame::timestamp_ms`]).
mod error;
mod feed;
mod folder;
mod probe;
mod sim;
mod spec;
mod thread;
mod video;

#[cfg(feature = "camera")]
mod camera;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use opencv::core::Mat;
use serde::Serialize;

#[cfg(feature = "camera")]
pub use camera::CameraSource;
pub use error::SourceError;
pub use feed::{Backoff, Feed, FeedOptions, SourceStats};
pub use folder::{ImageFolderSource, IMAGE_EXTENSIONS};
pub use probe::{probe, run_cli, ProbeArgs, ProbeReport, SourcesArgs, SourcesCommand};
pub use sim::{Pace, SimulatedSource, SimulatedSpec};
pub use spec::{OpenOptions, SourceSpec};
pub use thread::{spawn_blocking, spawn_live, LiveFeed};
pub use video::VideoFileSource;

/// One image from a source, with where and when it was taken.
///
/// The image is an OpenCV BGR `Mat` (8-bit, 3 channels) behind an `Arc`:
/// downstream stages run OpenCV geometry (undistortion, warps) and feed the
/// classifier from OpenCV buffers, so keeping OpenCV's own layout avoids a
/// conversion per frame, and the `Arc` lets several stages (recorder,
/// locator) share one frame without copying its pixels.
#[derive(Debug, Clone)]
pub struct Frame {
    /// The camera (or file) this frame comes from.
    pub camera_id: Arc<str>,
    /// Frames handed out by this source's feed, from 0. Consecutive unless
    /// the live ring dropped frames in between (each such gap is counted in
    /// [`SourceStats::frames_dropped`]).
    pub seq: u64,
    /// Position in the source: frame number in a file, image number in a
    /// folder, frames captured since the source was opened for a camera or a
    /// stream. Jumps here (frames the source skipped) are counted as gaps.
    pub source_index: u64,
    /// Milliseconds. Files and folders: container time (the frame's
    /// presentation time, or `source_index / fps`), so a replay gives the
    /// same timestamps. Cameras and network streams: capture time, on the
    /// monotonic clock, from the moment the source was first opened (it keeps
    /// increasing across reconnects). Simulator: simulated time
    /// (`frame / 30 fps`), which is also real time when paced.
    pub timestamp_ms: f64,
    /// The image, BGR 8-bit.
    pub image: Arc<Mat>,
}

impl Frame {
    /// Image width in pixels.
    pub fn width(&self) -> u32 {
        opencv::prelude::MatTraitConst::cols(self.image.as_ref()).max(0) as u32
    }

    /// Image height in pixels.
    pub fn height(&self) -> u32 {
        opencv::prelude::MatTraitConst::rows(self.image.as_ref()).max(0) as u32
    }
}

/// What a source read: a frame before its feed numbered it.
#[derive(Debug)]
pub struct Capture {
    /// Position in the source (see [`Frame::source_index`]).
    pub source_index: u64,
    /// Timestamp, ms (see [`Frame::timestamp_ms`]).
    pub timestamp_ms: f64,
    /// The image, BGR 8-bit.
    pub image: Mat,
}

/// The outcome of one [`FrameSource::read`].
#[derive(Debug)]
pub enum Read {
    /// A frame.
    Frame(Capture),
    /// `frames` frames from `position` on could not be decoded and were
    /// skipped; the source can go on.
    Corrupt {
        /// Frame number in the source of the first one.
        position: u64,
        /// How many (1 for one bad image or frame).
        frames: u64,
        /// The file, for folders.
        path: Option<String>,
        /// Why.
        reason: String,
    },
    /// The source has no more frames: the end of a file or folder, or a
    /// simulator told to stop. A camera or stream never ends this way; it
    /// returns [`SourceError::Disconnected`].
    End,
}

/// Whether a source is live (frames arrive whether or not anyone reads them)
/// or recorded (frames wait to be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceKind {
    /// A camera, a network stream or the paced simulator: run it with
    /// [`spawn_live`] (drop-oldest ring) and reconnect it when it fails.
    Live,
    /// A file, a folder or a replay: run it with [`spawn_blocking`]; nothing
    /// is dropped and a failure is final.
    Recorded,
}

/// What a source is, known once it is open.
#[derive(Debug, Clone, Serialize)]
pub struct SourceInfo {
    /// The camera id its frames carry.
    #[serde(serialize_with = "serialize_arc_str")]
    pub camera_id: Arc<str>,
    /// Live or recorded.
    pub kind: SourceKind,
    /// What was opened: a path, a URL, `camera:0`, `sim:RULESET`.
    pub input: String,
    /// Frames per second announced by the source (container, camera mode), if known.
    pub nominal_fps: Option<f64>,
    /// Image width announced by the source, pixels (0 if unknown until the first frame).
    pub width: u32,
    /// Image height announced by the source, pixels (0 if unknown until the first frame).
    pub height: u32,
    /// Frames announced by the container or folder, if known.
    pub frame_count: Option<u64>,
}

/// A source of frames: one camera, stream, file, folder or simulator.
///
/// Protocol: [`read`](FrameSource::read) is called repeatedly on one thread.
/// It returns a frame, a skipped corrupt frame, or the end. An `Err` means
/// the source as a whole failed (a camera unplugged, a stream dropped, a file
/// unreadable): the [`Feed`] then calls [`reopen`](FrameSource::reopen) with
/// backoff for a live source, and stops a recorded one.
pub trait FrameSource: Send {
    /// What this source is.
    fn info(&self) -> &SourceInfo;

    /// Reads the next frame. May block for up to about one frame interval
    /// (a camera waiting for its sensor) or a network timeout.
    fn read(&mut self) -> Result<Read, SourceError>;

    /// Reopens the source after a failure. Live sources reconnect; the default
    /// says the source cannot be reopened.
    fn reopen(&mut self) -> Result<(), SourceError> {
        Err(SourceError::NotReopenable { input: self.info().input.clone() })
    }
}

impl FrameSource for Box<dyn FrameSource> {
    fn info(&self) -> &SourceInfo {
        self.as_ref().info()
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        self.as_mut().read()
    }

    fn reopen(&mut self) -> Result<(), SourceError> {
        self.as_mut().reopen()
    }
}

/// What a feed hands out: frames and health events.
#[derive(Debug, Clone)]
pub enum SourceEvent {
    /// A frame.
    Frame(Frame),
    /// Something about the source's health.
    Health(HealthEvent),
}

/// Something that happened to a source, for the health dashboard and logs.
/// Every event names its camera.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HealthEvent {
    /// Frames or an image could not be decoded and were skipped.
    Corrupt {
        /// The camera.
        #[serde(serialize_with = "serialize_arc_str")]
        camera_id: Arc<str>,
        /// Frame number in the source of the first one.
        position: u64,
        /// How many.
        frames: u64,
        /// The image file, for folders.
        path: Option<String>,
        /// Why.
        reason: String,
    },
    /// The source skipped frames: its position jumped from `expected` to `got`.
    Gap {
        /// The camera.
        #[serde(serialize_with = "serialize_arc_str")]
        camera_id: Arc<str>,
        /// The position that should have come next.
        expected: u64,
        /// The position that came.
        got: u64,
    },
    /// A live source failed; reconnection starts.
    Disconnected {
        /// The camera.
        #[serde(serialize_with = "serialize_arc_str")]
        camera_id: Arc<str>,
        /// Why.
        reason: String,
    },
    /// One reconnection attempt, after waiting `delay_ms`.
    ReconnectAttempt {
        /// The camera.
        #[serde(serialize_with = "serialize_arc_str")]
        camera_id: Arc<str>,
        /// 1 for the first attempt after a failure.
        attempt: u32,
        /// How long the feed waited before this attempt, ms.
        delay_ms: u64,
        /// `None` if it worked, else why not.
        error: Option<String>,
    },
    /// A live source is back after `attempts` attempts.
    Reconnected {
        /// The camera.
        #[serde(serialize_with = "serialize_arc_str")]
        camera_id: Arc<str>,
        /// Attempts it took.
        attempts: u32,
    },
    /// The feed gave up on the source (a recorded source failed, or a live
    /// one ran out of attempts). No more frames come from it.
    Failed {
        /// The camera.
        #[serde(serialize_with = "serialize_arc_str")]
        camera_id: Arc<str>,
        /// Why.
        reason: String,
    },
    /// Periodic counters (every [`FeedOptions::stats_every_ms`]) and the final
    /// ones when the feed ends.
    Stats(SourceStats),
    /// The source ended normally (end of file or folder).
    Ended {
        /// The camera.
        #[serde(serialize_with = "serialize_arc_str")]
        camera_id: Arc<str>,
    },
}

/// Writes a shared camera id as a string (serde's `rc` feature is not on).
fn serialize_arc_str<S: serde::Serializer>(value: &Arc<str>, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(value)
}
