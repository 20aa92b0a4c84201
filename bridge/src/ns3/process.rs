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
use std::net::TcpStream;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::Ns3Error;

/// The server's exit code for a bad argument value (its `BadArgument`).
const EXIT_BAD_ARGUMENT: i32 = 2;

/// How many lines of the server's stderr are kept for error messages.
const STDERR_TAIL_LINES: usize = 20;

pub(crate) struct ServerProcess {
    child: Child,
    binary: PathBuf,
    port: u16,
    stderr_tail: Arc<Mutex<VecDeque<String>>>,
}

impl ServerProcess {
    /// Starts `binary` with `args` plus `--connectionFd=N`, `connection`
    /// inherited as descriptor N, and waits up to `timeout` for the line
    /// (the port) it prints when it is ready.
    pub(crate) fn spawn(
        binary: &Path,
        args: &[String],
        timeout: Duration,
        connection: &TcpStream,
    ) -> Result<Self, Ns3Error> {
        let fd = connection.as_raw_fd();
        let mut command = Command::new(binary);
        command
            .args(args)
            .arg(format!("--connectionFd={fd}"))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // The parent may have died before prctl took effect.
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                // Only this child inherits the connection: it stays
                // close-on-exec in the parent and its other children.
                if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .map_err(|source| Ns3Error::Spawn { binary: binary.to_path_buf(), source })?;

        let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
        let stderr = child.stderr.take().expect("stderr is piped");
        let tail = Arc::clone(&stderr_tail);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                tracing::debug!(target: "ns3", "{line}");
                let mut tail = tail.lock().unwrap_or_else(|e| e.into_inner());
                if tail.len() == STDERR_TAIL_LINES {
                    tail.pop_front();
                }
                tail.push_back(line);
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

        let mut process = ServerProcess { child, binary: binary.to_path_buf(), port: 0, stderr_tail };
        let line = match port_line.recv_timeout(timeout) {
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
                if status.and_then(|s| s.code()) == Some(EXIT_BAD_ARGUMENT) {
                    return Err(Ns3Error::BadArgument {
                        binary: process.binary.clone(),
                        message: server_problem(&process.stderr_lines().join("\n")),
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

    /// The last lines the server wrote to stderr (after a short grace
    /// period for the reader thread).
    fn stderr_lines(&self) -> Vec<String> {
        std::thread::sleep(Duration::from_millis(20));
        self.stderr_tail.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned().collect()
    }

    /// The last lines the server wrote to stderr, formatted for an error
    /// message (empty when there were none). The reader thread may lag the
    /// child's exit by a moment, so give it a short grace period.
    pub(crate) fn stderr_tail(&self) -> String {
        let lines = self.stderr_lines();
        if lines.is_empty() {
            String::new()
        } else {
            format!("\nlast lines of the server's stderr:\n  {}", lines.join("\n  "))
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
pub(crate) fn describe_status(status: Option<ExitStatus>) -> String {
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

/// The server's complaint from its stderr: the last line that says
/// something, without the program's name and the `--PrintHelp` hint.
pub fn server_problem(stderr: &str) -> String {
    let line = stderr.lines().rev().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no message");
    let line = line.split_once(": ").filter(|(program, _)| !program.contains(' ')).map_or(line, |(_, rest)| rest);
    line.trim_end_matches(" (see --PrintHelp)").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_complaint_loses_the_program_name_and_the_hint() {
        let stderr = "netloop-server: --phyMode=Bogus is not a mode of 80211a; use one of OfdmRate6Mbps (see --PrintHelp)\n";
        assert_eq!(server_problem(stderr), "--phyMode=Bogus is not a mode of 80211a; use one of OfdmRate6Mbps");
        assert_eq!(server_problem("Invalid command-line argument: --bogus=1\n\n"), "Invalid command-line argument: --bogus=1");
    }
}
