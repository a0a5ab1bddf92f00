#!/usr/bin/env python3
"""The map: when does a user-aware scheduler raise productivity over a packing one?

    scripts/map.py OUT [--binary PATH] [--seeds N] [--weeks W] [--jobs J] [--only NAME,...]

For each variant of the paper's site (configs/paper.toml) it
  1. recalibrates the machine so that EASY reaches about 57 % utilization at 250 users (the
     paper's operating point), by bisection on the processor count (seed 1);
  2. sweeps EASY, CREASY (alpha 1500, 3000, 6000) and EASY-SJF at 50 and 250 users over N seeds
     (default 5), with headroom (the same users on an uncontended machine) and paired
     differences against EASY;
and prints one markdown table: per variant and scheduler at 250 users, throughput (jobs/h,
mean and 95 % interval over the seeds), its paired change against EASY, the change of the mean
session length from 50 to 250 users, utilization, mean response (min), mean slowdown, headroom
and capture. Everything it wrote stays in OUT (sites, generated models, sweeps, results.csv).

The figure of the map: matplotlib is not needed (CI has none). The script joins every variant's
results.csv into OUT/map-results.csv, a results table like any sweep's with one more axis,
`variant`, in front (variant, scheduler, users, metric, ...: the same rows, means, intervals
and paired differences, nothing recomputed), and draws it with the tool itself:

    sitesim plot OUT/map-results.csv --out OUT/figures --x variant --series scheduler \
        --where users=250 --measure throughput_submitted_per_hour --relative --force
    sitesim plot OUT/map-results.csv --out OUT/figures --x variant --series scheduler \
        --where users=250 --measure capture --force

The first figure is the table's "vs EASY (%)" column (the paired throughput change against
EASY at 250 users, 95 % interval over the seeds, one marker per scheduler and variant); the
second its "capture" column (the share of EASY's headroom each scheduler takes). Each comes as
PNG, SVG and PDF with the CSV of its points, in OUT/figures. `--figures-only` redraws them from
an existing OUT/map-results.csv without running anything.

Variants (one assumption switched at a time against "paper site"):
  paper site       the default site as it is (fitted models, fitted estimates)
  exact estimates  estimates = "exact"
  thirds           the runtime distribution reweighted to equal thirds <= 1 min / 1-10 min /
                   > 10 min (the paper's section IV-B describes its classes so), the shape
                   within each class kept, the tail truncated at 4 hours
  model: TRACE     each trace's own fitted model (models/traces/TRACE) instead of the combined
  jobs by day      day_probability and weekday_probability recalibrated so that 70 % of the
                   jobs (not of the users) are submitted 07:30-17:30 and 80 % on weekdays
  feedback: wait / slowdown   the continue decision on the wait or the bounded slowdown
                   instead of the response (their default parameters)

No default of the tool is changed: every variant is a site file in OUT.
"""

import argparse
import csv
import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
SCHEDULERS = [
    ("easy", '{ policy = "easy" }'),
    ("creasy-1500", '{ policy = "creasy", alpha = 1500 }'),
    ("creasy-3000", '{ policy = "creasy", alpha = 3000 }'),
    ("creasy-6000", '{ policy = "creasy", alpha = 6000 }'),
    ("easy-sjf", '{ policy = "easy-sjf" }'),
]
TARGET_UTILIZATION = 0.57


def run(binary, args, cwd=None):
    done = subprocess.run([binary, *args], cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"sitesim {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def site_text(group_keys, models=None, processors=3968):
    """configs/paper.toml with group keys replaced or added (values as TOML text)."""
    lines = (HERE / "configs" / "paper.toml").read_text().splitlines()
    out, in_group = [], False
    keys = dict(group_keys)
    if models is not None:
        keys["models"] = f'"{models}"'
    for line in lines:
        stripped = line.split("#")[0].strip()
        if stripped.startswith("processors ="):
            line = f"processors = {processors}"
        if stripped == "[[groups]]":
            in_group = True
        elif in_group and "=" in stripped:
            key = stripped.split("=")[0].strip()
            if key in keys:
                value = keys.pop(key)
                if value is None:  # drop the key (its model does not take it)
                    continue
                line = f"{key} = {value}"
        out.append(line)
    out.extend(f"{k} = {v}" for k, v in keys.items() if v is not None)
    return "\n".join(out) + "\n"


def thirds_model(out: Path) -> Path:
    """models/combined with runtime.csv reweighted to equal thirds and truncated at 4 h."""
    target = out / "models" / "thirds"
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(HERE / "models" / "combined", target)
    rows = list(csv.reader((HERE / "models" / "combined" / "runtime.csv").open()))
    header, points = rows[0], [(float(v), float(c)) for v, c in rows[1:]]
    limit = 4 * 3600

    def cdf(x):
        p = 0.0
        for v, c in points:
            if v <= x:
                p = c
        return p

    bounds = [(0, 60), (60, 600), (600, limit)]
    below = [cdf(lo) if lo > 0 else 0.0 for lo, _ in bounds]
    mass = [cdf(hi) - b for (_, hi), b in zip(bounds, below)]
    new = []
    for v, c in points:
        if v > limit:
            break
        for k, (lo, hi) in enumerate(bounds):
            if (v <= hi and k == 0) or (lo < v <= hi):
                inside = (c - below[k]) / mass[k] if mass[k] > 0 else 1.0
                new.append((v, (k + min(max(inside, 0.0), 1.0)) / 3.0))
                break
    new[-1] = (new[-1][0], 1.0)
    with (target / "runtime.csv").open("w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        for v, c in new:
            w.writerow([f"{v:g}", f"{c:.9g}"])
    return target


def summary_of(binary, site: Path, out: Path, extra=()):
    run(binary, ["run", "--config", str(site), "--out", str(out), *extra])
    return json.loads((out / "summary.json").read_text())


def calibrate(binary, name, text_for, work: Path):
    """The processor count (a multiple of 16) at which EASY reaches the target utilization."""
    lo, hi = 1152, 16384  # the widest fitted job has 1152 processors
    best = None
    for _ in range(9):
        mid = (lo + hi) // 2 // 16 * 16
        site = work / f"calibrate-{mid}.toml"
        site.write_text(text_for(mid))
        util = summary_of(binary, site, work / f"calibrate-{mid}")["summary"]["utilization"]
        if best is None or abs(util - TARGET_UTILIZATION) < abs(best[1] - TARGET_UTILIZATION):
            best = (mid, util)
        if util > TARGET_UTILIZATION:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 16:
            break
    print(f"  {name}: {best[0]} processors (EASY utilization {100 * best[1]:.1f} %)", file=sys.stderr)
    return best


def job_shares(jobs_csv: Path):
    """Shares of jobs submitted 07:30-17:30 and on weekdays (time 0 is a Monday 00:00)."""
    day = weekday = n = 0
    with jobs_csv.open() as f:
        for row in csv.DictReader(f):
            t = int(row["submit"])
            of_day = t % 86400
            day += 27000 <= of_day < 63000
            weekday += (t // 86400) % 7 < 5
            n += 1
    return day / n, weekday / n


def jobs_by_day(binary, work: Path):
    """day_probability and weekday_probability giving 70 % / 80 % of the jobs."""
    keys = {"day_probability": 0.7, "weekday_probability": 0.8}
    targets = {"day_probability": 0.7, "weekday_probability": 0.8}
    bounds = {k: [0.0, 1.0] for k in keys}
    for step in range(10):
        text = site_text({k: f"{v:.4f}" for k, v in keys.items()})
        site = work / "shares.toml"
        site.write_text(text)
        out = work / f"shares-{step}"
        summary_of(binary, site, out)
        day, weekday = job_shares(out / "jobs.csv")
        for key, share in (("day_probability", day), ("weekday_probability", weekday)):
            lo_hi = bounds[key]
            if share > targets[key]:
                lo_hi[1] = keys[key]
            else:
                lo_hi[0] = keys[key]
            keys[key] = sum(lo_hi) / 2
    print(f"  jobs by day: day_probability {keys['day_probability']:.3f}, weekday_probability "
          f"{keys['weekday_probability']:.3f} (last shares {day:.3f} / {weekday:.3f})", file=sys.stderr)
    return {k: f"{v:.4f}" for k, v in keys.items()}


def sweep(binary, name, site: Path, out: Path, seeds: int, jobs: int):
    axes = "\n".join([
        "[[axes]]", 'name = "scheduler"', 'key = "scheduler"',
        "values = [" + ", ".join(v for _, v in SCHEDULERS) + "]", "",
        "[[axes]]", 'name = "users"', 'key = "groups.0.users"', "values = [50, 250]",
    ])
    text = (f'site = "{site}"\nseeds = {{ first = 1, count = {seeds} }}\n'
            f'baseline = "easy"\nheadroom = true\n\n{axes}\n')
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.toml").write_text(text)
    run(binary, ["sweep", str(out / "sweep.toml"), "--out", str(out / "results"), "--jobs", str(jobs)])
    rows = list(csv.DictReader((out / "results" / "results.csv").open()))
    return {(r["scheduler"], r["users"], r["metric"]): r for r in rows}


def combine(out: Path, tables):
    """Every variant's results.csv, a `variant` column in front, as OUT/map-results.csv."""
    path = out / "map-results.csv"
    with path.open("w", newline="") as f:
        writer = None
        for name, results in tables:
            with results.open() as g:
                reader = csv.reader(g)
                header = next(reader)
                if writer is None:
                    writer = csv.writer(f, lineterminator="\n")
                    writer.writerow(["variant", *header])
                for row in reader:
                    writer.writerow([name, *row])
    return path


def figures(binary, out: Path):
    """The map's figures from OUT/map-results.csv into OUT/figures; returns the files written."""
    table, target = out / "map-results.csv", out / "figures"
    common = ["plot", str(table), "--out", str(target), "--x", "variant", "--series", "scheduler",
              "--where", "users=250", "--force"]  # --figures-only redraws into the same folder
    written = run(binary, [*common, "--measure", "throughput_submitted_per_hour", "--relative"])
    written += run(binary, [*common, "--measure", "capture"])
    return [line.removeprefix("wrote ") for line in written.splitlines() if line.startswith("wrote ")]


def fmt(row, key="mean", scale=1.0, digits=2):
    v = row.get(key, "")
    return f"{float(v) * scale:.{digits}f}" if v not in ("", None) else "-"


def interval(row, scale=1.0, digits=2, prefix=""):
    mean, lo, hi = (row.get(prefix + k, "") for k in ("mean", "ci95_low", "ci95_high"))
    if mean in ("", None):
        return "-"
    m, l, h = (float(x) * scale if x not in ("", None) else math.nan for x in (mean, lo, hi))
    if math.isnan(l):
        return f"{m:.{digits}f}"
    return f"{m:.{digits}f} [{l:.{digits}f}, {h:.{digits}f}]"


def capture_cell(row, seeds):
    """Capture's mean of per-seed ratios with its interval, and how many seeds it left out (a
    seed whose room, the uncontended run's throughput minus EASY's, is not positive)."""
    cell = interval(row, 100.0, 1)
    n = row.get("n", "")
    if n not in ("", None) and int(float(n)) < seeds:
        cell += f" ({seeds - int(float(n))} of {seeds} seeds left out)"
    return cell


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("out", type=Path)
    p.add_argument("--binary", default=str(HERE / "target" / "release" / "sitesim"))
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--only", default="", help="comma-separated variant names to run")
    p.add_argument("--figures-only", action="store_true",
                   help="only redraw the figures from OUT/map-results.csv")
    args = p.parse_args()
    binary = str(Path(args.binary).resolve())
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    if args.figures_only:
        for path in figures(binary, out):
            print(f"wrote {path}")
        return
    if args.seeds < 5:
        print("note: fewer than 5 seeds give wide intervals", file=sys.stderr)

    variants = [("paper site", {}, None), ("exact estimates", {"estimates": '"exact"'}, None)]
    variants.append(("thirds", {}, str(thirds_model(out))))
    for trace in sorted(d.name for d in (HERE / "models" / "traces").iterdir() if d.is_dir()):
        variants.append((f"model: {trace.split('-')[0]}-{trace.split('-')[1]}", {},
                         str(HERE / "models" / "traces" / trace)))
    variants.append(("jobs by day", None, None))  # calibrated below
    # continue_a / continue_b are the response model's keys: the other models take their own
    # (feedback_a, feedback_b), left at their defaults.
    for model in ("wait", "slowdown"):
        variants.append((f"feedback: {model}",
                         {"feedback": f'"{model}"', "continue_a": None, "continue_b": None}, None))
    only = {v.strip() for v in args.only.split(",") if v.strip()}

    lines = [
        "| variant | processors | scheduler | throughput (jobs/h) | vs EASY (%) | session 50->250 (%) "
        "| utilization (%) | response (min) | slowdown | headroom (%) | capture (%) |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    tables = []
    for name, keys, models in variants:
        if only and name not in only:
            continue
        slug = name.replace(": ", "-").replace(" ", "-")
        work = out / slug
        work.mkdir(parents=True, exist_ok=True)
        if keys is None:
            keys = jobs_by_day(binary, work)
        processors, _ = calibrate(binary, name, lambda n: site_text(keys, models, n), work)
        site = work / "site.toml"
        site.write_text(site_text(keys, models, processors))
        table = sweep(binary, name, site, work / "sweep", args.seeds, args.jobs)
        tables.append((name, work / "sweep" / "results" / "results.csv"))
        for label, _ in SCHEDULERS:
            at = lambda users, metric: table.get((label, users, metric), {})
            s50 = at("50", "session_length_mean")
            s250 = at("250", "session_length_mean")
            session = (f"{100 * (float(s250['mean']) / float(s50['mean']) - 1):+.1f}"
                       if s50.get("mean") and s250.get("mean") else "-")
            thr = at("250", "throughput_submitted_per_hour")
            vs = interval(thr, 100.0, 1, "rel_diff_") if label != "easy" else "-"
            vs = vs.replace("rel_diff_", "")
            lines.append(" | ".join([
                f"| {name}", str(processors), label, interval(thr),
                (f"{100 * float(thr['rel_diff_mean']):+.1f} [{100 * float(thr['rel_diff_ci95_low']):+.1f}, "
                 f"{100 * float(thr['rel_diff_ci95_high']):+.1f}]") if thr.get("rel_diff_mean") else "-",
                session,
                interval(at("250", "utilization"), 100.0, 1),
                interval(at("250", "response_mean"), 1 / 60),
                interval(at("250", "slowdown_mean")),
                interval(at("250", "headroom"), 100.0, 1),
                capture_cell(at("250", "capture"), args.seeds) if label != "easy" else "-",
            ]) + " |")
        print(f"  {name}: done", file=sys.stderr)
    (out / "map.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if tables:
        combine(out, tables)
        for path in figures(binary, out):
            print(f"  wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
