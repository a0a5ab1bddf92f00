//! One scheduling pass on a busy machine with a long waiting queue, for the backfilling rules
//! and orders whose cost grows with the queue: EASY, CREASY (its priorities recomputed and the
//! queue sorted at every pass), conservative backfilling and self-tuning dynP.
//!
//! `cargo bench -p sitesim-cluster --bench pass`. The machine (1,024 processors) is full of running
//! jobs and 1,000 or 5,000 jobs wait, all planned by an earlier pass; the measured pass follows
//! the end of one running job before its estimate, so conservative backfilling compresses its
//! whole schedule (`conservative`: its fast path, which re-places only the jobs the end can
//! move; `conservative-plain`: the plain loop, which re-places every job) and dynP builds its
//! three. The workload comes from a fixed linear
//! congruential generator, so every run measures the same jobs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark's setup cannot fail usefully
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::hint::black_box;
use std::time::Duration;

use cluster::backfill::Conservative;
use cluster::{Arrival, Cluster, JobId, JobRequest, ParamValues, Predictor, Scheduler, Time};
use criterion::{BatchSize, BenchmarkId, Criterion, criterion_group, criterion_main};

const PROCESSORS: u32 = 1024;
const HOUR: Time = 3600;

/// Knuth's MMIX linear congruential generator: deterministic and dependency-free.
struct Lcg(u64);

impl Lcg {
    /// A number in `0..n`.
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % n
    }

    /// A job size: mostly small, sometimes wide (1 to 256 processors, powers of two likelier).
    fn size(&mut self) -> u32 {
        let size = 1 << self.below(9);
        if self.below(3) == 0 {
            size
        } else {
            1 + self.below(u64::from(size)) as u32
        }
    }
}

/// A machine run by `policy` with every processor busy (the running jobs end, by their
/// estimates, between 4 hours and a day from now) and `waiting` jobs in the queue, planned by one pass at the
/// returned instant; also the id of the running job that will end early.
fn busy_machine(policy: &str, waiting: u32) -> (Cluster, JobId, Time) {
    let scheduler = if policy == "conservative-plain" {
        // Not told that the order is arrival order: conservative backfilling's plain loop,
        // which re-places every waiting job (the fast path's reference).
        Scheduler {
            order: Box::new(Arrival),
            backfill: Box::new(Conservative::new()),
            predictor: Predictor::UserEstimate,
        }
    } else {
        cluster::CORE_REGISTRY
            .spec(policy, &ParamValues::new())
            .unwrap()
            .build()
    };
    let mut cluster = Cluster::new(PROCESSORS, scheduler);
    let mut rng = Lcg(17);
    let mut id = 0;
    let mut busy = 0;
    while busy < PROCESSORS {
        let processors = rng.size().min(PROCESSORS - busy);
        busy += processors;
        let estimate = 4 * HOUR + rng.below(20 * HOUR as u64) as Time;
        let job = JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: JobId(id),
            submit: 0,
            processors,
            estimate,
            user: i64::from(id % 50),
            group: -1,
            partition: -1,
            queue: -1,
            extra: cluster::Extra::NONE,
        };
        cluster.submit(job).unwrap();
        id += 1;
    }
    assert_eq!(
        cluster.schedule(0).len(),
        id as usize,
        "every first job runs"
    );
    assert_eq!(cluster.free_processors(), 0);
    let first_running = JobId(0);
    let mut now = 0;
    for _ in 0..waiting {
        now += 1 + rng.below(2) as Time; // within 3 hours: every running job still holds
        let estimate = 60 * (10 + rng.below(36 * 60) as Time);
        let job = JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: JobId(id),
            submit: now,
            processors: rng.size(),
            estimate,
            user: i64::from(id % 50),
            group: -1,
            partition: -1,
            queue: -1,
            extra: cluster::Extra::NONE,
        };
        cluster.submit(job).unwrap();
        id += 1;
    }
    assert!(cluster.schedule(now).is_empty(), "the machine is full");
    (cluster, first_running, now + 1)
}

fn pass(c: &mut Criterion) {
    let mut group = c.benchmark_group("pass-after-an-end");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for waiting in [1000, 5000] {
        for policy in [
            "easy",
            "creasy",
            "conservative",
            "conservative-plain",
            "dynp-advanced",
        ] {
            group.bench_with_input(
                BenchmarkId::new(policy, waiting),
                &waiting,
                |b, &waiting| {
                    b.iter_batched(
                        || busy_machine(policy, waiting),
                        |(mut cluster, ending, now)| {
                            cluster.finish(ending, now).unwrap();
                            black_box(cluster.schedule(now).len());
                            cluster // dropped outside the measurement
                        },
                        BatchSize::PerIteration,
                    )
                },
            );
        }
    }
    group.finish();
    // The steady state of a priority order: the queue is in the order of a pass a minute ago
    // (with the jobs that pass started gone), and another running job ends. 50 waiting jobs is
    // about the mean queue of the paper's sweep at 250 users under CREASY.
    let mut group = c.benchmark_group("pass-after-a-pass");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    for waiting in [50, 1000, 5000] {
        for policy in ["easy", "creasy"] {
            group.bench_with_input(
                BenchmarkId::new(policy, waiting),
                &waiting,
                |b, &waiting| {
                    b.iter_batched(
                        || {
                            let (mut cluster, ending, now) = busy_machine(policy, waiting);
                            cluster.finish(ending, now).unwrap();
                            cluster.schedule(now);
                            (cluster, JobId(ending.0 + 1), now + 60)
                        },
                        |(mut cluster, ending, now)| {
                            cluster.finish(ending, now).unwrap();
                            black_box(cluster.schedule(now).len());
                            cluster
                        },
                        BatchSize::PerIteration,
                    )
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, pass);
criterion_main!(benches);
