//! Jobs submitted to a reservation for named users or accounts ([`crate::ReservationId`]): the
//! reservation's members. A reservation is a [`Window`] with a [`Window::reservation`]; to
//! every other job it is a window like a maintenance one (its processors out of service from
//! its start to its end, planned around by every rule). Its members run on its processors
//! only, and only while it lasts.
//!
//! Slurm's semantics (`job_test_resv` in `src/slurmctld/reservation.c`, `job_time_limit` in
//! `src/slurmctld/job_mgr.c`) for a reservation without `FLEX`:
//! - a job that names it waits until it begins, then runs on its nodes alone; a recurring
//!   reservation (`DAILY`, `WEEKLY`) that ends before the job starts moves to its next
//!   occurrence (`_advance_resv_time`), and the job waits for that;
//! - such a job is killed when the reservation ends (`ResvOverRun`, 0 by default), whatever
//!   its time limit: its kill time is the earliest of its start plus its estimate and the
//!   reservation's end;
//! - a job that names a reservation that has ended is held (priority 0, "expired
//!   reservation") until an administrator acts.
//!
//! *Chosen where Slurm is not simulated:* members start in arrival order (submit, id) at the
//! first pass that finds them room in their window, beside the rule's starts, which never see
//! them (the Slurm model's fair tree is not charged for their use); and a member still waiting
//! when its reservation's last period ends joins the queue as an ordinary job at once, where
//! Slurm would hold it for an administrator, so that every job of a run runs.

use std::collections::BTreeMap;

use super::outages::Window;
use crate::{JobId, JobRequest, ReservationId, Started, Time};

/// What a reservation's members did with it over a run ([`crate::Cluster::reservation_use`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReservationUse {
    /// Members that started in it.
    pub started: u64,
    /// Members that never started in it: its end came first, and they joined the queue as
    /// ordinary jobs.
    pub released: u64,
    /// Processor-seconds its members ran in it (those that ended).
    pub processor_seconds: i64,
}

/// A member running in its window.
#[derive(Debug, Clone, Copy)]
pub(crate) struct RunningMember {
    /// Its window's index in the cluster's windows.
    pub(crate) window: usize,
    /// Its request.
    pub(crate) job: JobRequest,
    /// Its start, seconds.
    pub(crate) start: Time,
}

/// The members of the run's reservations, waiting and running.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reserved {
    /// Members waiting, with their runtime when the predictor needs it, in arrival order.
    waiting: Vec<(JobRequest, Option<Time>)>,
    /// Members running, by id.
    running: BTreeMap<JobId, RunningMember>,
    /// Processors the members hold in each window, by the window's index.
    held: Vec<u32>,
    /// What each reservation's members did with it.
    uses: BTreeMap<ReservationId, ReservationUse>,
}

impl Reserved {
    /// Whether `job` is a member of one of `windows` that has not ended by its submission:
    /// then it waits for its window here ([`Reserved::wait`]) rather than in the queue.
    pub(crate) fn admits(windows: &[Window], job: &JobRequest) -> bool {
        job.reservation.is_some()
            && windows
                .iter()
                .any(|w| w.reservation == job.reservation && w.to > job.submit)
    }

    /// `job` waits for its window (arrival order is kept: jobs arrive in it).
    pub(crate) fn wait(&mut self, job: JobRequest, runtime: Option<Time>) {
        let key = (job.submit, job.id);
        let at = self
            .waiting
            .partition_point(|(q, _)| (q.submit, q.id) <= key);
        self.waiting.insert(at, (job, runtime));
    }

    /// Members waiting.
    pub(crate) fn waiting(&self) -> usize {
        self.waiting.len()
    }

    /// Members running.
    pub(crate) fn running(&self) -> usize {
        self.running.len()
    }

    /// Processors the members hold in the windows in force at `now`.
    #[cfg(test)]
    fn held_at(&self, windows: &[Window], now: Time) -> u32 {
        self.held
            .iter()
            .zip(windows)
            .filter(|(_, w)| w.from <= now && now < w.to)
            .map(|(held, _)| held)
            .sum()
    }

    /// The members whose reservation has ended by `now` without their starting: they leave
    /// (the cluster queues them as ordinary jobs).
    pub(crate) fn expired(
        &mut self,
        windows: &[Window],
        now: Time,
    ) -> Vec<(JobRequest, Option<Time>)> {
        let (expired, kept): (Vec<_>, Vec<_>) = std::mem::take(&mut self.waiting)
            .into_iter()
            .partition(|(job, _)| {
                !windows
                    .iter()
                    .any(|w| w.reservation == job.reservation && w.to > now)
            });
        self.waiting = kept;
        for (job, _) in &expired {
            self.uses.entry(job.reservation).or_default().released += 1;
        }
        expired
    }

    /// What each reservation's members did with it so far, by reservation.
    pub(crate) fn uses(&self) -> impl Iterator<Item = (ReservationId, ReservationUse)> + '_ {
        self.uses.iter().map(|(&id, &used)| (id, used))
    }

    /// Starts at `now`, in arrival order, every waiting member its window in force has room
    /// for, and appends them to `started`. A member is killed at the earliest of its start plus
    /// its estimate and its window's end.
    pub(crate) fn start(&mut self, windows: &[Window], now: Time, started: &mut Vec<Started>) {
        if self.waiting.is_empty() {
            return;
        }
        if self.held.len() < windows.len() {
            self.held.resize(windows.len(), 0);
        }
        let held = &mut self.held;
        let running = &mut self.running;
        let uses = &mut self.uses;
        self.waiting.retain(|(job, _)| {
            let window = windows
                .iter()
                .position(|w| w.reservation == job.reservation && w.from <= now && now < w.to);
            let Some(index) = window else {
                return true; // its window has not begun
            };
            let w = &windows[index];
            if held[index].saturating_add(job.processors) > w.processors {
                return true;
            }
            held[index] += job.processors;
            uses.entry(job.reservation).or_default().started += 1;
            running.insert(
                job.id,
                RunningMember {
                    window: index,
                    job: *job,
                    start: now,
                },
            );
            started.push(Started {
                id: job.id,
                start: now,
                kill_time: now.saturating_add(job.estimate).min(w.to),
                backfilled: false,
            });
            false
        });
    }

    /// The running member `id` ended at `now`: its window gets its processors back. `None`:
    /// not a running member.
    pub(crate) fn end(&mut self, id: JobId, now: Time) -> Option<RunningMember> {
        let member = self.running.remove(&id)?;
        if let Some(held) = self.held.get_mut(member.window) {
            *held = held.saturating_sub(member.job.processors);
        }
        let used = &mut self.uses.entry(member.job.reservation).or_default();
        used.processor_seconds += i64::from(member.job.processors) * (now - member.start).max(0);
        Some(member)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn member(id: u32, submit: Time, processors: u32, estimate: Time) -> JobRequest {
        JobRequest {
            id: JobId(id),
            submit,
            processors,
            extra: Default::default(),
            estimate,
            user: 1,
            group: 1,
            partition: -1,
            queue: -1,
            shape: Default::default(),
            array_task: Default::default(),
            reservation: ReservationId(1),
        }
    }

    fn windows() -> Vec<Window> {
        vec![Window {
            from: 100,
            to: 200,
            processors: 4,
            reservation: ReservationId(1),
        }]
    }

    #[test]
    fn members_wait_for_their_window_and_share_only_its_processors() {
        let windows = windows();
        let mut reserved = Reserved::default();
        for (id, submit, processors) in [(1, 10, 3), (2, 20, 2), (3, 30, 1)] {
            let job = member(id, submit, processors, 500);
            assert!(Reserved::admits(&windows, &job));
            reserved.wait(job, None);
        }
        let mut started = Vec::new();
        reserved.start(&windows, 50, &mut started);
        assert!(started.is_empty(), "the window has not begun");
        reserved.start(&windows, 100, &mut started);
        // 3 fits, 2 does not (3 + 2 > 4), 1 does: arrival order, each where it fits
        let ids: Vec<u32> = started.iter().map(|s| s.id.0).collect();
        assert_eq!(ids, vec![1, 3]);
        assert!(
            started.iter().all(|s| s.kill_time == 200),
            "killed at the window's end"
        );
        assert_eq!(reserved.held_at(&windows, 150), 4);
        assert_eq!(reserved.end(JobId(1), 130).map(|m| m.window), Some(0));
        started.clear();
        reserved.start(&windows, 160, &mut started);
        assert_eq!(started.len(), 1);
        assert_eq!(started[0].kill_time, 200);
        // 3 processors for 30 s have ended; three members started
        let uses: Vec<_> = reserved.uses().collect();
        assert_eq!(
            uses,
            vec![(
                ReservationId(1),
                ReservationUse {
                    started: 3,
                    released: 0,
                    processor_seconds: 90
                }
            )]
        );
    }

    #[test]
    fn a_member_its_window_never_ran_leaves_at_the_windows_end() {
        let windows = windows();
        let mut reserved = Reserved::default();
        reserved.wait(member(1, 10, 5, 50), None); // wider than the window
        let mut started = Vec::new();
        reserved.start(&windows, 100, &mut started);
        assert!(started.is_empty());
        assert!(reserved.expired(&windows, 199).is_empty());
        assert_eq!(reserved.expired(&windows, 200).len(), 1);
        assert_eq!(
            reserved.uses().next().map(|(_, used)| used.released),
            Some(1)
        );
        assert_eq!(reserved.waiting(), 0);
        assert!(
            !Reserved::admits(&windows, &member(2, 200, 1, 10)),
            "submitted after its end"
        );
    }
}
