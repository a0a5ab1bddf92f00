#!/usr/bin/env python3
"""Env-steps per second of the ways to hand sitesim's environments to Stable-Baselines3, for
docs/guide/gym.md (issue 41).

    python scripts/gym-bench-sb3.py [--envs 8] [--steps 100000] [--repeats 3] [--json OUT]

For each case (SDSC-SP2 in score mode, the closed-loop site in pick and score mode; the speed
table's settings: window 128, 256-job episodes after 1024 warm jobs, EASY; the site 250 users
for 4 weeks, the agent taking over after a week) it steps N environments with a fixed action
(pick: slot 0; score: scores falling with the slot, i.e. FCFS), resets included, the best of
--repeats runs:

* native: the native vector (``SiteVectorEnv``/``ReplayVectorEnv``), one call for N envs;
* adapter: ``sitesim.sb3.SB3VecEnv`` over the same native vector (SB3's ``VecEnv`` API: the
  same-step autoreset, per-env info dicts);
* dummy: SB3's ``DummyVecEnv`` over N single environments, stepped in turn in one process;
* subproc: SB3's ``SubprocVecEnv``, one process per environment (the fallback without the
  adapter), fewer steps (it is slow to start and to step).

Needs stable-baselines3 (and so torch). The load average at the start and end is printed.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

import numpy as np
from stable_baselines3.common.vec_env import DummyVecEnv, SubprocVecEnv

import sitesim.gym as sg
from sitesim.sb3 import SB3VecEnv

ROOT = Path(__file__).resolve().parent.parent
TRACES = Path(os.environ.get("SITESIM_TRACES", ROOT.parent / "shared" / "traces"))
SITE = dict(users=250, weeks=4, warm_days=7)
CASES = [("sdsc-sp2", "score"), ("site", "pick"), ("site", "score")]


def make_single(trace, mode):
    if trace == "site":
        return lambda: sg.SiteEnv(action_mode=mode, **SITE)
    path = str(TRACES / sg.TRACES[trace])
    return lambda: sg.ReplayEnv(path, action_mode=mode)


def make_vector(trace, mode, n):
    if trace == "site":
        return sg.SiteVectorEnv(num_envs=n, action_mode=mode, **SITE)
    return sg.ReplayVectorEnv(str(TRACES / sg.TRACES[trace]), num_envs=n, action_mode=mode)


def actions(mode, n, window=128):
    if mode == "pick":
        return np.zeros(n, dtype=np.int64)
    return np.tile(np.linspace(1.0, -1.0, window, dtype=np.float32), (n, 1))


def timed(step, reset, calls, repeats):
    """The fastest of `repeats` runs of `calls` steps after a reset, seconds."""
    best = float("inf")
    for _ in range(repeats):
        reset()
        start = time.perf_counter()
        for _ in range(calls):
            step()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=8)
    parser.add_argument("--steps", type=int, default=100_000, help="env-steps per run")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    n = args.envs
    calls = max(args.steps // n, 10)
    print(f"load average at the start: {os.getloadavg()}")
    results = []
    for trace, mode in CASES:
        a = actions(mode, n)
        row = {"case": f"{trace}, {mode}", "envs": n}
        vec = make_vector(trace, mode, n)
        row["native"] = calls * n / timed(lambda: vec.step(a), lambda: vec.reset(seed=0),
                                          calls, args.repeats)
        adapter = SB3VecEnv(make_vector(trace, mode, n))
        adapter.seed(0)
        row["adapter"] = calls * n / timed(lambda: adapter.step(a), adapter.reset, calls,
                                           args.repeats)
        dummy = DummyVecEnv([make_single(trace, mode) for _ in range(n)])
        dummy.seed(0)
        row["dummy"] = calls * n / timed(lambda: dummy.step(a), dummy.reset, calls,
                                         args.repeats)
        sub_calls = max(calls // 5, 10)
        subproc = SubprocVecEnv([make_single(trace, mode) for _ in range(n)])
        subproc.seed(0)
        row["subproc"] = sub_calls * n / timed(lambda: subproc.step(a), subproc.reset,
                                               sub_calls, args.repeats)
        subproc.close()
        results.append(row)
        print(f"{row['case']:>16}, N={n}: native {row['native']:,.0f}  adapter "
              f"{row['adapter']:,.0f}  DummyVecEnv {row['dummy']:,.0f}  SubprocVecEnv "
              f"{row['subproc']:,.0f} env-steps/s", flush=True)
    print(f"load average at the end: {os.getloadavg()}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
