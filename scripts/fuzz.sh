#!/usr/bin/env bash
# Coverage-guided fuzzing of every decoder and parser (docs/robustness.md).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]   every target (or those named) SECONDS each (default 60)
#
# Rust targets (tests/fuzz, cargo fuzz + libFuzzer, AddressSanitizer):
#   frame_decoder, message_decoder   protocol's frame and message decoders
#   server_replies                   the master's handling of a server's replies
#   scenario_loader                  TOML + --set overrides -> validated scenario
#   sweep_loader, empirical_delay    sweep files, empirical delay files
# C++ targets (ns3-scenarios/fuzz, clang libFuzzer, ASan + UBSan):
#   wire_decoder_fuzz, session_fuzz  the server's frame decoder and session state machine
#   placement_fuzz                   --positions lists and topology files
#   message_framer_fuzz              the TCP control flows' message framer
#
# Fails on any crash, panic, sanitizer report, leak, timeout (an input taking
# more than 1 s) or out-of-memory (more than 512 MB). The corpora start from
# the golden frames and the example scenarios and grow in tests/fuzz/corpus/
# (git-ignored); a failing input is kept in tests/fuzz/artifacts/<target>/ and
# must become a regression test in the normal suite.
#
# cargo fuzz needs nightly compiler features (-Zsanitizer, sanitizer
# coverage); RUSTC_BOOTSTRAP=1 unlocks them on the stable toolchain, the only
# one this project uses. Installs what it needs: cargo-fuzz, clang and
# libFuzzer (Debian's clang and libclang-rt-dev).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"

seconds="${1:-60}"
shift || true
CARGO_FUZZ_VERSION=0.13.2
RUST_TARGETS=(frame_decoder message_decoder server_replies scenario_loader sweep_loader empirical_delay)
CPP_TARGETS=(wire_decoder_fuzz session_fuzz placement_fuzz message_framer_fuzz)
selected=("$@")
wanted() { ((${#selected[@]} == 0)) || [[ " ${selected[*]} " == *" $1 "* ]]; }

# --- tools --------------------------------------------------------------------
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
if ! command -v clang++ >/dev/null 2>&1 || ! compgen -G "/usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a" >/dev/null; then
    echo "fuzz: installing clang and libFuzzer" >&2
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get install -y -q clang libclang-rt-dev 2>/dev/null || {
        $sudo apt-get update -q
        # Debian 12 names the runtime package after the LLVM version.
        $sudo apt-get install -y -q clang "libclang-rt-$(clang --version 2>/dev/null | sed -n 's/.*version \([0-9]*\).*/\1/p' | head -1)-dev" ||
            $sudo apt-get install -y -q clang libclang-rt-14-dev
    }
fi
if ! cargo fuzz --version 2>/dev/null | grep -q "$CARGO_FUZZ_VERSION"; then
    echo "fuzz: installing cargo-fuzz $CARGO_FUZZ_VERSION" >&2
    cargo install --locked --version "$CARGO_FUZZ_VERSION" cargo-fuzz
fi

# --- build --------------------------------------------------------------------
export RUSTC_BOOTSTRAP=1
fuzz_dir="$root/tests/fuzz"
started=$(date +%s)
cpp_build="$root/ns3-scenarios/build-fuzz"
rust_bin="${NETLOOP_FUZZ_RUST_BIN:-$fuzz_dir/target/x86_64-unknown-linux-gnu/release}"
if [ -z "${NETLOOP_FUZZ_NO_BUILD:-}" ]; then # set it to reuse the last build
    # Release with debug assertions and overflow checks (cargo fuzz's default), ASan.
    cargo fuzz build --fuzz-dir "$fuzz_dir"
    cmake -S ns3-scenarios/fuzz -B "$cpp_build" -DCMAKE_CXX_COMPILER=clang++ >/dev/null
    cmake --build "$cpp_build" -j "${NETLOOP_BUILD_JOBS:-2}"
    echo "fuzz: built every target in $(($(date +%s) - started)) s"
fi

# --- seed corpora -------------------------------------------------------------
corpus="$fuzz_dir/corpus"
seed() { # seed <target> <name> <file or ->
    mkdir -p "$corpus/$1"
    if [ "$3" = - ]; then cat >"$corpus/$1/seed-$2"; else cp "$3" "$corpus/$1/seed-$2"; fi
}
unhex() { xxd -r -p 2>/dev/null || python3 -c 'import sys; sys.stdout.buffer.write(bytes.fromhex(sys.stdin.read().strip()))'; }
frames=()
while read -r name hex; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    frames+=("$name")
    printf '%s' "$hex" | unhex | seed frame_decoder "$name" -
    # message_decoder: a kind selector byte, then the payload (after the 12-byte header).
    kind=$((16#${hex:14:2}${hex:12:2} - 1))
    { printf "\\x$(printf %02x "$kind")"; printf '%s' "${hex:24}" | unhex; } | seed message_decoder "$name" -
    { printf '\x00'; printf '%s' "$hex" | unhex; } | seed wire_decoder_fuzz "$name" -
done <protocol/golden/frames.txt
while read -r name _ hex; do
    [[ -z "$name" || "$name" == \#* ]] && continue
    printf '%s' "$hex" | unhex | seed frame_decoder "bad-$name" -
done <protocol/golden/bad_frames.txt
hex_of() { sed -n "s/^$1 //p" protocol/golden/frames.txt; }
# A whole conversation for the session: Hello, Configure, Step, Finish (chunk byte first).
{ printf '\x07'; for f in hello configure step finish; do hex_of "$f" | unhex; done; } | seed session_fuzz conversation -
{ printf '\x00'; for f in hello configure step step finish; do hex_of "$f" | unhex; done; } | seed session_fuzz two-steps -
# Replies to the master: StepDone frames, then an Error (scheme byte, chunk byte first).
for scheme in 0 1 2; do
    { printf "\\x0$scheme\\x03"; for f in step_done step_done step_done error; do hex_of "$f" | unhex; done; } |
        seed server_replies "scheme$scheme" -
done
for f in examples/*.toml; do
    case "$f" in
    examples/sweep_*) seed sweep_loader "$(basename "$f")" "$f" ;;
    *) seed scenario_loader "$(basename "$f")" "$f" ;;
    esac
done
{ printf -- '--set loops[0].controller.kp=30\n--set duration=1s\n'; cat examples/dc_servo_p2p.toml; } | seed scenario_loader with-set -
printf '# delays, one a line\n2.5\n3\n1ms\n0.75 ms\n' | seed empirical_delay sample -
printf '0,0,0;10.5, 0, 0 ;21,0,1.5' | seed placement_fuzz positions -
printf '# platoon\n3\n0 0 0\n10.5, 0, 0   # commas\n21 0 0\n' | seed placement_fuzz topology -
printf '\x00\x00\x40\x01\x00\x20\x00\x00\x10\x01\x00\x30\x02\x00\x00' | seed message_framer_fuzz ops -

# --- run ----------------------------------------------------------------------
failed=()
last_executions() { # the executions libFuzzer reported last in a log, or 0
    local n
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -1)
    echo "${n:-0}"
}
# Runs one target for $seconds. libFuzzer stops at the first failure; a
# timeout whose input runs well within the limit when tried again alone was
# the machine's load (a descheduled process), not the input: it is reported
# and fuzzing goes on for the time left. Anything else fails the target.
run_target() { # run_target <name> <binary> [dictionary]
    local name=$1 binary=$2 dict=${3:-}
    local artifacts="$fuzz_dir/artifacts/$name/" log="$fuzz_dir/artifacts/$name.log"
    mkdir -p "$corpus/$name" "$artifacts"
    # session_fuzz builds and destroys a whole ns-3 simulation per input, and
    # ns-3 keeps about 14 KB of it after Simulator::Destroy (reachable, so no
    # leak report): 92 MB resident after 500 runs of one input, 143 MB after
    # 4000. Its resident limit leaves room for that growth over a campaign of
    # minutes; one allocation is still capped at 512 MB, as everywhere.
    local rss=512
    [ "$name" = session_fuzz ] && rss=2048
    local args=(-timeout=1 -rss_limit_mb=$rss -malloc_limit_mb=512 -detect_leaks=1
        -print_final_stats=1 -artifact_prefix="$artifacts")
    [ -n "$dict" ] && args+=(-dict="$dict")
    # ASan's quarantine (256 MB by default) counts as resident memory; 64 MB
    # still catches a use after free of anything freed in the last input.
    export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1:quarantine_size_mb=64 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
    echo "fuzz: $name for ${seconds}s" >&2
    local end=$(($(date +%s) + seconds)) executions=0 left
    : >"$log"
    while left=$((end - $(date +%s))) && ((left > 0)); do
        local before
        before=$(ls "$artifacts")
        if "$binary" "${args[@]}" -max_total_time="$left" "$corpus/$name" >>"$log" 2>&1; then
            executions=$((executions + $(last_executions "$log")))
            break
        fi
        executions=$((executions + $(last_executions "$log")))
        local found
        found=$(comm -13 <(echo "$before") <(ls "$artifacts") | head -1)
        if [[ "$found" == timeout-* ]] && "$binary" -timeout=1 -runs=3 "$artifacts$found" >>"$log" 2>&1; then
            echo "fuzz: $name: spurious timeout ($found runs in time alone: machine load); going on" >&2
            mv "$artifacts$found" "$artifacts/spurious-$found"
            continue
        fi
        echo "fuzz: $name FAILED; see $log and $artifacts$found" >&2
        tail -40 "$log" >&2
        failed+=("$name")
        return
    done
    echo "  executions: $executions" >&2
    grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -1 | sed 's/cov: \([0-9]*\) ft: \([0-9]*\)/  coverage: \1 edges, \2 features/' >&2
}
for t in "${RUST_TARGETS[@]}"; do
    dict=""
    case "$t" in frame_decoder | message_decoder | server_replies) dict="$fuzz_dir/dict/frames.dict" ;;
    scenario_loader | sweep_loader) dict="$fuzz_dir/dict/toml.dict" ;; esac
    wanted "$t" && run_target "$t" "$rust_bin/$t" "$dict"
done
for t in "${CPP_TARGETS[@]}"; do
    dict=""
    case "$t" in wire_decoder_fuzz | session_fuzz) dict="$fuzz_dir/dict/frames.dict" ;; esac
    wanted "$t" && run_target "$t" "$cpp_build/$t" "$dict"
done
if ((${#failed[@]})); then
    echo "fuzz: failures in ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: every target ran ${seconds}s without a failure ($(($(date +%s) - started)) s in all)"
