//! Slurm's scheduling model: multifactor priority ([`priority`]), fair-share over an
//! association tree with decaying usage ([`fairshare`]: Fair Tree and classic), the main
//! scheduling loop and Slurm's backfill, as one backfilling rule ([`SlurmRule`]) that orders
//! the queue itself.
//!
//! Ported from Slurm 26.05.3 (tag `slurm-26-05-3-1`); each piece cites the function it follows.
//! What is modelled, and how the model differs from Slurm:
//!
//! - **Time.** Priorities, usage and fair-share change only at `PriorityCalcPeriod` ticks on a
//!   fixed grid from the first submission (`_decay_thread`): decay by `d^Δt`, then every running
//!   job charged `Δt · d^Δt · CPUs` to its association and its ancestors, then fair-share, then
//!   the priority of every pending job. A job's tail (since the last calculation) is charged
//!   when it ends only with `AccountingStorageEnforce=limits` (`priority_p_job_end` through
//!   `acct_policy.c`; checked against a real Slurm 22.05). A pending job's age counts from its
//!   eligible time, its submission (`acct_policy_handle_accrue_time` without `limits`
//!   enforcement: AccrueTime = EligibleTime), and is 0 in the priority computed at submit. While
//!   nothing waits or runs the ticks are skipped and the decay of the gap is applied at once
//!   (the same product).
//! - **Main loop** (`job_scheduler.c:_schedule`): a submission is never started at once; an
//!   event run follows `max(1 s, batch_sched_delay after the previous run)` later, examining at
//!   most `default_queue_depth + 1` jobs; a job end triggers an event run at once; every
//!   `sched_interval` a run over the whole queue, on a fixed period (skipped when nothing
//!   changed since the last run, as it would start nothing). Jobs go in Slurm's order
//!   (partition tier, then priority descending, then submit, then id) and the loop stops a
//!   partition at its first job that does not fit. It ignores backfill's reservations, as
//!   Slurm's does.
//! - **Backfill** (`backfill.c:_attempt_backfill`): every `bf_interval` after the previous
//!   cycle, when something changed since (else one second after the next change, never in
//!   the change's own instant). Jobs in
//!   priority order, at most `bf_max_job_test` tested, `bf_max_job_user` per user and
//!   `bf_max_job_part` per partition; each
//!   starts now if its whole time limit fits beside the running jobs (held until start + time
//!   limit) and the reservations made so far in the cycle, or else reserves its earliest start
//!   within `bf_window`, on the `bf_resolution` grid (start rounded down, end up), unless its
//!   priority is below `bf_min_prio_reserve`. Reservations are made anew every cycle.
//! - **Shortcuts** that start the same jobs with less work (a property test runs random
//!   workloads with and without them): a cycle stops once no remaining job could start now in
//!   its plan so far (their reservations would start nothing); a cycle that sees the previous
//!   one's state (only jobs appended since) goes on from its plan when every planned job keeps
//!   its plan; with age and fair-share weights 0 the calculations change no priority, so they
//!   get no pass of their own and are made up before the next change, and the usage is kept
//!   only on request ([`SlurmRule::keep_usage`]).
//! - **Partitions and QOS**: a partition is a counted set of processors (its running jobs hold
//!   at most them), with `MaxTime` routing, `PriorityTier` (the queue's first key) and
//!   `PriorityJobFactor`; a job goes to one partition ([`SlurmConfig::partitions`]). The main
//!   loop stops a partition at its first job that does not fit and goes on with the others;
//!   backfill plans a job in the machine and its partition. A QOS gives the QOS factor and the
//!   usage factor, and its limits (`MaxJobsPerUser`, `MaxSubmitJobsPerUser`, `GrpTRES=cpu`)
//!   hold jobs, which the loops pass over (`acct_policy_job_runnable_pre_select`).
//! - **Jobs that can never start** ([`NeverStarts`]): a job wider than its partition or over
//!   its `MaxTime` (no partition that selects it takes it), or wider than its QOS's
//!   `GrpTRES=cpu`, is held for good, as Slurm holds it under its default
//!   `EnforcePartLimits=NO` (pending with reason `PartitionConfig`, `PartitionTimeLimit` or
//!   `QOSGrpCpuLimit` until an administrator changes the limits): it never enters the queue,
//!   never starts and is counted by reason, partition and QOS ([`SlurmRule::never_started`]).
//! - **Machines of node types** ([`cluster::pool`]; a slurm.conf whose nodes schedule GPUs or
//!   memory): the model schedules on the nodes. A job goes to the partition of its own name
//!   and fits where its nodes hold its CPUs, memory and GPUs; the main loop takes a blocked
//!   partition's nodes away from every later job, of any partition (`_schedule`'s
//!   `fail_by_part`), so partitions over the same nodes block each other; backfill plans on
//!   the nodes as `_attempt_backfill`'s node-space map does ([`cluster::NodePlan`]: running
//!   jobs give their shares back at start + time limit, a reservation takes its nodes whole
//!   for its window). The QOS limits on TRES (`GrpTRES`, `MaxTRESPerUser`, `MaxTRESPerJob`
//!   on `cpu`, `mem`, `gres/gpu`) hold jobs with Slurm's pending reasons
//!   ([`SlurmRule::held_by_limit`]); a job over one alone is held for good.
//! - **Not modelled**: on a machine of CPUs only, processors are counted, not placed on node
//!   bitmaps (a reservation holds processors, not whole nodes; overlapping partitions are
//!   counted apart); on a machine of node types, the shortcuts (every backfill cycle is made
//!   anew); the select
//!   plugin's will-run batches of 30 s; multi-partition submissions, `DefaultTime`, account
//!   and association limits and the other QOS limits; the job-limit check's 30 s tick (a job
//!   is killed exactly at its time limit plus `OverTimeLimit`); `bf_continue`, lock yields,
//!   `bf_max_time` (a cycle takes no simulated time); dependencies, reservations, preemption
//!   and usage resets.
//! - **TRES** ([`billing`](mod@billing)): with `TRESBillingWeights` a running job's usage is
//!   charged at its billing per second instead of its CPUs; `PriorityWeightTRES` adds the TRES
//!   factor (each TRES over its partition's total, times its weight) to the priority, fixed at
//!   submission.

pub mod billing;
pub mod config;
pub mod fairshare;
pub mod priority;
pub mod section;

use rustc_hash::FxHashMap as HashMap;

pub use billing::{
    BillingMode, BillingWeights, PriorityWeightsTres, Tres, TresNormalisation, TresType,
    TresWeights, TresWeightsError, billing, stored_billing, tres_priority,
};
pub use config::{
    Account, FairShareAlgorithm, Member, Partition, Qos, Selector, SlurmConfig, TresLimit, Weights,
};
pub use fairshare::{AssocTree, ShareRow, Shares};
pub use priority::Factors;

use cluster::backfill::{Backfill, Ended, Pass};
use cluster::profile::{Profile, least_free_for};
use cluster::{Annotation, Cell, Columns, JobId, JobRequest, Time};
use std::sync::Arc;

mod parts;

pub use parts::{PARTS, POLICIES, SLURM, SLURM_SITE};
pub use section::{SlurmParams, SlurmSection};

/// `KillWait`: Slurm's grace between SIGTERM and SIGKILL, seconds; backfill adds it to the
/// expected end of a job already past its limit (`_guess_job_end`).
const KILL_WAIT: Time = 30;

/// What a job holds of the resources QOS limits count: CPUs, memory (MiB), GPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    cpus: u64,
    memory: u64,
    gpus: u64,
}

impl Tally {
    fn plus(self, other: Tally) -> Tally {
        Tally {
            cpus: self.cpus + other.cpus,
            memory: self.memory + other.memory,
            gpus: self.gpus + other.gpus,
        }
    }

    fn minus(self, other: Tally) -> Tally {
        Tally {
            cpus: self.cpus.saturating_sub(other.cpus),
            memory: self.memory.saturating_sub(other.memory),
            gpus: self.gpus.saturating_sub(other.gpus),
        }
    }

    /// The first amount over `limit` (0 CPUs, 1 memory, 2 GPUs).
    fn over(self, limit: &TresLimit) -> Option<usize> {
        limit.exceeded(self.cpus, self.memory, self.gpus)
    }
}

/// A pending job as the model keeps it.
#[derive(Debug, Clone, Copy)]
struct Pending {
    assoc: usize,
    /// What it asks for, as QOS limits count it.
    tres: Tally,
    /// Its weighted TRES factor (`PriorityWeightTRES`), fixed at submission, and its usage
    /// per second while it runs: its billing (`TRESBillingWeights`), or its CPUs.
    tres_factor: f64,
    rate: f64,
    /// When it was submitted.
    submit: Time,
    processors: u32,
    limit: Time,
    /// When its age starts (its eligible time, the submission; `None` while its priority at
    /// submit is computed).
    accrue: Option<Time>,
    priority: u32,
    factors: Factors,
    /// Seconds it spent so far as the job the main loop stopped at (pending reason
    /// `Resources`), up to the last change of that job.
    resources: Time,
    /// Its partition and QOS (indices in [`SlurmRule::partitions`] and [`SlurmRule::qos`]).
    partition: u16,
    qos: u16,
    /// Its owner.
    user: i64,
    /// Seconds it was held by a QOS limit, up to `held_since`, and since when it is held
    /// now (as last seen by a scheduling loop).
    limit_held: Time,
    held_since: Option<Time>,
    /// Whether it waits for its user to have fewer jobs in its QOS than
    /// `MaxSubmitJobsPerUser` (it is then not examined at all).
    submit_held: bool,
    /// The throttled job array it is a task of.
    array_task: cluster::ArrayTask,
}

/// A running job: what its usage is charged to, and what the model knew of it at its start.
#[derive(Debug, Clone, Copy)]
struct Running {
    assoc: usize,
    /// What it holds, as QOS limits count it.
    tres: Tally,
    /// Its usage per second: its billing, or its CPUs.
    rate: f64,
    start: Time,
    processors: u32,
    limit: Time,
    at_start: AtStart,
    /// Its partition and QOS, as [`Pending`]'s.
    partition: u16,
    qos: u16,
    user: i64,
    array_task: cluster::ArrayTask,
}

/// What the model knew of a job as it started: its priority and factors (what `sprio` showed
/// last), its account and how its wait divides among Slurm's pending reasons.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AtStart {
    /// Its priority as of the last calculation before it started.
    pub priority: u32,
    /// The factors of that priority, each in [0, 1].
    pub factors: Factors,
    /// The group whose derived account it ran under (`None`: root, with `accounts = "none"`,
    /// or one of the site's own accounts); [`account_name`] names it.
    pub account_group: Option<i64>,
    /// When it ran under one of the site's own accounts: its index in
    /// [`SlurmConfig::accounts`].
    pub account_named: Option<u16>,
    /// Seconds it waited as the job the main loop stopped at, the one Slurm gives the pending
    /// reason `Resources` (the rest of its wait it was behind that job, reason `Priority`, or
    /// held by a limit).
    pub waited_for_resources: Time,
    /// Seconds it was held by a QOS limit (reasons `QOSMaxJobsPerUserLimit`,
    /// `QOSMaxSubmitJobPerUserLimit`, `QOSGrpCpuLimit`), as the scheduling loops saw it.
    pub waited_for_limits: Time,
    /// Its partition and QOS, by index in the configuration's lists
    /// ([`SlurmConfig::partition_names`], [`SlurmConfig::qos_names`]).
    pub partition: u16,
    /// See [`AtStart::partition`].
    pub qos: u16,
    /// Seconds it waited in all (start - submit).
    pub waited: Time,
    /// Which of Slurm's scheduling loops started it (sacct's `Flags`: `SchedMain`,
    /// `SchedBackfill`).
    pub started_by: StartedBy,
}

/// Which of Slurm's scheduling loops started a job, as sacct's `Flags` column records it
/// (`SchedMain` or `SchedBackfill`; slurm/src/common/slurm_protocol_defs.c,
/// `slurmdb_job_flags_str`). The model has no scheduling at submission (`SchedSubmit`): its
/// main loop runs at every event, which covers Slurm's quick pass at submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StartedBy {
    /// The main loop (`schedule()` in job_scheduler.c): jobs in priority order.
    #[default]
    Main,
    /// The backfill scheduler (backfill.c): a job tested against the plan.
    Backfill,
}

impl StartedBy {
    /// jobs.csv's word for it: `main` or `backfill`.
    pub fn as_str(self) -> &'static str {
        match self {
            StartedBy::Main => "main",
            StartedBy::Backfill => "backfill",
        }
    }
}

impl AtStart {
    /// Seconds of its wait it was behind other jobs (Slurm's pending reason `Priority`): the
    /// rest of its wait, neither `Resources` nor held by a limit.
    pub fn waited_for_priority(&self) -> Time {
        self.waited - self.waited_for_resources - self.waited_for_limits
    }

    /// The job's annotation ([`Backfill::annotation`]), as [`SlurmColumns`] reads it: the
    /// priority with the partition's and QOS's indices in one word, the account (the site's
    /// own account's index, whether it is one, whether the derived account of a group, and
    /// whether the backfill scheduler started it), the group, the five factors and the three
    /// waits.
    pub fn annotation(&self) -> Annotation {
        let int = Annotation::int_word;
        let float = Annotation::float_word;
        let f = self.factors;
        let account = match (self.account_named, self.account_group) {
            (Some(named), _) => u64::from(named) | NAMED,
            (None, Some(_)) => GROUP,
            (None, None) => 0,
        } | match self.started_by {
            StartedBy::Main => 0,
            StartedBy::Backfill => BACKFILL,
        };
        Annotation::from_array([
            u64::from(self.priority) | u64::from(self.partition) << 32 | u64::from(self.qos) << 48,
            account,
            int(self.account_group.unwrap_or(0)),
            float(f.age),
            float(f.fairshare),
            float(f.job_size),
            float(f.partition),
            float(f.qos),
            int(self.waited_for_resources),
            int(self.waited_for_limits),
            int(self.waited_for_priority()),
        ])
    }
}

/// [`AtStart::annotation`]'s account word: the site's own account's index is in the low 16
/// bits when this bit is set.
const NAMED: u64 = 1 << 16;
/// [`AtStart::annotation`]'s account word: the job ran under its group's derived account.
const GROUP: u64 = 1 << 17;
/// [`AtStart::annotation`]'s account word: the backfill scheduler started the job.
const BACKFILL: u64 = 1 << 18;

/// The columns jobs.csv adds after its own under the Slurm model ([`SlurmColumns`]): the job's
/// account, partition and QOS, its priority and factors at its start (what `sprio` showed
/// last), and how many seconds of its wait it spent under Slurm's pending reasons: `Resources`
/// (the job the main loop stopped at), a QOS limit, and `Priority` (the rest: behind other
/// jobs); and which loop started it (`main` or `backfill`, sacct's `SchedMain` and
/// `SchedBackfill`).
pub const COLUMNS: [&str; 13] = [
    "account",
    "partition",
    "qos",
    "priority",
    "age_factor",
    "fairshare_factor",
    "job_size_factor",
    "partition_factor",
    "qos_factor",
    "pending_resources",
    "pending_limits",
    "pending_priority",
    "started_by",
];

/// How the model's annotations ([`AtStart::annotation`]) are written: [`COLUMNS`], with the
/// account, partition and QOS named from the configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct SlurmColumns {
    partitions: Vec<String>,
    qos: Vec<String>,
    accounts: Vec<String>,
}

impl SlurmColumns {
    /// The columns of a model configured by `config`.
    pub fn new(config: &SlurmConfig) -> SlurmColumns {
        SlurmColumns {
            partitions: config.partition_names(),
            qos: config.qos_names(),
            accounts: config.accounts.iter().map(|a| a.name.clone()).collect(),
        }
    }
}

impl Columns for SlurmColumns {
    fn names(&self) -> &[&'static str] {
        &COLUMNS
    }

    fn cell(&self, annotation: &Annotation, column: usize) -> Cell<'_> {
        fn named(names: &[String], index: u64) -> Cell<'_> {
            usize::try_from(index)
                .ok()
                .and_then(|i| names.get(i))
                .map_or(Cell::Empty, |name| Cell::Text(name.as_str().into()))
        }
        let head = annotation.word(0);
        match column {
            0 => {
                let account = annotation.word(1);
                let own = if account & NAMED != 0 {
                    named(&self.accounts, account & 0xffff)
                } else {
                    Cell::Empty
                };
                match own {
                    Cell::Empty => {
                        let group = (account & GROUP != 0).then(|| annotation.int(2));
                        Cell::Text(account_name(group).into())
                    }
                    name => name,
                }
            }
            1 => named(&self.partitions, head >> 32 & 0xffff),
            2 => named(&self.qos, head >> 48),
            3 => Cell::Int(i64::from(head as u32)),
            4..=8 => Cell::Float(annotation.float(column - 1)),
            9..=11 => Cell::Int(annotation.int(column - 1)),
            12 => Cell::Text(
                if annotation.word(1) & BACKFILL != 0 {
                    StartedBy::Backfill
                } else {
                    StartedBy::Main
                }
                .as_str()
                .into(),
            ),
            _ => Cell::Empty,
        }
    }
}

/// The name of the derived tree's account of `group` (`None`: root), as shares.csv and
/// jobs.csv show it.
pub fn account_name(group: Option<i64>) -> String {
    match group {
        Some(group) => format!("group{group}"),
        None => "root".to_string(),
    }
}

/// The association tree's fair-share columns at one priority calculation (`sshare -l`), one
/// row per association, by index in [`SlurmRule::tree`].
#[derive(Debug, Clone, PartialEq)]
pub struct ShareSample {
    /// The calculation's instant, seconds.
    pub time: Time,
    /// Each association's row.
    pub rows: Vec<ShareRow>,
}

/// How the CPU time a run delivered divided among users against their shares
/// ([`SlurmRule::share_fairness`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareFairness {
    /// Users who ran at least one job.
    pub users: usize,
    /// Jain's index over users of (share of the delivered CPU-seconds) / (normalised share):
    /// 1 when every user got CPU time in proportion to its shares, down to 1 / users.
    pub fairness_index: f64,
    /// Half the sum over users of |share of the delivered CPU-seconds - normalised share|, in
    /// [0, 1]: the share of the delivered CPU time that would have to change hands for every
    /// user to get its share.
    pub share_error: f64,
}

/// [`SlurmRule::share_fairness`] of CPU time delivered elsewhere (the same users on another
/// machine: the headroom's uncontended run): `delivered` holds each job's (group, user,
/// CPU-seconds), in submission order; the association tree is derived from them as a run
/// under `config` derives it from its submissions (the site's own accounts, `group_shares`
/// and `user_shares` included), so the shares are those the run under `config` measures.
pub fn share_fairness_of(
    config: &SlurmConfig,
    delivered: &[(i64, i64, f64)],
) -> Option<ShareFairness> {
    let mut rule = SlurmRule::new(config.clone());
    // the fair-share factor is not needed: no association recomputes it as it is created
    rule.config.weights.fairshare = 0;
    for (i, &(group, user, cpu_seconds)) in delivered.iter().enumerate() {
        let job = JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: crate::JobId(u32::try_from(i).unwrap_or(u32::MAX)),
            submit: 0,
            processors: 1,
            estimate: 0,
            user,
            group,
            partition: -1,
            queue: -1,
            extra: cluster::Extra::NONE,
        };
        let assoc = rule.association(&job);
        if rule.delivered.len() <= assoc {
            rule.delivered.resize(assoc + 1, 0.0);
        }
        rule.delivered[assoc] += cpu_seconds;
    }
    rule.share_fairness()
}

/// Jobs and their waits under one account, partition or QOS.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct AccountWaits {
    /// Jobs started.
    pub jobs: u64,
    /// Their summed wait (start - submit), seconds.
    pub wait_sum: f64,
}

/// A partition as the model keeps it.
#[derive(Debug)]
struct PartitionState {
    config: Partition,
    /// Its partition factor: `PriorityJobFactor` over the largest.
    factor: f64,
    /// Processors its running jobs hold.
    used: u32,
    /// For a partition smaller than the machine: its running jobs' processors until start +
    /// time limit, and the plan a backfill cycle makes on it.
    running_profile: Option<Profile>,
    plan: Option<Profile>,
    /// The job the main loop last stopped at in it, and since when (reason `Resources`).
    blocked: Option<(JobId, Time)>,
    waits: AccountWaits,
    /// Jobs held for good in it ([`NeverStarts::PartitionConfig`],
    /// [`NeverStarts::PartitionTimeLimit`], and [`NeverStarts::QosGrpCpuLimit`] for a job it
    /// would take).
    never_started: u64,
}

/// A QOS as the model keeps it.
#[derive(Debug)]
struct QosState {
    config: Qos,
    /// Its QOS factor: its priority over the largest (0 when all are 0).
    factor: f64,
    /// Processors its running jobs hold.
    running_cpus: u32,
    /// What its running jobs hold, as its `GrpTRES` counts it.
    running_tres: Tally,
    waits: AccountWaits,
    /// Jobs of it held for good, whatever the reason ([`NeverStarts`]).
    never_started: u64,
}

/// One user's jobs in one QOS.
#[derive(Debug, Default)]
struct QosUser {
    /// Running.
    running: u32,
    /// What its running jobs hold ([`Qos::max_tres_per_user`]).
    tres: Tally,
    /// Pending and running, not held by `MaxSubmitJobsPerUser`.
    admitted: u32,
    /// Held by `MaxSubmitJobsPerUser`, in submission order.
    held: std::collections::VecDeque<JobId>,
}

/// Why a pending job may not start now though processors allow it: a QOS limit holds it,
/// with Slurm's pending reason (`src/common/job_state_reason.c`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held(&'static str);

/// The pending reason of a task its array's throttle holds.
const ARRAY_TASK_LIMIT: &str = "JobArrayTaskLimit";

/// The pending reasons of a QOS's `GrpTRES`, `MaxTRESPerUser` and `MaxTRESPerJob` (by
/// [`TresLimit::exceeded`]'s index: CPUs, memory, GPUs).
const GRP_REASONS: [&str; 3] = ["QOSGrpCpuLimit", "QOSGrpMemLimit", "QOSGrpGRES"];
const PER_USER_REASONS: [&str; 3] = [
    "QOSMaxCpuPerUserLimit",
    "QOSMaxMemoryPerUser",
    "QOSMaxGRESPerUser",
];

/// A machine of node types as the model keeps it ([`Backfill::node_machine`]).
#[derive(Debug, Clone, Default)]
struct NodeMachine {
    /// The nodes of each of the model's partitions (by index), empty for a partition the
    /// machine has no partition of that name for.
    partition_nodes: Vec<Vec<u32>>,
    /// The model's partition of each job partition number the machine routes, and of any
    /// other number (the machine's default partition).
    by_number: HashMap<i64, u16>,
    default: Option<u16>,
    /// How many nodes.
    count: usize,
    /// The resource kinds of memory (MiB) and GPUs.
    memory_kind: Option<usize>,
    gpu_kind: Option<usize>,
    /// The GPU types' names, by [`cluster::Shape::gpu_type`] - 1.
    gpu_types: Vec<String>,
    /// Each of the model's partitions' TRES totals (its nodes' CPUs, memory, nodes and
    /// GPUs), for `PriorityWeightTRES`.
    partition_tres: Vec<Tres>,
}

/// Why a job can never start: Slurm's pending reason for a job its partition or QOS will never
/// allow while the configuration stays as it is. Under Slurm's default `EnforcePartLimits=NO`
/// (`src/common/read_config.h`: `DEFAULT_ENFORCE_PART_LIMITS 0`; slurm.conf(5): "a job that
/// exceeds the limits on all requested partitions will remain queued until the partition
/// limits are altered") such a job is accepted at submission
/// (`job_mgr.c:_valid_job_part` lets `_part_access_check`'s failure pass) and then never
/// scheduled: `job_mgr.c:job_limits_check` fails it at every scheduling attempt, and the
/// QOS's check after node selection (`acct_policy.c:_qos_job_runnable_post_select`,
/// `TRES_USAGE_REQ_EXCEEDS_LIMIT`) holds it. The model holds it for good at its submission
/// ([`cluster::Backfill::hold_for_good`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NeverStarts {
    /// More processors than its partition has (`_part_access_check`'s
    /// `ESLURM_TOO_MANY_REQUESTED_CPUS`, which `job_limits_check` turns into
    /// `WAIT_PART_CONFIG`).
    PartitionConfig,
    /// A time limit over its partition's `MaxTime` (`ESLURM_INVALID_TIME_LIMIT`:
    /// `WAIT_PART_TIME_LIMIT`).
    PartitionTimeLimit,
    /// More processors than its QOS's `GrpTRES=cpu` allows all its jobs together
    /// (`WAIT_QOS_GRP_CPU`).
    QosGrpCpuLimit,
    /// More memory than its QOS's `GrpTRES=mem` (`WAIT_QOS_GRP_MEM`).
    QosGrpMemLimit,
    /// More GPUs than its QOS's `GrpTRES=gres/gpu` (`WAIT_QOS_GRP_GRES`).
    QosGrpGres,
    /// More CPUs than its QOS's `MaxTRESPerJob=cpu` (`WAIT_QOS_MAX_CPU_PER_JOB`).
    QosMaxCpuPerJob,
    /// More memory than its QOS's `MaxTRESPerJob=mem` (`WAIT_QOS_MAX_MEM_PER_JOB`).
    QosMaxMemoryPerJob,
    /// More GPUs than its QOS's `MaxTRESPerJob=gres/gpu` (`WAIT_QOS_MAX_GRES_PER_JOB`).
    QosMaxGresPerJob,
    /// More CPUs than its QOS's `MaxTRESPerUser=cpu` allows one user's jobs together
    /// (`WAIT_QOS_MAX_CPU_PER_USER`).
    QosMaxCpuPerUser,
    /// More memory than its QOS's `MaxTRESPerUser=mem` (`WAIT_QOS_MAX_MEM_PER_USER`).
    QosMaxMemoryPerUser,
    /// More GPUs than its QOS's `MaxTRESPerUser=gres/gpu` (`WAIT_QOS_MAX_GRES_PER_USER`).
    QosMaxGresPerUser,
}

impl NeverStarts {
    /// Every reason, in the order the model checks them (the partition's limits first, as
    /// `select_nodes` calls `job_limits_check` before the QOS's post-selection check).
    pub const ALL: [NeverStarts; 11] = [
        NeverStarts::PartitionConfig,
        NeverStarts::PartitionTimeLimit,
        NeverStarts::QosGrpCpuLimit,
        NeverStarts::QosGrpMemLimit,
        NeverStarts::QosGrpGres,
        NeverStarts::QosMaxCpuPerJob,
        NeverStarts::QosMaxMemoryPerJob,
        NeverStarts::QosMaxGresPerJob,
        NeverStarts::QosMaxCpuPerUser,
        NeverStarts::QosMaxMemoryPerUser,
        NeverStarts::QosMaxGresPerUser,
    ];

    /// The reasons every report lists, held jobs or not (those of the TRES limits appear
    /// only when a job was held for them).
    const ALWAYS: usize = 3;

    /// Slurm's name of the reason, as squeue and sacct show it
    /// (`src/common/job_state_reason.c`).
    pub fn name(self) -> &'static str {
        match self {
            NeverStarts::PartitionConfig => "PartitionConfig",
            NeverStarts::PartitionTimeLimit => "PartitionTimeLimit",
            NeverStarts::QosGrpCpuLimit => "QOSGrpCpuLimit",
            NeverStarts::QosGrpMemLimit => "QOSGrpMemLimit",
            NeverStarts::QosGrpGres => "QOSGrpGRES",
            NeverStarts::QosMaxCpuPerJob => "QOSMaxCpuPerJobLimit",
            NeverStarts::QosMaxMemoryPerJob => "QOSMaxMemoryPerJob",
            NeverStarts::QosMaxGresPerJob => "QOSMaxGRESPerJob",
            NeverStarts::QosMaxCpuPerUser => PER_USER_REASONS[0],
            NeverStarts::QosMaxMemoryPerUser => PER_USER_REASONS[1],
            NeverStarts::QosMaxGresPerUser => PER_USER_REASONS[2],
        }
    }
}

/// What a pass must run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MainRun {
    /// An event run: at most `default_queue_depth + 1` jobs.
    Event,
    /// A periodic run over the whole queue.
    Full,
}

/// Slurm's model as a backfilling rule: it keeps the association tree, the usage and every
/// job's priority, and runs the main loop, the backfill cycles and the priority calculation
/// at Slurm's instants (asking the engine for passes with [`Backfill::next_wakeup`]).
#[derive(Debug)]
pub struct SlurmRule {
    config: SlurmConfig,
    tree: AssocTree,
    /// A user's association, by (group, user); derived as root -> account of the group ->
    /// user, equal shares, as jobs of new owners arrive.
    users: HashMap<(i64, i64), usize>,
    /// A group's account, and the group of each derived group account.
    accounts: HashMap<i64, usize>,
    account_groups: HashMap<usize, i64>,
    /// The site's own accounts: their index in the tree, and in the configuration's list.
    named: HashMap<usize, u16>,
    /// Each association's fair-share factor at the last calculation.
    fair_share: Vec<f64>,
    /// Whether `fair_share` is still to be computed from the tree as the last calculation left
    /// it: a calculation with no pending job to reprioritise (and no sample due) leaves it
    /// stale, and it is computed when first needed, at the latest before the tree changes
    /// again (the factors are a function of the tree alone, so they are those the calculation
    /// would have computed).
    fair_share_stale: bool,
    /// Scratch space of Fair Tree's level values, kept between calculations.
    level_scratch: Vec<f64>,
    pending: HashMap<JobId, Pending>,
    running: HashMap<JobId, Running>,
    /// The machine's processors (known at the first pass).
    machine: u32,
    /// The first instant the model saw (slurmctld's start): the calculation grid's origin.
    origin: Option<Time>,
    /// The last priority calculation (`g_last_ran`).
    last_calc: Option<Time>,
    next_calc: Time,
    /// A requested event run of the main loop.
    event_run: Option<Time>,
    /// The end of the last main-loop run.
    last_main: Option<Time>,
    next_full: Time,
    /// Something changed since the last main-loop run (a submission, an end, a priority).
    main_changed: bool,
    /// The earliest next backfill cycle, and whether something changed since the last one.
    next_backfill: Time,
    backfill_changed: bool,
    /// The last pass.
    last_pass: Time,
    /// Whether the queue's positions may be out of priority order (a submission that does not
    /// sort last, or new priorities); the key of the job that sorts last otherwise.
    order_dirty: bool,
    last_key: Option<QueueKey>,
    /// The running jobs' processors until start + time limit, kept as jobs start and end
    /// (backfill copies it at each cycle).
    running_profile: Option<Profile>,
    /// The profile a backfill cycle plans on (reused).
    plan: Option<Profile>,
    /// The fewest free processors from now in the plan (reused; see [`Profile::staircase`]).
    staircase: Vec<(Time, i64)>,
    /// The earliest starts found in the current backfill cycle by shape, kept between cycles
    /// for their memory ([`cluster::StartBounds`]).
    start_bounds: cluster::StartBounds,
    /// [`BOUNDS_FROM_STEPS`] (tests lower it, to use the bounds on small plans).
    bounds_from_steps: usize,
    /// [`SlurmRule::put_in_order`]'s buffers (the waiting jobs' keys, the new order), kept
    /// between passes.
    order_buffers: (Vec<(QueueKey, usize)>, Vec<usize>),
    /// What the last backfill cycle planned (see [`SlurmRule::backfill`]).
    carried: Carried,
    /// How many priority calculations changed a priority.
    priority_changes: u64,
    /// The instant silent ticks were last made up to ([`SlurmRule::catch_up`]).
    caught_up_at: Option<Time>,
    /// Whether the usage is kept without a fair-share weight ([`SlurmRule::keep_usage`]).
    keep_usage: bool,
    /// The partitions and QOS (at least one of each) and every user's jobs in each QOS.
    partitions: Vec<PartitionState>,
    qos: Vec<QosState>,
    qos_users: HashMap<(u16, i64), QosUser>,
    /// Running tasks of each job array ([`cluster::ArrayTask::array`]).
    array_running: HashMap<u32, u32>,
    /// The tasks of each job array not yet started: Slurm keeps them as one queue record and
    /// splits them off in task order, so only the first may start.
    array_pending: HashMap<u32, std::collections::BTreeSet<u32>>,
    /// The first submitted job of each job array: its tasks' place in the queue.
    array_first: HashMap<u32, JobId>,
    /// Whether there is one partition of the whole machine and one QOS without limits (the
    /// loops then skip the partition and limit checks).
    simple: bool,
    /// CPU-seconds delivered to each association's jobs that ended (by index in the tree).
    delivered: Vec<f64>,
    /// The jobs held for good and why, in submission order ([`SlurmRule::never_started`]).
    never: Vec<(JobId, NeverStarts)>,
    /// Jobs started and their waits, by account (the user association's parent index).
    account_waits: std::collections::BTreeMap<usize, AccountWaits>,
    /// Record the fair-share columns every this many seconds, at the first calculation at
    /// or after each sample time ([`SlurmRule::sample_shares`]).
    shares_every: Option<Time>,
    next_sample: Time,
    samples: Vec<ShareSample>,
    /// On a machine of node types: its partitions' nodes and resource kinds (then the main
    /// loop and backfill schedule on nodes: [`SlurmRule::main_loop`],
    /// [`SlurmRule::backfill_nodes`]).
    nodes: Option<NodeMachine>,
    /// Stretches of holding by a QOS limit, by pending reason ([`SlurmRule::held_by_limit`]).
    held_by: std::collections::BTreeMap<&'static str, u64>,
    /// Whether the model takes the shortcuts that give the same starts with less work
    /// (backfill skipping cycles and the jobs after the last that could start, going on from
    /// the previous cycle's plan; silent ticks made up later); off only in the tests that
    /// check they do.
    shortcuts: bool,
}

/// A pending job's place in Slurm's order (`sort_job_queue2`): its partition's
/// `PriorityTier` descending, then priority descending, then submit, then job id.
/// A job's place in the queue: tier and priority (highest first), submission, then the job (an
/// array's task by its array's first submitted job and its task index, so that an array's
/// tasks line up in task order, as Slurm's one record for them splits them off).
type QueueKey = (
    std::cmp::Reverse<u16>,
    std::cmp::Reverse<u32>,
    Time,
    JobId,
    u32,
);

impl SlurmRule {
    /// The rule's name ([`Backfill::name`]), whichever preset built it.
    pub const NAME: &'static str = "slurm";

    /// A model with `config` (checked by the caller) and an association tree derived from the
    /// jobs' owners (the accounts given shares in `config.group_shares` made at once).
    pub fn new(config: SlurmConfig) -> SlurmRule {
        let mut rule = SlurmRule::without_accounts(config);
        // the site's own accounts, parents first
        let mut by_name: HashMap<String, usize> = HashMap::default();
        for (i, account) in rule.config.accounts.clone().into_iter().enumerate() {
            let parent = account
                .parent
                .as_ref()
                .and_then(|p| by_name.get(p).copied())
                .unwrap_or(AssocTree::ROOT);
            let index = rule.tree.add_account(parent, &account.name, account.shares);
            by_name.insert(account.name, index);
            rule.named
                .insert(index, u16::try_from(i).unwrap_or(u16::MAX));
            for group in account.groups {
                rule.accounts.entry(group).or_insert(index);
            }
        }
        if rule.config.accounts_from_groups {
            for (&group, &shares) in &rule.config.group_shares {
                let account = rule.tree.add_account(
                    AssocTree::ROOT,
                    &account_name(Some(group)),
                    Shares::Raw(shares),
                );
                rule.accounts.insert(group, account);
                rule.account_groups.insert(account, group);
            }
        }
        // the users' associations of the site's database, before their first jobs
        for member in rule.config.members.clone() {
            rule.add_user(member.group, member.user, member.shares);
        }
        rule
    }

    fn without_accounts(config: SlurmConfig) -> SlurmRule {
        let partitions = config.effective_partitions();
        let top = partitions
            .iter()
            .map(|p| p.priority_job_factor)
            .max()
            .unwrap_or(1)
            .max(1);
        let partitions: Vec<PartitionState> = partitions
            .into_iter()
            .map(|p| PartitionState {
                factor: f64::from(p.priority_job_factor) / f64::from(top),
                config: p,
                used: 0,
                running_profile: None,
                plan: None,
                blocked: None,
                waits: AccountWaits::default(),
                never_started: 0,
            })
            .collect();
        let qos = config.effective_qos();
        let top = qos.iter().map(|q| q.priority).max().unwrap_or(0);
        let qos: Vec<QosState> = qos
            .into_iter()
            .map(|q| QosState {
                factor: if top > 0 {
                    f64::from(q.priority) / f64::from(top)
                } else {
                    0.0
                },
                config: q,
                running_cpus: 0,
                running_tres: Tally::default(),
                waits: AccountWaits::default(),
                never_started: 0,
            })
            .collect();
        let simple = config.partitions.is_empty() && config.qos.is_empty();
        let mut rule = SlurmRule::bare(config);
        rule.partitions = partitions;
        rule.qos = qos;
        rule.simple = simple;
        rule
    }

    fn bare(config: SlurmConfig) -> SlurmRule {
        SlurmRule {
            config,
            tree: AssocTree::new(),
            users: HashMap::default(),
            accounts: HashMap::default(),
            account_groups: HashMap::default(),
            named: HashMap::default(),
            fair_share: vec![0.0],
            fair_share_stale: false,
            level_scratch: Vec::new(),
            pending: HashMap::default(),
            running: HashMap::default(),
            machine: 0,
            origin: None,
            last_calc: None,
            next_calc: Time::MIN,
            event_run: None,
            last_main: None,
            next_full: Time::MIN,
            main_changed: false,
            next_backfill: Time::MIN,
            backfill_changed: false,
            last_pass: Time::MIN,
            order_dirty: false,
            last_key: None,
            running_profile: None,
            plan: None,
            staircase: Vec::new(),
            start_bounds: cluster::StartBounds::default(),
            bounds_from_steps: BOUNDS_FROM_STEPS,
            order_buffers: (Vec::new(), Vec::new()),
            carried: Carried::default(),
            priority_changes: 0,
            caught_up_at: None,
            keep_usage: false,
            partitions: Vec::new(),
            qos: Vec::new(),
            qos_users: HashMap::default(),
            array_running: HashMap::default(),
            array_pending: HashMap::default(),
            array_first: HashMap::default(),
            simple: true,
            delivered: Vec::new(),
            never: Vec::new(),
            account_waits: std::collections::BTreeMap::new(),
            shares_every: None,
            next_sample: Time::MIN,
            samples: Vec::new(),
            nodes: None,
            held_by: std::collections::BTreeMap::new(),
            shortcuts: true,
        }
    }

    /// Records the association tree's fair-share columns ([`ShareSample`]) at the first
    /// priority calculation at or after every multiple of `every` seconds from the first
    /// calculation ([`SlurmRule::share_samples`]); `every` at most the calculation period
    /// records every calculation. Keeps the usage ([`SlurmRule::keep_usage`]).
    pub fn sample_shares(&mut self, every: Time) {
        self.shares_every = Some(every.max(1));
        self.keep_usage = true;
    }

    /// The samples recorded so far ([`SlurmRule::sample_shares`]).
    pub fn share_samples(&self) -> &[ShareSample] {
        &self.samples
    }

    /// What the model knew of a running job at its start (`None` for a job not running).
    pub fn at_start(&self, id: JobId) -> Option<AtStart> {
        self.running.get(&id).map(|r| r.at_start)
    }

    /// Jobs started and their waits under each account, by account name.
    pub fn account_waits(&self) -> impl Iterator<Item = (&str, AccountWaits)> + '_ {
        self.account_waits
            .iter()
            .map(|(&account, &waits)| (self.tree.name(account), waits))
    }

    /// Jobs started and their waits in each partition, by name, with the jobs held for good
    /// in it ([`NeverStarts`]).
    pub fn partition_waits(&self) -> impl Iterator<Item = (&str, AccountWaits, u64)> + '_ {
        self.partitions
            .iter()
            .map(|p| (p.config.name.as_str(), p.waits, p.never_started))
    }

    /// Jobs started and their waits in each QOS, by name, with its jobs held for good.
    pub fn qos_waits(&self) -> impl Iterator<Item = (&str, AccountWaits, u64)> + '_ {
        self.qos
            .iter()
            .map(|q| (q.config.name.as_str(), q.waits, q.never_started))
    }

    /// The jobs held for good, never started, and Slurm's pending reason for each, in
    /// submission order ([`NeverStarts`]).
    pub fn never_started(&self) -> &[(JobId, NeverStarts)] {
        &self.never
    }

    /// How many jobs were held for good for each reason, in [`NeverStarts::ALL`]'s order.
    /// The jobs held for good by reason: `PartitionConfig`, `PartitionTimeLimit` and
    /// `QOSGrpCpuLimit` always, the reasons of the other TRES limits when a job was held for
    /// one.
    pub fn never_started_by_reason(&self) -> Vec<(NeverStarts, u64)> {
        (NeverStarts::ALL.into_iter().enumerate())
            .map(|(i, reason)| {
                let n = self.never.iter().filter(|(_, r)| *r == reason).count();
                (i, reason, n as u64)
            })
            .filter(|&(i, _, n)| i < NeverStarts::ALWAYS || n > 0)
            .map(|(_, reason, n)| (reason, n))
            .collect()
    }

    /// How many times a pending job was found held by a QOS limit, by Slurm's pending
    /// reason (`QOSMaxJobsPerUserLimit`, `QOSGrpGRES`, ...): counted when a job becomes held,
    /// once per stretch of holding.
    pub fn held_by_limit(&self) -> &std::collections::BTreeMap<&'static str, u64> {
        &self.held_by
    }

    /// How the CPU-seconds delivered to the jobs that ended divided among users against their
    /// shares: each user's share of the delivered CPU-seconds against its normalised share
    /// (the product of shares over level shares down the tree, as classic fair-share's
    /// `NormShares`), the shares renormalised over the users who ran (an account given
    /// shares with no user who ran holds none). Delivered CPU-seconds are not decayed: the
    /// whole run counts alike. `None` before a job ended.
    pub fn share_fairness(&self) -> Option<ShareFairness> {
        let rows = self.tree.classic(1.0, false);
        let users: Vec<(f64, f64)> = (0..self.tree.len())
            .filter(|&i| self.tree.is_user(i))
            .filter_map(|i| {
                let delivered = self.delivered.get(i).copied().unwrap_or(0.0);
                let share = rows.get(i).map_or(0.0, |r| r.norm_shares);
                (delivered > 0.0).then_some((delivered, share))
            })
            .collect();
        let delivered: f64 = users.iter().map(|u| u.0).sum();
        let shares: f64 = users.iter().map(|u| u.1).sum();
        if users.is_empty() || delivered <= 0.0 || shares <= 0.0 {
            return None;
        }
        let ratios: Vec<f64> = users
            .iter()
            .map(|&(d, s)| {
                let s = s / shares;
                if s > 0.0 {
                    d / delivered / s
                } else {
                    f64::INFINITY
                }
            })
            .collect();
        let sum: f64 = ratios.iter().sum();
        let squares: f64 = ratios.iter().map(|x| x * x).sum();
        let error: f64 = users
            .iter()
            .map(|&(d, s)| (d / delivered - s / shares).abs())
            .sum();
        Some(ShareFairness {
            users: users.len(),
            fairness_index: if squares.is_finite() {
                sum * sum / (users.len() as f64 * squares)
            } else {
                0.0
            },
            share_error: error / 2.0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &SlurmConfig {
        &self.config
    }

    /// Keeps the associations' usage (decayed and charged at every calculation) though the
    /// fair-share weight is 0, for a caller that reads it ([`SlurmRule::tree`]). Without this
    /// and with a fair-share weight of 0 nothing depends on the usage, so it is not kept.
    pub fn keep_usage(&mut self) {
        self.keep_usage = true;
    }

    /// Whether the usage is kept: the fair-share factor needs it, or a caller asked.
    fn tracks_usage(&self) -> bool {
        self.keep_usage || self.config.weights.fairshare > 0
    }

    /// The association tree with its usage as of the last calculation (the usage stays 0
    /// unless the fair-share weight is positive or [`SlurmRule::keep_usage`] was called).
    pub fn tree(&self) -> &AssocTree {
        &self.tree
    }

    /// The priority and factors of a pending job, as of the last calculation (`sprio`).
    pub fn priority_of(&self, id: JobId) -> Option<(u32, Factors)> {
        self.pending.get(&id).map(|p| (p.priority, p.factors))
    }

    /// A submission at `job.submit` reaches the model: the silent ticks before it are made up,
    /// the first one starts the calculation grid (slurmctld's start), and its owner's
    /// association is returned (created if new).
    fn arrive(&mut self, job: &JobRequest) -> usize {
        let now = job.submit;
        self.catch_up(now);
        if self.origin.is_none() {
            self.origin = Some(now);
            self.next_calc = now;
            self.next_full = now + self.config.sched_interval;
            self.next_backfill = now + self.config.bf_interval;
        }
        self.association(job)
    }

    /// The association of a job's owner, created with equal shares if new.
    fn association(&mut self, job: &JobRequest) -> usize {
        if let Some(&assoc) = self.users.get(&(job.group, job.user)) {
            return assoc;
        }
        let shares = self.config.user_shares.get(&job.user).copied().unwrap_or(1);
        let assoc = self.add_user(job.group, job.user, shares);
        // the association existed from the start in Slurm: its factor is computed now
        if self.config.weights.fairshare > 0 {
            self.update_fair_share();
        }
        assoc
    }

    /// Adds user `user`'s association under group `group`'s account (the tree's, else the
    /// group's derived account, added if new; root with `accounts = "none"`) with `shares`,
    /// unless it exists; its index.
    fn add_user(&mut self, group: i64, user: i64, shares: u32) -> usize {
        if let Some(&assoc) = self.users.get(&(group, user)) {
            return assoc;
        }
        self.fresh_fair_share();
        let account = match self.accounts.get(&group) {
            Some(&a) => a,
            None if !self.config.accounts_from_groups => AssocTree::ROOT,
            None => {
                let a = self.tree.add_account(
                    AssocTree::ROOT,
                    &account_name(Some(group)),
                    Shares::Raw(self.config.group_shares.get(&group).copied().unwrap_or(1)),
                );
                self.accounts.insert(group, a);
                self.account_groups.insert(a, group);
                a
            }
        };
        let assoc = self
            .tree
            .add_user(account, &format!("user{user}"), Shares::Raw(shares));
        self.users.insert((group, user), assoc);
        assoc
    }

    /// Computes the fair-share factors a calculation left stale ([`SlurmRule::fair_share_stale`]).
    fn fresh_fair_share(&mut self) {
        if self.fair_share_stale {
            self.update_fair_share();
        }
    }

    /// Computes every association's fair-share factor from the tree as it is now.
    fn update_fair_share(&mut self) {
        if self.config.fairshare == FairShareAlgorithm::FairTree {
            self.fair_share_stale = false;
            let mut scratch = std::mem::take(&mut self.level_scratch);
            self.tree
                .fair_tree_factors(&mut self.fair_share, &mut scratch);
            self.level_scratch = scratch;
        } else {
            self.compute_fair_share();
        }
    }

    /// [`SlurmRule::update_fair_share`], with sshare's rows.
    fn compute_fair_share(&mut self) -> Vec<ShareRow> {
        self.fair_share_stale = false;
        let rows = match self.config.fairshare {
            FairShareAlgorithm::FairTree => self.tree.fair_tree(),
            FairShareAlgorithm::Classic => {
                self.tree.classic(f64::from(self.config.dampening), false)
            }
            FairShareAlgorithm::DepthOblivious => {
                self.tree.classic(f64::from(self.config.dampening), true)
            }
        };
        self.fair_share = rows.iter().map(|r| r.fair_share.unwrap_or(0.0)).collect();
        rows
    }

    fn factors(&self, job: &Pending, now: Time) -> Factors {
        let weights = &self.config.weights;
        Factors {
            age: match job.accrue {
                Some(accrue) if weights.age > 0 => priority::age(now, accrue, self.config.max_age),
                _ => 0.0,
            },
            assoc: 0.0,
            fairshare: self.fair_share.get(job.assoc).copied().unwrap_or(0.0),
            job_size: if weights.job_size > 0 {
                priority::job_size(&self.config, job.processors, job.limit, self.machine)
            } else {
                0.0
            },
            // `part_ptr->norm_priority`: PriorityJobFactor over the largest
            partition: if weights.partition > 0 {
                self.partitions[usize::from(job.partition)].factor
            } else {
                0.0
            },
            // `qos_ptr->usage->norm_priority`: its priority over the largest
            qos: if weights.qos > 0 {
                self.qos[usize::from(job.qos)].factor
            } else {
                0.0
            },
            tres: job.tres_factor,
        }
    }

    /// A job's TRES as Slurm counts them ([`billing::Tres`]): its CPUs, memory (MiB), nodes
    /// (its node count, or 1 when it gives none) and GPUs, under `gres/gpu` and, for a typed
    /// request, `gres/gpu:TYPE` too.
    fn slurm_tres(&self, job: &JobRequest) -> Tres {
        let t = self.tres_of(job);
        let mut tres = Tres::new(t.cpus, t.memory, u64::from(job.shape.nodes.max(1)));
        if t.gpus > 0 {
            tres = tres.with_gres("gpu", t.gpus);
            let typed = (self.nodes.as_ref()).and_then(|n| {
                n.gpu_types
                    .get(usize::from(job.shape.gpu_type).wrapping_sub(1))
            });
            if let Some(name) = typed {
                tres = tres.with_gres(&format!("gpu:{name}"), t.gpus);
            }
        }
        tres
    }

    /// A job's weighted TRES factor and its usage per second, in partition `partition`: its
    /// billing under the partition's `TRESBillingWeights` (else the site's; none: its CPUs,
    /// as `calc_job_billable_tres`), and `PriorityWeightTRES`'s factor over the partition's
    /// totals (`_get_tres_factors`: the partition's TRES, its nodes' on a machine of node
    /// types, else its processors).
    fn billing_of(&self, job: &JobRequest, partition: u16) -> (f64, f64) {
        let part = &self.partitions[usize::from(partition)].config;
        let weights = part
            .billing_weights
            .as_ref()
            .unwrap_or(&self.config.billing_weights);
        let unweighted = weights.is_unset() && self.config.weight_tres.is_unset();
        if unweighted {
            return (0.0, f64::from(job.processors));
        }
        let tres = self.slurm_tres(job);
        let rate = if weights.is_unset() {
            f64::from(job.processors)
        } else {
            billing::billing(weights, &tres, self.config.billing_mode)
        };
        let factor = if self.config.weight_tres.is_unset() {
            0.0
        } else {
            let totals = match &self.nodes {
                Some(n) => n.partition_tres.get(usize::from(partition)).cloned(),
                None => None,
            }
            .unwrap_or_else(|| {
                let cpus = part.processors.unwrap_or(self.machine);
                Tres::new(u64::from(cpus), 0, 0)
            });
            billing::tres_priority(
                &self.config.weight_tres,
                &tres,
                &totals,
                billing::TresNormalisation::Partition,
            )
        };
        (factor, rate)
    }

    /// The partition a job goes to, and why it can never start there if it cannot. Its
    /// candidates are the partitions that select it (every partition when none does), as the
    /// partition list of `sbatch -p`: it goes to the first candidate that takes it (its
    /// processors at most the partition's, its time limit at most the partition's `MaxTime`).
    /// When none takes it, it goes to the first candidate and can never start there, as
    /// Slurm leaves a job that exceeds the limits of all its partitions pending
    /// (`EnforcePartLimits=NO`): [`NeverStarts::PartitionConfig`] when it is wider than that
    /// partition (`_part_access_check` tests the CPUs first), else
    /// [`NeverStarts::PartitionTimeLimit`].
    fn route(&self, job: &JobRequest) -> (u16, Option<NeverStarts>) {
        // On a machine of node types a job goes to the partition of its own name; whether its
        // nodes can ever hold it is the machine's to say (it holds such a job for good).
        if let Some(nodes) = &self.nodes
            && let Some(part) = nodes
                .by_number
                .get(&job.partition)
                .copied()
                .or(nodes.default)
        {
            let long = (self.partitions[usize::from(part)].config.max_time)
                .is_some_and(|t| job.estimate > t);
            return (part, long.then_some(NeverStarts::PartitionTimeLimit));
        }
        let machine = self.machine.max(1);
        let size = |p: &PartitionState| p.config.processors.unwrap_or(machine).min(machine);
        let selects = |p: &PartitionState| p.config.jobs.selects(job.group, job.partition);
        let any_selects = self.partitions.iter().any(selects);
        let candidate = |p: &PartitionState| !any_selects || selects(p);
        let wide = |p: &PartitionState| job.processors > size(p);
        let long = |p: &PartitionState| p.config.max_time.is_some_and(|t| job.estimate > t);
        let index = |i: usize| u16::try_from(i).unwrap_or(0);
        if let Some(i) = (self.partitions.iter()).position(|p| candidate(p) && !wide(p) && !long(p))
        {
            return (index(i), None);
        }
        let first = self.partitions.iter().position(candidate).unwrap_or(0);
        let reason = match self.partitions.get(first) {
            Some(p) if wide(p) => NeverStarts::PartitionConfig,
            _ => NeverStarts::PartitionTimeLimit,
        };
        (index(first), Some(reason))
    }

    /// What a job asks for, as QOS limits count it: its processors, and its memory (MiB) and
    /// GPUs on a machine of node types (none elsewhere).
    fn tres_of(&self, job: &JobRequest) -> Tally {
        let kind = |k: Option<usize>| k.map_or(0, |k| u64::from(job.extra.get(k)));
        let (memory, gpus) = self
            .nodes
            .as_ref()
            .map_or((0, 0), |n| (kind(n.memory_kind), kind(n.gpu_kind)));
        Tally {
            cpus: u64::from(job.processors),
            memory,
            gpus,
        }
    }

    /// Why a job can never start under its QOS's TRES limits: more than its `MaxTRESPerJob`,
    /// or alone more than its `GrpTRES` allows all its jobs together or its `MaxTRESPerUser`
    /// all of one user's (Slurm's
    /// `_qos_job_runnable_post_select` / `acct_policy_job_runnable_post_select` hold such a
    /// job pending for good).
    fn over_qos(&self, qos: u16, tres: Tally) -> Option<NeverStarts> {
        let config = &self.qos[usize::from(qos)].config;
        if config
            .grp_cpus
            .is_some_and(|cpus| tres.cpus > u64::from(cpus))
        {
            return Some(NeverStarts::QosGrpCpuLimit);
        }
        match tres.over(&config.grp_tres) {
            Some(1) => return Some(NeverStarts::QosGrpMemLimit),
            Some(2) => return Some(NeverStarts::QosGrpGres),
            _ => {}
        }
        match tres.over(&config.max_tres_per_job) {
            Some(0) => return Some(NeverStarts::QosMaxCpuPerJob),
            Some(1) => return Some(NeverStarts::QosMaxMemoryPerJob),
            Some(_) => return Some(NeverStarts::QosMaxGresPerJob),
            None => {}
        }
        match tres.over(&config.max_tres_per_user) {
            Some(0) => Some(NeverStarts::QosMaxCpuPerUser),
            Some(1) => Some(NeverStarts::QosMaxMemoryPerUser),
            Some(_) => Some(NeverStarts::QosMaxGresPerUser),
            None => None,
        }
    }

    /// The QOS a job goes to: the first that selects it, else the first.
    fn qos_of(&self, job: &JobRequest) -> u16 {
        let found = self
            .qos
            .iter()
            .position(|q| q.config.jobs.selects(job.group, job.queue))
            .unwrap_or(0);
        u16::try_from(found).unwrap_or(0)
    }

    /// Whether a QOS limit holds a pending job now (`acct_policy_job_runnable_pre_select`
    /// for the QOS's MaxJobsPerUser, `_qos_job_runnable_post_select` for its GrpTRES cpu;
    /// MaxSubmitJobsPerUser holds it from its submission). A job larger than its QOS's
    /// `grp_cpus` never gets here: it is held for good ([`NeverStarts::QosGrpCpuLimit`]).
    /// Whether an earlier task of a job's array has not started yet: the array's tasks not yet
    /// started are one record in Slurm's queue, split off in task order (`job_mgr.c`'s
    /// `job_array_split`), so a later task waits behind it whatever its place here.
    fn behind_in_array(&self, job: &Pending) -> bool {
        job.array_task.is_some()
            && self
                .array_pending
                .get(&job.array_task.array)
                .and_then(|tasks| tasks.first())
                .is_some_and(|&first| first < job.array_task.task)
    }

    fn limited(&self, job: &Pending) -> Option<Held> {
        if job.submit_held {
            return Some(Held("QOSMaxSubmitJobPerUserLimit"));
        }
        // the array's throttle (`--array=...%N`; job_mgr.c's `job_array_start_test`,
        // reason `JobArrayTaskLimit`), tested before the QOS's limits as Slurm does
        if job.array_task.is_throttled()
            && self
                .array_running
                .get(&job.array_task.array)
                .copied()
                .unwrap_or(0)
                >= job.array_task.limit
        {
            return Some(Held(ARRAY_TASK_LIMIT));
        }
        let qos = &self.qos[usize::from(job.qos)];
        if let Some(max) = qos.config.max_jobs_per_user {
            let running = self
                .qos_users
                .get(&(job.qos, job.user))
                .map_or(0, |u| u.running);
            if running >= max {
                return Some(Held("QOSMaxJobsPerUserLimit"));
            }
        }
        if let Some(cpus) = qos.config.grp_cpus
            && qos.running_cpus + job.processors > cpus
        {
            return Some(Held(GRP_REASONS[0]));
        }
        if !qos.config.grp_tres.is_none()
            && let Some(i) = qos.running_tres.plus(job.tres).over(&qos.config.grp_tres)
        {
            return Some(Held(GRP_REASONS[i]));
        }
        if !qos.config.max_tres_per_user.is_none() {
            let user =
                (self.qos_users.get(&(job.qos, job.user))).map_or(Tally::default(), |u| u.tres);
            if let Some(i) = user.plus(job.tres).over(&qos.config.max_tres_per_user) {
                return Some(Held(PER_USER_REASONS[i]));
            }
        }
        None
    }

    /// Whether a job's partition has room for it now (the machine's free processors are
    /// checked apart).
    fn partition_has_room(&self, job: &Pending) -> bool {
        let part = &self.partitions[usize::from(job.partition)];
        match part.config.processors {
            Some(cap) => part.used + job.processors <= cap,
            None => true,
        }
    }

    /// Notes that a scheduling loop at `now` found `id` held (or not) by a limit.
    fn note_held(&mut self, id: JobId, held: Option<Held>, now: Time) {
        if let Some(p) = self.pending.get_mut(&id) {
            // A task its array's throttle holds has its eligible time cleared, and set again
            // when the test passes (`job_array_start_test` sets `begin_time = 0`): its age
            // counts from the last scheduling test that held it.
            if held.is_some_and(|Held(reason)| reason == ARRAY_TASK_LIMIT) && p.accrue.is_some() {
                p.accrue = Some(now);
            }
            match (held, p.held_since) {
                (Some(Held(reason)), None) => {
                    p.held_since = Some(now);
                    *self.held_by.entry(reason).or_default() += 1;
                }
                (None, Some(since)) => {
                    p.limit_held += now - since;
                    p.held_since = None;
                }
                _ => {}
            }
        }
    }

    /// The usage part of a calculation at `now`: decay by `d^Δt`, then every running job
    /// charged `Δt · d^Δt · CPUs` to its association and its ancestors.
    fn charge_usage(&mut self, now: Time) {
        let d = self.config.decay_per_second();
        if let Some(last) = self.last_calc {
            let elapsed = now - last;
            if elapsed > 0 {
                self.tree
                    .decay(d.powf(elapsed as f64).max(f64::MIN_POSITIVE));
            }
        }
        let since = self.last_calc;
        // the jobs running since the last calculation share one `Δt · d^Δt` (the same
        // product as `charge`'s, computed once)
        let whole = since.map(|last| {
            let delta = (now - last).max(0) as f64;
            (last, delta * d.powf(delta))
        });
        for r in self.running.values() {
            let amount = match whole {
                Some((last, per_processor)) if r.start <= last => per_processor * r.rate,
                _ => charge(d, since, r.start, now, r.rate),
            };
            // UsageFactor: 1 unless its QOS says otherwise
            let factor = self.qos[usize::from(r.qos)].config.usage_factor;
            self.tree.charge(r.assoc, amount * factor);
        }
    }

    /// A priority calculation at `now` (`_decay_thread`, Fair Tree's order): decay, charge
    /// the running jobs, fair-share, every pending job's priority.
    fn calculate(&mut self, now: Time) {
        if self.tracks_usage() {
            self.charge_usage(now);
        }
        self.last_calc = Some(now);
        let weights = self.config.weights;
        let sample = self.shares_every.filter(|_| now >= self.next_sample);
        if weights.fairshare > 0 && sample.is_none() && self.pending.is_empty() {
            // no pending job to reprioritise: the factors wait until they are needed
            self.fair_share_stale = true;
        } else if sample.is_none() {
            if weights.fairshare > 0 {
                self.update_fair_share();
            }
        } else {
            let rows = self.compute_fair_share();
            if let Some(every) = sample {
                self.samples.push(ShareSample { time: now, rows });
                self.next_sample = if self.next_sample == Time::MIN {
                    now + every
                } else {
                    // the next multiple of `every` after `now` on the first sample's grid
                    let first = self.samples.first().map_or(now, |s| s.time);
                    first + ((now - first).div_euclid(every) + 1) * every
                };
            }
            if weights.fairshare == 0 {
                // the factors stay as they were without a fair-share weight
                self.fair_share.iter_mut().for_each(|f| *f = 0.0);
            }
        }
        if weights.age == 0 && weights.fairshare == 0 {
            return; // the other factors do not move: priorities stay as computed at submit
        }
        let mut changed = false;
        let ids: Vec<JobId> = self.pending.keys().copied().collect();
        for id in ids {
            let Some(job) = self.pending.get(&id).copied() else {
                continue;
            };
            let factors = self.factors(&job, now);
            let priority = priority::priority(&self.config, &factors);
            changed |= priority != job.priority;
            if let Some(p) = self.pending.get_mut(&id) {
                p.factors = factors;
                p.priority = priority;
            }
        }
        if changed {
            self.priority_changes += 1;
            self.main_changed = true;
            self.order_dirty = true;
            self.note_backfill_change(now);
        }
    }

    /// Whether a priority calculation can change no priority (the age and fair-share
    /// weights are 0): its ticks then need no pass of their own and are made up before the
    /// next change of the running jobs ([`SlurmRule::catch_up`]).
    fn ticks_are_silent(&self) -> bool {
        self.shortcuts && self.config.weights.age == 0 && self.config.weights.fairshare == 0
    }

    /// Makes the calculations due before `now` that silent ticks skipped, each at its own
    /// instant and with what its own pass would have done (the same decay and charges, in the
    /// same order, so the same usage; the periodic main-loop run's clock reset), before the
    /// running jobs or the queue change at `now`. While nothing waits or runs, ticks are
    /// skipped as they are without silence.
    fn catch_up(&mut self, now: Time) {
        // the first call of an instant sees the state before it changes at that instant
        if self.caught_up_at == Some(now) {
            return;
        }
        self.caught_up_at = Some(now);
        if !self.ticks_are_silent()
            || self.origin.is_none()
            || (self.pending.is_empty() && self.running.is_empty())
        {
            return;
        }
        while self.next_calc < now {
            let tick = self.next_calc;
            self.calculate(tick);
            self.next_calc = tick + self.config.calc_period;
            self.periodic_due(tick);
            self.last_pass = tick;
        }
    }

    /// Whether the main loop's periodic run (every `sched_interval`) falls at `now`; if so,
    /// the next is `sched_interval` later. The runs due while the model had no pass found
    /// nothing to do (a pass is asked for one when something changed and jobs wait), so they
    /// are not made up at `now`: the next falls on their grid, as slurmctld's background
    /// thread keeps its period whether or not jobs wait. A submission after a quiet spell
    /// thus waits for its event run (or the next periodic one), never starting in the
    /// submission's own instant.
    fn periodic_due(&mut self, now: Time) -> bool {
        let interval = self.config.sched_interval;
        if now > self.next_full {
            let missed = (now - self.next_full + interval - 1).div_euclid(interval);
            self.next_full += missed * interval;
        }
        if now >= self.next_full {
            self.next_full = now + interval;
            true
        } else {
            false
        }
    }

    /// Something a backfill cycle looks at changed at `now`.
    fn note_backfill_change(&mut self, now: Time) {
        // The agent polls every second once its interval has passed. A cycle still due from
        // an earlier change (`next_backfill < now`) never ran because no job waited then:
        // this change, too, is seen at the next poll, not in its own instant.
        if !self.backfill_changed || self.next_backfill < now {
            self.backfill_changed = true;
            self.next_backfill = self.next_backfill.max(now + 1);
        }
    }

    fn key(&self, job: &JobRequest) -> QueueKey {
        let (tier, priority) = self.pending.get(&job.id).map_or((1, 1), |p| {
            let tier = self.partitions[usize::from(p.partition)]
                .config
                .priority_tier;
            (tier, p.priority)
        });
        let first = (job.array_task.is_some())
            .then(|| self.array_first.get(&job.array_task.array))
            .flatten();
        let (id, task) = match first {
            Some(&first) => (first, job.array_task.task),
            None => (job.id, 0),
        };
        (
            std::cmp::Reverse(tier),
            std::cmp::Reverse(priority),
            job.submit,
            id,
            task,
        )
    }

    /// Puts the queue's positions in priority order (`sort_job_queue2`) if they may not be:
    /// the queue keeps that order between passes (started jobs stay as tombstones, new jobs
    /// come last), so most passes sort nothing.
    fn put_in_order(&mut self, pass: &mut Pass<'_>) {
        if !self.order_dirty {
            return;
        }
        let (mut keyed, mut order) = std::mem::take(&mut self.order_buffers);
        keyed.clear();
        keyed.extend(
            (0..pass.positions())
                .filter(|&i| pass.is_waiting(i))
                .map(|i| (self.key(pass.job(i)), i)),
        );
        keyed.sort_unstable();
        self.last_key = keyed.last().map(|k| k.0);
        order.clear();
        order.extend(keyed.iter().map(|&(_, i)| i));
        order.extend((0..pass.positions()).filter(|&i| !pass.is_waiting(i)));
        pass.reorder(&order);
        self.order_dirty = false;
        self.order_buffers = (keyed, order);
    }

    /// Starts the job at `index`: `by` says which loop, `backfilled` whether it jumped ahead
    /// of a job that could not start.
    fn start(&mut self, pass: &mut Pass<'_>, index: usize, backfilled: bool, by: StartedBy) {
        let (id, submit) = (pass.job(index).id, pass.job(index).submit);
        pass.start(index, backfilled);
        self.note_start(pass, id, submit, by);
    }

    /// The bookkeeping of a job `pass` just started (by loop `by`): its wait, its partition's
    /// and QOS's counts, the running profile.
    fn note_start(&mut self, pass: &Pass<'_>, id: JobId, submit: Time, by: StartedBy) {
        let now = pass.now();
        let Some(job) = self.pending.get(&id).copied() else {
            return;
        };
        let part = usize::from(job.partition);
        if self.partitions[part].blocked.is_some_and(|(b, _)| b == id) {
            self.set_blocked(part, None, now);
        }
        self.note_held(id, None, now);
        let Some(job) = self.pending.remove(&id) else {
            return;
        };
        let processors = pass.processors();
        let end = now.saturating_add(job.limit);
        self.running_profile
            .get_or_insert_with(|| Profile::new(processors))
            .reserve(now, end, job.processors);
        let wait = (now - submit) as f64;
        let account = self.tree.parent(job.assoc).unwrap_or(AssocTree::ROOT);
        let waits = self.account_waits.entry(account).or_default();
        waits.jobs += 1;
        waits.wait_sum += wait;
        let partition = &mut self.partitions[part];
        partition.waits.jobs += 1;
        partition.waits.wait_sum += wait;
        partition.used += job.processors;
        if let Some(cap) = partition.config.processors {
            partition
                .running_profile
                .get_or_insert_with(|| Profile::new(cap))
                .reserve(now, end, job.processors);
        }
        let qos = &mut self.qos[usize::from(job.qos)];
        qos.waits.jobs += 1;
        qos.waits.wait_sum += wait;
        qos.running_cpus += job.processors;
        qos.running_tres = qos.running_tres.plus(job.tres);
        if !self.simple {
            let user = self.qos_users.entry((job.qos, job.user)).or_default();
            user.running += 1;
            user.tres = user.tres.plus(job.tres);
        }
        let at_start = AtStart {
            priority: job.priority,
            factors: job.factors,
            account_group: self.account_groups.get(&account).copied(),
            account_named: self.named.get(&account).copied(),
            waited_for_resources: job.resources,
            waited_for_limits: job.limit_held,
            partition: job.partition,
            qos: job.qos,
            waited: now - job.submit,
            started_by: by,
        };
        self.running.insert(
            id,
            Running {
                assoc: job.assoc,
                tres: job.tres,
                rate: job.rate,
                start: now,
                processors: job.processors,
                limit: job.limit,
                at_start,
                partition: job.partition,
                qos: job.qos,
                user: job.user,
                array_task: job.array_task,
            },
        );
        if job.array_task.is_some() {
            *self.array_running.entry(job.array_task.array).or_default() += 1;
            if let Some(tasks) = self.array_pending.get_mut(&job.array_task.array) {
                tasks.remove(&job.array_task.task);
                if tasks.is_empty() {
                    // every task started: the array no longer has a place in the queue
                    self.array_pending.remove(&job.array_task.array);
                    self.array_first.remove(&job.array_task.array);
                }
            }
        }
    }

    /// The main loop stopped at `job` in `partition` (`None`: it stopped at none) at `now`:
    /// the job it stopped at there before, if another, stops counting its wait as
    /// `Resources`.
    fn set_blocked(&mut self, partition: usize, job: Option<JobId>, now: Time) {
        let blocked = &mut self.partitions[partition].blocked;
        if blocked.map(|b| b.0) == job {
            return;
        }
        let previous = blocked.take();
        *blocked = job.map(|j| (j, now));
        if let Some((previous, since)) = previous
            && let Some(p) = self.pending.get_mut(&previous)
        {
            p.resources += now - since;
        }
    }

    /// The main loop (`_schedule`): jobs in priority order start while they fit; the first
    /// that does not blocks its partition (its later jobs are passed over); a job a QOS limit
    /// holds is passed over.
    ///
    /// On a machine of node types a job fits where its nodes hold it ([`Pass::fits`]), and a
    /// partition blocked by a job that does not fit also takes its nodes away from the jobs
    /// after it in every partition (`job_scheduler.c:_schedule`, on `fail_by_part`: "Do not
    /// schedule more jobs in this partition or on nodes in this partition",
    /// `bit_and_not(avail_node_bitmap, part_ptr->node_bitmap)`; squeue's reason for them is
    /// then `Resources` or `Priority`), so partitions over the same nodes block each other.
    fn main_loop(&mut self, pass: &mut Pass<'_>, run: MainRun) {
        let now = pass.now();
        self.put_in_order(pass);
        let depth = match run {
            MainRun::Event => self.config.default_queue_depth as usize + 1,
            MainRun::Full => usize::MAX,
        };
        let parts = self.partitions.len();
        let mut stopped_at: Vec<Option<JobId>> = vec![None; parts];
        let mut open = parts;
        let mut from = 0;
        let mut examined = 0;
        let mut reached_depth = false;
        let on_nodes = self.nodes.is_some() && pass.has_pool();
        // the nodes of the partitions blocked so far (on a machine of node types)
        let mut avoid: Vec<bool> = Vec::new();
        let mut mask: Option<cluster::NodeMask> = None;
        while let Some(index) = pass.next_waiting(from) {
            examined += 1;
            if examined > depth {
                reached_depth = true;
                break;
            }
            from = index + 1;
            let (id, processors) = (pass.job(index).id, pass.job(index).processors);
            if self.simple {
                if !pass.fits_now(processors)
                    || ((pass.has_pool() || pass.has_machine_extra()) && !pass.fits(index))
                {
                    stopped_at[0] = Some(id);
                    break;
                }
                self.start(pass, index, false, StartedBy::Main);
                self.note_backfill_change(now);
                continue;
            }
            let Some(job) = self.pending.get(&id).copied() else {
                continue;
            };
            let part = usize::from(job.partition);
            if stopped_at[part].is_some() {
                continue; // its partition is blocked
            }
            if self.behind_in_array(&job) {
                continue;
            }
            let held = self.limited(&job);
            self.note_held(id, held, now);
            if held.is_some() {
                continue;
            }
            let fits = if on_nodes {
                match &mask {
                    Some(mask) => pass.fits_masked(index, mask),
                    None => pass.fits(index),
                }
            } else {
                pass.fits_now(processors)
                    && self.partition_has_room(&job)
                    && (!pass.has_machine_extra() || pass.fits(index))
            };
            if !fits {
                stopped_at[part] = Some(id);
                open -= 1;
                if open == 0 {
                    break;
                }
                if let Some(nodes) = self.nodes.as_ref().filter(|_| on_nodes) {
                    if avoid.is_empty() {
                        avoid = vec![false; nodes.count];
                    }
                    for &n in nodes
                        .partition_nodes
                        .get(part)
                        .map_or(&[][..], Vec::as_slice)
                    {
                        if let Some(a) = avoid.get_mut(n as usize) {
                            *a = true;
                        }
                    }
                    mask = pass.node_mask(&avoid);
                }
                continue;
            }
            match mask.as_mut() {
                Some(mask) => {
                    let submit = pass.job(index).submit;
                    pass.start_masked(index, false, mask);
                    self.note_start(pass, id, submit, StartedBy::Main);
                }
                None => self.start(pass, index, false, StartedBy::Main),
            }
            self.note_backfill_change(now);
        }
        if !reached_depth {
            for (part, stopped) in stopped_at.into_iter().enumerate() {
                self.set_blocked(part, stopped, now);
            }
        }
        self.last_main = Some(now);
        self.main_changed = false;
    }

    /// One backfill cycle (`_attempt_backfill`), in processor counts.
    ///
    /// A cycle whose state is that of the previous one (the same running jobs, queue positions
    /// and priorities; only jobs appended since) goes on from where that one stopped, with its
    /// plan, if every job it planned keeps its plan at the new `now` ([`Carried::holds`]):
    /// planning those jobs anew would give the same reservations, so only the appended jobs
    /// and those after the last stop are tested. Starts are those of a cycle made anew.
    fn backfill(&mut self, pass: &mut Pass<'_>) {
        if self.nodes.is_some() && pass.has_pool() {
            self.backfill_nodes(pass);
            return;
        }
        let now = pass.now();
        self.backfill_changed = false;
        self.next_backfill = now + self.config.bf_interval;
        // A cycle in which no waiting job fits in the free processors starts nothing, and its
        // reservations are made anew at the next cycle: skip its work.
        let free = pass.free_processors();
        if self.shortcuts && pass.smallest_waiting().is_none_or(|p| p > free) {
            return;
        }
        self.put_in_order(pass);
        let processors = pass.processors();
        let mut profile = self.plan.take().unwrap_or_else(|| Profile::new(processors));
        let mut carried = std::mem::take(&mut self.carried);
        let state = (pass.version(), self.priority_changes);
        // outages change the plan without a change of the state: it is made anew
        let outages = pass.outage_holds().next().is_some();
        if !outages && self.can_carry() && carried.holds(state, now, &self.config) {
            profile.advance(now);
        } else {
            carried.planned.clear();
            carried.resume = 0;
            carried.blocked = false;
            match &self.running_profile {
                Some(running) => profile.copy_from(running),
                None => profile = Profile::new(processors),
            }
            profile.advance(now);
            self.reserve_overrunning(&mut profile, now);
            // drained processors for ever, maintenance windows over their span (backfill.c
            // plans without down or drained nodes, and around reservations)
            for (from, to, held) in pass.outage_holds() {
                profile.reserve(from, to, held);
            }
        }
        // the partitions smaller than the machine plan on their own processors too
        for part in &mut self.partitions {
            if let Some(cap) = part.config.processors {
                let mut plan = part.plan.take().unwrap_or_else(|| Profile::new(cap));
                match &part.running_profile {
                    Some(running) => plan.copy_from(running),
                    None => plan = Profile::new(cap),
                }
                plan.advance(now);
                part.plan = Some(plan);
            }
        }
        let mut tested = u32::try_from(carried.planned.len()).unwrap_or(u32::MAX);
        let mut per_user: HashMap<i64, u32> = HashMap::default();
        let mut per_partition = vec![0u32; self.partitions.len()];
        let mut blocked = carried.blocked;
        let mut from = carried.resume;
        let mut stopped_at = None;
        // Stop once no remaining job could start now: their reservations would start nothing,
        // as the plan is made anew at every cycle. A job can start now only if its processors
        // are free from now until its time limit in the plan so far (the queue's prediction
        // is the user estimate, at most the limit). The plan only fills up during the cycle
        // and positions only grow: one narrowing scan; its staircase of free processors is
        // remade only when it is searched (an older one is looser, so still safe); a job found
        // by it answers again while it waits, lies ahead and still passes.
        let mut scan = cluster::CandidateScan::default();
        let mut candidate: Option<usize> = None;
        let mut staircase = std::mem::take(&mut self.staircase);
        let mut staircase_stale = true;
        let mut bounds = std::mem::take(&mut self.start_bounds);
        bounds.clear();
        while let Some(index) = pass.next_waiting(from) {
            if tested >= self.config.bf_max_job_test {
                stopped_at = Some(index);
                break;
            }
            let free = i64::from(pass.free_processors());
            let could_start = |processors: u32, limit: Time, staircase: &[(Time, i64)]| {
                let processors = i64::from(processors);
                processors <= free && processors <= least_free_for(staircase, limit)
            };
            let still = candidate.is_some_and(|c| {
                c >= index
                    && pass.is_waiting(c)
                    && could_start(pass.job(c).processors, pass.prediction(c), &staircase)
            });
            if !still && self.shortcuts {
                if staircase_stale {
                    profile.staircase(now, &mut staircase);
                    staircase_stale = false;
                }
                candidate = pass.any_candidate_narrowing(&mut scan, index, |p, limit| {
                    could_start(p, limit, &staircase)
                });
                if candidate.is_none() {
                    stopped_at = Some(index);
                    break;
                }
            }
            from = index + 1;
            let job = *pass.job(index);
            // a job a QOS limit holds is passed over, and not counted as tested
            let pending = if self.simple {
                None
            } else {
                self.pending.get(&job.id).copied()
            };
            if !self.admit(
                &job,
                pending.as_ref(),
                &mut per_user,
                &mut per_partition,
                now,
            ) {
                continue;
            }
            tested += 1;
            let limit = job.estimate.max(1);
            // its partition's plan, if the partition is smaller than the machine
            let mut own: Option<(usize, Profile)> = pending.and_then(|p| {
                let part = usize::from(p.partition);
                self.partitions[part].plan.take().map(|plan| (part, plan))
            });
            // plans only fill up in a cycle: no earlier than a shape it covers found (on a
            // short plan a scan from now costs less than looking the bound up)
            let plans = own.as_ref().map_or(0, |(part, _)| *part as u32 + 1);
            let use_bounds = self.shortcuts && profile.step_count() >= self.bounds_from_steps;
            let bound = if use_bounds {
                bounds.bound(plans, job.processors, limit)
            } else {
                None
            };
            let scan_from = bound.map_or(now, |b| b.max(now));
            // (where the machine's plan found room, when only it was searched: the
            // reservation's step is found from there)
            let (start, fit) = match &own {
                None => {
                    let fit = profile.fit(scan_from, job.processors, limit);
                    (fit.start, Some(fit))
                }
                Some((_, plan)) => (
                    earliest_in_both(&profile, plan, scan_from, job.processors, limit),
                    None,
                ),
            };
            if use_bounds && start > scan_from {
                // (a start at the bound or at now bounds nothing further)
                bounds.record(plans, job.processors, limit, start);
            }
            debug_assert!(pass.prediction(index) <= limit);
            let room = pending.is_none_or(|p| self.partition_has_room(&p));
            if start <= now
                && pass.fits_now(job.processors)
                && room
                && (!pass.has_machine_extra() || pass.fits(index))
            {
                staircase_stale = true;
                profile.reserve(now, now + limit, job.processors);
                if let Some((part, mut plan)) = own.take() {
                    plan.reserve(now, now + limit, job.processors);
                    self.partitions[part].plan = Some(plan);
                }
                self.start(pass, index, blocked, StartedBy::Backfill);
                continue;
            }
            blocked = true;
            let below = self.config.bf_min_prio_reserve > 0
                && self.pending.get(&job.id).map_or(1, |p| p.priority)
                    < self.config.bf_min_prio_reserve;
            let grid = self.on_grid(now, start, limit, below);
            let resolution = self.config.bf_resolution;
            let reservation = grid.map(|grid| grid_reservation(now, grid, resolution));
            carried.planned.push(Planned {
                start,
                below,
                reservation: grid.zip(reservation.map(|r| r.1)),
            });
            if let Some((begin, end)) = reservation {
                staircase_stale = true;
                match fit {
                    Some(fit) => profile.reserve_before(fit, begin, end, job.processors),
                    None => profile.reserve(begin, end, job.processors),
                }
                if let Some((_, plan)) = own.as_mut() {
                    plan.reserve(begin, end, job.processors);
                }
            }
            if let Some((part, plan)) = own {
                self.partitions[part].plan = Some(plan);
            }
        }
        carried.resume = stopped_at.unwrap_or(from);
        carried.blocked = blocked;
        carried.state = Some((pass.version(), self.priority_changes));
        self.carried = carried;
        self.plan = Some(profile);
        self.staircase = staircase;
        self.start_bounds = bounds;
    }

    /// One backfill cycle on a machine of node types (`_attempt_backfill` with its node-space
    /// map; see [`cluster::NodePlan`]). Jobs in priority order, with the same limits as
    /// [`SlurmRule::backfill`] (`bf_max_job_test`, `bf_max_job_user`, `bf_max_job_part`, QOS
    /// limits passed over); each starts now if it fits now on nodes no reservation of the cycle
    /// takes before its time limit ends (held in the plan until then), or else reserves,
    /// within `bf_window` and unless below `bf_min_prio_reserve`, the nodes it would get at
    /// its earliest start, whole, from that start rounded down to `bf_resolution` to its end
    /// rounded up. Running jobs end in the plan at start + time limit (a job past it, allowed
    /// by `OverTimeLimit`, after the overtime and `KillWait`, as `_guess_job_end` says). No
    /// shortcut: every cycle is made anew.
    fn backfill_nodes(&mut self, pass: &mut Pass<'_>) {
        let now = pass.now();
        self.backfill_changed = false;
        self.next_backfill = now + self.config.bf_interval;
        if pass.waiting() == 0 {
            return;
        }
        self.put_in_order(pass);
        let over = self.config.over_time_limit;
        let Some(mut plan) = pass.node_plan(|limit_end| {
            if over > 0 && limit_end <= now {
                limit_end.saturating_add(over).saturating_add(KILL_WAIT)
            } else {
                limit_end
            }
        }) else {
            return;
        };
        let until = now.saturating_add(self.config.bf_window);
        let mut tested = 0u32;
        let mut per_user: HashMap<i64, u32> = HashMap::default();
        let mut per_partition = vec![0u32; self.partitions.len()];
        let mut blocked = false;
        let mut from = 0;
        while let Some(index) = pass.next_waiting(from) {
            if tested >= self.config.bf_max_job_test {
                break;
            }
            from = index + 1;
            let job = *pass.job(index);
            let Some(pending) = self.pending.get(&job.id).copied() else {
                continue;
            };
            if !self.admit(&job, Some(&pending), &mut per_user, &mut per_partition, now) {
                continue;
            }
            tested += 1;
            let limit = job.estimate.max(1);
            match pass.plan_earliest(&plan, index, limit, until) {
                Some((start, _)) if start <= now => {
                    if pass.plan_start(&mut plan, index, limit, blocked) {
                        self.note_start(pass, job.id, job.submit, StartedBy::Backfill);
                        continue;
                    }
                    blocked = true;
                }
                Some((start, nodes)) => {
                    blocked = true;
                    let below = self.config.bf_min_prio_reserve > 0
                        && pending.priority < self.config.bf_min_prio_reserve;
                    if let Some(grid) = self.on_grid(now, start, limit, below) {
                        let (begin, end) = grid_reservation(now, grid, self.config.bf_resolution);
                        plan.reserve_nodes(job.id, &nodes, begin, end);
                    }
                }
                None => blocked = true,
            }
        }
    }

    /// Whether a backfill cycle tests `job` (`pending`: the model's record of it, `None` in the
    /// simple case): not if a QOS limit holds it (noted), nor past `bf_max_job_user` jobs of
    /// its user or `bf_max_job_part` of its partition tested so far in the cycle (counted in
    /// `per_user` and `per_partition` when it is tested).
    fn admit(
        &mut self,
        job: &JobRequest,
        pending: Option<&Pending>,
        per_user: &mut HashMap<i64, u32>,
        per_partition: &mut [u32],
        now: Time,
    ) -> bool {
        if let Some(p) = pending {
            if self.behind_in_array(p) {
                return false;
            }
            let held = self.limited(p);
            self.note_held(job.id, held, now);
            if held.is_some() {
                return false;
            }
        }
        if self.config.bf_max_job_user > 0 {
            let seen = per_user.entry(job.user).or_insert(0);
            if *seen >= self.config.bf_max_job_user {
                return false;
            }
            *seen += 1;
        }
        if self.config.bf_max_job_part > 0 {
            let part = pending.map_or(0, |p| usize::from(p.partition));
            if per_partition[part] >= self.config.bf_max_job_part {
                return false;
            }
            per_partition[part] += 1;
        }
        true
    }

    /// Whether a cycle may go on from the previous one's plan at all: not with
    /// `OverTimeLimit` (jobs past their limit are planned from `now`) nor with
    /// `bf_max_job_user` (a job started in the previous cycle no longer counts against its
    /// user, so a job it skipped may now be tested).
    fn can_carry(&self) -> bool {
        self.shortcuts
            && self.simple
            && self.config.over_time_limit == 0
            && self.config.bf_max_job_user == 0
            && self.config.bf_max_job_part == 0
    }

    /// Jobs past their time limit (allowed by `OverTimeLimit`) are expected to end after their
    /// limit, the overtime and `KillWait` (`_guess_job_end`). Without overtime a job ends at
    /// its limit, before any pass at that instant.
    fn reserve_overrunning(&self, profile: &mut Profile, now: Time) {
        if self.config.over_time_limit == 0 {
            return;
        }
        for r in self.running.values() {
            let limit_end = r.start.saturating_add(r.limit);
            if limit_end <= now {
                let end = limit_end
                    .saturating_add(self.config.over_time_limit)
                    .saturating_add(KILL_WAIT)
                    .max(now + 1);
                profile.reserve(now, end, r.processors);
            }
        }
    }

    /// The reservation backfill makes at `now` for a job whose earliest start is `start`,
    /// on the `bf_resolution` grid: none beyond `bf_window` or below `bf_min_prio_reserve`
    /// (`below`), else its start rounded down and its end (`start + limit`) rounded up
    /// (made a reservation by [`grid_reservation`]).
    fn on_grid(&self, now: Time, start: Time, limit: Time, below: bool) -> Option<(Time, Time)> {
        if start > now.saturating_add(self.config.bf_window) || below {
            return None; // an estimate only, no reservation
        }
        let resolution = self.config.bf_resolution;
        Some((
            start.div_euclid(resolution) * resolution,
            start
                .saturating_add(limit)
                .saturating_add(resolution - 1)
                .div_euclid(resolution)
                * resolution,
        ))
    }
}

/// The earliest start from `now` at which `processors` are free for `duration` in both
/// `machine` and `partition` (each profile's earliest fit from the other's, until they agree).
fn earliest_in_both(
    machine: &Profile,
    partition: &Profile,
    now: Time,
    processors: u32,
    duration: Time,
) -> Time {
    let mut t = machine.earliest_fit(now, processors, duration);
    loop {
        let in_partition = partition.earliest_fit(t, processors, duration);
        if in_partition == t {
            return t;
        }
        let in_machine = machine.earliest_fit(in_partition, processors, duration);
        if in_machine == in_partition {
            return in_machine;
        }
        t = in_machine;
    }
}

/// The steps a backfill cycle's plan holds at least before a test looks up where an earlier
/// test of the same shape found room ([`cluster::StartBounds`]): below it a scan from now
/// crosses fewer steps than the look-up costs (SDSC-BLUE under `slurm-site`, where plans are
/// short, cost 0.46e9 instructions more with the look-up at every test).
const BOUNDS_FROM_STEPS: usize = 32;

/// A reservation from its start and end on the grid: from `now` at the earliest, at least
/// one grid step (`resolution`) long.
fn grid_reservation(now: Time, (start, end): (Time, Time), resolution: Time) -> (Time, Time) {
    let begin = start.max(now);
    (begin, end.max(begin + resolution))
}

/// A job a backfill cycle tested and could not start: what its plan was.
#[derive(Debug, Clone, Copy)]
struct Planned {
    /// Its earliest start in the plan.
    start: Time,
    /// Whether its priority was below `bf_min_prio_reserve`.
    below: bool,
    /// Its reservation's start and end on the `bf_resolution` grid, and the end the
    /// reservation had (`None`: no reservation).
    reservation: Option<((Time, Time), Time)>,
}

/// What the last backfill cycle planned, for the next one to go on from.
#[derive(Debug, Clone, Default)]
struct Carried {
    /// The state the plan was made for: the cluster's version after the cycle and the rule's
    /// count of priority changes.
    state: Option<(cluster::StateVersion, u64)>,
    /// The jobs tested and not started, in order.
    planned: Vec<Planned>,
    /// The queue position the cycle stopped at.
    resume: usize,
    /// Whether a tested job could not start (later starts are backfilled).
    blocked: bool,
}

impl Carried {
    /// Whether a cycle at `now` seeing `state` would plan the same as the carried plan: the
    /// same state, and every planned job still starts at or after `now` (its earliest start
    /// from `now` is then the same) with the same reservation (the part of an old
    /// reservation before `now` is cut by the plan's advance, as a new one would begin at
    /// `now`). Priorities are the same, so `bf_min_prio_reserve` decides as before.
    fn holds(&self, state: (cluster::StateVersion, u64), now: Time, config: &SlurmConfig) -> bool {
        let window_end = now.saturating_add(config.bf_window);
        self.state == Some(state)
            && self.planned.iter().all(|p| {
                p.start >= now
                    && match p.reservation {
                        None => p.below || p.start > window_end,
                        Some((grid, end)) => {
                            p.start <= window_end
                                && grid_reservation(now, grid, config.bf_resolution).1 == end
                        }
                    }
            })
    }
}

/// The usage a running job adds between the last calculation (or its start) and `now`
/// (`_apply_new_usage`): `Δt · d^Δt · CPUs`.
fn charge(d: f64, last_calc: Option<Time>, start: Time, now: Time, rate: f64) -> f64 {
    let from = last_calc.map_or(start, |last| last.max(start));
    let delta = (now - from).max(0) as f64;
    delta * d.powf(delta) * rate
}

impl Backfill for SlurmRule {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn schedules_nodes(&self) -> bool {
        true
    }

    /// Keeps each partition's nodes (matched by name) and the kinds of memory and GPUs; the
    /// model then schedules on nodes and its partitions are node sets (no processor count of
    /// their own), and every job goes to the partition of its own name.
    fn node_machine(&mut self, spec: &cluster::PoolSpec) {
        let mut machine = NodeMachine {
            partition_nodes: vec![Vec::new(); self.partitions.len()],
            count: spec.nodes.len(),
            memory_kind: spec.memory_kind,
            gpu_kind: spec.gpu_kind,
            gpu_types: spec.gpu_types.clone(),
            ..NodeMachine::default()
        };
        let totals = |nodes: &[u32]| {
            let (mut cpus, mut memory, mut gpus) = (0u64, 0u64, 0u64);
            for &n in nodes {
                if let Some(&(_, ty)) = spec.nodes.get(n as usize)
                    && let Some(t) = spec.types.get(usize::from(ty))
                {
                    cpus += u64::from(t.capacity.cpus);
                    memory += u64::from(t.capacity.memory);
                    gpus += u64::from(t.capacity.gpus);
                }
            }
            Tres::new(cpus, memory, nodes.len() as u64).with_gres("gpu", gpus)
        };
        let every: Vec<u32> = (0..spec.nodes.len() as u32).collect();
        for p in &spec.partitions {
            if let Some(i) = self.partitions.iter().position(|s| s.config.name == p.name) {
                let i = u16::try_from(i).unwrap_or(0);
                machine.partition_nodes[usize::from(i)] = p.nodes.clone();
                machine.by_number.insert(p.number, i);
            }
        }
        machine.partition_tres = (machine.partition_nodes.iter())
            .map(|nodes| totals(if nodes.is_empty() { &every } else { nodes }))
            .collect();
        // the machine's default partition: the first marked default, else the first
        let default = (spec.partitions.iter().position(|p| p.default)).unwrap_or(0);
        machine.default =
            (spec.partitions.get(default)).and_then(|p| machine.by_number.get(&p.number).copied());
        for part in &mut self.partitions {
            part.config.processors = None;
        }
        self.nodes = Some(machine);
        self.simple = false;
    }

    fn machine(&mut self, processors: u32) {
        self.machine = processors;
    }

    /// A job its partition or QOS will never allow ([`NeverStarts`]) is held for good: its
    /// user's association exists as for any submission, it is counted by reason, partition and
    /// QOS, and it neither enters the queue nor takes a `MaxSubmitJobsPerUser` slot (in Slurm
    /// it would hold one for ever, and the user's submissions past the limit would be
    /// refused; here they run).
    fn hold_for_good(&mut self, job: &JobRequest) -> bool {
        if self.simple {
            return false; // one partition of the whole machine, no QOS limit
        }
        let (partition, reason) = self.route(job);
        let qos = self.qos_of(job);
        let reason = reason.or_else(|| self.over_qos(qos, self.tres_of(job)));
        let Some(reason) = reason else {
            return false;
        };
        self.arrive(job);
        self.partitions[usize::from(partition)].never_started += 1;
        self.qos[usize::from(qos)].never_started += 1;
        self.never.push((job.id, reason));
        true
    }

    fn submitted(&mut self, job: &JobRequest) {
        let now = job.submit;
        let assoc = self.arrive(job);
        let (partition, _) = self.route(job);
        let qos = self.qos_of(job);
        // MaxSubmitJobsPerUser: past it, the job waits for one of the user's jobs to end
        let submit_held = match self.qos[usize::from(qos)].config.max_submit_per_user {
            Some(max) => {
                let user = self.qos_users.entry((qos, job.user)).or_default();
                if user.admitted >= max {
                    user.held.push_back(job.id);
                    true
                } else {
                    user.admitted += 1;
                    false
                }
            }
            None => false,
        };
        let (tres_factor, rate) = self.billing_of(job, partition);
        let mut pending = Pending {
            assoc,
            tres: self.tres_of(job),
            tres_factor,
            rate,
            submit: job.submit,
            processors: job.processors,
            limit: job.estimate.max(1),
            accrue: None,
            priority: 1,
            factors: Factors::default(),
            resources: 0,
            partition,
            qos,
            user: job.user,
            limit_held: 0,
            held_since: submit_held.then_some(now),
            submit_held,
            array_task: job.array_task,
        };
        if job.array_task.is_some() {
            // the loops test limits (and an array's task order) only when the model is not in
            // its simple case
            self.simple = false;
            self.array_pending
                .entry(job.array_task.array)
                .or_default()
                .insert(job.array_task.task);
            self.array_first
                .entry(job.array_task.array)
                .or_insert(job.id);
        }
        // the priority computed at submit has no age yet; from then on the age counts from
        // the eligible time, the submission
        self.fresh_fair_share();
        pending.factors = self.factors(&pending, now);
        pending.priority = priority::priority(&self.config, &pending.factors);
        pending.accrue = Some(job.submit);
        self.pending.insert(job.id, pending);
        // the cluster queues it last: still in order if it sorts last
        let key = self.key(job);
        if self.last_key.is_some_and(|last| key < last) {
            self.order_dirty = true;
        }
        if !self.order_dirty {
            self.last_key = Some(key);
        }
        // sbatch jobs wait for the next event run (`batch_sched_delay` after the previous run)
        let at = self.last_main.map_or(now + 1, |last| {
            (now + 1).max(last + self.config.batch_sched_delay)
        });
        self.event_run = Some(self.event_run.map_or(at, |e| e.min(at)));
        self.main_changed = true;
        self.note_backfill_change(now);
    }

    fn follows_start_delays(&self) -> bool {
        true
    }

    /// A power cap's watts are tested at every start of the main loop and of backfilling (a
    /// job starts only while they fit), but the backfill plan holds processors (and nodes)
    /// only: a job reserved a start may find the watts taken then.
    fn tests_extra_at_starts(&self) -> bool {
        true
    }

    /// Outages: a drain begun or ended is an administrator's `scontrol update node`, whose RPC
    /// asks the scheduler to run soon (`queue_job_scheduler`), which the background loop does
    /// once `batch_sched_delay` has passed since its last run (`controller.c`). The model runs
    /// the main loop `batch_sched_delay` after the change: a real Slurm 22.05 started the jobs
    /// waiting for a resumed node 3 s (its `batch_sched_delay`) after the resume in each of
    /// three captures (tests/fixtures/slurm-outages and the script's first run). A maintenance window's start or end asks nothing: the
    /// periodic main loop and the next backfill cycle find it (the same Slurm started the jobs
    /// waiting for a reservation's end 8 to 26 s after it).
    fn outages_changed(&mut self, now: Time, requested: bool) {
        self.catch_up(now);
        if requested {
            let at = now + self.config.batch_sched_delay;
            self.event_run = Some(self.event_run.map_or(at, |e| e.min(at)));
        }
        self.main_changed = true;
        self.note_backfill_change(now);
    }

    /// A capacity that grew (a power cap's schedule) runs the main loop at once, as an end
    /// does.
    fn capacity_changed(&mut self, now: Time) {
        self.catch_up(now);
        self.event_run = Some(self.event_run.map_or(now, |e| e.min(now)));
        self.main_changed = true;
        self.note_backfill_change(now);
    }

    /// A job whose nodes boot runs from its delayed start: its start (so its usage, charged
    /// from the start) and its planned end move, as slurmctld resets a powered-up job's start
    /// and end times (`job_config_fini`, `job_mgr.c`).
    fn start_delayed(&mut self, id: JobId, by: Time) {
        let Some(r) = self.running.get_mut(&id) else {
            return;
        };
        let end = r.start.saturating_add(r.limit);
        r.start = r.start.saturating_add(by);
        let (processors, partition) = (r.processors, usize::from(r.partition));
        if let Some(profile) = self.running_profile.as_mut() {
            profile.reserve(end, end.saturating_add(by), processors);
        }
        if let Some(profile) = self.partitions[partition].running_profile.as_mut() {
            profile.reserve(end, end.saturating_add(by), processors);
        }
    }

    fn finished(&mut self, job: &Ended, now: Time) {
        self.catch_up(now);
        if let Some(r) = self.running.remove(&job.id) {
            if self.delivered.len() <= r.assoc {
                self.delivered.resize(r.assoc + 1, 0.0);
            }
            self.delivered[r.assoc] += (now - r.start) as f64 * f64::from(r.processors);
            if self.config.enforce_limits && self.tracks_usage() {
                self.fresh_fair_share();
                let d = self.config.decay_per_second();
                let amount = charge(d, self.last_calc, r.start, now, r.rate);
                let factor = self.qos[usize::from(r.qos)].config.usage_factor;
                self.tree.charge(r.assoc, amount * factor);
            }
            let end = r.start.saturating_add(r.limit);
            if let Some(profile) = self.running_profile.as_mut() {
                profile.release(now, end, r.processors);
                profile.advance(now);
            }
            let part = &mut self.partitions[usize::from(r.partition)];
            part.used = part.used.saturating_sub(r.processors);
            if let Some(profile) = part.running_profile.as_mut() {
                profile.release(now, end, r.processors);
                profile.advance(now);
            }
            if r.array_task.is_some()
                && let Some(running) = self.array_running.get_mut(&r.array_task.array)
            {
                *running = running.saturating_sub(1);
                if *running == 0 {
                    self.array_running.remove(&r.array_task.array);
                }
            }
            let qos = &mut self.qos[usize::from(r.qos)];
            qos.running_cpus = qos.running_cpus.saturating_sub(r.processors);
            qos.running_tres = qos.running_tres.minus(r.tres);
            if !self.simple
                && let Some(user) = self.qos_users.get_mut(&(r.qos, r.user))
            {
                user.running = user.running.saturating_sub(1);
                user.tres = user.tres.minus(r.tres);
                if qos.config.max_submit_per_user.is_some() {
                    // its slot goes to the user's next held job, as if submitted again now
                    match user.held.pop_front() {
                        Some(next) => {
                            if let Some(p) = self.pending.get_mut(&next) {
                                p.submit_held = false;
                                if let Some(since) = p.held_since.take() {
                                    p.limit_held += now - since;
                                }
                            }
                        }
                        None => user.admitted = user.admitted.saturating_sub(1),
                    }
                }
            }
        }
        // a job's end runs the main loop at once
        self.event_run = Some(now);
        self.main_changed = true;
        self.note_backfill_change(now);
    }

    fn schedule(&mut self, pass: &mut Pass<'_>) {
        let now = pass.now();
        self.last_pass = now;
        if self.machine == 0 {
            self.machine = pass.processors();
        }
        let Some(origin) = self.origin else {
            return; // nothing submitted yet
        };
        self.catch_up(now);
        if now >= self.next_calc {
            self.calculate(now);
            let period = self.config.calc_period;
            let ticks = (now - origin).div_euclid(period) + 1;
            self.next_calc = origin + ticks * period;
        }
        let full = self.periodic_due(now);
        let event = self.event_run.is_some_and(|t| t <= now);
        if full || event {
            self.event_run = None;
            if self.main_changed || event {
                let run = if full { MainRun::Full } else { MainRun::Event };
                self.main_loop(pass, run);
            }
        }
        if self.backfill_changed && now >= self.next_backfill && !self.pending.is_empty() {
            self.backfill(pass);
        }
    }

    fn next_wakeup(&self) -> Option<Time> {
        if self.origin.is_none() || (self.pending.is_empty() && self.running.is_empty()) {
            return None;
        }
        let mut next = if self.ticks_are_silent() {
            Time::MAX
        } else {
            self.next_calc
        };
        if let Some(event) = self.event_run {
            next = next.min(event);
        }
        if !self.pending.is_empty() {
            if self.main_changed {
                next = next.min(self.next_full);
            }
            if self.backfill_changed {
                next = next.min(self.next_backfill);
            }
        }
        (next < Time::MAX).then(|| next.max(self.last_pass.saturating_add(1)))
    }

    fn overrun_allowed(&self) -> Time {
        self.config.over_time_limit
    }

    fn orders_queue_itself(&self) -> bool {
        true
    }

    fn counts_processors(&self) -> bool {
        true
    }

    fn skips_started_positions(&self) -> bool {
        true
    }

    fn annotation(&self, id: JobId) -> Option<Annotation> {
        self.at_start(id).map(|at| at.annotation())
    }

    fn columns(&self) -> Option<Arc<dyn Columns>> {
        Some(Arc::new(SlurmColumns::new(&self.config)))
    }

    fn keep_samples(&mut self) {
        self.sample_shares(self.config.shares_every);
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

#[cfg(test)]
mod node_tests;
#[cfg(test)]
mod tests;
