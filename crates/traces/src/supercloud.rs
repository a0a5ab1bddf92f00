//! MIT Supercloud's Slurm scheduler log (`slurm-log.csv` of the MIT Supercloud Dataset, the
//! Datacenter Challenge release): slurmdbd's job table as CSV, columns as the dataset's intro
//! notebook prints them (`id_job, id_array_job, id_array_task, id_user, ..., nodes_alloc,
//! nodelist, cpus_req, ..., mem_req, partition, priority, state, timelimit, time_submit,
//! time_eligible, time_start, time_end, ..., tres_alloc, tres_req, job_type`); read by name.
//!
//! Mapping: `id_job` is the id; `id_user` the user; `partition` the partition; `state`
//! Slurm's state number (`enum job_states` of slurm.h, its low byte: 3 completed, 4
//! cancelled, 5 failed, 6 timeout, 7 node failure, 8 preempted, 9 boot failure, 10 deadline,
//! 11 out of memory; 0-2 not ended); `timelimit` the limit in minutes (4294967295, Slurm's
//! INFINITE: none); the times are Unix seconds (0: never). CPUs, memory (Slurm's MB, 2^20 bytes), nodes and GPUs
//! come from `tres_alloc` (`1=20,2=170000,4=1,1002=2`, keys of the dataset's
//! `tres-mapping.txt`: 1 cpu, 2 mem, 4 node, 1001 gpu:tesla, 1002 gpu:volta), else
//! `tres_req` for a job that never ran, else `cpus_req` and `nodes_alloc`; the GPU key names
//! the GPU type (`tesla`, `volta`). The log has no account.
//!
//! Zone: the times are instants; the site's daily cycle is read in America/New_York (MIT's
//! Lincoln Laboratory, Massachusetts), unless `--site-tz`.

use sacct::values::State;

use crate::build::{Builder, Row};
use crate::error::TraceError;
use crate::table::{Column, optional, required};
use crate::values::Stamp;
use crate::{Format, job_id};

pub(crate) const ZONE: Option<&str> = None;
pub(crate) const SITE_ZONE: &str = "America/New_York";

const SCHEMA: [Column; 13] = [
    required("id_job"),
    required("id_user"),
    optional("nodes_alloc"),
    optional("cpus_req"),
    optional("partition"),
    required("state"),
    optional("timelimit"),
    required("time_submit"),
    optional("time_eligible"),
    required("time_start"),
    required("time_end"),
    required("tres_alloc"),
    optional("tres_req"),
];
const ID_JOB: usize = 0;
const ID_USER: usize = 1;
const NODES_ALLOC: usize = 2;
const CPUS_REQ: usize = 3;
const PARTITION: usize = 4;
const STATE: usize = 5;
const TIMELIMIT: usize = 6;
const SUBMIT: usize = 7;
const ELIGIBLE: usize = 8;
const START: usize = 9;
const END: usize = 10;
const TRES_ALLOC: usize = 11;
const TRES_REQ: usize = 12;

/// Slurm's INFINITE time limit (minutes).
const INFINITE: u32 = u32::MAX;

/// The GPU TRES ids of the dataset's `tres-mapping.txt`, with their types.
const GPU_TRES: [(u64, &str); 2] = [(1001, "tesla"), (1002, "volta")];

/// Whether `header` is the Supercloud log's: slurmdbd's column names.
pub(crate) fn detect(header: &str) -> bool {
    crate::table::has_all(header, &SCHEMA)
}

/// A Slurm state number (`enum job_states`; flag bits above the low byte ignored).
fn state(code: u32) -> Option<State> {
    Some(match code & 0xff {
        0..=2 => State::NotEnded,
        3 => State::Completed,
        4 => State::Cancelled,
        5 => State::Failed,
        6 => State::Timeout,
        7 => State::NodeFail,
        8 => State::Preempted,
        9 => State::BootFail,
        10 => State::Deadline,
        11 => State::OutOfMemory,
        _ => return None,
    })
}

/// What a TRES list (`1=20,2=170000,1002=2`) holds: CPUs, memory MB, nodes, GPUs and their
/// type; `Err` names the entry that is not `id=count`.
#[derive(Debug, Default, PartialEq)]
struct Tres {
    cpus: Option<u32>,
    memory_mb: Option<u64>,
    nodes: Option<u32>,
    gpus: u32,
    gpu_type: &'static str,
}

fn tres(list: &str) -> Result<Tres, ()> {
    let mut tres = Tres::default();
    let b = list.as_bytes();
    let mut at = 0;
    // one pass over the bytes (this runs for every row): `key=value` items between commas
    while at < b.len() {
        let end = b[at..]
            .iter()
            .position(|&c| c == b',')
            .map_or(b.len(), |p| at + p);
        let item = b[at..end].trim_ascii();
        at = end + 1;
        if item.is_empty() {
            continue;
        }
        let eq = item.iter().position(|&c| c == b'=').ok_or(())?;
        let value = number(item[eq + 1..].trim_ascii()).ok_or(())?;
        let small = || u32::try_from(value).map_err(|_| ());
        // keys other than numbers (a TRES by name) are not the dataset's: ignored
        match number(item[..eq].trim_ascii()) {
            Some(1) => tres.cpus = Some(small()?),
            Some(2) => tres.memory_mb = Some(value),
            Some(4) => tres.nodes = Some(small()?),
            Some(key) => {
                if let Some((_, kind)) = GPU_TRES.iter().find(|(id, _)| *id == key) {
                    tres.gpus = tres.gpus.checked_add(small()?).ok_or(())?;
                    tres.gpu_type = kind;
                }
            }
            None => {}
        }
    }
    Ok(tres)
}

/// A whole number of at most 19 digits.
fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || digits.len() > 19 {
        return None;
    }
    digits.iter().try_fold(0u64, |n, &d| {
        d.is_ascii_digit().then(|| n * 10 + u64::from(d - b'0'))
    })
}

pub(crate) fn read(input: swf::Input, builder: &mut Builder) -> Result<(), TraceError> {
    let mut ordinal = 0;
    crate::read_csv(input, Format::Supercloud, &SCHEMA, builder, |f, builder| {
        ordinal += 1;
        let code = f.count(STATE)?.ok_or_else(|| {
            f.error(
                STATE,
                "a Slurm job state number (3 completed, 4 cancelled, 5 failed, ...)",
            )
        })?;
        let state = state(code).ok_or_else(|| {
            f.error(
                STATE,
                "a Slurm job state number 0-11 (3 completed, 4 cancelled, 5 failed, ...)",
            )
        })?;
        let time = |i: usize| -> Result<Option<Stamp>, TraceError> {
            Ok(f.unix(i)?.filter(|&t| t > 0).map(Stamp::Unix))
        };
        let start = time(START)?;
        let column = if start.is_some() || !f.has(TRES_REQ) {
            TRES_ALLOC
        } else {
            TRES_REQ
        };
        let expected = "a TRES list id=count,... (1=cpus,2=mem,4=nodes,1001/1002=gpus)";
        let mut used = tres(f.text(column)).map_err(|()| f.error(column, expected))?;
        if used.cpus.is_none() && column == TRES_ALLOC && f.has(TRES_REQ) {
            used = tres(f.text(TRES_REQ)).map_err(|()| f.error(TRES_REQ, expected))?;
        }
        let cpus = match used.cpus {
            Some(cpus) => cpus,
            None if f.has(CPUS_REQ) => f.count(CPUS_REQ)?.unwrap_or(0),
            None => 0,
        };
        let nodes = match used.nodes {
            Some(nodes) => nodes,
            None if f.has(NODES_ALLOC) => f.count(NODES_ALLOC)?.unwrap_or(0),
            None => 0,
        };
        let time_limit = if f.has(TIMELIMIT) {
            f.count(TIMELIMIT)?
                .filter(|&m| m != INFINITE)
                .map(|m| i64::from(m) * 60)
        } else {
            None
        };
        builder.push(Row {
            line: f.line,
            id: job_id(f.text(ID_JOB), ordinal),
            user: f.text(ID_USER),
            partition: f.text(PARTITION),
            submit: time(SUBMIT)?,
            eligible: if f.has(ELIGIBLE) {
                time(ELIGIBLE)?
            } else {
                None
            },
            start,
            end: time(END)?,
            time_limit,
            cpus,
            nodes,
            gpus: f64::from(used.gpus),
            gpu_type: used.gpu_type,
            // Slurm's megabytes are 2^20 bytes
            memory_mib: used.memory_mb.map(|mb| mb as f64),
            state,
            ..Row::default()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tres_lists_read_by_the_datasets_mapping() {
        assert_eq!(
            tres("1=20,2=170000,4=1,5=20,1002=2"),
            Ok(Tres {
                cpus: Some(20),
                memory_mb: Some(170000),
                nodes: Some(1),
                gpus: 2,
                gpu_type: "volta",
            })
        );
        assert_eq!(tres(""), Ok(Tres::default()));
        assert_eq!(tres("1=x"), Err(()));
        assert_eq!(tres("cpu"), Err(()));
    }
}
