"""Gymnasium environments over sitesim's engine.

An episode is a simulation that stops wherever the scheduler has a choice to make; the agent
decides, and the engine goes on in Rust to the next choice. Three kinds of episodes:

* ``ReplayEnv`` (``sitesim/Replay-v0``): a trace replayed open loop, in slices of
  ``episode_jobs`` jobs, each started on a machine warmed up by the ``warm_jobs`` before it.
* ``FeedbackEnv`` (``sitesim/ReplayFeedback-v0``): a trace's sessions replayed with feedback
  (Zakay & Feitelson, MASCOTS 2014): a batch that followed earlier work comes its logged think
  time after that work's simulated end.
* ``SiteEnv`` (``sitesim/Site-v0``): a site of simulated users who react to the response times
  they get (the closed loop): an agent can learn that making users wait makes them submit less.

Two action modes: ``action_mode="pick"`` (``Discrete(window + 1)``: start or reserve one of the
window's jobs, or wait for the next event; the action mask is ``env.action_masks()``) and
``action_mode="score"`` (``Box(-1, 1, (window,))``: score the window, larger first; the rule
orders the queue by the scores and backfills as it always does). Either way the scheduler's own
rule (EASY by default, or none) runs: with FCFS decisions an episode is exactly
``sitesim replay --scheduler easy`` or ``sitesim run --scheduler easy``.

The observation layout, rewards and episodes are documented in docs/guide/gym.md;
``JOB_FEATURES`` and ``MACHINE_FEATURES`` name the observation's entries. Import this module
(``import sitesim.gym``) to register the ids with Gymnasium.
"""

from __future__ import annotations

import collections
import io
import operator
import os
from pathlib import Path
from typing import Any, Optional

try:
    import gymnasium
    import numpy as np
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space
except ImportError as error:  # pragma: no cover - depends on the installation
    raise ImportError(
        "sitesim.gym needs gymnasium and numpy: pip install gymnasium numpy (or, from the checkout, pip install './crates/sitesim-py[gym]')"
    ) from error

from . import _sitesim

__all__ = [
    "JOB_FEATURES",
    "MACHINE_FEATURES",
    "TRACES",
    "InvalidAction",
    "ReplayEnv",
    "FeedbackEnv",
    "SiteEnv",
    "ReplayVectorEnv",
    "FeedbackVectorEnv",
    "SiteVectorEnv",
]

#: The most environments one vector holds (each holds a simulation; more would only exhaust
#: memory).
MAX_ENVS = _sitesim.GYM_MAX_ENVS

#: Names of a window slot's features, in order (an empty slot is all zeros).
JOB_FEATURES = tuple(_sitesim.GYM_JOB_FEATURES)
#: Names of the machine's features, after the window's.
MACHINE_FEATURES = tuple(_sitesim.GYM_MACHINE_FEATURES)

#: Trace names ``trace=`` accepts besides a path: files in ``$SITESIM_TRACES``.
TRACES = {
    "lublin-256": "lublin_256.swf.gz",
    "sdsc-sp2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "kth-sp2": "KTH-SP2-1996-2.1-cln.swf.gz",
    "ctc-sp2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "sdsc-blue": "SDSC-BLUE-2000-4.2-cln.swf.gz",
    "sdsc-par": "SDSC-Par-1996-3.1-cln.swf.gz",
    "hpc2n": "HPC2N-2002-2.2-cln.swf.gz",
    "lanl-cm5": "LANL-CM5-1994-4.1-cln.swf.gz",
}


class InvalidAction(gymnasium.error.InvalidAction, ValueError):
    """An action the environment cannot take: outside the action space, masked (an empty
    window slot, or a wait with nothing running and nothing to come), or not finite."""


def _trace_path(trace: Any) -> str:
    """``trace`` as a path: an existing file, or a name of ``TRACES`` in ``$SITESIM_TRACES``."""
    path = Path(os.fspath(trace))
    if path.is_file():
        return str(path)
    directory = os.environ.get("SITESIM_TRACES")
    name = TRACES.get(str(trace).lower())
    if name is not None and directory:
        candidate = Path(directory) / name
        if candidate.is_file():
            return str(candidate)
    known = ", ".join(TRACES)
    where = (
        f"looked in $SITESIM_TRACES={directory}"
        if directory
        else "$SITESIM_TRACES is not set"
    )
    raise FileNotFoundError(
        f"trace={str(trace)!r}: no such file, and not a known trace name ({known}; {where})"
    )


# Sources are read once per process: environments of the same trace and options share one.
_SOURCES: dict = {}


def _source(kind: str, trace=None, config=None, config_text=None, **options):
    """The source of `kind` ("replay", "feedback" or "site"), read once per process: a trace
    (a path or a name of ``TRACES``) with ``sitesim replay``'s options, or a site (a population
    file's path or text, or the default) with ``sitesim run``'s."""
    if trace is not None:
        trace = _trace_path(trace)
    if config is not None:
        config = os.fspath(config)
    key = (kind, trace, config, config_text, repr(sorted(options.items())))
    source = _SOURCES.get(key)
    if source is None:
        try:
            source = _sitesim.GymSource(
                kind, trace=trace, config=config, config_text=config_text, **options
            )
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        _SOURCES[key] = source
    return source


def _env_args(
    action_mode="pick",
    window=128,
    reward="bounded_slowdown_mean",
    reward_mode="dense",
    relative_to=None,
    invalid_action="raise",
    episode_jobs=256,
    warm_jobs=1024,
    start_range=(0.0, 1.0),
    warm_days=7,
    episode_days=7,
    until="horizon",
):
    """The environment's own keywords, in the native constructors' order (checked there)."""
    for name, value in (
        ("window", window),
        ("warm_jobs", warm_jobs),
        ("warm_days", warm_days),
        ("episode_days", episode_days),
    ):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise ValueError(f"{name}={value!r}: expected a whole number >= 0")
    if episode_jobs is not None and (
        isinstance(episode_jobs, bool)
        or not isinstance(episode_jobs, (int, np.integer))
        or episode_jobs < 0
    ):
        raise ValueError(
            f"episode_jobs={episode_jobs!r}: expected a whole number (None: the whole trace)"
        )
    try:
        a, b = (float(x) for x in start_range)
    except (TypeError, ValueError):
        raise ValueError(
            f"start_range={start_range!r}: expected two fractions (a, b)"
        ) from None
    return (
        str(action_mode),
        int(window),
        str(reward),
        str(reward_mode),
        None if relative_to is None else str(relative_to),
        str(invalid_action),
        None if episode_jobs is None else int(episode_jobs),
        int(warm_jobs),
        (a, b),
        int(warm_days),
        int(episode_days),
        str(until),
    )


def _raise_as_gym(error: Exception):
    message = str(error)
    if isinstance(error, ValueError) and message.startswith("invalid action"):
        raise InvalidAction(message) from None
    if isinstance(error, RuntimeError) and message.startswith("reset needed: "):
        raise gymnasium.error.ResetNeeded(message[len("reset needed: "):]) from None
    raise error


def _spaces(mode: str, window: int, obs_size: int):
    observation = spaces.Box(-1.0, 1.0, (obs_size,), np.float32)
    if mode == "pick":
        action = spaces.Discrete(window + 1)
    else:
        action = spaces.Box(-1.0, 1.0, (window,), np.float32)
    return observation, action


def _closed(what: str):
    return gymnasium.error.ClosedEnvironmentError(
        f"{what} after close(): make a new environment"
    )


class _Env(gymnasium.Env):
    """One environment (see the module's documentation).

    It can be pickled and deep-copied, mid-episode too: the copy is rebuilt from the settings,
    the random stream's seeding and draws, and the actions since the last reset, replayed (the
    simulation is deterministic), so it continues exactly as the original would."""

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, source_spec, env_args, mask_in_info=False, render_mode=None):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r}: expected None or 'ansi'")
        kind, source_options = source_spec
        source = _source(kind, **source_options)
        self.render_mode = render_mode
        self.mask_in_info = bool(mask_in_info)
        self._core = _sitesim.GymCore(source, _sitesim.GymConfig(*env_args))
        self._pick = env_args[0] == "pick"
        self.window = env_args[1]
        self.observation_space, self.action_space = _spaces(
            env_args[0], self.window, self._core.obs_size
        )
        self._mask = np.zeros(self._core.mask_size, dtype=bool)
        self._done = True
        self.source = source
        # What a copy is rebuilt from (__getstate__): the constructor's arguments, and the
        # actions since the last reset (and whether the episode was drained since).
        self._init = (source_spec, env_args, self.mask_in_info, render_mode)
        self._actions = []
        self._drained = False
        self._is_closed = False

    def __getstate__(self):
        if self._is_closed:
            raise _closed("pickling")
        return {
            "init": self._init,
            "core": self._core.state(),
            "actions": list(self._actions),
            "drained": self._drained,
            "done": self._done,
            "np_random": self._np_random,
            "np_random_seed": self._np_random_seed,
        }

    def __setstate__(self, state):
        source_spec, env_args, mask_in_info, render_mode = state["init"]
        _Env.__init__(self, source_spec, env_args, mask_in_info, render_mode)
        obs = np.empty(self._core.obs_size, dtype=np.float32)
        try:
            self._core.restore(state["core"], obs, self._mask)
            for action in state["actions"]:
                if self._pick:
                    self._core.step_pick(action, obs, self._mask)
                else:
                    self._core.step_score(action, obs, self._mask)
            if state["drained"]:
                self._core.jobs_csv(True)
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        self._actions = list(state["actions"])
        self._drained = state["drained"]
        self._done = state["done"]
        self._np_random = state["np_random"]
        self._np_random_seed = state["np_random_seed"]

    def close(self):
        """Frees the simulation; ``step``, ``reset`` and the other methods then raise
        ``gymnasium.error.ClosedEnvironmentError``."""
        if not self._is_closed:
            self._is_closed = True
            self._core = None
            self._actions = []
        super().close()

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        if self._is_closed:
            raise _closed("reset()")
        super().reset(seed=seed)
        start = None
        if options:
            unknown = set(options) - {"start"}
            if unknown:
                raise ValueError(
                    f"options: unknown keys {sorted(unknown)}; the only one is 'start'"
                )
            start = options.get("start")
            if start is not None:
                try:
                    start = operator.index(start)
                except TypeError:
                    raise ValueError(
                        f"options={{'start': {start!r}}}: expected a whole number"
                    ) from None
        obs = np.empty(self._core.obs_size, dtype=np.float32)
        try:
            decision = self._core.reset(seed, start, obs, self._mask)
        except OverflowError:
            raise ValueError(f"options={options!r}: the start is out of range") from None
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        self._actions = []
        self._drained = False
        if not decision:
            raise ValueError(
                f"options={options!r}: the episode has no decision to make (every job could start at once): choose another start"
            )
        self._done = False
        info = {"action_mask": self._mask.copy()} if self.mask_in_info else {}
        return obs, info

    def step(self, action):
        if self._is_closed:
            raise _closed("step()")
        if self._done:
            raise gymnasium.error.ResetNeeded(
                "step() after the episode ended, or before reset(): call reset()"
            )
        obs = np.empty(self._core.obs_size, dtype=np.float32)
        invalid = False
        try:
            if self._pick:
                # True is an int to Python (operator.index(True) == 1), but not an element of
                # Discrete(window + 1): a bool is refused, not taken as slot 1.
                if isinstance(action, (bool, np.bool_)):
                    raise InvalidAction(
                        f"action {action!r}: expected a whole number in 0..={self.window}, not a bool"
                    )
                try:
                    pick = operator.index(action)
                except TypeError:
                    raise InvalidAction(
                        f"action {action!r}: expected a whole number in 0..={self.window}"
                    ) from None
                if not -(2**63) <= pick < 2**63:
                    raise InvalidAction(f"action {pick} is outside 0..={self.window}")
                reward, terminated, truncated, invalid = self._core.step_pick(
                    pick, obs, self._mask
                )
                self._actions.append(pick)
            else:
                try:
                    scores = np.ascontiguousarray(action, dtype=np.float32)
                except (TypeError, ValueError) as error:
                    raise InvalidAction(f"scores: {error}") from None
                if scores.shape != (self.window,):
                    raise InvalidAction(
                        f"scores of shape {scores.shape}, expected ({self.window},)"
                    )
                reward, terminated, truncated = self._core.step_score(
                    scores, obs, self._mask
                )
                # A copy: the caller may reuse its array for the next action.
                self._actions.append(scores.copy())
        except InvalidAction:
            raise
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        info = {}
        if invalid:
            info["invalid_action"] = True
        if self.mask_in_info:
            info["action_mask"] = self._mask.copy()
        if terminated or truncated:
            self._done = True
            info["measures"] = self._core.summary()
        return obs, reward, terminated, truncated, info

    def action_masks(self):
        """Which actions are valid now: window slots holding a job (and, in pick mode, the last
        entry: waiting, valid while jobs run or arrivals are due). sb3-contrib's MaskablePPO
        reads it."""
        if self._is_closed:
            raise _closed("action_masks()")
        return self._mask.copy()

    def render(self):
        if self._is_closed:
            raise _closed("render()")
        if self.render_mode == "ansi":
            return self._core.render()
        return None

    def episode_summary(self) -> Optional[dict]:
        """The episode's measures so far (final once it ended): mean bounded slowdown and wait
        of its jobs, utilization, jobs submitted per hour, sessions (docs/guide/gym.md)."""
        if self._is_closed:
            raise _closed("episode_summary()")
        return self._core.summary()

    def baseline(self, scheduler: str = "easy") -> dict:
        """The same episode (same jobs and warm start, or the same users) under the built-in
        scheduler ``scheduler``, measured as ``episode_summary``."""
        if self._is_closed:
            raise _closed("baseline()")
        try:
            return self._core.baseline(scheduler)
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)

    def episode_jobs_csv(self, drain: bool = True) -> bytes:
        """The records of the episode's jobs (warm-up jobs included) as ``jobs.csv`` of
        ``sitesim replay``; ``drain`` first finishes the simulation with the rule's own passes,
        so every job's record is final (the episode is then over)."""
        if self._is_closed:
            raise _closed("episode_jobs_csv()")
        try:
            data = self._core.jobs_csv(drain)
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        if drain:
            self._done = True
            self._drained = True
        return data

    def episode_jobs(self, drain: bool = True):
        """``episode_jobs_csv`` as a pandas DataFrame."""
        import pandas

        return pandas.read_csv(io.BytesIO(self.episode_jobs_csv(drain)))


class ReplayEnv(_Env):
    """A trace replayed open loop (``sitesim/Replay-v0``). ``trace`` is a path or a name of
    ``TRACES``; the other keywords are ``sitesim replay``'s options (``scheduler``,
    ``first_jobs``, ``estimates``, ...) and the environment's own (docs/guide/gym.md)."""

    def __init__(
        self,
        trace="lublin-256",
        *,
        action_mode="pick",
        window=128,
        reward="bounded_slowdown_mean",
        reward_mode="dense",
        relative_to=None,
        invalid_action="raise",
        episode_jobs=256,
        warm_jobs=1024,
        start_range=(0.0, 1.0),
        mask_in_info=False,
        render_mode=None,
        **replay_options,
    ):
        args = _env_args(
            action_mode, window, reward, reward_mode, relative_to, invalid_action,
            episode_jobs, warm_jobs, start_range,
        )
        super().__init__(
            ("replay", dict(trace=trace, **replay_options)), args, mask_in_info, render_mode
        )


class FeedbackEnv(_Env):
    """A trace's sessions replayed with feedback (``sitesim/ReplayFeedback-v0``): episodes of
    ``episode_days`` of logged time from a drawn start, after ``warm_days`` under the rule."""

    def __init__(
        self,
        trace="sdsc-sp2",
        *,
        action_mode="pick",
        window=128,
        reward="bounded_slowdown_mean",
        reward_mode="dense",
        relative_to=None,
        invalid_action="raise",
        start_range=(0.0, 1.0),
        warm_days=7,
        episode_days=7,
        mask_in_info=False,
        render_mode=None,
        **replay_options,
    ):
        args = _env_args(
            action_mode, window, reward, reward_mode, relative_to, invalid_action,
            None, 0, start_range, warm_days, episode_days,
        )
        super().__init__(
            ("feedback", dict(trace=trace, **replay_options)), args, mask_in_info, render_mode
        )


class SiteEnv(_Env):
    """A site of simulated users (``sitesim/Site-v0``), the closed loop: ``config`` a
    population file, ``config_text`` its text, neither the embedded default site; the other
    keywords are ``sitesim run``'s options (``users``, ``weeks``, ``scheduler``, ...) and the
    environment's own. ``reset(seed=S)`` draws the users of ``sitesim run --seed S``."""

    def __init__(
        self,
        config=None,
        config_text=None,
        *,
        action_mode="pick",
        window=128,
        reward="bounded_slowdown_mean",
        reward_mode="dense",
        relative_to=None,
        invalid_action="raise",
        warm_days=7,
        until="horizon",
        mask_in_info=False,
        render_mode=None,
        **run_options,
    ):
        args = _env_args(
            action_mode, window, reward, reward_mode, relative_to, invalid_action,
            None, 0, (0.0, 1.0), warm_days, 7, until,
        )
        super().__init__(
            ("site", dict(config=config, config_text=config_text, **run_options)),
            args, mask_in_info, render_mode,
        )


class _VectorEnv(VectorEnv):
    """N environments stepped in one native call with the GIL released (NEXT_STEP autoreset:
    the step after an episode ends resets that env, ignores its action and returns reward 0).

    It can be pickled and deep-copied as the single environments can: each env is rebuilt
    from its random stream's seeding and draws and the actions since its last reset."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, source_spec, env_args, num_envs, threads):
        kind, source_options = source_spec
        source = _source(kind, **source_options)
        if (
            isinstance(num_envs, bool)
            or not isinstance(num_envs, (int, np.integer))
            or not 1 <= num_envs <= MAX_ENVS
        ):
            raise ValueError(
                f"num_envs={num_envs!r}: expected a whole number from 1 to {MAX_ENVS}"
            )
        self.num_envs = int(num_envs)
        self._core = _sitesim.GymVector(
            source, _sitesim.GymConfig(*env_args), self.num_envs, bool(threads)
        )
        self._pick = env_args[0] == "pick"
        self.window = env_args[1]
        obs_size = self.window * len(JOB_FEATURES) + len(MACHINE_FEATURES)
        self.single_observation_space, self.single_action_space = _spaces(
            env_args[0], self.window, obs_size
        )
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        mask_size = self.window + 1 if self._pick else self.window
        n = self.num_envs
        self._obs = np.zeros(n * obs_size, dtype=np.float32)
        self._masks = np.zeros(n * mask_size, dtype=bool)
        self._rewards = np.zeros(n, dtype=np.float64)
        self._terminated = np.zeros(n, dtype=bool)
        self._truncated = np.zeros(n, dtype=bool)
        self._invalid = np.zeros(n, dtype=bool)
        self._obs_size = obs_size
        self._mask_size = mask_size
        self._reset_done = False
        self.source = source
        # What a copy is rebuilt from (__getstate__): the constructor's arguments, the actions
        # of the steps since the oldest env's reset (one array per step: steps[j] is step
        # base + j), the step each env's log starts at, and which envs ended at the last step
        # (the next step resets them, ignoring their action).
        self._init = (source_spec, env_args, self.num_envs, bool(threads))
        self._steps = collections.deque()
        self._base = 0
        self._starts = np.zeros(n, dtype=np.int64)
        self._ended = np.zeros(n, dtype=bool)

    def _log(self, i):
        """Env i's actions since its last reset."""
        return [self._steps[j - self._base][i]
                for j in range(int(self._starts[i]), self._base + len(self._steps))]

    def _restart_logs(self, envs):
        """`envs` were reset: their logs start at the next step; steps no log needs are
        dropped."""
        self._starts[envs] = self._base + len(self._steps)
        oldest = int(self._starts.min())
        while self._base < oldest:
            self._steps.popleft()
            self._base += 1

    def __getstate__(self):
        self._check_open("pickling")
        return {
            "init": self._init,
            "states": [self._core.state(i) for i in range(self.num_envs)],
            "logs": [self._log(i) for i in range(self.num_envs)],
            "ended": self._ended.copy(),
            "reset_done": self._reset_done,
        }

    def __setstate__(self, state):
        source_spec, env_args, num_envs, threads = state["init"]
        _VectorEnv.__init__(self, source_spec, env_args, num_envs, threads)
        d, m = self._obs_size, self._mask_size
        try:
            for i, (env_state, log) in enumerate(zip(state["states"], state["logs"])):
                obs, mask = self._obs[i * d:(i + 1) * d], self._masks[i * m:(i + 1) * m]
                self._core.restore_env(i, env_state, obs, mask)
                for action in log:
                    if self._pick:
                        self._core.step_env(i, action, None, obs, mask)
                    else:
                        self._core.step_env(i, None, action, obs, mask)
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        # one step per action of the longest log, each env's log ending at the last one
        logs = state["logs"]
        length = max((len(log) for log in logs), default=0)
        width = () if self._pick else (self.window,)
        dtype = np.int64 if self._pick else np.float32
        for j in range(length):
            row = np.zeros((self.num_envs,) + width, dtype=dtype)
            for i, log in enumerate(logs):
                k = j - (length - len(log))
                if k >= 0:
                    row[i] = log[k]
            self._steps.append(row)
        self._starts[:] = [length - len(log) for log in logs]
        self._ended = state["ended"].copy()
        self._reset_done = state["reset_done"]

    def close_extras(self, **kwargs):
        """Frees the simulations; ``step``, ``reset`` and the other methods then raise
        ``gymnasium.error.ClosedEnvironmentError``."""
        self._core = None

    def _check_open(self, what):
        if self._core is None:
            raise _closed(what)

    def reset(self, *, seed: Optional[int] = None, options: Optional[dict] = None):
        self._check_open("reset()")
        if options:
            raise ValueError("options: the vector environments take none")
        if seed is not None and not isinstance(seed, (int, np.integer)):
            raise ValueError(f"seed={seed!r}: give one whole number (env i gets seed + i)")
        try:
            self._core.reset(seed, self._obs, self._masks)
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        self._steps.clear()
        self._base = 0
        self._starts[:] = 0
        self._ended[:] = False
        self._reset_done = True
        return self._obs.reshape(self.num_envs, -1).copy(), {}

    def step(self, actions):
        self._native_step(actions)
        info = {}
        if self._invalid.any():
            info["invalid_action"] = self._invalid.copy()
        ended = self._terminated | self._truncated
        if ended.any():
            # Gymnasium's vector convention: a value per env, and "_measures" says which are set
            # ("episode" is RecordEpisodeStatistics's key).
            episode = {}
            for i in np.flatnonzero(ended):
                for key, value in self._core.summary(int(i)).items():
                    episode.setdefault(key, np.zeros(self.num_envs))[i] = value
            info["measures"] = episode
            info["_measures"] = ended
        return (
            self._obs.reshape(self.num_envs, -1).copy(),
            self._rewards.copy(),
            self._terminated.copy(),
            self._truncated.copy(),
            info,
        )

    def _native_step(self, actions):
        """Checks `actions` and steps every env, the outputs left in the buffers."""
        self._check_open("step()")
        if not self._reset_done:
            raise gymnasium.error.ResetNeeded("step() before reset(): call reset() first")
        try:
            array = np.asarray(actions)
        except (TypeError, ValueError) as error:
            raise InvalidAction(f"actions: {error}") from None
        if self._pick:
            if array.shape != (self.num_envs,) or array.dtype.kind not in "iu":
                raise InvalidAction(
                    f"actions of shape {array.shape} and type {array.dtype}: expected {self.num_envs} whole numbers"
                )
            picks = np.ascontiguousarray(array, dtype=np.int64)
            scores = None
        else:
            if array.shape != (self.num_envs, self.window) or array.dtype.kind not in "iuf":
                raise InvalidAction(
                    f"actions of shape {array.shape} and type {array.dtype}: expected numbers of shape ({self.num_envs}, {self.window})"
                )
            picks = None
            scores = np.ascontiguousarray(array, dtype=np.float32).reshape(-1)
        try:
            self._core.step(
                picks, scores, self._obs, self._rewards, self._terminated,
                self._truncated, self._masks, self._invalid,
            )
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)
        # The step's actions, for copies; an env that had ended was reset by this step (its
        # action ignored), so its log starts after it.
        self._steps.append(
            picks.copy() if self._pick else scores.reshape(self.num_envs, self.window).copy()
        )
        if self._ended.any():
            self._restart_logs(self._ended)
        np.logical_or(self._terminated, self._truncated, out=self._ended)

    def action_masks(self):
        """Each env's action mask, one row per env."""
        self._check_open("action_masks()")
        return self._masks.reshape(self.num_envs, -1).copy()

    def episode_summary(self, i: int) -> Optional[dict]:
        """Env i's episode measures so far (the step that ends an episode also returns them in
        ``info["measures"]``, with ``info["_measures"]`` marking the envs that ended)."""
        self._check_open("episode_summary()")
        return self._core.summary(i)

    def baseline(self, i: int, scheduler: str = "easy") -> dict:
        """Env i's current episode under the built-in scheduler ``scheduler``. An episode that
        ended is current until the next step resets it (NEXT_STEP autoreset): call this right
        after the step that ended env i, or right after ``reset``."""
        self._check_open("baseline()")
        try:
            return self._core.baseline(i, scheduler)
        except (ValueError, RuntimeError) as error:
            _raise_as_gym(error)


class _SameStepAutoreset:
    """A native vector env (``ReplayVectorEnv``, ``FeedbackVectorEnv``, ``SiteVectorEnv``) with
    Stable-Baselines3's ``VecEnv`` conventions: an env whose episode ends is reset in the same
    step (its last observation in ``infos[i]["terminal_observation"]``, its measures in
    ``infos[i]["measures"]``, ``infos[i]["TimeLimit.truncated"]`` when it was cut at its time
    limit), one info dict per env, ``env_method("action_masks")`` for sb3-contrib's
    MaskablePPO. ``sitesim.sb3.SB3VecEnv`` is this on top of SB3's ``VecEnv`` class; this
    base needs no SB3, so its behaviour is tested without it."""

    def __init__(self, vec):
        if not isinstance(vec, _VectorEnv):
            raise TypeError(
                f"expected a sitesim vector environment (ReplayVectorEnv, FeedbackVectorEnv, "
                f"SiteVectorEnv), got {type(vec).__name__}"
            )
        self.vec = vec
        self._actions = None
        self._reset_flags = np.zeros(vec.num_envs, dtype=bool)
        self._seed_given = None

    def seed(self, seed=None):
        """The next ``reset`` seeds env i with ``seed + i`` (SB3's convention)."""
        self._seed_given = None if seed is None else int(seed)
        return [None if seed is None else int(seed) + i for i in range(self.vec.num_envs)]

    def reset(self):
        obs, _ = self.vec.reset(seed=self._seed_given)
        self._seed_given = None
        return obs

    def step_async(self, actions):
        self._actions = actions

    def step_wait(self):
        vec = self.vec
        if self._actions is None:
            raise RuntimeError("step_wait() without step_async()")
        actions, self._actions = self._actions, None
        if vec._pick:
            actions = np.asarray(actions).reshape(vec.num_envs)
            if actions.dtype.kind == "f" and np.all(actions == np.round(actions)):
                actions = actions.astype(np.int64)  # SB3 may hand discrete actions as floats
        vec._native_step(actions)
        obs = vec._obs.reshape(vec.num_envs, -1)
        dones = vec._terminated | vec._truncated
        infos = [{} for _ in range(vec.num_envs)]
        ended = np.flatnonzero(dones)
        for i in ended:
            infos[i]["terminal_observation"] = obs[i].copy()
            infos[i]["TimeLimit.truncated"] = bool(vec._truncated[i] and not vec._terminated[i])
            infos[i]["measures"] = vec._core.summary(int(i))
        if len(ended):
            try:
                vec._core.reset_ended(vec._obs, vec._masks, self._reset_flags)
            except (ValueError, RuntimeError) as error:
                _raise_as_gym(error)
            vec._restart_logs(self._reset_flags)
            vec._ended[self._reset_flags] = False
        return obs.copy(), vec._rewards.astype(np.float32), dones, infos

    def close(self):
        self.vec.close()

    def _indices(self, indices):
        n = self.vec.num_envs
        if indices is None:
            return range(n)
        if isinstance(indices, (int, np.integer)):
            return [int(indices)]
        return [int(i) for i in indices]

    def get_attr(self, attr_name, indices=None):
        rows = self._indices(indices)
        if attr_name == "render_mode":
            return [None for _ in rows]
        if attr_name == "action_masks":
            return [(lambda i=i: self.vec.action_masks()[i]) for i in rows]
        if attr_name in ("observation_space", "action_space"):
            space = getattr(self.vec, "single_" + attr_name)
            return [space for _ in rows]
        if attr_name in ("window", "source"):
            return [getattr(self.vec, attr_name) for _ in rows]
        raise AttributeError(f"the sitesim vector's envs have no attribute {attr_name!r}")

    def set_attr(self, attr_name, value, indices=None):
        raise AttributeError(
            f"set_attr({attr_name!r}): the sitesim vector's envs share their settings; make a "
            "new vector instead"
        )

    def env_method(self, method_name, *method_args, indices=None, **method_kwargs):
        rows = self._indices(indices)
        if method_name == "action_masks":
            masks = self.vec.action_masks()
            return [masks[i] for i in rows]
        if method_name in ("episode_summary", "baseline"):
            method = getattr(self.vec, method_name)
            return [method(i, *method_args, **method_kwargs) for i in rows]
        raise AttributeError(
            f"env_method({method_name!r}): the sitesim vector's envs offer action_masks, "
            "episode_summary and baseline"
        )

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False for _ in self._indices(indices)]


class ReplayVectorEnv(_VectorEnv):
    """``num_envs`` ``ReplayEnv``s over one trace read once; ``threads`` steps them on native
    threads."""

    def __init__(
        self,
        trace="lublin-256",
        num_envs=1,
        *,
        threads=False,
        action_mode="pick",
        window=128,
        reward="bounded_slowdown_mean",
        reward_mode="dense",
        relative_to=None,
        invalid_action="raise",
        episode_jobs=256,
        warm_jobs=1024,
        start_range=(0.0, 1.0),
        **replay_options,
    ):
        args = _env_args(
            action_mode, window, reward, reward_mode, relative_to, invalid_action,
            episode_jobs, warm_jobs, start_range,
        )
        super().__init__(
            ("replay", dict(trace=trace, **replay_options)), args, num_envs, threads
        )


class FeedbackVectorEnv(_VectorEnv):
    """``num_envs`` ``FeedbackEnv``s."""

    def __init__(
        self,
        trace="sdsc-sp2",
        num_envs=1,
        *,
        threads=False,
        action_mode="pick",
        window=128,
        reward="bounded_slowdown_mean",
        reward_mode="dense",
        relative_to=None,
        invalid_action="raise",
        start_range=(0.0, 1.0),
        warm_days=7,
        episode_days=7,
        **replay_options,
    ):
        args = _env_args(
            action_mode, window, reward, reward_mode, relative_to, invalid_action,
            None, 0, start_range, warm_days, episode_days,
        )
        super().__init__(
            ("feedback", dict(trace=trace, **replay_options)), args, num_envs, threads
        )


class SiteVectorEnv(_VectorEnv):
    """``num_envs`` ``SiteEnv``s; env i's first episode draws the users of seed + i."""

    def __init__(
        self,
        config=None,
        config_text=None,
        num_envs=1,
        *,
        threads=False,
        action_mode="pick",
        window=128,
        reward="bounded_slowdown_mean",
        reward_mode="dense",
        relative_to=None,
        invalid_action="raise",
        warm_days=7,
        until="horizon",
        **run_options,
    ):
        args = _env_args(
            action_mode, window, reward, reward_mode, relative_to, invalid_action,
            None, 0, (0.0, 1.0), warm_days, 7, until,
        )
        super().__init__(
            ("site", dict(config=config, config_text=config_text, **run_options)),
            args, num_envs, threads,
        )


for _id, _env, _vector in (
    ("sitesim/Replay-v0", "ReplayEnv", "ReplayVectorEnv"),
    ("sitesim/ReplayFeedback-v0", "FeedbackEnv", "FeedbackVectorEnv"),
    ("sitesim/Site-v0", "SiteEnv", "SiteVectorEnv"),
):
    if _id not in gymnasium.registry:
        gymnasium.register(
            _id,
            entry_point=f"sitesim.gym:{_env}",
            vector_entry_point=f"sitesim.gym:{_vector}",
        )
