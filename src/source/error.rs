//! Errors of the frame sources; every message names the input and, where
//! there is one, the fix.
use std::path::PathBuf;

/// Why a source could not be opened or read.
#[derive(Debug, thiserror::Error)]
pub enum SourceError {
    /// The file or folder does not exist.
    #[error("cannot open {path}: no such file or folder")]
    NotFound {
        /// The path given.
        path: PathBuf,
    },
    /// OpenCV could not open a video file.
    #[error(
        "cannot open video file {path}: not a video OpenCV can decode here (video backends: {backends}); \
         check the file plays (e.g. with ffprobe) and is not truncated"
    )]
    NotAVideo {
        /// The file.
        path: PathBuf,
        /// The video backends OpenCV has.
        backends: String,
    },
    /// OpenCV could not open a network stream.
    #[error(
        "cannot open stream {url}: OpenCV (FFmpeg) could not connect or read it; check the URL, credentials \
         and that the camera is reachable from this machine"
    )]
    StreamUnavailable {
        /// The URL.
        url: String,
    },
    /// A folder holds no image files.
    #[error("{path}: no image files (looked for {extensions})")]
    EmptyFolder {
        /// The folder.
        path: PathBuf,
        /// The extensions looked for.
        extensions: String,
    },
    /// A folder could not be listed.
    #[error("cannot list {path}: {source}")]
    Io {
        /// The folder.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A camera could not be opened.
    #[error("cannot open camera {index}: {reason}; list cameras with `tablecam doctor`, check /dev/video* exists and that this user is in the `video` group")]
    Camera {
        /// The camera index.
        index: u32,
        /// What the camera backend said.
        reason: String,
    },
    /// Cameras need the `camera` cargo feature.
    #[error("camera:{index}: this tablecam was built without cameras; rebuild with `cargo build --release --features camera`")]
    CameraFeatureOff {
        /// The camera index asked for.
        index: u32,
    },
    /// A live source stopped delivering frames.
    #[error("{input}: disconnected: {reason}")]
    Disconnected {
        /// The source.
        input: String,
        /// Why.
        reason: String,
    },
    /// The source cannot be reopened after a failure.
    #[error("{input}: cannot be reopened")]
    NotReopenable {
        /// The source.
        input: String,
    },
    /// An input string names no known source.
    #[error("{input:?}: {reason}")]
    BadInput {
        /// The input.
        input: String,
        /// What is wrong and what is accepted.
        reason: String,
    },
    /// The feed's thread could not be started.
    #[error("cannot start the thread of source {camera_id}: {source}")]
    Thread {
        /// The camera.
        camera_id: String,
        /// Why.
        source: std::io::Error,
    },
    /// The simulator failed.
    #[error("sim: {0}")]
    Sim(#[from] crate::sim::session::SimError),
    /// OpenCV failed.
    #[error("{context}: {source}")]
    OpenCv {
        /// What was being done, naming the input.
        context: String,
        /// OpenCV's error.
        source: opencv::Error,
    },
}

/// Maps an OpenCV error to [`SourceError::OpenCv`] with `context`.
pub(crate) fn cv(context: impl Into<String>) -> impl FnOnce(opencv::Error) -> SourceError {
    let context = context.into();
    move |source| SourceError::OpenCv { context, source }
}
