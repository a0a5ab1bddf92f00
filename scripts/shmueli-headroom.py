#!/usr/bin/env python3
"""Shmueli & Feitelson (paper 000): how much headroom our users leave, and how much of it CREASY
and EASY-SJF take, at the paper's operating points; and every number docs/science/shmueli.md and
docs/science/headroom.md state about them.

    scripts/shmueli-headroom.py [SEEDS] [--out DIR] [--binary PATH] [--jobs J] [--skip-map]
    scripts/shmueli-headroom.py [SEEDS] --calibration [--out DIR] [--binary PATH] [--jobs J]

SEEDS (default 10) seeds, 1..SEEDS, 250 users and 26 weeks on the default site
(configs/paper.toml), every run with `headroom = true` (the same users, same seed, also on an
uncontended machine and under EASY). It

  1. finds the machine on which EASY gives the paper's 47 jobs/hour: bisection on the processor
     count (multiples of 16) of the mean EASY throughput over the seeds;
  2. sweeps EASY, CREASY-6000 and EASY-SJF at 250 users on the default machine (3968 processors,
     EASY at 57 % utilization over 10 seeds), the map's paper-site machine (3776, calibrated on
     seed 1), that 47-jobs/hour machine, 2048 processors (shmueli.md's claim) and a few more sizes
     between 3968 and 1280 (headroom against utilization), and the same three at 50 users on the
     default machine;
  3. sweeps EASY and CREASY-6000 with exact estimates (estimates = "exact") on the default machine;
  4. unless --skip-map, runs EASY at 250 users on each map variant's machine (docs/map/map.md's
     processors, calibrated by scripts/map.py on seed 1) over the seeds: the spread of EASY's
     utilization that seed-1 calibration leaves, and each variant's headroom.

With --calibration it does only this instead (no headroom runs): EASY at 250 users, 26 weeks on
the default site with the processor count changed (2048, 3072, 3584, 3840, 3968, 4096, 5120 and
6144), and prints (and writes to DIR/calibration.md) the utilization and throughput over the
seeds: docs/guide/sites.md's table "Calibrating the machine", from which the default machine
(3968 processors, EASY at the paper's 57 % utilization) was chosen.

It prints (and writes to DIR/report.md) markdown tables. Intervals are 95 % Student t intervals
over the seeds; "vs EASY" is the paired per-seed change on the same seeds (mean of per-seed
ratios, as results.csv's rel_diff_mean). Capture is given both ways:
  - per seed: the mean over seeds of (thr - thr_EASY) / (thr_unc - thr_EASY), seeds whose room
    thr_unc - thr_EASY is not positive dropped (their number is printed);
  - summed: sum_s (thr_s - thr_EASY,s) / sum_s (thr_unc,s - thr_EASY,s), the ratio estimator,
    with a delta-method interval (residuals d_s - R r_s), which stays stable when the room is
    small on some seeds.
Nothing here changes a default of the tool: every variation is a sweep axis or a site file in DIR.
"""

import argparse
import csv
import importlib.util
import math
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from seedstats import t975, mean_ci  # noqa: E402 (scripts/ is on sys.path)

HERE = Path(__file__).resolve().parent.parent
SITE = HERE / "configs" / "paper.toml"
DEFAULT_PROCESSORS = 3968
MAP_PROCESSORS = 3776
CLAIM_PROCESSORS = 2048
CURVE = [3968, 3776, 3072, 2560, 2048, 1792, 1536, 1280]
# docs/guide/sites.md's calibration table (--calibration)
CALIBRATION = [2048, 3072, 3584, 3840, 3968, 4096, 5120, 6144]
PAPER_EASY_THROUGHPUT = 47.0
SCHEDULERS = {
    "easy": '{ policy = "easy" }',
    "creasy-6000": '{ policy = "creasy", alpha = 6000 }',
    "easy-sjf": '{ policy = "easy-sjf" }',
}






def ratio_ci(num, den):
    """Ratio of sums R = sum(num) / sum(den) with a delta-method 95 % interval half width."""
    n = len(num)
    total = sum(den)
    if n == 0 or total <= 0:
        return math.nan, math.nan
    r = sum(num) / total
    if n < 2:
        return r, math.nan
    resid = [a - r * b for a, b in zip(num, den)]
    se = statistics.stdev(resid) / math.sqrt(n) / (total / n)
    return r, t975(n - 1) * se


def fmt(m, h, scale=1.0, digits=1, sign=False):
    if math.isnan(m):
        return "-"
    s = f"{m * scale:+.{digits}f}" if sign else f"{m * scale:.{digits}f}"
    if math.isnan(h):
        return s
    lo, hi = (m - h) * scale, (m + h) * scale
    return (f"{s} [{lo:+.{digits}f}, {hi:+.{digits}f}]" if sign
            else f"{s} [{lo:.{digits}f}, {hi:.{digits}f}]")


def run(binary, args):
    done = subprocess.run([binary, "-q", *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"sitesim {' '.join(args)} failed:\n{done.stderr}")
    return done.stdout


def sweep(binary, out: Path, seeds, axes, jobs, headroom=True, site=SITE):
    """Runs a sweep; returns {(axis values..., seed): {metric: value}} from runs.csv."""
    lines = [f'site = "{site}"', f"seeds = {{ first = 1, count = {seeds} }}"]
    if headroom:
        lines.append("headroom = true")
    for name, key, values in axes:
        lines += ["", "[[axes]]", f'name = "{name}"', f'key = "{key}"',
                  "values = [" + ", ".join(values) + "]"]
    out.mkdir(parents=True, exist_ok=True)
    (out / "sweep.toml").write_text("\n".join(lines) + "\n")
    run(binary, ["sweep", str(out / "sweep.toml"), "--out", str(out / "results"), "--per-seed",
                 "--jobs", str(jobs)])
    names = [a[0] for a in axes]
    table = defaultdict(dict)
    with (out / "results" / "runs.csv").open() as f:
        for row in csv.DictReader(f):
            key = (*(row[n] for n in names), int(row["seed"]))
            table[key][row["metric"]] = float(row["value"]) if row["value"] != "" else math.nan
    return table


def per_seed(table, prefix, seeds, metric):
    return [table[(*prefix, s)][metric] for s in range(1, seeds + 1)]


def easy_throughput(binary, work: Path, seeds, processors, jobs):
    t = sweep(binary, work / f"p{processors}", seeds,
              [("processors", "site.processors", [str(processors)])], jobs, headroom=False)
    return statistics.fmean(per_seed(t, (str(processors),), seeds, "throughput_submitted_per_hour"))


def calibrate_47(binary, work: Path, seeds, jobs):
    """The processor count (multiple of 16) whose mean EASY throughput is closest to 47 jobs/h."""
    lo, hi = 1152, DEFAULT_PROCESSORS  # the widest fitted job has 1152 processors
    seen = {}
    while hi - lo > 16:
        mid = (lo + hi) // 2 // 16 * 16
        seen[mid] = easy_throughput(binary, work, seeds, mid, jobs)
        print(f"  47 jobs/h: {mid} processors give {seen[mid]:.2f} jobs/h", file=sys.stderr)
        if seen[mid] > PAPER_EASY_THROUGHPUT:
            hi = mid
        else:
            lo = mid
    for p in (lo, hi):
        if p not in seen:
            seen[p] = easy_throughput(binary, work, seeds, p, jobs)
    best = min(seen, key=lambda p: abs(seen[p] - PAPER_EASY_THROUGHPUT))
    return best, seen[best]


def calibration(binary, out: Path, seeds, jobs):
    """EASY at 250 users on the calibration sizes; the markdown table of sites.md."""
    t = sweep(binary, out / "calibration", seeds,
              [("processors", "site.processors", [str(p) for p in CALIBRATION])], jobs,
              headroom=False)
    lines = [f"EASY, 250 users, 26 weeks, seeds 1-{seeds}, mean and 95 % interval "
             "(`scripts/shmueli-headroom.py {seeds} --calibration`):".replace("{seeds}", str(seeds)),
             "",
             "| processors | utilization (%) | throughput (jobs/h) |",
             "|---:|---|---|"]
    for p in CALIBRATION:
        key = (str(p),)
        bold = "**" if p == DEFAULT_PROCESSORS else ""
        lines.append(f"| {bold}{p}{bold} "
                     f"| {bold}{fmt(*mean_ci(per_seed(t, key, seeds, 'utilization')), 100)}{bold} "
                     f"| {fmt(*mean_ci(per_seed(t, key, seeds, 'throughput_submitted_per_hour')))} |")
    return lines


def capture_both(table, prefix_of, sched, seeds):
    """Per-seed capture (mean, half width, seeds used, seeds dropped) and the summed ratio."""
    num, den, per = [], [], []
    for s in range(1, seeds + 1):
        row = table[(*prefix_of(sched), s)]
        easy = table[(*prefix_of("easy"), s)]["throughput_submitted_per_hour"]
        unc = row["throughput_uncontended_per_hour"]
        thr = row["throughput_submitted_per_hour"]
        num.append(thr - easy)
        den.append(unc - easy)
        if unc - easy > 0:
            per.append((thr - easy) / (unc - easy))
    m, h = mean_ci(per)
    r, rh = ratio_ci(num, den)
    return (m, h, len(per), seeds - len(per)), (r, rh)


def paired_rel(table, prefix_of, sched, seeds, metric):
    xs = []
    for s in range(1, seeds + 1):
        b = table[(*prefix_of("easy"), s)][metric]
        x = table[(*prefix_of(sched), s)][metric]
        if b != 0 and not math.isnan(b) and not math.isnan(x):
            xs.append(x / b - 1)
    return mean_ci(xs)


def load_map_module():
    spec = importlib.util.spec_from_file_location("sitesim_map", HERE / "scripts" / "map.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def map_variants(binary, work: Path, seeds, jobs):
    """EASY at 250 users over the seeds on each map variant's machine (docs/map/map.md)."""
    processors = {}
    for line in (HERE / "docs" / "map" / "map.md").read_text().splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) > 2 and cells[2] == "easy":
            processors[cells[0]] = int(cells[1])
    m = load_map_module()
    variants = [("paper site", {}, None), ("exact estimates", {"estimates": '"exact"'}, None),
                ("thirds", {}, str(m.thirds_model(work)))]
    for trace in sorted(d.name for d in (HERE / "models" / "traces").iterdir() if d.is_dir()):
        variants.append((f"model: {trace.split('-')[0]}-{trace.split('-')[1]}", {},
                         str(HERE / "models" / "traces" / trace)))
    variants.append(("jobs by day", None, None))
    for model in ("wait", "slowdown"):
        variants.append((f"feedback: {model}",
                         {"feedback": f'"{model}"', "continue_a": None, "continue_b": None}, None))
    rows = []
    for name, keys, models in variants:
        if name not in processors:
            continue
        slug = name.replace(": ", "-").replace(" ", "-")
        vwork = work / slug
        vwork.mkdir(parents=True, exist_ok=True)
        if keys is None:
            keys = m.jobs_by_day(binary, vwork)
        site = vwork / "site.toml"
        site.write_text(m.site_text(keys, models, processors[name]))
        t = sweep(binary, vwork / "easy", seeds, [("scheduler", "scheduler", [SCHEDULERS["easy"]])],
                  jobs, site=site)
        util = per_seed(t, ("easy",), seeds, "utilization")
        head = per_seed(t, ("easy",), seeds, "headroom")
        rows.append((name, processors[name], util, head))
        print(f"  map: {name} done", file=sys.stderr)
    return rows


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("seeds", nargs="?", type=int, default=10)
    p.add_argument("--out", type=Path, default=Path("/tmp/shmueli-headroom"))
    p.add_argument("--binary", default=str(HERE / "target" / "release" / "sitesim"))
    p.add_argument("--jobs", type=int, default=1)
    p.add_argument("--skip-map", action="store_true", help="skip the map variants (step 4)")
    p.add_argument("--calibration", action="store_true",
                   help="only print docs/guide/sites.md's calibration table (EASY over machine sizes)")
    args = p.parse_args()
    if args.seeds < 2:
        sys.exit("SEEDS must be at least 2 (intervals need two seeds)")
    binary = str(Path(args.binary).resolve())
    out = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    n = args.seeds
    report = []

    def say(line=""):
        report.append(line)
        print(line, flush=True)

    if args.calibration:
        for line in calibration(binary, out, n, args.jobs):
            say(line)
        (out / "calibration.md").write_text("\n".join(report) + "\n")
        print(f"wrote {out / 'calibration.md'}", file=sys.stderr)
        return

    # 1. The machine on which EASY gives 47 jobs/h.
    p47, thr47 = calibrate_47(binary, out / "calibrate-47", n, args.jobs)
    sizes = sorted(set(CURVE) | {p47}, reverse=True)

    # 2. EASY, CREASY-6000 and EASY-SJF over machine sizes at 250 users, and at 50 users.
    sched_axis = ("scheduler", "scheduler", list(SCHEDULERS.values()))
    big = sweep(binary, out / "sizes", n,
                [sched_axis, ("processors", "site.processors", [str(s) for s in sizes])], args.jobs)
    small = sweep(binary, out / "users50", n,
                  [sched_axis, ("users", "groups.0.users", ["50"])], args.jobs)
    # 3. Exact estimates on the default machine.
    exact = sweep(binary, out / "exact", n,
                  [("scheduler", "scheduler", [SCHEDULERS["easy"], SCHEDULERS["creasy-6000"]]),
                   ("estimates", "groups.0.estimates", ['"exact"'])], args.jobs)

    say(f"# Headroom and capture at Shmueli & Feitelson's operating points ({n} seeds)")
    say()
    say(f"Machine for the paper's {PAPER_EASY_THROUGHPUT:g} jobs/h under EASY: {p47} processors "
        f"(mean EASY throughput {thr47:.2f} jobs/h over {n} seeds).")
    say()
    d = ("easy", str(DEFAULT_PROCESSORS))
    say(f"Default site ({DEFAULT_PROCESSORS} processors, 250 users, 26 weeks): EASY's headroom "
        f"{fmt(*mean_ci(per_seed(big, d, n, 'headroom')), 100)} % "
        f"(EASY {fmt(*mean_ci(per_seed(big, d, n, 'throughput_submitted_per_hour')), digits=2)} jobs/h, "
        f"uncontended {fmt(*mean_ci(per_seed(big, d, n, 'throughput_uncontended_per_hour')), digits=2)} "
        f"jobs/h).")
    say()
    say("## EASY's headroom against the machine size (250 users)")
    say()
    say("| processors | EASY throughput (jobs/h) | EASY utilization (%) | uncontended (jobs/h) "
        "| EASY headroom (%) | largest seed's (%) | seeds with headroom >= 50 % "
        "| EASY short jobs' mean wait (min) | EASY mean wait (min) | EASY median wait (min) |")
    say("|---:|---|---|---|---|---:|---:|---|---|---|")
    for s in sizes:
        key = ("easy", str(s))
        head = per_seed(big, key, n, "headroom")
        say(f"| {s}{' (47 jobs/h)' if s == p47 else ''} "
            f"| {fmt(*mean_ci(per_seed(big, key, n, 'throughput_submitted_per_hour')), digits=2)} "
            f"| {fmt(*mean_ci(per_seed(big, key, n, 'utilization')), 100)} "
            f"| {fmt(*mean_ci(per_seed(big, key, n, 'throughput_uncontended_per_hour')), digits=2)} "
            f"| {fmt(*mean_ci(head), 100)} | {100 * max(head):.1f} | {sum(h >= 0.5 for h in head)} of {n} "
            f"| {fmt(*mean_ci(per_seed(big, key, n, 'short_wait_mean')), 1 / 60)} "
            f"| {fmt(*mean_ci(per_seed(big, key, n, 'wait_mean')), 1 / 60)} "
            f"| {fmt(*mean_ci(per_seed(big, key, n, 'wait_p50')), 1 / 60)} |")
    say()
    say("## What CREASY-6000 and EASY-SJF take (paired against EASY on the same seeds)")
    say()
    say("| processors | users | scheduler | throughput vs EASY (%) | capture per seed (%) "
        "| seeds dropped (room <= 0) | capture, summed ratio (%) | seeds above the uncontended run |")
    say("|---:|---:|---|---|---|---:|---|---:|")
    cases = [(s, "250", big, (lambda sc, s=s: (sc, str(s)))) for s in sizes]
    cases.insert(1, (DEFAULT_PROCESSORS, "50", small, lambda sc: (sc, "50")))
    beat_examples = []
    for s, users, table, prefix_of in cases:
        for sched in ("creasy-6000", "easy-sjf"):
            (pm, ph, used, dropped), (r, rh) = capture_both(table, prefix_of, sched, n)
            rel = paired_rel(table, prefix_of, sched, n, "throughput_submitted_per_hour")
            above = []
            for seed in range(1, n + 1):
                row = table[(*prefix_of(sched), seed)]
                if row["throughput_submitted_per_hour"] > row["throughput_uncontended_per_hour"]:
                    above.append(seed)
                    beat_examples.append((s, users, sched, seed, row))
            say(f"| {s} | {users} | {sched} | {fmt(*rel, 100, sign=True)} | {fmt(pm, ph, 100)} "
                f"| {dropped} | {fmt(r, rh, 100)} | {len(above)} of {n} |")
    say()
    if beat_examples:
        say("Seeds on which a scheduler's users submitted more than on the uncontended machine:")
        say()
        for s, users, sched, seed, row in beat_examples:
            easy = (big if users == "250" else small)[
                ((("easy", str(s)) if users == "250" else ("easy", "50")) + (seed,))]
            say(f"- {s} processors, {users} users, {sched}, seed {seed}: "
                f"{row['throughput_submitted_per_hour']:.3f} jobs/h against "
                f"{row['throughput_uncontended_per_hour']:.3f} uncontended "
                f"(EASY {easy['throughput_submitted_per_hour']:.3f})")
        say()

    say("## The numbers docs/science/shmueli.md states")
    say()
    say(f"- Default site ({DEFAULT_PROCESSORS} processors), EASY, 250 users: mean wait "
        f"{fmt(*mean_ci(per_seed(big, d, n, 'wait_mean')), 1 / 60)} min, median wait "
        f"{fmt(*mean_ci(per_seed(big, d, n, 'wait_p50')), 1 / 60)} min, mean response "
        f"{fmt(*mean_ci(per_seed(big, d, n, 'response_mean')), 1 / 60)} min, utilization "
        f"{fmt(*mean_ci(per_seed(big, d, n, 'utilization')), 100)} %.")
    exact_prefix = {"easy": ("easy", "exact"), "creasy-6000": ("creasy-6000", "exact")}
    say(f"- Exact estimates, default site, 250 users: short jobs' mean wait "
        f"{fmt(*mean_ci(per_seed(exact, exact_prefix['easy'], n, 'short_wait_mean')), 1 / 60)} min "
        f"(EASY) and "
        f"{fmt(*mean_ci(per_seed(exact, exact_prefix['creasy-6000'], n, 'short_wait_mean')), 1 / 60)} "
        f"min (CREASY-6000); CREASY-6000 against EASY: short jobs' mean wait "
        f"{fmt(*paired_rel(exact, lambda sc: exact_prefix[sc], 'creasy-6000', n, 'short_wait_mean'), 100, 0, True)} %, "
        f"mean slowdown "
        f"{fmt(*paired_rel(exact, lambda sc: exact_prefix[sc], 'creasy-6000', n, 'slowdown_mean'), 100, 0, True)} %, "
        f"throughput "
        f"{fmt(*paired_rel(exact, lambda sc: exact_prefix[sc], 'creasy-6000', n, 'throughput_submitted_per_hour'), 100, 1, True)} %; "
        f"EASY's headroom "
        f"{fmt(*mean_ci(per_seed(exact, exact_prefix['easy'], n, 'headroom')), 100)} %.")
    c = ("easy", str(CLAIM_PROCESSORS))
    cp = lambda sc: (sc, str(CLAIM_PROCESSORS))
    say(f"- {CLAIM_PROCESSORS} processors, 250 users: EASY utilization "
        f"{fmt(*mean_ci(per_seed(big, c, n, 'utilization')), 100)} %, short jobs' mean wait "
        f"{fmt(*mean_ci(per_seed(big, c, n, 'short_wait_mean')), 1 / 60)} min under EASY; "
        f"CREASY-6000 throughput "
        f"{fmt(*paired_rel(big, cp, 'creasy-6000', n, 'throughput_submitted_per_hour'), 100, 1, True)} % "
        f"against EASY.")
    say()

    if not args.skip_map:
        rows = map_variants(binary, out / "map", n, args.jobs)
        say("## The map's machines: EASY at 250 users over the seeds")
        say()
        say("scripts/map.py calibrates each variant's machine on seed 1 to 57 % utilization. "
            "Over the seeds, EASY's utilization and headroom on that machine:")
        say()
        say("| variant | processors | utilization seed 1 (%) | utilization mean (%) | sd (points) "
            "| min-max (%) | EASY headroom (%) | max headroom over seeds (%) |")
        say("|---|---:|---:|---|---:|---|---|---:|")
        for name, procs, util, head in rows:
            say(f"| {name} | {procs} | {100 * util[0]:.1f} | {fmt(*mean_ci(util), 100)} "
                f"| {100 * statistics.stdev(util):.1f} | {100 * min(util):.1f}-{100 * max(util):.1f} "
                f"| {fmt(*mean_ci(head), 100)} | {100 * max(head):.1f} |")
        say()
    (out / "report.md").write_text("\n".join(report) + "\n")
    print(f"wrote {out / 'report.md'}", file=sys.stderr)


if __name__ == "__main__":
    main()
