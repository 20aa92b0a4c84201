//! Expanding a sweep file into runs, each checked and named by the hash of
//! its resolved config.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{SweepError, SweepFile, DEFAULT_TIMEOUT};
use crate::config::Backend;
use crate::limits::MAX_NETWORK_CHECKS;
use crate::loaded_scenario::ScenarioBase;
use crate::scenario_file::{self, backend_override, KeyPath, LoadError, Override};
use crate::server_command;

/// One parameter point: a value for every swept key, in parameter order.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub index: usize,
    /// `(key, value)` in the order of [`Plan::parameters`].
    pub values: Vec<(String, toml::Value)>,
}

impl Point {
    /// `kp=10, delay=1ms`, for messages.
    pub fn label(&self) -> String {
        if self.values.is_empty() {
            return "(base scenario)".into();
        }
        self.values
            .iter()
            .map(|(k, v)| format!("{k}={}", value_text(v)))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// A value as it is written on a command line or in a CSV cell: strings
/// without quotes, everything else as TOML.
pub fn value_text(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// One run: a point, a replication, its resolved hash and directory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PlannedRun {
    pub point: usize,
    pub replication: u64,
    /// ns-3 run number (= replication).
    pub run: u64,
    pub seed: u64,
    /// `config_hash` of the resolved scenario; also the directory name.
    pub hash: String,
    /// The hash an earlier version gave the run, when its directory is
    /// that version's: `runs/<legacy_hash>` holds the run complete and
    /// `runs/<hash>` does not exist, so the run is resumed there (see
    /// [`crate::config_hash`] for the versions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub legacy_hash: Option<String>,
    /// Relative to the sweep's output directory: `runs/<hash>`, or
    /// `runs/<legacy_hash>`.
    pub dir: PathBuf,
    /// The `netloop` arguments that run it (after the program name).
    pub args: Vec<String>,
    /// The ns-3 server it starts, when it runs over ns-3: what a node of a
    /// cluster must be able to execute (a bare name is looked up in `PATH`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server: Option<PathBuf>,
}

/// Everything a sweep will do, written as `sweep.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub sweep_file: PathBuf,
    /// The base scenario, absolute.
    pub scenario: PathBuf,
    pub out_dir: PathBuf,
    /// Swept keys, in column order.
    pub parameters: Vec<String>,
    pub replications: u64,
    pub network: Option<Backend>,
    pub timeout_s: f64,
    pub points: Vec<Point>,
    pub runs: Vec<PlannedRun>,
}

/// The directory of the run with `hash`: `runs/<hash>`, unless it does not
/// exist and a directory an earlier version named by one of the run's
/// `earlier` hashes (newest first) holds the run complete, which is then
/// the run's (and that hash the one its summary may have).
fn run_dir(out_dir: &Path, hash: &str, earlier: Vec<String>) -> (PathBuf, Option<String>) {
    let dir = PathBuf::from("runs").join(hash);
    if out_dir.join(&dir).exists() {
        return (dir, None);
    }
    for old_hash in earlier {
        let old = PathBuf::from("runs").join(&old_hash);
        if super::exec::is_complete(&out_dir.join(&old), &old_hash, None) {
            return (old, Some(old_hash));
        }
    }
    (dir, None)
}

/// One axis of the product: a list of assignments per position.
type Axis = Vec<Vec<(String, toml::Value)>>;

impl Plan {
    /// Expands `file` (read from `sweep_path`) into runs under `out_dir`.
    /// Each distinct network is checked once; a program the scenario names
    /// itself (`[network.server] binary`) is run for that only `with_server`
    /// (a sweep that will run it anyway checks it before launching the runs).
    ///
    /// # Errors
    /// [`SweepError::Input`] for a bad key, a value a run's scenario rejects
    /// (naming the point), or two points that resolve to the same scenario.
    pub fn build(
        sweep_path: &Path,
        file: &SweepFile,
        out_dir: &Path,
        timeout: Option<Duration>,
        with_server: bool,
    ) -> Result<Plan, SweepError> {
        let base = sweep_path
            .parent()
            .unwrap_or(Path::new(""))
            .join(&file.scenario);
        let scenario = base.canonicalize().map_err(|e| {
            SweepError::Input(format!(
                "{}: scenario = {:?}: cannot open {}: {e}",
                sweep_path.display(),
                file.scenario,
                base.display()
            ))
        })?;
        let sweep_name = sweep_path.display().to_string();

        let mut fixed = Vec::new();
        for (key, value) in &file.set {
            fixed.push(assignment(
                &sweep_name,
                &format!("set.\"{key}\""),
                key,
                value.clone(),
            )?);
        }

        let mut axes: Vec<Axis> = Vec::new();
        let mut parameters: Vec<String> = Vec::new();
        let declare = |key: &str, parameters: &mut Vec<String>| -> Result<String, SweepError> {
            let path =
                KeyPath::parse(key).map_err(|e| SweepError::Input(format!("{sweep_name}: {e}")))?;
            let name = path.to_string();
            if parameters.contains(&name) {
                return Err(SweepError::Input(format!(
                    "{sweep_name}: `{name}` is swept twice"
                )));
            }
            parameters.push(name.clone());
            Ok(name)
        };
        for g in &file.grid {
            let name = declare(&g.key, &mut parameters)?;
            axes.push(
                g.values
                    .iter()
                    .map(|v| vec![(name.clone(), v.clone())])
                    .collect(),
            );
        }
        for z in &file.zip {
            let names = z
                .keys
                .iter()
                .map(|k| declare(k, &mut parameters))
                .collect::<Result<Vec<_>, _>>()?;
            axes.push(
                z.values
                    .iter()
                    .map(|row| names.iter().cloned().zip(row.iter().cloned()).collect())
                    .collect(),
            );
        }
        if !file.points.is_empty() {
            // Columns: every key any explicit point sets, in sorted order.
            let mut keys: Vec<String> = Vec::new();
            for p in &file.points {
                for k in p.keys() {
                    let name = KeyPath::parse(k)
                        .map_err(|e| SweepError::Input(format!("{sweep_name}: points: {e}")))?
                        .to_string();
                    if !keys.contains(&name) {
                        keys.push(name);
                    }
                }
            }
            keys.sort();
            for k in &keys {
                declare(k, &mut parameters)?;
            }
            axes.push(
                file.points
                    .iter()
                    .map(|p| {
                        p.iter()
                            .map(|(k, v)| {
                                (
                                    KeyPath::parse(k).expect("parsed above").to_string(),
                                    v.clone(),
                                )
                            })
                            .collect()
                    })
                    .collect(),
            );
        }

        // The product of the axes, the first axis varying slowest.
        let mut combos: Vec<Vec<(String, toml::Value)>> = vec![Vec::new()];
        for axis in &axes {
            let mut next = Vec::with_capacity(combos.len() * axis.len());
            for c in &combos {
                for a in axis {
                    let mut c = c.clone();
                    c.extend(a.iter().cloned());
                    next.push(c);
                }
            }
            combos = next;
        }
        let points: Vec<Point> = combos
            .into_iter()
            .enumerate()
            .map(|(index, assigned)| {
                let by_key: BTreeMap<String, toml::Value> = assigned.into_iter().collect();
                let values = parameters
                    .iter()
                    .filter_map(|p| by_key.get(p).map(|v| (p.clone(), v.clone())))
                    .collect();
                Point { index, values }
            })
            .collect();

        let base = ScenarioBase::read(&scenario)?;
        let mut runs = Vec::new();
        let mut unchecked = BTreeSet::new();
        let mut seen: BTreeMap<String, (usize, u64)> = BTreeMap::new();
        let mut networks_checked = BTreeSet::new();
        for point in &points {
            let mut overrides = fixed.clone();
            for (key, value) in &point.values {
                overrides.push(assignment(&sweep_name, key, key, value.clone())?);
            }
            if let Some(b) = file.network {
                overrides.push(backend_override(b));
            }
            for replication in 1..=file.replications {
                let mut all = overrides.clone();
                all.push(Override {
                    path: KeyPath::parse("run").expect("a valid key"),
                    value: toml::Value::Integer(replication as i64),
                    origin: format!("{sweep_name}: replication {replication}"),
                });
                let loaded = base.load(&all).map_err(|e| {
                    SweepError::Input(format!(
                        "sweep point {} ({}), replication {replication}:\n{e}",
                        point.index,
                        point.label()
                    ))
                })?;
                // A run's summary.json (what a sweep reads) is written by
                // the network side: a graph on one node has none.
                let Some(resolved) = loaded.network() else {
                    return Err(SweepError::Input(format!(
                        "{}: a sweep runs a graph scenario over its [network] (whose runs write summary.json); \
                         this one has no [network]",
                        scenario.display()
                    )));
                };
                let base_dir = loaded.base_dir();
                // Ask the ns-3 server about each distinct network once, so
                // that a bad radio value fails the plan, not every run.
                let network = server_command::server_arguments(resolved, &base_dir, Path::new("."))
                    .into_iter()
                    .filter(|a| a.name != "seed" && a.name != "run")
                    .map(|a| a.text)
                    .collect::<Vec<_>>();
                // Each check is a process: past MAX_NETWORK_CHECKS distinct
                // networks, the runs' own servers check theirs as they start.
                let backend = resolved.scenario.network.backend;
                let over_ns3 =
                    backend == Backend::Ns3 && networks_checked.len() >= MAX_NETWORK_CHECKS;
                if over_ns3 {
                    if !networks_checked.contains(&network) {
                        unchecked.insert(network);
                    }
                } else if networks_checked.insert(network) {
                    let located = |e: LoadError| {
                        SweepError::Input(format!(
                            "sweep point {} ({}):\n{e}",
                            point.index,
                            point.label()
                        ))
                    };
                    if let Some(note) = loaded.check_network(with_server).map_err(located)? {
                        tracing::warn!("{note}");
                    }
                }
                let (seed, run) = loaded.seed_and_run();
                let hash = loaded.config_hash();
                if let Some((other, rep)) = seen.insert(hash.clone(), (point.index, replication)) {
                    return Err(SweepError::Input(format!(
                        "{sweep_name}: point {} ({}) replication {replication} resolves to the same scenario as point {other} replication {rep} (hash {hash}); \
                         remove the duplicate value or the key that has no effect",
                        point.index,
                        point.label()
                    )));
                }
                let (dir, legacy_hash) = run_dir(out_dir, &hash, loaded.earlier_config_hashes());
                let mut args = vec![
                    "run".to_string(),
                    scenario.display().to_string(),
                    "--out".to_string(),
                    out_dir.join(&dir).display().to_string(),
                ];
                for o in &all {
                    args.push("--set".into());
                    args.push(format!("{}={}", o.path, inline(&o.value)));
                }
                let server = (backend == Backend::Ns3).then(|| {
                    server_command::server_binary(&resolved.scenario.network.server, &base_dir)
                });
                runs.push(PlannedRun {
                    point: point.index,
                    replication,
                    run,
                    seed,
                    hash,
                    legacy_hash,
                    dir,
                    args,
                    server,
                });
            }
        }
        if !unchecked.is_empty() {
            tracing::warn!(
                "the sweep has more than {MAX_NETWORK_CHECKS} distinct ns-3 networks: the server checked \
                 {MAX_NETWORK_CHECKS} of them, the other {} are checked when their runs start (docs/robustness.md, limits)",
                unchecked.len()
            );
        }
        let timeout = timeout
            .unwrap_or_else(|| Duration::from_nanos(file.timeout.unwrap_or(DEFAULT_TIMEOUT).0));
        Ok(Plan {
            sweep_file: sweep_path.to_path_buf(),
            scenario,
            out_dir: out_dir.to_path_buf(),
            parameters,
            replications: file.replications,
            network: file.network,
            timeout_s: timeout.as_secs_f64(),
            points,
            runs,
        })
    }

    /// The per-run wall-clock limit.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.timeout_s)
    }

    /// The point of a run.
    pub fn point_of(&self, run: &PlannedRun) -> &Point {
        &self.points[run.point]
    }

    /// Writes `sweep.json` into the output directory.
    ///
    /// # Errors
    /// The directory cannot be written.
    pub fn write(&self) -> Result<(), SweepError> {
        let path = self.out_dir.join(PLAN_FILE);
        let json = serde_json::to_vec_pretty(self).expect("a plan always serialises");
        std::fs::create_dir_all(&self.out_dir)
            .and_then(|()| crate::output::write_atomically(&path, &json))
            .map_err(|source| SweepError::Output { path, source })
    }

    /// Writes `sweep.json` unless the directory already holds a plan, which
    /// must then have the same runs: how shards that share a directory agree
    /// that they run one sweep. Writing is atomic, so shards that start
    /// together each write the same bytes without tearing.
    ///
    /// # Errors
    /// [`SweepError::Input`] when the directory holds another plan (the sweep
    /// file or the base scenario changed since); the directory cannot be
    /// written.
    pub fn write_shared(&self) -> Result<(), SweepError> {
        let path = self.out_dir.join(PLAN_FILE);
        if path.exists() {
            let existing = Plan::read(&self.out_dir)?;
            // By directory: a run resumed in an earlier version's directory
            // has that version's hash in the earlier plan.
            let dirs = |p: &Plan| p.runs.iter().map(|r| r.dir.clone()).collect::<Vec<_>>();
            if dirs(&existing) != dirs(self) {
                return Err(SweepError::Input(format!(
                    "{} holds the plan of another sweep ({} runs; this one has {}, or their scenarios differ): \
                     the sweep file or its scenario changed since that plan was written; \
                     give another --out, or plan the sweep again without --shard",
                    path.display(),
                    existing.runs.len(),
                    self.runs.len()
                )));
            }
            return Ok(());
        }
        self.write()
    }

    /// Reads the plan of the sweep directory `dir` (its `sweep.json`).
    ///
    /// # Errors
    /// [`SweepError::Input`] when `dir` holds no readable plan.
    pub fn read(dir: &Path) -> Result<Plan, SweepError> {
        let path = dir.join(PLAN_FILE);
        let text = std::fs::read_to_string(&path).map_err(|e| {
            SweepError::Input(format!(
                "{} is not a sweep directory: cannot read {}: {e}",
                dir.display(),
                path.display()
            ))
        })?;
        serde_json::from_str(&text).map_err(|e| {
            SweepError::Input(format!(
                "{}: not a plan written by this netloop: {e}",
                path.display()
            ))
        })
    }

    /// Whether `path` is a sweep directory rather than a sweep file.
    pub fn is_sweep_dir(path: &Path) -> bool {
        path.is_dir() && path.join(PLAN_FILE).is_file()
    }
}

/// The plan's file in a sweep directory.
pub const PLAN_FILE: &str = "sweep.json";

/// A value in the form `--set` reads back: TOML, except plain strings that
/// TOML would not parse stay bare so the command line reads naturally.
fn inline(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) if scenario_file::parse_value(s) == *v => s.clone(),
        other => other.to_string(),
    }
}

fn assignment(
    sweep: &str,
    origin_key: &str,
    key: &str,
    value: toml::Value,
) -> Result<Override, SweepError> {
    let path = KeyPath::parse(key).map_err(|e| SweepError::Input(format!("{sweep}: {e}")))?;
    Ok(Override {
        path,
        origin: format!("{sweep}: {origin_key} = {value}"),
        value,
    })
}
