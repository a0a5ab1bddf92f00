//! CREASY's search mode decides exactly as sorting the queue at every pass: the cluster keeps a
//! CREASY queue in arrival order and searches its priority order (EASY in queue order and no
//! backfilling), and [`Cluster::set_priority_search`]`(false)` gives the straightforward path
//! (the queue sorted by priority at every pass). On random workloads, short ones and ones whose
//! queue grows to hundreds and thousands of jobs, both must start the same jobs at the same
//! passes in the same order with the same `backfilled` flags and kill times, make the same
//! reservations, and show the same queue order after every pass.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::collections::BTreeMap;

use cluster::backfill::{Easy, NoBackfill};
use cluster::{
    Backfill, BackfillOrder, Cluster, Creasy, JobId, JobRequest, Nodes, Predictor, Reservation,
    Scheduler, Selection, Started, Time,
};
use proptest::prelude::*;

/// A job of a workload (seconds).
#[derive(Debug, Clone, Copy)]
struct Job {
    submit: Time,
    processors: u32,
    runtime: Time,
    estimate: Time,
    user: i64,
}

/// What one pass decided and showed: its instant, the jobs it started, its reservation and the
/// queue order after it.
type PassRecord = (Time, Vec<Started>, Option<Reservation>, Vec<JobId>);

/// The machines and schedulers compared: CREASY of weight `alpha` under EASY in queue order or
/// no backfilling, with each predictor, on processors only or on nodes (First Fit, which counts
/// processors as the search does).
fn schedulers(alpha: f64) -> Vec<(Scheduler, Option<Nodes>)> {
    let mut all = Vec::new();
    for predictor in [
        Predictor::UserEstimate,
        Predictor::RecentUserRuntimes,
        Predictor::Exact,
    ] {
        for easy in [true, false] {
            for nodes in [
                None,
                Some(Nodes {
                    processors_per_node: 4,
                    selection: Selection::FirstFit,
                }),
            ] {
                let backfill: Box<dyn Backfill> = if easy {
                    Box::new(Easy::new(BackfillOrder::Queue))
                } else {
                    Box::new(NoBackfill)
                };
                let scheduler = Scheduler {
                    predictor,
                    ..Scheduler::new(Box::new(Creasy { alpha }), backfill)
                };
                all.push((scheduler, nodes));
            }
        }
    }
    all
}

/// Runs `jobs` (sorted by submit) on a machine of `machine` processors and records every pass.
/// The event loop of `policies.rs`: at each instant the jobs ending then finish, the jobs
/// submitted then arrive, expired predictions are corrected, one pass runs.
fn run(
    scheduler: Scheduler,
    nodes: Option<Nodes>,
    search: bool,
    machine: u32,
    jobs: &[Job],
) -> Vec<PassRecord> {
    let mut cluster = match nodes {
        Some(nodes) => Cluster::with_nodes(machine, scheduler, nodes).unwrap(),
        None => Cluster::new(machine, scheduler),
    };
    cluster.set_priority_search(search);
    assert_eq!(
        cluster.priority_search(),
        search,
        "search mode is used when allowed"
    );
    let mut passes = Vec::new();
    let mut ends: BTreeMap<(Time, usize), JobId> = BTreeMap::new();
    let mut next_job = 0;
    let mut sequence = 0;
    loop {
        let next = [
            ends.keys().next().map(|k| k.0),
            jobs.get(next_job).map(|j| j.submit),
            cluster.next_prediction_expiry(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = next else { break };
        while let Some((&(end, seq), &id)) = ends.first_key_value() {
            if end != now {
                break;
            }
            ends.remove(&(end, seq));
            cluster.finish(id, now).unwrap();
        }
        while let Some(job) = jobs.get(next_job).filter(|j| j.submit == now) {
            let request = JobRequest {
                array_task: Default::default(),
                reservation: Default::default(),
                shape: Default::default(),
                id: JobId(next_job as u32),
                submit: job.submit,
                processors: job.processors,
                estimate: job.estimate,
                user: job.user,
                group: -1,
                partition: -1,
                queue: -1,
                extra: cluster::Extra::NONE,
            };
            cluster.submit_with_runtime(request, job.runtime).unwrap();
            next_job += 1;
        }
        cluster.correct_expired_predictions(now);
        let started = cluster.schedule(now).to_vec();
        for s in &started {
            let job = jobs[s.id.0 as usize];
            ends.insert(
                (now.saturating_add(job.runtime.min(job.estimate)), sequence),
                s.id,
            );
            sequence += 1;
        }
        passes.push((
            now,
            started,
            cluster.last_reservation(),
            cluster.queue().map(|j| j.id).collect(),
        ));
    }
    assert_eq!(cluster.waiting() + cluster.running(), 0, "every job ran");
    passes
}

/// Every scheduler of `schedulers(alpha)`, searched and sorted, on one workload.
fn compare(alpha: f64, machine: u32, jobs: &[Job]) -> Result<(), TestCaseError> {
    for ((searched, nodes), (sorted, _)) in schedulers(alpha).into_iter().zip(schedulers(alpha)) {
        let label = format!("{searched:?} on {nodes:?}");
        let got = run(searched, nodes, true, machine, jobs);
        let expected = run(sorted, nodes, false, machine, jobs);
        prop_assert_eq!(got.len(), expected.len(), "{}", label);
        for (got, expected) in got.iter().zip(&expected) {
            prop_assert_eq!(got, expected, "{}", label);
        }
    }
    Ok(())
}

/// Estimates: zero, the runtime, a multiple of it, or huge (beyond the search tree's ceiling
/// of 2^32 - 1 s).
fn estimate(runtime: Time, kind: u8) -> Time {
    match kind {
        0 => 0,
        1 => runtime,
        2 => runtime.saturating_mul(7),
        _ => 10_000_000_000,
    }
}

/// Short random workloads: bursts of jobs sharing a submit time, zero runtimes, every kind
/// of estimate, a few users (for predictions).
fn workload() -> impl Strategy<Value = (u32, Vec<Job>)> {
    (4u32..=32).prop_flat_map(|machine| {
        let job = (
            prop_oneof![3 => Just(0i64), 2 => 1i64..600],
            1..=machine,
            prop_oneof![1 => Just(0i64), 6 => 1i64..3000],
            prop_oneof![1 => Just(0u8), 4 => Just(1u8), 3 => Just(2u8), 1 => Just(3u8)],
        );
        (Just(machine), proptest::collection::vec(job, 1..100)).prop_map(|(machine, raw)| {
            let mut submit = 0;
            let jobs = raw
                .into_iter()
                .enumerate()
                .map(|(i, (gap, processors, runtime, kind))| {
                    submit += gap;
                    Job {
                        submit,
                        processors,
                        runtime,
                        estimate: estimate(runtime, kind),
                        user: (i % 7) as i64,
                    }
                })
                .collect();
            (machine, jobs)
        })
    })
}

/// Saturating workloads: jobs arrive in bursts much faster than the machine runs them, so the
/// queue grows to hundreds or thousands of jobs (the case search mode is for), mostly small
/// and a few wide, with short and long estimates.
fn long_queue() -> impl Strategy<Value = (u32, Vec<Job>)> {
    let job = (
        prop_oneof![4 => Just(0i64), 1 => 1i64..120],
        prop_oneof![6 => 1u32..4, 2 => 4u32..17, 1 => 17u32..=64],
        prop_oneof![1 => Just(0i64), 6 => 1i64..20_000],
        prop_oneof![1 => Just(0u8), 4 => Just(1u8), 4 => Just(2u8), 1 => Just(3u8)],
    );
    proptest::collection::vec(job, 200..1500).prop_map(|raw| {
        let mut submit = 0;
        let jobs = raw
            .into_iter()
            .enumerate()
            .map(|(i, (gap, processors, runtime, kind))| {
                submit += gap;
                Job {
                    submit,
                    processors,
                    runtime,
                    estimate: estimate(runtime, kind),
                    user: (i % 11) as i64,
                }
            })
            .collect();
        (64, jobs)
    })
}

/// CREASY's weights: 0 (plain waiting time), tiny, the paper's, huge.
fn alpha() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0f64),
        Just(1e-300f64),
        1500.0f64..10_000.0,
        Just(6000.0f64),
        Just(1e9f64),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// Short workloads: search mode and the sorted queue decide alike.
    #[test]
    fn search_mode_decides_as_the_sorted_queue((machine, jobs) in workload(), alpha in alpha()) {
        compare(alpha, machine, &jobs)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Long queues: search mode and the sorted queue decide alike.
    #[test]
    fn search_mode_decides_as_the_sorted_queue_on_long_queues(
        (machine, jobs) in long_queue(),
        alpha in alpha(),
    ) {
        compare(alpha, machine, &jobs)?;
    }
}

#[test]
fn search_mode_is_used_and_queues_grow_long() {
    // The property above must not pass vacuously: this workload queues hundreds of jobs, and
    // on it search mode must give the schedule of the sorted queue.
    let jobs: Vec<Job> = (0..600)
        .map(|i| Job {
            submit: i / 10 * 30,
            processors: 1 + (i as u32 * 7) % 16,
            runtime: 500 + (i * 37) % 4000,
            estimate: 900 + (i * 53) % 9000,
            user: i % 5,
        })
        .collect();
    let passes = run(Scheduler::creasy(6000.0), None, true, 32, &jobs);
    let longest = passes.iter().map(|p| p.3.len()).max().unwrap();
    assert!(longest > 300, "{longest}");
    let sorted = run(Scheduler::creasy(6000.0), None, false, 32, &jobs);
    assert_eq!(passes, sorted);
    // Some jobs were backfilled, past a reservation.
    assert!(passes.iter().flat_map(|p| &p.1).any(|s| s.backfilled));
    assert!(passes.iter().any(|p| p.2.is_some()));
}
