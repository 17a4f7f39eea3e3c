//! The renderer: the table and the camera.
//!
//! A [`Renderer`] is built once per table camera from its [`TableGeometry`]
//! and a [`TableStyle`]: it draws the static table (cloth, printed layout,
//! rail, chip tray) in the table plane, warps it once into the camera's
//! undistorted image, and adds the shoe and discard rack in 3-D. Each
//! [`Renderer::render`] call then only draws what moves — cards (warped
//! straight from their own images), chip stacks and the dealer's hands — and
//! applies the lens distortion and the frame's photometric [`Conditions`].
//!
//! Ground truth comes from the same geometry the pixels do: a card's
//! `quad_px` is `TableGeometry::table_to_image` of its corners (lifted cards
//! are projected from their height when the calibration carries its simulated
//! pose), and its visible fraction is counted in an id buffer drawn alongside.
//!
//! Frames are deterministic: the same geometry, style, seeds, scene and
//! conditions give byte-identical images and truth (all randomness comes from
//! [`crate::rng::Rng`]; the OpenCV operations used compute each pixel
//! independently of threading).
// Pixel loops index the three channels of a pixel by number on purpose.
#![allow(clippy::needless_range_loop)]

mod buf;
mod camera;
mod cards;
mod chips;
mod conditions;
mod draw;
mod error;
mod labels;
mod occluders;
mod placeholder;
mod props;
mod style;
mod table;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use opencv::core::{self, Size};
use opencv::imgproc;

pub use chips::{CHIP_RADIUS_MM, CHIP_THICKNESS_MM};
pub use conditions::{Conditions, Drift, Glare};
pub use error::RenderError;
pub use placeholder::{placeholder_back, placeholder_face, PLACEHOLDER_PX_PER_MM};
pub use style::{FeltTexture, TableStyle};

use crate::calib::{Point, TableGeometry};
use buf::Buf;
use camera::{Lens, Projector};
use error::CvContext;

/// A card on (or above) the table.
#[derive(Debug, Clone)]
pub struct SceneCard {
    /// The caller's id, copied to the ground truth.
    pub id: u32,
    /// The image to draw (face or back, chosen by the caller), RGBA with
    /// transparent rounded corners; its top-left maps to the card's top-left.
    pub image: Arc<image::RgbaImage>,
    /// Centre on the table, mm.
    pub center_mm: Point,
    /// Rotation of the card's x axis from the table's, radians.
    pub angle_rad: f64,
    /// Width × height, mm.
    pub size_mm: [f64; 2],
    /// Height above the felt while being turned or squeezed, mm (0 on the felt).
    pub height_mm: f64,
    /// Motion during this frame, mm per frame (for motion blur).
    pub velocity_mm_per_frame: [f64; 2],
}

impl SceneCard {
    /// The card's corners on the table: top-left, top-right, bottom-right,
    /// bottom-left of its image.
    ///
    /// The image's top is toward the card's +y: the table's axes are right-handed seen from
    /// above, so a face drawn this way reads the right way round from an overhead camera (an
    /// image's y runs down, the table's up). The other choice draws every face mirrored, which
    /// no camera ever sees.
    pub fn corners_mm(&self) -> [Point; 4] {
        let (s, c) = self.angle_rad.sin_cos();
        let (hw, hh) = (self.size_mm[0] / 2.0, self.size_mm[1] / 2.0);
        [(-hw, hh), (hw, hh), (hw, -hh), (-hw, -hh)]
            .map(|(x, y)| Point::new(self.center_mm.x + x * c - y * s, self.center_mm.y + x * s + y * c))
    }
}

/// A stack of chips standing on the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ChipStack {
    /// Centre of the stack's base, mm.
    pub center_mm: Point,
    /// Number of chips (0 draws nothing).
    pub chips: u8,
    /// Picks the chips' colours.
    pub colour_seed: u32,
}

/// What an occluder is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OccluderKind {
    /// An open hand (palm and spread fingers) on its forearm.
    Hand,
    /// A forearm reaching across, ending in a loose fist.
    Arm,
}

/// A dealer's hand or arm above the table.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occluder {
    /// What it is.
    pub kind: OccluderKind,
    /// Centre of the palm (or fist), mm.
    pub position_mm: Point,
    /// Direction the fingers point, radians from the table's x axis; the arm
    /// extends the opposite way.
    pub angle_rad: f64,
    /// Size relative to an average adult hand (1.0).
    pub scale: f64,
    /// Picks the skin tone and the sleeve.
    pub appearance_seed: u32,
}

/// Everything that changes from frame to frame.
#[derive(Debug, Clone, Default)]
pub struct Scene {
    /// Cards, drawn in this order (later ones on top).
    pub cards: Vec<SceneCard>,
    /// Chip stacks, drawn over the cards.
    pub chips: Vec<ChipStack>,
    /// Hands and arms, drawn last.
    pub occluders: Vec<Occluder>,
}

/// Ground truth of one card in a frame.
#[derive(Debug, Clone, PartialEq)]
pub struct CardInImage {
    /// The scene card's id.
    pub id: u32,
    /// Corners in output image pixels (lens applied): top-left, top-right,
    /// bottom-right, bottom-left of the card's own image.
    pub quad_px: [Point; 4],
    /// Visible pixels / pixels of its quad alone, 0..=1: later cards, chips,
    /// occluders and the image border hide it.
    pub visible_fraction: f64,
    /// The regions asked for with [`Renderer::render_with_regions`], in the
    /// order asked (empty from [`Renderer::render`]).
    pub regions: Vec<RegionInImage>,
}

/// A rectangle on a card's own (upright) image, in fractions of its width and
/// height from its top-left corner: `[u1, v1, u2, v2]`.
pub type CardRegion = [f64; 4];

/// Ground truth of one [`CardRegion`] of a card in a frame.
#[derive(Debug, Clone, PartialEq)]
pub struct RegionInImage {
    /// The region's corners in output image pixels (lens applied), in the
    /// card's order: (u1, v1), (u2, v1), (u2, v2), (u1, v2).
    pub quad_px: [Point; 4],
    /// Visible pixels of the region / its pixels alone, 0..=1, counted in the
    /// id buffer exactly like [`CardInImage::visible_fraction`].
    pub visible_fraction: f64,
}

/// One rendered frame and its ground truth.
#[derive(Debug, Clone)]
pub struct RenderedFrame {
    /// The camera image (8-bit sRGB).
    pub image: image::RgbImage,
    /// Every scene card whose corners project, in scene order.
    pub cards: Vec<CardInImage>,
}

/// Renders frames of one table seen by one calibrated camera.
pub struct Renderer {
    geometry: TableGeometry,
    lens: Lens,
    proj: Projector,
    background: Buf,
    /// `background` through the lens (empty without a lens).
    background_out: Buf,
    photometric: conditions::Photometric,
    faces: cards::FaceCache,
    seed: u64,
}

/// Card-back colour of the shoe's next card and the discards.
const BACK_RGB: [u8; 3] = [168, 28, 40];

impl Renderer {
    /// Precomputes the static table for `geometry` in `style`; `seed` varies
    /// the static details (chip tray contents).
    pub fn new(geometry: &TableGeometry, style: &TableStyle, seed: u64) -> Result<Renderer, RenderError> {
        let cal = &geometry.calibration;
        let lens = Lens::new(geometry)?;
        let proj = lens.projector(geometry);
        if proj.px(Point::new(0.0, 500.0), 0.0).is_none() {
            return Err(RenderError::Camera("the middle of the table is behind the camera".into()));
        }
        // Table-plane resolution: a little finer than the finest the camera sees.
        let mut finest: f64 = 0.0;
        for i in -11..=11 {
            for j in 0..=11 {
                let p = Point::new(i as f64 * 100.0, j as f64 * 100.0);
                if p.x.hypot(p.y) <= crate::calib::layout::TABLE_RADIUS_MM {
                    finest = finest.max(occluders::proj_scale(&proj, p));
                }
            }
        }
        let px_per_mm = (1.3 * finest).clamp(0.6, 3.0);
        let extent = visible_extent(&proj, lens.w, lens.h);
        let mut style = style.clone();
        style.texture_seed ^= seed.rotate_left(17);
        let plane = table::draw_plane(cal, &style, px_per_mm, extent)?;
        let mut background = Buf::zeros(lens.w, lens.h, 3);
        {
            let m = proj.h.compose(&plane.px_to_mm()).0;
            let m = opencv::core::Mat::from_slice_2d(&m).ctx("building the table warp")?;
            let src = plane.buf.mat()?;
            let mut dst = background.mat_mut()?;
            imgproc::warp_perspective(
                &src,
                &mut dst,
                &m,
                Size::new(lens.w, lens.h),
                imgproc::INTER_LINEAR,
                core::BORDER_CONSTANT,
                draw::scalar(table::FLOOR_RGB),
            )
            .ctx("warping the table into the camera")?;
        }
        props::draw_props(&mut background, cal, &proj, BACK_RGB)?;
        let photometric = conditions::Photometric::new(cal.image_width, cal.image_height);
        let background_out = if cal.lens.is_some() {
            lens.apply(background.clone(), imgproc::INTER_LINEAR)?
        } else {
            Buf::zeros(0, 0, 3)
        };
        Ok(Renderer {
            geometry: geometry.clone(),
            lens,
            proj,
            background,
            background_out,
            photometric,
            faces: Default::default(),
            seed,
        })
    }

    /// The table geometry this renderer draws.
    pub fn geometry(&self) -> &TableGeometry {
        &self.geometry
    }

    /// The seed given to [`Renderer::new`].
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Renders one frame. `frame_seed` drives the sensor noise.
    pub fn render(
        &self,
        scene: &Scene,
        conditions: &Conditions,
        frame_seed: u64,
    ) -> Result<RenderedFrame, RenderError> {
        self.render_with_regions(scene, conditions, frame_seed, &[])
    }

    /// Renders one frame like [`Renderer::render`] (the same pixels), and also
    /// reports, for scene card `i`, where each of `regions[i]` (rectangles on
    /// the card's face) lies in the image and how much of it is visible.
    /// `regions` may be shorter than the scene's cards: the rest have none.
    pub fn render_with_regions(
        &self,
        scene: &Scene,
        conditions: &Conditions,
        frame_seed: u64,
        regions: &[Vec<CardRegion>],
    ) -> Result<RenderedFrame, RenderError> {
        conditions.validate()?;
        if scene.cards.len() >= u16::MAX as usize {
            return Err(RenderError::Input(format!("{} cards in one scene; at most 65534", scene.cards.len())));
        }
        for c in &scene.cards {
            let [w, h] = c.size_mm;
            let plausible = w > 1.0 && h > 1.0 && w < 500.0 && h < 500.0;
            if !(plausible && c.center_mm.x.is_finite() && c.center_mm.y.is_finite()) {
                return Err(RenderError::Input(format!("card {}: size {w}×{h} mm or centre not plausible", c.id)));
            }
            if !(0.0..1000.0).contains(&c.height_mm) {
                return Err(RenderError::Input(format!("card {}: height {} mm out of 0..1000", c.id, c.height_mm)));
            }
        }
        let mut canvas = self.background.clone();
        let mut ids = labels::Labels::new(canvas.w, canvas.h);
        let mut drawn = Vec::with_capacity(scene.cards.len());
        for (i, card) in scene.cards.iter().enumerate() {
            let d = cards::draw_card(
                &mut canvas,
                &mut ids,
                &self.proj,
                &self.faces,
                card,
                (i + 1) as u16,
                conditions.shutter_fraction,
            )?;
            drawn.push(d);
        }
        for st in &scene.chips {
            chips::draw_stack(&mut canvas, &mut ids, &self.proj, st)?;
        }
        for o in &scene.occluders {
            occluders::draw_occluder(&mut canvas, &mut ids, &self.proj, o)?;
        }
        let mut truth = Vec::with_capacity(scene.cards.len());
        for (i, (card, d)) in scene.cards.iter().zip(&drawn).enumerate() {
            let Some(d) = d else { continue };
            let quad: Option<Vec<Point>> = card
                .corners_mm()
                .iter()
                .map(|&p| self.geometry.table_to_image(self.proj.lift(p, card.height_mm)))
                .collect();
            let Some(q) = quad else { continue };
            let mut found = Vec::new();
            for r in regions.get(i).map(Vec::as_slice).unwrap_or(&[]) {
                found.push(self.region(&ids, card, r, (i + 1) as u16)?);
            }
            truth.push(CardInImage {
                id: card.id,
                quad_px: [q[0], q[1], q[2], q[3]],
                visible_fraction: self.visible_fraction(&ids, &d.quad, (i + 1) as u16)?,
                regions: found,
            });
        }
        let mut out = self.lens.apply_dirty(canvas, &self.background, &self.background_out)?;
        if conditions.blur_sigma_px > 0.05 {
            let src = out.clone();
            let s = conditions.blur_sigma_px;
            imgproc::gaussian_blur(&src.mat()?, &mut out.mat_mut()?, Size::new(0, 0), s, s, core::BORDER_REFLECT_101)
                .ctx("softening the optics")?;
        }
        self.photometric.apply(&mut out.data, conditions, frame_seed ^ self.seed.rotate_left(29));
        if let Some(q) = conditions.jpeg_quality {
            out = jpeg_round_trip(&out, q)?;
        }
        let (w, h) = (out.w as u32, out.h as u32);
        let image = image::RgbImage::from_raw(w, h, out.data)
            .ok_or_else(|| RenderError::Input("internal: image buffer size mismatch".into()))?;
        Ok(RenderedFrame { image, cards: truth })
    }

    /// Visible pixels of card `id` / pixels of its quad alone, both counted on
    /// the canvas; pixels the output image does not see count as hidden.
    fn visible_fraction(&self, ids: &labels::Labels, quad: &[Point; 4], id: u16) -> Result<f64, RenderError> {
        let (area, r) = cards::own_area(quad)?;
        if area == 0 {
            return Ok(0.0);
        }
        let Some(c) = buf::clip(r, ids.w, ids.h) else { return Ok(0.0) };
        let mut seen = 0u64;
        for y in c.y..c.y + c.height {
            let row = (y * ids.w) as usize;
            for x in c.x..c.x + c.width {
                let i = row + x as usize;
                if ids.data[i] == id && self.lens.in_view.as_ref().map_or(true, |v| v[i] != 0) {
                    seen += 1;
                }
            }
        }
        Ok((seen as f64 / area as f64).min(1.0))
    }

    /// Where region `r` of `card` (label `id`) lies in the image, and its
    /// visible pixels / its pixels alone, counted on the canvas.
    fn region(
        &self,
        ids: &labels::Labels,
        card: &SceneCard,
        r: &CardRegion,
        id: u16,
    ) -> Result<RegionInImage, RenderError> {
        let [c0, c1, _, c3] = card.corners_mm();
        let at = |u: f64, v: f64| {
            Point::new(c0.x + u * (c1.x - c0.x) + v * (c3.x - c0.x), c0.y + u * (c1.y - c0.y) + v * (c3.y - c0.y))
        };
        let mm = [at(r[0], r[1]), at(r[2], r[1]), at(r[2], r[3]), at(r[0], r[3])];
        let nan = Point::new(f64::NAN, f64::NAN);
        let quad_px = mm.map(|p| self.geometry.table_to_image(self.proj.lift(p, card.height_mm)).unwrap_or(nan));
        let canvas: Option<Vec<Point>> = mm.iter().map(|&p| self.proj.px(p, card.height_mm)).collect();
        let Some(canvas) = canvas else { return Ok(RegionInImage { quad_px, visible_fraction: 0.0 }) };
        let quad = [canvas[0], canvas[1], canvas[2], canvas[3]];
        let r = buf::bounds(&quad, 1.0);
        if r.width > 8000 || r.height > 8000 {
            return Ok(RegionInImage { quad_px, visible_fraction: 0.0 });
        }
        let (w, h) = (r.width.max(1), r.height.max(1));
        let mut scratch = vec![0u16; (w * h) as usize];
        labels::fill_u16(&mut scratch, w, h, &quad, 1, (r.x, r.y))?;
        let (mut area, mut seen) = (0u64, 0u64);
        for sy in 0..h {
            for sx in 0..w {
                if scratch[(sy * w + sx) as usize] != 1 {
                    continue;
                }
                area += 1;
                let (x, y) = (r.x + sx, r.y + sy);
                if x < 0 || y < 0 || x >= ids.w || y >= ids.h {
                    continue;
                }
                let i = (y * ids.w + x) as usize;
                if ids.data[i] == id && self.lens.in_view.as_ref().map_or(true, |v| v[i] != 0) {
                    seen += 1;
                }
            }
        }
        let visible_fraction = if area == 0 { 0.0 } else { (seen as f64 / area as f64).min(1.0) };
        Ok(RegionInImage { quad_px, visible_fraction })
    }
}

/// The table-plane rectangle (mm) worth drawing: what the canvas sees, within limits.
fn visible_extent(proj: &Projector, w: i32, h: i32) -> [f64; 4] {
    let limits = [-1700.0, -700.0, 1700.0, 1800.0];
    let Some(inv) = proj.h.inverse() else { return limits };
    let (mut x0, mut y0, mut x1, mut y1) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let n = 16;
    for i in 0..=n {
        for (u, v) in [
            (w as f64 * i as f64 / n as f64, 0.0),
            (w as f64 * i as f64 / n as f64, h as f64),
            (0.0, h as f64 * i as f64 / n as f64),
            (w as f64, h as f64 * i as f64 / n as f64),
        ] {
            match inv.apply(Point::new(u, v)) {
                Some(p) => {
                    x0 = x0.min(p.x);
                    y0 = y0.min(p.y);
                    x1 = x1.max(p.x);
                    y1 = y1.max(p.y);
                }
                None => return limits,
            }
        }
    }
    [(x0 - 20.0).max(limits[0]), (y0 - 20.0).max(limits[1]), (x1 + 20.0).min(limits[2]), (y1 + 20.0).min(limits[3])]
}

/// Encodes and decodes as JPEG (libjpeg through OpenCV) at `quality`.
fn jpeg_round_trip(rgb: &Buf, quality: u8) -> Result<Buf, RenderError> {
    use opencv::core::Vector;
    use opencv::imgcodecs;
    let mut bgr = opencv::core::Mat::default();
    imgproc::cvt_color(&rgb.mat()?, &mut bgr, imgproc::COLOR_RGB2BGR, 0).ctx("converting for JPEG")?;
    let mut bytes = Vector::<u8>::new();
    let params = Vector::<i32>::from_slice(&[imgcodecs::IMWRITE_JPEG_QUALITY, quality as i32]);
    imgcodecs::imencode(".jpg", &bgr, &mut bytes, &params).ctx("encoding JPEG")?;
    let back = imgcodecs::imdecode(&bytes, imgcodecs::IMREAD_COLOR).ctx("decoding JPEG")?;
    let mut out = opencv::core::Mat::default();
    imgproc::cvt_color(&back, &mut out, imgproc::COLOR_BGR2RGB, 0).ctx("converting from JPEG")?;
    Buf::from_mat(&out)
}
