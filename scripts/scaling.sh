#!/usr/bin/env bash
# How the cost of a simulated job scales with the site (issue 17): whole-process wall time, jobs
# per second and peak resident memory of `sitesim run` (EASY, the default site) for 250, 1,000,
# 4,000 and 10,000 users over 26 weeks, and for 250 users over 26, 104 and 520 weeks; then the
# EASY replay of SDSC-BLUE and the paper's sweep. Prints a Markdown table (docs/development/performance.md's).
#
#   scripts/scaling.sh [OUT_DIR] [REPEATS]    (default results/scaling, 3 repeats; the best is kept)
#
# Then (issue 31) the cost of a simulated job per scheduler at 250 and 10,000 users, and their
# ratio: SCALING_SCHEDULERS (default "easy creasy conservative dynp dynp-advanced slurm
# slurm-site") over SCALING_WEEKS weeks (default 26), each run once (REPEATS applies to the first
# table only). A scheduler that does not scale takes hours at 10,000 users over 26 weeks: give
# fewer weeks to measure its ratio (the line is per simulated job).
#
# Needs the release binary, GNU time (/usr/bin/time) and python3. Times are wall clock on
# whatever machine runs it: run it on a quiet one.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="${SITESIM_TRACES:-$here/../shared/traces}"
out="${1:-$here/results/scaling}"
repeats="${2:-3}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
[ -x /usr/bin/time ] || { echo "scaling.sh needs GNU time (/usr/bin/time; Debian: apt-get install time)" >&2; exit 1; }
mkdir -p "$out"

# measure LABEL JOBS_FROM -- COMMAND...: best wall time and its peak memory over the repeats.
# The wall time is read from the nanosecond clock around the run (GNU time's own figure has a
# resolution of 10 ms, a twentieth of the 250-user run); GNU time gives the peak memory.
measure() {
  local label="$1" jobs_from="$2"; shift 3
  local best="" mem=""
  for _ in $(seq "$repeats"); do
    rm -rf "$out/$label"
    local started ended seconds kb
    started="$(date +%s%N)"
    /usr/bin/time -f "%M" -o "$out/$label.time" "$@" --out "$out/$label" >/dev/null 2>&1
    ended="$(date +%s%N)"
    seconds="$(python3 -c "print(($ended - $started) / 1e9)")"
    read -r kb < "$out/$label.time"
    if [ -z "$best" ] || python3 -c "import sys; sys.exit(0 if $seconds < $best else 1)"; then
      best="$seconds"; mem="$kb"
    fi
  done
  local jobs
  jobs="$(python3 - "$out/$label/$jobs_from" <<'EOF'
import json, sys
path = sys.argv[1]
if path.endswith("summary.json"):
    print(json.load(open(path))["summary"]["jobs_simulated"])
else:  # a sweep's results.csv: one row per configuration and metric, mean over n seeds
    import csv
    rows = [r for r in csv.DictReader(open(path)) if r["metric"] == "jobs_simulated"]
    print(round(sum(int(r["n"]) * float(r["mean"]) for r in rows)))
EOF
)"
  python3 - "$label" "$best" "$mem" "$jobs" <<'EOF'
import sys
label, seconds, kb, jobs = sys.argv[1], float(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
per = f"{jobs / seconds:,.0f}" if seconds > 0 else "-"
print(f"| {label} | {jobs:,} | {seconds:.3f} | {per} | {kb / 1024:,.0f} |")
EOF
  echo "$label $best $jobs" >> "$out/best.txt"
}

rm -f "$out/best.txt"

echo "| command | jobs | seconds | jobs per second | peak memory (MB) |"
echo "|---|---:|---:|---:|---:|"
for users in 250 1000 4000 10000; do
  measure "run-users-$users-weeks-26" summary.json -- "$bin" run --users "$users" --weeks 26
done
for weeks in 104 520; do
  measure "run-users-250-weeks-$weeks" summary.json -- "$bin" run --users 250 --weeks "$weeks"
done
blue="$traces/SDSC-BLUE-2000-4.2-cln.swf.gz"
measure replay-SDSC-BLUE-easy summary.json -- "$bin" replay "$blue" --scheduler easy
measure replay-SDSC-BLUE-conservative summary.json -- "$bin" replay "$blue" --scheduler conservative
measure replay-SDSC-BLUE-dynp-advanced summary.json -- "$bin" replay "$blue" --scheduler dynp-advanced
measure replay-SDSC-BLUE-slurm summary.json -- "$bin" replay "$blue" --scheduler slurm
measure replay-SDSC-BLUE-slurm-site summary.json -- "$bin" replay "$blue" --scheduler slurm-site
measure sweep-paper results.csv -- "$bin" sweep "$here/configs/sweeps/paper.toml"

# Issue 31's line: every scheduler's cost per simulated job at 10,000 users against 250.
schedulers="${SCALING_SCHEDULERS:-easy creasy conservative dynp dynp-advanced slurm slurm-site}"
weeks="${SCALING_WEEKS:-26}"
table_repeats="$repeats"
repeats=1
echo
echo "| scheduler | users | jobs | seconds | jobs per second | peak memory (MB) |"
echo "|---|---:|---:|---:|---:|---:|"
for scheduler in $schedulers; do
  for users in 250 10000; do
    label="sched-$scheduler-users-$users-weeks-$weeks"
    measure "$label" summary.json -- "$bin" run --users "$users" --weeks "$weeks" --scheduler "$scheduler" \
      | sed "s/^| $label |/| $scheduler | $users |/"
  done
done
repeats="$table_repeats"
# shellcheck disable=SC2086 # the schedulers are separate arguments
python3 - "$out/best.txt" "$weeks" $schedulers <<'EOF'
import sys
best = {label: (float(seconds), int(jobs)) for label, seconds, jobs in
        (line.split() for line in open(sys.argv[1]))}
weeks = sys.argv[2]
print(f"\nPer simulated job, 10,000 users against 250 ({weeks} weeks):")
for scheduler in sys.argv[3:]:
    (s10, j10) = best[f"sched-{scheduler}-users-10000-weeks-{weeks}"]
    (s250, j250) = best[f"sched-{scheduler}-users-250-weeks-{weeks}"]
    per10, per250 = s10 / j10 * 1e6, s250 / j250 * 1e6
    print(f"  {scheduler:<14} {per250:8.2f} us at 250, {per10:8.2f} us at 10,000: {per10 / per250:6.2f} times")
EOF

# Issue 17's first line: the cost of a simulated job at 10,000 users against 250 (26 weeks).
python3 - "$out/best.txt" <<'EOF'
import sys
best = {label: (float(seconds), int(jobs)) for label, seconds, jobs in
        (line.split() for line in open(sys.argv[1]))}
(s10, j10), (s250, j250) = best["run-users-10000-weeks-26"], best["run-users-250-weeks-26"]
per10, per250 = s10 / j10 * 1e6, s250 / j250 * 1e6
print(f"\nPer simulated job: {per10:.3f} us at 10,000 users, {per250:.3f} us at 250 users: "
      f"{per10 / per250:.2f} times.")
# Issue 30's line: Slurm's model (default parameters) against EASY on SDSC-BLUE.
slurm, easy = best["replay-SDSC-BLUE-slurm"][0], best["replay-SDSC-BLUE-easy"][0]
print(f"SDSC-BLUE replay: slurm {slurm:.3f} s, EASY {easy:.3f} s: {slurm / easy:.2f} times.")
EOF
