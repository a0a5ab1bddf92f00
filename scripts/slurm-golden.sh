#!/usr/bin/env bash
# Golden outputs of the Slurm model: the closed loop under `slurm` at 250 users (26 weeks),
# 2,000 and 10,000 users (one week), `slurm-site` at 1,000 users (four weeks) and on the
# gaming site, replays of KTH-SP2, SDSC-SP2 and SDSC-BLUE under `slurm-site` and `slurm`, and
# both real-Slurm captures (tests/fixtures/slurm-gpu, slurm-queue) replayed in one line with
# their slurm.conf, associations and QOS. Every output file and each console output goes into
# OUT, then a SHA-256 manifest of them. Two binaries schedule alike on these cases when their
# manifests are identical (summary.json records the command line, so compare with the same
# OUT path or with scripts/golden-diff.py):
#
#   scripts/slurm-golden.sh OUT BINARY_BEFORE; mv OUT OUT_BEFORE
#   scripts/slurm-golden.sh OUT BINARY_AFTER
#   diff OUT_BEFORE/MANIFEST OUT/MANIFEST && echo identical
#
# Takes about a minute on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="$(cd "${SITESIM_TRACES:-$here/../shared/traces}" && pwd)"
out="${1:?usage: scripts/slurm-golden.sh OUT [BINARY]}"
bin="${2:-$here/target/release/sitesim}"
[ -x "$bin" ] || (cd "$here" && cargo build --release --locked -p sitesim)
rm -rf "$out"
mkdir -p "$out"

# one case: NAME ARGS... ; outputs in OUT/NAME/run, the console in OUT/NAME/console.txt
case_() {
  local name="$1"; shift
  mkdir -p "$out/$name"
  if ! (cd "$out/$name" && "$bin" "$@" --out run > console.txt 2> stderr.txt); then
    echo "exit $?" >> "$out/$name/console.txt"
  fi
}

case_ site-250-26 -q --users 250 --weeks 26 --scheduler slurm
case_ site-2000-1 -q --users 2000 --weeks 1 --scheduler slurm
case_ site-10000-1 -q --users 10000 --weeks 1 --scheduler slurm
case_ site-1000-4-site -q --users 1000 --weeks 4 --scheduler slurm-site
case_ gaming -q run --config "$here/configs/slurm-gaming.toml" --scheduler slurm-site --weeks 4
case_ kth-site -q replay "$traces/KTH-SP2-1996-2.1-cln.swf.gz" --scheduler slurm-site
case_ kth-slurm -q replay "$traces/KTH-SP2-1996-2.1-cln.swf.gz" --scheduler slurm
case_ sdsc-site -q replay "$traces/SDSC-SP2-1998-4.2-cln.swf.gz" --scheduler slurm-site
case_ blue-site -q replay "$traces/SDSC-BLUE-2000-4.2-cln.swf.gz" --scheduler slurm-site
for capture in slurm-gpu slurm-queue; do
  dir="$here/tests/fixtures/$capture/run1"
  case_ "$capture" -q replay "$dir/sacct.txt" --scheduler slurm --slurm-conf "$dir/slurm.conf" \
    --assoc "$dir/assoc.txt" --qos "$dir/qos.txt"
done

(cd "$out" && find . -type f ! -name MANIFEST | LC_ALL=C sort | xargs sha256sum > MANIFEST)
echo "$(wc -l < "$out/MANIFEST") files; manifest: $out/MANIFEST"
