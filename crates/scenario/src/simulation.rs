//! One way to run anything: a [`Simulation`] is built once, a site run
//! ([`Simulation::site`]) or a replay ([`Simulation::replay`]), then given what it needs
//! (progress, a queue order, headroom, fair start times, its outputs and sinks) and executed.
//! The command line, the Python package and every run of a sweep go through it, so every output
//! format is written the same way on every path.
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use config::site::Site;
//! use scenario::{Simulation, store::MemoryStore, output};
//!
//! let model = Arc::new(config::models::default_model()?);
//! let mut files = MemoryStore::new();
//! let outcome = Simulation::site(Site::default_site()?, model)
//!     .headroom(true)
//!     .outputs(&output::formats(&[]), &mut files)
//!     .execute()?;
//! println!("{}", outcome.summary_json());
//! # Ok(())
//! # }
//! ```

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use cluster::{QueueOrder, SchedulerSpec};
use config::replay::ReplayOptions;
use config::site::Site;
use config::{Result, invalid};

use crate::output::OutputFormat;
use crate::progress::Progress;
use crate::replay::{ReplayRun, Without};
use crate::run::{Capacity, SiteRun, SiteSimulation};
use crate::sink::{RunEnd, RunHeader, RunKind, Sink};
use crate::store::Store;

/// What is simulated.
enum Source {
    Site {
        site: Box<Site>,
        model: Arc<usermodel::Model>,
    },
    Replay {
        scheduler: SchedulerSpec,
        options: Box<ReplayOptions>,
    },
}

/// A site run or a replay, with everything it will be run with (see the module's description).
pub struct Simulation<'a> {
    source: Source,
    progress: Option<&'a mut (dyn Progress + 'a)>,
    order: Option<Box<dyn QueueOrder>>,
    headroom: bool,
    outage_costs: bool,
    fairness: bool,
    outputs: Option<(Vec<&'static dyn OutputFormat>, &'a mut dyn Store)>,
    sinks: Vec<Box<dyn Sink>>,
    /// The most bytes the outputs may reach (`None`: no limit).
    output_limit: Option<u64>,
}

/// What a simulation measured.
pub enum Outcome {
    /// A site run.
    Site(Box<SiteRun>),
    /// A replay.
    Replay(Box<ReplayRun>),
}

/// A finished simulation: what it measured and summary.json's text.
pub struct Executed {
    /// The run's measures.
    pub outcome: Outcome,
    /// summary.json's text (pretty JSON, no final newline).
    summary_json: String,
}

impl Executed {
    /// summary.json's text (pretty JSON, no final newline), as the outputs hold it.
    pub fn summary_json(&self) -> &str {
        &self.summary_json
    }

    /// The site run's measures (`None` for a replay).
    pub fn site(&self) -> Option<&SiteRun> {
        match &self.outcome {
            Outcome::Site(run) => Some(run),
            Outcome::Replay(_) => None,
        }
    }

    /// The replay's jobs and measures (`None` for a site run).
    pub fn replay(&self) -> Option<&ReplayRun> {
        match &self.outcome {
            Outcome::Replay(run) => Some(run),
            Outcome::Site(_) => None,
        }
    }

    /// The scheduler's label.
    pub fn scheduler(&self) -> String {
        match &self.outcome {
            Outcome::Site(run) => run.scheduler.label(),
            Outcome::Replay(run) => run.scheduler.label(),
        }
    }

    /// One line naming what was simulated: the site's origin, or the replay's description.
    pub fn title(&self) -> String {
        match &self.outcome {
            Outcome::Site(run) => run.site.origin.clone(),
            Outcome::Replay(run) => run.title(),
        }
    }
}

impl<'a> Simulation<'a> {
    /// A site-level run of `site`; `default_model` is what `models = "embedded"` means.
    pub fn site(site: Site, default_model: Arc<usermodel::Model>) -> Simulation<'a> {
        Simulation::of(Source::Site {
            site: Box::new(site),
            model: default_model,
        })
    }

    /// A replay of `options.trace` under `scheduler`.
    pub fn replay(scheduler: SchedulerSpec, options: ReplayOptions) -> Simulation<'a> {
        Simulation::of(Source::Replay {
            scheduler,
            options: Box::new(options),
        })
    }

    fn of(source: Source) -> Simulation<'a> {
        Simulation {
            source,
            progress: None,
            order: None,
            headroom: false,
            outage_costs: false,
            fairness: false,
            outputs: None,
            sinks: Vec::new(),
            output_limit: None,
        }
    }

    /// Stops the run with an error as soon as its output files would pass `bytes`, projected
    /// from what they hold so far over the simulated time to come (after a simulated week, or
    /// sooner once they hold a tenth of it): a run that would fill a disk is refused after
    /// seconds rather than hours, and leaves nothing behind.
    pub fn output_limit(mut self, bytes: Option<u64>) -> Simulation<'a> {
        self.output_limit = bytes;
        self
    }

    /// Reports the simulated time to `progress` as it goes (every few thousand scheduling
    /// passes), naming each simulation the run makes ([`crate::progress::Tick::what`]); the run stops (with an
    /// error) when `progress` asks ([`Progress::stop_requested`]).
    pub fn progress(mut self, progress: &'a mut (dyn Progress + 'a)) -> Simulation<'a> {
        self.progress = Some(progress);
        self
    }

    /// Replaces the scheduler's queue order by `order` (its backfilling rule and predictor
    /// kept): a priority function from outside the registry, such as one written in Python.
    pub fn order(mut self, order: Box<dyn QueueOrder>) -> Simulation<'a> {
        self.order = Some(order);
        self
    }

    /// The options that add measures to a run or replay, from a front end's option `values`:
    /// `headroom`, `outage_costs` and `fairness` ([`Simulation::headroom`],
    /// [`Simulation::outage_costs`], [`Simulation::fairness`]; those a command lacks are off),
    /// and `output_limit` ([`Simulation::output_limit`]; errors name its key).
    pub fn measure_options(self, values: &config::options::Values) -> Result<Simulation<'a>> {
        let on = |key| config::options::switch(values, key);
        Ok(self
            .headroom(on("headroom"))
            .outage_costs(on("outage_costs"))
            .fairness(on("fairness"))
            .output_limit(Some(config::options::output_limit(values)?)))
    }

    /// Also measures the headroom (site runs): two more simulations of the same users, on an
    /// uncontended machine and under EASY ([`metrics::Headroom`]).
    pub fn headroom(mut self, on: bool) -> Simulation<'a> {
        self.headroom = on;
        self
    }

    /// Also measures what each outage and the node failures cost: in a site run, for each
    /// `[[outages]]` table and for `[failures]`, one more simulation of the same users (same
    /// seed, same scheduler) without it; in a replay, for each outage and for the failures, one
    /// more replay of the same jobs without it ([`crate::outages::OutageCost`]).
    pub fn outage_costs(mut self, on: bool) -> Simulation<'a> {
        self.outage_costs = on;
        self
    }

    /// Also computes every job's fair start time (one more simulation), so the summary reports
    /// unfairness. A site run then keeps its records whole until it is over.
    pub fn fairness(mut self, on: bool) -> Simulation<'a> {
        self.fairness = on;
        self
    }

    /// Writes each of `formats` that applies to the run into `store` (see
    /// [`crate::output::formats`] for a command's default set).
    pub fn outputs(
        mut self,
        formats: &[&'static dyn OutputFormat],
        store: &'a mut dyn Store,
    ) -> Simulation<'a> {
        self.outputs = Some((formats.to_vec(), store));
        self
    }

    /// Also hands the run's records to `sink` ([`crate::sink::Kept`] keeps them whole).
    pub fn sink(mut self, sink: Box<dyn Sink>) -> Simulation<'a> {
        self.sinks.push(sink);
        self
    }

    /// Runs the simulation: the records go to the sinks as they become final, the outputs
    /// are complete when this returns `Ok`.
    pub fn execute(self) -> Result<Executed> {
        let Simulation {
            source,
            progress,
            order,
            headroom,
            outage_costs,
            fairness,
            outputs,
            sinks,
            output_limit,
        } = self;
        let mut quiet = crate::progress::quiet;
        let progress: &mut dyn Progress = match progress {
            Some(p) => p,
            None => &mut quiet,
        };
        // With a limit, the files' bytes are counted as they are written and the progress
        // projects them to the run's end.
        let written = Arc::new(AtomicU64::new(0));
        let mut counted;
        let outputs: Option<(Vec<&'static dyn OutputFormat>, &mut dyn Store)> =
            match (outputs, output_limit) {
                (Some((formats, store)), Some(_)) => {
                    counted = Counted {
                        store,
                        written: Arc::clone(&written),
                    };
                    Some((formats, &mut counted as &mut dyn Store))
                }
                (Some((formats, store)), None) => Some((formats, store as &mut dyn Store)),
                (None, _) => None,
            };
        let mut projected = Projected {
            inner: progress,
            written: Arc::clone(&written),
            limit: output_limit.filter(|_| outputs.is_some()),
            exceeded: None,
            last_end: 0,
        };
        let progress: &mut dyn Progress = &mut projected;
        let extra = ExtraRuns {
            headroom,
            outage_costs,
        };
        let executed = run_source(source, progress, order, extra, fairness, outputs, sinks);
        // The files' writers buffer, so the count seen at the last tick may lag far behind
        // (a fast run can end between two ticks): what was written in all is checked too.
        let over_at_end = || {
            let written = written.load(Ordering::Relaxed);
            let limit = projected.limit?;
            (written > limit).then_some(Exceeded {
                limit,
                written,
                projected: written as f64,
                now: projected.last_end,
                end: projected.last_end,
            })
        };
        match projected.exceeded.or_else(over_at_end) {
            Some(over) => Err(over.error()),
            None => executed,
        }
    }
}

/// The simulations a site run may add to measure something against it.
#[derive(Debug, Clone, Copy)]
struct ExtraRuns {
    /// [`Simulation::headroom`].
    headroom: bool,
    /// [`Simulation::outage_costs`].
    outage_costs: bool,
}

/// Runs what `source` describes (see [`Simulation::execute`]).
fn run_source(
    source: Source,
    progress: &mut dyn Progress,
    order: Option<Box<dyn QueueOrder>>,
    extra: ExtraRuns,
    fairness: bool,
    outputs: Option<(Vec<&'static dyn OutputFormat>, &mut dyn Store)>,
    mut sinks: Vec<Box<dyn Sink>>,
) -> Result<Executed> {
    {
        match source {
            Source::Site { site, model } => {
                let scheduler = crate::run::site_scheduler(&site)?;
                refuse_unused_order(&scheduler, order.as_deref())?;
                if extra.outage_costs {
                    crate::run::check_outage_costs(&site)?;
                }
                let names: Vec<String> = site.file.groups.iter().map(|g| g.name.clone()).collect();
                let users = site.file.groups.iter().map(|g| g.users as usize).sum();
                let label = scheduler.label();
                let slurm = slurm_model::SlurmRule::config_of(&scheduler);
                let columns = scheduler.columns();
                // On a machine of [[nodes]]: its memory and GPUs are jobs.csv's resource
                // columns, and nodes.csv names its nodes.
                let machine = site.node_machine()?;
                let site_resources: Vec<String> = match &machine {
                    Some(m) => m.resources()?.into_iter().map(|(k, _)| k).collect(),
                    None => Vec::new(),
                };
                let site_nodes: Option<Vec<String>> = machine
                    .as_ref()
                    .map(|m| m.nodes.iter().map(|(n, _)| n.clone()).collect());
                if let Some((formats, store)) = outputs {
                    let scratch = store.scratch().map(std::path::Path::to_path_buf);
                    let header = RunHeader {
                        kind: RunKind::Site,
                        group_names: &names,
                        users,
                        scratch: scratch.as_deref(),
                        site: Some(&site),
                        scheduler: &label,
                        slurm: slurm.as_ref(),
                        resources: &site_resources,
                        columns: columns.as_ref(),
                        node_names: site_nodes.as_deref(),
                        out_of_service: !site.outages()?.is_empty() || site.failures()?.is_some(),
                    };
                    sinks.splice(0..0, open(&formats, &header, store)?);
                }
                let (mut run, (placements, node_shares)) =
                    crate::run::simulate_on(SiteSimulation {
                        site: *site,
                        default_model: &model,
                        scheduler,
                        capacity: Capacity::Site,
                        order,
                        fairness,
                        progress: &mut *progress,
                        what: "simulating",
                        sinks: &mut sinks,
                    })?;
                if extra.headroom {
                    tracing::info!("measuring headroom: two more simulations (uncontended, EASY)");
                    crate::run::measure_headroom(&mut run, &model, &mut *progress)?;
                }
                if extra.outage_costs {
                    tracing::info!("measuring outage costs: one more simulation per outage");
                    crate::run::measure_outage_costs(&mut run, &model, &mut *progress)?;
                }
                let summary_json = crate::output::render_json(&run.report())?;
                let shares = run.slurm.as_ref().map(|s| &s.shares);
                finish(
                    sinks,
                    &summary_json,
                    placements.as_deref(),
                    shares,
                    node_shares.as_deref(),
                    run.job_energies.as_deref(),
                    &run.out_of_service,
                )?;
                Ok(Executed {
                    outcome: Outcome::Site(Box::new(run)),
                    summary_json,
                })
            }
            Source::Replay { scheduler, options } => {
                if extra.headroom {
                    return Err(invalid!(
                        "{} is measured for site runs: a replay's users do not react",
                        config::naming::key("headroom")
                    ));
                }
                if extra.outage_costs {
                    crate::replay::check_outage_costs(&options, order.is_some())?;
                }
                refuse_unused_order(&scheduler, order.as_deref())?;
                let options = ReplayOptions {
                    fairness: options.fairness || fairness,
                    ..*options
                };
                let resources: Vec<String> = (options.input.resources.iter())
                    .map(|(name, _)| name.clone())
                    .collect();
                let node_names: Option<Vec<String>> = options
                    .machine
                    .nodes
                    .as_ref()
                    .map(|m| m.nodes.iter().map(|(name, _)| name.clone()).collect());
                let slurm = slurm_model::SlurmRule::config_of(&scheduler);
                let columns = scheduler.columns();
                if let Some((formats, store)) = outputs {
                    let label = scheduler.label();
                    let scratch = store.scratch().map(std::path::Path::to_path_buf);
                    let header = RunHeader {
                        kind: RunKind::Replay {
                            feedback: options.feedback,
                        },
                        group_names: &[],
                        users: 0,
                        scratch: scratch.as_deref(),
                        site: None,
                        scheduler: &label,
                        slurm: slurm.as_ref(),
                        resources: &resources,
                        columns: columns.as_ref(),
                        node_names: node_names.as_deref(),
                        out_of_service: options.outages.is_some()
                            || options.events.is_some()
                            || options.reservations.is_some(),
                    };
                    sinks.splice(0..0, open(&formats, &header, store)?);
                }
                let (mut run, (placements, node_shares)) = crate::replay::replay(
                    scheduler.clone(),
                    order,
                    &options,
                    &mut *progress,
                    &mut sinks,
                    Without::Nothing,
                )?;
                if extra.outage_costs {
                    tracing::info!("measuring outage costs: one more replay per outage");
                    crate::replay::measure_outage_costs(&mut run, &scheduler, &options, progress)?;
                }
                let summary = run.summary();
                let summary_json = crate::output::render_json(&run.report(&summary))?;
                let shares = run.slurm.as_ref().map(|s| &s.shares);
                finish(
                    sinks,
                    &summary_json,
                    placements.as_deref(),
                    shares,
                    node_shares.as_deref(),
                    run.job_energies.as_deref(),
                    &run.out_of_service,
                )?;
                Ok(Executed {
                    outcome: Outcome::Replay(Box::new(run)),
                    summary_json,
                })
            }
        }
    }
}

/// A store that counts the bytes written into its files.
struct Counted<'s> {
    store: &'s mut dyn Store,
    written: Arc<AtomicU64>,
}

impl Store for Counted<'_> {
    fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>> {
        Ok(Box::new(Counting {
            inner: self.store.create(name)?,
            written: Arc::clone(&self.written),
        }))
    }
    fn scratch(&self) -> Option<&std::path::Path> {
        self.store.scratch()
    }
}

/// A writer that adds what it writes to a shared count.
struct Counting {
    inner: Box<dyn Write + Send>,
    written: Arc<AtomicU64>,
}

impl Write for Counting {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.written.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// A run's outputs projected past their limit: what was seen when the run was stopped.
#[derive(Debug, Clone, Copy)]
struct Exceeded {
    limit: u64,
    written: u64,
    projected: f64,
    now: simtime::Time,
    end: simtime::Time,
}

impl Exceeded {
    fn error(self) -> config::ScenarioError {
        let gb = |bytes: f64| bytes / 1e9;
        invalid!(
            "the output files would reach about {:.2} GB, past {}, {:.2} GB (default {}): {:.3} GB were written in the first {:.1} of {:.1} simulated days. Nothing was written. Raise {} if the disk has room, or run fewer users or weeks",
            gb(self.projected),
            config::naming::key("output_limit"),
            gb(self.limit as f64),
            config::options::DEFAULT_OUTPUT_LIMIT_GB,
            gb(self.written as f64),
            self.now as f64 / 86_400.0,
            self.end as f64 / 86_400.0,
            config::naming::key("output_limit"),
        )
    }
}

/// Passes progress on, and asks the run to stop once its outputs, projected to its end, pass
/// the limit.
struct Projected<'p, 'q> {
    inner: &'p mut (dyn Progress + 'q),
    written: Arc<AtomicU64>,
    limit: Option<u64>,
    exceeded: Option<Exceeded>,
    /// The simulated end of the writing simulation, as its last tick gave it (seconds).
    last_end: simtime::Time,
}

impl Projected<'_, '_> {
    /// Simulated time after which the written bytes are projected to the end: a week (the
    /// users' weekly cycle), unless the files already hold a tenth of the limit.
    const SETTLED: simtime::Time = 7 * 86_400;
}

impl Progress for Projected<'_, '_> {
    fn tick(&mut self, tick: crate::progress::Tick) {
        // Only the simulation that writes the files is projected (not headroom's or the fair
        // start times', which follow it and write nothing).
        let writing = matches!(tick.what, "simulating" | "replaying");
        if writing {
            self.last_end = tick.end;
        }
        if let (Some(limit), None, true) = (self.limit, self.exceeded, writing) {
            let written = self.written.load(Ordering::Relaxed);
            let now = tick.now.max(1);
            let end = tick.end.max(now);
            let projected = written as f64 * end as f64 / now as f64;
            let settled = now >= Self::SETTLED.min(end) || written >= limit / 10;
            if written > limit || (settled && projected > limit as f64) {
                self.exceeded = Some(Exceeded {
                    limit,
                    written,
                    projected: projected.max(written as f64),
                    now,
                    end,
                });
            }
        }
        self.inner.tick(tick);
    }
    fn stop_requested(&self) -> bool {
        self.exceeded.is_some() || self.inner.stop_requested()
    }
}

/// A queue order from outside the registry is an error under a rule that orders the queue
/// itself (dynP): it would be silently ignored.
fn refuse_unused_order(scheduler: &SchedulerSpec, order: Option<&dyn QueueOrder>) -> Result<()> {
    match order {
        Some(order) if scheduler.orders_queue_itself() => Err(invalid!(
            "the queue order {} cannot be used with {}: it orders the queue itself (its decider switches between FCFS, SJF and LJF)",
            order.name(),
            config::naming::key_value("backfill", scheduler.backfill().name)
        )),
        _ => Ok(()),
    }
}

/// A sink for each of `formats` that applies to the run, writing into `store`.
fn open(
    formats: &[&'static dyn OutputFormat],
    header: &RunHeader<'_>,
    store: &mut dyn Store,
) -> Result<Vec<Box<dyn Sink>>> {
    formats
        .iter()
        .filter(|f| f.applies(header))
        .map(|f| {
            let out = store.create(f.file_name())?;
            f.sink(header, out)
        })
        .collect()
}

/// Tells every sink the run is over.
fn finish(
    sinks: Vec<Box<dyn Sink>>,
    summary_json: &str,
    placements: Option<&[crate::batsim::Intervals]>,
    shares: Option<&crate::slurm_report::SharesTable>,
    node_shares: Option<&[crate::sink::NodeShares]>,
    energies: Option<&[f64]>,
    out_of_service: &[crate::outages::OutOfService],
) -> Result<()> {
    let end = RunEnd {
        summary_json,
        placements,
        shares,
        node_shares,
        energies,
        out_of_service,
    };
    for sink in sinks {
        sink.finish(&end)?;
    }
    Ok(())
}
