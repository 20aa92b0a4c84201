//! A `[[loops]]` scenario as the graph session runs it (issue 11 items 6
//! and 7): the loops expanded into a graph
//! ([`controlsim::graph::loops::expand_built`]) whose networked links
//! (uplink, downlink, CACC feed-forward) are graph flows with the loops'
//! flow table, so that their ports, numbers, tags, receive policies and
//! `packets.csv` rows are the loops' own.
//!
//! A link sends on the schedule of the component that times it (a
//! sample at the sensor's instants, a time-triggered controller's values at
//! its ticks), numbered by its index in that schedule; an event-triggered
//! controller's values answer each accepted measurement, numbered in the
//! order they are computed. A downlink's `on_loss` acts on the actuator's
//! inlet; an uplink or feed-forward loss changes nothing (the controller
//! holds its input), as for loops.

use controlsim::graph::loops::{expand_built, LinkKind, LoopLink, LoopLinks};
use controlsim::graph::{ExpandedLoops, FlowEnd, Graph, LossPolicy, SendRule, Timing};
use controlsim::sensor::SensorSource;
use controlsim::{System, Trigger};

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use controlsim::graph::LoopMap;
use netloop_cosim::mobility::NodeMotion;

use crate::config::{OnLoss, Resolved, ResponseKind, ScenarioError};
use crate::flows::{Direction, FlowTable};
use crate::graph_flows::{GraphFlow, LoopStreams, NetworkSide};
use crate::graph_session::GraphSession;
use crate::ledger::FateSink;
use crate::network::Network;

/// The graph of a loop scenario and what its session needs besides.
pub struct LoopGraph {
    pub expanded: ExpandedLoops,
    pub side: NetworkSide,
}

/// Expands the loops of `resolved` (built as `system`, which says which
/// controllers are event-triggered and can answer by rollback) with the
/// links its flow table puts on the network.
///
/// # Errors
/// A keyed error of the expansion (the same checks as building `system`).
pub fn expand(resolved: &Resolved, system: &System) -> Result<LoopGraph, ScenarioError> {
    let table = FlowTable::new(&resolved.loops);
    let responds: Vec<bool> = system
        .loops()
        .iter()
        .map(|lp| lp.controller_trigger() == Trigger::Event)
        .collect();
    let links: Vec<LoopLinks> = resolved
        .loops
        .iter()
        .enumerate()
        .map(|(i, l)| LoopLinks {
            uplink: table.uplink(i).is_some(),
            downlink: table.downlink(i).is_some(),
            feedforward: table.feedforward(i).is_some(),
            rollback: l.response == ResponseKind::Rollback
                && responds[i]
                && system.loops()[i].has_rollback_response(),
        })
        .collect();
    let (expanded, carried) =
        expand_built(&resolved.system, resolved.scenario.control_seed(), &links)?;
    let flows = table
        .all()
        .iter()
        .zip(&carried)
        .map(|(f, link)| flow(&expanded.graph, f, link))
        .collect();
    let names = system
        .loops()
        .iter()
        .map(|l| l.name().to_string())
        .collect();
    Ok(LoopGraph {
        side: NetworkSide {
            resolved: resolved.clone(),
            flows,
            motions: Vec::new(),
            loops: Some(LoopStreams {
                table,
                names,
                responds,
            }),
        },
        expanded,
    })
}

/// The session of a `[[loops]]` run: `system`'s loops expanded into a
/// graph, their networked links over `network`, the nodes in `motions`
/// moved by their plants; with the map of the loops in the graph, which
/// the loops' observers read through
/// ([`controlsim::graph::ObserveGraph`]).
///
/// # Errors
/// A keyed error of the expansion (the same checks as building `system`).
pub fn session<W: FateSink>(
    resolved: &Resolved,
    system: &System,
    motions: Vec<NodeMotion>,
    network: Box<dyn Network>,
    packets: W,
    cancel: Option<Arc<AtomicBool>>,
) -> Result<(GraphSession<W>, LoopMap), ScenarioError> {
    let LoopGraph { expanded, side } = expand(resolved, system)?;
    let map = expanded.map;
    let session = GraphSession::new(expanded.graph, side.plan(), network, packets, cancel)
        .of_loops(map.clone(), motions);
    Ok((session, map))
}

/// `netloop check --graph` of a `[[loops]]` file: the graph its loops
/// expand into, as Graphviz DOT in the form a graph scenario's is drawn
/// ([`crate::graph_scenario::dot`]): components grouped by network node,
/// labelled with their place in the evaluation order and their role; the
/// links the network carries drawn bold and blue with their flow, trigger
/// and port; the evaluation order as a dashed line.
pub fn dot(resolved: &Resolved, graph: &LoopGraph) -> String {
    use crate::graph_scenario::{dot_edge, dot_order};
    use std::collections::BTreeMap;
    use std::fmt::Write;

    let g = &graph.expanded.graph;
    let name = |i: usize| g.component_names().nth(i).unwrap_or("?").to_string();
    let mut position = BTreeMap::new();
    for (n, block) in g.order().iter().enumerate() {
        for c in block {
            position.insert(c.to_string(), n + 1);
        }
    }
    // (component, role, node), and edges (from, to, label, flow index).
    let mut members: Vec<(usize, &str, u32)> = Vec::new();
    let mut edges: Vec<(usize, usize, &str, Option<u32>)> = Vec::new();
    let table = graph.side.loops.as_ref().map(|l| &l.table);
    let loops = graph.expanded.map.loops();
    for (i, l) in loops.iter().enumerate() {
        let net = &resolved.loops[i];
        let (plant_node, controller_node) = (net.plant_node, net.controller_node);
        let flow = |f: Option<Option<u32>>| f.flatten();
        members.push((l.plant, "plant", plant_node));
        members.push((l.sensor, "sensor", plant_node));
        members.push((l.controller, "controller", controller_node));
        members.push((l.actuator, "actuator", plant_node));
        let radar = resolved.system.loops[i].sensor.source == SensorSource::Radar;
        let sampled = if radar { "motion -> own" } else { "y -> y" };
        edges.push((l.plant, l.sensor, sampled, None));
        if let Some(p) = l.predecessor {
            edges.push((loops[p].plant, l.sensor, "motion -> ahead", None));
        }
        edges.push((
            l.sensor,
            l.controller,
            "y -> measurement",
            flow(table.map(|t| t.uplink(i))),
        ));
        if let (Some(extra), Some(p)) = (l.extra, l.predecessor) {
            let feedforward = flow(table.map(|t| t.feedforward(i)));
            let node = if feedforward.is_some() {
                resolved.loops[p].plant_node
            } else {
                plant_node
            };
            members.push((extra, "predecessor's acceleration", node));
            edges.push((loops[p].plant, extra, "motion[2] -> y", None));
            let carried = feedforward.or(flow(table.map(|t| t.uplink(i))));
            edges.push((extra, l.controller, "y -> extra", carried));
        }
        edges.push((
            l.controller,
            l.actuator,
            "u -> u",
            flow(table.map(|t| t.downlink(i))),
        ));
        edges.push((l.actuator, l.plant, "u -> u", None));
    }
    let mut out = String::new();
    let _ = writeln!(out, "digraph netloop {{");
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(out, "  node [shape=box, fontname=\"Helvetica\"];");
    let mut nodes: BTreeMap<u32, Vec<(usize, &str)>> = BTreeMap::new();
    for &(c, role, node) in &members {
        nodes.entry(node).or_default().push((c, role));
    }
    for (k, (node, here)) in nodes.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{k} {{");
        let _ = writeln!(out, "    label=\"node {node}\";");
        for &(c, role) in here {
            let n = name(c);
            let at = position.get(&n).copied().unwrap_or(0);
            let _ = writeln!(out, "    \"{n}\" [label=\"#{at} {n}\\n{role}\"];");
        }
        let _ = writeln!(out, "  }}");
    }
    for (from, to, ports, flow) in edges {
        let (from, to) = (name(from), name(to));
        let flow = flow
            .and_then(|f| graph.side.flows.get(f as usize))
            .map(|f| {
                // As packets.csv names it: the loop and the direction.
                let direction = f.name.split_once(':').map_or("", |d| d.1);
                let name = &resolved.scenario.loops[f.connection].name;
                (format!("{name} {direction}"), f)
            });
        let flow = flow.as_ref().map(|(name, f)| (name.as_str(), *f));
        dot_edge(&mut out, g, (&from, &to), ports, flow);
    }
    let drawn: Vec<String> = members.iter().map(|&(c, _, _)| name(c)).collect();
    dot_order(&mut out, g, |n| drawn.iter().any(|d| d == n));
    let _ = writeln!(out, "}}");
    out
}

/// Flow `f` of the loops' table, carried by `link` of the graph.
fn flow(graph: &Graph, f: &crate::flows::Flow, link: &LoopLink) -> GraphFlow {
    let kind = match f.direction {
        Direction::Uplink => LinkKind::Uplink,
        Direction::Downlink => LinkKind::Downlink,
        Direction::Feedforward | Direction::Flow => LinkKind::Feedforward,
    };
    assert_eq!(
        (link.loop_index, link.kind),
        (f.loop_index, kind),
        "expand_built lists the links in flow-table order"
    );
    let step = graph.step_size().as_nanos();
    let rule = match graph.declaration(link.timed_by).timing {
        Timing::EveryStep => SendRule::Periodic {
            period: 1,
            phase: 0,
        },
        Timing::Periodic { period, offset } => SendRule::Periodic {
            period: period.0 / step,
            phase: offset.0 / step,
        },
        Timing::OnInput => SendRule::Update,
    };
    let on_loss = match (f.direction, f.config.on_loss) {
        (Direction::Downlink, OnLoss::Zero) => LossPolicy::Zero,
        _ => LossPolicy::Hold,
    };
    GraphFlow {
        id: f.id,
        connection: f.loop_index,
        name: format!("{}:{}", f.loop_index, f.direction.as_str()),
        src_node: f.src,
        dst_node: f.dst,
        control: FlowEnd::new(
            graph,
            (link.source, link.port, link.elements.clone()),
            link.inlet,
            rule,
            on_loss,
            f.config.multi_packet,
        ),
        config: f.config.clone(),
        trigger_text: match rule {
            SendRule::Update => "on update".into(),
            _ => "periodic".into(),
        },
    }
}

#[cfg(test)]
#[path = "loop_graph_tests.rs"]
mod tests;
