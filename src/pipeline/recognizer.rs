//! The recognizer stage's contract: a frame in, the cards in it out. The pool gives every
//! worker thread its own instance (ONNX sessions are not shared between threads), so tests and
//! evaluations can plug a double in place of the models.
use std::path::PathBuf;

use opencv::core::Mat;

use super::PipelineError;
use crate::calib::TableGeometry;
use crate::onnx::SessionOptions;
use crate::recognize::{resolve_model, DetectedCard, Recognizer, RecognizerOptions};

/// Localizes and classifies the cards of one frame.
///
/// Protocol: called on one worker thread, frame after frame (not in frame order: the pool
/// re-orders results). An `Err` is counted as the recognize stage's error for that frame and
/// the frame is skipped downstream; the worker goes on with the next frame.
pub trait CardRecognizer: Send {
    /// The cards in a BGR frame; `geometry` is the table's calibration (frame size checked).
    fn recognize(&mut self, image: &Mat, geometry: &TableGeometry) -> Result<Vec<DetectedCard>, PipelineError>;

    /// The empty table of `geometry`'s camera, given once before the first frame (recognizers
    /// that do not use one ignore it).
    fn set_table_reference(&mut self, geometry: &TableGeometry, empty_table: &Mat) -> Result<(), PipelineError> {
        let _ = (geometry, empty_table);
        Ok(())
    }
}

impl CardRecognizer for Recognizer {
    fn recognize(&mut self, image: &Mat, geometry: &TableGeometry) -> Result<Vec<DetectedCard>, PipelineError> {
        Ok(Recognizer::recognize(self, image, Some(geometry))?)
    }

    fn set_table_reference(&mut self, geometry: &TableGeometry, empty_table: &Mat) -> Result<(), PipelineError> {
        Ok(Recognizer::set_table_reference(self, geometry, empty_table)?)
    }
}

/// Makes one recognizer per worker (`worker` counts from 0).
pub trait RecognizerFactory: Send + Sync {
    /// A new recognizer for worker `worker`.
    fn make(&self, worker: usize) -> Result<Box<dyn CardRecognizer>, PipelineError>;
}

impl<F> RecognizerFactory for F
where
    F: Fn(usize) -> Result<Box<dyn CardRecognizer>, PipelineError> + Send + Sync,
{
    fn make(&self, worker: usize) -> Result<Box<dyn CardRecognizer>, PipelineError> {
        self(worker)
    }
}

/// The ONNX models ([`Recognizer`]): each worker loads its own sessions.
#[derive(Debug, Clone)]
pub struct OnnxRecognizers {
    /// The locator model (resolved against the project directories, see [`resolve_model`]).
    pub locator: PathBuf,
    /// The classifier model.
    pub classifier: PathBuf,
    /// The whole-card classifier, if any ([`RecognizerOptions::face_classifier`]).
    pub face_classifier: Option<PathBuf>,
    /// The glyph classifier, if any ([`RecognizerOptions::glyph_classifier`]).
    pub glyph_classifier: Option<PathBuf>,
    /// ONNX Runtime intra-op threads per session.
    pub intra_threads: usize,
}

impl RecognizerFactory for OnnxRecognizers {
    fn make(&self, _worker: usize) -> Result<Box<dyn CardRecognizer>, PipelineError> {
        let options = RecognizerOptions {
            session: SessionOptions { intra_threads: self.intra_threads.max(1) },
            face_classifier: self.face_classifier.as_deref().map(resolve_model),
            glyph_classifier: self.glyph_classifier.as_deref().map(resolve_model),
            ..RecognizerOptions::default()
        };
        let r = Recognizer::with_options(resolve_model(&self.locator), resolve_model(&self.classifier), options)?;
        Ok(Box::new(r))
    }
}
