//! The suit of a covered card: a stricter threshold where the two suits of one colour are told
//! apart by a few pixels.
//!
//! A card lying under another (the cards of a fanned stud hand, a pile) shows one index corner,
//! and at 1080p that index's suit glyph is about 6 px wide: a spade's point and a club's lobes
//! blur to one black blob. On the 26 seed-7 sessions (`eval-recognition --session`, every 20th
//! frame) the card classifiers named 598 black cards less than 60 % visible and read 5 of them as
//! the other black suit (3♠ as 3♣ twice, A♠ as A♣ twice, 2♠ as 2♣), each at 0.9990–0.99990; a
//! stud seed 8 J♠ read as J♣ at 0.9992 in 18 frames voided a round as a duplicate J♣. Every one
//! of them stays below [`COVERED_BLACK_MIN_CONFIDENCE`], which costs 70 of the 593 right readings
//! of such cards (a tracker waits for the frames that pass). Red suits differ in shape (a heart's
//! notch, a diamond's points) and showed no such confusion (531 red cards, none read as the other
//! red suit), so their threshold stays.
use super::Quad;
use crate::classify::{CardIdentity, Verdict};
use crate::locate::geometry::{intersect_convex, polygon_area};
use crate::rules::Suit;

/// Share of a card's quad that other located cards overlap above which it counts as covered. A
/// fanned hand's cards overlap their neighbours by half a card or more; cards of a spread hand
/// that merely touch overlap by a few per cent.
pub const COVERED_SHARE: f64 = 0.2;

/// The least confidence that names a covered card of a black suit (the recognizer's calibrated
/// threshold, 0.999, for every other card).
pub const COVERED_BLACK_MIN_CONFIDENCE: f32 = 0.9999;

/// The share of quad `k`'s area that the other quads overlap (capped at 1; each overlap counted
/// on its own, so two neighbours over the same strip count twice).
pub fn covered_share(quads: &[Quad], k: usize) -> f64 {
    let area = polygon_area(&quads[k]);
    if area <= 0.0 {
        return 0.0;
    }
    let over: f64 =
        (0..quads.len()).filter(|&j| j != k).map(|j| polygon_area(&intersect_convex(&quads[k], &quads[j]))).sum();
    (over / area).min(1.0)
}

/// Unnames each black card (`verdicts[k]`, located as `quads[k]`) that other cards cover
/// ([`COVERED_SHARE`]) and that was named below [`COVERED_BLACK_MIN_CONFIDENCE`]. With
/// `keep_reading` its reading stays (for the glyph step, which names a card only where the card
/// classifiers lean to it or to nothing); without, a covered card's black reading below that
/// confidence is dropped too, so that a tracker does not confirm it from agreeing unsure
/// readings either: the same blob reads the same wrong suit frame after frame.
pub fn hold_covered_black_suits(verdicts: &mut [Verdict], quads: &[Quad], keep_reading: bool) {
    let black = |c: Option<crate::rules::Card>| c.is_some_and(|c| matches!(c.suit(), Suit::Spades | Suit::Clubs));
    for (k, v) in verdicts.iter_mut().enumerate() {
        let unsure_black = v.confidence < COVERED_BLACK_MIN_CONFIDENCE
            && (black(v.identity.card()) || !keep_reading && black(v.reading));
        if unsure_black && covered_share(quads, k) >= COVERED_SHARE {
            v.identity = CardIdentity::Unknown;
            if !keep_reading {
                v.reading = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calib::Point;
    use crate::rules::Card;

    fn rect(x: f64, y: f64) -> Quad {
        [Point::new(x, y), Point::new(x + 50.0, y), Point::new(x + 50.0, y + 80.0), Point::new(x, y + 80.0)]
    }

    fn named(code: &str, confidence: f32) -> Verdict {
        let card: Card = code.parse().unwrap();
        Verdict {
            identity: CardIdentity::Card(card),
            confidence,
            informative: 1,
            conflict: false,
            face: 1.0,
            reading: Some(card),
        }
    }

    #[test]
    fn a_covered_share_counts_the_area_other_cards_lie_over() {
        // a fan: each card 20 px right of the last (60 % of the 50-px width under the next)
        let quads = [rect(0.0, 0.0), rect(20.0, 0.0), rect(200.0, 0.0)];
        assert!((covered_share(&quads, 0) - 0.6).abs() < 1e-9);
        assert!((covered_share(&quads, 1) - 0.6).abs() < 1e-9);
        assert_eq!(covered_share(&quads, 2), 0.0);
    }

    #[test]
    fn a_covered_black_card_needs_the_stricter_confidence() {
        let quads = [rect(0.0, 0.0), rect(20.0, 0.0), rect(200.0, 0.0), rect(30.0, 40.0)];
        let verdicts = [named("JC", 0.9992), named("3H", 0.9992), named("AS", 0.9992), named("2S", 0.99995)];
        for keep_reading in [true, false] {
            let mut v = verdicts;
            hold_covered_black_suits(&mut v, &quads, keep_reading);
            // the covered J♣ read at 0.9992 is held; its reading is kept only for the glyph step
            assert_eq!(v[0].identity, CardIdentity::Unknown);
            assert_eq!(v[0].reading, keep_reading.then(|| "JC".parse().unwrap()));
            // a covered red card, a black card in the open, and a covered one read surely stand
            assert_eq!(v[1].identity, CardIdentity::Card("3H".parse().unwrap()));
            assert_eq!(v[2].identity, CardIdentity::Card("AS".parse().unwrap()));
            assert_eq!(v[3].identity, CardIdentity::Card("2S".parse().unwrap()));
        }
        // an unnamed covered card's unsure black reading goes too; a red one stays
        let mut v = [
            Verdict { identity: CardIdentity::Unknown, confidence: 0.99, ..named("QS", 0.0) },
            Verdict { identity: CardIdentity::Unknown, confidence: 0.99, ..named("QH", 0.0) },
            named("2D", 1.0),
            named("3D", 1.0),
        ];
        hold_covered_black_suits(&mut v, &quads, false);
        assert_eq!(v[0].reading, None);
        assert_eq!(v[1].reading, Some("QH".parse().unwrap()));
    }
}
