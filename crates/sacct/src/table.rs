//! The rows of a `sacctmgr --parsable2` table (`show assoc`, `show qos`): `|`-separated fields
//! under a header row, read line by line with the dump reader's limits (line length, UTF-8), blank
//! lines skipped. Each table's reader ([`crate::AssocTree`], [`crate::QosTable`]) finds its
//! columns by their header names and reads its rows.

use std::io::{BufRead, Read};

use crate::error::SacctError;

/// A row of the table: its 1-based line and its fields.
pub(crate) struct Row<'a> {
    /// The row's line in the file.
    pub line: u64,
    /// Its `|`-separated fields.
    pub fields: Vec<&'a str>,
}

/// Reads `input` (named `source_name` in errors): the first non-blank line goes to `header`,
/// which finds the columns; every later one goes to `row` with them; at most `max_rows` rows
/// (`what` names them in the error). An input without a header row is [`SacctError::NoJobs`]
/// (nothing to read).
pub(crate) fn read_rows<Columns>(
    mut input: impl BufRead,
    source_name: &str,
    max_rows: usize,
    what: &'static str,
    mut header: impl FnMut(&Row<'_>) -> Result<Columns, SacctError>,
    mut row: impl FnMut(&Columns, &Row<'_>) -> Result<(), SacctError>,
) -> Result<(), SacctError> {
    let mut bytes = Vec::new();
    let mut line_number = 0u64;
    let mut columns: Option<Columns> = None;
    let mut rows = 0usize;
    loop {
        line_number += 1;
        bytes.clear();
        let read = (&mut input)
            .take(crate::MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut bytes)
            .map_err(|error| SacctError::Read {
                source_name: source_name.to_string(),
                line: line_number,
                error,
            })?;
        if read == 0 {
            break;
        }
        if bytes.len() > crate::MAX_LINE_BYTES {
            return Err(SacctError::LineTooLong {
                source_name: source_name.to_string(),
                line: line_number,
                limit: crate::MAX_LINE_BYTES,
            });
        }
        let Ok(text) = std::str::from_utf8(&bytes) else {
            return Err(SacctError::field(
                source_name,
                line_number,
                "(line)",
                &String::from_utf8_lossy(&bytes),
                "text (UTF-8)",
            ));
        };
        let text = text.trim_end_matches(['\n', '\r']);
        if text.trim().is_empty() {
            continue;
        }
        let this = Row {
            line: line_number,
            fields: text.split('|').collect(),
        };
        let Some(found) = &columns else {
            columns = Some(header(&this)?);
            continue;
        };
        if rows == max_rows {
            return Err(SacctError::TooLarge {
                source_name: source_name.to_string(),
                line: line_number,
                limit: max_rows as u64,
                what,
            });
        }
        rows += 1;
        row(found, &this)?;
    }
    if columns.is_none() {
        return Err(SacctError::NoJobs {
            source_name: source_name.to_string(),
        });
    }
    Ok(())
}

/// A header name as the readers compare it: lower case, without spaces and underscores
/// (`Par Name` and `ParentName` are `parname` and `parentname`).
pub(crate) fn header_key(field: &str) -> String {
    field.to_ascii_lowercase().replace([' ', '_'], "")
}

/// The column of the header whose [`header_key`] is one of `names`.
pub(crate) fn column(header: &Row<'_>, names: &[&str]) -> Option<usize> {
    header
        .fields
        .iter()
        .position(|f| names.contains(&header_key(f).as_str()))
}

/// Checks that `row` has the fields up to the last of `columns` (sacctmgr without
/// `--parsable2` pads and truncates columns).
pub(crate) fn check_width(
    row: &Row<'_>,
    source_name: &str,
    columns: &[Option<usize>],
) -> Result<(), SacctError> {
    let expected = columns.iter().flatten().max().map_or(0, |m| m + 1);
    if row.fields.len() < expected {
        return Err(SacctError::FieldCount {
            source_name: source_name.to_string(),
            line: row.line,
            found: row.fields.len(),
            expected,
            hint: " (run sacctmgr with --parsable2)",
        });
    }
    Ok(())
}
