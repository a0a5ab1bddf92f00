"""Slurm accounting dumps from Python: read_sacct, and replay and fit of a dump, equal to the
command line's."""

import gzip
import json

import pandas as pd
import pytest

import sitesim
from _cli import KTH, ROOT, cli

FIXTURES = ROOT / "tests" / "fixtures" / "sacct"


def test_read_sacct_gives_the_jobs_with_their_types_and_the_report():
    df = sitesim.read_sacct(FIXTURES / "requeue.txt")
    assert list(df.columns) == list(sitesim.SACCT_DTYPES)
    job = df[df.job_id == 300].iloc[0]
    assert job.submit == pd.Timestamp("2024-01-08T11:00:00", tz="UTC")  # the first submit
    assert job.start == pd.Timestamp("2024-01-08T11:07:01", tz="UTC")
    assert job.elapsed == 1800 and job.restarts == 1 and job.user == "alice"
    report = {reason: count for reason, _, count, _ in df.attrs["report"]}
    assert report["requeued_run"] == 1 and report["recycled_id"] == 1
    later = sitesim.read_sacct(FIXTURES / "requeue.txt", requeued="last-submit")
    assert later[later.job_id == 300].iloc[0].submit == pd.Timestamp(
        "2024-01-08T11:05:01", tz="UTC"
    )


def test_read_sacct_places_local_times_by_tz():
    df = sitesim.read_sacct(FIXTURES / "timezone.txt", tz="Europe/Berlin")
    summer = df[df.job_id == 403].iloc[0]
    assert summer.submit == pd.Timestamp("2024-07-01T10:00:00", tz="UTC")
    assert df.attrs["time_zone"] == "Europe/Berlin"
    with pytest.raises(ValueError, match="not a time zone"):
        sitesim.read_sacct(FIXTURES / "timezone.txt", tz="Mars/Olympus")


def test_bad_dumps_raise_naming_file_line_and_field():
    with pytest.raises(ValueError, match=r"unknown_state\.txt:3: field State"):
        sitesim.read_sacct(FIXTURES / "unknown_state.txt")
    with pytest.raises(FileNotFoundError):
        sitesim.read_sacct(FIXTURES / "missing.txt")


def _kth_dump(tmp_path, jobs=3000):
    """A sacct dump of KTH-SP2's first jobs, written by the command line's own writer (convert
    of the dump gives the same jobs back)."""
    frame = sitesim.read_swf(KTH).head(jobs)
    start = int(frame.attrs["header"].get("UnixStartTime", "0").split()[0])
    lines = ["JobID|JobIDRaw|User|Submit|Start|End|ElapsedRaw|TimelimitRaw|NCPUS|ReqCPUS|State"]
    for row in frame.itertuples():
        submit = pd.Timestamp(start + row.submit_time, unit="s").strftime("%Y-%m-%dT%H:%M:%S")
        if row.run_time >= 0 and row.wait_time >= 0:
            begin = start + row.submit_time + row.wait_time
            t0 = pd.Timestamp(begin, unit="s").strftime("%Y-%m-%dT%H:%M:%S")
            t1 = pd.Timestamp(begin + row.run_time, unit="s").strftime("%Y-%m-%dT%H:%M:%S")
            state, elapsed = "COMPLETED", row.run_time
            cpus = max(row.allocated_processors, row.requested_processors, 1)
        else:
            t0, t1, state, elapsed, cpus = "Unknown", submit, "CANCELLED by 0", 0, 0
        limit = (row.requested_time + 59) // 60 if row.requested_time > 0 else "UNLIMITED"
        lines.append(
            f"{row.job_number}|{row.job_number}|u{row.user_id}|{submit}|{t0}|{t1}|{elapsed}"
            f"|{limit}|{cpus}|{max(row.requested_processors, 1)}|{state}"
        )
    path = tmp_path / "kth.sacct.gz"
    with gzip.open(path, "wt") as f:
        f.write("\n".join(lines) + "\n")
    return path


def test_replay_of_a_dump_equals_the_command_line_and_its_conversion(tmp_path):
    dump = _kth_dump(tmp_path)
    r = sitesim.replay(dump, scheduler="creasy")
    cli("replay", str(dump), "--scheduler", "creasy", "--out", str(tmp_path / "cli"))
    assert r.files["jobs.csv"] == (tmp_path / "cli" / "jobs.csv").read_bytes()
    cli("convert", str(dump), "--out", str(tmp_path / "conv"))
    swf = sitesim.replay(tmp_path / "conv" / "trace.swf", scheduler="creasy")
    assert r.files["jobs.csv"] == swf.files["jobs.csv"]
    assert r.summary["conversion"]["lines"].startswith("3000 lines read")


def test_fit_of_a_dump_writes_models_a_site_runs_on(tmp_path):
    dump = _kth_dump(tmp_path, jobs=28_000)
    fitted = sitesim.fit([dump], out=tmp_path / "models", tz="UTC")
    assert "combined/parameters.csv" in fitted.files
    assert "--tz UTC" in fitted.files["PROVENANCE.md"]
    site = (
        "[site]\nprocessors = 100\n[run]\nweeks = 1\n[[groups]]\nname = \"kth\"\n"
        "users = 20\nmodels = \"models/combined\"\n"
    )
    (tmp_path / "site.toml").write_text(site)
    run = sitesim.run(tmp_path / "site.toml")
    assert run.summary["closed_loop"]["submitted_per_hour"] > 0
    with pytest.raises(ValueError, match="applies to Slurm accounting dumps"):
        sitesim.fit([KTH], tz="UTC")


GPU_RUN = ROOT / "tests" / "fixtures" / "slurm-gpu" / "run1"


def test_a_gpu_replay_carries_nodes_and_resources_and_its_conversion_the_requests(tmp_path):
    # the real Slurm GPU capture on its own node under EASY: nodes.csv and the resource
    # columns as DataFrames, equal to the command line's; its conversion's requests.csv reads
    # with its types and replays to the same jobs
    conf = GPU_RUN / "slurm.conf"
    r = sitesim.replay(GPU_RUN / "sacct.txt", slurm_conf=conf, scheduler="easy")
    cli(
        "replay", str(GPU_RUN / "sacct.txt"), "--slurm-conf", str(conf),
        "--scheduler", "easy", "--out", str(tmp_path / "cli"),
    )
    assert r.files["nodes.csv"] == (tmp_path / "cli" / "nodes.csv").read_bytes()
    nodes = r.nodes
    assert list(nodes.columns) == list(sitesim.NODE_DTYPES)
    assert nodes["gpus"].dtype == "int64" and (nodes["node"] == "vm").all()
    assert nodes["gpus"].max() <= 4 and nodes["memory_mib"].max() <= 64000
    jobs = r.jobs
    assert jobs["gres/gpu"].dtype == "int64" and (jobs["gres/gpu"] > 0).sum() == 48
    assert jobs["mem"].dtype == "int64" and (jobs["mem"] > 0).all()
    held = nodes.groupby("job_id")["gpus"].sum()
    assert (held.reindex(jobs["job_id"]).to_numpy() == jobs["gres/gpu"].to_numpy()).all()
    assert set(r.summary["nodes"]["utilization"]) >= {"cpus", "memory", "gpus", "gpus:a100"}
    assert sitesim.read_nodes(tmp_path / "cli" / "nodes.csv").equals(nodes)
    # a CPU-only replay has no nodes.csv
    assert sitesim.replay(GPU_RUN / "sacct.txt", scheduler="easy").nodes is None
    cli("convert", str(GPU_RUN / "sacct.txt"), "--out", str(tmp_path / "conv"))
    requests = sitesim.read_requests(tmp_path / "conv" / "requests.csv")
    assert list(requests.columns) == list(sitesim.REQUEST_DTYPES)
    assert len(requests) == 150 and (requests["gpu_type"] == "a100").sum() == 48
    swf = sitesim.read_swf(tmp_path / "conv" / "trace.swf")
    assert (swf["job_number"].to_numpy() == requests["job_id"].to_numpy()).all()
    again = sitesim.replay(tmp_path / "conv" / "trace.swf", slurm_conf=conf, scheduler="easy")
    assert again.files["jobs.csv"] == r.files["jobs.csv"]
    assert again.files["nodes.csv"] == r.files["nodes.csv"]


def test_a_dump_replays_with_its_tree_and_qos_as_on_the_command_line(tmp_path):
    # the one-line path of a site's dump: assoc= and qos= are --assoc and --qos; each job in
    # its own QOS and partition, the loop that started it beside
    queue = ROOT / "tests" / "fixtures" / "slurm-queue" / "run1"
    given = dict(
        scheduler="slurm",
        slurm_conf=queue / "slurm.conf",
        assoc=queue / "assoc.txt",
        qos=queue / "qos.txt",
    )
    r = sitesim.replay(queue / "sacct.txt", **given)
    cli(
        "replay", str(queue / "sacct.txt"), "--scheduler", "slurm",
        "--slurm-conf", str(queue / "slurm.conf"), "--assoc", str(queue / "assoc.txt"),
        "--qos", str(queue / "qos.txt"), "--out", str(tmp_path / "cli"),
    )
    assert r.files["jobs.csv"] == (tmp_path / "cli" / "jobs.csv").read_bytes()
    jobs = r.jobs
    assert set(jobs["qos"]) == {"normal", "high", "gpu"}
    assert set(jobs["partition"]) == {"cpu", "gpu"}
    assert set(jobs["started_by"]) == {"main", "backfill"}
    assert set(jobs["account"]) == {"physics", "theory", "chemistry", "biology"}


def test_whatif_writes_the_command_lines_page(tmp_path):
    run1 = ROOT / "tests" / "fixtures" / "slurm-gpu" / "run1"
    confs = [ROOT / "tests" / "fixtures" / "whatif" / n for n in ("current.conf", "proposed.conf")]
    out = tmp_path / "py.html"
    verdict = sitesim.whatif(
        run1 / "sacct.txt", confs, assoc=run1 / "assoc.txt", seeds=2, weeks=1, out=out
    )
    assert verdict[0].startswith("In the closed loop")
    cli(
        "whatif", "--sacct", run1 / "sacct.txt", "--assoc", run1 / "assoc.txt",
        "--slurm-conf", confs[0], "--slurm-conf", confs[1], "--seeds", "2", "--weeks", "1",
        "-o", tmp_path / "cli.html",
    )
    assert out.read_text() == (tmp_path / "cli.html").read_text()
    # an existing page is kept without force; one conf is refused
    with pytest.raises(ValueError, match="force"):
        sitesim.whatif(run1 / "sacct.txt", confs, seeds=2, weeks=1, out=out)
    with pytest.raises(ValueError, match="two"):
        sitesim.whatif(run1 / "sacct.txt", confs[0], out=tmp_path / "x.html")
    assert not (tmp_path / "x.html").exists()
