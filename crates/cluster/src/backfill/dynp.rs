//! Streit's dynP as a backfilling rule (paper 002, section 3): decide the policy, rebuild the
//! plan from scratch in that order, start the jobs planned for now. The deciders themselves
//! are pure functions in [`crate::dynp`].

use super::{Backfill, Ended, Pass, held};
use crate::dynp::{self, Case, Decider, DynP, FcfsOrder, Generation, PolicyUsage, Quality};
use crate::job_times::JobTimes;
use crate::profile::Profile;
use crate::{JobId, ListOrder, Time};

/// Conservative backfilling rebuilt at every pass in an order (FCFS, SJF, LJF) that a decider
/// switches; the scheduler's own queue order is not used. The initial policy is FCFS.
#[derive(Debug, Clone)]
pub struct DynPRule {
    /// Which dynP.
    variant: DynP,
    /// The policy in use.
    current: ListOrder,
    /// How the policies were used so far.
    usage: PolicyUsage,
    /// The running jobs' processors over time (until start + estimate), kept across passes;
    /// created at the first pass that plans.
    profile: Option<Profile>,
    /// Whether a job was submitted since the last pass (basic dynP decides then).
    submitted_since_pass: bool,
    /// Whether a job ended since the last pass ([`Generation::KeepPlaced`] rebuilds then).
    finished_since_pass: bool,
    /// The planned start of every job the last pass placed and did not start, seconds (kept
    /// only under [`Generation::KeepPlaced`]).
    placed: JobTimes,
    /// Scratch space for the virtual schedules: a copy of `profile` that a plan fills with its
    /// jobs and then forgets (kept only to reuse its memory).
    scratch: Profile,
}

/// A full virtual schedule: queue positions in the policy's order and their planned starts.
pub(crate) struct Plan {
    order: Vec<usize>,
    starts: Vec<Time>,
}

impl DynPRule {
    /// The dynP `variant`, starting with FCFS.
    pub fn new(variant: DynP) -> DynPRule {
        DynPRule {
            variant,
            current: ListOrder::Fcfs,
            usage: PolicyUsage::default(),
            profile: None,
            submitted_since_pass: false,
            finished_since_pass: false,
            placed: JobTimes::default(),
            scratch: Profile::new(0),
        }
    }

    /// Which dynP this is.
    pub fn variant(&self) -> DynP {
        self.variant
    }

    /// The policy in use.
    pub fn current(&self) -> ListOrder {
        self.current
    }

    fn pass(&mut self, pass: &mut Pass<'_>) {
        let now = pass.now();
        let processors = pass.processors();
        let mut profile = self
            .profile
            .take()
            .unwrap_or_else(|| Profile::new(processors));
        profile.advance(now);
        let current = self.current;
        let backlog = pass.waiting();
        // Issue 15, mechanism (d): at a pass with no job end since the last one, the jobs
        // placed before keep their starts (the default rebuilds at every pass).
        let keep = match self.variant {
            DynP::SelfTuning { quality, .. } => {
                quality.generation() == Generation::KeepPlaced && !self.finished_since_pass
            }
            DynP::Basic { .. } => false,
        };
        let placed = if keep { Some(&self.placed) } else { None };
        // Issue 32: the FCFS schedule in the queue's current order (the default sorts by submit).
        let fcfs_order = match self.variant {
            DynP::SelfTuning { quality, .. } => quality.fcfs_order(),
            DynP::Basic { .. } => FcfsOrder::Submit,
        };
        let scratch = &mut self.scratch;
        let how = How {
            now,
            placed,
            fcfs_order,
        };
        let mut chosen_plan = None;
        match self.variant {
            DynP::Basic { lower, upper } => {
                if self.submitted_since_pass {
                    let estimates: i128 =
                        (0..backlog).map(|i| i128::from(pass.job(i).estimate)).sum();
                    if let Some(policy) = dynp::basic_decision(backlog, estimates, lower, upper) {
                        self.usage.decided(current, policy, backlog, None);
                        self.current = policy;
                    }
                }
            }
            DynP::SelfTuning { quality, decider } => {
                // A scheduling step is a decision when a job has to wait (Streit, section 5: "the
                // self-tuning functionality only makes sense, when more than one job is in the
                // schedule and not yet running"; on SDSC_syn, where jobs start at once, 509
                // tries for 10,000 jobs). One waiting job is a decision too: the three schedules
                // are equal, Table 1's case 1 (the simple decider takes FCFS, the advanced one
                // keeps its policy; Table 6 counts these). If every waiting job starts now in
                // one order it does in all, and there is nothing to decide.
                // (So SJF and LJF are built only when the FCFS schedule makes a job wait.)
                let fcfs = plan(pass, &profile, scratch, ListOrder::Fcfs, &how);
                if fcfs.starts.iter().any(|&start| start > now) {
                    let plans = [
                        fcfs,
                        plan(pass, &profile, scratch, ListOrder::Sjf, &how),
                        plan(pass, &profile, scratch, ListOrder::Ljf, &how),
                    ];
                    let running_end = pass.expected_releases().map(|(end, _)| end).max();
                    let [f, s, l] =
                        [0, 1, 2].map(|i| plan_quality(pass, &plans[i], quality, running_end));
                    let case = Case::classify(f, s, l, current);
                    let policy = match decider {
                        Decider::Simple => dynp::simple_decider(f, s, l),
                        Decider::Advanced => case.decision(Decider::Advanced, current),
                    };
                    self.usage.decided(current, policy, backlog, Some(case));
                    self.current = policy;
                    let [p0, p1, p2] = plans;
                    chosen_plan = Some(match policy {
                        ListOrder::Fcfs => p0,
                        ListOrder::Sjf => p1,
                        ListOrder::Ljf => p2,
                    });
                } else if current == ListOrder::Fcfs {
                    chosen_plan = Some(fcfs);
                }
            }
        }
        let plan = chosen_plan.unwrap_or_else(|| plan(pass, &profile, scratch, self.current, &how));

        // Put the queue in the plan's order, then start what is planned for now.
        pass.reorder(&plan.order);
        let keep_placed = matches!(self.variant, DynP::SelfTuning { quality, .. }
            if quality.generation() == Generation::KeepPlaced);
        if keep_placed {
            // Every job placed by the last pass is still waiting (jobs start only in passes).
            for index in 0..pass.positions() {
                self.placed.remove(pass.job(index).id);
            }
        }
        let mut blocked = false;
        for (index, &start) in plan.starts.iter().enumerate() {
            if start == now {
                let job = *pass.job(index);
                profile.reserve(now, now + held(&job), job.processors); // its run
                pass.start(index, blocked);
            } else {
                blocked = true;
                if keep_placed {
                    self.placed.insert(pass.job(index).id, start);
                }
            }
        }
        self.profile = Some(profile);
        self.usage.jobs_started[self.current as usize] += pass.started().len() as u64;
    }
}

impl Backfill for DynPRule {
    fn name(&self) -> &'static str {
        "dynp"
    }

    fn orders_queue_itself(&self) -> bool {
        true
    }

    fn schedule(&mut self, pass: &mut Pass<'_>) {
        // Plans (and decides) even without free processors.
        if pass.waiting() > 0 {
            self.pass(pass);
        }
        self.submitted_since_pass = false;
        self.finished_since_pass = false;
    }

    fn submitted(&mut self, _job: &crate::JobRequest) {
        self.submitted_since_pass = true;
    }

    fn finished(&mut self, job: &Ended, now: Time) {
        self.finished_since_pass = true;
        if let Some(profile) = self.profile.as_mut() {
            job.release_early(profile, now);
        }
    }

    fn counts_processors(&self) -> bool {
        true
    }

    fn policy_usage(&self) -> Option<&PolicyUsage> {
        Some(&self.usage)
    }
}

/// How a pass generates its virtual schedules.
struct How<'p> {
    /// The instant of the pass, seconds.
    now: Time,
    /// The planned starts the waiting jobs keep ([`Generation::KeepPlaced`] between job ends).
    placed: Option<&'p JobTimes>,
    /// The order the FCFS schedule places the waiting jobs in.
    fcfs_order: FcfsOrder,
}

/// The full schedule of the waiting jobs in `policy`'s order (ties by submit, then id; FCFS in
/// the queue's current order under [`FcfsOrder::Queue`]): each
/// job at its earliest slot in the profile of the running jobs and the jobs placed before it
/// (conservative backfilling from scratch, by user estimates). With `how.placed` (the
/// experimental [`Generation::KeepPlaced`]), the waiting jobs it holds keep their planned
/// starts (if they are not in the past and still fit) and only the others are placed, in
/// `policy`'s order. `profile` holds the running jobs only; the jobs are placed on a copy of it
/// in `scratch` (copying the running jobs' few steps is cheaper than taking every placement
/// back out).
fn plan(
    pass: &Pass<'_>,
    running: &Profile,
    scratch: &mut Profile,
    policy: ListOrder,
    how: &How<'_>,
) -> Plan {
    let now = how.now;
    scratch.copy_from(running);
    let profile = scratch;
    let order: Vec<usize> = if policy == ListOrder::Fcfs && how.fcfs_order == FcfsOrder::Queue {
        (0..pass.positions()).collect()
    } else {
        // Sort keys computed once per job: (the policy's key, submit, id), distinct because
        // ids are, so an unstable sort gives the one order. `!estimate` orders longest first.
        let mut keyed: Vec<((Time, Time, JobId), usize)> = (0..pass.positions())
            .map(|i| {
                let job = pass.job(i);
                let first = match policy {
                    ListOrder::Fcfs => 0,
                    ListOrder::Sjf => job.estimate,
                    ListOrder::Ljf => !job.estimate,
                };
                ((first, job.submit, job.id), i)
            })
            .collect();
        keyed.sort_unstable_by_key(|&(key, _)| key);
        keyed.into_iter().map(|(_, i)| i).collect()
    };
    let mut starts: Vec<Option<Time>> = vec![None; order.len()];
    if let Some(placed) = how.placed {
        for (slot, &i) in starts.iter_mut().zip(&order) {
            let job = pass.job(i);
            let length = held(job);
            if let Some(start) = placed.get(job.id) {
                if start >= now && profile.earliest_fit(start, job.processors, length) == start {
                    profile.reserve(start, start + length, job.processors);
                    *slot = Some(start);
                }
            }
        }
    }
    let starts: Vec<Time> = order
        .iter()
        .zip(starts)
        .map(|(&i, kept)| {
            kept.unwrap_or_else(|| {
                let job = pass.job(i);
                let length = held(job);
                let fit = profile.fit(now, job.processors, length);
                profile.reserve_fit(fit, length, job.processors);
                fit.start
            })
        })
        .collect();
    Plan { order, starts }
}

/// A plan's quality number (section 3.2; lower is better) over the jobs of the schedule, with
/// end = planned start + estimate. Streit's schedule holds the running jobs too (section 5:
/// "every running and pending job is placed into the schedule"), and they are the same in all
/// three plans: for ART and ARTwW they add the same amount to the sums and the denominators,
/// so the waiting jobs' sums compare exactly as the averages would; the makespan is the later
/// of the waiting jobs' last end and `running_end`, the running jobs' last planned end.
pub(crate) fn plan_quality(
    pass: &Pass<'_>,
    plan: &Plan,
    quality: Quality,
    running_end: Option<Time>,
) -> i128 {
    let ends = plan.order.iter().zip(&plan.starts).map(|(&i, &start)| {
        let job = pass.job(i);
        (job, i128::from(start) + i128::from(job.estimate))
    });
    match quality {
        Quality::Makespan => ends
            .map(|(_, end)| end)
            .chain(running_end.map(i128::from))
            .max()
            .unwrap_or(0),
        Quality::ResponseTime => ends.map(|(job, end)| end - i128::from(job.submit)).sum(),
        Quality::WidthWeightedResponseTime
        | Quality::WidthWeightedResponseTimeKeepPlaced
        | Quality::WidthWeightedResponseTimeQueueOrder => ends
            .map(|(job, end)| i128::from(job.processors) * (end - i128::from(job.submit)))
            .sum(),
        Quality::WidthWeightedResponseTimeMinutes
        | Quality::WidthWeightedResponseTimeTenMinutes
        | Quality::WidthWeightedResponseTimeHours => {
            // Issue 15, mechanism (a): the mean over the waiting jobs, truncated.
            let resolution = quality.resolution().unwrap_or(1);
            let (sum, widths) = ends.fold((0i128, 0i128), |(sum, widths), (job, end)| {
                let width = i128::from(job.processors);
                (sum + width * (end - i128::from(job.submit)), widths + width)
            });
            if widths == 0 {
                0
            } else {
                sum / widths / resolution
            }
        }
    }
}
