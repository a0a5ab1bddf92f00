//! The machine and its schedulers.
//!
//! This crate is pure: no I/O, no randomness, no clock. The caller (the `engine` crate) owns time
//! and tells the [`Cluster`] what happens: a job was submitted ([`Cluster::submit`]), a job
//! ended ([`Cluster::finish`]), and now it is time to schedule ([`Cluster::schedule`]), which
//! returns the jobs started at that instant.
//!
//! A [`Scheduler`] is a queue order ([`QueueOrder`], registered in [`order::ORDERS`]), a
//! backfilling rule ([`Backfill`], one module per rule in [`backfill`], each owning its state,
//! registered in [`backfill::RULES`]) and a runtime predictor ([`Predictor`], registered in
//! [`predict::PREDICTORS`]), so a new policy is usually a priority function, not a new
//! scheduler. A [`SchedulerSpec`] is a validated composition of the three; the papers'
//! schedulers are named presets of compositions ([`policy::POLICIES`]):
//!
//! | preset | order | backfilling | predictor |
//! |---|---|---|---|
//! | fcfs | fcfs | none | estimate |
//! | easy | fcfs | easy (one reservation) | estimate |
//! | creasy | creasy (`alpha * criticality + seniority`) | easy | estimate |
//! | conservative, -sjf, -ljf | fcfs, sjf, ljf | conservative (a reservation each) | estimate |
//! | easy-sjbf, easy-sjf | fcfs, sjf | easy-sjbf (shortest first), easy | estimate |
//! | easy-plus, easy-plus-plus | fcfs | easy, easy-sjbf | user-last-two |
//! | dynp, dynp-simple, dynp-advanced | (its own: FCFS, SJF or LJF by a decider) | dynp, dynp-simple, dynp-advanced | estimate |
//!
//! These are this crate's parts ([`policy::CORE`]). Rules may live in crates of their own over
//! this one (Slurm's model, `slurm-model`, whose presets are `slurm` and `slurm-site`): a
//! [`policy::Registry`] lists the sets of parts, and the workspace's (`schedulers::REGISTRY`)
//! is where front ends name schedulers. Such a rule reaches the outputs through generic hooks:
//! per-job annotations ([`Backfill::annotation`], [`annotate::Columns`]), samples kept on
//! request ([`Backfill::keep_samples`]) and, for a report that knows its type,
//! [`Cluster::rule_as`]; this crate never names it.
//!
//! Jobs are killed at their user estimate: a started job's [`Started::kill_time`] is its start
//! plus its estimate, and the scheduler plans with estimates only (it never sees true runtimes).

pub mod annotate;
pub mod backfill;
mod block_profile;
mod cluster;
pub mod dynp;
mod job_times;
mod node_plan;
mod nodes;
pub mod order;
pub mod params;
pub mod policy;
pub mod pool;
pub mod predict;
pub mod profile;
mod scheduler;
pub mod start_bounds;
pub mod view;

pub use annotate::{Annotation, Cell, Columns};
pub use backfill::{Backfill, BackfillOrder, Pass};
pub use cluster::{
    CandidateScan, Cluster, ClusterError, Finished, NodeMask, NodeWindow, Reservation,
    ReservationUse, Started, StateVersion, Window,
};
pub use dynp::{
    Decider, DynP, DynpBounds, DynpQuality, FcfsOrder, Generation, PolicyUsage, Quality,
};
pub use node_plan::NodePlan;
pub use nodes::{Nodes, Selection};
pub use order::{Arrival, Creasy, CreasyParams, LongestFirst, ORDERS, QueueOrder, ShortestFirst};
pub use params::{AnyParams, BadValue, ParamValue, ParamValues, Params, PartParams};
pub use policy::{
    CORE, CORE_REGISTRY, Composition, POLICIES, Part, PartKind, Parts, Policy, PolicyError,
    Registry, SchedulerSpec,
};
pub use pool::{Amounts, NeverFits, NodePool, NodeType, PoolPartition, PoolSpec};
pub use predict::Predictor;
pub use scheduler::{ListOrder, Scheduler};
pub use start_bounds::StartBounds;
pub use view::{Holding, View};

pub use job::{ArrayTask, Extra, ReservationId, ResourceKinds, Resources, Shape};
pub use simtime::Time;

/// Identifies a job inside one simulation. The engine assigns ids in submission order, so ties
/// between equal priorities (and equal expected ends) are broken by arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u32);

/// What the scheduler knows about a job: never its true runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobRequest {
    /// The job's id.
    pub id: JobId,
    /// Submit time in seconds.
    pub submit: Time,
    /// Processors it needs (rigid: all at once for its whole run).
    pub processors: u32,
    /// The amounts of the machine's other resources it needs for its whole run (none on a
    /// machine of processors only).
    pub extra: Extra,
    /// The user's runtime estimate in seconds; the job is killed when it is reached.
    pub estimate: Time,
    /// The owner (any number; -1 when unknown). Runtime predictors and the Slurm model look at
    /// it: a real resource manager knows who submitted a job.
    pub user: i64,
    /// The owner's group (any number; -1 when unknown): the Slurm model's account.
    pub group: i64,
    /// The job's partition number (a trace's SWF field 16; -1 when unknown): the Slurm
    /// model's partitions may select jobs by it.
    pub partition: i64,
    /// The job's queue number (a trace's SWF field 15; -1 when unknown): the Slurm model's
    /// QOS may select jobs by it.
    pub queue: i64,
    /// How its resources must lie on a machine of node types ([`Shape::ANY`] elsewhere).
    pub shape: Shape,
    /// The throttled job array it is a task of (none: [`job::ArrayTask::NONE`]): the Slurm
    /// model runs at most the array_task's limit of the array's tasks at once.
    pub array_task: ArrayTask,
    /// The reservation it was submitted to ([`ReservationId::NONE`]: none): it runs only on
    /// that reservation's processors, while it lasts ([`crate::Window::reservation`]).
    pub reservation: ReservationId,
}

impl JobRequest {
    /// What the scheduler is told of `job`, which the simulation numbers `id`: every field of
    /// the job but its true runtime. The one place a request is made from a job.
    pub fn of(id: JobId, job: &job::Job) -> JobRequest {
        JobRequest {
            id,
            submit: job.submit,
            processors: job.processors,
            extra: job.extra,
            estimate: job.estimate,
            user: job.user,
            group: job.group,
            partition: job.partition,
            queue: job.queue,
            shape: job.shape,
            array_task: job.array_task,
            reservation: job.reservation,
        }
    }

    /// What the job holds while it runs.
    pub fn resources(&self) -> Resources {
        Resources {
            processors: self.processors,
            extra: self.extra,
        }
    }
}
