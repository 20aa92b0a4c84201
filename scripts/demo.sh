#!/usr/bin/env bash
# The main job: set-up, then a run over a real ns-3 network.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
# A periodic flow over a 1 Mbps, 2 ms point-to-point link with 10% loss.
target/release/netloop ns3 probe --packets 50 --period 10ms --size 64 -- \
    --network=p2p --dataRate=1Mbps --delay=2ms --lossRate=0.1 --seed=1 --run=1
