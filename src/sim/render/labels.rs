//! The id buffer: which card (1-based index in draw order) covers each canvas
//! pixel; chips and occluders write 0.
use opencv::core::{Mat, Point as CvPoint, Scalar, Vector};
use opencv::imgproc;

use super::draw::{fixed, SHIFT};
use super::error::{CvContext, RenderError};
use crate::calib::Point;

/// A 16-bit label image.
pub(crate) struct Labels {
    pub w: i32,
    pub h: i32,
    pub data: Vec<u16>,
}

impl Labels {
    pub fn new(w: i32, h: i32) -> Labels {
        Labels { w, h, data: vec![0; (w * h) as usize] }
    }

    /// Fills a polygon (no anti-aliasing: every pixel has one owner).
    pub fn fill(&mut self, pts: &[Point], value: u16) -> Result<(), RenderError> {
        fill_u16(&mut self.data, self.w, self.h, pts, value, (0, 0))
    }
}

/// Fills a polygon into a 16-bit buffer whose pixel (0, 0) is `off` of the canvas.
pub(crate) fn fill_u16(
    data: &mut [u16],
    w: i32,
    h: i32,
    pts: &[Point],
    value: u16,
    off: (i32, i32),
) -> Result<(), RenderError> {
    if pts.len() < 3 {
        return Ok(());
    }
    let mut m = Mat::new_rows_cols_with_data_mut::<u16>(h, w, data).ctx("wrapping the id buffer")?;
    let v: Vector<CvPoint> = pts.iter().map(|&p| fixed(p, off)).collect();
    let mut polys = Vector::<Vector<CvPoint>>::new();
    polys.push(v);
    imgproc::fill_poly(&mut m, &polys, Scalar::all(value as f64), imgproc::LINE_8, SHIFT, CvPoint::new(0, 0))
        .ctx("filling the id buffer")
}
