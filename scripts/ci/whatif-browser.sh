#!/usr/bin/env bash
# The what-if report in a real browser: `sitesim whatif` on the fixture dump
# (tests/fixtures/slurm-gpu/run1 with the two configurations of tests/fixtures/whatif), then
# scripts/ci/browser-test.py opens the page in headless Chromium (Selenium, in a virtual
# environment of its own) and checks it: loaded, no console error, nothing fetched from outside,
# every figure rendered. The page and its screenshot are kept in ARTIFACTS.
#
#   scripts/ci/whatif-browser.sh SITESIM_BINARY VENV_DIR ARTIFACTS_DIR
#
# Needs chromium and chromium-driver (Debian packages; .ci/run installs them).
set -euo pipefail
cd "$(dirname "$0")/../.."
bin="$1"
venv="$2"
artifacts="$3"
mkdir -p "$artifacts"
fixture=tests/fixtures
"$bin" whatif --sacct "$fixture/slurm-gpu/run1/sacct.txt" --assoc "$fixture/slurm-gpu/run1/assoc.txt" \
    --slurm-conf "$fixture/whatif/current.conf" --slurm-conf "$fixture/whatif/proposed.conf" \
    --seeds 10 --weeks 1 -o "$artifacts/whatif.html" --force
if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q "selenium>=4.10,<5"
"$venv/bin/python" scripts/ci/browser-test.py "$artifacts/whatif.html" "$artifacts/whatif.png"
