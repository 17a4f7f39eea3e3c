//! A face's pips: the suit symbols printed on its body, cut one by one and compared by shape.
//!
//! On a deck design the classifiers never saw, a card is read surely as the other suit of its
//! colour (5♠ as 5♣, 8♠ as 8♣ on kde-dondorf under a dim camera; docs/pipeline.md, "Pips told
//! apart by their outlines"). Its print then matches the real card's almost everywhere: the pips
//! lie in the same places, and a tile a few pixels wide that may shift to find its match finds
//! a club where a spade was. Each pip's own outline differs, though (a club's three round lobes,
//! a spade's point), and the two cards' pips, each laid on its own centre, show it.
use opencv::core::Mat;

use super::twins::CutView;
use super::RecognizeError;
use crate::calib::Polygon;
use crate::classify::{self, CornerCut};
use crate::locate::{order_quad, Quad};

/// The whole card upright, sampled about twice as fine as a 1080p camera shows a card over the
/// table (~75 px long): a pip is then ~18 patch pixels across.
const CUT: CornerCut = CornerCut { patch: (160, 100), region: (1.0, 1.0) };
/// Ink is smoothed first (Gaussian σ, patch pixels): camera noise, not the outline.
const BLUR_SIGMA: f32 = 1.0;
/// A pixel is ink where its darkest channel lies this far below the paper's (0..1 of the
/// paper): black and red ink alike.
const INK: f32 = 0.55;
/// A pip's ink area, patch pixels: the index's small suit signs and noise fall below it, court
/// pictures and an ace's great pip above it.
const PIP_AREA: (usize, usize) = (60, 700);
/// A pip's bounding box is about as wide as high, and its ink fills a good part of it.
const PIP_ASPECT: (f64, f64) = (0.6, 1.6);
const PIP_FILL: (f64, f64) = (0.35, 0.92);
/// Pips lie between the index columns: centres within this share of the width from the middle.
const PIP_COLUMNS: f64 = 0.33;
/// A pip partly under another card is still cut when at most this share of its outline is
/// hidden: its shown part is compared, and its centre moves by a pixel or so.
const MAX_HIDDEN_OUTLINE: f64 = 0.25;
/// A card's pips lie within this factor of its median pip's area.
const PIP_SIZE: (f64, f64) = (0.6, 1.6);
/// The window each pip is compared in (patch pixels, square), and how far it may shift to find
/// its match (its centre is found to about a pixel).
const WINDOW: usize = 28;
const SHIFT: isize = 2;
/// Two cards' pips differ when their likeness ([`Pips::likeness`]) falls below this. True copies
/// (the duplicate-card scenarios of seeds 7, 8, 9, 11 and 13, four rulesets, 1080p) measured
/// 0.953–0.996 on their true outlines and 0.951–0.994 as the pipeline outlined them; Fortune 2025
/// seed 13's spades read as clubs (`kde-dondorf`, dim) 0.82–0.934 and 0.85–0.92 (0.85–0.941 with
/// pips partly hidden and of one size, session 61: 1 of 43 comparisons of round 7's 3♠ at 0.94 or
/// more).
pub const PIPS_DIFFERING: f32 = 0.94;
/// Fewer pips than this on either card compare nothing: the median of a few pips' likeness
/// is steadier than one pip's.
pub const MIN_PIPS: usize = 2;

/// The pips of one card as a frame shows it: each its ink in a window about its centre.
pub struct Pips {
    shapes: Vec<Shape>,
}

struct Shape {
    /// The ink's gradient (columns, rows) at each pixel of the window, row by row; `None` on its
    /// border and where the pixel or a neighbour is not shown.
    gradient: Vec<Option<(f32, f32)>>,
}

impl Pips {
    /// The pips of the card outlined by `quad`, where none of `covers` lies.
    pub fn cut(image: &Mat, quad: &Quad, covers: &[Polygon]) -> Result<Pips, RecognizeError> {
        let (h, w) = CUT.patch;
        let plane = h * w;
        let view = classify::corner_quads(&order_quad(*quad))[0];
        let CutView { rgb, shown, .. } = CutView::cut(image, &view, CUT, covers)?;
        let darkest: Vec<f32> = (0..plane).map(|i| rgb[i].min(rgb[plane + i]).min(rgb[2 * plane + i])).collect();
        let lit: Vec<f32> = (0..plane).filter(|&i| shown[i]).map(|i| darkest[i]).collect();
        if lit.len() < plane / 8 {
            return Ok(Pips { shapes: Vec::new() });
        }
        // The paper's level of each pixel's darkest channel, as the twin check finds its paper.
        let paper = super::twins::paper_level(lit);
        let ink: Vec<f32> = darkest.iter().map(|&v| (1.0 - v / paper).clamp(0.0, 1.0)).collect();
        let ink = super::twins::blur(&ink, (h, w), BLUR_SIGMA);
        let shapes = pips(blobs(&ink, &shown, (h, w)))
            .into_iter()
            .filter_map(|b| Shape::at(&ink, &shown, (h, w), b.cy, b.cx))
            .collect();
        Ok(Pips { shapes })
    }

    /// How many pips were found.
    pub fn count(&self) -> usize {
        self.shapes.len()
    }

    /// Whether two cards' pips differ in outline ([`PIPS_DIFFERING`]); `None` when either
    /// shows too few to compare.
    pub fn differ(&self, other: &Pips) -> Option<bool> {
        self.likeness(other).map(|l| l < PIPS_DIFFERING)
    }

    /// How alike two cards' pips are: for each pip of either, its best likeness
    /// ([`Shape::likeness`]) to a pip of the other; the median. `None` when fewer than
    /// [`MIN_PIPS`] pips of either card can be compared (too little of two pips' windows shown
    /// at once says nothing: it is no evidence that they differ).
    pub fn likeness(&self, other: &Pips) -> Option<f32> {
        let best = |a: &Shape, b: &Pips| {
            b.shapes.iter().flat_map(|s| [false, true].map(|turned| a.likeness(s, turned))).flatten().reduce(f32::max)
        };
        let mut all: Vec<f32> = self.shapes.iter().filter_map(|a| best(a, other)).collect();
        let compared = all.len();
        all.extend(other.shapes.iter().filter_map(|b| best(b, self)));
        if compared < MIN_PIPS || all.len() - compared < MIN_PIPS {
            return None;
        }
        all.sort_by(f32::total_cmp);
        Some(all[all.len() / 2])
    }
}

impl Shape {
    /// The window about (cy, cx), where it lies inside the patch.
    fn at(ink: &[f32], shown: &[bool], (h, w): (usize, usize), cy: f64, cx: f64) -> Option<Shape> {
        let half = (WINDOW / 2) as isize;
        let (y0, x0) = (cy.round() as isize - half, cx.round() as isize - half);
        if y0 < 0 || x0 < 0 || y0 as usize + WINDOW > h || x0 as usize + WINDOW > w {
            return None;
        }
        let n = WINDOW;
        let shown_at = |y: usize, x: usize| shown[(y0 as usize + y) * w + x0 as usize + x];
        let ink_at = |y: usize, x: usize| ink[(y0 as usize + y) * w + x0 as usize + x];
        let gradient = (0..n * n)
            .map(|i| {
                let (y, x) = (i / n, i % n);
                let inner = y >= 1 && x >= 1 && y + 1 < n && x + 1 < n;
                let all_shown = inner
                    && [(y, x), (y, x - 1), (y, x + 1), (y - 1, x), (y + 1, x)].iter().all(|&(v, u)| shown_at(v, u));
                all_shown.then(|| (ink_at(y, x + 1) - ink_at(y, x - 1), ink_at(y + 1, x) - ink_at(y - 1, x)))
            })
            .collect();
        Some(Shape { gradient })
    }

    /// The best likeness of this pip's outline to `other`'s (turned half a turn when
    /// `turned`), shifted within [`SHIFT`]: the normalized cross-correlation of their ink
    /// gradients, over the pixels both show. Gradients, not ink: two blobs of one size correlate
    /// well whatever their outlines, but a lobe's edge and a point's lie apart. `None` where no
    /// shift leaves half the window shown in both.
    fn likeness(&self, other: &Shape, turned: bool) -> Option<f32> {
        let mut best: Option<f32> = None;
        for dy in -SHIFT..=SHIFT {
            for dx in -SHIFT..=SHIFT {
                let (mut sab, mut saa, mut sbb, mut n) = (0.0f32, 0.0f32, 0.0f32, 0usize);
                for y in 0..WINDOW as isize {
                    for x in 0..WINDOW as isize {
                        let (Some(p), Some(q)) = (self.gradient(y, x, false), other.gradient(y + dy, x + dx, turned))
                        else {
                            continue;
                        };
                        sab += p.0 * q.0 + p.1 * q.1;
                        saa += p.0 * p.0 + p.1 * p.1;
                        sbb += q.0 * q.0 + q.1 * q.1;
                        n += 1;
                    }
                }
                if n >= WINDOW * WINDOW / 2 {
                    let r = sab / (saa * sbb).sqrt().max(1e-12);
                    best = Some(best.map_or(r, |b| b.max(r)));
                }
            }
        }
        best
    }

    /// The ink's gradient at (y, x) of the window, seen half a turn round when `turned`; `None`
    /// off the window or where it is not shown.
    fn gradient(&self, y: isize, x: isize, turned: bool) -> Option<(f32, f32)> {
        let n = WINDOW as isize;
        if y < 0 || x < 0 || y >= n || x >= n {
            return None;
        }
        let (y, x) = if turned { (n - 1 - y, n - 1 - x) } else { (y, x) };
        let (gx, gy) = self.gradient[(y * n + x) as usize]?;
        Some(if turned { (-gx, -gy) } else { (gx, gy) })
    }
}

/// The pip-like ink blobs shown, at most [`MAX_HIDDEN_OUTLINE`] of each one's outline under
/// another card.
fn blobs(ink: &[f32], shown: &[bool], (h, w): (usize, usize)) -> Vec<Blob> {
    let mut seen = vec![false; h * w];
    let mut out = Vec::new();
    for start in 0..h * w {
        if seen[start] || !shown[start] || ink[start] < INK {
            continue;
        }
        seen[start] = true;
        let mut stack = vec![start];
        let (mut area, mut at_border) = (0usize, false);
        // The blob's outline: neighbours (4-connected) that are paper, and those hidden.
        let (mut open, mut hidden) = (0usize, 0usize);
        let (mut sy, mut sx, mut sw) = (0.0, 0.0, 0.0);
        let (mut y0, mut y1, mut x0, mut x1) = (h, 0, w, 0);
        while let Some(i) = stack.pop() {
            let (y, x) = (i / w, i % w);
            area += 1;
            let wt = f64::from(ink[i]);
            sy += wt * y as f64;
            sx += wt * x as f64;
            sw += wt;
            (y0, y1, x0, x1) = (y0.min(y), y1.max(y), x0.min(x), x1.max(x));
            at_border |= y == 0 || x == 0 || y + 1 == h || x + 1 == w;
            let up = (y > 0).then(|| i - w);
            let down = (y + 1 < h).then_some(i + w);
            let left = (x > 0).then(|| i - 1);
            let right = (x + 1 < w).then_some(i + 1);
            for j in [up, down, left, right].into_iter().flatten() {
                if !shown[j] {
                    hidden += 1;
                } else if ink[j] < INK {
                    open += 1;
                } else if !seen[j] {
                    seen[j] = true;
                    stack.push(j);
                }
            }
        }
        let touches = at_border || hidden as f64 > MAX_HIDDEN_OUTLINE * (open + hidden) as f64;
        let (bh, bw) = ((y1 - y0 + 1) as f64, (x1 - x0 + 1) as f64);
        let (cy, cx) = (sy / sw, sx / sw);
        let pip = !touches
            && (PIP_AREA.0..=PIP_AREA.1).contains(&area)
            && (PIP_ASPECT.0..=PIP_ASPECT.1).contains(&(bh / bw))
            && (PIP_FILL.0..=PIP_FILL.1).contains(&(area as f64 / (bh * bw)))
            && (cx - w as f64 / 2.0).abs() <= PIP_COLUMNS * w as f64;
        if pip {
            out.push(Blob { cy, cx, area, whole: hidden == 0 });
        }
    }
    out
}

/// A pip-like ink blob of a cut.
struct Blob {
    /// Its centre (row, column; ink-weighted).
    cy: f64,
    cx: f64,
    area: usize,
    /// No part of its outline is hidden.
    whole: bool,
}

/// The pips among a card's pip-like blobs. Whole ones where at least [`MIN_PIPS`] are; else
/// those partly hidden too (a fan's first card, its pips by the next card's edge). Then only
/// those of the card's pip size (a card prints its pips alike; a blob far larger is a
/// neighbour's index sign or pips run together): within [`PIP_SIZE`] of the median's area.
fn pips(blobs: Vec<Blob>) -> Vec<Blob> {
    let whole = blobs.iter().filter(|b| b.whole).count();
    let mut kept: Vec<Blob> = blobs.into_iter().filter(|b| b.whole || whole < MIN_PIPS).collect();
    let mut areas: Vec<usize> = kept.iter().map(|b| b.area).collect();
    areas.sort_unstable();
    if let Some(&median) = areas.get(areas.len().saturating_sub(1) / 2) {
        let median = median as f64;
        kept.retain(|b| (PIP_SIZE.0 * median..=PIP_SIZE.1 * median).contains(&(b.area as f64)));
    }
    kept
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(area: usize, whole: bool) -> Blob {
        Blob { cy: 0.0, cx: 0.0, area, whole }
    }

    fn areas(blobs: Vec<Blob>) -> Vec<usize> {
        pips(blobs).iter().map(|b| b.area).collect()
    }

    #[test]
    fn a_card_s_pips_are_its_blobs_of_one_size_whole_ones_first() {
        // A neighbour's large index sign among a 10's pips (stud seed 7's 10♠) is no pip.
        assert_eq!(areas(vec![blob(80, true), blob(356, true), blob(78, true)]), [80, 78]);
        // Two whole pips: the one partly hidden is left out.
        assert_eq!(areas(vec![blob(80, true), blob(82, true), blob(70, false)]), [80, 82]);
        // Fewer whole pips than MIN_PIPS: those partly hidden count too.
        assert_eq!(areas(vec![blob(300, true), blob(260, false), blob(280, false)]), [300, 260, 280]);
        assert!(pips(vec![]).is_empty());
    }

    #[test]
    fn pips_too_little_shown_at_once_are_no_evidence() {
        // Pips whose windows are shown only in their top rows, and pips shown only in their
        // bottom rows: no shift (either way up) lets half a window be compared.
        let shape = |rows: std::ops::Range<usize>| Shape {
            gradient: (0..WINDOW * WINDOW).map(|i| rows.contains(&(i / WINDOW)).then_some((1.0, 0.5))).collect(),
        };
        let top = Pips { shapes: vec![shape(0..20), shape(0..20)] };
        let bottom = Pips { shapes: vec![shape(20..28), shape(20..28)] };
        assert_eq!(top.likeness(&bottom), None);
        assert_eq!(top.differ(&bottom), None);
        // Shown alike, they compare.
        assert_eq!(top.likeness(&top).map(|l| l > 0.99), Some(true));
    }
}
