#!/usr/bin/env bash
# Maintainer's check, not a set-up step: do the README's two set-up commands
# work on a user's fresh Debian 12? Builds a minimal bookworm root with
# Debian's debootstrap, adds only what the README assumes a user has (gcc,
# git, python3, ca-certificates and a Rust toolchain: the host's), clones this
# repository's HEAD into it, runs scripts/demo.sh and then scripts/test.sh in
# it through chroot, and reports PASS/FAIL with timings and log paths.
#
# It takes a while (a full ns-3 server and Rust build inside the root), so it
# is not part of scripts/test.sh. Run it by hand, as root, whenever set-up
# changes (scripts/setup.sh, scripts/build-ns3.sh, ns3-scenarios/CMakeLists.txt,
# dependencies), and record the result in README.md's set-up section.
#
#   scripts/fresh-install-check.sh [REVISION]    # default HEAD
#
# Only committed work is checked: the root gets a clean clone of REVISION.
# Environment:
#   NETLOOP_FRESH_BASE=DIR  keep the base root (debootstrap + the user's
#                           packages) in DIR and reuse it; each run still works
#                           on a fresh copy of it. Default: build one per run.
#   NETLOOP_FRESH_WORK=DIR  where the run's root and logs go (default: a new
#                           directory under /var/tmp). Logs are kept.
#   NETLOOP_FRESH_KEEP=1    keep the run's root afterwards, for inspection.
#   NETLOOP_FRESH_CRATES=download  let cargo download every crate; the default,
#                           copy, seeds the root with the host's crate cache.
#   NETLOOP_FRESH_MIRROR=URL  Debian mirror for debootstrap (default: the
#                           first bookworm source of the host's apt configuration).
set -euo pipefail

readonly SUITE=bookworm
# What the README assumes a user's Debian has, besides a Rust toolchain.
readonly USER_PACKAGES=(gcc git python3 ca-certificates)
readonly CHROOT_PATH=/root/.cargo/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

say() { echo "fresh-install-check: $*" >&2; }
die() {
    say "error: $*"
    exit 2
}

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
revision="${1:-HEAD}"
(($# <= 1)) || die "usage: $0 [REVISION]"
[[ "$(id -u)" -eq 0 ]] || die "run as root (debootstrap, mount and chroot need it)"
commit="$(git -C "$repo" rev-parse --verify --quiet "$revision^{commit}")" ||
    die "no such revision: $revision"
if [[ "$revision" == HEAD && -n "$(git -C "$repo" status --porcelain --untracked-files=no)" ]]; then
    say "warning: uncommitted changes are not checked (the root gets a clean clone of $commit)"
fi

# The host's Rust toolchain: that of the user who called sudo, if any.
user_home="$(getent passwd "${SUDO_USER:-$(id -un)}" | cut -d: -f6)"
rustup_home="${RUSTUP_HOME:-$user_home/.rustup}"
cargo_home="${CARGO_HOME:-$user_home/.cargo}"
[[ -x "$cargo_home/bin/cargo" && -d "$rustup_home/toolchains" ]] ||
    die "no rustup toolchain in $rustup_home with cargo in $cargo_home/bin"

if ! command -v debootstrap >/dev/null 2>&1; then
    say "installing debootstrap"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q debootstrap || { apt-get update -q && apt-get install -y -q debootstrap; }
fi

work="${NETLOOP_FRESH_WORK:-$(mktemp -d /var/tmp/netloop-fresh.XXXXXX)}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"
root="$work/root"
[[ ! -e "$root" ]] || die "$root exists already; remove it or pick another NETLOOP_FRESH_WORK"

# Every mount point we made, in order; cleanup undoes them in reverse.
mounts=()

# do_mount [mount options...] SOURCE TARGET: mounts and records it for cleanup.
do_mount() {
    mount "$@"
    mounts+=("${!#}")
}

# bind_ro SOURCE TARGET: a read-only bind mount.
bind_ro() {
    do_mount --bind "$1" "$2"
    mount -o remount,bind,ro "$2"
}

mount_into() { # mount_into ROOT: what a chroot needs to run apt, cargo and tests
    local r="$1" d
    for d in proc sys dev dev/pts dev/shm; do mkdir -p "$r/$d"; done
    do_mount -t proc proc "$r/proc"
    # Recursive, so that /sys/fs/cgroup is there too: slurmd (the SLURM test)
    # will not start without it. Slave, so that unmounting stays inside.
    do_mount --rbind /sys "$r/sys"
    mount --make-rslave "$r/sys"
    for d in dev dev/pts dev/shm; do do_mount --bind "/$d" "$r/$d"; done
}

unmount_all() {
    local i
    for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
        umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || say "warning: cannot unmount ${mounts[i]}"
    done
    mounts=()
}

# Processes left running inside a root (a server a failed test did not stop)
# keep its mounts busy: end them, and only them.
kill_inside() {
    local r="$1" p
    for p in /proc/[0-9]*; do
        [[ "$(readlink "$p/root" 2>/dev/null)" == "$r" ]] && kill -9 "${p#/proc/}" 2>/dev/null || true
    done
}

still_mounted_under() {
    awk -v r="$1/" 'index($5 "/", r) == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo
}

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    for r in "$root" "${base_building:-}"; do
        [[ -n "$r" && -d "$r" ]] && kill_inside "$r"
    done
    unmount_all
    for r in "$root" "${base_building:-}"; do
        [[ -n "$r" && -d "$r" ]] || continue
        if still_mounted_under "$r"; then
            say "warning: something is still mounted under $r; not removing it"
        elif [[ "$r" == "$root" && "${NETLOOP_FRESH_KEEP:-0}" == 1 ]]; then
            say "kept the root: $r"
        else
            rm -rf --one-file-system "$r"
        fi
    done
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The host's Debian mirror, from its apt sources (one-line or deb822 format).
host_mirror() {
    local f
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [[ -f "$f" ]] || continue
        awk -v s="$SUITE" '$1 == "deb" {
                i = 2; if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
                if ($(i + 1) == s) { print $i; exit }
            }' "$f"
    done
    for f in /etc/apt/sources.list.d/*.sources; do
        [[ -f "$f" ]] || continue
        awk -v s="$SUITE" 'BEGIN { RS = ""; FS = "\n" } {
                uri = ""; ours = 0; on = 1
                for (i = 1; i <= NF; i++) {
                    if ($i ~ /^URIs:/) { split($i, w, /[ \t]+/); uri = w[2] }
                    if ($i ~ /^Suites:/ && (" " $i " ") ~ ("[ \t]" s "[ \t]")) ours = 1
                    if ($i ~ /^Enabled:[ \t]*no/) on = 0
                }
                if (ours && on && uri != "") { print uri; exit }
            }' "$f"
    done
}

# The host's apt configuration inside ROOT: its sources with their keyrings,
# and its Acquire:: settings (proxies, date checks), so that the root reaches
# Debian's packages the way this machine does.
copy_apt_config() {
    local r="$1" f key
    cp -L /etc/resolv.conf "$r/etc/resolv.conf"
    rm -f "$r/etc/apt/sources.list"
    [[ -f /etc/apt/sources.list ]] && cp /etc/apt/sources.list "$r/etc/apt/"
    cp -a /etc/apt/sources.list.d/. "$r/etc/apt/sources.list.d/"
    for f in /etc/apt/trusted.gpg /etc/apt/trusted.gpg.d /etc/apt/keyrings; do
        [[ -e "$f" ]] && cp -a "$f" "$r/etc/apt/"
    done
    for key in $(cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null |
        grep -oiE '(signed-by:[[:space:]]*|signed-by=)/[^] [:space:]]+' | sed -E 's/^[^/]*//' | sort -u); do
        if [[ -f "$key" && ! -e "$r$key" ]]; then
            mkdir -p "$r$(dirname "$key")" && cp -L "$key" "$r$key"
        fi
    done
    [[ -f /etc/apt/apt.conf ]] && cp /etc/apt/apt.conf "$r/etc/apt/"
    for f in /etc/apt/apt.conf.d/*; do
        [[ -f "$f" ]] && grep -qE '^[[:space:]]*Acquire' "$f" && cp "$f" "$r/etc/apt/apt.conf.d/"
    done
    return 0
}

# The host's extra CA certificates and pip configuration inside ROOT, so that
# pip in the root reaches PyPI the way this machine does (through the same
# TLS-inspecting proxy, if any). A user's Debian needs none of this.
copy_network_trust() {
    local r="$1"
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        mkdir -p "$r/usr/local/share/ca-certificates"
        cp /usr/local/share/ca-certificates/*.crt "$r/usr/local/share/ca-certificates/"
    fi
    [[ ! -f /etc/pip.conf ]] || cp /etc/pip.conf "$r/etc/pip.conf"
}

in_root() { # in_root ROOT COMMAND...: a login-less root shell with a clean environment
    local r="$1"
    shift
    chroot "$r" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" PATH="$CHROOT_PATH" \
        DEBIAN_FRONTEND=noninteractive "$@"
}

# Builds the user's Debian into DIR: debootstrap's minimal variant, the host's
# apt configuration, the user's packages; then the package lists are dropped,
# as on a fresh machine that never ran apt-get update.
build_base() {
    local dir="$1" mirror
    mirror="${NETLOOP_FRESH_MIRROR:-$(host_mirror | head -n 1)}"
    say "debootstrap --variant=minbase $SUITE into $dir from ${mirror:-the default mirror}"
    base_building="$dir"
    debootstrap --variant=minbase "$SUITE" "$dir" ${mirror:+"$mirror"} >"$work/debootstrap.log" 2>&1 ||
        {
            tail -n 20 "$work/debootstrap.log" >&2
            die "debootstrap failed; log: $work/debootstrap.log"
        }
    copy_apt_config "$dir"
    mount_into "$dir"
    say "installing the user's packages: ${USER_PACKAGES[*]}"
    {
        in_root "$dir" apt-get update -q &&
            in_root "$dir" apt-get install -y -q "${USER_PACKAGES[@]}" &&
            in_root "$dir" apt-get clean
    } >"$work/base-packages.log" 2>&1 || {
        tail -n 20 "$work/base-packages.log" >&2
        die "installing ${USER_PACKAGES[*]} failed; log: $work/base-packages.log"
    }
    kill_inside "$dir"
    unmount_all
    rm -rf "$dir/var/lib/apt/lists/"*
    echo "$SUITE minbase ${USER_PACKAGES[*]}" >"$dir/.netloop-fresh-base"
    base_building=""
}

started=$(date +%s)
if [[ -n "${NETLOOP_FRESH_BASE:-}" ]]; then
    base="$NETLOOP_FRESH_BASE"
    if [[ "$(cat "$base/.netloop-fresh-base" 2>/dev/null)" != "$SUITE minbase ${USER_PACKAGES[*]}" ]]; then
        [[ ! -e "$base" ]] || rm -rf --one-file-system "$base"
        build_base "$base"
    else
        say "reusing the base root $base"
    fi
    cp -a "$base" "$root"
    rm -f "$root/.netloop-fresh-base"
else
    build_base "$root"
    rm -f "$root/.netloop-fresh-base"
fi
copy_apt_config "$root" # the host's configuration may have changed since the base was built
copy_network_trust "$root"

# The host's Rust toolchain, read-only; cargo's own home is the root's, seeded
# with the host's crate cache unless asked to download.
mkdir -p "$root/root/.rustup" "$root/root/.cargo/bin"
mount_into "$root"
in_root "$root" update-ca-certificates >/dev/null 2>&1 || say "warning: update-ca-certificates failed in the root"
bind_ro "$rustup_home" "$root/root/.rustup"
bind_ro "$cargo_home/bin" "$root/root/.cargo/bin"
for f in config.toml config credentials.toml credentials; do
    [[ ! -f "$cargo_home/$f" ]] || cp "$cargo_home/$f" "$root/root/.cargo/"
done
if [[ "${NETLOOP_FRESH_CRATES:-copy}" == copy ]]; then
    for d in index cache; do
        [[ ! -d "$cargo_home/registry/$d" ]] || { mkdir -p "$root/root/.cargo/registry" && cp -a "$cargo_home/registry/$d" "$root/root/.cargo/registry/"; }
    done
fi

git clone -q --no-checkout "$repo" "$root/root/netloop"
git -C "$root/root/netloop" checkout -q --detach "$commit"
rust="$(in_root "$root" rustc --version)" || die "the host's Rust toolchain does not run inside the root"
say "root ready in $(($(date +%s) - started))s: Debian $(cat "$root/etc/debian_version") minbase + ${USER_PACKAGES[*]}, $rust"
say "checking $(git -C "$repo" log -1 --format='%h %s' "$commit")"

# Runs one README command inside the root; sets seconds and verdict.
run_command() {
    local cmd="$1" log="$2" t0
    say "running $cmd (log: $log)"
    t0=$(date +%s)
    if in_root "$root" NETLOOP_BUILD_JOBS="${NETLOOP_BUILD_JOBS:-2}" \
        bash -c "cd /root/netloop && $cmd" >"$log" 2>&1 </dev/null; then
        verdict=PASS
    else
        verdict=FAIL
    fi
    seconds=$(($(date +%s) - t0))
}

duration() { printf '%dm%02ds' $(($1 / 60)) $(($1 % 60)); }

report=()
overall=PASS
for cmd in scripts/demo.sh scripts/test.sh; do
    log="$work/$(basename "$cmd" .sh).log"
    run_command "$cmd" "$log"
    [[ "$verdict" == PASS ]] || overall=FAIL
    report+=("$(printf '  %-16s %s  %8s  %s' "$cmd" "$verdict" "$(duration "$seconds")" "$log")")
    if [[ "$verdict" == FAIL ]]; then
        say "$cmd failed; its first errors and last lines:"
        { grep -m 3 -iE '(^|[^a-z])error' "$log" || true; echo "    ..."; tail -n 10 "$log"; } | sed 's/^/    /' >&2
    fi
done

say "Debian $SUITE minbase + ${USER_PACKAGES[*]} + host Rust ($rust), commit ${commit:0:12}:"
printf '%s\n' "${report[@]}" >&2
say "$overall (total $(duration $(($(date +%s) - started))))"
[[ "$overall" == PASS ]]
