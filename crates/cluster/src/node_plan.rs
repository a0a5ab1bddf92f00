//! Slurm's backfill plan on a machine of node types ([`crate::pool`]): what each node has free
//! now, when running jobs give their shares back, and which nodes backfill has reserved whole
//! for which time windows. The Slurm model ([`crate::Backfill`] in the `slurm-model` crate)
//! makes one at each backfill cycle ([`crate::Pass::node_plan`]) and asks it for a job's
//! earliest start ([`crate::Pass::plan_earliest`]), starts jobs within it
//! ([`crate::Pass::plan_start`]) and reserves nodes in it ([`crate::Pass::plan_reserve`]).
//!
//! It follows Slurm's `src/plugins/sched/backfill/backfill.c` (`_attempt_backfill`, Slurm
//! 26.05): the cycle's `node_space` map holds, per time slot, the *bitmap* of nodes available;
//! a job reserved for a later start takes its nodes out of every slot its window covers
//! (`_add_reservation` clears them from `avail_bitmap`): whole nodes, whatever share of them the
//! job would hold. Running jobs are not in that map: the select plugin's will-run test
//! (`select_g_job_test` with `SELECT_MODE_WILL_RUN`, cons_tres's `_will_run_test`) removes
//! them one by one in order of their end (start + time limit) until the job fits, node by
//! node and share by share. So here: a node's free amounts at time `t` are what it has free now
//! plus the shares of the running jobs that end by `t`; a node is usable for a window only if
//! no backfill reservation on it overlaps the window.
//!
//! Free amounts only grow as running jobs end, so what a node has free through a window
//! `[t, t + limit)` is what it has at `t`; only reservations can take a node away later in the
//! window, and they take it whole. The earliest start is searched at the instants something
//! changes: now, each running job's end, each reservation's end.

use crate::Time;
use crate::pool::Amounts;

/// The plan of one backfill cycle (see the module).
#[derive(Debug, Clone, Default)]
pub struct NodePlan {
    /// The instant it was made, seconds.
    pub(crate) now: Time,
    /// What each node has free now (less what jobs started in this cycle hold).
    pub(crate) free: Vec<Amounts>,
    /// When each share of a running job comes back: (end, node, share), by end. Ends are
    /// after `now`.
    pub(crate) releases: Vec<(Time, u32, Amounts)>,
    /// Each node's whole-node reservations, `[begin, end)`, seconds.
    pub(crate) reserved: Vec<Vec<(Time, Time)>>,
}

impl NodePlan {
    /// A plan at `now` of nodes with `free` amounts, whose running jobs give back `releases`
    /// ((end, node, share), in any order; an end at or before `now` counts as `now + 1`).
    pub(crate) fn new(
        now: Time,
        free: Vec<Amounts>,
        mut releases: Vec<(Time, u32, Amounts)>,
    ) -> NodePlan {
        for r in &mut releases {
            r.0 = r.0.max(now.saturating_add(1));
        }
        releases.sort_unstable_by_key(|r| (r.0, r.1));
        let reserved = vec![Vec::new(); free.len()];
        NodePlan {
            now,
            free,
            releases,
            reserved,
        }
    }

    /// The instant the plan was made, seconds.
    pub fn now(&self) -> Time {
        self.now
    }

    /// Whether node `n` is reserved for some part of `[begin, end)`.
    pub(crate) fn is_reserved(&self, n: u32, begin: Time, end: Time) -> bool {
        self.reserved
            .get(n as usize)
            .is_some_and(|r| r.iter().any(|&(b, e)| b < end && begin < e))
    }

    /// The instants at which a job's earliest start is tested, from `now` up to `until`, in
    /// order: now, each release, each reservation's end.
    pub(crate) fn instants(&self, until: Time) -> Vec<Time> {
        let mut times: Vec<Time> = std::iter::once(self.now)
            .chain(self.releases.iter().map(|r| r.0))
            .chain(self.reserved.iter().flatten().map(|r| r.1))
            .filter(|&t| t >= self.now && t <= until)
            .collect();
        times.sort_unstable();
        times.dedup();
        times
    }

    /// Takes node `n` out of the plan for `[begin, end)` (a backfill reservation).
    pub(crate) fn reserve(&mut self, n: u32, begin: Time, end: Time) {
        if let Some(r) = self.reserved.get_mut(n as usize)
            && begin < end
        {
            r.push((begin, end));
        }
    }

    /// Takes `nodes` out of the plan for `[begin, end)`: a backfill reservation, whole nodes
    /// (`_add_reservation`).
    pub fn reserve_nodes(&mut self, nodes: &[u32], begin: Time, end: Time) {
        for &n in nodes {
            self.reserve(n, begin, end);
        }
    }

    /// A job started now holds `share` of node `n` until `end`.
    pub(crate) fn hold(&mut self, n: u32, share: Amounts, end: Time) {
        let n_index = n as usize;
        if let Some(free) = self.free.get_mut(n_index) {
            *free = free.minus(&share);
        }
        let end = end.max(self.now.saturating_add(1));
        let at = self.releases.partition_point(|r| (r.0, r.1) <= (end, n));
        self.releases.insert(at, (end, n, share));
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
    fn releases_come_after_now_in_order_and_reservations_block_windows() {
        let mut plan = NodePlan::new(10, vec![a(1), a(2)], vec![(30, 1, a(2)), (5, 0, a(3))]);
        assert_eq!(plan.releases, vec![(11, 0, a(3)), (30, 1, a(2))]);
        plan.reserve(1, 40, 60);
        assert!(plan.is_reserved(1, 50, 70));
        assert!(plan.is_reserved(1, 0, 41));
        assert!(!plan.is_reserved(1, 60, 70));
        assert!(!plan.is_reserved(0, 40, 60));
        assert_eq!(plan.instants(100), vec![10, 11, 30, 60]);
        assert_eq!(plan.instants(30), vec![10, 11, 30]);
        plan.hold(0, a(1), 20);
        assert_eq!(plan.free[0], a(0));
        assert_eq!(plan.releases[1], (20, 0, a(1)));
    }
}
