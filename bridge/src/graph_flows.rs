//! Network flows of graph scenarios (issue 11 item 3): a connection between
//! components on different nodes, resolved into a flow of the one
//! [`FlowTable`] the ledger and the networks know, with its trigger, its
//! receiver's policies and where its values come from and go.
//!
//! The network side of a graph scenario (`seed`, `run`, `[sync]`,
//! `[network]`) is checked and shaped as a loop scenario's [`Resolved`]
//! without loops, so that the same code starts the builtin channel or the
//! ns-3 server and writes the same `summary.json` figures.

use std::collections::BTreeMap;
use std::ops::Range;

use controlsim::graph::{FlowEnd, Graph, LossPolicy, SendRule};
use controlsim::{StepSize, SystemConfig};
use protocol::{FlowSpec, SimTime};

use crate::config::{
    bad, resolve_flow, Backend, FlowConfig, KeyPath, OnLoss, Resolved, ResolvedFlow, ResolvedRun,
    Scenario, ScenarioError, TransportKind, DEFAULT_BASE_PORT, MAX_NODES,
};
use crate::flows::{Direction, Flow, FlowTable};
use crate::graph_scenario::{FlowTrigger, GraphScenario, NodeName};

/// A connection between nodes as the graph builder left it: the source it
/// reads and the name of the [`controlsim::graph::Inlet`] that stands in
/// for it at the destination.
#[derive(Clone, Debug, PartialEq)]
pub struct FlowEnds {
    /// Index in `connections`.
    pub connection: usize,
    /// The flow's name, also the inlet component's.
    pub name: String,
    pub source: String,
    pub port: String,
    /// The source port's elements sent.
    pub range: Range<usize>,
}

/// One flow of a graph scenario.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphFlow {
    pub id: u32,
    pub connection: usize,
    pub name: String,
    pub src_node: u32,
    pub dst_node: u32,
    /// The control side: source, inlet, send rule, schedule, loss policy
    /// (what the graph's [`controlsim::graph::Endpoint`] serves).
    pub control: FlowEnd,
    pub config: ResolvedFlow,
    /// For `check --graph`: `update`, `periodic 10ms`, `on arrival of x`.
    pub trigger_text: String,
}

/// Everything a networked graph run needs besides the graph.
#[derive(Clone, Debug)]
pub struct NetworkSide {
    /// The network side as a loop-less scenario.
    pub resolved: Resolved,
    pub flows: Vec<GraphFlow>,
    /// The nodes components move ([`crate::graph_mobility`]).
    pub motions: Vec<crate::graph_mobility::GraphNodeMotion>,
    /// A `[[loops]]` run's streams; `None` for a graph scenario.
    pub loops: Option<LoopStreams>,
}

/// The flows of a `[[loops]]` run as the ledger, `packets.csv` and the
/// network know them ([`crate::loop_graph`]): the loops' table (uplink,
/// downlink, feed-forward per loop) and names.
#[derive(Clone, Debug)]
pub struct LoopStreams {
    pub table: FlowTable,
    pub names: Vec<String>,
    /// Per loop: whether its controller answers each measurement at once.
    pub responds: Vec<bool>,
}

impl LoopStreams {
    /// Per flow, the flow whose accepted packets it answers one for one:
    /// an event-triggered controller's downlink answers its uplink. `None`
    /// when such a controller answers samples that reach it locally (its
    /// answers then follow no network delivery).
    pub fn answer_triggers(&self) -> Option<Vec<Option<usize>>> {
        let mut triggers = vec![None; self.table.all().len()];
        for (i, _) in self.responds.iter().enumerate().filter(|(_, r)| **r) {
            if let Some(answer) = self.table.downlink(i) {
                triggers[answer as usize] = Some(self.table.uplink(i)? as usize);
            }
        }
        Some(triggers)
    }
}

impl NetworkSide {
    /// The flows as the ledger and the networks see them: a loop run's
    /// table, or for a graph scenario flow `id` as "loop" `id`, named after
    /// the flow.
    pub fn table(&self) -> FlowTable {
        if let Some(l) = &self.loops {
            return l.table.clone();
        }
        FlowTable::from_flows(
            self.flows
                .iter()
                .map(|f| Flow {
                    id: f.id,
                    loop_index: f.id as usize,
                    direction: Direction::Flow,
                    src: f.src_node,
                    dst: f.dst_node,
                    config: f.config.clone(),
                })
                .collect(),
        )
    }

    pub fn names(&self) -> Vec<String> {
        if let Some(l) = &self.loops {
            return l.names.clone();
        }
        self.flows.iter().map(|f| f.name.clone()).collect()
    }

    /// The flows as the network is told about them: under `event_driven`
    /// sync a graph's stop the network at every delivery (it moves to the
    /// boundary where the packet acts); a loop run's stop it at deliveries
    /// a controller answers at once, as [`FlowTable::specs`] says.
    pub fn specs(&self, event_driven: bool) -> Vec<FlowSpec> {
        if let Some(l) = &self.loops {
            return l.table.specs(&l.responds);
        }
        self.table().specs_stopping(|_| event_driven)
    }

    /// What the run's [`crate::graph_session::GraphSession`] needs of the
    /// flows and the network side.
    pub fn plan(&self) -> crate::graph_session::GraphPlan {
        let sync = &self.resolved.sync;
        crate::graph_session::GraphPlan {
            table: self.table(),
            names: self.names(),
            flows: self.flows.iter().map(|f| f.control.clone()).collect(),
            specs: self.specs(sync.kind() == crate::config::SchemeKind::EventDriven),
            scheme: *sync,
            end_step: self.resolved.end_step,
            computation_delay: self.resolved.scenario.sync.computation_delay,
            motions: self.motions.clone(),
            loop_answer_triggers: self.loops.as_ref().map(LoopStreams::answer_triggers),
        }
    }
}

fn node_of(s: &GraphScenario, component: &str) -> u32 {
    s.components
        .iter()
        .find(|c| c.name == component)
        .and_then(|c| match c.node {
            Some(NodeName::Index(n)) => Some(n),
            _ => None,
        })
        .unwrap_or(0)
}

/// Resolves the flows and the network side of a graph scenario with a
/// `[network]` whose graph was built with [`crate::graph_scenario::build_with_flows`],
/// its run keys checked ([`crate::config::check_run_keys`] gave `step` and
/// `end_step`; the loader calls it first).
///
/// # Errors
/// The first bad key: `sync...`, `network...` (`network.server.binary` for
/// a custom kind without its program), `components[i].node` past the
/// network's nodes, `connections[j]...`.
pub fn resolve(
    s: &GraphScenario,
    graph: &Graph,
    ends: &[FlowEnds],
    step: StepSize,
    end_step: u64,
) -> Result<NetworkSide, ScenarioError> {
    let network = s.network.clone().ok_or_else(|| bad("network", "missing"))?;
    let sync = s.sync.clone().ok_or_else(|| {
        bad(
            "sync",
            "a graph scenario with a [network] needs a [sync] table (scheme, period)",
        )
    })?;
    let scheme = crate::config::resolve_sync(&sync, step)?;
    for (i, c) in s.components.iter().enumerate() {
        if let Some(NodeName::Index(n)) = c.node {
            if n >= MAX_NODES {
                return Err(bad(
                    KeyPath::key("components").at(i).and("node"),
                    format!(
                        "node {n} is out of range: node indices go up to {}",
                        MAX_NODES - 1
                    ),
                ));
            }
        }
    }

    let mut flows = Vec::with_capacity(ends.len());
    let mut used: BTreeMap<(u32, u16), KeyPath> = BTreeMap::new();
    for (id, end) in ends.iter().enumerate() {
        let j = end.connection;
        let conn = &s.connections[j];
        let key = |k: &str| KeyPath::key("connections").at(j).and(k);
        let id = id as u32;
        let to = controlsim::graph::PortAddress::parse(&conn.to)
            .map_err(|message| bad(key("to"), message))?;
        let (src_node, dst_node) = (node_of(s, &end.source), node_of(s, &to.component));
        let config = resolve_flow(
            &FlowConfig {
                port: conn.port,
                size: conn.size,
                multi_packet: conn.multi_packet.unwrap_or(false),
                transport: conn.transport.unwrap_or_default(),
                max_delay: conn.max_delay,
                drop_stale: conn.drop_stale.unwrap_or(false),
                on_loss: conn.on_loss,
            },
            &KeyPath::key("connections").at(j),
            DEFAULT_BASE_PORT as u32 + id,
            true,
        )?;
        if network.backend == Backend::Builtin && config.transport == TransportKind::Tcp {
            return Err(bad(
                key("transport"),
                "tcp needs the ns3 backend: the builtin channel models independent packets",
            ));
        }
        if config.multi_packet && end.range.len() > usize::from(u16::MAX) {
            return Err(bad(
                key("multi_packet"),
                "more values than packet state indices",
            ));
        }
        if let Some(other) = used.insert((dst_node, config.port), key("port")) {
            return Err(bad(
                key("port"),
                format!(
                    "port {} on node {dst_node} is already used by {other}",
                    config.port
                ),
            ));
        }
        let src_component = graph
            .component_index(&end.source)
            .ok_or_else(|| bad(key("from"), "unknown component"))?;
        let src_port = graph
            .output_index(src_component, &end.port)
            .ok_or_else(|| bad(key("from"), "unknown port"))?;
        let inlet = graph
            .component_index(&end.name)
            .ok_or_else(|| bad(key("name"), "unknown flow"))?;
        let trigger = conn.trigger.unwrap_or(FlowTrigger::Update);
        if trigger != FlowTrigger::Periodic {
            for (k, set) in [
                ("period", conn.period.is_some()),
                ("offset", conn.offset.is_some()),
            ] {
                if set {
                    return Err(bad(key(k), "is for trigger = \"periodic\""));
                }
            }
        }
        if trigger != FlowTrigger::Arrival && conn.on_arrival_of.is_some() {
            return Err(bad(key("on_arrival_of"), "is for trigger = \"arrival\""));
        }
        let (rule, trigger_text) = match trigger {
            FlowTrigger::Periodic => {
                let Some(period) = conn.period else {
                    return Err(bad(key("trigger"), "\"periodic\" needs `period`"));
                };
                let p = step
                    .period_steps(period)
                    .map_err(|e| bad(key("period"), e.to_string()))?
                    .get();
                let offset = conn.offset.unwrap_or(SimTime::ZERO);
                if offset.0 % step.as_nanos() != 0 {
                    return Err(bad(
                        key("offset"),
                        format!("{offset} is not a whole number of steps of {}", s.step),
                    ));
                }
                let phase = offset.0 / step.as_nanos();
                if phase >= p {
                    return Err(bad(key("offset"), "must be shorter than `period`"));
                }
                (
                    SendRule::Periodic { period: p, phase },
                    format!("periodic {period}"),
                )
            }
            FlowTrigger::Update => (SendRule::Update, "on update".to_string()),
            FlowTrigger::Arrival => {
                let Some(other) = &conn.on_arrival_of else {
                    return Err(bad(key("trigger"), "\"arrival\" needs `on_arrival_of`"));
                };
                let Some(g) = ends.iter().position(|e| &e.name == other) else {
                    return Err(bad(
                        key("on_arrival_of"),
                        format!("`{other}` is not the name of a flow"),
                    ));
                };
                (SendRule::Arrival(g), format!("on arrival of {other}"))
            }
        };
        let on_loss = match config.on_loss {
            OnLoss::Zero => LossPolicy::Zero,
            OnLoss::Hold => LossPolicy::Hold,
        };
        let control = FlowEnd::new(
            graph,
            (src_component, src_port, end.range.clone()),
            inlet,
            rule,
            on_loss,
            config.multi_packet,
        );
        flows.push(GraphFlow {
            id,
            connection: j,
            name: end.name.clone(),
            src_node,
            dst_node,
            control,
            config,
            trigger_text,
        });
    }

    // The network side as a scenario without loops: what starts the network
    // and fills summary.json.
    let scenario = Scenario {
        duration: s.duration,
        step: s.step,
        solver: s.solver,
        seed: s.seed,
        run: s.run,
        record_every: s.record_every,
        output: Default::default(),
        sync,
        network: network.clone(),
        loops: Vec::new(),
        stop_when: None,
    };
    let highest = s
        .components
        .iter()
        .filter_map(|c| match c.node {
            Some(NodeName::Index(n)) => Some(n),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let node_count = network.node_count(highest, |nodes| {
        s.components
            .iter()
            .enumerate()
            .find_map(|(i, c)| match c.node {
                Some(NodeName::Index(n)) if n >= nodes => {
                    Some((KeyPath::key("components").at(i).and("node"), n))
                }
                _ => None,
            })
    })?;
    let resolved = Resolved {
        run: ResolvedRun {
            system: SystemConfig {
                step: s.step,
                solver: s.solver,
                loops: Vec::new(),
            },
            loops: Vec::new(),
            end_step,
            sync: scheme,
            computation_delay: scenario.sync.computation_delay,
            node_count,
        },
        scenario,
    };
    Ok(NetworkSide {
        resolved,
        flows,
        motions: Vec::new(),
        loops: None,
    })
}
