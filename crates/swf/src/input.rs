//! A trace file opened once, for every reader of trace files (SWF here; sacct dumps and
//! association files in `sacct`; the fitter's provenance hash in `fit`).
//!
//! Deciding a file's format means looking at its start: the gzip magic bytes, then (for the
//! sacct reader) the first line. A pipe, `/dev/stdin` or a process substitution (`<(zcat ...)`)
//! can be read only once, so what was looked at must not be lost: [`Input`] keeps the bytes it
//! peeked and serves them again before the rest of the stream. Every decision about a file is
//! made on one [`Input`], which is then handed to the reader that fits.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Cursor, Read, Write};
use std::path::Path;

use crate::SwfError;
use crate::pipe::PipedReader;

/// The two bytes every gzip stream starts with.
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// UTF-8's byte-order mark, which some editors put before a text file's first line.
const BYTE_ORDER_MARK: [u8; 3] = [0xEF, 0xBB, 0xBF];

/// Input buffer size, bytes: large reads keep decompression and parsing cheap on 20 MB logs.
const BUFFER_BYTES: usize = 256 * 1024;

/// The most bytes [`Input::first_line`] reads looking for the first non-blank line (blank
/// lines included), so an endless stream of newlines cannot grow memory: 1 MiB.
pub const MAX_PEEK_BYTES: usize = 1 << 20;

/// An input stream opened once: decompressed if it starts with gzip's magic bytes (whatever its
/// name; on a background thread, overlapping with parsing), with a UTF-8 byte-order mark at the
/// start of its text skipped. Its first non-blank line can be looked at ([`Input::first_line`])
/// without being consumed, so a format can be told from it and the same stream then read
/// whole, even from a pipe.
pub struct Input {
    name: String,
    reader: Box<dyn BufRead + Send>,
}

impl Input {
    /// Opens the file at `path` (errors name it).
    pub fn open(path: &Path) -> Result<Input, SwfError> {
        Input::open_observed(path, None)
    }

    /// [`Input::open`], copying every byte read from the file as stored (compressed or not)
    /// into `observer` as it is read: a hash of a file that can be read only once (a pipe).
    pub fn open_observed(
        path: &Path,
        observer: Option<Box<dyn Write + Send>>,
    ) -> Result<Input, SwfError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|error| SwfError::Open {
            source_name: name.clone(),
            error,
        })?;
        let raw: Box<dyn Read + Send> = match observer {
            None => Box::new(file),
            Some(observer) => Box::new(Observed {
                inner: file,
                observer,
            }),
        };
        Input::from_read(raw, name)
    }

    /// An input of the bytes `raw` yields; `name` names it in errors.
    pub fn from_read(raw: Box<dyn Read + Send>, name: String) -> Result<Input, SwfError> {
        let read_error = |error| SwfError::Read {
            source_name: name.clone(),
            line: 0,
            error,
        };
        let raw: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(BUFFER_BYTES, raw));
        let (start, raw) = peek(raw, GZIP_MAGIC.len()).map_err(read_error)?;
        let text: Box<dyn BufRead + Send> = if start == GZIP_MAGIC {
            // Inflate on a second thread while this one parses.
            Box::new(
                PipedReader::spawn(flate2::bufread::MultiGzDecoder::new(raw))
                    .map_err(read_error)?,
            )
        } else {
            raw
        };
        let (start, mut text) = peek(text, BYTE_ORDER_MARK.len()).map_err(read_error)?;
        if start == BYTE_ORDER_MARK {
            text.consume(BYTE_ORDER_MARK.len());
        }
        Ok(Input { name, reader: text })
    }

    /// The input's name as errors show it (the path).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The first line that is not blank, without its line break, or `None` if the input has
    /// none within [`MAX_PEEK_BYTES`]. Nothing is consumed: reading the input afterwards
    /// starts at its beginning. A line longer than the bound comes back cut at the bound.
    pub fn first_line(&mut self) -> Result<Option<Vec<u8>>, SwfError> {
        let mut peeked = Vec::new();
        let mut found = None;
        loop {
            let start = peeked.len();
            let room = (MAX_PEEK_BYTES - start) as u64;
            let n = (&mut self.reader)
                .take(room)
                .read_until(b'\n', &mut peeked)
                .map_err(|error| SwfError::Read {
                    source_name: self.name.clone(),
                    line: 1,
                    error,
                })?;
            let line = peeked[start..].trim_ascii();
            if !line.is_empty() {
                found = Some(line.to_vec());
                break;
            }
            if n == 0 || peeked.len() >= MAX_PEEK_BYTES {
                break;
            }
        }
        let rest = std::mem::replace(&mut self.reader, Box::new(io::empty()));
        self.reader = Box::new(Cursor::new(peeked).chain(rest));
        Ok(found)
    }
}

impl Read for Input {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.reader.read(buf)
    }
}

impl BufRead for Input {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.reader.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.reader.consume(amount)
    }
}

/// The first `n` bytes of `reader` (fewer at its end) and a reader that still yields them:
/// the same reader when its buffer already holds them, else one that serves them first.
fn peek(
    mut reader: Box<dyn BufRead + Send>,
    n: usize,
) -> io::Result<(Vec<u8>, Box<dyn BufRead + Send>)> {
    let buffered = reader.fill_buf()?;
    if buffered.len() >= n {
        let start = buffered[..n].to_vec();
        return Ok((start, reader));
    }
    // A pipe may hand out fewer bytes per read than asked for.
    let mut start = Vec::with_capacity(n);
    (&mut reader).take(n as u64).read_to_end(&mut start)?;
    let again: Box<dyn BufRead + Send> = Box::new(Cursor::new(start.clone()).chain(reader));
    Ok((start, again))
}

/// A reader that copies what it reads into an observer.
struct Observed<R> {
    inner: R,
    observer: Box<dyn Write + Send>,
}

impl<R: Read> Read for Observed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.observer.write_all(&buf[..n])?;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A source handing out one byte per read, as a slow pipe may.
    struct Trickle(Cursor<Vec<u8>>);

    impl Read for Trickle {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let end = buf.len().min(1);
            self.0.read(&mut buf[..end])
        }
    }

    fn gzip(bytes: &[u8]) -> Vec<u8> {
        let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        encoder.write_all(bytes).unwrap();
        encoder.finish().unwrap()
    }

    fn all(mut input: Input) -> Vec<u8> {
        let mut out = Vec::new();
        input.read_to_end(&mut out).unwrap();
        out
    }

    const TEXT: &[u8] = b"\n  \nJobID|User\n1|a\n";

    #[test]
    fn the_first_line_is_peeked_and_then_read_again_from_a_one_byte_pipe() {
        for bytes in [TEXT.to_vec(), gzip(TEXT)] {
            let raw = Box::new(Trickle(Cursor::new(bytes)));
            let mut input = Input::from_read(raw, "pipe".into()).unwrap();
            assert_eq!(
                input.first_line().unwrap().as_deref(),
                Some(&b"JobID|User"[..])
            );
            assert_eq!(all(input), TEXT, "the peeked bytes are served again");
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped_in_plain_and_gzip_input() {
        let with_mark = [&BYTE_ORDER_MARK[..], TEXT].concat();
        for bytes in [with_mark.clone(), gzip(&with_mark)] {
            let raw = Box::new(Trickle(Cursor::new(bytes)));
            let mut input = Input::from_read(raw, "bom".into()).unwrap();
            assert_eq!(
                input.first_line().unwrap().as_deref(),
                Some(&b"JobID|User"[..])
            );
            assert_eq!(all(input), TEXT);
        }
        // Sibling: a mark later in the text is data, not skipped.
        let late = [TEXT, &BYTE_ORDER_MARK[..]].concat();
        let input = Input::from_read(Box::new(Cursor::new(late.clone())), "late".into()).unwrap();
        assert_eq!(all(input), late);
    }

    #[test]
    fn endless_blank_lines_are_peeked_only_up_to_the_bound() {
        let newlines = Box::new(io::repeat(b'\n'));
        let mut input = Input::from_read(newlines, "yes".into()).unwrap();
        assert_eq!(input.first_line().unwrap(), None);
        // Sibling: one line with no break at all (/dev/zero) comes back cut at the bound.
        let mut input = Input::from_read(Box::new(io::repeat(0)), "zero".into()).unwrap();
        let line = input.first_line().unwrap().unwrap_or_default();
        assert_eq!(line.len(), MAX_PEEK_BYTES);
    }

    #[test]
    fn empty_and_tiny_inputs_read_as_they_are() {
        for bytes in [&b""[..], b"x", b"\x1f", b"\xEF\xBB"] {
            let mut input =
                Input::from_read(Box::new(Cursor::new(bytes.to_vec())), "t".into()).unwrap();
            let first = input.first_line().unwrap();
            assert_eq!(first.is_none(), bytes.is_empty(), "{bytes:?}");
            assert_eq!(all(input), bytes);
        }
    }

    #[test]
    fn the_observer_sees_the_bytes_as_stored() {
        #[derive(Clone, Default)]
        struct Shared(Arc<Mutex<Vec<u8>>>);
        impl Write for Shared {
            fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(buf);
                Ok(buf.len())
            }
            fn flush(&mut self) -> io::Result<()> {
                Ok(())
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.gz");
        let stored = gzip(TEXT);
        std::fs::write(&path, &stored).unwrap();
        let seen = Shared::default();
        let input = Input::open_observed(&path, Some(Box::new(seen.clone()))).unwrap();
        assert_eq!(all(input), TEXT);
        assert_eq!(*seen.0.lock().unwrap(), stored);
    }
}
