//! A sweep over a graph scenario (`[[components]]` with a `[network]`):
//! planned through the same loader as `run` and `check`, each run in the
//! directory named by its config hash, and a second `--resume` finds every
//! run complete.

use std::path::Path;

use crate::graph_flows::file;
use crate::support::{column, netloop, read_csv};

/// Writes a sweep file over `scenario` into `dir`.
fn sweep_over(dir: &Path, scenario: &Path, body: &str) -> std::path::PathBuf {
    let path = dir.join("graph_sweep.toml");
    let text = format!("scenario = {:?}\n{body}", scenario.display().to_string());
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn a_sweep_over_a_graph_scenario_runs_every_point_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = sweep_over(
        dir.path(),
        &file("servo_graph.toml"),
        r#"
replications = 2
[set]
duration = "200ms"
[[grid]]
key = "components[2].controller.kp"
values = [10.0, 20.0]
"#,
    );
    let out = dir.path().join("out");
    let args = [
        "sweep",
        sweep.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ];
    let o = netloop().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(rows.len(), 4, "2 points x 2 replications");
    let (status, run_dir) = (column(&header, "status"), column(&header, "run_dir"));
    let mut dirs = std::collections::BTreeSet::new();
    for r in &rows {
        assert_eq!(r[status], "complete", "{r:?}");
        let dir = out.join(&r[run_dir]);
        let summary: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap())
                .unwrap();
        // The run records the hash its directory is named by.
        assert_eq!(
            summary["config_hash"].as_str(),
            dir.file_name().and_then(|n| n.to_str()),
            "{summary}"
        );
        assert_eq!(summary["complete"], true);
        dirs.insert(r[run_dir].clone());
    }
    assert_eq!(dirs.len(), 4, "every run has a directory of its own");

    let o = netloop().args(args).arg("--resume").output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("resume: 4 of 4 runs already complete"),
        "{err}"
    );
}

#[test]
fn a_sweep_over_a_graph_scenario_on_one_node_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = crate::support::root().join("examples/cascade_servo_graph.toml");
    let sweep = sweep_over(
        dir.path(),
        &scenario,
        "[[grid]]\nkey = \"duration\"\nvalues = [\"1s\", \"2s\"]\n",
    );
    let out = dir.path().join("out");
    let o = netloop()
        .args([
            "sweep",
            sweep.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("has no [network]"), "{err}");
}
