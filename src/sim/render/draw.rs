//! Drawing helpers over OpenCV: sub-pixel anti-aliased polygons, rotated and
//! curved text stamped through coverage masks.
use opencv::core::{self, Mat, Point as CvPoint, Point2f, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

use super::buf::{blend_mask, bounds, Buf};
use super::error::{CvContext, RenderError};
use crate::calib::Point;

/// Fractional bits of the coordinates given to OpenCV's drawing functions.
pub(crate) const SHIFT: i32 = 4;
const ONE: f64 = (1 << SHIFT) as f64;

/// A point in OpenCV's fixed-point drawing coordinates, `off` subtracted.
pub(crate) fn fixed(p: Point, off: (i32, i32)) -> CvPoint {
    CvPoint::new(((p.x - off.0 as f64) * ONE).round() as i32, ((p.y - off.1 as f64) * ONE).round() as i32)
}

/// Fills a polygon (any simple polygon) with a colour, anti-aliased.
pub(crate) fn fill(img: &mut Buf, pts: &[Point], rgb: [u8; 3]) -> Result<(), RenderError> {
    let v: Vector<CvPoint> = pts.iter().map(|&p| fixed(p, (0, 0))).collect();
    let mut m = img.mat_mut()?;
    let mut polys = Vector::<Vector<CvPoint>>::new();
    polys.push(v);
    imgproc::fill_poly(&mut m, &polys, scalar(rgb), imgproc::LINE_AA, SHIFT, CvPoint::new(0, 0))
        .ctx("filling a polygon")
}

/// Blends a polygon with `opacity` (a translucent fill, e.g. smoked acrylic).
pub(crate) fn fill_alpha(img: &mut Buf, pts: &[Point], rgb: [u8; 3], opacity: f32) -> Result<(), RenderError> {
    let Some((mask, x0, y0)) = poly_mask(pts, 1.0)? else { return Ok(()) };
    blend_mask(img, x0, y0, &mask, rgb.map(f32::from), opacity);
    Ok(())
}

/// A one-channel anti-aliased coverage mask of a polygon, and where its top-left
/// corner goes; `None` for an empty polygon.
pub(crate) fn poly_mask(pts: &[Point], margin: f64) -> Result<Option<(Buf, i32, i32)>, RenderError> {
    let r = bounds(pts, margin + 1.0);
    if r.width <= 0 || r.height <= 0 || r.width > 20_000 || r.height > 20_000 {
        return Ok(None);
    }
    let mut mask = Buf::zeros(r.width, r.height, 1);
    {
        let v: Vector<CvPoint> = pts.iter().map(|&p| fixed(p, (r.x, r.y))).collect();
        let mut polys = Vector::<Vector<CvPoint>>::new();
        polys.push(v);
        let mut m = mask.mat_mut()?;
        imgproc::fill_poly(&mut m, &polys, Scalar::all(255.0), imgproc::LINE_AA, SHIFT, CvPoint::new(0, 0))
            .ctx("rasterising a mask")?;
    }
    Ok(Some((mask, r.x, r.y)))
}

/// Draws a closed or open polyline.
pub(crate) fn polyline(
    img: &mut Buf,
    pts: &[Point],
    closed: bool,
    rgb: [u8; 3],
    thickness_px: f64,
) -> Result<(), RenderError> {
    let v: Vector<CvPoint> = pts.iter().map(|&p| fixed(p, (0, 0))).collect();
    let mut polys = Vector::<Vector<CvPoint>>::new();
    polys.push(v);
    let mut m = img.mat_mut()?;
    imgproc::polylines(
        &mut m,
        &polys,
        closed,
        scalar(rgb),
        thickness_px.round().max(1.0) as i32,
        imgproc::LINE_AA,
        SHIFT,
    )
    .ctx("drawing a polyline")
}

/// An RGB triple as an OpenCV scalar (channel order is the buffer's: RGB).
pub(crate) fn scalar(rgb: [u8; 3]) -> Scalar {
    Scalar::new(rgb[0] as f64, rgb[1] as f64, rgb[2] as f64, 255.0)
}

/// The font of printed labels.
pub(crate) const FONT: i32 = imgproc::FONT_HERSHEY_DUPLEX;
/// The font of titles.
pub(crate) const TITLE_FONT: i32 = imgproc::FONT_HERSHEY_TRIPLEX;

/// Cap height and advance of `text` at font scale 1.
fn text_metrics(text: &str, font: i32) -> Result<(f64, f64), RenderError> {
    let mut base = 0;
    let s = imgproc::get_text_size(text, font, 1.0, 1, &mut base).ctx("measuring text")?;
    Ok((s.height as f64, s.width as f64))
}

/// Width in pixels of `text` drawn with letters `height_px` tall.
pub(crate) fn text_width(text: &str, font: i32, height_px: f64) -> Result<f64, RenderError> {
    let (h, w) = text_metrics(text, font)?;
    Ok(w * height_px / h)
}

/// Stamps `text` centred at `centre` (pixels), letters `height_px` tall, rotated
/// by `angle_rad` (text's up direction is `(sin a, −cos a)`; 0 = upright).
#[allow(clippy::too_many_arguments)]
pub(crate) fn stamp_text(
    img: &mut Buf,
    text: &str,
    font: i32,
    centre: Point,
    angle_rad: f64,
    height_px: f64,
    rgb: [u8; 3],
    opacity: f32,
) -> Result<(), RenderError> {
    if text.trim().is_empty() || height_px < 2.0 {
        return Ok(());
    }
    // Draw upright at 4× the target size (Hershey strokes look better large),
    // then rotate and shrink with one affine warp.
    let (h1, _) = text_metrics(text, font)?;
    let big = 4.0;
    let scale = height_px * big / h1;
    let thickness = ((scale * 1.6).round() as i32).max(1);
    let mut base = 0;
    let size = imgproc::get_text_size(text, font, scale, thickness, &mut base).ctx("measuring text")?;
    let pad = thickness + 4;
    let (tw, th) = (size.width + 2 * pad, size.height + base + 2 * pad);
    let mut tmp = Mat::new_rows_cols_with_default(th, tw, core::CV_8UC1, Scalar::all(0.0)).ctx("allocating text")?;
    imgproc::put_text(
        &mut tmp,
        text,
        CvPoint::new(pad, pad + size.height),
        font,
        scale,
        Scalar::all(255.0),
        thickness,
        imgproc::LINE_AA,
        false,
    )
    .ctx("drawing text")?;
    // Two pyramid steps bring the 4× drawing to the target size with proper
    // area averaging; the warp then only rotates.
    let mut half = Mat::default();
    imgproc::pyr_down(&tmp, &mut half, Size::default(), core::BORDER_DEFAULT).ctx("shrinking text")?;
    let mut small = Mat::default();
    imgproc::pyr_down(&half, &mut small, Size::default(), core::BORDER_DEFAULT).ctx("shrinking text")?;
    let (sw, sh) = (small.cols() as f64, small.rows() as f64);
    let k = 1.0 / big;
    let anchor = ((pad as f64 + size.width as f64 / 2.0) * k, (pad as f64 + size.height as f64 / 2.0) * k);
    let (s, c) = angle_rad.sin_cos();
    // dst = R (src − anchor) + centre
    let corners = [(0.0, 0.0), (sw, 0.0), (sw, sh), (0.0, sh)].map(|(x, y)| {
        let (dx, dy) = (x - anchor.0, y - anchor.1);
        Point::new(c * dx - s * dy + centre.x, s * dx + c * dy + centre.y)
    });
    let r = bounds(&corners, 1.0);
    let mut mask = Buf::zeros(r.width, r.height, 1);
    let m = Mat::from_slice_2d(&[
        [c, -s, centre.x - r.x as f64 - (c * anchor.0 - s * anchor.1)],
        [s, c, centre.y - r.y as f64 - (s * anchor.0 + c * anchor.1)],
    ])
    .ctx("building a text transform")?;
    {
        let mut dst = mask.mat_mut()?;
        imgproc::warp_affine(
            &small,
            &mut dst,
            &m,
            Size::new(r.width, r.height),
            imgproc::INTER_LINEAR,
            core::BORDER_CONSTANT,
            Scalar::all(0.0),
        )
        .ctx("rotating text")?;
    }
    blend_mask(img, r.x, r.y, &mask, rgb.map(f32::from), opacity);
    Ok(())
}

/// Text along a circle of `radius` around `centre`, centred at angle `mid_rad`,
/// letters' tops towards the centre (readable from outside the circle).
#[allow(clippy::too_many_arguments)]
pub(crate) fn arc_text(
    img: &mut Buf,
    text: &str,
    font: i32,
    centre: Point,
    radius: f64,
    mid_rad: f64,
    height_px: f64,
    rgb: [u8; 3],
    opacity: f32,
) -> Result<(), RenderError> {
    let spacing = 0.12 * height_px;
    let widths: Vec<f64> = text
        .chars()
        .map(|ch| text_width(&ch.to_string(), font, height_px).map(|w| w + spacing))
        .collect::<Result<_, _>>()?;
    let total: f64 = widths.iter().sum();
    let mut theta = mid_rad + total / 2.0 / radius;
    for (ch, w) in text.chars().zip(&widths) {
        let a = theta - w / 2.0 / radius;
        if ch != ' ' {
            let p = Point::new(centre.x + radius * a.cos(), centre.y + radius * a.sin());
            stamp_text(img, &ch.to_string(), font, p, a - std::f64::consts::FRAC_PI_2, height_px, rgb, opacity)?;
        }
        theta -= w / radius;
    }
    Ok(())
}

/// Four points as OpenCV floats.
pub(crate) fn quad_f32(q: &[Point; 4], off: (f64, f64)) -> Vector<Point2f> {
    q.iter().map(|p| Point2f::new((p.x - off.0) as f32, (p.y - off.1) as f32)).collect()
}

/// A union coverage mask of several polygons, anti-aliased, with its top-left corner.
pub(crate) fn union_mask(polys: &[Vec<Point>], margin: f64) -> Result<Option<(Buf, i32, i32)>, RenderError> {
    let all: Vec<Point> = polys.iter().flatten().copied().collect();
    if all.is_empty() {
        return Ok(None);
    }
    let r = bounds(&all, margin + 1.0);
    if r.width <= 0 || r.height <= 0 || r.width > 20_000 || r.height > 20_000 {
        return Ok(None);
    }
    let mut mask = Buf::zeros(r.width, r.height, 1);
    {
        let mut m = mask.mat_mut()?;
        for poly in polys {
            let v: Vector<CvPoint> = poly.iter().map(|&p| fixed(p, (r.x, r.y))).collect();
            let mut polys = Vector::<Vector<CvPoint>>::new();
            polys.push(v);
            imgproc::fill_poly(&mut m, &polys, Scalar::all(255.0), imgproc::LINE_AA, SHIFT, CvPoint::new(0, 0))
                .ctx("rasterising a mask")?;
        }
    }
    Ok(Some((mask, r.x, r.y)))
}

/// Darkens the union of polygons through a Gaussian-softened mask (a shadow).
pub(crate) fn soft_shadow(
    img: &mut Buf,
    polys: &[Vec<Point>],
    sigma_px: f64,
    strength: f32,
) -> Result<(), RenderError> {
    let sigma = sigma_px.max(0.3);
    // Wide shadows are blurred at a reduced scale (the result is smooth anyway).
    let k = ((sigma / 2.0).floor() as i32).clamp(1, 8);
    let kf = k as f64;
    let small: Vec<Vec<Point>> = polys
        .iter()
        .map(|p| p.iter().map(|q| Point::new((q.x + 0.5) / kf - 0.5, (q.y + 0.5) / kf - 0.5)).collect())
        .collect();
    let Some((mut mask, x0, y0)) = union_mask(&small, 3.0 * sigma / kf)? else { return Ok(()) };
    {
        let src = mask.clone();
        let s = src.mat()?;
        let mut d = mask.mat_mut()?;
        imgproc::gaussian_blur(&s, &mut d, Size::new(0, 0), sigma / kf, sigma / kf, core::BORDER_CONSTANT)
            .ctx("blurring a shadow")?;
    }
    if k > 1 {
        let size = Size::new(mask.w * k, mask.h * k);
        let mut up = Buf::zeros(size.width, size.height, 1);
        {
            let s = mask.mat()?;
            let mut d = up.mat_mut()?;
            imgproc::resize(&s, &mut d, size, 0.0, 0.0, imgproc::INTER_LINEAR).ctx("enlarging a shadow")?;
        }
        super::buf::darken_mask(img, x0 * k, y0 * k, &up, strength);
    } else {
        super::buf::darken_mask(img, x0, y0, &mask, strength);
    }
    Ok(())
}

/// Convex hull (monotone chain), counter-clockwise in image coordinates.
pub(crate) fn convex_hull(mut pts: Vec<Point>) -> Vec<Point> {
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    pts.dedup_by(|a, b| a.x == b.x && a.y == b.y);
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: Point, a: Point, b: Point| (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x);
    let mut lower: Vec<Point> = Vec::new();
    for &p in &pts {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], p) <= 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<Point> = Vec::new();
    for &p in pts.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], p) <= 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}
