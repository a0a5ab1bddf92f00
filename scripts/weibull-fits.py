#!/usr/bin/env python3
"""Fits Streit's Weibull inter-arrival model (paper 002, section 4: F(x) = 1 - exp(-(x/beta)^alpha))
to the inter-arrival times of CTC-SP2, KTH-SP2 and SDSC-SP2 by five methods, on the same gaps, and
prints each fit beside Streit's Table 2. The paper does not say how it fitted; this script shows
which common method lands near his numbers.

  scripts/weibull-fits.py [TRACES_DIR]     (default ../shared/traces; plain Python 3, no numpy)

Methods (gaps of zero seconds count as 0.5 s where a logarithm needs a positive value):
  mle        maximum likelihood (what `sitesim synth` uses)
  lsq-cdf    least squares between the empirical and the Weibull CDF at every distinct gap
  ks         the smallest largest CDF distance (Kolmogorov-Smirnov)
  plot       linear regression on the Weibull plot, ln(-ln(1 - F)) against ln x, one point per
             distinct gap (the textbook graphical method)
  moments    the Weibull with the gaps' mean and coefficient of variation
"""
import gzip
import math
import os
import sys
from collections import Counter

TABLE2 = {"CTC-SP2": (0.35, 60, 369), "KTH-SP2": (0.35, 200, 1031), "SDSC-SP2": (0.4, 290, 934)}
FILES = {"CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz", "KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz",
         "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz"}


def gaps_of(path):
    submits = []
    with gzip.open(path, "rt") as f:
        for line in f:
            if line.startswith(";") or not line.strip():
                continue
            submits.append(int(float(line.split()[1])))
    submits.sort()
    return [b - a for a, b in zip(submits, submits[1:])]


def cdf(x, a, b):
    return 1.0 - math.exp(-((x / b) ** a)) if x > 0 else 0.0


def mle(gaps):
    x = [max(g, 0.5) for g in gaps]
    logs = [math.log(v) for v in x]
    n, ml = len(x), sum(logs) / len(x)

    def score(a):
        top = max(logs)
        w = [math.exp(a * (l - top)) for l in logs]
        return sum(wi * l for wi, l in zip(w, logs)) / sum(w) - 1 / a - ml
    lo, hi = 0.01, 5.0
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if score(mid) < 0 else (lo, mid)
    a = (lo + hi) / 2
    b = (sum(v ** a for v in x) / n) ** (1 / a)
    return a, b


def ecdf_points(gaps):
    counts = sorted(Counter(gaps).items())
    n, run, pts = len(gaps), 0, []
    for x, c in counts:
        run += c
        pts.append((x, run / n, c))
    return pts


def minimise(loss, a0, b0):
    """Coordinate search on (alpha, log beta), shrinking steps."""
    a, lb = a0, math.log(b0)
    best = loss(a, math.exp(lb))
    for step_a, step_b in [(0.05, 0.5), (0.01, 0.1), (0.002, 0.02), (0.0005, 0.005)]:
        improved = True
        while improved:
            improved = False
            for da, db in [(step_a, 0), (-step_a, 0), (0, step_b), (0, -step_b)]:
                na, nlb = a + da, lb + db
                if na <= 0.01:
                    continue
                v = loss(na, math.exp(nlb))
                if v < best:
                    a, lb, best, improved = na, nlb, v, True
    return a, math.exp(lb)


def lsq_cdf(pts, a0, b0):
    return minimise(lambda a, b: sum((F - cdf(x, a, b)) ** 2 for x, F, _ in pts), a0, b0)


def ks(pts, a0, b0):
    def loss(a, b):
        worst, prev = 0.0, 0.0
        for x, F, _ in pts:
            m = cdf(x, a, b)
            worst = max(worst, abs(F - m), abs(prev - m) if x > 0 else 0.0)
            prev = F
        return worst
    return minimise(loss, a0, b0)


def plot(pts):
    xs, ys = [], []
    for x, F, _ in pts:
        if x > 0 and F < 1:
            xs.append(math.log(x))
            ys.append(math.log(-math.log(1 - F)))
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    a = sum((u - mx) * (v - my) for u, v in zip(xs, ys)) / sum((u - mx) ** 2 for u in xs)
    return a, math.exp(mx - my / a)


def moments(gaps):
    n = len(gaps)
    m = sum(gaps) / n
    cv = math.sqrt(sum((g - m) ** 2 for g in gaps) / n) / m
    lo, hi = 0.05, 5.0  # the Weibull's CV falls as alpha grows
    for _ in range(80):
        a = (lo + hi) / 2
        c = math.sqrt(math.gamma(1 + 2 / a) / math.gamma(1 + 1 / a) ** 2 - 1)
        lo, hi = (a, hi) if c > cv else (lo, a)
    a = (lo + hi) / 2
    return a, m / math.gamma(1 + 1 / a)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    traces = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "..", "..", "shared", "traces")
    print("| trace | gaps | mean gap (s) | method | alpha | beta (s) | Weibull mean (s) | KS distance |")
    print("|---|---:|---:|---|---:|---:|---:|---:|")
    for name, fname in FILES.items():
        gaps = gaps_of(os.path.join(traces, fname))
        pts = ecdf_points(gaps)
        mean = sum(gaps) / len(gaps)
        a0, b0 = mle(gaps)
        fits = [("mle", (a0, b0)), ("lsq-cdf", lsq_cdf(pts, a0, b0)), ("ks", ks(pts, a0, b0)),
                ("plot", plot(pts)), ("moments", moments(gaps))]
        ta, tb, tmean = TABLE2[name]
        fits.append(("Streit, Table 2", (ta, tb)))
        for method, (a, b) in fits:
            dist, prev = 0.0, 0.0
            for x, F, _ in pts:
                m = cdf(x, a, b)
                dist = max(dist, abs(F - m), abs(prev - m) if x > 0 else 0.0)
                prev = F
            wmean = b * math.gamma(1 + 1 / a)
            print(f"| {name} | {len(gaps)} | {mean:.0f} | {method} | {a:.3f} | {b:.0f} | "
                  f"{wmean:.0f} | {dist:.3f} |")
        print(f"| {name} | | Streit's trace: {tmean} | | | | | |")


main()
