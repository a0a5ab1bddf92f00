//! Job records in, summaries out.
//!
//! A [`JobRecord`] is what happened to one job (submit, start, end, size, estimate, killed); its
//! methods give the per-job measures: wait, response, slowdown and bounded slowdown. [`Summary`]
//! aggregates a run: utilization, processed work, mean and percentiles of each measure, the same
//! per runtime class, and the killed, skipped and rejected counts.
//! (The output files are written by the `scenario` crate's `output` module.)
//!
//! The [`MEASURES`] catalogue names every measure a run reports, with its unit, its place in
//! `summary.json`, how to extract it, how to print it and which way is better; [`console`] lays
//! the catalogue out for the terminal.
//!
//! Warm-up exclusion is explicit ([`Warmup`]); by default every job counts. The closed loop adds
//! [`SessionRecord`]s, [`BatchRecord`]s and [`ClosedLoopSummary`]: throughput, session length and
//! what the users' continue decisions saw.

mod catalogue;
pub mod console;
mod record;
mod seeds;
mod session;
mod summary;

pub use catalogue::{
    Better, Condition, EXTRA_MEASURES, MEASURE_ALIASES, MEASURES, Measure, MeasureInput,
    NODE_MEASURES, NodeMeasure, PolicyUse, PowerUse, SlurmUse, Unit, canonical_name, find_measure,
    measure_names,
};
pub use job::Job;
pub use record::{BOUNDED_SLOWDOWN_THRESHOLD, Failed, JobRecord, Neighbourhood, RuntimeClass};
pub use seeds::{SeedStats, paired, t_quantile_975};
pub use session::{
    BatchDecision, BatchRecord, ClosedLoopBuilder, ClosedLoopSummary, Headroom, SessionEnd,
    SessionRecord,
};
pub use summary::{
    ClassSummary, Counted, InputCounts, Stats, Summary, SummaryBuilder, SummaryOptions, Warmup,
    Window,
};

pub use simtime::Time;
