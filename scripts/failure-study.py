#!/usr/bin/env python3
"""What node failures cost, open loop against closed loop, requeued against lost
(docs/science/outages.md, section "Node failures").

For each seed, the default site (configs/paper.toml: 250 users, 26 weeks, 3,968 processors
counted as 31 nodes of 128) runs without failures (the baseline) and with each case of CASES (a
site file with that `[failures]` table, drawn from the run's seed); its baseline workload
(written with --swf) is also replayed without failures and with each case (`replay --outages`
with the same table and `--seed`): the open loop, where the same jobs arrive whatever the
failures do. Every case is compared with the baseline of the same seed and loop (paired): the
mean change over the seeds with a 95 % t-interval; the jobs killed and the work lost are given
as they are (mean and interval).

One assumption is switched at a time: the failures' rate (mtbf_hours), or what becomes of a
killed job (requeue, Slurm's default, or lost: in the closed loop its user resubmits it after a
think time); the scheduler (--scheduler, default EASY) and everything else stay.

These failure rates are what-ifs, not measured values of a site: the page says so.

Usage: python3 scripts/failure-study.py [--bin target/release/sitesim] [--seeds 20]
       [--weeks 26] [--scheduler easy] [--out docs/science/failures]
Writes failures.csv (one row per case, loop and measure) and prints the markdown table the
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
SITE = ROOT / "configs" / "paper.toml"
START = "2024-01-01T00:00:00"  # the default site's time 0

# (name, label, the [failures] table)
CASES = [
    ("mtbf-1000h", "a node fails every 1,000 h, repaired in 24 h; requeued",
     "node_processors = 128\nmtbf_hours = 1000\nrepair_hours = 24\n"),
    ("mtbf-1000h-lost", "a node fails every 1,000 h, repaired in 24 h; lost",
     "node_processors = 128\nmtbf_hours = 1000\nrepair_hours = 24\nrequeue = false\n"),
    ("mtbf-200h", "a node fails every 200 h, repaired in 24 h; requeued",
     "node_processors = 128\nmtbf_hours = 200\nrepair_hours = 24\n"),
]

# (key, label, where in summary.json, closed loop only, relative change)
MEASURES = [
    ("throughput", "jobs/h (%)", ("closed_loop", "completed_per_hour"), True, True),
    ("session_jobs", "jobs/session (%)", ("closed_loop", "mean_session_jobs"), True, True),
    ("wait_mean", "mean wait (%)", ("summary", "wait_seconds", "mean"), False, True),
    ("utilization", "utilization (%)", ("summary", "utilization"), False, True),
    ("jobs_killed", "jobs killed", ("failures", "jobs_killed"), False, False),
    ("hours_lost", "processor-hours lost", ("failures", "processor_hours_lost"), False, False),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "sitesim"))
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--weeks", type=int, default=26)
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--out", default=str(ROOT / "docs" / "science" / "failures"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="failure-study-"))
    base_site = SITE.read_text()
    sites, replays = {}, {}
    for name, _, table_text in CASES:
        sites[name] = scratch / f"site-{name}.toml"
        sites[name].write_text(f"{base_site}\n[failures]\n{table_text}")
        replays[name] = scratch / f"failures-{name}.toml"
        replays[name].write_text(f'start = "{START}"\n\n[failures]\n{table_text}')
    common = ["--weeks", str(args.weeks), "--scheduler", args.scheduler]

    def summary(directory):
        return json.loads((directory / "summary.json").read_text())

    # results[(case, loop)][seed] = summary
    results = {}
    for seed in range(1, args.seeds + 1):
        print(f"seed {seed}", file=sys.stderr)
        workload = scratch / f"workload-{seed}.swf"
        closed = scratch / f"closed-baseline-{seed}"
        run(args.bin, ["run", "--seed", str(seed), *common, "--swf", str(workload),
                       "-o", str(closed)])
        results.setdefault(("baseline", "closed"), {})[seed] = summary(closed)
        opened = scratch / f"open-baseline-{seed}"
        run(args.bin, ["replay", str(workload), "--scheduler", args.scheduler, "-o", str(opened)])
        results.setdefault(("baseline", "open"), {})[seed] = summary(opened)
        for name, _, _ in CASES:
            closed = scratch / f"closed-{name}-{seed}"
            run(args.bin, ["run", "--config", str(sites[name]), "--seed", str(seed), *common,
                           "-o", str(closed)])
            results.setdefault((name, "closed"), {})[seed] = summary(closed)
            opened = scratch / f"open-{name}-{seed}"
            run(args.bin, ["replay", str(workload), "--scheduler", args.scheduler,
                           "--outages", str(replays[name]), "--seed", str(seed),
                           "-o", str(opened)])
            results.setdefault((name, "open"), {})[seed] = summary(opened)
        for d in scratch.glob(f"*-{seed}"):
            if d.is_dir():
                shutil.rmtree(d)

    rows = []
    for name, label, _ in CASES:
        for loop in ("open", "closed"):
            for key, unit, path, closed_only, relative in MEASURES:
                if closed_only and loop == "open":
                    continue
                values, base_values = [], []
                for seed, s in results[(name, loop)].items():
                    value = value_at(s, path)
                    if relative:
                        base = value_at(results[("baseline", loop)][seed], path)
                        base_values.append(base)
                        value = 100.0 * (value - base) / base
                    values.append(value)
                mean, half = mean_ci(values)
                rows.append({
                    "case": name, "label": label, "loop": loop, "measure": key, "unit": unit,
                    "baseline_mean": (sum(base_values) / len(base_values)
                                      if base_values else ""),
                    "value": mean, "ci95": half, "relative": relative,
                    "seeds": len(values), "scheduler": args.scheduler,
                })
    with open(out / "failures.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                             for k, v in row.items()})
    print(table(rows))
    shutil.rmtree(scratch, ignore_errors=True)


def cell(rows, case, loop, measure):
    for r in rows:
        if (r["case"], r["loop"], r["measure"]) == (case, loop, measure):
            sign = "+" if r["relative"] else ""
            return f"{r['value']:{sign}.1f} ± {r['ci95']:.1f}"
    return "fixed"


def table(rows):
    lines = ["| failures | loop | " + " | ".join(m[1] for m in MEASURES) + " |",
             "|---|---|" + "---|" * len(MEASURES)]
    for name, label, _ in CASES:
        for loop in ("open", "closed"):
            cells = [cell(rows, name, loop, m[0]) for m in MEASURES]
            lines.append(f"| {label} | {loop} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
