//! Processor allocations and the Batsim-style jobs file (`batsim_jobs.csv`), which evalys's
//! `JobSet.from_csv` loads.
//!
//! The schedulers count processors; which processors a job held is decided here, after the run,
//! from the records alone ([`allocate`]): jobs in order of start (at one instant, zero-length jobs
//! first, then record order), each given the lowest-numbered processors free at its start, the
//! processors of every job that ended by then given back. The schedule is feasible (at no
//! instant do the running jobs hold more than the machine), so every job gets its size, no two
//! jobs running at the same time share a processor, and the ids stay below the most processors
//! ever busy at once. It changes no scheduling decision and is the same for the same records.
//!
//! A replay or site run on a machine of nodes knows better: the cluster places each job on
//! processors of its nodes (First Fit, First Continuous), and `Placements` keeps that placement
//! as the jobs start, for the sinks that ask for it ([`crate::sink::RunEnd::placements`]), which
//! the file then shows instead.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::io::Write;

use cluster::Cluster;
use config::Result;
use engine::Observer;
use metrics::JobRecord;
use simtime::Time;

use crate::output::{OutputFormat, csv_error, io_error};
use crate::sink::{JobEvent, RunEnd, RunHeader, Sink};

/// The columns of `batsim_jobs.csv`, in order: Batsim's jobs output, as evalys reads it.
pub const BATSIM_COLUMNS: [&str; 16] = [
    "job_id",
    "workload_name",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
];

/// A set of processor ids as closed intervals `(first, last)`, ascending and not touching.
pub type Intervals = Vec<(u32, u32)>;

/// The processors each record held (same order as `records`): see the module's description.
pub fn allocate(records: &[JobRecord]) -> Vec<Intervals> {
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| {
        let r = &records[i];
        (r.start, r.end > r.start, i)
    });
    // free intervals: first id -> one past the last; the last one is unbounded
    let mut free: BTreeMap<u32, u32> = BTreeMap::from([(0, u32::MAX)]);
    let mut running: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    let mut held: Vec<Intervals> = vec![Vec::new(); records.len()];
    for i in order {
        let r = &records[i];
        while let Some(&Reverse((end, j))) = running.peek() {
            if end > r.start {
                break;
            }
            running.pop();
            for &(a, b) in &held[j] {
                give_back(&mut free, a, b + 1);
            }
        }
        let mut need = r.processors;
        let mut taken = Vec::new();
        while need > 0 {
            let Some((&a, &b)) = free.iter().next() else {
                break; // unreachable: the last interval is unbounded
            };
            free.remove(&a);
            let n = need.min(b - a);
            taken.push((a, a + n - 1));
            if a + n < b {
                free.insert(a + n, b);
            }
            need -= n;
        }
        held[i] = taken;
        running.push(Reverse((r.end, i)));
    }
    held
}

/// An observer that passes every call on to `inner` and, when `held` is `Some`, keeps the
/// processors the cluster's node map gave each started job, indexed by the engine's job id (the
/// record's index in the engine's output).
pub(crate) struct Placements<'o, O: Observer + ?Sized> {
    pub(crate) inner: &'o mut O,
    pub(crate) held: Option<Vec<Intervals>>,
    /// On a machine of node types, when a sink wants them: what each started job holds on
    /// each node, by the engine's job id.
    pub(crate) node_shares: Option<Vec<crate::sink::NodeShares>>,
    /// On a machine of node types: its utilisation and waits, accumulated.
    pub(crate) usage: Option<crate::node_report::NodeUsage>,
}

impl<O: Observer + ?Sized> Observer for Placements<'_, O> {
    fn before_pass(&mut self, now: Time, cluster: &Cluster) {
        self.inner.before_pass(now, cluster);
    }
    fn stop_requested(&self) -> bool {
        self.inner.stop_requested()
    }
    fn after_pass(&mut self, now: Time, cluster: &Cluster) {
        self.inner.after_pass(now, cluster);
        if let Some(usage) = self.usage.as_mut() {
            usage.after_pass(now, cluster);
        }
        if let Some(shares) = self.node_shares.as_mut() {
            for s in cluster.last_started() {
                if let Some(nodes) = cluster.node_allocation(s.id) {
                    let index = s.id.0 as usize;
                    if shares.len() <= index {
                        shares.resize(index + 1, None);
                    }
                    shares[index] = Some(smallvec::SmallVec::from_slice(nodes));
                }
            }
        }
        if let Some(held) = self.held.as_mut() {
            for s in cluster.last_started() {
                if let Some(processors) = cluster.allocation(s.id) {
                    let index = s.id.0 as usize;
                    if held.len() <= index {
                        held.resize(index + 1, Vec::new());
                    }
                    held[index] = intervals(processors);
                }
            }
        }
    }
}

/// The interval set of some processor ids, in any order.
pub fn intervals(ids: &[u32]) -> Intervals {
    let mut sorted = ids.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut set: Intervals = Vec::new();
    for id in sorted {
        match set.last_mut() {
            Some(last) if last.1 + 1 == id => last.1 = id,
            _ => set.push((id, id)),
        }
    }
    set
}

/// Returns `[a, b)` to the free set, merging it with its neighbours.
fn give_back(free: &mut BTreeMap<u32, u32>, mut a: u32, mut b: u32) {
    if let Some((&pa, &pb)) = free.range(..a).next_back()
        && pb == a
    {
        free.remove(&pa);
        a = pa;
    }
    if let Some(&nb) = free.get(&b) {
        free.remove(&b);
        b = nb;
    }
    free.insert(a, b);
}

/// `0-3 8-9 12`: Batsim's (and evalys's `ProcSet`) text of an interval set.
pub fn interval_text(set: &[(u32, u32)]) -> String {
    let mut t = String::new();
    for &(a, b) in set {
        if !t.is_empty() {
            t.push(' ');
        }
        if a == b {
            t.push_str(&a.to_string());
        } else {
            t.push_str(&format!("{a}-{b}"));
        }
    }
    t
}

/// The interval set of a text as [`interval_text`] writes it (`0-3 8-9 12`; empty: no
/// processor); the error is the word that is neither an id nor a range `FIRST-LAST` of ids.
pub fn parse_intervals(text: &str) -> std::result::Result<Intervals, String> {
    text.split_whitespace()
        .map(|word| {
            let (first, last) = word.split_once('-').unwrap_or((word, word));
            match (first.parse::<u32>(), last.parse::<u32>()) {
                (Ok(first), Ok(last)) => Ok((first, last)),
                _ => Err(word.to_string()),
            }
        })
        .collect()
}

/// `batsim_jobs.csv`: Batsim's jobs file with the processors each job held (see [`allocate`]).
/// Written only on request (`--batsim-jobs`).
#[derive(Debug, Clone, Copy)]
pub struct BatsimJobs;

impl OutputFormat for BatsimJobs {
    fn file_name(&self) -> &'static str {
        "batsim_jobs.csv"
    }
    fn about(&self) -> &'static str {
        "Batsim's jobs file (evalys's JobSet.from_csv), with the processors each job held"
    }
    fn on_request(&self) -> bool {
        true
    }
    fn sink(&self, _run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(BatsimSink {
            records: Vec::new(),
            out,
        }))
    }
}

/// Keeps the records: the processors are assigned once every job is known ([`allocate`]).
struct BatsimSink {
    records: Vec<JobRecord>,
    out: Box<dyn Write + Send>,
}

impl Sink for BatsimSink {
    fn wants_placements(&self) -> bool {
        true
    }
    fn job(&mut self, job: JobEvent<'_>) -> Result<()> {
        self.records.push(job.record.clone());
        Ok(())
    }
    fn finish(mut self: Box<Self>, end: &RunEnd<'_>) -> Result<()> {
        write_batsim_jobs(&self.records, end.placements, end.energies, &mut self.out)?;
        self.out.flush().map_err(|e| io_error("batsim_jobs.csv", e))
    }
}

/// Writes [`BATSIM_COLUMNS`], one row per record: `workload_name` is `sitesim`,
/// `requested_time` the estimate, `success` 1 and `final_state` `COMPLETED_SUCCESSFULLY`, or 0
/// and `COMPLETED_WALLTIME_REACHED` for a job killed at its estimate; times in seconds;
/// `turnaround_time` is the response, `stretch` the slowdown (response over a runtime of at least
/// 1 s), `allocated_resources` the processors ([`allocate`]), `consumed_energy` the IT energy
/// charged to the job in joules with a power model (`energies`, by record), else -1 (not
/// simulated, as Batsim writes it without energy), and `metadata` empty. `placements`, when
/// given, are the processors of each record (same order) as the cluster placed them on a
/// machine of nodes; otherwise they are assigned by [`allocate`].
pub fn write_batsim_jobs(
    records: &[JobRecord],
    placements: Option<&[Intervals]>,
    energies: Option<&[f64]>,
    out: &mut dyn Write,
) -> Result<()> {
    let allocations = match placements {
        Some(p) if p.len() == records.len() => p.to_vec(),
        _ => allocate(records),
    };
    let mut w = csv::WriterBuilder::new()
        .buffer_capacity(1 << 16)
        .from_writer(out);
    let fail = |e| csv_error("batsim_jobs.csv", e);
    w.write_record(BATSIM_COLUMNS).map_err(fail)?;
    let mut ints = itoa::Buffer::new();
    let mut floats = ryu::Buffer::new();
    for (index, (r, held)) in records.iter().zip(&allocations).enumerate() {
        w.write_field(ints.format(r.job_id)).map_err(fail)?;
        w.write_field("sitesim").map_err(fail)?;
        w.write_field(ints.format(r.submit)).map_err(fail)?;
        w.write_field(ints.format(r.processors)).map_err(fail)?;
        w.write_field(ints.format(r.estimate)).map_err(fail)?;
        w.write_field(if r.killed { "0" } else { "1" })
            .map_err(fail)?;
        w.write_field(if r.killed {
            "COMPLETED_WALLTIME_REACHED"
        } else {
            "COMPLETED_SUCCESSFULLY"
        })
        .map_err(fail)?;
        for value in [r.start, r.runtime(), r.end, r.wait(), r.response()] {
            w.write_field(ints.format(value)).map_err(fail)?;
        }
        w.write_field(floats.format(r.slowdown())).map_err(fail)?;
        w.write_field(interval_text(held)).map_err(fail)?;
        match energies.and_then(|e| e.get(index)) {
            Some(&joules) => w.write_field(floats.format(joules)).map_err(fail)?,
            None => w.write_field("-1").map_err(fail)?,
        }
        w.write_field("").map_err(fail)?;
        w.write_record(None::<&[u8]>).map_err(fail)?;
    }
    w.flush().map_err(|e| io_error("batsim_jobs.csv", e))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: i64, start: i64, end: i64, processors: u32) -> JobRecord {
        JobRecord {
            job: metrics::Job {
                job_id: id,
                submit: 0,
                processors,
                estimate: end - start + 10,
                ..metrics::Job::default()
            },
            start,
            end,
            ..JobRecord::default()
        }
    }

    #[test]
    fn lowest_free_processors_and_intervals() {
        let records = [
            job(1, 0, 10, 4),
            job(2, 0, 20, 2),
            job(3, 10, 30, 6),
            job(4, 20, 20, 3),
            job(5, 20, 25, 1),
        ];
        let a = allocate(&records);
        assert_eq!(a[0], vec![(0, 3)]);
        assert_eq!(a[1], vec![(4, 5)]);
        assert_eq!(a[2], vec![(0, 3), (6, 7)]);
        // at 20 job 2 ended: the zero-length job goes first, then job 5
        assert_eq!(a[3], vec![(4, 5), (8, 8)]);
        assert_eq!(a[4], vec![(4, 4)]);
        assert_eq!(interval_text(&a[2]), "0-3 6-7");
        assert_eq!(interval_text(&a[4]), "4");
    }

    #[test]
    fn intervals_of_unordered_ids() {
        assert_eq!(
            intervals(&[9, 0, 2, 1, 8, 3, 12]),
            vec![(0, 3), (8, 9), (12, 12)]
        );
        assert_eq!(intervals(&[]), Vec::<(u32, u32)>::new());
    }

    #[test]
    fn interval_text_reads_back() {
        for set in [vec![], vec![(0, 3), (8, 9), (12, 12)], vec![(7, 7)]] {
            assert_eq!(parse_intervals(&interval_text(&set)), Ok(set));
        }
        assert_eq!(parse_intervals("0-3 x"), Err("x".to_string()));
        assert_eq!(parse_intervals("4-"), Err("4-".to_string()));
    }

    #[test]
    fn header_and_row() {
        let mut r = job(7, 20, 50, 2);
        r.submit = 10;
        r.killed = true;
        let mut bytes = Vec::new();
        assert!(write_batsim_jobs(&[r], None, None, &mut bytes).is_ok());
        assert_eq!(
            String::from_utf8(bytes).unwrap_or_default(),
            "job_id,workload_name,submission_time,requested_number_of_resources,requested_time,success,final_state,starting_time,execution_time,finish_time,waiting_time,turnaround_time,stretch,allocated_resources,consumed_energy,metadata\n\
             7,sitesim,10,2,40,0,COMPLETED_WALLTIME_REACHED,20,30,50,10,40,1.3333333333333333,0-1,-1,\n"
        );
    }
}
