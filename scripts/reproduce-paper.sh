#!/usr/bin/env bash
# The experiment of Shmueli & Feitelson (2009), section IV-B, end to end: the sweep of
# configs/sweeps/paper.toml (EASY and CREASY with alpha 1500-6000, 50-250 users, 26 weeks,
# 10 seeds: 250 runs), its results table, and Figs. 10-13.
#
#   scripts/reproduce-paper.sh [OUT]        (default OUT: results/paper)
#
# Writes OUT/results.csv (mean, 95 % confidence interval and paired difference against EASY of
# every measure) and OUT/figures/*.png|svg|pdf (and the .csv of each figure's points). Rerunning it after an interruption redoes only the
# runs without a result. With SITESIM_SLURM=1 the runs go to Slurm as a job array instead; run the
# script again once the array is done to merge and draw.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/paper}

cargo build --release --locked -p sitesim
sitesim=target/release/sitesim

if [ "${SITESIM_SLURM:-0}" = 1 ] && ! "$sitesim" sweep configs/sweeps/paper.toml --out "$out" --merge >/dev/null 2>&1; then
    "$sitesim" sweep configs/sweeps/paper.toml --out "$out" --slurm
    echo "submitted; run $0 $out again when the job array is done"
    exit 0
fi

start=$(date +%s%N)
"$sitesim" sweep configs/sweeps/paper.toml --out "$out"
end=$(date +%s%N)
"$sitesim" plot "$out" --out "$out/figures"
echo "sweep and table in $(awk "BEGIN { printf \"%.1f\", ($end - $start) / 1e9 }") s; table $out/results.csv, figures in $out/figures"
