//! Outputs pinned by hash: a table of `case<TAB>file<TAB>sha256` lines,
//! recorded from code that is gone (the loops' own session), that a test
//! holds today's outputs to.

use sha2::{Digest, Sha256};

/// Asserts that `bytes` (the file `file` of case `case`) hash to what
/// `table` recorded for them.
///
/// # Panics
/// When the case has no recorded hash for the file, or it differs.
pub fn assert_pinned(table: &str, case: &str, file: &str, bytes: &[u8]) {
    let recorded = table
        .lines()
        .find_map(|l| {
            let mut f = l.split('\t');
            (f.next() == Some(case) && f.next() == Some(file)).then(|| f.next())
        })
        .flatten()
        .unwrap_or_else(|| panic!("{case}: no recorded {file}"));
    assert_eq!(
        sha256_hex(bytes),
        recorded,
        "{case}: {file} differs from the recorded one"
    );
}

/// The SHA-256 of `bytes` in hex, as the tables record it.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex::encode(Sha256::digest(bytes))
}
