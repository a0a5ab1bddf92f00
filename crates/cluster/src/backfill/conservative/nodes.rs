//! Conservative backfilling on a machine of node types ([`crate::pool`]): every waiting job
//! holds a reservation of its shares on the nodes it would get ([`crate::NodePlan`]), and
//! compression re-places each in queue order no later than it was.

use rustc_hash::FxHashMap as HashMap;

use super::super::{Pass, held};
use crate::job_times::JobTimes;
use crate::{JobId, Time};

/// The waiting jobs' reservations: start and nodes (what each holds there is the job's share,
/// [`Pass::plan_reserve_shares`]).
#[derive(Debug, Clone, Default)]
pub(super) struct OnNodes {
    reserved: HashMap<JobId, (Time, Vec<u32>)>,
}

impl OnNodes {
    /// One pass: the plan is the running jobs by their estimates and every waiting job's
    /// reservation. With `compress` (a job ended since the last pass), each waiting job in
    /// queue order gives up its reservation and takes the earliest slot no later than it
    /// (its old slot is still free: every other reservation was made beside it, and running
    /// jobs only end earlier than planned), else keeps it; a job without one gets its earliest
    /// slot; a job whose slot is now starts, as backfilled when a job before it waits.
    pub(super) fn pass(&mut self, planned: &mut JobTimes, compress: bool, pass: &mut Pass<'_>) {
        let now = pass.now();
        let Some(mut plan) = pass.node_plan(|end| end) else {
            return;
        };
        let waiting: Vec<usize> = (0..pass.positions())
            .filter(|&i| pass.is_waiting(i))
            .collect();
        for &index in &waiting {
            let job = pass.job(index);
            if let Some((start, nodes)) = self.reserved.get(&job.id) {
                let end = start.saturating_add(held(job));
                pass.plan_reserve_shares(&mut plan, index, nodes, *start, end);
            }
        }
        let mut blocked = false;
        for index in waiting {
            let job = *pass.job(index);
            let length = held(&job);
            let old = self.reserved.get(&job.id).cloned();
            let until = match &old {
                Some((start, _)) if compress || *start <= now => {
                    plan.unreserve(job.id);
                    (*start).max(now)
                }
                Some(_) => {
                    blocked = true;
                    continue;
                }
                None => Time::MAX,
            };
            let found = pass.plan_earliest(&plan, index, length, until);
            if let Some((start, _)) = found
                && start <= now
                && pass.plan_start(&mut plan, index, length, blocked)
            {
                self.reserved.remove(&job.id);
                planned.remove(job.id);
                continue;
            }
            blocked = true;
            let (start, nodes) = match (found, old) {
                (Some((start, nodes)), _) if start > now => (start, nodes),
                // nothing earlier: it keeps its slot
                (_, Some((start, nodes))) if start > now => (start, nodes),
                // its slot has come and it does not fit (never, by the argument above):
                // planned anew
                _ => match pass.plan_earliest(&plan, index, length, Time::MAX) {
                    Some((start, nodes)) if start > now => (start, nodes),
                    _ => continue,
                },
            };
            pass.plan_reserve_shares(
                &mut plan,
                index,
                &nodes,
                start,
                start.saturating_add(length),
            );
            planned.insert(job.id, start);
            self.reserved.insert(job.id, (start, nodes));
        }
    }
}
