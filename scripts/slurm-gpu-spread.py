#!/usr/bin/env python3
"""Real Slurm's run-to-run spread: two captures of scripts/ci/slurm-gpu-workload.sh (the same
plan, run twice) compared job by job.

Usage: python3 scripts/slurm-gpu-spread.py RUN1 RUN2

Jobs are matched by their position in the plan (JobName gwl-POS in sacct.txt). Times are taken
relative to each run's first submission (the earliest Submit of its sacct.txt). Printed, as
Markdown: per run the jobs, states, mean and median wait (Start - Submit), makespan (last End -
first Submit), GPU-seconds and CPU-seconds used (AllocTRES's gres/gpu and cpu times ElapsedRaw)
against what the node had over the makespan; between runs the median, p90 and largest |start
difference|, for all jobs and for CPU-only and GPU jobs, the fraction of job pairs started in the
same order, and the differences of mean wait and makespan. Standard library only.
"""

import sys
from datetime import datetime, timezone
from pathlib import Path


def parse_time(text):
    """sacct's standard time (TZ=UTC as the capture sets it) as epoch seconds, or None."""
    if text in ("", "None", "Unknown"):
        return None
    return int(datetime.strptime(text, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc).timestamp())


def tres(text, key):
    """The value of `key` in a TRES list such as cpu=2,mem=4000M,gres/gpu=1 (0 if absent)."""
    for item in text.split(","):
        name, _, value = item.partition("=")
        if name == key:
            return int(value)
    return 0


def node_size(run):
    """The node's CPUs and GPUs from node.txt's CfgTRES."""
    for line in (run / "node.txt").read_text().splitlines():
        line = line.strip()
        if line.startswith("CfgTRES="):
            cfg = line[len("CfgTRES="):]
            return tres(cfg, "cpu"), tres(cfg, "gres/gpu")
    raise SystemExit(f"{run}/node.txt: no CfgTRES")


def read_run(run):
    """Jobs by plan position: dict of submit, start, end, elapsed, cpus, gpus, state."""
    lines = (run / "sacct.txt").read_text().splitlines()
    header = lines[0].split("|")
    col = {name: i for i, name in enumerate(header)}
    jobs = {}
    for line in lines[1:]:
        # SubmitLine is last and may hold '|' (it does not here): split the rest only
        fields = line.split("|", len(header) - 1)
        name = fields[col["JobName"]]
        if not name.startswith("gwl-"):
            continue
        pos = int(name[len("gwl-"):])
        jobs[pos] = {
            "submit": parse_time(fields[col["Submit"]]),
            "start": parse_time(fields[col["Start"]]),
            "end": parse_time(fields[col["End"]]),
            "elapsed": int(fields[col["ElapsedRaw"]] or 0),
            "cpus": tres(fields[col["AllocTRES"]], "cpu"),
            "gpus": tres(fields[col["ReqTRES"]], "gres/gpu"),
            "alloc_gpus": tres(fields[col["AllocTRES"]], "gres/gpu"),
            "state": fields[col["State"]].split(" ")[0],
        }
    return jobs


def quantile(values, q):
    """The q-quantile by nearest rank (the smallest value with at least q of them at or below)."""
    ordered = sorted(values)
    rank = max(1, -(-len(ordered) * q // 1))  # ceil(n q)
    return ordered[int(rank) - 1]


def median(values):
    ordered = sorted(values)
    n = len(ordered)
    return ordered[n // 2] if n % 2 else (ordered[n // 2 - 1] + ordered[n // 2]) / 2


def summary(name, run, jobs):
    cpus, gpus = node_size(run)
    first = min(j["submit"] for j in jobs.values())
    last_end = max(j["end"] for j in jobs.values() if j["end"] is not None)
    makespan = last_end - first
    started = [j for j in jobs.values() if j["start"] is not None]
    waits = [j["start"] - j["submit"] for j in started]
    gpu_s = sum(j["alloc_gpus"] * j["elapsed"] for j in started)
    cpu_s = sum(j["cpus"] * j["elapsed"] for j in started)
    states = {}
    for j in jobs.values():
        states[j["state"]] = states.get(j["state"], 0) + 1
    state_text = ", ".join(f"{s} {n}" for s, n in sorted(states.items()))
    print(f"- {name}: {len(jobs)} jobs ({state_text}), {len(started)} started; "
          f"mean wait {sum(waits) / len(waits):.1f} s, median {median(waits):.1f} s, "
          f"largest {max(waits)} s; makespan {makespan} s ({makespan / 60:.1f} min); "
          f"GPU-seconds {gpu_s} of {gpus * makespan} ({100 * gpu_s / (gpus * makespan):.1f}%, "
          f"{gpus} GPUs); CPU-seconds {cpu_s} of {cpus * makespan} "
          f"({100 * cpu_s / (cpus * makespan):.1f}%, {cpus} CPUs)")
    return first, makespan, sum(waits) / len(waits)


def spread(label, pairs):
    diffs = [abs(a - b) for a, b in pairs]
    if not diffs:
        return
    print(f"| {label} | {len(diffs)} | {median(diffs):.1f} | {quantile(diffs, 0.9)} | "
          f"{max(diffs)} | {sum(d == 0 for d in diffs)} |")


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    run1, run2 = Path(sys.argv[1]), Path(sys.argv[2])
    jobs1, jobs2 = read_run(run1), read_run(run2)
    if sorted(jobs1) != sorted(jobs2):
        raise SystemExit("the runs do not hold the same plan positions")
    print(f"Run-to-run spread of real Slurm, {run1.name} against {run2.name} "
          f"(`python3 scripts/slurm-gpu-spread.py {run1} {run2}`):")
    print()
    first1, makespan1, wait1 = summary(run1.name, run1, jobs1)
    first2, makespan2, wait2 = summary(run2.name, run2, jobs2)
    both = [p for p in sorted(jobs1) if jobs1[p]["start"] is not None and jobs2[p]["start"] is not None]
    rel1 = {p: jobs1[p]["start"] - first1 for p in both}
    rel2 = {p: jobs2[p]["start"] - first2 for p in both}
    sub1 = {p: jobs1[p]["submit"] - first1 for p in both}
    sub2 = {p: jobs2[p]["submit"] - first2 for p in both}
    print(f"- between the runs: mean wait {wait2 - wait1:+.1f} s, makespan "
          f"{makespan2 - makespan1:+d} s; submissions (relative to the first) differ by at most "
          f"{max(abs(sub1[p] - sub2[p]) for p in both)} s")
    print()
    print("|start difference| (start relative to the run's first submission), seconds:")
    print()
    print("| jobs | n | median | p90 | largest | equal |")
    print("|---|---|---|---|---|---|")
    spread("all", [(rel1[p], rel2[p]) for p in both])
    spread("CPU-only", [(rel1[p], rel2[p]) for p in both if jobs1[p]["gpus"] == 0])
    spread("GPU", [(rel1[p], rel2[p]) for p in both if jobs1[p]["gpus"] > 0])
    # every pair of jobs: started in the same order in both runs, in one second in either, or in
    # the other order
    same = tied = reversed_ = 0
    for i, a in enumerate(both):
        for b in both[i + 1:]:
            d1 = rel1[a] - rel1[b]
            d2 = rel2[a] - rel2[b]
            if d1 == 0 or d2 == 0:
                tied += 1
            elif (d1 > 0) == (d2 > 0):
                same += 1
            else:
                reversed_ += 1
    total = same + tied + reversed_
    print()
    print(f"Pairs of jobs ({total}): started in the same order in both runs {same} "
          f"({100 * same / total:.1f}%), in the other order {reversed_} "
          f"({100 * reversed_ / total:.1f}%), in one second in at least one run {tied} "
          f"({100 * tied / total:.1f}%); of the pairs ordered in both runs, "
          f"{100 * same / (same + reversed_):.1f}% in the same order.")


if __name__ == "__main__":
    main()
