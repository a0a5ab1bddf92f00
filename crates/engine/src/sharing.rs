//! Guim's memory-bandwidth sharing model (paper 001, sections III-C and III-D).
//!
//! Every process of a job on a node of k processors uses the job's per-process memory
//! bandwidth. Along each node's time line, the shared shadows are the intervals in which the same
//! processes run (eq. 1: their demands add up to the node's usage U); where U exceeds the node's
//! capacity C, each job in the shadow is penalized by the shadow's length times U / C - 1 (eqs. 2
//! and 3, the penalty "proportional to the fraction of demand and availability", zero up to the
//! capacity; for four 2000 MB/s processes on a 6000 MB/s node, 8/6 - 1 = 1/3 of the time).
//! A job's penalties on its nodes are summed per node, and the largest one is added to its
//! runtime (III-D, step 3). As in Guim's algorithm, the shadows are computed over the jobs'
//! unpenalized intervals [start, start + runtime] and recomputed whenever a job is allocated, so a
//! running job is penalized again when a later job comes to share its node. A job whose penalized
//! runtime passes its estimate is killed there.
//!
//! The scheduler never sees any of this: it plans with estimates, and the kill time stays
//! start + estimate.

use std::collections::HashMap;

use cluster::JobId;
use metrics::Neighbourhood;

use crate::Time;
use crate::simulate::Interference;

/// The machine's memory bandwidth: nodes of `processors_per_node` processors with
/// `node_capacity` MB/s each.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryBandwidth {
    /// Processors per node (as the cluster's nodes).
    pub processors_per_node: u32,
    /// Memory bandwidth of a node, MB/s.
    pub node_capacity: f64,
    /// How a job's penalties on its nodes become its penalty.
    pub over_nodes: OverNodes,
    /// Processor p is on node (p + node_offset) / processors_per_node: 0 (the default) aligns
    /// nodes with processor ids; an offset shifts the boundaries (the first and last nodes are
    /// smaller). Not the paper's (it gives no numbering); an experiment.
    pub node_offset: u32,
}

/// How a job's penalties on its several nodes become the time added to its run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OverNodes {
    /// The largest (paper 001, section III-D, step 3: the job ends with its slowest node).
    #[default]
    Max,
    /// The mean over the job's processes (each process's node penalty, averaged): not the
    /// paper's; an experiment on how much the spread of a job over nodes matters.
    ProcessMean,
}

/// One job's share of one node: its processes there times their demand, over its unpenalized
/// interval.
#[derive(Debug, Clone, Copy)]
struct Slice {
    job: JobId,
    /// The job's processes on the node.
    processes: u32,
    demand: f64,
    start: Time,
    end: Time,
}

#[derive(Debug)]
struct Running {
    /// The unpenalized interval.
    start: Time,
    end: Time,
    nodes: Vec<u32>,
    /// The job's processes on each of `nodes`.
    counts: Vec<u32>,
    /// Penalty on each of `nodes`, seconds.
    penalties: Vec<f64>,
}

/// The penalties of the running jobs, updated as jobs start and end.
#[derive(Debug)]
pub(crate) struct Sharing {
    model: MemoryBandwidth,
    /// Slices per node: of the running jobs, and of ended jobs whose intervals may still overlap
    /// a running job's.
    nodes: HashMap<u32, Vec<Slice>>,
    running: HashMap<JobId, Running>,
}

impl Sharing {
    pub(crate) fn new(model: MemoryBandwidth) -> Sharing {
        Sharing {
            model,
            nodes: HashMap::new(),
            running: HashMap::new(),
        }
    }

    /// A job starts at `start` for `runtime` seconds (unpenalized) on `processors`, each process
    /// using `bandwidth` MB/s. Returns every running job whose penalty changed, with its new
    /// penalty in whole seconds (rounded up), the new job included.
    fn start(
        &mut self,
        job: JobId,
        start: Time,
        runtime: Time,
        processors: &[u32],
        bandwidth: u32,
    ) -> Vec<(JobId, Time)> {
        let k = self.model.processors_per_node.max(1);
        let mut per_node: Vec<(u32, u32)> = Vec::new();
        for &p in processors {
            let node = (p + self.model.node_offset) / k;
            match per_node.last_mut() {
                Some((n, count)) if *n == node => *count += 1,
                _ => per_node.push((node, 1)),
            }
        }
        // Processors come sorted, but merge equal nodes anyway.
        per_node.sort_unstable();
        per_node.dedup_by(|b, a| {
            if a.0 == b.0 {
                a.1 += b.1;
                true
            } else {
                false
            }
        });
        let end = start.saturating_add(runtime.max(0));
        for &(node, count) in &per_node {
            self.nodes.entry(node).or_default().push(Slice {
                job,
                processes: count,
                demand: f64::from(count) * f64::from(bandwidth),
                start,
                end,
            });
        }
        self.running.insert(
            job,
            Running {
                start,
                end,
                nodes: per_node.iter().map(|&(n, _)| n).collect(),
                counts: per_node.iter().map(|&(_, c)| c).collect(),
                penalties: vec![0.0; per_node.len()],
            },
        );
        // Recompute the penalty of every running job sharing one of these nodes.
        let mut changed: HashMap<JobId, Time> = HashMap::new();
        for &(node, _) in &per_node {
            let slices = self.nodes.get(&node).cloned().unwrap_or_default();
            let running: Vec<Slice> = slices
                .iter()
                .filter(|s| self.running.contains_key(&s.job))
                .copied()
                .collect();
            for slice in &running {
                let penalty = self.penalty_on(&slices, slice);
                let over = self.model.over_nodes;
                if let Some(r) = self.running.get_mut(&slice.job) {
                    let before = r.total(over);
                    if let Some(i) = r.nodes.iter().position(|&n| n == node) {
                        r.penalties[i] = penalty;
                    }
                    let after = r.total(over);
                    if after != before || slice.job == job {
                        changed.insert(slice.job, after);
                    }
                }
            }
        }
        let mut changed: Vec<(JobId, Time)> = changed.into_iter().collect();
        changed.sort_unstable();
        changed
    }

    /// A job ended: it is no longer penalized, and slices that can overlap no running job's
    /// interval are forgotten. Returns where it ran (every slice that overlapped it is still
    /// kept at this point: a running job's overlapping slices are never forgotten).
    fn end(&mut self, job: JobId) -> Option<Neighbourhood> {
        let seen = self.neighbourhood(job);
        let r = self.running.remove(&job)?;
        for node in r.nodes {
            let Some(slices) = self.nodes.get_mut(&node) else {
                continue;
            };
            // Later jobs start after now, which is after every ended slice's end.
            let earliest = slices
                .iter()
                .filter(|s| self.running.contains_key(&s.job))
                .map(|s| s.start)
                .min();
            slices.retain(|s| {
                self.running.contains_key(&s.job) || earliest.is_some_and(|e| s.end > e)
            });
            if slices.is_empty() {
                self.nodes.remove(&node);
            }
        }
        seen
    }

    /// A running job's nodes, the other jobs on them during its unpenalized interval, and how
    /// busy those nodes were over its process-seconds.
    fn neighbourhood(&self, job: JobId) -> Option<Neighbourhood> {
        let r = self.running.get(&job)?;
        let k = self.model.processors_per_node.max(1);
        let mut neighbours: Vec<JobId> = Vec::new();
        let (mut busy, mut full, mut weight) = (0.0, 0.0, 0.0);
        for (&node, &count) in r.nodes.iter().zip(&r.counts) {
            let Some(slices) = self.nodes.get(&node) else {
                continue;
            };
            let overlapping: Vec<&Slice> = slices
                .iter()
                .filter(|s| s.start < r.end && r.start < s.end)
                .collect();
            neighbours.extend(overlapping.iter().map(|s| s.job).filter(|&j| j != job));
            let mut points: Vec<Time> = vec![r.start, r.end];
            for s in &overlapping {
                for t in [s.start, s.end] {
                    if t > r.start && t < r.end {
                        points.push(t);
                    }
                }
            }
            points.sort_unstable();
            points.dedup();
            for w in points.windows(2) {
                let processes: u32 = overlapping
                    .iter()
                    .filter(|s| s.start <= w[0] && w[0] < s.end)
                    .map(|s| s.processes)
                    .sum();
                let seconds = (w[1] - w[0]) as f64 * f64::from(count);
                busy += seconds * f64::from(processes) / f64::from(k);
                if processes >= k {
                    full += seconds;
                }
                weight += seconds;
            }
        }
        neighbours.sort_unstable();
        neighbours.dedup();
        let share = |x: f64| if weight > 0.0 { x / weight } else { f64::NAN };
        Some(Neighbourhood {
            nodes: r.nodes.len() as u32,
            neighbours: neighbours.len() as u32,
            busy: share(busy),
            full: share(full),
        })
    }

    /// The penalty of `slice`'s job on the node of `slices`: the integral over its interval of
    /// max(0, U(t) / C - 1), U(t) the demand of the slices covering t.
    fn penalty_on(&self, slices: &[Slice], slice: &Slice) -> f64 {
        let (from, to) = (slice.start, slice.end);
        if to <= from {
            return 0.0;
        }
        let mut points: Vec<Time> = vec![from, to];
        for s in slices {
            for t in [s.start, s.end] {
                if t > from && t < to {
                    points.push(t);
                }
            }
        }
        points.sort_unstable();
        points.dedup();
        let capacity = self.model.node_capacity;
        points
            .windows(2)
            .map(|w| {
                let usage: f64 = slices
                    .iter()
                    .filter(|s| s.start <= w[0] && w[0] < s.end)
                    .map(|s| s.demand)
                    .sum();
                let over = if capacity > 0.0 {
                    (usage / capacity - 1.0).max(0.0)
                } else {
                    0.0
                };
                (w[1] - w[0]) as f64 * over
            })
            .sum()
    }
}

impl Interference for Sharing {
    fn job_started(
        &mut self,
        job: JobId,
        start: Time,
        work: Time,
        processors: &[u32],
        bandwidth: u32,
    ) -> Vec<(JobId, Time)> {
        self.start(job, start, work, processors, bandwidth)
    }

    fn job_ended(&mut self, job: JobId) -> Option<Neighbourhood> {
        self.end(job)
    }
}

impl Running {
    /// The job's penalty, rounded up to whole seconds: the largest over its nodes (the paper's),
    /// or the mean over its processes.
    fn total(&self, over: OverNodes) -> Time {
        let seconds = match over {
            OverNodes::Max => self.penalties.iter().cloned().fold(0.0, f64::max),
            OverNodes::ProcessMean => {
                let processes: u32 = self.counts.iter().sum();
                let weighted: f64 = self
                    .penalties
                    .iter()
                    .zip(&self.counts)
                    .map(|(p, &c)| p * f64::from(c))
                    .sum();
                weighted / f64::from(processes.max(1))
            }
        };
        seconds.ceil() as Time
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sharing() -> Sharing {
        Sharing::new(MemoryBandwidth {
            processors_per_node: 4,
            node_capacity: 6000.0,
            over_nodes: OverNodes::Max,
            node_offset: 0,
        })
    }

    #[test]
    fn a_node_within_its_capacity_costs_nothing() {
        let mut s = sharing();
        // Three 2000 MB/s processes: 6000 = C.
        assert_eq!(
            s.start(JobId(0), 0, 100, &[0, 1, 2], 2000),
            vec![(JobId(0), 0)]
        );
        // A fourth process at 500: 6500 / 6000 - 1 = 1/12 of the overlap.
        let changed = s.start(JobId(1), 40, 120, &[3], 500);
        // Overlap [40, 100]: 60 s * 1/12 = 5 s for both.
        assert_eq!(changed, vec![(JobId(0), 5), (JobId(1), 5)]);
    }

    #[test]
    fn guims_worst_case_is_a_third_more_time() {
        let mut s = sharing();
        // Four high-demand processes on one node for the whole run: 8000 / 6000 - 1 = 1/3.
        s.start(JobId(0), 0, 300, &[0, 1], 2000);
        let changed = s.start(JobId(1), 0, 300, &[2, 3], 2000);
        assert_eq!(changed, vec![(JobId(0), 100), (JobId(1), 100)]);
    }

    #[test]
    fn the_penalty_is_the_largest_over_the_nodes_and_sums_shadows() {
        let mut s = sharing();
        // Job 0 spans nodes 0 and 1 (two processes each), 0-1000 s.
        s.start(JobId(0), 0, 1000, &[2, 3, 4, 5], 2000);
        // Node 0: job 1 adds two processes over [100, 400] -> 300 * 1/3 = 100.
        s.start(JobId(1), 100, 300, &[0, 1], 2000);
        // Node 1: job 2 adds one process over [200, 800] at 2000 -> 6000: no penalty; job 3 adds
        // one more over [500, 700] -> 8000 over 200 s -> 66.7; node 1 total 66.7 < node 0's 100.
        s.start(JobId(2), 200, 600, &[6], 2000);
        let changed = s.start(JobId(3), 500, 200, &[7], 2000);
        let of = |j| changed.iter().find(|c| c.0 == JobId(j)).map(|c| c.1);
        assert_eq!(of(3), Some(67));
        assert_eq!(of(2), Some(67));
        assert_eq!(of(0), None, "job 0 keeps its 100 s from node 0");
        // A second overlap on node 0 adds to node 0's sum: [600, 900] -> 100 more.
        let changed = s.start(JobId(4), 600, 300, &[0, 1], 2000);
        assert_eq!(changed, vec![(JobId(0), 200), (JobId(4), 100)]);
    }

    #[test]
    fn the_papers_figures_one_to_four() {
        // Figures 1-4 of paper 001: two nodes of five processors (0-4 and 5-9). Job 1 holds
        // processors 1-3 of node 1 over [t0, t2], job 2 processors 4-5 of node 1 and 1-2 of
        // node 2 over [t1, t3], job 3 processor 5 of node 2 over [t1, t4]; t0..t4 = 0, 100, 300,
        // 600, 800. Demands (ours; the paper gives none): job 1 2000 MB/s per process, job 2
        // 1500, job 3 4000.
        let mut s = Sharing::new(MemoryBandwidth {
            processors_per_node: 5,
            node_capacity: 6000.0,
            over_nodes: OverNodes::Max,
            node_offset: 0,
        });
        assert_eq!(
            s.start(JobId(1), 0, 300, &[0, 1, 2], 2000),
            vec![(JobId(1), 0)]
        );
        assert_eq!(
            s.start(JobId(2), 100, 500, &[3, 4, 5, 6], 1500),
            vec![(JobId(1), 100), (JobId(2), 100)]
        );
        let changed = s.start(JobId(3), 100, 700, &[9], 4000);
        // Shadow 2, node 1 over [t1, t2]: U = 6000 + 3000 = 9000, 200 s x (9000/6000 - 1) = 100
        // for jobs 1 and 2. Shadow 5, node 2 over [t1, t3]: U = 3000 + 4000 = 7000, 500 s x 1/6
        // = 83.3 for jobs 2 and 3. Job 2 keeps the larger, p1 = 100 (step 3), so only job 3's
        // changes: 84 (rounded up).
        assert_eq!(changed, vec![(JobId(3), 84)]);
        assert_eq!(s.running[&JobId(2)].total(OverNodes::Max), 100);
        assert_eq!(s.running[&JobId(1)].total(OverNodes::Max), 100);
        // The mean over job 2's processes instead: (2 x 100 + 2 x 83.3) / 4 = 91.7 -> 92.
        assert_eq!(s.running[&JobId(2)].total(OverNodes::ProcessMean), 92);
    }

    #[test]
    fn a_job_packed_on_its_own_node_conflicts_with_itself() {
        // The paper's "internal conflict" (section VI): four high-demand processes of one job on
        // one node cost it 1/3 of its run; the same job spread two by two beside low-demand
        // jobs costs nothing (2 x 2000 + 2 x 500 = 5000 <= 6000).
        let mut packed = sharing();
        assert_eq!(
            packed.start(JobId(0), 0, 600, &[4, 5, 6, 7], 2000),
            vec![(JobId(0), 200)]
        );
        let mut spread = sharing();
        spread.start(JobId(1), 0, 600, &[2, 3], 500);
        spread.start(JobId(2), 0, 600, &[10, 11], 500);
        assert_eq!(
            spread.start(JobId(0), 0, 600, &[0, 1, 8, 9], 2000),
            vec![(JobId(0), 0)]
        );
    }

    #[test]
    fn an_offset_moves_the_node_boundaries() {
        // Job 0 (four 2000 MB/s processes on 0-3) and job 1 (four 500 MB/s on 4-7). Aligned,
        // each has a node to itself: job 0's node carries 8000 MB/s (a third more, 100 s of
        // 300). With an offset of 2, node 0 is processors 0-1, node 1 is 2-5 and node 2 is
        // 6-7: job 0 has 4000 on node 0 and 4000 + 1000 on node 1, job 1 1000 on node 2;
        // nothing is overloaded.
        let mut aligned = sharing();
        aligned.start(JobId(0), 0, 300, &[0, 1, 2, 3], 2000);
        aligned.start(JobId(1), 0, 300, &[4, 5, 6, 7], 500);
        assert_eq!(aligned.running[&JobId(0)].total(OverNodes::Max), 100);
        let mut offset = Sharing::new(MemoryBandwidth {
            node_offset: 2,
            ..sharing().model
        });
        offset.start(JobId(0), 0, 300, &[0, 1, 2, 3], 2000);
        assert_eq!(offset.running[&JobId(0)].nodes, vec![0, 1]);
        let changed = offset.start(JobId(1), 0, 300, &[4, 5, 6, 7], 500);
        assert_eq!(changed, vec![(JobId(1), 0)]);
        assert_eq!(offset.running[&JobId(1)].nodes, vec![1, 2]);
        assert_eq!(offset.running[&JobId(0)].total(OverNodes::Max), 0);
    }

    #[test]
    fn the_neighbourhood_counts_nodes_neighbours_and_busy_processors() {
        let mut s = sharing();
        // Job 0 on processors 2-5 (nodes 0 and 1) over [0, 100]; job 1 on 0-1 over [0, 50];
        // job 2 on 6-7 over [50, 150].
        s.start(JobId(0), 0, 100, &[2, 3, 4, 5], 500);
        s.start(JobId(1), 0, 50, &[0, 1], 500);
        s.start(JobId(2), 50, 100, &[6, 7], 500);
        let seen = s.end(JobId(0)).unwrap();
        assert_eq!(seen.nodes, 2);
        assert_eq!(seen.neighbours, 2);
        // Each of node 0 and node 1 is full half the time, half-busy the other half: busy 3/4,
        // full 1/2.
        assert!((seen.busy - 0.75).abs() < 1e-12, "{seen:?}");
        assert!((seen.full - 0.5).abs() < 1e-12, "{seen:?}");
        assert_eq!(s.end(JobId(0)), None);
    }

    #[test]
    fn ended_jobs_are_forgotten_when_nothing_can_overlap_them() {
        let mut s = sharing();
        s.start(JobId(0), 0, 100, &[0, 1], 2000);
        s.start(JobId(1), 50, 100, &[2, 3], 2000);
        s.end(JobId(0));
        // Job 0's slice [0, 100] still overlaps job 1's [50, 150].
        assert_eq!(s.nodes[&0].len(), 2);
        s.end(JobId(1));
        assert!(s.nodes.is_empty());
        assert!(s.running.is_empty());
    }
}
