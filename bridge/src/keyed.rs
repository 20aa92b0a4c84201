//! The one keyed error of scenario loading ([`ScenarioError`]) and the
//! key paths it is about ([`KeyPath`]): every stage, from serde to the
//! ns-3 server's verdict, says which key is wrong as a path, and the
//! loader puts the place in the file ([`Span`]) beside it.

use std::fmt;
use std::path::PathBuf;

use crate::input::{shorten_line, MAX_ECHOED_CHARS};

/// One step of a key path: a table key or an array index.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Segment {
    Key(String),
    Index(usize),
}

/// A dotted key path such as `loops[0].controller.kp`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyPath(pub Vec<Segment>);

impl KeyPath {
    /// Parses `a.b[2].c`, `a.b.2.c` or `"a".b` (quoted keys for names with dots).
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

    /// The path of a serde_path_to_error path.
    pub(crate) fn from_serde(path: &serde_path_to_error::Path) -> KeyPath {
        use serde_path_to_error::Segment as S;
        KeyPath(
            path.iter()
                .filter_map(|s| match s {
                    S::Seq { index } => Some(Segment::Index(*index)),
                    S::Map { key } | S::Enum { variant: key } => Some(Segment::Key(key.clone())),
                    S::Unknown => None,
                })
                .collect(),
        )
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

/// Where an error is: a place in the file, or an override.
#[derive(Clone, Debug, PartialEq)]
pub enum Place {
    File {
        line: usize,
        column: usize,
        text: String,
        underline: (usize, usize),
    },
    Override(String),
    /// The key could not be found in the file (e.g. a default that no line sets).
    Nowhere,
}

/// Where in which file a problem is, and any context.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub file: PathBuf,
    pub place: Place,
    /// Extra context, e.g. which override changed the table.
    pub note: Option<String>,
}

/// What a key would have accepted: words, or the names a table or a
/// choice has, as a list (what `netloop check` and the docs test read).
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// In words: `a number`, `a duration on the step grid`.
    Words(String),
    /// The keys the table has (for a key it does not have).
    Keys(Vec<String>),
    /// The variants of a choice or the kinds of a `kind = "..."` table.
    Variants(Vec<String>),
}

impl Expected {
    /// The names listed, for [`Expected::Keys`] and [`Expected::Variants`].
    pub fn names(&self) -> Option<&[String]> {
        match self {
            Expected::Words(_) => None,
            Expected::Keys(names) | Expected::Variants(names) => Some(names),
        }
    }
}

impl From<&str> for Expected {
    fn from(words: &str) -> Expected {
        Expected::Words(words.to_string())
    }
}

impl From<String> for Expected {
    fn from(words: String) -> Expected {
        Expected::Words(words)
    }
}

/// A list as serde words it: `` `a` ``, `` `a` or `b` ``, `` one of `a`, `b`, `c` ``.
impl fmt::Display for Expected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names = match self {
            Expected::Words(words) => return f.write_str(words),
            Expected::Keys(names) | Expected::Variants(names) => names,
        };
        match names.as_slice() {
            [] => f.write_str("nothing"),
            [one] => write!(f, "`{one}`"),
            [a, b] => write!(f, "`{a}` or `{b}`"),
            all => {
                f.write_str("one of ")?;
                for (i, name) in all.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "`{name}`")?;
                }
                Ok(())
            }
        }
    }
}

/// A problem with a scenario at a key: the one error every stage of
/// loading returns (the config checks, the builds of the control side, the
/// network and the motions, the ns-3 server's verdict), the key a path
/// from the start. A check that does not know the file returns it without
/// a [`Span`]; the loader locates it ([`ScenarioError::span`]) from the
/// key, without reading the key back out of a message.
#[derive(Clone, Debug, PartialEq)]
pub struct ScenarioError {
    /// The key path; empty when the problem is not about one key.
    pub key: KeyPath,
    pub message: String,
    /// What would have been accepted, when known separately from the message.
    pub expected: Option<Expected>,
    /// Where the key is written, once located.
    pub span: Option<Span>,
}

impl ScenarioError {
    /// A problem at `key`, not located yet.
    pub fn new(key: impl Into<KeyPath>, message: impl Into<String>) -> ScenarioError {
        ScenarioError {
            key: key.into(),
            message: message.into(),
            expected: None,
            span: None,
        }
    }

    /// The place in the file, once located.
    pub fn place(&self) -> Option<&Place> {
        self.span.as_ref().map(|s| &s.place)
    }
}

/// controlsim's errors carry their key as text, the one boundary left where
/// a key is read from text: the key, and the message without it.
impl From<controlsim::ConfigError> for ScenarioError {
    fn from(e: controlsim::ConfigError) -> Self {
        let key = KeyPath::parse(e.key()).unwrap_or_else(|_| KeyPath::key(e.key()));
        ScenarioError::new(key, e.message())
    }
}

impl std::error::Error for ScenarioError {}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Some(span) = &self.span else {
            // Not located: the key and the message, on one line.
            return match self.key.is_empty() {
                true => f.write_str(&self.message),
                false => write!(f, "`{}`: {}", self.key, self.message),
            };
        };
        match self.key.is_empty() {
            false => writeln!(f, "`{}`: {}", self.key, self.message)?,
            true => writeln!(f, "{}", self.message)?,
        }
        let Span { file, place, note } = span;
        let file = file.display();
        let width = match place {
            Place::File { line, .. } => line.to_string().len(),
            _ => 1,
        };
        match place {
            Place::File {
                line,
                column,
                text,
                underline,
            } => {
                writeln!(f, "{:width$}--> {file}:{line}:{column}", "")?;
                writeln!(f, "{:width$} |", "")?;
                // A long line (a whole array on one line, say) is quoted by
                // its start only; the underline stays within what is shown.
                writeln!(f, "{line} | {}", shorten_line(text))?;
                let start = underline.0.min(MAX_ECHOED_CHARS);
                let len = underline.1.clamp(1, MAX_ECHOED_CHARS + 1 - start);
                writeln!(
                    f,
                    "{:width$} | {}{}",
                    "",
                    " ".repeat(start),
                    "^".repeat(len)
                )?;
            }
            Place::Override(origin) => writeln!(f, "  --> {origin} (on {file})")?,
            Place::Nowhere => writeln!(f, "  --> {file} (the key is not written in the file)")?,
        }
        // An empty list is said by the message ("there are no fields").
        let listed = |e: &&Expected| e.names().is_none_or(|names| !names.is_empty());
        if let Some(expected) = self.expected.as_ref().filter(listed) {
            writeln!(f, "{:width$} = expected: {expected}", "")?;
        }
        if let Some(note) = note {
            writeln!(f, "{:width$} = note: {note}", "")?;
        }
        Ok(())
    }
}
