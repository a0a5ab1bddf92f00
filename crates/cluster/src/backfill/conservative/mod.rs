//! Conservative backfilling (Mu'alem & Feitelson 2001; the backfilling of Streit's CCS, paper
//! 002, section 3).
//!
//! Two implementations make the same decisions (which job starts when, with which `backfilled`
//! flag, and every waiting job's planned start after every pass):
//!
//! - the plain loop ([`reference_pass`]): at every pass after a job ended, every waiting job is
//!   re-placed in queue order, a scan of the profile each, O(queue x steps) per pass. It serves
//!   every queue order.
//! - the fast path ([`fast::Fast`]), for arrival order (the `conservative` preset): it re-places
//!   only the jobs that a release of processors can move earlier, found through indexes, on a
//!   profile in blocks ([`crate::block_profile::BlockProfile`]). See `fast.rs` for the proof
//!   that it skips only re-placements that would change nothing.
//!
//! The fast path costs more than the plain loop per job it looks at, so it plans only while
//! the queue is long: it takes over at a pass where [`FAST_FROM`] jobs wait and hands back
//! below [`PLAIN_BELOW`]. Both keep the same profile and planned starts, so either can take
//! over at any pass (the fast path then re-places every job at the next pass after an end, as
//! the plain loop would). It hands back for good if it ever meets a case its proof does not
//! cover: a queue that is not in arrival order, or a job whose planned start passed without a
//! pass (which the engine never produces).

mod fast;
mod index;
mod nodes;
#[cfg(test)]
mod tests;

use super::{Backfill, Ended, Pass, held};
use crate::job_times::JobTimes;
use crate::profile::Profile;
use crate::{JobId, JobRequest, Time};
use fast::Fast;
use nodes::OnNodes;

/// Waiting jobs from which the fast path plans (see the module documentation): below, a pass
/// of the plain loop costs less than the fast path's overhead (SDSC-BLUE and the default site
/// at 250 users, whose queues are mostly short, run faster on the plain loop).
const FAST_FROM: usize = 256;

/// Waiting jobs below which the fast path hands back to the plain loop (apart from
/// [`FAST_FROM`], so that a queue near one bound does not switch at every pass).
const PLAIN_BELOW: usize = 128;

/// Every waiting job holds a reservation in the profile of free processors. A new job gets the
/// earliest slot that delays no reservation; when a job ends before its estimate, the waiting
/// jobs are re-placed one by one in queue order, each at its earliest slot with every other
/// reservation held, so a reservation only ever moves earlier. The queue order decides who
/// gets freed processors first.
#[derive(Debug, Clone)]
pub struct Conservative {
    /// The planned start of every waiting job that has one, seconds.
    planned: JobTimes,
    /// Whether a job finished since the last pass: its processors may have come back before
    /// its estimate said, so reservations may move earlier.
    finished_since_pass: bool,
    /// The implementation in use and its state.
    mode: Mode,
    /// Whether the fast path may plan: the queue is in arrival order
    /// ([`Backfill::queue_in_arrival_order`]) and no case outside its proof was met.
    fast_allowed: bool,
    /// [`FAST_FROM`] and [`PLAIN_BELOW`] (tests change them).
    fast_from: usize,
    plain_below: usize,
    /// On a machine of node types: the reservations on the nodes (the profiles count
    /// processors only and are not used).
    on_nodes: OnNodes,
}

impl Default for Conservative {
    fn default() -> Conservative {
        Conservative {
            planned: JobTimes::default(),
            finished_since_pass: false,
            mode: Mode::default(),
            fast_allowed: false,
            fast_from: FAST_FROM,
            plain_below: PLAIN_BELOW,
            on_nodes: OnNodes::default(),
        }
    }
}

/// Which implementation plans, with the profile it keeps.
#[derive(Debug, Clone)]
enum Mode {
    /// The plain loop, over any queue order. The profile (running jobs until start + estimate,
    /// and the reservations) is created at the first pass that plans.
    Plain(Option<Profile>),
    /// The fast path: the queue is in arrival order and long.
    Fast(Box<Fast>),
}

impl Default for Mode {
    fn default() -> Mode {
        Mode::Plain(None)
    }
}

impl Conservative {
    /// Conservative backfilling with no reservations yet.
    pub fn new() -> Conservative {
        Conservative::default()
    }

    /// Leaves the fast path for the plain loop, with the same profile and planned starts.
    fn switch_to_plain(&mut self) {
        if let Mode::Fast(fast) = &self.mode {
            self.mode = Mode::Plain(fast.profile().map(|p| Profile::from_steps(p.steps())));
        }
    }

    /// Conservative backfilling whose fast path plans from `fast_from` waiting jobs and hands
    /// back below `plain_below` (tests).
    #[cfg(test)]
    fn with_bounds(fast_from: usize, plain_below: usize) -> Conservative {
        Conservative {
            fast_from,
            plain_below,
            ..Conservative::default()
        }
    }

    /// The fast path's state, while it plans (tests).
    #[cfg(test)]
    fn fast(&self) -> Option<&Fast> {
        match &self.mode {
            Mode::Fast(fast) => Some(fast),
            Mode::Plain(_) => None,
        }
    }
}

impl Backfill for Conservative {
    fn name(&self) -> &'static str {
        "conservative"
    }

    /// On the persistent profile of free processors (the running jobs by their estimates and
    /// the waiting jobs' reservations): if a job finished since the last pass (possibly before
    /// its estimate), every waiting job in queue order is re-placed at its earliest slot with
    /// all other reservations held (compression: its old slot is still free, so it never moves
    /// later); jobs without a reservation get their earliest slot; the jobs whose slot is now
    /// start. Runs without free processors too: new jobs still get their reservations.
    fn schedule(&mut self, pass: &mut Pass<'_>) {
        if pass.waiting() == 0 {
            return;
        }
        if pass.has_pool() {
            pass.sort_queue();
            let compress = std::mem::take(&mut self.finished_since_pass);
            self.on_nodes.pass(&mut self.planned, compress, pass);
            return;
        }
        let before = pass.version();
        pass.sort_queue();
        if pass.version() != before {
            self.fast_allowed = false; // the queue was reordered: not arrival order after all
        }
        let compress = std::mem::take(&mut self.finished_since_pass);
        let waiting = pass.waiting();
        let fast = self.fast_allowed
            && match self.mode {
                Mode::Fast(_) => waiting >= self.plain_below,
                Mode::Plain(_) => waiting >= self.fast_from,
            };
        if !fast {
            self.switch_to_plain();
        } else if let Mode::Plain(profile) = &self.mode {
            self.mode = Mode::Fast(Box::new(Fast::from_plain(
                profile.as_ref(),
                &self.planned,
                pass,
            )));
        }
        if let Mode::Fast(fast) = &mut self.mode {
            if fast.schedule(&mut self.planned, compress, pass).is_ok() {
                return;
            }
            self.fast_allowed = false;
            self.switch_to_plain();
        }
        if let Mode::Plain(profile) = &mut self.mode {
            reference_pass(profile, &mut self.planned, compress, pass);
        }
    }

    fn queue_in_arrival_order(&mut self) {
        self.fast_allowed = true;
    }

    fn submitted(&mut self, job: &JobRequest) {
        if let Mode::Fast(fast) = &mut self.mode {
            fast.submitted(job);
        }
    }

    fn finished(&mut self, job: &Ended, now: Time) {
        self.finished_since_pass = true;
        match &mut self.mode {
            Mode::Plain(Some(profile)) => job.release_early(profile, now),
            Mode::Plain(None) => {}
            Mode::Fast(fast) => fast.finished(job, now),
        }
    }

    fn counts_processors(&self) -> bool {
        true
    }

    /// On a machine of node types every job's reservation is its shares on the nodes it
    /// would get (see `nodes.rs`).
    fn schedules_nodes(&self) -> bool {
        true
    }

    /// Both loops of a pass skip tombstones, so the cluster need not compact the queue after
    /// every pass that started a job (rebuilding its index, O(queue)).
    fn skips_started_positions(&self) -> bool {
        true
    }

    fn planned_start(&self, id: JobId) -> Option<Time> {
        self.planned.get(id)
    }

    #[cfg(test)]
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// One pass of the plain loop (the only implementation before the fast path, and its
/// reference): with `compress` (a job finished since the last pass), every waiting job in queue
/// order is re-placed at its earliest slot with every other reservation held; jobs planned
/// before now are re-placed at now; jobs without a reservation get their earliest slot; then
/// the jobs planned for now start, those behind a job that does not start as backfilled.
/// O(queue x steps) with `compress`.
fn reference_pass(
    profile: &mut Option<Profile>,
    planned: &mut JobTimes,
    compress: bool,
    pass: &mut Pass<'_>,
) {
    let now = pass.now();
    let processors = pass.processors();
    let profile = profile.get_or_insert_with(|| Profile::new(processors));
    profile.advance(now);
    // Positions of jobs started at earlier passes are tombstones (see
    // `skips_started_positions`); the waiting jobs are in queue order between them.
    for index in 0..pass.positions() {
        if !pass.is_waiting(index) {
            continue;
        }
        let job = *pass.job(index);
        let length = held(&job);
        let start = match planned.get(job.id) {
            Some(old) if compress || old < now => {
                // Re-placed with every other reservation held: computed on the profile as
                // it is (its own processors counted free), so a job that stays put (most)
                // costs a scan and no update.
                let from = old.max(now);
                let end = old + length;
                let new = if old <= now {
                    now // it cannot start earlier than now
                } else {
                    profile.refit(now, from, end, job.processors, length)
                };
                debug_assert!(new <= from, "compression moved {:?} later", job.id);
                if new == old {
                    continue;
                }
                profile.release(from, end, job.processors);
                profile.reserve(new, new + length, job.processors);
                new
            }
            Some(_) => continue,
            None => {
                let fit = profile.fit(now, job.processors, length);
                profile.reserve_fit(fit, length, job.processors);
                fit.start
            }
        };
        planned.insert(job.id, start);
    }
    // Jobs planned for now start; their reservation stays in the profile as their run.
    let mut blocked = false;
    for index in 0..pass.positions() {
        if !pass.is_waiting(index) {
            continue;
        }
        let id = pass.job(index).id;
        if planned.get(id) == Some(now) {
            planned.remove(id);
            pass.start(index, blocked);
        } else {
            blocked = true;
        }
    }
}
