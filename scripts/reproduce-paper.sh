#!/usr/bin/env bash
# The experiment of Shmueli & Feitelson (2009), section IV-B, end to end: the sweep of
# configs/sweeps/paper.toml (EASY and CREASY with alpha 1500-6000, 50-250 users, 26 weeks,
# 10 seeds: 250 runs), its results table, and Figs. 10-13.
#
#   scripts/reproduce-paper.sh [OUT] [SEEDS]    (default OUT: results/paper; SEEDS: the sweep
#                                                file's 10)
#
# Writes OUT/results.csv (mean, 95 % confidence interval and paired difference against EASY of
# every measure), OUT/figures/*.png|svg|pdf (and the .csv of each figure's points) and
# OUT/shmueli-tables.md, the tables of docs/science/shmueli.md (scripts/shmueli-table.py, which
# also prints them). Rerunning it after an interruption redoes only the
# runs without a result. With SITESIM_SLURM=1 the runs go to Slurm as a job array instead; run the
# script again once the array is done to merge and draw.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-results/paper}
seeds=${2:-}

cargo build --release --locked -p sitesim
sitesim=target/release/sitesim
sweep=configs/sweeps/paper.toml
if [ -n "$seeds" ]; then
    # The same sweep over seeds 1..SEEDS: a copy with its count changed, beside the outputs (the
    # site path made absolute, since it is relative to the sweep file).
    mkdir -p "$out"
    sed -e "s/^seeds = { first = 1, count = [0-9]* }/seeds = { first = 1, count = $seeds }/" \
        -e "s|^site = \"../paper.toml\"|site = \"$PWD/configs/paper.toml\"|" \
        configs/sweeps/paper.toml > "$out/paper-sweep.toml"
    sweep="$out/paper-sweep.toml"
fi

if [ "${SITESIM_SLURM:-0}" = 1 ] && ! "$sitesim" sweep "$sweep" --out "$out" --merge --per-seed >/dev/null 2>&1; then
    "$sitesim" sweep "$sweep" --out "$out" --slurm
    echo "submitted; run $0 $out again when the job array is done"
    exit 0
fi

start=$(date +%s%N)
"$sitesim" sweep "$sweep" --out "$out" --per-seed
end=$(date +%s%N)
"$sitesim" plot "$out" --out "$out/figures" --force
python3 scripts/shmueli-table.py "$out"
echo "sweep and table in $(awk "BEGIN { printf \"%.1f\", ($end - $start) / 1e9 }") s; table $out/results.csv, figures in $out/figures"
