//! The docs stay true: every key the examples use is documented, the files
//! the tutorial names exist and work, and the sweep examples check.

use std::collections::BTreeSet;

use crate::support::{assert_exit, column, read_csv, root, run, stdout};

/// Every key name (last segment) in a TOML tree.
fn key_names(v: &toml::Value, out: &mut BTreeSet<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                out.insert(k.clone());
                key_names(v, out);
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|v| key_names(v, out)),
        _ => {}
    }
}

fn examples() -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    files.sort();
    files
}

#[test]
fn every_key_the_examples_use_is_documented() {
    let scenario_doc = std::fs::read_to_string(root().join("docs/scenario.md")).unwrap();
    let sweep_doc = std::fs::read_to_string(root().join("docs/sweeps.md")).unwrap();
    for path in examples() {
        let value: toml::Value = toml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let is_sweep = value.get("scenario").is_some();
        let mut keys = BTreeSet::new();
        if is_sweep {
            for k in value.as_table().unwrap().keys() {
                keys.insert(k.clone());
            }
        } else {
            key_names(&value, &mut keys);
        }
        let doc = if is_sweep { &sweep_doc } else { &scenario_doc };
        for k in keys {
            // A key (`period`) or a table (`[loops.actuator]`, `[[loops]]`).
            let documented =
                doc.contains(&format!("`{k}`")) || doc.contains(&format!("{k}]`")) || doc.contains(&format!("{k}]]`"));
            assert!(documented, "{}: key `{k}` is not documented", path.display());
        }
    }
}

#[test]
fn every_example_scenario_checks_and_every_sweep_plans() {
    for path in examples() {
        let text = std::fs::read_to_string(&path).unwrap();
        let file = path.to_str().unwrap();
        let o = if text.contains("\nscenario = ") || text.starts_with("scenario = ") {
            run(&["sweep", file, "--dry-run", "--out", "/nonexistent/never-written"])
        } else {
            run(&["check", file])
        };
        assert_exit(&o, 0);
        assert!(!stdout(&o).is_empty());
    }
}

#[test]
fn the_tutorial_names_only_existing_examples_and_its_sweep_runs() {
    let tutorial = std::fs::read_to_string(root().join("docs/tutorial.md")).unwrap();
    let mut named = BTreeSet::new();
    for (i, _) in tutorial.match_indices("examples/") {
        let rest = &tutorial[i..];
        let end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || "/_.-".contains(c))).unwrap_or(rest.len());
        named.insert(rest[..end].trim_end_matches('.').to_string());
    }
    assert!(named.len() >= 3, "{named:?}");
    for n in &named {
        assert!(root().join(n).exists(), "the tutorial names {n}, which does not exist");
    }
    // The tutorial's sweep, as it says: 24 runs, all complete.
    let dir = tempfile::tempdir().unwrap();
    let sweep = root().join("examples/sweep_delay_gain.toml");
    let o = run(&["sweep", sweep.to_str().unwrap(), "--out", dir.path().to_str().unwrap(), "--plot", "-q"]);
    assert_exit(&o, 0);
    let (header, rows) = read_csv(&dir.path().join("sweep.csv"));
    assert_eq!(rows.len(), 24);
    assert!(rows.iter().all(|r| r[column(&header, "status")] == "complete"));
    assert!(dir.path().join("plots/servo.theta.iae.png").exists());
}
