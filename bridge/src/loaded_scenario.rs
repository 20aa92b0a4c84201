//! One load path for every scenario: the text of a `[[loops]]` or a graph
//! (`[[components]]`) scenario, with its overrides, into one validated,
//! built value ([`LoadedScenario`]). `netloop run`, `netloop check` and
//! sweep planning load through here, so that which kind a file is gets
//! decided once, from its parsed table, and never again by the commands.

use std::path::{Path, PathBuf};

use crate::config::{Backend, Resolved};
use crate::graph_scenario::{self, LoadedGraph};
use crate::input::read_input;
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
    /// a sweep run's directory and what `summary.json` records.
    pub fn config_hash(&self) -> String {
        match self {
            LoadedScenario::Loops(l) => crate::run::config_hash(&l.resolved.scenario),
            LoadedScenario::Graph(g) => graph_config_hash(&g.scenario),
        }
    }

    /// The hashes earlier versions gave the scenario, newest first
    /// ([`crate::config_hash::earlier_of_loops`]): how `sweep --resume`
    /// finds the runs of a sweep they wrote.
    pub fn earlier_config_hashes(&self) -> Vec<String> {
        match self {
            LoadedScenario::Loops(l) => crate::config_hash::earlier_of_loops(&l.resolved.scenario),
            LoadedScenario::Graph(g) => crate::config_hash::earlier_of_graph(&g.scenario),
        }
    }
}

/// The config hash of a graph scenario, as for loop scenarios: of its
/// canonical form ([`crate::config_hash`]).
pub fn graph_config_hash(scenario: &graph_scenario::GraphScenario) -> String {
    crate::config_hash::of_graph(scenario)
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
/// overrides (a sweep's runs): the parsed table, of either kind, is kept
/// and every load builds from a copy of it.
pub struct ScenarioBase {
    /// The file as parsed, before any override.
    table: toml::Table,
    /// Whether it is a graph scenario (it has `components`).
    graph: bool,
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
        let table = scenario_file::parse_table(path, text)?;
        Ok(ScenarioBase {
            graph: is_graph(&table),
            table,
            path: path.to_path_buf(),
            text: text.to_string(),
        })
    }

    /// Whether this is a graph scenario (`[[components]]`).
    pub fn is_graph(&self) -> bool {
        self.graph
    }

    /// Whether the file as written (before any override) has a `[network]`.
    pub fn has_network(&self) -> bool {
        self.table.contains_key("network")
    }

    /// The scenario with `overrides`, checked and built.
    ///
    /// # Errors
    /// As [`load`].
    pub fn load(&self, overrides: &[Override]) -> Result<LoadedScenario, LoadError> {
        let (path, text, table) = (&self.path, &self.text, self.table.clone());
        Ok(if self.graph {
            LoadedScenario::Graph(Box::new(graph_scenario::load_parsed(
                path, text, table, overrides,
            )?))
        } else {
            LoadedScenario::Loops(Box::new(scenario_file::load_parsed(
                path, text, table, overrides,
            )?))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario_file::tests::PARSES;

    /// A sweep loads its base file once per run: the file's text is parsed
    /// once, whatever its kind, and every load builds from that table.
    #[test]
    fn a_scenario_base_parses_its_text_once_for_every_load() {
        let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
        for (name, graph) in [
            ("dc_servo_p2p.toml", false),
            ("cascade_servo_graph.toml", true),
        ] {
            let path = examples.join(name);
            let text = std::fs::read_to_string(&path).unwrap();
            let before = PARSES.with(std::cell::Cell::get);
            let base = ScenarioBase::new(&path, &text).unwrap();
            assert_eq!(base.is_graph(), graph, "{name}");
            for seed in 1..=3 {
                let set = Override::parse_set(&format!("seed={seed}")).unwrap();
                let loaded = base.load(&[set]).unwrap_or_else(|e| panic!("{name}: {e}"));
                assert_eq!(loaded.seed_and_run(), (seed, 1), "{name}");
            }
            let parses = PARSES.with(std::cell::Cell::get) - before;
            assert_eq!(parses, 1, "{name}: parsed {parses} times for 3 loads");
        }
    }
}
