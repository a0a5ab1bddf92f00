#!/usr/bin/env bash
# Issue 15: why do Streit's FCFS and SJF schedules tie so often (his Table 6: 87 % of CTC_syn
# decisions, case 6b 63 %) and his advanced decider beat the simple one by 16-31 % ARTwW
# (Table 4), while ours tie in about 19 % (10 seeds) and the deciders differ by about 0 %?
# Mechanism (a), one step at a time: the ARTwW quality as the waiting jobs' mean truncated to
# 60, 600 or 3600 s (--quality artww-60s|artww-600s|artww-3600s, experimental; default artww
# unchanged), so near-equal schedules tie.
# Mechanism (d), one step: --quality artww-keep (exact ARTwW; at a pass with no job end since
# the last one, the jobs already placed keep their planned starts in all three schedules and
# only the new jobs are placed in each policy's order; a job end rebuilds, as the default does
# at every pass).
# Issue 32, one step: --quality artww-queue (exact ARTwW; the FCFS schedule places the waiting
# jobs in the queue's current order, the one the previous policy left with the jobs submitted
# since behind it, instead of by submit time). For each job set (CTC_syn, KTH_syn as in
# scripts/streit-tables.sh: 10,000 jobs, Streit's Table 2 Weibull, his batch widths) and seed
# 1..SEEDS, both deciders replay the same set; prints the FCFS=SJF tie share, the case 1 and
# case 6b shares of the advanced decider's decisions, and the paired advanced-vs-simple ARTwW change with a
# 95 % t-interval over seeds; then the advanced decider's Table 6 case shares and "same
# policy" share (Table 5), and the jobs started with each policy (Table 4), beside Streit's.
#
#   scripts/streit-ties.sh [SEEDS] [OUT_DIR]    (defaults 5, results/streit-ties)
#   QUALITIES="artww artww-keep" scripts/streit-ties.sh 10    (a subset of the qualities)
#   QUALITIES="artww artww-queue" JOBS=1 scripts/streit-ties.sh 10   (issue 32's reading)
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="${SITESIM_TRACES:-$here/../shared/traces}"
seeds="${1:-5}"
out="${2:-$here/results/streit-ties}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)

declare -A file=([CTC]=CTC-SP2-1996-3.1-cln.swf.gz [KTH]=KTH-SP2-1996-2.1-cln.swf.gz)
declare -A weibull=([CTC]=0.35,60 [KTH]=0.35,200)
declare -A width=([CTC]=430 [KTH]=100)
read -r -a qualities <<< "${QUALITIES:-artww artww-60s artww-600s artww-3600s artww-keep artww-queue}"
jobs=()
for set in CTC KTH; do
  for seed in $(seq 1 "$seeds"); do
    dir="$out/$set/$seed"
    mkdir -p "$dir"
    [ -s "$dir/set.swf" ] || "$bin" synth "$traces/${file[$set]}" --swf "$dir/set.swf" \
      --seed "$seed" --processors "${width[$set]}" --weibull "${weibull[$set]}" > /dev/null 2>&1
    for q in "${qualities[@]}"; do
      for d in simple advanced; do
        jobs+=("$dir $d $q")
      done
    done
  done
done
printf '%s\n' "${jobs[@]}" | xargs -P "${JOBS:-2}" -L 1 sh -c \
  '[ -s "$0/$1-$2/summary.json" ] || "'"$bin"'" replay "$0/set.swf" --scheduler "dynp-$1" --quality "$2" --out "$0/$1-$2" > /dev/null'

python3 - "$out" "$seeds" "${qualities[@]}" <<'PY'
import json, math, sys
out, n, quals = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
T = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
     10: 2.228, 11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110,
     18: 2.101, 19: 2.093, 20: 2.086, 24: 2.064, 29: 2.045}
def ci(xs):
    m = sum(xs) / len(xs)
    if len(xs) < 2:
        return m, float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (len(xs) - 1))
    return m, T.get(len(xs) - 1, 2.1 if len(xs) < 31 else 2.0) * sd / math.sqrt(len(xs))
def f(xs, d=1):
    m, h = ci(xs)
    return f"{m:,.{d}f} ± {h:,.{d}f}"
TIES = ["1", "4b/5", "6a", "6b", "6c"]  # FCFS = SJF
print("| job set, quality | FCFS=SJF ties, advanced (%) | case 1 (%) | case 6b (%) | decisions | ARTwW simple (s) | ARTwW advanced (s) | advanced vs simple, paired (%) |")
print("|---|---:|---:|---:|---:|---:|---:|---:|")
for s in ["CTC", "KTH"]:
    for q in quals:
        ties, c1, c6b, dec, simple, adv, gap = [], [], [], [], [], [], []
        for seed in range(1, n + 1):
            js = json.load(open(f"{out}/{s}/{seed}/simple-{q}/summary.json"))
            ja = json.load(open(f"{out}/{s}/{seed}/advanced-{q}/summary.json"))
            u = ja["policy_usage"]
            d = u["decisions"]
            ties.append(100 * sum(u["cases"].get(c, 0) for c in TIES) / d)
            c1.append(100 * u["cases"].get("1", 0) / d)
            c6b.append(100 * u["cases"].get("6b", 0) / d)
            dec.append(d)
            a, b = js["summary"]["artww_seconds"], ja["summary"]["artww_seconds"]
            simple.append(a); adv.append(b); gap.append(100 * (b - a) / a)
        print(f"| {s}_syn, {q} | {f(ties)} | {f(c1)} | {f(c6b)} | {f(dec, 0)} | {f(simple, 0)} | {f(adv, 0)} | {f(gap)} |")

# Table 6 (the advanced decider's cases, % of its decisions) and Table 5's "same policy" (%,
# decisions that kept the policy), Streit's beside ours; then the jobs started with SJF / FCFS / LJF (Table 4).
STREIT6 = {
    "CTC": {"1": 2549, "2/7": 1324, "3/9": 692, "4b/5": 1298, "6a": 81, "6b": 10669, "6c": 100,
            "8a": 224, "total": 16946, "kept": 90.3},
    "KTH": {"1": 1693, "2/7": 1756, "3/9": 1029, "4b/5": 403, "6a": 116, "6b": 13664, "6c": 81,
            "8a": 89, "total": 18840, "kept": 87.9},
}
STREIT4 = {("CTC", "simple"): "27 / 68 / 5", ("CTC", "advanced"): "61 / 13 / 26",
           ("KTH", "simple"): "29 / 69 / 3", ("KTH", "advanced"): "79 / 13 / 8"}
CASES = ["1", "2/7", "3/9", "4b/5", "6a", "6b", "6c", "8a"]
print()
print("| job set, quality | " + " | ".join(f"case {c}" for c in CASES) + " | other | same policy |")
print("|---|" + "---:|" * (len(CASES) + 2))
for s in ["CTC", "KTH"]:
    t = STREIT6[s]
    pct = [100 * t[c] / t["total"] for c in CASES]
    other = 100 - sum(pct)
    print(f"| {s}_syn, Streit | " + " | ".join(f"{x:.1f}" for x in pct)
          + f" | {other:.1f} | {t['kept']:.1f} |")
    for q in quals:
        cols = {c: [] for c in CASES + ["other", "kept"]}
        for seed in range(1, n + 1):
            u = json.load(open(f"{out}/{s}/{seed}/advanced-{q}/summary.json"))["policy_usage"]
            d = u["decisions"]
            for c in CASES:
                cols[c].append(100 * u["cases"].get(c, 0) / d)
            cols["other"].append(100 * (d - sum(u["cases"].get(c, 0) for c in CASES)) / d)
            cols["kept"].append(100 * u["kept"] / d)
        print(f"| {s}_syn, {q} | " + " | ".join(f(cols[c]) for c in CASES + ["other", "kept"]) + " |")
print()
print("| job set, quality | simple: SJF / FCFS / LJF starts (%) | advanced: SJF / FCFS / LJF starts (%) |")
print("|---|---|---|")
for s in ["CTC", "KTH"]:
    print(f"| {s}_syn, Streit | {STREIT4[(s, 'simple')]} | {STREIT4[(s, 'advanced')]} |")
    for q in quals:
        row = []
        for d in ["simple", "advanced"]:
            p = {k: [] for k in ["sjf", "fcfs", "ljf"]}
            for seed in range(1, n + 1):
                st = json.load(open(f"{out}/{s}/{seed}/{d}-{q}/summary.json"))["policy_usage"]["jobs_started"]
                tot = sum(st.values())
                for k in p:
                    p[k].append(100 * st[k] / tot)
            row.append(" / ".join(f(p[k], 0) for k in ["sjf", "fcfs", "ljf"]))
        print(f"| {s}_syn, {q} | {row[0]} | {row[1]} |")
PY
