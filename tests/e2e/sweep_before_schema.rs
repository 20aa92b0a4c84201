//! A sweep directory written by netloop before network kinds were read from
//! the server's schema (tests/e2e/fixtures/sweep_before_schema: four p2p
//! runs of commit a4977d7, their summaries and timings, without the tables)
//! resumes with nothing to run: every run is found by its config hash.

use std::path::Path;
use std::process::Command;

use crate::support::server_binary;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_sweep_made_before_the_schema_resumes_with_nothing_to_run() {
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e/fixtures/sweep_before_schema");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    copy_dir(&fixture.join("out"), &out);
    let timing = |run: &str| {
        std::fs::read_to_string(out.join("runs").join(run).join("timing.json")).unwrap()
    };
    let runs = [
        "01c1d1e0d977f8bc",
        "09972d1f3ecbce4d",
        "28ce906bc56fc042",
        "f4a77455f3568d56",
    ];
    let before: Vec<String> = runs.iter().map(|r| timing(r)).collect();
    let o = Command::new(env!("CARGO_BIN_EXE_netloop"))
        .env("NETLOOP_NS3_SERVER", server_binary())
        .env("NETLOOP_CACHE_DIR", dir.path().join("cache"))
        .args([
            "sweep",
            fixture.join("sweep.toml").to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--resume",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert!(
        stderr.contains("resume: 4 of 4 runs already complete, 0 to run"),
        "{stderr}"
    );
    let after: Vec<String> = runs.iter().map(|r| timing(r)).collect();
    assert_eq!(before, after, "no run was run again");
    let dirs = std::fs::read_dir(out.join("runs")).unwrap().count();
    assert_eq!(dirs, 4, "no run directory under a new hash");
}
