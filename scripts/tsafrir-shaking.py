#!/usr/bin/env python3
"""EASY+, EASY-SJBF and EASY++ against EASY (Tsafrir's thesis, Tables 4.1-4.3) with input shaking.

    scripts/tsafrir-shaking.py [SEEDS] [--binary PATH] [--out DIR]

Replays SDSC-SP2, CTC-SP2 (on 512 processors, as the thesis), KTH-SP2 and SDSC-BLUE under EASY,
EASY+, EASY-SJBF and EASY++ with Tsafrir's warm-up exclusion, once as logged and SEEDS times
(default 10) with input shaking (`replay --shake --seed S`: 10 % of the jobs moved by up to 60 s,
the thesis's section 6.5.5). It prints three tables:

1. EASY as logged (mean wait in minutes, mean bounded slowdown) beside the thesis's Table 4.1;
2. EASY+ against EASY (Table 4.2): the bounded slowdown of both as logged, and the relative change
   as logged and over the shaken runs, paired (same seed, so the same shaken log), with its mean,
   95 % interval (Student t) and range, beside the thesis's change;
3. EASY-SJBF and EASY++ against EASY (Table 4.3) in the same form, for wait and bounded slowdown.

One assumption switches: the exact arrival times (within a minute for 10 % of the jobs).
"""

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from seedstats import t975  # noqa: E402 (scripts/ is on sys.path)

HERE = Path(__file__).resolve().parent.parent
# name, file, extra replay arguments, thesis Table 4.1 EASY (wait min, bsld), Table 4.2 EASY+ change
# (bsld %, wait %), Table 4.3 EASY-SJBF change and EASY++ change (wait %, bsld %; SDSC-SP2's SJBF
# wait is "-0%" in the thesis)
TRACES = [
    ("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz", [], (363, 99), (-13, -10), (-0.0, -12), (-10, -29)),
    ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", ["--processors", "512"], (21, 4.6), (-27, -26),
     (-10, -14), (-33, -37)),
    ("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf.gz", [], (114, 90), (-28, -16), (-11, -19), (-17, -36)),
    ("SDSC-BLUE", "SDSC-BLUE-2000-4.2-cln.swf.gz", [], (130, 35), (-25, -21), (-21, -42),
     (-33, -47)),
]
SCHEDULERS = ["easy", "easy-plus", "easy-sjbf", "easy-plus-plus"]


def replay(binary, trace, scheduler, extra, out):
    """Mean bounded slowdown and mean wait (minutes) of one replay."""
    args = [binary, "replay", str(trace), "--scheduler", scheduler, "--warmup", "tsafrir",
            "--out", str(out), "--force", *extra]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr}")
    s = json.loads((out / "summary.json").read_text())["summary"]
    return s["bounded_slowdown"]["mean"], s["wait_seconds"]["mean"] / 60


def change(a, b):
    """Relative change from a to b, per cent."""
    return 100 * (b / a - 1)


def summary(xs):
    m = statistics.mean(xs)
    h = t975(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))
    return f"{m:+.1f} % [{m - h:+.1f}, {m + h:+.1f}] ({min(xs):+.1f} to {max(xs):+.1f})"


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("seeds", nargs="?", type=int, default=10)
    p.add_argument("--binary", default=str(HERE / "target" / "release" / "sitesim"))
    p.add_argument("--out", type=Path, default=None)
    p.add_argument("--traces", default=str(HERE.parent / "shared" / "traces"))
    args = p.parse_args()
    if args.seeds < 2:
        sys.exit("give at least 2 seeds (5 or more for useful intervals)")
    out = args.out or Path(tempfile.mkdtemp(prefix="tsafrir-shaking-"))
    # runs[name][scheduler] = (as logged, [shaken by seed]), each (bsld, wait)
    runs = {}
    for name, file, extra, *_ in TRACES:
        trace = Path(args.traces) / file
        d = out / name
        runs[name] = {}
        for sched in SCHEDULERS:
            logged = replay(args.binary, trace, sched, extra, d / sched)
            shaken = [replay(args.binary, trace, sched, [*extra, "--shake", "--seed", str(seed)],
                             d / f"{sched}-{seed}") for seed in range(1, args.seeds + 1)]
            runs[name][sched] = (logged, shaken)

    print("EASY as logged, beside the thesis's Table 4.1:\n")
    print("| trace | mean wait (min), ours | thesis | mean bounded slowdown, ours | thesis |")
    print("|---|---:|---:|---:|---:|")
    for name, _, _, (t_wait, t_bsld), *_ in TRACES:
        bsld, wait = runs[name]["easy"][0]
        print(f"| {name} | {wait:.1f} | {t_wait} | {bsld:.1f} | {t_bsld} |")

    print("\nEASY+ against EASY, beside the thesis's Table 4.2:\n")
    print("| trace | EASY bsld (as logged) | EASY+ bsld (as logged) | change as logged "
          f"| change over {args.seeds} shaken logs: mean [95 % CI] (range) | thesis | "
          "wait change as logged | shaken | thesis |")
    print("|---|---:|---:|---:|---|---:|---:|---|---:|")
    for name, _, _, _, (thesis_bsld, thesis_wait), *_ in TRACES:
        (e0, es), (p0, ps) = runs[name]["easy"], runs[name]["easy-plus"]
        changes_b = [change(e[0], q[0]) for e, q in zip(es, ps)]
        changes_w = [change(e[1], q[1]) for e, q in zip(es, ps)]
        print(f"| {name} | {e0[0]:.1f} | {p0[0]:.1f} | {change(e0[0], p0[0]):+.1f} % "
              f"| {summary(changes_b)} | {thesis_bsld:+.0f} % | {change(e0[1], p0[1]):+.1f} % "
              f"| {summary(changes_w)} | {thesis_wait:+.0f} % |")

    print("\nEASY-SJBF and EASY++ against EASY, beside the thesis's Table 4.3 "
          "(wait in minutes; changes paired on each shaken log):\n")
    print("| trace | scheduler | wait, as logged | change as logged "
          f"| change over {args.seeds} shaken logs: mean [95 % CI] (range) | thesis "
          "| bsld, as logged | change as logged | shaken | thesis |")
    print("|---|---|---:|---:|---|---:|---:|---:|---|---:|")
    for name, _, _, _, _, sjbf, plus2 in TRACES:
        e0, es = runs[name]["easy"]
        for sched, (t_wait, t_bsld) in [("easy-sjbf", sjbf), ("easy-plus-plus", plus2)]:
            q0, qs = runs[name][sched]
            changes_w = [change(e[1], q[1]) for e, q in zip(es, qs)]
            changes_b = [change(e[0], q[0]) for e, q in zip(es, qs)]
            print(f"| {name} | {sched} | {q0[1]:.1f} | {change(e0[1], q0[1]):+.1f} % "
                  f"| {summary(changes_w)} | {t_wait:+.0f} % | {q0[0]:.1f} "
                  f"| {change(e0[0], q0[0]):+.1f} % | {summary(changes_b)} | {t_bsld:+.0f} % |")


if __name__ == "__main__":
    main()
