#!/usr/bin/env bash
# Benchmark fragment for `scripts/bench.sh fmu` (issue 14).
#
# The 4-state linear plant as a C Co-Simulation FMU (tests/fmu/linear4_fmi2.c,
# 10 RK4 substeps per doStep), 100 000 communication steps of 1 ms:
#   - netloop: the plant stepped by controlsim's engine (examples/fmu_steps.rs);
#   - driver:  a minimal C master calling the FMI 2.0 API directly
#              (tests/fmu/bench_driver.c), the same calls per step;
#   - FMPy:    fmpy.simulate_fmu on the same FMU, for the record.
# Five runs each, medians. Both final outputs must agree bit for bit.
# Prints key=value lines; the last is `fmu_ratio=<netloop / driver>` (goal <= 1.2).
# NETLOOP_BENCH_NO_BUILD=1 skips building the example (already built).
# Python: $NETLOOP_PYTHON, else .venv, else python3 (needs fmpy and pythonfmu,
# for tests/fmu/build.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

steps="${NETLOOP_FMU_BENCH_STEPS:-100000}"
python=${NETLOOP_PYTHON:-}
if [[ -z "$python" ]]; then
    if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
fi
target_dir="${CARGO_TARGET_DIR:-target}"
work="$(mktemp -d "${TMPDIR:-/tmp}/netloop-bench-fmu.XXXXXX")"
trap 'rm -rf "$work"' EXIT

NETLOOP_PYTHON="$python" tests/fmu/build.sh "$work/fmus" >/dev/null
fmu="$work/fmus/Linear4.fmu"
"$python" -m zipfile -e "$fmu" "$work/unpacked"
headers=$("$python" -c 'import fmpy, os; print(os.path.join(os.path.dirname(fmpy.__file__), "c-code"))')
cc -O2 -std=c99 -Wall -Werror -I"$headers" -o "$work/driver" tests/fmu/bench_driver.c -ldl
[[ -n "${NETLOOP_BENCH_NO_BUILD:-}" ]] || cargo build --release --quiet -p controlsim --example fmu_steps

median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }

: > "$work/netloop.txt"
: > "$work/driver.txt"
for _ in 1 2 3 4 5; do
    n=$(NETLOOP_FMU_CACHE="$work/cache" "$target_dir/release/examples/fmu_steps" "$fmu" "$steps")
    d=$("$work/driver" "$work/unpacked" Linear4 "$steps")
    echo "$n" | sed -E 's/.*netloop_fmu_s=([^ ]+).*/\1/' >> "$work/netloop.txt"
    echo "$d" | sed -E 's/.*driver_fmu_s=([^ ]+).*/\1/' >> "$work/driver.txt"
    p_n=${n##*p1_bits=}
    p_d=${d##*p1_bits=}
    if [[ "$p_n" != "$p_d" ]]; then
        echo "netloop and the driver disagree: p1 $p_n vs $p_d" >&2
        exit 1
    fi
done
fmpy_s=$("$python" - "$fmu" "$steps" <<'PY'
import sys, time
import fmpy
fmu, steps = sys.argv[1], int(sys.argv[2])
times = []
for _ in range(3):
    t0 = time.perf_counter()
    fmpy.simulate_fmu(fmu, stop_time=steps * 1e-3, output_interval=1e-3, step_size=1e-3,
                      fmi_type="CoSimulation", start_values={"p1_0": 1.0, "substeps": 10})
    times.append(time.perf_counter() - t0)
print(sorted(times)[1])
PY
)
netloop_s=$(median < "$work/netloop.txt")
driver_s=$(median < "$work/driver.txt")
echo "fmu_steps=$steps final_p1_bits=${p_n} (netloop and driver)"
echo "fmpy_s=$fmpy_s"
echo "netloop_s=$netloop_s driver_s=$driver_s"
awk -v n="$netloop_s" -v d="$driver_s" 'BEGIN {printf "fmu_ratio=%.3f\n", n / d}'
