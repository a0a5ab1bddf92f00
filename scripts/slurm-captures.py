#!/usr/bin/env python3
"""Sitesim's Slurm model against the real-Slurm captures, one input switched at a time.

Every workload under tests/fixtures (slurm-gpu, slurm-queue: two runs each of one plan on
Slurm 22.05, scripts/ci/slurm-gpu-workload.sh) is replayed with `sitesim replay sacct.txt
--scheduler slurm --slurm-conf slurm.conf` and each variant's extra options, and compared job
by job with what Slurm did; real Slurm against itself (run2 against run1) comes first.

    python3 scripts/slurm-captures.py [SITESIM_BINARY]   (default target/release/sitesim)

Variants (each switches one input of the one-line replay of a site's dump):

    full           --assoc assoc.txt --qos qos.txt (the default path a site takes)
    no-qos         --assoc only: the dump's QOS names, priority 0, no limits
    no-assoc       --qos only: the dump's accounts under root, one share each
    neither        the dump alone with its slurm.conf
    eligible       full, with --wait-from eligible (submit times from sacct's Eligible)

Figures per run: median and p90 of |start difference| (seconds, starts relative to the first
submission), the share of job pairs Slurm started at different seconds that the replay starts
in the same order, both mean waits, and the share of jobs started by the same loop (main or
backfill; sacct's Flags). Standard library only.
"""

import csv
import datetime
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
WORKLOADS = ["slurm-gpu", "slurm-queue"]
VARIANTS = {
    "full": ["--assoc", "{assoc}", "--qos", "{qos}"],
    "no-qos": ["--assoc", "{assoc}"],
    "no-assoc": ["--qos", "{qos}"],
    "neither": [],
    "eligible": ["--assoc", "{assoc}", "--qos", "{qos}", "--wait-from", "eligible"],
}


def epoch(stamp):
    t = datetime.datetime.fromisoformat(stamp).replace(tzinfo=datetime.timezone.utc)
    return int(t.timestamp())


def capture(run):
    """Jobs of a capture: id -> (plan position, task, submit, start, loop), times relative to
    the first submission."""
    with open(os.path.join(run, "sacct.txt")) as f:
        rows = list(csv.DictReader(f, delimiter="|"))
    jobs = {}
    for r in rows:
        if not r["JobName"].startswith("gwl-"):
            continue
        task = int(r["JobID"].split("_")[1]) if "_" in r["JobID"] else 0
        loop = "backfill" if "SchedBackfill" in r["Flags"] else "main"
        jobs[int(r["JobIDRaw"])] = [int(r["JobName"][4:]), task, epoch(r["Submit"]),
                                    epoch(r["Start"]), loop]
    first = min(j[2] for j in jobs.values())
    for j in jobs.values():
        j[2] -= first
        j[3] -= first
    return jobs


def replay(binary, run, variant):
    """A replay's starts and loops by job id (jobs.csv counts from the first submission)."""
    files = {name: os.path.join(run, f"{name}.txt") for name in ("assoc", "qos")}
    extra = [a.format(**files) for a in VARIANTS[variant]]
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([binary, "-q", "replay", os.path.join(run, "sacct.txt"), "--scheduler",
                        "slurm", "--slurm-conf", os.path.join(run, "slurm.conf"), *extra,
                        "--out", out, "--force"], check=True)
        with open(os.path.join(out, "jobs.csv")) as f:
            return {int(r["job_id"]): (int(r["start"]), r["started_by"])
                    for r in csv.DictReader(f)}


def quantile(values, q):
    values = sorted(values)
    at = q * (len(values) - 1)
    lo, hi = int(at), min(int(at) + 1, len(values) - 1)
    return values[lo] + (values[hi] - values[lo]) * (at - lo)


def figures(submits, starts, reference, loops=None, reference_loops=None):
    n = len(starts)
    diffs = [abs(s - r) for s, r in zip(starts, reference)]
    same = pairs = 0
    for i in range(n):
        for j in range(i + 1, n):
            r = (reference[i] > reference[j]) - (reference[i] < reference[j])
            if r == 0:
                continue
            pairs += 1
            same += ((starts[i] > starts[j]) - (starts[i] < starts[j])) == r
    wait = sum(s - u for s, u in zip(starts, submits)) / n
    reference_wait = sum(r - u for r, u in zip(reference, submits)) / n
    loop = (sum(a == b for a, b in zip(loops, reference_loops)) / n) if loops else None
    return (quantile(diffs, 0.5), quantile(diffs, 0.9), same / pairs, wait, reference_wait, loop)


def line(label, f):
    loop = f"{f[5]:.3f}" if f[5] is not None else "-"
    return (f"| {label} | {f[0]:.0f} | {f[1]:.0f} | {f[2]:.3f} | {f[3]:.0f} vs {f[4]:.0f} "
            f"({100 * (f[3] - f[4]) / f[4]:+.1f} %) | {loop} |")


def main():
    binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "target/release/sitesim")
    print("| workload, run | median (s) | p90 (s) | pairs in order | mean wait: replay vs Slurm "
          "| same loop |")
    print("|---|---|---|---|---|---|")
    for workload in WORKLOADS:
        base = os.path.join(ROOT, "tests/fixtures", workload)
        runs = {r: capture(os.path.join(base, r)) for r in ("run1", "run2")}
        one = {(j[0], j[1]): j for j in runs["run1"].values()}
        two = {(j[0], j[1]): j for j in runs["run2"].values()}
        keys = sorted(one)
        f = figures([one[k][2] for k in keys], [two[k][3] for k in keys],
                    [one[k][3] for k in keys], [two[k][4] for k in keys],
                    [one[k][4] for k in keys])
        print(line(f"{workload}: Slurm run2 against run1", f))
        for variant in VARIANTS:
            for run, jobs in runs.items():
                starts = replay(binary, os.path.join(base, run), variant)
                ids = sorted(jobs)
                f = figures([jobs[i][2] for i in ids], [starts[i][0] for i in ids],
                            [jobs[i][3] for i in ids], [starts[i][1] for i in ids],
                            [jobs[i][4] for i in ids])
                print(line(f"{workload} {run}: model, {variant}", f))


if __name__ == "__main__":
    main()
