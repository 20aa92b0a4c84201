//! `sweep.parquet`: every figure of every run in long ("tidy") form, with
//! typed columns, for analysis in pandas, R, polars or DuckDB.
//!
//! One row per run and metric: `run_dir, point, <parameters...>,
//! replication, run, seed, status, error, wall_s, metric, value`. A run that
//! did not complete has a row for every metric too, with a null `value`, so
//! that its status is never lost (a sweep where no run completed has one row
//! per run with a null `metric`). The metric names are whatever the runs'
//! `summary.json` hold ([`super::aggregate::metrics_of`]); nothing here lists
//! them.
//!
//! Parameters are numbers wherever they can be ([`typed_parameter`]): a
//! duration in seconds and a data rate in bit/s, with the unit in the
//! column name (`network.builtin.delay.value_s`,
//! `network.ns3.p2p.data_rate_bps`), so that "2ms" sorts before "10ms".

use std::path::PathBuf;

use super::aggregate::Metrics;
use super::exec::ExecReport;
use super::plan::{value_text, Plan};
use super::SweepError;
use crate::config::DataRate;
use crate::parquet_file::{write_table, Column};

/// The file's name in the sweep directory.
pub const FILE: &str = "sweep.parquet";

/// The unit a parameter column was converted to, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Durations: seconds; the column name ends in `_s`.
    Seconds,
    /// Data rates: bits per second; the column name ends in `_bps`.
    BitsPerSecond,
}

impl Unit {
    pub fn suffix(self) -> &'static str {
        match self {
            Unit::Seconds => "_s",
            Unit::BitsPerSecond => "_bps",
        }
    }
}

/// A swept parameter as a typed column: its values at each of `values`,
/// the column name and the unit it was converted to. All numbers: a float
/// column (an integer column when every value is an integer); all
/// durations: seconds; all data rates: bit/s; all booleans: a boolean
/// column; anything else (a mixed axis, a table of `[[points]]`): text, as
/// `sweep.csv` writes it. A missing value (a key one explicit point does
/// not set) is a null.
pub fn typed_parameter(
    name: &str,
    values: &[Option<&toml::Value>],
) -> (String, Column, Option<Unit>) {
    use toml::Value as V;
    let present = || values.iter().flatten();
    let all = |f: &dyn Fn(&V) -> bool| present().all(|v| f(v));
    let map = |f: &dyn Fn(&V) -> Option<f64>| values.iter().map(|v| v.and_then(f)).collect();
    if all(&|v| matches!(v, V::Integer(_))) && present().next().is_some() {
        let column = values.iter().map(|v| v.and_then(V::as_integer)).collect();
        return (name.to_string(), Column::Int(column), None);
    }
    if all(&|v| matches!(v, V::Integer(_) | V::Float(_))) && present().next().is_some() {
        let column = map(&|v| v.as_float().or_else(|| v.as_integer().map(|i| i as f64)));
        return (name.to_string(), Column::Float(column), None);
    }
    if all(&|v| matches!(v, V::Boolean(_))) && present().next().is_some() {
        let column = values.iter().map(|v| v.and_then(V::as_bool)).collect();
        return (name.to_string(), Column::Bool(column), None);
    }
    let seconds = |v: &V| {
        v.as_str()
            .and_then(|s| s.parse::<protocol::SimTime>().ok())
            .map(protocol::SimTime::as_secs_f64)
    };
    let bps = |v: &V| {
        v.as_str()
            .and_then(|s| s.parse::<DataRate>().ok())
            .map(|r| r.0 as f64)
    };
    if present().next().is_some() {
        if all(&|v| seconds(v).is_some()) {
            let unit = Unit::Seconds;
            return (
                format!("{name}{}", unit.suffix()),
                Column::Float(map(&seconds)),
                Some(unit),
            );
        }
        if all(&|v| bps(v).is_some()) {
            let unit = Unit::BitsPerSecond;
            return (
                format!("{name}{}", unit.suffix()),
                Column::Float(map(&bps)),
                Some(unit),
            );
        }
    }
    let column = values.iter().map(|v| v.map(value_text)).collect();
    (name.to_string(), Column::Text(column), None)
}

/// Writes `sweep.parquet` from the runs' figures (`None` for a run that did
/// not complete) and wall times, in plan order.
///
/// # Errors
/// [`SweepError::Output`] when the file cannot be written.
pub fn write(
    plan: &Plan,
    report: &ExecReport,
    rows: &[(Option<Metrics>, Option<f64>)],
    metrics: &[String],
) -> Result<PathBuf, SweepError> {
    // One entry per output row: (run index, metric index or none).
    let mut index: Vec<(usize, Option<usize>)> = Vec::new();
    for i in 0..plan.runs.len() {
        if metrics.is_empty() {
            index.push((i, None));
        } else {
            index.extend((0..metrics.len()).map(|m| (i, Some(m))));
        }
    }
    let run_of = |i: usize| &plan.runs[i];
    let mut names: Vec<String> = vec!["run_dir".into(), "point".into()];
    let mut columns: Vec<Column> = vec![
        Column::Text(
            index
                .iter()
                .map(|&(i, _)| Some(run_of(i).dir.display().to_string()))
                .collect(),
        ),
        Column::Int(
            index
                .iter()
                .map(|&(i, _)| Some(run_of(i).point as i64))
                .collect(),
        ),
    ];
    for p in &plan.parameters {
        let values: Vec<Option<&toml::Value>> = index
            .iter()
            .map(|&(i, _)| {
                plan.point_of(run_of(i))
                    .values
                    .iter()
                    .find(|(k, _)| k == p)
                    .map(|(_, v)| v)
            })
            .collect();
        let (name, column, _) = typed_parameter(p, &values);
        names.push(name);
        columns.push(column);
    }
    let int = |f: &dyn Fn(usize) -> u64| {
        Column::Int(index.iter().map(|&(i, _)| Some(f(i) as i64)).collect())
    };
    names.extend(["replication", "run", "seed"].map(String::from));
    columns.push(int(&|i| run_of(i).replication));
    columns.push(int(&|i| run_of(i).run));
    columns.push(int(&|i| run_of(i).seed));
    names.extend(["status", "error", "wall_s", "metric", "value"].map(String::from));
    columns.push(Column::Text(
        index
            .iter()
            .map(|&(i, _)| Some(report.outcomes[i].status().to_string()))
            .collect(),
    ));
    columns.push(Column::Text(
        index
            .iter()
            .map(|&(i, _)| report.outcomes[i].error())
            .collect(),
    ));
    columns.push(Column::Float(
        index.iter().map(|&(i, _)| rows[i].1).collect(),
    ));
    columns.push(Column::Text(
        index
            .iter()
            .map(|&(_, m)| m.map(|m| metrics[m].clone()))
            .collect(),
    ));
    columns.push(Column::Float(
        index
            .iter()
            .map(|&(i, m)| {
                let name = &metrics[m?];
                rows[i].0.as_ref()?.iter().find(|(n, _)| n == name)?.1
            })
            .collect(),
    ));
    let path = plan.out_dir.join(FILE);
    write_table(&path, &names, &columns).map_err(|source| SweepError::Output {
        path: path.clone(),
        source,
    })?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> toml::Value {
        toml::Value::String(text.into())
    }

    #[test]
    fn durations_and_rates_become_si_numbers_named_with_their_unit() {
        let (d2, d10) = (s("2ms"), s("10ms"));
        let (name, column, unit) = typed_parameter("net.delay", &[Some(&d2), Some(&d10)]);
        assert_eq!(name, "net.delay_s");
        assert_eq!(unit, Some(Unit::Seconds));
        assert_eq!(column, Column::Float(vec![Some(0.002), Some(0.01)]));

        let (r1, r2) = (s("1.5Mbps"), s("64kbps"));
        let (name, column, _) = typed_parameter("p2p.data_rate", &[Some(&r1), Some(&r2)]);
        assert_eq!(name, "p2p.data_rate_bps");
        assert_eq!(column, Column::Float(vec![Some(1.5e6), Some(64e3)]));
    }

    #[test]
    fn numbers_stay_numbers_and_anything_else_stays_text() {
        let (a, b, c) = (toml::Value::Integer(3), toml::Value::Float(0.5), s("fast"));
        assert_eq!(
            typed_parameter("k", &[Some(&a), None]).1,
            Column::Int(vec![Some(3), None])
        );
        assert_eq!(
            typed_parameter("k", &[Some(&a), Some(&b)]).1,
            Column::Float(vec![Some(3.0), Some(0.5)])
        );
        let d = s("5ms");
        let (name, column, unit) = typed_parameter("k", &[Some(&d), Some(&c)]);
        assert_eq!((name.as_str(), unit), ("k", None));
        assert_eq!(
            column,
            Column::Text(vec![Some("5ms".into()), Some("fast".into())])
        );
        let t = toml::Value::Boolean(true);
        assert_eq!(
            typed_parameter("k", &[Some(&t)]).1,
            Column::Bool(vec![Some(true)])
        );
    }
}
