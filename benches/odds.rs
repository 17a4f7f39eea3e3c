//! Wall time of the odds calculator's exact enumerations on 2 threads.
//!
//! Run with `cargo bench --bench odds`. `three_card_enumeration/*` is every
//! player hand against every dealer hand (22,100 × 18,424 pairs) with the optimal
//! play/fold decision computed; `full_report/fortune3cp-2025` adds Pair Plus, the
//! Six Card Bonus over all C(52, 6) six-card sets and the Progressive.
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use tablecam::odds::{compute, enumerate_three_card, OddsConfig};
use tablecam::rules::ruleset::{Ruleset, RulesetId};

fn three_card(c: &mut Criterion) {
    let mut g = c.benchmark_group("three_card_enumeration");
    g.sample_size(10).measurement_time(Duration::from_secs(8));
    for id in [RulesetId::Fortune3cp2025, RulesetId::Qpoker2004, RulesetId::Sangong1996] {
        let rs = Ruleset::new(id);
        g.bench_function(id.as_str(), |b| {
            b.iter(|| {
                if id == RulesetId::Sangong1996 {
                    compute(&rs, &OddsConfig::default()).expect("odds").bets.len()
                } else {
                    enumerate_three_card(&rs, 2).expect("three-card game");
                    0
                }
            })
        });
    }
    g.finish();
}

fn full_report(c: &mut Criterion) {
    let mut g = c.benchmark_group("full_report");
    g.sample_size(10).measurement_time(Duration::from_secs(15));
    let rs = Ruleset::new(RulesetId::Fortune3cp2025);
    g.bench_function("fortune3cp-2025", |b| b.iter(|| compute(&rs, &OddsConfig::default()).expect("odds").bets.len()));
    g.finish();
}

criterion_group!(benches, three_card, full_report);
criterion_main!(benches);
