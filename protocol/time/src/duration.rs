//! Serde adapter for durations written as strings in scenario files
//! (`"10ms"`, `"1.5s"`), for use as `#[serde(with = "netloop_time::duration")]`.
//! The wire format keeps plain `u64` nanoseconds; only configs use this.

use crate::SimTime;
use serde::{de, Deserializer, Serializer};

pub fn serialize<S: Serializer>(t: &SimTime, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(t)
}

pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SimTime, D::Error> {
    d.deserialize_any(Visitor)
}

struct Visitor;

impl de::Visitor<'_> for Visitor {
    type Value = SimTime;
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a duration string such as \"10ms\", \"1.5s\" or \"250us\"")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<SimTime, E> {
        v.parse().map_err(E::custom)
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<SimTime, E> {
        if v == 0 {
            Ok(SimTime::ZERO)
        } else {
            Err(E::custom(format!(
                "{v} has no unit; write a duration string such as \"{v}ms\""
            )))
        }
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<SimTime, E> {
        self.visit_i64(v as i64)
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<SimTime, E> {
        Err(E::custom(format!(
            "{v} has no unit; write a duration string such as \"{v}s\""
        )))
    }
}

/// The same for `Option<SimTime>`: absent or a duration string.
pub mod option {
    use crate::SimTime;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &Option<SimTime>, s: S) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.collect_str(t),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<SimTime>, D::Error> {
        #[derive(Deserialize)]
        struct Wrapped(#[serde(with = "super")] SimTime);
        Ok(Option::<Wrapped>::deserialize(d)?.map(|w| w.0))
    }
}
