//! Microsoft's Philly traces (msr-fiddle/philly-traces, ATC '19): `cluster_job_log`, one JSON
//! array of jobs, each `{status, vc, jobid, attempts, submitted_time, user}`; an attempt is
//! `{start_time, end_time, detail: [{ip, gpus: ["gpu0", ...]}]}` (a server and the GPUs it
//! gave), as the repository's README and analysis notebook document them. The array is read
//! job by job (streamed): memory does not grow with the log.
//!
//! Mapping: `jobid` (`application_1506638472019_14199`) is numbered by its place in the log;
//! `user` the user; `vc` (a virtual cluster) the account and the partition; `submitted_time`
//! the submit time. Jobs are retried: the job started at its **last** attempt, and ran that
//! attempt's run (its earlier attempts counted as `earlier_attempts`, their runs not replayed:
//! the time they held GPUs is lost to the replay); a job without attempts never started. Its
//! GPUs are those of the attempt's servers (`detail`, all of them), its nodes the servers; the
//! log records no CPUs, so a job's processors are its GPUs (at least one): a choice. `status`
//! `Pass` is completed, `Killed` cancelled, `Failed` failed; a last attempt without an end is
//! a job still running when the log was cut (dropped). Missing times are `"None"` (the
//! notebook's reading), `null` or empty. No time limit, memory or GPU type is logged.
//!
//! Zone: the job log states none. Its sibling utilisation logs write US Pacific times (`PDT`,
//! `PST`), so its times are read as America/Los_Angeles: a choice, `--tz` overrides it.

use std::fmt;

use sacct::values::State;
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};

use crate::Format;
use crate::build::{Builder, Row};
use crate::error::TraceError;
use crate::values::{self, Stamp};

pub(crate) const ZONE: Option<&str> = Some("America/Los_Angeles");
pub(crate) const SITE_ZONE: &str = "America/Los_Angeles";

/// A job of the log, as written.
#[derive(Deserialize)]
struct Job {
    status: String,
    #[serde(default)]
    vc: Option<String>,
    #[allow(dead_code)]
    #[serde(default)]
    jobid: Option<String>,
    #[serde(default)]
    attempts: Vec<Attempt>,
    #[serde(default)]
    submitted_time: Option<String>,
    #[serde(default)]
    user: Option<String>,
}

#[derive(Deserialize)]
struct Attempt {
    #[serde(default)]
    start_time: Option<String>,
    #[serde(default)]
    end_time: Option<String>,
    #[serde(default)]
    detail: Vec<Server>,
}

#[derive(Deserialize)]
struct Server {
    #[serde(default)]
    gpus: Vec<String>,
}

/// A Philly status.
fn state(status: &str) -> Option<State> {
    Some(match status {
        "Pass" => State::Completed,
        "Killed" => State::Cancelled,
        "Failed" => State::Failed,
        "Running" | "Queued" | "Waiting" => State::NotEnded,
        _ => return None,
    })
}

/// A time of the log (`2017-10-07 01:12:09`, or `None`).
fn time(text: Option<&str>, what: &str) -> Result<Option<Stamp>, String> {
    match text {
        None => Ok(None),
        Some(text) => values::date_time(text).map_err(|()| {
            format!(
                "{what} {:?} is not {}",
                crate::error::shown(text),
                values::DATE_TIME
            )
        }),
    }
}

/// The array's elements, each handed to the builder as it is read.
struct Jobs<'b> {
    builder: &'b mut Builder,
    count: u64,
    failure: Option<TraceError>,
}

impl<'de> Visitor<'de> for &mut Jobs<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON array of jobs")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while let Some(job) = seq.next_element::<Job>()? {
            self.count += 1;
            if self.count > crate::MAX_ROWS {
                return Err(de::Error::custom(format!(
                    "more than {} jobs (docs/reference/limits.md)",
                    crate::MAX_ROWS
                )));
            }
            self.builder.count_line();
            let row = self.row(&job).map_err(de::Error::custom)?;
            if let Err(e) = self.builder.push(row) {
                let text = e.to_string();
                self.failure = Some(e);
                return Err(de::Error::custom(text));
            }
        }
        Ok(())
    }
}

impl<'de> DeserializeSeed<'de> for &mut Jobs<'_> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_seq(self)
    }
}

impl Jobs<'_> {
    fn row<'j>(&self, job: &'j Job) -> Result<Row<'j>, String> {
        let state = state(&job.status).ok_or_else(|| {
            format!(
                "job {}: status {:?} is not Pass, Killed or Failed",
                self.count,
                crate::error::shown(&job.status)
            )
        })?;
        let last = job.attempts.last();
        let servers = last.map_or(&[][..], |a| &a.detail[..]);
        let gpus: usize = servers.iter().map(|s| s.gpus.len()).sum();
        let vc = job.vc.as_deref().unwrap_or("");
        let what = |key: &str| format!("job {}: {key}", self.count);
        Ok(Row {
            line: self.count,
            id: self.count,
            user: job.user.as_deref().unwrap_or(""),
            account: vc,
            partition: vc,
            submit: time(job.submitted_time.as_deref(), &what("submitted_time"))?,
            start: time(
                last.and_then(|a| a.start_time.as_deref()),
                &what("start_time"),
            )?,
            end: time(last.and_then(|a| a.end_time.as_deref()), &what("end_time"))?,
            cpus: u32::try_from(gpus.max(1)).unwrap_or(u32::MAX),
            nodes: u32::try_from(servers.len()).unwrap_or(u32::MAX),
            gpus: gpus as f64,
            state,
            earlier_attempts: u32::try_from(job.attempts.len().saturating_sub(1))
                .unwrap_or(u32::MAX),
            ..Row::default()
        })
    }
}

pub(crate) fn read(input: swf::Input, builder: &mut Builder) -> Result<(), TraceError> {
    let source_name = builder.source_name().to_string();
    let mut jobs = Jobs {
        builder,
        count: 0,
        failure: None,
    };
    let mut reader = serde_json::Deserializer::from_reader(input);
    let result = (&mut jobs)
        .deserialize(&mut reader)
        .and_then(|()| reader.end());
    match result {
        Ok(()) => Ok(()),
        Err(e) => {
            if let Some(failure) = jobs.failure.take() {
                return Err(failure);
            }
            if e.is_io() {
                return Err(TraceError::Read {
                    source_name,
                    line: e.line() as u64,
                    error: e.to_string(),
                });
            }
            let text = e.to_string();
            // serde_json appends " at line L column C": the position is its own fields
            let error = text
                .rsplit_once(" at line ")
                .map_or(text.as_str(), |(head, _)| head)
                .to_string();
            Err(TraceError::Json {
                source_name,
                line: e.line() as u64,
                column: e.column() as u64,
                format: Format::Philly,
                error,
            })
        }
    }
}
