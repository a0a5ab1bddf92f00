//! SenseTime's Helios traces (`cluster_log.csv` of each cluster; only Venus is public now), as
//! the dataset's README (S-Lab-System-Group/HeliosData) documents them: `job_id, user, vc,
//! gpu_num, cpu_num, node_num, state, submit_time, start_time, end_time, duration, queue`.
//!
//! Mapping: `job_id` (Slurm's, in submission order) is the id; `user` the user; `vc` (a
//! virtual cluster: a group's share of the cluster's nodes) both the account and the
//! partition; `gpu_num`, `cpu_num`, `node_num` the GPUs, CPUs and nodes; `state` Slurm's
//! (`COMPLETED`, `CANCELLED`, `FAILED`, `TIMEOUT`, `NODE_FAIL`); the three times are local
//! times `YYYY-MM-DD HH:MM:SS`. `duration` and `queue` are derived (end - start, start -
//! submit) and not read. The trace logs no time limit (no estimate), no memory and no GPU type.
//!
//! Zone: the README does not state one. The clusters are SenseTime's, in China, so the times
//! are read as Asia/Shanghai (UTC+8, no daylight saving): a choice, `--tz` overrides it.

use sacct::values::State;

use crate::build::{Builder, Row};
use crate::error::TraceError;
use crate::table::{Column, optional, required};
use crate::{Format, job_id};

pub(crate) const ZONE: Option<&str> = Some("Asia/Shanghai");
pub(crate) const SITE_ZONE: &str = "Asia/Shanghai";

const SCHEMA: [Column; 10] = [
    required("job_id"),
    required("user"),
    required("vc"),
    required("gpu_num"),
    required("cpu_num"),
    optional("node_num"),
    required("state"),
    required("submit_time"),
    required("start_time"),
    required("end_time"),
];
const JOB_ID: usize = 0;
const USER: usize = 1;
const VC: usize = 2;
const GPU_NUM: usize = 3;
const CPU_NUM: usize = 4;
const NODE_NUM: usize = 5;
const STATE: usize = 6;
const SUBMIT: usize = 7;
const START: usize = 8;
const END: usize = 9;

/// Whether `header` is a Helios header row: its columns, with `vc` and `queue`, which Acme's
/// lack.
pub(crate) fn detect(header: &str) -> bool {
    crate::table::has_all(header, &SCHEMA) && crate::table::has_all(header, &[required("queue")])
}

/// A Helios state: Slurm's words (`SUSPENDED`, seen once, and anything unknown: an error).
pub(crate) fn state(text: &str) -> Option<State> {
    match text.trim_ascii() {
        "RUNNING" | "PENDING" | "SUSPENDED" => Some(State::NotEnded),
        word => State::parse(word),
    }
}

pub(crate) fn read(input: swf::Input, builder: &mut Builder) -> Result<(), TraceError> {
    let mut ordinal = 0;
    crate::read_csv(input, Format::Helios, &SCHEMA, builder, |f, builder| {
        ordinal += 1;
        let gpus = f.count(GPU_NUM)?.unwrap_or(0);
        let cpus = f.count(CPU_NUM)?.unwrap_or(0);
        let nodes = if f.has(NODE_NUM) {
            f.count(NODE_NUM)?.unwrap_or(0)
        } else {
            0
        };
        let state = state(f.text(STATE)).ok_or_else(|| {
            f.error(
                STATE,
                "a job state (COMPLETED, CANCELLED, FAILED, TIMEOUT, NODE_FAIL)",
            )
        })?;
        builder.push(Row {
            line: f.line,
            id: job_id(f.text(JOB_ID), ordinal),
            user: f.text(USER),
            account: f.text(VC),
            partition: f.text(VC),
            submit: f.date_time(SUBMIT)?,
            start: f.date_time(START)?,
            end: f.date_time(END)?,
            cpus,
            nodes,
            gpus: f64::from(gpus),
            state,
            ..Row::default()
        })
    })
}
