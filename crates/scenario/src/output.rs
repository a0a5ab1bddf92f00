//! Every output file of a run, behind one interface.
//!
//! An [`OutputFormat`] names its file and makes a [`Sink`] that writes it as the run's records
//! come ([`OutputFormat::sink`]). [`FORMATS`] registers them; a [`crate::Simulation`] asked for
//! its outputs ([`crate::Simulation::outputs`]) writes every registered format that applies to
//! the run, on every path (a streamed or kept site run, a replay, a sweep's run, the command
//! line or Python). A new format is one type implementing the trait plus one line in
//! [`FORMATS`] (see ARCHITECTURE.md). CSV is written with the `csv` crate; SWF with the `swf`
//! crate's writer.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;

use cluster::Cell;
use config::{Result, ScenarioError};
use metrics::{BatchRecord, JobRecord, SessionRecord};

use crate::sink::{JobEvent, RunEnd, RunHeader, Sink, UserOrdered};

/// One output file format.
pub trait OutputFormat: Sync {
    /// The file's name in the output directory (`jobs.csv`).
    fn file_name(&self) -> &'static str;
    /// One line on what the file holds.
    fn about(&self) -> &'static str;
    /// Whether the run has what the file needs (sessions exist only in site-level runs and
    /// replays with feedback).
    fn applies(&self, run: &RunHeader) -> bool {
        let _ = run;
        true
    }
    /// Whether the file is written only when asked for (`--batsim-jobs`, `--swf`): a command
    /// that writes every format leaves it out.
    fn on_request(&self) -> bool {
        false
    }
    /// A sink that writes the file to `out` as the run's records come (and flushes `out` when
    /// it finishes).
    fn sink(&self, run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>>;
}

impl std::fmt::Debug for dyn OutputFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OutputFormat({})", self.file_name())
    }
}

/// Every output format, in the order the files are written.
pub static FORMATS: &[&dyn OutputFormat] = &[
    &JobsCsv,
    &SessionsCsv,
    &BatchesCsv,
    &SummaryJson,
    &crate::batsim::BatsimJobs,
    &crate::run::WorkloadSwf,
    &crate::slurm_report::SharesCsv,
    &crate::node_report::NodesCsv,
    &crate::outages::OutagesCsv,
];

/// The registered format writing `name`.
pub fn find_format(name: &str) -> Option<&'static dyn OutputFormat> {
    FORMATS.iter().copied().find(|f| f.file_name() == name)
}

/// The formats a command writes by default: every registered format not written only on
/// request, and those on request whose file names `requested` holds.
pub fn formats(requested: &[&str]) -> Vec<&'static dyn OutputFormat> {
    FORMATS
        .iter()
        .copied()
        .filter(|f| !f.on_request() || requested.contains(&f.file_name()))
        .collect()
}

/// The columns of `jobs.csv`, in order.
pub const JOB_COLUMNS: [&str; 16] = [
    "job_id",
    "user",
    "group",
    "session",
    "batch",
    "submit",
    "start",
    "end",
    "processors",
    "runtime",
    "estimate",
    "killed",
    "wait",
    "response",
    "slowdown",
    "bounded_slowdown",
];

/// The columns of `sessions.csv`, in order.
pub const SESSION_COLUMNS: [&str; 7] = [
    "user", "group", "session", "jobs", "start", "end", "ended_by",
];

/// The columns of `batches.csv`, in order.
pub const BATCH_COLUMNS: [&str; 12] = [
    "user",
    "group",
    "session",
    "batch",
    "jobs",
    "job_id",
    "end",
    "wait",
    "runtime",
    "response",
    "continue_probability",
    "decision",
];

/// `jobs.csv`: one row per job (see [`JobRows`]).
#[derive(Debug, Clone, Copy)]
pub struct JobsCsv;

impl OutputFormat for JobsCsv {
    fn file_name(&self) -> &'static str {
        "jobs.csv"
    }
    fn about(&self) -> &'static str {
        "one row per job: submit, start, end, size, estimate, killed, wait, response, slowdowns"
    }
    fn sink(&self, run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(JobsSink {
            rows: JobRows::new(out, run.columns.cloned(), run.resources)?,
            group_names: run.group_names.to_vec(),
        }))
    }
}

/// Writes jobs.csv's rows as the records come.
struct JobsSink {
    rows: JobRows<Box<dyn Write + Send>>,
    group_names: Vec<String>,
}

impl Sink for JobsSink {
    fn job(&mut self, job: JobEvent<'_>) -> Result<()> {
        let owner = job.owner.map(|(submission, group)| {
            let name = self.group_names.get(group).map_or("", String::as_str);
            (name, submission.session, submission.batch)
        });
        self.rows.row(job.record, owner)
    }
    fn finish(self: Box<Self>, _end: &RunEnd<'_>) -> Result<()> {
        self.rows.finish()
    }
}

/// `sessions.csv`: one row per user session (site-level runs, replays with feedback), by user.
#[derive(Debug, Clone, Copy)]
pub struct SessionsCsv;

impl OutputFormat for SessionsCsv {
    fn file_name(&self) -> &'static str {
        "sessions.csv"
    }
    fn about(&self) -> &'static str {
        "one row per session: user, group, jobs, start, end and why it ended"
    }
    fn applies(&self, run: &RunHeader) -> bool {
        run.has_sessions()
    }
    fn sink(&self, run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(SessionsSink(UserOrdered::new(
            "sessions.csv",
            &SESSION_COLUMNS,
            out,
            run.scratch,
            run.users,
        )?)))
    }
}

struct SessionsSink(UserOrdered);

impl Sink for SessionsSink {
    fn job(&mut self, _job: JobEvent<'_>) -> Result<()> {
        Ok(())
    }
    fn session(&mut self, s: &SessionRecord) -> Result<()> {
        self.0.push(s.user, (s.session, 0), |w| session_row(w, s))
    }
    fn finish(self: Box<Self>, _end: &RunEnd<'_>) -> Result<()> {
        self.0.finish()
    }
}

/// `batches.csv`: one row per completed batch and the decision after it (site-level runs), by
/// user.
#[derive(Debug, Clone, Copy)]
pub struct BatchesCsv;

impl OutputFormat for BatchesCsv {
    fn file_name(&self) -> &'static str {
        "batches.csv"
    }
    fn about(&self) -> &'static str {
        "one row per completed batch: its deciding job's wait, runtime and response, the continue probability and the decision"
    }
    fn applies(&self, run: &RunHeader) -> bool {
        run.has_batches()
    }
    fn sink(&self, run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(BatchesSink(UserOrdered::new(
            "batches.csv",
            &BATCH_COLUMNS,
            out,
            run.scratch,
            run.users,
        )?)))
    }
}

struct BatchesSink(UserOrdered);

impl Sink for BatchesSink {
    fn job(&mut self, _job: JobEvent<'_>) -> Result<()> {
        Ok(())
    }
    fn batch(&mut self, b: &BatchRecord) -> Result<()> {
        self.0
            .push(b.user, (b.session, b.batch), |w| batch_row(w, b))
    }
    fn finish(self: Box<Self>, _end: &RunEnd<'_>) -> Result<()> {
        self.0.finish()
    }
}

/// `summary.json`: the run's settings and every summary measure.
#[derive(Debug, Clone, Copy)]
pub struct SummaryJson;

impl OutputFormat for SummaryJson {
    fn file_name(&self) -> &'static str {
        "summary.json"
    }
    fn about(&self) -> &'static str {
        "the run's settings and summaries (the measure catalogue's json paths point into it)"
    }
    fn sink(&self, _run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(SummarySink(out)))
    }
}

struct SummarySink(Box<dyn Write + Send>);

impl Sink for SummarySink {
    fn job(&mut self, _job: JobEvent<'_>) -> Result<()> {
        Ok(())
    }
    fn finish(mut self: Box<Self>, end: &RunEnd<'_>) -> Result<()> {
        self.0
            .write_all(end.summary_json.as_bytes())
            .and_then(|()| self.0.write_all(b"\n"))
            .and_then(|()| self.0.flush())
            .map_err(|source| io_error("summary.json", source))
    }
}

/// `value` as pretty-printed JSON (two-space indent, keys in declaration order).
pub fn render_json(value: &impl serde::Serialize) -> Result<String> {
    serde_json::to_string_pretty(value)
        .map_err(|e| ScenarioError::Invalid(format!("cannot render the summary as JSON: {e}")))
}

/// The error of writing `what` (`cannot write jobs.csv`), caused by `source`.
pub fn io_error(what: &str, source: std::io::Error) -> ScenarioError {
    ScenarioError::Io {
        what: format!("cannot write {what}"),
        source,
    }
}

/// The error of writing `what` as CSV: [`io_error`] for an I/O error, else what the CSV writer
/// refused.
pub fn csv_error(what: &str, e: csv::Error) -> ScenarioError {
    match e.into_kind() {
        csv::ErrorKind::Io(source) => io_error(what, source),
        other => ScenarioError::Invalid(format!("cannot write {what}: {other:?}")),
    }
}

/// Writes the per-job table of a replay: a header row, then one row per record in the given
/// order, with columns [`JOB_COLUMNS`] (`group` and `session` empty). See [`JobRows`].
/// Records that carry their rule's annotations go on with `columns`' columns (the Slurm
/// model's: [`slurm_model::SlurmColumns`]).
pub fn write_jobs_csv(
    records: &[JobRecord],
    columns: Option<Arc<dyn cluster::Columns>>,
    out: &mut dyn Write,
) -> Result<()> {
    let mut rows = JobRows::new(out, columns, &[])?;
    for r in records {
        rows.row(r, None)?;
    }
    rows.finish()
}

/// jobs.csv row by row: the header when created, then [`JobRows::row`] per record. Users are
/// numbered from 1 (the trace's ids in a replay); `group` is the owner's group name, `session`
/// its session's number and `batch` the batch's number in the session (as in sessions.csv and
/// batches.csv, so jobs.csv joins them on (user, session) and (user, session, batch)), all empty
/// in a replay. Times are whole seconds; `runtime` is what the job
/// actually ran (end - start); `killed` is 0 or 1; slowdowns use the shortest decimal that
/// reads back exactly. Numbers never need quoting, so a row is formatted straight into a buffer
/// (itoa, ryu); the group name is quoted by the csv crate, once per distinct name. Under the
/// rule that annotates its jobs (the Slurm model) the rows go on with the rule's columns
/// ([`cluster::Columns`]; empty for a record without an annotation).
pub struct JobRows<W: Write> {
    out: W,
    /// How many of the machine's other resources have a column ([`JobRows::new`]).
    resources: usize,
    /// The backfilling rule's annotation columns, if it annotates.
    columns: Option<Arc<dyn cluster::Columns>>,
    /// The texts of annotations written so far, as CSV fields.
    texts: HashMap<String, Vec<u8>>,
    buffer: Vec<u8>,
    ints: itoa::Buffer,
    floats: ryu::Buffer,
    /// The latest group name and its field as the csv crate writes it.
    name: Option<(String, Vec<u8>)>,
}

/// Bytes buffered before a write to the output.
const ROWS_BUFFER: usize = 1 << 16;

impl<W: Write> JobRows<W> {
    /// Writes the header: [`JOB_COLUMNS`], then the names of `columns` (the rule's annotation
    /// columns, if it annotates).
    ///
    /// A column for each of the machine's other resources (`resources`, their names in
    /// [`job::Extra`]'s order: what the job held of each; none on a machine of processors
    /// only) comes after [`JOB_COLUMNS`], before the rule's.
    pub fn new(
        out: W,
        columns: Option<Arc<dyn cluster::Columns>>,
        resources: &[String],
    ) -> Result<JobRows<W>> {
        let resources = &resources[..resources.len().min(job::MAX_EXTRA_KINDS)];
        let mut buffer = Vec::with_capacity(ROWS_BUFFER + 512);
        {
            let mut w = csv::Writer::from_writer(&mut buffer);
            let extra: &[&str] = columns.as_deref().map_or(&[], |c| c.names());
            let names = resources.iter().map(String::as_str);
            w.write_record(
                JOB_COLUMNS
                    .iter()
                    .copied()
                    .chain(names)
                    .chain(extra.iter().copied()),
            )
            .map_err(|e| csv_error("jobs.csv", e))?;
            w.flush().map_err(|e| io_error("jobs.csv", e))?;
        }
        Ok(JobRows {
            out,
            resources: resources.len(),
            columns,
            texts: HashMap::new(),
            buffer,
            ints: itoa::Buffer::new(),
            floats: ryu::Buffer::new(),
            name: None,
        })
    }

    /// Writes one record's row; `owner` is its group name, session number and batch number in
    /// the session (empty columns without).
    pub fn row(&mut self, r: &JobRecord, owner: Option<(&str, u32, u32)>) -> Result<()> {
        let b = &mut self.buffer;
        b.extend_from_slice(self.ints.format(r.job_id).as_bytes());
        b.push(b',');
        b.extend_from_slice(self.ints.format(r.user).as_bytes());
        b.push(b',');
        if let Some((name, session, batch)) = owner {
            if self.name.as_ref().is_none_or(|(n, _)| n != name) {
                self.name = Some((name.to_string(), csv_field(name)?));
            }
            if let Some((_, field)) = &self.name {
                b.extend_from_slice(field);
            }
            b.push(b',');
            b.extend_from_slice(self.ints.format(session).as_bytes());
            b.push(b',');
            b.extend_from_slice(self.ints.format(batch).as_bytes());
        } else {
            b.extend_from_slice(b",,");
        }
        for value in [
            r.submit,
            r.start,
            r.end,
            i64::from(r.processors),
            r.runtime(),
            r.estimate,
            i64::from(r.killed),
            r.wait(),
            r.response(),
        ] {
            b.push(b',');
            b.extend_from_slice(self.ints.format(value).as_bytes());
        }
        b.push(b',');
        b.extend_from_slice(self.floats.format(r.slowdown()).as_bytes());
        b.push(b',');
        b.extend_from_slice(self.floats.format(r.bounded_slowdown()).as_bytes());
        for &amount in &r.extra.amounts()[..self.resources] {
            b.push(b',');
            b.extend_from_slice(self.ints.format(amount).as_bytes());
        }
        if let Some(columns) = &self.columns {
            let n = columns.names().len();
            match &r.annotation {
                Some(annotation) => {
                    for column in 0..n {
                        b.push(b',');
                        match columns.cell(annotation, column) {
                            Cell::Empty => {}
                            Cell::Int(v) => b.extend_from_slice(self.ints.format(v).as_bytes()),
                            Cell::Float(v) => {
                                b.extend_from_slice(self.floats.format(v).as_bytes());
                            }
                            Cell::Text(text) => {
                                if let Some(field) = self.texts.get(text.as_ref()) {
                                    b.extend_from_slice(field);
                                } else {
                                    let field = csv_field(&text)?;
                                    b.extend_from_slice(&field);
                                    self.texts.insert(text.into_owned(), field);
                                }
                            }
                        }
                    }
                }
                None => b.extend(std::iter::repeat_n(b',', n)),
            }
        }
        b.push(b'\n');
        if b.len() >= ROWS_BUFFER {
            self.out.write_all(b).map_err(|e| io_error("jobs.csv", e))?;
            b.clear();
        }
        Ok(())
    }

    /// The output (bytes already written to it; the latest rows may still be buffered here).
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }

    /// Writes what is buffered and flushes the output.
    pub fn finish(mut self) -> Result<()> {
        self.out
            .write_all(&self.buffer)
            .and_then(|()| self.out.flush())
            .map_err(|e| io_error("jobs.csv", e))
    }
}

/// `text` as the csv crate writes it as one field of a row of several (quoted only when it
/// needs to be; an empty field stays empty).
fn csv_field(text: &str) -> Result<Vec<u8>> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    let mut field = Vec::new();
    {
        let mut w = csv::Writer::from_writer(&mut field);
        w.write_record([text])
            .map_err(|e| csv_error("jobs.csv", e))?;
        w.flush().map_err(|e| io_error("jobs.csv", e))?;
    }
    if field.last() == Some(&b'\n') {
        field.pop();
    }
    Ok(field)
}

/// Writes the sessions table with columns [`SESSION_COLUMNS`]; `ended_by` is `abort`, `cycle`
/// or `end_of_run`. Group names are quoted when they need it.
pub fn write_sessions_csv(sessions: &[SessionRecord], out: &mut dyn Write) -> Result<()> {
    let mut w = csv::Writer::from_writer(out);
    let fail = |e| csv_error("sessions.csv", e);
    w.write_record(SESSION_COLUMNS).map_err(fail)?;
    for s in sessions {
        session_row(&mut w, s).map_err(fail)?;
    }
    w.flush().map_err(|e| io_error("sessions.csv", e))
}

/// One row of sessions.csv.
pub(crate) fn session_row<W: Write>(w: &mut csv::Writer<W>, s: &SessionRecord) -> csv::Result<()> {
    let mut ints = itoa::Buffer::new();
    w.write_field(ints.format(s.user))?;
    w.write_field(&s.group)?;
    w.write_field(ints.format(s.session))?;
    w.write_field(ints.format(s.jobs))?;
    w.write_field(ints.format(s.start))?;
    w.write_field(ints.format(s.end))?;
    w.write_field(s.ended_by.label())?;
    w.write_record(None::<&[u8]>)
}

/// Writes the batches table with columns [`BATCH_COLUMNS`]: the user, its group, the session
/// number and the batch's number in it (from 1), the jobs submitted in the batch, the deciding
/// job (the batch's last to end: `job_id`, its `end`, the moment of the decision, and its `wait`,
/// `runtime` and `response` in seconds), the `continue_probability` the user's trial used (the
/// shortest decimal that reads back exactly; empty when no trial was made) and the `decision`
/// ([`metrics::BatchDecision::label`]: `continue`, `break`, `cycle` or `end`).
pub fn write_batches_csv(batches: &[BatchRecord], out: &mut dyn Write) -> Result<()> {
    let mut w = csv::WriterBuilder::new()
        .buffer_capacity(1 << 16)
        .from_writer(out);
    let fail = |e| csv_error("batches.csv", e);
    w.write_record(BATCH_COLUMNS).map_err(fail)?;
    for b in batches {
        batch_row(&mut w, b).map_err(fail)?;
    }
    w.flush().map_err(|e| io_error("batches.csv", e))
}

/// One row of batches.csv.
pub(crate) fn batch_row<W: Write>(w: &mut csv::Writer<W>, b: &BatchRecord) -> csv::Result<()> {
    let mut ints = itoa::Buffer::new();
    let mut floats = ryu::Buffer::new();
    w.write_field(ints.format(b.user))?;
    w.write_field(&b.group)?;
    for value in [b.session, b.batch, b.jobs] {
        w.write_field(ints.format(value))?;
    }
    for value in [b.job_id, b.end, b.wait, b.runtime, b.response] {
        w.write_field(ints.format(value))?;
    }
    match b.continue_probability {
        Some(p) => w.write_field(floats.format(p))?,
        None => w.write_field("")?,
    }
    w.write_field(b.decision.label())?;
    w.write_record(None::<&[u8]>)
}

/// Writes an SWF file: the header's comment lines, then one line per record.
pub fn write_swf(header: &swf::Header, records: &[swf::Record], out: &mut dyn Write) -> Result<()> {
    let fail = |e: std::io::Error| io_error("the SWF file", e);
    let mut writer = swf::SwfWriter::new(out, header).map_err(fail)?;
    for record in records {
        writer.write_record(record).map_err(fail)?;
    }
    writer.finish().map_err(fail)?;
    Ok(())
}

#[cfg(test)]
pub(crate) mod tests {
    use metrics::SessionEnd;

    use super::*;

    fn record(job_id: i64, killed: bool) -> JobRecord {
        JobRecord {
            job: metrics::Job {
                job_id,
                user: 3,
                submit: 10,
                processors: 4,
                estimate: 30,
                ..metrics::Job::default()
            },
            start: 20,
            end: 50,
            killed,
            ..JobRecord::default()
        }
    }

    fn text(write: impl FnOnce(&mut dyn Write) -> Result<()>) -> String {
        let mut bytes = Vec::new();
        assert!(write(&mut bytes).is_ok());
        String::from_utf8(bytes).unwrap_or_default()
    }

    #[test]
    fn jobs_header_and_row() {
        assert_eq!(
            text(|w| write_jobs_csv(&[record(7, true)], None, w)),
            "job_id,user,group,session,batch,submit,start,end,processors,runtime,estimate,killed,wait,response,slowdown,bounded_slowdown\n\
             7,3,,,,10,20,50,4,30,30,1,10,40,1.3333333333333333,1.3333333333333333\n"
        );
        let with_owner = text(|w| {
            let mut rows = JobRows::new(w, None, &[])?;
            rows.row(&record(7, true), Some(("night, late", 2, 5)))?;
            rows.finish()
        });
        assert_eq!(
            with_owner.lines().nth(1),
            Some(
                "7,3,\"night, late\",2,5,10,20,50,4,30,30,1,10,40,1.3333333333333333,1.3333333333333333"
            )
        );
    }

    #[test]
    fn a_csv_reader_reads_jobs_back() {
        let records = [record(1, false), record(-1, true)];
        let t = text(|w| write_jobs_csv(&records, None, w));
        let mut reader = csv::Reader::from_reader(t.as_bytes());
        let headers: Vec<String> = reader
            .headers()
            .map(|h| h.iter().map(String::from).collect())
            .unwrap_or_default();
        assert_eq!(headers, JOB_COLUMNS);
        let rows: Vec<csv::StringRecord> = reader.records().filter_map(|r| r.ok()).collect();
        assert_eq!(rows.len(), 2);
        assert_eq!(&rows[1][0], "-1");
        assert_eq!(&rows[1][11], "1");
        assert_eq!(rows[0][14].parse::<f64>().ok(), Some(records[0].slowdown()));
    }

    #[test]
    fn sessions_quote_group_names_that_need_it() {
        let s = SessionRecord {
            user: 0,
            group: "night, \"batch\"".into(),
            session: 1,
            jobs: 3,
            start: 5,
            end: 15,
            ended_by: SessionEnd::Cycle,
        };
        assert_eq!(
            text(|w| write_sessions_csv(&[s], w)),
            "user,group,session,jobs,start,end,ended_by\n0,\"night, \"\"batch\"\"\",1,3,5,15,cycle\n"
        );
    }

    /// A writer whose bytes the test reads afterwards.
    #[derive(Clone, Default)]
    pub(crate) struct Shared(pub(crate) std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    /// The header of a replay of counted processors with no options.
    pub(crate) fn replay_header() -> RunHeader<'static> {
        RunHeader {
            kind: crate::sink::RunKind::Replay { feedback: false },
            group_names: &[],
            users: 0,
            scratch: None,
            site: None,
            scheduler: "easy",
            slurm: None,
            columns: None,
            resources: &[],
            node_names: None,
            out_of_service: false,
        }
    }

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            if let Ok(mut b) = self.0.lock() {
                b.extend_from_slice(buf);
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_format_has_a_unique_file_name_and_writes_a_site_run() {
        let site = config::site::Site::default_site().unwrap();
        let names = vec!["users".to_string()];
        let slurm = slurm_model::SlurmConfig::default();
        let columns: Arc<dyn cluster::Columns> = Arc::new(slurm_model::SlurmColumns::new(&slurm));
        let header = RunHeader {
            kind: crate::sink::RunKind::Site,
            group_names: &names,
            users: 1,
            scratch: None,
            site: Some(&site),
            scheduler: "slurm",
            slurm: Some(&slurm),
            columns: Some(&columns),
            node_names: Some(&names),
            resources: &[],
            out_of_service: true,
        };
        let mut files: Vec<&str> = FORMATS.iter().map(|f| f.file_name()).collect();
        files.sort_unstable();
        files.dedup();
        assert_eq!(files.len(), FORMATS.len());
        let submission = users::Submission {
            job_id: 1,
            user: 0,
            group: 1,
            session: 1,
            batch: 1,
            submit: 10,
            processors: 4,
            estimate: 30,
            runtime: 30,
            bandwidth: 0,
            preceding: None,
            request: Default::default(),
        };
        for format in FORMATS {
            assert!(!format.about().is_empty());
            assert!(format.applies(&header), "{}", format.file_name());
            let out = Shared::default();
            let mut sink = format.sink(&header, Box::new(out.clone())).unwrap();
            sink.job(JobEvent {
                record: &record(1, false),
                owner: Some((&submission, 0)),
            })
            .unwrap();
            sink.finish(&RunEnd {
                summary_json: "{}",
                placements: None,
                shares: None,
                node_shares: None,
                energies: None,
                out_of_service: &[],
            })
            .unwrap();
            assert!(!out.0.lock().unwrap().is_empty(), "{}", format.file_name());
        }
        let replay = RunHeader {
            kind: crate::sink::RunKind::Replay { feedback: false },
            site: None,
            scheduler: "easy",
            slurm: None,
            columns: None,
            node_names: None,
            resources: &[],
            out_of_service: false,
            ..header
        };
        assert!(!SessionsCsv.applies(&replay));
        assert!(!BatchesCsv.applies(&replay));
        assert!(!crate::slurm_report::SharesCsv.applies(&replay));
        assert!(!crate::outages::OutagesCsv.applies(&replay));
    }

    #[test]
    fn batches_header_rows_and_empty_probability() {
        let batch = |decision, p| BatchRecord {
            user: 2,
            group: "day, users".into(),
            session: 3,
            batch: 4,
            jobs: 5,
            job_id: 17,
            end: 900,
            wait: 60,
            runtime: 240,
            response: 300,
            continue_probability: p,
            decision,
        };
        assert_eq!(
            text(|w| write_batches_csv(
                &[
                    batch(metrics::BatchDecision::Continue, Some(0.4)),
                    batch(metrics::BatchDecision::Cycle, None)
                ],
                w
            )),
            "user,group,session,batch,jobs,job_id,end,wait,runtime,response,continue_probability,decision\n\
             2,\"day, users\",3,4,5,17,900,60,240,300,0.4,continue\n\
             2,\"day, users\",3,4,5,17,900,60,240,300,,cycle\n"
        );
    }
}
