"""The Gymnasium environments (``sitesim.gym``, issue 33) against the API and the command line:
``check_env`` passes for every environment; with FCFS decisions an episode is exactly ``sitesim
replay --scheduler easy`` (byte for byte) and a closed-loop site is ``sitesim run``; bad arguments
and actions raise clear exceptions; the vector environments are N single ones stepped together;
the same seed gives the same episode; episode measures, baselines and rewards agree.

FCFS decisions are slot 0 in pick mode (the oldest waiting job) and scores falling with the slot
(1 - 2i/K) in score mode. The Rust side's equivalences are crates/gym/tests/e2e/main.rs; these
mirror them through the Python wrapper.
"""

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

gymnasium = pytest.importorskip("gymnasium")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import sitesim.gym as sg  # noqa: E402

from _cli import TRACES, cli  # noqa: E402

LUBLIN = TRACES / "lublin_256.swf.gz"
KTH = TRACES / "KTH-SP2-1996-2.1-cln.swf.gz"
SDSC = TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz"


def needs(*traces):
    missing = [str(t) for t in traces if not t.exists()]
    return pytest.mark.skipif(bool(missing), reason=f"missing: {', '.join(missing)}")


def fcfs_scores(k):
    """Scores strictly falling with the slot: the rule's own arrival order."""
    return (1.0 - 2.0 * np.arange(k) / k).astype(np.float32)


def fcfs_action(env):
    """The FCFS decision of env (unwrapped) in its action mode."""
    if isinstance(env.action_space, gymnasium.spaces.Discrete):
        return 0
    return fcfs_scores(env.action_space.shape[0])


def run_to_end(env, action):
    """Steps `action(step)` until the episode ends; returns (rewards, last info, steps)."""
    rewards = []
    step = 0
    while True:
        _, reward, terminated, truncated, info = env.step(action(step))
        rewards.append(reward)
        step += 1
        if terminated or truncated:
            return rewards, info, step


@pytest.fixture(autouse=True)
def _traces_by_name(monkeypatch):
    # Trace names ("lublin-256", ...) resolve in $SITESIM_TRACES; point it at the tests' traces.
    monkeypatch.setenv("SITESIM_TRACES", str(TRACES))


# ---------------------------------------------------------------------------------------------
# 1. check_env
# ---------------------------------------------------------------------------------------------

# Pick mode needs invalid_action="wait": check_env steps action_space.sample(), which ignores the
# action mask, and the default ("raise") refuses a masked pick (an empty window slot).
CHECKED = [
    pytest.param(
        "sitesim/Replay-v0",
        dict(trace=str(LUBLIN), action_mode="pick", window=128, invalid_action="wait"),
        marks=needs(LUBLIN),
        id="replay-pick",
    ),
    pytest.param(
        "sitesim/Replay-v0",
        dict(trace=str(LUBLIN), action_mode="score", window=16),
        marks=needs(LUBLIN),
        id="replay-score",
    ),
    pytest.param(
        "sitesim/Replay-v0",
        dict(trace="kth-sp2", action_mode="score", window=8, episode_jobs=64, warm_jobs=128),
        marks=needs(KTH),
        id="replay-by-name",
    ),
    pytest.param(
        "sitesim/ReplayFeedback-v0",
        dict(trace=str(KTH), action_mode="pick", window=16, invalid_action="wait",
             warm_days=1, episode_days=2),
        marks=needs(KTH),
        id="feedback-pick",
    ),
    pytest.param(
        "sitesim/ReplayFeedback-v0",
        dict(trace=str(KTH), action_mode="score", window=16, warm_days=1, episode_days=2),
        marks=needs(KTH),
        id="feedback-score",
    ),
    pytest.param(
        "sitesim/Site-v0",
        dict(users=20, weeks=2, warm_days=2, action_mode="pick", window=16,
             invalid_action="wait"),
        id="site-pick",
    ),
    pytest.param(
        "sitesim/Site-v0",
        dict(users=20, weeks=2, warm_days=2, action_mode="score", window=16),
        id="site-score",
    ),
]


@pytest.mark.parametrize("env_id, kwargs", CHECKED)
def test_check_env_passes(env_id, kwargs):
    env = gymnasium.make(env_id, **kwargs)
    # check_env wants the raw env; through gymnasium.make it has a spec, so that check_env also
    # remakes it with every declared render mode ("ansi") and checks close().
    assert env.unwrapped.spec is not None and env.unwrapped.spec.id == env_id
    with warnings.catch_warnings():
        # check_env reports many of its findings as warnings only: make them failures.
        warnings.simplefilter("error")
        check_env(env.unwrapped)
    env.close()


@needs(LUBLIN)
def test_render_ansi_and_spaces():
    env = gymnasium.make(
        "sitesim/Replay-v0", trace=str(LUBLIN), window=8, render_mode="ansi"
    ).unwrapped
    assert env.observation_space.shape == (8 * len(sg.JOB_FEATURES) + len(sg.MACHINE_FEATURES),)
    assert env.observation_space.dtype == np.float32
    assert env.action_space == gymnasium.spaces.Discrete(9)
    obs, _ = env.reset(seed=1)
    assert env.observation_space.contains(obs)
    text = env.render()
    assert isinstance(text, str) and "waiting" in text
    score = sg.ReplayEnv(str(LUBLIN), window=8, action_mode="score")
    assert score.action_space == gymnasium.spaces.Box(-1.0, 1.0, (8,), np.float32)
    assert score.render() is None  # no render mode


@needs(LUBLIN)
def test_the_vector_entry_point_is_registered():
    envs = gymnasium.make_vec(
        "sitesim/Replay-v0", num_envs=2, vectorization_mode="vector_entry_point",
        trace=str(LUBLIN), window=8, episode_jobs=32, warm_jobs=32,
    )
    assert isinstance(envs, sg.ReplayVectorEnv)
    obs, _ = envs.reset(seed=1)
    assert obs.shape == (2, envs.single_observation_space.shape[0])
    assert envs.observation_space.contains(obs)


# ---------------------------------------------------------------------------------------------
# 2. FCFS decisions are `sitesim replay --scheduler easy`, byte for byte
# ---------------------------------------------------------------------------------------------

REPLAYS = [
    pytest.param(LUBLIN, None, "score", marks=needs(LUBLIN), id="lublin-score"),
    pytest.param(LUBLIN, None, "pick", marks=needs(LUBLIN), id="lublin-pick"),
    pytest.param(KTH, None, "score", marks=needs(KTH), id="kth-score"),
    pytest.param(KTH, None, "pick", marks=needs(KTH), id="kth-pick"),
    pytest.param(SDSC, 10_000, "score", marks=needs(SDSC), id="sdsc-10k-score"),
]


@pytest.mark.parametrize("trace, first_jobs, mode", REPLAYS)
def test_fcfs_decisions_are_sitesim_replay_easy(tmp_path, trace, first_jobs, mode):
    out = tmp_path / "cli"
    extra = [] if first_jobs is None else ["--first-jobs", first_jobs]
    cli("replay", trace, "--scheduler", "easy", *extra, "--out", out)
    options = {} if first_jobs is None else {"first_jobs": first_jobs}
    env = gymnasium.make(
        "sitesim/Replay-v0", trace=str(trace), action_mode=mode, window=128,
        episode_jobs=None, warm_jobs=0, scheduler="easy", **options,
    ).unwrapped
    env.reset(seed=0, options={"start": 0})
    action = fcfs_action(env)
    _, info, steps = run_to_end(env, lambda _: action)
    assert steps > 100, f"only {steps} decisions"
    expected = (out / "jobs.csv").read_bytes()
    got = env.episode_jobs_csv(drain=True)
    assert got == expected
    # Every job is measured in a whole-trace episode without warm-up.
    assert info["measures"]["jobs"] == expected.count(b"\n") - 1
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(action)  # drained: the episode is over


# ---------------------------------------------------------------------------------------------
# 3. The closed loop under FCFS decisions is `sitesim run`
# ---------------------------------------------------------------------------------------------

# The default machine with 40 users has no contention (every wait is 0); on 64 processors the
# same users wait and submit less, so the schedule and the users' reactions are both tested.
SITES = [
    pytest.param("score", {}, None, id="default-score"),
    pytest.param("pick", {}, 3, id="default-pick"),
    pytest.param("score", {"processors": 64, "job_sizes": "clip"}, 3, id="64p-score"),
    pytest.param("pick", {"processors": 64, "job_sizes": "clip"}, None, id="64p-pick"),
]


@pytest.mark.parametrize("mode, machine, seed", SITES)
def test_a_drained_site_under_fcfs_decisions_is_sitesim_run(tmp_path, mode, machine, seed):
    out = tmp_path / "cli"
    args = []
    for key, value in machine.items():
        args += [f"--{key.replace('_', '-')}", value]
    cli("run", "--users", 40, "--weeks", 2, "--seed", 3, "--scheduler", "easy", *args,
        "--out", out)
    env = sg.SiteEnv(
        users=40, weeks=2, seed=3, scheduler="easy", warm_days=2, until="drained",
        action_mode=mode, window=32, **machine,
    )
    # The first episode uses the config's seed (3); reset(seed=3) draws the same users.
    env.reset(seed=seed)
    action = fcfs_action(env)
    _, info, steps = run_to_end(env, lambda _: action)
    assert steps > 10
    summary = info["measures"]
    got = env.episode_jobs(drain=True)
    expected = pd.read_csv(out / "jobs.csv")
    assert list(got.columns) == list(expected.columns)
    # The env's records carry no group, session or batch (blank); compare the others.
    columns = [c for c in expected.columns if got[c].notna().any()]
    for needed in ["job_id", "user", "submit", "start", "end", "processors", "runtime",
                   "estimate", "killed", "wait", "bounded_slowdown"]:
        assert needed in columns
    pd.testing.assert_frame_equal(got[columns], expected[columns], check_dtype=False)
    # The measured jobs: those submitted from the warm start's end (2 days) to the horizon.
    t0, horizon = 2 * 86_400, 2 * 7 * 86_400
    measured = expected[(expected["submit"] >= t0) & (expected["submit"] < horizon)]
    assert summary["start"] == t0
    assert summary["submitted"] == len(measured)
    assert summary["jobs"] == len(measured)
    assert summary["bounded_slowdown_mean"] == pytest.approx(
        measured["bounded_slowdown"].mean(), rel=1e-6)
    assert summary["wait_mean"] == pytest.approx(measured["wait"].mean(), rel=1e-9)
    # The sessions, as the catalogue counts a run's: every one that started in the measured
    # time, those still open at the horizon (the run closes them, "end_of_run") included.
    sessions = pd.read_csv(out / "sessions.csv")
    kept = sessions[(sessions["start"] >= t0) & (sessions["start"] < summary["end"])]
    assert summary["sessions"] == len(kept)
    assert summary["session_length_mean"] == pytest.approx(kept["jobs"].mean(), rel=1e-9)


# ---------------------------------------------------------------------------------------------
# 4. Errors
# ---------------------------------------------------------------------------------------------


@needs(LUBLIN)
def test_bad_settings_raise_value_errors_naming_the_keyword():
    with pytest.raises(ValueError, match="window=0"):
        sg.ReplayEnv(str(LUBLIN), window=0)
    with pytest.raises(ValueError, match="window=0"):
        sg.SiteEnv(users=5, weeks=1, warm_days=1, window=0)
    with pytest.raises(ValueError, match="window"):
        sg.ReplayVectorEnv(str(LUBLIN), 2, window=0)
    with pytest.raises(ValueError, match="conservative"):
        sg.ReplayEnv(str(LUBLIN), scheduler="conservative")
    with pytest.raises(ValueError, match="conservative"):
        sg.SiteEnv(users=5, weeks=1, warm_days=1, scheduler="conservative")
    with pytest.raises(ValueError, match="need users who react"):
        sg.ReplayEnv(str(LUBLIN), reward="throughput_submitted_per_hour")
    with pytest.raises(ValueError, match="need users who react"):
        sg.ReplayVectorEnv(str(LUBLIN), 2, reward="throughput_submitted_per_hour")
    # Rewards are the catalogue's measures by name; a former name says the new one.
    with pytest.raises(ValueError, match=r"wait_mean \(seconds"):
        sg.ReplayEnv(str(LUBLIN), reward="wait")
    with pytest.raises(ValueError, match="relative_to"):
        sg.ReplayEnv(str(LUBLIN), relative_to="easy")  # dense
    with pytest.raises(ValueError, match="action_mode"):
        sg.ReplayEnv(str(LUBLIN), action_mode="choose")
    with pytest.raises(ValueError, match="episode_jobs=0"):
        sg.ReplayEnv(str(LUBLIN), episode_jobs=0)
    with pytest.raises(ValueError, match="warm_days=7"):
        sg.SiteEnv(users=5, weeks=1, warm_days=7)
    with pytest.raises(ValueError, match="num_envs"):
        sg.ReplayVectorEnv(str(LUBLIN), 0)
    with pytest.raises(TypeError, match="nonsense"):
        sg.ReplayEnv(str(LUBLIN), nonsense=1)
    env = sg.ReplayEnv(str(LUBLIN), window=8)
    with pytest.raises(ValueError, match="start"):
        env.reset(options={"begin": 0})
    with pytest.raises(ValueError, match="start"):
        env.reset(options={"start": 10**9})


def test_an_unknown_trace_raises_file_not_found(tmp_path):
    with pytest.raises(FileNotFoundError, match="no-such-trace"):
        sg.ReplayEnv("no-such-trace")
    with pytest.raises(FileNotFoundError):
        sg.FeedbackEnv(tmp_path / "nowhere.swf")
    with pytest.raises(FileNotFoundError):
        sg.ReplayVectorEnv(str(tmp_path / "nowhere.swf.gz"), 2)
    with pytest.raises(FileNotFoundError):
        gymnasium.make("sitesim/Replay-v0", trace="no-such-trace")


def test_invalid_action_is_a_value_error_and_gymnasiums():
    assert issubclass(sg.InvalidAction, ValueError)
    assert issubclass(sg.InvalidAction, gymnasium.error.InvalidAction)


def pick_env_with_an_empty_slot(**kwargs):
    """A pick-mode replay at a decision whose window has an empty slot."""
    env = sg.ReplayEnv(str(LUBLIN), window=128, episode_jobs=64, warm_jobs=64, **kwargs)
    for seed in range(20):
        env.reset(seed=seed)
        mask = env.action_masks()
        if not mask[:128].all():
            return env, seed, int(np.flatnonzero(~mask[:128])[0])
    pytest.fail("no decision with an empty window slot")


@needs(LUBLIN)
def test_invalid_picks_raise_invalid_action():
    env, _, empty = pick_env_with_an_empty_slot()
    before = env.render()
    for action in [empty, 127, 129, -1, 10**6, 0.0, 1.5, np.float32(0), "0", np.array([0]),
                   np.zeros(128, np.float32)]:
        with pytest.raises(sg.InvalidAction):
            env.step(action)
        with pytest.raises(ValueError):
            env.step(action)
        with pytest.raises(gymnasium.error.InvalidAction):
            env.step(action)
    assert env.render() == before, "a refused action moved the env"
    # NumPy integers are whole numbers.
    env.step(np.int64(0))


@needs(LUBLIN)
def test_masked_pick_waits_with_invalid_action_wait():
    env, seed, empty = pick_env_with_an_empty_slot(invalid_action="wait")
    twin = sg.ReplayEnv(str(LUBLIN), window=128, episode_jobs=64, warm_jobs=64)
    twin.reset(seed=seed)
    obs, reward, te, tr, info = env.step(empty)
    assert info.get("invalid_action") is True
    obs2, reward2, te2, tr2, info2 = twin.step(128)  # the wait
    assert "invalid_action" not in info2
    np.testing.assert_array_equal(obs, obs2)
    assert (reward, te, tr) == (reward2, te2, tr2)
    # Outside the action space is refused even so.
    with pytest.raises(sg.InvalidAction):
        env.step(129)


@needs(LUBLIN)
def test_invalid_scores_raise_invalid_action():
    env = sg.ReplayEnv(str(LUBLIN), window=16, episode_jobs=64, warm_jobs=64,
                       action_mode="score")
    env.reset(seed=1)
    good = np.zeros(16, np.float32)
    nan = good.copy()
    nan[3] = np.nan
    inf = good.copy()
    inf[0] = -np.inf
    for action in [nan, inf, np.zeros(15, np.float32), np.zeros(17, np.float32),
                   np.zeros((1, 16), np.float32), np.zeros((2, 16), np.float32), 0]:
        with pytest.raises(sg.InvalidAction):
            env.step(action)
    # Scores outside the Box's bounds are refused, not clipped (issue 41); its bounds are in.
    with pytest.raises(sg.InvalidAction, match=r"\[-1, 1\]"):
        env.step(np.arange(16, dtype=np.float64) * 10.0)
    env.step(np.linspace(1.0, -1.0, 16))


@needs(LUBLIN)
def test_non_numeric_scores_raise_invalid_action():
    env = sg.ReplayEnv(str(LUBLIN), window=4, episode_jobs=64, warm_jobs=64,
                       action_mode="score")
    env.reset(seed=1)
    with pytest.raises(sg.InvalidAction):
        env.step(["a", "b", "c", "d"])


@needs(LUBLIN)
def test_step_before_reset_and_after_the_end_need_a_reset():
    for mode in ["pick", "score"]:
        env = sg.ReplayEnv(str(LUBLIN), window=16, episode_jobs=32, warm_jobs=32,
                           action_mode=mode)
        action = fcfs_action(env)
        with pytest.raises(gymnasium.error.ResetNeeded):
            env.step(action)
        env.reset(seed=2)
        run_to_end(env, lambda _: action)
        with pytest.raises(gymnasium.error.ResetNeeded):
            env.step(action)
        env.reset()
        env.step(action)  # fine again
    site = sg.SiteEnv(users=20, weeks=2, warm_days=2, window=16, action_mode="score")
    with pytest.raises(gymnasium.error.ResetNeeded):
        site.step(np.zeros(16, np.float32))
    # Through gymnasium.make too.
    made = gymnasium.make("sitesim/Replay-v0", trace=str(LUBLIN), window=16)
    with pytest.raises(gymnasium.error.ResetNeeded):
        made.step(0)


VECTOR_KW = dict(window=16, episode_jobs=32, warm_jobs=64)


def vector_twins(mode, threads=False):
    a = sg.ReplayVectorEnv(str(LUBLIN), 3, action_mode=mode, threads=threads, **VECTOR_KW)
    b = sg.ReplayVectorEnv(str(LUBLIN), 3, action_mode=mode, **VECTOR_KW)
    a.reset(seed=5)
    b.reset(seed=5)
    return a, b


def some_actions(envs, mode, step):
    """Valid actions for every env of a vector: a fixed, varied rule."""
    masks = envs.action_masks()
    if mode == "pick":
        picks = []
        for i, mask in enumerate(masks):
            valid = np.flatnonzero(mask)
            picks.append(int(valid[(7 * step + i) % len(valid)]))
        return np.array(picks, dtype=np.int64)
    k = envs.window
    return np.stack([np.cos(np.arange(k) * (step + 1 + i)) for i in range(envs.num_envs)]
                    ).astype(np.float32)


def assert_same_step(x, y):
    for a, b in zip(x[:4], y[:4]):
        np.testing.assert_array_equal(a, b)


@needs(LUBLIN)
@pytest.mark.parametrize("mode", ["pick", "score"])
def test_a_bad_action_in_a_vector_raises_and_moves_no_env(mode):
    envs, twin = vector_twins(mode)
    for step in range(5):
        actions = some_actions(envs, mode, step)
        assert_same_step(envs.step(actions), twin.step(actions))
    good = some_actions(envs, mode, 5)
    bad = good.copy()
    if mode == "pick":
        bad[1] = 99
    else:
        bad[1, 3] = np.nan
    with pytest.raises(sg.InvalidAction, match="env 1"):
        envs.step(bad)
    with pytest.raises(sg.InvalidAction):
        envs.step(good[:2])  # too few actions
    for step in range(5, 40):
        actions = some_actions(envs, mode, step)
        np.testing.assert_array_equal(envs.action_masks(), twin.action_masks())
        assert_same_step(envs.step(actions), twin.step(actions))


@needs(LUBLIN)
def test_a_vector_refuses_float_picks():
    envs, _ = vector_twins("pick")
    with pytest.raises(sg.InvalidAction):
        envs.step(np.array([0.5, 0.9, 0.2]))


@needs(LUBLIN)
def test_a_vector_refuses_scores_of_the_wrong_shape():
    envs, _ = vector_twins("score")
    with pytest.raises(sg.InvalidAction):
        envs.step(np.zeros((2, 24), np.float32))


# ---------------------------------------------------------------------------------------------
# 5. Vector environments are single ones stepped together
# ---------------------------------------------------------------------------------------------


@needs(LUBLIN)
@pytest.mark.parametrize("mode", ["pick", "score"])
def test_a_vector_env_is_single_envs_seeded_seed_plus_i(mode):
    n = 3
    envs = sg.ReplayVectorEnv(str(LUBLIN), n, action_mode=mode, **VECTOR_KW)
    threaded = sg.ReplayVectorEnv(str(LUBLIN), n, action_mode=mode, threads=True, **VECTOR_KW)
    singles = [sg.ReplayEnv(str(LUBLIN), action_mode=mode, **VECTOR_KW) for _ in range(n)]
    obs, _ = envs.reset(seed=5)
    np.testing.assert_array_equal(threaded.reset(seed=5)[0], obs)
    assert envs.observation_space.contains(obs)
    for i, env in enumerate(singles):
        np.testing.assert_array_equal(env.reset(seed=5 + i)[0], obs[i])
    ended = [False] * n
    episodes = 0
    autoresets = 0
    for step in range(250):
        masks = envs.action_masks()
        for i, env in enumerate(singles):
            np.testing.assert_array_equal(masks[i], env.action_masks())
        actions = some_actions(envs, mode, step)
        out = envs.step(actions)
        assert_same_step(threaded.step(actions), out)
        obs, rewards, terminated, truncated, _ = out
        for i, env in enumerate(singles):
            if ended[i]:
                # NEXT_STEP autoreset: the new episode's first observation, reward 0, no flags.
                expected, _ = env.reset()
                r, te, tr = 0.0, False, False
                ended[i] = False
                autoresets += 1
            else:
                expected, r, te, tr, _ = env.step(actions[i])
                ended[i] = te or tr
                episodes += ended[i]
            np.testing.assert_array_equal(obs[i], expected, err_msg=f"step {step} env {i}")
            assert (rewards[i], terminated[i], truncated[i]) == (r, te, tr), (step, i)
    assert episodes >= 3 and autoresets >= 3, "no episode ended: make them shorter"
    # Per-env measures are the single envs'.
    for i, env in enumerate(singles):
        assert envs.episode_summary(i) == env.episode_summary()


# ---------------------------------------------------------------------------------------------
# 6. Determinism
# ---------------------------------------------------------------------------------------------


def observed(env, seed, steps=300):
    """Observations under a fixed, seed-independent rule: the last valid slot, every third
    step a wait; episodes that end are followed by reset() without a seed."""
    k = env.window
    seen = []
    obs, _ = env.reset(seed=seed)
    for step in range(steps):
        seen.append(obs)
        mask = env.action_masks()
        action = k if step % 3 == 0 and mask[k] else int(np.flatnonzero(mask[:k])[-1])
        obs, _, te, tr, _ = env.step(action)
        if te or tr:
            obs, _ = env.reset()
    return np.stack(seen)


@needs(SDSC)
def test_the_same_seed_gives_the_same_episodes():
    env = sg.ReplayEnv(str(SDSC), first_jobs=5000, window=32, episode_jobs=64, warm_jobs=256)
    first = observed(env, 7)
    again = observed(sg.ReplayEnv(str(SDSC), first_jobs=5000, window=32, episode_jobs=64,
                                  warm_jobs=256), 7)
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(observed(env, 7), first)  # the same env, reseeded
    assert not np.array_equal(observed(env, 8), first)


def test_a_site_reset_with_a_seed_gives_the_same_users():
    env = sg.SiteEnv(users=20, weeks=2, warm_days=2, window=16, action_mode="pick")
    first, _ = env.reset(seed=4)
    env.step(0)
    again, _ = env.reset(seed=4)
    np.testing.assert_array_equal(first, again)
    other, _ = env.reset(seed=5)
    assert not np.array_equal(first, other)
    fresh = sg.SiteEnv(users=20, weeks=2, warm_days=2, window=16, action_mode="pick")
    np.testing.assert_array_equal(fresh.reset(seed=4)[0], first)
    # Without a seed the first episode is the config's seed's.
    by_config = sg.SiteEnv(users=20, weeks=2, warm_days=2, window=16, seed=4)
    np.testing.assert_array_equal(by_config.reset()[0], first)


# ---------------------------------------------------------------------------------------------
# 7. Episode measures and baselines
# ---------------------------------------------------------------------------------------------

SUMMARY_KEYS = {
    "jobs", "bounded_slowdown_mean", "wait_mean", "queue_job_hours", "queue_length_mean",
    "busy_machine_hours", "hours", "utilization", "submitted", "throughput_submitted_per_hour",
    "sessions", "session_length_mean", "decisions", "start", "end",
}


@needs(SDSC)
@pytest.mark.parametrize("mode", ["pick", "score"])
def test_the_episode_summary_and_the_easy_baseline(mode):
    env = sg.ReplayEnv(str(SDSC), first_jobs=5000, action_mode=mode, window=64,
                       episode_jobs=256, warm_jobs=512)
    env.reset(seed=0, options={"start": 2000})
    action = fcfs_action(env)
    _, info, steps = run_to_end(env, lambda _: action)
    summary = info["measures"]
    assert set(summary) == SUMMARY_KEYS
    assert summary["jobs"] == 256 and summary["decisions"] == steps
    assert summary["bounded_slowdown_mean"] >= 1.0 and summary["hours"] > 0
    assert env.episode_summary() == summary
    # FCFS decisions are EASY: its baseline on the same episode measures the same.
    easy = env.baseline("easy")
    assert set(easy) == SUMMARY_KEYS
    # A replay has no sessions: its session length is undefined (None) under both.
    assert summary["session_length_mean"] is None and easy["session_length_mean"] is None
    for key in SUMMARY_KEYS - {"decisions", "session_length_mean"}:
        assert easy[key] == pytest.approx(summary[key], rel=1e-9, abs=1e-12), key
    sjf = env.baseline("easy-sjf")
    assert sjf["jobs"] == 256 and sjf["start"] == summary["start"]
    assert sjf["bounded_slowdown_mean"] != summary["bounded_slowdown_mean"]
    with pytest.raises(ValueError, match="nonsense"):
        env.baseline("nonsense")


# ---------------------------------------------------------------------------------------------
# 8. Rewards
# ---------------------------------------------------------------------------------------------


def rewarded(mode, reward_mode, relative_to=None, start=None, seed=0, trace=LUBLIN,
             reward="bounded_slowdown_mean", **kwargs):
    env = sg.ReplayEnv(str(trace), action_mode=mode, window=64, episode_jobs=256,
                       warm_jobs=512, reward=reward, reward_mode=reward_mode,
                       relative_to=relative_to, **kwargs)
    env.reset(seed=seed, options=None if start is None else {"start": start})
    action = fcfs_action(env)
    rewards, info, _ = run_to_end(env, lambda _: action)
    return rewards, info["measures"]


@needs(LUBLIN)
@pytest.mark.parametrize("mode", ["pick", "score"])
@pytest.mark.parametrize("seed", [0, 1])
@pytest.mark.parametrize("reward", ["bounded_slowdown_mean", "wait_mean"])
def test_dense_bsld_rewards_sum_to_minus_the_mean(mode, seed, reward):
    rewards, summary = rewarded(mode, "dense", seed=seed, reward=reward)
    assert len(rewards) > 1
    assert math.isclose(sum(rewards), -summary[reward], rel_tol=1e-9)


@needs(LUBLIN, SDSC)
@pytest.mark.parametrize("trace, start, kwargs", [
    (LUBLIN, 0, {}),
    (SDSC, 2000, {"first_jobs": 5000}),
])
def test_dense_rewards_count_the_jobs_started_before_the_first_decision(trace, start, kwargs):
    rewards, summary = rewarded("score", "dense", start=start, trace=trace, **kwargs)
    assert math.isclose(sum(rewards), -summary["bounded_slowdown_mean"], rel_tol=1e-9)


@needs(LUBLIN)
@pytest.mark.parametrize("mode", ["pick", "score"])
def test_episodic_rewards_come_at_the_end(mode):
    rewards, summary = rewarded(mode, "episodic", start=0)
    assert len(rewards) > 1
    assert all(r == 0 for r in rewards[:-1])
    assert rewards[-1] == pytest.approx(-summary["bounded_slowdown_mean"], rel=1e-12)
    relative, summary = rewarded(mode, "episodic", relative_to="easy", start=0)
    assert all(r == 0 for r in relative[:-1])
    assert relative[-1] == pytest.approx(0.0, abs=1e-12)  # FCFS decisions are EASY
    # Against SJF on the same episode the reward is (B - A) / B.
    env = sg.ReplayEnv(str(LUBLIN), action_mode=mode, window=64, episode_jobs=256,
                       warm_jobs=512, reward_mode="episodic", relative_to="easy-sjf")
    env.reset(seed=0, options={"start": 0})
    action = fcfs_action(env)
    rewards, info, _ = run_to_end(env, lambda _: action)
    b = env.baseline("easy-sjf")["bounded_slowdown_mean"]
    a = info["measures"]["bounded_slowdown_mean"]
    assert rewards[-1] == pytest.approx((b - a) / b, rel=1e-12)


def closed_loop_episode(kind, mode, reward, reward_mode, relative_to=None):
    """A feedback replay or a (loaded) site stepped with FCFS decisions to its end."""
    common = dict(action_mode=mode, window=32, reward=reward, reward_mode=reward_mode,
                  relative_to=relative_to)
    if kind == "site":
        env = sg.SiteEnv(users=40, weeks=2, seed=3, processors=64, job_sizes="clip",
                         warm_days=2, **common)
        env.reset()
    else:
        env = sg.FeedbackEnv(str(KTH), warm_days=1, episode_days=2, **common)
        env.reset(seed=3)
    action = fcfs_action(env)
    rewards, info, _ = run_to_end(env, lambda _: action)
    return env, rewards, info["measures"]


CLOSED = [
    pytest.param("site", id="site"),
    pytest.param("feedback", marks=needs(KTH), id="feedback"),
]


@pytest.mark.parametrize("kind", CLOSED)
@pytest.mark.parametrize("mode", ["pick", "score"])
def test_closed_loop_episodes_are_truncated_at_their_end(kind, mode):
    env, _, summary = closed_loop_episode(kind, mode, "bounded_slowdown_mean", "dense")
    span = 2 * 86_400 if kind == "feedback" else 2 * 7 * 86_400 - 2 * 86_400
    assert summary["end"] - summary["start"] == span
    assert summary["submitted"] > 0 and summary["jobs"] > 0
    with pytest.raises(gymnasium.error.ResetNeeded):
        env.step(fcfs_action(env))


@pytest.mark.parametrize("kind", CLOSED)
@pytest.mark.parametrize("mode", ["pick", "score"])
def test_closed_loop_rewards_match_the_episode_measures(kind, mode):
    # Dense: jobs submitted per step sum to the measured submissions; bsld per started job to
    # minus their total (no mean in closed loops: the number of jobs is not fixed).
    _, rewards, summary = closed_loop_episode(kind, mode, "throughput_submitted_per_hour", "dense")
    assert sum(rewards) == summary["submitted"]
    _, rewards, summary = closed_loop_episode(kind, mode, "bounded_slowdown_mean", "dense")
    assert math.isclose(sum(rewards), -summary["jobs"] * summary["bounded_slowdown_mean"], rel_tol=1e-9)
    # Episodic: the measure at the last step, 0 before.
    for reward, expected in [
        ("throughput_submitted_per_hour", lambda s: s["throughput_submitted_per_hour"]),
        ("session_length_mean", lambda s: s["session_length_mean"]),
        ("utilization", lambda s: s["utilization"]),
        ("queue_length_mean", lambda s: -s["queue_job_hours"] / s["hours"]),
        ("queue_length_mean", lambda s: -s["queue_length_mean"]),
        ("wait_mean", lambda s: -s["wait_mean"]),
    ]:
        _, rewards, summary = closed_loop_episode(kind, mode, reward, "episodic")
        assert all(r == 0 for r in rewards[:-1]), reward
        assert rewards[-1] == pytest.approx(expected(summary), rel=1e-12), reward
    # Relative to EASY, FCFS decisions (which are EASY) score 0.
    _, rewards, _ = closed_loop_episode(kind, mode, "throughput_submitted_per_hour", "episodic", "easy")
    assert rewards[-1] == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("kind", CLOSED)
def test_any_catalogue_measure_with_a_direction_is_an_episodic_reward(kind):
    _, rewards, summary = closed_loop_episode(kind, "score", "response_mean", "episodic")
    assert all(r == 0 for r in rewards[:-1])
    assert summary["response_mean"] > 0
    assert rewards[-1] == pytest.approx(-summary["response_mean"], rel=1e-12)
    with pytest.raises(ValueError, match="episodic"):
        closed_loop_episode(kind, "score", "response_mean", "dense")
    with pytest.raises(ValueError, match="no reward"):
        closed_loop_episode(kind, "score", "jobs_measured", "episodic")


@pytest.mark.parametrize("kind", CLOSED)
@pytest.mark.parametrize("reward, total", [
    ("queue_length_mean", lambda s: -s["queue_job_hours"]),
    ("utilization", lambda s: s["busy_machine_hours"]),
])
def test_dense_closed_loop_rewards_sum_to_the_episode_totals(kind, reward, total):
    _, rewards, summary = closed_loop_episode(kind, "score", reward, "dense")
    assert math.isclose(sum(rewards), total(summary), rel_tol=1e-9)


def test_the_worked_example_runs_end_to_end_in_smoke_mode():
    """examples/gym_train.py (docs/guide/gym.md's worked example) in its smoke mode: CMA-ES on
    Lublin-256, SDSC-SP2 and a small site, two generations each; it prints its tables."""
    pytest.importorskip("cma")
    import subprocess
    import sys

    example = Path(__file__).resolve().parent.parent / "examples" / "gym_train.py"
    done = subprocess.run(
        [sys.executable, str(example), "--smoke", "--trace-dir", str(TRACES)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    for heading in ("lublin-256", "sdsc-sp2", "EASY-SJF", "jobs submitted per hour"):
        assert heading.lower() in done.stdout.lower(), (heading, done.stdout[-2000:])


def test_out_of_range_inputs_raise_the_documented_errors():
    needs(LUBLIN)
    env = sg.ReplayEnv(str(LUBLIN))
    env.reset(seed=0)
    with pytest.raises(sg.InvalidAction):
        env.step(2**70)
    with pytest.raises(ValueError):
        env.reset(options={"start": 2**70})
    with pytest.raises(ValueError, match="whole number"):
        env.reset(options={"start": 1.5})
    site = sg.SiteEnv(users=20, weeks=2, warm_days=2)
    with pytest.raises(ValueError, match="seed"):
        site.reset(options={"start": 3})
    vec = sg.ReplayVectorEnv(str(LUBLIN), num_envs=2)
    with pytest.raises(gymnasium.error.ResetNeeded):
        vec.step(np.zeros(2, dtype=np.int64))


def test_unseeded_vector_envs_run_different_episodes():
    needs(LUBLIN)
    vec = sg.ReplayVectorEnv(str(LUBLIN), num_envs=2)
    obs, _ = vec.reset()
    assert not np.array_equal(obs[0], obs[1])


def test_record_episode_statistics_wraps_the_envs():
    """Gymnasium's episode statistics wrapper owns info["episode"]: ours are in
    info["measures"], so the two live side by side."""
    needs(LUBLIN)
    from gymnasium.wrappers import RecordEpisodeStatistics
    from gymnasium.wrappers.vector import RecordEpisodeStatistics as VectorStatistics

    env = RecordEpisodeStatistics(sg.ReplayEnv(str(LUBLIN), episode_jobs=16))
    env.reset(seed=0)
    while True:
        _, _, terminated, truncated, info = env.step(0)
        if terminated or truncated:
            break
    assert "episode" in info and "measures" in info
    vec = VectorStatistics(sg.ReplayVectorEnv(str(LUBLIN), num_envs=2, episode_jobs=16))
    vec.reset(seed=0)
    for _ in range(200):
        _, _, terminated, truncated, info = vec.step(np.zeros(2, dtype=np.int64))
        if (terminated | truncated).any():
            assert "episode" in info and "measures" in info
            break
    else:
        pytest.fail("no vector episode ended in 200 steps")
