//! Backfilling rules: how waiting jobs may start, and jump ahead of the queue order.
//!
//! A rule is a [`Backfill`]: at every scheduling pass the cluster lends it a [`Pass`] (the
//! queue, already sorted or sortable in the scheduler's order, the running jobs and the
//! machine) and the rule starts jobs through it. A rule owns whatever state it keeps between
//! passes (EASY's last reservation, conservative backfilling's profile and reservations, dynP's
//! current policy and usage), so the cluster holds only what every rule shares. A new rule is
//! one module here plus one entry in [`crate::policy::POLICIES`].
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
mod none;

pub use conservative::Conservative;
pub use dynp::DynPRule;
pub use easy::{BackfillOrder, Easy};
pub use none::NoBackfill;

use std::fmt::Debug;

pub use crate::cluster::Pass;
use crate::dynp::PolicyUsage;
use crate::{JobId, JobRequest, Reservation, Time};

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

    /// A job entered the waiting queue (it is already in it).
    fn submitted(&mut self, _job: &JobRequest) {}

    /// A running job ended at `now` (seconds), possibly before its estimate; its processors are
    /// already free.
    fn finished(&mut self, _job: &Ended, _now: Time) {}

    /// Whether the rule may plan with runtime predictions ([`crate::Predictor`]). Only EASY
    /// does: the reservations of the other rules hold only because user estimates are upper
    /// bounds, so the cluster gives them user estimates whatever the scheduler asks.
    fn uses_predictions(&self) -> bool {
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

    /// Whether the rule searches the queue with [`Pass::next_waiting`],
    /// [`Pass::next_candidate`] or [`Pass::start_head`]: the cluster then brings the queue's
    /// index up to date before each pass (O(queue) after a compaction or sort). Rules that
    /// only visit positions in order (conservative backfilling, dynP) return false and never
    /// pay for it; the searches still answer correctly without the index, by walking.
    fn searches_queue(&self) -> bool {
        true
    }

    /// Whether the rule plans with processor counts only, so it cannot run on a machine of
    /// nodes with First Continuous selection (which needs consecutive processors).
    fn counts_processors(&self) -> bool {
        false
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
        profile.release(
            now,
            self.start.saturating_add(self.estimate.max(1)),
            self.processors,
        );
    }
}

/// How long a job holds its processors in a profile: its estimate, and at least one second so
/// that jobs estimated at zero seconds still need their processors at the instant they start.
pub(crate) fn held(job: &JobRequest) -> Time {
    job.estimate.max(1)
}
