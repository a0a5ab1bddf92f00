//! A site's node failures (`[failures]`) in a run: a model the engine asks at its instants
//! ([`engine::Failures`]), drawing from its own seeded stream, and what the failures did, for
//! summary.json.
//!
//! On a machine of counted processors a failure strikes one processor drawn uniformly among
//! those in service: the running job holding it (each with a chance proportional to its
//! processors, walked in [`cluster::Cluster::running_jobs`]' fixed order) is killed, or none
//! when the processor was idle; and `node_processors` processors go out of service until the
//! repair ends. So a failure kills at most one job: a node shared by several small jobs would
//! kill them all, which a machine that does not place jobs on nodes cannot say.
//!
//! On a machine of node types a failure strikes one node drawn uniformly among those up (each
//! up node fails at the same rate, so the next to fail is any of them alike): every running
//! job holding a share of it is killed (Slurm kills the jobs of a node that goes down,
//! `_kill_running_job_by_node_ptr`/`kill_running_job_by_node_name` in
//! `src/slurmctld/node_mgr.c`, requeueing those that may be), and the node is out of service
//! until its repair ends ([`cluster::Cluster::set_failed_nodes`]). The work lost counts each
//! killed job's processors and GPUs over the time it had run.
//!
//! The draws (each failure's time, struck processor and repair) come in a fixed order that
//! depends only on the failures' own times, so the same seed gives the same failures under
//! every scheduler (common random numbers); only whom they strike differs.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Arc, Mutex};

use cluster::Cluster;
use config::failures::NodeFailures;
use engine::{Facility, FailureStep, Failures, Job};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;
use simtime::Time;

use crate::outages::{OutOfService, OutOfServiceKind};

/// Mixed into the run's seed for the failures' stream (so it differs from the users').
const STREAM: u64 = 0x6661_696c_7572_6573; // "failures"

/// One failure: when, until when its node was under repair, the processors it took out of
/// service (the node's), and the jobs it killed.
#[derive(Debug, Clone)]
struct FailureEvent {
    at: Time,
    repaired: Time,
    processors: u32,
    /// The node's name, on a machine of node types.
    node: Option<String>,
    killed: Vec<Killed>,
}

/// A run a failure killed: what it held and how long it had run.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Killed {
    /// Its processors.
    processors: u32,
    /// Its GPUs (on a machine of node types with GPUs; else 0).
    gpus: u32,
    /// Seconds it had run.
    ran: Time,
}

/// What the failures of one run did, as the model saw it.
#[derive(Debug, Clone, Default)]
pub(crate) struct FailureLog {
    events: Vec<FailureEvent>,
    /// Whether the machine was one of node types with GPUs (then the report gives the
    /// GPU-hours lost).
    gpus: bool,
}

/// The run's node failures as a facility: it admits every job at once and gives the engine a
/// fresh failure model per run, logging into a log it shares with the report.
#[derive(Debug, Clone)]
pub(crate) struct FailureFacility {
    spec: NodeFailures,
    seed: u64,
    log: Arc<Mutex<FailureLog>>,
}

impl FailureFacility {
    /// The failures of `spec`, drawn from the run's `seed`.
    pub(crate) fn new(spec: NodeFailures, seed: u64) -> Self {
        FailureFacility {
            spec,
            seed,
            log: Arc::default(),
        }
    }

    /// What the failures did over `[start, end)` seconds on a machine of `processors`.
    pub(crate) fn report(&self, processors: u32, start: Time, end: Time) -> FailureReport {
        let log = self.log.lock().map(|l| l.clone()).unwrap_or_default();
        FailureReport::new(&self.spec, &log, processors, start, end)
    }

    /// Every failure of the run, from the failure to the end of its repair, with the
    /// processors it took out of service on a machine of `processors` (outages.csv's rows).
    pub(crate) fn periods(&self, processors: u32) -> Vec<OutOfService> {
        let log = self.log.lock().map(|l| l.clone()).unwrap_or_default();
        log.events
            .iter()
            .map(|e| OutOfService {
                name: "failure".into(),
                kind: OutOfServiceKind::Failure,
                from: e.at,
                to: e.repaired,
                processors: e.processors.min(processors),
                node: e.node.clone(),
            })
            .collect()
    }
}

/// Refuses node failures where they are not modelled, naming `origin`: beside idle nodes
/// that power down (`saving`) or the memory-bandwidth sharing model (`sharing`), or on a
/// machine or under a rule that cannot keep processors out of service
/// ([`Cluster::check_outages`]; `rule` names the scheduler for the message).
pub(crate) fn check(
    origin: &str,
    cluster: &Cluster,
    saving: bool,
    sharing: bool,
    rule: &str,
) -> config::Result<()> {
    if saving {
        return Err(config::invalid!(
            "{origin}: failures and idle nodes that power down (`suspend_time_s`) are not modelled together yet"
        ));
    }
    if sharing {
        return Err(config::invalid!(
            "{origin}: failures and the memory-bandwidth sharing model are not modelled together"
        ));
    }
    cluster
        .check_out_of_service()
        .map_err(|e| config::invalid!("{origin}: failures: {e} ({rule})"))
}

impl Facility for FailureFacility {
    fn admit(&self, _job: &mut Job, now: Time) -> Time {
        now
    }

    fn failures(&self) -> Option<Box<dyn Failures>> {
        if let Ok(mut log) = self.log.lock() {
            log.events.clear();
        }
        Some(Box::new(FailureModel::new(
            self.spec,
            self.seed,
            Arc::clone(&self.log),
        )))
    }
}

/// One run's failures: the nodes up, those under repair, the next failure.
struct FailureModel {
    spec: NodeFailures,
    rng: Pcg64,
    /// Nodes up.
    up: u32,
    /// Repair ends of the nodes under repair, the earliest first, each with its node (on a
    /// machine of node types; 0 elsewhere).
    repairs: BinaryHeap<Reverse<(Time, u32)>>,
    /// On a machine of node types, the nodes under repair, ascending.
    down_nodes: Vec<u32>,
    /// The next failure, seconds (`Time::MAX`: none while every node is under repair).
    next_failure: Time,
    log: Arc<Mutex<FailureLog>>,
}

impl FailureModel {
    fn new(spec: NodeFailures, seed: u64, log: Arc<Mutex<FailureLog>>) -> Self {
        let mut model = FailureModel {
            spec,
            rng: Pcg64::seed_from_u64(seed ^ STREAM),
            up: spec.nodes,
            repairs: BinaryHeap::new(),
            down_nodes: Vec::new(),
            next_failure: Time::MAX,
            log,
        };
        model.next_failure = model.draw_next(0);
        model
    }

    /// An exponential draw of mean `mean` seconds, whole seconds, at least 1.
    fn exponential(&mut self, mean: f64) -> Time {
        let u: f64 = self.rng.random();
        let seconds = -(1.0 - u).ln() * mean;
        if seconds.is_finite() {
            (seconds.ceil() as Time).max(1)
        } else {
            Time::MAX / 4
        }
    }

    /// The next failure after `now`: the up nodes fail together at rate up / mtbf (memoryless,
    /// so drawn again whenever the up count changes).
    fn draw_next(&mut self, now: Time) -> Time {
        if self.up == 0 {
            return Time::MAX;
        }
        let gap = self.exponential(self.spec.mtbf_s / f64::from(self.up));
        now.saturating_add(gap)
    }

    /// On a machine of node types: the node `strike` (uniform in [0, 1)) picks among those up,
    /// in index order; it goes down, and every running job with a share of it is killed.
    /// Returns the node, its processors and the jobs killed.
    fn strike_node(
        &mut self,
        strike: f64,
        now: Time,
        cluster: &Cluster,
        pool: &cluster::NodePool,
    ) -> (u32, u32, Vec<(cluster::JobId, Killed)>) {
        let nodes = pool.capacity().len() as u32;
        let pick = ((strike * f64::from(self.up)) as u32).min(self.up.saturating_sub(1));
        // the pick-th node not down (the down ones are few, and sorted)
        let mut node = pick;
        for &down in &self.down_nodes {
            if down <= node {
                node += 1;
            }
        }
        let node = node.min(nodes.saturating_sub(1));
        if let Err(i) = self.down_nodes.binary_search(&node) {
            self.down_nodes.insert(i, node);
        }
        let killed = cluster
            .running_jobs()
            .filter_map(|(id, processors, start)| {
                let shares = cluster.node_allocation(id)?;
                shares.iter().any(|&(n, _)| n == node).then(|| {
                    let gpus = shares.iter().map(|(_, a)| a.gpus).sum();
                    (
                        id,
                        Killed {
                            processors,
                            gpus,
                            ran: (now - start).max(0),
                        },
                    )
                })
            })
            .collect();
        (node, pool.capacity()[node as usize].cpus, killed)
    }
}

/// On a machine of counted processors: the running job holding the processor `strike`
/// (uniform in [0, 1)) picks among those in service, if any (each job with a chance
/// proportional to its processors, in [`Cluster::running_jobs`]' fixed order).
fn strike_processor(strike: f64, now: Time, cluster: &Cluster) -> Vec<(cluster::JobId, Killed)> {
    let target = (strike * f64::from(cluster.in_service())) as u64;
    let mut seen = 0u64;
    for (id, processors, start) in cluster.running_jobs() {
        seen += u64::from(processors);
        if target < seen {
            let ran = (now - start).max(0);
            return vec![(
                id,
                Killed {
                    processors,
                    gpus: 0,
                    ran,
                },
            )];
        }
    }
    Vec::new()
}

impl Failures for FailureModel {
    fn next_change(&self) -> Option<Time> {
        let repair = self.repairs.peek().map(|r| r.0.0);
        let next = repair.map_or(self.next_failure, |r| r.min(self.next_failure));
        (next != Time::MAX).then_some(next)
    }

    fn apply(&mut self, now: Time, cluster: &Cluster) -> FailureStep {
        let mut step = FailureStep::default();
        let mut changed = false;
        while let Some(&Reverse((repaired, node))) = self.repairs.peek()
            && repaired <= now
        {
            self.repairs.pop();
            if let Ok(i) = self.down_nodes.binary_search(&node) {
                self.down_nodes.remove(i);
            }
            self.up += 1;
            changed = true;
        }
        if self.next_failure <= now && self.up > 0 {
            let strike: f64 = self.rng.random();
            let repair_end = now.saturating_add(self.exponential(self.spec.repair_s));
            let (node, processors, killed) = match cluster.pool() {
                Some(pool) => self.strike_node(strike, now, cluster, pool),
                None => (
                    0,
                    self.spec.node_processors,
                    strike_processor(strike, now, cluster),
                ),
            };
            step.killed.extend(killed.iter().map(|k| k.0));
            if let Ok(mut log) = self.log.lock() {
                log.gpus = cluster.pool().is_some_and(|p| p.spec().gpu_kind.is_some());
                log.events.push(FailureEvent {
                    at: now,
                    repaired: repair_end,
                    processors,
                    node: cluster
                        .pool()
                        .and_then(|p| p.spec().nodes.get(node as usize))
                        .map(|n| n.0.clone()),
                    killed: killed.into_iter().map(|k| k.1).collect(),
                });
            }
            self.up -= 1;
            self.repairs.push(Reverse((repair_end, node)));
            changed = true;
        }
        if changed {
            self.next_failure = self.draw_next(now);
        }
        step.down = (self.spec.nodes - self.up).saturating_mul(self.spec.node_processors);
        step.down_nodes.clone_from(&self.down_nodes);
        step
    }

    fn requeue_delay(&self) -> Option<Time> {
        self.spec.requeue_delay
    }
}

/// What node failures did over a run's measured window, for summary.json (`outages.failures`).
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FailureReport {
    /// Failures within the window.
    pub failures: u64,
    /// Processor-hours down for repair within the window.
    pub processor_hours_down: f64,
    /// Runs of jobs the failures killed within the window.
    pub jobs_killed: u64,
    /// Processor-hours those runs had run when killed: work lost.
    pub processor_hours_lost: f64,
    /// GPU-hours those runs had run when killed: on a machine of node types with GPUs only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_hours_lost: Option<f64>,
    /// Whether a killed job went back to the queue (`requeue`) or was lost.
    pub requeued: bool,
    /// What the failures cost, with `outage_costs` (a run of the same users without them);
    /// absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::outages::OutageCost>,
}

impl FailureReport {
    fn new(
        spec: &NodeFailures,
        log: &FailureLog,
        processors: u32,
        start: Time,
        end: Time,
    ) -> FailureReport {
        let mut report = FailureReport {
            failures: 0,
            processor_hours_down: 0.0,
            jobs_killed: 0,
            processor_hours_lost: 0.0,
            gpu_hours_lost: log.gpus.then_some(0.0),
            requeued: spec.requeue_delay.is_some(),
            cost: None,
        };
        for event in &log.events {
            let (at, repaired) = (event.at, event.repaired);
            let node = f64::from(event.processors.min(processors));
            let down = repaired.min(end) - at.max(start);
            if down > 0 {
                report.processor_hours_down += down as f64 * node / 3600.0;
            }
            if at < start || at >= end {
                continue;
            }
            report.failures += 1;
            for killed in &event.killed {
                report.jobs_killed += 1;
                report.processor_hours_lost +=
                    killed.ran as f64 * f64::from(killed.processors) / 3600.0;
                if let Some(lost) = report.gpu_hours_lost.as_mut() {
                    *lost += killed.ran as f64 * f64::from(killed.gpus) / 3600.0;
                }
            }
        }
        report
    }

    /// The console's line (and, with `outage_costs`, one for what the failures cost).
    pub fn line(&self) -> String {
        let cost = (self.cost.as_ref()).map_or_else(String::new, |c| c.line("[failures]"));
        let gpus =
            (self.gpu_hours_lost).map_or_else(String::new, |g| format!(" and {g:.1} GPU-hours"));
        let line = format!(
            "  {:<12} {} ({:.1} processor-hours down), {} killed ({}), {:.1} processor-hours{gpus} of work lost\n",
            "failures",
            config::count(self.failures, "node failure"),
            self.processor_hours_down,
            config::count(self.jobs_killed, "job"),
            if self.requeued { "requeued" } else { "lost" },
            self.processor_hours_lost
        );
        line + &cost
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(nodes: u32, mtbf_s: f64, repair_s: f64) -> NodeFailures {
        NodeFailures {
            node_processors: 4,
            nodes,
            mtbf_s,
            repair_s,
            requeue_delay: Some(121),
        }
    }

    fn idle(processors: u32) -> Cluster {
        let easy = schedulers::REGISTRY
            .spec("easy", &Default::default())
            .map(|s| s.build());
        match easy {
            Ok(s) => Cluster::new(processors, s),
            Err(e) => panic!("{e}"),
        }
    }

    /// Runs a model of `spec` from `seed` alone on an idle machine up to `horizon`: (failure
    /// times, the most nodes down at once).
    fn drive(spec: NodeFailures, seed: u64, horizon: Time) -> (Vec<Time>, u32) {
        let log = Arc::new(Mutex::new(FailureLog::default()));
        let mut model = FailureModel::new(spec, seed, Arc::clone(&log));
        let mut cluster = idle(spec.nodes * spec.node_processors);
        let mut most_down = 0;
        while let Some(t) = model.next_change().filter(|&t| t < horizon) {
            let step = model.apply(t, &cluster);
            assert!(step.killed.is_empty(), "nothing runs");
            assert_eq!(step.down, model.repairs.len() as u32 * spec.node_processors);
            assert!(
                step.down_nodes.is_empty(),
                "a machine of counted processors"
            );
            cluster.set_failed(t, step.down);
            most_down = most_down.max(step.down / spec.node_processors);
        }
        let failures = match log.lock() {
            Ok(log) => log.events.iter().map(|e| e.at).collect(),
            Err(_) => Vec::new(),
        };
        (failures, most_down)
    }

    #[test]
    fn failures_come_at_the_rate_of_the_nodes_up() {
        // 10 nodes failing every 1,000 s each, repaired in 100 s on average: in the long run a
        // node is up 1000 / 1100 of the time, so about 10 / 1100 failures a second
        let (f, most_down) = drive(spec(10, 1000.0, 100.0), 7, 1_000_000);
        assert!(most_down > 1 && most_down <= 10, "{most_down}");
        let expected = 10.0 * 1_000_000.0 / 1100.0;
        let ratio = f.len() as f64 / expected;
        assert!(
            (ratio - 1.0).abs() < 0.05,
            "{} failures, {expected:.0} expected",
            f.len()
        );
    }

    #[test]
    fn the_same_seed_gives_the_same_failures_and_another_seed_others() {
        let run = |seed| drive(spec(4, 5000.0, 500.0), seed, 200_000);
        assert_eq!(run(3), run(3));
        assert_ne!(run(3).0, run(4).0);
    }

    #[test]
    fn the_report_counts_what_lies_in_the_window() {
        let log = FailureLog {
            events: vec![
                // before the window, repaired inside it: 100 s down inside, not counted
                FailureEvent {
                    at: 0,
                    repaired: 1100,
                    processors: 4,
                    node: None,
                    killed: vec![Killed {
                        processors: 8,
                        gpus: 0,
                        ran: 50,
                    }],
                },
                // inside, killing a 2-processor job that had run 3,600 s
                FailureEvent {
                    at: 2000,
                    repaired: 2500,
                    processors: 4,
                    node: None,
                    killed: vec![Killed {
                        processors: 2,
                        gpus: 0,
                        ran: 3600,
                    }],
                },
                // inside, on an idle node
                FailureEvent {
                    at: 3000,
                    repaired: 9000,
                    processors: 4,
                    node: None,
                    killed: Vec::new(),
                },
            ],
            gpus: false,
        };
        let r = FailureReport::new(&spec(4, 1.0, 1.0), &log, 16, 1000, 5000);
        assert_eq!(r.failures, 2);
        assert_eq!(r.jobs_killed, 1);
        assert!((r.processor_hours_lost - 2.0).abs() < 1e-12);
        // (100 + 500 + 2000) s of a 4-processor node
        assert!((r.processor_hours_down - 2600.0 * 4.0 / 3600.0).abs() < 1e-12);
        assert!(r.requeued);
    }
}
