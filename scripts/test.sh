#!/usr/bin/env bash
# Runs every test: set-up (installs and builds what is missing), then the Rust
# workspace tests (unit, property, end-to-end against the real ns-3 server and
# the real CLI) and the C++ tests of ns3-scenarios/.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
started=$(date +%s)
cargo test --release --workspace --locked
scripts/build-ns3.sh test
# netloop sweep --slurm against a real single-node SLURM (installs slurm-wlm and munge).
tests/slurm/slurm_test.sh
echo "test.sh: all tests passed in $(( $(date +%s) - started ))s (after set-up)"
