#!/usr/bin/env bash
# Replays KTH-SP2, SDSC-SP2, CTC-SP2 and SDSC-BLUE (whole traces, machine size from each
# header) with feedback (Zakay & Feitelson, MASCOTS 2014; `sitesim replay --feedback`) under
# EASY, CREASY (alpha 1500, 3000, 6000) and EASY-SJF, and prints a Markdown table: throughput
# (jobs submitted per hour over the logged submit period), mean session length (jobs),
# utilization, mean response time (minutes) and mean slowdown. A second table says which jobs
# can move at all: only a job whose submit depends on a simulated end (a batch after a
# session's first, or the first batch of a session its user's previous one overran) is
# submitted at another time than logged; it gives those shares from the replay's structure and
# the share of jobs each scheduler actually moved (simulated submit != logged submit).
# Utilization and the averages are over the jobs submitted from the first to the last logged
# submit (the throughput window), so a job starved past the last arrival does not stretch it.
#
#   scripts/feedback-table.sh [OUT_DIR]    (default results/feedback-table)
#
# Set FIRST_JOBS=N to replay only each trace's first N jobs, ABANDON=1 to let users abandon
# sessions (--feedback-abandon, with SEED=S for the draws, default 1). Needs the release binary
# (cargo build --release) and python3 (for reading summary.json).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="${SITESIM_TRACES:-$here/../shared/traces}"
out="${1:-$here/results/feedback-table}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
extra=()
[ -n "${FIRST_JOBS:-}" ] && extra=(--first-jobs "$FIRST_JOBS")
[ -n "${ABANDON:-}" ] && extra+=(--feedback-abandon --seed "${SEED:-1}")

declare -A trace_file=(
  [KTH-SP2]=KTH-SP2-1996-2.1-cln.swf.gz
  [SDSC-SP2]=SDSC-SP2-1998-4.2-cln.swf.gz
  [CTC-SP2]=CTC-SP2-1996-3.1-cln.swf.gz
  [SDSC-BLUE]=SDSC-BLUE-2000-4.2-cln.swf.gz
)
trace_names=(KTH-SP2 SDSC-SP2 CTC-SP2 SDSC-BLUE)
# label, then the scheduler's flags
runs=("easy|--scheduler easy"
      "creasy-1500|--scheduler creasy --alpha 1500"
      "creasy-3000|--scheduler creasy --alpha 3000"
      "creasy-6000|--scheduler creasy --alpha 6000"
      "easy-sjf|--scheduler easy-sjf")
labels=()
for run in "${runs[@]}"; do labels+=("${run%%|*}"); done

for trace in "${trace_names[@]}"; do
  for run in "${runs[@]}"; do
    label="${run%%|*}"
    read -r -a flags <<< "${run#*|}"
    "$bin" replay "$traces/${trace_file[$trace]}" --feedback "${flags[@]}" "${extra[@]}" \
      --out "$out/$trace/$label" --force > /dev/null
  done
done

files=()
for trace in "${trace_names[@]}"; do files+=("$traces/${trace_file[$trace]}"); done
python3 - "$out" "${#trace_names[@]}" "${trace_names[@]}" "${files[@]}" "${labels[@]}" <<'PY'
import csv, gzip, json, sys
out, n = sys.argv[1], int(sys.argv[2])
traces, files, labels = sys.argv[3:3 + n], sys.argv[3 + n:3 + 2 * n], sys.argv[3 + 2 * n:]
print("| trace | scheduler | throughput (jobs/h) | session length (jobs) | utilization "
      "| mean response (min) | mean slowdown |")
print("|---|---|---:|---:|---:|---:|---:|")
for t in traces:
    for s in labels:
        with open(f"{out}/{t}/{s}/summary.json") as f:
            d = json.load(f)
        c, m = d["closed_loop"], d["summary"]
        print(f"| {t} | {s} | {c['submitted_per_hour']:.3f} | {c['mean_session_jobs']:.3f} "
              f"| {100 * m['utilization']:.1f} % | {m['response_seconds']['mean'] / 60:.1f} "
              f"| {m['slowdown']['mean']:.1f} |")

def logged_submits(path):
    submits = {}
    with gzip.open(path, "rt") as f:
        for line in f:
            fields = line.split()
            if fields and not line.startswith(";"):
                submits[int(fields[0])] = int(fields[1])
    return submits
print()
print("| trace | jobs | after an earlier batch | first in a session | scheduler | sessions delayed "
      "| jobs moved | jobs submitted after the last logged submit | last end after the last logged submit (days) |")
print("|---|---:|---:|---:|---|---:|---:|---:|---:|")
for t, path in zip(traces, files):
    logged = logged_submits(path)
    for s in labels:
        with open(f"{out}/{t}/{s}/summary.json") as f:
            d = json.load(f)
        fb, m = d["feedback"], d["summary"]
        jobs = m["jobs_simulated"]
        moved = 0
        with open(f"{out}/{t}/{s}/jobs.csv") as f:
            for row in csv.DictReader(f):
                moved += int(row["submit"]) != logged[int(row["job_id"])]
        share = lambda k: f"{k:,} ({100 * k / jobs:.1f} %)"
        print(f"| {t} | {jobs:,} | {share(fb['dependent_jobs'])} | {share(fb['session_start_jobs'])} "
              f"| {s} | {fb['delayed_sessions']:,} of {fb['sessions']:,} | {share(moved)} "
              f"| {share(jobs - m['jobs_measured'])} "
              f"| {(m['makespan']['end'] - d['closed_loop']['window']['end']) / 86400:.1f} |")
PY
