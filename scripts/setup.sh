#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages netloop needs when they are
# missing (ns-3 3.37, GSL, CMake, a C++ compiler, GoogleTest), then builds the
# ns-3 server (ns3-scenarios/) and the Rust workspace in release mode.
set -euo pipefail
cd "$(dirname "$0")/.."

# ns3 and libgsl-dev are needed besides libns3-dev: the package's CMake and
# pkg-config files refer to files those two provide.
PACKAGES=(libns3-dev ns3 libgsl-dev cmake g++ make pkg-config libgtest-dev libexpat1-dev)

missing=()
for package in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    sudo=""
    if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
    export DEBIAN_FRONTEND=noninteractive
    if ! $sudo apt-get install -y -q "${missing[@]}"; then
        # A fresh machine may have no package lists yet.
        $sudo apt-get update -q
        $sudo apt-get install -y -q "${missing[@]}"
    fi
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: error: cargo not found; install a Rust toolchain (https://rustup.rs) and rerun" >&2
    exit 1
fi

scripts/build-ns3.sh
cargo build --release --workspace --locked
