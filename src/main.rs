//! The `tablecam` command line: argument parsing and error reporting only.
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "tablecam", version, about = "Card recognition and verified outcomes for casino table games")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Build, validate and check table calibrations (homography, zones).
    Calibrate(tablecam::calib::cli::CalibrateArgs),
    /// Recognise the cards in images: identity, confidence, face up or down, corners.
    Detect(tablecam::recognize::cli::DetectArgs),
    /// Dispute evidence pack: one round as an offline HTML report (timeline, annotated key frames, hands,
    /// outcome per bet, flags with articles, verification, journal hash chain).
    Dispute(tablecam::dispute::cli::DisputeArgs),
    /// Surveillance dashboard: a live web view of every table, its hands and its flags (login required).
    Dashboard(tablecam::dashboard::DashboardArgs),
    /// Check that the native stack (ONNX Runtime, OpenCV, ZeroMQ, cameras) is usable here.
    Doctor,
    /// Card recognition accuracy and speed on simulator frames and labelled real photos.
    EvalRecognition(tablecam::recognize::eval::EvalArgs),
    /// The simulator's scenarios and clean rounds through the whole pipeline, scored against the truth.
    EvalScenarios(tablecam::scenarios::EvalScenariosArgs),
    /// Event journals: verify a tamper-evident journal file (hash chain, line by line).
    Journal(tablecam::record::cli::JournalArgs),
    /// CURVE keys for publishing: generate a key pair (NAME.key, NAME.pub).
    Keys(tablecam::publish::cli::KeysArgs),
    /// Exact (or Monte Carlo) return to player and house edge of every bet of a ruleset.
    Odds(tablecam::odds::OddsArgs),
    /// Re-run the whole pipeline over a recording or a simulator session (byte-identical events).
    Replay(tablecam::replay::cli::ReplayArgs),
    /// Play scripted rounds through the rules engine and print their settlement.
    Rounds(tablecam::rules::demo::RoundsArgs),
    /// The main job: run the pipeline on the tables of a configuration file (journal, publish).
    Run(tablecam::pipeline::run::RunArgs),
    /// List the rulesets and their parameters.
    Rulesets,
    /// Bet presence: which bet spots hold chips, and its accuracy on simulator sessions.
    Presence(tablecam::presence::cli::PresenceArgs),
    /// ZeroMQ XSUB/XPUB proxy: several pipeline processes publish into one stream.
    Proxy(tablecam::publish::cli::ProxyArgs),
    /// Publish event JSON lines (or a journal's events) on ZeroMQ, with heartbeats.
    Publish(tablecam::publish::cli::PublishArgs),
    /// Render synthetic overhead-camera sessions with ground truth (or a crop dataset).
    Simulate(tablecam::sim::cli::SimulateArgs),
    /// Frame sources: probe video files, image folders, streams, cameras and the simulator.
    Sources(tablecam::source::SourcesArgs),
    /// Receive published events: readable lines or JSON lines; gap and silence warnings on stderr.
    Subscribe(tablecam::publish::cli::SubscribeArgs),
}

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("tablecam: error: {err:#}");
            ExitCode::from(2)
        }
    }
}

/// Rust ignores SIGPIPE, so `tablecam … | head` would panic on the closed pipe;
/// the default action ends the process quietly, as other command-line tools do.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in main, before any thread exists; only resets a signal disposition.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Calibrate(args) => {
            Ok(if tablecam::calib::cli::run_cli(&args)? { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Detect(args) => {
            Ok(if tablecam::recognize::cli::run_detect(&args)? { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Dispute(args) => {
            tablecam::dispute::cli::run_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Dashboard(args) => {
            tablecam::dashboard::run_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Doctor => Ok(tablecam::doctor::run()),
        Command::EvalRecognition(args) => {
            tablecam::recognize::eval::run_eval(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::EvalScenarios(args) => {
            tablecam::scenarios::run_cli(&args, &tablecam::pipeline::MonitorLogic::factory)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Run(args) => {
            tablecam::pipeline::run::run_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Journal(args) => {
            Ok(if tablecam::record::cli::run_cli(&args)? { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Keys(args) => {
            tablecam::publish::cli::run_keys(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Odds(args) => {
            tablecam::odds::run_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Replay(args) => {
            tablecam::replay::cli::run_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Rounds(args) => {
            tablecam::rules::demo::run_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Presence(args) => {
            Ok(if tablecam::presence::cli::run_cli(&args)? { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
        Command::Proxy(args) => {
            tablecam::publish::cli::run_proxy_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Publish(args) => {
            tablecam::publish::cli::run_publish(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Subscribe(args) => {
            tablecam::publish::cli::run_subscribe(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Simulate(args) => {
            tablecam::sim::cli::run_cli(&args)?;
            Ok(ExitCode::SUCCESS)
        }
        Command::Rulesets => {
            tablecam::rules::demo::print_rulesets();
            Ok(ExitCode::SUCCESS)
        }
        Command::Sources(args) => {
            Ok(if tablecam::source::run_cli(&args)? { ExitCode::SUCCESS } else { ExitCode::from(1) })
        }
    }
}
