#!/usr/bin/env bash
# Builds the FMUs of netloop's FMU tests into OUT_DIR:
#   Linear4.fmu        the 4-state linear plant, FMI 2.0 Co-Simulation, C (linear4_fmi2.c)
#   Linear4v3.fmu      the same plant, FMI 3.0 Co-Simulation, C (linear4_fmi3.c)
#   NoLinux.fmu        Linear4 with a Windows binary only
#   BrokenXml.fmu      Linear4 with a truncated modelDescription.xml
#   MissingStart.fmu   Linear4 whose parameter k1 has no start value
#   BouncingBall.fmu   a bouncing ball with a state and a time event, FMI 2.0 Model Exchange, C
#   BouncingBall3.fmu  the same ball, FMI 3.0 Model Exchange, C (bouncing_ball_fmi3.c)
#   PiController.fmu   a PI controller written in Python, exported by pythonfmu
#   PiState.fmu        the same PI controller in C, FMI 2.0 Co-Simulation with canGetAndSetFMUstate
# The FMI headers come from FMPy's package (fmpy/c-code); the compiler is cc.
# Python: $NETLOOP_PYTHON, else the repository's .venv (scripts/setup.sh), else python3.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: tests/fmu/build.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
python=${NETLOOP_PYTHON:-}
if [ -z "$python" ]; then
    if [ -x "$here/../../.venv/bin/python" ]; then python="$here/../../.venv/bin/python"; else python=python3; fi
fi
# A relative interpreter path (NETLOOP_PYTHON=.venv/bin/python) made absolute,
# since package() runs it from inside the staging folder. Not `realpath`: a
# venv's python is a symlink whose target would lose the venv.
case $python in
    */*) python="$(cd "$(dirname "$python")" && pwd)/$(basename "$python")" ;;
esac
headers=$("$python" -c 'import fmpy, os; print(os.path.join(os.path.dirname(fmpy.__file__), "c-code"))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# package NAME STAGING: zips STAGING's contents into OUT_DIR/NAME.fmu
package() {
    rm -f "$out/$1.fmu"
    (cd "$2" && "$python" -m zipfile -c "$out/$1.fmu" $(ls))
}

# c_fmu NAME SOURCE XML PLATFORM [MODEL_IDENTIFIER (default Linear4)]
c_fmu() {
    local name=$1 source=$2 xml=$3 platform=$4 identifier=${5:-Linear4} stage="$work/$1"
    mkdir -p "$stage/binaries/$platform"
    local sources=("$here/$source")
    case $source in
    *fmi3*)
        # The source preprocessed, so that what fmi3_common.h's macros define counts as defined.
        cc -E -P -std=c99 -I"$headers" -I"$here" "$here/$source" > "$work/$1-expanded.c"
        "$python" "$here/fmi3_stubs.py" "$headers/fmi3FunctionTypes.h" "$work/$1-expanded.c" > "$work/$1-stubs.c"
        sources+=("$work/$1-stubs.c")
        ;;
    esac
    cc -shared -fPIC -O2 -std=c99 -Wall -Werror -I"$headers" -I"$here" \
        -o "$stage/binaries/$platform/$identifier.so" "${sources[@]}"
    cp "$here/$xml" "$stage/modelDescription.xml"
}

c_fmu Linear4 linear4_fmi2.c linear4_fmi2.xml linux64
package Linear4 "$work/Linear4"

c_fmu Linear4v3 linear4_fmi3.c linear4_fmi3.xml x86_64-linux
package Linear4v3 "$work/Linear4v3"

c_fmu NoLinux linear4_fmi2.c linear4_fmi2.xml win64
mv "$work/NoLinux/binaries/win64/Linear4.so" "$work/NoLinux/binaries/win64/Linear4.dll"
package NoLinux "$work/NoLinux"

c_fmu BrokenXml linear4_fmi2.c linear4_fmi2.xml linux64
head -c 600 "$here/linear4_fmi2.xml" > "$work/BrokenXml/modelDescription.xml"
package BrokenXml "$work/BrokenXml"

c_fmu MissingStart linear4_fmi2.c linear4_fmi2.xml linux64
sed -e 's|name="k1" valueReference="3" causality="parameter" variability="fixed" initial="exact"><Real start="4"/>|name="k1" valueReference="3" causality="parameter" variability="fixed"><Real/>|' \
    "$here/linear4_fmi2.xml" > "$work/MissingStart/modelDescription.xml"
grep -q 'name="k1" valueReference="3" causality="parameter" variability="fixed"><Real/>' "$work/MissingStart/modelDescription.xml"
package MissingStart "$work/MissingStart"

c_fmu BouncingBall bouncing_ball_fmi2.c bouncing_ball_fmi2.xml linux64 BouncingBall
package BouncingBall "$work/BouncingBall"

c_fmu BouncingBall3 bouncing_ball_fmi3.c bouncing_ball_fmi3.xml x86_64-linux BouncingBall3
package BouncingBall3 "$work/BouncingBall3"

c_fmu PiState pi_state_fmi2.c pi_state_fmi2.xml linux64 PiState
package PiState "$work/PiState"

# pythonfmu writes NAME.fmu into --dest.
(cd "$work" && "$python" -m pythonfmu build -f "$here/pi_controller.py" --dest "$out" --no-external-tool >/dev/null)
