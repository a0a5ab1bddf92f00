#!/usr/bin/env python3
"""What node failures cost a site of node types, in CPU-hours and GPU-hours
(docs/science/outages.md, section "Node failures on a GPU site").

For each seed, the example GPU site (configs/gpu-site.toml: 250 users; 48 CPU nodes and 16 GPU
nodes of 64 cores, 4 A100 each) runs without failures (the baseline) and with each case of
CASES (the same site with that `[failures]` table, drawn from the run's seed). On a machine of
node types a failure strikes one node and kills every job with a share of it. Every case is
compared with the baseline of the same seed (paired): the mean change over the seeds with a
95 % t-interval; the jobs killed and the work lost are given as they are (mean and interval),
and the work lost also as a share of what each kind of node offered over the run.

Only the closed loop is run: the site's own users, who react to what the failures do. One
assumption is switched at a time: the failures' rate, or what becomes of a killed job
(requeued, Slurm's default, or lost; the user of a lost job resubmits it after a think time).

These failure rates are what-ifs, not measured values of a site; the resource mix of the
example site is illustrative (written by hand): the page says so.

Usage: python3 scripts/gpu-failure-study.py [--bin target/release/sitesim] [--seeds 20]
       [--weeks 4] [--scheduler easy] [--out docs/science/failures]
Writes gpu-failures.csv (one row per case and measure) and prints the markdown table the page
shows.
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
CPUS = (48 + 16) * 64  # the site's CPUs
GPUS = 16 * 4  # and GPUs

# (name, label, the [failures] table: no node_processors on a machine of node types)
CASES = [
    ("mtbf-1000h", "a node fails every 1,000 h, repaired in 24 h; requeued",
     "mtbf_hours = 1000\nrepair_hours = 24\n"),
    ("mtbf-1000h-lost", "a node fails every 1,000 h, repaired in 24 h; lost",
     "mtbf_hours = 1000\nrepair_hours = 24\nrequeue = false\n"),
    ("mtbf-200h", "a node fails every 200 h, repaired in 24 h; requeued",
     "mtbf_hours = 200\nrepair_hours = 24\n"),
]

# (key, label, where in summary.json, relative change)
MEASURES = [
    ("throughput", "jobs/h (%)", ("closed_loop", "completed_per_hour"), True),
    ("session_jobs", "jobs/session (%)", ("closed_loop", "mean_session_jobs"), True),
    ("wait_mean", "mean wait (%)", ("summary", "wait_seconds", "mean"), True),
    ("jobs_killed", "jobs killed", ("failures", "jobs_killed"), False),
    ("cpu_hours_lost", "CPU-hours lost", ("failures", "processor_hours_lost"), False),
    ("gpu_hours_lost", "GPU-hours lost", ("failures", "gpu_hours_lost"), False),
    ("cpu_share_lost", "CPU-hours lost (% of offered)", None, False),
    ("gpu_share_lost", "GPU-hours lost (% of offered)", None, False),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "sitesim"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--weeks", type=int, default=4)
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--out", default=str(ROOT / "docs" / "science" / "failures"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="gpu-failure-study-"))
    # the site file names its resource mix relative to itself: the copies sit beside it
    base_site = SITE.read_text()
    shutil.copy(SITE.parent / "gpu-site-resources.csv", scratch)
    baseline_site = scratch / "site-baseline.toml"
    baseline_site.write_text(base_site)
    sites = {}
    for name, _, table_text in CASES:
        sites[name] = scratch / f"site-{name}.toml"
        sites[name].write_text(f"{base_site}\n[failures]\n{table_text}")
    common = ["--weeks", str(args.weeks), "--scheduler", args.scheduler]
    hours = args.weeks * 7 * 24

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
                if key == "cpu_share_lost":
                    value = 100.0 * value_at(s, ("failures", "processor_hours_lost")) / (CPUS * hours)
                elif key == "gpu_share_lost":
                    value = 100.0 * value_at(s, ("failures", "gpu_hours_lost")) / (GPUS * hours)
                else:
                    value = value_at(s, path)
                if relative:
                    base = value_at(results["baseline"][seed], path)
                    base_values.append(base)
                    value = 100.0 * (value - base) / base
                values.append(value)
            mean, half = mean_ci(values)
            rows.append({
                "case": name, "label": label, "measure": key, "unit": unit,
                "baseline_mean": (sum(base_values) / len(base_values) if base_values else ""),
                "value": mean, "ci95": half, "relative": relative, "seeds": len(values),
                "weeks": args.weeks, "scheduler": args.scheduler,
            })
    with open(out / "gpu-failures.csv", "w", newline="") as f:
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
            sign = "+" if r["relative"] else ""
            digits = 2 if measure.endswith("share_lost") else 1
            return f"{r['value']:{sign}.{digits}f} ± {r['ci95']:.{digits}f}"
    return ""


def table(rows):
    lines = ["| failures | " + " | ".join(m[1] for m in MEASURES) + " |",
             "|---|" + "---|" * len(MEASURES)]
    for name, label, _ in CASES:
        cells = [cell(rows, name, m[0]) for m in MEASURES]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
