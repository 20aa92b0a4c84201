//! Every file in examples/ runs end to end through the real binary: the
//! scenarios with a shortened duration, the sweeps as they are (they are
//! short by design).

use std::path::PathBuf;
use std::process::Command;

use crate::support::{assert_success, read_csv};

fn examples() -> Vec<PathBuf> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

fn is_sweep(path: &std::path::Path) -> bool {
    path.file_name()
        .unwrap()
        .to_string_lossy()
        .starts_with("sweep_")
}

#[test]
fn every_example_scenario_runs() {
    let out = tempfile::tempdir().unwrap();
    // Graph scenarios ([[components]]) on one node have no network, so no
    // packets and no summary.json: tests/cli/graph.rs runs them. Those with
    // a [network] run here.
    let scenarios: Vec<PathBuf> = examples()
        .into_iter()
        .filter(|p| !is_sweep(p))
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            !text.contains("\n[[components]]") || text.contains("\n[network]")
        })
        .collect();
    assert!(scenarios.len() >= 4, "{scenarios:?}");
    for path in scenarios {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = out.path().join(&name);
        let result = Command::new(env!("CARGO_BIN_EXE_netloop"))
            .args(["-q", "run"])
            .arg(&path)
            .args(["--set", "duration=1s", "--out"])
            .arg(&dir)
            .output()
            .unwrap();
        assert_success(&result, &name);
        let summary: serde_json::Value =
            serde_json::from_slice(&std::fs::read(dir.join("summary.json")).unwrap()).unwrap();
        assert_eq!(summary["complete"], true, "{name}");
        assert_eq!(summary["reached_ns"], 1_000_000_000u64, "{name}");
        assert!(
            summary["totals"]["accepted"].as_u64().unwrap() > 0,
            "{name}: no packet made it"
        );
    }
}

#[test]
fn every_example_sweep_runs() {
    let out = tempfile::tempdir().unwrap();
    let sweeps: Vec<PathBuf> = examples().into_iter().filter(|p| is_sweep(p)).collect();
    assert!(!sweeps.is_empty());
    for path in sweeps {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let dir = out.path().join(&name);
        let result = Command::new(env!("CARGO_BIN_EXE_netloop"))
            .args(["-q", "sweep", "--jobs", "2"])
            .arg(&path)
            .arg("--out")
            .arg(&dir)
            .output()
            .unwrap();
        assert_success(&result, &name);
        let rows = read_csv(&dir.join("sweep.csv")).1.len();
        assert!(rows >= 4, "{name}: {rows} runs");
    }
}
