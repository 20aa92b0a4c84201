//! Why a graph run stopped. Building errors are [`ConfigError`](crate::ConfigError)s
//! naming the key; these are the run's.

use netloop_time::SimTime;

use crate::error::ObserverError;

/// Advancing a [`Graph`](super::Graph) failed.
#[derive(Debug, thiserror::Error)]
pub enum GraphError {
    /// `run_to(k1)` with `k1` before the current boundary. Nothing changed.
    #[error("cannot run backwards from step {from} to step {to}")]
    Backwards { from: u64, to: u64 },
    /// `k1 * h` does not fit in `u64` nanoseconds. Nothing changed.
    #[error("step {to} is beyond the representable time")]
    TimeOverflow { to: u64 },
    /// A continuous state became NaN or infinite during step `step - 1`.
    #[error(
        "component `{component}`: state `{state}` became {value} at t = {time} (step {step}); \
         the system is unstable or the step is too large for the solver"
    )]
    NonFinite {
        component: String,
        state: String,
        value: f64,
        time: SimTime,
        step: u64,
    },
    /// A component failed inside step `step - 1` (an FMU call returned an
    /// error, [`Component::fault`](super::Component::fault)): the graph
    /// stops at boundary `step` (time `time`), as a [`System`](crate::System)
    /// does with [`StepError::Component`](crate::StepError::Component).
    #[error("component `{component}`: {message}; stopped at t = {time} (step {step})")]
    Component {
        component: String,
        message: String,
        time: SimTime,
        step: u64,
    },
    /// Guard events accumulated and the component does not settle.
    #[error(
        "component `{component}`: events of guard {guard} accumulate (Zeno) at t = {time} s in step {step} \
         and the component does not settle"
    )]
    Zeno {
        component: String,
        guard: usize,
        time: f64,
        step: u64,
    },
    /// An algebraic loop's Newton iteration failed at `time`.
    #[error("algebraic loop {members} at t = {time}: {reason}")]
    AlgebraicLoop {
        /// `a -> b -> a`.
        members: String,
        time: SimTime,
        reason: String,
    },
    /// The observer failed at boundary `step`.
    #[error("observer failed at step {step}: {source}")]
    Observer {
        step: u64,
        #[source]
        source: ObserverError,
    },
}
