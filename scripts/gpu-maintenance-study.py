#!/usr/bin/env python3
"""What a weekly maintenance window costs a site of node types, by the nodes it takes
(docs/science/outages.md, section "Maintenance on a GPU site").

For each seed, the example GPU site (configs/gpu-site.toml: 250 users; 48 CPU nodes and 16 GPU
nodes of 64 cores, 4 A100 each) runs without outages (the baseline) and with each window of
CASES (the same site with that `[[outages]]` entry, on named nodes). A job may start on a
window's node only if its run, by its estimate, ends before the window begins. Every case is
compared with the baseline of the same seed (paired): the mean change over the seeds with a
95 % t-interval.

Only the closed loop is run: the site's own users, who react to the waits. One assumption is
switched at a time: which nodes the window takes (the GPU nodes, the CPU nodes, or all), the
weekday and hours staying the same.

The resource mix of the example site is illustrative (written by hand): the page says so.

Usage: python3 scripts/gpu-maintenance-study.py [--bin target/release/sitesim] [--seeds 20]
       [--weeks 4] [--scheduler easy] [--out docs/science/outages]
Writes gpu-maintenance.csv (one row per case and measure) and prints the markdown table the
page shows.
"""

import argparse
import csv
import json
import shutil
import sys
import tempfile
from pathlib import Path

from seedstats import mean_ci, run, value_at  # scripts/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "configs" / "gpu-site.toml"

WINDOW = 'every = "tuesday"\nfrom = "08:00"\nto = "16:00"\n'
# (name, label, the window's nodes)
CASES = [
    ("gpu-nodes", "every Tuesday 08:00-16:00, the 16 GPU nodes", "gpu[1-16]"),
    ("cpu-nodes", "every Tuesday 08:00-16:00, the 48 CPU nodes", "cpu[1-48]"),
    ("all-nodes", "every Tuesday 08:00-16:00, all 64 nodes", "all"),
]

# (key, label, where in summary.json, relative change)
MEASURES = [
    ("availability", "availability (%)", ("outages", "availability"), False),
    ("throughput", "jobs/h (%)", ("closed_loop", "completed_per_hour"), True),
    ("session_jobs", "jobs/session (%)", ("closed_loop", "mean_session_jobs"), True),
    ("wait_mean", "mean wait (%)", ("summary", "wait_seconds", "mean"), True),
    ("utilization", "utilization (%)", ("summary", "utilization"), True),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "sitesim"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--weeks", type=int, default=4)
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--out", default=str(ROOT / "docs" / "science" / "outages"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="gpu-maintenance-study-"))
    # the site file names its resource mix relative to itself: the copies sit beside it
    base_site = SITE.read_text()
    shutil.copy(SITE.parent / "gpu-site-resources.csv", scratch)
    baseline_site = scratch / "site-baseline.toml"
    baseline_site.write_text(base_site)
    sites = {}
    for name, _, nodes in CASES:
        sites[name] = scratch / f"site-{name}.toml"
        sites[name].write_text(
            f'{base_site}\n[[outages]]\nname = "maintenance"\n{WINDOW}nodes = "{nodes}"\n')
    common = ["--weeks", str(args.weeks), "--scheduler", args.scheduler]

    def summary(directory):
        return json.loads((directory / "summary.json").read_text())

    results = {}  # results[case][seed] = summary
    for seed in range(1, args.seeds + 1):
        print(f"seed {seed}", file=sys.stderr)
        for name, site in [("baseline", baseline_site), *sites.items()]:
            directory = scratch / f"{name}-{seed}"
            run(args.bin, ["run", "--config", str(site), "--seed", str(seed), *common,
                           "-o", str(directory)])
            results.setdefault(name, {})[seed] = summary(directory)
            shutil.rmtree(directory)

    rows = []
    for name, label, _ in CASES:
        for key, unit, path, relative in MEASURES:
            values, base_values = [], []
            for seed, s in results[name].items():
                value = value_at(s, path)
                if relative:
                    base = value_at(results["baseline"][seed], path)
                    base_values.append(base)
                    value = 100.0 * (value - base) / base
                else:
                    value = 100.0 * value
                values.append(value)
            mean, half = mean_ci(values)
            rows.append({
                "case": name, "label": label, "measure": key, "unit": unit,
                "baseline_mean": (sum(base_values) / len(base_values) if base_values else ""),
                "value": mean, "ci95": half, "relative": relative, "seeds": len(values),
                "weeks": args.weeks, "scheduler": args.scheduler,
            })
    with open(out / "gpu-maintenance.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                             for k, v in row.items()})
    print(table(rows))
    shutil.rmtree(scratch, ignore_errors=True)


def cell(rows, case, measure):
    for r in rows:
        if (r["case"], r["measure"]) == (case, measure):
            if not r["relative"]:
                return f"{r['value']:.2f}"
            return f"{r['value']:+.1f} ± {r['ci95']:.1f}"
    return ""


def table(rows):
    lines = ["| window | " + " | ".join(m[1] for m in MEASURES) + " |",
             "|---|" + "---|" * len(MEASURES)]
    for name, label, _ in CASES:
        cells = [cell(rows, name, m[0]) for m in MEASURES]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
