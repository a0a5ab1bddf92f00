#!/usr/bin/env python3
"""Shmueli & Feitelson (paper 000): the tables and numbers of docs/science/shmueli.md that come from
the paper's sweep (configs/sweeps/paper.toml), printed from a finished sweep's output directory.

    scripts/shmueli-table.py OUT

OUT is what `scripts/reproduce-paper.sh OUT [SEEDS]` (or `sitesim sweep configs/sweeps/paper.toml
--out OUT`) wrote: results.csv (means, 95 % intervals, paired differences against EASY on the same
seeds) and runs.csv (one value per run). reproduce-paper.sh calls this script at its end; the seed
count is the sweep's. Prints markdown (also written to OUT/shmueli-tables.md):

  - EASY and CREASY-6000 at 50 and 250 users: throughput, session length, utilization, mean
    response and mean slowdown, mean +- half width of the 95 % interval over the seeds;
  - every CREASY variant at 250 users, the same measures;
  - the paired change of every CREASY variant against EASY at 250 users (mean of per-seed ratios
    minus 1, results.csv's rel_diff, with its 95 % interval), and the largest such change of
    throughput and session length at 50 users;
  - CREASY-6000 against EASY per runtime class (mean response and mean slowdown of short, medium
    and long jobs), paired the same way;
  - EASY's session length at 50 and at 250 users, and its relative change (ratio of the means);
  - EASY's processor-hours per job at 250 users (per seed: processed work / jobs measured).

Only the standard library.
"""

import csv
import math
import sys
from collections import defaultdict
from pathlib import Path
from seedstats import mean_ci  # noqa: E402 (scripts/ is on sys.path)

MEASURES = [  # (metric, header, scale, digits, unit suffix)
    ("throughput_submitted_per_hour", "throughput (jobs/h)", 1.0, 1, ""),
    ("session_length_mean", "session length (jobs)", 1.0, 2, ""),
    ("utilization", "utilization", 100.0, 1, " %"),
    ("response_mean", "mean response (min)", 1 / 60, 1, ""),
    ("slowdown_mean", "mean slowdown", 1.0, 1, ""),
]
CREASY = ["creasy-1500", "creasy-3000", "creasy-4500", "creasy-6000"]
PAPER_THROUGHPUT_GAIN = {"creasy-1500": "+21", "creasy-3000": "+36", "creasy-4500": "+44",
                         "creasy-6000": "+51"}




def main():
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/shmueli-table.py OUT (a finished sweep of configs/sweeps/paper.toml)")
    out = Path(sys.argv[1])
    try:
        with (out / "results.csv").open(newline="") as f:
            rows = {(r["scheduler"], r["users"], r["metric"]): r for r in csv.DictReader(f)}
        per_run = defaultdict(dict)
        with (out / "runs.csv").open(newline="") as f:
            for r in csv.DictReader(f):
                per_run[(r["scheduler"], r["users"], int(r["seed"]))][r["metric"]] = r["value"]
    except (OSError, KeyError) as e:
        sys.exit(f"{out}: not a finished sweep of configs/sweeps/paper.toml ({e})")

    def row(sched, users, metric):
        r = rows.get((sched, users, metric))
        if r is None:
            sys.exit(f"{out}/results.csv: no row for {sched}, {users} users, {metric}")
        return r

    def num(r, key):
        """A results.csv value; NaN where it is empty (an interval over a single seed)."""
        return float(r[key]) if r.get(key) not in ("", None) else math.nan

    def level(sched, users, metric, scale, digits, unit=""):
        r = row(sched, users, metric)
        mean = num(r, "mean") * scale
        half = (num(r, "ci95_high") - num(r, "ci95_low")) / 2 * scale
        if math.isnan(half):
            return f"{mean:.{digits}f}{unit}"
        return f"{mean:.{digits}f} ± {half:.{digits}f}{unit}"

    def change(sched, users, metric, digits=1):
        r = row(sched, users, metric)
        m, lo, hi = (100 * num(r, k) for k in ("rel_diff_mean", "rel_diff_ci95_low",
                                               "rel_diff_ci95_high"))
        if math.isnan(lo):
            return f"{m:+.{digits}f}"
        return f"{m:+.{digits}f} [{lo:+.{digits}f}, {hi:+.{digits}f}]"

    seeds = row("easy", "250", "throughput_submitted_per_hour")["n"]
    lines = []
    say = lines.append
    header = "| " + " | ".join(h for _, h, *_ in MEASURES) + " |"
    rule = "|" + "---|" * len(MEASURES)

    def measures(sched, users):
        return " | ".join(level(sched, users, m, sc, d, u) for m, _, sc, d, u in MEASURES)

    say(f"## EASY and CREASY-6000 ({seeds} seeds; mean ± half width of the 95 % interval)")
    say("")
    say("| users | scheduler " + header)
    say("|---:|---" + rule)
    for users in ("50", "250"):
        for sched in ("easy", "creasy-6000"):
            say(f"| {users} | {sched.upper()} | {measures(sched, users)} |")
    say("")
    say(f"## Every scheduler at 250 users ({seeds} seeds; mean ± half width of the 95 % interval)")
    say("")
    say("| scheduler " + header)
    say("|---" + rule)
    for sched in ["easy", *CREASY]:
        say(f"| {sched.upper()} | {measures(sched, '250')} |")
    say("")
    say("## Paired change against EASY on the same seeds at 250 users (%, mean and 95 % interval)")
    say("")
    say("| scheduler | throughput | session length | mean response | mean slowdown | paper: throughput |")
    say("|---|---|---|---|---|---|")
    for sched in CREASY:
        say(f"| {sched.upper()} | {change(sched, '250', 'throughput_submitted_per_hour')} "
            f"| {change(sched, '250', 'session_length_mean')} "
            f"| {change(sched, '250', 'response_mean')} "
            f"| {change(sched, '250', 'slowdown_mean', 0)} | {PAPER_THROUGHPUT_GAIN[sched]} |")
    say("")
    for metric in ("throughput_submitted_per_hour", "session_length_mean"):
        largest = max(abs(float(row(s, "50", metric)["rel_diff_mean"])) for s in CREASY)
        say(f"At 50 users, the largest paired change of {metric} of a CREASY variant against EASY: "
            f"{100 * largest:.2f} %.")
    say("")
    say("## CREASY-6000 against EASY per runtime class at 250 users (%, paired, mean and 95 % interval)")
    say("")
    say("| measure | short | medium | long |")
    say("|---|---|---|---|")
    for name, what in (("mean response", "response_mean"), ("mean slowdown", "slowdown_mean")):
        cells = [change("creasy-6000", "250", f"{c}_{what}", 0) for c in ("short", "medium", "long")]
        say(f"| {name} | " + " | ".join(cells) + " |")
    say("")
    say("## EASY")
    say("")
    s50 = float(row("easy", "50", "session_length_mean")["mean"])
    s250 = float(row("easy", "250", "session_length_mean")["mean"])
    say(f"- Session length: {level('easy', '50', 'session_length_mean', 1, 2)} jobs at 50 users, "
        f"{level('easy', '250', 'session_length_mean', 1, 2)} at 250: {100 * (s250 / s50 - 1):+.1f} % "
        "(ratio of the means).")
    work = []
    for (sched, users, _), values in sorted(per_run.items()):
        if sched == "easy" and users == "250":
            work.append(float(values["processed_work"]) / float(values["jobs_measured"]) / 3600)
    mean, half = mean_ci(work)
    spread = f" ± {half:.1f}" if not math.isnan(half) else ""
    say(f"- Processor-hours per job at 250 users (per seed: processed work / jobs measured): "
        f"{mean:.1f}{spread} ({len(work)} seed{'s' if len(work) != 1 else ''}).")
    text = "\n".join(lines) + "\n"
    (out / "shmueli-tables.md").write_text(text)
    print(text, end="")


if __name__ == "__main__":
    main()
