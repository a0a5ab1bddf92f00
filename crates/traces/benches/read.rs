//! Reading the GPU-era trace formats against reading the same jobs as SWF, per job.
//!
//! `cargo bench -p sitesim-traces`. The jobs are two archive traces in `../shared/traces`
//! back to back (SDSC-BLUE and CTC-SP2, renumbered and shifted so they follow each other:
//! 309,784 jobs), written once into a temporary directory as plain SWF and in each CSV format
//! (Helios, Acme, MIT Supercloud, Alibaba PAI's task and job tables) with each job's
//! processors, a GPU count and its times. Measured: the SWF read whole (`swf::Trace::read`)
//! and each format read into jobs (`traces::read`: parsing, placing the times, counting, the
//! requeue and sort pass). The bar: each CSV format within 2x of SWF per job.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark without its traces cannot run
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn trace(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

/// The jobs that ran of two real traces, back to back.
fn jobs() -> Vec<swf::Record> {
    let mut all = Vec::new();
    let (mut offset, mut number) = (0i64, 0i64);
    for name in [
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "CTC-SP2-1996-3.1-cln.swf.gz",
    ] {
        let t = swf::Trace::read(trace(name)).unwrap();
        let mut last = 0;
        for mut r in t.records {
            if r.run_time < 0 || r.wait_time < 0 || r.allocated_processors <= 0 {
                continue;
            }
            number += 1;
            r.job_number = number;
            r.submit_time += offset;
            last = last.max(r.submit_time + r.wait_time + r.run_time);
            all.push(r);
        }
        offset = last + 3600;
    }
    all
}

/// A wall-clock time of second `t` after 2020-04-01 00:00:00.
fn clock(t: i64) -> String {
    let base = chrono::NaiveDate::from_ymd_opt(2020, 4, 1)
        .unwrap()
        .and_hms_opt(0, 0, 0)
        .unwrap();
    (base + chrono::Duration::seconds(t))
        .format("%Y-%m-%d %H:%M:%S")
        .to_string()
}

fn write_inputs(dir: &Path, jobs: &[swf::Record]) -> Vec<(&'static str, traces::Format, PathBuf)> {
    let swf_path = dir.join("jobs.swf");
    let mut header = swf::Header::new();
    header.push_field("MaxProcs", 1152);
    let file = std::io::BufWriter::new(std::fs::File::create(&swf_path).unwrap());
    let mut w = swf::SwfWriter::new(file, &header).unwrap();
    for r in jobs {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    let (mut helios, mut acme, mut supercloud, mut tasks, mut job_table) = (
        String::from(
            "job_id,user,vc,gpu_num,cpu_num,node_num,state,submit_time,start_time,end_time,duration,queue\n",
        ),
        String::from(
            "job_id,user,node_num,gpu_num,cpu_num,type,state,submit_time,start_time,end_time,duration,queue,gpu_time\n",
        ),
        String::from(
            "id_job,id_user,nodes_alloc,cpus_req,mem_req,partition,state,timelimit,time_submit,time_eligible,time_start,time_end,tres_alloc,tres_req\n",
        ),
        String::new(),
        String::new(),
    );
    for r in jobs {
        let (s, b, e) = (
            r.submit_time,
            r.submit_time + r.wait_time,
            r.submit_time + r.wait_time + r.run_time,
        );
        let (id, user, cpus, gpus) = (
            r.job_number,
            r.user_id,
            r.allocated_processors,
            r.allocated_processors % 9,
        );
        let (cs, cb, ce) = (clock(s), clock(b), clock(e));
        writeln!(
            helios,
            "{id},u{user},vc{},{gpus},{cpus},1,COMPLETED,{cs},{cb},{ce},{},{}",
            r.group_id, r.run_time, r.wait_time
        )
        .unwrap();
        writeln!(acme, "{id},u{user},1,{gpus},{cpus},Pretrain,COMPLETED,{cs}+08:00,{cb}+08:00,{ce}+08:00,{},{},{}", r.run_time, r.wait_time, r.run_time * gpus).unwrap();
        let u = 1_585_699_200;
        writeln!(supercloud, "{id},{user},1,{cpus},4096,p{},3,{},{},{},{},{},\"1={cpus},2=4096,4=1,1002={gpus}\",\"1={cpus},2=4096,4=1,1002={gpus}\"", r.queue, r.requested_time.max(60) / 60, u + s, u + s, u + b, u + e).unwrap();
        writeln!(job_table, "j{id},i{id},u{user},Terminated,{s}.0,{e}.0").unwrap();
        writeln!(
            tasks,
            "j{id},worker,1.0,Terminated,{b}.0,{e}.0,{}.0,8.0,{}.0,V100",
            100 * cpus,
            100 * gpus
        )
        .unwrap();
    }
    let put = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::File::create(&path)
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
        path
    };
    put("pai_job_table.csv", &job_table);
    vec![
        ("SWF read", traces::Format::Helios, swf_path),
        (
            "Helios read",
            traces::Format::Helios,
            put("cluster_log.csv", &helios),
        ),
        (
            "Acme read",
            traces::Format::Acme,
            put("trace_seren.csv", &acme),
        ),
        (
            "Supercloud read",
            traces::Format::Supercloud,
            put("slurm-log.csv", &supercloud),
        ),
        (
            "Alibaba PAI read",
            traces::Format::AlibabaPai,
            put("pai_task_table.csv", &tasks),
        ),
    ]
}

fn read(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let jobs = jobs();
    let inputs = write_inputs(dir.path(), &jobs);
    let options = sacct::SacctOptions {
        resources: vec!["gres/gpu".into(), "mem".into()],
        ..Default::default()
    };
    let mut group = c.benchmark_group("jobs");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(15));
    group.throughput(Throughput::Elements(jobs.len() as u64));
    for (name, format, path) in &inputs {
        if *name == "SWF read" {
            group.bench_function(*name, |b| {
                b.iter(|| swf::Trace::read(path).unwrap().records.len())
            });
        } else {
            group.bench_function(*name, |b| {
                b.iter(|| traces::read(path, *format, &options).unwrap().jobs.len())
            });
        }
    }
    group.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
