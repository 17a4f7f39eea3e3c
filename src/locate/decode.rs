//! Decoding the locator's `heat` and `geom` maps into cards and index corners (pure functions,
//! in network-input pixels).
use ndarray::{ArrayView2, ArrayView4, Axis};

use super::geometry::{box_iou, polygon_iou, Quad, RotatedRect};
use crate::calib::Point;

/// Decoding parameters (from the model's metadata, see [`super::Locator`]).
#[derive(Debug, Clone, PartialEq)]
pub struct DecodeParams {
    /// Input pixels per heat-map cell.
    pub stride: f64,
    /// Minimum card-centre heat.
    pub card_threshold: f32,
    /// Minimum index-corner heat.
    pub index_threshold: f32,
    /// Most peaks kept per channel (the highest).
    pub max_peaks: usize,
    /// Cards whose quads overlap a higher-scoring card's by more than this IoU are dropped.
    pub card_nms_iou: f64,
    /// The same for index-corner boxes.
    pub index_nms_iou: f64,
}

impl Default for DecodeParams {
    fn default() -> Self {
        DecodeParams {
            stride: 4.0,
            card_threshold: 0.35,
            index_threshold: 0.35,
            max_peaks: 200,
            card_nms_iou: 0.5,
            index_nms_iou: 0.5,
        }
    }
}

/// A card found by the locator.
#[derive(Debug, Clone, PartialEq)]
pub struct CardCandidate {
    /// The card's rectangle.
    pub rect: RotatedRect,
    /// Its corners (quadrilateral convention).
    pub quad: Quad,
    /// Peak heat, max(face up, face down).
    pub score: f32,
    /// Whether the face-up channel won at the peak.
    pub face_up: bool,
}

/// A printed index corner (rank + suit) found by the locator.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexCandidate {
    /// Centre of the box.
    pub center: Point,
    /// Box width.
    pub w: f64,
    /// Box height.
    pub h: f64,
    /// Peak heat.
    pub score: f32,
}

impl IndexCandidate {
    /// The axis-aligned box `[x1, y1, x2, y2]`.
    pub fn bbox(&self) -> [f64; 4] {
        let (hw, hh) = (self.w / 2.0, self.h / 2.0);
        [self.center.x - hw, self.center.y - hh, self.center.x + hw, self.center.y + hh]
    }
}

/// Everything the locator found in one input.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Decoded {
    /// Cards after non-maximum suppression, highest score first.
    pub cards: Vec<CardCandidate>,
    /// Index corners after non-maximum suppression, highest score first.
    pub index: Vec<IndexCandidate>,
}

/// Cells above `threshold` that are the maximum of their 3×3 neighbourhood, as `(x, y, value)`,
/// highest first, at most `max`. On a plateau of equal values only the first cell in raster
/// order counts, so that a flat top gives one peak, not several.
pub fn find_peaks(map: ArrayView2<'_, f32>, threshold: f32, max: usize) -> Vec<(usize, usize, f32)> {
    let (h, w) = map.dim();
    let mut peaks = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let v = map[[y, x]];
            if v.is_nan() || v <= threshold {
                continue;
            }
            let mut is_peak = true;
            'n: for ny in y.saturating_sub(1)..(y + 2).min(h) {
                for nx in x.saturating_sub(1)..(x + 2).min(w) {
                    if (nx, ny) == (x, y) {
                        continue;
                    }
                    let n = map[[ny, nx]];
                    if n > v || (n == v && (ny, nx) < (y, x)) {
                        is_peak = false;
                        break 'n;
                    }
                }
            }
            if is_peak {
                peaks.push((x, y, v));
            }
        }
    }
    peaks.sort_by(|a, b| b.2.total_cmp(&a.2).then((a.1, a.0).cmp(&(b.1, b.0))));
    peaks.truncate(max);
    peaks
}

/// `stride · exp(v)`, clamped to `0.1 ..= max` so that an untrained or broken model cannot
/// produce infinite, vanishing or absurd sizes (which would make huge patches downstream).
fn size_of(v: f32, stride: f64, max: f64) -> f64 {
    let s = stride * f64::from(v).clamp(-10.0, 20.0).exp();
    if s.is_nan() {
        return 0.1;
    }
    s.clamp(0.1, max.max(0.1))
}

/// Decodes `heat` `[1, 3, h, w]` and `geom` `[1, 8, h, w]` (the locator contract) into cards and
/// index corners in input pixels: peaks per channel (cards: max of the face-up and face-down
/// channels, face up when that channel is at least the other), geometry read at the peak cell,
/// then a greedy NMS (cards by quad IoU, corners by box IoU).
pub fn decode(heat: ArrayView4<'_, f32>, geom: ArrayView4<'_, f32>, params: &DecodeParams) -> Decoded {
    let heat = heat.index_axis(Axis(0), 0);
    let geom = geom.index_axis(Axis(0), 0);
    let stride = params.stride;
    // Nothing is larger than twice the input.
    let max_size = 2.0 * stride * heat.shape()[1].max(heat.shape()[2]) as f64;
    let g = |c: usize, x: usize, y: usize| geom[[c, y, x]];
    let centre = |x: usize, y: usize| {
        Point::new((x as f64 + f64::from(g(0, x, y))) * stride, (y as f64 + f64::from(g(1, x, y))) * stride)
    };

    let up = heat.index_axis(Axis(0), 0);
    let down = heat.index_axis(Axis(0), 1);
    let card_map = ndarray::Zip::from(&up).and(&down).map_collect(|a, b| a.max(*b));
    let mut cards = Vec::new();
    for (x, y, score) in find_peaks(card_map.view(), params.card_threshold, params.max_peaks) {
        let c = centre(x, y);
        let (cos2, sin2) = (f64::from(g(2, x, y)), f64::from(g(3, x, y)));
        let angle = if cos2.hypot(sin2) > 1e-12 { sin2.atan2(cos2) / 2.0 } else { 0.0 };
        let (long, short) = (size_of(g(4, x, y), stride, max_size), size_of(g(5, x, y), stride, max_size));
        if !(c.x.is_finite() && c.y.is_finite() && angle.is_finite()) {
            continue;
        }
        let rect = RotatedRect::new(c, angle, long, short);
        cards.push(CardCandidate { rect, quad: rect.quad(), score, face_up: up[[y, x]] >= down[[y, x]] });
    }
    let mut kept: Vec<CardCandidate> = Vec::with_capacity(cards.len());
    for card in cards {
        if kept.iter().all(|k| polygon_iou(&k.quad, &card.quad) <= params.card_nms_iou) {
            kept.push(card);
        }
    }

    let mut index: Vec<IndexCandidate> = Vec::new();
    for (x, y, score) in find_peaks(heat.index_axis(Axis(0), 2), params.index_threshold, params.max_peaks) {
        let c = centre(x, y);
        if !(c.x.is_finite() && c.y.is_finite()) {
            continue;
        }
        let (w, h) = (size_of(g(6, x, y), stride, max_size), size_of(g(7, x, y), stride, max_size));
        let cand = IndexCandidate { center: c, w, h, score };
        if index.iter().all(|k| box_iou(k.bbox(), cand.bbox()) <= params.index_nms_iou) {
            index.push(cand);
        }
    }
    Decoded { cards: kept, index }
}

#[cfg(test)]
mod tests {
    use ndarray::Array4;

    use super::*;

    /// Heat and geom maps of a `w`×`h`-cell output with nothing in them.
    fn empty(w: usize, h: usize) -> (Array4<f32>, Array4<f32>) {
        (Array4::zeros((1, 3, h, w)), Array4::zeros((1, 8, h, w)))
    }

    /// Writes one object at cell (x, y): heat on `channel` with a falling-off neighbourhood, and
    /// its geometry.
    fn place(heat: &mut Array4<f32>, geom: &mut Array4<f32>, channel: usize, (x, y): (usize, usize), g: [f32; 8]) {
        for dy in -1i32..=1 {
            for dx in -1i32..=1 {
                let (nx, ny) = ((x as i32 + dx) as usize, (y as i32 + dy) as usize);
                heat[[0, channel, ny, nx]] = if dx == 0 && dy == 0 { 0.9 } else { 0.5 };
            }
        }
        for (c, v) in g.iter().enumerate() {
            geom[[0, c, y, x]] = *v;
        }
    }

    #[test]
    fn a_placed_card_decodes_to_its_quad() {
        let (mut heat, mut geom) = empty(40, 30);
        // Centre at ((10 + 0.25) · 4, (12 + 0.5) · 4) = (41, 50); long axis at 30°; 72 × 50 px.
        let theta = 30f64.to_radians();
        let g = [
            0.25,
            0.5,
            (2.0 * theta).cos() as f32,
            (2.0 * theta).sin() as f32,
            (72.0f32 / 4.0).ln(),
            (50.0f32 / 4.0).ln(),
            0.0,
            0.0,
        ];
        place(&mut heat, &mut geom, 1, (10, 12), g);
        let d = decode(heat.view(), geom.view(), &DecodeParams::default());
        assert_eq!(d.cards.len(), 1, "{d:?}");
        assert!(d.index.is_empty());
        let card = &d.cards[0];
        assert!(!card.face_up && (card.score - 0.9).abs() < 1e-6);
        let want = RotatedRect::new(Point::new(41.0, 50.0), theta, 72.0, 50.0).quad();
        for (a, b) in card.quad.iter().zip(&want) {
            assert!(a.dist(*b) < 1e-3, "{:?} vs {want:?}", card.quad);
        }
        // The same angle expressed as θ + 180° decodes to the same quad (cos 2θ, sin 2θ unchanged).
        assert!((card.rect.angle - theta).abs() < 1e-6);
    }

    #[test]
    fn index_corners_face_up_cards_and_nms() {
        let (mut heat, mut geom) = empty(40, 30);
        place(
            &mut heat,
            &mut geom,
            2,
            (5, 5),
            [0.5, 0.5, 1.0, 0.0, 0.0, 0.0, (12.0f32 / 4.0).ln(), (24f32 / 4.0).ln()],
        );
        let g = [0.0, 0.0, 1.0, 0.0, (72f32 / 4.0).ln(), (50f32 / 4.0).ln(), 0.0, 0.0];
        place(&mut heat, &mut geom, 0, (20, 15), g);
        // A weaker duplicate of the same card two cells away: same size, IoU > 0.5, suppressed.
        place(&mut heat, &mut geom, 0, (22, 15), g);
        heat[[0, 0, 15, 22]] = 0.8;
        let d = decode(heat.view(), geom.view(), &DecodeParams::default());
        assert_eq!(d.index.len(), 1);
        let b = d.index[0].bbox();
        assert!((b[0] - 16.0).abs() < 1e-4 && (b[1] - 10.0).abs() < 1e-4 && (b[2] - 28.0).abs() < 1e-4, "{b:?}");
        assert_eq!(d.cards.len(), 1, "{:?}", d.cards);
        assert!(d.cards[0].face_up && d.cards[0].rect.center.dist(Point::new(80.0, 60.0)) < 1e-6);
        // Below the threshold nothing is found.
        let params = DecodeParams { card_threshold: 0.95, index_threshold: 0.95, ..DecodeParams::default() };
        assert_eq!(decode(heat.view(), geom.view(), &params), Decoded::default());
    }

    #[test]
    fn peaks_are_local_maxima_and_plateaus_count_once() {
        let mut m = ndarray::Array2::<f32>::zeros((5, 6));
        m[[1, 1]] = 0.7;
        m[[1, 2]] = 0.7; // plateau with (1, 1): one peak
        m[[3, 4]] = 0.6;
        m[[3, 5]] = 0.65; // (4, 3) is not a peak: its neighbour is higher
        let peaks = find_peaks(m.view(), 0.35, 10);
        assert_eq!(peaks, vec![(1, 1, 0.7), (5, 3, 0.65)]);
        assert_eq!(find_peaks(m.view(), 0.35, 1).len(), 1);
    }
}
