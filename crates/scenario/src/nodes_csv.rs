//! nodes.csv: on a machine of node types (a replay with a slurm.conf's nodes), what each job
//! held on each of its nodes: one row per (job, node), in submission order, the nodes in the
//! order they were chosen (lowest `Weight` first, then declaration order).

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
    /// Jobs held for good because no set of their partition's nodes can ever hold them, by
    /// reason (`cluster::NeverFits`' names): they have no record and are in no measure.
    pub held_never_fit: BTreeMap<&'static str, u64>,
}

impl NodesReport {
    /// The report of `machine` after a run on `cluster`.
    pub fn new(machine: &config::nodes::NodeMachine, cluster: &cluster::Cluster) -> NodesReport {
        NodesReport {
            machine: machine.description(),
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
