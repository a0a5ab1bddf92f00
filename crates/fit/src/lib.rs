//! Derive the user models of site-level simulation from real traces (Shmueli & Feitelson 2009,
//! section III), the way the paper did, with a tool anyone can rerun.
//!
//! [`fit`] reads SWF traces, splits each user's jobs into sessions and batches
//! ([`sessions`]), and builds, per trace and for all traces combined, the empirical distributions
//! a simulated user draws from (a [`usermodel::Model`]): think times and breaks, the response-time ->
//! continue-probability table with its least-squares curve, job sizes and runtimes, size
//! repetitions, batch widths, gaps inside batches, runtime estimates, daily and weekly profiles.
//! [`Fit::files`] renders everything as the files of `models/` (CSV, `summary.toml`,
//! `PROVENANCE.md`); `usermodel::Model::from_files` reads a model back.
//!
//! Combined distributions weight each trace equally by default ([`Weighting::Traces`]: every
//! sample of a trace weighs 1 / that trace's number of samples of its kind), or each job
//! equally ([`Weighting::Jobs`]).

mod continuation;
pub mod jobset;
mod model;
mod output;
pub mod sessions;
mod trace;

use std::path::{Path, PathBuf};

use rayon::prelude::*;

pub use continuation::BIN_EDGES_MINUTES;
pub use model::continue_fit;
pub use output::Scalars;
pub use sessions::{SessionRules, TraceSamples};
pub use trace::{
    Excluded, Job, LocalTime, Sha256Digest, TraceCalendar, TraceJobs, Zone, open_hashed,
    read_records, read_swf, read_trace, trace_calendar, trace_name,
};

use model::Weighted;
use usermodel::Model;

/// How traces are combined.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Weighting {
    /// Each trace weighs the same, whatever its size (the paper's "single representative
    /// distribution" from five traces).
    #[default]
    Traces,
    /// Each job (each sample) weighs the same: large traces dominate.
    Jobs,
}

/// Options of a fit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FitOptions {
    /// Session threshold and longest break.
    pub rules: SessionRules,
    /// How traces are combined.
    pub weighting: Weighting,
}

/// Why a fit failed. Every variant names the trace(s).
#[derive(Debug, thiserror::Error)]
pub enum FitError {
    /// No trace was given.
    #[error("no traces to fit")]
    NoTraces,
    /// The file could not be read.
    #[error("{trace}: cannot read: {error}")]
    Unreadable {
        /// The trace.
        trace: String,
        /// Why.
        error: String,
        /// The I/O error's kind, when an I/O error was why (a missing file: `NotFound`).
        kind: Option<std::io::ErrorKind>,
    },
    /// Malformed SWF.
    #[error(transparent)]
    Swf(#[from] swf::SwfError),
    /// No job lines.
    #[error("{trace}: the trace has no jobs")]
    NoJobs {
        /// The trace.
        trace: String,
    },
    /// Every runtime is unknown.
    #[error("{trace}: none of its {jobs} jobs has a known runtime (field 4 is -1 everywhere)")]
    NoRuntimes {
        /// The trace.
        trace: String,
        /// Jobs read.
        jobs: u64,
    },
    /// Every user ID is unknown.
    #[error(
        "{trace}: none of its {jobs} jobs has a user ID (field 12 is -1 everywhere); sessions, batches and think times need them"
    )]
    NoUsers {
        /// The trace.
        trace: String,
        /// Jobs read.
        jobs: u64,
    },
    /// No job passed the checks.
    #[error(
        "{trace}: none of its {jobs} jobs is usable (each lacks a submit time, runtime, wait time, size or user)"
    )]
    NothingUsable {
        /// The trace.
        trace: String,
        /// Jobs read.
        jobs: u64,
    },
    /// A distribution the user model needs has no samples.
    #[error("{traces}: no {what}; the model cannot be built")]
    EmptyDistribution {
        /// The trace(s).
        traces: String,
        /// Which distribution.
        what: &'static str,
    },
    /// Two traces would write to the same directory.
    #[error("two traces are named {name}; give each trace once")]
    DuplicateName {
        /// The short name.
        name: String,
    },
}

/// One trace's part of a fit.
#[derive(Debug, Clone)]
pub struct TraceFit {
    /// The trace as read (its jobs are dropped after analysis to save memory).
    pub trace: TraceJobs,
    /// Its raw samples.
    pub samples: TraceSamples,
    /// Its own model.
    pub model: Model,
    /// Its scalars.
    pub scalars: Scalars,
}

/// The result of a fit: per-trace models and the combined one.
#[derive(Debug, Clone)]
pub struct Fit {
    /// The options used.
    pub options: FitOptions,
    /// Per trace, in the order given.
    pub traces: Vec<TraceFit>,
    /// All traces combined.
    pub combined: Model,
    /// The combined scalars.
    pub combined_scalars: Scalars,
    /// Warnings to show (each names its trace).
    pub warnings: Vec<String>,
}

/// Fits the models of the SWF traces at `paths` (read in parallel).
pub fn fit(paths: &[PathBuf], options: &FitOptions) -> Result<Fit, FitError> {
    fit_with(paths, options, &read_trace)
}

/// A function that reads one trace file for a fit (SWF by [`read_trace`]; other formats by
/// converting their jobs to SWF records and calling [`trace::read_records`]).
pub type TraceReaderFn<'a> = dyn Fn(&Path) -> Result<TraceJobs, FitError> + Sync + 'a;

/// [`fit`] with the traces read by `read`.
pub fn fit_with(
    paths: &[PathBuf],
    options: &FitOptions,
    read: &TraceReaderFn<'_>,
) -> Result<Fit, FitError> {
    if paths.is_empty() {
        return Err(FitError::NoTraces);
    }
    let mut names: Vec<String> = paths.iter().map(|p| trace_name(p)).collect();
    names.sort();
    if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
        return Err(FitError::DuplicateName { name: w[0].clone() });
    }
    let analyzed: Vec<(TraceJobs, TraceSamples)> = paths
        .par_iter()
        .map(|path| analyze_path(path, &options.rules, read))
        .collect::<Result<_, _>>()?;

    let mut traces = Vec::with_capacity(analyzed.len());
    let mut warnings = Vec::new();
    for (trace, samples) in analyzed {
        let part = Weighted {
            samples: &samples,
            weighting: Weighting::Traces,
        };
        let model = model::build(&[part], &trace.path)?;
        let scalars = Scalars::of_trace(&trace, &samples, &model);
        warnings.extend(trace.warnings.iter().cloned());
        traces.push(TraceFit {
            trace,
            samples,
            model,
            scalars,
        });
    }
    let parts: Vec<Weighted<'_>> = traces
        .iter()
        .map(|t| Weighted {
            samples: &t.samples,
            weighting: options.weighting,
        })
        .collect();
    let label = traces
        .iter()
        .map(|t| t.trace.name.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    let combined = model::build(&parts, &label)?;
    let combined_scalars = Scalars::combine(&traces, &combined, options.weighting);
    Ok(Fit {
        options: *options,
        traces,
        combined,
        combined_scalars,
        warnings,
    })
}

fn analyze_path(
    path: &Path,
    rules: &SessionRules,
    read: &TraceReaderFn<'_>,
) -> Result<(TraceJobs, TraceSamples), FitError> {
    let mut trace = read(path)?;
    let samples = sessions::analyze(&trace, rules);
    trace.jobs = Vec::new();
    Ok((trace, samples))
}
