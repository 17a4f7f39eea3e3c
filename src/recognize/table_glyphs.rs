//! The printed indexes of a calibrated table's located cards, read by the glyph classifier.
//!
//! The card classifiers read a located card through fixed cuts of its rectangle (its corner
//! region, its whole face), so they must guess where each deck design prints its index and how
//! large. The glyph classifier reads the index itself, cut centred on its rank and suit glyphs
//! ([`IndexProposal::glyph_quad`]) — the view it reads uncalibrated photos with. Here the glyphs
//! are searched in each card's two corners, rectified upright and enlarged so that the ink
//! threshold sees a 15-px index as it sees a photo's; each pair found is read from the frame
//! itself, as training cut it. Its readings name only cards the card classifiers left unnamed
//! ([`reconsider`]; docs/recognition.md, "Calibrated tables: index glyphs in a located card's
//! corners").
use opencv::core::{self, Mat, Size};
use opencv::imgproc;

use super::{cv, RecognizeError};
use crate::calib::{Homography, Point};
use crate::classify::{self, CardIdentity, CornerCut, Verdict};
use crate::locate::geometry::{bounding_box, intersect_convex, polygon_area};
use crate::locate::glyphs::{self, IndexProposal};
use crate::locate::Quad;
use crate::rules::{Card, Rank};

/// A card's long side in the rectified corner views the glyphs are searched in, pixels. The
/// ink threshold's 31-px block was chosen for a 640-px photo's indexes; on 1080p simulator
/// sessions (cards ~75 px long) the share of face-up cards the glyph classifier named rose from
/// 11 % at 150 px to 51 % at 400 px, and 520 px added one card in 158.
pub const VIEW_LONG_PX: f64 = 400.0;
/// The card-frame region searched from each corner read (short side, long side shares): the
/// largest index of the simulator's designs lies within 0.27 × 0.44 of the card, its glyph pair
/// within this.
pub const SEARCH_REGION: (f64, f64) = (0.45, 0.50);
/// An index's box begins within this share of the card's short and long side from the corner
/// it is read at. Designs print their index 0.02–0.16 of the short side in; an index seen
/// farther in is a neighbour's, showing where an overlapping card covers this one's corner
/// (a stud hand's next card).
pub const NEAR_CORNER: (f64, f64) = (0.20, 0.12);
/// The rank-to-suit direction is within this angle of the card's long axis (degrees): a card's
/// index is printed along it, and a corner rectified from a measured quad is upright to a few
/// degrees.
pub const MAX_TILT_DEG: f64 = 25.0;
/// An index's height (rank top to suit bottom) as a share of the card's long side: the
/// simulator's designs print 0.17–0.39; pairs far outside are pips or art.
pub const INDEX_HEIGHT: (f64, f64) = (0.08, 0.45);

/// The index proposals of a located card's two corners, in frame pixels: glyph pairs found in
/// each corner rectified upright (the card's long side [`VIEW_LONG_PX`] long), read rank first
/// along the card's long axis, near the corner ([`NEAR_CORNER`]).
pub fn corner_proposals(image: &Mat, quad: &Quad) -> Result<Vec<IndexProposal>, RecognizeError> {
    let mut out = Vec::new();
    for view in classify::corner_quads(&crate::locate::order_quad(*quad)) {
        let (short, long) = (view[0].dist(view[1]), view[1].dist(view[2]));
        if short < 1.0 || long < 1.0 {
            continue;
        }
        let (lpx, wpx) = (VIEW_LONG_PX, VIEW_LONG_PX * short / long);
        let (rw, rh) = ((SEARCH_REGION.0 * wpx).round().max(1.0), (SEARCH_REGION.1 * lpx).round());
        let cut = CornerCut { patch: (rh as usize, rw as usize), region: SEARCH_REGION };
        let Some(m) = classify::corner_homography(&view, cut) else { continue };
        let mut region = Mat::default();
        imgproc::warp_perspective(
            image,
            &mut region,
            &Mat::from_slice_2d(&m).map_err(cv("corner map"))?,
            Size::new(rw as i32, rh as i32),
            imgproc::INTER_LINEAR | imgproc::WARP_INVERSE_MAP,
            core::BORDER_REPLICATE,
            core::Scalar::all(0.0),
        )
        .map_err(cv("corner view"))?;
        // region continuous coordinates → frame continuous coordinates (`m` maps pixel indices)
        let m = Homography(m);
        let to_frame = |p: Point| m.apply(Point::new(p.x - 0.5, p.y - 0.5)).map(|f| Point::new(f.x + 0.5, f.y + 0.5));
        let min_down = MAX_TILT_DEG.to_radians().cos();
        let debug = std::env::var_os("TABLECAM_GLYPH_DEBUG").is_some();
        for p in glyphs::index_proposals_full_size(&region, glyphs::GLYPH_PAIR_REACH)? {
            let q = p.quad();
            let [x0, y0, x1, y1] = bounding_box(&q);
            let h = p.height() / lpx;
            if debug {
                eprintln!(
                    "glyph pair in a {rw}x{rh} corner view: box [{x0:.0} {y0:.0} {x1:.0} {y1:.0}] height {h:.3} of the long side, down.y {:.2}",
                    p.down.y
                );
            }
            if p.down.y < min_down
                || !(INDEX_HEIGHT.0..=INDEX_HEIGHT.1).contains(&h)
                || x0 > NEAR_CORNER.0 * wpx
                || y0 > NEAR_CORNER.1 * lpx
                || x1 > rw + 1.0
                || y1 > rh + 1.0
            {
                continue;
            }
            if let [Some(a), Some(b), Some(c), Some(d)] = q.map(to_frame) {
                out.push(in_frame([a, b, c, d], p.inverted));
            }
        }
    }
    Ok(out)
}

/// The proposal whose index box has the corners `q` (`[TL, TR, BR, BL]` as the index reads) in
/// the frame: its axes from the box's sides, its extent along them.
fn in_frame(q: [Point; 4], inverted: bool) -> IndexProposal {
    let mid = |a: Point, b: Point| Point::new(0.5 * (a.x + b.x), 0.5 * (a.y + b.y));
    let (top, bottom) = (mid(q[0], q[1]), mid(q[3], q[2]));
    let d = top.dist(bottom).max(1e-9);
    let down = Point::new((bottom.x - top.x) / d, (bottom.y - top.y) / d);
    let right = Point::new(down.y, -down.x);
    let span = |axis: Point| {
        q.iter()
            .map(|c| c.x * axis.x + c.y * axis.y)
            .fold([f64::INFINITY, f64::NEG_INFINITY], |[a, b], v| [a.min(v), b.max(v)])
    };
    IndexProposal { u: span(right), v: span(down), right, down, inverted }
}

/// A glyph reading whose best label is a card with at least this probability shows that card's
/// index, however unsure.
pub const LEANS: f32 = 0.5;

/// A card's verdict from the card classifiers (`v`), completed with the glyph classifier's
/// readings of its indexes (`reads`, 54 probabilities each; `min_confidence` the glyph
/// classifier's own calibrated threshold). The card is named from a reading at or above the
/// threshold only where nothing else leans elsewhere:
///
/// - the card classifiers named nothing (a card they named stands: on overlapping hands a
///   covered corner's glyphs are a neighbour's index, and the glyph classifier is sure of it);
/// - every reading that leans to a card ([`LEANS`]) leans to this one (a covered card's other
///   corner shows its own index, most often unsurely);
/// - the card classifiers' combined reading leans to it or to nothing. (Requiring it to lean to
///   the same card named 40 fewer of 3,794 face-up cards on the seed-7 sessions, and prevented
///   no misread.)
///
/// A card it leaves unnamed may still get its rank from the glyph readings
/// ([`rank_from_glyphs`]).
pub fn reconsider(v: Verdict, reads: &[&[f32]], min_confidence: f32) -> Verdict {
    if matches!(v.identity, CardIdentity::Card(_)) {
        return v;
    }
    let v = Verdict { rank: rank_from_glyphs(&v, reads, min_confidence).or(v.rank), ..v };
    let mut named: Option<(Card, f32)> = None;
    for r in reads {
        let (label, p) = classify::argmax(r);
        let Some(card) = CardIdentity::from_label(label).card().filter(|_| p >= LEANS) else { continue };
        match named {
            Some((other, _)) if other != card => return v,
            Some((_, best)) if best >= p => {}
            _ => named = Some((card, p)),
        }
    }
    match named {
        Some((card, p)) if p >= min_confidence && v.reading.map_or(true, |r| r == card) => Verdict {
            identity: CardIdentity::Card(card),
            confidence: p,
            reading: Some(card),
            face: v.face.max(p),
            rank: Some((card.rank(), p)),
            ..v
        },
        _ => v,
    }
}

/// The rank of an unnamed card from the glyph readings of its indexes: where every reading
/// whose four labels of one rank sum to at least [`LEANS`] leans to the same rank, that rank
/// with its largest sum, if it reaches `min_confidence` and the card classifiers' rank and
/// reading, if any, are of it too. Two suits of one rank are no disagreement here (a suit sign
/// of a few pixels is what a design never trained on leaves unsure); two ranks are.
fn rank_from_glyphs(v: &Verdict, reads: &[&[f32]], min_confidence: f32) -> Option<(Rank, f32)> {
    let leaning: Vec<(Rank, f32)> = reads
        .iter()
        .filter(|r| r.len() >= 52)
        .map(|r| {
            let (rank, sum) = classify::leading_rank(|i| f64::from(r[i]));
            (rank, sum as f32)
        })
        .filter(|&(_, sum)| sum >= LEANS)
        .collect();
    let &(rank, _) = leaning.first()?;
    if leaning.iter().any(|&(r, _)| r != rank) {
        return None;
    }
    let p = leaning.iter().map(|&(_, p)| p).fold(f32::MIN, f32::max);
    let agrees = v.rank.map_or(true, |(r, _)| r == rank) && v.reading.map_or(true, |c| c.rank() == rank);
    (p >= min_confidence && agrees).then_some((rank, p))
}

/// Un-names each card of `named` (indexes into `verdicts` and `quads`, cards the glyph
/// classifier named) that another card overlapping it is named the same. The table-plane
/// finder sometimes measures a quad straddling two overlapping cards, and the glyph
/// classifier finds the upper card's index in its corner; one card cannot lie in two places
/// that overlap, even in a multi-deck game. (On stud seed 7's `two_cards_to_dealer` such a
/// twin made a face-down dealer card look dealt face up.)
pub fn drop_overlapping_twins(verdicts: &mut [Verdict], named: &[usize], quads: &[Quad]) {
    let twins: Vec<usize> = named
        .iter()
        .copied()
        .filter(|&k| {
            (0..verdicts.len()).any(|j| {
                j != k
                    && verdicts[j].identity == verdicts[k].identity
                    && polygon_area(&intersect_convex(&quads[j], &quads[k])) > 0.0
            })
        })
        .collect();
    for k in twins {
        verdicts[k] =
            Verdict { identity: CardIdentity::Unknown, reading: None, conflict: true, rank: None, ..verdicts[k] };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::NUM_LABELS;
    use opencv::core::{Point as CvPoint, Scalar};

    /// A card `long` px long lying on dark felt, turned by `angle` radians, with a "7" over a
    /// disc (a rank over its suit) printed at its top-left corner and, turned a half turn, at its
    /// bottom-right — and a third such index well inside the card, where a neighbour's index
    /// shows through an overlap. Returns the image, the card's quad and its "down" (+y) axis.
    fn card_image(long: f64, angle: f64) -> (Mat, Quad, Point) {
        card_image_with_index(long, angle, 0.09, (0.55, 0.3), true)
    }

    /// [`card_image`] with the rank `h` of the long side high, its suit disc's centre `suit.0`
    /// rank heights below the rank's foot and `suit.1` of them in radius, and the inner index
    /// only if `inner`.
    fn card_image_with_index(long: f64, angle: f64, h: f64, suit: (f64, f64), inner: bool) -> (Mat, Quad, Point) {
        let mut img =
            Mat::new_rows_cols_with_default(360, 480, core::CV_8UC3, Scalar::new(40.0, 90.0, 40.0, 0.0)).unwrap();
        let (c, s) = (angle.cos(), angle.sin());
        let short = 0.7 * long;
        let centre = Point::new(240.0, 180.0);
        // card frame (x across, y along; origin at its top-left corner) → image
        let at = |x: f64, y: f64| {
            let (x, y) = (x - 0.5 * short, y - 0.5 * long);
            Point::new(centre.x + c * x - s * y, centre.y + s * x + c * y)
        };
        let cv = |p: Point| CvPoint::new(p.x.round() as i32, p.y.round() as i32);
        let quad = [at(0.0, 0.0), at(short, 0.0), at(short, long), at(0.0, long)];
        let corners: opencv::core::Vector<CvPoint> = quad.iter().map(|&p| cv(p)).collect();
        imgproc::fill_convex_poly(&mut img, &corners, Scalar::all(235.0), imgproc::LINE_AA, 0).unwrap();
        let ink = Scalar::all(20.0);
        let h = h * long;
        let t = (h / 6.0).max(2.0) as i32;
        // an index whose rank's foot is at card point (x, y), upright (`turn` 1) or a half turn
        let mut index = |x: f64, y: f64, turn: f64| {
            let p = |dx: f64, dy: f64| cv(at(x + turn * dx, y + turn * dy));
            imgproc::line(&mut img, p(-0.3 * h, -h), p(0.3 * h, -h), ink, t, imgproc::LINE_8, 0).unwrap();
            imgproc::line(&mut img, p(0.3 * h, -h), p(-0.1 * h, 0.0), ink, t, imgproc::LINE_8, 0).unwrap();
            imgproc::circle(&mut img, p(0.0, suit.0 * h), (suit.1 * h) as i32, ink, -1, imgproc::LINE_8, 0).unwrap();
        };
        // 0.09 of the short side in, or far enough that a large rank stays on the card
        let x = (0.09 * short).max(0.3 * h + 0.03 * long);
        index(x, 0.04 * long + h, 1.0);
        index(short - x, 0.96 * long - h, -1.0);
        if inner {
            index(0.40 * short, 0.04 * long + h, 1.0);
        }
        (img, quad, Point::new(-s, c))
    }

    /// The nicu designs (aisleriot-ornamental, kde-nicu-ornamental, kde-nicu-white) print their
    /// index down to 0.44 of the card's long side; searched to 0.40 its suit was cut at the
    /// region's edge, and the glyph classifier read a blob where the ♠ is.
    #[test]
    fn an_index_reaching_down_to_0_44_of_the_card_is_proposed() {
        for angle in [0.0, 0.7, 2.5] {
            // as aisleriot-ornamental's "10♠": rank 0.04–0.19 of the long side, a large suit below
            // it down to 0.04 + 0.15 × (1 + 1.15 + 0.5) = 0.44
            let (img, quad, down) = card_image_with_index(110.0, angle, 0.15, (1.15, 0.5), false);
            let props = corner_proposals(&img, &quad).unwrap();
            let along = |p: &IndexProposal| p.down.x * down.x + p.down.y * down.y;
            // the whole index, its suit's foot 0.4375 of the long side from the corner: a suit
            // cut at the region's edge is read as a blob, not a ♠
            let reach = |p: &IndexProposal, corner: Point| p.v[1] - (corner.x * p.down.x + corner.y * p.down.y);
            let near = |corner: Point, sign: f64| {
                props.iter().any(|p| {
                    sign * along(p) > 0.95 && p.centre().dist(corner) < 0.35 * 110.0 && reach(p, corner) > 0.42 * 110.0
                })
            };
            assert!(near(quad[0], 1.0), "angle {angle}: no whole index at the top-left: {props:?}");
            assert!(near(quad[2], -1.0), "angle {angle}: no whole index at the bottom-right: {props:?}");
        }
    }

    #[test]
    fn a_cards_two_indexes_are_proposed_along_its_long_axis_and_an_index_farther_in_is_not() {
        for angle in [0.0, 0.5, 1.9, 3.6] {
            let (img, quad, down) = card_image(110.0, angle);
            let props = corner_proposals(&img, &quad).unwrap();
            let along = |p: &IndexProposal| p.down.x * down.x + p.down.y * down.y;
            let centres = |sign: f64| {
                props.iter().filter(|p| sign * along(p) > 0.95).map(IndexProposal::centre).collect::<Vec<_>>()
            };
            // the top-left index reads along +y, the bottom-right one along −y, each near its corner
            let (tl, br) = (quad[0], quad[2]);
            let near = |cs: &[Point], corner: Point| cs.iter().any(|c| c.dist(corner) < 0.25 * 110.0);
            assert!(near(&centres(1.0), tl), "angle {angle}: no index at the top-left: {props:?}");
            assert!(near(&centres(-1.0), br), "angle {angle}: no index at the bottom-right: {props:?}");
            // the index printed 0.40 of the short side in is no index of this card
            let inner = Point::new(
                tl.x + (quad[1].x - tl.x) * 0.40 + down.x * 0.1 * 110.0,
                tl.y + (quad[1].y - tl.y) * 0.40 + down.y * 0.1 * 110.0,
            );
            assert!(props.iter().all(|p| p.centre().dist(inner) > 0.1 * 110.0), "angle {angle}: {props:?}");
            // every proposal reads along the card's long axis
            assert!(props.iter().all(|p| along(p).abs() > MAX_TILT_DEG.to_radians().cos() - 0.02), "{props:?}");
        }
    }

    fn probs(label: &str, p: f32) -> Vec<f32> {
        let labels = classify::labels();
        let i = labels.iter().position(|l| l == label).unwrap();
        let mut v = vec![(1.0 - p) / (NUM_LABELS - 1) as f32; NUM_LABELS];
        v[i] = p;
        v
    }

    fn card(code: &str) -> Card {
        code.parse().unwrap()
    }

    fn unnamed(reading: Option<&str>) -> Verdict {
        Verdict {
            identity: CardIdentity::Unknown,
            confidence: 0.4,
            informative: 2,
            conflict: false,
            face: 0.9,
            reading: reading.map(card),
            rank: None,
        }
    }

    /// Two suits of one rank in the glyph readings: no card, but its rank.
    #[test]
    fn glyph_readings_sure_of_a_rank_only_give_the_rank() {
        // `a` at 0.6, `b` at `pb`, the rest spread over the other labels
        let split_at = |a: &str, b: &str, pb: f32| {
            let mut v = probs(a, 0.6);
            let j = classify::labels().iter().position(|l| l == b).unwrap();
            let rest = (1.0 - 0.6 - pb) / (NUM_LABELS - 2) as f32;
            v.iter_mut().enumerate().for_each(|(i, x)| {
                *x = if i == j {
                    pb
                } else if *x < 0.6 {
                    rest
                } else {
                    *x
                }
            });
            v
        };
        let split = |a: &str, b: &str| split_at(a, b, 0.3995);
        let spade_or_club = split("8S", "8C");
        let v = reconsider(unnamed(None), &[&spade_or_club], 0.998);
        assert_eq!(v.identity, CardIdentity::Unknown);
        let (rank, p) = v.rank.expect("the rank");
        assert!(rank == Rank::Eight && p >= 0.998, "{v:?}");
        // a reading leaning to another rank, or the card classifiers leaning to one: no rank
        let nine = probs("9C", 0.7);
        assert_eq!(reconsider(unnamed(None), &[&spade_or_club, &nine], 0.998).rank, None);
        assert_eq!(reconsider(unnamed(Some("9S")), &[&spade_or_club], 0.998).rank, None);
        // too unsure
        let weak = split_at("8S", "8C", 0.39);
        assert_eq!(reconsider(unnamed(None), &[&weak], 0.998).rank, None);
    }

    #[test]
    fn a_sure_glyph_reading_names_an_unnamed_card_unless_anything_leans_elsewhere() {
        let (sure, unsure) = (probs("7H", 0.999), probs("7H", 0.8));
        let named = reconsider(unnamed(None), &[&sure, &unsure], 0.998);
        assert_eq!(named.identity, CardIdentity::Card(card("7H")));
        assert!((named.confidence - 0.999).abs() < 1e-6 && named.reading == Some(card("7H")));
        // the card classifiers leaning the same way, or a reading of `unknown`, change nothing
        let unknown = probs("unknown", 0.99);
        assert_eq!(reconsider(unnamed(Some("7H")), &[&sure, &unknown], 0.998).identity, named.identity);
        // below the threshold: no name
        assert_eq!(reconsider(unnamed(None), &[&unsure], 0.998).identity, CardIdentity::Unknown);
        // another corner leaning to another card (a covered corner shows a neighbour's index)
        let other = probs("6H", 0.7);
        let v = reconsider(unnamed(None), &[&sure, &other], 0.998);
        assert_eq!((v.identity, v.reading), (CardIdentity::Unknown, None));
        // the card classifiers leaning to another card
        let v = reconsider(unnamed(Some("6H")), &[&sure], 0.998);
        assert_eq!(v, unnamed(Some("6H")));
    }

    #[test]
    fn a_glyph_name_that_an_overlapping_card_also_bears_is_dropped() {
        let (seven, six) = (card("7H"), card("6H"));
        let named =
            |c: Card| Verdict { identity: CardIdentity::Card(c), confidence: 0.999, reading: Some(c), ..unnamed(None) };
        let square =
            |x: f64| [Point::new(x, 0.0), Point::new(x + 10.0, 0.0), Point::new(x + 10.0, 10.0), Point::new(x, 10.0)];
        // 0: 7H (card classifiers); 1: 7H by the glyphs, overlapping 0; 2: 7H by the glyphs, apart;
        // 3: 6H by the glyphs, overlapping 0
        let quads = [square(0.0), square(5.0), square(40.0), square(3.0)];
        let mut v = vec![named(seven), named(seven), named(seven), named(six)];
        drop_overlapping_twins(&mut v, &[1, 2, 3], &quads);
        assert_eq!(
            v.iter().map(|v| v.identity.card()).collect::<Vec<_>>(),
            [Some(seven), None, Some(seven), Some(six)]
        );
        assert_eq!(v[1].reading, None);
    }

    #[test]
    fn a_card_the_card_classifiers_named_stands_against_the_glyphs() {
        let six = card("6H");
        let v = Verdict { identity: CardIdentity::Card(six), confidence: 0.9995, reading: Some(six), ..unnamed(None) };
        let sure_other = probs("7H", 0.9999);
        assert_eq!(reconsider(v, &[&sure_other], 0.998), v);
    }
}
