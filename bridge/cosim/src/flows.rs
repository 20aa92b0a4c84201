//! The loops' packet streams: which flows exist, between which nodes, and
//! which loop and direction each serves.

use protocol::FlowSpec;
use serde::Serialize;

use crate::resolved::{LoopNetwork, ResolvedFlow};

/// Which way a flow carries a loop's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Sensor → controller: measurements.
    Uplink,
    /// Controller → actuator: control values.
    Downlink,
    /// Predecessor's vehicle → controller: a platoon's feed-forward values.
    Feedforward,
    /// A graph scenario's connection between nodes (bridge's `graph_flows`).
    Flow,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Uplink => "uplink",
            Direction::Downlink => "downlink",
            Direction::Feedforward => "feedforward",
            Direction::Flow => "flow",
        }
    }

    /// Whether the receiver is a controller (rather than an actuator).
    pub fn to_controller(self) -> bool {
        matches!(self, Direction::Uplink | Direction::Feedforward)
    }
}

#[derive(Clone, Debug)]
pub struct Flow {
    pub id: u32,
    pub loop_index: usize,
    pub direction: Direction,
    pub src: u32,
    pub dst: u32,
    pub config: ResolvedFlow,
}

/// Every networked flow, numbered 0.. in loop order (uplink, downlink,
/// feed-forward). Local loops (controller on the plant's node) have no
/// uplink or downlink.
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    flows: Vec<Flow>,
    /// Per loop: uplink, downlink and feed-forward flow ids.
    by_loop: Vec<[Option<u32>; 3]>,
}

impl FlowTable {
    pub fn new(loops: &[LoopNetwork]) -> Self {
        let mut table = FlowTable::default();
        for (i, l) in loops.iter().enumerate() {
            let mut ids = [None, None, None];
            let mut streams = Vec::new();
            if !l.is_local() {
                streams.push((
                    0,
                    Direction::Uplink,
                    l.plant_node,
                    l.controller_node,
                    &l.uplink,
                ));
                streams.push((
                    1,
                    Direction::Downlink,
                    l.controller_node,
                    l.plant_node,
                    &l.downlink,
                ));
            }
            if let Some(ff) = &l.feedforward {
                streams.push((
                    2,
                    Direction::Feedforward,
                    ff.src,
                    l.controller_node,
                    &ff.flow,
                ));
            }
            for (slot, direction, src, dst, config) in streams {
                let id = table.flows.len() as u32;
                table.flows.push(Flow {
                    id,
                    loop_index: i,
                    direction,
                    src,
                    dst,
                    config: config.clone(),
                });
                ids[slot] = Some(id);
            }
            table.by_loop.push(ids);
        }
        table
    }

    /// A table of flows made elsewhere (a graph scenario's), numbered
    /// `0..` in order; they belong to no loop's slots.
    pub fn from_flows(flows: Vec<Flow>) -> Self {
        FlowTable {
            flows,
            by_loop: Vec::new(),
        }
    }

    pub fn get(&self, id: u32) -> Option<&Flow> {
        self.flows.get(id as usize)
    }

    pub fn all(&self) -> &[Flow] {
        &self.flows
    }

    pub fn uplink(&self, loop_index: usize) -> Option<u32> {
        self.by_loop[loop_index][0]
    }

    pub fn downlink(&self, loop_index: usize) -> Option<u32> {
        self.by_loop[loop_index][1]
    }

    pub fn feedforward(&self, loop_index: usize) -> Option<u32> {
        self.by_loop[loop_index][2]
    }

    /// The flows as the network is told about them. `responds` says, per
    /// loop, whether its controller answers each measurement at once
    /// (event-triggered): only deliveries to such controllers need to stop an
    /// event-driven step, because only they inject new packets at their
    /// arrival time; every other delivery is applied at its boundary anyway.
    pub fn specs(&self, responds: &[bool]) -> Vec<FlowSpec> {
        self.specs_stopping(|f| f.direction == Direction::Uplink && responds[f.loop_index])
    }

    /// The flows as the network is told about them, `stops(f)` saying
    /// whether a delivery of `f` stops an event-driven step.
    pub fn specs_stopping(&self, stops: impl Fn(&Flow) -> bool) -> Vec<FlowSpec> {
        self.flows
            .iter()
            .map(|f| FlowSpec {
                flow: f.id,
                port: f.config.port,
                src: f.src,
                dst: f.dst,
                transport: f.config.transport.into(),
                stop_on_delivery: stops(f),
            })
            .collect()
    }
}
