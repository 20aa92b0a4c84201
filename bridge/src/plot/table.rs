//! A run's data file as rows of text cells, whether the run wrote CSV, the
//! `.csv.partial` a failed run leaves, or Parquet (`--format parquet`), so
//! the figures read every format through one path.

use std::fs::File;
use std::path::{Path, PathBuf};

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::reader::RowIter;
use parquet::record::Field;

use super::PlotError;

enum Rows {
    Csv(csv::StringRecordsIntoIter<File>),
    Parquet(RowIter<'static>),
}

/// The rows of one data file, read as they are iterated.
pub(crate) struct Table {
    pub path: PathBuf,
    /// A failed run's partial CSV: it may end mid-row.
    pub partial: bool,
    pub header: Vec<String>,
    rows: Rows,
}

fn input(e: impl std::fmt::Display) -> PlotError {
    PlotError::Input(e.to_string())
}

/// Only regular files: a device such as `/dev/zero` in their place would
/// never end.
fn regular(path: PathBuf) -> Option<PathBuf> {
    path.is_file().then_some(path)
}

impl Table {
    /// `<name>.csv`, else `<name>.parquet`, else `<name>.csv.partial` in
    /// `dir`; `None` when there is none of them.
    pub fn open(dir: &Path, name: &str) -> Result<Option<Table>, PlotError> {
        if let Some(path) = regular(dir.join(format!("{name}.csv"))) {
            return Self::csv(path, false).map(Some);
        }
        if let Some(path) = regular(dir.join(format!("{name}.parquet"))) {
            return Self::parquet(path).map(Some);
        }
        if let Some(path) = regular(dir.join(format!("{name}.csv.partial"))) {
            return Self::csv(path, true).map(Some);
        }
        Ok(None)
    }

    fn csv(path: PathBuf, partial: bool) -> Result<Table, PlotError> {
        let mut reader =
            csv::Reader::from_path(&path).map_err(|e| input(format!("{}: {e}", path.display())))?;
        let header = reader
            .headers()
            .map_err(|e| input(format!("{}: {e}", path.display())))?
            .iter()
            .map(String::from)
            .collect();
        Ok(Table {
            path,
            partial,
            header,
            rows: Rows::Csv(reader.into_records()),
        })
    }

    fn parquet(path: PathBuf) -> Result<Table, PlotError> {
        let unreadable = |e: &dyn std::fmt::Display| {
            input(format!(
                "{}: {e}: the file is corrupt, nothing plotted",
                path.display()
            ))
        };
        let file = File::open(&path).map_err(|e| unreadable(&e))?;
        let reader = SerializedFileReader::new(file).map_err(|e| unreadable(&e))?;
        let header = reader
            .metadata()
            .file_metadata()
            .schema_descr()
            .columns()
            .iter()
            .map(|c| c.name().to_string())
            .collect();
        Ok(Table {
            path,
            partial: false,
            header,
            rows: Rows::Parquet(reader.into_iter()),
        })
    }

    /// Where the `index`-th row is, for a message: a CSV's line (the header
    /// is line 1), a Parquet file's row (from 1).
    pub fn place(&self, index: usize) -> String {
        match self.rows {
            Rows::Csv(_) => format!("line {}", index + 2),
            Rows::Parquet(_) => format!("row {}", index + 1),
        }
    }
}

/// A Parquet cell as the CSV would hold it; a null is an empty cell.
fn text(field: &Field) -> String {
    match field {
        Field::Null => String::new(),
        Field::Str(s) => s.clone(),
        Field::Double(x) => x.to_string(),
        Field::Float(x) => x.to_string(),
        Field::Long(x) => x.to_string(),
        Field::Int(x) => x.to_string(),
        Field::Bool(b) => b.to_string(),
        other => other.to_string(),
    }
}

impl Iterator for Table {
    /// A row's cells, or why it cannot be read.
    type Item = Result<Vec<String>, String>;

    fn next(&mut self) -> Option<Self::Item> {
        match &mut self.rows {
            Rows::Csv(records) => records.next().map(|r| {
                r.map(|r| r.iter().map(String::from).collect())
                    .map_err(|e| e.to_string())
            }),
            Rows::Parquet(rows) => rows.next().map(|r| {
                r.map(|row| row.get_column_iter().map(|(_, f)| text(f)).collect())
                    .map_err(|e| e.to_string())
            }),
        }
    }
}
