//! Placeholder card images (a white card with a big rank letter, and a
//! patterned back) for tests and demos until real card artwork is available.
use opencv::core::{Point as CvPoint, Scalar};
use opencv::imgproc;

use super::buf::Buf;
use super::draw::{polyline, stamp_text, FONT};
use super::error::{CvContext, RenderError};
use crate::calib::Point;

/// Pixels per millimetre of placeholder images.
pub const PLACEHOLDER_PX_PER_MM: f64 = 4.0;

fn rounded_rect(w: f64, h: f64, r: f64, inset: f64) -> Vec<Point> {
    let mut pts = Vec::new();
    let corners = [
        (w - r - inset, r + inset, -90.0),
        (w - r - inset, h - r - inset, 0.0),
        (r + inset, h - r - inset, 90.0),
        (r + inset, r + inset, 180.0),
    ];
    for (cx, cy, start) in corners {
        for i in 0..=8 {
            let a = (start + 90.0 * i as f64 / 8.0f64).to_radians();
            pts.push(Point::new(cx - 0.5 + r * a.cos(), cy - 0.5 + r * a.sin()));
        }
    }
    pts
}

fn blank(size_mm: [f64; 2]) -> (Buf, Vec<Point>) {
    let s = PLACEHOLDER_PX_PER_MM;
    let (w, h) = ((size_mm[0] * s).round() as i32, (size_mm[1] * s).round() as i32);
    let outline = rounded_rect(w as f64, h as f64, 3.2 * s, 0.0);
    (Buf::zeros(w, h, 4), outline)
}

fn fill_rgba(buf: &mut Buf, pts: &[Point], rgba: [u8; 4]) -> Result<(), RenderError> {
    let v: opencv::core::Vector<CvPoint> = pts.iter().map(|&p| super::draw::fixed(p, (0, 0))).collect();
    let mut polys = opencv::core::Vector::<opencv::core::Vector<CvPoint>>::new();
    polys.push(v);
    let mut m = buf.mat_mut()?;
    imgproc::fill_poly(
        &mut m,
        &polys,
        Scalar::new(rgba[0] as f64, rgba[1] as f64, rgba[2] as f64, rgba[3] as f64),
        imgproc::LINE_AA,
        super::draw::SHIFT,
        CvPoint::new(0, 0),
    )
    .ctx("drawing a placeholder card")
}

/// Draws on the RGB channels of an RGBA buffer with an RGB helper.
fn on_rgb(buf: &mut Buf, f: impl FnOnce(&mut Buf) -> Result<(), RenderError>) -> Result<(), RenderError> {
    let mut rgb =
        Buf { w: buf.w, h: buf.h, ch: 3, data: buf.data.chunks_exact(4).flat_map(|p| [p[0], p[1], p[2]]).collect() };
    f(&mut rgb)?;
    for (d, s) in buf.data.chunks_exact_mut(4).zip(rgb.data.chunks_exact(3)) {
        d[..3].copy_from_slice(s);
    }
    Ok(())
}

fn to_image(buf: Buf) -> image::RgbaImage {
    image::RgbaImage::from_raw(buf.w as u32, buf.h as u32, buf.data).expect("buffer size matches")
}

/// A white face with `label` large in the middle and small in two corners,
/// red or black ink.
pub fn placeholder_face(label: &str, red: bool, size_mm: [f64; 2]) -> Result<image::RgbaImage, RenderError> {
    let (mut buf, outline) = blank(size_mm);
    fill_rgba(&mut buf, &outline, [246, 244, 238, 255])?;
    let ink = if red { [196, 22, 34] } else { [20, 20, 24] };
    let (w, h) = (buf.w as f64, buf.h as f64);
    let s = PLACEHOLDER_PX_PER_MM;
    on_rgb(&mut buf, |rgb| {
        polyline(rgb, &rounded_rect(w, h, 3.2 * s, 1.5), true, [200, 198, 192], 1.5)?;
        stamp_text(rgb, label, FONT, Point::new(w / 2.0, h / 2.0), 0.0, 0.3 * h, ink, 1.0)?;
        stamp_text(rgb, label, FONT, Point::new(0.14 * w, 0.1 * h), 0.0, 0.075 * h, ink, 1.0)?;
        stamp_text(rgb, label, FONT, Point::new(0.86 * w, 0.9 * h), std::f64::consts::PI, 0.075 * h, ink, 1.0)?;
        Ok(())
    })?;
    Ok(to_image(buf))
}

/// A card back: a coloured field with a diamond lattice inside a white border.
pub fn placeholder_back(rgb: [u8; 3], size_mm: [f64; 2]) -> Result<image::RgbaImage, RenderError> {
    let (mut buf, outline) = blank(size_mm);
    fill_rgba(&mut buf, &outline, [246, 244, 238, 255])?;
    let (w, h) = (buf.w as f64, buf.h as f64);
    let s = PLACEHOLDER_PX_PER_MM;
    let field = rounded_rect(w, h, 2.0 * s, 4.0 * s);
    on_rgb(&mut buf, |img| {
        let light = rgb.map(|v| (v as f64 * 0.55 + 255.0 * 0.45) as u8);
        let mut layer = Buf::filled(img.w, img.h, &rgb);
        let step = 3.0 * s;
        let mut k = -h;
        while k < w + h {
            polyline(&mut layer, &[Point::new(k, 0.0), Point::new(k + h, h)], false, light, 1.0)?;
            polyline(&mut layer, &[Point::new(k + h, 0.0), Point::new(k, h)], false, light, 1.0)?;
            k += step;
        }
        // Keep the lattice inside the field only.
        let mut mask = Buf::zeros(img.w, img.h, 1);
        {
            let v: opencv::core::Vector<CvPoint> = field.iter().map(|&p| super::draw::fixed(p, (0, 0))).collect();
            let mut polys = opencv::core::Vector::<opencv::core::Vector<CvPoint>>::new();
            polys.push(v);
            let mut m = mask.mat_mut()?;
            imgproc::fill_poly(
                &mut m,
                &polys,
                Scalar::all(255.0),
                imgproc::LINE_AA,
                super::draw::SHIFT,
                CvPoint::new(0, 0),
            )
            .ctx("masking a card back")?;
        }
        super::buf::blend_layer(img, &layer, &mask);
        Ok(())
    })?;
    Ok(to_image(buf))
}
