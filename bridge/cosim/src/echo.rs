//! Quoting input in error messages: a line is shown by its start only.

/// The most characters of a source line an error message shows.
pub const MAX_ECHOED_CHARS: usize = 80;

/// `line` cut to its first [`MAX_ECHOED_CHARS`] characters, with `…` when
/// something was cut: an error message quotes the line, not a megabyte.
pub fn shorten_line(line: &str) -> String {
    match line.char_indices().nth(MAX_ECHOED_CHARS) {
        None => line.to_string(),
        Some((cut, _)) => format!("{}…", &line[..cut]),
    }
}
