//! Child processes: exit codes, output, and whether a process still exists.

use std::process::Output;

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Asserts an exit code, showing the output when it differs.
#[track_caller]
pub fn assert_exit(o: &Output, code: i32) {
    assert_eq!(
        o.status.code(),
        Some(code),
        "exit status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout(o),
        stderr(o)
    );
}

/// Asserts an exit code and that stderr says `needle` (an error naming its
/// key, file or line), showing the output when not.
#[track_caller]
pub fn assert_exit_saying(o: &Output, code: i32, needle: &str) {
    assert_exit(o, code);
    let err = stderr(o);
    assert!(err.contains(needle), "no {needle:?} in:\n{err}");
}

/// Asserts that a child succeeded, showing `what` and its stderr when not.
#[track_caller]
pub fn assert_success(o: &Output, what: &str) {
    assert!(o.status.success(), "{what}: {}", stderr(o));
}

/// Whether a process with this pid still exists, zombies included: for
/// children of the test process, a zombie means nobody reaped it.
pub fn process_exists(pid: u32) -> bool {
    std::path::Path::new(&format!("/proc/{pid}")).exists()
}

/// Whether a process is alive (running or stopped, not a zombie): for
/// grandchildren, whose reaping is init's business, not ours.
pub fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            stat.rsplit_once(')')
                .and_then(|(_, r)| r.split_whitespace().next())
                != Some("Z")
        }
        Err(_) => false,
    }
}

/// The pid of a child of `parent` (of its main thread) whose command is
/// `name`.
pub fn child_named(parent: u32, name: &str) -> Option<u32> {
    let children =
        std::fs::read_to_string(format!("/proc/{parent}/task/{parent}/children")).ok()?;
    children
        .split_whitespace()
        .filter_map(|p| p.parse().ok())
        .find(|pid: &u32| {
            std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == name)
        })
}
