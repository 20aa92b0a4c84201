#!/usr/bin/env bash
# Benchmark fragment for `scripts/bench.sh rk4` (controlsim, issue 3).
#
# 1. RK4 steps per second of a 4-state linear plant through the engine API
#    against a hand-written RK4 loop on the same matrices (benches/rk4.rs).
# 2. Peak memory of a one-hour simulated run at 1 kHz recording every step
#    (controlsim's `long_run` example, about 1.1 GB of CSV written to a
#    temporary file and deleted), under /usr/bin/time -v when available.
#
# The timing runs first: while the kernel writes back the gigabyte the
# memory run leaves behind, memory-bound code runs up to 1.8x slower, which
# once showed up as an rk4_ratio of 1.76.
#
# Prints key=value lines; the last line is `rk4_ratio=<engine / hand-written>`
# (goal <= 1.25). Memory goal: peak RSS under 100 MB.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet -p controlsim --example long_run
timing="$(cargo bench --quiet -p controlsim --bench rk4 2>/dev/null | grep -E '=')"

work="$(mktemp -d "${TMPDIR:-/tmp}/netloop-bench-rk4.XXXXXX")"
trap 'rm -rf "$work"' EXIT

runner=()
if [[ -x /usr/bin/time ]]; then
    runner=(/usr/bin/time -v -o "$work/time.txt")
fi
"${runner[@]}" "$target_dir/release/examples/long_run" "$work/timeseries.csv" 3600
if [[ -f "$work/time.txt" ]]; then
    rss_kb="$(awk -F': *' '/Maximum resident set size/ {print $2}' "$work/time.txt")"
    echo "long_run_max_rss_kb=$rss_kb long_run_max_rss_mb=$(( rss_kb / 1024 ))"
fi
rm -f "$work/timeseries.csv"

# The ratio last, as bench.sh promises.
echo "$timing"
