//! The ns-3 server's own description of its network kinds
//! (`netloop-server --describe`), the one place a kind's arguments are
//! declared: their scenario keys, types, units, defaults and limits, how the
//! node count is set and whether positions matter (ns3-scenarios/README.md).
//!
//! # When the schema is read
//! At start-up of `check`, `run` and `sweep`, from the server binary the
//! scenario runs (`[network.server] binary`, else `$NETLOOP_NS3_SERVER`, the
//! build tree or `PATH`), not at build time: the bridge builds without the
//! server. It is asked once per binary and process, and kept on disk per
//! SHA-256 of the binary in the cache directory (`$NETLOOP_CACHE_DIR`, else
//! `$XDG_CACHE_HOME/netloop`, else `~/.cache/netloop`), so that a sweep
//! plans all its points with at most one `--describe`.
//!
//! # What it decides
//! - Every kind but `custom` (p2p, wifi, wave, lte and any kind a server
//!   adds) is checked key by key and turned into server arguments from the
//!   schema alone (`bridge::config::DescribedConfig`): none of them has
//!   Rust of its own.
//! - The limits of every argument are checked here, before a run starts,
//!   and reported at the scenario key.
//! - docs/scenario.md's kind tables are checked against it (tests/cli/docs.rs).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The `--describe` version this bridge reads (2: the shared tables).
pub const SCHEMA_VERSION: u32 = 2;

/// How long `--describe` may take (it builds nothing).
const DESCRIBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Every network kind of one server.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NetworkSchema {
    pub schema: u32,
    /// The tables several kinds share (`[network.radio]`, ...), in the
    /// scenario's order.
    pub tables: Vec<TableSchema>,
    pub kinds: Vec<KindSchema>,
}

/// A table of arguments several kinds share: `[network.<name>]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableSchema {
    /// `radio`, `placement`, `background`, `traces`.
    pub name: String,
    pub doc: String,
    /// What a kind without the table lacks, e.g. `radio` ("p2p has no radio").
    pub what: String,
    /// Whether the canonical form has every default made explicit (else
    /// only the keys written); see `bridge::config::TableConfig`.
    pub canonical_defaults: bool,
    /// In declaration order; an array key's elements are `key[0]`, `key[1]`, ...
    pub arguments: Vec<ArgumentSchema>,
}

/// Which shared table a kind takes, and how much of it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TableUse {
    /// [`TableSchema::name`].
    pub name: String,
    /// The argument names it takes; empty: all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub arguments: Vec<String>,
    /// Argument name -> the command-line values of its choices the kind
    /// supports (all when absent).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub choices: std::collections::BTreeMap<String, Vec<String>>,
    /// Said when a scenario sets an argument the kind does not take.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub note: String,
}

impl TableUse {
    /// Whether the kind takes the argument `name` of the table.
    pub fn takes(&self, name: &str) -> bool {
        self.arguments.is_empty() || self.arguments.iter().any(|a| a == name)
    }
}

/// One network kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct KindSchema {
    /// The scenario's `kind` and the server's `--network`.
    pub name: String,
    pub doc: String,
    /// Whether node positions matter (radio propagation).
    pub uses_positions: bool,
    pub node_count: NodeCountRule,
    /// In declaration order.
    pub arguments: Vec<ArgumentSchema>,
    /// The shared tables the kind takes; a table not listed is refused.
    pub tables: Vec<TableUse>,
}

/// How a kind's node count is set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NodeCountRule {
    /// Scenario key under `[network.ns3]`, e.g. `nodes` or `ues`.
    pub key: String,
    /// The server argument it becomes.
    pub argument: String,
    /// Nodes besides the counted ones (LTE: the remote host).
    pub extra: u32,
    pub min: u32,
    pub max: u32,
    /// Else the count defaults to the highest node a loop uses, plus one.
    pub required: bool,
    pub doc: String,
}

/// One argument of a kind.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArgumentSchema {
    /// Command-line name, e.g. `queueSize`.
    pub name: String,
    /// Scenario key under `[network.ns3]`, dotted for a nested table (`bsm.rate`).
    pub key: String,
    #[serde(rename = "type")]
    pub kind: ArgumentType,
    pub unit: String,
    /// As the command line writes it; `None` when unset by default (see `unset`).
    pub default: Option<String>,
    /// What the server does when the argument is not given.
    #[serde(default)]
    pub unset: Option<String>,
    /// For a key in a nested table (`bsm.nodes`): its value when the
    /// scenario writes the table but not the key (writing `bsm` turns BSMs
    /// on for every node); else `default`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub table_default: Option<String>,
    #[serde(default)]
    pub min: Option<f64>,
    #[serde(default)]
    pub max: Option<f64>,
    /// Values must be more than this (an exclusive lower bound).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub above: Option<f64>,
    /// Must be written when its table is.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub required: bool,
    /// A `trace_file`'s name in the run's trace folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// The only numbers allowed.
    #[serde(default)]
    pub allowed: Vec<f64>,
    /// The only values allowed, in scenario and command-line spelling.
    #[serde(default)]
    pub choices: Vec<Choice>,
    pub doc: String,
}

/// The type of an argument's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ArgumentType {
    Integer,
    Real,
    Boolean,
    Text,
    Choice,
    DataRate,
    Duration,
    Positions,
    NodeList,
    /// A file; relative to the scenario file.
    Path,
    /// On or off in the scenario; on, the bridge passes the argument's
    /// `file` in the run's trace folder.
    TraceFile,
}

/// One allowed value of a choice.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    /// As the scenario writes it, e.g. `802.11a`.
    pub value: String,
    /// As the command line writes it, e.g. `80211a`.
    pub argument: String,
}

impl NetworkSchema {
    /// Parses `--describe`'s JSON line.
    ///
    /// # Errors
    /// Not JSON of this shape, or another schema version.
    pub fn parse(json: &str) -> Result<NetworkSchema, String> {
        let schema: NetworkSchema =
            serde_json::from_str(json.trim()).map_err(|e| format!("not a network schema: {e}"))?;
        if schema.schema != SCHEMA_VERSION {
            return Err(format!(
                "schema version {} (this netloop reads {SCHEMA_VERSION}); rebuild the server from this checkout",
                schema.schema
            ));
        }
        Ok(schema)
    }

    pub fn kind(&self, name: &str) -> Option<&KindSchema> {
        self.kinds.iter().find(|k| k.name == name)
    }

    pub fn table(&self, name: &str) -> Option<&TableSchema> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// The kind names, backquoted, for messages.
    pub fn kind_list(&self) -> String {
        self.kinds
            .iter()
            .map(|k| format!("`{}`", k.name))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl KindSchema {
    pub fn argument(&self, name: &str) -> Option<&ArgumentSchema> {
        self.arguments.iter().find(|a| a.name == name)
    }

    pub fn argument_by_key(&self, key: &str) -> Option<&ArgumentSchema> {
        self.arguments.iter().find(|a| a.key == key)
    }

    /// How the kind uses the shared table `name`, if it takes it.
    pub fn table_use(&self, name: &str) -> Option<&TableUse> {
        self.tables.iter().find(|t| t.name == name)
    }
}

impl ArgumentSchema {
    /// Checks a command-line value against the declared limits; the message
    /// says what is allowed, in the scenario's terms.
    ///
    /// # Errors
    /// A message for the scenario key the value came from.
    pub fn check(&self, value: &str) -> Result<(), String> {
        let unit = if self.unit.is_empty() {
            String::new()
        } else {
            format!(" ({})", self.unit)
        };
        if !self.choices.is_empty() {
            if self.choices.iter().any(|c| c.argument == value) {
                return Ok(());
            }
            let list = self
                .choices
                .iter()
                .map(|c| format!("\"{}\"", c.value))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(format!("\"{value}\" is not one of {list}"));
        }
        if !matches!(self.kind, ArgumentType::Integer | ArgumentType::Real) {
            return Ok(());
        }
        let Ok(x) = value.parse::<f64>() else {
            return Err(format!("{value} is not a number"));
        };
        if !self.allowed.is_empty() && !self.allowed.contains(&x) {
            let list: Vec<String> = self.allowed.iter().map(|a| a.to_string()).collect();
            let (last, rest) = list.split_last().expect("not empty");
            return Err(format!(
                "{value} is not allowed: use {} or {last}{unit}",
                rest.join(", ")
            ));
        }
        match (self.min, self.max) {
            (Some(min), Some(max)) if !(min..=max).contains(&x) => {
                Err(format!("{value} is not in [{min}, {max}]{unit}"))
            }
            (Some(min), None) if !(x >= min) => Err(format!("{value} is less than {min}{unit}")),
            (None, Some(max)) if !(x <= max) => Err(format!("{value} is more than {max}{unit}")),
            _ => match self.above {
                Some(above) if !(x > above) => {
                    Err(format!("{value} is not more than {above}{unit}"))
                }
                _ => Ok(()),
            },
        }
    }
}

/// The schema of this checkout's `netloop-server`, as committed in
/// `ns3-scenarios/network-schema.json` (tests/e2e/network_schema.rs checks
/// it is what the server describes). The kinds it has are read without
/// asking a server, so that a scenario's config hash and its checks do not
/// depend on whether a server is built or found; a kind it lacks (a toy
/// kind, a user's server) is asked of the scenario's server ([`describe`]).
pub fn standard() -> Arc<NetworkSchema> {
    static STANDARD: std::sync::OnceLock<Arc<NetworkSchema>> = std::sync::OnceLock::new();
    STANDARD
        .get_or_init(|| {
            let json = include_str!("../../../ns3-scenarios/network-schema.json");
            Arc::new(NetworkSchema::parse(json).expect("the committed network schema parses"))
        })
        .clone()
}

/// Why there is no schema.
#[derive(Debug, thiserror::Error)]
pub enum SchemaError {
    #[error("cannot describe the network kinds: {binary} cannot be started ({reason}); build it with scripts/build-ns3.sh or set $NETLOOP_NS3_SERVER", binary = .binary.display())]
    NoServer { binary: PathBuf, reason: String },
    #[error("{binary} --describe failed: {reason}; rebuild the server from this checkout (scripts/build-ns3.sh)", binary = .binary.display())]
    Failed { binary: PathBuf, reason: String },
}

type Memo = HashMap<(PathBuf, u64, Option<SystemTime>), Arc<NetworkSchema>>;

static MEMO: Mutex<Option<Memo>> = Mutex::new(None);

/// The schema of the server `binary`: from this process's memory, the disk
/// cache (per SHA-256 of the binary), or `binary --describe`.
///
/// # Errors
/// The binary cannot be read or started, or does not describe its kinds.
pub fn describe(binary: &Path) -> Result<Arc<NetworkSchema>, SchemaError> {
    let resolved = resolve_binary(binary);
    let meta = std::fs::metadata(&resolved).map_err(|e| SchemaError::NoServer {
        binary: binary.to_path_buf(),
        reason: e.to_string(),
    })?;
    let memo_key = (resolved.clone(), meta.len(), meta.modified().ok());
    if let Some(found) = MEMO
        .lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .get(&memo_key)
    {
        return Ok(found.clone());
    }
    let cached = binary_hash(&resolved)
        .map(|hash| cache_dir().map(|d| d.join(format!("describe-{hash}.json"))));
    let from_cache = cached
        .iter()
        .flatten()
        .find_map(|file| NetworkSchema::parse(&std::fs::read_to_string(file).ok()?).ok());
    let schema = match from_cache {
        Some(schema) => schema,
        None => {
            let json = run_describe(binary)?;
            let schema = NetworkSchema::parse(&json).map_err(|reason| SchemaError::Failed {
                binary: binary.to_path_buf(),
                reason,
            })?;
            if let Some(Some(file)) = &cached {
                // A cache that cannot be written is only slower.
                let _ = std::fs::create_dir_all(file.parent().unwrap_or(Path::new(".")))
                    .and_then(|()| write_atomically(file, json.trim()));
            }
            schema
        }
    };
    let schema = Arc::new(schema);
    MEMO.lock()
        .unwrap()
        .get_or_insert_with(HashMap::new)
        .insert(memo_key, schema.clone());
    Ok(schema)
}

/// A bare name is looked up on `PATH`, as `Command` does.
fn resolve_binary(binary: &Path) -> PathBuf {
    if binary.components().count() > 1 || binary.is_file() {
        return binary.to_path_buf();
    }
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|dir| dir.join(binary))
        .find(|p| p.is_file())
        .unwrap_or_else(|| binary.to_path_buf())
}

fn binary_hash(binary: &Path) -> Option<String> {
    let bytes = std::fs::read(binary).ok()?;
    Some(hex::encode(Sha256::digest(&bytes)))
}

/// Where described schemas are kept, if anywhere.
pub fn cache_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("NETLOOP_CACHE_DIR") {
        return Some(PathBuf::from(dir));
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(dir).join("netloop"));
    }
    std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".cache/netloop"))
}

fn write_atomically(file: &Path, text: &str) -> std::io::Result<()> {
    let temp = file.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&temp, text)?;
    std::fs::rename(&temp, file)
}

/// Runs `binary --describe` with a time limit; its stdout.
fn run_describe(binary: &Path) -> Result<String, SchemaError> {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let mut child = netloop_child_process::die_with_parent(&mut Command::new(binary))
        .arg("--describe")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| SchemaError::NoServer {
            binary: binary.to_path_buf(),
            reason: e.to_string(),
        })?;
    let failed = |reason: String| SchemaError::Failed {
        binary: binary.to_path_buf(),
        reason,
    };
    // Read stdout on a thread: a schema may be larger than a pipe holds.
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut out = String::new();
        let _ = (&mut stdout).take(16 << 20).read_to_string(&mut out);
        out
    });
    let status =
        match netloop_child_process::wait_until(&mut child, Instant::now() + DESCRIBE_TIMEOUT) {
            Ok(Some(status)) => status,
            Ok(None) => return Err(failed(format!("no answer within {DESCRIBE_TIMEOUT:?}"))),
            Err(e) => return Err(failed(e.to_string())),
        };
    let out = reader.join().unwrap_or_default();
    if !status.success() {
        let mut err = String::new();
        if let Some(pipe) = child.stderr.take() {
            let _ = pipe.take(1 << 16).read_to_string(&mut err);
        }
        return Err(failed(format!(
            "{}: {}",
            crate::describe_exit(Some(status)),
            crate::server_problem(&err)
        )));
    }
    Ok(out)
}

/// A problem the server reported about one of its arguments: the line
/// `netloop-problem: {"argument":"...","message":"..."}` it prints to stderr
/// with exit code 2.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct ServerProblem {
    /// Without dashes, e.g. `queueSize`; empty when no one argument is to blame.
    pub argument: String,
    pub message: String,
}

/// The last structured problem on the server's stderr, if any.
pub fn server_problem_of(stderr: &str) -> Option<ServerProblem> {
    stderr
        .lines()
        .rev()
        .find_map(|l| serde_json::from_str(l.trim().strip_prefix("netloop-problem:")?.trim()).ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argument(json: &str) -> ArgumentSchema {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn limits_are_checked_with_what_is_allowed() {
        let queue = argument(
            r#"{"name":"queueSize","key":"queue_size","type":"integer","unit":"packets","default":"100","min":1,"doc":""}"#,
        );
        assert_eq!(queue.check("1"), Ok(()));
        assert_eq!(queue.check("0").unwrap_err(), "0 is less than 1 (packets)");
        let loss = argument(
            r#"{"name":"lossRate","key":"loss_rate","type":"real","unit":"probability","default":"0","min":0,"max":1,"doc":""}"#,
        );
        assert_eq!(loss.check("1"), Ok(()));
        assert_eq!(
            loss.check("1.5").unwrap_err(),
            "1.5 is not in [0, 1] (probability)"
        );
        assert!(loss.check("NaN").is_err());
        let rbs = argument(
            r#"{"name":"bandwidth","key":"bandwidth","type":"integer","unit":"resource blocks","default":"25","allowed":[6,15,25],"doc":""}"#,
        );
        assert_eq!(
            rbs.check("30").unwrap_err(),
            "30 is not allowed: use 6, 15 or 25 (resource blocks)"
        );
        let standard = argument(
            r#"{"name":"wifiStandard","key":"standard","type":"choice","unit":"","default":"80211a","choices":[{"value":"802.11a","argument":"80211a"},{"value":"802.11b","argument":"80211b"}],"doc":""}"#,
        );
        assert_eq!(standard.check("80211b"), Ok(()));
        assert_eq!(
            standard.check("80211x").unwrap_err(),
            "\"80211x\" is not one of \"802.11a\", \"802.11b\""
        );
    }

    #[test]
    fn a_problem_is_read_from_its_own_line_not_from_the_message() {
        let stderr = "netloop-problem: {\"argument\":\"queueSize\",\"message\":\"--lossRate is named here: --queueSize=0 is less than 1\"}\n\
                      netloop-server: --queueSize=0 is less than 1 (see --PrintHelp)\n";
        assert_eq!(
            server_problem_of(stderr),
            Some(ServerProblem {
                argument: "queueSize".into(),
                message: "--lossRate is named here: --queueSize=0 is less than 1".into()
            })
        );
        assert_eq!(server_problem_of("netloop-server: --x=1 is bad\n"), None);
    }

    #[test]
    fn an_exclusive_bound_says_so() {
        let range = argument(
            r#"{"name":"maxRange","key":"max_range","type":"real","unit":"m","default":"250","above":0,"doc":""}"#,
        );
        assert_eq!(range.check("0.5"), Ok(()));
        assert_eq!(range.check("0").unwrap_err(), "0 is not more than 0 (m)");
    }

    #[test]
    fn another_schema_version_is_refused() {
        assert!(NetworkSchema::parse(r#"{"schema":2,"tables":[],"kinds":[]}"#).is_ok());
        let err = NetworkSchema::parse(r#"{"schema":1,"tables":[],"kinds":[]}"#).unwrap_err();
        assert!(err.contains("schema version 1"), "{err}");
        assert!(NetworkSchema::parse("not json").is_err());
    }
}
