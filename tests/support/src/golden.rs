//! The golden tables of wire frames in `protocol/golden/`, for suites
//! outside the protocol crate (the protocol crate's own golden test writes
//! and checks them).

/// A malformed frame from `bad_frames.txt`: the case's name, the
/// [`protocol::FrameError::class`] a decoder must report, and the bytes.
pub struct BadFrame {
    pub case: String,
    pub class: String,
    pub bytes: Vec<u8>,
}

/// Every row of `protocol/golden/bad_frames.txt`.
pub fn bad_frames() -> Vec<BadFrame> {
    let path = crate::root().join("protocol/golden/bad_frames.txt");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| match l.split_whitespace().collect::<Vec<_>>()[..] {
            [case, class, hex] => BadFrame {
                case: case.to_string(),
                class: class.to_string(),
                bytes: hex_decode(hex),
            },
            _ => panic!("malformed line in {}: {l}", path.display()),
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
