//! Dealers' hands and arms over the table: skin-toned palm and fingers, a
//! sleeve in dark (or white shirt) cloth, with a soft shadow on the felt.
use std::f64::consts::PI;

use super::buf::Buf;
use super::camera::Projector;
use super::draw::{fill, fill_alpha, polyline, soft_shadow};
use super::error::RenderError;
use super::labels::Labels;
use super::{Occluder, OccluderKind};
use crate::calib::Point;

/// Skin tones (sRGB), light to dark.
const SKIN: [[u8; 3]; 6] =
    [[238, 200, 170], [226, 178, 142], [204, 146, 108], [170, 114, 80], [126, 84, 58], [92, 60, 42]];
/// Sleeve cloth: black, navy, maroon waistcoat, white shirt.
const SLEEVE: [[u8; 3]; 4] = [[26, 26, 30], [30, 36, 64], [84, 22, 32], [226, 226, 230]];

fn shade(c: [u8; 3], k: f64) -> [u8; 3] {
    c.map(|v| (v as f64 * k).round().clamp(0.0, 255.0) as u8)
}

/// A part of the hand in its own frame (mm; +u towards the fingertips, +v to
/// the side of the thumb), with the height it floats at.
struct Part {
    pts: Vec<(f64, f64)>,
    z: f64,
    colour: [u8; 3],
    highlight: bool,
}

fn capsule(a: (f64, f64), b: (f64, f64), r0: f64, r1: f64) -> Vec<(f64, f64)> {
    let d = (b.0 - a.0, b.1 - a.1);
    let ang = d.1.atan2(d.0);
    let mut pts = Vec::new();
    for i in 0..=8 {
        let t = ang + PI / 2.0 + PI * i as f64 / 8.0;
        pts.push((a.0 + r0 * t.cos(), a.1 + r0 * t.sin()));
    }
    for i in 0..=8 {
        let t = ang - PI / 2.0 + PI * i as f64 / 8.0;
        pts.push((b.0 + r1 * t.cos(), b.1 + r1 * t.sin()));
    }
    pts
}

fn ellipse(c: (f64, f64), ru: f64, rv: f64) -> Vec<(f64, f64)> {
    (0..28)
        .map(|i| {
            let t = i as f64 / 28.0 * 2.0 * PI;
            (c.0 + ru * t.cos(), c.1 + rv * t.sin())
        })
        .collect()
}

fn parts(o: &Occluder) -> Vec<Part> {
    let skin = SKIN[(o.appearance_seed % SKIN.len() as u32) as usize];
    let sleeve = SLEEVE[((o.appearance_seed / 7) % SLEEVE.len() as u32) as usize];
    let cuff = if sleeve == SLEEVE[3] { [236, 236, 240] } else { [232, 232, 236] };
    let mut v = Vec::new();
    let (arm_len, open) = match o.kind {
        OccluderKind::Hand => (380.0, true),
        OccluderKind::Arm => (560.0, false),
    };
    // The sleeve rises towards the elbow.
    v.push(Part {
        pts: capsule((-78.0 - arm_len, 0.0), (-78.0, 0.0), 50.0, 40.0),
        z: 110.0,
        colour: sleeve,
        highlight: true,
    });
    v.push(Part { pts: capsule((-84.0, 0.0), (-70.0, 0.0), 38.0, 37.0), z: 80.0, colour: cuff, highlight: false });
    v.push(Part { pts: capsule((-70.0, 0.0), (-30.0, 0.0), 28.0, 32.0), z: 70.0, colour: skin, highlight: true });
    v.push(Part { pts: ellipse((0.0, 0.0), 50.0, 44.0), z: 60.0, colour: skin, highlight: true });
    if open {
        // Index to little finger, from the thumb's side; slightly spread.
        let fingers: [(f64, f64, f64); 4] =
            [(70.0, 9.5, 0.10), (76.0, 9.8, 0.03), (71.0, 9.3, -0.04), (56.0, 8.2, -0.12)];
        for (i, &(len, r, spread)) in fingers.iter().enumerate() {
            let v0 = 27.0 - 18.0 * i as f64;
            let a = (40.0, v0);
            let b = (40.0 + len * spread.cos(), v0 + len * spread.sin());
            v.push(Part { pts: capsule(a, b, r, r * 0.9), z: 45.0, colour: skin, highlight: true });
        }
        v.push(Part { pts: capsule((-8.0, 34.0), (34.0, 72.0), 12.0, 10.0), z: 50.0, colour: skin, highlight: true });
    } else {
        // A loose fist: knuckles and a tucked thumb.
        for i in 0..4 {
            let v0 = 27.0 - 18.0 * i as f64;
            v.push(Part { pts: ellipse((44.0, v0), 16.0, 10.5), z: 58.0, colour: shade(skin, 0.95), highlight: true });
        }
        v.push(Part { pts: capsule((0.0, 38.0), (36.0, 30.0), 12.0, 10.0), z: 62.0, colour: skin, highlight: true });
    }
    v
}

fn to_table(o: &Occluder, (u, v): (f64, f64)) -> Point {
    let (s, c) = o.angle_rad.sin_cos();
    let k = o.scale;
    Point::new(o.position_mm.x + k * (u * c - v * s), o.position_mm.y + k * (u * s + v * c))
}

/// Draws an occluder on the canvas and clears its pixels in the id buffer.
pub(crate) fn draw_occluder(
    canvas: &mut Buf,
    labels: &mut Labels,
    proj: &Projector,
    o: &Occluder,
) -> Result<(), RenderError> {
    let parts = parts(o);
    // The shadow on the felt, cast by light from above and slightly behind the camera.
    let shadow: Vec<Vec<Point>> = parts
        .iter()
        .filter_map(|p| {
            p.pts
                .iter()
                .map(|&q| {
                    let t = to_table(o, q);
                    proj.px(Point::new(t.x + 0.12 * p.z, t.y + 0.2 * p.z), 0.0)
                })
                .collect()
        })
        .collect();
    let px_per_mm = proj_scale(proj, o.position_mm);
    soft_shadow(canvas, &shadow, 14.0 * px_per_mm, 0.5)?;
    for p in &parts {
        let pts: Option<Vec<Point>> = p.pts.iter().map(|&q| proj.px(to_table(o, q), p.z)).collect();
        let Some(pts) = pts else { continue };
        fill(canvas, &pts, p.colour)?;
        polyline(canvas, &pts, true, shade(p.colour, 0.72), 1.0)?;
        if p.highlight {
            // A lighter core (the part's rounded top catching the light).
            let n = p.pts.len() as f64;
            let (cu, cv) = (p.pts.iter().map(|q| q.0).sum::<f64>() / n, p.pts.iter().map(|q| q.1).sum::<f64>() / n);
            let core: Option<Vec<Point>> = p
                .pts
                .iter()
                .map(|&(u, v)| proj.px(to_table(o, (cu + (u - cu) * 0.55, cv + (v - cv) * 0.45 + 3.0)), p.z + 2.0))
                .collect();
            if let Some(core) = core {
                fill_alpha(canvas, &core, p.colour.map(|v| (v as f64 * 0.7 + 255.0 * 0.3) as u8), 0.35)?;
            }
        }
        labels.fill(&pts, 0)?;
    }
    Ok(())
}

/// Canvas pixels per table millimetre near `p`.
pub(crate) fn proj_scale(proj: &Projector, p: Point) -> f64 {
    match (proj.px(p, 0.0), proj.px(Point::new(p.x + 10.0, p.y), 0.0)) {
        (Some(a), Some(b)) => a.dist(b) / 10.0,
        _ => 1.0,
    }
}
