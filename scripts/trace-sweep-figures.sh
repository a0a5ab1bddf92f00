#!/usr/bin/env bash
# The figures of a replay sweep (docs/guide/sweeps.md, "Sweeps over traces"): configs/sweeps/traces.toml (KTH-SP2,
# SDSC-SP2 and CTC-SP2 under EASY, conservative and CREASY-6000, 5 shaken versions each), then
# `sitesim plot --x trace` of two chosen measures: a categorical x axis (one dot and 95 % interval
# per scheduler and trace, no joining lines).
#
#   scripts/trace-sweep-figures.sh [OUT]   (default OUT: docs/traces; the sweep's results go to a temporary directory)
#
# Writes OUT/wait_mean.png and OUT/bounded_slowdown_mean.png (the SVG, PDF and CSV that plot
# writes beside each are removed: the README shows the PNGs). The sweep takes a few seconds.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/traces}

cargo build --release --locked -p sitesim
sitesim=target/release/sitesim

results="$(mktemp -d)"
trap 'rm -rf "$results"' EXIT
"$sitesim" sweep configs/sweeps/traces.toml --out "$results/traces"
"$sitesim" plot "$results/traces" --out "$out" --x trace --measure wait_mean --measure bounded_slowdown_mean
rm -f "$out"/*.svg "$out"/*.pdf "$out"/*.csv
