//! Loading a scenario file the way a user meets it: with overrides
//! (`--set key=value`, `--network`, sweep parameters) and with errors that
//! point into the file.
//!
//! # Steps
//! 1. The file is parsed as TOML; a syntax error is the toml crate's own,
//!    with line, column and the offending text.
//! 2. Overrides are applied to the parsed tree by dotted key path
//!    ([`KeyPath`]: `loops[0].controller.kp`, or `loops.0.controller.kp`).
//! 3. The tree is deserialised into a [`Scenario`]; a type error, an unknown
//!    key or a missing key comes back with the path of the key
//!    (serde_path_to_error) and what serde refused as data
//!    ([`crate::serde_fault`]: the unknown key, the value, the names it
//!    expected), which makes the key precise inside a `kind = "..."` table.
//! 4. [`Scenario::resolve`] checks the step grid, nodes and ports; then the
//!    control side is built once (`System::from_config`) and the builtin
//!    channel is checked, so that every problem a run would hit before its
//!    first step is found here and reported as bad input, naming its key.
//! 5. Every error key is mapped back to the place in the file that defines
//!    it (or to the override that set it) using the spans of a second,
//!    span-keeping parse of the original text. A key that is missing points
//!    at the table that should hold it.
//!
//! The printed form of an error ([`ScenarioError`]'s `Display`, once
//! located) reads like a
//! compiler's:
//!
//! ```text
//! error: `loops[0].sensor.period`: 15ms is not a multiple of the step 10ms
//!   --> servo.toml:42:1
//!    |
//! 42 | period = "15ms"
//!    | ^^^^^^^^^^^^^^^
//!    = expected: a duration on the step grid
//! ```

use std::path::{Path, PathBuf};

use protocol::SimTime;
use serde::Deserialize;
use toml::de::{DeTable, DeValue};
use toml::Spanned;

use crate::built::Built;
use crate::config::{
    Backend, DescribedConfig, Ns3NetworkConfig, Resolved, Scenario, CUSTOM_KIND, LAST_TIME,
    LAST_TIME_TEXT,
};
use crate::input::{read_input, shorten_lines, ReadError};
pub use crate::keyed::{Expected, KeyPath, Place, ScenarioError, Segment, Span};
use crate::network::{BuiltinError, BuiltinNetwork, DelayReach};
use crate::network_schema;
use crate::serde_fault::{Fault, Found, TreeError};
use crate::server_command::{self, NetworkCheck};

/// A value put into the scenario at a key path, and where it came from (for
/// error messages: `--set loops[0].controller.kp=abc`).
#[derive(Clone, Debug, PartialEq)]
pub struct Override {
    pub path: KeyPath,
    pub value: toml::Value,
    pub origin: String,
}

impl Override {
    /// Parses a `--set key=value` argument. The value is read as a TOML value
    /// (`25`, `0.5`, `true`, `"text"`, `[1, 2]`, `{ kind = "constant", value = "2ms" }`);
    /// anything that is not valid TOML is taken as a string, so
    /// `duration=5s` and `network.backend=builtin` need no quotes.
    ///
    /// # Errors
    /// No `=`, or a bad key path.
    pub fn parse_set(arg: &str) -> Result<Override, String> {
        let (key, value) = arg.split_once('=').ok_or_else(|| {
            format!("--set {arg}: expected key=value, e.g. --set loops[0].controller.kp=25")
        })?;
        let path = KeyPath::parse(key).map_err(|e| format!("--set {arg}: {e}"))?;
        Ok(Override {
            path,
            value: parse_value(value),
            origin: format!("--set {arg}"),
        })
    }
}

/// A TOML value from text, or the text itself as a string.
pub fn parse_value(text: &str) -> toml::Value {
    let text = text.trim();
    match toml::from_str::<toml::Table>(&format!("v = {text}")) {
        Ok(mut t) => t
            .remove("v")
            .unwrap_or_else(|| toml::Value::String(text.to_string())),
        Err(_) => toml::Value::String(text.to_string()),
    }
}

/// Puts `value` at `path` in `root`, creating missing tables on the way.
///
/// # Errors
/// A path through something that is not a table (or not an array, for an
/// index), or an index past the end of an array.
pub fn set_value(root: &mut toml::Table, path: &KeyPath, value: toml::Value) -> Result<(), String> {
    let segments = &path.0;
    let Some((Segment::Key(first), rest)) = segments.split_first() else {
        return Err(format!("`{path}` must start with a key"));
    };
    if rest.is_empty() {
        root.insert(first.clone(), value);
        return Ok(());
    }
    let mut current = root
        .entry(first.clone())
        .or_insert_with(|| new_container(&rest[0]));
    let mut walked = KeyPath(vec![segments[0].clone()]);
    for (i, seg) in rest.iter().enumerate() {
        let last = i + 1 == rest.len();
        let type_name = current.type_str();
        match seg {
            Segment::Key(k) => {
                let table = current.as_table_mut().ok_or_else(|| {
                    format!(
                        "`{walked}` is {} {type_name}, not a table, so it has no key `{k}`",
                        article(type_name)
                    )
                })?;
                if last {
                    table.insert(k.clone(), value);
                    return Ok(());
                }
                current = table
                    .entry(k.clone())
                    .or_insert_with(|| new_container(&rest[i + 1]));
            }
            Segment::Index(n) => {
                let array = current.as_array_mut().ok_or_else(|| {
                    format!(
                        "`{walked}` is {} {type_name}, not an array, so it has no index [{n}]",
                        article(type_name)
                    )
                })?;
                let len = array.len();
                if *n > len || (*n == len && !last) {
                    return Err(format!(
                        "`{walked}` has {len} entries, so [{n}] does not exist"
                    ));
                }
                if *n == len {
                    array.push(value);
                    return Ok(());
                }
                if last {
                    array[*n] = value;
                    return Ok(());
                }
                current = &mut array[*n];
            }
        }
        walked.0.push(seg.clone());
    }
    unreachable!("the loop returns at the last segment")
}

fn new_container(next: &Segment) -> toml::Value {
    match next {
        Segment::Key(_) => toml::Value::Table(toml::Table::new()),
        Segment::Index(_) => toml::Value::Array(Vec::new()),
    }
}

fn article(type_name: &str) -> &'static str {
    if type_name.starts_with(['a', 'e', 'i', 'o', 'u']) {
        "an"
    } else {
        "a"
    }
}

/// Why a scenario could not be loaded. Every variant is bad input.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: ReadError },
    /// A syntax error: the toml crate's report, which shows line and column.
    #[error("{}: invalid TOML\n{message}", path.display())]
    Syntax { path: PathBuf, message: String },
    /// A problem at a key: a value the checks refuse, or an override that
    /// cannot be applied (`--set` through a non-table), located at the
    /// override.
    #[error("{0}")]
    Invalid(Box<ScenarioError>),
}

impl LoadError {
    /// The key path the error is about, if any.
    pub fn key(&self) -> Option<&KeyPath> {
        match self {
            LoadError::Invalid(l) if !l.key.is_empty() => Some(&l.key),
            _ => None,
        }
    }
}

/// A scenario's file as read and the overrides put into it: what locates
/// a problem found after loading (by the ns-3 server, say) in the file.
#[derive(Clone, Debug)]
pub struct Source {
    path: PathBuf,
    text: String,
    overrides: Vec<Override>,
}

impl Source {
    /// The file `text` was read from, with `overrides` applied.
    pub fn new(path: &Path, text: &str, overrides: &[Override]) -> Source {
        Source {
            path: path.to_path_buf(),
            text: text.to_string(),
            overrides: overrides.to_vec(),
        }
    }

    /// A problem at its key, located in the file (or at the override that
    /// set it) like any other.
    pub fn locate(&self, error: ScenarioError) -> LoadError {
        Locator {
            file: &self.path,
            text: &self.text,
            overrides: &self.overrides,
        }
        .locate(error)
    }
}

/// A loaded, resolved, checked and built scenario.
#[derive(Debug)]
pub struct Loaded {
    pub path: PathBuf,
    /// The directory relative paths in the scenario are relative to.
    pub base_dir: PathBuf,
    pub resolved: Resolved,
    /// The control side built from `resolved`; a run takes it
    /// ([`crate::run::run_built`]).
    pub built: Built,
    /// The file's text and the overrides, to locate later problems.
    pub source: Source,
}

impl Loaded {
    /// A problem at its key found after loading (by the ns-3 server, say),
    /// located in the file like any other.
    pub fn locate(&self, error: ScenarioError) -> LoadError {
        self.source.locate(error)
    }

    /// Asks the ns-3 server whether it accepts the scenario's network
    /// (`netloop-server --check`); a program the scenario names itself is run
    /// only `with_server`. See [`crate::server_command::check_network`].
    ///
    /// # Errors
    /// The rejected argument's key, located. `Ok(Some(note))` when there is
    /// no server to ask, or its program was not run: the values are then
    /// checked when a run starts.
    pub fn check_network(&self, with_server: bool) -> Result<Option<String>, LoadError> {
        check_network(&self.resolved, &self.base_dir, with_server, |error| {
            self.locate(error)
        })
    }
}

/// [`Loaded::check_network`] for any resolved network side (a loop or a
/// graph scenario's), a rejection located by `locate`.
///
/// # Errors
/// As [`Loaded::check_network`].
pub fn check_network(
    resolved: &Resolved,
    base_dir: &Path,
    with_server: bool,
    locate: impl Fn(ScenarioError) -> LoadError,
) -> Result<Option<String>, LoadError> {
    match server_command::check_network(resolved, base_dir, with_server) {
        NetworkCheck::Accepted | NetworkCheck::NotApplicable => Ok(None),
        NetworkCheck::Skipped { binary } => Ok(Some(format!(
            "the network's program {} was not run, so its network was not checked (--with-server runs it)",
            binary.display()
        ))),
        NetworkCheck::NoServer { binary, reason } => Ok(Some(format!(
            "the ns-3 network was not checked: cannot ask {} ({reason})",
            binary.display()
        ))),
        NetworkCheck::Rejected { key, message } => {
            Err(locate(ScenarioError::new(key, message)))
        }
    }
}

/// Reads, overrides, resolves and checks a scenario file.
///
/// # Errors
/// [`LoadError`], every variant of which is bad input (exit code 2).
pub fn load(path: &Path, overrides: &[Override]) -> Result<Loaded, LoadError> {
    let text = read_input(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    load_text(path, &text, overrides)
}

/// The override that `--network builtin|ns3` stands for.
pub fn backend_override(backend: Backend) -> Override {
    Override {
        path: KeyPath(vec![
            Segment::Key("network".into()),
            Segment::Key("backend".into()),
        ]),
        value: toml::Value::String(backend.to_string()),
        origin: format!("--network {backend}"),
    }
}

/// [`load`] on text already read; `path` names it in messages and gives the
/// base directory.
///
/// # Errors
/// As [`load`].
pub fn load_text(path: &Path, text: &str, overrides: &[Override]) -> Result<Loaded, LoadError> {
    let table = parse_table(path, text)?;
    load_table(path, text, table, overrides)
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
) -> Result<Loaded, LoadError> {
    load_table(path, text, table, overrides)
}

/// Parses a scenario file's text (the one parse of a file loaded through
/// [`crate::loaded_scenario::ScenarioBase`]).
///
/// # Errors
/// [`LoadError::Syntax`], the toml crate's report.
pub(crate) fn parse_table(path: &Path, text: &str) -> Result<toml::Table, LoadError> {
    #[cfg(test)]
    tests::PARSES.with(|n| n.set(n.get() + 1));
    toml::from_str(text).map_err(|e| LoadError::Syntax {
        path: path.to_path_buf(),
        message: shorten_lines(e.to_string().trim_end()),
    })
}

/// Applies `--set` overrides to a parsed file and refuses a non-finite
/// number anywhere in the result, located by `locator`.
fn apply_overrides(table: &mut toml::Table, locator: &Locator) -> Result<(), LoadError> {
    for o in locator.overrides {
        set_value(table, &o.path, o.value.clone()).map_err(|message| {
            LoadError::Invalid(Box::new(ScenarioError {
                span: Some(Span {
                    file: locator.file.to_path_buf(),
                    place: Place::Override(o.origin.clone()),
                    note: None,
                }),
                ..ScenarioError::new(o.path.clone(), message)
            }))
        })?;
    }
    if let Some((key, value)) = first_non_finite(table) {
        let message = format!("must be a finite number, found {value}");
        return Err(locator.locate(ScenarioError {
            expected: Some("a finite number".into()),
            ..ScenarioError::new(key, message)
        }));
    }
    Ok(())
}

/// [`load_text`] once `text` is parsed into `table`.
fn load_table(
    path: &Path,
    text: &str,
    mut table: toml::Table,
    overrides: &[Override],
) -> Result<Loaded, LoadError> {
    let locator = Locator {
        file: path,
        text,
        overrides,
    };
    apply_overrides(&mut table, &locator)?;
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let scenario: Scenario = deserialize_table(&locator, &table, &base_dir, |s: &mut Scenario| {
        Some(&mut s.network)
    })?;
    let mut resolved = scenario.resolve().map_err(|e| locator.locate(e))?;
    // FMU paths are relative to the scenario file.
    resolved.system.resolve_paths(&base_dir);
    crate::fmu_checks::check_rollback(&resolved).map_err(|e| locator.locate(e))?;
    let line_of = |key: &KeyPath| match locator.find(key) {
        Place::File { line, text, .. } => Some((line, text)),
        _ => None,
    };
    crate::model_files::read_model_files(&mut resolved.system, &base_dir, path, line_of)
        .map_err(|e| locator.locate(e))?;
    // Built once, here, builtin network too: the run takes it as it is.
    let built = Built::new(&resolved, &base_dir).map_err(|e| locator.locate(e))?;
    tracing::debug!(
        file = %path.display(),
        overrides = overrides.len(),
        config_hash = %crate::run::config_hash(&resolved.scenario),
        "scenario loaded and checked"
    );
    Ok(Loaded {
        path: path.to_path_buf(),
        base_dir,
        resolved,
        built,
        source: Source {
            path: path.to_path_buf(),
            text: text.to_string(),
            overrides: overrides.to_vec(),
        },
    })
}

/// A kind's table, checked against its schema: this checkout's server's
/// ([`network_schema::standard`]) if it has the kind, else that of the
/// server the scenario runs (`--describe`, cached). On the builtin backend
/// a program the scenario names is not run to check it (its table is kept
/// unchecked), and when the default server cannot be asked, this
/// checkout's kinds are the ones to write.
fn described_network(
    network: &crate::config::NetworkConfig,
    base_dir: &Path,
    kind: String,
    keys: toml::Table,
) -> Result<Ns3NetworkConfig, ScenarioError> {
    let standard = network_schema::standard();
    if let Some(kind_schema) = standard.kind(&kind) {
        return DescribedConfig::new(std::sync::Arc::new(kind_schema.clone()), keys)
            .map(Ns3NetworkConfig::Described);
    }
    let on_ns3 = network.backend == Backend::Ns3;
    if !on_ns3 && network.server.binary.is_some() {
        return Ok(Ns3NetworkConfig::Described(DescribedConfig::unchecked(
            kind, keys,
        )));
    }
    let known: Vec<String> = standard
        .kinds
        .iter()
        .map(|k| k.name.clone())
        .chain(std::iter::once(CUSTOM_KIND.to_string()))
        .collect();
    let listed = |kinds: &[String]| {
        kinds
            .iter()
            .map(|k| format!("`{k}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let binary = server_command::server_binary(&network.server, base_dir);
    let schema = match network_schema::describe(&binary) {
        Ok(schema) => schema,
        // Nothing will run it: this checkout's kinds are the ones to write.
        Err(_) if !on_ns3 => {
            return Err(ScenarioError {
                expected: Some(Expected::Variants(known)),
                ..ScenarioError::new(
                    "network.ns3.kind",
                    format!("unknown network kind `{kind}`"),
                )
            })
        }
        Err(e) => return Err(ScenarioError::new("network.ns3.kind", format!(
            "`{kind}` is not one of the kinds of this checkout's server ({}), so the server must describe it: {e}",
            listed(&known)
        ))),
    };
    let Some(kind_schema) = schema.kind(&kind) else {
        let mut all = known;
        for k in &schema.kinds {
            if !all.contains(&k.name) {
                all.push(k.name.clone());
            }
        }
        return Err(ScenarioError {
            expected: Some(Expected::Variants(all)),
            ..ScenarioError::new(
                "network.ns3.kind",
                format!(
                    "unknown network kind `{kind}`: {} does not describe it",
                    binary.display()
                ),
            )
        });
    };
    DescribedConfig::new(std::sync::Arc::new(kind_schema.clone()), keys)
        .map(Ns3NetworkConfig::Described)
}

/// Parses TOML text with overrides into any config type with an optional
/// `[network]` (`network_of` finds it), with the located errors of
/// scenarios (used for graph scenarios, whose type is not [`Scenario`]).
///
/// # Errors
/// A syntax error, an override that cannot be applied, a non-finite number,
/// a located type / unknown-key / missing-key error, or a network kind's
/// table its schema refuses.
pub fn deserialize_with_overrides<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
    overrides: &[Override],
    network_of: impl FnOnce(&mut T) -> Option<&mut crate::config::NetworkConfig>,
) -> Result<T, LoadError> {
    let table = parse_table(path, text)?;
    deserialize_parsed(path, text, table, overrides, network_of)
}

/// [`deserialize_with_overrides`] of text already parsed into `table`.
///
/// # Errors
/// As [`deserialize_with_overrides`], but for the syntax.
pub(crate) fn deserialize_parsed<T: for<'de> Deserialize<'de>>(
    path: &Path,
    text: &str,
    mut table: toml::Table,
    overrides: &[Override],
    network_of: impl FnOnce(&mut T) -> Option<&mut crate::config::NetworkConfig>,
) -> Result<T, LoadError> {
    let locator = Locator {
        file: path,
        text,
        overrides,
    };
    apply_overrides(&mut table, &locator)?;
    let base_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    deserialize_table(&locator, &table, &base_dir, network_of)
}

/// Deserializes a scenario's tree (overrides applied). A network kind the
/// bridge has no type for is the server's to describe: serde reads the
/// rest, the kind's schema its `[network.ns3]` table.
fn deserialize_table<T: for<'de> Deserialize<'de>>(
    locator: &Locator,
    table: &toml::Table,
    base_dir: &Path,
    network_of: impl FnOnce(&mut T) -> Option<&mut crate::config::NetworkConfig>,
) -> Result<T, LoadError> {
    let mut typed = table.clone();
    let described = crate::config::take_described_kind(&mut typed);
    let shared = crate::config::take_shared_tables(&mut typed);
    let mut value: T = crate::serde_fault::deserialize(toml::Value::Table(typed))
        .map_err(|e| locator.serde_error(table, crate::keyed::path_from_serde(e.path()), e.inner()))
        .map_err(with_shared_tables)?;
    let Some(network) = network_of(&mut value) else {
        return Ok(value);
    };
    if let Some((kind, keys)) = described {
        let ns3 =
            described_network(network, base_dir, kind, keys).map_err(|e| locator.locate(e))?;
        network.ns3 = Some(ns3);
    }
    network
        .read_shared_tables(shared)
        .map_err(|e| locator.locate(e))?;
    Ok(value)
}

/// An unknown key of `[network]` with the shared tables among the keys it
/// has: serde does not read them (the schema does), but they are written
/// there.
fn with_shared_tables(mut error: LoadError) -> LoadError {
    if let LoadError::Invalid(e) = &mut error {
        if let (Some(Expected::Keys(keys)), [Segment::Key(network), _]) =
            (&mut e.expected, e.key.0.as_slice())
        {
            if network == "network" {
                let standard = network_schema::standard();
                keys.extend(standard.tables.iter().map(|t| t.name.clone()));
            }
        }
    }
    error
}

/// A builtin network's channel, built once when the scenario is loaded
/// (loop and graph scenarios) and handed to the run as it is, its delays
/// checked to fit the run; `None` for another backend.
///
/// # Errors
/// The bad key and the message.
pub(crate) fn build_builtin(
    network: &crate::config::NetworkConfig,
    seed: u64,
    run: u64,
    duration: SimTime,
    base_dir: &Path,
) -> Result<Option<BuiltinNetwork>, ScenarioError> {
    let (Backend::Builtin, Some(builtin)) = (network.backend, &network.builtin) else {
        return Ok(None);
    };
    match BuiltinNetwork::new(builtin, seed, run, base_dir, &crate::input::read_input_text) {
        Err(e) => {
            let (key, message) = match &e {
                BuiltinError::Delay(m) => ("network.builtin.delay", m.clone()),
                BuiltinError::Loss(m) => ("network.builtin.loss", m.clone()),
                other => ("network.builtin", other.to_string()),
            };
            Err(ScenarioError::new(key, message))
        }
        Ok(network) => {
            check_delay_reach(network.delay_reach(), duration)?;
            Ok(Some(network))
        }
    }
}

/// Every arrival time of the builtin channel must fit in simulated time:
/// `duration` plus the furthest-reaching delay parameter must not pass
/// [`LAST_TIME`]. (A rare draw past it is handled at run time: the packet
/// never arrives.)
fn check_delay_reach(reach: &DelayReach, duration: SimTime) -> Result<(), ScenarioError> {
    if duration.as_nanos() as u128 + reach.nanos <= LAST_TIME.as_nanos() as u128 {
        return Ok(());
    }
    let shown = u64::try_from(reach.nanos)
        .map_or_else(|_| format!("{}ns", reach.nanos), |n| SimTime(n).to_string());
    Err(ScenarioError::new(KeyPath::from("network.builtin.delay").and(reach.key), format!(
            "a delay of {shown} ({}) after a duration of {duration} passes the last simulated instant: \
             duration + {} must be at most {LAST_TIME_TEXT}",
            reach.what, reach.what
        )))
}

/// Scenario keys that are saturation limits: an infinity there means "no
/// limit on that side", like leaving the key out, which one channel of a
/// per-channel list cannot do. The lower limits take -inf, the upper +inf.
fn infinity_allowed(path: &KeyPath, value: f64) -> bool {
    let keys: Vec<&str> = path
        .0
        .iter()
        .filter_map(|s| {
            if let Segment::Key(k) = s {
                Some(k.as_str())
            } else {
                None
            }
        })
        .collect();
    let upper = match keys.as_slice() {
        ["loops", "actuator", "min"] | ["loops", "controller", "u_min"] => false,
        ["loops", "actuator", "max"] | ["loops", "controller", "u_max"] => true,
        _ => return false,
    };
    value.is_infinite() && (value > 0.0) == upper
}

/// The first NaN or infinite number in the tree (depth first, in key order),
/// other than an allowed infinite limit, and its key path. TOML has `nan`
/// and `inf` literals, and `--set` values are TOML too; no scenario number
/// means anything when it is not finite.
fn first_non_finite(table: &toml::Table) -> Option<(KeyPath, f64)> {
    fn walk(value: &toml::Value, path: &mut KeyPath) -> Option<(KeyPath, f64)> {
        match value {
            toml::Value::Float(x) if !x.is_finite() && !infinity_allowed(path, *x) => {
                Some((path.clone(), *x))
            }
            toml::Value::Table(t) => t.iter().find_map(|(k, v)| {
                path.0.push(Segment::Key(k.clone()));
                let found = walk(v, path);
                path.0.pop();
                found
            }),
            toml::Value::Array(a) => a.iter().enumerate().find_map(|(i, v)| {
                path.0.push(Segment::Index(i));
                let found = walk(v, path);
                path.0.pop();
                found
            }),
            _ => None,
        }
    }
    table
        .iter()
        .find_map(|(k, v)| walk(v, &mut KeyPath(vec![Segment::Key(k.clone())])))
}

/// A problem at `key` of the TOML text `text` (read from `file`), located in
/// it. Used for files other than scenarios too (sweep files).
pub fn locate(file: &Path, text: &str, error: ScenarioError) -> ScenarioError {
    match (Locator {
        file,
        text,
        overrides: &[],
    })
    .locate(error)
    {
        LoadError::Invalid(located) => *located,
        _ => unreachable!("a located key is always LoadError::Invalid"),
    }
}

/// Maps key paths to places in the file.
struct Locator<'a> {
    file: &'a Path,
    text: &'a str,
    overrides: &'a [Override],
}

impl Locator<'_> {
    /// A serde error at `key`. Inside an internally tagged table
    /// (`kind = "..."`) serde's path stops at the table; the fault's own
    /// data (the unknown key's name, the value refused) makes it precise.
    fn serde_error(&self, table: &toml::Table, mut key: KeyPath, error: &TreeError) -> LoadError {
        match &error.fault {
            // `key`'s own key, else the one table under `key` that writes
            // it (a table in a tagged table: `external_force` in a plant's).
            Fault::UnknownField { field, .. } => {
                if key.0.last() != Some(&Segment::Key(field.clone())) {
                    let own = key.child(field);
                    key = match has_key(table, &own) {
                        true => own,
                        false => find_key(table, &key, field).unwrap_or(own),
                    };
                }
            }
            // Inside a tagged table: the kind itself, or a choice among its
            // keys (`topology = "ring"`), whichever holds the variant.
            Fault::UnknownVariant { variant, .. } => {
                let found = Found::Str(variant.clone());
                key = match find_value(table, &key, &found) {
                    Some(inner) => inner,
                    None if has_key(table, &key.child("kind")) => key.child("kind"),
                    None => key,
                };
            }
            Fault::WrongValue { found, .. } => {
                if let Some(inner) = find_value(table, &key, found) {
                    key = inner;
                }
            }
            // A missing key stays on its table: that is where it belongs.
            Fault::MissingField { .. } | Fault::Other => {}
        }
        let (message, expected) = serde_parts(error);
        self.locate(ScenarioError {
            key,
            message,
            expected,
            span: None,
        })
    }

    /// A problem a check found at its key, located: in the file, or at
    /// the override that set the key.
    fn locate(&self, mut error: ScenarioError) -> LoadError {
        let path = &error.key;
        let mut note = None;
        // Set by an override: blame the override.
        let place = if let Some(o) = self
            .overrides
            .iter()
            .rev()
            .find(|o| path.starts_with(&o.path))
        {
            Place::Override(o.origin.clone())
        } else {
            if let Some(o) = self
                .overrides
                .iter()
                .find(|o| o.path.starts_with(path) && !path.is_empty())
            {
                note = Some(format!("{} changed this table", o.origin));
            }
            self.find(path)
        };
        error.span = Some(Span {
            file: self.file.to_path_buf(),
            place,
            note,
        });
        LoadError::Invalid(Box::new(error))
    }

    /// The deepest part of `path` that the file writes, as a place.
    fn find(&self, path: &KeyPath) -> Place {
        let Ok(root) = DeTable::parse(self.text) else {
            return Place::Nowhere;
        };
        let root: &DeTable = root.get_ref();
        let mut value: Option<&Spanned<DeValue>> = None;
        // Best span so far: (key span, value span).
        let mut best: Option<(std::ops::Range<usize>, std::ops::Range<usize>)> = None;
        for seg in &path.0 {
            match seg {
                Segment::Key(k) => {
                    let table = match value {
                        None => Some(root),
                        Some(v) => v.get_ref().as_table(),
                    };
                    let Some(table) = table else { break };
                    let Some((key, v)) = table.iter().find(|(key, _)| key.get_ref() == k) else {
                        break;
                    };
                    best = Some((key.span(), v.span()));
                    value = Some(v);
                }
                Segment::Index(n) => {
                    let Some(v) = value
                        .and_then(|v| v.get_ref().as_array())
                        .and_then(|a| a.get(*n))
                    else {
                        break;
                    };
                    best = Some((v.span(), v.span()));
                    value = Some(v);
                }
            }
        }
        match best {
            None => Place::Nowhere,
            Some((key, value)) => self.place(key, value),
        }
    }

    /// The line holding `key`, underlining from the key to the end of its
    /// value when both are on that line.
    fn place(&self, key: std::ops::Range<usize>, value: std::ops::Range<usize>) -> Place {
        let text = self.text;
        let start = key.start.min(text.len());
        let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
        let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
        let line_text = text[line_start..line_end].trim_end_matches('\r');
        let line = text[..start].matches('\n').count() + 1;
        let column = text[line_start..start].chars().count();
        let end = if value.end <= line_end && value.end > start {
            value.end
        } else {
            key.end.min(line_end).max(start + 1)
        };
        let len = text[start..end.min(line_end).max(start)].chars().count();
        Place::File {
            line,
            column: column + 1,
            text: line_text.to_string(),
            underline: (column, len.max(1)),
        }
    }
}

/// The value at `path` of the tree; `None` for the empty path.
fn value_at<'a>(table: &'a toml::Table, path: &KeyPath) -> Option<&'a toml::Value> {
    let mut value: Option<&toml::Value> = None;
    for seg in &path.0 {
        value = Some(match (seg, value) {
            (Segment::Key(k), None) => table.get(k)?,
            (Segment::Key(k), Some(v)) => v.get(k.as_str())?,
            (Segment::Index(i), Some(v)) => v.get(*i)?,
            (Segment::Index(_), None) => return None,
        });
    }
    value
}

/// Whether the tree holds a value at `path`.
fn has_key(table: &toml::Table, path: &KeyPath) -> bool {
    value_at(table, path).is_some()
}

/// The unique value under `path` that is `found` (the value serde
/// refused), as a path; `None` when there is none or more than one.
fn find_value(table: &toml::Table, path: &KeyPath, found: &Found) -> Option<KeyPath> {
    let mut matches = Vec::new();
    collect_matches(value_at(table, path)?, path.clone(), found, &mut matches);
    (matches.len() == 1).then(|| matches.remove(0))
}

/// The unique key named `name` written under `path`, at any depth, as a path.
fn find_key(table: &toml::Table, path: &KeyPath, name: &str) -> Option<KeyPath> {
    fn walk(value: &toml::Value, path: &KeyPath, name: &str, found: &mut Vec<KeyPath>) {
        match value {
            toml::Value::Table(t) => {
                for (k, v) in t {
                    if k == name {
                        found.push(path.child(k));
                    }
                    walk(v, &path.child(k), name, found);
                }
            }
            toml::Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    walk(v, &path.clone().at(i), name, found);
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    if path.is_empty() {
        walk(&toml::Value::Table(table.clone()), path, name, &mut found);
    } else {
        walk(value_at(table, path)?, path, name, &mut found);
    }
    (found.len() == 1).then(|| found.remove(0))
}

fn collect_matches(value: &toml::Value, path: KeyPath, found: &Found, matches: &mut Vec<KeyPath>) {
    if found.is(value) && !path.is_empty() {
        matches.push(path.clone());
    }
    match value {
        toml::Value::Table(t) => {
            for (k, v) in t {
                collect_matches(v, path.child(k), found, matches);
            }
        }
        // An array refused as a whole is not looked for inside one.
        toml::Value::Array(a) if *found != Found::Array => {
            for (i, v) in a.iter().enumerate() {
                collect_matches(v, path.clone().at(i), found, matches);
            }
        }
        _ => {}
    }
}

/// The message and what was expected of a serde error, from its fault: the
/// names a table or a choice has as a list, a type in words.
fn serde_parts(error: &TreeError) -> (String, Option<Expected>) {
    let names = |names: &[&str]| names.iter().map(ToString::to_string).collect();
    // serde says "there are no fields" itself: the list is empty.
    let whole = || error.message().trim().to_string();
    match &error.fault {
        Fault::UnknownField { expected, .. } if expected.is_empty() => {
            (whole(), Some(Expected::Keys(Vec::new())))
        }
        Fault::UnknownVariant { expected, .. } if expected.is_empty() => {
            (whole(), Some(Expected::Variants(Vec::new())))
        }
        Fault::UnknownField { field, expected } => (
            format!("unknown field `{field}`"),
            Some(Expected::Keys(names(expected))),
        ),
        Fault::UnknownVariant { variant, expected } => (
            format!("unknown variant `{variant}`"),
            Some(Expected::Variants(names(expected))),
        ),
        Fault::WrongValue { what, expected, .. } => (what.clone(), Some(in_words(expected).into())),
        // A check of a type's own, said whole: what it expected is in its
        // words (an equation file's report keeps its caret lines).
        Fault::MissingField { .. } | Fault::Other => (whole(), None),
    }
}

/// What a scenario author calls the Rust types serde names as expected.
fn in_words(expected: &str) -> &str {
    match expected {
        "f64" | "f32" => "a number",
        "u8" => "a whole number from 0 to 255",
        "u16" => "a whole number from 0 to 65535",
        "u32" => "a whole number from 0 to 4294967295",
        "u64" | "usize" => "a whole number, 0 or more",
        "i8" | "i16" | "i32" | "i64" | "isize" => "a whole number",
        "a sequence" => "an array",
        "a map" => "a table",
        other => other,
    }
}

/// Parses TOML text from `file` into any config type, with the same located
/// errors as scenarios (used for sweep files).
///
/// # Errors
/// A syntax error, or a located type / unknown-key / missing-key error.
pub fn deserialize_file<T: for<'de> Deserialize<'de>>(
    file: &Path,
    text: &str,
) -> Result<T, LoadError> {
    let table: toml::Table = toml::from_str(text).map_err(|e| LoadError::Syntax {
        path: file.to_path_buf(),
        message: shorten_lines(e.to_string().trim_end()),
    })?;
    let locator = Locator {
        file,
        text,
        overrides: &[],
    };
    crate::serde_fault::deserialize(toml::Value::Table(table.clone())).map_err(|e| {
        locator.serde_error(&table, crate::keyed::path_from_serde(e.path()), e.inner())
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    const SERVO: &str = include_str!("../../examples/dc_servo_p2p.toml");

    thread_local! {
        /// How many times this thread parsed a scenario's text
        /// ([`parse_table`]): a file loaded many times is parsed once.
        pub(crate) static PARSES: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }

    fn load_str(text: &str, sets: &[&str]) -> Result<Loaded, LoadError> {
        let overrides: Vec<Override> = sets
            .iter()
            .map(|s| Override::parse_set(s).unwrap())
            .collect();
        load_text(Path::new("examples/x.toml"), text, &overrides)
    }

    fn located(r: Result<Loaded, LoadError>) -> ScenarioError {
        match r {
            Err(LoadError::Invalid(l)) => *l,
            Err(other) => panic!("expected a located error, got {other}"),
            Ok(_) => panic!("expected an error"),
        }
    }

    /// What was expected comes apart from the message only as data (a
    /// serde fault, a [`crate::keyed::Refusal`]); a message is never read
    /// for it.
    #[test]
    fn a_message_is_kept_whole_and_never_read_for_what_was_expected() {
        let source = Source::new(Path::new("examples/x.toml"), SERVO, &[]);
        let said = "3 is odd, expected an even seed; expected nothing else";
        let LoadError::Invalid(e) =
            source.locate(ScenarioError::new(KeyPath::parse("seed").unwrap(), said))
        else {
            panic!("a located error")
        };
        assert_eq!((e.message.as_str(), &e.expected), (said, &None));
        // A value's own check says what it expects apart.
        let e = located(load_str(SERVO, &["network.ns3.data_rate=\"fast\""]));
        assert_eq!(e.key.to_string(), "network.ns3.data_rate");
        assert_eq!(e.message, "\"fast\" is not a data rate");
        assert!(
            e.expected
                .as_ref()
                .is_some_and(|x| x.to_string().contains("\"1Mbps\"")),
            "{e:?}"
        );
    }

    #[test]
    fn key_paths_parse_both_index_forms_and_print_one() {
        let a = KeyPath::parse("loops[0].controller.kp").unwrap();
        let b = KeyPath::parse("loops.0.controller.kp").unwrap();
        assert_eq!(a, b);
        assert_eq!(a.to_string(), "loops[0].controller.kp");
        assert_eq!(
            KeyPath::parse("network.ns3.data_rate").unwrap().to_string(),
            "network.ns3.data_rate"
        );
        for bad in ["", "a.", "a[x]", "a[1", ".a", "a..b"] {
            assert!(KeyPath::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn set_values_are_toml_or_plain_strings() {
        assert_eq!(parse_value("25"), toml::Value::Integer(25));
        assert_eq!(parse_value("0.5"), toml::Value::Float(0.5));
        assert_eq!(parse_value("5s"), toml::Value::String("5s".into()));
        assert_eq!(parse_value("\"5s\""), toml::Value::String("5s".into()));
        assert!(parse_value("{ kind = \"constant\", value = \"2ms\" }").is_table());
    }

    #[test]
    fn set_reaches_nested_keys_array_entries_and_new_tables() {
        let loaded = load_str(
            SERVO,
            &[
                "loops[0].controller.kp=25",
                "duration=2s",
                "network.backend=builtin",
                "network.builtin.loss={ kind = \"bernoulli\", p = 0.1 }",
            ],
        )
        .unwrap();
        let s = &loaded.resolved.scenario;
        assert_eq!(s.duration, protocol::SimTime::from_secs(2));
        assert_eq!(s.network.backend, Backend::Builtin);
        match &s.loops[0].controller {
            controlsim::ControllerConfig::Pid(p) => assert_eq!(p.kp, 25.0),
            other => panic!("{other:?}"),
        }
        let err = load_str(SERVO, &["loops[3].controller.kp=1"]).unwrap_err();
        assert!(err.to_string().contains("has 1 entries"), "{err}");
        let err = load_str(SERVO, &["duration.x=1"]).unwrap_err();
        assert!(err.to_string().contains("not a table"), "{err}");
    }

    /// An override that cannot be applied is a keyed error like any other,
    /// located at the override that set it.
    #[test]
    fn an_override_that_cannot_be_applied_names_its_key_and_origin() {
        let err = load_str(SERVO, &["duration.x=1"]).unwrap_err();
        assert_eq!(
            err.key().map(ToString::to_string).as_deref(),
            Some("duration.x"),
            "{err}"
        );
        let LoadError::Invalid(located) = &err else {
            panic!("{err:?}");
        };
        assert_eq!(
            located.place(),
            Some(&Place::Override("--set duration.x=1".into()))
        );
        assert_eq!(
            err.to_string(),
            "`duration.x`: `duration` is a string, not a table, so it has no key `x`\n  \
             --> --set duration.x=1 (on examples/x.toml)\n"
        );
        let err = load_str(SERVO, &["loops[3].controller.kp=1"]).unwrap_err();
        assert_eq!(
            err.key().map(ToString::to_string).as_deref(),
            Some("loops[3].controller.kp"),
            "{err}"
        );
    }

    #[test]
    fn type_errors_point_at_the_line_and_say_what_was_expected() {
        let text = SERVO.replace("kp = 20.0", "kp = \"fast\"");
        let l = located(load_str(&text, &[]));
        assert_eq!(l.key.to_string(), "loops[0].controller.kp");
        let line = SERVO
            .lines()
            .position(|l| l.starts_with("kp = 20.0"))
            .unwrap()
            + 1;
        match l.place().unwrap() {
            Place::File {
                line: found, text, ..
            } => {
                assert_eq!(*found, line);
                assert_eq!(text, "kp = \"fast\"");
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            l.expected,
            Some(Expected::Words("a number".into())),
            "not serde's `f64`"
        );
    }

    #[test]
    fn unknown_keys_inside_tagged_tables_name_the_key() {
        let text = SERVO.replace("inertia = 0.01", "inertia = 0.01\ninertiaa = 0.02");
        let l = located(load_str(&text, &[]));
        assert_eq!(l.key.to_string(), "loops[0].plant.inertiaa");
        assert!(
            matches!(l.place().unwrap(), Place::File { text, .. } if text == "inertiaa = 0.02"),
            "{l}"
        );
        // The keys the table has, as a list: serde's, not read from its message.
        let keys = match &l.expected {
            Some(Expected::Keys(keys)) => keys,
            other => panic!("{other:?}"),
        };
        assert!(keys.iter().any(|k| k == "inertia"), "{keys:?}");
        let text = SERVO.replace("kind = \"dc_servo\"", "kind = \"dc_motor\"");
        let l = located(load_str(&text, &[]));
        assert_eq!(l.key.to_string(), "loops[0].plant.kind");
        let kinds = match &l.expected {
            Some(Expected::Variants(kinds)) => kinds,
            other => panic!("{other:?}"),
        };
        assert!(kinds.iter().any(|k| k == "dc_servo"), "{kinds:?}");
    }

    /// An unknown key in a table inside a tagged table (a plant's
    /// `external_force`) is named at its own table: serde's path stops at
    /// the plant, and the key used to be named as the plant's.
    #[test]
    fn an_unknown_key_in_a_table_of_a_tagged_table_is_named_in_it() {
        let l = located(load_str(
            SERVO,
            &["loops[0].plant={ kind = \"mass_spring_damper\", external_force = { kind = \"constant\", value = 1.0, zz = 0 } }"],
        ));
        assert_eq!(l.key.to_string(), "loops[0].plant.external_force.zz");
        assert_eq!(l.expected, Some(Expected::Keys(vec!["value".into()])));
    }

    /// An unknown key of `[network]` lists the shared tables among the keys
    /// it has: the loader reads them there, serde does not.
    #[test]
    fn an_unknown_network_key_lists_the_shared_tables() {
        let l = located(load_str(SERVO, &["network.radios.x=1"]));
        assert_eq!(l.key.to_string(), "network.radios");
        let keys = l.expected.as_ref().and_then(Expected::names).unwrap();
        for key in ["backend", "ns3", "server", "radio", "traces"] {
            assert!(keys.iter().any(|k| k == key), "{key}: {keys:?}");
        }
    }

    #[test]
    fn control_side_errors_are_located_through_their_key() {
        let text = SERVO.replace(
            "[loops.sensor]\nperiod = \"10ms\"",
            "[loops.sensor]\nperiod = \"10500us\"",
        );
        let l = located(load_str(&text, &[]));
        assert_eq!(l.key.to_string(), "loops[0].sensor.period");
        assert!(
            matches!(l.place().unwrap(), Place::File { text, .. } if text == "period = \"10500us\""),
            "{l}"
        );
    }

    #[test]
    fn errors_in_overridden_values_blame_the_override() {
        let l = located(load_str(SERVO, &["loops[0].controller.kp=fast"]));
        assert_eq!(
            l.place(),
            Some(&Place::Override("--set loops[0].controller.kp=fast".into()))
        );
        let shown = l.to_string();
        assert!(
            shown.contains("--set loops[0].controller.kp=fast"),
            "{shown}"
        );
    }

    #[test]
    fn errors_in_the_second_loop_point_into_its_own_tables() {
        let second = SERVO[SERVO.find("[[loops]]").unwrap()..]
            .replace("name = \"servo\"", "name = \"servo2\"")
            .replace("plant_node = 0", "plant_node = 2")
            .replace("controller_node = 1", "controller_node = 3")
            .replace(
                "[loops.sensor]\nperiod = \"10ms\"",
                "[loops.sensor]\nperiod = \"7500us\"",
            );
        let text = format!("{SERVO}\n{second}");
        let l = located(load_str(&text, &["network.ns3.nodes=4"]));
        assert_eq!(l.key.to_string(), "loops[1].sensor.period");
        let line = text
            .lines()
            .position(|l| l == "period = \"7500us\"")
            .unwrap()
            + 1;
        assert!(
            matches!(l.place().unwrap(), Place::File { line: found, .. } if *found == line),
            "{l}"
        );
    }

    /// A key whose name holds a dot is one key: built as a path, never
    /// formatted into text and split again, it is named quoted and found
    /// on its own line, not on its table's.
    #[test]
    fn a_key_with_a_dot_in_its_name_is_located_at_its_own_line() {
        let text = format!("{SERVO}\n[network.server.params]\n\"-x.y\" = 1\n");
        let l = located(load_str(&text, &[]));
        assert_eq!(l.key.to_string(), "network.server.params.\"-x.y\"");
        let line = text.lines().position(|l| l == "\"-x.y\" = 1").unwrap() + 1;
        assert!(
            matches!(l.place().unwrap(), Place::File { line: found, .. } if *found == line),
            "{l}"
        );
    }

    #[test]
    fn missing_keys_point_at_their_table() {
        let text = SERVO.replace(
            "[loops.sensor]\nperiod = \"10ms\"",
            "[loops.sensor]\nphase = \"0s\"",
        );
        let l = located(load_str(&text, &[]));
        assert_eq!(l.key.to_string(), "loops[0].sensor");
        assert!(l.message.contains("missing field `period`"), "{l}");
        assert!(matches!(l.place().unwrap(), Place::File { .. }), "{l}");
    }
}
