//! Children that die with netloop.
//!
//! netloop starts other programs (the ns-3 server, its `--check` and
//! `--describe`, the FMU host). When netloop is killed with SIGKILL it cannot
//! clean up, and a child left running would hold a port, a CPU or a file.
//! Linux's `PR_SET_PDEATHSIG` has the kernel send the child SIGKILL when its
//! parent goes. The kernel's "parent" is the *thread* that forked, so a child
//! must be spawned by a thread that lives as long as the child is needed
//! (every spawn in netloop waits for, or owns, its child on that thread).
//!
//! # Lifecycle of a child
//! 1. **Spawn**: [`die_with_parent`] on the `Command`, then spawn it from
//!    the thread that will wait for it or own it.
//! 2. **Wait**: a child asked one question (`--check`, `--describe`) is
//!    waited for with [`wait_until`], which kills and reaps it at the
//!    deadline; a long-lived child (the server, the FMU host) is owned by
//!    its client, which kills and reaps it when dropped.
//! 3. **netloop dies**: the kernel kills the child, whatever killed netloop.

use std::os::unix::process::CommandExt;
use std::process::Command;

/// Makes the child `command` spawns receive SIGKILL when the spawning thread
/// (and so netloop) dies, also if it died between fork and `prctl`.
pub fn die_with_parent(command: &mut Command) -> &mut Command {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: only async-signal-safe calls (prctl, getppid, _exit) between
    // fork and exec.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        })
    }
}

/// Waits for `child` until `deadline`: its exit status, or `None` when the
/// deadline passed first, in which case the child has been killed and
/// reaped (a `--check` or `--describe` that hangs must not outlive the ask).
pub fn wait_until(
    child: &mut std::process::Child,
    deadline: std::time::Instant,
) -> std::io::Result<Option<std::process::ExitStatus>> {
    loop {
        if let Some(status) = child.try_wait()? {
            return Ok(Some(status));
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
}

#[cfg(test)]
mod tests {
    use std::process::Command;
    use std::time::{Duration, Instant};

    use super::wait_until;

    #[test]
    fn a_child_that_ends_in_time_gives_its_status() {
        let mut child = Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let status = wait_until(&mut child, Instant::now() + Duration::from_secs(10)).unwrap();
        assert_eq!(status.and_then(|s| s.code()), Some(3));
    }

    #[test]
    fn a_child_past_the_deadline_is_killed_and_reaped() {
        let mut child = Command::new("sleep").arg("30").spawn().unwrap();
        let started = Instant::now();
        let status = wait_until(&mut child, started + Duration::from_millis(50)).unwrap();
        assert_eq!(status, None);
        assert!(started.elapsed() < Duration::from_secs(5));
        // Reaped: nothing is left to wait for.
        assert!(child.try_wait().unwrap().is_some());
    }
}
