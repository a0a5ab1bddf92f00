//! The free-processor profile of conservative backfilling and dynP: how many processors are
//! expected to be free at each future instant, given the running jobs (until start + estimate)
//! and the reservations of waiting jobs (Mu'alem & Feitelson 2001; paper 002, section 3).
//!
//! The cluster keeps one profile for its whole life and updates it as jobs are reserved, start,
//! end early and time passes, so a pass never rebuilds it from the running jobs. It is a sorted
//! list of steps with no two equal neighbours: the step holding an instant is found by binary
//! search, a placement scans the steps from there until it finds room, and a reservation or
//! release changes only the steps it covers (splitting at its two ends and merging there
//! again). A scan is O(steps) but over contiguous memory; a treap with lazy range updates and
//! min/max jumps (O(log steps) per operation) measured 5x slower on SDSC-SP2 and on the closed
//! loop, where holes are many and short (see docs/development/internals.md, "One scheduling pass").
//!
//! The steps' times and counts are kept in two vectors, the counts as `i32`: a scan compares
//! eight counts (`LANES`) at a time with the need (one vector comparison for four counts on any
//! x86-64), and looks at a time only once per group. A machine has at most
//! `config::limits::MAX_PROCESSORS` (2^24) processors, so every count fits with room to spare.

use crate::Time;

/// How many counts a scan compares at once (two SSE2 comparisons of four `i32`s).
const LANES: usize = 8;

/// Where [`Profile::fit`] found room: the start, and the index of the step it falls in (valid
/// until the profile changes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fit {
    /// The earliest start, seconds.
    pub start: Time,
    /// The step holding `start`.
    index: usize,
}

/// A step function of free processors: `free[i]` processors are free from `times[i]` until
/// `times[i + 1]`; the last step lasts forever. No two neighbouring steps hold the same count
/// (every update merges the steps it made equal), so the vectors stay as short as the function
/// allows. Both vectors have the same length, never zero.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Profile {
    /// Each step's beginning, seconds, increasing.
    times: Vec<Time>,
    /// Each step's free processors.
    free: Vec<i32>,
}

/// A count of processors as the profile keeps it (within `i32` for any machine this crate is
/// given: see the module's documentation).
fn count(processors: i64) -> i32 {
    processors.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32
}

impl Profile {
    /// A machine with `processors` processors all free from the beginning of time.
    pub fn new(processors: u32) -> Profile {
        Profile {
            times: vec![Time::MIN],
            free: vec![count(i64::from(processors))],
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
        let (times, free) = steps.into_iter().map(|(t, f)| (t, count(f))).unzip();
        Profile { times, free }
    }

    /// Every step ((time, free processors), in time order).
    pub fn all_steps(&self) -> Vec<(Time, i64)> {
        (self.times.iter().zip(&self.free))
            .map(|(&t, &f)| (t, i64::from(f)))
            .collect()
    }

    /// Makes this profile equal to `other`, reusing its memory (dynP's virtual schedules
    /// start from a copy of the running jobs' profile at every pass).
    pub fn copy_from(&mut self, other: &Profile) {
        self.times.clone_from(&other.times);
        self.free.clone_from(&other.free);
    }

    /// Forgets the steps before `now`.
    pub fn advance(&mut self, now: Time) {
        let i = self.index_at(now);
        self.times.drain(..i);
        self.free.drain(..i);
        self.times[0] = self.times[0].max(now);
    }

    /// The steps from `from` on, equal neighbours merged.
    #[cfg(test)]
    pub fn steps(&self, from: Time) -> Vec<(Time, i64)> {
        let mut steps = self.all_steps().split_off(self.index_at(from));
        steps[0].0 = steps[0].0.max(from);
        steps.dedup_by(|b, a| a.1 == b.1);
        steps
    }

    /// The number of steps: what a scan from the profile's start would cross at most.
    pub fn step_count(&self) -> usize {
        self.times.len()
    }

    /// The index of the step holding instant `t` (`t` at or after the profile's start), by
    /// binary search.
    fn index_at(&self, t: Time) -> usize {
        match self.times.get(1) {
            // Most searches are for now, in the first step.
            Some(&second) if t < second => 0,
            None => 0,
            Some(_) => self.times.partition_point(|&s| s <= t).saturating_sub(1),
        }
    }

    /// Merges step `i` into step `i - 1` if they hold the same count.
    fn merge_at(&mut self, i: usize) {
        if i > 0 && i < self.free.len() && self.free[i - 1] == self.free[i] {
            self.times.remove(i);
            self.free.remove(i);
        }
    }

    /// Inserts a step beginning at `t` before step `i`, holding the count of step `i - 1`
    /// (`i > 0`): the function is unchanged.
    fn split(&mut self, i: usize, t: Time) {
        self.times.insert(i, t);
        self.free.insert(i, self.free[i - 1]);
    }

    /// Adds `delta` processors over [start, end), clipped to the profile's start.
    /// The step holding the start is found by walking back from step `at_or_after` if given
    /// (a step at or after the one holding it), else by binary search.
    fn add(&mut self, start: Time, end: Time, delta: i64, at_or_after: Option<usize>) {
        let start = start.max(self.times[0]);
        if end > start {
            let hint = match at_or_after {
                Some(step) => {
                    let mut i = step.min(self.times.len() - 1);
                    while i > 0 && self.times[i] > start {
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
            self.times[hint] <= start && self.times.get(hint + 1).is_none_or(|&t| start < t)
        );
        let i = if self.times[hint] == start {
            hint
        } else {
            self.split(hint + 1, start);
            hint + 1
        };
        let j = i + 1 + first_at_or_after(&self.times[i + 1..], end);
        if self.times.get(j) != Some(&end) {
            self.split(j, end);
        }
        let delta = count(delta);
        for free in &mut self.free[i..j] {
            *free += delta;
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
        let mut least = self.free[k];
        out.push((from, i64::from(least)));
        for (&at, &free) in self.times[k + 1..].iter().zip(&self.free[k + 1..]) {
            if free < least {
                least = free;
                out.push((at, i64::from(least)));
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
        let start = start.max(from).max(self.times[0]);
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
    /// placement. From a candidate start, the first step before the candidate's end with too
    /// few processors moves the candidate to the first step after it with enough; both found
    /// [`LANES`] steps at a time.
    fn scan_plain(&self, from: Time, need: i64, duration: Time) -> Fit {
        let never = |index| Fit {
            start: Time::MAX,
            index,
        };
        let mut k = self.index_at(from);
        // more processors than any count (the machine's, at most): never
        let Ok(need) = i32::try_from(need) else {
            return never(k);
        };
        let mut fit = Fit {
            start: from,
            index: k,
        };
        loop {
            if self.free[k] < need {
                // A run of steps with too few processors: the start moves past it.
                match first_at_least(&self.free, k + 1, need) {
                    Some(at) => k = at,
                    None => return never(k), // more processors than the machine has
                }
                fit = Fit {
                    start: self.times[k],
                    index: k,
                };
            }
            // A run with enough, from the start: the job fits unless a step before its end
            // has too few.
            let end = fit.start.saturating_add(duration);
            match first_below_before(&self.times, &self.free, k + 1, need, end) {
                Some(short) => k = short,
                None => return fit,
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
        while k < self.times.len() {
            let (begin, free) = (self.times[k], i64::from(self.free[k]));
            let next = self.times.get(k + 1).copied().unwrap_or(Time::MAX);
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
        i64::from(self.free[self.index_at(t)])
    }
}

/// Whether any of `counts` is below `need`: comparisons without a branch, which the compiler
/// makes vector instructions.
fn any_below(counts: &[i32], need: i32) -> bool {
    counts.iter().fold(false, |any, &c| any | (c < need))
}

/// Whether any of `counts` is at least `need` (as [`any_below`]).
fn any_at_least(counts: &[i32], need: i32) -> bool {
    counts.iter().fold(false, |any, &c| any | (c >= need))
}

/// The first of a group of [`LANES`] counts that `test` (a vector test over a slice) and
/// `one` (the same test of one count) pick, the group holding one: its half is found by
/// `test`, the count in it one by one.
fn first_in_group(
    group: &[i32],
    test: impl Fn(&[i32]) -> bool,
    one: impl Fn(i32) -> bool,
) -> usize {
    let (low, high) = group.split_at(LANES / 2);
    let (half, base) = if test(low) {
        (low, 0)
    } else {
        (high, LANES / 2)
    };
    base + half.iter().position(|&c| one(c)).unwrap_or(0)
}

/// The first step at or after `from` with a count below `need` that begins before `end`
/// (`times` increasing, as long as `free`): [`LANES`] steps at a time, a group's time looked at
/// once.
fn first_below_before(
    times: &[Time],
    free: &[i32],
    from: usize,
    need: i32,
    end: Time,
) -> Option<usize> {
    let steps = free.len().min(times.len());
    let mut at = from;
    while at + LANES <= steps {
        if times[at] >= end {
            return None;
        }
        let group = &free[at..at + LANES];
        if any_below(group, need) {
            let short = at + first_in_group(group, |g| any_below(g, need), |c| c < need);
            return (times[short] < end).then_some(short);
        }
        at += LANES;
    }
    (at..steps)
        .take_while(|&k| times[k] < end)
        .find(|&k| free[k] < need)
}

/// The first step at or after `from` with a count of at least `need`.
fn first_at_least(free: &[i32], from: usize, need: i32) -> Option<usize> {
    let mut at = from;
    while at + LANES <= free.len() {
        let group = &free[at..at + LANES];
        if any_at_least(group, need) {
            return Some(at + first_in_group(group, |g| any_at_least(g, need), |c| c >= need));
        }
        at += LANES;
    }
    (at..free.len()).find(|&k| free[k] >= need)
}

/// The number of `times` (increasing) before the first one at or after `t`: a few walked,
/// then a binary search (most reservations cover a few steps, a long one on a full plan a
/// thousand).
fn first_at_or_after(times: &[Time], t: Time) -> usize {
    const WALK: usize = 8;
    match times.iter().take(WALK).position(|&s| s >= t) {
        Some(k) => k,
        None if times.len() <= WALK => times.len(),
        None => WALK + times[WALK..].partition_point(|&s| s < t),
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
                let steps = p.all_steps();
                assert!(
                    steps
                        .windows(2)
                        .all(|w| w[0].1 != w[1].1 && w[0].0 < w[1].0),
                    "steps sorted and merged: {steps:?}"
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
        let steps = &p.all_steps();
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

        /// The grouped searches find what a step-by-step search finds, wherever the answer
        /// falls against the groups of [`LANES`] and the tail after them.
        #[test]
        fn the_grouped_searches_find_what_one_step_at_a_time_finds(
            free in proptest::collection::vec(0i32..6, 1..40),
            from in proptest::sample::select(vec![0usize, 1, 2, 3, 5, 7, 8, 9, 15, 16, 17, 30, 50]),
            need in 1i32..6,
            end in 0i64..42,
        ) {
            // step k begins at second k
            let times: Vec<Time> = (0..free.len() as Time).collect();
            let below = (from..free.len())
                .take_while(|&k| times[k] < end)
                .find(|&k| free[k] < need);
            proptest::prop_assert_eq!(first_below_before(&times, &free, from, need, end), below);
            let at_least = (from..free.len()).find(|&k| free[k] >= need);
            proptest::prop_assert_eq!(first_at_least(&free, from, need), at_least);
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
