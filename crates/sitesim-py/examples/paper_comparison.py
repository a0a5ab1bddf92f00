"""The paper's comparison from Python: EASY against CREASY at growing site sizes.

Shmueli & Feitelson (TPDS 2009), Figs. 10-11: with users who react to response times, CREASY
(criticality + seniority, alpha = 6000) raises throughput over EASY as the site grows. This
script runs both schedulers on the paper's site (embedded defaults) for a few site sizes and
seeds, in parallel Python threads (the GIL is released while each run simulates), and draws
throughput and mean wait against the number of users with matplotlib.

    pip install ./crates/sitesim-py matplotlib
    python crates/sitesim-py/examples/paper_comparison.py --out comparison.png

Defaults are small (26 weeks, 3 seeds, 4 sizes: 24 runs, about 12 s on two cores); the paper's
grid is configs/sweeps/paper.toml (``sitesim.sweep("configs/sweeps/paper.toml")``).
"""

import argparse
from concurrent.futures import ThreadPoolExecutor

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

import sitesim  # noqa: E402


def one(scheduler, users, seed, weeks):
    r = sitesim.run(users=users, weeks=weeks, seed=seed, scheduler=scheduler)
    closed, summary = r.summary["closed_loop"], r.summary["summary"]
    return {
        "scheduler": scheduler,
        "users": users,
        "seed": seed,
        "throughput": closed["submitted_per_hour"],
        "jobs_per_session": closed["mean_session_jobs"],
        "wait_min": summary["wait_seconds"]["mean"] / 60.0,
        # jobs.csv as a DataFrame: the share of all jobs that waited at all
        "waited_share": (r.jobs["wait"] > 0).mean(),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[150, 200, 250, 300])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--weeks", type=int, default=26)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="paper_comparison.png")
    args = parser.parse_args()

    grid = [
        (s, u, seed, args.weeks)
        for s in ("easy", "creasy")
        for u in args.users
        for seed in range(1, args.seeds + 1)
    ]
    with ThreadPoolExecutor(args.threads) as pool:
        rows = list(pool.map(lambda g: one(*g), grid))
    runs = pd.DataFrame(rows)
    table = runs.groupby(["scheduler", "users"])[["throughput", "jobs_per_session", "wait_min", "waited_share"]].mean()
    print(table.round(2).to_string())

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for scheduler, group in runs.groupby("scheduler"):
        means = group.groupby("users").mean(numeric_only=True)
        left.plot(means.index, means["throughput"], marker="o", label=scheduler)
        right.plot(means.index, means["wait_min"], marker="o", label=scheduler)
    left.set(xlabel="users", ylabel="jobs submitted per hour", title="throughput")
    right.set(xlabel="users", ylabel="minutes", title="mean wait")
    left.legend()
    fig.suptitle(f"EASY vs CREASY (alpha = 6000), {args.weeks} weeks, mean of {args.seeds} seeds")
    fig.tight_layout()
    fig.savefig(args.out, dpi=120)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
