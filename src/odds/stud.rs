//! stud-2004 Ante + Raise by a seeded, stratified, Rao–Blackwellised Monte Carlo.
//!
//! One *situation* is the player's five cards and the dealer's up-card. For a
//! situation the expectation of raising is computed **exactly**, over all
//! C(46, 4) = 163,185 completions of the dealer's hand, and compared with folding
//! (−1 Ante): the better of the two is the situation's value, so the raise
//! decision is optimal given everything the player sees. Only the situation is
//! sampled. Situations are stratified by the player's hand (category and top
//! ranks), with exact stratum weights from the 2,598,960 five-card hands; a pilot
//! round sizes each stratum (Neyman allocation), and the 95% interval comes from
//! the stratified standard error.
//!
//! The completion loop classifies each dealer hand as not qualified / player
//! higher / player lower / equal, keeping one representative of each; the
//! representative is settled by `payout::stud_ante_raise`, so the figures come
//! from the engine's own settlement (tests check the classes against it).
use std::cmp::Ordering;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::rng::Rng;
use crate::rules::card::{Card, Rank, Suit};
use crate::rules::eval5::{compare_stud, Category5, Evaluator5};
use crate::rules::payout;
use crate::rules::ruleset::{BetKind, Qualifier, Ruleset};

use super::par::map_tasks;
use super::{BetOdds, OddsError};

/// Dealer completions of one situation, C(46, 4).
pub(crate) const COMPLETIONS: u32 = 163_185;

/// Samples from which the strata are also split by the up-card's rank.
pub(crate) const FINE_STRATA_MIN_SAMPLES: u64 = 30_000;

/// Wizard of Odds, "Caribbean Stud Poker": optimal strategy, A-K qualifier, ties push.
pub(crate) const PUBLISHED_STUD: f64 = 0.05224;

fn card(i: u8) -> Card {
    Card::from_index(i).expect("index < 52")
}

/// The dealer hands of one situation grouped by how they settle the Raise.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct RaiseCounts {
    /// Dealer does not qualify.
    pub unqualified: u32,
    /// Qualified, player higher by strength.
    pub win: u32,
    /// Qualified, player lower by strength.
    pub lose: u32,
    /// Qualified, equal strength, the player's suit higher (Art. 8).
    pub tie_win: u32,
    /// Qualified, equal strength, the dealer's suit higher.
    pub tie_lose: u32,
    /// Qualified and indistinguishable (impossible with one deck).
    pub tie: u32,
    /// Representative dealer hands: unqualified, player wins, player loses, tie.
    pub reps: [Option<[u8; 5]>; 4],
}

/// The lowest qualifying strength under "A-K or better": A-K-4-3-2 offsuit.
fn ak_min() -> u16 {
    let c = |r: Rank, s: Suit| Card::new(r, s);
    Evaluator5::get()
        .eval([
            c(Rank::Ace, Suit::Spades),
            c(Rank::King, Suit::Hearts),
            c(Rank::Four, Suit::Spades),
            c(Rank::Three, Suit::Spades),
            c(Rank::Two, Suit::Spades),
        ])
        .strength()
}

/// Fast qualification test equivalent to `payout::dealer_qualifies_stud`
/// (checked on every five-card hand in the tests).
#[inline]
pub(crate) fn qualifies_fast(qualifier: Qualifier, strength: u16, ak_min: u16, rank_bits: u16) -> bool {
    const AK: u16 = 1 << 12 | 1 << 11;
    match qualifier {
        Qualifier::HoldsAceAndKing => rank_bits & AK == AK,
        _ => strength >= ak_min,
    }
}

/// Enumerates the 163,185 dealer completions of one situation.
pub(crate) fn raise_counts(qualifier: Qualifier, player: [u8; 5], up: u8) -> RaiseCounts {
    let ev = Evaluator5::get();
    let akm = ak_min();
    let ps = ev.eval_indices(player).strength();
    let used = player.iter().fold(1u64 << up, |m, &c| m | 1 << c);
    let rest: Vec<u8> = (0..52u8).filter(|c| used >> c & 1 == 0).collect();
    debug_assert_eq!(rest.len(), 46);
    let rbit = |c: u8| 1u16 << (c >> 2);
    let mut r = RaiseCounts::default();
    let n = rest.len();
    let literal = qualifier == Qualifier::HoldsAceAndKing;
    let (mut unq, mut win, mut lose) = (0u32, 0u32, 0u32);
    for a in 0..n {
        let (ca, ba) = (rest[a], rbit(up) | rbit(rest[a]));
        for b in a + 1..n {
            let (cb, bb) = (rest[b], ba | rbit(rest[b]));
            for c in b + 1..n {
                let (cc, bc) = (rest[c], bb | rbit(rest[c]));
                for &cd in &rest[c + 1..] {
                    let s = ev.eval_indices([up, ca, cb, cc, cd]).strength();
                    let q = (if literal { qualifies_fast(qualifier, s, akm, bc | rbit(cd)) } else { s >= akm }) as u32;
                    let w = q & (s < ps) as u32;
                    let l = q & (s > ps) as u32;
                    unq += q ^ 1;
                    win += w;
                    lose += l;
                    if q & (s == ps) as u32 != 0 {
                        // Equal strength: Art. 8 suit tie-breaks (rare, slow path).
                        let dealer = [up, ca, cb, cc, cd];
                        let class = match compare_stud(player.map(card), dealer.map(card)) {
                            Ordering::Greater => {
                                r.tie_win += 1;
                                1
                            }
                            Ordering::Less => {
                                r.tie_lose += 1;
                                2
                            }
                            Ordering::Equal => {
                                r.tie += 1;
                                3
                            }
                        };
                        r.reps[class].get_or_insert(dealer);
                        continue;
                    }
                    // 0: not qualified, 1: player higher, 2: player lower.
                    let class = (q * (1 + l)) as usize;
                    if r.reps[class].is_none() {
                        r.reps[class] = Some([up, ca, cb, cc, cd]);
                    }
                }
            }
        }
    }
    r.unqualified = unq;
    r.win = win;
    r.lose = lose;
    r
}

/// The value of one situation, per unit of Ante.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct SituationValue {
    /// Exact expectation of raising under stud-2004 (suit tie-breaks).
    pub raise_ev: f64,
    /// max(raise, fold) under stud-2004.
    pub value: f64,
    /// Whether raising is optimal.
    pub raises: bool,
    /// max(raise, fold) if equal-strength hands pushed (the published game).
    pub value_ties_push: f64,
}

/// Exact conditional expectation of one situation, settled with `payout::stud_ante_raise`.
pub(crate) fn situation_value(rs: &Ruleset, player: [u8; 5], up: u8) -> SituationValue {
    let rc = raise_counts(rs.qualifier.0, player, up);
    let p = player.map(card);
    let net = |rep: Option<[u8; 5]>| {
        rep.map_or(0.0, |d| {
            let r = payout::stud_ante_raise(rs, p, d.map(card), true);
            // The Raise is twice the Ante (Art. 6(6)); nets are per unit of their own stake.
            r.ante.net + 2.0 * r.play.map_or(0.0, |x| x.net)
        })
    };
    let (n_unq, n_win, n_lose, n_tie) = (net(rc.reps[0]), net(rc.reps[1]), net(rc.reps[2]), net(rc.reps[3]));
    let total = rc.unqualified as f64 * n_unq
        + (rc.win + rc.tie_win) as f64 * n_win
        + (rc.lose + rc.tie_lose) as f64 * n_lose
        + rc.tie as f64 * n_tie;
    let total_push = total - rc.tie_win as f64 * n_win - rc.tie_lose as f64 * n_lose - rc.tie as f64 * n_tie;
    let fold = payout::stud_ante_raise(rs, p, p, false).ante.net;
    let raise_ev = total / COMPLETIONS as f64;
    SituationValue {
        raise_ev,
        value: raise_ev.max(fold),
        raises: raise_ev > fold,
        value_ties_push: (total_push / COMPLETIONS as f64).max(fold),
    }
}

/// Strata of the player's five-card hands: (category, top rank, second rank)
/// for the common categories, coarser for the rare ones.
fn stratum_key(hand: [u8; 5], category: Category5) -> (u8, u8, u8) {
    let mut counts = [0u8; 13];
    for c in hand {
        counts[(c >> 2) as usize] += 1;
    }
    let mut groups: Vec<(u8, u8)> =
        (0..13u8).filter(|&r| counts[r as usize] > 0).map(|r| (counts[r as usize], r)).collect();
    groups.sort_by(|a, b| b.cmp(a));
    let (r1, r2) = (groups[0].1, groups.get(1).map_or(0, |g| g.1));
    match category {
        Category5::HighCard | Category5::Pair | Category5::TwoPair => (category as u8, r1, r2),
        Category5::Trips => (category as u8, r1, 0),
        _ => (category as u8, 0, 0),
    }
}

/// Player hands with the same stratum key.
struct Group {
    hands: Vec<[u8; 5]>,
}

/// A stratum: a group of player hands and the rank of the dealer's up-card.
struct Stratum {
    group: usize,
    up_rank: Option<u8>,
    /// Exact probability of the stratum among all (player hand, up-card) pairs.
    weight: f64,
}

/// Stratum key → (the player hands, up-cards of each rank left over those hands).
type GroupMap = BTreeMap<(u8, u8, u8), (Vec<[u8; 5]>, [u64; 13])>;

/// The strata; with `by_up_rank` false, one stratum per group (up-card unrestricted).
fn build_strata(by_up_rank: bool) -> (Vec<Group>, Vec<Stratum>) {
    let ev = Evaluator5::get();
    let mut map = GroupMap::new();
    for a in 0..52u8 {
        for b in a + 1..52 {
            for c in b + 1..52 {
                for d in c + 1..52 {
                    for e in d + 1..52 {
                        let h = [a, b, c, d, e];
                        let entry = map.entry(stratum_key(h, ev.eval_indices(h).category())).or_default();
                        entry.0.push(h);
                        // Up-cards of each rank left for this hand.
                        let mut left = [4u64; 13];
                        for c in h {
                            left[(c >> 2) as usize] -= 1;
                        }
                        for (w, l) in entry.1.iter_mut().zip(left) {
                            *w += l;
                        }
                    }
                }
            }
        }
    }
    let pairs = (52 * 51 * 50 * 49 * 48 / 120 * 47) as f64;
    let (mut groups, mut strata) = (Vec::new(), Vec::new());
    for (_, (hands, ups)) in map {
        if !by_up_rank {
            strata.push(Stratum { group: groups.len(), up_rank: None, weight: hands.len() as f64 * 47.0 / pairs });
            groups.push(Group { hands });
            continue;
        }
        for (r, &n) in ups.iter().enumerate() {
            if n > 0 {
                strata.push(Stratum { group: groups.len(), up_rank: Some(r as u8), weight: n as f64 / pairs });
            }
        }
        groups.push(Group { hands });
    }
    (groups, strata)
}

/// A deterministic seed for sample `j` of stratum `s` (independent of threads).
fn sample_seed(seed: u64, s: usize, j: u64) -> u64 {
    seed ^ (s as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ j.wrapping_mul(0xD1B5_4A32_D192_ED03).rotate_left(29)
}

/// A uniform (player hand, up-card) pair of the stratum: a hand of the group with
/// probability proportional to its up-cards of the stratum's rank (rejection),
/// then one of those up-cards.
fn draw(groups: &[Group], st: &Stratum, seed: u64, s: usize, j: u64) -> ([u8; 5], u8) {
    let mut rng = Rng::seeded(sample_seed(seed, s, j));
    let hands = &groups[st.group].hands;
    loop {
        let hand = hands[rng.below(hands.len() as u32) as usize];
        let used = hand.iter().fold(0u64, |m, &c| m | 1 << c);
        let Some(up_rank) = st.up_rank else {
            let k = rng.below(47) as usize;
            return (hand, (0..52u8).filter(|c| used >> c & 1 == 0).nth(k).expect("47 cards left"));
        };
        let free: Vec<u8> = (0..4u8).map(|suit| up_rank * 4 + suit).filter(|&c| used >> c & 1 == 0).collect();
        if (rng.below(4) as usize) < free.len() {
            return (hand, free[rng.below(free.len() as u32) as usize]);
        }
    }
}

#[derive(Default, Clone)]
struct Moments {
    n: u64,
    sum: f64,
    sum_sq: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.sum_sq += x * x;
    }
    fn mean(&self) -> f64 {
        self.sum / self.n as f64
    }
    fn var(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        ((self.sum_sq - self.sum * self.sum / self.n as f64) / (self.n - 1) as f64).max(0.0)
    }
}

/// Stratified estimate: mean, standard error.
fn combine(weights: &[f64], m: &[Moments]) -> (f64, f64) {
    let mean = weights.iter().zip(m).map(|(w, m)| w * m.mean()).sum();
    let var: f64 = weights.iter().zip(m).map(|(w, m)| w * w * m.var() / m.n as f64).sum();
    (mean, var.sqrt())
}

/// Monte Carlo settings.
#[derive(Debug, Clone, Copy)]
pub(crate) struct McSettings {
    /// Total situations to evaluate (at least two per stratum are always taken).
    pub samples: u64,
    /// Seed.
    pub seed: u64,
    /// Threads.
    pub threads: usize,
}

/// stud-2004 Ante + Raise house edge per unit of Ante, optimal raise decision.
pub(crate) fn stud_ante(rs: &Ruleset, mc: McSettings) -> Result<BetOdds, OddsError> {
    if mc.samples == 0 {
        return Err(OddsError::BadArgument("--samples must be at least 1".into()));
    }
    // Split by the up-card's rank only when the samples leave room beyond a pilot
    // of 2 in each of the 3,510 fine strata; else 270 coarse strata.
    let fine = mc.samples >= FINE_STRATA_MIN_SAMPLES;
    let (groups, strata) = build_strata(fine);
    let weights: Vec<f64> = strata.iter().map(|s| s.weight).collect();
    let ns = strata.len() as u64;
    let pilot = (mc.samples / (4 * ns)).clamp(2, 16);
    // Per stratum moments of: value, value with ties pushing, (value − that), raise indicator.
    let mut mom = vec![[Moments::default(), Moments::default(), Moments::default(), Moments::default()]; strata.len()];
    let run = |jobs: &[(usize, u64)], mom: &mut Vec<[Moments; 4]>| {
        const CHUNK: usize = 8;
        let out = map_tasks(jobs.len().div_ceil(CHUNK), mc.threads, |t| {
            jobs[t * CHUNK..((t + 1) * CHUNK).min(jobs.len())]
                .iter()
                .map(|&(s, j)| {
                    let (hand, up) = draw(&groups, &strata[s], mc.seed, s, j);
                    (s, situation_value(rs, hand, up))
                })
                .collect::<Vec<_>>()
        });
        for (s, v) in out.into_iter().flatten() {
            let m = &mut mom[s];
            m[0].add(v.value);
            m[1].add(v.value_ties_push);
            m[2].add(v.value - v.value_ties_push);
            m[3].add(v.raises as u8 as f64);
        }
    };
    let jobs: Vec<(usize, u64)> = (0..strata.len()).flat_map(|s| (0..pilot).map(move |j| (s, j))).collect();
    run(&jobs, &mut mom);
    // Neyman allocation of the rest: n_s ∝ W_s σ_s.
    let left = mc.samples.saturating_sub(pilot * ns);
    // A floor on σ keeps strata whose pilot values happened to agree from being starved.
    let score: Vec<f64> = weights.iter().zip(&mom).map(|(w, m)| w * m[0].var().sqrt().max(0.01)).collect();
    let score_sum: f64 = score.iter().sum();
    if left > 0 && score_sum > 0.0 {
        let jobs: Vec<(usize, u64)> = (0..strata.len())
            .flat_map(|s| {
                let extra = (left as f64 * score[s] / score_sum).floor() as u64;
                (pilot..pilot + extra).map(move |j| (s, j))
            })
            .collect();
        run(&jobs, &mut mom);
    }
    let col = |k: usize| mom.iter().map(|m| m[k].clone()).collect::<Vec<_>>();
    let (mean, se) = combine(&weights, &col(0));
    let (mean_push, se_push) = combine(&weights, &col(1));
    let (diff, se_diff) = combine(&weights, &col(2));
    let (raise_rate, _) = combine(&weights, &col(3));
    let taken: u64 = mom.iter().map(|m| m[0].n).sum();
    let edge = -mean;
    let z = 1.959_963_984_540_054;
    let ci = [edge - z * se, edge + z * se];
    let avg_wager = 1.0 + 2.0 * raise_rate;
    let details: Map<String, Value> = match json!({
        "samples": taken,
        "seed": mc.seed,
        "strata": strata.len(),
        "stratification": if fine {
            "player hand (category and top ranks) × rank of the dealer's up-card; exact stratum weights; pilot then Neyman allocation"
        } else {
            "player hand (category and top ranks), coarse because of the small sample; exact stratum weights; pilot then Neyman allocation"
        },
        "standard_error": se,
        "completions_per_sample": COMPLETIONS,
        "royal_raise_pays": rs.options.stud_royal_raise_pays(),
        "strategy": {
            "rule": "raise when the exact expectation of raising, over all 163,185 dealer completions given the player's five cards and the dealer's up-card, beats folding (−1 Ante); computed per situation, not assumed",
            "raise_probability": raise_rate,
        },
        "average_wager": avg_wager,
        "element_of_risk": edge / avg_wager,
        "house_edge_if_equal_hands_pushed": -mean_push,
        "ci95_if_equal_hands_pushed": [-mean_push - z * se_push, -mean_push + z * se_push],
        "suit_tie_break_effect": {"return_difference": diff, "standard_error": se_diff,
            "note": "stud-2004 Art. 8 breaks equal-strength hands by suit; the published game pushes them"},
        "published": {"house_edge": PUBLISHED_STUD, "element_of_risk": 0.02555,
            "source": "Wizard of Odds, Caribbean Stud Poker: perfect strategy, dealer qualifies with A-K, raise pays 1-2-3-4-5-7-20-50-100, ties push"},
        "includes": "Ante and Raise (twice the Ante) settled together by stud_ante_raise; per unit of Ante; no house maximum applied",
    }) {
        Value::Object(m) => m,
        _ => Map::new(),
    };
    Ok(BetOdds::monte_carlo(BetKind::Ante.as_str(), edge, ci, details))
}
