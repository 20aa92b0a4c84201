//! One error enum per concern, each with enough context to act on.
//!
//! - [`ConfigError`]: building a [`System`](crate::System) from a config; every
//!   variant names the offending key as a [`KeyPath`] (`loops[1].controller.k`).
//!   Fatal for that config, never a panic.
//! - [`ApiError`]: a call on a built system with a loop or channel index that
//!   does not exist, or an operation the loop cannot do. The system is left
//!   unchanged.
//! - [`StepError`]: advancing time failed. `Backwards` and `TimeOverflow`
//!   leave the system unchanged; `NonFinite`, `Zeno` and `Observer` stop at
//!   the boundary they name, with the state as it was there.
//! - [`ShapeMismatch`]: restoring a snapshot taken from a differently shaped
//!   system. Checked before anything is written, so the system is unchanged.

use netloop_time::SimTime;

use crate::key_path::KeyPath;
use crate::time::TimeError;

/// A config that cannot be turned into a system.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ConfigError {
    /// A duration that is zero or off the step grid.
    #[error("`{key}`: {source}")]
    Time {
        key: KeyPath,
        #[source]
        source: TimeError,
    },
    /// A matrix with the wrong number of rows or columns.
    #[error("`{key}` must be {expected_rows}x{expected_cols}, found {found_rows}x{found_cols}")]
    Shape {
        key: KeyPath,
        expected_rows: usize,
        expected_cols: usize,
        found_rows: usize,
        found_cols: usize,
    },
    /// A vector (or per-channel list) of the wrong length.
    #[error("`{key}` must have {expected} entries, found {found}")]
    Length {
        key: KeyPath,
        expected: usize,
        found: usize,
    },
    /// A NaN or infinite number where a finite one is needed.
    #[error("`{key}` must be finite, found {value}")]
    NotFinite { key: KeyPath, value: f64 },
    /// A name that refers to nothing (an output name, a loop name).
    #[error("`{key}`: unknown name \"{name}\"; expected one of: {}", .known.join(", "))]
    UnknownName {
        key: KeyPath,
        name: String,
        known: Vec<String>,
    },
    /// Any other rule, stated in `reason`.
    #[error("`{key}`: {reason}")]
    Invalid { key: KeyPath, reason: String },
}

impl ConfigError {
    pub(crate) fn invalid(key: impl Into<KeyPath>, reason: impl Into<String>) -> Self {
        ConfigError::Invalid {
            key: key.into(),
            reason: reason.into(),
        }
    }

    /// The key the error is about, e.g. `loops[0].sensor.period`.
    pub fn key(&self) -> &KeyPath {
        match self {
            ConfigError::Time { key, .. }
            | ConfigError::Shape { key, .. }
            | ConfigError::Length { key, .. }
            | ConfigError::NotFinite { key, .. }
            | ConfigError::UnknownName { key, .. }
            | ConfigError::Invalid { key, .. } => key,
        }
    }

    /// The key, taken out (for an error that carries it on).
    pub fn into_key(self) -> KeyPath {
        match self {
            ConfigError::Time { key, .. }
            | ConfigError::Shape { key, .. }
            | ConfigError::Length { key, .. }
            | ConfigError::NotFinite { key, .. }
            | ConfigError::UnknownName { key, .. }
            | ConfigError::Invalid { key, .. } => key,
        }
    }

    /// What is wrong, without the key: for a report that shows the key
    /// apart (netloop's scenario errors print it once, in front).
    pub fn message(&self) -> String {
        match self {
            ConfigError::Time { source, .. } => source.to_string(),
            ConfigError::Shape {
                expected_rows,
                expected_cols,
                found_rows,
                found_cols,
                ..
            } => {
                format!("must be {expected_rows}x{expected_cols}, found {found_rows}x{found_cols}")
            }
            ConfigError::Length {
                expected, found, ..
            } => format!("must have {expected} entries, found {found}"),
            ConfigError::NotFinite { value, .. } => format!("must be finite, found {value}"),
            ConfigError::UnknownName { name, known, .. } => format!(
                "unknown name \"{name}\"; expected one of: {}",
                known.join(", ")
            ),
            ConfigError::Invalid { reason, .. } => reason.clone(),
        }
    }
}

/// A call with an index that does not exist, or an operation the loop
/// cannot do. Nothing was changed.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ApiError {
    #[error("no loop {index}: the system has {count} loops")]
    NoSuchLoop { index: usize, count: usize },
    #[error("loop `{loop_name}`: no {what} channel {index}: it has {len}")]
    NoSuchChannel {
        loop_name: String,
        what: &'static str,
        index: usize,
        len: usize,
    },
    #[error("loop `{loop_name}`: {what} has {expected} channels, {found} values given")]
    WrongLength {
        loop_name: String,
        what: &'static str,
        expected: usize,
        found: usize,
    },
    #[error(
        "loop `{loop_name}`: the controller is not a solver-integrated dynamic system, \
         so it has no rollback response; use compute_control"
    )]
    NotContinuous { loop_name: String },
    /// A controller evaluated at an event time outside the step that ended
    /// at the current boundary.
    #[error(
        "loop `{loop_name}`: the controller cannot be evaluated at {time}: an event time must lie \
         in the last step, from {earliest} to {now}"
    )]
    EventTime {
        loop_name: String,
        time: SimTime,
        earliest: SimTime,
        now: SimTime,
    },
}

/// Boxed error returned by an [`Observer`](crate::system::Observer).
pub type ObserverError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Advancing time failed.
#[derive(Debug, thiserror::Error)]
pub enum StepError {
    /// `advance_to(k1)` with `k1` before the current step. Nothing changed.
    #[error("cannot advance backwards from step {from} to step {to}")]
    Backwards { from: u64, to: u64 },
    /// `k1 * h` does not fit in `u64` nanoseconds. Nothing changed.
    #[error("step {to} is beyond the representable time ({step} x {to} overflows 584 years)")]
    TimeOverflow { to: u64, step: SimTime },
    /// A state became NaN or infinite. The system stops at boundary `step`
    /// (time `time`), holding the non-finite state, so it can be inspected.
    #[error(
        "loop `{loop_name}`: {what} `{state}` became {value} at t = {time} (step {step}); \
         the loop is unstable or the step is too large for the solver"
    )]
    NonFinite {
        loop_name: String,
        what: &'static str,
        state: String,
        value: f64,
        time: SimTime,
        step: u64,
    },
    /// A plant's guard events accumulated (Zeno) at `time` seconds inside
    /// step `step` and the plant cannot [`settle`](crate::Plant::settle). The
    /// system stops at the end of that step (boundary `step + 1`), with this
    /// loop's plant state left as it was at the start of the step.
    #[error(
        "loop `{loop_name}`: events of guard {guard} accumulate (Zeno) at t = {time} s in step {step} \
         and the plant does not settle; give the plant a `settle` or use a guard whose events stop"
    )]
    Zeno {
        loop_name: String,
        guard: usize,
        time: f64,
        step: u64,
    },
    /// A component failed inside step `step - 1` (an FMU call returned an
    /// error): the system stops at boundary `step` (time `time`); the failed
    /// component keeps the values it had before the failed call.
    #[error("loop `{loop_name}`: {message}; stopped at t = {time} (step {step})")]
    Component {
        loop_name: String,
        message: String,
        time: SimTime,
        step: u64,
    },
    /// The observer (e.g. a recorder) failed at boundary `step`, before that
    /// step was integrated.
    #[error("observer failed at step {step}: {source}")]
    Observer {
        step: u64,
        #[source]
        source: ObserverError,
    },
}

/// A snapshot that does not fit the system it is restored into.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("snapshot does not fit this system: {what}: expected {expected}, found {found}")]
pub struct ShapeMismatch {
    /// Which part, e.g. `loop 1 (servo) plant state length` or `loop count`.
    pub what: String,
    pub expected: usize,
    pub found: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `message()` is the Display form with the key taken off the front, for
    /// every variant: what a reader that prints the key apart must show.
    #[test]
    fn message_is_the_display_form_without_the_key() {
        let key = KeyPath::key("loops").at(0).and("plant").and("a");
        let all = [
            ConfigError::Time {
                key: key.clone(),
                source: TimeError::ZeroStep,
            },
            ConfigError::Shape {
                key: key.clone(),
                expected_rows: 2,
                expected_cols: 2,
                found_rows: 1,
                found_cols: 3,
            },
            ConfigError::Length {
                key: key.clone(),
                expected: 2,
                found: 3,
            },
            ConfigError::NotFinite {
                key: key.clone(),
                value: f64::NAN,
            },
            ConfigError::UnknownName {
                key: key.clone(),
                name: "x".into(),
                known: vec!["theta".into(), "omega".into()],
            },
            ConfigError::invalid(key.clone(), "must be positive"),
        ];
        for e in all {
            let shown = e.to_string();
            let rest = shown
                .strip_prefix(&format!("`{key}`"))
                .unwrap_or_else(|| panic!("{shown}"));
            let rest = rest
                .strip_prefix(": ")
                .or_else(|| rest.strip_prefix(' '))
                .unwrap();
            assert_eq!(e.message(), rest, "{e:?}");
            assert_eq!(e.key(), &key);
        }
    }
}
