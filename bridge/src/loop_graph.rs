//! A `[[loops]]` scenario as the graph session runs it (issue 11 items 6
//! and 7): the loops expanded into a graph
//! ([`controlsim::graph::loops::expand_networked`]) whose networked links
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

use controlsim::graph::loops::{expand_networked, LinkKind, LoopLink, LoopLinks};
use controlsim::graph::{ExpandedLoops, FlowEnd, Graph, LossPolicy, SendRule, Timing};
use controlsim::{System, Trigger};

use crate::config::{OnLoss, Resolved, ResponseKind, ScenarioError};
use crate::flows::{Direction, FlowTable};
use crate::graph_flows::{GraphFlow, LoopStreams, NetworkSide};

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
        expand_networked(&resolved.system, resolved.scenario.control_seed(), &links)?;
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
        "expand_networked lists the links in flow-table order"
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
