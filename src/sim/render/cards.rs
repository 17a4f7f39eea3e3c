//! Cards: each face warped straight from its own image into the canvas (one
//! homography face pixels → table mm → canvas pixels), over a soft shadow,
//! blurred along its motion when it moves fast.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use opencv::core::{self, Mat, Rect, Scalar, Size};
use opencv::imgproc;

use super::buf::{bounds, clip, over_premultiplied, Buf};
use super::camera::Projector;
use super::draw::{quad_f32, soft_shadow};
use super::error::{CvContext, RenderError};
use super::labels::Labels;
use super::occluders::proj_scale;
use super::SceneCard;
use crate::calib::Point;

/// Motion blur below this length (canvas pixels) is not drawn.
const MIN_BLUR_PX: f64 = 1.5;
/// Pick the pyramid level whose width is at least this many times the card's drawn width.
const LEVEL_OVERSAMPLE: f64 = 1.2;
/// Most face images the cache keeps before it starts over.
const CACHE_CAPACITY: usize = 512;

/// An image held alive, and its pyramid.
type CacheEntry = (Arc<image::RgbaImage>, Arc<Vec<Buf>>);

/// Premultiplied RGBA pyramids of the face images seen so far, keyed by the
/// image's address; the cache holds an `Arc` of each, so an address cannot be
/// reused by another image while its entry lives.
#[derive(Default)]
pub(crate) struct FaceCache {
    map: Mutex<HashMap<usize, CacheEntry>>,
}

impl FaceCache {
    fn pyramid(&self, img: &Arc<image::RgbaImage>) -> Result<Arc<Vec<Buf>>, RenderError> {
        let key = Arc::as_ptr(img) as usize;
        if let Ok(map) = self.map.lock() {
            if let Some((held, pyr)) = map.get(&key) {
                if Arc::ptr_eq(held, img) {
                    return Ok(pyr.clone());
                }
            }
        }
        let pyr = Arc::new(build_pyramid(img)?);
        if let Ok(mut map) = self.map.lock() {
            if map.len() >= CACHE_CAPACITY {
                map.clear();
            }
            map.insert(key, (img.clone(), pyr.clone()));
        }
        Ok(pyr)
    }
}

fn build_pyramid(img: &image::RgbaImage) -> Result<Vec<Buf>, RenderError> {
    let (w, h) = (img.width() as i32, img.height() as i32);
    if w < 2 || h < 2 {
        return Err(RenderError::Input(format!("card image {w}×{h} is too small")));
    }
    let mut data = img.as_raw().clone();
    for px in data.chunks_exact_mut(4) {
        let a = px[3] as u32;
        for c in &mut px[..3] {
            *c = ((*c as u32 * a + 127) / 255) as u8;
        }
    }
    let mut levels = vec![Buf { w, h, ch: 4, data }];
    while levels.len() < 10 {
        let last = levels.last().expect("one level");
        if last.w.min(last.h) < 16 {
            break;
        }
        let mut down = Mat::default();
        imgproc::pyr_down(&last.mat()?, &mut down, Size::default(), core::BORDER_REFLECT_101)
            .ctx("shrinking a card face")?;
        levels.push(Buf::from_mat(&down)?);
    }
    Ok(levels)
}

/// Where a card went on the canvas.
pub(crate) struct Drawn {
    /// Its corners on the canvas (TL, TR, BR, BL of the face).
    pub quad: [Point; 4],
}

/// Draws `card` (label `id` in the id buffer).
pub(crate) fn draw_card(
    canvas: &mut Buf,
    labels: &mut Labels,
    proj: &Projector,
    cache: &FaceCache,
    card: &SceneCard,
    id: u16,
    shutter_fraction: f64,
) -> Result<Option<Drawn>, RenderError> {
    let corners = card.corners_mm();
    let quad: Option<Vec<Point>> = corners.iter().map(|&p| proj.px(p, card.height_mm)).collect();
    let Some(quad) = quad else { return Ok(None) };
    let quad = [quad[0], quad[1], quad[2], quad[3]];

    // Motion blur length and direction on the canvas.
    let blur = {
        let v = card.velocity_mm_per_frame;
        let d = Point::new(card.center_mm.x + v[0] * shutter_fraction, card.center_mm.y + v[1] * shutter_fraction);
        match (proj.px(card.center_mm, card.height_mm), proj.px(d, card.height_mm)) {
            (Some(a), Some(b)) => Point::new(b.x - a.x, b.y - a.y),
            _ => Point::new(0.0, 0.0),
        }
    };
    let blur_len = blur.x.hypot(blur.y);
    let margin = 2.0 + if blur_len >= MIN_BLUR_PX { blur_len / 2.0 + 1.0 } else { 0.0 };
    let full = bounds(&quad, margin);
    let Some(roi) = clip(full, canvas.w, canvas.h) else {
        labels.fill(&quad, id)?;
        return Ok(Some(Drawn { quad }));
    };
    if full.width > 8000 || full.height > 8000 {
        return Err(RenderError::Input(format!("card {} would cover {}×{} pixels", card.id, full.width, full.height)));
    }

    // Shadow on the felt under the card's footprint (offset away from the light).
    let mm = proj_scale(proj, card.center_mm);
    let h = card.height_mm.max(0.0);
    let (ox, oy) = (1.0 + 0.25 * h, 1.6 + 0.4 * h);
    let foot: Option<Vec<Point>> = corners.iter().map(|p| proj.px(Point::new(p.x + ox, p.y + oy), 0.0)).collect();
    if let Some(foot) = foot {
        let sigma = (1.0 + 0.08 * h) * mm;
        soft_shadow(canvas, &[foot], sigma, if h > 0.5 { 0.45 } else { 0.38 })?;
    }

    // Pick a pyramid level a little larger than the drawn card, then warp.
    let pyr = cache.pyramid(&card.image)?;
    let drawn_w = quad[0].dist(quad[1]).max(quad[3].dist(quad[2])).max(1.0);
    let level = pyr.iter().rposition(|l| l.w as f64 >= LEVEL_OVERSAMPLE * drawn_w).unwrap_or(0);
    let face = &pyr[level];
    let (fw, fh) = (face.w as f64, face.h as f64);
    let src = [
        Point::new(-0.5, -0.5),
        Point::new(fw - 0.5, -0.5),
        Point::new(fw - 0.5, fh - 0.5),
        Point::new(-0.5, fh - 0.5),
    ];
    let m = imgproc::get_perspective_transform(
        &quad_f32(&src, (0.0, 0.0)),
        &quad_f32(&quad, (roi.x as f64, roi.y as f64)),
        core::DECOMP_LU,
    )
    .ctx("computing a card's homography")?;
    let mut patch = Buf::zeros(roi.width, roi.height, 4);
    {
        let mut dst = patch.mat_mut()?;
        imgproc::warp_perspective(
            &face.mat()?,
            &mut dst,
            &m,
            Size::new(roi.width, roi.height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            Scalar::all(0.0),
        )
        .ctx("warping a card")?;
    }
    if blur_len >= MIN_BLUR_PX {
        patch = motion_blur(&patch, blur)?;
    }
    over_premultiplied(canvas, roi.x, roi.y, &patch);
    labels.fill(&quad, id)?;
    Ok(Some(Drawn { quad }))
}

/// Averages the patch along the segment `[−d/2, d/2]` (a linear motion kernel).
fn motion_blur(patch: &Buf, d: Point) -> Result<Buf, RenderError> {
    let len = d.x.hypot(d.y);
    let k = ((len.ceil() as i32) | 1).max(3);
    let mut kernel = vec![0f32; (k * k) as usize];
    let c = (k / 2) as f64;
    let steps = (len * 4.0).ceil().max(4.0) as usize;
    for i in 0..=steps {
        let t = i as f64 / steps as f64 - 0.5;
        let (x, y) = (c + d.x * t, c + d.y * t);
        // Bilinear splat, so short and diagonal kernels stay centred.
        let (x0, y0) = (x.floor(), y.floor());
        for (dx, dy) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
            let (xi, yi) = (x0 + dx, y0 + dy);
            let wgt = (1.0 - (x - xi).abs()) * (1.0 - (y - yi).abs());
            if xi >= 0.0 && yi >= 0.0 && xi < k as f64 && yi < k as f64 && wgt > 0.0 {
                kernel[(yi as i32 * k + xi as i32) as usize] += wgt as f32;
            }
        }
    }
    let sum: f32 = kernel.iter().sum();
    kernel.iter_mut().for_each(|v| *v /= sum);
    let km = Mat::new_rows_cols_with_data::<f32>(k, k, &kernel).ctx("building a motion kernel")?;
    let mut out = Buf::zeros(patch.w, patch.h, 4);
    {
        let mut dst = out.mat_mut()?;
        imgproc::filter_2d(&patch.mat()?, &mut dst, -1, &km, core::Point::new(-1, -1), 0.0, core::BORDER_CONSTANT)
            .ctx("blurring a moving card")?;
    }
    Ok(out)
}

/// Pixels of `quad` alone, rasterised as in the id buffer.
pub(crate) fn own_area(quad: &[Point; 4]) -> Result<(u64, Rect), RenderError> {
    let r = bounds(quad, 1.0);
    let mut scratch = vec![0u16; (r.width.max(1) * r.height.max(1)) as usize];
    super::labels::fill_u16(&mut scratch, r.width.max(1), r.height.max(1), quad, 1, (r.x, r.y))?;
    Ok((scratch.iter().filter(|&&v| v == 1).count() as u64, r))
}
