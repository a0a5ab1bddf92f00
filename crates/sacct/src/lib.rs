//! Slurm accounting as input: `sacct --parsable2` dumps read into jobs ([`read`]), with every
//! known pitfall of the format handled and each dropped or altered line counted by reason
//! ([`Report`]); the jobs converted to SWF with id tables for the names ([`convert`],
//! [`id_tables`]); the association tree of `sacctmgr show assoc` ([`AssocTree`]); the QOS of
//! `sacctmgr show qos` ([`QosTable`]); and a site's outages: node down and drain periods of
//! `sacctmgr show events` ([`NodeEvents`]) and reservations of `scontrol show reservation` or
//! `sacctmgr show reservation` ([`Reservations`]).
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
mod outages;
mod qos;
mod table;
pub mod values;

pub use assoc::{AssocTree, Association, Shares};
pub use error::SacctError;
pub use export::{
    Converted, DUMP_COLUMNS, REPORT_KEY, Unit, arrays, convert, id_tables, peaks, write_dump,
};
pub use log::{
    FirstNames, Job, NameTables, NamedShape, Names, NodeNames, Reason, Report, Requeued, SacctLog,
    SacctOptions, WaitFrom, is_sacct_header, read, read_from,
};
pub use outages::{NodeEvent, NodeEventKind, NodeEvents, Reservation, Reservations};
pub use qos::{QosRow, QosTable};
pub use values::{Clock, State};

/// The longest line a dump may have, bytes: job lines are a few hundred bytes, a long submit
/// line a few thousand; anything longer is not sacct output (binary data, no line breaks).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// The most jobs a dump may hold (it is read whole; about 2 GB of jobs). The largest public
/// Slurm traces have about 11 million.
pub const MAX_JOBS: u64 = 20_000_000;

/// The latest time a dump's job may have, seconds since 1970 (10^11, about year 5138), and
/// the longest run or limit: a replay refuses larger times (`engine::MAX_TIME`, the same value),
/// so what a conversion writes can be replayed.
pub const MAX_TIME: i64 = 100_000_000_000;

/// The most lines a dump may have (job steps included, several per job).
pub const MAX_LINES: u64 = 100_000_000;

/// The most associations a `sacctmgr show assoc` file may hold: sites have thousands.
pub const MAX_ASSOCIATIONS: usize = 1_000_000;

/// Whether `input` (opened once, plain or gzip) starts with a sacct `--parsable2` header row
/// (its first non-empty line starts with `JobID|` or `JobIDRaw|`). Nothing is consumed: the
/// same input can then be read by [`read_from`] or as SWF.
pub fn looks_like_sacct(input: &mut swf::Input) -> Result<bool, SacctError> {
    Ok(match input.first_line()? {
        // a first line no sacct header is as long as is binary data
        Some(line) if line.len() < MAX_LINE_BYTES => {
            is_sacct_header(&String::from_utf8_lossy(&line))
        }
        _ => false,
    })
}
