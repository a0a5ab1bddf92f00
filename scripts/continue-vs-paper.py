#!/usr/bin/env python3
"""The continue table fitted from the traces against the paper's curve (Shmueli & Feitelson, eq. 1:
p(r) = 0.8 / (0.05 r + 1), r in minutes): the numbers of docs/guide/fitting.md, "Where the traces
disagree with the paper".

    scripts/continue-vs-paper.py [MODEL_DIR]    (default models/combined)

MODEL_DIR is a directory `sitesim fit ... --out DIR` wrote (DIR/combined or DIR/traces/NAME); its
continue.csv holds, per response bin, the share of closing jobs followed by a short think time.
Prints per bin the data's share, the paper's curve and the fitted curve (a / (b r + 1), a and b
from MODEL_DIR/parameters.csv) at the bin's mean response, then the data's shares for responses of
50-75 minutes against the paper's curve at 50 and 75 minutes, and the largest difference between
the data and the paper's curve below 10 minutes. Deterministic: no seeds (a fit of fixed traces).
"""

import csv
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def paper(r):
    return 0.8 / (0.05 * r + 1)


def main():
    if len(sys.argv) > 2:
        sys.exit("usage: scripts/continue-vs-paper.py [MODEL_DIR]")
    model = Path(sys.argv[1]) if len(sys.argv) == 2 else HERE / "models" / "combined"
    try:
        with (model / "continue.csv").open(newline="") as f:
            bins = [{k: float(v) for k, v in row.items()} for row in csv.DictReader(f)]
        with (model / "parameters.csv").open(newline="") as f:
            params = {row["name"]: float(row["value"]) for row in csv.DictReader(f)}
        a, b = params["continue_a"], params["continue_b"]
    except (OSError, KeyError, ValueError) as e:
        sys.exit(f"{model}: not a fitted model directory with continue.csv and parameters.csv ({e})")
    print(f"fitted: {a:.3f} / ({b:.4f} r + 1); paper: 0.8 / (0.05 r + 1); r in minutes")
    print()
    print("| response (min) | mean r | closing jobs | data | paper | fitted | data - paper |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for x in bins:
        r = x["mean_response_min"]
        print(f"| {x['response_from_min']:g}-{x['response_to_min']:g} | {r:.1f} | {x['closing_jobs']:.0f} "
              f"| {x['continued_fraction']:.3f} | {paper(r):.3f} | {a / (b * r + 1):.3f} "
              f"| {x['continued_fraction'] - paper(r):+.3f} |")
    print()
    mid = [x for x in bins if x["response_from_min"] >= 50 and x["response_to_min"] <= 75]
    if mid:
        shares = [100 * x["continued_fraction"] for x in mid]
        print(f"Responses of 50-75 min: {min(shares):.0f}-{max(shares):.0f} % of closing jobs continue "
              f"in the data; the paper's curve gives {100 * paper(75):.0f} % at 75 min and "
              f"{100 * paper(50):.0f} % at 50 min.")
    short = [x for x in bins if x["response_to_min"] <= 10]
    if short:
        worst = max(short, key=lambda x: abs(x["continued_fraction"] - paper(x["mean_response_min"])))
        diff = worst["continued_fraction"] - paper(worst["mean_response_min"])
        print(f"Below 10 min the data and the paper's curve differ by at most {abs(diff):.3f} "
              f"(bin {worst['response_from_min']:g}-{worst['response_to_min']:g} min: {diff:+.3f}).")


if __name__ == "__main__":
    main()
