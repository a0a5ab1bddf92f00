#!/usr/bin/env bash
# The Slurm model's speed lines (issue 44), in instructions (valgrind's cachegrind, exact and
# repeatable on a shared machine): the closed loop under `slurm` at 10,000 users for a week
# against 250 users for a week and for 26 weeks (per job), and `slurm-site` against EASY on
# SDSC-BLUE. Prints one line per run and the ratios.
#
#   scripts/slurm-speed.sh [BINARY]
#
# BINARY defaults to target/release/sitesim (built if missing). Takes about 10 minutes on 2
# cores (two runs at a time).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="$(cd "${SITESIM_TRACES:-$here/../shared/traces}" && pwd)"
bin="${1:-$here/target/release/sitesim}"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
command -v valgrind > /dev/null || { echo "valgrind is needed" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# one run: NAME ARGS... ; its instruction count in WORK/NAME.ir, its job count in WORK/NAME.jobs
run() {
  local name="$1"; shift
  valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
    "$bin" -q "$@" --out "$work/$name" 2> "$work/$name.log" > /dev/null
  grep -o 'I *refs: *[0-9,]*' "$work/$name.log" | tr -dc '0-9' > "$work/$name.ir"
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['jobs_simulated'])" \
    "$work/$name/summary.json" > "$work/$name.jobs"
}

run site-10000-1 --users 10000 --weeks 1 --scheduler slurm &
run site-250-26 --users 250 --weeks 26 --scheduler slurm
wait
run site-250-1 --users 250 --weeks 1 --scheduler slurm &
run blue-easy replay "$traces/SDSC-BLUE-2000-4.2-cln.swf.gz" --scheduler easy
wait
run blue-slurm-site replay "$traces/SDSC-BLUE-2000-4.2-cln.swf.gz" --scheduler slurm-site

python3 - "$work" <<'PY'
import sys, pathlib
work = pathlib.Path(sys.argv[1])
runs = {}
for name in ["site-10000-1", "site-250-1", "site-250-26", "blue-easy", "blue-slurm-site"]:
    ir = int((work / f"{name}.ir").read_text())
    jobs = int((work / f"{name}.jobs").read_text())
    runs[name] = (ir, jobs)
    print(f"{name:16} {ir:>16,} instructions {jobs:>8,} jobs {ir / jobs:>12,.0f} a job")
per = {k: ir / jobs for k, (ir, jobs) in runs.items()}
print(f"10,000 users against 250 users, one week: {per['site-10000-1'] / per['site-250-1']:.2f}x per job (target at most 5)")
print(f"10,000 users against 250 users, 26 weeks: {per['site-10000-1'] / per['site-250-26']:.2f}x per job")
print(f"slurm-site against EASY on SDSC-BLUE: {runs['blue-slurm-site'][0] / runs['blue-easy'][0]:.2f}x (target at most 6)")
PY
