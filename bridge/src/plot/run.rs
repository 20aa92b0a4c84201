//! Figures of one run: trajectories, control input, packet delay, its CDF,
//! packet fates. A failed run is plotted from its `.csv.partial` files.

use std::path::{Path, PathBuf};

use plotters::coord::Shift;
use plotters::prelude::*;
use serde_json::Value;

use super::{bounds, color, draw_legend, padded, render, Figure, PlotError};

/// At most this many points per line: long runs are reduced to the minimum
/// and maximum of each bucket, which keeps peaks visible.
const MAX_POINTS: usize = 4000;
/// At most this many packets in the delay scatter (evenly thinned).
const MAX_PACKETS: usize = 20_000;

/// Plots the run in `dir` into `dir/plots/`.
///
/// # Errors
/// [`PlotError::Input`] when `summary.json` or the time series cannot be read.
pub fn plot_run(dir: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let data = RunData::read(dir)?;
    let out = dir.join("plots");
    let mut files = Vec::new();
    files.extend(render(
        &Trajectories {
            data: &data,
            control: false,
        },
        &out.join("trajectories"),
    )?);
    files.extend(render(
        &Trajectories {
            data: &data,
            control: true,
        },
        &out.join("control"),
    )?);
    files.extend(render(&DelayOverTime { data: &data }, &out.join("delay"))?);
    files.extend(render(&DelayCdf { data: &data }, &out.join("delay_cdf"))?);
    files.extend(render(&Fates { data: &data }, &out.join("fates"))?);
    Ok(files)
}

struct Line {
    name: String,
    points: Vec<(f64, f64)>,
}

struct LoopLines {
    name: String,
    /// Outputs and their references, in pairs where a reference exists.
    outputs: Vec<Line>,
    references: Vec<Line>,
    applied: Vec<Line>,
    computed: Vec<Line>,
}

struct FlowPackets {
    label: String,
    /// (send time s, delay ms) of delivered packets.
    delays: Vec<(f64, f64)>,
    /// Packets per fate, in [`FATES`] order.
    fates: Vec<u64>,
}

const FATES: [&str; 9] = [
    "accepted",
    "dropped_max_delay",
    "dropped_stale",
    "lost_queue",
    "lost_phy",
    "lost_mac",
    "lost_routing",
    "lost_other",
    "in_flight",
];

struct RunData {
    title: String,
    loops: Vec<LoopLines>,
    flows: Vec<FlowPackets>,
    end_s: f64,
}

fn input(e: impl std::fmt::Display) -> PlotError {
    PlotError::Input(e.to_string())
}

/// A broken row of a data file: an error, not a figure with a gap or none.
fn corrupt(path: &Path, line: usize, what: String) -> PlotError {
    input(format!(
        "{} line {line}: {what}: the file is corrupt, nothing plotted",
        path.display()
    ))
}

/// Whether `path` is a failed run's `.partial` file, which may end mid-row.
fn is_partial(path: &Path) -> bool {
    path.extension().is_some_and(|e| e == "partial")
}

/// The complete file, or the partial one a failed run left. Only regular
/// files: a device such as `/dev/zero` in their place would never end.
fn data_file(dir: &Path, name: &str) -> Option<PathBuf> {
    [dir.join(name), dir.join(format!("{name}.partial"))]
        .into_iter()
        .find(|p| p.is_file())
}

impl RunData {
    fn read(dir: &Path) -> Result<RunData, PlotError> {
        let summary_path = dir.join("summary.json");
        let text = crate::input::read_input(&summary_path)
            .map_err(|e| input(format!("cannot read {}: {e}", summary_path.display())))?;
        let summary: Value = serde_json::from_str(&text)
            .map_err(|e| input(format!("{}: {e}", summary_path.display())))?;
        let complete = summary["complete"].as_bool().unwrap_or(false);
        let loop_names: Vec<String> = summary["loops"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l["name"].as_str().map(String::from))
            .collect();
        let network = summary["network"]["description"].as_str().unwrap_or("");
        let title = format!(
            "{}{}",
            dir.file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
            if complete {
                String::new()
            } else {
                format!(" (incomplete: stopped at {} s)", summary["reached_s"])
            }
        );
        let title = if network.is_empty() {
            title
        } else {
            format!("{title} - {network}")
        };

        let ts = data_file(dir, "timeseries.csv").ok_or_else(|| {
            if dir.join("timeseries.parquet").is_file() {
                input(format!(
                    "{} holds Parquet files (`[output] format = \"parquet\"`); `netloop plot` reads CSV: \
                     run it again with --format csv, or load it in Python (docs/analysis.md)",
                    dir.display()
                ))
            } else {
                input(format!("{} has no timeseries.csv", dir.display()))
            }
        })?;
        let partial = is_partial(&ts);
        let mut reader =
            csv::Reader::from_path(&ts).map_err(|e| input(format!("{}: {e}", ts.display())))?;
        let header: Vec<String> = reader
            .headers()
            .map_err(|e| input(format!("{}: {e}", ts.display())))?
            .iter()
            .map(String::from)
            .collect();
        let mut columns: Vec<Vec<f64>> = vec![Vec::new(); header.len()];
        for (row, record) in reader.records().enumerate() {
            // A partial file may end mid-row; a complete one may not be broken anywhere.
            let line = row + 2;
            let record = match record {
                Ok(r) if r.len() == header.len() => r,
                _ if partial => break,
                Ok(r) => {
                    return Err(corrupt(
                        &ts,
                        line,
                        format!("{} fields, the header has {}", r.len(), header.len()),
                    ))
                }
                Err(e) => return Err(corrupt(&ts, line, e.to_string())),
            };
            for (c, v) in columns.iter_mut().zip(record.iter()) {
                match v.parse::<f64>() {
                    Ok(x) => c.push(x),
                    Err(_) if partial => c.push(f64::NAN),
                    Err(_) => return Err(corrupt(&ts, line, format!("`{v}` is not a number"))),
                }
            }
        }
        if header.is_empty() || columns[0].is_empty() {
            return Err(input(format!(
                "{} holds no rows: nothing to plot",
                ts.display()
            )));
        }
        let time = columns.first().cloned().unwrap_or_default();
        let end_s = time.last().copied().unwrap_or(0.0);
        let line = |i: usize, name: &str| Line {
            name: name.to_string(),
            points: reduce(&time, &columns[i]),
        };
        let loops = loop_names
            .iter()
            .map(|name| {
                let mut l = LoopLines {
                    name: name.clone(),
                    outputs: vec![],
                    references: vec![],
                    applied: vec![],
                    computed: vec![],
                };
                for (i, h) in header.iter().enumerate() {
                    let Some(rest) = h.strip_prefix(&format!("{name}.")) else {
                        continue;
                    };
                    if let Some(o) = rest.strip_prefix("y.") {
                        l.outputs.push(line(i, o));
                    } else if let Some(u) = rest.strip_prefix("uc.") {
                        l.computed.push(line(i, u));
                    } else if let Some(u) = rest.strip_prefix("u.") {
                        l.applied.push(line(i, u));
                    } else if rest.starts_with('r') && rest[1..].chars().all(|c| c.is_ascii_digit())
                    {
                        l.references.push(line(i, rest));
                    }
                }
                l
            })
            .collect();

        let mut flows: Vec<FlowPackets> = Vec::new();
        if let Some(p) = data_file(dir, "packets.csv") {
            let mut reader =
                csv::Reader::from_path(&p).map_err(|e| input(format!("{}: {e}", p.display())))?;
            let header = reader
                .headers()
                .map_err(|e| input(format!("{}: {e}", p.display())))?
                .clone();
            let col = |name: &str| header.iter().position(|h| h == name);
            let (Some(flow), Some(lp), Some(direction), Some(sent), Some(delay), Some(fate)) = (
                col("flow"),
                col("loop"),
                col("direction"),
                col("sent_ns"),
                col("delay_ns"),
                col("fate"),
            ) else {
                return Err(input(format!("{}: unexpected columns", p.display())));
            };
            let partial = is_partial(&p);
            for (row, record) in reader.records().enumerate() {
                let line = row + 2;
                let r = match record {
                    Ok(r) => r,
                    Err(_) if partial => break,
                    Err(e) => return Err(corrupt(&p, line, e.to_string())),
                };
                let Ok(id) = r.get(flow).unwrap_or("").parse::<usize>() else {
                    if partial {
                        break;
                    }
                    return Err(corrupt(&p, line, "no flow number".into()));
                };
                while flows.len() <= id {
                    flows.push(FlowPackets {
                        label: String::new(),
                        delays: vec![],
                        fates: vec![0; FATES.len()],
                    });
                }
                let f = &mut flows[id];
                if f.label.is_empty() {
                    f.label = format!(
                        "{} {}",
                        r.get(lp).unwrap_or(""),
                        r.get(direction).unwrap_or("")
                    );
                }
                if let Some(k) = FATES.iter().position(|x| Some(*x) == r.get(fate)) {
                    f.fates[k] += 1;
                }
                if let (Ok(s), Ok(d)) = (
                    r.get(sent).unwrap_or("").parse::<f64>(),
                    r.get(delay).unwrap_or("").parse::<f64>(),
                ) {
                    f.delays.push((s / 1e9, d / 1e6));
                }
            }
        }
        flows.retain(|f| !f.label.is_empty());
        Ok(RunData {
            title,
            loops,
            flows,
            end_s,
        })
    }
}

/// Min/max per bucket when there are more than [`MAX_POINTS`] samples.
fn reduce(time: &[f64], values: &[f64]) -> Vec<(f64, f64)> {
    let n = time.len().min(values.len());
    if n <= MAX_POINTS {
        return time
            .iter()
            .copied()
            .zip(values.iter().copied())
            .take(n)
            .collect();
    }
    let per = n.div_ceil(MAX_POINTS / 2);
    let mut out = Vec::with_capacity(MAX_POINTS + 2);
    for start in (0..n).step_by(per) {
        let end = (start + per).min(n);
        let (mut lo, mut hi) = (start, start);
        for i in start..end {
            if values[i] < values[lo] {
                lo = i;
            }
            if values[i] > values[hi] {
                hi = i;
            }
        }
        let (a, b) = if lo <= hi { (lo, hi) } else { (hi, lo) };
        out.push((time[a], values[a]));
        if b != a {
            out.push((time[b], values[b]));
        }
    }
    out
}

struct Trajectories<'a> {
    data: &'a RunData,
    control: bool,
}

impl Figure for Trajectories<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        let what = if self.control {
            "Control input (solid: applied, dashed: computed)"
        } else {
            "Outputs (solid) and references (dashed)"
        };
        let root = root.titled(
            &format!("{what}  |  {}", self.data.title),
            ("sans-serif", 18),
        )?;
        let n = self.data.loops.len().max(1);
        let panels = root.split_evenly((n, 1));
        for (lp, area) in self.data.loops.iter().zip(panels.iter()) {
            let (solid, dashed) = if self.control {
                (&lp.applied, &lp.computed)
            } else {
                (&lp.outputs, &lp.references)
            };
            let all = solid
                .iter()
                .chain(dashed.iter())
                .flat_map(|l| l.points.iter().map(|p| p.1));
            let (lo, hi) = bounds(all).unwrap_or((0.0, 1.0));
            let mut chart = ChartBuilder::on(area)
                .caption(&lp.name, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(64)
                .build_cartesian_2d(0.0..self.data.end_s.max(1e-9), padded(lo, hi))?;
            chart
                .configure_mesh()
                .x_desc("time (s)")
                .y_desc(if self.control { "u" } else { "y, r" })
                .label_style(("sans-serif", 13))
                .draw()?;
            for (i, l) in solid.iter().enumerate() {
                let c = color(i);
                chart
                    .draw_series(LineSeries::new(l.points.iter().copied(), c.stroke_width(2)))?
                    .label(if self.control {
                        format!("{} applied", l.name)
                    } else {
                        l.name.clone()
                    })
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                    });
            }
            for (i, l) in dashed.iter().enumerate() {
                let c = color(i);
                chart
                    .draw_series(DashedLineSeries::new(
                        l.points.iter().copied(),
                        6,
                        4,
                        c.stroke_width(1),
                    ))?
                    .label(if self.control {
                        format!("{} computed", l.name)
                    } else {
                        format!("reference {}", l.name)
                    })
                    .legend(move |(x, y)| {
                        PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(1))
                    });
            }
            if !solid.is_empty() || !dashed.is_empty() {
                draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
            }
        }
        Ok(())
    }
}

struct DelayOverTime<'a> {
    data: &'a RunData,
}

impl Figure for DelayOverTime<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        let flows = &self.data.flows;
        let (lo, hi) =
            bounds(flows.iter().flat_map(|f| f.delays.iter().map(|d| d.1))).unwrap_or((0.0, 1.0));
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("Packet delay of delivered packets  |  {}", self.data.title),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(0.0..self.data.end_s.max(1e-9), padded(lo.min(0.0), hi))?;
        chart
            .configure_mesh()
            .x_desc("send time (s)")
            .y_desc("delay (ms)")
            .label_style(("sans-serif", 13))
            .draw()?;
        for (i, f) in flows.iter().enumerate() {
            let c = color(i);
            let stride = f.delays.len().div_ceil(MAX_PACKETS).max(1);
            chart
                .draw_series(
                    f.delays
                        .iter()
                        .step_by(stride)
                        .map(|&(x, y)| Circle::new((x, y), 2, c.filled())),
                )?
                .label(f.label.clone())
                .legend(move |(x, y)| Circle::new((x + 10, y), 4, c.filled()));
        }
        if !flows.is_empty() {
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
}

struct DelayCdf<'a> {
    data: &'a RunData,
}

impl Figure for DelayCdf<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        let flows = &self.data.flows;
        let (lo, hi) =
            bounds(flows.iter().flat_map(|f| f.delays.iter().map(|d| d.1))).unwrap_or((0.0, 1.0));
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("Delay CDF of delivered packets  |  {}", self.data.title),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60)
            .build_cartesian_2d(padded(lo, hi), 0.0..1.02)?;
        chart
            .configure_mesh()
            .x_desc("delay (ms)")
            .y_desc("P(delay <= x)")
            .label_style(("sans-serif", 13))
            .draw()?;
        for (i, f) in flows.iter().enumerate() {
            let mut d: Vec<f64> = f.delays.iter().map(|p| p.1).collect();
            d.sort_by(f64::total_cmp);
            let n = d.len() as f64;
            let stride = d.len().div_ceil(MAX_POINTS).max(1);
            let mut steps = Vec::with_capacity(2 * d.len() / stride + 2);
            for (k, &x) in d.iter().enumerate().step_by(stride) {
                steps.push((x, k as f64 / n));
                steps.push((x, (k + 1) as f64 / n));
            }
            if let Some(&last) = d.last() {
                steps.push((last, 1.0));
            }
            let c = color(i);
            chart
                .draw_series(LineSeries::new(steps, c.stroke_width(2)))?
                .label(format!("{} (n = {})", f.label, d.len()))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 20, y)], c.stroke_width(2))
                });
        }
        if !flows.is_empty() {
            draw_legend(&mut chart, SeriesLabelPosition::LowerRight)?;
        }
        Ok(())
    }
}

struct Fates<'a> {
    data: &'a RunData,
}

impl Figure for Fates<'_> {
    fn draw<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
    ) -> Result<(), Box<dyn std::error::Error>>
    where
        DB::ErrorType: 'static,
    {
        let flows = &self.data.flows;
        // Only fates that happened, but always "accepted" so the axis is never empty.
        let shown: Vec<usize> = (0..FATES.len())
            .filter(|&k| k == 0 || flows.iter().any(|f| f.fates[k] > 0))
            .collect();
        let top = flows
            .iter()
            .flat_map(|f| f.fates.iter().copied())
            .max()
            .unwrap_or(0)
            .max(1) as f64;
        let labels: Vec<&str> = shown.iter().map(|&k| FATES[k]).collect();
        let mut chart = ChartBuilder::on(root)
            .caption(
                format!("Packet fates per flow  |  {}", self.data.title),
                ("sans-serif", 18),
            )
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(70)
            .build_cartesian_2d(-0.5..shown.len() as f64 - 0.5, 0.0..top * 1.1)?;
        // Category k sits at x = k; plotters puts labels on round numbers,
        // and with this many labels requested every integer gets one.
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(4 * shown.len() + 1)
            .x_label_formatter(&|x| {
                let i = x.round();
                if (x - i).abs() < 1e-6 && i >= 0.0 && (i as usize) < labels.len() {
                    labels[i as usize].to_string()
                } else {
                    String::new()
                }
            })
            .y_desc("packets")
            .label_style(("sans-serif", 13))
            .draw()?;
        let width = 0.8 / flows.len().max(1) as f64;
        for (i, f) in flows.iter().enumerate() {
            let c = color(i);
            chart
                .draw_series(shown.iter().enumerate().map(|(slot, &k)| {
                    let x0 = slot as f64 - 0.4 + i as f64 * width;
                    Rectangle::new(
                        [(x0, 0.0), (x0 + width * 0.9, f.fates[k] as f64)],
                        c.filled(),
                    )
                }))?
                .label(f.label.clone())
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], c.filled()));
        }
        if !flows.is_empty() {
            draw_legend(&mut chart, SeriesLabelPosition::UpperRight)?;
        }
        Ok(())
    }
}
