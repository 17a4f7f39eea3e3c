//! Plane geometry: points, 3×3 homographies, polygons.
use serde::{Deserialize, Serialize};

/// A point in table millimetres or image pixels (the type says which by context).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct Point {
    /// x.
    pub x: f64,
    /// y.
    pub y: f64,
}

impl Point {
    /// The point (x, y).
    pub const fn new(x: f64, y: f64) -> Point {
        Point { x, y }
    }

    /// Euclidean distance.
    pub fn dist(self, o: Point) -> f64 {
        (self.x - o.x).hypot(self.y - o.y)
    }

    /// The mean of `points` (a quad's centre, for one); the origin for none.
    pub fn mean(points: &[Point]) -> Point {
        let n = points.len().max(1) as f64;
        Point::new(points.iter().map(|p| p.x).sum::<f64>() / n, points.iter().map(|p| p.y).sum::<f64>() / n)
    }

    /// The point a share `t` of the way from `self` to `o`.
    pub fn lerp(self, o: Point, t: f64) -> Point {
        Point::new(self.x + t * (o.x - self.x), self.y + t * (o.y - self.y))
    }
}

/// A projective transform of the plane, row-major.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Homography(pub [[f64; 3]; 3]);

impl Homography {
    /// The identity.
    pub const IDENTITY: Homography = Homography([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]);

    /// Maps `p`; `None` if it lands at or behind the line at infinity (w ≤ 0).
    pub fn apply(&self, p: Point) -> Option<Point> {
        let m = &self.0;
        let w = m[2][0] * p.x + m[2][1] * p.y + m[2][2];
        if w <= 1e-12 {
            return None;
        }
        Some(Point::new((m[0][0] * p.x + m[0][1] * p.y + m[0][2]) / w, (m[1][0] * p.x + m[1][1] * p.y + m[1][2]) / w))
    }

    /// Determinant.
    pub fn det(&self) -> f64 {
        let m = &self.0;
        m[0][0] * (m[1][1] * m[2][2] - m[1][2] * m[2][1]) - m[0][1] * (m[1][0] * m[2][2] - m[1][2] * m[2][0])
            + m[0][2] * (m[1][0] * m[2][1] - m[1][1] * m[2][0])
    }

    /// The inverse, or `None` if the matrix is (numerically) singular.
    pub fn inverse(&self) -> Option<Homography> {
        let m = &self.0;
        let det = self.det();
        let scale: f64 = m.iter().flatten().map(|v| v.abs()).fold(0.0, f64::max);
        if !det.is_finite() || scale == 0.0 || det.abs() < 1e-12 * scale.powi(3) {
            return None;
        }
        let inv = [
            [
                (m[1][1] * m[2][2] - m[1][2] * m[2][1]) / det,
                (m[0][2] * m[2][1] - m[0][1] * m[2][2]) / det,
                (m[0][1] * m[1][2] - m[0][2] * m[1][1]) / det,
            ],
            [
                (m[1][2] * m[2][0] - m[1][0] * m[2][2]) / det,
                (m[0][0] * m[2][2] - m[0][2] * m[2][0]) / det,
                (m[0][2] * m[1][0] - m[0][0] * m[1][2]) / det,
            ],
            [
                (m[1][0] * m[2][1] - m[1][1] * m[2][0]) / det,
                (m[0][1] * m[2][0] - m[0][0] * m[2][1]) / det,
                (m[0][0] * m[1][1] - m[0][1] * m[1][0]) / det,
            ],
        ];
        Some(Homography(inv).normalized())
    }

    /// The product `self ∘ other` (apply `other` first).
    pub fn compose(&self, other: &Homography) -> Homography {
        let (a, b) = (&self.0, &other.0);
        let mut r = [[0.0; 3]; 3];
        for (i, row) in r.iter_mut().enumerate() {
            for (j, v) in row.iter_mut().enumerate() {
                *v = (0..3).map(|k| a[i][k] * b[k][j]).sum();
            }
        }
        Homography(r)
    }

    /// Scaled so that the bottom-right entry is 1 (when it is not ~0).
    pub fn normalized(&self) -> Homography {
        let s = self.0[2][2];
        if s.abs() < 1e-15 {
            return *self;
        }
        Homography(self.0.map(|row| row.map(|v| v / s)))
    }

    /// Whether every entry is finite.
    pub fn is_finite(&self) -> bool {
        self.0.iter().flatten().all(|v| v.is_finite())
    }
}

/// A simple polygon (vertices in order, not closed).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Polygon(pub Vec<Point>);

impl Polygon {
    /// An axis-aligned rectangle centred at `c`, rotated by `angle_rad`.
    pub fn rect(c: Point, width: f64, height: f64, angle_rad: f64) -> Polygon {
        let (s, co) = angle_rad.sin_cos();
        let (hw, hh) = (width / 2.0, height / 2.0);
        Polygon(
            [(-hw, -hh), (hw, -hh), (hw, hh), (-hw, hh)]
                .iter()
                .map(|&(x, y)| Point::new(c.x + x * co - y * s, c.y + x * s + y * co))
                .collect(),
        )
    }

    /// A regular polygon approximating a circle.
    pub fn circle(c: Point, r: f64, sides: usize) -> Polygon {
        Polygon(
            (0..sides)
                .map(|i| {
                    let a = i as f64 / sides as f64 * std::f64::consts::TAU;
                    Point::new(c.x + r * a.cos(), c.y + r * a.sin())
                })
                .collect(),
        )
    }

    /// Signed area (positive counter-clockwise in a y-up frame).
    pub fn signed_area(&self) -> f64 {
        let v = &self.0;
        (0..v.len())
            .map(|i| {
                let (a, b) = (v[i], v[(i + 1) % v.len()]);
                a.x * b.y - b.x * a.y
            })
            .sum::<f64>()
            / 2.0
    }

    /// Centroid of the vertices' area.
    pub fn centroid(&self) -> Point {
        let v = &self.0;
        let a = self.signed_area();
        if a.abs() < 1e-12 {
            return Point::mean(v);
        }
        let (mut cx, mut cy) = (0.0, 0.0);
        for i in 0..v.len() {
            let (p, q) = (v[i], v[(i + 1) % v.len()]);
            let cross = p.x * q.y - q.x * p.y;
            cx += (p.x + q.x) * cross;
            cy += (p.y + q.y) * cross;
        }
        Point::new(cx / (6.0 * a), cy / (6.0 * a))
    }

    /// The unit direction of the polygon's long axis (from the second moments of its
    /// vertices), or `None` when it is not clearly elongated (long / short side < `min_ratio`):
    /// a hand zone drawn as a box runs along its row of cards.
    pub fn long_axis(&self, min_ratio: f64) -> Option<(f64, f64)> {
        let v = &self.0;
        if v.len() < 3 {
            return None;
        }
        let n = v.len() as f64;
        let (mx, my) = (v.iter().map(|p| p.x).sum::<f64>() / n, v.iter().map(|p| p.y).sum::<f64>() / n);
        let (mut sxx, mut syy, mut sxy) = (0.0, 0.0, 0.0);
        for p in v {
            let (dx, dy) = (p.x - mx, p.y - my);
            sxx += dx * dx;
            syy += dy * dy;
            sxy += dx * dy;
        }
        // eigenvalues of the 2×2 covariance; a side's length goes as the square root of its one
        let (half_tr, det) = ((sxx + syy) / 2.0, sxx * syy - sxy * sxy);
        let disc = (half_tr * half_tr - det).max(0.0).sqrt();
        let (big, small) = (half_tr + disc, (half_tr - disc).max(0.0));
        if small <= 0.0 || (big / small).sqrt() < min_ratio {
            return None;
        }
        let theta = 0.5 * (2.0 * sxy).atan2(sxx - syy);
        Some((theta.cos(), theta.sin()))
    }

    /// Whether `p` is inside (even-odd rule).
    pub fn contains(&self, p: Point) -> bool {
        let v = &self.0;
        let mut inside = false;
        let mut j = v.len().wrapping_sub(1);
        for i in 0..v.len() {
            let (a, b) = (v[i], v[j]);
            if (a.y > p.y) != (b.y > p.y) && p.x < (b.x - a.x) * (p.y - a.y) / (b.y - a.y) + a.x {
                inside = !inside;
            }
            j = i;
        }
        inside
    }

    fn edges(&self) -> impl Iterator<Item = (Point, Point)> + '_ {
        let v = &self.0;
        (0..v.len()).map(move |i| (v[i], v[(i + 1) % v.len()]))
    }

    /// Whether two non-adjacent edges cross.
    pub fn self_intersects(&self) -> bool {
        let n = self.0.len();
        let edges: Vec<_> = self.edges().collect();
        for i in 0..n {
            for j in i + 1..n {
                let adjacent = j == i + 1 || (i == 0 && j == n - 1);
                if !adjacent && segments_cross(edges[i], edges[j]) {
                    return true;
                }
            }
        }
        false
    }

    /// Whether the two polygons overlap (an edge crossing or one inside the other).
    pub fn overlaps(&self, other: &Polygon) -> bool {
        if self.edges().any(|e| other.edges().any(|f| segments_cross(e, f))) {
            return true;
        }
        // No crossing edges: one is inside the other, or they coincide.
        other.contains(self.centroid()) || self.contains(other.centroid())
    }
}

fn orient(a: Point, b: Point, c: Point) -> f64 {
    (b.x - a.x) * (c.y - a.y) - (b.y - a.y) * (c.x - a.x)
}

fn segments_cross((a, b): (Point, Point), (c, d): (Point, Point)) -> bool {
    let (d1, d2, d3, d4) = (orient(c, d, a), orient(c, d, b), orient(a, b, c), orient(a, b, d));
    (d1 > 0.0) != (d2 > 0.0) && (d3 > 0.0) != (d4 > 0.0) && d1 != 0.0 && d2 != 0.0 && d3 != 0.0 && d4 != 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homography_inverse_round_trips() {
        let h = Homography([[1.2, 0.1, 30.0], [-0.05, 0.9, 12.0], [1e-4, 2e-4, 1.0]]);
        let inv = h.inverse().unwrap();
        for p in [Point::new(0.0, 0.0), Point::new(500.0, -300.0), Point::new(-800.0, 900.0)] {
            let q = inv.apply(h.apply(p).unwrap()).unwrap();
            assert!(p.dist(q) < 1e-9, "{p:?} -> {q:?}");
        }
        assert!(Homography([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 0.0, 1.0]]).inverse().is_none());
    }

    #[test]
    fn a_box_zone_runs_along_its_long_side_and_a_square_or_circle_has_no_axis() {
        let a = Polygon::rect(Point::new(40.0, -7.0), 190.0, 150.0, 0.6).long_axis(1.2).unwrap();
        assert!((a.0 * 0.6f64.cos() + a.1 * 0.6f64.sin()).abs() > 0.9999, "{a:?}");
        let tall = Polygon::rect(Point::new(0.0, 0.0), 100.0, 300.0, 0.0).long_axis(1.2).unwrap();
        assert!(tall.1.abs() > 0.9999, "{tall:?}");
        assert_eq!(Polygon::rect(Point::new(0.0, 0.0), 100.0, 110.0, 0.2).long_axis(1.2), None);
        assert_eq!(Polygon::circle(Point::new(3.0, 4.0), 50.0, 24).long_axis(1.05), None);
    }

    #[test]
    fn polygons_contain_overlap_and_self_intersect() {
        let a = Polygon::rect(Point::new(0.0, 0.0), 10.0, 10.0, 0.3);
        let b = Polygon::rect(Point::new(8.0, 0.0), 10.0, 10.0, 0.0);
        let c = Polygon::rect(Point::new(30.0, 0.0), 10.0, 10.0, 0.0);
        assert!(a.contains(Point::new(1.0, 1.0)) && !a.contains(Point::new(9.0, 9.0)));
        assert!(a.overlaps(&b) && !a.overlaps(&c));
        assert!(Polygon::rect(Point::new(0.0, 0.0), 4.0, 4.0, 0.0).overlaps(&a), "one inside the other");
        let bowtie =
            Polygon(vec![Point::new(0.0, 0.0), Point::new(10.0, 10.0), Point::new(10.0, 0.0), Point::new(0.0, 10.0)]);
        assert!(bowtie.self_intersects() && !a.self_intersects());
        assert!((a.signed_area().abs() - 100.0).abs() < 1e-9);
        assert!(a.centroid().dist(Point::new(0.0, 0.0)) < 1e-9);
    }
}
