//! Replay of an SWF trace (`sitesim replay`): read the trace, optionally replace its estimates
//! and put it on a machine of nodes, simulate it under a scheduler, and describe it. Open loop by
//! default (every job at its logged submit time); with [`ReplayOptions::feedback`], the trace's
//! sessions are replayed with feedback (Zakay & Feitelson, MASCOTS 2014; the rules are
//! `engine::FeedbackReplay`'s, the sessions come from `crate::feedback`) and the run is also
//! measured as the closed loop is: throughput and sessions ([`FeedbackRun`]).
//!
//! A [`crate::Simulation`] of a replay calls `replay`, which hands the records to the
//! simulation's sinks as they come and returns the jobs as they ran ([`ReplayRun`]), with their
//! summary ([`ReplayRun::summary`]) and what summary.json holds ([`ReplayRun::report`]).

use crate::outages::OutageCost;
use cluster::{Cluster, QueueOrder, SchedulerSpec};
use config::choices::WarmupChoice;
use config::machine::Machine;
use config::naming::{key, key_value};
use config::replay::ReplayOptions;
use config::{Result, ScenarioError, ensure, invalid};
use engine::{Abandon, FeedbackCounts, FeedbackOptions, FeedbackReplay, Replay, StreamedJobs};
use metrics::{
    ClosedLoopSummary, InputCounts, JobRecord, SessionRecord, Summary, SummaryBuilder,
    SummaryOptions, Time, Window,
};
use serde::Serialize;

use crate::batsim::Intervals;
use crate::policy_usage::PolicyUsageReport;
use crate::sink::{JobEvent, Sink};

/// What a replay with feedback measured beyond the jobs.
#[derive(Debug)]
pub struct FeedbackRun {
    /// Every session, by user and session number.
    pub sessions: Vec<SessionRecord>,
    /// Throughput and sessions over the logged submit period (from the first to the last
    /// logged submit of the replayed jobs, both included).
    pub closed: ClosedLoopSummary,
    /// Sessions, batches, dependent and dropped jobs.
    pub counts: FeedbackCounts,
    /// The continue probability's a and b, when users abandon sessions.
    pub abandon: Option<(f64, f64)>,
}

/// A replayed trace.
#[derive(Debug)]
pub struct ReplayRun {
    /// The options it ran with.
    pub options: ReplayOptions,
    /// The scheduler.
    pub scheduler: SchedulerSpec,
    /// How many jobs ran (the records went to the simulation's sinks as they came; a
    /// [`crate::sink::Kept`] sink keeps them, the run itself does not, so a replay's memory
    /// does not grow with its trace).
    pub jobs: usize,
    /// With feedback: the users that have a job.
    pub feedback_users: usize,
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
    /// The Slurm model's shares and waits by account (the Slurm model only).
    pub slurm: Option<crate::slurm_report::SlurmReport>,
    /// On a machine of node types: the machine, and the jobs it held for good.
    pub nodes: Option<crate::node_report::NodesReport>,
    /// With a power model (`power`): the run's energy, peak power, carbon and cost.
    pub power: Option<power::PowerReport>,
    /// With a power model: the IT energy charged to each job, J, by record.
    pub job_energies: Option<Vec<f64>>,
    /// With `outages`: what they took over the replay's arrivals.
    pub outages: Option<crate::outages::OutageReport>,
    /// With an outages file's `[failures]`: what the node failures did over the replay's
    /// arrivals.
    pub failures: Option<crate::failures::FailureReport>,
    /// Every period processors were out of service, outages and failures, by start
    /// (outages.csv).
    pub out_of_service: Vec<crate::outages::OutOfService>,
    /// Sessions and throughput, with `--feedback`.
    pub feedback: Option<FeedbackRun>,
    /// What reading a Slurm accounting dump dropped or altered (the converted header's
    /// `SacctInput` lines: key, text), or empty for an SWF trace that has none.
    pub conversion: Vec<(String, String)>,
    /// The side table an SWF trace was read with (`requests.csv` beside a converted trace:
    /// [`crate::requests`]), its path; `None` without one.
    pub requests: Option<String>,
    /// The summary of the jobs over the measured period.
    summary: Summary,
}

/// Records per chunk sent to the consumer thread: about 94 KB, under glibc's default mmap
/// threshold, for the reason `engine`'s stream chunks are (a resident peak that does not move
/// with the threads' timing).
const CHUNK: usize = 512;

/// What the simulation sends the consumer thread.
enum ToConsumer {
    /// The next records, in order.
    Records(Vec<JobRecord>),
    /// The records are for good (a streamed trace was read whole and in order): hand them to
    /// the sinks.
    Confirmed,
}

/// How [`run_jobs`] treats a workload's records.
trait Records {
    /// Whether the log says job `job_id` was stopped at its limit (never, when the estimates
    /// are not the log's): its record is marked killed where it ends at its estimate. Asked
    /// at most once per job, when its record is final (and the job is then forgotten).
    fn take_stopped_at_limit(&mut self, job_id: i64) -> bool;
    /// Whether the records so far are for good (else the replay may have to start over).
    fn confirmed(&self) -> bool {
        true
    }
}

/// A workload and the set of jobs stopped at their limit it replays with.
struct WithStopped<'s, W: ?Sized> {
    workload: &'s mut W,
    stopped_at_limit: &'s mut std::collections::HashSet<i64>,
}

impl<W: engine::Workload + ?Sized> engine::Workload for WithStopped<'_, W> {
    fn next_arrival(&self) -> Option<Time> {
        self.workload.next_arrival()
    }
    fn arrivals(&mut self, now: Time, out: &mut Vec<engine::Job>) {
        self.workload.arrivals(now, out);
    }
    fn job_ended(&mut self, record: &JobRecord, now: Time) {
        self.workload.job_ended(record, now);
    }
}

impl<W: ?Sized> Records for WithStopped<'_, W> {
    fn take_stopped_at_limit(&mut self, job_id: i64) -> bool {
        self.stopped_at_limit.remove(&job_id)
    }
}

impl Records for StreamedJobs {
    fn take_stopped_at_limit(&mut self, job_id: i64) -> bool {
        StreamedJobs::take_stopped_at_limit(self, job_id)
    }
    fn confirmed(&self) -> bool {
        StreamedJobs::confirmed(self)
    }
}

/// A replay's records (kept only when asked for), how many there were, and their summary
/// when it was built as they came.
#[derive(Default)]
struct Simulated {
    records: Vec<JobRecord>,
    jobs: usize,
    summary: Option<Summary>,
}

/// Runs `workload` on `cluster` and returns the records (`None` when they were not confirmed:
/// a streamed trace out of order), marking as killed those stopped at their limit as they
/// come. A second thread takes the records as they come: it hands each to the sinks (only once
/// the workload confirms its records: until then they wait in the collection, and they never
/// reach the sinks if it does not), and builds their summary if `summary` allows it
/// ([`SummaryBuilder`]; its input counts left at zero), so that little is left to do once the
/// simulation ends. The records are kept for the caller only when `keep` (or when no summary
/// can be built as they come): otherwise the memory of a replay does not grow with its jobs.
fn run_jobs<W: engine::Workload + Records, O: engine::Observer + ?Sized>(
    cluster: &mut Cluster,
    workload: &mut W,
    observer: &mut O,
    sim: &engine::SimOptions,
    sinks: &mut [Box<dyn Sink>],
    summary: Option<SummaryOptions>,
    keep: bool,
) -> Result<std::result::Result<Option<Simulated>, engine::EngineError>> {
    let staged = !workload.confirmed();
    let builder = summary.and_then(|options| SummaryBuilder::new(&options));
    let keep = keep || builder.is_none();
    std::thread::scope(|scope| {
        let (to_consumer, received) = std::sync::mpsc::sync_channel::<ToConsumer>(16);
        let consumer = scope.spawn(move || -> Result<Option<Simulated>> {
            let mut builder = builder;
            let mut records = Vec::new();
            let mut jobs = 0;
            let mut confirmed = !staged;
            let feed = |sinks: &mut [Box<dyn Sink>], chunk: &[JobRecord]| -> Result<()> {
                for sink in sinks.iter_mut() {
                    for record in chunk {
                        sink.job(JobEvent {
                            record,
                            owner: None,
                        })?;
                    }
                }
                Ok(())
            };
            for message in received {
                match message {
                    ToConsumer::Records(chunk) => {
                        jobs += chunk.len();
                        if confirmed {
                            feed(sinks, &chunk)?;
                        }
                        if let Some(builder) = builder.as_mut() {
                            for r in &chunk {
                                builder.add(r);
                            }
                        }
                        if keep || !confirmed {
                            records.extend_from_slice(&chunk);
                        }
                    }
                    ToConsumer::Confirmed => {
                        if !confirmed {
                            confirmed = true;
                            feed(sinks, &records)?;
                            if !keep {
                                records = Vec::new();
                            }
                        }
                    }
                }
            }
            if !confirmed {
                return Ok(None); // not confirmed: nothing reached the sinks
            }
            // The input counts are the caller's to fill in.
            let summary = builder.and_then(|builder| builder.finish(InputCounts::default()));
            Ok(Some(Simulated {
                records,
                jobs,
                summary,
            }))
        });
        let mut chunk = Vec::with_capacity(CHUNK);
        let mut confirmed = !staged;
        let simulated =
            engine::simulate_into(cluster, workload, observer, sim, &mut |w, mut record| {
                // (asked only of a record that ended at its estimate: nearly every job the log
                // says was stopped does, so the set keeps only the jobs in flight)
                if !record.killed
                    && record.runtime() == record.estimate
                    && w.take_stopped_at_limit(record.job_id)
                {
                    record.killed = true;
                }
                if !confirmed && w.confirmed() {
                    confirmed = true;
                    let _ = to_consumer.send(ToConsumer::Confirmed);
                }
                chunk.push(record);
                if chunk.len() == CHUNK {
                    // A consumer that stopped on an error reports it when joined.
                    let chunk = std::mem::replace(&mut chunk, Vec::with_capacity(CHUNK));
                    let _ = to_consumer.send(ToConsumer::Records(chunk));
                }
            });
        if !chunk.is_empty() {
            let _ = to_consumer.send(ToConsumer::Records(chunk));
        }
        let confirmed = workload.confirmed();
        if confirmed && simulated.is_ok() {
            let _ = to_consumer.send(ToConsumer::Confirmed);
        }
        drop(to_consumer);
        let consumed = consumer.join().map_err(|_| {
            ScenarioError::Invalid("writing the records failed unexpectedly".into())
        })??;
        Ok(simulated.map(|()| consumed.filter(|_| confirmed)))
    })
}

/// Whether a replay can simulate while its trace is read: the trace's jobs as they are, in the
/// file's order (nothing needs the whole trace first).
fn streams(options: &ReplayOptions, order: &Option<Box<dyn QueueOrder>>) -> bool {
    order.is_none()
        && !options.feedback
        && options.first_jobs.is_none()
        && !options.shake
        && options.load_factor == 1.0
        && options.estimates.estimates == config::choices::EstimateChoice::Trace
        && options.machine.node_processors.is_none()
        && options.machine.nodes.is_none()
        && !has_power_policies(options)
        && options.outages.is_none()
        && options.events.is_none()
        && options.reservations.is_none()
}

/// Whether a replay's `[power]` table asks for a cap, a delay or idle nodes that power down
/// (then the replay is read
/// whole: the policies are set up with the machine). An unreadable table is reported when
/// the replay reads it.
fn has_power_policies(options: &ReplayOptions) -> bool {
    options.power.as_ref().is_some_and(|file| {
        config::power::PowerInput::load(file).map_or(true, |p| {
            p.section.cap.is_some()
                || p.section.cap_kw.is_some()
                || p.section.delay.is_some()
                || p.section.suspend_time_s.is_some()
        })
    })
}

/// A streamed replay: simulated, or found out of order (then replayed whole).
enum Streamed {
    Ran {
        replay: Replay,
        simulated: Box<Simulated>,
        cluster: Box<Cluster>,
    },
    OutOfOrder(Replay),
}

/// Job chunks in flight from the reading thread to the simulation: the reader waits when the
/// simulation is this far behind, so the jobs read ahead stay bounded.
const CHUNKS_IN_FLIGHT: usize = 4;

/// Reads the trace on a second thread and simulates its jobs as they come ([`StreamedJobs`],
/// [`engine::ReplayReader::stream`]).
fn stream(
    scheduler: SchedulerSpec,
    options: &ReplayOptions,
    progress: crate::progress::ProgressFn<'_>,
    sinks: &mut [Box<dyn Sink>],
) -> Result<Streamed> {
    let reader = crate::trace::replay_reader(&options.trace, &options.input, options.processors)?;
    let mut cluster = Cluster::new(reader.processors(), scheduler.build())
        .with_extra(options.input.resource_amounts())
        .map_err(|e| invalid!("{}: {e}", key_value("scheduler", scheduler.label())))?;
    crate::slurm_report::sample_shares_if_wanted(&mut cluster, sinks);
    let summary = summary_options(options, reader.processors(), None);
    let latest = std::sync::atomic::AtomicI64::new(0);
    let sim = engine::SimOptions::default();
    std::thread::scope(|scope| {
        let (to_replay, received) = std::sync::mpsc::sync_channel(CHUNKS_IN_FLIGHT);
        let latest = &latest;
        let reading = scope.spawn(move || {
            reader.stream(engine::StreamLimits::default(), &mut |message| {
                if let engine::StreamMessage::Jobs(jobs) = &message {
                    if let Some((last, _)) = jobs.last() {
                        latest.fetch_max(last.submit, std::sync::atomic::Ordering::Relaxed);
                    }
                }
                let _ = to_replay.send(message);
            })
        });
        let mut jobs = StreamedJobs::new(received);
        let mut ticker = crate::progress::Ticker::following(progress, "replaying", latest);
        let simulated = run_jobs(
            &mut cluster,
            &mut jobs,
            &mut ticker,
            &sim,
            sinks,
            summary,
            options.power.is_some(),
        );
        jobs.drain();
        let read = reading.join().map_err(|_| {
            ScenarioError::Invalid("reading the trace failed unexpectedly".into())
        })??;
        let simulated = simulated?.map_err(|source| ScenarioError::Engine {
            context: format!("replay of {} failed", options.trace.display()),
            source,
        })?;
        Ok(match (read, simulated) {
            (engine::Streaming::Streamed(replay), Some(simulated)) => Streamed::Ran {
                replay,
                simulated: Box::new(simulated),
                cluster: Box::new(cluster),
            },
            (engine::Streaming::Whole(replay), _) => Streamed::OutOfOrder(replay),
            (engine::Streaming::Streamed(_), None) => {
                return Err(ScenarioError::Invalid(format!(
                    "replay of {}: the trace was read whole but its jobs did not arrive in order",
                    options.trace.display()
                )));
            }
        })
    })
}

/// What a replay returns: the run, and on a machine of nodes when a sink wants them, the
/// processors each job held (by record).
pub(crate) type Replayed = (
    ReplayRun,
    (Option<Vec<Intervals>>, Option<Vec<crate::sink::NodeShares>>),
);

/// What a replay leaves out of its outages, to measure what one cost (`outage_costs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Without {
    /// Nothing: the replay as asked.
    #[default]
    Nothing,
    /// Its outage of this index (the outages file's in order, then Slurm's records').
    Outage(usize),
    /// Its node failures.
    Failures,
}

/// Refuses `outage_costs` for a replay without outages (`outages`, `events`, `reservations`)
/// or with a queue order from outside the registry (`foreign_order`: it cannot be replayed
/// again), naming the keys.
pub(crate) fn check_outage_costs(options: &ReplayOptions, foreign_order: bool) -> Result<()> {
    let costs = key("outage_costs");
    ensure!(
        options.outages.is_some() || options.events.is_some() || options.reservations.is_some(),
        "{costs} measures what a replay's outages cost ({}, {}, {}), and it has none",
        key("outages"),
        key("events"),
        key("reservations")
    );
    ensure!(
        !foreign_order,
        "{costs} replays the trace again without each outage under a scheduler of the registry; a queue order given from outside it cannot be replayed again"
    );
    Ok(())
}

/// Measures what each of a replay's outages and its node failures cost (`outage_costs`): the
/// same trace replayed under `scheduler` without it, its mean wait against `run`'s (the
/// same jobs, so the difference is the outage's alone). One more replay each.
pub(crate) fn measure_outage_costs(
    run: &mut ReplayRun,
    scheduler: &SchedulerSpec,
    options: &ReplayOptions,
    progress: crate::progress::ProgressFn<'_>,
) -> Result<()> {
    let with = run.summary().wait_seconds.mean;
    let mut without = |leaving: Without| -> Result<f64> {
        let (other, _) = replay(
            scheduler.clone(),
            None,
            options,
            &mut *progress,
            &mut [],
            leaving,
        )?;
        Ok(other.summary().wait_seconds.mean)
    };
    let outages = run.outages.as_ref().map_or(0, |o| o.outages.len());
    let mut costs = Vec::with_capacity(outages);
    for index in 0..outages {
        costs.push(OutageCost::of_waits(with, without(Without::Outage(index))?));
    }
    let failure_cost = match run.failures {
        Some(_) => Some(OutageCost::of_waits(with, without(Without::Failures)?)),
        None => None,
    };
    crate::outages::record_costs(
        run.outages.as_mut(),
        costs,
        run.failures.as_mut(),
        failure_cost,
    );
    Ok(())
}

/// Replays `options.trace` under `scheduler` (its queue order replaced by `order` when given),
/// handing the records to `sinks` as they come; feedback sessions follow the jobs. `without`
/// leaves one of its outages out.
pub(crate) fn replay(
    scheduler: SchedulerSpec,
    order: Option<Box<dyn QueueOrder>>,
    options: &ReplayOptions,
    progress: crate::progress::ProgressFn<'_>,
    sinks: &mut [Box<dyn Sink>],
    without: Without,
) -> Result<Replayed> {
    options.check()?;
    // The plain replay of a trace in submission order simulates while the trace is read; one
    // out of order is replayed whole, as read then.
    let mut read = None;
    if streams(options, &order) {
        match stream(scheduler.clone(), options, progress, sinks)? {
            Streamed::Ran {
                mut replay,
                simulated,
                cluster,
            } => {
                // Checked (nothing to apply) where a replay read whole checks them.
                let estimates = config::estimates::apply(&options.estimates, &mut replay.jobs)?;
                let machine = config::machine::apply(
                    &options.machine,
                    options.estimates.seed,
                    &mut replay.jobs,
                )?;
                tracing::info!(
                    jobs = replay.jobs.len(),
                    processors = replay.processors,
                    "trace read"
                );
                return finish_run(
                    options,
                    scheduler,
                    *simulated,
                    &replay,
                    estimates,
                    machine,
                    &cluster,
                    (None, None),
                    None,
                    sinks,
                    None,
                );
            }
            Streamed::OutOfOrder(replay) => read = Some(replay),
        }
    }
    let (mut replay, logged) = match read {
        Some(replay) => (replay, None),
        None => read_whole(options)?,
    };
    let (estimates, machine) = shape(options, &mut replay)?;
    let processors = replay.processors;
    let mut built = scheduler.build();
    if let Some(order) = order {
        built.order = order;
    }
    let last_arrival = replay.jobs.iter().map(|j| j.submit).max().unwrap_or(0);
    let mut ticker = crate::progress::Ticker::new(progress, "replaying", last_arrival);
    let mut ticker = crate::batsim::Placements {
        inner: &mut ticker,
        held: (machine.nodes.is_some() && sinks.iter().any(|s| s.wants_placements()))
            .then(Vec::new),
        node_shares: (options.machine.nodes.is_some()
            && (options.power.is_some() || sinks.iter().any(|s| s.wants_node_shares())))
        .then(Vec::new),
        usage: options
            .machine
            .nodes
            .is_some()
            .then(crate::node_report::NodeUsage::default),
    };
    let mut cluster = match machine.nodes {
        None => Cluster::new(processors, built),
        Some(nodes) => Cluster::with_nodes(processors, built, nodes)
            .map_err(|e| invalid!("{}: {e}", key_value("scheduler", scheduler.label())))?,
    }
    .with_extra(match &options.machine.nodes {
        // the kinds of the trace's requests: the nodes' memory and GPUs first, whose totals
        // the machine of nodes sets (`with_pool`); the others machine-wide
        Some(nodes) => {
            let pool_kinds = nodes.resources()?.len();
            (0..pool_kinds).fold(options.input.resource_amounts(), |extra, k| {
                extra.with(k, 0)
            })
        }
        None => machine.extra.1,
    })
    .map_err(|e| invalid!("{}: {e}", key_value("scheduler", scheduler.label())))?;
    if let Some(nodes) = &options.machine.nodes {
        let kinds: Vec<String> = (options.input.resources.iter())
            .map(|(name, _)| name.clone())
            .collect();
        cluster = cluster
            .with_pool(nodes.pool_spec(&kinds))
            .map_err(|e| invalid!("{}: {e}", key_value("scheduler", scheduler.label())))?;
    }
    crate::slurm_report::sample_shares_if_wanted(&mut cluster, sinks);
    if let Some(placement) = machine.placement {
        cluster
            .place_by(placement)
            .map_err(|e| invalid!("{}: {e}", key("placement")))?;
    }
    // The power policies (a cap, a carbon-aware delay), checked before the simulation.
    let facility = match &options.power {
        Some(file) => {
            let setup = crate::power_report::setup(file, power_machine(options, processors))?;
            let kinds: Vec<String> = (options.input.resources.iter())
                .map(|(name, _)| name.clone())
                .collect();
            crate::facility::PowerFacility::new(&setup, &kinds, None, options.estimates.seed)?
        }
        None => None,
    };
    if let Some(facility) = &facility {
        cluster = crate::facility::prepare(cluster, facility)?;
    }
    let cap = facility.as_ref().and_then(|f| f.cap_capacity());
    let saving = facility.as_ref().and_then(|f| f.saving());
    // The outages, over the replay's arrivals, checked before the simulation.
    let (mut outages, mut failures) = replay_outages(options, &replay, last_arrival.max(1))?;
    match without {
        Without::Nothing => {}
        Without::Outage(index) if index < outages.len() => {
            outages.remove(index);
        }
        Without::Outage(_) => {}
        Without::Failures => failures = None,
    }
    let failure_facility =
        failures.map(|spec| crate::failures::FailureFacility::new(spec, options.estimates.seed));
    if failure_facility.is_some() {
        crate::failures::check(
            &outage_origin(options),
            &cluster,
            saving.is_some(),
            machine.sharing.is_some(),
            &key_value("scheduler", scheduler.label()),
        )?;
    }
    let outage_facility = if outages.is_empty() {
        None
    } else {
        {
            let origin = outage_origin(options);
            let node_cpus: Option<Vec<u32>> =
                (cluster.pool()).map(|p| p.capacity().iter().map(|a| a.cpus).collect());
            let facility = crate::outages::OutageFacility::new(
                &outages,
                processors,
                &replay.reservation_names,
                node_cpus.as_deref(),
            )
            .map_err(|e| invalid!("{origin}: {e}"))?;
            if let Some(f) = &facility {
                if saving.is_some() {
                    return Err(invalid!(
                        "{origin}: outages and idle nodes that power down (`suspend_time_s`) are not modelled together yet"
                    ));
                }
                cluster = f.prepare(cluster).map_err(|e| {
                    invalid!(
                        "{origin}: {e} ({})",
                        key_value("scheduler", scheduler.label())
                    )
                })?;
            }
            facility
        }
    };
    let sim = engine::SimOptions {
        sharing: machine.sharing,
        facility: crate::facility::combined(
            crate::facility::engine_facility(facility)
                .into_iter()
                .chain(
                    outage_facility
                        .clone()
                        .map(|f| std::sync::Arc::new(f) as std::sync::Arc<dyn engine::Facility>),
                )
                .chain(
                    failure_facility
                        .clone()
                        .map(|f| std::sync::Arc::new(f) as std::sync::Arc<dyn engine::Facility>),
                )
                .collect(),
        ),
    };
    let failed = |source| {
        crate::facility::cap_error(cap, &source).unwrap_or_else(|| ScenarioError::Engine {
            context: format!("replay of {} failed", options.trace.display()),
            source,
        })
    };
    // Jobs the log says were stopped at their limit are killed again where they end there (with
    // the trace's own estimates only).
    let mut stopped_at_limit = if estimates.is_none() {
        std::mem::take(&mut replay.stopped_at_limit)
    } else {
        std::collections::HashSet::new()
    };
    // With feedback the trace's sessions are the workload, else its jobs; either way the
    // records are simulated, written and summarized by `run_jobs` alike.
    let setup = options
        .feedback
        .then(|| feedback_setup(options, &replay.jobs));
    let feedback_window = setup.map(|(window, _)| window);
    let mut with_feedback = if let Some((window, abandon)) = setup {
        let (sessions, independent) =
            crate::feedback::sessions(&logged.unwrap_or_default(), &replay.jobs)?;
        let rules = fit::sessions::SessionRules::default();
        let feedback = FeedbackOptions {
            min_break: rules.session_threshold + 1,
            abandon,
        };
        Some((
            window,
            abandon,
            FeedbackReplay::new(sessions, independent, feedback),
        ))
    } else {
        None
    };
    let workload: &mut dyn engine::Workload = match with_feedback.as_mut() {
        Some((_, _, sessions)) => sessions,
        None => &mut replay,
    };
    let simulated = run_jobs(
        &mut cluster,
        &mut WithStopped {
            workload,
            stopped_at_limit: &mut stopped_at_limit,
        },
        &mut ticker,
        &sim,
        sinks,
        summary_options(options, processors, feedback_window),
        options.feedback || options.power.is_some(),
    )?
    .map_err(failed)?
    .unwrap_or_default();
    let feedback = with_feedback.map(|(window, abandon, workload)| {
        let sessions = workload.sessions();
        let closed = ClosedLoopSummary::compute(&simulated.records, &sessions, &[], window);
        FeedbackRun {
            sessions,
            closed,
            counts: workload.counts(),
            abandon: abandon.map(|a| (a.a, a.b)),
        }
    });
    let held = ticker.held.take();
    let node_shares = ticker.node_shares.take().map(|mut shares| {
        shares.resize(replay.jobs.len().max(shares.len()), None);
        shares
    });
    let usage = ticker.usage.take();
    let (mut run, (placements, _)) = finish_run(
        options,
        scheduler,
        simulated,
        &replay,
        estimates,
        machine,
        &cluster,
        (held, node_shares.as_deref()),
        feedback,
        sinks,
        saving.and_then(|h| h.lock().ok().and_then(|mut s| s.take())),
    )?;
    if let (Some(nodes), Some(usage)) = (&options.machine.nodes, &usage) {
        run.nodes = Some(crate::node_report::NodesReport::new(nodes, &cluster, usage));
    }
    run.outages = outage_facility.as_ref().map(|f| {
        crate::outages::OutageReport::new(
            &outages,
            f,
            &cluster,
            processors,
            (0, last_arrival.max(1)),
        )
    });
    run.out_of_service = crate::outages::out_of_service(
        (outage_facility.as_ref()).map_or_else(Vec::new, |f| f.periods(&outages)),
        (failure_facility.as_ref()).map_or_else(Vec::new, |f| f.periods(processors)),
    );
    run.failures = failure_facility.map(|f| f.report(processors, 0, last_arrival.max(1)));
    Ok((run, (placements, node_shares)))
}

/// Applies to a trace read whole what `options` change in its jobs, in this order: the first
/// jobs kept, input shaking, the load factor, the estimate model, the machine of nodes (its
/// bandwidth demands). Returns the estimate model's description and the machine.
fn shape(options: &ReplayOptions, replay: &mut Replay) -> Result<(Option<String>, Machine)> {
    if let Some(n) = options.first_jobs {
        ensure!(
            n > 0,
            "{}: replay at least one job",
            key_value("first_jobs", 0)
        );
        replay.jobs.truncate(n);
    }
    if options.shake {
        shake(&mut replay.jobs, options.estimates.seed);
    }
    replay.scale_arrivals(options.load_factor).map_err(|latest| {
        invalid!(
            "{}: the last arrival would come {latest:.3e} s after the start, past the limit on times of {} s (about 3,000 years; docs/reference/limits.md)",
            key_value("load_factor", options.load_factor),
            engine::MAX_TIME
        )
    })?;
    let estimates = config::estimates::apply(&options.estimates, &mut replay.jobs)?;
    let machine =
        config::machine::apply(&options.machine, options.estimates.seed, &mut replay.jobs)?;
    tracing::info!(
        jobs = replay.jobs.len(),
        processors = replay.processors,
        "trace read"
    );
    Ok((estimates, machine))
}

/// A trace made ready to replay as [`ReplayOptions`] say, without simulating it: what a
/// simulation of it outside this crate needs (the Gymnasium environment's episodes are slices
/// of it). The jobs are those a whole-trace replay submits, in the same order.
#[derive(Debug)]
pub struct PreparedTrace {
    /// The trace as read, with its jobs changed by the options (first jobs, shaking, load
    /// factor, estimates, node demands).
    pub replay: Replay,
    /// The machine of nodes and the sharing model, if asked for.
    pub machine: Machine,
    /// The estimate model that replaced the trace's estimates, described (`None`: the trace's).
    pub estimates: Option<String>,
    /// Jobs the log says were stopped at their limit, to be marked killed where they end at
    /// their estimate (`Replay::mark_killed_at_limit`); empty when the estimates are not the
    /// trace's.
    pub stopped_at_limit: std::collections::HashSet<i64>,
    /// With [`ReplayOptions::feedback`]: the logged wait and user of every job, what the
    /// sessions are built from ([`feedback_workload`]).
    logged: Option<crate::feedback::Logged>,
}

/// Reads the whole trace of `options`, and with feedback the logged wait and user of every
/// job, in one reading of the file (a pipe can be read only once).
fn read_whole(options: &ReplayOptions) -> Result<(Replay, Option<crate::feedback::Logged>)> {
    let (trace, input, processors) = (&options.trace, &options.input, options.processors);
    if !options.feedback {
        return Ok((crate::trace::read_replay(trace, input, processors)?, None));
    }
    let mut logged = crate::feedback::Logged::default();
    let replay = crate::trace::read_replay_noting(trace, input, processors, &mut |record| {
        logged.note(record)
    })?;
    Ok((replay, Some(logged)))
}

/// Reads and prepares `options.trace` as a replay does before it simulates (checked as it
/// checks them; feedback's sessions are not built, but with `options.feedback` what they are
/// built from is kept: [`feedback_workload`]).
pub fn prepare(options: &ReplayOptions) -> Result<PreparedTrace> {
    options.check()?;
    let (mut replay, logged) = read_whole(options)?;
    let (estimates, machine) = shape(options, &mut replay)?;
    let stopped_at_limit = if estimates.is_none() {
        std::mem::take(&mut replay.stopped_at_limit)
    } else {
        std::collections::HashSet::new()
    };
    Ok(PreparedTrace {
        replay,
        machine,
        estimates,
        stopped_at_limit,
        logged,
    })
}

/// The independent jobs and the sessions of a trace's users, for a replay with feedback of
/// the jobs of `prepared` (the trace's, prepared by [`prepare`] with `options.feedback`): Zakay & Feitelson's sessions, as
/// `sitesim replay --feedback` builds them, and the rules it replays them with (the break that
/// starts a new session; users abandon sessions only with `feedback_abandon`).
pub fn feedback_workload(
    options: &ReplayOptions,
    prepared: &PreparedTrace,
) -> Result<(
    Vec<engine::FeedbackSession>,
    Vec<engine::Job>,
    FeedbackOptions,
)> {
    let jobs = &prepared.replay.jobs;
    let Some(logged) = &prepared.logged else {
        return Err(invalid!(
            "{}: the trace was prepared without {}, so its logged waits were not kept",
            options.trace.display(),
            key("feedback")
        ));
    };
    let (_, abandon) = feedback_setup(options, jobs);
    let (sessions, independent) = crate::feedback::sessions(logged, jobs)?;
    let rules = fit::sessions::SessionRules::default();
    Ok((
        sessions,
        independent,
        FeedbackOptions {
            min_break: rules.session_threshold + 1,
            abandon,
        },
    ))
}

/// A replay's run from its records: fair start times if asked for, dynP's policy usage, the
/// placements on a machine of nodes; the sessions of a replay with feedback go to the sinks.
#[allow(clippy::too_many_arguments)]
fn finish_run(
    options: &ReplayOptions,
    scheduler: SchedulerSpec,
    simulated: Simulated,
    replay: &Replay,
    estimates: Option<String>,
    machine: Machine,
    cluster: &Cluster,
    (held, node_shares): (Option<Vec<Intervals>>, Option<&[crate::sink::NodeShares]>),
    feedback: Option<FeedbackRun>,
    sinks: &mut [Box<dyn Sink>],
    saving: Option<power::NodeSaving>,
) -> Result<Replayed> {
    let processors = replay.processors;
    let Simulated {
        mut records,
        jobs,
        summary,
    } = simulated;
    if options.fairness {
        engine::add_fair_start_times(processors, &mut records).map_err(|source| {
            ScenarioError::Engine {
                context: "the fair-start simulation failed".into(),
                source,
            }
        })?;
    }
    let policy_usage = cluster.policy_usage().map(PolicyUsageReport::new);
    let slurm = crate::slurm_report::SlurmReport::new(cluster);
    let placements = held.map(|mut held| {
        held.resize(jobs, Vec::new());
        held
    });
    if let Some(feedback) = &feedback {
        for sink in sinks.iter_mut() {
            for session in &feedback.sessions {
                sink.session(session)?;
            }
        }
    }
    let feedback_users = match &feedback {
        Some(_) => {
            let mut users: Vec<i64> = records.iter().map(|j| j.user).collect();
            users.sort_unstable();
            users.dedup();
            users.len()
        }
        None => 0,
    };
    let summary = match summary {
        Some(summary) => Summary {
            input: replay.input,
            ..summary
        },
        None => {
            let options = SummaryOptions {
                processors,
                warmup: measured(options, feedback.as_ref().map(|f| f.closed.window)),
            };
            Summary::compute(&records, &options, replay.input)
        }
    };
    let (power, job_energies) = match &options.power {
        Some(file) => {
            let (report, energies) = replay_power(
                options,
                file,
                processors,
                &records,
                node_shares,
                summary.makespan,
                saving.as_ref(),
            )?;
            (Some(report), Some(energies))
        }
        None => (None, None),
    };
    Ok((
        ReplayRun {
            options: options.clone(),
            scheduler,
            jobs,
            feedback_users,
            input: replay.input,
            processors,
            estimates,
            machine,
            policy_usage,
            slurm,
            nodes: None,
            feedback,
            power,
            job_energies,
            outages: None,
            failures: None,
            out_of_service: Vec::new(),
            conversion: conversion_lines(&replay.header),
            requests: crate::requests::side_table_of(&replay.header),
            summary,
        },
        (placements, None),
    ))
}

/// The outages of a replay: its outages file's, expanded over `[0, horizon)` (its arrivals),
/// and Slurm's node events and maintenance reservations as recorded, placed on the replay's
/// clock (the trace's `UnixStartTime`). What Slurm's records leave out is logged.
fn replay_outages(
    options: &ReplayOptions,
    replay: &Replay,
    horizon: i64,
) -> Result<(
    Vec<config::outages::Outage>,
    Option<config::failures::NodeFailures>,
)> {
    let processors = replay.processors;
    let node_names: Option<Vec<String>> = (options.machine.nodes.as_ref())
        .map(|m| m.nodes.iter().map(|(name, _)| name.clone()).collect());
    let (mut outages, failures) = match &options.outages {
        Some(file) => {
            let name = file.display().to_string();
            let read = config::outages::ReplayOutages::load(file)?;
            (
                read.expand(&name, processors, node_names.as_deref(), horizon)?,
                read.failures(
                    &name,
                    processors,
                    (options.machine.nodes.as_ref()).map(|m| m.nodes.len() as u32),
                )?,
            )
        }
        None => (Vec::new(), None),
    };
    if options.events.is_none() && options.reservations.is_none() {
        return Ok((outages, failures));
    }
    let origin = replay.header.unix_start_time().ok_or_else(|| {
        invalid!(
            "{}: the trace {} does not say when its time 0 is (no UnixStartTime), so Slurm's events and reservations cannot be placed on its clock",
            key("events"),
            options.trace.display()
        )
    })?;
    let clock = options.input.sacct_options()?.clock;
    let events = match &options.events {
        Some(file) => {
            let name = file.display().to_string();
            let read = sacct::NodeEvents::read(file, clock)
                .map_err(|e| invalid!("{}: {e}", key("events")))?;
            let merged = read
                .merged(&name)
                .map_err(|e| invalid!("{}: {e}", key("events")))?;
            (merged, name)
        }
        None => (Vec::new(), String::new()),
    };
    let reservations = match &options.reservations {
        Some(file) => {
            let read = sacct::Reservations::read(file, clock)
                .map_err(|e| invalid!("{}: {e}", key("reservations")))?;
            (read.reservations, file.display().to_string())
        }
        None => (Vec::new(), String::new()),
    };
    // an event still open when the dump was made ends when the last job could end if it
    // started at its arrival
    let open_end = replay
        .jobs
        .iter()
        .map(|j| j.submit.saturating_add(j.estimate))
        .max()
        .unwrap_or(0)
        .max(horizon);
    let (slurm, left_out) = config::outages::of_slurm(
        (&events.0, &events.1),
        (&reservations.0, &reservations.1),
        origin,
        open_end,
        node_names.as_deref(),
    )?;
    for line in left_out {
        tracing::warn!("{line}");
    }
    outages.extend(slurm);
    Ok((outages, failures))
}

/// The file a replay's outages come from, for messages.
fn outage_origin(options: &ReplayOptions) -> String {
    [&options.outages, &options.events, &options.reservations]
        .into_iter()
        .flatten()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The machine a replay's `[power]` table is resolved against.
fn power_machine(options: &ReplayOptions, processors: u32) -> config::power::PowerMachine<'_> {
    match options.machine.nodes.as_ref() {
        Some(nodes) => config::power::PowerMachine::Nodes(nodes),
        None => config::power::PowerMachine::Processors {
            processors,
            node_processors: options.machine.node_processors,
        },
    }
}

/// The power report of a replay's `records` under the `[power]` table of `file`.
fn replay_power(
    options: &ReplayOptions,
    file: &std::path::Path,
    processors: u32,
    records: &[JobRecord],
    node_shares: Option<&[crate::sink::NodeShares]>,
    makespan: Window,
    saving: Option<&power::NodeSaving>,
) -> Result<(power::PowerReport, Vec<f64>)> {
    use crate::power_report::{PowerRun, logged_energies, meter_records, setup};
    let nodes = options.machine.nodes.as_ref();
    let setup = setup(file, power_machine(options, processors))?;
    let logged = match setup.jobs {
        config::power::JobCharge::Logged => logged_energies(&options.trace, &options.input)?,
        config::power::JobCharge::Model => Default::default(),
    };
    let kinds: Vec<String> = (options.input.resources.iter())
        .map(|(name, _)| name.clone())
        .collect();
    let run = PowerRun::new(setup, &kinds, nodes, logged);
    meter_records(run, records, node_shares, makespan, saving)
}

/// The `SacctInput` lines of a trace's header (what converting a sacct dump dropped or
/// altered), as (reason key, text): `lines` first, then one per reason.
fn conversion_lines(header: &swf::Header) -> Vec<(String, String)> {
    header
        .lines()
        .iter()
        .filter_map(|line| match line {
            swf::HeaderLine::Field { key, value } => {
                let rest = key.strip_prefix(sacct::REPORT_KEY)?;
                let reason = rest.strip_prefix('.').unwrap_or("lines");
                (rest.is_empty() || rest.starts_with('.'))
                    .then(|| (reason.to_string(), value.clone()))
            }
            swf::HeaderLine::Text(_) => None,
        })
        .collect()
}

/// The summary options of a replay on `processors` processors, if its summary can be built as
/// the records come: not with fair start times, which change the records afterwards.
/// `feedback_window`: a replay with feedback's measurement window ([`measured`]).
fn summary_options(
    options: &ReplayOptions,
    processors: u32,
    feedback_window: Option<Window>,
) -> Option<SummaryOptions> {
    (!options.fairness).then(|| SummaryOptions {
        processors,
        warmup: measured(options, feedback_window),
    })
}

/// Which jobs a replay's averages are over, and the window its utilization is measured over.
/// A replay with feedback and no `--warmup` is measured as a site-level run is: the jobs
/// submitted in its throughput window (first to last logged submit), with utilization over
/// that window, so that a job a scheduler starves until long after the last arrival (CTC-SP2
/// under EASY-SJF) cannot stretch the window and lower the utilization of everything before.
/// Otherwise `--warmup` decides (none: every job, over the makespan).
fn measured(options: &ReplayOptions, feedback_window: Option<Window>) -> metrics::Warmup {
    match (options.warmup, feedback_window) {
        (WarmupChoice::None, Some(window)) => metrics::Warmup::Interval {
            start: window.start,
            end: window.end,
            counted: metrics::Counted::default(),
        },
        _ => options.warmup.warmup(),
    }
}

/// The measurement window of a replay with feedback, from the first to the last logged submit
/// (both included), and the abandonment model if asked for.
fn feedback_setup(options: &ReplayOptions, jobs: &[engine::Job]) -> (Window, Option<Abandon>) {
    let first = jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    let last = jobs.iter().map(|j| j.submit).max().unwrap_or(0);
    let window = Window {
        start: first,
        end: last + 1,
    };
    let abandon = options.feedback_abandon.then_some(Abandon {
        a: users::kinds::shmueli::PAPER_CONTINUE_A,
        b: users::kinds::shmueli::PAPER_CONTINUE_B,
        seed: options.estimates.seed,
    });
    (window, abandon)
}

/// The share of jobs input shaking moves, and the largest move in seconds (thesis, section
/// 2.5.3: "changing the arrival time of 10% of the jobs to be ±u seconds earlier or later,
/// where u is e.g. uniformly distributed between 0 to 60").
pub const SHAKE: (f64, i64) = (0.1, 60);

/// Moves the submit time of [`SHAKE`]'s share of the jobs by up to its seconds, earlier or later
/// (never before 0), then restores submission order. Deterministic for a seed.
pub fn shake(jobs: &mut [engine::Job], seed: u64) {
    use rand::{Rng, SeedableRng};
    let (share, seconds) = SHAKE;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed ^ 0x7368_616b_6520_696e);
    for job in jobs.iter_mut() {
        if rng.random::<f64>() < share {
            let u = rng.random_range(0..=seconds);
            let delta = if rng.random::<bool>() { u } else { -u };
            job.submit = (job.submit + delta).max(0);
        }
    }
    jobs.sort_by_key(|j| (j.submit, j.job_id));
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
    /// With `--shake`: the seed of the shaking draws.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shake_seed: Option<u64>,
    /// With `--feedback`: throughput and sessions, as a site-level run reports them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub closed_loop: Option<&'a ClosedLoopSummary>,
    /// With `--feedback`: the replay's structure and what abandonment dropped.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub feedback: Option<FeedbackReport>,
    /// The job measures.
    pub summary: &'a Summary,
    /// dynP's policy usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy_usage: Option<&'a PolicyUsageReport>,
    /// The Slurm model's shares and waits by account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slurm: Option<&'a crate::slurm_report::SlurmReport>,
    /// On a machine of node types: the machine, and the jobs it held for good.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<&'a crate::node_report::NodesReport>,
    /// With a power model: energy, peak and mean power, carbon and cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<&'a power::PowerReport>,
    /// With `outages`: availability and what each outage took over the replay's arrivals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outages: Option<&'a crate::outages::OutageReport>,
    /// With an outages file's `[failures]`: node failures, jobs killed and work lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<&'a crate::failures::FailureReport>,
    /// For a trace converted from Slurm accounting: what reading it dropped or altered, by
    /// reason (`lines`: lines read and jobs kept).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub conversion: std::collections::BTreeMap<&'a str, &'a str>,
}

/// summary.json's `feedback` section.
#[derive(Debug, Serialize)]
pub struct FeedbackReport {
    /// Whether users abandon sessions, and with which continue probability.
    pub abandon: Option<AbandonReport>,
    /// Sessions, batches, dependent and dropped jobs.
    #[serde(flatten)]
    pub counts: FeedbackCounts,
}

/// The continue probability a / (b r + 1) of `--feedback-abandon`, r in minutes.
#[derive(Debug, Serialize)]
pub struct AbandonReport {
    /// a.
    pub a: f64,
    /// b, per minute.
    pub b: f64,
    /// The seed of the users' draws.
    pub seed: u64,
}

impl ReplayRun {
    /// The run's energy, power, carbon and cost as the measure catalogue reads them (`None`
    /// without a power model).
    pub fn measured_power(&self) -> Option<metrics::PowerUse> {
        self.power.as_ref().map(crate::power_report::measured)
    }

    /// How the summary is computed (machine size and warm-up exclusion).
    pub fn summary_options(&self) -> SummaryOptions {
        SummaryOptions {
            processors: self.processors,
            warmup: measured(
                &self.options,
                self.feedback.as_ref().map(|f| f.closed.window),
            ),
        }
    }

    /// The summary of the jobs: built while they ran when the warm-up allows it (the same
    /// bits as computing it from the records, which it does otherwise).
    pub fn summary(&self) -> Summary {
        self.summary.clone()
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
        let feedback = match (o.feedback, o.feedback_abandon) {
            (false, _) => "",
            (true, false) => "with feedback ",
            (true, true) => "with feedback and abandonment ",
        };
        format!(
            "replay {feedback}of {} under {} on {} processors{first}{with_machine}{load}{with_estimates}",
            o.trace.display(),
            self.scheduler.label(),
            self.processors
        )
    }

    /// The console's lines of the outages and the node failures (empty without either).
    pub fn outage_lines(&self) -> String {
        let outages = self.outages.as_ref().map(|o| o.line());
        let failures = self.failures.as_ref().map(|f| f.line());
        outages.into_iter().chain(failures).collect()
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
            shake_seed: self.options.shake.then_some(self.options.estimates.seed),
            closed_loop: self.feedback.as_ref().map(|f| &f.closed),
            feedback: self.feedback.as_ref().map(|f| FeedbackReport {
                abandon: f.abandon.map(|(a, b)| AbandonReport {
                    a,
                    b,
                    seed: self.options.estimates.seed,
                }),
                counts: f.counts,
            }),
            summary,
            policy_usage: self.policy_usage.as_ref(),
            slurm: self.slurm.as_ref(),
            nodes: self.nodes.as_ref(),
            power: self.power.as_ref(),
            outages: self.outages.as_ref(),
            failures: self.failures.as_ref(),
            conversion: self
                .conversion
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jobs(n: i64) -> Vec<engine::Job> {
        (0..n)
            .map(|i| engine::Job {
                array_task: Default::default(),
                reservation: Default::default(),
                shape: Default::default(),
                job_id: i,
                user: 1,
                group: 1,
                submit: 1000 + 100 * i,
                processors: 1,
                estimate: 60,
                runtime: 30,
                bandwidth: 0,
                partition: -1,
                queue: -1,
                extra: engine::Extra::NONE,
            })
            .collect()
    }

    #[test]
    fn shaking_moves_a_tenth_of_the_jobs_by_at_most_a_minute() {
        let original = jobs(10_000);
        let mut shaken = original.clone();
        shake(&mut shaken, 7);
        let mut by_id: Vec<&engine::Job> = shaken.iter().collect();
        by_id.sort_by_key(|j| j.job_id);
        let moved = by_id
            .iter()
            .zip(&original)
            .filter(|(s, o)| s.submit != o.submit)
            .count();
        // 10 % are chosen; u = 0 leaves about 1 in 61 of those in place.
        assert!((900..=1100).contains(&moved), "{moved} moved");
        assert!(
            by_id
                .iter()
                .zip(&original)
                .all(|(s, o)| (s.submit - o.submit).abs() <= SHAKE.1)
        );
        assert!(shaken.windows(2).all(|w| w[0].submit <= w[1].submit));
        let mut again = original.clone();
        shake(&mut again, 7);
        assert_eq!(again, shaken, "same seed, same shaking");
        let mut other = original;
        shake(&mut other, 8);
        assert_ne!(other, shaken);
    }
}
