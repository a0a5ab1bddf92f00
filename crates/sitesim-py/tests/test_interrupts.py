"""A notebook's Ctrl-C stops a long run, replay or sweep within a second (KeyboardInterrupt);
progress callbacks; a NaN from a Python order is an error."""

import _thread
import math
import shutil
import threading
import time

import pytest

import sitesim

from _cli import KTH

# A run that takes far longer than the test waits: conservative backfilling of 1000 users.
LONG_RUN = dict(users=1000, weeks=26, scheduler="conservative")


def interrupt_after(seconds):
    """Sends Ctrl-C to the main thread after `seconds`, from another Python thread; returns
    the time it was sent (a list filled in then)."""
    sent = []

    def send():
        time.sleep(seconds)
        sent.append(time.monotonic())
        _thread.interrupt_main()

    threading.Thread(target=send, daemon=True).start()
    return sent


def test_ctrl_c_stops_a_run_within_a_second():
    sent = interrupt_after(1.0)
    with pytest.raises(KeyboardInterrupt):
        sitesim.run(**LONG_RUN)
    assert sent, "the run ended before it was interrupted"
    assert time.monotonic() - sent[0] < 1.0


SWEEP = """
seeds = { first = 1, count = 4 }
[[axes]]
name = "scheduler"
key = "scheduler"
values = [{ policy = "conservative" }]
[[axes]]
name = "users"
key = "groups.0.users"
values = [1000]
"""


def test_ctrl_c_stops_a_sweep_within_a_second(tmp_path):
    sent = interrupt_after(1.0)
    with pytest.raises(KeyboardInterrupt):
        sitesim.sweep(SWEEP, jobs=2, out=tmp_path / "out")
    assert sent
    assert time.monotonic() - sent[0] < 1.0
    # nothing half-written: no run finished in a second, so no result file
    assert not list((tmp_path / "out" / "runs").glob("*.json"))


def test_progress_callbacks_report_the_simulated_time_and_the_runs():
    ticks = []
    sitesim.run(users=50, weeks=2, progress=lambda what, now, end: ticks.append((what, now, end)))
    assert ticks and ticks[0][0] == "simulating" and ticks[0][1] == 0
    assert ticks[-1][2] == 2 * 7 * 86400
    done = []
    sweep = SWEEP.replace("1000", "20").replace("count = 4", "count = 2")
    sitesim.sweep(sweep, jobs=1, progress=lambda d, total: done.append((d, total)))
    assert done[-1] == (2, 2)
    with pytest.raises(ValueError, match="progress must be a callable"):
        sitesim.run(users=5, weeks=1, progress=3)


def test_an_exception_in_the_progress_callback_stops_the_run():
    def broken(what, now, end):
        if now > 0:
            raise RuntimeError("enough")

    with pytest.raises(RuntimeError, match="enough"):
        sitesim.run(**LONG_RUN, progress=broken)


def test_per_seed_table_is_long_and_tidy(tmp_path):
    sweep = SWEEP.replace("1000", "20").replace("count = 4", "count = 2")
    runs = sitesim.sweep(sweep, per_seed=True, out=tmp_path / "o")
    assert list(runs.columns) == ["scheduler", "users", "seed", "metric", "unit", "value"]
    assert set(runs["seed"]) == {1, 2}
    assert (tmp_path / "o" / "runs.csv").exists()
    # Without per_seed, the per-seed table is neither made nor written (127 rows a run).
    sitesim.sweep(sweep, out=tmp_path / "p")
    assert (tmp_path / "p" / "results.csv").exists()
    assert not (tmp_path / "p" / "runs.csv").exists()
    throughput = runs[runs.metric == "throughput_submitted_per_hour"]
    assert len(throughput) == 2 and throughput.value.notna().all()


@pytest.mark.skipif(not KTH.exists(), reason="needs the shared traces")
def test_a_nan_priority_is_an_error():
    with pytest.raises(ValueError, match="NaN"):
        sitesim.replay(KTH, first_jobs=500, order=lambda job, now: math.nan)


@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is missing")
@pytest.mark.parametrize("ending", ["main script ends", "ctrl-c"])
def test_the_interpreter_ends_cleanly_while_a_thread_replays_with_a_python_order(tmp_path, ending):
    # The interpreter used to abort (exit 134) when it ended, or Ctrl-C came, while another
    # thread ran a replay calling a Python order.
    import subprocess
    import sys

    script = tmp_path / "script.py"
    daemon = ending == "main script ends"
    script.write_text(
        "import os, signal, threading, time, sitesim\n"
        f"def go():\n    sitesim.replay({str(KTH)!r}, order=lambda job, now: float(job.submit))\n"
        f"threading.Thread(target=go, daemon={daemon}).start()\n"
        "time.sleep(0.5)\n"
        + ("print('main ends')\n" if daemon else "os.kill(os.getpid(), signal.SIGINT)\n")
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert "Fatal Python error" not in done.stderr, done.stderr
    if daemon:
        assert done.returncode == 0, done.stderr
        assert "main ends" in done.stdout
    else:
        # ended by the KeyboardInterrupt (Python then dies of SIGINT: -2), never aborted (-6)
        assert done.returncode in (1, 130, -2), (done.returncode, done.stderr)
        assert "KeyboardInterrupt" in done.stderr


@pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is missing")
@pytest.mark.skipif(shutil.which("gdb") is None, reason="needs gdb to watch the thread's exit")
def test_no_thread_is_made_to_exit_inside_a_simulation_while_the_interpreter_ends(tmp_path):
    # Issue 41: the interpreter still aborted ("FATAL: exception not rethrown") at exit or on
    # Ctrl-C while another thread replayed with a Python order. Python (before 3.14) ends a
    # thread that takes the GIL during finalization with pthread_exit, whose unwinding through
    # the extension's frames aborts the process when it gets there before the process ends:
    # a race, rarely lost on this machine, so the test watches for its cause instead. Under
    # gdb, a breakpoint on PyThread_exit_thread was hit on every run before the fix (from the
    # replay's progress tick); the simulating thread now parks instead, and the process ends.
    import subprocess
    import sys

    script = tmp_path / "script.py"
    script.write_text(
        "import threading, time, sitesim\n"
        "def go():\n"
        "    while True:\n"
        f"        sitesim.replay({str(KTH)!r}, first_jobs=500,\n"
        "                       order=lambda job, now: float(job.submit))\n"
        "threading.Thread(target=go, daemon=True).start()\n"
        "time.sleep(0.5)\n"
    )
    for _ in range(2):
        done = subprocess.run(
            ["gdb", "-batch", "-ex", "set breakpoint pending on",
             "-ex", "break PyThread_exit_thread", "-ex", "run", "-ex", "bt 12",
             "--args", sys.executable, str(script)],
            capture_output=True, text=True, timeout=300,
        )
        assert "exited normally" in done.stdout, done.stdout[-3000:] + done.stderr[-2000:]
        assert "hit Breakpoint 1" not in done.stdout, done.stdout[-3000:]
