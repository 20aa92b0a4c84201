#!/usr/bin/env bash
# netloop sweep --slurm against a real SLURM: a single-node cluster on this
# machine (scripts/slurm-cluster.sh), a 24-run sweep over real ns-3, and
# the same sweep run locally.
#
# 1. The sweep submitted with --slurm gives the same run directories and
#    files, and the same aggregates (but for wall_s), as `netloop sweep`.
# 2. Cancelling one array task while its run runs (suspended first, so
#    that it cannot finish in between) leaves that run not complete; `--status` and the aggregates say so; `--resume --slurm`
#    submits only that task, and the sweep is then the same as the local one.
#
# Needs root (it installs and starts the daemons) and a built tree
# (scripts/setup.sh). The daemons are stopped at the end whatever happens.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
netloop="$root/target/release/netloop"
sweep="$root/tests/slurm/servo_sweep.toml"
work="$(mktemp -d /tmp/netloop-slurm-test.XXXXXX)"
export NETLOOP_SLURM_DIR="$work/cluster"
export SLURM_CONF="$NETLOOP_SLURM_DIR/slurm.conf"

passed=0
failed=0
cleanup() {
    scripts/slurm-cluster.sh stop || true
    rm -rf "$work"
}
trap cleanup EXIT

check() { # NAME COMMAND...: one named check
    local name="$1"
    shift
    if "$@"; then
        echo "ok   $name"
        passed=$((passed + 1))
    else
        echo "FAIL $name"
        failed=$((failed + 1))
    fi
}

# Waits until no job named in "$@" is in the queue (10 min at most).
wait_for_jobs() {
    local ids
    ids="$(IFS=,; echo "$*")"
    for _ in $(seq 3000); do
        if [ -z "$(squeue -h -j "$ids" 2>/dev/null)" ]; then
            return 0
        fi
        sleep 0.2
    done
    echo "slurm test: jobs $ids still queued after 10 minutes" >&2
    squeue >&2 || true
    return 1
}

# Compares two sweep directories: every run's files, the summary, and
# sweep.csv without its wall-clock column.
same_sweep() {
    local a="$1" b="$2" ok=0 run file
    for run in "$a"/runs/*; do
        for file in timeseries.csv packets.csv summary.json outcome.json; do
            if ! cmp -s "$run/$file" "$b/runs/$(basename "$run")/$file"; then
                echo "  differs: runs/$(basename "$run")/$file" >&2
                ok=1
            fi
        done
    done
    [ "$(ls "$a/runs" | wc -l)" = "$(ls "$b/runs" | wc -l)" ] || { echo "  run counts differ" >&2; ok=1; }
    cmp -s "$a/sweep_summary.csv" "$b/sweep_summary.csv" || { echo "  sweep_summary.csv differs" >&2; ok=1; }
    python3 - "$a/sweep.csv" "$b/sweep.csv" <<'PY' || ok=1
import csv, sys
a, b = ([row[:-1] for row in csv.reader(open(p))] for p in sys.argv[1:3])
if a != b:
    sys.exit("  sweep.csv differs (wall_s aside)")
PY
    return $ok
}

scripts/slurm-cluster.sh start

echo "== local sweep"
"$netloop" sweep "$sweep" --out "$work/local" --jobs 2 -q

echo "== the same sweep through SLURM"
array=$("$netloop" sweep "$sweep" --out "$work/slurm" --slurm -q)
aggregate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][-1]["aggregate_job"])' "$work/slurm/slurm/jobs.json")
wait_for_jobs "$array" "$aggregate"
check "24 array tasks were submitted" test "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["jobs"][-1]["tasks"]))' "$work/slurm/slurm/jobs.json")" = 24
check "SLURM gives the local sweep's files" same_sweep "$work/local" "$work/slurm"
check "the aggregation job wrote its log" test -s "$work/slurm/slurm/aggregate-$aggregate.log"

echo "== kill one array task while its run runs"
array=$("$netloop" sweep "$sweep" --out "$work/killed" --slurm -q)
aggregate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][-1]["aggregate_job"])' "$work/killed/slurm/jobs.json")
victim=""
# Run hash -> array task index, read once: the loop below must be quick,
# since a run lasts a fraction of a second.
declare -A task_of
while read -r index hash; do
    task_of[$hash]=$index
done < <(python3 -c 'import json,sys
for i, r in enumerate(json.load(open(sys.argv[1]))["runs"], 1): print(i, r["hash"])' "$work/killed/sweep.json")
for _ in $(seq 3000); do
    # A run that has started and not ended.
    for log in "$work"/killed/runs/*/netloop.log; do
        dir="${log%/netloop.log}"
        [ -f "$log" ] && [ ! -f "$dir/outcome.json" ] || continue
        hash="${dir##*/}"
        task="${array}_${task_of[$hash]}"
        # Freeze the task (SIGSTOP to its processes) so that it cannot
        # finish between this check and the cancel, then check again. A
        # run that has written its summary is done even before its task
        # writes outcome.json: not a victim.
        scontrol suspend "$task" 2>/dev/null || continue
        if [ -f "$dir/outcome.json" ] || [ -f "$dir/summary.json" ]; then
            scontrol resume "$task" 2>/dev/null || true
            continue
        fi
        victim="$task"
        break 2
    done
    sleep 0.02
done
if [ -z "$victim" ]; then
    echo "FAIL found no running task to cancel" >&2
    exit 1
fi
# Kill it as a node that dies would: SIGKILL to every process of the task
# (the shard, its run and the run's server). A plain scancel sends SIGTERM,
# which lets the run stop at its next sync, and with lookahead that can be
# its end: the run would then complete.
scancel --full --signal=KILL "$victim"
scancel "$victim"
echo "killed $victim (run $hash)"
wait_for_jobs "$array" "$aggregate"
status="$("$netloop" sweep "$work/killed" --status)"
echo "$status"
check "--status shows the cancelled run as not complete" grep -q "$hash" <<<"$status"
check "--status counts 23 complete runs" grep -Eq "^  complete +23$" <<<"$status"
check "sweep.csv marks the cancelled run" python3 - "$work/killed/sweep.csv" "$hash" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
bad = [r for r in rows if r["status"] != "complete"]
sys.exit(0 if len(bad) == 1 and bad[0]["run_dir"] == "runs/" + sys.argv[2] else f"not complete: {bad}")
PY

echo "== resume only what is missing"
array=$("$netloop" sweep "$sweep" --out "$work/killed" --resume --slurm -q)
aggregate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][-1]["aggregate_job"])' "$work/killed/slurm/jobs.json")
check "resume submits one task for one run" python3 - "$work/killed/slurm/jobs.json" "${victim#*_}" <<'PY'
import json, sys
last = json.load(open(sys.argv[1]))["jobs"][-1]
sys.exit(0 if last["tasks"] == [int(sys.argv[2])] and last["runs"] == 1 else f"resubmitted {last}")
PY
wait_for_jobs "$array" "$aggregate"
check "after resume, SLURM gives the local sweep's files" same_sweep "$work/local" "$work/killed"
check "nothing left to resume" bash -c "'$netloop' sweep '$sweep' --out '$work/killed' --resume --slurm 2>&1 | grep -q 'nothing to submit'"

echo "== a node that cannot see the ns-3 server fails at once"
# The server is where the submitting shell saw it; the jobs are held until
# it is gone, as if the nodes did not share that file system.
cp "$root/ns3-scenarios/build/netloop-server" "$work/unshared-server"
cat >"$work/blind.toml" <<TOML
scenario = "$root/examples/dc_servo_p2p.toml"
[set]
duration = "1s"
[[grid]]
key = "loops[0].controller.kp"
values = [8.0, 12.0]
[slurm]
sbatch = ["--hold"]
TOML
array=$(NETLOOP_NS3_SERVER="$work/unshared-server" "$netloop" sweep "$work/blind.toml" --out "$work/blind" --slurm -q)
aggregate=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][-1]["aggregate_job"])' "$work/blind/slurm/jobs.json")
rm "$work/unshared-server"
scontrol release "$array" "$aggregate"
wait_for_jobs "$array" "$aggregate"
blind_task_says() { # TASK: its log names what the node cannot see
    grep -q "netloop array task $1 on .*: cannot execute the ns-3 server $work/unshared-server; the sweep directory and the binaries must be on a file system every node shares" \
        "$work/blind/slurm/task-${array}_$1.log"
}
check "task 1 says what its node cannot see" blind_task_says 1
check "task 2 says what its node cannot see" blind_task_says 2
check "the aggregation says so too" grep -q "netloop aggregation on .*: cannot execute the ns-3 server" "$work/blind/slurm/aggregate-$aggregate.log"
check "no run started" test -z "$(ls "$work"/blind/runs/*/netloop.log 2>/dev/null)"

echo "slurm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
