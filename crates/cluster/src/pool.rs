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

/// The free amounts of every node at EASY's shadow time beyond what the reserved job will hold
/// there, and what is free machine-wide then beyond it (for resources the nodes do not hold).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NodeShadow {
    /// The shadow time.
    pub(crate) time: Time,
    /// Free at the shadow time beyond the reserved job, machine-wide.
    pub(crate) extra: Resources,
    /// Free on each node at the shadow time beyond the reserved job's share.
    pub(crate) nodes: Vec<Amounts>,
    /// Nodes the reserved job takes (no job starting now that outlives the shadow may share
    /// them when it takes whole nodes, nor start on them when it is exclusive).
    pub(crate) reserved: Vec<bool>,
    /// Whether each demand asked about fits within the shadow, at the pool's version
    /// ([`NodePool::version`]): remembered until a job starts or ends.
    memo: std::cell::RefCell<(u64, HashMap<Demand, bool>)>,
}

impl NodeShadow {
    /// A view of the nodes at `time`: each node's `nodes` amounts (a job fits within it where
    /// it fits both the free amounts now and these), `reserved` nodes usable by no job that
    /// takes whole nodes, and `extra` machine-wide.
    pub(crate) fn view(
        time: Time,
        extra: Resources,
        nodes: Vec<Amounts>,
        reserved: Vec<bool>,
    ) -> NodeShadow {
        NodeShadow {
            time,
            extra,
            nodes,
            reserved,
            memo: std::cell::RefCell::new((u64::MAX, HashMap::default())),
        }
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
    /// What each node has free.
    free: Vec<Amounts>,
    /// What each running job holds, node by node.
    held: HashMap<JobId, Vec<(u32, Amounts)>>,
    /// Each waiting or running job's demand.
    demands: HashMap<JobId, Demand>,
    /// Whether each demand asked about fits the free amounts now, remembered until a job
    /// starts or ends (many waiting jobs ask alike: a queue of one-GPU jobs asks once).
    fit_memo: std::cell::RefCell<HashMap<Demand, bool>>,
    /// The most free on one node of each partition (and of all nodes, last), amount by amount,
    /// worked out when first asked after a job starts or ends: a job that needs more of an
    /// amount on a node than any node has free cannot fit.
    most_free: std::cell::RefCell<Option<Vec<Amounts>>>,
    /// Counts every start and end.
    version: u64,
    /// The demands found not to fit since the last start or end, by where they may run
    /// (partition, GPU type, features, whole nodes): (what a node must hold, nodes). A demand
    /// needing at least as much of every amount on at least as many nodes cannot fit either.
    misfits: std::cell::RefCell<HashMap<Place, Vec<(Amounts, u32)>>>,
    /// The demands of the requests seen (by partition number, processors, other amounts and
    /// shape), at most [`RESOLVED_KEPT`].
    resolved: HashMap<(i64, u32, Extra, Shape), Result<Demand, NeverFits>>,
}

/// Where a demand may run: its partition, GPU type, features, and whether it takes whole nodes.
type Place = (u32, u8, u32, bool);

/// How many distinct requests a pool remembers the demand of.
const RESOLVED_KEPT: usize = 1 << 16;

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
        let partition_nodes = spec
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
        Ok(NodePool {
            free: capacity.clone(),
            capacity,
            traits,
            all,
            partition_nodes,
            partition_member,
            default_partition,
            held: HashMap::default(),
            demands: HashMap::default(),
            fit_memo: std::cell::RefCell::new(HashMap::default()),
            most_free: std::cell::RefCell::new(None),
            version: 0,
            misfits: std::cell::RefCell::new(HashMap::default()),
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

    /// The nodes a running job holds, and what it holds on each.
    pub fn allocation(&self, id: JobId) -> Option<&[(u32, Amounts)]> {
        self.held.get(&id).map(Vec::as_slice)
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
                let resolved = self.resolve(job);
                if self.resolved.len() < RESOLVED_KEPT {
                    self.resolved.insert(key, resolved);
                }
                resolved
            }
        }?;
        self.demands.insert(job.id, demand);
        Ok(())
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
    pub(crate) fn choose(
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

    /// Whether job `id` fits on the nodes' free amounts now.
    pub(crate) fn fits(&self, id: JobId) -> bool {
        let Some(demand) = self.demands.get(&id) else {
            return false;
        };
        if let Some(&known) = self.fit_memo.borrow().get(demand) {
            return known;
        }
        let need = demand.per_node();
        if !need.fits_in(&self.most_free_in(demand.partition)) {
            self.fit_memo.borrow_mut().insert(*demand, false);
            return false;
        }
        let place = (
            demand.partition,
            demand.gpu_type,
            demand.features,
            demand.exclusive,
        );
        if let Some(known) = self.misfits.borrow().get(&place)
            && known
                .iter()
                .any(|(n, count)| n.fits_in(&need) && *count <= demand.nodes)
        {
            self.fit_memo.borrow_mut().insert(*demand, false);
            return false;
        }
        let mut scratch = Vec::with_capacity(demand.nodes as usize);
        let fits = self.choose(
            demand,
            |n| self.free[n as usize],
            |n| self.free[n as usize] == self.capacity[n as usize],
            &mut scratch,
        );
        self.fit_memo.borrow_mut().insert(*demand, fits);
        if !fits {
            let mut misfits = self.misfits.borrow_mut();
            let known = misfits.entry(place).or_default();
            if known.len() < 16 {
                known.push((need, demand.nodes));
            }
        }
        fits
    }

    /// The most free on one node of `partition` (`u32::MAX`: of every node), amount by amount.
    fn most_free_in(&self, partition: u32) -> Amounts {
        let mut cached = self.most_free.borrow_mut();
        let most = cached.get_or_insert_with(|| {
            let most = |nodes: &[u32]| {
                nodes.iter().fold(Amounts::default(), |m, &n| {
                    let f = self.free[n as usize];
                    Amounts {
                        cpus: m.cpus.max(f.cpus),
                        memory: m.memory.max(f.memory),
                        gpus: m.gpus.max(f.gpus),
                    }
                })
            };
            let mut all: Vec<Amounts> = self.partition_nodes.iter().map(|p| most(p)).collect();
            all.push(most(&self.all));
            all
        });
        let index = (partition as usize).min(most.len() - 1);
        most[index]
    }

    /// What node `n` has free now and still at `shadow`'s time beyond the reserved job.
    fn free_within(&self, shadow: &NodeShadow, n: u32) -> Amounts {
        self.free[n as usize].min(&shadow.nodes[n as usize])
    }

    /// Whether node `n` is idle now, not reserved and still whole at `shadow`'s time.
    fn whole_within(&self, shadow: &NodeShadow, n: u32) -> bool {
        let n = n as usize;
        !shadow.reserved[n]
            && self.free[n] == self.capacity[n]
            && shadow.nodes[n] == self.capacity[n]
    }

    /// Whether job `id` fits now within `shadow`'s amounts too (it outlives the shadow time).
    pub(crate) fn fits_within(&self, id: JobId, shadow: &NodeShadow) -> bool {
        let Some(demand) = self.demands.get(&id) else {
            return false;
        };
        {
            let mut memo = shadow.memo.borrow_mut();
            if memo.0 != self.version {
                *memo = (self.version, HashMap::default());
            }
            if let Some(&known) = memo.1.get(demand) {
                return known;
            }
        }
        let mut scratch = Vec::with_capacity(demand.nodes as usize);
        let fits = self.choose(
            demand,
            |n| self.free_within(shadow, n),
            |n| self.whole_within(shadow, n),
            &mut scratch,
        );
        shadow.memo.borrow_mut().1.insert(*demand, fits);
        fits
    }

    /// What job `id` holds on `nodes` (chosen by `choose`).
    fn shares(&self, demand: &Demand, nodes: &[u32]) -> Vec<(u32, Amounts)> {
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
        let mut chosen = Vec::with_capacity(demand.nodes as usize);
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
            return Resources::default();
        }
        self.fit_memo.get_mut().clear();
        self.misfits.get_mut().clear();
        *self.most_free.get_mut() = None;
        self.version += 1;
        let shares = self.shares(&demand, &chosen);
        let mut total = Amounts::default();
        for &(n, share) in &shares {
            let n = n as usize;
            self.free[n] = self.free[n].minus(&share);
            total = total.plus(&share);
        }
        if let Some(s) = shadow {
            for &(n, share) in &shares {
                s.nodes[n as usize] = s.nodes[n as usize].minus(&share);
            }
        }
        self.held.insert(id, shares);
        self.held_resources(total, extra)
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

    /// Frees a job's nodes.
    pub(crate) fn release(&mut self, id: JobId) {
        self.demands.remove(&id);
        if let Some(shares) = self.held.remove(&id) {
            self.fit_memo.get_mut().clear();
            self.misfits.get_mut().clear();
            *self.most_free.get_mut() = None;
            self.version += 1;
            for (n, share) in shares {
                let n = n as usize;
                self.free[n] = self.free[n].plus(&share);
            }
        }
    }

    /// EASY's shadow for job `id` (waiting, not fitting now): releasing the running jobs in
    /// `releases` order (expected end, job, what it holds machine-wide) until the job fits on
    /// the nodes and machine-wide (`free` now), the release time of the last one, the nodes it
    /// would get then, and what is left beyond it. `None` if it never fits (never, for a job
    /// the pool accepted: every node comes back).
    pub(crate) fn shadow(
        &self,
        id: JobId,
        needed: Resources,
        free: Resources,
        releases: impl Iterator<Item = (Time, JobId, Resources)>,
    ) -> Option<NodeShadow> {
        let demand = self.demands.get(&id)?;
        let mut available = self.free.clone();
        let mut machine = free;
        let mut chosen = Vec::new();
        let member = self.partition_member.get(demand.partition as usize);
        // Whether a node the job may use changed since its nodes were last found wanting: a
        // release elsewhere cannot make it fit.
        let mut changed = true;
        for (end, job, holds) in releases {
            machine = machine.plus(&holds);
            for &(n, share) in self.held.get(&job).map(Vec::as_slice).unwrap_or_default() {
                changed |= member.is_none_or(|m| m[n as usize]) && self.eligible(n, demand);
                let n = n as usize;
                available[n] = available[n].plus(&share);
            }
            if !needed.fits_in(&machine) || !changed {
                continue;
            }
            changed = false;
            let need = demand.per_node();
            let found = self.choose(
                demand,
                |n| available[n as usize],
                |n| available[n as usize] == self.capacity[n as usize],
                &mut chosen,
            );
            if !found {
                continue;
            }
            // Each reserved node keeps what the fit test asks of it (the larger share, or the
            // whole node): then the job fits there at the shadow time by that same test.
            let mut reserved = vec![false; available.len()];
            let mut total = Amounts::default();
            for (n, share) in self.shares(demand, &chosen) {
                let kept = if demand.exclusive { share } else { need };
                available[n as usize] = available[n as usize].minus(&kept);
                reserved[n as usize] = true;
                total = total.plus(&share);
            }
            let held = self.held_resources(total, needed.extra);
            return Some(NodeShadow {
                time: end,
                extra: machine.minus(&held),
                nodes: available,
                reserved,
                memo: std::cell::RefCell::new((self.version, HashMap::default())),
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let holds = Resources {
            processors: 1,
            extra: Extra::NONE.with(1, 3),
        };
        let shadow = pool
            .shadow(
                JobId(2),
                blocked.resources(),
                free,
                [(100, JobId(0), holds), (200, JobId(1), holds)].into_iter(),
            )
            .unwrap();
        // At 100 g1 is free again: the job is reserved there, with nothing left of its GPUs.
        assert_eq!(shadow.time, 100);
        assert!(shadow.reserved[2] && !shadow.reserved[3]);
        assert_eq!(shadow.nodes[2].gpus, 0);
        // A one-GPU job outliving the shadow fits on g2 (one free now, one left then) but a
        // job of two does not (g2 has one free now; g1's are reserved).
        let long = job(3, 1, 1, 0, 1, Shape::ANY);
        pool.submit(&long).unwrap();
        assert!(pool.fits_within(JobId(3), &shadow));
        pool.submit(&job(4, 1, 1, 0, 2, Shape::ANY)).unwrap();
        assert!(!pool.fits_within(JobId(4), &shadow));
    }
}
