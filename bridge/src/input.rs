//! Reading input files with a size limit, and echoing their lines short.
//!
//! Every file netloop reads whole (scenario and sweep files, empirical
//! delay files, the `summary.json` of runs) is read through [`read_capped`]:
//! a path that names `/dev/zero`, a FIFO or a runaway file must end in a
//! clear error, not in memory that grows until the machine swaps. The
//! ns-3 server applies the same limit to the files it reads (topology files).

use std::io::Read;
use std::path::Path;

/// The most netloop reads from one input file: 16 MiB, far above any
/// scenario, sweep or delay file written by hand or by a script (the same
/// limit controlsim applies to equation model files).
pub const MAX_INPUT_BYTES: u64 = controlsim::limits::MAX_INPUT_BYTES;

// Error messages quote input lines short, in the co-simulation core too
// (the builtin network's delay files): the rule lives there.
pub use netloop_cosim::echo::{shorten_line, MAX_ECHOED_CHARS};

/// Why a file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{source}")]
    Io { source: std::io::Error },
    #[error("it is larger than {} MiB, the most netloop reads from one file", limit >> 20)]
    TooLarge { limit: u64 },
    #[error("it is not UTF-8 text")]
    NotText,
}

/// Reads the text of `path`, at most `limit` bytes of it: a longer file
/// (or an endless one, like `/dev/zero`) is [`ReadError::TooLarge`] after
/// reading no more than `limit + 1` bytes.
///
/// # Errors
/// The file cannot be opened or read, is too large, or is not UTF-8.
pub fn read_capped(path: &Path, limit: u64) -> Result<String, ReadError> {
    let file = std::fs::File::open(path).map_err(|source| ReadError::Io { source })?;
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() > limit)
    {
        return Err(ReadError::TooLarge { limit });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io { source })?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText)
}

/// [`read_capped`] with [`MAX_INPUT_BYTES`].
///
/// # Errors
/// As [`read_capped`].
pub fn read_input(path: &Path) -> Result<String, ReadError> {
    read_capped(path, MAX_INPUT_BYTES)
}

/// [`read_input`] with its error as text: the reader the co-simulation core
/// is given for the files a scenario names
/// ([`crate::network::BuiltinNetwork::new`]).
pub fn read_input_text(path: &Path) -> Result<String, String> {
    read_input(path).map_err(|e| e.to_string())
}

/// A compiler-style report (`12 | source text`, as the toml crate prints
/// them) with each quoted source line cut like [`shorten_line`]; the other
/// lines, which explain, are kept whole.
pub fn shorten_lines(text: &str) -> String {
    let cut = |line: &str| {
        let gutter = line.trim_start_matches(|c: char| c == ' ' || c.is_ascii_digit());
        match gutter.strip_prefix('|') {
            Some(quoted) => format!(
                "{}|{}",
                &line[..line.len() - gutter.len()],
                shorten_line(quoted)
            ),
            None => line.to_string(),
        }
    };
    text.lines().map(cut).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_too_large_after_reading_just_past_the_limit() {
        let started = std::time::Instant::now();
        let err = read_capped(Path::new("/dev/zero"), 1 << 20).unwrap_err();
        assert!(
            matches!(err, ReadError::TooLarge { limit } if limit == 1 << 20),
            "{err:?}"
        );
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        assert_eq!(
            err.to_string(),
            "it is larger than 1 MiB, the most netloop reads from one file"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_and_one_byte_more_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.toml");
        std::fs::write(&path, "x".repeat(100)).unwrap();
        assert_eq!(read_capped(&path, 100).unwrap().len(), 100);
        assert!(matches!(
            read_capped(&path, 99),
            Err(ReadError::TooLarge { limit: 99 })
        ));
    }

    #[test]
    fn long_lines_are_cut_to_80_characters() {
        let long = "é".repeat(200);
        let short = shorten_line(&long);
        assert_eq!(short.chars().count(), MAX_ECHOED_CHARS + 1);
        assert!(short.ends_with('…'));
        assert_eq!(shorten_line("a = 1"), "a = 1");
        let report = format!("TOML parse error at line 3\n  |\n3 | {long}\n  |  ^\n{long}");
        let lines: Vec<String> = shorten_lines(&report).lines().map(String::from).collect();
        assert_eq!(
            lines[2],
            format!("3 |{}", shorten_line(&format!(" {long}")))
        );
        assert_eq!(lines[4], long, "explanations are kept whole");
    }
}
