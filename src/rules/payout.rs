//! Settlement of single bets as pure functions of the hands: the net result in
//! units of the bet's stake and the article that decides it.
//!
//! The round settlement ([`super::settle`]) and the odds calculator
//! ([`crate::odds`]) both call these, so the published house edges are computed
//! by the very code that settles live rounds.
use std::cmp::Ordering;

use serde::Serialize;

use super::card::{Card, Rank};
use super::eval3::{Category3, HandRank3};
use super::eval5::{compare_stud, Category5, Evaluator5};
use super::options::{AnteBonusScope, AntePlayTie, IdenticalHands, QpokerUnqualifiedPays, WinTableScope};
use super::ruleset::{Citation, Qualifier, Ruleset, RulesetId};
use super::sangong::{self, SanGongWinner};

/// How a bet ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Paid.
    Win,
    /// Collected by the house.
    Lose,
    /// Returned.
    Push,
    /// Void (round void or hand null): returned.
    Void,
}

/// One bet's result: net win per unit staked, and the articles that decide it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct BetOutcome {
    /// Win, lose, push or void.
    pub outcome: Outcome,
    /// Net result per unit staked: +1 paid 1 to 1, 0 returned, −1 lost, −0.5 half lost.
    pub net: f64,
    /// The article that decides the result.
    pub rule: Citation,
    /// A second article (e.g. a bonus or pay-table line), if any.
    pub also: Option<Citation>,
}

impl BetOutcome {
    fn new(net: f64, rule: Citation) -> BetOutcome {
        let outcome = match net.partial_cmp(&0.0) {
            Some(Ordering::Greater) => Outcome::Win,
            Some(Ordering::Less) => Outcome::Lose,
            _ => Outcome::Push,
        };
        BetOutcome { outcome, net, rule, also: None }
    }

    fn with(mut self, also: Option<Citation>) -> BetOutcome {
        self.also = also;
        self
    }

    /// A lost bet.
    pub fn new_lost(rule: Citation) -> BetOutcome {
        BetOutcome::new(-1.0, rule)
    }

    /// A void or null bet (returned).
    pub fn void(rule: Citation) -> BetOutcome {
        BetOutcome { outcome: Outcome::Void, net: 0.0, rule, also: None }
    }
}

/// Whether a three-card dealer hand qualifies (Q-high or better).
pub fn dealer_qualifies3(dealer: HandRank3) -> bool {
    dealer.category() > Category3::HighCard || dealer.top_rank() >= Rank::Queen
}

/// Whether a stud dealer hand qualifies under `qualifier` (stud-2004 Art. 9(1)).
pub fn dealer_qualifies_stud(qualifier: Qualifier, dealer: [Card; 5]) -> bool {
    let has = |r: Rank| dealer.iter().any(|c| c.rank() == r);
    match qualifier {
        Qualifier::HoldsAceAndKing => has(Rank::Ace) && has(Rank::King),
        _ => Evaluator5::get().eval(dealer).category() > Category5::HighCard || (has(Rank::Ace) && has(Rank::King)),
    }
}

/// The Ante and (if played) Play of a fortune3cp hand.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct AntePlay {
    /// The Ante, bonus included.
    pub ante: BetOutcome,
    /// The Play, `None` if the player folded.
    pub play: Option<BetOutcome>,
}

/// Settles a fortune3cp (2025 or 2008) Ante and Play.
pub fn fortune_ante_play(rs: &Ruleset, player: HandRank3, dealer: HandRank3, played: bool) -> AntePlay {
    let y2025 = rs.id == RulesetId::Fortune3cp2025;
    let c = |a2025: &'static str, a2008: &'static str| rs.cite(if y2025 { a2025 } else { a2008 });
    let bonus_table = rs.main_bonus3.as_ref();
    let bonus_line = bonus_table.and_then(|t| t.line(player.category()));
    if !played {
        let fold = c("12(2)", "9(3)");
        let mut ante = BetOutcome::new(-1.0, fold);
        if y2025 && rs.options.ante_bonus_scope() == AnteBonusScope::AnyAnte {
            if let Some(l) = bonus_line {
                ante = BetOutcome::new(-1.0 + l.pays_to_one, fold).with(Some(l.citation));
            }
        }
        return AntePlay { ante, play: None };
    }
    let (mut ante, play) = if !dealer_qualifies3(dealer) {
        let rule = c("13(1)", "9(6)");
        (BetOutcome::new(1.0, rule), BetOutcome::new(0.0, rule))
    } else {
        match player.cmp(&dealer) {
            Ordering::Greater if y2025 => {
                (BetOutcome::new(1.0, rs.cite("13(3)")), BetOutcome::new(1.0, rs.cite("13(3)")))
            }
            Ordering::Greater => {
                // 2008 Art. 9(8): winners paid by the table; "other" hands 1 to 1.
                let (table, line_cite) = match bonus_line {
                    Some(l) => (l.pays_to_one, Some(l.citation)),
                    None => (1.0, Some(rs.cite("9(8)(4)"))),
                };
                let (a, p) = match rs.options.f2008_win_table_scope() {
                    WinTableScope::AnteAndPlay => (table, table),
                    WinTableScope::AnteOnly => (table, 1.0),
                    WinTableScope::PlayOnly => (1.0, table),
                };
                let rule = rs.cite("9(8)");
                (BetOutcome::new(a, rule).with(line_cite), BetOutcome::new(p, rule).with(line_cite))
            }
            Ordering::Less => {
                let rule = c("13(3)", "9(7)");
                (BetOutcome::new(-1.0, rule), BetOutcome::new(-1.0, rule))
            }
            Ordering::Equal => {
                let net = if rs.options.ante_play_tie() == AntePlayTie::DealerWins { -1.0 } else { 0.0 };
                let rule = c("7(1)", "8");
                (BetOutcome::new(net, rule), BetOutcome::new(net, rule))
            }
        }
    };
    if y2025 {
        // Art. 13(4): "Independentemente de se prosseguir ou não o jogo".
        let lost = play.net < 0.0;
        let eligible = match rs.options.ante_bonus_scope() {
            AnteBonusScope::Played | AnteBonusScope::AnyAnte => true,
            AnteBonusScope::PlayedNotLost => !lost,
        };
        if let (true, Some(l)) = (eligible, bonus_line) {
            let rule = ante.rule;
            ante = BetOutcome::new(ante.net + l.pays_to_one, rule).with(Some(l.citation));
        }
    }
    AntePlay { ante, play: Some(play) }
}

/// Settles Pair Plus on the player's three cards, whatever the dealer holds.
pub fn pair_plus(rs: &Ruleset, player: HandRank3) -> BetOutcome {
    let table = rs.pair_plus.as_ref().expect("ruleset has a Pair Plus table");
    match table.line(player.category()) {
        Some(l) => BetOutcome::new(l.pays_to_one, l.citation),
        None => BetOutcome::new(
            -1.0,
            rs.cite(match rs.id {
                RulesetId::Fortune3cp2025 => "13(5)",
                _ => "9(1)",
            }),
        ),
    }
}

/// Settles the Six Card Bonus (fortune3cp-2025 Art. 14): best five of the player's
/// three and the dealer's three cards.
pub fn six_card_bonus(rs: &Ruleset, player: [Card; 3], dealer: [Card; 3]) -> (BetOutcome, Category5) {
    let six = [player[0], player[1], player[2], dealer[0], dealer[1], dealer[2]];
    let category = Evaluator5::get().best_of(&six).0.category();
    let table = rs.six_card_bonus.as_ref().expect("ruleset has a Six Card Bonus table");
    let outcome = match table.line(category) {
        Some(l) => BetOutcome::new(l.pays_to_one, l.citation),
        None => BetOutcome::new(-1.0, rs.cite("13(6)")),
    };
    (outcome, category)
}

/// A stud hand's Ante and (if raised) Raise, both per unit of their own stake
/// (the Raise stake is twice the Ante, Art. 6(6)).
pub fn stud_ante_raise(rs: &Ruleset, player: [Card; 5], dealer: [Card; 5], raised: bool) -> AntePlay {
    if !raised {
        return AntePlay { ante: BetOutcome::new(-1.0, rs.cite("6(7)")), play: None };
    }
    if !dealer_qualifies_stud(rs.qualifier.0, dealer) {
        let rule = rs.cite("9(2)");
        return AntePlay { ante: BetOutcome::new(1.0, rule), play: Some(BetOutcome::new(0.0, rule)) };
    }
    match compare_stud(player, dealer) {
        Ordering::Greater => {
            let category = Evaluator5::get().eval(player).category();
            let line = rs.raise_table.as_ref().and_then(|t| t.line(category)).copied();
            let pays = line.map_or(1.0, |l| l.pays_to_one);
            let rule = rs.cite("9(5)");
            AntePlay {
                ante: BetOutcome::new(1.0, rule),
                play: Some(BetOutcome::new(pays, rule).with(line.map(|l| l.citation))),
            }
        }
        Ordering::Less => {
            let rule = rs.cite("9(4)");
            AntePlay { ante: BetOutcome::new(-1.0, rule), play: Some(BetOutcome::new(-1.0, rule)) }
        }
        Ordering::Equal => {
            let net = identical_net(rs);
            let rule = rs.cite("8");
            AntePlay { ante: BetOutcome::new(net, rule), play: Some(BetOutcome::new(net, rule)) }
        }
    }
}

fn identical_net(rs: &Ruleset) -> f64 {
    if rs.options.identical_hands() == IdenticalHands::DealerWins {
        -1.0
    } else {
        0.0
    }
}

/// Settles the qpoker-2004 bet against the dealer (Art. 9).
pub fn qpoker_bet(rs: &Ruleset, player: HandRank3, dealer: HandRank3, played: bool) -> BetOutcome {
    if !played {
        // Art. 9(3): "perde metade do valor da importância da sua aposta".
        return BetOutcome::new(-0.5, rs.cite("9(3)"));
    }
    if !dealer_qualifies3(dealer) {
        let net = match rs.options.qpoker_unqualified_pays() {
            QpokerUnqualifiedPays::HalfToOne => 0.5,
            QpokerUnqualifiedPays::ReturnHalf => -0.5,
        };
        return BetOutcome::new(net, rs.cite("9(5)"));
    }
    match player.cmp(&dealer) {
        Ordering::Greater => {
            let line = rs.main_bonus3.as_ref().and_then(|t| t.line(player.category())).copied();
            BetOutcome::new(line.map_or(1.0, |l| l.pays_to_one), rs.cite("9(7)")).with(line.map(|l| l.citation))
        }
        Ordering::Less => BetOutcome::new(-1.0, rs.cite("9(6)")),
        Ordering::Equal => BetOutcome::new(identical_net(rs), rs.cite("8")),
    }
}

/// Settles a San Gong player's bet against the banker (Art. 7–9): a win pays
/// 1 to 1 less the house's 5% commission.
pub fn sangong_bet(rs: &Ruleset, banker: [Card; 3], player: [Card; 3]) -> BetOutcome {
    match sangong::compare_with(rs.options.sangong_rule(), banker, player) {
        SanGongWinner::Player => BetOutcome::new(1.0 - rs.commission, rs.cite("7(1)")).with(Some(rs.cite("9"))),
        SanGongWinner::Banker => {
            let both_zero =
                sangong::SanGongValue::of(banker).class == 31 && sangong::SanGongValue::of(player).class == 31;
            BetOutcome::new(-1.0, rs.cite(if both_zero { "8" } else { "7(1)" }))
        }
        SanGongWinner::Tie => BetOutcome::new(identical_net(rs), rs.cite("7(2)")),
    }
}
