//! The FMUs of the FMU tests and examples, built from source during the run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The Python that has fmpy and pythonfmu: `$NETLOOP_PYTHON`, else the
/// repository's `.venv` (scripts/python-env.sh), else `python3`.
pub fn python() -> PathBuf {
    if let Some(p) = std::env::var_os("NETLOOP_PYTHON").filter(|p| !p.is_empty()) {
        return PathBuf::from(p);
    }
    let venv = crate::root().join(".venv/bin/python");
    if venv.is_file() {
        venv
    } else {
        PathBuf::from("python3")
    }
}

/// Runs the build script `script` (relative to the repository root:
/// tests/fmu/build.sh, examples/fmu/build.sh) into `out`; fails the test
/// with the script's output if it fails.
pub fn build(script: &str, out: &Path) {
    let output = Command::new("bash")
        .arg(crate::root().join(script))
        .arg(out)
        .env("NETLOOP_PYTHON", python())
        .output()
        .expect("bash runs");
    assert!(
        output.status.success(),
        "{script} failed (it needs cc and a Python with fmpy and pythonfmu: run \
         scripts/setup.sh or set NETLOOP_PYTHON):\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}
