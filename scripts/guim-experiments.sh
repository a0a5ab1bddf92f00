#!/usr/bin/env bash
# Guim, Corbalan & Labarta's experiment (paper 001) over several seeds of the bandwidth-demand
# draw, and variants that each switch ONE assumption, to explain where ours differs from the
# paper. For every variant, center, mix and selection it prints the mean over seeds with a 95 %
# confidence interval (Student t), and the paired difference FF - FC on the same seeds.
#
#   scripts/guim-experiments.sh [SEEDS] [OUT_DIR] [VARIANTS]
#       SEEDS     number of seeds, 1..SEEDS (default 5)
#       OUT_DIR   default results/guim-experiments
#       VARIANTS  comma-separated subset of the variants below (default: all)
#
# Variants (the baseline is this set-up: easy-sjf, first 10,000 jobs, nodes
# of 4 processors with 6000 MB/s, 500/1000/2000 MB/s per process, CTC on 512 processors,
# SDSC-BLUE on 1152, a job's penalty the largest over its nodes, the trace's estimates):
#   base        the baseline
#   mean        a job's penalty is the mean over its processes instead of the max over its nodes
#               (--node-penalty process-mean)
#   easy        EASY (arrival order) instead of SJF-backfilling
#   ctc338      CTC on its header's 338 processors instead of 512 (CTC only)
#   exact       exact runtime estimates (Table I; and HIGH, to show that with the penalty every
#               stretched job passes its estimate and is killed there)
#   nokill      the trace's estimates, but a job that ran past its estimate in the log gets its
#               runtime as estimate (the log's overruns, most under a minute, are not killed; the
#               paper's Table I kills 30 and 2 jobs where we kill 823 and 736)
#   placed      the "FF" column is First Continuous deciding and First Fit placing
#               (--selection first-continuous --placement first-fit): the same scheduling rule
#               as FC, FF's processors; FF - FC is then the placement alone (mixes only)
#   placed-mean placed, with a job's penalty the mean over its processes (mixes only)
#   offset      processor p on node (p + 2) / 4 (--node-offset 2): nodes not aligned with
#               8-processor blocks (mixes only)
#   offset1     processor p on node (p + 1) / 4 (--node-offset 1; mixes only)
#   f34         estimates 1.34 x runtime (--estimates f-deterministic --estimate-f 0.34, no
#               E_max): exact up to the largest stretch sharing can add (a third), so the
#               scheduler orders and backfills by true runtimes and sharing kills (almost) no one
#
# Measures: p95 bounded slowdown (B-SLD), p95 wait (WT, s), % penalized runtime (PRT: mean over
# jobs of added / (end - start)), PRT/r (mean over jobs of added / unstretched runtime), killed
# jobs (KJ), jobs killed by sharing (KJs: stretched past an estimate they would have met), and
# where jobs ran (the sharing model's view, over each job's unstretched run): nodes per job,
# distinct neighbours per job, % busy processors on its nodes, % of its process-seconds on full
# nodes.
# Without a mix nothing is random: one run, no interval.
#
# Needs the release binary and python3; uses 2 processes at a time.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="${SITESIM_TRACES:-$here/../shared/traces}"
seeds="${1:-5}"
out="${2:-$here/results/guim-experiments}"
variants="${3:-base,mean,easy,ctc338,exact,nokill,placed,placed-mean,offset,offset1,f34}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)

declare -A file=([CTC]=CTC-SP2-1996-3.1-cln.swf.gz [SDSC]=SDSC-BLUE-2000-4.2-cln.swf.gz)
jobs_list="$out/runs.txt"
mkdir -p "$out"
: > "$jobs_list"
# The nokill variant's traces: estimate (field 9) raised to the runtime (field 4) where it is below.
for center in CTC SDSC; do
  raised="$out/nokill-${file[$center]%.gz}"
  [ -f "$raised" ] || gzip -dc "$traces/${file[$center]}" |
    awk '/^;/ {print; next} {if ($9 >= 0 && $4 > $9) $9 = $4; print}' > "$raised"
done
IFS=, read -r -a chosen <<< "$variants"
for variant in "${chosen[@]}"; do
  for center in CTC SDSC; do
    size=$([ "$center" = CTC ] && echo 512 || echo 1152)
    extra=()
    case "$variant" in
      base) ;;
      mean) extra=(--node-penalty process-mean) ;;
      easy) ;;
      ctc338) [ "$center" = CTC ] || continue; size=338 ;;
      exact) extra=(--estimates exact) ;;
      nokill) ;;
      placed) ;;
      placed-mean) extra=(--node-penalty process-mean) ;;
      offset) extra=(--node-offset 2) ;;
      offset1) extra=(--node-offset 1) ;;
      f34) extra=(--estimates f-deterministic --estimate-f 0.34 --estimate-max 1000000000) ;;
      *) echo "unknown variant $variant" >&2; exit 2 ;;
    esac
    scheduler=$([ "$variant" = easy ] && echo easy || echo easy-sjf)
    for selection in first-fit first-continuous; do
      mixes=(none high med low)
      [ "$variant" = exact ] && mixes=(none high)
      [ "$variant" = mean ] && mixes=(high med low)
      case "$variant" in placed*|offset*) mixes=(high med low) ;; esac
      place=""
      decide=$selection
      case "$variant" in
        placed*)
          decide=first-continuous
          [ "$selection" = first-fit ] && place="--placement first-fit" ;;
      esac
      for mix in "${mixes[@]}"; do
        if [ "$mix" = none ]; then seed_list=1; else seed_list=$(seq 1 "$seeds"); fi
        for seed in $seed_list; do
          dir="$out/$variant/$center/$selection/$mix/$seed"
          [ -f "$dir/summary.json" ] && continue
          mix_flag=""
          [ "$mix" = none ] || mix_flag="--bandwidth-mix $mix"
          trace="$traces/${file[$center]}"
          [ "$variant" = nokill ] && trace="$out/nokill-${file[$center]%.gz}"
          echo "$bin replay $trace --scheduler $scheduler --first-jobs 10000 --processors $size --node-processors 4 --node-bandwidth 6000 --selection $decide $place $mix_flag ${extra[*]} --seed $seed --out $dir" >> "$jobs_list"
        done
      done
    done
  done
done
if [ -s "$jobs_list" ]; then
  tr '\n' '\0' < "$jobs_list" | xargs -0 -P 2 -I{} sh -c '{} > /dev/null'
fi

python3 - "$out" "$traces" "$variants" <<'PY'
import csv, gzip, json, math, os, statistics, sys
out, traces, variants = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
files = {"CTC": "CTC-SP2-1996-3.1-cln.swf.gz", "SDSC": "SDSC-BLUE-2000-4.2-cln.swf.gz"}
paper = {  # Tables I and II: (B-SLD p95, WT p95, % PRT, KJ)
    ("CTC", "none", "FF"): (1.9, 1390, None, 30), ("CTC", "none", "FC"): (1.7, 3890, None, 30),
    ("SDSC", "none", "FF"): (32, 31008, None, 2), ("SDSC", "none", "FC"): (64, 44301, None, 2),
    ("CTC", "high", "FF"): (4.2, 10286, 8.8, 428), ("CTC", "med", "FF"): (2.8, 8963, 4.8, 247),
    ("CTC", "low", "FF"): (2.2, 4898, 0.92, 64), ("CTC", "high", "FC"): (3.5, 4527, 11.1, 527),
    ("CTC", "med", "FC"): (3.1, 3755, 6.17, 333), ("CTC", "low", "FC"): (2.1, 2679, 1.2, 80),
    ("SDSC", "high", "FF"): (99.3, 55667, 11.8, 475), ("SDSC", "med", "FF"): (55.4, 44346, 6.7, 255),
    ("SDSC", "low", "FF"): (37.7, 32730, 1.5, 51), ("SDSC", "high", "FC"): (197, 96803, 13.8, 548),
    ("SDSC", "med", "FC"): (149, 62883, 7.5, 307), ("SDSC", "low", "FC"): (85.9, 44940, 1.4, 66),
}
T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262,
       10: 2.228, 15: 2.131, 20: 2.086, 30: 2.042}
def t95(df):
    return T95.get(df) or T95[max(k for k in T95 if k <= df)]
def interval(xs):
    m = statistics.fmean(xs)
    if len(xs) < 2:
        return m, 0.0
    return m, t95(len(xs) - 1) * statistics.stdev(xs) / math.sqrt(len(xs))
def fmt(xs, digits):
    m, h = interval(xs)
    return f"{m:,.{digits}f}" if h == 0 else f"{m:,.{digits}f} ± {h:,.{digits}f}"
runtimes = {}
def runtime_of(center):
    if center not in runtimes:
        r = {}
        with gzip.open(os.path.join(traces, files[center]), "rt") as f:
            for line in f:
                if line.startswith(";"):
                    continue
                p = line.split()
                r[int(p[0])] = (int(p[3]), int(p[8]))
        runtimes[center] = r
    return runtimes[center]
def measures(d, center):
    s = json.load(open(os.path.join(d, "summary.json")))["summary"]
    rt = runtime_of(center)
    prt_r = []
    with open(os.path.join(d, "jobs.csv")) as f:
        for row in csv.DictReader(f):
            runtime, estimate = rt[int(row["job_id"])]
            if estimate <= 0:
                estimate = runtime
            work = max(min(runtime, estimate), 0)
            ran = int(row["end"]) - int(row["start"])
            added = ran - work
            prt_r.append(100.0 * added / work if work > 0 else 0.0)
    return {"B-SLD": s["bounded_slowdown"]["p95"], "WT": s["wait_seconds"]["p95"],
            "PRT": s["penalized_runtime_percent"], "PRT/r": statistics.fmean(prt_r),
            "KJ": s["jobs_killed"], "KJs": s["jobs_killed_by_sharing"],
            "nodes": s.get("nodes_per_job"), "nbrs": s.get("neighbours_per_job"),
            "busy": s.get("node_busy_percent"), "full": s.get("node_full_percent")}
digits = {"B-SLD": 2, "WT": 0, "PRT": 2, "PRT/r": 2, "KJ": 0, "KJs": 0, "nodes": 2, "nbrs": 2,
          "busy": 2, "full": 2}
short = {"first-fit": "FF", "first-continuous": "FC"}
for variant in variants:
    vdir = os.path.join(out, variant)
    if not os.path.isdir(vdir):
        continue
    print(f"\n## {variant}\n")
    print("| center | mix | RSP | B-SLD p95 (paper / ours) | WT p95 s (paper / ours) | % PRT (paper / ours) | PRT/r | KJ (paper / ours) | KJ by sharing |")
    print("|---|---|---|---|---|---|---|---|---|")
    diffs = []
    for center in ("CTC", "SDSC"):
        if not os.path.isdir(os.path.join(vdir, center)):
            continue
        for mix in ("none", "high", "med", "low"):
            per = {}
            for selection in ("first-fit", "first-continuous"):
                d = os.path.join(vdir, center, selection, mix)
                if not os.path.isdir(d):
                    continue
                seeds = sorted(os.listdir(d), key=int)
                per[selection] = {int(x): measures(os.path.join(d, x), center) for x in seeds}
            for selection, runs in per.items():
                col = lambda k: [r[k] for r in runs.values()]
                b, w, prt, k = paper[(center, mix, short[selection])]
                print(f"| {center} | {mix} | {short[selection]} | {b} / {fmt(col('B-SLD'), 2)} | {w:,} / {fmt(col('WT'), 0)} | "
                      f"{prt if prt is not None else '–'} / {fmt(col('PRT'), 2) if mix != 'none' else '–'} | "
                      f"{fmt(col('PRT/r'), 2) if mix != 'none' else '–'} | {k} / {fmt(col('KJ'), 0)} | {fmt(col('KJs'), 0)} |")
            if len(per) == 2:
                ff, fc = per["first-fit"], per["first-continuous"]
                common = sorted(set(ff) & set(fc))
                row = [center, mix]
                for key in ("B-SLD", "WT", "PRT", "KJ"):
                    pb = paper[(center, mix, "FF")]
                    pc = paper[(center, mix, "FC")]
                    idx = {"B-SLD": 0, "WT": 1, "PRT": 2, "KJ": 3}[key]
                    pd = None if pb[idx] is None else pb[idx] - pc[idx]
                    xs = [ff[s][key] - fc[s][key] for s in common]
                    row.append(f"{'–' if pd is None else f'{pd:,.4g}'} / {fmt(xs, digits[key])}")
                diffs.append(row)
    print("\nPaired between mixes on the same seeds (a seed's high-demand jobs under LOW are high under MED\n"
          "and HIGH too), B-SLD p95 / WT p95 s; the paper says every metric rises with the share of high jobs:\n")
    print("| center | RSP | HIGH - MED | MED - LOW | LOW - none |")
    print("|---|---|---|---|---|")
    for center in ("CTC", "SDSC"):
        for selection in ("first-fit", "first-continuous"):
            got = {}
            for mix in ("none", "high", "med", "low"):
                d = os.path.join(vdir, center, selection, mix)
                if os.path.isdir(d):
                    got[mix] = {int(x): measures(os.path.join(d, x), center) for x in os.listdir(d)}
            if len(got) < 4:
                continue
            cells = []
            for a, b in (("high", "med"), ("med", "low"), ("low", "none")):
                common = sorted(set(got[a]) & set(got[b])) if b != "none" else sorted(got[a])
                other = (lambda s: got[b][s]) if b != "none" else (lambda s: got["none"][1])
                bs = [got[a][s]["B-SLD"] - other(s)["B-SLD"] for s in common]
                ws = [got[a][s]["WT"] - other(s)["WT"] for s in common]
                cells.append(f"{fmt(bs, 2)} / {fmt(ws, 0)}")
            print(f"| {center} | {short[selection]} | " + " | ".join(cells) + " |")
    if variant == "base":
        # Can two jobs ever share a node? Only if some job's processors are not a whole number
        # of nodes: the free processors then stay whole nodes under either selection (jobs are
        # placed on the lowest-numbered free processors, FF, or the first run of them, FC).
        print("\nJob sizes against the node (4 processors), over the jobs replayed (the base run without a mix):\n")
        print("| center | jobs | not a multiple of 4 | not a multiple of 8 | most neighbours per job, any mix, seed and selection |")
        print("|---|---|---|---|---|")
        for center in ("CTC", "SDSC"):
            d = os.path.join(vdir, center, "first-fit", "none", "1")
            if not os.path.isdir(d):
                continue
            with open(os.path.join(d, "jobs.csv")) as f:
                sizes = [int(row["processors"]) for row in csv.DictReader(f)]
            most = 0.0
            for selection in ("first-fit", "first-continuous"):
                for mix in ("high", "med", "low"):
                    md = os.path.join(vdir, center, selection, mix)
                    for x in (os.listdir(md) if os.path.isdir(md) else []):
                        s = json.load(open(os.path.join(md, x, "summary.json")))["summary"]
                        most = max(most, s.get("neighbours_per_job") or 0.0)
            print(f"| {center} | {len(sizes):,} | {sum(1 for p in sizes if p % 4):,} | "
                  f"{sum(1 for p in sizes if p % 8):,} | {most:.2f} |")
        # Without sharing, FF and FC still decide differently; and the log's overruns.
        print("\nWithout sharing (Table I's runs): jobs that start at other times under FF and FC, the mean "
              "wait under each, and the jobs that ran more than 180 s past their estimate in the log:\n")
        print("| center | jobs starting at other times | mean wait FF (s) | mean wait FC (s) | overran by > 180 s |")
        print("|---|---|---|---|---|")
        for center in ("CTC", "SDSC"):
            runs = {}
            for selection in ("first-fit", "first-continuous"):
                d = os.path.join(vdir, center, selection, "none", "1")
                if os.path.isdir(d):
                    with open(os.path.join(d, "jobs.csv")) as f:
                        runs[selection] = {int(r["job_id"]): (int(r["start"]), int(r["wait"]))
                                           for r in csv.DictReader(f)}
            if len(runs) < 2:
                continue
            ff, fc = runs["first-fit"], runs["first-continuous"]
            rt = runtime_of(center)
            overran = sum(1 for j in ff if rt[j][1] > 0 and rt[j][0] > rt[j][1] + 180)
            moved = sum(1 for j in ff if ff[j][0] != fc[j][0])
            print(f"| {center} | {moved:,} of {len(ff):,} | {statistics.fmean(w for _, w in ff.values()):,.0f} | "
                  f"{statistics.fmean(w for _, w in fc.values()):,.0f} | {overran:,} |")
    print("\nWhere jobs ran (mean over jobs; paired FF - FC on the same seeds):\n")
    print("| center | mix | nodes/job FF, FC, FF - FC | neighbours/job FF, FC, FF - FC | % busy FF, FC, FF - FC | % full FF, FC, FF - FC |")
    print("|---|---|---|---|---|---|")
    for center in ("CTC", "SDSC"):
        for mix in ("high", "med", "low"):
            got = {}
            for selection in ("first-fit", "first-continuous"):
                d = os.path.join(vdir, center, selection, mix)
                if os.path.isdir(d):
                    got[selection] = {int(x): measures(os.path.join(d, x), center) for x in os.listdir(d)}
            if len(got) < 2:
                continue
            ff, fc = got["first-fit"], got["first-continuous"]
            common = sorted(set(ff) & set(fc))
            if any(ff[s]["nodes"] is None or fc[s]["nodes"] is None for s in common):
                continue
            cells = []
            for key in ("nodes", "nbrs", "busy", "full"):
                cells.append(f"{fmt([ff[s][key] for s in common], digits[key])}, "
                             f"{fmt([fc[s][key] for s in common], digits[key])}, "
                             f"{fmt([ff[s][key] - fc[s][key] for s in common], digits[key])}")
            print(f"| {center} | {mix} | " + " | ".join(cells) + " |")
    print(f"\nPaired FF - FC on the same seeds (paper / ours):\n")
    print("| center | mix | B-SLD p95 | WT p95 s | % PRT | KJ |")
    print("|---|---|---|---|---|---|")
    for row in diffs:
        print("| " + " | ".join(row) + " |")
# FF's excess over FC split into decisions (base FF - placed FF: both placed by FF) and placement
# (placed FF - FC: both decided by FC), when both variants ran.
if all(os.path.isdir(os.path.join(out, v, "CTC", "first-fit")) for v in ("base", "placed")):
    print("\n## FF - FC split: decisions (base FF - placed FF) and placement (placed FF - base FC), CTC\n")
    print("| mix | measure | decisions | placement |")
    print("|---|---|---|---|")
    for mix in ("high", "med", "low"):
        runs = {}
        for v, sel in (("base", "first-fit"), ("placed", "first-fit"), ("base", "first-continuous")):
            d = os.path.join(out, v, "CTC", sel, mix)
            runs[(v, sel)] = {int(x): measures(os.path.join(d, x), "CTC") for x in os.listdir(d)}
        common = sorted(set.intersection(*(set(r) for r in runs.values())))
        for key in ("PRT", "busy", "full", "nodes", "nbrs"):
            b = runs[("base", "first-fit")]
            p = runs[("placed", "first-fit")]
            c = runs[("base", "first-continuous")]
            dec = [b[s][key] - p[s][key] for s in common]
            pla = [p[s][key] - c[s][key] for s in common]
            print(f"| {mix} | {key} | {fmt(dec, digits[key])} | {fmt(pla, digits[key])} |")
PY
