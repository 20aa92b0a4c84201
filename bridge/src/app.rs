//! The `netloop` application: the command line ([`cli`]) and the body of
//! every command, which the thin binary (`src/main.rs`) dispatches to with
//! [`dispatch`].
//!
//! # Lifecycle
//! `main` sets SIGPIPE to its default, parses a [`cli::Cli`], starts logging
//! ([`init_logging`]) and calls [`dispatch`]; the command reads its input,
//! does its work and returns a [`Failure`] when it cannot, whose
//! [`Failure::exit_code`] is the process's: 0 success, 1 a run failure, 2 bad
//! input (docs/design.md §8.2). A bad scenario or sweep file is always 2, with
//! a message naming the file, the line and the key; a run that starts and
//! fails is 1, with its partial results on disk.

pub mod check;
pub mod cli;
pub mod ns3;
pub mod plot;
pub mod report;
pub mod run;
pub mod sweep;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use clap::CommandFactory;

use crate::scenario_file::{backend_override, LoadError, Override};
use crate::sweep::SweepError;
use cli::{Cli, Command, Ns3Command, ScenarioArgs};

/// How a command failed: bad input (exit 2) or a failed run (exit 1).
#[derive(Debug)]
pub enum Failure {
    BadInput(String),
    Run(String),
}

impl Failure {
    /// The process's exit code for this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            Failure::BadInput(_) => 2,
            Failure::Run(_) => 1,
        }
    }

    /// What the user is told (after `error: `).
    pub fn message(&self) -> &str {
        match self {
            Failure::BadInput(m) | Failure::Run(m) => m.trim_end(),
        }
    }
}

impl From<LoadError> for Failure {
    fn from(e: LoadError) -> Self {
        Failure::BadInput(e.to_string())
    }
}

impl From<SweepError> for Failure {
    fn from(e: SweepError) -> Self {
        match e {
            SweepError::Input(m) => Failure::BadInput(m),
            other => Failure::Run(other.to_string()),
        }
    }
}

/// Runs one command of the parsed command line.
///
/// # Errors
/// The command's [`Failure`].
pub fn dispatch(command: Command, quiet: bool) -> Result<(), Failure> {
    match command {
        Command::Run(args) => run::run(args, quiet, install_interrupt_handler()),
        Command::Check(args) => check::check(args, quiet),
        Command::Sweep(args) => sweep::sweep(args, quiet),
        Command::Plot(args) => plot::plot(args, quiet),
        Command::Ns3(Ns3Command::Info(args)) => ns3::info(args),
        Command::Ns3(Ns3Command::Probe(args)) => ns3::probe(args, install_interrupt_handler()),
        Command::Completions { shell } => {
            clap_complete::generate(
                shell,
                &mut Cli::command(),
                "netloop",
                &mut std::io::stdout(),
            );
            Ok(())
        }
    }
}

/// The first Ctrl-C (or SIGTERM) asks the run to stop at its next sync and
/// keep its partial results; a second Ctrl-C exits at once.
///
/// SIGTERM never exits at once (SIGKILL is there for that): a sweep's runs
/// get SIGTERM as their parent-death signal, and Linux sends it again each
/// time the dying sweep's threads hand the child on, so a run may see it
/// twice and must still write its partial results.
fn install_interrupt_handler() -> Arc<AtomicBool> {
    let cancel = Arc::new(AtomicBool::new(false));
    // Order matters: the conditional exit sees the flag set by an earlier signal.
    let _ = signal_hook::flag::register_conditional_shutdown(
        signal_hook::consts::SIGINT,
        130,
        Arc::clone(&cancel),
    );
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        let _ = signal_hook::flag::register(signal, Arc::clone(&cancel));
    }
    cancel
}

/// `--set` and `--network`, in that order (`--network` wins over a `--set network.backend`).
fn overrides(args: &ScenarioArgs) -> Result<Vec<Override>, Failure> {
    let mut all = args
        .set
        .iter()
        .map(|s| Override::parse_set(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::BadInput)?;
    if let Some(b) = args.network {
        all.push(backend_override(b.into()));
    }
    Ok(all)
}

/// `--out`, else `results/<file name without extension>` (`results/<fallback>`
/// for a name without one).
fn out_dir_or_default(out: Option<PathBuf>, file: &Path, fallback: &str) -> PathBuf {
    out.unwrap_or_else(|| {
        let stem = file.file_stem().map_or_else(
            || fallback.to_string(),
            |s| s.to_string_lossy().into_owned(),
        );
        PathBuf::from("results").join(stem)
    })
}

/// A scenario file's text, read once: whether it is a graph scenario and
/// what it holds both come from it.
fn read_scenario(path: &Path) -> Result<String, Failure> {
    crate::input::read_input(path).map_err(|source| {
        Failure::from(LoadError::Read {
            path: path.to_path_buf(),
            source,
        })
    })
}

/// Log lines go to stderr through the sweep's progress bar (suspended while
/// a line is printed), so the two never interleave.
struct LogSink;

impl std::io::Write for LogSink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        crate::sweep::progress::write_log(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Logging to stderr: warnings by default, `-v` debug, `-vv` trace, `-q`
/// errors only; `RUST_LOG` overrides.
pub fn init_logging(verbose: u8, quiet: bool) {
    use tracing_subscriber::EnvFilter;
    let default = match (quiet, verbose) {
        (true, _) => "error",
        (false, 0) => "warn",
        (false, 1) => "debug",
        (false, _) => "trace",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(std::io::stderr().is_terminal())
        .with_writer(|| LogSink)
        .init();
}
