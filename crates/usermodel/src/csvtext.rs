//! Reading the small numeric CSV files of a model. Every file has a header row and a fixed
//! number of columns; errors name the file, the line and the column.

use crate::ModelError;

/// One data row: its line number and fields.
pub(crate) struct Row<'a> {
    file: &'a str,
    line: usize,
    fields: Vec<&'a str>,
    header: Vec<&'a str>,
}

impl Row<'_> {
    pub(crate) fn text(&self, column: usize) -> &str {
        self.fields[column]
    }

    pub(crate) fn int(&self, column: usize) -> Result<i64, ModelError> {
        self.fields[column]
            .parse()
            .map_err(|_| self.error(column, "a whole number"))
    }

    pub(crate) fn float(&self, column: usize) -> Result<f64, ModelError> {
        match self.fields[column].parse::<f64>() {
            Ok(v) if v.is_finite() => Ok(v),
            _ => Err(self.error(column, "a finite number")),
        }
    }

    fn error(&self, column: usize, expected: &str) -> ModelError {
        ModelError::Field {
            file: self.file.to_string(),
            line: self.line,
            column: self.header[column].to_string(),
            value: self.fields[column].to_string(),
            expected: expected.to_string(),
        }
    }
}

/// The data rows of `text`, each checked to have `columns` fields.
pub(crate) fn rows<'a>(
    file: &'a str,
    text: &'a str,
    columns: usize,
) -> Result<Vec<Row<'a>>, ModelError> {
    let mut lines = text.lines().enumerate();
    let header: Vec<&str> = match lines.next() {
        Some((_, h)) => h.split(',').map(str::trim).collect(),
        None => {
            return Err(ModelError::Invalid {
                file: file.to_string(),
                reason: "the file is empty".into(),
            });
        }
    };
    if header.len() != columns {
        return Err(ModelError::Invalid {
            file: file.to_string(),
            reason: format!(
                "expected {columns} columns in the header, found {}",
                header.len()
            ),
        });
    }
    let mut rows = Vec::new();
    for (index, line) in lines {
        if line.trim().is_empty() {
            continue;
        }
        let fields: Vec<&str> = line.split(',').map(str::trim).collect();
        if fields.len() != columns {
            return Err(ModelError::Invalid {
                file: file.to_string(),
                reason: format!(
                    "line {}: expected {columns} fields, found {}",
                    index + 1,
                    fields.len()
                ),
            });
        }
        rows.push(Row {
            file,
            line: index + 1,
            fields,
            header: header.clone(),
        });
    }
    Ok(rows)
}
