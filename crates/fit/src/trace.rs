//! Reading a trace for analysis: the usable jobs, what was left out, and the local calendar.

use std::path::Path;

use chrono::{DateTime, Datelike, FixedOffset, TimeZone, Timelike};
use sha2::{Digest, Sha256};
use swf::{Header, SwfReader};

use crate::FitError;

/// One job as the analysis sees it. Times in seconds since the trace's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// SWF field 1.
    pub number: i64,
    /// SWF field 12.
    pub user: i64,
    /// SWF field 2.
    pub submit: i64,
    /// SWF field 3.
    pub wait: i64,
    /// SWF field 4.
    pub runtime: i64,
    /// Field 5 if > 0, else field 8 (as in replay).
    pub processors: i64,
    /// Field 9 when > 0: the user's runtime estimate.
    pub estimate: Option<i64>,
}

impl Job {
    /// When it ended: submit + wait + runtime.
    pub fn end(&self) -> i64 {
        self.submit + self.wait + self.runtime
    }

    /// Response time: wait + runtime.
    pub fn response(&self) -> i64 {
        self.wait + self.runtime
    }
}

/// Jobs left out of the analysis, by reason (the first that applies).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct Excluded {
    /// Submit time < 0.
    pub negative_submit: u64,
    /// Runtime < 0 (unknown).
    pub negative_runtime: u64,
    /// Wait time < 0 (unknown): the end time cannot be known.
    pub negative_wait: u64,
    /// No processors (fields 5 and 8 both <= 0).
    pub no_processors: u64,
    /// User ID < 0 (unknown).
    pub unknown_user: u64,
}

impl Excluded {
    /// All excluded jobs.
    pub fn total(&self) -> u64 {
        self.negative_submit
            + self.negative_runtime
            + self.negative_wait
            + self.no_processors
            + self.unknown_user
    }
}

/// How submit times become local wall-clock times.
#[derive(Debug, Clone, Copy)]
pub enum Zone {
    /// An IANA zone from `TimeZoneString` (daylight saving time handled).
    Named(chrono_tz::Tz),
    /// A fixed offset from the deprecated `TimeZone` field.
    Fixed(FixedOffset),
}

/// The local calendar of a trace: its start as a Unix time and its time zone.
#[derive(Debug, Clone, Copy)]
pub struct TraceCalendar {
    /// `UnixStartTime`: the Unix time of submit time 0.
    pub unix_start: i64,
    /// The time zone.
    pub zone: Zone,
}

/// A submission's place in the local day and week.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LocalTime {
    /// Minutes since local midnight (0..1440).
    pub minute_of_day: u32,
    /// 0 = Monday .. 6 = Sunday.
    pub weekday: u32,
}

impl TraceCalendar {
    /// The zone's name: a tz database name, or `UTC` and a fixed offset (`UTC-08:00`).
    pub fn zone_name(&self) -> String {
        match self.zone {
            Zone::Named(tz) => tz.name().to_string(),
            Zone::Fixed(offset) => format!("UTC{offset}"),
        }
    }

    /// The local time of a submit time, if representable.
    pub fn local(&self, submit: i64) -> Option<LocalTime> {
        let t = self.unix_start.checked_add(submit)?;
        match self.zone {
            Zone::Named(tz) => tz.timestamp_opt(t, 0).single().map(|d| local_of(&d)),
            Zone::Fixed(offset) => offset.timestamp_opt(t, 0).single().map(|d| local_of(&d)),
        }
    }
}

fn local_of<Tz: TimeZone>(d: &DateTime<Tz>) -> LocalTime {
    LocalTime {
        minute_of_day: d.hour() * 60 + d.minute(),
        weekday: d.weekday().num_days_from_monday(),
    }
}

/// A trace read for analysis.
#[derive(Debug, Clone)]
pub struct TraceJobs {
    /// Short name: the file name without `.swf` / `.swf.gz`.
    pub name: String,
    /// The path as given.
    pub path: String,
    /// sha256 of the file's bytes as stored (compressed or not).
    pub sha256: String,
    /// Job lines read.
    pub read: u64,
    /// Jobs left out, by reason.
    pub excluded: Excluded,
    /// The usable jobs, in file order.
    pub jobs: Vec<Job>,
    /// The local calendar, when the header allows one.
    pub calendar: Option<TraceCalendar>,
    /// Whether any usable job has a user estimate.
    pub has_estimates: bool,
    /// Things a person should know (missing header fields, left-out jobs).
    pub warnings: Vec<String>,
}

/// The short name of a trace file: `SDSC-SP2-1998-4.2-cln` for `.../SDSC-SP2-1998-4.2-cln.swf.gz`.
pub fn trace_name(path: &Path) -> String {
    let file = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = file.strip_suffix(".gz").unwrap_or(&file);
    file.strip_suffix(".swf").unwrap_or(file).to_string()
}

/// Reads a trace and checks it can give user models: it must have jobs with a known runtime and
/// user IDs. Jobs that cannot be used are counted; the reasons become warnings. The file is
/// read once (a pipe works), and hashed as it is read.
pub fn read_trace(path: &Path) -> Result<TraceJobs, FitError> {
    let (input, digest) = open_hashed(path)?;
    read_swf(path, input, digest)
}

/// [`read_trace`] of an input opened by [`open_hashed`] (whose format was told from its first
/// line): its hash is that of the bytes read.
pub fn read_swf(
    path: &Path,
    input: swf::Input,
    digest: Sha256Digest,
) -> Result<TraceJobs, FitError> {
    // A file that is not a trace, `/dev/zero` say, fails at its first overlong line.
    let reader = SwfReader::from_input(input)?;
    let header = reader.header().clone();
    let jobs = read_records(path, String::new(), header, reader)?;
    Ok(TraceJobs {
        sha256: digest.finish(),
        ..jobs
    })
}

/// Opens a trace whose bytes as stored (compressed or not) are hashed as they are read, for its
/// provenance ([`TraceJobs::sha256`]): the hash is complete once the input was read to its end.
pub fn open_hashed(path: &Path) -> Result<(swf::Input, Sha256Digest), FitError> {
    let digest = Sha256Digest::default();
    let input = swf::Input::open_observed(path, Some(Box::new(digest.clone())))?;
    Ok((input, digest))
}

/// The sha256 of the bytes written to it, shared with the reader that writes them.
#[derive(Clone, Default)]
pub struct Sha256Digest(std::sync::Arc<std::sync::Mutex<Sha256>>);

impl Sha256Digest {
    /// The hash of what was written so far, as 64 hex digits.
    pub fn finish(&self) -> String {
        let hasher = match self.0.lock() {
            Ok(hasher) => hasher.clone(),
            Err(poisoned) => poisoned.into_inner().clone(),
        };
        hasher
            .finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

impl std::io::Write for Sha256Digest {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock() {
            Ok(mut hasher) => hasher.update(buf),
            Err(poisoned) => poisoned.into_inner().update(buf),
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// [`read_trace`] of records read elsewhere (a sacct dump converted to SWF records): `path` is
/// the file they came from (its name names the trace), `sha256` its bytes' hash, `header` the
/// SWF header that gives the calendar (`UnixStartTime`, `TimeZoneString`).
pub fn read_records(
    path: &Path,
    sha256: String,
    header: Header,
    records: impl Iterator<Item = Result<swf::Record, swf::SwfError>>,
) -> Result<TraceJobs, FitError> {
    let shown = path.display().to_string();
    let reader = records;
    let mut read = 0u64;
    let mut excluded = Excluded::default();
    let mut jobs = Vec::new();
    let mut known_runtime = 0u64;
    let mut known_user = 0u64;
    for record in reader {
        let r = record?;
        read += 1;
        known_runtime += u64::from(r.run_time >= 0);
        known_user += u64::from(r.user_id >= 0);
        let processors = if r.allocated_processors > 0 {
            r.allocated_processors
        } else {
            r.requested_processors
        };
        let reason = if r.submit_time < 0 {
            Some(&mut excluded.negative_submit)
        } else if r.run_time < 0 {
            Some(&mut excluded.negative_runtime)
        } else if r.wait_time < 0 {
            Some(&mut excluded.negative_wait)
        } else if processors <= 0 {
            Some(&mut excluded.no_processors)
        } else if r.user_id < 0 {
            Some(&mut excluded.unknown_user)
        } else {
            None
        };
        match reason {
            Some(count) => *count += 1,
            None => jobs.push(Job {
                number: r.job_number,
                user: r.user_id,
                submit: r.submit_time,
                wait: r.wait_time,
                runtime: r.run_time,
                processors,
                estimate: (r.requested_time > 0).then_some(r.requested_time),
            }),
        }
    }
    if read == 0 {
        return Err(FitError::NoJobs { trace: shown });
    }
    if known_runtime == 0 {
        return Err(FitError::NoRuntimes {
            trace: shown,
            jobs: read,
        });
    }
    if known_user == 0 {
        return Err(FitError::NoUsers {
            trace: shown,
            jobs: read,
        });
    }
    if jobs.is_empty() {
        return Err(FitError::NothingUsable {
            trace: shown,
            jobs: read,
        });
    }

    let mut warnings = Vec::new();
    if excluded.total() > 0 {
        warnings.push(format!(
            "{shown}: {} of {read} jobs left out ({} negative submit, {} unknown runtime, {} unknown wait, {} no processors, {} unknown user)",
            excluded.total(),
            excluded.negative_submit,
            excluded.negative_runtime,
            excluded.negative_wait,
            excluded.no_processors,
            excluded.unknown_user
        ));
    }
    let calendar = calendar(&header, &shown, &mut warnings);
    let has_estimates = jobs.iter().any(|j| j.estimate.is_some());
    if !has_estimates {
        warnings.push(format!(
            "{shown}: no user runtime estimates (field 9): the estimate model comes from the other traces"
        ));
    }
    Ok(TraceJobs {
        name: trace_name(path),
        path: shown,
        sha256,
        read,
        excluded,
        jobs,
        calendar,
        has_estimates,
        warnings,
    })
}

/// The local calendar of a trace with this header (see the private `calendar` below), without
/// its warnings: `None` without `UnixStartTime`.
pub fn trace_calendar(header: &Header) -> Option<TraceCalendar> {
    calendar(header, "", &mut Vec::new())
}

/// The trace's calendar from `UnixStartTime` and `TimeZoneString` (else the deprecated
/// `TimeZone` offset). Without `UnixStartTime` there is none: daily and weekly profiles are then
/// left out for this trace, with a warning.
fn calendar(header: &Header, shown: &str, warnings: &mut Vec<String>) -> Option<TraceCalendar> {
    let Some(unix_start) = header.unix_start_time() else {
        warnings.push(format!(
            "{shown}: no UnixStartTime in the header: daily and weekly profiles are left out for this trace"
        ));
        return None;
    };
    if let Some(name) = header.time_zone_string() {
        match name.parse::<chrono_tz::Tz>() {
            Ok(tz) => {
                return Some(TraceCalendar {
                    unix_start,
                    zone: Zone::Named(tz),
                });
            }
            Err(_) => warnings.push(format!(
                "{shown}: unknown TimeZoneString {name:?}; using the TimeZone offset"
            )),
        }
    }
    let offset = header
        .time_zone()
        .and_then(|s| i32::try_from(s).ok())
        .and_then(FixedOffset::east_opt);
    match offset {
        Some(offset) => Some(TraceCalendar {
            unix_start,
            zone: Zone::Fixed(offset),
        }),
        None => {
            warnings.push(format!(
                "{shown}: no usable time zone in the header: local times taken as UTC"
            ));
            FixedOffset::east_opt(0).map(|utc| TraceCalendar {
                unix_start,
                zone: Zone::Fixed(utc),
            })
        }
    }
}
