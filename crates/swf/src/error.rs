use std::io;

/// Everything that can go wrong while reading SWF. Each variant names the input (`source` is the
/// file path, or a label for in-memory input) and, where there is one, the 1-based line number.
#[derive(Debug, thiserror::Error)]
pub enum SwfError {
    /// The file could not be opened.
    #[error("{source_name}: cannot open: {error}")]
    Open {
        /// The path that was opened.
        source_name: String,
        /// The operating system's reason.
        error: io::Error,
    },
    /// Reading failed part-way, for example a truncated or corrupt gzip stream.
    #[error("{source_name}:{line}: read error (truncated or corrupt file?): {error}")]
    Read {
        /// The input's name.
        source_name: String,
        /// The line being read when the error happened.
        line: u64,
        /// The underlying I/O or decompression error.
        error: io::Error,
    },
    /// A line is longer than any SWF line can be (binary data, or a file with no newlines).
    #[error(
        "{source_name}:{line}: a line longer than {limit} bytes: not an SWF file (binary data or no line breaks?)"
    )]
    LineTooLong {
        /// The input's name.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// The limit, bytes ([`crate::MAX_LINE_BYTES`]).
        limit: usize,
    },
    /// A job line does not have exactly 18 fields.
    #[error("{source_name}:{line}: expected 18 fields, found {found}")]
    FieldCount {
        /// The input's name.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// How many whitespace-separated fields the line has.
        found: usize,
    },
    /// A field is not a number of the expected kind.
    #[error("{source_name}:{line}: field {field} ({name}): {value:?} is not {expected}")]
    Field {
        /// The input's name.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// 1-based field number (1..=18).
        field: usize,
        /// The field's name in the SWF definition.
        name: &'static str,
        /// The offending text (truncated to 40 characters).
        value: String,
        /// What was expected ("a whole number", "a finite number").
        expected: &'static str,
    },
    /// A header line that should hold a number does not.
    #[error("{source_name}:{line}: header field {key}: {value:?} is not a whole number")]
    HeaderField {
        /// The input's name.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// The header key (`MaxProcs`, ...).
        key: String,
        /// The offending value.
        value: String,
    },
}
