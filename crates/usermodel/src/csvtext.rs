//! Reading the small numeric CSV files of a model. Every file has a header row and a fixed
//! number of columns; errors name the file, the line and the column.
//!
//! The files are read with the `csv` crate, so a quoted field (one holding a comma, or a quoted
//! header name) reads as its text; fields are trimmed of surrounding blanks, and blank lines are
//! skipped.

use crate::ModelError;

/// One data row: its line number and fields.
pub(crate) struct Row<'a> {
    file: &'a str,
    /// 1-based line of the file the row starts on.
    line: usize,
    fields: &'a csv::StringRecord,
    header: &'a csv::StringRecord,
}

impl Row<'_> {
    /// The text of field `column` (trimmed); `rows` checked that it exists.
    pub(crate) fn text(&self, column: usize) -> &str {
        self.fields.get(column).unwrap_or_default()
    }

    pub(crate) fn int(&self, column: usize) -> Result<i64, ModelError> {
        self.text(column)
            .parse()
            .map_err(|_| self.error(column, "a whole number"))
    }

    pub(crate) fn float(&self, column: usize) -> Result<f64, ModelError> {
        match self.text(column).parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(column, "a finite number")),
        }
    }

    fn error(&self, column: usize, expected: &str) -> ModelError {
        ModelError::Field {
            file: self.file.to_string(),
            line: self.line,
            column: self.header.get(column).unwrap_or_default().to_string(),
            value: self.text(column).to_string(),
            expected: expected.to_string(),
        }
    }
}

/// The header row and data rows of a model file.
pub(crate) struct Table<'a> {
    file: &'a str,
    header: csv::StringRecord,
    /// (1-based line, fields) of each data row.
    records: Vec<(usize, csv::StringRecord)>,
}

impl Table<'_> {
    /// The data rows, in file order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = Row<'_>> {
        self.records.iter().map(|(line, fields)| Row {
            file: self.file,
            line: *line,
            fields,
            header: &self.header,
        })
    }

    /// How many data rows there are.
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }
}

/// Whether a record is a line of blanks only (the `csv` crate skips empty lines, not blank ones).
fn blank(record: &csv::StringRecord) -> bool {
    record.iter().all(str::is_empty)
}

/// The rows of `text` (the contents of `file`), each checked to have `columns` fields.
pub(crate) fn rows<'a>(
    file: &'a str,
    text: &'a str,
    columns: usize,
) -> Result<Table<'a>, ModelError> {
    let invalid = |reason: String| ModelError::Invalid {
        file: file.to_string(),
        reason,
    };
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let mut header = None;
    let mut records = Vec::new();
    // The line a record starts on, counted from its byte offset: the `csv` crate's own line
    // count leaves out the empty lines it skips, and its offset is where it began reading, before
    // the empty lines.
    let (mut counted_to, mut line) = (0usize, 1usize);
    let mut line_at = |byte: u64| {
        let mut byte = usize::try_from(byte).unwrap_or(usize::MAX).min(text.len());
        while matches!(text.as_bytes().get(byte), Some(b'\n' | b'\r')) {
            byte += 1;
        }
        if byte > counted_to {
            line += text.as_bytes()[counted_to..byte]
                .iter()
                .filter(|b| **b == b'\n')
                .count();
            counted_to = byte;
        }
        line
    };
    for record in reader.records() {
        let record = match record {
            Ok(record) => record,
            Err(e) => {
                let line = e.position().map_or(0, |p| line_at(p.byte()));
                return Err(invalid(format!("line {line}: {e}")));
            }
        };
        let line = record.position().map_or(0, |p| line_at(p.byte()));
        if blank(&record) {
            continue;
        }
        match header {
            None => {
                if record.len() != columns {
                    return Err(invalid(format!(
                        "expected {columns} columns in the header, found {}",
                        record.len()
                    )));
                }
                header = Some(record);
            }
            Some(_) => {
                if record.len() != columns {
                    return Err(invalid(format!(
                        "line {line}: expected {columns} fields, found {}",
                        record.len()
                    )));
                }
                records.push((line, record));
            }
        }
    }
    let header = header.ok_or_else(|| invalid("the file is empty".into()))?;
    Ok(Table {
        file,
        header,
        records,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_fields_and_header_read_as_their_text() {
        let text = "\"name\", value\n\"continue_a\" , 0.5\n\r\n  \nday_fraction,\"0.25\"\r\n";
        let table = rows("parameters.csv", text, 2).unwrap();
        let read: Vec<(String, f64)> = table
            .iter()
            .map(|r| (r.text(0).to_string(), r.float(1).unwrap()))
            .collect();
        assert_eq!(
            read,
            [
                ("continue_a".to_string(), 0.5),
                ("day_fraction".into(), 0.25)
            ]
        );
        assert_eq!(table.len(), 2);
        // A comma inside quotes is part of the field, not a separator.
        let table = rows("a.csv", "a,b\n\"1,5\",2\n", 2).unwrap();
        assert_eq!(table.iter().next().unwrap().text(0), "1,5");
    }

    #[test]
    fn a_bad_value_names_file_line_and_column() {
        let text = "seconds,cumulative\n0,0.5\n\n7,x\n";
        let table = rows("runtime.csv", text, 2).unwrap();
        let error = table
            .iter()
            .map(|r| r.float(1))
            .collect::<Result<Vec<_>, _>>()
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "runtime.csv:4: column cumulative: \"x\" is not a finite number"
        );
    }

    #[test]
    fn wrong_field_counts_and_empty_files_are_refused() {
        let error = rows("w.csv", "a,b\n1,2\n3\n", 2).err().unwrap();
        assert_eq!(
            error.to_string(),
            "w.csv: line 3: expected 2 fields, found 1"
        );
        let error = rows("w.csv", "a,b,c\n", 2).err().unwrap();
        assert_eq!(
            error.to_string(),
            "w.csv: expected 2 columns in the header, found 3"
        );
        let error = rows("w.csv", "", 2).err().unwrap();
        assert_eq!(error.to_string(), "w.csv: the file is empty");
        let error = rows("w.csv", "a,b\n\"1,2\n", 2).err().unwrap();
        assert!(error.to_string().starts_with("w.csv: line 2"), "{error}");
    }
}
