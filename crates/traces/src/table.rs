//! CSV tables as the formats write them: columns found by their names in the header row (or
//! by position, for a table without one), fields read by type with errors naming the file,
//! the line and the column.

use crate::Format;
use crate::error::{TraceError, shown};
use crate::values::{self, Stamp};

/// A column of a format's schema.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    /// Its name in the format's documentation (case is ignored).
    pub name: &'static str,
    /// Whether a file without it is refused.
    pub required: bool,
}

/// A column the reader needs.
pub(crate) const fn required(name: &'static str) -> Column {
    Column {
        name,
        required: true,
    }
}

/// A column read when the file has it.
pub(crate) const fn optional(name: &'static str) -> Column {
    Column {
        name,
        required: false,
    }
}

impl Column {
    fn is(&self, header: &str) -> bool {
        let header = header.trim();
        header.eq_ignore_ascii_case(self.name)
    }
}

/// A CSV reader of a trace: quotes as RFC 4180, rows of any length (checked by the reader).
pub(crate) fn reader(input: swf::Input, headers: bool) -> csv::Reader<swf::Input> {
    csv::ReaderBuilder::new()
        .has_headers(headers)
        .flexible(true)
        .buffer_capacity(256 * 1024)
        .from_reader(input)
}

/// A CSV error as the trace's.
pub(crate) fn csv_error(source_name: &str, format: Format, line: u64, e: csv::Error) -> TraceError {
    let line = e.position().map_or(line, |p| p.line());
    let error = match e.into_kind() {
        csv::ErrorKind::Io(io) => {
            return TraceError::Read {
                source_name: source_name.to_string(),
                line,
                error: io.to_string(),
            };
        }
        csv::ErrorKind::Utf8 { err, .. } => format!("a field that is not UTF-8 ({err})"),
        other => format!("{other:?}"),
    };
    TraceError::Csv {
        source_name: source_name.to_string(),
        line,
        format,
        error,
    }
}

/// Where each column of `schema` is in a header row (`None`: absent); a required column
/// that is absent is an error.
pub(crate) fn locate(
    header: &csv::StringRecord,
    schema: &[Column],
    source_name: &str,
    format: Format,
) -> Result<Vec<Option<usize>>, TraceError> {
    let line = header.position().map_or(1, |p| p.line());
    let mut positions = Vec::with_capacity(schema.len());
    for column in schema {
        let at = header.iter().position(|h| column.is(h));
        if at.is_none() && column.required {
            return Err(TraceError::MissingColumn {
                source_name: source_name.to_string(),
                line,
                format,
                column: column.name,
                expected: schema
                    .iter()
                    .filter(|c| c.required)
                    .map(|c| c.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        positions.push(at);
    }
    Ok(positions)
}

/// Whether a header row holds every required column of `schema` (format detection).
pub(crate) fn has_all(header: &str, schema: &[Column]) -> bool {
    let names: Vec<&str> = header
        .split(',')
        .map(|h| h.trim().trim_matches('"'))
        .collect();
    schema
        .iter()
        .filter(|c| c.required)
        .all(|c| names.iter().any(|h| c.is(h)))
}

/// One row's fields, read by column with errors naming the file, line and column.
pub(crate) struct Fields<'r> {
    pub record: &'r csv::StringRecord,
    pub positions: &'r [Option<usize>],
    pub schema: &'r [Column],
    pub line: u64,
    pub source_name: &'r str,
}

impl<'r> Fields<'r> {
    /// The text of column `i` ("" when the file has no such column or the row is short).
    pub fn text(&self, i: usize) -> &'r str {
        self.positions[i]
            .and_then(|at| self.record.get(at))
            .unwrap_or("")
    }

    /// Whether the file has column `i`.
    pub fn has(&self, i: usize) -> bool {
        self.positions[i].is_some()
    }

    /// The error of column `i`'s value.
    pub fn error(&self, i: usize, expected: &str) -> TraceError {
        TraceError::Field {
            source_name: self.source_name.to_string(),
            line: self.line,
            column: self.schema[i].name.to_string(),
            value: shown(self.text(i)),
            expected: expected.to_string(),
        }
    }

    /// A date and time ([`values::date_time`]).
    pub fn date_time(&self, i: usize) -> Result<Option<Stamp>, TraceError> {
        values::date_time(self.text(i)).map_err(|()| self.error(i, values::DATE_TIME))
    }

    /// Unix seconds ([`values::unix_seconds`]).
    pub fn unix(&self, i: usize) -> Result<Option<i64>, TraceError> {
        values::unix_seconds(self.text(i)).map_err(|()| self.error(i, values::UNIX_SECONDS))
    }

    /// A count ([`values::count`]).
    pub fn count(&self, i: usize) -> Result<Option<u32>, TraceError> {
        values::count(self.text(i))
            .map_err(|()| self.error(i, "a whole number of at least 0, or empty/None/NaN"))
    }

    /// An amount that may be fractional ([`values::amount`]).
    pub fn amount(&self, i: usize) -> Result<Option<f64>, TraceError> {
        values::amount(self.text(i))
            .map_err(|()| self.error(i, "a number of at least 0, or empty/None/NaN"))
    }
}
