//! Drawing a calibration's zones over a frame, so that a person can see whether they fit.
use opencv::core::{self, Mat, Point as CvPoint, Scalar, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

use super::build::{BuildError, Correspondence};
use super::geometry::Point;
use super::{TableGeometry, ZoneKind};

fn cv(context: &str) -> impl FnOnce(opencv::Error) -> BuildError + '_ {
    move |source| BuildError::OpenCv { context: context.to_string(), source }
}

/// BGR colour of each kind of zone.
fn colour(kind: &ZoneKind) -> Scalar {
    match kind {
        ZoneKind::Hand { .. } => Scalar::new(255.0, 200.0, 0.0, 0.0),
        ZoneKind::BetSpot { .. } => Scalar::new(0.0, 220.0, 255.0, 0.0),
        ZoneKind::DealerHand => Scalar::new(60.0, 60.0, 255.0, 0.0),
        ZoneKind::Community => Scalar::new(255.0, 80.0, 255.0, 0.0),
        ZoneKind::Shoe | ZoneKind::Discard => Scalar::new(80.0, 255.0, 80.0, 0.0),
    }
}

/// A short label for a zone.
fn label(kind: &ZoneKind) -> String {
    match kind {
        ZoneKind::Hand { seat } => format!("seat {seat}"),
        ZoneKind::BetSpot { seat, bet } => {
            let short = match bet {
                crate::rules::BetKind::Ante => "A",
                crate::rules::BetKind::Play => "P",
                crate::rules::BetKind::Raise => "R",
                crate::rules::BetKind::PairPlus => "PP",
                crate::rules::BetKind::SixCardBonus => "6C",
                crate::rules::BetKind::Progressive => "J",
                crate::rules::BetKind::Bet => "B",
            };
            format!("{seat}{short}")
        }
        ZoneKind::DealerHand => "dealer".into(),
        ZoneKind::Community => "community".into(),
        ZoneKind::Shoe => "shoe".into(),
        ZoneKind::Discard => "discard".into(),
    }
}

/// Draws every zone of `geometry` over a copy of `frame` (BGR): outlines
/// following the lens, a label per zone (bet spots: seat and bet initial —
/// A ante, P play, R raise, PP pair plus, 6C six card bonus, B bet), and the
/// marked points (`marked`: green where marked, red cross where the
/// calibration puts them). Returns the picture scaled to `width` px wide (if given).
pub fn draw_zones(
    geometry: &TableGeometry,
    frame: &Mat,
    marked: &[Correspondence],
    width: Option<i32>,
) -> Result<Mat, BuildError> {
    let mut img = frame.try_clone().map_err(cv("copying the frame"))?;
    let cal = &geometry.calibration;
    let scale = frame.cols() as f64 / cal.image_width.max(1) as f64;
    let thick = ((frame.cols() as f64 / 900.0).round() as i32).max(1);
    let to_cv = |p: Point| CvPoint::new((p.x * scale).round() as i32, (p.y * scale).round() as i32);
    for z in &cal.zones {
        // Densify the outline so that it bends with the lens.
        let v = &z.polygon_mm.0;
        let mut pts: Vector<CvPoint> = Vector::new();
        for i in 0..v.len() {
            let (a, b) = (v[i], v[(i + 1) % v.len()]);
            for k in 0..8 {
                let t = k as f64 / 8.0;
                if let Some(p) = geometry.table_to_image(Point::new(a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t)) {
                    pts.push(to_cv(p));
                }
            }
        }
        let c = colour(&z.kind);
        let mut contours: Vector<Vector<CvPoint>> = Vector::new();
        contours.push(pts);
        imgproc::polylines(&mut img, &contours, true, c, thick, imgproc::LINE_AA, 0).map_err(cv("drawing a zone"))?;
        if let Some(centre) = geometry.table_to_image(z.polygon_mm.centroid()) {
            let text = label(&z.kind);
            let fs = 0.45 * thick as f64;
            let mut base = 0;
            let sz = imgproc::get_text_size(&text, imgproc::FONT_HERSHEY_SIMPLEX, fs, thick, &mut base)
                .map_err(cv("measuring a label"))?;
            let o = to_cv(centre);
            let org = CvPoint::new(o.x - sz.width / 2, o.y + sz.height / 2);
            imgproc::put_text(
                &mut img,
                &text,
                org,
                imgproc::FONT_HERSHEY_SIMPLEX,
                fs,
                Scalar::all(0.0),
                thick + 2,
                imgproc::LINE_AA,
                false,
            )
            .map_err(cv("drawing a label"))?;
            imgproc::put_text(
                &mut img,
                &text,
                org,
                imgproc::FONT_HERSHEY_SIMPLEX,
                fs,
                c,
                thick,
                imgproc::LINE_AA,
                false,
            )
            .map_err(cv("drawing a label"))?;
        }
    }
    for m in marked {
        imgproc::circle(
            &mut img,
            to_cv(m.image),
            6 * thick,
            Scalar::new(0.0, 255.0, 0.0, 0.0),
            thick,
            imgproc::LINE_AA,
            0,
        )
        .map_err(cv("drawing a point"))?;
        if let Some(p) = geometry.table_to_image(m.table) {
            let q = to_cv(p);
            let d = 5 * thick;
            for (a, b) in [((-d, -d), (d, d)), ((-d, d), (d, -d))] {
                imgproc::line(
                    &mut img,
                    CvPoint::new(q.x + a.0, q.y + a.1),
                    CvPoint::new(q.x + b.0, q.y + b.1),
                    Scalar::new(0.0, 0.0, 255.0, 0.0),
                    thick,
                    imgproc::LINE_AA,
                    0,
                )
                .map_err(cv("drawing a point"))?;
            }
        }
    }
    match width {
        Some(w) if w > 0 && w < img.cols() => {
            let h = (img.rows() as f64 * w as f64 / img.cols() as f64).round() as i32;
            let mut small = Mat::default();
            imgproc::resize(&img, &mut small, Size::new(w, h), 0.0, 0.0, imgproc::INTER_AREA)
                .map_err(cv("scaling the picture"))?;
            Ok(small)
        }
        _ => Ok(img),
    }
}

/// Checks that a frame has the calibration's size (or its aspect, for a scaled picture).
pub fn check_frame_size(geometry: &TableGeometry, frame: &Mat) -> Result<(), BuildError> {
    let cal = &geometry.calibration;
    let (w, h) = (frame.cols() as f64, frame.rows() as f64);
    let aspect = (w / h) / (cal.image_width as f64 / cal.image_height as f64);
    if (aspect - 1.0).abs() > 0.01 || frame.typ() != core::CV_8UC3 {
        return Err(BuildError::Geometry(format!(
            "the frame is {w}×{h} but the calibration is for {}×{} images (field image_width/image_height); use a frame from this camera",
            cal.image_width, cal.image_height
        )));
    }
    Ok(())
}
