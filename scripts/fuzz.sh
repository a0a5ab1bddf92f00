#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets) for SECONDS each (default 60), starting from the
# committed seeds in fuzz/seeds/<target> (read-only; new inputs go to a scratch corpus), JOBS
# targets at a time (default 1; libFuzzer fuzzes on one core, so on an idle machine up to one
# target per core gets a whole core for its SECONDS).
#
# The targets are built by cargo itself with the flags `cargo fuzz build -O` gives rustc
# (libFuzzer's sanitizer coverage, AddressSanitizer, `--cfg fuzzing`, release with debug info, one
# codegen unit: cargo-fuzz's src/project.rs), so this needs no `cargo install cargo-fuzz` (minutes
# of compiling on CI's fresh machine). RUSTC_BOOTSTRAP=1 lets the stable toolchain take the
# sanitizer flags. Each binary is then run as `cargo fuzz run` runs it. A crash fails the script
# and leaves its input in fuzz/artifacts/<target>/. Longer runs: scripts/fuzz.sh 3600, or one
# target with cargo-fuzz installed:
#   cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -O site_toml -- -max_total_time=3600
#
#   scripts/fuzz.sh [SECONDS [JOBS]]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
jobs="${2:-1}"
targets=(swf_line swf_file site_toml sweep_toml model_csv option_values replay_table traces)

# cargo fuzz builds for the host triple given explicitly, so that RUSTFLAGS reach the targets'
# code but not build scripts and proc macros.
triple="$(rustc -vV | sed -n 's/^host: //p')"
rustflags=(
    -Cpasses=sancov-module
    -Cllvm-args=-sanitizer-coverage-level=4
    -Cllvm-args=-sanitizer-coverage-inline-8bit-counters
    -Cllvm-args=-sanitizer-coverage-pc-table
    -Cllvm-args=-sanitizer-coverage-trace-compares
    -Cllvm-args=-simplifycfg-branch-fold-threshold=0
    --cfg fuzzing
    -Clink-dead-code
    -Zsanitizer=address
    -Cllvm-args=-sanitizer-coverage-stack-depth
    -Ccodegen-units=1
)
# fuzz/target, as cargo fuzz uses, whatever CARGO_TARGET_DIR says: fuzz/ is a workspace of its
# own whose every crate is built with these flags, so nothing of another build can be reused, and
# a directory of its own lets it build while the main workspace builds (CI runs both at once).
target_dir="$here/fuzz/target"
echo "== fuzz: building ${#targets[@]} targets (release, AddressSanitizer, sanitizer coverage)"
# (At a lower priority than the fuzzing: on a busy machine, as in CI, a target's wall-clock
# budget keeps its processor.)
RUSTC_BOOTSTRAP=1 RUSTFLAGS="${rustflags[*]}${RUSTFLAGS:+ $RUSTFLAGS}" CARGO_FUZZ=1 \
    CARGO_FUZZ_MANIFEST="$here/fuzz/Cargo.toml" \
    nice -n 10 cargo build --manifest-path "$here/fuzz/Cargo.toml" --target "$triple" --release \
    --config profile.release.debug=true --target-dir "$target_dir" --bins
bin_dir="$target_dir/$triple/release"

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
# cargo fuzz's default for AddressSanitizer.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"

# fuzz TARGET: one libFuzzer run, its output in $scratch/TARGET.log; returns libFuzzer's status.
fuzz() {
    local target="$1"
    mkdir -p "$scratch/$target" "$here/fuzz/artifacts/$target"
    "$bin_dir/$target" -artifact_prefix="$here/fuzz/artifacts/$target/" \
        -max_total_time="$seconds" -print_final_stats=1 \
        "$scratch/$target" "$here/fuzz/seeds/$target" >"$scratch/$target.log" 2>&1
}

failed=()
# report TARGET STATUS: its summary lines; a non-zero status or a crash input is a failure.
report() {
    local target="$1" status="$2"
    echo "== fuzz $target for ${seconds} s"
    grep -E "^Done|stat::number_of_executed_units|ERROR|panicked" "$scratch/$target.log" || true
    if [ "$status" -ne 0 ] || ls "$here/fuzz/artifacts/$target"/crash-* >/dev/null 2>&1; then
        echo "fuzz target $target failed (status $status); its output follows, its input is in fuzz/artifacts/$target" >&2
        tail -n 60 "$scratch/$target.log" >&2
        failed+=("$target")
    fi
}

# At most $jobs at a time; each is reported when it ends, in order.
declare -A pids=()
running=()
for target in "${targets[@]}"; do
    while [ "${#running[@]}" -ge "$jobs" ]; do
        first="${running[0]}"
        status=0
        wait "${pids[$first]}" || status=$?
        report "$first" "$status"
        running=("${running[@]:1}")
    done
    fuzz "$target" &
    pids[$target]=$!
    running+=("$target")
done
for target in "${running[@]}"; do
    status=0
    wait "${pids[$target]}" || status=$?
    report "$target" "$status"
done

if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz: failed: ${failed[*]}" >&2
    exit 1
fi
echo "fuzz: ${#targets[@]} targets ran ${seconds} s each without a crash"
