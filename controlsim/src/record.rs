//! Streaming CSV recording of every n-th step (`timeseries.csv`, docs/design.md §8.3).
//!
//! A [`Recorder`] is an [`Observer`]: pass it to
//! [`System::advance_to`](crate::System::advance_to) and it writes one row at
//! every boundary `k` with `k % every == 0`, through a buffered writer into
//! the caller's writer. It reads the loops through a
//! [`LoopView`](crate::view::LoopView), so it records the graph a system
//! expands into ([`ObserveGraph`](crate::graph::ObserveGraph)) with the same
//! bytes as the system itself. Nothing accumulates, so memory does not grow with the
//! length of the run; the `long_run` example measures it.
//!
//! # Columns
//! `time` (seconds, printed exactly from integer nanoseconds), then for each
//! loop, in loop order, with the loop name as prefix:
//! `name.r<j>` references, `name.y.<output>` plant outputs (true values),
//! `name.x.<state>` plant states, `name.xc.<state>` controller states,
//! `name.u.<input>` applied controls (after saturation), `name.uc.<input>`
//! the controller's last computed controls.
//!
//! Numbers are printed by `ryu`: the shortest decimal that parses back to the
//! same bits (`1.0`, `0.25`, `1e-7`), identical on every platform. Rows are
//! formatted straight into a line buffer: numbers never need CSV quoting, and
//! going through `fmt` and a CSV field writer cost four times as much, which
//! showed in the co-simulation benchmarks. The header goes through the `csv`
//! crate, since loop names may need quoting.

use std::fmt::Write as _;
use std::io::{BufWriter, Write};
use std::num::NonZeroU64;

use crate::error::ObserverError;
use crate::system::{Observer, System};
use crate::view::{LoopObserver, LoopView};

/// Why recording failed.
#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("cannot write the time series header: {0}")]
    Csv(#[from] csv::Error),
    #[error("cannot flush the time series: {0}")]
    Io(#[from] std::io::Error),
    #[error("the recorder was made for a system with {expected} columns, this one has {found}")]
    Layout { expected: usize, found: usize },
}

/// Streams rows of a [`System`]'s (or any [`LoopView`]'s) time series into
/// a writer.
pub struct Recorder<W: Write> {
    out: BufWriter<W>,
    every: NonZeroU64,
    columns: usize,
    last: Option<u64>,
    rows: u64,
    /// The row being formatted.
    line: Vec<u8>,
    time: String,
    numbers: ryu::Buffer,
    scratch: Vec<f64>,
}

impl<W: Write> std::fmt::Debug for Recorder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recorder")
            .field("every", &self.every)
            .field("columns", &self.columns)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

/// The column names for `loops`, in order.
pub fn header<V: LoopView + ?Sized>(loops: &V) -> Vec<String> {
    let mut h = vec!["time".to_string()];
    for i in 0..loops.loop_count() {
        let n = loops.loop_name(i);
        let s = loops.signature(i);
        h.extend((0..loops.reference_dim(i)).map(|j| format!("{n}.r{j}")));
        h.extend(s.outputs.iter().map(|o| format!("{n}.y.{o}")));
        h.extend(s.states.iter().map(|o| format!("{n}.x.{o}")));
        h.extend(
            loops
                .controller_state_names(i)
                .iter()
                .map(|o| format!("{n}.xc.{o}")),
        );
        h.extend(s.inputs.iter().map(|o| format!("{n}.u.{o}")));
        h.extend(s.inputs.iter().map(|o| format!("{n}.uc.{o}")));
    }
    h
}

/// Writes `ns` nanoseconds as exact decimal seconds: `0`, `0.001`, `12.5`.
pub fn write_seconds(out: &mut String, ns: u64) {
    let (s, frac) = (ns / 1_000_000_000, ns % 1_000_000_000);
    let _ = write!(out, "{s}");
    if frac != 0 {
        let _ = write!(out, ".{frac:09}");
        // The fraction has a non-zero digit, so this stops before the point.
        while out.ends_with('0') {
            out.pop();
        }
    }
}

impl<W: Write> Recorder<W> {
    /// Writes the header and returns a recorder of every `every`-th step.
    ///
    /// # Errors
    /// A write error.
    pub fn new<V: LoopView + ?Sized>(
        loops: &V,
        writer: W,
        every: NonZeroU64,
    ) -> Result<Self, RecordError> {
        let header = header(loops);
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        csv.write_record(&header)?;
        let mut out = BufWriter::with_capacity(1 << 16, writer);
        out.write_all(
            &csv.into_inner()
                .map_err(|e| RecordError::Io(e.into_error()))?,
        )?;
        let widest = (0..loops.loop_count())
            .map(|i| {
                let s = loops.signature(i);
                loops
                    .reference_dim(i)
                    .max(s.outputs.len())
                    .max(s.states.len())
            })
            .max()
            .unwrap_or(0);
        Ok(Recorder {
            out,
            every,
            columns: header.len(),
            last: None,
            rows: 0,
            // 24 bytes covers any shortest f64 with its comma; a row that is
            // longer grows the buffer once.
            line: Vec::with_capacity(header.len() * 24),
            time: String::with_capacity(32),
            numbers: ryu::Buffer::new(),
            scratch: vec![0.0; widest],
        })
    }

    /// Rows written so far (not counting the header).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes the row of the current boundary if it is on the recording grid
    /// and not written yet.
    ///
    /// # Errors
    /// [`RecordError::Csv`] on a write error, [`RecordError::Layout`] for a
    /// system other than the one the recorder was made for.
    pub fn record<V: LoopView + ?Sized>(&mut self, loops: &V) -> Result<(), RecordError> {
        let k = loops.k();
        if k % self.every.get() != 0 || self.last == Some(k) {
            return Ok(());
        }
        let mut n = 1;
        self.line.clear();
        self.time.clear();
        write_seconds(&mut self.time, loops.time().as_nanos());
        self.line.extend_from_slice(self.time.as_bytes());
        for i in 0..loops.loop_count() {
            let r = loops.reference_dim(i);
            loops.references_into(i, &mut self.scratch[..r]);
            n += self.put_scratch(r)?;
            let p = loops.signature(i).outputs.len();
            loops.plant_outputs_into(i, &mut self.scratch[..p]);
            n += self.put_scratch(p)?;
            for v in [
                loops.plant_state(i),
                loops.controller_state(i),
                loops.applied_control(i),
                loops.computed_control(i),
            ] {
                n += self.put(v)?;
            }
        }
        if n != self.columns {
            return Err(RecordError::Layout {
                expected: self.columns,
                found: n,
            });
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)?;
        self.last = Some(k);
        self.rows += 1;
        Ok(())
    }

    fn put_scratch(&mut self, len: usize) -> Result<usize, RecordError> {
        for i in 0..len {
            let v = self.scratch[i];
            self.put_one(v)?;
        }
        Ok(len)
    }

    fn put(&mut self, values: &[f64]) -> Result<usize, RecordError> {
        for &v in values {
            self.put_one(v)?;
        }
        Ok(values.len())
    }

    #[inline]
    fn put_one(&mut self, v: f64) -> Result<(), RecordError> {
        self.line.push(b',');
        self.line
            .extend_from_slice(self.numbers.format(v).as_bytes());
        Ok(())
    }

    /// Writes the final boundary's row (if on the grid and not yet written),
    /// flushes, and returns the writer.
    ///
    /// # Errors
    /// As [`record`](Self::record), or a flush error.
    pub fn finish<V: LoopView + ?Sized>(mut self, loops: &V) -> Result<W, RecordError> {
        self.record(loops)?;
        self.out.flush()?;
        self.out
            .into_inner()
            .map_err(|e| RecordError::Io(e.into_error()))
    }
}

impl<W: Write> Observer for Recorder<W> {
    fn observe(&mut self, system: &System) -> Result<(), ObserverError> {
        self.record(system).map_err(Into::into)
    }
}

impl<W: Write> LoopObserver for Recorder<W> {
    fn observe_loops<V: LoopView + ?Sized>(&mut self, loops: &V) -> Result<(), ObserverError> {
        self.record(loops).map_err(Into::into)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seconds_are_exact_decimals() {
        let s = |ns| {
            let mut out = String::new();
            write_seconds(&mut out, ns);
            out
        };
        assert_eq!(s(0), "0");
        assert_eq!(s(1_000_000), "0.001");
        assert_eq!(s(12_500_000_000), "12.5");
        assert_eq!(s(1), "0.000000001");
        assert_eq!(s(3_600_000_000_000), "3600");
    }
}
