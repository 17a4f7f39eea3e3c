//! The camera side of the renderer: the undistorted canvas the scene is drawn
//! on, the lens remap from it to the output image, and projection of points
//! above the table.
use opencv::core::{self, Mat, Rect, Scalar};
use opencv::imgproc;
use opencv::prelude::*;

use super::buf::{bounds, clip, Buf};
use super::error::{CvContext, RenderError};
use crate::calib::{Homography, Point, TableGeometry};

/// Most the undistorted canvas may exceed the image on each axis.
const MAX_CANVAS_GROWTH: f64 = 1.6;

/// Projects table points (and points above the table) to canvas pixels.
#[derive(Debug, Clone)]
pub(crate) struct Projector {
    /// Table millimetres → undistorted canvas pixels.
    pub h: Homography,
    /// The camera centre in table millimetres, when the calibration carries
    /// the pose it was simulated from; without it heights are ignored.
    pub camera_mm: Option<[f64; 3]>,
}

impl Projector {
    /// The table-plane point seen at the same pixel as `p` lifted by `z_mm`.
    pub fn lift(&self, p: Point, z_mm: f64) -> Point {
        match self.camera_mm {
            Some(c) if z_mm != 0.0 && c[2] > z_mm + 1.0 => {
                let k = c[2] / (c[2] - z_mm);
                Point::new(c[0] + (p.x - c[0]) * k, c[1] + (p.y - c[1]) * k)
            }
            _ => p,
        }
    }

    /// Canvas pixel of table point `p` at height `z_mm`.
    pub fn px(&self, p: Point, z_mm: f64) -> Option<Point> {
        self.h.apply(self.lift(p, z_mm))
    }
}

/// The canvas (undistorted image plane, grown to cover everything the lens
/// bends into view) and the remap from it to the output image.
pub(crate) struct Lens {
    /// Canvas size.
    pub w: i32,
    /// Canvas size.
    pub h: i32,
    /// Canvas pixel (0, 0) in undistorted image pixels.
    pub offset: (i32, i32),
    /// Fixed-point remap maps (CV_16SC2 and CV_16UC1 as bytes), when distorted.
    maps: Option<(Vec<u8>, Vec<u8>)>,
    /// Output size.
    out_w: i32,
    out_h: i32,
    /// Per canvas pixel: whether the output image sees it (for visible fractions).
    pub in_view: Option<Vec<u8>>,
    /// Per canvas tile (row-major, [`TILE`] pixels square): the output
    /// rectangle its pixels can reach, if any.
    tile_reach: Vec<Option<Rect>>,
}

/// Tile size of the dirty-region remap, pixels.
const TILE: i32 = 32;

impl Lens {
    pub(crate) fn new(g: &TableGeometry) -> Result<Lens, RenderError> {
        let (ow, oh) = (g.calibration.image_width as i32, g.calibration.image_height as i32);
        let Some(l) = g.calibration.lens else {
            return Ok(Lens {
                w: ow,
                h: oh,
                offset: (0, 0),
                maps: None,
                out_w: ow,
                out_h: oh,
                in_view: None,
                tile_reach: Vec::new(),
            });
        };
        // The canvas must hold the undistorted position of every output pixel.
        let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
        let border = (0..ow).flat_map(|x| [(x, 0), (x, oh - 1)]).chain((0..oh).flat_map(|y| [(0, y), (ow - 1, y)]));
        for (x, y) in border {
            let u = l.undistort(Point::new(x as f64, y as f64));
            x0 = x0.min(u.x);
            y0 = y0.min(u.y);
            x1 = x1.max(u.x);
            y1 = y1.max(u.y);
        }
        let grow_x = (MAX_CANVAS_GROWTH - 1.0) / 2.0 * ow as f64;
        let grow_y = (MAX_CANVAS_GROWTH - 1.0) / 2.0 * oh as f64;
        let x0 = (x0.floor() - 2.0).max(-grow_x).min(0.0) as i32;
        let y0 = (y0.floor() - 2.0).max(-grow_y).min(0.0) as i32;
        let x1 = (x1.ceil() + 3.0).min(ow as f64 + grow_x).max(ow as f64) as i32;
        let y1 = (y1.ceil() + 3.0).min(oh as f64 + grow_y).max(oh as f64) as i32;
        let (w, h) = (x1 - x0, y1 - y0);
        let mut mx = Vec::with_capacity((ow * oh) as usize);
        let mut my = Vec::with_capacity((ow * oh) as usize);
        for y in 0..oh {
            for x in 0..ow {
                let u = l.undistort(Point::new(x as f64, y as f64));
                mx.push((u.x - x0 as f64) as f32);
                my.push((u.y - y0 as f64) as f32);
            }
        }
        let mxm = Mat::new_rows_cols_with_data::<f32>(oh, ow, &mx).ctx("wrapping the lens map")?;
        let mym = Mat::new_rows_cols_with_data::<f32>(oh, ow, &my).ctx("wrapping the lens map")?;
        let (mut m1, mut m2) = (Mat::default(), Mat::default());
        imgproc::convert_maps(&mxm, &mym, &mut m1, &mut m2, core::CV_16SC2, false).ctx("converting the lens map")?;
        let m1b = m1.data_bytes().ctx("reading the lens map")?.to_vec();
        let m2b = m2.data_bytes().ctx("reading the lens map")?.to_vec();
        let mut in_view = vec![0u8; (w * h) as usize];
        for cy in 0..h {
            for cx in 0..w {
                let d = l.distort(Point::new((cx + x0) as f64, (cy + y0) as f64));
                if d.x >= -0.5 && d.y >= -0.5 && d.x < ow as f64 - 0.5 && d.y < oh as f64 - 0.5 {
                    in_view[(cy * w + cx) as usize] = 1;
                }
            }
        }
        // Where each canvas tile lands: distort samples along its border (the
        // lens is smooth and monotonic over the image), grown for interpolation.
        let (tw, th) = ((w + TILE - 1) / TILE, (h + TILE - 1) / TILE);
        let mut tile_reach = Vec::with_capacity((tw * th) as usize);
        for ty in 0..th {
            for tx in 0..tw {
                let (cx0, cy0) = ((tx * TILE) as f64 - 1.0, (ty * TILE) as f64 - 1.0);
                let (cx1, cy1) = (((tx + 1) * TILE).min(w) as f64, ((ty + 1) * TILE).min(h) as f64);
                let mut pts = Vec::with_capacity(32);
                for k in 0..=7 {
                    let f = k as f64 / 7.0;
                    let (x, y) = (cx0 + (cx1 - cx0) * f, cy0 + (cy1 - cy0) * f);
                    for (px, py) in [(x, cy0), (x, cy1), (cx0, y), (cx1, y)] {
                        pts.push(l.distort(Point::new(px + x0 as f64, py + y0 as f64)));
                    }
                }
                tile_reach.push(clip(bounds(&pts, 2.0), ow, oh));
            }
        }
        Ok(Lens {
            w,
            h,
            offset: (x0, y0),
            maps: Some((m1b, m2b)),
            out_w: ow,
            out_h: oh,
            in_view: Some(in_view),
            tile_reach,
        })
    }

    /// The projector for this canvas.
    pub(crate) fn projector(&self, g: &TableGeometry) -> Projector {
        let t = Homography([[1.0, 0.0, -self.offset.0 as f64], [0.0, 1.0, -self.offset.1 as f64], [0.0, 0.0, 1.0]]);
        let camera_mm = g.calibration.simulated_pose.map(|p| p.position_mm);
        Projector { h: t.compose(&g.calibration.table_to_image), camera_mm }
    }

    /// The output image of `canvas`, given the canvas `background` it was drawn
    /// over and that background's own output image: only the tiles where the
    /// canvas differs are remapped (each output pixel depends only on its map
    /// entry, so the result equals a full remap).
    pub(crate) fn apply_dirty(&self, canvas: Buf, background: &Buf, background_out: &Buf) -> Result<Buf, RenderError> {
        let Some((m1, m2)) = &self.maps else { return Ok(canvas) };
        let (tw, th) = ((self.w + TILE - 1) / TILE, (self.h + TILE - 1) / TILE);
        let (ow_t, oh_t) = ((self.out_w + TILE - 1) / TILE, (self.out_h + TILE - 1) / TILE);
        let mut dirty = vec![false; (ow_t * oh_t) as usize];
        let stride = (self.w * 3) as usize;
        for ty in 0..th {
            for tx in 0..tw {
                let Some(reach) = self.tile_reach[(ty * tw + tx) as usize] else { continue };
                let (x0, x1) = ((tx * TILE * 3) as usize, (((tx + 1) * TILE).min(self.w) * 3) as usize);
                let changed = (ty * TILE..((ty + 1) * TILE).min(self.h)).any(|y| {
                    let r = y as usize * stride;
                    canvas.data[r + x0..r + x1] != background.data[r + x0..r + x1]
                });
                if changed {
                    for oy in reach.y / TILE..=(reach.y + reach.height - 1) / TILE {
                        for ox in reach.x / TILE..=(reach.x + reach.width - 1) / TILE {
                            dirty[(oy * ow_t + ox) as usize] = true;
                        }
                    }
                }
            }
        }
        let mut out = background_out.clone();
        let m1 =
            Mat::new_rows_cols_with_bytes::<core::Vec2s>(self.out_h, self.out_w, m1).ctx("wrapping the lens map")?;
        let m2 = Mat::new_rows_cols_with_bytes::<u16>(self.out_h, self.out_w, m2).ctx("wrapping the lens map")?;
        let src = canvas.mat()?;
        let mut dst = out.mat_mut()?;
        for oy in 0..oh_t {
            let mut ox = 0;
            while ox < ow_t {
                if !dirty[(oy * ow_t + ox) as usize] {
                    ox += 1;
                    continue;
                }
                let start = ox;
                while ox < ow_t && dirty[(oy * ow_t + ox) as usize] {
                    ox += 1;
                }
                let r = Rect::new(start * TILE, oy * TILE, ox * TILE - start * TILE, TILE);
                let Some(r) = clip(r, self.out_w, self.out_h) else { continue };
                let m1r = Mat::roi(&m1, r).ctx("cropping the lens map")?;
                let m2r = Mat::roi(&m2, r).ctx("cropping the lens map")?;
                let mut d = Mat::roi_mut(&mut dst, r).ctx("cropping the frame")?;
                imgproc::remap(
                    &src,
                    &mut d,
                    &m1r,
                    &m2r,
                    imgproc::INTER_LINEAR,
                    core::BORDER_CONSTANT,
                    Scalar::all(0.0),
                )
                .ctx("applying the lens distortion")?;
            }
        }
        drop(dst);
        Ok(out)
    }

    /// The output image from the canvas (a copy when there is no lens).
    pub(crate) fn apply(&self, canvas: Buf, interpolation: i32) -> Result<Buf, RenderError> {
        let Some((m1, m2)) = &self.maps else { return Ok(canvas) };
        let m1 =
            Mat::new_rows_cols_with_bytes::<core::Vec2s>(self.out_h, self.out_w, m1).ctx("wrapping the lens map")?;
        let m2 = Mat::new_rows_cols_with_bytes::<u16>(self.out_h, self.out_w, m2).ctx("wrapping the lens map")?;
        let mut out = Buf::zeros(self.out_w, self.out_h, canvas.ch);
        {
            let src = canvas.mat()?;
            let mut dst = out.mat_mut()?;
            imgproc::remap(&src, &mut dst, &m1, &m2, interpolation, core::BORDER_CONSTANT, Scalar::all(0.0))
                .ctx("applying the lens distortion")?;
        }
        Ok(out)
    }
}
