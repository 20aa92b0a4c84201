//! `--shard I/N`: shards that share a sweep directory run every run once,
//! and `--aggregate` over them writes what one local sweep writes;
//! `--status` reads the same directory.

use std::collections::BTreeSet;
use std::path::Path;

use crate::support::{
    assert_exit, assert_exit_saying, netloop, read_csv, stderr, stdout, write_sweep,
};

const SWEEP: &str = r#"
network = "builtin"
replications = 2
[set]
duration = "1s"
"loops[0].sensor.noise_std" = 0.01
[[grid]]
key = "loops[0].controller.kp"
values = [10.0, 15.0, 20.0]
"#;

/// Run directories holding a complete summary.
fn complete(out: &Path) -> BTreeSet<String> {
    let mut done = BTreeSet::new();
    for e in std::fs::read_dir(out.join("runs")).into_iter().flatten() {
        let dir = e.unwrap().path();
        let Ok(text) = std::fs::read_to_string(dir.join("summary.json")) else {
            continue;
        };
        if serde_json::from_str::<serde_json::Value>(&text).unwrap()["complete"] == true {
            done.insert(dir.file_name().unwrap().to_string_lossy().into_owned());
        }
    }
    done
}

/// `sweep.csv` without its wall-clock column, the only one that differs
/// between two runs of the same sweep.
fn runs_table(out: &Path) -> Vec<Vec<String>> {
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    assert_eq!(header.last().map(String::as_str), Some("wall_s"));
    let mut table = vec![header[..header.len() - 1].to_vec()];
    table.extend(rows.into_iter().map(|r| r[..r.len() - 1].to_vec()));
    table
}

fn same_file(a: &Path, b: &Path) {
    let (x, y) = (std::fs::read(a).unwrap(), std::fs::read(b).unwrap());
    assert!(x == y, "{} and {} differ", a.display(), b.display());
}

#[test]
fn shards_run_every_run_once_and_aggregate_like_one_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(dir.path(), "shards.toml", SWEEP);
    let sweep = sweep.to_str().unwrap();
    let local = dir.path().join("local");
    let o = netloop()
        .args([
            "sweep",
            sweep,
            "--out",
            local.to_str().unwrap(),
            "--jobs",
            "2",
            "-q",
        ])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    let all = complete(&local);
    assert_eq!(all.len(), 6);

    let sharded = dir.path().join("sharded");
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(local.join("sweep.json")).unwrap()).unwrap();
    let hashes: Vec<String> = plan["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["hash"].as_str().unwrap().to_string())
        .collect();
    let mut seen = BTreeSet::new();
    for index in 1..=4 {
        let before = complete(&sharded);
        let shard = format!("{index}/4");
        let o = netloop()
            .args([
                "sweep",
                sweep,
                "--out",
                sharded.to_str().unwrap(),
                "--shard",
                &shard,
            ])
            .output()
            .unwrap();
        assert_exit(&o, 0);
        let new: BTreeSet<String> = complete(&sharded).difference(&before).cloned().collect();
        // Shard I of 4 runs plan runs I-1, I+3, ...: nothing else, nothing twice.
        let expected: BTreeSet<String> = hashes
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 4 == index - 1)
            .map(|(_, h)| h.clone())
            .collect();
        assert_eq!(new, expected, "shard {shard}");
        assert!(seen.is_disjoint(&new));
        seen.extend(new);
        assert!(
            stderr(&o).contains(&format!(
                "shard {shard}: {} of {} runs complete",
                expected.len(),
                expected.len()
            )),
            "{}",
            stderr(&o)
        );
        // A shard writes no aggregates: they wait for every shard.
        assert!(!sharded.join("sweep_summary.csv").exists());
    }
    assert_eq!(seen, all);

    let o = netloop()
        .args(["sweep", sharded.to_str().unwrap(), "--aggregate", "-q"])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    same_file(
        &local.join("sweep_summary.csv"),
        &sharded.join("sweep_summary.csv"),
    );
    assert_eq!(runs_table(&local), runs_table(&sharded));
    for hash in &all {
        for file in [
            "timeseries.csv",
            "packets.csv",
            "summary.json",
            "outcome.json",
        ] {
            same_file(
                &local.join("runs").join(hash).join(file),
                &sharded.join("runs").join(hash).join(file),
            );
        }
    }
}

#[test]
fn status_names_every_state_and_aggregate_marks_what_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(dir.path(), "status.toml", SWEEP);
    let sweep = sweep.to_str().unwrap();
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    assert_exit(
        &netloop()
            .args(["sweep", sweep, "--out", out_s, "--shard", "1/3", "-q"])
            .output()
            .unwrap(),
        0,
    );
    // A run that died with its node: a directory with partial files only.
    let plan: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("sweep.json")).unwrap()).unwrap();
    let died = plan["runs"][1]["hash"].as_str().unwrap().to_string();
    std::fs::create_dir_all(out.join("runs").join(&died)).unwrap();
    std::fs::write(
        out.join("runs").join(&died).join("timeseries.csv.partial"),
        "time_s\n",
    )
    .unwrap();

    let o = netloop()
        .args(["sweep", out_s, "--status"])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    let text = stdout(&o);
    assert!(
        text.contains("sweep ") && text.contains(": 6 runs"),
        "{text}"
    );
    for (state, n) in [("complete", 2), ("incomplete", 1), ("pending", 3)] {
        let line = text
            .lines()
            .find(|l| l.trim_start().starts_with(state))
            .unwrap_or_else(|| panic!("no {state} in\n{text}"));
        assert_eq!(
            line.split_whitespace().last(),
            Some(n.to_string().as_str()),
            "{text}"
        );
    }
    assert!(text.contains(&died), "{text}");

    // The same by the sweep file and --out.
    let o = netloop()
        .args(["sweep", sweep, "--out", out_s, "--status"])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    assert_eq!(stdout(&o), text);

    let o = netloop()
        .args(["sweep", out_s, "--aggregate", "-q"])
        .output()
        .unwrap();
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&out.join("sweep.csv"));
    let status = header.iter().position(|h| h == "status").unwrap();
    let statuses: Vec<&str> = rows.iter().map(|r| r[status].as_str()).collect();
    assert_eq!(
        statuses,
        [
            "complete",
            "incomplete",
            "not_run",
            "complete",
            "not_run",
            "not_run"
        ]
    );

    // Resuming as shard 2/3 runs the dead run again (it is shard 2's).
    assert_exit(
        &netloop()
            .args([
                "sweep", sweep, "--out", out_s, "--shard", "2/3", "--resume", "-q",
            ])
            .output()
            .unwrap(),
        0,
    );
    assert!(complete(&out).contains(&died));
}

#[test]
fn a_shard_refuses_a_directory_planned_for_another_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = write_sweep(dir.path(), "a.toml", SWEEP);
    let out = dir.path().join("out");
    let out_s = out.to_str().unwrap();
    assert_exit(
        &netloop()
            .args([
                "sweep",
                sweep.to_str().unwrap(),
                "--out",
                out_s,
                "--shard",
                "1/6",
                "-q",
            ])
            .output()
            .unwrap(),
        0,
    );
    let other = write_sweep(dir.path(), "b.toml", &SWEEP.replace("15.0", "16.0"));
    let o = netloop()
        .args([
            "sweep",
            other.to_str().unwrap(),
            "--out",
            out_s,
            "--shard",
            "2/6",
        ])
        .output()
        .unwrap();
    assert_exit_saying(&o, 2, "holds the plan of another sweep");
    for bad in ["0/3", "4/3", "x"] {
        let o = netloop()
            .args([
                "sweep",
                sweep.to_str().unwrap(),
                "--out",
                out_s,
                "--shard",
                bad,
            ])
            .output()
            .unwrap();
        assert_exit(&o, 2);
        assert!(stderr(&o).contains("is not a shard"), "{}", stderr(&o));
    }
}
