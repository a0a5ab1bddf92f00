"""sitesim from Python: site-level runs, trace replays, sweeps and model fits.

The simulations are sitesim's own (the Rust engine, called through the native module
``sitesim._sitesim``); the options are the command line's, as keyword arguments; the results
are the files the command line writes, as a dict (``summary.json``) and pandas DataFrames
(``jobs.csv``, ``sessions.csv``, ``batches.csv``, a sweep's ``results.csv``), read from the
same writers, so they equal what ``sitesim run --out DIR`` leaves in DIR.

>>> import sitesim
>>> r = sitesim.run(users=50, weeks=2, scheduler="creasy")
>>> r.summary["closed_loop"]["submitted_per_hour"]   # summary.json, as a dict
>>> r.jobs.groupby("processors")["wait"].mean()         # jobs.csv, as a DataFrame

The GIL is released while a simulation runs, so Python threads can run several at once.
Errors are exceptions carrying the command line's message: ``ValueError`` for bad values,
``OSError`` (``FileNotFoundError``) for files that cannot be read.

A queue order can be written in Python: ``order=f`` with ``f(job, now) -> float`` (larger
first; ties by arrival, then job id) replaces the scheduler's priority function and keeps its
backfilling rule (``scheduler="easy"``: EASY's reservation and backfilling). ``job`` is a
:class:`Job` (id, submit, processors, estimate, user; never the true runtime) and ``now`` the
simulated time in seconds. It is called for every waiting job at every scheduling pass, with
the GIL taken for each call (under a microsecond each; the Python guide in docs/ gives timings).
"""

from __future__ import annotations

import difflib
import functools
import inspect
import io
import json
import os
import shlex
from functools import cached_property
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _sitesim
from ._sitesim import Job

__all__ = [
    "Job",
    "Result",
    "FitResult",
    "run",
    "replay",
    "calibrate",
    "sweep",
    "fit",
    "whatif",
    "schedulers",
    "JOB_DTYPES",
    "SESSION_DTYPES",
    "BATCH_DTYPES",
    "SLURM_JOB_DTYPES",
    "SHARE_DTYPES",
    "RESOURCE_JOB_DTYPES",
    "NODE_DTYPES",
    "OUTAGE_DTYPES",
    "REQUEST_DTYPES",
    "read_jobs",
    "read_nodes",
    "read_outages",
    "read_requests",
    "read_sessions",
    "read_batches",
    "read_swf",
    "read_sacct",
    "read_trace",
    "SACCT_DTYPES",
    "SWF_COLUMNS",
    "options",
]

__version__: str = _sitesim.__version__

PathLike = Union[str, "os.PathLike[str]"]
Order = Callable[[Job, int], float]

#: Column types of ``jobs.csv`` (times in whole seconds; ``killed`` is 0 or 1; users numbered
#: from 1; ``group`` is the owner's group name, ``session`` its session's number and ``batch``
#: the batch's number in the session, as in sessions.csv and batches.csv, all missing in a
#: replay).
JOB_DTYPES: Dict[str, Any] = {
    "job_id": "int64",
    "user": "int64",
    "group": str,
    "session": "Int64",
    "batch": "Int64",
    "submit": "int64",
    "start": "int64",
    "end": "int64",
    "processors": "int64",
    "runtime": "int64",
    "estimate": "int64",
    "killed": "int64",
    "wait": "int64",
    "response": "int64",
    "slowdown": "float64",
    "bounded_slowdown": "float64",
}

#: Column types of the columns ``jobs.csv`` adds under the Slurm model: the job's account,
#: partition and QOS, its priority and factors at its start, its wait by pending reason.
SLURM_JOB_DTYPES: Dict[str, Any] = {
    "account": str,
    "partition": str,
    "qos": str,
    "priority": "Int64",
    "age_factor": "float64",
    "fairshare_factor": "float64",
    "job_size_factor": "float64",
    "partition_factor": "float64",
    "qos_factor": "float64",
    "pending_resources": "Int64",
    "pending_limits": "Int64",
    "pending_priority": "Int64",
    "started_by": str,
}

#: Column types of the resource columns ``jobs.csv`` adds on a machine with resources besides
#: processors (``resources=``, or a slurm.conf's nodes with ``slurm_conf=``): what the job asked
#: for of each, named as the machine names it (``mem`` in MiB, ``gres/gpu`` in GPUs; other
#: kinds, such as licences, are whole numbers too and read as such).
RESOURCE_JOB_DTYPES: Dict[str, Any] = {
    "mem": "int64",
    "gres/gpu": "int64",
}

#: Column types of ``nodes.csv`` (machines of node types only: one row per job and node it
#: held, in submission order): the job's id (as ``jobs.csv``'s), the node's name, and the CPUs,
#: memory (MiB; 0 where memory is not scheduled) and GPUs the job held there.
NODE_DTYPES: Dict[str, Any] = {
    "job_id": "int64",
    "node": str,
    "cpus": "int64",
    "memory_mib": "int64",
    "gpus": "int64",
}

#: Column types of ``outages.csv`` (runs with outages or node failures only: one row per period
#: processors were out of service, by start): the outage's name (``failure`` for a node
#: failure), its kind (``maintenance``, ``reservation``, ``drain``, ``down`` or ``failure``),
#: its start and end (seconds, on the clock of ``jobs.csv``'s ``submit``), the processors
#: it took, and on a machine of node types the node a failure took (missing elsewhere).
OUTAGE_DTYPES: Dict[str, Any] = {
    "name": str,
    "kind": str,
    "from": "int64",
    "to": "int64",
    "processors": "int64",
    "node": str,
}

#: Column types of ``requests.csv``, the side table ``sitesim convert`` writes beside
#: ``trace.swf``: per job, the memory (MiB, whole job) and GPUs it asked for, its node count (0:
#: unknown), GPU type and constraint (missing: none), whether it asked for whole nodes (0 or 1)
#: and its partition's name.
REQUEST_DTYPES: Dict[str, Any] = {
    "job_id": "int64",
    "mem": "int64",
    "gres/gpu": "int64",
    "nodes": "int64",
    "gpu_type": str,
    "features": str,
    "exclusive": "int64",
    "partition": str,
}

#: Column types of ``shares.csv`` (the Slurm model's association tree, sampled: ``sshare -l``'s
#: columns; ``user`` is missing for an account, ``level_fs`` and ``fairshare`` where sshare
#: prints none).
SHARE_DTYPES: Dict[str, Any] = {
    "time": "int64",
    "account": str,
    "user": str,
    "raw_shares": str,
    "norm_shares": "float64",
    "raw_usage": "float64",
    "norm_usage": "float64",
    "effective_usage": "float64",
    "level_fs": "float64",
    "fairshare": "float64",
}

#: Column types of ``sessions.csv`` (``ended_by``: abort, cycle or end_of_run).
SESSION_DTYPES: Dict[str, Any] = {
    "user": "int64",
    "group": str,
    "session": "int64",
    "jobs": "int64",
    "start": "int64",
    "end": "int64",
    "ended_by": str,
}

#: Column types of ``batches.csv`` (``continue_probability`` is NaN where no trial was made;
#: ``decision``: continue, break, cycle or end).
BATCH_DTYPES: Dict[str, Any] = {
    "user": "int64",
    "group": str,
    "session": "int64",
    "batch": "int64",
    "jobs": "int64",
    "job_id": "int64",
    "end": "int64",
    "wait": "int64",
    "runtime": "int64",
    "response": "int64",
    "continue_probability": "float64",
    "decision": str,
}


def _suggesting(function):
    """``function``, whose unknown keyword arguments raise a TypeError naming the closest
    keyword it takes, as the command line's "a similar argument exists" does for its flags."""
    parameters = inspect.signature(function).parameters.values()
    names = [p.name for p in parameters if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)]

    @functools.wraps(function)
    def call(*args, **kwargs):
        for key in kwargs:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f"; did you mean {close[0]!r}?" if close else ""
                raise TypeError(
                    f"{function.__name__}() got an unexpected keyword argument {key!r}{hint}"
                )
        return function(*args, **kwargs)

    return call


def _frame(data: Union[bytes, PathLike], dtypes: Dict[str, Any]) -> pd.DataFrame:
    source = io.BytesIO(data) if isinstance(data, bytes) else data
    return pd.read_csv(source, dtype=dtypes)


def read_jobs(path: PathLike) -> pd.DataFrame:
    """``jobs.csv`` written by the command line, with the documented column types."""
    return _frame(path, {**JOB_DTYPES, **SLURM_JOB_DTYPES, **RESOURCE_JOB_DTYPES})


def read_nodes(path: PathLike) -> pd.DataFrame:
    """``nodes.csv`` written by the command line (columns :data:`NODE_DTYPES`)."""
    return _frame(path, NODE_DTYPES)


def read_outages(path: PathLike) -> pd.DataFrame:
    """``outages.csv`` written by the command line (columns :data:`OUTAGE_DTYPES`)."""
    return _frame(path, OUTAGE_DTYPES)


def read_requests(path: PathLike) -> pd.DataFrame:
    """``requests.csv``, the side table ``sitesim convert`` writes beside ``trace.swf``
    (columns :data:`REQUEST_DTYPES`): join it with :func:`read_swf`'s ``job_number``."""
    return _frame(path, REQUEST_DTYPES)


def read_sessions(path: PathLike) -> pd.DataFrame:
    """``sessions.csv`` written by the command line, with the documented column types."""
    return _frame(path, SESSION_DTYPES)


def read_batches(path: PathLike) -> pd.DataFrame:
    """``batches.csv`` written by the command line, with the documented column types."""
    return _frame(path, BATCH_DTYPES)


#: The SWF fields as :func:`read_swf` names its columns, in the format's order (field 1 first).
SWF_COLUMNS = [
    "job_number",
    "submit_time",
    "wait_time",
    "run_time",
    "allocated_processors",
    "average_cpu_time",
    "used_memory",
    "requested_processors",
    "requested_time",
    "requested_memory",
    "status",
    "user_id",
    "group_id",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
]

#: The SWF fields that may hold fractions (6, 7 and 10); the others are whole numbers.
_SWF_FRACTIONAL = ["average_cpu_time", "used_memory", "requested_memory"]


def read_swf(path: PathLike) -> pd.DataFrame:
    """An SWF trace (plain or ``.gz``) as a DataFrame: one row per job line, the 18 fields as
    columns (:data:`SWF_COLUMNS`; times in seconds, -1 for unknown, as in the format), read by
    the same reader as ``sitesim replay`` (so a bad line raises ``ValueError`` naming file and
    line). ``df.attrs["header"]`` holds the header's ``; Key: value`` fields (first occurrence of
    a key wins) and ``df.attrs["comments"]`` the other comment lines.

    >>> df = sitesim.read_swf("../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz")
    >>> df.attrs["header"]["MaxProcs"], len(df)
    """
    fields, comments, ints, floats = _sitesim.read_swf(os.fspath(path))
    whole = [c for c in SWF_COLUMNS if c not in _SWF_FRACTIONAL]
    columns: Dict[str, Any] = {}
    for name, values in zip(whole, ints):
        columns[name] = pd.array(values, dtype="int64")
    for name, values in zip(_SWF_FRACTIONAL, floats):
        columns[name] = pd.array(values, dtype="float64")
    frame = pd.DataFrame({name: columns[name] for name in SWF_COLUMNS})
    header: Dict[str, str] = {}
    for key, value in fields:
        header.setdefault(key, value)
    frame.attrs["header"] = header
    frame.attrs["comments"] = list(comments)
    return frame


#: Column types of :func:`read_sacct`'s DataFrame (times as UTC timestamps; durations in
#: seconds; a missing value as NA).
SACCT_DTYPES: Dict[str, Any] = {
    "job_id": "int64",
    "array_job": "Int64",
    "array_task": "Int64",
    "user": str,
    "account": str,
    "partition": str,
    "qos": str,
    "submit": "datetime64[s, UTC]",
    "eligible": "datetime64[s, UTC]",
    "start": "datetime64[s, UTC]",
    "end": "datetime64[s, UTC]",
    "elapsed": "Int64",
    "time_limit": "Int64",
    "cpus": "int64",
    "nodes": "int64",
    "req_cpus": "int64",
    "req_nodes": "int64",
    "memory_per_cpu": "float64",
    "gpus": "int64",
    "gpu_type": str,
    "state": str,
    "restarts": "int64",
    "priority": "Int64",
    "reason": str,
    "flags": str,
    "dependency": "Int64",
    "line": "int64",
}


@_suggesting
def read_sacct(
    path: PathLike,
    *,
    tz: Optional[str] = None,
    wait_from: Optional[str] = None,
    requeued: Optional[str] = None,
    since: Optional[str] = None,
    until: Optional[str] = None,
) -> pd.DataFrame:
    """A Slurm accounting dump (``sacct --parsable2``, plain or gzip) as a DataFrame: one row
    per job as :func:`replay` reads it (job steps, grouped array ranges, jobs not ended and
    earlier runs of requeued jobs left out; heterogeneous components merged; times placed by
    ``tz``), columns :data:`SACCT_DTYPES` (names as in the dump, ``submit`` to ``end`` as UTC
    timestamps, ``elapsed`` and ``time_limit`` in seconds, ``memory_per_cpu`` in KB).
    ``df.attrs["report"]`` lists what was dropped or altered: (reason, action, count, what).
    Errors name file, line and column, as the command line's.
    """
    raw = _sitesim.read_sacct(
        os.fspath(path),
        **_options(dict(tz=tz, wait_from=wait_from, requeued=requeued, since=since, until=until)),
    )
    return _log_frame(raw)


def read_trace(
    path: PathLike,
    format: Optional[str] = None,
    *,
    tz: Optional[str] = None,
    since: Optional[str] = None,
    until: Optional[str] = None,
) -> pd.DataFrame:
    """A GPU-era public trace (``format``: ``helios``, ``philly``, ``alibaba-pai``, ``acme``,
    ``supercloud``; or ``sacct``; ``None``: told from the header row, where only one format has
    it) as a DataFrame: one row per job as :func:`replay` reads it, columns
    :data:`SACCT_DTYPES` (``gpus`` and ``gpu_type`` as the trace gives them, ``memory_per_cpu``
    in KB). Times are read in the format's own zone unless ``tz`` names another;
    ``df.attrs["report"]`` lists what was dropped or altered (reason, action, count, what), as
    for :func:`read_sacct`. The docs' "GPU-era traces" page has each format's mapping. Errors
    name file, line and column, as the command line's.
    """
    raw = _sitesim.read_trace(
        os.fspath(path),
        **_options(dict(format=format, tz=tz, since=since, until=until)),
    )
    return _log_frame(raw)


def _log_frame(raw: Dict[str, Any]) -> pd.DataFrame:
    """The DataFrame of a log read by the native module (:func:`read_sacct`, :func:`read_trace`)."""
    columns = raw["columns"]


    def column(name: str, kind: Any) -> Any:
        values = columns[name]
        if kind is str:
            return pd.Series(values, dtype=str)
        if kind.startswith("datetime"):
            seconds = pd.Series(values, dtype="Int64")
            return pd.to_datetime(seconds, unit="s", utc=True).dt.as_unit("s")
        return pd.Series(values, dtype=kind)

    frame = pd.DataFrame({name: column(name, kind) for name, kind in SACCT_DTYPES.items()})
    frame.attrs["report"] = [tuple(r) for r in raw["report"]]
    frame.attrs["time_zone"] = raw["time_zone"]
    return frame


class Result:
    """A finished run or replay: what ``sitesim run/replay --out DIR`` writes into DIR.

    ``summary`` is ``summary.json`` as a dict; ``jobs``, ``sessions``, ``batches``, ``shares``
    and ``nodes`` are the CSV files as DataFrames (read when first used; ``sessions``,
    ``batches``, ``shares`` and ``nodes`` are None where the command line writes no such file:
    ``batches`` in a replay, ``sessions`` in a replay without feedback, ``shares`` outside the
    Slurm model, ``nodes`` on a machine that is not of node types). On a machine of node
    types, ``summary["nodes"]`` holds the utilisation by resource and GPU type, the waits by
    partition and GPU type and the jobs held for good. ``csv`` holds the files' bytes; :meth:`write` writes them all.
    """

    def __init__(self, files: Dict[str, Any]):
        self._raw = files
        #: Where the files are, by file name, when the run wrote them into ``out``.
        self.paths: Dict[str, str] = {k: os.fspath(v) for k, v in files["paths"].items()}
        self._files: Dict[str, bytes] = dict(files["files"])
        #: ``summary.json``'s text, exactly as the command line writes it (less the final newline).
        self.summary_json: str = files["summary_json"]
        #: The scheduler's label (``easy``, ``creasy-6000``, ...); with a Python order, the
        #: label of the scheduler whose backfilling rule it runs under.
        self.scheduler: str = files["scheduler"]
        #: The site's origin (runs) or the replay's one-line description.
        self.title: str = files["title"]
        #: How many times the Python order was called (None without one).
        self.order_calls: Optional[int] = files["order_calls"]

    @property
    def files(self) -> Dict[str, bytes]:
        """Every file the command line's ``--out`` writes for this run, by file name, as bytes
        (every registered output format that applies, and those asked for); read from
        ``paths`` when the run wrote them into a directory."""
        for name, path in self.paths.items():
            if name not in self._files:
                with open(path, "rb") as f:
                    self._files[name] = f.read()
        return self._files

    @cached_property
    def swf(self) -> Optional[str]:
        """The generated workload as SWF text (``run(..., swf=...)`` only)."""
        data = self.files.get("workload.swf")
        return data.decode() if data is not None else None

    def _source(self, name: str) -> Any:
        """The file ``name``'s path when it was written into a directory, else its bytes."""
        if name in self.paths:
            return self.paths[name]
        return self._files.get(name)

    @cached_property
    def summary(self) -> Dict[str, Any]:
        """``summary.json`` as a dict."""
        return json.loads(self.summary_json)

    @property
    def csv(self) -> Dict[str, bytes]:
        """The CSV files' bytes by file name, as the command line writes them."""
        return {name: data for name, data in self.files.items() if name.endswith(".csv")}

    @cached_property
    def jobs(self) -> pd.DataFrame:
        """``jobs.csv``: one row per job (columns :data:`JOB_DTYPES`, under the Slurm model
        :data:`SLURM_JOB_DTYPES`, and on a machine with resources besides processors its
        resource columns, :data:`RESOURCE_JOB_DTYPES`)."""
        return _frame(
            self._source("jobs.csv"), {**JOB_DTYPES, **SLURM_JOB_DTYPES, **RESOURCE_JOB_DTYPES}
        )

    @cached_property
    def sessions(self) -> Optional[pd.DataFrame]:
        """``sessions.csv``: one row per session (columns :data:`SESSION_DTYPES`), or None."""
        data = self._source("sessions.csv")
        return None if data is None else _frame(data, SESSION_DTYPES)

    @cached_property
    def batches(self) -> Optional[pd.DataFrame]:
        """``batches.csv``: one row per completed batch (columns :data:`BATCH_DTYPES`), or None."""
        data = self._source("batches.csv")
        return None if data is None else _frame(data, BATCH_DTYPES)

    @cached_property
    def shares(self) -> Optional[pd.DataFrame]:
        """``shares.csv``: the Slurm model's association tree at sampled priority calculations
        (columns :data:`SHARE_DTYPES`), or None under other schedulers."""
        data = self._source("shares.csv")
        return None if data is None else _frame(data, SHARE_DTYPES)

    @cached_property
    def nodes(self) -> Optional[pd.DataFrame]:
        """``nodes.csv``: what each job held on each of its nodes (columns :data:`NODE_DTYPES`),
        or None on a machine that is not of node types."""
        data = self._source("nodes.csv")
        return None if data is None else _frame(data, NODE_DTYPES)

    @cached_property
    def outages(self) -> Optional[pd.DataFrame]:
        """``outages.csv``: every period processors were out of service, outages and node
        failures, by start (columns :data:`OUTAGE_DTYPES`), or None for a run without them."""
        data = self._source("outages.csv")
        return None if data is None else _frame(data, OUTAGE_DTYPES)

    def write(self, out: PathLike) -> List[str]:
        """Writes every file this result holds (what the command line's ``--out`` writes) into
        ``out`` (created if missing); returns their paths."""
        os.makedirs(out, exist_ok=True)
        written = []
        for name, data in self.files.items():
            path = os.path.join(out, name)
            with open(path, "wb") as f:
                f.write(data)
            written.append(path)
        return written

    def __repr__(self) -> str:
        return f"<sitesim.Result {self.scheduler}: {self.title}>"


def _is_text(config: Any) -> bool:
    """A str holding TOML (a newline, or a table header) rather than a path."""
    return isinstance(config, str) and ("\n" in config or config.lstrip().startswith("["))


def _options(given: Dict[str, Any]) -> Dict[str, Any]:
    """The keyword arguments given (not None), path-like values as text."""
    out = {}
    for key, value in given.items():
        if value is None:
            continue
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        out[key] = value
    return out


@_suggesting
def run(
    config: Optional[PathLike] = None,
    *,
    users: Optional[int] = None,
    weeks: Optional[int] = None,
    scheduler: Optional[str] = None,
    order: Union[str, Order, None] = None,
    backfill: Optional[str] = None,
    predictor: Optional[str] = None,
    alpha: Optional[float] = None,
    dynp_lower: Optional[int] = None,
    dynp_upper: Optional[int] = None,
    quality: Optional[str] = None,
    slurm_conf: Optional[PathLike] = None,
    seed: Optional[int] = None,
    processors: Optional[int] = None,
    node_processors: Optional[int] = None,
    selection: Optional[str] = None,
    node_bandwidth: Optional[float] = None,
    estimates: Optional[str] = None,
    estimate_f: Optional[float] = None,
    estimate_phi: Optional[float] = None,
    warmup_days: Optional[int] = None,
    job_sizes: Optional[str] = None,
    power: Optional[PathLike] = None,
    out: Optional[PathLike] = None,
    swf: Union[bool, PathLike, None] = None,
    fairness: bool = False,
    headroom: bool = False,
    outage_costs: bool = False,
    force: bool = False,
    output_limit: Optional[float] = None,
    batsim_jobs: bool = False,
    progress: Optional[Callable[[str, int, int], None]] = None,
) -> Result:
    """A site-level run, as ``sitesim run``: simulated users in a closed loop with the cluster.

    ``config`` is a population file (a path) or its TOML text; default: the paper's site
    (``configs/paper.toml``, embedded). The keyword arguments are ``sitesim run``'s options
    (``users=250`` is ``--users 250``; :func:`options` lists them with their help), checked as
    the command line checks them; values not given come from the file. ``order`` is a queue
    order's name or a Python priority function ``order(job, now) -> float``. ``swf=True``
    returns the generated workload (``Result.swf``); a path also writes it there. With
    ``out``, the files are written into that directory as the run goes (its memory then
    follows the jobs in flight) and the DataFrames are read from them. ``progress(what, now,
    end)`` is called every few thousand scheduling passes (simulated seconds ``now`` of
    ``end``); Ctrl-C stops the run.

    Returns a :class:`Result` whose ``summary``, ``jobs``, ``sessions`` and ``batches`` equal
    ``summary.json``, ``jobs.csv``, ``sessions.csv`` and ``batches.csv`` of
    ``sitesim run ... --out DIR``.
    """
    given = dict(locals())
    given.pop("config")
    path, text = (None, config) if _is_text(config) else (config, None)
    files = _sitesim.run(
        None if path is None else os.fspath(path), text, **_options(given)
    )
    return Result(files)


@_suggesting
def calibrate(
    config: Optional[PathLike] = None,
    *,
    utilization: Optional[float] = None,
    mean_wait: Optional[float] = None,
    seeds: int = 5,
    users: Optional[int] = None,
    weeks: Optional[int] = None,
    scheduler: Optional[str] = None,
    seed: Optional[int] = None,
    processors: Optional[int] = None,
    job_sizes: Optional[str] = None,
    **site_options: Any,
) -> Dict[str, Any]:
    """How many simulated users stand for a site, as ``sitesim calibrate``: the number at
    which its runs reach ``utilization`` (a share, 0.7 for 70 %) or ``mean_wait`` (seconds),
    each number of users run with ``seeds`` seeds (the site's seed and the next ones) and
    judged by their mean. A site of several groups keeps its groups' proportions.

    ``config`` is a population file (a path) or its TOML text (default: the paper's site);
    ``users`` is where the search starts; the other keyword arguments are the site's options
    (``sitesim validate``'s; :func:`options` lists them).

    Returns a dict: ``users`` (picked), ``value`` (its mean), ``measure`` and ``target``,
    ``group_users`` (per group), ``trials`` (every number tried: ``users``, ``value`` and the
    seeds' ``range``) and ``seeds``. A target the site cannot reach (utilisation above the
    closed loop's ceiling) raises ``ValueError`` saying the highest value measured.
    """
    given = dict(locals())
    for key in ("config", "utilization", "mean_wait", "seeds", "site_options"):
        given.pop(key)
    given.update(site_options)
    path, text = (None, config) if _is_text(config) else (config, None)
    found = _sitesim.calibrate(
        None if path is None else os.fspath(path),
        text,
        utilization,
        mean_wait,
        seeds,
        **_options(given),
    )
    return json.loads(found)


@_suggesting
def replay(
    trace: PathLike,
    *,
    format: Optional[str] = None,
    tz: Optional[str] = None,
    site_tz: Optional[str] = None,
    wait_from: Optional[str] = None,
    requeued: Optional[str] = None,
    processor_unit: Optional[str] = None,
    since: Optional[str] = None,
    until: Optional[str] = None,
    scheduler: Optional[str] = None,
    order: Union[str, Order, None] = None,
    backfill: Optional[str] = None,
    predictor: Optional[str] = None,
    alpha: Optional[float] = None,
    dynp_lower: Optional[int] = None,
    dynp_upper: Optional[int] = None,
    quality: Optional[str] = None,
    slurm_conf: Optional[PathLike] = None,
    assoc: Optional[PathLike] = None,
    qos: Optional[PathLike] = None,
    power: Optional[PathLike] = None,
    outages: Optional[PathLike] = None,
    outage_costs: bool = False,
    events: Optional[PathLike] = None,
    reservations: Optional[PathLike] = None,
    load_factor: Optional[float] = None,
    fairness: bool = False,
    feedback: bool = False,
    feedback_abandon: bool = False,
    shake: bool = False,
    processors: Optional[int] = None,
    estimates: Optional[str] = None,
    estimate_f: Optional[float] = None,
    estimate_phi: Optional[float] = None,
    estimate_max: Optional[int] = None,
    estimate_max_share: Optional[float] = None,
    estimate_modes: Optional[Sequence[Tuple[int, float]]] = None,
    seed: Optional[int] = None,
    node_processors: Optional[int] = None,
    selection: Optional[str] = None,
    resources: Optional[str] = None,
    bandwidth_mix: Optional[str] = None,
    bandwidth_demands: Optional[str] = None,
    node_bandwidth: Optional[float] = None,
    node_penalty: Optional[str] = None,
    placement: Optional[str] = None,
    node_offset: Optional[int] = None,
    first_jobs: Optional[int] = None,
    warmup: Optional[str] = None,
    out: Optional[PathLike] = None,
    force: bool = False,
    output_limit: Optional[float] = None,
    batsim_jobs: bool = False,
    progress: Optional[Callable[[str, int, int], None]] = None,
) -> Result:
    """A replay of an SWF trace or a Slurm accounting dump (``sacct --parsable2``, plain or
    gzip-compressed), as ``sitesim replay TRACE``. A sacct dump is read as ``tz`` (its zone,
    default UTC), ``wait_from``, ``requeued``, ``processor_unit``, ``since`` and ``until`` say,
    and replayed exactly as the SWF ``sitesim convert`` writes from it; ``summary["conversion"]``
    says what reading it dropped or altered.

    The keyword arguments are ``sitesim replay``'s options (``load_factor=0.8`` is
    ``--load-factor 0.8``; ``estimate_modes=[(7200, 0.27)]`` is ``--estimate-mode
    7200:0.27``; :func:`options` lists them with their help and defaults), checked as the
    command line checks them; those not given take the command's defaults. ``order`` is a
    queue order's name or a Python priority function ``order(job, now) -> float`` (the
    scheduler's backfilling rule stays: ``scheduler="easy"``: EASY's reservation and
    backfilling). With ``out``, the files are written into that directory. ``progress(what,
    now, end)`` is called every few thousand scheduling passes; Ctrl-C stops the replay.

    Returns a :class:`Result`: ``summary`` and ``jobs`` equal ``summary.json`` and ``jobs.csv``
    of ``sitesim replay TRACE ... --out DIR``; ``sessions`` with ``feedback=True``.
    """
    given = dict(locals())
    given.pop("trace")
    files = _sitesim.replay(os.fspath(trace), **_options(given))
    return Result(files)


def options(command: str) -> pd.DataFrame:
    """The options of ``run`` or ``replay`` (their keywords here and their flags on the
    command line, declared once in sitesim's option table): key, kind, help, default, the
    names a choice takes and the range of a whole number."""
    rows = _sitesim.option_table(command)
    return pd.DataFrame(rows, columns=["key", "kind", "help", "default", "choices", "range"])


@_suggesting
def sweep(
    sweep: PathLike,
    *,
    jobs: Optional[int] = None,
    out: Optional[PathLike] = None,
    progress: Optional[Callable[[int, int], None]] = None,
    per_seed: bool = False,
) -> pd.DataFrame:
    """A sweep, as ``sitesim sweep SWEEP.toml`` run here: every configuration and seed of the
    grid, ``jobs`` runs at a time (default: one per processor), longest first. ``sweep`` is a
    sweep file (a path) or its TOML text (a relative ``site`` or trace path then starts in the
    working directory). A sweep file with a ``[replay]`` table replays traces instead of
    running sites (every run is ``sitesim replay`` with the table's options; axes such as
    ``trace``, ``scheduler`` or ``load_factor``). With ``out``, the results go into that
    results directory as ``sitesim sweep --out`` writes them (a file per run, so calling again
    resumes; each run's ``outputs``; results.csv, and runs.csv with ``per_seed``); without,
    they stay in memory.
    ``progress(done, total)`` is called as runs finish (with tqdm:
    ``bar = tqdm.tqdm(); progress=lambda done, total: (bar.reset(total) if bar.total != total
    else None, bar.update(done - bar.n))``). Ctrl-C stops it within a fraction of a second.

    Returns ``results.csv`` as a DataFrame: the axes' labels, then per measure the mean, 95 %
    interval, paired differences against the baseline and quantiles over the seeds. With
    ``per_seed=True``, the per-seed table instead (``runs.csv``: one row per run and measure,
    the axes by name, ``seed``, ``metric``, ``unit``, ``value``: what seaborn takes).
    """
    directory = None if out is None else os.fspath(out)
    path, text = (None, sweep) if _is_text(sweep) else (os.fspath(sweep), None)
    results, runs = _sitesim.sweep(
        path, text, jobs=jobs, out=directory, progress=progress, per_seed=per_seed
    )
    return pd.read_csv(io.StringIO(runs if per_seed and runs is not None else results))


class FitResult:
    """The user models fitted from traces: the files ``sitesim fit --out DIR`` writes."""

    def __init__(self, raw: Dict[str, Any]):
        #: Every file of the models directory: path inside it -> text.
        self.files: Dict[str, str] = dict(raw["files"])
        #: Warnings (each names its trace).
        self.warnings: List[str] = list(raw["warnings"])
        #: ``summary.toml`` as a dict: the scalars per trace and combined.
        self.summary: Dict[str, Any] = json.loads(raw["summary_json"])

    def write(self, out: PathLike) -> List[str]:
        """Writes the models directory into ``out``; returns the paths written."""
        written = []
        for name, text in self.files.items():
            path = os.path.join(out, name)
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            written.append(path)
        return written


#: What marks a folder as holding a fit's models (as ``sitesim fit`` checks it).
_MODEL_FILES = ("summary.toml", "PROVENANCE.md", "combined")


@_suggesting
def fit(
    traces: Union[PathLike, Sequence[PathLike]],
    *,
    out: Optional[PathLike] = None,
    session_threshold: int = 1200,
    max_break: int = 28800,
    weighting: str = "traces",
    format: Optional[str] = None,
    tz: Optional[str] = None,
    site_tz: Optional[str] = None,
    wait_from: Optional[str] = None,
    requeued: Optional[str] = None,
    processor_unit: Optional[str] = None,
    since: Optional[str] = None,
    until: Optional[str] = None,
    force: bool = False,
) -> FitResult:
    """Fits the user models of SWF traces or Slurm accounting dumps, as ``sitesim fit
    TRACE...``: think times, sessions, batches, sizes, runtimes, estimates and the daily and
    weekly cycles (in the site's zone ``site_tz``, else a sacct dump's ``tz`` or the SWF
    header's). With ``out``, writes the models directory there (as ``--out``); a directory
    that already holds models is refused unless ``force``. ``weighting`` is ``traces`` or
    ``jobs``; ``format`` to ``until`` are :func:`replay`'s.
    """
    if out is not None and not force:
        held = [n for n in _MODEL_FILES if os.path.exists(os.path.join(out, n))]
        if held:
            raise FileExistsError(
                f"{os.fspath(out)} already holds fitted models ({', '.join(held)}); "
                "give force=True to replace them, or another out"
            )
    input_options = _options(
        dict(
            format=format,
            tz=tz,
            site_tz=site_tz,
            wait_from=wait_from,
            requeued=requeued,
            processor_unit=processor_unit,
            since=since,
            until=until,
        )
    )
    for name, value in (("session_threshold", session_threshold), ("max_break", max_break)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be a whole number of seconds, got {value!r}")
        if not -(2**63) <= value < 2**63:
            raise ValueError(f"{name}={value}: too large a number of seconds")
    if isinstance(traces, (str, bytes, os.PathLike)):
        traces = [traces]  # one trace, not the characters of its name
    paths = [os.fsdecode(os.fspath(t)) for t in traces]
    words = ["fit"] + [shlex.quote(p) for p in paths]
    if out is not None:
        # the recorded command regenerates the models in place, as the CLI records it
        words += ["--out", shlex.quote(os.fspath(out)), "--force"]
    if session_threshold != 1200:
        words.append(f"--session-threshold {session_threshold}")
    if max_break != 28800:
        words.append(f"--max-break {max_break}")
    if weighting == "jobs":
        words.append("--weighting jobs")
    for key, value in input_options.items():
        words.append(f"--{key.replace('_', '-')} {shlex.quote(str(value))}")
    result = FitResult(
        _sitesim.fit(
            paths,
            session_threshold=session_threshold,
            max_break=max_break,
            weighting=weighting,
            command=" ".join(words),
            **input_options,
        )
    )
    if out is not None:
        result.write(out)
    return result


@_suggesting
def whatif(
    sacct: PathLike,
    slurm_conf: Sequence[PathLike],
    *,
    out: PathLike = "whatif.html",
    assoc: Optional[PathLike] = None,
    qos: Optional[PathLike] = None,
    seeds: int = 10,
    weeks: int = 4,
    users: Optional[int] = None,
    processors: Optional[int] = None,
    force: bool = False,
    format: Optional[str] = None,
    tz: Optional[str] = None,
    site_tz: Optional[str] = None,
    wait_from: Optional[str] = None,
    requeued: Optional[str] = None,
    processor_unit: Optional[str] = None,
    since: Optional[str] = None,
    until: Optional[str] = None,
) -> List[str]:
    """The what-if report, as ``sitesim whatif --sacct SACCT --slurm-conf CURRENT --slurm-conf
    PROPOSED -o OUT``: the dump replayed under both slurm.conf files (``slurm_conf``: the
    current one, then the proposed one) and simulated users fitted from it run under both, for
    ``seeds`` paired seeds (closed loop, ``weeks`` long, ``users`` users: default the dump's
    distinct users; ``processors`` the machine's size where the slurm.conf files have no
    node lines, default the dump's peak), written to ``out`` as one self-contained HTML page (an existing file is
    refused unless ``force``). ``assoc`` is the association tree (``sacctmgr --parsable2 show
    assoc``), ``qos`` the QOS table (``sacctmgr --parsable2 show qos``); ``format`` to
    ``until`` are :func:`replay`'s. Returns the verdict's sentences.
    """
    if isinstance(slurm_conf, (str, bytes, os.PathLike)):
        raise ValueError(
            "slurm_conf: give two files, the current slurm.conf and the proposed one, "
            "e.g. slurm_conf=['slurm.conf', 'proposed.conf']"
        )
    for name, value in (
        ("seeds", seeds),
        ("weeks", weeks),
        ("users", users),
        ("processors", processors),
    ):
        if value is None and name in ("users", "processors"):
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name}={value!r}: must be a whole number of at least 1")
    input_options = _options(
        dict(
            format=format,
            tz=tz,
            site_tz=site_tz,
            wait_from=wait_from,
            requeued=requeued,
            processor_unit=processor_unit,
            since=since,
            until=until,
        )
    )
    return list(
        _sitesim.whatif(
            os.fspath(sacct),
            [os.fspath(c) for c in slurm_conf],
            out=os.fspath(out),
            assoc=None if assoc is None else os.fspath(assoc),
            qos=None if qos is None else os.fspath(qos),
            seeds=seeds,
            weeks=weeks,
            users=users,
            processors=processors,
            force=force,
            **input_options,
        )
    )


def schedulers() -> Dict[str, str]:
    """The scheduling policies (``scheduler=`` names) and what each does."""
    return dict(_sitesim.schedulers())
