//! What a queue order sees of the cluster when it computes priorities: a read-only [`View`] of
//! the clock, the machine, the running jobs by user and by group, and the users' recent
//! runtimes. So an order that ranks jobs by the state ("fewest running jobs per user first")
//! is one module and one registration ([`crate::order::ORDERS`]), not a change of the cluster.

use rustc_hash::FxHashMap as HashMap;

use crate::cluster::Running;
use crate::predict::History;
use crate::{Resources, Time};

/// What one owner (a user or a group) holds on the machine now.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Holding {
    /// Running jobs.
    pub jobs: u32,
    /// Processors those jobs hold.
    pub processors: u32,
}

/// The running jobs counted by owner.
#[derive(Debug, Default)]
pub(crate) struct Owners {
    by_user: HashMap<i64, Holding>,
    by_group: HashMap<i64, Holding>,
}

impl Owners {
    /// Counts a running job of `user` and `group` holding `processors`.
    fn add(&mut self, user: i64, group: i64, processors: u32) {
        for holding in [
            self.by_user.entry(user).or_default(),
            self.by_group.entry(group).or_default(),
        ] {
            holding.jobs += 1;
            holding.processors += processors;
        }
    }
}

/// The cluster as a queue order sees it at one instant (read-only). Times are seconds.
#[derive(Debug, Clone, Copy)]
pub struct View<'a> {
    pub(crate) now: Time,
    pub(crate) machine: Resources,
    pub(crate) free: Resources,
    pub(crate) running: &'a Running,
    pub(crate) waiting: usize,
    /// The running jobs by owner, counted at the first question of the pass (an order that
    /// asks none pays nothing).
    pub(crate) owners: &'a std::cell::OnceCell<Owners>,
    pub(crate) history: &'a History,
}

impl View<'_> {
    /// The instant of the pass.
    pub fn now(&self) -> Time {
        self.now
    }

    /// The machine's resources.
    pub fn machine(&self) -> Resources {
        self.machine
    }

    /// The resources no running job holds.
    pub fn free(&self) -> Resources {
        self.free
    }

    /// Jobs running now.
    pub fn running_jobs(&self) -> usize {
        self.running.len()
    }

    /// Jobs waiting now (those being ranked).
    pub fn waiting_jobs(&self) -> usize {
        self.waiting
    }

    /// What `user`'s running jobs hold now.
    pub fn running_of_user(&self, user: i64) -> Holding {
        let owners = self.owners();
        owners.by_user.get(&user).copied().unwrap_or_default()
    }

    /// What the running jobs of `group` (the Slurm model's account) hold now.
    pub fn running_of_group(&self, group: i64) -> Holding {
        let owners = self.owners();
        owners.by_group.get(&group).copied().unwrap_or_default()
    }

    /// The running jobs by owner, counted once per view.
    fn owners(&self) -> &Owners {
        self.owners.get_or_init(|| {
            let mut owners = Owners::default();
            for (user, group, processors) in self.running.owners() {
                owners.add(user, group, processors);
            }
            owners
        })
    }

    /// The runtimes of `user`'s two most recently submitted jobs that ended, most recent
    /// first, seconds (what Tsafrir's predictor averages). Kept only for an order that reads
    /// them ([`crate::QueueOrder::reads_history`]) or a scheduler that predicts with them:
    /// otherwise empty.
    pub fn recent_runtimes(&self, user: i64) -> impl Iterator<Item = Time> + '_ {
        self.history.recent_runtimes(user)
    }
}

/// An idle machine of `machine` at `now`, as a view sees it: for tests of orders and for
/// callers that rank jobs outside a pass.
#[derive(Debug, Default)]
pub struct Idle {
    running: Running,
    owners: std::cell::OnceCell<Owners>,
    history: History,
}

impl Idle {
    /// The view of this idle machine of `machine` at `now`.
    pub fn view(&self, now: Time, machine: Resources) -> View<'_> {
        View {
            now,
            machine,
            free: machine,
            running: &self.running,
            waiting: 0,
            owners: &self.owners,
            history: &self.history,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backfill::NoBackfill;
    use crate::cluster::tests::job;
    use crate::order::QueueOrder;
    use crate::{Cluster, JobRequest, Scheduler};

    /// An order that ranks every job 0 and records what the view showed it: (job id, the
    /// user's holding, the group's holding, the user's recent runtimes, running, waiting).
    type Seen = (u32, Holding, Holding, Vec<Time>, usize, usize);

    #[derive(Debug, Default)]
    struct Recording(std::sync::Mutex<Vec<Seen>>);

    impl QueueOrder for Recording {
        fn name(&self) -> String {
            "recording".into()
        }

        fn priority(&self, job: &JobRequest, view: &View<'_>) -> f64 {
            if let Ok(mut seen) = self.0.lock() {
                seen.push((
                    job.id.0,
                    view.running_of_user(job.user),
                    view.running_of_group(job.group),
                    view.recent_runtimes(job.user).collect(),
                    view.running_jobs(),
                    view.waiting_jobs(),
                ));
            }
            0.0
        }
    }

    fn seen(cluster: &mut Cluster) -> Vec<Seen> {
        cluster
            .order_mut()
            .as_any_mut()
            .and_then(|any| any.downcast_mut::<Recording>())
            .map(|r| std::mem::take(&mut *r.0.lock().unwrap()))
            .unwrap_or_default()
    }

    impl Recording {
        fn boxed() -> Box<dyn QueueOrder> {
            Box::new(RecordingOrder(Recording::default()))
        }
    }

    /// [`Recording`] reachable through `as_any_mut`.
    #[derive(Debug)]
    struct RecordingOrder(Recording);

    impl QueueOrder for RecordingOrder {
        fn name(&self) -> String {
            self.0.name()
        }
        fn priority(&self, job: &JobRequest, view: &View<'_>) -> f64 {
            self.0.priority(job, view)
        }
        fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
            Some(&mut self.0)
        }
        fn reads_history(&self) -> bool {
            true
        }
    }

    #[test]
    fn an_order_sees_who_holds_what_and_the_users_recent_runtimes() {
        let mut c = Cluster::new(10, Scheduler::new(Recording::boxed(), Box::new(NoBackfill)));
        let of = |id, user, group, processors| JobRequest {
            user,
            group,
            ..job(id, 0, processors, 100)
        };
        // User 1 (group 7) runs jobs 0 and 1 (3 + 4 processors); job 2 of user 2 waits.
        for j in [of(0, 1, 7, 3), of(1, 1, 7, 4), of(2, 2, 7, 5)] {
            c.submit(j).unwrap();
        }
        c.schedule(0);
        assert_eq!(c.running(), 2);
        // The first pass ranked the three jobs on an idle machine.
        assert!(
            seen(&mut c)
                .iter()
                .all(|s| s.1 == Holding::default() && s.4 == 0)
        );
        c.submit(of(3, 1, 8, 1)).unwrap();
        c.schedule(1);
        let at_1 = seen(&mut c);
        let user_1 = Holding {
            jobs: 2,
            processors: 7,
        };
        // Job 3 (user 1, group 8) waits behind job 2 (FCFS), which does not fit.
        let job_2 = at_1.iter().find(|s| s.0 == 2).unwrap();
        assert_eq!(job_2.1, Holding::default(), "user 2 runs nothing");
        assert_eq!(job_2.2, user_1, "group 7 runs user 1's two jobs");
        assert_eq!((job_2.4, job_2.5), (2, 2));
        let job_3 = at_1.iter().find(|s| s.0 == 3).unwrap();
        assert_eq!((job_3.1, job_3.2), (user_1, Holding::default()));
        // Job 0 ends after 50 s: user 1 holds job 1 only when the pass ranks the queue, and
        // job 0's runtime is recent history.
        c.finish(JobId(0), 50).unwrap();
        c.submit(of(4, 1, 7, 1)).unwrap();
        c.schedule(50);
        let job_4 = seen(&mut c).into_iter().find(|s| s.0 == 4).unwrap();
        assert_eq!(
            job_4.1,
            Holding {
                jobs: 1,
                processors: 4
            },
            "job 1"
        );
        assert_eq!(job_4.3, vec![50]);
    }

    use crate::JobId;
}
