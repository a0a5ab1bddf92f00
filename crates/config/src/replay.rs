//! What a replay of a trace is made of ([`ReplayOptions`]: the trace, how it is read, the machine,
//! the estimates, the warm-up, feedback and shaking) and what can be checked of it before the
//! trace is read. The scenario layer carries a replay out; the `[replay]` table of a sweep
//! ([`crate::replay_table`]) and the option tables fill it.

use std::path::PathBuf;

use crate::choices::WarmupChoice;
use crate::error::{Result, ensure};
use crate::estimates::EstimateOptions;
use crate::machine::MachineOptions;
use crate::naming::{key, key_value};

/// How to replay a trace (the command line's `replay` options).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// The trace: an SWF file or a Slurm accounting dump (sacct --parsable2), plain or
    /// gzip-compressed.
    pub trace: PathBuf,
    /// How the trace is read (its format; a sacct dump's zone, wait start, requeues, unit,
    /// window).
    pub input: crate::trace::TraceOptions,
    /// Machine size in processors; default: the header's MaxProcs, else MaxNodes.
    pub processors: Option<u32>,
    /// Replay only the first N jobs in submission order.
    pub first_jobs: Option<usize>,
    /// Multiply every arrival time (relative to the first) by this factor (> 0).
    pub load_factor: f64,
    /// Where runtime estimates come from.
    pub estimates: EstimateOptions,
    /// The machine of nodes and the memory-bandwidth model.
    pub machine: MachineOptions,
    /// Which jobs the averages leave out.
    pub warmup: WarmupChoice,
    /// Also compute every job's fair start time (for unfairness).
    pub fairness: bool,
    /// Replay with feedback (Zakay & Feitelson, MASCOTS 2014): a batch that followed earlier
    /// work is submitted its logged think time after that work's simulated end.
    pub feedback: bool,
    /// With `feedback`: users abandon a session after a batch with the paper's continue
    /// probability a / (b r + 1) (paper 000, section III-B.1; a and b the population file's
    /// defaults, `continue_a` and `continue_b`), drawn with the estimate seed.
    pub feedback_abandon: bool,
    /// Input shaking (Tsafrir's thesis, section 6.5.5 / Tsafrir, Ouaknine & Feitelson 2007):
    /// move the arrival of 10 % of the jobs, chosen at random, by u seconds earlier or later, u
    /// uniform in [0, 60], drawn with the seed of `estimates.seed`. Runs with different seeds are
    /// equally representative versions of the log, so their spread shows how sensitive a
    /// result is to negligible changes of the input.
    pub shake: bool,
    /// A file holding a `[power]` table ([`crate::power`]): the run is metered for energy,
    /// peak power, carbon and cost. `None`: no power model (no `power` section anywhere).
    pub power: Option<PathBuf>,
    /// A file of maintenance windows and drains ([`crate::outages::ReplayOutages`]: the
    /// calendar time of the trace's time 0 and `[[outages]]` as a site file's). `None`: every
    /// processor is always in service.
    pub outages: Option<PathBuf>,
    /// Slurm's node events (`sacctmgr --parsable2 show events`, with `TRES`): each node's down
    /// and drain periods, out of service ([`crate::outages::of_slurm`]).
    pub events: Option<PathBuf>,
    /// Slurm's reservations (`scontrol show reservation`, or `sacctmgr --parsable2 show
    /// reservation`): the maintenance ones, as windows.
    pub reservations: Option<PathBuf>,
}

impl ReplayOptions {
    /// A replay of `trace` with every other option at its default (`sitesim replay TRACE`): the
    /// trace's own machine size, jobs and estimates, open loop, no shaking, load factor 1.
    pub fn new(trace: impl Into<PathBuf>) -> ReplayOptions {
        ReplayOptions {
            trace: trace.into(),
            input: Default::default(),
            processors: None,
            first_jobs: None,
            load_factor: 1.0,
            estimates: Default::default(),
            machine: Default::default(),
            warmup: Default::default(),
            fairness: false,
            feedback: false,
            feedback_abandon: false,
            shake: false,
            power: None,
            outages: None,
            events: None,
            reservations: None,
        }
    }

    /// Checks what can be checked before the trace is read: the load factor, the options that
    /// need or exclude others, `first_jobs`, the estimate and machine options, and that the
    /// trace is a file. A sweep checks every configuration so before its first run.
    pub fn check(&self) -> Result<()> {
        ensure!(
            !self.trace.as_os_str().is_empty(),
            "{} is empty: give a trace file",
            key("trace")
        );
        ensure!(
            !self.trace.is_dir(),
            "{}: {} is a directory, not a trace file",
            key("trace"),
            self.trace.display()
        );
        ensure!(
            self.load_factor.is_finite() && self.load_factor > 0.0,
            "{} must be a number > 0, got {}",
            key("load_factor"),
            self.load_factor
        );
        ensure!(
            !self.feedback_abandon || self.feedback,
            "{} needs {}: users abandon sessions only in replay with feedback",
            key("feedback_abandon"),
            key("feedback")
        );
        ensure!(
            !self.feedback || self.load_factor == 1.0,
            "{} cannot be combined with {}: with feedback, arrivals follow the simulated ends and the logged think times, not scaled logged times",
            key("load_factor"),
            key("feedback")
        );
        ensure!(
            !(self.shake && self.feedback),
            "{} cannot be combined with {}: replay with feedback derives the sessions from the logged times",
            key("shake"),
            key("feedback")
        );
        if let Some(processors) = self.processors {
            ensure!(
                processors <= crate::limits::MAX_PROCESSORS,
                "{} must be at most {} (docs/reference/limits.md)",
                key_value("processors", processors),
                crate::limits::MAX_PROCESSORS
            );
        }
        ensure!(
            self.first_jobs != Some(0),
            "{}: replay at least one job",
            key_value("first_jobs", 0)
        );
        crate::estimates::check(&self.estimates)?;
        crate::machine::apply(&self.machine, self.estimates.seed, &mut [])?;
        Ok(())
    }
}
