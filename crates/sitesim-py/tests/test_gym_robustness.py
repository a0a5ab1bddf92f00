"""Issue 41's items on the Gymnasium environments: an action the mask allows never fails the
simulation (the sites where "wait" with nothing running used to end the episode with "jobs
were left waiting with nothing running", in single and vector environments); actions outside
the space are refused; a closed environment refuses to work; a huge vector is refused, not an
aborted interpreter; environments pickle and deep-copy mid-episode; the Stable-Baselines3
adapter resets an ended env in the same step (tested here without SB3, and with it when it is
installed)."""

import copy
import pickle

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")

import sitesim.gym as sg  # noqa: E402

from _cli import TRACES  # noqa: E402

LUBLIN = TRACES / "lublin_256.swf.gz"
needs_lublin = pytest.mark.skipif(not LUBLIN.exists(), reason=f"missing: {LUBLIN}")

# The worked example's site (2 weeks, 2 warm days on the default machine).
SITE = dict(users=100, weeks=2, warm_days=2)


def random_masked(mask, rng, wait_share):
    """'Wait' with probability wait_share when the mask allows it, else a valid action drawn
    uniformly (0 for an env whose episode ended: the next vector step ignores its action)."""
    if not mask.any():
        return 0
    if mask[-1] and rng.random() < wait_share:
        return len(mask) - 1
    return int(rng.choice(np.flatnonzero(mask)))


@pytest.mark.parametrize("users, seed", [(100, 0), (100, 1), (100, 2), (250, 0)])
@pytest.mark.parametrize("wait_share", [0.5, 1.0])
def test_random_masked_picks_run_the_reported_sites_to_the_end(users, seed, wait_share):
    # 100 users, seed 2, every allowed wait taken: "the simulation failed: 169 jobs were left
    # waiting with nothing running" before the fix.
    env = sg.SiteEnv(action_mode="pick", **dict(SITE, users=users))
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    steps = 0
    while True:
        _, _, terminated, truncated, info = env.step(
            random_masked(env.action_masks(), rng, wait_share)
        )
        steps += 1
        if terminated or truncated:
            break
    assert truncated and info["measures"]["submitted"] > 0, info
    assert steps > 50


def test_random_masked_picks_run_a_site_vector_to_the_end():
    # env i runs seed i: env 2 is the site that failed; it used to fail the whole vector.
    vec = sg.SiteVectorEnv(num_envs=4, action_mode="pick", **SITE)
    vec.reset(seed=0)
    rng = np.random.default_rng(2)
    ended = np.zeros(4, dtype=bool)
    while not ended.all():
        masks = vec.action_masks()
        actions = np.array([random_masked(m, rng, 1.0) for m in masks], dtype=np.int64)
        _, _, terminated, truncated, _ = vec.step(actions)
        ended |= terminated | truncated


@needs_lublin
def test_actions_outside_the_space_raise_invalid_action():
    pick = sg.ReplayEnv(LUBLIN, window=8)
    pick.reset(seed=0)
    assert pick.action_masks()[1], "slot 1 holds a job: True would have picked it"
    for bad in (True, False, np.bool_(True)):
        with pytest.raises(sg.InvalidAction, match="bool"):
            pick.step(bad)
    score = sg.ReplayEnv(LUBLIN, window=8, action_mode="score")
    score.reset(seed=0)
    for value in (1.5, -1.01, 100.0):
        scores = np.zeros(8, dtype=np.float32)
        scores[3] = value
        with pytest.raises(sg.InvalidAction, match=r"score 3 .*\[-1, 1\]"):
            score.step(scores)
    score.step(np.array([1, -1] * 4, dtype=np.float32))  # the bounds are in the space
    vec = sg.ReplayVectorEnv(LUBLIN, num_envs=2, window=8, action_mode="score")
    vec.reset(seed=0)
    with pytest.raises(sg.InvalidAction, match="env 1: .*score 0"):
        vec.step(np.array([[0.0] * 8, [2.0] + [0.0] * 7], dtype=np.float32))
    picks = sg.ReplayVectorEnv(LUBLIN, num_envs=2, window=8)
    picks.reset(seed=0)
    with pytest.raises(sg.InvalidAction):
        picks.step(np.array([True, False]))


@needs_lublin
def test_a_closed_environment_refuses_to_work():
    env = sg.ReplayEnv(LUBLIN, window=8)
    env.reset(seed=0)
    env.close()
    env.close()  # closing twice is fine
    for call in (lambda: env.step(0), lambda: env.reset(seed=0), env.action_masks,
                 env.episode_summary, lambda: env.baseline("easy"), lambda: pickle.dumps(env)):
        with pytest.raises(gymnasium.error.ClosedEnvironmentError):
            call()
    vec = sg.ReplayVectorEnv(LUBLIN, num_envs=2, window=8)
    vec.reset(seed=0)
    vec.close()
    for call in (lambda: vec.step(np.zeros(2, dtype=np.int64)), lambda: vec.reset(seed=0),
                 vec.action_masks):
        with pytest.raises(gymnasium.error.ClosedEnvironmentError):
            call()


@needs_lublin
@pytest.mark.parametrize("num_envs", [0, sg.MAX_ENVS + 1, 10**7, 2**70])
def test_a_huge_vector_is_refused_with_its_reason(num_envs):
    # 10**7 aborted the interpreter (a failed allocation) before.
    with pytest.raises(ValueError, match="num_envs"):
        gymnasium.make_vec("sitesim/Replay-v0", num_envs=num_envs, trace=str(LUBLIN))


def play(env, rng, steps):
    """Random masked actions (scores in score mode) for `steps` steps or to the end; the
    observations and rewards seen."""
    seen = []
    for _ in range(steps):
        if isinstance(env.action_space, gymnasium.spaces.Discrete):
            action = random_masked(env.unwrapped.action_masks(), rng, 0.2)
        else:
            action = rng.uniform(-1, 1, env.action_space.shape).astype(np.float32)
        obs, reward, terminated, truncated, _ = env.step(action)
        seen.append((obs, reward, terminated, truncated))
        if terminated or truncated:
            break
    return seen


@pytest.mark.parametrize("make", [
    pytest.param(lambda: sg.SiteEnv(action_mode="pick", window=16, users=30, weeks=1,
                                    warm_days=1), id="site-pick"),
    pytest.param(lambda: sg.ReplayEnv(LUBLIN, action_mode="score", window=16), id="replay-score",
                 marks=needs_lublin),
    pytest.param(lambda: gymnasium.make("sitesim/Replay-v0", trace=str(LUBLIN), window=16),
                 id="made-replay-pick", marks=needs_lublin),
])
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_copy_mid_episode_goes_on_as_the_original(make, how):
    env = make()
    env.reset(seed=5)
    env.reset()  # an unseeded reset: the copy continues the same random stream
    play(env, np.random.default_rng(0), 40)
    twin = pickle.loads(pickle.dumps(env)) if how == "pickle" else copy.deepcopy(env)
    a = play(env, np.random.default_rng(1), 300)
    b = play(twin, np.random.default_rng(1), 300)
    assert len(a) == len(b) > 0
    for (oa, ra, ta, ua), (ob, rb, tb, ub) in zip(a, b):
        assert np.array_equal(oa, ob) and ra == rb and (ta, ua) == (tb, ub)
    # and the next episodes too
    assert np.array_equal(env.reset()[0], twin.reset()[0])
    # the copy is independent: stepping it leaves the original where it was
    before = env.unwrapped.episode_summary()
    play(twin, np.random.default_rng(2), 5)
    assert env.unwrapped.episode_summary() == before


def test_a_copy_before_the_first_reset_and_after_the_end():
    env = sg.SiteEnv(action_mode="score", window=8, users=20, weeks=1, warm_days=1)
    fresh = pickle.loads(pickle.dumps(env))
    assert np.array_equal(env.reset(seed=1)[0], fresh.reset(seed=1)[0])
    rng = np.random.default_rng(0)
    play(env, rng, 10**6)
    ended = pickle.loads(pickle.dumps(env))
    with pytest.raises(gymnasium.error.ResetNeeded):
        ended.step(np.zeros(8, dtype=np.float32))
    assert ended.episode_summary() == env.episode_summary()


@pytest.mark.parametrize("mode", ["pick", "score"])
@pytest.mark.parametrize("how", ["pickle", "deepcopy"])
def test_a_vector_copy_goes_on_as_the_original(mode, how):
    # Short sites, so that envs end and are reset (NEXT_STEP) before and after the copy.
    def make():
        return sg.SiteVectorEnv(num_envs=3, action_mode=mode, window=8, users=12, weeks=1,
                                warm_days=5)

    def act(vec, rng):
        if mode == "pick":
            return np.array([random_masked(m, rng, 0.3) for m in vec.action_masks()])
        return rng.uniform(-1, 1, (3, 8)).astype(np.float32)

    vec = make()
    vec.reset(seed=11)
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(400):
        *_, terminated, truncated, _ = vec.step(act(vec, rng))
        ended += int((terminated | truncated).sum())
    assert ended > 0, "no episode ended before the copy"
    twin = pickle.loads(pickle.dumps(vec)) if how == "pickle" else copy.deepcopy(vec)
    assert np.array_equal(twin.action_masks(), vec.action_masks())
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    for _ in range(400):
        a = vec.step(act(vec, rng_a))
        b = twin.step(act(twin, rng_b))
        for x, y in zip(a[:4], b[:4]):
            assert np.array_equal(x, y)
    assert [vec.episode_summary(i) for i in range(3)] == [twin.episode_summary(i)
                                                           for i in range(3)]
    # the same-step adapter over a vector copies too
    adapter = sg._SameStepAutoreset(make())
    adapter.seed(4)
    adapter.reset()
    for _ in range(100):
        adapter.step_async(act(adapter.vec, rng))
        adapter.step_wait()
    other = pickle.loads(pickle.dumps(adapter))
    for _ in range(300):
        actions = act(adapter.vec, rng)
        adapter.step_async(actions)
        other.step_async(actions)
        a, b = adapter.step_wait(), other.step_wait()
        assert np.array_equal(a[0], b[0]) and np.array_equal(a[2], b[2])


@needs_lublin
@pytest.mark.parametrize("mode", ["pick", "score"])
def test_the_same_step_adapter_resets_ended_envs_at_once(mode):
    # The adapter's behaviour without SB3: per-env infos, the terminal observation and
    # measures of an ended env, and its new episode's first observation in the same step.
    vec = sg.ReplayVectorEnv(LUBLIN, num_envs=3, action_mode=mode, window=8, episode_jobs=16,
                             warm_jobs=32)
    twin = sg.ReplayVectorEnv(LUBLIN, num_envs=3, action_mode=mode, window=8, episode_jobs=16,
                              warm_jobs=32)
    adapter = sg._SameStepAutoreset(vec)
    adapter.seed(7)
    obs = adapter.reset()
    twin_obs, _ = twin.reset(seed=7)
    assert np.array_equal(obs, twin_obs)
    rng = np.random.default_rng(0)
    for _ in range(500):
        if mode == "pick":
            actions = np.array([random_masked(m, rng, 0.0) for m in vec.action_masks()])
        else:
            actions = rng.uniform(-1, 1, (3, 8)).astype(np.float32)
        adapter.step_async(actions)
        obs, rewards, dones, infos = adapter.step_wait()
        t_obs, t_rewards, t_term, t_trunc, _ = twin.step(actions)
        assert np.array_equal(rewards, t_rewards.astype(np.float32))
        assert np.array_equal(dones, t_term | t_trunc)
        assert len(infos) == 3
        if dones.any():
            break
        assert np.array_equal(obs, t_obs)
        assert all("terminal_observation" not in info for info in infos)
    else:
        pytest.fail("no episode ended")
    for i in range(3):
        if dones[i]:
            # the native vector's last observation is the terminal one
            assert np.array_equal(infos[i]["terminal_observation"], t_obs[i])
            assert infos[i]["measures"]["jobs"] == 16
            assert infos[i]["TimeLimit.truncated"] is False
        else:
            assert np.array_equal(obs[i], t_obs[i])
    # the native vector resets an ended env at its next step (ignoring its action): the same
    # first observation the adapter returned at once
    t_obs, *_ = twin.step(actions)
    for i in np.flatnonzero(dones):
        assert np.array_equal(obs[i], t_obs[i])
    assert adapter.env_method("action_masks")[0].shape == (9 if mode == "pick" else 8,)
    assert len(adapter.get_attr("action_masks")) == 3
    with pytest.raises(AttributeError):
        adapter.get_attr("nothing")


def test_stable_baselines3_learns_on_the_native_vector():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3 import PPO
    from stable_baselines3.common.vec_env import VecEnv, VecMonitor

    from sitesim.sb3 import SB3VecEnv

    env = SB3VecEnv(sg.SiteVectorEnv(num_envs=4, action_mode="score", window=8, users=20,
                                     weeks=1, warm_days=1))
    assert isinstance(env, VecEnv) and env.num_envs == 4
    monitored = VecMonitor(env)
    PPO("MlpPolicy", monitored, n_steps=32, batch_size=64, seed=0).learn(256)
    sb3_contrib = pytest.importorskip("sb3_contrib")
    picks = VecMonitor(SB3VecEnv(sg.SiteVectorEnv(num_envs=2, action_mode="pick", window=8,
                                                  users=20, weeks=1, warm_days=1)))
    sb3_contrib.MaskablePPO("MlpPolicy", picks, n_steps=32, batch_size=64, seed=0).learn(128)


def test_the_guides_install_line_works_from_the_checkout():
    # gym.md opened with `pip install 'sitesim[gym]'`, which cannot work: sitesim is not on
    # PyPI. Every `pip install` in its shell blocks must name the package's directory in this
    # checkout or a wheel of it (sitesim-VERSION-...whl, the version this checkout builds),
    # with extras its pyproject.toml defines.
    import re

    from _cli import ROOT

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    guide = (ROOT / "docs" / "guide" / "gym.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```sh\n(.*?)```", guide, flags=re.S)
    lines = [line for block in blocks for line in block.splitlines() if "pip install" in line]
    assert lines, "the guide gives no install line"
    for line in lines:
        spec = re.search(r"pip install\s+'?([^'\s]+)'?", line).group(1)
        path, _, extras = spec.partition("[")
        if path.endswith(".whl"):
            version = re.search(
                r'^version\s*=\s*"([^"]+)"', (ROOT / "Cargo.toml").read_text(), flags=re.M
            ).group(1)
            assert path.startswith(f"sitesim-{version}-"), f"{line!r}: not a wheel of sitesim {version}"
            package = ROOT / "crates" / "sitesim-py"
        else:
            package = ROOT / path
        assert (package / "pyproject.toml").is_file(), f"{line!r}: {path} is no package here"
        project = tomllib.loads((package / "pyproject.toml").read_text())["project"]
        for extra in filter(None, extras.rstrip("]").split(",")):
            assert extra in project["optional-dependencies"], (line, extra)
