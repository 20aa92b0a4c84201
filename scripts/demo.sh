#!/usr/bin/env bash
# The main job: set-up, then a DC servo controlled over a real ns-3 network.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh

echo "== The network alone: 20 packets over a 1 Mbps, 2 ms point-to-point link with 10% loss"
target/release/netloop ns3 probe --packets 20 --period 10ms --size 64 -- \
    --network=p2p --dataRate=1Mbps --delay=2ms --lossRate=0.1 --seed=1 --run=1

echo
echo "== A DC servo with its PID controller on the other end of that link (master-slave sync)"
target/release/netloop run examples/dc_servo_p2p.toml --out results/demo --plot
echo
echo "summary.json, timeseries.csv, packets.csv and plots/ are in results/demo"
