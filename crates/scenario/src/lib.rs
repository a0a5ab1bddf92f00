//! The scenario layer of sitesim: how a run is carried out, for the command line, scripts and
//! the Python package alike. What a run is made of (options, site files, choices) and how
//! messages name options is the `config` crate's; sweeps are the `sweep` crate's.
//!
//! - [`Simulation`]: the run builder, the one entry point of a site run or a replay, with its
//!   outputs ([`sink`], [`store`]) and progress ([`progress`]);
//! - [`run`]: a site simulated and measured ([`run::SiteRun`]); used by `run`, `validate` and
//!   every site run of a sweep;
//! - [`replay`]: replay of a trace ([`replay::ReplayRun`]), open-loop or with feedback (the
//!   sessions it keeps come from `feedback.rs`, through `fit::sessions::split`); [`trace`]:
//!   trace files opened and read in either format (SWF, a Slurm accounting dump);
//! - [`synth`]: Streit's synthetic job sets from a trace;
//! - [`validate`]: the distances of a run's generated workload to its groups' models;
//! - [`calibrate`]: the number of users at which a site reaches a target utilisation or mean
//!   wait;
//! - [`fitting`]: the checked options of a fit;
//! - [`output`]: every output file format behind one interface ([`output::OutputFormat`]);
//!   [`batsim`]: the processors each job held and Batsim's jobs file (for evalys);
//!   [`slurm_report`]: the Slurm model's summary section and shares.csv;
//! - [`tables`]: typed readers of those files (jobs.csv, a sweep's results.csv, what the figures
//!   need of summary.json and batsim_jobs.csv), errors naming file, line and column;
//! - [`reference`](mod@reference): the generated pages of the docs' reference.
//!
//! No clap here: the binary turns its flags into these types, so a value is checked the same way
//! whether it came from a file or a flag.

pub mod batsim;
pub mod calibrate;
mod facility;
pub mod failures;
mod feedback;
pub mod fitting;
pub mod node_report;
pub mod outages;
pub mod output;
pub mod policy_usage;
mod power_report;
pub mod progress;
pub mod reference;
pub mod replay;
pub mod requests;
pub mod run;
pub mod simulation;
pub mod sink;
pub mod slurm_report;
pub mod store;
pub mod synth;
pub mod tables;
pub mod trace;
pub mod validate;
pub mod whatif;

pub use simulation::{Executed, Outcome, Simulation};
