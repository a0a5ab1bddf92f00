//! Open-loop replay of an SWF trace (`sitesim replay`): read the trace, optionally replace its
//! estimates and put it on a machine of nodes, simulate it under a scheduler, and describe it.
//!
//! [`simulate_replay`] returns the jobs as they ran; the caller computes the summary with
//! [`ReplayRun::summary_options`] (the command line writes jobs.csv meanwhile) and gets what
//! summary.json holds from [`ReplayRun::report`].

use std::path::PathBuf;

use cluster::{Cluster, SchedulerSpec};
use engine::Replay;
use metrics::{InputCounts, JobRecord, Summary, SummaryOptions};
use serde::Serialize;

use crate::choices::WarmupChoice;
use crate::error::{Result, ScenarioError, ensure, invalid};
use crate::estimates::EstimateOptions;
use crate::machine::{Machine, MachineOptions};
use crate::policy_usage::PolicyUsageReport;

/// How to replay a trace (the command line's `replay` options).
#[derive(Debug, Clone, PartialEq)]
pub struct ReplayOptions {
    /// The trace: an SWF file, plain or gzip-compressed.
    pub trace: PathBuf,
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
}

/// A replayed trace.
#[derive(Debug)]
pub struct ReplayRun {
    /// The options it ran with.
    pub options: ReplayOptions,
    /// The scheduler.
    pub scheduler: SchedulerSpec,
    /// The jobs as they ran.
    pub records: Vec<JobRecord>,
    /// What was read and skipped.
    pub input: InputCounts,
    /// Processors in the machine.
    pub processors: u32,
    /// The estimate model that replaced the trace's estimates, described.
    pub estimates: Option<String>,
    /// The machine of nodes, if any.
    pub machine: Machine,
    /// dynP's policy usage.
    pub policy_usage: Option<PolicyUsageReport>,
}

/// Replays `options.trace` under `scheduler`.
pub fn simulate_replay(scheduler: SchedulerSpec, options: &ReplayOptions) -> Result<ReplayRun> {
    ensure!(
        options.load_factor.is_finite() && options.load_factor > 0.0,
        "--load-factor must be a number > 0, got {}",
        options.load_factor
    );
    let mut replay = Replay::read(&options.trace, options.processors)?;
    if let Some(n) = options.first_jobs {
        ensure!(n > 0, "--first-jobs 0: replay at least one job");
        replay.jobs.truncate(n);
    }
    replay.scale_arrivals(options.load_factor);
    let estimates = crate::estimates::apply(&options.estimates, &mut replay.jobs)?;
    let machine =
        crate::machine::apply(&options.machine, options.estimates.seed, &mut replay.jobs)?;
    tracing::info!(
        jobs = replay.jobs.len(),
        processors = replay.processors,
        "trace read"
    );
    let processors = replay.processors;
    let input = replay.input;
    let mut cluster = match machine.nodes {
        None => Cluster::new(processors, scheduler.build()),
        Some(nodes) => Cluster::with_nodes(processors, scheduler.build(), nodes)
            .map_err(|e| invalid!("--scheduler {}: {e}", scheduler.label()))?,
    };
    let sim = engine::SimOptions {
        sharing: machine.sharing,
    };
    let mut records =
        engine::simulate_with(&mut cluster, &mut replay, &mut (), &sim).map_err(|source| {
            ScenarioError::Engine {
                context: format!("replay of {} failed", options.trace.display()),
                source,
            }
        })?;
    if options.fairness {
        engine::add_fair_start_times(processors, &mut records).map_err(|source| {
            ScenarioError::Engine {
                context: "the fair-start simulation failed".into(),
                source,
            }
        })?;
    }
    let policy_usage = cluster.policy_usage().map(PolicyUsageReport::new);
    Ok(ReplayRun {
        options: options.clone(),
        scheduler,
        records,
        input,
        processors,
        estimates,
        machine,
        policy_usage,
    })
}

/// What summary.json holds for a replay.
#[derive(Debug, Serialize)]
pub struct ReplayReport<'a> {
    /// `sitesim`.
    pub tool: &'static str,
    /// The version that wrote it.
    pub version: &'static str,
    /// `replay`.
    pub command: &'static str,
    /// The trace's path.
    pub trace: String,
    /// The scheduler's label.
    pub scheduler: String,
    /// The arrival-time factor.
    pub load_factor: f64,
    /// The estimate model that replaced the trace's estimates, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub estimates: Option<&'a str>,
    /// The machine of nodes and the sharing model, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub machine: Option<&'a str>,
    /// Only the first N jobs were replayed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_jobs: Option<usize>,
    /// The job measures.
    pub summary: &'a Summary,
    /// dynP's policy usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_usage: Option<&'a PolicyUsageReport>,
}

impl ReplayRun {
    /// How the summary is computed (machine size and warm-up exclusion).
    pub fn summary_options(&self) -> SummaryOptions {
        SummaryOptions {
            processors: self.processors,
            warmup: self.options.warmup.warmup(),
        }
    }

    /// The summary of the jobs.
    pub fn summary(&self) -> Summary {
        Summary::compute(&self.records, &self.summary_options(), self.input)
    }

    /// One line naming the trace, scheduler, machine and options.
    pub fn title(&self) -> String {
        let o = &self.options;
        let load = if o.load_factor == 1.0 {
            String::new()
        } else {
            format!(", arrival times x {}", o.load_factor)
        };
        let with_estimates = self
            .estimates
            .as_ref()
            .map_or(String::new(), |e| format!(", estimates: {e}"));
        let with_machine = self
            .machine
            .description
            .as_ref()
            .map_or(String::new(), |m| format!(", {m}"));
        let first = o
            .first_jobs
            .map_or(String::new(), |n| format!(", first {n} jobs"));
        format!(
            "replay of {} under {} on {} processors{first}{with_machine}{load}{with_estimates}",
            o.trace.display(),
            self.scheduler.label(),
            self.processors
        )
    }

    /// What summary.json holds, with `summary` computed from this run.
    pub fn report<'a>(&'a self, summary: &'a Summary) -> ReplayReport<'a> {
        ReplayReport {
            tool: "sitesim",
            version: env!("CARGO_PKG_VERSION"),
            command: "replay",
            trace: self.options.trace.display().to_string(),
            scheduler: self.scheduler.label(),
            load_factor: self.options.load_factor,
            estimates: self.estimates.as_deref(),
            machine: self.machine.description.as_deref(),
            first_jobs: self.options.first_jobs,
            summary,
            policy_usage: self.policy_usage.as_ref(),
        }
    }
}
