//! San Gong ("Poker de 3 cartas", 富貴三公) hand values: sangong-1996 Art. 6–8
//! and the annex's table of 31 combinations.
use std::cmp::Ordering;

use serde::Serialize;

use super::card::{Card, Rank};
use super::options::{SangongEqualPoints, SangongHighCardCompare};

/// Points of a card (Art. 6(1)–(2)): figures (J, Q, K) and tens count 0, the
/// ace 1, other cards their face value.
pub const fn card_points(card: Card) -> u8 {
    match card.rank() {
        Rank::Ace => 1,
        Rank::Ten | Rank::Jack | Rank::Queen | Rank::King => 0,
        r => r.index() + 2,
    }
}

/// Whether the card is a figure ("figura"): J, Q or K. A ten counts 0 but is
/// not a figure (Art. 6(1)).
pub const fn is_figure(card: Card) -> bool {
    matches!(card.rank(), Rank::Jack | Rank::Queen | Rank::King)
}

/// The card order of the annex for comparing single cards: K > Q > J > 10 > 9
/// … 2 > A, then suits spades > hearts > clubs > diamonds. Higher is better.
pub const fn card_order(card: Card) -> u8 {
    // Poker rank index has A highest; San Gong puts it lowest.
    let r = match card.rank() {
        Rank::Ace => 0,
        r => r.index() + 1,
    };
    r * 4 + card.suit() as u8
}

/// A San Gong hand's combination and its deciding card.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct SanGongValue {
    /// Combination class 1 (three figures, best) to 31 (zero with no figure).
    pub class: u8,
    /// Hand points (sum mod 10, Art. 6(3)).
    pub points: u8,
    /// Number of figures in the hand.
    pub figures: u8,
    /// The hand's highest card in the annex's card order (Art. 7(2)).
    pub high_card: Card,
}

impl SanGongValue {
    /// Evaluates three cards (Art. 6, annex).
    pub fn of(cards: [Card; 3]) -> SanGongValue {
        let points = cards.iter().map(|&c| card_points(c)).sum::<u8>() % 10;
        let figures = cards.iter().filter(|&&c| is_figure(c)).count() as u8;
        // Annex: "três figuras" first; then for 9 down to 0 points, two figures,
        // one figure, no figure — 1 + 10 × 3 = 31 classes.
        let class = if figures == 3 { 1 } else { 2 + 3 * (9 - points) + (2 - figures) };
        let high_card = cards.into_iter().max_by_key(|&c| card_order(c)).unwrap_or(cards[0]);
        SanGongValue { class, points, figures, high_card }
    }

    /// The annex's name of the combination, e.g. "9 with two figures".
    pub fn name(&self) -> String {
        match (self.class, self.figures) {
            (1, _) => "three figures".to_string(),
            (_, 2) => format!("{} with two figures", self.points),
            (_, 1) => format!("{} with one figure", self.points),
            _ => format!("{} with no figure", self.points),
        }
    }
}

/// Who wins a San Gong comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SanGongWinner {
    /// The banker's hand wins.
    Banker,
    /// The player's hand wins.
    Player,
    /// Indistinguishable hands (only possible with duplicate cards).
    Tie,
}

/// How two San Gong hands are told apart where the text is ambiguous (docs/rules.md E-2, E-3;
/// the ruleset options `sangong_equal_points` and `sangong_high_card_compare`). The default is
/// the annex's classes, then the single highest card.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SanGongRule {
    /// Whether figures rank hands of the same points (the annex) or only the highest card does.
    pub equal_points: SangongEqualPoints,
    /// How the highest cards are compared.
    pub high_card: SangongHighCardCompare,
}

impl SanGongRule {
    /// The hand's comparison key under this rule: higher is better, equal only for hands the
    /// rule cannot tell apart. Art. 8's banker advantage is not in it (it depends on who holds
    /// which hand): [`compare_with`] applies it.
    pub fn key(&self, cards: [Card; 3]) -> u32 {
        let v = SanGongValue::of(cards);
        let combination = match self.equal_points {
            // Annex: class 1 (three figures) best … 31 worst.
            SangongEqualPoints::ClassThenHighCard => 31 - u32::from(v.class),
            // Art. 7(2) as written: points alone; three figures stay above every point total.
            SangongEqualPoints::HighCardOnly if v.class == 1 => 10,
            SangongEqualPoints::HighCardOnly => u32::from(v.points),
        };
        let high = match self.high_card {
            SangongHighCardCompare::TopCardRankThenSuit => u32::from(card_order(v.high_card)),
            SangongHighCardCompare::CascadeThenSuit => {
                // the annex's rank order (ace lowest), highest card first, 4 bits each, then the
                // suit of the highest card
                let mut ranks = cards.map(|c| u32::from(card_order(c) / 4));
                ranks.sort_unstable_by(|a, b| b.cmp(a));
                ((ranks[0] * 16 + ranks[1]) * 16 + ranks[2]) * 4 + u32::from(card_order(v.high_card) % 4)
            }
        };
        combination << 14 | high
    }
}

/// Compares a banker's and a player's hand (Art. 7–8) under the default rule
/// ([`compare_with`]).
pub fn compare(banker: [Card; 3], player: [Card; 3]) -> SanGongWinner {
    compare_with(SanGongRule::default(), banker, player)
}

/// Compares a banker's and a player's hand (Art. 7–8).
///
/// A better combination wins (Art. 7(1)); equal ones are decided by the highest card in the
/// annex's order (Art. 7(2)), both as `rule` reads them; but when both hold zero with no figure
/// the banker wins "independentemente do valor individual das cartas e dos naipes" (Art. 8).
pub fn compare_with(rule: SanGongRule, banker: [Card; 3], player: [Card; 3]) -> SanGongWinner {
    if SanGongValue::of(banker).class == 31 && SanGongValue::of(player).class == 31 {
        return SanGongWinner::Banker;
    }
    match rule.key(player).cmp(&rule.key(banker)) {
        Ordering::Greater => SanGongWinner::Player,
        Ordering::Less => SanGongWinner::Banker,
        Ordering::Equal => SanGongWinner::Tie,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::card::parse_cards;

    fn three(s: &str) -> [Card; 3] {
        parse_cards(s).unwrap().try_into().unwrap()
    }

    #[test]
    fn every_hand_has_one_of_31_classes_with_the_right_counts() {
        let mut counts = [0u32; 32];
        let all: Vec<Card> = Card::all().collect();
        for a in 0..52 {
            for b in a + 1..52 {
                for c in b + 1..52 {
                    counts[SanGongValue::of([all[a], all[b], all[c]]).class as usize] += 1;
                }
            }
        }
        assert_eq!(counts[0], 0);
        assert!(counts[1..].iter().all(|&n| n > 0), "{counts:?}");
        assert_eq!(counts.iter().sum::<u32>(), 22_100);
        // Three figures: C(12, 3).
        assert_eq!(counts[1], 220);
        // 9 with two figures: two of the 12 figures (66 ways) and a 9 (4 ways).
        assert_eq!(counts[2], 66 * 4);
        // 0 with two figures: two figures and a ten.
        assert_eq!(counts[29], 66 * 4);
    }

    #[test]
    fn annex_ranking_examples() {
        // Art. 6: 10 and figures count 0, ace 1; points are the sum mod 10.
        let v = SanGongValue::of(three("AS 9H 10D"));
        assert_eq!((v.points, v.figures, v.class), (0, 0, 31));
        let v = SanGongValue::of(three("KS QH JD"));
        assert_eq!((v.class, v.name().as_str()), (1, "three figures"));
        let v = SanGongValue::of(three("KS QH 9D"));
        assert_eq!((v.class, v.name().as_str()), (2, "9 with two figures"));
        let v = SanGongValue::of(three("KS 4H 5D"));
        assert_eq!((v.class, v.name().as_str()), (3, "9 with one figure"));
        let v = SanGongValue::of(three("2S 3H 4D"));
        assert_eq!((v.class, v.name().as_str()), (4, "9 with no figure"));
        let v = SanGongValue::of(three("KS QH 10D"));
        assert_eq!((v.class, v.name().as_str()), (29, "0 with two figures"));
    }

    #[test]
    fn art7_higher_class_wins_then_the_highest_card() {
        // Art. 7(1): the better combination wins.
        assert_eq!(compare(three("2S 3H 4D"), three("KS QH 9D")), SanGongWinner::Player);
        // Art. 7(2): same class → the single highest card, K > Q > … > 2 > A.
        assert_eq!(compare(three("KS 4H 5D"), three("QS 4C 5C")), SanGongWinner::Banker);
        assert_eq!(compare(three("2S 3H 4D"), three("AS 2C 6C")), SanGongWinner::Player);
        // The annex puts the ace below the two.
        assert!(card_order("AS".parse().unwrap()) < card_order("2D".parse().unwrap()));
        assert!(card_order("KD".parse().unwrap()) > card_order("QS".parse().unwrap()));
        // … and suits S > H > C > D for cards of equal rank.
        assert_eq!(compare(three("KH 4H 5D"), three("KS 4C 5C")), SanGongWinner::Player);
    }

    #[test]
    fn the_ambiguous_comparisons_follow_the_table_s_options() {
        let rule = |equal_points, high_card| SanGongRule { equal_points, high_card };
        let default = SanGongRule::default();
        let high_card_only = rule(SangongEqualPoints::HighCardOnly, SangongHighCardCompare::TopCardRankThenSuit);
        let cascade = rule(SangongEqualPoints::ClassThenHighCard, SangongHighCardCompare::CascadeThenSuit);
        // E-2: 9 with one figure (K♠) against 9 with two figures (Q♠ J♥). The annex ranks two
        // figures higher; Art. 7(2) as written gives the same points to the highest card, K♠.
        let (banker, player) = (three("KS 4H 5D"), three("QS JH 9D"));
        assert_eq!(compare_with(default, banker, player), SanGongWinner::Player);
        assert_eq!(compare_with(high_card_only, banker, player), SanGongWinner::Banker);
        // three figures stay the best combination whatever the highest card
        assert_eq!(compare_with(high_card_only, three("KS QH 9D"), three("QD JC JS")), SanGongWinner::Player);
        // E-3: two hands of 9 with one figure, K♠-5-4 and K♥-10-9. The single highest card
        // decides by its suit (S > H); compared card by card first, 10 beats 5.
        let (banker, player) = (three("KS 4H 5D"), three("KH 9C 10D"));
        assert_eq!(compare_with(default, banker, player), SanGongWinner::Banker);
        assert_eq!(compare_with(cascade, banker, player), SanGongWinner::Player);
        // all three ranks equal: the suit of the highest card
        assert_eq!(compare_with(cascade, three("KH 4H 5D"), three("KS 4C 5C")), SanGongWinner::Player);
        // Art. 8 under every rule: zero with no figure against zero with no figure is the banker's
        for r in [default, high_card_only, cascade] {
            assert_eq!(compare_with(r, three("AD 9D 10D"), three("10S 4S 6S")), SanGongWinner::Banker);
        }
        assert_eq!(compare(banker, player), compare_with(default, banker, player));
    }

    #[test]
    fn art8_banker_wins_zero_with_no_figure_against_zero_with_no_figure() {
        // "Ganha o banqueiro quando a sua pontuação como a do jogador forem zero sem figuras".
        assert_eq!(compare(three("AD 9D 10D"), three("10S 4S 6S")), SanGongWinner::Banker);
        // Not for zero with one figure: Art. 7(2) applies.
        assert_eq!(compare(three("KD 4D 6D"), three("KS 4S 6S")), SanGongWinner::Player);
    }
}
