//! One run of a scenario, from a resolved config to a run directory
//! (docs/design.md §8.3): `timeseries.csv`, `packets.csv`, `summary.json` and
//! `timing.json`.
//!
//! # Failure
//! A run that fails part-way (dead or silent ns-3 server, a diverging plant,
//! Ctrl-C) keeps what it wrote: the data files stay under their `.partial`
//! names, flushed to the last whole row, every packet without a fate is
//! written as in flight, and `summary.json` says `"complete": false` with the
//! error and the simulated time reached.
//!
//! # The run directory
//! A run locks its directory for its whole length and, before it writes
//! anything, removes the outputs an earlier run left there, `summary.json`
//! first (see [`crate::run_dir`]). `summary.json` is the last file a run
//! writes: one that says `"complete": true` vouches for every file beside it.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use controlsim::error::ObserverError;
use controlsim::graph::{ExpandedLoops, GraphError, GraphLoops, ObserveGraph};
use controlsim::{LoopObserver, LoopView, Recorder};
use protocol::SimTime;
use serde::Serialize;

use crate::built::Built;
use crate::config::{Backend, DataFormat, Ns3NetworkConfig, Resolved, Scenario, ScenarioError};
use crate::flows::{Direction, FlowTable};
use crate::graph_session::{GraphSession, GraphSessionError};
use crate::ledger::FlowCounts;
use crate::loop_graph::LoopGraph;
use crate::metrics::aoi::AgeStats;
use crate::metrics::loops::{ControlEffort, LoopMetrics, StateMetrics};
use crate::metrics::platoon::{PlatoonMetrics, PlatoonSummary};
use crate::metrics::{ControlMetrics, DelayStats};
use crate::network::{BuiltinNetwork, Network, NetworkError, Ns3Network};
use crate::ns3::Ns3Error;
use crate::output::{write_atomically, AtomicFile};
use crate::packets_csv::PacketsCsv;
use crate::run_dir::{clear_outputs, DirLock, RunDirError};
use crate::run_progress::RunProgress;
use crate::server_command::ns3_options;
use crate::stop::{StopConditions, Stopped};

/// Where and how to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// The run directory; created if missing.
    pub out_dir: PathBuf,
    /// Directory that relative paths in the scenario are relative to.
    pub base_dir: PathBuf,
    /// Set by a Ctrl-C handler to stop at the next sync.
    pub cancel: Option<Arc<AtomicBool>>,
}

/// Why a run did not produce complete results: a loop run's, and a
/// networked graph run's ([`crate::graph_run`], whose session fails with a
/// [`crate::graph_session::GraphSessionError`]). One type, so that the
/// application maps both to the same exit codes and messages.
#[derive(Debug, thiserror::Error)]
pub enum RunError<S = GraphSessionError> {
    /// The scenario cannot be built (bad input: exit code 2): the key and
    /// what is wrong there.
    #[error("`{}`: {}", .0.key, .0.message)]
    Config(ScenarioError),
    /// The run directory cannot be written.
    #[error("cannot write the run directory {dir}: {source}", dir = .dir.display())]
    Output {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The run directory is another run's, or holds a symbolic link under
    /// an output name; nothing was written.
    #[error("{0}")]
    Directory(#[from] RunDirError),
    /// The ns-3 server rejected an argument at start-up (bad input: exit
    /// code 2); nothing was written. `message` is the server's, naming the
    /// argument ([`crate::server_command::key_of_problem`] finds its key).
    #[error("the ns-3 server rejected its arguments: {message}")]
    NetworkRejected {
        message: String,
        /// The argument the server named, if it named one.
        argument: Option<String>,
    },
    /// The run started (or its network did not) and failed; partial
    /// results up to simulated time `reached` (the control side's, as in
    /// `summary.json`) are on disk.
    #[error("{source}")]
    Failed {
        source: Box<S>,
        reached: SimTime,
        out_dir: PathBuf,
    },
}

impl<S> RunError<S> {
    /// Whether nothing of the run was written: bad input, or a directory
    /// that could not be used (there is nothing to plot).
    pub fn wrote_nothing(&self) -> bool {
        !matches!(self, RunError::Failed { .. })
    }
}

/// The figures of a run, written as `summary.json`. Everything here is
/// deterministic; wall-clock figures are in [`Timing`].
#[derive(Debug, Serialize)]
pub struct RunSummary {
    pub complete: bool,
    pub error: Option<String>,
    /// `complete`, `failed`, or the name of the stop condition that ended
    /// the run (`unstable` for a single `stop_when`).
    pub status: String,
    /// The stop condition that ended the run early, and when.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stop: Option<Stopped>,
    pub reached_ns: u64,
    pub reached_s: f64,
    pub config_hash: String,
    pub versions: Versions,
    pub seed: u64,
    pub run: u64,
    pub sync: SyncSummary,
    pub network: NetworkSummary,
    pub loops: Vec<LoopSummary>,
    /// Spacing errors and string stability, when loops have CACC controllers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub platoon: Option<PlatoonSummary>,
    pub flows: Vec<FlowSummary>,
    pub totals: FlowCounts,
    /// Delivered / sent over all flows (`null` when nothing was sent).
    pub delivery_ratio: Option<f64>,
    pub scenario: Scenario,
}

#[derive(Debug, Serialize)]
pub struct Versions {
    pub netloop: &'static str,
    pub protocol: u16,
    pub network: String,
}

#[derive(Debug, Serialize)]
pub struct SyncSummary {
    pub scheme: String,
    pub period_s: Option<f64>,
    /// Network steps taken: the number of synchronisations.
    pub syncs: u64,
}

#[derive(Debug, Serialize)]
pub struct NetworkSummary {
    pub backend: String,
    pub description: String,
}

#[derive(Debug, Serialize)]
pub struct LoopSummary {
    pub name: String,
    /// One entry per plant output: output j against reference j, or against
    /// its set point (default 0) when the loop has no reference j.
    pub outputs: Vec<OutputSummary>,
    /// Plant reset events (e.g. bounces) during the run.
    pub resets: u64,
    /// One entry per plant state, against its set point or reference.
    pub states: Vec<StateMetrics>,
    /// Control effort per input channel.
    pub controls: Vec<ControlEffort>,
    /// J = ∫ eₓᵀ Q eₓ + uᵀ R u dt, when `[loops.metrics]` gives Q or R.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quadratic_cost: Option<f64>,
}

#[derive(Debug, Serialize)]
pub struct OutputSummary {
    pub output: String,
    /// `reference` or `setpoint`.
    pub against: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub setpoint: Option<f64>,
    #[serde(flatten)]
    pub metrics: ControlMetrics,
}

#[derive(Debug, Serialize)]
pub struct FlowSummary {
    pub flow: u32,
    #[serde(rename = "loop")]
    pub loop_name: String,
    pub direction: Direction,
    pub src: u32,
    pub dst: u32,
    pub port: u16,
    pub size: u32,
    #[serde(flatten)]
    pub counts: FlowCounts,
    pub delivery_ratio: Option<f64>,
    pub delay: DelayStats,
    /// Age of information at the receiver.
    pub aoi: AgeStats,
}

/// Every flow of `flows` as the ledger counted it by `reached`, and their
/// totals; none without a network. `named` gives a flow its name and
/// direction (a loop's, or a graph connection's).
pub(crate) fn flow_summaries<P: crate::ledger::FateSink>(
    flows: &FlowTable,
    ledger: Option<&crate::ledger::Ledger<P>>,
    reached: SimTime,
    named: impl Fn(&crate::flows::Flow) -> (String, Direction),
) -> (Vec<FlowSummary>, FlowCounts) {
    let mut totals = FlowCounts::default();
    let Some(ledger) = ledger else {
        return (Vec::new(), totals);
    };
    let summaries = flows
        .all()
        .iter()
        .map(|f| {
            let counts = ledger.counts()[f.id as usize].clone();
            totals += &counts;
            let (loop_name, direction) = named(f);
            FlowSummary {
                flow: f.id,
                loop_name,
                direction,
                src: f.src,
                dst: f.dst,
                port: f.config.port,
                size: f.config.size,
                delivery_ratio: counts.delivery_ratio(),
                delay: ledger.delay_stats(f.id),
                aoi: ledger.age_stats(f.id, reached),
                counts,
            }
        })
        .collect();
    (summaries, totals)
}

/// A run's directory, held for one run (loop or graph): made if it was
/// missing, locked, and rid of an earlier run's outputs before anything
/// new is written (the old summary first), with `ns3/` for the traces when
/// the ns-3 server writes any (it writes them from the start; a builtin
/// run leaves no `ns3/`). Released when dropped.
#[derive(Debug)]
pub(crate) struct HeldRunDir {
    dir: PathBuf,
    made: bool,
    lock: DirLock,
}

impl HeldRunDir {
    /// Takes `dir` for a run over `network`.
    ///
    /// # Errors
    /// A directory that cannot be made or written, or that another run holds.
    pub(crate) fn take<S>(
        dir: &Path,
        network: &crate::config::NetworkConfig,
    ) -> Result<HeldRunDir, RunError<S>> {
        let io = |source| RunError::Output {
            dir: dir.to_path_buf(),
            source,
        };
        let made = !dir.exists();
        std::fs::create_dir_all(dir).map_err(io)?;
        let lock = DirLock::acquire(dir)?;
        clear_outputs(dir)?;
        if network.backend == Backend::Ns3 && network.wants_traces() {
            std::fs::create_dir_all(dir.join("ns3")).map_err(io)?;
        }
        Ok(HeldRunDir {
            dir: dir.to_path_buf(),
            made,
            lock,
        })
    }

    /// Leaves nothing of a run that never started (bad input): the empty
    /// `ns3/`, and the directory if this run made it (`remove_dir` only
    /// removes what is still empty).
    pub(crate) fn abandon(self) {
        let HeldRunDir { dir, made, lock } = self;
        drop(lock);
        let _ = std::fs::remove_dir(dir.join("ns3"));
        if made {
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

/// Wall-clock figures (`timing.json`): the one output that differs between
/// two runs of the same scenario.
#[derive(Debug, Serialize)]
pub struct Timing {
    pub wall_s: f64,
    pub simulated_s: f64,
    pub real_time_factor: f64,
    pub syncs: u64,
}

/// A finished run.
#[derive(Debug)]
pub struct RunReport {
    pub out_dir: PathBuf,
    pub summary: RunSummary,
    pub wall: Duration,
}

/// The observer of a run: records the time series and accumulates the
/// control metrics at every boundary. It reads the loops through a
/// [`LoopView`], a [`System`] today (as an [`Observer`]) and the graph the
/// loops expand into once the runner runs that ([`LoopObserver`]).
pub(crate) struct RunObserver<W: std::io::Write> {
    recorder: Recorder<W>,
    progress: Option<RunProgress>,
    metrics: Vec<LoopMetrics>,
    platoon: Option<PlatoonMetrics>,
    stop: StopConditions,
    /// Set when a stop condition held; the run ends at that boundary.
    stopped: Option<Stopped>,
    /// Per loop: its outputs and references at the boundary.
    outputs: Vec<Vec<f64>>,
    references: Vec<Vec<f64>>,
    step_s: f64,
}

/// What the observer returns to end the run at a stop condition.
#[derive(Debug, thiserror::Error)]
#[error("stop condition `{0}` holds")]
struct StopRequested(String);

/// Settling band of the settling-time metric: 2% of the step size.
const SETTLING_BAND: f64 = 0.02;

/// The metrics plans and stop conditions of `resolved`, checked against its
/// built loops (names of outputs, states and inputs; a system or its graph).
///
/// # Errors
/// The first bad `[loops.metrics]` or `stop_when`, naming its key.
pub fn observation_plan<V: LoopView + ?Sized>(
    resolved: &Resolved,
    loops: &V,
) -> Result<(Vec<crate::metrics::loops::LoopMetricsPlan>, StopConditions), ScenarioError> {
    let plans = crate::metrics::loops::plan(resolved, loops)?;
    let stop = StopConditions::new(resolved.scenario.stop_when.as_ref(), loops)?;
    Ok((plans, stop))
}

impl<W: std::io::Write> RunObserver<W> {
    pub(crate) fn new<V: LoopView + ?Sized>(
        resolved: &Resolved,
        loops: &V,
        recorder: Recorder<W>,
        progress: Option<RunProgress>,
        (plans, stop): (Vec<crate::metrics::loops::LoopMetricsPlan>, StopConditions),
    ) -> Self {
        let metrics = plans
            .into_iter()
            .map(|plan| LoopMetrics::new(plan, SETTLING_BAND))
            .collect();
        let n = loops.loop_count();
        RunObserver {
            recorder,
            progress,
            metrics,
            platoon: PlatoonMetrics::new(resolved, loops),
            stop,
            stopped: None,
            outputs: (0..n)
                .map(|i| vec![0.0; loops.signature(i).outputs.len()])
                .collect(),
            references: (0..n).map(|i| vec![0.0; loops.reference_dim(i)]).collect(),
            step_s: loops.step_size().as_secs_f64(),
        }
    }
}

impl<W: std::io::Write> LoopObserver for RunObserver<W> {
    fn observe_loops<V: LoopView + ?Sized>(&mut self, loops: &V) -> Result<(), ObserverError> {
        self.recorder.record(loops)?;
        if let Some(p) = &mut self.progress {
            p.at(loops.time());
        }
        let t = loops.time().as_secs_f64();
        for i in 0..loops.loop_count() {
            loops.plant_outputs_into(i, &mut self.outputs[i]);
            loops.references_into(i, &mut self.references[i]);
        }
        if let Some(stopped) = self.stop.check(loops, &self.outputs, &self.references)? {
            let name = stopped.condition.clone();
            self.stopped = Some(stopped);
            return Err(Box::new(StopRequested(name)));
        }
        for (i, m) in self.metrics.iter_mut().enumerate() {
            m.add(
                t,
                self.step_s,
                loops,
                i,
                &self.outputs[i],
                &self.references[i],
            );
        }
        if let Some(p) = &mut self.platoon {
            p.add(self.step_s, loops);
        }
        Ok(())
    }
}

/// The short hash that names a resolved config, of its canonical form
/// ([`crate::config_hash`]).
pub fn config_hash(scenario: &Scenario) -> String {
    crate::config_hash::of_loops(scenario)
}

pub(crate) fn start_network(
    resolved: &Resolved,
    options: &RunOptions,
    builtin: Option<BuiltinNetwork>,
) -> Result<Box<dyn Network>, NetworkError> {
    let scenario = &resolved.scenario;
    Ok(match scenario.network.backend {
        Backend::Builtin => {
            Box::new(builtin.expect(
                "a builtin network is built with its scenario (scenario_file::build_builtin)",
            ))
        }
        Backend::Ns3 => {
            let ns3 = ns3_options(
                resolved,
                &options.base_dir,
                &options.out_dir,
                options.cancel.clone(),
            );
            let positions_matter = scenario
                .network
                .ns3
                .as_ref()
                .is_some_and(Ns3NetworkConfig::uses_positions);
            Box::new(Ns3Network::start(&ns3, positions_matter)?)
        }
    })
}

/// Runs a resolved scenario into `options.out_dir`.
///
/// # Errors
/// [`RunError::Config`] when the scenario cannot be built (nothing is run),
/// [`RunError::Output`] when the directory cannot be written, and
/// [`RunError::Failed`] when the run started and stopped early; its partial
/// results and `summary.json` are on disk then.
pub fn run(
    resolved: &Resolved,
    options: &RunOptions,
) -> Result<RunReport, RunError<GraphSessionError>> {
    run_with_progress(resolved, options, None)
}

/// [`run`], drawing `progress` as simulated time advances (see
/// [`crate::run_progress`]); the bar is removed before the run returns.
///
/// # Errors
/// As [`run`].
pub fn run_with_progress(
    resolved: &Resolved,
    options: &RunOptions,
    progress: Option<RunProgress>,
) -> Result<RunReport, RunError> {
    let built = Built::new(resolved, &options.base_dir).map_err(RunError::Config)?;
    run_built(resolved, built, options, progress)
}

/// [`run_with_progress`] of a scenario already built from `resolved` (as
/// [`crate::scenario_file::load`] builds it), so that nothing is built
/// twice: the loops expanded into a graph ([`crate::loop_graph`]) and
/// driven by [`crate::graph_session::GraphSession`].
///
/// # Errors
/// As [`run`].
pub fn run_built(
    resolved: &Resolved,
    built: Built,
    options: &RunOptions,
    progress: Option<RunProgress>,
) -> Result<RunReport, RunError<GraphSessionError>> {
    let started = Instant::now();
    let scenario = &resolved.scenario;
    let Built {
        system,
        motions,
        metrics,
        stop,
        network,
    } = built;
    let observation = (metrics, stop);
    let LoopGraph { expanded, side } =
        crate::loop_graph::expand(resolved, &system).map_err(RunError::Config)?;
    drop(system);
    let ExpandedLoops { graph, map } = expanded;
    let dir = options.out_dir.clone();
    let io = |source| RunError::Output {
        dir: dir.clone(),
        source,
    };
    let held = HeldRunDir::take(&dir, &scenario.network)?;
    let started_network = start_network(resolved, options, network);
    if let Err(NetworkError::Ns3(Ns3Error::BadArgument {
        message, argument, ..
    })) = &started_network
    {
        // Bad input, like a scenario that does not resolve: leave nothing.
        held.abandon();
        return Err(RunError::NetworkRejected {
            message: message.clone(),
            argument: argument.clone(),
        });
    }

    let timeseries = AtomicFile::create(&dir, "timeseries.csv").map_err(io)?;
    let packets = PacketsCsv::new(AtomicFile::create(&dir, "packets.csv").map_err(io)?);
    let view = GraphLoops::new(&graph, &map).expect("the map is this graph's");
    let recorder = Recorder::new(&view, timeseries, scenario.record_every)
        .map_err(|e| io(std::io::Error::other(e)))?;
    let observer = RunObserver::new(resolved, &view, recorder, progress, observation);

    let flows = FlowTable::new(&resolved.loops);
    let network = match started_network {
        Ok(n) => n,
        Err(e) => {
            // Nothing ran: still leave a record of why.
            let summary = summarise::<_, PacketsCsv<AtomicFile>, _>(
                resolved,
                &view,
                &flows,
                &observer,
                None,
                0,
                "",
                "",
                Some(e.to_string()),
            );
            let _ = observer.recorder.finish(&view).map(AtomicFile::abandon);
            let _ = write_summary(&dir, &summary);
            let source = Box::new(GraphSessionError::Network(e));
            return Err(RunError::Failed {
                source,
                reached: SimTime::ZERO,
                out_dir: dir,
            });
        }
    };
    let software = network.software();
    let mut session =
        GraphSession::new(graph, side.plan(), network, packets, options.cancel.clone())
            .of_loops(map.clone(), motions);

    // From here on every failure (the network rejecting the flows, a failed
    // step, losses that cannot be recorded at the end) leaves the partial
    // files and a summary.json that says what went wrong.
    let mut observing = ObserveGraph::new(&map, observer);
    let outcome = session.run(&mut observing);
    let mut observer = observing.into_inner();
    if let Some(p) = observer.progress.take() {
        p.finish();
    }
    // A stop condition ends the run as planned: its files are whole.
    let outcome = match (outcome, &observer.stopped) {
        (
            Err(GraphSessionError::Graph {
                source: GraphError::Observer { .. },
                ..
            }),
            Some(_),
        ) => Ok(()),
        (outcome, _) => outcome,
    };
    let network_alive = !matches!(outcome, Err(GraphSessionError::Network(_)));
    let description = session.network_description().to_string();
    let syncs = session.syncs();
    let (parts, finished) = session.finish(network_alive);
    // The first failure is the one to report.
    let outcome = outcome.and(finished.map(drop));
    let error = outcome.as_ref().err().map(|e| e.to_string());
    let view = GraphLoops::new(&parts.graph, &map).expect("the map is this graph's");
    let summary = summarise(
        resolved,
        &view,
        &flows,
        &observer,
        Some(&parts.ledger),
        syncs,
        &software,
        &description,
        error,
    );
    let timeseries = observer.recorder.finish(&view);
    close_run(
        CloseRun {
            dir,
            started,
            format: scenario.output.format,
            syncs,
            reached: view.time(),
        },
        timeseries,
        parts.ledger.into_inner(),
        outcome,
        summary,
    )
}

/// What [`close_run`] needs to know of a run that has ended.
struct CloseRun {
    dir: PathBuf,
    started: Instant,
    format: DataFormat,
    syncs: u64,
    /// The simulated time the run reached.
    reached: SimTime,
}

/// The end of every run, whichever session drove it: the data files
/// committed under their final names (and converted to Parquet) if the run
/// succeeded, else kept under their partial names; `timing.json`; and the
/// summary, written last, marked failed if any file could not be written.
fn close_run<S>(
    run: CloseRun,
    timeseries: Result<AtomicFile, impl std::fmt::Display>,
    packets: Result<AtomicFile, impl std::fmt::Display>,
    outcome: Result<(), S>,
    mut summary: RunSummary,
) -> Result<RunReport, RunError<S>> {
    let CloseRun {
        dir,
        started,
        format,
        syncs,
        reached,
    } = run;
    let io = |source| RunError::Output {
        dir: dir.clone(),
        source,
    };
    let committed = if outcome.is_ok() {
        commit_data(timeseries, packets).and_then(|()| match format {
            DataFormat::Csv => Ok(()),
            DataFormat::Parquet => convert_to_parquet(&dir),
        })
    } else {
        // Keep what was written, under the partial names.
        if let Ok(ts) = timeseries {
            ts.abandon();
        }
        if let Ok(p) = packets {
            p.abandon();
        }
        Ok(())
    };
    let wall = started.elapsed();
    let simulated = reached.as_secs_f64();
    let timing = Timing {
        wall_s: wall.as_secs_f64(),
        simulated_s: simulated,
        real_time_factor: if wall.as_secs_f64() > 0.0 {
            simulated / wall.as_secs_f64()
        } else {
            0.0
        },
        syncs,
    };
    let timed = write_atomically(
        &dir.join("timing.json"),
        &serde_json::to_vec_pretty(&timing).expect("serialisable"),
    )
    .map_err(|e| named("timing.json", e));
    // A run whose files could not all be written is not complete, and its
    // summary (the last file, if it can be written at all) says why.
    let unwritten = committed.and(timed).err();
    if let (Some(e), true) = (&unwritten, summary.complete) {
        summary.complete = false;
        summary.status = "failed".into();
        summary.stop = None;
        summary.error = Some(format!(
            "cannot write the run directory {}: {e}",
            dir.display()
        ));
    }
    write_summary(&dir, &summary).map_err(|e| io(named("summary.json", e)))?;
    if let Some(e) = unwritten {
        return Err(io(e));
    }
    match outcome {
        Ok(()) => Ok(RunReport {
            out_dir: dir,
            summary,
            wall,
        }),
        Err(source) => Err(RunError::Failed {
            source: Box::new(source),
            reached,
            out_dir: dir,
        }),
    }
}

/// Renames the finished data files to their final names.
fn commit_data(
    timeseries: Result<AtomicFile, impl std::fmt::Display>,
    packets: Result<AtomicFile, impl std::fmt::Display>,
) -> std::io::Result<()> {
    let timeseries =
        timeseries.map_err(|e| named("timeseries.csv", std::io::Error::other(e.to_string())))?;
    timeseries
        .commit()
        .map_err(|e| named("timeseries.csv", e))?;
    let packets =
        packets.map_err(|e| named("packets.csv", std::io::Error::other(e.to_string())))?;
    packets.commit().map_err(|e| named("packets.csv", e))?;
    Ok(())
}

/// `[output] format = "parquet"`: the complete CSVs become Parquet files
/// (see [`crate::parquet_file`]) and are removed. A failed run keeps its
/// partial CSVs: they are what is left to look at.
fn convert_to_parquet(dir: &Path) -> std::io::Result<()> {
    for name in ["timeseries", "packets"] {
        let csv = dir.join(format!("{name}.csv"));
        let parquet = format!("{name}.parquet");
        crate::parquet_file::csv_to_parquet(&csv, dir, &parquet).map_err(|e| named(&parquet, e))?;
        std::fs::remove_file(&csv).map_err(|e| named(&format!("{name}.csv"), e))?;
    }
    Ok(())
}

/// An I/O error that names the file it is about.
fn named(file: &str, e: std::io::Error) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{file}: {e}"))
}

fn write_summary(dir: &Path, summary: &RunSummary) -> std::io::Result<()> {
    let mut json = serde_json::to_vec_pretty(summary).expect("a summary always serialises");
    json.push(b'\n');
    write_atomically(&dir.join("summary.json"), &json)
}

#[allow(clippy::too_many_arguments)]
fn summarise<W: std::io::Write, P: crate::ledger::FateSink, V: LoopView + ?Sized>(
    resolved: &Resolved,
    system: &V,
    flows: &FlowTable,
    observer: &RunObserver<W>,
    ledger: Option<&crate::ledger::Ledger<P>>,
    syncs: u64,
    software: &str,
    description: &str,
    error: Option<String>,
) -> RunSummary {
    let scenario = &resolved.scenario;
    let reached = system.time();
    let loops = observer
        .metrics
        .iter()
        .enumerate()
        .map(|(i, m)| {
            let report = m.finish(system, i);
            LoopSummary {
                name: system.loop_name(i).to_string(),
                outputs: report
                    .outputs
                    .into_iter()
                    .zip(&system.signature(i).outputs)
                    .map(|(o, name)| OutputSummary {
                        output: name.clone(),
                        against: o.against,
                        setpoint: o.setpoint,
                        metrics: o.metrics,
                    })
                    .collect(),
                resets: system.resets(i),
                states: report.states,
                controls: report.controls,
                quadratic_cost: report.quadratic_cost,
            }
        })
        .collect();
    let (flow_summaries, totals) = flow_summaries(flows, ledger, reached, |f| {
        (system.loop_name(f.loop_index).to_string(), f.direction)
    });
    let stop = observer.stopped.clone().filter(|_| error.is_none());
    let status = match (&error, &stop) {
        (Some(_), _) => "failed".to_string(),
        (None, Some(s)) => s.condition.clone(),
        (None, None) => "complete".to_string(),
    };
    RunSummary {
        complete: error.is_none(),
        error,
        status,
        stop,
        reached_ns: reached.0,
        reached_s: reached.as_secs_f64(),
        config_hash: config_hash(scenario),
        versions: Versions {
            netloop: env!("CARGO_PKG_VERSION"),
            protocol: protocol::PROTOCOL_VERSION,
            network: software.to_string(),
        },
        seed: scenario.seed,
        run: scenario.run,
        sync: SyncSummary {
            scheme: scenario.sync.scheme.to_string(),
            period_s: scenario.sync.period.map(SimTime::as_secs_f64),
            syncs,
        },
        network: NetworkSummary {
            backend: scenario.network.backend.to_string(),
            description: description.to_string(),
        },
        loops,
        platoon: observer.platoon.as_ref().map(|p| p.finish(system)),
        delivery_ratio: totals.delivery_ratio(),
        totals,
        flows: flow_summaries,
        scenario: scenario.clone(),
    }
}

#[cfg(test)]
#[path = "run_view_tests.rs"]
mod view_tests;
