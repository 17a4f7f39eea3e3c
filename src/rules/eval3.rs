//! Three-card poker hand evaluation (fortune3cp-2025 Art. 6–7, fortune3cp-2008
//! Art. 4 and 8, qpoker-2004 Art. 4 and 8).
//!
//! A hand's strength is one `u32` built with a handful of compares and shifts:
//! category in bits 24.., the deciding ranks in bits 8..24 (most significant
//! first), and — in rulesets that break ties by suit — the deciding suit in bits
//! 0..8. Comparing strengths compares hands; equal strengths are a tie (push).
use serde::{Deserialize, Serialize};

use super::card::{Card, Rank};

/// Three-card categories, lowest first (fortune3cp-2025 Art. 7(1)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Category3 {
    /// Three odd cards ("três cartas diferentes").
    HighCard,
    /// One pair plus a kicker.
    Pair,
    /// Three cards of one suit, not in sequence.
    Flush,
    /// Three cards in sequence, not all of one suit.
    Straight,
    /// Three of a kind.
    Trips,
    /// Three cards of one suit in sequence.
    StraightFlush,
}

impl Category3 {
    /// All categories, lowest first.
    pub const ALL: [Category3; 6] = [
        Category3::HighCard,
        Category3::Pair,
        Category3::Flush,
        Category3::Straight,
        Category3::Trips,
        Category3::StraightFlush,
    ];

    /// A short English name.
    pub const fn name(self) -> &'static str {
        match self {
            Category3::HighCard => "three odd cards",
            Category3::Pair => "pair",
            Category3::Flush => "flush",
            Category3::Straight => "straight",
            Category3::Trips => "three of a kind",
            Category3::StraightFlush => "straight flush",
        }
    }
}

/// Which suited sequence is the top straight flush under fortune3cp-2008, whose
/// Art. 4(2) lists A-K-Q as the highest sequence while Art. 8(1) calls K-Q-J the
/// highest straight flush (docs/rules.md, ambiguity B-1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TopStraightFlush {
    /// A-K-Q suited is the top straight flush (Art. 4(2); GAMES.md default).
    #[default]
    Akq,
    /// K-Q-J is the top straight flush (Art. 8(1) literally); A-K-Q suited is
    /// then not a straight of "different suits" (Art. 8(3)) and counts as a flush.
    Kqj,
}

/// How a ruleset breaks ties between hands of equal ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SuitTieBreaks {
    /// Equal ranks are a tie (fortune3cp "verifica-se um empate").
    #[default]
    None,
    /// Only three odd cards of equal ranks are split by the suit of the highest
    /// card (the fortune3cp option `three_odd_cards_tie = suit_of_highest_card`).
    HighCardOnly,
    /// qpoker-2004 Art. 8: straight flush, straight and flush by their (highest
    /// card's) suit (8(1), 8(3), 8(4)), a pair by the suit of the odd card (8(5)),
    /// three odd cards by the suit of the highest card (8(6)). Trips have no suit rule.
    QPoker,
}

/// The ranking rules of one three-card ruleset.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ThreeCardRules {
    /// Top straight flush (only fortune3cp-2008 offers the choice).
    pub top_straight_flush: TopStraightFlush,
    /// Suit tie-breaks.
    pub suit_tie_breaks: SuitTieBreaks,
}

/// The strength of a three-card hand under some [`ThreeCardRules`]; higher is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandRank3(u32);

impl HandRank3 {
    /// The hand's category.
    pub fn category(self) -> Category3 {
        static CATEGORIES: [Category3; 6] = Category3::ALL;
        CATEGORIES[(self.0 >> 24) as usize % 6]
    }

    /// The raw strength value (for tables and sorting).
    pub const fn value(self) -> u32 {
        self.0
    }

    /// The most significant rank: the highest card of three odd cards or a flush
    /// (ace high), the top of a straight (the 3 of A-2-3), the pair's or trips'
    /// rank. Dealer qualification ("Q-high or better") reads it.
    pub const fn top_rank(self) -> Rank {
        Rank::from_index(((self.0 >> 20) & 0xF) as u8)
    }
}

impl ThreeCardRules {
    /// Evaluates three cards.
    #[inline]
    pub fn eval(&self, cards: [Card; 3]) -> HandRank3 {
        // Sort descending by (rank, suit): three compare-and-swaps.
        let [mut a, mut b, mut c] = cards;
        if a < b {
            std::mem::swap(&mut a, &mut b);
        }
        if b < c {
            std::mem::swap(&mut b, &mut c);
        }
        if a < b {
            std::mem::swap(&mut a, &mut b);
        }
        let (ra, rb, rc) = (a.rank().index() as u32, b.rank().index() as u32, c.rank().index() as u32);
        let suited = a.suit() == b.suit() && b.suit() == c.suit();
        // Straights: consecutive ranks, or A-3-2 whose top card is the 3 (the
        // lowest sequence, fortune3cp-2025 Art. 6(2), qpoker-2004 Art. 4(3)).
        let straight_top = if ra == rb + 1 && rb == rc + 1 {
            Some((ra, a))
        } else if ra == Rank::Ace as u32 && rb == Rank::Three as u32 && rc == Rank::Two as u32 {
            Some((Rank::Three as u32, b))
        } else {
            None
        };
        let akq_demoted = self.top_straight_flush == TopStraightFlush::Kqj
            && suited
            && ra == Rank::Ace as u32
            && rb == Rank::King as u32;
        let qpoker = self.suit_tie_breaks == SuitTieBreaks::QPoker;
        let (category, ranks, tie_suit) = match straight_top {
            Some((top, top_card)) if !akq_demoted => {
                let cat = if suited { Category3::StraightFlush } else { Category3::Straight };
                (cat, top << 16, if qpoker { top_card.suit() as u32 } else { 0 })
            }
            _ if ra == rc => (Category3::Trips, ra << 16, 0),
            _ if ra == rb => (Category3::Pair, ra << 16 | rc << 12, if qpoker { c.suit() as u32 } else { 0 }),
            _ if rb == rc => (Category3::Pair, rb << 16 | ra << 12, if qpoker { a.suit() as u32 } else { 0 }),
            _ => {
                let cat = if suited { Category3::Flush } else { Category3::HighCard };
                let by_suit =
                    qpoker || (self.suit_tie_breaks == SuitTieBreaks::HighCardOnly && cat == Category3::HighCard);
                (cat, ra << 16 | rb << 12 | rc << 8, if by_suit { a.suit() as u32 + 1 } else { 0 })
            }
        };
        // Keep the top rank in bits 20..24 for every category (see `top_rank`).
        HandRank3((category as u32) << 24 | ranks << 4 | tie_suit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::card::parse_cards;

    fn three(s: &str) -> [Card; 3] {
        parse_cards(s).unwrap().try_into().unwrap()
    }

    fn all_hands() -> impl Iterator<Item = [Card; 3]> {
        (0..52u8).flat_map(|a| {
            (a + 1..52).flat_map(move |b| (b + 1..52).map(move |c| [a, b, c].map(|i| Card::from_index(i).unwrap())))
        })
    }

    fn category_counts(rules: ThreeCardRules) -> [u32; 6] {
        let mut counts = [0u32; 6];
        for h in all_hands() {
            counts[rules.eval(h).category() as usize] += 1;
        }
        counts
    }

    #[test]
    fn all_22100_hands_fall_into_the_standard_categories() {
        for rules in
            [ThreeCardRules::default(), ThreeCardRules { suit_tie_breaks: SuitTieBreaks::QPoker, ..Default::default() }]
        {
            // high card, pair, flush, straight, trips, straight flush
            assert_eq!(category_counts(rules), [16_440, 3_744, 1_096, 720, 52, 48]);
        }
    }

    #[test]
    fn fortune2008_kqj_option_turns_suited_akq_into_flushes() {
        // fortune3cp-2008 Art. 8(1): "K, Q, J é a combinação de valor mais elevado".
        let rules = ThreeCardRules { top_straight_flush: TopStraightFlush::Kqj, ..Default::default() };
        assert_eq!(category_counts(rules), [16_440, 3_744, 1_100, 720, 52, 44]);
        assert_eq!(rules.eval(three("AS KS QS")).category(), Category3::Flush);
        assert!(rules.eval(three("KS QS JS")) > rules.eval(three("AH KH QH")));
        // Default (Art. 4(2)): A-K-Q suited is the top straight flush.
        let d = ThreeCardRules::default();
        assert!(d.eval(three("AS KS QS")) > d.eval(three("KS QS JS")));
    }

    #[test]
    fn fortune2025_art6_sequences_akq_highest_32a_lowest() {
        // Art. 6(2): «Ás, Rei (K), Dama (Q)» … «3, 2, Ás».
        let r = ThreeCardRules::default();
        let seq = ["AD KC QH", "KD QC JH", "QD JC 10H", "5D 4C 3H", "4D 3C 2H", "3D 2C AH"];
        for w in seq.windows(2) {
            assert!(r.eval(three(w[0])) > r.eval(three(w[1])), "{} vs {}", w[0], w[1]);
        }
        assert_eq!(r.eval(three("3D 2C AH")).category(), Category3::Straight);
        assert_eq!(r.eval(three("3D 2C AH")).top_rank(), Rank::Three);
        assert_eq!(r.eval(three("KD QC 2H")).category(), Category3::HighCard);
    }

    #[test]
    fn fortune2025_art7_1_ranking_and_ties() {
        let r = ThreeCardRules::default();
        let order = ["3D 2C AH 4S", "AD KC JH", "2D 2C 3H", "2H 4H 6H", "3D 2C AH", "2D 2C 2H", "3S 2S AS"];
        let ranks: Vec<_> = order.iter().skip(1).map(|h| r.eval(three(h))).collect();
        for w in ranks.windows(2) {
            assert!(w[0] < w[1], "{w:?}");
        }
        // Art. 7(1)(1),(3),(4),(5): equal ranks "verifica-se um empate".
        assert_eq!(r.eval(three("9S 8S 7S")), r.eval(three("9H 8H 7H")));
        assert_eq!(r.eval(three("9S 8D 7S")), r.eval(three("9H 8H 7C")));
        assert_eq!(r.eval(three("KS 8S 3S")), r.eval(three("KD 8D 3D")));
        assert_eq!(r.eval(three("JS JD 3S")), r.eval(three("JH JC 3D")));
        // Art. 7(1)(5): pair first, then the kicker.
        assert!(r.eval(three("JS JD 2S")) > r.eval(three("10H 10C AD")));
        assert!(r.eval(three("JS JD 4S")) > r.eval(three("JH JC 3D")));
        // Art. 7(1)(4),(6): highest card, then the next, and so on.
        assert!(r.eval(three("KS 9D 3S")) > r.eval(three("KH 8C 7D")));
        assert!(r.eval(three("KS 9D 4S")) > r.eval(three("KH 9C 3D")));
        // Three odd cards of equal ranks: push by default (ambiguity A-2) …
        assert_eq!(r.eval(three("KS 9D 4S")), r.eval(three("KH 9C 4D")));
        // … or by the suit of the highest card with the option.
        let o = ThreeCardRules { suit_tie_breaks: SuitTieBreaks::HighCardOnly, ..Default::default() };
        assert!(o.eval(three("KS 9D 4S")) > o.eval(three("KH 9C 4D")));
        assert_eq!(o.eval(three("KS KD 4S")), o.eval(three("KH KC 4D")));
    }

    #[test]
    fn qpoker_art8_suit_tie_breaks() {
        let q = ThreeCardRules { suit_tie_breaks: SuitTieBreaks::QPoker, ..Default::default() };
        // 8(1) "ganha aquela que tiver o maior naipe".
        assert!(q.eval(three("9S 8S 7S")) > q.eval(three("9H 8H 7H")));
        // 8(3) straight: the suit of the highest card.
        assert!(q.eval(three("9C 8S 7S")) > q.eval(three("9D 8H 7H")));
        assert!(q.eval(three("3H 2D AD")) > q.eval(three("3C 2S AS")));
        // 8(4) flush: all equal → higher suit.
        assert!(q.eval(three("KH 8H 3H")) > q.eval(three("KC 8C 3C")));
        // 8(5) pair: "o naipe de maior graduação na carta diferente".
        assert!(q.eval(three("JD JC 3S")) > q.eval(three("JS JH 3H")));
        // 8(6) three odd cards: suit of the highest card.
        assert!(q.eval(three("KC 9D 4D")) > q.eval(three("KD 9S 4S")));
        // 8(2) trips: no suit rule — identical only with several decks.
        assert_eq!(q.eval(three("KS KH KC")), q.eval(three("KS KH KC")));
        // Ranks still come first.
        assert!(q.eval(three("KD 9C 5D")) > q.eval(three("KS 9H 4S")));
    }
}
