#!/usr/bin/env bash
# Streit's Tables 4 and 5 (paper 002) beside ours, over SEEDS synthetic job sets per trace
# (generator seeds 1..SEEDS; mean and 95 % t-interval over seeds; decider comparisons paired:
# both deciders replay the same job set). Job sets as in his section 4: 10,000 jobs, his Table 2
# Weibull parameters, his batch widths (CTC 430, KTH 100, SDSC 352), shrinking factor 1.00.
# Then the experiments that switch one assumption at a time:
#   E1  the decider (simple -> advanced), paired, for each quality (Table 4)
#   E2  the Weibull parameters: Streit's Table 2 -> our maximum-likelihood fit (CTC, KTH)
#   E3  the single policies' backfilling: guaranteed reservations (conservative-sjf, which only
#       ever moves a reservation earlier) -> SJF rebuilt from scratch at every pass, as CCS
#       reschedules (run as basic dynP with both bounds at 10^9 s: SJF from the first pass
#       with 5 waiting jobs; about 2 % of the jobs start under FCFS before that)
#
#   scripts/streit-tables.sh [SEEDS] [OUT_DIR]    (defaults 5, results/streit-tables)
#
# Needs the release binary (cargo build --release) and python3.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="${SITESIM_TRACES:-$here/../shared/traces}"
seeds="${1:-5}"
out="${2:-$here/results/streit-tables}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)

declare -A file=([CTC]=CTC-SP2-1996-3.1-cln.swf.gz [KTH]=KTH-SP2-1996-2.1-cln.swf.gz
                 [SDSC]=SDSC-SP2-1998-4.2-cln.swf.gz)
declare -A weibull=([CTC]=0.35,60 [KTH]=0.35,200 [SDSC]=0.4,290)
declare -A width=([CTC]=430 [KTH]=100 [SDSC]=352)
big=1000000000
runs=(dynp-simple:artww dynp-advanced:artww dynp-simple:art dynp-advanced:art
      dynp-simple:makespan dynp-advanced:makespan conservative conservative-sjf
      conservative-ljf sjf-rebuilt)
for set in CTC KTH SDSC; do
  for fit in streit mle; do
    [ "$fit" = mle ] && [ "$set" = SDSC ] && continue
    for seed in $(seq 1 "$seeds"); do
      dir="$out/$set-$fit/$seed"
      mkdir -p "$dir"
      wb=(--weibull "${weibull[$set]}")
      [ "$fit" = mle ] && wb=()
      "$bin" synth "$traces/${file[$set]}" --swf "$dir/set.swf" --seed "$seed" \
        --processors "${width[$set]}" "${wb[@]}" > /dev/null 2>&1
      for run in "${runs[@]}"; do
        [ "$fit" = mle ] && case $run in *:art|*:makespan|conservative|conservative-ljf) continue;; esac
        case $run in
          *:*) args=(--scheduler "${run%%:*}" --quality "${run##*:}") ;;
          sjf-rebuilt) args=(--scheduler dynp --dynp-lower $big --dynp-upper $big) ;;
          *) args=(--scheduler "$run") ;;
        esac
        "$bin" replay "$dir/set.swf" "${args[@]}" --out "$dir/${run/:/-}" > /dev/null
      done
    done
  done
done

python3 - "$out" "$seeds" <<'PY'
import json, math, sys
out, n = sys.argv[1], int(sys.argv[2])
T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
        10: 2.228, 14: 2.145, 19: 2.093, 29: 2.045}
def t(df):
    return T975.get(df) or T975[max(k for k in T975 if k <= df)] if df < 30 else 1.96
def ci(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, t(len(xs) - 1) * sd / math.sqrt(len(xs))
def fmt(xs, d=0, scale=1.0):
    m, h = ci([x * scale for x in xs])
    return f"{m:,.{d}f} ± {h:,.{d}f}"
def load(set_, fit, seed, run):
    with open(f"{out}/{set_}-{fit}/{seed}/{run}/summary.json") as f:
        return json.load(f)
def col(set_, fit, run, key):
    vals = []
    for s in range(1, n + 1):
        j = load(set_, fit, s, run)
        sm = j["summary"]
        v = {"artww": sm["artww_seconds"], "art": sm["response_seconds"]["mean"],
             "wait": sm["wait_seconds"]["mean"], "util": sm["utilization"],
             "loc": sm["loss_of_capacity"], "sldww": sm["sldww_60"]}.get(key)
        if v is None:
            u = j["policy_usage"]
            if key.startswith("started_"):
                v = u["jobs_started"][key[8:]]
            elif key == "decisions":
                v = u["decisions"]
            elif key.startswith("switch_"):
                v = 100 * u["switches_to"][key[7:]] / u["decisions"]
            elif key == "kept":
                v = 100 * u["kept"] / u["decisions"]
            elif key == "backlog":
                v = u["average_backlog"]
            elif key.startswith("case_"):
                v = 100 * u["cases"].get(key[5:], 0) / u["decisions"]
        vals.append(v)
    return vals
def paired(set_, fit, a, b, key="artww"):
    xa, xb = col(set_, fit, a, key), col(set_, fit, b, key)
    return fmt([100 * (y / x - 1) for x, y in zip(xa, xb)], 1)

sets = ["CTC", "KTH", "SDSC"]
print(f"## Table 4 (shrinking factor 1.00), ours: mean ± 95 % interval over {n} job sets\n")
for set_ in sets:
    print(f"### {set_}_syn\n")
    print("| | " + " | ".join(f"{q} {d}" for q in ["ARTwW", "ART", "MS"] for d in ["simple", "advanced"]) + " |")
    print("|---|" + "---:|" * 6)
    runs = [f"dynp-{d}-{q}" for q in ["artww", "art", "makespan"] for d in ["simple", "advanced"]]
    for label, key, d, scale in [("ARTwW (s)", "artww", 0, 1), ("UTIL (%)", "util", 2, 100),
                                 ("LOC", "loc", 4, 1), ("jobs started with SJF", "started_sjf", 0, 1),
                                 ("jobs started with FCFS", "started_fcfs", 0, 1),
                                 ("jobs started with LJF", "started_ljf", 0, 1)]:
        print(f"| {label} | " + " | ".join(fmt(col(set_, "streit", r, key), d, scale) for r in runs) + " |")
    print("| advanced vs simple, ARTwW (paired, %) | | " + " | | ".join(
        paired(set_, "streit", f"dynp-simple-{q}", f"dynp-advanced-{q}") for q in ["artww", "art", "makespan"]) + " |")
    print()
print(f"## Table 5 (advanced decider, ARTwW quality), ours\n")
print("| | " + " | ".join(f"{s}_syn" for s in sets) + " |")
print("|---|" + "---:|" * len(sets))
rows = [("average wait time (s)", "wait", 0, 1), ("ART (s)", "art", 0, 1), ("ARTwW (s)", "artww", 0, 1),
        ("utilization (%)", "util", 2, 100), ("LOC", "loc", 4, 1),
        ("jobs started with SJF", "started_sjf", 0, 1), ("jobs started with FCFS", "started_fcfs", 0, 1),
        ("jobs started with LJF", "started_ljf", 0, 1), ("total tries of switches", "decisions", 0, 1),
        ("switches to SJF (%)", "switch_sjf", 2, 1), ("switches to FCFS (%)", "switch_fcfs", 2, 1),
        ("switches to LJF (%)", "switch_ljf", 2, 1), ("same policy (%)", "kept", 2, 1),
        ("average backlog", "backlog", 2, 1), ("case 1 (%)", "case_1", 1, 1),
        ("cases 2 & 7 (%)", "case_2/7", 1, 1), ("case 6b (%)", "case_6b", 1, 1)]
for label, key, d, scale in rows:
    print(f"| {label} | " + " | ".join(fmt(col(s, "streit", "dynp-advanced-artww", key), d, scale) for s in sets) + " |")
print()
print("## Single policies beside self-tuning dynP (ARTwW quality), ARTwW (s)\n")
print("| | " + " | ".join(f"{s}_syn" for s in sets) + " |")
print("|---|" + "---:|" * len(sets))
for label, run in [("conservative FCFS", "conservative"), ("conservative SJF (guaranteed reservations)", "conservative-sjf"),
                   ("conservative LJF", "conservative-ljf"), ("SJF rebuilt at every pass", "sjf-rebuilt"),
                   ("dynP simple", "dynp-simple-artww"), ("dynP advanced", "dynp-advanced-artww")]:
    print(f"| {label} | " + " | ".join(fmt(col(s, "streit", run, "artww")) for s in sets) + " |")
print("| E3: SJF rebuilt vs guaranteed (paired, %) | " + " | ".join(paired(s, "streit", "conservative-sjf", "sjf-rebuilt") for s in sets) + " |")
print("| advanced vs SJF rebuilt (paired, %) | " + " | ".join(paired(s, "streit", "sjf-rebuilt", "dynp-advanced-artww") for s in sets) + " |")
print("| advanced vs conservative SJF (paired, %) | " + " | ".join(paired(s, "streit", "conservative-sjf", "dynp-advanced-artww") for s in sets) + " |")
print()
print("## E2: Streit's Weibull -> our maximum-likelihood fit (same seeds; ARTwW quality)\n")
print("| | CTC Streit | CTC MLE | KTH Streit | KTH MLE |")
print("|---|---:|---:|---:|---:|")
for label, fn in [("utilization (%)", lambda s, f: fmt(col(s, f, "dynp-advanced-artww", "util"), 1, 100)),
                  ("advanced ARTwW (s)", lambda s, f: fmt(col(s, f, "dynp-advanced-artww", "artww"))),
                  ("advanced vs simple (paired, %)", lambda s, f: paired(s, f, "dynp-simple-artww", "dynp-advanced-artww")),
                  ("advanced vs SJF rebuilt (paired, %)", lambda s, f: paired(s, f, "sjf-rebuilt", "dynp-advanced-artww")),
                  ("advanced vs conservative SJF (paired, %)", lambda s, f: paired(s, f, "conservative-sjf", "dynp-advanced-artww"))]:
    print(f"| {label} | " + " | ".join(fn(s, f) for s in ["CTC", "KTH"] for f in ["streit", "mle"]) + " |")
PY
