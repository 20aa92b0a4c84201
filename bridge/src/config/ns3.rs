//! The ns-3 networks a scenario can ask for (docs/design.md §6.2), and how each
//! becomes `netloop-server` command-line arguments, so that a user can run
//! the same network by hand (`netloop-server --PrintHelp`).
//!
//! ```toml
//! [network.ns3]
//! kind = "wave"                   # p2p | wifi | wave | lte | custom
//! bsm = { nodes = "all", rate = 10.0 }
//! [network.radio]                 # wifi and wave (lte: propagation only)
//! tx_power = 20.0                 # dBm
//! propagation = "log_distance"
//! [network.placement]
//! positions = [[0.0, 0.0, 0.0], [50.0, 0.0, 0.0]]
//! [network.background]
//! nodes = 4
//! rate = "500kbps"
//! [network.traces]
//! pcap = true
//! ```
//!
//! Node indices: wifi and wave control nodes are `0..nodes`; for lte the UEs
//! are `0..ues` and the remote host behind the PGW is node `ues`. ns-3.37
//! mainline has no LTE sidelink, so an LTE flow always goes through the
//! eNB and the core network. A `custom` network is a user's own ns-3
//! program built on the ns3-scenarios library (`netloop::Serve`), named by
//! `[network.server] binary` and configured by `[network.server] args`.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::described::DescribedConfig;
use super::tables::TableConfig;
use super::{bad, KeyPath, ScenarioError};
use crate::keyed::Refusal;
use crate::network_schema::KindSchema;

/// The one kind the bridge reads itself: a user's own program, whose
/// arguments no schema describes. Every other `kind` is the server's to
/// describe ([`DescribedConfig`]).
pub const CUSTOM_KIND: &str = "custom";

/// An ns-3 network, by kind.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Ns3NetworkConfig {
    /// A user's own ns-3 program (bring your own script).
    Custom(CustomConfig),
    /// A kind the server's schema describes (`netloop-server --describe`):
    /// p2p, wifi, wave, lte and any kind a server adds; made by
    /// [`crate::scenario_file`], never by serde.
    #[serde(skip_deserializing)]
    Described(DescribedConfig),
}

/// `kind` first, then the fields, as derived; a described kind is its
/// canonical form.
impl Serialize for Ns3NetworkConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        enum Typed<'a> {
            Custom(&'a CustomConfig),
        }
        match self {
            Ns3NetworkConfig::Custom(c) => Typed::Custom(c).serialize(s),
            Ns3NetworkConfig::Described(d) => d.serialize(s),
        }
    }
}

/// A user's own ns-3 program that serves its network with `netloop::Serve`
/// (see ns3-scenarios/README.md). It builds the network from its own
/// arguments, so the scenario only says how many nodes it serves.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CustomConfig {
    /// Nodes the program serves (the size of the `NodeContainer` it hands
    /// to `netloop::Serve`); flows address them as `0..nodes`.
    pub nodes: u32,
}

/// One argument of the server's command line and the scenario key it comes
/// from, so that the server's complaint about `--phyMode` can be reported
/// at `network.radio.phy_mode`, on its line of the scenario file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerArgument {
    /// The name without dashes, e.g. `phyMode`.
    pub name: String,
    /// As passed, e.g. `--phyMode=OfdmRate6Mbps`.
    pub text: String,
    /// The value, e.g. `OfdmRate6Mbps` (empty for a bare `--flag`).
    pub value: String,
    /// The scenario key, e.g. `network.radio.phy_mode`, as a path.
    pub key: KeyPath,
}

impl ServerArgument {
    /// `--name=value`.
    pub fn new(name: &str, value: impl std::fmt::Display, key: impl Into<KeyPath>) -> Self {
        let value = value.to_string();
        ServerArgument {
            name: name.to_string(),
            text: format!("--{name}={value}"),
            value,
            key: key.into(),
        }
    }

    /// An argument from `[network.server] args`, passed exactly as written;
    /// its name is what follows the dashes, up to `=`.
    pub fn verbatim(text: &str, key: impl Into<KeyPath>) -> Self {
        let body = text.trim_start_matches('-');
        let (name, value) = body.split_once('=').unwrap_or((body, ""));
        ServerArgument {
            name: name.to_string(),
            text: text.to_string(),
            value: value.to_string(),
            key: key.into(),
        }
    }
}

/// Everything the server needs besides the network kind: the shared tables.
pub(crate) struct NetworkExtras<'a> {
    pub radio: Option<&'a TableConfig>,
    pub placement: Option<&'a TableConfig>,
    pub background: Option<&'a TableConfig>,
    pub traces: Option<&'a TableConfig>,
}

impl NetworkExtras<'_> {
    fn tables(&self) -> impl Iterator<Item = &TableConfig> {
        [self.radio, self.placement, self.background, self.traces]
            .into_iter()
            .flatten()
    }

    /// `[network.background] nodes` (0 without the table).
    fn background_nodes(&self) -> u32 {
        self.background
            .and_then(|b| b.keys.get("nodes"))
            .and_then(|n| n.as_integer())
            .map_or(0, |n| u32::try_from(n).unwrap_or(u32::MAX))
    }
}

impl Ns3NetworkConfig {
    pub fn kind_name(&self) -> &str {
        match self {
            Ns3NetworkConfig::Custom(_) => CUSTOM_KIND,
            Ns3NetworkConfig::Described(d) => &d.kind,
        }
    }

    /// Whether node positions matter (radio propagation).
    pub fn uses_positions(&self) -> bool {
        match self {
            Ns3NetworkConfig::Custom(_) => true,
            Ns3NetworkConfig::Described(d) => d.uses_positions(),
        }
    }

    /// The number of addressable nodes, given the highest node a loop uses.
    pub(crate) fn node_count(&self, highest: u32) -> u32 {
        match self {
            Ns3NetworkConfig::Custom(c) => c.nodes,
            Ns3NetworkConfig::Described(d) => d.node_count(highest),
        }
    }

    /// Checks the node count [`Self::node_count`] gave against
    /// [`MAX_NODES`](super::MAX_NODES), naming the key that set it.
    pub(crate) fn validate_node_count(&self, node_count: u32) -> Result<(), ScenarioError> {
        let max = super::MAX_NODES;
        match self {
            // The schema's limits were checked when the table was read.
            Ns3NetworkConfig::Described(d) => d.validate_node_count(),
            Ns3NetworkConfig::Custom(c) if c.nodes == 0 => Err(bad(
                "network.ns3.nodes",
                "must be at least 1: the network needs a node",
            )),
            Ns3NetworkConfig::Custom(c) if c.nodes > max => Err(bad(
                "network.ns3.nodes",
                format!("{} is too many: at most {max}", c.nodes),
            )),
            Ns3NetworkConfig::Custom(_) => {
                debug_assert!(node_count <= max);
                Ok(())
            }
        }
    }

    /// Checks what each table's schema cannot: which shared tables the kind
    /// takes, and how much of each (its schema's
    /// [`TableUse`](crate::network_schema::TableUse)s), and how
    /// `[network.ns3]` goes with the placement and background tables; names
    /// the key of the first problem. Each argument's own limits were
    /// checked against the schema when the table was read, and what depends
    /// on ns-3 (PHY modes, bands, BSM senders, eNB positions) is the
    /// server's (`--check`).
    pub(crate) fn validate(
        &self,
        extras: &NetworkExtras,
        node_count: u32,
    ) -> Result<(), ScenarioError> {
        let background = extras.background_nodes();
        // First, so that the node arithmetic below cannot wrap.
        if extras.background.is_some() {
            // With wifi and wave, control nodes, background nodes and their sink share one subnet.
            let room = super::MAX_NODES - node_count.min(super::MAX_NODES);
            if background > 0 && background >= room {
                return Err(bad(
                    "network.background.nodes",
                    format!(
                        "{background} is too many: with {node_count} control nodes and the sink, at most {} \
                         (a network has at most {} nodes)",
                        room.saturating_sub(1),
                        super::MAX_NODES
                    ),
                ));
            }
        }
        match self {
            Ns3NetworkConfig::Custom(_) => {
                // The bridge's own kind: its program builds everything but the traces.
                if let Some(table) = extras.tables().find(|t| t.name() != "traces") {
                    return Err(bad(
                        KeyPath::from("network").and(table.name()),
                        "a custom network is built by its own program: pass its options in network.server.args",
                    ));
                }
            }
            Ns3NetworkConfig::Described(d) => {
                if let Some(schema) = &d.schema {
                    for table in extras.tables() {
                        check_table_use(schema, table)?;
                    }
                }
            }
        }
        if let Some(p) = extras.placement {
            if let Some(positions) = p.keys.get("positions").and_then(|v| v.as_array()) {
                // Nodes besides the counted ones (LTE's remote host) are not on the radio map.
                let (placed, what, each) = match self {
                    Ns3NetworkConfig::Described(d) if d.extra_nodes() > 0 => (
                        node_count - d.extra_nodes().min(node_count),
                        "counted nodes",
                        "counted node",
                    ),
                    _ => (node_count, "nodes", "node"),
                };
                if positions.len() != placed as usize
                    && positions.len() != placed as usize + background as usize
                {
                    let expected = match background {
                        0 => format!("expected {placed}, one per {each}"),
                        b => format!(
                            "expected {placed}, or {} to place the {b} background nodes too",
                            placed + b
                        ),
                    };
                    return Err(bad(
                        "network.placement.positions",
                        format!(
                            "{} positions for {placed} {what}: {expected}",
                            positions.len()
                        ),
                    ));
                }
            }
            if p.keys.contains_key("positions") && p.keys.contains_key("file") {
                return Err(bad("network.placement", "give positions or file, not both"));
            }
        }
        Ok(())
    }

    /// The server's command line (without seed and run), each argument with
    /// its scenario key; trace files go to `trace_dir`.
    pub(crate) fn server_arguments(
        &self,
        extras: &NetworkExtras,
        node_count: u32,
        base_dir: &Path,
        trace_dir: &Path,
    ) -> Vec<ServerArgument> {
        // A custom program builds its own network from `[network.server] args`.
        let mut a = match self {
            Ns3NetworkConfig::Described(d) => d.server_arguments(node_count),
            Ns3NetworkConfig::Custom(_) => Vec::new(),
        };
        for table in extras.tables() {
            a.extend(table.server_arguments(base_dir, trace_dir));
        }
        a
    }
}

/// A shared table against the kind's use of it: the table taken, each key
/// written one the kind takes, each choice one it supports.
fn check_table_use(kind: &KindSchema, table: &TableConfig) -> Result<(), ScenarioError> {
    let name = table.name();
    let Some(table_use) = kind.table_use(name) else {
        return Err(bad(
            KeyPath::from("network").and(name),
            format!("{} has no {}", kind.name, table.schema.what),
        ));
    };
    for (key, arguments) in table.written() {
        for (at, text) in arguments {
            let argument = &table.schema.arguments[*at];
            if !table_use.takes(&argument.name) {
                let note = if table_use.note.is_empty() {
                    String::new()
                } else {
                    format!(": {}", table_use.note)
                };
                return Err(bad(
                    KeyPath::from("network").and(name).and(key),
                    format!("{} does not take `{key}`{note}", kind.name),
                ));
            }
            let Some(supported) = table_use.choices.get(&argument.name) else {
                continue;
            };
            if !supported.contains(text) {
                let spelled = |a: &str| {
                    argument
                        .choices
                        .iter()
                        .find(|c| c.argument == a)
                        .map_or(a.to_string(), |c| c.value.clone())
                };
                let list = supported
                    .iter()
                    .map(|a| format!("\"{}\"", spelled(a)))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(bad(
                    KeyPath::from("network").and(name).and(key),
                    format!(
                        "\"{}\" is not available for {}: use one of {list}",
                        spelled(text),
                        kind.name
                    ),
                ));
            }
        }
    }
    Ok(())
}

pub(crate) fn positions_argument(positions: &[[f64; 3]]) -> String {
    positions
        .iter()
        .map(|[x, y, z]| format!("{x},{y},{z}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// A link rate in bits per second, written like ns-3's DataRate: "1Mbps",
/// "64kbps", "1.5Gbps", "9600bps". Parsed exactly.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct DataRate(pub u64);

impl FromStr for DataRate {
    type Err = Refusal;

    fn from_str(text: &str) -> Result<Self, Refusal> {
        const UNITS: &[(&str, u64)] = &[
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("kbps", 1_000),
            ("Kbps", 1_000),
            ("bps", 1),
        ];
        let not_a_rate = || {
            Refusal::expecting(
                format!("\"{text}\" is not a data rate"),
                "a data rate such as \"1Mbps\", \"64kbps\" or \"1.5Gbps\"",
            )
        };
        let s = text.trim();
        let (number, scale) = UNITS
            .iter()
            .find_map(|(u, scale)| s.strip_suffix(u).map(|n| (n.trim(), *scale)))
            .ok_or_else(not_a_rate)?;
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        let digits = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
        if !digits(whole) || !(frac.is_empty() || digits(frac)) {
            return Err(not_a_rate());
        }
        let whole: u64 = whole
            .parse()
            .map_err(|_| format!("\"{text}\" is too large"))?;
        let frac_scale = 10u64
            .checked_pow(frac.len() as u32)
            .ok_or_else(|| format!("\"{text}\": too many digits"))?;
        let frac_value: u64 = if frac.is_empty() {
            0
        } else {
            frac.parse().map_err(|_| format!("\"{text}\""))?
        };
        if (frac_value * scale) % frac_scale != 0 {
            return Err(format!("\"{text}\" is not a whole number of bits per second").into());
        }
        let bps = whole
            .checked_mul(scale)
            .and_then(|w| w.checked_add(frac_value * scale / frac_scale))
            .ok_or_else(|| format!("\"{text}\" is too large"))?;
        if bps == 0 {
            return Err(String::from("a data rate must be positive").into());
        }
        Ok(DataRate(bps))
    }
}

impl fmt::Display for DataRate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bps = self.0;
        for (unit, scale) in [
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("kbps", 1_000),
        ] {
            if bps % scale == 0 {
                return write!(f, "{}{unit}", bps / scale);
            }
        }
        write!(f, "{bps}bps")
    }
}

impl Serialize for DataRate {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for DataRate {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{Error, Unexpected};
        let text = String::deserialize(d)?;
        text.parse().map_err(|r: Refusal| match &r.expected {
            Some(expected) => {
                D::Error::invalid_value(Unexpected::Str(&text), &expected.to_string().as_str())
            }
            None => D::Error::custom(r.message),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_rates_parse_exactly_and_print_back() {
        for (text, bps) in [
            ("1Mbps", 1_000_000),
            ("1.5Gbps", 1_500_000_000),
            ("64kbps", 64_000),
            ("9600bps", 9600),
        ] {
            let rate: DataRate = text.parse().unwrap();
            assert_eq!(rate.0, bps, "{text}");
            assert_eq!(rate.to_string().parse::<DataRate>().unwrap(), rate);
        }
        for bad in ["", "fast", "1 Mbit", "0bps", "1.0000000001kbps", "-1Mbps"] {
            assert!(bad.parse::<DataRate>().is_err(), "{bad}");
        }
    }
}
