//! The five rulesets as data: hands, bet spots, dealing procedures, pay tables,
//! dealer qualification and irregularity policy, each with its article.
//!
//! Everything a later stage needs to know about a game comes from here, so that
//! the simulator, the verifier and the odds calculator apply one set of rules.
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::eval3::{Category3, SuitTieBreaks, ThreeCardRules, TopStraightFlush};
use super::eval5::Category5;
use super::options::{RulesetOptions, StudDealerQualifier};
use super::RulesError;

/// The regulations tablecam knows, by ruleset id (../shared/GAMES.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum RulesetId {
    /// Fortune 3 Card Poker, Despacho 89/2025 (in force from 2025-10-31).
    #[serde(rename = "fortune3cp-2025")]
    Fortune3cp2025,
    /// Fortune 3 Card Poker, Despacho 78/2008 (revoked; for older recordings).
    #[serde(rename = "fortune3cp-2008")]
    Fortune3cp2008,
    /// Stud Poker (Caribbean style, five cards), DRE 61/2004.
    #[serde(rename = "stud-2004")]
    Stud2004,
    /// Q Poker (three cards), DRE 89/2004.
    #[serde(rename = "qpoker-2004")]
    Qpoker2004,
    /// San Gong, "Poker de 3 cartas" (富貴三公), Portaria 14/96/M.
    #[serde(rename = "sangong-1996")]
    Sangong1996,
}

impl RulesetId {
    /// Every ruleset, in the order of GAMES.md.
    pub const ALL: [RulesetId; 5] = [
        RulesetId::Fortune3cp2025,
        RulesetId::Fortune3cp2008,
        RulesetId::Stud2004,
        RulesetId::Qpoker2004,
        RulesetId::Sangong1996,
    ];

    /// The id as written in files and on the command line.
    pub const fn as_str(self) -> &'static str {
        match self {
            RulesetId::Fortune3cp2025 => "fortune3cp-2025",
            RulesetId::Fortune3cp2008 => "fortune3cp-2008",
            RulesetId::Stud2004 => "stud-2004",
            RulesetId::Qpoker2004 => "qpoker-2004",
            RulesetId::Sangong1996 => "sangong-1996",
        }
    }
}

impl fmt::Display for RulesetId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for RulesetId {
    type Err = RulesError;
    fn from_str(s: &str) -> Result<RulesetId, RulesError> {
        RulesetId::ALL.into_iter().find(|id| id.as_str() == s).ok_or_else(|| RulesError::UnknownRuleset(s.to_string()))
    }
}

/// A reference to an article of a ruleset's regulation, e.g. `stud-2004 Art. 11(1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Citation {
    /// The regulation.
    pub ruleset: RulesetId,
    /// The article as the regulation numbers it: `"11(1)"`, `"7(1)(6)"`.
    pub article: &'static str,
}

impl Citation {
    /// A citation of `article` of `ruleset`.
    pub const fn new(ruleset: RulesetId, article: &'static str) -> Citation {
        Citation { ruleset, article }
    }
}

impl fmt::Display for Citation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} Art. {}", self.ruleset, self.article)
    }
}

impl Serialize for Citation {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// The family of game a ruleset belongs to: decides the evaluator and the
/// shape of settlement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum GameKind {
    /// Three cards each; Ante + Play against a Q-high qualifier, Pair Plus, and
    /// (2025) Six Card Bonus and Progressive.
    FortuneThreeCard,
    /// Five cards each, dealer's last card face up; Ante + Raise (2× Ante).
    Stud,
    /// Three cards each; one bet against the dealer (fold loses half) and Pair Plus.
    QPoker,
    /// San Gong: eight places always dealt, each against the banker.
    SanGong,
}

/// A bet spot's kind. Names (snake case) are those of `tablecam odds --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BetKind {
    /// "Aposta inicial" (fortune3cp, stud).
    Ante,
    /// "Aposta dobrada": equal to the Ante, placed to continue (fortune3cp).
    Play,
    /// "Aposta adicional": exactly twice the Ante, placed to continue (stud-2004 Art. 6(6)).
    Raise,
    /// "Par Superior" / "Par e combinações vitoriosas" (fortune3cp, qpoker).
    PairPlus,
    /// "Bónus de Seis Cartas" (fortune3cp-2025 Art. 3(3), 14).
    SixCardBonus,
    /// "Jackpot Progressivo" (fortune3cp-2025 Art. 15, stud-2004 Art. 10).
    Progressive,
    /// The single bet against the dealer (qpoker-2004) or the banker (sangong-1996).
    Bet,
}

impl BetKind {
    /// The snake-case name.
    pub const fn as_str(self) -> &'static str {
        match self {
            BetKind::Ante => "ante",
            BetKind::Play => "play",
            BetKind::Raise => "raise",
            BetKind::PairPlus => "pair_plus",
            BetKind::SixCardBonus => "six_card_bonus",
            BetKind::Progressive => "progressive",
            BetKind::Bet => "bet",
        }
    }
}

impl fmt::Display for BetKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One line of a pay table: a hand category pays `pays_to_one` to 1.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PayLine<C> {
    /// The hand category.
    pub category: C,
    /// Net win per unit staked ("N to 1"); fractional for qpoker's 3 to 2.
    pub pays_to_one: f64,
    /// The article that sets it.
    pub citation: Citation,
}

/// A pay table: categories not listed lose.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PayTable<C: 'static> {
    /// Lines from the best category down.
    pub lines: Vec<PayLine<C>>,
}

impl<C: Copy + PartialEq> PayTable<C> {
    /// The line that pays `category`, if any.
    pub fn line(&self, category: C) -> Option<&PayLine<C>> {
        self.lines.iter().find(|l| l.category == category)
    }

    /// What `category` pays to 1, or `None` if it loses.
    pub fn pays(&self, category: C) -> Option<f64> {
        self.line(category).map(|l| l.pays_to_one)
    }
}

/// How a Progressive award is computed (fortune3cp-2025 Art. 16(3), stud-2004 Art. 10).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ProgressiveAward {
    /// The greater of a fixed amount and this fraction of the pool.
    FixedOrPoolShare {
        /// Fraction of the pool (1.0 for a royal, 0.10 for a straight flush).
        pool_fraction: f64,
    },
    /// A fixed amount set by the house (not given by the regulation).
    Fixed,
}

/// One line of a Progressive award table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ProgressiveLine {
    /// The five-card category that wins.
    pub category: Category5,
    /// How the award is computed.
    pub award: ProgressiveAward,
    /// The article.
    pub citation: Citation,
}

/// Dealing mode of a round: which one applies is seen on the table or told by
/// the backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DealingMode {
    /// Dealt by hand from a shoe ("sabot"), one card at a time.
    Shoe,
    /// Dealt by an automatic shuffler in packets.
    Shuffler,
}

/// Direction of dealing, seen from above the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// From the dealer's left to right ("da esquerda para a direita"): seat 1, 2, …
    Clockwise,
    /// San Gong's "sentido oposto ao dos ponteiros do relógio".
    CounterClockwise,
}

/// How one dealing mode of a ruleset deals.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DealingProcedure {
    /// Shoe or shuffler.
    pub mode: DealingMode,
    /// Cards given to a hand at each turn (1 from a shoe; 3 or 5 from a shuffler).
    pub cards_at_a_time: u8,
    /// The article.
    pub citation: Citation,
}

/// Where the dealer's cards come in the deal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DealerTurn {
    /// After every player hand in each pass ("sendo a última carta distribuída ao croupier").
    LastInEachPass,
    /// All three dealer cards after the players have all theirs (fortune3cp-2025
    /// Art. 11(1) literally: "e a seguir distribui três cartas à mão da banca").
    AfterAllPlayers,
    /// San Gong: the banker is one of the eight places and gets its turn in order.
    AsAPlace,
}

/// Which cards of a hand are dealt face up by design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FaceUpByDesign {
    /// None: every card face down (fortune3cp-2025 Art. 11(5), etc.).
    None,
    /// The dealer's last card (stud-2004 Art. 7(1)) or top card from a shuffler (7(2)).
    DealerLastCard,
}

/// Kinds of irregularity a round can have (the verifier detects them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IrregularityKind {
    /// Cards dealt out of the prescribed order.
    WrongDealOrder,
    /// A hand (or the dealer) with the wrong number of cards.
    WrongCardCount,
    /// Community cards missing, extra, or dealt when not allowed.
    WrongCommunityCards,
    /// A dealer card exposed during the deal (not one face up by design).
    DealerCardExposed,
    /// Exactly one player card exposed during the deal.
    OnePlayerCardExposed,
    /// More than one player card exposed during the deal.
    SeveralPlayerCardsExposed,
    /// Cards dealt to a hand with no bet.
    CardsToHandWithoutBet,
    /// The same card twice in a single-deck game.
    DuplicateCard,
    /// The shuffler failed during the deal.
    ShufflerFailure,
    /// A card of a hand was replaced by another between the deal and the reveal.
    /// No article names it; it is a surveillance alert (docs/rules.md §8).
    CardSwapped,
    /// A card was taken from a hand before settlement: the hand then has the
    /// wrong number of cards, with that article's consequence.
    CardRemoved,
}

impl IrregularityKind {
    /// All kinds.
    pub const ALL: [IrregularityKind; 11] = [
        IrregularityKind::WrongDealOrder,
        IrregularityKind::WrongCardCount,
        IrregularityKind::WrongCommunityCards,
        IrregularityKind::DealerCardExposed,
        IrregularityKind::OnePlayerCardExposed,
        IrregularityKind::SeveralPlayerCardsExposed,
        IrregularityKind::CardsToHandWithoutBet,
        IrregularityKind::DuplicateCard,
        IrregularityKind::ShufflerFailure,
        IrregularityKind::CardSwapped,
        IrregularityKind::CardRemoved,
    ];

    /// The snake-case name used in events and scenario files.
    pub fn as_str(self) -> &'static str {
        match self {
            IrregularityKind::WrongDealOrder => "wrong_deal_order",
            IrregularityKind::WrongCardCount => "wrong_card_count",
            IrregularityKind::WrongCommunityCards => "wrong_community_cards",
            IrregularityKind::DealerCardExposed => "dealer_card_exposed",
            IrregularityKind::OnePlayerCardExposed => "one_player_card_exposed",
            IrregularityKind::SeveralPlayerCardsExposed => "several_player_cards_exposed",
            IrregularityKind::CardsToHandWithoutBet => "cards_to_hand_without_bet",
            IrregularityKind::DuplicateCard => "duplicate_card",
            IrregularityKind::ShufflerFailure => "shuffler_failure",
            IrregularityKind::CardSwapped => "card_swapped",
            IrregularityKind::CardRemoved => "card_removed",
        }
    }
}

/// What an irregularity does to the round.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Consequence {
    /// The round is void: bets are returned (players may withdraw them), new deal.
    RoundVoid {
        /// Whether Progressive bets carry over to the next round.
        progressive_carries_over: bool,
    },
    /// Play continues as if nothing happened.
    Continues,
    /// The hand that received the cards is null (its bets returned); play continues.
    HandNull,
    /// The exposed dealer card is set aside face up and replaced; the rest is dealt face down.
    DealerCardSetAside,
    /// The exposed dealer card stays in the dealer's hand as its up-card; the
    /// dealer's remaining cards are dealt face down (stud-2004 default reading).
    DealerCardStaysUp,
    /// Not a regulation irregularity with a consequence of its own: surveillance
    /// must review the round (e.g. a swapped card); settlement is withheld by the verifier.
    SurveillanceReview,
    /// Suspend, reshuffle and deal again; bets stand.
    Redeal {
        /// Whether Progressive bets carry over to the next round.
        progressive_carries_over: bool,
    },
}

impl Consequence {
    /// Whether the round is over for every bet (void or redealt).
    pub const fn voids_round(self) -> bool {
        matches!(self, Consequence::RoundVoid { .. } | Consequence::Redeal { .. })
    }
}

/// One entry of a ruleset's irregularity policy.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IrregularityRule {
    /// The irregularity.
    pub kind: IrregularityKind,
    /// What it does.
    pub consequence: Consequence,
    /// The article that says so.
    pub citation: Citation,
}

/// Dealer qualification ("a banca só joga com…").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Qualifier {
    /// Three-card games: Q-high or better.
    QueenHigh,
    /// stud-2004: at least A-K (five odd cards with an ace and a king, or better).
    AceKing,
    /// stud-2004 literal option: the hand must contain an ace and a king, or be a pair or better.
    HoldsAceAndKing,
    /// No qualification (San Gong).
    None,
}

/// A ruleset: one regulation with its options applied.
#[derive(Debug, Clone, Serialize)]
pub struct Ruleset {
    /// The id.
    pub id: RulesetId,
    /// The game's name in the regulation.
    pub name: &'static str,
    /// The legal instrument.
    pub instrument: &'static str,
    /// Game family.
    pub kind: GameKind,
    /// Decks in the shoe.
    pub decks: u8,
    /// Player hands (places besides the dealer's), least and most.
    pub player_hands: (u8, u8),
    /// Cards in each hand, the dealer's included.
    pub cards_per_hand: u8,
    /// Community cards when a Progressive bet is present.
    pub community_cards: u8,
    /// Bet spots of a hand, from the dealer outwards, with the article that defines them.
    pub bet_spots: Vec<(BetKind, Citation)>,
    /// Dealing procedures (shoe, shuffler).
    pub dealing: Vec<DealingProcedure>,
    /// Where the dealer's cards come.
    pub dealer_turn: DealerTurn,
    /// Direction of dealing and paying.
    pub direction: Direction,
    /// Cards dealt face up by design.
    pub face_up_by_design: FaceUpByDesign,
    /// Dealer qualification and its article.
    pub qualifier: (Qualifier, Citation),
    /// Three-card ranking rules (three-card games).
    pub three_card: Option<ThreeCardRules>,
    /// Pay table of a winning hand against a qualified dealer on the main bet:
    /// fortune3cp-2025's ante bonus, 2008's win table, stud's Raise table, qpoker's bet table.
    pub main_bonus3: Option<PayTable<Category3>>,
    /// Pay table of the stud Raise (five-card categories).
    pub raise_table: Option<PayTable<Category5>>,
    /// Pair Plus pay table.
    pub pair_plus: Option<PayTable<Category3>>,
    /// Six Card Bonus pay table.
    pub six_card_bonus: Option<PayTable<Category5>>,
    /// Progressive award table.
    pub progressive: Vec<ProgressiveLine>,
    /// San Gong house commission on winning bets, as a fraction (Art. 9).
    pub commission: f64,
    /// Irregularity policy.
    pub irregularities: Vec<IrregularityRule>,
    /// Options (ambiguities) as chosen.
    pub options: RulesetOptions,
}

fn table3(id: RulesetId, lines: &[(Category3, f64, &'static str)]) -> PayTable<Category3> {
    PayTable {
        lines: lines
            .iter()
            .map(|&(category, pays_to_one, a)| PayLine { category, pays_to_one, citation: Citation::new(id, a) })
            .collect(),
    }
}

fn table5(id: RulesetId, lines: &[(Category5, f64, &'static str)]) -> PayTable<Category5> {
    PayTable {
        lines: lines
            .iter()
            .map(|&(category, pays_to_one, a)| PayLine { category, pays_to_one, citation: Citation::new(id, a) })
            .collect(),
    }
}

impl Ruleset {
    /// The ruleset with default options (the documented defaults of docs/rules.md).
    pub fn new(id: RulesetId) -> Ruleset {
        Ruleset::with_options(id, RulesetOptions::default()).expect("default options are valid for every ruleset")
    }

    /// The ruleset with `options` applied; fails if an option does not apply to it.
    pub fn with_options(id: RulesetId, options: RulesetOptions) -> Result<Ruleset, RulesError> {
        options.validate_for(id)?;
        use Category3 as C3;
        use Category5 as C5;
        use IrregularityKind as K;
        let c = |a: &'static str| Citation::new(id, a);
        let rule = |kind, consequence, a: &'static str| IrregularityRule { kind, consequence, citation: c(a) };
        let void = |carry| Consequence::RoundVoid { progressive_carries_over: carry };
        let ruleset = match id {
            RulesetId::Fortune3cp2025 => Ruleset {
                id,
                name: "Fortune 3 Card Poker",
                instrument: "Despacho do Secretário para a Economia e Finanças n.º 89/2025",
                kind: GameKind::FortuneThreeCard,
                decks: 1,
                player_hands: (5, 7),
                cards_per_hand: 3,
                community_cards: 2,
                bet_spots: vec![
                    (BetKind::SixCardBonus, c("5(4)")),
                    (BetKind::Progressive, c("5(4)")),
                    (BetKind::PairPlus, c("5(3)")),
                    (BetKind::Ante, c("5(3)")),
                    (BetKind::Play, c("5(3)")),
                ],
                dealing: vec![
                    DealingProcedure { mode: DealingMode::Shoe, cards_at_a_time: 1, citation: c("11(1)") },
                    DealingProcedure { mode: DealingMode::Shuffler, cards_at_a_time: 3, citation: c("11(2)") },
                ],
                dealer_turn: match options.f2025_shoe_dealer_cards() {
                    super::options::DealerCardsTiming::AfterPlayers | super::options::DealerCardsTiming::Either => {
                        DealerTurn::AfterAllPlayers
                    }
                    super::options::DealerCardsTiming::LastEachPass => DealerTurn::LastInEachPass,
                },
                direction: Direction::Clockwise,
                face_up_by_design: FaceUpByDesign::None,
                qualifier: (Qualifier::QueenHigh, c("13(1)")),
                three_card: Some(ThreeCardRules {
                    top_straight_flush: TopStraightFlush::Akq,
                    suit_tie_breaks: options.three_odd_cards_tie(),
                }),
                main_bonus3: Some(table3(
                    id,
                    &[
                        (C3::StraightFlush, 5.0, "13(4)(1)"),
                        (C3::Trips, 4.0, "13(4)(2)"),
                        (C3::Straight, 1.0, "13(4)(3)"),
                    ],
                )),
                raise_table: None,
                pair_plus: Some(table3(
                    id,
                    &[
                        (C3::StraightFlush, 40.0, "16(1)(1)"),
                        (C3::Trips, 25.0, "16(1)(2)"),
                        (C3::Straight, 5.0, "16(1)(3)"),
                        (C3::Flush, 4.0, "16(1)(4)"),
                        (C3::Pair, 1.0, "16(1)(5)"),
                    ],
                )),
                six_card_bonus: Some(table5(
                    id,
                    &[
                        (C5::RoyalFlush, 500.0, "16(2)(1)"),
                        (C5::StraightFlush, 100.0, "16(2)(2)"),
                        (C5::Quads, 50.0, "16(2)(3)"),
                        (C5::FullHouse, 20.0, "16(2)(4)"),
                        (C5::Flush, 15.0, "16(2)(5)"),
                        (C5::Straight, 10.0, "16(2)(6)"),
                        (C5::Trips, 7.0, "16(2)(7)"),
                    ],
                )),
                progressive: vec![
                    ProgressiveLine {
                        category: C5::RoyalFlush,
                        award: ProgressiveAward::FixedOrPoolShare { pool_fraction: 1.0 },
                        citation: c("16(3)(1)"),
                    },
                    ProgressiveLine {
                        category: C5::StraightFlush,
                        award: ProgressiveAward::FixedOrPoolShare { pool_fraction: 0.10 },
                        citation: c("16(3)(2)"),
                    },
                    ProgressiveLine { category: C5::Quads, award: ProgressiveAward::Fixed, citation: c("16(3)(3)") },
                    ProgressiveLine {
                        category: C5::FullHouse,
                        award: ProgressiveAward::Fixed,
                        citation: c("16(3)(4)"),
                    },
                    ProgressiveLine { category: C5::Flush, award: ProgressiveAward::Fixed, citation: c("16(3)(5)") },
                ],
                commission: 0.0,
                irregularities: {
                    let all_voids = options.progressive_carry_over_all_voids();
                    vec![
                        rule(K::WrongDealOrder, void(true), "17(1)(1)"),
                        rule(K::WrongCardCount, void(true), "17(1)(1)"),
                        rule(K::WrongCommunityCards, void(true), "17(1)(1)"),
                        rule(K::DealerCardExposed, void(all_voids), "17(1)(2)"),
                        rule(K::SeveralPlayerCardsExposed, void(all_voids), "17(1)(3)"),
                        rule(K::OnePlayerCardExposed, Consequence::Continues, "17(4)(1)"),
                        rule(K::CardsToHandWithoutBet, Consequence::HandNull, "17(4)(2)"),
                        // One deck (Art. 2(1)): a duplicate means the deal itself is wrong.
                        rule(K::DuplicateCard, void(true), "17(1)(1)"),
                        // "suspender imediatamente a jogada": the bets stand for the new deal,
                        // or the round is void and they may be withdrawn (A-4); 17(3) carries
                        // the Progressive over either way.
                        rule(
                            K::ShufflerFailure,
                            if options.shuffler_failure_bets_withdrawable() {
                                void(true)
                            } else {
                                Consequence::Redeal { progressive_carries_over: true }
                            },
                            "17(2)",
                        ),
                    ]
                },
                options,
            },
            RulesetId::Fortune3cp2008 => Ruleset {
                id,
                name: "Fortune 3 Card Poker",
                instrument: "Despacho do Secretário para a Economia e Finanças n.º 78/2008 (revoked by 89/2025)",
                kind: GameKind::FortuneThreeCard,
                decks: 1,
                player_hands: (1, 7),
                cards_per_hand: 3,
                community_cards: 0,
                bet_spots: vec![(BetKind::PairPlus, c("2")), (BetKind::Ante, c("2")), (BetKind::Play, c("2"))],
                dealing: vec![
                    DealingProcedure { mode: DealingMode::Shoe, cards_at_a_time: 1, citation: c("7(1)") },
                    DealingProcedure { mode: DealingMode::Shuffler, cards_at_a_time: 3, citation: c("7(2)") },
                ],
                dealer_turn: DealerTurn::LastInEachPass,
                direction: Direction::Clockwise,
                face_up_by_design: FaceUpByDesign::None,
                qualifier: (Qualifier::QueenHigh, c("9(5)")),
                three_card: Some(ThreeCardRules {
                    top_straight_flush: options.top_straight_flush(),
                    suit_tie_breaks: options.three_odd_cards_tie(),
                }),
                // Art. 9(8): paid to winners against a qualified dealer.
                main_bonus3: Some(table3(
                    id,
                    &[(C3::StraightFlush, 5.0, "9(8)(1)"), (C3::Trips, 4.0, "9(8)(2)"), (C3::Straight, 1.0, "9(8)(3)")],
                )),
                raise_table: None,
                pair_plus: Some(table3(
                    id,
                    &[
                        (C3::StraightFlush, 40.0, "10(1)"),
                        (C3::Trips, 25.0, "10(2)"),
                        (C3::Straight, 5.0, "10(3)"),
                        (C3::Flush, 4.0, "10(4)"),
                        (C3::Pair, 1.0, "10(5)"),
                    ],
                )),
                six_card_bonus: None,
                progressive: vec![],
                commission: 0.0,
                irregularities: vec![
                    rule(K::WrongDealOrder, void(false), "11(1)"),
                    rule(K::WrongCardCount, void(false), "11(1)"),
                    // "deixada de fora, à vista": set aside by default, kept up as an option (B-3).
                    rule(
                        K::DealerCardExposed,
                        if options.f2008_exposed_dealer_card_kept() {
                            Consequence::DealerCardStaysUp
                        } else {
                            Consequence::DealerCardSetAside
                        },
                        "11(2)",
                    ),
                    rule(K::OnePlayerCardExposed, Consequence::Continues, "11(2)"),
                    rule(K::SeveralPlayerCardsExposed, Consequence::Continues, "11(2)"),
                    rule(K::CardsToHandWithoutBet, Consequence::HandNull, "11(3)"),
                    rule(K::DuplicateCard, void(false), "11(1)"),
                    rule(K::ShufflerFailure, void(false), "11(4)"),
                ],
                options,
            },
            RulesetId::Stud2004 => Ruleset {
                id,
                name: "Stud Poker",
                instrument: "Despacho Regulamentar Externo n.º 61/2004",
                kind: GameKind::Stud,
                decks: 1,
                player_hands: (1, 7),
                cards_per_hand: 5,
                community_cards: 0,
                bet_spots: vec![(BetKind::Progressive, c("2")), (BetKind::Ante, c("2")), (BetKind::Raise, c("2"))],
                dealing: vec![
                    DealingProcedure { mode: DealingMode::Shoe, cards_at_a_time: 1, citation: c("7(1)") },
                    DealingProcedure { mode: DealingMode::Shuffler, cards_at_a_time: 5, citation: c("7(2)") },
                ],
                dealer_turn: DealerTurn::LastInEachPass,
                direction: Direction::Clockwise,
                face_up_by_design: FaceUpByDesign::DealerLastCard,
                qualifier: match options.stud_dealer_qualifier() {
                    StudDealerQualifier::AkOrBetter => (Qualifier::AceKing, c("9(1)")),
                    StudDealerQualifier::HoldsAceAndKing => (Qualifier::HoldsAceAndKing, c("9(1)")),
                },
                three_card: None,
                main_bonus3: None,
                raise_table: Some(table5(
                    id,
                    &[
                        (C5::RoyalFlush, f64::from(options.stud_royal_raise_pays()), "9(5)(9)"),
                        (C5::StraightFlush, 50.0, "9(5)(8)"),
                        (C5::Quads, 20.0, "9(5)(7)"),
                        (C5::FullHouse, 7.0, "9(5)(6)"),
                        (C5::Flush, 5.0, "9(5)(5)"),
                        (C5::Straight, 4.0, "9(5)(4)"),
                        (C5::Trips, 3.0, "9(5)(3)"),
                        (C5::TwoPair, 2.0, "9(5)(2)"),
                        (C5::Pair, 1.0, "9(5)(1)"),
                        (C5::HighCard, 1.0, "9(5)(1)"),
                    ],
                )),
                pair_plus: None,
                six_card_bonus: None,
                progressive: vec![
                    ProgressiveLine {
                        category: C5::RoyalFlush,
                        award: ProgressiveAward::FixedOrPoolShare { pool_fraction: 1.0 },
                        citation: c("10(2)"),
                    },
                    ProgressiveLine {
                        category: C5::StraightFlush,
                        award: ProgressiveAward::FixedOrPoolShare { pool_fraction: 0.10 },
                        citation: c("10(3)"),
                    },
                    ProgressiveLine { category: C5::Quads, award: ProgressiveAward::Fixed, citation: c("10(4)") },
                    ProgressiveLine { category: C5::FullHouse, award: ProgressiveAward::Fixed, citation: c("10(4)") },
                    ProgressiveLine { category: C5::Flush, award: ProgressiveAward::Fixed, citation: c("10(4)") },
                ],
                commission: 0.0,
                irregularities: vec![
                    rule(K::WrongDealOrder, void(true), "11(1)"),
                    rule(K::WrongCardCount, void(true), "11(1)"),
                    // "duas ou mais cartas forem expostas": any cards, the designed up-card excluded.
                    rule(K::SeveralPlayerCardsExposed, void(true), "11(1)"),
                    rule(K::OnePlayerCardExposed, Consequence::Continues, "11(2)"),
                    rule(
                        K::DealerCardExposed,
                        if options.stud_exposed_dealer_card_burn() {
                            Consequence::DealerCardSetAside
                        } else {
                            Consequence::DealerCardStaysUp
                        },
                        "11(2)",
                    ),
                    rule(K::CardsToHandWithoutBet, Consequence::HandNull, "11(3)"),
                    rule(K::DuplicateCard, void(true), "11(1)"),
                    rule(K::ShufflerFailure, void(true), "11(4)"),
                ],
                options,
            },
            RulesetId::Qpoker2004 => Ruleset {
                id,
                name: "Q Poker",
                instrument: "Despacho Regulamentar Externo n.º 89/2004",
                kind: GameKind::QPoker,
                decks: options.qpoker_decks(),
                player_hands: (1, 7),
                cards_per_hand: 3,
                community_cards: 0,
                bet_spots: vec![(BetKind::PairPlus, c("5(1)")), (BetKind::Bet, c("5(1)"))],
                dealing: vec![
                    DealingProcedure { mode: DealingMode::Shoe, cards_at_a_time: 1, citation: c("7(1)") },
                    DealingProcedure { mode: DealingMode::Shuffler, cards_at_a_time: 3, citation: c("7(2)") },
                ],
                dealer_turn: DealerTurn::LastInEachPass,
                direction: Direction::Clockwise,
                face_up_by_design: FaceUpByDesign::None,
                qualifier: (Qualifier::QueenHigh, c("9(4)")),
                three_card: Some(ThreeCardRules {
                    top_straight_flush: TopStraightFlush::Akq,
                    suit_tie_breaks: SuitTieBreaks::QPoker,
                }),
                main_bonus3: Some(table3(
                    id,
                    &[(C3::StraightFlush, 3.0, "9(7)(1)"), (C3::Trips, 2.0, "9(7)(2)"), (C3::Straight, 1.5, "9(7)(3)")],
                )),
                raise_table: None,
                pair_plus: Some(table3(
                    id,
                    &[
                        (C3::StraightFlush, 40.0, "10(1)"),
                        (C3::Trips, 30.0, "10(2)"),
                        (C3::Straight, 6.0, "10(3)"),
                        (C3::Flush, 4.0, "10(4)"),
                        (C3::Pair, 1.0, "10(5)"),
                    ],
                )),
                six_card_bonus: None,
                progressive: vec![],
                commission: 0.0,
                irregularities: vec![
                    rule(K::WrongDealOrder, void(false), "11(1)"),
                    rule(K::WrongCardCount, void(false), "11(1)"),
                    rule(K::OnePlayerCardExposed, Consequence::Continues, "11(2)"),
                    rule(K::SeveralPlayerCardsExposed, Consequence::Continues, "11(2)"),
                    rule(K::DealerCardExposed, void(false), "11(3)"),
                    rule(K::CardsToHandWithoutBet, Consequence::HandNull, "11(4)"),
                    rule(K::DuplicateCard, void(false), "11(1)"),
                    rule(K::ShufflerFailure, void(false), "11(5)"),
                ],
                options,
            },
            RulesetId::Sangong1996 => Ruleset {
                id,
                name: "Poker de 3 cartas (San Gong, 富貴三公)",
                instrument: "Portaria n.º 14/96/M",
                kind: GameKind::SanGong,
                decks: 1,
                // Always 8 places including the banker's (Art. 2(4), 3).
                player_hands: (7, 7),
                cards_per_hand: 3,
                community_cards: 0,
                bet_spots: vec![(BetKind::Bet, c("3"))],
                dealing: vec![DealingProcedure {
                    mode: DealingMode::Shuffler,
                    cards_at_a_time: 3,
                    citation: c("2(4)"),
                }],
                dealer_turn: DealerTurn::AsAPlace,
                direction: Direction::CounterClockwise,
                face_up_by_design: FaceUpByDesign::None,
                qualifier: (Qualifier::None, c("7(1)")),
                three_card: None,
                main_bonus3: None,
                raise_table: None,
                pair_plus: None,
                six_card_bonus: None,
                progressive: vec![],
                commission: 0.05,
                irregularities: vec![
                    rule(K::WrongDealOrder, void(false), "2(4)"),
                    rule(K::WrongCardCount, void(false), "2(4)"),
                    // Art. 4: "as cartas expostas são válidas e o jogo continua".
                    rule(K::OnePlayerCardExposed, Consequence::Continues, "4"),
                    rule(K::SeveralPlayerCardsExposed, Consequence::Continues, "4"),
                    rule(K::DealerCardExposed, Consequence::Continues, "4"),
                    rule(K::DuplicateCard, void(false), "1"),
                ],
                options,
            },
        };
        let mut ruleset = ruleset;
        // A removed card leaves the hand with the wrong number of cards; a swap
        // has no article of its own and is cited against the dealing article
        // that fixes which cards belong to a hand.
        if let Some(count) = ruleset.irregularity(K::WrongCardCount).copied() {
            ruleset.irregularities.push(IrregularityRule { kind: K::CardRemoved, ..count });
        }
        let dealing = ruleset.dealing[0].citation;
        ruleset.irregularities.push(IrregularityRule {
            kind: K::CardSwapped,
            consequence: Consequence::SurveillanceReview,
            citation: dealing,
        });
        Ok(ruleset)
    }

    /// The policy for `kind`, or `None` when the regulation has no rule for it
    /// (e.g. San Gong deals all eight places whatever the bets).
    pub fn irregularity(&self, kind: IrregularityKind) -> Option<&IrregularityRule> {
        self.irregularities.iter().find(|r| r.kind == kind)
    }

    /// What becomes of a dealer card exposed during the deal (`DealerCardSetAside`,
    /// `DealerCardStaysUp`, a void…), where the ruleset names it.
    pub fn exposed_dealer_card(&self) -> Option<Consequence> {
        self.irregularity(IrregularityKind::DealerCardExposed).map(|r| r.consequence)
    }

    /// The three-card rules; panics for five-card and San Gong rulesets.
    pub fn three_card_rules(&self) -> ThreeCardRules {
        self.three_card.unwrap_or_default()
    }

    /// The dealer's turns a deal may legally take: `dealer_turn`, and with fortune3cp-2025's
    /// `f2025_shoe_dealer_cards = either` (docs/rules.md A-5) both readings of Art. 11(1).
    pub fn dealer_turns(&self) -> Vec<DealerTurn> {
        if self.id == RulesetId::Fortune3cp2025
            && self.options.f2025_shoe_dealer_cards() == super::options::DealerCardsTiming::Either
        {
            vec![DealerTurn::AfterAllPlayers, DealerTurn::LastInEachPass]
        } else {
            vec![self.dealer_turn]
        }
    }

    /// A citation of this ruleset's `article`.
    pub const fn cite(&self, article: &'static str) -> Citation {
        Citation::new(self.id, article)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_unknown_ids_are_named() {
        for id in RulesetId::ALL {
            assert_eq!(id.as_str().parse::<RulesetId>().unwrap(), id);
            assert_eq!(serde_json::to_string(&id).unwrap(), format!("\"{id}\""));
            let r = Ruleset::new(id);
            assert_eq!(r.id, id);
            assert!(!r.dealing.is_empty());
        }
        match "poker-1999".parse::<RulesetId>() {
            Err(RulesError::UnknownRuleset(s)) => assert_eq!(s, "poker-1999"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn citations_read_as_the_regulation_numbers_them() {
        let r = Ruleset::new(RulesetId::Stud2004);
        assert_eq!(r.cite("11(1)").to_string(), "stud-2004 Art. 11(1)");
        let royal = r.raise_table.as_ref().unwrap().line(Category5::RoyalFlush).unwrap();
        assert_eq!((royal.pays_to_one, royal.citation.to_string().as_str()), (100.0, "stud-2004 Art. 9(5)(9)"));
    }

    #[test]
    fn irregularity_policies_follow_the_articles() {
        use IrregularityKind as K;
        let f25 = Ruleset::new(RulesetId::Fortune3cp2025);
        // Art. 17(1)(3) "mais do que uma carta do jogador" → void; 17(4)(1) one card → continues.
        assert!(f25.irregularity(K::SeveralPlayerCardsExposed).unwrap().consequence.voids_round());
        assert_eq!(f25.irregularity(K::OnePlayerCardExposed).unwrap().consequence, Consequence::Continues);
        assert_eq!(f25.irregularity(K::CardsToHandWithoutBet).unwrap().consequence, Consequence::HandNull);
        // 17(3): progressive carries over on a dealing breach, not (by default) on an exposed dealer card.
        assert_eq!(
            f25.irregularity(K::WrongDealOrder).unwrap().consequence,
            Consequence::RoundVoid { progressive_carries_over: true }
        );
        assert_eq!(
            f25.irregularity(K::DealerCardExposed).unwrap().consequence,
            Consequence::RoundVoid { progressive_carries_over: false }
        );
        // 17(2): after a shuffler failure the bets stand for the new deal (A-4)…
        assert_eq!(
            f25.irregularity(K::ShufflerFailure).unwrap().consequence,
            Consequence::Redeal { progressive_carries_over: true }
        );
        // …or, under `shuffler_failure_bets = withdrawable`, the round is void (17(3) still
        // carries the Progressive over).
        let withdrawable: crate::rules::options::RulesetOptions =
            serde_json::from_str(r#"{"shuffler_failure_bets": "withdrawable"}"#).unwrap();
        let f25_void = Ruleset::with_options(RulesetId::Fortune3cp2025, withdrawable.clone()).unwrap();
        let failure = f25_void.irregularity(K::ShufflerFailure).unwrap();
        assert_eq!(failure.consequence, Consequence::RoundVoid { progressive_carries_over: true });
        assert_eq!(failure.citation.to_string(), "fortune3cp-2025 Art. 17(2)");
        assert!(Ruleset::with_options(RulesetId::Fortune3cp2008, withdrawable).is_err(), "a 2025 option only");
        // fortune3cp-2008 Art. 11(2): exposures do not void, a dealer card is set aside.
        let f08 = Ruleset::new(RulesetId::Fortune3cp2008);
        assert_eq!(f08.irregularity(K::SeveralPlayerCardsExposed).unwrap().consequence, Consequence::Continues);
        assert_eq!(f08.irregularity(K::DealerCardExposed).unwrap().consequence, Consequence::DealerCardSetAside);
        // …or, reading B-3's alternative, kept in the hand face up.
        let keep = crate::rules::options::RulesetOptions {
            exposed_dealer_card: Some(crate::rules::options::F2008ExposedDealerCard::KeepInHand),
            ..Default::default()
        };
        let f08_keep = Ruleset::with_options(RulesetId::Fortune3cp2008, keep.clone()).unwrap();
        assert_eq!(f08_keep.irregularity(K::DealerCardExposed).unwrap().consequence, Consequence::DealerCardStaysUp);
        assert!(Ruleset::with_options(RulesetId::Fortune3cp2025, keep).is_err(), "a 2008 option only");
        // qpoker-2004 Art. 11(3): an exposed dealer card voids the round.
        let q = Ruleset::new(RulesetId::Qpoker2004);
        assert!(q.irregularity(K::DealerCardExposed).unwrap().consequence.voids_round());
        assert_eq!(q.irregularity(K::SeveralPlayerCardsExposed).unwrap().consequence, Consequence::Continues);
        // stud-2004 Art. 11(1): two or more exposed → void, progressive carries over.
        let s = Ruleset::new(RulesetId::Stud2004);
        assert_eq!(
            s.irregularity(K::SeveralPlayerCardsExposed).unwrap().consequence,
            Consequence::RoundVoid { progressive_carries_over: true }
        );
        assert_eq!(s.irregularity(K::DealerCardExposed).unwrap().consequence, Consequence::DealerCardStaysUp);
        // sangong-1996 Art. 4: exposed cards are valid; no bet-less hands (all 8 dealt).
        let g = Ruleset::new(RulesetId::Sangong1996);
        assert_eq!(g.irregularity(K::DealerCardExposed).unwrap().consequence, Consequence::Continues);
        assert!(g.irregularity(K::CardsToHandWithoutBet).is_none());
    }
}
