//! Reading the files a command is given (population and sweep files, sweep manifests, a run's
//! or sweep's tables for the figures) within documented bounds, so that `/dev/zero` or an
//! endless pipe is refused with a message naming the file and the bound, instead of being read
//! until memory runs out (docs/reference/limits.md).

use std::io::{self, Read};
use std::path::Path;

use crate::error::{Result, ScenarioError};

/// The largest text file read whole (a population, sweep or slurm.conf file; summary.json): 16
/// MiB. Real ones are a few kilobytes.
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// The largest sweep manifest (one line per run; 1,000,000 runs take about 20 MB): 256 MiB.
pub const MAX_MANIFEST_BYTES: u64 = 256 << 20;

/// The largest table the figures read (a run's jobs.csv, a sweep's results.csv): 4 GiB, about
/// 40 million jobs, twice the most jobs a replay holds.
pub const MAX_TABLE_BYTES: u64 = 4 << 30;

/// The longest line of a table the figures read: 1 MiB (rows are a few hundred bytes).
pub const MAX_TABLE_LINE_BYTES: u64 = 1 << 20;

/// Reads the text file at `path`, refusing one of more than `limit` bytes; `what` says what the
/// file is, for the messages ("population file").
pub fn read_text(path: &Path, limit: u64, what: &str) -> Result<String> {
    let file = std::fs::File::open(path).map_err(|source| ScenarioError::Io {
        what: format!("{}: cannot read", path.display()),
        source,
    })?;
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ScenarioError::Io {
            what: format!("{}: cannot read", path.display()),
            source,
        })?;
    if bytes.len() as u64 > limit {
        return Err(too_large(path, limit, what));
    }
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        ScenarioError::Invalid(format!(
            "{}: not UTF-8 text (a {what} is text; the first bad byte is at offset {at})",
            path.display()
        ))
    })
}

/// The error for a file past its bound.
fn too_large(path: &Path, limit: u64, what: &str) -> ScenarioError {
    ScenarioError::Invalid(format!(
        "{}: more than {} bytes, the most a {what} may have (docs/reference/limits.md): not a {what}, or an endless stream",
        path.display(),
        limit
    ))
}

/// A reader that fails once more than `limit` bytes came through, or a line longer than
/// `line_limit`: a table read row by row cannot grow without bound.
pub struct Bounded<R> {
    inner: R,
    name: String,
    left: u64,
    limit: u64,
    line_limit: u64,
    line: u64,
}

impl<R: Read> Bounded<R> {
    /// Bounds `inner` (named `name` in the errors) to `limit` bytes and lines of `line_limit`.
    pub fn new(inner: R, name: &str, limit: u64, line_limit: u64) -> Bounded<R> {
        Bounded {
            inner,
            name: name.to_string(),
            left: limit,
            limit,
            line_limit,
            line: 0,
        }
    }
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        let read = &buf[..n];
        if n as u64 > self.left {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: more than {} bytes, the most a table read for the figures may have (docs/reference/limits.md)",
                    self.name, self.limit
                ),
            ));
        }
        self.left -= n as u64;
        self.line = match memchr::memrchr(b'\n', read) {
            Some(last) => (n - last - 1) as u64,
            None => self.line + n as u64,
        };
        if self.line > self.line_limit {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: a line longer than {} bytes: not a table sitesim wrote (binary data, or no line breaks)",
                    self.name, self.line_limit
                ),
            ));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_past_its_bound_is_refused_naming_file_and_bound() {
        let e = read_text(Path::new("/dev/zero"), 1000, "population file")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/dev/zero: more than 1000 bytes, the most a population file may have"),
            "{e}"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.toml");
        std::fs::write(&path, "x".repeat(1000)).unwrap();
        assert_eq!(read_text(&path, 1000, "file").unwrap().len(), 1000);
        std::fs::write(&path, b"a = \"\xff\"").unwrap();
        let e = read_text(&path, 1000, "population file")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("not UTF-8 text") && e.contains("offset 5"),
            "{e}"
        );
    }

    #[test]
    fn a_bounded_reader_fails_past_its_bytes_or_line_length() {
        let mut out = Vec::new();
        let lines = "a,b\n".repeat(100);
        Bounded::new(lines.as_bytes(), "t.csv", 400, 10)
            .read_to_end(&mut out)
            .unwrap();
        assert_eq!(out.len(), 400);
        let e = Bounded::new(lines.as_bytes(), "t.csv", 399, 10)
            .read_to_end(&mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("t.csv: more than 399 bytes"), "{e}");
        let e = Bounded::new(io::repeat(0).take(100), "z.csv", 1000, 50)
            .read_to_end(&mut Vec::new())
            .unwrap_err()
            .to_string();
        assert!(e.contains("z.csv: a line longer than 50 bytes"), "{e}");
    }
}
