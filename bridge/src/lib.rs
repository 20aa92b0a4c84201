//! netloop's application: what the `netloop` binary dispatches to
//! ([`app`]): scenario files, run directories, sweeps, plots and the
//! command line around the co-simulation core.
//!
//! Data flows one way: scenario file → `config` → session (sync scheme) →
//! {controlsim, network backend} → `output` (docs/design.md §1.2). A scenario
//! is read, checked and built once ([`loaded_scenario::load`]: a loop
//! scenario through [`scenario_file`] → [`built::Built`], a graph scenario
//! through [`graph_scenario`]) and the run takes what was built.
//!
//! # Lifecycle of a run
//! 1. **Resolve**: the scenario is parsed and checked into
//!    [`config::Resolved`] (the scenario as written, and the
//!    `netloop-cosim` [`config::ResolvedRun`] it derefs to), with one keyed
//!    error ([`config::ScenarioError`]) for the first problem.
//! 2. **Build**: the control system, the nodes its plants move
//!    ([`loop_mobility`]) and what the run observes ([`built::Built`]); the
//!    network is started (builtin, or the ns-3 server through
//!    [`ns3`]) and a [`graph_session::GraphSession`] made over them (a
//!    `[[loops]]` scenario as the graph its loops expand into,
//!    [`loop_graph`]).
//! 3. **Run** the session, recording the time series and writing each
//!    packet's fate as the ledger emits it ([`packets_csv`]).
//! 4. **Finish**: the session's summary and the run directory ([`run`],
//!    [`run_dir`], [`output`]).
//!
//! The co-simulation core is the `netloop-cosim` crate (bridge/cosim),
//! which does no file I/O: the sessions, sync schemes, node motion,
//! networks, flows and [`ledger`], re-exported here at their old paths. The
//! client of the ns-3 stepping server is its own crate,
//! `netloop-ns3-client` (bridge/ns3-client), re-exported here as [`ns3`]
//! and [`network_schema`]. The graph session is the core's too
//! ([`graph_session`] re-exports it); what stays here is what reads a
//! scenario: its flows ([`graph_flows`], which make the session's
//! `GraphPlan`) and the nodes its components move ([`graph_mobility`]).

pub mod app;
pub mod built;
pub mod config;
pub mod config_hash;
// The co-simulation core's modules (bridge/cosim), at their old paths.
pub use netloop_cosim::{flows, ledger, network, session, sync_scheme};
pub mod fmu_checks;
pub mod graph_flows;
pub mod graph_mobility;
pub mod graph_response;
pub mod graph_run;
pub mod graph_scenario;
/// The session every networked run goes through, at its old path:
/// netloop-cosim's [`session::graph`](netloop_cosim::session::graph).
pub mod graph_session {
    pub use netloop_cosim::session::graph::*;
}
#[cfg(test)]
mod graph_moving_tests;
pub mod input;
pub mod keyed;
pub mod limits;
pub mod loaded_scenario;
pub mod loop_graph;
pub mod loop_mobility;
pub mod metrics;
/// Node motion (netloop-cosim's `mobility`) with the loops' motions settled
/// against the built system ([`loop_mobility`]), at its old path.
pub mod mobility {
    pub use crate::loop_mobility::node_motions;
    pub use netloop_cosim::mobility::*;
}
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
pub mod shell;
pub mod stop;
pub mod subsystem;
pub mod sweep;
