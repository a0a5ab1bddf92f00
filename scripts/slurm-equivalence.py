#!/usr/bin/env python3
"""How close Slurm's model comes to EASY and to conservative backfilling on the real traces
(docs/science/slurm.md, "Equivalences").

    scripts/slurm-equivalence.py OUT [--binary PATH] [--jobs N]

Replays KTH-SP2, SDSC-SP2 and CTC-SP2 (../shared/traces; the first N jobs, default all) under
fcfs, easy, conservative, Slurm's model with its loops made eager (a backfill cycle every
second on a 1 s grid, no batch delay, the widest window Slurm accepts: 30 days; all priority
weights 0, so the order is arrival) at backfill depth 1 and unlimited, and Slurm's defaults; and
prints a markdown table per trace: mean wait (min), mean bounded slowdown, and the share of jobs
that start within a second of their start under FCFS, EASY and conservative backfilling (Slurm
starts nothing in the submission itself, so its starts come at least a second later). Everything
it wrote stays in OUT.
"""

import argparse
import csv
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TRACES = ["KTH-SP2-1996-2.1-cln", "SDSC-SP2-1998-4.2-cln", "CTC-SP2-1996-3.1-cln"]
EAGER = ["--scheduler", "slurm", "--slurm-conf"]
SCHEDULERS = [
    ("fcfs", ["--scheduler", "fcfs"], None),
    ("easy", ["--scheduler", "easy"], None),
    ("conservative", ["--scheduler", "conservative"], None),
    ("slurm, eager, depth 1", EAGER, 1),
    ("slurm, eager, unlimited depth", EAGER, 1000000),
    ("slurm (Slurm's defaults)", ["--scheduler", "slurm"], None),
]


def starts(jobs_csv):
    with open(jobs_csv, newline="") as f:
        rows = list(csv.DictReader(f))
    return {r["job_id"]: int(r["start"]) for r in rows}, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out")
    parser.add_argument("--binary", default=os.path.join(HERE, "target/release/sitesim"))
    parser.add_argument("--jobs", type=int, default=None, help="replay only the first N jobs")
    args = parser.parse_args()
    traces = os.environ.get("SITESIM_TRACES", os.path.join(HERE, "..", "shared", "traces"))
    os.makedirs(args.out, exist_ok=True)
    tables = []
    for trace in TRACES:
        path = os.path.join(traces, trace + ".swf.gz")
        runs = {}
        for name, flags, depth in SCHEDULERS:
            flags = list(flags)
            if depth is not None:
                conf = os.path.join(args.out, f"eager-{depth}.conf")
                with open(conf, "w") as f:
                    f.write(
                        "SchedulerParameters=bf_interval=1,bf_resolution=1,bf_window=43200,"
                        f"bf_max_job_test={depth},batch_sched_delay=0\n"
                    )
                flags.append(conf)
            out = os.path.join(args.out, trace, name.replace(" ", "_").replace(",", ""))
            command = [args.binary, "-q", "replay", path, *flags, "--out", out, "--force"]
            if args.jobs:
                command += ["--first-jobs", str(args.jobs)]
            subprocess.run(command, check=True)
            runs[name] = starts(os.path.join(out, "jobs.csv"))
        lines = [
            f"**{trace}** ({len(runs['easy'][1])} jobs)",
            "",
            "| scheduler | wait (min) | bounded slowdown | start within 1 s of FCFS's (%) | of EASY's (%) | of conservative's (%) |",
            "|---|---|---|---|---|---|",
        ]
        for name, _, _ in SCHEDULERS:
            start, rows = runs[name]
            wait = statistics.fmean(float(r["wait"]) for r in rows) / 60
            bsld = statistics.fmean(float(r["bounded_slowdown"]) for r in rows)

            def same(other):
                reference = runs[other][0]
                close = sum(abs(start[j] - reference[j]) <= 1 for j in start)
                return 100 * close / len(start)

            lines.append(
                f"| {name} | {wait:.1f} | {bsld:.2f} | {same('fcfs'):.1f} | {same('easy'):.1f} "
                f"| {same('conservative'):.1f} |"
            )
        tables.append("\n".join(lines))
    text = "\n\n".join(tables)
    with open(os.path.join(args.out, "equivalence.md"), "w") as f:
        f.write(
            "# The Slurm model against FCFS, EASY and conservative backfilling\n\n"
            "Written by `scripts/slurm-equivalence.py`; read in "
            "[Slurm's fair-share in the closed loop](../science/slurm.md).\n\n" + text + "\n"
        )
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
