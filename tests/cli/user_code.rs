//! `netloop check` and `sweep --dry-run` run no program a scenario names
//! (`[network.server] binary`) unless asked with `--with-server`, and say
//! when they did not. The "program" here is a script that leaves a file
//! behind when it runs, so the tests see whether it ran.

use std::path::{Path, PathBuf};

use crate::support::*;

/// A scenario over `kind` whose server is a script that creates `ran` and
/// exits; returns the scenario path and the marker path.
fn scenario_with_program(dir: &Path, kind: &str) -> (PathBuf, PathBuf) {
    let marker = dir.join("ran");
    let script = dir.join("program.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\nexit 3\n", marker.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let base = std::fs::read_to_string(servo_example()).unwrap();
    // Keep the example's loop; replace its network by one served by the script.
    let loops = &base[base.find("[[loops]]").unwrap()..];
    let text = format!(
        "duration = \"1s\"\nstep = \"1ms\"\n[sync]\nscheme = \"master_slave\"\nperiod = \"10ms\"\n[network]\nbackend = \"ns3\"\n[network.ns3]\nkind = \"{kind}\"\nnodes = 2\n\
         [network.server]\nbinary = \"program.sh\"\nconnect_timeout = \"5s\"\n{loops}"
    );
    let scenario = dir.join("scenario.toml");
    std::fs::write(&scenario, text).unwrap();
    (scenario, marker)
}

#[test]
fn check_does_not_run_the_scenarios_program_unless_asked() {
    for kind in ["custom", "p2p"] {
        let dir = tempfile::tempdir().unwrap();
        let (scenario, marker) = scenario_with_program(dir.path(), kind);
        let out = run(&["check", scenario.to_str().unwrap()]);
        assert_exit(&out, 0);
        assert!(!marker.exists(), "{kind}: check ran the scenario's program");
        assert!(
            stderr(&out).contains("was not run") && stderr(&out).contains("--with-server"),
            "{kind}: {}",
            stderr(&out)
        );

        let out = run(&["check", "--with-server", scenario.to_str().unwrap()]);
        assert!(
            marker.exists(),
            "{kind}: check --with-server did not run the program"
        );
        if kind == "custom" {
            // Started for real, the script is no server: a bad network, named at its key.
            assert_exit(&out, 2);
            assert!(
                stderr(&out).contains("network.server.binary"),
                "{kind}: {}",
                stderr(&out)
            );
        } else {
            // Asked `--check`, it fails: a server whose check fails fails `check`.
            assert_exit(&out, 2);
            assert!(
                stderr(&out).contains("--check failed"),
                "{kind}: {}",
                stderr(&out)
            );
        }
    }
}

#[test]
fn a_dry_run_sweep_does_not_run_the_scenarios_program_unless_asked() {
    let dir = tempfile::tempdir().unwrap();
    let (_, marker) = scenario_with_program(dir.path(), "custom");
    let sweep = dir.path().join("sweep.toml");
    std::fs::write(&sweep, "scenario = \"scenario.toml\"\n[[grid]]\nkey = \"loops[0].controller.kp\"\nvalues = [10.0, 20.0]\n").unwrap();
    let out = run(&[
        "sweep",
        sweep.to_str().unwrap(),
        "--dry-run",
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    assert_exit(&out, 0);
    assert!(
        !marker.exists(),
        "sweep --dry-run ran the scenario's program"
    );
    assert!(stderr(&out).contains("was not run"), "{}", stderr(&out));

    let out = run(&[
        "sweep",
        sweep.to_str().unwrap(),
        "--dry-run",
        "--with-server",
        "--out",
        dir.path().join("out").to_str().unwrap(),
    ]);
    assert!(
        marker.exists(),
        "sweep --dry-run --with-server did not run the program"
    );
    assert_exit(&out, 2);
}
