//! The modern public traces (`--format helios|philly|alibaba-pai|acme|supercloud`): the same
//! 40 GPU jobs written in each format replay under EASY and the Slurm model on a slurm.conf's
//! GPU nodes; each job holds the GPUs its trace gives, no node ever holds more than it has,
//! jobs wait for GPUs, and `convert` and `fit` take each format too.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use crate::common::{column, scratch, sitesim, stderr, stdout, table, write_file};
use crate::nodes_cli::nodes_within_capacity;

/// Two GPU nodes of 16 CPUs, 64,000 MiB and 8 untyped GPUs: 16 GPUs in all.
const CONF: &str = "\
ClusterName=gpus
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
NodeName=g[1-2] CPUs=16 RealMemory=64000 Gres=gpu:8
PartitionName=all Nodes=ALL Default=YES MaxTime=UNLIMITED
";

/// The workload: job i (from 0) is submitted 60 i s after the start, waits 10 s in the trace,
/// runs 600 + (37 i mod 1800) s on one node with [1, 2, 4, 8][i mod 4] GPUs, 2 CPUs and 4 GiB
/// a GPU, by user i mod 5.
struct Job {
    submit: i64,
    run: i64,
    gpus: u32,
    user: u32,
}

/// A workload of sessions to fit: each of 5 users submits 16 jobs, each 300 s after the
/// previous one ended, with a 3-hour break after every fourth.
fn sessions() -> Vec<Job> {
    let mut jobs = Vec::new();
    for user in 0..5u32 {
        let mut t = 7 * i64::from(user);
        for k in 0..16i64 {
            let run = 600 + 97 * ((k + i64::from(user)) % 7);
            jobs.push(Job {
                submit: t,
                run,
                gpus: [1, 2, 4, 8][(k % 4) as usize],
                user,
            });
            t += 10 + run + if k % 4 == 3 { 3 * 3600 } else { 300 };
        }
    }
    jobs.sort_by_key(|j| j.submit);
    jobs
}

fn jobs() -> Vec<Job> {
    (0..40)
        .map(|i| Job {
            submit: 60 * i,
            run: 600 + (37 * i) % 1800,
            gpus: [1, 2, 4, 8][i as usize % 4],
            user: (i % 5) as u32,
        })
        .collect()
}

/// A local time `s` seconds after 2021-03-01 08:00:00.
fn local(s: i64) -> String {
    let base = chrono::NaiveDate::from_ymd_opt(2021, 3, 1)
        .unwrap()
        .and_hms_opt(8, 0, 0)
        .unwrap();
    (base + chrono::Duration::seconds(s))
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

/// The workload in `format`'s files, written into `dir`; the path to give.
fn write(dir: &Path, format: &str, jobs: &[Job]) -> String {
    let mut text = String::new();
    match format {
        "helios" => {
            text.push_str("job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n");
            for (i, j) in jobs.iter().enumerate() {
                let (s, b, e) = (j.submit, j.submit + 10, j.submit + 10 + j.run);
                writeln!(
                    text,
                    "{},u{},vc{},{},{},1,COMPLETED,{},{},{},{},10",
                    1000 + i,
                    j.user,
                    j.user % 2,
                    j.gpus,
                    2 * j.gpus,
                    local(s),
                    local(b),
                    local(e),
                    j.run
                )
                .unwrap();
            }
            write_file(dir, "cluster_log.csv", text.as_bytes())
        }
        "acme" => {
            text.push_str("job_id,user,node_num,gpu_num,cpu_num,mem_per_pod_GB,shared_mem_per_pod,type,state,submit_time,start_time,end_time,fail_time,stop_time,duration,queue,gpu_time\n");
            for (i, j) in jobs.iter().enumerate() {
                let (s, b, e) = (j.submit, j.submit + 10, j.submit + 10 + j.run);
                writeln!(
                    text,
                    "dlc{i},u{},1,{},{},{},0.0,Pretrain,COMPLETED,{}+08:00,{}+08:00,{}+08:00,,,{},10.0,{}",
                    j.user,
                    j.gpus,
                    2 * j.gpus,
                    4 * j.gpus,
                    local(s),
                    local(b),
                    local(e),
                    j.run,
                    j.run * i64::from(j.gpus)
                )
                .unwrap();
            }
            write_file(dir, "trace_kalos.csv", text.as_bytes())
        }
        "philly" => {
            let items: Vec<String> = jobs
                .iter()
                .enumerate()
                .map(|(i, j)| {
                    let gpus: Vec<String> = (0..j.gpus).map(|g| format!("\"gpu{g}\"")).collect();
                    format!(
                        "{{\"status\": \"Pass\", \"vc\": \"vc{}\", \"jobid\": \"application_1_{i}\", \"attempts\": [{{\"start_time\": \"{}\", \"end_time\": \"{}\", \"detail\": [{{\"ip\": \"m1\", \"gpus\": [{}]}}]}}], \"submitted_time\": \"{}\", \"user\": \"u{}\"}}",
                        j.user % 2,
                        local(j.submit + 10),
                        local(j.submit + 10 + j.run),
                        gpus.join(", "),
                        local(j.submit),
                        j.user
                    )
                })
                .collect();
            text = format!("[\n{}\n]\n", items.join(",\n"));
            write_file(dir, "cluster_job_log", text.as_bytes())
        }
        "alibaba-pai" => {
            let base = 4_550_000;
            let mut job_table = String::new();
            for (i, j) in jobs.iter().enumerate() {
                let (s, b, e) = (
                    base + j.submit,
                    base + j.submit + 10,
                    base + j.submit + 10 + j.run,
                );
                writeln!(
                    job_table,
                    "job{i:04},inst{i:04},u{},Terminated,{s}.0,{e}.0",
                    j.user
                )
                .unwrap();
                writeln!(
                    text,
                    "job{i:04},worker,1.0,Terminated,{b}.0,{e}.0,{}.0,{}.0,{}.0,V100",
                    200 * j.gpus,
                    4 * j.gpus,
                    100 * j.gpus
                )
                .unwrap();
            }
            write_file(dir, "pai_job_table.csv", job_table.as_bytes());
            write_file(dir, "pai_task_table.csv", text.as_bytes())
        }
        "supercloud" => {
            text.push_str("id_job,id_user,nodes_alloc,cpus_req,mem_req,partition,state,timelimit,time_submit,time_eligible,time_start,time_end,tres_alloc,tres_req\n");
            let base = 1_614_585_600;
            for (i, j) in jobs.iter().enumerate() {
                let (s, b, e) = (
                    base + j.submit,
                    base + j.submit + 10,
                    base + j.submit + 10 + j.run,
                );
                let tres = format!(
                    "\"1={},2={},4=1,1002={}\"",
                    2 * j.gpus,
                    4096 * j.gpus,
                    j.gpus
                );
                writeln!(
                    text,
                    "{},{},1,{},{},all,3,60,{s},{s},{b},{e},{tres},{tres}",
                    100 + i,
                    j.user,
                    2 * j.gpus,
                    4096 * j.gpus
                )
                .unwrap();
            }
            write_file(dir, "slurm-log.csv", text.as_bytes())
        }
        other => panic!("no writer of {other}"),
    }
}

const FORMATS: [&str; 5] = ["helios", "philly", "alibaba-pai", "acme", "supercloud"];

#[test]
fn every_format_replays_under_easy_and_the_slurm_model_with_its_gpus_scheduled() {
    let (tmp, _) = scratch();
    let dir = tmp.path();
    let conf = write_file(dir, "slurm.conf", CONF.as_bytes());
    let expected = jobs();
    for format in FORMATS {
        let sub = dir.join(format);
        std::fs::create_dir_all(&sub).unwrap();
        let trace = write(&sub, format, &expected);
        for scheduler in ["easy", "slurm"] {
            let out = sub.join(scheduler);
            let run = sitesim(&[
                "-q",
                "replay",
                &trace,
                "--format",
                format,
                "--slurm-conf",
                &conf,
                "--scheduler",
                scheduler,
                "--out",
                &out.display().to_string(),
            ]);
            assert!(
                run.status.success(),
                "{format} {scheduler}: {}",
                stderr(&run)
            );
            let (jh, rows) = table(&out.join("jobs.csv"));
            assert_eq!(rows.len(), 40, "{format} {scheduler}: every job ran");
            // jobs are in submit order: the i-th record is the i-th job
            let mut by_submit: Vec<&Vec<String>> = rows.iter().collect();
            let n = |r: &Vec<String>, c: &str| r[column(&jh, c)].parse::<i64>().unwrap();
            by_submit.sort_by_key(|r| (n(r, "submit"), n(r, "job_id")));
            let mut waited = 0;
            for (job, row) in expected.iter().zip(&by_submit) {
                assert_eq!(n(row, "submit"), job.submit, "{format} {scheduler}");
                assert_eq!(n(row, "runtime"), job.run, "{format} {scheduler}");
                assert_eq!(
                    n(row, "gres/gpu"),
                    i64::from(job.gpus),
                    "{format} {scheduler}"
                );
                waited += i64::from(n(row, "wait") > 0);
            }
            assert!(
                waited > 5,
                "{format} {scheduler}: only {waited} jobs waited for GPUs"
            );
            // no node ever holds more CPUs, memory or GPUs than it has
            let (held_by, _) = nodes_within_capacity(&out, &|_| [16, 64000, 8]);
            assert_eq!(held_by.len(), 40, "{format} {scheduler}");
        }
    }
}

#[test]
fn every_format_converts_and_fits_and_states_its_zone() {
    let (tmp, _) = scratch();
    let dir = tmp.path();
    let zones = BTreeMap::from([
        ("helios", "Asia/Shanghai"),
        ("philly", "America/Los_Angeles"),
        ("alibaba-pai", "Asia/Shanghai"),
        ("acme", "Asia/Shanghai"),
        ("supercloud", "America/New_York"),
    ]);
    for format in FORMATS {
        let sub = dir.join(format);
        std::fs::create_dir_all(&sub).unwrap();
        let trace = write(&sub, format, &sessions());
        let out = sub.join("converted");
        let run = sitesim(&[
            "convert",
            &trace,
            "--format",
            format,
            "--out",
            &out.display().to_string(),
        ]);
        assert!(run.status.success(), "{format}: {}", stderr(&run));
        let swf = std::fs::read_to_string(out.join("trace.swf")).unwrap();
        assert!(
            swf.contains(&format!("; TimeZoneString: {}", zones[format])),
            "{format}: {}",
            &swf[..swf.len().min(2000)]
        );
        assert!(swf.contains("converted from its"), "{format}");
        let records = swf.lines().filter(|l| !l.starts_with(';')).count();
        assert_eq!(records, 80, "{format}");
        let requests = std::fs::read_to_string(out.join("requests.csv")).unwrap();
        assert_eq!(requests.lines().count(), 81, "{format}: {requests}");
        // a format told from its header row reads as when named: its zone too
        if ["helios", "acme", "supercloud"].contains(&format) {
            let told = sub.join("told");
            let run = sitesim(&["convert", &trace, "--out", &told.display().to_string()]);
            assert!(run.status.success(), "{format}: {}", stderr(&run));
            assert_eq!(
                std::fs::read_to_string(told.join("trace.swf")).unwrap(),
                swf,
                "{format}"
            );
        }
        // the converted SWF with its requests replays as the trace itself
        let model = sub.join("model");
        let run = sitesim(&[
            "fit",
            &trace,
            "--format",
            format,
            "--out",
            &model.display().to_string(),
        ]);
        assert!(
            run.status.success(),
            "{format}: {}{}",
            stdout(&run),
            stderr(&run)
        );
        let files: Vec<String> = crate::common::files_below(&model)
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        for name in [
            "parameters.csv",
            "continue.csv",
            "think_time.csv",
            "resources.csv",
        ] {
            assert!(
                files.iter().any(|f| f == name),
                "{format}: {name} not in {files:?}"
            );
        }
    }
}
