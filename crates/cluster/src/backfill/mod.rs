//! Backfilling rules: how waiting jobs may start, and jump ahead of the queue order.
//!
//! A rule is a [`Backfill`]: at every scheduling pass the cluster lends it a [`Pass`] (the
//! queue, already sorted or sortable in the scheduler's order, the running jobs and the
//! machine) and the rule starts jobs through it. A rule owns whatever state it keeps between
//! passes (EASY's last reservation, conservative backfilling's profile and reservations, dynP's
//! current policy and usage), so the cluster holds only what every rule shares. A new rule is
//! one module here plus one entry in [`RULES`].
//!
//! | rule | module | state kept across passes |
//! |---|---|---|
//! | none (FCFS) | [`NoBackfill`] | none |
//! | EASY (and Tsafrir's variants) | [`Easy`] | the last pass's reservation |
//! | conservative | [`Conservative`] | the free-processor profile, every waiting job's reservation |
//! | dynP | [`DynPRule`] | the profile, the current order, the policy usage |

mod conservative;
mod dynp;
mod easy;
mod node_scan;
mod none;

pub use conservative::Conservative;
pub use dynp::DynPRule;
pub use easy::{BackfillOrder, Easy};
pub use none::NoBackfill;

use std::fmt::Debug;
use std::sync::Arc;

use crate::annotate::{Annotation, Columns};
pub use crate::cluster::Pass;
use crate::dynp::{Decider, DynP, DynpBounds, DynpQuality, PolicyUsage};
use crate::params::Params;
use crate::policy::{Part, RulePart};
use crate::{JobId, JobRequest, Reservation, Time};

/// No backfilling: jobs start from the head of the queue while they fit (FCFS's rule).
pub static NONE: RulePart = Part {
    name: "none",
    help: "no backfilling: start jobs from the head of the queue while they fit",
    params: Params::NONE,
    build: |_| Box::new(NoBackfill),
};

/// EASY backfilling, candidates in queue order.
pub static EASY: RulePart = Part {
    name: "easy",
    help: "EASY: one reservation for the first job that does not fit; later jobs backfill in queue order",
    params: Params::NONE,
    build: |_| Box::new(Easy::new(BackfillOrder::Queue)),
};

/// EASY backfilling, shortest predicted candidates first (Tsafrir's SJBF).
pub static EASY_SJBF: RulePart = Part {
    name: "easy-sjbf",
    help: "EASY, backfilling the shortest (predicted) candidates first (Tsafrir's SJBF)",
    params: Params::NONE,
    build: |_| Box::new(Easy::new(BackfillOrder::ShortestFirst)),
};

/// Conservative backfilling: every waiting job holds a reservation.
pub static CONSERVATIVE: RulePart = Part {
    name: "conservative",
    help: "conservative: every waiting job holds a reservation; a job backfills only if it delays none",
    params: Params::NONE,
    build: |_| Box::new(Conservative::new()),
};

/// Basic dynP (paper 002, section 3.2).
pub static DYNP: RulePart = Part {
    name: "dynp",
    help: "basic dynP: conservative plans in FCFS, SJF or LJF order by the queue's mean estimate",
    params: Params::of::<DynpBounds>(),
    build: |p| {
        let bounds = p.get::<DynpBounds>();
        Box::new(DynPRule::new(DynP::Basic {
            lower: bounds.dynp_lower,
            upper: bounds.dynp_upper,
        }))
    },
};

/// Self-tuning dynP, simple decider (paper 002, section 3.3).
pub static DYNP_SIMPLE: RulePart = Part {
    name: "dynp-simple",
    help: "self-tuning dynP, simple decider: the best of three full conservative plans by quality",
    params: Params::of::<DynpQuality>(),
    build: |p| {
        Box::new(DynPRule::new(DynP::SelfTuning {
            quality: p.get::<DynpQuality>().quality,
            decider: Decider::Simple,
        }))
    },
};

/// Self-tuning dynP, advanced decider (paper 002, section 3.3).
pub static DYNP_ADVANCED: RulePart = Part {
    name: "dynp-advanced",
    help: "self-tuning dynP, advanced decider (keeps the current order on ties)",
    params: Params::of::<DynpQuality>(),
    build: |p| {
        Box::new(DynPRule::new(DynP::SelfTuning {
            quality: p.get::<DynpQuality>().quality,
            decider: Decider::Advanced,
        }))
    },
};

/// Every backfilling rule `--backfill` and `[scheduler] backfill` can name. A new rule: its
/// module in this directory and one entry here.
pub static RULES: &[&RulePart] = &[
    &NONE,
    &EASY,
    &EASY_SJBF,
    &CONSERVATIVE,
    &DYNP,
    &DYNP_SIMPLE,
    &DYNP_ADVANCED,
];

/// A backfilling rule: decides, at each scheduling pass, which waiting jobs start.
///
/// The cluster calls [`Backfill::submitted`] and [`Backfill::finished`] as jobs arrive and
/// end, and [`Backfill::schedule`] once per pass. Rules are pure: no I/O, no randomness, no
/// clock (time is [`Pass::now`]).
pub trait Backfill: Debug + Send {
    /// A short name for logs and tests: `none`, `easy`, `conservative`, `dynp`.
    fn name(&self) -> &'static str;

    /// One scheduling pass: start the jobs that start now with [`Pass::start`] (the cluster
    /// returns them from [`crate::Cluster::schedule`]). Called at every pass, even when nothing
    /// can start ([`Pass::nothing_can_start`]), so the rule can forget a stale reservation or
    /// still plan.
    fn schedule(&mut self, pass: &mut Pass<'_>);

    /// The machine the rule schedules has `processors` processors (called once, before any
    /// job arrives).
    fn machine(&mut self, _processors: u32) {}

    /// Called once when the scheduler is built ([`crate::Scheduler::new`],
    /// [`crate::SchedulerSpec::build`]) if its queue order is arrival order (submit, then id;
    /// [`crate::QueueOrder::is_arrival_order`]), so the queue's order is fixed as jobs arrive: a
    /// rule may then keep its own index of the waiting jobs in that order (conservative
    /// backfilling's fast path). A rule never told plans as if any order were possible.
    fn queue_in_arrival_order(&mut self) {}

    /// Asked for each submitted job before it enters the waiting queue: whether the rule holds
    /// it for good, as a job it can never start (the Slurm model: a job wider than its
    /// partition or its QOS's `GrpTRES=cpu`, or over its partition's `MaxTime`, which Slurm
    /// leaves pending for ever). A job held for good never enters the queue, is never started
    /// and [`Backfill::submitted`] is not called for it; the rule keeps and reports it
    /// ([`crate::Cluster::is_held`]). Default: no job is held.
    fn hold_for_good(&mut self, _job: &JobRequest) -> bool {
        false
    }

    /// A job entered the waiting queue (it is already in it).
    fn submitted(&mut self, _job: &JobRequest) {}

    /// A running job ended at `now` (seconds), possibly before its estimate; its processors are
    /// already free.
    fn finished(&mut self, _job: &Ended, _now: Time) {}

    /// Whether the rule tests machine-wide resources at every start though it does not plan
    /// them ([`crate::Cluster::with_guard`]: a power cap's watts): its starts never exceed
    /// them, but its reservations may not hold them. Default: the rules that schedule them
    /// ([`Backfill::schedules_extra`]).
    fn tests_extra_at_starts(&self) -> bool {
        self.schedules_extra()
    }

    /// The machine's capacities changed at `now` ([`crate::Cluster::set_available_extra`], a
    /// power cap that follows a schedule): a rule that passes over instants where nothing
    /// changed for it (the Slurm model) must look again. Default: nothing (the rule plans at
    /// every pass).
    fn capacity_changed(&mut self, _now: Time) {}

    /// Processors went out of service or came back at `now` ([`crate::Cluster::set_drained`]):
    /// `requested` when the drain changed (an administrator's `scontrol update`, which asks
    /// Slurm's scheduler to run soon), not when only a maintenance window began or ended (which
    /// Slurm's periodic loops find). Default: as [`Backfill::capacity_changed`].
    fn outages_changed(&mut self, now: Time, _requested: bool) {
        self.capacity_changed(now);
    }

    /// Whether the rule can follow a running job whose start was delayed while its nodes
    /// booted ([`crate::Cluster::delay_start`]): a rule that keeps no plan of running jobs
    /// between passes needs nothing (default: the rules that schedule other resources, none
    /// and the EASY family); a rule that does must override this and
    /// [`Backfill::start_delayed`].
    fn follows_start_delays(&self) -> bool {
        self.schedules_extra()
    }

    /// The running job `id` runs `by` seconds later than it was started
    /// ([`crate::Cluster::delay_start`]). Default: nothing.
    fn start_delayed(&mut self, _id: JobId, _by: Time) {}

    /// Whether the rule may plan with runtime predictions ([`crate::Predictor`]). Only EASY
    /// does: the reservations of the other rules hold only because user estimates are upper
    /// bounds, so the cluster gives them user estimates whatever the scheduler asks.
    fn uses_predictions(&self) -> bool {
        false
    }

    /// Whether the rule orders the queue itself (dynP's decider switches between FCFS, SJF and
    /// LJF), so a scheduler's queue order other than arrival would be ignored: such
    /// compositions are refused ([`crate::SchedulerSpec::compose`]).
    fn orders_queue_itself(&self) -> bool {
        false
    }

    /// Whether the rule walks the queue with [`Pass::next_waiting`] and [`Pass::next_candidate`]
    /// (or otherwise skips positions where [`Pass::is_waiting`] is false), so the cluster may
    /// leave started jobs as tombstones across passes and compact the queue only when they
    /// outnumber the waiting jobs. Rules that iterate `0..positions()` keep the default (false)
    /// and see a queue without tombstones at every pass.
    fn skips_started_positions(&self) -> bool {
        false
    }

    /// Whether the rule meets the queue only through [`Pass::sort_queue`] (first),
    /// [`Pass::start_head`] and [`Pass::next_in_order`] (and reads the jobs those return),
    /// never walking positions in queue order itself. The cluster may then keep a CREASY queue
    /// in arrival order and search its priority order instead of sorting it at every pass
    /// (search mode; the same decisions at a cost that does not grow with the queue). Default
    /// false: the queue is sorted for every pass.
    fn searches_in_order(&self) -> bool {
        false
    }

    /// Whether the rule counts every resource a machine has besides processors
    /// ([`crate::Cluster::with_extra`]: a job then fits only if each fits): the queue's head
    /// ([`Pass::start_head`], [`Pass::fits`]) and EASY's shadow and extra
    /// ([`Pass::shadow_resources`]) do. Default false: the rule plans with processor counts
    /// (a profile of free processors), and a machine with other resources is refused.
    fn schedules_extra(&self) -> bool {
        false
    }

    /// Whether the rule runs a machine of node types ([`crate::Cluster::with_pool`]): every
    /// rule that schedules other resources does ([`Backfill::schedules_extra`]), and a rule
    /// that plans on nodes itself (the Slurm model, with [`Pass::node_plan`]) though it does
    /// not take machine-wide resources. Default: [`Backfill::schedules_extra`].
    fn schedules_nodes(&self) -> bool {
        self.schedules_extra()
    }

    /// The machine is one of node types, `spec` (called once, after [`Backfill::machine`] and
    /// before any job arrives, when [`Backfill::schedules_nodes`]): a rule may keep its
    /// partitions' nodes and its resource kinds. Default: nothing.
    fn node_machine(&mut self, _spec: &crate::PoolSpec) {}

    /// Whether the rule plans with processor counts only, so it cannot run on a machine of
    /// nodes with First Continuous selection (which needs consecutive processors).
    fn counts_processors(&self) -> bool {
        false
    }

    /// The next instant the rule wants a scheduling pass although no job arrives or ends
    /// (Slurm's periodic loops), seconds; `None` (the default): passes at events only. The
    /// engine wakes the cluster then; the rule must return an instant after the last pass.
    fn next_wakeup(&self) -> Option<Time> {
        None
    }

    /// How long a job may run past its estimate before it is killed, seconds (Slurm's
    /// `OverTimeLimit`); 0 (the default): killed at its estimate.
    fn overrun_allowed(&self) -> Time {
        0
    }

    /// The reservation the last pass made, if the rule makes one (EASY).
    fn reservation(&self) -> Option<Reservation> {
        None
    }

    /// The start reserved for a waiting job by the last pass, if the rule reserves one for
    /// every job (conservative backfilling), seconds.
    fn planned_start(&self, _id: JobId) -> Option<Time> {
        None
    }

    /// How a rule that switches policies (dynP) used them so far.
    fn policy_usage(&self) -> Option<&PolicyUsage> {
        None
    }

    /// What the rule knows of job `id`, which it started at the last pass, beyond what the
    /// job's record holds (the Slurm model: its priority and factors at its start, its account,
    /// partition and QOS, its wait by pending reason). The engine asks for each job as it
    /// starts and keeps the answer with the job's record; outputs write it with
    /// [`Backfill::columns`]. `None` (the default): nothing to add.
    fn annotation(&self, _id: JobId) -> Option<Annotation> {
        None
    }

    /// How the rule's annotations are written: their columns' names and texts (`None`, the
    /// default, for a rule that annotates nothing).
    fn columns(&self) -> Option<Arc<dyn Columns>> {
        None
    }

    /// A front end will write the rule's periodic samples (the Slurm model's association
    /// tree at each priority calculation: shares.csv): keep them. Called before the first
    /// job; the default keeps none.
    fn keep_samples(&mut self) {}

    /// The rule as [`std::any::Any`]: the seam for a report that knows the rule's type and
    /// reads its own state after a run (the Slurm model's summary section:
    /// [`crate::Cluster::rule_as`], [`crate::SchedulerSpec::build_rule`]); `None` (the default)
    /// for rules with nothing more to read.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }
}

/// A job that ended, as [`Backfill::finished`] sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ended {
    /// The job.
    pub id: JobId,
    /// When it started, seconds.
    pub start: Time,
    /// The processors it held.
    pub processors: u32,
    /// Its user estimate, seconds (it was planned to hold its processors until start +
    /// estimate).
    pub estimate: Time,
}

impl Ended {
    /// Gives the job's processors back to `profile` from `now` (its end) rather than at start +
    /// estimate, where its reservation was planned to end: what a profile-keeping rule does when
    /// a job ends.
    pub(crate) fn release_early(&self, profile: &mut crate::profile::Profile, now: Time) {
        profile.release(now, self.planned_end(), self.processors);
    }

    /// Where the job's reservation was planned to end: start + estimate (at least one second,
    /// as [`held`]), seconds.
    pub(crate) fn planned_end(&self) -> Time {
        self.start.saturating_add(self.estimate.max(1))
    }
}

/// How long a job holds its processors in a profile: its estimate, and at least one second so
/// that jobs estimated at zero seconds still need their processors at the instant they start.
pub(crate) fn held(job: &JobRequest) -> Time {
    job.estimate.max(1)
}
