//! The waiting queue: jobs at positions in the scheduler's order, where a started job stays as a
//! tombstone until enough of them accumulate, and an index over the positions that finds the
//! next job that could start without walking the jobs that cannot.
//!
//! Why: under saturation thousands of jobs wait while a few processors are free. EASY's pass
//! looked at every waiting job to find the few small or short enough to backfill, and removing
//! the started jobs shifted the whole queue after every pass, so the cost of a simulated job
//! grew with the queue's length. Here a start marks the position (O(log n)), the queue is
//! compacted only when tombstones outnumber the waiting jobs (amortized O(1) per start), and
//! [`WaitingQueue::find`] descends trees of (smallest size, shortest prediction) per range of
//! positions, skipping every range in which no job passes the caller's test. The jobs are split
//! into size classes (1, 2, 3-4, 5-8, ... processors), one tree each: a test like "at most f
//! processors and at most t seconds" is then exact on every class wholly above or below f,
//! instead of wandering into ranges that hold one small long job and another wide short one.

use super::{Queued, total_order_key};
use crate::order::QueueOrder;
use crate::{JobId, JobRequest, Time};

/// The tree's value for a position without a waiting job (a tombstone or past the end): no test
/// that asks for at most the machine's processors accepts it.
const GONE: (u32, Time) = (u32::MAX, Time::MAX);

/// Size classes: class `c` holds jobs of 2^(c-1) + 1 ..= 2^c processors (class 0: one).
const CLASSES: usize = 33;
const _: () = assert!(CLASSES <= u64::BITS as usize);

fn class_of(processors: u32) -> usize {
    (u32::BITS - processors.saturating_sub(1).leading_zeros()) as usize
}

/// Waiting jobs by position (see the module documentation).
#[derive(Debug, Default)]
pub(crate) struct WaitingQueue {
    /// Jobs at their positions, tombstones (`started`) included.
    slots: Vec<Queued>,
    /// For each position, its index among its size class's members.
    member: Vec<usize>,
    /// Jobs not started.
    waiting: usize,
    /// Every position before this one is a tombstone.
    head: usize,
    /// Per size class: its positions (increasing) and their tree.
    classes: Vec<SizeClass>,
    /// Bit `c` is set when size class `c` has a waiting job.
    occupied: u64,
    /// Whether the classes and trees describe the positions.
    index: IndexState,
    /// Buffers of [`WaitingQueue::sort_by_priority`], kept between passes.
    scratch: SortScratch,
}

/// The buffers of a sort by priority, reused from pass to pass so that a pass allocates
/// nothing once they have grown to the queue's length.
#[derive(Debug, Default)]
struct SortScratch {
    /// The waiting jobs, in queue order (what [`QueueOrder::priorities`] reads).
    jobs: Vec<JobRequest>,
    /// Their priorities, in the same order.
    priorities: Vec<f64>,
    /// (sort key of the priority, submit, id, position) in the new order.
    keys: Vec<SortKey>,
    /// The jobs in the new order, swapped with the queue's.
    slots: Vec<Queued>,
}

/// Sorts `items` by `less` with insertion sort, which costs one comparison per item already in
/// order, unless that would move items more than `budget` places in all: then it stops and
/// returns false, leaving `items` a permutation of what it was, for another sort to finish.
fn insertion_sort<T: Copy>(items: &mut [T], budget: usize, less: impl Fn(&T, &T) -> bool) -> bool {
    let mut moves = 0;
    for i in 1..items.len() {
        let item = items[i];
        if !less(&item, &items[i - 1]) {
            continue;
        }
        let mut j = i;
        while j > 0 && less(&item, &items[j - 1]) {
            items[j] = items[j - 1];
            j -= 1;
        }
        items[j] = item;
        moves += i - j;
        if moves > budget {
            return false;
        }
    }
    true
}

/// A waiting job's place in the priority order: (its [`descending_key`], submit, id), then its
/// position before the sort (which never decides: ids are distinct). Everything a comparison
/// needs is in the key, so a sort never looks at the jobs themselves.
type SortKey = (u64, Time, JobId, usize);

/// An integer that sorts like `priority` in decreasing [`f64::total_cmp`] order: the highest
/// priority gets the smallest key.
fn descending_key(priority: f64) -> u64 {
    !((total_order_key(priority) as u64) ^ (1 << 63))
}

/// Whether the index (size classes and their trees) is up to date.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum IndexState {
    /// Up to date: pushes and starts update it in O(log n).
    #[default]
    Fresh,
    /// Out of date after a compaction or an insertion; rebuilt at the next search (amortized:
    /// compactions are rare for the rules that search, arrival-order EASY and FCFS).
    Stale,
    /// The queue was sorted (a priority order re-sorts it at every pass): searches walk the
    /// positions instead, which costs less than the sort that preceded them, so the index is
    /// not rebuilt at every pass.
    Reordered,
}

/// The positions of one size class, in queue order, and a [`MinTree`] over them.
#[derive(Debug, Default)]
struct SizeClass {
    positions: Vec<usize>,
    /// Waiting jobs among them.
    waiting: usize,
    tree: MinTree,
}

impl WaitingQueue {
    /// Positions, tombstones included (the bound of every position).
    pub(crate) fn positions(&self) -> usize {
        self.slots.len()
    }

    /// Jobs waiting (not started).
    pub(crate) fn waiting(&self) -> usize {
        self.waiting
    }

    /// The job at `position` (a started job stays readable until compaction).
    pub(crate) fn get(&self, position: usize) -> &Queued {
        &self.slots[position]
    }

    /// The waiting jobs in queue order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &Queued> + '_ {
        WaitingIter {
            slots: self.slots[self.head..].iter(),
            left: self.waiting,
        }
    }

    /// Whether some position holds a tombstone.
    pub(crate) fn has_tombstones(&self) -> bool {
        self.waiting < self.slots.len()
    }

    /// Appends a job at the end.
    pub(crate) fn push(&mut self, queued: Queued) {
        if self.classes.is_empty() {
            self.classes.resize_with(CLASSES, SizeClass::default);
        }
        let position = self.slots.len();
        let value = (queued.job.processors, queued.prediction);
        self.slots.push(queued);
        self.waiting += 1;
        if self.index != IndexState::Fresh {
            return;
        }
        let c = class_of(queued.job.processors);
        let class = &mut self.classes[c];
        class.positions.push(position);
        class.waiting += 1;
        self.occupied |= 1 << c;
        self.member.push(class.positions.len() - 1);
        class.tree.push(value);
    }

    /// Inserts a job at `position`, moving later positions back by one (O(n); arrivals out of
    /// order are rare).
    pub(crate) fn insert(&mut self, position: usize, queued: Queued) {
        if position == self.slots.len() {
            return self.push(queued);
        }
        self.slots.insert(position, queued);
        self.waiting += 1;
        self.head = self.head.min(position);
        self.invalidate(IndexState::Stale);
    }

    /// The number of leading positions whose jobs pass `pred`, by binary search: for a queue
    /// sorted by a key, where a job with that key goes (tombstones keep their keys, so the
    /// order still holds).
    pub(crate) fn partition_point(&self, pred: impl FnMut(&Queued) -> bool) -> usize {
        self.slots.partition_point(pred)
    }

    /// Marks the job at `position` started: it stays as a tombstone until compaction.
    pub(crate) fn mark_started(&mut self, position: usize) {
        debug_assert!(!self.slots[position].started, "started twice");
        self.slots[position].started = true;
        self.waiting -= 1;
        if self.index == IndexState::Fresh {
            let c = class_of(self.slots[position].job.processors);
            let class = &mut self.classes[c];
            class.tree.set(self.member[position], GONE);
            class.waiting -= 1;
            if class.waiting == 0 {
                self.occupied &= !(1 << c);
            }
        }
        while self.head < self.slots.len() && self.slots[self.head].started {
            self.head += 1;
        }
    }

    /// Removes every tombstone (O(n)).
    pub(crate) fn compact(&mut self) {
        if self.has_tombstones() {
            self.slots.retain(|q| !q.started);
            self.head = 0;
            self.invalidate(IndexState::Stale);
        }
    }

    /// Removes the tombstones once they outnumber the waiting jobs (and are more than a few), so
    /// the queue stays within twice its waiting jobs at amortized O(1) per start.
    pub(crate) fn compact_if_sparse(&mut self) {
        let tombstones = self.slots.len() - self.waiting;
        if tombstones > 64 && tombstones > self.waiting {
            self.compact();
        }
    }

    /// Sorts the waiting jobs by `key` (tombstones are removed first). Keys must be distinct
    /// (they end with the job id), so the order does not depend on the sort algorithm. The
    /// straightforward sort that [`WaitingQueue::sort_by_priority`] must agree with.
    #[cfg(test)]
    pub(crate) fn sort_by_cached_key<K: Ord>(&mut self, key: impl FnMut(&Queued) -> K) {
        self.compact();
        self.slots.sort_by_cached_key(key);
        self.invalidate(IndexState::Reordered);
    }

    /// Sorts the waiting jobs by `order`'s priority at `now`, highest first, ties by arrival
    /// (submit, then id); tombstones are removed first. The keys (submit and id included) are
    /// distinct, so the order is the one any correct sort gives: that of sorting by
    /// `(Reverse(priority in total_cmp order), submit, id)`.
    ///
    /// Cheaper than that sort, with the same result: the priorities come from one
    /// [`QueueOrder::priorities`] call, into buffers kept between passes; the sort moves
    /// [`SortKey`]s, which hold all a comparison needs; the queue is mostly in order already
    /// (the last pass's order, with the new arrivals at the end), so an insertion sort does it
    /// in about one comparison per job, with a budget of moves beyond which the standard
    /// library's sort finishes the work; and only the jobs from the first one whose position
    /// changed are rewritten.
    pub(crate) fn sort_by_priority(&mut self, order: &dyn QueueOrder, now: Time) {
        self.compact();
        let scratch = &mut self.scratch;
        scratch.jobs.clear();
        scratch.jobs.extend(self.slots.iter().map(|q| q.job));
        scratch.priorities.clear();
        order.priorities(&scratch.jobs, now, &mut scratch.priorities);
        if scratch.priorities.len() != scratch.jobs.len() {
            // An order that broke the contract of `priorities`: ask job by job instead.
            scratch.priorities.clear();
            scratch
                .priorities
                .extend(scratch.jobs.iter().map(|job| order.priority(job, now)));
        }
        scratch.keys.clear();
        scratch.keys.extend(
            scratch
                .priorities
                .iter()
                .zip(&scratch.jobs)
                .enumerate()
                .map(|(position, (&p, job))| (descending_key(p), job.submit, job.id, position)),
        );
        // Mostly in order already: insertion sort, unless it moves too much.
        let budget = 2 * scratch.keys.len() + 64;
        if !insertion_sort(&mut scratch.keys, budget, |a, b| a < b) {
            scratch.keys.sort_unstable();
        }
        let slots = &self.slots;
        // The jobs before the first one that moved stay where they are.
        if let Some(first) = scratch
            .keys
            .iter()
            .enumerate()
            .position(|(k, &(_, _, _, position))| k != position)
        {
            scratch.slots.clear();
            scratch.slots.extend(
                scratch.keys[first..]
                    .iter()
                    .map(|&(_, _, _, position)| slots[position]),
            );
            self.slots[first..].copy_from_slice(&scratch.slots);
        }
        self.invalidate(IndexState::Reordered);
    }

    /// Puts the jobs at positions `order` (a permutation of the positions: the job at
    /// `order[k]` moves to `k`).
    pub(crate) fn permute(&mut self, order: &[usize]) {
        debug_assert_eq!(order.len(), self.slots.len());
        if order.iter().enumerate().all(|(k, &i)| k == i) {
            return; // already in that order (dynP under FCFS, mostly): keep the index
        }
        let slots: Vec<Queued> = order.iter().map(|&i| self.slots[i]).collect();
        self.slots = slots;
        self.head = self
            .slots
            .iter()
            .position(|q| !q.started)
            .unwrap_or(self.slots.len());
        self.invalidate(IndexState::Reordered);
    }

    /// Marks the index out of date (a reordering wins over a compaction: the queue stays
    /// unindexed until it is rebuilt).
    fn invalidate(&mut self, state: IndexState) {
        if self.index != IndexState::Reordered {
            self.index = state;
        }
    }

    /// The first position at or after `from` holding a waiting job whose (size, prediction)
    /// passes `test`. `test` is also asked about ranges of positions with the smallest size and
    /// the shortest prediction among their waiting jobs, and must accept a range whenever it
    /// would accept one of its jobs (for example "size at most f, and prediction at most t or
    /// size at most e" is monotone in both, so it does).
    pub(crate) fn find(&mut self, from: usize, test: impl Fn(u32, Time) -> bool) -> Option<usize> {
        let from = from.max(self.head);
        match self.index {
            IndexState::Fresh => {}
            IndexState::Stale => self.rebuild(),
            IndexState::Reordered => {
                return (from..self.slots.len()).find(|&i| {
                    let q = &self.slots[i];
                    !q.started && test(q.job.processors, q.prediction)
                });
            }
        }
        let mut best = self.slots.len();
        let mut occupied = self.occupied;
        while occupied != 0 {
            let class = &self.classes[occupied.trailing_zeros() as usize];
            occupied &= occupied - 1;
            if !class.tree.root_passes(&test) {
                continue; // no job of the class passes (or the class is empty)
            }
            let first = class.positions.partition_point(|&p| p < from);
            let end = class.positions.partition_point(|&p| p < best);
            if let Some(k) = class.tree.find(first, end, &test) {
                best = class.positions[k];
            }
        }
        (best < self.slots.len()).then_some(best)
    }

    /// The first waiting job at or after `from`. A walk, but amortized O(1) where it is used
    /// (the head of the queue): every position before `head` is a tombstone, and `head` moves
    /// past leading tombstones as jobs start.
    pub(crate) fn next_waiting(&self, from: usize) -> Option<usize> {
        (from.max(self.head)..self.slots.len()).find(|&i| !self.slots[i].started)
    }

    /// Builds the index from the positions (O(n)) and marks it fresh. A queue once sorted stays
    /// [`IndexState::Reordered`] (priority orders re-sort it at every pass) and is never
    /// rebuilt.
    fn rebuild(&mut self) {
        self.index = IndexState::Fresh;
        if self.classes.is_empty() {
            self.classes.resize_with(CLASSES, SizeClass::default);
        }
        for class in &mut self.classes {
            class.positions.clear();
            class.waiting = 0;
        }
        self.member.clear();
        self.occupied = 0;
        for (position, q) in self.slots.iter().enumerate() {
            let c = class_of(q.job.processors);
            let class = &mut self.classes[c];
            class.positions.push(position);
            if !q.started {
                class.waiting += 1;
                self.occupied |= 1 << c;
            }
            self.member.push(class.positions.len() - 1);
        }
        let value = |q: &Queued| {
            if q.started {
                GONE
            } else {
                (q.job.processors, q.prediction)
            }
        };
        let slots = &self.slots;
        for class in &mut self.classes {
            class
                .tree
                .rebuild(class.positions.iter().map(|&p| value(&slots[p])));
        }
    }
}

/// A complete binary tree over a sequence of (size, prediction) values (root at 1, leaves at
/// `capacity + index`), each node holding the smallest size and the shortest prediction below
/// it. Unused leaves hold [`GONE`].
#[derive(Debug, Default)]
struct MinTree {
    nodes: Vec<(u32, Time)>,
    capacity: usize,
    len: usize,
}

impl MinTree {
    fn push(&mut self, value: (u32, Time)) {
        if self.len == self.capacity {
            let values: Vec<(u32, Time)> = (0..self.len)
                .map(|i| self.nodes[self.capacity + i])
                .chain(std::iter::once(value))
                .collect();
            self.rebuild(values.into_iter());
        } else {
            self.len += 1;
            self.set(self.len - 1, value);
        }
    }

    fn set(&mut self, index: usize, value: (u32, Time)) {
        let mut node = self.capacity + index;
        self.nodes[node] = value;
        while node > 1 {
            node /= 2;
            let (a, b) = (self.nodes[2 * node], self.nodes[2 * node + 1]);
            self.nodes[node] = (a.0.min(b.0), a.1.min(b.1));
        }
    }

    fn rebuild(&mut self, values: impl ExactSizeIterator<Item = (u32, Time)>) {
        self.len = values.len();
        self.capacity = (self.len + 1).next_power_of_two().max(8);
        self.nodes.clear();
        self.nodes.resize(2 * self.capacity, GONE);
        for (i, value) in values.enumerate() {
            self.nodes[self.capacity + i] = value;
        }
        for node in (1..self.capacity).rev() {
            let (a, b) = (self.nodes[2 * node], self.nodes[2 * node + 1]);
            self.nodes[node] = (a.0.min(b.0), a.1.min(b.1));
        }
    }

    /// Whether some value might pass `test`: the root's (smallest size, shortest prediction)
    /// does. False for an empty tree.
    fn root_passes(&self, test: &impl Fn(u32, Time) -> bool) -> bool {
        match self.nodes.get(1) {
            Some(&(size, prediction)) => size != GONE.0 && test(size, prediction),
            None => false,
        }
    }

    /// The first index in `from..to` whose value passes `test` (see [`WaitingQueue::find`]).
    fn find(&self, from: usize, to: usize, test: &impl Fn(u32, Time) -> bool) -> Option<usize> {
        if from >= to.min(self.len) {
            return None;
        }
        self.find_in(1, 0, self.capacity, from, to, test)
    }

    fn find_in(
        &self,
        node: usize,
        start: usize,
        len: usize,
        from: usize,
        to: usize,
        test: &impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        let (size, prediction) = self.nodes[node];
        if start + len <= from || start >= to || size == GONE.0 || !test(size, prediction) {
            return None;
        }
        if len == 1 {
            return Some(start);
        }
        let half = len / 2;
        self.find_in(2 * node, start, half, from, to, test)
            .or_else(|| self.find_in(2 * node + 1, start + half, half, from, to, test))
    }
}

/// The waiting jobs of a [`WaitingQueue`], skipping tombstones.
struct WaitingIter<'a> {
    slots: std::slice::Iter<'a, Queued>,
    left: usize,
}

impl<'a> Iterator for WaitingIter<'a> {
    type Item = &'a Queued;

    fn next(&mut self) -> Option<&'a Queued> {
        let next = self.slots.by_ref().find(|q| !q.started)?;
        self.left -= 1;
        Some(next)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for WaitingIter<'_> {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JobId, JobRequest};

    fn queued(id: u32, processors: u32, prediction: Time) -> Queued {
        Queued {
            job: JobRequest {
                id: JobId(id),
                submit: 0,
                processors,
                estimate: prediction,
                user: 0,
            },
            prediction,
            started: false,
        }
    }

    /// The first position at or after `from` passing `test`, by walking every position.
    fn walk(q: &WaitingQueue, from: usize, test: impl Fn(u32, Time) -> bool) -> Option<usize> {
        (from..q.positions()).find(|&i| {
            let s = q.get(i);
            !s.started && test(s.job.processors, s.prediction)
        })
    }

    #[test]
    fn find_agrees_with_a_walk_through_starts_and_compaction() {
        let mut q = WaitingQueue::default();
        for i in 0..300u32 {
            q.push(queued(i, 1 + (i * 37) % 64, Time::from((i * 7919) % 5000)));
        }
        let mut round = 0u32;
        while q.waiting() > 0 {
            for (free, limit, extra) in [(8, 1000, 2), (64, 0, 64), (1, 5000, 0), (30, 200, 10)] {
                let test = move |size: u32, prediction: Time| {
                    size <= free && (prediction <= limit || size <= extra)
                };
                for from in [0, 5, 77, 150, 299] {
                    assert_eq!(q.find(from, test), walk(&q, from, test), "from {from}");
                    assert_eq!(
                        q.next_waiting(from),
                        walk(&q, from, |_, _| true),
                        "from {from}"
                    );
                }
            }
            assert_eq!(q.iter().count(), q.waiting());
            // Start every third waiting job, then compact when sparse.
            let victims: Vec<usize> = (0..q.positions())
                .filter(|&i| !q.get(i).started)
                .step_by(3)
                .collect();
            for i in victims {
                q.mark_started(i);
            }
            round += 1;
            if round % 2 == 0 {
                q.compact_if_sparse();
            }
            q.push(queued(1000 + round, 3, 50));
            if round > 40 {
                break;
            }
        }
        // A sorted queue is searched by walking; the answers are the same.
        q.sort_by_cached_key(|s| (s.prediction, s.job.id));
        for from in [0, 3, 40] {
            let test = |size: u32, prediction: Time| size <= 20 && prediction <= 3000;
            assert_eq!(
                q.find(from, test),
                walk(&q, from, test),
                "sorted, from {from}"
            );
        }
    }

    /// An order whose priorities are given by job id (NaN, infinities and both zeros
    /// included), with the default [`QueueOrder::priorities`].
    #[derive(Debug)]
    struct Table(Vec<f64>);

    impl QueueOrder for Table {
        fn name(&self) -> String {
            "table".to_string()
        }

        fn priority(&self, job: &JobRequest, _now: Time) -> f64 {
            self.0[job.id.0 as usize % self.0.len()]
        }
    }

    /// The order before [`WaitingQueue::sort_by_priority`]: every priority computed job by job,
    /// then a sort by (Reverse(priority in total order), submit, id).
    fn reference_sort(q: &mut WaitingQueue, order: &dyn QueueOrder, now: Time) {
        q.sort_by_cached_key(|s| {
            (
                std::cmp::Reverse(total_order_key(order.priority(&s.job, now))),
                s.job.submit,
                s.job.id,
            )
        });
    }

    fn ids(q: &WaitingQueue) -> Vec<u32> {
        (0..q.positions()).map(|i| q.get(i).job.id.0).collect()
    }

    /// One queue operation of the property test below.
    #[derive(Debug, Clone)]
    enum Op {
        /// A job arrives: (submit offset before now, processors, estimate).
        Push(Time, u32, Time),
        /// The job at this fraction of the positions starts (if it waits).
        Start(usize),
        /// Time advances and the queue is sorted.
        Sort(Time),
        Compact,
    }

    fn op() -> impl proptest::strategy::Strategy<Value = Op> {
        use proptest::prelude::*;
        prop_oneof![
            4 => (0i64..4000, 1u32..64, prop_oneof![Just(60i64), Just(600), 0i64..100_000])
                .prop_map(|(back, size, estimate)| Op::Push(back, size, estimate)),
            2 => (0usize..1000).prop_map(Op::Start),
            3 => prop_oneof![Just(0i64), 1i64..5000].prop_map(Op::Sort),
            1 => Just(Op::Compact),
        ]
    }

    proptest::proptest! {
        /// Sorting by priority gives exactly the straightforward sort's order, pass after pass,
        /// whatever arrived, started or was compacted in between: for CREASY (ties where jobs
        /// share submit and estimate), for SJF (many ties) and for arbitrary priorities (NaN,
        /// infinities, -0.0).
        #[test]
        fn sort_by_priority_is_the_straightforward_sort(
            ops in proptest::collection::vec(op(), 1..120),
            alpha in proptest::prop_oneof![proptest::strategy::Just(0.0f64), 0.0f64..10_000.0],
            table in proptest::collection::vec(
                proptest::prop_oneof![
                    proptest::strategy::Just(f64::NAN),
                    proptest::strategy::Just(-f64::NAN),
                    proptest::strategy::Just(f64::INFINITY),
                    proptest::strategy::Just(f64::NEG_INFINITY),
                    proptest::strategy::Just(0.0f64),
                    proptest::strategy::Just(-0.0f64),
                    -10.0f64..10.0,
                ],
                1..20,
            ),
        ) {
            let creasy = crate::Creasy { alpha };
            let table = Table(table);
            let orders: [&dyn QueueOrder; 3] = [&creasy, &crate::ShortestFirst, &table];
            for order in orders {
                let (mut fast, mut slow) = (WaitingQueue::default(), WaitingQueue::default());
                let mut now: Time = 10_000;
                let mut id = 0;
                for op in &ops {
                    match *op {
                        Op::Push(back, size, estimate) => {
                            let mut job = queued(id, size, estimate);
                            // Batches: several jobs share a submit time.
                            job.job.submit = now - back / 500 * 500;
                            id += 1;
                            fast.push(job);
                            slow.push(job);
                        }
                        Op::Start(at) => {
                            if fast.positions() > 0 {
                                let position = at % fast.positions();
                                if !fast.get(position).started {
                                    fast.mark_started(position);
                                    slow.mark_started(position);
                                }
                            }
                        }
                        Op::Sort(step) => {
                            now += step;
                            fast.sort_by_priority(order, now);
                            reference_sort(&mut slow, order, now);
                            proptest::prop_assert_eq!(ids(&fast), ids(&slow));
                        }
                        Op::Compact => {
                            fast.compact_if_sparse();
                            slow.compact_if_sparse();
                        }
                    }
                    proptest::prop_assert_eq!(fast.waiting(), slow.waiting());
                }
                fast.sort_by_priority(order, now);
                reference_sort(&mut slow, order, now);
                proptest::prop_assert_eq!(ids(&fast), ids(&slow));
            }
        }
    }

    #[test]
    fn insertion_sort_sorts_or_gives_up_with_a_permutation() {
        let mut sorted = [5, 1, 4, 2, 3];
        assert!(insertion_sort(&mut sorted, 100, |a, b| a < b));
        assert_eq!(sorted, [1, 2, 3, 4, 5]);
        let mut partial = [9, 8, 7, 6, 5, 4, 3, 2, 1, 0];
        assert!(!insertion_sort(&mut partial, 3, |a, b| a < b));
        let mut items = partial.to_vec();
        items.sort_unstable();
        assert_eq!(items, (0..10).collect::<Vec<_>>());
    }

    #[test]
    fn size_classes_are_powers_of_two() {
        assert_eq!(class_of(1), 0);
        assert_eq!(class_of(2), 1);
        assert_eq!(class_of(3), 2);
        assert_eq!(class_of(4), 2);
        assert_eq!(class_of(5), 3);
        assert_eq!(class_of(1 << 24), 24);
        assert_eq!(class_of(u32::MAX), 32);
    }

    #[test]
    fn tombstones_keep_positions_until_compaction() {
        let mut q = WaitingQueue::default();
        for i in 0..5 {
            q.push(queued(i, 1, 10));
        }
        q.mark_started(0);
        q.mark_started(2);
        assert_eq!(q.positions(), 5);
        assert_eq!(q.waiting(), 3);
        assert_eq!(q.next_waiting(0), Some(1));
        assert_eq!(q.next_waiting(2), Some(3));
        let ids: Vec<u32> = q.iter().map(|s| s.job.id.0).collect();
        assert_eq!(ids, [1, 3, 4]);
        q.compact();
        assert_eq!(q.positions(), 3);
        assert_eq!(q.next_waiting(0), Some(0));
    }
}
