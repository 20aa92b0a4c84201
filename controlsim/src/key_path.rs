//! Key paths (`loops[0].controller.kp`) as segments: what a
//! [`ConfigError`](crate::ConfigError) is about, built from the config's
//! keys and names as they are, so a name with a dot or a bracket stays one
//! key. Text is parsed only where a user types a key (`--set`, sweep keys).

use std::fmt;

use serde::{Deserialize, Serialize};

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A dotted key path such as `loops[0].controller.kp`; empty (the
/// default) when a problem is not about one key.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct KeyPath(pub Vec<Segment>);

impl KeyPath {
    /// Parses `a.b[2].c`, `a.b.2.c` or `"a".b` (quoted keys for names with
    /// dots): for keys a user types (`--set`, sweep keys), never for a key
    /// the code made.
    ///
    /// # Errors
    /// An empty path, an empty key, or an unclosed bracket or quote.
    pub fn parse(text: &str) -> Result<KeyPath, String> {
        let mut segments = Vec::new();
        let mut chars = text.trim().chars().peekable();
        let bad = |why: &str| {
            format!("`{text}` is not a key path ({why}); write e.g. loops[0].controller.kp")
        };
        let mut expect_key = true;
        while let Some(&c) = chars.peek() {
            match c {
                '.' if !expect_key => {
                    chars.next();
                    expect_key = true;
                }
                '[' if !expect_key => {
                    chars.next();
                    let mut digits = String::new();
                    loop {
                        match chars.next() {
                            Some(']') => break,
                            Some(d) if d.is_ascii_digit() => digits.push(d),
                            _ => return Err(bad("an index in [] must be a number followed by ]")),
                        }
                    }
                    let index = digits.parse().map_err(|_| bad("empty index []"))?;
                    segments.push(Segment::Index(index));
                }
                '"' if expect_key => {
                    chars.next();
                    let mut key = String::new();
                    loop {
                        match chars.next() {
                            Some('"') => break,
                            Some(ch) => key.push(ch),
                            None => return Err(bad("unclosed quote")),
                        }
                    }
                    segments.push(Segment::Key(key));
                    expect_key = false;
                }
                _ if expect_key => {
                    let mut key = String::new();
                    while let Some(&ch) = chars.peek() {
                        if ch == '.' || ch == '[' {
                            break;
                        }
                        key.push(ch);
                        chars.next();
                    }
                    let key = key.trim().to_string();
                    if key.is_empty() {
                        return Err(bad("empty key"));
                    }
                    // `loops.0.plant`: a number where a key is expected indexes an array.
                    match key.parse::<usize>() {
                        Ok(i) if !segments.is_empty() => segments.push(Segment::Index(i)),
                        _ => segments.push(Segment::Key(key)),
                    }
                    expect_key = false;
                }
                _ => return Err(bad(&format!("unexpected `{c}`"))),
            }
        }
        if segments.is_empty() || expect_key {
            return Err(bad("it is empty or ends with a dot"));
        }
        Ok(KeyPath(segments))
    }

    /// A path of one key: `KeyPath::key("loops")`.
    pub fn key(name: &str) -> KeyPath {
        KeyPath(vec![Segment::Key(name.to_string())])
    }

    /// This path and then key `name`: `loops[0]` then `plant`.
    pub fn and(mut self, name: &str) -> KeyPath {
        self.0.push(Segment::Key(name.to_string()));
        self
    }

    /// This path and then index `i`: `loops` then `[0]`.
    pub fn at(mut self, i: usize) -> KeyPath {
        self.0.push(Segment::Index(i));
        self
    }

    /// This path and then `tail`, a literal dotted path (`uplink.port`).
    pub fn join(mut self, tail: &'static str) -> KeyPath {
        self.0.extend(KeyPath::from(tail).0);
        self
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn starts_with(&self, prefix: &KeyPath) -> bool {
        self.0.starts_with(&prefix.0)
    }

    pub fn child(&self, key: &str) -> KeyPath {
        let mut s = self.0.clone();
        s.push(Segment::Key(key.to_string()));
        KeyPath(s)
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            match s {
                Segment::Key(k) => {
                    if i > 0 {
                        f.write_str(".")?;
                    }
                    if k.is_empty() || k.contains(['.', '[', ']', ' ', '"']) {
                        write!(f, "\"{k}\"")?;
                    } else {
                        f.write_str(k)?;
                    }
                }
                Segment::Index(n) => write!(f, "[{n}]")?,
            }
        }
        Ok(())
    }
}

impl std::str::FromStr for KeyPath {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        KeyPath::parse(s)
    }
}

/// A key path written in the code as a literal (`"network.ns3.kind"`),
/// its keys split at the dots. Only literals: a key made at run time is
/// built from its parts ([`KeyPath::and`], [`KeyPath::at`]), never
/// formatted into text and read back.
impl From<&'static str> for KeyPath {
    fn from(dotted: &'static str) -> KeyPath {
        KeyPath(
            dotted
                .split('.')
                .filter(|k| !k.is_empty())
                .map(|k| Segment::Key(k.to_string()))
                .collect(),
        )
    }
}

impl From<&KeyPath> for KeyPath {
    fn from(path: &KeyPath) -> KeyPath {
        path.clone()
    }
}
