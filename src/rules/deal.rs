//! Seats, table positions and the prescribed dealing order of each ruleset.
//!
//! [`deal_plan`] turns a ruleset, a dealing mode and the hands that have bets
//! into the exact sequence of deliveries the regulation prescribes. The
//! simulator deals by it and the verifier compares what the camera saw with it.
use std::fmt;

use serde::{Deserialize, Serialize};

use super::options::DiceCountStart;
use super::ruleset::{Citation, DealerTurn, DealingMode, FaceUpByDesign, GameKind, Ruleset};
use super::RulesError;

/// A player's place, numbered from 1 at the dealer's left ("first base"),
/// clockwise seen from above (GAMES.md). San Gong numbers all eight places the
/// same way, the banker's included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Seat(pub u8);

impl fmt::Display for Seat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// Where a card goes on the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Position {
    /// A player's hand.
    Seat(Seat),
    /// The dealer's (or San Gong banker's, when not a seat) hand.
    Dealer,
    /// The community-card spot (fortune3cp-2025 Art. 11(3)).
    Community,
    /// The discard rack.
    Discard,
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Seat(s) => s.fmt(f),
            Position::Dealer => f.write_str("dealer"),
            Position::Community => f.write_str("community"),
            Position::Discard => f.write_str("discard"),
        }
    }
}

/// One step of a deal: `cards` cards to `to`, of which the last `face_up` are
/// dealt face up by design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Delivery {
    /// Destination.
    pub to: Position,
    /// Number of cards in this step (1 from a shoe, a packet from a shuffler).
    pub cards: u8,
    /// How many of them are face up by design (stud dealer's last card).
    pub face_up: u8,
    /// The article prescribing this step.
    pub citation: Citation,
}

/// What a deal needs to know besides the ruleset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DealRequest {
    /// Shoe or shuffler.
    pub mode: DealingMode,
    /// Seats that have a bet (ignored by San Gong, which deals all eight places).
    pub seats_with_bets: Vec<Seat>,
    /// Whether any Progressive bet is present (fortune3cp-2025 community cards).
    pub progressive_present: bool,
    /// Whether the shuffler gives three cards at a time for the community cards
    /// (fortune3cp-2025 Art. 11(4): the top one goes to the discard rack).
    pub shuffler_gives_three_for_community: bool,
    /// San Gong: the banker's place and the dice total.
    pub sangong: Option<SanGongDeal>,
}

/// The San Gong facts that fix where dealing starts (Art. 2(2)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SanGongDeal {
    /// The banker's place (1..=8).
    pub banker: Seat,
    /// The four dice's total (4..=24).
    pub dice_total: u8,
}

/// Number of places at a San Gong table, banker included (Art. 2(4), 3).
pub const SANGONG_PLACES: u8 = 8;

/// The San Gong place `steps` places counter-clockwise from `from` (Art. 2(2)–(3)): towards
/// lower seat numbers, place 1 followed by place 8.
pub fn counter_clockwise(from: Seat, steps: u8) -> Seat {
    Seat((from.0 - 1 + SANGONG_PLACES - steps % SANGONG_PLACES) % SANGONG_PLACES + 1)
}

/// The place that receives the first cards in San Gong: counting the dice total
/// from the banker counter-clockwise (Art. 2(2)), the banker counting as 1 by
/// default (option `sangong_dice_count_start`).
pub fn sangong_first_place(deal: SanGongDeal, start: DiceCountStart) -> Result<Seat, RulesError> {
    if !(1..=SANGONG_PLACES).contains(&deal.banker.0) {
        return Err(RulesError::BadDeal(format!("San Gong banker place {} is not 1..=8", deal.banker.0)));
    }
    if !(4..=24).contains(&deal.dice_total) {
        return Err(RulesError::BadDeal(format!(
            "four dice total {} is not 4..=24 (sangong-1996 Art. 2(2))",
            deal.dice_total
        )));
    }
    let steps = match start {
        DiceCountStart::BankerIsOne => deal.dice_total - 1,
        DiceCountStart::BankerIsZero => deal.dice_total,
    };
    Ok(counter_clockwise(deal.banker, steps))
}

/// The sequence of deliveries the ruleset prescribes.
pub fn deal_plan(rs: &Ruleset, req: &DealRequest) -> Result<Vec<Delivery>, RulesError> {
    deal_plan_with_turn(rs, req, rs.dealer_turn)
}

/// [`deal_plan`] with the dealer's cards coming at `dealer_turn` (one of
/// [`Ruleset::dealer_turns`]).
pub fn deal_plan_with_turn(
    rs: &Ruleset,
    req: &DealRequest,
    dealer_turn: DealerTurn,
) -> Result<Vec<Delivery>, RulesError> {
    let procedure = rs
        .dealing
        .iter()
        .find(|p| p.mode == req.mode)
        .ok_or_else(|| RulesError::BadDeal(format!("{} has no {:?} dealing procedure", rs.id, req.mode)))?;
    let cite = procedure.citation;
    let per_hand = rs.cards_per_hand;
    let step = procedure.cards_at_a_time;
    let mut plan = Vec::new();

    if rs.kind == GameKind::SanGong {
        let deal = req
            .sangong
            .ok_or_else(|| RulesError::BadDeal("San Gong needs the banker's place and the dice total".into()))?;
        let first = sangong_first_place(deal, rs.options.sangong_dice_count_start())?;
        for i in 0..SANGONG_PLACES {
            let seat = counter_clockwise(first, i);
            plan.push(Delivery { to: Position::Seat(seat), cards: per_hand, face_up: 0, citation: cite });
        }
        return Ok(plan);
    }

    let mut seats = req.seats_with_bets.clone();
    seats.sort();
    seats.dedup();
    let (min, max) = (1, rs.player_hands.1);
    if let Some(bad) = seats.iter().find(|s| s.0 < min || s.0 > max) {
        return Err(RulesError::BadDeal(format!("{bad} does not exist at a {} table (seats 1..={max})", rs.id)));
    }
    let dealer_face_up = |last_of_hand: bool, n: u8| -> u8 {
        if rs.face_up_by_design == FaceUpByDesign::DealerLastCard && last_of_hand {
            n.min(1)
        } else {
            0
        }
    };
    let passes = per_hand / step;
    for pass in 0..passes {
        let last_pass = pass + 1 == passes;
        for &seat in &seats {
            plan.push(Delivery { to: Position::Seat(seat), cards: step, face_up: 0, citation: cite });
        }
        if dealer_turn == DealerTurn::LastInEachPass || step > 1 {
            plan.push(Delivery {
                to: Position::Dealer,
                cards: step,
                face_up: dealer_face_up(last_pass, step),
                citation: cite,
            });
        }
    }
    if dealer_turn == DealerTurn::AfterAllPlayers && step == 1 {
        for i in 0..per_hand {
            plan.push(Delivery {
                to: Position::Dealer,
                cards: 1,
                face_up: dealer_face_up(i + 1 == per_hand, 1),
                citation: cite,
            });
        }
    }
    if rs.community_cards > 0 && req.progressive_present {
        let c3 = rs.cite("11(3)");
        match (req.mode, req.shuffler_gives_three_for_community) {
            (DealingMode::Shuffler, true) => {
                plan.push(Delivery { to: Position::Discard, cards: 1, face_up: 0, citation: rs.cite("11(4)") });
                plan.push(Delivery {
                    to: Position::Community,
                    cards: rs.community_cards,
                    face_up: 0,
                    citation: rs.cite("11(4)"),
                });
            }
            (DealingMode::Shuffler, false) => {
                plan.push(Delivery { to: Position::Community, cards: rs.community_cards, face_up: 0, citation: c3 })
            }
            (DealingMode::Shoe, _) => {
                for _ in 0..rs.community_cards {
                    plan.push(Delivery { to: Position::Community, cards: 1, face_up: 0, citation: c3 });
                }
            }
        }
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::ruleset::RulesetId;

    fn req(mode: DealingMode, seats: &[u8]) -> DealRequest {
        DealRequest {
            mode,
            seats_with_bets: seats.iter().map(|&s| Seat(s)).collect(),
            progressive_present: false,
            shuffler_gives_three_for_community: false,
            sangong: None,
        }
    }

    fn targets(plan: &[Delivery]) -> Vec<String> {
        plan.iter().map(|d| format!("{}x{}{}", d.to, d.cards, if d.face_up > 0 { "^" } else { "" })).collect()
    }

    #[test]
    fn fortune2008_shoe_one_at_a_time_dealer_last_in_each_pass() {
        // Art. 7(1): "uma de cada vez, da esquerda para a direita … sendo a última distribuída ao croupier".
        let rs = Ruleset::new(RulesetId::Fortune3cp2008);
        let plan = deal_plan(&rs, &req(DealingMode::Shoe, &[5, 2])).unwrap();
        assert_eq!(targets(&plan), ["seat 2x1", "seat 5x1", "dealerx1"].repeat(3));
    }

    #[test]
    fn fortune2025_shoe_dealer_after_players_and_community_cards() {
        // Art. 11(1): "e a seguir distribui três cartas à mão da banca"; 11(3) two community cards.
        let rs = Ruleset::new(RulesetId::Fortune3cp2025);
        let mut r = req(DealingMode::Shoe, &[1, 3]);
        r.progressive_present = true;
        let plan = deal_plan(&rs, &r).unwrap();
        let mut expected = ["seat 1x1", "seat 3x1"].repeat(3);
        expected.extend(["dealerx1"; 3]);
        expected.extend(["communityx1"; 2]);
        assert_eq!(targets(&plan), expected);
        // 11(4): a shuffler that gives three → top card to the discard rack.
        let mut r = req(DealingMode::Shuffler, &[4]);
        r.progressive_present = true;
        r.shuffler_gives_three_for_community = true;
        let plan = deal_plan(&rs, &r).unwrap();
        assert_eq!(targets(&plan), ["seat 4x3", "dealerx3", "discardx1", "communityx2"]);
        assert_eq!(plan[2].citation.to_string(), "fortune3cp-2025 Art. 11(4)");
    }

    #[test]
    fn stud_dealer_last_card_face_up_by_design() {
        // stud-2004 Art. 7(1): the dealer's last card face up; 7(2): five at a time.
        let rs = Ruleset::new(RulesetId::Stud2004);
        let plan = deal_plan(&rs, &req(DealingMode::Shoe, &[1])).unwrap();
        assert_eq!(plan.len(), 10);
        assert_eq!(plan.iter().map(|d| d.face_up).sum::<u8>(), 1);
        assert_eq!(targets(&plan).last().unwrap(), "dealerx1^");
        let plan = deal_plan(&rs, &req(DealingMode::Shuffler, &[2, 6])).unwrap();
        assert_eq!(targets(&plan), ["seat 2x5", "seat 6x5", "dealerx5^"]);
    }

    #[test]
    fn sangong_dice_start_and_counter_clockwise_order() {
        // Art. 2(2): counting from the banker counter-clockwise; 2(4): all 8 places, 3 cards each.
        let deal = SanGongDeal { banker: Seat(3), dice_total: 10 };
        // Banker counts 1: 10 → 9 steps counter-clockwise → one step: seat 2.
        assert_eq!(sangong_first_place(deal, DiceCountStart::BankerIsOne).unwrap(), Seat(2));
        assert_eq!(
            sangong_first_place(SanGongDeal { banker: Seat(3), dice_total: 9 }, DiceCountStart::BankerIsOne).unwrap(),
            Seat(3)
        );
        assert_eq!(sangong_first_place(deal, DiceCountStart::BankerIsZero).unwrap(), Seat(1));
        let rs = Ruleset::new(RulesetId::Sangong1996);
        let mut r = req(DealingMode::Shuffler, &[]);
        r.sangong = Some(deal);
        let plan = deal_plan(&rs, &r).unwrap();
        assert_eq!(
            targets(&plan),
            ["seat 2x3", "seat 1x3", "seat 8x3", "seat 7x3", "seat 6x3", "seat 5x3", "seat 4x3", "seat 3x3"]
        );
        assert!(
            sangong_first_place(SanGongDeal { banker: Seat(3), dice_total: 3 }, DiceCountStart::BankerIsOne).is_err()
        );
    }

    #[test]
    fn seats_outside_the_table_are_refused() {
        let rs = Ruleset::new(RulesetId::Qpoker2004);
        let err = deal_plan(&rs, &req(DealingMode::Shoe, &[9])).unwrap_err();
        assert!(err.to_string().contains("seat 9"), "{err}");
        let sg = Ruleset::new(RulesetId::Sangong1996);
        assert!(deal_plan(&sg, &req(DealingMode::Shoe, &[1])).is_err());
    }
}
