#!/usr/bin/env python3
"""Slurm's fair-share in the closed loop: the study of docs/science/slurm.md.

    scripts/slurm-study.py OUT [SEEDS] [--binary PATH] [--jobs J] [--tables-only]

Runs two sweeps with the sitesim binary (default target/release/sitesim, built if missing):

1. configs/sweeps/slurm-study.toml: the default site's 250 users, 26 weeks, 20 seeds, under
   EASY, CREASY-6000, Slurm's defaults and the multifactor documentation's example site
   (slurm-site) with the decay half-life (1 or 14 days), the fair-share weight (1000 or 10000)
   and the backfill depth (50 or 500 jobs tested) varied; paired against EASY, with headroom;
   summary.json of every run kept.
2. configs/sweeps/slurm-gaming.toml: 10 heavy users (who never stop) and 240 light ones under
   EASY and slurm-site with the half-life from 1 hour to 28 days, 20 seeds; jobs.csv of every
   run kept.

SEEDS (default: the sweep files' 20) runs both over seeds 1..SEEDS instead, from copies of the
sweep files written to OUT (the seed count changed, the relative site path made absolute). Then
it prints two markdown tables (also written to OUT/study.md and OUT/gaming.md):

- per scheduler: throughput (jobs/h, mean and 95 % interval over the seeds), its paired change
  against EASY (%, 95 % interval), mean session length (jobs), mean wait (min), mean bounded
  slowdown, utilization (%), headroom (%), capture (%), all from the sweep's results.csv; and,
  under Slurm's model, from each run's summary.json: the share error (%: the share of the CPU
  time that would have to change users for each to get its normalised fair-share share), the
  same users' share error on the uncontended machine (where nothing waits: what their demand
  alone gives) and the paired difference of the two (percentage points: what the scheduler
  moved);
- per scheduler and user group: jobs submitted per hour and mean wait (min), with the paired
  change of the group's throughput (%) and of its mean wait (min) against EASY on the same
  seed, and Jain's fairness index of the users' processor-seconds (1: every user used the
  same), computed here from each run's jobs.csv (jobs counted by submit time over the whole
  run).

Intervals are Student t intervals over the seeds (t_0.975 for n - 1 degrees of freedom).
Only the standard library: CI has neither pandas nor matplotlib.
"""

import argparse
import csv
import json
import math
import os
import re
import statistics
import subprocess
import sys
from collections import defaultdict

from seedstats import t975  # noqa: E402 (scripts/ is on sys.path)

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def interval(values):
    """(mean, half-width of the 95 % t interval) of a list of numbers."""
    n = len(values)
    mean = statistics.fmean(values)
    if n < 2:
        return mean, float("nan")
    half = t975(n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean, half


def fmt(mean, half, digits=1):
    return f"{mean:.{digits}f} ± {half:.{digits}f}"


def sweep_file(config, seeds, out):
    """The sweep file to run: config itself, or with SEEDS a copy in out over seeds 1..SEEDS."""
    path = os.path.join(HERE, config)
    if seeds is None:
        return path
    with open(path) as f:
        text = f.read()
    text, counted = re.subn(r"(?m)^seeds = \{ first = 1, count = [0-9]+ \}$",
                            f"seeds = {{ first = 1, count = {seeds} }}", text)

    def absolute(match):
        # the site path is relative to the sweep file; the copy lives elsewhere
        return f'site = "{os.path.normpath(os.path.join(os.path.dirname(path), match[1]))}"'

    text, sited = re.subn(r'(?m)^site = "([^"/][^"]*)"$', absolute, text)
    if counted != 1 or sited != 1:
        sys.exit(f"{config}: cannot set its seed count (expected one line "
                 "'seeds = { first = 1, count = N }' and one relative 'site = \"...\"')")
    os.makedirs(out, exist_ok=True)
    copy = os.path.join(out, os.path.basename(config).replace(".toml", f"-{seeds}-seeds.toml"))
    with open(copy, "w") as f:
        f.write(text)
    return copy


def sweep(binary, config, out, jobs):
    subprocess.run([binary, "-q", "sweep", config, "-o", out, "-j", str(jobs)], check=True)


def results(path):
    """{(scheduler, metric): row} of a results.csv."""
    rows = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            rows[(row["scheduler"], row["metric"])] = row
    return rows


def run_summaries(out):
    """{(scheduler, seed): summary.json} of the sweep's runs that kept one."""
    summaries = {}
    runs_dir = os.path.join(out, "runs")
    for run in sorted(os.listdir(runs_dir)):
        path = os.path.join(runs_dir, run, "summary.json")
        if not os.path.isfile(path):
            continue
        parts = dict(p.split("-", 1) for p in run.split("_"))
        with open(path) as f:
            summaries[(parts["scheduler"], parts["seed"])] = json.load(f)
    return summaries


def share_columns(summaries, scheduler):
    """The share error (%), its uncontended baseline (%) and their paired difference (pp) of a
    scheduler's runs, each as "mean ± half-width" over the seeds ("" outside the Slurm model)."""
    errors, baselines, moved = [], [], []
    for (s, _), summary in sorted(summaries.items()):
        slurm = summary.get("slurm") if s == scheduler else None
        if not slurm or slurm.get("share_error") is None:
            continue
        errors.append(100 * slurm["share_error"])
        if slurm.get("share_error_uncontended") is not None:
            baselines.append(100 * slurm["share_error_uncontended"])
            moved.append(errors[-1] - baselines[-1])
    cell = lambda values: fmt(*interval(values)) if len(values) > 1 else ""
    return cell(errors), cell(baselines), cell(moved)


def study_table(out):
    rows = results(os.path.join(out, "results.csv"))
    summaries = run_summaries(out)
    schedulers = []
    for scheduler, _ in rows:
        if scheduler not in schedulers:
            schedulers.append(scheduler)

    def cell(scheduler, metric, scale=1.0, digits=1):
        row = rows.get((scheduler, metric))
        if row is None or row["mean"] == "":
            return ""
        mean = float(row["mean"]) * scale
        half = (float(row["ci95_high"]) - float(row["ci95_low"])) / 2 * scale
        return fmt(mean, half, digits)

    def change(scheduler):
        row = rows.get((scheduler, "throughput_submitted_per_hour"))
        if row is None or row["rel_diff_mean"] == "":
            return ""
        mean = float(row["rel_diff_mean"]) * 100
        half = (float(row["rel_diff_ci95_high"]) - float(row["rel_diff_ci95_low"])) / 2 * 100
        return fmt(mean, half, 2)

    lines = [
        "| scheduler | throughput (jobs/h) | vs EASY (%) | session (jobs) | wait (min) | bounded slowdown | utilization (%) | headroom (%) | capture (%) | share error (%) | uncontended (%) | above uncontended (pp) |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in schedulers:
        lines.append(
            "| "
            + " | ".join(
                [
                    s,
                    cell(s, "throughput_submitted_per_hour", digits=2),
                    change(s),
                    cell(s, "session_length_mean", digits=2),
                    cell(s, "wait_mean", 1 / 60),
                    cell(s, "bounded_slowdown_mean", digits=2),
                    cell(s, "utilization", 100),
                    cell(s, "headroom", 100),
                    cell(s, "capture", 100),
                    *share_columns(summaries, s),
                ]
            )
            + " |"
        )
    return "\n".join(lines)


def run_groups(jobs_csv):
    """Per group: (jobs, mean wait s); per user: processor-seconds; the run's span in hours."""
    count = defaultdict(int)
    wait = defaultdict(float)
    usage = defaultdict(float)
    first, last = None, None
    with open(jobs_csv, newline="") as f:
        for row in csv.DictReader(f):
            group = row["group"]
            count[group] += 1
            wait[group] += float(row["wait"])
            usage[row["user"]] += float(row["processors"]) * float(row["runtime"])
            submit = float(row["submit"])
            first = submit if first is None else min(first, submit)
            last = submit if last is None else max(last, submit)
    return count, wait, usage


def jain(values):
    values = list(values)
    total = sum(values)
    squares = sum(v * v for v in values)
    return total * total / (len(values) * squares) if squares else float("nan")


def gaming_table(out, weeks=26):
    hours = weeks * 7 * 24
    # per (scheduler, seed): {group: (jobs/h, mean wait min)}, jain
    per_run = {}
    runs_dir = os.path.join(out, "runs")
    for run in sorted(os.listdir(runs_dir)):
        if not os.path.isdir(os.path.join(runs_dir, run)):
            continue  # the run's result file beside its directory
        parts = dict(p.split("-", 1) for p in run.split("_"))
        scheduler, seed = parts["scheduler"], parts["seed"]
        count, wait, usage = run_groups(os.path.join(runs_dir, run, "jobs.csv"))
        per_run[(scheduler, seed)] = (
            {g: (count[g] / hours, wait[g] / count[g] / 60) for g in count},
            jain(usage.values()),
        )
    # in the sweep file's order
    with open(os.path.join(out, "sweep.toml")) as f:
        text = f.read()
    listed = text[text.index("labels = [") :].split("]")[0]
    order = [label.strip().strip('"') for label in listed[len("labels = [") :].split(",")]
    present = {scheduler for scheduler, _ in per_run}
    schedulers = [s for s in order if s in present]
    seeds = sorted({seed for _, seed in per_run}, key=int)
    lines = [
        "| scheduler | group | jobs/h | vs EASY (%) | wait (min) | wait vs EASY (min) | Jain index (users' processor-seconds) |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in schedulers:
        fairness = [per_run[(s, seed)][1] for seed in seeds]
        for g in ("heavy", "light"):
            rate = [per_run[(s, seed)][0][g][0] for seed in seeds]
            waits = [per_run[(s, seed)][0][g][1] for seed in seeds]
            change = [
                (per_run[(s, seed)][0][g][0] / per_run[("easy", seed)][0][g][0] - 1) * 100
                for seed in seeds
            ]
            longer = [
                per_run[(s, seed)][0][g][1] - per_run[("easy", seed)][0][g][1] for seed in seeds
            ]
            lines.append(
                f"| {s} | {g} | {fmt(*interval(rate), 2)} | "
                f"{fmt(*interval(change), 2) if s != 'easy' else ''} | "
                f"{fmt(*interval(waits))} | {fmt(*interval(longer)) if s != 'easy' else ''} | "
                f"{fmt(*interval(fairness), 3) if g == 'heavy' else ''} |"
            )
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("seeds", nargs="?", type=int,
                        help="seeds 1..SEEDS (default: the sweep files' 20)")
    parser.add_argument("--binary", default=os.path.join(HERE, "target/release/sitesim"))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--tables-only", action="store_true", help="reuse OUT's sweeps")
    args = parser.parse_args()
    if args.seeds is not None and args.seeds < 2:
        sys.exit("SEEDS must be at least 2 (intervals need two seeds)")
    if not os.path.exists(args.binary):
        subprocess.run(["cargo", "build", "--release", "--locked", "-p", "sitesim"], cwd=HERE, check=True)
    study = os.path.join(args.out, "slurm-study")
    gaming = os.path.join(args.out, "slurm-gaming")
    if not args.tables_only:
        for config, out in (("configs/sweeps/slurm-study.toml", study),
                            ("configs/sweeps/slurm-gaming.toml", gaming)):
            sweep(args.binary, sweep_file(config, args.seeds, args.out), out, args.jobs)
    tables = {"study.md": study_table(study), "gaming.md": gaming_table(gaming)}
    titles = {
        "study.md": "The Slurm study: the default site",
        "gaming.md": "The Slurm study: gaming fair-share",
    }
    for name, table in tables.items():
        with open(os.path.join(args.out, name), "w") as f:
            f.write(
                f"# {titles[name]}\n\nWritten by `scripts/slurm-study.py`; read in "
                "[Slurm's fair-share in the closed loop](../science/slurm.md).\n\n"
                + table
                + "\n"
            )
        print(table)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
