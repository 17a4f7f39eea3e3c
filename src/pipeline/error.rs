//! Errors of the pipeline and of `tablecam run`; every message names what failed and, where
//! there is one, the fix.
use std::path::PathBuf;

/// Why the pipeline could not start, or what a stage reported.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// The configuration file is invalid: names the file, the field and the fix.
    #[error("{}: {field}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// The field (a JSON path such as `tables[1].calibration`).
        field: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A file or folder could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A frame source could not be opened or started.
    #[error("table {table_id}: {source}")]
    Source {
        /// The table.
        table_id: String,
        /// The source's error.
        source: crate::source::SourceError,
    },
    /// A calibration could not be loaded.
    #[error(transparent)]
    Calibration(#[from] crate::calib::CalibError),
    /// A recognizer could not be built or failed on a frame.
    #[error(transparent)]
    Recognize(#[from] crate::recognize::RecognizeError),
    /// Bet presence could not be set up or failed on a frame.
    #[error(transparent)]
    Presence(#[from] crate::presence::PresenceError),
    /// A stage failed on one item (counted in its `errors`; the pipeline goes on).
    #[error("{stage}: {message}")]
    Stage {
        /// The stage.
        stage: String,
        /// What went wrong.
        message: String,
    },
    /// The sink could not journal or publish an event.
    #[error("sink: {0}")]
    Sink(String),
    /// A thread could not be started, or one panicked.
    #[error("thread {name}: {message}")]
    Thread {
        /// The thread.
        name: String,
        /// What happened.
        message: String,
    },
    /// The simulator failed (eval-scenarios).
    #[error(transparent)]
    Sim(#[from] crate::sim::session::SimError),
    /// The pipeline was asked for something it cannot do (no tables, zero workers…).
    #[error("{0}")]
    Invalid(String),
}

impl PipelineError {
    /// A stage error from any message.
    pub fn stage(stage: &str, message: impl std::fmt::Display) -> PipelineError {
        PipelineError::Stage { stage: stage.to_string(), message: message.to_string() }
    }
}
