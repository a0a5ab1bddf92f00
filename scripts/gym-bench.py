#!/usr/bin/env python3
"""Steps per second of sitesim's Gymnasium environment (issue 33), for the docs' speed table.

    python scripts/gym-bench.py [--traces lublin-256,sdsc-sp2,site] [--steps 100000] [--repeats 3]
                                [--envs 1,8,64] [--json OUT]

For each trace and action mode it measures, each the best of --repeats runs:

* stepping alone: one environment constructed directly (no Gymnasium wrappers), a fixed action
  (pick mode: slot 0, the oldest waiting job, always valid at a decision; score mode: scores
  falling with the slot, i.e. FCFS), resets timed apart and subtracted (steps/s), and with them
  (steps/s with resets; resets/s);
* the same through ``gymnasium.make`` (its OrderEnforcing and PassiveEnvChecker wrappers);
* a Python policy in the loop: pick mode, the first valid action of ``env.action_masks()``;
  score mode, a linear score of the window's 13 features (one NumPy matmul);
* the vector environment: N environments stepped in one native call (env-steps/s, the
  autoresets included), without and with native threads;
* at the peer's settings (pick mode, window 128, 256-job episodes on an empty machine, no warm
  start), under EASY and under no backfilling (the peer's ``backfil=False``: a picked job that
  does not fit waits until it does), for the comparison with RLScheduler
  (scripts/gym-bench-peer.py).

``site`` is the closed loop: the default site's population of 250 users for 4 weeks, the agent
taking over after a week (episodes truncated at the horizon).

Defaults otherwise: window 128, 256-job episodes after 1024 warm-up jobs, EASY. Traces are read
from ``$SITESIM_TRACES`` (default ``../shared/traces`` beside the checkout). The load average at
the start and end is printed: the figures are only as good as the machine was quiet.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import time
from pathlib import Path

import gymnasium
import numpy as np

import sitesim
import sitesim.gym as sg

ROOT = Path(__file__).resolve().parent.parent
TRACES = Path(os.environ.get("SITESIM_TRACES", ROOT.parent / "shared" / "traces"))


def fixed_action(env, mode):
    if mode == "pick":
        return 0
    k = env.window
    return np.linspace(1.0, -1.0, k, dtype=np.float32)


def run_single(env, steps, action=None, policy=None, seed=0):
    """Steps `env` `steps` times; returns (seconds stepping, seconds resetting, resets)."""
    env.reset(seed=seed)
    resets = 0
    reset_time = 0.0
    obs = None
    start = time.perf_counter()
    for _ in range(steps):
        a = action if policy is None else policy(env, obs)
        obs, _, terminated, truncated, _ = env.step(a)
        if terminated or truncated:
            r0 = time.perf_counter()
            obs, _ = env.reset()
            reset_time += time.perf_counter() - r0
            resets += 1
    total = time.perf_counter() - start
    return total - reset_time, reset_time, resets


def best(repeats, measure):
    """The run with the most steps per second (stepping alone) of `repeats`."""
    runs = [measure() for _ in range(repeats)]
    return max(runs, key=lambda r: 1.0 / max(r[0], 1e-12))


#: The closed-loop site of the speed table: the default site's population, 250 users, 4 weeks,
#: the agent taking over after a week.
SITE = dict(users=250, weeks=4, warm_days=7)


def single_row(trace, mode, steps, repeats, wrapped=False, python_policy=False, **kwargs):
    if trace == "site":
        kwargs = dict(SITE, **kwargs)
        make = ("sitesim/Site-v0", sg.SiteEnv)
    else:
        kwargs = dict(kwargs, trace=str(TRACES / sg.TRACES[trace]))
        make = ("sitesim/Replay-v0", sg.ReplayEnv)
    if wrapped:
        env = gymnasium.make(make[0], action_mode=mode, **kwargs)
        base = env.unwrapped
    else:
        env = make[1](action_mode=mode, **kwargs)
        base = env
    action = fixed_action(base, mode)
    policy = None
    if python_policy:
        k = base.window
        rng = np.random.default_rng(0)
        weights = rng.normal(size=len(sg.JOB_FEATURES)).astype(np.float32)
        if mode == "pick":
            def policy(e, obs):
                return int(np.argmax(base.action_masks()))
        else:
            def policy(e, obs):
                if obs is None:
                    return action
                return np.tanh(obs[: k * len(sg.JOB_FEATURES)].reshape(k, -1) @ weights)
    stepping, resetting, resets = best(
        repeats, lambda: run_single(env, steps, action, policy)
    )
    return {
        "steps_per_s": steps / stepping,
        "steps_per_s_with_resets": steps / (stepping + resetting),
        "resets_per_s": resets / resetting if resetting > 0 else None,
        "steps_per_episode": steps / resets if resets else None,
    }


def vector_row(trace, mode, n, threads, steps, repeats):
    if trace == "site":
        vec = sg.SiteVectorEnv(num_envs=n, threads=threads, action_mode=mode, **SITE)
    else:
        path = str(TRACES / sg.TRACES[trace])
        vec = sg.ReplayVectorEnv(path, num_envs=n, threads=threads, action_mode=mode)
    if mode == "pick":
        actions = np.zeros(n, dtype=np.int64)
    else:
        actions = np.tile(np.linspace(1.0, -1.0, vec.window, dtype=np.float32), (n, 1))
    calls = max(steps // n, 10)

    def measure():
        vec.reset(seed=0)
        start = time.perf_counter()
        for _ in range(calls):
            vec.step(actions)
        return (time.perf_counter() - start,)

    runs = [measure() for _ in range(repeats)]
    seconds = min(r[0] for r in runs)
    return {"env_steps_per_s": calls * n / seconds}


def commit():
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", default="lublin-256,sdsc-sp2,site",
                        help="trace names of sitesim.gym.TRACES, and 'site' for the closed loop")
    parser.add_argument("--modes", default="pick,score")
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--envs", default="1,8,64")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    traces = args.traces.split(",")
    modes = args.modes.split(",")
    sizes = [int(n) for n in args.envs.split(",")]
    load_before = os.getloadavg()
    results = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "commit": commit(),
        "sitesim": sitesim.__version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "gymnasium": gymnasium.__version__,
        "cpus": os.cpu_count(),
        "steps": args.steps,
        "repeats": args.repeats,
        "rows": [],
    }
    peer = dict(window=128, episode_jobs=256, warm_jobs=0)
    for trace in traces:
        for mode in modes:
            cases = [
                ("alone", {}),
                ("gymnasium.make", {"wrapped": True}),
                ("python policy", {"python_policy": True}),
            ]
            if mode == "pick" and trace != "site":
                cases.append(("peer's settings, EASY", peer))
                cases.append(("peer's settings, no backfilling", dict(peer, scheduler="fcfs")))
            for label, kwargs in cases:
                row = single_row(trace, mode, args.steps, args.repeats, **kwargs)
                row.update(trace=trace, mode=mode, case=label)
                results["rows"].append(row)
                print(json.dumps(row), flush=True)
            for n in sizes:
                for threads in (False, True):
                    row = vector_row(trace, mode, n, threads, args.steps, args.repeats)
                    case = f"vector N={n}" + (", threads" if threads else "") + " (resets included)"
                    row.update(trace=trace, mode=mode, case=case)
                    results["rows"].append(row)
                    print(json.dumps(row), flush=True)
    results["load_average"] = {"start": load_before, "end": os.getloadavg()}
    print()
    print(f"{results['date']}, commit {results['commit']}, {results['cpus']} CPUs, "
          f"load average {load_before[0]:.2f} at the start, {os.getloadavg()[0]:.2f} at the end; "
          f"best of {args.repeats}, {args.steps} steps each")
    print()
    print("| trace | mode | case | steps/s | steps/s with resets | resets/s | steps/episode |")
    print("|---|---|---|---:|---:|---:|---:|")
    for r in results["rows"]:
        if "env_steps_per_s" in r:
            print(f"| {r['trace']} | {r['mode']} | {r['case']} | {r['env_steps_per_s']:,.0f} | | | |")
        else:
            rps = f"{r['resets_per_s']:,.0f}" if r["resets_per_s"] else ""
            spe = f"{r['steps_per_episode']:.0f}" if r["steps_per_episode"] else ""
            print(f"| {r['trace']} | {r['mode']} | {r['case']} | {r['steps_per_s']:,.0f} | "
                  f"{r['steps_per_s_with_resets']:,.0f} | {rps} | {spe} |")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
