//! [`VideoFileSource`]: video files and network streams through OpenCV's
//! VideoCapture (FFmpeg backend).
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use opencv::core::{Mat, Vector};
use opencv::prelude::*;
use opencv::videoio::{self, VideoCapture};

use super::error::cv;
use super::{Capture, FrameSource, Read, SourceError, SourceInfo, SourceKind};

/// Failed reads in a row after which a file is taken to have ended (a frame
/// that cannot be decoded fails one read; the end of a truncated file fails
/// every read).
const MAX_CONSECUTIVE_FAILURES: u32 = 8;

/// How long to wait for a network stream to open and for each of its frames, ms.
const STREAM_OPEN_TIMEOUT_MS: i32 = 10_000;
/// See [`STREAM_OPEN_TIMEOUT_MS`].
const STREAM_READ_TIMEOUT_MS: i32 = 5_000;

/// URL schemes passed to FFmpeg as network streams.
const STREAM_SCHEMES: [&str; 7] = ["rtsp://", "rtsps://", "rtmp://", "http://", "https://", "udp://", "tcp://"];

/// Whether `input` is a network stream URL (RTSP, HTTP, …).
pub(crate) fn is_stream_url(input: &str) -> bool {
    let lower = input.to_ascii_lowercase();
    STREAM_SCHEMES.iter().any(|s| lower.starts_with(s))
}

enum Target {
    File(PathBuf),
    Url(String),
}

/// A video file (recorded) or a network stream (live) read through OpenCV's
/// VideoCapture with the FFmpeg backend.
///
/// Files: `source_index` is the frame number and `timestamp_ms` the frame's
/// presentation time in the container (falling back to `index / fps` where
/// the container gives none). A frame that cannot be decoded is reported as
/// [`Read::Corrupt`] with its frame number and skipped; a file that stops
/// before the frame count its header announces is reported the same way
/// before [`Read::End`].
///
/// Streams (`rtsp://`, `http://`, …): `timestamp_ms` is the capture time on
/// the monotonic clock since the stream was first opened; a failed read is
/// a disconnection ([`SourceError::Disconnected`]) and [`FrameSource::reopen`]
/// connects again.
pub struct VideoFileSource {
    info: SourceInfo,
    target: Target,
    cap: VideoCapture,
    /// Frame number of the next frame.
    next_index: u64,
    /// Frame number of the first of the current run of failed reads.
    failed_from: Option<u64>,
    failures: u32,
    /// A frame read while a run of failures was being reported.
    held: Option<Capture>,
    epoch: Instant,
}

fn backends() -> String {
    let names: Vec<String> = videoio::get_backends()
        .map(|v| v.iter().filter_map(|b| videoio::get_backend_name(b).ok()).collect())
        .unwrap_or_default();
    if names.is_empty() {
        "none found".to_string()
    } else {
        names.join(", ")
    }
}

fn prop(cap: &VideoCapture, id: i32) -> Option<f64> {
    cap.get(id).ok().filter(|v| v.is_finite() && *v > 0.0)
}

fn open_capture(target: &Target) -> Result<VideoCapture, SourceError> {
    match target {
        Target::File(path) => {
            let cap = VideoCapture::from_file(path, videoio::CAP_FFMPEG)
                .map_err(cv(format!("opening video file {}", path.display())))?;
            if !cap.is_opened().unwrap_or(false) {
                return Err(SourceError::NotAVideo { path: path.clone(), backends: backends() });
            }
            Ok(cap)
        }
        Target::Url(url) => {
            let params = Vector::from_slice(&[
                videoio::CAP_PROP_OPEN_TIMEOUT_MSEC,
                STREAM_OPEN_TIMEOUT_MS,
                videoio::CAP_PROP_READ_TIMEOUT_MSEC,
                STREAM_READ_TIMEOUT_MS,
            ]);
            let cap = VideoCapture::from_file_with_params(url, videoio::CAP_FFMPEG, &params)
                .map_err(cv(format!("opening stream {url}")))?;
            if !cap.is_opened().unwrap_or(false) {
                return Err(SourceError::StreamUnavailable { url: url.clone() });
            }
            Ok(cap)
        }
    }
}

impl VideoFileSource {
    /// Opens a video file; its frames carry `camera_id`.
    pub fn open_file(path: impl AsRef<Path>, camera_id: &str) -> Result<VideoFileSource, SourceError> {
        let path = path.as_ref().to_path_buf();
        if !path.exists() {
            return Err(SourceError::NotFound { path });
        }
        if path.is_dir() {
            return Err(SourceError::NotAVideo { path, backends: backends() });
        }
        let target = Target::File(path.clone());
        VideoFileSource::open(target, path.display().to_string(), camera_id, SourceKind::Recorded)
    }

    /// Opens a network stream (RTSP, HTTP, … whatever OpenCV's FFmpeg was
    /// built with); its frames carry `camera_id`.
    pub fn open_url(url: &str, camera_id: &str) -> Result<VideoFileSource, SourceError> {
        VideoFileSource::open(Target::Url(url.to_string()), url.to_string(), camera_id, SourceKind::Live)
    }

    fn open(target: Target, input: String, camera_id: &str, kind: SourceKind) -> Result<VideoFileSource, SourceError> {
        let cap = open_capture(&target)?;
        let info = SourceInfo {
            camera_id: Arc::from(camera_id),
            kind,
            input,
            nominal_fps: prop(&cap, videoio::CAP_PROP_FPS),
            width: prop(&cap, videoio::CAP_PROP_FRAME_WIDTH).unwrap_or(0.0) as u32,
            height: prop(&cap, videoio::CAP_PROP_FRAME_HEIGHT).unwrap_or(0.0) as u32,
            frame_count: match kind {
                SourceKind::Recorded => prop(&cap, videoio::CAP_PROP_FRAME_COUNT).map(|n| n.round() as u64),
                SourceKind::Live => None,
            },
        };
        Ok(VideoFileSource {
            info,
            target,
            cap,
            next_index: 0,
            failed_from: None,
            failures: 0,
            held: None,
            epoch: Instant::now(),
        })
    }

    /// Container time of the frame just read, ms.
    fn container_time_ms(&self, index: u64) -> f64 {
        let by_index = self.info.nominal_fps.map(|fps| index as f64 * 1000.0 / fps);
        match self.cap.get(videoio::CAP_PROP_POS_MSEC) {
            // The first frame legitimately reports 0; later frames reporting 0
            // mean the container has no timestamps.
            Ok(ms) if ms.is_finite() && ms >= 0.0 && (ms > 0.0 || index == 0) => ms,
            _ => by_index.unwrap_or(index as f64),
        }
    }

    fn read_file(&mut self) -> Result<Read, SourceError> {
        if let Some(held) = self.held.take() {
            return Ok(Read::Frame(held));
        }
        loop {
            let mut image = Mat::default();
            let ok = self.cap.read(&mut image).unwrap_or(false);
            if ok && !image.empty() {
                let index = self.next_index;
                self.next_index += 1;
                let capture = Capture { source_index: index, timestamp_ms: self.container_time_ms(index), image };
                if let Some(first) = self.failed_from.take() {
                    // A run of frames that failed, then a good one: report the run, then the frame.
                    let n = std::mem::take(&mut self.failures);
                    self.held = Some(capture);
                    return Ok(Read::Corrupt {
                        position: first,
                        frames: u64::from(n),
                        path: None,
                        reason: format!("{n} frame(s) from frame {first} could not be decoded; skipped"),
                    });
                }
                return Ok(Read::Frame(capture));
            }
            let announced = self.info.frame_count.unwrap_or(0);
            if self.next_index >= announced && self.failed_from.is_none() {
                return Ok(Read::End);
            }
            // Before the announced end: a frame that cannot be decoded, or a truncated file.
            let first = *self.failed_from.get_or_insert(self.next_index);
            self.failures += 1;
            self.next_index += 1;
            if self.failures >= MAX_CONSECUTIVE_FAILURES || self.next_index >= announced {
                self.failed_from = None;
                self.failures = 0;
                self.next_index = announced.max(self.next_index);
                return Ok(Read::Corrupt {
                    position: first,
                    frames: self.next_index - first,
                    path: None,
                    reason: format!(
                        "the file announces {announced} frames but none could be decoded from frame {first} on \
                         (truncated file, or frames lost earlier to damage in the container)"
                    ),
                });
            }
        }
    }

    fn read_stream(&mut self) -> Result<Read, SourceError> {
        let mut image = Mat::default();
        let ok = self.cap.read(&mut image).unwrap_or(false);
        if !ok || image.empty() {
            return Err(SourceError::Disconnected {
                input: self.info.input.clone(),
                reason: "no frame within the read timeout (stream ended or network down)".to_string(),
            });
        }
        let index = self.next_index;
        self.next_index += 1;
        let timestamp_ms = self.epoch.elapsed().as_secs_f64() * 1000.0;
        if self.info.width == 0 {
            self.info.width = image.cols().max(0) as u32;
            self.info.height = image.rows().max(0) as u32;
        }
        Ok(Read::Frame(Capture { source_index: index, timestamp_ms, image }))
    }
}

impl FrameSource for VideoFileSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        match self.target {
            Target::File(_) => self.read_file(),
            Target::Url(_) => self.read_stream(),
        }
    }

    fn reopen(&mut self) -> Result<(), SourceError> {
        match self.target {
            // A file that failed would fail again.
            Target::File(_) => Err(SourceError::NotReopenable { input: self.info.input.clone() }),
            Target::Url(_) => {
                self.cap = open_capture(&self.target)?;
                Ok(())
            }
        }
    }
}
