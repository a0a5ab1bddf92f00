#!/usr/bin/env python3
"""What a weekly maintenance window costs, open loop against closed loop (docs/science/outages.md).

For each seed, the default site (configs/paper.toml: 250 users, 26 weeks) runs without outages
(the baseline) and with each window of WINDOWS (a site file with that `[[outages]]` entry);
its baseline workload (written with --swf) is also replayed without outages and with each
window (`replay --outages`): the open loop, where the same jobs arrive whatever the outage
does. Every window is compared with the baseline of the same seed and loop (paired): the mean
change over the seeds with a 95 % t-interval.

One assumption is switched at a time: the window (its weekday and hours, or its share of the
machine); the scheduler (--scheduler, default EASY, the site's) and everything else stay.

Usage: python3 scripts/outage-study.py [--bin target/release/sitesim] [--seeds 20]
       [--weeks 26] [--scheduler easy] [--out docs/science/outages]
Writes outages.csv (one row per window, loop and measure) and prints the markdown table the
page shows.
"""

import argparse
import csv
import json
import math
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from seedstats import run, t975_table, value_at  # noqa: E402 (scripts/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "configs" / "paper.toml"
# the default site's time 0 (a Monday), which the workload's SWF header repeats
START = "2024-01-01T00:00:00"

DAY, WEEK, HOUR = 86_400, 604_800, 3_600

# (name, label, the [[outages]] entry, the first window's start in seconds from time 0)
WINDOWS = [
    ("tuesday-day", "every Tuesday 08:00-16:00, the whole machine",
     'name = "maintenance"\nevery = "tuesday"\nfrom = "08:00"\nto = "16:00"\n',
     DAY + 8 * HOUR),
    ("sunday-night", "every Sunday 00:00-08:00, the whole machine",
     'name = "maintenance"\nevery = "sunday"\nfrom = "00:00"\nto = "08:00"\n', 6 * DAY),
    ("tuesday-day-half", "every Tuesday 08:00-16:00, half the machine",
     'name = "maintenance"\nevery = "tuesday"\nfrom = "08:00"\nto = "16:00"\nnodes = "50%"\n',
     DAY + 8 * HOUR),
]

# (key, label, where in summary.json, closed loop only)
MEASURES = [
    ("throughput", "jobs/h", ("closed_loop", "completed_per_hour"), True),
    ("session_jobs", "jobs/session", ("closed_loop", "mean_session_jobs"), True),
    ("wait_mean", "mean wait", ("summary", "wait_seconds", "mean"), False),
    ("utilization", "utilization", ("summary", "utilization"), False),
    # the machine's busy share in the 8 hours before each window (from jobs.csv): how much
    # it empties ahead of a window, against the same hours without one
    ("busy_before", "busy 8 h before", ("busy_before",), False),
]


def busy_before(jobs_csv, first, weeks, processors):
    """The share of the machine busy in the 8 hours before each weekly window starting at
    `first` (seconds) over `weeks` weeks."""
    spans = [(first + k * WEEK - 8 * HOUR, first + k * WEEK) for k in range(weeks)]
    busy = 0.0
    with open(jobs_csv, newline="") as f:
        for row in csv.DictReader(f):
            start, end, width = int(row["start"]), int(row["end"]), int(row["processors"])
            for a, b in spans:
                overlap = min(end, b) - max(start, a)
                if overlap > 0:
                    busy += overlap * width
    return busy / (processors * 8 * HOUR * len(spans))


def summary_of(directory, first, weeks):
    summary = json.loads((directory / "summary.json").read_text())
    summary["busy_before"] = busy_before(directory / "jobs.csv", first, weeks,
                                         summary["summary"]["processors"])
    return summary


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "sitesim"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--weeks", type=int, default=26)
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--out", default=str(ROOT / "docs" / "science" / "outages"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="outage-study-"))
    base_site = SITE.read_text()
    sites, replays = {}, {}
    for name, _, entry, _ in WINDOWS:
        sites[name] = scratch / f"site-{name}.toml"
        sites[name].write_text(f"{base_site}\n[[outages]]\n{entry}")
        replays[name] = scratch / f"outages-{name}.toml"
        replays[name].write_text(f'start = "{START}"\n\n[[outages]]\n{entry}')
    common = ["--weeks", str(args.weeks), "--scheduler", args.scheduler]

    # results[(window, loop)][seed] = summary
    results = {}
    availability = {}
    for seed in range(1, args.seeds + 1):
        print(f"seed {seed}", file=sys.stderr)
        workload = scratch / f"workload-{seed}.swf"
        closed = scratch / f"closed-baseline-{seed}"
        run(args.bin, ["run", "--seed", str(seed), *common, "--swf", str(workload),
                       "-o", str(closed)])
        opened = scratch / f"open-baseline-{seed}"
        run(args.bin, ["replay", str(workload), "--scheduler", args.scheduler, "-o", str(opened)])
        for name, _, _, first in WINDOWS:
            # the baseline's busy share is taken before the same hours as each window's
            results.setdefault(("baseline", "closed", name), {})[seed] = summary_of(
                closed, first, args.weeks)
            results.setdefault(("baseline", "open", name), {})[seed] = summary_of(
                opened, first, args.weeks)
        for name, _, _, first in WINDOWS:
            closed = scratch / f"closed-{name}-{seed}"
            run(args.bin, ["run", "--config", str(sites[name]), "--seed", str(seed), *common,
                           "-o", str(closed)])
            summary = summary_of(closed, first, args.weeks)
            results.setdefault((name, "closed"), {})[seed] = summary
            availability[name] = summary["outages"]["availability"]
            opened = scratch / f"open-{name}-{seed}"
            run(args.bin, ["replay", str(workload), "--scheduler", args.scheduler,
                           "--outages", str(replays[name]), "-o", str(opened)])
            results.setdefault((name, "open"), {})[seed] = summary_of(opened, first, args.weeks)
        for d in scratch.glob(f"*-{seed}"):
            if d.is_dir():
                shutil.rmtree(d)

    rows = []
    for name, label, _, _ in WINDOWS:
        for loop in ("open", "closed"):
            for key, unit, path, closed_only in MEASURES:
                if closed_only and loop == "open":
                    continue
                changes, base_values = [], []
                for seed, summary in results[(name, loop)].items():
                    base = value_at(results[("baseline", loop, name)][seed], path)
                    changes.append(100.0 * (value_at(summary, path) - base) / base)
                    base_values.append(base)
                n = len(changes)
                mean = statistics.fmean(changes)
                half = (t975_table(n - 1, off_table="approx") * statistics.stdev(changes)
                        / math.sqrt(n) if n > 1 else float("nan"))
                rows.append({
                    "window": name, "label": label, "availability": availability[name],
                    "loop": loop, "measure": key, "unit": unit,
                    "baseline_mean": statistics.fmean(base_values),
                    "change_percent": mean, "ci95_percent": half, "seeds": n,
                    "scheduler": args.scheduler,
                })
    with open(out / "outages.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                             for k, v in row.items()})
    print(table(rows))
    shutil.rmtree(scratch, ignore_errors=True)


def cell(rows, window, loop, measure):
    for r in rows:
        if (r["window"], r["loop"], r["measure"]) == (window, loop, measure):
            return f"{r['change_percent']:+.1f} ± {r['ci95_percent']:.1f}"
    return "0 (fixed)"


def table(rows):
    lines = ["| window | availability | loop | " + " | ".join(
        f"{m[1]} (%)" for m in MEASURES) + " |",
        "|---|---|---|" + "---|" * len(MEASURES)]
    for name, label, _, _ in WINDOWS:
        share = next(r["availability"] for r in rows if r["window"] == name)
        for loop in ("open", "closed"):
            cells = [cell(rows, name, loop, m[0]) for m in MEASURES]
            lines.append(f"| {label} | {100 * share:.2f} % | {loop} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
