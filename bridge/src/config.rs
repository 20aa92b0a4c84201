//! The scenario file: what to simulate, over which network, synchronised how
//! (docs/design.md §8.1). TOML; every table rejects unknown keys.
//!
//! ```toml
//! duration = "5s"
//! step = "1ms"                 # solver step h
//! solver = "rk4"               # euler | heun | rk4
//! seed = 1                     # control-side noise and builtin channel
//! run = 1                      # replication: ns-3 run number
//!
//! [sync]
//! scheme = "master_slave"      # time_stepping | master_slave | event_driven
//! period = "10ms"              # T
//!
//! [network]
//! backend = "ns3"              # ns3 | builtin
//! [network.ns3]
//! kind = "p2p"
//! data_rate = "1Mbps"
//! delay = "2ms"
//! [network.builtin]
//! delay = { kind = "constant", value = "2.6ms" }
//!
//! [[loops]]
//! name = "servo"
//! plant_node = 0               # sensor and actuator live here
//! controller_node = 1
//! uplink = { max_delay = "20ms" }
//! downlink = { on_loss = "hold" }
//! [loops.plant]                # ... the control side of the loop, as in controlsim
//! ```
//!
//! [`Scenario::resolve`] checks what serde cannot (the step grid, nodes,
//! ports, policies) and names the key of the first problem.

use std::collections::BTreeMap;
use std::fmt;
use std::num::NonZeroU64;

use controlsim::{
    ActuatorConfig, ControllerConfig, LoopConfig, LoopRef, PlantConfig, References, SensorConfig,
    SolverKind, StepSize, SystemConfig, TriggerKind,
};
use protocol::SimTime;
use serde::{Deserialize, Serialize};

use crate::network::BuiltinConfig;

mod described;
mod length;
mod ns3;
mod sync;
mod tables;

pub use described::DescribedConfig;
pub use length::Metres;
pub use ns3::{CustomConfig, DataRate, Ns3NetworkConfig, ServerArgument, CUSTOM_KIND};
pub use sync::resolve_sync;
pub use tables::TableConfig;
// The resolved types the co-simulation core takes live in it (bridge/cosim).
pub use netloop_cosim::resolved::{
    Feedforward, LoopNetwork, Mobility, OnLoss, ResolvedFlow, ResolvedRun, ResponseKind,
    SchemeKind, TransportKind,
};

/// A whole scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Simulated time to run; a multiple of `step`.
    #[serde(with = "protocol::duration")]
    pub duration: SimTime,
    /// Solver step h.
    #[serde(with = "protocol::duration")]
    pub step: SimTime,
    #[serde(default)]
    pub solver: SolverKind,
    /// Seeds sensor noise and the builtin channel, and is ns-3's `--seed`;
    /// at least 1 (ns-3 refuses 0).
    #[serde(default = "one")]
    pub seed: u64,
    /// Replication number, from 1: ns-3's `--run` (RngSeedManager::SetRun).
    #[serde(default = "one")]
    pub run: u64,
    /// Write every n-th step to `timeseries.csv`; at least 1 by its type.
    #[serde(default = "every_step", deserialize_with = "steps_at_least_one")]
    pub record_every: NonZeroU64,
    /// How the run's data files are written (`[output]`).
    #[serde(default, skip_serializing_if = "OutputConfig::is_default")]
    pub output: OutputConfig,
    pub sync: SyncConfig,
    pub network: NetworkConfig,
    pub loops: Vec<LoopScenario>,
    /// Conditions that end a run early, e.g. `"abs(pendulum.theta) > 1.5"`
    /// (see [`crate::stop`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_when: Option<crate::stop::StopWhen>,
}

fn one() -> u64 {
    1
}

/// `record_every`'s default: every step.
pub(crate) fn every_step() -> NonZeroU64 {
    NonZeroU64::MIN
}

/// `record_every` as read: a whole number of steps, at least 1, said in
/// those words (serde's own says "a nonzero u64").
pub(crate) fn steps_at_least_one<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> Result<NonZeroU64, D::Error> {
    use serde::de::{Error, Unexpected};
    let n = <u64 as Deserialize>::deserialize(d)?;
    NonZeroU64::new(n).ok_or_else(|| {
        D::Error::invalid_value(
            Unexpected::Unsigned(n),
            &"a whole number of steps, at least 1",
        )
    })
}

/// `[output]`: the form of `timeseries` and `packets`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputConfig {
    #[serde(default)]
    pub format: DataFormat,
}

impl OutputConfig {
    fn is_default(&self) -> bool {
        *self == OutputConfig::default()
    }
}

/// File format of a run's time series and packets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DataFormat {
    /// `timeseries.csv`, `packets.csv`.
    #[default]
    Csv,
    /// `timeseries.parquet`, `packets.parquet`: typed columns, compressed.
    Parquet,
}

/// How the two simulators are synchronised (docs/design.md §4).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncConfig {
    pub scheme: SchemeKind,
    /// Sync period T, a multiple of `step`. Required by time-stepping and
    /// master-slave; for event-driven it is optional and bounds the time
    /// between syncs (so node positions are refreshed at least that often).
    #[serde(
        default,
        with = "protocol::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub period: Option<SimTime>,
    /// Event-driven: time from a packet's arrival at an event-triggered
    /// controller to its response entering the network. Master-slave sends a
    /// response at the first sync point at or after arrival + this delay.
    #[serde(default, with = "protocol::duration")]
    pub computation_delay: SimTime,
    /// Master-slave: let the network run several periods ahead when no sync
    /// can change anything (every networked controller time-triggered, no
    /// node moving in a network that cares), overlapping it with the replay.
    /// Results are bit-identical either way; `false` syncs every period.
    #[serde(default = "enabled")]
    pub lookahead: bool,
    /// Master-slave with lookahead: how far the network's straight-line
    /// extrapolation of a moving node may be from the plant's position
    /// before a sync is needed; 0 (the default) syncs every period.
    #[serde(default, skip_serializing_if = "Metres::is_zero")]
    pub position_tolerance: Metres,
    /// Event-driven over ns-3: announce each event-triggered controller's
    /// answers to the network as a rule, so that it runs ahead instead of
    /// stopping at every answer (docs/cosimulation.md). Results are
    /// byte-identical either way; `false` stops at every answer. Left out
    /// of the serialized scenario when `true`, so that the config hash and
    /// summary.json of scenarios that do not set it stay as they were.
    #[serde(default = "enabled", skip_serializing_if = "is_enabled")]
    pub rules: bool,
}

fn enabled() -> bool {
    true
}

fn is_enabled(value: &bool) -> bool {
    *value
}

/// Which network carries the loops' packets.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NetworkConfig {
    pub backend: Backend,
    /// Settings of the ns-3 network; needed when `backend = "ns3"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns3: Option<Ns3NetworkConfig>,
    /// Settings of the builtin channel; needed when `backend = "builtin"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<BuiltinConfig>,
    /// How to start and talk to the ns-3 server.
    #[serde(default)]
    pub server: ServerConfig,
    /// Radio of wifi and wave nodes (lte: propagation only). This table
    /// and the three below are the server's schema's shared tables
    /// ([`TableConfig`]): read by [`take_shared_tables`], never by serde.
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub radio: Option<TableConfig>,
    /// Where nodes are at t = 0.
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub placement: Option<TableConfig>,
    /// Extra nodes loading the channel.
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub background: Option<TableConfig>,
    /// ns-3 trace files in the run directory.
    #[serde(skip_deserializing, skip_serializing_if = "Option::is_none")]
    pub traces: Option<TableConfig>,
}

impl NetworkConfig {
    /// Whether `[network.traces]` turns a trace file on.
    pub fn wants_traces(&self) -> bool {
        self.traces.as_ref().is_some_and(TableConfig::any_file)
    }

    /// Reads the shared tables [`take_shared_tables`] took, against this
    /// checkout's schema ([`crate::network_schema::standard`]): the tables
    /// are the ns3-scenarios library's, which a server of other kinds
    /// shares.
    ///
    /// # Errors
    /// The first bad key, named `network.<table>.<key>`.
    pub fn read_shared_tables(
        &mut self,
        tables: Vec<(String, toml::Value)>,
    ) -> Result<(), ScenarioError> {
        let standard = crate::network_schema::standard();
        for (name, value) in tables {
            let schema = standard
                .table(&name)
                .expect("take_shared_tables takes the schema's tables");
            let config = Some(TableConfig::new(
                std::sync::Arc::new(schema.clone()),
                &value,
            )?);
            match name.as_str() {
                "radio" => self.radio = config,
                "placement" => self.placement = config,
                "background" => self.background = config,
                "traces" => self.traces = config,
                other => {
                    return Err(bad(
                        KeyPath::from("network").and(other),
                        format!("this netloop has no place for the server's table `{other}`"),
                    ))
                }
            }
        }
        Ok(())
    }

    /// How many nodes the network has, one rule for loop and graph
    /// scenarios: the backend's table must be there; an ns-3 kind derives
    /// or is told its count, refuses a node past it (`first_past(nodes)`:
    /// the key that puts something on the first such node, and the node),
    /// and checks its arguments, and a custom kind needs its program; the
    /// builtin channel has the nodes up to the `highest` used.
    ///
    /// # Errors
    /// The first bad key.
    pub(crate) fn node_count(
        &self,
        highest: u32,
        first_past: impl FnOnce(u32) -> Option<(KeyPath, u32)>,
    ) -> Result<u32, ScenarioError> {
        match (&self.backend, &self.ns3) {
            (Backend::Ns3, None) => Err(bad(
                "network.ns3",
                "backend = \"ns3\" needs a [network.ns3] table",
            )),
            (Backend::Builtin, _) if self.builtin.is_none() => Err(bad(
                "network.builtin",
                "backend = \"builtin\" needs a [network.builtin] table",
            )),
            (Backend::Ns3, Some(ns3)) => {
                let nodes = ns3.node_count(highest);
                ns3.validate_node_count(nodes)?;
                if let Some((key, node)) = first_past(nodes) {
                    return Err(bad(
                        key,
                        format!(
                            "node {node} is out of range: the {} network has {nodes} nodes (0..{})",
                            ns3.kind_name(),
                            nodes - 1
                        ),
                    ));
                }
                ns3.validate(&self.extras(), nodes)?;
                if matches!(ns3, Ns3NetworkConfig::Custom(_)) && self.server.binary.is_none() {
                    return Err(bad(
                        "network.server.binary",
                        "kind = \"custom\" runs your own ns-3 program: give its path (see ns3-scenarios/README.md)",
                    ));
                }
                Ok(nodes)
            }
            _ => Ok(highest + 1),
        }
    }

    pub(crate) fn extras(&self) -> ns3::NetworkExtras<'_> {
        ns3::NetworkExtras {
            radio: self.radio.as_ref(),
            placement: self.placement.as_ref(),
            background: self.background.as_ref(),
            traces: self.traces.as_ref(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Backend {
    Ns3,
    Builtin,
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Backend::Ns3 => "ns3",
            Backend::Builtin => "builtin",
        })
    }
}

/// The server process: binary, timeouts, extra arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerConfig {
    /// Path to `netloop-server` (or a custom program), relative to the
    /// scenario file; default `$NETLOOP_NS3_SERVER`, the build tree, or `PATH`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<std::path::PathBuf>,
    /// Start-up to completed handshake.
    #[serde(default = "default_connect_timeout", with = "protocol::duration")]
    pub connect_timeout: SimTime,
    /// Wall-clock limit for each answer of the server.
    #[serde(default = "default_step_timeout", with = "protocol::duration")]
    pub step_timeout: SimTime,
    /// Extra ns-3 command-line arguments, passed verbatim (`--ns3::...=...`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Typed parameters of the program, each passed as `--name=value`
    /// (sorted by name, before `args`): unlike `args`, one can be swept on
    /// its own (`network.server.params.loss = [0.0, 0.1]`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub params: BTreeMap<String, ServerParam>,
    /// The socket the bridge and its server talk over (same wire format).
    #[serde(default, skip_serializing_if = "Transport::is_default")]
    pub transport: Transport,
    /// How long each side polls for the other's answer before it blocks
    /// (at most [`MAX_SPIN_WAIT`]); 0 blocks at once. Same bytes either way.
    #[serde(
        default,
        with = "protocol::duration",
        skip_serializing_if = "is_zero_time"
    )]
    pub spin_wait: SimTime,
}

fn is_zero_time(t: &SimTime) -> bool {
    *t == SimTime::ZERO
}

/// The longest `[network.server] spin_wait`: past a millisecond a blocking
/// wait's wake-up costs nothing by comparison, and the spin only burns a core.
pub const MAX_SPIN_WAIT: SimTime = SimTime::from_millis(1);

/// `[network.server] transport` (defined by the ns-3 client).
pub use netloop_ns3_client::Transport;

/// A value of `[network.server] params`: what a command-line flag can hold.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ServerParam {
    Bool(bool),
    Integer(i64),
    Float(f64),
    Text(String),
}

impl fmt::Display for ServerParam {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ServerParam::Bool(b) => write!(f, "{b}"),
            ServerParam::Integer(i) => write!(f, "{i}"),
            // Rust's shortest round-trip form: 0.1, 1e-7; ns-3 parses both.
            ServerParam::Float(x) => write!(f, "{x}"),
            ServerParam::Text(t) => f.write_str(t),
        }
    }
}

fn default_connect_timeout() -> SimTime {
    SimTime::from_secs(30)
}

fn default_step_timeout() -> SimTime {
    SimTime::from_secs(300)
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            binary: None,
            connect_timeout: default_connect_timeout(),
            step_timeout: default_step_timeout(),
            args: Vec::new(),
            params: BTreeMap::new(),
            transport: Transport::default(),
            spin_wait: SimTime::ZERO,
        }
    }
}

/// One loop: its control side (as in controlsim) and its place in the network.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LoopScenario {
    pub name: String,
    /// Node of the plant, its sensor and its actuator; default `2 i`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plant_node: Option<u32>,
    /// Node of the controller; default `2 i + 1`. Equal to `plant_node`
    /// means local control: no packets on the uplink and downlink.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_node: Option<u32>,
    /// How an event-triggered, solver-integrated controller answers a packet
    /// (docs/design.md §4.4): `direct` (its output at the packet's arrival) or
    /// `rollback` (its output one solver step after the arrival, computed and
    /// rolled back).
    #[serde(default)]
    pub response: ResponseKind,
    /// Sensor -> controller.
    #[serde(default)]
    pub uplink: FlowConfig,
    /// Controller -> actuator.
    #[serde(default)]
    pub downlink: FlowConfig,
    /// Predecessor's vehicle -> this controller: the CACC feed-forward (the
    /// predecessor's acceleration), sent at this loop's sensor instants.
    #[serde(default)]
    pub feedforward: FlowConfig,
    /// How the plant's position and speed move its node in the network.
    #[serde(default)]
    pub mobility: MobilityConfig,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predecessor: Option<LoopRef>,
    pub plant: PlantConfig,
    pub sensor: SensorConfig,
    #[serde(default)]
    pub actuator: ActuatorConfig,
    pub controller: ControllerConfig,
    #[serde(default, skip_serializing_if = "References::is_empty")]
    pub reference: References,
    /// Set points and cost weights of the loop's control metrics.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<crate::metrics::loops::LoopMetricsConfig>,
}

/// One direction of a loop over the network, and the receiver's policies.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowConfig {
    /// Destination port; default 9000 + 3 i (uplink), 9001 + 3 i (downlink),
    /// 9002 + 3 i (feed-forward).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Payload bytes of each packet; default 64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// One packet per value (same number, `StateNumTag` set) instead of one
    /// packet per sample.
    #[serde(default)]
    pub multi_packet: bool,
    /// `udp` (default) or `tcp` (ns-3 only: a reliable byte stream, so no
    /// loss, but head-of-line blocking shows up as delay).
    #[serde(default)]
    pub transport: TransportKind,
    /// Drop a packet whose delay exceeds this.
    #[serde(
        default,
        with = "protocol::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_delay: Option<SimTime>,
    /// Drop a packet whose number is not above the last accepted one.
    #[serde(default)]
    pub drop_stale: bool,
    /// Downlink only: what the actuator does when a control packet is lost
    /// or dropped: keep the last value (`hold`) or apply zero (`zero`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_loss: Option<OnLoss>,
}

/// Plant-driven mobility: a plant with a position moves its node to
/// `origin + position * heading` with velocity `speed * heading`, in metres
/// and m/s, at every sync. The position and speed are a vehicle's own, or
/// the plant states named by `position` and `velocity`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MobilityConfig {
    /// Where the node is when the plant's position is zero.
    #[serde(default)]
    pub origin: [f64; 3],
    /// Direction of travel; normalised. Default: along x.
    #[serde(default = "default_heading")]
    pub heading: [f64; 3],
    /// Set to false to keep the node where the network placed it.
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The plant state that is the position along `heading`, metres, by
    /// name (a cart's `x`, a ball's `h`); default: the plant's own (vehicles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// The plant state that is the speed along `heading`, m/s; default: the
    /// plant's own, or none (the node rests between syncs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<String>,
    /// A declared bound on the plant's speed along `heading`, m/s, for
    /// `[sync] position_tolerance` where netloop derives none from the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_speed: Option<f64>,
    /// A declared bound on the plant's acceleration along `heading`, m/s²
    /// (the derivative of the `velocity` state), as `max_speed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_acceleration: Option<f64>,
}

fn default_heading() -> [f64; 3] {
    [1.0, 0.0, 0.0]
}

fn yes() -> bool {
    true
}

impl Default for MobilityConfig {
    fn default() -> Self {
        MobilityConfig {
            origin: [0.0; 3],
            heading: default_heading(),
            enabled: true,
            position: None,
            velocity: None,
            max_speed: None,
            max_acceleration: None,
        }
    }
}

/// A problem at a key, not yet located: the one keyed error of loading.
pub use crate::keyed::{KeyPath, ScenarioError};

/// A problem at `key` (a literal dotted path, or one built from its parts).
pub(crate) fn bad(key: impl Into<KeyPath>, message: impl Into<String>) -> ScenarioError {
    ScenarioError::new(key, message)
}

/// Most nodes a network may have, and one above the highest node index:
/// the wireless networks address their nodes (control, background and sink)
/// in one /16 subnet, which has 65 534 host addresses. The same bound holds
/// for every backend so that a scenario means the same on each.
pub const MAX_NODES: u32 = 65_534;

/// The last instant a run can reach: 2^63 - 1 ns (about 292 years), the
/// largest ns-3 time. `duration`, and `duration` plus a builtin delay
/// parameter, must not pass it, so that no arrival time can overflow.
pub const LAST_TIME: SimTime = SimTime(i64::MAX as u64);
/// [`LAST_TIME`] in words, for messages.
pub const LAST_TIME_TEXT: &str = "2^63 - 1 ns (about 292 years, the largest ns-3 time)";

/// Payload bytes when a flow does not say.
pub const DEFAULT_PAYLOAD: u32 = 64;
/// First default port; loop i uses BASE + 3i (uplink), BASE + 3i + 1
/// (downlink) and BASE + 3i + 2 (feed-forward).
pub const DEFAULT_BASE_PORT: u16 = 9000;

/// A checked scenario: the scenario as written (what is hashed, summarised
/// and starts the network) and the run the co-simulation core takes
/// (netloop-cosim's [`ResolvedRun`], whose fields it derefs to, so that
/// `resolved.system` or `resolved.loops` read as before).
#[derive(Clone, Debug)]
pub struct Resolved {
    pub scenario: Scenario,
    pub run: ResolvedRun,
}

impl std::ops::Deref for Resolved {
    type Target = ResolvedRun;

    fn deref(&self) -> &ResolvedRun {
        &self.run
    }
}

impl std::ops::DerefMut for Resolved {
    fn deref_mut(&mut self) -> &mut ResolvedRun {
        &mut self.run
    }
}

/// Takes the shared tables (`[network.radio]`, ... : the schema's
/// [`crate::network_schema::TableSchema`]s) out of a scenario's tree, for
/// [`NetworkConfig::read_shared_tables`].
pub(crate) fn take_shared_tables(table: &mut toml::Table) -> Vec<(String, toml::Value)> {
    let Some(network) = table.get_mut("network").and_then(|n| n.as_table_mut()) else {
        return Vec::new();
    };
    crate::network_schema::standard()
        .tables
        .iter()
        .filter_map(|t| network.remove(&t.name).map(|v| (t.name.clone(), v)))
        .collect()
}

/// Takes `[network.ns3]` out of a scenario's tree unless its `kind` is
/// `custom` (the one kind serde reads): its kind and its other keys, which
/// a schema reads ([`DescribedConfig`]).
pub(crate) fn take_described_kind(table: &mut toml::Table) -> Option<(String, toml::Table)> {
    let network = table.get_mut("network")?.as_table_mut()?;
    let kind = network.get("ns3")?.get("kind")?.as_str()?.to_string();
    if kind == CUSTOM_KIND {
        return None;
    }
    let mut keys = network.remove("ns3")?.as_table()?.clone();
    keys.remove("kind");
    Some((kind, keys))
}

/// The keys of a run of either scenario kind, one rule for both: the step,
/// the duration on its grid (longer than zero, at most the last time), and
/// seed and run from 1. The step size and the number of steps.
///
/// # Errors
/// The first bad key.
pub(crate) fn check_run_keys(
    step: SimTime,
    duration: SimTime,
    seed: u64,
    run: u64,
) -> Result<(StepSize, u64), ScenarioError> {
    let step = StepSize::new(step).map_err(|e| bad("step", e.to_string()))?;
    let end_step = step
        .steps_in(duration)
        .map_err(|e| bad("duration", e.to_string()))?;
    if end_step == 0 {
        return Err(bad("duration", "must be longer than zero"));
    }
    if duration > LAST_TIME {
        return Err(bad("duration", format!("must be at most {LAST_TIME_TEXT}")));
    }
    // One rule for both backends: ns-3 refuses seed 0 (RngSeedManager::SetSeed).
    if seed == 0 {
        return Err(bad(
            "seed",
            "must be at least 1 (ns-3 refuses seed 0, and the builtin backend follows it)",
        ));
    }
    if run == 0 {
        return Err(bad(
            "run",
            "must be at least 1: replications are numbered from 1",
        ));
    }
    Ok((step, end_step))
}

impl Scenario {
    /// Reads a scenario from TOML text as a scenario file is read
    /// ([`crate::scenario_file::deserialize_with_overrides`]: the same
    /// checks, the same located errors), without resolving it; relative
    /// paths are taken from the working directory. As for a file, an ns-3
    /// kind this checkout's schema lacks is described by the scenario's
    /// server (`--describe`, which runs it).
    ///
    /// # Errors
    /// The first problem, at its key and line.
    pub fn from_toml(text: &str) -> Result<Self, crate::scenario_file::LoadError> {
        crate::scenario_file::deserialize_with_overrides(
            std::path::Path::new("<scenario text>"),
            text,
            &[],
            |s: &mut Scenario| Some(&mut s.network),
        )
    }

    /// Seed of the control side's random streams (sensor noise) for this
    /// replication. Replications change the run number, not the seed (as in
    /// ns-3), and the control side follows the run number too: run 1 uses
    /// `seed` itself, run r uses `seed ^ (r - 1) * 0xD1B54A32D192ED03` (an odd
    /// constant, so every run number gives a different seed). ns-3 gets `seed`
    /// and `run` as they are; the builtin channel mixes `run` in its own way.
    pub fn control_seed(&self) -> u64 {
        self.seed ^ self.run.wrapping_sub(1).wrapping_mul(0xD1B5_4A32_D192_ED03)
    }

    /// Checks what serde cannot and splits the scenario.
    ///
    /// # Errors
    /// The first problem, naming its key.
    pub fn resolve(&self) -> Result<Resolved, ScenarioError> {
        let (step, end_step) = check_run_keys(self.step, self.duration, self.seed, self.run)?;
        for (name, timeout) in [
            ("connect_timeout", self.network.server.connect_timeout),
            ("step_timeout", self.network.server.step_timeout),
        ] {
            if timeout == SimTime::ZERO {
                return Err(bad(
                    KeyPath::from("network.server").and(name),
                    "must be longer than zero",
                ));
            }
        }
        if self.network.server.spin_wait > MAX_SPIN_WAIT {
            return Err(bad(
                "network.server.spin_wait",
                "at most 1ms: a longer spin only burns the core",
            ));
        }
        for (name, value) in &self.network.server.params {
            let key = KeyPath::from("network.server.params").and(name);
            let valid_name = !name.is_empty()
                && !name.starts_with('-')
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | ':' | '.'));
            if !valid_name {
                return Err(bad(
                    key,
                    "is not a command-line flag name: letters, digits, `_`, `-`, `:` and `.`, not starting with `-`",
                ));
            }
            if matches!(name.as_str(), "seed" | "run") {
                return Err(bad(
                    key,
                    "netloop passes --seed and --run itself: set the scenario's `seed` and `run`",
                ));
            }
            if let ServerParam::Float(x) = value {
                if !x.is_finite() {
                    return Err(bad(key, "must be a finite number"));
                }
            }
        }
        if !self.sync.position_tolerance.is_zero() && self.sync.scheme != SchemeKind::MasterSlave {
            return Err(bad(
                "sync.position_tolerance",
                format!(
                    "applies to master_slave sync only, not to {}",
                    self.sync.scheme
                ),
            ));
        }
        let sync = resolve_sync(&self.sync, step)?;
        if self.loops.is_empty() {
            return Err(bad("loops", "at least one [[loops]] table is needed"));
        }
        if self.loops.len() > controlsim::limits::MAX_LOOPS {
            return Err(bad(
                "loops",
                format!(
                    "has {} loops, more than the {} netloop allows (docs/robustness.md, limits)",
                    self.loops.len(),
                    controlsim::limits::MAX_LOOPS
                ),
            ));
        }

        let mut loops = Vec::with_capacity(self.loops.len());
        let mut system_loops = Vec::with_capacity(self.loops.len());
        let mut feedforwards = Vec::new();
        for (i, l) in self.loops.iter().enumerate() {
            let key = |k: &str| KeyPath::key("loops").at(i).and(k);
            // Bounded, so that node arithmetic (highest + 1, + background) cannot wrap.
            let default_node = |offset: usize| u32::try_from(2 * i + offset).unwrap_or(u32::MAX);
            let plant_node = l.plant_node.unwrap_or(default_node(0));
            let controller_node = l.controller_node.unwrap_or(default_node(1));
            for (name, node, set) in [
                ("plant_node", plant_node, l.plant_node.is_some()),
                (
                    "controller_node",
                    controller_node,
                    l.controller_node.is_some(),
                ),
            ] {
                if node >= MAX_NODES {
                    let why = if set {
                        ""
                    } else {
                        " (the default 2 i or 2 i + 1 of this loop)"
                    };
                    return Err(bad(
                        key(name),
                        format!(
                            "node {node}{why} is out of range: node indices go up to {}",
                            MAX_NODES - 1
                        ),
                    ));
                }
            }
            let base = DEFAULT_BASE_PORT as u32 + 3 * i as u32;
            let uplink = resolve_flow(&l.uplink, &key("uplink"), base, false)?;
            let downlink = resolve_flow(&l.downlink, &key("downlink"), base + 1, true)?;
            let feedforward_flow =
                resolve_flow(&l.feedforward, &key("feedforward"), base + 2, false)?;
            let mobility = resolve_mobility(&l.mobility, &key("mobility"))?;
            if l.response == ResponseKind::Rollback {
                let continuous = matches!(
                    l.controller,
                    ControllerConfig::StateSpace(_)
                        | ControllerConfig::TransferFunction(_)
                        | ControllerConfig::Equations(_)
                );
                // An FMU controller rolls back with its FMU state: whether it
                // can is checked once its path is resolved (crate::fmu_checks).
                let fmu = matches!(l.controller, ControllerConfig::Fmu(_));
                if !continuous && !fmu {
                    return Err(bad(
                        key("response"),
                        "\"rollback\" needs a solver-integrated controller (kind = \"state_space\", \"transfer_function\" or \"equations\") or an FMU controller",
                    ));
                }
                if l.controller.timing().trigger != TriggerKind::Event {
                    return Err(bad(
                        key("response"),
                        "\"rollback\" is for event-triggered controllers (trigger = \"event\")",
                    ));
                }
            }
            loops.push(LoopNetwork {
                plant_node,
                controller_node,
                response: l.response,
                uplink,
                downlink,
                feedforward: None,
                mobility,
            });
            if matches!(l.controller, ControllerConfig::Cacc(_)) {
                feedforwards.push((i, l.predecessor.clone(), feedforward_flow));
            }
            system_loops.push(LoopConfig {
                name: l.name.clone(),
                predecessor: l.predecessor.clone(),
                plant: l.plant.clone(),
                sensor: l.sensor.clone(),
                actuator: l.actuator.clone(),
                controller: l.controller.clone(),
                reference: l.reference.clone(),
            });
        }

        // A CACC follower hears its predecessor over the network unless the
        // predecessor's vehicle is the controller's own node.
        for (i, predecessor, flow) in feedforwards {
            let p = match predecessor {
                Some(LoopRef::Index(p)) if p < loops.len() => p,
                Some(LoopRef::Name(name)) => match self.loops.iter().position(|l| l.name == name) {
                    Some(p) => p,
                    // controlsim names the bad reference when it builds the system.
                    None => continue,
                },
                _ => continue,
            };
            let src = loops[p].plant_node;
            if src != loops[i].controller_node {
                loops[i].feedforward = Some(Feedforward { src, flow });
            }
        }

        // Ports: unique per destination node.
        let mut used: BTreeMap<(u32, u16), KeyPath> = BTreeMap::new();
        for (i, l) in loops.iter().enumerate() {
            let mut streams = Vec::new();
            if !l.is_local() {
                streams.push(("uplink", l.controller_node, l.uplink.port));
                streams.push(("downlink", l.plant_node, l.downlink.port));
            }
            if let Some(ff) = &l.feedforward {
                streams.push(("feedforward", l.controller_node, ff.flow.port));
            }
            for (dir, dst, port) in streams {
                let key = KeyPath::key("loops").at(i).and(dir).and("port");
                if let Some(other) = used.insert((dst, port), key.clone()) {
                    return Err(bad(
                        key,
                        format!("port {port} on node {dst} is already used by {other}"),
                    ));
                }
            }
        }

        if self.network.backend == Backend::Builtin {
            for (i, l) in loops.iter().enumerate() {
                let flows = [
                    ("uplink", Some(&l.uplink)),
                    ("downlink", Some(&l.downlink)),
                    ("feedforward", l.feedforward.as_ref().map(|f| &f.flow)),
                ];
                if let Some((dir, _)) = flows
                    .iter()
                    .find(|(_, f)| f.is_some_and(|f| f.transport == TransportKind::Tcp))
                {
                    return Err(bad(
                        KeyPath::key("loops").at(i).and(dir).and("transport"),
                        "tcp needs the ns3 backend: the builtin channel models independent packets",
                    ));
                }
            }
        }

        let highest = loops
            .iter()
            .map(|l| l.plant_node.max(l.controller_node))
            .max()
            .unwrap_or(0);
        let node_count = self.network.node_count(highest, |nodes| {
            let (i, l) = loops
                .iter()
                .enumerate()
                .find(|(_, l)| l.plant_node.max(l.controller_node) >= nodes)?;
            let which = if l.plant_node >= nodes {
                "plant_node"
            } else {
                "controller_node"
            };
            let key = KeyPath::key("loops").at(i).and(which);
            Some((key, l.plant_node.max(l.controller_node)))
        })?;

        let system = SystemConfig {
            step: self.step,
            solver: self.solver,
            loops: system_loops,
        };
        Ok(Resolved {
            scenario: self.clone(),
            run: ResolvedRun {
                system,
                loops,
                end_step,
                sync,
                computation_delay: self.sync.computation_delay,
                node_count,
            },
        })
    }
}

pub(crate) fn resolve_flow(
    flow: &FlowConfig,
    key: &KeyPath,
    default_port: u32,
    downlink: bool,
) -> Result<ResolvedFlow, ScenarioError> {
    let port = match flow.port {
        Some(0) => {
            return Err(bad(
                key.child("port"),
                "port 0 is not a valid destination port",
            ))
        }
        Some(p) => p,
        None => u16::try_from(default_port).map_err(|_| {
            bad(
                key.child("port"),
                "too many loops for default ports; set ports explicitly",
            )
        })?,
    };
    let size = flow.size.unwrap_or(DEFAULT_PAYLOAD);
    if size == 0 || size > 65_507 {
        return Err(bad(
            key.child("size"),
            format!("{size} bytes: a UDP payload must be 1..=65507 bytes"),
        ));
    }
    if !downlink && flow.on_loss.is_some() {
        return Err(bad(
            key.child("on_loss"),
            "on_loss is an actuator policy: set it on the downlink",
        ));
    }
    Ok(ResolvedFlow {
        port,
        size,
        multi_packet: flow.multi_packet,
        transport: flow.transport,
        max_delay: flow.max_delay,
        drop_stale: flow.drop_stale,
        on_loss: flow.on_loss.unwrap_or_default(),
    })
}

/// Checks a `mobility` table (a loop's or a graph component's) at `key`.
pub(crate) fn resolve_mobility(
    m: &MobilityConfig,
    key: &KeyPath,
) -> Result<Option<Mobility>, ScenarioError> {
    if !m.enabled {
        return Ok(None);
    }
    let norm = m.heading.iter().map(|x| x * x).sum::<f64>().sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return Err(bad(
            key.child("heading"),
            "must be a non-zero direction, e.g. [1.0, 0.0, 0.0]",
        ));
    }
    if m.origin.iter().any(|x| !x.is_finite()) {
        return Err(bad(key.child("origin"), "must be finite"));
    }
    if m.velocity.is_some() && m.position.is_none() {
        return Err(bad(
            key.child("velocity"),
            "needs `position` too: name the state that is the position",
        ));
    }
    for (name, value) in [
        ("max_speed", m.max_speed),
        ("max_acceleration", m.max_acceleration),
    ] {
        if value.is_some_and(|x| !x.is_finite() || x < 0.0) {
            return Err(bad(
                key.child(name),
                "must be a finite number, not negative",
            ));
        }
    }
    let placed = m.origin != [0.0; 3] || m.heading != default_heading();
    Ok(Some(Mobility {
        origin: m.origin,
        heading: m.heading.map(|x| x / norm),
        position: m.position.clone(),
        velocity: m.velocity.clone(),
        placed,
        max_speed: m.max_speed,
        max_acceleration: m.max_acceleration,
    }))
}
