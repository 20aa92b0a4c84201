//! Plots of a run directory or a sweep directory, each as PNG, SVG and PDF
//! (docs/design.md §8.5), written to `<dir>/plots/`.
//!
//! - A run ([`run::plot_run`]): `trajectories` (outputs with their
//!   references, one panel per loop), `control` (applied and computed control
//!   input), `delay` (packet delay against send time, per flow), `delay_cdf`
//!   (empirical CDF of the delay, per flow) and `fates` (packet fates per
//!   flow).
//! - A sweep ([`sweep::plot_sweep`]): one figure per metric of
//!   `sweep_summary.csv`: the mean against a swept parameter with 95%
//!   confidence bars, one line per value of the other parameters.
//!
//! Every figure is [`WIDTH`] x [`HEIGHT`] pixels (the SVG has the same size
//! in user units, the PDF page is 900 x 600 pt: [`pdf::POINTS_PER_PIXEL`]),
//! with its title fitted to the width and its legend right of the data
//! ([`layout`]). Text uses DejaVu Sans, embedded in the binary
//! (`bridge/assets/fonts`, Bitstream Vera licence), through plotters'
//! `ab_glyph` feature: no system font library is needed to build or to draw.

mod interval;
pub(crate) mod layout;
pub mod pdf;
pub mod run;
pub mod sweep;
mod table;

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use layout::Res;

/// Figure width, pixels.
pub const WIDTH: u32 = 1200;
/// Figure height, pixels.
pub const HEIGHT: u32 = 800;

static FONT: &[u8] = include_bytes!("../assets/fonts/DejaVuSans.ttf");
static REGISTER: Once = Once::new();

/// Why a plot could not be made.
#[derive(Debug, thiserror::Error)]
pub enum PlotError {
    /// The directory is neither a run nor a sweep, or lacks a file.
    #[error("{0}")]
    Input(String),
    #[error("cannot write {}: {source}", path.display())]
    Output {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot draw {}: {message}", path.display())]
    Draw { path: PathBuf, message: String },
}

/// Options of [`plot_dir`].
#[derive(Clone, Debug, Default)]
pub struct PlotOptions {
    /// Sweep plots: the parameter on the x axis (default: the first one).
    pub x: Option<String>,
    /// Sweep plots: which metrics, by full name (`servo.theta.iae`) or by
    /// the end of it (`iae`, `delay.p99_s`); `all` for every one. Default:
    /// [`DEFAULT_SWEEP_METRICS`].
    pub metrics: Vec<String>,
    /// Sweep plots: a logarithmic x axis (for data rates or delays spanning
    /// decades); needs every x value positive.
    pub log_x: bool,
}

/// The metrics a sweep plots unless told otherwise: the control figures of
/// every loop output, the mean and 99th percentile delay and the delivery
/// ratio of every flow, and the overall delivery ratio.
pub const DEFAULT_SWEEP_METRICS: &[&str] = &[
    "iae",
    "ise",
    "itae",
    "overshoot_percent",
    "settling_time_s",
    "delay.mean_s",
    "delay.p99_s",
    "delivery_ratio",
];

/// Whether a metric is the fraction of runs a stop condition ended
/// (`unstable_fraction`): drawn by default, the finding of a stability study.
fn is_stop_fraction(metric: &str) -> bool {
    metric.ends_with("_fraction") && !metric.contains('.')
}

/// Whether `metric` is selected by `patterns` (see [`PlotOptions::metrics`]).
pub fn metric_selected(metric: &str, patterns: &[String]) -> bool {
    let matches = |p: &str| p == "all" || metric == p || metric.ends_with(&format!(".{p}"));
    if patterns.is_empty() {
        // The states' and inputs' figures (`servo.x.theta.iae`) only when asked.
        let segments: Vec<&str> = metric.split('.').collect();
        let of_state_or_input =
            segments.len() >= 4 && matches!(segments[segments.len() - 3], "x" | "u");
        is_stop_fraction(metric)
            || (!of_state_or_input && DEFAULT_SWEEP_METRICS.iter().any(|p| matches(p)))
    } else {
        patterns.iter().any(|p| matches(p))
    }
}

/// Plots a run or a sweep directory, whichever `dir` is; returns the files
/// written.
///
/// # Errors
/// [`PlotError::Input`] when `dir` is neither, or its files cannot be read.
pub fn plot_dir(dir: &Path, options: &PlotOptions) -> Result<Vec<PathBuf>, PlotError> {
    if dir.join("sweep.json").exists() {
        sweep::plot_sweep(dir, options)
    } else if dir.join("summary.json").exists() {
        run::plot_run(dir)
    } else {
        Err(PlotError::Input(format!(
            "{} is neither a run directory (no summary.json) nor a sweep directory (no sweep.json)",
            dir.display()
        )))
    }
}

/// Something that can be drawn on any backend.
pub(crate) trait Figure {
    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> Res<()>
    where
        DB::ErrorType: 'static;
}

/// Draws `figure` into `<stem>.png`, `<stem>.svg` and `<stem>.pdf`.
pub(crate) fn render(figure: &impl Figure, stem: &Path) -> Result<Vec<PathBuf>, PlotError> {
    REGISTER.call_once(|| {
        // The bytes are a valid TTF compiled into the binary; a failure would show in every test.
        let _ = plotters::style::register_font("sans-serif", FontStyle::Normal, FONT);
    });
    if let Some(parent) = stem.parent() {
        std::fs::create_dir_all(parent).map_err(|source| PlotError::Output {
            path: parent.to_path_buf(),
            source,
        })?;
    }
    // Appended, not `with_extension`: metric names hold dots.
    let with = |ext: &str| {
        let mut name = stem
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(format!(".{ext}"));
        stem.with_file_name(name)
    };
    let (svg, png, pdf) = (with("svg"), with("png"), with("pdf"));
    let draw_error = |path: &Path, e: Box<dyn std::error::Error>| PlotError::Draw {
        path: path.to_path_buf(),
        message: e.to_string(),
    };

    let mut svg_text = String::new();
    {
        let root = SVGBackend::with_string(&mut svg_text, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(&svg, e.into()))?;
        figure.draw(&root).map_err(|e| draw_error(&svg, e))?;
        root.present().map_err(|e| draw_error(&svg, e.into()))?;
    }
    crate::output::write_atomically(&svg, svg_text.as_bytes()).map_err(|source| {
        PlotError::Output {
            path: svg.clone(),
            source,
        }
    })?;

    let mut pixels = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut pixels, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(&png, e.into()))?;
        figure.draw(&root).map_err(|e| draw_error(&png, e))?;
        root.present().map_err(|e| draw_error(&png, e.into()))?;
    }
    let mut encoded = Vec::new();
    {
        let mut encoder = png::Encoder::new(&mut encoded, WIDTH, HEIGHT);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder
            .write_header()
            .map_err(|e| draw_error(&png, e.into()))?;
        writer
            .write_image_data(&pixels)
            .map_err(|e| draw_error(&png, e.into()))?;
    }
    crate::output::write_atomically(&png, &encoded).map_err(|source| PlotError::Output {
        path: png.clone(),
        source,
    })?;

    let mut pdf_bytes = Vec::new();
    {
        let root = pdf::PdfBackend::new(&mut pdf_bytes, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| draw_error(&pdf, e.into()))?;
        figure.draw(&root).map_err(|e| draw_error(&pdf, e))?;
        root.present().map_err(|e| draw_error(&pdf, e.into()))?;
    }
    crate::output::write_atomically(&pdf, &pdf_bytes).map_err(|source| PlotError::Output {
        path: pdf.clone(),
        source,
    })?;
    Ok(vec![png, svg, pdf])
}

/// Tableau 10: distinguishable, and readable in print.
pub(crate) fn color(i: usize) -> RGBColor {
    const PALETTE: [RGBColor; 10] = [
        RGBColor(31, 119, 180),
        RGBColor(255, 127, 14),
        RGBColor(44, 160, 44),
        RGBColor(214, 39, 40),
        RGBColor(148, 103, 189),
        RGBColor(140, 86, 75),
        RGBColor(227, 119, 194),
        RGBColor(127, 127, 127),
        RGBColor(188, 189, 34),
        RGBColor(23, 190, 207),
    ];
    PALETTE[i % PALETTE.len()]
}

/// A range that shows `lo..hi` with a margin, never empty.
pub(crate) fn padded(lo: f64, hi: f64) -> std::ops::Range<f64> {
    if !lo.is_finite() || !hi.is_finite() {
        return 0.0..1.0;
    }
    if hi - lo < 1e-12 * (lo.abs() + hi.abs()).max(1e-300) || hi <= lo {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        return (lo - pad)..(hi + pad);
    }
    let pad = (hi - lo) * 0.05;
    (lo - pad)..(hi + pad)
}

/// The smallest and largest finite value.
pub(crate) fn bounds(values: impl IntoIterator<Item = f64>) -> Option<(f64, f64)> {
    values
        .into_iter()
        .filter(|v| v.is_finite())
        .fold(None, |acc, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })
}
