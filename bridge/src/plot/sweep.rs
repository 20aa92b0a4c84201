//! Figures of a sweep: each metric of `sweep_summary.csv` against a swept
//! parameter, with 95% confidence bars, one line per combination of the
//! other parameters (with two parameters: one line per value of the second).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use protocol::SimTime;

use super::{bounds, color, draw_legend, padded, render, Figure, PlotError, PlotOptions};

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
    /// Numbers (durations converted to seconds).
    Numeric { values: Vec<f64>, seconds: bool },
    /// Anything else: one slot per distinct value, in order of appearance.
    Categorical(Vec<String>),
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
                seconds: false,
            };
        }
        if let Some(v) = values
            .iter()
            .map(|s| s.trim().parse::<SimTime>().ok().map(SimTime::as_secs_f64))
            .collect::<Option<Vec<f64>>>()
        {
            return Axis::Numeric {
                values: v,
                seconds: true,
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
    for record in reader.records() {
        let r = record.map_err(|e| PlotError::Input(format!("{}: {e}", path.display())))?;
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
    Ok(files)
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
            (Axis::Numeric { seconds: true, .. }, Some(i)) => format!("{} (s)", self.parameters[i]),
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
        mesh.x_desc(x_desc)
            .y_desc(self.metric)
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
