//! Naming a source on the command line: `SourceSpec::parse` and `open`.
use std::path::PathBuf;
use std::str::FromStr;

use super::sim::{Pace, SimulatedSource, SimulatedSpec};
use super::video::is_stream_url;
use super::{FrameSource, ImageFolderSource, SourceError, VideoFileSource};
use crate::rules::RulesetId;

/// Frames per second given to image folders when none is said.
pub const DEFAULT_FOLDER_FPS: f64 = 30.0;

/// A source named by a string: a video file, a folder of images, a stream
/// URL, `camera:N` or `sim:RULESET`.
#[derive(Debug, Clone, PartialEq)]
pub enum SourceSpec {
    /// A video file.
    File(PathBuf),
    /// A folder of image files.
    Folder(PathBuf),
    /// A network stream (`rtsp://`, `http://`, …).
    Url(String),
    /// A USB/V4L2 camera by index.
    Camera(u32),
    /// The table simulator over a ruleset.
    Sim(RulesetId),
}

/// Settings used when opening a [`SourceSpec`].
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// The camera id frames carry (default: derived from the input, see
    /// [`SourceSpec::default_camera_id`]).
    pub camera_id: Option<String>,
    /// Frames per second of image folders (their timestamps).
    pub folder_fps: f64,
    /// Simulator image size, pixels.
    pub sim_size: (u32, u32),
    /// Simulator seed.
    pub sim_seed: u64,
    /// Simulator pace.
    pub sim_pace: Pace,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            camera_id: None,
            folder_fps: DEFAULT_FOLDER_FPS,
            sim_size: (1280, 720),
            sim_seed: 1,
            sim_pace: Pace::RealTime,
        }
    }
}

impl SourceSpec {
    /// Parses an input: `camera:N`, `sim:RULESET`, a URL with a stream
    /// scheme, else a path (a folder if it is a directory).
    pub fn parse(input: &str) -> Result<SourceSpec, SourceError> {
        let bad = |reason: String| SourceError::BadInput { input: input.to_string(), reason };
        if let Some(n) = input.strip_prefix("camera:") {
            let index =
                n.parse::<u32>().map_err(|_| bad("camera:N needs a camera index, e.g. camera:0".to_string()))?;
            return Ok(SourceSpec::Camera(index));
        }
        if let Some(rs) = input.strip_prefix("sim:") {
            let id = RulesetId::from_str(rs).map_err(|_| {
                let known: Vec<&str> = RulesetId::ALL.iter().map(|r| r.as_str()).collect();
                bad(format!("unknown ruleset; sim:RULESET takes one of {}", known.join(", ")))
            })?;
            return Ok(SourceSpec::Sim(id));
        }
        if is_stream_url(input) {
            return Ok(SourceSpec::Url(input.to_string()));
        }
        if input.contains("://") {
            return Err(bad(
                "unsupported URL scheme (rtsp, rtsps, rtmp, http, https, udp, tcp are passed to FFmpeg)".to_string()
            ));
        }
        let path = PathBuf::from(input);
        Ok(if path.is_dir() { SourceSpec::Folder(path) } else { SourceSpec::File(path) })
    }

    /// The camera id used when none is given: the file stem, the folder name,
    /// `camera0`, `sim-RULESET`, or the URL's host and path.
    pub fn default_camera_id(&self) -> String {
        let name = |p: &PathBuf, stem: bool| {
            let part = if stem { p.file_stem() } else { p.file_name() };
            part.map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
        };
        match self {
            SourceSpec::File(p) => name(p, true),
            SourceSpec::Folder(p) => name(p, false),
            SourceSpec::Url(u) => {
                let rest = u.split_once("://").map_or(u.as_str(), |(_, r)| r);
                // Drop credentials.
                let rest = rest.rsplit_once('@').map_or(rest, |(_, r)| r);
                rest.trim_end_matches('/').to_string()
            }
            SourceSpec::Camera(i) => format!("camera{i}"),
            SourceSpec::Sim(rs) => format!("sim-{rs}"),
        }
    }

    /// Opens the source.
    pub fn open(&self, options: &OpenOptions) -> Result<Box<dyn FrameSource>, SourceError> {
        let id = options.camera_id.clone().unwrap_or_else(|| self.default_camera_id());
        Ok(match self {
            SourceSpec::File(p) => Box::new(VideoFileSource::open_file(p, &id)?),
            SourceSpec::Folder(p) => Box::new(ImageFolderSource::open(p, &id, options.folder_fps)?),
            SourceSpec::Url(u) => Box::new(VideoFileSource::open_url(u, &id)?),
            SourceSpec::Camera(index) => open_camera(*index, &id)?,
            SourceSpec::Sim(rs) => {
                let mut spec = SimulatedSpec::new(*rs, options.sim_seed);
                (spec.width, spec.height) = options.sim_size;
                spec.pace = options.sim_pace;
                spec.camera_id = id;
                Box::new(SimulatedSource::new(spec)?)
            }
        })
    }
}

#[cfg(feature = "camera")]
fn open_camera(index: u32, id: &str) -> Result<Box<dyn FrameSource>, SourceError> {
    Ok(Box::new(super::CameraSource::open(index, id)?))
}

#[cfg(not(feature = "camera"))]
fn open_camera(index: u32, _id: &str) -> Result<Box<dyn FrameSource>, SourceError> {
    Err(SourceError::CameraFeatureOff { index })
}
