#!/usr/bin/env bash
# Regenerates docs/scenario.md's network tables (every [network.ns3] kind and
# the shared [network.radio], [network.placement], [network.background] and
# [network.traces] tables) from the committed schema,
# ns3-scenarios/network-schema.json: the text between each
# `<!-- network-docs: ... -->` line and `<!-- /network-docs -->`.
# tests/cli/docs.rs fails when they differ.
#
#   scripts/gen-network-docs.sh            from the committed schema
#   scripts/gen-network-docs.sh --server   first refresh the committed schema
#                                          from ns3-scenarios/build/netloop-server --describe
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

if [[ "${1:-}" == --server ]]; then
    ns3-scenarios/build/netloop-server --describe |
        python3 -m json.tool --no-ensure-ascii >ns3-scenarios/network-schema.json
fi

cargo run --quiet --release --locked -p bridge --example gen_network_docs -- docs/scenario.md
