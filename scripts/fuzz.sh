#!/usr/bin/env bash
# Runs every fuzz target (fuzz/fuzz_targets) for SECONDS each (default 60), starting from the
# committed seeds in fuzz/seeds/<target> (read-only; new inputs go to a scratch corpus).
# Installs cargo-fuzz if missing. RUSTC_BOOTSTRAP=1 lets the stable toolchain take the
# sanitizer flags. Longer runs: scripts/fuzz.sh 3600, or one target:
#   cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -O site_toml -- -max_total_time=3600
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
seconds="${1:-60}"
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cd "$here/fuzz"
for target in swf_line swf_file site_toml sweep_toml model_csv option_values replay_table; do
  echo "== fuzz $target for ${seconds} s"
  mkdir -p "$scratch/$target"
  RUSTC_BOOTSTRAP=1 cargo fuzz run -O "$target" "$scratch/$target" "$here/fuzz/seeds/$target" -- \
    -max_total_time="$seconds" -print_final_stats=1 2>&1 | grep -E "^Done|stat::number_of_executed_units|ERROR|panicked" || true
  # cargo fuzz exits non-zero on a crash; pipefail is off for grep's sake, so check the artifacts
  if ls "$here/fuzz/artifacts/$target"/crash-* >/dev/null 2>&1; then
    echo "fuzz target $target crashed: see fuzz/artifacts/$target" >&2
    exit 1
  fi
done
