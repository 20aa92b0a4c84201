//! The ns-3 server as a child process: spawned with its end of the connection
//! as an inherited descriptor, ready when it prints the first line of its
//! stdout, its stderr kept for error messages, and always reaped.
//!
//! Reaping has three layers, because a co-simulation that leaves ns-3
//! processes behind poisons the next sweep:
//! 1. `Drop` kills and waits, which covers errors and panics that unwind.
//! 2. The child asks the kernel for SIGKILL when its parent dies
//!    (`PR_SET_PDEATHSIG`), which covers `kill -9` of netloop and panics that
//!    abort. The signal follows the *thread* that spawned the child, so spawn
//!    from the thread that owns the session.
//! 3. The child runs in its own process group, so a terminal's Ctrl-C reaches
//!    only netloop, which then stops cleanly (partial results written) and
//!    lets layer 1 do its work.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Ns3Error;

/// The server's exit code for a bad argument value (its `BadArgument`).
const EXIT_BAD_ARGUMENT: i32 = 2;

/// How many lines of the start and of the end of the server's stderr are
/// kept for error messages: ns-3 prints what is wrong first and its help
/// after it, so the end alone hides the problem.
const STDERR_KEPT_LINES: usize = 20;

/// How often the wait for the port looks at the cancel flag: a Ctrl-C
/// during start-up acts within this, not at the connect timeout.
const CANCEL_POLL: Duration = Duration::from_millis(20);

pub(crate) struct ServerProcess {
    child: Child,
    binary: PathBuf,
    port: u16,
    stderr: Arc<Mutex<StderrLines>>,
}

/// The first and the last lines of the server's stderr.
#[derive(Default)]
struct StderrLines {
    head: Vec<String>,
    tail: VecDeque<String>,
    /// Lines seen in all; more than head and tail hold means some were skipped.
    total: usize,
}

impl StderrLines {
    fn push(&mut self, line: String) {
        self.total += 1;
        if self.head.len() < STDERR_KEPT_LINES {
            self.head.push(line);
            return;
        }
        if self.tail.len() == STDERR_KEPT_LINES {
            self.tail.pop_front();
        }
        self.tail.push_back(line);
    }

    /// Head, a `...` where lines were skipped, then tail.
    fn lines(&self) -> Vec<String> {
        let mut lines = self.head.clone();
        if self.total > self.head.len() + self.tail.len() {
            lines.push("...".into());
        }
        lines.extend(self.tail.iter().cloned());
        lines
    }
}

impl ServerProcess {
    /// Starts `binary` with `args` plus `--<flag>=N` (`connectionFd`, or
    /// `shmFd` for shared memory), `connection` inherited as descriptor N,
    /// and waits up to `timeout` for the line
    /// (the port) it prints when it is ready, or until `cancel` is set.
    pub(crate) fn spawn(
        binary: &Path,
        args: &[String],
        timeout: Duration,
        (connection, flag): (impl AsRawFd, &str),
        cancel: Option<&AtomicBool>,
    ) -> Result<Self, Ns3Error> {
        let fd = connection.as_raw_fd();
        let mut command = Command::new(binary);
        command
            .args(args)
            .arg(format!("--{flag}={fd}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        netloop_child_process::die_with_parent(&mut command);
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // Only this child inherits the connection: it stays
                // close-on-exec in the parent and its other children.
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command.spawn().map_err(|source| Ns3Error::Spawn {
            binary: binary.to_path_buf(),
            source,
        })?;

        let kept = Arc::new(Mutex::new(StderrLines::default()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let lines = Arc::clone(&kept);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                tracing::debug!(target: "ns3", "{line}");
                lines.lock().unwrap_or_else(|e| e.into_inner()).push(line);
            }
        });

        let stdout = child.stdout.take().expect("stdout is piped");
        let (first_line, port_line) = mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines().map_while(Result::ok);
            if let Some(line) = lines.next() {
                let _ = first_line.send(line);
            }
            for line in lines {
                tracing::info!(target: "ns3", "{line}");
            }
        });

        let mut process = ServerProcess {
            child,
            binary: binary.to_path_buf(),
            port: 0,
            stderr: kept,
        };
        let deadline = Instant::now() + timeout;
        let waited = loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match port_line.recv_timeout(left.min(CANCEL_POLL)) {
                Err(mpsc::RecvTimeoutError::Timeout)
                    if cancel.is_some_and(|c| c.load(Ordering::Relaxed)) =>
                {
                    return Err(Ns3Error::Interrupted {
                        reached: protocol::SimTime::ZERO,
                    });
                }
                Err(mpsc::RecvTimeoutError::Timeout) if !left.is_zero() => continue,
                other => break other,
            }
        };
        let line = match waited {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                return Err(Ns3Error::NoPort {
                    binary: process.binary.clone(),
                    timeout,
                    stderr: process.stderr_tail(),
                })
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                let status = process.wait_exit(Duration::from_secs(2));
                let said = process.stderr_lines().join("\n");
                // Exit code 2 is the server's "bad argument", named in its
                // structured line; ns-3's CommandLine complaints too, which
                // the server checks for before ns-3 reads its arguments.
                if status.and_then(|s| s.code()) == Some(EXIT_BAD_ARGUMENT) {
                    let problem = crate::network_schema::server_problem_of(&said);
                    return Err(Ns3Error::BadArgument {
                        binary: process.binary.clone(),
                        message: problem
                            .as_ref()
                            .map_or_else(|| server_problem(&said), |p| p.message.clone()),
                        argument: problem.map(|p| p.argument),
                    });
                }
                return Err(Ns3Error::ExitedAtStart {
                    binary: process.binary.clone(),
                    status: describe_status(status),
                    stderr: process.stderr_tail(),
                });
            }
        };
        process.port = line.trim().parse().map_err(|_| Ns3Error::BadPortLine {
            binary: process.binary.clone(),
            line: line.clone(),
        })?;
        Ok(process)
    }

    pub(crate) fn port(&self) -> u16 {
        self.port
    }

    /// The exit status if the server has exited, without blocking.
    pub(crate) fn try_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Waits up to `timeout` for the server to exit on its own.
    pub(crate) fn wait_exit(&mut self, timeout: Duration) -> Option<ExitStatus> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.try_status() {
                return Some(status);
            }
            if Instant::now() >= deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// The first and last lines the server wrote to stderr (after a short
    /// grace period for the reader thread).
    fn stderr_lines(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(20));
        self.stderr
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .lines()
    }

    /// What the server wrote to stderr, formatted for an error message
    /// (empty when there was nothing): its first and last lines, without
    /// any help text ns-3 printed after the problem. The reader thread may
    /// lag the child's exit by a moment, so give it a short grace period.
    pub(crate) fn stderr_tail(&self) -> String {
        let mut lines = self.stderr_lines();
        if let Some(start) = help_start(&lines.join("\n")) {
            lines.truncate(start);
        }
        if lines.iter().all(|l| l.trim().is_empty()) {
            String::new()
        } else {
            format!("\nthe server's stderr:\n  {}", lines.join("\n  "))
        }
    }

    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        if self.try_status().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// "exit code 2", "killed by signal 9", or "still running".
pub fn describe_status(status: Option<ExitStatus>) -> String {
    use std::os::unix::process::ExitStatusExt;
    match status {
        None => "still running".into(),
        Some(s) => match (s.code(), s.signal()) {
            (Some(code), _) => format!("exit code {code}"),
            (None, Some(sig)) => format!("killed by signal {sig}"),
            _ => s.to_string(),
        },
    }
}

/// The line where ns-3's `CommandLine` help begins
/// (`PROGRAM [Program Options] [General Arguments]`), if `stderr` holds it:
/// a program not built on `CheckedCommandLine` prints it after a problem,
/// which messages show without it. (Display only: nothing is decided by it.)
fn help_start(stderr: &str) -> Option<usize> {
    stderr
        .lines()
        .position(|l| l.contains("[Program Options]") || l.contains("[General Arguments]"))
}

/// The server's complaint from its stderr, without the program's name and
/// the `--PrintHelp` hint: the last line that says something, or, where
/// ns-3 printed its help after the problem, the first line before the help.
pub fn server_problem(stderr: &str) -> String {
    let lines: Vec<&str> = stderr.lines().map(str::trim).collect();
    let before_help =
        help_start(stderr).and_then(|start| lines[..start].iter().find(|l| !l.is_empty()));
    let line = before_help
        .or_else(|| lines.iter().rev().find(|l| !l.is_empty()))
        .copied()
        .unwrap_or("no message");
    let line = line
        .split_once(": ")
        .filter(|(program, _)| !program.contains(' '))
        .map_or(line, |(_, rest)| rest);
    line.trim_end_matches(" (see --PrintHelp)").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_complaint_loses_the_program_name_and_the_hint() {
        let stderr = "netloop-server: --phyMode=Bogus is not a mode of 80211a; use one of OfdmRate6Mbps (see --PrintHelp)\n";
        assert_eq!(
            server_problem(stderr),
            "--phyMode=Bogus is not a mode of 80211a; use one of OfdmRate6Mbps"
        );
        assert_eq!(
            server_problem("Invalid command-line argument: --bogus=1\n\n"),
            "Invalid command-line argument: --bogus=1"
        );
    }

    /// ns-3's CommandLine prints the problem, then its whole help.
    #[test]
    fn a_server_complaint_followed_by_the_help_is_the_line_before_the_help() {
        let stderr = "Invalid command-line argument: --txPower=nan\nnetloop-server [Program Options] [General Arguments]\n\n\
                      ns-3 stepping server\n\nGeneral Arguments:\n    --PrintHelp:                 Print this help message.\n";
        assert_eq!(
            server_problem(stderr),
            "Invalid command-line argument: --txPower=nan"
        );
    }

    #[test]
    fn the_first_and_last_lines_of_stderr_are_kept() {
        let mut kept = StderrLines::default();
        for i in 0..100 {
            kept.push(format!("line {i}"));
        }
        let lines = kept.lines();
        assert_eq!(lines.len(), 2 * STDERR_KEPT_LINES + 1);
        assert_eq!(
            (lines[0].as_str(), lines[STDERR_KEPT_LINES].as_str()),
            ("line 0", "...")
        );
        assert_eq!(lines.last().unwrap(), "line 99");
    }
}
