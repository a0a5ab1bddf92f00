#!/usr/bin/env bash
# Guim, Corbalan & Labarta's experiment (paper 001, section IV-VI): SJF-backfilling (easy-sjf) on
# the first 10,000 jobs of CTC-SP2 and SDSC-BLUE, nodes of 4 processors with 6000 MB/s of memory
# bandwidth, First Fit and First Continuous selection, without the sharing model (Table I) and
# with the HIGH, MED and LOW bandwidth mixes (Table II). Prints the table of docs/science/guim.md: 95th
# percentile of bounded slowdown and wait (seconds), killed jobs and % penalized runtime, beside
# the paper's values.
#
#   scripts/guim-table.sh [OUT_DIR] [SEED]    (default results/guim, seed 1)
#
# CTC runs on 512 processors (the machine's size, as in Tsafrir's thesis; its header's 338 is the
# batch partition), SDSC-BLUE on its header's 1152. Needs the release binary and python3.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="${SITESIM_TRACES:-$here/../shared/traces}"
out="${1:-$here/results/guim}"
seed="${2:-1}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)

declare -A file=([CTC]=CTC-SP2-1996-3.1-cln.swf.gz [SDSC]=SDSC-BLUE-2000-4.2-cln.swf.gz)
declare -A size=([CTC]=512 [SDSC]=1152)
for center in CTC SDSC; do
  for selection in first-fit first-continuous; do
    for mix in none high med low; do
      mix_flag=()
      [ "$mix" = none ] || mix_flag=(--bandwidth-mix "$mix")
      "$bin" replay "$traces/${file[$center]}" --scheduler easy-sjf --first-jobs 10000 \
        --processors "${size[$center]}" --node-processors 4 --node-bandwidth 6000 \
        --selection "$selection" "${mix_flag[@]}" --seed "$seed" \
        --out "$out/$center/$selection/$mix" > /dev/null
    done
  done
done

python3 - "$out" <<'PY'
import json, sys
out = sys.argv[1]
# Tables I and II of the paper: (B-SLD p95, WT p95 seconds, % PRT, killed jobs).
paper = {
    ("CTC", "none", "first-fit"): (1.9, 1390, None, 30), ("CTC", "none", "first-continuous"): (1.7, 3890, None, 30),
    ("SDSC", "none", "first-fit"): (32, 31008, None, 2), ("SDSC", "none", "first-continuous"): (64, 44301, None, 2),
    ("CTC", "high", "first-fit"): (4.2, 10286, 8.8, 428), ("CTC", "med", "first-fit"): (2.8, 8963, 4.8, 247),
    ("CTC", "low", "first-fit"): (2.2, 4898, 0.92, 64), ("CTC", "high", "first-continuous"): (3.5, 4527, 11.1, 527),
    ("CTC", "med", "first-continuous"): (3.1, 3755, 6.17, 333), ("CTC", "low", "first-continuous"): (2.1, 2679, 1.2, 80),
    ("SDSC", "high", "first-fit"): (99.3, 55667, 11.8, 475), ("SDSC", "med", "first-fit"): (55.4, 44346, 6.7, 255),
    ("SDSC", "low", "first-fit"): (37.7, 32730, 1.5, 51), ("SDSC", "high", "first-continuous"): (197, 96803, 13.8, 548),
    ("SDSC", "med", "first-continuous"): (149, 62883, 7.5, 307), ("SDSC", "low", "first-continuous"): (85.9, 44940, 1.4, 66),
}
short = {"first-fit": "FF", "first-continuous": "FC"}
print("| center | bandwidth mix | RSP | B-SLD p95, paper / ours | WT p95 (s), paper / ours | % PRT, paper / ours | killed jobs, paper / ours |")
print("|---|---|---|---|---|---|---|")
for center in ("CTC", "SDSC"):
    for mix in ("none", "high", "med", "low"):
        for selection in ("first-fit", "first-continuous"):
            with open(f"{out}/{center}/{selection}/{mix}/summary.json") as f:
                s = json.load(f)["summary"]
            b, w, prt, k = paper[(center, mix, selection)]
            ours_prt = f"{s['penalized_runtime_percent']:.2f}" if mix != "none" else "–"
            paper_prt = f"{prt}" if prt is not None else "–"
            label = "none (Table I)" if mix == "none" else mix.upper()
            print(f"| {center} | {label} | {short[selection]} | {b} / {s['bounded_slowdown']['p95']:.1f} | "
                  f"{w:,} / {s['wait_seconds']['p95']:,.0f} | {paper_prt} / {ours_prt} | {k} / {s['jobs_killed']} |")
PY
