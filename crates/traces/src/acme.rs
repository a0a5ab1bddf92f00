//! Shanghai AI Lab's Acme traces (InternLM/AcmeTrace, NSDI '24): `trace_seren.csv` and
//! `trace_kalos.csv`, as the dataset's README documents them. Seren: `job_id, user, node_num,
//! gpu_num, cpu_num, type, state, submit_time, start_time, end_time, duration, queue,
//! gpu_time`; Kalos adds `mem_per_pod_GB`, `shared_mem_per_pod`, `fail_time` and `stop_time`.
//!
//! Mapping: `job_id` is the id where it is a number (Seren's; Kalos's are strings, numbered by
//! row); `user` the user; `node_num`, `gpu_num`, `cpu_num` the nodes, GPUs and CPUs; Kalos's
//! `mem_per_pod_GB` times `node_num` the job's memory (a pod per node: a choice, the README
//! gives the memory per pod only); `state` Slurm's words. The end is `end_time`, else
//! `fail_time` (a failed job) or `stop_time` (a cancelled one) where it is empty. `type` (the
//! workload: Eval, Pretrain, SFT, MLLM, Debug, Other), `duration`, `queue` and `gpu_time` are
//! not read. The traces have no virtual cluster, account or partition, no time limit and no GPU
//! type.
//!
//! Zone: each time carries its offset (Seren's `+08:00`, Kalos's `+00:00`), so each is an
//! instant; a time without one is read in Asia/Shanghai (the lab's), unless `--tz`.

use crate::build::{Builder, Row};
use crate::error::TraceError;
use crate::table::{Column, optional, required};
use crate::{Format, job_id};

pub(crate) const ZONE: Option<&str> = Some("Asia/Shanghai");
pub(crate) const SITE_ZONE: &str = "Asia/Shanghai";

const SCHEMA: [Column; 13] = [
    required("job_id"),
    required("user"),
    required("node_num"),
    required("gpu_num"),
    required("cpu_num"),
    optional("mem_per_pod_GB"),
    required("type"),
    required("state"),
    required("submit_time"),
    required("start_time"),
    required("end_time"),
    optional("fail_time"),
    optional("stop_time"),
];
const JOB_ID: usize = 0;
const USER: usize = 1;
const NODE_NUM: usize = 2;
const GPU_NUM: usize = 3;
const CPU_NUM: usize = 4;
const MEMORY_PER_POD: usize = 5;
const STATE: usize = 7;
const SUBMIT: usize = 8;
const START: usize = 9;
const END: usize = 10;
const FAIL: usize = 11;
const STOP: usize = 12;

/// Whether `header` is an Acme header row: its columns, with `type`, and no `vc` (Helios's).
pub(crate) fn detect(header: &str) -> bool {
    crate::table::has_all(header, &SCHEMA) && !crate::table::has_all(header, &[required("vc")])
}

pub(crate) fn read(input: swf::Input, builder: &mut Builder) -> Result<(), TraceError> {
    let mut ordinal = 0;
    crate::read_csv(input, Format::Acme, &SCHEMA, builder, |f, builder| {
        ordinal += 1;
        let nodes = f.count(NODE_NUM)?.unwrap_or(0);
        let gpus = f.count(GPU_NUM)?.unwrap_or(0);
        let cpus = f.count(CPU_NUM)?.unwrap_or(0);
        let memory_mib = if f.has(MEMORY_PER_POD) {
            f.amount(MEMORY_PER_POD)?
                .map(|gb| gb * 1024.0 * f64::from(nodes.max(1)))
        } else {
            None
        };
        let state = crate::helios::state(f.text(STATE)).ok_or_else(|| {
            f.error(
                STATE,
                "a job state (COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL)",
            )
        })?;
        let mut end = f.date_time(END)?;
        for other in [FAIL, STOP] {
            if end.is_none() && f.has(other) {
                end = f.date_time(other)?;
            }
        }
        builder.push(Row {
            line: f.line,
            id: job_id(f.text(JOB_ID), ordinal),
            user: f.text(USER),
            submit: f.date_time(SUBMIT)?,
            start: f.date_time(START)?,
            end,
            cpus,
            nodes,
            gpus: f64::from(gpus),
            memory_mib,
            state,
            ..Row::default()
        })
    })
}
