//! The free-processor profile of conservative backfilling and dynP: how many processors are
//! expected to be free at each future instant, given the running jobs (until start + estimate)
//! and the reservations of waiting jobs (Mu'alem & Feitelson 2001; paper 002, section 3).
//!
//! The cluster keeps one profile for its whole life and updates it as jobs are reserved, start,
//! end early and time passes, so a pass never rebuilds it from the running jobs. It is a sorted
//! vector of steps with no two equal neighbours: the step holding an instant is found by binary
//! search, a placement scans the steps from there until it finds room, and a reservation or
//! release changes only the steps it covers (splitting at its two ends and merging there
//! again). A scan is O(steps) but over contiguous memory; a treap with lazy range updates and
//! min/max jumps (O(log steps) per operation) measured 5x slower on SDSC-SP2 and on the closed
//! loop, where holes are many and short (see docs/development/internals.md, "One scheduling pass").

use crate::Time;

/// Where [`Profile::fit`] found room: the start, and the index of the step it falls in (valid
/// until the profile changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// The earliest start, seconds.
    pub start: Time,
    /// The step holding `start`.
    index: usize,
}

/// A step function of free processors: `steps[i].1` processors are free from `steps[i].0`
/// until `steps[i + 1].0`; the last step lasts forever. No two neighbouring steps hold the same
/// count (every update merges the steps it made equal), so the vector stays as short as the
/// function allows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    steps: Vec<(Time, i64)>,
}

impl Profile {
    /// A machine with `processors` processors all free from the beginning of time.
    pub fn new(processors: u32) -> Profile {
        Profile {
            steps: vec![(Time::MIN, i64::from(processors))],
        }
    }

    /// The profile of `steps` ((time, free processors) in increasing time with no two
    /// neighbours equal, as the block profile's `steps` gives them): how
    /// conservative backfilling's fast path hands its profile to the plain loop.
    pub fn from_steps(steps: Vec<(Time, i64)>) -> Profile {
        debug_assert!(!steps.is_empty());
        debug_assert!(
            steps
                .windows(2)
                .all(|w| w[0].0 < w[1].0 && w[0].1 != w[1].1)
        );
        Profile { steps }
    }

    /// Every step ((time, free processors), in time order).
    pub fn all_steps(&self) -> &[(Time, i64)] {
        &self.steps
    }

    /// Makes this profile equal to `other`, reusing its memory (dynP's virtual schedules
    /// start from a copy of the running jobs' profile at every pass).
    pub fn copy_from(&mut self, other: &Profile) {
        self.steps.clone_from(&other.steps);
    }

    /// Forgets the steps before `now`.
    pub fn advance(&mut self, now: Time) {
        let i = self.index_at(now);
        self.steps.drain(..i);
        self.steps[0].0 = self.steps[0].0.max(now);
    }

    /// The steps from `from` on, equal neighbours merged.
    #[cfg(test)]
    pub fn steps(&self, from: Time) -> Vec<(Time, i64)> {
        let mut steps = self.steps[self.index_at(from)..].to_vec();
        steps[0].0 = steps[0].0.max(from);
        steps.dedup_by(|b, a| a.1 == b.1);
        steps
    }

    /// The number of steps: what a scan from the profile's start would cross at most.
    pub fn step_count(&self) -> usize {
        self.steps.len()
    }

    /// The index of the step holding instant `t` (`t` at or after the profile's start), by
    /// binary search.
    fn index_at(&self, t: Time) -> usize {
        match self.steps.get(1) {
            // Most searches are for now, in the first step.
            Some(second) if t < second.0 => 0,
            None => 0,
            Some(_) => self.steps.partition_point(|s| s.0 <= t).saturating_sub(1),
        }
    }

    /// Merges step `i` into step `i - 1` if they hold the same count.
    fn merge_at(&mut self, i: usize) {
        if i > 0 && i < self.steps.len() && self.steps[i - 1].1 == self.steps[i].1 {
            self.steps.remove(i);
        }
    }

    /// Adds `delta` processors over [start, end), clipped to the profile's start.
    /// The step holding the start is found by walking back from step `at_or_after` if given
    /// (a step at or after the one holding it), else by binary search.
    fn add(&mut self, start: Time, end: Time, delta: i64, at_or_after: Option<usize>) {
        let start = start.max(self.steps[0].0);
        if end > start {
            let hint = match at_or_after {
                Some(step) => {
                    let mut i = step.min(self.steps.len() - 1);
                    while i > 0 && self.steps[i].0 > start {
                        i -= 1;
                    }
                    i
                }
                None => self.index_at(start),
            };
            self.add_from(hint, start, end, delta);
        }
    }

    /// Adds `delta` processors over [start, end) (`start < end`), `start` falling in step
    /// `hint`: splits at both ends, changes only the steps in between (found from `hint` by
    /// [`first_at_or_after`]) and merges again at both ends.
    fn add_from(&mut self, hint: usize, start: Time, end: Time, delta: i64) {
        debug_assert!(start < end);
        debug_assert!(
            self.steps[hint].0 <= start && self.steps.get(hint + 1).is_none_or(|s| start < s.0)
        );
        let i = if self.steps[hint].0 == start {
            hint
        } else {
            self.steps.insert(hint + 1, (start, self.steps[hint].1));
            hint + 1
        };
        let j = i + 1 + first_at_or_after(&self.steps[i + 1..], end);
        if self.steps.get(j).is_none_or(|s| s.0 != end) {
            self.steps.insert(j, (end, self.steps[j - 1].1));
        }
        for step in &mut self.steps[i..j] {
            step.1 += delta;
        }
        // Inside [i, j) the counts moved together, so only its ends can now equal a
        // neighbour; the end first, so that the start's index still holds.
        self.merge_at(j);
        self.merge_at(i);
    }

    /// Takes `processors` over [start, end). The caller guarantees they are free there
    /// ([`Profile::earliest_fit`] found the slot).
    pub fn reserve(&mut self, start: Time, end: Time, processors: u32) {
        self.add(start, end, -i64::from(processors), None);
    }

    /// Takes `processors` for `duration` seconds from `fit` (found by [`Profile::fit`] on the
    /// profile as it is now), without searching for the step where it begins.
    pub fn reserve_fit(&mut self, fit: Fit, duration: Time, processors: u32) {
        if duration > 0 {
            self.add_from(
                fit.index,
                fit.start,
                fit.start + duration,
                -i64::from(processors),
            );
        }
    }

    /// [`Profile::reserve`] of `processors` over [start, end) where `start` is at or before
    /// `fit`'s start (found by [`Profile::fit`] on the profile as it is now): the step
    /// holding `start` is found by walking back from `fit`'s step rather than by a binary
    /// search (a backfill reservation begins at its start rounded down to a grid of a minute
    /// or so, a step or two back).
    pub fn reserve_before(&mut self, fit: Fit, start: Time, end: Time, processors: u32) {
        debug_assert!(start <= fit.start);
        self.add(start, end, -i64::from(processors), Some(fit.index));
    }

    /// Gives back `processors` over [start, end) (a reservation that is being moved, or the end
    /// of a run that ended before its estimate).
    pub fn release(&mut self, start: Time, end: Time, processors: u32) {
        self.add(start, end, i64::from(processors), None);
    }

    /// The earliest time at or after `from` at which `processors` are free for `duration`
    /// seconds. Scans the steps from `from`: a step with too few processors moves the candidate
    /// start to the step's end. Always found: the last step has the whole machine.
    pub fn earliest_fit(&self, from: Time, processors: u32, duration: Time) -> Time {
        self.fit(from, processors, duration).start
    }

    /// The fewest processors free over [from, t) as a function of t, into `out`: a staircase
    /// of (t, fewest free over [from, t] so far) entries, each lower than the one before, the
    /// first at `from`. The processors a job of `duration` seconds could have from `from` are
    /// those of the last entry before `from + duration` ([`least_free_for`]).
    pub fn staircase(&self, from: Time, out: &mut Vec<(Time, i64)>) {
        out.clear();
        let k = self.index_at(from);
        let mut least = self.steps[k].1;
        out.push((from, least));
        for &(at, free) in &self.steps[k + 1..] {
            if free < least {
                least = free;
                out.push((at, least));
            }
        }
    }

    /// [`Profile::earliest_fit`], with the step the start falls in, for
    /// [`Profile::reserve_fit`].
    pub fn fit(&self, from: Time, processors: u32, duration: Time) -> Fit {
        self.scan(from, i64::from(processors), duration, None)
    }

    /// Where a reservation of `processors` over [start, end) would go if it were placed anew
    /// at its earliest slot at or after `from`, with every other reservation held: the same as
    /// [`Profile::release`], [`Profile::earliest_fit`] (for `duration` seconds) and reserving
    /// it again, without changing the profile (conservative backfilling's compression, where
    /// most reservations do not move). The reservation is clipped to the profile's start, like
    /// [`Profile::release`].
    pub fn refit(
        &self,
        from: Time,
        start: Time,
        end: Time,
        processors: u32,
        duration: Time,
    ) -> Time {
        // Only the part from `from` on matters to the scan.
        let start = start.max(from).max(self.steps[0].0);
        let own = (start < end).then_some((start, end, i64::from(processors)));
        self.scan(from, i64::from(processors), duration, own).start
    }

    /// The scan of [`Profile::earliest_fit`] for `need` processors, with `own` (start, end,
    /// processors; `from <= start < end`) counted as free on top of the profile (a reservation
    /// being re-placed).
    fn scan(&self, from: Time, need: i64, duration: Time, own: Option<(Time, Time, i64)>) -> Fit {
        match own {
            None => self.scan_plain(from, need, duration),
            Some(own) => self.scan_own(from, need, duration, own),
        }
    }

    /// [`Profile::scan`] without a reservation to count as free: the hot loop of every
    /// placement.
    fn scan_plain(&self, from: Time, need: i64, duration: Time) -> Fit {
        let steps = self.steps.as_slice();
        let last = steps.len() - 1;
        let mut k = self.index_at(from);
        let mut fit = Fit {
            start: from,
            index: k,
        };
        loop {
            // A run of steps with too few processors: the start moves past it.
            if steps[k].1 < need {
                while k < last && steps[k].1 < need {
                    k += 1;
                }
                fit = Fit {
                    start: steps[k].0,
                    index: k,
                };
                if steps[k].1 < need {
                    fit.start = Time::MAX; // more processors than the machine has: never
                    return fit;
                }
            }
            // A run with enough, from the start: the job fits once it reaches the end.
            let end = fit.start.saturating_add(duration);
            while k < last {
                if steps[k].1 < need {
                    break;
                }
                if steps[k + 1].0 >= end {
                    return fit;
                }
                k += 1;
            }
            if k == last {
                // The last step lasts forever (checked above if it has too few).
                if steps[k].1 < need {
                    fit.start = Time::MAX;
                }
                return fit;
            }
        }
    }

    /// [`Profile::scan`] counting `own` as free. A step is looked at in up to three pieces
    /// (before, inside and after `own`); splitting a step does not change where the scan
    /// stops, so the pieces need not be steps.
    fn scan_own(
        &self,
        from: Time,
        need: i64,
        duration: Time,
        (own_start, own_end, bonus): (Time, Time, i64),
    ) -> Fit {
        let mut k = self.index_at(from);
        let mut fit = Fit {
            start: from,
            index: k,
        };
        // One piece of step `k`: `free` processors until `until`. Returns whether the job
        // fits from `fit.start`.
        let piece = |fit: &mut Fit, k: usize, free: i64, until: Time| {
            if free < need {
                fit.start = until;
                fit.index = k; // moved on below at the step's end
                false
            } else {
                until >= fit.start.saturating_add(duration)
            }
        };
        while k < self.steps.len() {
            let (begin, free) = self.steps[k];
            let next = self.steps.get(k + 1).map_or(Time::MAX, |s| s.0);
            let found = if own_start < next && own_end > begin {
                (begin < own_start && piece(&mut fit, k, free, own_start))
                    || piece(&mut fit, k, free + bonus, own_end.min(next))
                    || (own_end < next && piece(&mut fit, k, free, next))
            } else {
                piece(&mut fit, k, free, next)
            };
            if found {
                break;
            }
            if fit.start == next {
                fit.index = k + 1;
            }
            k += 1;
        }
        fit
    }

    /// Free processors at instant `t`.
    #[cfg(test)]
    pub fn free_at(&self, t: Time) -> i64 {
        self.steps[self.index_at(t)].1
    }
}

/// The number of `steps` before the first one at or after `t` (`steps` in time order): a few
/// steps walked, then a binary search (most reservations cover a few steps, a long one on a
/// full plan a thousand).
fn first_at_or_after(steps: &[(Time, i64)], t: Time) -> usize {
    const WALK: usize = 8;
    match steps.iter().take(WALK).position(|s| s.0 >= t) {
        Some(k) => k,
        None if steps.len() <= WALK => steps.len(),
        None => WALK + steps[WALK..].partition_point(|s| s.0 < t),
    }
}

/// The fewest processors free over [from, from + duration) by a [`Profile::staircase`] made
/// from `from` (a duration under a second counts as one second).
pub fn least_free_for(staircase: &[(Time, i64)], duration: Time) -> i64 {
    let Some(&(from, _)) = staircase.first() else {
        return 0;
    };
    let end = from.saturating_add(duration.max(1));
    let k = staircase.partition_point(|s| s.0 < end);
    staircase[k.saturating_sub(1)].1
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

    /// A tiny deterministic generator for the randomized comparisons below.
    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *state >> 33
    }

    /// The profile as the plain step function the old implementation kept (a dense array of
    /// free counts per second over 0..200), for comparison.
    fn dense(p: &Profile) -> Vec<i64> {
        (0..200).map(|t| p.free_at(t)).collect()
    }

    #[test]
    fn updates_keep_the_steps_merged_and_agree_with_a_dense_model() {
        for first in [7, 11, 2026] {
            let mut seed = first;
            let mut p = Profile::new(16);
            p.advance(0);
            let mut model = vec![16i64; 200];
            let mut held: Vec<(Time, Time, u32)> = Vec::new();
            for _ in 0..2000 {
                let reserve = held.is_empty() || lcg(&mut seed) % 3 != 0;
                if reserve {
                    let processors = (lcg(&mut seed) % 9) as u32;
                    let duration = (lcg(&mut seed) % 40) as Time + 1;
                    let from = (lcg(&mut seed) % 100) as Time;
                    let fit = p.fit(from, processors, duration);
                    let start = fit.start;
                    assert_eq!(p.earliest_fit(from, processors, duration), start);
                    if start + duration > 200 {
                        continue;
                    }
                    if lcg(&mut seed) % 2 == 0 {
                        p.reserve_fit(fit, duration, processors);
                    } else {
                        p.reserve(start, start + duration, processors);
                    }
                    for free in &mut model[start as usize..(start + duration) as usize] {
                        *free -= i64::from(processors);
                        assert!(*free >= 0);
                    }
                    held.push((start, start + duration, processors));
                } else {
                    let k = (lcg(&mut seed) as usize) % held.len();
                    let (start, end, processors) = held.swap_remove(k);
                    // Moving a reservation: refit agrees with release + earliest_fit.
                    let from = (lcg(&mut seed) % 100) as Time;
                    let before = p.clone();
                    let refit = p.refit(from, start, end, processors, end - start);
                    assert_eq!(p, before, "refit leaves the profile as it was");
                    p.release(start, end, processors);
                    assert_eq!(p.earliest_fit(from, processors, end - start), refit);
                    for free in &mut model[start as usize..end as usize] {
                        *free += i64::from(processors);
                    }
                }
                assert_eq!(dense(&p), model);
                assert!(
                    p.steps
                        .windows(2)
                        .all(|w| w[0].1 != w[1].1 && w[0].0 < w[1].0),
                    "steps sorted and merged: {:?}",
                    p.steps
                );
            }
        }
    }

    #[test]
    fn refit_counts_the_reservations_own_processors_as_free() {
        let mut p = profile(); // (0, 4), (10, 7), (20, 10)
        p.reserve(20, 30, 8);
        // Its own slot is the earliest for the same job; a shorter job fits at 10 once it moves.
        assert_eq!(p.refit(0, 20, 30, 8, 10), 20);
        assert_eq!(p.refit(0, 20, 30, 7, 10), 10);
        assert_eq!(p.refit(0, 20, 30, 4, 10), 0);
        assert_eq!(p.steps(0), vec![(0, 4), (10, 7), (20, 2), (30, 10)]);
        assert_eq!(p.step_count(), 4);
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

    #[test]
    fn the_staircase_gives_the_fewest_free_processors_over_a_duration() {
        let mut profile = Profile::new(10);
        profile.reserve(0, 100, 4); // 6 free until 100
        profile.reserve(50, 80, 5); // 1 free over [50, 80)
        profile.reserve(200, 300, 8); // 2 free over [200, 300)
        let mut staircase = Vec::new();
        profile.staircase(20, &mut staircase);
        assert_eq!(staircase, vec![(20, 6), (50, 1)]);
        assert_eq!(least_free_for(&staircase, 0), 6);
        assert_eq!(least_free_for(&staircase, 30), 6); // [20, 50)
        assert_eq!(least_free_for(&staircase, 31), 1); // reaches 50
        assert_eq!(least_free_for(&staircase, 10_000), 1);
        profile.staircase(80, &mut staircase);
        assert_eq!(staircase, vec![(80, 6), (200, 2)]);
        assert_eq!(least_free_for(&staircase, 120), 6);
        assert_eq!(least_free_for(&staircase, 121), 2);
    }

    /// The earliest start at or after `from` where `need` processors are free for `duration`
    /// seconds (at least the instant itself), by testing every candidate start (`from` and
    /// each later step's beginning) against every step it would overlap.
    fn earliest_by_trying_every_start(p: &Profile, from: Time, need: i64, duration: Time) -> Time {
        let steps = &p.steps;
        let candidates =
            std::iter::once(from).chain(steps.iter().map(|s| s.0).filter(|&t| t > from));
        for t in candidates {
            let end = t + duration.max(1);
            let k0 = p.index_at(t);
            let room = steps[k0..]
                .iter()
                .enumerate()
                .take_while(|&(i, s)| i == 0 || s.0 < end)
                .all(|(_, s)| s.1 >= need);
            if room {
                return t;
            }
        }
        Time::MAX
    }

    /// A 10-processor profile after random placements (at, length, processors), each at its
    /// earliest fit from `at`.
    fn placed(placements: &[(Time, Time, u32)]) -> Profile {
        let mut p = Profile::new(10);
        for &(at, length, processors) in placements {
            let fit = p.fit(at, processors, length);
            p.reserve_fit(fit, length, processors);
        }
        p
    }

    proptest::proptest! {
        /// The scan finds the start that trying every start finds, and the step holding it,
        /// on profiles built by random placements.
        #[test]
        fn the_scan_finds_the_earliest_start_trying_every_start_finds(
            placements in proptest::collection::vec((0i64..200, 1i64..100, 1u32..8), 0..40),
            from in 0i64..300,
            need in 1i64..12,
            duration in 0i64..150,
        ) {
            let p = placed(&placements);
            let fit = p.scan_plain(from, need, duration);
            proptest::prop_assert_eq!(fit.start, earliest_by_trying_every_start(&p, from, need, duration));
            if fit.start != Time::MAX {
                proptest::prop_assert_eq!(fit.index, p.index_at(fit.start));
            }
        }

        /// A reservation placed from a fit's step, beginning up to that fit's start, leaves
        /// the profile a reservation found by binary search leaves.
        #[test]
        fn a_reservation_before_a_fit_is_a_reservation(
            placements in proptest::collection::vec((0i64..200, 1i64..100, 1u32..8), 0..40),
            from in 0i64..300,
            need in 1u32..8,
            duration in 1i64..150,
            back in 0i64..120,
            length in 1i64..200,
        ) {
            let mut p = placed(&placements);
            p.advance(from.min(100));
            let fit = p.fit(from, need, duration);
            let begin = fit.start - back;
            let mut searched = p.clone();
            searched.reserve(begin, fit.start + length, need);
            p.reserve_before(fit, begin, fit.start + length, need);
            proptest::prop_assert_eq!(p, searched);
        }
    }
}
