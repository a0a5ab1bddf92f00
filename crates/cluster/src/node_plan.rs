//! A plan of a machine of node types ([`crate::pool`]) over time: what each node has free now,
//! when running jobs give their shares back, and what waiting jobs have reserved on which nodes
//! for which windows. Slurm's model makes one at each backfill cycle and conservative
//! backfilling at each pass ([`crate::Pass::node_plan`]); they ask it for a job's earliest
//! start ([`crate::Pass::plan_earliest`]), start jobs within it ([`crate::Pass::plan_start`])
//! and reserve in it ([`NodePlan::reserve_nodes`], [`crate::Pass::plan_reserve_shares`]).
//!
//! Slurm's backfill (`src/plugins/sched/backfill/backfill.c`, `_attempt_backfill`, Slurm
//! 26.05) keeps, per time slot, the *bitmap* of nodes available: a job reserved for a later
//! start takes its nodes out of every slot its window covers (`_add_reservation` clears them
//! from `avail_bitmap`), whole, whatever share of them it would hold; its model reserves a
//! node's whole capacity ([`NodePlan::reserve_nodes`]). Running jobs are not in that map: the
//! select plugin's will-run test (`select_g_job_test` with `SELECT_MODE_WILL_RUN`, cons_tres's
//! `_will_run_test`) removes them in order of their end (start + time limit) until the job
//! fits, node by node and share by share. Conservative backfilling reserves each job's shares
//! only.
//!
//! So a node's free amounts at time `t` are what it has free now plus the shares of the running
//! jobs that end by `t`, less what reservations active at `t` take; what it offers a job through
//! a window `[t, t + limit)` is the least of that over the window. Free amounts only grow as
//! running jobs end, so the least is at `t` or where a reservation begins within the window.
//! The earliest start is searched at the instants something changes: now, each running job's
//! end, each reservation's end.

use crate::pool::Amounts;
use crate::{JobId, Time};

/// One reservation on one node: `[begin, end)`, the amounts it takes, and whose it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Held {
    begin: Time,
    end: Time,
    amounts: Amounts,
    job: JobId,
}

/// The holder of a maintenance window's reservation in a plan ([`NodePlan::close_node`]): no
/// job's number.
const WINDOW: JobId = JobId(u32::MAX);

/// The plan (see the module).
#[derive(Debug, Clone, Default)]
pub struct NodePlan {
    /// The instant it was made, seconds.
    pub(crate) now: Time,
    /// What each node has.
    capacity: Vec<Amounts>,
    /// What each node has free now (less what jobs started since it was made hold).
    pub(crate) free: Vec<Amounts>,
    /// When each share of a running job comes back: (end, node, share), by end; ends are
    /// after `now`.
    pub(crate) releases: Vec<(Time, u32, Amounts)>,
    /// The same, by node: (end, share), by end.
    node_releases: Vec<Vec<(Time, Amounts)>>,
    /// Each node's reservations.
    reserved: Vec<Vec<Held>>,
}

impl NodePlan {
    /// A plan at `now` of nodes with `capacity` and `free` amounts, whose running jobs give
    /// back `releases` ((end, node, share), in any order; an end at or before `now` counts as
    /// `now + 1`).
    pub(crate) fn new(
        now: Time,
        capacity: Vec<Amounts>,
        free: Vec<Amounts>,
        releases: Vec<(Time, u32, Amounts)>,
    ) -> NodePlan {
        let mut plan = NodePlan {
            now,
            reserved: vec![Vec::new(); free.len()],
            node_releases: vec![Vec::new(); free.len()],
            capacity,
            free,
            releases: Vec::with_capacity(releases.len()),
        };
        for (end, n, share) in releases {
            plan.add_release(end, n, share);
        }
        plan
    }

    /// The instant the plan was made, seconds.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Notes that `share` of node `n` comes back at `end` (at least a second from now).
    fn add_release(&mut self, end: Time, n: u32, share: Amounts) {
        let end = end.max(self.now.saturating_add(1));
        let at = self.releases.partition_point(|r| (r.0, r.1) <= (end, n));
        self.releases.insert(at, (end, n, share));
        if let Some(list) = self.node_releases.get_mut(n as usize) {
            let at = list.partition_point(|r| r.0 <= end);
            list.insert(at, (end, share));
        }
    }

    /// What node `n` has free at `t` beyond the running jobs (no reservation counted).
    fn free_at(&self, n: u32, t: Time) -> Amounts {
        let n = n as usize;
        let mut free = self.free[n];
        for &(end, share) in &self.node_releases[n] {
            if end > t {
                break;
            }
            free = free.plus(&share);
        }
        free
    }

    /// What the reservations on node `n` active at `t` take.
    fn reserved_at(&self, n: u32, t: Time) -> Amounts {
        self.reserved[n as usize]
            .iter()
            .filter(|h| h.begin <= t && t < h.end)
            .fold(Amounts::default(), |sum, h| sum.plus(&h.amounts))
    }

    /// What node `n` offers a job through `[t, end)`, given `free_t`, what it has free at `t`
    /// beyond the running jobs: the least over the window of what is free less what
    /// reservations take.
    pub(crate) fn available(&self, n: u32, t: Time, end: Time, free_t: Amounts) -> Amounts {
        let mut least = free_t.minus(&self.reserved_at(n, t));
        for h in &self.reserved[n as usize] {
            if h.begin > t && h.begin < end {
                let then = self
                    .free_at(n, h.begin)
                    .minus(&self.reserved_at(n, h.begin));
                least = Amounts {
                    cpus: least.cpus.min(then.cpus),
                    memory: least.memory.min(then.memory),
                    gpus: least.gpus.min(then.gpus),
                };
            }
        }
        least
    }

    /// Whether node `n` has a reservation for some part of `[begin, end)`.
    pub(crate) fn is_reserved(&self, n: u32, begin: Time, end: Time) -> bool {
        self.reserved
            .get(n as usize)
            .is_some_and(|r| r.iter().any(|h| h.begin < end && begin < h.end))
    }

    /// The instants at which a job's earliest start is tested, from `now` up to `until`, in
    /// order: now, each release, each reservation's end.
    pub(crate) fn instants(&self, until: Time) -> Vec<Time> {
        let mut times: Vec<Time> = std::iter::once(self.now)
            .chain(self.releases.iter().map(|r| r.0))
            .chain(self.reserved.iter().flatten().map(|h| h.end))
            .filter(|&t| t >= self.now && t <= until)
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }

    /// Reserves `amounts` of node `n` for job `job` through `[begin, end)`.
    pub(crate) fn reserve(&mut self, job: JobId, n: u32, amounts: Amounts, begin: Time, end: Time) {
        if let Some(r) = self.reserved.get_mut(n as usize)
            && begin < end
        {
            r.push(Held {
                begin,
                end,
                amounts,
                job,
            });
        }
    }

    /// Takes node `n` out of the plan for `[begin, end)`, whole, for no job: a maintenance
    /// window on it ([`crate::NodeWindow`]).
    pub(crate) fn close_node(&mut self, n: u32, begin: Time, end: Time) {
        if let Some(&whole) = self.capacity.get(n as usize) {
            self.reserve(WINDOW, n, whole, begin, end);
        }
    }

    /// Takes `nodes` out of the plan for `[begin, end)` for job `job`, whole: a Slurm backfill
    /// reservation (`_add_reservation`).
    pub fn reserve_nodes(&mut self, job: JobId, nodes: &[u32], begin: Time, end: Time) {
        for &n in nodes {
            let whole = self.capacity[n as usize];
            self.reserve(job, n, whole, begin, end);
        }
    }

    /// Drops job `job`'s reservations.
    pub fn unreserve(&mut self, job: JobId) {
        for r in &mut self.reserved {
            r.retain(|h| h.job != job);
        }
    }

    /// A job started now holds `share` of node `n` until `end`.
    pub(crate) fn hold(&mut self, n: u32, share: Amounts, end: Time) {
        if let Some(free) = self.free.get_mut(n as usize) {
            *free = free.minus(&share);
        }
        self.add_release(end, n, share);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(cpus: u32) -> Amounts {
        Amounts {
            cpus,
            memory: 0,
            gpus: 0,
        }
    }

    #[test]
    fn releases_come_after_now_and_reservations_take_their_amounts_in_their_window() {
        let capacity = vec![a(4), a(4)];
        let mut plan = NodePlan::new(
            10,
            capacity,
            vec![a(1), a(2)],
            vec![(30, 1, a(2)), (5, 0, a(3))],
        );
        assert_eq!(plan.releases, vec![(11, 0, a(3)), (30, 1, a(2))]);
        assert_eq!(plan.free_at(1, 29), a(2));
        assert_eq!(plan.free_at(1, 30), a(4));
        // node 1: 3 reserved over [40, 60): a window reaching into it gets the least
        plan.reserve(JobId(7), 1, a(3), 40, 60);
        assert_eq!(plan.available(1, 30, 41, a(4)), a(1));
        assert_eq!(plan.available(1, 30, 40, a(4)), a(4));
        assert_eq!(plan.available(1, 10, 20, a(2)), a(2));
        assert!(plan.is_reserved(1, 50, 70) && !plan.is_reserved(1, 60, 70));
        assert_eq!(plan.instants(100), vec![10, 11, 30, 60]);
        assert_eq!(plan.instants(30), vec![10, 11, 30]);
        // a whole-node reservation leaves nothing in its window
        plan.reserve_nodes(JobId(8), &[0], 50, 80);
        assert_eq!(plan.available(0, 45, 55, a(4)), a(0));
        plan.unreserve(JobId(8));
        assert_eq!(plan.available(0, 45, 55, a(4)), a(4));
        plan.hold(0, a(1), 20);
        assert_eq!(plan.free[0], a(0));
        assert_eq!(plan.releases[1], (20, 0, a(1)));
        assert_eq!(plan.free_at(0, 19), a(3));
        assert_eq!(plan.free_at(0, 20), a(4));
    }
}
