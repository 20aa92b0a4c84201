//! `sweep.csv` and `sweep_summary.csv`.
//!
//! - `sweep.csv`: one row per run: `run_dir, point, <parameters...>,
//!   replication, run, seed, status, error, <metrics...>, wall_s`. Metrics
//!   are every figure of the run's `summary.json` (see [`metrics_of`]); they
//!   are left empty for a run that did not complete, so that a partial run
//!   cannot bias an average by accident.
//! - `sweep_summary.csv`: one row per parameter point and metric, in long
//!   ("tidy") form, ready for pandas, R or gnuplot: `point, <parameters...>,
//!   metric, n, mean, std, ci95_low, ci95_high, ci95_half_width, non_finite,
//!   not_settled`. Only complete runs count; `n` is the number of them with
//!   a finite value for the metric (an overshoot can be undefined). `std` is
//!   the sample standard deviation (n - 1); the interval is
//!   `mean ± t(0.975, n - 1) std / sqrt(n)` with Student's t from statrs.
//!   With `n < 2` the spread columns are empty. A value that is not a
//!   number JSON can hold (an ISE that overflowed: `inf`) is not averaged
//!   but counted in `non_finite`, and a run whose output did not settle has
//!   no settling time but is counted in `not_settled` (on the
//!   `settling_time_s` rows), so neither silently leaves a mean.
//!
//! A run that a stop condition ended (`stop_when`) has that condition as
//! its `status` in `sweep.csv`; [`super::findings`] adds its rows to
//! `sweep_summary.csv` (`<condition>_fraction` with a Wilson interval) and
//! keeps it out of the other means.

use std::path::{Path, PathBuf};

use serde_json::Value;
use statrs::distribution::{ContinuousCDF, StudentsT};

use super::exec::ExecReport;
use super::plan::{value_text, Plan};
use super::SweepError;
use crate::output::write_atomically;

/// Named figures of one run, in a stable order. A value may be infinite or
/// NaN (from `summary.json`'s `non_finite`).
pub type Metrics = Vec<(String, Option<f64>)>;

/// The figures of a run's `summary.json`; `None` where it has `null` (e.g.
/// no overshoot because the reference never moved), except for a metric
/// that `non_finite` names, which gets its value back (`inf`, `nan`).
/// `settled` becomes 1 or 0.
pub fn metrics_of(summary: &Value) -> Metrics {
    let mut out = Vec::new();
    for lp in summary["loops"].as_array().into_iter().flatten() {
        let name = lp["name"].as_str().unwrap_or("loop");
        for output in lp["outputs"].as_array().into_iter().flatten() {
            let o = output["output"].as_str().unwrap_or("y");
            let prefix = format!("{name}.{o}");
            let first = out.len();
            flatten(
                output,
                &prefix,
                &["output", "setpoint", "non_finite"],
                &mut out,
            );
            for (metric, value) in output["non_finite"].as_object().into_iter().flatten() {
                let value = match value.as_str() {
                    Some("inf") => f64::INFINITY,
                    Some("-inf") => f64::NEG_INFINITY,
                    _ => f64::NAN,
                };
                let full = format!("{prefix}.{metric}");
                if let Some(entry) = out[first..].iter_mut().find(|(n, _)| *n == full) {
                    entry.1 = Some(value);
                }
            }
        }
        out.push((format!("{name}.resets"), lp["resets"].as_f64()));
    }
    for flow in summary["flows"].as_array().into_iter().flatten() {
        let prefix = format!(
            "{}.{}",
            flow["loop"].as_str().unwrap_or("loop"),
            flow["direction"].as_str().unwrap_or("flow")
        );
        flatten(
            flow,
            &prefix,
            &["flow", "loop", "direction", "src", "dst", "port", "size"],
            &mut out,
        );
    }
    flatten(&summary["totals"], "totals", &[], &mut out);
    out.push(("delivery_ratio".into(), summary["delivery_ratio"].as_f64()));
    out.push(("syncs".into(), summary["sync"]["syncs"].as_f64()));
    out.extend(super::findings::metrics_of(summary));
    out
}

fn flatten(v: &Value, prefix: &str, skip: &[&str], out: &mut Vec<(String, Option<f64>)>) {
    let Some(map) = v.as_object() else { return };
    for (k, v) in map {
        if skip.contains(&k.as_str()) {
            continue;
        }
        let name = format!("{prefix}.{k}");
        match v {
            Value::Number(n) => out.push((name, n.as_f64())),
            Value::Bool(b) => out.push((name, Some(f64::from(u8::from(*b))))),
            Value::Null => out.push((name, None)),
            Value::Object(_) => flatten(v, &name, &[], out),
            _ => {}
        }
    }
}

/// Mean, sample standard deviation and 95% t interval of `values`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stats {
    pub n: usize,
    pub mean: Option<f64>,
    pub std: Option<f64>,
    pub ci95_half_width: Option<f64>,
}

impl Stats {
    pub fn of(values: &[f64]) -> Stats {
        let n = values.len();
        if n == 0 {
            return Stats {
                n,
                mean: None,
                std: None,
                ci95_half_width: None,
            };
        }
        let mean = values.iter().sum::<f64>() / n as f64;
        if n < 2 {
            return Stats {
                n,
                mean: Some(mean),
                std: None,
                ci95_half_width: None,
            };
        }
        let var = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        let std = var.sqrt();
        let t = StudentsT::new(0.0, 1.0, (n - 1) as f64)
            .expect("n - 1 >= 1 degrees of freedom")
            .inverse_cdf(0.975);
        Stats {
            n,
            mean: Some(mean),
            std: Some(std),
            ci95_half_width: Some(t * std / (n as f64).sqrt()),
        }
    }
}

/// Where the aggregates went.
#[derive(Clone, Debug)]
pub struct Written {
    pub runs_csv: PathBuf,
    pub summary_csv: PathBuf,
    /// `sweep.parquet` ([`super::long_form`]).
    pub parquet: PathBuf,
    pub metrics: Vec<String>,
}

fn cell(v: Option<f64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_default()
}

/// Writes `sweep.csv`, `sweep_summary.csv` and `sweep.parquet` into the
/// plan's directory.
///
/// # Errors
/// [`SweepError::Output`] when a file cannot be written.
pub fn write(plan: &Plan, report: &ExecReport) -> Result<Written, SweepError> {
    // Per run: its metrics (complete runs only) and its wall time.
    let mut rows: Vec<(Option<Metrics>, Option<f64>)> = Vec::new();
    let mut metrics: Vec<String> = Vec::new();
    // Per run: the status its summary gives (complete runs only), and the
    // stop conditions the sweep's scenarios have.
    let mut statuses: Vec<Option<String>> = Vec::new();
    let mut conditions: Vec<String> = Vec::new();
    for (run, outcome) in plan.runs.iter().zip(&report.outcomes) {
        let dir = plan.out_dir.join(&run.dir);
        let summary = outcome
            .is_complete()
            .then(|| read_json(&dir.join("summary.json")))
            .flatten();
        let figures = summary.as_ref().map(metrics_of);
        statuses.push(summary.as_ref().map(super::findings::status_of));
        for name in summary.iter().flat_map(super::findings::condition_names) {
            if !conditions.contains(&name) {
                conditions.push(name);
            }
        }
        if let Some(f) = &figures {
            for (name, _) in f {
                if !metrics.contains(name) {
                    metrics.push(name.clone());
                }
            }
        }
        let wall = read_json(&dir.join("timing.json")).and_then(|t| t["wall_s"].as_f64());
        rows.push((figures, wall));
    }

    // sweep.csv
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["run_dir".into(), "point".into()];
    header.extend(plan.parameters.iter().cloned());
    header.extend(["replication", "run", "seed", "status", "error"].map(String::from));
    header.extend(metrics.iter().cloned());
    header.push("wall_s".into());
    w.write_record(&header).map_err(csv_error)?;
    for (((run, outcome), (figures, wall)), status) in plan
        .runs
        .iter()
        .zip(&report.outcomes)
        .zip(&rows)
        .zip(&statuses)
    {
        let point = plan.point_of(run);
        let mut record = vec![run.dir.display().to_string(), run.point.to_string()];
        record.extend(plan.parameters.iter().map(|p| param_cell(point, p)));
        record.extend([
            run.replication.to_string(),
            run.run.to_string(),
            run.seed.to_string(),
            status
                .clone()
                .unwrap_or_else(|| outcome.status().to_string()),
            outcome
                .error()
                .map(|e| e.replace('\n', " | "))
                .unwrap_or_default(),
        ]);
        for m in &metrics {
            let v = figures
                .as_ref()
                .and_then(|f| f.iter().find(|(n, _)| n == m))
                .and_then(|(_, v)| *v);
            record.push(cell(v));
        }
        record.push(cell(*wall));
        w.write_record(&record).map_err(csv_error)?;
    }
    let runs_csv = plan.out_dir.join("sweep.csv");
    let bytes = w
        .into_inner()
        .map_err(|e| SweepError::Internal(e.to_string()))?;
    write_atomically(&runs_csv, &bytes).map_err(|source| SweepError::Output {
        path: runs_csv.clone(),
        source,
    })?;

    // sweep_summary.csv
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header: Vec<String> = vec!["point".into()];
    header.extend(plan.parameters.iter().cloned());
    header.extend(
        [
            "metric",
            "n",
            "mean",
            "std",
            "ci95_low",
            "ci95_high",
            "ci95_half_width",
            "non_finite",
            "not_settled",
        ]
        .map(String::from),
    );
    w.write_record(&header).map_err(csv_error)?;
    for point in &plan.points {
        // The complete runs of this point, with their statuses.
        let finished: Vec<(&Metrics, &str)> = plan
            .runs
            .iter()
            .zip(&rows)
            .zip(&statuses)
            .filter(|((run, _), _)| run.point == point.index)
            .filter_map(|((_, (figures, _)), status)| {
                Some((figures.as_ref()?, status.as_deref().unwrap_or("complete")))
            })
            .collect();
        // Runs that a stop condition ended count in the fractions and the
        // stop time only.
        let runs: Vec<&Metrics> = finished
            .iter()
            .filter(|(_, status)| *status == "complete")
            .map(|(f, _)| *f)
            .collect();
        let stopped: Vec<&Metrics> = finished
            .iter()
            .filter(|(_, status)| *status != "complete")
            .map(|(f, _)| *f)
            .collect();
        let value = |f: &Metrics, m: &str| f.iter().find(|(n, _)| n == m).and_then(|(_, v)| *v);
        for m in &metrics {
            let runs = if m.starts_with("stop.") {
                &stopped
            } else {
                &runs
            };
            let values: Vec<f64> = runs.iter().filter_map(|f| value(f, m)).collect();
            let finite: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
            let non_finite = values.len() - finite.len();
            // Counted on the settling time's row, from its `settled` sibling.
            let not_settled = m.strip_suffix(".settling_time_s").map(|output| {
                let settled = format!("{output}.settled");
                runs.iter()
                    .filter(|f| value(f, &settled) == Some(0.0))
                    .count()
            });
            let s = Stats::of(&finite);
            let mut record = vec![point.index.to_string()];
            record.extend(plan.parameters.iter().map(|p| param_cell(point, p)));
            let lo = s.mean.zip(s.ci95_half_width).map(|(m, h)| m - h);
            let hi = s.mean.zip(s.ci95_half_width).map(|(m, h)| m + h);
            record.extend([
                m.clone(),
                s.n.to_string(),
                cell(s.mean),
                cell(s.std),
                cell(lo),
                cell(hi),
                cell(s.ci95_half_width),
                non_finite.to_string(),
                not_settled.map(|n| n.to_string()).unwrap_or_default(),
            ]);
            w.write_record(&record).map_err(csv_error)?;
        }
        let statuses: Vec<&str> = finished.iter().map(|(_, s)| *s).collect();
        for f in super::findings::fractions(&conditions, &statuses) {
            let interval = super::findings::wilson95(f.k, f.n);
            let mut record = vec![point.index.to_string()];
            record.extend(plan.parameters.iter().map(|p| param_cell(point, p)));
            record.extend([
                f.metric.clone(),
                f.n.to_string(),
                cell(f.mean()),
                String::new(),
                cell(interval.map(|i| i.0)),
                cell(interval.map(|i| i.1)),
                String::new(),
                "0".into(),
                String::new(),
            ]);
            w.write_record(&record).map_err(csv_error)?;
        }
    }
    let summary_csv = plan.out_dir.join("sweep_summary.csv");
    let bytes = w
        .into_inner()
        .map_err(|e| SweepError::Internal(e.to_string()))?;
    write_atomically(&summary_csv, &bytes).map_err(|source| SweepError::Output {
        path: summary_csv.clone(),
        source,
    })?;
    let parquet = super::long_form::write(plan, report, &rows, &metrics)?;
    Ok(Written {
        runs_csv,
        summary_csv,
        parquet,
        metrics,
    })
}

fn param_cell(point: &super::plan::Point, parameter: &str) -> String {
    point
        .values
        .iter()
        .find(|(k, _)| k == parameter)
        .map(|(_, v)| value_text(v))
        .unwrap_or_default()
}

fn read_json(path: &Path) -> Option<Value> {
    serde_json::from_str(&crate::input::read_input(path).ok()?).ok()
}

fn csv_error(e: csv::Error) -> SweepError {
    SweepError::Internal(format!("cannot format a CSV row: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Known answer: x = [1, 2, 3, 4]: mean 2.5, s = sqrt(5/3) = 1.2909944,
    /// t(0.975, 3) = 3.1824463 (tables), half width = t s / 2 = 2.0542603.
    #[test]
    fn t_interval_matches_tables() {
        let s = Stats::of(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(s.n, 4);
        assert_eq!(s.mean, Some(2.5));
        assert!((s.std.unwrap() - 1.290_994_448_735_805_6).abs() < 1e-12);
        assert!(
            (s.ci95_half_width.unwrap() - 2.054_260_3).abs() < 1e-6,
            "{s:?}"
        );
        let one = Stats::of(&[7.0]);
        assert_eq!(
            (one.mean, one.std, one.ci95_half_width),
            (Some(7.0), None, None)
        );
        assert_eq!(Stats::of(&[]).n, 0);
    }

    #[test]
    fn metrics_are_named_by_loop_output_and_flow() {
        let summary: Value = serde_json::json!({
            "loops": [{"name": "servo", "outputs": [{"output": "theta", "iae": 0.5, "overshoot_percent": null}], "resets": 0}],
            "flows": [{"flow": 0, "loop": "servo", "direction": "uplink", "sent": 10, "delay": {"mean_s": 0.002}}],
            "totals": {"sent": 10},
            "delivery_ratio": 1.0,
            "sync": {"syncs": 300}
        });
        let m = metrics_of(&summary);
        let names: Vec<&str> = m.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                "servo.theta.iae",
                "servo.theta.overshoot_percent",
                "servo.resets",
                "servo.uplink.delay.mean_s",
                "servo.uplink.sent",
                "totals.sent",
                "delivery_ratio",
                "syncs"
            ]
        );
        assert_eq!(m[1].1, None);
        assert_eq!(m[3].1, Some(0.002));
    }

    /// A metric `non_finite` names gets its value back instead of null, and
    /// `settled` is a 1 / 0 figure.
    #[test]
    fn non_finite_metrics_and_settled_are_figures() {
        let summary: Value = serde_json::json!({
            "loops": [{"name": "servo", "outputs": [{"output": "theta", "iae": 1e160, "ise": null,
                "settling_time_s": null, "settled": false, "non_finite": {"ise": "inf"}}], "resets": 0}],
        });
        let m = metrics_of(&summary);
        let get = |name: &str| {
            m.iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("{name}: {m:?}"))
                .1
        };
        assert_eq!(get("servo.theta.ise"), Some(f64::INFINITY));
        assert_eq!(get("servo.theta.settled"), Some(0.0));
        assert_eq!(get("servo.theta.settling_time_s"), None);
        assert!(m.iter().all(|(n, _)| !n.contains("non_finite")), "{m:?}");
    }
}
