//! Exact and Monte Carlo house edges of every bet of a ruleset (`tablecam odds`).
//!
//! Every figure is computed through the settlement functions of
//! [`crate::rules::payout`] (and, for the Progressive and the San Gong banker,
//! [`crate::rules::settle::settle`]), so the odds check the very rules that settle
//! live rounds. See `docs/odds.md` for the method, the figures and the published
//! figures they are compared with.
//!
//! | ruleset | bets | method |
//! |---|---|---|
//! | fortune3cp-2025 | `ante` (with Play and ante bonus), `pair_plus`, `six_card_bonus`, `progressive` | exact |
//! | fortune3cp-2008 | `ante` (with Play and win table), `pair_plus` | exact |
//! | stud-2004 | `ante` (with Raise) | Monte Carlo; `progressive` exact |
//! | qpoker-2004 | `bet`, `pair_plus` | exact |
//! | sangong-1996 | `bet` (player), `banker` | exact |
use std::fmt::Write as _;
use std::str::FromStr;
use std::time::Instant;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::rules::options::RulesetOptions;
use crate::rules::ruleset::{GameKind, Ruleset, RulesetId};
use crate::rules::RulesError;

mod five;
mod games3;
mod par;
mod stud;
mod three;

pub use five::ReferenceAwards;

/// Default number of stud situations (player's five cards + dealer's up-card).
pub const DEFAULT_STUD_SAMPLES: u64 = 80_000;
/// Default Monte Carlo seed.
pub const DEFAULT_SEED: u64 = 20_040_061;

/// Arguments of `tablecam odds`.
#[derive(Debug, Clone, clap::Args)]
pub struct OddsArgs {
    /// Ruleset id (fortune3cp-2025, fortune3cp-2008, stud-2004, qpoker-2004, sangong-1996).
    #[arg(long)]
    pub ruleset: String,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
    /// Monte Carlo situations for stud-2004's Ante + Raise.
    #[arg(long, default_value_t = DEFAULT_STUD_SAMPLES)]
    pub samples: u64,
    /// Monte Carlo seed.
    #[arg(long, default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Worker threads.
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
    /// A ruleset option, `key=value` (repeatable), e.g. `stud_royal_raise_pays=50`
    /// or `ante_bonus_scope=played_not_lost` (docs/rules.md, options table).
    #[arg(long = "option", value_name = "KEY=VALUE")]
    pub options: Vec<String>,
}

/// Errors of the odds calculator.
#[derive(Debug, thiserror::Error)]
pub enum OddsError {
    /// An error of the rules engine (unknown ruleset, misplaced option, settlement).
    #[error(transparent)]
    Rules(#[from] RulesError),
    /// A malformed `--option`.
    #[error("bad --option {0}")]
    BadOption(String),
    /// A bad argument.
    #[error("{0}")]
    BadArgument(String),
    /// A configuration the calculator does not handle.
    #[error("not supported: {0}")]
    Unsupported(String),
    /// An internal consistency check failed (a bug).
    #[error("internal error: {0}")]
    Internal(String),
}

/// How a figure was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Full enumeration.
    Exact,
    /// Seeded Monte Carlo with a 95% confidence interval.
    MonteCarlo,
}

impl Method {
    /// `exact` or `monte-carlo`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Exact => "exact",
            Method::MonteCarlo => "monte-carlo",
        }
    }
}

/// The odds of one bet.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BetOdds {
    /// Bet name in snake case, as the rules engine names it (`ante`, `pair_plus`, …; `banker` for San Gong's banker side).
    pub bet: String,
    /// House edge as a fraction of the bet's initial wager (of the Ante for
    /// ante-and-play games, play decisions included).
    pub house_edge: f64,
    /// Return to player, 1 − house edge, on the same base.
    pub return_to_player: f64,
    /// Exact or Monte Carlo.
    pub method: Method,
    /// 95% confidence interval of the house edge (Monte Carlo only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<[f64; 2]>,
    /// Further figures: strategy, category probabilities, published figures…
    #[serde(flatten)]
    pub details: Map<String, Value>,
}

impl BetOdds {
    pub(crate) fn exact(bet: &str, house_edge: f64, details: Map<String, Value>) -> BetOdds {
        BetOdds {
            bet: bet.to_string(),
            house_edge,
            return_to_player: 1.0 - house_edge,
            method: Method::Exact,
            ci95: None,
            details,
        }
    }

    pub(crate) fn monte_carlo(bet: &str, house_edge: f64, ci95: [f64; 2], details: Map<String, Value>) -> BetOdds {
        BetOdds {
            bet: bet.to_string(),
            house_edge,
            return_to_player: 1.0 - house_edge,
            method: Method::MonteCarlo,
            ci95: Some(ci95),
            details,
        }
    }
}

/// The odds of every bet of a ruleset.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OddsReport {
    /// The ruleset id.
    pub ruleset: RulesetId,
    /// The options the figures were computed with (unset = documented default).
    pub options: RulesetOptions,
    /// One entry per bet.
    pub bets: Vec<BetOdds>,
}

impl OddsReport {
    /// The entry of `bet`, if any.
    pub fn bet(&self, bet: &str) -> Option<&BetOdds> {
        self.bets.iter().find(|b| b.bet == bet)
    }
}

/// Settings of a computation.
#[derive(Debug, Clone)]
pub struct OddsConfig {
    /// Monte Carlo situations (stud-2004).
    pub samples: u64,
    /// Monte Carlo seed.
    pub seed: u64,
    /// Worker threads.
    pub threads: usize,
    /// Reference Progressive awards (an example; the regulations give none).
    pub progressive: ReferenceAwards,
}

impl Default for OddsConfig {
    fn default() -> OddsConfig {
        OddsConfig {
            samples: DEFAULT_STUD_SAMPLES,
            seed: DEFAULT_SEED,
            threads: 2,
            progressive: ReferenceAwards::default(),
        }
    }
}

/// Parses `key=value` pairs into ruleset options (values: JSON scalars or bare words).
pub fn parse_options(pairs: &[String]) -> Result<RulesetOptions, OddsError> {
    let mut map = Map::new();
    for pair in pairs {
        let (k, v) =
            pair.split_once('=').ok_or_else(|| OddsError::BadOption(format!("{pair:?}: expected key=value")))?;
        let value = serde_json::from_str::<Value>(v.trim()).unwrap_or_else(|_| Value::String(v.trim().to_string()));
        map.insert(k.trim().to_string(), value);
    }
    serde_json::from_value(Value::Object(map)).map_err(|e| OddsError::BadOption(e.to_string()))
}

/// The three-card enumeration of a ruleset (fortune3cp or qpoker), for benches.
pub fn enumerate_three_card(rs: &Ruleset, threads: usize) -> Result<(), OddsError> {
    if !matches!(rs.kind, GameKind::FortuneThreeCard | GameKind::QPoker) {
        return Err(OddsError::Unsupported(format!("{} is not a three-card game with a dealer", rs.id)));
    }
    let e = games3::ThreeCardEnumeration::new(rs, threads);
    std::hint::black_box(match rs.kind {
        GameKind::QPoker => games3::qpoker_bet(rs, &e),
        _ => games3::fortune_ante(rs, &e),
    });
    Ok(())
}

/// Computes the odds of every bet of `rs`.
pub fn compute(rs: &Ruleset, cfg: &OddsConfig) -> Result<OddsReport, OddsError> {
    let threads = cfg.threads.max(1);
    let bets = match rs.kind {
        GameKind::FortuneThreeCard | GameKind::QPoker => {
            if rs.decks != 1 {
                return Err(OddsError::Unsupported(format!(
                    "{} with {} decks: the enumeration covers one deck (qpoker_decks = 1)",
                    rs.id, rs.decks
                )));
            }
            let e = games3::ThreeCardEnumeration::new(rs, threads);
            let mut bets = vec![if rs.kind == GameKind::QPoker {
                games3::qpoker_bet(rs, &e)
            } else {
                games3::fortune_ante(rs, &e)
            }];
            bets.push(games3::pair_plus(rs, &e));
            if rs.six_card_bonus.is_some() {
                bets.push(five::six_card_bonus(rs, threads)?);
            }
            if !rs.progressive.is_empty() {
                bets.push(five::progressive(rs, &cfg.progressive)?);
            }
            bets
        }
        GameKind::Stud => {
            let mc = stud::McSettings { samples: cfg.samples, seed: cfg.seed, threads };
            let mut bets = vec![stud::stud_ante(rs, mc)?];
            if !rs.progressive.is_empty() {
                bets.push(five::progressive(rs, &cfg.progressive)?);
            }
            bets
        }
        GameKind::SanGong => games3::sangong(rs, threads)?,
    };
    Ok(OddsReport { ruleset: rs.id, options: rs.options.clone(), bets })
}

/// Renders a report as text for people: a table, then the strategy and notes.
pub fn render_text(report: &OddsReport, rs: &Ruleset) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{} — {} ({})", report.ruleset, rs.name, rs.instrument);
    let _ =
        writeln!(out, "{:<16} {:>12} {:>10}  {:<12} 95% CI of the house edge", "bet", "house edge", "RTP", "method");
    for b in &report.bets {
        let ci = b.ci95.map_or(String::new(), |[lo, hi]| format!("[{:.3}%, {:.3}%]", lo * 100.0, hi * 100.0));
        let _ = writeln!(
            out,
            "{:<16} {:>11.4}% {:>9.4}%  {:<12} {}",
            b.bet,
            b.house_edge * 100.0,
            b.return_to_player * 100.0,
            b.method.as_str(),
            ci
        );
    }
    for b in &report.bets {
        let get = |k: &str| b.details.get(k);
        if let Some(s) = get("strategy") {
            if let Some(rule) = s.get("rule").and_then(Value::as_str) {
                let _ = writeln!(out, "  {}: optimal strategy: {rule}", b.bet);
            }
            if let Some(p) = s.get("play_probability").or_else(|| s.get("raise_probability")).and_then(Value::as_f64) {
                let _ = writeln!(out, "  {}: plays {:.2}% of hands", b.bet, p * 100.0);
            }
        }
        if let Some(q) = get("house_edge_with_q64_rule").and_then(Value::as_f64) {
            let _ = writeln!(out, "  {}: with the published Q-6-4 rule instead: {:.4}%", b.bet, q * 100.0);
        }
        if let Some(e) = get("element_of_risk").and_then(Value::as_f64) {
            let _ = writeln!(out, "  {}: element of risk (edge per unit actually wagered): {:.4}%", b.bet, e * 100.0);
        }
        if let Some(n) = get("samples").and_then(Value::as_u64) {
            let se = get("standard_error").and_then(Value::as_f64).unwrap_or(0.0);
            let _ = writeln!(
                out,
                "  {}: {n} samples, seed {}, standard error {:.4}%",
                b.bet,
                get("seed").and_then(Value::as_u64).unwrap_or(0),
                se * 100.0
            );
        }
        if let Some(p) = get("house_edge_if_equal_hands_pushed").and_then(Value::as_f64) {
            let _ = writeln!(out, "  {}: if equal-strength hands pushed (published rules): {:.4}%", b.bet, p * 100.0);
        }
        if let Some(p) = get("published") {
            if let (Some(e), Some(src)) =
                (p.get("house_edge").and_then(Value::as_f64), p.get("source").and_then(Value::as_str))
            {
                let _ = writeln!(out, "  {}: published {:.3}% ({src})", b.bet, e * 100.0);
            }
        }
        if b.bet == "progressive" {
            let pool = get("reference_awards").and_then(|a| a.get("pool")).and_then(Value::as_f64).unwrap_or(0.0);
            let _ = writeln!(out, "  progressive: under EXAMPLE awards (pool {pool} units; quads 500, full house 100, flush 50 per unit) — the regulation sets none");
            if let Some(be) = get("breakeven_pool").and_then(Value::as_f64) {
                let _ = writeln!(out, "  progressive: break-even pool {be:.0} units");
            }
        }
    }
    out
}

/// Runs `tablecam odds`.
pub fn run_cli(args: &OddsArgs) -> anyhow::Result<()> {
    let id = RulesetId::from_str(&args.ruleset).map_err(OddsError::from)?;
    let options = parse_options(&args.options)?;
    let rs = Ruleset::with_options(id, options).map_err(OddsError::from)?;
    let cfg = OddsConfig { samples: args.samples, seed: args.seed, threads: args.threads, ..OddsConfig::default() };
    let start = Instant::now();
    let report = compute(&rs, &cfg)?;
    if args.json {
        println!("{}", serde_json::to_string(&report)?);
    } else {
        print!("{}", render_text(&report, &rs));
        println!("computed in {:.2} s on {} thread(s)", start.elapsed().as_secs_f64(), cfg.threads.max(1));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
