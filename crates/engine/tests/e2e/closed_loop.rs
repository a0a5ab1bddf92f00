//! Invariants of the closed loop over random runs of the real (committed) user model.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use cluster::{Cluster, SchedulerSpec};
use engine::{ClosedRun, run_population};
use metrics::SessionEnd;
use proptest::prelude::*;
use users::{ActivityWindow, Calendar, Group, GroupConfig, Population};

fn model() -> Arc<usermodel::Model> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/combined");
    Arc::new(
        usermodel::Model::from_files("models/combined", |name| {
            std::fs::read_to_string(dir.join(name)).ok()
        })
        .unwrap(),
    )
}

fn params() -> users::GroupParams {
    let config: GroupConfig = paper_group();
    config.params("groups[0]").unwrap()
}

/// The paper's defaults, as a population file would give them.
fn paper_group() -> GroupConfig {
    GroupConfig::new("users", 1)
}

fn run(
    users: u32,
    seed: u64,
    processors: u32,
    spec: SchedulerSpec,
    weeks: i64,
) -> (ClosedRun, Vec<ActivityWindow>) {
    let p = params();
    let shmueli = *p.kind.downcast_ref::<users::ShmueliParams>().unwrap();
    let group = Group {
        name: "users".into(),
        users,
        params: p.clone(),
        model: model(),
    };
    let horizon = weeks * users::cycle::WEEK;
    let population = Population::new(
        vec![group],
        seed,
        Calendar::monday_midnight(),
        horizon,
        processors,
    )
    .unwrap();
    let windows = population
        .profiles()
        .iter()
        .filter_map(|x| x.cycle)
        .map(|(part, days, shift)| ActivityWindow {
            part,
            days,
            shift,
            day_start: shmueli.day_start,
            day_end: shmueli.day_end,
            calendar: Calendar::monday_midnight(),
        })
        .collect();
    let mut cluster = Cluster::new(processors, spec.build());
    (
        run_population(&mut cluster, population, &mut ()).unwrap(),
        windows,
    )
}

/// The registered policy `name` with its defaults.
fn spec(name: &str) -> SchedulerSpec {
    schedulers::REGISTRY
        .spec(name, &cluster::ParamValues::new())
        .expect("a registered policy")
}

fn schedulers() -> [SchedulerSpec; 4] {
    ["easy", "creasy", "fcfs", "conservative-sjf"].map(spec)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A user never starts a batch before its previous batch finished; batches start inside the
    /// user's activity window and before the end of the run; sessions add up to the jobs.
    #[test]
    fn users_wait_for_their_batches_and_keep_their_hours(
        users in 1u32..40, seed in 0u64..1000, scheduler in 0usize..3, processors in prop_oneof![Just(1152u32), Just(2048)],
    ) {
        let weeks = 2;
        let (r, windows) = run(users, seed, processors, schedulers()[scheduler].clone(), weeks);
        prop_assert_eq!(r.records.len(), r.submissions.len());
        let mut by_user: BTreeMap<i64, Vec<&metrics::JobRecord>> = BTreeMap::new();
        for (job, sub) in r.records.iter().zip(&r.submissions) {
            prop_assert_eq!(job.job_id, sub.job_id);
            by_user.entry(job.user).or_default().push(job);
        }
        for (user, jobs) in &by_user {
            let window = windows[*user as usize - 1]; // records number users from 1
            let mut latest_end_before = i64::MIN;
            let mut current_batch = i64::MIN;
            for job in jobs {
                if job.submit != current_batch {
                    // A new batch: every earlier job of the user has ended.
                    prop_assert!(job.submit >= latest_end_before, "user {} started a batch at {} before {}", user, job.submit, latest_end_before);
                    prop_assert!(window.is_active(job.submit), "user {} submitted at {} outside its window", user, job.submit);
                    prop_assert!(job.submit < weeks * users::cycle::WEEK);
                    current_batch = job.submit;
                }
                latest_end_before = latest_end_before.max(job.end);
            }
        }
        let session_jobs: u64 = r.sessions.iter().map(|s| u64::from(s.jobs)).sum();
        prop_assert_eq!(session_jobs, r.records.len() as u64);
        for s in &r.sessions {
            prop_assert!(s.start <= s.end);
            if s.ended_by == SessionEnd::EndOfRun {
                prop_assert_eq!(s.end, weeks * users::cycle::WEEK);
            }
        }
    }
}

#[test]
fn the_same_seed_gives_the_same_run_and_schedulers_see_the_same_users() {
    let (a, _) = run(30, 11, 2048, spec("easy"), 2);
    let (b, _) = run(30, 11, 2048, spec("easy"), 2);
    assert_eq!(a.records, b.records);
    assert_eq!(a.sessions, b.sessions);
    // Common random numbers: under CREASY each user's first jobs are the same jobs.
    let (c, _) = run(30, 11, 2048, spec("creasy"), 2);
    let first_jobs = |r: &ClosedRun| -> BTreeMap<u32, Vec<(u32, i64, i64)>> {
        let mut m: BTreeMap<u32, Vec<(u32, i64, i64)>> = BTreeMap::new();
        for s in &r.submissions {
            let v = m.entry(s.user).or_default();
            if v.len() < 5 {
                v.push((s.processors, s.runtime, s.estimate));
            }
        }
        m
    };
    assert_eq!(first_jobs(&a), first_jobs(&c));
}
