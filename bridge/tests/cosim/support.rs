//! Scenario building and output reading shared by the co-simulation tests:
//! the workspace's test-support crate, re-exported under the names these
//! tests use.

pub use test_support::cosim::{resolve, run_in_tempdir};
pub use test_support::fixtures::{scenario, servo_loop};
pub use test_support::read;
pub use test_support::tables::{csv_rows, num, packet_rows, timeseries_column as column};
