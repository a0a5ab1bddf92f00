//! Each format's reader on a small file written from the format's documented schema, with the
//! awkward cases its dataset's docs mention (missing values, retries, fractional GPUs, zones),
//! checked job by job and field by field; and its bad input named by file, line and column.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::path::{Path, PathBuf};

use chrono::{NaiveDateTime, TimeZone};
use sacct::values::{Clock, State};
use sacct::{Reason, SacctLog, SacctOptions};
use traces::Format;

/// GPUs and memory, the resources a machine of GPUs names.
fn options(clock: &str) -> SacctOptions {
    SacctOptions {
        clock: Clock::named(clock).unwrap(),
        resources: vec!["gres/gpu".into(), "mem".into()],
        ..SacctOptions::default()
    }
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn read(format: Format, dir: &Path, name: &str, text: &str, clock: &str) -> SacctLog {
    let path = write(dir, name, text);
    traces::read(&path, format, &options(clock)).unwrap_or_else(|e| panic!("{e}"))
}

fn error(format: Format, dir: &Path, name: &str, text: &str) -> String {
    let path = write(dir, name, text);
    match traces::read(&path, format, &options("UTC")) {
        Ok(log) => panic!("read {} jobs", log.jobs.len()),
        Err(e) => e.to_string(),
    }
}

/// Unix seconds of a local time in `zone`.
fn at(zone: &str, text: &str) -> i64 {
    let local = NaiveDateTime::parse_from_str(text, "%Y-%m-%d %H:%M:%S").unwrap();
    let tz: chrono_tz::Tz = zone.parse().unwrap();
    tz.from_local_datetime(&local).unwrap().timestamp()
}

fn name(table: &sacct::Names, id: u32) -> &str {
    table.name(id)
}

#[test]
fn helios_jobs_read_field_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let log = read(
        Format::Helios,
        dir.path(),
        "cluster_log.csv",
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n\
         1425511,uXBbc,vcJkd,1,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-10 04:55:09,36848,0\n\
         1425512,uVMrF,vchbv,16,64,2,NODE_FAIL,2020-06-09 18:41:27,2020-06-09 19:00:00,2020-06-09 20:00:00,3600,1113\n\
         1425513,uXBbc,vcJkd,8,32,1,CANCELLED,2020-06-09 18:42:00,,,,\n\
         1425514,uzqls,vcpDC,1,4,1,RUNNING,2020-06-09 18:43:00,2020-06-09 18:43:00,,,0\n",
        "Asia/Shanghai",
    );
    assert_eq!(log.report.lines, 4);
    assert_eq!(log.report.get(Reason::NotEnded), 1);
    assert_eq!(log.report.get(Reason::CancelledBeforeStart), 1);
    assert_eq!(log.jobs.len(), 3);
    let [a, b, c] = &log.jobs[..] else { panic!() };
    let zone = "Asia/Shanghai";
    assert_eq!(a.id, 1425511);
    assert_eq!(name(&log.names.users, a.user), "uXBbc");
    assert_eq!(name(&log.names.accounts, a.account), "vcJkd");
    assert_eq!(name(&log.names.partitions, a.partition), "vcJkd");
    assert_eq!(a.submit, at(zone, "2020-06-09 18:41:01"));
    assert_eq!(a.submit, 1591699261, "18:41:01 at UTC+8 is 10:41:01 UTC");
    assert_eq!(a.start, Some(a.submit));
    assert_eq!(a.end, Some(at(zone, "2020-06-10 04:55:09")));
    assert_eq!(a.elapsed, Some(36848));
    assert_eq!((a.cpus, a.nodes, a.gpus), (1, 1, 1));
    assert_eq!(a.extra.0[..2], [1, 0], "one GPU; no memory logged");
    assert_eq!(a.state, State::Completed);
    assert_eq!(a.time_limit, None);
    assert_eq!(b.id, 1425512);
    assert_eq!((b.cpus, b.nodes, b.gpus), (64, 2, 16));
    assert_eq!(b.start, Some(at(zone, "2020-06-09 19:00:00")));
    assert_eq!(b.elapsed, Some(3600));
    assert_eq!(b.state, State::NodeFail);
    assert_eq!(c.id, 1425513);
    assert_eq!((c.start, c.end, c.elapsed), (None, None, None));
    assert_eq!(c.state, State::Cancelled);
    assert_eq!(c.extra.0[0], 8);
}

#[test]
fn helios_times_take_another_zone_when_told() {
    let dir = tempfile::tempdir().unwrap();
    let log = read(
        Format::Helios,
        dir.path(),
        "cluster_log.csv",
        "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n\
         1,u,vc,0,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n",
        "UTC",
    );
    assert_eq!(log.jobs[0].submit, 1591728061);
}

#[test]
fn philly_jobs_start_at_their_last_attempt() {
    let dir = tempfile::tempdir().unwrap();
    let log = read(
        Format::Philly,
        dir.path(),
        "cluster_job_log",
        r#"[
  {"status": "Pass", "vc": "ee9e8c", "jobid": "application_1506638472019_14199",
   "attempts": [
     {"start_time": "2017-10-07 01:12:09", "end_time": "2017-10-07 01:13:23",
      "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1"]}]},
     {"start_time": "2017-10-07 02:00:00", "end_time": "2017-10-07 03:00:00",
      "detail": [{"ip": "m47", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]},
                 {"ip": "m48", "gpus": ["gpu0", "gpu1", "gpu2", "gpu3"]}]}],
   "submitted_time": "2017-10-07 01:11:39", "user": "ce2f4c"},
  {"status": "Killed", "vc": "b436b2", "jobid": "application_1506638472019_14200",
   "attempts": [], "submitted_time": "2017-10-07 01:20:00", "user": "6c5d1e"},
  {"status": "Failed", "vc": "b436b2", "jobid": "application_1506638472019_14201",
   "attempts": [{"start_time": "2017-10-07 01:30:00", "end_time": "None",
                 "detail": [{"ip": "m2", "gpus": ["gpu0"]}]}],
   "submitted_time": "2017-10-07 01:25:00", "user": "6c5d1e"},
  {"status": "Failed", "vc": "b436b2", "jobid": "application_1506638472019_14202",
   "attempts": [{"start_time": null, "end_time": null, "detail": []}],
   "submitted_time": "None", "user": "6c5d1e"}
]"#,
        "America/Los_Angeles",
    );
    assert_eq!(log.report.lines, 4);
    assert_eq!(log.report.get(Reason::EarlierAttempts), 1);
    assert_eq!(
        log.report.get(Reason::NotEnded),
        1,
        "a last attempt without an end"
    );
    assert_eq!(log.report.get(Reason::NoSubmitTime), 1);
    assert_eq!(log.report.get(Reason::CancelledBeforeStart), 1);
    assert_eq!(log.jobs.len(), 2);
    let [a, b] = &log.jobs[..] else { panic!() };
    let zone = "America/Los_Angeles";
    assert_eq!(a.id, 1, "numbered by place in the log");
    assert_eq!(name(&log.names.users, a.user), "ce2f4c");
    assert_eq!(name(&log.names.accounts, a.account), "ee9e8c");
    assert_eq!(a.submit, at(zone, "2017-10-07 01:11:39"));
    assert_eq!(a.submit, 1507363899, "01:11:39 PDT is 08:11:39 UTC");
    assert_eq!(a.start, Some(at(zone, "2017-10-07 02:00:00")));
    assert_eq!(a.elapsed, Some(3600));
    assert_eq!((a.gpus, a.nodes, a.cpus, a.restarts), (8, 2, 8, 1));
    assert_eq!(a.extra.0[0], 8);
    assert_eq!(a.state, State::Completed);
    assert_eq!(b.id, 2);
    assert_eq!(
        (b.start, b.state, b.gpus, b.cpus),
        (None, State::Cancelled, 0, 1)
    );
}

#[test]
fn alibaba_pai_tasks_read_with_their_jobs_users() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "pai_job_table.csv",
        "4f057009a5d481acec67b088,1d6d5ae9ca7e0fb0bbcbd2c27bc42d4cf0cc69f1b3a7e6ca0c8f86bd3e1a,58540f191766,Terminated,4550879.0,4551416.0\n\
         a9449d475665e3bf0512520b,47d1af7c0b5e8cc6f9d4a1b6d3f6f98b2e6c7d7b1a2b3c4d5e6f7a8b9c0d,cf7e3a4e2f31,Failed,4551000.0,4560000.0\n",
    );
    let log = read(
        Format::AlibabaPai,
        dir.path(),
        "pai_task_table.csv",
        "4f057009a5d481acec67b088,tensorflow,1.0,Terminated,4550880.0,4551410.0,600.0,29.296875,50.0,MISC\n\
         a9449d475665e3bf0512520b,worker,2.0,Failed,4551100.0,4559000.0,600.0,29.296875,100.0,V100\n\
         a9449d475665e3bf0512520b,ps,1.0,Failed,0.0,0.0,200.0,10.0,,\n\
         a9449d475665e3bf0512520b,evaluator,1.0,Running,4551200.0,,100.0,2.0,0.0,\n",
        "UTC",
    );
    assert_eq!(log.report.lines, 4);
    assert_eq!(log.report.get(Reason::FractionalGpus), 1);
    assert_eq!(log.report.get(Reason::NotEnded), 1);
    assert_eq!(log.report.get(Reason::EndedBeforeStart), 1);
    assert_eq!(log.jobs.len(), 3);
    let [a, b, c] = &log.jobs[..] else { panic!() };
    assert_eq!(a.id, 1);
    assert_eq!(name(&log.names.users, a.user), "58540f191766");
    assert_eq!(
        a.submit, 4550879,
        "the job's submission, from the job table"
    );
    assert_eq!(
        (a.start, a.end, a.elapsed),
        (Some(4550880), Some(4551410), Some(530))
    );
    assert_eq!((a.cpus, a.gpus), (6, 1), "half a GPU rounded up");
    assert_eq!(a.extra.0[..2], [1, 30000], "29.296875 GB = 30,000 MiB");
    assert_eq!(name(&log.names.gpu_types, a.gpu_type), "MISC");
    assert_eq!(a.state, State::Completed);
    assert_eq!(b.id, 2);
    assert_eq!(name(&log.names.users, b.user), "cf7e3a4e2f31");
    assert_eq!(b.submit, 4551000);
    assert_eq!(
        (b.cpus, b.gpus),
        (12, 2),
        "two instances of 6 cores and a GPU"
    );
    assert_eq!(b.extra.0[..2], [2, 60000]);
    assert_eq!(name(&log.names.gpu_types, b.gpu_type), "V100");
    assert_eq!(b.state, State::Failed);
    assert_eq!(c.id, 3);
    assert_eq!((c.start, c.cpus, c.gpus, c.gpu_type), (None, 2, 0, 0));
    assert_eq!(c.extra.0[..2], [0, 10240]);

    // the job table given: the task table is found beside it
    let path = dir.path().join("pai_job_table.csv");
    let same = traces::read(&path, Format::AlibabaPai, &options("UTC")).unwrap();
    assert_eq!(same.jobs, log.jobs);
}

#[test]
fn acme_times_carry_their_offsets_and_kalos_its_memory() {
    let dir = tempfile::tempdir().unwrap();
    let seren = read(
        Format::Acme,
        dir.path(),
        "trace_seren.csv",
        "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time\n\
         5778432,u5907,1,8,64,Pretrain,COMPLETED,2023-03-01 00:18:22+08:00,2023-03-01 00:18:54+08:00,2023-03-01 02:18:54+08:00,7200,32,57600\n",
        "UTC",
    );
    let a = &seren.jobs[0];
    assert_eq!(a.id, 5778432);
    assert_eq!(a.submit, at("Asia/Shanghai", "2023-03-01 00:18:22"));
    assert_eq!(a.start, Some(a.submit + 32));
    assert_eq!((a.cpus, a.gpus, a.nodes, a.elapsed), (64, 8, 1, Some(7200)));
    assert_eq!(a.extra.0[..2], [8, 0]);
    let kalos = read(
        Format::Acme,
        dir.path(),
        "trace_kalos.csv",
        "job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,state,submit_time,start_time,end_time,fail_time,stop_time,duration,queue,gpu_time\n\
         dlctk696s0jbvitv,uf794,2,16,128,1000,100.0,Pretrain,FAILED,2023-05-01 10:00:00+00:00,2023-05-01 10:00:10+00:00,,2023-05-01 11:00:10+00:00,,3600,10.0,57600.0\n\
         dlc2,uf794,1,0,4,16,0.0,Debug,CANCELLED,2023-05-01 10:05:00+00:00,2023-05-01 10:05:01+00:00,,,2023-05-01 10:06:01+00:00,60,1.0,0.0\n",
        "UTC",
    );
    let [b, c] = &kalos.jobs[..] else { panic!() };
    assert_eq!(b.id, 1, "string ids numbered by row");
    assert_eq!(b.submit, 1682935200);
    assert_eq!(
        b.end,
        Some(1682935200 + 3610),
        "the fail time where the end is empty"
    );
    assert_eq!(
        b.extra.0[..2],
        [16, 2 * 1000 * 1024],
        "1,000 GB a pod, a pod a node"
    );
    assert_eq!(b.state, State::Failed);
    assert_eq!(c.id, 2);
    assert_eq!(c.elapsed, Some(60), "the stop time where the end is empty");
    assert_eq!(c.state, State::Cancelled);
}

#[test]
fn supercloud_jobs_read_from_slurms_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let header = "id_job,id_array_job,id_array_task,id_user,kill_requid,nodes_alloc,nodelist,cpus_req,derived_ec,exit_code,gres_used,array_max_tasks,array_task_pending,constraints,flags,mem_req,partition,priority,state,timelimit,time_submit,time_eligible,time_start,time_end,time_suspended,track_steps,tres_alloc,tres_req,job_type";
    let log = read(
        Format::Supercloud,
        dir.path(),
        "slurm-log.csv",
        &format!(
            "{header}\n\
             8810,0,4294967294,17,-1,1,\"['r9189566-n911952']\",20,0,0,gpu:volta:2,0,0,,0,170000,xeon-g6-volta,100,3,720,1610000000,1610000000,1610000100,1610003700,0,0,\"1=20,2=170000,4=1,5=20,1002=2\",\"1=20,2=170000,4=1,1002=2\",\n\
             8811,0,4294967294,18,-1,2,\"['a','b']\",96,0,0,,0,0,,0,0,xeon-p8,100,6,4294967295,1610000010,,1610000200,1610086600,0,0,\"1=96,4=2\",\"1=96,4=2\",\n\
             8812,0,4294967294,18,18,0,None,4,0,0,,0,0,,0,0,xeon-p8,100,4,60,1610000020,1610000020,0,1610000500,0,0,,\"1=4,2=4000,4=1\",\n\
             8813,0,4294967294,19,-1,1,,4,0,0,,0,0,,0,0,xeon-p8,100,1,60,1610000030,1610000030,1610000040,0,0,0,\"1=4,4=1\",\"1=4,4=1\",\n"
        ),
        "UTC",
    );
    assert_eq!(log.report.lines, 4);
    assert_eq!(log.report.get(Reason::NotEnded), 1);
    assert_eq!(log.report.get(Reason::CancelledBeforeStart), 1);
    let [a, b, c] = &log.jobs[..] else { panic!() };
    assert_eq!(a.id, 8810);
    assert_eq!(name(&log.names.users, a.user), "17");
    assert_eq!(name(&log.names.partitions, a.partition), "xeon-g6-volta");
    assert_eq!(
        (a.submit, a.start, a.end),
        (1610000000, Some(1610000100), Some(1610003700))
    );
    assert_eq!(a.time_limit, Some(720 * 60));
    assert_eq!((a.cpus, a.nodes, a.gpus), (20, 1, 2));
    assert_eq!(a.extra.0[..2], [2, 170000]);
    assert_eq!(name(&log.names.gpu_types, a.gpu_type), "volta");
    assert_eq!(a.state, State::Completed);
    assert_eq!(b.id, 8811);
    assert_eq!(b.time_limit, None, "INFINITE");
    assert_eq!(b.eligible, None);
    assert_eq!((b.cpus, b.nodes, b.gpus), (96, 2, 0));
    assert_eq!(b.state, State::Timeout);
    assert_eq!(c.id, 8812);
    assert_eq!(c.start, None, "time_start 0: never started");
    assert_eq!(
        c.extra.0[..2],
        [0, 4000],
        "what it asked for, from tres_req"
    );
    assert_eq!(c.state, State::Cancelled);
}

#[test]
fn bad_input_is_named_by_file_line_and_column() {
    let dir = tempfile::tempdir().unwrap();
    let helios = "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n";
    let e = error(
        Format::Helios,
        dir.path(),
        "negative.csv",
        &format!(
            "{helios}1,u,vc,-2,1,1,COMPLETED,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n"
        ),
    );
    assert!(
        e.contains("negative.csv:2: column gpu_num: \"-2\" is not a whole number of at least 0"),
        "{e}"
    );
    let e = error(
        Format::Helios,
        dir.path(),
        "type.csv",
        &format!(
            "{helios}1,u,vc,1,1,1,COMPLETED,2020-06-09 18:41:01,yesterday,2020-06-09 18:42:01,60,0\n"
        ),
    );
    assert!(
        e.contains("type.csv:2: column start_time: \"yesterday\" is not a date"),
        "{e}"
    );
    let e = error(
        Format::Helios,
        dir.path(),
        "state.csv",
        &format!(
            "{helios}1,u,vc,1,1,1,DONE,2020-06-09 18:41:01,2020-06-09 18:41:01,2020-06-09 18:42:01,60,0\n"
        ),
    );
    assert!(
        e.contains("state.csv:2: column state: \"DONE\" is not a job state"),
        "{e}"
    );
    // another format's file
    let e = error(
        Format::Helios,
        dir.path(),
        "acme.csv",
        "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time\n",
    );
    assert!(
        e.contains("acme.csv:1: the header row has no vc column, which the helios format has"),
        "{e}"
    );
    let e = error(
        Format::AlibabaPai,
        dir.path(),
        "pai_task_table.csv",
        "a,worker,1.0,Terminated,1.0,2.0,100.0,1.0,-50.0,T4\n",
    );
    assert!(
        e.contains("pai_job_table.csv"),
        "the job table is needed: {e}"
    );
    write(
        dir.path(),
        "pai_job_table.csv",
        "a,i,u,Terminated,1.0,2.0\n",
    );
    let e = error(
        Format::AlibabaPai,
        dir.path(),
        "pai_task_table.csv",
        "a,worker,1.0,Terminated,1.0,2.0,100.0,1.0,-50.0,T4\n",
    );
    assert!(
        e.contains(
            "pai_task_table.csv:1: column plan_gpu: \"-50.0\" is not a number of at least 0"
        ),
        "{e}"
    );
    let e = error(
        Format::AlibabaPai,
        dir.path(),
        "pai_task_table.csv",
        "a,worker,1.0,Terminated,1.0,2.0,100.0\n",
    );
    assert!(
        e.contains("pai_task_table.csv:1: 7 fields, the alibaba-pai format's rows have 10"),
        "{e}"
    );
    let e = error(
        Format::Philly,
        dir.path(),
        "log.json",
        "[{\"status\": \"Pass\",\n \"attempts\": 3}]",
    );
    assert!(
        e.starts_with(&format!("{}:2:", dir.path().join("log.json").display())),
        "{e}"
    );
    assert!(e.contains("not a philly job log"), "{e}");
    let e = error(
        Format::Philly,
        dir.path(),
        "status.json",
        "[{\"status\": \"Done\", \"attempts\": [], \"submitted_time\": \"2017-10-07 01:11:39\"}]",
    );
    assert!(
        e.contains("status \"Done\" is not Pass, Killed or Failed"),
        "{e}"
    );
    let e = error(
        Format::Supercloud,
        dir.path(),
        "tres.csv",
        "id_job,id_user,state,time_submit,time_start,time_end,tres_alloc\n1,2,3,10,20,30,\"1=x\"\n",
    );
    assert!(
        e.contains("tres.csv:2: column tres_alloc: \"1=x\" is not a TRES list"),
        "{e}"
    );
    let e = error(Format::Helios, dir.path(), "empty.csv", "");
    assert!(
        e.contains("no job in this helios trace") || e.contains("header row"),
        "{e}"
    );
}

#[test]
fn the_headers_that_only_one_format_has_are_told_apart() {
    assert_eq!(
        Format::detect(
            "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue"
        ),
        Some(Format::Helios)
    );
    assert_eq!(
        Format::detect(
            "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time"
        ),
        Some(Format::Acme)
    );
    assert_eq!(
        Format::detect(
            "id_job,id_array_job,id_array_task,id_user,kill_requid,nodes_alloc,nodelist,cpus_req,derived_ec,exit_code,gres_used,array_max_tasks,array_task_pending,constraints,flags,mem_req,partition,priority,state,timelimit,time_submit,time_eligible,time_start,time_end,time_suspended,track_steps,tres_alloc,tres_req,job_type"
        ),
        Some(Format::Supercloud)
    );
    assert_eq!(Format::detect("; Version: 2.2"), None);
    assert_eq!(
        Format::detect("1 0 10 100 4 -1 -1 4 200 -1 1 1 1 -1 1 -1 -1 -1"),
        None
    );
}
