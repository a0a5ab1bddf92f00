"""Smoke test of an installed sitesim Python package (a wheel or a built sdist): imports it,
runs a small site on the embedded defaults (no traces needed) and checks what comes back.

    python scripts/python-smoke.py      # with the venv's python; run outside the checkout
"""

import sitesim

r = sitesim.run(users=20, weeks=1, seed=1, scheduler="easy")
jobs = len(r.jobs)
per_hour = r.summary["closed_loop"]["submitted_per_hour"]
assert jobs > 0, "no jobs"
assert per_hour > 0, per_hour
assert set(r.jobs.columns) >= {"wait", "processors"}, list(r.jobs.columns)
print(f"sitesim {sitesim.__version__} from {sitesim.__file__}: {jobs} jobs, {per_hour:.2f} submitted/h")
