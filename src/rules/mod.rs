//! The rules engine: cards, hand evaluators, the five rulesets of the Macau
//! regulations, dealing procedures, irregularity policy and settlement.
//!
//! No vision code lives here. Every rule carries the article it comes from
//! (`docs/rules.md` lists them all), so that every result and flag downstream can
//! cite the regulation.
pub mod card;
pub mod deal;
pub mod demo;
pub mod eval3;
pub mod eval5;
pub mod options;
pub mod payout;
pub mod ruleset;
pub mod sangong;
pub mod settle;

pub use card::{parse_cards, Card, CardSet, Rank, Shoe, Suit};
pub use deal::{deal_plan, Delivery, Position, Seat};
pub use ruleset::{BetKind, Citation, Consequence, DealingMode, IrregularityKind, Ruleset, RulesetId};
pub use settle::{settle, Round, Settlement};

/// Errors of the rules engine.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RulesError {
    /// A card code that is not rank + suit.
    #[error("bad card code {0:?}: expected a rank (A, 2-10, J, Q, K) then a suit (S, H, D, C), e.g. \"10H\"")]
    BadCardCode(String),
    /// A ruleset id that does not exist.
    #[error("unknown ruleset {0:?}: known rulesets are fortune3cp-2025, fortune3cp-2008, stud-2004, qpoker-2004, sangong-1996")]
    UnknownRuleset(String),
    /// An option set on a ruleset it does not belong to.
    #[error(
        "option `{option}` does not apply to {ruleset}; it belongs to {applies_to} (see docs/rules.md, options table)"
    )]
    OptionNotApplicable {
        /// The option.
        option: &'static str,
        /// The ruleset it was set on.
        ruleset: RulesetId,
        /// The rulesets it belongs to.
        applies_to: String,
    },
    /// An option value out of range.
    #[error("option `{option}` = {value} is out of range: allowed {range}")]
    OptionOutOfRange {
        /// The option.
        option: &'static str,
        /// The value given.
        value: String,
        /// The allowed range.
        range: &'static str,
    },
    /// A round that cannot be settled as given (wrong card counts, unknown seats…).
    #[error("round cannot be settled: {0}")]
    BadRound(String),
    /// A dealing request that the ruleset does not allow.
    #[error("cannot plan the deal: {0}")]
    BadDeal(String),
}
