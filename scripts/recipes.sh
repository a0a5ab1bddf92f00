#!/usr/bin/env bash
# The recipes compiled: copies the checkout, adds a toy queue order, backfilling rule, runtime
# predictor, user kind, measure, output format and option exactly as ARCHITECTURE.md's "Where to
# make common changes" says (scripts/recipes/apply.py), builds the copy, and checks that each
# toy is reachable where the recipe promises: `sitesim schedulers` and the flags, a site file's
# kind, results.csv's measures, summary.json and the console of `run`, the gym's rewards, the output directory of `run --out` (streamed, and kept whole for
# fair start times), `replay --out` and a sweep's runs, and, given a Python virtual environment
# with pandas, the Python package (a keyword and the returned files). A recipe that is no longer
# true fails here. Run by .ci/run.
#
#   scripts/recipes.sh [PYTHON_VENV]
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="$(cd "${SITESIM_TRACES:-$here/../shared/traces}" && pwd)"
venv="${1:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
copy="$work/sitesim"
mkdir -p "$copy"
(cd "$here" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp --parents -t "$copy")
python3 "$here/scripts/recipes/apply.py" "$copy"
# Its own target directory (a build in the checkout's could wait on the checkout's lock).
export CARGO_TARGET_DIR="$here/target/recipes"
(cd "$copy" && cargo build -q -p sitesim)
bin="$CARGO_TARGET_DIR/debug/sitesim"
fail() { echo "recipes: $*" >&2; exit 1; }
cd "$work"

"$bin" schedulers > schedulers.txt
for name in widest head-only half; do
  grep -q "^  $name " schedulers.txt || fail "sitesim schedulers does not list $name"
done

# Order, rule and option through flags; the format written by a streamed run.
"$bin" run --users 20 --weeks 1 --order widest --backfill head-only --start 2024-02-05T00:00:00 \
  --out streamed > streamed.txt
grep -q " jobs$" streamed/toy.txt || fail "run --out (streamed) did not write toy.txt"
# The measure: in summary.json and on the console (after the summary, under its title).
grep -q '"toy_jobs_doubled": ' streamed/summary.json || fail "summary.json lacks the toy measure"
grep -q "^  toy jobs x2 " streamed.txt || fail "the run's console lacks the toy measure"
grep -q '"scheduler": "widest+head-only+estimate"' streamed/summary.json || fail "the order and rule did not run"
grep -q '"start": "2024-02-05T00:00:00"' streamed/summary.json || fail "--start did not reach site.start"
# Kept whole (fair start times), and a replay with the predictor.
"$bin" run --users 20 --weeks 1 --fairness --out kept > /dev/null
[ -s kept/toy.txt ] || fail "run --out --fairness (kept) did not write toy.txt"
"$bin" replay "$traces/KTH-SP2-1996-2.1-cln.swf.gz" --first-jobs 2000 --predictor half --out replayed > /dev/null
[ -s replayed/toy.txt ] || fail "replay --out did not write toy.txt"
grep -q '"scheduler": "fcfs+easy+half"' replayed/summary.json || fail "the predictor did not run"

# The kind, in a site file; the measure and the format of a sweep's runs.
cat > site.toml <<TOML
[site]
processors = 64
[run]
weeks = 1
[[groups]]
name = "steady"
kind = "steady"
users = 5
runtime = 900
TOML
"$bin" run --config site.toml --out kind > /dev/null
[ "$(tail -n +2 kind/jobs.csv | wc -l)" -gt 100 ] || fail "the steady kind submitted too few jobs"
cat > sweep.toml <<TOML
site = "site.toml"
seeds = [1, 2]
outputs = ["toy.txt"]
[[axes]]
name = "scheduler"
key = "scheduler"
values = [{ policy = "easy" }, { order = "widest" }]
TOML
"$bin" sweep sweep.toml --out swept --jobs 2 > /dev/null
[ "$(ls swept/runs/*/toy.txt | wc -l)" -eq 4 ] || fail "a sweep's runs did not write toy.txt"
grep -q "toy_jobs_doubled" swept/results.csv || fail "results.csv lacks the toy measure"
# The measure as a gym reward (the gym's toy test, tests/toy_measure.rs).
(cd "$copy" && cargo test -q -p gym --test toy_measure > /dev/null) || fail "the gym does not take the toy measure as a reward"

# Python: the option is a keyword and the format is returned.
if [ -n "$venv" ]; then
  "$venv/bin/python" -m pip install -q maturin
  (cd "$copy/crates/sitesim-py" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" maturin develop -q)
  "$venv/bin/python" - <<'PY'
import sitesim
r = sitesim.run(users=10, weeks=1, start="2024-02-05T00:00:00", order="widest")
assert r.files["toy.txt"].endswith(b" jobs\n"), r.files.keys()
assert r.summary["site"]["site"]["start"] == "2024-02-05T00:00:00"
assert "start" in list(sitesim.options("run")["key"])
import sitesim.gym
env = sitesim.gym.SiteEnv(users=10, weeks=1, warm_days=1, action_mode="score", window=8,
                          reward="toy_jobs_doubled", reward_mode="episodic")
env.reset()
done = False
while not done:
    _, reward, te, tr, info = env.step(env.action_space.sample() * 0)
    done = te or tr
assert reward == info["measures"]["toy_jobs_doubled"] > 0, (reward, info["measures"])
PY
fi
echo "recipes: every toy extension is reachable"
