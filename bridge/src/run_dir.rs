//! A run directory belongs to one run at a time, and holds that run's
//! outputs only.
//!
//! - **Lock.** A run (or a sweep, for its sweep directory) holds an
//!   exclusive `flock` on `DIR/netloop.lock`, which holds its pid. A second
//!   run into the same directory fails at once, naming that pid, instead of
//!   interleaving its rows with the first. The kernel drops the lock when
//!   its holder dies, even by SIGKILL, so a leftover file never blocks.
//! - **Fresh outputs.** Before it writes anything, a run removes what an
//!   earlier run left under netloop's output names: `summary.json` first
//!   (so no summary says "complete" beside the new run's partial files),
//!   then the data files, `timing.json`, `plots/` and `ns3/`. Other files
//!   in the directory are left alone.
//! - **No links.** An output name that is a symbolic link is refused rather
//!   than written through (it could point anywhere); files are also opened
//!   with `O_NOFOLLOW` (see [`crate::output`]) so a link planted mid-run
//!   fails too.

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, Write};
use std::os::fd::AsRawFd;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The lock file's name inside the directory it guards.
pub const LOCK_FILE: &str = "netloop.lock";

/// Every name a run writes in its directory, in the order they are
/// cleared: the summary first, since it is what says a run is complete.
pub const RUN_OUTPUTS: [&str; 15] = [
    "summary.json",
    "summary.json.tmp",
    "timing.json",
    "timing.json.tmp",
    "timeseries.csv",
    "timeseries.csv.partial",
    "packets.csv",
    "packets.csv.partial",
    "timeseries.parquet",
    "timeseries.parquet.partial",
    "packets.parquet",
    "packets.parquet.partial",
    "plots",
    "ns3",
    LOCK_FILE,
];

/// Why a directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum RunDirError {
    #[error("{dir} is in use by {holder} (lock file {lock}); wait for it to end or choose another directory", dir = .dir.display(), lock = .dir.join(LOCK_FILE).display(), holder = holder_text(*.pid))]
    Busy { dir: PathBuf, pid: Option<u32> },
    #[error("{path} is a symbolic link; netloop does not write through links in a run directory: remove it or choose another directory", path = .path.display())]
    Link { path: PathBuf },
    #[error("cannot use {path}: {source}", path = .path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn holder_text(pid: Option<u32>) -> String {
    match pid {
        Some(pid) => format!("netloop process {pid}"),
        None => "another netloop process".into(),
    }
}

/// An exclusive hold on a directory; released (and its file removed) on drop.
#[derive(Debug)]
pub struct DirLock {
    path: PathBuf,
    /// Holds the `flock`; closing it releases the lock.
    _file: File,
}

impl DirLock {
    /// Takes the lock on `dir` (which must exist) without waiting.
    ///
    /// # Errors
    /// [`RunDirError::Busy`] naming the holder's pid, [`RunDirError::Link`]
    /// when the lock file is a symbolic link, or an I/O error.
    pub fn acquire(dir: &Path) -> Result<DirLock, RunDirError> {
        let path = dir.join(LOCK_FILE);
        let io = |source| RunDirError::Io {
            path: path.clone(),
            source,
        };
        loop {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&path)
                .map_err(|e| {
                    if e.raw_os_error() == Some(libc::ELOOP) {
                        RunDirError::Link { path: path.clone() }
                    } else {
                        io(e)
                    }
                })?;
            // SAFETY: flock on a descriptor we own.
            if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
                let error = std::io::Error::last_os_error();
                if error.raw_os_error() != Some(libc::EWOULDBLOCK) {
                    return Err(io(error));
                }
                return Err(RunDirError::Busy {
                    dir: dir.to_path_buf(),
                    pid: holder_pid(&mut file),
                });
            }
            // The previous holder may have removed the file between our open
            // and our lock: then we hold a lock on nothing, so try again.
            let ours = file.metadata().map_err(io)?;
            match std::fs::symlink_metadata(&path) {
                Ok(there) if there.ino() == ours.ino() && there.dev() == ours.dev() => {}
                _ => continue,
            }
            // The pid is for the message of a second run; on a full disk the
            // lock holds without it.
            let _ = file
                .set_len(0)
                .and_then(|()| writeln!(file, "{}", std::process::id()));
            return Ok(DirLock { path, _file: file });
        }
    }
}

/// The pid a lock holder wrote; it writes it just after locking, so give
/// it a moment.
fn holder_pid(file: &mut File) -> Option<u32> {
    for _ in 0..10 {
        let mut text = String::new();
        if file.rewind().is_ok() && file.read_to_string(&mut text).is_ok() {
            if let Ok(pid) = text.trim().parse() {
                return Some(pid);
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    None
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Removed while still locked, so no one else can hold this file.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// Refuses a directory where any of `names` is a symbolic link.
///
/// # Errors
/// [`RunDirError::Link`] naming the first link.
pub fn refuse_links(dir: &Path, names: &[&str]) -> Result<(), RunDirError> {
    for name in names {
        let path = dir.join(name);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(RunDirError::Link { path });
        }
    }
    Ok(())
}

/// Removes what an earlier run left in `dir` under netloop's output names
/// (not the lock), `summary.json` first.
///
/// # Errors
/// [`RunDirError::Link`] when an output name is a link (nothing is removed
/// then), or an I/O error.
pub fn clear_outputs(dir: &Path) -> Result<(), RunDirError> {
    refuse_links(dir, &RUN_OUTPUTS)?;
    for name in RUN_OUTPUTS.iter().filter(|n| **n != LOCK_FILE) {
        let path = dir.join(name);
        let removed = match std::fs::symlink_metadata(&path) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&path),
            Ok(_) => std::fs::remove_file(&path),
            Err(_) => Ok(()),
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(RunDirError::Io { path, source: e })
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_fails_at_once_naming_the_holder_and_a_released_lock_is_free() {
        let dir = tempfile::tempdir().unwrap();
        let first = DirLock::acquire(dir.path()).unwrap();
        let text = std::fs::read_to_string(dir.path().join(LOCK_FILE)).unwrap();
        assert_eq!(text, format!("{}\n", std::process::id()));
        match DirLock::acquire(dir.path()) {
            Err(RunDirError::Busy { pid, .. }) => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        drop(first);
        assert!(!dir.path().join(LOCK_FILE).exists());
        DirLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn a_stale_lock_file_without_a_holder_does_not_block() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(LOCK_FILE), "999999\n").unwrap();
        let _lock = DirLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn outputs_are_cleared_summary_first_and_other_files_kept() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["summary.json", "timeseries.csv.partial", "notes.txt"] {
            std::fs::write(dir.path().join(name), "x").unwrap();
        }
        std::fs::create_dir_all(dir.path().join("plots/sub")).unwrap();
        clear_outputs(dir.path()).unwrap();
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(left, ["notes.txt"]);
    }

    #[test]
    fn a_link_under_an_output_name_is_refused_and_nothing_is_removed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "precious").unwrap();
        std::fs::write(dir.path().join("summary.json"), "{}").unwrap();
        std::os::unix::fs::symlink(&target, dir.path().join("packets.csv.partial")).unwrap();
        let err = clear_outputs(dir.path()).unwrap_err();
        assert!(
            matches!(&err, RunDirError::Link { path } if path.ends_with("packets.csv.partial")),
            "{err}"
        );
        assert!(dir.path().join("summary.json").exists());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
    }
}
