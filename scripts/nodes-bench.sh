#!/usr/bin/env bash
# The cost per job of a site of node types with GPU users against a CPU-only site of the same
# cores and users (issue 43: at most 2x), measured alternately in one batch.
#
#   bash scripts/nodes-bench.sh [BINARY] [USERS] [WEEKS] [ROUNDS]
#
# BINARY: a sitesim binary (default target/release/sitesim); USERS: simulated users (default
# 10000); WEEKS: simulated weeks (default 1); ROUNDS: alternating runs of each (default 3).
# The GPU site is configs/gpu-site.toml scaled to USERS (its 48 CPU and 16 GPU nodes times
# USERS / 250, its illustrative mix); the CPU-only site has the same cores as site.processors,
# no nodes and no mix, and the same users, seed and weeks. Prints, per run, the user+system CPU
# seconds, the peak RSS and the jobs measured, then the median CPU seconds per 1000 jobs of each
# and their ratio.
set -euo pipefail
cd "$(dirname "$0")/.."
bin="${1:-target/release/sitesim}"
users="${2:-10000}"
weeks="${3:-1}"
rounds="${4:-3}"
scale=$(( (users + 249) / 250 ))
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cp configs/gpu-site-resources.csv "$work/"
sed -e "s/^count = 48$/count = $((48 * scale))/" -e "s/^count = 16$/count = $((16 * scale))/" \
    -e "s/^weeks = .*/weeks = $weeks/" -e "s/^users = .*/users = $users/" \
    configs/gpu-site.toml > "$work/gpu.toml"
cores=$(( (48 + 16) * scale * 64 ))
cat > "$work/cpu.toml" <<TOML
[site]
processors = $cores
start = "2024-01-01T00:00:00"
[scheduler]
policy = "easy"
[run]
weeks = $weeks
seed = 1
[[groups]]
name = "users"
users = $users
TOML
grep -q "count = $((16 * scale))" "$work/gpu.toml" || { echo "could not scale the GPU site" >&2; exit 1; }
printf '%-5s %5s %10s %10s %10s\n' site round cpu_s peak_mb jobs
for round in $(seq 1 "$rounds"); do
    for site in cpu gpu; do
        rm -rf "$work/out"
        /usr/bin/time -f "%U %S %M" -o "$work/time" "$bin" -q run --config "$work/$site.toml" --out "$work/out" >/dev/null
        read -r user system rss < "$work/time"
        jobs=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['summary']['jobs_simulated'])" "$work/out/summary.json")
        cpu=$(python3 -c "print(round($user + $system, 2))")
        printf '%-5s %5s %10s %10s %10s\n' "$site" "$round" "$cpu" "$((rss / 1024))" "$jobs"
        echo "$site $cpu $jobs" >> "$work/results"
    done
done
python3 - "$work/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
per = {}
for site, cpu, jobs in rows:
    per.setdefault(site, []).append(float(cpu) / int(jobs) * 1000)
cpu, gpu = statistics.median(per["cpu"]), statistics.median(per["gpu"])
print(f"median CPU seconds per 1000 jobs: CPU-only {cpu:.3f}, node types with GPU users {gpu:.3f}; ratio {gpu / cpu:.2f}")
PY
