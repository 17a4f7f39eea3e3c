//! `tablecam dashboard`: the surveillance room's live web view of every table — tiles with
//! hands and cards, the alert list with acknowledgements, health — served over plain HTTP by the
//! binary itself, pushed to browsers by server-sent events. See docs/dashboard.md.
//!
//! Public surface: [`DashboardArgs`] / [`run_cli`] for the command line, [`DashboardState`]
//! (the event fold) and the [`auth`] helpers.
pub mod auth;
mod demo;
mod http;
mod state;

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, Subcommand};

pub use state::{Alert, DashboardState};

/// Errors of the dashboard.
#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    /// A file or socket operation failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A users-file line is not a valid record.
    #[error("users file {path} line {line}: {why}")]
    Users {
        /// The file.
        path: String,
        /// 1-based line.
        line: usize,
        /// What is wrong.
        why: String,
    },
    /// The ack journal refused an append or could not be opened.
    #[error("ack journal: {0}")]
    Journal(#[from] crate::record::JournalError),
    /// The ZeroMQ subscriber failed.
    #[error("event subscription: {0}")]
    Publish(#[from] crate::publish::PublishError),
    /// The arguments do not make sense together.
    #[error("{0}")]
    Usage(String),
}

/// `tablecam dashboard`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct DashboardArgs {
    /// Helpers (`add-user`).
    #[command(subcommand)]
    pub command: Option<DashboardCommand>,
    /// Address to serve on (plain HTTP; put a TLS-terminating proxy in front, see docs/dashboard.md).
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// ZeroMQ endpoint of the event stream (a publisher or `tablecam proxy`).
    #[arg(long)]
    pub events: Option<String>,
    /// Read events from a JSON-lines file instead, then follow it as it grows (tests, demos).
    #[arg(long, conflicts_with = "events")]
    pub events_file: Option<PathBuf>,
    /// Feed the dashboard from simulated tables instead: the simulator's scripted rounds (clean
    /// and irregular) turned into noisy detections and run through the real tracker and verifier
    /// in simulated real time, forever. No video is rendered, no recognition model runs.
    #[arg(long, conflicts_with_all = ["events", "events_file"])]
    pub demo: bool,
    /// With --demo: how many tables (rulesets in turn).
    #[arg(long, default_value_t = 6, requires = "demo")]
    pub demo_tables: usize,
    /// With --demo: simulated seconds per second (2 plays twice as fast).
    #[arg(long, default_value_t = 1.0, requires = "demo")]
    pub demo_speed: f64,
    /// With --demo: seed of the simulated rounds and detector noise.
    #[arg(long, default_value_t = 1, requires = "demo")]
    pub demo_seed: u64,
    /// The operators: JSON lines `{"user","salt","iterations","hash"}` (see `add-user`).
    #[arg(long)]
    pub users: Option<PathBuf>,
    /// Hash-chained journal of acknowledgements (verify with `tablecam journal verify`).
    #[arg(long, default_value = "dashboard-acks.journal")]
    pub ack_journal: PathBuf,
    /// Dispute evidence packs, as `DIR/<table>/<round>/index.html` (written by `tablecam dispute`).
    #[arg(long)]
    pub evidence: Option<PathBuf>,
    /// Enable `GET /test-login?token=TOKEN`, usable once, for headless-browser tests. Never in production.
    #[arg(long)]
    pub test_login_token: Option<String>,
}

/// `tablecam dashboard` helpers.
#[derive(Debug, Subcommand)]
pub enum DashboardCommand {
    /// Add (or replace) an operator in a users file; the password is read from stdin (one line).
    AddUser {
        /// The users file (created if missing).
        #[arg(long)]
        users: PathBuf,
        /// The login name.
        name: String,
    },
}

/// Runs `tablecam dashboard` (serves until killed) or one of its helpers.
pub fn run_cli(args: &DashboardArgs) -> Result<(), DashboardError> {
    if let Some(DashboardCommand::AddUser { users, name }) = &args.command {
        return add_user(users, name);
    }
    let users_path =
        args.users.as_ref().ok_or_else(|| DashboardError::Usage("--users FILE is required (see add-user)".into()))?;
    let users = auth::Users::load(users_path)?;
    let source = match (&args.events, &args.events_file) {
        _ if args.demo => http::Source::Demo(demo::DemoOptions {
            tables: args.demo_tables,
            speed: args.demo_speed,
            seed: args.demo_seed,
        }),
        (Some(e), _) => http::Source::Zmq(e.clone()),
        (None, Some(f)) => http::Source::File(f.clone()),
        (None, None) => {
            return Err(DashboardError::Usage("give --events ENDPOINT, --events-file FILE or --demo".into()))
        }
    };
    http::serve(http::Config {
        listen: args.listen.clone(),
        source,
        users,
        ack_journal: args.ack_journal.clone(),
        evidence: args.evidence.clone(),
        test_login_token: args.test_login_token.clone(),
    })
}

fn add_user(path: &std::path::Path, name: &str) -> Result<(), DashboardError> {
    if name.is_empty() || name.chars().any(|c| c.is_control() || c.is_whitespace()) {
        return Err(DashboardError::Usage("a user name has no spaces or control characters".into()));
    }
    let mut password = String::new();
    std::io::stdin()
        .read_line(&mut password)
        .map_err(|e| DashboardError::Io { what: "reading the password from stdin".into(), source: e })?;
    let password = password.trim_end_matches(['\n', '\r']);
    if password.is_empty() {
        return Err(DashboardError::Usage("empty password".into()));
    }
    let record = auth::make_user(name, password)?;
    let io = |e| DashboardError::Io { what: format!("writing {}", path.display()), source: e };
    // Replace an existing line for the same user, keep everything else as it was.
    let old = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = String::new();
    for line in old.lines() {
        let same = serde_json::from_str::<auth::UserRecord>(line).map(|r| r.user == name).unwrap_or(false);
        if !same {
            out.push_str(line);
            out.push('\n');
        }
    }
    out.push_str(&serde_json::to_string(&record).expect("a user record serialises"));
    out.push('\n');
    let tmp = path.with_extension("tmp");
    let mut f = std::fs::File::create(&tmp).map_err(io)?;
    f.write_all(out.as_bytes()).map_err(io)?;
    f.sync_all().map_err(io)?;
    std::fs::rename(&tmp, path).map_err(io)?;
    eprintln!("dashboard: user {name} written to {}", path.display());
    Ok(())
}
