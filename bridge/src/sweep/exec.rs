//! Running a plan: child processes under a supervisor with timeouts, a
//! progress bar and Ctrl-C handling.
//!
//! Why tokio and child processes: a sweep waits on many things at once (N
//! children, N deadlines, SIGINT and SIGTERM); a single-threaded async
//! reactor waits on all of them in one `select!` without a thread per run or
//! polling loops, and `tokio::process` reaps children and kills them on drop.
//! The runs themselves are separate `netloop run` processes, so the
//! supervisor only waits: one thread is plenty, and a run that hangs or
//! crashes cannot disturb the others or the sweep.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::watch;
use tokio::task::JoinSet;

use super::plan::Plan;
use super::progress::Progress;
use super::run_state;
use super::shard::Shard;
use super::SweepError;
use crate::input::read_input;

/// How to run a plan.
#[derive(Clone, Debug)]
pub struct ExecOptions {
    /// The `netloop` executable that runs each run.
    pub exe: PathBuf,
    /// Runs at once.
    pub jobs: usize,
    /// Skip runs that are already complete.
    pub resume: bool,
    /// No bar and no per-run lines (failures are still listed).
    pub quiet: bool,
    /// Time between SIGTERM and SIGKILL when a run is stopped.
    pub grace: Duration,
    /// Run only this shard's runs (`--shard I/N`); the others are left
    /// alone, whatever state their directories are in.
    pub shard: Option<Shard>,
}

impl ExecOptions {
    pub fn new(exe: PathBuf) -> Self {
        ExecOptions {
            exe,
            jobs: std::thread::available_parallelism().map_or(1, |n| n.get()),
            resume: false,
            quiet: false,
            grace: Duration::from_secs(5),
            shard: None,
        }
    }
}

/// What happened to one run in this invocation.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Complete from an earlier invocation; skipped by `--resume`.
    Skipped,
    Complete {
        wall: Duration,
    },
    /// Ended with an error (its message, from the run's summary or log).
    Failed {
        error: String,
    },
    /// Stopped after the wall-clock limit.
    TimedOut {
        limit: Duration,
    },
    /// Stopped by Ctrl-C.
    Interrupted,
    /// Never started (the sweep was interrupted first, or it is another
    /// shard's and that shard has not started it yet).
    NotRun,
    /// Started but left no outcome: still running elsewhere, or its
    /// supervisor died with it (a killed node). Only read from disk.
    Incomplete,
}

impl Outcome {
    /// The word in the `status` column of `sweep.csv`.
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Skipped | Outcome::Complete { .. } => "complete",
            Outcome::Failed { .. } => "failed",
            Outcome::TimedOut { .. } => "timeout",
            Outcome::Interrupted => "interrupted",
            Outcome::NotRun => "not_run",
            Outcome::Incomplete => "incomplete",
        }
    }

    pub fn is_complete(&self) -> bool {
        matches!(self, Outcome::Skipped | Outcome::Complete { .. })
    }

    /// The error to list, for runs that did not complete.
    pub fn error(&self) -> Option<String> {
        match self {
            Outcome::Failed { error } => Some(error.clone()),
            Outcome::TimedOut { limit } => {
                Some(format!("timed out after {:.0?} of wall-clock time", limit))
            }
            Outcome::Interrupted => Some("interrupted".into()),
            Outcome::NotRun => Some("not run (the sweep was interrupted)".into()),
            Outcome::Incomplete => {
                Some("incomplete: still running, or its node or supervisor died".into())
            }
            _ => None,
        }
    }
}

/// The outcome of every run of a plan, in plan order.
#[derive(Clone, Debug)]
pub struct ExecReport {
    pub outcomes: Vec<Outcome>,
    /// The plan indices this invocation was responsible for (all of them
    /// unless it ran one shard).
    pub selected: Vec<usize>,
    /// Ctrl-C (or SIGTERM) stopped the sweep.
    pub interrupted: bool,
    /// Wall time of this invocation.
    pub makespan: Duration,
}

impl ExecReport {
    pub fn failed(&self) -> usize {
        self.selected
            .iter()
            .filter(|&&i| !self.outcomes[i].is_complete())
            .count()
    }
}

/// Whether `dir` holds a complete run of the config with `hash`, or with
/// `legacy`, the hash an earlier version gave it (docs/sweeps.md).
pub fn is_complete(dir: &Path, hash: &str, legacy: Option<&str>) -> bool {
    let Ok(text) = read_input(&dir.join("summary.json")) else {
        return false;
    };
    let Ok(summary) = serde_json::from_str::<serde_json::Value>(&text) else {
        return false;
    };
    summary["complete"] == serde_json::Value::Bool(true)
        && summary["config_hash"]
            .as_str()
            .is_some_and(|h| h == hash || Some(h) == legacy)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    No,
    /// SIGTERM the runs, SIGKILL after the grace period.
    Graceful,
    /// SIGKILL now.
    Now,
}

/// Runs the plan's runs that need running.
///
/// # Errors
/// [`SweepError::Output`] when the results directory cannot be written,
/// [`SweepError::Internal`] when the runtime or signal handlers cannot start.
/// Failed runs are not errors: they are in the report.
pub fn execute(plan: &Plan, options: &ExecOptions) -> Result<ExecReport, SweepError> {
    let started = Instant::now();
    let selected: Vec<usize> = match options.shard {
        // Shards share the sweep directory: the plan must be the one every
        // other shard runs, and none may remove another's runs.
        Some(shard) => {
            plan.write_shared()?;
            shard.runs(plan.runs.len()).collect()
        }
        None => {
            plan.write()?;
            (0..plan.runs.len()).collect()
        }
    };
    let mut outcomes = vec![Outcome::NotRun; plan.runs.len()];
    let mut pending = Vec::new();
    for &i in &selected {
        let run = &plan.runs[i];
        let dir = plan.out_dir.join(&run.dir);
        if options.resume && is_complete(&dir, &run.hash, run.legacy_hash.as_deref()) {
            outcomes[i] = Outcome::Skipped;
            continue;
        }
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|source| SweepError::Output {
                path: dir.clone(),
                source,
            })?;
        }
        pending.push(i);
    }
    let skipped = selected.len() - pending.len();
    let progress = Progress::new(pending.len() as u64, options.quiet);
    if skipped > 0 {
        progress.line(&format!(
            "resume: {skipped} of {} runs already complete, {} to run",
            selected.len(),
            pending.len()
        ));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| SweepError::Internal(format!("cannot start the sweep supervisor: {e}")))?;
    let interrupted =
        runtime.block_on(supervise(plan, options, &pending, &mut outcomes, &progress))?;
    progress.finish();
    Ok(ExecReport {
        outcomes,
        selected,
        interrupted,
        makespan: started.elapsed(),
    })
}

async fn supervise(
    plan: &Plan,
    options: &ExecOptions,
    pending: &[usize],
    outcomes: &mut [Outcome],
    progress: &Progress,
) -> Result<bool, SweepError> {
    let internal =
        |e: std::io::Error| SweepError::Internal(format!("cannot install the Ctrl-C handler: {e}"));
    let mut sigint = signal(SignalKind::interrupt()).map_err(internal)?;
    let mut sigterm = signal(SignalKind::terminate()).map_err(internal)?;
    let (stop_tx, stop_rx) = watch::channel(Stop::No);
    let mut queue = pending.iter().copied();
    let mut running: JoinSet<(usize, Outcome)> = JoinSet::new();
    let (mut done, mut failed) = (0usize, 0usize);
    let total = pending.len();
    let jobs = options.jobs.max(1);
    loop {
        while running.len() < jobs && *stop_tx.borrow() == Stop::No {
            let Some(i) = queue.next() else { break };
            let run = &plan.runs[i];
            let task = RunTask {
                index: i,
                exe: options.exe.clone(),
                args: run.args.clone(),
                dir: plan.out_dir.join(&run.dir),
                hash: run.hash.clone(),
                legacy_hash: run.legacy_hash.clone(),
                timeout: plan.timeout(),
                grace: options.grace,
                stop: stop_rx.clone(),
            };
            running.spawn(task.run());
        }
        progress.set_message(format!("{} running, {failed} failed", running.len()));
        if running.is_empty() {
            break;
        }
        tokio::select! {
            joined = running.join_next() => {
                let Some(joined) = joined else { continue };
                let (i, outcome) = joined.map_err(|e| SweepError::Internal(format!("a run supervisor task failed: {e}")))?;
                done += 1;
                let run = &plan.runs[i];
                let label = format!("{}  {}  run {}", run.hash, plan.point_of(run).label(), run.run);
                match &outcome {
                    Outcome::Complete { wall } => progress.line(&format!("done    [{done}/{total}] {label}  ({:.1}s)", wall.as_secs_f64())),
                    other => {
                        failed += 1;
                        let error = other.error().unwrap_or_default();
                        let first = error.lines().next().unwrap_or("");
                        progress.important(&format!("{:<7} [{done}/{total}] {label}: {first}", other.status()));
                    }
                }
                progress.inc();
                let dir = plan.out_dir.join(&run.dir);
                if let Err(e) = run_state::record(&dir, &outcome) {
                    progress.important(&format!("warning: cannot record the outcome of {}: {e}", dir.display()));
                }
                outcomes[i] = outcome;
            }
            _ = sigint.recv() => escalate(&stop_tx, progress),
            _ = sigterm.recv() => escalate(&stop_tx, progress),
        }
    }
    let interrupted = *stop_tx.borrow() != Stop::No;
    Ok(interrupted)
}

fn escalate(stop: &watch::Sender<Stop>, progress: &Progress) {
    let next = match *stop.borrow() {
        Stop::No => {
            progress.important(
                "interrupted: stopping the running runs (they keep partial results); Ctrl-C again to kill them now",
            );
            Stop::Graceful
        }
        _ => {
            progress.important("interrupted again: killing the running runs");
            Stop::Now
        }
    };
    let _ = stop.send(next);
}

/// One child run.
struct RunTask {
    index: usize,
    exe: PathBuf,
    args: Vec<String>,
    dir: PathBuf,
    hash: String,
    legacy_hash: Option<String>,
    timeout: Duration,
    grace: Duration,
    stop: watch::Receiver<Stop>,
}

impl RunTask {
    async fn run(self) -> (usize, Outcome) {
        let outcome = self.supervise().await;
        (self.index, outcome)
    }

    async fn supervise(&self) -> Outcome {
        let started = Instant::now();
        let log_path = self.dir.join("netloop.log");
        let log = match std::fs::create_dir_all(&self.dir).and_then(|()| File::create(&log_path)) {
            Ok(f) => f,
            Err(e) => {
                return Outcome::Failed {
                    error: format!("cannot create {}: {e}", log_path.display()),
                }
            }
        };
        let (out, err) = match log.try_clone() {
            Ok(copy) => (Stdio::from(copy), Stdio::from(log)),
            Err(e) => {
                return Outcome::Failed {
                    error: format!("cannot open {}: {e}", log_path.display()),
                }
            }
        };
        tracing::debug!(run = %self.hash, "starting {} {}", self.exe.display(), self.args.join(" "));
        let mut command = tokio::process::Command::new(&self.exe);
        command
            .args(&self.args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err)
            .process_group(0)
            .kill_on_drop(true);
        // If the sweep itself dies (kill -9), its runs stop too, keeping partial
        // results: they get SIGTERM when the thread that spawned them exits.
        // SAFETY: prctl is async-signal-safe; nothing else runs between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = match command.spawn() {
            Ok(c) => c,
            Err(e) => {
                return Outcome::Failed {
                    error: format!("cannot start {}: {e}", self.exe.display()),
                }
            }
        };
        let pid = child.id().map(|p| p as libc::pid_t);

        let mut stop = self.stop.clone();
        let stop_reason = tokio::select! {
            status = child.wait() => {
                return match status {
                    Ok(status) => self.judge(status, started.elapsed()),
                    Err(e) => Outcome::Failed { error: format!("cannot wait for the run: {e}") },
                };
            }
            _ = tokio::time::sleep(self.timeout) => Outcome::TimedOut { limit: self.timeout },
            _ = stop.wait_for(|s| *s != Stop::No) => Outcome::Interrupted,
        };

        // Stop it: SIGTERM lets the run write its partial results; SIGKILL
        // (to its whole process group) after the grace period or a second Ctrl-C.
        if *stop.borrow() != Stop::Now {
            if let Some(pid) = pid {
                // SAFETY: kill(2) with a pid we spawned and have not reaped yet.
                unsafe { libc::kill(pid, libc::SIGTERM) };
            }
            tokio::select! {
                _ = child.wait() => return self.stopped(stop_reason, started.elapsed()),
                _ = tokio::time::sleep(self.grace) => {}
                _ = stop.wait_for(|s| *s == Stop::Now) => {}
            }
        }
        if let Some(pid) = pid {
            // SAFETY: as above; the negative pid names the child's process group.
            unsafe { libc::kill(-pid, libc::SIGKILL) };
        }
        let _ = child.kill().await;
        self.stopped(stop_reason, started.elapsed())
    }

    /// A run that was told to stop may have finished just before: what its
    /// `summary.json` says wins, as it does for `--resume`.
    fn stopped(&self, reason: Outcome, wall: Duration) -> Outcome {
        if is_complete(&self.dir, &self.hash, self.legacy_hash.as_deref()) {
            Outcome::Complete { wall }
        } else {
            reason
        }
    }

    /// The outcome of a run that exited by itself.
    fn judge(&self, status: std::process::ExitStatus, wall: Duration) -> Outcome {
        if status.success() {
            if is_complete(&self.dir, &self.hash, self.legacy_hash.as_deref()) {
                return Outcome::Complete { wall };
            }
            return Outcome::Failed {
                error: format!(
                    "the run exited successfully but {} is not a complete run with config_hash {}",
                    self.dir.join("summary.json").display(),
                    self.hash
                ),
            };
        }
        let how = match status.code() {
            Some(code) => format!("exit code {code}"),
            None => {
                use std::os::unix::process::ExitStatusExt;
                format!("killed by signal {}", status.signal().unwrap_or(0))
            }
        };
        let detail = error_of(&self.dir);
        Outcome::Failed {
            error: if detail.is_empty() {
                how
            } else {
                format!("{detail} ({how})")
            },
        }
    }
}

/// The error a failed run reported: its `summary.json` error, else the
/// `error:` lines of its log, else the message of a panic in its log, else
/// the log's last lines.
pub fn error_of(dir: &Path) -> String {
    if let Ok(text) = read_input(&dir.join("summary.json")) {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
            if let Some(e) = v["error"].as_str() {
                let reached = v["reached_s"]
                    .as_f64()
                    .map(|s| format!(" (simulated time reached: {s}s)"))
                    .unwrap_or_default();
                return format!("{e}{reached}");
            }
        }
    }
    let log = log_tail(&dir.join("netloop.log"));
    let lines: Vec<&str> = log.lines().collect();
    if let Some(start) = lines.iter().position(|l| l.starts_with("error:")) {
        let text = lines[start..]
            .iter()
            .take(12)
            .copied()
            .collect::<Vec<_>>()
            .join("\n");
        return text.trim_start_matches("error:").trim().to_string();
    }
    if let Some(message) = panic_message(&lines) {
        return message;
    }
    lines[lines.len().saturating_sub(3)..].join("\n")
}

/// How much of the end of a run's log is read for its error: a verbose run
/// can log gigabytes, and the error is at the end.
const LOG_TAIL_BYTES: u64 = 256 * 1024;

/// The last [`LOG_TAIL_BYTES`] of a log, from its first whole line.
fn log_tail(path: &Path) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    let start = len.saturating_sub(LOG_TAIL_BYTES);
    if file.seek(SeekFrom::Start(start)).is_err() {
        return String::new();
    }
    let mut bytes = Vec::new();
    let _ = file.take(LOG_TAIL_BYTES).read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    match (start > 0, text.find('\n')) {
        (true, Some(i)) => text[i + 1..].to_string(),
        _ => text,
    }
}

/// `panicked at FILE:LINE:COL: MESSAGE` from a Rust panic report in a log
/// (`thread 'main' panicked at src/x.rs:3:5:` followed by the message, then
/// the `note:` about backtraces or the backtrace itself).
fn panic_message(lines: &[&str]) -> Option<String> {
    let start = lines.iter().rposition(|l| l.contains(" panicked at "))?;
    let place = lines[start]
        .split_once(" panicked at ")
        .map(|(_, p)| p.trim_end_matches(':').trim())?;
    let message: Vec<&str> = lines[start + 1..]
        .iter()
        .copied()
        .take_while(|l| !l.starts_with("note: ") && !l.starts_with("stack backtrace:"))
        .collect();
    let message = message.join("\n");
    let message = message.trim();
    Some(if message.is_empty() {
        format!("panicked at {place}")
    } else {
        format!("panicked at {place}: {message}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a run that panics leaves in its log: Rust's report, then the
    /// backtrace when RUST_BACKTRACE is set, or a note about it.
    const PANIC_WITH_BACKTRACE: &str = "\
thread 'main' (4242) panicked at bridge/src/session.rs:120:9:
assertion `left == right` failed: a delivery before its send
  left: 3
 right: 4
stack backtrace:
   0: __rustc::rust_begin_unwind
   1: core::panicking::panic_fmt
   2: bridge::session::Session::run
";

    const PANIC_WITH_NOTE: &str = "\
2026-01-01T00:00:00Z  WARN bridge: something before
thread 'main' panicked at src/main.rs:7:5:
index out of bounds: the len is 0 but the index is 3
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace
";

    #[test]
    fn the_error_of_a_panicked_run_is_its_message_not_a_backtrace_line() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("netloop.log"), PANIC_WITH_BACKTRACE).unwrap();
        assert_eq!(
            error_of(dir.path()),
            "panicked at bridge/src/session.rs:120:9: assertion `left == right` failed: a delivery before its send\n  left: 3\n right: 4"
        );
        std::fs::write(dir.path().join("netloop.log"), PANIC_WITH_NOTE).unwrap();
        assert_eq!(
            error_of(dir.path()),
            "panicked at src/main.rs:7:5: index out of bounds: the len is 0 but the index is 3"
        );
    }

    #[test]
    fn only_the_end_of_a_long_log_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = "x".repeat(3 * LOG_TAIL_BYTES as usize);
        log.push_str("\nerror: the last words\n");
        std::fs::write(dir.path().join("netloop.log"), log).unwrap();
        assert_eq!(error_of(dir.path()), "the last words");
    }
}
