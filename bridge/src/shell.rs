//! Words for a POSIX shell, for the commands netloop prints or writes for a
//! person or a scheduler to run (resume hints, SLURM batch scripts).

/// `text` as one word for a POSIX shell: as is when that is safe, else in
/// single quotes (a quote inside becomes `'\''`).
pub fn word(text: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c);
    if !text.is_empty() && text.chars().all(safe) {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::word;

    #[test]
    fn quotes_only_what_needs_it() {
        assert_eq!(word("/a/b-c_d.toml"), "/a/b-c_d.toml");
        assert_eq!(word("my sweep's dir"), r"'my sweep'\''s dir'");
        assert_eq!(word(""), "''");
        assert_eq!(word("$HOME"), "'$HOME'");
    }
}
