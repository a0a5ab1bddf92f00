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
#   known     the r in tt = m r + b is the response the user knew when it submitted the job that
#             has just ended (the job before it; r = 0 after a user's first job), not that job's
#             own (think_response = "known_at_submit")
#   pa1+known the same at p_a = 1
# The measurement window (run.measure, run.warmup_days; by default every job submitted in the
# ten weeks is measured, the simulation running on until it ends):
#   ended     only the jobs that ended within the ten weeks (as if the simulation stopped there)
#   started   only the jobs that started within the ten weeks
#   warmup    the first week left out (warmup_days = 7)
#   pa1+ended, pa1+started, pa1+warmup  the same at p_a = 1
# Congestion, at p_a = 1 (one assumption at a time; these run other machine sizes):
#   pa1+cores  128, 96, 64 and 48 cores (fewer cores, the same ten users)
#   pa1+users  10, 15, 20, 25 and 30 users on 128 cores (the cores column shows users/cores, e.g. 15u/128)
#
# VARIANTS="paper carry" scripts/schlagkamp-experiments.sh 100   runs only those variants;
# JOBS=1 runs one simulation at a time (sweep --jobs; default: one per processor).
#
# Needs the release binary (cargo build --release) and python3.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
seeds="${1:-5}"
out="${2:-$here/results/schlagkamp-exp}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
mkdir -p "$out"

read -r -a variants <<< "${VARIANTS:-paper pa1 clamped submit daily pa1+clamped minutes carry pa1+minutes pa1+carry known pa1+known ended started warmup pa1+ended pa1+started pa1+warmup pa1+cores pa1+users}"
for v in "${variants[@]}"; do
    # extra: keys for the group; run: keys for [run]; cores: the machine sizes; users: the
    # users axis (empty: the file's ten).
    run=""
    cores="1024, 128"
    users=""
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
        known) extra='think_response = "known_at_submit"' ;;
        pa1+known) extra=$'activity_ratio = 1.0\nthink_response = "known_at_submit"' ;;
        ended) extra="" run='measure = "ended"' ;;
        started) extra="" run='measure = "started"' ;;
        warmup) extra="" run='warmup_days = 7' ;;
        pa1+ended) extra='activity_ratio = 1.0' run='measure = "ended"' ;;
        pa1+started) extra='activity_ratio = 1.0' run='measure = "started"' ;;
        pa1+warmup) extra='activity_ratio = 1.0' run='warmup_days = 7' ;;
        pa1+cores) extra='activity_ratio = 1.0' cores="128, 96, 64, 48" ;;
        pa1+users) extra='activity_ratio = 1.0' cores="128" users="10, 15, 20, 25, 30" ;;
        *) echo "unknown variant $v" >&2; exit 2 ;;
    esac
    dir="$out/$v"
    rm -rf "$dir"
    mkdir -p "$dir"
    # The site: configs/schlagkamp.toml with p_a = 0.5 stated and the variant's keys appended to
    # its (only, last) group.
    # The [run] keys go after its `weeks` line.
    { cat "$here/configs/schlagkamp.toml"; printf '%s\n' "$extra"; } |
        sed 's/^activity_ratio = 0.5 .*$//' |
        RUN="$run" awk '{ print } /^weeks = / && ENVIRON["RUN"] != "" { print ENVIRON["RUN"] }' \
        > "$dir/site.toml"
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
values = [$cores]

[[axes]]
name = "think"
key = "groups.0.think"
values = ["c120", "lin"]

[report]
measures = ["response_mean"]
EOF
    if [ -n "$users" ]; then
        cat >> "$dir/sweep.toml" <<EOF

[[axes]]
name = "users"
key = "groups.0.users"
values = [$users]
EOF
    fi
    "$bin" sweep "$dir/sweep.toml" --out "$dir/out" --per-seed ${JOBS:+--jobs "$JOBS"} > /dev/null
done

python3 - "$out" "$seeds" "${variants[@]}" <<'PY'
import csv, math, os, statistics, sys
out, seeds, variants = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
metrics = [("ART", "response_mean"), ("AWRT", "awrt"), ("AWT", "wait_mean"),
           ("ASD", "slowdown_mean"), ("bASD", "bounded_slowdown_mean"), ("WL", "processed_work")]
# t quantiles (0.975) by degrees of freedom; 1.96 beyond the table.
T = {1: 12.71, 2: 4.30, 3: 3.18, 4: 2.78, 5: 2.57, 6: 2.45, 7: 2.36, 8: 2.31, 9: 2.26, 10: 2.23,
     15: 2.13, 20: 2.09, 30: 2.04, 40: 2.02, 50: 2.01, 60: 2.00, 99: 1.98}
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

all_runs = {}
for v in variants:
    # runs.csv: the sweep's per-seed long table (axes by name, seed, metric, unit, value).
    runs = {}
    with open(os.path.join(out, v, "out", "runs.csv"), newline="") as f:
        for row in csv.DictReader(f):
            # The machine: its cores, or users/cores when the variant varies the users.
            machine = f"{row['users']}u/{row['cores']}" if row.get("users") else row["cores"]
            key = (row["scheduler"], machine, row["think"], int(row["seed"]))
            if row["value"] != "":  # empty: a measure that does not apply to these runs
                runs.setdefault(key, {})[row["metric"]] = float(row["value"])
    all_runs[v] = runs
    machines = sorted({k[1] for k in runs},
                      key=lambda m: (-int(m.split("/")[-1]), int(m.split("u/")[0]) if "u/" in m else 0))
    print(f"## {v} ({seeds} seeds)\n")
    measured = int(sum(m["jobs_measured"] for m in runs.values()))
    simulated = int(sum(m["jobs_simulated"] for m in runs.values()))
    print(f"{measured:,} of {simulated:,} simulated jobs measured over all runs\n")
    print("| scheduler | machine | think | " + " | ".join(
        f"{n} mean ± 95 % (Q2.5 / median / Q97.5)" for n, _ in metrics) + " |")
    print("|---|---|---|" + "---|" * len(metrics))
    for sched in ("fcfs", "easy"):
        for cores in machines:
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
        for cores in machines:
            cells = paired((sched, cores, "lin"), (sched, cores, "c120"))
            print(f"| lin - c120, {sched.upper()} {cores} | " + " | ".join(cells) + " |")
    for cores in machines:
        cells = paired(("easy", cores, "lin"), ("fcfs", cores, "lin"))
        print(f"| EASY - FCFS, lin, {cores} | " + " | ".join(cells) + " |")
    print("\n(paired: mean difference / mean of the second ± 95 % interval; in brackets the ratio of the medians - 1)\n")

# One reading against another on the same seeds (a variant against the one it switches from,
# when both ran): lin under each, and the change of lin - c120 it makes.
BASE = {"known": "paper", "pa1+known": "pa1"}
for v, base in BASE.items():
    if v not in all_runs or base not in all_runs:
        continue
    a, b = all_runs[v], all_runs[base]
    print(f"## {v} against {base}, lin ({seeds} seeds)\n")
    print("| paired difference | " + " | ".join(n for n, _ in metrics) + " |")
    print("|---|" + "---|" * len(metrics))
    machines = sorted({k[1] for k in a}, key=lambda m: -int(m.split("/")[-1]))
    for sched in ("fcfs", "easy"):
        for cores in machines:
            cells = []
            for name, key in metrics:
                xa = [a[(sched, cores, "lin", s)][key] for s in range(1, seeds + 1)]
                xb = [b[(sched, cores, "lin", s)][key] for s in range(1, seeds + 1)]
                m, h = interval([x - y for x, y in zip(xa, xb)])
                base_mean = statistics.fmean(xb)
                cells.append(f"{100 * m / base_mean:+.1f} ± {100 * h / base_mean:.1f} %")
            print(f"| lin {v} - lin {base}, {sched.upper()} {cores} | " + " | ".join(cells) + " |")
    # c120 (m = 0) does not depend on the response: the same runs under both readings.
    same = all(a[k] == b[k] for k in a if k[2] == "c120")
    print(f"\n(c120 runs identical under both: {same})\n")
PY
