use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasherDefault, Hasher};

use crate::backfill::Ended;
use crate::dynp::PolicyUsage;
use crate::nodes::{NodeMap, Nodes, Selection};
use crate::pool::{Amounts, NeverFits, NodePool, PoolSpec, Release};
use crate::predict::{self, History, Predictor};
use crate::{Extra, JobId, JobRequest, Resources, Scheduler, Time};

mod outages;
mod pass;
mod queue;
mod reserved;

use outages::Outages;
pub use outages::{NodeWindow, Window};
pub use reserved::ReservationUse;
use reserved::Reserved;

pub use pass::{NodeMask, Pass};

pub use queue::CandidateScan;
use queue::WaitingQueue;

/// A job the scheduler started during a pass.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Started {
    /// The job.
    pub id: JobId,
    /// Start time in seconds (the pass's `now`).
    pub start: Time,
    /// When the job is killed if still running: start + user estimate.
    pub kill_time: Time,
    /// True when the job jumped ahead of a blocked, higher-priority job.
    pub backfilled: bool,
}

/// The reservation EASY made during a pass for the first job that did not fit (see
/// [`crate::backfill::Easy`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reservation {
    /// The reserved job (the highest-priority waiting job).
    pub job: JobId,
    /// The earliest time its processors are expected to be free, by the estimates of the running
    /// jobs.
    pub shadow_time: Time,
    /// Processors free at the shadow time beyond the reserved job's size, after backfilling.
    pub extra_processors: u32,
}

/// What the cluster reports about a job that ended ([`Cluster::finish`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Finished {
    /// The prediction's accuracy over the job's life, weighted by how long each prediction was
    /// in effect (Tsafrir's thesis, section 4.1), in [0, 1]. With user estimates as predictions
    /// this is runtime / estimate.
    pub accuracy: f64,
    /// How often the job's prediction was corrected after it expired (section 4.2.2).
    pub corrections: u32,
}

/// Errors from a caller that breaks the cluster's contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClusterError {
    /// The job needs more processors than the machine has (or none at all).
    #[error("job {id:?} needs {processors} processors; the machine has {machine}")]
    BadSize {
        /// The job.
        id: JobId,
        /// Its size.
        processors: u32,
        /// The machine's size.
        machine: u32,
    },
    /// The job's estimate is negative.
    #[error("job {id:?} has a negative runtime estimate ({estimate} s)")]
    NegativeEstimate {
        /// The job.
        id: JobId,
        /// Its estimate.
        estimate: Time,
    },
    /// `finish` named a job that is not running.
    #[error("job {0:?} finished but it is not running")]
    NotRunning(JobId),
    /// `start_job` named a job that is not waiting.
    #[error("job {0:?} cannot start: it is not waiting")]
    NotWaiting(JobId),
    /// `start_job` named a job that does not fit in the free processors.
    #[error("job {0:?} cannot start now: it does not fit in the free processors")]
    DoesNotFit(JobId),
    /// A job was submitted without its runtime to a scheduler predicting exact runtimes.
    #[error("job {0:?} was submitted without its runtime, which the exact predictor needs")]
    RuntimeNeeded(JobId),
    /// A machine of nodes that cannot be built or cannot run this scheduler.
    #[error("{0}")]
    BadMachine(String),
    /// The job needs more of another resource than the machine has.
    #[error("job {id:?} needs {needed:?} of the machine's other resources; it has {machine:?}")]
    BadExtra {
        /// The job.
        id: JobId,
        /// Its amounts.
        needed: Extra,
        /// The machine's.
        machine: Extra,
    },
}

/// A machine of identical processors with a waiting queue and a scheduler.
///
/// The cluster owns what every policy shares: the machine (its processors and, optionally, its
/// nodes), the running jobs, the waiting queue and the runtime predictor's history. The
/// backfilling rule ([`Scheduler::backfill`]) owns its own state (EASY's reservation,
/// conservative backfilling's profile and reservations, dynP's current policy) and sees the
/// rest through a [`Pass`].
#[derive(Debug)]
pub struct Cluster {
    processors: u32,
    free: u32,
    /// The machine's other resources ([`Extra::NONE`] on a machine of processors only).
    extra: Extra,
    /// The other resources not held by a running job.
    free_extra: Extra,
    /// Of the other resources, the amounts available now ([`Cluster::set_available_extra`]:
    /// a power cap that follows a schedule); `extra` is the most there ever are.
    available_extra: Extra,
    /// What running jobs hold beyond the amounts available now (the availability fell below
    /// what they held): their ends repay it before anything is free again.
    owed_extra: Extra,
    scheduler: Scheduler,
    /// Waiting jobs: in arrival order for arrival-order policies, else sorted at every pass.
    queue: WaitingQueue,
    running: Running,
    started: Vec<Started>,
    /// The users' recent runtimes, for [`Predictor::RecentUserRuntimes`].
    history: History,
    /// A machine of nodes: which processors each running job holds (`None`: processors are
    /// only counted).
    nodes: Option<NodeMap>,
    /// The jobs the rule holds for good ([`Backfill::hold_for_good`]): submitted, never
    /// queued, never started.
    held: std::collections::HashSet<JobId, BuildHasherDefault<IdHasher>>,
    /// A machine of node types ([`Cluster::with_pool`]): which nodes each running job holds.
    pool: Option<NodePool>,
    /// How many submitted jobs the pool holds for good, by reason ([`NeverFits::ALL`]'s order).
    never_fits: [u64; 4],
    /// Processors out of service: maintenance windows and drains ([`Cluster::with_windows`],
    /// [`Cluster::set_drained`]).
    outages: Outages,
    /// Processors in service at the last change of the outages (the machine's less what the
    /// windows and the drain took then).
    in_service: u32,
    /// Whether an availability of other resources changed since the rule was last told
    /// ([`Cluster::capacity_changed`]).
    extra_changed: bool,
    /// Whether the outages changed since the rule was last told, and whether the drain did.
    outages_changed: Option<bool>,
    /// Processors drained by [`Cluster::set_drained`] (the outages' drains), and down after a
    /// node failure by [`Cluster::set_failed`]: the drain the outages keep is their sum.
    drained_parts: (u32, u32),
    /// On a machine of node types, the nodes drained ([`Cluster::set_drained_nodes`]) and
    /// down after a node failure ([`Cluster::set_failed_nodes`]), by index, ascending: a node
    /// in either is out of service.
    out_nodes: (Vec<u32>, Vec<u32>),
    /// The members of the windows that are reservations ([`Window::reservation`]), waiting
    /// and running on the windows' processors.
    reserved: Reserved,
}

/// A waiting job and the runtime the scheduler plans with (its prediction, fixed at submission).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Queued {
    pub(crate) job: JobRequest,
    pub(crate) prediction: Time,
    /// Started: a tombstone at its queue position until the queue is compacted.
    pub(crate) started: bool,
}

/// Running jobs indexed by expected end (start + prediction, then id): the order in which EASY
/// assumes their processors (and other resources) come back, with what each gives back.
#[derive(Debug, Default)]
pub(crate) struct Running {
    pub(crate) by_expected_end: BTreeMap<(Time, JobId), Release>,
    jobs: HashMap<JobId, RunningJob, BuildHasherDefault<IdHasher>>,
    /// On a machine of node types, the jobs that ended since the last pass, each with its
    /// place in `by_expected_end` and what it gave back: EASY carries its shadow past the
    /// ends that did not touch the blocked job's nodes.
    pub(crate) ended: Vec<((Time, JobId), Release)>,
    /// Counts every start, end and prediction correction, and every change of placement:
    /// half of [`StateVersion`].
    pub(crate) changes: u64,
}

/// A version of the cluster's state as a backfilling rule sees it ([`Pass::version`]): it
/// changes whenever a job starts or ends, a running job's prediction is corrected, the placement
/// changes, or waiting jobs move to other queue positions (a compaction, a sort, an arrival out
/// of order). Two passes that see the same version see the same running jobs, machine and queue
/// positions, except for jobs appended at the end of the queue since, and a later `now`: a rule
/// may carry over what it learned about the positions it already searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StateVersion {
    running: u64,
    queue: u64,
}

impl StateVersion {
    /// Whether the waiting jobs kept their queue positions between the two versions (jobs
    /// may have arrived at the end).
    pub(crate) fn same_positions(&self, later: &StateVersion) -> bool {
        self.queue == later.queue
    }
}

/// A hasher for job ids: one multiplication instead of SipHash (the running jobs are looked up
/// at every start and end). Ids are the caller's numbers, not an adversary's, and the map is
/// never iterated, so neither hash flooding nor iteration order is a concern.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.write_u64(u64::from(byte));
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        // Fibonacci hashing: the odd multiplier spreads consecutive ids over the high bits
        // (hashbrown's tag) as well as the low bits (its bucket).
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// What the cluster remembers about a running job.
#[derive(Debug)]
struct RunningJob {
    submit: Time,
    start: Time,
    user: i64,
    group: i64,
    processors: u32,
    /// The other resources it holds.
    extra: Extra,
    estimate: Time,
    /// The current prediction, seconds from the start.
    prediction: Time,
    /// Corrections made beyond the estimate so far (they grow 1 min, 15 min, 30 min, ...).
    beyond_estimate: u32,
    corrections: u32,
    /// The prediction at submission.
    initial_prediction: Time,
    /// (from, prediction) for every correction since (most jobs have none: no allocation).
    corrected: Vec<(Time, Time)>,
}

impl RunningJob {
    fn expected_end(&self) -> Time {
        self.start.saturating_add(self.prediction)
    }
}

impl Cluster {
    /// An idle machine of `processors` processors run by `scheduler`. Runtime predictions
    /// ([`Scheduler::predictor`]) are an EASY feature: every other backfilling rule plans with
    /// user estimates, whose reservations only hold because estimates are upper bounds.
    pub fn new(processors: u32, mut scheduler: Scheduler) -> Cluster {
        if !scheduler.backfill.uses_predictions() {
            scheduler.predictor = Predictor::UserEstimate;
        }
        scheduler.backfill.machine(processors);
        let mut cluster = Cluster {
            processors,
            free: processors,
            extra: Extra::NONE,
            free_extra: Extra::NONE,
            available_extra: Extra::NONE,
            owed_extra: Extra::NONE,
            queue: WaitingQueue::default(),
            running: Running::default(),
            started: Vec::new(),
            history: History::default(),
            nodes: None,
            held: std::collections::HashSet::default(),
            pool: None,
            never_fits: [0; 4],
            outages: Outages::default(),
            in_service: processors,
            extra_changed: false,
            outages_changed: None,
            out_nodes: (Vec::new(), Vec::new()),
            drained_parts: (0, 0),
            reserved: Reserved::default(),
            scheduler,
        };
        cluster.set_priority_search(true);
        cluster
    }

    /// The same cluster on a machine that also has the amounts `extra` of other resources (its
    /// [`crate::ResourceKinds`]' kinds), which jobs ask for in [`JobRequest::extra`] and hold
    /// while they run. Only a backfilling rule that schedules them
    /// ([`crate::Backfill::schedules_extra`]: none and the EASY family) runs such a machine;
    /// the others plan with processor counts and are refused. Call before any job arrives.
    pub fn with_extra(mut self, extra: Extra) -> Result<Cluster, ClusterError> {
        if !extra.is_none() && !self.scheduler.backfill.schedules_extra() {
            return Err(ClusterError::BadMachine(format!(
                "the {} backfilling rule plans with processor counts only: a machine with other resources runs under none or the EASY family",
                self.scheduler.backfill.name()
            )));
        }
        if !extra.is_none() && self.nodes.as_ref().is_some_and(NodeMap::contiguous) {
            return Err(ClusterError::BadMachine(
                "First Continuous selection counts runs of processors only: it cannot be combined with other resources".to_string(),
            ));
        }
        self.extra = extra;
        self.free_extra = extra;
        self.available_extra = extra;
        self.set_priority_search(true);
        Ok(self)
    }

    /// The same cluster with `amount` of the machine-wide resource `kind` added as a guard: a
    /// job asking for it starts only while it fits, under a rule that schedules other resources
    /// ([`Cluster::with_extra`]) or one that at least tests them at every start
    /// ([`crate::Backfill::tests_extra_at_starts`]: the Slurm model, whose plans do not hold
    /// them). Call before any job arrives.
    pub fn with_guard(mut self, kind: usize, amount: u32) -> Result<Cluster, ClusterError> {
        let extra = self.extra.with(kind, amount);
        if self.scheduler.backfill.schedules_extra()
            || !self.scheduler.backfill.tests_extra_at_starts()
        {
            return self.with_extra(extra);
        }
        self.extra = extra;
        self.free_extra = self.free_extra.with(kind, amount);
        self.available_extra = self.available_extra.with(kind, amount);
        Ok(self)
    }

    /// Sets the amount of the other resource of kind `kind` available from now on to `amount`
    /// (at most the machine's, [`Cluster::extra`]): a capacity that follows a schedule, such as a
    /// power cap. Running jobs keep what they hold; when they hold more than `amount`, nothing
    /// of the kind is free until their ends have brought them under it. A rule plans with the
    /// amounts free now (its reservations assume the availability holds).
    pub fn set_available_extra(&mut self, kind: usize, amount: u32) {
        let amount = amount.min(self.extra.get(kind));
        let current = self.available_extra.get(kind);
        let (free, owed) = (self.free_extra.get(kind), self.owed_extra.get(kind));
        let (free, owed) = if amount < current {
            let cut = current - amount;
            let from_free = cut.min(free);
            (free - from_free, owed + (cut - from_free))
        } else {
            let added = amount - current;
            let repaid = added.min(owed);
            (free + (added - repaid), owed - repaid)
        };
        self.free_extra = self.free_extra.with(kind, free);
        self.owed_extra = self.owed_extra.with(kind, owed);
        self.available_extra = self.available_extra.with(kind, amount);
        self.extra_changed = true;
    }

    /// Tells the rule what changed at `now` since it was last told, so that its next pass looks
    /// again: the availability of other resources ([`Cluster::set_available_extra`],
    /// [`crate::Backfill::capacity_changed`]), the outages ([`Cluster::set_drained`],
    /// [`crate::Backfill::outages_changed`]).
    pub fn capacity_changed(&mut self, now: Time) {
        if std::mem::take(&mut self.extra_changed) {
            self.scheduler.backfill.capacity_changed(now);
        }
        if let Some(requested) = self.outages_changed.take() {
            self.scheduler.backfill.outages_changed(now, requested);
        }
    }

    /// The other resources available now ([`Cluster::set_available_extra`]).
    pub fn available_extra(&self) -> Extra {
        self.available_extra
    }

    /// The same cluster with maintenance windows known from the start (see [`Window`]): no job
    /// starts if, at the start of a window its run reaches into (by its estimate and the
    /// overrun its rule allows), the running jobs still within their limits and it would not
    /// fit in what the window leaves; a window's processors leave service at its start
    /// ([`Cluster::set_drained`] applies them). Errors: a window wider than the machine or
    /// empty, a machine of nodes or of node types, or a backfilling rule that plans running
    /// jobs' ends without testing each start (conservative backfilling, dynP). Call before any
    /// job arrives.
    ///
    /// A window with a [`Window::reservation`] is a reservation for named users: the jobs
    /// submitted to it ([`JobRequest::reservation`]) run on its processors alone, in arrival
    /// order, while it lasts, and are killed at its end (see `reserved.rs` for Slurm's
    /// semantics and what is chosen); the rule never sees them.
    pub fn with_windows(mut self, mut windows: Vec<Window>) -> Result<Cluster, ClusterError> {
        self.check_outages()?;
        windows.sort_by_key(|w| (w.from, w.to));
        for w in &windows {
            if w.to <= w.from || w.processors == 0 || w.processors > self.processors {
                return Err(ClusterError::BadMachine(format!(
                    "a maintenance window of {} processors over [{}, {}) s cannot be kept on a machine of {} processors",
                    w.processors, w.from, w.to, self.processors
                )));
            }
        }
        self.outages.windows = windows;
        Ok(self)
    }

    /// The same cluster, on a machine of node types, with maintenance windows on named nodes
    /// known from the start (see [`NodeWindow`]): no job starts on a window's node if its run,
    /// by its estimate and the overrun the rule allows, reaches into the window; a window's
    /// nodes leave service at its start and come back at its end
    /// ([`Cluster::enter_node_windows`] applies them); EASY's shadow and the node plan count
    /// on them from its end. Errors: not a machine of node types, a rule that cannot keep
    /// outages, a window of no node, of a node the machine does not have, or that ends before
    /// it begins. Call before any job arrives.
    pub fn with_node_windows(
        mut self,
        mut windows: Vec<NodeWindow>,
    ) -> Result<Cluster, ClusterError> {
        self.check_out_of_service()?;
        let Some(pool) = self.pool.as_ref() else {
            return Err(ClusterError::BadMachine(
                "maintenance windows on named nodes are kept on a machine of node types; a machine of counted processors takes windows of processors (Cluster::with_windows)".to_string(),
            ));
        };
        let nodes = pool.capacity().len() as u32;
        for w in &mut windows {
            w.nodes = sorted(&w.nodes);
            let unknown = w.nodes.last().is_some_and(|&n| n >= nodes);
            if w.to <= w.from || w.nodes.is_empty() || unknown {
                return Err(ClusterError::BadMachine(format!(
                    "a maintenance window over [{}, {}) s of nodes {:?} cannot be kept on a machine of {nodes} nodes",
                    w.from, w.to, w.nodes
                )));
            }
        }
        windows.sort_by_key(|w| (w.from, w.to));
        self.outages.node_windows = windows;
        Ok(self)
    }

    /// On a machine of node types with node windows ([`Cluster::with_node_windows`]): at
    /// `now`, the nodes of the windows in force leave service and those of windows ended come
    /// back (unless drained or down). Jobs still running on a node as its window begins keep
    /// their shares. Call [`Cluster::capacity_changed`] after it.
    pub fn enter_node_windows(&mut self, now: Time) {
        let windowed = self.outages.windowed_at(now);
        if windowed != self.outages.windowed {
            self.outages.windowed = windowed;
            self.apply_out_nodes();
        }
    }

    /// Whether this machine and rule can run outages, and why not.
    pub fn check_outages(&self) -> Result<(), ClusterError> {
        self.check_out_of_service()?;
        if self.pool.is_some() {
            return Err(ClusterError::BadMachine(
                "windows of counted processors and reservations are kept on a machine of counted processors; a machine of node types takes maintenance windows on named nodes (Cluster::with_node_windows), drains and node failures ([failures]), but not reservations yet".to_string(),
            ));
        }
        Ok(())
    }

    /// Whether this machine and rule can take processors or nodes out of service without
    /// notice: drains and node failures ([`Cluster::set_drained`], [`Cluster::set_failed`],
    /// and on a machine of node types [`Cluster::set_drained_nodes`],
    /// [`Cluster::set_failed_nodes`]), and why not.
    pub fn check_out_of_service(&self) -> Result<(), ClusterError> {
        if !self.scheduler.backfill.tests_extra_at_starts() {
            return Err(ClusterError::BadMachine(format!(
                "the {} backfilling rule plans with running jobs' ends and cannot keep processors out of service: use none, the EASY family or the Slurm model",
                self.scheduler.backfill.name()
            )));
        }
        if self.nodes.is_some() {
            return Err(ClusterError::BadMachine(
                "outages are kept on a machine of counted processors or of node types; a machine of processor maps (--node-processors, --selection) does not take them yet".to_string(),
            ));
        }
        Ok(())
    }

    /// On a machine of node types: at `now`, the nodes `down` (indexes in the pool's
    /// [`crate::PoolSpec::nodes`]) are down after node failures, until their repair; every
    /// other node is up. Nothing starts on a down node, and no plan counts on it coming back
    /// (Slurm's backfilling leaves down nodes out, `avail_node_bitmap` in `backfill.c`). The
    /// jobs a failure killed have ended first ([`Cluster::fail`]); a job still running on a
    /// down node keeps its share, which comes back with the node. Call
    /// [`Cluster::capacity_changed`] after it. Nothing on other machines (they take
    /// [`Cluster::set_failed`]).
    pub fn set_failed_nodes(&mut self, down: &[u32]) {
        let down = sorted(down);
        if down != self.out_nodes.1 {
            self.out_nodes.1 = down;
            self.apply_out_nodes();
        }
    }

    /// On a machine of node types: from now on the nodes `drained` (indexes in the pool's
    /// [`crate::PoolSpec::nodes`]) are drained, and no other node is (but those down after a
    /// failure, [`Cluster::set_failed_nodes`]). As Slurm's drain: the jobs on a drained node
    /// run to their end, nothing new starts there, and no plan counts on it coming back
    /// (`avail_node_bitmap` in `backfill.c`). Call [`Cluster::capacity_changed`] after it.
    /// Nothing on other machines (they take [`Cluster::set_drained`]).
    pub fn set_drained_nodes(&mut self, drained: &[u32]) {
        let drained = sorted(drained);
        if drained != self.out_nodes.0 {
            self.out_nodes.0 = drained;
            self.apply_out_nodes();
        }
    }

    /// Takes the nodes drained or down out of service and brings the others back.
    fn apply_out_nodes(&mut self) {
        let Some(pool) = self.pool.as_mut() else {
            return;
        };
        let (drained, down) = &self.out_nodes;
        let gone = |n: u32| drained.binary_search(&n).is_ok() || down.binary_search(&n).is_ok();
        let windowed = &self.outages.windowed;
        self.outages.returning = windowed
            .iter()
            .copied()
            .filter(|&(n, _)| !gone(n))
            .collect();
        let mut changed = false;
        for n in 0..pool.capacity().len() as u32 {
            let out = gone(n) || windowed.binary_search_by_key(&n, |&(m, _)| m).is_ok();
            if pool.is_out_of_service(n) == out {
                continue;
            }
            let moved = pool.set_out_of_service(n, out);
            let moved = pool.as_resources(moved);
            let cpus = pool.capacity()[n as usize].cpus;
            if out {
                self.free = self.free.saturating_sub(moved.processors);
                self.free_extra = self.free_extra.minus(&moved.extra);
                self.in_service = self.in_service.saturating_sub(cpus);
            } else {
                self.free = self.free.saturating_add(moved.processors);
                self.free_extra = self.free_extra.plus(&moved.extra);
                self.in_service = self.in_service.saturating_add(cpus).min(self.processors);
            }
            changed = true;
        }
        if changed {
            // a shadow worked out before cannot be carried past this (`Pass::quiet_ends`)
            self.running.changes += 1;
            self.outages_changed = Some(true);
        }
    }

    /// At `now`, `drained` processors are out of service without notice (a drain or a node
    /// down), on top of the maintenance windows in force now: the processors in service become
    /// the machine's less both. Running jobs keep theirs; when they hold more than stays in
    /// service, nothing is free until their ends repay the difference. Rules plan as if the
    /// drained processors never came back (Slurm's backfilling does), and with each window
    /// until its end. Call [`Cluster::capacity_changed`] after it.
    pub fn set_drained(&mut self, now: Time, drained: u32) {
        self.drained_parts.0 = drained;
        self.apply_drained(now);
    }

    /// At `now`, `down` processors are down after node failures (until their repair), on top
    /// of [`Cluster::set_drained`]'s drains: the same rule as a drain (the jobs a failure
    /// killed have ended first; Slurm's backfilling plans without down nodes as without drained
    /// ones, `avail_node_bitmap` in `backfill.c`). Call [`Cluster::capacity_changed`] after it.
    pub fn set_failed(&mut self, now: Time, down: u32) {
        self.drained_parts.1 = down;
        self.apply_drained(now);
    }

    /// Applies the drains and the failures' down processors at `now`.
    fn apply_drained(&mut self, now: Time) {
        let drained = self
            .drained_parts
            .0
            .saturating_add(self.drained_parts.1)
            .min(self.processors);
        let requested = drained != self.outages.drained;
        self.outages.drained = drained;
        let target = self.outages.in_service(self.processors, now);
        let current = self.in_service;
        if target < current {
            let cut = current - target;
            let from_free = cut.min(self.free);
            self.free -= from_free;
            self.outages.owed += cut - from_free;
        } else {
            let added = target - current;
            let repaid = added.min(self.outages.owed);
            self.outages.owed -= repaid;
            self.free += added - repaid;
        }
        if target != current || requested {
            self.outages_changed = Some(self.outages_changed.unwrap_or(false) || requested);
        }
        self.in_service = target;
    }

    /// Processors in service now (the machine's less the outages at their last change).
    pub fn in_service(&self) -> u32 {
        self.in_service
    }

    /// The same cluster on a machine of node types (`spec`; see [`crate::pool`]): its
    /// processors become the nodes' CPUs, and the kinds `spec` names for memory and GPUs the
    /// nodes' totals (the machine's other kinds, as [`Cluster::with_extra`] gave them, stay
    /// machine-wide). A job then fits only where every node it gets holds its share, on its
    /// partition's nodes; one that never can is held for good ([`Cluster::never_fits`]). Only a
    /// backfilling rule that runs node types runs such a machine
    /// ([`crate::Backfill::schedules_nodes`]: none, the EASY family, conservative, the Slurm
    /// model); not with [`Cluster::with_nodes`]' processor maps. Call before any job arrives.
    pub fn with_pool(mut self, spec: PoolSpec) -> Result<Cluster, ClusterError> {
        if !self.scheduler.backfill.schedules_nodes() {
            return Err(ClusterError::BadMachine(format!(
                "the {} backfilling rule plans with processor counts only: a machine of node types runs under none, the EASY family, conservative or the Slurm model",
                self.scheduler.backfill.name()
            )));
        }
        if self.nodes.is_some() {
            return Err(ClusterError::BadMachine(
                "a machine of node types has no processor map (--node-processors, --selection): give one or the other".to_string(),
            ));
        }
        let totals = spec.totals();
        let mut extra = self.extra;
        for kind in [spec.memory_kind, spec.gpu_kind].into_iter().flatten() {
            extra = extra.with(kind, totals.extra.get(kind));
        }
        let pool = NodePool::new(spec).map_err(ClusterError::BadMachine)?;
        self.processors = totals.processors;
        self.free = totals.processors;
        self.extra = extra;
        self.free_extra = extra;
        self.scheduler.backfill.machine(totals.processors);
        self.scheduler.backfill.node_machine(pool.spec());
        self.pool = Some(pool);
        self.in_service = totals.processors;
        self.set_priority_search(true);
        Ok(self)
    }

    /// The machine of node types, if it is one ([`Cluster::with_pool`]).
    pub fn pool(&self) -> Option<&NodePool> {
        self.pool.as_ref()
    }

    /// The nodes a running job holds on a machine of node types, and what it holds on each.
    pub fn node_allocation(&self, id: JobId) -> Option<&[(u32, Amounts)]> {
        self.pool.as_ref().and_then(|p| p.allocation(id))
    }

    /// How many submitted jobs a machine of node types holds for good because they can never
    /// fit, by reason, in [`NeverFits::ALL`]'s order (all 0 elsewhere).
    pub fn never_fits(&self) -> impl Iterator<Item = (NeverFits, u64)> + '_ {
        NeverFits::ALL.into_iter().zip(self.never_fits)
    }

    /// The machine's other resources ([`Extra::NONE`] on a machine of processors only).
    pub fn extra(&self) -> Extra {
        self.extra
    }

    /// The other resources not held by a running job.
    pub fn free_extra(&self) -> Extra {
        self.free_extra
    }

    /// Allows (`true`, the default) or forbids (`false`) search mode: a CREASY queue under
    /// EASY in queue order or under no backfilling ([`crate::Backfill::searches_in_order`],
    /// alpha finite and not negative, not on a First Continuous machine) is then kept in
    /// arrival order and searched in priority order at every pass, instead of being sorted.
    /// Both make the same decisions; forbidding it gives the straightforward path, which tests
    /// compare with. Allowing it takes effect only while no job has arrived; forbidding it
    /// takes effect at the next pass. Other schedulers are not affected.
    pub fn set_priority_search(&mut self, allowed: bool) {
        // The search counts processors only: a machine with other resources walks the queue.
        let eligible = allowed
            && self.extra.is_none()
            && self.pool.is_none()
            && self.scheduler.backfill.searches_in_order()
            && !self.nodes.as_ref().is_some_and(NodeMap::contiguous);
        self.queue.set_search(
            self.scheduler
                .order
                .as_creasy()
                .filter(|creasy| eligible && creasy.has_bounds()),
        );
    }

    /// A machine of nodes of `nodes.processors_per_node` processors (the last one smaller if
    /// that does not divide `processors`) whose jobs get processors by `nodes.selection` (paper
    /// 001). First Fit works with every scheduler (any free processors will do, so counting
    /// them decides as before); First Continuous needs a run of consecutive processors, which
    /// the EASY family and FCFS take into account and conservative backfilling and dynP, whose
    /// profiles count processors, do not: they are refused.
    pub fn with_nodes(
        processors: u32,
        scheduler: Scheduler,
        nodes: Nodes,
    ) -> Result<Cluster, ClusterError> {
        if nodes.processors_per_node == 0 {
            return Err(ClusterError::BadMachine(
                "a node needs at least one processor".to_string(),
            ));
        }
        if nodes.selection == Selection::FirstContinuous && scheduler.backfill.counts_processors() {
            return Err(ClusterError::BadMachine(
                "First Continuous selection works with FCFS and the EASY family only: conservative backfilling and dynP plan with processor counts".to_string(),
            ));
        }
        let mut cluster = Cluster::new(processors, scheduler);
        cluster.nodes = Some(NodeMap::new(processors, nodes));
        // First Continuous decides by runs of processors, which the search does not know.
        cluster.set_priority_search(true);
        Ok(cluster)
    }

    /// Places jobs by `placement` while the scheduler still decides by the nodes' selection
    /// (an experiment, not the paper's): [`Cluster::allocation`] then reports the processors
    /// `placement` would have chosen for the same jobs at the same times. First Fit placement
    /// works with either selection; First Continuous placement needs First Continuous decisions.
    pub fn place_by(&mut self, placement: Selection) -> Result<(), ClusterError> {
        let Some(nodes) = self.nodes.as_mut() else {
            return Err(ClusterError::BadMachine(
                "a placement needs a machine of nodes".to_string(),
            ));
        };
        if nodes.place_by(placement) {
            self.running.changes += 1;
            Ok(())
        } else {
            Err(ClusterError::BadMachine(
                "First Continuous placement needs First Continuous selection (a run must exist)"
                    .to_string(),
            ))
        }
    }

    /// How the processors reported by [`Cluster::allocation`] are chosen, on a machine of nodes.
    pub fn placement(&self) -> Option<Selection> {
        self.nodes.as_ref().map(NodeMap::placement)
    }

    /// The machine's nodes, if it has them.
    pub fn nodes(&self) -> Option<Nodes> {
        self.nodes.as_ref().map(|n| n.layout)
    }

    /// The processors (numbered 0..P) a running job holds, on a machine of nodes.
    pub fn allocation(&self, id: JobId) -> Option<&[u32]> {
        self.nodes.as_ref().and_then(|n| n.allocation(id))
    }

    /// The machine's processor count.
    pub fn processors(&self) -> u32 {
        self.processors
    }

    /// Processors not allocated to a running job.
    pub fn free_processors(&self) -> u32 {
        self.free
    }

    /// Whether the cluster is in search mode (see [`Cluster::set_priority_search`]): a CREASY
    /// queue kept in arrival order whose priority order is searched rather than sorted.
    pub fn priority_search(&self) -> bool {
        self.queue.search().is_some()
    }

    /// The waiting jobs: after a pass, in the order that pass used (highest priority first),
    /// then the jobs that arrived since. In search mode (see [`Cluster::set_priority_search`])
    /// the queue is not sorted, so this sorts the jobs by their priority at the last pass that
    /// used the order (jobs submitted later follow in arrival order): O(n log n) per call,
    /// meant for observers and tests.
    pub fn queue(&self) -> impl ExactSizeIterator<Item = &JobRequest> + '_ {
        if self.queue.search().is_some() {
            QueueIter::Sorted(self.queue.in_last_order().into_iter())
        } else {
            QueueIter::Kept(self.queue.iter())
        }
        .map(|q| &q.job)
    }

    /// The runtime the scheduler currently plans with for a waiting or running job, seconds:
    /// its prediction (the user estimate unless the scheduler predicts).
    pub fn prediction(&self, id: JobId) -> Option<Time> {
        if let Some(job) = self.running.jobs.get(&id) {
            return Some(job.prediction);
        }
        self.queue
            .iter()
            .find(|q| q.job.id == id)
            .map(|q| q.prediction)
    }

    /// The running jobs' expected ends (start + prediction) and what each holds, earliest
    /// first.
    pub fn expected_resource_releases(&self) -> impl Iterator<Item = (Time, Resources)> + '_ {
        self.running
            .by_expected_end
            .iter()
            .map(|(&(end, _), release)| (end, release.holds))
    }

    /// The running jobs' expected ends (start + prediction) and processors, earliest first: when
    /// the scheduler expects processors to come back.
    pub fn expected_releases(&self) -> impl Iterator<Item = (Time, u32)> + '_ {
        self.running.expected_releases()
    }

    /// dynP only: how the policies were used so far.
    pub fn policy_usage(&self) -> Option<&PolicyUsage> {
        self.scheduler.backfill.policy_usage()
    }

    /// What the backfilling rule knows of job `id` beyond its record
    /// ([`crate::Backfill::annotation`]), asked as the job starts.
    pub fn annotation(&self, id: JobId) -> Option<crate::Annotation> {
        self.scheduler.backfill.annotation(id)
    }

    /// The backfilling rule as the type `T`, when it is one ([`crate::Backfill::as_any`]): how
    /// a report that knows a rule reads its state (the Slurm model's summary section).
    pub fn rule_as<T: 'static>(&self) -> Option<&T> {
        self.scheduler.backfill.as_any()?.downcast_ref()
    }

    /// Asks the backfilling rule to keep its periodic samples for a front end that writes them
    /// ([`crate::Backfill::keep_samples`]); call before the first job.
    pub fn keep_samples(&mut self) {
        self.scheduler.backfill.keep_samples();
    }

    /// The earliest instant at which a running job's prediction expires (start + prediction),
    /// if the scheduler uses predictions that can expire. The caller calls
    /// [`Cluster::correct_expired_predictions`] then, after the jobs that end at that instant
    /// have finished: a job still running has outlived its prediction.
    pub fn next_prediction_expiry(&self) -> Option<Time> {
        if self.scheduler.predictor == Predictor::UserEstimate {
            // Jobs are killed at their estimate, so they end by their expected end.
            return None;
        }
        self.running.by_expected_end.keys().next().map(|k| k.0)
    }

    /// Corrects the prediction of every running job whose prediction expired by `now`
    /// (Tsafrir's thesis, section 4.2.2; see [`predict::corrected_prediction`]). Returns how
    /// many were corrected: if any, the schedule may change, so the caller runs a pass.
    pub fn correct_expired_predictions(&mut self, now: Time) -> usize {
        let mut corrected = 0;
        while let Some((&(end, id), &release)) = self.running.by_expected_end.first_key_value() {
            if end > now {
                break;
            }
            self.running.by_expected_end.remove(&(end, id));
            let Some(job) = self.running.jobs.get_mut(&id) else {
                continue; // unreachable: the two indexes hold the same jobs
            };
            while job.expected_end() <= now {
                let beyond = if job.prediction >= job.estimate {
                    job.beyond_estimate + 1
                } else {
                    0
                };
                job.prediction =
                    predict::corrected_prediction(job.prediction, job.estimate, beyond);
                job.beyond_estimate = job.beyond_estimate.max(beyond);
                job.corrections += 1;
            }
            job.corrected.push((now, job.prediction));
            self.running.changes += 1;
            self.running
                .by_expected_end
                .insert((job.expected_end(), id), release);
            corrected += 1;
        }
        corrected
    }

    /// Whether the scheduler holds a submitted job for good: it can never start, so it never
    /// entered the waiting queue ([`crate::Backfill::hold_for_good`]; the Slurm model's jobs
    /// wider than their partition or QOS limit). Such a job is neither waiting nor running.
    pub fn is_held(&self, id: JobId) -> bool {
        !self.held.is_empty() && self.held.contains(&id)
    }

    /// How many submitted jobs the scheduler holds for good ([`Cluster::is_held`]).
    pub fn held(&self) -> usize {
        self.held.len()
    }

    /// Number of jobs waiting (not counting the jobs held for good).
    pub fn waiting(&self) -> usize {
        self.queue.waiting() + self.reserved.waiting()
    }

    /// Number of jobs running.
    pub fn running(&self) -> usize {
        self.running.jobs.len() + self.reserved.running()
    }

    /// The scheduler in use.
    pub fn scheduler(&self) -> &Scheduler {
        &self.scheduler
    }

    /// The reservation made by the last [`Cluster::schedule`] pass, if it made one (EASY and
    /// its variants only). A pass with no free processors makes none: nothing could start, so
    /// it returns at once.
    pub fn last_reservation(&self) -> Option<Reservation> {
        self.scheduler.backfill.reservation()
    }

    /// Under conservative backfilling, the start reserved for a waiting job by the last pass
    /// (a job submitted since has none yet). The reservation never moves later.
    pub fn planned_start(&self, id: JobId) -> Option<Time> {
        self.scheduler.backfill.planned_start(id)
    }

    /// The running jobs with their processors and start times (seconds), by expected end and
    /// id (a fixed order: the same running jobs list the same way). Jobs running in a
    /// reservation ([`Window::reservation`]) are not among them: they hold processors out of
    /// service to every other job.
    pub fn running_jobs(&self) -> impl Iterator<Item = (JobId, u32, Time)> + '_ {
        self.running.by_expected_end.keys().map(|&(_, id)| {
            let job = self.running.jobs.get(&id);
            (
                id,
                job.map_or(0, |j| j.processors),
                job.map_or(0, |j| j.start),
            )
        })
    }

    /// What each reservation's members did with it so far ([`Window::reservation`]), by
    /// reservation: members started in it, released unstarted at its end, processor-seconds
    /// run in it.
    pub fn reservation_use(
        &self,
    ) -> impl Iterator<Item = (crate::ReservationId, ReservationUse)> + '_ {
        self.reserved.uses()
    }

    /// When a running job was submitted, seconds.
    pub fn running_submit(&self, id: JobId) -> Option<Time> {
        self.running.jobs.get(&id).map(|j| j.submit)
    }

    /// The jobs started by the last [`Cluster::schedule`] pass.
    pub fn last_started(&self) -> &[Started] {
        &self.started
    }

    /// Adds a job to the waiting queue. It starts at a later [`Cluster::schedule`] call, unless
    /// the scheduler holds it for good ([`Cluster::is_held`]). A
    /// scheduler with [`Predictor::Exact`] needs the job's runtime: use
    /// [`Cluster::submit_with_runtime`].
    pub fn submit(&mut self, job: JobRequest) -> Result<(), ClusterError> {
        self.enqueue(job, None)
    }

    /// [`Cluster::submit`], telling the cluster the job's actual runtime (seconds). Only
    /// [`Predictor::Exact`] reads it, as its prediction; the queue order and the backfilling
    /// rule never see it. The engine submits every job this way.
    pub fn submit_with_runtime(
        &mut self,
        job: JobRequest,
        runtime: Time,
    ) -> Result<(), ClusterError> {
        self.enqueue(job, Some(runtime))
    }

    fn enqueue(&mut self, job: JobRequest, runtime: Option<Time>) -> Result<(), ClusterError> {
        if Reserved::admits(&self.outages.windows, &job) {
            self.check_request(&job)?;
            if self.scheduler.predictor == Predictor::Exact && runtime.is_none() {
                return Err(ClusterError::RuntimeNeeded(job.id));
            }
            self.reserved.wait(job, runtime);
            return Ok(());
        }
        if let Some(pool) = self.pool.as_mut()
            && let Err(reason) = pool.submit(&job)
        {
            self.never_fits[reason as usize] += 1;
            self.held.insert(job.id);
            return Ok(());
        }
        self.check_request(&job)?;
        if self.scheduler.backfill.hold_for_good(&job) {
            if let Some(pool) = self.pool.as_mut() {
                pool.forget(job.id);
            }
            self.held.insert(job.id);
            return Ok(());
        }
        let prediction = match self.scheduler.predictor {
            Predictor::UserEstimate => job.estimate,
            Predictor::RecentUserRuntimes => self.history.predict(job.user, job.estimate),
            Predictor::Exact => match runtime {
                Some(runtime) => predict::exact_prediction(runtime, job.estimate),
                None => return Err(ClusterError::RuntimeNeeded(job.id)),
            },
        };
        let queued = Queued {
            job,
            prediction,
            started: false,
        };
        if prediction > job.estimate {
            // Unreachable (every predictor caps at the estimate), but the search's bounds read
            // predictions as lower bounds of estimates: leave search mode rather than rely on it.
            self.queue.set_search(None);
        }
        if self.scheduler.order.is_arrival_order() || self.queue.search().is_some() {
            // Keep arrival order (submit, id); jobs almost always arrive in that order already.
            let key = (job.submit, job.id);
            let at = self
                .queue
                .partition_point(|q| (q.job.submit, q.job.id) <= key);
            self.queue.insert(at, queued);
        } else {
            self.queue.push(queued); // sorted by priority at every pass
        }
        self.scheduler.backfill.submitted(&job);
        Ok(())
    }

    /// Refuses a job no machine of this size could run: no processors or more than the
    /// machine's, more of another resource than the machine has, a negative estimate.
    fn check_request(&self, job: &JobRequest) -> Result<(), ClusterError> {
        if job.processors == 0 || job.processors > self.processors {
            return Err(ClusterError::BadSize {
                id: job.id,
                processors: job.processors,
                machine: self.processors,
            });
        }
        if !job.extra.fits_in(&self.extra) {
            return Err(ClusterError::BadExtra {
                id: job.id,
                needed: job.extra,
                machine: self.extra,
            });
        }
        if job.estimate < 0 {
            return Err(ClusterError::NegativeEstimate {
                id: job.id,
                estimate: job.estimate,
            });
        }
        Ok(())
    }

    /// Returns the processors of a running job that ended at `now` (normally or killed), and
    /// learns its runtime for later predictions.
    pub fn finish(&mut self, id: JobId, now: Time) -> Result<Finished, ClusterError> {
        self.end(id, now, true)
    }

    /// [`Cluster::finish`] for a running job a node failure killed at `now`: its processors
    /// come back the same way, but its cut run teaches the runtime predictor nothing (it is
    /// not the job's runtime).
    pub fn fail(&mut self, id: JobId, now: Time) -> Result<Finished, ClusterError> {
        self.end(id, now, false)
    }

    /// Ends the running job `id` at `now`; `learn`: its run is its runtime.
    fn end(&mut self, id: JobId, now: Time, learn: bool) -> Result<Finished, ClusterError> {
        if let Some(member) = (self.reserved.running() > 0)
            .then(|| self.reserved.end(id, now))
            .flatten()
        {
            let job = member.job;
            let runtime = (now - member.start).max(0);
            if learn
                && (self.scheduler.predictor == Predictor::RecentUserRuntimes
                    || self.scheduler.order.reads_history())
            {
                self.history.record(job.user, job.submit, id, runtime);
            }
            return Ok(Finished {
                accuracy: predict::weighted_accuracy((job.submit, job.estimate), &[], now, runtime),
                corrections: 0,
            });
        }
        let job = self
            .running
            .jobs
            .remove(&id)
            .ok_or(ClusterError::NotRunning(id))?;
        let release = self
            .running
            .by_expected_end
            .remove(&(job.expected_end(), id))
            .ok_or(ClusterError::NotRunning(id))?;
        // What it held on nodes out of service stays apart until they come back.
        let mut parked = Resources::default();
        if let Some(pool) = self.pool.as_mut() {
            self.running.ended.push(((job.expected_end(), id), release));
            let amounts = pool.release(id);
            parked = pool.as_resources(amounts);
        }
        let processors = job.processors.saturating_sub(parked.processors);
        let extra = job.extra.minus(&parked.extra);
        if self.outages.owed == 0 {
            self.free += processors;
        } else {
            // what the outages took from running jobs is repaid first
            let repaid = processors.min(self.outages.owed);
            self.outages.owed -= repaid;
            self.free += processors - repaid;
        }
        if self.owed_extra.is_none() {
            self.free_extra = self.free_extra.plus(&extra);
        } else {
            // what the availability took from running jobs is repaid first
            let repaid = self.owed_extra.minus(&extra);
            let returned = extra.minus(&self.owed_extra);
            self.owed_extra = repaid;
            self.free_extra = self.free_extra.plus(&returned);
        }

        self.running.changes += 1;
        if let Some(nodes) = self.nodes.as_mut() {
            nodes.release(id);
        }
        self.scheduler.backfill.finished(
            &Ended {
                id,
                start: job.start,
                processors: job.processors,
                estimate: job.estimate,
            },
            now,
        );
        let runtime = (now - job.start).max(0);
        if learn
            && (self.scheduler.predictor == Predictor::RecentUserRuntimes
                || self.scheduler.order.reads_history())
        {
            self.history.record(job.user, job.submit, id, runtime);
        }
        Ok(Finished {
            accuracy: predict::weighted_accuracy(
                (job.submit, job.initial_prediction),
                &job.corrected,
                now,
                runtime,
            ),
            corrections: job.corrections,
        })
    }

    /// Whether running jobs' starts may be delayed ([`Cluster::delay_start`]): the backfilling
    /// rule keeps no plan of running jobs between passes (none, the EASY family), or follows
    /// the delays itself (the Slurm model).
    pub fn follows_start_delays(&self) -> bool {
        self.scheduler.backfill.follows_start_delays()
    }

    /// A job started at its pass only holds its resources while its nodes boot: it runs from
    /// `by` seconds later, so its start, expected end and kill time move by `by` (Slurm resets
    /// a job's start time when its powered-up nodes are ready, `job_config_fini` in
    /// `job_mgr.c`). Its resources stay held from the pass. Errors: the job is not running, or
    /// the rule plans with running jobs' ends and does not follow delays
    /// ([`Cluster::follows_start_delays`]).
    pub fn delay_start(&mut self, id: JobId, by: Time) -> Result<(), ClusterError> {
        if by <= 0 {
            return Ok(());
        }
        if !self.follows_start_delays() {
            return Err(ClusterError::BadMachine(format!(
                "the {} backfilling rule plans with running jobs' ends and cannot follow a start delayed by booting nodes",
                self.scheduler.backfill.name()
            )));
        }
        let job = self
            .running
            .jobs
            .get_mut(&id)
            .ok_or(ClusterError::NotRunning(id))?;
        let release = self
            .running
            .by_expected_end
            .remove(&(job.expected_end(), id))
            .ok_or(ClusterError::NotRunning(id))?;
        job.start = job.start.saturating_add(by);
        self.running
            .by_expected_end
            .insert((job.expected_end(), id), release);
        self.running.changes += 1;
        self.scheduler.backfill.start_delayed(id, by);
        Ok(())
    }

    /// The next instant the scheduler wants a pass although no job arrives or ends (Slurm's
    /// periodic loops), seconds: the engine wakes the cluster then. `None` for schedulers that
    /// act at events only.
    pub fn next_wakeup(&self) -> Option<Time> {
        self.scheduler.backfill.next_wakeup()
    }

    /// The scheduler's queue order, mutable: an order that holds state set from outside (the
    /// Gymnasium environment's scores) is reached through [`crate::QueueOrder::as_any_mut`]. The
    /// cluster reads it at the next pass.
    pub fn order_mut(&mut self) -> &mut dyn crate::QueueOrder {
        &mut *self.scheduler.order
    }

    /// Whether a job holding `resources` could start now: enough free processors (on a machine
    /// of nodes under First Continuous, a run of them) and enough of every other resource.
    pub fn fits_now(&self, resources: &Resources) -> bool {
        resources.extra.fits_in(&self.free_extra)
            && match &self.nodes {
                None => resources.processors <= self.free,
                Some(nodes) => nodes.fits(resources.processors, self.free),
            }
    }

    /// Whether the waiting job `id`, asking for `resources`, fits now: machine-wide
    /// ([`Cluster::fits_now`]) and, on a machine of node types, on its nodes.
    pub fn job_fits_now(&self, id: JobId, resources: &Resources) -> bool {
        self.fits_now(resources) && self.pool.as_ref().is_none_or(|p| p.fits(id))
    }

    /// Starts the waiting job `id` at `now`, outside any rule (a decision made elsewhere: the
    /// Gymnasium environment's pick), and returns it as [`Cluster::last_started`] then does.
    /// The job keeps its place in no order; the rule sees the machine as it is at its next
    /// pass, as after any start. O(queue) to find the job. Errors: the job is not waiting, or
    /// does not fit now ([`Cluster::fits_now`]); nothing changes then. Only for rules that keep
    /// no plan between passes (none, EASY and its variants): a rule's hooks do not see this
    /// start until its next pass.
    pub fn start_job(&mut self, now: Time, id: JobId) -> Result<&[Started], ClusterError> {
        self.started.clear();
        let position = (0..self.queue.positions())
            .find(|&p| {
                let q = self.queue.get(p);
                !q.started && q.job.id == id
            })
            .ok_or(ClusterError::NotWaiting(id))?;
        let resources = self.queue.get(position).job.resources();
        if !self.fits_now(&resources) || self.pool.as_ref().is_some_and(|p| !p.fits(id)) {
            return Err(ClusterError::DoesNotFit(id));
        }
        let mut pass = Pass {
            now,
            processors: self.processors,
            free: &mut self.free,
            extra: self.extra,
            free_extra: &mut self.free_extra,
            queue: &mut self.queue,
            history: &self.history,
            running: &mut self.running,
            started: &mut self.started,
            nodes: self.nodes.as_mut(),
            pool: self.pool.as_mut(),
            order: &*self.scheduler.order,
            overrun: self.scheduler.backfill.overrun_allowed(),
            outages: &self.outages,
        };
        pass.start(position, false);
        self.compact_after_starts();
        Ok(&self.started)
    }

    /// Runs one scheduling pass at `now` and returns the jobs it started, in start order: the
    /// backfilling rule decides, through a [`Pass`] over the queue, the running jobs and the
    /// machine; the jobs it started then leave the queue.
    pub fn schedule(&mut self, now: Time) -> &[Started] {
        self.started.clear();
        if self.reserved.waiting() > 0 {
            // members whose reservation ended unstarted join the queue as ordinary jobs, from
            // now (as a held job released: its age counts from then)
            for (mut job, runtime) in self.reserved.expired(&self.outages.windows, now) {
                job.reservation = crate::ReservationId::NONE;
                job.submit = job.submit.max(now);
                if self.enqueue(job, runtime).is_err() {
                    continue; // unreachable: checked as it arrived
                }
            }
        }
        let mut pass = Pass {
            now,
            processors: self.processors,
            free: &mut self.free,
            extra: self.extra,
            free_extra: &mut self.free_extra,
            queue: &mut self.queue,
            history: &self.history,
            running: &mut self.running,
            started: &mut self.started,
            nodes: self.nodes.as_mut(),
            pool: self.pool.as_mut(),
            order: &*self.scheduler.order,
            overrun: self.scheduler.backfill.overrun_allowed(),
            outages: &self.outages,
        };
        self.scheduler.backfill.schedule(&mut pass);
        self.running.ended.clear();
        self.compact_after_starts();
        self.reserved
            .start(&self.outages.windows, now, &mut self.started);
        &self.started
    }

    /// Started jobs leave tombstones. Rules that skip them keep them until they outnumber the
    /// waiting jobs; the others see a queue without any at every pass.
    fn compact_after_starts(&mut self) {
        if self.scheduler.backfill.skips_started_positions() {
            self.queue.compact_if_sparse();
        } else {
            self.queue.compact();
        }
    }
}

/// The waiting jobs as [`Cluster::queue`] gives them: the queue's own order, or sorted.
enum QueueIter<'a, K: ExactSizeIterator<Item = &'a Queued>> {
    Kept(K),
    Sorted(std::vec::IntoIter<&'a Queued>),
}

impl<'a, K: ExactSizeIterator<Item = &'a Queued>> Iterator for QueueIter<'a, K> {
    type Item = &'a Queued;

    fn next(&mut self) -> Option<&'a Queued> {
        match self {
            QueueIter::Kept(jobs) => jobs.next(),
            QueueIter::Sorted(jobs) => jobs.next(),
        }
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        match self {
            QueueIter::Kept(jobs) => jobs.size_hint(),
            QueueIter::Sorted(jobs) => jobs.size_hint(),
        }
    }
}

impl<'a, K: ExactSizeIterator<Item = &'a Queued>> ExactSizeIterator for QueueIter<'a, K> {}

/// An integer whose order is `f64::total_cmp`'s order, so priorities can be sort keys.
fn total_order_key(x: f64) -> i64 {
    let bits = x.to_bits() as i64;
    bits ^ ((((bits >> 63) as u64) >> 1) as i64)
}

impl Running {
    /// Jobs running.
    pub(crate) fn len(&self) -> usize {
        self.jobs.len()
    }

    /// (user, group, processors) of every running job, in no particular order.
    pub(crate) fn owners(&self) -> impl Iterator<Item = (i64, i64, u32)> + '_ {
        self.jobs.values().map(|j| (j.user, j.group, j.processors))
    }

    /// The shadow time and extra processors for a job of `needed` processors when `free` are
    /// free now: release running jobs in order of (start + estimate, id) until the free count
    /// reaches `needed`; the release time of the last one is the shadow time and whatever the
    /// count exceeds `needed` by is the extra.
    fn shadow(&self, free: u32, needed: u32) -> (Time, u32) {
        let mut available = free;
        for (&(end, _), release) in &self.by_expected_end {
            available += release.holds.processors;
            if available >= needed {
                return (end, available - needed);
            }
        }
        // Unreachable: submit() rejects jobs wider than the machine, and all processors are free
        // once every running job is released. Never reserve in that case.
        (Time::MAX, 0)
    }

    /// [`Running::shadow`] for a job holding `needed` when `free` is free now: release running
    /// jobs in order of (start + prediction, id) until every resource fits; the release time of
    /// the last one is the shadow time, and what is free then beyond `needed` the extra.
    fn shadow_resources(&self, free: Resources, needed: Resources) -> (Time, Resources) {
        let mut available = free;
        for (&(end, _), release) in &self.by_expected_end {
            available.processors += release.holds.processors;
            available.extra = available.extra.plus(&release.holds.extra);
            if needed.fits_in(&available) {
                return (end, available.minus(&needed));
            }
        }
        // Unreachable, as for `shadow`: submit() rejects jobs larger than the machine.
        (Time::MAX, Resources::default())
    }

    /// (expected end, processors) of every running job, earliest first.
    fn expected_releases(&self) -> impl Iterator<Item = (Time, u32)> + '_ {
        self.by_expected_end
            .iter()
            .map(|(&(end, _), release)| (end, release.holds.processors))
    }
}

#[cfg(test)]
pub(crate) mod tests;

/// `nodes` sorted, each once.
fn sorted(nodes: &[u32]) -> Vec<u32> {
    let mut nodes = nodes.to_vec();
    nodes.sort_unstable();
    nodes.dedup();
    nodes
}
