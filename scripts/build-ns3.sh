#!/usr/bin/env bash
# Builds the ns-3 side of netloop (ns3-scenarios/: library, netloop-server, tests)
# in Release into ns3-scenarios/build/. Idempotent: re-running only rebuilds what
# changed.
#
#   scripts/build-ns3.sh         configure and build
#   scripts/build-ns3.sh test    ... and run the C++ tests (ctest)
#
# Assumes the Debian packages scripts/setup.sh installs (libns3-dev ns3 and what
# ns-3's CMake files refer to, libgtest-dev libexpat1-dev cmake g++).
# NETLOOP_BUILD_JOBS sets the parallelism (default 2).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
source_dir="$root/ns3-scenarios"
build_dir="$source_dir/build"
jobs="${NETLOOP_BUILD_JOBS:-2}"

case "${1:-build}" in
    build | test) ;;
    *)
        echo "usage: $0 [test]" >&2
        exit 2
        ;;
esac

cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release
cmake --build "$build_dir" -j "$jobs"

if [[ "${1:-build}" == test ]]; then
    ctest --test-dir "$build_dir" --output-on-failure
fi
