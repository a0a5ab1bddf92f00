#!/usr/bin/env bash
# Schlagkamp's artificial setup (paper 004): how long after Friday 17:00 the machine's last job of
# the week ends, i.e. how long the queue takes to empty once the users stop submitting for the
# weekend (docs/science/schlagkamp.md, "The measurement window is ruled out"). Runs FCFS and EASY
# on 128 cores with p_a = 1 (every user active every week) and the think times lin and c120, over
# seeds 1..SEEDS, keeping every run's jobs.csv, and prints per setup and overall: the latest end of
# a job after a Friday 17:00 (hours; the largest over the ten weeks of a run, then over the runs,
# and the mean over runs with its 95 % interval), the jobs submitted outside Monday-Friday
# 09:00-17:00, and the jobs still running at a Monday 00:00 (55 h after Friday 17:00).
#
#   scripts/schlagkamp-queue-empty.sh [SEEDS] [OUT_DIR]   (default 20 seeds,
#                                                         results/schlagkamp-queue-empty)
#
# Needs the release binary (cargo build --release) and python3. 20 seeds: 80 runs, seconds.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
seeds="${1:-20}"
out="${2:-$here/results/schlagkamp-queue-empty}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
case "$seeds" in
    ''|*[!0-9]*) echo "SEEDS must be a positive integer, not '$seeds'" >&2; exit 2 ;;
esac
[ "$seeds" -ge 2 ] || { echo "SEEDS must be at least 2 (intervals need two seeds)" >&2; exit 2; }
rm -rf "$out"
mkdir -p "$out"
# configs/schlagkamp.toml with p_a = 1 (its activity_ratio line replaced)
sed 's/^activity_ratio = 0.5 .*$/activity_ratio = 1.0/' "$here/configs/schlagkamp.toml" > "$out/site.toml"
grep -q '^activity_ratio = 1.0$' "$out/site.toml" \
    || { echo "configs/schlagkamp.toml: no activity_ratio line to set" >&2; exit 1; }
cat > "$out/sweep.toml" <<EOF
site = "site.toml"
seeds = { first = 1, count = $seeds }
outputs = ["jobs.csv"]

[[axes]]
name = "scheduler"
key = "scheduler"
values = [{ policy = "fcfs" }, { policy = "easy" }]

[[axes]]
name = "cores"
key = "site.processors"
values = [128]

[[axes]]
name = "think"
key = "groups.0.think"
values = ["c120", "lin"]

[report]
measures = ["response_mean"]
EOF
"$bin" sweep "$out/sweep.toml" --out "$out/out" ${JOBS:+--jobs "$JOBS"} > /dev/null

python3 - "$out/out/runs" <<'PY'
import csv, math, os, statistics, sys
from collections import defaultdict
runs_dir = sys.argv[1]
DAY, WEEK = 86400, 7 * 86400
FRIDAY_17 = 4 * DAY + 17 * 3600   # the run starts on a Monday at 00:00 (configs/schlagkamp.toml)
T = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]
def t975(df):
    if df <= len(T):
        return T[df - 1]
    z, v = 1.959964, float(df)
    return (z + (z**3 + z) / (4 * v) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * v**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * v**3))
latest = defaultdict(list)       # setup -> per run: hours after Friday 17:00 of the latest end
outside = defaultdict(int)       # setup -> jobs submitted outside Mon-Fri 09:00-17:00
at_monday = defaultdict(int)     # setup -> jobs running at a Monday 00:00
for run in sorted(os.listdir(runs_dir)):
    path = os.path.join(runs_dir, run, "jobs.csv")
    if not os.path.isfile(path):
        continue
    parts = dict(p.split("-", 1) for p in run.split("_"))
    setup = (parts["scheduler"], parts["think"])
    worst = -math.inf
    with open(path, newline="") as f:
        for job in csv.DictReader(f):
            submit, start, end = float(job["submit"]), float(job["start"]), float(job["end"])
            week, into = divmod(submit, WEEK)
            if into >= 5 * DAY or into % DAY < 9 * 3600 or into % DAY > 17 * 3600:
                outside[setup] += 1
            worst = max(worst, (end - (week * WEEK + FRIDAY_17)) / 3600)
            monday = (week + 1) * WEEK
            if start < monday < end:
                at_monday[setup] += 1
    latest[setup].append(worst)
if not latest:
    sys.exit(f"{runs_dir}: no jobs.csv")
print("| scheduler | think | runs | latest end after Friday 17:00, max (h) | mean over runs (h) "
      "| jobs submitted outside Mon-Fri 09:00-17:00 | jobs running at a Monday 00:00 |")
print("|---|---|---:|---:|---|---:|---:|")
every = []
for (sched, think), hours in sorted(latest.items()):
    every += hours
    m = statistics.fmean(hours)
    h = t975(len(hours) - 1) * statistics.stdev(hours) / math.sqrt(len(hours)) if len(hours) > 1 else math.nan
    print(f"| {sched.upper()} | {think} | {len(hours)} | {max(hours):.1f} | {m:.1f} ± {h:.1f} "
          f"| {outside[(sched, think)]} | {at_monday[(sched, think)]} |")
print()
m = statistics.fmean(every)
h = t975(len(every) - 1) * statistics.stdev(every) / math.sqrt(len(every)) if len(every) > 1 else math.nan
print(f"All {len(every)} runs: the last job of a week ended at most {max(every):.1f} h after Friday 17:00 "
      f"(a run's latest: {m:.1f} ± {h:.1f} h on average; Monday 00:00 is 55 h after it); "
      f"jobs running at a Monday 00:00: {sum(at_monday.values())}.")
PY
