#!/usr/bin/env bash
# Runs every test: set-up (installs and builds what is missing), the formatting
# check (scripts/check-format.sh: rustfmt.toml, ns3-scenarios/.clang-format), then the Rust
# workspace tests (unit, property, end-to-end against the real ns-3 server and
# the real CLI), the Python package's tests (pytest), the C++ tests of ns3-scenarios/ and a short run of every fuzz
# target (scripts/fuzz.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
started=$(date +%s)
scripts/check-format.sh
# The FMU tests (tests/cli/fmu.rs) build their FMUs with the Python tools
# setup.sh put into .venv; they run inside the workspace tests.
export NETLOOP_PYTHON="${NETLOOP_PYTHON:-$PWD/.venv/bin/python}"
cargo test --release --workspace --locked
scripts/build-ns3.sh test
# The Python package (python/) against real runs and sweeps of the release binary.
.venv/bin/python -m pytest -q python/tests
# Every fuzz target briefly (8 s each), so that they keep building and running;
# scripts/fuzz.sh SECONDS for a real campaign (docs/robustness.md).
scripts/fuzz.sh "${NETLOOP_FUZZ_SECONDS:-8}"
# netloop sweep --slurm against a real single-node SLURM (installs slurm-wlm and munge).
tests/slurm/slurm_test.sh
echo "test.sh: all tests passed in $(( $(date +%s) - started ))s (after set-up)"
