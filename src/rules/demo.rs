//! `tablecam rounds`: deals seeded rounds by each ruleset's dealing procedure,
//! settles them and prints the results with their citations. It is the main job
//! until the vision pipeline exists, and a readable check of the rules engine.
use std::fmt::Write as _;

use super::card::{Card, Rank, Shoe};
use super::deal::{deal_plan, DealRequest, Position, SanGongDeal, Seat};
use super::eval5::{Category5, Evaluator5};
use super::payout::{self, Outcome};
use super::ruleset::{BetKind, DealingMode, GameKind, Ruleset, RulesetId};
use super::settle::{settle, Decision, HandRound, Round, RoundStatus, Settlement, Wager};
use super::RulesError;
use crate::rng::Rng;

/// Arguments of `tablecam rounds`.
#[derive(Debug, Clone, clap::Args)]
pub struct RoundsArgs {
    /// Ruleset id (e.g. fortune3cp-2025); see `tablecam rulesets`.
    #[arg(long, conflicts_with = "all")]
    pub ruleset: Option<String>,
    /// Every ruleset in turn.
    #[arg(long)]
    pub all: bool,
    /// Rounds per ruleset.
    #[arg(long, default_value_t = 3)]
    pub rounds: u32,
    /// Seed of the shuffle (same seed, same rounds).
    #[arg(long, default_value_t = 2025)]
    pub seed: u64,
    /// Print one JSON object per round instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `tablecam rounds`.
pub fn run_cli(args: &RoundsArgs) -> Result<(), RulesError> {
    let ids: Vec<RulesetId> = match (&args.ruleset, args.all) {
        (Some(id), _) => vec![id.parse()?],
        (None, _) => RulesetId::ALL.to_vec(),
    };
    for id in ids {
        let rs = Ruleset::new(id);
        let mut rng = Rng::seeded(args.seed ^ (id as u64) << 32);
        if !args.json {
            println!("== {} — {} ({})", rs.id, rs.name, rs.instrument);
        }
        for n in 1..=args.rounds {
            let (round, mode) = deal_round(&rs, &mut rng)?;
            let settlement = settle(&rs, &round)?;
            if args.json {
                let line = serde_json::json!({"ruleset": rs.id, "round": n, "dealing": mode, "round_input": round, "settlement": settlement});
                println!("{line}");
            } else {
                print!("{}", describe(&rs, n, mode, &round, &settlement));
            }
        }
    }
    Ok(())
}

/// Prints the rulesets and their main parameters.
pub fn print_rulesets() {
    for id in RulesetId::ALL {
        let rs = Ruleset::new(id);
        let spots: Vec<&str> = rs.bet_spots.iter().map(|(b, _)| b.as_str()).collect();
        println!(
            "{:<16} {} — {}\n                 {} deck(s), up to {} player hands, {} cards each, bets: {}",
            id.as_str(),
            rs.name,
            rs.instrument,
            rs.decks,
            rs.player_hands.1,
            rs.cards_per_hand,
            spots.join(", ")
        );
    }
}

/// A simple, documented player strategy for demo rounds (not the optimal one,
/// which `tablecam odds` computes): play Q-6-4 or better in three-card games,
/// raise any pair or A-K in stud.
fn plays(rs: &Ruleset, cards: &[Card]) -> bool {
    match rs.kind {
        GameKind::Stud => {
            let five: [Card; 5] = cards.try_into().expect("five cards");
            let has = |r| cards.iter().any(|c| c.rank() == r);
            Evaluator5::get().eval(five).category() > Category5::HighCard || (has(Rank::Ace) && has(Rank::King))
        }
        GameKind::SanGong => true,
        _ => {
            let rules = rs.three_card_rules();
            let three: [Card; 3] = cards.try_into().expect("three cards");
            let q64 = rules.eval(["QD".parse().unwrap(), "6C".parse().unwrap(), "4C".parse().unwrap()]);
            rules.eval(three) >= q64
                || payout::dealer_qualifies3(rules.eval(three))
                    && rules.eval(three).category() > super::eval3::Category3::HighCard
        }
    }
}

fn deal_round(rs: &Ruleset, rng: &mut Rng) -> Result<(Round, DealingMode), RulesError> {
    let mode = rs.dealing[rng.below(rs.dealing.len() as u32) as usize].mode;
    let mut shoe = Shoe::shuffled(rs.decks, rng);
    let (seats, sangong) = if rs.kind == GameKind::SanGong {
        let banker = Seat(1 + rng.below(8) as u8);
        let dice = (0..4).map(|_| 1 + rng.below(6) as u8).sum();
        let seats = (1..=8).map(Seat).filter(|&s| s != banker).collect::<Vec<_>>();
        (seats, Some(SanGongDeal { banker, dice_total: dice }))
    } else {
        let seats: Vec<Seat> = (1..=rs.player_hands.1).filter(|_| rng.below(3) > 0).map(Seat).collect();
        (if seats.is_empty() { vec![Seat(1)] } else { seats }, None)
    };
    let progressive_present = !rs.progressive.is_empty() && rng.below(2) == 0;
    let req = DealRequest {
        mode,
        seats_with_bets: seats.clone(),
        progressive_present,
        shuffler_gives_three_for_community: false,
        sangong,
    };
    let mut by_position: std::collections::BTreeMap<Position, Vec<Card>> = Default::default();
    for d in deal_plan(rs, &req)? {
        for _ in 0..d.cards {
            let card = shoe.deal().ok_or_else(|| RulesError::BadDeal("shoe ran out".into()))?;
            by_position.entry(d.to).or_default().push(card);
        }
    }
    let banker = sangong.map(|s| s.banker);
    let dealer = match banker {
        Some(b) => by_position.remove(&Position::Seat(b)).unwrap_or_default(),
        None => by_position.remove(&Position::Dealer).unwrap_or_default(),
    };
    let hands = seats
        .iter()
        .map(|&seat| {
            let cards = by_position.remove(&Position::Seat(seat)).unwrap_or_default();
            let stake = 100 * (1 + rng.below(5) as i64);
            let mut wagers = Vec::new();
            for (bet, _) in &rs.bet_spots {
                let wanted = match bet {
                    BetKind::Ante | BetKind::Bet => true,
                    BetKind::Play | BetKind::Raise => false,
                    BetKind::Progressive => progressive_present,
                    _ => rng.below(2) == 0,
                };
                if wanted {
                    wagers
                        .push(Wager { bet: *bet, stake: Some(if *bet == BetKind::Progressive { 100 } else { stake }) });
                }
            }
            let decision = if plays(rs, &cards) { Decision::Played } else { Decision::Folded };
            if decision == Decision::Played {
                match rs.kind {
                    GameKind::FortuneThreeCard => wagers.push(Wager { bet: BetKind::Play, stake: Some(stake) }),
                    GameKind::Stud => wagers.push(Wager { bet: BetKind::Raise, stake: Some(2 * stake) }),
                    _ => {}
                }
            }
            HandRound { seat, cards, wagers, decision }
        })
        .collect();
    let community = by_position.remove(&Position::Community).unwrap_or_default();
    let round = Round {
        hands,
        dealer,
        community,
        irregularities: vec![],
        progressive_pool: None,
        max_payout: None,
        sangong_bank: None,
    };
    Ok((round, mode))
}

fn cards_text(cards: &[Card]) -> String {
    cards.iter().map(|c| format!("{c:>3}")).collect::<Vec<_>>().join(" ")
}

fn describe(rs: &Ruleset, n: u32, mode: DealingMode, round: &Round, s: &Settlement) -> String {
    let mut out = String::new();
    let mode = match mode {
        DealingMode::Shoe => "shoe",
        DealingMode::Shuffler => "shuffler",
    };
    let dealer_word = if rs.kind == GameKind::SanGong { "banker" } else { "dealer" };
    let _ = write!(out, "round {n} ({mode}): {dealer_word} {} — {}", cards_text(&round.dealer), s.dealer_hand);
    match s.dealer_qualifies {
        Some(true) => out.push_str(", qualifies\n"),
        Some(false) => out.push_str(", does not qualify\n"),
        None => out.push('\n'),
    }
    if !round.community.is_empty() {
        let _ = writeln!(out, "  community {}", cards_text(&round.community));
    }
    if let RoundStatus::Void { reason, citation, .. } = &s.status {
        let _ = writeln!(out, "  ROUND VOID: {reason:?} ({citation})");
    }
    for (h, hs) in round.hands.iter().zip(&s.hands) {
        let decision = if h.decision == Decision::Folded { " folds" } else { "" };
        let _ = writeln!(out, "  {:<7} {} — {}{}", hs.seat.to_string(), cards_text(&h.cards), hs.hand, decision);
        for b in &hs.bets {
            let cites: Vec<String> = b.citations.iter().map(|c| format!("Art. {}", c.article)).collect();
            // A Progressive award is the table's jackpot or fixed sum, which a script does not give.
            let jackpot = b.bet == BetKind::Progressive && b.outcome == Outcome::Win && b.net_amount.is_none();
            let multiple = if jackpot { "jackpot".to_string() } else { format!("{:+.2}×", b.net_multiple) };
            let _ = writeln!(
                out,
                "      {:<15} {:>6} {:<5} {:>8} {:>8}   [{}]",
                b.bet.as_str(),
                b.stake.map_or(String::new(), |v| v.to_string()),
                format!("{:?}", b.outcome).to_lowercase(),
                multiple,
                b.net_amount.map_or(String::new(), |v| format!("{v:+}")),
                cites.join(", ")
            );
        }
    }
    if let Some(net) = s.banker_net {
        let _ = writeln!(out, "  banker net after commission: {net:+}");
    }
    out
}
