//! Where episodes come from: a trace prepared once (shared by every environment of a vector), or
//! a site whose population is drawn anew for each episode's seed.

use std::collections::HashSet;
use std::sync::Arc;

use cluster::SchedulerSpec;
use config::replay::ReplayOptions;
use config::site::Site;
use engine::{FeedbackOptions, FeedbackSession, Job, Time};

use crate::{GymError, Result};

/// The kind of episodes a [`Source`] gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// A trace replayed open loop.
    Replay,
    /// A trace's sessions replayed with feedback (Zakay & Feitelson, MASCOTS 2014).
    Feedback,
    /// A site of simulated users (the closed loop).
    Site,
}

/// A prepared trace.
#[derive(Debug)]
pub(crate) struct Trace {
    /// Its jobs as `sitesim replay` submits them, in that order.
    pub(crate) jobs: Vec<Job>,
    /// Processors in the machine.
    pub(crate) processors: u32,
    /// Jobs the log says were stopped at their limit (marked killed again, as the replay does).
    pub(crate) stopped_at_limit: HashSet<i64>,
    /// Its local calendar, if the header has one.
    pub(crate) calendar: Option<fit::TraceCalendar>,
    /// With feedback: the sessions, the independent jobs and the rules.
    pub(crate) feedback: Option<(Vec<FeedbackSession>, Vec<Job>, FeedbackOptions)>,
}

/// A site and the model its `models = "embedded"` means.
#[derive(Debug)]
pub(crate) struct SiteSource {
    pub(crate) site: Site,
    pub(crate) model: Arc<usermodel::Model>,
}

/// Where an environment's episodes come from, and the scheduler's rule they run under. Cheap to
/// clone (the data is shared).
#[derive(Debug, Clone)]
pub struct Source {
    pub(crate) kind: SourceKind,
    pub(crate) scheduler: SchedulerSpec,
    pub(crate) trace: Option<Arc<Trace>>,
    pub(crate) site: Option<Arc<SiteSource>>,
    /// A machine of node types (a replay's slurm.conf nodes, a site's `[[nodes]]`): the
    /// machine-wide amounts of every resource kind and the nodes.
    pub(crate) pool: Option<(cluster::Extra, cluster::PoolSpec)>,
}

/// Refuses a scheduler whose rule the environment does not drive: only rules that keep no plan
/// across passes (none, EASY, EASY-SJBF) decide the same whatever happened at earlier passes'
/// orders, so that an agent's order at one pass cannot corrupt the next.
pub(crate) fn check_rule(spec: &SchedulerSpec, keyword: &str) -> Result<()> {
    let rule = spec.backfill().name;
    if !matches!(rule, "none" | "easy" | "easy-sjbf") {
        return Err(GymError::Invalid(format!(
            "{keyword}={:?}: its backfilling rule {rule:?} is not supported by the environment: choose a scheduler whose rule is none, easy or easy-sjbf (fcfs, easy, easy-sjbf, easy-plus, easy-plus-plus, ...): conservative backfilling, dynP and the Slurm model plan the whole queue at every pass",
            spec.label()
        )));
    }
    Ok(())
}

impl Source {
    /// A trace replayed open loop under `scheduler`'s rule (its queue order is the agent's),
    /// prepared as `sitesim replay` prepares it with `options`. A machine of nodes and replay
    /// with feedback are refused here (feedback: [`Source::feedback`]).
    pub fn replay(scheduler: SchedulerSpec, options: &ReplayOptions) -> Result<Source> {
        check_rule(&scheduler, "scheduler")?;
        if options.feedback {
            return Err(GymError::Invalid(
                "feedback=True: use the feedback environment (sitesim/ReplayFeedback-v0)".into(),
            ));
        }
        Source::trace(SourceKind::Replay, scheduler, options)
    }

    /// A trace's sessions replayed with feedback under `scheduler`'s rule, as `sitesim replay
    /// --feedback` builds them from `options` (`feedback_abandon` too).
    pub fn feedback(scheduler: SchedulerSpec, options: &ReplayOptions) -> Result<Source> {
        check_rule(&scheduler, "scheduler")?;
        let mut options = options.clone();
        options.feedback = true;
        Source::trace(SourceKind::Feedback, scheduler, &options)
    }

    fn trace(
        kind: SourceKind,
        scheduler: SchedulerSpec,
        options: &ReplayOptions,
    ) -> Result<Source> {
        if options.fairness {
            return Err(GymError::Invalid(
                "fairness=True: the environment does not compute fair start times".into(),
            ));
        }
        if options.outages.is_some() {
            return Err(GymError::Invalid(
                "outages: the environment keeps every processor in service; leave outages out for an environment".into(),
            ));
        }
        let pool = options.machine.nodes.as_ref().map(|nodes| {
            let kinds: Vec<String> = (options.input.resources.iter())
                .map(|(name, _)| name.clone())
                .collect();
            (options.input.resource_amounts(), nodes.pool_spec(&kinds))
        });
        let prepared = scenario::replay::prepare(options)?;
        if !prepared.machine.extra.0.is_empty() {
            return Err(GymError::Invalid(
                "resources: the environment models processors only, not other resources".into(),
            ));
        }
        if prepared.machine.nodes.is_some() || prepared.machine.sharing.is_some() {
            return Err(GymError::Invalid(
                "node_processors: the environment models processors only, not a machine of nodes"
                    .into(),
            ));
        }
        let feedback = if kind == SourceKind::Feedback {
            Some(scenario::replay::feedback_workload(options, &prepared)?)
        } else {
            None
        };
        let calendar = fit::trace_calendar(&prepared.replay.header);
        let trace = Trace {
            processors: prepared.replay.processors,
            jobs: prepared.replay.jobs,
            stopped_at_limit: prepared.stopped_at_limit,
            calendar,
            feedback,
        };
        if trace.jobs.is_empty() {
            return Err(GymError::Invalid(format!(
                "trace={}: no job to replay",
                options.trace.display()
            )));
        }
        Ok(Source {
            kind,
            scheduler,
            trace: Some(Arc::new(trace)),
            site: None,
            pool,
        })
    }

    /// A site of simulated users under its own scheduler's rule (the site file's `[scheduler]`,
    /// or the options that replaced it); each episode draws its users from the episode's seed.
    pub fn site(site: Site, model: Arc<usermodel::Model>) -> Result<Source> {
        let scheduler = scenario::run::site_scheduler(&site)?;
        check_rule(&scheduler, "scheduler")?;
        // Checked once here: the population, the machine (no nodes, no sharing).
        let (_, cluster, sharing) = scenario::run::prepare_site(&site, &model, None)?;
        if cluster.nodes().is_some() || sharing.is_some() {
            return Err(GymError::Invalid(
                "node_processors: the environment models processors only, not a machine of nodes"
                    .into(),
            ));
        }
        if site.file.power.is_some() {
            return Err(GymError::Invalid(format!(
                "{}: power: the environment neither meters power nor applies a power cap or delay; leave [power] out of the site for an environment",
                site.origin
            )));
        }
        if !site.file.outages.is_empty() {
            return Err(GymError::Invalid(format!(
                "{}: outages: the environment keeps every processor in service; leave [[outages]] out of the site for an environment",
                site.origin
            )));
        }
        if site.file.failures.is_some() {
            return Err(GymError::Invalid(format!(
                "{}: failures: the environment's nodes never fail; leave [failures] out of the site for an environment",
                site.origin
            )));
        }
        let pool = cluster.pool().map(|p| (cluster.extra(), p.spec().clone()));
        Ok(Source {
            pool,
            kind: SourceKind::Site,
            scheduler,
            trace: None,
            site: Some(Arc::new(SiteSource { site, model })),
        })
    }

    /// Jobs given directly (in submission order: submit times never decrease) on a machine of
    /// `processors`, replayed open loop: for workloads built in code, and for tests.
    pub fn from_jobs(scheduler: SchedulerSpec, processors: u32, jobs: Vec<Job>) -> Result<Source> {
        check_rule(&scheduler, "scheduler")?;
        if jobs.is_empty() {
            return Err(GymError::Invalid("no job to replay".into()));
        }
        if jobs.windows(2).any(|w| w[1].submit < w[0].submit) {
            return Err(GymError::Invalid(
                "jobs must come in submission order (submit times never decrease)".into(),
            ));
        }
        Ok(Source {
            kind: SourceKind::Replay,
            scheduler,
            trace: Some(Arc::new(Trace {
                jobs,
                processors,
                stopped_at_limit: HashSet::new(),
                calendar: None,
                feedback: None,
            })),
            site: None,
            pool: None,
        })
    }

    /// The kind of episodes.
    pub fn kind(&self) -> SourceKind {
        self.kind
    }

    /// The scheduler whose rule runs the episodes.
    pub fn scheduler(&self) -> &SchedulerSpec {
        &self.scheduler
    }

    /// Processors in the machine.
    pub fn processors(&self) -> u32 {
        match (&self.trace, &self.site) {
            (Some(trace), _) => trace.processors,
            (None, Some(site)) => site.site.file.site.processors,
            (None, None) => 0,
        }
    }

    /// Jobs in the trace (0 for a site).
    pub fn jobs(&self) -> usize {
        self.trace.as_ref().map_or(0, |t| t.jobs.len())
    }

    /// The site's seed (`[run] seed`), for a site.
    pub(crate) fn site_seed(&self) -> Option<u64> {
        self.site.as_ref().map(|s| s.site.file.run.seed)
    }

    /// The logged submit period of the trace: first and last submit, seconds.
    pub(crate) fn trace_span(&self) -> (Time, Time) {
        self.trace.as_ref().map_or((0, 0), |t| {
            (
                t.jobs.first().map_or(0, |j| j.submit),
                t.jobs.last().map_or(0, |j| j.submit),
            )
        })
    }
}
