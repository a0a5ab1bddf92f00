//! One scheduling pass as a backfilling rule sees it: the waiting queue, the running jobs and
//! the machine at one instant, and the one way to change them (start a waiting job).

use std::ops::Range;

use super::outages::Outages;
use super::{CandidateScan, Queued, Running, RunningJob, Started, StateVersion, WaitingQueue};
use crate::node_plan::NodePlan;
use crate::nodes::NodeMap;
use crate::order::QueueOrder;
use crate::pool::{Amounts, Demand, NodePool, NodeShadow, PartitionSet, Release};
use crate::{Extra, JobRequest, Resources, Time};

/// The cluster during one [`crate::Cluster::schedule`] call, lent to the backfilling rule
/// ([`crate::Backfill::schedule`]).
///
/// Queue positions (`index`) are stable during the pass: a job started by [`Pass::start`]
/// stays at its position (and counts in [`Pass::positions`]) as a tombstone. A rule whose
/// [`crate::Backfill::skips_started_positions`] is false sees a queue without tombstones at the
/// start of every pass, so positions `0..positions()` are its waiting jobs; a rule that skips
/// them (EASY, FCFS) walks the queue with [`Pass::next_waiting`] and [`Pass::next_candidate`].
/// In search mode (a CREASY queue under a rule whose [`crate::Backfill::searches_in_order`]),
/// positions are in arrival order, not in priority order: such a rule reaches the priority
/// order through [`Pass::start_head`] and [`Pass::next_in_order`] only. Times are seconds.
#[derive(Debug)]
pub struct Pass<'a> {
    pub(super) now: Time,
    pub(super) processors: u32,
    pub(super) free: &'a mut u32,
    /// The machine's other resources ([`Extra::NONE`]: processors only).
    pub(super) extra: Extra,
    pub(super) free_extra: &'a mut Extra,
    pub(super) queue: &'a mut WaitingQueue,
    pub(super) history: &'a crate::predict::History,
    pub(super) running: &'a mut Running,
    pub(super) started: &'a mut Vec<Started>,
    pub(super) nodes: Option<&'a mut NodeMap>,
    pub(super) pool: Option<&'a mut NodePool>,
    pub(super) order: &'a dyn QueueOrder,
    /// Seconds a started job may run past its estimate ([`crate::Backfill::overrun_allowed`]).
    pub(super) overrun: Time,
    /// Processors out of service ([`crate::Cluster::with_windows`], [`crate::Cluster::set_drained`]).
    pub(super) outages: &'a Outages,
}

impl Pass<'_> {
    /// The instant of the pass, seconds.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The machine's processor count.
    pub fn processors(&self) -> u32 {
        self.processors
    }

    /// Processors not allocated to a running job (jobs started in this pass hold theirs).
    pub fn free_processors(&self) -> u32 {
        *self.free
    }

    /// Whether the machine has resources besides processors ([`crate::Cluster::with_extra`]):
    /// then a job fits only if each of them fits too, and a rule must test them
    /// ([`Pass::fits`], [`Pass::shadow_resources`]); without them the processor tests decide.
    pub fn has_extra(&self) -> bool {
        !self.extra.is_none() || self.pool.is_some() || self.outages.any()
    }

    /// Whether the machine has machine-wide resources besides processors (not counting a
    /// machine of node types' own): a power cap's watts ([`crate::Cluster::with_guard`]); or
    /// outages, which a start must respect too. Then [`Pass::fits`] decides.
    pub fn has_machine_extra(&self) -> bool {
        !self.extra.is_none() || self.outages.any()
    }

    /// What a plan of the machine must hold from now on besides the running jobs, as
    /// `(from, to, processors)`: the processors drained now for ever (Slurm's backfilling never
    /// expects a drained node back) and each maintenance window over what is left of it.
    pub fn outage_holds(&self) -> impl Iterator<Item = (Time, Time, u32)> + '_ {
        self.outages.holds(self.now)
    }

    /// Processors of the running jobs that may still run at `t` by their limits (start +
    /// estimate + the overrun the rule allows).
    fn load_at(&self, t: Time) -> u32 {
        self.running
            .jobs
            .values()
            .filter(|j| {
                j.start
                    .saturating_add(j.estimate)
                    .saturating_add(self.overrun)
                    > t
            })
            .map(|j| j.processors)
            .sum()
    }

    /// Whether a job of `processors` with `estimate` may start now as far as the maintenance
    /// windows go ([`crate::Cluster::with_windows`]).
    fn outside_windows(&self, processors: u32, estimate: Time) -> bool {
        if self.outages.windows.is_empty() {
            return true;
        }
        let kill = self
            .now
            .saturating_add(estimate)
            .saturating_add(self.overrun);
        self.outages
            .allows(self.processors, self.now, processors, kill, |t| {
                self.load_at(t)
            })
    }

    /// On a machine of node types: whether the run has maintenance windows on nodes at all
    /// (to come, in force or past; [`crate::Cluster::with_node_windows`]): then whether a job
    /// fits on the nodes depends on how long it may run, so alike requests do not fit alike.
    pub(crate) fn keeps_node_windows(&self) -> bool {
        self.pool.is_some() && !self.outages.node_windows.is_empty()
    }

    /// The nodes closed to `job` if it started now: those of the node windows its run, by its
    /// estimate and the overrun the rule allows, reaches into (empty: none).
    fn closed_to(&self, job: &JobRequest) -> Vec<u32> {
        if self.pool.is_none() || self.outages.node_windows.is_empty() {
            return Vec::new();
        }
        let kill = self
            .now
            .saturating_add(job.estimate)
            .saturating_add(self.overrun);
        self.outages.closed_nodes(self.now, kill)
    }

    /// A view of the nodes now in which `closed` offer nothing.
    fn closed_view(&self, closed: &[u32]) -> NodeShadow {
        NodeShadow::view(
            self.now,
            self.free_resources(),
            closed.iter().map(|&n| (n, Amounts::default())).collect(),
        )
    }

    /// Whether the machine is one of node types ([`crate::Cluster::with_pool`]): then a job
    /// fits only where its nodes hold it ([`Pass::fits`]), and EASY plans on nodes.
    pub fn has_pool(&self) -> bool {
        self.pool.is_some()
    }

    /// The resources not held by a running job.
    pub fn free_resources(&self) -> Resources {
        Resources {
            processors: *self.free,
            extra: *self.free_extra,
        }
    }

    /// Whether the job at queue position `index` could start now: [`Pass::fits_now`] for its
    /// processors and enough of every other resource.
    pub fn fits(&self, index: usize) -> bool {
        self.fits_as(index, None)
    }

    /// On a machine of node types: EASY's shadow of the waiting job at `index` (see
    /// [`NodePool`]): when it fits on nodes as the running jobs end by their predictions, the
    /// nodes it would get and what is left beyond it. A job that never fits so (nodes out of
    /// service that no plan counts on, windows over every run it could have) gets a shadow
    /// that reserves nothing, at the end of time: every job that fits now may start, as
    /// Slurm's backfilling goes on past a job it cannot plan (and as EASY does on counted
    /// processors). `None` on other machines.
    pub(crate) fn node_shadow(&self, index: usize) -> Option<NodeShadow> {
        let pool = self.pool.as_ref()?;
        let never = || NodeShadow::view(Time::MAX, self.free_resources(), Vec::new());
        Some(self.planned_node_shadow(pool, index).unwrap_or_else(never))
    }

    /// [`Pass::node_shadow`] of a job that fits on the nodes some time (`None`: never).
    fn planned_node_shadow(&self, pool: &NodePool, index: usize) -> Option<NodeShadow> {
        let job = self.queue.get(index).job;
        let releases = self
            .running
            .by_expected_end
            .iter()
            .map(|(&(end, id), &release)| (end, id, release));
        if self.outages.node_windows_after(self.now) {
            // around the windows: its run, by estimate and overrun, on no node of one
            let duration = job.estimate.saturating_add(self.overrun).max(1);
            return pool.shadow_around_windows(
                job.id,
                job.resources(),
                self.free_resources(),
                releases,
                self.now,
                &self.outages.returning,
                self.outages.node_windows.iter().map(|w| w.to),
                |n, t| {
                    self.outages
                        .node_closed_over(n, t, t.saturating_add(duration))
                },
            );
        }
        pool.shadow(job.id, job.resources(), self.free_resources(), releases)
    }

    /// On a machine of node types: whether the only changes since a pass that ended with the
    /// cluster at `since` were ends of jobs that leave the shadow of the waiting job at
    /// `index` as it was ([`NodePool::end_leaves_shadow`]); if so, the partitions whose nodes
    /// those jobs held (what a scan must look at again).
    pub(crate) fn quiet_ends(&self, index: usize, since: StateVersion) -> Option<PartitionSet> {
        let pool = self.pool.as_ref()?;
        let ended = &self.running.ended;
        if self.keeps_node_windows() || self.running.changes != since.running + ended.len() as u64 {
            return None;
        }
        let job = &self.queue.get(index).job;
        let needed = job.resources();
        let mut touched = PartitionSet::default();
        for (_, release) in ended {
            if !pool.end_leaves_shadow(job.id, &needed, release) {
                return None;
            }
            touched = touched.union(release.partitions);
        }
        Some(touched)
    }

    /// Carries a shadow worked out before the ends [`Pass::quiet_ends`] accepted past them: it
    /// is then the shadow [`Pass::node_shadow`] would work out now.
    pub(crate) fn carry_node_shadow(&self, shadow: &mut NodeShadow) {
        if let Some(pool) = self.pool.as_ref() {
            for (expected, release) in &self.running.ended {
                pool.carry_past_end(shadow, *expected, release);
            }
        }
    }

    /// Whether the waiting job at `index` asks only for kinds the nodes hold (see
    /// [`NodePool::on_nodes_only`]); `false` off a machine of node types.
    pub(crate) fn on_nodes_only(&self, index: usize) -> bool {
        self.pool
            .as_ref()
            .is_some_and(|p| p.on_nodes_only(&self.queue.get(index).job.extra))
    }

    /// On a machine of node types: the free tree of the waiting job at `index`'s partition,
    /// what it needs on one node, and whether it takes whole nodes (see
    /// [`NodePool::need_of`]). `None` on other machines.
    pub(crate) fn node_need(&self, index: usize) -> Option<(u32, Amounts, bool)> {
        self.pool.as_ref()?.need_of(self.queue.get(index).job.id)
    }

    /// On a machine of node types: the most free on one node of free tree `tree`'s nodes, or
    /// for `whole`, the most an idle node has, amount by amount, for a need of no GPU and for a
    /// need of GPUs (see [`NodePool::most_free_of`]). Nothing on other machines.
    pub(crate) fn node_most_free(&self, tree: u32, whole: bool) -> (Amounts, Amounts) {
        self.pool
            .as_ref()
            .map_or(Default::default(), |p| p.most_free_of(tree, whole))
    }

    /// How many times waiting jobs moved to other positions (the queue's half of
    /// [`Pass::version`]): positions hold while it stays the same.
    pub(crate) fn queue_moves(&self) -> u64 {
        self.queue.moves()
    }

    /// [`Pass::fits`] for the waiting job at `index` whose demand on the nodes the caller
    /// keeps ([`Pass::node_demand`]; `None`: look it up).
    pub(crate) fn fits_as(&self, index: usize, demand: Option<&Demand>) -> bool {
        let job = &self.queue.get(index).job;
        if !(self.fits_now(job.processors)
            && (!self.has_extra() || job.extra.fits_in(self.free_extra))
            && self.outside_windows(job.processors, job.estimate))
        {
            return false;
        }
        let Some(pool) = self.pool.as_ref() else {
            return true;
        };
        let closed = self.closed_to(job);
        if !closed.is_empty() {
            let view = self.closed_view(&closed);
            return match demand {
                Some(demand) => pool.fits_demand_within(demand, &view),
                None => pool.fits_within(job.id, &view),
            };
        }
        match demand {
            Some(demand) => pool.fits_demand(demand),
            None => pool.fits(job.id),
        }
    }

    /// [`Pass::fits_within`] for the waiting job at `index` whose demand the caller keeps.
    pub(crate) fn fits_within_as(
        &self,
        index: usize,
        shadow: &NodeShadow,
        demand: Option<&Demand>,
    ) -> bool {
        let job = &self.queue.get(index).job;
        if !(self.fits_as(index, demand) && job.resources().fits_in(&shadow.extra)) {
            return false;
        }
        let Some(pool) = self.pool.as_ref() else {
            return false;
        };
        let closed = self.closed_to(job);
        let merged;
        let shadow = if closed.is_empty() {
            shadow
        } else {
            merged = shadow.closing(&closed);
            &merged
        };
        match demand {
            Some(demand) => pool.fits_demand_within(demand, shadow),
            None => pool.fits_within(job.id, shadow),
        }
    }

    /// On a machine of node types: the waiting job at `index`'s demand on the nodes (alike
    /// requests have one), for [`Pass::fits_as`].
    pub(crate) fn node_demand(&self, index: usize) -> Option<Demand> {
        self.pool
            .as_ref()?
            .demand(self.queue.get(index).job.id)
            .copied()
    }

    /// Whether the waiting job at `index`, which outlives `shadow`'s time, fits now within
    /// what is left then beyond the reserved job, machine-wide and on every node.
    pub(crate) fn fits_within(&self, index: usize, shadow: &NodeShadow) -> bool {
        self.fits_within_as(index, shadow, None)
    }

    /// On a machine of node types: the nodes `avoid` marks taken out of what the jobs
    /// tested against it may use ([`Pass::fits_masked`], [`Pass::start_masked`]): the Slurm
    /// model's main loop takes the nodes of a partition whose job it could not start away from
    /// the jobs after it. `None` on other machines.
    pub fn node_mask(&self, avoid: &[bool]) -> Option<NodeMask> {
        let pool = self.pool.as_ref()?;
        let taken = (0..pool.capacity().len() as u32)
            .filter(|&n| avoid.get(n as usize).copied().unwrap_or(false))
            .map(|n| (n, Amounts::default()))
            .collect();
        Some(NodeMask(NodeShadow::view(
            self.now,
            self.free_resources(),
            taken,
        )))
    }

    /// Whether the waiting job at `index` fits now ([`Pass::fits`]) on nodes `mask` leaves.
    pub fn fits_masked(&self, index: usize, mask: &NodeMask) -> bool {
        self.fits_within(index, &mask.0)
    }

    /// Starts the waiting job at `index` on nodes `mask` leaves; the caller checked
    /// [`Pass::fits_masked`].
    pub fn start_masked(&mut self, index: usize, backfilled: bool, mask: &mut NodeMask) {
        self.start_placed(index, backfilled, None, Some(&mut mask.0));
        mask.0.extra = self.free_resources();
    }

    /// On a machine of node types: Slurm's backfill plan now ([`NodePlan`]): the nodes' free
    /// amounts, and each running job's shares given back at `end_of(start + estimate)` (the
    /// Slurm model's expected end of a job by its time limit; an end not after now counts as
    /// a second from now). `None` on other machines.
    pub fn node_plan(&self, end_of: impl Fn(Time) -> Time) -> Option<NodePlan> {
        let pool = self.pool.as_ref()?;
        let mut releases = Vec::new();
        for (id, job) in &self.running.jobs {
            let end = end_of(job.start.saturating_add(job.estimate));
            // A node out of service gives nothing back: no plan counts on it coming back; but
            // one out for a maintenance window alone, at the window's end.
            for &(n, share) in pool.allocation(*id).unwrap_or_default() {
                if !pool.is_out_of_service(n) {
                    releases.push((end, n, share));
                } else if let Some(back) = self.outages.returns_at(n) {
                    releases.push((end.max(back), n, share));
                }
            }
        }
        for &(n, back) in &self.outages.returning {
            releases.push((back, n, pool.parked_of(n)));
        }
        let mut plan = NodePlan::new(
            self.now,
            pool.capacity().to_vec(),
            pool.free().to_vec(),
            releases,
        );
        // each maintenance window on nodes over what is left of it (backfill.c plans around
        // reservations)
        for w in self.outages.node_windows.iter().filter(|w| w.to > self.now) {
            for &n in &w.nodes {
                plan.close_node(n, w.from.max(self.now), w.to);
            }
        }
        Some(plan)
    }

    /// The earliest instant from now, at most `until`, at which the waiting job at `index`
    /// fits in `plan` for `limit` seconds (each node offering what it has free then less what
    /// the plan's reservations take within that window; whole nodes only where none is
    /// reserved), and the nodes it would get. Now only if it also fits now machine-wide
    /// ([`Pass::fits`]). `None` if it does not fit by `until` (or on other machines).
    pub fn plan_earliest(
        &self,
        plan: &NodePlan,
        index: usize,
        limit: Time,
        until: Time,
    ) -> Option<(Time, Vec<u32>)> {
        let pool = self.pool.as_ref()?;
        let job = &self.queue.get(index).job;
        let demand = *pool.demand(job.id)?;
        let capacity = pool.capacity();
        let mut free = plan.free.clone();
        let mut released = 0;
        let mut nodes = Vec::with_capacity(demand.nodes() as usize);
        for t in plan.instants(until) {
            while let Some(&(end, n, share)) = plan.releases.get(released)
                && end <= t
            {
                free[n as usize] = free[n as usize].plus(&share);
                released += 1;
            }
            if t == self.now && !self.fits(index) {
                continue;
            }
            let end = t.saturating_add(limit.max(1));
            let found = pool.choose_by_scan(
                &demand,
                |n| plan.available(n, t, end, free[n as usize]),
                |n| free[n as usize] == capacity[n as usize] && !plan.is_reserved(n, t, end),
                &mut nodes,
            );
            if found {
                return Some((t, nodes));
            }
        }
        None
    }

    /// Starts the waiting job at `index` now, for `limit` seconds, within what `plan` leaves
    /// on each node through that window, if it fits there ([`Pass::fits`] and the plan), and
    /// notes what it holds in the plan until `now + limit`. Whether it started.
    pub fn plan_start(
        &mut self,
        plan: &mut NodePlan,
        index: usize,
        limit: Time,
        backfilled: bool,
    ) -> bool {
        let Some(pool) = self.pool.as_ref() else {
            return false;
        };
        let end = self.now.saturating_add(limit.max(1));
        // the nodes a reservation of the plan touches within the window offer what it leaves
        // them (and are not whole); every other node what it has free now
        let reserved = (0..pool.capacity().len() as u32)
            .filter(|&n| plan.is_reserved(n, self.now, end))
            .map(|n| (n, plan.available(n, self.now, end, plan.free[n as usize])))
            .collect();
        let mut view = NodeShadow::view(self.now, self.free_resources(), reserved);
        if !self.fits_within(index, &view) {
            return false;
        }
        let id = self.queue.get(index).job.id;
        self.start_placed(index, backfilled, None, Some(&mut view));
        let held = self
            .pool
            .as_ref()
            .and_then(|p| p.allocation(id))
            .unwrap_or_default()
            .to_vec();
        for (n, share) in held {
            plan.hold(n, share, end);
        }
        true
    }

    /// Reserves in `plan`, for the waiting job at `index`, what the fit test asks of each of
    /// `nodes` (as [`Pass::plan_earliest`] found them) through `[begin, end)`: the larger share
    /// of each amount on every node (then the job fits there when its time comes, by that same
    /// test, though it will hold the even split), or the whole node for a job that takes whole
    /// nodes.
    pub fn plan_reserve_shares(
        &self,
        plan: &mut NodePlan,
        index: usize,
        nodes: &[u32],
        begin: Time,
        end: Time,
    ) {
        let Some(pool) = self.pool.as_ref() else {
            return;
        };
        let id = self.queue.get(index).job.id;
        let Some(demand) = pool.demand(id) else {
            return;
        };
        let need = demand.per_node();
        for &n in nodes {
            let amounts = if demand.exclusive() {
                pool.capacity()[n as usize]
            } else {
                need
            };
            plan.reserve(id, n, amounts, begin, end);
        }
    }

    /// Queue positions: the waiting jobs and the tombstones of started ones (see [`Pass`]).
    pub fn positions(&self) -> usize {
        self.queue.positions()
    }

    /// The version of the state this pass sees (see [`StateVersion`]); it changes during the
    /// pass as jobs start.
    pub fn version(&self) -> StateVersion {
        StateVersion {
            running: self.running.changes,
            queue: self.queue.moves(),
        }
    }

    /// Jobs waiting now (not started).
    pub fn waiting(&self) -> usize {
        self.queue.waiting()
    }

    /// Whether nothing can start: the queue is empty or no processor is free. Rules that only
    /// start jobs skip such a pass; rules that plan (conservative, dynP) may still plan.
    pub fn nothing_can_start(&self) -> bool {
        self.queue.waiting() == 0 || *self.free == 0
    }

    /// The job at queue position `index` (panics on a position past the queue, like slice
    /// indexing: positions come from `0..positions()`). A started job stays readable.
    pub fn job(&self, index: usize) -> &JobRequest {
        &self.queue.get(index).job
    }

    /// Whether the job at `index` still waits (false for a tombstone).
    pub fn is_waiting(&self, index: usize) -> bool {
        !self.queue.get(index).started
    }

    /// The runtime the scheduler plans with for the job at `index`, seconds: its prediction
    /// (the user estimate unless the scheduler predicts).
    pub fn prediction(&self, index: usize) -> Time {
        self.queue.get(index).prediction
    }

    /// The first position at or after `from` holding a waiting job.
    pub fn next_waiting(&self, from: usize) -> Option<usize> {
        self.queue.next_waiting(from)
    }

    /// The first position at or after `from` holding a waiting job whose (processors,
    /// prediction) passes `test`, without looking at the jobs in between one by one: `test`
    /// is also asked about ranges of positions with their smallest size and shortest
    /// prediction, so it must accept a range whenever it accepts one of its jobs (a test that
    /// asks for "at most" in each argument does). O(log n) per jump when few jobs pass.
    pub fn next_candidate(
        &mut self,
        from: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        self.queue.find(from, test)
    }

    /// [`Pass::next_candidate`] for a scan whose steps only narrow: `from` never decreases and
    /// each `test` accepts no job that an earlier step of the same `scan` rejected (EASY's
    /// "fits in the free processors, and ends by the shadow time or fits in the extra ones"
    /// while free and extra processors shrink as candidates start). The scan remembers what each
    /// step found per size class, so a later step searches again only where a job it found has
    /// started or no longer passes. Start a new [`CandidateScan`] for each such sequence (a
    /// scan that goes back, or outlives a change of positions, starts over by itself).
    pub fn next_candidate_narrowing(
        &mut self,
        scan: &mut CandidateScan,
        from: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        self.queue.find_narrowing(scan, from, test)
    }

    /// Some position at or after `from` holding a waiting job that passes `test`, as a step of
    /// a narrowing `scan` (see [`Pass::next_candidate_narrowing`]), for a caller that needs
    /// to know only whether one exists: a job the scan remembers that still waits and passes
    /// answers at once (the furthest such, so that it answers for longer), else the scan
    /// searches as [`Pass::next_candidate_narrowing`] does.
    pub fn any_candidate_narrowing(
        &mut self,
        scan: &mut CandidateScan,
        from: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        self.queue.find_any_narrowing(scan, from, test)
    }

    /// The first waiting job after the job at position `after` (started or not) in the pass's
    /// queue order that passes `test`, as a step of a narrowing `scan` (the contract of
    /// [`Pass::next_candidate_narrowing`], with `after` never going back). The caller may also
    /// tell that no waiting job at a position before `min_position` passes `test` (EASY's
    /// carried-over scan; 0 when it knows nothing): such positions are not searched.
    ///
    /// On a queue sorted for the pass (or kept in arrival order) this is
    /// [`Pass::next_candidate_narrowing`] from `max(after + 1, min_position)`. In search mode
    /// (CREASY under EASY or no backfilling: [`crate::Backfill::searches_in_order`]) the queue
    /// stays in arrival order and the job is found by a search of the priority order, which
    /// gives the same job; `min_position` is then a position in arrival order.
    pub fn next_in_order(
        &mut self,
        scan: &mut CandidateScan,
        after: usize,
        min_position: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        match self.queue.search() {
            Some(creasy) => self.queue.next_by_priority(
                scan,
                &creasy,
                self.now,
                Some(after),
                min_position,
                test,
            ),
            None => self
                .queue
                .find_narrowing(scan, (after + 1).max(min_position), test),
        }
    }

    /// The fewest processors a waiting job asks for (`None` with no job waiting).
    pub fn smallest_waiting(&mut self) -> Option<u32> {
        self.queue.smallest_waiting()
    }

    /// The jobs started so far in this pass, in start order.
    pub fn started(&self) -> &[Started] {
        self.started
    }

    /// Whether a job of `processors` processors could start now: enough free processors (on a
    /// machine of nodes under First Continuous, a run of them).
    pub fn fits_now(&self, processors: u32) -> bool {
        match &self.nodes {
            None => processors <= *self.free,
            Some(nodes) => nodes.fits(processors, *self.free),
        }
    }

    /// Puts the queue in the scheduler's priority order for this pass: highest priority first,
    /// ties by arrival (submit, then id). Arrival orders are kept sorted as jobs arrive, so
    /// this is free for them. Call it before the first start.
    ///
    /// In search mode (see [`Pass::next_in_order`]) the queue stays in arrival order and
    /// nothing is sorted: [`Pass::start_head`] and [`Pass::next_in_order`] search the priority
    /// order instead. A pass at which the search's bounds do not hold (a job submitted after
    /// `now`) leaves search mode for good: the queue is sorted at this pass and every later one.
    pub fn sort_queue(&mut self) {
        let order = self.order;
        if order.is_arrival_order() {
            return; // `submit` keeps it sorted by arrival
        }
        if order.arrival_order_now() && self.queue.in_arrival_order() {
            return; // every job has the same priority now, and the queue is in arrival order
        }
        if self.queue.search().is_some() {
            if self.queue.search_holds_at(self.now) {
                return;
            }
            self.queue.set_search(None);
        }
        let view = crate::view::View {
            now: self.now,
            machine: Resources {
                processors: self.processors,
                extra: self.extra,
            },
            free: self.free_resources(),
            running: self.running,
            waiting: self.queue.waiting(),
            owners: &std::cell::OnceCell::new(),
            history: self.history,
        };
        self.queue.sort_by_priority(order, &view);
    }

    /// Puts the queue in the order `order` gives (a permutation of `0..positions()`: the job at
    /// position `order[k]` moves to position `k`), for rules that order the queue themselves
    /// (dynP). Later positions refer to the new order.
    pub fn reorder(&mut self, order: &[usize]) {
        self.queue.permute(order);
    }

    /// Starts waiting jobs from the head of the queue while they fit (FCFS's whole rule, and
    /// the start of EASY's). Returns the position of the first waiting job that does not fit
    /// ([`Pass::positions`] if every job started).
    pub fn start_head(&mut self) -> usize {
        if let Some(creasy) = self.queue.search() {
            // The head is the first job of the priority order; then the first after it.
            let mut after = None;
            while let Some(head) = self.queue.head_by_priority(&creasy, self.now, after) {
                if !self.fits(head) {
                    return head;
                }
                self.start(head, false);
                after = Some(head);
            }
            return self.queue.positions();
        }
        let mut from = 0;
        while let Some(head) = self.queue.next_waiting(from) {
            if !self.fits(head) {
                return head;
            }
            self.start(head, false);
            from = head + 1;
        }
        self.queue.positions()
    }

    /// EASY's shadow time and extra processors for a job of `needed` processors: releasing the
    /// running jobs in order of expected end (start + prediction, then id) until enough
    /// processors are free, the release time of the last one and how many processors beyond
    /// `needed` are free then. Counts processors only (First Continuous machines reserve a run of
    /// processors instead).
    pub fn shadow(&self, needed: u32) -> (Time, u32) {
        self.running.shadow(*self.free, needed)
    }

    /// [`Pass::shadow`] for a job holding `needed` on a machine with other resources: releasing
    /// the running jobs in order of expected end until every resource of `needed` is free, the
    /// release time of the last one, and what is free then beyond `needed`.
    pub fn shadow_resources(&self, needed: &Resources) -> (Time, Resources) {
        self.running
            .shadow_resources(self.free_resources(), *needed)
    }

    /// EASY's shadow of the waiting job at `index` ([`Pass::shadow_resources`] for its
    /// resources): on a machine with outages, the earliest instant from which its processors
    /// are free throughout its run (estimate plus overrun), as running jobs end by their
    /// predictions, maintenance windows come and go and drained processors stay out, and what
    /// is free throughout its run then beyond it.
    pub fn shadow_of(&self, index: usize) -> (Time, Resources) {
        let job = self.queue.get(index).job;
        if !self.outages.any() {
            return self.shadow_resources(&job.resources());
        }
        let others = Resources {
            processors: 0,
            extra: job.extra,
        };
        let (earliest, rest) = self.shadow_resources(&others);
        let duration = job.estimate.saturating_add(self.overrun);
        let (time, processors) = self.outages.shadow(
            self.now,
            earliest.max(self.now),
            *self.free,
            job.processors,
            duration,
            self.running.expected_releases(),
        );
        (
            time,
            Resources {
                processors,
                extra: rest.extra,
            },
        )
    }

    /// The running jobs' expected ends (start + prediction) and processors, earliest first.
    pub fn expected_releases(&self) -> impl Iterator<Item = (Time, u32)> + '_ {
        self.running.expected_releases()
    }

    /// On a machine of nodes under First Continuous selection: when a run of `needed`
    /// consecutive processors is expected to be free (by the running jobs' expected ends), and
    /// which run. `None` on other machines.
    pub(crate) fn contiguous_shadow(&self, needed: u32) -> Option<(Time, Range<u32>)> {
        let nodes = self.nodes.as_ref().filter(|n| n.contiguous())?;
        Some(
            nodes.contiguous_shadow(
                self.running
                    .by_expected_end
                    .keys()
                    .map(|&(end, id)| (end, id)),
                needed,
            ),
        )
    }

    /// On a machine of nodes: whether a job of `processors` processors fits now outside the
    /// processors `block`.
    pub(crate) fn fits_avoiding(&self, processors: u32, block: &Range<u32>) -> bool {
        self.nodes
            .as_ref()
            .is_some_and(|n| n.fits_avoiding(processors, block))
    }

    /// Starts the waiting job at queue position `index` now; `backfilled` says it jumped ahead
    /// of a blocked, higher-priority job. The caller checked that it fits
    /// ([`Pass::fits_now`]).
    pub fn start(&mut self, index: usize, backfilled: bool) {
        self.start_placed(index, backfilled, None, None);
    }

    /// Starts the waiting job at `index` (a backfilled job that outlives `shadow`'s time, on a
    /// machine of node types) within what is left then beyond the reserved job, which then
    /// loses what the job holds. The caller checked [`Pass::fits_within`].
    pub(crate) fn start_within(&mut self, index: usize, shadow: &mut NodeShadow) {
        let before = self.running.changes;
        self.start_placed(index, true, None, Some(shadow));
        debug_assert!(self.running.changes > before);
        if let Some(started) = self.started.last()
            && let Some(job) = self.running.jobs.get(&started.id)
        {
            let holds = Resources {
                processors: job.processors,
                extra: job.extra,
            };
            shadow.extra = shadow.extra.minus(&holds);
        }
    }

    /// [`Pass::start`]; on a machine of nodes the job gets its processors by the selection
    /// policy, away from `avoid` (EASY's reserved block under First Continuous).
    pub(crate) fn start_avoiding(
        &mut self,
        index: usize,
        backfilled: bool,
        avoid: Option<Range<u32>>,
    ) {
        self.start_placed(index, backfilled, avoid, None);
    }

    /// [`Pass::start`] away from `avoid` (a First Continuous block) or within `shadow` (what a
    /// machine of node types has left at EASY's shadow time).
    fn start_placed(
        &mut self,
        index: usize,
        backfilled: bool,
        avoid: Option<Range<u32>>,
        shadow: Option<&mut NodeShadow>,
    ) {
        let Queued {
            job, prediction, ..
        } = *self.queue.get(index);
        let now = self.now;
        // the nodes a maintenance window reaching into its run closes to it: a view without them
        let closed = self.closed_to(&job);
        let mut closing = (!closed.is_empty()).then(|| match &shadow {
            Some(s) => s.closing(&closed),
            None => self.closed_view(&closed),
        });
        self.queue.mark_started(index);
        let holds = match (self.pool.as_mut(), closing.as_mut()) {
            (Some(pool), Some(view)) => {
                let holds = pool.allocate(job.id, job.extra, Some(view));
                // the reserved job's nodes keep what they keep in the caller's shadow too
                if let Some(s) = shadow {
                    for (n, share) in pool.allocation(job.id).unwrap_or_default() {
                        s.take_share(*n, share);
                    }
                }
                holds
            }
            (Some(pool), None) => pool.allocate(job.id, job.extra, shadow),
            (None, _) => job.resources(),
        };
        *self.free = self.free.saturating_sub(holds.processors);
        *self.free_extra = self.free_extra.minus(&holds.extra);

        self.running.changes += 1;
        if let Some(nodes) = self.nodes.as_mut() {
            nodes.allocate(job.id, job.processors, avoid.as_ref());
        }
        let kill_time = now
            .saturating_add(job.estimate)
            .saturating_add(self.overrun);
        let running = RunningJob {
            submit: job.submit,
            start: now,
            user: job.user,
            group: job.group,
            processors: holds.processors,
            extra: holds.extra,
            estimate: job.estimate,
            prediction,
            beyond_estimate: 0,
            corrections: 0,
            initial_prediction: prediction,
            corrected: Vec::new(),
        };
        let partitions = self
            .pool
            .as_ref()
            .map_or(PartitionSet::default(), |p| p.partitions_held(job.id));
        self.running.by_expected_end.insert(
            (running.expected_end(), job.id),
            Release { holds, partitions },
        );
        self.running.jobs.insert(job.id, running);
        self.started.push(Started {
            id: job.id,
            start: now,
            kill_time,
            backfilled,
        });
    }
}

/// Nodes taken out of what the jobs tested against it may use ([`Pass::node_mask`]).
#[derive(Debug)]
pub struct NodeMask(NodeShadow);
