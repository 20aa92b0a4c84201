//! Run output on disk (docs/design.md §8.3): files that are either complete or say
//! plainly that they are not.
//!
//! Data files are written under a temporary name, `<name>.partial`, and
//! renamed to `<name>` when the run completes. A run that fails keeps the
//! `.partial` files (flushed up to the last whole row) and still writes
//! `summary.json`, with `"complete": false`, the error and the simulated time
//! reached. `summary.json` itself is written to a temporary file and renamed,
//! so a reader never sees half of it.
//!
//! Files are opened with `O_NOFOLLOW`: a symbolic link planted under an
//! output name is an error, never a way to write elsewhere. A write that
//! fails (a full disk) removes its temporary file rather than leave an empty
//! one behind.
//!
//! Everything in `summary.json` is deterministic, so two runs of the same
//! scenario and seed give byte-identical files; wall-clock figures go to
//! `timing.json`, the one file that differs between identical runs.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

/// Suffix of a data file while it is being written, or after a failed run.
pub const PARTIAL_SUFFIX: &str = ".partial";

/// A data file written under `<name>.partial` until [`AtomicFile::commit`].
pub struct AtomicFile {
    final_path: PathBuf,
    partial_path: PathBuf,
    writer: BufWriter<File>,
}

impl AtomicFile {
    /// Creates `dir/<name>.partial`, replacing any leftover of an earlier run.
    ///
    /// # Errors
    /// The file cannot be created.
    pub fn create(dir: &Path, name: &str) -> io::Result<Self> {
        let final_path = dir.join(name);
        let partial_path = dir.join(format!("{name}{PARTIAL_SUFFIX}"));
        // A stale complete file from an earlier run would look like this run's.
        remove_if_exists(&final_path)?;
        let writer = BufWriter::with_capacity(1 << 16, create_no_follow(&partial_path)?);
        Ok(AtomicFile {
            final_path,
            partial_path,
            writer,
        })
    }

    /// Flushes and renames to the final name.
    ///
    /// # Errors
    /// Flushing or renaming failed; the partial file is left in place.
    pub fn commit(mut self) -> io::Result<PathBuf> {
        self.writer.flush()?;
        std::fs::rename(&self.partial_path, &self.final_path)?;
        Ok(self.final_path)
    }

    /// Flushes what was written and leaves the file under its partial name.
    pub fn abandon(mut self) -> PathBuf {
        let _ = self.writer.flush();
        self.partial_path
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer.write_all(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }
}

/// Writes `bytes` to `path` atomically (temporary file, then rename).
///
/// # Errors
/// Writing or renaming failed.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let tmp = path.with_extension(format!(
        "{}.tmp",
        path.extension()
            .and_then(|e| e.to_str())
            .unwrap_or_default()
    ));
    let written = create_no_follow(&tmp)
        .and_then(|mut f| f.write_all(bytes))
        .and_then(|()| std::fs::rename(&tmp, path));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

/// Creates (or truncates) `path`, refusing to follow a symbolic link there.
fn create_no_follow(path: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(libc::ELOOP) {
                io::Error::other(format!(
                    "{} is a symbolic link; netloop does not write through links",
                    path.display()
                ))
            } else {
                e
            }
        })
}

fn remove_if_exists(path: &Path) -> io::Result<()> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commit_renames_and_abandon_keeps_the_partial_name() {
        let dir = tempfile::tempdir().unwrap();
        let mut done = AtomicFile::create(dir.path(), "a.csv").unwrap();
        writeln!(done, "x").unwrap();
        assert!(dir.path().join("a.csv.partial").exists());
        assert!(!dir.path().join("a.csv").exists());
        done.commit().unwrap();
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.csv")).unwrap(),
            "x\n"
        );
        assert!(!dir.path().join("a.csv.partial").exists());

        // A second, failing run removes the complete file of the first.
        let mut failed = AtomicFile::create(dir.path(), "a.csv").unwrap();
        writeln!(failed, "y").unwrap();
        let kept = failed.abandon();
        assert_eq!(kept, dir.path().join("a.csv.partial"));
        assert_eq!(std::fs::read_to_string(kept).unwrap(), "y\n");
        assert!(!dir.path().join("a.csv").exists());
    }

    #[test]
    fn write_atomically_replaces_whole_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("summary.json");
        write_atomically(&path, b"{\"a\":1}").unwrap();
        write_atomically(&path, b"{}").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"{}");
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary file left"
        );
    }
}
