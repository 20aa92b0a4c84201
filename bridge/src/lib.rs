//! netloop's co-simulation master.
//!
//! Data flows one way: scenario file → `config` → `session` (sync scheme) →
//! {controlsim, network backend} → `output` (docs/design.md §1.2). A scenario
//! is read, checked and built once ([`loaded_scenario::load`]: a loop
//! scenario through [`scenario_file`] → [`built::Built`], a graph scenario
//! through [`graph_scenario`]) and the run takes what was built. The client of the ns-3 stepping server
//! is its own crate, `netloop-ns3-client` (bridge/ns3-client), re-exported
//! here as [`ns3`] and [`network_schema`]. This crate is the application
//! the `netloop` binary dispatches to ([`app`]): configuration, run
//! directories, sweeps, plots. The co-simulation core writes no files: its
//! networks, flows and [`ledger`] are the `netloop-cosim` crate
//! (bridge/cosim, re-exported here at their old paths), which does no file
//! I/O; the ledger emits fate events, which [`packets_csv`] writes. The
//! sessions, sync schemes and mobility are still here, as they take
//! [`config::Resolved`].

pub mod app;
pub mod built;
pub mod config;
// The co-simulation core's modules (bridge/cosim), at their old paths.
pub use netloop_cosim::{flows, ledger, network};
pub mod fmu_checks;
pub mod graph_flows;
pub mod graph_mobility;
pub mod graph_response;
pub mod graph_run;
pub mod graph_scenario;
pub mod graph_session;
pub mod input;
pub mod keyed;
pub mod limits;
pub mod loaded_scenario;
pub mod metrics;
pub mod mobility;
pub mod model_files;
// The ns-3 client is its own crate (bridge/ns3-client); these keep the
// `bridge::ns3` and `bridge::network_schema` paths.
pub use netloop_ns3_client as ns3;
pub use netloop_ns3_client::network_schema;
pub mod network_docs;
pub mod output;
pub mod packets_csv;
pub mod parquet_file;
pub mod plot;
pub mod probe;
pub mod run;
pub mod run_dir;
pub mod run_progress;
pub mod scenario_file;
pub mod serde_fault;
pub mod server_command;
pub mod session;
pub mod shell;
pub mod stop;
pub mod subsystem;
pub mod sweep;
pub mod sync_scheme;
