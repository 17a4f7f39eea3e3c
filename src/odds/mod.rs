//! Exact and Monte Carlo house edges of every bet of a ruleset (`tablecam odds`).
//! (Being written.)

/// Arguments of `tablecam odds`.
#[derive(Debug, Clone, clap::Args)]
pub struct OddsArgs {
    /// Ruleset id.
    #[arg(long)]
    pub ruleset: String,
    /// One JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `tablecam odds`.
pub fn run_cli(_args: &OddsArgs) -> anyhow::Result<()> {
    anyhow::bail!("not implemented yet")
}
