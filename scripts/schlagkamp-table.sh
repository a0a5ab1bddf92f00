#!/usr/bin/env bash
# Runs Schlagkamp's artificial experiment (configs/sweeps/schlagkamp.toml) and prints docs/science/schlagkamp.md's
# table: our 2.5 % quantile / median / 97.5 % quantile of ART, AWRT, AWT, ASD and the processed
# workload (WL, processor-seconds) beside the paper's Figs. 9-14, and our WL medians against the
# paper's.
#
#   scripts/schlagkamp-table.sh [OUT_DIR] [SEEDS]    (default results/schlagkamp; SEEDS: the
#                                                    sweep file's 100 repetitions)
#
# Needs the release binary (cargo build --release) and python3.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$here/results/schlagkamp}"
bin="$here/target/release/sitesim"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
sweep="$here/configs/sweeps/schlagkamp.toml"
if [ -n "${2:-}" ]; then
  # The same sweep over seeds 1..SEEDS (the site path made absolute: it is relative to the file).
  mkdir -p "$out"
  sed -e "s/^seeds = { first = 1, count = [0-9]* }/seeds = { first = 1, count = $2 }/" \
      -e "s|^site = \"../schlagkamp.toml\"|site = \"$here/configs/schlagkamp.toml\"|" \
      "$sweep" > "$out/schlagkamp-sweep.toml"
  sweep="$out/schlagkamp-sweep.toml"
fi
"$bin" sweep "$sweep" --out "$out" > /dev/null

python3 - "$out/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
metric = {"ART": "response_mean", "AWRT": "awrt", "AWT": "wait_mean", "ASD": "slowdown_mean",
          "WL": "processed_work"}
ours = {}
for r in rows:
    if r["metric"] in metric.values():
        key = (r["scheduler"], r["cores"], r["think"], r["activity"], r["metric"])
        ours[key] = tuple(float(r[c]) for c in ("q025", "median", "q975"))
# The paper's values (Q2.5, median, Q97.5), Figs. 9-12 (lin and c120) and 13-14 (EASY and FCFS
# with lin). Figs. 13 and 14 repeat Figs. 9-12's numbers with the EASY and FCFS labels swapped
# (EASY's lin AWT at 128 cores comes from Fig. 14); Fig. 12 prints its ASD row again as AWT, so
# EASY's c120 AWT at 128 cores is unknown (None).
paper = {
    ("fcfs", "1024", "lin"): {"AWRT": (23598.44, 27720.71, 31905.83), "ART": (10985.66, 13189.83, 15842.24),
        "AWT": (9278.85, 11322.33, 13828.88), "ASD": (129.01, 240.32, 356.20), "WL": (1305272612, 1515061506, 1694093600)},
    ("fcfs", "1024", "c120"): {"AWRT": (23315.24, 27532.03, 33139.81), "ART": (10588.10, 13036.69, 17367.84),
        "AWT": (8855.86, 11187.99, 15280.66), "ASD": (141.30, 236.85, 376.36), "WL": (1200556728, 1391623828, 1625874940)},
    ("fcfs", "128", "lin"): {"AWRT": (23862.72, 27720.17, 31576.47), "ART": (16781.50, 18964.58, 22017.13),
        "AWT": (15055.25, 17086.67, 19782.00), "ASD": (209.74, 366.45, 581.06), "WL": (214225436, 239972934, 267924464)},
    ("fcfs", "128", "c120"): {"AWRT": (24569.47, 28935.14, 34166.52), "ART": (16846.89, 20547.47, 24071.83),
        "AWT": (15172.02, 18618.06, 22002.97), "ASD": (221.61, 410.72, 645.76), "WL": (206598240, 239365340, 267277068)},
    ("easy", "1024", "lin"): {"AWRT": (29084.08, 34692.37, 41745.11), "ART": (9187.50, 10882.36, 12750.43),
        "AWT": (7463.42, 9022.85, 10761.17), "ASD": (72.61, 129.72, 227.23), "WL": (1574387124, 1832448410, 2063426668)},
    ("easy", "1024", "c120"): {"AWRT": (24694.65, 30978.13, 36791.09), "ART": (7247.76, 10235.89, 12481.95),
        "AWT": (5564.28, 8353.36, 10486.81), "ASD": (63.89, 121.96, 223.41), "WL": (1326863512, 1561360172, 1808671904)},
    ("easy", "128", "lin"): {"AWRT": (25875.20, 29462.72, 36106.23), "ART": (14939.06, 17321.88, 20617.80),
        "AWT": (13303.00, 15447.49, 18586.51), "ASD": (110.62, 176.66, 306.30), "WL": (237278984, 259226294, 285866200)},
    ("easy", "128", "c120"): {"AWRT": (25826.87, 31617.68, 37162.35), "ART": (15373.38, 18638.35, 21449.06),
        "AWT": None, "ASD": (97.57, 183.75, 302.05), "WL": (228554012, 258636800, 290397720)},
}
def fmt(t, wl=False):
    if t is None:
        return "– (misprinted)"
    if wl:
        return " / ".join(f"{v / 1e9:.3f}" for v in t)
    return " / ".join(f"{v:,.0f}" if v >= 100 else f"{v:.1f}" for v in t)
figures = [("Fig. 9", "fcfs", "1024"), ("Fig. 10", "fcfs", "128"), ("Fig. 11", "easy", "1024"),
           ("Fig. 12", "easy", "128")]
print("| figure | metric | think | paper Q2.5 / median / Q97.5 | ours, p_a = 0.5 | ours, p_a = 1 |")
print("|---|---|---|---|---|---|")
for fig, sched, cores in figures:
    for name, m in metric.items():
        for think in ("lin", "c120"):
            wl = name == "WL"
            p = paper[(sched, cores, think)][name]
            a = ours[(sched, cores, think, "0.5", m)]
            b = ours[(sched, cores, think, "1", m)]
            print(f"| {fig} ({sched.upper()}, {cores}) | {name}{' (1e9 proc-s)' if wl else ''} | {think} | {fmt(p, wl)} | {fmt(a, wl)} | {fmt(b, wl)} |")
print()
print("Median change from c120 to lin (lin / c120 - 1), paper and ours (p_a = 0.5, p_a = 1):")
print()
print("| figure | ART | AWRT | AWT | ASD | WL |")
print("|---|---|---|---|---|---|")
for fig, sched, cores in figures:
    cells = []
    for name, m in metric.items():
        lin, c120 = paper[(sched, cores, "lin")][name], paper[(sched, cores, "c120")][name]
        p = f"{100 * (lin[1] / c120[1] - 1):+.1f}" if lin and c120 else "–"
        a = ours[(sched, cores, "lin", "0.5", m)][1] / ours[(sched, cores, "c120", "0.5", m)][1] - 1
        b = ours[(sched, cores, "lin", "1", m)][1] / ours[(sched, cores, "c120", "1", m)][1] - 1
        cells.append(f"{p} / {100 * a:+.1f} / {100 * b:+.1f} %")
    print(f"| {fig} ({sched.upper()}, {cores}) | " + " | ".join(cells) + " |")
print()
print("EASY against FCFS with lin (EASY / FCFS - 1 of the medians; Figs. 13-14), paper and ours (p_a = 0.5, p_a = 1):")
print()
print("| cores | ART | AWRT | AWT | ASD | WL |")
print("|---|---|---|---|---|---|")
for cores in ("1024", "128"):
    cells = []
    for name, m in metric.items():
        p = paper[("easy", cores, "lin")][name][1] / paper[("fcfs", cores, "lin")][name][1] - 1
        a = ours[("easy", cores, "lin", "0.5", m)][1] / ours[("fcfs", cores, "lin", "0.5", m)][1] - 1
        b = ours[("easy", cores, "lin", "1", m)][1] / ours[("fcfs", cores, "lin", "1", m)][1] - 1
        cells.append(f"{100 * p:+.1f} / {100 * a:+.1f} / {100 * b:+.1f} %")
    print(f"| {cores} | " + " | ".join(cells) + " |")
print()
print("Processed workload (WL), our median against the paper's (our / paper - 1), p_a = 0.5 and p_a = 1:")
print()
print("| figure | think | p_a = 0.5 | p_a = 1 |")
print("|---|---|---|---|")
gaps = {"0.5": [], "1": []}
for fig, sched, cores in figures:
    for think in ("lin", "c120"):
        cells = []
        for pa in ("0.5", "1"):
            gap = ours[(sched, cores, think, pa, metric["WL"])][1] / paper[(sched, cores, think)]["WL"][1] - 1
            gaps[pa].append(gap)
            cells.append(f"{100 * gap:+.1f} %")
        print(f"| {fig} ({sched.upper()}, {cores}) | {think} | " + " | ".join(cells) + " |")
print()
for pa, g in gaps.items():
    print(f"p_a = {pa}: from {100 * min(g):+.1f} % to {100 * max(g):+.1f} % of the paper's eight WL medians.")
PY
