use crate::Format;

/// Everything that stops a trace from being read. Each names the input and, where there is
/// one, the 1-based line (the header is line 1 of a CSV file) and the column by its name in
/// the format's documented schema. Problems with single jobs that the reader knows how to
/// handle are not errors: they are counted by reason in `sacct::Report`.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// The file could not be opened or read (also a truncated gzip stream).
    #[error(transparent)]
    Input(#[from] swf::SwfError),
    /// The file is not CSV as the format writes it (a quote left open, bytes that are not
    /// UTF-8 in a field the reader uses, ...), or could not be read part-way.
    #[error("{source_name}:{line}: not {format} CSV: {error}")]
    Csv {
        /// The input's name.
        source_name: String,
        /// The line being read.
        line: u64,
        /// The format expected.
        format: Format,
        /// What the CSV reader found.
        error: String,
    },
    /// The header row lacks a column the format's schema has (another format, or an export
    /// that left it out).
    #[error(
        "{source_name}:{line}: the header row has no {column} column, which the {format} format has ({expected}); is the file of that format? (--format)"
    )]
    MissingColumn {
        /// The input's name.
        source_name: String,
        /// The header's line.
        line: u64,
        /// The format expected.
        format: Format,
        /// The column missing.
        column: &'static str,
        /// The columns the reader needs.
        expected: String,
    },
    /// A row without as many fields as the schema has (for a format without a header row).
    #[error(
        "{source_name}:{line}: {found} fields, the {format} format's rows have {expected} ({columns}); is the file of that format? (--format)"
    )]
    FieldCount {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// The format expected.
        format: Format,
        /// Fields on the row.
        found: usize,
        /// Fields the schema has.
        expected: usize,
        /// The schema's columns, in order.
        columns: String,
    },
    /// A field whose value is not of its column's type or range.
    #[error("{source_name}:{line}: column {column}: {value:?} is not {expected}")]
    Field {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// The column, by its name in the format's schema.
        column: String,
        /// The value found (cut to 80 characters).
        value: String,
        /// What the column holds.
        expected: String,
    },
    /// Reading failed part-way.
    #[error("{source_name}:{line}: read error: {error}")]
    Read {
        /// The input's name.
        source_name: String,
        /// The line being read.
        line: u64,
        /// What failed.
        error: String,
    },
    /// A JSON trace that is not valid JSON, or not of the format's structure.
    #[error("{source_name}:{line}:{column}: not a {format} job log: {error}")]
    Json {
        /// The input's name.
        source_name: String,
        /// 1-based line.
        line: u64,
        /// 1-based column (characters).
        column: u64,
        /// The format expected.
        format: Format,
        /// What is wrong.
        error: String,
    },
    /// A file with no job at all (empty, or only a header).
    #[error("{source_name}: no job in this {format} trace")]
    NoJobs {
        /// The input's name.
        source_name: String,
        /// The format expected.
        format: Format,
    },
    /// More rows than a trace may have ([`crate::MAX_ROWS`]).
    #[error("{source_name}:{line}: more than {limit} rows: not read (docs/reference/limits.md)")]
    TooManyRows {
        /// The input's name.
        source_name: String,
        /// The line reached.
        line: u64,
        /// The bound.
        limit: u64,
    },
    /// The file beside the trace that a format's jobs need (Alibaba PAI's job table beside its
    /// task table) could not be read.
    #[error("{path}: {error} (a {format} trace's {what})")]
    Companion {
        /// The file.
        path: String,
        /// The format.
        format: Format,
        /// What the file is.
        what: &'static str,
        /// Why it could not be read.
        error: Box<TraceError>,
    },
}

/// A value cut to 80 characters for a message.
pub(crate) fn shown(value: &str) -> String {
    match value.char_indices().nth(80) {
        Some((end, _)) => format!("{}...", &value[..end]),
        None => value.to_string(),
    }
}
