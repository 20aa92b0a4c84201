#!/usr/bin/env bash
# The Python environment of the netloop package (python/): a virtual
# environment in .venv/ (ignored by git) with the package, pandas, pyarrow,
# and for its tests and the worked example pytest, xarray and matplotlib;
# and for the FMU tests (tests/cli/fmu.rs) FMPy, which simulates the test FMUs
# standalone for the cross-check and ships the FMI headers the C test FMUs
# compile against, and pythonfmu, which exports the Python controller.
#
# A venv, not `pip install --break-system-packages`: Debian's Python is
# "externally managed" (PEP 668) and packages pip writes into it can break
# the ones apt manages; .venv/ can be removed and made again at any time.
# Idempotent: an environment that imports everything is only refreshed with
# the package itself (no network needed then); a broken one is made anew.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=.venv
python=${NETLOOP_PYTHON:-python3}
deps=(pandas pyarrow pytest xarray matplotlib setuptools wheel fmpy==0.3.32 pythonfmu==0.7.0)
imports="import pandas, pyarrow, pytest, xarray, matplotlib, setuptools, wheel, fmpy, pythonfmu"

if [ ! -x "$venv/bin/python" ] || ! "$venv/bin/python" -c "import sys" 2>/dev/null; then
    rm -rf "$venv"
    "$python" -m venv "$venv"
fi
if ! "$venv/bin/python" -c "$imports" 2>/dev/null; then
    echo "python-env: installing ${deps[*]} into $venv" >&2
    # Retried once: a fresh machine's first download can time out.
    "$venv/bin/python" -m pip install -q --upgrade "${deps[@]}" ||
        "$venv/bin/python" -m pip install -q --upgrade "${deps[@]}"
fi
# The package as a user installs it (not editable), from this checkout.
"$venv/bin/python" -m pip install -q --no-deps --no-build-isolation --force-reinstall ./python
