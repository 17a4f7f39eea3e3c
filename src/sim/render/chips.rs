//! Chip stacks seen in perspective: each chip a short cylinder with edge
//! inserts, drawn bottom-up so that every chip's top hides the one below.
use std::f64::consts::TAU;

use super::buf::Buf;
use super::camera::Projector;
use super::draw::{convex_hull, fill, polyline, soft_shadow};
use super::error::RenderError;
use super::labels::Labels;
use super::table::CHIP_COLOURS;
use super::ChipStack;
use crate::calib::Point;
use crate::rng::Rng;

/// Chip radius, mm (39 mm casino chips).
pub const CHIP_RADIUS_MM: f64 = 19.5;
/// Chip thickness, mm.
pub const CHIP_THICKNESS_MM: f64 = 3.4;
const SIDES: usize = 40;
const INSERTS: usize = 6;

fn shade(c: [u8; 3], k: f64) -> [u8; 3] {
    c.map(|v| (v as f64 * k).round().clamp(0.0, 255.0) as u8)
}

fn circle(proj: &Projector, c: Point, r: f64, z: f64) -> Option<Vec<Point>> {
    (0..SIDES)
        .map(|i| {
            let a = i as f64 / SIDES as f64 * TAU;
            proj.px(Point::new(c.x + r * a.cos(), c.y + r * a.sin()), z)
        })
        .collect()
}

/// Draws one stack on the canvas and clears its pixels in the id buffer.
pub(crate) fn draw_stack(
    canvas: &mut Buf,
    labels: &mut Labels,
    proj: &Projector,
    st: &ChipStack,
) -> Result<(), RenderError> {
    if st.chips == 0 {
        return Ok(());
    }
    let c = st.center_mm;
    let r = CHIP_RADIUS_MM;
    let t = CHIP_THICKNESS_MM;
    let mut rng = Rng::seeded(u64::from(st.colour_seed) ^ 0xc41b);
    let base = CHIP_COLOURS[rng.below(CHIP_COLOURS.len() as u32) as usize];
    let phase = rng.unit_f64() * TAU;
    let Some(foot) = circle(proj, Point::new(c.x + 3.0, c.y + 5.0), r * 1.06, 0.0) else { return Ok(()) };
    soft_shadow(canvas, &[foot], 2.0, 0.45)?;
    let n = st.chips as usize;
    let mut outline = Vec::new();
    for k in 0..n {
        let colour = if k + 1 == n || rng.unit_f64() < 0.8 {
            base
        } else {
            CHIP_COLOURS[rng.below(CHIP_COLOURS.len() as u32) as usize]
        };
        let (z0, z1) = (k as f64 * t, (k + 1) as f64 * t);
        let (Some(bottom), Some(top)) = (circle(proj, c, r, z0), circle(proj, c, r, z1)) else { return Ok(()) };
        let hull = convex_hull(bottom.iter().chain(top.iter()).copied().collect());
        fill(canvas, &hull, shade(colour, 0.72))?;
        // Edge inserts where the wall faces the camera.
        let ph = phase + k as f64 * 0.7;
        for i in 0..INSERTS {
            let a = ph + i as f64 / INSERTS as f64 * TAU;
            if let Some(cam) = proj.camera_mm {
                if a.cos() * (cam[0] - c.x) + a.sin() * (cam[1] - c.y) <= 0.0 {
                    continue;
                }
            }
            let d = 0.16;
            let q: Option<Vec<Point>> = [(a - d, z0), (a + d, z0), (a + d, z1), (a - d, z1)]
                .iter()
                .map(|&(b, z)| proj.px(Point::new(c.x + r * b.cos(), c.y + r * b.sin()), z))
                .collect();
            if let Some(q) = q {
                fill(canvas, &q, [222, 220, 212])?;
            }
        }
        fill(canvas, &top, colour)?;
        if k + 1 == n {
            top_face(canvas, proj, c, z1, colour, ph)?;
        } else {
            polyline(canvas, &top, true, shade(colour, 0.55), 1.0)?;
        }
        outline = convex_hull(bottom.iter().chain(top.iter()).copied().chain(outline).collect());
    }
    labels.fill(&outline, 0)
}

/// The top chip's face: edge inserts, a printed inner ring and a lighter inlay.
fn top_face(
    canvas: &mut Buf,
    proj: &Projector,
    c: Point,
    z: f64,
    colour: [u8; 3],
    phase: f64,
) -> Result<(), RenderError> {
    let r = CHIP_RADIUS_MM;
    for i in 0..INSERTS {
        let a = phase + i as f64 / INSERTS as f64 * TAU;
        let d = 0.16;
        let q: Option<Vec<Point>> = [(a - d, 0.98), (a + d, 0.98), (a + d * 0.8, 0.74), (a - d * 0.8, 0.74)]
            .iter()
            .map(|&(b, k)| proj.px(Point::new(c.x + r * k * b.cos(), c.y + r * k * b.sin()), z))
            .collect();
        if let Some(q) = q {
            fill(canvas, &q, [236, 234, 226])?;
        }
    }
    if let Some(inlay) = circle(proj, c, r * 0.6, z) {
        let light = colour.map(|v| (v as f64 * 0.6 + 255.0 * 0.4).round() as u8);
        fill(canvas, &inlay, light)?;
        polyline(canvas, &inlay, true, shade(colour, 0.8), 1.0)?;
    }
    if let Some(ring) = circle(proj, c, r * 0.68, z) {
        polyline(canvas, &ring, true, [238, 236, 228], 1.0)?;
    }
    Ok(())
}
