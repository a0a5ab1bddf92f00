#!/usr/bin/env bash
# Replays SDSC-SP2, CTC-SP2 (on 512 processors, as in Tsafrir's thesis) and KTH-SP2 under every
# scheduler with Tsafrir's warm-up exclusion, and prints the tables of docs/science/schedulers.md
# (Markdown): mean wait (minutes), mean bounded slowdown, utilization, EASY++'s change against
# EASY, the share of the jobs each dynP variant started under FCFS / SJF / LJF, and dynP under
# Streit-style load (KTH-SP2 at load factor 0.8: ARTwW, SLDwW_60, bounded slowdown, usage).
# Every run is a deterministic replay of a trace (no seeds to vary).
#
#   scripts/scheduler-table.sh [OUT_DIR]    (default results/scheduler-table)
#
# Needs the release binary (cargo build --release) and python3 (for reading summary.json).
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="${SITESIM_TRACES:-$here/../shared/traces}"
out="${1:-$here/results/scheduler-table}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)

schedulers=(fcfs easy creasy conservative conservative-sjf conservative-ljf
            easy-sjbf easy-plus easy-plus-plus dynp dynp-simple dynp-advanced)
declare -A trace_file=(
  [SDSC-SP2]=SDSC-SP2-1998-4.2-cln.swf.gz
  [CTC-SP2]=CTC-SP2-1996-3.1-cln.swf.gz
  [KTH-SP2]=KTH-SP2-1996-2.1-cln.swf.gz
)
declare -A processors=([SDSC-SP2]="" [CTC-SP2]="--processors 512" [KTH-SP2]="")
for trace in SDSC-SP2 CTC-SP2 KTH-SP2; do
  for s in "${schedulers[@]}"; do
    dir="$out/$trace/$s"
    # shellcheck disable=SC2086 # processors is a flag and its value, or nothing
    "$bin" replay "$traces/${trace_file[$trace]}" --scheduler "$s" --warmup tsafrir \
      ${processors[$trace]} --out "$dir" > /dev/null
  done
done
loaded=(dynp dynp-simple dynp-advanced conservative-sjf)
for s in "${loaded[@]}"; do
  "$bin" replay "$traces/${trace_file[KTH-SP2]}" --scheduler "$s" --warmup tsafrir \
    --load-factor 0.8 --out "$out/KTH-SP2-load-0.8/$s" > /dev/null
done

python3 - "$out" "${schedulers[@]}" <<'PY'
import json, sys
out, schedulers = sys.argv[1], sys.argv[2:]
traces = ["SDSC-SP2", "CTC-SP2", "KTH-SP2"]
def summary(trace, s):
    with open(f"{out}/{trace}/{s}/summary.json") as f:
        return json.load(f)["summary"]
print("| scheduler | " + " | ".join(f"{t} wait (min) | bsld | util" for t in traces) + " |")
print("|---|" + "---:|---:|---:|" * len(traces))
for s in schedulers:
    cells = []
    for t in traces:
        m = summary(t, s)
        cells += [f"{m['wait_seconds']['mean'] / 60:.1f}", f"{m['bounded_slowdown']['mean']:.1f}",
                  f"{100 * m['utilization']:.1f} %"]
    print(f"| {s} | " + " | ".join(cells) + " |")
print()
for t in traces:
    easy, plus = summary(t, "easy"), summary(t, "easy-plus-plus")
    dw = plus['wait_seconds']['mean'] / easy['wait_seconds']['mean'] - 1
    db = plus['bounded_slowdown']['mean'] / easy['bounded_slowdown']['mean'] - 1
    print(f"{t}: EASY++ vs EASY: wait {100 * dw:+.0f} %, bounded slowdown {100 * db:+.0f} %, "
          f"accuracy {100 * easy['prediction_accuracy']:.0f} % -> {100 * plus['prediction_accuracy']:.0f} %")

def usage(path):
    with open(path) as f:
        started = json.load(f)["policy_usage"]["jobs_started"]
    total = sum(started.values())
    return " / ".join(f"{100 * started.get(p, 0) / total:.1f}" for p in ["fcfs", "sjf", "ljf"]) + " %"
print()
print("jobs started under FCFS / SJF / LJF (share of all the jobs started):")
print()
print("| scheduler | " + " | ".join(traces) + " |")
print("|---|" + "---|" * len(traces))
for s in ["dynp", "dynp-simple", "dynp-advanced"]:
    print(f"| {s} | " + " | ".join(usage(f"{out}/{t}/{s}/summary.json") for t in traces) + " |")
print()
print("KTH-SP2, load factor 0.8:")
print()
print("| scheduler | ARTwW (min) | SLDwW_60 | mean bounded slowdown | jobs started under FCFS / SJF / LJF |")
print("|---|---:|---:|---:|---|")
for s in ["dynp", "dynp-simple", "dynp-advanced", "conservative-sjf"]:
    path = f"{out}/KTH-SP2-load-0.8/{s}/summary.json"
    with open(path) as f:
        j = json.load(f)
    m = j["summary"]
    use = usage(path) if j.get("policy_usage") else "–"
    print(f"| {s} | {m['artww_seconds'] / 60:.1f} | {m['sldww_60']:.1f} | "
          f"{m['bounded_slowdown']['mean']:.1f} | {use} |")
PY
