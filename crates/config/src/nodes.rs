//! A machine of node types as a site describes it (a slurm.conf's `NodeName` and
//! `PartitionName` lines), by name: its node types, nodes and partitions, turned into the
//! cluster's [`cluster::PoolSpec`] for a run, with the tables the trace readers resolve GPU
//! types, features and partitions with.

use cluster::{Amounts, NodeType, PoolPartition, PoolSpec};

use crate::error::{Result, invalid};

/// The TRES name of node memory among a run's resource kinds (MiB).
pub const MEMORY_KIND: &str = "mem";
/// The TRES name of GPUs among a run's resource kinds.
pub const GPU_KIND: &str = "gres/gpu";
/// At most this many distinct node features (a job's constraint is a 32-bit mask).
pub const MAX_FEATURES: usize = 32;
/// At most this many GPU types.
pub const MAX_GPU_TYPES: usize = 254;

/// A kind of node: what each node of it has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeTypeSpec {
    /// Its name (the slurm.conf line's node list, a site file's name).
    pub name: String,
    /// CPUs (cores) per node.
    pub cpus: u32,
    /// Memory per node, MiB (0: none declared).
    pub memory: u32,
    /// GPUs per node.
    pub gpus: u32,
    /// Their type (`None`: untyped).
    pub gpu_type: Option<String>,
    /// The node features (`Features=`).
    pub features: Vec<String>,
    /// Slurm's `Weight` (lower is allocated first; 1 by default).
    pub weight: u32,
}

/// A partition: its nodes and rules.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PartitionSpec {
    /// Its name.
    pub name: String,
    /// Its nodes, by index in [`NodeMachine::nodes`].
    pub nodes: Vec<usize>,
    /// Jobs of no partition run here (`Default=YES`).
    pub default: bool,
    /// Whole nodes only (`OverSubscribe=EXCLUSIVE`, or `select/linear`).
    pub exclusive: bool,
    /// The most nodes a job may have (`MaxNodes`; 0: no limit).
    pub max_nodes: u32,
    /// Memory of a job that asks for none, MiB per CPU (`DefMemPerCPU`; 0: none).
    pub default_memory_per_cpu: u32,
}

/// A machine of node types, by name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeMachine {
    /// The node types.
    pub types: Vec<NodeTypeSpec>,
    /// Every node: its name and the index of its type, in declaration order.
    pub nodes: Vec<(String, usize)>,
    /// The partitions, in declaration order.
    pub partitions: Vec<PartitionSpec>,
    /// Whether memory is scheduled (a consumable resource: Slurm's `CR_*_Memory`).
    pub memory_scheduled: bool,
}

impl NodeMachine {
    /// The GPU types, in order of first appearance.
    pub fn gpu_types(&self) -> Vec<String> {
        let mut types: Vec<String> = Vec::new();
        for t in &self.types {
            if let Some(g) = &t.gpu_type
                && t.gpus > 0
                && !types.contains(g)
            {
                types.push(g.clone());
            }
        }
        types
    }

    /// The node features, in order of first appearance.
    pub fn features(&self) -> Vec<String> {
        let mut features: Vec<String> = Vec::new();
        for t in &self.types {
            for f in &t.features {
                if !features.contains(f) {
                    features.push(f.clone());
                }
            }
        }
        features
    }

    /// The partitions' names, in order: a job's partition number k (1-based, as a sacct dump's
    /// id tables and SWF field 16 number them) is the k-th.
    pub fn partition_names(&self) -> Vec<String> {
        self.partitions.iter().map(|p| p.name.clone()).collect()
    }

    /// The tables a sacct dump's jobs are read with.
    pub fn names(&self) -> sacct::NodeNames {
        sacct::NodeNames {
            gpu_types: self.gpu_types(),
            features: self.features(),
            partitions: self.partition_names(),
        }
    }

    fn total(&self, of: impl Fn(&NodeTypeSpec) -> u32) -> u64 {
        self.nodes
            .iter()
            .map(|&(_, t)| u64::from(self.types.get(t).map_or(0, &of)))
            .sum()
    }

    /// The resource kinds the machine brings (`mem` in MiB if memory is scheduled, `gres/gpu`
    /// if it has GPUs) and its totals, as a run's resources are listed.
    pub fn resources(&self) -> Result<Vec<(String, u32)>> {
        let mut kinds = Vec::new();
        let mut add = |name: &str, total: u64| -> Result<()> {
            let total = u32::try_from(total).map_err(|_| {
                invalid!("the machine's nodes have {total} of {name} in all: more than {} is not modelled", u32::MAX)
            })?;
            kinds.push((name.to_string(), total));
            Ok(())
        };
        let memory = self.total(|t| t.memory);
        if self.memory_scheduled && memory > 0 {
            add(MEMORY_KIND, memory)?;
        }
        let gpus = self.total(|t| t.gpus);
        if gpus > 0 {
            add(GPU_KIND, gpus)?;
        }
        Ok(kinds)
    }

    /// Checks what a run needs: a node, at most [`MAX_FEATURES`] features and
    /// [`MAX_GPU_TYPES`] GPU types, every partition with nodes.
    pub fn check(&self, origin: &str) -> Result<()> {
        if self.nodes.is_empty() {
            return Err(invalid!("{origin}: no node is defined"));
        }
        let features = self.features();
        if features.len() > MAX_FEATURES {
            return Err(invalid!(
                "{origin}: {} node features ({}): at most {MAX_FEATURES} are modelled",
                features.len(),
                features.join(", ")
            ));
        }
        if self.gpu_types().len() > MAX_GPU_TYPES {
            return Err(invalid!(
                "{origin}: more than {MAX_GPU_TYPES} GPU types are not modelled"
            ));
        }
        if let Some(p) = self.partitions.iter().find(|p| p.nodes.is_empty()) {
            return Err(invalid!("{origin}: partition {} has no node", p.name));
        }
        Ok(())
    }

    /// The cluster's machine for a run whose resource kinds are `kinds` (names in the order of
    /// the jobs' amounts: `mem` and `gres/gpu` among them where the machine has them).
    /// Partition k (0-based) is job partition number k + 1.
    pub fn pool_spec(&self, kinds: &[String]) -> PoolSpec {
        let gpu_types = self.gpu_types();
        let features = self.features();
        let types = self
            .types
            .iter()
            .map(|t| NodeType {
                name: t.name.clone(),
                capacity: Amounts {
                    cpus: t.cpus,
                    memory: if self.memory_scheduled { t.memory } else { 0 },
                    gpus: t.gpus,
                },
                gpu_type: t
                    .gpu_type
                    .as_ref()
                    .filter(|_| t.gpus > 0)
                    .and_then(|g| gpu_types.iter().position(|x| x == g))
                    .map_or(0, |i| u8::try_from(i + 1).unwrap_or(u8::MAX)),
                features: t
                    .features
                    .iter()
                    .filter_map(|f| features.iter().position(|x| x == f))
                    .fold(0u32, |mask, bit| mask | (1u32 << bit)),
                weight: t.weight,
            })
            .collect();
        let nodes = self
            .nodes
            .iter()
            .map(|(name, t)| (name.clone(), u16::try_from(*t).unwrap_or(u16::MAX)))
            .collect();
        let partitions = self
            .partitions
            .iter()
            .enumerate()
            .map(|(k, p)| PoolPartition {
                name: p.name.clone(),
                number: k as i64 + 1,
                nodes: p.nodes.iter().map(|&n| n as u32).collect(),
                exclusive: p.exclusive,
                max_nodes: p.max_nodes,
                default_memory_per_cpu: p.default_memory_per_cpu,
                default: p.default,
            })
            .collect();
        PoolSpec {
            types,
            nodes,
            gpu_types,
            features,
            partitions,
            memory_kind: kinds.iter().position(|k| k == MEMORY_KIND),
            gpu_kind: kinds.iter().position(|k| k == GPU_KIND),
        }
    }

    /// One line for reports: "24 nodes of 3 types (2,304 CPUs, 9.0 TiB, 64 GPUs), 3 partitions".
    pub fn description(&self) -> String {
        let cpus = self.total(|t| t.cpus);
        let memory = self.total(|t| t.memory);
        let gpus = self.total(|t| t.gpus);
        let mut parts = vec![format!("{cpus} CPUs")];
        if self.memory_scheduled && memory > 0 {
            parts.push(format!("{:.1} GiB", memory as f64 / 1024.0));
        }
        if gpus > 0 {
            parts.push(format!("{gpus} GPUs"));
        }
        format!(
            "{} nodes of {} type{} ({}), {} partition{}",
            self.nodes.len(),
            self.types.len(),
            if self.types.len() == 1 { "" } else { "s" },
            parts.join(", "),
            self.partitions.len(),
            if self.partitions.len() == 1 { "" } else { "s" },
        )
    }
}
