//! Port addresses as written in a connection: `servo.y` (the whole port),
//! `servo.x[1]` (one element) or `pid.measurement[0..2]` (elements 0 and 1,
//! end exclusive as in Rust).

use std::fmt;
use std::ops::Range;

/// Which elements of a port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Elements {
    /// The whole port.
    All,
    /// `[start..end]`, end exclusive; `[i]` is `i..i + 1`.
    Range(Range<usize>),
}

/// `component.port` with an optional element selection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortAddress {
    pub component: String,
    pub port: String,
    pub elements: Elements,
}

impl PortAddress {
    /// Parses `component.port`, `component.port[i]` or
    /// `component.port[a..b]`.
    ///
    /// # Errors
    /// A sentence saying what is wrong with the text.
    pub fn parse(text: &str) -> Result<Self, String> {
        let shape = "write `component.port`, `component.port[i]` or `component.port[a..b]`";
        let (head, elements) = match text.find('[') {
            None => (text, Elements::All),
            Some(open) => {
                let inner = text[open + 1..]
                    .strip_suffix(']')
                    .ok_or_else(|| format!("\"{text}\": no closing `]`; {shape}"))?;
                let index = |s: &str| {
                    s.trim()
                        .parse::<usize>()
                        .map_err(|_| format!("\"{text}\": `{s}` is not an element index; {shape}"))
                };
                let range = match inner.split_once("..") {
                    None => {
                        let i = index(inner)?;
                        i..i + 1
                    }
                    Some((a, b)) => index(a)?..index(b)?,
                };
                if range.start >= range.end {
                    return Err(format!("\"{text}\": the element range is empty"));
                }
                (&text[..open], Elements::Range(range))
            }
        };
        let (component, port) = head
            .split_once('.')
            .ok_or_else(|| format!("\"{text}\": no port named; {shape}"))?;
        let ok = |s: &str| {
            !s.is_empty()
                && s.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        };
        // `/` joins a subsystem's name and its components' names.
        let component_ok = ok(&component.replace('/', "_"));
        if !component_ok || !ok(port) {
            return Err(format!(
                "\"{text}\": names are letters, digits, `_` and `-`; {shape}"
            ));
        }
        Ok(PortAddress {
            component: component.to_string(),
            port: port.to_string(),
            elements,
        })
    }

    /// The element range within a port of `size` elements, or `None` when it
    /// reaches past the end.
    pub fn range(&self, size: usize) -> Option<Range<usize>> {
        match &self.elements {
            Elements::All => Some(0..size),
            Elements::Range(r) if r.end <= size => Some(r.clone()),
            Elements::Range(_) => None,
        }
    }
}

impl fmt::Display for PortAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.component, self.port)?;
        match &self.elements {
            Elements::All => Ok(()),
            Elements::Range(r) if r.len() == 1 => write!(f, "[{}]", r.start),
            Elements::Range(r) => write!(f, "[{}..{}]", r.start, r.end),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_whole_ports_elements_and_ranges() {
        let a = PortAddress::parse("servo.y").unwrap();
        assert_eq!((a.component.as_str(), a.port.as_str()), ("servo", "y"));
        assert_eq!(a.range(2), Some(0..2));
        let a = PortAddress::parse("servo.x[1]").unwrap();
        assert_eq!(a.range(2), Some(1..2));
        assert_eq!(a.range(1), None);
        assert_eq!(a.to_string(), "servo.x[1]");
        let a = PortAddress::parse("pid.measurement[0..2]").unwrap();
        assert_eq!(a.range(4), Some(0..2));
        assert_eq!(a.to_string(), "pid.measurement[0..2]");
    }

    #[test]
    fn rejects_malformed_addresses() {
        for bad in [
            "servo",
            "servo.",
            ".y",
            "servo.y[",
            "servo.y[a]",
            "servo.y[2..1]",
            "s v.y",
            "servo.y[1..1]",
        ] {
            assert!(PortAddress::parse(bad).is_err(), "{bad}");
        }
    }
}
