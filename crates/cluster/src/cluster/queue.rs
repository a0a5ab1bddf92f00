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
//!
//! A CREASY queue whose rule only asks for "the next job in priority order that passes a test"
//! (EASY in queue order, or no backfilling) is not sorted at all (search mode): it stays in
//! arrival order, so the trees stay valid, and [`WaitingQueue::next_by_priority`] and
//! [`WaitingQueue::head_by_priority`] find the job a walk of the sorted queue would find by a
//! branch and bound over the same trees, with exact bounds of CREASY's priority
//! ([`crate::Creasy`]). Sorting every waiting job at every pass made the cost of a job grow with
//! the queue's length.

use super::{Queued, total_order_key};
use crate::order::{Creasy, QueueOrder};
use crate::view::View;
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

/// A scan for candidates whose steps only narrow ([`super::Pass::next_candidate_narrowing`]):
/// `from` never decreases and each step's test accepts no job an earlier step's test rejected,
/// while no waiting job moves. For each size class it remembers the first job at or after the
/// last `from` that the last test accepted (an index among the class's members), or that
/// there was none. Under a stricter test from a later `from`, none of the class's jobs
/// between them passes, so the remembered job answers if it still waits and passes, and a
/// class with none stays without: only the class of a job that started is searched again.
///
/// The knowledge is kept as bit masks over the classes (and the remembered members in an array
/// read only where a mask says so), so that starting a scan clears two words and a step skips
/// the classes known to have none without looking at them.
///
/// A scan of the priority order in search mode ([`super::Pass::next_in_order`]) keeps the same
/// kind of knowledge per class, in the priority order (see `WaitingQueue::next_by_priority`).
#[derive(Debug, Clone)]
pub struct CandidateScan {
    /// For each class in `remembered`: its member that was the first to pass the last test.
    first_passing: [usize; CLASSES],
    /// Bit `c`: class `c` has a remembered member in `first_passing`.
    remembered: u64,
    /// Bit `c`: no member of class `c` at or after the last `from` passed the last test.
    none_passing: u64,
    /// Bit `c`, in a search of the priority order: no candidate of class `c` comes before
    /// `keys[c]` (see [`WaitingQueue::next_by_priority`]).
    floored: u64,
    /// The queue's [`WaitingQueue::moves`] when the scan began (`None`: not begun).
    moves: Option<u64>,
    /// The last step's `from`.
    from: usize,
    /// A search of the priority order ([`WaitingQueue::next_by_priority`]) rather than of
    /// positions: then `first_passing` holds, per class, the member with the smallest key
    /// after `after` that passed the last test, `keys` its key, and `none_passing` the classes
    /// with no such member.
    by_priority: Option<PriorityScan>,
    /// For each class in `remembered` or `floored`, in a search of the priority order: its
    /// member's key, or the key before which it has no candidate.
    keys: [SortKey; CLASSES],
}

/// What a scan of the priority order was last asked (see [`CandidateScan::by_priority`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PriorityScan {
    /// The instant of the pass: keys are priorities at that instant.
    now: Time,
    /// The key after which the last step searched (`None`: from the first job).
    after: Option<SortKey>,
}

impl Default for CandidateScan {
    fn default() -> CandidateScan {
        CandidateScan {
            first_passing: [0; CLASSES],
            remembered: 0,
            none_passing: 0,
            floored: 0,
            moves: None,
            from: 0,
            by_priority: None,
            keys: [(0, 0, JobId(0), 0); CLASSES],
        }
    }
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
    /// Counts the times waiting jobs moved to other positions (compaction, sort, permutation,
    /// insertion before the end): half of [`super::StateVersion`].
    moves: u64,
    /// `Some`: the queue is kept in arrival order (submit, then id) and searched in this
    /// CREASY order ([`WaitingQueue::next_by_priority`]) instead of being sorted at every pass.
    /// `None`: sorted by the order at every pass (or kept in arrival order for an arrival
    /// order, which needs no search).
    search: Option<Creasy>,
    /// In search mode: every position's (size, prediction) in one tree, [`GONE`] for a started
    /// job, for the search of the head ([`WaitingQueue::head_by_priority`]).
    all: MinTree,
    /// In search mode: every position's submit time.
    submits: Vec<Time>,
    /// In search mode: the instant of the last pass that used the priority order
    /// ([`WaitingQueue::search_holds_at`]), for [`WaitingQueue::in_last_order`].
    ordered_at: Option<Time>,
    /// The positions are not in arrival order (submit, then id; tombstones keep their keys):
    /// a sort put them in another order, or a job came out of order. The negation, so that the
    /// default (an empty queue) is in arrival order.
    out_of_arrival_order: bool,
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

/// The key a search must beat (the best found so far), and what the waits alone say against
/// it ([`WaitingQueue::class_best`]): integer comparisons that rule most ranges in or out
/// before [`Creasy::upper_bound`] is computed. They cost a few evaluations of the priority's
/// expression, so they are worked out when a range first needs them (a search often improves
/// its best several times in a row, leaf after leaf).
#[derive(Debug, Clone, Copy)]
struct Bound {
    key: SortKey,
    waits: Option<BoundWaits>,
}

/// What the waits alone say against a [`Bound`], in seconds.
#[derive(Debug, Clone, Copy)]
struct BoundWaits {
    /// Jobs that waited at most this long cannot beat it, whatever their criticality
    /// ([`Creasy::wait_below`] with the largest criticality).
    ruled_out: Time,
    /// Jobs that waited at least `old` seconds ...
    old: Time,
    /// ... and at most this long cannot beat it ([`Creasy::wait_below`] with the largest
    /// criticality of a job that waited `old` seconds, which is much smaller).
    old_ruled_out: Time,
    /// A range whose oldest job waited this long or longer cannot be ruled out by
    /// [`Creasy::upper_bound`] ([`Creasy::seniority_reaches`]; `None`: any range may be).
    reached: Option<Time>,
}

impl Bound {
    fn new(key: SortKey) -> Bound {
        Bound { key, waits: None }
    }

    /// What the waits say against the bound (worked out on the first call).
    fn waits(&mut self, creasy: &Creasy) -> BoundWaits {
        *self.waits.get_or_insert_with(|| {
            let priority = priority_of_key(self.key.0);
            // A quarter of the wait that alone reaches the priority: a range of jobs older
            // than that can only beat it by a small criticality.
            let old = (priority * 15.0).clamp(0.0, 1e18) as Time;
            BoundWaits {
                ruled_out: Creasy::wait_below(creasy.most_criticality(0), priority),
                old,
                old_ruled_out: Creasy::wait_below(creasy.most_criticality(old), priority),
                reached: Creasy::seniority_reaches(priority),
            }
        })
    }
}

impl BoundWaits {
    /// Whether no job of a range whose oldest job waited `most` seconds and youngest `least`
    /// can beat the bound, by the waits alone.
    fn rule_out(&self, most: Time, least: Time) -> bool {
        most <= self.ruled_out || (least >= self.old && most <= self.old_ruled_out)
    }
}

/// A sequence of queue positions in arrival order (a size class's members, or every position)
/// and the [`MinTree`] over them: what a search of the priority order walks.
struct Members<'a> {
    slots: &'a [Queued],
    tree: &'a MinTree,
    /// The position of each member (`None`: member k is position k).
    positions: Option<&'a [usize]>,
    /// The submit time of each member.
    submits: &'a [Time],
}

impl Members<'_> {
    /// Whether member `lo` comes after `key` by (submit, id, position), and so every later
    /// member too (members are in arrival order), on equal priorities. Batches of identical
    /// jobs share their priority: this rules out the rest of a batch at once.
    fn first_comes_after(&self, lo: usize, key: &SortKey) -> bool {
        let position = self.positions.map_or(lo, |positions| positions[lo]);
        let job = &self.slots[position].job;
        (job.submit, job.id, position) > (key.1, key.2, key.3)
    }

    /// The member at or after member `first` with the smallest key that is greater than
    /// `after`'s and less than `bound`'s, among the waiting jobs passing `test` (see
    /// [`WaitingQueue::next_by_priority`]); `bound` then holds its key. `after`: the key after
    /// which to search, and the wait in seconds from which every job comes before it
    /// ([`Creasy::seniority_above`]; `None`: none).
    fn best(
        &self,
        first: usize,
        creasy: &Creasy,
        now: Time,
        (after_key, after_wait): (Option<SortKey>, Option<Time>),
        bound: &mut Option<Bound>,
        test: &impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        let submits = self.submits;
        let mut best = None;
        self.tree.visit(first, test, |lo, hi, (_, shortest)| {
            // Members lo..hi: submits grow along the members, so the first waited longest.
            let (most, least) = (now - submits[lo], now - submits[hi - 1]);
            if after_wait.is_some_and(|wait| least >= wait) {
                return false; // every job here comes before `after`
            }
            if hi - lo == 1 {
                // One job (a leaf, or a range whose other leaves are unused): exactly.
                let position = self.positions.map_or(lo, |positions| positions[lo]);
                let q = &self.slots[position];
                if q.started || !test(q.job.processors, q.prediction) {
                    return false;
                }
                if bound
                    .as_ref()
                    .and_then(|b| b.waits)
                    .is_some_and(|waits| waits.rule_out(most, least))
                {
                    return false; // it cannot beat the bound, by its wait alone
                }
                let key = (
                    descending_key(creasy.priority_at(&q.job, now)),
                    q.job.submit,
                    q.job.id,
                    position,
                );
                if after_key.is_none_or(|a| key > a) && bound.as_ref().is_none_or(|b| key < b.key) {
                    best = Some(lo);
                    *bound = Some(Bound::new(key));
                }
                return false;
            }
            if let Some(b) = bound {
                let waits = b.waits(creasy);
                if waits.rule_out(most, least) {
                    return false; // no job here can beat the bound, by the waits alone
                }
                if waits.reached.is_none_or(|reached| most < reached) {
                    let response = Creasy::least_response(
                        Creasy::minutes(least),
                        Creasy::minutes(Time::from(shortest)),
                    );
                    let upper = descending_key(creasy.upper_bound(response, Creasy::minutes(most)));
                    if upper > b.key.0 || (upper == b.key.0 && self.first_comes_after(lo, &b.key)) {
                        // No job here can beat the bound: none has a higher priority, and one
                        // with the same priority comes later by (submit, id, position).
                        return false;
                    }
                }
            }
            true
        });
        best
    }
}

/// The priority whose [`descending_key`] is `key` (its inverse).
fn priority_of_key(key: u64) -> f64 {
    let ordered = (!key ^ (1 << 63)) as i64;
    // `total_order_key` flips the magnitude bits of negative numbers: flipping again undoes it.
    f64::from_bits((ordered ^ ((((ordered >> 63) as u64) >> 1) as i64)) as u64)
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
    /// The submit time of the job at each of `positions` (a search of the priority order
    /// reads the waits of a range's first and last members here, in one place).
    submits: Vec<Time>,
    /// Waiting jobs among them.
    waiting: usize,
    tree: MinTree,
    /// The first member at or after the queue's head when last asked (members before it are
    /// tombstones): it only moves forward until the index is rebuilt.
    past_head: usize,
}

impl SizeClass {
    /// The first member at a position at or after `from`, where `from >= head` (the queue's
    /// first waiting position). Scans usually begin just behind the head, so the search
    /// gallops forward from the member past the head (kept between calls, amortized O(1) as
    /// the head advances) instead of bisecting all the members: O(log d) for a member d places
    /// on.
    fn first_at_or_after(&mut self, from: usize, head: usize) -> usize {
        let positions = &self.positions;
        let mut lo = self.past_head;
        while lo < positions.len() && positions[lo] < head {
            lo += 1;
        }
        self.past_head = lo;
        // Gallop: positions[lo - 1] < from (or lo is the start) ..= positions[hi] >= from.
        let mut step = 1;
        let mut hi = lo;
        while hi < positions.len() && positions[hi] < from {
            lo = hi + 1;
            hi = lo + step;
            step *= 2;
        }
        let hi = hi.min(positions.len());
        lo + positions[lo..hi].partition_point(|&p| p < from)
    }
}

impl WaitingQueue {
    /// Positions, tombstones included (the bound of every position).
    pub(crate) fn positions(&self) -> usize {
        self.slots.len()
    }

    /// How many times waiting jobs moved to other positions (see [`super::StateVersion`]).
    pub(crate) fn moves(&self) -> u64 {
        self.moves
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

    /// Whether the positions are in arrival order (submit, then id), tombstones included: then a
    /// sort by an order that is arrival order at this moment
    /// ([`QueueOrder::arrival_order_now`]) would change nothing.
    pub(crate) fn in_arrival_order(&self) -> bool {
        !self.out_of_arrival_order
    }

    /// Appends a job at the end.
    pub(crate) fn push(&mut self, queued: Queued) {
        if let Some(last) = self.slots.last() {
            if (last.job.submit, last.job.id) > (queued.job.submit, queued.job.id) {
                self.out_of_arrival_order = true;
            }
        }
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
        class.submits.push(queued.job.submit);
        class.waiting += 1;
        self.occupied |= 1 << c;
        self.member.push(class.positions.len() - 1);
        class.tree.push(value);
        if self.search.is_some() {
            self.all.push(value);
            self.submits.push(queued.job.submit);
        }
    }

    /// Inserts a job at `position`, moving later positions back by one (O(n); arrivals out of
    /// order are rare).
    pub(crate) fn insert(&mut self, position: usize, queued: Queued) {
        if position == self.slots.len() {
            return self.push(queued);
        }
        self.slots.insert(position, queued);
        self.moves += 1;
        self.waiting += 1;
        self.head = self.head.min(position);
        self.invalidate(IndexState::Stale);
    }

    /// The number of leading positions whose jobs pass `pred`, by binary search: for a queue
    /// sorted by a key, where a job with that key goes (tombstones keep their keys, so the
    /// order still holds). The last position is asked first: arrivals almost always go at the
    /// end, and the binary search would touch about log2(n) scattered positions to find that.
    pub(crate) fn partition_point(&self, mut pred: impl FnMut(&Queued) -> bool) -> usize {
        match self.slots.last() {
            Some(last) if pred(last) => self.slots.len(),
            _ => self.slots.partition_point(pred),
        }
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
            if self.search.is_some() {
                self.all.set(position, GONE);
            }
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
            self.moves += 1;
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
    pub(crate) fn sort_by_priority(&mut self, order: &dyn QueueOrder, view: &View<'_>) {
        self.compact();
        self.moves += 1;
        let scratch = &mut self.scratch;
        scratch.jobs.clear();
        scratch.jobs.extend(self.slots.iter().map(|q| q.job));
        scratch.priorities.clear();
        order.priorities(&scratch.jobs, view, &mut scratch.priorities);
        if scratch.priorities.len() != scratch.jobs.len() {
            // An order that broke the contract of `priorities`: ask job by job instead.
            scratch.priorities.clear();
            scratch
                .priorities
                .extend(scratch.jobs.iter().map(|job| order.priority(job, view)));
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
        self.out_of_arrival_order = scratch
            .keys
            .windows(2)
            .any(|w| (w[0].1, w[0].2) > (w[1].1, w[1].2));
        self.invalidate(IndexState::Reordered);
    }

    /// Puts the jobs at positions `order` (a permutation of the positions: the job at
    /// `order[k]` moves to `k`).
    pub(crate) fn permute(&mut self, order: &[usize]) {
        debug_assert_eq!(order.len(), self.slots.len());
        if order.iter().enumerate().all(|(k, &i)| k == i) {
            return; // already in that order (dynP under FCFS, mostly): keep the index
        }
        // Into the scratch buffer, swapped with the queue's: both keep their capacity, so the
        // next arrival does not grow (and copy) a vector of exactly the queue's length.
        let mut slots = std::mem::take(&mut self.scratch.slots);
        slots.clear();
        slots.extend(order.iter().map(|&i| self.slots[i]));
        std::mem::swap(&mut self.slots, &mut slots);
        self.scratch.slots = slots;
        self.moves += 1;
        self.out_of_arrival_order = true;
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
        self.find_narrowing(&mut CandidateScan::default(), from, test)
    }

    /// [`WaitingQueue::find`] as one step of a narrowing `scan` (see [`CandidateScan`]): a size
    /// class whose remembered job still waits and passes `test` answers with it, a class known
    /// to have none answers nothing, and only the others are searched, from after the job they
    /// remembered.
    pub(crate) fn find_narrowing(
        &mut self,
        scan: &mut CandidateScan,
        from: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
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
        if scan.moves != Some(self.moves) || from < scan.from || scan.by_priority.is_some() {
            // A new scan, or one whose positions moved or that went back: forget it.
            scan.moves = Some(self.moves);
            scan.remembered = 0;
            scan.none_passing = 0;
            scan.by_priority = None;
        }
        scan.from = from;
        let mut best = self.slots.len();
        let mut classes = self.occupied & !scan.none_passing;
        let head = self.head;
        while classes != 0 {
            let c = classes.trailing_zeros() as usize;
            classes &= classes - 1;
            let bit = 1u64 << c;
            // Where the class's search starts: at its remembered job (which answers at once if it
            // still waits and passes), as the class's jobs from `from` up to it failed a looser
            // test; else at its first job from `from`, unless none passes at all.
            let remembered = scan.first_passing[c];
            let start =
                if scan.remembered & bit != 0 && self.classes[c].positions[remembered] >= from {
                    Some(remembered)
                } else if !self.classes[c].tree.root_passes(&test) {
                    None
                } else {
                    Some(self.classes[c].first_at_or_after(from, head))
                };
            let class = &self.classes[c];
            let slots = &self.slots;
            let exact = |k: usize| {
                let q = &slots[class.positions[k]];
                test(q.job.processors, q.prediction)
            };
            match start.and_then(|first| class.tree.find(first, &test, &exact)) {
                Some(k) => {
                    best = best.min(class.positions[k]);
                    scan.first_passing[c] = k;
                    scan.remembered |= bit;
                }
                // Masked out of every later step of the scan (its `remembered` bit is not read).
                None => scan.none_passing |= bit,
            }
        }
        (best < self.slots.len()).then_some(best)
    }

    /// [`WaitingQueue::find_narrowing`] for a caller that needs only some passing job at or
    /// after `from`: the furthest remembered job of the scan that still waits and passes
    /// answers without a search (the scan's knowledge is left as it was, which stays true for
    /// a later, narrower step); else the scan steps as usual.
    pub(crate) fn find_any_narrowing(
        &mut self,
        scan: &mut CandidateScan,
        from: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        if self.index == IndexState::Fresh
            && scan.moves == Some(self.moves)
            && from >= scan.from
            && scan.by_priority.is_none()
        {
            let mut classes = scan.remembered & self.occupied & !scan.none_passing;
            let mut furthest = None;
            while classes != 0 {
                let c = classes.trailing_zeros() as usize;
                classes &= classes - 1;
                let position = self.classes[c].positions[scan.first_passing[c]];
                let q = &self.slots[position];
                if position >= from && !q.started && test(q.job.processors, q.prediction) {
                    furthest = furthest.max(Some(position));
                }
            }
            if furthest.is_some() {
                return furthest;
            }
        }
        self.find_narrowing(scan, from, test)
    }

    /// The CREASY order the queue is searched in, if it is kept in arrival order for that
    /// (see [`WaitingQueue::search`]'s field).
    pub(crate) fn search(&self) -> Option<Creasy> {
        self.search
    }

    /// Keeps the queue in arrival order and searches it in `creasy`'s priority order (`Some`),
    /// or sorts it at every pass (`None`). Search mode may only begin on an empty queue (the
    /// caller inserts every later job in arrival order); it may end at any time, as the next
    /// sort puts the jobs in order whatever their order was.
    pub(crate) fn set_search(&mut self, creasy: Option<Creasy>) {
        if creasy.is_none() || self.slots.is_empty() {
            self.search = creasy.filter(Creasy::has_bounds);
            self.ordered_at = None;
            if self.search.is_some() {
                // Search mode keeps more in the index (the tree of all positions): build it.
                self.index = IndexState::Stale;
            }
        }
    }

    /// Whether the bounds of a search of the priority order hold for a pass at `now`, which
    /// the pass then uses: no job (tombstones included) was submitted after `now`, so no wait
    /// is negative, and `now - submit` does not overflow for any of them. In arrival order the
    /// first and the last position hold the extreme submit times. O(1).
    pub(crate) fn search_holds_at(&mut self, now: Time) -> bool {
        let holds = self.slots.last().is_none_or(|q| q.job.submit <= now)
            && self
                .slots
                .first()
                .is_none_or(|q| now.checked_sub(q.job.submit).is_some());
        if holds {
            self.ordered_at = Some(now);
        }
        holds
    }

    /// The waiting jobs in the order of the last pass that used the priority order (in
    /// search mode; else in queue order): jobs submitted by that instant by their priority
    /// then (ties by submit, id and position), then the later ones in arrival order. O(n log
    /// n): for observers and tests, never for a decision.
    pub(crate) fn in_last_order(&self) -> Vec<&Queued> {
        let mut jobs: Vec<(usize, &Queued)> = self
            .slots
            .iter()
            .enumerate()
            .filter(|(_, q)| !q.started)
            .collect();
        if let (Some(creasy), Some(at)) = (self.search, self.ordered_at) {
            jobs.sort_by_cached_key(|&(position, q)| {
                if q.job.submit <= at {
                    (
                        false,
                        descending_key(creasy.priority_at(&q.job, at)),
                        position,
                    )
                } else {
                    (true, 0, position)
                }
            });
        }
        jobs.into_iter().map(|(_, q)| q).collect()
    }

    /// The key of the job at `position` (started or not) in `creasy`'s priority order at `now`.
    fn key_at(&self, position: usize, creasy: &Creasy, now: Time) -> SortKey {
        let job = &self.slots[position].job;
        (
            descending_key(creasy.priority_at(job, now)),
            job.submit,
            job.id,
            position,
        )
    }

    /// In search mode: the waiting job that comes first in `creasy`'s priority order at `now`
    /// (highest priority, ties by submit, id and position: the order
    /// [`WaitingQueue::sort_by_priority`] would give) among those that come after the job at
    /// position `after` (started or not; `None`: all), pass `test` and are at positions at or
    /// after `min_position` (the candidates); as one step of a narrowing `scan`.
    ///
    /// A branch and bound over each size class's [`MinTree`] in arrival order: a range of
    /// members is skipped when its (smallest size, shortest prediction) fails `test` (as in
    /// [`WaitingQueue::find`]), when its youngest job's wait, a lower bound of every priority in
    /// it ([`Creasy::lower_bound`]), exceeds the priority of `after` (all of them come before
    /// it), or when [`Creasy::upper_bound`] over its oldest and youngest job's waits and its
    /// shortest prediction (at most every estimate) is below the priority of the best job found
    /// so far, in any class (ties are not skipped). Every job not skipped is compared on its
    /// exact key. The bounds are exact in floating point, so the answer is the job a walk of
    /// the sorted queue finds. Old jobs come first in each class, and the class of the oldest
    /// waiting job first, so a good best is found early and most ranges are skipped whole.
    ///
    /// The scan narrows as [`WaitingQueue::find_narrowing`]'s does (`after` does not come
    /// earlier, `min_position` does not decrease, each `test` accepts no job an earlier one
    /// rejected, no job moves and `now` stays): each class's candidates then only lose members.
    /// So the scan keeps per class what the last search established: its best candidate (still
    /// its best if it is still a candidate; else every candidate comes after it), or that no
    /// candidate comes before some key (still true), or that it has none. A class is searched
    /// again only if that does not already rule it out against the best found so far.
    pub(crate) fn next_by_priority(
        &mut self,
        scan: &mut CandidateScan,
        creasy: &Creasy,
        now: Time,
        after: Option<usize>,
        min_position: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        let from = min_position.max(self.head);
        let after_key = after.map(|position| self.key_at(position, creasy, now));
        match self.index {
            IndexState::Fresh => {}
            IndexState::Stale => self.rebuild(),
            IndexState::Reordered => {
                // Not reached in search mode (nothing sorts or permutes the queue); exact anyway.
                return (from..self.slots.len())
                    .filter(|&i| {
                        let q = &self.slots[i];
                        !q.started && test(q.job.processors, q.prediction)
                    })
                    .map(|i| self.key_at(i, creasy, now))
                    .filter(|&key| after_key.is_none_or(|a| key > a))
                    .min()
                    .map(|key| key.3);
            }
        }
        let asked = PriorityScan {
            now,
            after: after_key,
        };
        let went_back = match scan.by_priority {
            Some(last) => last.now != now || last.after > after_key,
            None => true,
        };
        if scan.moves != Some(self.moves) || from < scan.from || went_back {
            scan.moves = Some(self.moves);
            scan.remembered = 0;
            scan.floored = 0;
            scan.none_passing = 0;
        }
        scan.from = from;
        scan.by_priority = Some(asked);
        // Jobs that waited this long (seconds) or longer come before `after`.
        let after_wait = after_key.and_then(|key| Creasy::seniority_above(priority_of_key(key.0)));
        // The best candidate so far, with what the waits say against it.
        let mut best: Option<Bound> = None;
        // The remembered bests that are still candidates answer for their classes; the others
        // only bound their classes from below.
        let mut remembered = scan.remembered & self.occupied;
        while remembered != 0 {
            let c = remembered.trailing_zeros() as usize;
            remembered &= remembered - 1;
            let key = scan.keys[c];
            let q = &self.slots[key.3];
            if !q.started
                && key.3 >= from
                && after_key.is_none_or(|a| key > a)
                && test(q.job.processors, q.prediction)
            {
                if best.is_none_or(|b| key < b.key) {
                    best = Some(Bound::new(key));
                }
            } else {
                scan.remembered &= !(1 << c);
                scan.floored |= 1 << c;
            }
        }
        let mut classes = self.occupied & !scan.none_passing & !scan.remembered;
        // The class of the oldest waiting job first: under CREASY it holds the head, or a job
        // close to it, which then bounds the others.
        let oldest = self
            .slots
            .get(self.head)
            .map_or(0, |q| class_of(q.job.processors));
        let head = self.head;
        while classes != 0 {
            let c = if classes & (1 << oldest) != 0 {
                oldest
            } else {
                classes.trailing_zeros() as usize
            };
            let bit = 1u64 << c;
            classes &= !bit;
            if scan.floored & bit != 0 && best.is_some_and(|b| scan.keys[c] >= b.key) {
                continue; // every candidate of the class comes after the best
            }
            let limit = best.map(|b| b.key);
            let found = if self.classes[c].tree.root_passes(&test) {
                let first = self.classes[c].first_at_or_after(from, head);
                self.class_best(
                    c,
                    first,
                    creasy,
                    now,
                    (after_key, after_wait),
                    &mut best,
                    &test,
                )
            } else {
                None
            };
            match (found.zip(best), limit) {
                (Some((member, bound)), _) => {
                    scan.first_passing[c] = member;
                    scan.keys[c] = bound.key;
                    scan.remembered |= bit;
                    scan.floored &= !bit;
                }
                (None, Some(limit)) => {
                    // No candidate of the class comes before `limit`.
                    scan.keys[c] = limit;
                    scan.floored |= bit;
                }
                (None, None) => {
                    scan.none_passing |= bit;
                    scan.floored &= !bit;
                }
            }
        }
        best.map(|b| b.key.3)
    }

    /// The member of size class `c` at or after member `first` with the smallest key that
    /// is greater than `after`'s and less than `bound`'s, among the waiting jobs passing
    /// `test` (see [`WaitingQueue::next_by_priority`]); `bound` then holds its key.
    /// `after_wait`: the wait in seconds from which every job comes before `after`
    /// ([`Creasy::seniority_above`]; `None`: none).
    #[allow(clippy::too_many_arguments)]
    fn class_best(
        &self,
        c: usize,
        first: usize,
        creasy: &Creasy,
        now: Time,
        after: (Option<SortKey>, Option<Time>),
        bound: &mut Option<Bound>,
        test: &impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        let class = &self.classes[c];
        let members = Members {
            slots: &self.slots,
            tree: &class.tree,
            positions: Some(&class.positions),
            submits: &class.submits,
        };
        members.best(first, creasy, now, after, bound, test)
    }

    /// In search mode: the first waiting job of `creasy`'s priority order at `now` after the
    /// job at position `after` (started or not; `None`: the first of all), whatever its size:
    /// the head of the queue for [`super::Pass::start_head`]. The branch and bound of
    /// [`WaitingQueue::next_by_priority`] over one tree of all the positions, so that the head,
    /// usually one of the oldest jobs, is found and proven the head in O(log n) steps without
    /// visiting every size class.
    pub(crate) fn head_by_priority(
        &mut self,
        creasy: &Creasy,
        now: Time,
        after: Option<usize>,
    ) -> Option<usize> {
        match self.index {
            IndexState::Fresh => {}
            IndexState::Stale => self.rebuild(),
            IndexState::Reordered => {
                // Not reached in search mode; exact anyway.
                let mut scan = CandidateScan::default();
                return self.next_by_priority(&mut scan, creasy, now, after, 0, |_, _| true);
            }
        }
        let after_key = after.map(|position| self.key_at(position, creasy, now));
        let after_wait = after_key.and_then(|key| Creasy::seniority_above(priority_of_key(key.0)));
        let members = Members {
            slots: &self.slots,
            tree: &self.all,
            positions: None,
            submits: &self.submits,
        };
        let mut bound = None;
        members.best(
            self.head,
            creasy,
            now,
            (after_key, after_wait),
            &mut bound,
            &|_, _| true,
        )
    }

    /// The fewest processors a waiting job asks for (`None` with no job waiting): the
    /// smallest size in the lowest occupied size class's tree, without a walk while the index
    /// is up to date.
    pub(crate) fn smallest_waiting(&mut self) -> Option<u32> {
        if self.waiting == 0 {
            return None;
        }
        match self.index {
            IndexState::Fresh => {}
            IndexState::Stale => self.rebuild(),
            IndexState::Reordered => {
                return self.slots[self.head..]
                    .iter()
                    .filter(|q| !q.started)
                    .map(|q| q.job.processors)
                    .min();
            }
        }
        let class = self.occupied.trailing_zeros() as usize;
        self.classes.get(class).and_then(|c| c.tree.smallest())
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
            class.submits.clear();
            class.past_head = 0;
            class.waiting = 0;
        }
        self.member.clear();
        self.occupied = 0;
        for (position, q) in self.slots.iter().enumerate() {
            let c = class_of(q.job.processors);
            let class = &mut self.classes[c];
            class.positions.push(position);
            class.submits.push(q.job.submit);
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
        if self.search.is_some() {
            self.all.rebuild(slots.iter().map(value));
            self.submits.clear();
            self.submits.extend(slots.iter().map(|q| q.job.submit));
        }
    }
}

/// A complete binary tree over a sequence of (size, prediction) values (root at 1, leaves at
/// `capacity + index`), each node holding the smallest size and the shortest prediction below
/// it. Unused leaves hold [`GONE`].
///
/// Nodes are 8 bytes: predictions are kept as `u32` seconds, those of 2^32 - 1 s (136 years)
/// or more as 2^32 - 1. A node's value then stays at most its jobs' values, so pruning a range
/// the test rejects is still exact; only a leaf at that ceiling may pass the test where its
/// job does not, and the search asks the caller about such a leaf (`exact`). Predictions are
/// never negative (estimates are checked at submission, predicted runtimes lie between one
/// second and the estimate). Half the bytes of `(u32, i64)` nodes, so twice as many of the
/// nodes a search visits share a cache line.
#[derive(Debug, Default)]
struct MinTree {
    nodes: Vec<(u32, u32)>,
    capacity: usize,
    len: usize,
}

/// A node value as stored: the prediction capped at `u32::MAX` (see [`MinTree`]).
fn packed((size, prediction): (u32, Time)) -> (u32, u32) {
    debug_assert!(prediction >= 0, "negative prediction {prediction}");
    (size, u32::try_from(prediction.max(0)).unwrap_or(u32::MAX))
}

/// [`GONE`] as stored.
const PACKED_GONE: (u32, u32) = (u32::MAX, u32::MAX);

impl MinTree {
    fn push(&mut self, value: (u32, Time)) {
        if self.len == self.capacity {
            let values: Vec<(u32, u32)> = (0..self.len)
                .map(|i| self.nodes[self.capacity + i])
                .chain(std::iter::once(packed(value)))
                .collect();
            self.rebuild_packed(values.into_iter());
        } else {
            self.len += 1;
            self.set(self.len - 1, value);
        }
    }

    /// Sets the value at `index` and the minima above it, up to the first node whose minima do
    /// not change (those above it then do not change either).
    fn set(&mut self, index: usize, value: (u32, Time)) {
        let mut node = self.capacity + index;
        self.nodes[node] = packed(value);
        while node > 1 {
            node /= 2;
            let (a, b) = (self.nodes[2 * node], self.nodes[2 * node + 1]);
            let minima = (a.0.min(b.0), a.1.min(b.1));
            if self.nodes[node] == minima {
                break;
            }
            self.nodes[node] = minima;
        }
    }

    fn rebuild(&mut self, values: impl ExactSizeIterator<Item = (u32, Time)>) {
        self.rebuild_packed(values.map(packed));
    }

    fn rebuild_packed(&mut self, values: impl ExactSizeIterator<Item = (u32, u32)>) {
        self.len = values.len();
        self.capacity = (self.len + 1).next_power_of_two().max(8);
        self.nodes.clear();
        self.nodes.resize(2 * self.capacity, PACKED_GONE);
        for (i, value) in values.enumerate() {
            self.nodes[self.capacity + i] = value;
        }
        for node in (1..self.capacity).rev() {
            let (a, b) = (self.nodes[2 * node], self.nodes[2 * node + 1]);
            self.nodes[node] = (a.0.min(b.0), a.1.min(b.1));
        }
    }

    /// Whether the stored value of `node` passes `test` (false for [`GONE`]).
    fn node_passes(&self, node: usize, test: &impl Fn(u32, Time) -> bool) -> bool {
        let (size, prediction) = self.nodes[node];
        size != PACKED_GONE.0 && test(size, Time::from(prediction))
    }

    /// The smallest size in the tree (`None` when every leaf is gone).
    fn smallest(&self) -> Option<u32> {
        let size = self.nodes.get(1)?.0;
        (self.len > 0 && size != PACKED_GONE.0).then_some(size)
    }

    /// Whether some value might pass `test`: the root's (smallest size, shortest prediction)
    /// does. False for an empty tree.
    fn root_passes(&self, test: &impl Fn(u32, Time) -> bool) -> bool {
        self.len > 0 && self.node_passes(1, test)
    }

    /// Visits, left to right and depth first, the subtrees that cover the indices at or after
    /// `from` and whose stored value passes `test` (so never an unused leaf): `node(lo, hi,
    /// value)` is called with the node's index range `lo..hi` (`hi` at most the length; a leaf
    /// when `hi - lo == 1`) and stored value, and the walk enters the node's children when it
    /// returns true (a leaf's answer is ignored). Stackless, as in [`MinTree::find`]: it starts
    /// at the highest node whose leftmost leaf is `from` and moves right by climbing.
    fn visit(
        &self,
        from: usize,
        test: &impl Fn(u32, Time) -> bool,
        mut node: impl FnMut(usize, usize, (u32, u32)) -> bool,
    ) {
        if from >= self.len {
            return;
        }
        let capacity = self.capacity;
        let mut at = capacity + from;
        at >>= at.trailing_zeros();
        loop {
            if self.node_passes(at, test) {
                // Depth from the root, the leaves it spans, the first of them.
                let depth = usize::BITS - 1 - at.leading_zeros();
                let span = capacity >> depth;
                let lo = at * span - capacity;
                let hi = (lo + span).min(self.len);
                if node(lo, hi, self.nodes[at]) && at < capacity {
                    at *= 2;
                    continue;
                }
            }
            at >>= at.trailing_ones();
            if at == 0 {
                return;
            }
            at += 1;
        }
    }

    /// The first index at or after `from` whose value passes `test` (see
    /// [`WaitingQueue::find`]); `exact(index)` decides for a leaf whose prediction is at the
    /// ceiling.
    ///
    /// Starts at the leaf of `from` and moves right subtree by subtree: a subtree whose
    /// (smallest size, shortest prediction) fails the test is skipped whole; one that passes is
    /// entered at its left child. A pass does not promise a passing leaf (the two minima may
    /// come from different jobs), so a descent that finds none moves on to the right as well.
    /// Every subtree visited starts at or after `from`, and unused leaves hold [`GONE`], which
    /// no test passes, so the walk ends at a passing leaf or above the root. Its cost grows
    /// with the log of the distance walked rather than with the tree's depth at every step.
    fn find(
        &self,
        from: usize,
        test: &impl Fn(u32, Time) -> bool,
        exact: &impl Fn(usize) -> bool,
    ) -> Option<usize> {
        if from >= self.len {
            return None;
        }
        let mut node = self.capacity + from;
        loop {
            if self.node_passes(node, test) {
                if node < self.capacity {
                    node *= 2; // enter at the left child
                    continue;
                }
                let index = node - self.capacity;
                if self.nodes[node].1 != u32::MAX || exact(index) {
                    return Some(index);
                }
            }
            // The next subtree to the right: climb while `node` is a right child.
            node >>= node.trailing_ones();
            if node == 0 {
                return None; // climbed past the root: nothing to the right
            }
            node += 1;
        }
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
                array_task: Default::default(),
                reservation: Default::default(),
                shape: Default::default(),
                id: JobId(id),
                submit: 0,
                processors,
                estimate: prediction,
                user: 0,
                group: -1,
                partition: -1,
                queue: -1,
                extra: crate::Extra::NONE,
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

        fn priority(&self, job: &JobRequest, _view: &View<'_>) -> f64 {
            self.0[job.id.0 as usize % self.0.len()]
        }
    }

    /// The order before [`WaitingQueue::sort_by_priority`]: every priority computed job by job,
    /// then a sort by (Reverse(priority in total order), submit, id).
    fn reference_sort(q: &mut WaitingQueue, order: &dyn QueueOrder, now: Time) {
        q.sort_by_cached_key(|s| {
            (
                std::cmp::Reverse(total_order_key(order.priority(
                    &s.job,
                    &crate::view::Idle::default().view(now, Default::default()),
                ))),
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
                            fast.sort_by_priority(order, &crate::view::Idle::default().view(now, Default::default()));
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
                fast.sort_by_priority(order, &crate::view::Idle::default().view(now, Default::default()));
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

    proptest::proptest! {
        /// The tree's search finds exactly what a walk over the values finds, from every start
        /// and for a test that passes a range's minima without passing any of its values.
        #[test]
        fn min_tree_find_agrees_with_a_walk(
            values in proptest::collection::vec(
                (1u32..40, proptest::prop_oneof![0i64..2000, 4_294_967_000i64..4_294_968_000]),
                0..200,
            ),
            gone in proptest::collection::vec(proptest::bool::ANY, 200),
            from in 0usize..220,
            free in 1u32..40,
            limit in proptest::prop_oneof![0i64..2000, 4_294_967_000i64..4_294_968_000],
            extra in 0u32..40,
        ) {
            let values: Vec<(u32, Time)> = values
                .iter()
                .zip(&gone)
                .map(|(&v, &g)| if g { GONE } else { v })
                .collect();
            let mut tree = MinTree::default();
            for &v in &values {
                tree.push(v);
            }
            let test = |size: u32, prediction: Time| {
                size <= free && (prediction <= limit || size <= extra)
            };
            let walked = (from..values.len()).find(|&i| {
                let (size, prediction) = values[i];
                size != GONE.0 && test(size, prediction)
            });
            let exact = |i: usize| test(values[i].0, values[i].1);
            proptest::prop_assert_eq!(tree.find(from, &test, &exact), walked);
        }
    }

    proptest::proptest! {
        /// A narrowing scan (EASY's: `from` moves forward, free and extra processors shrink as
        /// candidates start) finds at every step what a walk over the queue finds, while the
        /// jobs it finds start, as they do in a pass.
        #[test]
        fn a_narrowing_scan_agrees_with_a_walk(
            jobs in proptest::collection::vec((1u32..70, 0i64..5000), 1..300),
            started_before in proptest::collection::vec(proptest::bool::weighted(0.3), 300),
            free in 1u32..70,
            extra in 0u32..70,
            limit in 0i64..5000,
            steps in proptest::collection::vec((0usize..20, 0u32..8, 0u32..8, proptest::bool::ANY), 1..30),
        ) {
            let mut q = WaitingQueue::default();
            for (i, &(size, prediction)) in jobs.iter().enumerate() {
                q.push(queued(i as u32, size, prediction));
            }
            for (i, &start) in started_before.iter().take(jobs.len()).enumerate() {
                if start {
                    q.mark_started(i);
                }
            }
            let (mut free, mut extra) = (free, extra);
            let mut from = 0;
            let mut scan = CandidateScan::default();
            for (skip, less_free, less_extra, start) in steps {
                from += skip;
                free = free.saturating_sub(less_free).max(1);
                extra = extra.saturating_sub(less_extra);
                let test = |size: u32, prediction: Time| {
                    size <= free && (size <= extra || prediction <= limit)
                };
                let found = q.find_narrowing(&mut scan, from, test);
                proptest::prop_assert_eq!(found, walk(&q, from, test));
                match found {
                    Some(at) if start => q.mark_started(at),
                    Some(at) => from = from.max(at + 1),
                    None => {}
                }
            }
        }
    }

    /// One operation on a queue in search mode, for the property test below.
    #[derive(Debug, Clone)]
    enum SearchOp {
        /// A batch of jobs arrives: (submit before now, in units of 500 s so that batches also
        /// share a submit time; the processors of each; the estimate they share; the prediction
        /// as a fraction of it, in 1/4). A batch's jobs have equal priorities.
        Arrive(Time, Vec<u32>, Time, u8),
        /// The waiting job at this fraction of the positions starts (if it waits).
        Start(usize),
        /// Tombstones are removed when they outnumber the waiting jobs.
        Compact,
        /// Time goes on.
        Advance(Time),
        /// A narrowing scan: its first test's (free, extra, longest prediction), the steps
        /// (less free, less extra, whether the job found starts), and whether it begins after
        /// the first job of the order (EASY's blocked job) and skips positions before a
        /// fraction of them (EASY's carried-over scan).
        Scan(u32, u32, Time, Vec<(u32, u32, bool)>, bool, usize),
    }

    fn search_op() -> impl proptest::strategy::Strategy<Value = SearchOp> {
        use proptest::prelude::*;
        let estimate = prop_oneof![
            2 => Just(0i64),
            1 => Just(10_000_000_000i64),
            2 => Just(60i64),
            6 => 0i64..200_000,
        ];
        let step = prop_oneof![Just(0i64), 1i64..5000, Just(50_000_000_000i64)];
        prop_oneof![
            6 => (
                0i64..40,
                proptest::collection::vec(prop_oneof![1u32..5, 1u32..70], 1..6),
                estimate,
                0u8..=4,
            )
                .prop_map(|(back, sizes, estimate, part)| {
                    SearchOp::Arrive(back, sizes, estimate, part)
                }),
            2 => (0usize..1000).prop_map(SearchOp::Start),
            1 => Just(SearchOp::Compact),
            1 => step.prop_map(SearchOp::Advance),
            3 => (
                1u32..70,
                0u32..70,
                prop_oneof![Just(Time::MAX), 0i64..100_000],
                proptest::collection::vec((0u32..8, 0u32..8, proptest::bool::weighted(0.7)), 1..12),
                proptest::bool::ANY,
                0usize..100,
            )
                .prop_map(|(free, extra, limit, steps, blocked, skip)| {
                    SearchOp::Scan(free, extra, limit, steps, blocked, skip)
                }),
        ]
    }

    /// The reference answer of a search of the priority order: sort every waiting job by its
    /// key (as [`WaitingQueue::sort_by_priority`] orders them), walk after `after`'s key.
    fn walk_by_priority(
        q: &WaitingQueue,
        creasy: &Creasy,
        now: Time,
        after: Option<usize>,
        min_position: usize,
        test: impl Fn(u32, Time) -> bool,
    ) -> Option<usize> {
        let key = |i: usize| {
            let job = &q.get(i).job;
            (
                std::cmp::Reverse(total_order_key(creasy.priority_at(job, now))),
                job.submit,
                job.id,
                i,
            )
        };
        let mut order: Vec<usize> = (0..q.positions()).filter(|&i| !q.get(i).started).collect();
        order.sort_by_key(|&i| key(i));
        order.into_iter().find(|&i| {
            let s = q.get(i);
            after.is_none_or(|a| key(i) > key(a))
                && i >= min_position
                && test(s.job.processors, s.prediction)
        })
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

        /// In search mode, every step of a narrowing scan of the priority order (the head,
        /// then the jobs after it; EASY's backfill scans after a blocked job, with jobs found
        /// starting or not, and positions skipped) finds the job a walk of the sorted queue
        /// finds, through arrivals (batches sharing a submit time, out of order), starts,
        /// compactions and time: for alpha 0, tiny, the paper's and huge; estimates of zero and
        /// beyond the tree's ceiling, predictions below the estimates, waits of years.
        #[test]
        fn search_by_priority_agrees_with_a_walk_of_the_sorted_queue(
            ops in proptest::collection::vec(search_op(), 1..200),
            alpha in proptest::prop_oneof![
                proptest::strategy::Just(0.0f64),
                proptest::strategy::Just(1e-300f64),
                1500.0f64..10_000.0,
                proptest::strategy::Just(1e9f64),
            ],
        ) {
            let creasy = Creasy { alpha };
            let mut q = WaitingQueue::default();
            q.set_search(Some(creasy));
            proptest::prop_assert_eq!(q.search().map(|c| c.alpha), Some(alpha));
            let mut now: Time = 100_000;
            let mut id = 0;
            for op in ops {
                match op {
                    SearchOp::Arrive(back, sizes, estimate, part) => {
                        for size in sizes {
                            let mut job = queued(id, size, estimate);
                            job.job.submit = now - back * 500;
                            job.prediction = estimate / 4 * Time::from(part);
                            id += 1;
                            let key = (job.job.submit, job.job.id);
                            let at = q.partition_point(|s| (s.job.submit, s.job.id) <= key);
                            q.insert(at, job);
                        }
                    }
                    SearchOp::Start(at) => {
                        if q.positions() > 0 {
                            let position = at % q.positions();
                            if !q.get(position).started {
                                q.mark_started(position);
                            }
                        }
                    }
                    SearchOp::Compact => q.compact_if_sparse(),
                    SearchOp::Advance(step) => now += step,
                    SearchOp::Scan(free, extra, limit, steps, blocked, skip) => {
                        proptest::prop_assert!(q.search_holds_at(now));
                        let mut scan = CandidateScan::default();
                        let mut after = None;
                        let mut min_position = 0;
                        if blocked {
                            after = walk_by_priority(&q, &creasy, now, None, 0, |_, _| true);
                            min_position = skip * q.positions() / 100;
                        }
                        let (mut free, mut extra) = (free, extra);
                        for (less_free, less_extra, start) in steps {
                            free = free.saturating_sub(less_free).max(1);
                            extra = extra.saturating_sub(less_extra);
                            let test = |size: u32, prediction: Time| {
                                size <= free && (size <= extra || prediction <= limit)
                            };
                            let found = q.next_by_priority(
                                &mut scan, &creasy, now, after, min_position, test,
                            );
                            proptest::prop_assert_eq!(
                                found,
                                walk_by_priority(&q, &creasy, now, after, min_position, test)
                            );
                            let Some(at) = found else { break };
                            if start {
                                q.mark_started(at);
                            }
                            after = Some(at);
                        }
                        // The head search of a pass, over the tree of all positions and as a
                        // scan over the classes: the first jobs of the order, starting each.
                        let mut scan = CandidateScan::default();
                        let mut after = None;
                        for _ in 0..3 {
                            let expected = walk_by_priority(&q, &creasy, now, after, 0, |_, _| true);
                            proptest::prop_assert_eq!(q.head_by_priority(&creasy, now, after), expected);
                            let found = q.next_by_priority(
                                &mut scan, &creasy, now, after, 0, |_, _| true,
                            );
                            proptest::prop_assert_eq!(found, expected);
                            let Some(at) = found else { break };
                            q.mark_started(at);
                            after = Some(at);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn search_mode_needs_bounds_and_waits_that_are_not_negative() {
        let mut q = WaitingQueue::default();
        for alpha in [f64::NAN, f64::INFINITY, -1.0] {
            q.set_search(Some(Creasy { alpha }));
            assert!(q.search().is_none(), "alpha {alpha}");
        }
        q.set_search(Some(Creasy { alpha: 6000.0 }));
        let mut job = queued(0, 1, 60);
        job.job.submit = 500;
        q.push(job);
        assert!(q.search_holds_at(500));
        assert!(!q.search_holds_at(499)); // submitted after the pass: a negative wait
        // Search mode does not begin on a queue that already holds jobs.
        let mut r = WaitingQueue::default();
        r.push(job);
        r.set_search(Some(Creasy { alpha: 6000.0 }));
        assert!(r.search().is_none());
    }
}
