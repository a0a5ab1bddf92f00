//! Helpers shared by the test files of this binary (facility.rs, outages.rs).

use std::ops::Range;

use cluster::SchedulerSpec;
use engine::Job;
use proptest::prelude::*;

/// A random machine of 2 to 16 processors and 1 to 59 jobs on it: gaps of 0 to 399 s between
/// submits, 1 to `machine` processors, runtimes of 0 to 1499 s, and estimates drawn from
/// `estimates` (at least half the runtime); users 0, 1 and 2 in turn.
pub(crate) fn workload(estimates: Range<i64>) -> impl Strategy<Value = (u32, Vec<Job>)> {
    (2u32..=16).prop_flat_map(move |machine| {
        let job = (0i64..400, 1..=machine, 0i64..1500, estimates.clone());
        (Just(machine), proptest::collection::vec(job, 1..60)).prop_map(|(machine, raw)| {
            let mut submit = 0;
            let jobs = raw
                .into_iter()
                .enumerate()
                .map(|(i, (gap, processors, runtime, estimate))| {
                    submit += gap;
                    Job {
                        job_id: i as i64 + 1,
                        user: (i % 3) as i64,
                        submit,
                        processors,
                        runtime,
                        estimate: estimate.max(runtime / 2),
                        ..Job::default()
                    }
                })
                .collect();
            (machine, jobs)
        })
    })
}

/// The registered policy `name` with its defaults.
pub(crate) fn spec(name: &str) -> SchedulerSpec {
    schedulers::REGISTRY
        .spec(name, &Default::default())
        .expect("a registered policy")
}
