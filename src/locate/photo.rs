//! Card outlines in a photo of unknown scale (no calibration): `tablecam detect` on any image.
//!
//! Without a table plane there is no card size to measure against, so a card is a *shape*: a
//! region that contrasts with what it lies on and whose outline is a filled, convex rectangle of
//! a card's proportions at any size. Three kinds of region are collected, because no single one
//! separates every card from every surface:
//! - Otsu's threshold of the grey image, either polarity (white stock on a dark cloth, a black
//!   deck on a white desk);
//! - the cells between Canny edges at three sensitivities (white cards on a light table differ
//!   only by their faint outline).
//!
//! Every region that passes the shape test becomes a candidate; most images give several per
//! card (nested prints, the same outline from two masks). This module only proposes: the
//! recognizer reads each candidate's corners and keeps what the classifier sees a face or a back
//! on, suppressing overlaps (`recognize`, docs/recognition.md).
//!
//! What it does not find (measured in docs/recognition.md): cards of a fan or a pile that show
//! only their index strip, cards cut by the image border, and white cards on a white surface
//! whose outline leaves no edge.
use opencv::core::{self, Mat, Point as CvPoint, Size, Vector};
use opencv::imgproc;
use opencv::prelude::*;

use super::geometry::{order_quad, Quad};
use super::LocateError;
use crate::calib::Point;

/// Photos are searched at this longer side (cards in a photo are large; finer is wasted work).
pub const WORK_SIDE: f64 = 640.0;
/// Canny (low, high) thresholds: the strong edges of a card on a contrasting surface, then the
/// faint outline of white stock on a light one.
const CANNY: [(f64, f64); 3] = [(30.0, 90.0), (10.0, 30.0), (5.0, 15.0)];
/// A card covers at least this share of the searched image…
const MIN_AREA_SHARE: f64 = 0.004;
/// …and at most this share (a region filling the frame is the surface).
const MAX_AREA_SHARE: f64 = 0.9;
/// A card's region fills at least this share of its convex hull (no deep notches)…
const MIN_SOLIDITY: f64 = 0.85;
/// …and of its minimum-area rectangle (pips and rounded blobs fill less).
const MIN_FILL: f64 = 0.8;
/// Longest long-to-short ratio: a card is 1.4 (poker) to 1.56 (bridge); photos resized without
/// keeping their aspect ratio stretch it further either way.
const MAX_ASPECT: f64 = 2.6;
/// Polygon approximation tolerance as a share of the perimeter (rounded card corners).
const APPROX: f64 = 0.03;

/// An OpenCV error of the photo finders (outlines here, index glyphs in [`super::glyphs`]).
pub(super) fn cv(context: &'static str) -> impl FnOnce(opencv::Error) -> LocateError {
    move |source| LocateError::Photo { context, source }
}

/// Card-shaped outlines in a BGR photo, in frame pixels ([`order_quad`] order); unsorted, with
/// duplicates and non-cards among them (see the [module](self)).
pub fn candidate_quads(image: &Mat) -> Result<Vec<Quad>, LocateError> {
    let Some((grey, s)) = work_grey(image)? else {
        return Ok(Vec::new());
    };
    let mut blurred = Mat::default();
    imgproc::gaussian_blur_def(&grey, &mut blurred, Size::new(5, 5), 0.0).map_err(cv("blur"))?;

    let mut masks: Vec<Mat> = Vec::with_capacity(2 + CANNY.len());
    let mut bright = Mat::default();
    imgproc::threshold(&blurred, &mut bright, 0.0, 255.0, imgproc::THRESH_BINARY | imgproc::THRESH_OTSU)
        .map_err(cv("otsu"))?;
    let mut dark = Mat::default();
    core::bitwise_not_def(&bright, &mut dark).map_err(cv("otsu"))?;
    masks.push(bright);
    masks.push(dark);
    let kernel3 = imgproc::get_structuring_element_def(imgproc::MORPH_RECT, Size::new(3, 3)).map_err(cv("kernel"))?;
    for (lo, hi) in CANNY {
        let mut edges = Mat::default();
        imgproc::canny_def(&blurred, &mut edges, lo, hi).map_err(cv("canny"))?;
        let mut thick = Mat::default();
        imgproc::dilate_def(&edges, &mut thick, &kernel3).map_err(cv("dilate"))?;
        let mut cells = Mat::default();
        core::bitwise_not_def(&thick, &mut cells).map_err(cv("canny"))?;
        masks.push(cells);
    }

    let kernel5 = imgproc::get_structuring_element_def(imgproc::MORPH_RECT, Size::new(5, 5)).map_err(cv("kernel"))?;
    let area_px = f64::from(grey.cols()) * f64::from(grey.rows());
    let mut out = Vec::new();
    for mask in &masks {
        let mut opened = Mat::default();
        imgproc::morphology_ex_def(mask, &mut opened, imgproc::MORPH_OPEN, &kernel5).map_err(cv("open"))?;
        let mut contours: Vector<Vector<CvPoint>> = Vector::new();
        imgproc::find_contours_def(&opened, &mut contours, imgproc::RETR_LIST, imgproc::CHAIN_APPROX_SIMPLE)
            .map_err(cv("contours"))?;
        for c in contours.iter() {
            if let Some(q) = card_shape(&c, area_px)? {
                out.push(order_quad(q.map(|p| Point::new(p.x / s, p.y / s))));
            }
        }
    }
    Ok(out)
}

/// The photo's grey image with its longer side at most [`WORK_SIDE`] (area-averaged, never
/// enlarged) and the scale from the photo to it; `None` for an image too small to show a card.
pub(super) fn work_grey(image: &Mat) -> Result<Option<(Mat, f64)>, LocateError> {
    let long = f64::from(image.cols().max(image.rows()));
    if long < 16.0 {
        return Ok(None);
    }
    let s = (WORK_SIDE / long).min(1.0);
    let mut small = Mat::default();
    if s < 1.0 {
        imgproc::resize(image, &mut small, Size::new(0, 0), s, s, imgproc::INTER_AREA).map_err(cv("resize"))?;
    } else {
        small = image.try_clone().map_err(cv("copy"))?;
    }
    let mut grey = Mat::default();
    imgproc::cvt_color_def(&small, &mut grey, imgproc::COLOR_BGR2GRAY).map_err(cv("grey"))?;
    Ok(Some((grey, s)))
}

/// The quadrilateral of a contour that passes the card-shape test: its 4-vertex polygon
/// approximation, or its minimum-area rectangle when the approximation has another vertex count.
fn card_shape(c: &Vector<CvPoint>, area_px: f64) -> Result<Option<[Point; 4]>, LocateError> {
    let area = imgproc::contour_area_def(c).map_err(cv("area"))?;
    if area < MIN_AREA_SHARE * area_px || area > MAX_AREA_SHARE * area_px {
        return Ok(None);
    }
    let mut hull: Vector<CvPoint> = Vector::new();
    imgproc::convex_hull_def(c, &mut hull).map_err(cv("hull"))?;
    let hull_area = imgproc::contour_area_def(&hull).map_err(cv("area"))?;
    if area < MIN_SOLIDITY * hull_area {
        return Ok(None);
    }
    let r = imgproc::min_area_rect(&hull).map_err(cv("rect"))?;
    let (w, h) = (f64::from(r.size.width), f64::from(r.size.height));
    if w.min(h) < 1.0 || area < MIN_FILL * w * h || w.max(h) > MAX_ASPECT * w.min(h) {
        return Ok(None);
    }
    let perimeter = imgproc::arc_length(&hull, true).map_err(cv("perimeter"))?;
    let mut poly: Vector<CvPoint> = Vector::new();
    imgproc::approx_poly_dp(&hull, &mut poly, APPROX * perimeter, true).map_err(cv("approx"))?;
    // A pixel's contour runs through pixel centres; the card's outline is half a pixel further out
    // (continuous coordinates, the quadrilateral convention).
    let px = |x: f32, y: f32| Point::new(f64::from(x) + 0.5, f64::from(y) + 0.5);
    if poly.len() == 4 {
        let v: Vec<Point> = poly.iter().map(|p| px(p.x as f32, p.y as f32)).collect();
        return Ok(Some([v[0], v[1], v[2], v[3]]));
    }
    let mut pts = [core::Point2f::default(); 4];
    r.points(&mut pts).map_err(cv("rect"))?;
    Ok(Some(pts.map(|p| px(p.x, p.y))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locate::geometry::polygon_iou;
    use opencv::core::Scalar;

    /// A grey image with filled rotated rectangles of the given colour.
    fn scene(w: i32, h: i32, bg: f64, cards: &[([f64; 2], f64, f64, f64, f64)]) -> (Mat, Vec<Quad>) {
        let mut img = Mat::new_rows_cols_with_default(h, w, core::CV_8UC3, Scalar::all(bg)).unwrap();
        let mut quads = Vec::new();
        for &([cx, cy], long, short, angle, shade) in cards {
            let r = crate::locate::RotatedRect::new(Point::new(cx, cy), angle, long, short);
            let q = r.quad();
            let pts: Vector<CvPoint> = q.iter().map(|p| CvPoint::new(p.x.round() as i32, p.y.round() as i32)).collect();
            imgproc::fill_convex_poly_def(&mut img, &pts, Scalar::all(shade)).unwrap();
            quads.push(q);
        }
        (img, quads)
    }

    fn found(cands: &[Quad], truth: &Quad) -> f64 {
        cands.iter().map(|c| polygon_iou(c, truth)).fold(0.0, f64::max)
    }

    #[test]
    fn white_and_black_cards_are_outlined_at_any_size_and_angle() {
        // A white card on a dark cloth, a black card on a light desk, a small turned one.
        let cases = [
            (40.0, ([320.0, 240.0], 300.0, 214.0, 0.3, 235.0)),
            (215.0, ([300.0, 250.0], 260.0, 186.0, 1.2, 25.0)),
            (60.0, ([150.0, 120.0], 70.0, 50.0, 2.5, 220.0)),
        ];
        for (bg, card) in cases {
            let (img, truth) = scene(640, 480, bg, &[card]);
            let cands = candidate_quads(&img).unwrap();
            let iou = found(&cands, &truth[0]);
            assert!(iou > 0.9, "background {bg}: best IoU {iou:.3} of {} candidates", cands.len());
        }
    }

    #[test]
    fn a_large_photo_is_searched_reduced_and_answered_in_its_own_pixels() {
        let (img, truth) = scene(2000, 1500, 30.0, &[([1000.0, 700.0], 900.0, 640.0, 0.7, 230.0)]);
        let iou = found(&candidate_quads(&img).unwrap(), &truth[0]);
        assert!(iou > 0.9, "best IoU {iou:.3}");
    }

    #[test]
    fn shapes_that_are_no_card_are_not_proposed() {
        let mut img = Mat::new_rows_cols_with_default(480, 640, core::CV_8UC3, Scalar::all(40.0)).unwrap();
        // a disc (a chip) and a thin bar (a rail) of card-like area
        imgproc::circle_def(&mut img, CvPoint::new(200, 200), 80, Scalar::all(230.0)).unwrap();
        imgproc::circle(&mut img, CvPoint::new(200, 200), 80, Scalar::all(230.0), -1, imgproc::LINE_8, 0).unwrap();
        imgproc::rectangle_def(&mut img, core::Rect::new(380, 100, 240, 30), Scalar::all(230.0)).unwrap();
        imgproc::rectangle(&mut img, core::Rect::new(380, 100, 240, 30), Scalar::all(230.0), -1, imgproc::LINE_8, 0)
            .unwrap();
        assert!(candidate_quads(&img).unwrap().is_empty());
        // an empty image
        let blank = Mat::new_rows_cols_with_default(480, 640, core::CV_8UC3, Scalar::all(128.0)).unwrap();
        assert!(candidate_quads(&blank).unwrap().is_empty());
    }
}
