//! Properties every scheduler must have, over random workloads (proptest). The tests iterate
//! over every valid composition of the registries (`cluster::order::ORDERS`,
//! `cluster::backfill::RULES`, `cluster::predict::PREDICTORS`), which includes every preset of
//! `cluster::POLICIES`, so a newly registered order, rule or predictor is tested here with no
//! further change: a scheduler never uses more processors than the machine, its reservations
//! are kept by its own backfilling, and every job eventually runs.
//!
//! The event loop here is a small copy of the engine's (the cluster crate cannot depend on
//! it): at each instant, the jobs ending then finish, the jobs submitted then arrive, expired
//! predictions are corrected, and one scheduling pass runs. A job runs for its runtime, killed
//! at its estimate.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::collections::BTreeMap;

use cluster::{
    Cluster, Composition, JobId, JobRequest, PolicyParams, Predictor, SchedulerSpec, Time,
};
use proptest::prelude::*;

/// A job of a workload: what the user submits, and how long it really runs (seconds).
#[derive(Debug, Clone, Copy)]
struct Job {
    submit: Time,
    processors: u32,
    runtime: Time,
    estimate: Time,
    user: i64,
}

/// A random machine and workload: bursts of jobs at equal times, zero runtimes, estimates both
/// above and below the runtime (so some jobs are killed), a few users (for predictions).
fn workload() -> impl Strategy<Value = (u32, Vec<Job>)> {
    (1u32..=32).prop_flat_map(|machine| {
        let job = (
            prop_oneof![3 => Just(0i64), 2 => 1i64..600],
            1..=machine,
            prop_oneof![1 => Just(0i64), 6 => 1i64..2000],
            prop_oneof![2 => Just(None), 3 => (0i64..2500).prop_map(Some)],
        );
        (Just(machine), proptest::collection::vec(job, 1..80)).prop_map(|(machine, raw)| {
            let mut submit = 0;
            let jobs = raw
                .into_iter()
                .enumerate()
                .map(|(i, (gap, processors, runtime, estimate))| {
                    submit += gap;
                    Job {
                        submit,
                        processors,
                        runtime,
                        estimate: estimate.unwrap_or(runtime),
                        user: (i % 5) as i64,
                    }
                })
                .collect();
            (machine, jobs)
        })
    })
}

/// A run of one policy on one workload.
struct Run {
    /// What the run violated (empty: nothing).
    problems: Vec<String>,
    /// Reservations made (time of the pass, reserved job, shadow time).
    reservations: Vec<(Time, JobId, Time)>,
}

/// Every valid composition of the registered parts (default parameters).
fn schedulers() -> Vec<SchedulerSpec> {
    let mut specs = Vec::new();
    for order in cluster::order::ORDERS {
        for rule in cluster::backfill::RULES {
            for predictor in cluster::predict::PREDICTORS {
                let choice = Composition {
                    policy: None,
                    order: Some(order.name),
                    backfill: Some(rule.name),
                    predictor: Some(predictor.name),
                };
                if let Ok(spec) = SchedulerSpec::compose(choice, PolicyParams::default()) {
                    specs.push(spec);
                }
            }
        }
    }
    specs
}

fn run(spec: SchedulerSpec, machine: u32, jobs: &[Job]) -> Run {
    let mut cluster = Cluster::new(machine, spec.build());
    // A reservation is a promise only when the reserved job stays at the head (arrival order)
    // and the running jobs end by the plan (user estimates are upper bounds; predictions are
    // not, and a new priority may hand the reservation to another job).
    let scheduler = cluster.scheduler();
    let promises = scheduler.order.is_arrival_order()
        && matches!(
            scheduler.predictor,
            Predictor::UserEstimate | Predictor::Exact
        );
    let mut problems = Vec::new();
    let mut ends: BTreeMap<(Time, usize), JobId> = BTreeMap::new();
    let mut starts: Vec<Option<Time>> = vec![None; jobs.len()];
    let mut reservations: Vec<(Time, JobId, Time)> = Vec::new();
    let mut used = 0u32;
    let mut next_job = 0;
    let mut sequence = 0; // end events at one instant apply in the order they were created
    let mut instants = 0;
    loop {
        let next = [
            ends.keys().next().map(|k| k.0),
            jobs.get(next_job).map(|j| j.submit),
            cluster.next_prediction_expiry(),
            cluster.next_wakeup(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = next else { break };
        instants += 1;
        if instants > 100 * jobs.len() + 100 {
            problems.push(format!("no progress at {now}"));
            break;
        }
        while let Some((&(end, sequence), &id)) = ends.first_key_value() {
            if end != now {
                break;
            }
            ends.remove(&(end, sequence));
            cluster.finish(id, now).unwrap();
            used -= jobs[id.0 as usize].processors;
        }
        while let Some(job) = jobs.get(next_job).filter(|j| j.submit == now) {
            let request = JobRequest {
                id: JobId(next_job as u32),
                submit: job.submit,
                processors: job.processors,
                estimate: job.estimate,
                user: job.user,
                group: -1,
                partition: -1,
                queue: -1,
            };
            cluster.submit_with_runtime(request, job.runtime).unwrap();
            next_job += 1;
        }
        cluster.correct_expired_predictions(now);
        let started = cluster.schedule(now).to_vec();
        for s in started {
            let index = s.id.0 as usize;
            let job = jobs[index];
            if starts[index].replace(now).is_some() {
                problems.push(format!("{:?} started twice", s.id));
            }
            if now < job.submit || s.start != now || s.kill_time != now + job.estimate {
                problems.push(format!("{s:?} of {job:?} at {now}"));
            }
            used += job.processors;
            ends.insert((now + job.runtime.min(job.estimate), sequence), s.id);
            sequence += 1;
        }
        if used > machine || used + cluster.free_processors() != machine {
            problems.push(format!(
                "{now}: {used} processors in use, {} free, on {machine}",
                cluster.free_processors()
            ));
        }
        if let Some(r) = cluster.last_reservation() {
            // Whatever the pass backfilled left the reserved job its processors at the shadow
            // time, by the plan (the running jobs' expected ends).
            match cluster.queue().find(|j| j.id == r.job) {
                None => problems.push(format!("{now}: reserved {:?} is not waiting", r.job)),
                Some(reserved) => {
                    let back: u32 = cluster
                        .expected_releases()
                        .take_while(|&(end, _)| end <= r.shadow_time)
                        .map(|(_, processors)| processors)
                        .sum();
                    if cluster.free_processors() + back < reserved.processors {
                        problems.push(format!("{now}: backfilling took {r:?}'s processors"));
                    }
                }
            }
            reservations.push((now, r.job, r.shadow_time));
        }
    }
    for (index, start) in starts.iter().enumerate() {
        if start.is_none() {
            problems.push(format!("job {index} never ran"));
        }
    }
    if cluster.waiting() + cluster.running() != 0 {
        problems.push("jobs left in the machine".to_string());
    }
    if promises {
        for &(at, job, shadow) in &reservations {
            let start = starts[job.0 as usize].unwrap_or(Time::MAX);
            if start > shadow {
                problems.push(format!(
                    "{job:?} reserved at {at} for {shadow} started at {start}"
                ));
            }
        }
    }
    if let Some(usage) = cluster.policy_usage() {
        let counted: u64 = usage.jobs_started.iter().sum();
        if counted != jobs.len() as u64 {
            problems.push(format!(
                "policy usage counts {counted} starts of {}",
                jobs.len()
            ));
        }
    }
    Run {
        problems,
        reservations,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every composition: never more processors than the machine, every job runs once after
    /// its submission, EASY-style reservations are never delayed by backfilling.
    #[test]
    fn every_scheduler_keeps_the_machine_and_its_promises((machine, jobs) in workload()) {
        for spec in schedulers() {
            let problems = run(spec.clone(), machine, &jobs).problems;
            prop_assert!(problems.is_empty(), "{}: {:?}", spec.label(), problems);
        }
    }
}

#[test]
fn reservations_are_made_and_checked() {
    // The property above must not pass vacuously: the EASY family reserves on this workload
    // (job 1 waits for job 0; job 2 backfills).
    let job = |submit, processors, runtime| Job {
        submit,
        processors,
        runtime,
        estimate: runtime,
        user: 0,
    };
    let jobs = [job(0, 3, 100), job(1, 4, 10), job(2, 1, 50)];
    let all = schedulers();
    // Every preset is among the compositions tested.
    for policy in cluster::POLICIES {
        assert!(
            all.iter()
                .any(|s| s.preset().is_some_and(|p| p.name == policy.name)),
            "{}",
            policy.name
        );
    }
    for spec in all {
        let run = run(spec.clone(), 4, &jobs);
        assert!(
            run.problems.is_empty(),
            "{}: {:?}",
            spec.label(),
            run.problems
        );
        if spec.label() == "easy" {
            let times: Vec<Time> = run.reservations.iter().map(|r| r.0).collect();
            assert_eq!(times, [1, 2, 52]);
            assert!(
                run.reservations
                    .iter()
                    .all(|r| (r.1, r.2) == (JobId(1), 100))
            );
        }
    }
}
