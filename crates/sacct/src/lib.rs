//! Slurm accounting as input: `sacct --parsable2` dumps read into jobs ([`read`]), with every
//! known pitfall of the format handled and each dropped or altered line counted by reason
//! ([`Report`]); the jobs converted to SWF with id tables for the names ([`convert`],
//! [`id_tables`]); and the association tree of `sacctmgr show assoc` ([`AssocTree`]).
//!
//! The format follows the sacct and sacctmgr man pages (Slurm 25.11): `|`-separated fields
//! under a header row, no trailing `|` (`--parsable2`), times in the local time of the host that
//! ran sacct without an offset (so `--tz`, [`Clock`]), durations as `[D-]HH:MM:SS`, limits in
//! minutes (`TimelimitRaw`), TRES lists as `key=value,...`.

#![warn(missing_docs)]

mod assoc;
mod error;
mod export;
mod log;
pub mod values;

pub use assoc::{AssocTree, Association, Shares};
pub use error::SacctError;
pub use export::{
    Converted, DUMP_COLUMNS, REPORT_KEY, Unit, arrays, convert, id_tables, peaks, write_dump,
};
pub use log::{
    Job, NameTables, Names, Reason, Report, Requeued, SacctLog, SacctOptions, WaitFrom,
    is_sacct_header, read, read_from,
};
pub use values::{Clock, State};

/// The longest line a dump may have, bytes: job lines are a few hundred bytes, a long submit
/// line a few thousand; anything longer is not sacct output (binary data, no line breaks).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Whether the file at `path` (plain or gzip) starts with a sacct `--parsable2` header row
/// (its first non-empty line starts with `JobID|` or `JobIDRaw|`).
pub fn looks_like_sacct(path: &std::path::Path) -> Result<bool, SacctError> {
    let mut input = swf::open_input(path)?;
    let mut line = String::new();
    loop {
        line.clear();
        let mut bytes = Vec::new();
        let mut limited = std::io::Read::take(&mut input, MAX_LINE_BYTES as u64);
        let n = std::io::BufRead::read_until(&mut limited, b'\n', &mut bytes).map_err(|error| {
            SacctError::Read {
                source_name: path.display().to_string(),
                line: 1,
                error,
            }
        })?;
        if n == 0 || (bytes.len() == MAX_LINE_BYTES && !bytes.ends_with(b"\n")) {
            // empty, or a first line no sacct header is as long as (binary data)
            return Ok(false);
        }
        line.push_str(&String::from_utf8_lossy(&bytes));
        if !line.trim().is_empty() {
            return Ok(is_sacct_header(&line));
        }
    }
}
