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
def replay(trace: str, **options: Any) -> Dict[str, Any]:
    """``sitesim replay``; the keywords are ``option_table("replay")``'s keys."""
def sweep(
    sweep: Optional[str] = None,
    sweep_text: Optional[str] = None,
    *,
    jobs: Optional[int] = None,
    out: Optional[str] = None,
    progress: Optional[Callable[[int, int], None]] = None,
) -> Tuple[str, str]: ...
def fit(
    traces: List[str],
    *,
    session_threshold: int = 1200,
    max_break: int = 28800,
    weighting: str = "traces",
    command: str = "",
    **input: Any,
) -> Dict[str, Any]: ...
def schedulers() -> List[Tuple[str, str]]: ...
def columns() -> Tuple[List[str], List[str], List[str]]: ...
def read_sacct(path: str, **input: Any) -> Dict[str, Any]: ...
def read_swf(
    path: str,
) -> Tuple[List[Tuple[str, str]], List[str], List[List[int]], List[List[float]]]: ...
def option_table(
    command: str,
) -> List[Tuple[str, str, str, Optional[str], List[str], Optional[Tuple[int, int]]]]: ...
def check_text(command: str, key: str, text: str) -> Optional[str]: ...
