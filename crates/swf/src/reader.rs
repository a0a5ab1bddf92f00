use std::io::{self, BufRead};
use std::path::Path;

use crate::SwfError;
use crate::header::{Header, NUMERIC_KEYS, leading_int, parse_comment};
use crate::input::Input;
use crate::record::{FIELD_COUNT, FIELD_NAMES, FRACTIONAL_FIELDS, FieldValue, Record};

/// A whole SWF file in memory: its header and every job record in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trace {
    /// The header lines.
    pub header: Header,
    /// The job records, in file order.
    pub records: Vec<Record>,
}

impl Trace {
    /// Reads a whole `.swf` or `.swf.gz` file.
    pub fn read(path: impl AsRef<Path>) -> Result<Trace, SwfError> {
        let reader = SwfReader::open(path)?;
        let header = reader.header().clone();
        let records = reader.collect::<Result<Vec<_>, _>>()?;
        Ok(Trace { header, records })
    }
}

/// Streams job records from SWF text. The header (the leading `;` lines) is read when the reader
/// is created; iteration then yields one [`Record`] per job line and stops after the first error.
pub struct SwfReader<R> {
    input: R,
    source_name: String,
    line: u64,
    buf: Vec<u8>,
    header: Header,
    /// The first job line, read while looking for the end of the header.
    pending: Option<Result<Record, SwfError>>,
    done: bool,
}

impl SwfReader<Input> {
    /// Opens a file, decompressing it if it starts with the gzip magic bytes (whatever its name).
    /// Decompression runs on a background thread, overlapping with parsing.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, SwfError> {
        SwfReader::from_input(Input::open(path.as_ref())?)
    }

    /// Reads an input opened elsewhere (whose format was told from its first line, say).
    pub fn from_input(input: Input) -> Result<Self, SwfError> {
        let name = input.name().to_string();
        SwfReader::new(input, name)
    }
}

/// The longest line an SWF file may have, bytes. Job lines are about 100 bytes and header
/// comments a few hundred; anything longer is not SWF.
pub const MAX_LINE_BYTES: usize = 1 << 16;

impl<R: BufRead> SwfReader<R> {
    /// Wraps buffered SWF text; `source_name` names the input in error messages. Reads the header.
    pub fn new(input: R, source_name: impl Into<String>) -> Result<Self, SwfError> {
        let mut reader = SwfReader {
            input,
            source_name: source_name.into(),
            line: 0,
            buf: Vec::with_capacity(256),
            header: Header::new(),
            pending: None,
            done: false,
        };
        reader.read_header()?;
        Ok(reader)
    }

    /// The header read from the leading comment lines.
    pub fn header(&self) -> &Header {
        &self.header
    }

    /// The error of the first job line, if reading it failed (binary data, say). Lets a caller
    /// report that before anything it would conclude from a header that was never there.
    pub fn first_line_error(&self) -> Option<&SwfError> {
        match &self.pending {
            Some(Err(e)) => Some(e),
            _ => None,
        }
    }

    /// The input's name as used in error messages.
    pub fn source_name(&self) -> &str {
        &self.source_name
    }

    fn read_header(&mut self) -> Result<(), SwfError> {
        while self.next_line()? {
            let text = self.buf.trim_ascii();
            if text.is_empty() {
                continue;
            }
            if let Some(comment) = text.strip_prefix(b";") {
                let comment = String::from_utf8_lossy(comment);
                let line = parse_comment(&comment);
                self.check_header_line(&line)?;
                self.header.push_line(line);
            } else {
                self.pending = Some(parse_record(text, &self.source_name, self.line));
                break;
            }
        }
        Ok(())
    }

    fn check_header_line(&self, line: &crate::HeaderLine) -> Result<(), SwfError> {
        if let crate::HeaderLine::Field { key, value } = line {
            let numeric = NUMERIC_KEYS.iter().any(|k| k.eq_ignore_ascii_case(key));
            if numeric && leading_int(value).is_none() {
                return Err(SwfError::HeaderField {
                    source_name: self.source_name.clone(),
                    line: self.line,
                    key: crate::error::excerpt(key.as_bytes(), 40),
                    value: crate::error::excerpt(value.as_bytes(), 40),
                });
            }
        }
        Ok(())
    }

    /// Reads the next line into `buf` (at most [`MAX_LINE_BYTES`], so a file without line
    /// breaks cannot exhaust memory); false at end of input. A UTF-8 byte-order mark before the
    /// first line is skipped.
    fn next_line(&mut self) -> Result<bool, SwfError> {
        use std::io::Read;
        self.buf.clear();
        self.line += 1;
        let limit = MAX_LINE_BYTES as u64 + 1;
        match (&mut self.input)
            .take(limit)
            .read_until(b'\n', &mut self.buf)
        {
            Ok(0) => Ok(false),
            Ok(_) if self.buf.len() > MAX_LINE_BYTES => Err(SwfError::LineTooLong {
                source_name: self.source_name.clone(),
                line: self.line,
                limit: MAX_LINE_BYTES,
            }),
            Ok(_) => {
                if self.line == 1 && self.buf.starts_with(b"\xEF\xBB\xBF") {
                    self.buf.drain(..3);
                }
                Ok(true)
            }
            Err(error) => Err(self.read_error(error)),
        }
    }

    fn read_error(&self, error: io::Error) -> SwfError {
        SwfError::Read {
            source_name: self.source_name.clone(),
            line: self.line,
            error,
        }
    }
}

impl<R: BufRead> Iterator for SwfReader<R> {
    type Item = Result<Record, SwfError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(first) = self.pending.take() {
            self.done = first.is_err();
            return Some(first);
        }
        loop {
            match self.next_line() {
                Ok(false) => {
                    self.done = true;
                    return None;
                }
                Ok(true) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
            let text = self.buf.trim_ascii();
            // Blank lines and stray comments after the header carry no job.
            if text.is_empty() || text[0] == b';' {
                continue;
            }
            let result = parse_record(text, &self.source_name, self.line);
            self.done = result.is_err();
            return Some(result);
        }
    }
}

/// Parses one SWF job line (18 whitespace-separated numbers). `source_name` and `line` only
/// label the error. Whole-number fields accept an optional sign and digits; fields 6, 7 and 10
/// also accept a finite decimal fraction.
pub fn parse_record(text: &[u8], source_name: &str, line: u64) -> Result<Record, SwfError> {
    let mut values = [FieldValue::Whole(-1); FIELD_COUNT];
    let mut count = 0;
    let mut rest = text;
    loop {
        // Skip the separator, then take one token.
        let start = rest
            .iter()
            .position(|b| !b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        rest = &rest[start..];
        if rest.is_empty() {
            break;
        }
        let len = rest
            .iter()
            .position(|b| b.is_ascii_whitespace())
            .unwrap_or(rest.len());
        let token = &rest[..len];
        rest = &rest[len..];
        if count < FIELD_COUNT {
            let fractional = FRACTIONAL_FIELDS.contains(&count);
            values[count] = parse_field(token, fractional)
                .ok_or_else(|| field_error(source_name, line, count, token, fractional))?;
        }
        count += 1;
    }
    if count != FIELD_COUNT {
        return Err(SwfError::FieldCount {
            source_name: source_name.to_string(),
            line,
            found: count,
        });
    }
    Ok(Record::from_fields(&values))
}

fn parse_field(token: &[u8], fractional: bool) -> Option<FieldValue> {
    if let Some(v) = parse_whole(token) {
        return Some(FieldValue::Whole(v));
    }
    if fractional {
        let v: f64 = std::str::from_utf8(token).ok()?.parse().ok()?;
        if v.is_finite() {
            return Some(FieldValue::Fraction(v));
        }
    }
    None
}

/// A whole number: optional sign, then 1 to 18 ASCII digits (anything longer is not a time).
fn parse_whole(token: &[u8]) -> Option<i64> {
    let (negative, digits) = match token.first()? {
        b'-' => (true, &token[1..]),
        b'+' => (false, &token[1..]),
        _ => (false, token),
    };
    if digits.is_empty() || digits.len() > 18 {
        return None;
    }
    let mut value: i64 = 0;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i64::from(b - b'0');
    }
    Some(if negative { -value } else { value })
}

fn field_error(
    source_name: &str,
    line: u64,
    index: usize,
    token: &[u8],
    fractional: bool,
) -> SwfError {
    let value = crate::error::excerpt(token, 40);
    SwfError::Field {
        source_name: source_name.to_string(),
        line,
        field: index + 1,
        name: FIELD_NAMES[index],
        value,
        expected: if fractional {
            "a finite number"
        } else {
            "a whole number"
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const GOOD: &str =
        "; Version: 2.2\n; MaxProcs: 100\n\n1 0 5 60 4 -1 -1 4 120 -1 1 3 1 -1 -1 -1 -1 -1\n";

    fn read_all(text: &[u8]) -> Result<Vec<Record>, SwfError> {
        SwfReader::new(text, "t.swf")?.collect()
    }

    fn traces_dir() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces")
    }

    #[test]
    fn reads_header_and_jobs() {
        let reader = SwfReader::new(GOOD.as_bytes(), "t.swf").unwrap();
        assert_eq!(reader.header().max_procs(), Some(100));
        assert_eq!(reader.header().version(), Some("2.2"));
        let records: Vec<Record> = reader.collect::<Result<_, _>>().unwrap();
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].run_time, 60);
        assert_eq!(records[0].requested_time, 120);
    }

    #[test]
    fn seventeen_fields_is_an_error_naming_the_line() {
        let text = format!("{GOOD}2 10 5 60 4 -1 -1 4 120 -1 1 3 1 -1 -1 -1 -1\n");
        let err = read_all(text.as_bytes()).unwrap_err();
        assert!(
            matches!(
                err,
                SwfError::FieldCount {
                    line: 5,
                    found: 17,
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(err.to_string(), "t.swf:5: expected 18 fields, found 17");
    }

    #[test]
    fn non_number_names_the_field() {
        let text = format!("{GOOD}2 10 5 6x0 4 -1 -1 4 120 -1 1 3 1 -1 -1 -1 -1 -1\n");
        let err = read_all(text.as_bytes()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.swf:5: field 4 (run time): \"6x0\" is not a whole number"
        );
        // Fractions are fine in field 6 but not in field 2.
        let text = format!("{GOOD}2 1.5 5 60 4 0.25 -1 4 120 -1 1 3 1 -1 -1 -1 -1 -1\n");
        let err = read_all(text.as_bytes()).unwrap_err();
        assert!(matches!(err, SwfError::Field { field: 2, .. }), "{err:?}");
    }

    #[test]
    fn bad_numeric_header_is_an_error() {
        let err = SwfReader::new(&b"; MaxProcs: many\n"[..], "t.swf")
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "t.swf:1: header field MaxProcs: \"many\" is not a whole number"
        );
    }

    #[test]
    fn missing_file_is_an_open_error() {
        let err = SwfReader::open("/nonexistent/trace.swf").err().unwrap();
        assert!(matches!(err, SwfError::Open { .. }));
        assert!(
            err.to_string()
                .starts_with("/nonexistent/trace.swf: cannot open")
        );
    }

    #[test]
    fn truncated_gzip_is_a_read_error() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        for i in 1..2000 {
            writeln!(gz, "{i} {i} 0 60 4 -1 -1 4 120 -1 1 3 1 -1 -1 -1 -1 -1").unwrap();
        }
        let bytes = gz.finish().unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cut.swf.gz");
        std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();
        let err = Trace::read(&path).unwrap_err();
        assert!(matches!(err, SwfError::Read { .. }), "{err:?}");
        // The whole file reads back, whatever its name.
        let whole = dir.path().join("whole.dat");
        std::fs::write(&whole, &bytes).unwrap();
        assert_eq!(Trace::read(&whole).unwrap().records.len(), 1999);
    }

    #[test]
    fn real_trace_header_and_job_count() {
        let trace = Trace::read(traces_dir().join("KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
        assert_eq!(trace.records.len(), 28476);
        let h = &trace.header;
        assert_eq!(h.max_procs(), Some(100));
        assert_eq!(h.max_nodes(), Some(100));
        assert_eq!(h.unix_start_time(), Some(843480031));
        assert_eq!(h.time_zone(), Some(3600));
        assert_eq!(h.time_zone_string(), Some("Europe/Stockholm"));
        assert_eq!(h.version(), Some("2.2"));
    }

    proptest::proptest! {
        /// The line parser's fuzz stand-in: arbitrary bytes never panic, and what parses has
        /// exactly 18 fields.
        #[test]
        fn arbitrary_lines_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..200)) {
            if parse_record(&bytes, "fuzz", 1).is_ok() {
                let fields = bytes.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty()).count();
                proptest::prop_assert_eq!(fields, FIELD_COUNT);
            }
        }

        /// Numeric-looking lines with random field counts and junk tokens.
        #[test]
        fn numeric_lines_never_panic(tokens in proptest::collection::vec("-?[0-9]{0,22}(\\.[0-9]{0,3})?|[a-z+.e-]{1,4}", 0..25)) {
            let line = tokens.join(" ");
            let _ = parse_record(line.as_bytes(), "fuzz", 1);
        }

        /// Whole files of arbitrary bytes: the reader ends with records or an error, never a panic.
        #[test]
        fn arbitrary_files_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            if let Ok(reader) = SwfReader::new(&bytes[..], "fuzz") {
                for item in reader {
                    if item.is_err() { break; }
                }
            }
        }
    }
}

#[cfg(test)]
mod hardening_tests {
    use super::*;

    #[test]
    fn a_line_without_end_is_refused_without_reading_it_all() {
        // 10 MB of zeros and no newline, like /dev/zero or a gzip bomb.
        let zeros = std::io::Read::take(std::io::repeat(0), 10_000_000);
        let err = SwfReader::new(std::io::BufReader::new(zeros), "zeros")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            err.contains("zeros:1: a line longer than 65536 bytes"),
            "{err}"
        );
        // Sibling: a long line after a good header and a good job.
        let mut text = b"; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n".to_vec();
        text.extend(std::iter::repeat_n(b'7', 100_000));
        let mut reader = SwfReader::new(&text[..], "long").unwrap();
        assert!(reader.next().is_some_and(|r| r.is_ok()));
        let err = reader.next().and_then(|r| r.err()).map(|e| e.to_string());
        assert!(err.is_some_and(|e| e.contains("long:3: a line longer")));
    }

    #[test]
    fn a_byte_order_mark_is_skipped() {
        let text = b"\xEF\xBB\xBF; MaxProcs: 4\n1 0 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n";
        let reader = SwfReader::new(&text[..], "bom").unwrap();
        assert_eq!(reader.header().max_procs(), Some(4));
        let jobs: Vec<_> = reader.collect();
        assert_eq!(jobs.len(), 1);
        assert!(jobs[0].is_ok());
        // Sibling: a BOM before a job line (no header).
        let text = b"\xEF\xBB\xBF1 0 0 10 1 -1 -1 1 10 -1 1 1 -1 -1 -1 -1 -1 -1\n";
        let jobs: Vec<_> = SwfReader::new(&text[..], "bom2").unwrap().collect();
        assert!(jobs.len() == 1 && jobs[0].is_ok(), "{jobs:?}");
    }
}
