//! The Slurm model's loops on hand-built cases, driven as the engine drives the cluster:
//! passes at submissions, ends and the model's wake-ups. Times are seconds.

use super::*;
use cluster::order::Arrival;
use cluster::{Cluster, Scheduler};

/// (submit, processors, estimate = runtime, user, group)
type Spec = (Time, u32, Time, i64, i64);

/// Runs `jobs` on a machine of `machine` processors under the model; the start time of each.
fn starts(config: SlurmConfig, machine: u32, jobs: &[Spec]) -> Vec<Time> {
    starts_with_runtimes(config, machine, jobs, &[])
}

/// [`starts`], with true runtimes shorter than the estimates where given.
fn starts_with_runtimes(
    config: SlurmConfig,
    machine: u32,
    jobs: &[Spec],
    runtimes: &[(usize, Time)],
) -> Vec<Time> {
    run_rule(SlurmRule::new(config), machine, jobs, runtimes)
}

/// [`starts_with_runtimes`] under a given rule.
fn run_rule(rule: SlurmRule, machine: u32, jobs: &[Spec], runtimes: &[(usize, Time)]) -> Vec<Time> {
    drive(rule, machine, jobs, runtimes).0
}

/// Runs `jobs` under `rule`: each job's start, what the model recorded of it at its start, and
/// the cluster at the end.
fn drive(
    rule: SlurmRule,
    machine: u32,
    jobs: &[Spec],
    runtimes: &[(usize, Time)],
) -> (Vec<Time>, Vec<Option<AtStart>>, Cluster) {
    drive_throttled(rule, machine, jobs, runtimes, &[])
}

/// [`drive`], with the jobs of `array_tasks` tasks of throttled arrays.
fn drive_throttled(
    rule: SlurmRule,
    machine: u32,
    jobs: &[Spec],
    runtimes: &[(usize, Time)],
    array_tasks: &[(usize, cluster::ArrayTask)],
) -> (Vec<Time>, Vec<Option<AtStart>>, Cluster) {
    let scheduler = Scheduler::new(Box::new(Arrival), Box::new(rule));
    let mut cluster = Cluster::new(machine, scheduler);
    let mut started = vec![None; jobs.len()];
    let mut at_start = vec![None; jobs.len()];
    let mut ends: Vec<(Time, usize)> = Vec::new();
    let mut next_job = 0;
    for _ in 0..100_000 {
        let next = [
            ends.iter().map(|e| e.0).min(),
            jobs.get(next_job).map(|j| j.0),
            cluster.next_wakeup(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = next else { break };
        ends.sort();
        while ends.first().is_some_and(|e| e.0 == now) {
            let (_, index) = ends.remove(0);
            cluster.finish(JobId(index as u32), now).unwrap();
        }
        while let Some(&(submit, processors, estimate, user, group)) =
            jobs.get(next_job).filter(|j| j.0 == now)
        {
            cluster
                .submit(JobRequest {
                    array_task: (array_tasks.iter().find(|t| t.0 == next_job))
                        .map_or(cluster::ArrayTask::NONE, |t| t.1),
                    reservation: Default::default(),
                    shape: Default::default(),
                    id: JobId(next_job as u32),
                    submit,
                    processors,
                    estimate,
                    user,
                    group,
                    partition: -1,
                    queue: -1,
                    extra: cluster::Extra::NONE,
                })
                .unwrap();
            next_job += 1;
        }
        for s in cluster.schedule(now).to_vec() {
            let index = s.id.0 as usize;
            started[index] = Some(now);
            at_start[index] = SlurmRule::of(&cluster).and_then(|r| r.at_start(s.id));
            let runtime = runtimes
                .iter()
                .find(|r| r.0 == index)
                .map_or(jobs[index].2, |r| r.1);
            ends.push((now + runtime, index));
        }
    }
    let starts = started.into_iter().map(|s| s.unwrap_or(-1)).collect();
    (starts, at_start, cluster)
}

#[test]
fn a_submission_starts_at_the_next_event_run_not_at_once() {
    // sbatch jobs never start in the submit call: the next second's event run starts them
    assert_eq!(
        starts(SlurmConfig::default(), 10, &[(100, 4, 60, 1, 1)]),
        vec![101]
    );
    // a second submission within batch_sched_delay of that run waits for the delay
    let s = starts(
        SlurmConfig::default(),
        10,
        &[(100, 4, 60, 1, 1), (102, 4, 60, 1, 1)],
    );
    assert_eq!(s, vec![101, 104]);
}

#[test]
fn a_job_end_runs_the_main_loop_at_once() {
    // job 1 waits for job 0's 10 processors; it starts the second job 0 ends
    let s = starts(
        SlurmConfig::default(),
        10,
        &[(0, 10, 500, 1, 1), (10, 10, 60, 2, 1)],
    );
    assert_eq!(s, vec![1, 501]);
}

#[test]
fn the_main_loop_stops_at_the_first_job_that_does_not_fit() {
    // job 1 (8 procs) is blocked behind job 0; job 2 (2 procs, short) fits now but the main
    // loop stops at job 1: job 2 waits for a backfill cycle (30 s after the model started)
    let config = SlurmConfig::default();
    let s = starts(
        config,
        10,
        &[(0, 8, 1000, 1, 1), (5, 8, 100, 2, 1), (5, 2, 100, 3, 1)],
    );
    assert_eq!(s[0], 1);
    assert_eq!(s[1], 1001);
    assert_eq!(s[2], 30, "backfilled at the first cycle: {s:?}");
}

#[test]
fn an_array_throttle_runs_at_most_its_limit_of_tasks_at_once() {
    // four tasks of one array (`--array=1-4%2`) and a plain job on an idle machine of 10
    // processors: two tasks start, the others as each ends; the plain job at once
    let jobs = [
        (0, 1, 100, 1, 1),
        (0, 1, 100, 1, 1),
        (0, 1, 100, 1, 1),
        (0, 1, 100, 1, 1),
        (0, 1, 100, 2, 1),
    ];
    // (the tasks listed last first, as the array's own id, its last task, sorts first)
    let array_tasks: Vec<(usize, cluster::ArrayTask)> = (0..4)
        .map(|i| {
            let task = cluster::ArrayTask {
                array: 1,
                task: 4 - i as u32,
                limit: 2,
            };
            (i, task)
        })
        .collect();
    let rule = SlurmRule::new(SlurmConfig::default());
    let (s, at_start, _) = drive_throttled(rule, 10, &jobs, &[], &array_tasks);
    // tasks 1 and 2 (jobs 3 and 2) first, in task order, then 3 and 4
    assert_eq!(s, vec![101, 101, 1, 1, 1]);
    // task 3 waited held by the throttle (a limit); task 4 behind it, in the array's record
    assert_eq!(at_start[1].unwrap().waited_for_limits, 100, "{at_start:?}");
    assert_eq!(at_start[0].unwrap().waited_for_limits, 0, "{at_start:?}");
    // without the array_task all five start at once
    let rule = SlurmRule::new(SlurmConfig::default());
    let (s, _, _) = drive_throttled(rule, 10, &jobs, &[], &[]);
    assert_eq!(s, vec![1; 5]);
}

#[test]
fn each_start_says_which_loop_started_it() {
    // as above: jobs 0 and 1 start in the main loop (at the first pass and at job 0's end),
    // job 2 in the first backfill cycle; jobs.csv's started_by says so
    let jobs = [(0, 8, 1000, 1, 1), (5, 8, 100, 2, 1), (5, 2, 100, 3, 1)];
    let (s, at_start, _) = drive(SlurmRule::new(SlurmConfig::default()), 10, &jobs, &[]);
    assert_eq!(s, vec![1, 1001, 30]);
    let by: Vec<StartedBy> = at_start.iter().map(|a| a.unwrap().started_by).collect();
    assert_eq!(
        by,
        vec![StartedBy::Main, StartedBy::Main, StartedBy::Backfill]
    );
    let columns = SlurmColumns::new(&SlurmConfig::default());
    let words: Vec<String> = at_start
        .iter()
        .map(|a| match columns.cell(&a.unwrap().annotation(), 12) {
            cluster::Cell::Text(word) => word.to_string(),
            other => panic!("started_by is a word, not {other:?}"),
        })
        .collect();
    assert_eq!(words, ["main", "main", "backfill"]);
}

#[test]
fn backfill_does_not_delay_a_reservation() {
    // job 0 holds 6 of 10 processors until 1001; job 1 (8) reserves from then (on the 60 s
    // grid: 960 to 1140). Job 2 (4 processors) fits in the 4 free now, but for 2000 s it
    // would hold processors job 1 needs: it waits until job 1 ends.
    let s = starts(
        SlurmConfig::default(),
        10,
        &[(0, 6, 1000, 1, 1), (5, 8, 100, 2, 1), (5, 4, 2000, 3, 1)],
    );
    assert_eq!(s, vec![1, 1001, 1101]);
    // ending before the reservation, the same job backfills at the first cycle
    let s = starts(
        SlurmConfig::default(),
        10,
        &[(0, 6, 1000, 1, 1), (5, 8, 100, 2, 1), (5, 4, 500, 3, 1)],
    );
    assert_eq!(s, vec![1, 1001, 30]);
}

#[test]
fn depth_limits_what_backfill_reaches() {
    // with one job tested per cycle, the blocked job 1 uses the whole budget: job 2 only runs
    // when job 0 ends and the main loop reaches it
    let config = SlurmConfig {
        bf_max_job_test: 1,
        ..SlurmConfig::default()
    };
    let s = starts(
        config,
        10,
        &[(0, 8, 1000, 1, 1), (5, 8, 100, 2, 1), (5, 2, 100, 3, 1)],
    );
    assert_eq!(s[2], 1001, "{s:?}");
}

/// User 1 runs a job of the whole machine for an hour; then users 1 and 2 (another group) each
/// submit one for the whole machine while it runs, under a fair-share weight of 10000.
fn fair_share_case() -> (SlurmConfig, [Spec; 3]) {
    let config = SlurmConfig {
        weights: Weights {
            fairshare: 10_000,
            ..Weights::default()
        },
        ..SlurmConfig::default()
    };
    let jobs = [
        (0, 10, 3600, 1, 1),
        (100, 10, 600, 1, 1),
        (200, 10, 600, 2, 2),
    ];
    (config, jobs)
}

#[test]
fn fair_share_puts_the_light_user_first() {
    // user 1 runs a long job first; then users 1 and 2 each submit a job for the whole
    // machine while it runs. With only the fair-share weight, user 2 (no usage) goes first
    // although user 1 submitted earlier.
    let (config, jobs) = fair_share_case();
    let s = starts(config, 10, &jobs);
    assert!(s[2] < s[1], "{s:?}");
    // with Slurm's defaults (all weights 0) the order is arrival
    let s = starts(SlurmConfig::default(), 10, &jobs);
    assert!(s[1] < s[2], "{s:?}");
}

#[test]
fn usage_is_charged_while_jobs_run() {
    let mut rule = SlurmRule::new(SlurmConfig::default());
    rule.keep_usage();
    let job = JobRequest {
        array_task: Default::default(),
        reservation: Default::default(),
        shape: Default::default(),
        id: JobId(0),
        submit: 0,
        processors: 4,
        estimate: 3600,
        user: 1,
        group: 1,
        partition: -1,
        queue: -1,
        extra: cluster::Extra::NONE,
    };
    rule.submitted(&job);
    let assoc = rule.users[&(1, 1)];
    rule.running.insert(
        JobId(0),
        Running {
            array_task: cluster::ArrayTask::NONE,
            assoc,
            tres: Tally::default(),
            start: 0,
            processors: 4,
            rate: 4.0,
            limit: 3600,
            at_start: AtStart::default(),
            partition: 0,
            qos: 0,
            user: 1,
        },
    );
    rule.pending.clear();
    rule.calculate(0);
    rule.calculate(300);
    // 300 s x 4 CPUs, discounted by d^300 (Slurm's per-period charge)
    let d = rule.config.decay_per_second();
    let expected = 300.0 * d.powf(300.0) * 4.0;
    assert!((rule.tree.usage(assoc) - expected).abs() < 1e-9);
    assert_eq!(rule.tree.usage(AssocTree::ROOT), rule.tree.usage(assoc));
    // the next period decays what was charged and adds the new charge
    rule.calculate(600);
    let expected = expected * d.powf(300.0) + 300.0 * d.powf(300.0) * 4.0;
    assert!((rule.tree.usage(assoc) - expected).abs() < 1e-9);
}

#[test]
fn a_job_may_overrun_by_over_time_limit() {
    let config = SlurmConfig {
        over_time_limit: 120,
        ..SlurmConfig::default()
    };
    let scheduler = Scheduler::new(Box::new(Arrival), Box::new(SlurmRule::new(config)));
    let mut cluster = Cluster::new(4, scheduler);
    cluster
        .submit(JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: JobId(0),
            submit: 0,
            processors: 1,
            estimate: 600,
            user: 1,
            group: 1,
            partition: -1,
            queue: -1,
            extra: cluster::Extra::NONE,
        })
        .unwrap();
    assert!(cluster.schedule(0).is_empty());
    assert_eq!(cluster.next_wakeup(), Some(1));
    let started = cluster.schedule(1).to_vec();
    assert_eq!(started[0].kill_time, 1 + 600 + 120);
}

/// A job's last partial period is charged at its end only with
/// `AccountingStorageEnforce=limits` (what a real Slurm 22.05 did: a 31 s job between two
/// calculations left no usage without it).
#[test]
fn a_jobs_tail_is_charged_only_when_limits_are_enforced() {
    for enforce_limits in [false, true] {
        let config = SlurmConfig {
            enforce_limits,
            ..SlurmConfig::default()
        };
        let mut rule = SlurmRule::new(config);
        rule.keep_usage();
        let job = JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: JobId(0),
            submit: 0,
            processors: 2,
            estimate: 600,
            user: 1,
            group: 1,
            partition: -1,
            queue: -1,
            extra: cluster::Extra::NONE,
        };
        rule.submitted(&job);
        rule.calculate(0); // the first calculation, at the origin
        let assoc = rule.users[&(1, 1)];
        rule.pending.clear();
        rule.running.insert(
            JobId(0),
            Running {
                array_task: cluster::ArrayTask::NONE,
                assoc,
                tres: Tally::default(),
                start: 1,
                processors: 2,
                rate: 2.0,
                limit: 600,
                at_start: AtStart::default(),
                partition: 0,
                qos: 0,
                user: 1,
            },
        );
        // it ends 31 s later, before the next calculation
        let ended = Ended {
            id: JobId(0),
            start: 1,
            processors: 2,
            estimate: 600,
        };
        rule.finished(&ended, 32);
        let expected = if enforce_limits {
            let d = SlurmConfig::default().decay_per_second();
            31.0 * d.powf(31.0) * 2.0
        } else {
            0.0
        };
        let usage = rule.tree().usage(AssocTree::ROOT);
        assert!((usage - expected).abs() < 1e-9, "{enforce_limits}: {usage}");
    }
}

/// The age factor counts from the submission (the eligible time), not from the first
/// scheduler run, and is 0 in the priority computed at submit.
#[test]
fn age_counts_from_the_submission() {
    let config = SlurmConfig {
        weights: Weights {
            age: 1000,
            ..Weights::default()
        },
        max_age: 1000,
        ..SlurmConfig::default()
    };
    let mut rule = SlurmRule::new(config);
    let job = JobRequest {
        array_task: Default::default(),
        reservation: Default::default(),
        shape: Default::default(),
        id: JobId(0),
        submit: 100,
        processors: 1,
        estimate: 60,
        user: 1,
        group: 1,
        partition: -1,
        queue: -1,
        extra: cluster::Extra::NONE,
    };
    rule.submitted(&job);
    assert_eq!(rule.priority_of(JobId(0)).map(|p| p.0), Some(1));
    rule.calculate(600);
    // 500 s of a 1000 s maximum age: 0.5 * 1000
    assert_eq!(rule.priority_of(JobId(0)).map(|p| p.0), Some(500));
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]

    /// Backfill's shortcuts (skipped cycles, stopping after the last job that could start,
    /// going on from the previous cycle's plan, scans begun where an earlier test of the same
    /// processors and no longer a limit found room, from plans of any length) start every
    /// job when testing every job of every cycle anew from now would, on random workloads and
    /// configurations (windows, grids, depths, per-user limits, overtime, reserve
    /// thresholds, early ends, priorities that move).
    #[test]
    fn backfill_shortcuts_start_jobs_as_plain_cycles_do(
        jobs in proptest::collection::vec(
            (0i64..3000, 1u32..=16, 1i64..3000, 0i64..4, 0i64..2, 0u32..=100),
            1..200,
        ),
        bf_interval in 1i64..60,
        bf_resolution in 1i64..90,
        bf_window in 60i64..300,
        bf_max_job_test in 1u32..12,
        bf_max_job_user in 0u32..3,
        bf_max_job_part in 0u32..3,
        over_time_limit in 0i64..2,
        bf_min_prio_reserve in 0u32..2,
        weights in 0usize..3,
        bounds_from_steps in 0usize..6,
    ) {
        let mut config = SlurmConfig {
            bf_interval,
            bf_resolution,
            bf_window,
            bf_max_job_test,
            bf_max_job_user,
            bf_max_job_part,
            over_time_limit: over_time_limit * 60,
            bf_min_prio_reserve: bf_min_prio_reserve * 500,
            calc_period: 60,
            ..SlurmConfig::default()
        };
        match weights {
            1 => config.weights.age = 1000,
            2 => {
                config.weights.fairshare = 1000;
                config.weights.job_size = 100;
            }
            _ => {}
        }
        let mut sorted = jobs.clone();
        sorted.sort_by_key(|j| j.0);
        let specs: Vec<Spec> = sorted.iter().map(|j| (j.0, j.1, j.2, j.3, j.4)).collect();
        // some jobs end before their estimate
        let runtimes: Vec<(usize, Time)> = sorted
            .iter()
            .enumerate()
            .filter(|(_, j)| j.5 < 60)
            .map(|(i, j)| (i, (j.2 * i64::from(j.5) / 60).max(1)))
            .collect();
        let mut plain = SlurmRule::new(config.clone());
        plain.shortcuts = false;
        let expected = run_rule(plain, 16, &specs, &runtimes);
        let mut rule = SlurmRule::new(config);
        rule.bounds_from_steps = bounds_from_steps;
        let got = run_rule(rule, 16, &specs, &runtimes);
        proptest::prop_assert_eq!(got, expected);
    }
}

/// A job whose earliest start was beyond `bf_window` (so it had no reservation) gets one when
/// time brings that start within the window, though nothing else changed: the cycle is planned
/// anew rather than going on from the previous plan, and the reservation keeps a later job
/// from starting in its way.
#[test]
fn a_job_entering_the_window_is_planned_anew() {
    let config = SlurmConfig {
        bf_window: 100,
        bf_resolution: 1,
        bf_interval: 1,
        ..SlurmConfig::default()
    };
    // A holds 4 of 10 processors until 1001; J (8) can start only then, beyond the window at
    // 10, so it is tested (Y could start) but gets no reservation; Y starts beside A (at the
    // backfill agent's next poll, a second after its submission); X (4 for
    // 100 s) arrives at 950, when J's start is within the window and its reservation is in
    // X's way
    let jobs = [
        (0, 4, 1000, 1, 0),
        (10, 8, 100, 2, 0),
        (10, 2, 2000, 3, 0),
        (950, 4, 100, 4, 0),
    ];
    let mut plain = SlurmRule::new(config.clone());
    plain.shortcuts = false;
    let expected = run_rule(plain, 10, &jobs, &[]);
    assert_eq!(expected, vec![1, 1001, 11, 1101]);
    assert_eq!(run_rule(SlurmRule::new(config), 10, &jobs, &[]), expected);
}

/// With a fair-share weight of 0 nothing reads the usage, so it is kept only on request; kept,
/// it is the same whether or not the factor needs it.
#[test]
fn usage_is_kept_when_asked_or_needed() {
    let jobs = [(0, 2, 900, 1, 0), (10, 2, 900, 2, 0)];
    let run = |rule: SlurmRule| {
        let mut rule = rule;
        for (i, &(submit, processors, estimate, user, group)) in jobs.iter().enumerate() {
            rule.submitted(&JobRequest {
                array_task: Default::default(),
                reservation: Default::default(),
                shape: Default::default(),
                id: JobId(i as u32),
                submit,
                processors,
                estimate,
                user,
                group,
                partition: -1,
                queue: -1,
                extra: cluster::Extra::NONE,
            });
        }
        for (i, &(submit, processors, estimate, _, _)) in jobs.iter().enumerate() {
            let assoc = rule.pending[&JobId(i as u32)].assoc;
            rule.running.insert(
                JobId(i as u32),
                Running {
                    array_task: cluster::ArrayTask::NONE,
                    assoc,
                    tres: Tally::default(),
                    start: submit,
                    processors,
                    rate: f64::from(processors),
                    limit: estimate,
                    at_start: AtStart::default(),
                    partition: 0,
                    qos: 0,
                    user: 1,
                },
            );
        }
        rule.pending.clear();
        rule.calculate(0);
        rule.calculate(600);
        rule.tree().usage(AssocTree::ROOT)
    };
    assert_eq!(run(SlurmRule::new(SlurmConfig::default())), 0.0);
    let mut kept = SlurmRule::new(SlurmConfig::default());
    kept.keep_usage();
    let kept = run(kept);
    assert!(kept > 0.0);
    let needed = run(SlurmRule::new(SlurmConfig {
        weights: Weights {
            fairshare: 1000,
            ..Weights::default()
        },
        ..SlurmConfig::default()
    }));
    assert_eq!(kept, needed);
}

/// `group_shares` and `user_shares` give the derived tree's associations their shares; the
/// listed accounts exist before any job, an account or user not listed has one share.
#[test]
fn group_and_user_shares_shape_the_derived_tree() {
    let config = SlurmConfig {
        weights: Weights {
            fairshare: 1000,
            ..Weights::default()
        },
        group_shares: [(1, 3), (2, 1)].into(),
        user_shares: [(12, 2)].into(),
        ..SlurmConfig::default()
    };
    let mut rule = SlurmRule::new(config);
    let rows = rule.tree().fair_tree();
    assert_eq!(rows.len(), 3);
    assert!((rows[rule.accounts[&1]].norm_shares - 0.75).abs() < 1e-12);
    assert!((rows[rule.accounts[&2]].norm_shares - 0.25).abs() < 1e-12);
    // users 11 and 12 (two shares) in group 2; user 13 in group 3, which is not listed
    for (id, user, group) in [(0, 11, 2), (1, 12, 2), (2, 13, 3)] {
        rule.submitted(&JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            shape: Default::default(),
            id: JobId(id),
            submit: 0,
            processors: 1,
            estimate: 60,
            user,
            group,
            partition: -1,
            queue: -1,
            extra: cluster::Extra::NONE,
        });
    }
    let rows = rule.tree().fair_tree();
    let share = |index: usize| rows[index].norm_shares;
    assert!((share(rule.users[&(2, 11)]) - 1.0 / 3.0).abs() < 1e-12);
    assert!((share(rule.users[&(2, 12)]) - 2.0 / 3.0).abs() < 1e-12);
    assert!((share(rule.accounts[&3]) - 1.0 / 5.0).abs() < 1e-12);
    assert!((share(rule.accounts[&1]) - 3.0 / 5.0).abs() < 1e-12);
}

#[test]
fn a_job_records_its_priority_account_and_pending_reasons_at_start() {
    // the fair-share case above: job 0 starts at the event run at 1; job 1 waits behind it
    // (Resources from the event run at 101). Usage is charged only at calculations, so job 2
    // (submitted at 200) ties on fair-share and waits behind job 1 until the calculation at
    // 300 charges job 0's usage; then job 2 of the lighter user goes first (job 1 waits for
    // Priority), starts when job 0 ends at 3601, and job 1 waits for Resources again until 4201
    let (config, jobs) = fair_share_case();
    let (starts, at_start, cluster) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    assert_eq!(starts, vec![1, 4201, 3601]);
    let [Some(a0), Some(a1), Some(a2)] = at_start[..] else {
        panic!("{at_start:?}");
    };
    assert_eq!(a0.waited_for_resources, 0);
    assert_eq!(a2.waited_for_resources, 3601 - 300);
    assert_eq!(a1.waited_for_resources, (300 - 101) + (4201 - 3601));
    assert_eq!((a1.account_group, a2.account_group), (Some(1), Some(2)));
    assert_eq!(account_name(a2.account_group), "group2");
    assert_eq!(account_name(None), "root");
    // priorities as computed: the factors' weighted sum, truncated
    for a in [a0, a1, a2] {
        assert_eq!(
            a.priority,
            priority::priority(SlurmRule::of(&cluster).unwrap().config(), &a.factors)
        );
    }
    assert!(a2.factors.fairshare > a1.factors.fairshare, "{a1:?} {a2:?}");
    // waits by account: group1's jobs waited 1 s and 4101 s, group2's 3401 s
    let waits: Vec<(String, AccountWaits)> = SlurmRule::of(&cluster)
        .unwrap()
        .account_waits()
        .map(|(name, w)| (name.to_string(), w))
        .collect();
    assert_eq!(
        waits,
        vec![
            (
                "group1".to_string(),
                AccountWaits {
                    jobs: 2,
                    wait_sum: 1.0 + 4101.0
                }
            ),
            (
                "group2".to_string(),
                AccountWaits {
                    jobs: 1,
                    wait_sum: 3401.0
                }
            ),
        ]
    );
}

#[test]
fn share_fairness_compares_delivered_cpu_time_with_shares() {
    // two groups of one user each, equal shares: user 1 gets 3600 + 600 s of the whole
    // machine, user 2 600 s, so their shares of the CPU time are 7/8 and 1/8 against 1/2 each
    let (_, jobs) = fair_share_case();
    let (_, _, cluster) = drive(SlurmRule::new(SlurmConfig::default()), 10, &jobs, &[]);
    let fairness = SlurmRule::of(&cluster).unwrap().share_fairness().unwrap();
    assert_eq!(fairness.users, 2);
    assert!(
        (fairness.share_error - (7.0 / 8.0 - 0.5)).abs() < 1e-12,
        "{fairness:?}"
    );
    // ratios 7/4 and 1/4: Jain's index (2)^2 / (2 * (49 + 1) / 16) = 0.64
    assert!(
        (fairness.fairness_index - 0.64).abs() < 1e-12,
        "{fairness:?}"
    );
    // equal CPU time for equal shares is perfectly fair
    let jobs = [(0, 10, 600, 1, 1), (0, 10, 600, 2, 2)];
    let (_, _, cluster) = drive(SlurmRule::new(SlurmConfig::default()), 10, &jobs, &[]);
    let fairness = SlurmRule::of(&cluster).unwrap().share_fairness().unwrap();
    assert!((fairness.fairness_index - 1.0).abs() < 1e-12);
    assert!(fairness.share_error.abs() < 1e-12);
    // with group 1 given three shares, 3:1 CPU time is fair
    let config = SlurmConfig {
        group_shares: [(1, 3)].into_iter().collect(),
        ..SlurmConfig::default()
    };
    let jobs = [(0, 10, 1800, 1, 1), (0, 10, 600, 2, 2)];
    let (_, _, cluster) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    let fairness = SlurmRule::of(&cluster).unwrap().share_fairness().unwrap();
    assert!(fairness.share_error.abs() < 1e-12, "{fairness:?}");
}

#[test]
fn share_fairness_of_cpu_time_delivered_elsewhere_uses_the_same_tree() {
    // the run's own measure, from the CPU time its jobs got (group, user, processors x run)
    let config = SlurmConfig {
        group_shares: [(1, 3)].into_iter().collect(),
        ..SlurmConfig::default()
    };
    let jobs = [(0, 10, 1800, 1, 1), (0, 10, 900, 2, 2), (5, 4, 300, 3, 2)];
    let (_, _, cluster) = drive(SlurmRule::new(config.clone()), 10, &jobs, &[]);
    let own = SlurmRule::of(&cluster).unwrap().share_fairness().unwrap();
    let delivered: Vec<(i64, i64, f64)> = jobs
        .iter()
        .map(|j| (j.4, j.3, f64::from(j.1) * j.2 as f64))
        .collect();
    assert_eq!(share_fairness_of(&config, &delivered), Some(own));
    // elsewhere each user got what its shares give (3/4 to group 1, 1/8 to each user of
    // group 2): no error
    let fair = [(1, 1, 6000.0), (2, 2, 1000.0), (2, 3, 1000.0)];
    let fairness = share_fairness_of(&config, &fair).unwrap();
    assert!(fairness.share_error.abs() < 1e-12, "{fairness:?}");
    assert!(
        (fairness.fairness_index - 1.0).abs() < 1e-12,
        "{fairness:?}"
    );
    assert_eq!(share_fairness_of(&config, &[]), None);
}

#[test]
fn shares_are_sampled_at_calculations_on_their_grid() {
    // one user runs for two hours; samples every 20 minutes (4 calculation periods)
    let jobs = [(0, 4, 7200, 1, 1), (10, 4, 600, 2, 2)];
    let mut rule = SlurmRule::new(SlurmConfig::default());
    rule.sample_shares(1200);
    let (_, _, cluster) = drive(rule, 8, &jobs, &[]);
    let samples = SlurmRule::of(&cluster).unwrap().share_samples();
    let times: Vec<Time> = samples.iter().map(|s| s.time).collect();
    assert_eq!(times, vec![0, 1200, 2400, 3600, 4800, 6000, 7200]);
    let tree = SlurmRule::of(&cluster).unwrap().tree();
    let user1 = (0..tree.len()).find(|&i| tree.name(i) == "user1").unwrap();
    // the heavy user's usage only grows while it runs (decay is slower than its charge)
    let usage: Vec<f64> = samples.iter().map(|s| s.rows[user1].raw_usage).collect();
    assert!(usage.windows(2).all(|w| w[1] > w[0]), "{usage:?}");
    // the fair-share factor is computed for the samples though its weight is 0, and the
    // priorities do not see it
    let user2 = (0..tree.len()).find(|&i| tree.name(i) == "user2").unwrap();
    let last = samples.last().unwrap();
    assert_eq!(last.rows[user1].fair_share, Some(0.5)); // Fair Tree: ranked last of two
    assert_eq!(last.rows[user2].fair_share, Some(1.0));
}

/// A partition of `processors` (or the machine) selecting `groups`, with `max_time` and
/// `tier`.
fn partition(
    name: &str,
    processors: Option<u32>,
    max_time: Option<Time>,
    tier: u16,
    groups: &[i64],
) -> Partition {
    Partition {
        name: name.to_string(),
        processors,
        max_time,
        priority_job_factor: 1,
        priority_tier: tier,
        jobs: Selector {
            groups: groups.to_vec(),
            swf_numbers: Vec::new(),
        },
        billing_weights: None,
    }
}

/// A QOS selecting `groups`.
fn qos(name: &str, groups: &[i64]) -> Qos {
    Qos {
        jobs: Selector {
            groups: groups.to_vec(),
            swf_numbers: Vec::new(),
        },
        name: name.to_string(),
        ..Qos::normal()
    }
}

#[test]
fn a_higher_partition_tier_goes_first_whatever_the_priority() {
    // job 0 fills the machine; job 1 (group 1) and then job 2 (group 2, a partition of tier 2)
    // wait: job 2 starts first though it came later and has the same priority
    let config = SlurmConfig {
        partitions: vec![
            partition("batch", None, None, 1, &[1]),
            partition("urgent", None, None, 2, &[2]),
        ],
        ..SlurmConfig::default()
    };
    let jobs = [(0, 10, 600, 1, 1), (10, 10, 600, 1, 1), (20, 10, 600, 2, 2)];
    let (s, at, _) = drive(SlurmRule::new(config.clone()), 10, &jobs, &[]);
    assert!(s[2] < s[1], "{s:?}");
    assert_eq!(at[2].map(|a| a.partition), Some(1));
    // in one tier, arrival
    let config = SlurmConfig {
        partitions: vec![
            partition("batch", None, None, 1, &[1]),
            partition("other", None, None, 1, &[2]),
        ],
        ..config
    };
    let (s, _, _) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    assert!(s[1] < s[2], "{s:?}");
}

#[test]
fn a_partition_holds_at_most_its_processors_and_blocks_only_itself() {
    // group 1's partition has 4 of the 10 processors: its two jobs of 4 run one after the
    // other though 6 are free; group 2's job of 6 runs beside them at once
    let config = SlurmConfig {
        partitions: vec![
            partition("small", Some(4), None, 1, &[1]),
            partition("all", None, None, 1, &[]),
        ],
        ..SlurmConfig::default()
    };
    let jobs = [(0, 4, 600, 1, 1), (0, 4, 600, 1, 1), (0, 6, 600, 2, 2)];
    let (s, at, cluster) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    assert_eq!(s, vec![1, 601, 1]);
    assert_eq!(at[2].map(|a| a.partition), Some(1));
    // job 1 waited for Resources in its partition
    assert_eq!(at[1].map(|a| a.waited_for_resources), Some(600));
    let waits: Vec<(String, u64)> = SlurmRule::of(&cluster)
        .unwrap()
        .partition_waits()
        .map(|(n, w, _)| (n.to_string(), w.jobs))
        .collect();
    assert_eq!(waits, vec![("small".into(), 2), ("all".into(), 1)]);
}

#[test]
fn backfill_plans_in_the_partition_too() {
    // partition `small` (4 processors, group 1) runs a job of 4 for 1000 s; a job of 4 of
    // group 1 waits for it; a short job of 2 of group 1 must not start before it (the
    // partition is full) though the machine has room; a job of group 2 backfills at once
    let config = SlurmConfig {
        partitions: vec![
            partition("small", Some(4), None, 1, &[1]),
            partition("all", None, None, 1, &[2]),
        ],
        ..SlurmConfig::default()
    };
    let jobs = [
        (0, 4, 1000, 1, 1),
        (10, 4, 1000, 1, 1),
        (20, 2, 100, 1, 1),
        (20, 2, 100, 2, 2),
    ];
    let (s, _, _) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    assert!(s[2] >= 2001, "{s:?}"); // after both jobs of 4 (FCFS in the partition)
    assert!(s[3] < 100, "{s:?}");
    assert!(s[1] <= 1001 + 60, "{s:?}");
}

#[test]
fn max_time_routes_a_job_to_the_partition_that_takes_it() {
    let config = SlurmConfig {
        partitions: vec![
            partition("short", None, Some(600), 1, &[]),
            partition("long", None, None, 1, &[1]),
            partition("narrow", Some(2), None, 1, &[3]),
        ],
        ..SlurmConfig::default()
    };
    // a 5-minute job, a 2-hour job, a 2-hour job of group 3 that no partition selecting it
    // takes (`short` is too short, `narrow` too small; `long` does not select it), and a
    // 2-hour job of group 3 that `narrow` takes
    let jobs = [
        (0, 1, 300, 1, 1),
        (0, 1, 7200, 1, 1),
        (0, 4, 7200, 3, 3),
        (0, 2, 7200, 3, 3),
    ];
    let (s, at, cluster) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    let partitions: Vec<Option<u16>> = at.iter().map(|a| a.map(|a| a.partition)).collect();
    // group 3's wide job never starts: held in the first partition that selects it, over its
    // MaxTime, as Slurm holds it with reason PartitionTimeLimit
    assert_eq!(partitions, vec![Some(0), Some(1), None, Some(2)]);
    assert_eq!(s[2], -1);
    assert!(cluster.is_held(JobId(2)) && !cluster.is_held(JobId(3)));
    let rule = SlurmRule::of(&cluster).unwrap();
    assert_eq!(
        rule.never_started(),
        &[(JobId(2), NeverStarts::PartitionTimeLimit)]
    );
    let held: Vec<u64> = rule.partition_waits().map(|(_, _, n)| n).collect();
    assert_eq!(held, vec![1, 0, 0]);
}

#[test]
fn a_job_wider_than_its_partition_never_starts_and_the_partition_keeps_its_size() {
    // the case: a partition of 64 of the machine's 1024 processors selecting group 1;
    // its jobs of 128 and 775 processors can never start there (Slurm: pending with reason
    // PartitionConfig for ever), and its jobs of 64 run one at a time
    let config = SlurmConfig {
        partitions: vec![
            partition("small", Some(64), None, 1, &[1]),
            partition("all", None, None, 1, &[2]),
        ],
        weights: Weights {
            fairshare: 1000,
            age: 100,
            ..Weights::default()
        },
        ..SlurmConfig::default()
    };
    let jobs = [
        (0, 775, 600, 1, 1),
        (0, 64, 600, 1, 1),
        (10, 128, 600, 2, 1),
        (20, 64, 600, 1, 1),
        (30, 900, 600, 3, 2),
    ];
    let (s, _, cluster) = drive(SlurmRule::new(config), 1024, &jobs, &[]);
    assert_eq!(s[0], -1, "{s:?}");
    assert_eq!(s[2], -1, "{s:?}");
    // the held jobs block nothing: the 64s run in turn, group 2's job of 900 beside them
    assert_eq!(s[1], 1);
    assert!(s[3] >= s[1] + 600, "{s:?}");
    assert!(s[4] > 0 && s[4] < 600, "{s:?}");
    assert!(cluster.is_held(JobId(0)) && cluster.is_held(JobId(2)));
    assert_eq!(
        (cluster.held(), cluster.waiting(), cluster.running()),
        (2, 0, 0)
    );
    let rule = SlurmRule::of(&cluster).unwrap();
    assert_eq!(
        rule.never_started(),
        &[
            (JobId(0), NeverStarts::PartitionConfig),
            (JobId(2), NeverStarts::PartitionConfig)
        ]
    );
    assert_eq!(
        rule.never_started_by_reason()[0],
        (NeverStarts::PartitionConfig, 2)
    );
    let small: Vec<(String, u64, u64)> = rule
        .partition_waits()
        .map(|(n, w, held)| (n.to_string(), w.jobs, held))
        .collect();
    assert_eq!(
        small,
        vec![("small".to_string(), 2, 2), ("all".to_string(), 1, 0)]
    );
    // the held jobs' users have their associations, as Slurm's do
    let tree = rule.tree();
    assert!((0..tree.len()).any(|i| tree.name(i) == "user2"));
    // with nothing left to run, the model asks for no more passes (the run ends)
    assert_eq!(cluster.next_wakeup(), None);
}

#[test]
fn max_jobs_per_user_holds_a_users_jobs_not_the_others() {
    let config = SlurmConfig {
        qos: vec![Qos {
            max_jobs_per_user: Some(1),
            ..qos("capped", &[1])
        }],
        ..SlurmConfig::default()
    };
    // user 1 submits three jobs of one processor: one at a time; user 2's runs at once
    let jobs = [
        (0, 1, 600, 1, 1),
        (0, 1, 600, 1, 1),
        (0, 1, 600, 1, 1),
        (0, 1, 600, 2, 2),
    ];
    let (s, at, _) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    assert_eq!(s, vec![1, 601, 1201, 1]);
    // held by the limit, as the loops saw it: from the first run that passed it over
    assert_eq!(at[1].map(|a| a.waited_for_limits), Some(600));
    assert_eq!(at[2].map(|a| a.waited_for_limits), Some(1200));
    assert_eq!(at[2].map(|a| a.waited_for_resources), Some(0));
}

#[test]
fn max_submit_per_user_holds_jobs_until_one_ends() {
    let config = SlurmConfig {
        qos: vec![Qos {
            max_submit_per_user: Some(2),
            ..qos("capped", &[])
        }],
        ..SlurmConfig::default()
    };
    // the machine holds one job at a time; user 1's third and fourth jobs are held from
    // their submission until one of its jobs ends, and run in submission order
    let jobs = [
        (0, 10, 100, 1, 1),
        (0, 10, 100, 1, 1),
        (0, 10, 100, 1, 1),
        (0, 10, 100, 1, 1),
    ];
    let (s, at, _) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    assert!(s.windows(2).all(|w| w[0] < w[1]), "{s:?}");
    assert_eq!(at[2].map(|a| a.waited_for_limits), Some(101));
    assert_eq!(at[3].map(|a| a.waited_for_limits), Some(201));
}

#[test]
fn grp_cpus_caps_a_qos_and_a_wider_job_never_starts() {
    let config = SlurmConfig {
        qos: vec![Qos {
            grp_cpus: Some(4),
            ..qos("group", &[])
        }],
        ..SlurmConfig::default()
    };
    // two jobs of 3 cannot run together under a cap of 4; a job of 6 can never start
    // (Slurm: pending with reason QOSGrpCpuLimit for ever), and one of 4 runs after them
    let jobs = [
        (0, 3, 100, 1, 1),
        (0, 3, 100, 2, 2),
        (0, 6, 100, 3, 3),
        (0, 4, 100, 3, 3),
    ];
    let (s, _, cluster) = drive(SlurmRule::new(config), 10, &jobs, &[]);
    assert_eq!(s, vec![1, 101, -1, 201]);
    let rule = SlurmRule::of(&cluster).unwrap();
    assert_eq!(
        rule.never_started(),
        &[(JobId(2), NeverStarts::QosGrpCpuLimit)]
    );
    let held: Vec<u64> = rule.qos_waits().map(|(_, _, n)| n).collect();
    assert_eq!(held, vec![1]);
    // the case: a QOS of one CPU never runs a job of 256
    let config = SlurmConfig {
        qos: vec![Qos {
            grp_cpus: Some(1),
            ..qos("tiny", &[])
        }],
        ..SlurmConfig::default()
    };
    let jobs = [(0, 256, 100, 1, 1), (5, 1, 100, 1, 1), (5, 1, 100, 2, 1)];
    let (s, _, cluster) = drive(SlurmRule::new(config), 512, &jobs, &[]);
    assert_eq!(s, vec![-1, 6, 106]);
    assert_eq!(cluster.held(), 1);
}

#[test]
fn qos_priority_and_usage_factor() {
    // a QOS of priority 100 beside one of 0: with a QOS weight, its job goes first
    let config = |usage_factor: f64| SlurmConfig {
        weights: Weights {
            qos: 1000,
            ..Weights::default()
        },
        qos: vec![
            qos("normal", &[1]),
            Qos {
                priority: 100,
                usage_factor,
                ..qos("high", &[2])
            },
        ],
        ..SlurmConfig::default()
    };
    let jobs = [(0, 10, 600, 1, 1), (10, 10, 600, 1, 1), (20, 10, 600, 2, 2)];
    let usage = |usage_factor: f64| {
        let mut rule = SlurmRule::new(config(usage_factor));
        rule.keep_usage();
        let (s, at, cluster) = drive(rule, 10, &jobs, &[]);
        let tree = SlurmRule::of(&cluster).unwrap().tree();
        let user2 = (0..tree.len()).find(|&i| tree.name(i) == "user2").unwrap();
        (s, at, tree.usage(user2))
    };
    let (s, at, charged) = usage(1.0);
    assert!(s[2] < s[1], "{s:?}");
    assert_eq!(
        at[2].map(|a| (a.priority, a.factors.qos)),
        Some((1000, 1.0))
    );
    assert_eq!(at[1].map(|a| a.priority), Some(1));
    // UsageFactor 2: the same schedule, user 2's usage charged twice
    let (s2, _, doubled) = usage(2.0);
    assert_eq!(s, s2);
    assert!(
        charged > 0.0 && (doubled / charged - 2.0).abs() < 1e-12,
        "{charged} {doubled}"
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// With random partitions (sizes, time limits, tiers, groups) and QOS (per-user job and
    /// submit limits, a group CPU cap) on random workloads: exactly the jobs that no partition
    /// selecting them takes (or that are wider than their QOS's `grp_cpus`) never start, and
    /// every other job runs; at no instant do a partition's jobs hold more than its
    /// processors, a user run more jobs of a QOS than `max_jobs_per_user`, or a QOS's jobs
    /// hold more than `grp_cpus`; and the shortcuts start every job as plain cycles do.
    #[test]
    fn partitions_and_qos_limits_hold_and_every_job_runs(
        jobs in proptest::collection::vec(
            (0i64..2000, 1u32..=12, 1i64..2000, 0i64..4, 0i64..3, 0u32..=100),
            1..120,
        ),
        sizes in proptest::collection::vec(proptest::option::of(1u32..=16), 1..4),
        max_times in proptest::collection::vec(proptest::option::of(60i64..2500), 4),
        tiers in proptest::collection::vec(1u16..3, 4),
        max_jobs in proptest::option::of(1u32..3),
        max_submit in proptest::option::of(1u32..4),
        grp_cpus in proptest::option::of(2u32..12),
    ) {
        let partitions: Vec<Partition> = sizes
            .iter()
            .enumerate()
            .map(|(i, &size)| {
                let groups: Vec<i64> = if i == 0 { Vec::new() } else { vec![i as i64] };
                partition(&format!("p{i}"), size, max_times[i], tiers[i], &groups)
            })
            .collect();
        let qos = vec![
            Qos {
                max_jobs_per_user: max_jobs,
                max_submit_per_user: max_submit,
                ..qos("limited", &[1, 2])
            },
            Qos {
                grp_cpus,
                ..qos("capped", &[])
            },
        ];
        let config = SlurmConfig {
            partitions: partitions.clone(),
            qos: qos.clone(),
            bf_interval: 10,
            calc_period: 60,
            weights: Weights { age: 1000, ..Weights::default() },
            ..SlurmConfig::default()
        };
        let mut sorted = jobs.clone();
        sorted.sort_by_key(|j| j.0);
        let specs: Vec<Spec> = sorted.iter().map(|j| (j.0, j.1, j.2, j.3, j.4)).collect();
        let runtimes: Vec<(usize, Time)> = sorted
            .iter()
            .enumerate()
            .filter(|(_, j)| j.5 < 60)
            .map(|(i, j)| (i, (j.2 * i64::from(j.5) / 60).max(1)))
            .collect();
        let (starts, at, cluster) =
            drive(SlurmRule::new(config.clone()), 16, &specs, &runtimes);
        // which jobs can never start, decided here from the configuration alone
        let never = |&(_, processors, estimate, _, group): &Spec| {
            let selecting: Vec<&Partition> =
                partitions.iter().filter(|p| p.jobs.selects(group, -1)).collect();
            let candidates = if selecting.is_empty() {
                partitions.iter().collect()
            } else {
                selecting
            };
            let taken = candidates.iter().any(|p| {
                p.processors.unwrap_or(16) >= processors
                    && p.max_time.is_none_or(|m| estimate <= m)
            });
            let q = qos.iter().position(|q| q.jobs.selects(group, -1)).unwrap_or(0);
            !taken || qos[q].grp_cpus.is_some_and(|cap| processors > cap)
        };
        for (i, spec) in specs.iter().enumerate() {
            let held = never(spec);
            proptest::prop_assert_eq!(held, starts[i] < 0, "job {} {:?}: {:?}", i, spec, starts);
            proptest::prop_assert_eq!(held, cluster.is_held(JobId(i as u32)));
        }
        let held = specs.iter().filter(|s| never(s)).count();
        proptest::prop_assert_eq!(SlurmRule::of(&cluster).unwrap().never_started().len(), held);
        let runtime = |i: usize| runtimes.iter().find(|r| r.0 == i).map_or(specs[i].2, |r| r.1);
        // every instant a job starts, what runs then
        for (i, &t) in starts.iter().enumerate().filter(|(_, t)| **t >= 0) {
            let running: Vec<usize> = (0..specs.len())
                .filter(|&j| starts[j] >= 0 && starts[j] <= t && t < starts[j] + runtime(j))
                .collect();
            let at_i = at[i].expect("recorded at start");
            let part = usize::from(at_i.partition);
            if let Some(cap) = partitions[part].processors {
                let held: u32 = running
                    .iter()
                    .filter(|&&j| at[j].is_some_and(|a| usize::from(a.partition) == part))
                    .map(|&j| specs[j].1)
                    .sum();
                proptest::prop_assert!(held <= cap, "partition {part} over {cap} at {t}");
            }
            let q = usize::from(at_i.qos);
            let same_qos = |j: &&usize| at[**j].is_some_and(|a| usize::from(a.qos) == q);
            if let Some(max) = qos[q].max_jobs_per_user {
                let user = specs[i].3;
                let n = running.iter().filter(same_qos).filter(|&&j| specs[j].3 == user).count();
                proptest::prop_assert!(n as u32 <= max, "user {user} runs {n} at {t}");
            }
            if let Some(cap) = qos[q].grp_cpus {
                let held: u32 = running.iter().filter(same_qos).map(|&j| specs[j].1).sum();
                proptest::prop_assert!(held <= cap, "QOS {q} holds {held} at {t}");
            }
        }
        let mut plain = SlurmRule::new(config);
        plain.shortcuts = false;
        let (expected, _, _) = drive(plain, 16, &specs, &runtimes);
        proptest::prop_assert_eq!(starts, expected);
    }
}

#[test]
fn a_submission_after_a_quiet_spell_waits_for_its_event_run() {
    // the machine idles from 101 to 1000: the periodic runs due meanwhile had nothing to do,
    // so the job submitted at 1000 starts at its event run a second later, not at once
    let jobs = [(0, 4, 100, 1, 1), (1000, 4, 100, 1, 1)];
    let s = starts(SlurmConfig::default(), 10, &jobs);
    assert_eq!(s, vec![1, 1001]);
    // submitted exactly on the periodic grid (every 60 s from the first submission), it starts
    // in that run
    let jobs = [(0, 4, 100, 1, 1), (1020, 4, 100, 1, 1)];
    let s = starts(SlurmConfig::default(), 10, &jobs);
    assert_eq!(s, vec![1, 1020]);
}

#[test]
fn bf_max_job_part_limits_the_jobs_a_cycle_examines_per_partition() {
    // A holds 8 of the 10 processors until 1001; B (all 10) waits behind it; C and D (one
    // processor each) backfill into the 2 free ones at the first cycle, unless a cycle may
    // examine only one job of the partition: then it examines B, which reserves, and C and D
    // wait until B has run
    let jobs = [
        (0, 8, 1000, 1, 1),
        (10, 10, 100, 2, 2),
        (10, 1, 100, 3, 3),
        (10, 1, 100, 4, 4),
    ];
    let s = starts(SlurmConfig::default(), 10, &jobs);
    assert!(s[2] < 100 && s[3] < 100, "{s:?}");
    let limited = SlurmConfig {
        bf_max_job_part: 1,
        ..SlurmConfig::default()
    };
    let s = starts(limited, 10, &jobs);
    assert!(s[2] > 1000 && s[3] > 1000, "{s:?}");
}
