//! A face-up card left unnamed where it overlaps another card is read again from its outline
//! moved a few pixels along the line to its neighbours.
//!
//! On the table plane a fanned hand's middle card is placed by its one visible inner edge, and on
//! a face that prints a frame line inside its edge the fit can take that line for the edge: the
//! card is then put 4–8 px along the row, and its index corner cut from the misplaced outline
//! shows half a print, which the classifier rightly leaves `unknown` (docs/recognition.md, "Row
//! ends" and "Nudged outlines"). The tracker cannot confirm a card no frame names, and the round
//! stays unverified. The visible corner itself is crisp: read from the outline moved by the
//! error, it names the card.
//!
//! Each such card is read from its outline moved ±[`NUDGE_STEPS`] steps of
//! [`RecognizerOptions::nudge`](super::RecognizerOptions::nudge) times its short side, along the
//! card axis that points most to the cards it overlaps. A moved reading counts only where the
//! rules of one reading hold (the covered corner set aside, [`super::cover`]), and the card is
//! named only when every moved reading that names a card names the same one and no overlapping
//! card is named so — a moved cut that reaches the neighbour's index reads the neighbour.

use crate::calib::Point;
use crate::classify::{CardIdentity, Verdict};
use crate::locate::geometry::{intersect_convex, polygon_area};
use crate::locate::Quad;
use crate::rules::Card;

/// The moves tried, in steps along the chosen axis (both ways).
pub const NUDGE_STEPS: [f64; 4] = [-2.0, -1.0, 1.0, 2.0];

/// A card overlaps another when their outlines share at least this share of the smaller one.
const MIN_OVERLAP: f64 = 0.05;

/// The cards of `quads` that overlap card `k` (at least [`MIN_OVERLAP`] of the smaller outline).
pub fn overlapping(quads: &[Quad], k: usize) -> Vec<usize> {
    let area = polygon_area(&quads[k]);
    (0..quads.len())
        .filter(|&j| j != k)
        .filter(|&j| {
            let inter = polygon_area(&intersect_convex(&quads[k], &quads[j]));
            inter >= MIN_OVERLAP * area.min(polygon_area(&quads[j]))
        })
        .collect()
}

/// The unit vector along which card `k` is moved: of its two sides' directions, the one that
/// points most to the centres of the cards `neighbours` (summed magnitudes of the projections).
/// Along a fan that is the row; for a card under the middle of a pile, whichever axis the
/// neighbours lie along more. `None` without neighbours or for a degenerate quad.
pub fn nudge_axis(quads: &[Quad], k: usize, neighbours: &[usize]) -> Option<Point> {
    if neighbours.is_empty() {
        return None;
    }
    let q = &quads[k];
    let unit = |a: Point, b: Point| {
        let d = a.dist(b);
        (d > 1e-9).then(|| Point::new((b.x - a.x) / d, (b.y - a.y) / d))
    };
    let (across, along) = (unit(q[0], q[1])?, unit(q[1], q[2])?);
    let c = Point::mean(q);
    let pull = |axis: Point| {
        neighbours
            .iter()
            .map(|&j| {
                let o = Point::mean(&quads[j]);
                ((o.x - c.x) * axis.x + (o.y - c.y) * axis.y).abs()
            })
            .sum::<f64>()
    };
    Some(if pull(across) >= pull(along) { across } else { along })
}

/// `quad` moved `by` pixels along the unit vector `axis`.
pub fn moved(quad: &Quad, axis: Point, by: f64) -> Quad {
    quad.map(|p| Point::new(p.x + by * axis.x, p.y + by * axis.y))
}

/// What the moved readings of one card name, given its own reading `first` (from its outline
/// as located): the most confident of them if every one that names a card names the same card,
/// none of `neighbours` (the names of the cards it overlaps) is that card, and either the first
/// reading leans to that card, or two moves name it. `None` otherwise.
///
/// Two moves naming two cards are a misread somewhere, and a move that names a neighbour read
/// the neighbour's index. A moved cut shows the classifier what it never trained on — half a
/// print, a pip, the felt — and a single such reading with nothing behind it is too little: a
/// fanned ace of spades, moved two steps, was read as a king of clubs at 0.9991
/// (docs/recognition.md, "Nudged outlines"). A first reading that leans only to the card's
/// rank is not enough behind it either: the suit is what the classifiers confuse, and a K♠
/// whose first reading leaned to a king but to no card was named K♣ by one move at 1.0.
pub fn settle(first: &Verdict, readings: &[Verdict], neighbours: &[Card]) -> Option<Verdict> {
    let named: Vec<&Verdict> = readings.iter().filter(|v| v.identity.card().is_some()).collect();
    let CardIdentity::Card(card) = named.first()?.identity else { return None };
    if named.iter().any(|v| v.identity != CardIdentity::Card(card)) || neighbours.contains(&card) {
        return None;
    }
    let leans = first.reading == Some(card);
    if !leans && named.len() < 2 {
        return None;
    }
    named.into_iter().max_by(|a, b| a.confidence.total_cmp(&b.confidence)).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 40 × 60 card with its top-left corner at (x, y), sides along the image axes.
    fn card_at(x: f64, y: f64) -> Quad {
        [Point::new(x, y), Point::new(x + 40.0, y), Point::new(x + 40.0, y + 60.0), Point::new(x, y + 60.0)]
    }

    fn verdict(code: &str, confidence: f32) -> Verdict {
        Verdict {
            identity: CardIdentity::parse(code).expect("a label"),
            confidence,
            informative: 1,
            conflict: false,
            face: 1.0,
            reading: None,
            rank: None,
        }
    }

    #[test]
    fn a_fans_middle_card_is_moved_along_the_row_and_a_lone_card_not_at_all() {
        // three cards fanned 25 px apart along x, and one far away
        let quads = [card_at(0.0, 0.0), card_at(25.0, 0.0), card_at(50.0, 0.0), card_at(300.0, 0.0)];
        let n = overlapping(&quads, 1);
        assert_eq!(n, [0, 2]);
        let axis = nudge_axis(&quads, 1, &n).expect("an axis");
        assert!((axis.x.abs() - 1.0).abs() < 1e-9 && axis.y.abs() < 1e-9, "{axis:?}");
        assert!(overlapping(&quads, 3).is_empty());
        assert_eq!(nudge_axis(&quads, 3, &[]), None);
        // a column of cards stacked along y moves along y
        let column = [card_at(0.0, 0.0), card_at(0.0, 20.0)];
        let axis = nudge_axis(&column, 1, &overlapping(&column, 1)).expect("an axis");
        assert!((axis.y.abs() - 1.0).abs() < 1e-9, "{axis:?}");
        let m = moved(&column[0], axis, 3.0);
        assert!((m[2].dist(column[0][2]) - 3.0).abs() < 1e-9);
    }

    #[test]
    fn moved_readings_name_a_card_only_when_they_agree_and_no_neighbour_is_it() {
        let blank = Verdict { identity: CardIdentity::Unknown, ..verdict("unknown", 0.3) };
        let leaning = |code: &str| Verdict { reading: code.parse().ok(), ..blank };
        let two = [blank, verdict("2H", 0.995), verdict("2H", 0.9992), blank];
        let named = |first: &Verdict, moves: &[Verdict], theirs: &[Card]| {
            settle(first, moves, theirs).map(|v| (v.identity.code(), v.confidence))
        };
        // two moves agree: named even by a card whose first reading showed nothing
        assert_eq!(named(&blank, &two, &[]), Some(("2H".into(), 0.9992)));
        // one move alone names it only where the first reading leaned to it, not to its rank alone
        let one = [blank, verdict("2H", 0.9995), blank, blank];
        assert_eq!(named(&blank, &one, &[]), None);
        assert_eq!(named(&leaning("2H"), &one, &[]), Some(("2H".into(), 0.9995)));
        assert_eq!(named(&leaning("2D"), &one, &[]), None);
        let rank_two = Verdict { rank: Some((crate::rules::Rank::from_index(0), 0.99)), ..blank };
        assert_eq!(rank_two.rank.map(|(r, _)| r), Some("2H".parse::<Card>().unwrap().rank()));
        assert_eq!(named(&rank_two, &one, &[]), None);
        // one move reads another card: a misread somewhere, nothing named
        assert_eq!(named(&leaning("2H"), &[verdict("2H", 0.999), verdict("AH", 0.999)], &[]), None);
        // the neighbour's own name: the moved cut reached the neighbour's index
        let ah: Card = "AH".parse().expect("a card");
        assert_eq!(named(&leaning("AH"), &[verdict("AH", 0.9995), verdict("AH", 0.9995)], &[ah]), None);
        assert_eq!(named(&blank, &[blank, blank], &[]), None);
        // a back is no name
        assert_eq!(named(&blank, &[verdict("back", 0.9999), verdict("back", 0.9999)], &[]), None);
    }
}
