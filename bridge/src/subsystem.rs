//! Subsystems: a block diagram in its own TOML file, used by a graph
//! scenario (or by another subsystem) as one component with its own ports.
//!
//! ```toml
//! # pid.toml: its own components and connections, and its ports.
//! [[inputs]]
//! name = "e"
//! to = "sample.u"          # or a list: every inner input it drives
//! [[outputs]]
//! name = "force"
//! from = "sum.y"
//! [[components]]
//! ...
//! ```
//!
//! A component `{ name = "pid", subsystem = "pid.toml" }` (the path relative
//! to the file that names it) is replaced, where it stands, by the
//! subsystem's components named `pid/<name>` on `pid`'s node; a connection
//! to `pid.e` goes to every inner input `e` drives, one from `pid.force`
//! comes from `sum.y` (an element of a port, `pid.e[1]`, is that element of
//! the inner port). So the graph that runs is the same graph as the blocks
//! written inline, and gives the same numbers. Subsystems nest; a file that
//! includes itself, directly or not, is refused naming the chain of files.
//!
//! Files the components name (an `equations` model's `source`, a
//! `from_csv` block's `file`) are read here too, relative to the file that
//! names them, through the input size cap ([`crate::input::read_input`]);
//! an FMU plant's or controller's `path` is made relative to that file
//! (the FMU is read when the graph is built), as a loop's is.
//!
//! Every component and connection of the expanded scenario remembers the
//! file and the key it was written at ([`Origins`]), so an error found when
//! the graph is built names the included file, its line and its own key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use controlsim::blocks::BlockConfig;
use controlsim::equations::Source;
use controlsim::graph::{Elements, PortAddress};
use controlsim::{ControllerConfig, PlantConfig};
use serde::{Deserialize, Serialize};

use crate::graph_scenario::{ComponentScenario, ConnectionScenario, GraphScenario, NodeName};
use crate::input::read_input;
use crate::scenario_file::{self, KeyPath, LoadError, Override, ScenarioError, Segment};

/// The most components a scenario has once its subsystems are expanded: a
/// file may include another twice, and that one the next twice, so the
/// count can grow as a power of the depth.
pub const MAX_EXPANDED_COMPONENTS: usize = 100_000;

/// A subsystem file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubsystemFile {
    /// Input ports: a name and the inner inputs it drives.
    #[serde(default)]
    pub inputs: Vec<InputPort>,
    /// Output ports: a name and the inner output it is.
    #[serde(default)]
    pub outputs: Vec<OutputPort>,
    pub components: Vec<ComponentScenario>,
    #[serde(default)]
    pub connections: Vec<ConnectionScenario>,
}

/// `[[inputs]]` of a subsystem file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InputPort {
    pub name: String,
    /// `component.port` inside the subsystem, or a list of them.
    pub to: Targets,
}

/// One inner input, or several.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Targets {
    One(String),
    Many(Vec<String>),
}

impl Targets {
    fn list(&self) -> Vec<&str> {
        match self {
            Targets::One(s) => vec![s.as_str()],
            Targets::Many(v) => v.iter().map(String::as_str).collect(),
        }
    }
}

/// `[[outputs]]` of a subsystem file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputPort {
    pub name: String,
    /// `component.port` inside the subsystem.
    pub from: String,
}

/// Where each expanded component and connection was written: a file (an
/// index into `files`, the scenario first, each with its text; only the
/// scenario file has overrides) and its index in that file's list.
#[derive(Clone, Debug, Default)]
pub struct Origins {
    files: Vec<scenario_file::Source>,
    components: Vec<(usize, usize)>,
    connections: Vec<(usize, usize)>,
}

impl Origins {
    /// A problem at a key of the expanded scenario, located in the file and
    /// at the key it was written at: `components[i]` and `connections[j]`
    /// of the expanded lists are the entries of the file that wrote them.
    pub fn locate(&self, mut error: ScenarioError) -> LoadError {
        let mut file = 0;
        if let [Segment::Key(list), Segment::Index(index), ..] = error.key.0.as_mut_slice() {
            let origins = match list.as_str() {
                "components" => Some(&self.components),
                "connections" => Some(&self.connections),
                _ => None,
            };
            if let Some(&(at_file, at)) = origins.and_then(|o| o.get(*index)) {
                (file, *index) = (at_file, at);
            }
        }
        self.files[file].locate(error)
    }
}

/// Expands every subsystem of `scenario` (read from `path` with
/// `overrides`) and reads the files its components name.
///
/// # Errors
/// [`LoadError`] located in the file (scenario or subsystem) and at the key
/// where the problem is written.
pub fn expand(
    path: &Path,
    text: &str,
    overrides: &[Override],
    mut scenario: GraphScenario,
) -> Result<(GraphScenario, Origins), LoadError> {
    let mut x = Expander {
        origins: Origins {
            files: vec![scenario_file::Source::new(path, text, overrides)],
            ..Origins::default()
        },
        components: Vec::new(),
        stack: vec![canonical(path)],
    };
    let components = std::mem::take(&mut scenario.components);
    let connections = std::mem::take(&mut scenario.connections);
    let level = x.level(0, path, "", None, components, connections)?;
    scenario.components = x.components;
    // The scenario's own connections keep their indices (flow names and
    // keys go by them); extra targets of an input port and the
    // subsystems' own connections follow.
    let (own, rest): (Vec<_>, Vec<_>) = level.connections.into_iter().partition(|c| c.own);
    for c in own.into_iter().chain(rest) {
        x.origins.connections.push(c.origin);
        scenario.connections.push(c.connection);
    }
    Ok((scenario, x.origins))
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// An expanded connection, its origin, and whether it is the first (or
/// only) expansion of a connection of the scenario file itself.
struct Expanded {
    connection: ConnectionScenario,
    origin: (usize, usize),
    own: bool,
}

/// The outcome of expanding one file: its connections, and (for a
/// subsystem) its ports as expanded addresses.
struct Level {
    connections: Vec<Expanded>,
    /// The subsystems the file uses, by component name.
    used: BTreeMap<String, Used>,
    inputs: BTreeMap<String, Vec<String>>,
    outputs: BTreeMap<String, String>,
}

/// A subsystem used in a file: its file name and ports.
struct Used {
    file: String,
    inputs: BTreeMap<String, Vec<String>>,
    outputs: BTreeMap<String, String>,
}

struct Expander {
    origins: Origins,
    components: Vec<ComponentScenario>,
    /// The files being expanded, outermost first (canonical paths).
    stack: Vec<PathBuf>,
}

impl Expander {
    fn error(&self, file: usize, key: &KeyPath, message: &str) -> LoadError {
        self.origins.files[file].locate(ScenarioError::new(key, message))
    }

    /// Expands the components and connections of file `file` (at `path`),
    /// naming its components `prefix<name>` on `node` (`None`: the
    /// scenario file, whose components keep their own nodes).
    fn level(
        &mut self,
        file: usize,
        path: &Path,
        prefix: &str,
        node: Option<&Option<NodeName>>,
        components: Vec<ComponentScenario>,
        connections: Vec<ConnectionScenario>,
    ) -> Result<Level, LoadError> {
        let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let mut used: BTreeMap<String, Used> = BTreeMap::new();
        let mut deferred = Vec::new();
        let mut names = std::collections::BTreeSet::new();
        // Components with a `mobility` table: (index among all, index here).
        let mut moving = Vec::new();
        for (i, mut c) in components.into_iter().enumerate() {
            let key = KeyPath::key("components").at(i);
            if !names.insert(c.name.clone())
                && (c.subsystem.is_some() || used.contains_key(&c.name))
            {
                return Err(self.error(
                    file,
                    &key.child("name"),
                    &format!("a second component named `{}`", c.name),
                ));
            }
            if let Some(inherited) = node {
                if c.node.is_some() {
                    return Err(self.error(
                        file,
                        &key.child("node"),
                        "a subsystem's components run on the node of the component that uses it: \
                         remove `node` here",
                    ));
                }
                c.node = inherited.clone();
            }
            let Some(sub) = c.subsystem.take() else {
                self.read_files(file, &key, &base_dir, &mut c)?;
                c.name = format!("{prefix}{}", c.name);
                if c.mobility.is_some() {
                    moving.push((self.components.len(), i));
                }
                self.origins.components.push((file, i));
                self.components.push(c);
                if self.components.len() > MAX_EXPANDED_COMPONENTS {
                    return Err(self.error(
                        file,
                        &key.child("name"),
                        &format!(
                            "the scenario has more than {MAX_EXPANDED_COMPONENTS} components once its \
                             subsystems are expanded"
                        ),
                    ));
                }
                continue;
            };
            let sub_key = key.child("subsystem");
            if c.has_kind() {
                return Err(self.error(
                    file,
                    &sub_key,
                    "a subsystem component has no kind table of its own (`plant`, `block`, ...): \
                     its file says what it computes",
                ));
            }
            let sub_path = base_dir.join(&sub);
            let canon = canonical(&sub_path);
            if let Some(at) = self.stack.iter().position(|p| *p == canon) {
                let chain: Vec<String> = self.stack[at..]
                    .iter()
                    .chain(std::iter::once(&canon))
                    .map(|p| p.display().to_string())
                    .collect();
                return Err(self.error(
                    file,
                    &sub_key,
                    &format!("includes itself: {}", chain.join(" -> ")),
                ));
            }
            let text = read_input(&sub_path).map_err(|e| {
                self.error(
                    file,
                    &sub_key,
                    &format!("cannot read {}: {e}", sub_path.display()),
                )
            })?;
            let parsed: SubsystemFile =
                scenario_file::deserialize_with_overrides(&sub_path, &text, &[], |_| None)?;
            let sub_file = self.origins.files.len();
            self.origins
                .files
                .push(scenario_file::Source::new(&sub_path, &text, &[]));
            self.stack.push(canon);
            let inner_prefix = format!("{prefix}{}/", c.name);
            let inherited = node.cloned().unwrap_or(c.node.clone());
            let level = self.level(
                sub_file,
                &sub_path,
                &inner_prefix,
                Some(&inherited),
                parsed.components.clone(),
                parsed.connections.clone(),
            )?;
            self.stack.pop();
            let level = self.ports(sub_file, &inner_prefix, &parsed, level)?;
            deferred.extend(level.connections);
            used.insert(
                c.name.clone(),
                Used {
                    file: sub,
                    inputs: level.inputs,
                    outputs: level.outputs,
                },
            );
        }
        // A `mobility` table names output elements as a connection's `from`
        // does, so they are renamed the same way, once every subsystem of
        // this level is known.
        for (at, i) in moving {
            let mut mobility = self.components[at].mobility.take();
            if let Some(m) = mobility.as_mut() {
                for (field, text) in [("position", &mut m.position), ("velocity", &mut m.velocity)]
                {
                    let Some(text) = text else { continue };
                    let key = KeyPath::key("components").at(i).and("mobility").and(field);
                    if let Some(renamed) =
                        self.address(file, &key, text, prefix, &used, true)?.pop()
                    {
                        *text = renamed;
                    }
                }
            }
            self.components[at].mobility = mobility;
        }
        let mut out = Vec::new();
        for (j, conn) in connections.into_iter().enumerate() {
            let key = KeyPath::key("connections").at(j);
            let from = self.address(file, &key.child("from"), &conn.from, prefix, &used, true)?;
            let to = self.address(file, &key.child("to"), &conn.to, prefix, &used, false)?;
            if to.len() > 1 && conn.first_flow_key().is_some() {
                return Err(self.error(
                    file,
                    &key.child("to"),
                    "drives a subsystem input that goes to several inner inputs, so it cannot be one \
                     network flow: route the input through one inner block (a `gain` of 1) instead",
                ));
            }
            for (n, to) in to.into_iter().enumerate() {
                out.push(Expanded {
                    connection: ConnectionScenario {
                        from: from[0].clone(),
                        to,
                        ..conn.clone()
                    },
                    origin: (file, j),
                    own: node.is_none() && n == 0,
                });
            }
        }
        out.extend(deferred);
        Ok(Level {
            connections: out,
            used,
            inputs: BTreeMap::new(),
            outputs: BTreeMap::new(),
        })
    }

    /// The ports of subsystem file `file` as expanded addresses.
    fn ports(
        &mut self,
        file: usize,
        prefix: &str,
        parsed: &SubsystemFile,
        mut level: Level,
    ) -> Result<Level, LoadError> {
        // Nested subsystems' ports were resolved into `level.connections`;
        // the ports of this file name its own components (or a nested
        // subsystem's port, resolved the same way).
        let used = std::mem::take(&mut level.used);
        let names: Vec<&str> = parsed.components.iter().map(|c| c.name.as_str()).collect();
        // A port names a component of this file (or a nested subsystem).
        let known = |key: &KeyPath, text: &str| -> Result<(), LoadError> {
            let a = PortAddress::parse(text).map_err(|m| self.error(file, key, &m))?;
            if names.contains(&a.component.as_str()) {
                return Ok(());
            }
            Err(self.error(
                file,
                key,
                &format!(
                    "`{}` is no component of this subsystem (its components: {})",
                    a.component,
                    names.join(", ")
                ),
            ))
        };
        for (k, p) in parsed.inputs.iter().enumerate() {
            let key = KeyPath::key("inputs").at(k);
            if level.inputs.contains_key(&p.name) {
                return Err(self.error(file, &key.child("name"), "a second input of this name"));
            }
            let mut all = Vec::new();
            for (n, t) in p.to.list().into_iter().enumerate() {
                let k2 = match p.to {
                    Targets::One(_) => key.child("to"),
                    Targets::Many(_) => key.child("to").at(n),
                };
                known(&k2, t)?;
                all.extend(self.address(file, &k2, t, prefix, &used, false)?);
            }
            level.inputs.insert(p.name.clone(), all);
        }
        for (k, p) in parsed.outputs.iter().enumerate() {
            let key = KeyPath::key("outputs").at(k);
            if level.outputs.contains_key(&p.name) {
                return Err(self.error(file, &key.child("name"), "a second output of this name"));
            }
            known(&key.child("from"), &p.from)?;
            let from = self.address(file, &key.child("from"), &p.from, prefix, &used, true)?;
            level.outputs.insert(p.name.clone(), from[0].clone());
        }
        Ok(level)
    }

    /// The expanded addresses of `text` (an output: one; an input: the
    /// inner inputs a subsystem port drives, or one).
    fn address(
        &self,
        file: usize,
        key: &KeyPath,
        text: &str,
        prefix: &str,
        used: &BTreeMap<String, Used>,
        output: bool,
    ) -> Result<Vec<String>, LoadError> {
        let Ok(a) = PortAddress::parse(text) else {
            // The graph builder reports a malformed address at this key.
            return Ok(vec![format!("{prefix}{text}")]);
        };
        let Some(sub) = used.get(&a.component) else {
            return Ok(vec![format!("{prefix}{text}")]);
        };
        let inner = if output {
            sub.outputs.get(&a.port).map(|s| vec![s.clone()])
        } else {
            sub.inputs.get(&a.port).cloned()
        };
        let Some(inner) = inner else {
            let (what, names): (&str, Vec<&String>) = if output {
                ("output", sub.outputs.keys().collect())
            } else {
                ("input", sub.inputs.keys().collect())
            };
            let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
            return Err(self.error(
                file,
                key,
                &format!(
                    "`{}` is the subsystem {} and has no {what} `{}` (its {what}s: {})",
                    a.component,
                    sub.file,
                    a.port,
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                ),
            ));
        };
        inner
            .into_iter()
            .map(|t| narrow(&t, &a.elements).map_err(|m| self.error(file, key, &m)))
            .collect()
    }

    /// Reads the files component `c` names, relative to `base_dir`, and
    /// makes its FMU's `path` relative to `base_dir`.
    fn read_files(
        &self,
        file: usize,
        key: &KeyPath,
        base_dir: &Path,
        c: &mut ComponentScenario,
    ) -> Result<(), LoadError> {
        let read = |field: &'static str, name: &str| -> Result<Source, LoadError> {
            let p = base_dir.join(name);
            read_input(&p)
                .map(|text| Source {
                    name: p.display().to_string(),
                    text,
                })
                .map_err(|e| {
                    self.error(
                        file,
                        &key.clone().join(field),
                        &format!("cannot read {}: {e}", p.display()),
                    )
                })
        };
        if let Some(ControllerConfig::Equations(e)) = &mut c.controller {
            if let (Some(src), None, None) = (&e.source, &e.equations, &e.loaded) {
                e.loaded = Some(read("controller.source", src)?);
            }
        }
        if let Some(ControllerConfig::Fmu(f)) = &mut c.controller {
            f.path = base_dir.join(&f.path);
        }
        if let Some(PlantConfig::Fmu(f)) = &mut c.plant {
            f.path = base_dir.join(&f.path);
        }
        match (&mut c.plant, &mut c.block) {
            (Some(PlantConfig::Equations(e)), _) => {
                if let (Some(src), None, None) = (&e.source, &e.equations, &e.loaded) {
                    e.loaded = Some(read("plant.source", src)?);
                }
            }
            (_, Some(BlockConfig::Equations(e))) => {
                if let (Some(src), None, None) = (&e.source, &e.equations, &e.loaded) {
                    e.loaded = Some(read("block.source", src)?);
                }
            }
            (_, Some(BlockConfig::FromCsv(b))) if b.loaded.is_none() => {
                b.loaded = Some(read("block.file", &b.file)?);
            }
            _ => {}
        }
        Ok(())
    }
}

/// The elements `outer` (of a subsystem port) of the inner address `inner`.
fn narrow(inner: &str, outer: &Elements) -> Result<String, String> {
    let Elements::Range(o) = outer else {
        return Ok(inner.to_string());
    };
    let a = PortAddress::parse(inner)?;
    let head = format!("{}.{}", a.component, a.port);
    Ok(match a.elements {
        Elements::All => format!("{head}[{}..{}]", o.start, o.end),
        Elements::Range(r) => {
            if o.end > r.len() {
                return Err(format!(
                    "elements {}..{} of a port of {} elements ({inner})",
                    o.start,
                    o.end,
                    r.len()
                ));
            }
            format!("{head}[{}..{}]", r.start + o.start, r.start + o.end)
        }
    })
}
