//! Which placed jobs could fit in a hole that a release of processors opened: conservative
//! backfilling's fast path asks this after every release ([`super::fast`]).
//!
//! Jobs are split into size classes (1, 2, 3-4, 5-8, ... processors, as the waiting queue's
//! index), one tree each over the class's jobs in the order they were placed, whose nodes hold
//! the smallest size, the shortest length and the latest start that still ends before the job's
//! planned start (planned start - length) of the jobs below them. A query asks for the jobs of
//! at most some size and length whose planned start minus length is at least some instant, and
//! skips every subtree in which no job can pass. The answer may include jobs that do not fit
//! (the query is a relaxation); it never leaves out one that does.

use crate::{JobId, Time};

/// The slot of a job not in the index.
pub(super) const NO_SLOT: u32 = u32::MAX;

/// Size classes: class `c` holds jobs of 2^(c-1) + 1 ..= 2^c processors (class 0: one).
const CLASSES: usize = 33;

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

/// What a node knows of the jobs below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Summary {
    /// The fewest processors.
    size: u32,
    /// The shortest length, seconds.
    length: Time,
    /// The latest planned start minus length, seconds: the latest instant from which one of
    /// them could run and still end by its planned start.
    latest: Time,
}

/// The summary of no job: no query accepts it.
const NOTHING: Summary = Summary {
    size: u32::MAX,
    length: Time::MAX,
    latest: Time::MIN,
};

impl Summary {
    fn join(a: Summary, b: Summary) -> Summary {
        Summary {
            size: a.size.min(b.size),
            length: a.length.min(b.length),
            latest: a.latest.max(b.latest),
        }
    }
}

/// The placed jobs by size class (see the module documentation).
#[derive(Debug, Clone, Default)]
pub(super) struct FitIndex {
    classes: Vec<Class>,
    /// Bit `c`: class `c` holds a job.
    occupied: u64,
}

/// One size class: a tree over slots in placement order (a removed job leaves an empty slot
/// until the class is compacted).
#[derive(Debug, Clone, Default)]
struct Class {
    /// The job in each used slot.
    ids: Vec<JobId>,
    /// The tree: node 1 is the root, node `n` has children `2n` and `2n + 1`, slot `s` is leaf
    /// `capacity + s`.
    nodes: Vec<Summary>,
    /// Leaves (a power of two, or 0 before the first job).
    capacity: usize,
    /// Jobs in the class.
    live: usize,
}

impl Class {
    /// Recomputes the nodes above leaf `leaf`, stopping where nothing changes.
    fn update_above(&mut self, leaf: usize) {
        let mut node = leaf / 2;
        while node >= 1 {
            let joined = Summary::join(self.nodes[2 * node], self.nodes[2 * node + 1]);
            if self.nodes[node] == joined {
                break;
            }
            self.nodes[node] = joined;
            node /= 2;
        }
    }

    /// Rebuilds the tree over `leaves` (one per slot, in order) with room for at least
    /// `room` slots.
    fn rebuild(&mut self, leaves: &[Summary], room: usize) {
        self.capacity = room.max(16).next_power_of_two();
        self.nodes.clear();
        self.nodes.resize(2 * self.capacity, NOTHING);
        self.nodes[self.capacity..self.capacity + leaves.len()].copy_from_slice(leaves);
        for node in (1..self.capacity).rev() {
            self.nodes[node] = Summary::join(self.nodes[2 * node], self.nodes[2 * node + 1]);
        }
    }

    /// The summaries of the used slots.
    fn leaves(&self) -> Vec<Summary> {
        self.nodes[self.capacity..self.capacity + self.ids.len()].to_vec()
    }
}

impl FitIndex {
    fn summary(processors: u32, length: Time, start: Time) -> Summary {
        Summary {
            size: processors,
            length,
            latest: start.saturating_sub(length),
        }
    }

    /// Adds a job planned at `start` for `length` seconds; returns its slot in its class.
    pub(super) fn push(&mut self, id: JobId, processors: u32, length: Time, start: Time) -> u32 {
        if self.classes.is_empty() {
            self.classes.resize_with(CLASSES, Class::default);
        }
        let c = class_of(processors);
        let class = &mut self.classes[c];
        let slot = class.ids.len();
        if slot == class.capacity {
            let leaves = class.leaves();
            class.rebuild(&leaves, 2 * slot);
        }
        class.ids.push(id);
        class.live += 1;
        self.occupied |= 1 << c;
        let leaf = class.capacity + slot;
        class.nodes[leaf] = FitIndex::summary(processors, length, start);
        class.update_above(leaf);
        slot as u32
    }

    /// The job in `slot` (of `processors` processors) is now planned at `start`.
    pub(super) fn moved(&mut self, slot: u32, processors: u32, length: Time, start: Time) {
        let class = &mut self.classes[class_of(processors)];
        let leaf = class.capacity + slot as usize;
        class.nodes[leaf] = FitIndex::summary(processors, length, start);
        class.update_above(leaf);
    }

    /// Removes the job in `slot` (of `processors` processors). When the class's empty slots
    /// outnumber its jobs it is compacted, and `relocate` learns every job's new slot.
    pub(super) fn remove(
        &mut self,
        slot: u32,
        processors: u32,
        mut relocate: impl FnMut(JobId, u32),
    ) {
        let c = class_of(processors);
        let class = &mut self.classes[c];
        let leaf = class.capacity + slot as usize;
        class.nodes[leaf] = NOTHING;
        class.update_above(leaf);
        class.live -= 1;
        if class.live == 0 {
            class.ids.clear();
            class.nodes.fill(NOTHING);
            self.occupied &= !(1 << c);
            return;
        }
        let empty = class.ids.len() - class.live;
        if empty > class.live.max(64) {
            let mut ids = Vec::with_capacity(class.live);
            let mut leaves = Vec::with_capacity(class.live);
            for (s, &id) in class.ids.iter().enumerate() {
                let summary = class.nodes[class.capacity + s];
                if summary != NOTHING {
                    relocate(id, ids.len() as u32);
                    ids.push(id);
                    leaves.push(summary);
                }
            }
            class.ids = ids;
            class.rebuild(&leaves, 2 * leaves.len());
        }
    }

    /// Appends to `out` every job of at most `most` processors that might fit in a run of free
    /// processors: for each class whose smallest size is at most `most`, `runs(smallest size)`
    /// gives the start of the first run with that many free and an upper bound on the length
    /// of any such run (`None`: no run), and the jobs whose length is within the bound and whose
    /// planned start minus length is at or after the first run's start are appended.
    pub(super) fn candidates(
        &self,
        most: i64,
        mut runs: impl FnMut(i64) -> Option<(Time, Time)>,
        out: &mut Vec<JobId>,
    ) {
        let mut classes = self.occupied;
        let mut stack = Vec::new();
        while classes != 0 {
            let c = classes.trailing_zeros() as usize;
            classes &= classes - 1;
            let floor = floor_of(c);
            if floor > most {
                break;
            }
            let class = &self.classes[c];
            let size = u32::try_from(most).unwrap_or(u32::MAX);
            let root = class.nodes[1];
            if root.size > size {
                continue;
            }
            let Some((first, longest)) = runs(floor) else {
                continue;
            };
            let passes = |s: &Summary| s.size <= size && s.length <= longest && s.latest >= first;
            if !passes(&root) {
                continue;
            }
            stack.clear();
            stack.push(1);
            while let Some(node) = stack.pop() {
                if node >= class.capacity {
                    out.push(class.ids[node - class.capacity]);
                    continue;
                }
                for child in [2 * node + 1, 2 * node] {
                    if passes(&class.nodes[child]) {
                        stack.push(child);
                    }
                }
            }
        }
    }

    /// Every job in the index with its summary's fields (size, length, latest), for tests.
    #[cfg(test)]
    pub(super) fn jobs(&self) -> Vec<(JobId, u32, Time, Time)> {
        let mut all = Vec::new();
        for class in &self.classes {
            for (s, &id) in class.ids.iter().enumerate() {
                let leaf = class.nodes[class.capacity + s];
                if leaf != NOTHING {
                    all.push((id, leaf.size, leaf.length, leaf.latest));
                }
            }
        }
        all.sort();
        all
    }
}
