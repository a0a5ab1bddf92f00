//! Conservative backfilling's fast path, for a queue in arrival order: the decisions of the
//! plain loop ([`super::reference_pass`]) without re-placing every waiting job after every
//! early end.
//!
//! # Why it decides the same
//!
//! Take a waiting job J of `s` processors, held for `L` seconds ([`crate::backfill::held`]),
//! planned at `o > now`. The plain loop's re-placement of J (with every other reservation
//! held, J's own slot [o, o + L) counted free) gives a start earlier than `o` **iff** one of:
//!
//! - **C1**: at least `s` processors are free at `o - 1`. Then J slides left to where that
//!   room begins (`run_start`), or earlier if C2 also holds.
//! - **C2**: a window of `L` seconds with `s` free ends by `o` (a hole before J).
//!
//! A window that straddles `o` needs `s` free only before `o` (J's own slot adds `s` to counts
//! that are never negative), so it needs C1; one that ends by `o` is C2. A window that starts
//! before the start `r` of the run ending at `o` cannot reach `r - 1`, where fewer than `s`
//! are free, so it is a plain fit that ends before `r`: J's new start is the earliest plain fit
//! if that is before `r`, else `r`.
//!
//! Right after J is placed or re-placed, neither holds (the fit would have been earlier).
//! Reservations, starts and time passing only take processors away (or keep them), so C1 or
//! C2 can become true only through a **release**: an early end ([`Fast::finished`]), or the
//! part of a moved job's old slot that its new slot does not cover. So after each release
//! [a, b) the fast path marks ("dirty") every job it may have helped, computed on the profile
//! right after it:
//!
//! - for C1, every job planned in (a, b] that now has its `s` free at `o - 1` (exact);
//! - for C2, every job that a window meeting [a, b) could hold: no larger than the most free
//!   in [a, b), no longer than the runs (at the smallest size of its class) that meet [a, b),
//!   and planned at least its length after the first of them ([`super::index`]).
//!
//! A window that fits J later, after only reservations since the release, already fitted then
//! (counts only fell since), so the marks are never too few: a job that is not dirty would stay
//! where it is. The plain loop visits every job in queue order at every pass after an end; the
//! fast path visits, in the same order, only the dirty jobs (and the new ones), so every
//! re-placement it makes sees the profile the plain loop's would, and the ones it skips would
//! have changed nothing. A release made by a move marks the jobs behind the mover for this pass
//! and the jobs before it for the next pass after an end, which is when the plain loop would
//! look at them again. Jobs are marked at most once and unmarked when re-placed or started.
//!
//! The proof needs every count to stay non-negative and every planned start to come with a
//! pass. A planned start before `now` (which the engine never produces: every planned start is
//! the end of a reservation or of a run, where an end or a kill makes a pass) hands the state
//! to the plain loop ([`Unsupported`]).
//!
//! # Cost
//!
//! An early end costs the jobs it moves (each a few searches of O(log + block) in the profile
//! and the indexes) and the jobs it marks in vain. Under saturation a tenth or so of the queue
//! moves after an early end (counted on the default site at 1,000 and 10,000 users), so a pass
//! stays proportional to the queue, with a far smaller factor than the plain loop's profile
//! scan per waiting job.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::hash::BuildHasherDefault;
use std::ops::Bound::{Excluded, Included, Unbounded};

use super::index::FitIndex;
use crate::backfill::{Ended, Pass, held};
use crate::block_profile::BlockProfile;
use crate::cluster::IdHasher;
use crate::job_times::JobTimes;
use crate::{JobId, JobRequest, Time};

/// A waiting job's place in arrival order: (submit, id), the queue's order.
type Key = (Time, JobId);

/// Greater than or equal to every key.
const LAST_KEY: Key = (Time::MAX, JobId(u32::MAX));
/// Less than or equal to every key.
const FIRST_KEY: Key = (Time::MIN, JobId(0));

/// The fast path met a case its proof does not cover: the caller plans with the plain loop
/// from now on.
#[derive(Debug)]
pub(super) struct Unsupported;

/// The fast path's state (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(crate) struct Fast {
    /// Free processors over time (running jobs until start + estimate, and reservations);
    /// created at the first pass that plans.
    profile: Option<BlockProfile>,
    plan: Plan,
}

/// The waiting jobs and their indexes.
#[derive(Debug, Clone, Default)]
struct Plan {
    /// Every waiting job.
    jobs: HashMap<JobId, Entry, BuildHasherDefault<IdHasher>>,
    /// The placed jobs by (planned start, key), with their processors.
    by_start: BTreeMap<(Time, Key), u32>,
    /// Jobs submitted since the last pass (not placed yet).
    unplaced: BTreeSet<Key>,
    /// Jobs a release may have helped, to re-place at the next pass after an end (or in this
    /// one, if behind the job being re-placed); for those a hole may hold (C2), the span of the
    /// releases that may have opened it (every window that fits them meets one).
    dirty: BTreeMap<Key, Option<(Time, Time)>>,
    /// The early ends since the last pass: [end, planned end) of each.
    released: Vec<(Time, Time)>,
    /// The placed jobs by size class, for C2.
    index: FitIndex,
    /// Scratch: jobs a query found.
    found: Vec<JobId>,
    /// Scratch: the jobs planned for now.
    starting: Vec<Key>,
    /// The key of the job being re-placed in this pass (marks at or before it wait for the
    /// next pass after an end), for the tests' counts.
    #[cfg(test)]
    cursor: Option<Key>,
    /// What the tests count.
    #[cfg(test)]
    pub(super) stats: Stats,
}

/// Counts of what the fast path did (tests: every case a test means to cover happened).
#[cfg(test)]
#[derive(Debug, Clone, Default)]
pub(super) struct Stats {
    /// Jobs that slid left (C1).
    pub(super) slides: u64,
    /// Jobs that moved to a hole before their start (C2).
    pub(super) holes: u64,
    /// Marked jobs that did not move.
    pub(super) in_vain: u64,
    /// Jobs marked behind the cursor, kept for the next pass after an end.
    pub(super) deferred: BTreeSet<Key>,
    /// Jobs marked so that moved at a later pass.
    pub(super) deferred_moves: u64,
    /// Jobs started as backfilled.
    pub(super) backfilled: u64,
}

/// What the fast path keeps of a waiting job.
#[derive(Debug, Clone, Copy)]
struct Entry {
    submit: Time,
    processors: u32,
    /// [`held`]: its estimate, at least 1 s.
    length: Time,
}

impl Fast {
    /// The fast path taking over from the plain loop at a pass, with its `profile` (if a pass
    /// made one) and `planned` starts: every placed job is marked as if a release covered all
    /// time, so the next pass after an end re-places every job, as the plain loop would; the
    /// others are new.
    pub(super) fn from_plain(
        profile: Option<&crate::profile::Profile>,
        planned: &JobTimes,
        pass: &Pass<'_>,
    ) -> Fast {
        let mut plan = Plan::default();
        for index in 0..pass.positions() {
            if !pass.is_waiting(index) {
                continue;
            }
            let job = pass.job(index);
            let key = (job.submit, job.id);
            let length = held(job);
            plan.jobs.insert(
                job.id,
                Entry {
                    submit: job.submit,
                    processors: job.processors,
                    length,
                },
            );
            match planned.get(job.id) {
                Some(start) => {
                    plan.by_start.insert((start, key), job.processors);
                    plan.index.insert(job.id, job.processors, length, start);
                    plan.dirty.insert(key, Some((Time::MIN, Time::MAX)));
                }
                None => {
                    plan.unplaced.insert(key);
                }
            }
        }
        Fast {
            profile: profile.map(|p| BlockProfile::from_steps(&p.all_steps())),
            plan,
        }
    }

    /// The profile, once a pass made it.
    pub(super) fn profile(&self) -> Option<&BlockProfile> {
        self.profile.as_ref()
    }

    /// A job entered the queue.
    pub(super) fn submitted(&mut self, job: &JobRequest) {
        let key = (job.submit, job.id);
        self.plan.jobs.insert(
            job.id,
            Entry {
                submit: job.submit,
                processors: job.processors,
                length: held(job),
            },
        );
        self.plan.unplaced.insert(key);
    }

    /// A running job ended at `now`: its processors come back from now to its planned end.
    pub(super) fn finished(&mut self, job: &Ended, now: Time) {
        if let Some(profile) = self.profile.as_mut() {
            let end = job.planned_end();
            profile.release(now, end, job.processors);
            if end > now {
                self.plan.released.push((now, end));
            }
        }
    }

    /// One pass (see [`super::reference_pass`] for what it decides).
    pub(super) fn schedule(
        &mut self,
        planned: &mut JobTimes,
        compress: bool,
        pass: &mut Pass<'_>,
    ) -> Result<(), Unsupported> {
        let now = pass.now();
        let processors = pass.processors();
        let profile = self
            .profile
            .get_or_insert_with(|| BlockProfile::new(processors));
        profile.advance(now);
        let plan = &mut self.plan;
        if plan
            .by_start
            .first_key_value()
            .is_some_and(|(&(start, _), _)| start < now)
        {
            return Err(Unsupported); // a planned start passed without a pass
        }
        debug_assert!(profile.least_free() >= 0, "a reservation does not fit");
        // The early ends since the last pass mark the jobs they may help.
        debug_assert!(compress || plan.released.is_empty());
        let released = std::mem::take(&mut plan.released);
        for &(start, end) in &released {
            plan.mark(profile, start, end, None);
        }
        // In queue order: the marked jobs (after an end only) and the new ones.
        let new = std::mem::take(&mut plan.unplaced);
        let mut new = new.into_iter().peekable();
        let mut cursor: Option<Key> = None;
        loop {
            let marked = if compress {
                match cursor {
                    None => plan.dirty.first_key_value(),
                    Some(after) => plan.dirty.range((Excluded(after), Unbounded)).next(),
                }
                .map(|(&key, &holes)| (key, holes))
            } else {
                None
            };
            let next = new.peek().copied();
            let key = match (marked, next) {
                (Some((key, holes)), _) if next.is_none_or(|next| key < next) => {
                    plan.dirty.remove(&key);
                    plan.replace(profile, planned, now, key, holes);
                    key
                }
                (_, Some(key)) => {
                    new.next();
                    plan.place(profile, planned, now, key);
                    key
                }
                (_, None) => break,
            };
            cursor = Some(key);
            #[cfg(test)]
            {
                plan.cursor = cursor;
            }
        }
        #[cfg(test)]
        {
            plan.cursor = None;
        }
        plan.start_planned(planned, now, pass);
        Ok(())
    }
}

impl Plan {
    /// Places a new job at its earliest slot.
    fn place(&mut self, profile: &mut BlockProfile, planned: &mut JobTimes, now: Time, key: Key) {
        let id = key.1;
        let Some(entry) = self.jobs.get(&id) else {
            return; // every queued job was submitted
        };
        let start = profile
            .fit(now, i64::from(entry.processors), entry.length, Time::MAX)
            .unwrap_or(Time::MAX);
        profile.reserve(start, start.saturating_add(entry.length), entry.processors);
        planned.insert(id, start);
        self.by_start.insert((start, key), entry.processors);
        self.index.insert(id, entry.processors, entry.length, start);
    }

    /// Re-places a marked job (its earliest slot with every other reservation held, its own
    /// counted free), and marks the jobs the part of its old slot it frees may help. `holes`:
    /// the span of the releases after which a window before its start may hold it (C2; every
    /// such window meets one of them); `None`: only C1 can move it.
    fn replace(
        &mut self,
        profile: &mut BlockProfile,
        planned: &mut JobTimes,
        now: Time,
        key: Key,
        holes: Option<(Time, Time)>,
    ) {
        let id = key.1;
        let (Some(&entry), Some(old)) = (self.jobs.get(&id), planned.get(id)) else {
            return;
        };
        if old <= now {
            return; // planned for now: it starts below
        }
        let need = i64::from(entry.processors);
        let length = entry.length;
        // C1: room just before its start: it slides to where that room begins.
        let mut new = profile.slide_start(old, need).unwrap_or(old);
        if let Some((first, last)) = holes.filter(|_| new > now) {
            // C2: the earliest plain fit, if it starts before `new` (and, without C1, ends by
            // the old start). It meets [first, last), so it lies in a run of `need` free that
            // does: the search begins at the first such run and ends before `last`.
            let latest = if new < old {
                new - 1
            } else {
                old.saturating_sub(length)
            };
            let latest = latest.min(last - 1);
            if let Some(start) = profile
                .first_run_meeting(first, last, need)
                .and_then(|from| profile.fit(from, need, length, latest))
            {
                new = start;
            }
        }
        #[cfg(test)]
        {
            let deferred = self.stats.deferred.remove(&key);
            if new == old {
                self.stats.in_vain += 1;
            } else {
                self.stats.deferred_moves += u64::from(deferred);
                if new.saturating_add(length) > old {
                    self.stats.slides += 1;
                } else {
                    self.stats.holes += 1;
                }
            }
        }
        if new == old {
            return;
        }
        debug_assert!(new < old, "compression moved {id:?} later");
        // Released over [old, end), reserved over [new, new + length): on their overlap nothing
        // changes.
        let end = old.saturating_add(length);
        let new_end = new.saturating_add(length);
        let freed = old.max(new_end);
        profile.reserve(new, new_end.min(old), entry.processors);
        profile.release(freed, end, entry.processors);
        planned.insert(id, new);
        self.by_start.remove(&(old, key));
        self.by_start.insert((new, key), entry.processors);
        self.index.remove(id, entry.processors, length, old);
        self.index.insert(id, entry.processors, length, new);
        if freed < end {
            self.mark(profile, freed, end, Some(id));
        }
    }

    /// Marks the jobs that the processors just released over [start, end) may let start
    /// earlier (C1 exactly, C2 by [`FitIndex::candidates`]), except `mover` (placed anew).
    fn mark(&mut self, profile: &BlockProfile, start: Time, end: Time, mover: Option<JobId>) {
        let after = start.max(profile.start());
        if after >= end {
            return; // released before now (an end seen by a pass with no job waiting)
        }
        let mut place = (0, 0);
        for (&(at, key), &processors) in self
            .by_start
            .range((Excluded((after, LAST_KEY)), Included((end, LAST_KEY))))
        {
            if Some(key.1) != mover
                && profile.free_at_from(&mut place, at - 1) >= i64::from(processors)
            {
                self.dirty.entry(key).or_insert(None);
                #[cfg(test)]
                if self.cursor.is_some_and(|c| key <= c) {
                    self.stats.deferred.insert(key);
                }
            }
        }
        let most = profile.most_free(start, end);
        if most <= 0 {
            return;
        }
        self.found.clear();
        self.index.candidates(
            most,
            |floor| profile.runs_meeting(start, end, floor),
            &mut self.found,
        );
        for &id in &self.found {
            if Some(id) == mover {
                continue;
            }
            if let Some(entry) = self.jobs.get(&id) {
                let key = (entry.submit, id);
                let holes = self.dirty.entry(key).or_insert(None);
                *holes = Some(match *holes {
                    None => (start, end),
                    Some((first, last)) => (first.min(start), last.max(end)),
                });
                #[cfg(test)]
                if self.cursor.is_some_and(|c| key <= c) {
                    self.stats.deferred.insert(key);
                }
            }
        }
    }

    /// Starts the jobs planned for now, in queue order; those behind a waiting job that does
    /// not start are backfilled.
    fn start_planned(&mut self, planned: &mut JobTimes, now: Time, pass: &mut Pass<'_>) {
        self.starting.clear();
        self.starting.extend(
            self.by_start
                .range((now, FIRST_KEY)..=(now, LAST_KEY))
                .map(|(&(_, key), _)| key),
        );
        let mut blocked = false;
        let mut head = pass.next_waiting(0);
        for k in 0..self.starting.len() {
            let key = self.starting[k];
            let index = match head {
                Some(h) if !blocked && key_at(pass, h) == key => h,
                _ => {
                    // The head does not start now: every later job that does is backfilled.
                    blocked = true;
                    position_of(pass, key)
                }
            };
            self.by_start.remove(&(now, key));
            self.dirty.remove(&key);
            if let Some(entry) = self.jobs.remove(&key.1) {
                self.index
                    .remove(key.1, entry.processors, entry.length, now);
            }
            planned.remove(key.1);
            #[cfg(test)]
            {
                self.stats.deferred.remove(&key);
                self.stats.backfilled += u64::from(blocked);
            }
            pass.start(index, blocked);
            if !blocked {
                head = pass.next_waiting(index + 1);
            }
        }
    }
}

/// The key of the job at queue position `index`.
fn key_at(pass: &Pass<'_>, index: usize) -> Key {
    let job = pass.job(index);
    (job.submit, job.id)
}

/// The queue position of the waiting job `key`: the queue is in arrival order (tombstones
/// included), so by bisection.
fn position_of(pass: &Pass<'_>, key: Key) -> usize {
    let (mut lo, mut hi) = (0, pass.positions());
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if key_at(pass, mid) < key {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    if lo < pass.positions() && key_at(pass, lo) == key {
        lo
    } else {
        // Unreachable while the queue is in arrival order; a walk finds it all the same.
        (0..pass.positions())
            .find(|&i| pass.is_waiting(i) && key_at(pass, i) == key)
            .unwrap_or(lo)
    }
}

#[cfg(test)]
impl Fast {
    /// What the fast path did so far.
    pub(super) fn stats(&self) -> &Stats {
        &self.plan.stats
    }

    /// Checks the indexes against one another and the profile against `reference`'s steps
    /// (tests).
    pub(super) fn check(&self, planned: &JobTimes) {
        let Some(profile) = &self.profile else {
            return;
        };
        profile.check();
        let mut indexed = Vec::new();
        for (&(start, key), &processors) in &self.plan.by_start {
            assert_eq!(planned.get(key.1), Some(start));
            let entry = self.plan.jobs[&key.1];
            assert_eq!(entry.processors, processors);
            indexed.push((
                key.1,
                processors,
                entry.length,
                start.saturating_sub(entry.length),
            ));
        }
        indexed.sort();
        assert_eq!(self.plan.index.jobs(), indexed);
        assert!(profile.least_free() >= 0);
    }
}
