"""Type stubs of the native module (the Rust engine); use the ``sitesim`` package's wrappers."""

from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__version__: str

class Job:
    """A waiting job as a queue order written in Python sees it (never its true runtime)."""

    @property
    def id(self) -> int:
        """The job's number in the simulation (assigned in submission order)."""
    @property
    def submit(self) -> int:
        """Submit time, seconds."""
    @property
    def processors(self) -> int:
        """Processors it needs."""
    @property
    def estimate(self) -> int:
        """The user's runtime estimate, seconds (the job is killed when it is reached)."""
    @property
    def user(self) -> int:
        """The owner (-1 when unknown)."""

def run(
    config: Optional[str] = None, config_text: Optional[str] = None, **options: Any
) -> Dict[str, Any]:
    """``sitesim run``; the keywords are ``option_table("run")``'s keys."""
def calibrate(
    config: Optional[str] = None,
    config_text: Optional[str] = None,
    utilization: Optional[float] = None,
    mean_wait: Optional[float] = None,
    seeds: int = 5,
    **options: Any,
) -> str:
    """``sitesim calibrate``; the keywords are ``option_table("validate")``'s keys; JSON."""
def replay(trace: str, **options: Any) -> Dict[str, Any]:
    """``sitesim replay``; the keywords are ``option_table("replay")``'s keys."""
def sweep(
    sweep: Optional[str] = None,
    sweep_text: Optional[str] = None,
    *,
    jobs: Optional[int] = None,
    out: Optional[str] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    per_seed: bool = False,
) -> Tuple[str, Optional[str]]: ...
def fit(
    traces: List[str],
    *,
    session_threshold: int = 1200,
    max_break: int = 28800,
    weighting: str = "traces",
    command: str = "",
    **input: Any,
) -> Dict[str, Any]: ...
def whatif(
    sacct: str,
    slurm_conf: List[str],
    *,
    out: str,
    assoc: Optional[str] = None,
    qos: Optional[str] = None,
    seeds: int = 10,
    weeks: int = 4,
    users: Optional[int] = None,
    processors: Optional[int] = None,
    force: bool = False,
    **input: Any,
) -> List[str]: ...
def schedulers() -> List[Tuple[str, str]]: ...
def columns() -> Tuple[List[str], List[str], List[str]]: ...
def read_sacct(path: str, **input: Any) -> Dict[str, Any]: ...
def read_trace(path: str, **input: Any) -> Dict[str, Any]: ...
def read_swf(
    path: str,
) -> Tuple[List[Tuple[str, str]], List[str], List[List[int]], List[List[float]]]: ...
def option_table(
    command: str,
) -> List[Tuple[str, str, str, Optional[str], List[str], Optional[Tuple[int, int]]]]: ...
def check_text(command: str, key: str, text: str) -> Optional[str]: ...

# The Gymnasium environment's native side (sitesim.gym wraps it; docs/guide/gym.md).
GYM_JOB_FEATURES: List[str]
GYM_MACHINE_FEATURES: List[str]
GYM_MAX_ENVS: int

class GymSource:
    def __init__(
        self,
        kind: str,
        trace: Optional[str] = None,
        config: Optional[str] = None,
        config_text: Optional[str] = None,
        **options: Any,
    ) -> None: ...
    @property
    def processors(self) -> int: ...
    @property
    def jobs(self) -> int: ...
    @property
    def scheduler(self) -> str: ...

class GymConfig:
    def __init__(
        self,
        action_mode: str,
        window: int,
        reward: str,
        reward_mode: str,
        relative_to: Optional[str],
        invalid_action: str,
        episode_jobs: Optional[int],
        warm_jobs: int,
        start_range: Tuple[float, float],
        warm_days: int,
        episode_days: int,
        until: str,
    ) -> None: ...

class GymCore:
    def __init__(self, source: GymSource, config: GymConfig) -> None: ...
    @property
    def obs_size(self) -> int: ...
    @property
    def mask_size(self) -> int: ...
    def reset(self, seed: Optional[int], start: Optional[int], obs: Any, mask: Any) -> bool: ...
    def step_pick(self, action: int, obs: Any, mask: Any) -> Tuple[float, bool, bool, bool]: ...
    def step_score(self, scores: Any, obs: Any, mask: Any) -> Tuple[float, bool, bool]: ...
    def summary(self) -> Optional[Dict[str, Any]]: ...
    def baseline(self, scheduler: str) -> Dict[str, Any]: ...
    def jobs_csv(self, drain: bool) -> bytes: ...
    def render(self) -> str: ...
    def state(
        self,
    ) -> Tuple[int, Optional[int], int, Optional[Tuple[str, int]]]: ...
    def restore(
        self, state: Tuple[int, Optional[int], int, Optional[Tuple[str, int]]], obs: Any, mask: Any
    ) -> bool: ...

class GymVector:
    def __init__(
        self, source: GymSource, config: GymConfig, num_envs: int, threads: bool
    ) -> None: ...
    def reset(self, seed: Optional[int], obs: Any, masks: Any) -> None: ...
    def step(
        self,
        picks: Any,
        scores: Any,
        obs: Any,
        rewards: Any,
        terminated: Any,
        truncated: Any,
        masks: Any,
        invalid: Any,
    ) -> None: ...
    def reset_ended(self, obs: Any, masks: Any, reset: Any) -> None: ...
    def state(self, i: int) -> Tuple[int, Optional[int], int, Optional[Tuple[str, int]]]: ...
    def restore_env(
        self,
        i: int,
        state: Tuple[int, Optional[int], int, Optional[Tuple[str, int]]],
        obs: Any,
        mask: Any,
    ) -> bool: ...
    def step_env(
        self, i: int, pick: Optional[int], scores: Any, obs: Any, mask: Any
    ) -> None: ...
    def summary(self, i: int) -> Optional[Dict[str, Any]]: ...
    def baseline(self, i: int, scheduler: str) -> Dict[str, Any]: ...
