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
use std::path::{Path, PathBuf};
use std::str::FromStr;

use protocol::SimTime;
use serde::{Deserialize, Serialize};

use super::described::DescribedConfig;
use super::{bad, ScenarioError};

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

/// The radio of wifi and wave nodes (lte uses `propagation` only).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RadioConfig {
    /// dBm; default 16.0206 (40 mW).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tx_power: Option<f64>,
    /// Default log_distance (lte: friis).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub propagation: Option<Propagation>,
    /// Path loss exponent of log_distance and nakagami; default 3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log_distance_exponent: Option<f64>,
    /// dB at `reference_distance`; default: free-space loss there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_loss: Option<f64>,
    /// Metres; default 1.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_distance: Option<f64>,
    /// Nakagami m below d1, between d1 and d2, beyond d2 (default 1.5, 0.75, 0.75).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nakagami_m: Option<[f64; 3]>,
    /// Nakagami distance bounds d1, d2 in metres (default 80, 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nakagami_distances: Option<[f64; 2]>,
    /// Range of the `range` model, metres; default 250.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_range: Option<f64>,
    /// two_ray_ground antenna height, metres; default 1.5.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub antenna_height: Option<f64>,
    /// ns-3 WifiMode name of the constant rate manager, e.g. "OfdmRate6Mbps";
    /// default: the standard's lowest rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phy_mode: Option<String>,
    /// Fill every ARP cache at start; default true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub static_arp: Option<bool>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Propagation {
    Friis,
    LogDistance,
    TwoRayGround,
    /// log_distance path loss, then Nakagami-m fading.
    Nakagami,
    /// Full power up to `max_range`, nothing beyond.
    Range,
}

/// Where the nodes are at t = 0.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlacementConfig {
    /// Metres, in node index order (lte: the UEs), optionally followed by
    /// the background nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub positions: Option<Vec<[f64; 3]>>,
    /// A topology file: the node count on its first line, then one "x y z"
    /// per line; '#' starts a comment. Relative to the scenario file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<PathBuf>,
    /// Default layout: node i at (i * spacing, 0, 0); metres, default 10.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spacing: Option<f64>,
    /// Default layout of background nodes: a ring of this radius, metres (default 20).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub background_radius: Option<f64>,
}

/// Extra ("redundant") nodes that load the channel (wifi, wave, lte).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackgroundConfig {
    pub nodes: u32,
    #[serde(default)]
    pub traffic: BackgroundTraffic,
    /// Per node while sending; default 500kbps.
    #[serde(default = "default_bg_rate")]
    pub rate: DataRate,
    /// UDP payload bytes; default 1000.
    #[serde(default = "default_bg_size")]
    pub packet_size: u32,
    /// on_off: mean on period; default 1s.
    #[serde(default = "one_second", with = "protocol::duration")]
    pub on: SimTime,
    /// on_off: mean off period; default 1s.
    #[serde(default = "one_second", with = "protocol::duration")]
    pub off: SimTime,
}

fn default_bg_rate() -> DataRate {
    DataRate(500_000)
}
fn default_bg_size() -> u32 {
    1000
}
fn one_second() -> SimTime {
    SimTime::from_secs(1)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BackgroundTraffic {
    /// Constant bit rate.
    #[default]
    Cbr,
    /// Exponential packet intervals at the same mean rate.
    Poisson,
    /// Exponential on and off periods, constant rate while on.
    OnOff,
}

/// ns-3 trace files, written into the run directory's `ns3/` folder.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TracesConfig {
    /// One pcap file per device: `ns3/pcap-<node>-<device>.pcap`.
    #[serde(default)]
    pub pcap: bool,
    /// `ns3/trace.tr`.
    #[serde(default)]
    pub ascii: bool,
    /// `ns3/flowmon.xml`.
    #[serde(default)]
    pub flow_monitor: bool,
    /// `ns3/netanim.xml`.
    #[serde(default)]
    pub netanim: bool,
    /// `ns3/drops.csv`: every PHY/MAC/queue/IP drop of a control packet,
    /// with its tags, so packets.csv's lost packets can be placed.
    #[serde(default)]
    pub drop_log: bool,
}

impl TracesConfig {
    pub fn any(&self) -> bool {
        self.pcap || self.ascii || self.flow_monitor || self.netanim || self.drop_log
    }
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
    /// Dotted scenario key, e.g. `network.radio.phy_mode`.
    pub key: String,
}

impl ServerArgument {
    /// `--name=value`.
    pub fn new(name: &str, value: impl std::fmt::Display, key: impl Into<String>) -> Self {
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
    pub fn verbatim(text: &str, key: impl Into<String>) -> Self {
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

/// The scenario key behind the first server argument a server message
/// names (`--phyMode=Bogus is not a mode of ...`), if any.
pub fn key_of_server_message<'a>(
    arguments: &'a [ServerArgument],
    message: &str,
) -> Option<&'a str> {
    message.match_indices("--").find_map(|(at, _)| {
        let name: String = message[at + 2..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == ':' || *c == '_')
            .collect();
        // `--topologyFile: cannot open ...`, but `--ns3::WifiMac::Ssid=x`.
        let name = name.trim_end_matches(':');
        arguments
            .iter()
            .rev()
            .find(|a| a.name == name)
            .map(|a| a.key.as_str())
    })
}

/// Everything the server needs besides the network kind.
pub(crate) struct NetworkExtras<'a> {
    pub radio: Option<&'a RadioConfig>,
    pub placement: Option<&'a PlacementConfig>,
    pub background: Option<&'a BackgroundConfig>,
    pub traces: Option<&'a TracesConfig>,
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

    /// Checks what the kind's schema cannot: how `[network.ns3]` goes with
    /// the radio, placement and background tables; names the key of the
    /// first problem. Each argument's own limits were checked against the
    /// schema when the table was read, and what depends on ns-3 (PHY modes,
    /// bands, BSM senders, eNB positions) is the server's (`--check`).
    pub(crate) fn validate(
        &self,
        extras: &NetworkExtras,
        node_count: u32,
    ) -> Result<(), ScenarioError> {
        // First, so that the node arithmetic below cannot wrap.
        if let Some(b) = extras.background {
            // With wifi and wave, control nodes, background nodes and their sink share one subnet.
            let room = super::MAX_NODES - node_count.min(super::MAX_NODES);
            if b.nodes > 0 && b.nodes >= room {
                return Err(bad(
                    "network.background.nodes",
                    format!(
                        "{} is too many: with {node_count} control nodes and the sink, at most {} \
                         (a network has at most {} nodes)",
                        b.nodes,
                        room.saturating_sub(1),
                        super::MAX_NODES
                    ),
                ));
            }
        }
        let kind = self.kind_name();
        match self {
            Ns3NetworkConfig::Custom(_) => {
                let built_here = [
                    ("network.radio", extras.radio.is_some()),
                    ("network.placement", extras.placement.is_some()),
                    ("network.background", extras.background.is_some()),
                ];
                if let Some((table, _)) = built_here.iter().find(|(_, set)| *set) {
                    return Err(bad(
                        *table,
                        "a custom network is built by its own program: pass its options in network.server.args",
                    ));
                }
            }
            // Links (p2p): nothing is on the air, nothing is shared.
            Ns3NetworkConfig::Described(d) if !d.uses_positions() => {
                if extras.background.is_some() {
                    return Err(bad(
                        "network.background",
                        format!("{kind} links are not shared: background traffic needs a radio network (wifi, wave or lte)"),
                    ));
                }
                if extras.radio.is_some() {
                    return Err(bad("network.radio", format!("{kind} has no radio")));
                }
            }
            // The radio table is not in the schema yet (it is shared by the
            // radio kinds): LTE's eNBs and UEs set their powers themselves.
            Ns3NetworkConfig::Described(d) if d.kind == "lte" => {
                if let Some(radio) = extras.radio {
                    if radio
                        .propagation
                        .is_some_and(|p| matches!(p, Propagation::Nakagami | Propagation::Range))
                    {
                        return Err(bad(
                            "network.radio.propagation",
                            "lte supports friis, log_distance and two_ray_ground",
                        ));
                    }
                    if !radio.is_propagation_only() {
                        return Err(bad(
                            "network.radio",
                            "lte takes propagation settings only; set enb_tx_power and ue_tx_power in [network.ns3]",
                        ));
                    }
                }
            }
            Ns3NetworkConfig::Described(_) => {}
        }
        if let Some(p) = extras.placement {
            if let Some(positions) = &p.positions {
                // Nodes besides the counted ones (LTE's remote host) are not on the radio map.
                let (placed, what, each) = match self {
                    Ns3NetworkConfig::Described(d) if d.extra_nodes() > 0 => (
                        node_count - d.extra_nodes().min(node_count),
                        "counted nodes",
                        "counted node",
                    ),
                    _ => (node_count, "nodes", "node"),
                };
                let background = extras.background.map_or(0, |b| b.nodes);
                if positions.len() != placed as usize
                    && positions.len() != (placed + background) as usize
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
                if positions.iter().flatten().any(|x| !x.is_finite()) {
                    return Err(bad(
                        "network.placement.positions",
                        "positions must be finite",
                    ));
                }
            }
            if p.positions.is_some() && p.file.is_some() {
                return Err(bad("network.placement", "give positions or file, not both"));
            }
        }
        if let Some(b) = extras.background {
            if b.packet_size == 0 {
                return Err(bad(
                    "network.background.packet_size",
                    "must be at least 1 byte",
                ));
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
        let mut arg =
            |name: &str, value: String, key: &str| a.push(ServerArgument::new(name, value, key));
        if let Some(r) = extras.radio {
            let mut opt = |name: &str, value: Option<String>, key: &str| {
                if let Some(v) = value {
                    arg(name, v, &format!("network.radio.{key}"));
                }
            };
            opt("txPower", r.tx_power.map(|x| x.to_string()), "tx_power");
            let propagation = r.propagation.map(|p| {
                match p {
                    Propagation::Friis => "friis",
                    Propagation::LogDistance => "logDistance",
                    Propagation::TwoRayGround => "twoRayGround",
                    Propagation::Nakagami => "nakagami",
                    Propagation::Range => "range",
                }
                .to_string()
            });
            opt("propagation", propagation, "propagation");
            opt(
                "logDistanceExponent",
                r.log_distance_exponent.map(|x| x.to_string()),
                "log_distance_exponent",
            );
            opt(
                "referenceLoss",
                r.reference_loss.map(|x| x.to_string()),
                "reference_loss",
            );
            opt(
                "referenceDistance",
                r.reference_distance.map(|x| x.to_string()),
                "reference_distance",
            );
            if let Some(m) = r.nakagami_m {
                for (i, name) in ["nakagamiM0", "nakagamiM1", "nakagamiM2"]
                    .into_iter()
                    .enumerate()
                {
                    opt(name, Some(m[i].to_string()), "nakagami_m");
                }
            }
            if let Some(d) = r.nakagami_distances {
                for (i, name) in ["nakagamiD1", "nakagamiD2"].into_iter().enumerate() {
                    opt(name, Some(d[i].to_string()), "nakagami_distances");
                }
            }
            opt("maxRange", r.max_range.map(|x| x.to_string()), "max_range");
            opt(
                "antennaHeight",
                r.antenna_height.map(|x| x.to_string()),
                "antenna_height",
            );
            opt("phyMode", r.phy_mode.clone(), "phy_mode");
            opt(
                "staticArp",
                r.static_arp.map(|x| x.to_string()),
                "static_arp",
            );
        }
        if let Some(p) = extras.placement {
            if let Some(positions) = &p.positions {
                arg(
                    "positions",
                    positions_argument(positions),
                    "network.placement.positions",
                );
            }
            if let Some(file) = &p.file {
                arg(
                    "topologyFile",
                    base_dir.join(file).display().to_string(),
                    "network.placement.file",
                );
            }
            if let Some(s) = p.spacing {
                arg("spacing", s.to_string(), "network.placement.spacing");
            }
            if let Some(r) = p.background_radius {
                arg(
                    "bgRadius",
                    r.to_string(),
                    "network.placement.background_radius",
                );
            }
        }
        if let Some(b) = extras.background {
            let traffic = match b.traffic {
                BackgroundTraffic::Cbr => "cbr",
                BackgroundTraffic::Poisson => "poisson",
                BackgroundTraffic::OnOff => "onoff",
            };
            arg("bgNodes", b.nodes.to_string(), "network.background.nodes");
            arg("bgTraffic", traffic.into(), "network.background.traffic");
            arg("bgRate", b.rate.to_string(), "network.background.rate");
            arg(
                "bgPacketSize",
                b.packet_size.to_string(),
                "network.background.packet_size",
            );
            arg("bgOn", b.on.to_string(), "network.background.on");
            arg("bgOff", b.off.to_string(), "network.background.off");
        }
        if let Some(t) = extras.traces {
            let file = |name: &str| trace_dir.join(name).display().to_string();
            for (on, name, path, key) in [
                (t.pcap, "pcap", "pcap", "pcap"),
                (t.ascii, "ascii", "trace.tr", "ascii"),
                (t.flow_monitor, "flowMonitor", "flowmon.xml", "flow_monitor"),
                (t.netanim, "netanim", "netanim.xml", "netanim"),
                (t.drop_log, "dropLog", "drops.csv", "drop_log"),
            ] {
                if on {
                    arg(name, file(path), &format!("network.traces.{key}"));
                }
            }
        }
        a
    }
}

impl RadioConfig {
    /// Whether only the keys LTE understands are set (propagation model and
    /// its parameters).
    fn is_propagation_only(&self) -> bool {
        self.tx_power.is_none()
            && self.nakagami_m.is_none()
            && self.nakagami_distances.is_none()
            && self.max_range.is_none()
            && self.phy_mode.is_none()
            && self.static_arp.is_none()
    }
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
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        const UNITS: &[(&str, u64)] = &[
            ("Gbps", 1_000_000_000),
            ("Mbps", 1_000_000),
            ("kbps", 1_000),
            ("Kbps", 1_000),
            ("bps", 1),
        ];
        let s = text.trim();
        let (number, scale) = UNITS
            .iter()
            .find_map(|(u, scale)| s.strip_suffix(u).map(|n| (n.trim(), *scale)))
            .ok_or_else(|| format!("\"{text}\" is not a data rate; expected e.g. \"1Mbps\", \"64kbps\", \"1.5Gbps\""))?;
        let (whole, frac) = number.split_once('.').unwrap_or((number, ""));
        let digits = |p: &str| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit());
        if !digits(whole) || !(frac.is_empty() || digits(frac)) {
            return Err(format!(
                "\"{text}\" is not a data rate; expected e.g. \"1Mbps\""
            ));
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
            return Err(format!(
                "\"{text}\" is not a whole number of bits per second"
            ));
        }
        let bps = whole
            .checked_mul(scale)
            .and_then(|w| w.checked_add(frac_value * scale / frac_scale))
            .ok_or_else(|| format!("\"{text}\" is too large"))?;
        if bps == 0 {
            return Err("a data rate must be positive".into());
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
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
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
