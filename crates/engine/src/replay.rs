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

use crate::{Extra, Job, Time, Workload};

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
    /// A streamed replay met a job that belongs before jobs it already replayed, too far back
    /// for its window and too late to replay the trace whole.
    #[error(
        "{source_name}: job {job} (submit {submit}) is out of submission order by more than {window} jobs, after the first {staged} jobs were replayed; a trace this far out of order cannot be streamed: sort its job lines by submit time (grep '^;' t.swf > sorted.swf; grep -v '^;' t.swf | sort -n -k2,2 -k1,1 >> sorted.swf), or replay it whole (--first-jobs with its job count reads it whole)"
    )]
    OutOfOrder {
        /// The trace.
        source_name: String,
        /// The job's number.
        job: i64,
        /// Its submit time, seconds.
        submit: Time,
        /// [`StreamLimits::window`].
        window: usize,
        /// [`StreamLimits::staged`].
        staged: usize,
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
    pub jobs: Vec<Job>,
    /// Jobs read, skipped and rejected.
    pub input: InputCounts,
    /// Jobs the log says were stopped at their limit: status 0 (failed) or 5 (cancelled) after
    /// running exactly their requested time. Their true runtime is unknown (at least the limit),
    /// so they replay with the logged runtime and [`Replay::mark_killed`] counts them as killed
    /// when they again end at their estimate (the SWF export of `sitesim run` writes its killed
    /// jobs this way, so a replay of it reports them).
    pub stopped_at_limit: std::collections::HashSet<i64>,
    /// The advance reservations the trace's jobs ran in, by name: a job's
    /// [`job::ReservationId`] `k` is the `k`-th, from 1 (a sacct dump's `Reservation`; empty
    /// for SWF).
    pub reservation_names: Vec<String>,
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
    pub fn from_jobs(processors: u32, mut jobs: Vec<Job>) -> Replay {
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
            reservation_names: Vec::new(),
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
        ReplayReader::new(reader, processors)?.read()
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
    extras: Extras,
}

/// What the records' jobs request of a machine's other resources, by record (what SWF has no
/// field for: a sacct dump's `ReqTRES`), and what the machine has of them.
#[derive(Debug, Clone, Default)]
struct Extras {
    /// One per record, in the records' order (empty: no job requests any).
    requests: Vec<Extra>,
    /// The machine's amounts.
    machine: Extra,
    /// How each record's job lies on a machine of node types, in the records' order (empty:
    /// any nodes).
    shapes: Vec<job::Shape>,
    /// The throttled array each record's job is a task of, in the records' order (empty:
    /// none).
    array_tasks: Vec<job::ArrayTask>,
    /// The advance reservation each record's job ran in, in the records' order (empty: none).
    reservations: Vec<job::ReservationId>,
    /// The reservations' names, by [`job::ReservationId`] from 1.
    reservation_names: Vec<String>,
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
            extras: Extras::default(),
        })
    }

    /// The same reader on a machine that also has the amounts `machine` of other resources,
    /// the records' jobs requesting `requests` of them (one per record, in order; a record past
    /// its end requests none). A job asking for more than the machine has is rejected as one
    /// wider than the machine ([`InputCounts::rejected_too_wide`]).
    pub fn with_extras(mut self, requests: Vec<Extra>, machine: Extra) -> ReplayReader<I> {
        self.extras = Extras {
            requests,
            machine,
            shapes: std::mem::take(&mut self.extras.shapes),
            array_tasks: std::mem::take(&mut self.extras.array_tasks),
            reservations: std::mem::take(&mut self.extras.reservations),
            reservation_names: std::mem::take(&mut self.extras.reservation_names),
        };
        self
    }

    /// The same reader with how each record's job lies on a machine of node types (one per
    /// record, in order; a record past its end asks nothing of where it runs).
    pub fn with_shapes(mut self, shapes: Vec<job::Shape>) -> ReplayReader<I> {
        self.extras.shapes = shapes;
        self
    }

    /// The same reader with the throttled array each record's job is a task of (one per
    /// record, in order; a record past its end is in none).
    pub fn with_array_tasks(mut self, array_tasks: Vec<job::ArrayTask>) -> ReplayReader<I> {
        self.extras.array_tasks = array_tasks;
        self
    }

    /// The same reader with the advance reservation each record's job ran in (one per record,
    /// in order; a record past its end ran in none) and the reservations' names
    /// ([`Replay::reservation_names`]).
    pub fn with_reservations(
        mut self,
        reservations: Vec<job::ReservationId>,
        names: Vec<String>,
    ) -> ReplayReader<I> {
        self.extras.reservations = reservations;
        self.extras.reservation_names = names;
        self
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
            extras: self.extras,
        }
    }

    /// Processors in the machine.
    pub fn processors(&self) -> u32 {
        self.processors
    }

    /// Reads every job, in file order, into the replay (sorted into submission order if the
    /// file is not).
    pub fn read(self) -> Result<Replay, ReplayError> {
        let mut reading = Reading::new(self.source_name, self.processors, self.extras);
        let mut jobs = Vec::new();
        for record in self.records {
            if let Some((job, _)) = reading.next(record)? {
                jobs.push(job);
            }
        }
        reading.into_replay(self.header, jobs)
    }

    /// Reads the trace and sends its jobs as they are read, in submission order, so a replay
    /// can start while the rest of the trace is read ([`StreamedJobs`]), in memory bounded by
    /// `limits`, not by the trace.
    ///
    /// A job read out of order is put in place within a window of the latest
    /// [`StreamLimits::window`] jobs read (kept sorted: a job in order is appended, one out of
    /// order inserted; the earliest is released once it holds more).
    /// While fewer than [`StreamLimits::staged`] jobs were sent, the jobs are also kept; a job
    /// that belongs before one already sent then makes the reader send
    /// [`StreamMessage::Abandon`] and read the rest of the trace: it returns the whole trace
    /// ([`Streaming::Whole`]), to be replayed as [`ReplayReader::read`] would. Once that many
    /// were sent, it sends [`StreamMessage::Committed`] (no job is kept from then on) and such
    /// a job is an error ([`ReplayError::OutOfOrder`]). The last message of a trace read whole
    /// is [`StreamMessage::End`].
    pub fn stream(
        self,
        limits: StreamLimits,
        send: &mut dyn FnMut(StreamMessage),
    ) -> Result<Streaming, ReplayError> {
        let ReplayReader {
            records,
            source_name,
            header,
            processors,
            extras,
        } = self;
        let mut reading = Reading::new(source_name, processors, extras);
        // The jobs sent while staged (the window holds the others read): with those of the
        // window, what a replay of the whole trace starts from if a job comes too late.
        let mut kept = Some(Vec::new());
        let mut window: std::collections::VecDeque<Windowed> =
            std::collections::VecDeque::with_capacity(limits.window.saturating_add(1).min(1 << 20));
        let mut last_sent: Option<StreamKey> = None;
        let mut sent = 0usize;
        let mut chunk = Vec::with_capacity(STREAM_CHUNK);
        let mut records = records;
        for record in records.by_ref() {
            let line = reading.input.read;
            let Some((job, stopped)) = reading.next(record)? else {
                continue;
            };
            let key = StreamKey {
                submit: job.submit,
                job_id: job.job_id,
                line,
            };
            if last_sent.is_some_and(|last| key < last) {
                let Some(mut jobs) = kept.take() else {
                    return Err(ReplayError::OutOfOrder {
                        source_name: reading.source_name,
                        job: job.job_id,
                        submit: job.submit,
                        window: limits.window,
                        staged: limits.staged,
                    });
                };
                // Out of order beyond the window, early: the trace is replayed whole (sorted
                // into submission order by `into_replay`, so the order gathered here is moot).
                send(StreamMessage::Abandon);
                jobs.extend(window.drain(..).map(|w| w.job));
                jobs.push(job);
                for record in records {
                    if let Some((job, _)) = reading.next(record)? {
                        jobs.push(job);
                    }
                }
                return reading.into_replay(header, jobs).map(Streaming::Whole);
            }
            let windowed = Windowed { line, job, stopped };
            match window.back() {
                Some(last) if last.key() > key => {
                    let at = window.partition_point(|w| w.key() < key);
                    window.insert(at, windowed);
                }
                _ => window.push_back(windowed),
            }
            if window.len() > limits.window {
                if let Some(first) = window.pop_front() {
                    last_sent = Some(first.key());
                    if let Some(jobs) = kept.as_mut() {
                        jobs.push(first.job);
                    }
                    chunk.push((first.job, first.stopped));
                    sent += 1;
                }
                if chunk.len() == STREAM_CHUNK {
                    flush(&mut chunk, send);
                }
                if kept.is_some() && sent >= limits.staged {
                    flush(&mut chunk, send);
                    send(StreamMessage::Committed);
                    kept = None;
                    reading.stopped_at_limit = std::collections::HashSet::new();
                }
            }
        }
        while let Some(next) = window.pop_front() {
            chunk.push((next.job, next.stopped));
            if chunk.len() == STREAM_CHUNK {
                flush(&mut chunk, send);
            }
        }
        flush(&mut chunk, send);
        let replay = reading.into_replay(header, Vec::new())?;
        send(StreamMessage::End);
        Ok(Streaming::Streamed(replay))
    }
}

/// Jobs per [`StreamMessage::Jobs`]: a chunk of about 100 KB, under glibc's default mmap
/// threshold (128 KB), so chunks are taken from and returned to the heap. With 8192 jobs (about
/// 790 KB a chunk) the allocator's moving threshold kept freed chunks resident, and the replay's
/// peak RSS varied with the threads' timing (SDSC-BLUE: 39-54 MB; now 36-43 MB, the same
/// instructions; docs/development/performance.md).
const STREAM_CHUNK: usize = 1024;

/// Sends the jobs of `chunk`, if any, leaving it empty.
fn flush(chunk: &mut Vec<(Job, bool)>, send: &mut dyn FnMut(StreamMessage)) {
    if !chunk.is_empty() {
        let jobs = std::mem::replace(chunk, Vec::with_capacity(STREAM_CHUNK));
        send(StreamMessage::Jobs(jobs));
    }
}

/// How much a streamed read holds ([`ReplayReader::stream`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamLimits {
    /// Jobs held to put a job read out of order in its place.
    pub window: usize,
    /// Jobs sent before the replay is committed to streaming (until then a job out of order
    /// beyond the window makes it replay the whole trace instead).
    pub staged: usize,
}

impl Default for StreamLimits {
    /// A window of 65,536 jobs; committed once as many were sent (until then the records
    /// wait for the commitment before they reach the outputs, so this bounds them too).
    fn default() -> StreamLimits {
        StreamLimits {
            window: 1 << 16,
            staged: 1 << 16,
        }
    }
}

/// What a streamed read sends ([`ReplayReader::stream`]).
#[derive(Debug, Clone, PartialEq)]
pub enum StreamMessage {
    /// The next jobs in submission order, each with whether the log says it was stopped at its
    /// limit ([`Replay::stopped_at_limit`]).
    Jobs(Vec<(Job, bool)>),
    /// The jobs are for good: the trace will not be replayed whole, whatever comes.
    Committed,
    /// The trace is out of submission order: it is read whole and replayed again; stop.
    Abandon,
    /// Every job was sent: the trace was read whole.
    End,
}

/// What a streamed read ends with.
#[derive(Debug)]
pub enum Streaming {
    /// Every job was sent: the replay's machine, header and counts, without its jobs.
    Streamed(Replay),
    /// The trace was out of order early on: the whole trace, to replay as read.
    Whole(Replay),
}

/// A job's place in submission order: (submit, job number), then the order read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct StreamKey {
    submit: Time,
    job_id: i64,
    line: u64,
}

/// A job waiting in the streamed read's window, in the order of its key.
#[derive(Debug)]
struct Windowed {
    /// The line it was read from (its key's last part; the rest is the job's).
    line: u64,
    job: Job,
    stopped: bool,
}

impl Windowed {
    /// Its place in the window.
    fn key(&self) -> StreamKey {
        StreamKey {
            submit: self.job.submit,
            job_id: self.job.job_id,
            line: self.line,
        }
    }
}

/// The checks and counts of reading a trace's records, whole or streamed.
struct Reading {
    source_name: String,
    processors: u32,
    extras: Extras,
    input: InputCounts,
    seen: SeenJobs,
    jobs: usize,
    stopped_at_limit: std::collections::HashSet<i64>,
}

impl Reading {
    fn new(source_name: String, processors: u32, extras: Extras) -> Reading {
        Reading {
            source_name,
            processors,
            extras,
            input: InputCounts::default(),
            seen: SeenJobs::default(),
            jobs: 0,
            stopped_at_limit: std::collections::HashSet::new(),
        }
    }

    /// The job of the next record, with whether the log says it was stopped at its limit, or
    /// `None` when it is skipped or rejected (counted).
    fn next(
        &mut self,
        record: Result<Record, SwfError>,
    ) -> Result<Option<(Job, bool)>, ReplayError> {
        let record = record?;
        self.input.read += 1;
        if !self.seen.insert(record.job_number) {
            return Err(ReplayError::DuplicateJob {
                source_name: std::mem::take(&mut self.source_name),
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
                    source_name: std::mem::take(&mut self.source_name),
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
            self.stopped_at_limit.insert(record.job_number);
        }
        let Some(mut job) = job_from_record(&record, self.processors, &mut self.input) else {
            return Ok(None);
        };
        if let Some(&extra) = self.extras.requests.get(self.input.read as usize - 1) {
            if !extra.fits_in(&self.extras.machine) {
                self.input.rejected_too_wide += 1;
                return Ok(None);
            }
            job.extra = extra;
        }
        if let Some(&shape) = self.extras.shapes.get(self.input.read as usize - 1) {
            job.shape = shape;
        }
        if let Some(&array_task) = self.extras.array_tasks.get(self.input.read as usize - 1) {
            job.array_task = array_task;
        }
        if let Some(&reservation) = self.extras.reservations.get(self.input.read as usize - 1) {
            job.reservation = reservation;
        }
        if self.jobs == MAX_JOBS {
            return Err(ReplayError::TooManyJobs {
                source_name: std::mem::take(&mut self.source_name),
                limit: MAX_JOBS,
            });
        }
        self.jobs += 1;
        Ok(Some((job, stopped)))
    }

    /// The replay of `jobs` (sorted into submission order if they are not) read so.
    fn into_replay(self, header: Header, mut jobs: Vec<Job>) -> Result<Replay, ReplayError> {
        let Reading {
            source_name,
            processors,
            input,
            stopped_at_limit,
            jobs: kept,
            extras,
            ..
        } = self;
        if input.read == 0 {
            return Err(ReplayError::NoJobs { source_name });
        }
        if kept == 0 {
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
            reservation_names: extras.reservation_names,
            next: 0,
        })
    }
}

/// A replay's jobs as [`ReplayReader::stream`] reads them on another thread: chunks of (job,
/// stopped at its limit) from a channel, submitted as they come, so simulating overlaps
/// reading. The reader sends them in submission order; should a job come out of order all the
/// same, or the reader abandon the stream, the workload stops submitting and
/// [`StreamedJobs::in_order`] turns false (the trace is replayed whole instead).
pub struct StreamedJobs {
    source: std::sync::mpsc::Receiver<StreamMessage>,
    buffer: std::collections::VecDeque<Job>,
    /// The (submit, job number) of the latest job received.
    last: Option<(Time, i64)>,
    in_order: bool,
    /// The reader is done (the channel closed).
    closed: bool,
    /// The reader sent its end mark: it read the whole trace.
    read_whole: bool,
    /// The reader committed to the stream.
    committed: bool,
    /// The jobs received and not yet ended that the log says were stopped at their limit.
    stopped_at_limit: std::collections::HashSet<i64>,
}

impl StreamedJobs {
    /// Replays the jobs received from `source`; waits for the first chunk.
    pub fn new(source: std::sync::mpsc::Receiver<StreamMessage>) -> StreamedJobs {
        let mut jobs = StreamedJobs {
            source,
            buffer: std::collections::VecDeque::new(),
            last: None,
            in_order: true,
            closed: false,
            read_whole: false,
            committed: false,
            stopped_at_limit: std::collections::HashSet::new(),
        };
        jobs.receive();
        jobs
    }

    /// Whether every job received so far came in submission order (and the reader did not
    /// abandon the stream).
    pub fn in_order(&self) -> bool {
        self.in_order
    }

    /// Whether the jobs so far are for good: the reader read the whole trace without error and
    /// every job was received, or it committed to the stream; and they came in order.
    pub fn confirmed(&self) -> bool {
        (self.read_whole || self.committed) && self.in_order
    }

    /// Whether the log says job `job_id` was stopped at its limit; forgets the job (ask once,
    /// when its record is final).
    pub fn take_stopped_at_limit(&mut self, job_id: i64) -> bool {
        self.stopped_at_limit.remove(&job_id)
    }

    /// Takes every message already sent, and waits for one if no job is buffered (so the next
    /// arrival is known), until the reader is done.
    fn receive(&mut self) {
        while !self.closed {
            let message = if self.buffer.is_empty() {
                match self.source.recv() {
                    Ok(message) => message,
                    Err(_) => {
                        self.closed = true;
                        break;
                    }
                }
            } else {
                match self.source.try_recv() {
                    Ok(message) => message,
                    Err(std::sync::mpsc::TryRecvError::Empty) => break,
                    Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                        self.closed = true;
                        break;
                    }
                }
            };
            let chunk = match message {
                StreamMessage::Jobs(chunk) => chunk,
                StreamMessage::Committed => {
                    self.committed = true;
                    continue;
                }
                StreamMessage::Abandon => {
                    self.in_order = false;
                    continue;
                }
                StreamMessage::End => {
                    self.read_whole = true;
                    continue;
                }
            };
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

    fn arrivals(&mut self, now: Time, out: &mut Vec<Job>) {
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

/// The job numbers read so far, to refuse a duplicate, as runs of consecutive numbers
/// (first, last), sorted and apart: real logs number their jobs 1, 2, 3, ..., so a trace of
/// millions of jobs takes a handful of runs, not a number per job, and a number that extends
/// the last run (or starts a new one after it) costs a comparison.
#[derive(Default)]
struct SeenJobs {
    runs: Vec<(i64, i64)>,
}

impl SeenJobs {
    /// Adds `job`; false when it was seen before.
    fn insert(&mut self, job: i64) -> bool {
        match self.runs.last_mut() {
            None => {
                self.runs.push((job, job));
                return true;
            }
            Some(last) if last.1.checked_add(1) == Some(job) => {
                last.1 = job;
                return true;
            }
            Some(last) if job > last.1 => {
                self.runs.push((job, job));
                return true;
            }
            Some(_) => {}
        }
        // Out of order: the first run that ends at or after `job`.
        let at = self.runs.partition_point(|&(_, last)| last < job);
        if self.runs.get(at).is_some_and(|&(first, _)| first <= job) {
            return false;
        }
        let joins_before = at > 0 && self.runs[at - 1].1.checked_add(1) == Some(job);
        let joins_after = self
            .runs
            .get(at)
            .is_some_and(|&(first, _)| job.checked_add(1) == Some(first));
        match (joins_before, joins_after) {
            (true, true) => {
                self.runs[at - 1].1 = self.runs[at].1;
                self.runs.remove(at);
            }
            (true, false) => self.runs[at - 1].1 = job,
            (false, true) => self.runs[at].0 = job,
            (false, false) => self.runs.insert(at, (job, job)),
        }
        true
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
fn job_from_record(r: &Record, machine: u32, input: &mut InputCounts) -> Option<Job> {
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
    Some(Job {
        array_task: Default::default(),
        reservation: Default::default(),
        shape: Default::default(),
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
        extra: job::Extra::NONE,
    })
}

impl Workload for Replay {
    fn next_arrival(&self) -> Option<Time> {
        self.jobs.get(self.next).map(|j| j.submit)
    }

    fn arrivals(&mut self, now: Time, out: &mut Vec<Job>) {
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
        // Runs merge from both sides, and the extremes do not overflow.
        let mut seen = SeenJobs::default();
        for job in [1, 3, 2, i64::MAX, i64::MIN, 5, 4] {
            assert!(seen.insert(job), "{job}");
        }
        assert_eq!(seen.runs.len(), 3, "{:?}", seen.runs);
        for job in [1, 2, 3, 4, 5, i64::MAX, i64::MIN] {
            assert!(!seen.insert(job), "{job}");
        }
        assert!(seen.insert(6) && seen.insert(0) && seen.runs.len() == 3);
    }

    proptest::proptest! {
        /// The runs say "seen" exactly where a set of every number does.
        #[test]
        fn seen_jobs_agree_with_a_set(jobs in proptest::collection::vec(-50i64..50, 0..200)) {
            let mut seen = SeenJobs::default();
            let mut set = std::collections::HashSet::new();
            for job in jobs {
                proptest::prop_assert_eq!(seen.insert(job), set.insert(job));
            }
        }
    }

    fn replay(text: &str, processors: Option<u32>) -> Result<Replay, ReplayError> {
        let reader = SwfReader::new(text.as_bytes(), "t.swf").map_err(ReplayError::Swf)?;
        Replay::from_reader(reader, processors)
    }

    const JOB: &str = "1 0 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n";

    /// A trace of jobs numbered 1.. submitted at `submits`.
    fn trace_of(submits: &[i64]) -> String {
        let mut text = String::from("; MaxProcs: 4\n");
        for (i, submit) in submits.iter().enumerate() {
            text.push_str(&format!(
                "{} {submit} 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n",
                i + 1
            ));
        }
        text
    }

    /// Streams `text` with `limits`: what was sent (jobs in order, the marks as ids 0 for
    /// Committed, -1 for Abandon, -2 for End) and the outcome.
    fn stream(text: &str, limits: StreamLimits) -> (Vec<i64>, Result<Streaming, ReplayError>) {
        let reader = SwfReader::new(text.as_bytes(), "t.swf").unwrap();
        let mut sent = Vec::new();
        let outcome = ReplayReader::new(reader, None)
            .unwrap()
            .stream(limits, &mut |message| match message {
                StreamMessage::Jobs(jobs) => sent.extend(jobs.iter().map(|(j, _)| j.job_id)),
                StreamMessage::Committed => sent.push(0),
                StreamMessage::Abandon => sent.push(-1),
                StreamMessage::End => sent.push(-2),
            });
        (sent, outcome)
    }

    #[test]
    fn a_stream_puts_jobs_in_order_within_its_window() {
        // Job 3 is submitted before job 2, one place out of order.
        let text = trace_of(&[0, 20, 10, 30, 40]);
        let limits = StreamLimits {
            window: 2,
            staged: 100,
        };
        let (sent, outcome) = stream(&text, limits);
        assert_eq!(sent, vec![1, 3, 2, 4, 5, -2]);
        let Ok(Streaming::Streamed(replay)) = outcome else {
            panic!("streamed: {outcome:?}")
        };
        assert!(replay.jobs.is_empty(), "a streamed read keeps no job");
        assert_eq!(replay.input.read, 5);
        // The same order as the trace read whole.
        let whole =
            Replay::from_reader(SwfReader::new(text.as_bytes(), "t.swf").unwrap(), None).unwrap();
        let ids: Vec<i64> = whole.jobs.iter().map(|j| j.job_id).collect();
        assert_eq!(ids, vec![1, 3, 2, 4, 5]);
    }

    #[test]
    fn a_stream_out_of_order_beyond_its_window_is_read_whole_or_refused() {
        // Job 5 belongs first, four places back: beyond a window of 1.
        let text = trace_of(&[10, 20, 30, 40, 0, 50]);
        let early = StreamLimits {
            window: 1,
            staged: 100,
        };
        let (sent, outcome) = stream(&text, early);
        // (jobs 1-3 were released from the window, but not yet sent: a chunk is 1024 jobs)
        assert_eq!(sent, vec![-1], "abandoned once job 5 came");
        let Ok(Streaming::Whole(replay)) = outcome else {
            panic!("read whole: {outcome:?}")
        };
        let ids: Vec<i64> = replay.jobs.iter().map(|j| j.job_id).collect();
        assert_eq!(ids, vec![5, 1, 2, 3, 4, 6], "every job, sorted");
        // Committed after two jobs: too late to read it whole, an error naming the job.
        let late = StreamLimits {
            window: 1,
            staged: 2,
        };
        let (sent, outcome) = stream(&text, late);
        assert_eq!(sent, vec![1, 2, 0]);
        let e = outcome.err().map(|e| e.to_string()).unwrap_or_default();
        assert!(
            e.contains("t.swf: job 5 (submit 0) is out of submission order by more than 1 jobs"),
            "{e}"
        );
    }

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
