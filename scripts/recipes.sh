#!/usr/bin/env bash
# The recipes compiled and tested. Copies the checkout and applies scripts/recipes/apply.py to the
# copy: each recipe of "Where to make common changes" (ARCHITECTURE.md) that is marked checked
# has a toy extension there, added exactly as the recipe says (today a queue order, a part's
# parameter struct, backfilling rule, runtime predictor, user kind, measure, output format,
# option and resource). Then, in the copy:
#   1. the generated reference pages are regenerated (`sitesim reference --out docs/reference`),
#      as the docs ask after such a change;
#   2. the workspace's tests run with the toys in (`cargo test --workspace`, the README's
#      command), so a recipe that breaks an invariant (the registries' property tests, the
#      option tables, the docs) fails here; the live-Slurm tests see no Slurm (SLURM_CONF names
#      an empty file, on which Slurm's commands fail at once: given a missing file, each retries
#      for a minute) and skip themselves: they read no registry, and CI runs them on the checkout;
#   3. each toy is checked where its recipe promises it: `sitesim schedulers` and the flags, a
#      site file's kind, results.csv's measures, summary.json, the console of `run` and the
#      gym's rewards (the measure), the output directory of `run --out` (streamed,
#      and kept whole for fair start times), `replay --out` and a sweep's runs;
#   4. given a Python virtual environment, the Python package of the copy is installed there
#      (`maturin develop`; maturin, pandas, pytest, gymnasium and numpy are installed there if
#      missing, while the copy compiles) and the toys are checked from Python (a keyword, the
#      returned files, a gym reward), then python.md is regenerated (scripts/python-api.py) and
#      the package's own option and docs tests run.
# A recipe that is no longer true fails here. Run by .ci/run.
#
#   scripts/recipes.sh [PYTHON_VENV]
#
# The copy builds in CARGO_TARGET_DIR if it is set, else in target/recipes. Cargo names a
# workspace's crates by their path inside the workspace, so in a directory shared with the
# checkout the copy's crates replace the checkout's, and the checkout's next build compiles its
# own again. CI gives it a copy of the checkout's target/ made after the checkout's builds: what
# compiled there is reused (only the workspace's crates that the toys touch, and those depending
# on them, compile again), and the checkout's tests, running meanwhile, keep their own.
set -euo pipefail
here="$(cd "$(dirname "$0")/.." && pwd)"
traces="$(cd "${SITESIM_TRACES:-$here/../shared/traces}" && pwd)"
venv="${1:-}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
fail() { echo "recipes: $*" >&2; exit 1; }
# Compiling runs at a lower priority than the tests (CI runs other tests beside this).
build() { nice -n 10 "$@"; }

copy="$work/sitesim"
mkdir -p "$copy"
# Links kept as links (-P: models, assets, configs/paper.toml). Times kept (-p): in a build
# directory the checkout's build left (CI's copy of target/), a crate that no toy touches, nor
# any crate it depends on, stays fresh; cargo compiles only the others.
(cd "$here" && git ls-files -z --cached --others --exclude-standard | xargs -0 cp -P -p --parents -t "$copy")
# ../shared beside the copy, where the tests look for the traces.
[ -d "$here/../shared" ] || fail "../shared is missing beside the checkout: the tests read the traces there"
ln -s "$(cd "$here/../shared" && pwd)" "$work/shared"
python3 "$here/scripts/recipes/apply.py" "$copy"

# The Python packages the last checks need, installed while the copy compiles.
if [ -n "$venv" ]; then
  "$venv/bin/python" -m pip install -q "maturin>=1.5,<2" pandas pytest gymnasium numpy \
    >"$work/pip.log" 2>&1 &
  pip_pid=$!
fi

export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$here/target/recipes}"
bin="$CARGO_TARGET_DIR/debug/sitesim"
cd "$copy"

echo "recipes: building the copy's tests"
build cargo test --workspace --no-run --quiet
[ -x "$bin" ] || fail "the copy's build left no $bin"
echo "recipes: regenerating the reference pages"
"$bin" reference --out docs/reference >/dev/null
git -C "$here" diff --no-index --stat "$here/docs/reference" "$copy/docs/reference" || true

echo "recipes: the workspace's tests with the toys in"
# No Slurm for these: the checkout's own test run may be using the machine's cluster.
: > "$work/no-slurm.conf"
env -u SITESIM_REQUIRE_SLURM SLURM_CONF="$work/no-slurm.conf" cargo test --workspace

echo "recipes: each toy where its recipe promises it"
cd "$work"
"$bin" schedulers > schedulers.txt
for name in fewest-running head-only half; do
  grep -q "^  $name " schedulers.txt || fail "sitesim schedulers does not list $name"
done

# Order, rule and option through flags; the format written by a streamed run.
"$bin" run --users 20 --weeks 1 --order fewest-running --backfill head-only --start 2024-02-05T00:00:00 \
  --out streamed > streamed.txt
grep -q " jobs$" streamed/toy.txt || fail "run --out (streamed) did not write toy.txt"
# The measure: in summary.json and on the console (after the summary, under its title).
grep -q '"toy_jobs_doubled": ' streamed/summary.json || fail "summary.json lacks the toy measure"
grep -q "^  toy jobs x2 " streamed.txt || fail "the run's console lacks the toy measure"
grep -q '"scheduler": "fewest-running+head-only+estimate"' streamed/summary.json || fail "the order and rule did not run"
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
values = [{ policy = "easy" }, { order = "fewest-running" }]
TOML
"$bin" sweep sweep.toml --out swept --jobs 2 > /dev/null
[ "$(ls swept/runs/*/toy.txt | wc -l)" -eq 4 ] || fail "a sweep's runs did not write toy.txt"
grep -q "toy_jobs_doubled" swept/results.csv || fail "results.csv lacks the toy measure"
# The measure as a gym reward (the gym's toy test, crates/gym/tests/toy_measure.rs, which the
# workspace's tests ran too: named here so that its failure says which recipe broke).
(cd "$copy" && build cargo test -q -p sitesim-gym --test toy_measure > /dev/null) || fail "the gym does not take the toy measure as a reward"

# A new scheduler parameter struct: the aged order's age_weight, read from [scheduler] and a
# sweep's values, written in the label and the site's summary, checked, refused where no part
# takes it, and listed in the reference.
# (the kind's site above, with the order and its key)
{ printf '[scheduler]\norder = "aged"\nage_weight = 3\n'; cat site.toml; } > aged.toml
"$bin" run --config aged.toml --out aged > /dev/null
grep -q '"scheduler": "aged-3+easy+estimate"' aged/summary.json || fail "the aged order's parameter is not in its label"
grep -q '"age_weight": 3' aged/summary.json || fail "summary.json's site lacks age_weight"
sed 's/age_weight = 3/age_weight = -1/' aged.toml > aged-bad.toml
! "$bin" run --config aged-bad.toml 2> aged-bad.txt || fail "age_weight = -1 was accepted"
grep -q "scheduler.age_weight must be >= 0, got -1" aged-bad.txt || fail "the check's message is missing: $(cat aged-bad.txt)"
sed 's/order = "aged"/policy = "easy"/' aged.toml > aged-easy.toml
! "$bin" run --config aged-easy.toml 2> aged-easy.txt || fail "age_weight was accepted by easy"
grep -q "scheduler.age_weight applies only to --order aged" aged-easy.txt || fail "the refusal does not name the part: $(cat aged-easy.txt)"
grep -q '^## `\[scheduler\] with order = "aged"`' "$copy/docs/reference/site-file.md" || fail "the reference lacks the aged order's keys"
cat > aged-sweep.toml <<TOML
site = "site.toml"
seeds = [1]
[[axes]]
name = "scheduler"
key = "scheduler"
values = [{ order = "aged", age_weight = 0 }, { order = "aged", age_weight = 5 }]
TOML
"$bin" sweep aged-sweep.toml --out aged-swept --jobs 2 > /dev/null
grep -q "aged-0+easy+estimate" aged-swept/results.csv || fail "a sweep did not label age_weight = 0"
grep -q "aged-5+easy+estimate" aged-swept/results.csv || fail "a sweep did not label age_weight = 5"

# A new resource: licences from a sacct dump's Licenses column, held within the machine's two
# under EASY, and shown in jobs.csv.
python3 - "$traces" <<'PY'
import gzip, sys
lines = [l for l in gzip.open(sys.argv[1] + "/KTH-SP2-1996-2.1-cln.swf.gz", "rt") if not l.startswith(";")][:300]
out = ["JobIDRaw|User|Account|Partition|Submit|Start|End|ElapsedRaw|TimelimitRaw|NCPUS|ReqCPUS|State|Licenses"]
t = lambda s: "2024-01-%02dT%02d:%02d:%02d" % (1 + s // 86400, s // 3600 % 24, s // 60 % 60, s % 60)
for n, line in enumerate(lines):
    f = line.split()
    submit, wait, run, procs, req = int(f[1]), int(f[2]), int(f[3]), int(f[4]), int(f[8])
    if run < 0 or procs <= 0:
        continue
    lic = "matlab:%d" % (1 + n % 2) if n % 3 == 0 else ""
    out.append("%d|u%s|a|p|%s|%s|%s|%d|%d|%d|%d|COMPLETED|%s" % (n + 1, f[11], t(submit), t(submit + wait), t(submit + wait + run), run, max(req // 60 + 1, run // 60 + 1), procs, procs, lic))
open("licences.sacct", "w").write("\n".join(out) + "\n")
PY
"$bin" replay licences.sacct --resources licences=2 --backfill easy --out licensed > /dev/null
python3 - <<'PY' || fail "licences were not carried to jobs.csv or not honoured by EASY"
import csv
rows = list(csv.DictReader(open("licensed/jobs.csv")))
assert "licences" in rows[0], rows[0].keys()
events = sorted(e for r in rows if int(r["licences"]) and int(r["end"]) > int(r["start"])
                for e in ((int(r["start"]), int(r["licences"])), (int(r["end"]), -int(r["licences"]))))
held = 0
for _, change in events:
    held += change
    assert held <= 2, held
assert any(r["licences"] == "2" for r in rows)
PY

# Python: the option is a keyword and the format is returned; the package's option and docs
# tests with the toys in.
if [ -n "$venv" ]; then
  echo "recipes: the Python package with the toys in"
  wait "$pip_pid" || { cat "$work/pip.log" >&2; fail "pip could not install maturin, pandas, pytest, gymnasium and numpy"; }
  cat "$work/pip.log"
  (cd "$copy/crates/sitesim-py" && VIRTUAL_ENV="$venv" PATH="$venv/bin:$PATH" build maturin develop -q)
  "$venv/bin/python" - <<'PY'
import sitesim
r = sitesim.run(users=10, weeks=1, start="2024-02-05T00:00:00", order="fewest-running")
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
  (cd "$copy" && "$venv/bin/python" scripts/python-api.py > docs/reference/python.md)
  (cd "$work" && SITESIM_BIN="$bin" "$venv/bin/python" -m pytest -q -p no:cacheprovider \
    "$copy/crates/sitesim-py/tests/test_options.py" "$copy/crates/sitesim-py/tests/test_docs.py")
fi
echo "recipes: every toy extension is reachable, and the tests pass with the toys in"
