//! Lengths in scenario files: `"0.01m"`, `"1cm"`, `"10mm"`, or a plain number
//! of metres.

use std::fmt;

use serde::{de, Deserialize, Deserializer, Serialize, Serializer};

/// A non-negative, finite length in metres.
#[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
pub struct Metres(pub f64);

impl Metres {
    pub fn is_zero(&self) -> bool {
        self.0 == 0.0
    }

    /// Parses `"<number><unit>"` with unit `m`, `cm` or `mm`.
    ///
    /// # Errors
    /// A missing or unknown unit, a number that does not parse, or a value
    /// that is negative or not finite.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let split = text
            .find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E')
            .ok_or_else(|| {
                format!("{text:?} has no unit: write e.g. \"0.01m\", \"1cm\" or \"10mm\"")
            })?;
        let (number, unit) = text.split_at(split);
        let scale = match unit.trim() {
            "m" => 1.0,
            "cm" => 0.01,
            "mm" => 0.001,
            other => {
                return Err(format!(
                    "{other:?} is not a unit of length: use m, cm or mm"
                ))
            }
        };
        let value: f64 = number
            .trim()
            .parse()
            .map_err(|_| format!("{text:?} is not a length: write e.g. \"0.01m\""))?;
        Self::checked(value * scale)
    }

    fn checked(value: f64) -> Result<Self, String> {
        if !value.is_finite() || value < 0.0 {
            return Err(format!(
                "{value} m: a length must be finite and not negative"
            ));
        }
        Ok(Metres(value))
    }
}

impl fmt::Display for Metres {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}m", self.0)
    }
}

impl Serialize for Metres {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Metres {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl de::Visitor<'_> for Visitor {
            type Value = Metres;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a length such as \"0.01m\", \"1cm\" or a number of metres")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Metres, E> {
                Metres::parse(v).map_err(E::custom)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Metres, E> {
                Metres::checked(v).map_err(E::custom)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Metres, E> {
                Metres::checked(v as f64).map_err(E::custom)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Metres, E> {
                Metres::checked(v as f64).map_err(E::custom)
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_scale_to_metres() {
        assert_eq!(Metres::parse("0.01m"), Ok(Metres(0.01)));
        assert_eq!(Metres::parse("1cm"), Ok(Metres(0.01)));
        assert_eq!(Metres::parse("5 mm"), Ok(Metres(0.005)));
        assert_eq!(Metres::parse("1e-2m"), Ok(Metres(0.01)));
        assert_eq!(Metres::parse("0m"), Ok(Metres(0.0)));
        assert_eq!(Metres(0.01).to_string(), "0.01m");
    }

    #[test]
    fn bad_lengths_say_why() {
        assert!(Metres::parse("0.01").unwrap_err().contains("no unit"));
        assert!(Metres::parse("1km").unwrap_err().contains("not a unit"));
        assert!(Metres::parse("-1cm").unwrap_err().contains("not negative"));
        assert!(Metres::parse("1.2.3m")
            .unwrap_err()
            .contains("not a length"));
    }
}
