//! Processors out of service: maintenance windows known in advance, and drains (nodes taken
//! out without notice, whose return nobody plans with).
//!
//! Slurm's semantics, as `docs/development/outages-notes.md` sets them out with their sources:
//! - **A maintenance reservation** (`scontrol create reservation flags=maint`) is known from its
//!   creation. A job may start on reserved nodes only if it ends, by its time limit, before the
//!   reservation begins (`job_test_resv` in `src/slurmctld/reservation.c`), and backfilling
//!   plans around it. On a machine of processors that is counted: a job of `p` processors whose
//!   run `[now, now + estimate + overrun)` reaches into a window that begins later may start
//!   only if, at the window's start, the processors of the running jobs still within their
//!   limits, plus `p`, fit in what the window leaves.
//! - **A drain** (`scontrol update state=drain`) lets the jobs on the node finish and starts
//!   nothing new there. Backfilling never expects a drained or down node to come back
//!   (`_build_node_lists`/`avail_node_bitmap` in `backfill.c`), so its plan holds the drained
//!   processors for ever: "unforeseen" below. Running jobs keep their processors; when they hold
//!   more than what stays in service, nothing is free until their ends repay the difference.

use crate::Time;

/// A foreseen period in which `processors` of the machine are out of service for every job (a
/// maintenance reservation): `[from, to)`, seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Its start, seconds.
    pub from: Time,
    /// Its end (exclusive), seconds.
    pub to: Time,
    /// Processors it takes out of service.
    pub processors: u32,
    /// The reservation whose members alone run on its processors while it lasts
    /// ([`crate::ReservationId::NONE`]: a maintenance window, in which no job runs). To every
    /// other job the two are the same.
    pub reservation: crate::ReservationId,
}

/// A foreseen period in which named nodes of a machine of node types are out of service for
/// every job (a maintenance reservation on `Nodes=`): `[from, to)`, seconds. As a [`Window`]
/// of counted processors: a job may start on one of its nodes only if it ends, by its time
/// limit and the overrun the rule allows, by the window's start; backfilling plans around it
/// and counts on its nodes at its end (Slurm's backfilling sees a reservation's end, where
/// it never expects a drained or down node back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeWindow {
    /// Its start, seconds.
    pub from: Time,
    /// Its end (exclusive), seconds.
    pub to: Time,
    /// The nodes it takes out of service (indexes in the pool's [`crate::PoolSpec::nodes`]),
    /// ascending, each once.
    pub nodes: Vec<u32>,
}

/// The machine's outages as the cluster keeps them.
#[derive(Debug, Clone, Default)]
pub(crate) struct Outages {
    /// Foreseen windows, by start.
    pub(crate) windows: Vec<Window>,
    /// On a machine of node types, foreseen windows on named nodes, by start.
    pub(crate) node_windows: Vec<NodeWindow>,
    /// On a machine of node types, the nodes of the node windows in force now, by node, each
    /// with the end of its window ([`Outages::windowed_at`] at the last change).
    pub(crate) windowed: Vec<(u32, Time)>,
    /// Of those, the nodes neither drained nor down: they come back at their window's end, and
    /// plans count on them then.
    pub(crate) returning: Vec<(u32, Time)>,
    /// Processors drained now, without notice (their return is never planned with).
    pub(crate) drained: u32,
    /// Processors running jobs hold beyond what is in service: their ends repay it first.
    pub(crate) owed: u32,
}

impl Outages {
    /// Whether any outage is known at all: then a job's fit and EASY's shadow count them.
    pub(crate) fn any(&self) -> bool {
        !self.windows.is_empty()
            || self.drained > 0
            || self.owed > 0
            || !self.node_windows.is_empty()
    }

    /// Whether a node window is still to come or in force at `now`: then a job's fit on the
    /// nodes depends on how long it may run ([`Outages::closed_nodes`]).
    pub(crate) fn node_windows_after(&self, now: Time) -> bool {
        self.node_windows.iter().any(|w| w.to > now)
    }

    /// The nodes of the node windows overlapping `[now, kill)`: a job that may run until
    /// `kill` may not start on them now (`job_test_resv` in `reservation.c`: a job overlapping
    /// a MAINT reservation does not start on its nodes; those of a window in force are out of
    /// service anyway). Ascending, each once; empty if none.
    pub(crate) fn closed_nodes(&self, now: Time, kill: Time) -> Vec<u32> {
        let mut nodes: Vec<u32> = self
            .node_windows
            .iter()
            .take_while(|w| w.from < kill)
            .filter(|w| w.to > now)
            .flat_map(|w| w.nodes.iter().copied())
            .collect();
        nodes.sort_unstable();
        nodes.dedup();
        nodes
    }

    /// When node `n`, out of service for a node window alone, comes back (`None`: it is not).
    pub(crate) fn returns_at(&self, n: u32) -> Option<Time> {
        self.returning
            .binary_search_by_key(&n, |&(node, _)| node)
            .ok()
            .map(|i| self.returning[i].1)
    }

    /// Whether node `n` is in a node window overlapping `[from, to)`.
    pub(crate) fn node_closed_over(&self, n: u32, from: Time, to: Time) -> bool {
        self.node_windows
            .iter()
            .take_while(|w| w.from < to)
            .any(|w| w.to > from && w.nodes.binary_search(&n).is_ok())
    }

    /// The nodes of the node windows in force at `now`, each with the end of the last of
    /// them to end, by node.
    pub(crate) fn windowed_at(&self, now: Time) -> Vec<(u32, Time)> {
        let mut nodes: Vec<(u32, Time)> = self
            .node_windows
            .iter()
            .take_while(|w| w.from <= now)
            .filter(|w| now < w.to)
            .flat_map(|w| w.nodes.iter().map(|&n| (n, w.to)))
            .collect();
        nodes.sort_unstable_by_key(|&(n, to)| (n, std::cmp::Reverse(to)));
        nodes.dedup_by_key(|&mut (n, _)| n);
        nodes
    }

    /// Processors the windows take out of service at `t`.
    pub(crate) fn reserved_at(&self, t: Time) -> u32 {
        self.windows
            .iter()
            .take_while(|w| w.from <= t)
            .filter(|w| t < w.to)
            .map(|w| w.processors)
            .sum()
    }

    /// Processors in service at `now` on a machine of `machine` processors.
    pub(crate) fn in_service(&self, machine: u32, now: Time) -> u32 {
        machine.saturating_sub(self.drained.saturating_add(self.reserved_at(now)))
    }

    /// Whether a job of `processors` that runs at most until `kill` (seconds) may start at
    /// `now`: at the start of every window that begins within its run, the processors of the
    /// running jobs still within their limits then (`load_at`) plus its own fit in what the
    /// windows and the drain leave of the machine.
    pub(crate) fn allows(
        &self,
        machine: u32,
        now: Time,
        processors: u32,
        kill: Time,
        load_at: impl Fn(Time) -> u32,
    ) -> bool {
        self.windows
            .iter()
            .filter(|w| w.from > now && w.from < kill)
            .all(|w| {
                let left =
                    machine.saturating_sub(self.drained.saturating_add(self.reserved_at(w.from)));
                load_at(w.from).saturating_add(processors) <= left
            })
    }

    /// What a plan of the machine must hold besides running jobs from `now` on: the drained
    /// processors for ever, and each window's processors over what is left of it, as
    /// `(from, to, processors)`.
    pub(crate) fn holds(&self, now: Time) -> impl Iterator<Item = (Time, Time, u32)> + '_ {
        let drained = (self.drained > 0).then_some((now, Time::MAX, self.drained));
        drained.into_iter().chain(
            self.windows
                .iter()
                .filter(move |w| w.to > now)
                .map(move |w| (w.from.max(now), w.to, w.processors)),
        )
    }

    /// EASY's shadow on a machine with outages: the earliest instant at or after `earliest`
    /// from which a job of `needed` processors running `duration` seconds finds them free
    /// throughout, with `free` free now and the running jobs releasing theirs at their expected
    /// ends (`releases`, earliest first), and how many more are free throughout its run then
    /// (the extra). Windows take theirs at their starts and give them back at their ends; the
    /// drain holds for ever; what running jobs owe is repaid by their first releases.
    pub(crate) fn shadow(
        &self,
        now: Time,
        earliest: Time,
        free: u32,
        needed: u32,
        duration: Time,
        releases: impl Iterator<Item = (Time, u32)>,
    ) -> (Time, u32) {
        // the level of free processors as steps (time, change), from `now` on
        let mut steps: Vec<(Time, i64)> = releases.map(|(t, p)| (t, i64::from(p))).collect();
        for w in &self.windows {
            if w.to <= now {
                continue;
            }
            if w.from > now {
                steps.push((w.from, -i64::from(w.processors)));
            }
            steps.push((w.to, i64::from(w.processors)));
        }
        steps.sort_by_key(|s| s.0);
        let level_now = i64::from(free) - i64::from(self.owed);
        // the level from each step on: (time, level)
        let mut levels: Vec<(Time, i64)> = vec![(now, level_now)];
        for (t, change) in steps {
            let t = t.max(now);
            let level = levels.last().map_or(level_now, |l| l.1) + change;
            match levels.last_mut() {
                Some(last) if last.0 == t => last.1 = level,
                _ => levels.push((t, level)),
            }
        }
        let needed = i64::from(needed);
        for (i, &(t, _)) in levels.iter().enumerate() {
            let start = t.max(earliest);
            if i + 1 < levels.len() && levels[i + 1].0 <= start {
                continue; // this step ends before the earliest start
            }
            let end = start.saturating_add(duration.max(1));
            let least = levels[i..]
                .iter()
                .take_while(|l| l.0 < end)
                .map(|l| l.1)
                .min()
                .unwrap_or(i64::MIN);
            if least >= needed {
                return (start, u32::try_from(least - needed).unwrap_or(u32::MAX));
            }
        }
        (Time::MAX, 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(from: Time, to: Time, processors: u32) -> Window {
        Window {
            from,
            to,
            processors,
            reservation: crate::ReservationId::NONE,
        }
    }

    #[test]
    fn a_window_counts_only_from_its_start_to_its_end() {
        let o = Outages {
            windows: vec![window(100, 200, 4), window(150, 300, 2)],
            ..Outages::default()
        };
        assert_eq!(o.reserved_at(99), 0);
        assert_eq!(o.reserved_at(100), 4);
        assert_eq!(o.reserved_at(150), 6);
        assert_eq!(o.reserved_at(200), 2);
        assert_eq!(o.reserved_at(300), 0);
        assert_eq!(o.in_service(10, 160), 4);
    }

    #[test]
    fn a_job_reaching_into_a_window_starts_only_if_the_window_leaves_room() {
        // 10 processors; 8 reserved over [100, 200); 1 running until 150 by its limit
        let o = Outages {
            windows: vec![window(100, 200, 8)],
            ..Outages::default()
        };
        let load = |t: Time| if t < 150 { 1 } else { 0 };
        assert!(o.allows(10, 0, 9, 100, load), "ends as the window begins");
        assert!(!o.allows(10, 0, 2, 101, load), "1 + 2 > 10 - 8");
        assert!(o.allows(10, 0, 1, 500, load), "1 + 1 <= 2");
        assert!(
            o.allows(10, 100, 9, 500, load),
            "a window begun is in the free count"
        );
    }

    #[test]
    fn the_shadow_moves_past_a_window_the_job_cannot_share() {
        // 10 processors, 6 free now, a job of 4 ends at 50; 8 reserved over [100, 200)
        let o = Outages {
            windows: vec![window(100, 200, 8)],
            ..Outages::default()
        };
        // 8 processors for 30 s: from 50 to 80, before the window
        assert_eq!(o.shadow(0, 0, 6, 8, 30, [(50, 4)].into_iter()), (50, 2));
        // 8 for 60 s would reach into the window: after it
        assert_eq!(o.shadow(0, 0, 6, 8, 60, [(50, 4)].into_iter()), (200, 2));
        // 2 for 500 s fits now beside the window, with nothing to spare in it
        assert_eq!(o.shadow(0, 0, 6, 2, 500, [(50, 4)].into_iter()), (0, 0));
        // 3 for 500 s never fits beside it: after it
        assert_eq!(o.shadow(0, 0, 6, 3, 500, [(50, 4)].into_iter()), (200, 7));
    }

    #[test]
    fn a_node_window_closes_its_nodes_to_jobs_reaching_into_it_and_holds_them_while_in_force() {
        let o = Outages {
            node_windows: vec![
                NodeWindow {
                    from: 100,
                    to: 200,
                    nodes: vec![1, 2],
                },
                NodeWindow {
                    from: 150,
                    to: 300,
                    nodes: vec![2, 3],
                },
            ],
            ..Outages::default()
        };
        assert!(
            o.closed_nodes(0, 100).is_empty(),
            "ends as the window begins"
        );
        assert_eq!(o.closed_nodes(0, 101), vec![1, 2]);
        assert_eq!(o.closed_nodes(0, 500), vec![1, 2, 3]);
        assert_eq!(o.closed_nodes(200, 500), vec![2, 3], "the first is over");
        assert_eq!(o.windowed_at(99), vec![]);
        assert_eq!(o.windowed_at(160), vec![(1, 200), (2, 300), (3, 300)]);
        assert_eq!(o.windowed_at(300), vec![]);
        assert!(o.node_closed_over(3, 250, 260));
        assert!(!o.node_closed_over(1, 200, 400));
        assert!(o.node_windows_after(299));
        assert!(!o.node_windows_after(300));
    }

    #[test]
    fn what_running_jobs_owe_is_repaid_before_anything_is_free() {
        let o = Outages {
            drained: 4,
            owed: 2,
            ..Outages::default()
        };
        // nothing free now, 2 owed: the release of 3 at 10 leaves 1, of 5 at 20 leaves 6
        assert_eq!(
            o.shadow(0, 0, 0, 4, 10, [(10, 3), (20, 5)].into_iter()),
            (20, 2)
        );
        assert_eq!(o.holds(5).collect::<Vec<_>>(), vec![(5, Time::MAX, 4)]);
    }
}
