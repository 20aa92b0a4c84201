//! What the co-simulation benchmarks share: whole runs timed as a user
//! starts them (server start-up included, outputs written), ns-3 alone
//! (`netloop-server --standalone`) sending the same traffic from its own
//! schedule, and rounds that interleave the two on a shared, noisy machine,
//! so that each ratio is a median of one round's ratios.

// Each bench binary uses its own part of this module.
#![allow(dead_code)]

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use bridge::config::{Resolved, Scenario};
use bridge::ns3::default_server_path;
use bridge::run::{run, RunOptions, RunReport};

/// The median (the upper one of an even count); sorts `values`.
pub fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// An example of the repository (`examples/<file>`), parsed.
pub fn example(file: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples")
        .join(file);
    Scenario::from_toml(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Wall seconds of one whole run into `out`, and its report.
pub fn timed_run(resolved: &Resolved, out: &Path) -> (f64, RunReport) {
    let options = RunOptions {
        out_dir: out.to_path_buf(),
        ..Default::default()
    };
    let started = Instant::now();
    let report = run(resolved, &options).expect("co-simulation runs");
    (started.elapsed().as_secs_f64(), report)
}

/// Wall seconds of ns-3 alone, `netloop-server` with `args`, which must
/// succeed; and what it printed.
pub fn standalone<S: AsRef<OsStr>>(args: impl IntoIterator<Item = S>) -> (f64, String) {
    let started = Instant::now();
    let output = Command::new(default_server_path())
        .args(args)
        .output()
        .expect("start netloop-server (scripts/build-ns3.sh builds it)");
    let wall = started.elapsed().as_secs_f64();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    (wall, String::from_utf8_lossy(&output.stdout).into_owned())
}

/// ns-3 alone with the traffic of examples/dc_servo_p2p.toml for 60 s: a
/// p2p link (1 Mbps, 2 ms), the uplink every 10 ms from 0, the downlink every
/// 10 ms from 0 or from `downlink_from`; wall seconds and what it printed.
pub fn servo_p2p_alone(downlink_from: Option<&str>) -> (f64, String) {
    let downlink = match downlink_from {
        Some(from) => format!("1>0:9001:64:10ms:{from}"),
        None => "1>0:9001:64:10ms".to_string(),
    };
    standalone([
        "--network=p2p",
        "--nodes=2",
        "--dataRate=1Mbps",
        "--delay=2ms",
        "--standalone",
        &format!("--standaloneFlows=0>1:9000:64:10ms;{downlink}"),
        "--stopTime=60s",
    ])
}

/// Per round: ns-3 alone's wall seconds, each variant's, their ratios; and
/// each variant's sync count (the same in every round).
pub struct Interleaved {
    pub alone: Vec<f64>,
    pub walls: Vec<Vec<f64>>,
    pub ratios: Vec<Vec<f64>>,
    pub syncs: Vec<u64>,
}

/// Runs `alone` once to warm the page cache (ns-3's libraries are large),
/// then `rounds` rounds of `alone` followed by every variant, each run
/// checked by `check`.
pub fn interleave(
    rounds: usize,
    variants: &[&Resolved],
    mut alone: impl FnMut() -> f64,
    check: impl Fn(&RunReport),
) -> Interleaved {
    let dir = tempfile::tempdir().unwrap();
    alone();
    let mut out = Interleaved {
        alone: Vec::new(),
        walls: vec![Vec::new(); variants.len()],
        ratios: vec![Vec::new(); variants.len()],
        syncs: vec![0; variants.len()],
    };
    for _ in 0..rounds {
        let reference = alone();
        out.alone.push(reference);
        for (i, resolved) in variants.iter().enumerate() {
            let (wall, report) = timed_run(resolved, &dir.path().join(i.to_string()));
            check(&report);
            out.walls[i].push(wall);
            out.ratios[i].push(wall / reference);
            out.syncs[i] = report.summary.sync.syncs;
        }
    }
    out
}

impl Interleaved {
    /// Prints the table of ns-3 alone and the variants named `names`
    /// (names `name_width` wide, numbers `width`); returns each variant's
    /// median ratio.
    pub fn print_table(&mut self, names: &[&str], name_width: usize, width: usize) -> Vec<f64> {
        println!(
            "{:<name_width$} {:>width$} {:>8} {:>width$}",
            "variant", "wall_s", "syncs", "ratio"
        );
        println!(
            "{:<name_width$} {:>width$.3} {:>8} {:>width$}",
            "ns-3 alone (--standalone)",
            median(&mut self.alone),
            "-",
            "1"
        );
        let mut medians = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let ratio = median(&mut self.ratios[i]);
            medians.push(ratio);
            println!(
                "{:<name_width$} {:>width$.3} {:>8} {:>width$.3}",
                name,
                median(&mut self.walls[i]),
                self.syncs[i],
                ratio
            );
        }
        medians
    }
}
