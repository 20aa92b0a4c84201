//! netloop's simulated time, shared by the control simulator (`controlsim`),
//! the wire protocol (`protocol`) and the co-simulation master (`bridge`), so
//! that none of them has to depend on another just to say "when".
//!
//! # Lifecycle of a time value
//! 1. **Parse.** A scenario's duration string (`"10ms"`, `"1.5 s"`) becomes a
//!    [`SimTime`] exactly, through [`SimTime::from_str`](std::str::FromStr) or
//!    the serde adapter [`duration`]; a bad string is a [`ParseTimeError`].
//!    `ns3-scenarios` parses the same grammar in C++ (`wire::ParseDuration`);
//!    both are held to `golden/durations.txt`.
//! 2. **Grid.** The solver step becomes a [`StepSize`]; periods and offsets
//!    are checked once against it ([`StepSize::period_steps`],
//!    [`TimeError`]) and become step counts and [`Periodic`] schedules.
//! 3. **Run.** Every instant is then an integer: a step index `k` or a
//!    [`SimTime`] in nanoseconds. Seconds as `f64` appear only for physics and
//!    printing ([`SimTime::as_secs_f64`]).
//! 4. **Print.** [`SimTime`]'s `Display` writes the largest exact unit
//!    (`"1500ms"`), which parses back to the same value.
//!
//! # Practical considerations
//! - No I/O and no clock: wall-clock timeouts are `std::time::Duration` and
//!   live with the code that waits.
//! - Arithmetic panics on overflow (after 584 years) and on negative
//!   durations: both are logic errors; `checked_*` variants exist where input
//!   decides.

pub mod duration;
mod grid;
mod sim_time;

pub use grid::{Periodic, StepSize, TimeError};
pub use sim_time::{ParseTimeError, SimTime};
