#!/usr/bin/env bash
# Replay with feedback and abandonment (`sitesim replay --feedback --feedback-abandon`) of
# KTH-SP2, SDSC-SP2, CTC-SP2 and SDSC-BLUE under EASY, CREASY (1500, 3000, 6000) and EASY-SJF,
# over SEEDS seeds (default 5; the seed drives the users' abandonment draws), and a Markdown
# table of throughput and session length: the mean over the seeds and, against EASY on the same
# seeds, the paired relative difference with its 95 % interval (Student t).
#
#   scripts/feedback-abandon.sh [OUT_DIR]    (default results/feedback-abandon)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/results/feedback-abandon}"
seeds="${SEEDS:-5}"
for seed in $(seq 1 "$seeds"); do
  ABANDON=1 SEED="$seed" FIRST_JOBS="${FIRST_JOBS:-}" "$here/scripts/feedback-table.sh" "$out/seed-$seed" > /dev/null
done
python3 - "$out" "$seeds" <<'PY'
import json, math, sys
out, seeds = sys.argv[1], int(sys.argv[2])
traces = ["KTH-SP2", "SDSC-SP2", "CTC-SP2", "SDSC-BLUE"]
labels = ["easy", "creasy-1500", "creasy-3000", "creasy-6000", "easy-sjf"]
# Student t 97.5 % quantiles for n - 1 degrees of freedom
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}
def value(seed, trace, label, key):
    with open(f"{out}/seed-{seed}/{trace}/{label}/summary.json") as f:
        return json.load(f)["closed_loop"][key]
def cell(trace, label, key):
    xs = [value(s, trace, label, key) for s in range(1, seeds + 1)]
    mean = sum(xs) / len(xs)
    if label == "easy" or seeds < 2:
        return f"{mean:.3f}"
    base = [value(s, trace, "easy", key) for s in range(1, seeds + 1)]
    d = [100 * (x / b - 1) for x, b in zip(xs, base)]
    m = sum(d) / len(d)
    sd = math.sqrt(sum((v - m) ** 2 for v in d) / (len(d) - 1))
    h = T.get(len(d) - 1, 1.96) * sd / math.sqrt(len(d))
    return f"{mean:.3f} ({m:+.2f} % [{m - h:+.2f}, {m + h:+.2f}])"
print(f"| trace | scheduler | throughput (jobs/h; vs EASY) | session length (jobs; vs EASY) |")
print("|---|---|---|---|")
for t in traces:
    for s in labels:
        print(f"| {t} | {s} | {cell(t, s, 'submitted_per_hour')} | {cell(t, s, 'mean_session_jobs')} |")
PY
