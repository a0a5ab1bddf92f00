//! The Standard Workload Format (SWF) of the Parallel Workloads Archive.
//!
//! An SWF file is a text file with a header of `;` comment lines (`; MaxProcs: 128`) followed by
//! one line per job with 18 whitespace-separated numeric fields. Field meanings and units follow
//! the archive's definition (<https://www.cs.huji.ac.il/labs/parallel/workload/swf.html>): times
//! are in seconds, submit times relative to the log's `UnixStartTime`, `-1` means "unknown".
//!
//! * [`SwfReader`] streams [`Record`]s from a `.swf` or gzip-compressed `.swf.gz` file (detected
//!   by the gzip magic bytes, not the name). Malformed input yields an [`SwfError`] that names the
//!   file, the line and the field; the reader never panics on input.
//! * [`Header`] keeps every header line in order and gives typed access to the fields simulators
//!   need (`MaxProcs`, `MaxNodes`, `UnixStartTime`, `TimeZone`, `TimeZoneString`, `Version`).
//! * [`SwfWriter`] writes a header and records back; reading what it wrote gives the same header
//!   and records (a tested round trip).

mod error;
mod header;
mod input;
mod pipe;
mod reader;
mod record;
mod writer;

pub use error::{SwfError, excerpt};
pub use header::{Header, HeaderLine};
pub use input::{Input, MAX_PEEK_BYTES};
pub use reader::{MAX_LINE_BYTES, SwfReader, Trace, parse_record};
pub use record::{FIELD_COUNT, FIELD_NAMES, Record};
pub use writer::SwfWriter;
