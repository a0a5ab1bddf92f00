//! Decompression on a second thread: the reading thread parses while the next chunks inflate.

use std::io::{self, BufRead, Read};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::thread;

/// Bytes per chunk handed from the decompressing thread to the reader.
const CHUNK_BYTES: usize = 256 * 1024;
/// Chunks in flight between the two threads.
const CHUNKS_IN_FLIGHT: usize = 4;

/// A [`BufRead`] whose bytes are produced by reading `source` on a background thread. Errors
/// from the source (a truncated gzip stream) arrive in order, after the bytes before them.
pub(crate) struct PipedReader {
    chunks: Receiver<io::Result<Vec<u8>>>,
    spare: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    position: usize,
    finished: bool,
}

impl PipedReader {
    pub(crate) fn spawn<R: Read + Send + 'static>(mut source: R) -> io::Result<PipedReader> {
        let (chunk_tx, chunk_rx) = sync_channel::<io::Result<Vec<u8>>>(CHUNKS_IN_FLIGHT);
        let (spare_tx, spare_rx) = sync_channel::<Vec<u8>>(CHUNKS_IN_FLIGHT + 2);
        thread::Builder::new()
            .name("swf-inflate".into())
            .spawn(move || {
                loop {
                    let mut chunk = spare_rx.try_recv().unwrap_or_default();
                    chunk.resize(CHUNK_BYTES, 0);
                    let (filled, error) = fill(&mut source, &mut chunk);
                    chunk.truncate(filled);
                    if filled > 0 && chunk_tx.send(Ok(chunk)).is_err() {
                        return; // the reader was dropped
                    }
                    if let Some(e) = error {
                        let _ = chunk_tx.send(Err(e));
                        return;
                    }
                    if filled == 0 {
                        return; // end of input: dropping the sender ends the stream
                    }
                }
            })?;
        Ok(PipedReader {
            chunks: chunk_rx,
            spare: spare_tx,
            current: Vec::new(),
            position: 0,
            finished: false,
        })
    }
}

/// Reads until `buf` is full, the source ends or fails; returns the bytes read and the failure.
fn fill(source: &mut impl Read, buf: &mut [u8]) -> (usize, Option<io::Error>) {
    let mut filled = 0;
    while filled < buf.len() {
        match source.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (filled, Some(e)),
        }
    }
    (filled, None)
}

impl Read for PipedReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for PipedReader {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.position >= self.current.len() && !self.finished {
            match self.chunks.recv() {
                Ok(Ok(chunk)) => {
                    let used = std::mem::replace(&mut self.current, chunk);
                    let _ = self.spare.try_send(used);
                    self.position = 0;
                }
                Ok(Err(e)) => {
                    self.finished = true;
                    return Err(e);
                }
                Err(_) => self.finished = true,
            }
        }
        Ok(&self.current[self.position.min(self.current.len())..])
    }

    fn consume(&mut self, amount: usize) {
        self.position += amount;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A source that yields some bytes, then fails.
    struct Failing {
        left: usize,
    }

    impl Read for Failing {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.left == 0 {
                return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "cut short"));
            }
            let n = buf.len().min(self.left).min(1000);
            buf[..n].fill(b'x');
            self.left -= n;
            Ok(n)
        }
    }

    #[test]
    fn passes_bytes_through_in_order() {
        let data: Vec<u8> = (0..3 * CHUNK_BYTES + 17).map(|i| (i % 251) as u8).collect();
        let mut piped = PipedReader::spawn(io::Cursor::new(data.clone())).unwrap();
        let mut out = Vec::new();
        piped.read_to_end(&mut out).unwrap();
        assert_eq!(out, data);
    }

    #[test]
    fn error_arrives_after_the_bytes_before_it() {
        let mut piped = PipedReader::spawn(Failing { left: 5000 }).unwrap();
        let mut out = Vec::new();
        let err = piped.read_to_end(&mut out).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(out.len(), 5000);
    }
}
