//! [`ImageFolderSource`]: the image files of a folder, in name order, as frames.
use std::path::{Path, PathBuf};
use std::sync::Arc;

use opencv::imgcodecs;
use opencv::prelude::*;

use super::{Capture, FrameSource, Read, SourceError, SourceInfo, SourceKind};

/// The file extensions read as images (case-insensitive).
pub const IMAGE_EXTENSIONS: [&str; 7] = ["png", "jpg", "jpeg", "bmp", "tif", "tiff", "webp"];

/// The image files of a folder, sorted by name, as a recorded source.
///
/// Image `i` (from 0) has `source_index = i` and `timestamp_ms = i · 1000 / fps`.
/// An image that cannot be decoded is reported as [`Read::Corrupt`] with its
/// path and skipped. Name frames with zero-padded numbers (`000123.png`) so
/// that name order is time order.
pub struct ImageFolderSource {
    info: SourceInfo,
    files: Vec<PathBuf>,
    next: usize,
    fps: f64,
}

impl ImageFolderSource {
    /// Lists `dir`'s image files; frames carry `camera_id` and are `1000 / fps` ms apart.
    pub fn open(dir: impl AsRef<Path>, camera_id: &str, fps: f64) -> Result<ImageFolderSource, SourceError> {
        let dir = dir.as_ref().to_path_buf();
        if !dir.exists() {
            return Err(SourceError::NotFound { path: dir });
        }
        let entries = std::fs::read_dir(&dir).map_err(|source| SourceError::Io { path: dir.clone(), source })?;
        let mut files = Vec::new();
        for entry in entries {
            let path = entry.map_err(|source| SourceError::Io { path: dir.clone(), source })?.path();
            let is_image = path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| IMAGE_EXTENSIONS.iter().any(|x| x.eq_ignore_ascii_case(e)));
            if is_image && path.is_file() {
                files.push(path);
            }
        }
        if files.is_empty() {
            return Err(SourceError::EmptyFolder { path: dir, extensions: IMAGE_EXTENSIONS.join(", ") });
        }
        files.sort();
        let fps = if fps.is_finite() && fps > 0.0 { fps } else { super::spec::DEFAULT_FOLDER_FPS };
        let info = SourceInfo {
            camera_id: Arc::from(camera_id),
            kind: SourceKind::Recorded,
            input: dir.display().to_string(),
            nominal_fps: Some(fps),
            width: 0,
            height: 0,
            frame_count: Some(files.len() as u64),
        };
        Ok(ImageFolderSource { info, files, next: 0, fps })
    }

    /// The image files, in frame order.
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }
}

impl FrameSource for ImageFolderSource {
    fn info(&self) -> &SourceInfo {
        &self.info
    }

    fn read(&mut self) -> Result<Read, SourceError> {
        let Some(path) = self.files.get(self.next) else {
            return Ok(Read::End);
        };
        let index = self.next as u64;
        self.next += 1;
        let corrupt = |reason: String| Read::Corrupt {
            position: index,
            frames: 1,
            path: Some(path.display().to_string()),
            reason,
        };
        let Some(name) = path.to_str() else {
            return Ok(corrupt("file name is not UTF-8".to_string()));
        };
        let image = match imgcodecs::imread(name, imgcodecs::IMREAD_COLOR) {
            Ok(m) if !m.empty() => m,
            Ok(_) => return Ok(corrupt("not a readable image (unknown format, truncated or corrupt)".to_string())),
            Err(e) => return Ok(corrupt(format!("OpenCV: {e}"))),
        };
        if self.info.width == 0 {
            self.info.width = image.cols().max(0) as u32;
            self.info.height = image.rows().max(0) as u32;
        }
        Ok(Read::Frame(Capture { source_index: index, timestamp_ms: index as f64 * 1000.0 / self.fps, image }))
    }
}
