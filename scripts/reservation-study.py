#!/usr/bin/env python3
"""What a daily reservation for a course costs its site, open loop against closed loop
(docs/science/outages.md, "A reservation for a course").

The site is the default one (configs/paper.toml: its machine, calendar, scheduler and user
model) with its 250 users split in two groups: 225 `users` and 25 `course` (the same user
model). For each seed it runs without a reservation (the baseline) and with one: every day
09:00-17:00, RESERVED processors kept for the course, whose jobs submitted then run in it
alone. The baseline's workload (written with --swf) is also replayed without and with the same
reservation (`replay --outages`, its members the trace's group 2): the open loop, where the
same jobs arrive whatever the reservation does. Each run with the reservation is compared with
the baseline of the same seed and loop (paired): the mean change over the seeds with a 95 %
t-interval.

One assumption is switched at a time: the reservation; the users, the seed and the scheduler
stay.

Usage: python3 scripts/reservation-study.py [--bin target/release/sitesim] [--seeds 10]
       [--weeks 8] [--reserved 512] [--scheduler easy] [--out docs/science/outages]
Writes reservation.csv (one row per loop and measure) and prints the markdown table the page
shows.
"""

import argparse
import csv
import json
import shutil
import sys
import tempfile
from pathlib import Path

from seedstats import mean_ci, run  # noqa: E402 (scripts/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
SITE = ROOT / "configs" / "paper.toml"
# the default site's time 0 (a Monday), which the workload's SWF header repeats
START = "2024-01-01T00:00:00"


def site_text(base, reservation):
    """configs/paper.toml with its users in two groups (the course second: SWF group 2), and
    the reservation entry if given."""
    head, _, group = base.partition("[[groups]]")
    group = group.replace('name = "users"', 'name = "{name}"').replace(
        "users = 250", "users = {users}")
    text = head + "[[groups]]" + group.format(name="users", users=225)
    text += "\n[[groups]]" + group.format(name="course", users=25)
    if reservation:
        text += "\n[[outages]]\n" + reservation
    return text


def reservation_entry(reserved, groups):
    return (f'name = "course"\nkind = "reservation"\nevery = "day"\nfrom = "09:00"\n'
            f'to = "17:00"\nnodes = {reserved}\ngroups = {json.dumps(groups)}\n')


def course_jobs(jobs_csv):
    """The ids of the course's jobs in a site run's jobs.csv (its `group` column names the
    population group; the workload's SWF keeps the job ids)."""
    with open(jobs_csv, newline="") as f:
        return {row["job_id"] for row in csv.DictReader(f) if row["group"] == "course"}


def waits(jobs_csv, course):
    """Mean wait (minutes) of the course's jobs (ids in `course`) and of the others'."""
    sums = {True: [0.0, 0], False: [0.0, 0]}
    with open(jobs_csv, newline="") as f:
        for row in csv.DictReader(f):
            member = row["job_id"] in course
            sums[member][0] += float(row["wait"])
            sums[member][1] += 1
    return {member: total / max(n, 1) / 60.0 for member, (total, n) in sums.items()}


def measures(directory, closed, course):
    summary = json.loads((directory / "summary.json").read_text())
    by_group = waits(directory / "jobs.csv", course)
    out = {
        "wait_course": by_group[True],
        "wait_others": by_group[False],
        "wait_all": summary["summary"]["wait_seconds"]["mean"] / 60.0,
        "utilization": 100.0 * summary["summary"]["utilization"],
    }
    if closed:
        out["throughput"] = summary["closed_loop"]["completed_per_hour"]
        out["session_jobs"] = summary["closed_loop"]["mean_session_jobs"]
    line = (summary.get("outages") or {}).get("outages", [{}])[0]
    if "members" in line:
        out["share_used"] = 100.0 * line["members"]["share_used"]
    return out


# (key, label, unit of the change)
MEASURES = [
    ("wait_course", "course's mean wait", "min"),
    ("wait_others", "others' mean wait", "min"),
    ("wait_all", "mean wait", "min"),
    ("utilization", "utilization", "points"),
    ("throughput", "throughput", "%"),
    ("session_jobs", "session length", "%"),
]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "sitesim"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--weeks", type=int, default=8)
    parser.add_argument("--reserved", type=int, default=512)
    parser.add_argument("--scheduler", default="easy")
    parser.add_argument("--out", default=str(ROOT / "docs" / "science" / "outages"))
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="reservation-study-"))
    base = SITE.read_text()
    plain = scratch / "site.toml"
    plain.write_text(site_text(base, None))
    reserved = scratch / "site-reserved.toml"
    reserved.write_text(site_text(base, reservation_entry(args.reserved, ["course"])))
    replay_outages = scratch / "outages.toml"
    replay_outages.write_text(
        f'start = "{START}"\n\n[[outages]]\n' + reservation_entry(args.reserved, ["2"]))
    common = ["--weeks", str(args.weeks), "--scheduler", args.scheduler]

    # per (loop, with reservation?): a list over seeds of measures
    results = {}
    for seed in range(1, args.seeds + 1):
        print(f"seed {seed}", file=sys.stderr)
        workload = scratch / f"workload-{seed}.swf"
        runs = {
            ("closed", False): ["run", "--config", str(plain), "--seed", str(seed), *common,
                                "--swf", str(workload)],
            ("closed", True): ["run", "--config", str(reserved), "--seed", str(seed), *common],
            ("open", False): ["replay", str(workload), "--scheduler", args.scheduler],
            ("open", True): ["replay", str(workload), "--scheduler", args.scheduler,
                             "--outages", str(replay_outages)],
        }
        course = set()
        for (loop, with_it), arguments in runs.items():
            directory = scratch / f"{loop}-{with_it}-{seed}"
            run(args.bin, [*arguments, "-o", str(directory)])
            if (loop, with_it) == ("closed", False):
                course = course_jobs(directory / "jobs.csv")
            # a site run's own course jobs (its users react); the replays' are the baseline's
            ids = course_jobs(directory / "jobs.csv") if loop == "closed" else course
            results.setdefault((loop, with_it), []).append(
                measures(directory, loop == "closed", ids))
            shutil.rmtree(directory)

    rows = []
    for loop in ("open", "closed"):
        for key, label, unit in MEASURES:
            if key not in results[(loop, False)][0]:
                continue
            base_values = [m[key] for m in results[(loop, False)]]
            with_values = [m[key] for m in results[(loop, True)]]
            if unit == "%":
                changes = [100.0 * (w - b) / b for w, b in zip(with_values, base_values)]
            else:
                changes = [w - b for w, b in zip(with_values, base_values)]
            mean, half = mean_ci(changes)
            rows.append({"loop": loop, "measure": key, "label": label, "unit": unit,
                         "baseline_mean": sum(base_values) / len(base_values),
                         "change": mean, "ci95": half, "seeds": len(changes),
                         "reserved": args.reserved, "weeks": args.weeks,
                         "scheduler": args.scheduler})
        share, half = mean_ci([m["share_used"] for m in results[(loop, True)]])
        rows.append({"loop": loop, "measure": "share_used", "label": "reserved hours used",
                     "unit": "%", "baseline_mean": float("nan"), "change": share, "ci95": half,
                     "seeds": args.seeds, "reserved": args.reserved, "weeks": args.weeks,
                     "scheduler": args.scheduler})
    with open(out / "reservation.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v)
                             for k, v in row.items()})
    print(table(rows))
    shutil.rmtree(scratch, ignore_errors=True)


def table(rows):
    lines = ["| loop | measure | without the reservation | change with it (95 % CI) |",
             "|---|---|---|---|"]
    for r in rows:
        if r["measure"] == "share_used":
            lines.append(f"| {r['loop']} | {r['label']} | - | "
                         f"{r['change']:.1f} ± {r['ci95']:.1f} % |")
            continue
        lines.append(f"| {r['loop']} | {r['label']} | {r['baseline_mean']:.3g} | "
                     f"{r['change']:+.2f} ± {r['ci95']:.2f} {r['unit']} |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
