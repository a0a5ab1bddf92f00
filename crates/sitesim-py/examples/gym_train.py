"""Train a small scheduling policy on sitesim's Gymnasium environments and test it on held-out episodes, beside EASY, EASY-SJF, random scores and random picks.

The agent is a learned priority function in score mode (``action_mode="score"``): at every
scheduling pass it scores the window's K oldest waiting jobs with
``tanh(phi @ w / |w|)``, where ``phi`` holds each job's features (``sitesim.gym.JOB_FEATURES``:
wait, estimate, processors, ...), a few products of them and their products with machine
features (``MACHINE_FEATURES``: free processors, free within the hour, queue length); the rule
(EASY) orders the queue by the scores and backfills as it always does. Only the direction of
``w`` matters (the scores' order is all the rule uses), so a score is a linear ranking of the
features: 19 weights in a replay, 23 at a site, trained by CMA-ES (package ``cma``), each
candidate judged on the same training episodes (common random numbers), one vector step of
all of them per scheduling pass (``ReplayVectorEnv``/``SiteVectorEnv``, one matmul per step).
Training starts from the FCFS direction (the wait's weight alone), which is exactly EASY.

* Open loop: a trace (Lublin-256, then SDSC-SP2, separately) in episodes of 256 jobs on a
  machine warmed by the 1024 jobs before them; training episodes start in the first 80 % of
  the trace, held-out ones in the last 20 %. The objective is the episodes' mean bounded
  slowdown (the environment's episodic reward).
* Closed loop: a small site of simulated users (``SiteVectorEnv``, the embedded paper site
  with 100 users on 1600 processors, two weeks, two days of warm start under EASY); the
  objective is jobs submitted per hour (users who wait less submit more); training sites are
  seeds 1000 r.., held-out ones seeds 10000...

The whole procedure (training and test) is repeated ``--runs`` times (default 10), run r
training from its own episodes (seeds 1000 r..) with CMA-ES seed r + 1, so the results show
how much a training run's outcome varies. Every policy is tested on the very same held-out
episodes (same jobs and warm start, or the same users): the trained agents; the built-in EASY
and EASY-SJF (``baseline()``); random scores (uniform in [-1, 1] per slot at every decision:
EASY's backfilling over a random order, the null for a score-mode agent); and random picks
(pick mode, a valid action drawn uniformly from the mask at every decision: a slot or, when
allowed, "wait"). The random policies run once per run r, with their own seeds. The tables
give the means and 95 % bootstrap intervals (10,000 resamples) of the paired differences,
resampling the runs and the held-out episodes independently (a crossed bootstrap), so the
intervals hold both the training runs' and the episodes' variation. Lublin-256's last 20 %
holds 2,000 jobs, so its held-out episodes of 256 jobs overlap; the bootstrap treats them as
independent, and its intervals are somewhat too narrow there. Everything is seeded: the same
command prints the same numbers.

    pip install ./crates/sitesim-py gymnasium cma
    SITESIM_TRACES=/path/to/traces python crates/sitesim-py/examples/gym_train.py
    python crates/sitesim-py/examples/gym_train.py --smoke     # a few seconds

The defaults (10 runs; per run 25 generations of 8 candidates on 8 episodes per trace, 8 of 8
on 4 sites) take about half an hour on two cores.
"""

import argparse
import os
import time
from pathlib import Path

import cma
import numpy as np

import sitesim.gym as sg

J = {name: i for i, name in enumerate(sg.JOB_FEATURES)}
M = {name: i for i, name in enumerate(sg.MACHINE_FEATURES)}

# The policy's inputs per window slot: job features, products of two job features, and job
# features times machine features (a machine feature alone adds the same to every slot's
# score and cannot change the order, so it only enters through products).
JOB_TERMS = ["wait", "estimate", "processors", "fits_now", "earliest_start",
             "user_recent_bsld", "user_jobs_waiting"]
SESSION_TERMS = ["user_in_session", "user_batch_in_flight", "user_session_age",
                 "user_session_jobs"]  # zero in replays: used at sites only
PAIR_TERMS = [("wait", "estimate"), ("wait", "processors"), ("estimate", "processors")]
CONTEXT_TERMS = [(job, machine) for job in ("wait", "estimate", "processors")
                 for machine in ("free", "free_in_1h", "waiting_jobs")]

BASELINES = {"EASY": "easy", "EASY-SJF": "easy-sjf"}
BOOTSTRAP = 10_000
HELD_OUT_SEED = 10_000
TRAINING_SEED = 1_000  # run r trains on the episodes of seeds 1000 r, 1000 r + 1, ...


class Policy:
    """Scores a window: tanh(phi @ w / |w|) per slot, for a batch of observations."""

    def __init__(self, window, site):
        self.window = window
        self.jobs = JOB_TERMS + (SESSION_TERMS if site else [])
        self.names = (self.jobs + [f"{a}*{b}" for a, b in PAIR_TERMS]
                      + [f"{a}*{b}" for a, b in CONTEXT_TERMS])

    def fcfs(self):
        """The FCFS direction: the wait's weight alone (scores in arrival order: EASY)."""
        w = np.zeros(len(self.names))
        w[self.names.index("wait")] = 1.0
        return w

    def features(self, obs):
        n, k = obs.shape[0], self.window
        slots = obs[:, : k * len(J)].reshape(n, k, len(J))
        machine = obs[:, k * len(J):]
        columns = [slots[:, :, J[f]] for f in self.jobs]
        columns += [slots[:, :, J[a]] * slots[:, :, J[b]] for a, b in PAIR_TERMS]
        columns += [slots[:, :, J[a]] * machine[:, None, M[b]] for a, b in CONTEXT_TERMS]
        return np.stack(columns, axis=-1)  # (n, k, features)

    def linear(self, obs, w):
        return self.features(obs) @ (w / max(np.linalg.norm(w), 1e-12))

    def scores(self, obs, w):
        return np.tanh(self.linear(obs, w)).astype(np.float32)


class Preferences:
    """What a policy favours, read from its decisions: at each decision, the correlation over
    the window's jobs of the policy's score with each job feature, averaged over decisions
    (windows of 3 jobs or more where the feature varies). +1: larger values first, -1: smaller
    first. Unlike the weights, it counts only what changes the order (Lublin-256 has no users,
    so its user features are the same for every job and their weights do nothing)."""

    def __init__(self, policy, w):
        self.policy, self.w = policy, w
        self.sums = np.zeros(len(policy.jobs))
        self.counts = np.zeros(len(policy.jobs))

    def __call__(self, obs, active):
        k = self.policy.window
        slots = obs[active, : k * len(J)].reshape(-1, k, len(J))
        present = slots[:, :, J["present"]] > 0
        rows = present.sum(axis=1) >= 3
        if not rows.any():
            return
        slots, present = slots[rows], present[rows]
        score = self.policy.linear(obs[active][rows], self.w)
        n = present.sum(axis=1)

        def centred(x):
            mean = (x * present).sum(axis=1) / n
            return (x - mean[:, None]) * present

        y = centred(score)
        for i, name in enumerate(self.policy.jobs):
            x = centred(slots[:, :, J[name]])
            xx, yy = (x * x).sum(axis=1), (y * y).sum(axis=1)
            ok = (xx > 1e-9) & (yy > 1e-9)  # a feature the same for the whole window tells nothing
            denominator = np.sqrt(np.where(ok, xx * yy, 1.0))
            self.sums[i] += ((x * y).sum(axis=1)[ok] / denominator[ok]).sum()
            self.counts[i] += ok.sum()

    def means(self):
        """The mean correlation per job feature (NaN where it never varied)."""
        return np.where(self.counts > 0, self.sums / np.maximum(self.counts, 1), np.nan)

    @staticmethod
    def mean_table(runs):
        """The runs' mean correlations, averaged over the runs, largest first."""
        table_ = np.array([p.means() for p in runs])
        seen = ~np.isnan(table_)
        means = np.where(seen.any(axis=0),
                         np.nansum(table_, axis=0) / np.maximum(seen.sum(axis=0), 1), np.nan)
        rows = [[runs[0].policy.jobs[i], f"{means[i]:+.2f}"]
                for i in np.argsort(-np.abs(np.nan_to_num(means))) if not np.isnan(means[i])]
        return table(["job feature", "mean correlation with the score"], rows)


def first_episodes(vec, act, seed, baselines=(), watch=None):
    """Resets ``vec`` with ``seed`` (env i: seed + i) and plays each env's first episode, the
    actions given by ``act(obs, masks)`` for all envs at once; returns each env's final reward
    and measures, and its measures under each built-in scheduler of ``baselines`` on the same
    episode. Vector envs reset an env at the step after its episode ends (NEXT_STEP
    autoreset), so an env's summary is read right after the step that ended it, and the
    baselines right after the reset (``baseline(i)`` is of env i's current episode).
    ``watch(obs, active)`` sees every decision of the first episodes."""
    n = vec.num_envs
    obs, _ = vec.reset(seed=seed)
    base = {name: [vec.baseline(i, name) for i in range(n)] for name in baselines}
    done = np.zeros(n, dtype=bool)
    rewards = np.zeros(n)
    summaries = [None] * n
    while not done.all():
        if watch is not None:
            watch(obs, ~done)
        obs, reward, terminated, truncated, _ = vec.step(act(obs, vec.action_masks()))
        for i in np.flatnonzero((terminated | truncated) & ~done):
            done[i] = True
            rewards[i] = reward[i]
            summaries[i] = vec.episode_summary(i)
    return rewards, summaries, base


def scoring(policy, w):
    """The agent's actions: its scores of every env's window."""
    return lambda obs, masks: policy.scores(obs, w)


def random_scores(rng, window):
    """Uniform scores in [-1, 1] for every slot at every decision."""
    return lambda obs, masks: rng.uniform(-1.0, 1.0, (obs.shape[0], window)).astype(np.float32)


def random_picks(rng):
    """A valid action drawn uniformly from each env's mask (a slot, or "wait" when allowed)."""
    def act(obs, masks):
        return np.argmax(rng.random(masks.shape) * masks, axis=1).astype(np.int64)
    return act


def train(make_train, policy, args, label, seed):
    """CMA-ES on the training episodes (env i of the vector: seed + i); returns the best weights
    found."""
    vec = make_train(args.episodes)
    es = cma.CMAEvolutionStrategy(policy.fcfs(), args.sigma, {
        "popsize": args.population, "seed": seed + 1, "verbose": -9,
    })
    start = time.perf_counter()
    fcfs = -first_episodes(vec, scoring(policy, policy.fcfs()), seed)[0].mean()
    best_f, best_w = fcfs, policy.fcfs()
    for generation in range(1, args.generations + 1):
        candidates = es.ask()
        # the episodic reward (minus the cost, or the benefit): minimise its negative mean
        costs = [-first_episodes(vec, scoring(policy, np.asarray(x)), seed)[0].mean()
                 for x in candidates]
        es.tell(candidates, costs)
        i = int(np.argmin(costs))
        if costs[i] < best_f:
            best_f, best_w = costs[i], np.asarray(candidates[i]).copy()
    print(f"  {label}: mean episodic reward on the training episodes: FCFS (EASY) {-fcfs:.3f}, "
          f"trained {-best_f:.3f} ({time.perf_counter() - start:.0f} s)", flush=True)
    return best_w


def crossed(d, rng):
    """Mean of d (runs x episodes) and its 95 % bootstrap percentile interval, resampling the
    runs and the episodes independently."""
    d = np.asarray(d, dtype=float)
    runs, episodes = d.shape
    means = np.empty(BOOTSTRAP)
    for b in range(BOOTSTRAP):
        rows = rng.integers(0, runs, runs)
        columns = rng.integers(0, episodes, episodes)
        means[b] = d[np.ix_(rows, columns)].mean()
    low, high = np.percentile(means, [2.5, 97.5])
    return d.mean(), low, high


def study(make_train, make_test, policy, args, label, measures, rng):
    """Trains ``args.runs`` agents (``make_train(n)``: a vector of training episodes) and tests
    them with the baselines on the held-out episodes (``make_test(n, mode)``); prints the
    tables."""
    n = args.held_out
    results = {}  # policy -> measure -> runs x episodes
    preferences = []

    def keep(name, summaries_by_run):
        results[name] = {key: np.array([[s[key] * scale for s in run]
                                        for run in summaries_by_run])
                         for key, _, scale in measures}

    started = time.perf_counter()
    _, _, base = first_episodes(make_test(n), scoring(policy, policy.fcfs()), HELD_OUT_SEED,
                                BASELINES.values())
    for label_b, name in BASELINES.items():
        keep(label_b, [base[name]])
    scored, picked = [], []
    for run in range(args.runs):
        own = np.random.default_rng([HELD_OUT_SEED, run])
        scored.append(first_episodes(make_test(n), random_scores(own, args.window),
                                     HELD_OUT_SEED)[1])
        picked.append(first_episodes(make_test(n, "pick"), random_picks(own), HELD_OUT_SEED)[1])
    keep("random scores", scored)
    keep("random picks", picked)
    agents = []
    for run in range(args.runs):
        w = train(make_train, policy, args, f"{label}, run {run}", TRAINING_SEED * run)
        watch = Preferences(policy, w)
        agents.append(first_episodes(make_test(n), scoring(policy, w), HELD_OUT_SEED,
                                     watch=watch)[1])
        preferences.append(watch)
    keep("agent", agents)
    print(f"\n{label}: {args.runs} runs, held out: {n} episodes; "
          f"{time.perf_counter() - started:.0f} s\n")
    names = ["agent", "EASY", "EASY-SJF", "random scores", "random picks"]
    rows = []
    for key, text, _ in measures:
        rows.append([text] + [f"{results[name][key].mean():.3f}" for name in names])
    print(table(["measure"] + names, rows))
    pairs = [("agent", "EASY"), ("random scores", "EASY"), ("agent", "random scores"),
             ("agent", "random picks"), ("agent", "EASY-SJF")]
    rows = []
    for key, text, _ in measures:
        row = [text]
        for a, b in pairs:
            m, low, high = crossed(results[a][key] - results[b][key], rng)
            row.append(f"{m:+.3f} [{low:+.3f}, {high:+.3f}]")
        rows.append(row)
    print("\ndifferences, paired on the held-out episodes (95 % crossed bootstrap):\n")
    print(table(["measure"] + [f"{a} - {b}" for a, b in pairs], rows))
    key = measures[0][0]
    per_run = results["agent"][key].mean(axis=1)
    gain = results["agent"][key].mean() - results["EASY"][key].mean()
    own = results["agent"][key].mean() - results["random scores"][key].mean()
    print(f"\n{measures[0][1]}: the agent's per-run means range {per_run.min():.3f} to "
          f"{per_run.max():.3f}; of its gain over EASY ({gain:+.3f}), "
          f"{own:+.3f} is over random scores"
          + (f" ({100 * own / gain:.0f} %)" if gain != 0 else ""))
    print("\nwhat the agents favour on the held-out decisions (mean over runs):\n")
    print(Preferences.mean_table(preferences))


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# (the catalogue's measure, its label, the scale from its unit to the label's)
REPLAY_MEASURES = [("bounded_slowdown_mean", "mean bounded slowdown", 1.0),
                   ("wait_mean", "mean wait, h", 1 / 3600)]
SITE_MEASURES = [("throughput_submitted_per_hour", "jobs submitted per hour", 1.0),
                 ("session_length_mean", "mean jobs per session", 1.0),
                 ("bounded_slowdown_mean", "mean bounded slowdown", 1.0),
                 ("wait_mean", "mean wait, h", 1 / 3600)]


def trace_path(name, directory):
    if Path(name).is_file():
        return str(Path(name))
    file = sg.TRACES.get(name.lower())
    if file and directory and (Path(directory) / file).is_file():
        return str(Path(directory) / file)
    raise SystemExit(f"trace {name!r}: not a file, nor a name of sitesim.gym.TRACES in "
                     f"--trace-dir/$SITESIM_TRACES ({directory or 'not set'})")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true",
                        help="2 runs of 2 generations of 4 candidates on 2 episodes, 4 held "
                             "out: seconds")
    parser.add_argument("--runs", type=int, default=10,
                        help="training runs (each tested on the same held-out episodes)")
    parser.add_argument("--generations", type=int, default=25, help="CMA-ES generations per trace")
    parser.add_argument("--population", type=int, default=8, help="CMA-ES candidates per generation")
    parser.add_argument("--episodes", type=int, default=8, help="training episodes per trace")
    parser.add_argument("--held-out", type=int, default=32, help="held-out episodes per trace")
    parser.add_argument("--sigma", type=float, default=0.5, help="CMA-ES initial step size")
    parser.add_argument("--seed", type=int, default=0, help="the bootstrap's seed")
    parser.add_argument("--traces", default="lublin-256,sdsc-sp2",
                        help="comma-separated names or paths; '' for none")
    parser.add_argument("--trace-dir", default=os.environ.get("SITESIM_TRACES"),
                        help="where trace names are found (default $SITESIM_TRACES)")
    parser.add_argument("--window", type=int, default=64, help="K: window slots the agent scores")
    parser.add_argument("--site", action=argparse.BooleanOptionalAction, default=True,
                        help="also train and test on the closed-loop site (default: yes)")
    parser.add_argument("--site-generations", type=int, default=8)
    parser.add_argument("--site-population", type=int, default=8)
    parser.add_argument("--site-episodes", type=int, default=4, help="training sites (seeds)")
    parser.add_argument("--site-held-out", type=int, default=20, help="held-out sites (seeds)")
    parser.add_argument("--users", type=int, default=100)
    parser.add_argument("--processors", type=int, default=1600)
    parser.add_argument("--weeks", type=int, default=2)
    parser.add_argument("--warm-days", type=int, default=2)
    args = parser.parse_args()
    if args.smoke:
        args.runs = 2
        args.generations = args.site_generations = 2
        args.population = args.site_population = 4
        args.episodes = args.site_episodes = 2
        args.held_out = args.site_held_out = 4
        args.weeks, args.warm_days = 1, 1
    if args.held_out < 2 or args.site_held_out < 2 or args.runs < 1:
        parser.error("an interval needs at least 2 held-out episodes (30 or more to be useful) "
                     "and a run")

    started = time.perf_counter()
    rng = np.random.default_rng(args.seed)
    traces = [t for t in args.traces.split(",") if t.strip()]
    print("# sitesim.gym: CMA-ES priority function in score mode, beside EASY, EASY-SJF, "
          "random scores and random picks\n")
    print(f"settings: {args.runs} runs, window {args.window}, CMA-ES sigma0 {args.sigma}, "
          f"cma {cma.__version__}, training seeds {TRAINING_SEED} r.., held-out seed "
          f"{HELD_OUT_SEED}, bootstrap {BOOTSTRAP} resamples (seed {args.seed})")
    for trace in traces:
        path = trace_path(trace.strip(), args.trace_dir)
        policy = Policy(args.window, site=False)

        def make_vec(n, mode="score", start_range=(0.8, 1.0), path=path):
            return sg.ReplayVectorEnv(
                path, num_envs=n, action_mode=mode, window=args.window, reward="bounded_slowdown_mean",
                reward_mode="episodic", episode_jobs=256, warm_jobs=1024, start_range=start_range)

        def make_train(n, make_vec=make_vec):
            return make_vec(n, "score", (0.0, 0.8))

        print(f"\n## Open loop: {trace}\n")
        print(f"episodes of 256 jobs after 1024 warm-up jobs; per run: {args.episodes} training "
              f"episodes (starts in the first 80 %), {args.generations} generations x "
              f"{args.population} candidates; held out: {args.held_out} episodes (starts in the "
              f"last 20 %); {len(policy.names)} weights; objective: mean bounded slowdown\n",
              flush=True)
        study(make_train, make_vec, policy, args, trace, REPLAY_MEASURES, rng)

    if args.site:
        policy = Policy(args.window, site=True)

        def make_site(n, mode="score"):
            return sg.SiteVectorEnv(
                num_envs=n, action_mode=mode, window=args.window, reward="throughput_submitted_per_hour",
                reward_mode="episodic", warm_days=args.warm_days, users=args.users,
                weeks=args.weeks, processors=args.processors)

        print("\n## Closed loop: the embedded paper site\n")
        print(f"{args.users} users, {args.processors} processors, {args.weeks} weeks, "
              f"{args.warm_days} warm days under EASY; per run: {args.site_episodes} training "
              f"sites, {args.site_generations} generations x {args.site_population} candidates; "
              f"held out: {args.site_held_out} sites (seeds {HELD_OUT_SEED}.."
              f"{HELD_OUT_SEED + args.site_held_out - 1}); {len(policy.names)} weights; "
              "objective: jobs submitted per hour\n", flush=True)
        site_args = argparse.Namespace(**vars(args))
        site_args.episodes, site_args.generations = args.site_episodes, args.site_generations
        site_args.population, site_args.held_out = args.site_population, args.site_held_out
        study(make_site, make_site, policy, site_args, "site", SITE_MEASURES, rng)

    print(f"\nwall time {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
