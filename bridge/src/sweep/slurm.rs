//! Running a sweep as a SLURM job array (`netloop sweep SWEEP.toml --slurm`).
//!
//! # Lifecycle
//! 1. The submitting process plans the sweep exactly as a local sweep does
//!    (same checks, same `sweep.json`, same run directories) and chooses a
//!    shard count N: one array task per run, or per chunk of runs when the
//!    plan has more runs than the cluster's `MaxArraySize` allows tasks.
//! 2. It writes two batch scripts into `<sweep>/slurm/` and submits them:
//!    the array (`sbatch --array=1-N`), each task running
//!    `netloop sweep SWEEP.toml --out DIR --shard $SLURM_ARRAY_TASK_ID/N --resume`,
//!    and the aggregation (`netloop sweep DIR --aggregate`), which waits for
//!    the whole array with `--dependency=afterany`. The job ids go into
//!    `slurm/jobs.json` for `--status` and `--resume`.
//! 3. Each task checks, before anything else, that it sees the sweep
//!    directory and the binaries (a shared file system is assumed), then runs
//!    its shard; every run records its outcome in its own directory.
//! 4. `--resume --slurm` submits only the tasks whose shard still has runs
//!    that are not complete, with the same N, so a run is never counted twice.
//!
//! # Practical considerations
//! - Tasks run with `--resume`: a task that SLURM requeues (a node failure)
//!   does not redo its complete runs. A submission without `--resume`
//!   removes the plan's run directories first, as a local sweep does.
//! - `--resume` refuses while a job of this sweep is still queued or
//!   running, so that no run is started twice.
//! - The scheduler's own latency (submission to first task start) is not
//!   netloop's; `scripts/bench.sh slurm` measures it separately.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde::{Deserialize, Serialize};

use super::exec::Outcome;
use super::plan::Plan;
use super::shard::Shard;
use super::{status, SweepError};
use crate::output::write_atomically;
use crate::shell::word as quote;

/// The folder of a sweep directory that holds the batch scripts, the job
/// record and the tasks' logs.
pub const SLURM_DIR: &str = "slurm";
const JOBS_FILE: &str = "jobs.json";
/// SLURM's default `MaxArraySize`: task ids 0..=1000.
const DEFAULT_MAX_ARRAY_SIZE: u32 = 1001;

/// `[slurm]` in a sweep file: defaults for the options of `--slurm`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlurmTable {
    /// `--partition`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub partition: Option<String>,
    /// `--time` of each array task, in SLURM's form (`30:00`, `1-00:00:00`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time: Option<String>,
    /// `--mem` of each array task (`2G`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mem: Option<String>,
    /// `--account`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub account: Option<String>,
    /// At most this many tasks at once (`--array=1-N%P`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_parallelism: Option<u32>,
    /// Runs per array task (default 1): more runs per task pay the
    /// scheduler's start-up latency fewer times, for sweeps of short runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs_per_task: Option<u32>,
    /// Extra `#SBATCH` options, one per line, e.g. `"--qos=long"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sbatch: Vec<String>,
    /// Shell lines each task runs before netloop, e.g. `"module load ns-3"`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub setup: Vec<String>,
}

/// Everything `--slurm` needs besides the plan: the `[slurm]` table with the
/// command line's options applied over it.
#[derive(Clone, Debug)]
pub struct SlurmOptions {
    pub table: SlurmTable,
    /// The `netloop` executable the tasks run (absolute; must be visible on
    /// the nodes).
    pub exe: PathBuf,
    /// The sweep file, absolute.
    pub sweep_file: PathBuf,
    /// `--timeout` to pass on to each task's sweep.
    pub timeout: Option<String>,
    /// `--set` and `--replications` words to pass on, so that each task
    /// builds the same plan.
    pub overrides: Vec<String>,
    /// Draw the plots when aggregating.
    pub plot: bool,
    /// Submit only what is not complete (`--resume --slurm`).
    pub resume: bool,
}

/// One submission: an array job and the aggregation that waits for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Submission {
    pub array_job: String,
    pub aggregate_job: String,
    /// N of `--shard I/N`.
    pub shards: u32,
    /// The array task ids submitted (shard indices).
    pub tasks: Vec<u32>,
    /// Runs that were not complete when it was submitted.
    pub runs: usize,
}

/// `slurm/jobs.json`: every submission of a sweep, oldest first.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct JobRecord {
    pub jobs: Vec<Submission>,
}

/// What the scheduler says of one array task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueState {
    Pending,
    Running,
    /// Left the queue; sacct's state when it knows it (`CANCELLED`, `TIMEOUT`, ...).
    Finished,
}

impl JobRecord {
    /// The record of sweep directory `out_dir` (empty when it has none).
    pub fn read(out_dir: &Path) -> JobRecord {
        std::fs::read_to_string(out_dir.join(SLURM_DIR).join(JOBS_FILE))
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn write(&self, out_dir: &Path) -> Result<(), SweepError> {
        let path = out_dir.join(SLURM_DIR).join(JOBS_FILE);
        let json = serde_json::to_vec_pretty(self).expect("a job record always serialises");
        write_atomically(&path, &json).map_err(|source| SweepError::Output { path, source })
    }

    /// The task (`JOB_TASK`) of the latest submission that owns run `run_index`.
    pub fn task_of(&self, run_index: usize) -> Option<String> {
        self.jobs.iter().rev().find_map(|s| {
            let task = (run_index % s.shards as usize) as u32 + 1;
            s.tasks
                .contains(&task)
                .then(|| format!("{}_{task}", s.array_job))
        })
    }

    /// What SLURM says of every task of every submission, with a note for
    /// the listing; `None` without `squeue` (not a SLURM machine).
    pub fn queue_states(&self) -> Option<HashMap<String, (QueueState, Option<String>)>> {
        if self.jobs.is_empty() {
            return None;
        }
        let ids: Vec<&str> = self.jobs.iter().map(|j| j.array_job.as_str()).collect();
        let ids = ids.join(",");
        let queued = Command::new("squeue")
            .args(["-h", "-r", "-j", &ids, "-o", "%i %T"])
            .output()
            .ok()?;
        let mut states = HashMap::new();
        // squeue fails for job ids it has forgotten; that only means "not queued".
        for line in String::from_utf8_lossy(&queued.stdout).lines() {
            let mut words = line.split_whitespace();
            let (Some(task), Some(state)) = (words.next(), words.next()) else {
                continue;
            };
            let kind = match state {
                "RUNNING" | "COMPLETING" | "CONFIGURING" => QueueState::Running,
                "PENDING" | "REQUEUED" | "SUSPENDED" => QueueState::Pending,
                _ => QueueState::Finished,
            };
            states.insert(task.to_string(), (kind, Some(state.to_lowercase())));
        }
        // sacct knows tasks that left the queue, where accounting is on.
        if let Ok(done) = Command::new("sacct")
            .args(["-n", "-P", "-X", "-j", &ids, "-o", "JobID,State"])
            .output()
        {
            if done.status.success() {
                for line in String::from_utf8_lossy(&done.stdout).lines() {
                    if let Some((task, state)) = line.split_once('|') {
                        states
                            .entry(task.to_string())
                            .or_insert((QueueState::Finished, Some(state.to_lowercase())));
                    }
                }
            }
        }
        Some(states)
    }

    /// The submissions with a task still pending or running.
    fn active(&self) -> Vec<String> {
        let Some(states) = self.queue_states() else {
            return Vec::new();
        };
        let mut active: Vec<String> = states
            .iter()
            .filter(|(_, (s, _))| *s != QueueState::Finished)
            .filter_map(|(task, _)| task.split('_').next().map(String::from))
            .collect();
        active.sort();
        active.dedup();
        active
    }
}

/// What [`submit`] did.
#[derive(Debug)]
pub struct Submitted {
    /// `None` when every run was already complete (nothing submitted).
    pub submission: Option<Submission>,
    pub array_script: PathBuf,
}

/// Plans are written, scripts generated and both jobs submitted.
///
/// # Errors
/// [`SweepError::Input`] for bad options, a sweep directory that holds
/// another plan, or a resume while a job of this sweep is still queued;
/// [`SweepError::Internal`] when `sbatch` is missing or refuses.
pub fn submit(plan: &Plan, options: &SlurmOptions) -> Result<Submitted, SweepError> {
    let out_dir = &plan.out_dir;
    let slurm_dir = out_dir.join(SLURM_DIR);
    let mut record = JobRecord::read(out_dir);
    if options.table.array_parallelism == Some(0) {
        return Err(SweepError::Input(
            "--array-parallelism must be at least 1".into(),
        ));
    }
    if options.table.runs_per_task == Some(0) {
        return Err(SweepError::Input(
            "--runs-per-task must be at least 1".into(),
        ));
    }
    let pending: Vec<usize> = if options.resume {
        plan.write_shared()?;
        let active = record.active();
        if !active.is_empty() {
            return Err(SweepError::Input(format!(
                "SLURM job {} of this sweep is still queued or running: wait for it (netloop sweep {} --status) \
                 or cancel it (scancel {}) before resuming, so that no run is started twice",
                active.join(", "),
                out_dir.display(),
                active.join(" ")
            )));
        }
        status::outcomes(plan)
            .iter()
            .enumerate()
            .filter(|(_, o)| !o.is_complete())
            .map(|(i, _)| i)
            .collect()
    } else {
        plan.write()?;
        for run in &plan.runs {
            let dir = out_dir.join(&run.dir);
            if dir.exists() {
                std::fs::remove_dir_all(&dir).map_err(|source| SweepError::Output {
                    path: dir.clone(),
                    source,
                })?;
            }
        }
        record = JobRecord::default();
        (0..plan.runs.len()).collect()
    };
    std::fs::create_dir_all(&slurm_dir).map_err(|source| SweepError::Output {
        path: slurm_dir.clone(),
        source,
    })?;
    let array_script = slurm_dir.join("array.sbatch");
    if pending.is_empty() {
        return Ok(Submitted {
            submission: None,
            array_script,
        });
    }

    // Keep the shard count of earlier submissions, so a shard names the same
    // runs in every submission of this sweep.
    let shards = match record.jobs.last() {
        Some(last) => last.shards,
        None => shard_count(
            plan.runs.len(),
            options.table.runs_per_task.unwrap_or(1),
            max_array_size(),
        ),
    };
    let mut tasks: Vec<u32> = pending
        .iter()
        .map(|&i| (i % shards as usize) as u32 + 1)
        .collect();
    tasks.sort_unstable();
    tasks.dedup();

    let script = array_script_text(plan, options, shards);
    write_atomically(&array_script, script.as_bytes()).map_err(|source| SweepError::Output {
        path: array_script.clone(),
        source,
    })?;
    let aggregate_script = slurm_dir.join("aggregate.sbatch");
    write_atomically(
        &aggregate_script,
        aggregate_script_text(plan, options).as_bytes(),
    )
    .map_err(|source| SweepError::Output {
        path: aggregate_script.clone(),
        source,
    })?;

    let mut array = format!("--array={}", task_ranges(&tasks));
    if let Some(p) = options.table.array_parallelism {
        let _ = write!(array, "%{p}");
    }
    let array_job = sbatch(&[array.as_str(), &array_script.display().to_string()])?;
    let dependency = format!("--dependency=afterany:{array_job}");
    let aggregate_job = sbatch(&[dependency.as_str(), &aggregate_script.display().to_string()])?;
    let submission = Submission {
        array_job,
        aggregate_job,
        shards,
        tasks,
        runs: pending.len(),
    };
    record.jobs.push(submission.clone());
    record.write(out_dir)?;
    Ok(Submitted {
        submission: Some(submission),
        array_script,
    })
}

/// Tasks for `runs` runs, `per_task` runs each (the last may have fewer),
/// within `max_array_size` (ids 1..=N need N < max).
pub fn shard_count(runs: usize, per_task: u32, max_array_size: u32) -> u32 {
    let limit = max_array_size.saturating_sub(1).max(1) as usize;
    runs.div_ceil(per_task.max(1) as usize).clamp(1, limit) as u32
}

/// The cluster's `MaxArraySize` (`scontrol show config`), else SLURM's default.
fn max_array_size() -> u32 {
    let Ok(out) = Command::new("scontrol").args(["show", "config"]).output() else {
        return DEFAULT_MAX_ARRAY_SIZE;
    };
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .find_map(|l| {
            let (key, value) = l.split_once('=')?;
            (key.trim() == "MaxArraySize")
                .then(|| value.trim().parse().ok())
                .flatten()
        })
        .unwrap_or(DEFAULT_MAX_ARRAY_SIZE)
}

/// `1-4,7,9-10`: sorted ids as SLURM's `--array` list.
pub fn task_ranges(ids: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        let mut end = start;
        while i + 1 < ids.len() && ids[i + 1] == end + 1 {
            i += 1;
            end = ids[i];
        }
        parts.push(if start == end {
            start.to_string()
        } else {
            format!("{start}-{end}")
        });
        i += 1;
    }
    parts.join(",")
}

/// Runs `sbatch --parsable ARGS` and returns the job id it prints.
fn sbatch(args: &[&str]) -> Result<String, SweepError> {
    let output = Command::new("sbatch")
        .arg("--parsable")
        .args(args)
        .output()
        .map_err(|e| {
            SweepError::Internal(format!(
                "cannot run sbatch ({e}): --slurm needs SLURM's commands on this machine"
            ))
        })?;
    if !output.status.success() {
        return Err(SweepError::Internal(format!(
            "sbatch {} refused the job: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        )));
    }
    let text = String::from_utf8_lossy(&output.stdout);
    // --parsable prints `ID` or `ID;CLUSTER`.
    let id = text.trim().split(';').next().unwrap_or("").to_string();
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_digit()) {
        return Err(SweepError::Internal(format!(
            "sbatch printed {text:?} where a job id was expected"
        )));
    }
    Ok(id)
}

fn quote_path(path: &Path) -> String {
    quote(&path.display().to_string())
}

/// `#SBATCH` lines shared by both scripts.
fn header(plan: &Plan, options: &SlurmOptions, name: &str, log: &str) -> String {
    let t = &options.table;
    let mut s = String::from("#!/bin/bash\n");
    let _ = writeln!(
        s,
        "# Generated by netloop sweep --slurm for {}; see docs/cluster.md.",
        plan.sweep_file.display()
    );
    let _ = writeln!(s, "#SBATCH --job-name={name}");
    let _ = writeln!(
        s,
        "#SBATCH --output={}",
        quote_path(&plan.out_dir.join(SLURM_DIR).join(log))
    );
    let _ = writeln!(s, "#SBATCH --ntasks=1");
    let _ = writeln!(s, "#SBATCH --cpus-per-task=1");
    for (option, value) in [
        ("partition", &t.partition),
        ("time", &t.time),
        ("mem", &t.mem),
        ("account", &t.account),
    ] {
        if let Some(v) = value {
            let _ = writeln!(s, "#SBATCH --{option}={}", quote(v));
        }
    }
    for line in &t.sbatch {
        let _ = writeln!(s, "#SBATCH {line}");
    }
    s.push_str("set -euo pipefail\n");
    s
}

/// Fails the task at once, with a message saying what the node cannot see.
fn visibility_checks(plan: &Plan, options: &SlurmOptions, who: &str) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "fail() {{ echo \"netloop {who} on $(hostname): $*; the sweep directory and the binaries must be on a file system every node shares (docs/cluster.md)\" >&2; exit 3; }}"
    );
    let _ = writeln!(
        s,
        "[ -d {0} ] || fail \"cannot see the sweep directory\" {0}",
        quote_path(&plan.out_dir)
    );
    let _ = writeln!(
        s,
        "[ -x {0} ] || fail \"cannot execute netloop at\" {0}",
        quote_path(&options.exe)
    );
    let _ = writeln!(
        s,
        "[ -r {0} ] || fail \"cannot read the sweep file\" {0}",
        quote_path(&options.sweep_file)
    );
    let _ = writeln!(
        s,
        "[ -r {0} ] || fail \"cannot read the scenario\" {0}",
        quote_path(&plan.scenario)
    );
    let mut servers: Vec<&PathBuf> = plan.runs.iter().filter_map(|r| r.server.as_ref()).collect();
    servers.sort();
    servers.dedup();
    for server in servers {
        if server.components().count() > 1 {
            let _ = writeln!(
                s,
                "[ -x {0} ] || fail \"cannot execute the ns-3 server\" {0}",
                quote_path(server)
            );
        } else {
            let _ = writeln!(
                s,
                "command -v {0} >/dev/null || fail \"cannot find the ns-3 server in PATH:\" {0}",
                quote_path(server)
            );
        }
    }
    s
}

fn array_script_text(plan: &Plan, options: &SlurmOptions, shards: u32) -> String {
    let name = format!("netloop-{}", sweep_name(plan));
    let mut s = header(plan, options, &name, "task-%A_%a.log");
    // When and where it started: for a person reading the log, and for the
    // scheduler-latency figure of `scripts/bench.sh slurm`.
    s.push_str("echo \"netloop: task $SLURM_ARRAY_TASK_ID on $(hostname) started at unix time $(date +%s.%N)\"\n");
    s.push_str(&visibility_checks(
        plan,
        options,
        "array task $SLURM_ARRAY_TASK_ID",
    ));
    for line in &options.table.setup {
        let _ = writeln!(s, "{line}");
    }
    let _ = write!(
        s,
        "exec {} sweep {} --out {} --shard \"$SLURM_ARRAY_TASK_ID/{shards}\" --jobs 1 --resume",
        quote_path(&options.exe),
        quote_path(&options.sweep_file),
        quote_path(&plan.out_dir)
    );
    if let Some(t) = &options.timeout {
        let _ = write!(s, " --timeout {}", quote(t));
    }
    for word in &options.overrides {
        let _ = write!(s, " {}", quote(word));
    }
    s.push('\n');
    s
}

fn aggregate_script_text(plan: &Plan, options: &SlurmOptions) -> String {
    let name = format!("netloop-{}-aggregate", sweep_name(plan));
    let mut s = header(plan, options, &name, "aggregate-%j.log");
    s.push_str(&visibility_checks(plan, options, "aggregation"));
    for line in &options.table.setup {
        let _ = writeln!(s, "{line}");
    }
    let _ = write!(
        s,
        "exec {} sweep {} --aggregate",
        quote_path(&options.exe),
        quote_path(&plan.out_dir)
    );
    if options.plot {
        s.push_str(" --plot");
    }
    s.push('\n');
    s
}

fn sweep_name(plan: &Plan) -> String {
    plan.sweep_file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "sweep".into())
}

/// The outcomes a shard leaves for the others to see are on disk; this is
/// the summary line a task prints.
pub fn shard_line(shard: Shard, outcomes: &[Outcome], selected: &[usize]) -> String {
    let complete = selected
        .iter()
        .filter(|&&i| outcomes[i].is_complete())
        .count();
    format!(
        "shard {shard}: {complete} of {} runs complete",
        selected.len()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn array_lists_are_compact() {
        assert_eq!(task_ranges(&[1, 2, 3, 4]), "1-4");
        assert_eq!(task_ranges(&[1, 2, 4, 7, 8, 9]), "1-2,4,7-9");
        assert_eq!(task_ranges(&[5]), "5");
    }

    #[test]
    fn shard_count_stays_within_max_array_size() {
        assert_eq!(shard_count(24, 1, 1001), 24);
        assert_eq!(shard_count(5000, 1, 1001), 1000);
        assert_eq!(shard_count(0, 1, 1001), 1);
        assert_eq!(shard_count(10, 1, 4), 3);
        assert_eq!(shard_count(16, 4, 1001), 4);
        assert_eq!(shard_count(17, 4, 1001), 5);
        assert_eq!(shard_count(5000, 2, 1001), 1000);
    }

    #[test]
    fn the_latest_submission_owns_a_run() {
        let record = JobRecord {
            jobs: vec![
                Submission {
                    array_job: "10".into(),
                    aggregate_job: "11".into(),
                    shards: 4,
                    tasks: vec![1, 2, 3, 4],
                    runs: 8,
                },
                Submission {
                    array_job: "20".into(),
                    aggregate_job: "21".into(),
                    shards: 4,
                    tasks: vec![3],
                    runs: 1,
                },
            ],
        };
        assert_eq!(record.task_of(2).as_deref(), Some("20_3"));
        assert_eq!(record.task_of(6).as_deref(), Some("20_3"));
        assert_eq!(record.task_of(0).as_deref(), Some("10_1"));
    }
}
