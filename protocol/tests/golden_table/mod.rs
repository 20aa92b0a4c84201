//! The reader of `golden/frames.txt` and `golden/bad_frames.txt` for this
//! crate's test binaries (test-support reads them for the others; it depends
//! on this crate, so this crate cannot use it).

use std::path::PathBuf;

pub fn golden_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("golden")
}

/// Parses `name hex` lines (or `name class hex` with `fields == 3`).
pub fn read_table(file: &str, fields: usize) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(golden_dir().join(file)).expect("golden file readable");
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let cols: Vec<String> = l.split_whitespace().map(String::from).collect();
            assert_eq!(cols.len(), fields, "malformed golden line: {l}");
            cols
        })
        .collect()
}
