//! Five-card bets: Six Card Bonus and Progressive (exact category counts).
use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::rules::card::Card;
use crate::rules::deal::Seat;
use crate::rules::eval5::{Category5, Evaluator5};
use crate::rules::payout;
use crate::rules::ruleset::{BetKind, GameKind, Ruleset};
use crate::rules::settle::{self, Decision, HandRound, ProgressivePool, Round, Wager};

use super::par::map_tasks;
use super::{BetOdds, OddsError};

/// C(52, 5).
pub(crate) const HANDS5: u64 = 2_598_960;
/// C(52, 6).
pub(crate) const HANDS6: u64 = 20_358_520;

fn card(i: u8) -> Card {
    Card::from_index(i).expect("index < 52")
}

/// Category counts of all C(52, 5) five-card hands, with one example of each.
pub(crate) fn five_card_categories() -> ([u64; 10], [Option<[u8; 5]>; 10]) {
    let ev = Evaluator5::get();
    let mut counts = [0u64; 10];
    let mut reps = [None; 10];
    for a in 0..52u8 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                for d in c + 1..52 {
                    for e in d + 1..52 {
                        let cat = ev.eval_indices([a, b, c, d, e]).category() as usize;
                        counts[cat] += 1;
                        reps[cat].get_or_insert([a, b, c, d, e]);
                    }
                }
            }
        }
    }
    (counts, reps)
}

/// Category counts of the best five of all C(52, 6) six-card sets, with one
/// example each. Every split of a six-card set into player 3 + dealer 3 has the
/// same best five, so these are the exact Six Card Bonus frequencies.
pub(crate) fn six_card_categories(threads: usize) -> ([u64; 10], [Option<[u8; 6]>; 10]) {
    let ev = Evaluator5::get();
    // One task per pair of lowest cards (a, b): 1,326 tasks of uneven size.
    let pairs: Vec<(u8, u8)> =
        (0..52u8).flat_map(|a| (a + 1..52).map(move |b| (a, b))).filter(|&(_, b)| b <= 47).collect();
    let parts = map_tasks(pairs.len(), threads, |t| {
        let (a, b) = pairs[t];
        let mut counts = [0u64; 10];
        let mut reps: [Option<[u8; 6]>; 10] = [None; 10];
        for c in b + 1..52 {
            for d in c + 1..52 {
                for e in d + 1..52 {
                    for f in e + 1..52 {
                        let best = ev
                            .eval_indices([b, c, d, e, f])
                            .max(ev.eval_indices([a, c, d, e, f]))
                            .max(ev.eval_indices([a, b, d, e, f]))
                            .max(ev.eval_indices([a, b, c, e, f]))
                            .max(ev.eval_indices([a, b, c, d, f]))
                            .max(ev.eval_indices([a, b, c, d, e]));
                        let cat = best.category() as usize;
                        counts[cat] += 1;
                        reps[cat].get_or_insert([a, b, c, d, e, f]);
                    }
                }
            }
        }
        (counts, reps)
    });
    let mut counts = [0u64; 10];
    let mut reps = [None; 10];
    for (c, r) in parts {
        for k in 0..10 {
            counts[k] += c[k];
            if reps[k].is_none() {
                reps[k] = r[k];
            }
        }
    }
    (counts, reps)
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

fn cat_key(c: Category5) -> String {
    serde_json::to_value(c).ok().and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
}

/// Six Card Bonus (fortune3cp-2025 Art. 14, 16(2)): exact over C(52, 6).
pub(crate) fn six_card_bonus(rs: &Ruleset, threads: usize) -> Result<BetOdds, OddsError> {
    let (counts, reps) = six_card_categories(threads);
    let mut ev = 0.0;
    let mut cats = Map::new();
    for cat in Category5::ALL.iter().rev() {
        let (n, rep) = (counts[*cat as usize], reps[*cat as usize]);
        let Some(rep) = rep else { continue };
        let six = rep.map(card);
        let (outcome, seen) = payout::six_card_bonus(rs, [six[0], six[1], six[2]], [six[3], six[4], six[5]]);
        if seen != *cat {
            return Err(OddsError::Internal(format!(
                "six-card set {six:?}: enumeration says {cat:?}, payout says {seen:?}"
            )));
        }
        ev += n as f64 * outcome.net;
        cats.insert(
            cat_key(*cat),
            json!({"combinations": n, "probability": n as f64 / HANDS6 as f64, "pays": outcome.net}),
        );
    }
    let details = obj(json!({
        "categories": cats,
        "exact_expected_net": format!("{ev} / {HANDS6}"),
        "includes": "best five of the player's three and the dealer's three cards; settled whatever the Ante decision (Art. 12(4))",
    }));
    Ok(BetOdds::exact(BetKind::SixCardBonus.as_str(), -ev / HANDS6 as f64, details))
}

/// A reference Progressive award table, per 1 unit bet, for illustration: the
/// regulations give no amounts (fortune3cp-2025 Art. 16(3), stud-2004 Art. 10).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReferenceAwards {
    /// The jackpot pool at the time of the win, in units of the bet.
    pub pool: f64,
    /// Fixed awards per category, in units of the bet (royal and straight flush:
    /// the floor under their pool share).
    pub fixed: BTreeMap<Category5, f64>,
}

impl Default for ReferenceAwards {
    /// Pool 10,000 units; fixed: royal 0 and straight flush 0 (so the pool share
    /// decides: 10,000 and 1,000), four of a kind 500, full house 100, flush 50 —
    /// the shape of a common Caribbean Stud progressive table on a $1 bet.
    fn default() -> ReferenceAwards {
        ReferenceAwards {
            pool: 10_000.0,
            fixed: BTreeMap::from([
                (Category5::RoyalFlush, 0.0),
                (Category5::StraightFlush, 0.0),
                (Category5::Quads, 500.0),
                (Category5::FullHouse, 100.0),
                (Category5::Flush, 50.0),
            ]),
        }
    }
}

/// The award of `category` under `awards`, computed by the engine's round
/// settlement (`settle::settle` with a Progressive pool), per unit staked.
fn award_by_engine(rs: &Ruleset, awards: &ReferenceAwards, hand: [u8; 5]) -> Result<f64, OddsError> {
    // Money in minor units: 1 unit = 10,000 minor units.
    const UNIT: f64 = 10_000.0;
    let stake = UNIT as i64;
    let cards = hand.map(card);
    let used: u64 = hand.iter().fold(0, |m, &c| m | 1 << c);
    let others: Vec<Card> = (0..52u8).filter(|c| used >> c & 1 == 0).map(card).collect();
    let pool = ProgressivePool {
        pool: (awards.pool * UNIT).round() as i64,
        reset_to: 0,
        fixed: awards.fixed.iter().map(|(&c, &a)| (c, (a * UNIT).round() as i64)).collect(),
    };
    let wagers =
        vec![Wager { bet: BetKind::Ante, stake: Some(stake) }, Wager { bet: BetKind::Progressive, stake: Some(stake) }];
    let (player, dealer, community) = match rs.kind {
        GameKind::Stud => (cards.to_vec(), others[..5].to_vec(), vec![]),
        _ => (cards[..3].to_vec(), others[..3].to_vec(), cards[3..].to_vec()),
    };
    let round = Round {
        hands: vec![HandRound { seat: Seat(1), cards: player, wagers, decision: Decision::Played }],
        dealer,
        community,
        irregularities: vec![],
        progressive_pool: Some(pool),
        max_payout: None,
        sangong_bank: None,
    };
    let s = settle::settle(rs, &round)?;
    let bet = s.hands.first().and_then(|h| h.bets.iter().find(|b| b.bet == BetKind::Progressive));
    let bet = bet.ok_or_else(|| OddsError::Internal("no Progressive settlement".into()))?;
    match bet.outcome {
        payout::Outcome::Win => Ok(bet.net_amount.unwrap_or(0) as f64 / UNIT),
        _ => Ok(bet.net_multiple),
    }
}

/// Progressive (fortune3cp-2025: player 3 + community 2; stud-2004: the player's
/// 5): exact category probabilities, edge under the reference awards.
pub(crate) fn progressive(rs: &Ruleset, awards: &ReferenceAwards) -> Result<BetOdds, OddsError> {
    let (counts, reps) = five_card_categories();
    let mut ev = 0.0;
    let mut cats = Map::new();
    let mut win_prob = 0.0;
    let (mut pool_coeff, mut fixed_part) = (0.0, 0.0);
    for cat in Category5::ALL.iter().rev() {
        let (n, Some(rep)) = (counts[*cat as usize], reps[*cat as usize]) else { continue };
        let p = n as f64 / HANDS5 as f64;
        let net = award_by_engine(rs, awards, rep)?;
        ev += p * net;
        let line = rs.progressive.iter().find(|l| l.category == *cat);
        if let Some(l) = line {
            win_prob += p;
            match l.award {
                crate::rules::ruleset::ProgressiveAward::FixedOrPoolShare { pool_fraction } => {
                    let fixed = awards.fixed.get(cat).copied().unwrap_or(0.0);
                    if fixed >= pool_fraction * awards.pool {
                        fixed_part += p * fixed;
                    } else {
                        pool_coeff += p * pool_fraction;
                    }
                }
                crate::rules::ruleset::ProgressiveAward::Fixed => {
                    fixed_part += p * awards.fixed.get(cat).copied().unwrap_or(0.0)
                }
            }
            cats.insert(cat_key(*cat), json!({"combinations": n, "probability": p, "reference_award": net, "award_rule": l.award, "article": l.citation}));
        }
    }
    // Break-even pool: Σ p·award − (1 − P(win)) = 0 with the pool-share lines at their share.
    let breakeven = if pool_coeff > 0.0 { Some(((1.0 - win_prob) - fixed_part) / pool_coeff) } else { None };
    let details = obj(json!({
        "categories": cats,
        "reference_awards": awards,
        "reference_awards_note": "EXAMPLE amounts per 1 unit bet, not from the regulation (which leaves them to the house); the real edge depends on the casino's fixed amounts and the pool",
        "formula": "house_edge = 1 - sum_c p_c * (1 + A_c), A_c = award of category c per unit bet (royal: max(fixed, pool), straight flush: max(fixed, 10% of pool), others fixed)",
        "win_probability": win_prob,
        "breakeven_pool": breakeven,
        "includes": match rs.kind {
            GameKind::Stud => "the player's own five cards (Art. 10); a folded hand forfeits it (option C-4) but optimal play never folds a flush or better",
            _ => "the player's three cards plus the two community cards (Art. 15(1)): a uniformly random five-card hand",
        },
    }));
    Ok(BetOdds::exact(BetKind::Progressive.as_str(), -ev, details))
}
