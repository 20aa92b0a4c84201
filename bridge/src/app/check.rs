//! `netloop check`: a scenario loaded and checked as a run would, and what
//! it resolves to printed; nothing is run.

use super::cli::CheckArgs;
use super::{overrides, Failure};
use crate::graph_scenario::{self, LoadedGraph};
use crate::loaded_scenario::{self, LoadedScenario};
use crate::scenario_file::Loaded;

/// `netloop check` on a graph scenario: the order, or the DOT with --graph.
fn check_graph(args: CheckArgs, loaded: LoadedGraph, quiet: bool) -> Result<(), Failure> {
    if let Some(note) = loaded.check_network(args.with_server)? {
        tracing::warn!("{note}");
    }
    if args.graph {
        print!("{}", graph_scenario::dot(&loaded));
        return Ok(());
    }
    if args.print {
        let text = toml::to_string(&loaded.scenario)
            .map_err(|e| Failure::Run(format!("cannot print the scenario: {e}")))?;
        print!("{text}");
        return Ok(());
    }
    if quiet {
        return Ok(());
    }
    let s = &loaded.scenario;
    println!("{}: ok", args.scenario.scenario.display());
    println!(
        "  {} simulated in {} steps of {} ({}), {} components, {} connections",
        s.duration,
        loaded.end_step,
        s.step,
        format!("{:?}", s.solver).to_lowercase(),
        s.components.len(),
        s.connections.len()
    );
    let order: Vec<String> = loaded.graph.order().iter().map(|b| b.join(" + ")).collect();
    println!("  evaluation order: {}", order.join(", "));
    Ok(())
}

/// `netloop check`: the scenario loaded and built exactly as `run` loads
/// it, and (unless quiet) what it resolves to.
///
/// # Errors
/// Bad input, located at its key.
pub fn check(args: CheckArgs, quiet: bool) -> Result<(), Failure> {
    let loaded = loaded_scenario::load(&args.scenario.scenario, &overrides(&args.scenario)?)?;
    let loaded = match loaded {
        LoadedScenario::Graph(graph) => return check_graph(args, *graph, quiet),
        LoadedScenario::Loops(loaded) => loaded,
    };
    if args.graph {
        // The graph the loops expand into, as `run` builds it.
        let Loaded {
            resolved,
            built,
            source,
            ..
        } = *loaded;
        let graph = crate::loop_graph::expand(&resolved, &built.system)
            .map_err(|e| Failure::BadInput(source.locate(e).to_string()))?;
        print!("{}", crate::loop_graph::dot(&resolved, &graph));
        return Ok(());
    }
    if let Some(note) = loaded.check_network(args.with_server)? {
        tracing::warn!("{note}");
    }
    let r = &loaded.resolved;
    let s = &r.scenario;
    if args.print {
        let text = toml::to_string(s)
            .map_err(|e| Failure::Run(format!("cannot print the scenario: {e}")))?;
        print!("{text}");
        return Ok(());
    }
    if quiet {
        return Ok(());
    }
    println!("{}: ok", args.scenario.scenario.display());
    println!(
        "  {} simulated in {} steps of {} ({}), sync {}{}",
        s.duration,
        r.end_step,
        s.step,
        format!("{:?}", s.solver).to_lowercase(),
        s.sync.scheme,
        s.sync
            .period
            .map(|p| format!(" every {p}"))
            .unwrap_or_default()
    );
    println!(
        "  network: {} backend, {} nodes; seed {}, run {}",
        s.network.backend, r.node_count, s.seed, s.run
    );
    for (l, n) in s.loops.iter().zip(&r.loops) {
        let place = if n.is_local() {
            format!("local on node {}", n.plant_node)
        } else {
            format!(
                "plant on node {}, controller on node {}",
                n.plant_node, n.controller_node
            )
        };
        println!("  loop {}: {place}", l.name);
    }
    println!("  config hash {}", crate::run::config_hash(s));
    Ok(())
}
