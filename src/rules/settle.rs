//! Settlement of a finished round: per hand, per bet, with the articles that
//! produced each result, in multiples of the stake and in money when stakes are known.
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::card::{Card, CardSet};
use super::deal::{counter_clockwise, sangong_first_place, SanGongDeal, Seat, SANGONG_PLACES};
use super::eval3::HandRank3;
use super::eval5::{Category5, Evaluator5};
use super::options::{AdditionalBetRequires, BankerCommission, RoyalShare, SangongSettlementStart};
use super::payout::{self, BetOutcome, Outcome};
use super::ruleset::{
    BetKind, Citation, Consequence, GameKind, IrregularityKind, ProgressiveAward, Ruleset, RulesetId,
};
use super::RulesError;

/// An amount of money in minor units (e.g. avos or cents), to avoid rounding drift.
pub type Money = i64;

/// A bet present on a hand's spot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wager {
    /// Which spot.
    pub bet: BetKind,
    /// The stake, when the backend told us (the camera sees chips, not amounts).
    #[serde(default)]
    pub stake: Option<Money>,
}

/// The player's decision after seeing the cards.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Placed Play / Raise, or (Q Poker) chose to play.
    #[default]
    Played,
    /// Folded ("desistência").
    Folded,
}

/// One player hand of a finished round.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HandRound {
    /// The seat.
    pub seat: Seat,
    /// The hand's cards.
    pub cards: Vec<Card>,
    /// Bets on the hand's spots.
    pub wagers: Vec<Wager>,
    /// Played or folded.
    #[serde(default)]
    pub decision: Decision,
}

/// An irregularity observed in the round (from the verifier or the backend).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Observed {
    /// What happened.
    pub kind: IrregularityKind,
    /// The hand concerned, if any.
    #[serde(default)]
    pub seat: Option<Seat>,
}

/// The Progressive pool and the house's fixed awards (fortune3cp-2025 Art. 15–16,
/// stud-2004 Art. 10). Amounts the regulation leaves to the house.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgressivePool {
    /// The pool now.
    pub pool: Money,
    /// The amount it restarts at when emptied.
    pub reset_to: Money,
    /// Fixed awards per category (royal and straight flush: the floor of the pool share).
    pub fixed: BTreeMap<Category5, Money>,
}

/// A finished round as the tracker (or a script) saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Round {
    /// Player hands (San Gong: every place but the banker's).
    pub hands: Vec<HandRound>,
    /// The dealer's cards (San Gong: the banker's).
    pub dealer: Vec<Card>,
    /// Community cards (fortune3cp-2025 with a Progressive bet).
    #[serde(default)]
    pub community: Vec<Card>,
    /// Irregularities observed.
    #[serde(default)]
    pub irregularities: Vec<Observed>,
    /// The Progressive pool, when known.
    #[serde(default)]
    pub progressive_pool: Option<ProgressivePool>,
    /// stud-2004 Art. 9(5): the house's maximum payout per round for quads and better.
    #[serde(default)]
    pub max_payout: Option<Money>,
    /// sangong-1996 Art. 5(3): the banker's capital, when known; without it every bet is
    /// settled in full.
    #[serde(default)]
    pub sangong_bank: Option<SanGongBank>,
}

/// A San Gong banker's capital for the round and the deal that orders its settlement
/// (sangong-1996 Art. 2(2)–(3), 5(3)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SanGongBank {
    /// The banker's place and the dice total.
    pub deal: SanGongDeal,
    /// "O banqueiro é obrigado a colocar o seu capital em fichas na mesa" (Art. 5(3)).
    pub capital: Money,
}

/// One bet's settlement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BetSettlement {
    /// The bet.
    pub bet: BetKind,
    /// Win / lose / push / void.
    pub outcome: Outcome,
    /// Net result per unit staked.
    pub net_multiple: f64,
    /// The stake, when known.
    pub stake: Option<Money>,
    /// The net amount won (+) or lost (−), when the stake is known.
    pub net_amount: Option<Money>,
    /// The articles that produced the result.
    pub citations: Vec<Citation>,
}

/// One hand's settlement.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct HandSettlement {
    /// The seat.
    pub seat: Seat,
    /// The hand's combination, in words.
    pub hand: String,
    /// Why the hand is null, if it is.
    pub null: Option<Citation>,
    /// Each bet.
    pub bets: Vec<BetSettlement>,
}

/// The round's status.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case", tag = "status")]
pub enum RoundStatus {
    /// Settled normally.
    Settled,
    /// Void: every bet returned.
    Void {
        /// The irregularity.
        reason: IrregularityKind,
        /// The article.
        citation: Citation,
        /// Whether Progressive bets carry over.
        progressive_carries_over: bool,
    },
}

/// A settled round.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Settlement {
    /// Settled or void.
    pub status: RoundStatus,
    /// The dealer's combination, in words.
    pub dealer_hand: String,
    /// Whether the dealer qualified (`None` where the game has no qualification).
    pub dealer_qualifies: Option<bool>,
    /// Per hand.
    pub hands: Vec<HandSettlement>,
    /// San Gong: the banker's net result after commission, when stakes are known.
    pub banker_net: Option<Money>,
    /// Progressive pool after the round, when known.
    pub progressive_pool_after: Option<Money>,
}

fn money(stake: Option<Money>, multiple: f64) -> Option<Money> {
    // Round half away from zero to the minor unit.
    stake.map(|s| (s as f64 * multiple).round() as Money)
}

fn three(cards: &[Card], what: &str) -> Result<[Card; 3], RulesError> {
    cards.try_into().map_err(|_| RulesError::BadRound(format!("{what} has {} cards, expected 3", cards.len())))
}

fn five(cards: &[Card], what: &str) -> Result<[Card; 5], RulesError> {
    cards.try_into().map_err(|_| RulesError::BadRound(format!("{what} has {} cards, expected 5", cards.len())))
}

/// Settles `round` under `rs`.
///
/// Irregularities are applied first: a round-voiding one returns every bet
/// (with the Progressive carry-over the article gives); cards dealt to a hand
/// without a bet make that hand null. Then every bet present is settled.
pub fn settle(rs: &Ruleset, round: &Round) -> Result<Settlement, RulesError> {
    // Irregularities that void the round.
    for obs in &round.irregularities {
        if let Some(rule) = rs.irregularity(obs.kind) {
            if let Consequence::RoundVoid { progressive_carries_over }
            | Consequence::Redeal { progressive_carries_over } = rule.consequence
            {
                let hands = round
                    .hands
                    .iter()
                    .map(|h| HandSettlement {
                        seat: h.seat,
                        hand: String::new(),
                        null: None,
                        bets: h.wagers.iter().map(|w| bet_settlement(w, BetOutcome::void(rule.citation))).collect(),
                    })
                    .collect();
                return Ok(Settlement {
                    status: RoundStatus::Void { reason: obs.kind, citation: rule.citation, progressive_carries_over },
                    dealer_hand: String::new(),
                    dealer_qualifies: None,
                    hands,
                    banker_net: None,
                    progressive_pool_after: round.progressive_pool.as_ref().map(|p| p.pool),
                });
            }
        }
    }
    check_cards(rs, round)?;
    match rs.kind {
        GameKind::FortuneThreeCard | GameKind::QPoker => settle_three_card(rs, round),
        GameKind::Stud => settle_stud(rs, round),
        GameKind::SanGong => settle_sangong(rs, round),
    }
}

fn check_cards(rs: &Ruleset, round: &Round) -> Result<(), RulesError> {
    if rs.decks == 1 {
        let mut seen = CardSet::EMPTY;
        let all = round.hands.iter().flat_map(|h| h.cards.iter()).chain(&round.dealer).chain(&round.community);
        for &c in all {
            if !seen.insert(c) {
                return Err(RulesError::BadRound(format!(
                    "{c} appears twice in a single-deck game; report it as a duplicate_card irregularity"
                )));
            }
        }
    }
    Ok(())
}

fn bet_settlement(w: &Wager, o: BetOutcome) -> BetSettlement {
    let mut citations = vec![o.rule];
    citations.extend(o.also);
    BetSettlement {
        bet: w.bet,
        outcome: o.outcome,
        net_multiple: o.net,
        stake: w.stake,
        net_amount: money(w.stake, o.net),
        citations,
    }
}

fn null_citation(rs: &Ruleset, round: &Round, h: &HandRound) -> Option<Citation> {
    let no_bet = round
        .irregularities
        .iter()
        .any(|o| o.kind == IrregularityKind::CardsToHandWithoutBet && o.seat == Some(h.seat));
    if no_bet || h.wagers.is_empty() {
        rs.irregularity(IrregularityKind::CardsToHandWithoutBet).map(|r| r.citation)
    } else {
        None
    }
}

/// fortune3cp-2025 Art. 4: a bet the table does not take is void. An additional bet (Six Card
/// Bonus, Progressive) by a player without the basic bet it needs is invalid (4(2)–(3); which
/// basic bet, `additional_bet_requires`, docs/rules.md A-9); where the house takes the basic
/// bets only together (`basic_bets_independent = false`, 4(1)), one alone is no bet either, and
/// neither is what rests on it.
fn invalid_bet_citation(rs: &Ruleset, h: &HandRound, bet: BetKind) -> Option<Citation> {
    if rs.id != RulesetId::Fortune3cp2025 {
        return None;
    }
    let has = |b| h.wagers.iter().any(|w| w.bet == b);
    let (ante, pair_plus) = (has(BetKind::Ante), has(BetKind::PairPlus));
    let basic_alone = !rs.options.basic_bets_independent() && ante != pair_plus;
    match bet {
        BetKind::Ante | BetKind::PairPlus | BetKind::Play if basic_alone => Some(rs.cite("4(1)")),
        BetKind::SixCardBonus | BetKind::Progressive => {
            let required = match rs.options.additional_bet_requires() {
                AdditionalBetRequires::AnyBasic => ante || pair_plus,
                AdditionalBetRequires::Ante => ante,
                AdditionalBetRequires::AnteAndPairPlus => ante && pair_plus,
            };
            (!required || basic_alone).then(|| rs.cite("4(3)"))
        }
        _ => None,
    }
}

fn settle_three_card(rs: &Ruleset, round: &Round) -> Result<Settlement, RulesError> {
    let rules = rs.three_card_rules();
    let dealer_cards = three(&round.dealer, "the dealer's hand")?;
    let dealer = rules.eval(dealer_cards);
    let qualifies = payout::dealer_qualifies3(dealer);
    let mut hands = Vec::new();
    let mut progressive_winners: Vec<(usize, Category5)> = Vec::new();
    for h in &round.hands {
        let cards = three(&h.cards, &format!("{}", h.seat))?;
        let rank: HandRank3 = rules.eval(cards);
        let null = null_citation(rs, round, h);
        let played = h.decision == Decision::Played;
        let mut bets = Vec::new();
        for w in &h.wagers {
            let o = if let Some(c) = null.or_else(|| invalid_bet_citation(rs, h, w.bet)) {
                BetOutcome::void(c)
            } else {
                match (rs.kind, w.bet) {
                    (GameKind::FortuneThreeCard, BetKind::Ante) => {
                        payout::fortune_ante_play(rs, rank, dealer, played).ante
                    }
                    (GameKind::FortuneThreeCard, BetKind::Play) => {
                        match payout::fortune_ante_play(rs, rank, dealer, played).play {
                            Some(p) => p,
                            None => continue, // no Play on a folded hand
                        }
                    }
                    (_, BetKind::PairPlus) => payout::pair_plus(rs, rank),
                    (GameKind::FortuneThreeCard, BetKind::SixCardBonus) if rs.six_card_bonus.is_some() => {
                        payout::six_card_bonus(rs, cards, dealer_cards).0
                    }
                    (GameKind::FortuneThreeCard, BetKind::Progressive) if !rs.progressive.is_empty() => {
                        let community: [Card; 2] = round.community.as_slice().try_into().map_err(|_| {
                            RulesError::BadRound(format!(
                                "a Progressive bet needs 2 community cards, got {}",
                                round.community.len()
                            ))
                        })?;
                        let category = Evaluator5::get()
                            .eval([cards[0], cards[1], cards[2], community[0], community[1]])
                            .category();
                        progressive_winners.push((hands.len(), category));
                        progressive_placeholder(rs, category)
                    }
                    (GameKind::QPoker, BetKind::Bet) => payout::qpoker_bet(rs, rank, dealer, played),
                    (_, bet) => return Err(RulesError::BadRound(format!("{} has no {bet} bet", rs.id))),
                }
            };
            bets.push(bet_settlement(w, o));
        }
        hands.push(HandSettlement { seat: h.seat, hand: rank.category().name().to_string(), null, bets });
    }
    let pool_after = settle_progressive(rs, round, &mut hands, &progressive_winners);
    Ok(Settlement {
        status: RoundStatus::Settled,
        dealer_hand: dealer.category().name().to_string(),
        dealer_qualifies: Some(qualifies),
        hands,
        banker_net: None,
        progressive_pool_after: pool_after,
    })
}

/// A Progressive result before amounts: wins (multiple unknown, reported as 0, and no amount
/// without the table's pool) or loses. The money is filled in by [`settle_progressive`].
fn progressive_placeholder(rs: &Ruleset, category: Category5) -> BetOutcome {
    match rs.progressive.iter().find(|l| l.category == category) {
        Some(l) => BetOutcome { outcome: Outcome::Win, net: 0.0, rule: l.citation, also: None },
        None => BetOutcome {
            outcome: Outcome::Lose,
            net: -1.0,
            rule: rs.cite(if rs.kind == GameKind::Stud { "10(1)" } else { "15(1)" }),
            also: None,
        },
    }
}

/// Pays Progressive winners from the pool: left to right from the dealer's left,
/// straight flushes before a royal (fortune3cp-2025 Art. 15(3), 15(5); stud-2004
/// Art. 10), the pool reduced and reset to its minimum when emptied (15(6)).
/// Several stud royals share (Art. 10(5), option `royal_share`): each is paid
/// from the pool as it stood before the first of them; the remainder of an
/// uneven split (fewer units than winners) goes with the emptied pool.
/// `progressive_percent_base` and `progressive_pool_debit` choose the pool a
/// percentage is of and which awards reduce it (docs/rules.md A-13).
fn settle_progressive(
    rs: &Ruleset,
    round: &Round,
    hands: &mut [HandSettlement],
    winners: &[(usize, Category5)],
) -> Option<Money> {
    let Some(pool) = round.progressive_pool.as_ref() else {
        // An award is a fixed sum or a share of the pool, both the table's: without them the
        // winning category and its article are known, the amount is not (docs/rules.md A-11).
        for &(i, _) in winners {
            if let Some(b) =
                hands[i].bets.iter_mut().find(|b| b.bet == BetKind::Progressive && b.outcome == Outcome::Win)
            {
                b.net_amount = None;
            }
        }
        return None;
    };
    let mut left = pool.pool;
    let mut order: Vec<&(usize, Category5)> =
        winners.iter().filter(|(_, c)| rs.progressive.iter().any(|l| l.category == *c)).collect();
    // Seats are already left to right; royals go after straight flushes.
    order.sort_by_key(|(i, c)| (*c == Category5::RoyalFlush, hands[*i].seat));
    let royals = order.iter().filter(|(_, c)| *c == Category5::RoyalFlush).count() as Money;
    let shared_royals = rs.id == RulesetId::Stud2004 && royals > 1;
    let mut before_royals = None;
    let round_start = rs.options.progressive_percent_of_round_start();
    let debit_all = !rs.options.progressive_debits_percentage_awards_only();
    for (i, category) in order {
        let Some(line) = rs.progressive.iter().find(|l| l.category == *category) else { continue };
        let fixed = pool.fixed.get(category).copied().unwrap_or(0);
        let base = if round_start { pool.pool } else { left };
        let shared = shared_royals && *category == Category5::RoyalFlush;
        // the award, and whether it is a share of the pool (rather than the fixed sum)
        let (amount, from_pool) = match line.award {
            ProgressiveAward::FixedOrPoolShare { pool_fraction } if shared => {
                let pool_share = (*before_royals.get_or_insert(base) as f64 * pool_fraction).round() as Money;
                match rs.options.royal_share() {
                    RoyalShare::SplitLarger => (pool_share.max(fixed) / royals, pool_share >= fixed),
                    RoyalShare::LargerOfSplit => ((pool_share / royals).max(fixed), pool_share / royals >= fixed),
                }
            }
            ProgressiveAward::FixedOrPoolShare { pool_fraction } => {
                let share = (base as f64 * pool_fraction).round() as Money;
                (fixed.max(share), share >= fixed)
            }
            ProgressiveAward::Fixed => (fixed, false),
        };
        if debit_all || from_pool {
            left -= amount.min(left);
        }
        if let Some(b) = hands[*i].bets.iter_mut().find(|b| b.bet == BetKind::Progressive) {
            if shared {
                b.citations.push(rs.cite("10(5)"));
            }
            b.net_amount = Some(amount);
            if let Some(stake) = b.stake.filter(|&s| s > 0) {
                b.net_multiple = amount as f64 / stake as f64;
            }
        }
    }
    if shared_royals && left < royals {
        left = 0;
    }
    Some(if left <= 0 { pool.reset_to } else { left })
}

/// Art. 9(5)(7)–(9): the Raise winnings on quads and better (`capped`: hand, bet) at
/// most the house maximum, each hand's (docs/rules.md C-1b default `per_hand`) or,
/// with `per_round_total`, their total: each is then cut to its pro rata share of
/// it (rounded down), so that no hand's order at the table decides who is paid in full.
fn cap_raise_winnings(rs: &Ruleset, hands: &mut [HandSettlement], capped: &[(usize, usize)], max: Money) {
    let amount = |hands: &[HandSettlement], &(h, b): &(usize, usize)| hands[h].bets[b].net_amount.unwrap_or(0);
    let per_round_total = rs.options.stud_max_payout_per_round_total();
    let total: Money = capped.iter().map(|k| amount(hands, k)).sum();
    for k @ &(h, b) in capped {
        let won = amount(hands, k);
        let paid = match per_round_total {
            false if won > max => max,
            true if total > max => (i128::from(won) * i128::from(max) / i128::from(total)) as Money,
            _ => continue,
        };
        let bet = &mut hands[h].bets[b];
        bet.net_amount = Some(paid);
        bet.citations.push(rs.cite("9(5)(7)"));
    }
}

fn settle_stud(rs: &Ruleset, round: &Round) -> Result<Settlement, RulesError> {
    let ev = Evaluator5::get();
    let dealer_cards = five(&round.dealer, "the dealer's hand")?;
    let dealer = ev.eval(dealer_cards);
    let qualifies = payout::dealer_qualifies_stud(rs.qualifier.0, dealer_cards);
    let mut hands = Vec::new();
    let mut progressive_winners = Vec::new();
    // Raise winnings the house maximum caps: (hand, bet)
    let mut capped: Vec<(usize, usize)> = Vec::new();
    for h in &round.hands {
        let cards = five(&h.cards, &format!("{}", h.seat))?;
        let category = ev.eval(cards).category();
        let null = null_citation(rs, round, h);
        let raised = h.decision == Decision::Played;
        let result = payout::stud_ante_raise(rs, cards, dealer_cards, raised);
        let mut bets = Vec::new();
        for w in &h.wagers {
            let o = match (null, w.bet) {
                (Some(c), _) => BetOutcome::void(c),
                (None, BetKind::Ante) => result.ante,
                (None, BetKind::Raise) => match result.play {
                    Some(p) => p,
                    None => continue,
                },
                // A folded hand's cards are collected, so its Progressive bet cannot
                // win (Art. 6(7); docs/rules.md C-4, default `forfeited`; `still_paid`
                // settles it by the cards like a played hand's).
                (None, BetKind::Progressive) if !raised && !rs.options.stud_progressive_paid_on_fold() => {
                    BetOutcome::new_lost(rs.cite("6(7)"))
                }
                (None, BetKind::Progressive) => {
                    progressive_winners.push((hands.len(), category));
                    progressive_placeholder(rs, category)
                }
                (None, bet) => return Err(RulesError::BadRound(format!("stud-2004 has no {bet} bet"))),
            };
            let s = bet_settlement(w, o);
            if w.bet == BetKind::Raise && category >= Category5::Quads && s.net_amount.is_some_and(|a| a > 0) {
                capped.push((hands.len(), bets.len()));
            }
            bets.push(s);
        }
        hands.push(HandSettlement { seat: h.seat, hand: category.name().to_string(), null, bets });
    }
    if let Some(max) = round.max_payout {
        cap_raise_winnings(rs, &mut hands, &capped, max);
    }
    let pool_after = settle_progressive(rs, round, &mut hands, &progressive_winners);
    Ok(Settlement {
        status: RoundStatus::Settled,
        dealer_hand: dealer.category().name().to_string(),
        dealer_qualifies: Some(qualifies),
        hands,
        banker_net: None,
        progressive_pool_after: pool_after,
    })
}

fn settle_sangong(rs: &Ruleset, round: &Round) -> Result<Settlement, RulesError> {
    use super::sangong::SanGongValue;
    let banker = three(&round.dealer, "the banker's hand")?;
    let mut hands = Vec::new();
    // The banker's gross result per bet, before commission.
    let mut banker_gross: Money = 0;
    let mut banker_won_bets: Money = 0;
    let mut stakes_known = true;
    for h in &round.hands {
        let cards = three(&h.cards, &format!("{}", h.seat))?;
        let mut bets = Vec::new();
        for w in &h.wagers {
            if w.bet != BetKind::Bet {
                return Err(RulesError::BadRound(format!("sangong-1996 has no {} bet", w.bet)));
            }
            let o = payout::sangong_bet(rs, banker, cards);
            match w.stake {
                Some(stake) => {
                    let player_gross = match o.outcome {
                        Outcome::Win => stake,
                        Outcome::Lose => -stake,
                        _ => 0,
                    };
                    banker_gross -= player_gross;
                    if player_gross < 0 {
                        banker_won_bets += stake;
                    }
                }
                None => stakes_known = false,
            }
            bets.push(bet_settlement(w, o));
        }
        hands.push(HandSettlement { seat: h.seat, hand: SanGongValue::of(cards).name(), null: None, bets });
    }
    if let (Some(bank), true) = (round.sangong_bank, stakes_known) {
        (banker_gross, banker_won_bets) = cap_to_banker_capital(rs, bank, &mut hands)?;
    }
    // Art. 9: "5% de todas as jogadas ganhas" — on the banker side by option.
    let commission = |amount: Money| (amount as f64 * rs.commission).round() as Money;
    let banker_net = stakes_known.then(|| match rs.options.sangong_banker_commission() {
        BankerCommission::NetWin if banker_gross > 0 => banker_gross - commission(banker_gross),
        BankerCommission::EachWinningBet => banker_gross - commission(banker_won_bets),
        _ => banker_gross,
    });
    Ok(Settlement {
        status: RoundStatus::Settled,
        dealer_hand: SanGongValue::of(banker).name(),
        dealer_qualifies: None,
        hands,
        banker_net,
        progressive_pool_after: None,
    })
}

/// sangong-1996 Art. 5(3): "Em caso algum poderá o ganho ou perda do banqueiro exceder o
/// montante do seu capital em cada jogada." Bets are collected or paid place by place,
/// counter-clockwise (Art. 2(3)), from the place the table's option names (E-6), against the
/// running bank: a winning bet is paid what the capital and the amounts collected so far still
/// cover, the rest returned unpaid; a losing bet is collected only until the banker's gain
/// reaches the capital, the rest returned. Each bet cut keeps its result and multiple, its
/// amount changed and Art. 5(3) cited. Returns the banker's gross and the stakes collected.
fn cap_to_banker_capital(
    rs: &Ruleset,
    bank: SanGongBank,
    hands: &mut [HandSettlement],
) -> Result<(Money, Money), RulesError> {
    if bank.capital < 0 {
        return Err(RulesError::BadRound(format!("the banker's capital {} is negative", bank.capital)));
    }
    let banker = bank.deal.banker;
    let start = match rs.options.sangong_settlement_start() {
        SangongSettlementStart::FirstDealtPlace => {
            sangong_first_place(bank.deal, rs.options.sangong_dice_count_start())?
        }
        SangongSettlementStart::BankerNextPlace => counter_clockwise(banker, 1),
    };
    let order: Vec<Seat> = (0..SANGONG_PLACES).map(|i| counter_clockwise(start, i)).collect();
    for h in hands.iter() {
        if h.seat == banker || !order.contains(&h.seat) {
            return Err(RulesError::BadRound(format!(
                "{} is not a player's place of a San Gong table whose banker sits at {banker}",
                h.seat
            )));
        }
    }
    let (mut gain, mut collected) = (0 as Money, 0 as Money);
    for seat in order {
        for h in hands.iter_mut().filter(|h| h.seat == seat) {
            for bet in &mut h.bets {
                let Some(stake) = bet.stake else { continue };
                // What changes hands between banker and player, before the player's
                // commission (a winner nets 0.95 of it, Art. 9).
                let (gross, settled) = if bet.net_multiple < 0.0 {
                    let lost = money(Some(stake), -bet.net_multiple).unwrap_or(0);
                    (-lost, -lost.min((bank.capital - gain).max(0)))
                } else if bet.net_multiple > 0.0 {
                    (stake, stake.min((bank.capital + gain).max(0)))
                } else {
                    (0, 0)
                };
                gain -= settled;
                collected += (-settled).max(0);
                if settled != gross {
                    let multiple = if settled > 0 { bet.net_multiple } else { 1.0 };
                    bet.net_amount = money(Some(settled), multiple);
                    bet.citations.push(rs.cite("5(3)"));
                }
            }
        }
    }
    Ok((gain, collected))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::card::parse_cards;
    use crate::rules::ruleset::RulesetId;

    fn hand(seat: u8, cards: &str, bets: &[(BetKind, Money)], decision: Decision) -> HandRound {
        HandRound {
            seat: Seat(seat),
            cards: parse_cards(cards).unwrap(),
            wagers: bets.iter().map(|&(bet, s)| Wager { bet, stake: Some(s) }).collect(),
            decision,
        }
    }

    fn round(hands: Vec<HandRound>, dealer: &str) -> Round {
        Round {
            hands,
            dealer: parse_cards(dealer).unwrap(),
            community: vec![],
            irregularities: vec![],
            progressive_pool: None,
            max_payout: None,
            sangong_bank: None,
        }
    }

    /// stud-2004 with the options of `json` (a `RulesetOptions` object).
    fn stud(json: &str) -> Ruleset {
        Ruleset::with_options(RulesetId::Stud2004, serde_json::from_str(json).unwrap()).unwrap()
    }

    /// A stud round of two played hands at seats 1 and 3, each with Ante 10, Raise 20 and
    /// Progressive 5, against a dealer's A-K-high hand that does not pair them.
    fn stud_progressive_round(seat_1: &str, seat_3: &str) -> Round {
        let bets = [(BetKind::Ante, 10), (BetKind::Raise, 20), (BetKind::Progressive, 5)];
        round(
            vec![hand(1, seat_1, &bets, Decision::Played), hand(3, seat_3, &bets, Decision::Played)],
            "2C 4D 6C 8D 9C",
        )
    }

    fn nets(s: &HandSettlement) -> Vec<(BetKind, f64, Option<Money>)> {
        s.bets.iter().map(|b| (b.bet, b.net_multiple, b.net_amount)).collect()
    }

    #[test]
    fn fortune2025_full_round_with_ante_bonus_pair_plus_and_six_card_bonus() {
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let r = round(
            vec![
                // Straight flush vs dealer's Q-high: dealer qualifies, player wins 1+1, bonus 5 (13(4)(1)).
                hand(
                    1,
                    "9H 10H JH",
                    &[(BetKind::Ante, 100), (BetKind::Play, 100), (BetKind::PairPlus, 50), (BetKind::SixCardBonus, 10)],
                    Decision::Played,
                ),
                // A pair beats the dealer's Q-high.
                hand(2, "2C 2D 7S", &[(BetKind::Ante, 100), (BetKind::Play, 100)], Decision::Played),
                // Folded: loses the Ante (12(2)), Pair Plus still settled (13(5)).
                hand(3, "3C 5D 8S", &[(BetKind::Ante, 100), (BetKind::PairPlus, 20)], Decision::Folded),
            ],
            "QS 4D 6C",
        );
        let s = settle(&rs, &r).unwrap();
        assert_eq!(s.dealer_qualifies, Some(true));
        assert_eq!(
            nets(&s.hands[0])[..3],
            [(BetKind::Ante, 6.0, Some(600)), (BetKind::Play, 1.0, Some(100)), (BetKind::PairPlus, 40.0, Some(2000))]
        );
        // Six cards 9H 10H JH QS 4D 6C: no straight (no 8 or K), no flush, no pair → lost (13(6)).
        assert_eq!(nets(&s.hands[0])[3], (BetKind::SixCardBonus, -1.0, Some(-10)));
        assert_eq!(nets(&s.hands[1]), [(BetKind::Ante, 1.0, Some(100)), (BetKind::Play, 1.0, Some(100))]);
        assert_eq!(nets(&s.hands[2]), [(BetKind::Ante, -1.0, Some(-100)), (BetKind::PairPlus, -1.0, Some(-20))]);
        let cites: Vec<String> = s.hands[0].bets[0].citations.iter().map(|c| c.to_string()).collect();
        assert_eq!(cites, ["fortune3cp-2025 Art. 13(3)", "fortune3cp-2025 Art. 13(4)(1)"]);
    }

    #[test]
    fn fortune2025_dealer_not_qualified_returns_play_and_still_pays_the_bonus() {
        // Art. 13(1): Ante 1 to 1, Play returned; 13(4) "independentemente de se prosseguir ou não o jogo".
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let s = settle(
            &rs,
            &round(
                vec![hand(1, "5S 5D 5C", &[(BetKind::Ante, 10), (BetKind::Play, 10)], Decision::Played)],
                "JS 4D 6C",
            ),
        )
        .unwrap();
        assert_eq!(s.dealer_qualifies, Some(false));
        assert_eq!(nets(&s.hands[0]), [(BetKind::Ante, 5.0, Some(50)), (BetKind::Play, 0.0, Some(0))]);
        // A straight that loses to a qualified dealer's better straight still gets its bonus (default `played`).
        let s = settle(
            &rs,
            &round(
                vec![hand(1, "5S 6D 7C", &[(BetKind::Ante, 10), (BetKind::Play, 10)], Decision::Played)],
                "8S 9D 10C",
            ),
        )
        .unwrap();
        assert_eq!(nets(&s.hands[0]), [(BetKind::Ante, 0.0, Some(0)), (BetKind::Play, -1.0, Some(-10))]);
    }

    #[test]
    fn fortune2008_win_table_pays_ante_and_play() {
        // Art. 9(8): straight flush 5 to 1 on the winning bets.
        let rs = Ruleset::new(RulesetId::Fortune3cp2008);
        let s = settle(
            &rs,
            &round(
                vec![hand(
                    1,
                    "9H 10H JH",
                    &[(BetKind::Ante, 10), (BetKind::Play, 10), (BetKind::PairPlus, 10)],
                    Decision::Played,
                )],
                "QS 4D 6C",
            ),
        )
        .unwrap();
        assert_eq!(
            nets(&s.hands[0]),
            [(BetKind::Ante, 5.0, Some(50)), (BetKind::Play, 5.0, Some(50)), (BetKind::PairPlus, 40.0, Some(400))]
        );
        // A straight flush against an unqualified dealer: only Ante 1 to 1 (9(6)).
        let s = settle(
            &rs,
            &round(
                vec![hand(1, "9H 10H JH", &[(BetKind::Ante, 10), (BetKind::Play, 10)], Decision::Played)],
                "JS 4D 6C",
            ),
        )
        .unwrap();
        assert_eq!(nets(&s.hands[0]), [(BetKind::Ante, 1.0, Some(10)), (BetKind::Play, 0.0, Some(0))]);
    }

    #[test]
    fn qpoker_fold_loses_half_and_unqualified_dealer_pays_half() {
        let rs = Ruleset::new(RulesetId::Qpoker2004);
        let s = settle(
            &rs,
            &round(
                vec![
                    hand(1, "4S 5D 9C", &[(BetKind::Bet, 100)], Decision::Folded),
                    hand(2, "AS 5H 9D", &[(BetKind::Bet, 100)], Decision::Played),
                ],
                "JS 4D 6C",
            ),
        )
        .unwrap();
        assert_eq!(nets(&s.hands[0]), [(BetKind::Bet, -0.5, Some(-50))]);
        assert_eq!(nets(&s.hands[1]), [(BetKind::Bet, 0.5, Some(50))]);
        // Art. 9(7)(3): a winning straight pays 3 to 2.
        let s = settle(&rs, &round(vec![hand(1, "5S 6D 7C", &[(BetKind::Bet, 100)], Decision::Played)], "QS 4D 6C"))
            .unwrap();
        assert_eq!(nets(&s.hands[0]), [(BetKind::Bet, 1.5, Some(150))]);
    }

    #[test]
    fn stud_raise_table_and_house_maximum() {
        let rs = Ruleset::new(RulesetId::Stud2004);
        let mut r = round(
            vec![hand(1, "9S 9H 9D 9C 2S", &[(BetKind::Ante, 10), (BetKind::Raise, 20)], Decision::Played)],
            "AS KD 4C 6D 8H",
        );
        let s = settle(&rs, &r).unwrap();
        assert_eq!(s.dealer_qualifies, Some(true));
        assert_eq!(nets(&s.hands[0]), [(BetKind::Ante, 1.0, Some(10)), (BetKind::Raise, 20.0, Some(400))]);
        r.max_payout = Some(250);
        // A folded hand's Progressive is lost whatever its cards (Art. 6(7)).
        let folded = round(
            vec![hand(2, "AS KS QS JS 10S", &[(BetKind::Ante, 10), (BetKind::Progressive, 5)], Decision::Folded)],
            "2C 4D 6C 8D 10H",
        );
        let s = settle(&rs, &folded).unwrap();
        assert_eq!(nets(&s.hands[0]), [(BetKind::Ante, -1.0, Some(-10)), (BetKind::Progressive, -1.0, Some(-5))]);
        let s = settle(&rs, &r).unwrap();
        assert_eq!(s.hands[0].bets[1].net_amount, Some(250));
        // Dealer without A-K: Ante 1 to 1, Raise returned (9(2)).
        let s = settle(
            &rs,
            &round(
                vec![hand(1, "2S 2H 5D 7C 9S", &[(BetKind::Ante, 10), (BetKind::Raise, 20)], Decision::Played)],
                "AS QD 4C 6D 8H",
            ),
        )
        .unwrap();
        assert_eq!(nets(&s.hands[0]), [(BetKind::Ante, 1.0, Some(10)), (BetKind::Raise, 0.0, Some(0))]);
    }

    #[test]
    fn void_round_returns_every_bet_and_hand_without_bet_is_null() {
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let mut r = round(
            vec![hand(1, "9H 10H JH", &[(BetKind::Ante, 10), (BetKind::Play, 10)], Decision::Played)],
            "QS 4D 6C",
        );
        r.irregularities.push(Observed { kind: IrregularityKind::SeveralPlayerCardsExposed, seat: None });
        let s = settle(&rs, &r).unwrap();
        assert!(matches!(s.status, RoundStatus::Void { reason: IrregularityKind::SeveralPlayerCardsExposed, .. }));
        assert!(s.hands[0].bets.iter().all(|b| b.outcome == Outcome::Void && b.net_amount == Some(0)));
        assert_eq!(s.hands[0].bets[0].citations[0].to_string(), "fortune3cp-2025 Art. 17(1)(3)");
        // Cards to a hand with no bet: that hand null (17(4)(2)), others settled.
        let mut r = round(
            vec![
                hand(1, "9H 10H JH", &[], Decision::Played),
                hand(2, "2C 2D 7S", &[(BetKind::Ante, 10), (BetKind::Play, 10)], Decision::Played),
            ],
            "QS 4D 6C",
        );
        r.irregularities.push(Observed { kind: IrregularityKind::CardsToHandWithoutBet, seat: Some(Seat(1)) });
        let s = settle(&rs, &r).unwrap();
        assert_eq!(s.status, RoundStatus::Settled);
        assert_eq!(s.hands[0].null.unwrap().to_string(), "fortune3cp-2025 Art. 17(4)(2)");
        assert_eq!(nets(&s.hands[1]), [(BetKind::Ante, 1.0, Some(10)), (BetKind::Play, 1.0, Some(10))]);
    }

    #[test]
    fn duplicate_cards_in_a_single_deck_game_are_refused() {
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let err = settle(&rs, &round(vec![hand(1, "QS 10H JH", &[(BetKind::Ante, 10)], Decision::Played)], "QS 4D 6C"))
            .unwrap_err();
        assert!(err.to_string().contains("QS appears twice"), "{err}");
    }

    #[test]
    fn progressive_paid_from_the_pool_straight_flush_before_royal() {
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let mut r = round(
            vec![
                hand(
                    1,
                    "AS KS QS",
                    &[(BetKind::Ante, 10), (BetKind::Play, 10), (BetKind::Progressive, 5)],
                    Decision::Played,
                ),
                hand(
                    2,
                    "9H 8H 7H",
                    &[(BetKind::Ante, 10), (BetKind::Play, 10), (BetKind::Progressive, 5)],
                    Decision::Played,
                ),
            ],
            "2C 4D 6C",
        );
        r.community = parse_cards("JS 10S").unwrap();
        // Without the table's pool and fixed sums the royal wins an amount nobody can tell.
        let unknown = settle(&rs, &r).unwrap();
        let p1 = &unknown.hands[0].bets[2];
        assert_eq!((p1.outcome, p1.net_amount, p1.stake), (Outcome::Win, None, Some(5)));
        assert_eq!(p1.citations[0].to_string(), "fortune3cp-2025 Art. 16(3)(1)");
        assert_eq!(unknown.hands[1].bets[2].net_amount, Some(-5), "a loss is the stake whatever the pool");
        // Seat 2: 9H 8H 7H JS 10S is a straight, not a flush: it loses.
        r.progressive_pool = Some(ProgressivePool {
            pool: 100_000,
            reset_to: 10_000,
            fixed: BTreeMap::from([(Category5::RoyalFlush, 50_000)]),
        });
        let s = settle(&rs, &r).unwrap();
        let p1 = &s.hands[0].bets[2];
        assert_eq!((p1.outcome, p1.net_amount), (Outcome::Win, Some(100_000)));
        assert_eq!(s.hands[1].bets[2].outcome, Outcome::Lose);
        assert_eq!(s.progressive_pool_after, Some(10_000));
    }

    #[test]
    fn stud_royals_share_the_progressive_and_a_fold_is_paid_only_by_option() {
        let mut r = stud_progressive_round("AS KS QS JS 10S", "AH KH QH JH 10H");
        let pool = |pool, royal_fixed| ProgressivePool {
            pool,
            reset_to: 10_000,
            fixed: BTreeMap::from([(Category5::RoyalFlush, royal_fixed)]),
        };
        let royal_pay = |rs: &Ruleset, r: &Round| {
            let s = settle(rs, r).unwrap();
            let paid: Vec<Option<Money>> = s.hands.iter().map(|h| h.bets[2].net_amount).collect();
            assert!(s
                .hands
                .iter()
                .all(|h| h.bets[2].citations.iter().any(|c| c.to_string() == "stud-2004 Art. 10(5)")));
            (paid, s.progressive_pool_after)
        };
        // Art. 10(5) "repartem entre si o prémio do «jackpot» ou a soma fixa, qual delas seja o
        // maior": the larger of pool and fixed sum, shared (C-5 default); no longer the whole pool
        // to the first royal and the fixed sum to the second
        r.progressive_pool = Some(pool(100_001, 30_000));
        assert_eq!(royal_pay(&Ruleset::new(RulesetId::Stud2004), &r), (vec![Some(50_000), Some(50_000)], Some(10_000)));
        r.progressive_pool = Some(pool(40_000, 30_000));
        assert_eq!(royal_pay(&Ruleset::new(RulesetId::Stud2004), &r), (vec![Some(20_000), Some(20_000)], Some(10_000)));
        // `larger_of_split`: each the larger of its share of the pool and the fixed sum
        let larger_of_split = stud(r#"{"royal_share": "larger_of_split"}"#);
        assert_eq!(royal_pay(&larger_of_split, &r), (vec![Some(30_000), Some(30_000)], Some(10_000)));
        r.progressive_pool = Some(pool(100_000, 30_000));
        assert_eq!(royal_pay(&larger_of_split, &r), (vec![Some(50_000), Some(50_000)], Some(10_000)));

        // A folded royal: forfeited by default (Art. 6(7), C-4), paid with `still_paid`.
        let folded_bets = [(BetKind::Ante, 10), (BetKind::Progressive, 5)];
        let mut folded = round(vec![hand(2, "AS KS QS JS 10S", &folded_bets, Decision::Folded)], "2C 4D 6C 8D 9C");
        folded.progressive_pool = Some(pool(100_000, 30_000));
        let s = settle(&Ruleset::new(RulesetId::Stud2004), &folded).unwrap();
        assert_eq!((s.hands[0].bets[1].outcome, s.progressive_pool_after), (Outcome::Lose, Some(100_000)));
        let s = settle(&stud(r#"{"stud_progressive_on_fold": "still_paid"}"#), &folded).unwrap();
        assert_eq!(s.hands[0].bets[1].net_amount, Some(100_000));
        assert_eq!(s.hands[0].bets[0].net_amount, Some(-10), "the Ante is still lost (Art. 6(7))");
        assert!(stud(r#"{"royal_share": "larger_of_split"}"#).options.validate_for(RulesetId::Qpoker2004).is_err());
    }

    #[test]
    fn stud_house_maximum_caps_each_hand_or_the_round_s_total() {
        let bets = [(BetKind::Ante, 10), (BetKind::Raise, 20)];
        let mut r = round(
            vec![
                hand(1, "3S 3H 3D 3C 2S", &bets, Decision::Played), // quads: 20 × 20 = 400
                hand(3, "KH QH JH 10H 9H", &bets, Decision::Played), // straight flush: 50 × 20 = 1,000
                hand(5, "2C 2D 5C 7S JD", &bets, Decision::Played), // a pair: 20, never capped
            ],
            "AS KD 4C 6S 8H",
        );
        r.max_payout = Some(500);
        let raises = |rs: &Ruleset, r: &Round| -> Vec<Option<Money>> {
            settle(rs, r).unwrap().hands.iter().map(|h| h.bets[1].net_amount).collect()
        };
        // C-1b default `per_hand`: each hand's quads-or-better Raise winnings at most 500
        assert_eq!(raises(&Ruleset::new(RulesetId::Stud2004), &r), [Some(400), Some(500), Some(20)]);
        // `per_round_total`: 1,400 over the maximum, shared pro rata (400 × 500 / 1,400 = 142)
        let total = stud(r#"{"stud_max_payout_scope": "per_round_total"}"#);
        assert_eq!(raises(&total, &r), [Some(142), Some(357), Some(20)]);
        // under the maximum in total: paid in full
        r.max_payout = Some(1_400);
        assert_eq!(raises(&total, &r), [Some(400), Some(1_000), Some(20)]);
    }

    #[test]
    fn progressive_percentages_and_pool_debits_follow_the_options() {
        let mut r = stud_progressive_round("AS KS QS JS 10S", "9H 8H 7H 6H 5H");
        let pool = |sf_fixed| ProgressivePool {
            pool: 100_000,
            reset_to: 10_000,
            fixed: BTreeMap::from([(Category5::RoyalFlush, 50_000), (Category5::StraightFlush, sf_fixed)]),
        };
        // (royal, straight flush, pool after): the straight flush is paid first (Art. 10(6)–(7))
        let paid = |rs: &Ruleset, r: &Round| {
            let s = settle(rs, r).unwrap();
            (s.hands[0].bets[2].net_amount, s.hands[1].bets[2].net_amount, s.progressive_pool_after)
        };
        let default = Ruleset::new(RulesetId::Stud2004);
        r.progressive_pool = Some(pool(5_000));
        // A-13 default `sequential`: the royal's 100 % is of what the straight flush's 10 % left
        assert_eq!(paid(&default, &r), (Some(90_000), Some(10_000), Some(10_000)));
        // `round_start`: both percentages of the pool the round began with
        assert_eq!(
            paid(&stud(r#"{"progressive_percent_base": "round_start"}"#), &r),
            (Some(100_000), Some(10_000), Some(10_000))
        );
        // A straight flush paid its fixed sum (20,000 > 10 %): by default it reduces the pool
        // (`all_awards`); with `percentage_awards_only` the house pays it and the royal gets it all
        r.progressive_pool = Some(pool(20_000));
        assert_eq!(paid(&default, &r), (Some(80_000), Some(20_000), Some(10_000)));
        let house_pays_fixed = stud(r#"{"progressive_pool_debit": "percentage_awards_only"}"#);
        assert_eq!(paid(&house_pays_fixed, &r), (Some(100_000), Some(20_000), Some(10_000)));
        // alone, a fixed award leaves the pool whole under `percentage_awards_only`
        r.hands.remove(0);
        assert_eq!(settle(&house_pays_fixed, &r).unwrap().progressive_pool_after, Some(100_000));
        assert_eq!(settle(&default, &r).unwrap().progressive_pool_after, Some(80_000));
        assert!(house_pays_fixed.options.validate_for(RulesetId::Fortune3cp2025).is_ok());
        assert!(house_pays_fixed.options.validate_for(RulesetId::Qpoker2004).is_err());
    }

    #[test]
    fn sangong_commission_on_players_and_banker() {
        let rs = Ruleset::new(RulesetId::Sangong1996);
        let r = round(
            vec![
                hand(1, "KS QH 9D", &[(BetKind::Bet, 100)], Decision::Played), // 9 with two figures beats banker
                hand(2, "AD 9C 10C", &[(BetKind::Bet, 100)], Decision::Played), // 0 no figure vs banker's 0 no figure: banker (Art. 8)
                hand(4, "2S 3H 5D", &[(BetKind::Bet, 300)], Decision::Played),  // 0 no figure as well
            ],
            "4S 6H 10D",
        );
        let s = settle(&rs, &r).unwrap();
        assert_eq!(nets(&s.hands[0]), [(BetKind::Bet, 0.95, Some(95))]);
        assert_eq!(nets(&s.hands[1]), [(BetKind::Bet, -1.0, Some(-100))]);
        assert_eq!(s.hands[1].bets[0].citations[0].to_string(), "sangong-1996 Art. 8");
        // Banker: +100 +300 −100 = +300 gross, 5% of net win → 285.
        assert_eq!(s.banker_net, Some(285));
    }

    /// sangong-1996 Art. 5(3): the banker's gain or loss never exceeds the capital. The banker
    /// sits at place 5; four dice of 11 give place 3 the first cards (Art. 2(2), the banker
    /// counting as 1), so by default settlement runs 3, 2, 1, 8, 7, 6, 4 (E-6).
    #[test]
    fn sangong_settlement_stays_within_the_banker_s_capital_in_the_option_s_order() {
        let hands = || {
            vec![
                hand(3, "KS QH 9D", &[(BetKind::Bet, 100)], Decision::Played), // 9, two figures: wins
                hand(2, "KH QD 8C", &[(BetKind::Bet, 100)], Decision::Played), // 8, two figures: wins
                hand(8, "AD 9C 10C", &[(BetKind::Bet, 100)], Decision::Played), // 0 against 0: Art. 8
                hand(4, "2S 3H 5D", &[(BetKind::Bet, 50)], Decision::Played),  // 0 against 0: Art. 8
            ]
        };
        let deal = SanGongDeal { banker: Seat(5), dice_total: 11 };
        let with_capital =
            |capital: Money| Round { sangong_bank: Some(SanGongBank { deal, capital }), ..round(hands(), "4S 6H 10D") };
        let amounts = |s: &Settlement| -> Vec<Option<Money>> { s.hands.iter().map(|h| h.bets[0].net_amount).collect() };
        let rs = Ruleset::new(RulesetId::Sangong1996);
        // Without a capital every bet is settled in full.
        let full = settle(&rs, &round(hands(), "4S 6H 10D")).unwrap();
        assert_eq!(amounts(&full), [Some(95), Some(95), Some(-100), Some(-50)]);
        // Capital 150: place 3 is paid 100 and place 2 the 50 left (0.95 of it to the player);
        // the losers at 8 and 4 are then collected against the running bank.
        let s = settle(&rs, &with_capital(150)).unwrap();
        assert_eq!(amounts(&s), [Some(95), Some(48), Some(-100), Some(-50)]);
        assert_eq!(s.hands[1].bets[0].citations.last().unwrap().to_string(), "sangong-1996 Art. 5(3)");
        assert_eq!(s.hands[0].bets[0].citations.len(), 2, "a bet paid in full cites no cap");
        assert_eq!(s.banker_net, Some(0));
        // From the banker's neighbour (4, 3, 2, …) place 4's loss comes first and covers both.
        let rs_next = Ruleset::with_options(
            RulesetId::Sangong1996,
            serde_json::from_str(r#"{"sangong_settlement_start": "banker_next_place"}"#).unwrap(),
        )
        .unwrap();
        assert_eq!(amounts(&settle(&rs_next, &with_capital(150)).unwrap()), amounts(&full));
        // The banker's gain stops at the capital too: only 120 of the 150 lost are collected.
        let losers = Round {
            hands: hands().split_off(2),
            sangong_bank: Some(SanGongBank { deal, capital: 120 }),
            ..round(vec![], "4S 6H 10D")
        };
        let s = settle(&rs, &losers).unwrap();
        assert_eq!(amounts(&s), [Some(-100), Some(-20)], "place 8, then place 4");
        assert_eq!(s.banker_net, Some(114), "5 % of the net win of 120");
        // A capital of nothing settles nothing; a player at the banker's place is an error.
        assert_eq!(amounts(&settle(&rs, &with_capital(0)).unwrap()), [Some(0), Some(0), Some(0), Some(0)]);
        let mut at_banker = with_capital(150);
        at_banker.hands[0].seat = Seat(5);
        assert!(matches!(settle(&rs, &at_banker), Err(RulesError::BadRound(m)) if m.contains("banker")));
    }

    /// fortune3cp-2025 Art. 4(3): "São consideradas inválidas quaisquer apostas efectuadas por
    /// pessoas que não efectuaram as apostas previstas no n.º 1": an additional bet without the
    /// basic bet it needs is void (A-9); under `basic_bets_independent = false` (4(1)) a basic
    /// bet alone is no bet either.
    #[test]
    fn fortune2025_additional_bets_need_the_basic_bets_the_table_requires() {
        let f25 =
            |json: &str| Ruleset::with_options(RulesetId::Fortune3cp2025, serde_json::from_str(json).unwrap()).unwrap();
        let r = round(
            vec![
                // Pair Plus and a Six Card Bonus; a pair of kings with the dealer's sixes is a full house.
                hand(1, "KS KD 2C", &[(BetKind::PairPlus, 10), (BetKind::SixCardBonus, 5)], Decision::Played),
                // a Six Card Bonus alone
                hand(2, "KH 9D 5C", &[(BetKind::SixCardBonus, 5)], Decision::Played),
                // Ante, Play and a Six Card Bonus
                hand(
                    3,
                    "AS AD 7C",
                    &[(BetKind::Ante, 10), (BetKind::Play, 10), (BetKind::SixCardBonus, 5)],
                    Decision::Played,
                ),
            ],
            "6S 6H 6D",
        );
        let outcomes = |rs: &Ruleset| -> Vec<Vec<(BetKind, Outcome, String)>> {
            settle(rs, &r)
                .unwrap()
                .hands
                .iter()
                .map(|h| h.bets.iter().map(|b| (b.bet, b.outcome, b.citations[0].to_string())).collect())
                .collect()
        };
        let art = |a: &str| format!("fortune3cp-2025 Art. {a}");
        let default = outcomes(&Ruleset::new(RulesetId::Fortune3cp2025));
        assert_eq!(default[0][1], (BetKind::SixCardBonus, Outcome::Win, art("16(2)(4)")), "KK + 666: a full house");
        assert_eq!(default[1], [(BetKind::SixCardBonus, Outcome::Void, art("4(3)"))]);
        assert_eq!(default[2][2].1, Outcome::Win, "AA + 666: a full house");
        let ante = outcomes(&f25(r#"{"additional_bet_requires": "ante"}"#));
        assert_eq!(ante[0][1], (BetKind::SixCardBonus, Outcome::Void, art("4(3)")));
        assert_eq!(ante[0][0].1, Outcome::Win, "the Pair Plus stands (a pair, 16(1)(5))");
        assert_eq!(ante[2][2].1, Outcome::Win);
        let both = outcomes(&f25(r#"{"additional_bet_requires": "ante_and_pair_plus"}"#));
        assert_eq!(both[2][2], (BetKind::SixCardBonus, Outcome::Void, art("4(3)")));
        let together = outcomes(&f25(r#"{"basic_bets_independent": false}"#));
        assert!(together[0].iter().all(|b| b.1 == Outcome::Void), "{:?}", together[0]);
        assert_eq!(together[0][0].2, art("4(1)"));
        assert!(together[2].iter().all(|b| b.1 == Outcome::Void), "{:?}", together[2]);
        assert!(Ruleset::with_options(
            RulesetId::Stud2004,
            serde_json::from_str(r#"{"basic_bets_independent": true}"#).unwrap()
        )
        .is_err());
    }
}
