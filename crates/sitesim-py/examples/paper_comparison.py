"""The paper's comparison from Python: EASY against CREASY at growing site sizes.

Shmueli & Feitelson (TPDS 2009), Figs. 10-11: with users who react to response times, CREASY
(criticality + seniority, alpha = 6000) raises throughput over EASY as the site grows. This
script sweeps both schedulers on the paper's site (embedded defaults) for a few site sizes and
seeds with ``sitesim.sweep`` (runs in parallel, the GIL released while they simulate) and draws
throughput and mean wait against the number of users with matplotlib, each mean with its 95 %
confidence interval over the seeds (Student's t, computed by the sweep as for
``sitesim sweep``'s results.csv), and prints the paired change of CREASY against EASY on the
same seeds.

    pip install ./crates/sitesim-py matplotlib
    python crates/sitesim-py/examples/paper_comparison.py --out comparison.png

Defaults are small (26 weeks, 5 seeds, 4 sizes: 40 runs, about 20 s on two cores); an
interval over fewer than 5 seeds is too wide to tell the schedulers apart. The paper's grid is
configs/sweeps/paper.toml (``sitesim.sweep("configs/sweeps/paper.toml")``).
"""

import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import sitesim  # noqa: E402

SCHEDULERS = {"easy": '{ policy = "easy" }', "creasy-6000": '{ policy = "creasy", alpha = 6000 }'}
# measure of results.csv -> (panel title, y label, scale to the printed unit)
MEASURES = {
    "throughput_submitted_per_hour": ("throughput", "jobs submitted per hour", 1.0),
    "wait_mean": ("mean wait", "minutes", 1 / 60),
}
# a marker and a line style per scheduler as well as a colour: the figure reads in greyscale
STYLES = {"easy": ("o", "-"), "creasy-6000": ("s", "--")}


def sweep_text(users, seeds, weeks):
    """The sweep file, as text: the embedded default site, EASY as the paired baseline."""
    return "\n".join([
        f"seeds = {{ first = 1, count = {seeds} }}",
        'baseline = "easy"',
        'baseline_axis = "scheduler"',
        "[[axes]]", 'name = "scheduler"', 'key = "scheduler"',
        "values = [" + ", ".join(SCHEDULERS.values()) + "]",
        "[[axes]]", 'name = "users"', 'key = "groups.0.users"',
        "values = [" + ", ".join(str(u) for u in users) + "]",
        "[[axes]]", 'name = "weeks"', 'key = "run.weeks"', f"values = [{weeks}]",
    ]) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, nargs="+", default=[150, 200, 250, 300])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--weeks", type=int, default=26)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", default="paper_comparison.png")
    args = parser.parse_args()
    if args.seeds < 2:
        parser.error("--seeds: an interval needs at least 2 seeds (5 or more to be useful)")

    results = sitesim.sweep(sweep_text(args.users, args.seeds, args.weeks), jobs=args.threads)
    results = results[results["metric"].isin(MEASURES)].copy()
    results["users"] = results["users"].astype(int)

    columns = ["scheduler", "users", "metric", "n", "mean", "ci95_low", "ci95_high",
               "rel_diff_mean", "rel_diff_ci95_low", "rel_diff_ci95_high"]
    print(results[columns].round(3).to_string(index=False))

    fig, axes = plt.subplots(1, len(MEASURES), figsize=(10, 4))
    for ax, (metric, (title, ylabel, scale)) in zip(axes, MEASURES.items()):
        rows = results[results["metric"] == metric]
        for scheduler, group in rows.groupby("scheduler", sort=False):
            group = group.sort_values("users")
            marker, line = STYLES.get(scheduler, ("^", ":"))
            mean = group["mean"] * scale
            # cut at 0: a mean minus t standard errors can fall below what no run can have
            low = (group["ci95_low"] * scale).clip(lower=0)
            high = group["ci95_high"] * scale
            # a light band with the interval's ends as error bars: readable where they overlap
            ax.fill_between(group["users"], low, high, alpha=0.15)
            ax.errorbar(group["users"], mean, yerr=[mean - low, high - mean], marker=marker,
                        linestyle=line, capsize=4, label=scheduler)
        ax.set(xlabel="users", ylabel=ylabel, title=f"{title} (mean, 95 % interval)")
        ax.set_ylim(bottom=0)
        ax.legend()
    fig.suptitle(f"EASY vs CREASY (alpha = 6000), {args.weeks} weeks, {args.seeds} seeds")
    fig.tight_layout()
    fig.savefig(args.out, dpi=150)
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
