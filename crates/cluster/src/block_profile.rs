//! The free-processor profile of conservative backfilling's fast path
//! ([`crate::backfill::Conservative`]): the step function of [`crate::profile::Profile`], kept in
//! blocks of consecutive steps, each with its smallest and largest count and an amount added to
//! all of its steps.
//!
//! Why: under saturation thousands of jobs wait and the profile has thousands of steps. A
//! reservation that moves inserts and removes steps near the front, which in one sorted vector
//! shifts every later step (a memmove of the whole profile), and a search for room walks the
//! steps one by one. Here an update shifts the steps of one block (at most [`MAX_BLOCK`]) and
//! adds to the blocks it covers wholly in O(1) each; a search skips a block whose smallest (or
//! largest) count already answers it. A small site has one or two blocks, which behave like the
//! plain vector. (A treap with lazy updates measured 5 times slower than the vector at small
//! sizes: see profile.rs. Blocks keep the vector's contiguous scans.)
//!
//! Times are seconds; counts are processors (never negative while every reservation was placed
//! where it fits).

use crate::Time;

/// A block with more steps is split in two.
#[cfg(not(test))]
const MAX_BLOCK: usize = 64;
/// A block with fewer steps is merged into a neighbour when the two fit in [`MAX_BLOCK`].
#[cfg(not(test))]
const MIN_BLOCK: usize = 16;
/// Tests use small blocks, so that their small profiles cross block boundaries.
#[cfg(test)]
const MAX_BLOCK: usize = 8;
#[cfg(test)]
const MIN_BLOCK: usize = 2;

/// A step function of free processors, as [`crate::profile::Profile`]: a count from each step's
/// time until the next step's; the last step lasts forever; no two neighbouring steps (across
/// blocks too) hold the same count.
#[derive(Debug, Clone)]
pub(crate) struct BlockProfile {
    /// The time of each block's first step (searched by bisection).
    firsts: Vec<Time>,
    /// The steps, in time order; never empty, and no block is empty.
    blocks: Vec<Block>,
}

/// Consecutive steps: `times[i]` and `free[i] + add` processors free from then on.
#[derive(Debug, Clone)]
struct Block {
    times: Vec<Time>,
    /// The counts without `add`.
    free: Vec<i64>,
    /// Added to every count of the block (an update that covers the whole block).
    add: i64,
    /// The smallest and largest of `free` (without `add`).
    min: i64,
    max: i64,
}

impl Block {
    fn new(times: Vec<Time>, free: Vec<i64>, add: i64) -> Block {
        let mut block = Block {
            times,
            free,
            add,
            min: 0,
            max: 0,
        };
        block.summarize();
        block
    }

    /// Recomputes `min` and `max` (O(block)).
    fn summarize(&mut self) {
        self.min = self.free.iter().copied().min().unwrap_or(0);
        self.max = self.free.iter().copied().max().unwrap_or(0);
    }

    fn len(&self) -> usize {
        self.times.len()
    }

    /// The count of step `i`.
    fn value(&self, i: usize) -> i64 {
        self.free[i] + self.add
    }

    fn least(&self) -> i64 {
        self.min + self.add
    }

    fn most(&self) -> i64 {
        self.max + self.add
    }

    /// Moves `add` into the counts (before two blocks with different `add`s become one).
    fn flatten(&mut self) {
        if self.add != 0 {
            for f in &mut self.free {
                *f += self.add;
            }
            self.min += self.add;
            self.max += self.add;
            self.add = 0;
        }
    }
}

impl BlockProfile {
    /// A machine of `processors` processors all free from the beginning of time.
    pub(crate) fn new(processors: u32) -> BlockProfile {
        BlockProfile {
            firsts: vec![Time::MIN],
            blocks: vec![Block::new(vec![Time::MIN], vec![i64::from(processors)], 0)],
        }
    }

    /// The profile of `steps` ((time, free processors) in increasing time with no two
    /// neighbours equal, as [`crate::profile::Profile`] keeps them; not empty).
    pub(crate) fn from_steps(steps: &[(Time, i64)]) -> BlockProfile {
        let mut profile = BlockProfile {
            firsts: Vec::new(),
            blocks: Vec::new(),
        };
        for chunk in steps.chunks(MAX_BLOCK.div_ceil(2)) {
            profile.firsts.push(chunk[0].0);
            profile.blocks.push(Block::new(
                chunk.iter().map(|s| s.0).collect(),
                chunk.iter().map(|s| s.1).collect(),
                0,
            ));
        }
        if profile.blocks.is_empty() {
            return BlockProfile::new(0);
        }
        profile
    }

    /// Every step, in time order (to hand the profile to [`crate::profile::Profile`]).
    pub(crate) fn steps(&self) -> Vec<(Time, i64)> {
        self.blocks
            .iter()
            .flat_map(|b| (0..b.len()).map(move |i| (b.times[i], b.value(i))))
            .collect()
    }

    /// The profile's first instant (the `now` of the last [`BlockProfile::advance`]).
    pub(crate) fn start(&self) -> Time {
        self.firsts[0]
    }

    /// The fewest processors free at any instant (negative only if a reservation was placed
    /// where it does not fit).
    pub(crate) fn least_free(&self) -> i64 {
        self.blocks.iter().map(Block::least).min().unwrap_or(0)
    }

    /// The block and step holding instant `t` (at or after the profile's start).
    fn locate(&self, t: Time) -> (usize, usize) {
        let k = self.firsts.partition_point(|&f| f <= t).saturating_sub(1);
        let i = self.blocks[k]
            .times
            .partition_point(|&x| x <= t)
            .saturating_sub(1);
        (k, i)
    }

    /// The step before step `i` of block `k`, if any.
    fn prev(&self, k: usize, i: usize) -> Option<(usize, usize)> {
        if i > 0 {
            Some((k, i - 1))
        } else if k > 0 {
            Some((k - 1, self.blocks[k - 1].len() - 1))
        } else {
            None
        }
    }

    /// Free processors at instant `t` (at or after the profile's start).
    pub(crate) fn free_at(&self, t: Time) -> i64 {
        let (k, i) = self.locate(t);
        self.blocks[k].value(i)
    }

    /// Forgets the steps before `now`, as [`crate::profile::Profile::advance`].
    pub(crate) fn advance(&mut self, now: Time) {
        let (k, i) = self.locate(now);
        if k > 0 {
            self.blocks.drain(..k);
            self.firsts.drain(..k);
        }
        let first = &mut self.blocks[0];
        if i > 0 {
            first.times.drain(..i);
            first.free.drain(..i);
            first.summarize();
        }
        first.times[0] = first.times[0].max(now);
        self.firsts[0] = first.times[0];
        if self.blocks[0].len() < MIN_BLOCK {
            self.rebalance(0);
        }
    }

    /// Makes a step begin at `t` (after the profile's start), splitting the step holding it;
    /// returns that step's place. Its block may grow past [`MAX_BLOCK`] until
    /// [`BlockProfile::resize`].
    fn split_at(&mut self, t: Time) -> (usize, usize) {
        let (k, i) = self.locate(t);
        (k, self.split_in(k, i, t))
    }

    /// [`BlockProfile::split_at`] for a `t` held by step `i` of block `k`; returns the index in
    /// the block of the step beginning at `t`.
    fn split_in(&mut self, k: usize, i: usize, t: Time) -> usize {
        let block = &mut self.blocks[k];
        if block.times[i] == t {
            return i;
        }
        // The new step repeats a count of the block: its smallest and largest do not change.
        block.times.insert(i + 1, t);
        let count = block.free[i];
        block.free.insert(i + 1, count);
        i + 1
    }

    /// Removes step `i` of block `k` if it holds the same count as the step before it; returns
    /// whether that emptied the block (which is then removed too).
    fn merge_step(&mut self, k: usize, i: usize) -> bool {
        let Some((pk, pi)) = self.prev(k, i) else {
            return false;
        };
        if self.blocks[pk].value(pi) != self.blocks[k].value(i) {
            return false;
        }
        let block = &mut self.blocks[k];
        block.times.remove(i);
        let count = block.free.remove(i);
        if block.times.is_empty() {
            self.blocks.remove(k);
            self.firsts.remove(k);
            return true;
        }
        if count == block.min || count == block.max {
            block.summarize();
        }
        self.firsts[k] = block.times[0];
        false
    }

    /// Brings block `k` back within [`MIN_BLOCK`]..=[`MAX_BLOCK`] steps where it can: splits a
    /// long one in two, merges a short one into a neighbour.
    fn resize(&mut self, k: usize) {
        let Some(block) = self.blocks.get_mut(k) else {
            return;
        };
        if block.len() > MAX_BLOCK {
            let half = block.len() / 2;
            let times = block.times.split_off(half);
            let free = block.free.split_off(half);
            let add = block.add;
            block.summarize();
            self.firsts.insert(k + 1, times[0]);
            self.blocks.insert(k + 1, Block::new(times, free, add));
        } else if block.len() < MIN_BLOCK {
            self.rebalance(k);
        }
    }

    /// Merges small block `k` into a neighbour when the two fit in one block.
    fn rebalance(&mut self, k: usize) {
        let len = self.blocks[k].len();
        if k > 0 && self.blocks[k - 1].len() + len <= MAX_BLOCK {
            self.merge_blocks(k - 1);
        } else if k + 1 < self.blocks.len() && self.blocks[k + 1].len() + len <= MAX_BLOCK {
            self.merge_blocks(k);
        }
    }

    /// Appends block `k + 1` to block `k`.
    fn merge_blocks(&mut self, k: usize) {
        let next = self.blocks.remove(k + 1);
        self.firsts.remove(k + 1);
        let block = &mut self.blocks[k];
        block.flatten();
        block.times.extend_from_slice(&next.times);
        block.free.extend(next.free.iter().map(|f| f + next.add));
        block.min = block.min.min(next.min + next.add);
        block.max = block.max.max(next.max + next.add);
    }

    /// Adds `delta` processors over [start, end), clipped to the profile's start, keeping no two
    /// neighbours equal (as [`crate::profile::Profile`]'s updates): one search for `start`, a
    /// walk over the blocks to the one holding `end` (the blocks in between take the change in
    /// their `add`), and a merge at each end.
    pub(crate) fn add(&mut self, start: Time, end: Time, delta: i64) {
        let start = start.max(self.start());
        if end <= start || delta == 0 {
            return;
        }
        let (ka, ia) = self.split_at(start);
        let mut kb = ka;
        while self.firsts.get(kb + 1).is_some_and(|&f| f <= end) {
            kb += 1;
        }
        let from = if kb == ka { ia } else { 0 };
        let holding = from
            + self.blocks[kb].times[from..]
                .partition_point(|&t| t <= end)
                .saturating_sub(1);
        let ib = self.split_in(kb, holding, end);
        if ka == kb {
            let block = &mut self.blocks[ka];
            for f in &mut block.free[ia..ib] {
                *f += delta;
            }
            block.summarize();
        } else {
            let first = &mut self.blocks[ka];
            for f in &mut first.free[ia..] {
                *f += delta;
            }
            first.summarize();
            for block in &mut self.blocks[ka + 1..kb] {
                block.add += delta;
            }
            if ib > 0 {
                let last = &mut self.blocks[kb];
                for f in &mut last.free[..ib] {
                    *f += delta;
                }
                last.summarize();
            }
        }
        // The counts inside moved together: only the two ends can now equal a neighbour. The
        // end first, so that the start's place holds; then the sizes, the later block first.
        let end_gone = self.merge_step(kb, ib);
        let start_gone = self.merge_step(ka, ia);
        if kb != ka && !end_gone {
            self.resize(if start_gone { kb - 1 } else { kb });
        }
        if !start_gone {
            self.resize(ka);
        }
    }

    /// Takes `processors` over [start, end) (the caller found the room).
    pub(crate) fn reserve(&mut self, start: Time, end: Time, processors: u32) {
        self.add(start, end, -i64::from(processors));
    }

    /// Gives back `processors` over [start, end).
    pub(crate) fn release(&mut self, start: Time, end: Time, processors: u32) {
        self.add(start, end, i64::from(processors));
    }

    /// The earliest instant in [from, before) with fewer than `need` processors free.
    pub(crate) fn first_below(&self, from: Time, need: i64, before: Time) -> Option<Time> {
        if from >= before {
            return None;
        }
        let (mut k, mut i) = self.locate(from);
        loop {
            let block = &self.blocks[k];
            if block.least() < need {
                for j in i..block.len() {
                    let t = block.times[j].max(from);
                    if t >= before {
                        return None;
                    }
                    if block.value(j) < need {
                        return Some(t);
                    }
                }
            }
            k += 1;
            i = 0;
            if self.firsts.get(k).is_none_or(|&f| f >= before) {
                return None;
            }
        }
    }

    /// The earliest instant at or after `from` with at least `need` processors free (`None`:
    /// never, `need` is more than the machine has).
    pub(crate) fn first_at_least(&self, from: Time, need: i64) -> Option<Time> {
        let (mut k, mut i) = self.locate(from);
        loop {
            let block = &self.blocks[k];
            if block.most() >= need {
                for j in i..block.len() {
                    if block.value(j) >= need {
                        return Some(block.times[j].max(from));
                    }
                }
            }
            k += 1;
            i = 0;
            if k == self.blocks.len() {
                return None;
            }
        }
    }

    /// The earliest start at or after `from` where `need` processors are free for `duration`
    /// seconds (at least one: a job always needs its processors at the instant it starts), if
    /// it is at most `latest`. As [`crate::profile::Profile::earliest_fit`]: one scan of the
    /// steps from `from`, where a step with too few processors moves the candidate start to the
    /// step's end, except that a block wholly above or below `need` is passed in one step.
    pub(crate) fn fit(&self, from: Time, need: i64, duration: Time, latest: Time) -> Option<Time> {
        let duration = duration.max(1);
        let (mut k, mut i) = self.locate(from);
        let mut start = from;
        loop {
            if start > latest {
                return None;
            }
            let block = &self.blocks[k];
            let after = self.firsts.get(k + 1).copied().unwrap_or(Time::MAX);
            if i == 0 && block.least() >= need {
                if after >= start.saturating_add(duration) {
                    return Some(start);
                }
            } else if i == 0 && block.most() < need {
                start = after;
            } else {
                while i < block.len() {
                    let next = block.times.get(i + 1).copied().unwrap_or(after);
                    if block.value(i) < need {
                        start = next;
                        if start > latest {
                            return None;
                        }
                    } else if next >= start.saturating_add(duration) {
                        return Some(start);
                    }
                    i += 1;
                }
            }
            k += 1;
            i = 0;
            if k == self.blocks.len() {
                return None; // the last step lasts forever: it had too few
            }
        }
    }

    /// The earliest instant `r` (not before the profile's start) such that at least `need`
    /// processors are free over all of [r, end), given that they are at `end - 1`.
    pub(crate) fn run_start(&self, end: Time, need: i64) -> Time {
        let (k, i) = self.locate(end - 1);
        debug_assert!(self.blocks[k].value(i) >= need);
        self.run_start_from(k, i, need)
    }

    /// Where a reservation of `need` processors that begins at `start` could begin if it slid
    /// earlier over the free processors just before it: the [`BlockProfile::run_start`] of
    /// `start` if `need` are free at `start - 1`, else `None`.
    pub(crate) fn slide_start(&self, start: Time, need: i64) -> Option<Time> {
        let (k, i) = self.locate(start - 1);
        (self.blocks[k].value(i) >= need).then(|| self.run_start_from(k, i, need))
    }

    /// [`BlockProfile::run_start`] from step `i` of block `k`, which has `need` free.
    fn run_start_from(&self, mut k: usize, mut i: usize, need: i64) -> Time {
        loop {
            let block = &self.blocks[k];
            if i > 0 {
                if block.least() >= need {
                    i = 0;
                } else if block.value(i - 1) >= need {
                    i -= 1;
                } else {
                    return block.times[i];
                }
                continue;
            }
            if k == 0 {
                return block.times[0];
            }
            let before = &self.blocks[k - 1];
            if before.value(before.len() - 1) < need {
                return block.times[0];
            }
            k -= 1;
            i = before.len() - 1;
        }
    }

    /// [`BlockProfile::free_at`] for instants that do not decrease from call to call, starting
    /// from `place` (a step found by the call before, or `(0, 0)`) and leaving the step found
    /// there: a walk of the few steps in between rather than a search.
    pub(crate) fn free_at_from(&self, place: &mut (usize, usize), t: Time) -> i64 {
        let (k, i) = *place;
        let after = self.firsts.get(k + 1).copied().unwrap_or(Time::MAX);
        let found = match self.blocks.get(k) {
            Some(block) if t < after && block.times.get(i).is_some_and(|&x| x <= t) => {
                let mut j = i;
                while block.times.get(j + 1).is_some_and(|&x| x <= t) {
                    j += 1;
                }
                (k, j)
            }
            _ => self.locate(t),
        };
        *place = found;
        self.blocks[found.0].value(found.1)
    }

    /// The most processors free at any instant of [start, end) (`i64::MIN` for an empty range).
    pub(crate) fn most_free(&self, start: Time, end: Time) -> i64 {
        let start = start.max(self.start());
        if end <= start {
            return i64::MIN;
        }
        let (mut k, i) = self.locate(start);
        let block = &self.blocks[k];
        let mut most = i64::MIN;
        for j in i..block.len() {
            if j > i && block.times[j] >= end {
                return most;
            }
            most = most.max(block.value(j));
        }
        k += 1;
        while k < self.blocks.len() && self.firsts[k] < end {
            let block = &self.blocks[k];
            if block.most() > most {
                if block.times[block.len() - 1] < end {
                    most = block.most();
                } else {
                    for j in 0..block.len() {
                        if block.times[j] >= end {
                            break;
                        }
                        most = most.max(block.value(j));
                    }
                }
            }
            k += 1;
        }
        most
    }

    /// The start of the first run of at least `need` free processors (from the profile's start
    /// on) that meets [start, end), if one does.
    pub(crate) fn first_run_meeting(&self, start: Time, end: Time, need: i64) -> Option<Time> {
        let start = start.max(self.start());
        let at = self.first_at_least(start, need).filter(|&t| t < end)?;
        Some(if at == start {
            self.run_start(start + 1, need)
        } else {
            at
        })
    }

    /// The runs of at least `need` free processors (from the profile's start on) that meet
    /// [start, end): the start of the first and an upper bound on the length of the longest
    /// (exact while there are few; past [`RUNS`], the span to the end of the last run), or
    /// `None` if no instant of [start, end) has `need` free. Every window of `need` processors
    /// that meets [start, end) lies in one of these runs.
    pub(crate) fn runs_meeting(&self, start: Time, end: Time, need: i64) -> Option<(Time, Time)> {
        /// Runs measured one by one before the rest are bounded together.
        const RUNS: usize = 8;
        let first = self.first_run_meeting(start, end, need)?;
        let mut at = first.max(start);
        let mut run_start = first;
        let mut longest: Time = 0;
        for _ in 0..RUNS {
            let run_end = self.first_below(at, need, Time::MAX).unwrap_or(Time::MAX);
            longest = longest.max(run_end.saturating_sub(run_start));
            if run_end >= end {
                return Some((first, longest));
            }
            match self.first_at_least(run_end, need) {
                Some(next) if next < end => {
                    at = next;
                    run_start = next;
                }
                _ => return Some((first, longest)),
            }
        }
        // Many runs: the rest lie between `run_start` and the end of the run holding the last
        // instant before `end`, or `end` itself.
        let last = end - 1;
        let bound = if self.free_at(last) >= need {
            self.first_below(last, need, Time::MAX).unwrap_or(Time::MAX)
        } else {
            end
        };
        Some((first, longest.max(bound.saturating_sub(run_start))))
    }

    /// Checks the blocks' invariants (tests and debug builds).
    #[cfg(test)]
    pub(crate) fn check(&self) {
        assert_eq!(self.firsts.len(), self.blocks.len());
        let mut last: Option<(Time, i64)> = None;
        for (k, block) in self.blocks.iter().enumerate() {
            assert!(!block.times.is_empty(), "empty block");
            assert!(block.len() <= MAX_BLOCK, "block too long");
            assert_eq!(self.firsts[k], block.times[0]);
            assert_eq!(block.min, *block.free.iter().min().unwrap_or(&0));
            assert_eq!(block.max, *block.free.iter().max().unwrap_or(&0));
            for i in 0..block.len() {
                let step = (block.times[i], block.value(i));
                if let Some(prev) = last {
                    assert!(prev.0 < step.0, "steps out of order");
                    assert_ne!(prev.1, step.1, "equal neighbours at {}", step.0);
                }
                last = Some(step);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::Profile;

    /// A tiny deterministic generator.
    fn lcg(state: &mut u64) -> u64 {
        *state = state
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *state >> 33
    }

    const SPAN: Time = 400;

    /// Free processors per second over 0..SPAN.
    fn dense(p: &BlockProfile) -> Vec<i64> {
        (0..SPAN).map(|t| p.free_at(t.max(p.start()))).collect()
    }

    /// Checks every query of `p` against brute force over `model` (free per second from
    /// `now`; the profile is constant from SPAN on, as every update ends before it).
    fn check_queries(p: &BlockProfile, model: &[i64], now: Time, seed: &mut u64) {
        let at = |t: Time| model[(t.min(SPAN - 1)) as usize];
        for _ in 0..20 {
            let need = 1 + (lcg(seed) % 17) as i64;
            let from = now + (lcg(seed) % (SPAN - now) as u64) as Time;
            let duration = (lcg(seed) % 60) as Time;
            let latest = from + (lcg(seed) % 300) as Time;
            // fit: brute force
            let expected = (from..SPAN + 1)
                .find(|&t| (t..t + duration.max(1)).all(|u| at(u) >= need))
                .filter(|&t| t <= latest);
            assert_eq!(p.fit(from, need, duration, latest), expected, "fit");
            let before = from + 1 + (lcg(seed) % 100) as Time;
            let below = (from..before).find(|&t| at(t) < need);
            assert_eq!(p.first_below(from, need, before), below, "first_below");
            let least = (from..SPAN + 1).find(|&t| at(t) >= need);
            assert_eq!(p.first_at_least(from, need), least, "first_at_least");
            let most = (from..before).map(at).max().unwrap_or(i64::MIN);
            assert_eq!(p.most_free(from, before), most, "most_free");
            let mut place = (0, 0);
            for t in (now..SPAN).step_by(1 + (lcg(seed) % 13) as usize) {
                assert_eq!(p.free_at_from(&mut place, t), at(t), "free_at_from");
            }
            if from > now {
                let slide = (at(from - 1) >= need).then(|| {
                    let mut r = from - 1;
                    while r > now && at(r - 1) >= need {
                        r -= 1;
                    }
                    r
                });
                assert_eq!(p.slide_start(from, need), slide, "slide_start");
            }
            let end = from + 1;
            if at(from) >= need {
                let mut r = from;
                while r > now && at(r - 1) >= need {
                    r -= 1;
                }
                assert_eq!(p.run_start(end, need), r, "run_start");
            }
            // Every window that meets [from, before) lies in what runs_meeting reports.
            let runs = p.runs_meeting(from, before, need);
            for t in now..SPAN - duration {
                let window = t..t + duration.max(1);
                if window.start < before
                    && window.end > from
                    && window.clone().all(|u| at(u) >= need)
                {
                    let (first, longest) = runs.expect("a window meets the range");
                    assert!(first <= t && duration.max(1) <= longest, "runs_meeting");
                }
            }
        }
    }

    #[test]
    fn agrees_with_the_vector_profile_and_brute_force() {
        for first in [1u64, 7, 11, 2026, 99] {
            let mut seed = first;
            let mut p = BlockProfile::new(16);
            let mut reference = Profile::new(16);
            p.advance(0);
            reference.advance(0);
            let mut now = 0;
            let mut held: Vec<(Time, Time, u32)> = Vec::new();
            for step in 0..3000 {
                match lcg(&mut seed) % 10 {
                    0..=5 => {
                        let processors = 1 + (lcg(&mut seed) % 8) as u32;
                        let duration = 1 + (lcg(&mut seed) % 40) as Time;
                        let from = now + (lcg(&mut seed) % 150) as Time;
                        let start = reference.earliest_fit(from, processors, duration);
                        assert_eq!(
                            p.fit(from, i64::from(processors), duration, Time::MAX),
                            Some(start)
                        );
                        if start + duration < SPAN {
                            p.reserve(start, start + duration, processors);
                            reference.reserve(start, start + duration, processors);
                            held.push((start, start + duration, processors));
                        }
                    }
                    6..=8 if !held.is_empty() => {
                        let k = (lcg(&mut seed) as usize) % held.len();
                        let (start, end, processors) = held.swap_remove(k);
                        p.release(start, end, processors);
                        reference.release(start, end, processors);
                    }
                    _ => {
                        now = (now + (lcg(&mut seed) % 5) as Time).min(SPAN - 50);
                        p.advance(now);
                        reference.advance(now);
                        held.retain(|h| h.1 > now);
                    }
                }
                p.check();
                assert_eq!(p.steps(), reference.steps(now), "step {step}");
                if step % 50 == 0 {
                    let model = dense(&p);
                    check_queries(&p, &model, now, &mut seed);
                }
            }
        }
    }

    #[test]
    fn many_steps_split_and_merge_blocks() {
        // Thousands of one-second reservations side by side, then released in another order.
        let mut p = BlockProfile::new(4);
        let mut reference = Profile::new(4);
        p.advance(0);
        reference.advance(0);
        let mut seed = 5;
        let mut held = Vec::new();
        for t in 0..5000 {
            let processors = 1 + (lcg(&mut seed) % 4) as u32;
            p.reserve(2 * t, 2 * t + 1, processors);
            reference.reserve(2 * t, 2 * t + 1, processors);
            held.push((2 * t, processors));
        }
        p.check();
        assert!(p.blocks.len() > 20);
        assert_eq!(p.steps(), reference.steps(0));
        while !held.is_empty() {
            let (t, processors) = held.swap_remove((lcg(&mut seed) as usize) % held.len());
            p.release(t, t + 1, processors);
            reference.release(t, t + 1, processors);
            if held.len() % 500 == 0 {
                p.check();
                assert_eq!(p.steps(), reference.steps(0));
            }
        }
        assert_eq!(p.steps(), vec![(0, 4)]);
        assert_eq!(p.blocks.len(), 1);
        // A long reservation over many blocks is one add per block.
        for t in 0..1000 {
            p.reserve(2 * t, 2 * t + 1, 1);
        }
        p.reserve(0, 10_000, 2);
        p.check();
        assert_eq!(p.free_at(1), 2);
        assert_eq!(p.free_at(0), 1);
        assert_eq!(p.most_free(0, 2000), 2);
        assert_eq!(p.fit(0, 2, 5000, Time::MAX), Some(1999));
        assert_eq!(p.fit(0, 3, 5000, Time::MAX), Some(10_000));
        assert_eq!(p.fit(0, 2, 1, Time::MAX), Some(1));
        p.advance(1500);
        p.check();
        assert_eq!(p.start(), 1500);
        assert_eq!(p.free_at(1500), 1);
    }
}
