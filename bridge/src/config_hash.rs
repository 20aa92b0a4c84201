//! Config hashes: the name of a run's directory and the `config_hash` of
//! its `summary.json`, by which `sweep --resume` finds the runs it has done
//! (docs/sweeps.md, "Config hashes").
//!
//! The hash is taken of a canonical form, so that two files that mean the
//! same run have one hash: the scenario as resolved, with a key left out
//! and the same key written with its default made one (a flow's `port`,
//! `size` and `on_loss`, a loop's nodes, a connection's flow keys are
//! written out with their default values), as JSON with sorted keys,
//! after a version line. A key added later is serialised only when it is
//! not its default (`skip_serializing_if`), so that adding it leaves every
//! hash as it was.
//!
//! Keys that say how netloop talks to its ns-3 server and never what a
//! run computes (`[network.server]` `connect_timeout`, `step_timeout`,
//! `spin_wait`, `transport`) are written at their defaults: raising a
//! timeout and resuming a sweep redoes nothing. The program itself
//! (`binary`, `args`, `params`) stays in the hash, since a custom program
//! changes results.
//!
//! Sweeps written by earlier versions resume by the hashes those versions
//! gave ([`earlier_of_loops`], [`earlier_of_graph`]): the canonical form
//! before the server's settings were left out, and the legacy hash of the
//! scenario's JSON as serde wrote it.

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::config::{
    NetworkConfig, OnLoss, Scenario, ServerConfig, DEFAULT_BASE_PORT, DEFAULT_PAYLOAD,
};
use crate::graph_scenario::{FlowTrigger, GraphScenario};

/// Starts what is hashed: names the canonical form's rules, and keeps a
/// canonical hash from ever equalling a legacy one of the same scenario.
const VERSION: &[u8] = b"netloop canonical config 1\n";

/// The config hash of a loop scenario, of its canonical form.
pub fn of_loops(scenario: &Scenario) -> String {
    current(scenario)
}

/// The config hash of a graph scenario, of its canonical form.
pub fn of_graph(scenario: &GraphScenario) -> String {
    current(scenario)
}

/// The hashes earlier versions gave a loop scenario, newest first, each
/// different from [`of_loops`]: the canonical form with the server's
/// settings as written, then the legacy hash ([`legacy_of_loops`]).
pub fn earlier_of_loops(scenario: &Scenario) -> Vec<String> {
    earlier(scenario)
}

/// [`earlier_of_loops`] of a graph scenario.
pub fn earlier_of_graph(scenario: &GraphScenario) -> Vec<String> {
    earlier(scenario)
}

/// The hash a loop scenario had before the canonical form: SHA-256 of
/// its JSON as serde writes it, so that an omitted default and a written
/// one differ.
pub fn legacy_of_loops(scenario: &Scenario) -> String {
    legacy(scenario)
}

/// A scenario of either kind, as the hashes take it.
trait Hashed: Serialize {
    /// The scenario with every default that resolving fills in written out.
    fn canonical(&self) -> Self;
    fn network_mut(&mut self) -> Option<&mut NetworkConfig>;
}

impl Hashed for Scenario {
    fn canonical(&self) -> Self {
        canonical_loops(self)
    }
    fn network_mut(&mut self) -> Option<&mut NetworkConfig> {
        Some(&mut self.network)
    }
}

impl Hashed for GraphScenario {
    fn canonical(&self) -> Self {
        canonical_graph(self)
    }
    fn network_mut(&mut self) -> Option<&mut NetworkConfig> {
        self.network.as_mut()
    }
}

/// Today's hash: the canonical form, the server's settings at defaults.
fn current(scenario: &impl Hashed) -> String {
    of_canonical(scenario.canonical())
}

/// [`current`] of a scenario already in its canonical form.
fn of_canonical(mut canonical: impl Hashed) -> String {
    if let Some(network) = canonical.network_mut() {
        server_settings_at_defaults(network);
    }
    hash(VERSION, &canonical)
}

/// Earlier versions' hashes, newest first, without today's or repeats.
fn earlier(scenario: &impl Hashed) -> Vec<String> {
    let canonical = scenario.canonical();
    let as_written = hash(VERSION, &canonical);
    let now = of_canonical(canonical);
    let mut hashes: Vec<String> = Vec::new();
    for h in [as_written, legacy(scenario)] {
        if h != now && !hashes.contains(&h) {
            hashes.push(h);
        }
    }
    hashes
}

/// Writes `[network.server]`'s settings of the conversation, which never
/// change what a run computes, at their defaults (see the module doc).
fn server_settings_at_defaults(network: &mut NetworkConfig) {
    let ServerConfig {
        connect_timeout,
        step_timeout,
        transport,
        spin_wait,
        // What runs, and how it is told what to simulate: kept.
        binary: _,
        args: _,
        params: _,
    } = &mut network.server;
    let defaults = ServerConfig::default();
    *connect_timeout = defaults.connect_timeout;
    *step_timeout = defaults.step_timeout;
    *transport = defaults.transport;
    *spin_wait = defaults.spin_wait;
}

fn legacy(value: &impl Serialize) -> String {
    let json = serde_json::to_vec(value).expect("a scenario always serialises");
    hex::encode(&Sha256::digest(&json)[..8])
}

/// The first 8 bytes of SHA-256 of `version` and `value`'s JSON with
/// sorted keys (a `serde_json::Value`'s maps are ordered by key), in hex.
fn hash(version: &[u8], value: &impl Serialize) -> String {
    let sorted = serde_json::to_value(value).expect("a scenario always serialises");
    let json = serde_json::to_vec(&sorted).expect("a JSON value always serialises");
    let mut sha = Sha256::new();
    sha.update(version);
    sha.update(&json);
    hex::encode(&sha.finalize()[..8])
}

/// A loop scenario with every default that resolving fills in written out.
fn canonical_loops(scenario: &Scenario) -> Scenario {
    let mut s = scenario.clone();
    for (i, l) in s.loops.iter_mut().enumerate() {
        let i = i as u32;
        // As `Scenario::resolve`: nodes 2 i and 2 i + 1, ports from
        // 9000 + 3 i; a value past the range is refused there, so the
        // default is kept out here rather than wrapped.
        l.plant_node.get_or_insert(2 * i);
        l.controller_node.get_or_insert(2 * i + 1);
        let base = u32::from(DEFAULT_BASE_PORT) + 3 * i;
        for (flow, port, downlink) in [
            (&mut l.uplink, base, false),
            (&mut l.downlink, base + 1, true),
            (&mut l.feedforward, base + 2, false),
        ] {
            if flow.port.is_none() {
                flow.port = u16::try_from(port).ok();
            }
            flow.size.get_or_insert(DEFAULT_PAYLOAD);
            // Only the downlink takes `on_loss` (an uplink's is refused).
            if downlink {
                flow.on_loss.get_or_insert(OnLoss::default());
            }
        }
    }
    s
}

/// A graph scenario with its connections' flow defaults written out.
fn canonical_graph(scenario: &GraphScenario) -> GraphScenario {
    let mut s = scenario.clone();
    for (j, c) in s.connections.iter_mut().enumerate() {
        // A connection within a node refuses every flow key, so only its
        // omitted form exists: filling it in changes no equality. The
        // default port (9000 + the flow's number among the networked
        // ends) is left as written.
        c.name.get_or_insert_with(|| format!("flow{j}"));
        c.trigger.get_or_insert(FlowTrigger::Update);
        c.size.get_or_insert(DEFAULT_PAYLOAD);
        c.multi_packet.get_or_insert(false);
        c.transport.get_or_insert_with(Default::default);
        c.drop_stale.get_or_insert(false);
        c.on_loss.get_or_insert(OnLoss::default());
    }
    s
}
