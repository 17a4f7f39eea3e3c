//! [`CameraSource`]: USB/V4L2 cameras through nokhwa (cargo feature `camera`).
//!
//! nokhwa's `Camera` is not `Send`, so each camera lives on a small capture
//! thread of its own that owns the device; the source receives decoded frames
//! from it and can itself move to a feed thread.
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{bounded, Receiver, RecvTimeoutError};
use nokhwa::pixel_format::RgbFormat;
use nokhwa::utils::{CameraIndex, RequestedFormat, RequestedFormatType};
use nokhwa::Camera;
use opencv::core::{Mat, CV_8UC3};
use opencv::imgproc;
use opencv::prelude::*;

use super::error::cv;
use super::{Capture, FrameSource, Read, SourceError, SourceInfo, SourceKind};

/// A camera that delivers no frame for this long is taken as disconnected.
const CAMERA_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// What the capture thread sends.
enum Captured {
    /// An RGB frame, with the instant the driver handed it over.
    Frame { rgb: Vec<u8>, width: u32, height: u32, at: Instant },
    /// A frame that could not be decoded.
    Undecodable(String),
    /// The camera failed; the thread has ended.
    Failed(String),
}

/// The mode the camera was opened in.
struct Mode {
    width: u32,
    height: u32,
    fps: u32,
}

struct CaptureThread {
    rx: Receiver<Captured>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl CaptureThread {
    /// Starts the capture thread and waits until the camera is open (or not).
    fn start(index: u32) -> Result<(CaptureThread, Mode), SourceError> {
        let (open_tx, open_rx) = bounded::<Result<Mode, String>>(1);
        let (tx, rx) = bounded::<Captured>(2);
        let stop = Arc::new(AtomicBool::new(false));
        let thread_stop = stop.clone();
        let handle = std::thread::Builder::new()
            .name(format!("camera{index}"))
            .spawn(move || {
                let format = RequestedFormat::new::<RgbFormat>(RequestedFormatType::AbsoluteHighestFrameRate);
                let mut camera = match Camera::new(CameraIndex::Index(index), format) {
                    Ok(c) => c,
                    Err(e) => {
                        let _ = open_tx.send(Err(e.to_string()));
                        return;
                    }
                };
                if let Err(e) = camera.open_stream() {
                    let _ = open_tx.send(Err(format!("cannot start streaming: {e}")));
                    return;
                }
                let f = camera.camera_format();
                let _ = open_tx.send(Ok(Mode { width: f.width(), height: f.height(), fps: f.frame_rate() }));
                while !thread_stop.load(Ordering::Relaxed) {
                    let message = match camera.frame() {
                        Ok(buffer) => {
                            let at = Instant::now();
                            match buffer.decode_image::<RgbFormat>() {
                                Ok(img) => {
                                    let (width, height) = (img.width(), img.height());
                                    Captured::Frame { rgb: img.into_raw(), width, height, at }
                                }
                                Err(e) => Captured::Undecodable(e.to_string()),
                            }
                        }
                        Err(e) => {
                            let _ = tx.send(Captured::Failed(e.to_string()));
                            return;
                        }
                    };
                    if tx.send(message).is_err() {
                        return;
                    }
                }
                let _ = camera.stop_stream();
            })
            .map_err(|source| SourceError::Thread { camera_id: format!("camera{index}"), source })?;
        let mode = match open_rx.recv() {
            Ok(Ok(mode)) => mode,
            Ok(Err(reason)) => return Err(SourceError::Camera { index, reason }),
            Err(_) => return Err(SourceError::Camera { index, reason: "the capture thread ended".to_string() }),
        };
        Ok((CaptureThread { rx, stop, handle: Some(handle) }, mode))
    }
}

impl Drop for CaptureThread {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Drop the real receiver so that a thread waiting to send gives up, then
        // wait for it to release the device (at most one more frame).
        self.rx = crossbeam_channel::never();
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// A USB/V4L2 camera, opened at its highest frame rate, as a live source.
///
/// `source_index` counts frames captured since the camera was first opened
/// (across reconnects) and `timestamp_ms` is the instant the driver handed the
/// frame over, on the monotonic clock, from when the camera was first opened.
/// A frame that cannot be decoded (a broken MJPEG from the camera) is reported
/// as [`Read::Corrupt`]; a camera that fails or sends nothing for 5 s is a
/// disconnection, and [`FrameSource::reopen`] opens it again.
pub struct CameraSource {
    info: SourceInfo,
    index: u32,
    capture: Option<CaptureThread>,
    next_index: u64,
    epoch: Instant,
}

impl CameraSource {
    /// Opens camera `index` (`/dev/video<index>` on Linux); frames carry `camera_id`.
    pub fn open(index: u32, camera_id: &str) -> Result<CameraSource, SourceError> {
        let (capture, mode) = CaptureThread::start(index)?;
        let info = SourceInfo {
            camera_id: Arc::from(camera_id),
            kind: SourceKind::Live,
            input: format!("camera:{index}"),
            nominal_fps: Some(mode.fps as f64).filter(|f| *f > 0.0),
            width: mode.width,
            height: mode.height,
            frame_count: None,
        };
        Ok(CameraSource { info, index, capture: Some(capture), next_index: 0, epoch: Instant::now() })
    }
}

/// RGB bytes to a BGR `Mat`.
fn bgr_mat(rgb: &[u8], width: u32, height: u32, input: &str) -> Result<Mat, SourceError> {
    let flat = Mat::from_slice(rgb).map_err(cv(format!("{input}: frame buffer")))?;
    let rgb_mat = flat.reshape(3, height as i32).map_err(cv(format!("{input}: frame shape")))?;
    let mut bgr = Mat::new_rows_cols_with_default(height as i32, width as i32, CV_8UC3, 0.into())
        .map_err(cv(format!("{input}: frame allocation")))?;
    imgproc::cvt_color_def(&rgb_mat, &mut bgr, imgproc::COLOR_RGB2BGR).map_err(cv(format!("{input}: RGB→BGR")))?;
    Ok(bgr)
}

impl FrameSource for CameraSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        let input = self.info.input.clone();
        let disconnected = |reason: String| SourceError::Disconnected { input: input.clone(), reason };
        let Some(capture) = self.capture.as_ref() else {
            return Err(disconnected("camera closed".to_string()));
        };
        let message = match capture.rx.recv_timeout(CAMERA_READ_TIMEOUT) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => {
                return Err(disconnected(format!("no frame for {} s", CAMERA_READ_TIMEOUT.as_secs())))
            }
            Err(RecvTimeoutError::Disconnected) => return Err(disconnected("capture thread ended".to_string())),
        };
        let index = self.next_index;
        self.next_index += 1;
        match message {
            Captured::Frame { rgb, width, height, at } => {
                let timestamp_ms = at.saturating_duration_since(self.epoch).as_secs_f64() * 1000.0;
                let image = bgr_mat(&rgb, width, height, &input)?;
                Ok(Read::Frame(Capture { source_index: index, timestamp_ms, image }))
            }
            Captured::Undecodable(reason) => {
                Ok(Read::Corrupt { position: index, frames: 1, path: None, reason: format!("cannot decode: {reason}") })
            }
            Captured::Failed(reason) => Err(disconnected(reason)),
        }
    }

    fn reopen(&mut self) -> Result<(), SourceError> {
        // Release the device before opening it again.
        self.capture = None;
        let (capture, _) = CaptureThread::start(self.index)?;
        self.capture = Some(capture);
        Ok(())
    }
}
