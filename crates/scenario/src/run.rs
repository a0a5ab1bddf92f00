//! A site-level run: simulate a site (its population, machine and scheduler) and measure it.
//!
//! A [`crate::Simulation`] of a site calls `simulate_on` (and, for the headroom,
//! `measure_headroom`); [`SiteRun`] holds everything measured and [`SiteRun::report`] what
//! summary.json holds. The records go to the simulation's sinks as they become final
//! ([`crate::sink`]); [`WorkloadSwf`] writes the generated workload.

use crate::outages::OutageCost;
use std::io::{Read, Seek, SeekFrom, Write};
#[cfg(test)]
use std::path::Path;
use std::sync::Arc;

use cluster::{Cluster, QueueOrder, SchedulerSpec};
use config::site::{Site, SiteFile};
use config::{Result, ScenarioError, invalid};
use engine::ClosedSink;
use metrics::{
    BatchRecord, ClosedLoopBuilder, ClosedLoopSummary, JobRecord, SessionRecord, Summary,
    SummaryBuilder, SummaryOptions, Warmup, Window,
};
use serde::Serialize;
use users::{Population, Submission};

use crate::batsim::Intervals;
use crate::output::{OutputFormat, io_error};
use crate::policy_usage::PolicyUsageReport;
use crate::sink::{JobEvent, RunEnd, RunHeader, Sink};

/// A simulated site and everything measured in it.
pub struct SiteRun {
    /// The resolved site (file plus command-line overrides).
    pub site: Site,
    /// The scheduler.
    pub scheduler: SchedulerSpec,
    /// Group index of each user.
    pub user_groups: Vec<usize>,
    /// Job measures over the measurement window.
    pub summary: Summary,
    /// Throughput and sessions over the measurement window.
    pub closed: ClosedLoopSummary,
    /// dynP's policy usage (dynP schedulers only).
    pub policy_usage: Option<PolicyUsageReport>,
    /// The Slurm model's shares and waits by account (the Slurm model only).
    pub slurm: Option<crate::slurm_report::SlurmReport>,
    /// On a machine of `[[nodes]]`: the machine, its utilisation and waits by partition and
    /// GPU type, and the jobs it held for good.
    pub nodes: Option<crate::node_report::NodesReport>,
    /// With a power model (`[power]`, `power`): the run's energy, peak power, carbon and cost,
    /// from its start to its last job's end.
    pub power: Option<power::PowerReport>,
    /// With a power model: the IT energy charged to each job, J, by record.
    pub job_energies: Option<Vec<f64>>,
    /// With `[[outages]]`: what they took over the measured window.
    pub outages: Option<crate::outages::OutageReport>,
    /// With `[failures]`: what the node failures did over the measured window.
    pub failures: Option<crate::failures::FailureReport>,
    /// Every period processors were out of service over the whole run, outages and failures,
    /// by start (outages.csv).
    pub out_of_service: Vec<crate::outages::OutOfService>,
    /// Each group's own measures, over the same window (sites of more than one group only).
    pub groups: Vec<GroupRun>,
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

/// Processors of the uncontended machine `measure_headroom` simulates: more than any site's
/// users can ever occupy at once, so no job waits.
pub const UNCONTENDED_PROCESSORS: u32 = 1 << 30;

/// The machine a site is simulated on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Capacity {
    /// The site's machine (its processors, nodes and sharing model).
    Site,
    /// [`UNCONTENDED_PROCESSORS`] counted processors, no nodes, no sharing: nothing waits and
    /// nothing is stretched. The users still draw job sizes for the site's machine.
    Uncontended,
}

/// Checks everything a simulation of `site` would check, without simulating: the scheduler,
/// the calendar, every group and its model, the population against the machine, and the
/// machine of nodes. A sweep calls it for every configuration before its first run, so a bad
/// value stops the sweep before anything is written.
pub fn check(site: &Site, default_model: &Arc<usermodel::Model>) -> Result<()> {
    let scheduler = site_scheduler(site)?;
    prepare(site, default_model, scheduler, Capacity::Site, None).map(|_| ())
}

/// The scheduler a site's `[scheduler]` names; errors name the site.
pub fn site_scheduler(site: &Site) -> Result<SchedulerSpec> {
    let spec = site
        .scheduler_section()?
        .spec()
        .map_err(|e| invalid!("{}: {}", site.origin, e.marked()))?;
    if site.file.scheduler.slurm_conf.is_some() && !spec.backfill().takes("slurm") {
        return Err(invalid!(
            "{}: scheduler.slurm_conf configures the Slurm schedulers of a site run (its machine is [site] processors), and this scheduler is {}; a slurm.conf's nodes are the machine of a replay",
            site.origin,
            spec.label()
        ));
    }
    Ok(spec)
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
    let node_machine = match capacity {
        Capacity::Site => site.node_machine()?,
        Capacity::Uncontended => None,
    };
    let (cluster, sharing) = match (capacity, nodes) {
        (Capacity::Uncontended, _) => (Cluster::new(UNCONTENDED_PROCESSORS, built), None),
        (Capacity::Site, None) => match node_machine {
            None => (Cluster::new(processors, built), sharing),
            Some(machine) => {
                // The nodes' memory and GPUs are the run's resource kinds, in this order.
                let kinds: Vec<String> = machine.resources()?.into_iter().map(|(k, _)| k).collect();
                let cluster = Cluster::new(processors, built)
                    .with_pool(machine.pool_spec(&kinds))
                    .map_err(|e| invalid!("{}: {e}", site.origin))?;
                (cluster, sharing)
            }
        },
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

/// A site made ready to simulate as `sitesim run` does, without simulating it: the
/// population (its users drawn from the site's seed), the cluster under the site's scheduler
/// with its queue order replaced by `order` when given, and the sharing model on a machine of
/// nodes. What a simulation of the site outside this crate starts from (the Gymnasium
/// environment's closed loop).
pub fn prepare_site(
    site: &Site,
    default_model: &Arc<usermodel::Model>,
    order: Option<Box<dyn QueueOrder>>,
) -> Result<(Population, Cluster, Option<engine::MemoryBandwidth>)> {
    let scheduler = site_scheduler(site)?;
    let Prepared {
        population,
        cluster,
        sharing,
    } = prepare(site, default_model, scheduler, Capacity::Site, order)?;
    Ok((population, cluster, sharing))
}

/// Measures the run's headroom (paper-independent; issue "does user-aware scheduling pay?"):
/// simulates the same site and seed once on an uncontended machine (FCFS; nothing waits) and,
/// unless the run is EASY, once under EASY, and stores [`metrics::Headroom`] in
/// `run.closed.headroom`. The users' draws are the same in all three runs (common random
/// numbers), so the differences are the scheduler's and the machine's alone. The progress of
/// its simulations goes to `progress` (their [`crate::progress::Tick::what`] is
/// `headroom: uncontended machine` or `headroom: EASY`).
pub(crate) fn measure_headroom(
    run: &mut SiteRun,
    default_model: &Arc<usermodel::Model>,
    progress: crate::progress::ProgressFn<'_>,
) -> Result<()> {
    let throughput = |r: &SiteRun| r.closed.submitted_per_hour;
    let spec = |name: &str| {
        schedulers::REGISTRY
            .spec(name, &cluster::ParamValues::new())
            .map_err(|e| invalid!("{}", config::naming::policy_error(&e)))
    };
    fn alone(
        site: &Site,
        default_model: &Arc<usermodel::Model>,
        scheduler: SchedulerSpec,
        capacity: Capacity,
        what: &'static str,
        progress: crate::progress::ProgressFn<'_>,
        sinks: &mut [Box<dyn Sink>],
    ) -> Result<SiteRun> {
        simulate_on(SiteSimulation {
            site: site.clone(),
            default_model,
            scheduler,
            capacity,
            order: None,
            fairness: false,
            progress,
            what,
            sinks,
        })
        .map(|(run, _)| run)
    }
    // Under the Slurm model, the CPU time each user got on the uncontended machine: the
    // baseline of its share measures (what the users' demand alone gives).
    let delivered = Arc::new(std::sync::Mutex::new(Vec::new()));
    let mut sinks: Vec<Box<dyn Sink>> = Vec::new();
    if run.slurm.is_some() {
        sinks.push(Box::new(CpuTime(Arc::clone(&delivered))));
    }
    let uncontended = alone(
        &run.site,
        default_model,
        spec("fcfs")?,
        Capacity::Uncontended,
        "headroom: uncontended machine",
        &mut *progress,
        &mut sinks,
    )?;
    if let Some(slurm) = run.slurm.as_mut() {
        let delivered = delivered.lock().map_err(|_| {
            ScenarioError::Invalid("measuring the uncontended run failed unexpectedly".into())
        })?;
        slurm.set_uncontended(&delivered);
    }
    let easy = if run.scheduler == spec("easy")? {
        throughput(run)
    } else {
        throughput(&alone(
            &run.site,
            default_model,
            spec("easy")?,
            Capacity::Site,
            "headroom: EASY",
            &mut *progress,
            &mut [],
        )?)
    };
    run.closed.headroom = Some(metrics::Headroom::new(
        throughput(run),
        easy,
        throughput(&uncontended),
    ));
    Ok(())
}

/// Refuses `outage_costs` for a site with neither `[[outages]]` nor `[failures]`, naming the
/// file and the key.
pub(crate) fn check_outage_costs(site: &Site) -> Result<()> {
    if site.file.outages.is_empty() && site.file.failures.is_none() {
        return Err(invalid!(
            "{}: {} measures what [[outages]] and [failures] cost, and the site has neither",
            site.origin,
            config::naming::key("outage_costs")
        ));
    }
    Ok(())
}

/// Measures what each of `run`'s outages and its node failures cost (`outage_costs`): for each
/// `[[outages]]` table, and for `[failures]`, the same site (same users, same seed, same
/// scheduler) simulated without it and compared with `run` over the same measured window
/// ([`crate::outages::OutageCost`]). One more simulation each ([`check_outage_costs`] refuses
/// a site with neither before its run).
pub(crate) fn measure_outage_costs(
    run: &mut SiteRun,
    default_model: &Arc<usermodel::Model>,
    progress: crate::progress::ProgressFn<'_>,
) -> Result<()> {
    let sections = run.site.file.outages.len();
    let failures = run.site.file.failures.is_some();
    let measures = |r: &SiteRun| -> [f64; 3] {
        [
            r.summary.wait_seconds.mean,
            r.closed.submitted_per_hour,
            r.closed.mean_session_jobs,
        ]
    };
    let with = measures(run);
    let without = |site: Site, progress: crate::progress::ProgressFn<'_>| -> Result<[f64; 3]> {
        let (other, _) = simulate_on(SiteSimulation {
            site,
            default_model,
            scheduler: run.scheduler.clone(),
            capacity: Capacity::Site,
            order: None,
            fairness: false,
            progress,
            what: "outage costs: the run without one outage",
            sinks: &mut [],
        })?;
        Ok(measures(&other))
    };
    let mut costs = Vec::with_capacity(sections);
    for index in 0..sections {
        let mut site = run.site.clone();
        site.file.outages.remove(index);
        costs.push(OutageCost::between(with, without(site, &mut *progress)?));
    }
    let failure_cost = if failures {
        let mut site = run.site.clone();
        site.file.failures = None;
        Some(OutageCost::between(with, without(site, &mut *progress)?))
    } else {
        None
    };
    crate::outages::record_costs(
        run.outages.as_mut(),
        costs,
        run.failures.as_mut(),
        failure_cost,
    );
    Ok(())
}

/// Collects each job's (group id, user id, CPU-seconds) in submission order: the CPU time each
/// user got ([`crate::slurm_report::SlurmReport::set_uncontended`]).
struct CpuTime(Arc<std::sync::Mutex<Vec<(i64, i64, f64)>>>);

impl Sink for CpuTime {
    fn job(&mut self, job: JobEvent<'_>) -> Result<()> {
        let r = job.record;
        // the group id the closed loop gives the scheduler
        let group = job.owner.map_or(-1, |(s, _)| s.group);
        let cpu_seconds = f64::from(r.processors) * (r.end - r.start) as f64;
        self.0
            .lock()
            .map_err(|_| ScenarioError::Invalid("a run's CPU time was lost".into()))?
            .push((group, r.user, cpu_seconds));
        Ok(())
    }

    fn finish(self: Box<Self>, _end: &RunEnd<'_>) -> Result<()> {
        Ok(())
    }
}

/// One simulation of a site, as [`simulate_on`] carries it out.
pub(crate) struct SiteSimulation<'a, 'p, 's> {
    /// The site.
    pub(crate) site: Site,
    /// What `models = "embedded"` means.
    pub(crate) default_model: &'a Arc<usermodel::Model>,
    /// The scheduler.
    pub(crate) scheduler: SchedulerSpec,
    /// The machine.
    pub(crate) capacity: Capacity,
    /// A queue order replacing the scheduler's (its backfilling rule kept).
    pub(crate) order: Option<Box<dyn QueueOrder>>,
    /// Whether to compute every job's fair start time (one more, conservative, simulation of
    /// the generated jobs), so the summary reports unfairness: the records are kept whole.
    pub(crate) fairness: bool,
    /// Where the simulated time goes.
    pub(crate) progress: crate::progress::ProgressFn<'p>,
    /// The simulation's name in progress reports.
    pub(crate) what: &'static str,
    /// Where the records go as they become final.
    pub(crate) sinks: &'s mut [Box<dyn Sink>],
}

/// Simulates a site and measures it as the records come, handing them to the sinks (on a
/// second thread when there are any, so the simulation goes on while they are written). Its
/// memory follows the jobs in flight, not the length of the run, unless fair start times are
/// asked for (they change the records after the run, so the run is kept whole first). Returns
/// the run and, on a machine of nodes when a sink wants them, the processors each job held.
/// Where the jobs of a run on a machine of nodes ran, when a sink wants it: the processors
/// each held (a processor map) and what each held on each node (a machine of node types).
pub(crate) type Placed = (Option<Vec<Intervals>>, Option<Vec<crate::sink::NodeShares>>);

pub(crate) fn simulate_on(sim: SiteSimulation<'_, '_, '_>) -> Result<(SiteRun, Placed)> {
    let SiteSimulation {
        site,
        default_model,
        scheduler,
        capacity,
        order,
        fairness,
        progress,
        what,
        sinks,
    } = sim;
    let Prepared {
        population,
        mut cluster,
        sharing,
    } = prepare(&site, default_model, scheduler.clone(), capacity, order)?;
    crate::slurm_report::sample_shares_if_wanted(&mut cluster, sinks);
    let file: &SiteFile = &site.file;
    let processors = file.site.processors;
    let horizon = i64::from(file.run.weeks) * users::cycle::WEEK;
    let warmup = i64::from(file.run.warmup_days) * users::cycle::DAY;
    let user_groups: Vec<usize> = population.profiles().iter().map(|p| p.group).collect();
    // The site's [power], read and resolved once (its series included), checked before the
    // simulation: the meter's, and the policies' (a cap, a carbon-aware delay), which are not
    // applied on the uncontended machine of headroom, where nothing waits.
    let machine = site.node_machine()?;
    let setup = match &file.power {
        Some(choice) => {
            let input =
                config::power::PowerInput::of_site(choice, &site.origin, site.base.as_deref())?;
            Some(input.resolve(match &machine {
                Some(nodes) => config::power::PowerMachine::Nodes(nodes),
                None => config::power::PowerMachine::Processors {
                    processors,
                    node_processors: file.site.node_processors,
                },
            })?)
        }
        None => None,
    };
    let mut cluster = cluster;
    let facility = match (&setup, capacity) {
        (Some(setup), Capacity::Site) => {
            let kinds: Vec<String> = match &machine {
                Some(m) => m.resources()?.into_iter().map(|(k, _)| k).collect(),
                None => Vec::new(),
            };
            let groups: Vec<String> = file.groups.iter().map(|g| g.name.clone()).collect();
            crate::facility::PowerFacility::new(setup, &kinds, Some(&groups), file.run.seed)?
        }
        _ => None,
    };
    if let Some(facility) = &facility {
        cluster = crate::facility::prepare(cluster, facility)?;
    }
    let cap = facility.as_ref().and_then(|f| f.cap_capacity());
    let saving = facility.as_ref().and_then(|f| f.saving());
    // The site's outages, on the site's machine only (not the uncontended one of headroom).
    let outages = match capacity {
        Capacity::Site => site.outages()?,
        _ => Vec::new(),
    };
    let node_cpus: Option<Vec<u32>> =
        (cluster.pool()).map(|p| p.capacity().iter().map(|a| a.cpus).collect());
    let outage_facility =
        crate::outages::OutageFacility::new(&outages, processors, &[], node_cpus.as_deref())
            .map_err(|e| config::invalid!("{}: {e}", site.origin))?;
    if let Some(o) = &outage_facility {
        if saving.is_some() {
            return Err(config::invalid!(
                "{}: outages and idle nodes that power down (`power.suspend_time_s`) are not modelled together yet",
                site.origin
            ));
        }
        cluster = o
            .prepare(cluster)
            .map_err(|e| config::invalid!("{}: {e}", site.origin))?;
    }
    // The site's node failures, drawn from the run's seed (the site's machine only).
    let failure_facility = match capacity {
        Capacity::Site => site.failures()?,
        _ => None,
    }
    .map(|spec| crate::failures::FailureFacility::new(spec, file.run.seed));
    if failure_facility.is_some() {
        crate::failures::check(
            &site.origin,
            &cluster,
            saving.is_some(),
            sharing.is_some(),
            &format!("scheduler {}", scheduler.label()),
        )?;
    }
    let options = engine::SimOptions {
        sharing,
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
    let mut ticker = crate::progress::Ticker::new(progress, what, horizon);
    // On a machine of nodes, where each job ran, if a sink wants it.
    let mut ticker = crate::batsim::Placements {
        inner: &mut ticker,
        held: (cluster.nodes().is_some() && sinks.iter().any(|s| s.wants_placements()))
            .then(Vec::new),
        node_shares: (cluster.pool().is_some()
            && (file.power.is_some() || sinks.iter().any(|s| s.wants_node_shares())))
        .then(Vec::new),
        usage: cluster
            .pool()
            .is_some()
            .then(crate::node_report::NodeUsage::default),
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
    let engine_error = |source| {
        crate::facility::cap_error(cap, &source).unwrap_or_else(|| ScenarioError::Engine {
            context: "the simulation failed".into(),
            source,
        })
    };
    let power = setup.map(|setup| {
        crate::power_report::PowerRun::new(setup, &[], machine.as_ref(), Default::default())
    });
    let mut feed = Feed {
        metered: power.is_some().then(Vec::new),
        measures: &mut measures,
        sinks,
        jobs: 0,
        error: None,
    };
    if fairness {
        // Kept whole (fair start times change the records after the run), then fed.
        let mut run = engine::run_population_with(&mut cluster, population, &mut ticker, &options)
            .map_err(engine_error)?;
        let last_submit = run.records.iter().map(|r| r.submit).max().unwrap_or(0);
        ticker.inner.restart("fair start times", last_submit);
        engine::add_fair_start_times_observed(processors, &mut run.records, ticker.inner).map_err(
            |source| ScenarioError::Engine {
                context: "the fair-start simulation failed".into(),
                source,
            },
        )?;
        for (record, submission) in run.records.into_iter().zip(&run.submissions) {
            feed.job(record, submission);
        }
        for s in run.sessions {
            feed.session(s);
        }
        for b in run.batches {
            feed.batch(b);
        }
    } else if feed.sinks.is_empty() {
        engine::run_population_into(&mut cluster, population, &mut ticker, &options, &mut feed)
            .map_err(engine_error)?;
    } else {
        // Measured and written on a second thread while the simulation goes on.
        feed = std::thread::scope(|scope| {
            let (to_sink, received) = std::sync::mpsc::sync_channel::<Vec<Final>>(16);
            let consumer = scope.spawn(move || {
                for chunk in received {
                    for item in chunk {
                        match item {
                            Final::Job(record, submission) => feed.job(record, &submission),
                            Final::Session(session) => feed.session(session),
                            Final::Batch(batch) => feed.batch(batch),
                        }
                    }
                }
                feed
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
            let feed = consumer.join().map_err(|_| {
                ScenarioError::Invalid("writing the run's tables failed unexpectedly".into())
            })?;
            simulated.map_err(engine_error)?;
            Ok::<_, ScenarioError>(feed)
        })?;
    }
    if let Some(e) = feed.error {
        return Err(e);
    }
    let jobs = feed.jobs;
    let metered = feed.metered.take();
    let policy_usage = cluster.policy_usage().map(PolicyUsageReport::new);
    let slurm = crate::slurm_report::SlurmReport::new(&cluster);
    let (summary, closed, groups) = measures.finish(&site.file, &user_groups)?;
    let placements = ticker.held.take().map(|mut held| {
        held.resize(jobs, Vec::new());
        held
    });
    let node_shares = ticker.node_shares.take();
    let (power, job_energies) = match (power, metered) {
        (Some(run), Some(records)) => {
            // from the run's start to its last job's end
            let end = records
                .iter()
                .map(|r| r.end)
                .max()
                .unwrap_or(0)
                .max(horizon);
            let (report, energies) = crate::power_report::meter_records(
                run,
                &records,
                node_shares.as_deref(),
                Window { start: 0, end },
                saving
                    .as_ref()
                    .and_then(|h| h.lock().ok().and_then(|mut s| s.take()))
                    .as_ref(),
            )?;
            (Some(report), Some(energies))
        }
        _ => (None, None),
    };
    let out_of_service = crate::outages::out_of_service(
        (outage_facility.as_ref()).map_or_else(Vec::new, |f| f.periods(&outages)),
        (failure_facility.as_ref()).map_or_else(Vec::new, |f| f.periods(processors)),
    );
    let outages = outage_facility.map(|f| {
        crate::outages::OutageReport::new(&outages, &f, &cluster, processors, (warmup, horizon))
    });
    let failures = failure_facility.map(|f| f.report(processors, warmup, horizon));
    let nodes = match (site.node_machine()?, ticker.usage.take()) {
        (Some(machine), Some(usage)) => Some(crate::node_report::NodesReport::new(
            &machine, &cluster, &usage,
        )),
        _ => None,
    };
    Ok((
        SiteRun {
            site,
            scheduler,
            user_groups,
            summary,
            closed,
            policy_usage,
            slurm,
            nodes,
            power,
            job_energies,
            outages,
            failures,
            out_of_service,
            groups,
        },
        (placements, node_shares),
    ))
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

/// A final record on its way from the simulation to the [`Feed`] on the writing thread. Most
/// are jobs: boxing the job variant to shrink the rare sessions and batches would allocate once
/// per job.
#[allow(clippy::large_enum_variant)]
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

/// Measures a run's records and hands them to its sinks as the engine hands them out; the
/// first sink error stops the writing and is reported when the simulation is over.
struct Feed<'m, 'a, 's> {
    measures: &'m mut Measures<'a>,
    sinks: &'s mut [Box<dyn Sink>],
    /// With a power model: every record, metered once the node shares are known.
    metered: Option<Vec<JobRecord>>,
    /// Jobs fed so far.
    jobs: usize,
    error: Option<ScenarioError>,
}

impl Feed<'_, '_, '_> {
    /// Gives `event` to every sink until one fails.
    fn each(&mut self, mut give: impl FnMut(&mut dyn Sink) -> Result<()>) {
        if self.error.is_some() {
            return;
        }
        for sink in self.sinks.iter_mut() {
            if let Err(e) = give(sink.as_mut()) {
                self.error = Some(e);
                return;
            }
        }
    }
}

impl ClosedSink for Feed<'_, '_, '_> {
    fn job(&mut self, record: JobRecord, submission: &Submission) {
        self.measures.job(&record, submission);
        self.jobs += 1;
        if let Some(metered) = self.metered.as_mut() {
            metered.push(record.clone());
        }
        let group = self.measures.group_of(submission.user).unwrap_or(0);
        let event = JobEvent {
            record: &record,
            owner: Some((submission, group)),
        };
        self.each(|sink| sink.job(event));
    }
    fn session(&mut self, session: SessionRecord) {
        self.measures.session(&session);
        self.each(|sink| sink.session(&session));
    }
    fn batch(&mut self, batch: BatchRecord) {
        self.measures.batch(&batch);
        self.each(|sink| sink.batch(&batch));
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
    /// The Slurm model's shares and waits by account.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slurm: Option<&'a crate::slurm_report::SlurmReport>,
    /// On a machine of `[[nodes]]`: the machine, its utilisation, waits and held jobs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nodes: Option<&'a crate::node_report::NodesReport>,
    /// With a power model: energy, peak and mean power, carbon and cost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power: Option<&'a power::PowerReport>,
    /// With `[[outages]]`: availability and what each outage took over the measured window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outages: Option<&'a crate::outages::OutageReport>,
    /// With `[failures]`: the node failures, jobs killed and work lost over the measured window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<&'a crate::failures::FailureReport>,
    /// Each group's measures (sites of more than one group only).
    #[serde(skip_serializing_if = "<[GroupRun]>::is_empty")]
    pub groups: &'a [GroupRun],
}

impl SiteRun {
    /// The run's energy, power, carbon and cost as the measure catalogue reads them (`None`
    /// without a power model).
    pub fn measured_power(&self) -> Option<metrics::PowerUse> {
        self.power.as_ref().map(crate::power_report::measured)
    }

    /// The console's lines of the outages and the node failures (empty without either).
    pub fn outage_lines(&self) -> String {
        let outages = self.outages.as_ref().map(|o| o.line());
        let failures = self.failures.as_ref().map(|f| f.line());
        outages.into_iter().chain(failures).collect()
    }

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
            slurm: self.slurm.as_ref(),
            nodes: self.nodes.as_ref(),
            power: self.power.as_ref(),
            outages: self.outages.as_ref(),
            failures: self.failures.as_ref(),
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
}

/// `workload.swf`: the generated workload of a site run as SWF, for other simulators (written
/// on request: `--swf PATH`). The jobs as they ran (wait, runtime, killed = status 0, "failed"),
/// with the user's estimate as requested time, users numbered from 1 as in jobs.csv, groups
/// numbered from 1 in the file's order (named in the header), and each batch's dependency on
/// the previous batch's last job (fields 17 and 18), so feedback-aware simulators can replay
/// the closed loop.
#[derive(Debug, Clone, Copy)]
pub struct WorkloadSwf;

impl OutputFormat for WorkloadSwf {
    fn file_name(&self) -> &'static str {
        "workload.swf"
    }
    fn about(&self) -> &'static str {
        "the generated workload as SWF, with each batch's dependency on the previous one (fields 17 and 18)"
    }
    fn applies(&self, run: &RunHeader) -> bool {
        run.site.is_some()
    }
    fn on_request(&self) -> bool {
        true
    }
    fn sink(&self, run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        let site = run
            .site
            .ok_or_else(|| invalid!("workload.swf is the workload of a site run"))?;
        let scratch = match run.scratch {
            Some(dir) => tempfile::tempfile_in(dir),
            None => tempfile::tempfile(),
        }
        .map_err(|e| io_error("workload.swf", e))?;
        let lines = swf::SwfWriter::new(std::io::BufWriter::new(scratch), &swf::Header::new())
            .map_err(|e| io_error("workload.swf", e))?;
        Ok(Box::new(SwfSink {
            site: site.clone(),
            scheduler: run.scheduler.to_string(),
            users: run.users,
            lines,
            jobs: 0,
            out,
        }))
    }
}

/// Writes the generated workload's lines to a scratch file as the jobs come, and the header
/// (which counts them) then the lines at the end.
struct SwfSink {
    site: Site,
    scheduler: String,
    users: usize,
    lines: swf::SwfWriter<std::io::BufWriter<std::fs::File>>,
    jobs: u64,
    out: Box<dyn Write + Send>,
}

impl Sink for SwfSink {
    fn job(&mut self, job: JobEvent<'_>) -> Result<()> {
        let (preceding, group) = job.owner.map_or((None, 1), |(s, _)| (s.preceding, s.group));
        let r = job.record;
        let record = swf::Record {
            job_number: r.job_id,
            submit_time: r.submit,
            wait_time: r.wait(),
            run_time: r.runtime(),
            allocated_processors: i64::from(r.processors),
            requested_processors: i64::from(r.processors),
            requested_time: r.estimate,
            status: if r.killed { 0 } else { 1 },
            user_id: r.user,
            group_id: group,
            preceding_job: preceding.map_or(-1, |(id, _)| id),
            think_time: preceding.map_or(-1, |(_, think)| think),
            ..swf::Record::default()
        };
        self.jobs += 1;
        self.lines
            .write_record(&record)
            .map_err(|e| io_error("workload.swf", e))
    }

    fn finish(mut self: Box<Self>, _end: &RunEnd<'_>) -> Result<()> {
        let fail = |e| io_error("workload.swf", e);
        let header = swf_header(&self.site, &self.scheduler, self.users, self.jobs);
        let mut lines = self
            .lines
            .finish()
            .map_err(fail)?
            .into_inner()
            .map_err(|e| fail(e.into_error()))?;
        swf::SwfWriter::new(&mut self.out, &header)
            .and_then(swf::SwfWriter::finish)
            .map_err(fail)?;
        lines.seek(SeekFrom::Start(0)).map_err(fail)?;
        let mut buffer = vec![0u8; 1 << 16];
        loop {
            let n = lines.read(&mut buffer).map_err(fail)?;
            if n == 0 {
                break;
            }
            self.out.write_all(&buffer[..n]).map_err(fail)?;
        }
        self.out.flush().map_err(fail)
    }
}

/// The generated workload's SWF header, for `jobs` jobs.
fn swf_header(site: &Site, scheduler: &str, users: usize, jobs: u64) -> swf::Header {
    let mut header = swf::Header::new();
    let file = &site.file;
    header.push_field("Version", "2.2");
    header.push_field("Computer", "sitesim site-level simulation");
    header.push_field("Installation", &site.origin);
    header.push_field(
        "Note",
        format!(
            "{}, {}, scheduler {}, seed {}; generated by sitesim {}",
            config::count(users as u64, "user"),
            config::count(file.run.weeks, "week"),
            scheduler,
            file.run.seed,
            env!("CARGO_PKG_VERSION")
        ),
    );
    header.push_field("MaxJobs", jobs);
    header.push_field("MaxRecords", jobs);
    header.push_field("MaxNodes", file.site.processors);
    header.push_field("MaxProcs", file.site.processors);
    header.push_field("UnixStartTime", site.unix_start());
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Simulates `site`, with its headroom if asked.
    fn simulate(site: Site, model: &Arc<usermodel::Model>, headroom: bool) -> Result<SiteRun> {
        let executed = crate::Simulation::site(site, Arc::clone(model))
            .headroom(headroom)
            .execute()?;
        match executed.outcome {
            crate::Outcome::Site(run) => Ok(*run),
            crate::Outcome::Replay(_) => Err(invalid!("not a site run")),
        }
    }

    /// The site of the file at `path` with the options `given` (key, value) on top.
    fn resolve(path: &Path, given: &[(&str, toml::Value)]) -> Result<Site> {
        let values: config::options::Values = given
            .iter()
            .map(|(key, value)| {
                let option = config::options::SITE
                    .iter()
                    .find(|o| o.key == *key)
                    .unwrap();
                (option, option.check(value.clone()).unwrap())
            })
            .collect();
        config::options::site(config::options::SiteSource::File(path), &values)
    }

    fn int(i: i64) -> toml::Value {
        toml::Value::Integer(i)
    }

    fn text(t: &str) -> toml::Value {
        toml::Value::String(t.to_string())
    }

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
        let untouched = resolve(&path, &[]).unwrap();
        assert_eq!(untouched.file.site.processors, 2048);
        assert_eq!(
            untouched.file.scheduler.params.get("alpha"),
            Some(&int(1500))
        );
        let site = resolve(
            &path,
            &[
                ("users", int(9)),
                ("weeks", int(2)),
                ("seed", int(7)),
                ("processors", int(256)),
                ("alpha", toml::Value::Float(3000.0)),
            ],
        )
        .unwrap();
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
        assert_eq!(
            f.scheduler.params.get("alpha"),
            Some(&toml::Value::Float(3000.0))
        );
        assert_eq!(f.scheduler.spec().unwrap().label(), "creasy-3000");
        // A new policy drops the file's parameters; an alias is stored as the policy's name.
        let site = resolve(&path, &[("scheduler", text("easy++"))]).unwrap();
        assert_eq!(site.file.scheduler.policy, "easy-plus-plus");
        assert_eq!(site.file.scheduler.params.get("alpha"), None);
        // A part replaces the preset's, whatever order the options come in.
        let site = resolve(
            &path,
            &[("order", text("sjf")), ("scheduler", text("easy"))],
        )
        .unwrap();
        assert_eq!(site.file.scheduler.spec().unwrap().label(), "easy-sjf");
    }

    #[test]
    fn a_flag_value_is_checked_like_a_file_value() {
        let (_dir, path) = site_file(ONE_GROUP);
        // --alpha on a policy that does not take it: the registry refuses it, as it refuses
        // `alpha` under a non-creasy [scheduler] in a file.
        let site = resolve(
            &path,
            &[
                ("scheduler", text("easy")),
                ("alpha", toml::Value::Float(10.0)),
            ],
        )
        .unwrap();
        let from_flag = site.file.scheduler.spec().unwrap_err().to_string();
        let (_dir2, path2) = site_file(&ONE_GROUP.replace("\"creasy\"", "\"easy\""));
        let from_file = resolve(&path2, &[])
            .unwrap()
            .file
            .scheduler
            .spec()
            .unwrap_err()
            .to_string();
        assert_eq!(from_flag, from_file);
        assert!(from_flag.contains("alpha"), "{from_flag}");
        // --weeks 0 fails the same check as `weeks = 0`.
        let model = Arc::new(config::models::default_model().unwrap());
        let zero = resolve(&path, &[("weeks", int(0))]).unwrap();
        let err = simulate(zero, &model, false).err().unwrap().to_string();
        assert!(err.contains("run.weeks = 0"), "{err}");
    }

    #[test]
    fn headroom_is_zero_on_a_machine_where_nothing_waits() {
        // 5 users on 100,000 processors: no job ever waits, so the uncontended run and EASY
        // submit exactly the same jobs.
        let (_dir, path) = site_file(&ONE_GROUP.replace("2048", "100000"));
        let model = Arc::new(config::models::default_model().unwrap());
        let site = resolve(&path, &[]).unwrap();
        let run = simulate(site, &model, true).unwrap();
        assert_eq!(run.summary.wait_seconds.max, 0.0, "something waited");
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
        let model = Arc::new(config::models::default_model().unwrap());
        let site = resolve(&path, &[]).unwrap();
        let run = simulate(site, &model, true).unwrap();
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
        let err = resolve(&path, &[("users", int(3))]).unwrap_err();
        assert!(
            err.message(config::naming::Style::Flags(config::options::flag_of))
                .contains("--users needs a population with one group"),
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
        let model = Arc::new(config::models::default_model().unwrap());
        for (text, wanted) in bad {
            let (_dir, path) = site_file(text);
            let err = match resolve(&path, &[]) {
                Err(e) => e.to_string(),
                Ok(site) => simulate(site, &model, false)
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
        let model = Arc::new(config::models::default_model().unwrap());
        let site = resolve(&path, &[("weeks", int(1))]).unwrap();
        let mut files = crate::store::MemoryStore::new();
        let (kept, handle) = crate::sink::Kept::new();
        let executed = crate::Simulation::site(site, Arc::clone(&model))
            .outputs(&crate::output::formats(&["workload.swf"]), &mut files)
            .sink(Box::new(kept))
            .execute()
            .unwrap();
        let r = executed.site().unwrap();
        assert_eq!(r.user_groups.len(), 5);
        let kept = handle.lock().unwrap().take().unwrap();
        assert!(!kept.records.is_empty());
        assert_eq!(r.report().scheduler, "creasy-1500");
        let files = files.into_files();
        let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
        // every format that applies to a site run, in the registry's order (with a recipe's
        // new format, its file too), and the SWF asked for; shares.csv is the Slurm model's
        let expected: Vec<&str> = crate::output::formats(&["workload.swf"])
            .iter()
            .map(|f| f.file_name())
            .filter(|n| !["batsim_jobs.csv", "shares.csv", "nodes.csv", "outages.csv"].contains(n))
            .collect();
        assert!(expected.starts_with(&["jobs.csv", "sessions.csv", "batches.csv", "summary.json"]));
        assert_eq!(names, expected);
        let swf = swf::SwfReader::new(&files[4].1[..], "workload.swf").unwrap();
        assert_eq!(swf.header().get("MaxProcs"), Some("2048"));
        assert_eq!(
            swf.header().get("MaxJobs"),
            Some(kept.records.len().to_string().as_str())
        );
        let records: Vec<swf::Record> = swf.collect::<std::result::Result<_, _>>().unwrap();
        assert_eq!(records.len(), kept.records.len());
        assert_eq!(
            files[3].1,
            format!("{}\n", executed.summary_json()).into_bytes()
        );
    }
}
