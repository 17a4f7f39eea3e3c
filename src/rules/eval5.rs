//! Five-card poker hand evaluation, and the best five of six or more cards.
//!
//! Used for stud-2004 (Art. 8), fortune3cp-2025's Six Card Bonus (Art. 7(2), 14)
//! and Progressive (Art. 7(3), 15(1)).
//!
//! How it is fast: every card maps to one 64-bit key that packs
//! * a rank key in bits 0..32, chosen (greedily, see `RANK_KEYS`) so that the sum
//!   of any five rank keys with at most four of a rank is unique. The sums are
//!   sparse (6,175 values below 397,076), so the strength table is compressed by
//!   row displacement: row `sum >> 9` starts at `ROW_OFFSET[row]` in one dense
//!   array of ~8k entries, so both loads stay in the L1 cache;
//! * a 4-bit counter per suit in bits 32..48, pre-loaded with 3 so that a suit's
//!   counter reaches 8 (bit 3 set) exactly when all five cards share that suit;
//! * the rank's own bit in bits 48..61: for a flush the five ranks are distinct,
//!   so the sum of those bits is their OR, which indexes an 8k-entry flush table.
//!
//! An evaluation is therefore four additions, one mask test and one table load,
//! with no branches on card values beyond the flush test and no allocation.
use std::cmp::Ordering;
use std::sync::OnceLock;

use super::card::{Card, Rank, Suit};

/// Per-rank keys whose 5-element sums (multiplicity ≤ 4) are all distinct; found
/// by a greedy search (each key is the smallest that keeps the sums unique).
const RANK_KEYS: [u32; 13] = [0, 1, 5, 22, 94, 312, 992, 2422, 5624, 12522, 19998, 43258, 79415];
const MAX_RANK_SUM: usize = 5 * 79415;
/// Row width of the displaced strength table (`sum & COLUMN_MASK` is the column).
const ROW_SHIFT: u32 = 9;
const COLUMN_MASK: u64 = (1 << ROW_SHIFT) - 1;
const ROWS: usize = 1024;
/// Capacity of the displaced table: a power of two, so that masking the index
/// removes the bounds check.
const PACKED_LEN: usize = 1 << 14;
const SUIT_SHIFT: u32 = 32;
const RANK_BIT_SHIFT: u32 = 48;
const SUIT_COUNTERS_INIT: u64 = 0x3333 << SUIT_SHIFT;
const FLUSH_TEST: u64 = 0x8888 << SUIT_SHIFT;

const fn card_key(index: usize) -> u64 {
    let rank = index / 4;
    let suit = index % 4;
    RANK_KEYS[rank] as u64 | 1u64 << (SUIT_SHIFT + 4 * suit as u32) | 1u64 << (RANK_BIT_SHIFT + rank as u32)
}

/// Indexed by any `u8` so that lookups need no bounds check; entries past 51 are unused.
static CARD_KEYS: [u64; 256] = {
    let mut keys = [0u64; 256];
    let mut i = 0;
    while i < 52 {
        keys[i] = card_key(i);
        i += 1;
    }
    keys
};

/// Five-card hand categories, lowest first. A royal flush is the ace-high
/// straight flush, kept apart because pay tables name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Category5 {
    /// Five odd cards ("cinco cartas diferentes").
    HighCard,
    /// One pair.
    Pair,
    /// Two pairs.
    TwoPair,
    /// Three of a kind.
    Trips,
    /// Straight (A-2-3-4-5 is the lowest, A-K-Q-J-10 the highest).
    Straight,
    /// Flush.
    Flush,
    /// Full house.
    FullHouse,
    /// Four of a kind.
    Quads,
    /// Straight flush other than the royal.
    StraightFlush,
    /// A-K-Q-J-10 of one suit.
    RoyalFlush,
}

impl Category5 {
    /// All categories, lowest first.
    pub const ALL: [Category5; 10] = [
        Category5::HighCard,
        Category5::Pair,
        Category5::TwoPair,
        Category5::Trips,
        Category5::Straight,
        Category5::Flush,
        Category5::FullHouse,
        Category5::Quads,
        Category5::StraightFlush,
        Category5::RoyalFlush,
    ];

    /// Number of distinct strengths (rank patterns) in each category, lowest first.
    const CLASS_COUNTS: [u16; 10] = [1277, 2860, 858, 858, 10, 1277, 156, 156, 9, 1];

    /// A short English name.
    pub const fn name(self) -> &'static str {
        match self {
            Category5::HighCard => "high card",
            Category5::Pair => "pair",
            Category5::TwoPair => "two pairs",
            Category5::Trips => "three of a kind",
            Category5::Straight => "straight",
            Category5::Flush => "flush",
            Category5::FullHouse => "full house",
            Category5::Quads => "four of a kind",
            Category5::StraightFlush => "straight flush",
            Category5::RoyalFlush => "royal flush",
        }
    }
}

/// The strength of a five-card hand by rank alone: 1 (7-5-4-3-2 offsuit) to
/// 7462 (royal flush); higher is better. Equal strengths are equal hands unless
/// a ruleset breaks ties by suit (see [`compare_stud`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HandRank5(u16);

impl HandRank5 {
    /// The raw strength, 1..=7462.
    pub const fn strength(self) -> u16 {
        self.0
    }

    /// The hand's category.
    pub fn category(self) -> Category5 {
        let mut upper = 0u16;
        for (i, count) in Category5::CLASS_COUNTS.iter().enumerate() {
            upper += count;
            if self.0 <= upper {
                return Category5::ALL[i];
            }
        }
        Category5::RoyalFlush
    }
}

/// The five-card evaluator: two lookup tables built once per process (~0.8 MB).
pub struct Evaluator5 {
    row_offset: Box<[u32; ROWS]>,
    by_packed_sum: Box<[u16; PACKED_LEN]>,
    by_flush_mask: Box<[u16; 1 << 13]>,
}

impl Evaluator5 {
    /// The process-wide evaluator (its tables are built on first use, ~10 ms).
    pub fn get() -> &'static Evaluator5 {
        static EVALUATOR: OnceLock<Evaluator5> = OnceLock::new();
        EVALUATOR.get_or_init(Evaluator5::build)
    }

    /// Strength of five distinct cards.
    #[inline]
    pub fn eval(&self, cards: [Card; 5]) -> HandRank5 {
        self.eval_indices([cards[0].index(), cards[1].index(), cards[2].index(), cards[3].index(), cards[4].index()])
    }

    /// Strength of five distinct cards given by index (`Card::index`).
    #[inline]
    pub fn eval_indices(&self, c: [u8; 5]) -> HandRank5 {
        let k = SUIT_COUNTERS_INIT
            .wrapping_add(CARD_KEYS[c[0] as usize])
            .wrapping_add(CARD_KEYS[c[1] as usize])
            .wrapping_add(CARD_KEYS[c[2] as usize])
            .wrapping_add(CARD_KEYS[c[3] as usize])
            .wrapping_add(CARD_KEYS[c[4] as usize]);
        let strength = if k & FLUSH_TEST != 0 {
            self.by_flush_mask[((k >> RANK_BIT_SHIFT) & 0x1FFF) as usize]
        } else {
            let sum = k & 0xFFFF_FFFF;
            let row = self.row_offset[(sum >> ROW_SHIFT) as usize & (ROWS - 1)] as u64;
            self.by_packed_sum[((row + (sum & COLUMN_MASK)) as usize) & (PACKED_LEN - 1)]
        };
        HandRank5(strength)
    }

    /// The best five-card hand among `cards` (5 to 7 cards; e.g. Six Card Bonus's
    /// player three plus dealer three) and the five cards that make it.
    pub fn best_of(&self, cards: &[Card]) -> (HandRank5, [Card; 5]) {
        let n = cards.len();
        assert!((5..=7).contains(&n), "best_of takes 5 to 7 cards, got {n}");
        let mut best = (HandRank5(0), [cards[0]; 5]);
        // Choose which n-5 cards to leave out (at most 2).
        let drop_count = n - 5;
        let mut consider = |skip: [usize; 2]| {
            let mut five = [cards[0]; 5];
            let mut j = 0;
            for (i, &c) in cards.iter().enumerate() {
                if !skip[..drop_count].contains(&i) {
                    five[j] = c;
                    j += 1;
                }
            }
            let r = self.eval(five);
            if r > best.0 {
                best = (r, five);
            }
        };
        match drop_count {
            0 => consider([usize::MAX; 2]),
            1 => (0..n).for_each(|a| consider([a, usize::MAX])),
            _ => (0..n).for_each(|a| (a + 1..n).for_each(|b| consider([a, b]))),
        }
        best
    }

    fn build() -> Evaluator5 {
        let mut classes: Vec<(ClassKey, Slot)> = Vec::with_capacity(7462);
        // Non-flush rank multisets (five ranks, at most four of one).
        let mut counts = [0u8; 13];
        rank_multisets(0, 5, &mut counts, &mut |counts| {
            let sum: usize = counts.iter().enumerate().map(|(r, &n)| RANK_KEYS[r] as usize * n as usize).sum();
            classes.push((class_key(counts, false), Slot::RankSum(sum)));
        });
        // Flushes: every set of five distinct ranks.
        for mask in 0u16..(1 << 13) {
            if mask.count_ones() == 5 {
                let mut c = [0u8; 13];
                for (r, n) in c.iter_mut().enumerate() {
                    *n = (mask >> r & 1) as u8;
                }
                classes.push((class_key(&c, true), Slot::Flush(mask as usize)));
            }
        }
        classes.sort_by_key(|c| c.0);
        let mut by_rank_sum = vec![0u16; MAX_RANK_SUM + 1].into_boxed_slice();
        let mut by_flush_mask = vec![0u16; 1 << 13].into_boxed_slice();
        let mut strength = 0u16;
        let mut previous: Option<ClassKey> = None;
        for (key, slot) in classes {
            if previous.as_ref() != Some(&key) {
                strength += 1;
                previous = Some(key);
            }
            match slot {
                Slot::RankSum(s) => {
                    debug_assert_eq!(by_rank_sum[s], 0, "rank keys collide");
                    by_rank_sum[s] = strength;
                }
                Slot::Flush(m) => by_flush_mask[m] = strength,
            }
        }
        debug_assert_eq!(strength, 7462);
        let (row_offset, by_packed_sum) = displace_rows(&by_rank_sum);
        let mut flush = Box::new([0u16; 1 << 13]);
        flush.copy_from_slice(&by_flush_mask);
        Evaluator5 { row_offset, by_packed_sum, by_flush_mask: flush }
    }
}

/// Packs the sparse `sum → strength` table by row displacement (Tarjan & Yao):
/// rows of 512 columns are placed, fullest first, at the first offset where their
/// occupied cells land on free cells of one dense array.
fn displace_rows(sparse: &[u16]) -> (Box<[u32; ROWS]>, Box<[u16; PACKED_LEN]>) {
    let width = 1usize << ROW_SHIFT;
    let rows: Vec<Vec<usize>> =
        sparse.chunks(width).map(|row| (0..row.len()).filter(|&c| row[c] != 0).collect()).collect();
    assert!(rows.len() <= ROWS, "rank-sum table has more rows than ROWS");
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by_key(|&r| std::cmp::Reverse(rows[r].len()));
    let mut packed = Box::new([0u16; PACKED_LEN]);
    let mut used = vec![false; PACKED_LEN];
    let mut offsets = Box::new([0u32; ROWS]);
    for r in order {
        if rows[r].is_empty() {
            continue;
        }
        let offset = (0..PACKED_LEN - width)
            .find(|&o| rows[r].iter().all(|&c| !used[o + c]))
            .expect("PACKED_LEN is large enough for the displaced rank-sum table");
        for &c in &rows[r] {
            used[offset + c] = true;
            packed[offset + c] = sparse[r * width + c];
        }
        offsets[r] = offset as u32;
    }
    (offsets, packed)
}

enum Slot {
    RankSum(usize),
    Flush(usize),
}

/// Sort key of a rank pattern: category first, then the ranks that decide ties,
/// most significant first (straights by their top card, the wheel topped by 5).
type ClassKey = (Category5, [u8; 5]);

fn class_key(counts: &[u8; 13], flush: bool) -> ClassKey {
    // Ranks ordered by (multiplicity, rank), both descending.
    let mut groups: Vec<(u8, u8)> =
        (0..13u8).filter(|&r| counts[r as usize] > 0).map(|r| (counts[r as usize], r)).collect();
    groups.sort_by(|a, b| b.cmp(a));
    let mut ranks = [0u8; 5];
    for (i, g) in groups.iter().enumerate() {
        ranks[i] = g.1;
    }
    let straight_top = straight_top(counts);
    let shape: Vec<u8> = groups.iter().map(|g| g.0).collect();
    let category = match (flush, straight_top, shape.as_slice()) {
        (true, Some(Rank::Ace), _) => Category5::RoyalFlush,
        (true, Some(_), _) => Category5::StraightFlush,
        (_, _, [4, 1]) => Category5::Quads,
        (_, _, [3, 2]) => Category5::FullHouse,
        (true, None, _) => Category5::Flush,
        (false, Some(_), _) => Category5::Straight,
        (_, _, [3, 1, 1]) => Category5::Trips,
        (_, _, [2, 2, 1]) => Category5::TwoPair,
        (_, _, [2, 1, 1, 1]) => Category5::Pair,
        _ => Category5::HighCard,
    };
    if let Some(top) = straight_top {
        ranks = [top.index(), 0, 0, 0, 0];
    }
    (category, ranks)
}

/// The top rank of a five-rank straight, the wheel A-2-3-4-5 being topped by the 5.
fn straight_top(counts: &[u8; 13]) -> Option<Rank> {
    let mask: u16 = (0..13).filter(|&r| counts[r] == 1).fold(0, |m, r| m | 1 << r);
    if mask.count_ones() != 5 {
        return None;
    }
    const WHEEL: u16 = 1 << 12 | 0b1111;
    if mask == WHEEL {
        return Some(Rank::Five);
    }
    let low = mask.trailing_zeros();
    (mask >> low == 0b11111).then(|| Rank::from_index(low as u8 + 4))
}

fn rank_multisets(from: usize, left: u8, counts: &mut [u8; 13], f: &mut impl FnMut(&[u8; 13])) {
    if left == 0 {
        f(counts);
        return;
    }
    for r in from..13 {
        if counts[r] < 4 {
            counts[r] += 1;
            rank_multisets(r, left - 1, counts, f);
            counts[r] -= 1;
        }
    }
}

/// The rank that decides a suit tie-break under stud-2004 Art. 8: the highest
/// card for straights (the 5 of a wheel), flushes and five odd cards; the higher
/// pair for two pairs; the pair for one pair; any card for straight flushes.
fn deciding_rank(cards: &[Card; 5], category: Category5) -> Rank {
    let mut counts = [0u8; 13];
    for c in cards {
        counts[c.rank().index() as usize] += 1;
    }
    if matches!(category, Category5::Straight | Category5::StraightFlush | Category5::RoyalFlush) {
        return straight_top(&counts).unwrap_or(Rank::Ace);
    }
    // The most significant rank of the class key: largest group, then highest rank.
    let best = (0..13u8).max_by_key(|&r| (counts[r as usize], r)).unwrap_or(0);
    Rank::from_index(best)
}

/// The suit that breaks a tie between equal-strength hands under stud-2004
/// Art. 8: the highest suit among the cards of the deciding rank.
pub fn stud_tie_suit(cards: &[Card; 5], category: Category5) -> Suit {
    let rank = deciding_rank(cards, category);
    cards.iter().filter(|c| c.rank() == rank).map(|c| c.suit()).max().unwrap_or(Suit::Diamonds)
}

/// Compares two five-card hands as stud-2004 Art. 8 does: by strength, and when
/// equal by suit — royal and straight flushes by their suit (8(1), 8(2)), flushes
/// by their suit (8(5)), straights and five odd cards by the suit of the highest
/// card (8(6), 8(10)), two pairs by the suit of the higher pair (8(8)), one pair by
/// the suit of the pair (8(9)). Quads, full houses and trips cannot tie in one deck.
pub fn compare_stud(a: [Card; 5], b: [Card; 5]) -> Ordering {
    let ev = Evaluator5::get();
    let (ra, rb) = (ev.eval(a), ev.eval(b));
    ra.cmp(&rb).then_with(|| {
        let cat = ra.category();
        stud_tie_suit(&a, cat).cmp(&stud_tie_suit(&b, cat))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::card::parse_cards;

    fn five(s: &str) -> [Card; 5] {
        parse_cards(s).unwrap().try_into().unwrap()
    }

    #[test]
    fn every_five_card_hand_falls_in_the_standard_category_counts() {
        let ev = Evaluator5::get();
        let mut counts = [0u32; 10];
        for a in 0..52u8 {
            for b in a + 1..52 {
                for c in b + 1..52 {
                    for d in c + 1..52 {
                        for e in d + 1..52 {
                            counts[ev.eval_indices([a, b, c, d, e]).category() as usize] += 1;
                        }
                    }
                }
            }
        }
        // High card, pair, two pairs, trips, straight, flush, full house, quads, SF, royal.
        assert_eq!(counts, [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 36, 4]);
        assert_eq!(counts.iter().sum::<u32>(), 2_598_960);
    }

    #[test]
    fn strengths_order_hands_as_poker_does() {
        let ev = Evaluator5::get();
        let ordered = [
            "7D 5C 4H 3S 2D", // the worst hand
            "AD KC QH JS 9D",
            "2D 2C 3H 4S 5D",
            "AD AC KH QS JD",
            "2D 2C 3H 3S 4D",
            "AD AC KH KS QD",
            "2D 2C 2H 3S 4D",
            "AD 2C 3H 4S 5D", // wheel: lowest straight
            "2D 3C 4H 5S 6D",
            "10D JC QH KS AD",
            "2H 3H 4H 5H 7H",
            "2H 2D 2C 3S 3H",
            "2H 2D 2C 2S 3H",
            "AH 2H 3H 4H 5H", // steel wheel: lowest straight flush
            "9H 10H JH QH KH",
            "10S JS QS KS AS",
        ];
        let ranks: Vec<HandRank5> = ordered.iter().map(|h| ev.eval(five(h))).collect();
        for w in ranks.windows(2) {
            assert!(w[0] < w[1], "{w:?}");
        }
        assert_eq!(ranks[0].strength(), 1);
        assert_eq!(ranks.last().unwrap().strength(), 7462);
        assert_eq!(ranks[7].category(), Category5::Straight);
        assert_eq!(ranks.last().unwrap().category(), Category5::RoyalFlush);
    }

    #[test]
    fn best_of_six_and_seven() {
        let ev = Evaluator5::get();
        let (r, cards) = ev.best_of(&parse_cards("AS KS QS JS 10S 2D").unwrap());
        assert_eq!(r.category(), Category5::RoyalFlush);
        assert!(!cards.contains(&"2D".parse().unwrap()));
        let (r, _) = ev.best_of(&parse_cards("2C 2D 9H 9S 5C 9C").unwrap());
        assert_eq!(r.category(), Category5::FullHouse);
        let (r, _) = ev.best_of(&parse_cards("2C 3D 4H 8S JC QD KH").unwrap());
        assert_eq!(r.category(), Category5::HighCard);
    }

    #[test]
    fn best_of_agrees_with_brute_force_on_random_six_card_hands() {
        let ev = Evaluator5::get();
        let mut rng = crate::rng::Rng::seeded(11);
        let mut deck: Vec<Card> = Card::all().collect();
        for _ in 0..2000 {
            rng.partial_shuffle(&mut deck, 6);
            let six = &deck[..6];
            let brute = (0..6)
                .map(|skip| {
                    let five: Vec<Card> = six.iter().enumerate().filter(|(i, _)| *i != skip).map(|(_, c)| *c).collect();
                    ev.eval(five.try_into().unwrap())
                })
                .max()
                .unwrap();
            assert_eq!(ev.best_of(six).0, brute);
        }
    }

    // stud-2004 Art. 8 tie-break sentences, each quoted.
    #[test]
    fn stud_art8_1_two_royal_flushes_higher_suit_wins() {
        // Art. 8(1): "…ganha a «mão» com o naipe de valor mais elevado".
        assert_eq!(compare_stud(five("10S JS QS KS AS"), five("10H JH QH KH AH")), Ordering::Greater);
    }

    #[test]
    fn stud_art8_2_equal_straight_flushes_higher_suit_wins() {
        assert_eq!(compare_stud(five("5C 6C 7C 8C 9C"), five("5D 6D 7D 8D 9D")), Ordering::Greater);
        // The higher straight flush wins whatever the suits.
        assert_eq!(compare_stud(five("6D 7D 8D 9D 10D"), five("5S 6S 7S 8S 9S")), Ordering::Greater);
    }

    #[test]
    fn stud_art8_5_equal_flushes_higher_suit_wins() {
        assert_eq!(compare_stud(five("2H 5H 7H 9H JH"), five("2C 5C 7C 9C JC")), Ordering::Greater);
        assert_eq!(compare_stud(five("2D 5D 7D 9D QD"), five("2S 5S 7S 9S JS")), Ordering::Greater);
    }

    #[test]
    fn stud_art8_6_equal_straights_suit_of_highest_card() {
        assert_eq!(compare_stud(five("5D 6D 7D 8D 9S"), five("5S 6S 7S 8S 9H")), Ordering::Greater);
        // Wheel: the 5 is its highest card.
        assert_eq!(compare_stud(five("AS 2S 3S 4S 5H"), five("AH 2H 3H 4H 5S")), Ordering::Less);
    }

    #[test]
    fn stud_art8_8_equal_two_pairs_suit_of_higher_pair() {
        assert_eq!(compare_stud(five("KS KD 4C 4D 9C"), five("KH KC 4S 4H 9D")), Ordering::Greater);
    }

    #[test]
    fn stud_art8_9_equal_pairs_suit_of_the_pair() {
        assert_eq!(compare_stud(five("8D 8H 2S 5C KD"), five("8S 8C 2D 5D KS")), Ordering::Less);
    }

    #[test]
    fn stud_art8_10_equal_odd_cards_suit_of_highest_card() {
        assert_eq!(compare_stud(five("AC 9D 7D 4S 3S"), five("AD 9S 7S 4H 3H")), Ordering::Greater);
    }
}
