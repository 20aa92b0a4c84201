//! `netloop sweep DIR --status`: the state of every run of a sweep, read
//! from its run directories (see [`super::run_state`]) and, for a sweep
//! submitted to SLURM, from the scheduler's queue.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::exec::Outcome;
use super::plan::Plan;
use super::run_state;
use super::slurm::{JobRecord, QueueState};

/// Every run's state, in plan order.
pub fn outcomes(plan: &Plan) -> Vec<Outcome> {
    plan.runs
        .iter()
        .map(|r| {
            run_state::read(
                &plan.out_dir.join(&r.dir),
                &r.hash,
                r.legacy_hash.as_deref(),
            )
        })
        .collect()
}

/// How a run is shown: the outcome's status, refined by what SLURM says of
/// the task that owns the run.
fn label(outcome: &Outcome, queue: Option<&QueueState>) -> &'static str {
    match (outcome, queue) {
        (Outcome::Skipped | Outcome::Complete { .. }, _) => "complete",
        (Outcome::Incomplete, Some(QueueState::Running)) => "running",
        (Outcome::NotRun, Some(QueueState::Running)) => "queued in a running task",
        (Outcome::NotRun, Some(QueueState::Pending)) => "queued",
        (Outcome::NotRun, _) => "pending",
        (other, _) => other.status(),
    }
}

/// The report `--status` prints: counts per state, then every run that is
/// not complete with its error and log.
pub fn report(plan: &Plan, outcomes: &[Outcome], jobs: &JobRecord) -> String {
    let queue = jobs.queue_states();
    let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut listing = String::new();
    for (i, (run, outcome)) in plan.runs.iter().zip(outcomes).enumerate() {
        let state = queue
            .as_ref()
            .and_then(|q| jobs.task_of(i).and_then(|task| q.get(&task)));
        let label = label(outcome, state.map(|(s, _)| s));
        *counts.entry(label).or_default() += 1;
        // Runs not started yet are only counted: a large sweep has many.
        if matches!(
            label,
            "complete" | "pending" | "queued" | "queued in a running task"
        ) {
            continue;
        }
        let _ = write!(
            listing,
            "  {} ({}, run {}): {label}",
            run.hash,
            plan.point_of(run).label(),
            run.run
        );
        if let Some((_, Some(note))) = state {
            let _ = write!(listing, " [SLURM: {note}]");
        }
        if let Some(error) = outcome
            .error()
            .filter(|_| !matches!(outcome, Outcome::NotRun | Outcome::Incomplete))
        {
            let first = error.lines().next().unwrap_or("");
            let _ = write!(
                listing,
                "\n      {first}\n      log: {}",
                plan.out_dir.join(&run.dir).join("netloop.log").display()
            );
        }
        listing.push('\n');
    }
    let mut out = format!(
        "sweep {}: {} runs\n",
        plan.out_dir.display(),
        plan.runs.len()
    );
    for (label, n) in &counts {
        let _ = writeln!(out, "  {label:<24} {n}");
    }
    match (&queue, jobs.jobs.is_empty()) {
        (_, true) => {}
        (Some(_), false) => {
            let ids: Vec<String> = jobs.jobs.iter().map(|j| j.array_job.clone()).collect();
            let _ = writeln!(
                out,
                "  (SLURM jobs {} asked with squeue/sacct)",
                ids.join(", ")
            );
        }
        (None, false) => {
            let _ = writeln!(out, "  (SLURM jobs were submitted, but squeue is not available here: states read from disk only)");
        }
    }
    if !listing.is_empty() {
        out.push_str("not complete:\n");
        out.push_str(&listing);
    }
    out
}
