//! The fast path against the plain loop: the same starts (time, flag, order) and, after every
//! pass, the same planned start for every waiting job.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::Conservative;
use super::fast::Stats;
use crate::{
    Arrival, Backfill, Cluster, JobId, JobRequest, Predictor, QueueOrder, Scheduler, ShortestFirst,
    Started, Time,
};

/// A job of a test workload: submit, processors, estimate, runtime (seconds; the job ends at
/// start + min(runtime, estimate)).
#[derive(Debug, Clone, Copy)]
struct Spec {
    submit: Time,
    processors: u32,
    estimate: Time,
    runtime: Time,
}

/// A cluster planning with the fast path from the first pass (told the order is arrival
/// order).
fn fast_cluster(processors: u32) -> Cluster {
    switching_cluster(processors, 0, 0)
}

/// A cluster whose fast path plans from `fast_from` waiting jobs and hands back below
/// `plain_below`.
fn switching_cluster(processors: u32, fast_from: usize, plain_below: usize) -> Cluster {
    Cluster::new(
        processors,
        Scheduler::new(
            Box::new(Arrival),
            Box::new(Conservative::with_bounds(fast_from, plain_below)),
        ),
    )
}

/// A cluster planning with the plain loop: the same scheduler, never told the order.
fn plain_cluster(processors: u32, order: Box<dyn QueueOrder>) -> Cluster {
    Cluster::new(
        processors,
        Scheduler {
            order,
            backfill: Box::new(Conservative::new()),
            predictor: Predictor::UserEstimate,
        },
    )
}

fn rule(cluster: &Cluster) -> &Conservative {
    cluster
        .scheduler()
        .backfill
        .as_any()
        .and_then(|a| a.downcast_ref::<Conservative>())
        .expect("a conservative cluster")
}

/// What a run did: every pass's starts, and the number of passes.
#[derive(Debug, Default, PartialEq, Eq)]
struct Run {
    starts: Vec<Started>,
    passes: usize,
    /// Passes after which the first cluster planned with another implementation than after
    /// the pass before.
    switches: usize,
}

/// Runs `jobs` (ids in submit order, as the engine numbers them) on `a` and `b` as the engine
/// would (ends first, then arrivals, then a pass), comparing after every pass the jobs started
/// and every waiting job's planned start; `skip` tells the instants with events but no pass.
/// Returns what `a` did.
fn compare(a: &mut Cluster, b: &mut Cluster, jobs: &[Spec], skip: &dyn Fn(Time) -> bool) -> Run {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| jobs[i].submit);
    let mut next = 0;
    let mut ends: BinaryHeap<Reverse<(Time, u64, JobId)>> = BinaryHeap::new();
    let mut sequence = 0;
    let mut run = Run::default();
    let mut was_fast = false;
    loop {
        let arrival = order.get(next).map(|&i| jobs[i].submit);
        let end = ends.peek().map(|Reverse((t, _, _))| *t);
        let Some(now) = [arrival, end].into_iter().flatten().min() else {
            break;
        };
        while let Some(&Reverse((t, _, id))) = ends.peek() {
            if t != now {
                break;
            }
            ends.pop();
            a.finish(id, now).expect("running");
            b.finish(id, now).expect("running");
        }
        while order.get(next).is_some_and(|&i| jobs[i].submit == now) {
            let spec = jobs[order[next]];
            let job = JobRequest {
                array_task: Default::default(),
                reservation: Default::default(),
                shape: Default::default(),
                id: JobId(next as u32),
                submit: spec.submit,
                processors: spec.processors,
                estimate: spec.estimate,
                user: 0,
                group: -1,
                partition: -1,
                queue: -1,
                extra: crate::Extra::NONE,
            };
            a.submit(job).expect("valid");
            b.submit(job).expect("valid");
            next += 1;
        }
        if skip(now) {
            continue;
        }
        let started = a.schedule(now).to_vec();
        assert_eq!(started, b.schedule(now), "starts at {now}");
        run.passes += 1;
        for s in &started {
            let spec = jobs[order[s.id.0 as usize]];
            let end = (s.start + spec.runtime).min(s.kill_time);
            ends.push(Reverse((end, sequence, s.id)));
            sequence += 1;
        }
        run.starts.extend(started);
        let waiting_a: Vec<JobId> = a.queue().map(|j| j.id).collect();
        let waiting_b: Vec<JobId> = b.queue().map(|j| j.id).collect();
        assert_eq!(waiting_a, waiting_b, "queues at {now}");
        for id in waiting_a {
            assert_eq!(
                a.planned_start(id),
                b.planned_start(id),
                "planned start of {id:?} at {now}"
            );
        }
        let conservative = rule(a);
        if let Some(fast) = conservative.fast() {
            fast.check(&conservative.planned);
        }
        let is_fast = conservative.fast().is_some();
        if run.passes > 1 && is_fast != was_fast {
            run.switches += 1;
        }
        was_fast = is_fast;
    }
    run
}

/// Runs `jobs` on the fast path and the plain loop; returns the fast path's counts.
fn fast_against_plain(processors: u32, jobs: &[Spec]) -> Stats {
    let mut a = fast_cluster(processors);
    let mut b = plain_cluster(processors, Box::new(Arrival));
    compare(&mut a, &mut b, jobs, &|_| false);
    rule(&a)
        .fast()
        .expect("the fast path planned throughout")
        .stats()
        .clone()
}

/// A tiny deterministic generator.
struct Lcg(u64);

impl Lcg {
    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n.max(1)
    }
}

/// The shapes of workload the randomized comparisons draw from.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// Arrivals spread out, sizes and estimates varied, most jobs ending early.
    Mixed,
    /// Bursts on a small machine: long queues (hundreds of jobs).
    LongQueue,
    /// Estimates of zero and runtimes of zero.
    Zeros,
    /// Estimates and runtimes on a coarse grid: many jobs end (and start) at the same instant.
    Simultaneous,
}

/// A random workload of `n` jobs of `shape` for a machine of `processors`.
fn workload(seed: u64, shape: Shape, n: usize, processors: u32) -> Vec<Spec> {
    let mut rng = Lcg(seed);
    let mut submit = 0;
    (0..n)
        .map(|_| {
            let (gap, estimate, runtime) = match shape {
                Shape::Mixed => {
                    let estimate = 1 + rng.below(3000) as Time;
                    (
                        rng.below(120) as Time,
                        estimate,
                        runtime(&mut rng, estimate),
                    )
                }
                Shape::LongQueue => {
                    let gap = if rng.below(50) == 0 {
                        2000
                    } else {
                        rng.below(3) as Time
                    };
                    let estimate = 1 + rng.below(5000) as Time;
                    (gap, estimate, runtime(&mut rng, estimate))
                }
                Shape::Zeros => {
                    let estimate = if rng.below(3) == 0 {
                        0
                    } else {
                        rng.below(300) as Time
                    };
                    let runtime = if rng.below(3) == 0 {
                        0
                    } else {
                        runtime(&mut rng, estimate)
                    };
                    (rng.below(20) as Time, estimate, runtime)
                }
                Shape::Simultaneous => {
                    let estimate = 100 * (1 + rng.below(20) as Time);
                    let runtime = 100 * rng.below(21) as Time;
                    (100 * rng.below(3) as Time, estimate, runtime)
                }
            };
            submit += gap;
            let size = match rng.below(4) {
                0 => 1,
                1 => 1 + rng.below(u64::from(processors)) as u32,
                2 => 1 + rng.below(u64::from(processors / 4).max(1)) as u32,
                _ => (1u32 << rng.below(u64::from(processors.ilog2()) + 1)).min(processors),
            };
            Spec {
                submit,
                processors: size,
                estimate,
                runtime,
            }
        })
        .collect()
}

/// A runtime for `estimate`: mostly early, sometimes exactly the estimate, sometimes beyond it
/// (killed at the estimate).
fn runtime(rng: &mut Lcg, estimate: Time) -> Time {
    match rng.below(6) {
        0 => estimate,
        1 => estimate + 1 + rng.below(100) as Time,
        2 => rng.below(10) as Time,
        _ => rng.below(estimate as u64 + 1) as Time,
    }
}

#[test]
fn the_fast_path_plans_as_the_plain_loop_on_random_workloads() {
    let mut total = Stats::default();
    let cases = [
        (Shape::Mixed, 300, 64),
        (Shape::Mixed, 200, 16),
        (Shape::LongQueue, 600, 32),
        (Shape::Zeros, 300, 8),
        (Shape::Simultaneous, 300, 16),
    ];
    for seed in 0..12 {
        for &(shape, n, processors) in &cases {
            let jobs = workload(seed, shape, n, processors);
            let stats = fast_against_plain(processors, &jobs);
            total.slides += stats.slides;
            total.holes += stats.holes;
            total.in_vain += stats.in_vain;
            total.deferred_moves += stats.deferred_moves;
            total.backfilled += stats.backfilled;
        }
    }
    // Every kind of move happened: slides (C1), moves into holes (C2), jobs helped by a
    // mover behind them that moved at a later pass, and backfilled starts.
    eprintln!("{total:?}");
    assert!(total.slides > 100, "{total:?}");
    assert!(total.holes > 100, "{total:?}");
    assert!(total.deferred_moves > 10, "{total:?}");
    assert!(total.backfilled > 100, "{total:?}");
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(300))]

    /// The fast path and the plain loop start the same jobs at the same passes with the same
    /// flags, and agree on every waiting job's planned start after every pass, on random
    /// workloads (early ends, zero estimates and runtimes, jobs ending together, bursts).
    #[test]
    fn fast_path_equals_plain_loop(
        jobs in proptest::collection::vec(
            (0i64..4, 1u32..=16, 0i64..600, 0u32..=5, 0i64..600),
            1..250,
        ),
    ) {
        let mut submit = 0;
        let specs: Vec<Spec> = jobs
            .iter()
            .map(|&(gap, processors, estimate, kind, runtime)| {
                submit += gap * 30;
                // kind: 0 ends at its estimate, 1 at zero, others early (or killed)
                let runtime = match kind {
                    0 => estimate,
                    1 => 0,
                    _ => runtime / 30 * 30,
                };
                Spec { submit, processors, estimate: estimate / 30 * 30, runtime }
            })
            .collect();
        fast_against_plain(16, &specs);
    }
}

#[test]
fn a_mover_behind_a_job_frees_room_for_it_at_the_next_pass_after_an_end() {
    // 4 processors. R1 (2 procs) runs until 100 (estimate), R2 (2 procs) until 300.
    // Job A (4 procs, 50 s) is planned at 300 (after R2). Job B (2 procs, 200 s) at 100.
    // R1 ends at 10: B slides to 10 ([10, 210)), which frees [210, 300) of its old slot ...
    // whatever the exact schedule, the fast path must agree with the plain loop at every pass,
    // and some job must move at a pass after the one whose mover helped it.
    let mut found = false;
    for seed in 0..200 {
        let jobs = workload(seed, Shape::LongQueue, 80, 8);
        let stats = fast_against_plain(8, &jobs);
        if stats.deferred_moves > 0 {
            found = true;
            break;
        }
    }
    assert!(found, "no workload had a job helped by a mover behind it");
}

#[test]
fn other_orders_plan_with_the_plain_loop() {
    let sjf = Cluster::new(
        16,
        Scheduler::new(Box::new(ShortestFirst), Box::new(Conservative::new())),
    );
    assert!(!rule(&sjf).fast_allowed);
    let spec = crate::CORE_REGISTRY
        .spec("conservative", &crate::ParamValues::new())
        .expect("a preset");
    assert!(rule(&Cluster::new(16, spec.build())).fast_allowed);
    let spec = crate::CORE_REGISTRY
        .spec("conservative-ljf", &crate::ParamValues::new())
        .expect("a preset");
    assert!(!rule(&Cluster::new(16, spec.build())).fast_allowed);
}

#[test]
fn a_queue_that_is_reordered_hands_over_to_the_plain_loop() {
    // Told arrival order, but the cluster sorts by shortest estimate: the first pass sees the
    // queue reordered and plans with the plain loop, as a cluster never told does.
    let jobs = workload(3, Shape::Mixed, 200, 16);
    let mut told = Conservative::with_bounds(0, 0);
    told.queue_in_arrival_order();
    let mut a = Cluster::new(
        16,
        Scheduler {
            order: Box::new(ShortestFirst),
            backfill: Box::new(told),
            predictor: Predictor::UserEstimate,
        },
    );
    let mut b = plain_cluster(16, Box::new(ShortestFirst));
    compare(&mut a, &mut b, &jobs, &|_| false);
    assert!(rule(&a).fast().is_none() && !rule(&a).fast_allowed);
}

#[test]
fn a_planned_start_without_a_pass_hands_over_to_the_plain_loop() {
    // The engine makes a pass whenever a job ends; a caller that skips the pass at 100, where
    // job 1 ends and job 2 was planned, leaves job 2 planned in the past at the next pass.
    use crate::cluster::tests::job;
    let mut a = fast_cluster(2);
    let mut b = plain_cluster(2, Box::new(Arrival));
    for c in [&mut a, &mut b] {
        c.submit(job(1, 0, 1, 100)).expect("valid");
        c.submit(job(2, 0, 2, 10)).expect("valid");
        assert_eq!(c.schedule(0).len(), 1);
        assert_eq!(c.planned_start(JobId(2)), Some(100));
        c.finish(JobId(1), 100).expect("running");
        c.submit(job(3, 150, 1, 10)).expect("valid");
    }
    assert!(rule(&a).fast().is_some());
    assert!(rule(&b).fast().is_none());
    let started = a.schedule(150).to_vec();
    assert_eq!(started, b.schedule(150));
    assert_eq!(
        started.iter().map(|s| s.id).collect::<Vec<_>>(),
        vec![JobId(2)]
    );
    assert_eq!(a.planned_start(JobId(3)), b.planned_start(JobId(3)));
    assert!(rule(&a).fast().is_none(), "handed over");
}

#[test]
fn the_fast_path_takes_over_and_hands_back_as_the_queue_grows_and_shrinks() {
    // Bounds low enough that the random workloads cross them many times: every switch keeps
    // the plans of the plain loop.
    let mut switches = 0;
    for seed in 0..6 {
        for (shape, n, processors) in [(Shape::LongQueue, 400, 32), (Shape::Mixed, 300, 16)] {
            let jobs = workload(seed, shape, n, processors);
            let mut a = switching_cluster(processors, 24, 8);
            let mut b = plain_cluster(processors, Box::new(Arrival));
            let run = compare(&mut a, &mut b, &jobs, &|_| false);
            switches += run.switches;
        }
    }
    assert!(switches > 20, "{switches} switches");
}
