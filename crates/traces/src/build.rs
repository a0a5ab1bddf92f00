//! From a format's rows to the jobs a Slurm dump gives ([`sacct::Job`]): names numbered,
//! times placed in the trace's zone and checked, the machine's resources taken from the row
//! (GPUs, memory), its shape on a machine of node types, and what was dropped or altered
//! counted by reason. Every format's reader ends here, so they all give the same job value.

use sacct::values::{Placed, State};
use sacct::{Job, NameTables, NamedShape, Reason, Report, SacctLog, SacctOptions};

use crate::error::{TraceError, shown};
use crate::values::Stamp;

/// The TRES name of GPUs, as a machine's resources name them.
const GPU: &str = "gres/gpu";
/// The TRES name of memory (MiB for the whole job).
const MEMORY: &str = "mem";

/// One job as a format's reader found it, before its names are numbered and its times placed.
#[derive(Debug, Clone)]
pub(crate) struct Row<'a> {
    /// The line it starts on (1-based).
    pub line: u64,
    /// Its id: the trace's number, or the row's number where the trace's ids are not numbers.
    pub id: u64,
    /// The owner.
    pub user: &'a str,
    /// The account (a Slurm account; a GPU cluster's virtual cluster).
    pub account: &'a str,
    /// The partition (a virtual cluster's nodes, a Slurm partition).
    pub partition: &'a str,
    /// The QOS.
    pub qos: &'a str,
    /// When it was submitted (`None`: not logged; the job is dropped).
    pub submit: Option<Stamp>,
    /// When it became eligible, if logged.
    pub eligible: Option<Stamp>,
    /// When it started (`None`: never).
    pub start: Option<Stamp>,
    /// When it ended.
    pub end: Option<Stamp>,
    /// Its time limit, seconds (`None`: none logged).
    pub time_limit: Option<i64>,
    /// CPUs (processors) it held.
    pub cpus: u32,
    /// Nodes it held (0: unknown).
    pub nodes: u32,
    /// GPUs it held, a share where the trace gives one (0.5: half a GPU).
    pub gpus: f64,
    /// The type of its GPUs (empty: any).
    pub gpu_type: &'a str,
    /// Memory for the whole job, MiB (`None`: not logged).
    pub memory_mib: Option<f64>,
    /// Its final state.
    pub state: State,
    /// Scheduling attempts before the one it ran in (Philly's retries).
    pub earlier_attempts: u32,
    /// Energy its nodes consumed, J.
    pub energy: Option<u64>,
    /// Its priority when logged.
    pub priority: Option<i64>,
}

impl Default for Row<'_> {
    /// A completed job of which nothing else is known.
    fn default() -> Self {
        Row {
            line: 0,
            id: 0,
            user: "",
            account: "",
            partition: "",
            qos: "",
            submit: None,
            eligible: None,
            start: None,
            end: None,
            time_limit: None,
            cpus: 0,
            nodes: 0,
            gpus: 0.0,
            gpu_type: "",
            memory_mib: None,
            state: State::Completed,
            earlier_attempts: 0,
            energy: None,
            priority: None,
        }
    }
}

/// The jobs of a trace as they are read, and what was dropped or altered.
pub(crate) struct Builder {
    source_name: String,
    options: SacctOptions,
    names: NameTables,
    report: Report,
    jobs: Vec<Job>,
    /// Where GPUs and memory go in a job's `extra` (by the machine's resources).
    gpu_index: Option<usize>,
    memory_index: Option<usize>,
}

impl Builder {
    /// A builder numbering the options' first names (and a machine of node types'
    /// partitions) first, as the sacct reader does.
    pub fn new(source_name: String, options: &SacctOptions) -> Builder {
        let mut names = NameTables::default();
        if let Some(nodes) = &options.nodes {
            for partition in &nodes.partitions {
                names.partitions.id(partition);
            }
        }
        let first = &options.first_names;
        for (table, list) in [
            (&mut names.users, &first.users),
            (&mut names.accounts, &first.accounts),
            (&mut names.partitions, &first.partitions),
            (&mut names.qos, &first.qos),
        ] {
            for name in list {
                table.id(name);
            }
        }
        let index = |name: &str| options.resources.iter().position(|r| r == name);
        Builder {
            gpu_index: index(GPU).or_else(|| index("gpu")),
            memory_index: index(MEMORY),
            source_name,
            options: options.clone(),
            names,
            report: Report::default(),
            jobs: Vec::new(),
        }
    }

    /// The input's name.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    /// Counts a row read (kept or not).
    pub fn count_line(&mut self) {
        self.report.lines += 1;
    }

    /// An error of the field `value` of `column` on `line`.
    pub fn field_error(&self, line: u64, column: &str, value: &str, expected: &str) -> TraceError {
        TraceError::Field {
            source_name: self.source_name.clone(),
            line,
            column: column.to_string(),
            value: shown(value),
            expected: expected.to_string(),
        }
    }

    /// Places a stamp in the trace's zone: `Err(())` when the local time does not exist there
    /// (counted; the job is dropped).
    fn place(&mut self, stamp: Option<Stamp>) -> Result<Option<i64>, ()> {
        match stamp {
            None => Ok(None),
            Some(Stamp::Unix(t)) => Ok(Some(t)),
            Some(Stamp::Local(local)) => match self.options.clock.place(local) {
                Placed::Exact(t) => Ok(Some(t)),
                Placed::Ambiguous(t) => {
                    self.report.count(Reason::AmbiguousLocalTime);
                    Ok(Some(t))
                }
                Placed::Missing => {
                    self.report.count(Reason::NonexistentLocalTime);
                    Err(())
                }
            },
        }
    }

    /// Adds the job of `row`, or counts why it is dropped. Errors where the row cannot be a
    /// job of the machine (a GPU type it does not have, more nodes than a shape holds).
    pub fn push(&mut self, row: Row<'_>) -> Result<(), TraceError> {
        let (Ok(submit), Ok(eligible), Ok(start), Ok(end)) = (
            self.place(row.submit),
            self.place(row.eligible),
            self.place(row.start),
            self.place(row.end),
        ) else {
            return Ok(());
        };
        let Some(submit) = submit else {
            self.report.count(Reason::NoSubmitTime);
            return Ok(());
        };
        let in_range = |t: Option<i64>| t.is_none_or(|t| (0..sacct::MAX_TIME).contains(&t));
        if !(in_range(Some(submit)) && in_range(eligible) && in_range(start) && in_range(end)) {
            self.report.count(Reason::TimeOutOfRange);
            return Ok(());
        }
        if self.options.since.is_some_and(|s| submit < s)
            || self.options.until.is_some_and(|u| submit >= u)
        {
            self.report.count(Reason::OutsideWindow);
            return Ok(());
        }
        if row.state == State::NotEnded {
            self.report.count(Reason::NotEnded);
            return Ok(());
        }
        let elapsed = match (start, end) {
            (Some(s), Some(e)) => Some((e - s).max(0)),
            _ => None,
        };
        let time_limit = match row.time_limit {
            Some(limit) if limit >= sacct::MAX_TIME => {
                self.report.count(Reason::TimeLimitOutOfRange);
                None
            }
            limit => limit.filter(|&l| l > 0),
        };
        if row.earlier_attempts > 0 {
            self.report.count(Reason::EarlierAttempts);
        }
        let gpus = if row.gpus.fract() > 0.0 {
            self.report.count(Reason::FractionalGpus);
            row.gpus.ceil()
        } else {
            row.gpus
        };
        let gpus = if gpus > f64::from(u32::MAX) {
            return Err(self.field_error(
                row.line,
                "gpus",
                &row.gpus.to_string(),
                "a GPU count of at most 4294967295",
            ));
        } else {
            gpus as u32
        };
        let memory_mib = row.memory_mib.map(f64::ceil);
        if memory_mib.is_some_and(|m| m > f64::from(u32::MAX)) {
            return Err(self.field_error(
                row.line,
                "memory",
                &row.memory_mib.unwrap_or_default().to_string(),
                &format!("memory of at most {} MiB", u32::MAX),
            ));
        }
        let memory_mib = memory_mib.map(|m| m as u32);
        let mut extra = job::Extra::NONE;
        if let Some(index) = self.gpu_index {
            extra = extra.with(index, gpus);
        }
        if let (Some(index), Some(memory)) = (self.memory_index, memory_mib) {
            extra = extra.with(index, memory);
        }
        let gpu_type_name = if gpus > 0 {
            row.gpu_type.trim_ascii()
        } else {
            ""
        };
        let gpu_type = self.names.gpu_types.id(gpu_type_name);
        let named = NamedShape {
            nodes: row.nodes,
            gpu_type: self.names.shape_gpu_types.id(gpu_type_name),
            constraint: 0,
        };
        let shape = match &self.options.nodes {
            None => job::Shape::ANY,
            Some(machine) => {
                let nodes = u16::try_from(row.nodes).map_err(|_| {
                    self.field_error(
                        row.line,
                        "nodes",
                        &row.nodes.to_string(),
                        &format!("at most {} nodes", u16::MAX),
                    )
                })?;
                // A machine without typed GPUs takes any type the trace names.
                let mut gpu_type = 0u8;
                if !gpu_type_name.is_empty() && !machine.gpu_types.is_empty() {
                    let Some(index) = machine.gpu_types.iter().position(|t| t == gpu_type_name)
                    else {
                        return Err(self.field_error(
                            row.line,
                            "gpu_type",
                            gpu_type_name,
                            &format!(
                                "a GPU type of the machine (it has {})",
                                machine.gpu_types.join(", ")
                            ),
                        ));
                    };
                    gpu_type = u8::try_from(index + 1).unwrap_or(u8::MAX);
                }
                job::Shape {
                    nodes,
                    gpu_type,
                    exclusive: false,
                    features: 0,
                }
            }
        };
        let memory_per_cpu = memory_mib.map(|m| f64::from(m) * 1024.0 / f64::from(row.cpus.max(1)));
        let job = Job {
            line: row.line,
            id: row.id,
            array: None,
            het_components: 0,
            user: self.names.users.id(row.user.trim_ascii()),
            account: self.names.accounts.id(row.account.trim_ascii()),
            partition: self.names.partitions.id(row.partition.trim_ascii()),
            qos: self.names.qos.id(row.qos.trim_ascii()),
            submit,
            eligible,
            start,
            end,
            elapsed,
            time_limit,
            cpus: row.cpus,
            nodes: row.nodes,
            req_cpus: row.cpus,
            req_nodes: row.nodes,
            memory_per_cpu,
            extra,
            gpus,
            gpu_type,
            shape,
            named,
            state: row.state,
            restarts: row.earlier_attempts,
            energy: row.energy,
            priority: row.priority,
            reason: 0,
            flags: 0,
            reservation: 0,
            dependency: None,
            throttle: None,
        };
        if self.jobs.len() as u64 >= sacct::MAX_JOBS {
            return Err(TraceError::TooManyRows {
                source_name: self.source_name.clone(),
                line: row.line,
                limit: sacct::MAX_JOBS,
            });
        }
        self.jobs.push(job);
        Ok(())
    }

    /// The log: the jobs made whole as a dump's are ([`SacctLog::assemble`]).
    pub fn finish(self, format: crate::Format) -> Result<SacctLog, TraceError> {
        if self.report.lines == 0 {
            return Err(TraceError::NoJobs {
                source_name: self.source_name,
                format,
            });
        }
        Ok(SacctLog::assemble(
            self.source_name,
            self.jobs,
            self.names,
            self.report,
            self.options,
        ))
    }
}
