//! Camera and lighting conditions of one frame, their presets, a seeded slow
//! drift over time, and the photometric pass that applies them.
use crate::rng::Rng;

use super::error::RenderError;

/// A specular glare spot (a ceiling light reflected by the felt or a card).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Glare {
    /// Centre as a fraction of the image width and height (0..1).
    pub center_frac: [f64; 2],
    /// Radius (1σ of the blob's long axis) as a fraction of the image width.
    pub radius_frac: f64,
    /// Length of the short axis relative to the long one (0..1].
    pub aspect: f64,
    /// Orientation of the long axis, radians from the image x axis.
    pub angle_rad: f64,
    /// Peak brightness added, as a fraction of full scale (0..1).
    pub strength: f64,
}

/// Photometric conditions of a frame. All values are applied after the lens.
#[derive(Debug, Clone, PartialEq)]
pub struct Conditions {
    /// Exposure multiplier on linear light (1 = nominal).
    pub exposure: f64,
    /// Per-channel gain on linear light, R, G, B (white balance error).
    pub white_balance: [f64; 3],
    /// Dim lighting, 0 (none) to 1 (very dim): less light, more sensor gain noise.
    pub dim: f64,
    /// Glare spots.
    pub glare: Vec<Glare>,
    /// Gaussian sensor noise, σ in 8-bit levels at mid grey.
    pub noise_sigma: f64,
    /// Lens vignetting: brightness lost at the image corners (0..1).
    pub vignette: f64,
    /// Optical softness: Gaussian blur σ in pixels (0 = none).
    pub blur_sigma_px: f64,
    /// Fraction of the frame interval the shutter is open (motion blur length).
    pub shutter_fraction: f64,
    /// JPEG round trip at this quality (1..=100), if any.
    pub jpeg_quality: Option<u8>,
}

impl Default for Conditions {
    fn default() -> Self {
        Conditions {
            exposure: 1.0,
            white_balance: [1.0, 1.0, 1.0],
            dim: 0.0,
            glare: Vec::new(),
            noise_sigma: 2.0,
            vignette: 0.3,
            blur_sigma_px: 0.5,
            shutter_fraction: 0.5,
            jpeg_quality: None,
        }
    }
}

impl Conditions {
    /// The names [`Conditions::preset`] knows.
    pub const PRESETS: [&'static str; 6] = ["normal", "bright", "dim", "glare", "noisy", "compressed"];

    /// A named preset: `normal`, `bright`, `dim`, `glare`, `noisy`, `compressed`.
    pub fn preset(name: &str) -> Option<Conditions> {
        let base = Conditions::default();
        Some(match name {
            "normal" => base,
            "bright" => {
                Conditions { exposure: 1.3, white_balance: [1.02, 1.0, 0.97], noise_sigma: 1.2, vignette: 0.2, ..base }
            }
            "dim" => Conditions {
                exposure: 0.95,
                white_balance: [1.1, 1.0, 0.8],
                dim: 0.65,
                noise_sigma: 2.5,
                vignette: 0.5,
                blur_sigma_px: 0.7,
                shutter_fraction: 0.9,
                ..base
            },
            "glare" => Conditions {
                exposure: 1.05,
                glare: vec![
                    Glare { center_frac: [0.62, 0.38], radius_frac: 0.05, aspect: 0.6, angle_rad: 0.4, strength: 0.85 },
                    Glare { center_frac: [0.25, 0.7], radius_frac: 0.035, aspect: 0.8, angle_rad: -0.3, strength: 0.6 },
                ],
                ..base
            },
            "noisy" => Conditions { noise_sigma: 9.0, blur_sigma_px: 0.6, ..base },
            "compressed" => Conditions { jpeg_quality: Some(22), ..base },
            _ => return None,
        })
    }

    /// Checks ranges.
    pub fn validate(&self) -> Result<(), RenderError> {
        let bad = |what: &str| Err(RenderError::Input(format!("conditions: {what}")));
        if !(self.exposure > 0.0 && self.exposure < 20.0) {
            return bad("exposure must be in (0, 20)");
        }
        if self.white_balance.iter().any(|g| !(*g > 0.0 && *g < 10.0)) {
            return bad("white_balance gains must be in (0, 10)");
        }
        if !(0.0..=1.0).contains(&self.dim) || !(0.0..=1.0).contains(&self.vignette) {
            return bad("dim and vignette must be in [0, 1]");
        }
        if !(0.0..=100.0).contains(&self.noise_sigma) || !(0.0..=20.0).contains(&self.blur_sigma_px) {
            return bad("noise_sigma must be in [0, 100] and blur_sigma_px in [0, 20]");
        }
        if !(0.0..=1.0).contains(&self.shutter_fraction) {
            return bad("shutter_fraction must be in [0, 1]");
        }
        if matches!(self.jpeg_quality, Some(q) if q == 0 || q > 100) {
            return bad("jpeg_quality must be in 1..=100");
        }
        for g in &self.glare {
            if !(g.radius_frac > 0.0 && g.radius_frac < 2.0 && g.aspect > 0.0 && g.aspect <= 1.0 && g.strength >= 0.0) {
                return bad("glare: radius_frac in (0, 2), aspect in (0, 1], strength ≥ 0");
            }
        }
        Ok(())
    }
}

/// A slow, seeded drift of exposure and white balance over frames (auto
/// exposure hunting, lights dimming, white balance wandering).
#[derive(Debug, Clone, PartialEq)]
pub struct Drift {
    /// Seed of the drift's phases.
    pub seed: u64,
    /// Peak relative exposure change (0.15 = ±15 %).
    pub exposure_amplitude: f64,
    /// Peak relative change of each white-balance gain.
    pub white_balance_amplitude: f64,
    /// Period of the slowest component, in frames.
    pub period_frames: f64,
}

impl Drift {
    /// A gentle drift: ±12 % exposure, ±4 % white balance, over ~20 s at 25 fps.
    pub fn gentle(seed: u64) -> Drift {
        Drift { seed, exposure_amplitude: 0.12, white_balance_amplitude: 0.04, period_frames: 500.0 }
    }

    /// `base` as it is at frame `frame`: smooth sums of three seeded sinusoids.
    pub fn at(&self, base: &Conditions, frame: u64) -> Conditions {
        let mut rng = Rng::seeded(self.seed);
        let mut wave = |amplitude: f64| {
            let mut v = 0.0;
            for (k, w) in [(1.0, 0.6), (2.7, 0.3), (6.1, 0.1)] {
                let phase = rng.unit_f64() * std::f64::consts::TAU;
                v += w * (std::f64::consts::TAU * k * frame as f64 / self.period_frames + phase).sin();
            }
            1.0 + amplitude * v
        };
        let mut c = base.clone();
        c.exposure *= wave(self.exposure_amplitude);
        for g in c.white_balance.iter_mut() {
            *g *= wave(self.white_balance_amplitude);
        }
        c
    }
}

fn srgb_to_linear(v: f64) -> f64 {
    if v <= 0.04045 {
        v / 12.92
    } else {
        ((v + 0.055) / 1.055).powf(2.4)
    }
}

fn linear_to_srgb(v: f64) -> f64 {
    if v <= 0.003_130_8 {
        v * 12.92
    } else {
        1.055 * v.powf(1.0 / 2.4) - 0.055
    }
}

/// Fixed-point scale of the photometric pass (1/16 of a level).
const FX_SHIFT: i32 = 4;
const FX: i32 = 1 << FX_SHIFT;

/// Precomputed per-pixel data of the photometric pass for one image size.
#[derive(Debug, Clone)]
pub(crate) struct Photometric {
    w: usize,
    h: usize,
    /// Squared distance from the image centre, normalised to 1024 at the corners.
    r2: Vec<u16>,
    /// Standard normal samples × 256, sliced at random offsets per row.
    noise: Vec<i16>,
}

impl Photometric {
    pub(crate) fn new(w: u32, h: u32) -> Photometric {
        let (w, h) = (w as usize, h as usize);
        let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
        let norm = 1024.0 / (cx * cx + cy * cy);
        let mut r2 = Vec::with_capacity(w * h);
        for y in 0..h {
            for x in 0..w {
                let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                r2.push(((dx * dx + dy * dy) * norm).round().min(1024.0) as u16);
            }
        }
        let mut rng = Rng::seeded(0x5e_u64 << 32 | 0x4e015e);
        let n = (1 << 20).max(8 * w * 3);
        let mut noise = Vec::with_capacity(n);
        while noise.len() < n {
            // Box–Muller.
            let (u1, u2) = (rng.unit_f64().max(1e-12), rng.unit_f64());
            let r = (-2.0 * u1.ln()).sqrt();
            let (s, c) = (std::f64::consts::TAU * u2).sin_cos();
            noise.push((r * c * 256.0).round().clamp(-32767.0, 32767.0) as i16);
            noise.push((r * s * 256.0).round().clamp(-32767.0, 32767.0) as i16);
        }
        Photometric { w, h, r2, noise }
    }

    /// Applies vignetting, exposure, white balance, dim light, glare and noise
    /// to an RGB image in place.
    pub(crate) fn apply(&self, rgb: &mut [u8], c: &Conditions, frame_seed: u64) {
        debug_assert_eq!(rgb.len(), self.w * self.h * 3);
        let light = 1.0 - 0.75 * c.dim;
        // Dim scenes are lit by warmer light; the camera's gain raises the noise.
        let warm = [1.0 + 0.06 * c.dim, 1.0, 1.0 - 0.15 * c.dim];
        let mut lut = [[0i32; 256]; 3];
        for (ch, table) in lut.iter_mut().enumerate() {
            let g = c.exposure * c.white_balance[ch] * light * warm[ch];
            for (v, out) in table.iter_mut().enumerate() {
                let l = srgb_to_linear(v as f64 / 255.0) * g;
                *out = (linear_to_srgb(l.min(1.0)) * 255.0 * FX as f64).round() as i32;
            }
        }
        let sigma = c.noise_sigma * (1.0 + 2.5 * c.dim);
        let mut sigma_lut = [0i32; 256];
        for (v, s) in sigma_lut.iter_mut().enumerate() {
            // Read noise plus shot noise growing with the signal.
            *s = (sigma * (0.4 + 0.6 * (v as f64 / 128.0)).sqrt() * FX as f64).round() as i32;
        }
        let vq = (c.vignette * 256.0).round() as u32;
        let glare = self.glare_map(c);
        let mut rng = Rng::seeded(frame_seed ^ 0x9e37_79b9_7f4a_7c15);
        let row_len = self.w * 3;
        let span = (self.noise.len() - row_len) as u32;
        for y in 0..self.h {
            let off = rng.below(span) as usize;
            let noise = &self.noise[off..off + row_len];
            let row = &mut rgb[y * row_len..(y + 1) * row_len];
            let r2 = &self.r2[y * self.w..(y + 1) * self.w];
            let zeros;
            let add_row: &[u16] = match &glare {
                Some(g) => &g[y * self.w..(y + 1) * self.w],
                None => {
                    zeros = [0u16; 1];
                    &zeros
                }
            };
            let has_glare = glare.is_some();
            for (x, ((px, n), &r)) in row.chunks_exact_mut(3).zip(noise.chunks_exact(3)).zip(r2).enumerate() {
                let gain = 256 - ((vq * r as u32) >> 10);
                let add = if has_glare { add_row[x] as i32 } else { 0 };
                for ch in 0..3 {
                    // `as u8` proves the index is in the tables (gain ≤ 256).
                    let v = ((px[ch] as u32 * gain) >> 8) as u8 as usize;
                    let o = lut[ch][v] + add + ((n[ch] as i32 * sigma_lut[v]) >> 8);
                    px[ch] = ((o + FX / 2) >> FX_SHIFT).clamp(0, 255) as u8;
                }
            }
        }
    }

    /// The additive glare of every spot, in 1/16 levels per pixel.
    fn glare_map(&self, c: &Conditions) -> Option<Vec<u16>> {
        if c.glare.is_empty() {
            return None;
        }
        let mut map = vec![0u16; self.w * self.h];
        for g in &c.glare {
            let (cx, cy) = (g.center_frac[0] * self.w as f64, g.center_frac[1] * self.h as f64);
            let sl = (g.radius_frac * self.w as f64).max(1.0);
            let ss = sl * g.aspect;
            let reach = 3.5 * sl;
            let (s, co) = g.angle_rad.sin_cos();
            let peak = g.strength * 255.0 * FX as f64;
            let y0 = (cy - reach).floor().max(0.0) as usize;
            let y1 = ((cy + reach).ceil().max(0.0) as usize).min(self.h);
            let x0 = (cx - reach).floor().max(0.0) as usize;
            let x1 = ((cx + reach).ceil().max(0.0) as usize).min(self.w);
            for y in y0..y1 {
                for x in x0..x1 {
                    let (dx, dy) = (x as f64 + 0.5 - cx, y as f64 + 0.5 - cy);
                    let (u, v) = ((dx * co + dy * s) / sl, (-dx * s + dy * co) / ss);
                    let d2 = u * u + v * v;
                    // A bright core with a wide soft halo.
                    let k = 0.7 * (-0.5 * d2 * 2.5).exp() + 0.3 * (-0.5 * d2 / 2.5).exp();
                    let i = y * self.w + x;
                    map[i] = (map[i] as f64 + peak * k).min(u16::MAX as f64) as u16;
                }
            }
        }
        Some(map)
    }
}
