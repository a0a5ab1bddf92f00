//! A site-level run: simulate a site (its population, machine and scheduler) and measure it.
//!
//! [`simulate`] is what `sitesim run`, `validate` and every run of a sweep call; [`SiteRun`]
//! holds everything measured, [`SiteRun::report`] what summary.json holds, and [`SiteRun::swf`]
//! the generated workload.

use std::path::Path;
use std::sync::Arc;

use cluster::{Cluster, QueueOrder, SchedulerSpec};
use engine::{ClosedRun, ClosedSink};
use metrics::{
    BatchRecord, ClosedLoopBuilder, ClosedLoopSummary, JobRecord, SessionRecord, Summary,
    SummaryBuilder, SummaryOptions, Warmup, Window,
};
use serde::Serialize;
use users::{Population, Submission};

use crate::error::{Result, ScenarioError, ensure, invalid};
use crate::policy_usage::PolicyUsageReport;
use crate::site::{SchedulerOverrides, Site, SiteFile};

/// Values given on top of a site file (the command line's `--users`, `--weeks`, `--seed`,
/// `--processors`, `--scheduler` and the scheduler's parameters): the same fields, checked on
/// the same path as the file's own values.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteOverrides {
    /// Users of the site's only group.
    pub users: Option<u32>,
    /// Simulated weeks.
    pub weeks: Option<u32>,
    /// The run's seed.
    pub seed: Option<u64>,
    /// Processors in the machine.
    pub processors: Option<u32>,
    /// The scheduling policy (replaces the file's `[scheduler]` and its parameters).
    pub policy: Option<String>,
    /// The scheduler's parameters.
    pub scheduler: SchedulerOverrides,
}

/// The site a file (or the embedded default, when `config` is `None`) and the overrides
/// describe.
pub fn resolve(config: Option<&Path>, overrides: &SiteOverrides) -> Result<Site> {
    let site = match config {
        Some(path) => Site::load(path)?,
        None => Site::default_site()?,
    };
    resolve_site(site, overrides)
}

/// `site` with the overrides applied (what [`resolve`] does once the file is read).
pub fn resolve_site(mut site: Site, overrides: &SiteOverrides) -> Result<Site> {
    let file = &mut site.file;
    if let Some(users) = overrides.users {
        ensure!(
            file.groups.len() == 1,
            "--users needs a population with one group; {} has {} (set each group's users in the file)",
            site.origin,
            file.groups.len()
        );
        file.groups[0].users = users;
    }
    if let Some(weeks) = overrides.weeks {
        file.run.weeks = weeks;
    }
    if let Some(seed) = overrides.seed {
        file.run.seed = seed;
    }
    if let Some(processors) = overrides.processors {
        file.site.processors = processors;
    }
    file.scheduler
        .override_with(overrides.policy.as_deref(), &overrides.scheduler);
    Ok(site)
}

/// A simulated site and everything measured in it.
pub struct SiteRun {
    /// The resolved site (file plus command-line overrides).
    pub site: Site,
    /// The scheduler.
    pub scheduler: SchedulerSpec,
    /// Jobs, sessions and submissions (empty after [`simulate_streamed`], which wrote them).
    pub run: ClosedRun,
    /// Group index of each user.
    pub user_groups: Vec<usize>,
    /// Job measures over the measurement window.
    pub summary: Summary,
    /// Throughput and sessions over the measurement window.
    pub closed: ClosedLoopSummary,
    /// dynP's policy usage (dynP schedulers only).
    pub policy_usage: Option<PolicyUsageReport>,
    /// Each group's own measures, over the same window (sites of more than one group only).
    pub groups: Vec<GroupRun>,
    /// On a machine of nodes, when the run kept its records: the processors each record held
    /// as the cluster placed them (same order as `run.records`; batsim_jobs.csv shows them).
    pub placements: Option<Vec<crate::batsim::Intervals>>,
}

/// One group's share of a site-level run: its jobs, sessions and batches measured alone (the
/// same window and warm-up as the whole run's; utilization is the group's share of the machine).
#[derive(Debug, Clone, Serialize)]
pub struct GroupRun {
    /// The group's name.
    pub name: String,
    /// Its users.
    pub users: u64,
    /// Its throughput and sessions.
    pub closed_loop: ClosedLoopSummary,
    /// Its job measures.
    pub summary: Summary,
}

/// What a run measures beyond the always-computed summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fairness {
    /// Compute every job's fair start time (one more, conservative, simulation of the generated
    /// jobs) so the summary reports unfairness.
    Measure,
    /// Leave unfairness out (sweeps: it would double their cost).
    Skip,
}

/// Processors of the uncontended machine [`measure_headroom`] simulates: more than any site's
/// users can ever occupy at once, so no job waits.
pub const UNCONTENDED_PROCESSORS: u32 = 1 << 30;

/// The machine a site is simulated on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Capacity {
    /// The site's machine (its processors, nodes and sharing model).
    Site,
    /// [`UNCONTENDED_PROCESSORS`] counted processors, no nodes, no sharing: nothing waits and
    /// nothing is stretched. The users still draw job sizes for the site's machine.
    Uncontended,
}

/// Simulates `site`; `default_model` is what `models = "embedded"` means.
pub fn simulate(
    site: Site,
    default_model: &Arc<usermodel::Model>,
    fairness: Fairness,
) -> Result<SiteRun> {
    simulate_observed(site, default_model, fairness, &mut crate::progress::quiet)
}

/// [`simulate`], reporting the simulated time to `progress` as it goes (every few thousand
/// scheduling passes; `end` is the horizon).
pub fn simulate_observed(
    site: Site,
    default_model: &Arc<usermodel::Model>,
    fairness: Fairness,
    progress: crate::progress::ProgressFn<'_>,
) -> Result<SiteRun> {
    simulate_site(site, default_model, fairness, None, progress, Keep::Whole)
}

/// [`simulate_observed`] writing the run's jobs.csv, sessions.csv and batches.csv into `files`
/// (if given) as the records become final, instead of keeping them: the returned run's `run`
/// is empty (everything else is measured as by [`simulate`], bit for bit). Its memory follows
/// the jobs in flight, not the length of the run. The files are complete only when it returns
/// `Ok`. Fair start times need the whole run, so this never measures them.
pub fn simulate_streamed(
    site: Site,
    default_model: &Arc<usermodel::Model>,
    progress: crate::progress::ProgressFn<'_>,
    files: Option<crate::stream::RunFiles<'_>>,
) -> Result<SiteRun> {
    let keep = match files {
        Some(files) => Keep::Files(files),
        None => Keep::Nothing,
    };
    simulate_site(site, default_model, Fairness::Skip, None, progress, keep)
}

/// What a simulation keeps of its jobs, sessions and batches besides their measures.
enum Keep<'a> {
    /// Everything, in the run's `ClosedRun`.
    Whole,
    /// Nothing: their tables are written to these files as they come.
    Files(crate::stream::RunFiles<'a>),
    /// Nothing at all.
    Nothing,
}

/// [`simulate`] with the scheduler's queue order replaced by `order` (its backfilling rule
/// kept): a priority function from outside the policy registry, such as one written in Python.
pub fn simulate_ordered(
    site: Site,
    default_model: &Arc<usermodel::Model>,
    fairness: Fairness,
    order: Box<dyn QueueOrder>,
) -> Result<SiteRun> {
    simulate_site(
        site,
        default_model,
        fairness,
        Some(order),
        &mut crate::progress::quiet,
        Keep::Whole,
    )
}

/// The site's own scheduler (its queue order replaced by `order` if given) on the site's
/// machine.
fn simulate_site(
    site: Site,
    default_model: &Arc<usermodel::Model>,
    fairness: Fairness,
    order: Option<Box<dyn QueueOrder>>,
    progress: crate::progress::ProgressFn<'_>,
    keep: Keep<'_>,
) -> Result<SiteRun> {
    let scheduler = site
        .file
        .scheduler
        .spec()
        .map_err(|e| invalid!("{}: {}", site.origin, e.marked()))?;
    simulate_on(
        site,
        default_model,
        fairness,
        scheduler,
        Capacity::Site,
        order,
        progress,
        "simulating",
        keep,
    )
}

/// Checks everything [`simulate`] would check, without simulating: the scheduler, the calendar,
/// every group and its model, the population against the machine, and the machine of nodes.
/// A sweep calls it for every configuration before its first run, so a bad value stops the
/// sweep before anything is written.
pub fn check(site: &Site, default_model: &Arc<usermodel::Model>) -> Result<()> {
    let scheduler = site
        .file
        .scheduler
        .spec()
        .map_err(|e| invalid!("{}: {}", site.origin, e.marked()))?;
    prepare(site, default_model, scheduler, Capacity::Site, None).map(|_| ())
}

/// What a simulation starts from: the population, and the cluster with its sharing model, all
/// checked. [`check`] stops here; [`simulate_on`] runs them.
struct Prepared {
    population: Population,
    cluster: Cluster,
    sharing: Option<engine::MemoryBandwidth>,
}

fn prepare(
    site: &Site,
    default_model: &Arc<usermodel::Model>,
    scheduler: SchedulerSpec,
    capacity: Capacity,
    order: Option<Box<dyn QueueOrder>>,
) -> Result<Prepared> {
    let mut built = scheduler.build();
    if let Some(order) = order {
        built.order = order;
    }
    let file = &site.file;
    let calendar = site.calendar()?;
    let groups = site.groups(default_model)?;
    let processors = file.site.processors;
    let horizon = i64::from(file.run.weeks) * users::cycle::WEEK;
    let population = Population::new(groups, file.run.seed, calendar, horizon, processors)
        .map_err(|e| invalid!("{}: {e}", site.origin))?;
    let (nodes, sharing) = site.machine(population.groups())?;
    let (cluster, sharing) = match (capacity, nodes) {
        (Capacity::Uncontended, _) => (Cluster::new(UNCONTENDED_PROCESSORS, built), None),
        (Capacity::Site, None) => (Cluster::new(processors, built), sharing),
        (Capacity::Site, Some(nodes)) => (
            Cluster::with_nodes(processors, built, nodes)
                .map_err(|e| invalid!("{}: {e}", site.origin))?,
            sharing,
        ),
    };
    Ok(Prepared {
        population,
        cluster,
        sharing,
    })
}

/// Measures the run's headroom (paper-independent; issue "does user-aware scheduling pay?"):
/// simulates the same site and seed once on an uncontended machine (FCFS; nothing waits) and,
/// unless the run is EASY, once under EASY, and stores [`metrics::Headroom`] in
/// `run.closed.headroom`. The users' draws are the same in all three runs (common random
/// numbers), so the differences are the scheduler's and the machine's alone.
pub fn measure_headroom(run: &mut SiteRun, default_model: &Arc<usermodel::Model>) -> Result<()> {
    measure_headroom_observed(run, default_model, &mut crate::progress::quiet)
}

/// [`measure_headroom`], reporting the progress of its simulations to `progress` (their
/// [`crate::progress::Tick::what`] is `headroom: uncontended machine` or `headroom: EASY`).
pub fn measure_headroom_observed(
    run: &mut SiteRun,
    default_model: &Arc<usermodel::Model>,
    progress: crate::progress::ProgressFn<'_>,
) -> Result<()> {
    let throughput = |r: &SiteRun| r.closed.submitted_per_hour;
    let spec = |name: &str| {
        SchedulerSpec::new(name, cluster::PolicyParams::default()).map_err(|e| invalid!("{e}"))
    };
    let uncontended = simulate_on(
        run.site.clone(),
        default_model,
        Fairness::Skip,
        spec("fcfs")?,
        Capacity::Uncontended,
        None,
        &mut *progress,
        "headroom: uncontended machine",
        Keep::Nothing,
    )?;
    let easy = if run.scheduler == spec("easy")? {
        throughput(run)
    } else {
        throughput(&simulate_on(
            run.site.clone(),
            default_model,
            Fairness::Skip,
            spec("easy")?,
            Capacity::Site,
            None,
            &mut *progress,
            "headroom: EASY",
            Keep::Nothing,
        )?)
    };
    run.closed.headroom = Some(metrics::Headroom::new(
        throughput(run),
        easy,
        throughput(&uncontended),
    ));
    Ok(())
}

#[allow(clippy::too_many_arguments)]
fn simulate_on(
    site: Site,
    default_model: &Arc<usermodel::Model>,
    fairness: Fairness,
    scheduler: SchedulerSpec,
    capacity: Capacity,
    order: Option<Box<dyn QueueOrder>>,
    progress: crate::progress::ProgressFn<'_>,
    what: &'static str,
    keep: Keep<'_>,
) -> Result<SiteRun> {
    let Prepared {
        population,
        mut cluster,
        sharing,
    } = prepare(&site, default_model, scheduler, capacity, order)?;
    let file: &SiteFile = &site.file;
    let processors = file.site.processors;
    let horizon = i64::from(file.run.weeks) * users::cycle::WEEK;
    let warmup = i64::from(file.run.warmup_days) * users::cycle::DAY;
    let user_groups: Vec<usize> = population.profiles().iter().map(|p| p.group).collect();
    let options = engine::SimOptions { sharing };
    let mut ticker = crate::progress::Ticker::new(progress, what, horizon);
    // On a machine of nodes, a run that keeps its records keeps where each job ran too.
    let mut ticker = crate::batsim::Placements {
        inner: &mut ticker,
        held: (matches!(keep, Keep::Whole) && cluster.nodes().is_some()).then(Vec::new),
    };
    let window = Window {
        start: warmup,
        end: horizon,
    };
    let summary_options = SummaryOptions {
        processors,
        warmup: Warmup::Interval {
            start: warmup,
            end: horizon,
            counted: file.run.measure,
        },
    };
    let mut measures = Measures::new(file, &user_groups, &summary_options, window)?;
    let engine_error = |source| ScenarioError::Engine {
        context: "the simulation failed".into(),
        source,
    };
    let run = match keep {
        // Measured (and written) as the records come; nothing kept.
        Keep::Files(_) | Keep::Nothing => {
            let writers = match keep {
                Keep::Files(files) => {
                    let names = file.groups.iter().map(|g| g.name.clone()).collect();
                    Some(crate::stream::Writers::new(
                        files,
                        names,
                        user_groups.len(),
                    )?)
                }
                Keep::Whole | Keep::Nothing => None,
            };
            let mut sink = StreamSink {
                measures: &mut measures,
                writers,
                error: None,
            };
            let sink = if sink.writers.is_some() {
                // Measured and written on a second thread while the simulation goes on.
                std::thread::scope(|scope| {
                    let (to_sink, received) = std::sync::mpsc::sync_channel::<Vec<Final>>(16);
                    let consumer = scope.spawn(move || {
                        for chunk in received {
                            for item in chunk {
                                match item {
                                    Final::Job(record, submission) => sink.job(record, &submission),
                                    Final::Session(session) => sink.session(session),
                                    Final::Batch(batch) => sink.batch(batch),
                                }
                            }
                        }
                        sink
                    });
                    let mut handing = HandOn {
                        chunk: Vec::with_capacity(HandOn::CHUNK),
                        to_sink,
                    };
                    let simulated = engine::run_population_into(
                        &mut cluster,
                        population,
                        &mut ticker,
                        &options,
                        &mut handing,
                    );
                    handing.flush();
                    drop(handing);
                    let sink = consumer.join().map_err(|_| {
                        ScenarioError::Invalid(
                            "writing the run's tables failed unexpectedly".into(),
                        )
                    })?;
                    simulated.map_err(engine_error)?;
                    Ok::<_, ScenarioError>(sink)
                })?
            } else {
                engine::run_population_into(
                    &mut cluster,
                    population,
                    &mut ticker,
                    &options,
                    &mut sink,
                )
                .map_err(engine_error)?;
                sink
            };
            if let Some(e) = sink.error {
                return Err(e);
            }
            if let Some(writers) = sink.writers {
                writers.finish()?;
            }
            ClosedRun::default()
        }
        // Kept whole (fair start times change the records after the run), then measured.
        Keep::Whole => {
            let mut run =
                engine::run_population_with(&mut cluster, population, &mut ticker, &options)
                    .map_err(engine_error)?;
            if fairness == Fairness::Measure {
                let last_submit = run.records.iter().map(|r| r.submit).max().unwrap_or(0);
                ticker.inner.restart("fair start times", last_submit);
                engine::add_fair_start_times_observed(processors, &mut run.records, ticker.inner)
                    .map_err(|source| ScenarioError::Engine {
                    context: "the fair-start simulation failed".into(),
                    source,
                })?;
            }
            for (record, submission) in run.records.iter().zip(&run.submissions) {
                measures.job(record, submission);
            }
            for s in &run.sessions {
                measures.session(s);
            }
            for b in &run.batches {
                measures.batch(b);
            }
            run
        }
    };
    let policy_usage = cluster.policy_usage().map(PolicyUsageReport::new);
    let (summary, closed, groups) = measures.finish(file, &user_groups)?;
    let placements = ticker.held.take().map(|mut held| {
        held.resize(run.records.len(), Vec::new());
        held
    });
    Ok(SiteRun {
        site,
        scheduler,
        run,
        user_groups,
        summary,
        closed,
        policy_usage,
        groups,
        placements,
    })
}

/// A run's measures, built as its jobs, sessions and batches come (in submission order for the
/// jobs; any order for the others): the whole site's, and each group's when there are several.
struct Measures<'a> {
    summary: SummaryBuilder,
    closed: ClosedLoopBuilder,
    /// Each group's own (sites of more than one group only).
    groups: Vec<(SummaryBuilder, ClosedLoopBuilder)>,
    user_groups: &'a [usize],
    group_names: Vec<String>,
}

impl<'a> Measures<'a> {
    fn new(
        file: &SiteFile,
        user_groups: &'a [usize],
        options: &SummaryOptions,
        window: Window,
    ) -> Result<Measures<'a>> {
        let builder = || {
            SummaryBuilder::new(options)
                .ok_or_else(|| invalid!("a site run measures over an interval"))
        };
        let groups = if file.groups.len() > 1 {
            file.groups
                .iter()
                .map(|_| Ok((builder()?, ClosedLoopBuilder::new(window))))
                .collect::<Result<_>>()?
        } else {
            Vec::new()
        };
        Ok(Measures {
            summary: builder()?,
            closed: ClosedLoopBuilder::new(window),
            groups,
            user_groups,
            group_names: file.groups.iter().map(|g| g.name.clone()).collect(),
        })
    }

    /// The group index of a user (by index from 0).
    fn group_of(&self, user: u32) -> Option<usize> {
        self.user_groups.get(user as usize).copied()
    }

    fn job(&mut self, record: &JobRecord, submission: &Submission) {
        self.summary.add(record);
        self.closed.job(record);
        if let Some((summary, closed)) = self
            .group_of(submission.user)
            .and_then(|g| self.groups.get_mut(g))
        {
            summary.add(record);
            closed.job(record);
        }
    }

    /// The groups a session or batch of group `name` counts in.
    fn named<'b>(
        groups: &'b mut [(SummaryBuilder, ClosedLoopBuilder)],
        names: &'b [String],
        name: &'b str,
    ) -> impl Iterator<Item = &'b mut ClosedLoopBuilder> {
        groups
            .iter_mut()
            .zip(names)
            .filter(move |(_, n)| *n == name)
            .map(|((_, closed), _)| closed)
    }

    fn session(&mut self, s: &SessionRecord) {
        self.closed.session(s);
        for closed in Self::named(&mut self.groups, &self.group_names, &s.group) {
            closed.session(s);
        }
    }

    fn batch(&mut self, b: &BatchRecord) {
        self.closed.batch(b);
        for closed in Self::named(&mut self.groups, &self.group_names, &b.group) {
            closed.batch(b);
        }
    }

    fn finish(
        self,
        file: &SiteFile,
        user_groups: &[usize],
    ) -> Result<(Summary, ClosedLoopSummary, Vec<GroupRun>)> {
        let input = metrics::InputCounts::default();
        // Over an interval known in advance, a builder always gives a summary.
        let summary = |builder: SummaryBuilder| {
            builder
                .finish(input)
                .ok_or_else(|| invalid!("a site run's summary needs its measurement interval"))
        };
        let groups = self
            .groups
            .into_iter()
            .zip(&file.groups)
            .enumerate()
            .map(|(index, ((jobs, closed), group))| {
                Ok(GroupRun {
                    name: group.name.clone(),
                    users: user_groups.iter().filter(|&&g| g == index).count() as u64,
                    closed_loop: closed.finish(),
                    summary: summary(jobs)?,
                })
            })
            .collect::<Result<_>>()?;
        Ok((summary(self.summary)?, self.closed.finish(), groups))
    }
}

/// Measures and writes a streamed run's records as the engine hands them out; the first write
/// error stops the writing and is reported when the simulation is over.
/// A final record on its way from the simulation to the [`StreamSink`] on the writing thread.
enum Final {
    Job(JobRecord, Submission),
    Session(SessionRecord),
    Batch(BatchRecord),
}

/// Hands the final records on to the writing thread in chunks (one channel message per
/// [`HandOn::CHUNK`] records, so the simulation does not wait on the channel per record).
struct HandOn {
    chunk: Vec<Final>,
    to_sink: std::sync::mpsc::SyncSender<Vec<Final>>,
}

impl HandOn {
    const CHUNK: usize = 4096;

    fn push(&mut self, item: Final) {
        self.chunk.push(item);
        if self.chunk.len() == Self::CHUNK {
            self.flush();
        }
    }

    /// Sends what is pending. A closed channel (the writing thread stopped) drops it: the
    /// thread's own error is what the run reports.
    fn flush(&mut self) {
        if !self.chunk.is_empty() {
            let chunk = std::mem::replace(&mut self.chunk, Vec::with_capacity(Self::CHUNK));
            let _ = self.to_sink.send(chunk);
        }
    }
}

impl ClosedSink for HandOn {
    fn job(&mut self, record: JobRecord, submission: &Submission) {
        self.push(Final::Job(record, *submission));
    }
    fn session(&mut self, session: SessionRecord) {
        self.push(Final::Session(session));
    }
    fn batch(&mut self, batch: BatchRecord) {
        self.push(Final::Batch(batch));
    }
}

struct StreamSink<'m, 'a, 'f> {
    measures: &'m mut Measures<'a>,
    writers: Option<crate::stream::Writers<'f>>,
    error: Option<ScenarioError>,
}

impl StreamSink<'_, '_, '_> {
    fn keep(&mut self, result: Result<()>) {
        if let Err(e) = result {
            self.error.get_or_insert(e);
        }
    }
}

impl ClosedSink for StreamSink<'_, '_, '_> {
    fn job(&mut self, record: JobRecord, submission: &Submission) {
        self.measures.job(&record, submission);
        if let (Some(writers), None) = (self.writers.as_mut(), &self.error) {
            let group = self.measures.group_of(submission.user).unwrap_or(0);
            let written = writers.job(&record, submission, group);
            self.keep(written);
        }
    }
    fn session(&mut self, session: SessionRecord) {
        self.measures.session(&session);
        if let (Some(writers), None) = (self.writers.as_mut(), &self.error) {
            let written = writers.session(&session);
            self.keep(written);
        }
    }
    fn batch(&mut self, batch: BatchRecord) {
        self.measures.batch(&batch);
        if let (Some(writers), None) = (self.writers.as_mut(), &self.error) {
            let written = writers.batch(&batch);
            self.keep(written);
        }
    }
}

/// What summary.json holds for a site-level run (the measure catalogue's json paths point into
/// it).
#[derive(Debug, Serialize)]
pub struct RunReport<'a> {
    /// `sitesim`.
    pub tool: &'static str,
    /// The version that wrote it.
    pub version: &'static str,
    /// `run`.
    pub command: &'static str,
    /// Where the site came from.
    pub origin: &'a str,
    /// The site as simulated (file plus overrides).
    pub site: &'a SiteFile,
    /// The scheduler's label.
    pub scheduler: String,
    /// Simulated users.
    pub users: u64,
    /// Throughput and sessions.
    pub closed_loop: &'a ClosedLoopSummary,
    /// The job measures.
    pub summary: &'a Summary,
    /// dynP's policy usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_usage: Option<&'a PolicyUsageReport>,
    /// Each group's measures (sites of more than one group only).
    #[serde(skip_serializing_if = "<[GroupRun]>::is_empty")]
    pub groups: &'a [GroupRun],
}

impl SiteRun {
    /// What summary.json holds for this run.
    pub fn report(&self) -> RunReport<'_> {
        RunReport {
            tool: "sitesim",
            version: env!("CARGO_PKG_VERSION"),
            command: "run",
            origin: &self.site.origin,
            site: &self.site.file,
            scheduler: self.scheduler.label(),
            users: self.user_groups.len() as u64,
            closed_loop: &self.closed,
            summary: &self.summary,
            policy_usage: self.policy_usage.as_ref(),
            groups: &self.groups,
        }
    }

    /// The group names, by group index.
    pub fn group_names(&self) -> Vec<String> {
        self.site
            .file
            .groups
            .iter()
            .map(|g| g.name.clone())
            .collect()
    }

    /// Each job's group index and session number, in the order of the records.
    pub fn job_owners(&self) -> Vec<crate::output::JobOwner> {
        self.run
            .submissions
            .iter()
            .map(|sub| crate::output::JobOwner {
                group: self
                    .user_groups
                    .get(sub.user as usize)
                    .copied()
                    .unwrap_or(0) as u32,
                session: sub.session,
            })
            .collect()
    }

    /// The generated workload as SWF: the jobs as they ran (wait, runtime, killed = status 0,
    /// "failed"), with the user's estimate as requested time, users numbered from 1 as in
    /// jobs.csv, groups numbered from 1 in the file's order (named in the header), and each
    /// batch's dependency on the previous batch's last job (fields 17 and 18), so feedback-aware
    /// simulators can replay the closed loop.
    pub fn swf(&self) -> (swf::Header, Vec<swf::Record>) {
        (swf_header(self), swf_records(self))
    }
}

fn swf_header(r: &SiteRun) -> swf::Header {
    let mut header = swf::Header::new();
    let file = &r.site.file;
    header.push_field("Version", "2.2");
    header.push_field("Computer", "sitesim site-level simulation");
    header.push_field("Installation", &r.site.origin);
    header.push_field(
        "Note",
        format!(
            "{}, {}, scheduler {}, seed {}; generated by sitesim {}",
            crate::count(r.user_groups.len() as u64, "user"),
            crate::count(file.run.weeks, "week"),
            r.scheduler.label(),
            file.run.seed,
            env!("CARGO_PKG_VERSION")
        ),
    );
    header.push_field("MaxJobs", r.run.records.len());
    header.push_field("MaxRecords", r.run.records.len());
    header.push_field("MaxNodes", file.site.processors);
    header.push_field("MaxProcs", file.site.processors);
    header.push_field("UnixStartTime", r.site.unix_start());
    header.push_field("TimeZoneString", "UTC");
    header.push_field("StartTime", &file.site.start);
    let groups: Vec<String> = file
        .groups
        .iter()
        .enumerate()
        .map(|(i, g)| format!("{} = {}", i + 1, g.name))
        .collect();
    header.push_field(
        "Note",
        format!(
            "groups (field 13): {}; status 0 = killed at its requested time",
            groups.join(", ")
        ),
    );
    header
}

fn swf_records(r: &SiteRun) -> Vec<swf::Record> {
    r.run
        .records
        .iter()
        .zip(&r.run.submissions)
        .map(|(job, sub): (&metrics::JobRecord, &Submission)| {
            let group = r.user_groups.get(sub.user as usize).copied().unwrap_or(0);
            swf::Record {
                job_number: job.job_id,
                submit_time: job.submit,
                wait_time: job.wait(),
                run_time: job.runtime(),
                allocated_processors: i64::from(job.processors),
                requested_processors: i64::from(job.processors),
                requested_time: job.estimate,
                status: if job.killed { 0 } else { 1 },
                user_id: job.user,
                group_id: group as i64 + 1,
                preceding_job: sub.preceding.map_or(-1, |(id, _)| id),
                think_time: sub.preceding.map_or(-1, |(_, think)| think),
                ..swf::Record::default()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site_file(text: &str) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("site.toml");
        std::fs::write(&path, text).unwrap();
        (dir, path)
    }

    const ONE_GROUP: &str = "[site]\nprocessors = 2048\n[scheduler]\npolicy = \"creasy\"\nalpha = 1500\n[run]\nweeks = 3\n[[groups]]\nname = \"a\"\nusers = 5\n";

    #[test]
    fn flags_override_the_same_fields_as_the_file() {
        let (_dir, path) = site_file(ONE_GROUP);
        let untouched = resolve(Some(&path), &SiteOverrides::default()).unwrap();
        assert_eq!(untouched.file.site.processors, 2048);
        assert_eq!(untouched.file.scheduler.alpha, Some(1500.0));
        let overrides = SiteOverrides {
            users: Some(9),
            weeks: Some(2),
            seed: Some(7),
            processors: Some(256),
            policy: None,
            scheduler: SchedulerOverrides {
                alpha: Some(3000.0),
                ..SchedulerOverrides::default()
            },
        };
        let site = resolve(Some(&path), &overrides).unwrap();
        let f = &site.file;
        assert_eq!(
            (
                f.groups[0].users,
                f.run.weeks,
                f.run.seed,
                f.site.processors
            ),
            (9, 2, 7, 256)
        );
        assert_eq!(f.scheduler.policy, "creasy");
        assert_eq!(f.scheduler.alpha, Some(3000.0));
        assert_eq!(f.scheduler.spec().unwrap().label(), "creasy-3000");
        // A new policy drops the file's parameters; an alias is stored as the policy's name.
        let site = resolve(
            Some(&path),
            &SiteOverrides {
                policy: Some("easy++".into()),
                ..SiteOverrides::default()
            },
        )
        .unwrap();
        assert_eq!(site.file.scheduler.policy, "easy-plus-plus");
        assert_eq!(site.file.scheduler.alpha, None);
    }

    #[test]
    fn a_flag_value_is_checked_like_a_file_value() {
        let (_dir, path) = site_file(ONE_GROUP);
        // --alpha on a policy that does not take it: the registry refuses it, as it refuses
        // `alpha` under a non-creasy [scheduler] in a file.
        let site = resolve(
            Some(&path),
            &SiteOverrides {
                policy: Some("easy".into()),
                scheduler: SchedulerOverrides {
                    alpha: Some(10.0),
                    ..SchedulerOverrides::default()
                },
                ..SiteOverrides::default()
            },
        )
        .unwrap();
        let from_flag = site.file.scheduler.spec().unwrap_err().to_string();
        let (_dir2, path2) = site_file(&ONE_GROUP.replace("\"creasy\"", "\"easy\""));
        let from_file = resolve(Some(&path2), &SiteOverrides::default())
            .unwrap()
            .file
            .scheduler
            .spec()
            .unwrap_err()
            .to_string();
        assert_eq!(from_flag, from_file);
        assert!(from_flag.contains("alpha"), "{from_flag}");
        // --weeks 0 fails the same check as `weeks = 0`.
        let model = Arc::new(crate::models::default_model().unwrap());
        let zero = resolve(
            Some(&path),
            &SiteOverrides {
                weeks: Some(0),
                ..SiteOverrides::default()
            },
        )
        .unwrap();
        let err = simulate(zero, &model, Fairness::Skip)
            .err()
            .unwrap()
            .to_string();
        assert!(err.contains("run.weeks = 0"), "{err}");
    }

    #[test]
    fn headroom_is_zero_on_a_machine_where_nothing_waits() {
        // 5 users on 100,000 processors: no job ever waits, so the uncontended run and EASY
        // submit exactly the same jobs.
        let (_dir, path) = site_file(&ONE_GROUP.replace("2048", "100000"));
        let model = Arc::new(crate::models::default_model().unwrap());
        let site = resolve(Some(&path), &SiteOverrides::default()).unwrap();
        let mut run = simulate(site, &model, Fairness::Skip).unwrap();
        assert_eq!(run.summary.wait_seconds.max, 0.0, "something waited");
        measure_headroom(&mut run, &model).unwrap();
        let h = run.closed.headroom.unwrap();
        assert_eq!(h.headroom, 0.0);
        assert_eq!(
            h.uncontended_submitted_per_hour,
            run.closed.submitted_per_hour
        );
        assert_eq!(h.easy_submitted_per_hour, run.closed.submitted_per_hour);
        assert!(h.capture.is_nan(), "EASY has no headroom to capture");
    }

    #[test]
    fn headroom_is_positive_on_a_busy_machine() {
        let (_dir, path) = site_file(
            &ONE_GROUP
                .replace("2048", "1152")
                .replace("users = 5", "users = 60"),
        );
        let model = Arc::new(crate::models::default_model().unwrap());
        let site = resolve(Some(&path), &SiteOverrides::default()).unwrap();
        let mut run = simulate(site, &model, Fairness::Skip).unwrap();
        measure_headroom(&mut run, &model).unwrap();
        let h = run.closed.headroom.unwrap();
        assert!(h.headroom > 0.0, "{h:?}");
        assert!(
            h.uncontended_submitted_per_hour > h.easy_submitted_per_hour,
            "{h:?}"
        );
        let expected = (run.closed.submitted_per_hour - h.easy_submitted_per_hour)
            / (h.uncontended_submitted_per_hour - h.easy_submitted_per_hour);
        assert_eq!(h.capture, expected);
    }

    #[test]
    fn users_needs_one_group() {
        let two = format!("{ONE_GROUP}[[groups]]\nname = \"b\"\nusers = 2\n");
        let (_dir, path) = site_file(&two);
        let err = resolve(
            Some(&path),
            &SiteOverrides {
                users: Some(3),
                ..SiteOverrides::default()
            },
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains("--users needs a population with one group"),
            "{err}"
        );
    }

    #[test]
    fn spec_errors_name_the_file_and_key() {
        let bad = [
            (
                "[site]\nprocessors = 0\n[[groups]]\nname = \"a\"\nusers = 1\n",
                "site.processors = 0",
            ),
            (
                "[site]\nprocessors = 8\nstart = \"monday\"\n[[groups]]\nname = \"a\"\nusers = 1\n",
                "site.start",
            ),
            (
                "[site]\nprocessors = 8\ngpus = 2\n[[groups]]\nname = \"a\"\nusers = 1\n",
                "gpus",
            ),
            (
                "[site]\nprocessors = 2048\nselection = \"first-continuous\"\n[[groups]]\nname = \"a\"\nusers = 1\n",
                "site.selection needs a machine of nodes",
            ),
        ];
        let model = Arc::new(crate::models::default_model().unwrap());
        for (text, wanted) in bad {
            let (_dir, path) = site_file(text);
            let err = match resolve(Some(&path), &SiteOverrides::default()) {
                Err(e) => e.to_string(),
                Ok(site) => simulate(site, &model, Fairness::Skip)
                    .err()
                    .map(|e| e.to_string())
                    .unwrap_or_default(),
            };
            assert!(err.contains(wanted), "{wanted:?} not in {err:?}");
            assert!(err.contains("site.toml"), "{err}");
        }
    }

    #[test]
    fn a_small_site_runs_and_reports() {
        let (_dir, path) = site_file(ONE_GROUP);
        let model = Arc::new(crate::models::default_model().unwrap());
        let site = resolve(
            Some(&path),
            &SiteOverrides {
                weeks: Some(1),
                ..SiteOverrides::default()
            },
        )
        .unwrap();
        let r = simulate(site, &model, Fairness::Skip).unwrap();
        assert_eq!(r.user_groups.len(), 5);
        assert!(!r.run.records.is_empty());
        let report = r.report();
        assert_eq!(report.scheduler, "creasy-1500");
        let (header, records) = r.swf();
        assert_eq!(records.len(), r.run.records.len());
        assert!(header.lines().len() > 5);
        assert_eq!(header.get("MaxProcs"), Some("2048"));
    }
}
