#!/usr/bin/env python3
"""The power and carbon frontier, open loop against closed loop (docs/science/power.md).

For each seed, the default site (configs/paper.toml: 250 users, 26 weeks, EASY) runs with
no power policy (the baseline) and under each policy of POLICIES; its baseline workload
(written with --swf) is also replayed under each policy: the open loop, where the same jobs
arrive whatever the policy does. Every policy is compared with the baseline of the same seed
(paired): the mean change over the seeds with a 95 % t-interval.

The site's power model and carbon-intensity day are illustrative (configs/power/: stated
there), not measured: the frontier's shape is the result, not its kilograms.

Usage: python3 scripts/power-frontier.py [--bin target/release/sitesim] [--seeds 10]
       [--out docs/science/power] [--idle-zero] [--study frontier|power-down]
(the page's second table: --idle-zero --out docs/science/power/idle-zero; its third:
--study power-down --out docs/science/power/power-down, idle nodes that power down after
SUSPEND_TIMES, with the illustrative transition values of POWER_DOWN_NODE)
Writes frontier.csv (one row per policy, loop and measure) and frontier.svg, and prints the
markdown table the page shows.
"""

import argparse
import csv
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from seedstats import run, t975_table, value_at  # noqa: E402 (scripts/ is on sys.path)

ROOT = Path(__file__).resolve().parent.parent
POWER = ROOT / "configs" / "power" / "illustrative.toml"

# (name, label, the [power] lines added to the illustrative model)
POLICIES = [
    ("delay-p30-25", "delay 25 % of jobs to the day's cleanest 30 %",
     '[power.delay]\npolicy = "percentile"\npercentile = 30\nmax_delay_h = 12\nflexible = 0.25\n'),
    ("delay-p30-50", "delay 50 % of jobs to the day's cleanest 30 %",
     '[power.delay]\npolicy = "percentile"\npercentile = 30\nmax_delay_h = 12\nflexible = 0.5\n'),
    ("delay-p30-100", "delay every job to the day's cleanest 30 %",
     '[power.delay]\npolicy = "percentile"\npercentile = 30\nmax_delay_h = 12\nflexible = 1.0\n'),
    ("best-window-50", "CATS's best window for 50 % of jobs",
     '[power.delay]\npolicy = "best_window"\nmax_delay_h = 12\nflexible = 0.5\n'),
    ("random-50", "control: a random delay (0-12 h) for 50 % of jobs",
     '[power.delay]\npolicy = "random"\nmax_delay_h = 12\nflexible = 0.5\n'),
    ("cap-90", "cap IT power at 90 % of the machine's peak (46.9 kW)", "cap_kw = 46.872\n"),
    ("cap-77", "cap IT power at 77 % of the machine's peak (40 kW)", "cap_kw = 40\n"),
]

# Idle nodes that power down: the transition values added to the illustrative model
# (illustrative, as the model is: a BMC's standby draw, a minute to shut down, five to boot)
POWER_DOWN_NODE = "off_w = 10\nshutdown_s = 60\nshutdown_w = 150\nboot_s = 300\nboot_w = 250\n"
POWER_DOWN = [
    (f"suspend-{label.replace(' ', '')}", f"idle nodes power down after {label}",
     f"suspend_time_s = {seconds}\n{POWER_DOWN_NODE}")
    for label, seconds in (("10 min", 600), ("1 h", 3600), ("4 h", 14400))
]

# (key, label, where in summary.json, closed loop only)
MEASURES = [
    ("carbon_kg", "kg CO2", ("power", "carbon_kg"), False),
    ("carbon_per_job", "g CO2/job", None, False),
    ("peak_kw", "peak kW", ("power", "peak_kw"), False),
    ("throughput", "jobs/h", ("closed_loop", "completed_per_hour"), True),
    ("session_jobs", "jobs/session", ("closed_loop", "mean_session_jobs"), True),
    ("wait_mean", "mean wait", ("summary", "wait_seconds", "mean"), False),
]

# the power-down study's: facility energy first
POWER_DOWN_MEASURES = [
    ("energy_kwh", "kWh", ("power", "facility_kwh"), False),
    ("carbon_kg", "kg CO2", ("power", "carbon_kg"), False),
    ("throughput", "jobs/h", ("closed_loop", "completed_per_hour"), True),
    ("session_jobs", "jobs/session", ("closed_loop", "mean_session_jobs"), True),
    ("wait_mean", "mean wait", ("summary", "wait_seconds", "mean"), False),
]

def value(summary, path):
    if path is None:  # carbon per job completed, g
        return 1000.0 * float(summary["power"]["carbon_kg"]) / float(summary["power"]["jobs"])
    return value_at(summary, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--bin", default=str(ROOT / "target" / "release" / "sitesim"))
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--out", default=str(ROOT / "docs" / "science" / "power"))
    parser.add_argument("--weeks", type=int, default=26)
    parser.add_argument(
        "--idle-zero", action="store_true",
        help="the one assumption switched: nodes draw nothing idle (idle_w = 0, core_w kept: "
             "busy_w = 320), as if idle nodes powered down at no cost")
    parser.add_argument(
        "--study", choices=["frontier", "power-down"], default="frontier",
        help="the policies compared: the delays and caps (frontier), or idle nodes that power "
             "down (power-down)")
    args = parser.parse_args()
    global POLICIES, MEASURES
    if args.study == "power-down":
        POLICIES, MEASURES = POWER_DOWN, POWER_DOWN_MEASURES
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="power-frontier-"))
    base_power = POWER.read_text()
    if args.idle_zero:
        base_power = base_power.replace("idle_w = 100", "idle_w = 0").replace(
            "busy_w = 420", "busy_w = 320")
        assert "idle_w = 0" in base_power and "busy_w = 320" in base_power
    files = {}
    for name, _, extra in POLICIES:
        path = scratch / f"{name}.toml"
        path.write_text(base_power + extra)
        files[name] = path
    files["baseline"] = scratch / "baseline.toml"
    files["baseline"].write_text(base_power)
    # the series the model names, beside the power files
    for csv_file in POWER.parent.glob("*.csv"):
        shutil.copy(csv_file, scratch / csv_file.name)

    # results[(policy, loop)][seed] = summary
    results = {}
    for seed in range(1, args.seeds + 1):
        print(f"seed {seed}", file=sys.stderr)
        workload = scratch / f"workload-{seed}.swf"
        base_dir = scratch / f"closed-baseline-{seed}"
        run(args.bin, ["run", "--seed", str(seed), "--weeks", str(args.weeks), "--power",
                       str(files["baseline"]), "--swf", str(workload), "-o", str(base_dir)])
        results.setdefault(("baseline", "closed"), {})[seed] = json.loads(
            (base_dir / "summary.json").read_text())
        for name in ["baseline"] + [p[0] for p in POLICIES]:
            if name != "baseline":
                closed = scratch / f"closed-{name}-{seed}"
                run(args.bin, ["run", "--seed", str(seed), "--weeks", str(args.weeks),
                               "--power", str(files[name]), "-o", str(closed)])
                results.setdefault((name, "closed"), {})[seed] = json.loads(
                    (closed / "summary.json").read_text())
            opened = scratch / f"open-{name}-{seed}"
            run(args.bin, ["replay", str(workload), "--seed", str(seed), "--power",
                           str(files[name]), "-o", str(opened)])
            results.setdefault((name, "open"), {})[seed] = json.loads(
                (opened / "summary.json").read_text())

    rows = []
    for name, label, _ in POLICIES:
        for loop in ("open", "closed"):
            for key, unit, path, closed_only in MEASURES:
                if closed_only and loop == "open":
                    continue
                changes = []
                base_values = []
                for seed, summary in results[(name, loop)].items():
                    base = value(results[("baseline", loop)][seed], path)
                    changes.append(100.0 * (value(summary, path) - base) / base)
                    base_values.append(base)
                n = len(changes)
                mean = statistics.fmean(changes)
                half = (t975_table(n - 1, off_table="previous") * statistics.stdev(changes)
                        / math.sqrt(n) if n > 1 else float("nan"))
                rows.append({
                    "policy": name, "label": label, "loop": loop, "measure": key, "unit": unit,
                    "baseline_mean": statistics.fmean(base_values),
                    "change_percent": mean, "ci95_percent": half, "seeds": n,
                })
    with open(out / "frontier.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(rows[0]))
        writer.writeheader()
        for row in rows:
            writer.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in row.items()})
    (out / "frontier.svg").write_text(figure(rows))
    print(table(rows))
    shutil.rmtree(scratch, ignore_errors=True)


def cell(rows, policy, loop, measure):
    for r in rows:
        if (r["policy"], r["loop"], r["measure"]) == (policy, loop, measure):
            return f"{r['change_percent']:+.1f} ± {r['ci95_percent']:.1f}"
    return "—"


def table(rows):
    lines = [
        "| policy | loop | " + " | ".join(m[1] for m in MEASURES) + " |",
        "|---|---|" + "---|" * len(MEASURES),
    ]
    for name, label, _ in POLICIES:
        for loop in ("open", "closed"):
            lines.append(
                f"| {label} | {loop} | " + " | ".join(
                    cell(rows, name, loop, m[0]) if not (m[3] and loop == "open") else "0 (fixed)"
                    for m in MEASURES) + " |")
    return "\n".join(lines)


def figure(rows):
    """Carbon saved (x) against throughput lost (y), closed loop with intervals; the open
    loop's points lie on y = 0 by construction."""
    width, height, margin = 640, 420, 60
    points = []
    for name, label, _ in POLICIES:
        def get(loop, measure):
            for r in rows:
                if (r["policy"], r["loop"], r["measure"]) == (name, loop, measure):
                    return r["change_percent"], r["ci95_percent"]
            return None
        carbon_c, carbon_c_ci = get("closed", "carbon_kg")
        tput, tput_ci = get("closed", "throughput")
        carbon_o, carbon_o_ci = get("open", "carbon_kg")
        points.append((name, -carbon_c, carbon_c_ci, -tput, tput_ci, -carbon_o, carbon_o_ci))
    xs = [p[1] + p[2] for p in points] + [p[5] + p[6] for p in points] + [1.0]
    ys = [p[3] + p[4] for p in points] + [1.0]
    x_max = max(xs) * 1.1
    y_max = max(ys) * 1.1
    x_min = min(0.0, min(p[1] - p[2] for p in points + [(0, 0, 0, 0, 0, 0, 0)]) * 1.1)
    y_min = min(0.0, min(p[3] - p[4] for p in points) * 1.1)

    def sx(x):
        return margin + (x - x_min) / (x_max - x_min) * (width - 2 * margin)

    def sy(y):
        return height - margin - (y - y_min) / (y_max - y_min) * (height - 2 * margin)

    svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="DejaVu Sans, sans-serif" font-size="11">',
           '<rect width="100%" height="100%" fill="white"/>',
           f'<line x1="{sx(x_min)}" y1="{sy(0)}" x2="{sx(x_max)}" y2="{sy(0)}" stroke="#888"/>',
           f'<line x1="{sx(0)}" y1="{sy(y_min)}" x2="{sx(0)}" y2="{sy(y_max)}" stroke="#888"/>',
           f'<text x="{width / 2}" y="{height - 15}" text-anchor="middle">carbon saved (%, mean over seeds, 95 % interval)</text>',
           f'<text x="15" y="{height / 2}" text-anchor="middle" transform="rotate(-90 15 {height / 2})">throughput lost, jobs/h (%)</text>']
    for tick in nice_ticks(x_min, x_max):
        svg.append(f'<text x="{sx(tick):.1f}" y="{sy(y_min) + 14:.1f}" text-anchor="middle">{tick:g}</text>')
    for tick in nice_ticks(y_min, y_max):
        svg.append(f'<text x="{sx(x_min) - 6:.1f}" y="{sy(tick) + 4:.1f}" text-anchor="end">{tick:g}</text>')
    for name, cx, cxe, cy, cye, ox, oxe in points:
        svg.append(f'<line x1="{sx(cx - cxe):.1f}" y1="{sy(cy):.1f}" x2="{sx(cx + cxe):.1f}" y2="{sy(cy):.1f}" stroke="#1f77b4"/>')
        svg.append(f'<line x1="{sx(cx):.1f}" y1="{sy(cy - cye):.1f}" x2="{sx(cx):.1f}" y2="{sy(cy + cye):.1f}" stroke="#1f77b4"/>')
        svg.append(f'<circle cx="{sx(cx):.1f}" cy="{sy(cy):.1f}" r="4" fill="#1f77b4"/>')
        svg.append(f'<text x="{sx(cx) + 6:.1f}" y="{sy(cy) - 6:.1f}">{name}</text>')
        svg.append(f'<line x1="{sx(ox - oxe):.1f}" y1="{sy(0):.1f}" x2="{sx(ox + oxe):.1f}" y2="{sy(0):.1f}" stroke="#d62728"/>')
        svg.append(f'<rect x="{sx(ox) - 3:.1f}" y="{sy(0) - 3:.1f}" width="6" height="6" fill="#d62728"/>')
    svg.append(f'<circle cx="{width - 190}" cy="20" r="4" fill="#1f77b4"/><text x="{width - 182}" y="24">closed loop (users react)</text>')
    svg.append(f'<rect x="{width - 193}" y="33" width="6" height="6" fill="#d62728"/><text x="{width - 182}" y="40">open loop (replay)</text>')
    svg.append("</svg>")
    return "\n".join(svg) + "\n"


def nice_ticks(low, high):
    span = high - low
    if span <= 0:
        return [low]
    step = 10 ** math.floor(math.log10(span / 5))
    for factor in (1, 2, 5, 10):
        if span / (step * factor) <= 6:
            step *= factor
            break
    start = math.ceil(low / step) * step
    ticks = []
    t = start
    while t <= high + 1e-9:
        ticks.append(round(t, 10))
        t += step
    return ticks


if __name__ == "__main__":
    main()
