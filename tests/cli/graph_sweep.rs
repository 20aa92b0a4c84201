//! A sweep over a graph scenario (`[[components]]` with a `[network]`):
//! planned through the same loader as `run` and `check`, each run in the
//! directory named by its config hash, and a second `--resume` finds every
//! run complete.

use crate::graph_flows::file;
use crate::support::{
    assert_exit, assert_resumes, complete_run_dirs, netloop, sweep_args, write_sweep_over,
};

#[test]
fn a_sweep_over_a_graph_scenario_runs_every_point_and_resumes() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep_over(
        dir.path(),
        "graph_sweep.toml",
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
    let args = sweep_args(&sweep, &out);
    let o = netloop().args(&args).output().unwrap();
    assert_exit(&o, 0);
    let (dirs, rows) = complete_run_dirs(&out);
    assert_eq!(rows, 4, "2 points x 2 replications");
    assert_eq!(
        dirs.len(),
        4,
        "every run completes, in a directory of its own"
    );
    for name in &dirs {
        let dir = out.join(name);
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
    }

    assert_resumes(&args, 4, 4);
}

#[test]
fn a_sweep_over_a_graph_scenario_on_one_node_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let scenario = crate::support::root().join("examples/cascade_servo_graph.toml");
    let sweep = write_sweep_over(
        dir.path(),
        "graph_sweep.toml",
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
