//! A covered index corner shows the card lying over it.
//!
//! Where cards overlap (a fanned hand, a shuffler's packet spread in a row), the index corner of
//! a card under another is the upper card's print, and its index there is read as surely as the
//! upper card's own. Counted as evidence for the lower card, that reading contradicts the lower
//! card's visible corner, and two sure readings that disagree name nothing: the card stays
//! unnamed frame after frame. (Q Poker seed 7's `duplicate_card`: the seat's 3♣ lay under its
//! 2♥, its covered corner read 2♥, and the duplicate of the dealer's 3♣ was never seen.)
//!
//! A reading is *explained* when another card of the frame covers the place where it was read
//! and is either named as that reading or seen to lie over the card (its edges show there): it
//! is the upper card's evidence, not the lower one's, and is set aside before the lower card's
//! readings are combined again (docs/recognition.md, "A covered corner shows the card over
//! it"). Nothing is added: a card named this way is named by its remaining readings alone,
//! under the same rules and threshold.

use crate::calib::{Point, Polygon};
use crate::classify::{self, CardIdentity, Verdict};
use crate::locate::Quad;
use crate::rules::Card;

use super::table_glyphs::LEANS;

/// The card a reading leans to (its most likely label, at least [`LEANS`]), if any.
fn leans_to(row: &[f32]) -> Option<Card> {
    let (label, p) = classify::argmax(row);
    CardIdentity::from_label(label).card().filter(|_| p >= LEANS)
}

/// The readings of card `k` (`rows`, read at `at`, one point each) that no other card explains.
/// A reading taken inside another card `j`'s quad (`quads[j]`) is left out when `j` is named
/// (`named[j]`) what the reading leans to, or when `j` is seen to lie over `k` (`over(j, k)`,
/// whatever the reading: the print there is `j`'s). `None` when none is left out.
pub fn unexplained<'a>(
    k: usize,
    rows: &[&'a [f32]],
    at: &[Point],
    named: &[Option<Card>],
    quads: &[Quad],
    over: &dyn Fn(usize, usize) -> bool,
) -> Option<Vec<&'a [f32]>> {
    debug_assert_eq!(rows.len(), at.len());
    let explained = |row: &[f32], p: Point| {
        let read = leans_to(row);
        (0..named.len()).any(|j| {
            j != k && Polygon(quads[j].to_vec()).contains(p) && ((read.is_some() && named[j] == read) || over(j, k))
        })
    };
    let keep: Vec<&[f32]> = rows.iter().zip(at).filter(|&(r, &p)| !explained(r, p)).map(|(r, _)| *r).collect();
    (keep.len() < rows.len()).then_some(keep)
}

/// How many times the cards' names are settled again: a card named from a covered corner makes
/// the card under it look explained, and once it is un-named the one under that is not; each
/// pass settles one more card down a fan.
const PASSES: usize = 3;

/// Sets aside, for every card `k`, the readings of its index corners (`index[k]`, read at
/// `at[k]`) taken under another card named as they read, or seen to lie over `k` (`over`,
/// [`unexplained`]), and combines the rest
/// with its whole-card readings (`faces[k]`) again ([`classify::combine_models`]). A card
/// named from a covered corner alone (on an unfamiliar design the visible corner is often
/// unsure) loses that name; a card whose covered corner contradicted its visible one is named
/// by the visible one if that is sure. A card none of whose readings is left keeps only its
/// face probability: no name, no reading, no rank (what it read was the cards over it).
/// Returns each card's index readings left.
pub fn set_aside_covered<'a>(
    verdicts: &mut [Verdict],
    quads: &[Quad],
    index: &[Vec<&'a [f32]>],
    at: &[Vec<Point>],
    faces: &[Vec<&[f32]>],
    min_confidence: f32,
    over: &dyn Fn(usize, usize) -> bool,
) -> Vec<Vec<&'a [f32]>> {
    let first: Vec<Verdict> = verdicts.to_vec();
    let mut left: Vec<Vec<&'a [f32]>> = index.to_vec();
    if std::env::var_os("TABLECAM_COVER_DEBUG").is_some() {
        print_readings(verdicts, quads, index, at, faces);
    }
    for _ in 0..PASSES {
        let named: Vec<Option<Card>> = verdicts.iter().map(|v| v.identity.card()).collect();
        let mut changed = false;
        for k in 0..verdicts.len() {
            let kept = unexplained(k, &index[k], &at[k], &named, quads, over);
            let v = match &kept {
                None => first[k],
                Some(kept) if kept.is_empty() => {
                    Verdict { identity: CardIdentity::Unknown, reading: None, rank: None, conflict: false, ..first[k] }
                }
                Some(kept) => classify::combine_models(kept, &faces[k], min_confidence),
            };
            left[k] = kept.unwrap_or_else(|| index[k].clone());
            changed |= v.identity != verdicts[k].identity;
            verdicts[k] = v;
        }
        if !changed {
            break;
        }
    }
    left
}

/// `TABLECAM_COVER_DEBUG=1`: each card's verdict, and its corner readings with where each was
/// read, and its whole-card readings, on stderr.
fn print_readings(
    verdicts: &[Verdict],
    quads: &[Quad],
    index: &[Vec<&[f32]>],
    at: &[Vec<Point>],
    faces: &[Vec<&[f32]>],
) {
    let shown = |r: &[f32]| {
        let (label, p) = classify::argmax(r);
        format!("{} {p:.3}", CardIdentity::from_label(label))
    };
    for k in 0..verdicts.len() {
        let corners: Vec<String> =
            index[k].iter().zip(&at[k]).map(|(r, p)| format!("{} at ({:.0},{:.0})", shown(r), p.x, p.y)).collect();
        let whole: Vec<String> = faces[k].iter().map(|r| shown(r)).collect();
        let c = Point::mean(&quads[k]);
        eprintln!(
            "cover: card {k} at ({:.0},{:.0}) {} {:.3}: corners [{}] faces [{}]",
            c.x,
            c.y,
            verdicts[k].identity,
            verdicts[k].confidence,
            corners.join(", "),
            whole.join(", ")
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classify::NUM_LABELS;

    fn card(code: &str) -> Card {
        code.parse().unwrap()
    }

    /// A probability row leaning to `code` with probability `p` (the rest spread evenly).
    fn row(code: &str, p: f32) -> Vec<f32> {
        let i = classify::labels().iter().position(|l| l == code).unwrap();
        let mut r = vec![(1.0 - p) / (NUM_LABELS - 1) as f32; NUM_LABELS];
        r[i] = p;
        r
    }

    fn none_over(_: usize, _: usize) -> bool {
        false
    }

    fn square(x: f64, y: f64, side: f64) -> Quad {
        [Point::new(x, y), Point::new(x + side, y), Point::new(x + side, y + side), Point::new(x, y + side)]
    }

    #[test]
    fn a_corner_under_a_card_named_as_it_reads_is_left_out() {
        // card 0 (unnamed) has one corner under card 1 (named 2H) that reads 2H, one in the open reading 3C
        let quads = [square(0.0, 0.0, 100.0), square(-50.0, -50.0, 80.0)];
        let named = [None, Some(card("2H"))];
        let (covered, open) = (row("2H", 0.999), row("3C", 0.9999));
        let rows: Vec<&[f32]> = vec![&covered, &open];
        let at = [Point::new(10.0, 10.0), Point::new(90.0, 90.0)];
        let kept = unexplained(0, &rows, &at, &named, &quads, &none_over).expect("the covered corner is left out");
        assert_eq!(kept.len(), 1);
        assert_eq!(leans_to(kept[0]), Some(card("3C")));
    }

    #[test]
    fn a_reading_is_kept_unless_the_card_over_it_is_named_as_it() {
        let quads = [square(0.0, 0.0, 100.0), square(-50.0, -50.0, 80.0)];
        let (covered, open) = (row("2H", 0.999), row("3C", 0.9999));
        let rows: Vec<&[f32]> = vec![&covered, &open];
        let at = [Point::new(10.0, 10.0), Point::new(90.0, 90.0)];
        // the card over the corner is named otherwise, or not at all: the reading is the card's own
        assert!(unexplained(0, &rows, &at, &[None, Some(card("2S"))], &quads, &none_over).is_none());
        assert!(unexplained(0, &rows, &at, &[None, None], &quads, &none_over).is_none());
        // a card named 2H that does not cover the place the reading was taken explains nothing
        let far = [square(0.0, 0.0, 100.0), square(200.0, 200.0, 80.0)];
        assert!(unexplained(0, &rows, &at, &[None, Some(card("2H"))], &far, &none_over).is_none());
        // the card's own name never explains its own reading
        assert!(unexplained(0, &rows, &at, &[Some(card("2H")), None], &quads, &none_over).is_none());
        // an unsure reading leans to nothing and is kept as it is
        let unsure = row("2H", 0.3);
        let rows: Vec<&[f32]> = vec![&unsure, &open];
        assert!(unexplained(0, &rows, &at, &[None, Some(card("2H"))], &quads, &none_over).is_none());
    }

    #[test]
    fn a_reading_under_a_card_seen_lying_over_it_is_left_out_whatever_it_reads() {
        let quads = [square(0.0, 0.0, 100.0), square(-50.0, -50.0, 80.0)];
        let (covered, open) = (row("9H", 0.999), row("JD", 0.999));
        let rows: Vec<&[f32]> = vec![&covered, &open];
        let at = [Point::new(10.0, 10.0), Point::new(90.0, 90.0)];
        // card 1 (unnamed) lies over card 0: the corner under it is its print
        let one_over_zero = |a: usize, b: usize| a == 1 && b == 0;
        let kept = unexplained(0, &rows, &at, &[None, None], &quads, &one_over_zero).expect("left out");
        assert_eq!(kept.len(), 1);
        assert_eq!(leans_to(kept[0]), Some(card("JD")));
        // card 0 lying over card 1 says nothing about card 0's own corners
        let zero_over_one = |a: usize, b: usize| a == 0 && b == 1;
        assert!(unexplained(0, &rows, &at, &[None, None], &quads, &zero_over_one).is_none());
    }
}
