//! Plane geometry of detections: the quadrilateral convention, rotated rectangles, convex polygon
//! intersection over union and the minimum-area rectangle of a point set.
//!
//! **Quadrilateral convention** (everywhere in tablecam's recognition): 4 corners in image
//! pixels, ordered clockwise as seen on screen (image y points down), starting from the corner
//! closest to the image's top-left, i.e. the one with the smallest `x + y` (ties: smaller `y`).
//! [`order_quad`] puts any 4 corners of a convex quadrilateral in that order.
use crate::calib::Point;

/// Four corners in the [module's convention](self).
pub type Quad = [Point; 4];

/// Orders the corners of a convex quadrilateral by the convention: clockwise on screen, starting
/// from the smallest `x + y` (ties broken by the smaller `y`).
pub fn order_quad(corners: [Point; 4]) -> Quad {
    let Point { x: cx, y: cy } = Point::mean(&corners);
    let mut pts = corners;
    // With y down, increasing atan2 turns from +x towards +y: clockwise on screen.
    pts.sort_by(|a, b| (a.y - cy).atan2(a.x - cx).total_cmp(&(b.y - cy).atan2(b.x - cx)));
    // A tolerance keeps the start stable for a rectangle at exactly 45°, where two corners tie.
    let scale = pts.iter().map(|p| p.x.abs() + p.y.abs()).fold(1.0, f64::max);
    let eps = 1e-9 * scale;
    let mut start = 0;
    for i in 1..4 {
        let (s, b) = (pts[i].x + pts[i].y, pts[start].x + pts[start].y);
        if s < b - eps || (s <= b + eps && pts[i].y < pts[start].y) {
            start = i;
        }
    }
    pts.rotate_left(start);
    pts
}

/// A rectangle of any orientation: centre, angle of its long axis and side lengths.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RotatedRect {
    /// Centre.
    pub center: Point,
    /// Angle of the long axis from the image x axis, radians, in `[0, π)` (a rectangle's axis
    /// has no direction).
    pub angle: f64,
    /// Long side length.
    pub long: f64,
    /// Short side length.
    pub short: f64,
}

/// `a` reduced to `[0, π)`.
pub fn wrap_half_turn(a: f64) -> f64 {
    let r = a.rem_euclid(std::f64::consts::PI);
    if r >= std::f64::consts::PI {
        0.0
    } else {
        r
    }
}

impl RotatedRect {
    /// A rectangle; `long` and `short` are swapped (and the angle turned by 90°) if given the
    /// wrong way round, and the angle is reduced to `[0, π)`.
    pub fn new(center: Point, angle: f64, long: f64, short: f64) -> RotatedRect {
        let (long, short, angle) =
            if long >= short { (long, short, angle) } else { (short, long, angle + std::f64::consts::FRAC_PI_2) };
        RotatedRect { center, angle: wrap_half_turn(angle), long, short }
    }

    /// Unit vector along the long axis.
    pub fn long_axis(&self) -> Point {
        Point::new(self.angle.cos(), self.angle.sin())
    }

    /// The corners, in the quadrilateral convention.
    pub fn quad(&self) -> Quad {
        let u = self.long_axis();
        let v = Point::new(-u.y, u.x);
        let (hl, hs) = (self.long / 2.0, self.short / 2.0);
        order_quad([(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)].map(|(a, b)| {
            Point::new(self.center.x + a * hl * u.x + b * hs * v.x, self.center.y + a * hl * u.y + b * hs * v.y)
        }))
    }

    /// The rectangle that best fits a quadrilateral given in order around it (either direction):
    /// centre = mean of the corners, sides = means of opposite edges, angle = that of the longer
    /// pair of edges.
    pub fn from_quad(q: &[Point; 4]) -> RotatedRect {
        let center = Point::mean(q);
        let e = |i: usize| Point::new(q[(i + 1) % 4].x - q[i].x, q[(i + 1) % 4].y - q[i].y);
        let len = |p: Point| p.x.hypot(p.y);
        let (a, b) = ((len(e(0)) + len(e(2))) / 2.0, (len(e(1)) + len(e(3))) / 2.0);
        // Opposite edges run in opposite directions, so their difference is twice their mean.
        let (long, short, dir) = if a >= b {
            (a, b, Point::new(e(0).x - e(2).x, e(0).y - e(2).y))
        } else {
            (b, a, Point::new(e(1).x - e(3).x, e(1).y - e(3).y))
        };
        RotatedRect::new(center, dir.y.atan2(dir.x), long, short)
    }

    /// A point given in the card's own normalised frame: `nx` across the short side, `ny` along
    /// the long side, both 0..1, as on an upright card image (x right, y down), so that
    /// `(0.11, 0.16)` is near a printed index corner. Of the two upright frames (180° apart) this
    /// takes the one whose y axis is the long axis direction; the other maps `(nx, ny)` to
    /// `(1 − nx, 1 − ny)`, and index corners come in such pairs.
    pub fn card_point(&self, nx: f64, ny: f64) -> Point {
        let y_axis = self.long_axis();
        // The card seen from above is not mirrored: its x axis is its y axis turned by −90°.
        let x_axis = Point::new(y_axis.y, -y_axis.x);
        let (a, b) = ((nx - 0.5) * self.short, (ny - 0.5) * self.long);
        Point::new(self.center.x + a * x_axis.x + b * y_axis.x, self.center.y + a * x_axis.y + b * y_axis.y)
    }

    /// The sides (width, height) of the axis-aligned box around a `w_frac · short` ×
    /// `h_frac · long` rectangle aligned with the card.
    pub fn aligned_box_extent(&self, w_frac: f64, h_frac: f64) -> (f64, f64) {
        let (w, h) = (w_frac * self.short, h_frac * self.long);
        let (s, c) = self.angle.sin_cos();
        // The box's height runs along the long axis (c, s), its width across it.
        (h * c.abs() + w * s.abs(), h * s.abs() + w * c.abs())
    }

    /// Area.
    pub fn area(&self) -> f64 {
        self.long * self.short
    }
}

fn signed_area(poly: &[Point]) -> f64 {
    let n = poly.len();
    (0..n).map(|i| poly[i].x * poly[(i + 1) % n].y - poly[(i + 1) % n].x * poly[i].y).sum::<f64>() / 2.0
}

/// Area of a simple polygon.
pub fn polygon_area(poly: &[Point]) -> f64 {
    signed_area(poly).abs()
}

fn cross(o: Point, a: Point, b: Point) -> f64 {
    (a.x - o.x) * (b.y - o.y) - (a.y - o.y) * (b.x - o.x)
}

/// The intersection of two convex polygons (Sutherland–Hodgman), as a convex polygon (possibly
/// empty).
pub fn intersect_convex(a: &[Point], b: &[Point]) -> Vec<Point> {
    let orient = |p: &[Point]| {
        let mut v = p.to_vec();
        if signed_area(&v) < 0.0 {
            v.reverse();
        }
        v
    };
    let clip = orient(b);
    let mut out = orient(a);
    for i in 0..clip.len() {
        if out.is_empty() {
            break;
        }
        let (c0, c1) = (clip[i], clip[(i + 1) % clip.len()]);
        let input = std::mem::take(&mut out);
        for j in 0..input.len() {
            let (p, q) = (input[j], input[(j + 1) % input.len()]);
            let (dp, dq) = (cross(c0, c1, p), cross(c0, c1, q));
            if dp >= 0.0 {
                out.push(p);
            }
            if (dp >= 0.0) != (dq >= 0.0) {
                let t = dp / (dp - dq);
                out.push(Point::new(p.x + t * (q.x - p.x), p.y + t * (q.y - p.y)));
            }
        }
    }
    out
}

/// Intersection over union of two convex polygons (0 when either has no area).
pub fn polygon_iou(a: &[Point], b: &[Point]) -> f64 {
    let (aa, ab) = (polygon_area(a), polygon_area(b));
    if aa <= 0.0 || ab <= 0.0 {
        return 0.0;
    }
    let inter = polygon_area(&intersect_convex(a, b));
    let union = aa + ab - inter;
    if union <= 0.0 {
        0.0
    } else {
        (inter / union).clamp(0.0, 1.0)
    }
}

/// The corners of an axis-aligned box `[x1, y1, x2, y2]`, in the quadrilateral convention.
pub fn box_quad(b: [f64; 4]) -> Quad {
    [Point::new(b[0], b[1]), Point::new(b[2], b[1]), Point::new(b[2], b[3]), Point::new(b[0], b[3])]
}

/// The axis-aligned box `[x1, y1, x2, y2]` around some points.
pub fn bounding_box<'a>(points: impl IntoIterator<Item = &'a Point>) -> [f64; 4] {
    points.into_iter().fold([f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY], |b, p| {
        [b[0].min(p.x), b[1].min(p.y), b[2].max(p.x), b[3].max(p.y)]
    })
}

/// Whether two axis-aligned boxes `[x1, y1, x2, y2]` come within `margin` of each other
/// (touching counts).
pub fn boxes_meet(a: [f64; 4], b: [f64; 4], margin: f64) -> bool {
    b[2] >= a[0] - margin && b[0] <= a[2] + margin && b[3] >= a[1] - margin && b[1] <= a[3] + margin
}

/// Intersection over union of two axis-aligned boxes `[x1, y1, x2, y2]`.
pub fn box_iou(a: [f64; 4], b: [f64; 4]) -> f64 {
    let iw = (a[2].min(b[2]) - a[0].max(b[0])).max(0.0);
    let ih = (a[3].min(b[3]) - a[1].max(b[1])).max(0.0);
    let inter = iw * ih;
    let union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
    if union <= 0.0 {
        0.0
    } else {
        inter / union
    }
}

/// Convex hull (Andrew's monotone chain), positive signed area; collinear points dropped.
pub fn convex_hull(points: &[Point]) -> Vec<Point> {
    let mut pts: Vec<Point> = points.iter().copied().filter(|p| p.x.is_finite() && p.y.is_finite()).collect();
    pts.sort_by(|a, b| a.x.total_cmp(&b.x).then(a.y.total_cmp(&b.y)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let mut hull: Vec<Point> = Vec::with_capacity(pts.len() * 2);
    for pass in 0..2 {
        let start = hull.len();
        let iter: Box<dyn Iterator<Item = &Point>> =
            if pass == 0 { Box::new(pts.iter()) } else { Box::new(pts.iter().rev()) };
        for &p in iter {
            while hull.len() >= start + 2 && cross(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0 {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

/// The smallest-area rectangle containing `points` (rotating calipers over the convex hull; the
/// optimum has a side on a hull edge). `None` for fewer than one finite point.
pub fn min_area_rect(points: &[Point]) -> Option<RotatedRect> {
    let hull = convex_hull(points);
    match hull.len() {
        0 => return None,
        1 => return Some(RotatedRect::new(hull[0], 0.0, 0.0, 0.0)),
        2 => {
            let (a, b) = (hull[0], hull[1]);
            let c = Point::new((a.x + b.x) / 2.0, (a.y + b.y) / 2.0);
            return Some(RotatedRect::new(c, (b.y - a.y).atan2(b.x - a.x), a.dist(b), 0.0));
        }
        _ => {}
    }
    let mut best: Option<(f64, RotatedRect)> = None;
    for i in 0..hull.len() {
        let (p, q) = (hull[i], hull[(i + 1) % hull.len()]);
        let len = p.dist(q);
        if len == 0.0 {
            continue;
        }
        let u = Point::new((q.x - p.x) / len, (q.y - p.y) / len);
        let v = Point::new(-u.y, u.x);
        let (mut u0, mut u1, mut v0, mut v1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for h in &hull {
            let (a, b) = (h.x * u.x + h.y * u.y, h.x * v.x + h.y * v.y);
            (u0, u1, v0, v1) = (u0.min(a), u1.max(a), v0.min(b), v1.max(b));
        }
        let area = (u1 - u0) * (v1 - v0);
        if !matches!(&best, Some((a, _)) if area >= *a) {
            let (cu, cv) = ((u0 + u1) / 2.0, (v0 + v1) / 2.0);
            let c = Point::new(cu * u.x + cv * v.x, cu * u.y + cv * v.y);
            best = Some((area, RotatedRect::new(c, u.y.atan2(u.x), u1 - u0, v1 - v0)));
        }
    }
    best.map(|(_, r)| r)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f64, y: f64) -> Point {
        Point::new(x, y)
    }

    fn close(a: Point, b: Point) -> bool {
        a.dist(b) < 1e-6
    }

    #[test]
    fn order_quad_starts_top_left_and_turns_clockwise_on_screen() {
        let want = [p(0.0, 0.0), p(10.0, 0.0), p(10.0, 5.0), p(0.0, 5.0)];
        for perm in [[0, 1, 2, 3], [2, 0, 3, 1], [3, 2, 1, 0], [1, 3, 0, 2]] {
            let got = order_quad(perm.map(|i| want[i]));
            assert!(got.iter().zip(&want).all(|(a, b)| close(*a, *b)), "{perm:?}: {got:?}");
        }
        // A tilted quad: start at the smallest x + y, then clockwise (positive shoelace with y down).
        let tilted = [p(50.0, 10.0), p(90.0, 40.0), p(60.0, 80.0), p(20.0, 50.0)];
        let got = order_quad([tilted[2], tilted[0], tilted[3], tilted[1]]);
        assert!(close(got[0], tilted[0]) && close(got[1], tilted[1]) && close(got[3], tilted[3]), "{got:?}");
        assert!(signed_area(&got) > 0.0);
        // A diamond: the top and left corners tie on x + y; the top one (smaller y) wins.
        let diamond = order_quad([p(20.0, 10.0), p(10.0, 20.0), p(0.0, 10.0), p(10.0, 0.0)]);
        assert!(close(diamond[0], p(10.0, 0.0)) && close(diamond[1], p(20.0, 10.0)), "{diamond:?}");
    }

    #[test]
    fn rotated_rect_round_trips_through_its_quad() {
        for (angle, long, short) in [(0.0, 80.0, 50.0), (0.7, 88.0, 63.0), (2.9, 30.0, 29.0), (3.1, 72.0, 50.0)] {
            let r = RotatedRect::new(p(300.0, 200.0), angle, long, short);
            let q = r.quad();
            assert!((polygon_area(&q) - long * short).abs() < 1e-6);
            for corner in q {
                assert!((corner.dist(r.center) - long.hypot(short) / 2.0).abs() < 1e-9);
            }
            let back = RotatedRect::from_quad(&q);
            assert!(
                close(back.center, r.center) && (back.long - long).abs() < 1e-9 && (back.short - short).abs() < 1e-9
            );
            let d = (back.angle - r.angle).abs();
            assert!(d < 1e-9 || (d - std::f64::consts::PI).abs() < 1e-9, "{angle}: {} vs {}", back.angle, r.angle);
        }
        // Sides given the wrong way round are swapped and the long axis turned.
        let r = RotatedRect::new(p(0.0, 0.0), 0.0, 10.0, 40.0);
        assert_eq!((r.long, r.short), (40.0, 10.0));
        assert!((r.angle - std::f64::consts::FRAC_PI_2).abs() < 1e-12);
    }

    #[test]
    fn card_points_of_an_upright_card() {
        // Long axis pointing down the image: the card stands upright, its x axis to the right.
        let r = RotatedRect::new(p(100.0, 100.0), std::f64::consts::FRAC_PI_2, 100.0, 60.0);
        assert!(close(r.card_point(0.0, 0.0), p(70.0, 50.0)), "{:?}", r.card_point(0.0, 0.0));
        assert!(close(r.card_point(1.0, 1.0), p(130.0, 150.0)));
        // The other upright frame (long axis pointing up) swaps the two index corners.
        let flipped = RotatedRect { angle: -std::f64::consts::FRAC_PI_2, ..r };
        assert!(close(flipped.card_point(0.11, 0.16), r.card_point(0.89, 0.84)));
        let (w, h) = r.aligned_box_extent(0.16, 0.30);
        assert!((w - 9.6).abs() < 1e-9 && (h - 30.0).abs() < 1e-9, "{w} {h}");
    }

    #[test]
    fn polygon_iou_of_known_overlaps() {
        let a = box_quad([0.0, 0.0, 10.0, 10.0]);
        let b = box_quad([5.0, 0.0, 15.0, 10.0]);
        assert!((polygon_iou(&a, &b) - 50.0 / 150.0).abs() < 1e-12);
        assert!((polygon_iou(&a, &a) - 1.0).abs() < 1e-12);
        assert_eq!(polygon_iou(&a, &box_quad([20.0, 20.0, 30.0, 30.0])), 0.0);
        // Orientation does not matter.
        let mut rev = b;
        rev.reverse();
        assert!((polygon_iou(&a, &rev) - 50.0 / 150.0).abs() < 1e-12);
        // A square and the same square turned 45° about its centre: the octagon is 2(√2 − 1) of it.
        let s = RotatedRect::new(p(0.0, 0.0), 0.0, 2.0, 2.0).quad();
        let t = RotatedRect::new(p(0.0, 0.0), std::f64::consts::FRAC_PI_4, 2.0, 2.0).quad();
        let octagon = 8.0 * (std::f64::consts::SQRT_2 - 1.0);
        assert!((polygon_iou(&s, &t) - octagon / (8.0 - octagon)).abs() < 1e-9);
        assert!((box_iou([0.0, 0.0, 10.0, 10.0], [5.0, 0.0, 15.0, 10.0]) - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn min_area_rect_recovers_a_rotated_rectangle() {
        let r = RotatedRect::new(p(40.0, -20.0), 0.4, 50.0, 20.0);
        let mut pts = r.quad().to_vec();
        pts.push(r.center);
        pts.push(Point::new(r.center.x + 3.0, r.center.y - 2.0));
        let m = min_area_rect(&pts).unwrap();
        assert!(close(m.center, r.center) && (m.long - 50.0).abs() < 1e-9 && (m.short - 20.0).abs() < 1e-9);
        assert!((m.angle - 0.4).abs() < 1e-9, "{}", m.angle);
        assert!(min_area_rect(&[]).is_none());
    }
}
