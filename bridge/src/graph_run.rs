//! One run of a graph scenario with a `[network]`: `timeseries.csv` (the
//! graph's columns, a flow's receiving end as `<flow>.y`), `packets.csv`
//! (the loops' columns; `loop` is the flow's name and `direction` is
//! `flow`) and `summary.json` (the network figures of a loop run, per flow).
//!
//! As for loop runs, a run that fails part-way keeps its data files under
//! their `.partial` names and says `"complete": false` in `summary.json`,
//! which is written last.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use controlsim::graph::GraphRecorder;
use protocol::SimTime;
use serde::Serialize;

use crate::flows::Direction;
use crate::graph_scenario::{GraphScenario, LoadedGraph};
use crate::graph_session::{GraphSession, GraphSessionError};
use crate::ledger::FlowCounts;
use crate::network::NetworkError;
use crate::ns3::Ns3Error;
use crate::output::{write_atomically, AtomicFile};
use crate::packets_csv::PacketsCsv;
use crate::run::{
    FlowSummary, HeldRunDir, NetworkSummary, RunError, RunOptions, SyncSummary, Versions,
};

/// `summary.json` of a networked graph run.
#[derive(Debug, Serialize)]
pub struct GraphRunSummary {
    pub complete: bool,
    pub error: Option<String>,
    /// `complete` or `failed`.
    pub status: String,
    pub reached_ns: u64,
    pub reached_s: f64,
    pub versions: Versions,
    pub seed: u64,
    pub run: u64,
    /// The scenario's hash ([`crate::loaded_scenario::graph_config_hash`]):
    /// a sweep knows its own finished runs by it.
    pub config_hash: String,
    pub sync: SyncSummary,
    pub network: NetworkSummary,
    pub flows: Vec<FlowSummary>,
    pub totals: FlowCounts,
    /// Delivered / sent over all flows (`null` when nothing was sent).
    pub delivery_ratio: Option<f64>,
    pub scenario: GraphScenario,
}

/// Why a networked graph run did not complete: a run's error
/// ([`RunError`]), whose session is the graph's.
pub type GraphNetRunError = RunError<GraphSessionError>;

/// Runs a loaded graph scenario that has a `[network]` into `out_dir`.
///
/// # Errors
/// [`GraphNetRunError`].
///
/// # Panics
/// When the scenario has no `[network]` (see [`crate::graph_scenario::run`]).
pub fn run(
    mut loaded: LoadedGraph,
    out_dir: &Path,
    base_dir: &Path,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<GraphRunSummary, GraphNetRunError> {
    let side = loaded
        .network
        .clone()
        .expect("graph_run::run is for scenarios with a [network]");
    let builtin = loaded.builtin.take();
    let dir = out_dir.to_path_buf();
    let io = |source| RunError::Output {
        dir: dir.clone(),
        source,
    };
    let network_config = &side.resolved.scenario.network;
    let held = HeldRunDir::take(&dir, network_config)?;
    let options = RunOptions {
        out_dir: dir.clone(),
        base_dir: base_dir.to_path_buf(),
        cancel: cancel.clone(),
    };
    let timeseries = AtomicFile::create(&dir, "timeseries.csv").map_err(io)?;
    let packets = PacketsCsv::new(AtomicFile::create(&dir, "packets.csv").map_err(io)?);
    let every = loaded.scenario.record_every;
    let mut recorder = GraphRecorder::new(&loaded.graph, timeseries, every).map_err(io)?;
    let scenario = loaded.scenario.clone();
    let summary_of = |error: Option<String>,
                      reached: SimTime,
                      ledger: Option<&crate::ledger::Ledger<PacketsCsv<AtomicFile>>>,
                      syncs: u64,
                      software: &str,
                      description: &str| {
        let table = side.table();
        let (flows, totals) = crate::run::flow_summaries(&table, ledger, reached, |f| {
            (side.flows[f.id as usize].name.clone(), Direction::Flow)
        });
        let sync = &side.resolved.scenario.sync;
        GraphRunSummary {
            complete: error.is_none(),
            status: if error.is_none() {
                "complete"
            } else {
                "failed"
            }
            .into(),
            error,
            reached_ns: reached.0,
            reached_s: reached.as_secs_f64(),
            versions: Versions {
                netloop: env!("CARGO_PKG_VERSION"),
                protocol: protocol::PROTOCOL_VERSION,
                network: software.to_string(),
            },
            seed: scenario.seed,
            run: scenario.run,
            config_hash: crate::loaded_scenario::graph_config_hash(&scenario),
            sync: SyncSummary {
                scheme: sync.scheme.to_string(),
                period_s: sync.period.map(SimTime::as_secs_f64),
                syncs,
            },
            network: NetworkSummary {
                backend: network_config.backend.to_string(),
                description: description.to_string(),
            },
            delivery_ratio: totals.delivery_ratio(),
            totals,
            flows,
            scenario: scenario.clone(),
        }
    };
    let network = match crate::run::start_network(&side.resolved, &options, builtin) {
        Ok(n) => n,
        Err(NetworkError::Ns3(Ns3Error::BadArgument {
            message, argument, ..
        })) => {
            // Bad input: leave nothing (remove_dir only removes what is empty).
            if let Ok(ts) = recorder.finish() {
                let _ = std::fs::remove_file(ts.abandon());
            }
            if let Ok(p) = crate::ledger::FateSink::finish(packets) {
                let _ = std::fs::remove_file(p.abandon());
            }
            held.abandon();
            return Err(RunError::NetworkRejected { message, argument });
        }
        Err(e) => {
            let summary = summary_of(Some(e.to_string()), SimTime::ZERO, None, 0, "", "");
            if let Ok(ts) = recorder.finish() {
                ts.abandon();
            }
            let _ = write_summary(&dir, &summary);
            return Err(RunError::Failed {
                source: Box::new(GraphSessionError::Network(e)),
                reached: SimTime::ZERO,
                out_dir: dir,
            });
        }
    };
    let software = network.software();
    let mut session = GraphSession::new(loaded.graph, side.plan(), network, packets, cancel);
    let outcome = session.run(&mut recorder);
    let network_alive = !matches!(outcome, Err(GraphSessionError::Network(_)));
    let description = session.network_description().to_string();
    let syncs = session.syncs();
    let (parts, finished) = session.finish(network_alive);
    let outcome = outcome.and(finished.map(drop));
    let reached = parts.graph.time();
    let mut summary = summary_of(
        outcome.as_ref().err().map(ToString::to_string),
        reached,
        Some(&parts.ledger),
        syncs,
        &software,
        &description,
    );
    let packets_file = parts.ledger.into_inner();
    let timeseries_file = recorder.finish();
    let committed = if outcome.is_ok() {
        match (timeseries_file, packets_file) {
            (Ok(ts), Ok(p)) => ts.commit().and_then(|_| p.commit()).map(drop),
            (Err(e), _) => Err(e),
            (_, Err(e)) => Err(std::io::Error::other(e.to_string())),
        }
    } else {
        if let Ok(ts) = timeseries_file {
            ts.abandon();
        }
        if let Ok(p) = packets_file {
            p.abandon();
        }
        Ok(())
    };
    if let (Err(e), true) = (&committed, summary.complete) {
        summary.complete = false;
        summary.status = "failed".into();
        summary.error = Some(format!(
            "cannot write the run directory {}: {e}",
            dir.display()
        ));
    }
    write_summary(&dir, &summary).map_err(io)?;
    committed.map_err(io)?;
    match outcome {
        Ok(()) => Ok(summary),
        Err(source) => Err(RunError::Failed {
            source: Box::new(source),
            reached,
            out_dir: dir,
        }),
    }
}

fn write_summary(dir: &Path, summary: &GraphRunSummary) -> std::io::Result<()> {
    let mut json = serde_json::to_vec_pretty(summary).expect("a summary always serialises");
    json.push(b'\n');
    write_atomically(&dir.join("summary.json"), &json)
}
