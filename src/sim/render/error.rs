//! Errors of the renderer.

/// Why a renderer could not be built or a frame could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// An OpenCV call failed.
    #[error("opencv failed while {context}: {source}")]
    OpenCv {
        /// What the renderer was doing.
        context: &'static str,
        /// OpenCV's error.
        #[source]
        source: opencv::Error,
    },
    /// The calibration does not give a usable camera (e.g. the table is behind it).
    #[error("the calibration cannot be rendered: {0}")]
    Camera(String),
    /// A scene or conditions value out of range.
    #[error("invalid render input: {0}")]
    Input(String),
}

/// Adds context to OpenCV results.
pub(crate) trait CvContext<T> {
    /// Wraps an OpenCV error with what the renderer was doing.
    fn ctx(self, context: &'static str) -> Result<T, RenderError>;
}

impl<T> CvContext<T> for opencv::Result<T> {
    fn ctx(self, context: &'static str) -> Result<T, RenderError> {
        self.map_err(|source| RenderError::OpenCv { context, source })
    }
}
