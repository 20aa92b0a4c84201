//! Parquet output (`[output] format = "parquet"`, `sweep.parquet`): typed
//! columns that pandas, pyarrow, polars, R or DuckDB read without guessing.
//!
//! Written with the `parquet` crate's low-level column writers and no arrow
//! arrays: netloop's tables are flat columns of numbers, booleans and text,
//! so the arrow compute stack would only add build time. Every column is
//! optional (a missing value is a null, not an empty string) and
//! snappy-compressed. The files are deterministic: the same table gives the
//! same bytes.
//!
//! A run's files are converted from its CSVs once they are complete
//! ([`csv_to_parquet`]): the CSV writers stay the single source of the
//! values, so the two formats cannot disagree. A column's type is the
//! narrowest that holds every cell: integer, then float (`inf`, `NaN`
//! included), then boolean (`true`/`false`), else text.

use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, DoubleType, Int64Type};
use parquet::errors::ParquetError;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::{SerializedColumnWriter, SerializedFileWriter};
use parquet::schema::types::Type;

use crate::output::AtomicFile;

/// Rows per row group when converting a CSV: bounds the memory a long run's
/// conversion needs.
const ROWS_PER_GROUP: usize = 65_536;

/// One column's values; `None` is a null.
#[derive(Clone, Debug, PartialEq)]
pub enum Column {
    Int(Vec<Option<i64>>),
    Float(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
    Text(Vec<Option<String>>),
}

/// The type of a [`Column`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Int,
    Float,
    Bool,
    Text,
}

impl Column {
    pub fn kind(&self) -> Kind {
        match self {
            Column::Int(_) => Kind::Int,
            Column::Float(_) => Kind::Float,
            Column::Bool(_) => Kind::Bool,
            Column::Text(_) => Kind::Text,
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Column::Int(v) => v.len(),
            Column::Float(v) => v.len(),
            Column::Bool(v) => v.len(),
            Column::Text(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn empty(kind: Kind) -> Column {
        match kind {
            Kind::Int => Column::Int(Vec::new()),
            Kind::Float => Column::Float(Vec::new()),
            Kind::Bool => Column::Bool(Vec::new()),
            Kind::Text => Column::Text(Vec::new()),
        }
    }

    /// Appends a CSV cell of a column whose kind [`infer`] chose; an empty
    /// cell is a null.
    fn push_cell(&mut self, cell: &str) {
        let cell = (!cell.is_empty()).then_some(cell);
        match self {
            Column::Int(v) => v.push(cell.and_then(|c| c.parse().ok())),
            Column::Float(v) => v.push(cell.and_then(|c| c.parse().ok())),
            Column::Bool(v) => v.push(cell.and_then(|c| c.parse().ok())),
            Column::Text(v) => v.push(cell.map(str::to_string)),
        }
    }

    fn clear(&mut self) {
        match self {
            Column::Int(v) => v.clear(),
            Column::Float(v) => v.clear(),
            Column::Bool(v) => v.clear(),
            Column::Text(v) => v.clear(),
        }
    }
}

/// The narrowest kind that holds every non-empty cell seen so far.
#[derive(Clone, Copy, Debug)]
struct Inference {
    int: bool,
    float: bool,
    boolean: bool,
}

impl Inference {
    fn new() -> Self {
        Inference {
            int: true,
            float: true,
            boolean: true,
        }
    }

    fn see(&mut self, cell: &str) {
        if cell.is_empty() {
            return;
        }
        self.int &= cell.parse::<i64>().is_ok();
        self.float &= cell.parse::<f64>().is_ok();
        self.boolean &= cell.parse::<bool>().is_ok();
    }

    /// A column of nulls only is a float column (as pandas reads it).
    fn kind(self) -> Kind {
        if self.int && !self.boolean {
            Kind::Int
        } else if self.float {
            Kind::Float
        } else if self.boolean {
            Kind::Bool
        } else {
            Kind::Text
        }
    }
}

/// The kind of a column of CSV cells.
pub fn infer<'a>(cells: impl IntoIterator<Item = &'a str>) -> Kind {
    let mut inference = Inference::new();
    for c in cells {
        inference.see(c);
    }
    inference.kind()
}

fn schema(names: &[String], kinds: &[Kind]) -> Result<Arc<Type>, ParquetError> {
    let fields = names
        .iter()
        .zip(kinds)
        .map(|(name, kind)| {
            let (physical, logical) = match kind {
                Kind::Int => (PhysicalType::INT64, None),
                Kind::Float => (PhysicalType::DOUBLE, None),
                Kind::Bool => (PhysicalType::BOOLEAN, None),
                Kind::Text => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Arc::new(
        Type::group_type_builder("netloop")
            .with_fields(fields)
            .build()?,
    ))
}

fn properties() -> Arc<WriterProperties> {
    Arc::new(
        WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_created_by(format!("netloop {}", env!("CARGO_PKG_VERSION")))
            .build(),
    )
}

/// A Parquet file being written, one row group at a time.
pub struct TableWriter<W: Write + Send> {
    writer: SerializedFileWriter<W>,
}

impl<W: Write + Send> TableWriter<W> {
    /// Starts a file with these column names and kinds.
    ///
    /// # Errors
    /// A column name Parquet cannot hold, or writing failed.
    pub fn new(out: W, names: &[String], kinds: &[Kind]) -> Result<Self, ParquetError> {
        let writer = SerializedFileWriter::new(out, schema(names, kinds)?, properties())?;
        Ok(TableWriter { writer })
    }

    /// Writes one row group: the columns, in schema order, of equal length.
    ///
    /// # Errors
    /// Writing failed.
    pub fn write_group(&mut self, columns: &[Column]) -> Result<(), ParquetError> {
        let mut group = self.writer.next_row_group()?;
        for column in columns {
            let Some(mut writer) = group.next_column()? else {
                return Err(ParquetError::General("more columns than the schema".into()));
            };
            write_column(&mut writer, column)?;
            writer.close()?;
        }
        group.close()?;
        Ok(())
    }

    /// Writes the footer and hands back the sink.
    ///
    /// # Errors
    /// Writing failed.
    pub fn finish(self) -> Result<W, ParquetError> {
        self.writer.into_inner()
    }
}

fn write_column(
    writer: &mut SerializedColumnWriter<'_>,
    column: &Column,
) -> Result<(), ParquetError> {
    fn split<T: Clone, U>(values: &[Option<T>], map: impl Fn(&T) -> U) -> (Vec<U>, Vec<i16>) {
        let present = values.iter().flatten().map(map).collect();
        let levels = values.iter().map(|v| i16::from(v.is_some())).collect();
        (present, levels)
    }
    match column {
        Column::Int(v) => {
            let (values, levels) = split(v, |x| *x);
            writer
                .typed::<Int64Type>()
                .write_batch(&values, Some(&levels), None)?;
        }
        Column::Float(v) => {
            let (values, levels) = split(v, |x| *x);
            writer
                .typed::<DoubleType>()
                .write_batch(&values, Some(&levels), None)?;
        }
        Column::Bool(v) => {
            let (values, levels) = split(v, |x| *x);
            writer
                .typed::<BoolType>()
                .write_batch(&values, Some(&levels), None)?;
        }
        Column::Text(v) => {
            let (values, levels) = split(v, |s| ByteArray::from(s.as_str()));
            writer
                .typed::<ByteArrayType>()
                .write_batch(&values, Some(&levels), None)?;
        }
    }
    Ok(())
}

/// Writes a whole table as `path`, atomically.
///
/// # Errors
/// Columns of different lengths, a name Parquet cannot hold, or writing failed.
pub fn write_table(path: &Path, names: &[String], columns: &[Column]) -> io::Result<()> {
    let rows = columns.first().map_or(0, Column::len);
    if columns.iter().any(|c| c.len() != rows) || names.len() != columns.len() {
        return Err(io::Error::other("columns of different lengths"));
    }
    let kinds: Vec<Kind> = columns.iter().map(Column::kind).collect();
    let mut bytes = TableWriter::new(Vec::new(), names, &kinds).map_err(io::Error::other)?;
    bytes.write_group(columns).map_err(io::Error::other)?;
    let bytes = bytes.finish().map_err(io::Error::other)?;
    crate::output::write_atomically(path, &bytes)
}

/// Converts the CSV file `csv` into `dir/name` (through `name.partial`, as
/// every data file), with the column types [`infer`] finds.
///
/// # Errors
/// Reading the CSV or writing the Parquet file failed.
pub fn csv_to_parquet(csv: &Path, dir: &Path, name: &str) -> io::Result<PathBuf> {
    let open = || {
        csv::ReaderBuilder::new()
            .has_headers(true)
            .from_path(csv)
            .map_err(|e| io::Error::other(format!("{}: {e}", csv.display())))
    };
    let bad = |e: csv::Error| io::Error::other(format!("{}: {e}", csv.display()));
    // Pass 1: the header and each column's kind.
    let mut reader = open()?;
    let names: Vec<String> = reader
        .headers()
        .map_err(bad)?
        .iter()
        .map(String::from)
        .collect();
    let mut inference = vec![Inference::new(); names.len()];
    let mut record = csv::StringRecord::new();
    while reader.read_record(&mut record).map_err(bad)? {
        for (inf, cell) in inference.iter_mut().zip(record.iter()) {
            inf.see(cell);
        }
    }
    let kinds: Vec<Kind> = inference.into_iter().map(Inference::kind).collect();
    // Pass 2: the values, a row group at a time.
    let out = AtomicFile::create(dir, name)?;
    let pq = |e: ParquetError| io::Error::other(format!("{name}: {e}"));
    let mut writer = TableWriter::new(out, &names, &kinds).map_err(pq)?;
    let mut columns: Vec<Column> = kinds.iter().map(|k| Column::empty(*k)).collect();
    let mut reader = open()?;
    let mut rows = 0usize;
    let mut groups = 0usize;
    while reader.read_record(&mut record).map_err(bad)? {
        for (column, cell) in columns.iter_mut().zip(record.iter()) {
            column.push_cell(cell);
        }
        rows += 1;
        if rows == ROWS_PER_GROUP {
            writer.write_group(&columns).map_err(pq)?;
            columns.iter_mut().for_each(Column::clear);
            rows = 0;
            groups += 1;
        }
    }
    // A table without rows still gets one (empty) group, so it has a schema
    // readers agree on.
    if rows > 0 || groups == 0 {
        writer.write_group(&columns).map_err(pq)?;
    }
    writer.finish().map_err(pq)?.commit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_are_the_narrowest_that_hold_every_cell() {
        assert_eq!(infer(["1", "", "-3"]), Kind::Int);
        assert_eq!(infer(["1", "0.5"]), Kind::Float);
        assert_eq!(infer(["inf", "NaN", "2"]), Kind::Float);
        assert_eq!(infer(["true", "false", ""]), Kind::Bool);
        assert_eq!(infer(["delivered", "1"]), Kind::Text);
        assert_eq!(infer(["", ""]), Kind::Float);
    }

    #[test]
    fn a_csv_converts_with_nulls_and_row_groups() {
        let dir = tempfile::tempdir().unwrap();
        let csv = dir.path().join("t.csv");
        let mut text = String::from("t,n,fate,ok\n");
        let rows = ROWS_PER_GROUP + 3;
        for i in 0..rows {
            let n = if i % 7 == 0 {
                String::new()
            } else {
                i.to_string()
            };
            text.push_str(&format!(
                "{},{n},f{},{}\n",
                i as f64 * 0.001,
                i % 3,
                i % 2 == 0
            ));
        }
        std::fs::write(&csv, text).unwrap();
        let path = csv_to_parquet(&csv, dir.path(), "t.parquet").unwrap();
        assert_eq!(path, dir.path().join("t.parquet"));
        assert!(!dir.path().join("t.parquet.partial").exists());

        use parquet::file::reader::{FileReader, SerializedFileReader};
        use parquet::record::RowAccessor;
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        let meta = reader.metadata();
        assert_eq!(meta.file_metadata().num_rows(), rows as i64);
        assert_eq!(meta.num_row_groups(), 2);
        let schema = meta.file_metadata().schema_descr();
        let types: Vec<_> = (0..4).map(|i| schema.column(i).physical_type()).collect();
        assert_eq!(
            types,
            [
                PhysicalType::DOUBLE,
                PhysicalType::INT64,
                PhysicalType::BYTE_ARRAY,
                PhysicalType::BOOLEAN
            ]
        );
        let row = reader.get_row_iter(None).unwrap().nth(1).unwrap().unwrap();
        assert_eq!(row.get_double(0).unwrap(), 0.001);
        assert_eq!(row.get_long(1).unwrap(), 1);
        assert_eq!(row.get_string(2).unwrap(), "f1");
        assert!(!row.get_bool(3).unwrap());
        let first = reader.get_row_iter(None).unwrap().next().unwrap().unwrap();
        assert!(first.get_long(1).is_err(), "row 0 has a null n");
    }

    #[test]
    fn the_same_table_gives_the_same_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let names = vec!["a".to_string(), "b".to_string()];
        let columns = vec![
            Column::Float(vec![Some(1.5), None]),
            Column::Text(vec![Some("x".into()), None]),
        ];
        write_table(&dir.path().join("1.parquet"), &names, &columns).unwrap();
        write_table(&dir.path().join("2.parquet"), &names, &columns).unwrap();
        assert_eq!(
            std::fs::read(dir.path().join("1.parquet")).unwrap(),
            std::fs::read(dir.path().join("2.parquet")).unwrap()
        );
    }
}
