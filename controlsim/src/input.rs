//! Reading the files a config names (an equation model, an FMU) with a size
//! limit: a path that names `/dev/zero`, a FIFO or a runaway file must end
//! in a clear error, not in memory that grows until the machine swaps. The
//! bridge reads scenario, sweep and delay files under the same rule
//! (`bridge::input`).

use std::io::Read;
use std::path::Path;

/// Reads at most `limit` bytes of `path`: a longer (or endless) file is an
/// error saying so after reading no more than `limit + 1` bytes. `what` ends
/// that message: "it is larger than 16 MiB, the most netloop reads from
/// `what`".
///
/// # Errors
/// The file cannot be opened or read, or is larger than `limit`.
pub fn read_capped(path: &Path, limit: u64, what: &str) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(path)?;
    if file
        .metadata()
        .is_ok_and(|m| m.is_file() && m.len() > limit)
    {
        return Err(too_large(limit, what));
    }
    let mut bytes = Vec::new();
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit, what));
    }
    Ok(bytes)
}

/// [`read_capped`] of a text file.
///
/// # Errors
/// As [`read_capped`], and a file that is not UTF-8.
pub fn read_text_capped(path: &Path, limit: u64, what: &str) -> std::io::Result<String> {
    String::from_utf8(read_capped(path, limit, what)?)
        .map_err(|_| std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

fn too_large(limit: u64, what: &str) -> std::io::Error {
    std::io::Error::other(format!(
        "it is larger than {} MiB, the most netloop reads from {what}",
        limit >> 20
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_after_the_limit() {
        let err = read_capped(Path::new("/dev/zero"), 1 << 20, "one file").unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is larger than 1 MiB, the most netloop reads from one file"
        );
    }

    #[test]
    fn a_file_at_the_limit_is_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        std::fs::write(&path, vec![b'x'; 1 << 20]).unwrap();
        assert_eq!(read_capped(&path, 1 << 20, "f").unwrap().len(), 1 << 20);
        assert!(read_capped(&path, (1 << 20) - 1, "f").is_err());
        std::fs::write(&path, [0xff, 0xfe]).unwrap();
        assert!(read_text_capped(&path, 10, "f").is_err());
    }
}
