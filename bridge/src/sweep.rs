//! Batch parameter sweeps (docs/design.md §8.4): a base scenario, parameters over any
//! key, replications, runs in parallel child processes, resume, aggregates.
//!
//! # Lifecycle
//! 1. [`SweepFile::load`] reads the sweep file (TOML) with located errors.
//! 2. [`Plan::build`] expands it into parameter points (grid axes, zip
//!    groups, explicit points) times replications, and loads and checks every
//!    run's scenario as `netloop run` would, so a bad value is reported
//!    before anything runs. Each run is named by the hash of its resolved
//!    config ([`crate::run::config_hash`]) and lives in `runs/<hash>/`.
//! 3. [`execute`] runs them, `jobs` at a time, each as its own
//!    `netloop run` child process (so a hang or a crash cannot take the
//!    sweep down, and each has its own ns-3 server on its own port), with a
//!    wall-clock timeout, a progress bar, and Ctrl-C handling.
//! 4. [`aggregate::write`] writes `sweep.csv` (one row per run),
//!    `sweep_summary.csv` (mean, standard deviation and 95% confidence
//!    interval per parameter point and metric) and `sweep.parquet` (every
//!    figure of every run in long form with typed columns, [`long_form`]).
//!
//! # The sweep file
//! ```toml
//! scenario = "dc_servo_p2p.toml"   # base scenario, relative to this file
//! replications = 3                 # run = 1, 2, 3 for every point
//! network = "builtin"              # optional: like `netloop run --network`
//! timeout = "10min"                # optional: wall-clock limit per run (default 1h)
//!
//! [set]                            # optional: the same for every run
//! duration = "2s"
//!
//! [[grid]]                         # every combination of the grid axes
//! key = "loops[0].controller.kp"
//! values = [10.0, 20.0]
//!
//! [[grid]]
//! key = "network.builtin.delay.value"
//! values = ["1ms", "5ms"]
//!
//! [[zip]]                          # keys that advance together: one axis
//! keys = ["loops[0].sensor.period", "loops[0].controller.period"]
//! values = [["10ms", "10ms"], ["20ms", "20ms"]]
//!
//! [[points]]                       # an explicit list of points: one axis
//! "network.builtin.loss" = { kind = "bernoulli", p = 0.1 }
//! ```
//!
//! # Replications and seeds
//! Replication r (1..=R) sets the scenario's `run = r`; `seed` stays as the
//! scenario has it. ns-3 gets `--seed` and `--run` (RngSeedManager), the
//! builtin channel mixes the run number into its streams, and the control
//! side's noise uses [`Scenario::control_seed`](crate::config::Scenario::control_seed),
//! which also follows the run number: replications differ on both sides.
//!
//! # Resume
//! A run is done when `runs/<hash>/summary.json` says `"complete": true`
//! with that same `config_hash`, or, in a sweep written by an earlier
//! version, `runs/<earlier hash>/` does with the hash that version gave
//! ([`crate::config_hash`]: the canonical form with the server's settings
//! as written, then the legacy hash). `--resume` skips done runs and reruns every
//! other (failed, timed out, interrupted, never started) from scratch.
//! Without `--resume` every run is run again.
//!
//! # Practical considerations
//! - Timeouts first send SIGTERM (the run stops at its next sync and keeps its
//!   partial results), then SIGKILL after a grace period; the run's ns-3
//!   server dies with it (the bridge sets `PR_SET_PDEATHSIG`).
//! - Children run in their own process group, so a Ctrl-C in the terminal
//!   reaches the sweep only; the sweep stops its children itself and writes
//!   the aggregates of what completed. A second Ctrl-C kills them at once.
//! - If the sweep itself is killed (even with SIGKILL), its runs get SIGTERM
//!   (`PR_SET_PDEATHSIG`) and stop, keeping partial results for `--resume`.
//! - Each run's stdout and stderr go to `runs/<hash>/netloop.log`.

pub mod aggregate;
pub mod exec;
pub mod findings;
pub mod long_form;
pub mod overrides;
pub mod plan;
pub mod progress;
pub mod run_state;
pub mod shard;
pub mod slurm;
pub mod status;

use std::path::{Path, PathBuf};

use protocol::SimTime;
use serde::{Deserialize, Serialize};

use crate::config::Backend;
use crate::run_dir::{DirLock, RunDirError};
use crate::scenario_file::{self, KeyPath, LoadError, ScenarioError};

pub use exec::{execute, ExecOptions, ExecReport, Outcome};
pub use overrides::SweepOverrides;
pub use plan::{Plan, PlannedRun, Point};
pub use shard::Shard;

/// Default wall-clock limit of one run of a sweep.
pub const DEFAULT_TIMEOUT: SimTime = SimTime::from_secs(3600);

/// A sweep file, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// The base scenario, relative to the sweep file.
    pub scenario: PathBuf,
    /// Replications per point: run numbers 1..=R.
    #[serde(default = "one")]
    pub replications: u64,
    /// Network backend for every run, overriding the scenario's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Backend>,
    /// Wall-clock limit of each run; default 1h.
    #[serde(
        default,
        with = "protocol::duration::option",
        skip_serializing_if = "Option::is_none"
    )]
    pub timeout: Option<SimTime>,
    /// Keys set the same way for every run: `"key.path" = value`.
    #[serde(default, skip_serializing_if = "toml::Table::is_empty")]
    pub set: toml::Table,
    /// Grid axes: every combination.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub grid: Vec<GridAxis>,
    /// Zip groups: keys whose values advance together, one axis each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zip: Vec<ZipAxis>,
    /// Explicit points, one axis: each table sets `"key.path" = value`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub points: Vec<toml::Table>,
    /// Defaults for `--slurm` (partition, time, extra `#SBATCH` lines, ...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slurm: Option<slurm::SlurmTable>,
}

fn one() -> u64 {
    1
}

/// `[[grid]]`: one key and its values.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GridAxis {
    pub key: String,
    pub values: Vec<toml::Value>,
}

/// `[[zip]]`: several keys; each row of `values` gives one value per key.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ZipAxis {
    pub keys: Vec<String>,
    pub values: Vec<Vec<toml::Value>>,
}

/// Why a sweep cannot start (bad input) or could not finish its bookkeeping.
#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    /// The sweep file, or a run's scenario, is invalid: exit code 2.
    #[error("{0}")]
    Input(String),
    /// The results directory cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The supervisor itself failed (runtime, signals).
    #[error("{0}")]
    Internal(String),
    /// The sweep directory is another sweep's.
    #[error("{0}")]
    Directory(#[from] RunDirError),
}

/// Creates the sweep directory and holds it for this sweep alone (see
/// [`crate::run_dir`]): a second sweep into it fails at once, naming the
/// first, rather than deleting the first one's runs under it.
///
/// # Errors
/// [`SweepError::Directory`] when another sweep holds it, or it cannot be
/// created.
pub fn lock_dir(out_dir: &Path) -> Result<DirLock, SweepError> {
    std::fs::create_dir_all(out_dir).map_err(|source| SweepError::Output {
        path: out_dir.to_path_buf(),
        source,
    })?;
    Ok(DirLock::acquire(out_dir)?)
}

impl From<LoadError> for SweepError {
    fn from(e: LoadError) -> Self {
        SweepError::Input(e.to_string())
    }
}

impl SweepFile {
    /// Reads and checks a sweep file.
    ///
    /// # Errors
    /// [`SweepError::Input`] naming the file, line and key.
    pub fn load(path: &Path) -> Result<SweepFile, SweepError> {
        let text = crate::input::read_input(path)
            .map_err(|e| SweepError::Input(format!("cannot read {}: {e}", path.display())))?;
        Self::parse(path, &text)
    }

    /// Checks a sweep file's text; `path` names it in messages. Apart from
    /// [`SweepFile::load`] so that the checks can be fuzzed (tests/fuzz).
    ///
    /// # Errors
    /// As [`SweepFile::load`].
    pub fn parse(path: &Path, text: &str) -> Result<SweepFile, SweepError> {
        let file: SweepFile = scenario_file::deserialize_file(path, text)?;
        let located = |key: KeyPath, message: String| {
            let error = ScenarioError::new(key, message);
            SweepError::Input(scenario_file::locate(path, text, error).to_string())
        };
        if file.replications == 0 {
            return Err(located("replications".into(), "must be at least 1".into()));
        }
        if file.timeout == Some(SimTime::ZERO) {
            return Err(located("timeout".into(), "must be longer than zero".into()));
        }
        for (i, g) in file.grid.iter().enumerate() {
            if g.values.is_empty() {
                return Err(located(
                    KeyPath::key("grid").at(i).and("values"),
                    "needs at least one value".into(),
                ));
            }
        }
        for (i, z) in file.zip.iter().enumerate() {
            if z.keys.is_empty() {
                return Err(located(
                    KeyPath::key("zip").at(i).and("keys"),
                    "needs at least one key".into(),
                ));
            }
            if z.values.is_empty() {
                return Err(located(
                    KeyPath::key("zip").at(i).and("values"),
                    "needs at least one row".into(),
                ));
            }
            if let Some((j, row)) = z
                .values
                .iter()
                .enumerate()
                .find(|(_, r)| r.len() != z.keys.len())
            {
                return Err(located(
                    KeyPath::key("zip").at(i).and("values").at(j),
                    format!(
                        "has {} values, but keys has {}: one value per key",
                        row.len(),
                        z.keys.len()
                    ),
                ));
            }
        }
        for (i, p) in file.points.iter().enumerate() {
            if p.is_empty() {
                return Err(located(
                    KeyPath::key("points").at(i),
                    "an explicit point needs at least one key".into(),
                ));
            }
        }
        file.check_run_count().map_err(|(key, m)| located(key, m))?;
        Ok(file)
    }

    /// The axes' lengths, in plan order, each with the key that sets it.
    fn axis_lengths(&self) -> Vec<(KeyPath, u64)> {
        let mut axes: Vec<(KeyPath, u64)> = Vec::new();
        for (i, g) in self.grid.iter().enumerate() {
            axes.push((
                KeyPath::key("grid").at(i).and("values"),
                g.values.len() as u64,
            ));
        }
        for (i, z) in self.zip.iter().enumerate() {
            axes.push((
                KeyPath::key("zip").at(i).and("values"),
                z.values.len() as u64,
            ));
        }
        if !self.points.is_empty() {
            axes.push(("points".into(), self.points.len() as u64));
        }
        axes
    }

    /// Points times replications must stay within
    /// [`MAX_SWEEP_RUNS`](crate::limits::MAX_SWEEP_RUNS); counted from the
    /// axes' lengths, before any point is made. On failure: the key that
    /// takes the count past the limit and the message.
    fn check_run_count(&self) -> Result<(), (KeyPath, String)> {
        let max = crate::limits::MAX_SWEEP_RUNS;
        let replications = u128::from(self.replications);
        let over = |key: KeyPath, lengths: &[String], runs: u128| {
            let points = if lengths.is_empty() {
                "1 point".to_string()
            } else {
                format!("{} points", lengths.join(" x "))
            };
            (
                key,
                format!(
                    "the sweep has {points} x {} replications = {runs} runs or more, above the {max} runs a sweep may have (docs/robustness.md, limits); split it into several sweeps",
                    self.replications
                ),
            )
        };
        if replications > u128::from(max) {
            return Err(over("replications".into(), &[], replications));
        }
        let mut lengths: Vec<String> = Vec::new();
        let mut runs = replications;
        for (key, len) in self.axis_lengths() {
            lengths.push(len.to_string());
            runs = runs.saturating_mul(u128::from(len));
            if runs > u128::from(max) {
                return Err(over(key, &lengths, runs));
            }
        }
        Ok(())
    }
}
