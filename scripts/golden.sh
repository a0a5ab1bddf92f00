#!/usr/bin/env bash
# Golden outputs: runs a fixed set of commands (replays of KTH-SP2, SDSC-SP2 and CTC-SP2 under
# every scheduler and with the machine, estimate and load options; the default site under easy
# and creasy, and at 1,000 users under conservative; the mixed and Schlagkamp sites; validate;
# synth; the Slurm model's sites, replays and real-Slurm captures; a small sweep) and writes every
# output file plus each command's console output into OUT, then a SHA-256 manifest of them.
# Two binaries are behaviour-identical on these cases when their manifests are identical:
#
#   scripts/golden.sh OUT_BEFORE [BINARY]     # e.g. before a refactor
#   scripts/golden.sh OUT_AFTER  [BINARY]     # after it
#   diff OUT_BEFORE/MANIFEST OUT_AFTER/MANIFEST && echo identical
#
# BINARY defaults to target/release/sitesim (built if missing). Takes about two minutes on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
# canonical, so that the paths printed and recorded are the same from any checkout
traces="$(cd "${SITESIM_TRACES:-$here/../shared/traces}" && pwd)"
out="${1:?usage: scripts/golden.sh OUT [BINARY]}"
bin="${2:-$here/target/release/sitesim}"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
rm -rf "$out"
mkdir -p "$out"

# one case: NAME ARGS... ; the console output goes to OUT/NAME/console.txt, files to OUT/NAME/
case_() {
  local name="$1"; shift
  mkdir -p "$out/$name"
  if ! (cd "$out/$name" && "$bin" "$@" > console.txt 2> stderr.txt); then
    echo "exit $?" >> "$out/$name/console.txt"
    mv "$out/$name/stderr.txt" "$out/$name/error.txt"  # a failure's message is behaviour too
  fi
}

schedulers=(fcfs easy creasy conservative conservative-sjf conservative-ljf easy-sjbf easy-sjf
            easy-plus easy-plus-plus dynp dynp-simple dynp-advanced)
declare -A trace_file=(
  [KTH]=KTH-SP2-1996-2.1-cln.swf.gz
  [SDSC]=SDSC-SP2-1998-4.2-cln.swf.gz
  [CTC]=CTC-SP2-1996-3.1-cln.swf.gz
)
for t in KTH SDSC CTC; do
  for s in "${schedulers[@]}"; do
    case_ "replay-$t-$s" replay "$traces/${trace_file[$t]}" --scheduler "$s" --out .
  done
done
kth="$traces/${trace_file[KTH]}"
ctc="$traces/${trace_file[CTC]}"
case_ replay-KTH-tsafrir-creasy replay "$kth" --scheduler creasy --alpha 1500 --warmup tsafrir --out .
case_ replay-KTH-load replay "$kth" --scheduler dynp-advanced --load-factor 0.8 --quality art --out .
case_ replay-KTH-dynp-bounds replay "$kth" --scheduler dynp --dynp-lower 3600 --dynp-upper 5000 --out .
case_ replay-KTH-fairness replay "$kth" --scheduler easy --fairness --first-jobs 3000 --out .
case_ replay-KTH-modal replay "$kth" --scheduler easy --estimates modal --seed 3 --out .
case_ replay-KTH-f replay "$kth" --scheduler easy-plus-plus --estimates f --estimate-f 2 --out .
case_ replay-KTH-phi replay "$kth" --scheduler easy --estimates phi --estimate-phi 0.3 --out .
case_ replay-KTH-exact replay "$kth" --scheduler conservative --estimates exact --out .
case_ replay-CTC-ff replay "$ctc" --scheduler easy-sjf --node-processors 4 --selection first-fit \
  --bandwidth-mix high --first-jobs 5000 --seed 2 --out .
case_ replay-CTC-fc replay "$ctc" --scheduler easy-sjf --node-processors 4 --selection first-continuous \
  --bandwidth-mix 0.5,0.1,0.4 --first-jobs 5000 --seed 2 --out .
case_ replay-CTC-nodes replay "$ctc" --scheduler conservative --node-processors 8 --first-jobs 4000 --out .

case_ run-easy run --users 250 --weeks 26 --out . --swf workload.swf
case_ run-creasy run --users 250 --weeks 26 --scheduler creasy --alpha 6000 --out .
case_ run-small-seed run --users 40 --weeks 4 --seed 7 --scheduler conservative-sjf --processors 2048 --out .
# a long queue (about a thousand jobs wait) under conservative backfilling's fast path
case_ run-conservative-long run --users 1000 --weeks 4 --scheduler conservative --out .
case_ error-too-wide run --users 40 --weeks 4 --processors 1024 --out .
case_ error-mix replay "$kth" --node-processors 4 --bandwidth-mix 0.5 --out .
case_ error-alpha replay "$kth" --scheduler easy --alpha 3 --out .
case_ run-mixed run --config "$here/configs/mixed.toml" --weeks 8 --out .
case_ run-schlagkamp run --config "$here/configs/schlagkamp.toml" --out .
mkdir -p "$out/run-nodes"
cat > "$out/run-nodes/site.toml" <<TOML
[site]
processors = 4096
node_processors = 8
selection = "first-fit"
node_bandwidth = 7000
[scheduler]
policy = "easy-plus-plus"
[run]
weeks = 3
seed = 5
warmup_days = 2
[[groups]]
name = "heavy"
users = 30
bandwidth_mix = [0.5, 0.2, 0.3]
estimates = "modal"
estimate_max_share = 0.2
[[groups]]
name = "light"
users = 20
estimates = "f"
estimate_f = 1.5
[[groups]]
name = "weekly"
kind = "schlagkamp"
users = 10
think = "c120"
estimates = "phi"
estimate_phi = 0.4
TOML
case_ run-nodes run --config site.toml --out . --swf w.swf
case_ validate validate --users 60 --weeks 8
case_ validate-default validate
case_ synth synth "$kth" --swf set.swf --count 5000 --seed 4 --shrink 0.9
case_ synth-weibull synth "$kth" --swf set.swf --count 2000 --weibull 0.4,100

# the Slurm model: the closed loop at 250 users (26 weeks), 2,000 and 10,000 users (a week),
# slurm-site at 1,000 users and on the gaming site, replays, and both real-Slurm captures
# replayed in one line with their slurm.conf, associations and QOS
case_ slurm-site-250-26 run --users 250 --weeks 26 --scheduler slurm --out .
case_ slurm-site-2000-1 run --users 2000 --weeks 1 --scheduler slurm --out .
case_ slurm-site-10000-1 run --users 10000 --weeks 1 --scheduler slurm --out .
case_ slurm-site-1000-4 run --users 1000 --weeks 4 --scheduler slurm-site --out .
case_ slurm-gaming run --config "$here/configs/slurm-gaming.toml" --scheduler slurm-site --weeks 4 --out .
case_ slurm-replay-KTH-site replay "$kth" --scheduler slurm-site --out .
case_ slurm-replay-KTH replay "$kth" --scheduler slurm --out .
case_ slurm-replay-SDSC-site replay "$traces/${trace_file[SDSC]}" --scheduler slurm-site --out .
case_ slurm-replay-BLUE-site replay "$traces/SDSC-BLUE-2000-4.2-cln.swf.gz" --scheduler slurm-site --out .
for capture in slurm-gpu slurm-queue; do
  dir="$here/tests/fixtures/$capture/run1"
  case_ "slurm-capture-$capture" replay "$dir/sacct.txt" --scheduler slurm --slurm-conf "$dir/slurm.conf" \
    --assoc "$dir/assoc.txt" --qos "$dir/qos.txt" --out .
done

mkdir -p "$out/sweep"
cat > "$out/sweep/sweep.toml" <<TOML
site = "$here/configs/paper.toml"
seeds = { first = 1, count = 3 }
baseline = "easy"
baseline_axis = "scheduler"
[[axes]]
name = "scheduler"
key = "scheduler"
values = [{ policy = "easy" }, { policy = "creasy", alpha = 3000 }, { policy = "conservative" }]
[[axes]]
name = "users"
key = "groups.0.users"
values = [20, 40]
[[axes]]
name = "weeks"
key = "run.weeks"
values = [3]
TOML
(cd "$out/sweep" && "$bin" sweep sweep.toml --out res --jobs 2 > console.txt 2> stderr.txt) || echo "exit $?" >> "$out/sweep/console.txt"
mkdir -p "$out/sweep-quantiles"
sed -e 's#^site = .*#site = "'"$here"'/configs/schlagkamp.toml"#' -e 's/count = 100/count = 4/' \
  "$here/configs/sweeps/schlagkamp.toml" > "$out/sweep-quantiles/sweep.toml"
(cd "$out/sweep-quantiles" && "$bin" sweep sweep.toml --out res --jobs 2 > console.txt 2> stderr.txt) || echo "exit $?" >> "$out/sweep-quantiles/console.txt"
# wall-clock times are not behaviour
sed -i -E 's/^(sweep: [0-9]+ runs in )[0-9.]+ s$/\1(time) s/' "$out"/sweep*/console.txt
# stderr of a successful command holds only logs and progress: not part of the behaviour compared
find "$out" -name stderr.txt -delete
# the sweep's per-run files hold every measure of every run; results.csv is built from them
(cd "$out" && find . -type f ! -name MANIFEST -print0 | sort -z | xargs -0 sha256sum > MANIFEST)
echo "$(wc -l < "$out/MANIFEST") files in $out/MANIFEST"
