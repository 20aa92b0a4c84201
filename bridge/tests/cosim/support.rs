//! Scenario building and output reading shared by the co-simulation tests:
//! the workspace's test-support crate, re-exported under the names these
//! tests use, and a session run over a network a test builds.

use bridge::config::Resolved;
use bridge::graph_session::GraphSessionError;
use bridge::loop_graph;
use bridge::network::Network;
use bridge::packets_csv::PacketsCsv;
use controlsim::graph::ObserveGraph;
use controlsim::view::LoopObserver;
use controlsim::System;
use protocol::Summary;

pub use test_support::cosim::{builtin_channel, resolve, run_in_tempdir};
pub use test_support::fixtures::{scenario, servo_loop};
pub use test_support::read;
pub use test_support::tables::{csv_rows, num, packet_rows, timeseries_column as column};
pub use test_support::tapped::{Tap, Tapped};

/// What [`run_session`] gives back.
pub struct SessionRun {
    /// The run's outcome.
    pub outcome: Result<(), GraphSessionError>,
    /// The finish's outcome (the network's counters).
    pub finished: Result<Option<Summary>, GraphSessionError>,
    /// `packets.csv` as the ledger wrote it, if it could.
    pub packets: Option<Vec<u8>>,
}

/// Runs `resolved`'s loops through a session over `network` (no plant
/// moves a node), the loops shown to `observer`, and finishes it.
pub fn run_session<O: LoopObserver>(
    resolved: &Resolved,
    network: impl Network + 'static,
    observer: &mut O,
) -> SessionRun {
    let system = System::from_config(&resolved.system, resolved.scenario.control_seed()).unwrap();
    let (mut session, map) = loop_graph::session(
        resolved,
        &system,
        Vec::new(),
        Box::new(network),
        PacketsCsv::new(Vec::new()),
        None,
    )
    .unwrap();
    let outcome = session.run(&mut ObserveGraph::new(&map, observer));
    let (parts, finished) = session.finish(outcome.is_ok());
    SessionRun {
        outcome,
        finished,
        packets: parts.ledger.into_inner().ok(),
    }
}
