//! Conservative backfilling (Mu'alem & Feitelson 2001; the backfilling of Streit's CCS, paper
//! 002, section 3).

use super::{Backfill, Ended, Pass, held};
use crate::job_times::JobTimes;
use crate::profile::Profile;
use crate::{JobId, Time};

/// Every waiting job holds a reservation in the profile of free processors. A new job gets the
/// earliest slot that delays no reservation; when a job ends before its estimate, the waiting
/// jobs are re-placed one by one in queue order, each at its earliest slot with every other
/// reservation held, so a reservation only ever moves earlier. The queue order decides who
/// gets freed processors first.
#[derive(Debug, Clone, Default)]
pub struct Conservative {
    /// The free processors over time, kept across passes (running jobs until start + estimate,
    /// and the reservations); created at the first pass that plans.
    profile: Option<Profile>,
    /// The planned start of every waiting job that has one, seconds.
    planned: JobTimes,
    /// Whether a job finished since the last pass: its processors may have come back before
    /// its estimate said, so reservations may move earlier.
    finished_since_pass: bool,
}

impl Conservative {
    /// Conservative backfilling with no reservations yet.
    pub fn new() -> Conservative {
        Conservative::default()
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
        pass.sort_queue();
        let now = pass.now();
        let compress = std::mem::take(&mut self.finished_since_pass);
        let processors = pass.processors();
        let profile = self.profile.get_or_insert_with(|| Profile::new(processors));
        profile.advance(now);
        // Positions of jobs started at earlier passes are tombstones (see
        // `skips_started_positions`); the waiting jobs are in queue order between them.
        for index in 0..pass.positions() {
            if !pass.is_waiting(index) {
                continue;
            }
            let job = *pass.job(index);
            let length = held(&job);
            let start = match self.planned.get(job.id) {
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
            self.planned.insert(job.id, start);
        }
        // Jobs planned for now start; their reservation stays in the profile as their run.
        let mut blocked = false;
        for index in 0..pass.positions() {
            if !pass.is_waiting(index) {
                continue;
            }
            let id = pass.job(index).id;
            if self.planned.get(id) == Some(now) {
                self.planned.remove(id);
                pass.start(index, blocked);
            } else {
                blocked = true;
            }
        }
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

    /// Both loops of a pass skip tombstones, so the cluster need not compact the queue after
    /// every pass that started a job (rebuilding its index, O(queue)).
    fn skips_started_positions(&self) -> bool {
        true
    }

    fn planned_start(&self, id: JobId) -> Option<Time> {
        self.planned.get(id)
    }
}
