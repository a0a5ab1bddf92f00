use std::io;

/// Everything that stops a sacct or sacctmgr dump from being read. Each names the input and,
/// where there is one, the 1-based line and the field (by its column name in the header row).
/// Problems with single jobs that the reader knows how to handle are not errors: they are
/// counted by reason in [`crate::Report`].
#[derive(Debug, thiserror::Error)]
pub enum SacctError {
    /// The file could not be opened or read (also a truncated gzip stream).
    #[error(transparent)]
    Input(#[from] swf::SwfError),
    /// Reading failed part-way.
    #[error("{source_name}:{line}: read error: {error}")]
    Read {
        /// The input's name.
        source_name: String,
        /// The line being read.
        line: u64,
        /// The underlying error.
        error: io::Error,
    },
    /// A line longer than any sacct line (binary data, no line breaks).
    #[error(
        "{source_name}:{line}: a line longer than {limit} bytes: not a sacct dump (binary data or no line breaks?)"
    )]
    LineTooLong {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// The limit, bytes.
        limit: usize,
    },
    /// The file has no header row (`sacct --noheader`), or its first row names no sacct field.
    #[error(
        "{source_name}:{line}: not a sacct --parsable2 header row (\"{found}\"): run sacct without --noheader, with --parsable2, and --format starting with JobID (see the docs' \"Slurm accounting\" page)"
    )]
    NoHeader {
        /// The input's name.
        source_name: String,
        /// The line that should have been the header.
        line: u64,
        /// Its start.
        found: String,
    },
    /// The header lacks a column the reader needs.
    #[error(
        "{source_name}:{line}: the header row has no {field} column; add it to sacct's --format"
    )]
    MissingField {
        /// The input's name.
        source_name: String,
        /// The header's line.
        line: u64,
        /// The column (or the alternatives, `JobIDRaw or JobID`).
        field: &'static str,
    },
    /// The same column twice in the header.
    #[error("{source_name}:{line}: the header row names {field} twice")]
    DuplicateField {
        /// The input's name.
        source_name: String,
        /// The header's line.
        line: u64,
        /// The repeated column.
        field: String,
    },
    /// A line has a different number of fields than the header.
    #[error("{source_name}:{line}: {found} fields, the header has {expected}{hint}")]
    FieldCount {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// Fields on the line.
        found: usize,
        /// Fields in the header.
        expected: usize,
        /// What to do about it.
        hint: &'static str,
    },
    /// A field's text is not a value of its column.
    #[error("{source_name}:{line}: field {field}: {value:?} is not {expected}")]
    Field {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// The column's name in the header.
        field: String,
        /// The text (at most 60 characters).
        value: String,
        /// What was expected.
        expected: String,
    },
    /// `--tz` names no time zone of the tz database.
    #[error("--tz {name:?} is not a time zone of the tz database (e.g. UTC, Europe/Berlin)")]
    TimeZone {
        /// The name given.
        name: String,
    },
    /// An option value that makes no sense (a window that ends before it starts, ...).
    #[error("{0}")]
    Options(String),
    /// More job lines, or jobs, than a dump may hold (an endless stream, not a site's dump).
    #[error(
        "{source_name}:{line}: more than {limit} {what}, the most one file may hold (it is read whole); for a sacct dump, dump a shorter window (sacct -S/-E)"
    )]
    TooLarge {
        /// The input's name.
        source_name: String,
        /// The line where the bound was passed.
        line: u64,
        /// The bound.
        limit: u64,
        /// `lines` or `jobs`.
        what: &'static str,
    },
    /// Every job line was dropped (steps only, say): nothing to replay or convert.
    #[error(
        "{source_name}: none of its {lines} job lines is a job to keep ({reasons}); dump with sacct -X (allocations) and without --state filters that keep only steps or pending jobs"
    )]
    NothingKept {
        /// The input's name.
        source_name: String,
        /// Job lines read.
        lines: u64,
        /// Why they were dropped, by reason.
        reasons: String,
    },
    /// The dump has a header but no job line.
    #[error("{source_name}: no job lines after the header")]
    NoJobs {
        /// The input's name.
        source_name: String,
    },
}

impl SacctError {
    /// A field error at `line` of `source_name`, the text cut to 60 characters.
    pub(crate) fn field(
        source_name: &str,
        line: u64,
        field: &str,
        value: &str,
        expected: impl Into<String>,
    ) -> SacctError {
        SacctError::Field {
            source_name: source_name.to_string(),
            line,
            field: field.to_string(),
            value: value.chars().take(60).collect(),
            expected: expected.into(),
        }
    }
}
