//! EASY's backfilling scan on a machine of node types, by classes of alike jobs: the waiting
//! jobs that could start are found without testing every job behind the blocked one.
//!
//! Whether a waiting job fits now, and whether it fits within what EASY's shadow leaves,
//! depends only on its request's partition, processors, other amounts and shape (the pool
//! resolves its demand from these alone): jobs of one request [`Key`] are one class, and the
//! answer for one is the answer for all. During a pass both answers only turn from yes to no
//! (the free amounts, and what the shadow leaves, only shrink as jobs start), so a class found
//! not to fit is done for the pass, and one found to fit now but not within the shadow can
//! start only its jobs that end by the shadow time. The scan visits, in queue order, the first
//! job of each class still in play (a heap by position); [`NodeClasses::first`] and
//! [`NodeClasses::next`] find a class's next job (at or after a position, or after a member)
//! whose prediction is at most a bound, with a tree of its members' predictions. The classes
//! that could fit at all are found without looking at the others: each partition's classes are
//! sorted by the CPUs a job needs on one node, and a class needing more of some amount on a
//! node than any node of its partition has free is passed over.
//!
//! The scan starts the jobs the plain walk over every position would start, in the same
//! order: a job it skips is one that walk would find not fitting, or fitting now but neither
//! ending by the shadow time nor fitting within it. The test
//! `the_class_scan_starts_what_the_plain_walk_starts` (crates/schedulers/tests/policies.rs)
//! compares the two on random workloads and machines.

use rustc_hash::FxHashMap as HashMap;

use super::Pass;
use crate::pool::{Amounts, Demand, PartitionSet};
use crate::{Extra, Time};
use job::Shape;

/// What decides whether a waiting job fits now and within a shadow: its partition number,
/// processors, other amounts and shape.
type Key = (i64, u32, Extra, Shape);

/// A prediction value meaning "started": above every bound a search asks with.
const GONE: Time = Time::MAX;

/// The largest bound a search asks with: every waiting job's prediction (clamped to it) passes.
pub(super) const ANY_PREDICTION: Time = Time::MAX - 1;

/// The waiting jobs by class, in queue order within each, kept from pass to pass while the
/// queue's positions hold (jobs appended at the end are added; any move rebuilds it).
#[derive(Debug, Clone, Default)]
pub(super) struct NodeClasses {
    /// The queue's moves when the classes were last brought up to date (`None`: never).
    moves: Option<u64>,
    /// Positions before this one are in their classes (or were started when reached).
    indexed: usize,
    /// Each key's class.
    of_key: HashMap<Key, u32>,
    /// The classes.
    classes: Vec<Class>,
    /// The classes of each place a job may fit in (a partition's nodes, and whether its jobs
    /// take whole nodes), sorted by the CPUs a job needs on one node.
    groups: Vec<Group>,
}

/// The classes of one partition taking shared or whole nodes.
#[derive(Debug, Clone)]
struct Group {
    /// The partition's free tree ([`Pass::node_most_free`]).
    tree: u32,
    /// Whether its jobs take whole nodes (the idle nodes bound them, not the free amounts).
    whole: bool,
    /// Its classes, fewest CPUs needed on one node first.
    classes: Vec<u32>,
}

/// Jobs of one key: their positions (increasing) and predictions.
#[derive(Debug, Clone)]
struct Class {
    /// What a job of the class needs on one node (none if the pool does not know it: then the
    /// class is always tested).
    need: Amounts,
    /// Its partition's free tree (its partition, on a pool with partitions).
    tree: u32,
    /// Its jobs' demand on the nodes ([`Pass::node_demand`]), so that a test of one of them
    /// need not look the job up.
    demand: Option<Demand>,
    /// Whether its jobs ask only for kinds the nodes hold ([`Pass::on_nodes_only`]).
    on_nodes_only: bool,
    /// Members' positions, increasing.
    positions: Vec<usize>,
    /// Members' predictions ([`GONE`] once started), as a tree of minima.
    predictions: MinTree,
}

impl NodeClasses {
    /// Brings the classes up to date with the pass's queue: the jobs appended since, or every
    /// job if the queue's positions moved.
    pub(super) fn sync(&mut self, pass: &Pass<'_>) {
        let moves = pass.queue_moves();
        if self.moves != Some(moves) {
            self.moves = Some(moves);
            self.indexed = 0;
            self.of_key.clear();
            self.classes.clear();
            self.groups.clear();
        }
        while self.indexed < pass.positions() {
            let position = self.indexed;
            self.indexed += 1;
            if !pass.is_waiting(position) {
                continue;
            }
            let job = pass.job(position);
            let key = (job.partition, job.processors, job.extra, job.shape);
            let class = match self.of_key.get(&key) {
                Some(&c) => c,
                None => self.add_class(pass, position, key),
            };
            let class = &mut self.classes[class as usize];
            class.positions.push(position);
            class
                .predictions
                .push(pass.prediction(position).min(ANY_PREDICTION));
        }
    }

    /// A new class for the key of the job at `position`, in its group.
    fn add_class(&mut self, pass: &Pass<'_>, position: usize, key: Key) -> u32 {
        let id = self.classes.len() as u32;
        let (tree, need, whole) = pass.node_need(position).unwrap_or_default();
        self.of_key.insert(key, id);
        self.classes.push(Class {
            need,
            tree,
            demand: pass.node_demand(position),
            on_nodes_only: pass.on_nodes_only(position),
            positions: Vec::new(),
            predictions: MinTree::default(),
        });
        let g = match self
            .groups
            .iter()
            .position(|g| g.tree == tree && g.whole == whole)
        {
            Some(g) => g,
            None => {
                self.groups.push(Group {
                    tree,
                    whole,
                    classes: Vec::new(),
                });
                self.groups.len() - 1
            }
        };
        let classes = &self.classes;
        let group = &mut self.groups[g].classes;
        let at = group.partition_point(|&c| classes[c as usize].need.cpus <= need.cpus);
        group.insert(at, id);
        id
    }

    /// Calls `visit` with each class that could fit now by its partition's most free on one
    /// node (of the nodes with a GPU free, for a class of GPUs: what a scan must still test),
    /// in no particular order.
    pub(super) fn could_fit(&self, pass: &Pass<'_>, mut visit: impl FnMut(u32)) {
        for group in &self.groups {
            let (most, with_gpu) = pass.node_most_free(group.tree, group.whole);
            for &c in &group.classes {
                let need = &self.classes[c as usize].need;
                if need.cpus > most.cpus {
                    break;
                }
                // A class whose every member has started (as far as it knows) has none to test.
                if need.fits_in(if need.gpus > 0 { &with_gpu } else { &most })
                    && !self.classes[c as usize].predictions.all_gone()
                {
                    visit(c);
                }
            }
        }
    }

    /// The first member of `class` at a position at or after `from` that still waits and whose
    /// prediction is at most `bound`: (member, position).
    pub(super) fn first(
        &mut self,
        pass: &Pass<'_>,
        class: u32,
        from: usize,
        bound: Time,
    ) -> Option<(usize, usize)> {
        let member = self.classes[class as usize]
            .positions
            .partition_point(|&p| p < from);
        self.next(pass, class, member, bound)
    }

    /// The first member of `class` from member `member` on that still waits and whose
    /// prediction is at most `bound`: (member, position). Members found started are marked.
    pub(super) fn next(
        &mut self,
        pass: &Pass<'_>,
        class: u32,
        mut member: usize,
        bound: Time,
    ) -> Option<(usize, usize)> {
        let class = &mut self.classes[class as usize];
        loop {
            let found = class.predictions.first_at_most(member, bound)?;
            let position = class.positions[found];
            if pass.is_waiting(position) {
                return Some((found, position));
            }
            class.predictions.set(found, GONE);
            member = found + 1;
        }
    }

    /// Whether `class`'s jobs find what they found before after ends of jobs on the nodes of
    /// the partitions `touched` only: their partition is not among them and they ask only for
    /// kinds the nodes hold (what is free machine-wide then decides nothing the nodes do not).
    pub(super) fn untouched(&self, class: u32, touched: PartitionSet) -> bool {
        let class = &self.classes[class as usize];
        class.on_nodes_only && !touched.may_hold(class.tree)
    }

    /// The demand on the nodes of `class`'s jobs, if known.
    pub(super) fn demand(&self, class: u32) -> Option<&Demand> {
        self.classes[class as usize].demand.as_ref()
    }

    /// Marks member `member` of `class` started.
    pub(super) fn started(&mut self, class: u32, member: usize) {
        self.classes[class as usize].predictions.set(member, GONE);
    }
}

/// Values by index with the minimum of every aligned range: the first index at or after a
/// given one whose value is at most a bound, in O(log n) per range passed over.
#[derive(Debug, Clone, Default)]
struct MinTree {
    /// Leaves (a power of two, or 0); leaf `i` is node `size + i`, the root node 1.
    size: usize,
    /// Values pushed.
    len: usize,
    /// The tree: `nodes[k]` is the minimum of its leaves; unused leaves hold [`GONE`].
    nodes: Vec<Time>,
}

impl MinTree {
    /// Appends a value.
    fn push(&mut self, value: Time) {
        if self.len == self.size {
            let size = (2 * self.size).max(1);
            let mut nodes = vec![GONE; 2 * size];
            nodes[size..size + self.len]
                .copy_from_slice(&self.nodes[self.size..self.size + self.len]);
            for k in (1..size).rev() {
                nodes[k] = nodes[2 * k].min(nodes[2 * k + 1]);
            }
            self.size = size;
            self.nodes = nodes;
        }
        self.len += 1;
        self.set(self.len - 1, value);
    }

    /// Sets the value at `index`.
    fn set(&mut self, index: usize, value: Time) {
        let mut k = self.size + index;
        self.nodes[k] = value;
        while k > 1 {
            k /= 2;
            let m = self.nodes[2 * k].min(self.nodes[2 * k + 1]);
            if self.nodes[k] == m {
                break;
            }
            self.nodes[k] = m;
        }
    }

    /// Whether every value is [`GONE`] (or there is none).
    fn all_gone(&self) -> bool {
        self.nodes.get(1).is_none_or(|&root| root == GONE)
    }

    /// The first index at or after `from` whose value is at most `bound`.
    fn first_at_most(&self, from: usize, bound: Time) -> Option<usize> {
        if from >= self.len {
            return None;
        }
        // Climb from the leaf while the ranges to the right of the path fail, then descend.
        let mut k = self.size + from;
        if self.nodes[k] > bound {
            loop {
                // Go to the next range to the right: up while k is a right child.
                while k & 1 == 1 {
                    k /= 2;
                    if k == 0 {
                        return None;
                    }
                }
                k += 1;
                if self.nodes[k] <= bound {
                    break;
                }
            }
        }
        while k < self.size {
            k = if self.nodes[2 * k] <= bound {
                2 * k
            } else {
                2 * k + 1
            };
        }
        let index = k - self.size;
        (index < self.len).then_some(index)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::strategy::Just;

    proptest::proptest! {
        /// The tree's search finds what a walk over the values finds, through pushes and sets.
        #[test]
        fn min_tree_finds_what_a_walk_finds(
            values in proptest::collection::vec(proptest::prop_oneof![0i64..50, Just(GONE), Just(ANY_PREDICTION)], 0..70),
            sets in proptest::collection::vec((0usize..70, proptest::prop_oneof![0i64..50, Just(GONE)]), 0..20),
            queries in proptest::collection::vec((0usize..80, proptest::prop_oneof![-1i64..60, Just(ANY_PREDICTION)]), 1..20),
        ) {
            let mut tree = MinTree::default();
            let mut plain = Vec::new();
            for v in values {
                tree.push(v);
                plain.push(v);
            }
            for (i, v) in sets {
                if i < plain.len() {
                    tree.set(i, v);
                    plain[i] = v;
                }
            }
            for (from, bound) in queries {
                let walk = (from..plain.len()).find(|&i| plain[i] <= bound);
                proptest::prop_assert_eq!(tree.first_at_most(from, bound), walk);
            }
        }
    }
}
