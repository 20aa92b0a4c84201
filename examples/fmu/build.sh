#!/usr/bin/env bash
# Builds the FMUs the examples in examples/fmu/ use, into OUT_DIR (default
# examples/fmu/models, where the scenarios' `path = "models/..."` points):
#   Linear4.fmu        the 4-state linear plant, FMI 2.0 Co-Simulation (C)
#   BouncingBall.fmu   a bouncing ball, FMI 2.0 Model Exchange (C)
#   PiController.fmu   a PI controller written in Python, exported by pythonfmu
# They are built from the sources of netloop's FMU tests (tests/fmu/, see
# tests/fmu/build.sh): a C compiler and a Python with fmpy and pythonfmu are
# needed (scripts/setup.sh installs them into .venv; NETLOOP_PYTHON chooses
# another). FMUs are build output: never commit them.
#
#   examples/fmu/build.sh
#   netloop run examples/fmu/linear4_cosim_p2p.toml
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/models}
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bash "$here/../../tests/fmu/build.sh" "$work"
for fmu in Linear4 BouncingBall PiController; do
    cp "$work/$fmu.fmu" "$out/$fmu.fmu"
done
echo "built Linear4.fmu, BouncingBall.fmu and PiController.fmu in $out"
