//! House edges of the three-card games (fortune3cp-2025, fortune3cp-2008,
//! qpoker-2004) and San Gong, by full enumeration, settled with `rules::payout`.
use serde_json::{json, Map, Value};

use crate::rules::card::Card;
use crate::rules::deal::Seat;
use crate::rules::eval3::{Category3, HandRank3};
use crate::rules::payout;
use crate::rules::ruleset::{BetKind, GameKind, Ruleset, RulesetId};
use crate::rules::settle::{self, Decision, HandRound, Round, Wager};

use super::three::{all_hands3, describe3, Class, ClassCounts, HandTable, DEALER_HANDS3, HANDS3};
use super::{BetOdds, OddsError};

/// Wizard of Odds, "Three Card Poker": ante and play with the 5-4-1 ante bonus,
/// Q-high qualifier, ties push, Q-6-4 strategy.
pub(crate) const PUBLISHED_3CP_ANTE: f64 = 0.0337;

/// The enumerated hands of a three-card ruleset with their strengths.
pub(crate) struct ThreeCardEnumeration {
    /// All 22,100 hands.
    pub hands: Vec<[Card; 3]>,
    /// Their strengths under the ruleset's rules.
    pub ranks: Vec<HandRank3>,
    /// What each meets among the 18,424 dealer hands.
    pub classes: Vec<ClassCounts>,
}

impl ThreeCardEnumeration {
    /// Enumerates every player hand against every dealer hand (fortune3cp, qpoker).
    pub(crate) fn new(rs: &Ruleset, threads: usize) -> ThreeCardEnumeration {
        let rules = rs.three_card_rules();
        let hands = all_hands3();
        let ranks: Vec<HandRank3> = hands.iter().map(|&h| rules.eval(h)).collect();
        let table = HandTable::new(&hands, |h| {
            let r = rules.eval(*h);
            (r.value(), payout::dealer_qualifies3(r))
        });
        let classes = table.classify_all(threads);
        ThreeCardEnumeration { hands, ranks, classes }
    }
}

/// The result of optimising the play/fold decision of every player hand.
pub(crate) struct Decisions {
    /// Σ over player hands of max(EV play, EV fold), each × 18,424 (exact in f64).
    pub total: f64,
    /// Whether each player hand plays.
    pub plays: Vec<bool>,
    /// Σ play EV and fold EV (× 18,424) per hand, for other strategies.
    pub play_sum: Vec<f64>,
    /// Fold result per hand (× 18,424).
    pub fold_sum: Vec<f64>,
}

impl Decisions {
    /// Optimises: play when its exact expectation is strictly better than folding.
    fn new(
        e: &ThreeCardEnumeration,
        play_net: impl Fn(usize, [Card; 3]) -> f64,
        fold_net: impl Fn(usize) -> f64,
    ) -> Decisions {
        let n = e.hands.len();
        let (mut plays, mut play_sum, mut fold_sum) =
            (Vec::with_capacity(n), Vec::with_capacity(n), Vec::with_capacity(n));
        let mut total = 0.0;
        for (i, cc) in e.classes.iter().enumerate() {
            let mut p = 0.0;
            for k in Class::ALL {
                if let Some(rep) = cc.reps[k as usize] {
                    p += cc.counts[k as usize] as f64 * play_net(i, e.hands[rep as usize]);
                }
            }
            let f = fold_net(i) * DEALER_HANDS3 as f64;
            plays.push(p > f);
            total += p.max(f);
            play_sum.push(p);
            fold_sum.push(f);
        }
        Decisions { total, plays, play_sum, fold_sum }
    }

    /// Total (× 18,424 per hand) of another strategy.
    fn total_with(&self, plays: impl Fn(usize) -> bool) -> f64 {
        (0..self.plays.len()).map(|i| if plays(i) { self.play_sum[i] } else { self.fold_sum[i] }).sum()
    }

    fn play_fraction(&self) -> f64 {
        self.plays.iter().filter(|&&p| p).count() as f64 / self.plays.len() as f64
    }

    /// The strategy in words and as data: the worst hand played, the best folded,
    /// and whether a single threshold on hand strength describes it.
    fn strategy(&self, e: &ThreeCardEnumeration) -> Value {
        let worst_played = (0..e.hands.len()).filter(|&i| self.plays[i]).min_by_key(|&i| e.ranks[i]);
        let best_folded = (0..e.hands.len()).filter(|&i| !self.plays[i]).max_by_key(|&i| e.ranks[i]);
        let threshold = match (worst_played, best_folded) {
            (Some(p), Some(f)) => e.ranks[p] > e.ranks[f],
            _ => true,
        };
        // Rank patterns (strength without suit tie-breaks): hands played, hands folded, an example.
        let mut by_pattern: std::collections::BTreeMap<u32, (u32, u32, usize)> = Default::default();
        for (i, r) in e.ranks.iter().enumerate() {
            let entry = by_pattern.entry(r.value() >> 4).or_insert((0, 0, i));
            if self.plays[i] {
                entry.0 += 1
            } else {
                entry.1 += 1
            }
        }
        let mixed: Vec<String> = by_pattern
            .values()
            .filter(|(p, f, _)| *p > 0 && *f > 0)
            .map(|&(p, f, i)| {
                let top_suits: std::collections::BTreeSet<char> = (0..e.hands.len())
                    .filter(|&j| self.plays[j] && e.ranks[j].value() >> 4 == e.ranks[i].value() >> 4)
                    .filter_map(|j| e.hands[j].iter().max().map(|c| c.suit().letter()))
                    .collect();
                let suits: String = top_suits.into_iter().collect();
                format!(
                    "{}: {p} of {} suit combinations played (highest card's suit in {suits})",
                    describe3(&e.hands[i], e.ranks[i]),
                    p + f
                )
            })
            .collect();
        // The lowest pattern from which every pattern is played.
        let lowest_all_played =
            by_pattern.iter().rev().take_while(|(_, (_, f, _))| *f == 0).last().map(|(_, &(_, _, i))| i);
        let d = |i: Option<usize>| i.map(|i| describe3(&e.hands[i], e.ranks[i]));
        let rule = match (worst_played, threshold, lowest_all_played) {
            (None, _, _) => "always fold".to_string(),
            (Some(p), true, _) => format!("play {} or better, fold the rest", d(Some(p)).unwrap_or_default()),
            (Some(_), false, Some(t)) => {
                format!("play {} or better; {}; fold the rest", d(Some(t)).unwrap_or_default(), mixed.join("; "))
            }
            (Some(_), false, None) => format!("no single threshold: {}", mixed.join("; ")),
        };
        json!({
            "rule": rule,
            "worst_hand_played": d(worst_played),
            "best_hand_folded": d(best_folded),
            "single_threshold": threshold,
            "suit_dependent_decisions": mixed,
            "play_probability": self.play_fraction(),
        })
    }
}

/// Whether a three-card hand is Q-6-4 or better by ranks (the published Three Card Poker rule).
fn q64_or_better(cards: &[Card; 3], rank: HandRank3) -> bool {
    if rank.category() > Category3::HighCard {
        return true;
    }
    let mut r: Vec<u8> = cards.iter().map(|c| c.rank().index()).collect();
    r.sort_unstable_by(|a, b| b.cmp(a));
    // Queen = 10, six = 4, four = 2.
    r >= vec![10, 4, 2]
}

fn edge_entry(bet: &str, house_edge: f64, details: Map<String, Value>) -> BetOdds {
    BetOdds::exact(bet, house_edge, details)
}

fn obj(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// fortune3cp Ante (+ Play): house edge per unit of Ante with the optimal decision.
pub(crate) fn fortune_ante(rs: &Ruleset, e: &ThreeCardEnumeration) -> BetOdds {
    let d = Decisions::new(
        e,
        |i, dealer| {
            let r = payout::fortune_ante_play(rs, e.ranks[i], rs.three_card_rules().eval(dealer), true);
            r.ante.net + r.play.map_or(0.0, |p| p.net)
        },
        |i| payout::fortune_ante_play(rs, e.ranks[i], e.ranks[i], false).ante.net,
    );
    let denom = HANDS3 as f64 * DEALER_HANDS3 as f64;
    let edge = -d.total / denom;
    let q64 = -d.total_with(|i| q64_or_better(&e.hands[i], e.ranks[i])) / denom;
    let avg_wager = 1.0 + d.play_fraction();
    let mut details = obj(json!({
        "strategy": d.strategy(e),
        "average_wager": avg_wager,
        "element_of_risk": edge / avg_wager,
        "house_edge_with_q64_rule": q64,
        "exact_expected_net_per_ante": format!("{} / {}", d.total, denom),
        "includes": "Ante and Play settled together, ante bonus included (fortune_ante_play); per unit of Ante",
    }));
    if rs.id == RulesetId::Fortune3cp2025 {
        details.insert(
            "published".into(),
            json!({
                "house_edge": PUBLISHED_3CP_ANTE,
                "source": "Wizard of Odds, Three Card Poker: ante & play, ante bonus 5-4-1 (straight flush, three of a kind, straight), dealer qualifies with Q-high, ties push, Q-6-4 strategy",
            }),
        );
    }
    edge_entry(BetKind::Ante.as_str(), edge, details)
}

/// qpoker-2004 bet against the dealer: house edge per unit bet, folding loses half.
pub(crate) fn qpoker_bet(rs: &Ruleset, e: &ThreeCardEnumeration) -> BetOdds {
    let rules = rs.three_card_rules();
    let d = Decisions::new(
        e,
        |i, dealer| payout::qpoker_bet(rs, e.ranks[i], rules.eval(dealer), true).net,
        |i| payout::qpoker_bet(rs, e.ranks[i], e.ranks[i], false).net,
    );
    let denom = HANDS3 as f64 * DEALER_HANDS3 as f64;
    let edge = -d.total / denom;
    let q64 = -d.total_with(|i| q64_or_better(&e.hands[i], e.ranks[i])) / denom;
    let details = obj(json!({
        "strategy": d.strategy(e),
        "house_edge_with_q64_rule": q64,
        "exact_expected_net_per_bet": format!("{} / {}", d.total, denom),
        "includes": "one bet; declining loses half (Art. 9(3)); per unit of the bet",
    }));
    edge_entry(BetKind::Bet.as_str(), edge, details)
}

/// Pair Plus: exact from the 22,100 hands' categories.
pub(crate) fn pair_plus(rs: &Ruleset, e: &ThreeCardEnumeration) -> BetOdds {
    let mut counts = [0u32; 6];
    let mut reps = [None; 6];
    for (i, r) in e.ranks.iter().enumerate() {
        let c = r.category() as usize;
        counts[c] += 1;
        reps[c].get_or_insert(i);
    }
    let mut ev = 0.0;
    let mut cats = Map::new();
    for cat in Category3::ALL {
        let (n, rep) = (counts[cat as usize], reps[cat as usize]);
        let net = rep.map_or(0.0, |i| payout::pair_plus(rs, e.ranks[i]).net);
        ev += n as f64 * net;
        cats.insert(
            cat_name3(cat).into(),
            json!({"combinations": n, "probability": n as f64 / HANDS3 as f64, "pays": net}),
        );
    }
    let mut details = obj(json!({ "categories": cats, "exact_expected_net": format!("{ev} / {HANDS3}") }));
    if rs.id == RulesetId::Qpoker2004 {
        details.insert(
            "published".into(),
            json!({"house_edge": 0.0232, "source": "Wizard of Odds, Three Card Poker, Pair Plus pay table 40-30-6-4-1 (house edge 2.32%)"}),
        );
    }
    edge_entry(BetKind::PairPlus.as_str(), -ev / HANDS3 as f64, details)
}

fn cat_name3(c: Category3) -> &'static str {
    match c {
        Category3::HighCard => "high_card",
        Category3::Pair => "pair",
        Category3::Flush => "flush",
        Category3::Straight => "straight",
        Category3::Trips => "three_of_a_kind",
        Category3::StraightFlush => "straight_flush",
    }
}

/// San Gong: the player's `bet` and the `banker`'s side, exact.
pub(crate) fn sangong(rs: &Ruleset, threads: usize) -> Result<Vec<BetOdds>, OddsError> {
    let hands = all_hands3();
    // Compared under the table's rule (`SanGongRule::key`). The banker's Art. 8 advantage (both
    // 0 with no figure) is not in the key: the representative settled by `payout::sangong_bet`
    // applies it, and every class stays uniform because a hand of 0 with no figure is "higher"
    // only than another such hand, under every rule (a hand holding a figure has a higher card
    // and at least its points).
    let rule = rs.options.sangong_rule();
    let table = HandTable::new(&hands, |h| (rule.key(*h), true));
    let classes = table.classify_all(threads);
    let (mut player, mut banker) = (0.0f64, 0.0f64);
    let mut outcome = [0u64; 3]; // player wins, banker wins, tie
    const STAKE: i64 = 10_000;
    for (i, cc) in classes.iter().enumerate() {
        for k in Class::ALL {
            let Some(rep) = cc.reps[k as usize] else { continue };
            let n = cc.counts[k as usize] as f64;
            let o = payout::sangong_bet(rs, hands[rep as usize], hands[i]);
            player += n * o.net;
            let idx = match o.outcome {
                payout::Outcome::Win => 0,
                payout::Outcome::Lose => 1,
                _ => 2,
            };
            outcome[idx] += cc.counts[k as usize] as u64;
            // The banker's side through the round settlement (commission option applied).
            let round = Round {
                hands: vec![HandRound {
                    seat: Seat(2),
                    cards: hands[i].to_vec(),
                    wagers: vec![Wager { bet: BetKind::Bet, stake: Some(STAKE) }],
                    decision: Decision::Played,
                }],
                dealer: hands[rep as usize].to_vec(),
                community: vec![],
                irregularities: vec![],
                progressive_pool: None,
                max_payout: None,
                sangong_bank: None,
            };
            let s = settle::settle(rs, &round)?;
            let net =
                s.banker_net.ok_or_else(|| OddsError::Internal("San Gong settlement gave no banker result".into()))?;
            banker += n * net as f64 / STAKE as f64;
        }
    }
    let denom = HANDS3 as f64 * DEALER_HANDS3 as f64;
    let probs = json!({
        "player_wins": outcome[0] as f64 / denom,
        "banker_wins": outcome[1] as f64 / denom,
        "tie": outcome[2] as f64 / denom,
    });
    let bet = edge_entry(
        BetKind::Bet.as_str(),
        -player / denom,
        obj(json!({
            "outcome_probabilities": probs,
            "includes": "a player's bet against the banker: wins pay 1 to 1 less 5% commission (Art. 9); the banker wins 0-with-no-figure against 0-with-no-figure (Art. 8)",
        })),
    );
    let banker = edge_entry(
        "banker",
        -banker / denom,
        obj(json!({
            "outcome_probabilities": probs,
            "banker_commission": rs.options.sangong_banker_commission(),
            "includes": "the banker's result per unit of one player bet faced, commission as settled by the engine for a round with that single bet (with net_win, the commission on a round with several bets is on the net, so the banker's real edge is a little better than this)",
        })),
    );
    debug_assert_eq!(rs.kind, GameKind::SanGong);
    Ok(vec![bet, banker])
}
