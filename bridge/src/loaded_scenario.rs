//! One load path for every scenario: the text of a `[[loops]]` or a graph
//! (`[[components]]`) scenario, with its overrides, into one validated,
//! built value ([`LoadedScenario`]). `netloop run`, `netloop check` and
//! sweep planning load through here, so that which kind a file is gets
//! decided once, from its parsed table, and never again by the commands.

use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::config::{Backend, Resolved};
use crate::graph_scenario::{self, LoadedGraph};
use crate::input::{read_input, shorten_lines};
use crate::scenario_file::{self, LoadError, Loaded, Override};

/// A scenario loaded, checked and built: a loop scenario or a graph one.
#[derive(Debug)]
pub enum LoadedScenario {
    /// A `[[loops]]` scenario ([`scenario_file`]).
    Loops(Box<Loaded>),
    /// A `[[components]]` scenario ([`graph_scenario`]).
    Graph(Box<LoadedGraph>),
}

impl LoadedScenario {
    /// Asks the ns-3 server whether it accepts the scenario's network; see
    /// [`Loaded::check_network`].
    ///
    /// # Errors
    /// The rejected argument's key, located.
    pub fn check_network(&self, with_server: bool) -> Result<Option<String>, LoadError> {
        match self {
            LoadedScenario::Loops(l) => l.check_network(with_server),
            LoadedScenario::Graph(g) => g.check_network(with_server),
        }
    }

    /// The network side as a resolved loop scenario (what the server's
    /// command line is made from): `None` for a graph scenario on one node.
    pub fn network(&self) -> Option<&Resolved> {
        match self {
            LoadedScenario::Loops(l) => Some(&l.resolved),
            LoadedScenario::Graph(g) => g.network.as_ref().map(|side| &side.resolved),
        }
    }

    /// The directory relative paths in the scenario are relative to.
    pub fn base_dir(&self) -> PathBuf {
        match self {
            LoadedScenario::Loops(l) => l.base_dir.clone(),
            LoadedScenario::Graph(g) => g.path.parent().map(Path::to_path_buf).unwrap_or_default(),
        }
    }

    /// The backend the scenario's network runs on (`None`: no network).
    pub fn backend(&self) -> Option<Backend> {
        self.network().map(|r| r.scenario.network.backend)
    }

    /// The scenario's seed and run number (its replication).
    pub fn seed_and_run(&self) -> (u64, u64) {
        match self {
            LoadedScenario::Loops(l) => (l.resolved.scenario.seed, l.resolved.scenario.run),
            LoadedScenario::Graph(g) => (g.scenario.seed, g.scenario.run),
        }
    }

    /// The hash of the scenario as loaded (overrides applied): the name of
    /// a sweep run's directory and what `summary.json` records. A loop
    /// scenario's is [`crate::run::config_hash`], unchanged.
    pub fn config_hash(&self) -> String {
        match self {
            LoadedScenario::Loops(l) => crate::run::config_hash(&l.resolved.scenario),
            LoadedScenario::Graph(g) => graph_config_hash(&g.scenario),
        }
    }
}

/// The config hash of a graph scenario, as for loop scenarios: the first
/// 8 bytes of the SHA-256 of its JSON form, in hex.
pub fn graph_config_hash(scenario: &graph_scenario::GraphScenario) -> String {
    hash_of(scenario)
}

fn hash_of(value: &impl Serialize) -> String {
    let json = serde_json::to_vec(value).expect("a scenario always serialises");
    hex::encode(&Sha256::digest(&json)[..8])
}

/// Whether a parsed scenario file is a graph scenario: it has `components`.
fn is_graph(table: &toml::Table) -> bool {
    table.contains_key("components")
}

/// Reads, overrides, checks and builds the scenario at `path`, of either kind.
///
/// # Errors
/// [`LoadError`], all bad input, located at the key.
pub fn load(path: &Path, overrides: &[Override]) -> Result<LoadedScenario, LoadError> {
    ScenarioBase::read(path)?.load(overrides)
}

/// [`load`] on text already read; `path` names it and gives the base directory.
///
/// # Errors
/// As [`load`].
pub fn load_text(
    path: &Path,
    text: &str,
    overrides: &[Override],
) -> Result<LoadedScenario, LoadError> {
    ScenarioBase::new(path, text)?.load(overrides)
}

/// A scenario file read and parsed once, to be loaded with many sets of
/// overrides (a sweep's runs).
pub struct ScenarioBase {
    /// Set for a loop scenario: its parsed table is kept for every load.
    loops: Option<scenario_file::Base>,
    /// Whether the file as written has a `[network]` table.
    has_network: bool,
    path: PathBuf,
    text: String,
}

impl ScenarioBase {
    /// Reads and parses `path`.
    ///
    /// # Errors
    /// The file cannot be read, or is not TOML.
    pub fn read(path: &Path) -> Result<ScenarioBase, LoadError> {
        let text = read_input(path).map_err(|source| LoadError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        ScenarioBase::new(path, &text)
    }

    /// The scenario `text`, read from `path`.
    ///
    /// # Errors
    /// `text` is not TOML.
    pub fn new(path: &Path, text: &str) -> Result<ScenarioBase, LoadError> {
        let table: toml::Table = toml::from_str(text).map_err(|e| LoadError::Syntax {
            path: path.to_path_buf(),
            message: shorten_lines(e.to_string().trim_end()),
        })?;
        let has_network = table.contains_key("network");
        let loops = (!is_graph(&table)).then(|| scenario_file::Base::parsed(path, text, table));
        Ok(ScenarioBase {
            loops,
            has_network,
            path: path.to_path_buf(),
            text: text.to_string(),
        })
    }

    /// Whether this is a graph scenario (`[[components]]`).
    pub fn is_graph(&self) -> bool {
        self.loops.is_none()
    }

    /// Whether the file as written (before any override) has a `[network]`.
    pub fn has_network(&self) -> bool {
        self.has_network
    }

    /// The scenario with `overrides`, checked and built.
    ///
    /// # Errors
    /// As [`load`].
    pub fn load(&self, overrides: &[Override]) -> Result<LoadedScenario, LoadError> {
        match &self.loops {
            Some(base) => Ok(LoadedScenario::Loops(Box::new(base.load(overrides)?))),
            None => Ok(LoadedScenario::Graph(Box::new(graph_scenario::load_text(
                &self.path, &self.text, overrides,
            )?))),
        }
    }
}
