//! Typed readers of the files sitesim writes, for whatever reads a run or a sweep back (the
//! figures): jobs.csv ([`read_jobs`], the columns of [`crate::output::JOB_COLUMNS`]), a sweep's
//! results.csv ([`read_results`]; its writer, the sweep's `results` module, shares its column
//! names, [`column`](mod@column)), and what the figures need of summary.json ([`read_summary`]: the machine)
//! and of batsim_jobs.csv ([`read_placements`]: the processors each job held); [`read_run`] reads
//! all three of a run's output directory.
//!
//! CSV is read by the `csv` crate into serde types, row by row; an error names the file, the line
//! (1 is the header) and, when one field is at fault, its column ([`ScenarioError::Table`]).

use std::io::Read;
use std::path::Path;

use config::{Result, ScenarioError};
use csv::StringRecord;
use serde::Deserialize;
use serde::de::DeserializeOwned;

use crate::batsim::{Intervals, parse_intervals};
use crate::outages::{OUTAGE_COLUMNS, OutOfService};
use crate::output::JOB_COLUMNS;

/// One row of jobs.csv ([`crate::output::write_jobs_csv`]): a job as it ran. Times are whole
/// seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct JobRow {
    /// The job's id (the SWF job number in a replay).
    pub job_id: i64,
    /// The owner's user id.
    pub user: i64,
    /// The owner's group name (site-level runs; `None` in a replay, whose column is empty).
    pub group: Option<String>,
    /// The number of the owner's session, from 1 (site-level runs; `None` in a replay).
    pub session: Option<u32>,
    /// The number of its batch in the session, from 1 (site-level runs; `None` in a replay and
    /// in tables written before jobs.csv had batches).
    pub batch: Option<u32>,
    /// When it was submitted.
    pub submit: i64,
    /// When it started.
    pub start: i64,
    /// When it ended.
    pub end: i64,
    /// Processors it held.
    pub processors: u32,
    /// What it ran (end - start).
    pub runtime: i64,
    /// The user's runtime estimate.
    pub estimate: i64,
    /// Whether it was killed at its estimate.
    pub killed: bool,
    /// start - submit.
    pub wait: i64,
    /// end - submit.
    pub response: i64,
    /// Response over a runtime of at least 1 s.
    pub slowdown: f64,
    /// Slowdown bounded at 10 s.
    pub bounded_slowdown: f64,
}

/// jobs.csv's fields as serde reads them (by column name); `killed` is checked afterwards, so
/// that its error names the column.
#[derive(Deserialize)]
struct JobFields {
    job_id: i64,
    user: i64,
    group: Option<String>,
    session: Option<u32>,
    #[serde(default)]
    batch: Option<u32>,
    submit: i64,
    start: i64,
    end: i64,
    processors: u32,
    runtime: i64,
    estimate: i64,
    killed: u8,
    wait: i64,
    response: i64,
    slowdown: f64,
    bounded_slowdown: f64,
}

/// The columns of jobs.csv that may be missing: tables written before jobs had groups,
/// sessions and batches lack them (their rows then have none).
const OPTIONAL_JOB_COLUMNS: [&str; 3] = ["group", "session", "batch"];

/// Reads jobs.csv.
pub fn read_jobs(path: &Path) -> Result<Vec<JobRow>> {
    let reader = TableReader::open(path, &format!("cannot read {}", path.display()))?;
    jobs_from(reader)
}

/// Reads jobs.csv from `input`; `file` names it in errors.
pub fn jobs_from_reader(file: &str, input: impl Read) -> Result<Vec<JobRow>> {
    jobs_from(TableReader::new(file, input)?)
}

fn jobs_from<R: Read>(mut table: TableReader<R>) -> Result<Vec<JobRow>> {
    let required: Vec<&str> = JOB_COLUMNS
        .into_iter()
        .filter(|c| !OPTIONAL_JOB_COLUMNS.contains(c))
        .collect();
    table.require(&required)?;
    let mut jobs = Vec::new();
    table.rows(0, |fields: JobFields, line, _, table| {
        let killed = match fields.killed {
            0 => false,
            1 => true,
            other => {
                return Err(table.error(
                    line,
                    Some("killed"),
                    format!("{other} is neither 0 nor 1"),
                ));
            }
        };
        jobs.push(JobRow {
            job_id: fields.job_id,
            user: fields.user,
            group: fields.group,
            session: fields.session,
            batch: fields.batch,
            submit: fields.submit,
            start: fields.start,
            end: fields.end,
            processors: fields.processors,
            runtime: fields.runtime,
            estimate: fields.estimate,
            killed,
            wait: fields.wait,
            response: fields.response,
            slowdown: fields.slowdown,
            bounded_slowdown: fields.bounded_slowdown,
        });
        Ok(())
    })?;
    Ok(jobs)
}

/// What the figures read of summary.json: the machine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct RunSummary {
    /// Processors in the machine (`summary.processors`), at least 1.
    pub processors: u32,
}

/// summary.json as far as [`RunSummary`] goes.
#[derive(Deserialize)]
struct SummaryFile {
    summary: RunSummary,
}

/// Reads what the figures need of summary.json.
pub fn read_summary(path: &Path) -> Result<RunSummary> {
    let text = config::files::read_text(path, config::files::MAX_TEXT_BYTES, "summary.json")?;
    summary_from_json(&path.display().to_string(), &text)
}

/// [`read_summary`] of the text of summary.json; `file` names it in errors.
pub fn summary_from_json(file: &str, text: &str) -> Result<RunSummary> {
    let parsed: SummaryFile =
        serde_json::from_str(text).map_err(|e| ScenarioError::Invalid(format!("{file}: {e}")))?;
    if parsed.summary.processors == 0 {
        return Err(ScenarioError::Invalid(format!(
            "{file}: summary.processors is 0; a machine has at least one processor"
        )));
    }
    Ok(parsed.summary)
}

/// One job's row of batsim_jobs.csv as the figures read it: the processors it held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// The job's id.
    pub job_id: i64,
    /// The processors it held (`allocated_resources`).
    pub processors: Intervals,
}

/// The columns of batsim_jobs.csv that [`Placement`] reads.
#[derive(Deserialize)]
struct PlacementFields {
    job_id: i64,
    allocated_resources: String,
}

/// Reads the placements of batsim_jobs.csv ([`crate::batsim::write_batsim_jobs`]), one per job in
/// the file's order.
pub fn read_placements(path: &Path) -> Result<Vec<Placement>> {
    let reader = TableReader::open(path, &format!("cannot read {}", path.display()))?;
    placements_from(reader)
}

/// [`read_placements`] from `input`; `file` names it in errors.
pub fn placements_from_reader(file: &str, input: impl Read) -> Result<Vec<Placement>> {
    placements_from(TableReader::new(file, input)?)
}

fn placements_from<R: Read>(mut table: TableReader<R>) -> Result<Vec<Placement>> {
    table.require(&["job_id", "allocated_resources"])?;
    let mut placements = Vec::new();
    table.rows(0, |fields: PlacementFields, line, _, table| {
        let processors = parse_intervals(&fields.allocated_resources).map_err(|token| {
            table.error(
                line,
                Some("allocated_resources"),
                format!("{token:?} is not a processor id or a range of them (FIRST-LAST)"),
            )
        })?;
        placements.push(Placement {
            job_id: fields.job_id,
            processors,
        });
        Ok(())
    })?;
    Ok(placements)
}

/// What the figures of one run read of its output directory ([`read_run`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RunTables {
    /// jobs.csv's rows, in the file's order.
    pub jobs: Vec<JobRow>,
    /// What summary.json says of the machine.
    pub summary: RunSummary,
    /// batsim_jobs.csv's placements, when the directory has that file (written on request).
    pub placements: Option<Vec<Placement>>,
    /// On a machine of node types: what each job held on each node (nodes.csv) and what the
    /// machine has (summary.json's `nodes.capacity`); `None` elsewhere, or for a run written
    /// before summary.json had the capacity.
    pub nodes: Option<NodeTables>,
    /// outages.csv's periods out of service, when the directory has that file (a run with
    /// outages or node failures).
    pub outages: Option<Vec<OutOfService>>,
}

/// A run on a machine of node types as the figures read it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct NodeTables {
    /// nodes.csv's rows, in the file's order.
    pub held: Vec<NodeHeld>,
    /// What the machine has of each resource (summary.json's `nodes.capacity`): `cpus`,
    /// `memory` (MiB), `gpus`, `gpus:TYPE`.
    pub capacity: std::collections::BTreeMap<String, u64>,
}

/// One row of nodes.csv: what a job held on one node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
pub struct NodeHeld {
    /// The job's id (as jobs.csv's `job_id`).
    pub job_id: i64,
    /// CPUs it held there.
    pub cpus: u64,
    /// Memory it held there, MiB.
    pub memory_mib: u64,
    /// GPUs it held there.
    pub gpus: u64,
}

/// summary.json as far as [`NodeTables::capacity`] goes.
#[derive(Deserialize)]
struct NodesFile {
    nodes: Option<NodesCapacity>,
}

#[derive(Deserialize)]
struct NodesCapacity {
    capacity: Option<std::collections::BTreeMap<String, u64>>,
}

/// Reads nodes.csv (what each job held on each node) with `summary_json`'s text's machine
/// capacity; `None` when summary.json gives no capacity.
pub fn read_nodes(path: &Path, summary: &Path) -> Result<Option<NodeTables>> {
    let text = config::files::read_text(summary, config::files::MAX_TEXT_BYTES, "summary.json")?;
    let parsed: NodesFile = serde_json::from_str(&text)
        .map_err(|e| ScenarioError::Invalid(format!("{}: {e}", summary.display())))?;
    let Some(capacity) = parsed.nodes.and_then(|n| n.capacity) else {
        return Ok(None);
    };
    let mut table = TableReader::open(path, &format!("cannot read {}", path.display()))?;
    table.require(&["job_id", "cpus", "memory_mib", "gpus"])?;
    let mut held = Vec::new();
    table.rows(0, |row: NodeHeld, _, _, _| {
        held.push(row);
        Ok(())
    })?;
    Ok(Some(NodeTables { held, capacity }))
}

/// outages.csv's fields as serde reads them; `kind` is checked afterwards, so that its error
/// names the column.
#[derive(Deserialize)]
struct OutageFields {
    name: String,
    kind: String,
    from: i64,
    to: i64,
    processors: u32,
    /// Absent from files written before it was added.
    #[serde(default)]
    node: Option<String>,
}

/// Reads outages.csv: every period processors were out of service.
pub fn read_outages(path: &Path) -> Result<Vec<OutOfService>> {
    outages_from(TableReader::open(
        path,
        &format!("cannot read {}", path.display()),
    )?)
}

/// Reads outages.csv from `input`; `file` names it in errors.
pub fn outages_from_reader(file: &str, input: impl Read) -> Result<Vec<OutOfService>> {
    outages_from(TableReader::new(file, input)?)
}

fn outages_from<R: Read>(mut table: TableReader<R>) -> Result<Vec<OutOfService>> {
    table.require(&OUTAGE_COLUMNS[..5])?; // `node` came later: optional
    let mut periods = Vec::new();
    table.rows(0, |fields: OutageFields, line, _, table| {
        let kind = serde_json::from_value(serde_json::Value::String(fields.kind.clone())).map_err(
            |_| {
                table.error(
                    line,
                    Some("kind"),
                    format!(
                        "{:?} is none of maintenance, drain, down, failure and reservation",
                        fields.kind
                    ),
                )
            },
        )?;
        let period = OutOfService {
            name: fields.name,
            kind,
            from: fields.from,
            to: fields.to,
            processors: fields.processors,
            node: fields.node.filter(|n| !n.is_empty()),
        };
        if period.to <= period.from {
            return Err(table.error(
                line,
                Some("to"),
                format!("{} is not after from ({})", period.to, period.from),
            ));
        }
        periods.push(period);
        Ok(())
    })?;
    Ok(periods)
}

/// Reads jobs.csv, summary.json and, if they are there, batsim_jobs.csv, nodes.csv and
/// outages.csv of the output directory `dir` of a run or replay.
pub fn read_run(dir: &Path) -> Result<RunTables> {
    let jobs = read_jobs(&dir.join("jobs.csv"))?;
    let summary = read_summary(&dir.join("summary.json"))?;
    let batsim_jobs = dir.join("batsim_jobs.csv");
    let placements = (batsim_jobs.exists())
        .then(|| read_placements(&batsim_jobs))
        .transpose()?;
    let nodes_csv = dir.join("nodes.csv");
    let nodes = if nodes_csv.exists() {
        read_nodes(&nodes_csv, &dir.join("summary.json"))?
    } else {
        None
    };
    let outages_csv = dir.join("outages.csv");
    let outages = (outages_csv.exists())
        .then(|| read_outages(&outages_csv))
        .transpose()?;
    Ok(RunTables {
        jobs,
        summary,
        placements,
        nodes,
        outages,
    })
}

/// The names of results.csv's columns after the axes', shared by the writer (`sweep::results`) and the
/// reader ([`read_results`]).
pub mod column {
    /// The measure's name (the catalogue's, [`metrics::MEASURES`]); the axes come before it.
    pub const METRIC: &str = "metric";
    /// The measure's unit.
    pub const UNIT: &str = "unit";
    /// The number of seeds.
    pub const N: &str = "n";
    /// The mean over the seeds.
    pub const MEAN: &str = "mean";
    /// The sample standard deviation over the seeds.
    pub const STD: &str = "std";
    /// The 95 % confidence interval of the mean, low end.
    pub const CI95_LOW: &str = "ci95_low";
    /// The 95 % confidence interval of the mean, high end.
    pub const CI95_HIGH: &str = "ci95_high";
    /// The mean paired difference against the baseline.
    pub const DIFF_MEAN: &str = "diff_mean";
    /// The paired difference's 95 % interval, low end.
    pub const DIFF_CI95_LOW: &str = "diff_ci95_low";
    /// The paired difference's 95 % interval, high end.
    pub const DIFF_CI95_HIGH: &str = "diff_ci95_high";
    /// The mean over the seeds of each seed's relative difference against the baseline's run
    /// on the same seed, `x_s / b_s - 1` (seeds with `b_s = 0` left out): a mean of per-seed
    /// ratios, not the difference of the means over the baseline's mean.
    pub const REL_DIFF_MEAN: &str = "rel_diff_mean";
    /// The relative difference's 95 % interval, low end.
    pub const REL_DIFF_CI95_LOW: &str = "rel_diff_ci95_low";
    /// The relative difference's 95 % interval, high end.
    pub const REL_DIFF_CI95_HIGH: &str = "rel_diff_ci95_high";
    /// The 2.5 % quantile over the seeds.
    pub const Q025: &str = "q025";
    /// The median over the seeds.
    pub const MEDIAN: &str = "median";
    /// The 97.5 % quantile over the seeds.
    pub const Q975: &str = "q975";
}

/// The columns of results.csv after the axes' (an axis may not take one of these names).
pub const COLUMNS: [&str; 16] = [
    column::METRIC,
    column::UNIT,
    column::N,
    column::MEAN,
    column::STD,
    column::CI95_LOW,
    column::CI95_HIGH,
    column::DIFF_MEAN,
    column::DIFF_CI95_LOW,
    column::DIFF_CI95_HIGH,
    column::REL_DIFF_MEAN,
    column::REL_DIFF_CI95_LOW,
    column::REL_DIFF_CI95_HIGH,
    column::Q025,
    column::MEDIAN,
    column::Q975,
];

/// The columns of [`COLUMNS`] that tables written by earlier versions lack (the unit and the
/// quantiles came later); [`read_results`] reads such tables with these fields `None`.
const LATER_COLUMNS: [&str; 4] = [column::UNIT, column::Q025, column::MEDIAN, column::Q975];

/// A sweep's results.csv read back ([`read_results`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ResultsTable {
    /// Where it was read from (its path), for messages.
    pub origin: String,
    /// The axes' names: the columns before [`column::METRIC`], in order.
    pub axes: Vec<String>,
    /// The rows, in the table's order.
    pub rows: Vec<ResultRow>,
}

/// One row of results.csv (written by `sweep::results`): a configuration, one measure and its statistics over the
/// seeds. An empty field (undefined, or no baseline to differ from) reads as `None`. Each field
/// is named after its column ([`COLUMNS`]).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ResultRow {
    /// The configuration's label on each axis, in the order of [`ResultsTable::axes`].
    #[serde(skip)]
    pub labels: Vec<String>,
    /// The measure's name.
    pub metric: String,
    /// The measure's unit (`None` in tables written before the units).
    pub unit: Option<String>,
    /// The number of seeds.
    pub n: usize,
    /// The mean over the seeds.
    pub mean: Option<f64>,
    /// The sample standard deviation.
    pub std: Option<f64>,
    /// The mean's 95 % confidence interval, low end.
    pub ci95_low: Option<f64>,
    /// The mean's 95 % confidence interval, high end.
    pub ci95_high: Option<f64>,
    /// The mean paired difference against the baseline.
    pub diff_mean: Option<f64>,
    /// Its 95 % interval, low end.
    pub diff_ci95_low: Option<f64>,
    /// Its 95 % interval, high end.
    pub diff_ci95_high: Option<f64>,
    /// The mean over the seeds of the per-seed relative difference against the baseline
    /// (`x_s / b_s - 1`; see [`column::REL_DIFF_MEAN`]).
    pub rel_diff_mean: Option<f64>,
    /// Its 95 % interval, low end.
    pub rel_diff_ci95_low: Option<f64>,
    /// Its 95 % interval, high end.
    pub rel_diff_ci95_high: Option<f64>,
    /// The 2.5 % quantile over the seeds (`None` also in tables written before the quantiles).
    pub q025: Option<f64>,
    /// The median over the seeds.
    pub median: Option<f64>,
    /// The 97.5 % quantile over the seeds.
    pub q975: Option<f64>,
}

/// Reads a results table written by `sweep::results`: the axes, then [`COLUMNS`] (tables written by
/// earlier versions lack the unit and the quantiles, which then read as `None`).
pub fn read_results(path: &Path) -> Result<ResultsTable> {
    let what = format!("cannot read the results table {}", path.display());
    results_from(TableReader::open(path, &what)?)
}

/// [`read_results`] from `input`; `origin` names it in errors.
pub fn results_from_reader(origin: &str, input: impl std::io::Read) -> Result<ResultsTable> {
    results_from(TableReader::new(origin, input)?)
}

fn results_from<R: std::io::Read>(mut table: TableReader<R>) -> Result<ResultsTable> {
    let header = table.header().clone();
    let Some(first) = header.iter().position(|h| h == column::METRIC) else {
        return Err(table.error(
            1,
            None,
            format!(
                "no column {:?}; is this a results.csv of `sitesim sweep`?",
                column::METRIC
            ),
        ));
    };
    let required: Vec<&str> = COLUMNS
        .into_iter()
        .filter(|c| !LATER_COLUMNS.contains(c))
        .collect();
    table.require(&required)?;
    let mut rows = Vec::new();
    table.rows(first, |mut row: ResultRow, _, record, _| {
        row.labels = record.iter().take(first).map(String::from).collect();
        rows.push(row);
        Ok(())
    })?;
    Ok(ResultsTable {
        origin: table.file().to_string(),
        axes: header.iter().take(first).map(String::from).collect(),
        rows,
    })
}

/// A CSV table being read: its name for messages, the reader and the header.
pub(crate) struct TableReader<R> {
    file: String,
    reader: csv::Reader<R>,
    header: StringRecord,
}

impl TableReader<config::files::Bounded<std::fs::File>> {
    /// Opens `path`, to be read within [`config::files::MAX_TABLE_BYTES`]; `what` is the message
    /// if it cannot be opened.
    pub(crate) fn open(
        path: &Path,
        what: &str,
    ) -> Result<TableReader<config::files::Bounded<std::fs::File>>> {
        let file = std::fs::File::open(path).map_err(|source| ScenarioError::Io {
            what: what.to_string(),
            source,
        })?;
        let name = path.display().to_string();
        let bounded = config::files::Bounded::new(
            file,
            &name,
            config::files::MAX_TABLE_BYTES,
            config::files::MAX_TABLE_LINE_BYTES,
        );
        TableReader::new(&name, bounded)
    }
}

impl<R: Read> TableReader<R> {
    /// Reads the header of `input`; `file` names it in errors.
    pub(crate) fn new(file: &str, input: R) -> Result<TableReader<R>> {
        let mut reader = csv::Reader::from_reader(input);
        let header = match reader.headers() {
            Ok(header) => header.clone(),
            Err(e) => return Err(csv_read_error(file, &StringRecord::new(), 0, None, e)),
        };
        Ok(TableReader {
            file: file.to_string(),
            reader,
            header,
        })
    }

    /// The header's column names.
    pub(crate) fn header(&self) -> &StringRecord {
        &self.header
    }

    /// An error at `line` (and `column`) of this table.
    pub(crate) fn error(
        &self,
        line: u64,
        column: Option<&str>,
        message: impl Into<String>,
    ) -> ScenarioError {
        ScenarioError::Table {
            file: self.file.clone(),
            line,
            column: column.map(String::from),
            message: message.into(),
        }
    }

    /// Fails naming the first of `columns` the header lacks.
    pub(crate) fn require(&self, columns: &[&str]) -> Result<()> {
        match columns
            .iter()
            .find(|&&name| !self.header.iter().any(|h| h == name))
        {
            Some(missing) => Err(self.error(
                1,
                None,
                format!(
                    "no column {missing:?}; the columns are {}",
                    self.header.iter().collect::<Vec<_>>().join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    /// The table's name in messages (its path).
    pub(crate) fn file(&self) -> &str {
        &self.file
    }

    /// Reads every row as its fields, handing each to `each` with its line.
    pub(crate) fn raw_rows(
        &mut self,
        mut each: impl FnMut(u64, &StringRecord, &Self) -> Result<()>,
    ) -> Result<()> {
        let mut record = StringRecord::new();
        loop {
            match self.reader.read_record(&mut record) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => return Err(csv_read_error(&self.file, &self.header, 0, None, e)),
            }
            let line = record.position().map_or(0, csv::Position::line);
            each(line, &record, self)?;
        }
    }

    /// Reads every row: the fields from column `first` on are deserialized into `T` by their
    /// column names and handed to `each` with the row's line and all its fields.
    pub(crate) fn rows<T: DeserializeOwned>(
        &mut self,
        first: usize,
        mut each: impl FnMut(T, u64, &StringRecord, &Self) -> Result<()>,
    ) -> Result<()> {
        let names: StringRecord = self.header.iter().skip(first).collect();
        let mut record = StringRecord::new();
        loop {
            match self.reader.read_record(&mut record) {
                Ok(true) => {}
                Ok(false) => return Ok(()),
                Err(e) => return Err(csv_read_error(&self.file, &self.header, first, None, e)),
            }
            let line = record.position().map_or(0, csv::Position::line);
            let mut fields: StringRecord = record.iter().skip(first).collect();
            fields.set_position(record.position().cloned());
            let value = fields
                .deserialize(Some(&names))
                .map_err(|e| csv_read_error(&self.file, &self.header, first, Some(&record), e))?;
            each(value, line, &record, self)?;
        }
    }
}

/// A `csv` error while reading `file` (whose header is `header`; the deserialized fields start
/// at column `first`; `record` is the row, if it was read) as a [`ScenarioError`] naming the
/// line, the column and the field's text.
fn csv_read_error(
    file: &str,
    header: &StringRecord,
    first: usize,
    record: Option<&StringRecord>,
    e: csv::Error,
) -> ScenarioError {
    let line = e.position().map_or(1, csv::Position::line);
    let column = |index: usize| header.get(index).map(String::from);
    let (column, message) = match e.into_kind() {
        csv::ErrorKind::Io(source) => {
            return ScenarioError::Io {
                what: format!("cannot read {file}"),
                source,
            };
        }
        csv::ErrorKind::Utf8 { err, .. } => (column(err.field()), "not UTF-8 text".to_string()),
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => (
            None,
            format!("{len} fields where the header has {expected_len}"),
        ),
        csv::ErrorKind::Deserialize { err, .. } => {
            let index = err.field().map(|f| first + f as usize);
            let text = index.and_then(|i| record?.get(i));
            let message = match text {
                Some(text) => format!("{text:?}: {}", err.kind()),
                None => err.kind().to_string(),
            };
            (index.and_then(column), message)
        }
        other => (None, format!("{other:?}")),
    };
    ScenarioError::Table {
        file: file.to_string(),
        line,
        column,
        message,
    }
}

#[cfg(test)]
mod tests {
    use metrics::{JobRecord, Summary, SummaryOptions, Warmup};

    use super::*;
    use crate::output::{JobRows, write_jobs_csv};

    #[test]
    fn a_bad_outages_csv_is_named_with_its_line_and_column() {
        let header = "name,kind,from,to,processors\n";
        for (row, names) in [
            ("w,maintenance,100,100,8\n", ["line 2", "to", "not after"]),
            ("w,outage,100,200,8\n", ["line 2", "kind", "outage"]),
            ("w,drain,100,200,-1\n", ["line 2", "processors", "-1"]),
        ] {
            let text = format!("{header}{row}");
            let e = outages_from_reader("out/outages.csv", text.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.contains("out/outages.csv"), "{e}");
            for name in names {
                assert!(e.contains(name), "{name} not in {e}");
            }
        }
        let e = outages_from_reader("outages.csv", "name,kind,from,to\n".as_bytes())
            .unwrap_err()
            .to_string();
        assert!(e.contains("processors"), "{e}");
    }

    fn record(job_id: i64, submit: i64, start: i64, end: i64, killed: bool) -> JobRecord {
        JobRecord {
            job: metrics::Job {
                job_id,
                user: 3,
                submit,
                processors: 4,
                estimate: end - start + 5,
                ..metrics::Job::default()
            },
            start,
            end,
            killed,
            ..JobRecord::default()
        }
    }

    fn written(write: impl FnOnce(&mut Vec<u8>) -> Result<()>) -> Vec<u8> {
        let mut bytes = Vec::new();
        assert!(write(&mut bytes).is_ok());
        bytes
    }

    fn message(result: Result<impl std::fmt::Debug>) -> String {
        match result {
            Ok(value) => panic!("read {value:?} from bad input"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn jobs_read_back_as_written() {
        let records = [record(1, 0, 10, 70, false), record(-2, 5, 10, 11, true)];
        for owned in [false, true] {
            let names = ["day".to_string(), "night, late".to_string()];
            // (group index, session) of each record
            let jobs = [(1usize, 2u32), (0, 1)];
            let bytes = written(|w| {
                let mut rows = JobRows::new(w, None, &[])?;
                for (r, &(group, session)) in records.iter().zip(&jobs) {
                    rows.row(r, owned.then(|| (names[group].as_str(), session, 3)))?;
                }
                rows.finish()
            });
            let rows = jobs_from_reader("jobs.csv", bytes.as_slice()).unwrap();
            assert_eq!(rows.len(), records.len());
            for (i, (row, r)) in rows.iter().zip(&records).enumerate() {
                let expected = JobRow {
                    job_id: r.job_id,
                    user: r.user,
                    group: owned.then(|| names[jobs[i].0].clone()),
                    session: owned.then_some(jobs[i].1),
                    batch: owned.then_some(3),
                    submit: r.submit,
                    start: r.start,
                    end: r.end,
                    processors: r.processors,
                    runtime: r.runtime(),
                    estimate: r.estimate,
                    killed: r.killed,
                    wait: r.wait(),
                    response: r.response(),
                    slowdown: r.slowdown(),
                    bounded_slowdown: r.bounded_slowdown(),
                };
                assert_eq!(row, &expected);
            }
        }
    }

    #[test]
    fn a_bad_job_field_names_file_line_and_column() {
        let bytes = written(|w| {
            write_jobs_csv(
                &[record(1, 0, 10, 70, false), record(2, 0, 10, 70, false)],
                None,
                w,
            )
        });
        let text = String::from_utf8(bytes).unwrap();
        let broken = text.replacen("2,3,,,,0,10,70,4", "2,3,,,,0,10,70,four", 1);
        let err = message(jobs_from_reader("out/jobs.csv", broken.as_bytes()));
        assert!(
            err.starts_with("out/jobs.csv: line 3, column \"processors\": \"four\": "),
            "{err}"
        );
        let killed = text.replacen(",60,65,0,", ",60,65,2,", 1);
        let err = message(jobs_from_reader("jobs.csv", killed.as_bytes()));
        assert_eq!(
            err,
            "jobs.csv: line 2, column \"killed\": 2 is neither 0 nor 1"
        );
        let short = format!("{text}7,3\n");
        let err = message(jobs_from_reader("jobs.csv", short.as_bytes()));
        assert!(err.starts_with("jobs.csv: line 4: 2 fields"), "{err}");
        let err = message(jobs_from_reader(
            "jobs.csv",
            "job_id,user\n1,2\n".as_bytes(),
        ));
        assert!(
            err.starts_with("jobs.csv: line 1: no column \"submit\""),
            "{err}"
        );
    }

    #[test]
    fn tables_without_groups_and_sessions_still_read() {
        let text = "job_id,user,submit,start,end,processors,runtime,estimate,killed,wait,response,slowdown,bounded_slowdown\n\
                    7,3,10,20,50,4,30,30,1,10,40,1.5,1.5\n";
        let rows = jobs_from_reader("old/jobs.csv", text.as_bytes()).unwrap();
        assert_eq!(rows[0].group, None);
        assert_eq!(rows[0].session, None);
        assert!(rows[0].killed);
    }

    #[test]
    fn the_machine_reads_back_from_a_written_summary() {
        let records = [record(1, 0, 10, 70, false)];
        let options = SummaryOptions {
            processors: 128,
            warmup: Warmup::None,
        };
        let summary = Summary::compute(&records, &options, metrics::InputCounts::default());
        let report = crate::replay::ReplayReport {
            tool: "sitesim",
            version: "test",
            command: "replay",
            trace: "t.swf".into(),
            scheduler: "easy".into(),
            load_factor: 1.0,
            estimates: None,
            machine: None,
            first_jobs: None,
            shake_seed: None,
            closed_loop: None,
            feedback: None,
            summary: &summary,
            policy_usage: None,
            slurm: None,
            nodes: None,
            power: None,
            outages: None,
            failures: None,
            conversion: Default::default(),
        };
        let json = crate::output::render_json(&report).unwrap();
        assert_eq!(
            summary_from_json("summary.json", &json).unwrap(),
            RunSummary { processors: 128 }
        );
        let err = message(summary_from_json("run/summary.json", "{\"summary\": {}}"));
        assert!(
            err.starts_with("run/summary.json: missing field `processors` at line 1 column"),
            "{err}"
        );
        let zero = message(summary_from_json(
            "summary.json",
            "{\"summary\": {\"processors\": 0}}",
        ));
        assert!(zero.contains("summary.processors is 0"), "{zero}");
    }

    #[test]
    fn placements_read_back_as_written() {
        let records = [
            record(1, 0, 0, 10, false),
            record(2, 0, 0, 20, false),
            record(3, 0, 10, 30, false),
        ];
        let held: Vec<Intervals> = vec![vec![(0, 3)], vec![(4, 5), (9, 9)], vec![(10, 13)]];
        for placements in [None, Some(held.as_slice())] {
            let bytes =
                written(|w| crate::batsim::write_batsim_jobs(&records, placements, None, w));
            let read = placements_from_reader("batsim_jobs.csv", bytes.as_slice()).unwrap();
            let expected = match placements {
                Some(p) => p.to_vec(),
                None => crate::batsim::allocate(&records),
            };
            assert_eq!(
                read,
                records
                    .iter()
                    .zip(expected)
                    .map(|(r, processors)| Placement {
                        job_id: r.job_id,
                        processors,
                    })
                    .collect::<Vec<_>>()
            );
        }
        let text = "job_id,allocated_resources\n1,0-3\n2,4-x\n";
        let err = message(placements_from_reader("b.csv", text.as_bytes()));
        assert!(
            err.starts_with("b.csv: line 3, column \"allocated_resources\": \"4-x\""),
            "{err}"
        );
    }
}
