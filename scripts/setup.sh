#!/usr/bin/env bash
# Idempotent set-up: installs the Debian packages netloop needs when they are
# missing (ns-3 3.37 and what its CMake files refer to, CMake, a C++ compiler,
# GoogleTest, Python's venv and pip), then builds the ns-3 server
# (ns3-scenarios/) and the Rust workspace in release mode, and makes the
# Python environment of python/ (scripts/python-env.sh). Works as root without sudo, non-interactively.
set -euo pipefail
cd "$(dirname "$0")/.."

# libns3-dev's CMake files (/usr/lib/x86_64-linux-gnu/cmake/ns3/ns3Targets*.cmake)
# refer to files of other packages: CMake stops at a missing include folder or
# imported file, the link at a missing library. Besides the ns-3 libraries
# (libns3.37, which libns3-dev pulls in) they name:
#   /usr/include/libxml2, libxml2.so            -> libxml2-dev
#   /usr/include/python3.11                     -> libpython3-dev (libpython3.11-dev)
#   libsqlite3.so                               -> libsqlite3-dev
#   libgsl.so, libgslcblas.so                   -> libgsl-dev
#   /usr/libexec/ns3/ns3.37-*-creator           -> ns3
# A development machine usually has these already; a fresh Debian does not
# (scripts/fresh-install-check.sh checks that case).
# clang-format checks the C++ style (scripts/check-format.sh, from scripts/test.sh).
PACKAGES=(libns3-dev ns3 libgsl-dev libxml2-dev libsqlite3-dev libpython3-dev
    cmake g++ make pkg-config libgtest-dev libexpat1-dev clang-format
    python3 python3-venv python3-pip)

missing=()
for package in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
        missing+=("$package")
    fi
done
if ((${#missing[@]})); then
    echo "setup: installing ${missing[*]}" >&2
    # As root directly (a minimal Debian has no sudo), else through sudo; env
    # carries the non-interactive front end through sudo's environment reset.
    as_root=(env DEBIAN_FRONTEND=noninteractive)
    if [ "$(id -u)" -ne 0 ]; then
        if ! command -v sudo >/dev/null 2>&1; then
            echo "setup: error: missing packages ${missing[*]}; run as root or install sudo" >&2
            exit 1
        fi
        as_root=(sudo "${as_root[@]}")
    fi
    install=(apt-get install -y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
    # A fresh machine may have no package lists yet: fetch them first. Stale
    # lists (a package moved on) show as a failed install: refresh and retry.
    if ! compgen -G "/var/lib/apt/lists/*_Packages*" >/dev/null; then
        "${as_root[@]}" apt-get update -q
    fi
    if ! "${as_root[@]}" "${install[@]}" "${missing[@]}"; then
        "${as_root[@]}" apt-get update -q
        "${as_root[@]}" "${install[@]}" "${missing[@]}"
    fi
fi

if ! command -v cargo >/dev/null 2>&1; then
    echo "setup: error: cargo not found; install a Rust toolchain (https://rustup.rs) and rerun" >&2
    exit 1
fi

scripts/build-ns3.sh
cargo build --release --workspace --locked
scripts/python-env.sh
