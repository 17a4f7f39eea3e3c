//! The static table drawn in the table plane (millimetres scaled to pixels):
//! cloth, printed layout, rail, dealer's edge, chip tray and the floor around.
use std::f64::consts::{FRAC_PI_2, PI};

use opencv::core::Size;
use opencv::imgproc;

use super::buf::Buf;
use super::draw::{arc_text, fill, polyline, stamp_text, FONT, TITLE_FONT};
use super::error::{CvContext, RenderError};
use super::style::{FeltTexture, TableStyle};
use crate::calib::layout::{self, TABLE_RADIUS_MM};
use crate::calib::{Calibration, Point, ZoneKind};
use crate::rng::Rng;
use crate::rules::{BetKind, Ruleset, RulesetId};

/// Width of the padded rail around the arc, mm.
pub(crate) const RAIL_MM: f64 = 115.0;
/// Depth of the wooden rim along the dealer's edge, mm.
const RIM_MM: f64 = 22.0;
/// The chip tray in front of the dealer (x0, y0, x1, y1), mm.
const TRAY_MM: [f64; 4] = [-230.0, 14.0, 230.0, 118.0];

/// The table plane as an image seen from above (x to the right, y up, so that
/// text drawn upright on it is not mirrored on the table): pixel (u, v) has
/// its centre at `(x0 + (u + ½) / px_per_mm, y_top − (v + ½) / px_per_mm)`
/// with `origin_mm = (x0, y_top)`.
pub(crate) struct Plane {
    pub buf: Buf,
    pub origin_mm: Point,
    pub px_per_mm: f64,
}

impl Plane {
    /// Table millimetres → plane pixels.
    pub fn px(&self, p: Point) -> Point {
        Point::new((p.x - self.origin_mm.x) * self.px_per_mm - 0.5, (self.origin_mm.y - p.y) * self.px_per_mm - 0.5)
    }

    /// Table millimetres of the centre of plane pixel (u, v).
    pub fn mm(&self, u: f64, v: f64) -> Point {
        Point::new(self.origin_mm.x + (u + 0.5) / self.px_per_mm, self.origin_mm.y - (v + 0.5) / self.px_per_mm)
    }

    /// Plane pixels → table millimetres, as a homography.
    pub fn px_to_mm(&self) -> crate::calib::Homography {
        let k = 1.0 / self.px_per_mm;
        crate::calib::Homography([
            [k, 0.0, self.origin_mm.x + 0.5 * k],
            [0.0, -k, self.origin_mm.y - 0.5 * k],
            [0.0, 0.0, 1.0],
        ])
    }
}

/// The floor's colour (also the warp's border colour).
pub(crate) const FLOOR_RGB: [u8; 3] = [30, 20, 24];

/// Draws the table of `cal` covering `[x0, x1] × [y0, y1]` mm.
pub(crate) fn draw_plane(
    cal: &Calibration,
    style: &TableStyle,
    px_per_mm: f64,
    extent_mm: [f64; 4],
) -> Result<Plane, RenderError> {
    let [x0, y0, x1, y1] = extent_mm;
    let w = ((x1 - x0) * px_per_mm).ceil() as i32;
    let h = ((y1 - y0) * px_per_mm).ceil() as i32;
    let mut plane = Plane { buf: Buf::zeros(w, h, 3), origin_mm: Point::new(x0, y1), px_per_mm };
    base_regions(&mut plane, style);
    chip_tray(&mut plane, style.texture_seed)?;
    print_layout(&mut plane, cal, style)?;
    texture(&mut plane, style)?;
    Ok(plane)
}

#[derive(Clone, Copy, PartialEq)]
enum Region {
    Felt,
    Rail,
    Rim,
    Floor,
}

fn region(p: Point) -> Region {
    let r = p.x.hypot(p.y);
    if p.y >= 0.0 && r < TABLE_RADIUS_MM {
        Region::Felt
    } else if p.y >= 0.0 && r < TABLE_RADIUS_MM + RAIL_MM {
        Region::Rail
    } else if p.y < 0.0 && p.y >= -RIM_MM && p.x.abs() < TABLE_RADIUS_MM + RAIL_MM {
        Region::Rim
    } else {
        Region::Floor
    }
}

fn mix(a: [f64; 3], b: [f64; 3], t: f64) -> [f64; 3] {
    [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t]
}

fn rgbf(c: [u8; 3]) -> [f64; 3] {
    c.map(f64::from)
}

/// Flat colours of felt, rail (with its rounded shading), rim and floor.
fn base_regions(plane: &mut Plane, style: &TableStyle) {
    let (w, h) = (plane.buf.w as usize, plane.buf.h as usize);
    let felt = rgbf(style.felt_rgb);
    let rail = rgbf(style.rail_rgb);
    let brass = [150.0, 112.0, 60.0];
    let wood = [70.0, 40.0, 24.0];
    let floor_a = rgbf(FLOOR_RGB);
    let floor_b = [62.0, 36.0, 30.0];
    for v in 0..h {
        let y = plane.mm(0.0, v as f64).y;
        for u in 0..w {
            let x = plane.mm(u as f64, 0.0).x;
            let p = Point::new(x, y);
            let c = match region(p) {
                Region::Felt => felt,
                Region::Rail => {
                    let r = x.hypot(y);
                    let t = (r - TABLE_RADIUS_MM) / RAIL_MM;
                    if t < 0.07 {
                        // The brass-and-wood inner edge of the armrest.
                        mix(brass, wood, t / 0.07 * 0.6)
                    } else {
                        let t = (t - 0.07) / 0.93;
                        let shade = 0.35 + 0.75 * (PI * t).sin().powf(0.7);
                        let spec = 0.55 * (-((t - 0.38) / 0.09).powi(2)).exp();
                        let mut c = rail.map(|v| v * shade);
                        for v in c.iter_mut() {
                            *v += spec * 90.0;
                        }
                        c
                    }
                }
                Region::Rim => mix(wood, [40.0, 24.0, 16.0], ((-y) / RIM_MM).clamp(0.0, 1.0)),
                Region::Floor => {
                    // A dark patterned casino carpet.
                    let m = 0.5 + 0.5 * (x / 38.0).sin() * (y / 38.0).sin();
                    let n = 0.5 + 0.5 * ((x + y) / 97.0).sin() * ((x - y) / 97.0).cos();
                    mix(floor_a, floor_b, 0.45 * m * n)
                }
            };
            let i = (v * w + u) * 3;
            for ch in 0..3 {
                plane.buf.data[i + ch] = c[ch].round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

/// The dealer's chip tray: tubes of chips lying on edge.
fn chip_tray(plane: &mut Plane, seed: u64) -> Result<(), RenderError> {
    let [tx0, ty0, tx1, ty1] = TRAY_MM;
    let mut rng = Rng::seeded(seed ^ 0x7a7);
    let tubes = 10;
    let tube_w = (tx1 - tx0) / tubes as f64;
    let colours: Vec<[f64; 3]> =
        (0..tubes).map(|_| rgbf(CHIP_COLOURS[rng.below(CHIP_COLOURS.len() as u32) as usize])).collect();
    let fill_to: Vec<f64> = (0..tubes).map(|_| ty0 + 8.0 + rng.unit_f64() * 30.0).collect();
    let p0 = plane.px(Point::new(tx0, ty0));
    let p1 = plane.px(Point::new(tx1, ty1));
    let (w, h) = (plane.buf.w, plane.buf.h);
    let (v0, v1) = (p0.y.min(p1.y).floor() as i32, p0.y.max(p1.y).ceil() as i32);
    for v in v0.max(0)..v1.min(h) {
        let y = plane.mm(0.0, v as f64).y;
        for u in (p0.x.floor() as i32).max(0)..(p1.x.ceil() as i32).min(w) {
            let x = plane.mm(u as f64, 0.0).x;
            if !(tx0..tx1).contains(&x) || !(ty0..ty1).contains(&y) {
                continue;
            }
            let k = (((x - tx0) / tube_w) as usize).min(tubes - 1);
            let dx = (x - tx0) - (k as f64 + 0.5) * tube_w; // across the tube
            let edge = (ty1 - y).min(y - ty0).min((x - tx0).min(tx1 - x));
            let c = if edge < 4.0 {
                [48.0, 46.0, 48.0]
            } else if dx.abs() > tube_w / 2.0 - 2.5 {
                [22.0, 22.0, 24.0]
            } else if y < fill_to[k] {
                // Empty end of the tube.
                [16.0, 16.0, 18.0]
            } else {
                let chip = ((y - fill_to[k]) / 3.4).floor();
                let within = (y - fill_to[k]) / 3.4 - chip;
                let across = dx / (tube_w / 2.0 - 2.5);
                let shade = 0.45 + 0.55 * (1.0 - across * across).max(0.0).sqrt();
                let insert = ((across * 3.0 + chip * 0.5).rem_euclid(1.0)) < 0.22;
                let base = if insert { [235.0, 232.0, 225.0] } else { colours[k] };
                let line = if within < 0.18 { 0.55 } else { 1.0 };
                base.map(|c| c * shade * line)
            };
            let i = ((v * w + u) * 3) as usize;
            for ch in 0..3 {
                plane.buf.data[i + ch] = c[ch].round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    Ok(())
}

/// Casino chip colours (sRGB).
pub(crate) const CHIP_COLOURS: [[u8; 3]; 9] = [
    [225, 222, 214], // white
    [190, 30, 36],   // red
    [30, 130, 70],   // green
    [28, 28, 32],    // black
    [110, 50, 140],  // purple
    [232, 190, 40],  // yellow
    [34, 80, 170],   // blue
    [230, 120, 30],  // orange
    [220, 120, 160], // pink
];

fn bet_label(bet: BetKind) -> &'static str {
    match bet {
        BetKind::Ante => "ANTE",
        BetKind::Play => "PLAY",
        BetKind::Raise => "RAISE",
        BetKind::PairPlus => "PAIR PLUS",
        BetKind::SixCardBonus => "6 CARD BONUS",
        BetKind::Progressive => "JACKPOT",
        BetKind::Bet => "BET",
    }
}

fn title(id: RulesetId) -> (&'static str, Option<&'static str>) {
    match id {
        RulesetId::Fortune3cp2025 | RulesetId::Fortune3cp2008 => {
            ("FORTUNE 3 CARD POKER", Some("DEALER PLAYS WITH QUEEN HIGH OR BETTER"))
        }
        RulesetId::Stud2004 => ("CARIBBEAN STUD POKER", Some("DEALER QUALIFIES WITH ACE KING OR BETTER")),
        RulesetId::Qpoker2004 => ("Q POKER", Some("DEALER PLAYS WITH QUEEN HIGH OR BETTER")),
        RulesetId::Sangong1996 => ("SAN GONG", Some("BANKER PAYS ACCORDING TO POSTED ODDS")),
    }
}

/// Circles, boxes and text printed on the cloth.
fn print_layout(plane: &mut Plane, cal: &Calibration, style: &TableStyle) -> Result<(), RenderError> {
    let s = plane.px_per_mm;
    let rs = Ruleset::new(cal.ruleset);
    let seats = layout::seats_of(&rs);
    let print = style.print_rgb;
    let accent = style.accent_rgb;
    let line = (2.2 * s).max(1.0);
    let thin = (1.0 * s).max(1.0);

    // The racetrack line inside the rail.
    let arc = |r: f64| -> Vec<Point> {
        (0..=180)
            .map(|i| {
                let a = PI * i as f64 / 180.0;
                Point::new(r * a.cos(), r * a.sin().max(0.0))
            })
            .collect()
    };
    let track: Vec<Point> = arc(TABLE_RADIUS_MM - 42.0).into_iter().map(|p| plane.px(p)).collect();
    polyline(&mut plane.buf, &track, false, accent, line)?;

    for z in &cal.zones {
        let pts: Vec<Point> = z.polygon_mm.0.iter().map(|&p| plane.px(p)).collect();
        let c = z.polygon_mm.centroid();
        match z.kind {
            ZoneKind::BetSpot { seat, bet } => {
                let r = z.polygon_mm.0.iter().map(|p| p.dist(c)).sum::<f64>() / z.polygon_mm.0.len() as f64;
                // The seat's direction as an angle on the plane image (y is flipped).
                let a = -layout::seat_angle(seat, seats);
                let cp = plane.px(c);
                let ring = |rr: f64| -> Vec<Point> {
                    (0..72)
                        .map(|i| {
                            let t = i as f64 / 72.0 * std::f64::consts::TAU;
                            Point::new(cp.x + rr * s * t.cos(), cp.y + rr * s * t.sin())
                        })
                        .collect()
                };
                match bet {
                    BetKind::PairPlus => {
                        // A diamond around the circle.
                        let d: Vec<Point> = (0..4)
                            .map(|i| {
                                let t = a + FRAC_PI_2 * i as f64;
                                Point::new(cp.x + r * 1.18 * s * t.cos(), cp.y + r * 1.18 * s * t.sin())
                            })
                            .collect();
                        polyline(&mut plane.buf, &d, true, print, line)?;
                        polyline(&mut plane.buf, &ring(r * 0.8), true, print, thin)?;
                    }
                    BetKind::SixCardBonus => {
                        polyline(&mut plane.buf, &ring(r), true, accent, line * 1.3)?;
                        polyline(&mut plane.buf, &ring(r - 5.0), true, accent, thin)?;
                    }
                    BetKind::Progressive => {
                        polyline(&mut plane.buf, &ring(r * 0.75), true, accent, line)?;
                        // The jackpot lamp: a red dome with a highlight.
                        fill(&mut plane.buf, &ring(r * 0.42), [150, 18, 22])?;
                        fill(&mut plane.buf, &ring(r * 0.3), [205, 40, 40])?;
                        let hl: Vec<Point> =
                            ring(r * 0.1).iter().map(|p| Point::new(p.x - r * 0.1 * s, p.y - r * 0.1 * s)).collect();
                        fill(&mut plane.buf, &hl, [250, 190, 180])?;
                    }
                    BetKind::Raise => {
                        let sq: Vec<Point> = (0..4)
                            .map(|i| {
                                let t = a + PI / 4.0 + FRAC_PI_2 * i as f64;
                                Point::new(cp.x + r * 1.15 * s * t.cos(), cp.y + r * 1.15 * s * t.sin())
                            })
                            .collect();
                        polyline(&mut plane.buf, &sq, true, print, line)?;
                    }
                    BetKind::Ante | BetKind::Play | BetKind::Bet => {
                        polyline(&mut plane.buf, &ring(r), true, print, line)?;
                        if bet != BetKind::Play {
                            polyline(&mut plane.buf, &ring(r - 5.0), true, print, thin)?;
                        }
                    }
                }
                if style.labels {
                    let (rr, hh) = if bet == BetKind::Progressive { (r * 0.75 + 8.0, 7.5) } else { (r - 14.0, 8.0) };
                    let rr = if bet == BetKind::PairPlus { r * 0.8 - 10.0 } else { rr };
                    let label = bet_label(bet);
                    let mid = if bet == BetKind::Progressive { a + PI } else { a };
                    arc_text(&mut plane.buf, label, FONT, cp, rr * s, mid, hh * s, print, 0.92)?;
                }
            }
            ZoneKind::Hand { seat } => {
                if style.hand_boxes {
                    polyline(&mut plane.buf, &pts, true, print, thin)?;
                }
                if style.labels {
                    let a = -layout::seat_angle(seat, seats);
                    let p = plane.px(layout::on_seat_line(seat, seats, TABLE_RADIUS_MM - 20.0));
                    stamp_text(
                        &mut plane.buf,
                        &seat.to_string(),
                        TITLE_FONT,
                        p,
                        a - FRAC_PI_2,
                        14.0 * s,
                        accent,
                        0.85,
                    )?;
                }
            }
            ZoneKind::DealerHand => {
                polyline(&mut plane.buf, &pts, true, print, line)?;
                if style.labels {
                    let p =
                        plane.px(Point::new(c.x, z.polygon_mm.0.iter().map(|p| p.y).fold(f64::MIN, f64::max) - 14.0));
                    stamp_text(&mut plane.buf, "DEALER", FONT, p, PI, 11.0 * s, print, 0.9)?;
                }
            }
            ZoneKind::Community => {
                polyline(&mut plane.buf, &pts, true, accent, line)?;
                let inner = z
                    .polygon_mm
                    .0
                    .iter()
                    .map(|&p| plane.px(Point::new(c.x + (p.x - c.x) * 0.94, c.y + (p.y - c.y) * 0.9)))
                    .collect::<Vec<_>>();
                polyline(&mut plane.buf, &inner, true, accent, thin)?;
                if style.labels {
                    let p =
                        plane.px(Point::new(c.x, z.polygon_mm.0.iter().map(|p| p.y).fold(f64::MIN, f64::max) - 13.0));
                    stamp_text(&mut plane.buf, "COMMUNITY CARD", FONT, p, PI, 9.0 * s, accent, 0.9)?;
                }
            }
            ZoneKind::Shoe | ZoneKind::Discard => {}
        }
    }
    if style.labels {
        let (name, band) = title(cal.ruleset);
        let o = plane.px(Point::new(0.0, 0.0));
        arc_text(&mut plane.buf, name, TITLE_FONT, o, 478.0 * s, -FRAC_PI_2, 24.0 * s, accent, 0.95)?;
        if let Some(band) = band {
            let r_band = if cal.ruleset == RulesetId::Sangong1996 { 400.0 } else { 448.0 };
            arc_text(&mut plane.buf, band, FONT, o, r_band * s, -FRAC_PI_2, 10.5 * s, print, 0.9)?;
        }
        if cal.ruleset == RulesetId::Sangong1996 {
            let p = plane.px(Point::new(0.0, 260.0));
            stamp_text(&mut plane.buf, "BANKER", FONT, p, PI, 14.0 * s, print, 0.9)?;
        }
    }
    Ok(())
}

/// Smooth value noise: a random grid sampled with smoothstep interpolation.
struct ValueNoise {
    gw: usize,
    gh: usize,
    cell: f64,
    vals: Vec<f32>,
}

impl ValueNoise {
    fn new(rng: &mut Rng, w_mm: f64, h_mm: f64, cell_mm: f64) -> ValueNoise {
        let gw = (w_mm / cell_mm).ceil() as usize + 2;
        let gh = (h_mm / cell_mm).ceil() as usize + 2;
        let vals = (0..gw * gh).map(|_| (rng.unit_f64() * 2.0 - 1.0) as f32).collect();
        ValueNoise { gw, gh, cell: cell_mm, vals }
    }

    fn at(&self, x_mm: f64, y_mm: f64) -> f32 {
        let (fx, fy) = ((x_mm / self.cell).max(0.0), (y_mm / self.cell).max(0.0));
        let (ix, iy) = ((fx as usize).min(self.gw - 2), (fy as usize).min(self.gh - 2));
        let (tx, ty) = ((fx - ix as f64).min(1.0) as f32, (fy - iy as f64).min(1.0) as f32);
        let (sx, sy) = (tx * tx * (3.0 - 2.0 * tx), ty * ty * (3.0 - 2.0 * ty));
        let g = |x: usize, y: usize| self.vals[y * self.gw + x];
        let a = g(ix, iy) + (g(ix + 1, iy) - g(ix, iy)) * sx;
        let b = g(ix, iy + 1) + (g(ix + 1, iy + 1) - g(ix, iy + 1)) * sx;
        a + (b - a) * sy
    }
}

/// Cloth grain, weave, mottling, colour variation and the overhead light's falloff.
fn texture(plane: &mut Plane, style: &TableStyle) -> Result<(), RenderError> {
    let s = plane.px_per_mm;
    let (w, h) = (plane.buf.w, plane.buf.h);
    let (w_mm, h_mm) = (w as f64 / s, h as f64 / s);
    let mut rng = Rng::seeded(style.texture_seed);
    // (fine grain, weave, 40 mm mottle, 150 mm mottle, 600 mm shading, colour variation)
    let (fine, weave, m1, m2, m3, colour) = match style.felt_texture {
        FeltTexture::Baize => (0.075, 0.0, 0.035, 0.035, 0.045, 0.03),
        FeltTexture::Twill => (0.045, 0.04, 0.015, 0.025, 0.04, 0.02),
        FeltTexture::Suede => (0.035, 0.0, 0.055, 0.065, 0.055, 0.03),
    };
    let n1 = ValueNoise::new(&mut rng, w_mm, h_mm, 40.0);
    let n2 = ValueNoise::new(&mut rng, w_mm, h_mm, 150.0);
    let n3 = ValueNoise::new(&mut rng, w_mm, h_mm, 600.0);
    let nr = ValueNoise::new(&mut rng, w_mm, h_mm, 300.0);
    let nb = ValueNoise::new(&mut rng, w_mm, h_mm, 260.0);
    // Low-frequency gains at 1/8 resolution, encoded around 128 (1/512 per step),
    // then upsampled: the per-pixel pass only adds grain.
    let (lw, lh) = ((w + 7) / 8, (h + 7) / 8);
    let mut low = Buf::zeros(lw, lh, 3);
    for v in 0..lh {
        let y_mm = (v as f64 + 0.5) * 8.0 / s;
        let ty = plane.origin_mm.y - y_mm;
        for u in 0..lw {
            let x_mm = (u as f64 + 0.5) * 8.0 / s;
            let tx = plane.origin_mm.x + x_mm;
            let lum = m1 * n1.at(x_mm, y_mm) as f64 + m2 * n2.at(x_mm, y_mm) as f64 + m3 * n3.at(x_mm, y_mm) as f64;
            // Overhead light: a broad pool centred on the playing area.
            let d = tx.hypot(ty - 480.0) / 1250.0;
            let light = 0.1 - 0.3 * d * d;
            let cr = colour * nr.at(x_mm, y_mm) as f64;
            let cb = colour * nb.at(x_mm, y_mm) as f64;
            let g = [lum + light + cr, lum + light, lum + light + cb];
            let i = ((v * lw + u) * 3) as usize;
            for ch in 0..3 {
                low.data[i + ch] = (128.0 + g[ch] * 512.0).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    let mut up = opencv::core::Mat::default();
    imgproc::resize(&low.mat()?, &mut up, Size::new(w, h), 0.0, 0.0, imgproc::INTER_CUBIC)
        .ctx("upsampling the cloth")?;
    let up = Buf::from_mat(&up)?;
    let period = (1.6 * s).max(2.2);
    for v in 0..h {
        let ty = plane.mm(0.0, v as f64).y;
        for u in 0..w {
            let tx = plane.mm(u as f64, 0.0).x;
            let reg = region(Point::new(tx, ty));
            let r = rng.next_u64();
            let grain = (((r & 0xffff) as f64 + ((r >> 16) & 0xffff) as f64) / 65535.0 - 1.0) * 1.7;
            let (gf, gw) = match reg {
                Region::Felt => (fine, weave),
                Region::Rail => (0.04, 0.0),
                Region::Rim => (0.05, 0.0),
                Region::Floor => (0.12, 0.0),
            };
            let wv = if gw > 0.0 { gw * (std::f64::consts::TAU * (u + v) as f64 / period).sin() } else { 0.0 };
            let i = ((v * w + u) * 3) as usize;
            for ch in 0..3 {
                let g = 1.0 + (up.data[i + ch] as f64 - 128.0) / 512.0 + gf * grain + wv;
                plane.buf.data[i + ch] = (plane.buf.data[i + ch] as f64 * g).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
    Ok(())
}
