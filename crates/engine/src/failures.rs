//! Node failures over one run: a model the engine asks at its instants ([`Failures`]), and
//! what the engine does with its answer. A failure kills the running jobs it strikes at once
//! (Slurm's `NODE_FAIL`) and takes processors out of service until their repair
//! ([`cluster::Cluster::set_failed`]). A killed job is requeued, entering the queue again
//! `requeue_delay` seconds later (Slurm's `JobRequeue=1`, its default: `begin_time = now +
//! requeue_delay + 1` in `_job_requeue_op`, `src/slurmctld/job_mgr.c`, the delay being
//! `SchedulerParameters=requeue_delay` or the credential's lifetime, 120 s), or lost: its record
//! ends at the failure ([`metrics::Failed`]).

use cluster::{Cluster, JobId};

use crate::Time;

/// Node failures over one run, as a model of its own state (its random draws are its own, so
/// the same seed gives the same failures under every scheduler; only whom they strike
/// differs). The engine asks it at every instant it names.
pub trait Failures: Send {
    /// The next instant, after the last one applied, at which a node fails or comes back from
    /// repair, seconds.
    fn next_change(&self) -> Option<Time>;

    /// Applies what happens at `now` ([`Failures::next_change`]) to the machine as `cluster`
    /// holds it (its running jobs, [`Cluster::running_jobs`]; what is in service): the running
    /// jobs the failures strike, and the processors down from `now` on.
    fn apply(&mut self, now: Time, cluster: &Cluster) -> FailureStep;

    /// Seconds after its failure at which a killed job enters the queue again, or `None`: a
    /// killed job is lost.
    fn requeue_delay(&self) -> Option<Time>;
}

/// What [`Failures::apply`] decided at one instant.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FailureStep {
    /// The running jobs killed now, each once.
    pub killed: Vec<JobId>,
    /// Processors down from now on (every node under repair).
    pub down: u32,
    /// On a machine of node types, the nodes down from now on (every node under repair),
    /// ascending; empty on other machines.
    pub down_nodes: Vec<u32>,
}
