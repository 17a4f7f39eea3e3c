//! Classical refinement of a located card's rectangle against the image's edges.
//!
//! The locator proposes each card's centre reliably, but its regressed orientation and size are
//! coarse (the orientation head of the committed model did not converge in training; see
//! models/MODEL_CARD.md). A card's outline is a strong, straight intensity step against cloth or
//! another card, so the rectangle is fitted to it: every candidate rectangle (angle, size, aspect)
//! around the proposed centre is scored by the mean absolute intensity step across its four
//! edges, coarse to fine. Partly covered cards still score on their visible edges.
use ndarray::ArrayView4;

use super::geometry::RotatedRect;
use crate::calib::Point;

/// A luminance plane of the locator's input (0..1), with bilinear lookups.
pub struct EdgeImage {
    w: usize,
    h: usize,
    lum: Vec<f32>,
}

impl EdgeImage {
    /// The mean of the three channels of a `[1, 3, H, W]` input.
    pub fn from_input(input: ArrayView4<'_, f32>) -> EdgeImage {
        let (h, w) = (input.shape()[2], input.shape()[3]);
        let mut lum = vec![0.0f32; w * h];
        for c in 0..3 {
            let plane = input.slice(ndarray::s![0, c, .., ..]);
            for (dst, v) in lum.iter_mut().zip(plane.iter()) {
                *dst += v / 3.0;
            }
        }
        EdgeImage { w, h, lum }
    }

    fn at(&self, x: f64, y: f64) -> f32 {
        let x = x.clamp(0.0, (self.w - 1) as f64);
        let y = y.clamp(0.0, (self.h - 1) as f64);
        let (x0, y0) = (x.floor() as usize, y.floor() as usize);
        let (x1, y1) = ((x0 + 1).min(self.w - 1), (y0 + 1).min(self.h - 1));
        let (fx, fy) = ((x - x0 as f64) as f32, (y - y0 as f64) as f32);
        let r0 = self.lum[y0 * self.w + x0] * (1.0 - fx) + self.lum[y0 * self.w + x1] * fx;
        let r1 = self.lum[y1 * self.w + x0] * (1.0 - fx) + self.lum[y1 * self.w + x1] * fx;
        r0 * (1.0 - fy) + r1 * fy
    }

    /// Mean absolute intensity step across the rectangle's edges (corners skipped: they are
    /// rounded on real cards), each step capped so that one printed line cannot dominate.
    pub fn edge_score(&self, r: &RotatedRect) -> f32 {
        let u = Point::new(r.angle.cos(), r.angle.sin());
        let v = Point::new(-u.y, u.x);
        let (hl, hs) = (r.long / 2.0, r.short / 2.0);
        let d = (r.short * 0.04).clamp(1.0, 3.0);
        let mut sum = 0.0f32;
        let mut n = 0u32;
        // (edge centre offset along u, along v, edge direction, half length, normal)
        let edges = [(hl, 0.0, v, hs, u), (-hl, 0.0, v, hs, u), (0.0, hs, u, hl, v), (0.0, -hs, u, hl, v)];
        for (ou, ov, dir, half, nrm) in edges {
            let steps = 10;
            for i in 0..steps {
                let t = (i as f64 + 0.5) / steps as f64 * 1.7 - 0.85; // the middle 85% of the edge
                let px = r.center.x + u.x * ou + v.x * ov + dir.x * t * half;
                let py = r.center.y + u.y * ou + v.y * ov + dir.y * t * half;
                let a = self.at(px + nrm.x * d, py + nrm.y * d);
                let b = self.at(px - nrm.x * d, py - nrm.y * d);
                sum += (a - b).abs().min(0.25);
                n += 1;
            }
        }
        sum / n as f32
    }
}

/// The best rectangle near `proposal` (same centre): a coarse search over angle (6° steps),
/// long side (×0.72–1.35) and aspect, then a fine one around the winner.
pub fn refine_rect(img: &EdgeImage, proposal: &RotatedRect) -> RotatedRect {
    let mut best = (f32::MIN, *proposal);
    let consider = |r: RotatedRect, best: &mut (f32, RotatedRect)| {
        let s = img.edge_score(&r);
        if s > best.0 {
            *best = (s, r);
        }
    };
    let base = proposal.long.max(4.0);
    for a in 0..30 {
        let angle = a as f64 * std::f64::consts::PI / 30.0;
        for scale in [0.72, 0.85, 1.0, 1.16, 1.35] {
            let long = base * scale;
            consider(RotatedRect::new(proposal.center, angle, long, long * 0.69), &mut best);
        }
    }
    let coarse = best.1;
    for da in [-4.0f64, -2.0, 0.0, 2.0, 4.0] {
        for scale in [0.93, 1.0, 1.07] {
            for aspect in [0.63, 0.67, 0.71, 0.75] {
                let long = coarse.long * scale;
                let r = RotatedRect::new(coarse.center, coarse.angle + da.to_radians(), long, long * aspect);
                consider(r, &mut best);
            }
        }
    }
    best.1
}

#[cfg(test)]
mod tests {
    use ndarray::Array4;

    use super::*;

    /// A bright rectangle on a dark background, drawn by point-in-rectangle tests.
    fn scene(r: &RotatedRect, w: usize, h: usize) -> Array4<f32> {
        let mut a = Array4::<f32>::from_elem((1, 3, h, w), 0.15);
        let u = r.long_axis();
        for y in 0..h {
            for x in 0..w {
                let (dx, dy) = (x as f64 + 0.5 - r.center.x, y as f64 + 0.5 - r.center.y);
                let along = dx * u.x + dy * u.y;
                let across = -dx * u.y + dy * u.x;
                if along.abs() <= r.long / 2.0 && across.abs() <= r.short / 2.0 {
                    for c in 0..3 {
                        a[[0, c, y, x]] = 0.9;
                    }
                }
            }
        }
        a
    }

    #[test]
    fn recovers_angle_and_size_from_a_rough_proposal() {
        let truth = RotatedRect::new(Point::new(80.0, 70.0), 0.6, 72.0, 51.0);
        let input = scene(&truth, 160, 140);
        let img = EdgeImage::from_input(input.view());
        // Wrong angle by 50°, size 25% too small: what the untrained heads give.
        let proposal = RotatedRect::new(Point::new(81.5, 69.0), 0.6 + 50f64.to_radians(), 54.0, 54.0);
        let r = refine_rect(&img, &proposal);
        let da = (r.angle - truth.angle).abs();
        assert!(da.min(std::f64::consts::PI - da) < 3f64.to_radians(), "angle {} vs {}", r.angle, truth.angle);
        assert!((r.long / truth.long - 1.0).abs() < 0.08, "long {}", r.long);
        assert!((r.short / truth.short - 1.0).abs() < 0.1, "short {}", r.short);
        assert!(img.edge_score(&r) > 2.0 * img.edge_score(&proposal));
    }
}
