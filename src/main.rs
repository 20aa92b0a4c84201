//! The `netloop` command: parses the command line and hands it to
//! [`bridge::app`], which holds every command (docs/cli.md).
//!
//! Exit codes: 0 success, 1 run failure, 2 bad input (docs/design.md §8.2);
//! see [`bridge::app::Failure`].

use std::process::ExitCode;

use bridge::app::{self, cli::Cli};
use clap::Parser;

fn main() -> ExitCode {
    // Like any Unix tool, end quietly when the reader of our output goes away
    // (`netloop check x.toml | head`) instead of panicking on a failed print.
    // Sockets to the ns-3 server are unaffected: std writes them with
    // MSG_NOSIGNAL, so a dead server is still an error, not a signal.
    // SAFETY: setting a signal disposition at start-up, before any thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    app::init_logging(cli.verbose, cli.quiet);
    match app::dispatch(cli.command, cli.quiet) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("error: {}", failure.message());
            ExitCode::from(failure.exit_code())
        }
    }
}
