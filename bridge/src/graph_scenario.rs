//! Graph scenarios: `[[components]]` and `[[connections]]` instead of
//! `[[loops]]` (issue 11). Components sit on nodes; a connection between
//! components on different nodes is a network flow (see
//! [`crate::graph_flows`]), which needs a `[network]` and a `[sync]` table.
//!
//! A component is one of the kinds controlsim has, written as the table of
//! the same name a loop has: `plant`, `sensor`, `actuator`, `controller`
//! (with an optional `reference` the law reads) or, alone, `reference` (a
//! reference component). Sizes that a kind does not fix (a sensor's
//! channels, an actuator's, a controller's measurement and output) are
//! taken from the connections: a whole port connected to a port of known
//! size has that size; a port addressed by element ranges is as long as the
//! highest element used.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::num::NonZeroU64;
use std::path::{Path, PathBuf};

use controlsim::blocks::{BlockConfig, BlockContext};
use controlsim::graph::adapters::{
    ActuatorComponent, ControllerComponent, ControllerShape, PlantComponent, ReferenceComponent,
    SensorComponent,
};
use controlsim::graph::{
    Component, Graph, GraphBuilder, GraphRecorder, NewtonSettings, PortAddress,
};
use controlsim::{
    ActuatorConfig, ConfigError, ControllerConfig, PlantConfig, PlantModel, References,
    SensorConfig, SensorSource, SolverKind, StepSize,
};
use protocol::SimTime;
use serde::{Deserialize, Serialize};

use crate::config::{NetworkConfig, OnLoss, SyncConfig, TransportKind};
use crate::graph_flows::{FlowEnds, NetworkSide};
use crate::scenario_file::{self, KeyPath, LoadError, Override, ScenarioError};

/// A graph scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GraphScenario {
    /// Simulated time to run; a multiple of `step`.
    #[serde(with = "protocol::duration")]
    pub duration: SimTime,
    #[serde(with = "protocol::duration")]
    pub step: SimTime,
    #[serde(default)]
    pub solver: SolverKind,
    /// Seeds sensor noise (sensor `components[i]` draws from stream `i`)
    /// and the network (as a loop scenario's `seed`).
    #[serde(default = "one")]
    pub seed: u64,
    /// Replication number of the network, from 1 (as a loop scenario's `run`).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub run: u64,
    /// Write every n-th step to `timeseries.csv`; at least 1 by its type.
    #[serde(
        default = "crate::config::every_step",
        deserialize_with = "crate::config::steps_at_least_one"
    )]
    pub record_every: NonZeroU64,
    /// How algebraic loops are treated; default: they are errors.
    #[serde(default)]
    pub algebraic_loops: AlgebraicLoops,
    /// How the control side and the network are synchronised; needed with
    /// a `[network]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sync: Option<SyncConfig>,
    /// The network that carries the flows between nodes (as in a loop
    /// scenario); without it every component must be on one node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkConfig>,
    pub components: Vec<ComponentScenario>,
    #[serde(default)]
    pub connections: Vec<ConnectionScenario>,
}

fn one() -> u64 {
    1
}

fn is_direct(r: &crate::config::ResponseKind) -> bool {
    *r == crate::config::ResponseKind::Direct
}

fn is_one(n: &u64) -> bool {
    *n == 1
}

/// A component's node: a network node index, or (without a `[network]`)
/// any name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum NodeName {
    Index(u32),
    Name(String),
}

impl std::fmt::Display for NodeName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeName::Index(i) => write!(f, "{i}"),
            NodeName::Name(n) => f.write_str(n),
        }
    }
}

/// `[algebraic_loops]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AlgebraicLoops {
    /// Solve them by Newton iteration instead of refusing them.
    #[serde(default)]
    pub solve: bool,
    /// Largest accepted max-norm of the loop's residual.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// Newton steps before the run stops with an error.
    #[serde(default = "default_iterations")]
    pub max_iterations: u32,
}

fn default_tolerance() -> f64 {
    NewtonSettings::default().tolerance
}

fn default_iterations() -> u32 {
    NewtonSettings::default().max_iterations
}

impl Default for AlgebraicLoops {
    fn default() -> Self {
        AlgebraicLoops {
            solve: false,
            tolerance: default_tolerance(),
            max_iterations: default_iterations(),
        }
    }
}

/// `[[components]]`: a name, a node, and exactly one kind table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ComponentScenario {
    pub name: String,
    /// The node it runs on: a network node index with a `[network]`, else
    /// any name; default `"local"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<NodeName>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plant: Option<PlantConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sensor: Option<SensorConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub actuator: Option<ActuatorConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller: Option<ControllerConfig>,
    #[serde(default, skip_serializing_if = "References::is_empty")]
    pub reference: References,
    /// How an event-triggered controller answers ([`crate::graph_response`]).
    #[serde(default, skip_serializing_if = "is_direct")]
    pub response: crate::config::ResponseKind,
    /// A block of the library (docs/scenario.md, "The block library").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block: Option<BlockConfig>,
    /// A subsystem file (relative to this file) whose diagram this
    /// component is ([`crate::subsystem`]); expanded when the scenario is
    /// loaded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subsystem: Option<String>,
    /// Output elements of this node's components that move the node
    /// ([`crate::graph_mobility`]); the keys of a loop's `mobility`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mobility: Option<crate::config::MobilityConfig>,
}

impl ComponentScenario {
    /// The node's name.
    pub fn node(&self) -> String {
        self.node
            .as_ref()
            .map_or_else(|| "local".to_string(), NodeName::to_string)
    }

    /// Whether it has a kind table of its own (`plant`, ..., `block`,
    /// `reference`).
    pub fn has_kind(&self) -> bool {
        self.plant.is_some()
            || self.sensor.is_some()
            || self.actuator.is_some()
            || self.controller.is_some()
            || self.block.is_some()
            || !self.reference.is_empty()
    }

    /// `plant`, `sensor`, `actuator`, `controller` or `reference`.
    pub fn kind(&self) -> &'static str {
        if self.plant.is_some() {
            "plant"
        } else if self.sensor.is_some() {
            "sensor"
        } else if self.actuator.is_some() {
            "actuator"
        } else if self.controller.is_some() {
            "controller"
        } else if self.block.is_some() {
            "block"
        } else {
            "reference"
        }
    }
}

/// `[[connections]]`. Between components on different nodes it is a
/// network flow, and the flow keys (all optional) say how it is sent and
/// received; on one node they are refused.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConnectionScenario {
    /// An output: `component.port`, `component.port[i]`, `component.port[a..b]`.
    pub from: String,
    /// An input, addressed the same way.
    pub to: String,
    /// The flow's name (packets.csv, summary.json, `on_arrival_of`, the
    /// receiving end's columns); default `flow<j>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// When a packet is sent; default `update`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trigger: Option<FlowTrigger>,
    /// `trigger = "periodic"`: the send period, a multiple of `step`.
    #[serde(
        default,
        with = "protocol::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub period: Option<SimTime>,
    /// `trigger = "periodic"`: the first send, a multiple of `step` below `period`.
    #[serde(
        default,
        with = "protocol::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub offset: Option<SimTime>,
    /// `trigger = "arrival"`: the flow whose accepted packets trigger a send.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_arrival_of: Option<String>,
    /// Destination port; default 9000 + the flow's number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u16>,
    /// Payload bytes of each packet; default 64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u32>,
    /// One packet per value instead of one per sample.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub multi_packet: Option<bool>,
    /// `udp` (default) or `tcp` (ns-3 only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transport: Option<TransportKind>,
    /// Drop a packet whose delay exceeds this.
    #[serde(
        default,
        with = "protocol::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_delay: Option<SimTime>,
    /// Drop a packet whose number is not above the last accepted one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drop_stale: Option<bool>,
    /// What the receiving end holds when a packet is lost or dropped: the
    /// last value (`hold`, default) or zero (`zero`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_loss: Option<OnLoss>,
}

/// When a flow sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FlowTrigger {
    /// At `offset + n period`, whatever the source did.
    Periodic,
    /// At every boundary where the source computed a new value.
    Update,
    /// When a packet of flow `on_arrival_of` is accepted.
    Arrival,
}

impl ConnectionScenario {
    /// The first flow key set, if any (for "not a flow" errors).
    pub fn first_flow_key(&self) -> Option<&'static str> {
        [
            ("name", self.name.is_some()),
            ("trigger", self.trigger.is_some()),
            ("period", self.period.is_some()),
            ("offset", self.offset.is_some()),
            ("on_arrival_of", self.on_arrival_of.is_some()),
            ("port", self.port.is_some()),
            ("size", self.size.is_some()),
            ("multi_packet", self.multi_packet.is_some()),
            ("transport", self.transport.is_some()),
            ("max_delay", self.max_delay.is_some()),
            ("drop_stale", self.drop_stale.is_some()),
            ("on_loss", self.on_loss.is_some()),
        ]
        .into_iter()
        .find(|(_, set)| *set)
        .map(|(k, _)| k)
    }

    /// The flow's name.
    pub fn flow_name(&self, j: usize) -> String {
        self.name.clone().unwrap_or_else(|| format!("flow{j}"))
    }
}

/// A graph scenario read, checked and built.
#[derive(Debug)]
pub struct LoadedGraph {
    pub path: PathBuf,
    pub scenario: GraphScenario,
    pub graph: Graph,
    pub end_step: u64,
    /// The flows and the network, when the scenario has a `[network]`.
    pub network: Option<NetworkSide>,
    /// A builtin network's channel, built once here and run as it is.
    pub builtin: Option<crate::network::BuiltinNetwork>,
    /// Where each component and connection was written (the scenario file
    /// or a subsystem file).
    origins: crate::subsystem::Origins,
}

impl LoadedGraph {
    /// A problem at `key` found later, located in the file (scenario or
    /// subsystem) that holds it.
    pub fn locate(&self, error: ScenarioError) -> LoadError {
        self.origins.locate(error)
    }

    /// Where each key was written, to locate problems found after the
    /// graph is handed to a run.
    pub fn origins(&self) -> &crate::subsystem::Origins {
        &self.origins
    }

    /// Asks the ns-3 server whether it accepts the network of a graph
    /// scenario with a `[network]`, as [`scenario_file::Loaded::check_network`]
    /// does for `[[loops]]` scenarios.
    ///
    /// # Errors
    /// The rejected argument's key, located.
    pub fn check_network(&self, with_server: bool) -> Result<Option<String>, LoadError> {
        let Some(side) = &self.network else {
            return Ok(None);
        };
        let base_dir = self.path.parent().unwrap_or(Path::new(""));
        scenario_file::check_network(&side.resolved, base_dir, with_server, |error| {
            self.locate(error)
        })
    }
}

/// Reads, overrides, checks and builds a graph scenario.
///
/// # Errors
/// [`LoadError`], all bad input, located at the key.
pub fn load(path: &Path, overrides: &[Override]) -> Result<LoadedGraph, LoadError> {
    let text = crate::input::read_input(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    load_text(path, &text, overrides)
}

/// [`load`] on text already read.
///
/// # Errors
/// As [`load`].
pub fn load_text(
    path: &Path,
    text: &str,
    overrides: &[Override],
) -> Result<LoadedGraph, LoadError> {
    let table = scenario_file::parse_table(path, text)?;
    load_parsed(path, text, table, overrides)
}

/// [`load_text`] of a file already parsed into `table` (by
/// [`crate::loaded_scenario::ScenarioBase`], once for all the loads of a sweep).
///
/// # Errors
/// As [`load`].
pub(crate) fn load_parsed(
    path: &Path,
    text: &str,
    table: toml::Table,
    overrides: &[Override],
) -> Result<LoadedGraph, LoadError> {
    let scenario: GraphScenario = scenario_file::deserialize_parsed(
        path,
        text,
        table,
        overrides,
        |s: &mut GraphScenario| s.network.as_mut(),
    )?;
    let (scenario, origins) = crate::subsystem::expand(path, text, overrides, scenario)?;
    let locate = |error: ScenarioError| origins.locate(error);
    let (step, end_step) = crate::config::check_run_keys(
        scenario.step,
        scenario.duration,
        scenario.seed,
        scenario.run,
    )
    .map_err(locate)?;
    let (graph, ends) = build_with_flows(&scenario).map_err(|e: ConfigError| locate(e.into()))?;
    let motions = crate::graph_mobility::node_motions(&scenario, &graph).map_err(locate)?;
    let (network, builtin) = match &scenario.network {
        None => (None, None),
        Some(network) => {
            let mut side = crate::graph_flows::resolve(&scenario, &graph, &ends, step, end_step)
                .map_err(locate)?;
            side.motions = motions;
            let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
            let builtin = scenario_file::build_builtin(
                network,
                scenario.seed,
                scenario.run,
                scenario.duration,
                &base_dir,
            )
            .map_err(locate)?;
            (Some(side), builtin)
        }
    };
    Ok(LoadedGraph {
        path: path.to_path_buf(),
        scenario,
        graph,
        end_step,
        network,
        builtin,
        origins,
    })
}

/// A port whose size is not fixed by its kind: an index into the sizes.
type Slot = usize;

/// Union-find over the free sizes, each class with its size once known.
#[derive(Default)]
struct Sizes {
    parent: Vec<Slot>,
    size: Vec<Option<usize>>,
    at_least: Vec<usize>,
}

impl Sizes {
    fn slot(&mut self, size: Option<usize>) -> Slot {
        self.parent.push(self.parent.len());
        self.size.push(size);
        self.at_least.push(0);
        self.parent.len() - 1
    }

    fn root(&mut self, mut s: Slot) -> Slot {
        while self.parent[s] != s {
            self.parent[s] = self.parent[self.parent[s]];
            s = self.parent[s];
        }
        s
    }

    fn set(&mut self, s: Slot, n: usize) {
        let r = self.root(s);
        self.size[r].get_or_insert(n);
    }

    fn join(&mut self, a: Slot, b: Slot) {
        let (ra, rb) = (self.root(a), self.root(b));
        if ra != rb {
            self.parent[rb] = ra;
            if self.size[ra].is_none() {
                self.size[ra] = self.size[rb];
            }
            self.at_least[ra] = self.at_least[ra].max(self.at_least[rb]);
        }
    }

    fn get(&mut self, s: Slot) -> Option<usize> {
        let r = self.root(s);
        self.size[r].or((self.at_least[r] > 0).then_some(self.at_least[r]))
    }
}

/// The ports of a component as far as sizes go: (name, slot, is output).
fn ports(
    c: &ComponentScenario,
    key: &KeyPath,
    step: StepSize,
    sizes: &mut Sizes,
) -> Result<Vec<(String, Slot, bool)>, ConfigError> {
    let v: Vec<(&'static str, Slot, bool)> = if let Some(b) = &c.block {
        // A block's ports all have the sizes its keys give.
        let decl = build_block(c, b, key, step, 0, 0)?.declare();
        let ports = decl.inputs.iter().map(|p| (p, false));
        let ports = ports.chain(decl.outputs.iter().map(|p| (p, true)));
        return Ok(ports
            .map(|(p, out)| (p.name.clone(), sizes.slot(Some(p.size)), out))
            .collect());
    } else if let Some(p) = &c.plant {
        let model = PlantModel::from_config(&key.child("plant"), p)?;
        let sig = model.as_plant().signature();
        let has_motion = {
            let mut x0 = vec![0.0; sig.states.len()];
            model.as_plant().initial_state(&mut x0);
            model.as_plant().kinematics(&x0).is_some()
        };
        let mut v = vec![
            ("u", sizes.slot(Some(sig.inputs.len())), false),
            ("y", sizes.slot(Some(sig.outputs.len())), true),
        ];
        if has_motion {
            v.push(("motion", sizes.slot(Some(4)), true));
        }
        v
    } else if let Some(s) = &c.sensor {
        match s.source {
            SensorSource::Plant => {
                let y = sizes.slot(None);
                vec![("y", y, false), ("y", y, true)]
            }
            SensorSource::Radar => vec![
                ("own", sizes.slot(Some(4)), false),
                ("ahead", sizes.slot(Some(4)), false),
                ("y", sizes.slot(Some(4)), true),
            ],
        }
    } else if c.actuator.is_some() {
        let u = sizes.slot(None);
        vec![("u", u, false), ("u", u, true)]
    } else if let Some(ctrl) = &c.controller {
        let (m, u) = controller_sizes(ctrl, c.reference.0.len());
        let mut v = vec![
            ("measurement", sizes.slot(m), false),
            ("u", sizes.slot(u), true),
        ];
        if matches!(ctrl, ControllerConfig::Cacc(_)) {
            v.push(("extra", sizes.slot(Some(1)), false));
        }
        v
    } else {
        vec![("r", sizes.slot(Some(c.reference.0.len())), true)]
    };
    Ok(v.into_iter()
        .map(|(n, s, o)| (n.to_string(), s, o))
        .collect())
}

/// Builds the block of component `c` (key `components[i]`).
fn build_block(
    _c: &ComponentScenario,
    b: &BlockConfig,
    key: &KeyPath,
    step: StepSize,
    seed: u64,
    stream: u64,
) -> Result<Box<dyn Component>, ConfigError> {
    controlsim::blocks::build(&key.child("block"), b, BlockContext { step, seed, stream })
}

/// The measurement and output sizes a controller's own keys fix, if any:
/// the shape of its gains, a SISO law's one output.
fn controller_sizes(c: &ControllerConfig, references: usize) -> (Option<usize>, Option<usize>) {
    let rows = |m: &Vec<Vec<f64>>| m.len();
    let cols = |m: &Vec<Vec<f64>>| m.first().map(Vec::len);
    match c {
        ControllerConfig::StateFeedback(c) => (cols(&c.k), Some(rows(&c.k))),
        ControllerConfig::Observer(c) => (c.c.as_ref().map(rows), Some(rows(&c.k))),
        ControllerConfig::Cacc(_) => (Some(4), Some(1)),
        ControllerConfig::Pid(_) | ControllerConfig::TransferFunction(_) => (None, Some(1)),
        ControllerConfig::StateSpace(c) => (None, Some(rows(&c.c))),
        ControllerConfig::OpenLoop(_) => (None, (references > 0).then_some(references)),
        // The model's inputs and outputs; the connections size the ports.
        ControllerConfig::Equations(_) => (None, None),
        // The variables named in the scenario, if it names them; otherwise
        // the connections size the ports.
        ControllerConfig::Fmu(c) => (
            c.measurements.as_ref().map(Vec::len),
            c.outputs.as_ref().map(Vec::len),
        ),
    }
}

/// Builds the graph of a scenario.
///
/// # Errors
/// [`ConfigError`] keyed `components[i]...`, `connections[j].from|to`.
pub fn build(s: &GraphScenario) -> Result<Graph, ConfigError> {
    build_with_flows(s).map(|(graph, _)| graph)
}

/// Builds the graph of a scenario with a receiving end ([`controlsim::graph::Inlet`])
/// in place of every connection between nodes; returns the graph and those
/// connections' ends.
///
/// # Errors
/// As [`build`]; also a connection between nodes without a `[network]`,
/// flow keys on a connection within a node, and a node that is not a
/// network node index.
pub fn build_with_flows(s: &GraphScenario) -> Result<(Graph, Vec<FlowEnds>), ConfigError> {
    let step = StepSize::new(s.step).map_err(|source| ConfigError::Time {
        key: "step".into(),
        source,
    })?;
    if s.components.is_empty() {
        return Err(ConfigError::Invalid {
            key: "components".into(),
            reason: "needs at least one component".into(),
        });
    }
    // Exactly one kind per component.
    for (i, c) in s.components.iter().enumerate() {
        if c.subsystem.is_some() {
            return Err(ConfigError::Invalid {
                key: KeyPath::key("components").at(i).and("subsystem"),
                reason:
                    "a subsystem is expanded when the scenario is loaded (graph_scenario::load)"
                        .into(),
            });
        }
        let kinds = [
            c.plant.is_some(),
            c.sensor.is_some(),
            c.actuator.is_some(),
            c.controller.is_some(),
            c.block.is_some(),
        ]
        .iter()
        .filter(|&&b| b)
        .count();
        crate::graph_response::check_kind(i, c)?;
        let alone_reference = kinds == 0 && !c.reference.is_empty();
        if kinds > 1
            || (kinds == 0 && !alone_reference)
            || (kinds == 1 && c.controller.is_none() && !c.reference.is_empty())
        {
            return Err(ConfigError::Invalid {
                key: KeyPath::key("components").at(i),
                reason: "a component is one of `plant`, `sensor`, `actuator`, `controller` (with an optional \
                         `reference`), `block`, `reference` alone, or a `subsystem` file"
                    .into(),
            });
        }
    }
    // Sizes from the connections.
    let mut sizes = Sizes::default();
    let mut port_slots = Vec::with_capacity(s.components.len());
    for (i, c) in s.components.iter().enumerate() {
        port_slots.push(ports(
            c,
            &KeyPath::key("components").at(i),
            step,
            &mut sizes,
        )?);
    }
    let index: BTreeMap<&str, usize> = s
        .components
        .iter()
        .enumerate()
        .map(|(i, c)| (c.name.as_str(), i))
        .collect();
    let find = |addr: &PortAddress, output: bool| -> Option<Slot> {
        let &i = index.get(addr.component.as_str())?;
        port_slots[i]
            .iter()
            .find(|(n, _, o)| *n == addr.port && *o == output)
            .map(|p| p.1)
    };
    if s.network.is_some() {
        if let Some((i, _)) = s
            .components
            .iter()
            .enumerate()
            .find(|(_, c)| !matches!(c.node, Some(NodeName::Index(_))))
        {
            return Err(ConfigError::Invalid {
                key: KeyPath::key("components").at(i).and("node"),
                reason:
                    "with a [network], every component's node is a network node index (0, 1, ...)"
                        .into(),
            });
        }
    }
    let mut flow_connections = Vec::new();
    let mut names_from: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (j, conn) in s.connections.iter().enumerate() {
        let (Ok(from), Ok(to)) = (PortAddress::parse(&conn.from), PortAddress::parse(&conn.to))
        else {
            continue;
        };
        let (Some(fs), Some(ts)) = (find(&from, true), find(&to, false)) else {
            continue;
        };
        let (fi, ti) = (index[from.component.as_str()], index[to.component.as_str()]);
        // A sensor measures what it reads where it is (a roadside radar, a
        // camera beside the plant): its input is never a flow, whichever
        // node the sensor's radio is on; its samples leave from there.
        let measured = s.network.is_some() && s.components[ti].sensor.is_some();
        if measured {
            if let Some(key) = conn.first_flow_key() {
                return Err(ConfigError::Invalid {
                    key: KeyPath::key("connections").at(j).and(key),
                    reason: format!(
                        "is a flow key, but `{}` is a sensor: what it reads is its measurement, taken \
                         where it is, not a network flow (its outputs' connections to other nodes are)",
                        to.component
                    ),
                });
            }
            // What a sensor measures is physical; a controller's or another
            // sensor's output elsewhere is data, which travels as a flow.
            let source = &s.components[fi];
            if source.node() != s.components[ti].node()
                && (source.controller.is_some() || source.sensor.is_some())
            {
                return Err(ConfigError::Invalid {
                    key: KeyPath::key("connections").at(j).and("from"),
                    reason: format!(
                        "`{}` is a sensor on node `{}` and reads what is where it is; `{}` on node `{}` \
                         computes data, not a physical quantity: send it as a flow to a component on \
                         the sensor's node",
                        to.component,
                        s.components[ti].node(),
                        from.component,
                        source.node()
                    ),
                });
            }
        } else if s.components[fi].node() != s.components[ti].node() {
            if s.network.is_none() {
                return Err(ConfigError::Invalid {
                    key: KeyPath::key("connections").at(j).and("to"),
                    reason: format!(
                        "`{}` is on node `{}` and `{}` on node `{}`: a connection between nodes is a network flow, \
                         which needs a [network] (and a [sync]) table; or put both on one node",
                        from.component,
                        s.components[fi].node(),
                        to.component,
                        s.components[ti].node()
                    ),
                });
            }
            flow_connections.push(j);
        } else if let Some(key) = conn.first_flow_key() {
            return Err(ConfigError::Invalid {
                key: KeyPath::key("connections").at(j).and(key),
                reason: format!(
                    "is a flow key, but `{}` and `{}` are both on node `{}`: only a connection between nodes \
                     is a network flow",
                    from.component,
                    to.component,
                    s.components[fi].node()
                ),
            });
        }
        match (&from.elements, &to.elements) {
            (controlsim::graph::Elements::All, controlsim::graph::Elements::All) => {
                sizes.join(fs, ts);
                if let Some(p) = &s.components[fi].plant {
                    if from.port == "y" {
                        if let Ok(m) = PlantModel::from_config(&KeyPath::key("p"), p) {
                            names_from.insert(ti, m.as_plant().signature().outputs);
                        }
                    }
                }
            }
            (controlsim::graph::Elements::Range(r), controlsim::graph::Elements::All) => {
                sizes.set(ts, r.len())
            }
            (controlsim::graph::Elements::All, controlsim::graph::Elements::Range(r)) => {
                sizes.set(fs, r.len())
            }
            _ => {}
        }
        for (slot, e) in [(fs, &from.elements), (ts, &to.elements)] {
            if let controlsim::graph::Elements::Range(r) = e {
                let root = sizes.root(slot);
                sizes.at_least[root] = sizes.at_least[root].max(r.end);
            }
        }
    }
    let mut size_of = |i: usize, port: &str, output: bool| -> Result<usize, ConfigError> {
        let slot = port_slots[i]
            .iter()
            .find(|(n, _, o)| n == port && *o == output)
            .map(|p| p.1);
        slot.and_then(|s| sizes.get(s)).ok_or_else(|| ConfigError::Invalid {
            key: KeyPath::key("components").at(i),
            reason: format!(
                "the size of `{}.{port}` is not known: connect it to a port of known size (a plant's, say)",
                s.components[i].name
            ),
        })
    };

    // The receiving end of each flow is as wide as what is sent.
    let mut ends = Vec::with_capacity(flow_connections.len());
    for &j in &flow_connections {
        let conn = &s.connections[j];
        let from = PortAddress::parse(&conn.from).map_err(|reason| ConfigError::Invalid {
            key: KeyPath::key("connections").at(j).and("from"),
            reason,
        })?;
        let fi = index[from.component.as_str()];
        let range = match &from.elements {
            controlsim::graph::Elements::Range(r) => r.clone(),
            controlsim::graph::Elements::All => 0..size_of(fi, &from.port, true)?,
        };
        ends.push(FlowEnds {
            connection: j,
            name: conn.flow_name(j),
            source: from.component.clone(),
            port: from.port.clone(),
            range,
        });
    }

    let mut b = GraphBuilder::new(s.step, s.solver);
    if s.algebraic_loops.solve {
        if !(s.algebraic_loops.tolerance > 0.0 && s.algebraic_loops.tolerance.is_finite()) {
            return Err(ConfigError::Invalid {
                key: "algebraic_loops.tolerance".into(),
                reason: "must be a positive number".into(),
            });
        }
        b.solve_algebraic_loops(NewtonSettings {
            tolerance: s.algebraic_loops.tolerance,
            max_iterations: s.algebraic_loops.max_iterations,
        });
    }
    // Actuators first: a PID takes the limits of the actuator it drives.
    let mut limits: BTreeMap<usize, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    let mut built: Vec<Option<Box<dyn Component>>> =
        (0..s.components.len()).map(|_| None).collect();
    for (i, c) in s.components.iter().enumerate() {
        if let Some(a) = &c.actuator {
            let key = KeyPath::key("components").at(i).and("actuator");
            let n = size_of(i, "u", false)?;
            let act = ActuatorComponent::new(&key, a, n)?;
            let (lo, hi) = act.limits();
            limits.insert(i, (lo.to_vec(), hi.to_vec()));
            built[i] = Some(Box::new(act));
        }
    }
    for (i, c) in s.components.iter().enumerate() {
        let key = KeyPath::key("components").at(i);
        let component: Box<dyn Component> = if let Some(bc) = &c.block {
            build_block(c, bc, &key, step, s.seed, i as u64)?
        } else if let Some(p) = &c.plant {
            let k = key.child("plant");
            Box::new(PlantComponent::new(
                &k,
                PlantModel::from_config(&k, p)?,
                step,
            )?)
        } else if let Some(sc) = &c.sensor {
            let k = key.child("sensor");
            let channels = match sc.source {
                SensorSource::Radar => Vec::new(),
                SensorSource::Plant => {
                    let n = size_of(i, "y", true)?;
                    names_from
                        .get(&i)
                        .filter(|v| v.len() == n)
                        .cloned()
                        .unwrap_or_else(|| vec![String::new(); n])
                }
            };
            Box::new(SensorComponent::new(
                &k, sc, step, &channels, s.seed, i as u64,
            )?)
        } else if c.actuator.is_some() {
            match built[i].take() {
                Some(a) => a,
                None => continue,
            }
        } else if let Some(ctrl) = &c.controller {
            let measurements = size_of(i, "measurement", false)?;
            let outputs = size_of(i, "u", true)?;
            // The sensor that drives its measurement gives the default period;
            // the actuator it drives whole gives a PID's default limits.
            let mut default_period = None;
            let mut lim = None;
            for conn in &s.connections {
                let (Ok(from), Ok(to)) =
                    (PortAddress::parse(&conn.from), PortAddress::parse(&conn.to))
                else {
                    continue;
                };
                if to.component == c.name && to.port == "measurement" {
                    if let Some(sc) = index
                        .get(from.component.as_str())
                        .and_then(|&f| s.components[f].sensor.as_ref())
                    {
                        default_period.get_or_insert(sc.period);
                    }
                }
                if from.component == c.name
                    && from.port == "u"
                    && from.elements == controlsim::graph::Elements::All
                {
                    if let Some(l) = index.get(to.component.as_str()).and_then(|t| limits.get(t)) {
                        lim.get_or_insert(l);
                    }
                }
            }
            let controller = ControllerComponent::new(
                &key.child("controller"),
                ctrl,
                ControllerShape {
                    measurements,
                    outputs,
                    reference: &c.reference.0,
                    model: None,
                    limits: lim.map(|(lo, hi)| (lo.as_slice(), hi.as_slice())),
                    default_period,
                },
                step,
            )?;
            Box::new(crate::graph_response::apply(i, c, controller)?)
        } else {
            Box::new(ReferenceComponent::new(
                &key.child("reference"),
                &c.reference.0,
            )?)
        };
        b.component_keyed(key, &c.name, component);
    }
    for end in &ends {
        b.component_keyed(
            KeyPath::key("connections").at(end.connection).and("name"),
            &end.name,
            Box::new(controlsim::graph::Inlet::new(end.range.len())),
        );
    }
    for (j, conn) in s.connections.iter().enumerate() {
        match ends.iter().find(|e| e.connection == j) {
            Some(end) => b.connect_keyed(
                KeyPath::key("connections").at(j),
                &format!("{}.y", end.name),
                &conn.to,
            ),
            None => b.connect_keyed(KeyPath::key("connections").at(j), &conn.from, &conn.to),
        };
    }
    Ok((b.build()?, ends))
}

/// What a graph run wrote.
#[derive(Debug)]
pub struct GraphRunReport {
    pub out_dir: PathBuf,
    pub rows: u64,
}

/// Why a graph run failed.
#[derive(Debug, thiserror::Error)]
pub enum GraphRunError {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Directory(#[from] crate::run_dir::RunDirError),
    /// The run stopped; `timeseries.csv` holds what was recorded.
    #[error("{source}")]
    Failed {
        #[source]
        source: controlsim::graph::GraphError,
    },
}

/// Runs a loaded graph scenario, writing `timeseries.csv` into `out_dir`.
///
/// # Errors
/// [`GraphRunError`].
pub fn run(loaded: &mut LoadedGraph, out_dir: &Path) -> Result<GraphRunReport, GraphRunError> {
    std::fs::create_dir_all(out_dir)?;
    let _lock = crate::run_dir::DirLock::acquire(out_dir)?;
    crate::run_dir::clear_outputs(out_dir)?;
    let file = std::fs::File::create(out_dir.join("timeseries.csv"))?;
    let every = loaded.scenario.record_every;
    let mut rec = GraphRecorder::new(&loaded.graph, std::io::BufWriter::new(file), every)?;
    let g = &mut loaded.graph;
    let outcome = g.run_to(loaded.end_step, &mut rec).and_then(|()| {
        // The last boundary too, as the loops' recorder writes it.
        g.evaluate()?;
        controlsim::graph::GraphObserver::observe(&mut rec, g).map_err(|source| {
            controlsim::graph::GraphError::Observer {
                step: g.k(),
                source,
            }
        })
    });
    let rows = rec.rows();
    rec.finish()?;
    outcome.map_err(|source| GraphRunError::Failed { source })?;
    Ok(GraphRunReport {
        out_dir: out_dir.to_path_buf(),
        rows,
    })
}

/// The resolved graph as Graphviz DOT: one cluster per network node, the
/// evaluation order in each component's label (`#n`) and as a dashed chain,
/// connections as edges labelled with their ports. Render with
/// `dot -Tsvg graph.dot -o graph.svg`.
pub fn dot(loaded: &LoadedGraph) -> String {
    let s = &loaded.scenario;
    let g = &loaded.graph;
    let mut position = BTreeMap::new();
    for (n, block) in g.order().iter().enumerate() {
        for name in block {
            position.insert(name.to_string(), (n + 1, block.len() > 1));
        }
    }
    let mut out = String::new();
    let _ = writeln!(out, "digraph netloop {{");
    let _ = writeln!(out, "  rankdir=LR;");
    let _ = writeln!(out, "  node [shape=box, fontname=\"Helvetica\"];");
    let mut nodes: BTreeMap<String, Vec<&ComponentScenario>> = BTreeMap::new();
    for c in &s.components {
        nodes.entry(c.node()).or_default().push(c);
    }
    for (k, (node, members)) in nodes.iter().enumerate() {
        let _ = writeln!(out, "  subgraph cluster_{k} {{");
        let _ = writeln!(out, "    label=\"node {node}\";");
        for c in members {
            let (n, looped) = position.get(&c.name).copied().unwrap_or((0, false));
            let _ = writeln!(
                out,
                "    \"{}\" [label=\"#{n} {}\\n{}{}\"];",
                c.name,
                c.name,
                c.kind(),
                if looped { " (algebraic loop)" } else { "" }
            );
        }
        let _ = writeln!(out, "  }}");
    }
    for (j, conn) in s.connections.iter().enumerate() {
        let (Ok(from), Ok(to)) = (PortAddress::parse(&conn.from), PortAddress::parse(&conn.to))
        else {
            continue;
        };
        let ports = format!(
            "{} -> {}",
            conn.from.split_once('.').map_or("", |x| x.1),
            conn.to.split_once('.').map_or("", |x| x.1)
        );
        let flow = loaded
            .network
            .as_ref()
            .and_then(|n| n.flows.iter().find(|f| f.connection == j));
        let flow = flow.map(|f| (f.name.as_str(), f));
        dot_edge(&mut out, g, (&from.component, &to.component), &ports, flow);
    }
    // The order of the scenario's own components (a flow's receiving end is
    // drawn as its edge).
    dot_order(&mut out, g, |name| {
        s.components.iter().any(|c| c.name == name)
    });
    let _ = writeln!(out, "}}");
    out
}

/// One edge of a `check --graph` drawing: a flow is a network edge, bold
/// and blue, labelled `name: ports` with its trigger and port; a local
/// connection is labelled with its ports. The source port's units, where
/// `g` declares them, follow it ([`with_source_units`]).
pub(crate) fn dot_edge(
    out: &mut String,
    g: &Graph,
    (from, to): (&str, &str),
    ports: &str,
    flow: Option<(&str, &crate::graph_flows::GraphFlow)>,
) {
    let ports = with_source_units(g, from, ports);
    let _ = match flow {
        Some((name, f)) => writeln!(
            out,
            "  \"{from}\" -> \"{to}\" [label=\"{name}: {ports}\\n{}, port {}\", style=bold, color=blue, fontcolor=blue];",
            f.trigger_text, f.config.port
        ),
        None => writeln!(out, "  \"{from}\" -> \"{to}\" [label=\"{ports}\"];"),
    };
}

/// `ports` (`"y[1] -> y"`, source first) with the units of the source's
/// elements that `g` declares: `"y[1] (rad/s) -> y"`, `-` for an element
/// without one; as it is when none has a unit.
fn with_source_units(g: &Graph, from: &str, ports: &str) -> String {
    let Some((source, rest)) = ports.split_once(" -> ") else {
        return ports.to_string();
    };
    let units = PortAddress::parse(&format!("{from}.{source}"))
        .ok()
        .and_then(|a| {
            let c = g.component_index(&a.component)?;
            let spec = &g.declaration(c).outputs[g.output_index(c, &a.port)?];
            let units: Vec<Option<&str>> = a.range(spec.size)?.map(|i| spec.unit(i)).collect();
            units
                .iter()
                .any(Option::is_some)
                .then(|| units.iter().map(|u| u.unwrap_or("-")).collect::<Vec<_>>())
        });
    match units {
        Some(units) => format!("{source} ({}) -> {rest}", units.join(", ")),
        None => ports.to_string(),
    }
}

/// The evaluation order of the drawn components (`drawn` says which) as a
/// dashed line.
pub(crate) fn dot_order(out: &mut String, g: &Graph, drawn: impl Fn(&str) -> bool) {
    let order: Vec<String> = g
        .order()
        .iter()
        .filter(|b| drawn(b[0]))
        .map(|b| format!("\"{}\"", b[0]))
        .collect();
    if order.len() > 1 {
        let _ = writeln!(
            out,
            "  {} [style=dashed, color=gray, constraint=false, label=\"\"];",
            order.join(" -> ")
        );
    }
}
