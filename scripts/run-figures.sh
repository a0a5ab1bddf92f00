#!/usr/bin/env bash
# The figures of one run (docs/guide/pictures.md): the default site of configs/paper.toml
# (250 users, 26 weeks, EASY on 3968 processors, seed 1) run with its Batsim-style jobs file, then
# `sitesim plot-run`: utilization and queue length over time, a Gantt chart of half a day, and the
# distributions of wait and response per runtime class.
#
#   scripts/run-figures.sh [OUT]     (default OUT: docs/run; the run's files go to a temporary directory)
#
# Writes OUT/*.png (plot-run also writes each figure's SVG, PDF and CSV; the README shows the
# PNGs only, so the others are removed here). The run takes about a second; the figures about as
# long.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/run}

cargo build --release --locked -p sitesim
sitesim=target/release/sitesim

files="$(mktemp -d)"
trap 'rm -rf "$files"' EXIT
"$sitesim" run --config configs/paper.toml --out "$files" --batsim-jobs >/dev/null
"$sitesim" plot-run "$files" --out "$out" --from 91.25 --days 0.5 --force
# the docs show the PNGs; the SVGs and PDFs of thousands of jobs are large
rm -f "$out"/*.svg "$out"/*.pdf "$out"/*.csv
