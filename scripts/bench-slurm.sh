#!/usr/bin/env bash
# Benchmark fragment for `scripts/bench.sh slurm` (issue 17): what does
# running a sweep through SLURM cost against `netloop sweep --jobs 2`?
#
# The workload: 16 runs of examples/dc_servo_p2p.toml over the real ns-3
# point-to-point link, 4 gains x 4 replications, each syncing every period
# (`sync.lookahead = false`, so a run keeps one core busy) for 1000 s of
# simulated time: about 5 s of wall time per run on an idle machine.
#
# A single-node SLURM on this machine (scripts/slurm-cluster.sh, 2 CPUs, one
# CPU per array task) runs the same sweep as `netloop sweep --slurm`. In each
# of BENCH_SLURM_REPEATS rounds (default 3), interleaved:
# 1. local: `netloop sweep --jobs 2`, from the command's start to its exit;
# 2. SLURM, one run per array task (the default): from the submission to
#    the end of the aggregation job (polled every 50 ms), and the scheduler's
#    own latency: submission to the first task's start (each task prints its
#    start time in its log);
# 3. SLURM with --runs-per-task 4.
# SLURM starts pending batch jobs at most every `batch_sched_delay` (3 s by
# default), so every task that waits for a free CPU waits for that tick.
# slurm_overhead = median SLURM makespan / median local makespan (goal <= 1.3
# for runs of 5 s or more). Prints key=value lines; the last is
# slurm_overhead=...
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release --quiet --bin netloop
netloop="$PWD/target/release/netloop"
if ! info="$("$netloop" ns3 info)"; then
    echo "bench-slurm: no usable ns-3 server; run scripts/setup.sh first" >&2
    exit 1
fi
repeats="${BENCH_SLURM_REPEATS:-3}"
work="$(mktemp -d /tmp/netloop-bench-slurm.XXXXXX)"
export NETLOOP_SLURM_DIR="$work/cluster"
export SLURM_CONF="$NETLOOP_SLURM_DIR/slurm.conf"
trap 'scripts/slurm-cluster.sh stop || true; rm -rf "$work"' EXIT
cp "$(sed -n 's/^server: //p' <<<"$info")" "$work/netloop-server"
export NETLOOP_NS3_SERVER="$work/netloop-server"

cat >"$work/bench.toml" <<TOML
scenario = "$PWD/examples/dc_servo_p2p.toml"
replications = 4
[set]
duration = "${BENCH_SLURM_DURATION:-1000s}"
"sync.lookahead" = false
[[grid]]
key = "loops[0].controller.kp"
values = [8.0, 12.0, 16.0, 20.0]
TOML

scripts/slurm-cluster.sh start

now() { date +%s.%N; }
calc() { awk "BEGIN {print $1}"; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2}'; }

# One SLURM sweep: makespan (submission to the end of the aggregation job)
# and scheduler latency (submission to the first task's start).
slurm_sweep() { # OUT [OPTIONS...]
    local out="$1" t0 t1 array aggregate first
    shift
    rm -rf "$out"
    t0=$(now)
    array=$("$netloop" sweep "$work/bench.toml" --out "$out" --slurm -q "$@")
    aggregate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][-1]["aggregate_job"])' "$out/slurm/jobs.json")
    while [ -n "$(squeue -h -j "$array,$aggregate" 2>/dev/null)" ]; do sleep 0.05; done
    t1=$(now)
    first=$(cat "$out"/slurm/task-*.log | sed -n 's/^netloop: task .* started at unix time //p' | sort -g | head -1)
    [ "$(grep -c ',complete,' "$out/sweep.csv" || true)" = 16 ] || { echo "bench-slurm: not every run completed in $out" >&2; exit 1; }
    echo "$(calc "$t1 - $t0") $(calc "$first - $t0")"
}

locals=() slurms=() latencies=() chunked=()
for round in $(seq "$repeats"); do
    rm -rf "$work/local"
    t0=$(now)
    "$netloop" sweep "$work/bench.toml" --out "$work/local" --jobs 2 -q
    t1=$(now)
    local_s=$(calc "$t1 - $t0")
    read -r slurm_s latency_s < <(slurm_sweep "$work/slurm")
    read -r chunked_s _ < <(slurm_sweep "$work/chunked" --runs-per-task 4)
    printf 'round %d: local %.2f s, slurm %.2f s (first task after %.2f s), slurm 4 runs/task %.2f s\n' \
        "$round" "$local_s" "$slurm_s" "$latency_s" "$chunked_s"
    locals+=("$local_s") slurms+=("$slurm_s") latencies+=("$latency_s") chunked+=("$chunked_s")
done
local_median=$(printf '%s\n' "${locals[@]}" | median)
slurm_median=$(printf '%s\n' "${slurms[@]}" | median)
latency_median=$(printf '%s\n' "${latencies[@]}" | median)
chunked_median=$(printf '%s\n' "${chunked[@]}" | median)
echo "local_makespan_s=$local_median"
echo "slurm_makespan_s=$slurm_median"
echo "slurm_4_runs_per_task_makespan_s=$chunked_median"
echo "slurm_latency_s=$latency_median"
printf 'slurm_4_runs_per_task_overhead=%.3f\n' "$(calc "$chunked_median / $local_median")"
printf 'slurm_overhead=%.3f\n' "$(calc "$slurm_median / $local_median")"
