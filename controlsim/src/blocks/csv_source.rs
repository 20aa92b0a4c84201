//! `from_csv`: a source that plays a table of samples from a CSV file (a
//! measured speed profile, a recorded disturbance).
//!
//! # The file
//! The first column is time in seconds, strictly increasing; every other
//! column is one element of the output `y` (so a file with `time,value`
//! columns gives a one-element `y`). Values are separated by commas; a
//! first row that is not numbers is a header and is skipped; empty lines
//! are skipped. Every number must be finite, and every row as long as the
//! first.
//!
//! # Between and beyond the samples
//! `interpolation = "linear"` (default) joins the samples by straight
//! lines; `"hold"` keeps each sample's value until the next sample's time
//! (a staircase; at a sample's time the output is that sample). Before the
//! first sample the output is the first sample's value, after the last the
//! last's (both ends held, never extrapolated along a slope).

use serde::{Deserialize, Serialize};

use super::common::width;
use crate::equations::Source;
use crate::error::ConfigError;
use crate::graph::{Component, Ctx, Declaration, Inputs, Outputs, PortSpec, Timing};
use crate::key_path::KeyPath;

/// How `from_csv` fills the time between samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interpolation {
    #[default]
    Linear,
    Hold,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FromCsvConfig {
    /// Path of the CSV file, relative to the file that names it.
    pub file: String,
    #[serde(default)]
    pub interpolation: Interpolation,
    /// The file's text as the loader read it (size-capped, with the path it
    /// is reported under); without it the file is read from `file` as is.
    #[serde(skip)]
    pub loaded: Option<Source>,
}

/// The built block: sample times and, row by row, the values.
#[derive(Clone, Debug)]
pub struct FromCsv {
    times: Vec<f64>,
    /// Row-major, `width` values per sample.
    values: Vec<f64>,
    width: usize,
    interpolation: Interpolation,
}

impl FromCsv {
    /// Reads and checks the table at `key` (`components[0].block`).
    ///
    /// # Errors
    /// [`ConfigError`] at `key.file`: unreadable, empty, a row of another
    /// length, a field that is not a finite number, times not increasing;
    /// the message names the file and line.
    pub fn new(key: &KeyPath, c: &FromCsvConfig) -> Result<Self, ConfigError> {
        let file_key = key.child("file");
        let source = match &c.loaded {
            Some(s) => s.clone(),
            None => Source {
                name: c.file.clone(),
                text: std::fs::read_to_string(&c.file).map_err(|e| {
                    ConfigError::invalid(&file_key, format!("cannot read {}: {e}", c.file))
                })?,
            },
        };
        let (times, values, w) = parse(&source.text).map_err(|(line, reason)| {
            ConfigError::invalid(&file_key, format!("{}:{line}: {reason}", source.name))
        })?;
        width(&file_key, w).map_err(|_| {
            ConfigError::invalid(
                &file_key,
                format!(
                    "{}: has {w} value columns; a source has 1 to {}",
                    source.name,
                    crate::limits::MAX_DIMENSION
                ),
            )
        })?;
        Ok(FromCsv {
            times,
            values,
            width: w,
            interpolation: c.interpolation,
        })
    }

    /// Row `i`'s values.
    #[inline]
    fn row(&self, i: usize) -> &[f64] {
        &self.values[i * self.width..(i + 1) * self.width]
    }

    /// The output at `t` seconds (see the module docs).
    pub fn at(&self, t: f64, y: &mut [f64]) {
        // Samples at or before t.
        let after = self.times.partition_point(|&s| s <= t);
        if after == 0 {
            y.copy_from_slice(self.row(0));
            return;
        }
        let i = after - 1;
        if after == self.times.len() || self.interpolation == Interpolation::Hold {
            y.copy_from_slice(self.row(i));
            return;
        }
        let (t0, t1) = (self.times[i], self.times[after]);
        let a = (t - t0) / (t1 - t0);
        for ((o, &v0), &v1) in y.iter_mut().zip(self.row(i)).zip(self.row(after)) {
            *o = v0 + a * (v1 - v0);
        }
    }
}

/// Times, row-major values and the number of value columns of a table, or
/// the 1-based line and reason of the first problem.
fn parse(text: &str) -> Result<(Vec<f64>, Vec<f64>, usize), (u64, String)> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let (mut times, mut values) = (Vec::new(), Vec::new());
    let mut columns = 0;
    for (n, record) in reader.records().enumerate() {
        let record = record.map_err(|e| {
            let line = e.position().map_or(0, csv::Position::line);
            (line, format!("not CSV: {e}"))
        })?;
        let line = record.position().map_or(n as u64 + 1, csv::Position::line);
        if record.iter().all(str::is_empty) {
            continue;
        }
        let numbers: Vec<Result<f64, _>> = record.iter().map(str::parse::<f64>).collect();
        if times.is_empty() && columns == 0 && numbers.iter().any(Result::is_err) {
            // A header.
            columns = record.len();
            continue;
        }
        if columns == 0 {
            columns = record.len();
        }
        if columns < 2 {
            return Err((
                line,
                "needs a time column and at least one value column".into(),
            ));
        }
        if record.len() != columns {
            return Err((
                line,
                format!("has {} fields, the first row {columns}", record.len()),
            ));
        }
        for (j, (field, x)) in record.iter().zip(&numbers).enumerate() {
            match x {
                Ok(x) if x.is_finite() => {}
                _ => {
                    return Err((
                        line,
                        format!("field {} `{field}` is not a finite number", j + 1),
                    ))
                }
            }
        }
        let t = *numbers[0].as_ref().unwrap_or(&0.0);
        if let Some(&last) = times.last() {
            if t <= last {
                return Err((
                    line,
                    format!("time {t} is not after the previous row's {last}: times must increase"),
                ));
            }
        }
        times.push(t);
        values.extend(numbers[1..].iter().map(|x| *x.as_ref().unwrap_or(&0.0)));
    }
    if times.is_empty() {
        return Err((1, "has no samples: give rows of `time,value`".into()));
    }
    Ok((times, values, columns - 1))
}

impl Component for FromCsv {
    fn declare(&self) -> Declaration {
        Declaration {
            inputs: Vec::new(),
            outputs: vec![PortSpec::new("y", self.width)],
            states: Vec::new(),
            guards: 0,
            timing: Timing::EveryStep,
        }
    }

    fn initial_outputs(&self, y: &mut Outputs) {
        self.at(0.0, y.all());
    }

    fn output(&mut self, cx: &mut Ctx, _: &[f64], _: &Inputs, y: &mut Outputs) {
        self.at(cx.now.as_secs_f64(), y.all());
    }
}
