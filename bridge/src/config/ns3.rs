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

/// The kinds the bridge has a type for; any other `kind` is a
/// [`DescribedConfig`], checked against the server's schema.
pub const TYPED_KINDS: [&str; 5] = ["p2p", "wifi", "wave", "lte", "custom"];

/// An ns-3 network, by kind.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum Ns3NetworkConfig {
    /// Point-to-point links between `nodes` nodes in a chain or a star.
    P2p(P2pConfig),
    /// IEEE 802.11 ad hoc, one hop.
    Wifi(WifiConfig),
    /// IEEE 802.11p (WAVE), OCB or with 1609.4 channel access.
    Wave(WaveConfig),
    /// LTE with EPC: UEs, eNBs and a remote host behind the PGW.
    Lte(LteConfig),
    /// A user's own ns-3 program (bring your own script).
    Custom(CustomConfig),
    /// A kind only the server's schema describes (`netloop-server
    /// --describe`); made by [`crate::scenario_file`], never by serde.
    #[serde(skip_deserializing)]
    Described(DescribedConfig),
}

/// As derived for the typed kinds (`kind` first, then the fields), so
/// that config hashes stay as they were; a described kind is its table.
impl Serialize for Ns3NetworkConfig {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        #[serde(tag = "kind", rename_all = "snake_case")]
        enum Typed<'a> {
            P2p(&'a P2pConfig),
            Wifi(&'a WifiConfig),
            Wave(&'a WaveConfig),
            Lte(&'a LteConfig),
            Custom(&'a CustomConfig),
        }
        match self {
            Ns3NetworkConfig::P2p(c) => Typed::P2p(c).serialize(s),
            Ns3NetworkConfig::Wifi(c) => Typed::Wifi(c).serialize(s),
            Ns3NetworkConfig::Wave(c) => Typed::Wave(c).serialize(s),
            Ns3NetworkConfig::Lte(c) => Typed::Lte(c).serialize(s),
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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct P2pConfig {
    /// Node count; default: the highest node a loop uses, plus one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    #[serde(default)]
    pub topology: Topology,
    /// Link rate, e.g. "1Mbps".
    #[serde(default = "default_data_rate")]
    pub data_rate: DataRate,
    /// Propagation delay of each link.
    #[serde(default = "default_link_delay", with = "protocol::duration")]
    pub delay: SimTime,
    /// Device queue, packets.
    #[serde(default = "default_queue_size")]
    pub queue_size: u32,
    /// Probability that a link loses a packet at reception.
    #[serde(default)]
    pub loss_rate: f64,
}

fn default_data_rate() -> DataRate {
    DataRate(10_000_000)
}

fn default_link_delay() -> SimTime {
    SimTime::from_millis(2)
}

fn default_queue_size() -> u32 {
    100
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Topology {
    /// 0 - 1 - 2 - ... - (n-1)
    #[default]
    Chain,
    /// Node 0 is the hub.
    Star,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WifiConfig {
    /// Control nodes; default: the highest node a loop uses, plus one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    #[serde(default)]
    pub standard: WifiStandard,
    /// 802.11n only; default 5 GHz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub band: Option<WifiBand>,
    #[serde(default)]
    pub rate_manager: RateManager,
    /// MHz; default: the standard's (802.11n may use 40).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub channel_width: Option<u32>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum WifiStandard {
    #[default]
    #[serde(rename = "802.11a")]
    A,
    #[serde(rename = "802.11b")]
    B,
    #[serde(rename = "802.11g")]
    G,
    #[serde(rename = "802.11n")]
    N,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WifiBand {
    #[serde(rename = "2.4GHz")]
    Band2_4GHz,
    #[serde(rename = "5GHz")]
    Band5GHz,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RateManager {
    /// Always `[network.radio] phy_mode`.
    #[default]
    Constant,
    Ideal,
    Thompson,
    MinstrelHt,
    Minstrel,
    Arf,
    Aarf,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WaveConfig {
    /// Control nodes; default: the highest node a loop uses, plus one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nodes: Option<u32>,
    #[serde(default)]
    pub mac: WaveMac,
    /// With `mac = "wave"`.
    #[serde(default)]
    pub channel_access: WaveChannelAccess,
    /// Basic safety messages from ns-3's WAVE BSM helper, as background load.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bsm: Option<BsmConfig>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveMac {
    /// 802.11p helper: OCB MAC on one channel.
    #[default]
    Ocb,
    /// WAVE helper: IEEE 1609.4 channel access, IP on SCH1.
    Wave,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WaveChannelAccess {
    #[default]
    Continuous,
    /// 50 ms control channel, 50 ms service channel, with guard intervals.
    Alternating,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BsmConfig {
    /// `"all"`, `"none"`, or a list of node indices.
    #[serde(default)]
    pub nodes: BsmNodes,
    /// Messages per second per node.
    #[serde(default = "default_bsm_rate")]
    pub rate: f64,
    /// Bytes.
    #[serde(default = "default_bsm_size")]
    pub size: u32,
    /// Metres; only for ns-3's own delivery statistics.
    #[serde(default = "default_bsm_range")]
    pub range: f64,
    /// Random offset of each BSM in its interval, at most this.
    #[serde(default = "default_bsm_jitter", with = "protocol::duration")]
    pub max_jitter: SimTime,
}

fn default_bsm_rate() -> f64 {
    10.0
}
fn default_bsm_size() -> u32 {
    200
}
fn default_bsm_range() -> f64 {
    50.0
}
fn default_bsm_jitter() -> SimTime {
    SimTime::from_millis(10)
}

/// Which nodes broadcast BSMs: `"all"`, `"none"` or a list of indices.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum BsmNodes {
    Named(BsmNodeSet),
    List(Vec<u32>),
}

impl Default for BsmNodes {
    fn default() -> Self {
        BsmNodes::Named(BsmNodeSet::All)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BsmNodeSet {
    All,
    None,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LteConfig {
    /// Number of UEs: nodes `0..ues`; the remote host is node `ues`.
    pub ues: u32,
    #[serde(default = "one_enb")]
    pub enbs: u32,
    /// Metres; default eNB k at (500 k, 0, 0). UEs attach to the closest.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enb_positions: Option<Vec<[f64; 3]>>,
    #[serde(default)]
    pub scheduler: LteScheduler,
    /// Resource blocks: 6, 15, 25, 50, 75 or 100.
    #[serde(default = "default_bandwidth")]
    pub bandwidth: u32,
    /// dBm.
    #[serde(default = "default_enb_power")]
    pub enb_tx_power: f64,
    /// dBm.
    #[serde(default = "default_ue_power")]
    pub ue_tx_power: f64,
    #[serde(default = "ten_gbps")]
    pub s1u_link_data_rate: DataRate,
    #[serde(default, with = "protocol::duration")]
    pub s1u_link_delay: SimTime,
    #[serde(default = "ten_gbps")]
    pub s5_link_data_rate: DataRate,
    #[serde(default, with = "protocol::duration")]
    pub s5_link_delay: SimTime,
    #[serde(default = "hundred_gbps")]
    pub remote_host_data_rate: DataRate,
    #[serde(default = "ten_milliseconds", with = "protocol::duration")]
    pub remote_host_delay: SimTime,
}

fn one_enb() -> u32 {
    1
}
fn default_bandwidth() -> u32 {
    25
}
fn default_enb_power() -> f64 {
    30.0
}
fn default_ue_power() -> f64 {
    10.0
}
fn ten_gbps() -> DataRate {
    DataRate(10_000_000_000)
}
fn hundred_gbps() -> DataRate {
    DataRate(100_000_000_000)
}
fn ten_milliseconds() -> SimTime {
    SimTime::from_millis(10)
}

/// ns-3's LTE MAC schedulers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LteScheduler {
    /// Proportional fair.
    #[default]
    Pf,
    /// Round robin.
    Rr,
    Fdmt,
    Tdmt,
    Tta,
    Fdbet,
    Tdbet,
    Fdtbfq,
    Tdtbfq,
    Pss,
    Cqa,
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
            Ns3NetworkConfig::P2p(_) => "p2p",
            Ns3NetworkConfig::Wifi(_) => "wifi",
            Ns3NetworkConfig::Wave(_) => "wave",
            Ns3NetworkConfig::Lte(_) => "lte",
            Ns3NetworkConfig::Custom(_) => "custom",
            Ns3NetworkConfig::Described(d) => &d.kind,
        }
    }

    /// Whether node positions matter (radio propagation).
    pub fn uses_positions(&self) -> bool {
        match self {
            Ns3NetworkConfig::P2p(_) => false,
            Ns3NetworkConfig::Described(d) => d.uses_positions(),
            _ => true,
        }
    }

    /// The number of addressable nodes, given the highest node a loop uses.
    pub(crate) fn node_count(&self, highest: u32) -> u32 {
        match self {
            Ns3NetworkConfig::P2p(c) => c.nodes.unwrap_or(highest + 1),
            Ns3NetworkConfig::Wifi(c) => c.nodes.unwrap_or(highest + 1),
            Ns3NetworkConfig::Wave(c) => c.nodes.unwrap_or(highest + 1),
            Ns3NetworkConfig::Lte(c) => c.ues.saturating_add(1),
            Ns3NetworkConfig::Custom(c) => c.nodes,
            Ns3NetworkConfig::Described(d) => d.node_count(highest),
        }
    }

    /// Checks the node count [`Self::node_count`] gave against
    /// [`MAX_NODES`](super::MAX_NODES), naming the key that set it.
    pub(crate) fn validate_node_count(&self, node_count: u32) -> Result<(), ScenarioError> {
        let max = super::MAX_NODES;
        let (name, count, limit) = match self {
            Ns3NetworkConfig::P2p(c) => ("nodes", c.nodes, max),
            Ns3NetworkConfig::Wifi(c) => ("nodes", c.nodes, max),
            Ns3NetworkConfig::Wave(c) => ("nodes", c.nodes, max),
            // The remote host is a node too.
            Ns3NetworkConfig::Lte(c) => ("ues", Some(c.ues), max - 1),
            Ns3NetworkConfig::Custom(c) => ("nodes", Some(c.nodes), max),
            // The schema's limits were checked when the table was read.
            Ns3NetworkConfig::Described(d) => return d.validate_node_count(),
        };
        match count {
            Some(0) if name == "nodes" => Err(bad(
                format!("network.ns3.{name}"),
                "must be at least 1: the network needs a node",
            )),
            // Before the loops' nodes are checked against the count it makes.
            Some(0) => Err(bad(
                format!("network.ns3.{name}"),
                format!("0 is not in [1, {limit}]: at least one UE is needed"),
            )),
            Some(n) if n > limit => Err(bad(
                format!("network.ns3.{name}"),
                format!("{n} is too many: at most {limit}"),
            )),
            _ => {
                debug_assert!(node_count <= max);
                Ok(())
            }
        }
    }

    /// Checks the values serde accepted; names the key of the first problem.
    pub(crate) fn validate(
        &self,
        extras: &NetworkExtras,
        node_count: u32,
    ) -> Result<(), ScenarioError> {
        let key = |k: &str| format!("network.ns3.{k}");
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
        match self {
            Ns3NetworkConfig::Custom(c) => {
                if c.nodes == 0 {
                    return Err(bad(key("nodes"), "the program serves at least one node"));
                }
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
            // Each argument's own limits (loss_rate in [0, 1], queue_size >= 1, ...) are the
            // server's: checked against its schema (crate::network_schema) and by `--check`.
            Ns3NetworkConfig::Described(_) => {}
            Ns3NetworkConfig::P2p(_) => {
                if extras.background.is_some() {
                    return Err(bad(
                        "network.background",
                        "p2p links are not shared: background traffic needs wifi, wave or lte",
                    ));
                }
                if extras.radio.is_some() {
                    return Err(bad("network.radio", "p2p has no radio"));
                }
            }
            Ns3NetworkConfig::Wifi(w) => {
                if w.band.is_some() && w.standard != WifiStandard::N {
                    return Err(bad(key("band"), "only 802.11n has a choice of band"));
                }
            }
            Ns3NetworkConfig::Wave(w) => {
                if let Some(b) = &w.bsm {
                    if let BsmNodes::List(nodes) = &b.nodes {
                        // Control nodes, then background nodes, then their sink (only if there are any).
                        let background = extras.background.map_or(0, |b| b.nodes);
                        let all = node_count + background + u32::from(background > 0);
                        if let Some(n) = nodes.iter().find(|&&n| n >= all) {
                            let numbering = match background {
                                0 => format!("the control nodes 0..{node_count}"),
                                b => format!(
                                    "the control nodes 0..{node_count}, the background nodes {node_count}..{} \
                                     and their sink {}",
                                    node_count + b,
                                    node_count + b
                                ),
                            };
                            return Err(bad(
                                key("bsm.nodes"),
                                format!("node {n} does not exist: expected {numbering}"),
                            ));
                        }
                    }
                }
                if w.channel_access == WaveChannelAccess::Alternating && w.mac != WaveMac::Wave {
                    return Err(bad(
                        key("channel_access"),
                        "alternating channel access needs mac = \"wave\"",
                    ));
                }
            }
            Ns3NetworkConfig::Lte(l) => {
                if let Some(p) = &l.enb_positions {
                    if p.len() != l.enbs as usize {
                        return Err(bad(
                            key("enb_positions"),
                            format!(
                                "{} positions for {} eNBs: expected {}, one per eNB",
                                p.len(),
                                l.enbs,
                                l.enbs
                            ),
                        ));
                    }
                }
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
        }
        if let Some(p) = extras.placement {
            if let Some(positions) = &p.positions {
                // LTE places its UEs; the remote host is not on the radio map.
                let (placed, what, each) = match self {
                    Ns3NetworkConfig::Lte(l) => (l.ues, "UEs", "UE"),
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
        let mut a = match self {
            Ns3NetworkConfig::Described(d) => d.server_arguments(node_count),
            _ => Vec::new(),
        };
        let mut arg =
            |name: &str, value: String, key: &str| a.push(ServerArgument::new(name, value, key));
        let ns3 = |k: &str| format!("network.ns3.{k}");
        if matches!(
            self,
            Ns3NetworkConfig::P2p(_)
                | Ns3NetworkConfig::Wifi(_)
                | Ns3NetworkConfig::Wave(_)
                | Ns3NetworkConfig::Lte(_)
        ) {
            arg("network", self.kind_name().into(), &ns3("kind"));
        }
        match self {
            Ns3NetworkConfig::P2p(p) => {
                arg("nodes", node_count.to_string(), &ns3("nodes"));
                arg(
                    "topology",
                    if p.topology == Topology::Star {
                        "star"
                    } else {
                        "chain"
                    }
                    .into(),
                    &ns3("topology"),
                );
                arg("dataRate", p.data_rate.to_string(), &ns3("data_rate"));
                arg("delay", p.delay.to_string(), &ns3("delay"));
                arg("queueSize", p.queue_size.to_string(), &ns3("queue_size"));
                arg("lossRate", p.loss_rate.to_string(), &ns3("loss_rate"));
            }
            Ns3NetworkConfig::Wifi(w) => {
                arg("nodes", node_count.to_string(), &ns3("nodes"));
                let standard = match w.standard {
                    WifiStandard::A => "80211a",
                    WifiStandard::B => "80211b",
                    WifiStandard::G => "80211g",
                    WifiStandard::N => "80211n",
                };
                arg("wifiStandard", standard.into(), &ns3("standard"));
                if let Some(band) = w.band {
                    arg(
                        "wifiBand",
                        if band == WifiBand::Band2_4GHz {
                            "2.4GHz"
                        } else {
                            "5GHz"
                        }
                        .into(),
                        &ns3("band"),
                    );
                }
                let manager = match w.rate_manager {
                    RateManager::Constant => "constant",
                    RateManager::Ideal => "ideal",
                    RateManager::Thompson => "thompson",
                    RateManager::MinstrelHt => "minstrelHt",
                    RateManager::Minstrel => "minstrel",
                    RateManager::Arf => "arf",
                    RateManager::Aarf => "aarf",
                };
                arg("rateManager", manager.into(), &ns3("rate_manager"));
                if let Some(width) = w.channel_width {
                    arg("channelWidth", width.to_string(), &ns3("channel_width"));
                }
            }
            Ns3NetworkConfig::Wave(w) => {
                arg("nodes", node_count.to_string(), &ns3("nodes"));
                arg(
                    "waveMac",
                    if w.mac == WaveMac::Wave {
                        "wave"
                    } else {
                        "ocb"
                    }
                    .into(),
                    &ns3("mac"),
                );
                if w.mac == WaveMac::Wave {
                    let access = if w.channel_access == WaveChannelAccess::Alternating {
                        "alternating"
                    } else {
                        "continuous"
                    };
                    arg("waveChannelAccess", access.into(), &ns3("channel_access"));
                }
                if let Some(b) = &w.bsm {
                    let nodes = match &b.nodes {
                        BsmNodes::Named(BsmNodeSet::All) => "all".to_string(),
                        BsmNodes::Named(BsmNodeSet::None) => "none".to_string(),
                        BsmNodes::List(list) => list
                            .iter()
                            .map(u32::to_string)
                            .collect::<Vec<_>>()
                            .join(","),
                    };
                    arg("bsmNodes", nodes, &ns3("bsm.nodes"));
                    arg("bsmRate", b.rate.to_string(), &ns3("bsm.rate"));
                    arg("bsmSize", b.size.to_string(), &ns3("bsm.size"));
                    arg("bsmRange", b.range.to_string(), &ns3("bsm.range"));
                    arg(
                        "bsmTxMaxDelay",
                        b.max_jitter.to_string(),
                        &ns3("bsm.max_jitter"),
                    );
                }
            }
            Ns3NetworkConfig::Lte(l) => {
                arg("ues", l.ues.to_string(), &ns3("ues"));
                arg("enbs", l.enbs.to_string(), &ns3("enbs"));
                if let Some(p) = &l.enb_positions {
                    arg("enbPositions", positions_argument(p), &ns3("enb_positions"));
                }
                arg(
                    "scheduler",
                    format!("{:?}", l.scheduler).to_lowercase(),
                    &ns3("scheduler"),
                );
                arg("bandwidth", l.bandwidth.to_string(), &ns3("bandwidth"));
                arg(
                    "enbTxPower",
                    l.enb_tx_power.to_string(),
                    &ns3("enb_tx_power"),
                );
                arg("ueTxPower", l.ue_tx_power.to_string(), &ns3("ue_tx_power"));
                arg(
                    "s1uLinkDataRate",
                    l.s1u_link_data_rate.to_string(),
                    &ns3("s1u_link_data_rate"),
                );
                arg(
                    "s1uLinkDelay",
                    l.s1u_link_delay.to_string(),
                    &ns3("s1u_link_delay"),
                );
                arg(
                    "s5LinkDataRate",
                    l.s5_link_data_rate.to_string(),
                    &ns3("s5_link_data_rate"),
                );
                arg(
                    "s5LinkDelay",
                    l.s5_link_delay.to_string(),
                    &ns3("s5_link_delay"),
                );
                arg(
                    "remoteHostDataRate",
                    l.remote_host_data_rate.to_string(),
                    &ns3("remote_host_data_rate"),
                );
                arg(
                    "remoteHostDelay",
                    l.remote_host_delay.to_string(),
                    &ns3("remote_host_delay"),
                );
            }
            // The program builds its own network from `[network.server] args`;
            // a described kind's arguments came first.
            Ns3NetworkConfig::Custom(_) | Ns3NetworkConfig::Described(_) => {}
        }
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

    /// BSM senders are numbered control nodes, background nodes, then the
    /// sink, which exists only when there are background nodes.
    #[test]
    fn bsm_nodes_may_name_background_nodes_and_their_sink() {
        let wave = |nodes: &[u32]| {
            toml::from_str::<Ns3NetworkConfig>(&format!(
                "kind = \"wave\"\nbsm = {{ nodes = {nodes:?} }}"
            ))
            .unwrap()
        };
        let background =
            |n: u32| toml::from_str::<BackgroundConfig>(&format!("nodes = {n}")).unwrap();
        let check = |nodes: &[u32], b: Option<&BackgroundConfig>| {
            let extras = NetworkExtras {
                radio: None,
                placement: None,
                background: b,
                traces: None,
            };
            wave(nodes).validate(&extras, 2).map_err(|e| e.to_string())
        };
        let four = background(4);
        assert!(check(&[0, 1, 2, 5, 6], Some(&four)).is_ok());
        let err = check(&[7], Some(&four)).unwrap_err();
        assert!(
            err.contains("bsm.nodes") && err.contains("background nodes 2..6 and their sink 6"),
            "{err}"
        );
        let err = check(&[2], Some(&background(0))).unwrap_err();
        assert!(
            err.contains("expected the control nodes 0..2"),
            "no background nodes, no sink: {err}"
        );
        assert!(check(&[1], None).is_ok());
    }
}
