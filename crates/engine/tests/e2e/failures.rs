//! Node failures over random workloads ([`engine::Failures`]): a failure kills the job it
//! strikes at once, no job starts on processors down for repair, a requeued job starts again
//! only after its requeue delay, a lost one ends at its failure, and every job has a record.

use std::sync::{Arc, Mutex};

use cluster::Cluster;
use engine::{Facility, FailureStep, Failures, Job, Replay, SimOptions, Time, simulate_with};
use proptest::prelude::*;

use crate::common::{spec, workload};

/// A kill as the model made it: (job index, its run's start, the failure's time).
type Kill = (u32, Time, Time);

/// Failures at given times: each strikes the processor at a given fraction of those in service
/// (the running job holding it dies) and takes `node` processors down for its repair.
#[derive(Debug, Clone)]
struct Scripted {
    node: u32,
    /// (time, fraction in [0, 1), repair seconds), by time.
    failures: Vec<(Time, f64, Time)>,
    requeue_delay: Option<Time>,
    kills: Arc<Mutex<Vec<Kill>>>,
}

struct Model {
    script: Scripted,
    next: usize,
    repairs: Vec<Time>,
}

impl Failures for Model {
    fn next_change(&self) -> Option<Time> {
        let failure = self.script.failures.get(self.next).map(|f| f.0);
        failure
            .into_iter()
            .chain(self.repairs.iter().copied())
            .min()
    }

    fn apply(&mut self, now: Time, cluster: &Cluster) -> FailureStep {
        let mut step = FailureStep::default();
        self.repairs.retain(|&t| t > now);
        while let Some(&(at, fraction, repair)) = self.script.failures.get(self.next) {
            if at > now {
                break;
            }
            self.next += 1;
            let target = (fraction * f64::from(cluster.in_service())) as u64;
            let mut seen = 0u64;
            for (id, processors, start) in cluster.running_jobs() {
                seen += u64::from(processors);
                if target < seen {
                    if !step.killed.contains(&id) {
                        step.killed.push(id);
                        self.script.kills.lock().unwrap().push((id.0, start, now));
                    }
                    break;
                }
            }
            self.repairs.push(now + repair);
        }
        step.down = (self.repairs.len() as u32 * self.script.node).min(cluster.processors());
        step
    }

    fn requeue_delay(&self) -> Option<Time> {
        self.script.requeue_delay
    }
}

impl Facility for Scripted {
    fn admit(&self, _job: &mut Job, now: Time) -> Time {
        now
    }

    fn failures(&self) -> Option<Box<dyn Failures>> {
        Some(Box::new(Model {
            script: self.clone(),
            next: 0,
            repairs: Vec::new(),
        }))
    }
}

impl Scripted {
    /// Processors down for repair at `t`.
    fn down_at(&self, t: Time) -> u32 {
        let nodes = self
            .failures
            .iter()
            .filter(|f| f.0 <= t && t < f.0 + f.2)
            .count() as u32;
        nodes * self.node
    }
}

/// Up to five failures over the first 20,000 s, each taking 1 to `machine / 2` processors
/// (at least 1) for 1 to 3,000 s; requeued after 0 to 300 s, or lost.
fn failures(machine: u32) -> impl Strategy<Value = Scripted> {
    (
        1..=(machine / 2).max(1),
        proptest::collection::vec((0i64..20_000, 0.0f64..1.0, 1i64..3_000), 0..6),
        prop_oneof![Just(None), (0i64..300).prop_map(Some)],
    )
        .prop_map(|(node, mut failures, requeue_delay)| {
            failures.sort_by_key(|f| f.0);
            Scripted {
                node,
                failures,
                requeue_delay,
                kills: Arc::default(),
            }
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn no_job_runs_on_processors_down_and_a_failure_kills_what_it_strikes(
        ((machine, jobs), script) in workload(1..2000)
            .prop_flat_map(|(machine, jobs)| (Just((machine, jobs)), failures(machine))),
        policy in prop_oneof![
            Just("fcfs"), Just("easy"), Just("easy-sjbf"), Just("easy-plus"), Just("slurm")
        ],
    ) {
        let mut cluster = Cluster::new(machine, spec(policy).build());
        let facility = Arc::new(script.clone());
        let options = SimOptions {
            facility: Some(facility.clone()),
            ..Default::default()
        };
        let mut replay = Replay::from_jobs(machine, jobs.clone());
        let records = simulate_with(&mut cluster, &mut replay, &mut (), &options).unwrap();
        // every job has a record, each once
        prop_assert_eq!(records.len(), jobs.len());
        let kills = script.kills.lock().unwrap().clone();
        // every run, cut short or not: (processors, start, end)
        let mut runs: Vec<(u32, Time, Time)> = records
            .iter()
            .filter(|r| r.end > r.start)
            .map(|r| (r.processors, r.start, r.end))
            .collect();
        for &(index, start, at) in &kills {
            let record = &records[index as usize];
            let failed = record.failed.unwrap();
            match script.requeue_delay {
                // a requeued job ran again after its delay, from scratch
                Some(delay) => {
                    prop_assert!(!failed.lost);
                    prop_assert!(record.start >= at + delay, "job {} restarted at {} after a failure at {at}", record.job_id, record.start);
                    if at > start {
                        runs.push((record.processors, start, at));
                    }
                }
                // a lost job ended at its failure
                None => {
                    prop_assert!(failed.lost);
                    prop_assert_eq!(record.end, at);
                    prop_assert_eq!(failed.runs, 1);
                }
            }
        }
        // the records count each job's cut runs and the seconds they ran
        for (index, record) in records.iter().enumerate() {
            let mine: Vec<&Kill> = kills.iter().filter(|k| k.0 as usize == index).collect();
            match record.failed {
                None => prop_assert!(mine.is_empty()),
                Some(f) => {
                    prop_assert_eq!(f.runs as usize, mine.len());
                    prop_assert_eq!(f.lost_seconds, mine.iter().map(|k| k.2 - k.1).sum::<Time>());
                }
            }
        }
        // a job starts only into processors in service: what runs just after its start fits
        // in the machine less the processors down (jobs running when a failure took processors
        // keep theirs, and block every start until they have ended)
        let running = |t: Time| -> u32 {
            runs.iter().filter(|r| r.1 <= t && t < r.2).map(|r| r.0).sum()
        };
        for &(_, start, _) in &runs {
            let in_service = machine.saturating_sub(script.down_at(start));
            prop_assert!(
                running(start) <= in_service,
                "{policy}: {} processors run from {start}, {in_service} in service",
                running(start)
            );
        }
        // never more than the machine
        for &(_, start, _) in &runs {
            prop_assert!(running(start) <= machine);
        }
    }

    #[test]
    fn rules_that_plan_running_jobs_ends_refuse_failures(
        policy in prop_oneof![Just("conservative"), Just("dynp")],
    ) {
        let mut cluster = Cluster::new(4, spec(policy).build());
        let options = SimOptions {
            facility: Some(Arc::new(Scripted {
                node: 1,
                failures: vec![(10, 0.5, 10)],
                requeue_delay: None,
                kills: Arc::default(),
            })),
            ..Default::default()
        };
        let mut replay = Replay::from_jobs(4, vec![Job { job_id: 1, processors: 1, runtime: 5, estimate: 5, ..Job::default() }]);
        let refused = simulate_with(&mut cluster, &mut replay, &mut (), &options);
        prop_assert!(matches!(refused, Err(engine::EngineError::Failures(_))));
    }
}

/// The same failures under two rules strike at the same times: only whom they strike differs.
/// And a failure that strikes an idle processor kills nothing.
#[test]
fn a_failure_on_an_idle_machine_kills_nothing() {
    let script = Scripted {
        node: 2,
        failures: vec![(5, 0.9, 100)],
        requeue_delay: Some(121),
        kills: Arc::default(),
    };
    // one 1-processor job on 4 processors: a strike at 90 % of the machine finds it idle
    let jobs = vec![Job {
        job_id: 1,
        processors: 1,
        runtime: 50,
        estimate: 60,
        ..Job::default()
    }];
    let mut cluster = Cluster::new(4, spec("easy").build());
    let options = SimOptions {
        facility: Some(Arc::new(script.clone())),
        ..Default::default()
    };
    let mut replay = Replay::from_jobs(4, jobs);
    let records = simulate_with(&mut cluster, &mut replay, &mut (), &options).unwrap();
    assert_eq!(records[0].end, 50);
    assert_eq!(records[0].failed, None);
    assert!(script.kills.lock().unwrap().is_empty());
}
