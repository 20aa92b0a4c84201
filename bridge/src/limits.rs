//! Every limit on a size that input sets, in one place (docs/robustness.md,
//! "Resource limits"). Each is checked before the allocation or the loop it
//! bounds, and a value above it is bad input (exit code 2) naming the key.

pub use crate::config::MAX_NODES;
pub use crate::input::MAX_INPUT_BYTES;
pub use crate::subsystem::MAX_EXPANDED_COMPONENTS;
pub use controlsim::limits::{MAX_DIMENSION, MAX_LOOPS};
pub use netloop_cosim::network::MAX_DELAY_SAMPLES;

/// The most runs one sweep plans: points times replications. Every run is
/// loaded and checked before anything runs (about 0.1 ms each), listed in
/// `sweep.json` and gets a directory; at this size planning takes seconds
/// and the plan a few tens of MB. The count is the product of the axes'
/// lengths, known from the sweep file before any point is made.
pub const MAX_SWEEP_RUNS: u64 = 100_000;

/// The most distinct ns-3 networks a sweep plan asks the server about
/// (`netloop-server --check`, one process each). A plan with more checks
/// these and leaves the others to their runs, which the server checks as
/// it starts, with a warning that says so.
pub const MAX_NETWORK_CHECKS: usize = 100;
