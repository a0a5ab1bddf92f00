"""The Python package against the command line: the same runs give the same files, Python-written
queue orders give the built-in schedules, and errors carry the command line's messages.

The command line is ``$SITESIM_BIN`` or the checkout's ``target/{release,debug}/sitesim``; the
traces are ``../shared/traces`` beside the checkout (``$SITESIM_TRACES`` overrides).
"""

import json
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

import sitesim

from _cli import KTH, ROOT, cli  # noqa: E402



def cli_error(*args):
    """The message the command line prints for a failure (after ``error: ``)."""
    done = cli(*args, ok=False)
    assert done.returncode != 0
    text = done.stderr.rstrip("\n")
    assert text.startswith("error: "), done.stderr
    return text[len("error: "):]


def assert_same_files(result, out: Path, names):
    """The result's summary and DataFrames equal the files the command line wrote."""
    assert result.summary == json.loads((out / "summary.json").read_text())
    assert (result.summary_json + "\n") == (out / "summary.json").read_text()
    frames = {"jobs.csv": result.jobs, "sessions.csv": result.sessions, "batches.csv": result.batches}
    readers = {
        "jobs.csv": sitesim.read_jobs,
        "sessions.csv": sitesim.read_sessions,
        "batches.csv": sitesim.read_batches,
    }
    for name in names:
        path = out / name
        assert result.csv[name] == path.read_bytes(), name
        # Equal to the file as pandas reads it plainly, and with the documented types.
        pd.testing.assert_frame_equal(frames[name], pd.read_csv(path), check_dtype=False)
        pd.testing.assert_frame_equal(frames[name], readers[name](path))


needs_kth = pytest.mark.skipif(not KTH.exists(), reason=f"{KTH} is missing")


def test_run_equals_the_command_line(tmp_path):
    out = tmp_path / "cli"
    cli("run", "--users", 40, "--weeks", 2, "--seed", 3, "--scheduler", "creasy", "--out", out)
    result = sitesim.run(users=40, weeks=2, seed=3, scheduler="creasy")
    assert_same_files(result, out, ["jobs.csv", "sessions.csv", "batches.csv"])
    assert list(result.jobs.columns) == list(sitesim.JOB_DTYPES)
    assert list(result.sessions.columns) == list(sitesim.SESSION_DTYPES)
    assert list(result.batches.columns) == list(sitesim.BATCH_DTYPES)
    assert str(result.jobs["slowdown"].dtype) == "float64"
    assert str(result.jobs["wait"].dtype) == "int64"
    assert len(result.jobs) > 100


def test_run_with_headroom_fairness_and_swf_equals_the_command_line(tmp_path):
    out = tmp_path / "cli"
    args = ["--users", 15, "--weeks", 1, "--headroom", "--fairness"]
    cli("run", *args, "--out", out, "--swf", out / "workload.swf")
    result = sitesim.run(users=15, weeks=1, headroom=True, fairness=True, swf=True)
    assert_same_files(result, out, ["jobs.csv", "sessions.csv", "batches.csv"])
    assert "headroom" in result.summary["closed_loop"]
    assert result.swf == (out / "workload.swf").read_text()
    # Result.write leaves what --out leaves
    written = tmp_path / "py"
    result.write(written)
    for name in ["jobs.csv", "sessions.csv", "batches.csv", "summary.json"]:
        assert (written / name).read_bytes() == (out / name).read_bytes(), name


def test_a_slurm_run_gives_priorities_and_shares_as_the_command_line(tmp_path):
    out = tmp_path / "cli"
    cli("run", "--users", 20, "--weeks", 1, "--scheduler", "slurm-site", "--out", out)
    result = sitesim.run(users=20, weeks=1, scheduler="slurm-site")
    assert_same_files(result, out, ["jobs.csv", "sessions.csv", "batches.csv"])
    assert result.csv["shares.csv"] == (out / "shares.csv").read_bytes()
    columns = list(sitesim.JOB_DTYPES) + list(sitesim.SLURM_JOB_DTYPES)
    assert list(result.jobs.columns) == columns
    assert str(result.jobs["priority"].dtype) == "Int64"
    assert (result.jobs["partition"] == "default").all()
    shares = result.shares
    assert list(shares.columns) == list(sitesim.SHARE_DTYPES)
    assert shares["fairshare"].dropna().between(0, 1).all()
    assert 0 < result.summary["slurm"]["fairness_index"] <= 1
    # other schedulers: no such columns, no shares
    easy = sitesim.run(users=20, weeks=1, scheduler="easy")
    assert easy.shares is None
    assert list(easy.jobs.columns) == list(sitesim.JOB_DTYPES)


def test_outages_and_their_costs_equal_the_command_line(tmp_path):
    site = tmp_path / "site.toml"
    site.write_text(
        '[site]\nprocessors = 3968\nstart = "2024-01-01T00:00:00"\n\n'
        "[run]\nweeks = 2\nseed = 3\n\n"
        '[[groups]]\nname = "users"\nusers = 40\n\n'
        '[[outages]]\nname = "weekly"\nevery = "tuesday"\nfrom = "08:00"\nto = "16:00"\n\n'
        "[failures]\nnode_processors = 128\nmtbf_hours = 200\nrepair_hours = 12\n"
    )
    out = tmp_path / "cli"
    cli("run", "--config", site, "--outage-costs", "--out", out)
    result = sitesim.run(site, outage_costs=True)
    assert result.csv["outages.csv"] == (out / "outages.csv").read_bytes()
    outages = result.outages
    assert list(outages.columns) == list(sitesim.OUTAGE_DTYPES)
    assert str(outages["from"].dtype) == "int64"
    assert set(outages["kind"]) == {"maintenance", "failure"}
    pd.testing.assert_frame_equal(outages, sitesim.read_outages(out / "outages.csv"))
    cost = result.summary["outages"]["outages"][0]["cost"]
    assert cost == json.loads((out / "summary.json").read_text())["outages"]["outages"][0]["cost"]
    assert "cost" in result.summary["failures"]
    # a run without outages has no table
    assert sitesim.run(users=10, weeks=1).outages is None


@needs_kth
def test_a_replays_outage_costs_equal_the_command_line(tmp_path):
    outages = tmp_path / "outages.toml"
    outages.write_text(
        'start = "2024-01-01T00:00:00"\n\n'
        '[[outages]]\nname = "weekly"\nevery = "tuesday"\nfrom = "08:00"\nto = "16:00"\n'
    )
    out = tmp_path / "cli"
    cli("replay", KTH, "--scheduler", "easy", "--outages", outages, "--outage-costs", "--out", out)
    result = sitesim.replay(KTH, scheduler="easy", outages=outages, outage_costs=True)
    assert result.summary == json.loads((out / "summary.json").read_text())
    assert "wait_added_s" in result.summary["outages"]["outages"][0]["cost"]
    assert result.csv["outages.csv"] == (out / "outages.csv").read_bytes()


def test_a_missing_population_file_raises_file_not_found_with_the_cli_message(tmp_path):
    missing = tmp_path / "nowhere.toml"
    message = cli_error("run", "--config", missing)
    with pytest.raises(FileNotFoundError) as caught:
        sitesim.run(missing)
    assert str(caught.value) == message


def test_a_population_file_path_or_text_gives_the_same_run(tmp_path):
    text = (ROOT / "configs" / "paper.toml").read_text()
    path = tmp_path / "site.toml"
    path.write_text(text)
    by_path = sitesim.run(path, users=10, weeks=1)
    by_text = sitesim.run(text, users=10, weeks=1)
    pd.testing.assert_frame_equal(by_path.jobs, by_text.jobs)
    out = tmp_path / "cli"
    cli("run", "--config", path, "--users", 10, "--weeks", 1, "--out", out)
    assert_same_files(by_path, out, ["jobs.csv", "sessions.csv", "batches.csv"])


@needs_kth
def test_replay_equals_the_command_line(tmp_path):
    out = tmp_path / "cli"
    cli("replay", KTH, "--scheduler", "creasy", "--alpha", 3000, "--warmup", "tsafrir", "--out", out)
    result = sitesim.replay(KTH, scheduler="creasy", alpha=3000, warmup="tsafrir")
    assert_same_files(result, out, ["jobs.csv"])
    assert result.sessions is None and result.batches is None


@needs_kth
def test_power_keywords_meter_a_replay_and_a_run_as_the_command_line(tmp_path):
    power = tmp_path / "power.toml"
    power.write_text("[power]\ncores = 32\nidle_w = 100\nbusy_w = 420\npue = 1.2\ncap_kw = 60\n")
    out = tmp_path / "cli"
    cli("replay", KTH, "--power", power, "--out", out)
    result = sitesim.replay(KTH, power=power)
    assert_same_files(result, out, ["jobs.csv"])
    assert result.summary["power"]["pue"] == 1.2
    assert result.summary["power"]["peak_kw"] <= 60.0
    run = sitesim.run(users=20, weeks=1, power=str(power))
    assert run.summary["power"]["jobs"] == len(run.jobs)


@needs_kth
def test_replay_with_feedback_equals_the_command_line(tmp_path):
    out = tmp_path / "cli"
    cli("replay", KTH, "--feedback", "--first-jobs", 3000, "--out", out)
    result = sitesim.replay(KTH, feedback=True, first_jobs=3000)
    assert_same_files(result, out, ["jobs.csv", "sessions.csv"])


def fcfs(job, now):
    return -float(job.submit)


def creasy(alpha):
    def priority(job, now):
        # cluster/src/order/creasy.rs, operation for operation
        waited = (now - job.submit) / 60.0
        d = 0.05 * (waited + job.estimate / 60.0) + 1.0
        return alpha * (0.04 / (d * d)) + waited

    return priority


@needs_kth
def test_a_python_fcfs_order_gives_easys_schedule_on_kth():
    built_in = sitesim.replay(KTH, scheduler="easy")
    python = sitesim.replay(KTH, scheduler="easy", order=fcfs)
    assert python.order_calls > 0
    pd.testing.assert_frame_equal(python.jobs, built_in.jobs)
    assert python.csv["jobs.csv"] == built_in.csv["jobs.csv"]


@needs_kth
def test_a_python_creasy_priority_gives_creasys_schedule_on_kth():
    built_in = sitesim.replay(KTH, scheduler="creasy", alpha=6000)
    python = sitesim.replay(KTH, scheduler="easy", order=creasy(6000.0))
    pd.testing.assert_frame_equal(python.jobs, built_in.jobs)
    # and it is not EASY's: the order matters
    assert not python.jobs.equals(sitesim.replay(KTH, scheduler="easy").jobs)


def test_a_python_order_in_a_site_run():
    built_in = sitesim.run(users=30, weeks=1, scheduler="creasy", alpha=6000)
    python = sitesim.run(users=30, weeks=1, scheduler="easy", order=creasy(6000.0))
    pd.testing.assert_frame_equal(python.jobs, built_in.jobs)
    pd.testing.assert_frame_equal(python.sessions, built_in.sessions)


@needs_kth
def test_an_order_that_raises_raises():
    def broken(job, now):
        return 1 / 0

    with pytest.raises(ZeroDivisionError):
        sitesim.replay(KTH, first_jobs=500, order=broken)

    with pytest.raises(TypeError):
        sitesim.replay(KTH, first_jobs=500, order=lambda job, now: "high")


@needs_kth
def test_bad_arguments_raise_value_error_with_the_cli_message():
    cases = [
        (["replay", KTH, "--load-factor", 0], dict(load_factor=0.0)),
        (["replay", KTH, "--load-factor", "1e300"], dict(load_factor=1e300)),
        (["replay", KTH, "--alpha", 5], dict(alpha=5.0)),
        (["replay", KTH, "--scheduler", "creasy", "--alpha=-5"], dict(scheduler="creasy", alpha=-5.0)),
        (["replay", KTH, "--first-jobs", 0], dict(first_jobs=0)),
        (["replay", KTH, "--feedback-abandon"], dict(feedback_abandon=True)),
        (["replay", KTH, "--estimates", "phi", "--estimate-phi", 2], dict(estimates="phi", estimate_phi=2.0)),
    ]
    for args, kwargs in cases:
        message = cli_error(*args)
        with pytest.raises(ValueError) as caught:
            sitesim.replay(KTH, **kwargs)
        # The same message, naming the options as the command line does there and as keywords
        # here.
        assert caught.value.command_line_message == message, args
        for key in kwargs:
            flag = "--" + key.replace("_", "-")
            if flag in message:
                assert key in str(caught.value) and flag not in str(caught.value), (args, str(caught.value))


def test_bad_site_values_raise_value_error_with_the_cli_message(tmp_path):
    cases = [
        (["run", "--scheduler", "easy", "--alpha", 5], dict(scheduler="easy", alpha=5.0)),
        (["run", "--users", 0, "--weeks", 1], dict(users=0, weeks=1)),
        (["run", "--weeks", 0], dict(weeks=0)),
    ]
    for args, kwargs in cases:
        message = cli_error(*args)
        with pytest.raises(ValueError) as caught:
            sitesim.run(**kwargs)
        assert caught.value.command_line_message == message, args
    bad = tmp_path / "bad.toml"
    bad.write_text("[site]\nprocessors = 64\nmystery = 1\n")
    message = cli_error("run", "--config", bad)
    with pytest.raises(ValueError) as caught:
        sitesim.run(bad)
    # (the TOML parser's message ends with a newline, which the comparison cannot see)
    assert caught.value.command_line_message.rstrip("\n") == message
    assert str(caught.value) == caught.value.command_line_message


def test_unknown_names_raise_value_error():
    with pytest.raises(ValueError, match='scheduler=\'magic\': "magic" is not one of fcfs, easy'):
        sitesim.replay("x.swf", scheduler="magic")
    with pytest.raises(ValueError, match="is not one of none, tsafrir"):
        sitesim.replay("x.swf", warmup="sometimes")


def test_a_missing_trace_raises_file_not_found_with_the_cli_message(tmp_path):
    missing = tmp_path / "missing.swf"
    message = cli_error("replay", missing)
    with pytest.raises(FileNotFoundError) as caught:
        sitesim.replay(missing)
    assert caught.value.command_line_message == message


@needs_kth
def test_the_gil_is_released_while_simulating():
    result = {}
    worker = threading.Thread(target=lambda: result.update(r=sitesim.replay(KTH, scheduler="creasy")))
    ticks = 0
    worker.start()
    while worker.is_alive():
        ticks += 1
        time.sleep(0.001)
    worker.join()
    assert ticks > 10, "the main thread did not run while the replay did"
    assert len(result["r"].jobs) > 28000


@needs_kth
def test_parallel_runs_from_threads_equal_sequential_ones():
    schedulers = ["easy", "creasy", "conservative"]
    sequential = {s: sitesim.replay(KTH, scheduler=s).csv["jobs.csv"] for s in schedulers}
    parallel = {}
    threads = [
        threading.Thread(target=lambda s=s: parallel.update({s: sitesim.replay(KTH, scheduler=s).csv["jobs.csv"]}))
        for s in schedulers
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert parallel == sequential


SWEEP = """
seeds = [1, 2]
baseline = "easy"

[[axes]]
name = "scheduler"
key = "scheduler.policy"
values = ["easy", "creasy"]

[[axes]]
name = "users"
key = "groups.0.users"
values = [20]

[[axes]]
name = "weeks"
key = "run.weeks"
values = [1]
"""


def test_sweep_equals_the_command_line(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP)
    out = tmp_path / "cli"
    cli("sweep", path, "--out", out, "--jobs", 2)
    expected = pd.read_csv(out / "results.csv")
    pd.testing.assert_frame_equal(sitesim.sweep(path, jobs=2), expected)
    pd.testing.assert_frame_equal(sitesim.sweep(SWEEP, jobs=1), expected)
    # Into a results directory, as the command line writes it; called again, it resumes (the
    # run files stay as they were) and gives the same table.
    py = tmp_path / "py"
    pd.testing.assert_frame_equal(sitesim.sweep(path, jobs=2, out=py), expected)
    assert (py / "results.csv").read_bytes() == (out / "results.csv").read_bytes()
    runs = {p.name: p.stat().st_mtime_ns for p in (py / "runs").iterdir()}
    assert sorted(runs) == sorted(p.name for p in (out / "runs").iterdir())
    pd.testing.assert_frame_equal(sitesim.sweep(path, out=py), expected)
    assert runs == {p.name: p.stat().st_mtime_ns for p in (py / "runs").iterdir()}


def test_bad_sweep_raises_value_error_with_the_cli_message(tmp_path):
    path = tmp_path / "sweep.toml"
    path.write_text(SWEEP.replace("[1, 2]", "[1, 1]"))
    message = cli_error("sweep", path, "--out", tmp_path / "out")
    with pytest.raises(ValueError) as caught:
        sitesim.sweep(path)
    assert caught.value.command_line_message == message


@needs_kth
def test_fit_writes_the_command_lines_models(tmp_path):
    out = tmp_path / "cli"
    cli("fit", KTH, "--out", out)
    fitted = sitesim.fit([KTH], out=tmp_path / "py")
    assert fitted.summary["combined"]["jobs"] > 0 if "combined" in fitted.summary else fitted.summary
    written = sorted(p.relative_to(out) for p in out.rglob("*") if p.is_file())
    assert sorted(Path(name) for name in fitted.files) == written
    for name in written:
        if name.name == "PROVENANCE.md":  # names the output directory
            continue
        assert (tmp_path / "py" / name).read_text() == (out / name).read_text(), name


@needs_kth
def test_fit_refuses_a_folder_holding_models_unless_forced_and_takes_the_sites_zone(tmp_path):
    out = tmp_path / "models"
    first = sitesim.fit(KTH, out=out)
    with pytest.raises(FileExistsError) as caught:
        sitesim.fit(KTH, out=out)
    assert "force" in str(caught.value)
    assert sitesim.fit(KTH, out=out, force=True).summary == first.summary
    # the site's zone replaces the SWF header's (Europe/Stockholm) for the daily cycle
    utc = sitesim.fit(KTH, site_tz="UTC")
    name = next(iter(utc.summary["traces"]))
    assert utc.summary["traces"][name]["zone"] == "UTC"
    assert first.summary["traces"][name]["zone"] == "Europe/Stockholm"
    assert utc.summary["traces"][name]["day_fraction"] != first.summary["traces"][name]["day_fraction"]


def test_a_misspelt_keyword_names_the_closest_one():
    with pytest.raises(TypeError, match=r"run\(\) got an unexpected keyword argument 'userz'; did you mean 'users'\?"):
        sitesim.run(userz=5)
    with pytest.raises(TypeError, match="did you mean 'load_factor'"):
        sitesim.replay("x.swf", load_factr=0.5)
    with pytest.raises(TypeError, match="did you mean 'site_tz'"):
        sitesim.fit("x.swf", sitetz="UTC")
    # nothing close: no guess
    with pytest.raises(TypeError) as caught:
        sitesim.sweep("x.toml", zzzzzz=1)
    assert "did you mean" not in str(caught.value)


def test_fit_options_are_checked_like_the_cli(tmp_path):
    message = cli_error("fit", "x.swf", "--max-break", 600)
    with pytest.raises(ValueError) as caught:
        sitesim.fit(["x.swf"], max_break=600)
    assert caught.value.command_line_message == message
    assert str(caught.value) == "max_break (600 s) must exceed session_threshold (1200 s)"


@needs_kth
def test_fit_takes_one_path_and_a_missing_trace_raises_file_not_found(tmp_path):
    # one trace given as a string or a path, not its name's characters
    one = sitesim.fit(KTH)
    assert one.summary == sitesim.fit([KTH]).summary
    assert sitesim.fit(Path(KTH)).summary == one.summary
    missing = tmp_path / "missing.swf"
    with pytest.raises(FileNotFoundError) as caught:
        sitesim.fit(missing)
    assert str(missing) in str(caught.value)
    assert caught.value.command_line_message == cli_error("fit", missing)


def test_fit_durations_out_of_range_raise_value_error_naming_them():
    with pytest.raises(ValueError) as caught:
        sitesim.fit(["x.swf"], max_break=2**70)
    assert str(caught.value).startswith("max_break=1180591620717411303424")
    with pytest.raises(TypeError):
        sitesim.fit(["x.swf"], session_threshold=1.5)


def test_schedulers_are_listed():
    names = sitesim.schedulers()
    assert {"fcfs", "easy", "creasy"} <= set(names)


@needs_kth
def test_replay_sweep_equals_the_command_line(tmp_path):
    text = f"""
seeds = [1, 2]
baseline = "easy"
[replay]
trace = "{KTH}"
first_jobs = 2000
shake = true
[[axes]]
name = "scheduler"
key = "scheduler"
values = [{{ policy = "easy" }}, {{ policy = "creasy", alpha = 6000 }}]
"""
    path = tmp_path / "sweep.toml"
    path.write_text(text)
    out = tmp_path / "cli"
    cli("sweep", path, "--out", out, "--jobs", 2)
    expected = pd.read_csv(out / "results.csv")
    assert set(expected["scheduler"]) == {"easy", "creasy-6000"}
    pd.testing.assert_frame_equal(sitesim.sweep(text, jobs=2), expected)


def test_every_run_option_reaches_the_run(tmp_path):
    # Options Python lacked before the option table: the machine, estimates, warm-up, job sizes,
    # the outputs; each gives what the command line gives.
    args = dict(users=20, weeks=1, node_processors=8, selection="first-fit", node_bandwidth=7000.0,
                estimates="f", estimate_f=1.5, warmup_days=1, job_sizes="clip", processors=512)
    out = tmp_path / "cli"
    flags = []
    for key, value in args.items():
        flags += ["--" + key.replace("_", "-"), value]
    cli("run", *flags, "--out", out, "--batsim-jobs", "--swf", tmp_path / "cli.swf")
    result = sitesim.run(**args, batsim_jobs=True, swf=True)
    for name in ["jobs.csv", "sessions.csv", "batches.csv", "batsim_jobs.csv"]:
        assert result.files[name] == (out / name).read_bytes(), name
    assert result.swf == (tmp_path / "cli.swf").read_text()
    # With out=, the files are written there, and read back from there.
    written = sitesim.run(**args, out=tmp_path / "py", swf=tmp_path / "py.swf")
    assert (tmp_path / "py" / "jobs.csv").read_bytes() == (out / "jobs.csv").read_bytes()
    assert (tmp_path / "py.swf").read_text() == result.swf
    pd.testing.assert_frame_equal(written.jobs, result.jobs)


def test_an_order_by_name_and_a_python_order_under_dynp():
    by_name = sitesim.run(users=20, weeks=1, order="sjf")
    assert by_name.scheduler == "easy-sjf"
    with pytest.raises(ValueError, match="orders the queue itself"):
        sitesim.run(users=20, weeks=1, scheduler="dynp", order=lambda job, now: 0.0)


def test_read_swf_equals_the_file_field_by_field():
    import gzip

    frame = sitesim.read_swf(KTH)
    with gzip.open(KTH, "rt") as f:
        rows = [line.split() for line in f if line.strip() and not line.startswith(";")]
    assert len(frame) == len(rows)
    assert list(frame.columns) == sitesim.SWF_COLUMNS
    for index in (0, len(rows) // 2, len(rows) - 1):
        for name, text in zip(sitesim.SWF_COLUMNS, rows[index]):
            assert frame[name].iloc[index] == float(text), (index, name)
    assert frame["submit_time"].dtype == "int64"
    assert frame["used_memory"].dtype == "float64"
    assert frame.attrs["header"]["MaxProcs"].split()[0] == "100"


def test_read_swf_names_file_and_line_of_a_bad_line(tmp_path):
    bad = tmp_path / "bad.swf"
    bad.write_text("; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 20 -1 1 1 1 1 1 1 -1 -1\n2 5 0 ten\n")
    with pytest.raises(ValueError, match=r"bad\.swf:3"):
        sitesim.read_swf(bad)
    with pytest.raises(FileNotFoundError):
        sitesim.read_swf(tmp_path / "missing.swf")


@needs_kth
def test_a_run_past_its_output_limit_raises_and_writes_nothing(tmp_path):
    # In memory (no out=) the limit guards memory; with out= the disk, and nothing is left.
    with pytest.raises(ValueError, match="past output_limit"):
        sitesim.replay(KTH, output_limit=0.0001)
    with pytest.raises(ValueError, match="past output_limit"):
        sitesim.run(users=50, weeks=8, out=tmp_path / "x", output_limit=0.0005)
    assert not (tmp_path / "x").exists()
    with pytest.raises(ValueError, match="output_limit"):
        sitesim.replay(KTH, output_limit=float("nan"))
    assert len(sitesim.replay(KTH, output_limit=1).jobs) > 0


def test_calibrate_picks_the_users_for_a_utilization_and_runs_give_it():
    found = sitesim.calibrate(utilization=0.5, users=40, weeks=2, seeds=2)
    assert found["measure"] == "utilization" and found["target"] == 0.5
    assert abs(found["value"] - 0.5) < 0.05, found
    assert found["group_users"] == [found["users"]]
    assert found["seeds"] == [1, 2]
    assert any(t["users"] == found["users"] for t in found["trials"])
    # the picked number, run with the same seeds, gives the value reported
    values = [
        sitesim.run(users=found["users"], weeks=2, seed=s).summary["summary"]["utilization"]
        for s in found["seeds"]
    ]
    assert abs(sum(values) / len(values) - found["value"]) < 1e-12
    with pytest.raises(ValueError, match="target utilization = 1.5"):
        sitesim.calibrate(utilization=1.5, weeks=1)
    with pytest.raises(ValueError, match="give one target"):
        sitesim.calibrate(weeks=1)
