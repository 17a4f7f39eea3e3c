//! Static 3-D objects on the table, drawn once per renderer in the camera's
//! view: the dealing shoe and the discard rack.
use super::buf::Buf;
use super::camera::Projector;
use super::draw::{fill, fill_alpha, polyline};
use super::error::RenderError;
use crate::calib::{Calibration, Point, Polygon, ZoneKind};

/// A box (or a wedge, with per-corner heights) standing on the table.
struct Solid {
    /// Footprint corners in order around it, mm.
    foot: [Point; 4],
    /// Height of the top above each footprint corner, mm.
    top: [f64; 4],
}

impl Solid {
    fn rect(c: Point, w: f64, h: f64, top: [f64; 4]) -> Solid {
        let p = Polygon::rect(c, w, h, 0.0).0;
        Solid { foot: [p[0], p[1], p[2], p[3]], top }
    }

    /// Side faces visible from the camera, each as (face index, canvas polygon).
    fn visible_sides(&self, proj: &Projector) -> Vec<(usize, Vec<Point>)> {
        let centre = Point::mean(&self.foot);
        let mut out = Vec::new();
        for i in 0..4 {
            let j = (i + 1) % 4;
            let (a, b) = (self.foot[i], self.foot[j]);
            let mid = Point::new((a.x + b.x) / 2.0, (a.y + b.y) / 2.0);
            let outward = (mid.x - centre.x, mid.y - centre.y);
            let visible = match proj.camera_mm {
                Some(c) => outward.0 * (c[0] - mid.x) + outward.1 * (c[1] - mid.y) > 0.0,
                None => false,
            };
            if !visible {
                continue;
            }
            let pts = [proj.px(a, 0.0), proj.px(b, 0.0), proj.px(b, self.top[j]), proj.px(a, self.top[i])];
            if let [Some(p0), Some(p1), Some(p2), Some(p3)] = pts {
                out.push((i, vec![p0, p1, p2, p3]));
            }
        }
        out
    }

    fn top_face(&self, proj: &Projector) -> Option<Vec<Point>> {
        (0..4).map(|i| proj.px(self.foot[i], self.top[i])).collect()
    }

    /// A point on the top face at fractions (s along edge 0→1, t along 0→3).
    fn top_at(&self, s: f64, t: f64) -> (Point, f64) {
        let f = &self.foot;
        let lerp = |a: Point, b: Point, k: f64| Point::new(a.x + (b.x - a.x) * k, a.y + (b.y - a.y) * k);
        let p = lerp(lerp(f[0], f[1], s), lerp(f[3], f[2], s), t);
        let z0 = self.top[0] + (self.top[1] - self.top[0]) * s;
        let z1 = self.top[3] + (self.top[2] - self.top[3]) * s;
        (p, z0 + (z1 - z0) * t)
    }
}

fn shade(c: [u8; 3], k: f64) -> [u8; 3] {
    c.map(|v| (v as f64 * k).round().clamp(0.0, 255.0) as u8)
}

const SIDE_SHADE: [f64; 4] = [0.75, 0.6, 0.9, 0.7];

/// Draws the shoe and the discard rack of `cal` on the canvas.
pub(crate) fn draw_props(
    canvas: &mut Buf,
    cal: &Calibration,
    proj: &Projector,
    back_rgb: [u8; 3],
) -> Result<(), RenderError> {
    for z in &cal.zones {
        let c = z.polygon_mm.centroid();
        match z.kind {
            ZoneKind::Shoe => shoe(canvas, proj, c, back_rgb)?,
            ZoneKind::Discard => discard_rack(canvas, proj, c, back_rgb)?,
            _ => {}
        }
    }
    Ok(())
}

fn soft_shadow(canvas: &mut Buf, proj: &Projector, s: &Solid, grow: f64) -> Result<(), RenderError> {
    let c = Point::mean(&s.foot);
    let pts: Option<Vec<Point>> = s
        .foot
        .iter()
        .map(|p| proj.px(Point::new(c.x + (p.x - c.x) * grow + 6.0, c.y + (p.y - c.y) * grow + 10.0), 0.0))
        .collect();
    if let Some(pts) = pts {
        fill_alpha(canvas, &pts, [0, 0, 0], 0.35)?;
    }
    Ok(())
}

/// The dealing shoe: a dark wedge, cards' edges seen through its sides and
/// the next card's back at the mouth.
fn shoe(canvas: &mut Buf, proj: &Projector, c: Point, back_rgb: [u8; 3]) -> Result<(), RenderError> {
    // Footprint corners: (−x,−y), (+x,−y), (+x,+y), (−x,+y); the mouth faces −x (the table's middle).
    let body = Solid::rect(c, 150.0, 96.0, [55.0, 105.0, 105.0, 55.0]);
    soft_shadow(canvas, proj, &body, 1.12)?;
    let dark = [34, 34, 38];
    for (i, face) in body.visible_sides(proj) {
        fill(canvas, &face, shade(dark, SIDE_SHADE[i]))?;
        if i == 0 || i == 2 {
            // The cards inside, seen through a side window: cream edges with lines.
            let (a, b) = (body.foot[i], body.foot[(i + 1) % 4]);
            let lerp = |k: f64| Point::new(a.x + (b.x - a.x) * k, a.y + (b.y - a.y) * k);
            let (za, zb) = (body.top[i], body.top[(i + 1) % 4]);
            let (k0, k1) = (0.12, 0.9);
            let z_at = |k: f64| (za + (zb - za) * k) * 0.78;
            let win: Option<Vec<Point>> = [(k0, 8.0), (k1, 8.0), (k1, z_at(k1)), (k0, z_at(k0))]
                .iter()
                .map(|&(k, z)| proj.px(lerp(k), z))
                .collect();
            if let Some(win) = win {
                fill(canvas, &win, [214, 206, 186])?;
                for n in 1..9 {
                    let f = n as f64 / 9.0;
                    let l: Option<Vec<Point>> = [(k0, 8.0 + (z_at(k0) - 8.0) * f), (k1, 8.0 + (z_at(k1) - 8.0) * f)]
                        .iter()
                        .map(|&(k, z)| proj.px(lerp(k), z))
                        .collect();
                    if let Some(l) = l {
                        polyline(canvas, &l, false, [170, 160, 140], 1.0)?;
                    }
                }
            }
        }
    }
    if let Some(top) = body.top_face(proj) {
        fill(canvas, &top, [52, 52, 58])?;
        // The slot and the next card's back at the mouth.
        let q: Option<Vec<Point>> = [(0.04, 0.15), (0.34, 0.15), (0.34, 0.85), (0.04, 0.85)]
            .iter()
            .map(|&(s, t)| {
                let (p, z) = body.top_at(s, t);
                proj.px(p, z + 1.0)
            })
            .collect();
        if let Some(q) = q {
            fill(canvas, &q, back_rgb)?;
            polyline(canvas, &q, true, [235, 230, 220], 1.0)?;
        }
        polyline(canvas, &top, true, [90, 90, 98], 1.0)?;
    }
    Ok(())
}

/// The discard rack: a smoked acrylic box with a stack of face-down cards.
fn discard_rack(canvas: &mut Buf, proj: &Projector, c: Point, back_rgb: [u8; 3]) -> Result<(), RenderError> {
    let rack = Solid::rect(c, 120.0, 100.0, [70.0; 4]);
    soft_shadow(canvas, proj, &rack, 1.08)?;
    // Floor of the rack.
    if let Some(f) = (0..4).map(|i| proj.px(rack.foot[i], 0.0)).collect::<Option<Vec<_>>>() {
        fill(canvas, &f, [40, 36, 38])?;
    }
    // The stack: cards lying flat, 40 mm high.
    let stack = Solid::rect(c, 92.0, 66.0, [40.0; 4]);
    for (i, face) in stack.visible_sides(proj) {
        fill(canvas, &face, shade([220, 212, 192], SIDE_SHADE[i]))?;
        let (a, b) = (stack.foot[i], stack.foot[(i + 1) % 4]);
        for n in 1..12 {
            let z = 40.0 * n as f64 / 12.0;
            if let (Some(p), Some(q)) = (proj.px(a, z), proj.px(b, z)) {
                polyline(canvas, &[p, q], false, [165, 155, 138], 1.0)?;
            }
        }
    }
    if let Some(top) = stack.top_face(proj) {
        fill(canvas, &top, back_rgb)?;
        let inner: Option<Vec<Point>> = [(0.06, 0.08), (0.94, 0.08), (0.94, 0.92), (0.06, 0.92)]
            .iter()
            .map(|&(s, t)| {
                let (p, z) = stack.top_at(s, t);
                proj.px(p, z)
            })
            .collect();
        if let Some(inner) = inner {
            polyline(canvas, &inner, true, [236, 230, 222], 1.5)?;
        }
    }
    // Smoked acrylic walls and rim.
    for (i, face) in rack.visible_sides(proj) {
        fill_alpha(canvas, &face, shade([70, 60, 66], SIDE_SHADE[i]), 0.55)?;
    }
    if let Some(top) = rack.top_face(proj) {
        polyline(canvas, &top, true, [150, 140, 150], 2.0)?;
    }
    Ok(())
}
