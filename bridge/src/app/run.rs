//! `netloop run`: one scenario, loops or graph, into a run directory.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::cli::RunArgs;
use super::plot::plot_after;
use super::{out_dir_or_default, overrides, read_scenario, Failure};
use crate::config::Resolved;
use crate::graph_scenario::{self, LoadedGraph};
use crate::loaded_scenario::{LoadedScenario, ScenarioBase};
use crate::run::{run_built, RunError, RunOptions};
use crate::run_progress::RunProgress;
use crate::scenario_file::{LoadError, Loaded, Override, ScenarioError};
use crate::server_command::key_of_problem;

/// `netloop run`: the scenario is read, checked and built once, then run.
///
/// # Errors
/// Bad input (the scenario, or a value the ns-3 server refuses, located at
/// its key), or a run that failed (its partial results are on disk).
pub fn run(args: RunArgs, quiet: bool, cancel: Arc<AtomicBool>) -> Result<(), Failure> {
    let path = &args.scenario.scenario;
    let text = read_scenario(path)?;
    let base = ScenarioBase::new(path, &text)?;
    let mut all = overrides(&args.scenario)?;
    // Graph scenarios write CSV only: `--format` is for loop scenarios.
    if let (Some(format), false) = (args.format, base.is_graph()) {
        all.push(Override::parse_set(&format.set()).map_err(Failure::BadInput)?);
    }
    // Asked of the file as written: `--network` itself adds a [network].
    if base.is_graph() && args.scenario.network.is_some() && !base.has_network() {
        return Err(no_network_to_set(path));
    }
    let loaded = base.load(&all)?;
    let Loaded {
        base_dir,
        resolved,
        built,
        source,
        ..
    } = match loaded {
        LoadedScenario::Loops(loaded) => *loaded,
        LoadedScenario::Graph(graph) => return run_graph_scenario(args, *graph, quiet, cancel),
    };
    let out_dir = out_dir_or_default(args.out, path, "run");
    let options = RunOptions {
        out_dir: out_dir.clone(),
        base_dir: base_dir.clone(),
        cancel: Some(cancel),
    };
    let progress = RunProgress::for_terminal(resolved.scenario.duration, quiet);
    let outcome = run_built(&resolved, built, &options, progress);
    if let (Ok(report), false) = (&outcome, quiet) {
        super::report::print_summary(&report.summary, &report.out_dir);
    }
    // A failed run is plotted too, from its partial files.
    if args.plot && !outcome.as_ref().is_err_and(RunError::wrote_nothing) {
        if let (Some(line), false) = (plot_after(&out_dir), quiet) {
            println!("{line}");
        }
    }
    outcome
        .map(drop)
        .map_err(|e| run_failure(e, &resolved, &base_dir, |error| source.locate(error)))
}

/// What a run's error is to the user: bad input (exit code 2) located at
/// its key, the scenario's or the one a rejected server argument sets, or
/// a run that failed (exit code 1) and kept its partial results. The same
/// for loop and graph runs.
fn run_failure<S: std::fmt::Display>(
    error: RunError<S>,
    resolved: &Resolved,
    base_dir: &Path,
    locate: impl Fn(ScenarioError) -> LoadError,
) -> Failure {
    match error {
        RunError::Config(e) => Failure::BadInput(locate(e).to_string()),
        // The server rejected an argument: bad input, reported at its key
        // (a server argument's key, the one text key left: its schema's).
        RunError::NetworkRejected { message, argument } => {
            let key = key_of_problem(resolved, base_dir, argument.as_deref());
            let error = ScenarioError::new(key, message);
            Failure::BadInput(locate(error).to_string())
        }
        RunError::Failed { source, reached, out_dir } => Failure::Run(format!(
            "{source}\npartial results up to simulated time {reached} kept in {} (summary.json says \"complete\": false)",
            out_dir.display()
        )),
        e => Failure::Run(e.to_string()),
    }
}

/// `--network` on a graph scenario that has no `[network]` to set it in.
fn no_network_to_set(path: &std::path::Path) -> Failure {
    Failure::BadInput(format!(
        "{}: --network: this graph scenario has no [network] (all its components are on one node)",
        path.display()
    ))
}

/// `netloop run` on a graph scenario (`[[components]]`): on one node, or
/// with a `[network]` carrying the flows between nodes.
fn run_graph_scenario(
    args: RunArgs,
    mut loaded: LoadedGraph,
    quiet: bool,
    cancel: Arc<AtomicBool>,
) -> Result<(), Failure> {
    let path = &args.scenario.scenario;
    let out_dir = out_dir_or_default(args.out, path, "run");
    if let Some(side) = &loaded.network {
        let base_dir = path.parent().map(PathBuf::from).unwrap_or_default();
        let components = loaded.scenario.components.len();
        // What a rejected server argument is traced back to, once `loaded` is the run's.
        let (resolved, origins) = (side.resolved.clone(), loaded.origins().clone());
        return match crate::graph_run::run(loaded, &out_dir, &base_dir, Some(cancel)) {
            Ok(summary) => {
                if !quiet {
                    println!(
                        "{}: {components} components, {} flows over {} ({} syncs), delivery ratio {} in {}",
                        path.display(),
                        summary.flows.len(),
                        summary.network.backend,
                        summary.sync.syncs,
                        summary
                            .delivery_ratio
                            .map_or_else(|| "-".to_string(), |r| format!("{r:.3}")),
                        out_dir.display()
                    );
                }
                Ok(())
            }
            Err(e) => Err(run_failure(e, &resolved, &base_dir, |error| {
                origins.locate(error)
            })),
        };
    }
    match graph_scenario::run(&mut loaded, &out_dir) {
        Ok(report) => {
            if !quiet {
                println!(
                    "{}: {} rows of {} components in {}",
                    path.display(),
                    report.rows,
                    loaded.scenario.components.len(),
                    out_dir.join("timeseries.csv").display()
                );
            }
            Ok(())
        }
        Err(graph_scenario::GraphRunError::Failed { source }) => Err(Failure::Run(format!(
            "{source}\npartial time series kept in {}",
            out_dir.join("timeseries.csv").display()
        ))),
        Err(e) => Err(Failure::Run(e.to_string())),
    }
}
