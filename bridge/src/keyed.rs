//! The one keyed error of scenario loading ([`ScenarioError`]) and the
//! key paths it is about ([`KeyPath`]): every stage, from serde to the
//! ns-3 server's verdict, says which key is wrong as a path, and the
//! loader puts the place in the file ([`Span`]) beside it.

use std::fmt;
use std::path::PathBuf;

pub use controlsim::key_path::{KeyPath, Segment};

use crate::input::{shorten_line, MAX_ECHOED_CHARS};

/// The path of a serde_path_to_error path.
pub(crate) fn path_from_serde(path: &serde_path_to_error::Path) -> KeyPath {
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

/// A value refused before its key is known (a parser of a value's text,
/// say): what is wrong and, apart, what would have been accepted, so that
/// the report says the two apart without reading one out of the other.
/// [`Refusal::at`] makes it the [`ScenarioError`] at a key.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub message: String,
    pub expected: Option<Expected>,
}

impl Refusal {
    /// `message` (e.g. `invalid type: string "x"`) where `expected` was.
    pub fn expecting(message: impl Into<String>, expected: impl Into<Expected>) -> Refusal {
        Refusal {
            message: message.into(),
            expected: Some(expected.into()),
        }
    }

    /// The refusal as the problem at `key`.
    pub fn at(self, key: impl Into<KeyPath>) -> ScenarioError {
        ScenarioError {
            key: key.into(),
            message: self.message,
            expected: self.expected,
            span: None,
        }
    }
}

/// A refusal that says what is wrong only.
impl From<String> for Refusal {
    fn from(message: String) -> Refusal {
        Refusal {
            message,
            expected: None,
        }
    }
}

/// Where there is no report to put it apart in: `…; expected …`.
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)?;
        match &self.expected {
            Some(expected) => write!(f, "; expected {expected}"),
            None => Ok(()),
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

    /// `message` at `key` where `expected` was.
    pub fn expecting(
        key: impl Into<KeyPath>,
        message: impl Into<String>,
        expected: impl Into<Expected>,
    ) -> ScenarioError {
        Refusal::expecting(message, expected).at(key)
    }

    /// The place in the file, once located.
    pub fn place(&self) -> Option<&Place> {
        self.span.as_ref().map(|s| &s.place)
    }
}

/// controlsim's errors carry their key as a path already: the key as is,
/// the message without it, and the names an unknown name could have been
/// as a list.
impl From<controlsim::ConfigError> for ScenarioError {
    fn from(e: controlsim::ConfigError) -> Self {
        match e {
            controlsim::ConfigError::UnknownName { key, name, known } => ScenarioError::expecting(
                key,
                format!("unknown name \"{name}\""),
                Expected::Variants(known),
            ),
            e => {
                let message = e.message();
                ScenarioError::new(e.into_key(), message)
            }
        }
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
