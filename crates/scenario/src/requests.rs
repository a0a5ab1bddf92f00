//! `requests.csv`: what a converted sacct dump's jobs ask of a machine beyond SWF's fields,
//! written beside `trace.swf` by `sitesim convert` and read back when that trace is replayed on
//! a machine with resources besides processors (`--resources`, or a slurm.conf's nodes), so
//! the conversion replays as the dump itself does.
//!
//! One row per record of `trace.swf`, in its order:
//!
//! | column | unit | what |
//! |---|---|---|
//! | `job_id` | id | the record's job number (SWF field 1) |
//! | `mem` | MiB | the memory it asked for, for the whole job (`ReqTRES`'s `mem`; 0: none) |
//! | `gres/gpu` | GPUs | the GPUs it asked for (`ReqTRES`'s `gres/gpu`; 0: none) |
//! | `nodes` | nodes | its node count (`NNodes` if it started, else `ReqNodes`; 0: unknown) |
//! | `gpu_type` | name | the type its GPUs must be (`gres/gpu:TYPE` of `AllocTRES`, else `ReqTRES`; empty: any) |
//! | `features` | text | its constraint as the dump gives it (`Constraints`; empty: none) |
//! | `exclusive` | 0/1 | whole nodes (0: sacct does not record `--exclusive`) |
//! | `partition` | name | its partition's name (SWF field 16 numbers it as partitions.csv does) |
//!
//! Replayed, each row is resolved against the run's machine exactly as the sacct reader
//! resolves a dump's row ([`sacct::SacctOptions`]): the resources by the run's kinds' names,
//! the GPU type and features by the machine's names, the partition renumbered into the
//! machine's partitions.

use std::path::{Path, PathBuf};

use config::trace::TraceOptions;
use config::{Result, ScenarioError};
use swf::{Header, Record};

use crate::tables::TableReader;
use crate::trace::{Requests, SacctTrace};

/// The side table's file name (beside `trace.swf`).
pub const FILE: &str = "requests.csv";

/// The resource kinds it has a column of, by their TRES names: memory in MiB and GPUs (the
/// kinds a slurm.conf's nodes bring).
pub const KINDS: [&str; 2] = [config::nodes::MEMORY_KIND, config::nodes::GPU_KIND];

/// The columns after the resource kinds'.
const SHAPE_COLUMNS: [&str; 5] = ["nodes", "gpu_type", "features", "exclusive", "partition"];

/// The trace options a dump is read with to be converted: those given, with [`KINDS`] as its
/// resources (their amounts unused), so that each job's request of them is read.
pub fn conversion_options(options: &TraceOptions) -> TraceOptions {
    TraceOptions {
        resources: KINDS.iter().map(|k| (k.to_string(), 0)).collect(),
        ..options.clone()
    }
}

/// `requests.csv` of a dump read with [`conversion_options`]: one row per record of its
/// conversion, in order.
pub fn write(trace: &SacctTrace) -> Result<Vec<u8>> {
    let fail = |e: csv::Error| crate::output::csv_error(FILE, e);
    let log = &trace.log;
    let kinds: Vec<Option<usize>> = KINDS
        .iter()
        .map(|kind| log.options.resources.iter().position(|r| r == kind))
        .collect();
    let mut w = csv::Writer::from_writer(Vec::new());
    let mut header = vec!["job_id"];
    header.extend(KINDS);
    header.extend(SHAPE_COLUMNS);
    w.write_record(&header).map_err(fail)?;
    for (job, record) in log.jobs.iter().zip(&trace.converted.records) {
        let mut row = vec![record.job_number.to_string()];
        for kind in &kinds {
            row.push(kind.map_or(0, |i| job.extra.get(i)).to_string());
        }
        row.push(job.named.nodes.to_string());
        row.push(
            log.names
                .shape_gpu_types
                .name(job.named.gpu_type)
                .to_string(),
        );
        row.push(log.names.constraints.name(job.named.constraint).to_string());
        row.push(u8::from(job.shape.exclusive).to_string());
        row.push(log.names.partitions.name(job.partition).to_string());
        w.write_record(&row).map_err(fail)?;
    }
    w.into_inner()
        .map_err(|e| crate::output::io_error(FILE, e.into_error()))
}

/// One row as read.
#[derive(Debug, Clone)]
struct Row {
    line: u64,
    job_id: i64,
    /// By the table's resource columns.
    amounts: Vec<u32>,
    nodes: u32,
    gpu_type: String,
    features: String,
    exclusive: bool,
    partition: String,
}

/// A side table read whole.
#[derive(Debug, Clone)]
pub struct SideTable {
    path: PathBuf,
    /// The resource columns' names, in order.
    kinds: Vec<String>,
    rows: Vec<Row>,
}

/// The side table beside the SWF trace at `trace`, if the run needs one and one is there: the
/// trace is a conversion of a sacct dump (its header has the conversion's report) and the run
/// has resources besides processors or a machine of node types.
pub fn beside(trace: &Path, header: &Header, options: &TraceOptions) -> Option<PathBuf> {
    if options.resources.is_empty() && options.nodes.is_none() {
        return None;
    }
    header.get(sacct::REPORT_KEY)?;
    let path = trace.parent().unwrap_or(Path::new("")).join(FILE);
    path.is_file().then_some(path)
}

impl SideTable {
    /// Reads `path` (every error names it, the line and the column).
    pub fn read(path: &Path) -> Result<SideTable> {
        let what = format!("cannot read {}", path.display());
        let mut table = TableReader::open(path, &what)?;
        let mut required = vec!["job_id"];
        required.extend(SHAPE_COLUMNS);
        table.require(&required)?;
        let header = table.header().clone();
        let index = |name: &str| header.iter().position(|h| h == name);
        let shape: Vec<usize> = SHAPE_COLUMNS.iter().filter_map(|c| index(c)).collect();
        let job_id = index("job_id").unwrap_or(0);
        // every other column is a resource kind's
        let kinds: Vec<(usize, String)> = header
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != job_id && !shape.contains(i))
            .map(|(i, name)| (i, name.to_string()))
            .collect();
        let mut rows = Vec::new();
        table.raw_rows(|line, record, table| {
            let field = |name: &str| index(name).and_then(|i| record.get(i)).unwrap_or("");
            let bad = |name: &str, expected: &str| {
                table.error(
                    line,
                    Some(name),
                    format!("{:?} is not {expected}", field(name)),
                )
            };
            let whole = |name: &str| -> Result<u32> {
                field(name)
                    .trim()
                    .parse::<u32>()
                    .map_err(|_| bad(name, &format!("a whole number from 0 to {}", u32::MAX)))
            };
            let job_id = field("job_id")
                .trim()
                .parse::<i64>()
                .map_err(|_| bad("job_id", "a job number"))?;
            let amounts = kinds
                .iter()
                .map(|(_, name)| whole(name))
                .collect::<Result<Vec<u32>>>()?;
            let exclusive = match field("exclusive").trim() {
                "0" => false,
                "1" => true,
                _ => return Err(bad("exclusive", "0 or 1")),
            };
            rows.push(Row {
                line,
                job_id,
                amounts,
                nodes: whole("nodes")?,
                gpu_type: field("gpu_type").trim().to_string(),
                features: field("features").trim().to_string(),
                exclusive,
                partition: field("partition").trim().to_string(),
            });
            Ok(())
        })?;
        Ok(SideTable {
            path: path.to_path_buf(),
            kinds: kinds.into_iter().map(|(_, name)| name).collect(),
            rows,
        })
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn error(&self, line: u64, column: Option<&str>, message: String) -> ScenarioError {
        ScenarioError::Table {
            file: self.path.display().to_string(),
            line,
            column: column.map(String::from),
            message,
        }
    }

    /// What the `records` of `trace` (its jobs, in order) ask of the machine of `options`, as
    /// the sacct reader would read them from the dump: the amounts of its resources, and on a
    /// machine of node types each job's shape, with the records' partitions numbered into the
    /// machine's partitions and a constraint the model does not take dropped and counted in
    /// `header` (as the dump's own replay reports it). Every record must have its row, in
    /// order.
    pub fn apply(
        &self,
        trace: &Path,
        records: &mut [Record],
        header: &mut Header,
        options: &TraceOptions,
    ) -> Result<Requests> {
        if records.len() != self.rows.len() {
            return Err(self.error(
                1,
                None,
                format!(
                    "{} rows for the {} jobs of {}: not its side table (sitesim convert writes them together)",
                    self.rows.len(),
                    records.len(),
                    trace.display()
                ),
            ));
        }
        let columns: Vec<usize> = options
            .resources
            .iter()
            .map(|(name, _)| {
                self.kinds.iter().position(|k| k == name).ok_or_else(|| {
                    self.error(
                        1,
                        None,
                        format!(
                            "no column {name:?}, a resource of the machine: it keeps {}; replay the dump itself to read other TRES",
                            self.kinds.join(", ")
                        ),
                    )
                })
            })
            .collect::<Result<_>>()?;
        let mut requests = Requests::default();
        for (record, row) in records.iter().zip(&self.rows) {
            if record.job_number != row.job_id {
                return Err(self.error(
                    row.line,
                    Some("job_id"),
                    format!(
                        "job {} where {} has job {}: not its side table (sitesim convert writes them together)",
                        row.job_id,
                        trace.display(),
                        record.job_number
                    ),
                ));
            }
            if !columns.is_empty() {
                requests.extras.push(columns.iter().enumerate().fold(
                    job::Extra::NONE,
                    |extra, (index, &column)| {
                        extra.with(index, row.amounts.get(column).copied().unwrap_or(0))
                    },
                ));
            }
        }
        let Some(names) = &options.nodes else {
            return Ok(requests);
        };
        let mut partitions = Partitions::new(&names.partitions);
        let mut not_modelled = 0u64;
        for (record, row) in records.iter_mut().zip(&self.rows) {
            let (shape, dropped) = self.shape(row, names)?;
            not_modelled += u64::from(dropped);
            requests.shapes.push(shape);
            record.partition = partitions.number(&row.partition);
        }
        if not_modelled > 0 {
            let reason = sacct::Reason::ConstraintNotModelled;
            header.push_field(
                format!("{}.{}", sacct::REPORT_KEY, reason.key()),
                format!("{not_modelled} {}: {}", reason.action(), reason.text()),
            );
        }
        Ok(requests)
    }

    /// A row's shape on a machine of `names`, and whether its constraint was dropped as one the
    /// model does not take.
    fn shape(&self, row: &Row, names: &sacct::NodeNames) -> Result<(job::Shape, bool)> {
        let nodes = u16::try_from(row.nodes).map_err(|_| {
            self.error(
                row.line,
                Some("nodes"),
                format!("{} is more than {} nodes", row.nodes, u16::MAX),
            )
        })?;
        let gpu_type = if row.gpu_type.is_empty() {
            0
        } else {
            let index = names
                .gpu_types
                .iter()
                .position(|t| *t == row.gpu_type)
                .ok_or_else(|| {
                    let known = if names.gpu_types.is_empty() {
                        "it has no typed GPUs".to_string()
                    } else {
                        format!("it has {}", names.gpu_types.join(", "))
                    };
                    self.error(
                        row.line,
                        Some("gpu_type"),
                        format!(
                            "{:?} is not a GPU type of the machine ({known})",
                            row.gpu_type
                        ),
                    )
                })?;
            u8::try_from(index + 1).unwrap_or(u8::MAX)
        };
        let mut features = 0u32;
        let text = row.features.as_str();
        let dropped = text.contains(['|', '[', ']', '*', '!']);
        if !dropped {
            for feature in text
                .split(['&', ','])
                .map(str::trim)
                .filter(|f| !f.is_empty())
            {
                let bit = names
                    .features
                    .iter()
                    .position(|f| f == feature)
                    .ok_or_else(|| {
                        let known = if names.features.is_empty() {
                            "its nodes have no features".to_string()
                        } else {
                            format!("its features are {}", names.features.join(", "))
                        };
                        self.error(
                            row.line,
                            Some("features"),
                            format!("{feature:?} is not a feature of the machine ({known})"),
                        )
                    })?;
                features |= 1 << bit;
            }
        }
        Ok((
            job::Shape {
                nodes,
                gpu_type,
                exclusive: row.exclusive,
                features,
            },
            dropped,
        ))
    }
}

/// Partition numbers as the sacct reader gives them on a machine of node types: the machine's
/// partitions first (the k-th is k), then other names in order of first appearance.
struct Partitions {
    names: Vec<String>,
}

impl Partitions {
    fn new(machine: &[String]) -> Partitions {
        Partitions {
            names: machine.to_vec(),
        }
    }

    /// The number of `name` (-1: none).
    fn number(&mut self, name: &str) -> i64 {
        if name.is_empty() {
            return -1;
        }
        let index = match self.names.iter().position(|n| n == name) {
            Some(index) => index,
            None => {
                self.names.push(name.to_string());
                self.names.len() - 1
            }
        };
        i64::try_from(index + 1).unwrap_or(i64::MAX)
    }
}

/// The records of an SWF `trace` (its header `header`, records `records`) with what its side
/// table beside it asks of the machine of `options`, when the run needs it and it is there
/// ([`beside`]): the records read whole, resolved by [`SideTable::apply`], and the header
/// noting the table (`Requests`, read by [`side_table_of`]). `None`: no side table applies.
pub(crate) fn read_beside(
    trace: &Path,
    header: &mut Header,
    records: crate::trace::RecordsOf,
    options: &TraceOptions,
) -> Result<std::result::Result<(Vec<Record>, Requests), crate::trace::RecordsOf>> {
    let Some(path) = beside(trace, header, options) else {
        return Ok(Err(records));
    };
    let table = SideTable::read(&path)?;
    let mut records = records
        .collect::<std::result::Result<Vec<Record>, swf::SwfError>>()
        .map_err(engine::ReplayError::from)?;
    let requests = table.apply(trace, &mut records, header, options)?;
    tracing::info!(
        "{}: each job's resources and shape from {}",
        trace.display(),
        path.display()
    );
    header.push_field(HEADER_KEY, path.display());
    Ok(Ok((records, requests)))
}

/// The header key under which a replay's trace notes the side table it was read with (not
/// written anywhere: the console says it).
const HEADER_KEY: &str = "SitesimRequests";

/// The side table a replay's trace was read with, if any (from its header).
pub fn side_table_of(header: &Header) -> Option<String> {
    header.get(HEADER_KEY).map(String::from)
}
