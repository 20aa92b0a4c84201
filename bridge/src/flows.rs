//! The loops' packet streams: which flows exist, between which nodes, and
//! which loop and direction each serves.

use protocol::{FlowSpec, Transport};
use serde::Serialize;

use crate::config::{LoopNetwork, ResolvedFlow};

/// Which way a flow carries a loop's values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Sensor → controller: measurements.
    Uplink,
    /// Controller → actuator: control values.
    Downlink,
}

impl Direction {
    pub fn as_str(self) -> &'static str {
        match self {
            Direction::Uplink => "uplink",
            Direction::Downlink => "downlink",
        }
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

/// Every networked flow, numbered 0.. in loop order (uplink, then downlink).
/// Local loops (controller on the plant's node) have none.
#[derive(Clone, Debug, Default)]
pub struct FlowTable {
    flows: Vec<Flow>,
    /// Per loop: uplink and downlink flow ids.
    by_loop: Vec<[Option<u32>; 2]>,
}

impl FlowTable {
    pub fn new(loops: &[LoopNetwork]) -> Self {
        let mut table = FlowTable::default();
        for (i, l) in loops.iter().enumerate() {
            let mut ids = [None, None];
            if !l.is_local() {
                for (slot, direction, src, dst, config) in [
                    (0, Direction::Uplink, l.plant_node, l.controller_node, &l.uplink),
                    (1, Direction::Downlink, l.controller_node, l.plant_node, &l.downlink),
                ] {
                    let id = table.flows.len() as u32;
                    table.flows.push(Flow { id, loop_index: i, direction, src, dst, config: config.clone() });
                    ids[slot] = Some(id);
                }
            }
            table.by_loop.push(ids);
        }
        table
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

    /// The flows as the network is told about them. `responds` says, per
    /// loop, whether its controller answers each measurement at once
    /// (event-triggered): only deliveries to such controllers need to stop an
    /// event-driven step, because only they inject new packets at their
    /// arrival time; every other delivery is applied at its boundary anyway.
    pub fn specs(&self, responds: &[bool]) -> Vec<FlowSpec> {
        self.flows
            .iter()
            .map(|f| FlowSpec {
                flow: f.id,
                port: f.config.port,
                src: f.src,
                dst: f.dst,
                transport: Transport::Udp,
                stop_on_delivery: f.direction == Direction::Uplink && responds[f.loop_index],
            })
            .collect()
    }
}
