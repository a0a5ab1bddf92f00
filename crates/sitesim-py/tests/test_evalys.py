"""The Batsim-style jobs file (``--batsim-jobs``) against evalys itself: ``JobSet.from_csv``
loads the file of a replay and of a site-level run, sees every job with its processors, and
draws a Gantt chart of it (matplotlib's Agg backend, no display).

Skipped when evalys is not installed (``pip install ./crates/sitesim-py[test]`` installs it).
"""

from pathlib import Path

import pytest

evalys_jobset = pytest.importorskip("evalys.jobset")
matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from _cli import KTH, cli  # noqa: E402



def load_and_draw(out: Path, machine: int):
    js = evalys_jobset.JobSet.from_csv(str(out / "batsim_jobs.csv"))
    jobs = (out / "jobs.csv").read_text().count("\n") - 1
    assert len(js.df) == jobs
    # every job's interval set has its size, inside the machine
    assert (js.df["proc_alloc"] == js.df["requested_number_of_resources"]).all()
    assert js.res_bounds.inf >= 0 and js.res_bounds.sup < machine
    assert (js.df["finish_time"] - js.df["starting_time"] == js.df["execution_time"]).all()
    js.gantt()
    picture = out / "gantt.png"
    plt.savefig(picture)
    plt.close("all")
    assert picture.stat().st_size > 0
    return js


def test_evalys_loads_a_replay(tmp_path):
    if not KTH.exists():
        pytest.skip(f"no trace {KTH}")
    out = tmp_path / "replay"
    cli("replay", KTH, "--first-jobs", "1500", "--out", out, "--batsim-jobs")
    js = load_and_draw(out, 100)
    assert js.MaxProcs <= 100
    # utilisation never exceeds the machine
    assert js.utilisation.max().iloc[0] <= 100


def test_evalys_loads_a_run(tmp_path):
    out = tmp_path / "run"
    cli("run", "--users", "20", "--weeks", "1", "--processors", "64", "--job-sizes", "clip",
        "--out", out, "--batsim-jobs")
    load_and_draw(out, 64)
