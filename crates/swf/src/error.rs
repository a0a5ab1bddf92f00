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
    #[error("{source_name}:{line}: field {field} ({name}): \"{value}\" is not {expected}")]
    Field {
        /// The input's name.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// 1-based field number (1..=18).
        field: usize,
        /// The field's name in the SWF definition.
        name: &'static str,
        /// The offending text, as [`excerpt`] shows it (at most 40 characters).
        value: String,
        /// What was expected ("a whole number", "a finite number").
        expected: &'static str,
    },
    /// A header line that should hold a number does not.
    #[error("{source_name}:{line}: header field {key}: \"{value}\" is not a whole number")]
    HeaderField {
        /// The input's name.
        source_name: String,
        /// 1-based line number.
        line: u64,
        /// The header key (`MaxProcs`, ...).
        key: String,
        /// The offending value, as [`excerpt`] shows it.
        value: String,
    },
}

/// `bytes` as they can be shown in a message, at most `max_chars` characters of them (then
/// `…`): printable text as it is; tabs, line breaks and other control characters escaped
/// (`\t`, `\u{1}`); bytes that are not UTF-8 as `\xNN`. Binary input (a compressed file given
/// as plain text, say) is then named without writing raw bytes to a terminal.
pub fn excerpt(bytes: &[u8], max_chars: usize) -> String {
    let mut out = String::new();
    let mut shown = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if shown == max_chars {
                out.push('…');
                return out;
            }
            if c.is_control() || c == '\u{feff}' {
                out.extend(c.escape_debug());
            } else {
                out.push(c);
            }
            shown += 1;
        }
        for b in chunk.invalid() {
            if shown == max_chars {
                out.push('…');
                return out;
            }
            out.push_str(&format!("\\x{b:02x}"));
            shown += 1;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::excerpt;

    #[test]
    fn excerpts_escape_control_characters_and_bytes_that_are_not_text() {
        assert_eq!(excerpt(b"12x", 40), "12x");
        assert_eq!(
            excerpt(b"\x00\x1f\xff\xfe ok", 40),
            "\\0\\u{1f}\\xff\\xfe ok"
        );
        assert_eq!(excerpt("déjà vu".as_bytes(), 40), "déjà vu");
        assert_eq!(excerpt(b"abcdef", 3), "abc…");
        assert_eq!(excerpt(b"a\tb\n", 40), "a\\tb\\n");
    }
}
