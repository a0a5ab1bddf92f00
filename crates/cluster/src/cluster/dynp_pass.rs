//! The dynP pass (paper 002, section 3): decide the policy, rebuild the plan from scratch in
//! that order, start the jobs planned for now.

use std::cmp::Reverse;

use super::{Cluster, held};
use crate::dynp::{self, Case, Decider, DynP, Quality};
use crate::profile::Profile;
use crate::{ListOrder, Time};

/// A full virtual schedule: queue positions in the policy's order and their planned starts.
struct Plan {
    order: Vec<usize>,
    starts: Vec<Time>,
}

impl Cluster {
    pub(super) fn dynp_pass(&mut self, now: Time, dynp: DynP) {
        let Some(mut profile) = self.profile.take() else {
            return; // unreachable: a dynP cluster has a profile
        };
        profile.advance(now);
        let current = self.dynp.current;
        let backlog = self.queue.len();
        let mut chosen_plan = None;
        match dynp {
            DynP::Basic { lower, upper } => {
                if self.submitted_since_pass {
                    let estimates: i128 =
                        self.queue.iter().map(|q| i128::from(q.job.estimate)).sum();
                    if let Some(policy) = dynp::basic_decision(backlog, estimates, lower, upper) {
                        self.dynp.usage.decided(current, policy, backlog, None);
                        self.dynp.current = policy;
                    }
                }
            }
            DynP::SelfTuning { quality, decider } => {
                // With one waiting job every order gives the same schedule: nothing to decide.
                if backlog >= 2 {
                    let plans = [ListOrder::Fcfs, ListOrder::Sjf, ListOrder::Ljf]
                        .map(|policy| self.plan(&mut profile, now, policy));
                    let [f, s, l] = [0, 1, 2].map(|i| self.quality(&plans[i], quality));
                    let case = Case::classify(f, s, l, current);
                    let policy = match decider {
                        Decider::Simple => dynp::simple_decider(f, s, l),
                        Decider::Advanced => case.decision(Decider::Advanced, current),
                    };
                    self.dynp
                        .usage
                        .decided(current, policy, backlog, Some(case));
                    self.dynp.current = policy;
                    let [p0, p1, p2] = plans;
                    chosen_plan = Some(match policy {
                        ListOrder::Fcfs => p0,
                        ListOrder::Sjf => p1,
                        ListOrder::Ljf => p2,
                    });
                }
            }
        }
        let plan = chosen_plan.unwrap_or_else(|| self.plan(&mut profile, now, self.dynp.current));

        // Put the queue in the plan's order, then start what is planned for now.
        let mut ordered = Vec::with_capacity(self.queue.len());
        ordered.extend(plan.order.iter().map(|&i| self.queue[i]));
        self.queue = ordered;
        let mut blocked = false;
        for (index, &start) in plan.starts.iter().enumerate() {
            if start == now {
                let job = self.queue[index].job;
                profile.reserve(now, now + held(&job), job.processors); // its run
                self.start(index, now, blocked, None);
            } else {
                blocked = true;
            }
        }
        self.profile = Some(profile);
        self.dynp.usage.jobs_started[self.dynp.current as usize] += self.started.len() as u64;
    }

    /// The full schedule of the waiting jobs in `policy`'s order (ties by submit, then id): each
    /// job at its earliest slot in the profile of the running jobs and the jobs placed before
    /// it (conservative backfilling from scratch, by user estimates). `profile` holds the
    /// running jobs only, and does again when this returns.
    fn plan(&self, profile: &mut Profile, now: Time, policy: ListOrder) -> Plan {
        let mut order: Vec<usize> = (0..self.queue.len()).collect();
        let key = |i: &usize| {
            let job = &self.queue[*i].job;
            (job.submit, job.id)
        };
        match policy {
            ListOrder::Fcfs => order.sort_by_key(key),
            ListOrder::Sjf => order.sort_by_key(|i| (self.queue[*i].job.estimate, key(i))),
            ListOrder::Ljf => order.sort_by_key(|i| (Reverse(self.queue[*i].job.estimate), key(i))),
        }
        let starts: Vec<Time> = order
            .iter()
            .map(|&i| {
                let job = &self.queue[i].job;
                let length = held(job);
                let start = profile.earliest_fit(now, job.processors, length);
                profile.reserve(start, start + length, job.processors);
                start
            })
            .collect();
        for (&i, &start) in order.iter().zip(&starts) {
            let job = &self.queue[i].job;
            profile.release(start, start + held(job), job.processors);
        }
        Plan { order, starts }
    }

    /// A plan's quality number (section 3.2; lower is better) over the waiting jobs, with
    /// end = planned start + estimate. ART and ARTwW share their denominators across the three
    /// plans, so the sums compare exactly as the averages would.
    fn quality(&self, plan: &Plan, quality: Quality) -> i128 {
        let ends = plan.order.iter().zip(&plan.starts).map(|(&i, &start)| {
            let job = &self.queue[i].job;
            (job, i128::from(start) + i128::from(job.estimate))
        });
        match quality {
            Quality::Makespan => ends.map(|(_, end)| end).max().unwrap_or(0),
            Quality::ResponseTime => ends.map(|(job, end)| end - i128::from(job.submit)).sum(),
            Quality::WidthWeightedResponseTime => ends
                .map(|(job, end)| i128::from(job.processors) * (end - i128::from(job.submit)))
                .sum(),
        }
    }
}
