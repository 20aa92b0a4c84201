#!/usr/bin/env bash
# Benchmark fragment for `scripts/bench.sh sweep` (issue 6): how close does
# `netloop sweep --jobs 2` come to perfect parallelism?
#
# The workload: 16 short ns-3 runs of examples/dc_servo_p2p.toml (120 s
# simulated over the ns-3 point-to-point link, under a second of wall time each):
# 4 proportional gains x 4 replications (ns-3 run numbers 1..4).
#
# 1. Each of the 16 runs alone, one after the other, as `netloop run` with the
#    same overrides the sweep gives it: its single wall time, process start
#    and ns-3 server included (what a user running it by hand waits).
# 2. The same 16 runs as one `netloop sweep --jobs 2`: its makespan, from the
#    command's start to its exit (planning, supervision, aggregation included).
#
# ideal = (sum of the single wall times) / 2;  sweep_efficiency = ideal / makespan.
# Goal: >= 0.90. Both are measured in each of BENCH_SWEEP_REPEATS rounds
# (default 3), and the median efficiency is reported. The machine should be
# otherwise idle: other work on the cores slows parallel runs more than
# sequential ones. Prints key=value lines; the last is `sweep_efficiency=...`.
set -euo pipefail
cd "$(dirname "$0")/.."

target_dir="${CARGO_TARGET_DIR:-target}"
cargo build --release --quiet --bin netloop
netloop="$target_dir/release/netloop"
# scripts/bench.sh runs scripts/setup.sh first, which builds the ns-3 server.
if ! info="$("$netloop" ns3 info)"; then
    echo "bench-sweep: no usable ns-3 server; run scripts/setup.sh first" >&2
    exit 1
fi
repeats="${BENCH_SWEEP_REPEATS:-3}"

work="$(mktemp -d "${TMPDIR:-/tmp}/netloop-bench-sweep.XXXXXX")"
trap 'rm -rf "$work"' EXIT

duration="120s"
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

# A private copy of the server, so that a rebuild of the tree during the
# benchmark cannot change or break it half-way.
cp "$(sed -n 's/^server: //p' <<<"$info")" "$work/netloop-server"
export NETLOOP_NS3_SERVER="$work/netloop-server"

now() { date +%s.%N; }
calc() { awk "BEGIN { printf \"%.6f\", $1 }"; }

# A warm-up run (page cache, ns-3 libraries), not counted.
"$netloop" run "$scenario" -q --set "duration=$duration" --out "$work/warmup"

# Rounds of (1) then (2), so that both see the same machine; the figures
# reported are the medians over the rounds.
singles=()
makespans=()
efficiencies=()
for round in $(seq 1 "$repeats"); do
    # 1. Single runs, sequentially.
    single_sum=0
    for kp in "${gains[@]}"; do
        for run in $(seq 1 "$replications"); do
            start=$(now)
            "$netloop" run "$scenario" -q --network ns3 --set "duration=$duration" \
                --set "loops[0].controller.kp=$kp" --set "run=$run" --out "$work/single/$kp-$run"
            end=$(now)
            single_sum=$(calc "$single_sum + $end - $start")
        done
    done
    # 2. The sweep, --jobs 2.
    rm -rf "$work/sweep-out"
    start=$(now)
    "$netloop" sweep "$work/sweep.toml" --jobs 2 -q --out "$work/sweep-out"
    end=$(now)
    makespan=$(calc "$end - $start")
    singles+=("$single_sum")
    makespans+=("$makespan")
    efficiencies+=("$(calc "$single_sum / 2 / $makespan")")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
list() { printf '%.3f,' "$@" | sed 's/,$//'; }
rows=$(($(wc -l <"$work/sweep-out/sweep.csv") - 1))
complete=$(grep -c ',complete,' "$work/sweep-out/sweep.csv" || true)
if [[ "$rows" != 16 || "$complete" != 16 ]]; then
    echo "bench-sweep: expected 16 complete runs, found $complete of $rows" >&2
    exit 1
fi
# The runs' own wall times inside the sweep (timing.json), for comparison.
inside=$(awk -F, 'NR==1 {for (i=1;i<=NF;i++) if ($i=="wall_s") c=i; next} {s+=$c} END {printf "%.3f", s}' "$work/sweep-out/sweep.csv")

single_sum=$(median "${singles[@]}")
makespan=$(median "${makespans[@]}")
printf 'sweep_runs=16 sweep_jobs=2 run_duration=%s rounds=%s\n' "$duration" "$repeats"
printf 'single_wall_sums_s=%s sweep_makespans_s=%s\n' "$(list "${singles[@]}")" "$(list "${makespans[@]}")"
printf 'single_wall_sum_s=%.3f ideal_parallel_s=%.3f sweep_makespan_s=%.3f\n' "$single_sum" "$(calc "$single_sum / 2")" "$makespan"
printf 'runs_wall_sum_inside_last_sweep_s=%s load_average=%s\n' "$inside" "$(cut -d' ' -f1-3 /proc/loadavg | tr ' ' ,)"
printf 'sweep_efficiency=%.3f\n' "$(median "${efficiencies[@]}")"
