//! Hand evaluations per second for each evaluator of the rules engine.
//!
//! Run with `cargo bench --bench evaluators`. Each benchmark reports throughput
//! in evaluations (elements) per second on one core. The five-card target is
//! ≥ 100 million per second; hands are pre-dealt so that only evaluation is timed.
use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tablecam::rng::Rng;
use tablecam::rules::card::Card;
use tablecam::rules::eval3::{SuitTieBreaks, ThreeCardRules};
use tablecam::rules::eval5::{compare_stud, Evaluator5};
use tablecam::rules::sangong::SanGongValue;

const HANDS: usize = 1 << 16;

fn random_hands<const N: usize>(seed: u64) -> Vec<[u8; N]> {
    let mut rng = Rng::seeded(seed);
    let mut deck: Vec<u8> = (0..52).collect();
    (0..HANDS)
        .map(|_| {
            rng.partial_shuffle(&mut deck, N);
            let mut h = [0u8; N];
            h.copy_from_slice(&deck[..N]);
            h
        })
        .collect()
}

fn cards<const N: usize>(h: [u8; N]) -> [Card; N] {
    h.map(|i| Card::from_index(i).expect("card index < 52"))
}

/// The baseline the fast evaluator is compared with in the same run: the
/// textbook method (count ranks, test flush and straight, build a sortable key).
fn naive_eval5(h: [u8; 5]) -> u32 {
    let mut counts = [0u8; 13];
    let mut suits = [0u8; 4];
    for &c in &h {
        counts[(c >> 2) as usize] += 1;
        suits[(c & 3) as usize] += 1;
    }
    let flush = suits.contains(&5);
    let mask: u16 = (0..13).filter(|&r| counts[r] > 0).fold(0, |m, r| m | 1 << r);
    let straight_top = if mask.count_ones() == 5 && (mask >> mask.trailing_zeros()) == 0b11111 {
        Some(15 - mask.leading_zeros())
    } else if mask == 0b1_0000_0000_1111 {
        Some(3)
    } else {
        None
    };
    let mut groups: Vec<(u8, u8)> =
        (0..13u8).filter(|&r| counts[r as usize] > 0).map(|r| (counts[r as usize], r)).collect();
    groups.sort_unstable_by(|a, b| b.cmp(a));
    let kickers = groups.iter().fold(0u32, |k, g| k << 4 | g.1 as u32);
    let category = match (flush, straight_top, groups[0].0, groups.get(1).map_or(0, |g| g.0)) {
        (true, Some(_), _, _) => 8,
        (_, _, 4, _) => 7,
        (_, _, 3, 2) => 6,
        (true, None, _, _) => 5,
        (false, Some(_), _, _) => 4,
        (_, _, 3, _) => 3,
        (_, _, 2, 2) => 2,
        (_, _, 2, _) => 1,
        _ => 0,
    };
    category << 20 | straight_top.unwrap_or(kickers)
}

fn five_card(c: &mut Criterion) {
    let ev = Evaluator5::get();
    let hands = random_hands::<5>(1);
    let mut g = c.benchmark_group("eval5");
    g.throughput(Throughput::Elements(HANDS as u64));
    g.bench_function("random_hands", |b| {
        b.iter(|| hands.iter().fold(0u32, |acc, &h| acc.wrapping_add(ev.eval_indices(black_box(h)).strength() as u32)))
    });
    g.bench_function("random_hands_naive_baseline", |b| {
        b.iter(|| hands.iter().fold(0u32, |acc, &h| acc.wrapping_add(naive_eval5(black_box(h)))))
    });
    g.throughput(Throughput::Elements(2_598_960));
    g.bench_function("all_2598960_hands", |b| {
        b.iter(|| {
            let mut acc = 0u32;
            for a in 0..52u8 {
                for b_ in a + 1..52 {
                    for c_ in b_ + 1..52 {
                        for d in c_ + 1..52 {
                            for e in d + 1..52 {
                                acc = acc.wrapping_add(ev.eval_indices([a, b_, c_, d, e]).strength() as u32);
                            }
                        }
                    }
                }
            }
            black_box(acc)
        })
    });
    g.finish();

    let sixes: Vec<[Card; 6]> = random_hands::<6>(2).into_iter().map(cards).collect();
    let mut g = c.benchmark_group("best_five_of_six");
    g.throughput(Throughput::Elements(HANDS as u64));
    g.bench_function("random_hands", |b| {
        b.iter(|| sixes.iter().fold(0u32, |acc, h| acc.wrapping_add(ev.best_of(black_box(h)).0.strength() as u32)))
    });
    g.finish();

    let pairs: Vec<([Card; 5], [Card; 5])> = random_hands::<10>(3)
        .into_iter()
        .map(|h| {
            let c = cards(h);
            ([c[0], c[1], c[2], c[3], c[4]], [c[5], c[6], c[7], c[8], c[9]])
        })
        .collect();
    let mut g = c.benchmark_group("stud_compare");
    g.throughput(Throughput::Elements(HANDS as u64));
    g.bench_function("random_pairs", |b| {
        b.iter(|| pairs.iter().filter(|(p, d)| compare_stud(black_box(*p), black_box(*d)).is_gt()).count())
    });
    g.finish();
}

fn three_card(c: &mut Criterion) {
    let hands: Vec<[Card; 3]> = random_hands::<3>(4).into_iter().map(cards).collect();
    let mut g = c.benchmark_group("eval3");
    g.throughput(Throughput::Elements(HANDS as u64));
    for (name, rules) in [
        ("fortune", ThreeCardRules::default()),
        ("qpoker_suit_ties", ThreeCardRules { suit_tie_breaks: SuitTieBreaks::QPoker, ..Default::default() }),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| hands.iter().fold(0u32, |acc, &h| acc.wrapping_add(rules.eval(black_box(h)).value())))
        });
    }
    g.finish();
    let mut g = c.benchmark_group("sangong");
    g.throughput(Throughput::Elements(HANDS as u64));
    g.bench_function("value", |b| {
        b.iter(|| hands.iter().fold(0u32, |acc, &h| acc.wrapping_add(SanGongValue::of(black_box(h)).class as u32)))
    });
    g.finish();
}

criterion_group!(benches, five_card, three_card);
criterion_main!(benches);
