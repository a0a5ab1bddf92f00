#!/usr/bin/env python3
"""EASY+ against EASY (Tsafrir's thesis, Table 4.2) with input shaking.

    scripts/tsafrir-shaking.py [SEEDS] [--binary PATH] [--out DIR]

Replays SDSC-SP2, CTC-SP2 (on 512 processors, as the thesis), KTH-SP2 and SDSC-BLUE under EASY
and EASY+ with Tsafrir's warm-up exclusion, once as logged and SEEDS times (default 10) with
input shaking (`replay --shake --seed S`: 10 % of the jobs moved by up to 60 s, the thesis's
section 6.5.5). For each trace it prints the mean bounded slowdown and wait of EASY and EASY+ as
logged, and over the shaken runs the paired relative change EASY+ vs EASY (same seed, so the
same shaken log) with its mean, 95 % interval (Student t) and range, beside the thesis's change.
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

HERE = Path(__file__).resolve().parent.parent
TRACES = [
    ("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz", [], -13, -10),
    ("CTC-SP2", "CTC-SP2-1996-3.1-cln.swf.gz", ["--processors", "512"], -27, -26),
    ("KTH-SP2", "KTH-SP2-1996-2.1-cln.swf.gz", [], -28, -16),
    ("SDSC-BLUE", "SDSC-BLUE-2000-4.2-cln.swf.gz", [], -25, -21),
]
# Student t 97.5 % quantiles by degrees of freedom
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306,
        9: 2.262, 10: 2.228, 14: 2.145, 19: 2.093, 29: 2.045}


def t975(df):
    return T975.get(df) or T975[max(k for k in T975 if k <= df)]


def replay(binary, trace, scheduler, extra, out):
    args = [binary, "replay", str(trace), "--scheduler", scheduler, "--warmup", "tsafrir",
            "--out", str(out), *extra]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{done.stderr}")
    s = json.loads((out / "summary.json").read_text())["summary"]
    return s["bounded_slowdown"]["mean"], s["wait_seconds"]["mean"] / 60


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
    print("| trace | EASY bsld (as logged) | EASY+ bsld (as logged) | change as logged "
          f"| change over {args.seeds} shaken logs: mean [95 % CI] (range) | thesis | "
          "wait change as logged | shaken | thesis |")
    print("|---|---:|---:|---:|---|---:|---:|---|---:|")
    for name, file, extra, thesis_bsld, thesis_wait in TRACES:
        trace = Path(args.traces) / file
        d = out / name
        e0 = replay(args.binary, trace, "easy", extra, d / "easy")
        p0 = replay(args.binary, trace, "easy-plus", extra, d / "easy-plus")
        changes_b, changes_w = [], []
        for seed in range(1, args.seeds + 1):
            shake = [*extra, "--shake", "--seed", str(seed)]
            e = replay(args.binary, trace, "easy", shake, d / f"easy-{seed}")
            q = replay(args.binary, trace, "easy-plus", shake, d / f"easy-plus-{seed}")
            changes_b.append(100 * (q[0] / e[0] - 1))
            changes_w.append(100 * (q[1] / e[1] - 1))

        def summary(xs):
            m = statistics.mean(xs)
            h = t975(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))
            return f"{m:+.1f} % [{m - h:+.1f}, {m + h:+.1f}] ({min(xs):+.1f} to {max(xs):+.1f})"

        print(f"| {name} | {e0[0]:.1f} | {p0[0]:.1f} | {100 * (p0[0] / e0[0] - 1):+.1f} % "
              f"| {summary(changes_b)} | {thesis_bsld:+d} % | {100 * (p0[1] / e0[1] - 1):+.1f} % "
              f"| {summary(changes_w)} | {thesis_wait:+d} % |", flush=True)


if __name__ == "__main__":
    main()
