//! Helpers shared by the end-to-end tests: the workspace's test-support
//! crate, re-exported under the names these tests use.

pub use test_support::golden::{bad_frames, BadFrame};
pub use test_support::ns3::{options, send, server_binary, step, udp_flow};
pub use test_support::process::{child_named, process_alive, process_exists};
pub use test_support::tables::packet_rows;
