#!/usr/bin/env bash
# The figures of a replay sweep (docs/guide/sweeps.md, "Sweeps over traces"): configs/sweeps/traces.toml (KTH-SP2,
# SDSC-SP2 and CTC-SP2 under EASY, conservative and CREASY-6000, 5 shaken versions each), then
# `sitesim plot --x trace` of two chosen measures: a categorical x axis (one dot and 95 % interval
# per scheduler and trace, no joining lines).
#
#   scripts/trace-sweep-figures.sh [OUT] [SEEDS]   (default OUT: docs/traces; SEEDS: the sweep
#                                                   file's 5 shaken versions; the sweep's results
#                                                   go to a temporary directory)
#
# Writes OUT/wait_mean.png and OUT/bounded_slowdown_mean.png (the SVG, PDF and CSV that plot
# writes beside each are removed: the README shows the PNGs). The sweep takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/traces}
seeds=${2:-}

cargo build --release --locked -p sitesim
sitesim=target/release/sitesim

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
sweep=configs/sweeps/traces.toml
if [ -n "$seeds" ]; then
    # The same sweep over seeds 1..SEEDS: a copy with its count changed (the trace paths made
    # absolute, since they are relative to the sweep file).
    sed -e "s/^seeds = { first = 1, count = [0-9]* }/seeds = { first = 1, count = $seeds }/" \
        -e "s|^  \"\.\./\.\./\.\./shared/traces/|  \"$PWD/configs/sweeps/../../../shared/traces/|" \
        "$sweep" > "$results/traces.toml"
    grep -q "^seeds = { first = 1, count = $seeds }" "$results/traces.toml" \
        || { echo "$sweep: cannot set its seed count" >&2; exit 1; }
    sweep="$results/traces.toml"
fi
"$sitesim" sweep "$sweep" --out "$results/traces"
"$sitesim" plot "$results/traces" --out "$out" --x trace --measure wait_mean --measure bounded_slowdown_mean --force
rm -f "$out"/*.svg "$out"/*.pdf "$out"/*.csv
