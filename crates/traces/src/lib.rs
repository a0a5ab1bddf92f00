//! The modern public cluster traces, read natively: SenseTime's Helios, Microsoft's Philly,
//! Alibaba's PAI GPU trace of 2020, Shanghai AI Lab's Acme, MIT Supercloud's Slurm log. Each
//! reader gives the jobs a Slurm accounting dump gives ([`sacct::SacctLog`]): users, accounts
//! (a GPU cluster's virtual cluster), partitions, times in the trace's own zone, CPUs, nodes,
//! GPUs and memory, the final state; so replay, fit and convert take them as they take a
//! dump, with GPUs and memory on a machine that has them. What a reader dropped or altered is
//! counted by reason in the log's report, as the dump reader's is.
//!
//! Each format's mapping (which column is which field, the zone of its times, its awkward
//! cases) is documented on its module and in the docs' page of the dataset
//! (docs/guide/traces/).

#![warn(missing_docs)]

mod build;
mod error;
mod table;
mod values;

mod acme;
mod alibaba;
mod helios;
mod philly;
mod supercloud;

use std::fmt;

pub use error::TraceError;

/// The most rows a trace may have (job lines of a table, jobs of a JSON log; the largest
/// public traces have about 11 million jobs).
pub const MAX_ROWS: u64 = 100_000_000;

/// A trace format read natively.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// SenseTime's Helios (`cluster_log.csv`, one per cluster).
    Helios,
    /// Microsoft's Philly (`cluster_job_log`, a JSON array of jobs with their attempts).
    Philly,
    /// Alibaba's PAI GPU trace of 2020 (`pai_task_table.csv`, with `pai_job_table.csv` beside
    /// it for the users).
    AlibabaPai,
    /// Shanghai AI Lab's Acme (`trace_seren.csv`, `trace_kalos.csv`).
    Acme,
    /// MIT Supercloud's Slurm scheduler log (`slurm-log.csv`).
    Supercloud,
}

impl Format {
    /// Every format, in the order of the docs.
    pub const ALL: [Format; 5] = [
        Format::Helios,
        Format::Philly,
        Format::AlibabaPai,
        Format::Acme,
        Format::Supercloud,
    ];

    /// Its name (`--format`).
    pub fn name(self) -> &'static str {
        match self {
            Format::Helios => "helios",
            Format::Philly => "philly",
            Format::AlibabaPai => "alibaba-pai",
            Format::Acme => "acme",
            Format::Supercloud => "supercloud",
        }
    }

    /// The machine it comes from, in words (the converted trace's `Computer`).
    pub fn computer(self) -> &'static str {
        match self {
            Format::Helios => {
                "a SenseTime Helios GPU cluster (converted from its trace by sitesim)"
            }
            Format::Philly => {
                "Microsoft's Philly GPU clusters (converted from its job log by sitesim)"
            }
            Format::AlibabaPai => {
                "Alibaba's PAI GPU cluster, 2020 (converted from its task table by sitesim)"
            }
            Format::Acme => {
                "a Shanghai AI Lab Acme GPU cluster (converted from its trace by sitesim)"
            }
            Format::Supercloud => {
                "MIT Supercloud (converted from its Slurm scheduler log by sitesim)"
            }
        }
    }

    /// The zone its local times are in, as its owners document it (a tz database name), when
    /// `--tz` is not given; `None` where the trace writes instants (Unix seconds), which need
    /// no zone.
    pub fn zone(self) -> Option<&'static str> {
        match self {
            Format::Helios => helios::ZONE,
            Format::Philly => philly::ZONE,
            Format::AlibabaPai => alibaba::ZONE,
            Format::Acme => acme::ZONE,
            Format::Supercloud => supercloud::ZONE,
        }
    }

    /// The zone its site's daily and weekly cycles are read in, when `--site-tz` is not given
    /// (the trace's own zone, or for instants the site's as its owners state it).
    pub fn site_zone(self) -> &'static str {
        match self {
            Format::Helios => helios::SITE_ZONE,
            Format::Philly => philly::SITE_ZONE,
            Format::AlibabaPai => alibaba::SITE_ZONE,
            Format::Acme => acme::SITE_ZONE,
            Format::Supercloud => supercloud::SITE_ZONE,
        }
    }

    /// The format whose header row `first_line` is, where the header tells it apart from
    /// every other format's (Helios and Acme share many columns: each is told by one the
    /// other lacks). A format without a header row (Alibaba PAI) or a JSON log (Philly) is
    /// never detected: give `--format`.
    pub fn detect(first_line: &str) -> Option<Format> {
        [Format::Helios, Format::Acme, Format::Supercloud]
            .into_iter()
            .find(|f| match f {
                Format::Helios => helios::detect(first_line),
                Format::Acme => acme::detect(first_line),
                Format::Supercloud => supercloud::detect(first_line),
                _ => false,
            })
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Reads `input` as a trace of `format` into the jobs a sacct dump gives. `options` are the
/// dump reader's: the zone of local times ([`sacct::SacctOptions::clock`]; the caller puts
/// [`Format::zone`] there unless told otherwise), the submit window, the machine's resources
/// (`gres/gpu` and `mem` are read from the trace; others are 0) and node types (each job's
/// nodes and GPU type).
pub fn read_from(
    input: swf::Input,
    format: Format,
    options: &sacct::SacctOptions,
) -> Result<sacct::SacctLog, TraceError> {
    let source_name = input.name().to_string();
    let mut builder = build::Builder::new(source_name, options);
    match format {
        Format::Helios => helios::read(input, &mut builder)?,
        Format::Philly => philly::read(input, &mut builder)?,
        Format::AlibabaPai => alibaba::read(input, &mut builder)?,
        Format::Acme => acme::read(input, &mut builder)?,
        Format::Supercloud => supercloud::read(input, &mut builder)?,
    }
    builder.finish(format)
}

/// Alibaba PAI's two tables read from inputs opened elsewhere (a pipe, memory): the job table
/// (users and submit times) and the task table (the jobs), as [`read_from`] reads them from a
/// directory.
pub fn read_alibaba_pai(
    job_table: swf::Input,
    task_table: swf::Input,
    options: &sacct::SacctOptions,
) -> Result<sacct::SacctLog, TraceError> {
    let mut builder = build::Builder::new(task_table.name().to_string(), options);
    alibaba::read_tables(job_table, task_table, &mut builder)?;
    builder.finish(Format::AlibabaPai)
}

/// [`read_from`] of a file.
pub fn read(
    path: &std::path::Path,
    format: Format,
    options: &sacct::SacctOptions,
) -> Result<sacct::SacctLog, TraceError> {
    read_from(swf::Input::open(path)?, format, options)
}

/// Reads every row of a CSV table with a header row: the columns of `schema` located, each
/// row handed to `row` with its fields.
pub(crate) fn read_csv(
    input: swf::Input,
    format: Format,
    schema: &[table::Column],
    builder: &mut build::Builder,
    mut row: impl FnMut(&table::Fields<'_>, &mut build::Builder) -> Result<(), TraceError>,
) -> Result<(), TraceError> {
    let source_name = builder.source_name().to_string();
    let mut reader = table::reader(input, true);
    let header = reader
        .headers()
        .map_err(|e| table::csv_error(&source_name, format, 1, e))?
        .clone();
    let positions = table::locate(&header, schema, &source_name, format)?;
    let mut record = csv::StringRecord::new();
    let mut line = 1;
    loop {
        match reader.read_record(&mut record) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => return Err(table::csv_error(&source_name, format, line + 1, e)),
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
        builder.count_line();
        let fields = table::Fields {
            record: &record,
            positions: &positions,
            schema,
            line,
            source_name: &source_name,
        };
        row(&fields, builder)?;
    }
    Ok(())
}

/// A job id: the trace's number, or `ordinal` (the row's number) where the trace's ids are not
/// numbers (hashes, `application_..._123`).
pub(crate) fn job_id(text: &str, ordinal: u64) -> u64 {
    text.trim_ascii().parse::<u64>().unwrap_or(ordinal)
}
