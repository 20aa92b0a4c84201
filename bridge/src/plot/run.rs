//! Figures of one run: trajectories, control input, packet delay (lost
//! packets marked), its CDF, packet fates, and the spacing errors of a
//! platoon. A run that wrote Parquet is read from its Parquet files, a
//! failed run from its `.csv.partial` files.

use std::path::{Path, PathBuf};

use plotters::coord::types::RangedCoordf64;
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use serde_json::Value;

use super::layout::{category_label, legend, titled, with_legend, LegendEntry, Mark, Res};
use super::table::Table;
use super::{bounds, color, padded, render, Figure, PlotError};

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
    if !data.spacing.is_empty() {
        files.extend(render(&Spacing { data: &data }, &out.join("spacing"))?);
    }
    Ok(files)
}

struct Line {
    name: String,
    /// The plant's unit for it, when the plant kind is known.
    unit: Option<String>,
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
    /// Send times (s) of packets lost on the way.
    lost: Vec<f64>,
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
    /// The spacing error of each platoon follower (none without a platoon).
    spacing: Vec<Line>,
    end_s: f64,
}

fn input(e: impl std::fmt::Display) -> PlotError {
    PlotError::Input(e.to_string())
}

/// A broken row of a data file: an error, not a figure with a gap or none.
fn corrupt(path: &Path, place: &str, what: String) -> PlotError {
    input(format!(
        "{} {place}: {what}: the file is corrupt, nothing plotted",
        path.display()
    ))
}

/// The axis label of lines with these units: the unit when they share it,
/// each line's when they do not.
fn axis_label(what: &str, lines: &[&Line]) -> String {
    let mut units: Vec<&str> = Vec::new();
    for l in lines {
        if let Some(u) = l.unit.as_deref() {
            if !units.contains(&u) {
                units.push(u);
            }
        }
    }
    match units.as_slice() {
        [] => what.to_string(),
        [u] => format!("{what} [{u}]"),
        _ => format!(
            "{what} [{}]",
            lines
                .iter()
                .filter_map(|l| Some(format!("{}: {}", l.name, l.unit.as_deref()?)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One CACC follower's spacing policy, from the run's scenario.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SpacingPolicy {
    pub follower: String,
    pub predecessor: String,
    pub standstill_m: f64,
    pub time_gap_s: f64,
    /// The predecessor's length: gaps are measured to its rear.
    pub predecessor_length_m: f64,
}

/// The spacing error `e = (p_pred − length_pred − p) − (standstill + h v)`
/// of each sample (docs/analysis.md; the figure the platoon metrics
/// summarise), from the follower's and predecessor's recorded states.
pub(crate) fn spacing_errors(
    policy: &SpacingPolicy,
    p: &[f64],
    v: &[f64],
    p_pred: &[f64],
) -> Vec<f64> {
    p.iter()
        .zip(v)
        .zip(p_pred)
        .map(|((&p, &v), &ahead)| {
            (ahead - policy.predecessor_length_m - p)
                - (policy.standstill_m + policy.time_gap_s * v)
        })
        .collect()
}

/// The spacing policies of the run's platoon (summary.json `platoon`).
fn spacing_policies(summary: &Value) -> Vec<SpacingPolicy> {
    let loops = summary["scenario"]["loops"].as_array();
    let find = |name: &str| {
        loops
            .into_iter()
            .flatten()
            .find(|l| l["name"].as_str() == Some(name))
    };
    summary["platoon"]["followers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| {
            let follower = f["loop"].as_str()?.to_string();
            let predecessor = f["predecessor"].as_str()?.to_string();
            let controller = &find(&follower)?["controller"];
            Some(SpacingPolicy {
                standstill_m: controller["standstill"].as_f64()?,
                time_gap_s: controller["time_gap"].as_f64()?,
                // The vehicle plant's default length (docs/scenario.md).
                predecessor_length_m: find(&predecessor)
                    .and_then(|l| l["plant"]["length"].as_f64())
                    .unwrap_or(4.0),
                follower,
                predecessor,
            })
        })
        .collect()
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
        // The units of a loop's plant's states and inputs, by name.
        let plant_units = |name: &str| {
            summary["scenario"]["loops"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|l| l["name"].as_str() == Some(name))
                .and_then(|l| l["plant"]["kind"].as_str())
                .map_or(&[][..], controlsim::plant::units_of_kind)
        };
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

        let mut ts = Table::open(dir, "timeseries")?
            .ok_or_else(|| input(format!("{} has no timeseries.csv", dir.display())))?;
        let header = ts.header.clone();
        let mut columns: Vec<Vec<f64>> = vec![Vec::new(); header.len()];
        let mut row = 0;
        while let Some(record) = ts.next() {
            // A partial file may end mid-row; a complete one may not be broken anywhere.
            let place = ts.place(row);
            row += 1;
            let record = match record {
                Ok(r) if r.len() == header.len() => r,
                _ if ts.partial => break,
                Ok(r) => {
                    return Err(corrupt(
                        &ts.path,
                        &place,
                        format!("{} fields, the header has {}", r.len(), header.len()),
                    ))
                }
                Err(e) => return Err(corrupt(&ts.path, &place, e)),
            };
            for (c, v) in columns.iter_mut().zip(record.iter()) {
                match v.parse::<f64>() {
                    Ok(x) => c.push(x),
                    Err(_) if ts.partial => c.push(f64::NAN),
                    Err(_) => {
                        return Err(corrupt(&ts.path, &place, format!("`{v}` is not a number")))
                    }
                }
            }
        }
        if header.is_empty() || columns[0].is_empty() {
            return Err(input(format!(
                "{} holds no rows: nothing to plot",
                ts.path.display()
            )));
        }
        let time = columns.first().cloned().unwrap_or_default();
        let end_s = time.last().copied().unwrap_or(0.0);
        let column = |name: &str| header.iter().position(|h| h == name);
        let line = |i: usize, name: &str, unit: Option<&str>| Line {
            name: name.to_string(),
            unit: unit.map(String::from),
            points: reduce(&time, &columns[i]),
        };
        let loops = loop_names
            .iter()
            .map(|name| {
                let units = plant_units(name);
                let unit = |s: &str| units.iter().find(|(n, _)| *n == s).map(|(_, u)| *u);
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
                        l.outputs.push(line(i, o, unit(o)));
                    } else if let Some(u) = rest.strip_prefix("uc.") {
                        l.computed.push(line(i, u, unit(u)));
                    } else if let Some(u) = rest.strip_prefix("u.") {
                        l.applied.push(line(i, u, unit(u)));
                    } else if rest.starts_with('r') && rest[1..].chars().all(|c| c.is_ascii_digit())
                    {
                        l.references.push(line(i, rest, None));
                    }
                }
                // A reference r<k> follows output k: it has that output's unit.
                for r in &mut l.references {
                    let k: usize = r.name[1..].parse().unwrap_or(usize::MAX);
                    r.unit = l.outputs.get(k).and_then(|o| o.unit.clone());
                }
                l
            })
            .collect();

        let spacing = spacing_policies(&summary)
            .into_iter()
            .filter_map(|policy| {
                let p = column(&format!("{}.x.p", policy.follower))?;
                let v = column(&format!("{}.x.v", policy.follower))?;
                let ahead = column(&format!("{}.x.p", policy.predecessor))?;
                let e = spacing_errors(&policy, &columns[p], &columns[v], &columns[ahead]);
                Some(Line {
                    name: format!("{} behind {}", policy.follower, policy.predecessor),
                    unit: Some("m".into()),
                    points: reduce(&time, &e),
                })
            })
            .collect();

        let mut flows: Vec<FlowPackets> = Vec::new();
        if let Some(mut p) = Table::open(dir, "packets")? {
            let col = |name: &str| p.header.iter().position(|h| h == name);
            let (Some(flow), Some(lp), Some(direction), Some(sent), Some(delay), Some(fate)) = (
                col("flow"),
                col("loop"),
                col("direction"),
                col("sent_ns"),
                col("delay_ns"),
                col("fate"),
            ) else {
                return Err(input(format!("{}: unexpected columns", p.path.display())));
            };
            let mut row = 0;
            while let Some(record) = p.next() {
                let place = p.place(row);
                row += 1;
                let r = match record {
                    Ok(r) => r,
                    Err(_) if p.partial => break,
                    Err(e) => return Err(corrupt(&p.path, &place, e)),
                };
                let get = |i: usize| r.get(i).map(String::as_str).unwrap_or("");
                let Ok(id) = get(flow).parse::<usize>() else {
                    if p.partial {
                        break;
                    }
                    return Err(corrupt(&p.path, &place, "no flow number".into()));
                };
                while flows.len() <= id {
                    flows.push(FlowPackets {
                        label: String::new(),
                        delays: vec![],
                        lost: vec![],
                        fates: vec![0; FATES.len()],
                    });
                }
                let f = &mut flows[id];
                if f.label.is_empty() {
                    f.label = format!("{} {}", get(lp), get(direction));
                }
                if let Some(k) = FATES.iter().position(|x| *x == get(fate)) {
                    f.fates[k] += 1;
                }
                if let Ok(s) = get(sent).parse::<f64>() {
                    match get(delay).parse::<f64>() {
                        Ok(d) => f.delays.push((s / 1e9, d / 1e6)),
                        // Lost on the way: no delay, but a send time to mark.
                        Err(_) if get(fate).starts_with("lost_") => f.lost.push(s / 1e9),
                        Err(_) => {}
                    }
                }
            }
        }
        flows.retain(|f| !f.label.is_empty());
        Ok(RunData {
            title,
            loops,
            flows,
            spacing,
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

/// Where a panel's first legend entry goes: below its caption.
const LEGEND_TOP: i32 = 36;

/// A solid line two pixels wide: a series of its own.
const SOLID: Mark = Mark::Line {
    width: 2,
    dashed: false,
};

/// A chart of f64 against f64 on a whole figure's data area: 12 pixels of
/// margin, 40 for the x labels and `y_labels` for the y labels.
fn chart_on<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    y_labels: u32,
    x: std::ops::Range<f64>,
    y: std::ops::Range<f64>,
) -> Res<ChartContext<'a, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>>
where
    DB::ErrorType: 'static,
{
    Ok(ChartBuilder::on(area)
        .margin(12)
        .x_label_area_size(40)
        .y_label_area_size(y_labels)
        .build_cartesian_2d(x, y)?)
}

/// Draws the grid and the axes' descriptions in the figures' label style.
fn draw_axes<DB: DrawingBackend>(
    chart: &mut ChartContext<'_, DB, Cartesian2d<RangedCoordf64, RangedCoordf64>>,
    x_desc: &str,
    y_desc: &str,
) -> Res<()>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_mesh()
        .x_desc(x_desc)
        .y_desc(y_desc)
        .label_style(("sans-serif", 13))
        .draw()?;
    Ok(())
}

impl RunData {
    /// Draws `heading` and the run's title across the top of `root` and
    /// `entries` at the right; returns the area left for the chart.
    fn frame<DB: DrawingBackend>(
        &self,
        root: &DrawingArea<DB, Shift>,
        heading: &str,
        entries: &[LegendEntry],
    ) -> Res<DrawingArea<DB, Shift>>
    where
        DB::ErrorType: 'static,
    {
        let root = titled(root, &format!("{heading}  |  {}", self.title))?;
        with_legend(&root, entries, 20)
    }

    /// The lowest and highest delay of any flow, `(0, 1)` without one.
    fn delay_bounds(&self) -> (f64, f64) {
        bounds(self.flows.iter().flat_map(|f| f.delays.iter().map(|d| d.1))).unwrap_or((0.0, 1.0))
    }
}

struct Trajectories<'a> {
    data: &'a RunData,
    control: bool,
}

impl Figure for Trajectories<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res<()>
    where
        DB::ErrorType: 'static,
    {
        let what = if self.control {
            "Control input (solid: applied, dashed: computed)"
        } else {
            "Outputs (solid) and references (dashed)"
        };
        let root = titled(root, &format!("{what}  |  {}", self.data.title))?;
        let n = self.data.loops.len().max(1);
        let panels = root.split_evenly((n, 1));
        for (lp, area) in self.data.loops.iter().zip(panels.iter()) {
            let (solid, dashed) = if self.control {
                (&lp.applied, &lp.computed)
            } else {
                (&lp.outputs, &lp.references)
            };
            let dashed_mark = Mark::Line {
                width: 1,
                dashed: true,
            };
            let mut entries = Vec::new();
            for (i, l) in solid.iter().enumerate() {
                let label = if self.control {
                    format!("{} applied", l.name)
                } else {
                    l.name.clone()
                };
                entries.push(LegendEntry::new(label, color(i), SOLID));
            }
            for (i, l) in dashed.iter().enumerate() {
                let label = if self.control {
                    format!("{} computed", l.name)
                } else {
                    format!("reference {}", l.name)
                };
                entries.push(LegendEntry::new(label, color(i), dashed_mark));
            }
            let plot_area = with_legend(area, &entries, LEGEND_TOP)?;
            let lines: Vec<&Line> = solid.iter().chain(dashed.iter()).collect();
            let (lo, hi) = bounds(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1)))
                .unwrap_or((0.0, 1.0));
            let mut chart = ChartBuilder::on(&plot_area)
                .caption(&lp.name, ("sans-serif", 16))
                .margin(8)
                .x_label_area_size(36)
                .y_label_area_size(64)
                .build_cartesian_2d(0.0..self.data.end_s.max(1e-9), padded(lo, hi))?;
            let y_desc = axis_label(if self.control { "u" } else { "y, r" }, &lines);
            draw_axes(&mut chart, "time [s]", &y_desc)?;
            for (i, l) in solid.iter().enumerate() {
                chart.draw_series(LineSeries::new(
                    l.points.iter().copied(),
                    color(i).stroke_width(2),
                ))?;
            }
            for (i, l) in dashed.iter().enumerate() {
                chart.draw_series(DashedLineSeries::new(
                    l.points.iter().copied(),
                    6,
                    4,
                    color(i).stroke_width(1),
                ))?;
            }
        }
        Ok(())
    }
}

struct DelayOverTime<'a> {
    data: &'a RunData,
}

impl Figure for DelayOverTime<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res<()>
    where
        DB::ErrorType: 'static,
    {
        let flows = &self.data.flows;
        let mut entries = Vec::new();
        for (i, f) in flows.iter().enumerate() {
            entries.push(LegendEntry::new(
                format!("{} ({} delivered)", f.label, f.delays.len()),
                color(i),
                Mark::Dot,
            ));
            if !f.lost.is_empty() {
                entries.push(LegendEntry::new(
                    format!("{} ({} lost)", f.label, f.lost.len()),
                    color(i),
                    Mark::Cross,
                ));
            }
        }
        let area = self
            .data
            .frame(root, "Packet delay, lost packets marked x above", &entries)?;
        let (lo, hi) = self.data.delay_bounds();
        let y = padded(lo.min(0.0), hi);
        // Lost packets have no delay: a row of their own above the delays.
        let any_lost = flows.iter().any(|f| !f.lost.is_empty());
        let span = y.end - y.start;
        let lost_y = y.end + span * 0.06;
        let y_range = if any_lost {
            y.start..(y.end + span * 0.12)
        } else {
            y.clone()
        };
        let top = y.end;
        let mut chart = chart_on(&area, 70, 0.0..self.data.end_s.max(1e-9), y_range)?;
        chart
            .configure_mesh()
            .x_desc("send time [s]")
            .y_desc("delay [ms]")
            .y_label_formatter(&|v: &f64| {
                if *v > top {
                    String::new()
                } else {
                    format!("{v}")
                }
            })
            .label_style(("sans-serif", 13))
            .draw()?;
        if any_lost {
            let end = self.data.end_s.max(1e-9);
            chart.draw_series(DashedLineSeries::new(
                [(0.0, top), (end, top)],
                4,
                4,
                BLACK.mix(0.4).stroke_width(1),
            ))?;
            chart.draw_series([Text::new(
                "lost".to_string(),
                (0.0, lost_y + span * 0.02),
                ("sans-serif", 12)
                    .into_font()
                    .color(&BLACK.mix(0.6))
                    .pos(Pos::new(HPos::Left, VPos::Bottom)),
            )])?;
        }
        for (i, f) in flows.iter().enumerate() {
            let c = color(i);
            let stride = f.delays.len().div_ceil(MAX_PACKETS).max(1);
            chart.draw_series(
                f.delays
                    .iter()
                    .step_by(stride)
                    .map(|&(x, y)| Circle::new((x, y), 2, c.filled())),
            )?;
            let stride = f.lost.len().div_ceil(MAX_PACKETS).max(1);
            chart.draw_series(
                f.lost
                    .iter()
                    .step_by(stride)
                    .map(|&x| Cross::new((x, lost_y), 4, c.stroke_width(1))),
            )?;
        }
        Ok(())
    }
}

struct DelayCdf<'a> {
    data: &'a RunData,
}

impl Figure for DelayCdf<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res<()>
    where
        DB::ErrorType: 'static,
    {
        let flows = &self.data.flows;
        let entries = legend(flows, SOLID, |f| {
            format!("{} (n = {})", f.label, f.delays.len())
        });
        let area = self
            .data
            .frame(root, "Delay CDF of delivered packets", &entries)?;
        let (lo, hi) = self.data.delay_bounds();
        let mut chart = chart_on(&area, 60, padded(lo, hi), 0.0..1.02)?;
        draw_axes(&mut chart, "delay [ms]", "P(delay <= x)")?;
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
            chart.draw_series(LineSeries::new(steps, color(i).stroke_width(2)))?;
        }
        Ok(())
    }
}

struct Fates<'a> {
    data: &'a RunData,
}

impl Figure for Fates<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res<()>
    where
        DB::ErrorType: 'static,
    {
        let flows = &self.data.flows;
        let entries = legend(flows, Mark::Bar, |f| f.label.clone());
        let area = self.data.frame(root, "Packet fates per flow", &entries)?;
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
        // Room above the tallest bar for its value.
        let x = -0.5..shown.len() as f64 - 0.5;
        let mut chart = chart_on(&area, 70, x, 0.0..top * 1.12)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(4 * shown.len() + 1)
            .x_label_formatter(&|x| category_label(&labels, *x))
            .y_desc("packets")
            .label_style(("sans-serif", 13))
            .draw()?;
        let width = 0.8 / flows.len().max(1) as f64;
        for (i, f) in flows.iter().enumerate() {
            let c = color(i);
            let bar = |slot: usize| slot as f64 - 0.4 + i as f64 * width;
            chart.draw_series(shown.iter().enumerate().map(|(slot, &k)| {
                Rectangle::new(
                    [
                        (bar(slot), 0.0),
                        (bar(slot) + width * 0.9, f.fates[k] as f64),
                    ],
                    c.filled(),
                )
            }))?;
            // Each bar's count above it: the figure is read for its numbers.
            chart.draw_series(shown.iter().enumerate().map(|(slot, &k)| {
                Text::new(
                    f.fates[k].to_string(),
                    (bar(slot) + width * 0.45, f.fates[k] as f64),
                    ("sans-serif", 11)
                        .into_font()
                        .color(&BLACK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )
            }))?;
        }
        Ok(())
    }
}

/// The spacing error of each platoon follower against time.
struct Spacing<'a> {
    data: &'a RunData,
}

impl Figure for Spacing<'_> {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res<()>
    where
        DB::ErrorType: 'static,
    {
        let lines = &self.data.spacing;
        let entries = legend(lines, SOLID, |l| l.name.clone());
        let area = self
            .data
            .frame(root, "Spacing error (gap minus the policy's gap)", &entries)?;
        let (lo, hi) =
            bounds(lines.iter().flat_map(|l| l.points.iter().map(|p| p.1))).unwrap_or((0.0, 1.0));
        let end = self.data.end_s.max(1e-9);
        let y = padded(lo.min(0.0), hi.max(0.0));
        let mut chart = chart_on(&area, 70, 0.0..end, y)?;
        draw_axes(&mut chart, "time [s]", "spacing error [m]")?;
        chart.draw_series(DashedLineSeries::new(
            [(0.0, 0.0), (end, 0.0)],
            4,
            4,
            BLACK.mix(0.4).stroke_width(1),
        ))?;
        for (i, l) in lines.iter().enumerate() {
            chart.draw_series(LineSeries::new(
                l.points.iter().copied(),
                color(i).stroke_width(2),
            ))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_spacing_error_is_the_gap_minus_the_policy_gap() {
        let policy = SpacingPolicy {
            follower: "f".into(),
            predecessor: "l".into(),
            standstill_m: 2.0,
            time_gap_s: 0.7,
            predecessor_length_m: 4.0,
        };
        // Gap 100 - 4 - 80 = 16 m, policy 2 + 0.7 * 10 = 9 m: 7 m too far.
        // Gap 50 - 4 - 40 = 6 m, policy 2 + 0.7 * 20 = 16 m: 10 m too close.
        let e = spacing_errors(&policy, &[80.0, 40.0], &[10.0, 20.0], &[100.0, 50.0]);
        assert_eq!(e.len(), 2);
        assert!(
            (e[0] - 7.0).abs() < 1e-12 && (e[1] + 10.0).abs() < 1e-12,
            "{e:?}"
        );
    }

    #[test]
    fn axis_labels_carry_the_plant_units() {
        let line = |name: &str, unit: Option<&str>| Line {
            name: name.into(),
            unit: unit.map(String::from),
            points: vec![],
        };
        let (theta, r0, x) = (
            line("theta", Some("rad")),
            line("r0", Some("rad")),
            line("x", Some("m")),
        );
        assert_eq!(axis_label("y, r", &[&theta, &r0]), "y, r [rad]");
        assert_eq!(axis_label("y, r", &[&x, &theta]), "y, r [x: m, theta: rad]");
        assert_eq!(axis_label("u", &[&line("u", None)]), "u");
        let servo = controlsim::plant::units_of_kind("dc_servo");
        assert!(servo.contains(&("voltage", "V")) && servo.contains(&("omega", "rad/s")));
        assert!(controlsim::plant::units_of_kind("transfer_function").is_empty());
    }
}
