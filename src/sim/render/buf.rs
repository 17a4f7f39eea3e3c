//! Plain pixel buffers owned by Rust (so that per-pixel passes are simple slice
//! loops) and wrapped as OpenCV `Mat` headers, without copying, for OpenCV calls.
use opencv::boxed_ref::{BoxedRef, BoxedRefMut};
use opencv::core::{Mat, Rect, Vec3b, Vec4b};
use opencv::prelude::*;

use super::error::{CvContext, RenderError};

/// An 8-bit image with 1, 3 or 4 interleaved channels, row-major, no padding.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Buf {
    /// Width in pixels.
    pub w: i32,
    /// Height in pixels.
    pub h: i32,
    /// Channels (1, 3 or 4).
    pub ch: i32,
    /// `w * h * ch` bytes.
    pub data: Vec<u8>,
}

impl Buf {
    /// A buffer with every pixel set to `value` (`value.len() == ch`).
    pub fn filled(w: i32, h: i32, value: &[u8]) -> Buf {
        let ch = value.len() as i32;
        let n = (w.max(0) * h.max(0)) as usize;
        let mut data = Vec::with_capacity(n * value.len());
        for _ in 0..n {
            data.extend_from_slice(value);
        }
        Buf { w, h, ch, data }
    }

    /// A zeroed buffer.
    pub fn zeros(w: i32, h: i32, ch: i32) -> Buf {
        Buf { w, h, ch, data: vec![0; (w.max(0) * h.max(0) * ch) as usize] }
    }

    /// A read-only `Mat` header over the pixels.
    pub fn mat(&self) -> Result<BoxedRef<'_, Mat>, RenderError> {
        match self.ch {
            1 => Mat::new_rows_cols_with_bytes::<u8>(self.h, self.w, &self.data),
            3 => Mat::new_rows_cols_with_bytes::<Vec3b>(self.h, self.w, &self.data),
            _ => Mat::new_rows_cols_with_bytes::<Vec4b>(self.h, self.w, &self.data),
        }
        .ctx("wrapping a pixel buffer")
    }

    /// A writable `Mat` header over the pixels.
    pub fn mat_mut(&mut self) -> Result<BoxedRefMut<'_, Mat>, RenderError> {
        match self.ch {
            1 => Mat::new_rows_cols_with_bytes_mut::<u8>(self.h, self.w, &mut self.data),
            3 => Mat::new_rows_cols_with_bytes_mut::<Vec3b>(self.h, self.w, &mut self.data),
            _ => Mat::new_rows_cols_with_bytes_mut::<Vec4b>(self.h, self.w, &mut self.data),
        }
        .ctx("wrapping a pixel buffer")
    }

    /// Copies an 8-bit OpenCV matrix.
    pub fn from_mat(m: &Mat) -> Result<Buf, RenderError> {
        let m = if m.is_continuous() { m.clone() } else { m.try_clone().ctx("copying a matrix")? };
        let data = m.data_bytes().ctx("reading a matrix")?.to_vec();
        Ok(Buf { w: m.cols(), h: m.rows(), ch: m.channels(), data })
    }
}

/// `r` clipped to `0..w × 0..h`; `None` when nothing is left.
pub(crate) fn clip(r: Rect, w: i32, h: i32) -> Option<Rect> {
    let (x0, y0) = (r.x.max(0), r.y.max(0));
    let (x1, y1) = ((r.x + r.width).min(w), (r.y + r.height).min(h));
    (x1 > x0 && y1 > y0).then(|| Rect::new(x0, y0, x1 - x0, y1 - y0))
}

/// The integer rectangle covering points, grown by `margin` pixels.
pub(crate) fn bounds(pts: &[crate::calib::Point], margin: f64) -> Rect {
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    for p in pts {
        x0 = x0.min(p.x);
        y0 = y0.min(p.y);
        x1 = x1.max(p.x);
        y1 = y1.max(p.y);
    }
    let (x0, y0) = ((x0 - margin).floor().max(-1e7) as i32, (y0 - margin).floor().max(-1e7) as i32);
    let (x1, y1) = ((x1 + margin).ceil().min(1e7) as i32, (y1 + margin).ceil().min(1e7) as i32);
    Rect::new(x0, y0, (x1 - x0 + 1).max(0), (y1 - y0 + 1).max(0))
}

/// Blends a colour into `dst` (3 channels) through a one-channel coverage mask
/// placed with its top-left corner at (`x0`, `y0`) of `dst`.
pub(crate) fn blend_mask(dst: &mut Buf, x0: i32, y0: i32, mask: &Buf, rgb: [f32; 3], opacity: f32) {
    for my in 0..mask.h {
        let y = y0 + my;
        if y < 0 || y >= dst.h {
            continue;
        }
        for mx in 0..mask.w {
            let x = x0 + mx;
            if x < 0 || x >= dst.w {
                continue;
            }
            let a = mask.data[(my * mask.w + mx) as usize];
            if a == 0 {
                continue;
            }
            let a = a as f32 / 255.0 * opacity;
            let i = ((y * dst.w + x) * 3) as usize;
            for c in 0..3 {
                let v = dst.data[i + c] as f32;
                dst.data[i + c] = (v + (rgb[c] - v) * a).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

/// Multiplies `dst` by `1 − strength·mask` (a soft shadow).
pub(crate) fn darken_mask(dst: &mut Buf, x0: i32, y0: i32, mask: &Buf, strength: f32) {
    for my in 0..mask.h {
        let y = y0 + my;
        if y < 0 || y >= dst.h {
            continue;
        }
        for mx in 0..mask.w {
            let x = x0 + mx;
            if x < 0 || x >= dst.w {
                continue;
            }
            let a = mask.data[(my * mask.w + mx) as usize];
            if a == 0 {
                continue;
            }
            let k = 1.0 - strength * a as f32 / 255.0;
            let i = ((y * dst.w + x) * 3) as usize;
            for c in 0..3 {
                dst.data[i + c] = (dst.data[i + c] as f32 * k).round() as u8;
            }
        }
    }
}

/// Composites a premultiplied RGBA patch over `dst` (RGB) at (`x0`, `y0`).
pub(crate) fn over_premultiplied(dst: &mut Buf, x0: i32, y0: i32, src: &Buf) {
    for sy in 0..src.h {
        let y = y0 + sy;
        if y < 0 || y >= dst.h {
            continue;
        }
        for sx in 0..src.w {
            let x = x0 + sx;
            if x < 0 || x >= dst.w {
                continue;
            }
            let s = ((sy * src.w + sx) * 4) as usize;
            let a = src.data[s + 3] as u32;
            if a == 0 {
                continue;
            }
            let d = ((y * dst.w + x) * 3) as usize;
            for c in 0..3 {
                let v = src.data[s + c] as u32 + (dst.data[d + c] as u32 * (255 - a) + 127) / 255;
                dst.data[d + c] = v.min(255) as u8;
            }
        }
    }
}

/// `dst = dst + (layer − dst) · mask` for same-sized 3-channel buffers.
pub(crate) fn blend_layer(dst: &mut Buf, layer: &Buf, mask: &Buf) {
    for ((d, l), &m) in dst.data.chunks_exact_mut(3).zip(layer.data.chunks_exact(3)).zip(&mask.data) {
        let a = m as u32;
        for c in 0..3 {
            d[c] = ((d[c] as u32 * (255 - a) + l[c] as u32 * a + 127) / 255) as u8;
        }
    }
}
