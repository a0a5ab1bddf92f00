//! Alibaba's PAI GPU trace of 2020 (alibaba/clusterdata, `cluster-trace-gpu-v2020`): CSV
//! tables without a header row (their columns are in `.header` files beside them), as the
//! trace's README documents them. The reader takes the task table, `pai_task_table.csv`
//! (`job_name, task_name, inst_num, status, start_time, end_time, plan_cpu, plan_mem,
//! plan_gpu, gpu_type`), and the job table beside it, `pai_job_table.csv` (`job_name, inst_id,
//! user, status, start_time, end_time`; or `.csv.gz`), for each job's user and submit time.
//! Either file may be given: the other is found in the same directory.
//!
//! Mapping: each **task** (a job's parameter servers, its workers, ...) is a job of the
//! replay, its instances started together: `inst_num` instances, each of `plan_cpu` percent of
//! a core (600: 6 cores), `plan_mem` GB and `plan_gpu` percent of a GPU (50: half a GPU; the
//! total rounded up to whole GPUs and counted as `fractional_gpus`); CPUs are rounded up too;
//! `gpu_type` (`MISC`, `T4`, `P100`, `V100`, `V100M32`) the GPU type. The task's submit time
//! is its job's `start_time` in the job table (the job's submission), its start and end its
//! own; `status` `Terminated` is completed, `Failed` failed, `Running` and `Waiting` not ended
//! (dropped). Times are seconds, shifted by a constant; 0 or empty is missing. Ids are hashes:
//! tasks are numbered by row. The job table's user is the user; there is no account,
//! partition or time limit.
//!
//! Zone: the times are instants whose dates are fake, but whose time of day and day of the
//! week are Asia/Shanghai's (UTC+8), as the README states: the site's daily cycle is read there.

use std::path::{Path, PathBuf};

use rustc_hash::FxHashMap;
use sacct::values::State;

use crate::build::{Builder, Row};
use crate::error::TraceError;
use crate::table::{self, Column, required};
use crate::values::{self, Stamp};
use crate::{Format, MAX_ROWS};

pub(crate) const ZONE: Option<&str> = None;
pub(crate) const SITE_ZONE: &str = "Asia/Shanghai";

/// The task table's columns, in order (`pai_task_table.header`).
const TASK: [Column; 10] = [
    required("job_name"),
    required("task_name"),
    required("inst_num"),
    required("status"),
    required("start_time"),
    required("end_time"),
    required("plan_cpu"),
    required("plan_mem"),
    required("plan_gpu"),
    required("gpu_type"),
];
const JOB_NAME: usize = 0;
const INST_NUM: usize = 2;
const STATUS: usize = 3;
const START: usize = 4;
const END: usize = 5;
const PLAN_CPU: usize = 6;
const PLAN_MEM: usize = 7;
const PLAN_GPU: usize = 8;
const GPU_TYPE: usize = 9;

/// The job table's columns, in order (`pai_job_table.header`).
const JOB: [Column; 6] = [
    required("job_name"),
    required("inst_id"),
    required("user"),
    required("status"),
    required("start_time"),
    required("end_time"),
];
const JOB_USER: usize = 2;
const JOB_START: usize = 4;

const TASK_FILE: &str = "pai_task_table.csv";
const JOB_FILE: &str = "pai_job_table.csv";

/// A status of the trace.
fn state(text: &str) -> Option<State> {
    Some(match text.trim_ascii() {
        "Terminated" => State::Completed,
        "Failed" => State::Failed,
        "Running" | "Waiting" => State::NotEnded,
        _ => return None,
    })
}

/// The file named `name` beside `path` (or its `.gz`).
fn beside(path: &Path, name: &str) -> Option<PathBuf> {
    let dir = path.parent().unwrap_or(Path::new("."));
    [name.to_string(), format!("{name}.gz")]
        .into_iter()
        .map(|n| dir.join(n))
        .find(|p| p.is_file())
}

/// Every row of a table without a header row, each checked to have `schema`'s fields.
fn rows(
    input: swf::Input,
    schema: &[Column],
    mut row: impl FnMut(&table::Fields<'_>) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let source_name = input.name().to_string();
    let mut reader = table::reader(input, false);
    let positions: Vec<Option<usize>> = (0..schema.len()).map(Some).collect();
    let mut record = csv::StringRecord::new();
    let mut line = 0;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                return Err(table::csv_error(
                    &source_name,
                    Format::AlibabaPai,
                    line + 1,
                    e,
                ));
            }
        }
        line = record.position().map_or(line + 1, |p| p.line());
        if record.len() == 1 && record.get(0).is_some_and(|f| f.trim_ascii().is_empty()) {
            continue;
        }
        if line > MAX_ROWS {
            return Err(TraceError::TooManyRows {
                source_name,
                line,
                limit: MAX_ROWS,
            });
        }
        if record.len() != schema.len() {
            return Err(TraceError::FieldCount {
                source_name,
                line,
                format: Format::AlibabaPai,
                found: record.len(),
                expected: schema.len(),
                columns: schema.iter().map(|c| c.name).collect::<Vec<_>>().join(","),
            });
        }
        row(&table::Fields {
            record: &record,
            positions: &positions,
            schema,
            line,
            source_name: &source_name,
        })?;
    }
    Ok(())
}

/// The job table: each job's user (an index of `users`) and submit time (Unix seconds,
/// shifted), by job name.
#[derive(Default)]
struct Jobs {
    /// Names of up to 31 hexadecimal digits (the trace's are 24), by their value and length:
    /// no string kept for them.
    by_hex: FxHashMap<u128, (u32, Option<i64>)>,
    /// Other names.
    by_name: FxHashMap<Box<str>, (u32, Option<i64>)>,
    users: Vec<String>,
}

/// A name of at most 31 hexadecimal digits as a number that tells it from every other name:
/// its value, and its length in the top 4 bits (`0a` is not `a`).
fn hex_key(name: &str) -> Option<u128> {
    if name.is_empty() || name.len() > 31 {
        return None;
    }
    let mut value = 0u128;
    for b in name.bytes() {
        let digit = match b {
            b'0'..=b'9' => b - b'0',
            b'a'..=b'f' => b - b'a' + 10,
            b'A'..=b'F' => b - b'A' + 10,
            _ => return None,
        };
        value = value << 4 | u128::from(digit);
    }
    Some(value | ((name.len() as u128) << 124))
}

impl Jobs {
    /// The user and submit time of the job named `name`.
    fn get(&self, name: &str) -> Option<(&str, Option<i64>)> {
        let &(user, submit) = match hex_key(name) {
            Some(key) => self.by_hex.get(&key)?,
            None => self.by_name.get(name)?,
        };
        Some((self.users[user as usize].as_str(), submit))
    }

    fn insert(&mut self, name: &str, job: (u32, Option<i64>)) {
        match hex_key(name) {
            Some(key) => self.by_hex.insert(key, job),
            None => self.by_name.insert(name.into(), job),
        };
    }
}

fn read_jobs(input: swf::Input) -> Result<Jobs, TraceError> {
    let mut jobs = Jobs::default();
    let mut user_ids: FxHashMap<String, u32> = FxHashMap::default();
    rows(input, &JOB, |f| {
        let submit = f.unix(JOB_START)?.filter(|&t| t > 0);
        let name = f.text(JOB_USER);
        let user = match user_ids.get(name) {
            Some(&id) => id,
            None => {
                let id = u32::try_from(jobs.users.len()).unwrap_or(u32::MAX);
                jobs.users.push(name.to_string());
                user_ids.insert(name.to_string(), id);
                id
            }
        };
        jobs.insert(f.text(JOB_NAME), (user, submit));
        Ok(())
    })?;
    Ok(jobs)
}

pub(crate) fn read(input: swf::Input, builder: &mut Builder) -> Result<(), TraceError> {
    let path = PathBuf::from(input.name());
    let is_job_table = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n.starts_with("pai_job_table"));
    let companion = |name: &str, what: &'static str| {
        beside(&path, name).ok_or_else(|| TraceError::Companion {
            path: path
                .parent()
                .unwrap_or(Path::new("."))
                .join(name)
                .display()
                .to_string(),
            format: Format::AlibabaPai,
            what,
            error: Box::new(TraceError::Read {
                source_name: name.to_string(),
                line: 0,
                error: "not found beside the file given".to_string(),
            }),
        })
    };
    let open = |p: &Path, what: &'static str| {
        swf::Input::open(p).map_err(|e| TraceError::Companion {
            path: p.display().to_string(),
            format: Format::AlibabaPai,
            what,
            error: Box::new(e.into()),
        })
    };
    let (jobs, tasks) = if is_job_table {
        let tasks = companion(TASK_FILE, "task table")?;
        (input, open(&tasks, "task table")?)
    } else {
        let jobs = companion(JOB_FILE, "job table (users and submit times)")?;
        (open(&jobs, "job table (users and submit times)")?, input)
    };
    read_tables(jobs, tasks, builder)
}

/// The task table's jobs, with the job table's users and submit times.
pub(crate) fn read_tables(
    jobs: swf::Input,
    tasks: swf::Input,
    builder: &mut Builder,
) -> Result<(), TraceError> {
    let jobs = read_jobs(jobs)?;
    read_tasks(tasks, &jobs, builder)
}

fn read_tasks(input: swf::Input, jobs: &Jobs, builder: &mut Builder) -> Result<(), TraceError> {
    let mut ordinal = 0;
    rows(input, &TASK, |f| {
        ordinal += 1;
        builder.count_line();
        let instances = f64::from(f.count(INST_NUM)?.unwrap_or(1));
        let state = state(f.text(STATUS))
            .ok_or_else(|| f.error(STATUS, "a status (Terminated, Failed, Running, Waiting)"))?;
        let time = |i: usize| -> Result<Option<Stamp>, TraceError> {
            Ok(f.unix(i)?.filter(|&t| t > 0).map(Stamp::Unix))
        };
        let start = time(START)?;
        let (user, submit) = jobs.get(f.text(JOB_NAME)).unwrap_or(("", None));
        // a task whose job is not in the job table was submitted when it started, as far as
        // the trace tells
        let submit = submit.map(Stamp::Unix).or(start);
        let cpus = f.amount(PLAN_CPU)?.unwrap_or(0.0) / 100.0 * instances;
        let gpus = f.amount(PLAN_GPU)?.unwrap_or(0.0) / 100.0 * instances;
        let memory = f.amount(PLAN_MEM)?.map(|gb| gb * 1024.0 * instances);
        if cpus.ceil() > f64::from(u32::MAX) {
            return Err(f.error(PLAN_CPU, "at most 429496729500 in all (4294967295 cores)"));
        }
        let gpu_type = f.text(GPU_TYPE).trim_ascii();
        builder.push(Row {
            line: f.line,
            id: ordinal,
            user,
            submit,
            start,
            end: time(END)?,
            cpus: (cpus.ceil() as u32).max(1),
            gpus,
            gpu_type: if values::is_missing(gpu_type) {
                ""
            } else {
                gpu_type
            },
            memory_mib: memory,
            state,
            ..Row::default()
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_names_are_keys_that_tell_every_name_apart() {
        assert_eq!(hex_key("a"), Some(0xa | (1 << 124)));
        assert_ne!(hex_key("0a"), hex_key("a"));
        assert_eq!(hex_key("+a"), None);
        assert_eq!(hex_key("worker"), None);
        assert_eq!(hex_key(&"f".repeat(32)), None);
        let mut jobs = Jobs::default();
        jobs.users.push("u".into());
        jobs.insert("4f057009a5d481acec67b088", (0, Some(5)));
        jobs.insert("job-7", (0, Some(6)));
        assert_eq!(jobs.get("4f057009a5d481acec67b088"), Some(("u", Some(5))));
        assert_eq!(jobs.get("04f057009a5d481acec67b088"), None);
        assert_eq!(jobs.get("job-7"), Some(("u", Some(6))));
    }
}
