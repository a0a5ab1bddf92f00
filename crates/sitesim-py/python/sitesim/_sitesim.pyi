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
    config: Optional[str] = None,
    config_text: Optional[str] = None,
    *,
    users: Optional[int] = None,
    weeks: Optional[int] = None,
    scheduler: Optional[str] = None,
    alpha: Optional[float] = None,
    dynp_lower: Optional[int] = None,
    dynp_upper: Optional[int] = None,
    quality: Optional[str] = None,
    seed: Optional[int] = None,
    processors: Optional[int] = None,
    fairness: bool = False,
    headroom: bool = False,
    swf: bool = False,
    order: Optional[Callable[[Job, int], float]] = None,
) -> Dict[str, Any]: ...
def replay(
    trace: str,
    *,
    scheduler: str = "easy",
    alpha: Optional[float] = None,
    dynp_lower: Optional[int] = None,
    dynp_upper: Optional[int] = None,
    quality: Optional[str] = None,
    load_factor: float = 1.0,
    fairness: bool = False,
    feedback: bool = False,
    feedback_abandon: bool = False,
    shake: bool = False,
    processors: Optional[int] = None,
    estimates: str = "trace",
    estimate_f: Optional[float] = None,
    estimate_phi: Optional[float] = None,
    estimate_max: Optional[int] = None,
    estimate_max_share: Optional[float] = None,
    estimate_modes: Sequence[Tuple[int, float]] = (),
    seed: int = 1,
    node_processors: Optional[int] = None,
    selection: str = "first-fit",
    bandwidth_mix: Optional[str] = None,
    bandwidth_demands: str = "500,1000,2000",
    node_bandwidth: float = 6000.0,
    node_penalty: str = "max",
    placement: Optional[str] = None,
    node_offset: int = 0,
    first_jobs: Optional[int] = None,
    warmup: str = "none",
    order: Optional[Callable[[Job, int], float]] = None,
) -> Dict[str, Any]: ...
def sweep(
    sweep: Optional[str] = None, sweep_text: Optional[str] = None, *, jobs: Optional[int] = None
) -> str: ...
def fit(
    traces: List[str],
    *,
    session_threshold: int = 1200,
    max_break: int = 28800,
    weighting: str = "traces",
    command: str = "",
) -> Dict[str, Any]: ...
def schedulers() -> List[Tuple[str, str]]: ...
def columns() -> Tuple[List[str], List[str], List[str]]: ...
