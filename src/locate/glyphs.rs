//! Index corners with no outline around them, in a photo of unknown scale: the cards of a fan or
//! a pile that show only their index strip ([`photo`](super::photo) outlines none of them).
//!
//! A printed index is a rank glyph with its suit glyph just below it, in the card's own frame.
//! Two ink blobs of similar size, about one glyph apart, therefore fix an index's position, its
//! size and its "down" direction (from rank to suit) — hence which way the card is turned, which
//! a card's outline only knows up to a half turn. Every such pair is proposed, in both orders
//! (the pair does not know which blob is the rank), and read by the card-corner classifier as the
//! top-left corner of a card whose size follows from the index's height ([`IndexProposal::views`]).
//! Most pairs are no index (two pips, court art, print on the cloth): the classifier answers
//! `unknown` to them, and the recognizer keeps only confident, agreeing readings
//! (docs/recognition.md).
//!
//! `models/training/real_glyphs.py` cuts the real training patches through exactly these
//! proposals; its constants mirror the ones here.
use opencv::core::{self, Mat, Size};
use opencv::imgproc;
use opencv::prelude::*;

use super::geometry::convex_hull;
use super::photo::{cv, work_grey};
use super::LocateError;
use crate::calib::Point;

/// Adaptive threshold: ink is darker than the mean of its 31-px block by 12 grey levels (at the
/// searched size: a 640-px photo's index glyphs are 8–60 px).
const BLOCK: i32 = 31;
const C_OFFSET: u8 = 12;
/// A glyph's ink covers at least this many pixels…
const MIN_AREA: i32 = 10;
/// …its box's longer side is within these bounds…
const SIDE: (i32, i32) = (4, 90);
/// …and its ink fills at least this share of its box (a thin diagonal line is no glyph).
const MIN_FILL: f64 = 0.15;
/// Rank and suit centres lie at least this far apart, in units of the larger glyph's size (√ of
/// its box's area)…
const PAIR_DISTANCE_MIN: f64 = 0.45;
/// …and at most this far for the glyph classifier (2026-11-26): a photo squeezed to 640 × 640,
/// or an index seen obliquely, narrows every glyph, and on the held-out real photos the
/// rank–suit pair of 104 of 251 labelled cards lay beyond 1.5, of 10 beyond 2.4
/// (docs/recognition.md, "the glyph classifier").
pub const GLYPH_PAIR_REACH: f64 = 2.4;
/// …and at most this far for the card classifier's guessed card corners, as before the glyph
/// classifier: with 2.4 it read a pair spanning two cards of a fan as a queen at 0.9999.
pub const CORNER_PAIR_REACH: f64 = 1.5;
/// At half size, a pair is proposed only if its larger glyph measures this much (√ of its box's
/// area): smaller pairs are level 0's.
const HALF_LEVEL_MIN_SIZE: f64 = 30.0;
/// Rank and suit sizes are within this factor of each other.
const SIZE_RATIO: f64 = 2.5;
/// A glyph beside the rank at its height joins the index (the "1" of a "10") if at most this
/// share of the rank's width.
const BESIDE_WIDTH: f64 = 0.7;
/// …and at least this share of the rank's height: a "1" is as tall as the "0" beside it, while a
/// pip beside a merged "10" seen a few degrees askew falls within the rank's height band but is
/// shorter, and joining it widened the box past the corner view (a 10♠ of a fan lost,
/// docs/recognition.md, "A pip beside the rank").
const BESIDE_HEIGHT: f64 = 0.75;
/// The index's height as a share of the card's long side: the card sizes a proposal is read at
/// (the simulator's 34 designs span 0.17–0.39, most 0.20–0.25).
pub const INDEX_SHARES: [f64; 3] = [0.17, 0.21, 0.26];
/// The index box's height over its glyph view's height (room for a box a blob split or merge
/// misfits, and some surroundings).
pub const GLYPH_SPAN: f64 = 0.72;
/// A glyph view's width over its height: the 32 × 48 patch's.
pub const GLYPH_ASPECT: f64 = 32.0 / 48.0;
/// A card's short side over its long side (poker 0.71, bridge 0.64).
const ASPECT: f64 = 0.70;
/// The index's top-left from the card's top-left corner, as shares of the card's sides.
const MARGIN: (f64, f64) = (0.035, 0.035);

/// One possible index: its box in its own frame (`u` along `right`, `v` along `down`, image
/// pixels), `down` pointing from the rank to the suit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IndexProposal {
    /// `[u0, u1]` across the index, image pixels along `right`.
    pub u: [f64; 2],
    /// `[v0, v1]` down the index, image pixels along `down`.
    pub v: [f64; 2],
    /// Unit vector across the card, to the right when the index reads upright.
    pub right: Point,
    /// Unit vector from the rank to the suit.
    pub down: Point,
    /// Found as light ink on a dark card (the inverted pass): its glyph patch is inverted, so
    /// that the glyph classifier always sees dark ink ([`IndexProposal::glyph_quad`]).
    pub inverted: bool,
}

impl IndexProposal {
    fn at(&self, u: f64, v: f64) -> Point {
        Point::new(u * self.right.x + v * self.down.x, u * self.right.y + v * self.down.y)
    }

    /// The index box's corners in the image (top-left, top-right, bottom-right, bottom-left as
    /// the index reads).
    pub fn quad(&self) -> [Point; 4] {
        let ([u0, u1], [v0, v1]) = (self.u, self.v);
        [self.at(u0, v0), self.at(u1, v0), self.at(u1, v1), self.at(u0, v1)]
    }

    /// The index box's centre.
    pub fn centre(&self) -> Point {
        self.at(0.5 * (self.u[0] + self.u[1]), 0.5 * (self.v[0] + self.v[1]))
    }

    /// The index's height (rank top to suit bottom), pixels.
    pub fn height(&self) -> f64 {
        self.v[1] - self.v[0]
    }

    /// The glyph classifier's view of the index (`[TL, TR, BR, BL]` as the index reads): centred
    /// on the index box, [`GLYPH_SPAN`] of its height the box's, [`GLYPH_ASPECT`] as wide as
    /// high — cut whole at 48 × 32 (`classify::CornerCut::GLYPH`). It assumes nothing of the
    /// card's size or layout, unlike [`IndexProposal::views`]; models/training/glyph_patches.py
    /// cuts its training patches with the same numbers.
    pub fn glyph_quad(&self) -> [Point; 4] {
        let h = self.height() / GLYPH_SPAN;
        let w = GLYPH_ASPECT * h;
        let (u, v) = (0.5 * (self.u[0] + self.u[1] - w), 0.5 * (self.v[0] + self.v[1] - h));
        [self.at(u, v), self.at(u + w, v), self.at(u + w, v + h), self.at(u, v + h)]
    }

    /// The card quads (`[TL, TR, BR, BL]` as the index reads, TL the corner read) the index is
    /// read through, one per card size of [`INDEX_SHARES`]: the classifier's corner view
    /// (`classify::cut_corner_patch`) of each.
    pub fn views(&self) -> [[Point; 4]; INDEX_SHARES.len()] {
        INDEX_SHARES.map(|share| {
            let h = self.height() / share;
            let w = ASPECT * h;
            let (u, v) = (self.u[0] - MARGIN.0 * w, self.v[0] - MARGIN.1 * h);
            [self.at(u, v), self.at(u + w, v), self.at(u + w, v + h), self.at(u, v + h)]
        })
    }
}

/// One ink blob: centre, size (√ of its box's area) and the convex hull of its pixels' centres
/// (continuous coordinates): a blob's extent along any direction is its hull's, and a pair's
/// extents are taken along its own axes for every pair (a glyph of an index enlarged to 400 px
/// covers thousands of pixels, its hull a few dozen points).
#[derive(Clone)]
struct Glyph {
    centre: Point,
    size: f64,
    hull: Vec<Point>,
}

/// Every rank-over-suit pair of ink blobs in a BGR photo, both orders, dark ink on light stock
/// and light ink on dark stock, in frame pixels.
pub fn index_proposals(image: &Mat, reach: f64) -> Result<Vec<IndexProposal>, LocateError> {
    proposals_at_sizes(image, reach, 2)
}

/// [`index_proposals`] searched at full size only: for a view whose indexes are known to print
/// small enough for the threshold's block (a located card's corner enlarged to a fixed size).
pub fn index_proposals_full_size(image: &Mat, reach: f64) -> Result<Vec<IndexProposal>, LocateError> {
    proposals_at_sizes(image, reach, 1)
}

/// The proposals found at full size and, for `levels` 2, at half size.
fn proposals_at_sizes(image: &Mat, reach: f64, levels: i32) -> Result<Vec<IndexProposal>, LocateError> {
    let Some((mut grey, s)) = work_grey(image)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    // Level 0 finds glyphs up to SIDE.1 px; a card filling the photo prints larger ones, which
    // the adaptive threshold's block cannot fill: level 1 (half size) takes the pairs whose
    // larger glyph would be too large for level 0.
    for level in 0..levels {
        if level == 1 {
            let mut half = Mat::default();
            imgproc::resize(&grey, &mut half, Size::new(0, 0), 0.5, 0.5, imgproc::INTER_AREA).map_err(cv("resize"))?;
            grey = half;
        }
        let f = 2f64.powi(level) / s;
        let min_size = if level == 0 { 0.0 } else { HALF_LEVEL_MIN_SIZE };
        let [dark, light] = ink(&grey)?;
        for (ink, inverted) in [(&dark, false), (&light, true)] {
            out.extend(pairs(&glyphs(ink)?, min_size, reach).into_iter().map(|p| IndexProposal {
                u: p.u.map(|x| x * f),
                v: p.v.map(|x| x * f),
                inverted,
                ..p
            }));
        }
    }
    Ok(out)
}

/// The ink of a grey image in both polarities, `[dark ink on light stock, light ink on dark
/// stock]` (255 ink, 0 not): pixels at least [`C_OFFSET`] grey levels darker, or lighter, than
/// the mean of their [`BLOCK`]-px block. Each mask is exactly OpenCV's `adaptiveThreshold`
/// (mean, `THRESH_BINARY_INV`) of the image and of its inverse, from one box filter instead of
/// two: the inverse's block mean is 255 less the mean (a sum over 961 pixels never rounds
/// from a half), and the test only compares a pixel with its mean.
fn ink(grey: &Mat) -> Result<[Mat; 2], LocateError> {
    let mut mean = Mat::default();
    imgproc::box_filter(
        grey,
        &mut mean,
        core::CV_8U,
        Size::new(BLOCK, BLOCK),
        core::Point::new(-1, -1),
        true,
        core::BORDER_REPLICATE | core::BORDER_ISOLATED,
    )
    .map_err(cv("threshold"))?;
    let (rows, cols) = (grey.rows(), grey.cols());
    let mut dark =
        Mat::new_rows_cols_with_default(rows, cols, core::CV_8U, core::Scalar::all(0.0)).map_err(cv("threshold"))?;
    let mut light = dark.try_clone().map_err(cv("threshold"))?;
    let offset = i16::from(C_OFFSET);
    for y in 0..rows {
        let (g, m) = (grey.at_row::<u8>(y).map_err(cv("threshold"))?, mean.at_row::<u8>(y).map_err(cv("threshold"))?);
        let d = dark.at_row_mut::<u8>(y).map_err(cv("threshold"))?;
        for (x, (&g, &m)) in g.iter().zip(m).enumerate() {
            d[x] = if i16::from(g) - i16::from(m) <= -offset { 255 } else { 0 };
        }
        let l = light.at_row_mut::<u8>(y).map_err(cv("threshold"))?;
        for (x, (&g, &m)) in g.iter().zip(m).enumerate() {
            l[x] = if i16::from(g) - i16::from(m) >= offset { 255 } else { 0 };
        }
    }
    Ok([dark, light])
}

/// The ink blobs of an ink mask ([`ink`]) of a glyph's size and fill.
fn glyphs(ink: &Mat) -> Result<Vec<Glyph>, LocateError> {
    let (mut labels, mut stats, mut centroids) = (Mat::default(), Mat::default(), Mat::default());
    let n = imgproc::connected_components_with_stats(ink, &mut labels, &mut stats, &mut centroids, 8, core::CV_32S)
        .map_err(cv("components"))?;
    let stat = |i: i32, k: i32| stats.at_2d::<i32>(i, k).copied().map_err(cv("components"));
    let mut slot = vec![usize::MAX; n.max(0) as usize];
    let mut out: Vec<Glyph> = Vec::new();
    let mut pixels: Vec<Vec<Point>> = Vec::new();
    for i in 1..n {
        let (w, h, a) =
            (stat(i, imgproc::CC_STAT_WIDTH)?, stat(i, imgproc::CC_STAT_HEIGHT)?, stat(i, imgproc::CC_STAT_AREA)?);
        if a < MIN_AREA || w.max(h) < SIDE.0 || w.max(h) > SIDE.1 || f64::from(a) < MIN_FILL * f64::from(w * h) {
            continue;
        }
        let c = |k: i32| centroids.at_2d::<f64>(i, k).copied().map_err(cv("components"));
        slot[i as usize] = out.len();
        out.push(Glyph {
            centre: Point::new(c(0)? + 0.5, c(1)? + 0.5),
            size: f64::from(w * h).sqrt(),
            hull: Vec::new(),
        });
        pixels.push(Vec::with_capacity(2 * h as usize));
    }
    // The two ends of each run of a glyph's pixels along a row: their hull is the hull of all
    // its pixels (every pixel lies between the ends of its run), from a few dozen points instead
    // of thousands.
    let cols = labels.cols().max(1) as usize;
    for (y, row) in labels.data_typed::<i32>().map_err(cv("components"))?.chunks_exact(cols).enumerate() {
        let mut x = 0;
        while x < row.len() {
            let end = x + row[x..].iter().take_while(|&&l| l == row[x]).count();
            if let Some(&g) = slot.get(row[x] as usize).filter(|&&g| g != usize::MAX) {
                let at = |x: usize| Point::new(x as f64 + 0.5, y as f64 + 0.5);
                pixels[g].push(at(x));
                if end - 1 > x {
                    pixels[g].push(at(end - 1));
                }
            }
            x = end;
        }
    }
    for (g, p) in out.iter_mut().zip(&pixels) {
        g.hull = convex_hull(p);
    }
    Ok(out)
}

/// The extent of the pixels `pixels` (their centres, or these centres' hull) along `right` (u)
/// and `down` (v): `[u0, u1, v0, v1]`, each pixel a unit square.
fn extent(pixels: &[Point], right: Point, down: Point) -> [f64; 4] {
    let mut e = [f64::INFINITY, f64::NEG_INFINITY, f64::INFINITY, f64::NEG_INFINITY];
    for p in pixels {
        let (u, v) = (p.x * right.x + p.y * right.y, p.x * down.x + p.y * down.y);
        e = [e[0].min(u), e[1].max(u), e[2].min(v), e[3].max(v)];
    }
    [e[0] - 0.5, e[1] + 0.5, e[2] - 0.5, e[3] + 0.5]
}

/// Every ordered pair (rank `i`, suit `j`) of glyphs of similar size about one glyph apart, the
/// larger at least `min_size`; the index box also takes in the glyphs beside the rank at its
/// height (the "1" of a "10").
fn pairs(gl: &[Glyph], min_size: f64, reach: f64) -> Vec<IndexProposal> {
    let mut out = Vec::new();
    for (i, a) in gl.iter().enumerate() {
        for (j, b) in gl.iter().enumerate() {
            let d = a.centre.dist(b.centre);
            let m = a.size.max(b.size);
            if i == j || m < min_size || d <= PAIR_DISTANCE_MIN * m || d >= reach * m {
                continue;
            }
            if b.size * SIZE_RATIO <= a.size || b.size >= SIZE_RATIO * a.size {
                continue;
            }
            let down = Point::new((b.centre.x - a.centre.x) / d, (b.centre.y - a.centre.y) / d);
            let right = Point::new(down.y, -down.x);
            let r = extent(&a.hull, right, down);
            let mut e = r;
            let grow =
                |e: &mut [f64; 4], x: [f64; 4]| *e = [e[0].min(x[0]), e[1].max(x[1]), e[2].min(x[2]), e[3].max(x[3])];
            grow(&mut e, extent(&b.hull, right, down));
            let hr = r[3] - r[2];
            for (k, c) in gl.iter().enumerate() {
                if k == i || k == j || a.centre.dist(c.centre) >= 1.6 * a.size {
                    continue;
                }
                let x = extent(&c.hull, right, down);
                // a "1" is narrower than the "0" beside it; a fan's next rank or a court's pip is not
                let beside = (x[0] - r[1]).max(r[0] - x[1]) < 0.5 * hr
                    && x[1] - x[0] <= BESIDE_WIDTH * (r[1] - r[0])
                    && x[3] - x[2] >= BESIDE_HEIGHT * hr;
                if x[2] > r[2] - 0.3 * hr && x[3] < r[3] + 0.3 * hr && beside {
                    grow(&mut e, x);
                }
            }
            out.push(IndexProposal { u: [e[0], e[1]], v: [e[2], e[3]], right, down, inverted: false });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use opencv::core::{Point as CvPoint, Scalar};

    /// A light image with an index drawn on it: a "7" (from −h to 0 in the card's frame) over a
    /// filled disc (the suit), turned by `angle` radians about `at`.
    fn index_image(at: Point, h: f64, angle: f64) -> Mat {
        let mut img = Mat::new_rows_cols_with_default(480, 640, core::CV_8UC3, Scalar::all(235.0)).unwrap();
        let (c, s) = (angle.cos(), angle.sin());
        // card frame: x right, y down; image = at + R·(x, y)
        let p =
            |x: f64, y: f64| CvPoint::new((at.x + c * x - s * y).round() as i32, (at.y + s * x + c * y).round() as i32);
        let ink = Scalar::all(20.0);
        let t = (h / 6.0).max(2.0) as i32;
        // the "7": a top bar and a slanted stem
        imgproc::line(&mut img, p(-0.3 * h, -h), p(0.3 * h, -h), ink, t, imgproc::LINE_8, 0).unwrap();
        imgproc::line(&mut img, p(0.3 * h, -h), p(-0.1 * h, 0.0), ink, t, imgproc::LINE_8, 0).unwrap();
        // the suit: a disc below
        imgproc::circle(&mut img, p(0.0, 0.55 * h), (0.3 * h) as i32, ink, -1, imgproc::LINE_8, 0).unwrap();
        img
    }

    /// A grey image with a bit of everything the ink masks meet: gradients, noise, dark and light
    /// glyphs, flat areas at both ends of the grey scale.
    fn busy_grey() -> Mat {
        let bgr = index_image(Point::new(200.0, 200.0), 40.0, 0.7);
        let mut grey = Mat::default();
        imgproc::cvt_color_def(&bgr, &mut grey, imgproc::COLOR_BGR2GRAY).unwrap();
        let mut state = 7u32;
        for y in 0..grey.rows() {
            let row = grey.at_row_mut::<u8>(y).unwrap();
            for (x, v) in row.iter_mut().enumerate() {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let noise = i32::from((state >> 24) as u8 % 9) - 4;
                let shade = if x > 400 {
                    255
                } else if y > 380 {
                    0
                } else {
                    i32::from(*v) - (x as i32) / 8
                };
                *v = (shade + noise).clamp(0, 255) as u8;
            }
        }
        imgproc::circle(&mut grey, CvPoint::new(500, 120), 20, Scalar::all(250.0), -1, imgproc::LINE_8, 0).unwrap();
        imgproc::circle(&mut grey, CvPoint::new(480, 300), 15, Scalar::all(40.0), -1, imgproc::LINE_8, 0).unwrap();
        grey
    }

    #[test]
    fn both_ink_masks_are_opencv_s_adaptive_threshold_of_the_image_and_of_its_inverse() {
        let grey = busy_grey();
        let threshold = |g: &Mat| {
            let mut out = Mat::default();
            let (method, kind) = (imgproc::ADAPTIVE_THRESH_MEAN_C, imgproc::THRESH_BINARY_INV);
            imgproc::adaptive_threshold(g, &mut out, 255.0, method, kind, BLOCK, f64::from(C_OFFSET)).unwrap();
            out.data_bytes().unwrap().to_vec()
        };
        let mut inverse = Mat::default();
        core::bitwise_not_def(&grey, &mut inverse).unwrap();
        let [dark, light] = ink(&grey).unwrap();
        let (want_dark, want_light) = (threshold(&grey), threshold(&inverse));
        assert!(want_dark.contains(&255) && want_light.contains(&255) && want_dark.contains(&0));
        assert_eq!(dark.data_bytes().unwrap(), &want_dark[..]);
        assert_eq!(light.data_bytes().unwrap(), &want_light[..]);
    }

    #[test]
    fn a_glyph_s_hull_is_the_hull_of_all_its_pixels() {
        let [dark, _] = ink(&busy_grey()).unwrap();
        let found = glyphs(&dark).unwrap();
        assert!(found.len() >= 2, "{} glyphs", found.len());
        let mut labels = Mat::default();
        imgproc::connected_components(&dark, &mut labels, 8, core::CV_32S).unwrap();
        let cols = labels.cols() as usize;
        let ids = labels.data_typed::<i32>().unwrap();
        for g in &found {
            // the component under the glyph's hull's first vertex, all of whose pixels are taken
            let v = g.hull[0];
            let id = ids[(v.y - 0.5) as usize * cols + (v.x - 0.5) as usize];
            let all: Vec<Point> = (0..ids.len())
                .filter(|&k| ids[k] == id)
                .map(|k| Point::new((k % cols) as f64 + 0.5, (k / cols) as f64 + 0.5))
                .collect();
            assert!(all.len() > g.hull.len());
            assert_eq!(g.hull, convex_hull(&all));
        }
    }

    #[test]
    fn a_rank_over_a_suit_is_proposed_upright_at_any_angle() {
        for angle in [0.0, 0.6, 2.0, 3.1, 4.4] {
            let at = Point::new(300.0, 240.0);
            let props = index_proposals(&index_image(at, 30.0, angle), CORNER_PAIR_REACH).unwrap();
            // the rank→suit order: `down` is the card's +y turned by `angle`
            let want = Point::new(-angle.sin(), angle.cos());
            let best = props
                .iter()
                .filter(|p| p.down.x * want.x + p.down.y * want.y > 0.95)
                .min_by(|a, b| a.centre().dist(at).total_cmp(&b.centre().dist(at)))
                .unwrap_or_else(|| panic!("angle {angle}: no upright proposal among {}", props.len()));
            // the index spans the rank's top (−h, less half the stroke) to the suit's bottom
            // (+0.85 h): 58 px
            assert!((best.height() - 58.0).abs() < 6.0, "angle {angle}: height {}", best.height());
            assert!(best.centre().dist(at) < 8.0, "angle {angle}: centre {:?}", best.centre());
            // and the reverse order is proposed too (the pair cannot tell rank from suit)
            assert!(props.iter().any(|p| p.down.x * want.x + p.down.y * want.y < -0.95));
        }
    }

    #[test]
    fn an_index_too_large_for_the_glyph_size_is_found_at_half_size() {
        let at = Point::new(320.0, 260.0);
        let props = index_proposals(&index_image(at, 120.0, 0.3), CORNER_PAIR_REACH).unwrap();
        let want = Point::new(-0.3f64.sin(), 0.3f64.cos());
        let best = props
            .iter()
            .filter(|p| p.down.x * want.x + p.down.y * want.y > 0.95)
            .min_by(|a, b| a.centre().dist(at).total_cmp(&b.centre().dist(at)))
            .expect("an upright proposal");
        // 1.85 h plus the stroke
        assert!((best.height() - 230.0).abs() < 20.0, "height {}", best.height());
    }

    /// An index read upright: rank above suit, its box 20 × 42 px at (100..120, 50..92).
    fn upright_index() -> IndexProposal {
        IndexProposal {
            u: [100.0, 120.0],
            v: [50.0, 92.0],
            right: Point::new(1.0, 0.0),
            down: Point::new(0.0, 1.0),
            inverted: false,
        }
    }

    #[test]
    fn views_put_the_index_at_the_top_left_of_a_card_of_its_size() {
        let p = upright_index();
        let vs = p.views();
        for (view, share) in vs.iter().zip(INDEX_SHARES) {
            let h = 42.0 / share;
            assert!((view[0].dist(view[3]) - h).abs() < 1e-9);
            assert!((view[0].dist(view[1]) - ASPECT * h).abs() < 1e-9);
            // the index's top-left lies inside the card, near its corner
            assert!(view[0].x < 100.0 && view[0].y < 50.0 && view[0].x > 100.0 - 0.1 * h);
        }
        // a turned index gives the same card turned
        let q = IndexProposal { right: Point::new(0.0, 1.0), down: Point::new(-1.0, 0.0), ..p };
        let v = q.views()[1];
        assert!((v[1].x - v[0].x).abs() < 1e-9 && v[1].y > v[0].y, "TR lies below TL: {v:?}");
    }

    #[test]
    fn the_glyph_view_is_centred_on_the_index_rank_up() {
        let p = upright_index();
        let q = p.glyph_quad();
        let h = 42.0 / GLYPH_SPAN;
        assert!((q[0].dist(q[3]) - h).abs() < 1e-9 && (q[0].dist(q[1]) - GLYPH_ASPECT * h).abs() < 1e-9);
        let centre = Point::new(0.25 * q.iter().map(|c| c.x).sum::<f64>(), 0.25 * q.iter().map(|c| c.y).sum::<f64>());
        assert!(centre.dist(p.centre()) < 1e-9 && centre.dist(Point::new(110.0, 71.0)) < 1e-9);
        assert!(q[0].y < q[3].y && q[0].x < q[1].x, "TL above BL, left of TR: {q:?}");
        // the same index lying on its side (the rank to the right of the suit): the view turns
        // with it, its top edge on the rank's side
        let side = IndexProposal { right: Point::new(0.0, 1.0), down: Point::new(-1.0, 0.0), ..p };
        let s = side.glyph_quad();
        assert!((s[1].x - s[0].x).abs() < 1e-9 && s[1].y > s[0].y, "TR below TL: {s:?}");
        assert!(s[3].x < s[0].x, "the suit's end lies to the left: {s:?}");
    }

    /// A glyph whose ink is the rectangle `[x0, x1] × [y0, y1]` (image pixels, upright).
    fn block(x0: f64, x1: f64, y0: f64, y1: f64) -> Glyph {
        let hull = vec![Point::new(x0, y0), Point::new(x1, y0), Point::new(x1, y1), Point::new(x0, y1)];
        let centre = Point::new(0.5 * (x0 + x1), 0.5 * (y0 + y1));
        Glyph { centre, size: ((x1 - x0) * (y1 - y0)).sqrt(), hull }
    }

    #[test]
    fn the_1_of_a_10_joins_the_index_and_a_shorter_pip_beside_it_does_not() {
        // a "0" 20 × 30 px over a suit 20 × 20 px below it
        let (zero, suit) = (block(100.0, 120.0, 50.0, 80.0), block(100.0, 120.0, 88.0, 108.0));
        let index_u = |beside: Glyph| {
            let props = pairs(&[zero.clone(), suit.clone(), beside], 0.0, GLYPH_PAIR_REACH);
            let p = props.iter().find(|p| p.down.y > 0.99).expect("the rank-over-suit pair");
            p.u
        };
        // the "1": as tall as the "0", narrow, just left of it
        let u = index_u(block(92.0, 96.0, 50.0, 80.0));
        assert!(u[0] < 92.0, "the 1 joins the index: {u:?}");
        // a pip beside the rank, as narrow, in its height band but two thirds of its height
        let u = index_u(block(92.0, 96.0, 55.0, 75.0));
        assert!(u[0] >= 99.0, "the short pip stays out: {u:?}");
    }

    #[test]
    fn a_blank_or_tiny_image_proposes_nothing() {
        let blank = Mat::new_rows_cols_with_default(480, 640, core::CV_8UC3, Scalar::all(200.0)).unwrap();
        assert!(index_proposals(&blank, GLYPH_PAIR_REACH).unwrap().is_empty());
        let tiny = Mat::new_rows_cols_with_default(8, 8, core::CV_8UC3, Scalar::all(0.0)).unwrap();
        assert!(index_proposals(&tiny, GLYPH_PAIR_REACH).unwrap().is_empty());
    }
}
