//! The free-processor profile of conservative backfilling: how many processors are expected to be
//! free at each future instant, given the running jobs (until start + estimate) and the
//! reservations of waiting jobs (Mu'alem & Feitelson 2001; paper 002, section 3).

use crate::Time;

/// A step function of free processors from `now` on: `steps[i].1` processors are free from
/// `steps[i].0` until `steps[i + 1].0`; the last step lasts forever (the whole machine, once
/// every running job and reservation is over). Step times are strictly increasing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Profile {
    steps: Vec<(Time, u32)>,
}

impl Profile {
    /// The profile at `now` with `free` processors free, the running jobs' processors coming
    /// back at their expected ends (`releases`: expected end, processors) and the `reserved`
    /// slots (start, end, processors) taken. Times at or before `now` count as now. Built in one
    /// sort, O(n log n) for n jobs.
    pub(crate) fn new(
        now: Time,
        free: u32,
        releases: impl IntoIterator<Item = (Time, u32)>,
        reserved: impl IntoIterator<Item = (Time, Time, u32)>,
    ) -> Profile {
        let mut changes: Vec<(Time, i64)> = releases
            .into_iter()
            .map(|(end, processors)| (end.max(now), i64::from(processors)))
            .collect();
        for (start, end, processors) in reserved {
            let (start, end) = (start.max(now), end.max(now));
            if end > start {
                changes.push((start, -i64::from(processors)));
                changes.push((end, i64::from(processors)));
            }
        }
        changes.sort_unstable_by_key(|c| c.0);
        let mut steps: Vec<(Time, u32)> = Vec::with_capacity(changes.len() + 1);
        let mut level = i64::from(free);
        let mut at = now;
        let mut i = 0;
        loop {
            while i < changes.len() && changes[i].0 == at {
                level += changes[i].1;
                i += 1;
            }
            debug_assert!(level >= 0, "the reservations overlap");
            let value = u32::try_from(level.max(0)).unwrap_or(u32::MAX);
            if steps.last().is_none_or(|s| s.1 != value) {
                steps.push((at, value));
            }
            match changes.get(i) {
                Some(&(t, _)) => at = t,
                None => break,
            }
        }
        Profile { steps }
    }

    /// The index of the step holding instant `t` (`t` at or after the profile's start).
    fn index_at(&self, t: Time) -> usize {
        self.steps.partition_point(|s| s.0 <= t).saturating_sub(1)
    }

    /// Makes a step begin at `t` and returns its index.
    fn split(&mut self, t: Time) -> usize {
        let i = self.index_at(t);
        if self.steps[i].0 == t {
            return i;
        }
        self.steps.insert(i + 1, (t, self.steps[i].1));
        i + 1
    }

    /// The steps covering [start, end) (split at both ends), clipped to the profile's start;
    /// none for an empty interval.
    fn span(&mut self, start: Time, end: Time) -> std::ops::Range<usize> {
        let start = start.max(self.steps[0].0);
        if end <= start {
            return 0..0;
        }
        self.split(start)..self.split(end)
    }

    /// Takes `processors` over [start, end). The caller guarantees they are free there
    /// ([`Profile::earliest_fit`] found the slot).
    pub(crate) fn reserve(&mut self, start: Time, end: Time, processors: u32) {
        let span = self.span(start, end);
        for step in &mut self.steps[span] {
            debug_assert!(step.1 >= processors, "reserving more than is free");
            step.1 = step.1.saturating_sub(processors);
        }
    }

    /// Gives back `processors` over [start, end) (a reservation that is being moved), and merges
    /// the steps that become equal.
    pub(crate) fn release(&mut self, start: Time, end: Time, processors: u32) {
        let span = self.span(start, end);
        for step in &mut self.steps[span] {
            step.1 += processors;
        }
        self.steps.dedup_by_key(|step| step.1);
    }

    /// The earliest time at or after `from` at which `processors` are free for `duration`
    /// seconds. Scans the steps from `from`: a step with too few processors moves the candidate
    /// start to the step's end. Always found: the last step has the whole machine.
    pub(crate) fn earliest_fit(&self, from: Time, processors: u32, duration: Time) -> Time {
        let mut start = from;
        let mut k = self.index_at(from);
        while k < self.steps.len() {
            let next = self.steps.get(k + 1).map_or(Time::MAX, |s| s.0);
            if self.steps[k].1 < processors {
                start = next;
            } else if next >= start.saturating_add(duration) {
                return start;
            }
            k += 1;
        }
        start
    }

    /// Free processors at instant `t`.
    #[cfg(test)]
    pub(crate) fn free_at(&self, t: Time) -> u32 {
        self.steps[self.index_at(t)].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 processors; 4 free now (t = 0), +3 at t = 10, +3 at t = 20.
    fn profile() -> Profile {
        Profile::new(0, 4, [(10, 3), (20, 3)], [])
    }

    #[test]
    fn builds_the_step_function_of_releases() {
        let p = profile();
        assert_eq!(p.steps, vec![(0, 4), (10, 7), (20, 10)]);
        assert_eq!(
            Profile::new(5, 0, [(3, 2), (5, 1), (9, 1)], []).steps,
            vec![(5, 3), (9, 4)]
        );
        // Reservations taken out in the same pass: 10 free from 0 except [4, 8) with 6 held.
        assert_eq!(
            Profile::new(0, 10, [], [(4, 8, 6)]).steps,
            vec![(0, 10), (4, 4), (8, 10)]
        );
        let mut step_by_step = profile();
        step_by_step.reserve(10, 40, 6);
        assert_eq!(
            Profile::new(0, 4, [(10, 3), (20, 3)], [(10, 40, 6)]),
            step_by_step
        );
    }

    #[test]
    fn earliest_fit_skips_steps_without_room() {
        let p = profile();
        assert_eq!(p.earliest_fit(0, 4, 100), 0);
        assert_eq!(p.earliest_fit(0, 5, 100), 10);
        assert_eq!(p.earliest_fit(0, 8, 1), 20);
        assert_eq!(p.earliest_fit(12, 7, 5), 12);
        assert_eq!(p.earliest_fit(0, 10, 0), 20);
    }

    #[test]
    fn a_reservation_leaves_a_hole_that_short_jobs_can_use() {
        let mut p = profile();
        // A 6-wide job for 30 s can start at 10 at the earliest.
        let start = p.earliest_fit(0, 6, 30);
        assert_eq!(start, 10);
        p.reserve(start, start + 30, 6);
        assert_eq!(p.steps, vec![(0, 4), (10, 1), (20, 4), (40, 10)]);
        // A 4-wide job fits before it only if it ends by 10; a longer one waits until 40.
        assert_eq!(p.earliest_fit(0, 4, 10), 0);
        assert_eq!(p.earliest_fit(0, 4, 11), 20);
        assert_eq!(p.earliest_fit(0, 5, 11), 40);
    }

    #[test]
    fn release_restores_and_merges() {
        let mut p = profile();
        let before = p.clone();
        p.reserve(10, 40, 6);
        p.release(10, 40, 6);
        assert_eq!(p, before);
        p.reserve(3, 7, 2);
        assert_eq!(p.free_at(5), 2);
        p.release(3, 7, 2);
        assert_eq!(p, before);
    }
}
