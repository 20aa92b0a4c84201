//! What every block family shares: number-or-list values, port lists,
//! parameter checks and the `SimTime` to seconds conversion.

use serde::{Deserialize, Serialize};

use crate::error::ConfigError;
use crate::graph::{Declaration, PortSpec, Timing};
use crate::key_path::KeyPath;
use crate::time::StepSize;
use netloop_time::SimTime;

/// A number, or a list of numbers (one per element).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Values {
    One(f64),
    Many(Vec<f64>),
}

impl Values {
    /// The values for `width` elements: a number repeated, or a list of
    /// exactly `width` numbers.
    pub(crate) fn resolve(&self, key: &KeyPath, width: usize) -> Result<Vec<f64>, ConfigError> {
        let v = match self {
            Values::One(x) => vec![*x; width],
            Values::Many(v) if v.len() == width => v.clone(),
            Values::Many(v) => {
                return Err(ConfigError::invalid(
                    key,
                    format!("has {} values for {width} elements", v.len()),
                ))
            }
        };
        finite_all(key, &v)?;
        Ok(v)
    }

    /// As many values as the list has (a number is one).
    pub(crate) fn to_vec(&self) -> Vec<f64> {
        match self {
            Values::One(x) => vec![*x],
            Values::Many(v) => v.clone(),
        }
    }
}

pub(crate) fn one() -> usize {
    1
}

pub(crate) fn two() -> usize {
    2
}

pub(crate) fn unit() -> f64 {
    1.0
}

/// Seconds of a boundary time.
#[inline]
pub(crate) fn secs(t: SimTime) -> f64 {
    t.as_secs_f64()
}

pub(crate) fn finite(key: &KeyPath, x: f64) -> Result<f64, ConfigError> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ConfigError::invalid(
            key,
            format!("must be finite, not {x}"),
        ))
    }
}

pub(crate) fn finite_all(key: &KeyPath, v: &[f64]) -> Result<(), ConfigError> {
    for (i, &x) in v.iter().enumerate() {
        finite(&key.clone().at(i), x)?;
    }
    Ok(())
}

pub(crate) fn positive(key: &KeyPath, x: f64) -> Result<f64, ConfigError> {
    if x > 0.0 && x.is_finite() {
        Ok(x)
    } else {
        Err(ConfigError::invalid(
            key,
            format!("must be a positive number, not {x}"),
        ))
    }
}

/// A width of at least 1 and at most the graph's port limit.
pub(crate) fn width(key: &KeyPath, n: usize) -> Result<usize, ConfigError> {
    if n == 0 || n > crate::limits::MAX_DIMENSION {
        return Err(ConfigError::invalid(
            key,
            format!("must be between 1 and {}", crate::limits::MAX_DIMENSION),
        ));
    }
    Ok(n)
}

/// One port `name` of `size` elements.
pub(crate) fn port(name: &str, size: usize) -> Vec<PortSpec> {
    vec![PortSpec::new(name, size)]
}

/// A block without continuous states or guards, evaluated at every step.
pub(crate) fn every_step(inputs: Vec<PortSpec>, outputs: Vec<PortSpec>) -> Declaration {
    Declaration {
        inputs,
        outputs,
        states: Vec::new(),
        guards: 0,
        timing: Timing::EveryStep,
    }
}

/// `needs` and `declare` of a direct-feedthrough block evaluated at every
/// step (the math, nonlinear and routing blocks): it only computes outputs,
/// so the engine never calls its `advance`, and it has the ports `$inputs`
/// and `$outputs` (expressions of the block, named `$block`). What a block
/// remembers (a relay's switch, a backlash's position) lives in its fields.
macro_rules! output_only {
    (|$block:ident| $inputs:expr, $outputs:expr $(,)?) => {
        fn needs(&self) -> $crate::graph::Needs {
            $crate::graph::Needs::OUTPUT_ONLY
        }

        fn declare(&self) -> $crate::graph::Declaration {
            let $block = self;
            $crate::blocks::common::every_step($inputs, $outputs)
        }
    };
}
pub(crate) use output_only;

/// `prefix0`, `prefix1`, ... each of `size` elements.
pub(crate) fn numbered(prefix: &str, count: usize, size: usize) -> Vec<PortSpec> {
    (0..count)
        .map(|i| PortSpec::new(format!("{prefix}{i}"), size))
        .collect()
}

/// A row-major matrix from rows of equal length; `None` rows means 0 x cols.
pub(crate) fn matrix(
    key: &KeyPath,
    rows: &[Vec<f64>],
) -> Result<(usize, usize, Vec<f64>), ConfigError> {
    let r = rows.len();
    let c = rows.first().map_or(0, Vec::len);
    let mut flat = Vec::with_capacity(r * c);
    for (i, row) in rows.iter().enumerate() {
        if row.len() != c {
            return Err(ConfigError::invalid(
                key.clone().at(i),
                format!("has {} columns, row 0 has {c}", row.len()),
            ));
        }
        finite_all(&key.clone().at(i), row)?;
        flat.extend_from_slice(row);
    }
    Ok((r, c, flat))
}

/// A sample period and phase on the step grid (default: every step).
pub(crate) fn sample_timing(
    key: &KeyPath,
    step: StepSize,
    period: Option<SimTime>,
    phase: SimTime,
) -> Result<(SimTime, SimTime), ConfigError> {
    let period = period.unwrap_or(step.get());
    step.period_steps(period)
        .map_err(|source| ConfigError::Time {
            key: key.child("period"),
            source,
        })?;
    step.steps_in(phase).map_err(|source| ConfigError::Time {
        key: key.child("phase"),
        source,
    })?;
    if phase >= period {
        return Err(ConfigError::invalid(
            key.child("phase"),
            format!("{phase} must be less than the period {period}"),
        ));
    }
    Ok((period, phase))
}

/// Appends the sampling keys of a discrete block, `period` (default: every
/// step) and `phase` (default `0s`), to a config struct, last, so that
/// every such block reads them the same way. A macro rather than a
/// `#[serde(flatten)]` struct: flatten does not work with
/// `deny_unknown_fields`, which every block config has.
macro_rules! sampled_block {
    (
        $(#[$outer:meta])*
        pub struct $name:ident { $($body:tt)* }
    ) => {
        $(#[$outer])*
        pub struct $name {
            $($body)*
            /// Sample period (a multiple of the step); default: every step.
            #[serde(
                default,
                with = "netloop_time::duration::option",
                skip_serializing_if = "Option::is_none"
            )]
            pub period: Option<netloop_time::SimTime>,
            /// First sample instant, below `period`; default `0s`.
            #[serde(default, with = "netloop_time::duration")]
            pub phase: netloop_time::SimTime,
        }
    };
}
pub(crate) use sampled_block;
