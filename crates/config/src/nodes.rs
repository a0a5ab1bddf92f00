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
    /// Memory of a job that asks for none, MiB per CPU (`DefMemPerCPU`, the partition's or
    /// else the site's; 0: none).
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

/// An amount of memory as a site file gives it: MiB as a number (`512000`), or a string with a
/// unit (`"500G"`, `"2T"`; K, M, G, T are powers of 1024, as Slurm reads them).
#[derive(
    Debug, Clone, PartialEq, Eq, serde::Deserialize, serde::Serialize, schemars::JsonSchema,
)]
#[serde(untagged)]
pub enum MemoryAmount {
    /// MiB.
    Mib(u64),
    /// With a unit.
    Text(String),
}

impl MemoryAmount {
    /// The amount in MiB, or what is wrong with it.
    pub fn mib(&self) -> std::result::Result<u32, String> {
        let mib = match self {
            MemoryAmount::Mib(n) => *n,
            MemoryAmount::Text(text) => {
                let text = text.trim();
                let (digits, scale) = match text.char_indices().last() {
                    Some((i, c)) if c.is_ascii_alphabetic() => {
                        let scale: u64 = match c.to_ascii_uppercase() {
                            'K' => 0, // below a MiB: rounded up below
                            'M' => 1,
                            'G' => 1024,
                            'T' => 1024 * 1024,
                            _ => {
                                return Err(format!(
                                    "{text:?} has the unit {c:?}; give MiB as a number or a unit of K, M, G or T"
                                ));
                            }
                        };
                        (&text[..i], scale)
                    }
                    _ => (text, 1),
                };
                let value: f64 = digits
                    .trim()
                    .parse()
                    .ok()
                    .filter(|v: &f64| v.is_finite() && *v >= 0.0)
                    .ok_or_else(|| {
                        format!("{text:?} is not an amount of memory (\"500G\", 512000)")
                    })?;
                if scale == 0 {
                    (value / 1024.0).ceil() as u64
                } else {
                    (value * scale as f64).ceil() as u64
                }
            }
        };
        u32::try_from(mib).map_err(|_| format!("{mib} MiB is more than {} MiB", u32::MAX))
    }
}

/// `[[nodes]]`: a kind of node of a machine of node types, which replaces `site.processors`
/// (the machine's CPUs are then the nodes' cores). Its nodes are named NAME1, NAME2, ...
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NodesSection {
    /// The kind's name (its nodes are NAME1 ... NAMEcount).
    pub name: String,
    /// How many nodes of this kind.
    #[serde(default = "one")]
    pub count: u32,
    /// Cores per node (Slurm's CPUs: what a job holds).
    pub cores: u32,
    /// Memory per node: MiB as a number, or with a unit ("500G"); left out, memory is not
    /// scheduled (give it for every kind or for none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemoryAmount>,
    /// GPUs per node.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gpus: u32,
    /// The type of its GPUs ("a100"); left out, untyped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpu_type: Option<String>,
    /// Its node features, for jobs' constraints.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub features: Vec<String>,
    /// Slurm's `Weight`: lower weights are allocated first.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub weight: u32,
    /// The partitions its nodes belong to (none: every job may use them where no kind names
    /// a partition; else only jobs of the partitions named).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub partitions: Vec<String>,
}

/// `[[partitions]]`: the rules of a partition named by `[[nodes]] partitions` (one not listed
/// here takes the defaults).
#[derive(Debug, Clone, PartialEq, serde::Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PartitionsSection {
    /// The partition's name.
    pub name: String,
    /// Jobs of no partition run here (default: the first partition named).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub default: bool,
    /// Jobs get whole nodes (Slurm's `OverSubscribe=EXCLUSIVE`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub exclusive: bool,
    /// The most nodes a job may have (0: no limit).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub max_nodes: u32,
    /// Memory of a job that asks for none, per CPU (Slurm's `DefMemPerCPU`): MiB or with a
    /// unit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_memory_per_cpu: Option<MemoryAmount>,
}

fn one() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn is_zero(n: &u32) -> bool {
    *n == 0
}

impl NodeMachine {
    /// The machine a site file's `[[nodes]]` and `[[partitions]]` describe (`None` without
    /// `[[nodes]]`); errors name `origin` and the key.
    pub fn of_site(
        nodes: &[NodesSection],
        partitions: &[PartitionsSection],
        origin: &str,
    ) -> Result<Option<NodeMachine>> {
        if nodes.is_empty() {
            if let Some(p) = partitions.first() {
                return Err(invalid!(
                    "{origin}: partitions[0] ({}) without [[nodes]]: partitions are sets of nodes",
                    p.name
                ));
            }
            return Ok(None);
        }
        let mut machine = NodeMachine::default();
        let with_memory = nodes.iter().filter(|n| n.memory.is_some()).count();
        if with_memory != 0 && with_memory != nodes.len() {
            return Err(invalid!(
                "{origin}: nodes: memory is given for {with_memory} of {} kinds; give it for every kind (memory is then scheduled) or for none",
                nodes.len()
            ));
        }
        machine.memory_scheduled = with_memory > 0;
        let mut names: Vec<String> = Vec::new();
        for (i, kind) in nodes.iter().enumerate() {
            let at = |what: String| invalid!("{origin}: nodes[{i}] ({}): {what}", kind.name);
            if kind.name.is_empty() || names.contains(&kind.name) {
                return Err(at("give each kind a name of its own".to_string()));
            }
            names.push(kind.name.clone());
            if kind.cores == 0 || kind.count == 0 {
                return Err(at(format!(
                    "cores = {}, count = {}: a node needs at least one core, a kind at least one node",
                    kind.cores, kind.count
                )));
            }
            if kind.gpu_type.is_some() && kind.gpus == 0 {
                return Err(at("gpu_type without gpus".to_string()));
            }
            let memory = match &kind.memory {
                None => 0,
                Some(m) => m.mib().map_err(|e| at(format!("memory = {e}")))?,
            };
            if machine.nodes.len() + kind.count as usize > crate::limits::MAX_PROCESSORS as usize {
                return Err(at("too many nodes".to_string()));
            }
            let t = machine.types.len();
            machine.types.push(NodeTypeSpec {
                name: kind.name.clone(),
                cpus: kind.cores,
                memory,
                gpus: kind.gpus,
                gpu_type: kind.gpu_type.clone(),
                features: kind.features.clone(),
                weight: kind.weight,
            });
            let first = machine.nodes.len();
            for k in 1..=kind.count {
                machine.nodes.push((format!("{}{k}", kind.name), t));
            }
            for p in &kind.partitions {
                let members = (first..machine.nodes.len()).collect::<Vec<_>>();
                match machine.partitions.iter_mut().find(|x| &x.name == p) {
                    Some(x) => x.nodes.extend(members),
                    None => machine.partitions.push(PartitionSpec {
                        name: p.clone(),
                        nodes: members,
                        ..PartitionSpec::default()
                    }),
                }
            }
        }
        for (i, rules) in partitions.iter().enumerate() {
            let Some(p) = machine.partitions.iter_mut().find(|p| p.name == rules.name) else {
                return Err(invalid!(
                    "{origin}: partitions[{i}] ({}): no [[nodes]] kind names it in its partitions, so it has no node",
                    rules.name
                ));
            };
            p.default = rules.default;
            p.exclusive = rules.exclusive;
            p.max_nodes = rules.max_nodes;
            if let Some(m) = &rules.default_memory_per_cpu {
                p.default_memory_per_cpu = m.mib().map_err(|e| {
                    invalid!(
                        "{origin}: partitions[{i}] ({}): default_memory_per_cpu = {e}",
                        rules.name
                    )
                })?;
            }
        }
        machine.check(origin)?;
        Ok(Some(machine))
    }

    /// The machine's CPUs in all.
    pub fn cpus(&self) -> u64 {
        self.total(|t| t.cpus)
    }
}
