//! A run on a machine of node types (a replay with a slurm.conf's nodes): nodes.csv, what each
//! job held on each of its nodes (one row per (job, node), in submission order, the nodes in the
//! order they were chosen: lowest `Weight` first, then declaration order); and summary.json's
//! `nodes` section ([`NodesReport`]): the machine, its utilisation by resource and GPU type,
//! the waits by partition and GPU type, and the jobs it held for good.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Serialize;

use crate::output::{OutputFormat, csv_error, io_error};
use crate::sink::{JobEvent, NodeShares, RunEnd, RunHeader, Sink};
use config::Result;

/// nodes.csv's columns: the job's id (as jobs.csv's `job_id`), the node's name, and the CPUs,
/// memory (MiB; 0 where memory is not scheduled) and GPUs the job held there.
pub const NODE_COLUMNS: [&str; 5] = ["job_id", "node", "cpus", "memory_mib", "gpus"];

/// The nodes.csv format (see the module).
pub struct NodesCsv;

impl OutputFormat for NodesCsv {
    fn file_name(&self) -> &'static str {
        "nodes.csv"
    }
    fn about(&self) -> &'static str {
        "machines of node types only: the CPUs, memory and GPUs each job held on each of its nodes"
    }
    fn applies(&self, run: &RunHeader) -> bool {
        run.node_names.is_some()
    }
    fn sink(&self, run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(NodesSink {
            names: run.node_names.map(<[String]>::to_vec).unwrap_or_default(),
            ids: Vec::new(),
            out,
        }))
    }
}

/// Keeps the jobs' ids in record order; the shares come at the end ([`RunEnd::node_shares`]).
struct NodesSink {
    names: Vec<String>,
    ids: Vec<i64>,
    out: Box<dyn Write + Send>,
}

impl Sink for NodesSink {
    fn job(&mut self, job: JobEvent<'_>) -> Result<()> {
        self.ids.push(job.record.job_id);
        Ok(())
    }

    fn wants_node_shares(&self) -> bool {
        true
    }

    fn finish(self: Box<Self>, end: &RunEnd<'_>) -> Result<()> {
        let NodesSink { names, ids, out } = *self;
        let mut w = csv::WriterBuilder::new()
            .buffer_capacity(1 << 16)
            .from_writer(out);
        let fail = |e| csv_error("nodes.csv", e);
        w.write_record(NODE_COLUMNS).map_err(fail)?;
        // Records come in submission order, one per job that started: the k-th record is the
        // k-th job index with shares (a job held for good has neither).
        let shares: &[NodeShares] = end.node_shares.unwrap_or_default();
        let started = shares.iter().flatten();
        let mut ints = itoa::Buffer::new();
        for (id, held) in ids.iter().zip(started) {
            for &(node, share) in held {
                w.write_field(ints.format(*id)).map_err(fail)?;
                w.write_field(names.get(node as usize).map_or("", String::as_str))
                    .map_err(fail)?;
                for value in [share.cpus, share.memory, share.gpus] {
                    w.write_field(ints.format(value)).map_err(fail)?;
                }
                w.write_record(None::<&[u8]>).map_err(fail)?;
            }
        }
        w.flush().map_err(|e| io_error("nodes.csv", e))
    }
}

/// summary.json's `nodes` section: a run on a machine of node types.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NodesReport {
    /// The machine, in words ("4 nodes of 2 types (48 CPUs, 187.5 GiB, 8 GPUs), 3 partitions").
    pub machine: String,
    /// The share of each resource held by jobs, over the run from its first scheduling pass
    /// to its last (the first arrival to the last end): `cpus`, `memory` (where scheduled),
    /// `gpus`, and `gpus:TYPE` for each GPU type.
    pub utilization: BTreeMap<String, f64>,
    /// What the machine has of each resource of `utilization`, by the same names: CPUs,
    /// memory in MiB, GPUs, and GPUs of each type.
    pub capacity: BTreeMap<String, u64>,
    /// Jobs that started, and their mean wait in seconds, by partition (`-` on a machine
    /// without partitions).
    pub waits_by_partition: BTreeMap<String, Waits>,
    /// The same by the type of the GPUs a job held (`none`: no GPU; `untyped`: GPUs of nodes
    /// that declare no type).
    pub waits_by_gpu_type: BTreeMap<String, Waits>,
    /// Jobs held for good because no set of their partition's nodes can ever hold them, by
    /// reason (`cluster::NeverFits`' names): they have no record and are in no measure.
    pub held_never_fit: BTreeMap<&'static str, u64>,
}

/// Jobs that started and their mean wait.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Default)]
pub struct Waits {
    /// Jobs.
    pub jobs: u64,
    /// Their mean wait, seconds.
    pub mean_wait: f64,
}

/// What a run on a machine of node types accumulates as it goes (in the replay's observer):
/// each resource's held amount integrated over time, exactly (it only changes at passes), and
/// each started job's wait by partition and GPU type.
#[derive(Debug, Clone, Default)]
pub struct NodeUsage {
    /// (first pass, last pass), seconds.
    window: Option<(i64, i64)>,
    /// Held CPUs, MiB, GPUs and GPUs by type after the last pass.
    held: Vec<f64>,
    /// Their integrals over time, amount-seconds.
    integral: Vec<f64>,
    /// (jobs, sum of waits) by partition: at 0 the jobs of no partition, at `p + 1` those of
    /// partition `p` (named when the report is made: a pass does not build strings).
    by_partition: Vec<(u64, f64)>,
    /// The same by the type of the GPUs a job held: at 0 no GPU, at 1 untyped GPUs, at `t + 1`
    /// GPU type `t` (1-based).
    by_gpu_type: Vec<(u64, f64)>,
}

impl NodeUsage {
    /// After a pass at `now`: integrates what was held since the last pass, then takes what
    /// is held now and the waits of the jobs the pass started.
    pub fn after_pass(&mut self, now: i64, cluster: &cluster::Cluster) {
        let Some(pool) = cluster.pool() else {
            return;
        };
        let spec = pool.spec();
        let types = spec.gpu_types.len();
        if let Some((_, last)) = self.window {
            let dt = (now - last) as f64;
            for (sum, held) in self.integral.iter_mut().zip(&self.held) {
                *sum += held * dt;
            }
        }
        self.window = Some(self.window.map_or((now, now), |(first, _)| (first, now)));
        // The machine-wide amounts held, from the cluster's counts (constant time); by GPU type
        // from the nodes where there are several types.
        let mut held = std::mem::take(&mut self.held);
        held.clear();
        held.resize(3 + types, 0.0);
        let kind = |k: Option<usize>| {
            k.map_or(0.0, |k| {
                f64::from(
                    cluster
                        .extra()
                        .get(k)
                        .saturating_sub(cluster.free_extra().get(k)),
                )
            })
        };
        held[0] = f64::from(cluster.processors() - cluster.free_processors());
        held[1] = kind(spec.memory_kind);
        held[2] = kind(spec.gpu_kind);
        if types == 1 {
            held[3] = held[2];
        } else if types > 1 {
            for (n, (free, capacity)) in pool.free().iter().zip(pool.capacity()).enumerate() {
                let t = gpu_type_of(spec, n);
                if t > 0 {
                    held[2 + t] += f64::from(capacity.gpus - free.gpus);
                }
            }
        }
        if self.integral.len() != held.len() {
            self.integral = vec![0.0; held.len()];
        }
        self.held = held;
        for s in cluster.last_started() {
            let wait = cluster
                .running_submit(s.id)
                .map_or(0.0, |submit| (s.start - submit) as f64);
            let partition = pool
                .partition_of_job(s.id)
                .filter(|&p| p < spec.partitions.len())
                .map_or(0, |p| p + 1);
            let nodes = cluster.node_allocation(s.id).unwrap_or_default();
            let gpu_type = nodes
                .iter()
                .find(|(_, share)| share.gpus > 0)
                .map_or(0, |&(n, _)| {
                    let t = gpu_type_of(spec, n as usize);
                    if t > 0 && t <= spec.gpu_types.len() {
                        t + 1
                    } else {
                        1
                    }
                });
            for (counts, key) in [
                (&mut self.by_partition, partition),
                (&mut self.by_gpu_type, gpu_type),
            ] {
                if counts.len() <= key {
                    counts.resize(key + 1, (0, 0.0));
                }
                counts[key].0 += 1;
                counts[key].1 += wait;
            }
        }
    }
}

/// The GPU type number (1-based; 0: untyped) of node `n`.
fn gpu_type_of(spec: &cluster::PoolSpec, n: usize) -> usize {
    spec.nodes
        .get(n)
        .and_then(|(_, t)| spec.types.get(usize::from(*t)))
        .map_or(0, |t| usize::from(t.gpu_type))
}

impl NodesReport {
    /// The report of `machine` after a run on `cluster` that accumulated `usage`.
    pub fn new(
        machine: &config::nodes::NodeMachine,
        cluster: &cluster::Cluster,
        usage: &NodeUsage,
    ) -> NodesReport {
        let mut utilization = BTreeMap::new();
        let mut capacity_of = BTreeMap::new();
        if let (Some(pool), Some((first, last))) = (cluster.pool(), usage.window) {
            let spec = pool.spec();
            let span = (last - first).max(1) as f64;
            let capacity = pool.capacity();
            let total = |f: &dyn Fn(&cluster::Amounts) -> u32| -> f64 {
                capacity.iter().map(|c| f64::from(f(c))).sum()
            };
            let mut totals = vec![total(&|c| c.cpus), total(&|c| c.memory), total(&|c| c.gpus)];
            let by_type = spec.gpus_by_type();
            totals.extend(by_type.iter().map(|&g| f64::from(g)));
            let mut names = vec!["cpus".to_string(), "memory".to_string(), "gpus".to_string()];
            names.extend(spec.gpu_types.iter().map(|t| format!("gpus:{t}")));
            for ((name, total), integral) in names.into_iter().zip(totals).zip(&usage.integral) {
                if total > 0.0 {
                    utilization.insert(name.clone(), integral / (total * span));
                    capacity_of.insert(name, total as u64);
                }
            }
        }
        // The names of the counts' positions (see `NodeUsage`): partitions, GPU types.
        let spec = cluster.pool().map(|p| p.spec());
        let partition_name = |i: usize| match i {
            0 => "-".to_string(),
            _ => spec
                .and_then(|s| s.partitions.get(i - 1))
                .map_or_else(|| "-".to_string(), |p| p.name.clone()),
        };
        let gpu_type_name = |i: usize| match i {
            0 => "none".to_string(),
            1 => "untyped".to_string(),
            _ => spec
                .and_then(|s| s.gpu_types.get(i - 2))
                .cloned()
                .unwrap_or_else(|| "untyped".to_string()),
        };
        let waits = |counts: &[(u64, f64)], name: &dyn Fn(usize) -> String| {
            // Positions of one name (a GPU type called "untyped") count together.
            let mut by_name: BTreeMap<String, (u64, f64)> = BTreeMap::new();
            for (i, &(jobs, sum)) in counts.iter().enumerate().filter(|(_, c)| c.0 > 0) {
                let entry = by_name.entry(name(i)).or_default();
                entry.0 += jobs;
                entry.1 += sum;
            }
            by_name
                .into_iter()
                .map(|(key, (jobs, sum))| {
                    let mean_wait = sum / jobs as f64;
                    (key, Waits { jobs, mean_wait })
                })
                .collect()
        };
        NodesReport {
            machine: machine.description(),
            utilization,
            capacity: capacity_of,
            waits_by_partition: waits(&usage.by_partition, &partition_name),
            waits_by_gpu_type: waits(&usage.by_gpu_type, &gpu_type_name),
            held_never_fit: cluster
                .never_fits()
                .map(|(reason, count)| (reason.name(), count))
                .collect(),
        }
    }

    /// Jobs held for good, in all.
    pub fn held(&self) -> u64 {
        self.held_never_fit.values().sum()
    }

    /// A line for the terminal when some job was held: "held  3 jobs that never fit (2
    /// resources, 1 constraint)".
    pub fn held_line(&self) -> Option<String> {
        let total = self.held();
        (total > 0).then(|| {
            let reasons: Vec<String> = (self.held_never_fit.iter())
                .filter(|&(_, &n)| n > 0)
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect();
            format!(
                "  held         {total} jobs that never fit the machine ({}): no record, in no measure\n",
                reasons.join(", ")
            )
        })
    }
}
