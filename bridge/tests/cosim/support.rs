//! Scenario building and output reading shared by the co-simulation tests.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use bridge::config::{Resolved, Scenario};
use bridge::run::{run, RunOptions, RunReport};

/// A DC servo (theta/V = 10/(s(s+11))) with a PID, as a `[[loops]]` table.
/// `controller` holds extra controller keys (trigger, period, ...).
pub fn servo_loop(
    name: &str,
    plant_node: u32,
    controller_node: u32,
    controller: &str,
    extra: &str,
) -> String {
    format!(
        r#"
[[loops]]
name = "{name}"
plant_node = {plant_node}
controller_node = {controller_node}
{extra}
[loops.plant]
kind = "dc_servo"
inertia = 0.01
viscous_friction = 0.1
torque_constant = 0.1
back_emf_constant = 0.1
resistance = 1.0
[loops.sensor]
period = "5ms"
noise_std = 0.001
[loops.actuator]
min = -12.0
max = 12.0
[loops.controller]
kind = "pid"
kp = 20.0
ki = 2.0
kd = 0.5
{controller}
[loops.reference]
kind = "step"
at = "50ms"
final = 1.0
"#
    )
}

/// A complete scenario over the builtin channel.
pub fn scenario(header: &str, delay: &str, loops: &str) -> String {
    format!(
        r#"
{header}
[network]
backend = "builtin"
[network.builtin]
delay = {delay}
{loops}
"#
    )
}

pub fn resolve(text: &str) -> Resolved {
    let scenario = Scenario::from_toml(text)
        .unwrap_or_else(|e| panic!("scenario does not parse: {e}\n{text}"));
    scenario
        .resolve()
        .unwrap_or_else(|e| panic!("scenario does not resolve: {e}"))
}

/// Runs a scenario into a fresh temporary directory.
pub fn run_in_tempdir(text: &str) -> (tempfile::TempDir, RunReport) {
    let dir = tempfile::tempdir().unwrap();
    let options = RunOptions {
        out_dir: dir.path().join("run"),
        base_dir: PathBuf::from("."),
        cancel: None,
    };
    let report = run(&resolve(text), &options).unwrap_or_else(|e| panic!("run failed: {e}"));
    (dir, report)
}

pub fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// packets.csv as one map per row, column name to text.
pub fn packet_rows(dir: &Path) -> Vec<BTreeMap<String, String>> {
    csv_rows(std::fs::File::open(dir.join("packets.csv")).unwrap())
}

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

pub fn num(row: &BTreeMap<String, String>, column: &str) -> Option<u64> {
    let text = &row[column];
    (!text.is_empty()).then(|| {
        text.parse()
            .unwrap_or_else(|_| panic!("{column} = {text:?}"))
    })
}

/// One column of timeseries.csv as numbers.
pub fn column(dir: &Path, name: &str) -> Vec<f64> {
    let mut reader = csv::Reader::from_path(dir.join("timeseries.csv")).unwrap();
    let index = reader
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name}"));
    reader
        .records()
        .map(|r| r.unwrap()[index].parse().unwrap())
        .collect()
}
