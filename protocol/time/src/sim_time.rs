//! Simulated time as an integer count of nanoseconds (docs/design.md §2.1).
//!
//! Float seconds drift over long runs and make "the same instant" depend on
//! rounding; ns-3 itself keeps time as a 64-bit nanosecond count. `SimTime`
//! does the same, parses human strings such as `"10ms"` exactly (no detour
//! through `f64`) and converts to seconds only for printing or for the
//! right-hand side of an ODE.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// A point in simulated time or a duration, in nanoseconds.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(transparent)]
pub struct SimTime(pub u64);

impl SimTime {
    pub const ZERO: SimTime = SimTime(0);
    pub const MAX: SimTime = SimTime(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s * 1_000_000_000)
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    /// Seconds as `f64`, for printing and for physics; never for bookkeeping.
    /// Division, not multiplication by 1e-9, so that the result is the
    /// nearest `f64` (10ms gives exactly the double nearest 0.01).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn checked_add(self, rhs: SimTime) -> Option<SimTime> {
        self.0.checked_add(rhs.0).map(SimTime)
    }
    pub fn checked_sub(self, rhs: SimTime) -> Option<SimTime> {
        self.0.checked_sub(rhs.0).map(SimTime)
    }
    pub fn saturating_sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.saturating_sub(rhs.0))
    }
}

impl std::ops::Add for SimTime {
    type Output = SimTime;
    /// # Panics
    /// On overflow (after 584 years of simulated time).
    fn add(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.checked_add(rhs.0).expect("SimTime overflow"))
    }
}

impl std::ops::Sub for SimTime {
    type Output = SimTime;
    /// # Panics
    /// When `rhs` is later than `self`: a negative duration is a logic error.
    fn sub(self, rhs: SimTime) -> SimTime {
        SimTime(self.0.checked_sub(rhs.0).expect("SimTime underflow"))
    }
}

/// Units accepted by [`SimTime::from_str`], longest suffix first so that
/// "ms" is not read as "m" + "s".
const UNITS: &[(&str, u64)] = &[
    ("min", 60_000_000_000),
    ("ns", 1),
    ("us", 1_000),
    ("µs", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("h", 3_600_000_000_000),
];

/// The white space a duration may have around its number and unit: ASCII
/// only, as the C++ parser (`wire::ParseDuration`) has it. `str::trim` would
/// also take the no-break space and other Unicode spaces, which a string that
/// reaches `netloop-server` could not have.
const SPACE: &[char] = &[' ', '\t', '\n', '\r', '\x0B', '\x0C'];

/// Why a duration string did not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseTimeError {
    #[error("empty duration; expected a number and a unit, e.g. \"10ms\"")]
    Empty,
    #[error("missing unit in \"{0}\"; expected one of ns, us, ms, s, min, h (e.g. \"10ms\")")]
    MissingUnit(String),
    #[error(
        "\"{0}\" is not a non-negative decimal number followed by a unit (ns, us, ms, s, min, h)"
    )]
    Invalid(String),
    #[error("\"{0}\" is not a whole number of nanoseconds")]
    SubNanosecond(String),
    #[error("\"{0}\" is too long to represent in nanoseconds")]
    Overflow(String),
}

impl FromStr for SimTime {
    type Err = ParseTimeError;

    /// Parses `"<decimal><unit>"`, e.g. `"10ms"`, `"1.5 s"`, `"250us"`, exactly.
    /// A bare `"0"` is accepted; any other number needs a unit. ASCII white
    /// space around the number and the unit is ignored. `golden/durations.txt`
    /// is the grammar by example, shared with the C++ parser.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let s = text.trim_matches(SPACE);
        if s.is_empty() {
            return Err(ParseTimeError::Empty);
        }
        if s == "0" {
            return Ok(SimTime::ZERO);
        }
        let (number, scale) = UNITS
            .iter()
            .find_map(|(unit, scale)| {
                s.strip_suffix(unit)
                    .map(|n| (n.trim_end_matches(SPACE), *scale))
            })
            .ok_or_else(|| {
                if s.chars().all(|c| c.is_ascii_digit() || c == '.') {
                    ParseTimeError::MissingUnit(text.to_string())
                } else {
                    ParseTimeError::Invalid(text.to_string())
                }
            })?;
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        let digits_ok = |p: &str| p.chars().all(|c| c.is_ascii_digit());
        if (whole.is_empty() && frac.is_empty()) || !digits_ok(whole) || !digits_ok(frac) {
            return Err(ParseTimeError::Invalid(text.to_string()));
        }
        let overflow = || ParseTimeError::Overflow(text.to_string());
        let whole_ns = if whole.is_empty() {
            0
        } else {
            whole
                .parse::<u64>()
                .map_err(|_| overflow())?
                .checked_mul(scale)
                .ok_or_else(overflow)?
        };
        // Fraction: frac_digits / 10^len * scale must be a whole number of ns.
        let frac = frac.trim_end_matches('0');
        let mut frac_ns: u128 = 0;
        if !frac.is_empty() {
            // The largest unit (3.6e12 ns) has 13 digits, so a whole number of ns
            // needs at most 13 fraction digits; 18 keeps frac * scale within
            // u128 (30 digits did not: it overflowed for "h").
            if frac.len() > 18 {
                return Err(ParseTimeError::SubNanosecond(text.to_string()));
            }
            let numerator = frac.parse::<u128>().map_err(|_| overflow())? * scale as u128;
            let denominator = 10u128.pow(frac.len() as u32);
            if numerator % denominator != 0 {
                return Err(ParseTimeError::SubNanosecond(text.to_string()));
            }
            frac_ns = numerator / denominator;
        }
        let total = (whole_ns as u128) + frac_ns;
        u64::try_from(total).map(SimTime).map_err(|_| overflow())
    }
}

impl fmt::Display for SimTime {
    /// The largest unit that represents the value exactly: `10ms`, `1.5s` is
    /// printed as `1500ms`, `3700us`. Round-trips through `FromStr`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = self.0;
        if ns == 0 {
            return f.write_str("0s");
        }
        for (unit, scale) in [("s", 1_000_000_000), ("ms", 1_000_000), ("us", 1_000)] {
            if ns % scale == 0 {
                return write!(f, "{}{}", ns / scale, unit);
            }
        }
        write!(f, "{ns}ns")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit_exactly() {
        let cases = [
            ("10ms", 10_000_000),
            ("1.5s", 1_500_000_000),
            ("250us", 250_000),
            ("250µs", 250_000),
            ("3.7 ms", 3_700_000),
            ("100ns", 100),
            ("2min", 120_000_000_000),
            ("1h", 3_600_000_000_000),
            (".5ms", 500_000),
            ("0", 0),
            ("0.000000001s", 1),
        ];
        for (text, ns) in cases {
            assert_eq!(text.parse::<SimTime>(), Ok(SimTime(ns)), "{text}");
        }
    }

    #[test]
    fn rejects_what_is_not_a_duration() {
        assert_eq!("".parse::<SimTime>(), Err(ParseTimeError::Empty));
        assert!(matches!(
            "10".parse::<SimTime>(),
            Err(ParseTimeError::MissingUnit(_))
        ));
        assert!(matches!(
            "-1ms".parse::<SimTime>(),
            Err(ParseTimeError::Invalid(_))
        ));
        assert!(matches!(
            "1.2.3ms".parse::<SimTime>(),
            Err(ParseTimeError::Invalid(_))
        ));
        assert!(matches!(
            "ms".parse::<SimTime>(),
            Err(ParseTimeError::Invalid(_))
        ));
        assert!(matches!(
            "10 parsecs".parse::<SimTime>(),
            Err(ParseTimeError::Invalid(_))
        ));
        assert!(matches!(
            "0.5ns".parse::<SimTime>(),
            Err(ParseTimeError::SubNanosecond(_))
        ));
        assert!(matches!(
            "99999999999h".parse::<SimTime>(),
            Err(ParseTimeError::Overflow(_))
        ));
    }

    #[test]
    fn display_round_trips() {
        for ns in [
            0,
            1,
            999,
            1_000,
            3_700_000,
            1_500_000_000,
            10_000_000_000,
            123_456_789,
        ] {
            let t = SimTime(ns);
            assert_eq!(t.to_string().parse::<SimTime>(), Ok(t), "{t}");
        }
        assert_eq!(SimTime(3_700_000).to_string(), "3700us");
        assert_eq!(SimTime(10_000_000).to_string(), "10ms");
    }
}
