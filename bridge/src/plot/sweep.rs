//! Figures of a sweep: each metric of `sweep_summary.csv` against a swept
//! parameter, with 95% confidence bars, one line per combination of the
//! other parameters (with two parameters: one line per value of the second).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use protocol::SimTime;

use super::{bounds, color, draw_legend, padded, render, Figure, PlotError, PlotOptions};
use crate::config::DataRate;

/// One row of `sweep_summary.csv`.
struct Row {
    params: Vec<String>,
    metric: String,
    n: usize,
    mean: Option<f64>,
    lo: Option<f64>,
    hi: Option<f64>,
}

/// How x values are placed.
enum Axis {
    /// Numbers: plain, or durations and data rates in the unit `unit` names
    /// (the one the sweep file wrote, when all its values share it).
    Numeric {
        values: Vec<f64>,
        unit: Option<&'static str>,
    },
    /// Anything else: one slot per distinct value, in order of appearance.
    Categorical(Vec<String>),
}

/// Duration units as a sweep file writes them, with their length in seconds;
/// longest suffix first, so that "ms" is not read as "s".
const TIME_UNITS: [(&str, f64); 6] = [
    ("ns", 1e-9),
    ("us", 1e-6),
    ("ms", 1e-3),
    ("min", 60.0),
    ("h", 3600.0),
    ("s", 1.0),
];

/// Data-rate units, in bit/s.
const RATE_UNITS: [(&str, f64); 5] = [
    ("Gbps", 1e9),
    ("Mbps", 1e6),
    ("kbps", 1e3),
    ("Kbps", 1e3),
    ("bps", 1.0),
];

/// The unit every value is written in, if they share one.
fn common_unit(values: &[String], units: &[(&'static str, f64)]) -> Option<(&'static str, f64)> {
    let unit_of = |v: &str| units.iter().copied().find(|(u, _)| v.trim().ends_with(u));
    let first = unit_of(values.first()?)?;
    values
        .iter()
        .all(|v| unit_of(v).map(|u| u.0) == Some(first.0))
        .then_some(first)
}

impl Axis {
    fn of(values: &[String]) -> Axis {
        if let Some(v) = values
            .iter()
            .map(|s| s.trim().parse::<f64>().ok())
            .collect::<Option<Vec<f64>>>()
        {
            return Axis::Numeric {
                values: v,
                unit: None,
            };
        }
        if let Some(v) = values
            .iter()
            .map(|s| s.trim().parse::<SimTime>().ok().map(SimTime::as_secs_f64))
            .collect::<Option<Vec<f64>>>()
        {
            let (unit, scale) = common_unit(values, &TIME_UNITS).unwrap_or(("s", 1.0));
            return Axis::Numeric {
                values: v.into_iter().map(|x| x / scale).collect(),
                unit: Some(unit),
            };
        }
        if let Some(v) = values
            .iter()
            .map(|s| s.trim().parse::<DataRate>().ok().map(|r| r.0 as f64))
            .collect::<Option<Vec<f64>>>()
        {
            let (unit, scale) = common_unit(values, &RATE_UNITS).unwrap_or(("bps", 1.0));
            return Axis::Numeric {
                values: v.into_iter().map(|x| x / scale).collect(),
                unit: Some(unit),
            };
        }
        let mut distinct: Vec<String> = Vec::new();
        for v in values {
            if !distinct.contains(v) {
                distinct.push(v.clone());
            }
        }
        Axis::Categorical(distinct)
    }

    fn position(&self, index: usize, text: &str) -> f64 {
        match self {
            Axis::Numeric { values, .. } => values[index],
            Axis::Categorical(d) => d.iter().position(|v| v == text).unwrap_or(0) as f64,
        }
    }
}

/// Plots the sweep in `dir` into `dir/plots/`, one PNG and one SVG per metric.
///
/// # Errors
/// [`PlotError::Input`] when `sweep_summary.csv` is missing or malformed, or
/// the x parameter is not swept.
pub fn plot_sweep(dir: &Path, options: &PlotOptions) -> Result<Vec<PathBuf>, PlotError> {
    let path = dir.join("sweep_summary.csv");
    let mut reader = csv::Reader::from_path(&path).map_err(|e| {
        PlotError::Input(format!(
            "cannot read {}: {e} (has the sweep finished? `netloop sweep --resume` completes it)",
            path.display()
        ))
    })?;
    let header: Vec<String> = reader
        .headers()
        .map_err(|e| PlotError::Input(format!("{}: {e}", path.display())))?
        .iter()
        .map(String::from)
        .collect();
    let metric_col = header
        .iter()
        .position(|h| h == "metric")
        .ok_or_else(|| PlotError::Input(format!("{}: no metric column", path.display())))?;
    let parameters: Vec<String> = header[1..metric_col].to_vec();
    let col = |name: &str| header.iter().position(|h| h == name);
    let (Some(n_col), Some(mean_col), Some(lo_col), Some(hi_col)) =
        (col("n"), col("mean"), col("ci95_low"), col("ci95_high"))
    else {
        return Err(PlotError::Input(format!(
            "{}: missing n/mean/ci95 columns",
            path.display()
        )));
    };
    let mut rows = Vec::new();
    for (line, record) in reader.records().enumerate() {
        let line = line + 2;
        let r = record.map_err(|e| PlotError::Input(format!("{}: {e}", path.display())))?;
        // A cell that is there but not a number is a corrupt file, not a gap.
        let bad = |i: usize| {
            PlotError::Input(format!(
                "{} line {line}: `{}` in column {} is not a number: the file is corrupt, nothing plotted",
                path.display(),
                r.get(i).unwrap_or(""),
                header[i]
            ))
        };
        for i in [n_col, mean_col, lo_col, hi_col] {
            let cell = r.get(i).unwrap_or("");
            if !cell.is_empty() && cell.parse::<f64>().is_err() {
                return Err(bad(i));
            }
        }
        let num = |i: usize| r.get(i).and_then(|s| s.parse::<f64>().ok());
        rows.push(Row {
            params: (1..metric_col)
                .map(|i| r.get(i).unwrap_or("").to_string())
                .collect(),
            metric: r.get(metric_col).unwrap_or("").to_string(),
            n: r.get(n_col).and_then(|s| s.parse().ok()).unwrap_or(0),
            mean: num(mean_col),
            lo: num(lo_col),
            hi: num(hi_col),
        });
    }

    if rows.is_empty() {
        return Err(PlotError::Input(format!(
            "{} holds no rows (no run completed?): nothing to plot",
            path.display()
        )));
    }
    let x_index = match &options.x {
        Some(x) => Some(parameters.iter().position(|p| p == x).ok_or_else(|| {
            PlotError::Input(format!(
                "`{x}` is not a swept parameter; the sweep varies: {}",
                parameters.join(", ")
            ))
        })?),
        None => (!parameters.is_empty()).then_some(0),
    };

    let mut metrics: Vec<String> = Vec::new();
    for r in &rows {
        if !metrics.contains(&r.metric) {
            metrics.push(r.metric.clone());
        }
    }
    let out = dir.join("plots");
    let mut files = Vec::new();
    let chosen: Vec<String> = metrics
        .into_iter()
        .filter(|m| super::metric_selected(m, &options.metrics))
        .collect();
    if chosen.is_empty() {
        return Err(PlotError::Input(format!(
            "no metric of {} matches {}",
            path.display(),
            options.metrics.join(", ")
        )));
    }
    for metric in chosen {
        let selected: Vec<&Row> = rows
            .iter()
            .filter(|r| r.metric == metric && r.n > 0 && r.mean.is_some())
            .collect();
        if selected.is_empty() {
            continue;
        }
        let figure = MetricFigure {
            metric: &metric,
            rows: selected,
            parameters: &parameters,
            x_index,
            title: dir_title(dir),
        };
        files.extend(render(&figure, &out.join(file_name(&metric)))?);
    }
    if files.is_empty() {
        return Err(PlotError::Input(format!(
            "{}: no complete run has a value for any chosen metric: nothing to plot",
            path.display()
        )));
    }
    Ok(files)
}

/// The unit a metric's name says it has (`..._s`, `..._percent`), if any.
fn metric_unit(metric: &str) -> Option<&'static str> {
    let last = metric.rsplit('.').next().unwrap_or(metric);
    if last.ends_with("_s") {
        Some("s")
    } else if last.ends_with("_percent") {
        Some("%")
    } else if last.ends_with("_ratio") || last == "delivery_ratio" {
        Some("fraction")
    } else {
        None
    }
}

fn dir_title(dir: &Path) -> String {
    dir.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| dir.display().to_string())
}

/// A metric name as a file name.
fn file_name(metric: &str) -> String {
    metric
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect()
}

struct MetricFigure<'a> {
    metric: &'a str,
    rows: Vec<&'a Row>,
    parameters: &'a [String],
    x_index: Option<usize>,
    title: String,
}

impl Figure for MetricFigure<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        let x_texts: Vec<String> = self
            .rows
            .iter()
            .map(|r| {
                self.x_index
                    .map(|i| r.params[i].clone())
                    .unwrap_or_default()
            })
            .collect();
        let axis = Axis::of(&x_texts);
        let xs: Vec<f64> = x_texts
            .iter()
            .enumerate()
            .map(|(i, t)| axis.position(i, t))
            .collect();
        // One line per combination of the other parameters.
        let mut series: BTreeMap<String, Vec<(f64, &Row)>> = BTreeMap::new();
        let mut order: Vec<String> = Vec::new();
        for (r, &x) in self.rows.iter().zip(&xs) {
            let label = self
                .parameters
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != self.x_index)
                .map(|(i, p)| format!("{p} = {}", r.params[i]))
                .collect::<Vec<_>>()
                .join(", ");
            if !series.contains_key(&label) {
                order.push(label.clone());
            }
            series.entry(label).or_default().push((x, r));
        }
        let ys = self
            .rows
            .iter()
            .flat_map(|r| [r.mean, r.lo, r.hi])
            .flatten();
        let (ylo, yhi) = bounds(ys).unwrap_or((0.0, 1.0));
        let (xlo, xhi) = bounds(xs.iter().copied()).unwrap_or((0.0, 1.0));
        let x_range = match &axis {
            Axis::Categorical(d) => -0.5..(d.len() as f64 - 0.5),
            Axis::Numeric { .. } => padded(xlo, xhi),
        };
        let x_desc = match (&axis, self.x_index) {
            (_, None) => "(no swept parameter)".to_string(),
            (Axis::Numeric { unit: Some(u), .. }, Some(i)) => {
                format!("{} [{u}]", self.parameters[i])
            }
            (_, Some(i)) => self.parameters[i].clone(),
        };
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!(
                    "{} (mean, 95% confidence interval)  |  {}",
                    self.metric, self.title
                ),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(x_range, padded(ylo, yhi))?;
        let categories: Vec<String> = match &axis {
            Axis::Categorical(d) => d.clone(),
            Axis::Numeric { .. } => Vec::new(),
        };
        let mut mesh = chart.configure_mesh();
        let y_desc = match metric_unit(self.metric) {
            Some(unit) => format!("{} [{unit}]", self.metric),
            None => self.metric.to_string(),
        };
        mesh.x_desc(x_desc)
            .y_desc(y_desc)
            .label_style(("sans-serif", 13));
        let formatter = |x: &f64| {
            let i = x.round();
            if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < categories.len() {
                categories[i as usize].clone()
            } else {
                String::new()
            }
        };
        if !categories.is_empty() {
            mesh.x_labels(4 * categories.len() + 1)
                .x_label_formatter(&formatter)
                .disable_x_mesh();
        }
        mesh.draw()?;

        let span = match &axis {
            Axis::Categorical(d) => d.len().max(1) as f64,
            Axis::Numeric { .. } => (xhi - xlo).max(1e-12),
        };
        let cap = span * 0.008;
        let named = order.len() > 1 || order.first().is_some_and(|l| !l.is_empty());
        for (k, label) in order.iter().enumerate() {
            let c = color(k);
            let mut points = series[label].clone();
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            let line: Vec<(f64, f64)> = points
                .iter()
                .filter_map(|(x, r)| r.mean.map(|m| (*x, m)))
                .collect();
            let drawn = chart.draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))?;
            if named {
                drawn.label(label.clone()).legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
            }
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
            // How many runs each point averages: a mean of 2 is not one of 30.
            chart.draw_series(points.iter().filter_map(|(x, r)| {
                r.mean.map(|m| {
                    Text::new(
                        format!("n={}", r.n),
                        (*x, m),
                        ("sans-serif", 11).into_font().color(&c),
                    )
                })
            }))?;
            for (x, r) in &points {
                if let (Some(lo), Some(hi)) = (r.lo, r.hi) {
                    chart.draw_series([
                        PathElement::new(vec![(*x, lo), (*x, hi)], c.stroke_width(1)),
                        PathElement::new(vec![(*x - cap, lo), (*x + cap, lo)], c.stroke_width(1)),
                        PathElement::new(vec![(*x - cap, hi), (*x + cap, hi)], c.stroke_width(1)),
                    ])?;
                }
            }
        }
        if named {
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    fn numeric(axis: Axis) -> (Vec<f64>, Option<&'static str>) {
        match axis {
            Axis::Numeric { values, unit } => (values, unit),
            Axis::Categorical(c) => panic!("categorical: {c:?}"),
        }
    }

    #[test]
    fn durations_and_rates_are_numeric_in_the_unit_the_sweep_wrote() {
        assert_eq!(
            numeric(Axis::of(&texts(&["2ms", "10ms"]))),
            (vec![2.0, 10.0], Some("ms"))
        );
        assert_eq!(
            numeric(Axis::of(&texts(&["500us", "2ms"]))),
            (vec![0.0005, 0.002], Some("s"))
        );
        assert_eq!(
            numeric(Axis::of(&texts(&["1s", "3s"]))),
            (vec![1.0, 3.0], Some("s"))
        );
        assert_eq!(
            numeric(Axis::of(&texts(&["1Mbps", "2.5Mbps", "10Mbps"]))),
            (vec![1.0, 2.5, 10.0], Some("Mbps"))
        );
        assert_eq!(
            numeric(Axis::of(&texts(&["500kbps", "1Mbps"]))),
            (vec![500e3, 1e6], Some("bps"))
        );
        assert_eq!(
            numeric(Axis::of(&texts(&["10.0", "2"]))),
            (vec![10.0, 2.0], None)
        );
        assert!(matches!(
            Axis::of(&texts(&["fast", "slow"])),
            Axis::Categorical(_)
        ));
    }

    #[test]
    fn metric_units_come_from_their_names() {
        assert_eq!(metric_unit("servo.uplink.delay.p99_s"), Some("s"));
        assert_eq!(metric_unit("servo.theta.settling_time_s"), Some("s"));
        assert_eq!(metric_unit("servo.theta.overshoot_percent"), Some("%"));
        assert_eq!(metric_unit("delivery_ratio"), Some("fraction"));
        assert_eq!(metric_unit("servo.theta.iae"), None);
    }
}
