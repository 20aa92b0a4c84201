//! Writing a graph's time series: one row per recorded boundary, `time` in
//! exact decimal seconds, then every output element and every continuous
//! state, numbers printed by `ryu` (the shortest text that parses back to the
//! same bits), as the loops' [`Recorder`](crate::Recorder) does.
//!
//! Columns: `component.port` for a one-element port, `component.port[i]`,
//! or `component.port.element` where the port names its elements; then
//! `component.x.state` for continuous states.

use std::io::Write;
use std::num::NonZeroU64;

use super::engine::{Graph, GraphObserver};
use crate::error::ObserverError;
use crate::record::write_seconds;

/// The column names for `graph`, `time` first.
pub fn header(graph: &Graph) -> Vec<String> {
    let mut h = vec!["time".to_string()];
    h.extend(graph.value_names());
    for (i, name) in graph.component_names().enumerate() {
        h.extend(
            graph
                .declaration(i)
                .states
                .iter()
                .map(|s| format!("{name}.x.{s}")),
        );
    }
    h
}

/// Streams every `every`-th boundary of a graph run to a CSV writer.
pub struct GraphRecorder<W: Write> {
    out: W,
    every: NonZeroU64,
    line: Vec<u8>,
    time: String,
    numbers: ryu::Buffer,
    rows: u64,
}

impl<W: Write> std::fmt::Debug for GraphRecorder<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GraphRecorder")
            .field("every", &self.every)
            .field("rows", &self.rows)
            .finish_non_exhaustive()
    }
}

impl<W: Write> GraphRecorder<W> {
    /// Writes the header.
    ///
    /// # Errors
    /// A write error.
    pub fn new(graph: &Graph, mut out: W, every: NonZeroU64) -> std::io::Result<Self> {
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        csv.write_record(header(graph))?;
        let head = csv.into_inner().map_err(|e| e.into_error())?;
        out.write_all(&head)?;
        Ok(GraphRecorder {
            out,
            every,
            line: Vec::new(),
            time: String::new(),
            numbers: ryu::Buffer::new(),
            rows: 0,
        })
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Flushes and returns the writer.
    ///
    /// # Errors
    /// A write error.
    pub fn finish(mut self) -> std::io::Result<W> {
        self.out.flush()?;
        Ok(self.out)
    }

    fn put(&mut self, v: f64) {
        self.line.push(b',');
        // As the loops' recorder: `ryu` for finite values, `NaN`, `inf`.
        self.line
            .extend_from_slice(self.numbers.format(v).as_bytes());
    }
}

impl<W: Write> GraphObserver for GraphRecorder<W> {
    /// Every `every`-th boundary: the rows it writes.
    fn observes(&self, k: u64) -> bool {
        k % self.every.get() == 0
    }

    fn observe(&mut self, graph: &Graph) -> Result<(), ObserverError> {
        if graph.k() % self.every.get() != 0 {
            return Ok(());
        }
        self.line.clear();
        self.time.clear();
        write_seconds(&mut self.time, graph.time().as_nanos());
        self.line.extend_from_slice(self.time.as_bytes());
        for &v in graph.values() {
            self.put(v);
        }
        for i in 0..graph.component_names().count() {
            for &v in graph.states(i) {
                self.put(v);
            }
        }
        self.line.push(b'\n');
        self.out.write_all(&self.line)?;
        self.rows += 1;
        Ok(())
    }
}
