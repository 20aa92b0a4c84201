//! The resolved scenario types the co-simulation core takes: plain data,
//! checked by the application (bridge's `config` resolves a scenario's TOML
//! into them). The enums are also scenario keys, so they keep their serde
//! names.

use std::fmt;

use controlsim::SystemConfig;
use protocol::SimTime;
use serde::{Deserialize, Serialize};

use crate::sync_scheme::SyncScheme;

/// A checked run as the co-simulation core takes it: what the control side
/// is built from, the loops' network sides and the timing of the sessions.
/// The application makes it once from a scenario (bridge's
/// `config::Resolved` holds it beside the scenario as written); a graph
/// scenario's network side is one without loops.
#[derive(Clone, Debug)]
pub struct ResolvedRun {
    pub system: SystemConfig,
    pub loops: Vec<LoopNetwork>,
    /// Steps in the run.
    pub end_step: u64,
    /// The sync scheme with its parameters, in steps.
    pub sync: SyncScheme,
    /// `[sync] computation_delay`: from a packet's arrival at an
    /// event-triggered controller to its answer entering the network.
    pub computation_delay: SimTime,
    /// Node count the network must have.
    pub node_count: u32,
}

/// The name of a sync scheme (`[sync] scheme`); [`SyncScheme`] is the
/// scheme with its parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SchemeKind {
    #[serde(alias = "time-stepping")]
    TimeStepping,
    #[serde(alias = "master-slave")]
    MasterSlave,
    #[serde(alias = "event-driven")]
    EventDriven,
}

impl fmt::Display for SchemeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            SchemeKind::TimeStepping => "time_stepping",
            SchemeKind::MasterSlave => "master_slave",
            SchemeKind::EventDriven => "event_driven",
        })
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResponseKind {
    #[default]
    Direct,
    Rollback,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TransportKind {
    #[default]
    Udp,
    Tcp,
}

impl From<TransportKind> for protocol::Transport {
    fn from(t: TransportKind) -> Self {
        match t {
            TransportKind::Udp => protocol::Transport::Udp,
            TransportKind::Tcp => protocol::Transport::Tcp,
        }
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum OnLoss {
    #[default]
    Hold,
    Zero,
}

/// One direction of one loop, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedFlow {
    pub port: u16,
    pub size: u32,
    pub multi_packet: bool,
    pub transport: TransportKind,
    pub max_delay: Option<SimTime>,
    pub drop_stale: bool,
    pub on_loss: OnLoss,
}

/// A loop's network side, resolved.
#[derive(Clone, Debug, PartialEq)]
pub struct LoopNetwork {
    pub plant_node: u32,
    pub controller_node: u32,
    pub response: ResponseKind,
    pub uplink: ResolvedFlow,
    pub downlink: ResolvedFlow,
    /// The CACC feed-forward link, when the controller has one and the
    /// predecessor's node is not the controller's own.
    pub feedforward: Option<Feedforward>,
    /// `None` when the node stays where the network put it.
    pub mobility: Option<Mobility>,
}

/// The feed-forward link of a platoon follower.
#[derive(Clone, Debug, PartialEq)]
pub struct Feedforward {
    /// The predecessor's plant node, where its acceleration is measured.
    pub src: u32,
    pub flow: ResolvedFlow,
}

/// A resolved `MobilityConfig` (bridge's config) with a unit heading; which states it reads
/// is settled against the built plant (bridge's `mobility`).
#[derive(Clone, Debug, PartialEq)]
pub struct Mobility {
    pub origin: [f64; 3],
    pub heading: [f64; 3],
    pub position: Option<String>,
    pub velocity: Option<String>,
    /// Whether `origin` or `heading` was set: a plant without a position
    /// then needs `position`, rather than being ignored.
    pub placed: bool,
    /// Declared `max_speed` (m/s), checked finite and not negative.
    pub max_speed: Option<f64>,
    /// Declared `max_acceleration` (m/s²), checked finite and not negative.
    pub max_acceleration: Option<f64>,
}

impl LoopNetwork {
    /// Controller on the plant's node: no packets for this loop.
    pub fn is_local(&self) -> bool {
        self.plant_node == self.controller_node
    }
}
