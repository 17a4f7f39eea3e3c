//! Tests of the odds calculator: exactness of the grouping against the payout
//! functions, closed forms, published figures, determinism and the JSON shape.
use super::five::{five_card_categories, six_card_categories, HANDS6};
use super::games3::{self, ThreeCardEnumeration};
use super::stud::{qualifies_fast, raise_counts, situation_value, COMPLETIONS};
use super::three::{all_hands3, class_of, HandTable, DEALER_HANDS3, HANDS3};
use super::*;
use crate::rng::Rng;
use crate::rules::card::{parse_cards, Card};
use crate::rules::eval5::{Category5, Evaluator5};
use crate::rules::payout;
use crate::rules::ruleset::Qualifier;

fn ruleset(id: RulesetId, opts: &[&str]) -> Ruleset {
    let o = parse_options(&opts.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    Ruleset::with_options(id, o).unwrap()
}

fn mask(h: &[Card; 3]) -> u64 {
    h.iter().fold(0, |m, c| m | 1 << c.index())
}

/// For a sample of player hands, settle every disjoint dealer hand with the
/// payout function itself and check that the class grouping gives the same
/// result for every pair, and the same counts.
fn check_grouping(table: &HandTable, hands: &[[Card; 3]], net: impl Fn(usize, usize) -> f64) {
    let mut rng = Rng::seeded(5);
    let mut players: Vec<usize> = (0..60).map(|_| rng.below(HANDS3 as u32) as usize).collect();
    players.extend([0, HANDS3 - 1]);
    let classes = table.classify_some(&players, 2);
    for (&i, cc) in players.iter().zip(&classes) {
        assert_eq!(cc.counts.iter().sum::<u32>(), DEALER_HANDS3);
        let mut counts = [0u32; 4];
        for j in 0..HANDS3 {
            if mask(&hands[i]) & mask(&hands[j]) != 0 {
                continue;
            }
            let k = class_of(table, i, j);
            counts[k as usize] += 1;
            let rep = cc.reps[k as usize].expect("a representative for every non-empty class") as usize;
            assert_eq!(mask(&hands[rep]) & mask(&hands[i]), 0, "representative shares a card");
            assert_eq!(class_of(table, i, rep), k);
            assert_eq!(
                net(i, j),
                net(i, rep),
                "player {:?} dealer {:?} vs representative {:?}",
                hands[i],
                hands[j],
                hands[rep]
            );
        }
        assert_eq!(counts, cc.counts, "{:?}", hands[i]);
    }
}

#[test]
fn three_card_grouping_is_exact_for_every_ruleset_and_option() {
    let hands = all_hands3();
    let variants = [
        ruleset(RulesetId::Fortune3cp2025, &[]),
        ruleset(RulesetId::Fortune3cp2025, &["ante_bonus_scope=played_not_lost", "ante_play_tie=dealer_wins"]),
        ruleset(RulesetId::Fortune3cp2025, &["three_odd_cards_tie=suit_of_highest_card", "ante_bonus_scope=any_ante"]),
        ruleset(RulesetId::Fortune3cp2008, &["top_straight_flush=kqj", "f2008_win_table_scope=ante_only"]),
        ruleset(RulesetId::Fortune3cp2008, &[]),
        ruleset(RulesetId::Qpoker2004, &[]),
        ruleset(RulesetId::Qpoker2004, &["qpoker_unqualified_pays=return_half"]),
    ];
    for rs in &variants {
        let rules = rs.three_card_rules();
        let ranks: Vec<_> = hands.iter().map(|&h| rules.eval(h)).collect();
        let table = HandTable::new(&hands, |h| {
            let r = rules.eval(*h);
            (r.value(), payout::dealer_qualifies3(r))
        });
        check_grouping(&table, &hands, |i, j| match rs.kind {
            GameKind::QPoker => payout::qpoker_bet(rs, ranks[i], ranks[j], true).net,
            _ => {
                let r = payout::fortune_ante_play(rs, ranks[i], ranks[j], true);
                r.ante.net + r.play.map_or(f64::NAN, |p| p.net)
            }
        });
    }
}

#[test]
fn sangong_grouping_is_exact() {
    let hands = all_hands3();
    // the default and each alternative comparison (docs/rules.md E-2, E-3): Art. 8's banker
    // advantage must stay uniform within every class under each of them
    for opts in [
        &[][..],
        &["sangong_equal_points=high_card_only"],
        &["sangong_high_card_compare=cascade_then_suit"],
        &["sangong_equal_points=high_card_only", "sangong_high_card_compare=cascade_then_suit"],
    ] {
        let rs = ruleset(RulesetId::Sangong1996, opts);
        let rule = rs.options.sangong_rule();
        let table = HandTable::new(&hands, |h| (rule.key(*h), true));
        check_grouping(&table, &hands, |i, j| payout::sangong_bet(&rs, hands[j], hands[i]).net);
    }
}

#[test]
fn pair_plus_equals_the_closed_form_from_category_counts() {
    // Category counts of the 22,100 hands: SF 48, trips 52, straight 720, flush 1,096, pair 3,744, high card 16,440.
    let closed = |sf: f64, trips: f64, st: f64, fl: f64, pair: f64| {
        -(48.0 * sf + 52.0 * trips + 720.0 * st + 1096.0 * fl + 3744.0 * pair - 16440.0) / 22100.0
    };
    for (id, table) in
        [(RulesetId::Fortune3cp2025, (40.0, 25.0, 5.0, 4.0, 1.0)), (RulesetId::Qpoker2004, (40.0, 30.0, 6.0, 4.0, 1.0))]
    {
        let rs = Ruleset::new(id);
        let e = ThreeCardEnumeration::new(&rs, 2);
        let pp = games3::pair_plus(&rs, &e);
        let want = closed(table.0, table.1, table.2, table.3, table.4);
        assert!((pp.house_edge - want).abs() < 1e-15, "{id}: {} vs {want}", pp.house_edge);
        assert_eq!(pp.method, Method::Exact);
    }
    // 40-30-6-4-1 is the published 2.32% table: 512 / 22,100.
    assert!((closed(40.0, 30.0, 6.0, 4.0, 1.0) - 512.0 / 22100.0).abs() < 1e-15);
}

#[test]
fn fortune2025_ante_is_three_card_poker_with_the_q64_threshold() {
    let rs = Ruleset::new(RulesetId::Fortune3cp2025);
    let e = ThreeCardEnumeration::new(&rs, 2);
    let ante = games3::fortune_ante(&rs, &e);
    // Wizard of Odds, Three Card Poker, ante bonus 5-4-1: 3.37%.
    assert!((ante.house_edge - games3::PUBLISHED_3CP_ANTE).abs() < 1e-4, "{}", ante.house_edge);
    let s = &ante.details["strategy"];
    assert_eq!(s["worst_hand_played"], "Q-6-4 (three odd cards)");
    assert_eq!(s["best_hand_folded"], "Q-6-3 (three odd cards)");
    assert_eq!(s["single_threshold"], true);
    // The published Q-6-4 rule is the optimal strategy here.
    assert_eq!(ante.details["house_edge_with_q64_rule"].as_f64().unwrap(), ante.house_edge);
    // Element of risk 2.01% (published).
    assert!((ante.details["element_of_risk"].as_f64().unwrap() - 0.0201).abs() < 1e-4);
}

#[test]
fn a_worse_decision_never_beats_the_computed_one() {
    // Folding everything costs the Ante; playing everything is worse than optimal.
    let rs = Ruleset::new(RulesetId::Qpoker2004);
    let e = ThreeCardEnumeration::new(&rs, 2);
    let bet = games3::qpoker_bet(&rs, &e);
    assert!(bet.house_edge <= bet.details["house_edge_with_q64_rule"].as_f64().unwrap());
    assert!(bet.house_edge < 0.5);
}

#[test]
fn six_card_bonus_category_counts() {
    let (counts, reps) = six_card_categories(2);
    assert_eq!(counts.iter().sum::<u64>(), HANDS6);
    // Royal: 4 royals × 47 sixth cards.
    assert_eq!(counts[Category5::RoyalFlush as usize], 188);
    // Other straight flushes: 36 × 46 (the sixth card must not extend it upwards).
    assert_eq!(counts[Category5::StraightFlush as usize], 1_656);
    // Quads: 13 × C(48, 2).
    assert_eq!(counts[Category5::Quads as usize], 14_664);
    // Full house: two trips (78 rank pairs × 4 × 4) or trips + pair + odd card (52 × 72 × 44).
    assert_eq!(counts[Category5::FullHouse as usize], 1_248 + 164_736);
    // The whole standard six-card distribution, high card … royal.
    assert_eq!(counts, [6_612_900, 9_730_740, 2_532_816, 732_160, 361_620, 205_792, 165_984, 14_664, 1_656, 188]);
    // The representatives are what the engine's best_of says.
    let ev = Evaluator5::get();
    for (k, rep) in reps.iter().enumerate() {
        let six: Vec<Card> = rep.unwrap().iter().map(|&i| Card::from_index(i).unwrap()).collect();
        assert_eq!(ev.best_of(&six).0.category() as usize, k);
    }
    // Five-card counts (progressive): the standard ones.
    let (five, _) = five_card_categories();
    assert_eq!(five, [1_302_540, 1_098_240, 123_552, 54_912, 10_200, 5_108, 3_744, 624, 36, 4]);
}

#[test]
fn stud_fast_qualifier_agrees_with_the_payout_function_on_every_hand() {
    let ev = Evaluator5::get();
    let ak = {
        let h: [Card; 5] = parse_cards("AS KH 4S 3S 2S").unwrap().try_into().unwrap();
        ev.eval(h).strength()
    };
    for q in [Qualifier::AceKing, Qualifier::HoldsAceAndKing] {
        let mut n = 0u32;
        for a in 0..52u8 {
            for b in a + 1..52 {
                for c in b + 1..52 {
                    for d in c + 1..52 {
                        for e in d + 1..52 {
                            let h = [a, b, c, d, e];
                            let bits = h.iter().fold(0u16, |m, &x| m | 1 << (x >> 2));
                            let fast = qualifies_fast(q, ev.eval_indices(h).strength(), ak, bits);
                            let slow = payout::dealer_qualifies_stud(q, h.map(|i| Card::from_index(i).unwrap()));
                            assert_eq!(fast, slow, "{h:?}");
                            n += fast as u32;
                        }
                    }
                }
            }
        }
        match q {
            // Hands holding an ace and a king: C(52,5) − 2·C(48,5) + C(44,5).
            Qualifier::HoldsAceAndKing => assert_eq!(n, 2_598_960 + 1_086_008 - 2 * 1_712_304),
            _ => assert!(n > 1_000_000, "{n}"),
        }
    }
}

/// Plays out every dealer completion with `payout::stud_ante_raise`.
fn brute_force_raise(rs: &Ruleset, player: &str, up: &str) -> (f64, f64) {
    let p: [Card; 5] = parse_cards(player).unwrap().try_into().unwrap();
    let up: Card = up.parse().unwrap();
    let used = p.iter().fold(1u64 << up.index(), |m, c| m | 1 << c.index());
    let rest: Vec<Card> = Card::all().filter(|c| used >> c.index() & 1 == 0).collect();
    let ev = Evaluator5::get();
    let (mut total, mut total_push, mut n) = (0.0, 0.0, 0u32);
    for a in 0..rest.len() {
        for b in a + 1..rest.len() {
            for c in b + 1..rest.len() {
                for d in c + 1..rest.len() {
                    let dealer = [up, rest[a], rest[b], rest[c], rest[d]];
                    let r = payout::stud_ante_raise(rs, p, dealer, true);
                    let net = r.ante.net + 2.0 * r.play.unwrap().net;
                    total += net;
                    let tie = payout::dealer_qualifies_stud(rs.qualifier.0, dealer) && ev.eval(p) == ev.eval(dealer);
                    total_push += if tie { 0.0 } else { net };
                    n += 1;
                }
            }
        }
    }
    assert_eq!(n, COMPLETIONS);
    (total / n as f64, total_push / n as f64)
}

#[test]
fn stud_situation_value_matches_a_brute_force_play_out() {
    let rs = Ruleset::new(RulesetId::Stud2004);
    let idx = |s: &str| -> [u8; 5] {
        let v: Vec<u8> = parse_cards(s).unwrap().iter().map(|c| c.index()).collect();
        v.try_into().unwrap()
    };
    // A-K high (a marginal raise), a low pair (equal-strength ties possible), and a pair of aces.
    for (player, up) in [("AS KD 9H 5C 3D", "9C"), ("2S 2D 7H 9C JD", "QH"), ("AH AC 8S 6D 4C", "KS")] {
        let v = situation_value(&rs, idx(player), up.parse::<Card>().unwrap().index());
        let (raise, raise_push) = brute_force_raise(&rs, player, up);
        assert!((v.raise_ev - raise).abs() < 1e-12, "{player} / {up}: {} vs {raise}", v.raise_ev);
        assert!((v.value_ties_push - raise_push.max(-1.0)).abs() < 1e-12);
        assert_eq!(v.raises, raise > -1.0);
    }
    // The literal qualifier option too.
    let lit = ruleset(RulesetId::Stud2004, &["stud_dealer_qualifier=holds_ace_and_king", "stud_royal_raise_pays=50"]);
    let v = situation_value(&lit, idx("2S 2D 7H 9C JD"), "AH".parse::<Card>().unwrap().index());
    assert!((v.raise_ev - brute_force_raise(&lit, "2S 2D 7H 9C JD", "AH").0).abs() < 1e-12);
    let rc = raise_counts(Qualifier::AceKing, idx("2S 2D 7H 9C JD"), 40);
    assert_eq!(rc.unqualified + rc.win + rc.lose + rc.tie_win + rc.tie_lose + rc.tie, COMPLETIONS);
    assert_eq!(rc.tie, 0, "one deck: Art. 8 separates every pair of hands");
}

#[test]
fn stud_monte_carlo_is_deterministic_for_a_seed_whatever_the_threads() {
    let rs = Ruleset::new(RulesetId::Stud2004);
    let run = |threads, seed| {
        let cfg = OddsConfig { samples: 700, seed, threads, ..OddsConfig::default() };
        compute(&rs, &cfg).unwrap().bet("ante").unwrap().clone()
    };
    let a = run(2, 7);
    assert_eq!(a, run(1, 7));
    assert_ne!(a.house_edge, run(2, 8).house_edge);
    let [lo, hi] = a.ci95.unwrap();
    assert!(lo < a.house_edge && a.house_edge < hi);
    assert_eq!(a.method, Method::MonteCarlo);
    // Even a small sample lands near the published figure.
    assert!((a.house_edge - 0.05224).abs() < 0.03, "{}", a.house_edge);
}

#[test]
fn json_has_the_specified_shape_for_every_ruleset() {
    let cfg = OddsConfig { samples: 300, ..OddsConfig::default() };
    let want: [(RulesetId, &[&str]); 5] = [
        (RulesetId::Fortune3cp2025, &["ante", "pair_plus", "six_card_bonus", "progressive"]),
        (RulesetId::Fortune3cp2008, &["ante", "pair_plus"]),
        (RulesetId::Stud2004, &["ante", "progressive"]),
        (RulesetId::Qpoker2004, &["bet", "pair_plus"]),
        (RulesetId::Sangong1996, &["bet", "banker"]),
    ];
    for (id, bets) in want {
        let rs = Ruleset::new(id);
        let report = compute(&rs, &cfg).unwrap();
        let v: Value = serde_json::from_str(&serde_json::to_string(&report).unwrap()).unwrap();
        assert_eq!(v["ruleset"], id.as_str());
        let got: Vec<&str> = v["bets"].as_array().unwrap().iter().map(|b| b["bet"].as_str().unwrap()).collect();
        assert_eq!(got, bets);
        for b in v["bets"].as_array().unwrap() {
            let edge = b["house_edge"].as_f64().unwrap();
            assert!(edge > -1.0 && edge < 1.0, "{id} {b}");
            match b["method"].as_str().unwrap() {
                "exact" => assert!(b.get("ci95").is_none()),
                "monte-carlo" => {
                    let ci = b["ci95"].as_array().unwrap();
                    assert!(ci[0].as_f64().unwrap() <= edge && edge <= ci[1].as_f64().unwrap());
                }
                m => panic!("method {m}"),
            }
        }
        if id != RulesetId::Sangong1996 && id != RulesetId::Qpoker2004 && id != RulesetId::Fortune3cp2008 {
            let prog = v["bets"].as_array().unwrap().iter().find(|b| b["bet"] == "progressive").unwrap();
            assert!(prog["reference_awards"]["pool"].as_f64().unwrap() > 0.0);
        }
        assert!(render_text(&report, &rs).contains("house edge"));
    }
}

#[test]
fn sangong_banker_side_is_consistent_with_the_player_side() {
    let rs = Ruleset::new(RulesetId::Sangong1996);
    let bets = games3::sangong(&rs, 2).unwrap();
    let p = &bets[0].details["outcome_probabilities"];
    let (pw, pb) = (p["player_wins"].as_f64().unwrap(), p["banker_wins"].as_f64().unwrap());
    assert_eq!(p["tie"].as_f64().unwrap(), 0.0);
    assert!((pw + pb - 1.0).abs() < 1e-12);
    assert!((bets[0].house_edge - (pb - 0.95 * pw)).abs() < 1e-12);
    // One bet, 5% of the banker's net win.
    assert!((bets[1].house_edge - (pw - 0.95 * pb)).abs() < 1e-12);
    // Art. 8 gives the banker the edge before commission.
    assert!(pb > pw);
}

#[test]
fn options_and_errors() {
    let o = parse_options(&["stud_royal_raise_pays=50".into(), "identical_hands=dealer_wins".into()]).unwrap();
    assert_eq!(o.stud_royal_raise_pays, Some(50));
    assert!(matches!(parse_options(&["nonsense".into()]), Err(OddsError::BadOption(_))));
    assert!(matches!(parse_options(&["no_such_option=1".into()]), Err(OddsError::BadOption(_))));
    let args = OddsArgs { ruleset: "poker-1999".into(), json: true, samples: 1, seed: 1, threads: 1, options: vec![] };
    let err = run_cli(&args).unwrap_err().to_string();
    assert_eq!(err, RulesError::UnknownRuleset("poker-1999".into()).to_string());
    let q = ruleset(RulesetId::Qpoker2004, &["qpoker_decks=2"]);
    assert!(matches!(compute(&q, &OddsConfig::default()), Err(OddsError::Unsupported(_))));
    let args = OddsArgs {
        ruleset: "stud-2004".into(),
        json: true,
        samples: 0,
        seed: 1,
        threads: 1,
        options: vec!["top_straight_flush=kqj".into()],
    };
    assert!(run_cli(&args).unwrap_err().to_string().contains("top_straight_flush"));
}

#[test]
fn published_strategy_threshold_q64_is_found_by_rank_not_assumed() {
    // Changing the rules moves the computed threshold: with the dealer winning ties the player folds more.
    let rs = ruleset(RulesetId::Fortune3cp2025, &["ante_play_tie=dealer_wins"]);
    let e = ThreeCardEnumeration::new(&rs, 2);
    let a = games3::fortune_ante(&rs, &e);
    let base = games3::fortune_ante(
        &Ruleset::new(RulesetId::Fortune3cp2025),
        &ThreeCardEnumeration::new(&Ruleset::new(RulesetId::Fortune3cp2025), 2),
    );
    assert!(a.house_edge > base.house_edge);
}
