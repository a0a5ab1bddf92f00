#!/usr/bin/env python3
"""Measures the steps per second of a peer's scheduling environment, RLScheduler's ``HPCEnv``
(Zhang et al., SC20; github.com/DIR-LAB/deep-batch-scheduler, ``HPCSimPickJobs.py``), so that
sitesim's Gymnasium figures can be shown beside a peer's measured on the same machine.

Usage::

    python scripts/gym-bench-peer.py --rlscheduler DIR --trace PATH.swf[.gz] \\
        [--steps N] [--repeats 3] [--backfill] [--seed 0] [--peer-rev REV] [--json OUT]

``DIR`` is a checkout of the peer (it must hold ``HPCSimPickJobs.py``, ``job.py`` and
``cluster.py``). Nothing of the peer is copied into sitesim: the peer has no licence file, so
it is fetched separately and imported from ``DIR``. A ``.gz`` trace is decompressed to a
temporary plain file first, because the peer's loader reads plain text.

What is stubbed, and why. ``HPCSimPickJobs.py`` imports tensorflow, scipy.signal and the old
``gym`` at module level, but its environment class needs only NumPy at run time. Before the
peer's module is imported this script puts into ``sys.modules``:

* ``tensorflow``: an empty module. The module uses ``tf`` only inside its training helpers
  (``placeholder``, ``get_vars``...), which the environment never calls.
* ``scipy`` and ``scipy.signal``: only if SciPy is not installed; an empty package whose
  ``signal`` has a ``lfilter`` that raises. Only ``discount_cumsum`` (training code, never
  called by the environment) uses it.
* ``gym``, ``gym.spaces``, ``gym.utils``, ``gym.utils.seeding``: ``gym.Env`` is a plain
  ``object`` subclass (old gym's ``Env.__init__`` did nothing either); ``gym.spaces`` is
  ``gymnasium.spaces`` (the peer builds a ``Box`` and a ``Discrete`` with it);
  ``gym.utils.seeding.np_random(seed)`` returns ``(numpy.random.RandomState(seed), seed)``,
  as old gym's did in spirit: the peer calls ``RandomState`` methods (``randint``) on it.

No NumPy alias shim is needed: the peer's environment uses no ``np.int``/``np.float`` and runs
on NumPy 2 as is. The environment's code runs unchanged (nothing of it is patched or
monkey-patched); its ``print`` calls during construction and loading are sent to stderr.

The loop. ``env = HPCEnv(backfil=--backfill)``, ``env.seed(seed)`` (and Python's ``random``
is seeded too, because the peer's observation builder shuffles with the global ``random``
when more than 128 jobs wait), ``env.my_init(workload_file=...)``; then episodes of
``env.reset()`` followed by ``env.step(0)`` until the step reports done, until at least
``--steps`` steps have been taken (whole episodes). Action 0 is slot 0 of the peer's window
of 128 waiting jobs; the window is the queue in submit order while at most 128 jobs wait
(beyond that, an interleave of shortest-request and fewest-processors orders), so with
``backfil=False`` the policy is FCFS without backfilling and with ``backfil=True`` it is FCFS
plus the peer's own backfilling. Slot 0 always holds a job (the peer guarantees a non-empty
queue at every decision), so it is never masked by the peer's own mask (which masks empty
slots); the script checks this on every step from ``env.pairs`` outside the timed region and,
should slot 0 ever be empty, takes the first non-empty slot instead and counts it.

Timing. Each ``env.step`` and each ``env.reset`` is timed on its own with
``time.perf_counter_ns``; the checks and the loop are outside the timed calls. Reported:
steps/s (stepping only), steps/s including resets (steps over step plus reset time), resets/s
(resets over reset time). Every repeat re-seeds, so it runs the same episodes; the best
repeat (highest stepping rate) is reported. The peer's ``reset`` draws a random start in the
trace, starts on an empty machine and re-simulates two baselines (SJF and F1) over the
episode's 256 jobs in Python, which is why resets are slow.
"""

import argparse
import contextlib
import gzip
import json
import os
import platform
import random
import shutil
import subprocess
import sys
import tempfile
import time
import types

import numpy as np


def install_shims():
    """Puts the stand-ins described in the module docstring into ``sys.modules``; returns
    the list of names stubbed."""
    import gymnasium

    stubbed = []

    tf = types.ModuleType("tensorflow")
    tf.__doc__ = "empty stand-in: the peer's environment does not use tensorflow"
    sys.modules["tensorflow"] = tf
    stubbed.append("tensorflow (empty)")

    try:
        import scipy.signal  # noqa: F401
    except ImportError:
        scipy = types.ModuleType("scipy")
        scipy.__path__ = []
        signal = types.ModuleType("scipy.signal")

        def lfilter(*args, **kwargs):
            raise RuntimeError("scipy.signal.lfilter is stubbed (not used by the environment)")

        signal.lfilter = lfilter
        scipy.signal = signal
        sys.modules["scipy"] = scipy
        sys.modules["scipy.signal"] = signal
        stubbed.append("scipy.signal (lfilter raises)")

    gym = types.ModuleType("gym")
    gym.__path__ = []

    class Env(object):
        """Plain base for the peer's ``gym.Env`` subclass."""

    gym.Env = Env
    gym.spaces = gymnasium.spaces
    utils = types.ModuleType("gym.utils")
    utils.__path__ = []
    seeding = types.ModuleType("gym.utils.seeding")

    def np_random(seed=None):
        return np.random.RandomState(seed), seed

    seeding.np_random = np_random
    utils.seeding = seeding
    gym.utils = utils
    sys.modules["gym"] = gym
    sys.modules["gym.spaces"] = gymnasium.spaces
    sys.modules["gym.utils"] = utils
    sys.modules["gym.utils.seeding"] = seeding
    stubbed.append(
        "gym (Env = object; spaces = gymnasium.spaces; "
        "utils.seeding.np_random = numpy RandomState)"
    )
    return stubbed


def plain_trace(path, tmpdir):
    """A plain-text copy of ``path`` if it is gzipped, else ``path`` itself."""
    if not path.endswith(".gz"):
        return path
    out = os.path.join(tmpdir, os.path.basename(path)[: -len(".gz")])
    with gzip.open(path, "rb") as src, open(out, "wb") as dst:
        shutil.copyfileobj(src, dst)
    return out


def peer_revision(directory, given):
    if given:
        return given
    try:
        return subprocess.run(
            ["git", "-C", directory, "rev-parse", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def first_job_slot(env):
    """Index of the first slot of the peer's window that holds a job (None if none)."""
    for i, pair in enumerate(env.pairs):
        if pair[0] is not None:
            return i
    return None


def run_once(env, seed, min_steps):
    """Whole episodes until at least ``min_steps`` steps; returns the counts and times."""
    env.seed(seed)
    random.seed(seed)
    clock = time.perf_counter_ns
    step_ns = reset_ns = 0
    steps = episodes = fallbacks = 0
    episode_lengths = []
    while steps < min_steps:
        t0 = clock()
        env.reset()
        reset_ns += clock() - t0
        episodes += 1
        length = 0
        done = False
        while not done:
            action = 0
            if env.pairs[0][0] is None:  # never seen: slot 0 empty, pick the first job
                action = first_job_slot(env)
                fallbacks += 1
            t0 = clock()
            result = env.step(action)
            step_ns += clock() - t0
            done = result[2]
            length += 1
        steps += length
        episode_lengths.append(length)
    return {
        "steps": steps,
        "episodes": episodes,
        "step_seconds": step_ns / 1e9,
        "reset_seconds": reset_ns / 1e9,
        "steps_per_s": steps / (step_ns / 1e9),
        "steps_per_s_with_resets": steps / ((step_ns + reset_ns) / 1e9),
        "resets_per_s": episodes / (reset_ns / 1e9),
        "mean_episode_length": sum(episode_lengths) / len(episode_lengths),
        "min_episode_length": min(episode_lengths),
        "max_episode_length": max(episode_lengths),
        "slot0_fallbacks": fallbacks,
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rlscheduler", required=True, help="directory holding HPCSimPickJobs.py")
    ap.add_argument("--trace", required=True, help="SWF trace, plain or .gz")
    ap.add_argument("--steps", type=int, default=50_000, help="at least this many steps per repeat")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--backfill", action="store_true", help="HPCEnv(backfil=True)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--peer-rev", help="peer commit to record (default: git rev-parse in DIR)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()
    if args.steps < 1 or args.repeats < 1:
        ap.error("--steps and --repeats must be positive")
    peer_dir = os.path.abspath(args.rlscheduler)
    if not os.path.isfile(os.path.join(peer_dir, "HPCSimPickJobs.py")):
        ap.error(f"no HPCSimPickJobs.py in {peer_dir}")
    if not os.path.isfile(args.trace):
        ap.error(f"no trace at {args.trace}")

    stubbed = install_shims()
    sys.path.insert(0, peer_dir)
    with contextlib.redirect_stdout(sys.stderr):
        import HPCSimPickJobs as peer

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="gym-bench-peer-") as tmpdir:
        trace = plain_trace(args.trace, tmpdir)
        with contextlib.redirect_stdout(sys.stderr):
            env = peer.HPCEnv(backfil=args.backfill)
            env.seed(args.seed)
            env.my_init(workload_file=trace)
        runs = []
        for r in range(args.repeats):
            run = run_once(env, args.seed, args.steps)
            runs.append(run)
            print(
                f"repeat {r + 1}: {run['steps']} steps in {run['episodes']} episodes, "
                f"{run['steps_per_s']:.0f} steps/s, {run['steps_per_s_with_resets']:.0f} "
                f"with resets, {run['resets_per_s']:.2f} resets/s",
                file=sys.stderr,
            )
    load_after = os.getloadavg()
    best = max(runs, key=lambda x: x["steps_per_s"])

    name = os.path.basename(args.trace)
    print(f"Peer: RLScheduler HPCEnv ({peer_revision(peer_dir, args.peer_rev) or 'unknown rev'}), "
          f"trace {name}, backfil={args.backfill}, policy: always action 0, "
          f"best of {args.repeats} x >= {args.steps} steps\n")
    print("| trace | backfil | steps/s | steps/s incl. resets | resets/s | steps | episodes | mean ep. length |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    print(
        f"| {name} | {args.backfill} | {best['steps_per_s']:,.0f} | "
        f"{best['steps_per_s_with_resets']:,.0f} | {best['resets_per_s']:,.2f} | "
        f"{best['steps']} | {best['episodes']} | {best['mean_episode_length']:.1f} |"
    )
    print(f"\nload average (1, 5, 15 min): before {load_before[0]:.2f} {load_before[1]:.2f} "
          f"{load_before[2]:.2f}; after {load_after[0]:.2f} {load_after[1]:.2f} {load_after[2]:.2f}")
    if best["slot0_fallbacks"]:
        print(f"\nslot 0 was empty {best['slot0_fallbacks']} times; the first job slot was taken")

    if args.json:
        out = {
            "peer": "RLScheduler HPCSimPickJobs.HPCEnv",
            "peer_rev": peer_revision(peer_dir, args.peer_rev),
            "trace": name,
            "backfil": args.backfill,
            "seed": args.seed,
            "min_steps": args.steps,
            "repeats": args.repeats,
            "policy": "action 0 (slot 0 of the peer's window)",
            "max_queue_size": peer.MAX_QUEUE_SIZE,
            "job_sequence_size": peer.JOB_SEQUENCE_SIZE,
            "stubbed": stubbed,
            "best": best,
            "runs": runs,
            "loadavg_before": load_before,
            "loadavg_after": load_after,
            "python": platform.python_version(),
            "numpy": np.__version__,
            "machine": platform.platform(),
            "cpu_count": os.cpu_count(),
        }
        with open(args.json, "w") as f:
            json.dump(out, f, indent=2)
            f.write("\n")


if __name__ == "__main__":
    main()
