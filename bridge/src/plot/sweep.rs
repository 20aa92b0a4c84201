//! Figures of a sweep: each metric of `sweep_summary.csv` against a swept
//! parameter, with its 95% confidence interval (a band on a numeric axis,
//! bars on a categorical one) and the number of runs at every point, one
//! line per combination of the other parameters (with two parameters: one
//! line per value of the second). Parameters that advance with the x
//! parameter (a zip group) share its axis instead of splitting the lines.
//! A stop condition's `<condition>_fraction` rows give the instability
//! figure: the fraction of runs it ended, with its Wilson interval.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use protocol::SimTime;

use plotters::coord::combinators::{IntoLogRange, LogCoord};
use plotters::coord::ranged1d::ValueFormatter;
use plotters::coord::types::RangedCoordf64;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::interval::{choose, metric_bounds, Method};
use super::layout::{category_label, titled, with_legend, LegendEntry, Mark, Res};
use super::{bounds, color, padded, render, Figure, PlotError, PlotOptions};
use crate::config::DataRate;

/// One row of `sweep_summary.csv`.
struct Row {
    point: String,
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

/// Without a common unit: the largest of `units` in which every non-zero
/// value is at least one (500us and 2ms in us: 500 and 2000), else the
/// smallest.
fn readable_unit(si: &[f64], units: &[(&'static str, f64)]) -> (&'static str, f64) {
    let smallest = si
        .iter()
        .map(|v| v.abs())
        .filter(|v| *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let mut by_size: Vec<(&'static str, f64)> = units.to_vec();
    by_size.sort_by(|a, b| b.1.total_cmp(&a.1));
    by_size
        .iter()
        .copied()
        .find(|(_, scale)| smallest / scale >= 1.0 - 1e-9)
        .unwrap_or(by_size[by_size.len() - 1])
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
            .map(|s| s.trim().parse::<SimTime>().ok().map(|t| t.0))
            .collect::<Option<Vec<u64>>>()
        {
            let ns = v;
            let v: Vec<f64> = ns.iter().map(|&n| n as f64 / 1e9).collect();
            // Minutes and hours only when written: a readable default is at most seconds.
            let (unit, scale) = common_unit(values, &TIME_UNITS).unwrap_or_else(|| {
                let up_to_seconds: Vec<(&'static str, f64)> =
                    TIME_UNITS.iter().copied().filter(|u| u.1 <= 1.0).collect();
                readable_unit(&v, &up_to_seconds)
            });
            // From whole nanoseconds, so that 500us in us is 500 exactly.
            let unit_ns = (scale * 1e9).round();
            return Axis::Numeric {
                values: ns.iter().map(|&n| n as f64 / unit_ns).collect(),
                unit: Some(unit),
            };
        }
        if let Some(v) = values
            .iter()
            .map(|s| s.trim().parse::<DataRate>().ok().map(|r| r.0 as f64))
            .collect::<Option<Vec<f64>>>()
        {
            let (unit, scale) =
                common_unit(values, &RATE_UNITS).unwrap_or_else(|| readable_unit(&v, &RATE_UNITS));
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

/// Plots the sweep in `dir` into `dir/plots/`, one PNG, SVG and PDF per metric.
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
            point: r.get(0).unwrap_or("").to_string(),
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
    let runs = run_values(dir);
    for metric in chosen {
        let selected: Vec<&Row> = rows
            .iter()
            .filter(|r| r.metric == metric && r.n > 0 && r.mean.is_some())
            .collect();
        if selected.is_empty() {
            continue;
        }
        let figure = MetricFigure::new(
            &metric,
            selected,
            &parameters,
            x_index,
            dir_title(dir),
            runs.as_ref(),
            options.log_x,
        )?;
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

/// Every run's value of every metric, by point and metric, from
/// `sweep.csv`: what a bootstrap interval resamples. Runs a stop condition
/// ended count for `stop.*` only, as in `sweep_summary.csv`. `None` when
/// the file cannot be read: the figures then clamp instead.
type RunValues = BTreeMap<(String, String), Vec<f64>>;

fn run_values(dir: &Path) -> Option<RunValues> {
    let mut reader = csv::Reader::from_path(dir.join("sweep.csv")).ok()?;
    let header: Vec<String> = reader.headers().ok()?.iter().map(String::from).collect();
    let at = |name: &str| header.iter().position(|h| h == name);
    let (point, status, error) = (at("point")?, at("status")?, at("error")?);
    let last = at("wall_s").unwrap_or(header.len());
    let mut out = RunValues::new();
    for record in reader.records() {
        let r = record.ok()?;
        let complete = r.get(status) == Some("complete");
        for (i, metric) in header.iter().enumerate().take(last).skip(error + 1) {
            if !complete && !metric.starts_with("stop.") {
                continue;
            }
            if let Some(v) = r.get(i).and_then(|c| c.parse::<f64>().ok()) {
                if v.is_finite() {
                    out.entry((r.get(point)?.to_string(), metric.clone()))
                        .or_default()
                        .push(v);
                }
            }
        }
    }
    Some(out)
}

/// A fixed seed per point and metric: the same sweep gives the same figure.
fn bootstrap_seed(point: &str, metric: &str) -> u64 {
    use sha2::Digest;
    let digest = sha2::Sha256::digest(format!("{point}\0{metric}").as_bytes());
    u64::from_le_bytes(digest[..8].try_into().unwrap_or([0; 8]))
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

/// One point of a line: its x, mean, interval and how the interval was made.
#[derive(Clone, Debug)]
struct Point {
    x: f64,
    n: usize,
    mean: f64,
    interval: Option<(f64, f64, Method)>,
}

struct Series {
    label: String,
    points: Vec<Point>,
}

struct MetricFigure<'a> {
    metric: &'a str,
    title: String,
    axis: Axis,
    x_desc: String,
    /// Along a zip group: the values of the parameters that advance with x,
    /// written at each x.
    partners: Vec<(f64, String)>,
    series: Vec<Series>,
    log_x: bool,
}

/// The last part of a key, for a label inside the figure.
fn short_key(key: &str) -> &str {
    key.rsplit('.').next().unwrap_or(key)
}

/// Whether parameter `j` advances with parameter `x` over `rows`: each
/// value of one goes with exactly one value of the other, and x takes more
/// than one value (a zip group, or explicit points that pair them).
fn tied(rows: &[&Row], x: usize, j: usize) -> bool {
    let mut pairs: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r.params[x].as_str(), r.params[j].as_str()))
        .collect();
    pairs.sort_unstable();
    pairs.dedup();
    // Each side's value appears in exactly one pair: one value of x, one of j.
    let distinct = |side: usize| {
        let mut keys: Vec<&str> = pairs
            .iter()
            .map(|p| if side == 0 { p.0 } else { p.1 })
            .collect();
        keys.sort_unstable();
        keys.dedup();
        keys.len()
    };
    pairs.len() > 1 && distinct(0) == pairs.len() && distinct(1) == pairs.len()
}

impl<'a> MetricFigure<'a> {
    fn new(
        metric: &'a str,
        rows: Vec<&'a Row>,
        parameters: &'a [String],
        x_index: Option<usize>,
        title: String,
        runs: Option<&RunValues>,
        log_x: bool,
    ) -> Result<Self, PlotError> {
        let x_texts: Vec<String> = rows
            .iter()
            .map(|r| x_index.map(|i| r.params[i].clone()).unwrap_or_default())
            .collect();
        let axis = Axis::of(&x_texts);
        let xs: Vec<f64> = x_texts
            .iter()
            .enumerate()
            .map(|(i, t)| axis.position(i, t))
            .collect();
        if log_x {
            let numeric = matches!(axis, Axis::Numeric { .. });
            if x_index.is_none() || !numeric || xs.iter().any(|x| *x <= 0.0) {
                return Err(PlotError::Input(format!(
                    "--log-x needs positive numbers on the x axis; {} has {}",
                    x_index.map_or("the sweep", |i| parameters[i].as_str()),
                    x_texts.join(", ")
                )));
            }
        }
        let partners_of_x: Vec<usize> = match x_index {
            Some(x) => (0..parameters.len())
                .filter(|&j| j != x && tied(&rows, x, j))
                .collect(),
            None => Vec::new(),
        };
        let bounds = metric_bounds(metric);
        // One line per combination of the parameters that neither are x nor
        // advance with it.
        let mut series: Vec<Series> = Vec::new();
        let mut partners: Vec<(f64, String)> = Vec::new();
        for (r, &x) in rows.iter().zip(&xs) {
            let label = parameters
                .iter()
                .enumerate()
                .filter(|(i, _)| Some(*i) != x_index && !partners_of_x.contains(i))
                .map(|(i, p)| format!("{p} = {}", r.params[i]))
                .collect::<Vec<_>>()
                .join(", ");
            if !partners_of_x.is_empty() && !partners.iter().any(|(px, _)| *px == x) {
                let text = partners_of_x
                    .iter()
                    .map(|&j| format!("{}={}", short_key(&parameters[j]), r.params[j]))
                    .collect::<Vec<_>>()
                    .join(", ");
                partners.push((x, text));
            }
            let Some(mean) = r.mean else { continue };
            let interval = r.lo.zip(r.hi).map(|t| {
                let values = runs.and_then(|v| v.get(&(r.point.clone(), metric.to_string())));
                choose(
                    t,
                    bounds,
                    values.map(Vec::as_slice),
                    bootstrap_seed(&r.point, metric),
                )
            });
            let point = Point {
                x,
                n: r.n,
                mean,
                interval,
            };
            match series.iter_mut().find(|s| s.label == label) {
                Some(s) => s.points.push(point),
                None => series.push(Series {
                    label,
                    points: vec![point],
                }),
            }
        }
        for s in &mut series {
            s.points.sort_by(|a, b| a.x.total_cmp(&b.x));
        }
        let x_desc = match (&axis, x_index) {
            (_, None) => "(no swept parameter)".to_string(),
            (Axis::Numeric { unit: Some(u), .. }, Some(i)) => {
                format!("{} [{u}]", parameters[i])
            }
            (_, Some(i)) => parameters[i].clone(),
        };
        let x_desc = if partners_of_x.is_empty() {
            x_desc
        } else {
            let names: Vec<&str> = partners_of_x
                .iter()
                .map(|&j| parameters[j].as_str())
                .collect();
            format!("{x_desc}, zipped with {}", names.join(", "))
        };
        Ok(MetricFigure {
            metric,
            title,
            axis,
            x_desc,
            partners,
            series,
            log_x,
        })
    }

    /// `unstable_fraction` and the like: the fraction of runs a stop
    /// condition ended.
    fn condition(&self) -> Option<&str> {
        let c = self.metric.strip_suffix("_fraction")?;
        (!c.contains('.')).then_some(c)
    }

    fn heading(&self, methods: &[Method]) -> String {
        let count = |m: Method| methods.iter().filter(|x| **x == m).count();
        let mut notes = Vec::new();
        if count(Method::Bootstrap) > 0 {
            notes.push(format!(
                "bootstrap at {} points where the t interval left the possible values",
                count(Method::Bootstrap)
            ));
        }
        if count(Method::Clamped) > 0 {
            notes.push(format!("clamped at {} points", count(Method::Clamped)));
        }
        let notes = if notes.is_empty() {
            String::new()
        } else {
            format!("; {}", notes.join("; "))
        };
        match self.condition() {
            Some("stopped") => format!(
                "Fraction of runs a stop condition ended (95% Wilson interval)  |  {}",
                self.title
            ),
            Some(c) => format!(
                "Fraction of runs ended by `{c}` (95% Wilson interval)  |  {}",
                self.title
            ),
            None => format!(
                "{} (mean, 95% confidence interval{notes})  |  {}",
                self.metric, self.title
            ),
        }
    }

    fn y_desc(&self) -> String {
        match self.condition() {
            Some("stopped") => "fraction of runs stopped".to_string(),
            Some(c) => format!("fraction of runs {c}"),
            None => match metric_unit(self.metric) {
                Some(unit) => format!("{} [{unit}]", self.metric),
                None => self.metric.to_string(),
            },
        }
    }
}

impl Figure for MetricFigure<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res<()>
    where
        DB::ErrorType: 'static,
    {
        let methods: Vec<Method> = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().filter_map(|p| p.interval.map(|i| i.2)))
            .collect();
        let root = titled(root, &self.heading(&methods))?;
        let named =
            self.series.len() > 1 || self.series.first().is_some_and(|s| !s.label.is_empty());
        let mut entries: Vec<LegendEntry> = Vec::new();
        if named {
            for (k, s) in self.series.iter().enumerate() {
                entries.push(LegendEntry::new(s.label.clone(), color(k), Mark::Band));
            }
        }
        let area = with_legend(&root, &entries, 20)?;

        let ys = self.series.iter().flat_map(|s| {
            s.points.iter().flat_map(|p| {
                let (lo, hi) = p.interval.map_or((p.mean, p.mean), |i| (i.0, i.1));
                [p.mean, lo, hi]
            })
        });
        let y_range = if self.condition().is_some() {
            -0.02..1.02
        } else {
            let (lo, hi) = bounds(ys).unwrap_or((0.0, 1.0));
            padded(lo, hi)
        };
        let (xlo, xhi) = bounds(
            self.series
                .iter()
                .flat_map(|s| s.points.iter().map(|p| p.x)),
        )
        .unwrap_or((0.0, 1.0));
        match &self.axis {
            Axis::Categorical(d) => {
                let x = RangedCoordf64::from(-0.5..(d.len() as f64 - 0.5));
                self.chart(&area, x, y_range, d.len().max(1) as f64)
            }
            Axis::Numeric { .. } if self.log_x => {
                let x = LogCoord::from((xlo / 1.25..xhi * 1.25).log_scale());
                self.chart(&area, x, y_range, xhi / xlo.max(1e-300))
            }
            Axis::Numeric { .. } => {
                let x = RangedCoordf64::from(padded(xlo, xhi));
                self.chart(&area, x, y_range, (xhi - xlo).max(1e-12))
            }
        }
    }
}

impl MetricFigure<'_> {
    /// Draws the chart on an x coordinate of either kind (linear or log);
    /// `span` sizes the caps of error bars.
    fn chart<DB, X>(
        &self,
        area: &DrawingArea<DB, Shift>,
        x: X,
        y_range: std::ops::Range<f64>,
        span: f64,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        DB: DrawingBackend,
        DB::ErrorType: 'static,
        X: Ranged<ValueType = f64> + ValueFormatter<f64>,
    {
        let y_bottom = y_range.start;
        let mut chart = ChartBuilder::on(area)
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(80)
            .build_cartesian_2d(x, y_range)?;
        let categories: Vec<String> = match &self.axis {
            Axis::Categorical(d) => d.clone(),
            Axis::Numeric { .. } => Vec::new(),
        };
        let mut mesh = chart.configure_mesh();
        mesh.x_desc(self.x_desc.clone())
            .y_desc(self.y_desc())
            .label_style(("sans-serif", 13));
        let formatter = |x: &f64| category_label(&categories, *x);
        if !categories.is_empty() {
            mesh.x_labels(4 * categories.len() + 1)
                .x_label_formatter(&formatter)
                .disable_x_mesh();
        }
        mesh.draw()?;

        // The zip partners' values at their x, along the bottom.
        chart.draw_series(self.partners.iter().map(|(x, text)| {
            Text::new(
                text.clone(),
                (*x, y_bottom),
                ("sans-serif", 11)
                    .into_font()
                    .color(&BLACK.mix(0.6))
                    .pos(Pos::new(HPos::Center, VPos::Bottom)),
            )
        }))?;

        let numeric = matches!(self.axis, Axis::Numeric { .. });
        let cap = if self.log_x { 0.0 } else { span * 0.008 };
        for (k, s) in self.series.iter().enumerate() {
            let c = color(k);
            let with_interval: Vec<(f64, f64, f64)> = s
                .points
                .iter()
                .filter_map(|p| p.interval.map(|i| (p.x, i.0, i.1)))
                .collect();
            if numeric && with_interval.len() > 1 {
                // A band: the interval's lower edge left to right, its upper one back.
                let outline: Vec<(f64, f64)> = with_interval
                    .iter()
                    .map(|&(x, lo, _)| (x, lo))
                    .chain(with_interval.iter().rev().map(|&(x, _, hi)| (x, hi)))
                    .collect();
                chart.draw_series([Polygon::new(outline, c.mix(0.18).filled())])?;
            }
            let line: Vec<(f64, f64)> = s.points.iter().map(|p| (p.x, p.mean)).collect();
            chart.draw_series(LineSeries::new(line.clone(), c.stroke_width(2)))?;
            chart.draw_series(line.iter().map(|&p| Circle::new(p, 4, c.filled())))?;
            // How many runs each point averages: a mean of 2 is not one of 30.
            // Up and right of the marker, so that the marker does not hide it.
            chart.draw_series(s.points.iter().map(|p| {
                EmptyElement::at((p.x, p.mean))
                    + Text::new(
                        format!("n={}", p.n),
                        (6, -6),
                        ("sans-serif", 11)
                            .into_font()
                            .color(&c)
                            .pos(Pos::new(HPos::Left, VPos::Bottom)),
                    )
            }))?;
            for p in &s.points {
                let Some((lo, hi, _)) = p.interval else {
                    continue;
                };
                let x = p.x;
                chart.draw_series([
                    PathElement::new(vec![(x, lo), (x, hi)], c.stroke_width(1)),
                    PathElement::new(vec![(x - cap, lo), (x + cap, lo)], c.stroke_width(1)),
                    PathElement::new(vec![(x - cap, hi), (x + cap, hi)], c.stroke_width(1)),
                ])?;
            }
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
        // Mixed units: the largest in which every value is at least one.
        assert_eq!(
            numeric(Axis::of(&texts(&["500us", "2ms"]))),
            (vec![500.0, 2000.0], Some("us"))
        );
        assert_eq!(
            numeric(Axis::of(&texts(&["1500ms", "2s"]))),
            (vec![1.5, 2.0], Some("s"))
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
            numeric(Axis::of(&texts(&["500kbps", "1Mbps", "2Gbps"]))),
            (vec![500.0, 1000.0, 2e6], Some("kbps"))
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

    fn row(params: &[&str]) -> Row {
        Row {
            point: String::new(),
            params: texts(params),
            metric: "m".into(),
            n: 1,
            mean: Some(0.0),
            lo: None,
            hi: None,
        }
    }

    #[test]
    fn zipped_parameters_advance_together_and_grid_ones_do_not() {
        let zip = [
            row(&["1ms", "10"]),
            row(&["2ms", "20"]),
            row(&["4ms", "40"]),
        ];
        let zip: Vec<&Row> = zip.iter().collect();
        assert!(tied(&zip, 0, 1) && tied(&zip, 1, 0));
        let grid = [
            row(&["1ms", "10"]),
            row(&["1ms", "20"]),
            row(&["2ms", "10"]),
            row(&["2ms", "20"]),
        ];
        let grid: Vec<&Row> = grid.iter().collect();
        assert!(!tied(&grid, 0, 1));
        // A parameter with one value is constant, not zipped.
        let constant = [row(&["1ms", "10"]), row(&["2ms", "10"])];
        let constant: Vec<&Row> = constant.iter().collect();
        assert!(!tied(&constant, 0, 1));
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
