//! The golden tables of wire frames in `protocol/golden/`: `frames.txt`,
//! one valid frame per message kind, and `bad_frames.txt`, malformed frames
//! with the error each decoder must report. The protocol crate's golden
//! test writes and checks them; every suite (that one too) reads them here.

use std::path::PathBuf;

/// `protocol/golden/`.
pub fn golden_dir() -> PathBuf {
    crate::root().join("protocol/golden")
}

/// A valid frame from `frames.txt`: the case's name and the bytes.
pub struct Frame {
    pub case: String,
    pub bytes: Vec<u8>,
}

/// A malformed frame from `bad_frames.txt`: the case's name, the
/// [`protocol::FrameError::class`] a decoder must report, and the bytes.
pub struct BadFrame {
    pub case: String,
    pub class: String,
    pub bytes: Vec<u8>,
}

/// Every row of `protocol/golden/frames.txt`, in file order.
pub fn frames() -> Vec<Frame> {
    rows("frames.txt", 2)
        .into_iter()
        .map(|(names, bytes)| Frame {
            case: names[0].clone(),
            bytes,
        })
        .collect()
}

/// Every row of `protocol/golden/bad_frames.txt`, in file order.
pub fn bad_frames() -> Vec<BadFrame> {
    rows("bad_frames.txt", 3)
        .into_iter()
        .map(|(names, bytes)| BadFrame {
            case: names[0].clone(),
            class: names[1].clone(),
            bytes,
        })
        .collect()
}

/// The rows of a golden table, each of `fields` whitespace-separated
/// fields, the last a frame in hex: the fields before it, and the frame.
/// Blank lines and `#` comments are skipped.
fn rows(file: &str, fields: usize) -> Vec<(Vec<String>, Vec<u8>)> {
    let path = golden_dir().join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut row: Vec<String> = l.split_whitespace().map(String::from).collect();
            assert_eq!(
                row.len(),
                fields,
                "malformed line in {}: {l}",
                path.display()
            );
            let hex = row.pop().unwrap();
            (row, hex_decode(&hex))
        })
        .collect()
}

fn hex_decode(s: &str) -> Vec<u8> {
    assert!(s.len() % 2 == 0, "odd-length hex {s:?}");
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap_or_else(|_| panic!("bad hex {s:?}")))
        .collect()
}
