//! SVG → RGBA image with resvg: parsing options, pixmap conversion, labels.
use image::RgbaImage;
use resvg::{tiny_skia, usvg};

use super::{fonts, FacesError};

/// usvg options shared by every parse: our font database, DejaVu Sans by default.
pub(crate) fn options() -> usvg::Options<'static> {
    usvg::Options { fontdb: fonts::database(), font_family: "DejaVu Sans".to_string(), ..usvg::Options::default() }
}

/// Parses an SVG document (text or gzip) with [`options`].
pub(crate) fn parse(design: &str, data: &[u8]) -> Result<usvg::Tree, FacesError> {
    usvg::Tree::from_data(data, &options())
        .map_err(|e| FacesError::Svg { design: design.to_string(), message: e.to_string() })
}

/// Renders a whole SVG document stretched to `width_px` × `height_px` (the document's size is
/// the card: procedural faces are drawn edge to edge).
pub(crate) fn render_svg_string(
    design: &str,
    svg: &str,
    width_px: u32,
    height_px: u32,
) -> Result<RgbaImage, FacesError> {
    let tree = parse(design, svg.as_bytes())?;
    let size = tree.size();
    let mut pixmap = new_pixmap(width_px, height_px)?;
    let transform = tiny_skia::Transform::from_scale(width_px as f32 / size.width(), height_px as f32 / size.height());
    resvg::render(&tree, transform, &mut pixmap.as_mut());
    Ok(to_image(&pixmap))
}

pub(crate) fn new_pixmap(width_px: u32, height_px: u32) -> Result<tiny_skia::Pixmap, FacesError> {
    tiny_skia::Pixmap::new(width_px, height_px).ok_or(FacesError::BadHeight(height_px))
}

/// tiny-skia's premultiplied pixels → straight-alpha RGBA.
pub(crate) fn to_image(pixmap: &tiny_skia::Pixmap) -> RgbaImage {
    let mut out = Vec::with_capacity(pixmap.data().len());
    for p in pixmap.pixels() {
        let c = p.demultiply();
        out.extend_from_slice(&[c.red(), c.green(), c.blue(), c.alpha()]);
    }
    RgbaImage::from_raw(pixmap.width(), pixmap.height(), out).expect("buffer size matches the pixmap")
}

/// Makes the four corners transparent outside quarter circles of `radius` pixels (antialiased);
/// pixels already transparent stay so.
pub(crate) fn round_corners(img: &mut RgbaImage, radius: f32) {
    let (w, h) = img.dimensions();
    let r = radius.max(0.0).min(w.min(h) as f32 / 2.0);
    let n = r.ceil() as u32;
    for y in (0..n).chain(h.saturating_sub(n)..h) {
        for x in (0..n).chain(w.saturating_sub(n)..w) {
            // Distance from the pixel centre to the corner circle's centre.
            let cx = if x < n { r } else { w as f32 - r };
            let cy = if y < n { r } else { h as f32 - r };
            let (px, py) = (x as f32 + 0.5, y as f32 + 0.5);
            let outside_x = if x < n { px < cx } else { px > cx };
            let outside_y = if y < n { py < cy } else { py > cy };
            if !(outside_x && outside_y) {
                continue;
            }
            let d = ((px - cx).powi(2) + (py - cy).powi(2)).sqrt();
            let coverage = (r + 0.5 - d).clamp(0.0, 1.0);
            let p = img.get_pixel_mut(x, y);
            p[3] = (p[3] as f32 * coverage).round() as u8;
        }
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// Lines of white text on a transparent image, for contact sheets.
pub(crate) fn render_label(lines: &[&str], width_px: u32, height_px: u32) -> Result<RgbaImage, FacesError> {
    let size = (width_px as f32 / 12.0).min(height_px as f32 / 6.0);
    let mut svg = format!(r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width_px}" height="{height_px}">"#);
    for (i, line) in lines.iter().enumerate() {
        let y = size * 1.6 * (i as f32 + 1.0);
        let weight = if i == 0 { "bold" } else { "normal" };
        svg.push_str(&format!(
            r#"<text x="{:.1}" y="{y:.1}" font-family="DejaVu Sans" font-weight="{weight}" font-size="{size:.1}" fill="white">{}</text>"#,
            size * 0.5,
            escape(line)
        ));
    }
    svg.push_str("</svg>");
    render_svg_string("label", &svg, width_px, height_px)
}
