//! Reading the tables a run or a sweep writes.

use std::collections::BTreeMap;
use std::path::Path;

/// A CSV table as one map per row, column name to text.
pub fn csv_rows(table: impl std::io::Read) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_reader(table);
    let headers = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            headers
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// A CSV file as one map per row, column name to text.
pub fn table_rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    csv_rows(std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
}

/// `packets.csv` of a run directory as one map per row.
pub fn packet_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    table_rows(&dir.join("packets.csv"))
}

/// The `packets.csv` rows of one stream, sorted: those whose `loop` column
/// is `stream` (a graph's flow) or whose `loop:direction` is (a loop's
/// uplink or downlink), from the `number` column on, without the flow id,
/// loop and direction, which name the same stream differently in a loop and
/// in a graph.
pub fn packets(dir: &Path, stream: &str) -> Vec<Vec<String>> {
    let mut rows = packets_in_file_order(dir, stream);
    rows.sort();
    rows
}

/// As [`packets`], in the order of the file.
pub fn packets_in_file_order(dir: &Path, stream: &str) -> Vec<Vec<String>> {
    let (header, rows) = read_csv(&dir.join("packets.csv"));
    let l = column_index(&header, "loop");
    let d = column_index(&header, "direction");
    rows.into_iter()
        .filter(|r| r[l] == stream || format!("{}:{}", r[l], r[d]) == stream)
        .map(|r| r[3..].to_vec())
        .collect()
}

/// An integer cell of a row, `None` when empty.
pub fn num(row: &BTreeMap<String, String>, column: &str) -> Option<u64> {
    let text = &row[column];
    (!text.is_empty()).then(|| {
        text.parse()
            .unwrap_or_else(|_| panic!("{column} = {text:?}"))
    })
}

/// One column of a run's `timeseries.csv` as numbers.
pub fn timeseries_column(dir: &Path, name: &str) -> Vec<f64> {
    timeseries_text(dir, name)
        .iter()
        .map(|v| v.parse().unwrap())
        .collect()
}

/// One column of a run's `timeseries.csv` as written, for bit-exact
/// comparisons.
pub fn timeseries_text(dir: &Path, name: &str) -> Vec<String> {
    let (header, rows) = read_csv(&dir.join("timeseries.csv"));
    let index = column_index(&header, name);
    rows.into_iter().map(|mut r| r.swap_remove(index)).collect()
}

/// A CSV file (`sweep.csv`, ...) as its header and records.
pub fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::Reader::from_path(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|rec| rec.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// Where `name` is in a header; fails the test listing the header.
pub fn column_index(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// A run directory's `summary.json`.
pub fn summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json"))
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    serde_json::from_str(&text).unwrap()
}
