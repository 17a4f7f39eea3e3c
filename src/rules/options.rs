//! Ruleset options: where a regulation is ambiguous, tablecam applies the
//! default documented in docs/rules.md and lets a table choose the alternative.
//!
//! Options are read from a table's configuration (serde, unknown fields
//! rejected). An option that does not belong to the ruleset is an error naming
//! the option and the rulesets it belongs to, so that a misplaced option is
//! never silently ignored.
use serde::{Deserialize, Serialize};

use super::eval3::{SuitTieBreaks, TopStraightFlush};
use super::ruleset::RulesetId;
use super::sangong::SanGongRule;
use super::RulesError;

macro_rules! option_enum {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
        #[serde(rename_all = "snake_case")]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }
    };
}

option_enum! {
    /// fortune3cp: three odd cards of equal ranks (ambiguity A-2).
    ThreeOddCardsTie {
        /// A tie (push): the text gives no suit order for this game.
        #[default] Push,
        /// Broken by the suit of the highest card.
        SuitOfHighestCard,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 13(4): who gets the ante bonus (ambiguity A-8).
    AnteBonusScope {
        /// Every player who placed Play, even one who loses to the dealer.
        #[default] Played,
        /// Only a player who played and did not lose.
        PlayedNotLost,
        /// Every Ante, folded hands included.
        AnyAnte,
    }
}

option_enum! {
    /// fortune3cp: Ante and Play when player and qualified dealer are equal (A-7).
    AntePlayTie {
        /// Both bets are returned.
        #[default] Push,
        /// The dealer wins ties.
        DealerWins,
    }
}

option_enum! {
    /// fortune3cp-2008 Art. 9(8): which bets the win table pays (B-2).
    WinTableScope {
        /// Ante and Play are both paid by the table.
        #[default] AnteAndPlay,
        /// The Ante is paid by the table, the Play 1 to 1.
        AnteOnly,
        /// The Play is paid by the table, the Ante 1 to 1.
        PlayOnly,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 11(1): when the dealer's three cards come from a shoe (A-5).
    DealerCardsTiming {
        /// After all player cards ("e a seguir distribui três cartas à mão da banca").
        #[default] AfterPlayers,
        /// Last in each pass, as in 2008 Art. 7(1).
        LastEachPass,
        /// Either: the verifier accepts both orders (the simulator deals `after_players`).
        Either,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 17(1)(3): counting exposed player cards (A-10).
    ExposedCount {
        /// Across all players of the round.
        #[default] PerRound,
        /// Within one hand.
        PerHand,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 17(3): when Progressive bets carry over (A-12).
    ProgressiveCarryOver {
        /// Only on a dealing breach (17(1)(1)) or shuffler failure (17(2)), as written.
        #[default] Text,
        /// On every void.
        AllVoids,
    }
}

option_enum! {
    /// stud-2004 Art. 9(1): dealer qualification (C-2).
    StudDealerQualifier {
        /// A-K high or better.
        #[default] AkOrBetter,
        /// Literally: holds an ace and a king, or a pair or better.
        HoldsAceAndKing,
    }
}

option_enum! {
    /// stud-2004 Art. 11(2): an exposed dealer card (C-3).
    StudExposedDealerCard {
        /// It stays face up as the dealer's up-card.
        #[default] KeepAsUpcard,
        /// It is set aside face up and replaced.
        Burn,
    }
}

option_enum! {
    /// fortune3cp-2008 Art. 11(2): an exposed dealer card, "deixada de fora, à vista" (B-3).
    F2008ExposedDealerCard {
        /// It is set aside face up and the hand completed with the next card.
        #[default] Burn,
        /// It stays in the dealer's hand, face up.
        KeepInHand,
    }
}

option_enum! {
    /// Hands the text cannot separate (duplicates, several decks) (D-2).
    IdenticalHands {
        /// A push.
        #[default] Push,
        /// The dealer wins.
        DealerWins,
    }
}

option_enum! {
    /// qpoker-2004 Art. 9(5): dealer not qualified (D-4).
    QpokerUnqualifiedPays {
        /// The player wins half the bet (net +0.5).
        #[default] HalfToOne,
        /// The player gets back only half the bet (net −0.5).
        ReturnHalf,
    }
}

option_enum! {
    /// sangong-1996 Art. 2(2): counting the dice total from the banker (E-1).
    DiceCountStart {
        /// The banker's place counts as 1.
        #[default] BankerIsOne,
        /// The place after the banker counts as 1.
        BankerIsZero,
    }
}

option_enum! {
    /// sangong-1996 Art. 9: commission on the banker's winnings (E-4).
    BankerCommission {
        /// 5% of the banker's net win of the round.
        #[default] NetWin,
        /// 5% of each bet the banker wins.
        EachWinningBet,
        /// No commission on the banker.
        None,
    }
}

option_enum! {
    /// sangong-1996 Art. 7(2) against the annex: two hands of the same points (E-2).
    SangongEqualPoints {
        /// The annex's classes first (more figures is better within a point total); the highest
        /// card decides only within one class.
        #[default] ClassThenHighCard,
        /// Art. 7(2) as written: the same number of points is decided by the highest card alone,
        /// whatever the figures (three figures stay the annex's top combination).
        HighCardOnly,
    }
}

option_enum! {
    /// sangong-1996 Art. 7(2): "a carta de valor mais elevado", comparing highest cards (E-3).
    SangongHighCardCompare {
        /// Each hand's single highest card: its rank, then its suit (S > H > C > D).
        #[default] TopCardRankThenSuit,
        /// The ranks of the highest, second and third cards in turn; the suit of the highest card
        /// only when all three ranks are equal.
        CascadeThenSuit,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 15(4)–(5), stud-2004 Art. 10(6)–(7): what a Progressive award's
    /// percentage is of (A-13).
    ProgressivePercentBase {
        /// The pool left when the award is paid, awards taken in the article's order.
        #[default] Sequential,
        /// The pool as it stood when the round began.
        RoundStart,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 15(6), stud-2004 Art. 10(8): which awards reduce the pool (A-13).
    ProgressivePoolDebit {
        /// Every award paid.
        #[default] AllAwards,
        /// Only awards paid as a share of the pool; a fixed sum is the house's.
        PercentageAwardsOnly,
    }
}

option_enum! {
    /// stud-2004 Art. 9(5)(7)–(9): what the house's maximum per round caps (C-1b).
    StudMaxPayoutScope {
        /// Each hand's Raise winnings on quads, a straight flush or a royal.
        #[default] PerHand,
        /// The total of those winnings over the round's hands, shared pro rata when over it.
        PerRoundTotal,
    }
}

option_enum! {
    /// stud-2004 Art. 6(7), 10: a folded hand's Progressive bet (C-4).
    StudProgressiveOnFold {
        /// Lost: the hand's cards are collected and never shown.
        #[default] Forfeited,
        /// Paid by the hand's cards all the same.
        StillPaid,
    }
}

option_enum! {
    /// stud-2004 Art. 10(5): two or more royal flushes in one round (C-5).
    RoyalShare {
        /// They share the larger of the jackpot and the fixed sum: each max(pool, fixed) / n.
        #[default] SplitLarger,
        /// Each gets the larger of its share of the jackpot and the fixed sum: max(pool / n, fixed).
        LargerOfSplit,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 11(3): when in the deal the community cards may come (A-6).
    CommunityCardTiming {
        /// At any point of the deal: the article names none.
        #[default] Any,
        /// Only once the dealer's hand is complete.
        AfterDealer,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 11(3), 15(2): community cards dealt with no Progressive bet (A-6).
    CommunityWithoutProgressive {
        /// Allowed: 15(2) speaks of community cards on a table where nobody bet.
        #[default] Allowed,
        /// A breach of Art. 11(3), voiding the round (17(1)(1)).
        Breach,
    }
}

option_enum! {
    /// stud-2004 Art. 11(1): which exposed cards count towards "duas ou mais cartas" (C-7).
    StudExposedCountScope {
        /// Every card exposed in the deal, the dealer's included (its designed up-card never).
        #[default] AllCards,
        /// Player cards only.
        PlayerCardsOnly,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 17(2): the bets after a shuffler failure (A-4).
    ShufflerFailureBets {
        /// They stand for the new deal.
        #[default] Stand,
        /// The round is void: players may withdraw them.
        Withdrawable,
    }
}

option_enum! {
    /// sangong-1996 Art. 2(3), 5(3): where settlement against the banker's capital starts (E-6).
    SangongSettlementStart {
        /// The place that received the first cards (Art. 2(2)).
        #[default] FirstDealtPlace,
        /// The place next to the banker, counter-clockwise.
        BankerNextPlace,
    }
}

option_enum! {
    /// fortune3cp-2025 Art. 4(2)–(3): which basic bets an additional bet needs (A-9).
    AdditionalBetRequires {
        /// Either basic bet: 4(1) lets each stand alone, and "as apostas previstas no n.º 1" is
        /// a generic plural.
        #[default] AnyBasic,
        /// The Ante.
        Ante,
        /// Both the Ante and Pair Plus.
        AnteAndPairPlus,
    }
}

/// The options of a ruleset. Every field is optional; unset means the default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RulesetOptions {
    /// fortune3cp-2008: top straight flush (Art. 8(1) vs 4(2)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub top_straight_flush: Option<TopStraightFlush>,
    /// fortune3cp: three odd cards of equal ranks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub three_odd_cards_tie: Option<ThreeOddCardsTie>,
    /// fortune3cp-2025: ante bonus scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ante_bonus_scope: Option<AnteBonusScope>,
    /// fortune3cp: Ante/Play ties.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ante_play_tie: Option<AntePlayTie>,
    /// fortune3cp-2008: win table scope.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f2008_win_table_scope: Option<WinTableScope>,
    /// fortune3cp-2025: dealer's cards from a shoe.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub f2025_shoe_dealer_cards: Option<DealerCardsTiming>,
    /// fortune3cp-2025: counting exposed player cards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exposed_player_cards_count: Option<ExposedCount>,
    /// fortune3cp-2025: Progressive carry-over.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_carry_over: Option<ProgressiveCarryOver>,
    /// stud-2004: what a royal flush pays on the Raise, 50 to 100 (Art. 9(5)(9)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stud_royal_raise_pays: Option<u8>,
    /// stud-2004: dealer qualification.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stud_dealer_qualifier: Option<StudDealerQualifier>,
    /// stud-2004: exposed dealer card.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stud_exposed_dealer_card: Option<StudExposedDealerCard>,
    /// fortune3cp-2008: exposed dealer card.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exposed_dealer_card: Option<F2008ExposedDealerCard>,
    /// qpoker-2004, stud-2004, sangong-1996: identical hands.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub identical_hands: Option<IdenticalHands>,
    /// qpoker-2004: decks in the shoe, 1 to 8 (Art. 1(1)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qpoker_decks: Option<u8>,
    /// qpoker-2004: dealer not qualified.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub qpoker_unqualified_pays: Option<QpokerUnqualifiedPays>,
    /// sangong-1996: dice count start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sangong_dice_count_start: Option<DiceCountStart>,
    /// sangong-1996: banker commission.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sangong_banker_commission: Option<BankerCommission>,
    /// fortune3cp-2025, stud-2004: the base of a Progressive award's percentage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_percent_base: Option<ProgressivePercentBase>,
    /// fortune3cp-2025, stud-2004: which Progressive awards reduce the pool.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progressive_pool_debit: Option<ProgressivePoolDebit>,
    /// stud-2004: what the house's maximum per round caps.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stud_max_payout_scope: Option<StudMaxPayoutScope>,
    /// stud-2004: a folded hand's Progressive bet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stud_progressive_on_fold: Option<StudProgressiveOnFold>,
    /// stud-2004: several royal flushes in one round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub royal_share: Option<RoyalShare>,
    /// sangong-1996: hands of the same points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sangong_equal_points: Option<SangongEqualPoints>,
    /// sangong-1996: comparing the highest cards.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sangong_high_card_compare: Option<SangongHighCardCompare>,
    /// fortune3cp-2025: when the community cards may be dealt.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub community_card_timing: Option<CommunityCardTiming>,
    /// fortune3cp-2025: community cards with no Progressive bet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub community_without_progressive: Option<CommunityWithoutProgressive>,
    /// stud-2004: which exposed cards void the round together.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stud_exposed_count_scope: Option<StudExposedCountScope>,
    /// fortune3cp-2025: the bets after a shuffler failure.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shuffler_failure_bets: Option<ShufflerFailureBets>,
    /// sangong-1996: where settlement against the banker's capital starts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sangong_settlement_start: Option<SangongSettlementStart>,
    /// fortune3cp-2025: which basic bets an additional bet needs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additional_bet_requires: Option<AdditionalBetRequires>,
    /// fortune3cp-2025: whether the house takes each basic bet alone (Art. 4(1)).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub basic_bets_independent: Option<bool>,
}

use RulesetId::*;
const FORTUNE: &[RulesetId] = &[Fortune3cp2025, Fortune3cp2008];

impl RulesetOptions {
    /// Checks that every option set applies to `id` and is in range.
    pub fn validate_for(&self, id: RulesetId) -> Result<(), RulesError> {
        let checks: [(&'static str, bool, &'static [RulesetId]); 31] = [
            ("top_straight_flush", self.top_straight_flush.is_some(), &[Fortune3cp2008]),
            ("three_odd_cards_tie", self.three_odd_cards_tie.is_some(), FORTUNE),
            ("ante_bonus_scope", self.ante_bonus_scope.is_some(), &[Fortune3cp2025]),
            ("ante_play_tie", self.ante_play_tie.is_some(), FORTUNE),
            ("f2008_win_table_scope", self.f2008_win_table_scope.is_some(), &[Fortune3cp2008]),
            ("f2025_shoe_dealer_cards", self.f2025_shoe_dealer_cards.is_some(), &[Fortune3cp2025]),
            ("exposed_player_cards_count", self.exposed_player_cards_count.is_some(), &[Fortune3cp2025]),
            ("progressive_carry_over", self.progressive_carry_over.is_some(), &[Fortune3cp2025]),
            ("stud_royal_raise_pays", self.stud_royal_raise_pays.is_some(), &[Stud2004]),
            ("stud_dealer_qualifier", self.stud_dealer_qualifier.is_some(), &[Stud2004]),
            ("stud_exposed_dealer_card", self.stud_exposed_dealer_card.is_some(), &[Stud2004]),
            ("exposed_dealer_card", self.exposed_dealer_card.is_some(), &[Fortune3cp2008]),
            ("identical_hands", self.identical_hands.is_some(), &[Qpoker2004, Stud2004, Sangong1996]),
            ("qpoker_decks", self.qpoker_decks.is_some(), &[Qpoker2004]),
            ("qpoker_unqualified_pays", self.qpoker_unqualified_pays.is_some(), &[Qpoker2004]),
            ("sangong_dice_count_start", self.sangong_dice_count_start.is_some(), &[Sangong1996]),
            ("sangong_banker_commission", self.sangong_banker_commission.is_some(), &[Sangong1996]),
            ("progressive_percent_base", self.progressive_percent_base.is_some(), &[Fortune3cp2025, Stud2004]),
            ("progressive_pool_debit", self.progressive_pool_debit.is_some(), &[Fortune3cp2025, Stud2004]),
            ("stud_max_payout_scope", self.stud_max_payout_scope.is_some(), &[Stud2004]),
            ("stud_progressive_on_fold", self.stud_progressive_on_fold.is_some(), &[Stud2004]),
            ("royal_share", self.royal_share.is_some(), &[Stud2004]),
            ("sangong_equal_points", self.sangong_equal_points.is_some(), &[Sangong1996]),
            ("sangong_high_card_compare", self.sangong_high_card_compare.is_some(), &[Sangong1996]),
            ("community_card_timing", self.community_card_timing.is_some(), &[Fortune3cp2025]),
            ("community_without_progressive", self.community_without_progressive.is_some(), &[Fortune3cp2025]),
            ("stud_exposed_count_scope", self.stud_exposed_count_scope.is_some(), &[Stud2004]),
            ("shuffler_failure_bets", self.shuffler_failure_bets.is_some(), &[Fortune3cp2025]),
            ("sangong_settlement_start", self.sangong_settlement_start.is_some(), &[Sangong1996]),
            ("additional_bet_requires", self.additional_bet_requires.is_some(), &[Fortune3cp2025]),
            ("basic_bets_independent", self.basic_bets_independent.is_some(), &[Fortune3cp2025]),
        ];
        for (name, set, applies) in checks {
            if set && !applies.contains(&id) {
                let list: Vec<&str> = applies.iter().map(|r| r.as_str()).collect();
                return Err(RulesError::OptionNotApplicable { option: name, ruleset: id, applies_to: list.join(", ") });
            }
        }
        if let Some(p) = self.stud_royal_raise_pays {
            if !(50..=100).contains(&p) {
                return Err(RulesError::OptionOutOfRange {
                    option: "stud_royal_raise_pays",
                    value: p.to_string(),
                    range: "50 to 100 (stud-2004 Art. 9(5)(9))",
                });
            }
        }
        if let Some(d) = self.qpoker_decks {
            if !(1..=8).contains(&d) {
                return Err(RulesError::OptionOutOfRange {
                    option: "qpoker_decks",
                    value: d.to_string(),
                    range: "1 to 8",
                });
            }
        }
        Ok(())
    }

    /// Top straight flush (default A-K-Q).
    pub fn top_straight_flush(&self) -> TopStraightFlush {
        self.top_straight_flush.unwrap_or_default()
    }
    /// Suit tie-breaks implied by `three_odd_cards_tie`.
    pub fn three_odd_cards_tie(&self) -> SuitTieBreaks {
        match self.three_odd_cards_tie.unwrap_or_default() {
            ThreeOddCardsTie::Push => SuitTieBreaks::None,
            ThreeOddCardsTie::SuitOfHighestCard => SuitTieBreaks::HighCardOnly,
        }
    }
    /// Ante bonus scope.
    pub fn ante_bonus_scope(&self) -> AnteBonusScope {
        self.ante_bonus_scope.unwrap_or_default()
    }
    /// Ante/Play ties.
    pub fn ante_play_tie(&self) -> AntePlayTie {
        self.ante_play_tie.unwrap_or_default()
    }
    /// 2008 win table scope.
    pub fn f2008_win_table_scope(&self) -> WinTableScope {
        self.f2008_win_table_scope.unwrap_or_default()
    }
    /// 2025 shoe dealer timing.
    pub fn f2025_shoe_dealer_cards(&self) -> DealerCardsTiming {
        self.f2025_shoe_dealer_cards.unwrap_or_default()
    }
    /// 2025 exposed-card counting.
    pub fn exposed_player_cards_count(&self) -> ExposedCount {
        self.exposed_player_cards_count.unwrap_or_default()
    }
    /// Whether Progressive bets carry over on every void.
    pub fn progressive_carry_over_all_voids(&self) -> bool {
        self.progressive_carry_over.unwrap_or_default() == ProgressiveCarryOver::AllVoids
    }
    /// Stud royal Raise payout (default 100).
    pub fn stud_royal_raise_pays(&self) -> u8 {
        self.stud_royal_raise_pays.unwrap_or(100)
    }
    /// Stud dealer qualifier.
    pub fn stud_dealer_qualifier(&self) -> StudDealerQualifier {
        self.stud_dealer_qualifier.unwrap_or_default()
    }
    /// Whether an exposed stud dealer card is burnt rather than kept up.
    pub fn stud_exposed_dealer_card_burn(&self) -> bool {
        self.stud_exposed_dealer_card.unwrap_or_default() == StudExposedDealerCard::Burn
    }
    /// Whether an exposed fortune3cp-2008 dealer card stays in the hand rather than set aside.
    pub fn f2008_exposed_dealer_card_kept(&self) -> bool {
        self.exposed_dealer_card.unwrap_or_default() == F2008ExposedDealerCard::KeepInHand
    }
    /// Identical hands.
    pub fn identical_hands(&self) -> IdenticalHands {
        self.identical_hands.unwrap_or_default()
    }
    /// Q Poker decks (default 1).
    pub fn qpoker_decks(&self) -> u8 {
        self.qpoker_decks.unwrap_or(1)
    }
    /// Q Poker unqualified dealer.
    pub fn qpoker_unqualified_pays(&self) -> QpokerUnqualifiedPays {
        self.qpoker_unqualified_pays.unwrap_or_default()
    }
    /// San Gong dice counting.
    pub fn sangong_dice_count_start(&self) -> DiceCountStart {
        self.sangong_dice_count_start.unwrap_or_default()
    }
    /// San Gong banker commission.
    pub fn sangong_banker_commission(&self) -> BankerCommission {
        self.sangong_banker_commission.unwrap_or_default()
    }
    /// Whether a Progressive award's percentage is of the pool at the round's start (rather
    /// than of what is left when it is paid).
    pub fn progressive_percent_of_round_start(&self) -> bool {
        self.progressive_percent_base.unwrap_or_default() == ProgressivePercentBase::RoundStart
    }
    /// Whether only awards paid as a share of the pool reduce it.
    pub fn progressive_debits_percentage_awards_only(&self) -> bool {
        self.progressive_pool_debit.unwrap_or_default() == ProgressivePoolDebit::PercentageAwardsOnly
    }
    /// Whether the stud house maximum caps the round's total rather than each hand.
    pub fn stud_max_payout_per_round_total(&self) -> bool {
        self.stud_max_payout_scope.unwrap_or_default() == StudMaxPayoutScope::PerRoundTotal
    }
    /// Whether a folded stud hand's Progressive bet is still paid by its cards.
    pub fn stud_progressive_paid_on_fold(&self) -> bool {
        self.stud_progressive_on_fold.unwrap_or_default() == StudProgressiveOnFold::StillPaid
    }
    /// How several stud royal flushes of one round share the Progressive.
    pub fn royal_share(&self) -> RoyalShare {
        self.royal_share.unwrap_or_default()
    }
    /// Whether the community cards must wait for the dealer's hand to be complete.
    pub fn community_cards_after_dealer(&self) -> bool {
        self.community_card_timing.unwrap_or_default() == CommunityCardTiming::AfterDealer
    }
    /// Whether community cards dealt with no Progressive bet breach Art. 11(3).
    pub fn community_without_progressive_breach(&self) -> bool {
        self.community_without_progressive.unwrap_or_default() == CommunityWithoutProgressive::Breach
    }
    /// Whether an exposed dealer card counts towards stud's "two or more cards exposed".
    pub fn stud_exposures_count_dealer_cards(&self) -> bool {
        self.stud_exposed_count_scope.unwrap_or_default() == StudExposedCountScope::AllCards
    }
    /// Whether a 2025 shuffler failure lets the players withdraw their bets.
    pub fn shuffler_failure_bets_withdrawable(&self) -> bool {
        self.shuffler_failure_bets.unwrap_or_default() == ShufflerFailureBets::Withdrawable
    }
    /// Where San Gong's settlement against the banker's capital starts.
    pub fn sangong_settlement_start(&self) -> SangongSettlementStart {
        self.sangong_settlement_start.unwrap_or_default()
    }
    /// Which basic bets a fortune3cp-2025 additional bet needs.
    pub fn additional_bet_requires(&self) -> AdditionalBetRequires {
        self.additional_bet_requires.unwrap_or_default()
    }
    /// Whether the house takes each fortune3cp-2025 basic bet alone (default) or only both.
    pub fn basic_bets_independent(&self) -> bool {
        self.basic_bets_independent.unwrap_or(true)
    }
    /// How San Gong hands are compared (Art. 7, annex; ambiguities E-2 and E-3).
    pub fn sangong_rule(&self) -> SanGongRule {
        SanGongRule {
            equal_points: self.sangong_equal_points.unwrap_or_default(),
            high_card: self.sangong_high_card_compare.unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_validate_and_reject_misplaced_ones() {
        let o: RulesetOptions = serde_json::from_str(r#"{"top_straight_flush": "kqj"}"#).unwrap();
        assert!(o.validate_for(Fortune3cp2008).is_ok());
        let err = o.validate_for(Stud2004).unwrap_err();
        assert!(err.to_string().contains("top_straight_flush") && err.to_string().contains("fortune3cp-2008"), "{err}");
        let err = serde_json::from_str::<RulesetOptions>(r#"{"top_straight_flushes": "kqj"}"#).unwrap_err();
        assert!(err.to_string().contains("unknown field"), "{err}");
        let o = RulesetOptions { stud_royal_raise_pays: Some(120), ..Default::default() };
        assert!(matches!(o.validate_for(Stud2004), Err(RulesError::OptionOutOfRange { .. })));
        let o = RulesetOptions { stud_royal_raise_pays: Some(50), ..Default::default() };
        assert_eq!(o.stud_royal_raise_pays(), 50);
    }
}
