//! The scenario layer of sitesim: what a run is and how it is carried out, for the command line,
//! scripts and the Python package alike.
//!
//! - [`choices`]: the named choices (processor selection, estimate model, warm-up), each parsed
//!   in one place from a file (serde) or a flag (`FromStr`);
//! - [`machine`] and [`estimates`]: a replay's machine of nodes, memory-bandwidth demands and
//!   runtime-estimate model, resolved and checked;
//! - [`simulation`]: one way to run anything: a [`Simulation`] of a site or of a replay, given
//!   its progress, queue order, outputs and sinks, then executed; used by the command line, the
//!   Python package and every run of a sweep;
//! - [`replay`]: replay of a trace ([`replay::ReplayOptions`], [`replay::ReplayRun`]),
//!   open-loop or with feedback (the sessions it keeps come from `feedback.rs`, through
//!   `fit::sessions::split`);
//! - [`site`]: the site (population) file's schema, read and checked; [`options::site`] applies
//!   the command line's values (the [`options`] tables) on top of it;
//! - [`run`]: a site run and its measures ([`run::SiteRun`]); its records go to the
//!   simulation's sinks ([`sink`]) as they become final, so a long run's memory follows the
//!   jobs in flight;
//! - [`sweep`]: sweep files, their grid of runs ([`sweep::plan`]) and the results table
//!   ([`sweep::results`]);
//! - [`synth`]: Streit's synthetic job sets from a trace;
//! - [`validate`]: the distances of a run's generated workload to its groups' models;
//! - [`fitting`]: the checked options of a fit;
//! - [`models`]: the embedded default user model and model directories;
//! - [`output`]: every output file format behind one interface ([`output::OutputFormat`]);
//!   [`batsim`]: the processors each job held and Batsim's jobs file (for evalys);
//! - [`tables`]: typed readers of those files (jobs.csv, a sweep's results.csv, what the figures
//!   need of summary.json and batsim_jobs.csv), errors naming file, line and column.
//!
//! No clap here: the binary turns its flags into these types, so a value is checked the same way
//! whether it came from a file or a flag.

pub mod batsim;
pub mod choices;
mod error;
pub mod estimates;
mod feedback;
pub mod files;
pub mod fitting;
pub mod limits;
pub mod machine;
pub mod models;
pub mod naming;
pub mod options;
pub mod output;
pub mod policy_usage;
pub mod progress;
pub mod reference;
pub mod replay;
pub mod run;
pub mod simulation;
pub mod sink;
pub mod site;
pub mod slurm;
pub mod slurm_report;
pub mod store;
pub mod sweep;
pub mod synth;
pub mod tables;
pub mod trace;
pub mod validate;

pub use choices::{
    Choice, EstimateChoice, JobSizesChoice, QualityChoice, SelectionChoice, WarmupChoice,
};
pub use error::{Result, ScenarioError};
pub use simulation::{Executed, Outcome, Simulation};

/// `n word` with the word in the plural unless n is 1: `1 week`, `26 weeks`.
pub fn count(n: impl Into<u64>, word: &str) -> String {
    let n = n.into();
    if n == 1 {
        format!("{n} {word}")
    } else {
        format!("{n} {word}s")
    }
}
