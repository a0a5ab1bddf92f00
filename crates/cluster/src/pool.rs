//! A machine of node types: nodes with cores, memory and GPUs (of a type), features, and
//! partitions that are sets of them, as a Slurm site describes its machine (`NodeName` and
//! `PartitionName` lines of slurm.conf) and schedules it with `select/cons_tres` and
//! `SelectTypeParameters=CR_Core_Memory` (Slurm's `doc/html/cons_tres.shtml`: cores, memory
//! and GRES are allocated per node; a job fits only if every node it gets holds its share).
//!
//! A job's amounts are totals over its nodes (as sacct's `AllocTRES` gives them: `cpu=`,
//! `mem=`, `gres/gpu=`), and its [`Shape`] says how they lie: on how many nodes, of which GPU
//! type, with which features, whole nodes or shared. The pool resolves that into a [`Demand`]
//! when the job is submitted, and these rules, stated where Slurm leaves a choice:
//!
//! * **Node count.** A job that gives its node count (`--nodes`, sacct's `NNodes`) gets that
//!   many; one that does not gets as few nodes as can hold it (the fewest N for which N nodes of
//!   its partition hold 1/N of each amount), chosen at submission and fixed after.
//! * **Shares.** Each amount is split as evenly as possible over the N nodes: the first
//!   `total % N` nodes chosen get one more than `total / N`. A node fits when it holds the
//!   larger share of every amount (so the test may refuse a placement the exact split would
//!   take: a deliberate, slightly cautious simplification). Every node gets at least one CPU
//!   (Slurm allocates at least a core on every node of a job).
//! * **Which nodes.** The lowest `Weight` first, then the order the nodes were declared in
//!   (slurm.conf's `Weight`: "the lowest weight nodes are allocated first"); among them the
//!   first that fit. Slurm's cons_tres then prefers tighter node sets (best fit over switches),
//!   which a machine without a topology does not have.
//! * **Whole nodes.** A job asking for them (`--exclusive`), or of a partition that gives
//!   only whole nodes (`OverSubscribe=EXCLUSIVE`), needs nodes no job holds and holds all of
//!   each: its CPUs, memory and GPUs count as used.
//! * **GPU type, features.** With a type, only nodes whose GPUs are of that type; with features,
//!   only nodes that have every one (Slurm's `--constraint=a&b`).
//! * **Partitions.** A job runs only on its partition's nodes; a job of no partition, or of
//!   a number no partition has, on the default partition's (the first marked default, else the
//!   first), or on every node of a pool without partitions.
//! * **Memory.** A job that asks for none holds the partition's `DefMemPerCPU` times its CPUs,
//!   or none where the partition gives no default. (Slurm without any default gives a job the
//!   whole memory of its nodes; inputs that carry memory, sacct's `ReqMem`, always give it.)
//! * **Never fits.** A job no N nodes of its partition can ever hold (more GPUs than any node
//!   set has, a GPU type or feature no node of the partition has, more nodes than the partition
//!   allows) is held for good with the reason ([`NeverFits`]), as Slurm leaves such a job
//!   pending with reason `PartitionConfig` / `ReqNodeNotAvail`; it is counted, never run.

use job::Shape;
use rustc_hash::FxHashMap as HashMap;

use crate::{Extra, JobId, JobRequest, Resources, Time};

/// Amounts on one node: cores (Slurm's CPUs of `CR_Core`), memory in MiB, GPUs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Amounts {
    /// CPUs (cores).
    pub cpus: u32,
    /// Memory, MiB.
    pub memory: u32,
    /// GPUs.
    pub gpus: u32,
}

impl Amounts {
    /// Whether each amount is at most `free`'s.
    #[inline]
    pub fn fits_in(&self, free: &Amounts) -> bool {
        self.cpus <= free.cpus && self.memory <= free.memory && self.gpus <= free.gpus
    }

    pub(crate) fn plus(&self, other: &Amounts) -> Amounts {
        Amounts {
            cpus: self.cpus.saturating_add(other.cpus),
            memory: self.memory.saturating_add(other.memory),
            gpus: self.gpus.saturating_add(other.gpus),
        }
    }

    pub(crate) fn minus(&self, other: &Amounts) -> Amounts {
        Amounts {
            cpus: self.cpus.saturating_sub(other.cpus),
            memory: self.memory.saturating_sub(other.memory),
            gpus: self.gpus.saturating_sub(other.gpus),
        }
    }

    fn max(&self, other: &Amounts) -> Amounts {
        Amounts {
            cpus: self.cpus.max(other.cpus),
            memory: self.memory.max(other.memory),
            gpus: self.gpus.max(other.gpus),
        }
    }

    fn min(&self, other: &Amounts) -> Amounts {
        Amounts {
            cpus: self.cpus.min(other.cpus),
            memory: self.memory.min(other.memory),
            gpus: self.gpus.min(other.gpus),
        }
    }
}

/// A kind of node: what each node of it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeType {
    /// Its name (a site file's `[[nodes]] name`, or the slurm.conf line's first node).
    pub name: String,
    /// What one node has.
    pub capacity: Amounts,
    /// The type of its GPUs, as 1 + the index in [`PoolSpec::gpu_types`] (0: untyped).
    pub gpu_type: u8,
    /// Its features, one bit per feature of [`PoolSpec::features`].
    pub features: u32,
    /// Slurm's `Weight`: lower weights are allocated first.
    pub weight: u32,
}

/// A partition: a set of nodes and its rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolPartition {
    /// Its name.
    pub name: String,
    /// The job's partition number that selects it ([`JobRequest::partition`]).
    pub number: i64,
    /// Its nodes, by index in [`PoolSpec::nodes`].
    pub nodes: Vec<u32>,
    /// Jobs get whole nodes (`OverSubscribe=EXCLUSIVE`).
    pub exclusive: bool,
    /// The most nodes a job may have (`MaxNodes`; 0: no limit).
    pub max_nodes: u32,
    /// Memory a job that asks for none holds per CPU, MiB (`DefMemPerCPU`; 0: none).
    pub default_memory_per_cpu: u32,
    /// Jobs of no known partition run here (`Default=YES`).
    pub default: bool,
}

/// What a machine of node types is made of, before any job: its node types, its nodes, its
/// partitions, and which of the run's resource kinds are node memory and GPUs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PoolSpec {
    /// The node types.
    pub types: Vec<NodeType>,
    /// Every node: its name and the index of its type.
    pub nodes: Vec<(String, u16)>,
    /// The GPU types' names (a type's index + 1 is its number in [`Shape::gpu_type`]).
    pub gpu_types: Vec<String>,
    /// The features' names (feature i is bit i of [`Shape::features`]).
    pub features: Vec<String>,
    /// The partitions (none: every job may use every node).
    pub partitions: Vec<PoolPartition>,
    /// The index of node memory (MiB) among the run's resource kinds, if memory is scheduled.
    pub memory_kind: Option<usize>,
    /// The index of GPUs among the run's resource kinds, if the machine has GPUs.
    pub gpu_kind: Option<usize>,
}

impl PoolSpec {
    /// What the whole machine has: CPUs, and memory and GPUs at their kinds' indexes.
    pub fn totals(&self) -> Resources {
        let mut cpus = 0u32;
        let mut memory = 0u32;
        let mut gpus = 0u32;
        for (_, ty) in &self.nodes {
            if let Some(t) = self.types.get(usize::from(*ty)) {
                cpus = cpus.saturating_add(t.capacity.cpus);
                memory = memory.saturating_add(t.capacity.memory);
                gpus = gpus.saturating_add(t.capacity.gpus);
            }
        }
        let mut extra = Extra::NONE;
        if let Some(k) = self.memory_kind {
            extra = extra.with(k, memory);
        }
        if let Some(k) = self.gpu_kind {
            extra = extra.with(k, gpus);
        }
        Resources {
            processors: cpus,
            extra,
        }
    }

    /// The GPUs of each type (by [`PoolSpec::gpu_types`]' order; untyped GPUs are left out).
    pub fn gpus_by_type(&self) -> Vec<u32> {
        let mut by_type = vec![0u32; self.gpu_types.len()];
        for (_, ty) in &self.nodes {
            if let Some(t) = self.types.get(usize::from(*ty))
                && t.gpu_type > 0
                && let Some(slot) = by_type.get_mut(usize::from(t.gpu_type) - 1)
            {
                *slot = slot.saturating_add(t.capacity.gpus);
            }
        }
        by_type
    }

    /// Checks that every node's type, every partition's nodes and every type's GPU type exist,
    /// and that there is a node.
    pub fn check(&self) -> Result<(), String> {
        if self.nodes.is_empty() {
            return Err("a machine of node types needs at least one node".to_string());
        }
        if self.nodes.len() > u32::MAX as usize / 2 {
            return Err("too many nodes".to_string());
        }
        for (name, ty) in &self.nodes {
            let Some(t) = self.types.get(usize::from(*ty)) else {
                return Err(format!("node {name} has no node type"));
            };
            if t.capacity.cpus == 0 {
                return Err(format!("node {name} has no CPU"));
            }
        }
        for t in &self.types {
            if usize::from(t.gpu_type) > self.gpu_types.len() {
                return Err(format!("node type {} has an unknown GPU type", t.name));
            }
        }
        for p in &self.partitions {
            if p.nodes.is_empty() {
                return Err(format!("partition {} has no node", p.name));
            }
            if let Some(n) = p.nodes.iter().find(|&&n| n as usize >= self.nodes.len()) {
                return Err(format!(
                    "partition {} names node {n}, which does not exist",
                    p.name
                ));
            }
        }
        Ok(())
    }
}

/// Why a job can never start on the machine: it is held for good, with this reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NeverFits {
    /// More nodes than its partition has, or than its `MaxNodes` allows.
    Nodes,
    /// No node of its partition has its GPU type or features.
    Constraint,
    /// No set of nodes of its partition can ever hold its CPUs, memory or GPUs.
    Resources,
    /// More of a resource the nodes do not hold (a licence) than the machine has.
    Other,
}

impl NeverFits {
    /// Every reason, in report order.
    pub const ALL: [NeverFits; 4] = [
        NeverFits::Nodes,
        NeverFits::Constraint,
        NeverFits::Resources,
        NeverFits::Other,
    ];

    /// A short name (the key of the count in reports).
    pub fn name(self) -> &'static str {
        match self {
            NeverFits::Nodes => "nodes",
            NeverFits::Constraint => "constraint",
            NeverFits::Resources => "resources",
            NeverFits::Other => "other_resources",
        }
    }

    /// What the reason means, and Slurm's pending reason for it.
    pub fn describe(self) -> &'static str {
        match self {
            NeverFits::Nodes => {
                "more nodes than its partition has or allows (Slurm: PartitionNodeLimit)"
            }
            NeverFits::Constraint => {
                "a GPU type or feature no node of its partition has (Slurm refuses it, or: ReqNodeNotAvail)"
            }
            NeverFits::Resources => {
                "more CPUs, memory or GPUs than any set of its partition's nodes holds (Slurm: PartitionConfig)"
            }
            NeverFits::Other => "more of a machine-wide resource than the machine has",
        }
    }
}

/// A job's request resolved on the pool: where it may run and what each node must hold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Demand {
    /// The index of its partition in [`PoolSpec::partitions`] (`u32::MAX`: every node).
    partition: u32,
    /// How many nodes.
    nodes: u32,
    /// The totals split over them ([`Demand::share`]).
    total: Amounts,
    /// Its GPU type (0: any).
    gpu_type: u8,
    /// Its features.
    features: u32,
    /// Whole nodes.
    exclusive: bool,
    /// Its index among the distinct demands the pool has seen ([`NodePool::submit`] numbers
    /// them; 0 before): where its memos are kept, so that a test looks them up without hashing.
    slot: u32,
    /// The index of its place (partition, GPU type, features, whole nodes) among those seen,
    /// numbered as `slot`: where the misfits of that place are kept.
    place: u32,
}

impl Demand {
    /// The larger share of each amount: what a node must hold for the job.
    pub(crate) fn per_node(&self) -> Amounts {
        let n = self.nodes.max(1);
        Amounts {
            cpus: self.total.cpus.div_ceil(n),
            memory: self.total.memory.div_ceil(n),
            gpus: self.total.gpus.div_ceil(n),
        }
    }

    /// The share of the `k`-th node chosen (0-based): the first `total % N` get one more.
    fn share(&self, k: u32) -> Amounts {
        let n = self.nodes.max(1);
        let split = |total: u32| total / n + u32::from(k < total % n);
        Amounts {
            cpus: split(self.total.cpus),
            memory: split(self.total.memory),
            gpus: split(self.total.gpus),
        }
    }

    /// Whether it takes whole nodes.
    pub(crate) fn exclusive(&self) -> bool {
        self.exclusive
    }

    /// How many nodes it runs on.
    pub fn nodes(&self) -> u32 {
        self.nodes
    }
}

/// What EASY's shadow leaves for jobs started now that outlive it: what is free machine-wide
/// at the shadow time beyond the reserved job (for resources the nodes do not hold too), and
/// what each of the reserved job's nodes has free then beyond what it keeps for the job.
///
/// Every other node has at least as much free at the shadow time as now (the running jobs
/// only release), and a job started now takes the same from a node now and then: so what such
/// a node has free now is what it can give a job that outlives the shadow, and only the
/// reserved nodes are kept here. (The plain form kept every node's amounts at the shadow time,
/// a copy of the machine per shadow, and took the smaller of the two on every node.)
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeShadow {
    /// The shadow time.
    pub(crate) time: Time,
    /// Free at the shadow time beyond the reserved job, machine-wide.
    pub(crate) extra: Resources,
    /// The nodes the reserved job takes, by node index, each with what it has free at the
    /// shadow time beyond the reserved job's share (no job starting now that outlives the
    /// shadow may share them when it takes whole nodes, nor start on them when it is
    /// exclusive).
    pub(crate) reserved: Vec<(u32, Amounts)>,
    /// The last release the shadow counted (expected end, job): a job released after it is
    /// not free at the shadow time ([`NodePool::carry_past_end`]).
    released_up_to: (Time, JobId),
    /// Whether each demand asked about fits within the shadow, by its slot
    /// ([`Demand::slot`]), at the pool's version ([`NodePool::version`]): remembered until a
    /// job starts or ends.
    memo: std::cell::RefCell<(u64, HashMap<u32, bool>)>,
}

impl NodeShadow {
    /// A view of the nodes at `time`: the nodes `reserved` lists (sorted by node, each
    /// once) offer at most the amounts given and are not whole for any job; every other node
    /// offers what it has free now; `extra` is what is free machine-wide.
    pub(crate) fn view(time: Time, extra: Resources, reserved: Vec<(u32, Amounts)>) -> NodeShadow {
        NodeShadow {
            time,
            extra,
            reserved,
            released_up_to: (time, JobId(u32::MAX)),
            memo: std::cell::RefCell::new((u64::MAX, HashMap::default())),
        }
    }

    /// The same view with the nodes `closed` (ascending) offering nothing besides: what a job
    /// that may not use them (a maintenance window reaches into its run) sees.
    pub(crate) fn closing(&self, closed: &[u32]) -> NodeShadow {
        let mut reserved: Vec<(u32, Amounts)> = closed
            .iter()
            .map(|&n| (n, Amounts::default()))
            .chain(
                self.reserved
                    .iter()
                    .filter(|(n, _)| closed.binary_search(n).is_err())
                    .copied(),
            )
            .collect();
        reserved.sort_unstable_by_key(|&(n, _)| n);
        NodeShadow {
            time: self.time,
            extra: self.extra,
            reserved,
            released_up_to: self.released_up_to,
            memo: std::cell::RefCell::new((u64::MAX, HashMap::default())),
        }
    }

    /// A job started within the view took `share` of node `n`: a reserved node has that much
    /// less left beyond the reserved job.
    pub(crate) fn take_share(&mut self, n: u32, share: &Amounts) {
        if let Ok(i) = self.reserved.binary_search_by_key(&n, |&(node, _)| node) {
            self.reserved[i].1 = self.reserved[i].1.minus(share);
        }
    }

    /// What reserved node `n` has free at the shadow time beyond the reserved job (`None`:
    /// not reserved).
    fn reserved_left(&self, n: u32) -> Option<&Amounts> {
        self.reserved
            .binary_search_by_key(&n, |&(node, _)| node)
            .ok()
            .map(|i| &self.reserved[i].1)
    }
}

/// The nodes of a machine of node types, which jobs hold which of them, and each waiting job's
/// resolved [`Demand`].
#[derive(Debug, Clone)]
pub struct NodePool {
    spec: PoolSpec,
    /// What each node has.
    capacity: Vec<Amounts>,
    /// Each node's GPU type and features.
    traits: Vec<(u8, u32)>,
    /// Every node, lowest weight first, then declaration order.
    all: Vec<u32>,
    /// Each partition's nodes in that order.
    partition_nodes: Vec<Vec<u32>>,
    /// Whether each node is in each partition, by partition then node.
    partition_member: Vec<Vec<bool>>,
    /// The default partition's index (`u32::MAX`: every node).
    default_partition: u32,
    /// What each node has free for a job to start on (nothing on a node out of service).
    free: Vec<Amounts>,
    /// Whether each node is out of service ([`NodePool::set_out_of_service`]): down after a
    /// failure or drained. Nothing starts on it, and no plan counts on it coming back.
    out: Vec<bool>,
    /// What each node out of service would have free: its free amounts when it left, plus
    /// the shares its jobs gave back since (they return to `free` with the node).
    parked: Vec<Amounts>,
    /// What each running job holds, node by node.
    held: HashMap<JobId, Held>,
    /// Each waiting or running job's demand.
    demands: HashMap<JobId, Demand>,
    /// Whether each demand asked about fits the free amounts now, with the pool's
    /// [`NodePool::version`] when it was found (many waiting jobs ask alike: a queue of one-GPU
    /// jobs asks once). A yes holds until a job starts (`last_start`), a no until a job ends
    /// on the nodes of the demand's partition (`last_end`): no entry is ever dropped, the
    /// versions tell which still hold.
    /// Indexed by the demand's slot ([`Demand::slot`]; `None`: never asked).
    fit_memo: std::cell::RefCell<Vec<Option<(u64, bool)>>>,
    /// The version of the last start.
    last_start: u64,
    /// The version of the last end on each partition's nodes (at 0 for a pool without
    /// partitions: every end).
    last_end: Vec<u64>,
    /// The free amounts of each partition's nodes (of every node, on a pool without
    /// partitions) as trees of maxima, kept as jobs start and end: a search for the nodes where
    /// a job fits skips every subtree whose most free does not hold it, and the root says at
    /// once whether any node could.
    trees: Vec<FreeTree>,
    /// For each node, the trees it is a leaf of: (tree, leaf).
    leaves: Vec<Vec<(u32, u32)>>,
    /// For each node, the same trees as a set: on a pool with partitions, the partitions it
    /// is in ([`Release::partitions`]).
    node_partitions: Vec<PartitionSet>,
    /// [`NodePool::allocate`]'s buffer of the nodes it found.
    chosen: Vec<u32>,
    /// For each demand of one node found to fit, the node it fitted on last: asked first next
    /// time (a start or an end changes few nodes, so it mostly still holds the job), which
    /// answers [`NodePool::holds`] without a search.
    /// Indexed by the demand's slot ([`NO_NODE`]: none yet).
    witness: std::cell::RefCell<Vec<u32>>,
    /// [`NodePool::shadow`]'s amounts per node as jobs are released, valid where the stamp is
    /// the last one given (the first of the pair), so that a shadow copies no node it does not
    /// touch.
    scratch: std::cell::RefCell<(u64, Vec<(u64, Amounts)>)>,
    /// Counts every start and end.
    version: u64,
    /// The demands found not to fit since the last end, by where they may run
    /// (partition, GPU type, features, whole nodes): (what a node must hold, nodes). A demand
    /// needing at least as much of every amount on at least as many nodes cannot fit either.
    /// Indexed by the place's number ([`Demand::place`]).
    misfits: std::cell::RefCell<Vec<Vec<(Amounts, u32)>>>,
    /// The distinct demands seen, each with its slot ([`Demand::slot`]; keyed with slot and
    /// place 0).
    slots: HashMap<Demand, u32>,
    /// The distinct places seen, each with its number ([`Demand::place`]).
    places: HashMap<Place, u32>,
    /// Each place's partition, by number.
    place_partitions: Vec<u32>,
    /// Each slot's partition: what a shadow's memo needs to know of a demand it remembers.
    slot_partitions: Vec<u32>,
    /// The demands of the requests seen (by partition number, processors, other amounts and
    /// shape), at most [`RESOLVED_KEPT`].
    resolved: HashMap<(i64, u32, Extra, Shape), Result<Demand, NeverFits>>,
}

/// What a running job gives back at its expected end, as the cluster's index of running jobs in
/// that order keeps it: what it holds machine-wide and, on a machine of node types, the
/// partitions whose nodes it holds. A shadow ([`NodePool::shadow`]) walks that index; it counts
/// every job's resources machine-wide but looks up the nodes only of jobs holding nodes of the
/// blocked job's partition (on a site with a CPU and a GPU partition, most are not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Release {
    /// What the job holds machine-wide.
    pub(crate) holds: Resources,
    /// The partitions whose nodes it holds (empty off a machine of node types).
    pub(crate) partitions: PartitionSet,
}

/// A set of partition numbers as a bit mask; partitions 31 and above share the last bit, so
/// the set may say a partition is in it when only another of those is (never the reverse).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct PartitionSet(u32);

impl PartitionSet {
    /// The partitions in either set.
    pub(crate) fn union(self, other: PartitionSet) -> PartitionSet {
        PartitionSet(self.0 | other.0)
    }

    /// Partition `partition`'s bit.
    fn bit(partition: u32) -> u32 {
        1 << partition.min(31)
    }

    /// Adds partition `partition`.
    fn insert(&mut self, partition: u32) {
        self.0 |= Self::bit(partition);
    }

    /// Whether partition `partition` may be in the set (it is, if below 31).
    pub(crate) fn may_hold(self, partition: u32) -> bool {
        self.0 & Self::bit(partition) != 0
    }
}

/// A job's nodes and what it holds on each ([`Held::shares`]).
type Shares = smallvec::SmallVec<[(u32, Amounts); 1]>;

/// Where a demand may run: its partition, GPU type, features, and whether it takes whole nodes.
type Place = (u32, u8, u32, bool);

/// What a running job holds on each of its nodes (what it holds machine-wide, which
/// [`NodePool::allocate`] returned, the cluster keeps in its [`Release`]).
#[derive(Debug, Clone)]
struct Held {
    /// Its nodes and what it holds on each (in place for a job of one node, the most
    /// common: no allocation per job, and a shadow reads them without a second look-up).
    shares: Shares,
    /// The partitions its nodes are in ([`Release::partitions`]).
    partitions: PartitionSet,
    /// What it holds machine-wide: kept only for the tests that compare a shadow with a scan.
    #[cfg(test)]
    total: Resources,
}

/// The nodes of one partition in allocation order (lowest weight, then declaration order) as
/// the leaves of a binary tree whose inner nodes hold the most of each amount below them: what
/// is free, and what idle nodes have (a node counts as idle when all of it is free). A node set
/// where some node fits a per-node need must have the need within its maxima, so a search in
/// allocation order skips every subtree whose maxima do not hold it and visits only the subtrees
/// on the way to the nodes that do (and to nodes only ineligible by GPU type or features).
/// The maxima are exact after every update ([`FreeTree::set`]); the property test
/// `the_free_trees_agree_with_a_scan_of_the_nodes` checks them, and the nodes they find,
/// against a scan of every node.
#[derive(Debug, Clone)]
struct FreeTree {
    /// The nodes, in allocation order: leaf `i` is node `nodes[i]`.
    nodes: Vec<u32>,
    /// Leaves: the power of two at least `nodes.len()`; the root is 1, leaf `i` is `size + i`,
    /// and the leaves past the nodes hold nothing.
    size: usize,
    /// The most free on one node below each tree node, amount by amount.
    free: Vec<Amounts>,
    /// The most each idle node below has (its capacity), amount by amount.
    idle: Vec<Amounts>,
    /// The most free on one node below among the nodes with a GPU free, amount by amount: a
    /// job of GPUs is bounded by these (GPU nodes often have CPUs free but no GPU, which the
    /// maxima of every node would mix with another node's free GPU).
    gpu: Vec<Amounts>,
    /// Each node's leaf in this tree (`u32::MAX`: not in it), by node index.
    leaf_of: Vec<u32>,
}

/// Sets node `at` of a tree of maxima (the root 1, node `i`'s children `2i` and `2i + 1`) to
/// `value`, and the maxima above it up to the first that does not change (those above it do
/// not either).
fn raise(maxima: &mut [Amounts], at: usize, value: Amounts) {
    if maxima[at] == value {
        return;
    }
    maxima[at] = value;
    let mut i = at;
    while i > 1 {
        i /= 2;
        let most = maxima[2 * i].max(&maxima[2 * i + 1]);
        if most == maxima[i] {
            break;
        }
        maxima[i] = most;
    }
}

impl FreeTree {
    /// The tree of `nodes` (in allocation order) with every node idle (`capacity`).
    fn new(nodes: Vec<u32>, capacity: &[Amounts]) -> FreeTree {
        let size = nodes.len().next_power_of_two();
        let mut free = vec![Amounts::default(); 2 * size];
        let mut leaf_of = vec![u32::MAX; capacity.len()];
        for (i, &n) in nodes.iter().enumerate() {
            free[size + i] = capacity[n as usize];
            leaf_of[n as usize] = i as u32;
        }
        for i in (1..size).rev() {
            free[i] = free[2 * i].max(&free[2 * i + 1]);
        }
        let gpu = free
            .iter()
            .map(|f| if f.gpus > 0 { *f } else { Amounts::default() })
            .collect::<Vec<_>>();
        let mut gpu = gpu;
        for i in (1..size).rev() {
            gpu[i] = gpu[2 * i].max(&gpu[2 * i + 1]);
        }
        FreeTree {
            idle: free.clone(),
            gpu,
            nodes,
            size,
            free,
            leaf_of,
        }
    }

    /// Sets leaf `leaf`'s free amounts and what it has if idle (nothing if not), and the
    /// maxima above it (up to the first that does not change).
    fn set(&mut self, leaf: usize, free: Amounts, idle: Amounts) {
        let at = self.size + leaf;
        let gpu = if free.gpus > 0 {
            free
        } else {
            Amounts::default()
        };
        // The three trees are independent: each stops at its own first unchanged node (a
        // start on a busy node leaves the idle tree as it was, a CPU node the GPU tree).
        raise(&mut self.free, at, free);
        raise(&mut self.idle, at, idle);
        raise(&mut self.gpu, at, gpu);
    }

    /// The maxima that bound where `need` may fit below tree node `i`: of idle nodes for
    /// `whole`, else of the nodes with a GPU free for a need of GPUs, else of every node.
    fn most(&self, i: usize, need: &Amounts, whole: bool) -> &Amounts {
        if whole {
            &self.idle[i]
        } else if need.gpus > 0 {
            &self.gpu[i]
        } else {
            &self.free[i]
        }
    }

    /// Hands `take`, in allocation order, the nodes that `accept`s, skipping the subtrees whose
    /// maxima ([`FreeTree::most`]) do not hold `need`, until `take` says it has enough; whether
    /// it did. A depth-first walk without recursion: down to the left child while the maxima
    /// hold the need, else on to the next subtree to the right.
    fn find(
        &self,
        need: &Amounts,
        whole: bool,
        accept: &impl Fn(u32) -> bool,
        take: &mut impl FnMut(u32) -> bool,
    ) -> bool {
        let most: &[Amounts] = if whole {
            &self.idle
        } else if need.gpus > 0 {
            &self.gpu
        } else {
            &self.free
        };
        let mut i = 1;
        loop {
            if need.fits_in(&most[i]) {
                if i < self.size {
                    i *= 2;
                    continue;
                }
                if let Some(&n) = self.nodes.get(i - self.size)
                    && accept(n)
                    && take(n)
                {
                    return true;
                }
            }
            // The next subtree to the right: up while this one is a right child.
            while i & 1 == 1 {
                i /= 2;
                if i == 0 {
                    return false;
                }
            }
            i += 1;
        }
    }
}

/// Resources summed without saturating, 64 bits an amount: a shadow adds what every running
/// job gives back, and the sum clamped to `u32` at the end equals the saturating sum of the
/// same amounts (none is negative), at fewer instructions an addition.
#[derive(Debug, Clone, Copy)]
struct WideSum {
    processors: u64,
    extra: [u64; job::MAX_EXTRA_KINDS],
}

impl WideSum {
    fn of(resources: &Resources) -> WideSum {
        WideSum {
            processors: u64::from(resources.processors),
            extra: resources.extra.0.map(u64::from),
        }
    }

    fn add(&mut self, resources: &Resources) {
        self.processors += u64::from(resources.processors);
        for (sum, &amount) in self.extra.iter_mut().zip(&resources.extra.0) {
            *sum += u64::from(amount);
        }
    }

    /// Whether `needed` fits in the sum (as [`Resources::fits_in`] in the clamped sum).
    fn covers(&self, needed: &Resources) -> bool {
        u64::from(needed.processors) <= self.processors
            && needed
                .extra
                .0
                .iter()
                .zip(&self.extra)
                .all(|(&need, &sum)| u64::from(need) <= sum)
    }

    /// The sum, each amount at most `u32::MAX`.
    fn clamped(&self) -> Resources {
        let clamp = |sum: u64| u32::try_from(sum).unwrap_or(u32::MAX);
        Resources {
            processors: clamp(self.processors),
            extra: Extra(self.extra.map(clamp)),
        }
    }
}

/// How many distinct requests a pool remembers the demand of.
const RESOLVED_KEPT: usize = 1 << 16;

/// [`NodePool`]'s witness of a demand that has none yet.
const NO_NODE: u32 = u32::MAX;

impl NodePool {
    /// An idle machine of `spec`'s nodes (checked: [`PoolSpec::check`]).
    pub fn new(spec: PoolSpec) -> Result<NodePool, String> {
        spec.check()?;
        let capacity: Vec<Amounts> = spec
            .nodes
            .iter()
            .map(|(_, ty)| spec.types[usize::from(*ty)].capacity)
            .collect();
        let traits = spec
            .nodes
            .iter()
            .map(|(_, ty)| {
                let t = &spec.types[usize::from(*ty)];
                (t.gpu_type, t.features)
            })
            .collect();
        let weight = |n: u32| spec.types[usize::from(spec.nodes[n as usize].1)].weight;
        let ordered = |mut nodes: Vec<u32>| {
            nodes.sort_by_key(|&n| (weight(n), n));
            nodes.dedup();
            nodes
        };
        let all = ordered((0..spec.nodes.len() as u32).collect());
        let partition_nodes: Vec<Vec<u32>> = spec
            .partitions
            .iter()
            .map(|p| ordered(p.nodes.clone()))
            .collect();
        let partition_member = spec
            .partitions
            .iter()
            .map(|p| {
                let mut member = vec![false; spec.nodes.len()];
                for &n in &p.nodes {
                    if let Some(m) = member.get_mut(n as usize) {
                        *m = true;
                    }
                }
                member
            })
            .collect();
        let default_partition = if spec.partitions.is_empty() {
            u32::MAX
        } else {
            spec.partitions.iter().position(|p| p.default).unwrap_or(0) as u32
        };
        let trees: Vec<FreeTree> = if spec.partitions.is_empty() {
            vec![FreeTree::new(all.clone(), &capacity)]
        } else {
            partition_nodes
                .iter()
                .map(|nodes: &Vec<u32>| FreeTree::new(nodes.clone(), &capacity))
                .collect()
        };
        let mut leaves = vec![Vec::new(); capacity.len()];
        for (t, tree) in trees.iter().enumerate() {
            for (leaf, &n) in tree.nodes.iter().enumerate() {
                leaves[n as usize].push((t as u32, leaf as u32));
            }
        }
        let node_partitions = leaves
            .iter()
            .map(|trees| {
                let mut set = PartitionSet::default();
                for &(tree, _) in trees {
                    set.insert(tree);
                }
                set
            })
            .collect();
        Ok(NodePool {
            node_partitions,
            chosen: Vec::new(),
            out: vec![false; capacity.len()],
            parked: vec![Amounts::default(); capacity.len()],
            free: capacity.clone(),
            capacity,
            traits,
            all,
            partition_nodes,
            partition_member,
            default_partition,
            held: HashMap::default(),
            demands: HashMap::default(),
            fit_memo: std::cell::RefCell::new(Vec::new()),
            last_start: 0,
            last_end: vec![0; spec.partitions.len().max(1)],
            trees,
            leaves,
            witness: std::cell::RefCell::new(Vec::new()),
            scratch: std::cell::RefCell::new((0, Vec::new())),
            version: 0,
            misfits: std::cell::RefCell::new(Vec::new()),
            slots: HashMap::default(),
            places: HashMap::default(),
            place_partitions: Vec::new(),
            slot_partitions: Vec::new(),
            resolved: HashMap::default(),
            spec,
        })
    }

    /// What the machine is made of.
    pub fn spec(&self) -> &PoolSpec {
        &self.spec
    }

    /// What each node has free now, by node index.
    pub fn free(&self) -> &[Amounts] {
        &self.free
    }

    /// What each node has, by node index.
    pub fn capacity(&self) -> &[Amounts] {
        &self.capacity
    }

    /// Whether node `n` is out of service: down after a failure or drained.
    pub fn is_out_of_service(&self, n: u32) -> bool {
        self.out.get(n as usize).copied().unwrap_or(false)
    }

    /// What node `n`, out of service, would have free were it back (nothing for a node in
    /// service: see [`NodePool::free`]).
    pub(crate) fn parked_of(&self, n: u32) -> Amounts {
        self.parked.get(n as usize).copied().unwrap_or_default()
    }

    /// Takes node `n` out of service (`out`) or brings it back, and returns what that took
    /// from or gave back to the free amounts (the node's free amounts as it leaves; what it
    /// has free as it comes back). Its running jobs keep their shares (a caller that kills
    /// them ends them first); what they give back as they end stays apart until it returns.
    /// Nothing if the node was already so, or is not one of the pool's.
    ///
    /// Leaving shrinks what is free, as a start does; coming back adds, as an end on the
    /// node's partitions does: the memos follow the same rules.
    pub(crate) fn set_out_of_service(&mut self, n: u32, out: bool) -> Amounts {
        let i = n as usize;
        if self.out.get(i).is_none_or(|&was| was == out) {
            return Amounts::default();
        }
        self.out[i] = out;
        let moved = if out {
            self.version += 1;
            self.last_start = self.version;
            self.parked[i] = std::mem::take(&mut self.free[i]);
            self.parked[i]
        } else {
            self.added_on(self.node_partitions[i]);
            self.free[i] = std::mem::take(&mut self.parked[i]);
            self.free[i]
        };
        self.update_trees(n);
        moved
    }

    /// `amounts` on the nodes as machine-wide resources (memory and GPUs as the kinds the
    /// spec names for them).
    pub(crate) fn as_resources(&self, amounts: Amounts) -> Resources {
        self.held_resources(amounts, Extra::NONE)
    }

    /// The nodes a running job holds, and what it holds on each.
    pub fn allocation(&self, id: JobId) -> Option<&[(u32, Amounts)]> {
        self.held.get(&id).map(|h| h.shares.as_slice())
    }

    /// The index in [`PoolSpec::partitions`] of a waiting or running job's partition (`None`
    /// for a job the pool does not know, or on a pool without partitions).
    pub fn partition_of_job(&self, id: JobId) -> Option<usize> {
        let p = self.demands.get(&id)?.partition;
        (p != u32::MAX).then_some(p as usize)
    }

    /// The partition index of job partition number `number`.
    fn partition_of(&self, number: i64) -> u32 {
        if self.spec.partitions.is_empty() {
            return u32::MAX;
        }
        self.spec
            .partitions
            .iter()
            .position(|p| p.number == number)
            .map_or(self.default_partition, |i| i as u32)
    }

    fn nodes_of(&self, partition: u32) -> &[u32] {
        self.partition_nodes
            .get(partition as usize)
            .map_or(&self.all, Vec::as_slice)
    }

    /// Whether node `n` may hold the job at all: its GPU type and features.
    fn eligible(&self, n: u32, demand: &Demand) -> bool {
        let (gpu_type, features) = self.traits[n as usize];
        (demand.gpu_type == 0 || demand.total.gpus == 0 || gpu_type == demand.gpu_type)
            && features & demand.features == demand.features
    }

    /// Resolves `job` on the pool and remembers its demand, or says why it can never start.
    pub(crate) fn submit(&mut self, job: &JobRequest) -> Result<(), NeverFits> {
        // Jobs alike resolve alike: the resolution depends on these only.
        let key = (job.partition, job.processors, job.extra, job.shape);
        let demand = match self.resolved.get(&key) {
            Some(known) => *known,
            None => {
                let resolved = self.resolve(job).map(|d| self.number(d));
                if self.resolved.len() < RESOLVED_KEPT {
                    self.resolved.insert(key, resolved);
                }
                resolved
            }
        }?;
        self.demands.insert(job.id, demand);
        Ok(())
    }

    /// `demand` (as [`NodePool::resolve`] gives it) with its slot and place numbers, each
    /// given anew if not seen before, and the memos grown to hold them.
    fn number(&mut self, demand: Demand) -> Demand {
        let next = self.slots.len() as u32;
        let slot = *self.slots.entry(demand).or_insert(next);
        let place = (
            demand.partition,
            demand.gpu_type,
            demand.features,
            demand.exclusive,
        );
        let next = self.places.len() as u32;
        let place = *self.places.entry(place).or_insert(next);
        if slot as usize == self.slot_partitions.len() {
            self.slot_partitions.push(demand.partition);
            self.fit_memo.get_mut().push(None);
            self.witness.get_mut().push(NO_NODE);
        }
        if place as usize == self.place_partitions.len() {
            self.place_partitions.push(demand.partition);
            self.misfits.get_mut().push(Vec::new());
        }
        Demand {
            slot,
            place,
            ..demand
        }
    }

    /// A job's demand: its partition, node count and totals (see the module's rules).
    fn resolve(&self, job: &JobRequest) -> Result<Demand, NeverFits> {
        let partition = self.partition_of(job.partition);
        let rules = self.spec.partitions.get(partition as usize);
        let kind = |k: Option<usize>| k.map_or(0, |k| job.extra.get(k));
        let mut memory = kind(self.spec.memory_kind);
        if memory == 0
            && self.spec.memory_kind.is_some()
            && let Some(p) = rules
        {
            memory = p.default_memory_per_cpu.saturating_mul(job.processors);
        }
        let Shape {
            nodes,
            gpu_type,
            exclusive,
            features,
        } = job.shape;
        let mut demand = Demand {
            partition,
            nodes: u32::from(nodes),
            total: Amounts {
                cpus: job.processors,
                memory,
                gpus: kind(self.spec.gpu_kind),
            },
            gpu_type,
            features,
            exclusive: exclusive || rules.is_some_and(|p| p.exclusive),
            slot: 0,
            place: 0,
        };
        let eligible: Vec<u32> = self
            .nodes_of(partition)
            .iter()
            .copied()
            .filter(|&n| self.eligible(n, &demand))
            .collect();
        if eligible.is_empty() {
            return Err(NeverFits::Constraint);
        }
        let limit = rules.map_or(0, |p| p.max_nodes);
        let max_nodes = if limit == 0 { u32::MAX } else { limit }.min(eligible.len() as u32);
        let holds = |demand: &Demand| {
            let need = demand.per_node();
            eligible
                .iter()
                .filter(|&&n| need.fits_in(&self.capacity[n as usize]))
                .count() as u32
                >= demand.nodes
        };
        if demand.nodes > 0 {
            if demand.nodes > max_nodes {
                return Err(NeverFits::Nodes);
            }
            demand.total.cpus = demand.total.cpus.max(demand.nodes);
            return if holds(&demand) {
                Ok(demand)
            } else {
                Err(NeverFits::Resources)
            };
        }
        // The fewest nodes that hold it: start from what the largest eligible node bounds.
        let largest = eligible.iter().fold(Amounts::default(), |m, &n| {
            let c = self.capacity[n as usize];
            Amounts {
                cpus: m.cpus.max(c.cpus),
                memory: m.memory.max(c.memory),
                gpus: m.gpus.max(c.gpus),
            }
        });
        let at_least = |total: u32, largest: u32| {
            if total == 0 {
                1
            } else if largest == 0 {
                u32::MAX
            } else {
                total.div_ceil(largest)
            }
        };
        let first = at_least(demand.total.cpus, largest.cpus)
            .max(at_least(demand.total.memory, largest.memory))
            .max(at_least(demand.total.gpus, largest.gpus))
            .max(1);
        let mut n = first;
        while n <= max_nodes {
            let trial = Demand {
                nodes: n,
                total: Amounts {
                    cpus: demand.total.cpus.max(n),
                    ..demand.total
                },
                ..demand
            };
            if holds(&trial) {
                return Ok(trial);
            }
            n += 1;
        }
        Err(
            if first > max_nodes && rules.is_some_and(|p| p.max_nodes > 0) {
                NeverFits::Nodes
            } else {
                NeverFits::Resources
            },
        )
    }

    /// A waiting or running job's demand.
    pub(crate) fn demand(&self, id: JobId) -> Option<&Demand> {
        self.demands.get(&id)
    }

    /// Forgets a job that will never start (held for good after `submit`).
    pub(crate) fn forget(&mut self, id: JobId) {
        self.demands.remove(&id);
    }

    /// The first nodes (in allocation order) where the job fits with `available` amounts per
    /// node (for whole nodes: where `whole` says the node is whole and free), into `out`;
    /// whether it found them all. A node is idle exactly when all of it is free: every job
    /// holds at least one CPU on each of its nodes.
    ///
    /// `available` must never give a node more than it has free now, and `whole` must say no
    /// to a node that is not idle now (what is free now, or less: what is left at a shadow time
    /// too): the search then skips the parts of the partition's [`FreeTree`] where no node has
    /// free, or idle, what the job needs on one node. It finds the nodes a scan of the
    /// partition's nodes in allocation order finds ([`NodePool::choose_by_scan`]).
    pub(crate) fn choose(
        &self,
        demand: &Demand,
        available: impl Fn(u32) -> Amounts,
        whole: impl Fn(u32) -> bool,
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        if demand.nodes == 0 {
            return false;
        }
        let need = demand.per_node();
        let accept = |n: u32| {
            self.eligible(n, demand)
                && if demand.exclusive {
                    whole(n) && need.fits_in(&self.capacity[n as usize])
                } else {
                    need.fits_in(&available(n))
                }
        };
        let wanted = demand.nodes as usize;
        self.tree_of(demand.partition)
            .find(&need, demand.exclusive, &accept, &mut |n| {
                out.push(n);
                out.len() >= wanted
            })
    }

    /// Whether [`NodePool::choose`] finds the job's nodes (the same conditions), without
    /// saying which.
    fn holds(
        &self,
        demand: &Demand,
        available: impl Fn(u32) -> Amounts,
        whole: impl Fn(u32) -> bool,
    ) -> bool {
        if demand.nodes == 0 {
            return false;
        }
        let need = demand.per_node();
        let accept = |n: u32| {
            self.eligible(n, demand)
                && if demand.exclusive {
                    whole(n) && need.fits_in(&self.capacity[n as usize])
                } else {
                    need.fits_in(&available(n))
                }
        };
        // A job of one node fits wherever one node takes it: first where one did last time.
        let one = demand.nodes == 1;
        if one
            && let Some(&node) = self.witness.borrow().get(demand.slot as usize)
            && node != NO_NODE
            && accept(node)
        {
            return true;
        }
        let mut left = demand.nodes;
        let mut first = None;
        let found =
            self.tree_of(demand.partition)
                .find(&need, demand.exclusive, &accept, &mut |n| {
                    first.get_or_insert(n);
                    left -= 1;
                    left == 0
                });
        if found
            && one
            && let Some(node) = first
            && let Some(slot) = self.witness.borrow_mut().get_mut(demand.slot as usize)
        {
            *slot = node;
        }
        found
    }

    /// [`NodePool::choose`] by a scan of every node of the partition, for any `available` and
    /// `whole` (amounts beyond what is free now too): what plans of later times use
    /// ([`crate::NodePlan`]), and what the tests compare the tree search with.
    pub(crate) fn choose_by_scan(
        &self,
        demand: &Demand,
        available: impl Fn(u32) -> Amounts,
        whole: impl Fn(u32) -> bool,
        out: &mut Vec<u32>,
    ) -> bool {
        out.clear();
        let need = demand.per_node();
        for &n in self.nodes_of(demand.partition) {
            if !self.eligible(n, demand) {
                continue;
            }
            let fits = if demand.exclusive {
                whole(n) && need.fits_in(&self.capacity[n as usize])
            } else {
                need.fits_in(&available(n))
            };
            if fits {
                out.push(n);
                if out.len() as u32 == demand.nodes {
                    return true;
                }
            }
        }
        false
    }

    /// The free tree of `partition`'s nodes (of every node on a pool without partitions).
    fn tree_of(&self, partition: u32) -> &FreeTree {
        self.trees.get(partition as usize).unwrap_or(&self.trees[0])
    }

    /// Node `n`'s free amounts changed: its leaves in the free trees follow.
    fn update_trees(&mut self, n: u32) {
        let n = n as usize;
        let free = self.free[n];
        let idle = if free == self.capacity[n] {
            free
        } else {
            Amounts::default()
        };
        for &(t, leaf) in &self.leaves[n] {
            self.trees[t as usize].set(leaf as usize, free, idle);
        }
    }

    /// Whether job `id` fits on the nodes' free amounts now.
    pub(crate) fn fits(&self, id: JobId) -> bool {
        self.demands.get(&id).is_some_and(|d| self.fits_demand(d))
    }

    /// Whether `demand` (a waiting job's, [`NodePool::demand`]) fits on the nodes' free
    /// amounts now: [`NodePool::fits`] for a caller that keeps the demand (EASY's classes),
    /// without looking the job up.
    pub(crate) fn fits_demand(&self, demand: &Demand) -> bool {
        let slot = demand.slot as usize;
        if let Some(Some((version, known))) = self.fit_memo.borrow().get(slot).copied()
            && self.memo_holds(demand, version, known)
        {
            return known;
        }
        let remember = |fits: bool| {
            if let Some(entry) = self.fit_memo.borrow_mut().get_mut(slot) {
                *entry = Some((self.version, fits));
            }
        };
        let need = demand.per_node();
        if !need.fits_in(
            self.tree_of(demand.partition)
                .most(1, &need, demand.exclusive),
        ) {
            remember(false);
            return false;
        }
        let place = demand.place as usize;
        if let Some(known) = self.misfits.borrow().get(place)
            && known
                .iter()
                .any(|(n, count)| n.fits_in(&need) && *count <= demand.nodes)
        {
            remember(false);
            return false;
        }
        let fits = self.holds(
            demand,
            |n| self.free[n as usize],
            |n| self.free[n as usize] == self.capacity[n as usize],
        );
        remember(fits);
        if !fits
            && let Some(known) = self.misfits.borrow_mut().get_mut(place)
            && known.len() < 16
        {
            known.push((need, demand.nodes));
        }
        fits
    }

    /// For a waiting or running job: its partition's free tree (the index [`NodePool::most_free_of`]
    /// takes), what it needs on one node, and whether it takes whole nodes.
    pub(crate) fn need_of(&self, id: JobId) -> Option<(u32, Amounts, bool)> {
        let demand = self.demands.get(&id)?;
        let tree = if (demand.partition as usize) < self.trees.len() {
            demand.partition
        } else {
            0
        };
        Some((tree, demand.per_node(), demand.exclusive))
    }

    /// The most free on one node of free tree `tree`'s nodes (`whole`: the most an idle node
    /// has), amount by amount, for a need of no GPU and for a need of GPUs (of the nodes with a
    /// GPU free): a job needing more of some amount on one node does not fit.
    pub(crate) fn most_free_of(&self, tree: u32, whole: bool) -> (Amounts, Amounts) {
        let tree = self.trees.get(tree as usize).unwrap_or(&self.trees[0]);
        if whole {
            (tree.idle[1], tree.idle[1])
        } else {
            (tree.free[1], tree.gpu[1])
        }
    }

    /// What node `n` has free now and still at `shadow`'s time beyond the reserved job.
    fn free_within(&self, shadow: &NodeShadow, n: u32) -> Amounts {
        let free = self.free[n as usize];
        shadow.reserved_left(n).map_or(free, |left| free.min(left))
    }

    /// Whether node `n` is idle now and not reserved (then it is whole at `shadow`'s time too).
    fn whole_within(&self, shadow: &NodeShadow, n: u32) -> bool {
        self.free[n as usize] == self.capacity[n as usize] && shadow.reserved_left(n).is_none()
    }

    /// Whether job `id` fits now within `shadow`'s amounts too (it outlives the shadow time).
    pub(crate) fn fits_within(&self, id: JobId, shadow: &NodeShadow) -> bool {
        self.demands
            .get(&id)
            .is_some_and(|d| self.fits_demand_within(d, shadow))
    }

    /// [`NodePool::fits_within`] for a caller that keeps the waiting job's demand.
    pub(crate) fn fits_demand_within(&self, demand: &Demand, shadow: &NodeShadow) -> bool {
        {
            let mut memo = shadow.memo.borrow_mut();
            if memo.0 != self.version {
                // Only starts come between a shadow's versions (an end makes a new shadow):
                // what is free now and at the shadow time only shrank, so a misfit stays one.
                memo.0 = self.version;
                memo.1.retain(|_, fits| !*fits);
            }
            if let Some(&known) = memo.1.get(&demand.slot) {
                return known;
            }
        }
        let fits = self.holds(
            demand,
            |n| self.free_within(shadow, n),
            |n| self.whole_within(shadow, n),
        );
        shadow.memo.borrow_mut().1.insert(demand.slot, fits);
        fits
    }

    /// What job `id` holds on `nodes` (chosen by `choose`).
    fn shares(&self, demand: &Demand, nodes: &[u32]) -> Shares {
        nodes
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let share = if demand.exclusive {
                    self.capacity[n as usize]
                } else {
                    demand.share(k as u32)
                };
                (n, share)
            })
            .collect()
    }

    /// Gives job `id` its nodes (within `shadow`'s amounts if given, which then lose what it
    /// holds) and returns what it holds in all: CPUs, and memory and GPUs at their kinds.
    /// `extra` is the job's request of every kind, whose machine-wide kinds it keeps. The
    /// caller checked that it fits; a job that does not gets nothing (never: checked).
    pub(crate) fn allocate(
        &mut self,
        id: JobId,
        extra: Extra,
        shadow: Option<&mut NodeShadow>,
    ) -> Resources {
        let Some(demand) = self.demands.get(&id).copied() else {
            return Resources::default();
        };
        // The nodes found, in a buffer kept from start to start.
        let mut chosen = std::mem::take(&mut self.chosen);
        let found = match &shadow {
            None => self.choose(
                &demand,
                |n| self.free[n as usize],
                |n| self.free[n as usize] == self.capacity[n as usize],
                &mut chosen,
            ),
            Some(s) => self.choose(
                &demand,
                |n| self.free_within(s, n),
                |n| self.whole_within(s, n),
                &mut chosen,
            ),
        };
        if !found {
            self.chosen = chosen;
            return Resources::default();
        }
        // A start only takes what is free: what did not fit still does not (misfits are
        // remembered until a job ends), what did may no longer.
        self.version += 1;
        self.last_start = self.version;
        let shares = self.shares(&demand, &chosen);
        self.chosen = chosen;
        let mut total = Amounts::default();
        for &(n, share) in &shares {
            let i = n as usize;
            self.free[i] = self.free[i].minus(&share);
            self.update_trees(n);
            total = total.plus(&share);
        }
        if let Some(s) = shadow {
            for &(n, share) in &shares {
                s.take_share(n, &share);
            }
        }
        let total = self.held_resources(total, extra);
        let partitions = shares.iter().fold(PartitionSet::default(), |set, &(n, _)| {
            PartitionSet(set.0 | self.node_partitions[n as usize].0)
        });
        self.held.insert(
            id,
            Held {
                shares,
                partitions,
                #[cfg(test)]
                total,
            },
        );
        total
    }

    /// The machine-wide view of node amounts `total` with the job's other kinds `extra`.
    fn held_resources(&self, total: Amounts, extra: Extra) -> Resources {
        let mut extra = extra;
        if let Some(k) = self.spec.memory_kind {
            extra = extra.with(k, total.memory);
        }
        if let Some(k) = self.spec.gpu_kind {
            extra = extra.with(k, total.gpus);
        }
        Resources {
            processors: total.cpus,
            extra,
        }
    }

    /// The partitions whose nodes running job `id` holds ([`Release::partitions`]): the trees
    /// its nodes are leaves of, which are the partitions on a pool with partitions (on a pool
    /// without, every node is in the one tree and a shadow looks at every job's nodes).
    pub(crate) fn partitions_held(&self, id: JobId) -> PartitionSet {
        self.held
            .get(&id)
            .map_or_else(PartitionSet::default, |h| h.partitions)
    }

    /// Whether the end of a running job that gave back `release` leaves the shadow of waiting
    /// job `id` (holding `needed`) as it was but for what is free machine-wide: if that job
    /// held none of the nodes of `id`'s partition and `id` needs nothing counted only
    /// machine-wide, every node `id` may use has what it had at every release, so a shadow
    /// worked out now has the same time, nodes and reserved amounts ([`NodePool::carry_past_end`]
    /// carries it). On such a machine a job blocked in a GPU partition keeps its shadow as CPU
    /// jobs end.
    pub(crate) fn end_leaves_shadow(
        &self,
        id: JobId,
        needed: &Resources,
        release: &Release,
    ) -> bool {
        let Some(demand) = self.demands.get(&id) else {
            return false;
        };
        // Without partitions every node is one partition's: every end touches the job's nodes.
        if self
            .partition_member
            .get(demand.partition as usize)
            .is_none()
            || release.partitions.may_hold(demand.partition)
        {
            return false;
        }
        // The shadow's machine-wide test follows from the nodes' only for kinds on the nodes.
        self.on_nodes_only(&needed.extra)
    }

    /// Whether `extra` asks only for kinds the nodes hold (memory, GPUs): then a request that
    /// fits on nodes fits machine-wide too.
    pub(crate) fn on_nodes_only(&self, extra: &Extra) -> bool {
        let mut machine_only = *extra;
        for kind in [self.spec.memory_kind, self.spec.gpu_kind]
            .into_iter()
            .flatten()
        {
            machine_only = machine_only.with(kind, 0);
        }
        machine_only.is_none()
    }

    /// Carries `shadow` past the end of a running job that was to give back `release` at
    /// `expected` (expected end, job), an end that [`NodePool::end_leaves_shadow`] found to
    /// leave it: what is free machine-wide at the shadow time grows by what the job held if
    /// it was to be released after the shadow's last release.
    pub(crate) fn carry_past_end(
        &self,
        shadow: &mut NodeShadow,
        expected: (Time, JobId),
        release: &Release,
    ) {
        if expected > shadow.released_up_to {
            shadow.extra = shadow.extra.plus(&release.holds);
        }
        // What fitted within the shadow still does; what did not may now only on the
        // partitions whose nodes the job held.
        let affected = self.affected_by(release.partitions);
        shadow.memo.get_mut().1.retain(|&slot, fits| {
            *fits
                || !self
                    .slot_partitions
                    .get(slot as usize)
                    .is_none_or(|&partition| affected(partition))
        });
    }

    /// Whether `fit_memo`'s answer `fits` for `demand`, found at `version`, still holds: a
    /// yes if no job started since, a no if no job ended since on its partition's nodes.
    fn memo_holds(&self, demand: &Demand, version: u64, fits: bool) -> bool {
        if fits {
            version >= self.last_start
        } else {
            let slot = if self.partition_member.is_empty() {
                0
            } else {
                demand.partition as usize
            };
            self.last_end.get(slot).is_some_and(|&end| version >= end)
        }
    }

    /// Whether a change on the nodes of the partitions `touched` may change what a demand
    /// of partition `partition` finds (always, on a pool without partitions).
    fn affected_by(&self, touched: PartitionSet) -> impl Fn(u32) -> bool + use<> {
        let partitioned = !self.partition_member.is_empty();
        move |partition| !partitioned || touched.may_hold(partition)
    }

    /// Counts a change that only adds to what is free on nodes of the partitions `touched` (a
    /// job's end, a node back in service): a demand that fitted still does, and one that did
    /// not may now fit only on those partitions, whose misfits and "does not fit" memos are
    /// dropped.
    fn added_on(&mut self, touched: PartitionSet) {
        let affected = self.affected_by(touched);
        for (known, &partition) in self
            .misfits
            .get_mut()
            .iter_mut()
            .zip(&self.place_partitions)
        {
            if affected(partition) {
                known.clear();
            }
        }
        self.version += 1;
        for (p, last) in self.last_end.iter_mut().enumerate() {
            if affected(p as u32) {
                *last = self.version;
            }
        }
    }

    /// Frees a job's nodes, and returns what of it stays apart on nodes out of service
    /// ([`NodePool::set_out_of_service`]): not free until they come back.
    pub(crate) fn release(&mut self, id: JobId) -> Amounts {
        self.demands.remove(&id);
        let mut parked = Amounts::default();
        if let Some(Held {
            shares, partitions, ..
        }) = self.held.remove(&id)
        {
            self.added_on(partitions);
            for (n, share) in shares {
                let i = n as usize;
                if self.out[i] {
                    self.parked[i] = self.parked[i].plus(&share);
                    parked = parked.plus(&share);
                } else {
                    self.free[i] = self.free[i].plus(&share);
                    self.update_trees(n);
                }
            }
        }
        parked
    }

    /// EASY's shadow for job `id` (waiting, not fitting now): releasing the running jobs in
    /// `releases` order (expected end, job, and what it gives back: [`Release`]; its nodes the
    /// pool knows, asked only for jobs on the job's partition's nodes) until the job fits on
    /// the nodes and machine-wide (`free` now), the release time of the last one, the nodes it
    /// would get then, and what is left beyond it. `None` if it never fits (never, for a job
    /// the pool accepted: every node comes back).
    pub(crate) fn shadow(
        &self,
        id: JobId,
        needed: Resources,
        free: Resources,
        releases: impl Iterator<Item = (Time, JobId, Release)>,
    ) -> Option<NodeShadow> {
        let demand = self.demands.get(&id)?;
        let need = demand.per_node();
        // What each node has free as the jobs are released: the scratch's amounts where its
        // stamp is this shadow's, what is free now elsewhere.
        let mut scratch = self.scratch.borrow_mut();
        let (stamp, slots) = &mut *scratch;
        *stamp += 1;
        let stamp = *stamp;
        slots.resize(self.free.len(), (0, Amounts::default()));
        let available = |slots: &[(u64, Amounts)], n: usize| {
            if slots[n].0 == stamp {
                slots[n].1
            } else {
                self.free[n]
            }
        };
        let mut machine = WideSum::of(&free);
        let member = self.partition_member.get(demand.partition as usize);
        // Whether node `n` holds the job with `amounts` free, by the test of `choose`.
        let fits_with = |n: usize, amounts: &Amounts| {
            if demand.exclusive {
                *amounts == self.capacity[n] && need.fits_in(&self.capacity[n])
            } else {
                need.fits_in(amounts)
            }
        };
        // The nodes the job may use that hold it: releases only add to what is free, so a node
        // that holds it holds it after every later release too. The first of them now (as many
        // as it needs, at most: then it needs no more), and those that come to hold it as jobs
        // are released (each once).
        let mut now = Vec::new();
        let wanted = demand.nodes as usize;
        self.choose(
            demand,
            |n| self.free[n as usize],
            |n| self.free[n as usize] == self.capacity[n as usize],
            &mut now,
        );
        let mut came = Vec::new();
        for (end, job, release) in releases {
            machine.add(&release.holds);
            // A job on none of the partition's nodes changes only what is free machine-wide.
            let on_nodes = member.is_none() || release.partitions.may_hold(demand.partition);
            let held = if on_nodes { self.held.get(&job) } else { None };
            for &(n, share) in held.map_or(&[][..], |h| h.shares.as_slice()) {
                // Only the nodes the job may use are asked about.
                // Nor nodes out of service: no plan counts on them coming back (Slurm's
                // backfilling leaves down and drained nodes out, `avail_node_bitmap`).
                let i = n as usize;
                if !member.is_none_or(|m| m[i]) || !self.eligible(n, demand) || self.out[i] {
                    continue;
                }
                let was = available(slots, i);
                let then = was.plus(&share);
                slots[i] = (stamp, then);
                if !fits_with(i, &was) && fits_with(i, &then) {
                    came.push(n);
                }
            }
            if wanted == 0 || now.len() + came.len() < wanted || !machine.covers(&needed) {
                continue;
            }
            // The first nodes in allocation order that hold it: of those that did now, and of
            // those that came to (which did not hold it now).
            let tree = self.tree_of(demand.partition);
            let leaf = |n: &u32| tree.leaf_of[*n as usize];
            came.sort_unstable_by_key(leaf);
            let mut chosen = Vec::with_capacity(wanted);
            let (mut a, mut b) = (now.iter().peekable(), came.iter().peekable());
            while chosen.len() < wanted {
                let next = match (a.peek(), b.peek()) {
                    (Some(x), Some(y)) if leaf(x) < leaf(y) => a.next(),
                    (Some(_), Some(_)) => b.next(),
                    (Some(_), None) => a.next(),
                    (None, _) => b.next(),
                };
                match next {
                    Some(&n) => chosen.push(n),
                    None => break,
                }
            }
            return Some(self.shadow_on(
                demand,
                &chosen,
                |n| available(slots, n as usize),
                needed,
                &machine,
                (end, job),
            ));
        }
        None
    }

    /// The shadow at `released_up_to`'s time of a job of `demand` (holding `needed`
    /// machine-wide) reserved on `nodes`, whose free amounts then are `available`, with
    /// `machine` free machine-wide then. Each reserved node keeps what the fit test asks of
    /// it (the larger share, or the whole node): then the job fits there at the shadow time
    /// by that same test.
    fn shadow_on(
        &self,
        demand: &Demand,
        nodes: &[u32],
        available: impl Fn(u32) -> Amounts,
        needed: Resources,
        machine: &WideSum,
        released_up_to: (Time, JobId),
    ) -> NodeShadow {
        let need = demand.per_node();
        let mut reserved = Vec::with_capacity(nodes.len());
        let mut total = Amounts::default();
        for (n, share) in self.shares(demand, nodes) {
            let kept = if demand.exclusive { share } else { need };
            reserved.push((n, available(n).minus(&kept)));
            total = total.plus(&share);
        }
        reserved.sort_unstable_by_key(|&(n, _)| n);
        let held = self.held_resources(total, needed.extra);
        NodeShadow {
            time: released_up_to.0,
            extra: machine.clamped().minus(&held),
            reserved,
            released_up_to,
            memo: std::cell::RefCell::new((self.version, HashMap::default())),
        }
    }
}

impl NodePool {
    /// [`NodePool::shadow`] on a machine with maintenance windows on nodes: the earliest
    /// instant from `now` at which job `id` fits on nodes of which none is in a window over
    /// its run (`closed(n, t)`: whether node `n` is, for a start at `t`), and machine-wide, as
    /// the running jobs are released (`releases`, by expected end; one before `now` counts
    /// now) and the nodes out of service for a window alone come back at its end
    /// (`returning`, by node, with that end), with what they would have free then and the
    /// shares their jobs give back (at the later of the job's end and the node's return).
    /// Besides those instants, each window's end (`window_ends`) is one: a job that reaches
    /// into a window from every earlier instant may fit from its end. Other nodes out of
    /// service never come back, as in [`NodePool::shadow`]. `None` if it never fits so.
    ///
    /// A plain walk over the instants something comes back, each a scan of the partition's
    /// nodes: a shadow with windows is worked out far less often than a fit is tested.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn shadow_around_windows(
        &self,
        id: JobId,
        needed: Resources,
        free: Resources,
        releases: impl Iterator<Item = (Time, JobId, Release)>,
        now: Time,
        returning: &[(u32, Time)],
        window_ends: impl Iterator<Item = Time>,
        closed: impl Fn(u32, Time) -> bool,
    ) -> Option<NodeShadow> {
        let demand = self.demands.get(&id)?;
        let back_at = |n: u32| {
            returning
                .binary_search_by_key(&n, |&(node, _)| node)
                .ok()
                .map(|i| returning[i].1)
        };
        // What comes back when: on the nodes (time, node, amounts) and machine-wide.
        let mut on_nodes: Vec<(Time, u32, Amounts)> = Vec::new();
        let mut wide: Vec<(Time, Resources)> = Vec::new();
        for (end, job, release) in releases {
            let end = end.max(now);
            wide.push((end, release.holds));
            for &(n, share) in self.held.get(&job).map_or(&[][..], |h| h.shares.as_slice()) {
                if !self.out[n as usize] {
                    on_nodes.push((end, n, share));
                } else if let Some(back) = back_at(n) {
                    on_nodes.push((end.max(back), n, share));
                }
            }
        }
        for &(n, back) in returning {
            let parked = self.parked_of(n);
            on_nodes.push((back.max(now), n, parked));
            wide.push((back.max(now), self.as_resources(parked)));
        }
        on_nodes.sort_by_key(|c| c.0);
        wide.sort_by_key(|c| c.0);
        let mut instants: Vec<Time> = std::iter::once(now)
            .chain(on_nodes.iter().map(|c| c.0))
            .chain(wide.iter().map(|c| c.0))
            .chain(window_ends.map(|t| t.max(now)))
            .collect();
        instants.sort_unstable();
        instants.dedup();
        let mut available = self.free.clone();
        let mut machine = WideSum::of(&free);
        let (mut node_at, mut wide_at) = (0, 0);
        let mut nodes = Vec::with_capacity(demand.nodes as usize);
        for t in instants {
            while let Some(&(when, n, amounts)) = on_nodes.get(node_at)
                && when <= t
            {
                available[n as usize] = available[n as usize].plus(&amounts);
                node_at += 1;
            }
            while let Some((when, amounts)) = wide.get(wide_at)
                && *when <= t
            {
                machine.add(amounts);
                wide_at += 1;
            }
            if !machine.covers(&needed) {
                continue;
            }
            let found = self.choose_by_scan(
                demand,
                |n| {
                    if closed(n, t) {
                        Amounts::default()
                    } else {
                        available[n as usize]
                    }
                },
                |n| !closed(n, t) && available[n as usize] == self.capacity[n as usize],
                &mut nodes,
            );
            if !found {
                continue;
            }
            return Some(self.shadow_on(
                demand,
                &nodes,
                |n| available[n as usize],
                needed,
                &machine,
                (t, JobId(u32::MAX)),
            ));
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    impl NodePool {
        /// What running job `id` gives back, as the cluster's index records it.
        fn release_of(&self, id: JobId) -> Release {
            Release {
                holds: self.held.get(&id).map_or(Resources::default(), |h| h.total),
                partitions: self.partitions_held(id),
            }
        }
    }

    /// Two CPU nodes of 8 cores and 32 GiB, two GPU nodes of 16 cores, 64 GiB and 4 a100;
    /// partitions `cpu` (number 0: the CPU nodes, default) and `gpu` (1: the GPU nodes).
    fn spec() -> PoolSpec {
        PoolSpec {
            types: vec![
                NodeType {
                    name: "c".into(),
                    capacity: Amounts {
                        cpus: 8,
                        memory: 32 * 1024,
                        gpus: 0,
                    },
                    gpu_type: 0,
                    features: 0b01,
                    weight: 1,
                },
                NodeType {
                    name: "g".into(),
                    capacity: Amounts {
                        cpus: 16,
                        memory: 64 * 1024,
                        gpus: 4,
                    },
                    gpu_type: 1,
                    features: 0b10,
                    weight: 10,
                },
            ],
            nodes: vec![
                ("c1".into(), 0),
                ("c2".into(), 0),
                ("g1".into(), 1),
                ("g2".into(), 1),
            ],
            gpu_types: vec!["a100".into()],
            features: vec!["cpu".into(), "gpu".into()],
            partitions: vec![
                PoolPartition {
                    name: "cpu".into(),
                    number: 0,
                    nodes: vec![0, 1],
                    exclusive: false,
                    max_nodes: 0,
                    default_memory_per_cpu: 1024,
                    default: true,
                },
                PoolPartition {
                    name: "gpu".into(),
                    number: 1,
                    nodes: vec![2, 3],
                    exclusive: false,
                    max_nodes: 0,
                    default_memory_per_cpu: 0,
                    default: false,
                },
            ],
            memory_kind: Some(0),
            gpu_kind: Some(1),
        }
    }

    fn job(id: u32, partition: i64, cpus: u32, memory: u32, gpus: u32, shape: Shape) -> JobRequest {
        JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            id: JobId(id),
            submit: 0,
            processors: cpus,
            extra: Extra::NONE.with(0, memory).with(1, gpus),
            estimate: 100,
            user: 1,
            group: 1,
            partition,
            queue: -1,
            shape,
        }
    }

    #[test]
    fn a_job_gets_the_fewest_nodes_that_hold_it_and_each_its_share() {
        let mut pool = NodePool::new(spec()).unwrap();
        // 12 cores do not fit on one CPU node: two nodes of 6.
        let j = job(0, 0, 12, 0, 0, Shape::ANY);
        pool.submit(&j).unwrap();
        assert!(pool.fits(JobId(0)));
        let held = pool.allocate(JobId(0), j.extra, None);
        // DefMemPerCPU 1024 MiB: 12 GiB in all.
        assert_eq!(held.processors, 12);
        assert_eq!(held.extra.get(0), 12 * 1024);
        assert_eq!(
            pool.allocation(JobId(0)).unwrap(),
            &[
                (
                    0,
                    Amounts {
                        cpus: 6,
                        memory: 6 * 1024,
                        gpus: 0
                    }
                ),
                (
                    1,
                    Amounts {
                        cpus: 6,
                        memory: 6 * 1024,
                        gpus: 0
                    }
                )
            ][..]
        );
        // 5 cores are left on each: a job of 6 on one node waits, one of 5 fits.
        pool.submit(&job(1, 0, 6, 0, 0, Shape::ANY)).unwrap();
        assert!(!pool.fits(JobId(1)));
        pool.submit(&job(
            2,
            0,
            2,
            0,
            0,
            Shape {
                nodes: 2,
                ..Shape::ANY
            },
        ))
        .unwrap();
        assert!(pool.fits(JobId(2)));
        pool.release(JobId(0));
        assert!(pool.fits(JobId(1)));
        assert_eq!(pool.free(), pool.capacity());
    }

    #[test]
    fn gpus_memory_types_and_features_must_fit_on_the_node() {
        let mut pool = NodePool::new(spec()).unwrap();
        // Six GPUs: two GPU nodes, three each.
        let a = job(0, 1, 2, 1024, 6, Shape::ANY);
        pool.submit(&a).unwrap();
        pool.allocate(JobId(0), a.extra, None);
        // One GPU left on each: a job of two GPUs on one node waits though CPUs are free.
        pool.submit(&job(
            1,
            1,
            1,
            1024,
            2,
            Shape {
                nodes: 1,
                ..Shape::ANY
            },
        ))
        .unwrap();
        assert!(!pool.fits(JobId(1)));
        // Memory: 70 GiB on one node never fits a 64 GiB node (held), 60 GiB does.
        assert_eq!(
            pool.resolve(&job(
                2,
                1,
                1,
                70 * 1024,
                0,
                Shape {
                    nodes: 1,
                    ..Shape::ANY
                }
            )),
            Err(NeverFits::Resources)
        );
        // A GPU type or feature no node of the partition has.
        assert_eq!(
            pool.resolve(&job(
                3,
                1,
                1,
                0,
                1,
                Shape {
                    gpu_type: 2,
                    ..Shape::ANY
                }
            )),
            Err(NeverFits::Constraint)
        );
        assert_eq!(
            pool.resolve(&job(
                4,
                0,
                1,
                0,
                0,
                Shape {
                    features: 0b10,
                    ..Shape::ANY
                }
            )),
            Err(NeverFits::Constraint)
        );
        // Nine GPUs: more than the two nodes hold.
        assert_eq!(
            pool.resolve(&job(5, 1, 1, 0, 9, Shape::ANY)),
            Err(NeverFits::Resources)
        );
        // Three nodes of a two-node partition.
        assert_eq!(
            pool.resolve(&job(
                6,
                1,
                3,
                0,
                0,
                Shape {
                    nodes: 3,
                    ..Shape::ANY
                }
            )),
            Err(NeverFits::Nodes)
        );
        // A job of an unknown partition runs on the default one (cpu): no GPU there.
        assert_eq!(
            pool.resolve(&job(7, 9, 1, 0, 1, Shape::ANY)),
            Err(NeverFits::Resources)
        );
    }

    #[test]
    fn whole_nodes_need_idle_nodes_and_hold_all_of_them() {
        let mut pool = NodePool::new(spec()).unwrap();
        let small = job(0, 0, 1, 0, 0, Shape::ANY);
        pool.submit(&small).unwrap();
        pool.allocate(JobId(0), small.extra, None);
        let whole = job(
            1,
            0,
            2,
            0,
            0,
            Shape {
                exclusive: true,
                ..Shape::ANY
            },
        );
        pool.submit(&whole).unwrap();
        assert!(pool.fits(JobId(1)));
        let held = pool.allocate(JobId(1), whole.extra, None);
        assert_eq!(held.processors, 8);
        assert_eq!(pool.allocation(JobId(1)).unwrap()[0].0, 1);
        pool.submit(&job(
            2,
            0,
            1,
            0,
            0,
            Shape {
                exclusive: true,
                ..Shape::ANY
            },
        ))
        .unwrap();
        assert!(!pool.fits(JobId(2)));
    }

    #[test]
    fn the_shadow_is_when_the_job_fits_on_nodes_and_keeps_its_nodes() {
        let mut pool = NodePool::new(spec()).unwrap();
        // Job 0 holds 3 GPUs of g1 until 100, job 1 3 of g2 until 200.
        for (id, end) in [(0u32, 100), (1, 200)] {
            let j = job(
                id,
                1,
                1,
                0,
                3,
                Shape {
                    nodes: 1,
                    ..Shape::ANY
                },
            );
            pool.submit(&j).unwrap();
            pool.allocate(JobId(id), j.extra, None);
            let _ = end;
        }
        let blocked = job(
            2,
            1,
            1,
            0,
            4,
            Shape {
                nodes: 1,
                ..Shape::ANY
            },
        );
        pool.submit(&blocked).unwrap();
        assert!(!pool.fits(JobId(2)));
        let free = Resources {
            processors: 46,
            extra: Extra::NONE.with(0, 192 * 1024).with(1, 2),
        };
        let shadow = pool
            .shadow(
                JobId(2),
                blocked.resources(),
                free,
                [(100, JobId(0)), (200, JobId(1))]
                    .map(|(end, id)| (end, id, pool.release_of(id)))
                    .into_iter(),
            )
            .unwrap();
        // At 100 g1 is free again: the job is reserved there, with nothing left of its GPUs.
        assert_eq!(shadow.time, 100);
        assert_eq!(shadow.reserved.len(), 1);
        assert_eq!(shadow.reserved[0].0, 2);
        assert_eq!(shadow.reserved[0].1.gpus, 0);
        // A one-GPU job outliving the shadow fits on g2 (one free now, one left then) but a
        // job of two does not (g2 has one free now; g1's are reserved).
        let long = job(3, 1, 1, 0, 1, Shape::ANY);
        pool.submit(&long).unwrap();
        assert!(pool.fits_within(JobId(3), &shadow));
        pool.submit(&job(4, 1, 1, 0, 2, Shape::ANY)).unwrap();
        assert!(!pool.fits_within(JobId(4), &shadow));
    }

    /// The shadow of the plain form (before the free trees): every node's amounts at the
    /// shadow time in a copy of the machine, and every node set found by a scan. (time, what is
    /// left machine-wide, each node's amounts then, whether each is reserved.)
    fn shadow_by_scan(
        pool: &NodePool,
        id: JobId,
        needed: Resources,
        free: Resources,
        releases: &[(Time, JobId)],
    ) -> Option<(Time, Resources, Vec<Amounts>, Vec<bool>)> {
        let demand = pool.demands.get(&id)?;
        let mut available = pool.free.clone();
        let mut machine = free;
        let mut chosen = Vec::new();
        for &(end, job) in releases {
            if let Some(held) = pool.held.get(&job) {
                machine = machine.plus(&held.total);
                for &(n, share) in &held.shares {
                    if !pool.out[n as usize] {
                        available[n as usize] = available[n as usize].plus(&share);
                    }
                }
            }
            if !needed.fits_in(&machine) {
                continue;
            }
            let need = demand.per_node();
            let found = pool.choose_by_scan(
                demand,
                |n| available[n as usize],
                |n| available[n as usize] == pool.capacity[n as usize],
                &mut chosen,
            );
            if !found {
                continue;
            }
            let mut reserved = vec![false; available.len()];
            let mut total = Amounts::default();
            for (n, share) in pool.shares(demand, &chosen) {
                let kept = if demand.exclusive { share } else { need };
                available[n as usize] = available[n as usize].minus(&kept);
                reserved[n as usize] = true;
                total = total.plus(&share);
            }
            let held = pool.held_resources(total, needed.extra);
            return Some((end, machine.minus(&held), available, reserved));
        }
        None
    }

    /// A random machine: up to 40 nodes of three types (some with GPUs of two types, features,
    /// weights), in up to three partitions (some exclusive); and random requests.
    fn random_pool() -> impl proptest::strategy::Strategy<Value = (PoolSpec, Vec<JobRequest>)> {
        use proptest::prelude::*;
        let node_type = (
            1u32..=16,
            1u32..=8,
            prop_oneof![Just(0u32), 1u32..=4],
            1u8..=2,
            0u32..=3,
            0u32..=2,
        );
        (
            proptest::collection::vec(node_type, 1..=3),
            proptest::collection::vec(0u16..3, 1..=40),
            proptest::collection::vec(
                (
                    proptest::collection::vec(any::<bool>(), 40),
                    any::<bool>(),
                    0u32..=2,
                ),
                0..=3,
            ),
            proptest::collection::vec(
                (
                    0i64..=3,
                    1u32..=40,
                    0u32..=40,
                    prop_oneof![3 => Just(0u32), 1 => 1u32..=6],
                    0u16..=3,
                    0u8..=2,
                    0u32..=3,
                    prop_oneof![5 => Just(false), 1 => Just(true)],
                ),
                1..=60,
            ),
        )
            .prop_map(|(types, nodes, partitions, requests)| {
                let mut spec = PoolSpec {
                    gpu_types: vec!["a100".into(), "v100".into()],
                    features: vec!["fast".into(), "ib".into()],
                    memory_kind: Some(0),
                    gpu_kind: Some(1),
                    ..PoolSpec::default()
                };
                for (i, &(cpus, gib, gpus, gpu_type, features, weight)) in types.iter().enumerate()
                {
                    spec.types.push(NodeType {
                        name: format!("t{i}"),
                        capacity: Amounts {
                            cpus,
                            memory: gib * 1024,
                            gpus,
                        },
                        gpu_type: if gpus > 0 { gpu_type } else { 0 },
                        features,
                        weight,
                    });
                }
                for (k, &t) in nodes.iter().enumerate() {
                    spec.nodes.push((format!("n{k}"), t % types.len() as u16));
                }
                for (i, (members, exclusive, default_memory)) in partitions.into_iter().enumerate()
                {
                    let mut members: Vec<u32> = (0..spec.nodes.len() as u32)
                        .filter(|&n| members[n as usize])
                        .collect();
                    if members.is_empty() {
                        members.push(0);
                    }
                    spec.partitions.push(PoolPartition {
                        name: format!("p{i}"),
                        number: i as i64,
                        nodes: members,
                        exclusive,
                        max_nodes: 0,
                        default_memory_per_cpu: default_memory * 1024,
                        default: i == 0,
                    });
                }
                let requests = requests
                    .into_iter()
                    .enumerate()
                    .map(
                        |(
                            id,
                            (partition, cpus, gib, gpus, nodes, gpu_type, features, exclusive),
                        )| {
                            job(
                                id as u32,
                                partition,
                                cpus,
                                gib * 512,
                                gpus,
                                Shape {
                                    nodes,
                                    gpu_type,
                                    exclusive,
                                    features,
                                },
                            )
                        },
                    )
                    .collect();
                (spec, requests)
            })
    }

    proptest::proptest! {
        /// As jobs start (on the nodes the trees find) and end, the free trees' maxima are
        /// those of a scan of every node, every request finds the nodes a scan finds, now and
        /// within a shadow, and the shadow is the plain form's: the same time, what is left
        /// machine-wide, reserved nodes, and what each node can give a job that outlives it.
        /// Nodes leave service and come back between the steps: no job starts on one out of
        /// service, and each node's free, parked and held amounts add up to what it has.
        #[test]
        fn the_free_trees_agree_with_a_scan_of_the_nodes(
            (spec, requests) in random_pool(),
            ends in proptest::collection::vec(0usize..60, 0..60),
            outs in proptest::collection::vec((0u32..40, 0u8..4), 0..60),
        ) {
            let mut pool = NodePool::new(spec).unwrap();
            let mut waiting: Vec<JobRequest> = requests.into_iter().filter(|j| pool.submit(j).is_ok()).collect();
            let mut running: Vec<JobRequest> = Vec::new();
            let mut ends = ends.into_iter();
            let mut outs = outs.into_iter();
            for step in 0..200 {
                // A node leaves service or comes back (one step in four does nothing).
                if let Some((n, what)) = outs.next() && what < 3 {
                    let n = n % pool.capacity.len() as u32;
                    let (was, was_out) = (pool.free[n as usize], pool.out[n as usize]);
                    let moved = pool.set_out_of_service(n, what < 2);
                    // leaving takes what was free; coming back gives what is free now
                    let expected = match (was_out, what < 2) {
                        (false, true) => was,
                        (true, false) => pool.free[n as usize],
                        _ => Amounts::default(),
                    };
                    proptest::prop_assert_eq!(moved, expected);
                }
                for n in 0..pool.capacity.len() {
                    let held = running.iter().filter_map(|j| pool.held[&j.id].shares.iter().find(|s| s.0 as usize == n)).fold(Amounts::default(), |a, s| a.plus(&s.1));
                    proptest::prop_assert_eq!(pool.free[n].plus(&pool.parked[n]).plus(&held), pool.capacity[n], "node {}", n);
                    if pool.out[n] {
                        proptest::prop_assert_eq!(pool.free[n], Amounts::default());
                    }
                }
                // The trees' maxima.
                for tree in &pool.trees {
                    let mut free = Amounts::default();
                    let mut idle = Amounts::default();
                    let mut gpu = Amounts::default();
                    for &n in &tree.nodes {
                        let f = pool.free[n as usize];
                        free = free.max(&f);
                        if f == pool.capacity[n as usize] {
                            idle = idle.max(&f);
                        }
                        if f.gpus > 0 {
                            gpu = gpu.max(&f);
                        }
                    }
                    proptest::prop_assert_eq!((tree.free[1], tree.idle[1], tree.gpu[1]), (free, idle, gpu));
                }
                // Each waiting request: its nodes now, by the trees and by a scan.
                let free_now = |pool: &NodePool, n: u32| pool.free[n as usize];
                for j in &waiting {
                    let demand = pool.demands[&j.id];
                    let (mut a, mut b) = (Vec::new(), Vec::new());
                    let found = pool.choose(&demand, |n| free_now(&pool, n), |n| free_now(&pool, n) == pool.capacity[n as usize], &mut a);
                    let scanned = pool.choose_by_scan(&demand, |n| free_now(&pool, n), |n| free_now(&pool, n) == pool.capacity[n as usize], &mut b);
                    proptest::prop_assert_eq!(found, scanned);
                    if found {
                        proptest::prop_assert_eq!(&a, &b);
                    }
                    proptest::prop_assert_eq!(pool.fits(j.id), scanned);
                }
                // The first waiting request's shadow, releasing the running jobs in turn.
                if let Some(blocked) = waiting.first() {
                    let releases: Vec<(Time, JobId)> = running.iter().enumerate().map(|(k, j)| (k as Time, j.id)).collect();
                    let machine = pool.spec.totals();
                    let used = running.iter().fold(Resources::default(), |u, j| u.plus(&pool.held[&j.id].total));
                    let free = machine.minus(&used);
                    let plain = shadow_by_scan(&pool, blocked.id, blocked.resources(), free, &releases);
                    let shadow = pool.shadow(blocked.id, blocked.resources(), free, releases.iter().map(|&(end, id)| (end, id, pool.release_of(id))));
                    proptest::prop_assert_eq!(plain.is_some(), shadow.is_some());
                    if let (Some((time, extra, nodes, reserved)), Some(shadow)) = (plain, shadow) {
                        proptest::prop_assert_eq!(time, shadow.time);
                        proptest::prop_assert_eq!(extra, shadow.extra);
                        for n in 0..nodes.len() as u32 {
                            let i = n as usize;
                            proptest::prop_assert_eq!(reserved[i], shadow.reserved_left(n).is_some());
                            proptest::prop_assert_eq!(pool.free[i].min(&nodes[i]), pool.free_within(&shadow, n));
                            let whole = !reserved[i] && pool.free[i] == pool.capacity[i] && nodes[i] == pool.capacity[i];
                            proptest::prop_assert_eq!(whole, pool.whole_within(&shadow, n));
                        }
                        for j in &waiting {
                            let demand = pool.demands[&j.id];
                            let plain = pool.choose_by_scan(
                                &demand,
                                |n| pool.free[n as usize].min(&nodes[n as usize]),
                                |n| !reserved[n as usize] && pool.free[n as usize] == pool.capacity[n as usize] && nodes[n as usize] == pool.capacity[n as usize],
                                &mut Vec::new(),
                            );
                            proptest::prop_assert_eq!(pool.fits_within(j.id, &shadow), plain);
                        }
                    }
                }
                // Start the first waiting job that fits, or end a running one.
                match (ends.next(), waiting.iter().position(|j| pool.fits(j.id))) {
                    (Some(k), _) if !running.is_empty() && (k % 3 == 0 || waiting.is_empty()) => {
                        let j = running.remove(k % running.len());
                        pool.release(j.id);
                    }
                    (_, Some(i)) => {
                        let j = waiting.remove(i);
                        pool.allocate(j.id, j.extra, None);
                        for &(n, _) in pool.held[&j.id].shares.iter() {
                            proptest::prop_assert!(!pool.out[n as usize], "job {:?} started on node {}, out of service", j.id, n);
                        }
                        running.push(j);
                    }
                    (Some(k), None) if !running.is_empty() => {
                        let j = running.remove(k % running.len());
                        pool.release(j.id);
                    }
                    _ => break,
                }
                let _ = step;
            }
        }
    }
}
