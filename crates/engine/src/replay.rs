//! Open-loop replay of an SWF trace (the conventional method), with DESIGN.md's semantics:
//!
//! * submit = field 2, runtime = field 4, processors = field 5 if > 0 else field 8,
//!   estimate = field 9 if > 0 else the runtime;
//! * jobs with submit < 0, runtime < 0 or no processors are skipped, jobs wider than the machine
//!   are rejected; both are counted ([`metrics::InputCounts`]);
//! * the machine has the header's `MaxProcs` (else `MaxNodes`) processors unless overridden;
//! * jobs are submitted in (submit time, job number, line) order.

use std::io::BufRead;
use std::path::Path;

use metrics::InputCounts;
use swf::{Header, Record, SwfError, SwfReader};

use crate::{JobSpec, Time, Workload};

/// Why a trace cannot be replayed.
#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    /// The file could not be read or parsed.
    #[error(transparent)]
    Swf(#[from] SwfError),
    /// Neither `MaxProcs` nor `MaxNodes` is in the header and no size was given.
    #[error(
        "{source_name}: the header has no MaxProcs or MaxNodes; give the machine size (--processors)"
    )]
    NoMachineSize {
        /// The trace.
        source_name: String,
    },
    /// The machine size is zero or too large.
    #[error("{source_name}: machine size {processors} is not between 1 and 4294967295 processors")]
    BadMachineSize {
        /// The trace.
        source_name: String,
        /// The size.
        processors: u64,
    },
    /// A header's machine size is there but not a positive whole number.
    #[error(
        "{source_name}: the header's {key} is {value:?}, not a number of processors >= 1; fix the header or give --processors"
    )]
    BadHeaderSize {
        /// The trace.
        source_name: String,
        /// `MaxProcs` or `MaxNodes`.
        key: &'static str,
        /// Its text.
        value: String,
    },
    /// A time field is beyond what a simulation can represent safely.
    #[error(
        "{source_name}: job {job}: {field} = {value} s is beyond the limit of {limit} s (about 3,000 years); the field is corrupt"
    )]
    TimeTooLarge {
        /// The trace.
        source_name: String,
        /// The job's number (field 1).
        job: i64,
        /// The field.
        field: &'static str,
        /// Its value, seconds.
        value: i64,
        /// [`MAX_TIME`].
        limit: i64,
    },
    /// Two job lines carry the same job number (field 1), which outputs use to tell jobs apart.
    #[error("{source_name}: job number {job} appears twice; job numbers must be unique")]
    DuplicateJob {
        /// The trace.
        source_name: String,
        /// The repeated job number.
        job: i64,
    },
    /// More jobs than a replay holds in memory.
    #[error("{source_name}: more than {limit} jobs; replay at most that many (--first-jobs)")]
    TooManyJobs {
        /// The trace.
        source_name: String,
        /// [`MAX_JOBS`].
        limit: usize,
    },
    /// The trace has no job lines at all.
    #[error("{source_name}: the trace has no jobs")]
    NoJobs {
        /// The trace.
        source_name: String,
    },
    /// Every job was skipped or rejected.
    #[error(
        "{source_name}: none of the {read} jobs can run ({skipped} skipped for bad fields, {rejected} wider than the {processors}-processor machine)"
    )]
    NothingToRun {
        /// The trace.
        source_name: String,
        /// Jobs read.
        read: u64,
        /// Jobs skipped.
        skipped: u64,
        /// Jobs rejected.
        rejected: u64,
        /// Machine size.
        processors: u32,
    },
}

/// A trace ready to replay: the machine size, the jobs in submission order, and what was left out.
#[derive(Debug, Clone)]
pub struct Replay {
    /// Processors in the machine.
    pub processors: u32,
    /// The trace header.
    pub header: Header,
    /// The jobs to submit, in (submit, job number, line) order.
    pub jobs: Vec<JobSpec>,
    /// Jobs read, skipped and rejected.
    pub input: InputCounts,
    /// Jobs the log says were stopped at their limit: status 0 (failed) or 5 (cancelled) after
    /// running exactly their requested time. Their true runtime is unknown (at least the limit),
    /// so they replay with the logged runtime and [`Replay::mark_killed`] counts them as killed
    /// when they again end at their estimate (the SWF export of `sitesim run` writes its killed
    /// jobs this way, so a replay of it reports them).
    pub stopped_at_limit: std::collections::HashSet<i64>,
    next: usize,
}

impl Replay {
    /// Multiplies every submit time, relative to the first job's, by `factor` (rounded to the
    /// nearest second): Streit's shrinking factor (paper 002, section 5) and Tsafrir's load
    /// scaling (thesis, chapter 2). A factor below 1 packs the same jobs into less time and
    /// raises the load by 1 / factor. Jobs that come to share a submit time keep the replay
    /// order (submit, job number, line). A factor that is not a finite number above 0 leaves
    /// the replay unchanged. A factor that would put the last arrival past [`MAX_TIME`]
    /// changes nothing and returns that arrival time, seconds.
    pub fn scale_arrivals(&mut self, factor: f64) -> Result<(), f64> {
        if factor == 1.0 || !factor.is_finite() || factor <= 0.0 {
            return Ok(());
        }
        let (Some(first), Some(last)) = (
            self.jobs.iter().map(|j| j.submit).min(),
            self.jobs.iter().map(|j| j.submit).max(),
        ) else {
            return Ok(());
        };
        // every time stays within MAX_TIME, as a trace's own must
        let latest = first as f64 + (last - first) as f64 * factor;
        if latest.is_nan() || latest > MAX_TIME as f64 {
            return Err(latest);
        }
        for job in &mut self.jobs {
            let offset = (job.submit - first) as f64 * factor;
            job.submit = first + offset.round() as Time;
        }
        // Stable: equal (submit, job number) keep their line order.
        self.jobs.sort_by_key(|j| (j.submit, j.job_id));
        Ok(())
    }

    /// A replay of jobs made elsewhere (synthetic workloads, tests) on `processors` processors.
    /// The jobs are submitted in (submit, job id) order.
    pub fn from_jobs(processors: u32, mut jobs: Vec<JobSpec>) -> Replay {
        jobs.sort_by_key(|j| (j.submit, j.job_id));
        let input = InputCounts {
            read: jobs.len() as u64,
            ..InputCounts::default()
        };
        Replay {
            processors,
            header: Header::new(),
            jobs,
            input,
            stopped_at_limit: std::collections::HashSet::new(),
            next: 0,
        }
    }

    /// Reads a `.swf` or `.swf.gz` file. `processors` overrides the header's machine size.
    pub fn read(path: impl AsRef<Path>, processors: Option<u32>) -> Result<Replay, ReplayError> {
        Replay::from_reader(SwfReader::open(path)?, processors)
    }

    /// Builds a replay from an SWF reader (its header gives the machine size unless overridden).
    pub fn from_reader<R: BufRead>(
        reader: SwfReader<R>,
        processors: Option<u32>,
    ) -> Result<Replay, ReplayError> {
        ReplayReader::new(reader, processors)?.read(&mut |_, _| {})
    }

    /// Marks as killed the records of jobs in [`Replay::stopped_at_limit`] that ended exactly at
    /// their estimate (start + estimate): the log says the system stopped them there. Only for
    /// a replay with the trace's own estimates (with a model's, the limit is not the logged one).
    pub fn mark_killed(&self, records: &mut [metrics::JobRecord]) {
        if self.stopped_at_limit.is_empty() {
            return;
        }
        for r in records {
            Replay::mark_killed_at_limit(&self.stopped_at_limit, r);
        }
    }

    /// [`Replay::mark_killed`] for one record, with the replay's `stopped_at_limit` taken out
    /// (so records can be marked as the replay hands them out).
    pub fn mark_killed_at_limit(
        stopped_at_limit: &std::collections::HashSet<i64>,
        r: &mut metrics::JobRecord,
    ) {
        if !r.killed && r.runtime() == r.estimate && stopped_at_limit.contains(&r.job_id) {
            r.killed = true;
        }
    }
}

/// A trace whose header is read (so its machine size is known) and whose jobs are still to
/// come: [`ReplayReader::read`] reads them, handing each to a callback as it goes, so a replay
/// can start while the rest of the trace is read ([`StreamedJobs`]).
pub struct ReplayReader<I> {
    records: I,
    source_name: String,
    header: Header,
    processors: u32,
}

/// The job records a replay reads: an SWF file's lines, or records made from another format
/// (a sacct dump converted), each a `Result` as a reader yields them.
pub type Records<'a> = Box<dyn Iterator<Item = Result<Record, SwfError>> + Send + 'a>;

impl<R: BufRead> ReplayReader<SwfReader<R>> {
    /// Reads the machine size from the header unless `processors` overrides it.
    pub fn new(
        mut reader: SwfReader<R>,
        processors: Option<u32>,
    ) -> Result<ReplayReader<SwfReader<R>>, ReplayError> {
        let source_name = reader.source_name().to_string();
        let header = reader.header().clone();
        // A file whose first line is not SWF (binary data, say) has no header either: say what
        // is wrong with the line instead of "no MaxProcs".
        if header.lines().is_empty() && reader.first_line_error().is_some() {
            if let Some(Err(e)) = reader.next() {
                return Err(ReplayError::Swf(e));
            }
        }
        ReplayReader::from_records(source_name, header, reader, processors)
    }
}

impl<I: Iterator<Item = Result<Record, SwfError>>> ReplayReader<I> {
    /// A replay of `records` under `header` (which gives the machine size unless `processors`
    /// overrides it); `source_name` names the input in errors.
    pub fn from_records(
        source_name: String,
        header: Header,
        records: I,
        processors: Option<u32>,
    ) -> Result<ReplayReader<I>, ReplayError> {
        let processors = machine_size(&header, processors, &source_name)?;
        Ok(ReplayReader {
            records,
            source_name,
            header,
            processors,
        })
    }

    /// The same reader with its records behind a box, so readers of different inputs have one
    /// type.
    pub fn boxed<'a>(self) -> ReplayReader<Records<'a>>
    where
        I: Send + 'a,
    {
        ReplayReader {
            records: Box::new(self.records),
            source_name: self.source_name,
            header: self.header,
            processors: self.processors,
        }
    }

    /// Processors in the machine.
    pub fn processors(&self) -> u32 {
        self.processors
    }

    /// Reads every job, in file order, into the replay (sorted into submission order if the
    /// file is not). Each job kept is also handed to `each` when it is read, with whether the
    /// log says it was stopped at its limit ([`Replay::stopped_at_limit`]).
    pub fn read(self, each: &mut dyn FnMut(&JobSpec, bool)) -> Result<Replay, ReplayError> {
        let ReplayReader {
            records: reader,
            source_name,
            header,
            processors,
        } = self;
        let mut input = InputCounts::default();
        let mut jobs = Vec::new();
        let mut seen = SeenJobs::default();
        let mut stopped_at_limit = std::collections::HashSet::new();
        for record in reader {
            let record = record?;
            input.read += 1;
            if !seen.insert(record.job_number) {
                return Err(ReplayError::DuplicateJob {
                    source_name,
                    job: record.job_number,
                });
            }
            for (field, value) in [
                ("submit_time", record.submit_time),
                ("run_time", record.run_time),
                ("requested_time", record.requested_time),
                ("wait_time", record.wait_time),
            ] {
                if value > MAX_TIME {
                    return Err(ReplayError::TimeTooLarge {
                        source_name,
                        job: record.job_number,
                        field,
                        value,
                        limit: MAX_TIME,
                    });
                }
            }
            let stopped = matches!(record.status, 0 | 5)
                && record.requested_time > 0
                && record.run_time == record.requested_time;
            if stopped {
                stopped_at_limit.insert(record.job_number);
            }
            if let Some(job) = job_from_record(&record, processors, &mut input) {
                if jobs.len() == MAX_JOBS {
                    return Err(ReplayError::TooManyJobs {
                        source_name,
                        limit: MAX_JOBS,
                    });
                }
                each(&job, stopped);
                jobs.push(job);
            }
        }
        if input.read == 0 {
            return Err(ReplayError::NoJobs { source_name });
        }
        if jobs.is_empty() {
            return Err(ReplayError::NothingToRun {
                source_name,
                read: input.read,
                skipped: input.skipped(),
                rejected: input.rejected_too_wide,
                processors,
            });
        }
        // Stable: equal (submit, job number) keep file order. Real traces are already sorted.
        if !jobs.is_sorted_by_key(|j| (j.submit, j.job_id)) {
            jobs.sort_by_key(|j| (j.submit, j.job_id));
        }
        Ok(Replay {
            processors,
            header,
            jobs,
            input,
            stopped_at_limit,
            next: 0,
        })
    }
}

/// A replay's jobs as a [`ReplayReader`] reads them on another thread: chunks of (job, stopped
/// at its limit) from a channel, submitted as they come, so simulating overlaps reading; the
/// reader ends with an empty chunk once it read the whole trace without error. Only a trace in
/// submission order can be replayed so: at the first job out of order the workload stops
/// submitting and [`StreamedJobs::in_order`] turns false (replay the whole trace instead).
pub struct StreamedJobs {
    source: std::sync::mpsc::Receiver<Vec<(JobSpec, bool)>>,
    buffer: std::collections::VecDeque<JobSpec>,
    /// The (submit, job number) of the latest job received.
    last: Option<(Time, i64)>,
    in_order: bool,
    /// The reader is done (the channel closed).
    closed: bool,
    /// The reader sent its end mark: it read the whole trace.
    read_whole: bool,
    /// The jobs received that the log says were stopped at their limit.
    pub stopped_at_limit: std::collections::HashSet<i64>,
}

impl StreamedJobs {
    /// Replays the jobs received from `source`; waits for the first chunk.
    pub fn new(source: std::sync::mpsc::Receiver<Vec<(JobSpec, bool)>>) -> StreamedJobs {
        let mut jobs = StreamedJobs {
            source,
            buffer: std::collections::VecDeque::new(),
            last: None,
            in_order: true,
            closed: false,
            read_whole: false,
            stopped_at_limit: std::collections::HashSet::new(),
        };
        jobs.receive();
        jobs
    }

    /// Whether every job received so far came in submission order.
    pub fn in_order(&self) -> bool {
        self.in_order
    }

    /// Whether the reader read the whole trace without error and every job was received.
    pub fn complete(&self) -> bool {
        self.read_whole
    }

    /// Takes every chunk already sent, and waits for one if no job is buffered (so the next
    /// arrival is known), until the reader is done.
    fn receive(&mut self) {
        while !self.closed {
            let chunk = if self.buffer.is_empty() {
                match self.source.recv() {
                    Ok(chunk) => chunk,
                    Err(_) => {
                        self.closed = true;
                        break;
                    }
                }
            } else {
                match self.source.try_recv() {
                    Ok(chunk) => chunk,
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        self.closed = true;
                        break;
                    }
                }
            };
            if chunk.is_empty() {
                self.read_whole = true;
            }
            for (job, stopped) in chunk {
                let key = (job.submit, job.job_id);
                if self.last.is_some_and(|last| key < last) {
                    self.in_order = false;
                }
                self.last = Some(key);
                if stopped {
                    self.stopped_at_limit.insert(job.job_id);
                }
                self.buffer.push_back(job);
            }
        }
    }

    /// Receives (and drops) whatever the reader still sends, so it can finish.
    pub fn drain(&mut self) {
        while !self.closed {
            self.buffer.clear();
            self.receive();
        }
    }
}

impl Workload for StreamedJobs {
    fn next_arrival(&self) -> Option<Time> {
        if !self.in_order {
            return None;
        }
        self.buffer.front().map(|j| j.submit)
    }

    fn arrivals(&mut self, now: Time, out: &mut Vec<JobSpec>) {
        while self.in_order {
            match self.buffer.front() {
                Some(job) if job.submit == now => {
                    out.push(*job);
                    self.buffer.pop_front();
                }
                Some(_) => break,
                None if self.closed => break,
                None => self.receive(),
            }
        }
        self.receive();
    }
}

/// The job numbers read so far, to refuse a duplicate. Real logs number their jobs in
/// increasing order, so while they do a number is new when it exceeds the last one, and only
/// the numbers are kept; the first number out of order turns them into a set.
#[derive(Default)]
struct SeenJobs {
    increasing: Vec<i64>,
    set: Option<std::collections::HashSet<i64>>,
}

impl SeenJobs {
    /// Adds `job`; false when it was seen before.
    fn insert(&mut self, job: i64) -> bool {
        if let Some(set) = &mut self.set {
            return set.insert(job);
        }
        if self.increasing.last().is_none_or(|&last| last < job) {
            self.increasing.push(job);
            return true;
        }
        let mut set: std::collections::HashSet<i64> = self.increasing.drain(..).collect();
        let new = set.insert(job);
        self.set = Some(set);
        new
    }
}

/// The largest time field a replay accepts, seconds (about 3,000 years): far beyond any log,
/// and small enough that sums of times cannot overflow.
pub const MAX_TIME: Time = 100_000_000_000;

/// The most jobs a replay holds (about 1 GB of jobs); the largest archive logs have a few
/// million.
pub const MAX_JOBS: usize = 20_000_000;

/// The machine size: the override, else `MaxProcs`, else `MaxNodes`.
fn machine_size(
    header: &Header,
    given: Option<u32>,
    source_name: &str,
) -> Result<u32, ReplayError> {
    if given.is_none() {
        for key in ["MaxProcs", "MaxNodes"] {
            if let Some(value) = header.get(key) {
                if header.get_int(key).is_none_or(|n| n < 1) {
                    return Err(ReplayError::BadHeaderSize {
                        source_name: source_name.to_string(),
                        key,
                        value: value.to_string(),
                    });
                }
                break;
            }
        }
    }
    let size = match given {
        Some(p) => u64::from(p),
        None => header
            .max_procs()
            .or_else(|| header.max_nodes())
            .ok_or_else(|| ReplayError::NoMachineSize {
                source_name: source_name.to_string(),
            })?,
    };
    match u32::try_from(size) {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(ReplayError::BadMachineSize {
            source_name: source_name.to_string(),
            processors: size,
        }),
    }
}

/// The job a record describes, or `None` (counted in `input`) when it is skipped or rejected.
fn job_from_record(r: &Record, machine: u32, input: &mut InputCounts) -> Option<JobSpec> {
    let processors = if r.allocated_processors > 0 {
        r.allocated_processors
    } else {
        r.requested_processors
    };
    if r.submit_time < 0 {
        input.skipped_negative_submit += 1;
        return None;
    }
    if r.run_time < 0 {
        input.skipped_negative_runtime += 1;
        return None;
    }
    if processors <= 0 {
        input.skipped_no_processors += 1;
        return None;
    }
    let processors = match u32::try_from(processors) {
        Ok(p) if p <= machine => p,
        _ => {
            input.rejected_too_wide += 1;
            return None;
        }
    };
    let estimate = if r.requested_time > 0 {
        r.requested_time
    } else {
        r.run_time
    };
    Some(JobSpec {
        job_id: r.job_number,
        user: r.user_id,
        group: r.group_id,
        submit: r.submit_time,
        processors,
        estimate,
        runtime: r.run_time,
        bandwidth: 0,
        partition: r.partition,
        queue: r.queue,
    })
}

impl Workload for Replay {
    fn next_arrival(&self) -> Option<Time> {
        self.jobs.get(self.next).map(|j| j.submit)
    }

    fn arrivals(&mut self, now: Time, out: &mut Vec<JobSpec>) {
        while let Some(job) = self.jobs.get(self.next) {
            if job.submit != now {
                break;
            }
            out.push(*job);
            self.next += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seen_jobs_finds_duplicates_in_and_out_of_order() {
        let mut seen = SeenJobs::default();
        assert!(seen.insert(3) && seen.insert(5) && seen.insert(9));
        assert!(!seen.insert(5), "a duplicate out of order");
        assert!(seen.insert(4) && seen.insert(10));
        assert!(!seen.insert(9) && !seen.insert(10));
        let mut seen = SeenJobs::default();
        assert!(seen.insert(1) && !seen.insert(1), "a duplicate of the last");
    }

    fn replay(text: &str, processors: Option<u32>) -> Result<Replay, ReplayError> {
        let reader = SwfReader::new(text.as_bytes(), "t.swf").map_err(ReplayError::Swf)?;
        Replay::from_reader(reader, processors)
    }

    const JOB: &str = "1 0 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n";

    #[test]
    fn times_beyond_the_limit_are_refused_naming_job_and_field() {
        let huge = "2 999999999999999999 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n";
        let err = replay(&format!("; MaxProcs: 4\n{JOB}{huge}"), None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("t.swf: job 2: submit_time = 999999999999999999 s is beyond the limit"),
            "{err}"
        );
        // Sibling: an 18-digit runtime.
        let long = "3 5 0 999999999999999999 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n";
        let err = replay(&format!("; MaxProcs: 4\n{long}"), None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("job 3: run_time"), "{err}");
        // At the limit, a job still replays.
        let edge = format!("4 {MAX_TIME} 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n");
        assert!(replay(&format!("; MaxProcs: 4\n{edge}"), None).is_ok());
    }

    #[test]
    fn a_repeated_job_number_is_refused() {
        let err = replay(&format!("; MaxProcs: 4\n{JOB}{JOB}"), None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("t.swf: job number 1 appears twice"), "{err}");
        // Sibling: a repeat far apart, after other jobs.
        let other = "2 5 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n";
        let err = replay(&format!("; MaxProcs: 4\n{other}{JOB}{other}"), None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("job number 2 appears twice"), "{err}");
    }

    #[test]
    fn a_bad_header_size_is_named_not_reported_missing() {
        let err = replay(&format!("; MaxProcs: -5\n{JOB}"), None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("the header's MaxProcs is \"-5\""), "{err}");
        let err = replay(&format!("; MaxNodes: 0\n{JOB}"), None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("the header's MaxNodes is \"0\""), "{err}");
        // --processors overrides a bad header.
        assert!(replay(&format!("; MaxProcs: -5\n{JOB}"), Some(4)).is_ok());
        // Truly missing: the old message.
        let err = replay(JOB, None)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("no MaxProcs or MaxNodes"), "{err}");
    }
}
