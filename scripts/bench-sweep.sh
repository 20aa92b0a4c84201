#!/usr/bin/env bash
# Benchmark fragment for `scripts/bench.sh sweep` (issue 6): how close does
# `netloop sweep --jobs 2` come to perfect parallelism?
#
# The workload: 16 short ns-3 runs of examples/dc_servo_p2p.toml (60 s
# simulated over the ns-3 point-to-point link, about 0.6 s of wall time each):
# 4 proportional gains x 4 replications (ns-3 run numbers 1..4).
#
# 1. Each of the 16 runs alone, one after the other, as `netloop run` with the
#    same overrides the sweep gives it: its single wall time, process start
#    and ns-3 server included (what a user running it by hand waits).
# 2. The same 16 runs as one `netloop sweep --jobs 2`: its makespan, from the
#    command's start to its exit (planning, supervision, aggregation included).
#
# ideal = (sum of the single wall times) / 2;  sweep_efficiency = ideal / makespan.
# Goal: >= 0.90. Prints key=value lines; the last is `sweep_efficiency=...`.
# Set BENCH_SWEEP_REPEATS to repeat the sweep and report the median makespan.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin netloop
netloop="$target_dir/release/netloop"
scripts/build-ns3.sh >/dev/null
repeats="${BENCH_SWEEP_REPEATS:-3}"

work="$(mktemp -d "${TMPDIR:-/tmp}/netloop-bench-sweep.XXXXXX")"
trap 'rm -rf "$work"' EXIT

duration="60s"
gains=(10.0 15.0 20.0 25.0)
replications=4
scenario="$PWD/examples/dc_servo_p2p.toml"

cat >"$work/sweep.toml" <<EOF
scenario = "$scenario"
network = "ns3"
replications = $replications
timeout = "10min"

[set]
duration = "$duration"

[[grid]]
key = "loops[0].controller.kp"
values = [$(IFS=,; echo "${gains[*]}")]
EOF

now() { date +%s.%N; }

# A warm-up run (page cache, ns-3 libraries), not counted.
"$netloop" run "$scenario" -q --set "duration=$duration" --out "$work/warmup"

# 1. Single runs, sequentially.
single_sum=0
for kp in "${gains[@]}"; do
    for run in $(seq 1 "$replications"); do
        start=$(now)
        "$netloop" run "$scenario" -q --network ns3 --set "duration=$duration" \
            --set "loops[0].controller.kp=$kp" --set "run=$run" --out "$work/single/$kp-$run"
        end=$(now)
        single_sum=$(echo "$single_sum + $end - $start" | bc -l)
    done
done
ideal=$(echo "$single_sum / 2" | bc -l)

# 2. The sweep, --jobs 2, median of the repeats.
makespans=()
for i in $(seq 1 "$repeats"); do
    rm -rf "$work/sweep-out"
    start=$(now)
    "$netloop" sweep "$work/sweep.toml" --jobs 2 -q --out "$work/sweep-out"
    end=$(now)
    makespans+=("$(echo "$end - $start" | bc -l)")
done
rows=$(($(wc -l <"$work/sweep-out/sweep.csv") - 1))
complete=$(grep -c ',complete,' "$work/sweep-out/sweep.csv" || true)
if [[ "$rows" != 16 || "$complete" != 16 ]]; then
    echo "bench-sweep: expected 16 complete runs, found $complete of $rows" >&2
    exit 1
fi
makespan=$(printf '%s\n' "${makespans[@]}" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
# The runs' own wall times inside the sweep (timing.json), for comparison.
inside=$(awk -F, 'NR==1 {for (i=1;i<=NF;i++) if ($i=="wall_s") c=i; next} {s+=$c} END {printf "%.3f", s}' "$work/sweep-out/sweep.csv")

printf 'sweep_runs=16 sweep_jobs=2 run_duration=%s\n' "$duration"
printf 'single_wall_sum_s=%.3f ideal_parallel_s=%.3f\n' "$single_sum" "$ideal"
printf 'sweep_makespans_s=%s\n' "$(printf '%.3f,' "${makespans[@]}" | sed 's/,$//')"
printf 'sweep_makespan_s=%.3f runs_wall_sum_inside_sweep_s=%.3f\n' "$makespan" "$inside"
printf 'sweep_efficiency=%.3f\n' "$(echo "$ideal / $makespan" | bc -l)"
