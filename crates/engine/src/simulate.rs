use std::cmp::Reverse;
use std::collections::BinaryHeap;

use cluster::{Cluster, ClusterError, JobId, JobRequest};
use metrics::{Failed, JobRecord, Neighbourhood};

use crate::Time;
use crate::failures::Failures;
use crate::sharing::{MemoryBandwidth, Sharing};

pub use job::{Extra, Job};

/// Options of a simulation beyond the cluster and the workload.
#[derive(Clone, Default)]
pub struct SimOptions {
    /// Guim's memory-bandwidth sharing model: jobs that share an oversubscribed node run longer
    /// ([`crate::MemoryBandwidth`]). Needs a cluster of nodes ([`Cluster::with_nodes`]).
    pub sharing: Option<MemoryBandwidth>,
    /// What the facility imposes beyond the scheduler: each job's power demand, holds of
    /// flexible jobs, a machine capacity that changes in time ([`Facility`]). `None`: nothing.
    pub facility: Option<std::sync::Arc<dyn Facility>>,
}

impl std::fmt::Debug for SimOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimOptions")
            .field("sharing", &self.sharing)
            .field("facility", &self.facility.as_ref().map(|_| "set"))
            .finish()
    }
}

/// What a facility imposes on a run beyond its scheduler, as rules of time the engine applies
/// (it alone advances time): what each arriving job asks of the machine and when it enters the
/// queue, and the machine's capacities over time. A power cap is a machine-wide resource whose
/// amount follows the cap; a carbon-aware delay holds a flexible job until its release.
///
/// A held job keeps its submit time in its record (its wait includes the hold, so the users of
/// a closed loop react to it), but the scheduler sees it arrive at its release: it is queued
/// then, ordered and aged from then, as Slurm treats a job with a begin time (`--begin`: its
/// age factor counts from when it became eligible; `job_priority.shtml`).
pub trait Facility: Send + Sync {
    /// Sets what `job`, arriving at `now`, asks of the machine (its request may gain amounts
    /// of the run's resource kinds, such as its power demand) and returns when it enters the
    /// queue (at least `now`; later holds it).
    fn admit(&self, job: &mut Job, now: Time) -> Time;

    /// The first instant after `after` (seconds) at which the machine's capacities change,
    /// if any. The engine asks with `Time::MIN` before its first instant.
    fn next_change(&self, _after: Time) -> Option<Time> {
        None
    }

    /// Applies the capacities in force at `now` to the cluster
    /// ([`Cluster::set_available_extra`]).
    fn apply(&self, _now: Time, _cluster: &mut Cluster) {}

    /// The power states of the machine's nodes for one run, when its nodes power down while
    /// idle (a fresh state each call: the engine asks once per run). Default: none, every node
    /// is always on.
    fn node_states(&self) -> Option<Box<dyn NodeStates>> {
        None
    }

    /// The node failures of one run (a fresh model each call, from its first instant: the
    /// engine asks once per run). Default: none, nodes never fail.
    fn failures(&self) -> Option<Box<dyn Failures>> {
        None
    }
}

/// Nodes that power down when idle and boot when a job needs them (Slurm's power saving,
/// `power_save.shtml`): the engine tells the model what starts and ends, and a job whose nodes
/// must boot runs that much later, holding its resources from the pass that started it
/// ([`Cluster::delay_start`]); the model's own timers (a node idle long enough powers down)
/// are events of their own, which start no pass.
pub trait NodeStates: Send {
    /// `job` started at `now` (on the nodes `allocation`, with what it holds on each, on a
    /// machine of node types): returns how long it waits for its nodes to be ready, seconds
    /// (0: every node was on).
    fn job_started(
        &mut self,
        now: Time,
        id: JobId,
        job: &Job,
        allocation: Option<&[(u32, cluster::Amounts)]>,
    ) -> Time;

    /// The job `id` ended at `now`: its nodes are idle from `now` if nothing else runs there.
    fn job_ended(&mut self, now: Time, id: JobId);

    /// The next instant, after the last one applied, at which a node changes state by itself
    /// (idle long enough to power down; done shutting down).
    fn next_change(&self) -> Option<Time>;

    /// Applies the changes due at `now`.
    fn apply(&mut self, now: Time);
}

/// Where jobs come from: a trace (open loop) or simulated users (closed loop).
pub trait Workload {
    /// The time of the next submission, if one is pending. Never earlier than the current time.
    fn next_arrival(&self) -> Option<Time>;

    /// Appends to `out` every job submitted at `now` (each with `submit == now`).
    fn arrivals(&mut self, now: Time, out: &mut Vec<Job>);

    /// A job ended at `now` (the closed loop's feedback). Called before that instant's
    /// submissions are taken, so a reaction with zero think time is submitted at `now`.
    fn job_ended(&mut self, _record: &JobRecord, _now: Time) {}
}

/// Sees every scheduling pass; used by tests and diagnostics. `()` observes nothing.
pub trait Observer {
    /// Called before each scheduling pass at `now`, after that instant's ends, submissions and
    /// prediction corrections: the cluster holds what the pass will see.
    fn before_pass(&mut self, _now: Time, _cluster: &Cluster) {}

    /// Called after each scheduling pass at `now`. The cluster tells what the pass did
    /// ([`Cluster::last_started`], [`Cluster::last_reservation`]) and what is left waiting.
    fn after_pass(&mut self, _now: Time, _cluster: &Cluster) {}

    /// Whether the simulation should stop (the user interrupted it). Asked every
    /// `STOP_CHECK_PASSES` passes; a `true` ends the simulation with [`EngineError::Stopped`].
    fn stop_requested(&self) -> bool {
        false
    }
}

impl Observer for () {}

/// Scheduling passes between two [`Observer::stop_requested`] questions (a virtual call
/// reading a flag: asked often, so that an interrupt waits for a few passes, not for a
/// thousand of a slow scheduler: 1024 passes of conservative backfilling at 1,000 users took
/// about 0.45 s).
pub const STOP_CHECK_PASSES: u32 = 16;

/// The simulation could not go on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The cluster refused a job (too wide for the machine, negative estimate).
    #[error("job {job_id}: {source}")]
    Cluster {
        /// The job's reported id.
        job_id: i64,
        /// Why.
        source: ClusterError,
    },
    /// The workload produced a submission in the past or with a submit time other than now.
    #[error("job {job_id} submitted at {submit} s, but the simulation is at {now} s")]
    TimeTravel {
        /// The job's reported id.
        job_id: i64,
        /// Its submit time.
        submit: Time,
        /// The simulation time.
        now: Time,
    },
    /// The workload's next arrival lies before the current time.
    #[error("the workload's next arrival ({next} s) lies before the current time ({now} s)")]
    ArrivalInPast {
        /// The arrival time.
        next: Time,
        /// The simulation time.
        now: Time,
    },
    /// Jobs were left waiting with nothing running (a scheduler bug; never expected).
    #[error("{waiting} jobs were left waiting with nothing running")]
    Stuck {
        /// How many.
        waiting: usize,
    },
    /// More than 2^32 jobs in one simulation.
    #[error("more than 4294967295 jobs in one simulation")]
    TooManyJobs,
    /// The sharing model needs to know which processors a job runs on.
    #[error("the memory-bandwidth sharing model needs a machine of nodes")]
    SharingWithoutNodes,
    /// The observer asked the simulation to stop ([`Observer::stop_requested`]).
    #[error("interrupted at simulated second {at}")]
    Stopped {
        /// The simulated time when it stopped, seconds.
        at: Time,
    },
    /// The facility's nodes power down and boot, but the scheduler cannot follow a start
    /// delayed by a boot ([`Cluster::follows_start_delays`]).
    #[error("{0}")]
    StartDelays(String),
    /// Node failures cannot be modelled with this machine, rule or facility (the reason).
    #[error("node failures: {0}")]
    Failures(String),
    /// A job has a negative runtime.
    #[error("job {job_id} has a negative runtime ({runtime} s)")]
    NegativeRuntime {
        /// The job's reported id.
        job_id: i64,
        /// Its runtime.
        runtime: Time,
    },
}

/// A pending end: (time, creation sequence, job). Ordered so the heap pops the earliest, and at
/// equal times the one created first.
type EndEvent = Reverse<(Time, u64, JobId)>;

/// Runs the workload on the cluster until no event is left. Returns one record per job, in
/// submission order; a job the scheduler holds for good ([`Cluster::is_held`]) never starts and
/// has none (the scheduler counts it: the Slurm model's `never_started`).
pub fn simulate<W: Workload + ?Sized, O: Observer + ?Sized>(
    cluster: &mut Cluster,
    workload: &mut W,
    observer: &mut O,
) -> Result<Vec<JobRecord>, EngineError> {
    simulate_with(cluster, workload, observer, &SimOptions::default())
}

/// [`simulate`] with options: the memory-bandwidth sharing model.
pub fn simulate_with<W: Workload + ?Sized, O: Observer + ?Sized>(
    cluster: &mut Cluster,
    workload: &mut W,
    observer: &mut O,
    options: &SimOptions,
) -> Result<Vec<JobRecord>, EngineError> {
    let mut records = Vec::new();
    simulate_into(cluster, workload, observer, options, &mut |_, record| {
        records.push(record)
    })?;
    Ok(records)
}

/// One submitted job while the engine still needs it: its spec and what happened to it so far.
/// The [`JobRecord`] is built from these when the job ends and when it is handed out, so a slot
/// stays small (under saturation the reorder buffer holds every waiting job, and a start reads a
/// slot written long before).
struct Slot {
    spec: Job,
    /// When it started (meaningless until then).
    start: Time,
    /// Its current end: an end event for another time is stale (the job's penalty moved its
    /// end). `Time::MIN` until it starts.
    end: Time,
    /// See [`JobRecord::prediction_accuracy`]; known when it ends.
    prediction_accuracy: f64,
    /// See [`JobRecord::prediction_corrections`].
    prediction_corrections: u32,
    /// See [`JobRecord::shortest_waiting`].
    shortest_waiting: bool,
    /// See [`JobRecord::killed`].
    killed: bool,
    /// Whether it ended (or, [`Slot::held`], never will).
    ended: bool,
    /// Whether the scheduler holds it for good ([`Cluster::is_held`]: the Slurm model's job
    /// that its partition or QOS can never allow): it never starts, and no record of it is
    /// handed out (the scheduler reports it).
    held: bool,
    /// What the sharing model did to it (only with [`SimOptions::sharing`]).
    shared: Option<Box<Shared>>,
    /// See [`JobRecord::annotation`] (rules that annotate only).
    annotation: Option<Box<cluster::Annotation>>,
    /// See [`JobRecord::failed`] (boxed: failures strike few jobs).
    failed: Option<Box<Failed>>,
}

/// What the memory-bandwidth sharing model did to one job (paper 001).
#[derive(Default)]
struct Shared {
    /// See [`JobRecord::penalty`].
    penalty: Time,
    /// See [`JobRecord::killed_by_sharing`].
    killed_by_sharing: bool,
    /// See [`JobRecord::neighbourhood`].
    neighbourhood: Option<Neighbourhood>,
}

impl Slot {
    fn new(spec: Job) -> Self {
        Slot {
            spec,
            start: 0,
            end: Time::MIN,
            prediction_accuracy: f64::NAN,
            prediction_corrections: 0,
            shortest_waiting: false,
            killed: false,
            ended: false,
            held: false,
            shared: None,
            annotation: None,
            failed: None,
        }
    }

    /// Whether it has not started yet and may still start.
    fn waiting(&self) -> bool {
        self.end == Time::MIN && !self.held
    }

    /// The job's record as it stands (final once it ended).
    fn record(&self) -> JobRecord {
        let spec = &self.spec;
        let shared = self.shared.as_deref();
        JobRecord {
            job: *spec,
            start: self.start,
            end: self.end,
            killed: self.killed,
            prediction_accuracy: self.prediction_accuracy,
            prediction_corrections: self.prediction_corrections,
            shortest_waiting: self.shortest_waiting,
            fair_start: None,
            penalty: shared.map_or(0, |s| s.penalty),
            killed_by_sharing: shared.is_some_and(|s| s.killed_by_sharing),
            neighbourhood: shared.and_then(|s| s.neighbourhood),
            annotation: self.annotation.clone(),
            failed: self.failed.as_deref().copied(),
        }
    }
}

/// The jobs submitted but not yet handed out, by job index (`JobId`): the jobs before `base`
/// were handed to the sink, so memory follows the jobs in flight, not the run.
#[derive(Default)]
struct InFlight {
    base: usize,
    slots: std::collections::VecDeque<Slot>,
}

impl InFlight {
    /// Jobs submitted so far (the next job's index).
    fn submitted(&self) -> usize {
        self.base + self.slots.len()
    }

    /// The slot of job `index`, if it was not handed out yet.
    fn get_mut(&mut self, index: usize) -> Option<&mut Slot> {
        index
            .checked_sub(self.base)
            .and_then(|i| self.slots.get_mut(i))
    }
}

/// [`simulate_with`], handing each job's record to `sink` once it is final (the job ended), in
/// submission order: the engine keeps only the jobs between the oldest one still waiting or
/// running and the newest (a reorder buffer), so a run's memory does not grow with its length.
/// `sink` also gets the workload (a closed loop pairs each record with its submission).
///
/// This is [`Stepper`] driven with the cluster's own rule: advance to the next instant with an
/// event, let the cluster schedule, book what it started.
pub fn simulate_into<W: Workload + ?Sized, O: Observer + ?Sized>(
    cluster: &mut Cluster,
    workload: &mut W,
    observer: &mut O,
    options: &SimOptions,
    sink: &mut dyn FnMut(&mut W, JobRecord),
) -> Result<(), EngineError> {
    let mut stepper = Stepper::new(cluster, options)?;
    let mut passes_since_stop_check: u32 = 0;
    while let Advance::Pass(now) = stepper.advance(cluster, workload, sink)? {
        observer.before_pass(now, cluster);
        cluster.schedule(now);
        stepper.started(cluster)?;
        observer.after_pass(now, cluster);
        passes_since_stop_check += 1;
        if passes_since_stop_check == STOP_CHECK_PASSES {
            passes_since_stop_check = 0;
            if observer.stop_requested() {
                return Err(EngineError::Stopped { at: now });
            }
        }
    }
    stepper.finish(cluster, workload, sink)
}

/// What [`Stepper::advance`] reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advance {
    /// An instant (seconds) at which a job ended or arrived, a prediction expired or the
    /// scheduler asked to be woken: a scheduling pass is due.
    Pass(Time),
    /// No event is left.
    Finished,
}

/// The event loop, resumable: [`Stepper::advance`] applies the events of the next instant that
/// has any and stops where a scheduling pass is due; the caller lets the cluster decide (its own
/// rule, or decisions made outside), then [`Stepper::started`] books the jobs it started.
/// [`simulate_into`] is this loop with the cluster's own rule.
pub struct Stepper {
    /// The memory-bandwidth sharing model, on a machine of nodes.
    interference: Option<Box<dyn Interference + Send>>,
    /// Each job's spec and what happened to it (its current end: an end event for another time
    /// is stale, the job's penalty moved its end), until it ended and every earlier job was
    /// handed out.
    flight: InFlight,
    /// End events: (end, creation sequence, job).
    ends: BinaryHeap<EndEvent>,
    /// The next end event's creation sequence.
    end_sequence: u64,
    /// Scratch: the jobs arriving at an instant.
    arrived: Vec<Job>,
    /// Scratch: the specs of the jobs a pass started.
    starting: Vec<Option<Job>>,
    /// The effective runtimes of the waiting jobs, for SJFness.
    waiting_runtimes: WaitingRuntimes,
    /// The current instant, seconds (`Time::MIN` before the first).
    now: Time,
    /// Also stop at an instant where nothing happened while jobs wait on an idle machine
    /// ([`Stepper::pass_when_idle`]); off in the built-in runs.
    pass_when_idle: bool,
    /// The instant of the last [`Advance::Pass`], seconds.
    last_pass: Time,
    /// What the facility imposes ([`SimOptions::facility`]).
    facility: Option<std::sync::Arc<dyn Facility>>,
    /// Held jobs: (release, job index), the earliest first.
    holds: BinaryHeap<Reverse<(Time, usize)>>,
    /// The facility's next change of capacities.
    next_change: Option<Time>,
    /// The nodes' power states, when they power down while idle ([`Facility::node_states`]).
    node_states: Option<Box<dyn NodeStates>>,
    /// The nodes' failures ([`Facility::failures`]).
    failures: Option<Box<dyn Failures>>,
}

impl Stepper {
    /// A loop at no instant yet, for `cluster` (checked against `options`: sharing needs nodes).
    pub fn new(cluster: &Cluster, options: &SimOptions) -> Result<Stepper, EngineError> {
        let interference: Option<Box<dyn Interference + Send>> = match options.sharing {
            Some(model) if cluster.nodes().is_some() => Some(Box::new(Sharing::new(model))),
            Some(_) => return Err(EngineError::SharingWithoutNodes),
            None => None,
        };
        let node_states = options.facility.as_ref().and_then(|f| f.node_states());
        if node_states.is_some() && interference.is_some() {
            return Err(EngineError::StartDelays(
                "nodes that power down and the memory-bandwidth sharing model cannot be combined: the sharing model would see a job start before its nodes have booted".to_string(),
            ));
        }
        if node_states.is_some() && !cluster.follows_start_delays() {
            return Err(EngineError::StartDelays(format!(
                "nodes that power down need a scheduler that follows starts delayed by booting: the {} backfilling rule plans with running jobs' ends (none, the EASY family and the Slurm model follow them)",
                cluster.scheduler().backfill.name()
            )));
        }
        let failures = options.facility.as_ref().and_then(|f| f.failures());
        if failures.is_some() {
            if interference.is_some() || node_states.is_some() {
                return Err(EngineError::Failures(
                    "they are not modelled together with the memory-bandwidth sharing model or with nodes that power down".to_string(),
                ));
            }
            cluster
                .check_out_of_service()
                .map_err(|e| EngineError::Failures(e.to_string()))?;
        }
        Ok(Stepper {
            interference,
            flight: InFlight::default(),
            ends: BinaryHeap::new(),
            end_sequence: 0,
            arrived: Vec::new(),
            starting: Vec::new(),
            waiting_runtimes: WaitingRuntimes::default(),
            now: Time::MIN,
            pass_when_idle: false,
            last_pass: Time::MIN,
            next_change: options
                .facility
                .as_ref()
                .and_then(|f| f.next_change(Time::MIN)),
            facility: options.facility.clone(),
            holds: BinaryHeap::new(),
            node_states,
            failures,
        })
    }

    /// With `on`, [`Stepper::advance`] also stops at an instant where nothing happened to the
    /// machine (a user who woke up and submitted nothing, an expired prediction of no job) if
    /// jobs wait while nothing runs. A scheduler's own rule never leaves an idle machine with a
    /// job that fits waiting, so built-in runs never meet that state and leave this off; an
    /// agent that decides outside the rule (the Gymnasium environment) can, by waiting for an
    /// arrival that turns out to submit nothing, and must then be asked again at that
    /// instant, not left to find the simulation over with jobs waiting
    /// ([`EngineError::Stuck`]).
    pub fn pass_when_idle(&mut self, on: bool) {
        self.pass_when_idle = on;
    }

    /// The current instant, seconds (`Time::MIN` before the first).
    pub fn now(&self) -> Time {
        self.now
    }

    /// Goes to the next instant with an event and applies it: jobs ending (records that became
    /// final go to `sink`), arrivals, expired predictions, the scheduler's wake-up. Instants
    /// where nothing happens to the machine are passed over.
    pub fn advance<W: Workload + ?Sized>(
        &mut self,
        cluster: &mut Cluster,
        workload: &mut W,
        sink: &mut dyn FnMut(&mut W, JobRecord),
    ) -> Result<Advance, EngineError> {
        let Stepper {
            interference,
            flight,
            ends,
            arrived,
            waiting_runtimes,
            now,
            pass_when_idle,
            last_pass,
            facility,
            holds,
            next_change,
            node_states,
            failures,
            ..
        } = self;
        loop {
            let next_end = ends.peek().map(|Reverse((t, _, _))| *t);
            let next = [
                next_end,
                workload.next_arrival(),
                cluster.next_prediction_expiry(),
                cluster.next_wakeup(),
                holds.peek().map(|Reverse((t, _))| *t),
                *next_change,
                node_states.as_ref().and_then(|n| n.next_change()),
                // failures matter while a job may still run (else they would go on for ever)
                failures.as_ref().and_then(|f| f.next_change()).filter(|_| {
                    cluster.running() > 0
                        || cluster.waiting() > 0
                        || !holds.is_empty()
                        || workload.next_arrival().is_some()
                }),
            ]
            .into_iter()
            .flatten()
            .min();
            let Some(next) = next else {
                return Ok(Advance::Finished);
            };
            if next < *now {
                return Err(EngineError::ArrivalInPast { next, now: *now });
            }
            *now = next;
            let now = *now;

            // 1. Jobs ending now, in the order their end events were created.
            let mut happened = false;
            let mut any_ended = false;
            while let Some(&Reverse((t, _, id))) = ends.peek() {
                if t != now {
                    break;
                }
                ends.pop();
                let index = id.0 as usize;
                let Some(slot) = flight.get_mut(index).filter(|s| s.end == t && !s.ended) else {
                    continue; // stale: the job's end moved (or a failure ended it)
                };
                happened = true;
                any_ended = true;
                if let Some(model) = interference.as_mut() {
                    if let Some(seen) = model.job_ended(id) {
                        slot.shared.get_or_insert_default().neighbourhood = Some(seen);
                    }
                }
                let finished = cluster
                    .finish(id, now)
                    .map_err(|source| EngineError::Cluster {
                        job_id: slot.spec.job_id,
                        source,
                    })?;
                slot.prediction_accuracy = finished.accuracy;
                slot.prediction_corrections = finished.corrections;
                slot.ended = true;
                if let Some(states) = node_states.as_mut() {
                    states.job_ended(now, id);
                }
                workload.job_ended(&slot.record(), now);
            }
            // 1b. Nodes fail or come back from repair: the jobs a failure strikes end now, lost
            //     or requeued (their queue entry is a hold until the requeue delay).
            if let Some(model) = failures.as_mut()
                && model.next_change().is_some_and(|t| t <= now)
            {
                let step = model.apply(now, cluster);
                for id in step.killed {
                    let index = id.0 as usize;
                    let Some(slot) = flight
                        .get_mut(index)
                        .filter(|s| s.end != Time::MIN && !s.ended)
                    else {
                        continue; // not running: nothing to kill
                    };
                    let finished =
                        cluster
                            .fail(id, now)
                            .map_err(|source| EngineError::Cluster {
                                job_id: slot.spec.job_id,
                                source,
                            })?;
                    let failed = slot.failed.get_or_insert_default();
                    failed.runs += 1;
                    failed.lost_seconds += (now - slot.start).max(0);
                    match model.requeue_delay() {
                        Some(delay) => {
                            // waiting again: its old end event is stale
                            slot.end = Time::MIN;
                            slot.killed = false;
                            holds.push(Reverse((now.saturating_add(delay.max(0)), index)));
                        }
                        None => {
                            failed.lost = true;
                            slot.end = now;
                            slot.killed = false;
                            slot.prediction_accuracy = finished.accuracy;
                            slot.prediction_corrections = finished.corrections;
                            slot.ended = true;
                            any_ended = true;
                            workload.job_ended(&slot.record(), now);
                        }
                    }
                }
                if cluster.pool().is_some() {
                    cluster.set_failed_nodes(&step.down_nodes);
                } else {
                    cluster.set_failed(now, step.down);
                }
                cluster.capacity_changed(now);
                happened = true;
            }

            // Every job that ended, up to the oldest still waiting or running, is final (a job
            // held for good has no record).
            if any_ended {
                while flight.slots.front().is_some_and(|s| s.ended) {
                    if let Some(slot) = flight.slots.pop_front() {
                        flight.base += 1;
                        if !slot.held {
                            sink(workload, slot.record());
                        }
                    }
                }
            }

            // Nodes change power state by themselves (no pass: the scheduler sees no change).
            if let Some(states) = node_states.as_mut()
                && states.next_change().is_some_and(|t| t <= now)
            {
                states.apply(now);
            }

            // 2. The facility's capacities change, and held jobs it releases now are queued
            //    (in the order they were submitted).
            if let (Some(at), Some(f)) = (*next_change, facility.as_ref())
                && at == now
            {
                f.apply(now, cluster);
                cluster.capacity_changed(now);
                *next_change = f.next_change(now);
                happened = true;
            }
            while let Some(&Reverse((release, index))) = holds.peek() {
                if release != now {
                    break;
                }
                holds.pop();
                let Some(spec) = flight.get_mut(index).map(|slot| slot.spec) else {
                    continue; // unreachable: a held job is in flight until it ends
                };
                queue(cluster, flight, waiting_runtimes, index, &spec, now)?;
                happened = true;
            }

            // 3. Submissions at now.
            while workload.next_arrival() == Some(now) {
                arrived.clear();
                workload.arrivals(now, arrived);
                if arrived.is_empty() {
                    break;
                }
                for mut spec in arrived.drain(..) {
                    let index = flight.submitted();
                    let release = match facility.as_ref() {
                        Some(f) => f.admit(&mut spec, now).max(now),
                        None => now,
                    };
                    check_submission(&spec, now)?;
                    flight.slots.push_back(Slot::new(spec));
                    if release > now {
                        holds.push(Reverse((release, index)));
                    } else {
                        queue(cluster, flight, waiting_runtimes, index, &spec, now)?;
                    }
                    happened = true;
                }
            }

            // 4. Predictions that expired while their jobs still run are corrected (a
            //    scheduler with runtime predictions only; a job ending now ended first).
            if cluster.correct_expired_predictions(now) > 0 {
                happened = true;
            }
            // A scheduler with periodic loops (Slurm's) asked for a pass now.
            if cluster.next_wakeup().is_some_and(|t| t <= now) {
                happened = true;
            }

            // 5. A scheduling pass is due if a job ended or arrived (a user who woke up only
            //    to go back to sleep is not an event of the machine), or, when asked, at a new
            //    instant where jobs wait on an idle machine.
            let idle = *pass_when_idle
                && now > *last_pass
                && cluster.running() == 0
                && cluster.waiting() > 0;
            if happened || idle {
                *last_pass = now;
                return Ok(Advance::Pass(now));
            }
        }
    }

    /// Books the jobs the cluster's last call started (their end events, the sharing model's
    /// stretches). Call it after every call that may start jobs.
    pub fn started(&mut self, cluster: &mut Cluster) -> Result<(), EngineError> {
        let Stepper {
            interference,
            flight,
            ends,
            end_sequence,
            starting,
            waiting_runtimes,
            node_states,
            ..
        } = self;
        // Jobs whose nodes boot run later (their resources held meanwhile).
        let mut delays: Vec<Time> = Vec::new();
        if let Some(states) = node_states.as_mut() {
            let count = cluster.last_started().len();
            for k in 0..count {
                let s = cluster.last_started()[k];
                let Some(spec) = flight.get_mut(s.id.0 as usize).map(|slot| slot.spec) else {
                    delays.push(0);
                    continue;
                };
                let delay = states.job_started(s.start, s.id, &spec, cluster.node_allocation(s.id));
                if delay > 0 {
                    cluster
                        .delay_start(s.id, delay)
                        .map_err(|source| EngineError::Cluster {
                            job_id: spec.job_id,
                            source,
                        })?;
                }
                delays.push(delay);
            }
        }
        let started = cluster.last_started();
        // Fetch the started jobs' specs first: the loads do not wait for one another, so their
        // cache misses overlap (under saturation a job's slot was written long before it
        // starts).
        starting.clear();
        starting.extend(
            started
                .iter()
                .map(|s| flight.get_mut(s.id.0 as usize).map(|slot| slot.spec)),
        );
        for (k, (s, spec)) in started.iter().zip(starting.iter().copied()).enumerate() {
            let index = s.id.0 as usize;
            let (Some(slot), Some(spec)) = (flight.get_mut(index), spec) else {
                continue; // never happens: a starting job was waiting, so it is in flight
            };
            let delay = delays.get(k).copied().unwrap_or(0);
            let (start, kill_time) = (s.start + delay, s.kill_time.saturating_add(delay));
            let end = (start + spec.runtime).min(kill_time);
            slot.start = start;
            slot.end = end;
            slot.killed = spec.runtime > s.kill_time.saturating_sub(s.start);
            slot.shortest_waiting = waiting_runtimes.take(index, effective_runtime(&spec));
            if let Some(annotation) = cluster.annotation(s.id) {
                slot.annotation = Some(Box::new(annotation));
            }
            ends.push(Reverse((end, *end_sequence, s.id)));
            *end_sequence += 1;
        }
        if let Some(model) = interference.as_mut() {
            // Jobs running beside the ones just started may run longer (paper 001).
            for s in cluster.last_started() {
                let Some(spec) = flight.get_mut(s.id.0 as usize).map(|slot| slot.spec) else {
                    continue;
                };
                let Some(allocation) = cluster.allocation(s.id) else {
                    return Err(EngineError::SharingWithoutNodes);
                };
                let work = effective_runtime(&spec);
                for (id, added) in
                    model.job_started(s.id, s.start, work, allocation, spec.bandwidth)
                {
                    let Some(slot) = flight.get_mut(id.0 as usize) else {
                        continue; // a running job is in flight
                    };
                    if let Some(end) = stretch(slot, added) {
                        ends.push(Reverse((end, *end_sequence, id)));
                        *end_sequence += 1;
                    }
                }
            }
        }
        Ok(())
    }

    /// Ends the run once [`Stepper::advance`] found no event left: the remaining records go to
    /// `sink`.
    pub fn finish<W: Workload + ?Sized>(
        mut self,
        cluster: &Cluster,
        workload: &mut W,
        sink: &mut dyn FnMut(&mut W, JobRecord),
    ) -> Result<(), EngineError> {
        // With nothing running, the head of a non-empty queue always fits (jobs wider than the
        // machine are refused at submit, jobs the scheduler can never start are held out of the
        // queue: [`Cluster::is_held`]), so the queue is empty here; checked all the same.
        if cluster.waiting() > 0 {
            return Err(EngineError::Stuck {
                waiting: cluster.waiting(),
            });
        }
        // Every other job ended: the records left go out (a job held for good has none).
        for slot in self.flight.slots.drain(..) {
            if !slot.held {
                sink(workload, slot.record());
            }
        }
        Ok(())
    }
}

/// A model of how running jobs slow each other down: the engine tells it where each job starts
/// and when it ends, and it answers how many seconds each affected running job's run gets added.
/// The scheduler never learns of it (it plans with estimates; the kill time stays start +
/// estimate). Guim's memory-bandwidth sharing ([`MemoryBandwidth`], paper 001) is the one
/// implemented; [`SimOptions`] selects it.
pub trait Interference {
    /// A job started at `start` on `processors` (ids from the cluster's node map) to run `work`
    /// seconds unstretched, each process using `bandwidth` MB/s. Returns every running job whose
    /// added runtime changed, with its new total added runtime in whole seconds (the new job
    /// included), in job order.
    fn job_started(
        &mut self,
        job: JobId,
        start: Time,
        work: Time,
        processors: &[u32],
        bandwidth: u32,
    ) -> Vec<(JobId, Time)>;

    /// A job ended (at its stretched end, or killed): it no longer adds to anyone's load.
    /// Returns what the model saw of where it ran, if anything.
    fn job_ended(&mut self, job: JobId) -> Option<Neighbourhood>;
}

/// Gives a started job `added` seconds more than its work: its end moves (never past its kill
/// time, start + estimate, where it is killed) and its slot says by how much and whether the
/// stretch killed it. Returns the new end if it moved.
fn stretch(slot: &mut Slot, added: Time) -> Option<Time> {
    let spec = &slot.spec;
    let kill_time = slot.start.saturating_add(spec.estimate);
    let wanted = slot
        .start
        .saturating_add(spec.runtime)
        .saturating_add(added);
    let end = wanted.min(kill_time);
    let killed = wanted > kill_time;
    let shared = slot.shared.get_or_insert_default();
    shared.penalty = end - slot.start.saturating_add(effective_runtime(spec));
    shared.killed_by_sharing = killed && spec.runtime <= spec.estimate;
    slot.killed = killed;
    (end != slot.end).then(|| {
        slot.end = end;
        end
    })
}

/// How long a job really runs: until its runtime or its estimate, whichever comes first.
fn effective_runtime(spec: &Job) -> Time {
    spec.runtime.min(spec.estimate).max(0)
}

/// The waiting jobs' effective runtimes, for SJFness: a min-tree over the jobs in flight whose
/// leaf for job index `i` is `i` modulo the capacity (the jobs in flight are consecutive indices,
/// at most the capacity of them, so leaves never collide; a job that is not waiting has
/// [`NOT_WAITING`]). The shortest waiting runtime is the root. A job's arrival or start climbs only
/// while the minima change, which for runtimes in no particular order is a few nodes, however
/// many jobs wait.
#[derive(Default)]
struct WaitingRuntimes {
    /// Leaves, a power of two (0 before the first job).
    capacity: usize,
    /// Node 1 is the root, node k's children are 2k and 2k + 1, leaves from `capacity` on.
    nodes: Vec<Time>,
}

/// The value of a leaf with no waiting job.
const NOT_WAITING: Time = Time::MAX;

impl WaitingRuntimes {
    /// Job `index`, just submitted (its slot is in `flight`), waits to run `runtime` seconds.
    fn add(&mut self, flight: &InFlight, index: usize, runtime: Time) {
        if flight.slots.len() > self.capacity {
            self.rebuild(flight);
        } else {
            self.set(index, runtime);
        }
    }

    /// Job `index`, waiting to run `runtime` seconds, starts; true when no waiting job was
    /// shorter.
    fn take(&mut self, index: usize, runtime: Time) -> bool {
        let shortest = self.nodes.get(1).is_none_or(|&min| runtime <= min);
        if self.capacity > 0 {
            self.set(index, NOT_WAITING);
        }
        shortest
    }

    /// The node of job `index`'s leaf.
    fn leaf(&self, index: usize) -> usize {
        self.capacity + (index & (self.capacity - 1))
    }

    fn set(&mut self, index: usize, value: Time) {
        let mut node = self.leaf(index);
        self.nodes[node] = value;
        while node > 1 {
            node /= 2;
            let min = self.nodes[2 * node].min(self.nodes[2 * node + 1]);
            if self.nodes[node] == min {
                break; // the minima above do not change either
            }
            self.nodes[node] = min;
        }
    }

    /// Doubles the capacity until every job in flight has a leaf, and fills the tree from
    /// their slots (a job not started yet waits).
    fn rebuild(&mut self, flight: &InFlight) {
        let mut capacity = self.capacity.max(64);
        while capacity < flight.slots.len() {
            capacity *= 2;
        }
        self.capacity = capacity;
        self.nodes.clear();
        self.nodes.resize(2 * capacity, NOT_WAITING);
        for (k, slot) in flight.slots.iter().enumerate() {
            if slot.waiting() {
                let leaf = self.leaf(flight.base + k);
                self.nodes[leaf] = effective_runtime(&slot.spec);
            }
        }
        for node in (1..capacity).rev() {
            self.nodes[node] = self.nodes[2 * node].min(self.nodes[2 * node + 1]);
        }
    }
}

/// Checks a job arriving at `now`: submitted now, with a runtime of at least 0.
fn check_submission(spec: &Job, now: Time) -> Result<(), EngineError> {
    if spec.submit != now {
        return Err(EngineError::TimeTravel {
            job_id: spec.job_id,
            submit: spec.submit,
            now,
        });
    }
    if spec.runtime < 0 {
        return Err(EngineError::NegativeRuntime {
            job_id: spec.job_id,
            runtime: spec.runtime,
        });
    }
    Ok(())
}

/// Queues job `index` (in flight, submitted at or before `now`) at `now`: the cluster sees it
/// arrive now. A job the scheduler holds for good is final at once, with no record.
fn queue(
    cluster: &mut Cluster,
    flight: &mut InFlight,
    waiting_runtimes: &mut WaitingRuntimes,
    index: usize,
    spec: &Job,
    now: Time,
) -> Result<(), EngineError> {
    let id = JobId(u32::try_from(index).map_err(|_| EngineError::TooManyJobs)?);
    let request = JobRequest {
        submit: now,
        ..JobRequest::of(id, spec)
    };
    // The runtime reaches the cluster only for a scheduler predicting exact runtimes.
    cluster
        .submit_with_runtime(request, spec.runtime)
        .map_err(|source| EngineError::Cluster {
            job_id: spec.job_id,
            source,
        })?;
    if cluster.is_held(id) {
        // never starts: final at once, with no record and no place among the waiting jobs'
        // runtimes
        if let Some(slot) = flight.get_mut(index) {
            slot.held = true;
            slot.ended = true;
        }
    } else {
        waiting_runtimes.add(flight, index, effective_runtime(spec));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Replay;
    use cluster::Scheduler;
    use std::collections::BTreeMap;

    fn job(job_id: i64, submit: Time, processors: u32, runtime: Time, estimate: Time) -> Job {
        Job {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            job_id,
            user: 1,
            group: 1,
            submit,
            processors,
            estimate,
            runtime,
            bandwidth: 0,
            partition: -1,
            queue: -1,
            extra: job::Extra::NONE,
        }
    }

    /// Records every pass: (time, ids started).
    #[derive(Default)]
    struct Passes(Vec<(Time, Vec<u32>)>);

    impl Observer for Passes {
        fn after_pass(&mut self, now: Time, cluster: &Cluster) {
            self.0
                .push((now, cluster.last_started().iter().map(|s| s.id.0).collect()));
        }
    }

    fn run(processors: u32, jobs: Vec<Job>) -> (Vec<JobRecord>, Passes) {
        let mut cluster = Cluster::new(processors, Scheduler::easy());
        let mut passes = Passes::default();
        let records = simulate(
            &mut cluster,
            &mut Replay::from_jobs(processors, jobs),
            &mut passes,
        )
        .unwrap();
        (records, passes)
    }

    #[test]
    fn a_job_the_scheduler_holds_for_good_ends_the_run_without_a_record() {
        // Slurm's model with a partition of 4 of the 8 processors: jobs 2 and 4 (6 processors)
        // can never start in it; the run ends normally, with the other jobs' records in
        // submission order, and the model counts the two it held
        use slurm_model::{Partition, SlurmConfig, SlurmRule};
        let config = SlurmConfig {
            partitions: vec![Partition {
                processors: Some(4),
                ..Partition::whole_machine("small")
            }],
            weights: slurm_model::Weights {
                fairshare: 100,
                ..Default::default()
            },
            ..SlurmConfig::default()
        };
        let scheduler = Scheduler::new(
            Box::new(cluster::order::Arrival),
            Box::new(SlurmRule::new(config)),
        );
        let mut cluster = Cluster::new(8, scheduler);
        let jobs = vec![
            job(1, 0, 4, 100, 100),
            job(2, 0, 6, 100, 100),
            job(3, 10, 2, 100, 100),
            job(4, 20, 6, 50, 50),
            job(5, 30, 2, 100, 100),
        ];
        let records = simulate(&mut cluster, &mut Replay::from_jobs(8, jobs), &mut ()).unwrap();
        let ids: Vec<i64> = records.iter().map(|r| r.job_id).collect();
        assert_eq!(ids, vec![1, 3, 5]);
        assert!(
            records
                .iter()
                .all(|r| r.start >= r.submit && r.end > r.start)
        );
        assert_eq!((cluster.held(), cluster.waiting()), (2, 0));
        let held: Vec<u32> = (SlurmRule::of(&cluster).unwrap().never_started().iter())
            .map(|(id, _)| id.0)
            .collect();
        assert_eq!(held, vec![1, 3]);
    }

    #[test]
    fn ends_are_applied_before_submissions_at_the_same_time() {
        // A holds the whole machine until 10; B arrives at 10 and starts at 10.
        let (records, passes) = run(4, vec![job(1, 0, 4, 10, 10), job(2, 10, 4, 5, 5)]);
        assert_eq!(records[1].start, 10);
        // One pass per distinct instant: 0, 10 (A ends + B arrives), 15 (B ends).
        assert_eq!(passes.0, vec![(0, vec![0]), (10, vec![1]), (15, vec![])]);
    }

    #[test]
    fn a_group_is_scheduled_once_with_all_its_submissions() {
        // Three jobs arrive at 5. If the scheduler ran per submission, job 1 (first in) would
        // start alone; run once, it sees the queue [1, 2, 3] and starts 1 and 2 in order.
        let (records, passes) = run(
            4,
            vec![
                job(1, 5, 2, 10, 10),
                job(2, 5, 2, 10, 10),
                job(3, 5, 1, 10, 10),
            ],
        );
        assert_eq!(passes.0[0], (5, vec![0, 1]));
        assert_eq!(
            records.iter().map(|r| r.start).collect::<Vec<_>>(),
            vec![5, 5, 15]
        );
    }

    #[test]
    fn zero_runtime_end_forms_a_new_group_at_the_same_instant() {
        // Z (runtime 0) takes the whole machine at 5 and ends at 5; W, which arrived with it,
        // starts at 5 in a second pass at the same instant.
        let (records, passes) = run(4, vec![job(1, 5, 4, 0, 100), job(2, 5, 4, 30, 30)]);
        assert_eq!((records[0].start, records[0].end), (5, 5));
        assert_eq!((records[1].start, records[1].end), (5, 35));
        assert_eq!(passes.0, vec![(5, vec![0]), (5, vec![1]), (35, vec![])]);
    }

    #[test]
    fn jobs_are_killed_at_their_estimate() {
        let (records, _) = run(
            8,
            vec![
                job(1, 0, 1, 100, 50),
                job(2, 0, 1, 50, 100),
                job(3, 0, 1, 70, 70),
            ],
        );
        let ends: Vec<(Time, bool)> = records.iter().map(|r| (r.end, r.killed)).collect();
        assert_eq!(ends, vec![(50, true), (50, false), (70, false)]);
    }

    #[test]
    fn records_come_back_in_submission_order() {
        let (records, _) = run(
            2,
            vec![
                job(7, 3, 2, 1, 1),
                job(4, 1, 2, 100, 100),
                job(9, 2, 1, 1, 1),
            ],
        );
        assert_eq!(
            records.iter().map(|r| r.job_id).collect::<Vec<_>>(),
            vec![4, 9, 7]
        );
    }

    /// A closed-loop stand-in: each time a job ends, its owner submits the next one at once.
    struct Chain {
        left: u32,
        pending: Option<Job>,
    }

    impl Workload for Chain {
        fn next_arrival(&self) -> Option<Time> {
            self.pending.map(|j| j.submit)
        }
        fn arrivals(&mut self, now: Time, out: &mut Vec<Job>) {
            if let Some(j) = self.pending.take_if(|j| j.submit == now) {
                out.push(j);
            }
        }
        fn job_ended(&mut self, record: &JobRecord, now: Time) {
            if self.left > 0 {
                self.left -= 1;
                self.pending = Some(job(record.job_id + 1, now, 1, 60, 60));
            }
        }
    }

    #[test]
    fn feedback_at_the_end_instant_is_submitted_in_that_group() {
        let mut cluster = Cluster::new(1, Scheduler::easy());
        let mut chain = Chain {
            left: 3,
            pending: Some(job(1, 0, 1, 60, 60)),
        };
        let records = simulate(&mut cluster, &mut chain, &mut ()).unwrap();
        let starts: Vec<Time> = records.iter().map(|r| r.start).collect();
        assert_eq!(starts, vec![0, 60, 120, 180]);
    }

    #[test]
    fn submissions_at_the_wrong_time_are_refused() {
        struct Late;
        impl Workload for Late {
            fn next_arrival(&self) -> Option<Time> {
                Some(10)
            }
            fn arrivals(&mut self, _: Time, out: &mut Vec<Job>) {
                out.push(job(1, 3, 1, 1, 1));
            }
        }
        let mut cluster = Cluster::new(1, Scheduler::easy());
        let err = simulate(&mut cluster, &mut Late, &mut ()).unwrap_err();
        assert!(matches!(
            err,
            EngineError::TimeTravel {
                submit: 3,
                now: 10,
                ..
            }
        ));
    }

    proptest::proptest! {
        /// The min-tree over the jobs in flight answers "no waiting job was shorter" as a
        /// sorted multiset of the waiting runtimes does, across growths of its capacity and
        /// while the window of jobs in flight slides (jobs handed out at the front).
        #[test]
        fn waiting_runtimes_agree_with_a_sorted_multiset(
            ops in proptest::collection::vec((0u8..3, 0usize..1000, 0i64..40), 1..600)
        ) {
            let mut flight = InFlight::default();
            let mut tree = WaitingRuntimes::default();
            let mut multiset: BTreeMap<Time, u32> = BTreeMap::new();
            for (op, pick, runtime) in ops {
                let waiting: Vec<usize> = flight
                    .slots
                    .iter()
                    .enumerate()
                    .filter(|(_, s)| s.waiting())
                    .map(|(k, _)| flight.base + k)
                    .collect();
                if op == 0 || waiting.is_empty() {
                    // A submission (more of them than starts, so the window grows).
                    let index = flight.submitted();
                    flight.slots.push_back(Slot::new(job(index as i64, 0, 1, runtime, 100)));
                    tree.add(&flight, index, runtime);
                    *multiset.entry(runtime).or_default() += 1;
                } else if op == 1 {
                    // A start of any waiting job.
                    let index = waiting[pick % waiting.len()];
                    let Some(slot) = flight.get_mut(index) else { unreachable!() };
                    slot.end = 0;
                    let runtime = effective_runtime(&slot.spec);
                    let expected = multiset.keys().next().is_none_or(|&min| runtime <= min);
                    if let Some(count) = multiset.get_mut(&runtime) {
                        *count -= 1;
                        if *count == 0 {
                            multiset.remove(&runtime);
                        }
                    }
                    proptest::prop_assert_eq!(tree.take(index, runtime), expected);
                } else {
                    // Hand out the started jobs at the front.
                    while flight.slots.front().is_some_and(|s| !s.waiting()) {
                        flight.slots.pop_front();
                        flight.base += 1;
                    }
                }
            }
        }
    }
}
