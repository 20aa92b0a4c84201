//! Parquet outputs (`--format parquet`, `sweep.parquet`) and the sweep's
//! command-line overrides (`--set`, `--replications`), read back with the
//! parquet crate's own reader and compared with the CSVs.

use std::path::Path;

use parquet::basic::Type as PhysicalType;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use crate::support::{
    assert_exit, column, read_csv, run, run_sweep, servo_example, stderr, summary, write_sweep,
};

fn reader(path: &Path) -> SerializedFileReader<std::fs::File> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    SerializedFileReader::new(file).unwrap()
}

/// Column names and physical types of a Parquet file.
fn columns(r: &SerializedFileReader<std::fs::File>) -> Vec<(String, PhysicalType)> {
    let schema = r.metadata().file_metadata().schema_descr();
    (0..schema.num_columns())
        .map(|i| {
            (
                schema.column(i).name().to_string(),
                schema.column(i).physical_type(),
            )
        })
        .collect()
}

/// Every cell as text, the way the CSV writer would print it (nulls empty).
fn rows_as_text(r: &SerializedFileReader<std::fs::File>) -> Vec<Vec<String>> {
    r.get_row_iter(None)
        .unwrap()
        .map(|row| {
            row.unwrap()
                .get_column_iter()
                .map(|(_, f)| match f {
                    Field::Null => String::new(),
                    Field::Double(x) => x.to_string(),
                    Field::Long(i) => i.to_string(),
                    Field::Bool(b) => b.to_string(),
                    Field::Str(s) => s.clone(),
                    other => panic!("unexpected field {other:?}"),
                })
                .collect()
        })
        .collect()
}

fn run_servo(out: &Path, extra: &[&str]) {
    let servo = servo_example();
    let mut args = vec![
        "run",
        servo.to_str().unwrap(),
        "--network",
        "builtin",
        "--set",
        "duration=300ms",
        "--set",
        "network.builtin.loss={ kind = \"bernoulli\", p = 0.2 }",
        "--out",
        out.to_str().unwrap(),
        "-q",
    ];
    args.extend(extra);
    let o = run(&args);
    assert_exit(&o, 0);
}

#[test]
fn a_parquet_run_holds_exactly_the_values_of_the_csv_run() {
    let dir = tempfile::tempdir().unwrap();
    let (csv_dir, pq_dir, default_dir) = (
        dir.path().join("csv"),
        dir.path().join("pq"),
        dir.path().join("d"),
    );
    run_servo(&csv_dir, &["--format", "csv"]);
    run_servo(&default_dir, &[]);
    run_servo(&pq_dir, &["--format", "parquet"]);
    for table in ["timeseries", "packets"] {
        // CSV stays the default, byte for byte.
        let csv_path = csv_dir.join(format!("{table}.csv"));
        assert_eq!(
            std::fs::read(&csv_path).unwrap(),
            std::fs::read(default_dir.join(format!("{table}.csv"))).unwrap()
        );
        assert!(!pq_dir.join(format!("{table}.csv")).exists());
        let r = reader(&pq_dir.join(format!("{table}.parquet")));
        let (header, csv_rows) = read_csv(&csv_path);
        let cols = columns(&r);
        assert_eq!(
            cols.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
            header
        );
        assert_eq!(
            r.metadata().file_metadata().num_rows() as usize,
            csv_rows.len()
        );
        assert!(!csv_rows.is_empty());
        // Numbers compare as numbers (the CSV writes 1.0, Rust prints 1), bit for bit.
        let parquet_rows = rows_as_text(&r);
        for (line, (p, c)) in parquet_rows.iter().zip(&csv_rows).enumerate() {
            for (k, (p, c)) in p.iter().zip(c).enumerate() {
                let same = match (p.parse::<f64>(), c.parse::<f64>()) {
                    (Ok(a), Ok(b)) => a.to_bits() == b.to_bits() || (a.is_nan() && b.is_nan()),
                    _ => p == c,
                };
                assert!(
                    same,
                    "{table} row {line} column {}: parquet {p}, csv {c}",
                    header[k]
                );
            }
        }
        // Numbers are stored as numbers.
        let numeric = cols
            .iter()
            .filter(|(_, t)| matches!(t, PhysicalType::DOUBLE | PhysicalType::INT64))
            .count();
        assert!(numeric >= cols.len() / 2, "{table}: {cols:?}");
    }
    assert_eq!(
        columns(&reader(&pq_dir.join("timeseries.parquet")))[0].1,
        PhysicalType::DOUBLE
    );
    // The format is recorded in the scenario, and only when it is not the default.
    assert_eq!(summary(&pq_dir)["scenario"]["output"]["format"], "parquet");
    assert!(summary(&csv_dir)["scenario"].get("output").is_none());
}

const GRID: &str = r#"
network = "builtin"
replications = 3

[set]
duration = "200ms"

[[grid]]
key = "network.builtin.delay.value"
values = ["10ms", "2ms"]

[[zip]]
keys = ["loops[0].sensor.period", "loops[0].controller.period"]
values = [["10ms", "10ms"]]
"#;

#[test]
fn sweep_parquet_is_long_form_with_si_parameters_and_every_metric() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(dir.path(), "grid.toml", GRID);
    let out = dir.path().join("out");
    let o = run_sweep(&sweep, &out, &["--replications", "2", "-q"]);
    assert_exit(&o, 0);
    let (header, runs) = read_csv(&out.join("sweep.csv"));
    assert_eq!(
        runs.len(),
        4,
        "2 delays x 2 replications (--replications 2)"
    );
    let metrics = &header[column(&header, "error") + 1..column(&header, "wall_s")];
    let r = reader(&out.join("sweep.parquet"));
    let cols = columns(&r);
    let names: Vec<&str> = cols.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "run_dir",
            "point",
            "network.builtin.delay.value_s",
            "loops[0].sensor.period_s",
            "loops[0].controller.period_s",
            "replication",
            "run",
            "seed",
            "status",
            "error",
            "wall_s",
            "metric",
            "value"
        ]
    );
    assert_eq!(cols[2].1, PhysicalType::DOUBLE);
    assert_eq!(cols[5].1, PhysicalType::INT64);
    assert_eq!(
        r.metadata().file_metadata().num_rows() as usize,
        runs.len() * metrics.len()
    );
    // Each value is the run's figure in sweep.csv; delays are in seconds.
    let rows = rows_as_text(&r);
    for row in &rows {
        let run = runs.iter().find(|r| r[0] == row[0]).unwrap();
        let metric = column(&header, &row[11]);
        assert_eq!(row[12], run[metric], "{} {}", row[0], row[11]);
        let delay = &run[column(&header, "network.builtin.delay.value")];
        let seconds = if delay == "10ms" { "0.01" } else { "0.002" };
        assert_eq!(row[2], seconds);
        assert_eq!(row[8], "complete");
    }
}

#[test]
fn sweep_set_overrides_the_file_and_pins_a_grid_axis() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(dir.path(), "grid.toml", GRID);
    let out = dir.path().join("out");
    let o = run_sweep(
        &sweep,
        &out,
        &[
            "--set",
            "duration=100ms",
            "--set",
            "network.builtin.delay.value=5ms",
            "--replications",
            "1",
            "-q",
        ],
    );
    assert_exit(&o, 0);
    let (header, runs) = read_csv(&out.join("sweep.csv"));
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0][column(&header, "network.builtin.delay.value")],
        "5ms"
    );
    let s = summary(&out.join(&runs[0][0]));
    assert_eq!(s["scenario"]["duration"], "100ms");
    assert_eq!(s["reached_s"], 0.1);
    assert_eq!(s["scenario"]["network"]["builtin"]["delay"]["value"], "5ms");

    // A key of a zip group cannot be pinned alone; a bad count is bad input.
    for bad in [
        vec!["--set", "loops[0].sensor.period=20ms"],
        vec!["--replications", "0"],
        vec!["--set", "duration"],
    ] {
        let mut args = vec!["sweep", sweep.to_str().unwrap(), "--dry-run"];
        args.extend(bad.iter().copied());
        let o = run(&args);
        assert_exit(&o, 2);
        assert!(stderr(&o).contains(bad[0]), "{}", stderr(&o));
    }
}
