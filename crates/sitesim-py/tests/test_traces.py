"""GPU-era public traces from Python: read_trace gives each format's jobs as the command line
reads them, with GPUs, GPU types and the report, and names bad input by file, line and column."""

import pandas as pd
import pytest

import sitesim

HELIOS = (
    "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n"
    "1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n"
    "1425512,uVMrF,vchbv,16,64,2,NODE_FAIL,2020-06-09 18:41:27,2020-06-09 19:00:00,2020-06-09 20:00:00,3600,1113\n"
    "1425514,uzqls,vcpDC,1,4,1,RUNNING,2020-06-09 18:43:00,2020-06-09 18:43:00,,,0\n"
)


def test_read_trace_reads_helios_in_its_zone_with_its_gpus(tmp_path):
    path = tmp_path / "cluster_log.csv"
    path.write_text(HELIOS)
    df = sitesim.read_trace(path)  # told from its header row
    assert list(df.columns) == list(sitesim.SACCT_DTYPES)
    assert list(df.job_id) == [1425511, 1425512]
    first = df.iloc[0]
    # 18:41:01 in Asia/Shanghai (UTC+8), the format's zone
    assert first.submit == pd.Timestamp("2020-06-09T10:41:01", tz="UTC")
    assert first.user == "uXBbc" and first.account == "vcJkd" and first.partition == "vcJkd"
    assert list(df.gpus) == [1, 16] and list(df.cpus) == [1, 64] and list(df.nodes) == [1, 2]
    assert df.iloc[1].state == "NODE_FAIL"
    report = {reason: count for reason, _, count, _ in df.attrs["report"]}
    assert report["not_ended"] == 1
    assert df.attrs["time_zone"] == "Asia/Shanghai"
    utc = sitesim.read_trace(path, "helios", tz="UTC")
    assert utc.iloc[0].submit == pd.Timestamp("2020-06-09T18:41:01", tz="UTC")


def test_read_trace_reads_a_philly_log_with_its_retries(tmp_path):
    path = tmp_path / "cluster_job_log"
    path.write_text(
        '[{"status": "Pass", "vc": "ee9e8c", "jobid": "application_1_1", "user": "ce2f4c",'
        ' "submitted_time": "2017-10-07 01:11:39", "attempts": ['
        '{"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",'
        ' "detail": [{"ip": "m47", "gpus": ["gpu0"]}]},'
        '{"start_time": "2017-10-07 02:00:00", "end_time": "2017-10-07 03:00:00",'
        ' "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1"]}]}]}]'
    )
    df = sitesim.read_trace(path, "philly")
    job = df.iloc[0]
    assert job.gpus == 2 and job.restarts == 1 and job.elapsed == 3600
    assert job.start == pd.Timestamp("2017-10-07T09:00:00", tz="UTC")  # PDT
    report = {reason: count for reason, _, count, _ in df.attrs["report"]}
    assert report["earlier_attempts"] == 1


def test_read_trace_names_bad_input(tmp_path):
    path = tmp_path / "negative.csv"
    path.write_text(HELIOS.replace(",16,64,", ",-16,64,"))
    with pytest.raises(ValueError, match=r"negative\.csv:3: column gpu_num"):
        sitesim.read_trace(path, "helios")
    swf = tmp_path / "plain.swf"
    swf.write_text("1 0 0 1 1\n")
    with pytest.raises(ValueError, match="give format="):
        sitesim.read_trace(swf)
    with pytest.raises(ValueError, match="is not one of auto, swf, sacct, helios"):
        sitesim.read_trace(path, "parquet")
