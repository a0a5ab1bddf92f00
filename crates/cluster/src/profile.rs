//! The free-processor profile of conservative backfilling and dynP: how many processors are
//! expected to be free at each future instant, given the running jobs (until start + estimate)
//! and the reservations of waiting jobs (Mu'alem & Feitelson 2001; paper 002, section 3).
//!
//! The cluster keeps one profile for its whole life and updates it as jobs are reserved, start,
//! end early and time passes, so a pass never rebuilds it from the running jobs. It is a sorted
//! vector of steps: a placement scans the steps from now until it finds room, and a reservation
//! touches the steps it covers. That is O(steps) per operation, but over contiguous memory; a
//! treap with lazy range updates and min/max jumps (O(log steps) per operation) measured 5x
//! slower on SDSC-SP2 and on the closed loop, where holes are many and short (see
//! ARCHITECTURE.md).

use crate::Time;

/// A step function of free processors: `steps[i].1` processors are free from `steps[i].0`
/// until `steps[i + 1].0`; the last step lasts forever.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Profile {
    steps: Vec<(Time, i64)>,
}

impl Profile {
    /// A machine with `processors` processors all free from the beginning of time.
    pub(crate) fn new(processors: u32) -> Profile {
        Profile {
            steps: vec![(Time::MIN, i64::from(processors))],
        }
    }

    /// Forgets the steps before `now`.
    pub(crate) fn advance(&mut self, now: Time) {
        let i = self.index_at(now);
        self.steps.drain(..i);
        self.steps[0].0 = self.steps[0].0.max(now);
    }

    /// The steps from `from` on, equal neighbours merged.
    #[cfg(test)]
    pub(crate) fn steps(&self, from: Time) -> Vec<(Time, i64)> {
        let mut steps = self.steps[self.index_at(from)..].to_vec();
        steps[0].0 = steps[0].0.max(from);
        steps.dedup_by(|b, a| a.1 == b.1);
        steps
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
            step.1 -= i64::from(processors);
        }
    }

    /// Gives back `processors` over [start, end) (a reservation that is being moved), and merges
    /// the steps that become equal.
    pub(crate) fn release(&mut self, start: Time, end: Time, processors: u32) {
        let span = self.span(start, end);
        for step in &mut self.steps[span] {
            step.1 += i64::from(processors);
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
            if self.steps[k].1 < i64::from(processors) {
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
    pub(crate) fn free_at(&self, t: Time) -> i64 {
        self.steps[self.index_at(t)].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10 processors; 4 free now (t = 0), +3 at t = 10, +3 at t = 20.
    fn profile() -> Profile {
        let mut p = Profile::new(10);
        p.reserve(0, 10, 3);
        p.reserve(0, 20, 3);
        p.advance(0);
        p
    }

    #[test]
    fn builds_the_step_function_of_releases() {
        assert_eq!(profile().steps(0), vec![(0, 4), (10, 7), (20, 10)]);
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
        let start = p.earliest_fit(0, 6, 30);
        assert_eq!(start, 10);
        p.reserve(start, start + 30, 6);
        assert_eq!(p.steps(0), vec![(0, 4), (10, 1), (20, 4), (40, 10)]);
        assert_eq!(p.earliest_fit(0, 4, 10), 0);
        assert_eq!(p.earliest_fit(0, 4, 11), 20);
        assert_eq!(p.earliest_fit(0, 5, 11), 40);
    }

    #[test]
    fn release_restores_and_advance_forgets_the_past() {
        let mut p = profile();
        let before = p.steps(0);
        p.reserve(10, 40, 6);
        p.release(10, 40, 6);
        assert_eq!(p.steps(0), before);
        p.advance(15);
        assert_eq!(p.steps(15), vec![(15, 7), (20, 10)]);
        assert_eq!(p.free_at(15), 7);
    }
}
