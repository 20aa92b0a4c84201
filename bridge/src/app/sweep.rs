//! `netloop sweep`: plan, run (here, in shards or on SLURM), inspect and
//! aggregate a parameter sweep (docs/sweeps.md).

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::cli::{FormatArg, SweepArgs};
use super::plot::plot_after;
use super::{out_dir_or_default, Failure};
use crate::sweep::{self, aggregate, ExecOptions, Plan, SweepFile};

pub fn sweep(args: SweepArgs, quiet: bool) -> Result<(), Failure> {
    if args.status || args.aggregate {
        return inspect_sweep(&args, quiet);
    }
    let mut file = SweepFile::load(&args.sweep)?;
    sweep_overrides(&args).apply(&mut file)?;
    let out = sweep_out_dir(&args);
    let timeout = args.timeout.map(|t| Duration::from_nanos(t.0));
    if timeout == Some(Duration::ZERO) {
        return Err(Failure::BadInput(
            "--timeout must be longer than zero".into(),
        ));
    }
    if args.slurm {
        return submit_sweep(&args, &file, &out, timeout, quiet);
    }
    // A real sweep runs the network's program anyway: check it before the runs start.
    let plan = Plan::build(
        &args.sweep,
        &file,
        &out,
        timeout,
        args.with_server || !args.dry_run,
    )?;
    if args.dry_run {
        println!(
            "{} points x {} replications = {} runs into {}",
            plan.points.len(),
            plan.replications,
            plan.runs.len(),
            out.display()
        );
        for point in &plan.points {
            println!("point {}: {}", point.index, point.label());
        }
        for run in &plan.runs {
            println!(
                "  {} point {} run {}: netloop {}",
                run.dir.display(),
                run.point,
                run.run,
                run.args.join(" ")
            );
        }
        return Ok(());
    }
    // A whole sweep holds its directory alone. Shards share it by design
    // (each run still locks its own run directory), so they take no lock.
    let _lock = if args.shard.is_none() {
        Some(sweep::lock_dir(&out)?)
    } else {
        None
    };
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Run(format!("cannot find the netloop executable: {e}")))?;
    let mut options = ExecOptions::new(exe);
    if let Some(jobs) = args.jobs {
        if jobs == 0 {
            return Err(Failure::BadInput("--jobs must be at least 1".into()));
        }
        options.jobs = jobs;
    }
    options.resume = args.resume;
    options.quiet = quiet;
    options.shard = args.shard;
    if !quiet {
        let shard = args
            .shard
            .map(|s| format!(", shard {s}"))
            .unwrap_or_default();
        eprintln!(
            "sweep: {} points x {} replications = {} runs{shard}, {} at a time, into {}",
            plan.points.len(),
            plan.replications,
            plan.runs.len(),
            options.jobs,
            out.display()
        );
    }
    let report = sweep::execute(&plan, &options)?;
    if let Some(shard) = args.shard {
        // One shard of many: the aggregates wait for all of them (--aggregate).
        let line = sweep::slurm::shard_line(shard, &report.outcomes, &report.selected);
        if !quiet || report.failed() > 0 {
            eprintln!("{line}");
        }
        if report.failed() == 0 {
            return Ok(());
        }
        return Err(Failure::Run(format!(
            "{line}; rerun this shard with: {}",
            resume_command(&args, &out)
        )));
    }
    let written = aggregate::write(&plan, &report)?;
    if args.plot {
        if let (Some(line), false) = (plot_after(&out), quiet) {
            eprintln!("{line}");
        }
    }
    let complete = report.outcomes.iter().filter(|o| o.is_complete()).count();
    if !quiet {
        eprintln!(
            "sweep: {complete} of {} runs complete in {:.1}s; {} and {}",
            plan.runs.len(),
            report.makespan.as_secs_f64(),
            written.runs_csv.display(),
            written.summary_csv.display()
        );
    }
    let not_done: Vec<_> = plan
        .runs
        .iter()
        .zip(&report.outcomes)
        .filter(|(_, o)| !o.is_complete())
        .collect();
    if not_done.is_empty() {
        return Ok(());
    }
    let mut listing = String::new();
    for (run, outcome) in &not_done {
        if matches!(outcome, sweep::Outcome::NotRun) {
            continue;
        }
        let error = outcome
            .error()
            .unwrap_or_default()
            .replace('\n', "\n      ");
        listing.push_str(&format!(
            "  {} ({}, run {}): {}\n      {error}\n      log: {}\n",
            run.hash,
            plan.point_of(run).label(),
            run.run,
            outcome.status(),
            out.join(&run.dir).join("netloop.log").display()
        ));
    }
    let again = resume_command(&args, &out);
    if report.interrupted {
        return Err(Failure::Run(format!(
            "sweep interrupted: {} of {} runs not complete\n{listing}  finish it with: {again}",
            not_done.len(),
            plan.runs.len()
        )));
    }
    Err(Failure::Run(format!(
        "{} of {} runs failed:\n{listing}  rerun only these with: {again}",
        not_done.len(),
        plan.runs.len()
    )))
}

/// `--set` and `--replications` of a sweep.
fn sweep_overrides(args: &SweepArgs) -> sweep::SweepOverrides {
    let mut set = args.set.clone();
    set.extend(args.format.map(FormatArg::set));
    sweep::SweepOverrides {
        set,
        replications: args.replications,
    }
}

/// The sweep directory: `--out`, else `results/<sweep file name>`.
fn sweep_out_dir(args: &SweepArgs) -> PathBuf {
    out_dir_or_default(args.out.clone(), &args.sweep, "sweep")
}

/// `--status` and `--aggregate`: read a sweep directory's plan and runs.
fn inspect_sweep(args: &SweepArgs, quiet: bool) -> Result<(), Failure> {
    let dir = if Plan::is_sweep_dir(&args.sweep) {
        args.sweep.clone()
    } else {
        sweep_out_dir(args)
    };
    let plan = Plan::read(&dir)?;
    let outcomes = sweep::status::outcomes(&plan);
    if args.status {
        print!(
            "{}",
            sweep::status::report(
                &plan,
                &outcomes,
                &sweep::slurm::JobRecord::read(&plan.out_dir)
            )
        );
        return Ok(());
    }
    let complete = outcomes.iter().filter(|o| o.is_complete()).count();
    let report = sweep::ExecReport {
        selected: (0..plan.runs.len()).collect(),
        outcomes,
        interrupted: false,
        makespan: Duration::ZERO,
    };
    let written = aggregate::write(&plan, &report)?;
    if args.plot {
        if let (Some(line), false) = (plot_after(&plan.out_dir), quiet) {
            eprintln!("{line}");
        }
    }
    if !quiet {
        eprintln!(
            "sweep: {complete} of {} runs complete; {} and {}",
            plan.runs.len(),
            written.runs_csv.display(),
            written.summary_csv.display()
        );
    }
    Ok(())
}

/// `--slurm`: plan as a local sweep would, then submit a job array.
fn submit_sweep(
    args: &SweepArgs,
    file: &SweepFile,
    out: &Path,
    timeout: Option<Duration>,
    quiet: bool,
) -> Result<(), Failure> {
    let absolute = |p: &Path| -> Result<PathBuf, Failure> {
        std::path::absolute(p)
            .map_err(|e| Failure::Run(format!("cannot make {} absolute: {e}", p.display())))
    };
    // Nodes start in another directory: every path the tasks see is absolute.
    let sweep_file = absolute(&args.sweep)?;
    let out = absolute(out)?;
    let plan = Plan::build(&sweep_file, file, &out, timeout, true)?;
    // Held while the plan is written and old run directories are removed;
    // the array's shards then share the directory.
    let _lock = sweep::lock_dir(&out)?;
    let mut table = file.slurm.clone().unwrap_or_default();
    for (value, slot) in [
        (&args.partition, &mut table.partition),
        (&args.time, &mut table.time),
        (&args.mem, &mut table.mem),
        (&args.account, &mut table.account),
    ] {
        if value.is_some() {
            slot.clone_from(value);
        }
    }
    if args.array_parallelism.is_some() {
        table.array_parallelism = args.array_parallelism;
    }
    if args.runs_per_task.is_some() {
        table.runs_per_task = args.runs_per_task;
    }
    let exe = std::env::current_exe()
        .map_err(|e| Failure::Run(format!("cannot find the netloop executable: {e}")))?;
    let options = sweep::slurm::SlurmOptions {
        table,
        exe,
        sweep_file,
        timeout: args.timeout.map(|t| t.to_string()),
        overrides: sweep_overrides(args).words(),
        plot: args.plot,
        resume: args.resume,
    };
    let submitted = sweep::slurm::submit(&plan, &options)?;
    match submitted.submission {
        None => {
            if !quiet {
                eprintln!(
                    "sweep: all {} runs are complete; nothing to submit",
                    plan.runs.len()
                );
            }
        }
        Some(s) => {
            if !quiet {
                eprintln!(
                    "sweep: {} runs of {} in {} array tasks (shards of {}), into {}",
                    s.runs,
                    plan.runs.len(),
                    s.tasks.len(),
                    s.shards,
                    out.display()
                );
                eprintln!("  batch script {}", submitted.array_script.display());
                eprintln!(
                    "  aggregation job {} runs when the array is done",
                    s.aggregate_job
                );
                eprintln!("  follow it with: netloop sweep {} --status", out.display());
            }
            // The job id alone on stdout, for scripts (`jobid=$(netloop sweep ... --slurm)`).
            println!("{}", s.array_job);
        }
    }
    Ok(())
}

/// The command that resumes this sweep exactly: same file, same directory
/// (explicit, since the default depends on the working directory), same
/// jobs, timeout, plots and overrides.
fn resume_command(args: &SweepArgs, out: &Path) -> String {
    let mut words = vec![
        "netloop".to_string(),
        "sweep".into(),
        crate::shell::word(&args.sweep.display().to_string()),
    ];
    words.extend([
        "--out".into(),
        crate::shell::word(&out.display().to_string()),
    ]);
    if let Some(jobs) = args.jobs {
        words.extend(["--jobs".into(), jobs.to_string()]);
    }
    if let Some(timeout) = args.timeout {
        words.extend(["--timeout".into(), crate::shell::word(&timeout.to_string())]);
    }
    if args.plot {
        words.push("--plot".into());
    }
    words.extend(
        sweep_overrides(args)
            .words()
            .iter()
            .map(|w| crate::shell::word(w)),
    );
    if let Some(shard) = args.shard {
        words.extend(["--shard".into(), shard.to_string()]);
    }
    words.push("--resume".into());
    words.join(" ")
}
