//! The step grid, re-exported from `netloop-time` (where [`SimTime`] lives
//! too) so that `controlsim::time::StepSize` keeps its path.

pub use netloop_time::{Periodic, SimTime, StepSize, TimeError};
