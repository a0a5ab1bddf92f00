//! Which placed jobs could fit in a hole that a release of processors opened: conservative
//! backfilling's fast path asks this after every release ([`super::fast`]).
//!
//! A job of `s` processors held for `L` seconds and planned at `o` fits in a run of free
//! processors only if the run has at least `s` free, lasts at least `L` and starts by `o - L`
//! (the job must end by its planned start to be worth moving there). The jobs are split by size
//! class (1, 2, 3-4, 5-8, ... processors, as the waiting queue's index) and, within a class, by
//! length into buckets growing by a factor of about 1.4; a bucket keeps its jobs ordered by
//! `o - L`. A query for the jobs of one class that fit in runs of a given length starting at a
//! given instant looks only at the buckets short enough whose latest `o - L` is late enough, and
//! in them only at the jobs late enough: it visits what it returns, plus the jobs of one bucket
//! that are a little too long. The answer may include jobs that do not fit (the size and the run
//! are bounds for the whole class); it never leaves out one that does.

use std::collections::BTreeMap;

use crate::{JobId, Time};

/// Size classes: class `c` holds jobs of 2^(c-1) + 1 ..= 2^c processors (class 0: one).
const CLASSES: usize = 33;

/// Length buckets per class (a factor of about 1.4 each, up to 2^31 s).
const BUCKETS: usize = 64;

/// The class of a job of `processors` processors.
fn class_of(processors: u32) -> usize {
    (u32::BITS - processors.saturating_sub(1).leading_zeros()) as usize
}

/// The fewest processors a job of class `class` asks for.
fn floor_of(class: usize) -> i64 {
    if class == 0 {
        1
    } else {
        (1i64 << (class - 1)) + 1
    }
}

/// The bucket of a job held for `length` seconds: twice the base-2 logarithm, plus one in the
/// upper half of an octave; lengths under 2 s share bucket 0, beyond 2^31 s the last.
fn bucket_of(length: Time) -> usize {
    if length < 2 {
        return 0;
    }
    let log = (Time::BITS - 1 - length.leading_zeros()) as usize;
    let upper = ((length >> (log - 1)) & 1) as usize;
    (2 * log + upper).min(BUCKETS - 1)
}

/// The placed jobs by class and length bucket (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct FitIndex {
    classes: Vec<Class>,
    /// Bit `c`: class `c` holds a job.
    occupied: u64,
}

/// One size class.
#[derive(Debug, Clone)]
struct Class {
    /// Per length bucket: (planned start - length, job) -> (length, processors).
    buckets: Vec<BTreeMap<(Time, JobId), (Time, u32)>>,
    /// Per bucket: its latest planned start - length (`Time::MIN` when empty).
    latest: [Time; BUCKETS],
    /// Bit `b`: bucket `b` holds a job.
    occupied: u64,
    /// Jobs in the class.
    jobs: usize,
}

impl Default for Class {
    fn default() -> Class {
        Class {
            buckets: vec![BTreeMap::new(); BUCKETS],
            latest: [Time::MIN; BUCKETS],
            occupied: 0,
            jobs: 0,
        }
    }
}

impl Class {
    /// Whether some bucket of jobs no longer than about `longest` has a job whose planned start
    /// minus length is at or after `first`.
    fn any(&self, first: Time, longest: Time) -> bool {
        let mut buckets = self.occupied & (u64::MAX >> (BUCKETS - 1 - bucket_of(longest)));
        while buckets != 0 {
            let b = buckets.trailing_zeros() as usize;
            buckets &= buckets - 1;
            if self.latest[b] >= first {
                return true;
            }
        }
        false
    }
}

impl FitIndex {
    /// Adds a job of `processors` processors held for `length` seconds, planned at `start`.
    pub(super) fn insert(&mut self, id: JobId, processors: u32, length: Time, start: Time) {
        if self.classes.is_empty() {
            self.classes.resize_with(CLASSES, Class::default);
        }
        let c = class_of(processors);
        let class = &mut self.classes[c];
        let b = bucket_of(length);
        let latest = start.saturating_sub(length);
        class.buckets[b].insert((latest, id), (length, processors));
        class.latest[b] = class.latest[b].max(latest);
        class.occupied |= 1 << b;
        class.jobs += 1;
        self.occupied |= 1 << c;
    }

    /// Removes the job [`FitIndex::insert`] added with these arguments.
    pub(super) fn remove(&mut self, id: JobId, processors: u32, length: Time, start: Time) {
        let c = class_of(processors);
        let Some(class) = self.classes.get_mut(c) else {
            return;
        };
        let b = bucket_of(length);
        let latest = start.saturating_sub(length);
        let bucket = &mut class.buckets[b];
        if bucket.remove(&(latest, id)).is_none() {
            return;
        }
        class.jobs -= 1;
        if class.latest[b] == latest {
            class.latest[b] = bucket.last_key_value().map_or(Time::MIN, |(k, _)| k.0);
        }
        if bucket.is_empty() {
            class.occupied &= !(1 << b);
        }
        if class.jobs == 0 {
            self.occupied &= !(1 << c);
        }
    }

    /// Appends to `out` every job of at most `most` processors that might fit in a run of free
    /// processors: for each class whose smallest size is at most `most`, `runs(smallest size)`
    /// gives the start of the first run with that many free and an upper bound on the length
    /// of any such run (`None`: no run); the jobs of the class no longer than that bound whose
    /// planned start minus length is at or after the first run's start are appended.
    ///
    /// The runs with more processors free lie within those with fewer, so the bounds of the
    /// smallest size asked for hold for every larger one: a class is skipped at once if no job
    /// passes them, and only asks for its own bounds otherwise.
    pub(super) fn candidates(
        &self,
        most: i64,
        mut runs: impl FnMut(i64) -> Option<(Time, Time)>,
        out: &mut Vec<JobId>,
    ) {
        let size = u32::try_from(most).unwrap_or(u32::MAX);
        let mut classes = self.occupied;
        let mut loose: Option<(Time, Time)> = None;
        while classes != 0 {
            let c = classes.trailing_zeros() as usize;
            classes &= classes - 1;
            let floor = floor_of(c);
            if floor > most {
                break;
            }
            let class = &self.classes[c];
            let (first, longest) = match loose {
                None => {
                    let Some(bounds) = runs(floor) else {
                        return; // no run of the fewest: none of more
                    };
                    loose = Some(bounds);
                    bounds
                }
                Some((first, longest)) => {
                    if !class.any(first, longest) {
                        continue;
                    }
                    let Some(bounds) = runs(floor) else {
                        return;
                    };
                    bounds
                }
            };
            let last = bucket_of(longest);
            let mut buckets = class.occupied & (u64::MAX >> (BUCKETS - 1 - last));
            while buckets != 0 {
                let b = buckets.trailing_zeros() as usize;
                buckets &= buckets - 1;
                if class.latest[b] < first {
                    continue;
                }
                for (&(_, id), &(length, processors)) in class.buckets[b].range((first, JobId(0))..)
                {
                    if length <= longest && processors <= size {
                        out.push(id);
                    }
                }
            }
        }
    }

    /// Every job in the index as (id, processors, length, planned start - length), for tests.
    #[cfg(test)]
    pub(super) fn jobs(&self) -> Vec<(JobId, u32, Time, Time)> {
        let mut all: Vec<_> = self
            .classes
            .iter()
            .flat_map(|c| c.buckets.iter())
            .flat_map(|b| b.iter())
            .map(|(&(latest, id), &(length, processors))| (id, processors, length, latest))
            .collect();
        all.sort();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_grow_by_about_a_square_root_of_two() {
        assert_eq!(bucket_of(0), 0);
        assert_eq!(bucket_of(1), 0);
        assert_eq!(bucket_of(2), 2);
        assert_eq!(bucket_of(3), 3);
        assert_eq!(bucket_of(4), 4);
        assert_eq!(bucket_of(6), 5);
        assert_eq!(bucket_of(7), 5);
        assert_eq!(bucket_of(8), 6);
        assert_eq!(bucket_of(Time::MAX), BUCKETS - 1);
        let mut last = 0;
        for length in 1..100_000 {
            let b = bucket_of(length);
            assert!(b >= last);
            last = b;
        }
    }

    #[test]
    fn candidates_are_every_job_that_passes() {
        let mut index = FitIndex::default();
        let mut jobs = Vec::new();
        let mut seed = 17u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            seed >> 33
        };
        for id in 0..2000u32 {
            let processors = 1 + (next() % 64) as u32;
            let length = 1 + (next() % 5000) as Time;
            let start = (next() % 20_000) as Time;
            index.insert(JobId(id), processors, length, start);
            jobs.push((JobId(id), processors, length, start));
        }
        for k in (0..2000).step_by(3) {
            let (id, p, l, s) = jobs[k];
            index.remove(id, p, l, s);
            let start = s / 2;
            index.insert(id, p, l, start);
            jobs[k].3 = start;
        }
        for k in (0..2000).step_by(7) {
            let (id, p, l, s) = jobs[k];
            index.remove(id, p, l, s);
        }
        let kept: Vec<_> = (0..2000).filter(|k| k % 7 != 0).map(|k| jobs[k]).collect();
        for _ in 0..200 {
            let most = 1 + (next() % 70) as i64;
            let first = (next() % 20_000) as Time;
            let longest = (next() % 6000) as Time;
            let mut out = Vec::new();
            index.candidates(most, |_| Some((first, longest)), &mut out);
            out.sort();
            let expected: Vec<JobId> = kept
                .iter()
                .filter(|&&(_, p, l, s)| i64::from(p) <= most && l <= longest && s - l >= first)
                .map(|j| j.0)
                .collect();
            assert_eq!(out, expected);
        }
    }
}
