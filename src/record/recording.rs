//! Recording the frames the pipeline saw, so that any round can be replayed exactly.
//!
//! A recording is a folder (`docs/disputes.md`):
//!
//! ```text
//! recording.json          manifest: table, camera, ruleset, JPEG quality, models, journal
//! calibration.json        the table's calibration at recording time
//! index.jsonl             one line per frame: number, timestamp, segment, position, byte range
//! seg-000000.avi …        Motion-JPEG AVI segments, a new one every N frames or M bytes
//! ```
//!
//! **Why frames are JPEG-encoded here and not by OpenCV's `VideoWriter`.** MJPG is lossy: a replay
//! decodes the stored JPEG, so its recognizer sees different pixels from a live recognizer that saw
//! the camera's raw frame, and the events could differ. `VideoWriter` encodes internally and gives
//! no access to its bytes. So the [`Recorder`] encodes each frame itself (`imencode`, fixed quality),
//! writes those exact bytes as the AVI's frame chunk, and hands the *decoded* JPEG (`imdecode` of
//! the same bytes) back to the pipeline ([`RecordingTap`]): the live recognizer and every later
//! replay ([`RecordingReader`], which `imdecode`s the same bytes found through the index) see the
//! same pixels, so a replay's events are byte-identical to the live run's. The segments are
//! ordinary MJPG AVI files (`RIFF AVI`, `00dc` chunks, an `idx1` index) that FFmpeg, VLC and
//! OpenCV's `VideoCapture` play; a segment cut short by a crash lacks its AVI index but stays
//! readable through `index.jsonl`.
//!
//! Retention ([`Retention`]): by total size and by age, oldest segments first, never the segment
//! being written. Index lines of deleted segments stay, so a reader can say the frame existed and
//! was deleted by retention ([`RecordingError::SegmentGone`]).
use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, BufWriter, Read as _, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use opencv::core::{Mat, Vector};
use opencv::imgcodecs;
use opencv::prelude::*;
use serde::{Deserialize, Serialize};

use crate::rules::RulesetId;
use crate::source::{Capture, FrameSource, Read, SourceError, SourceInfo};

/// Version of the recording layout (manifest and index).
pub const RECORDING_VERSION: u32 = 1;
/// The manifest's file name in a recording folder.
pub const MANIFEST_FILE: &str = "recording.json";
/// The index's file name in a recording folder.
pub const INDEX_FILE: &str = "index.jsonl";
/// The calibration's file name in a recording folder.
pub const CALIBRATION_FILE: &str = "calibration.json";
/// The empty-table image the live run's bet-presence detector compared against, if it had one
/// (PNG: lossless, so a replay sees the same pixels).
pub const PRESENCE_REFERENCE_FILE: &str = "presence_reference.png";

/// Errors of recording and reading recordings. Each names the file concerned.
#[derive(Debug, thiserror::Error)]
pub enum RecordingError {
    /// A file of the recording cannot be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file or folder.
        path: PathBuf,
        /// The OS error.
        source: std::io::Error,
    },
    /// The folder is not a recording (no manifest or index).
    #[error("{} is not a recording: {missing} is missing (a recording folder holds recording.json, index.jsonl and seg-*.avi)", path.display())]
    NotARecording {
        /// The folder.
        path: PathBuf,
        /// The file that is missing.
        missing: &'static str,
    },
    /// The folder already holds a recording; recordings are never overwritten.
    #[error("{} already holds a recording; choose a new folder", path.display())]
    Exists {
        /// The folder.
        path: PathBuf,
    },
    /// The manifest or an index line is malformed.
    #[error("{}:{line}: {message}", path.display())]
    Malformed {
        /// The file.
        path: PathBuf,
        /// 1-based line (0 for the whole file).
        line: u64,
        /// What is wrong.
        message: String,
    },
    /// OpenCV could not encode or decode a frame.
    #[error("{context}: {message}")]
    Codec {
        /// What was being done.
        context: String,
        /// OpenCV's message.
        message: String,
    },
    /// The recording has no frame with this number.
    #[error("frame {frame} is not in the recording (it holds frames {first}..={last})")]
    NoSuchFrame {
        /// The frame asked for.
        frame: u64,
        /// The first frame recorded.
        first: u64,
        /// The last frame recorded.
        last: u64,
    },
    /// The frame's segment was deleted (by retention, or by hand).
    #[error("frame {frame} was recorded in {}, which no longer exists (deleted by retention?)", segment.display())]
    SegmentGone {
        /// The frame.
        frame: u64,
        /// Its segment file.
        segment: PathBuf,
    },
    /// Invalid options.
    #[error("invalid recording options: {0}")]
    Options(String),
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> RecordingError + '_ {
    move |source| RecordingError::Io { path: path.to_path_buf(), source }
}

fn codec(context: &str) -> impl FnOnce(opencv::Error) -> RecordingError + '_ {
    move |e| RecordingError::Codec { context: context.to_string(), message: e.message }
}

/// When the recorder starts a new segment, how it encodes, and what it keeps.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordingOptions {
    /// A new segment after this many frames (9 000 = 5 minutes at 30 fps).
    pub segment_max_frames: u64,
    /// A new segment once the current one reaches this many bytes.
    pub segment_max_bytes: u64,
    /// JPEG quality, 1..=100 (what the pipeline recognizes: see the module docs).
    pub jpeg_quality: i32,
    /// What to delete as the recording grows.
    pub retention: Retention,
}

impl Default for RecordingOptions {
    fn default() -> Self {
        RecordingOptions {
            segment_max_frames: 9_000,
            segment_max_bytes: 1 << 30,
            jpeg_quality: 92,
            retention: Retention::default(),
        }
    }
}

/// Retention: segments beyond these limits are deleted, oldest first, never the one being written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Retention {
    /// Keep at most this many bytes of segments in the recording (none: no limit).
    pub max_total_bytes: Option<u64>,
    /// Delete segments whose last write is older than this (none: no limit).
    pub max_age: Option<Duration>,
}

/// The models a recording's frames were recognized with, so that a replay can use the same.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelsUsed {
    /// The locator model file.
    pub locator: PathBuf,
    /// The classifier model file.
    pub classifier: PathBuf,
    /// The whole-card classifier, if one was read as well (absent in recordings before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub face_classifier: Option<PathBuf>,
    /// The glyph classifier, if one was read as well (absent in recordings before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub glyph_classifier: Option<PathBuf>,
}

/// `recording.json`: what was recorded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecordingManifest {
    /// [`RECORDING_VERSION`].
    pub version: u32,
    /// The table.
    pub table_id: String,
    /// The camera (the events' `camera_id`).
    pub camera_id: String,
    /// The ruleset played.
    pub ruleset: RulesetId,
    /// What the frames came from (a path, a URL, `camera:0`).
    pub input: String,
    /// The source's nominal frame rate, if known.
    pub nominal_fps: Option<f64>,
    /// JPEG quality of the segments.
    pub jpeg_quality: i32,
    /// The models the live run used.
    pub models: Option<ModelsUsed>,
    /// The journal the live run appended the table's events to, if any.
    pub journal: Option<PathBuf>,
    /// The pipeline's health interval in the live run, ms (a replay uses the same, so that health
    /// events take the same sequence numbers).
    pub health_interval_ms: u64,
    /// Whether the live run's classifier was trained on the table's deck (a replay confirms
    /// cards the same way; absent in recordings made before 2026-11-26: false).
    #[serde(default)]
    pub deck_enrolled: bool,
}

/// One line of `index.jsonl`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum IndexEntry {
    /// A recorded frame.
    Frame(FrameEntry),
    /// The source skipped frames it could not decode (replayed as the same [`Read::Corrupt`]).
    Corrupt(CorruptEntry),
}

/// Where one frame is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FrameEntry {
    /// The frame's number: its count among the frames recorded, from 0, which is the number the
    /// pipeline's feed gives it and the `frame` of the events it caused.
    pub frame: u64,
    /// Its position in the original source.
    pub source_index: u64,
    /// Its timestamp, ms, written as Rust prints the `f64` (shortest exact form) inside a string:
    /// parsed back with Rust's correctly rounded parser it is the same `f64`, bit for bit, which a
    /// JSON number read by a best-effort float parser need not be.
    #[serde(with = "exact_f64")]
    pub timestamp_ms: f64,
    /// The segment file (in the recording folder).
    pub segment: String,
    /// The frame's position in its segment, from 0.
    pub position: u64,
    /// Byte offset of its JPEG in the segment file.
    pub offset: u64,
    /// Length of its JPEG, bytes.
    pub length: u64,
}

/// Frames the source could not decode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CorruptEntry {
    /// Position in the source of the first one.
    pub corrupt_position: u64,
    /// How many.
    pub frames: u64,
    /// The file, for folders.
    pub path: Option<String>,
    /// Why.
    pub reason: String,
}

mod exact_f64 {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Segment file name of segment `n`.
fn segment_name(n: u64) -> String {
    format!("seg-{n:06}.avi")
}

// ---------------------------------------------------------------------------------------------
// Motion-JPEG AVI segments.

/// A Motion-JPEG AVI file being written: RIFF header, one `00dc` chunk per frame, `idx1` at the end.
struct AviWriter {
    path: PathBuf,
    file: BufWriter<File>,
    /// Bytes written so far (the file's length).
    len: u64,
    width: u32,
    height: u32,
    fps: f64,
    /// (offset of the chunk relative to the `movi` fourcc, JPEG length) per frame.
    chunks: Vec<(u32, u32)>,
    max_chunk: u32,
}

/// Offset of the `movi` fourcc: right after the fixed headers [`AviWriter::header`] writes.
const MOVI_FOURCC_OFFSET: u64 = 12 + 8 + 4 + (8 + 56) + 8 + 4 + (8 + 56) + (8 + 40) + 8;

impl AviWriter {
    fn create(path: &Path, width: u32, height: u32, fps: f64) -> Result<AviWriter, RecordingError> {
        let file = OpenOptions::new().write(true).create_new(true).open(path).map_err(io(path))?;
        let mut w = AviWriter {
            path: path.to_path_buf(),
            file: BufWriter::new(file),
            len: 0,
            width,
            height,
            fps,
            chunks: Vec::new(),
            max_chunk: 0,
        };
        let header = w.header();
        w.write(&header)?;
        debug_assert_eq!(w.len, MOVI_FOURCC_OFFSET + 4);
        Ok(w)
    }

    fn write(&mut self, bytes: &[u8]) -> Result<(), RecordingError> {
        self.file.write_all(bytes).map_err(io(&self.path))?;
        self.len += bytes.len() as u64;
        Ok(())
    }

    /// The headers up to and including `LIST <size> movi`, with the sizes and counts known now
    /// (rewritten with the final ones by [`finish`](AviWriter::finish)).
    fn header(&self) -> Vec<u8> {
        let frames = self.chunks.len() as u32;
        let movi_size = (self.len.max(MOVI_FOURCC_OFFSET + 4) - MOVI_FOURCC_OFFSET) as u32;
        let idx_size = if frames > 0 { 8 + 16 * frames } else { 0 };
        let riff_size = (MOVI_FOURCC_OFFSET - 8) as u32 + movi_size + idx_size;
        let us_per_frame = (1e6 / self.fps.max(1.0)).round() as u32;
        // Rate/scale with three decimals of fps (29.97 → 29970/1000).
        let (rate, scale) = ((self.fps.max(1.0) * 1000.0).round() as u32, 1000u32);
        let mut h = Vec::with_capacity(MOVI_FOURCC_OFFSET as usize + 4);
        let u32le = |h: &mut Vec<u8>, v: u32| h.extend_from_slice(&v.to_le_bytes());
        h.extend_from_slice(b"RIFF");
        u32le(&mut h, riff_size);
        h.extend_from_slice(b"AVI LIST");
        u32le(&mut h, 4 + (8 + 56) + 8 + 4 + (8 + 56) + (8 + 40));
        h.extend_from_slice(b"hdrlavih");
        u32le(&mut h, 56);
        for v in
            [us_per_frame, 0, 0, 0x10 /* AVIF_HASINDEX */, frames, 0, 1, self.max_chunk, self.width, self.height]
        {
            u32le(&mut h, v);
        }
        h.extend_from_slice(&[0; 16]);
        h.extend_from_slice(b"LIST");
        u32le(&mut h, 4 + (8 + 56) + (8 + 40));
        h.extend_from_slice(b"strlstrh");
        u32le(&mut h, 56);
        h.extend_from_slice(b"vidsMJPG");
        for v in [0, 0, 0, scale, rate, 0, frames, self.max_chunk, u32::MAX, 0] {
            u32le(&mut h, v);
        }
        for v in [0i16, 0, self.width as i16, self.height as i16] {
            h.extend_from_slice(&v.to_le_bytes());
        }
        h.extend_from_slice(b"strf");
        u32le(&mut h, 40);
        u32le(&mut h, 40);
        u32le(&mut h, self.width);
        u32le(&mut h, self.height);
        h.extend_from_slice(&1u16.to_le_bytes());
        h.extend_from_slice(&24u16.to_le_bytes());
        h.extend_from_slice(b"MJPG");
        for v in [self.width * self.height * 3, 0, 0, 0, 0] {
            u32le(&mut h, v);
        }
        h.extend_from_slice(b"LIST");
        u32le(&mut h, movi_size);
        h.extend_from_slice(b"movi");
        h
    }

    /// Appends one JPEG; returns the byte offset of its data in the file.
    fn push(&mut self, jpeg: &[u8]) -> Result<u64, RecordingError> {
        let rel = (self.len - MOVI_FOURCC_OFFSET) as u32;
        let length = jpeg.len() as u32;
        self.write(b"00dc")?;
        self.write(&length.to_le_bytes())?;
        let offset = self.len;
        self.write(jpeg)?;
        if length % 2 == 1 {
            self.write(&[0])?;
        }
        // The index line that points at these bytes is written after them; flushing to the OS
        // here means a process crash never leaves an index line without its frame.
        self.file.flush().map_err(io(&self.path))?;
        self.chunks.push((rel, length));
        self.max_chunk = self.max_chunk.max(length);
        Ok(offset)
    }

    /// Writes the `idx1` index and the final sizes.
    fn finish(mut self) -> Result<(), RecordingError> {
        let mut idx = Vec::with_capacity(8 + 16 * self.chunks.len());
        if !self.chunks.is_empty() {
            idx.extend_from_slice(b"idx1");
            idx.extend_from_slice(&(16 * self.chunks.len() as u32).to_le_bytes());
            for &(rel, length) in &self.chunks {
                idx.extend_from_slice(b"00dc");
                idx.extend_from_slice(&0x10u32.to_le_bytes()); // AVIIF_KEYFRAME: every MJPG frame is one
                idx.extend_from_slice(&rel.to_le_bytes());
                idx.extend_from_slice(&length.to_le_bytes());
            }
        }
        let movi_end = self.len;
        self.write(&idx)?;
        self.len = movi_end; // header() computes the movi size from the end of the last chunk
        let header = self.header();
        let mut file = self.file.into_inner().map_err(|e| RecordingError::Io {
            path: self.path.clone(),
            source: std::io::Error::other(e.to_string()),
        })?;
        file.seek(SeekFrom::Start(0)).map_err(io(&self.path))?;
        file.write_all(&header).map_err(io(&self.path))?;
        file.sync_data().map_err(io(&self.path))?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// Writing.

/// Writes a recording: segments, index, manifest.
pub struct Recorder {
    dir: PathBuf,
    options: RecordingOptions,
    index: BufWriter<File>,
    fps: f64,
    current: Option<(u64, AviWriter)>,
    next_segment: u64,
    next_frame: u64,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder").field("dir", &self.dir).field("next_frame", &self.next_frame).finish()
    }
}

impl Recorder {
    /// Starts a recording in `dir` (created; it must not hold a recording already), writing the
    /// manifest and a copy of the calibration (`calibration_json`: the file's text).
    pub fn create(
        dir: &Path,
        manifest: &RecordingManifest,
        calibration_json: &str,
        options: RecordingOptions,
    ) -> Result<Recorder, RecordingError> {
        if options.segment_max_frames == 0 || options.segment_max_bytes == 0 {
            return Err(RecordingError::Options("segment limits must be at least 1".into()));
        }
        if !(1..=100).contains(&options.jpeg_quality) {
            return Err(RecordingError::Options(format!("JPEG quality {} is not 1..=100", options.jpeg_quality)));
        }
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        if dir.join(INDEX_FILE).exists() || dir.join(MANIFEST_FILE).exists() {
            return Err(RecordingError::Exists { path: dir.to_path_buf() });
        }
        let manifest = RecordingManifest { jpeg_quality: options.jpeg_quality, ..manifest.clone() };
        let text = serde_json::to_string_pretty(&manifest).expect("manifest serialises");
        let path = dir.join(MANIFEST_FILE);
        std::fs::write(&path, text + "\n").map_err(io(&path))?;
        let path = dir.join(CALIBRATION_FILE);
        std::fs::write(&path, calibration_json).map_err(io(&path))?;
        let path = dir.join(INDEX_FILE);
        let index = OpenOptions::new().append(true).create_new(true).open(&path).map_err(io(&path))?;
        Ok(Recorder {
            dir: dir.to_path_buf(),
            options,
            index: BufWriter::new(index),
            fps: manifest.nominal_fps.unwrap_or(30.0),
            current: None,
            next_segment: 0,
            next_frame: 0,
        })
    }

    /// Keeps the presence detector's reference image with the recording, so that a replay
    /// detects bets as the live run did.
    pub fn keep_presence_reference(&self, image: &Mat) -> Result<(), RecordingError> {
        let path = self.dir.join(PRESENCE_REFERENCE_FILE);
        let ok = imgcodecs::imwrite(&*path.to_string_lossy(), image, &Vector::new())
            .map_err(codec("writing the presence reference"))?;
        if !ok {
            return Err(RecordingError::Codec {
                context: format!("writing {}", path.display()),
                message: "OpenCV could not write the PNG".into(),
            });
        }
        Ok(())
    }

    /// The recording's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Frames recorded so far.
    pub fn frames(&self) -> u64 {
        self.next_frame
    }

    /// Records one frame (BGR) and returns what a replay will decode from it: the pixels the
    /// pipeline must recognize for a replay to give the same events.
    pub fn record(&mut self, source_index: u64, timestamp_ms: f64, image: &Mat) -> Result<Mat, RecordingError> {
        let mut jpeg = Vector::<u8>::new();
        let params = Vector::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, self.options.jpeg_quality]);
        imgcodecs::imencode(".jpg", image, &mut jpeg, &params).map_err(codec("encoding a frame"))?;
        let decoded = decode(jpeg.as_slice())?;
        let roll = match &self.current {
            None => true,
            Some((_, w)) => {
                w.chunks.len() as u64 >= self.options.segment_max_frames
                    || w.len + jpeg.len() as u64 > self.options.segment_max_bytes
            }
        };
        if roll {
            self.roll(image.cols().max(0) as u32, image.rows().max(0) as u32)?;
        }
        let Some((segment, writer)) = self.current.as_mut() else { unreachable!("a segment was just opened") };
        let position = writer.chunks.len() as u64;
        let offset = writer.push(jpeg.as_slice())?;
        let entry = IndexEntry::Frame(FrameEntry {
            frame: self.next_frame,
            source_index,
            timestamp_ms,
            segment: segment_name(*segment),
            position,
            offset,
            length: jpeg.len() as u64,
        });
        self.write_index(&entry)?;
        self.next_frame += 1;
        Ok(decoded)
    }

    /// Records that the source skipped frames it could not decode.
    pub fn record_corrupt(&mut self, entry: CorruptEntry) -> Result<(), RecordingError> {
        self.write_index(&IndexEntry::Corrupt(entry))
    }

    fn write_index(&mut self, entry: &IndexEntry) -> Result<(), RecordingError> {
        let line = serde_json::to_string(entry).expect("index entries serialise");
        let path = self.dir.join(INDEX_FILE);
        writeln!(self.index, "{line}").map_err(io(&path))?;
        self.index.flush().map_err(io(&path))
    }

    fn roll(&mut self, width: u32, height: u32) -> Result<(), RecordingError> {
        if let Some((_, w)) = self.current.take() {
            w.finish()?;
        }
        let n = self.next_segment;
        self.next_segment += 1;
        let path = self.dir.join(segment_name(n));
        self.current = Some((n, AviWriter::create(&path, width, height, self.fps)?));
        // Retention runs when a segment closes, with the new one protected.
        apply_retention(&self.dir, &self.options.retention, SystemTime::now(), Some(&segment_name(n)))?;
        Ok(())
    }

    /// Closes the current segment (writing its AVI index) and the index.
    pub fn finish(mut self) -> Result<(), RecordingError> {
        self.close()
    }

    fn close(&mut self) -> Result<(), RecordingError> {
        if let Some((_, w)) = self.current.take() {
            w.finish()?;
        }
        let path = self.dir.join(INDEX_FILE);
        self.index.flush().map_err(io(&path))?;
        self.index.get_ref().sync_data().map_err(io(&path))
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        // A recorder dropped without `finish` (the pipeline's source thread ends by dropping its
        // source) still closes its segment properly; errors have nowhere to go here.
        let _ = self.close();
    }
}

fn decode(jpeg: &[u8]) -> Result<Mat, RecordingError> {
    let buf = Vector::<u8>::from_slice(jpeg);
    let m = imgcodecs::imdecode(&buf, imgcodecs::IMREAD_COLOR).map_err(codec("decoding a frame"))?;
    if m.empty() {
        return Err(RecordingError::Codec { context: "decoding a frame".into(), message: "not a JPEG".into() });
    }
    Ok(m)
}

/// Deletes segments of the recording in `dir` beyond `policy`: first those older than
/// `max_age` (by last modification), then the oldest until the total is within `max_total_bytes`.
/// `protect` (the segment being written) is never deleted. Returns the deleted files.
pub fn apply_retention(
    dir: &Path,
    policy: &Retention,
    now: SystemTime,
    protect: Option<&str>,
) -> Result<Vec<PathBuf>, RecordingError> {
    if policy.max_total_bytes.is_none() && policy.max_age.is_none() {
        return Ok(Vec::new());
    }
    let mut segments = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let name = entry.file_name().to_string_lossy().to_string();
        if !(name.starts_with("seg-") && name.ends_with(".avi")) {
            continue;
        }
        let meta = entry.metadata().map_err(io(&entry.path()))?;
        segments.push((name, meta.len(), meta.modified().unwrap_or(now)));
    }
    // Names are numbered in writing order, so sorting by name is oldest first.
    segments.sort();
    let mut total: u64 = segments.iter().map(|s| s.1).sum();
    let mut deleted = Vec::new();
    for (name, size, modified) in &segments {
        if Some(name.as_str()) == protect {
            continue;
        }
        let too_old = policy.max_age.is_some_and(|max| now.duration_since(*modified).unwrap_or_default() > max);
        let too_big = policy.max_total_bytes.is_some_and(|max| total > max);
        if too_old || too_big {
            let path = dir.join(name);
            std::fs::remove_file(&path).map_err(io(&path))?;
            total -= size;
            deleted.push(path);
        }
    }
    Ok(deleted)
}

// ---------------------------------------------------------------------------------------------
// The tap between a source and the pipeline.

/// A [`FrameSource`] that records every frame of the source it wraps and hands on the frame as a
/// replay will decode it (see the module docs): put it between a table's source and the pipeline.
pub struct RecordingTap<S: FrameSource> {
    inner: S,
    recorder: Option<Recorder>,
}

impl<S: FrameSource> RecordingTap<S> {
    /// Records `inner` with `recorder`.
    pub fn new(inner: S, recorder: Recorder) -> RecordingTap<S> {
        RecordingTap { inner, recorder: Some(recorder) }
    }
}

impl<S: FrameSource> FrameSource for RecordingTap<S> {
    fn info(&self) -> &SourceInfo {
        self.inner.info()
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        let read = self.inner.read()?;
        let Some(recorder) = self.recorder.as_mut() else { return Ok(read) };
        // A frame that cannot be recorded must not be recognized either: the replay could not
        // reproduce what it caused. The source fails, which the feed reports.
        let input = format!("recording {}", recorder.dir().display());
        let fail = |e: RecordingError| SourceError::Disconnected { input: input.clone(), reason: e.to_string() };
        match read {
            Read::Frame(c) => {
                let image = recorder.record(c.source_index, c.timestamp_ms, &c.image).map_err(fail)?;
                Ok(Read::Frame(Capture { image, ..c }))
            }
            Read::Corrupt { position, frames, path, reason } => {
                let entry =
                    CorruptEntry { corrupt_position: position, frames, path: path.clone(), reason: reason.clone() };
                recorder.record_corrupt(entry).map_err(fail)?;
                Ok(Read::Corrupt { position, frames, path, reason })
            }
            Read::End => {
                if let Some(r) = self.recorder.take() {
                    r.finish().map_err(fail)?;
                }
                Ok(Read::End)
            }
        }
    }

    fn reopen(&mut self) -> Result<(), SourceError> {
        self.inner.reopen()
    }
}

// ---------------------------------------------------------------------------------------------
// Reading.

/// An open recording: its manifest and index; frames by number or as a source.
#[derive(Debug, Clone)]
pub struct RecordingReader {
    dir: PathBuf,
    manifest: RecordingManifest,
    entries: Vec<IndexEntry>,
    /// Indices into `entries` of the frames, in frame order (frame n is `frames[n - first]`).
    frames: Vec<usize>,
}

impl RecordingReader {
    /// Opens the recording in `dir`, reading its manifest and whole index.
    pub fn open(dir: &Path) -> Result<RecordingReader, RecordingError> {
        let mpath = dir.join(MANIFEST_FILE);
        if !mpath.exists() {
            return Err(RecordingError::NotARecording { path: dir.to_path_buf(), missing: MANIFEST_FILE });
        }
        let text = std::fs::read_to_string(&mpath).map_err(io(&mpath))?;
        let manifest: RecordingManifest = serde_json::from_str(&text).map_err(|e| RecordingError::Malformed {
            path: mpath.clone(),
            line: 0,
            message: e.to_string(),
        })?;
        if manifest.version != RECORDING_VERSION {
            return Err(RecordingError::Malformed {
                path: mpath,
                line: 0,
                message: format!("version {} (this build reads {RECORDING_VERSION})", manifest.version),
            });
        }
        let ipath = dir.join(INDEX_FILE);
        if !ipath.exists() {
            return Err(RecordingError::NotARecording { path: dir.to_path_buf(), missing: INDEX_FILE });
        }
        let file = File::open(&ipath).map_err(io(&ipath))?;
        let mut entries = Vec::new();
        let mut frames = Vec::new();
        for (i, line) in BufReader::new(file).lines().enumerate() {
            let line = line.map_err(io(&ipath))?;
            if line.trim().is_empty() {
                continue;
            }
            let entry: IndexEntry = serde_json::from_str(&line).map_err(|e| RecordingError::Malformed {
                path: ipath.clone(),
                line: i as u64 + 1,
                message: e.to_string(),
            })?;
            if let IndexEntry::Frame(f) = &entry {
                let expected = frames.len() as u64;
                if f.frame != expected {
                    return Err(RecordingError::Malformed {
                        path: ipath.clone(),
                        line: i as u64 + 1,
                        message: format!("frame {} where frame {expected} was expected", f.frame),
                    });
                }
                frames.push(entries.len());
            }
            entries.push(entry);
        }
        Ok(RecordingReader { dir: dir.to_path_buf(), manifest, entries, frames })
    }

    /// The folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The manifest.
    pub fn manifest(&self) -> &RecordingManifest {
        &self.manifest
    }

    /// Every index line, in recording order.
    pub fn entries(&self) -> &[IndexEntry] {
        &self.entries
    }

    /// Number of frames recorded.
    pub fn frame_count(&self) -> u64 {
        self.frames.len() as u64
    }

    /// The index entry of frame `frame`.
    pub fn entry(&self, frame: u64) -> Result<&FrameEntry, RecordingError> {
        match usize::try_from(frame).ok().and_then(|i| self.frames.get(i)).map(|&i| &self.entries[i]) {
            Some(IndexEntry::Frame(f)) => Ok(f),
            _ => Err(RecordingError::NoSuchFrame { frame, first: 0, last: self.frame_count().saturating_sub(1) }),
        }
    }

    /// Frame `frame`, BGR, exactly as the live pipeline recognized it.
    pub fn frame(&self, frame: u64) -> Result<Mat, RecordingError> {
        let e = self.entry(frame)?;
        read_jpeg(&self.dir, e)
    }

    /// Frames `range` in order (each with its index entry), read lazily.
    pub fn range(
        &self,
        range: std::ops::Range<u64>,
    ) -> impl Iterator<Item = Result<(FrameEntry, Mat), RecordingError>> + '_ {
        range.map(move |n| {
            let e = self.entry(n)?.clone();
            let m = read_jpeg(&self.dir, &e)?;
            Ok((e, m))
        })
    }

    /// The recording as a recorded [`FrameSource`] that gives the same frames, positions,
    /// timestamps and skipped-frame reports as the live source did.
    pub fn into_source(self) -> RecordingSource {
        let info = SourceInfo {
            camera_id: self.manifest.camera_id.as_str().into(),
            kind: crate::source::SourceKind::Recorded,
            input: self.dir.display().to_string(),
            nominal_fps: self.manifest.nominal_fps,
            width: 0,
            height: 0,
            frame_count: Some(self.frame_count()),
        };
        RecordingSource { reader: self, info, next: 0, open: None }
    }
}

fn read_jpeg(dir: &Path, e: &FrameEntry) -> Result<Mat, RecordingError> {
    let path = dir.join(&e.segment);
    let mut file = match File::open(&path) {
        Ok(f) => f,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Err(RecordingError::SegmentGone { frame: e.frame, segment: path })
        }
        Err(err) => return Err(RecordingError::Io { path, source: err }),
    };
    read_at(&mut file, &path, e)
}

fn read_at(file: &mut File, path: &Path, e: &FrameEntry) -> Result<Mat, RecordingError> {
    let mut buf = vec![0u8; e.length as usize];
    file.seek(SeekFrom::Start(e.offset)).map_err(io(path))?;
    file.read_exact(&mut buf).map_err(io(path))?;
    decode(&buf)
}

/// A recording read as a frame source ([`RecordingReader::into_source`]).
pub struct RecordingSource {
    reader: RecordingReader,
    info: SourceInfo,
    /// Next index line.
    next: usize,
    /// The segment open now.
    open: Option<(String, File)>,
}

impl RecordingSource {
    /// The recording.
    pub fn reader(&self) -> &RecordingReader {
        &self.reader
    }
}

impl FrameSource for RecordingSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        let Some(entry) = self.reader.entries.get(self.next) else { return Ok(Read::End) };
        self.next += 1;
        match entry {
            IndexEntry::Corrupt(c) => Ok(Read::Corrupt {
                position: c.corrupt_position,
                frames: c.frames,
                path: c.path.clone(),
                reason: c.reason.clone(),
            }),
            IndexEntry::Frame(f) => {
                let input = self.info.input.clone();
                let fail = |e: RecordingError| SourceError::BadInput { input: input.clone(), reason: e.to_string() };
                if self.open.as_ref().map(|(s, _)| s != &f.segment).unwrap_or(true) {
                    let path = self.reader.dir.join(&f.segment);
                    let file = File::open(&path)
                        .map_err(|_| fail(RecordingError::SegmentGone { frame: f.frame, segment: path.clone() }))?;
                    self.open = Some((f.segment.clone(), file));
                }
                let Some((_, file)) = self.open.as_mut() else { unreachable!("opened above") };
                let path = self.reader.dir.join(&f.segment);
                let image = read_at(file, &path, f).map_err(fail)?;
                Ok(Read::Frame(Capture { source_index: f.source_index, timestamp_ms: f.timestamp_ms, image }))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Scalar, CV_8UC3};

    fn manifest() -> RecordingManifest {
        RecordingManifest {
            version: RECORDING_VERSION,
            table_id: "T1".into(),
            camera_id: "T1-cam1".into(),
            ruleset: RulesetId::Fortune3cp2025,
            input: "test".into(),
            nominal_fps: Some(30.0),
            jpeg_quality: 0,
            models: None,
            journal: None,
            health_interval_ms: 0,
            deck_enrolled: false,
        }
    }

    fn image(n: u64) -> Mat {
        let colour = Scalar::new((n * 37 % 256) as f64, (n * 11 % 256) as f64, 90.0, 0.0);
        Mat::new_rows_cols_with_default(48, 64, CV_8UC3, colour).expect("mat")
    }

    fn same(a: &Mat, b: &Mat) -> bool {
        a.data_bytes().unwrap() == b.data_bytes().unwrap()
    }

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("tablecam-rec-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn frames_come_back_as_recorded_across_segments_with_exact_timestamps() {
        let dir = tmp("roundtrip");
        let options = RecordingOptions { segment_max_frames: 4, ..RecordingOptions::default() };
        let mut rec = Recorder::create(&dir, &manifest(), "{}", options).unwrap();
        let mut decoded = Vec::new();
        for n in 0..10u64 {
            decoded.push(rec.record(n * 2, n as f64 * 1000.0 / 29.97, &image(n)).unwrap());
            if n == 5 {
                let c = CorruptEntry { corrupt_position: 11, frames: 1, path: None, reason: "bad".into() };
                rec.record_corrupt(c).unwrap();
            }
        }
        rec.finish().unwrap();
        let r = RecordingReader::open(&dir).unwrap();
        assert_eq!(r.frame_count(), 10);
        assert_eq!(r.entry(9).unwrap().segment, "seg-000002.avi");
        assert_eq!(r.entry(9).unwrap().timestamp_ms, 9.0 * 1000.0 / 29.97);
        for n in [0u64, 3, 4, 9] {
            assert!(same(&r.frame(n).unwrap(), &decoded[n as usize]), "frame {n}");
        }
        assert!(matches!(r.frame(10), Err(RecordingError::NoSuchFrame { frame: 10, last: 9, .. })));
        let mut src = r.clone().into_source();
        let mut seen = Vec::new();
        loop {
            match src.read().unwrap() {
                Read::Frame(c) => seen.push((c.source_index, c.timestamp_ms)),
                Read::Corrupt { position, .. } => seen.push((position, -1.0)),
                Read::End => break,
            }
        }
        assert_eq!(seen.len(), 11);
        assert_eq!(seen[6], (11, -1.0));
        assert_eq!(seen[7], (12, 6.0 * 1000.0 / 29.97));
        // The segments are AVI files OpenCV itself plays back.
        let mut cap = opencv::videoio::VideoCapture::from_file(
            dir.join("seg-000000.avi").to_str().unwrap(),
            opencv::videoio::CAP_FFMPEG,
        )
        .unwrap();
        let mut m = Mat::default();
        let mut n = 0;
        while cap.read(&mut m).unwrap_or(false) {
            n += 1;
        }
        assert_eq!(n, 4, "frames OpenCV read from the first segment");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_recording_keeps_whether_its_deck_was_enrolled_and_older_ones_were_not() {
        let enrolled = RecordingManifest { deck_enrolled: true, ..manifest() };
        let text = serde_json::to_string(&enrolled).unwrap();
        assert_eq!(serde_json::from_str::<RecordingManifest>(&text).unwrap(), enrolled);
        // recording.json written before the field existed: replayed as an unseen deck
        let mut old: serde_json::Value = serde_json::from_str(&text).unwrap();
        old.as_object_mut().unwrap().remove("deck_enrolled");
        assert!(!serde_json::from_value::<RecordingManifest>(old).unwrap().deck_enrolled);
    }

    #[test]
    fn retention_deletes_oldest_segments_first_but_never_the_current_one() {
        let dir = tmp("retention");
        let options = RecordingOptions { segment_max_frames: 2, ..RecordingOptions::default() };
        let mut rec = Recorder::create(&dir, &manifest(), "{}", options).unwrap();
        for n in 0..8u64 {
            rec.record(n, n as f64, &image(n)).unwrap();
        }
        let size = std::fs::metadata(dir.join("seg-000000.avi")).unwrap().len();
        let policy = Retention { max_total_bytes: Some(size * 2 + size / 2), max_age: None };
        let deleted = apply_retention(&dir, &policy, SystemTime::now(), Some("seg-000003.avi")).unwrap();
        let names: Vec<String> = deleted.iter().map(|p| p.file_name().unwrap().to_string_lossy().into()).collect();
        assert_eq!(names, ["seg-000000.avi", "seg-000001.avi"]);
        let everything = Retention { max_total_bytes: Some(0), max_age: Some(Duration::ZERO) };
        apply_retention(&dir, &everything, SystemTime::now() + Duration::from_secs(1), Some("seg-000003.avi")).unwrap();
        assert!(dir.join("seg-000003.avi").exists());
        rec.record(8, 8.0, &image(8)).unwrap();
        rec.finish().unwrap();
        let r = RecordingReader::open(&dir).unwrap();
        assert!(matches!(r.frame(0), Err(RecordingError::SegmentGone { frame: 0, .. })));
        assert!(r.frame(7).is_ok() && r.frame(8).is_ok());
        assert!(matches!(
            Recorder::create(&dir, &manifest(), "{}", RecordingOptions::default()),
            Err(RecordingError::Exists { .. })
        ));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
