#!/usr/bin/env bash
# Benchmarks, each measured side by side against its reference in one run,
# printing medians and ratios; the last line of each is `<name>_ratio=...`
# (or `sweep_efficiency=...`). Figures and commands are kept in BENCHMARKS.md.
#
#   scripts/bench.sh roundtrip   empty Step/StepDone vs raw TCP ping-pong (issue 2)
#   scripts/bench.sh rk4         engine RK4 vs hand-written RK4; long-run memory (issue 3)
#   scripts/bench.sh overhead    co-simulation vs ns-3 alone, master-slave and event-driven (issue 4)
#   scripts/bench.sh scale       WAVE platoon of 2..16 vehicles vs ns-3 alone (issue 5)
#   scripts/bench.sh sweep       16-run sweep makespan vs ideal parallel time (issue 6)
#   scripts/bench.sh slurm       16-run sweep through a local SLURM vs --jobs 2 (issue 17; root)
#   scripts/bench.sh equations   text-equation plants vs the same models in Rust (issue 13)
#   scripts/bench.sh coupling    the coupled cases vs ns-3 alone: 1 ms master-slave without lookahead
#                                over TCP and Unix, a platoon with a position tolerance (issue 18)
#                                and et_ratio: event-triggered answers as rules
#   scripts/bench.sh fmu         a C Co-Simulation FMU stepped by netloop vs a C FMI driver (issue 14)
#   scripts/bench.sh graph       a loop as a component graph vs hand-written; 200-component cost (issue 11)
#   scripts/bench.sh blocks      the cruise-control block diagram vs a hand-written loop (issue 13)
#   scripts/bench.sh all         all of the above
set -euo pipefail
cd "$(dirname "$0")/.."

run_one() {
    case "$1" in
        roundtrip) cargo bench --quiet -p bridge --bench roundtrip ;;
        rk4) scripts/bench-rk4.sh ;;
        overhead) cargo bench --quiet -p bridge --bench overhead ;;
        scale) cargo bench --quiet -p bridge --bench scale ;;
        sweep) scripts/bench-sweep.sh ;;
        slurm) scripts/bench-slurm.sh ;;
        equations) cargo bench --quiet -p controlsim --bench equations ;;
        coupling)
            # what a sync costs per transport; the platoon's position tolerance
            cargo bench --quiet -p bridge --bench coupling_sync
            # event-triggered answers as rules
            cargo bench --quiet -p bridge --bench coupling_et
            ;;
        fmu) scripts/bench-fmu.sh ;;
        graph) cargo bench --quiet -p controlsim --bench graph ;;
        blocks) cargo bench --quiet -p bridge --bench blocks ;;
        *)
            echo "usage: scripts/bench.sh roundtrip|rk4|overhead|scale|sweep|slurm|equations|coupling|fmu|graph|blocks|all" >&2
            exit 2
            ;;
    esac
}

scripts/setup.sh >/dev/null
if [[ "${1:-all}" == all ]]; then
    for name in roundtrip rk4 overhead scale sweep slurm equations coupling fmu graph blocks; do
        echo "== $name"
        run_one "$name"
    done
else
    run_one "$1"
fi
