#!/usr/bin/env bash
# Schlagkamp's artificial setup (paper 004, section 3.1) with one assumption switched at a time,
# to explain where our numbers differ from Figs. 9-14. Each variant runs FCFS and EASY on 1024
# and 128 cores with the think times c120 and lin on the same seeds, and the script prints, per
# variant, the mean with its 95 % interval (t) and the 2.5 % quantile / median / 97.5 % quantile
# of ART, AWRT, AWT, ASD, bounded ASD (runtime at least 10 s) and WL, then the paired
# differences lin - c120 and EASY - FCFS (lin) seed by seed, relative to the second's mean.
#
#   scripts/schlagkamp-experiments.sh [SEEDS] [OUT_DIR]   (default 5 seeds, results/schlagkamp-exp)
#
# Variants (all else is Fig. 6 with the paper's p_a = 0.5):
#   paper     as stated: p_a = 0.5, weekly activity draws, runtimes from the normal truncated at
#             0, think time from the end of the last job
#   pa1       p_a = 1 (every user active every week)
#   clamped   runtimes from the full normal, draws below 1 s set to 1 s (2.3 % of the jobs)
#   submit    think time counted from the last job's submission (the next job at
#             max(end, submit + tt))
#   daily     activity drawn day by day (p_a p_d / max p), not week by week
#   pa1+clamped  both (a combination, not a single switch)
#   minutes   the response r in tt = m r + b taken in minutes (b in seconds); the paper states
#             seconds, so this tests a unit mismatch
#   carry     a think time past 17:00 continues at the next working day's 09:00 with what is
#             left (think only in working hours) instead of submitting at 09:00
#   pa1+minutes, pa1+carry  the same at p_a = 1 (where the workloads of lin and c120 are close)
#
# VARIANTS="paper carry" scripts/schlagkamp-experiments.sh 100   runs only those variants.
#
# Needs the release binary (cargo build --release) and python3.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
seeds="${1:-5}"
out="${2:-$here/results/schlagkamp-exp}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
mkdir -p "$out"

read -r -a variants <<< "${VARIANTS:-paper pa1 clamped submit daily pa1+clamped minutes carry pa1+minutes pa1+carry}"
for v in "${variants[@]}"; do
    case "$v" in
        paper) extra="" ;;
        pa1) extra='activity_ratio = 1.0' ;;
        clamped) extra='runtime_draw = "clamped"' ;;
        submit) extra='think_from = "submit"' ;;
        daily) extra='activity_draws = "day"' ;;
        pa1+clamped) extra=$'activity_ratio = 1.0\nruntime_draw = "clamped"' ;;
        minutes) extra='think_response_unit = "minutes"' ;;
        carry) extra='think_across_days = "carry"' ;;
        pa1+minutes) extra=$'activity_ratio = 1.0\nthink_response_unit = "minutes"' ;;
        pa1+carry) extra=$'activity_ratio = 1.0\nthink_across_days = "carry"' ;;
        *) echo "unknown variant $v" >&2; exit 2 ;;
    esac
    dir="$out/$v"
    rm -rf "$dir"
    mkdir -p "$dir"
    # The site: configs/schlagkamp.toml with p_a = 0.5 stated and the variant's keys appended to
    # its (only, last) group.
    { cat "$here/configs/schlagkamp.toml"; printf '%s\n' "$extra"; } |
        sed 's/^activity_ratio = 0.5 .*$//' > "$dir/site.toml"
    grep -q '^activity_ratio' "$dir/site.toml" || echo 'activity_ratio = 0.5' >> "$dir/site.toml"
    cat > "$dir/sweep.toml" <<EOF
site = "site.toml"
seeds = { first = 1, count = $seeds }

[[axes]]
name = "scheduler"
key = "scheduler"
values = [{ policy = "fcfs" }, { policy = "easy" }]

[[axes]]
name = "cores"
key = "site.processors"
values = [1024, 128]

[[axes]]
name = "think"
key = "groups.0.think"
values = ["c120", "lin"]

[report]
measures = ["response_mean"]
EOF
    "$bin" sweep "$dir/sweep.toml" --out "$dir/out" > /dev/null
done

python3 - "$out" "$seeds" "${variants[@]}" <<'PY'
import json, math, os, statistics, sys
out, seeds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
metrics = [("ART", "response_mean"), ("AWRT", "awrt"), ("AWT", "wait_mean"),
           ("ASD", "slowdown_mean"), ("bASD", "bounded_slowdown_mean"), ("WL", "processed_work")]
# t quantiles (0.975) by degrees of freedom; 1.96 beyond the table.
T = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
     15: 2.13, 20: 2.09, 30: 2.04, 50: 2.01, 99: 1.98}
def t975(df):
    return T[max(k for k in T if k <= df)] if df >= 1 else float("nan")
def interval(xs):
    m = statistics.fmean(xs)
    h = t975(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs)) if len(xs) > 1 else float("nan")
    return m, h
def quantile(xs, q):
    xs = sorted(xs)
    i = q * (len(xs) - 1)
    lo = math.floor(i)
    return xs[lo] + (xs[min(lo + 1, len(xs) - 1)] - xs[lo]) * (i - lo)
def num(v, name):
    if name == "WL":
        return f"{v / 1e9:.3f}"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.1f}"

for v in variants:
    runs = {}
    for f in os.listdir(os.path.join(out, v, "out", "runs")):
        r = json.load(open(os.path.join(out, v, "out", "runs", f)))
        sched, cores, think = r["labels"]
        runs[(sched, cores, think, r["seed"])] = r["metrics"]
    print(f"## {v} ({seeds} seeds)\n")
    print("| scheduler | cores | think | " + " | ".join(
        f"{n} mean ± 95 % (Q2.5 / median / Q97.5)" for n, _ in metrics) + " |")
    print("|---|---|---|" + "---|" * len(metrics))
    for sched in ("fcfs", "easy"):
        for cores in ("1024", "128"):
            for think in ("lin", "c120"):
                cells = []
                for name, key in metrics:
                    xs = [runs[(sched, cores, think, s)][key] for s in range(1, seeds + 1)]
                    m, h = interval(xs)
                    q = " / ".join(num(quantile(xs, p), name) for p in (0.025, 0.5, 0.975))
                    cells.append(f"{num(m, name)} ± {num(h, name)} ({q})")
                print(f"| {sched} | {cores} | {think} | " + " | ".join(cells) + " |")
    print()
    def paired(a, b):
        """Mean of a - b seed by seed, relative to b's mean, with its 95 % interval; and the
        ratio of the medians (the paper's way) minus 1."""
        rows = []
        for name, key in metrics:
            xa = [runs[a + (s,)][key] for s in range(1, seeds + 1)]
            xb = [runs[b + (s,)][key] for s in range(1, seeds + 1)]
            m, h = interval([x - y for x, y in zip(xa, xb)])
            base = statistics.fmean(xb)
            med = statistics.median(xa) / statistics.median(xb) - 1
            rows.append(f"{100 * m / base:+.1f} ± {100 * h / base:.1f} % ({100 * med:+.1f} %)")
        return rows
    print("| paired difference | " + " | ".join(n for n, _ in metrics) + " |")
    print("|---|" + "---|" * len(metrics))
    for sched in ("fcfs", "easy"):
        for cores in ("1024", "128"):
            cells = paired((sched, cores, "lin"), (sched, cores, "c120"))
            print(f"| lin - c120, {sched.upper()} {cores} | " + " | ".join(cells) + " |")
    for cores in ("1024", "128"):
        cells = paired(("easy", cores, "lin"), ("fcfs", cores, "lin"))
        print(f"| EASY - FCFS, lin, {cores} | " + " | ".join(cells) + " |")
    print("\n(paired: mean difference / mean of the second ± 95 % interval; in brackets the ratio of the medians - 1)\n")
PY
