#!/usr/bin/env bash
# Formatting conformance, run by scripts/test.sh: the Rust workspace against
# rustfmt.toml (cargo fmt) and the C++ of ns3-scenarios/ against
# ns3-scenarios/.clang-format (clang-format 14, Debian 12's, which
# scripts/setup.sh installs; other versions may format some lines differently).
# Only checks; to fix, run `cargo fmt --all` and `clang-format -i FILE...`.
#
#   CLANG_FORMAT=clang-format-14 scripts/check-format.sh   # another binary
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo fmt --all -- --check; then
    echo "check-format: the Rust code is not rustfmt-clean; run: cargo fmt --all" >&2
    exit 1
fi

clang_format="${CLANG_FORMAT:-clang-format}"
if ! command -v "$clang_format" >/dev/null 2>&1; then
    echo "check-format: error: $clang_format not found; run scripts/setup.sh (Debian package clang-format)" >&2
    exit 1
fi
mapfile -t sources < <(find ns3-scenarios -path ns3-scenarios/build -prune -o \
    -type f \( -name '*.cc' -o -name '*.h' \) -print | LC_ALL=C sort)
if ! "$clang_format" --dry-run --Werror "${sources[@]}"; then
    echo "check-format: C++ differs from ns3-scenarios/.clang-format ($("$clang_format" --version));" \
        "run: $clang_format -i FILE..." >&2
    exit 1
fi
echo "check-format: ${#sources[@]} C++ files and the Rust workspace are formatted"
