//! A pinhole camera over the table plane, with OpenCV's lens distortion model.
//!
//! The calibration maps table millimetres to *undistorted* pixels with a
//! homography, then (when the lens is known) distorts them with the
//! Brown–Conrady model OpenCV uses (k1, k2, p1, p2, k3). The simulator builds
//! cameras from a pose; real tables get their homography from marked points.
use serde::{Deserialize, Serialize};

use super::geometry::{Homography, Point};

/// OpenCV's lens model: intrinsics and distortion coefficients.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LensDistortion {
    /// Focal length in pixels, x.
    pub fx: f64,
    /// Focal length in pixels, y.
    pub fy: f64,
    /// Principal point x.
    pub cx: f64,
    /// Principal point y.
    pub cy: f64,
    /// Radial coefficient k1.
    pub k1: f64,
    /// Radial coefficient k2.
    pub k2: f64,
    /// Tangential coefficient p1.
    pub p1: f64,
    /// Tangential coefficient p2.
    pub p2: f64,
    /// Radial coefficient k3.
    #[serde(default)]
    pub k3: f64,
}

impl LensDistortion {
    /// Distorts an undistorted pixel.
    pub fn distort(&self, p: Point) -> Point {
        let (x, y) = ((p.x - self.cx) / self.fx, (p.y - self.cy) / self.fy);
        let r2 = x * x + y * y;
        let radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3));
        let xd = x * radial + 2.0 * self.p1 * x * y + self.p2 * (r2 + 2.0 * x * x);
        let yd = y * radial + self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * x * y;
        Point::new(xd * self.fx + self.cx, yd * self.fy + self.cy)
    }

    /// Undistorts a distorted pixel (fixed-point iteration, as OpenCV's
    /// `undistortPoints`; converges in a few steps for moderate distortion).
    pub fn undistort(&self, p: Point) -> Point {
        let (xd, yd) = ((p.x - self.cx) / self.fx, (p.y - self.cy) / self.fy);
        let (mut x, mut y) = (xd, yd);
        for _ in 0..20 {
            let r2 = x * x + y * y;
            let radial = 1.0 + r2 * (self.k1 + r2 * (self.k2 + r2 * self.k3));
            let dx = 2.0 * self.p1 * x * y + self.p2 * (r2 + 2.0 * x * x);
            let dy = self.p1 * (r2 + 2.0 * y * y) + 2.0 * self.p2 * x * y;
            x = (xd - dx) / radial;
            y = (yd - dy) / radial;
        }
        Point::new(x * self.fx + self.cx, y * self.fy + self.cy)
    }
}

/// Where a camera is and what it looks at, in table millimetres (z up from the felt).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CameraPose {
    /// Camera centre.
    pub position_mm: [f64; 3],
    /// The table point at the image centre.
    pub target_mm: [f64; 2],
    /// Horizontal field of view in degrees.
    pub hfov_deg: f64,
    /// Roll about the optical axis in degrees.
    pub roll_deg: f64,
}

impl CameraPose {
    /// The table→image homography of this pose for an image of `width`×`height`,
    /// and the intrinsics (for a distortion model built on them).
    pub fn homography(&self, width: u32, height: u32) -> (Homography, [f64; 4]) {
        let f = width as f64 / 2.0 / (self.hfov_deg.to_radians() / 2.0).tan();
        let (cx, cy) = (width as f64 / 2.0, height as f64 / 2.0);
        let c = self.position_mm;
        let t = [self.target_mm[0], self.target_mm[1], 0.0];
        // Camera axes: z forward (to the target), x right, y down in the image.
        let z = normalize([t[0] - c[0], t[1] - c[1], t[2] - c[2]]);
        // The image's "up" is the table's +y (the players' side) for a camera
        // behind the dealer; straight down, +y itself stands in for the vertical
        // so that the orientation does not flip as the tilt goes to zero.
        let world_up = if z[2].abs() > 0.99 { [0.0, 1.0, 0.0] } else { [0.0, 0.0, 1.0] };
        let x0 = normalize(cross(z, world_up));
        let y0 = cross(z, x0);
        let (s, co) = self.roll_deg.to_radians().sin_cos();
        let x = [x0[0] * co + y0[0] * s, x0[1] * co + y0[1] * s, x0[2] * co + y0[2] * s];
        let y = cross(z, x);
        // R rows are the camera axes; t = −R c.
        let r = [x, y, z];
        let tr: Vec<f64> = r.iter().map(|row| -(row[0] * c[0] + row[1] * c[1] + row[2] * c[2])).collect();
        // H = K [r1 r2 t] for points on z = 0.
        let cols = [[r[0][0], r[1][0], r[2][0]], [r[0][1], r[1][1], r[2][1]], [tr[0], tr[1], tr[2]]];
        let mut h = [[0.0; 3]; 3];
        for j in 0..3 {
            let (u, v, w) = (cols[j][0], cols[j][1], cols[j][2]);
            h[0][j] = f * u + cx * w;
            h[1][j] = f * v + cy * w;
            h[2][j] = w;
        }
        (Homography(h).normalized(), [f, f, cx, cy])
    }

    /// The camera's tilt from straight down, in degrees.
    pub fn tilt_deg(&self) -> f64 {
        let c = self.position_mm;
        let d = [self.target_mm[0] - c[0], self.target_mm[1] - c[1], -c[2]];
        let n = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
        (-d[2] / n).acos().to_degrees()
    }
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
}

fn normalize(a: [f64; 3]) -> [f64; 3] {
    let n = (a[0] * a[0] + a[1] * a[1] + a[2] * a[2]).sqrt();
    [a[0] / n, a[1] / n, a[2] / n]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distortion_round_trips() {
        let d = LensDistortion {
            fx: 1000.0,
            fy: 1000.0,
            cx: 960.0,
            cy: 540.0,
            k1: -0.12,
            k2: 0.03,
            p1: 0.001,
            p2: -0.0005,
            k3: 0.0,
        };
        for p in [Point::new(10.0, 20.0), Point::new(960.0, 540.0), Point::new(1900.0, 1070.0)] {
            let q = d.undistort(d.distort(p));
            assert!(p.dist(q) < 1e-3, "{p:?} → {q:?}");
        }
    }

    #[test]
    fn a_camera_above_the_target_sees_it_at_the_image_centre() {
        let pose =
            CameraPose { position_mm: [0.0, 900.0, 1800.0], target_mm: [0.0, 450.0], hfov_deg: 70.0, roll_deg: 0.0 };
        let (h, _) = pose.homography(1920, 1080);
        let c = h.apply(Point::new(0.0, 450.0)).unwrap();
        assert!(c.dist(Point::new(960.0, 540.0)) < 1e-6, "{c:?}");
        assert!((pose.tilt_deg() - (450.0f64 / 1800.0).atan().to_degrees()).abs() < 1e-9);
        // Table x grows to the image's right or left consistently: two points on x.
        let l = h.apply(Point::new(-500.0, 450.0)).unwrap();
        let r = h.apply(Point::new(500.0, 450.0)).unwrap();
        assert!((l.y - r.y).abs() < 1e-6 && (l.x - r.x).abs() > 100.0);
    }
}
