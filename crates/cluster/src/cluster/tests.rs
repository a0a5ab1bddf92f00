//! The EASY rules on hand-built cases. Times are seconds; the machine has 10 processors unless
//! stated otherwise.

use super::*;
use crate::{BackfillOrder, Predictor};

/// A job of `processors` processors submitted at `submit` with `estimate` (seconds), of user 0
/// and no group, partition or queue (shared with other modules' tests).
pub(crate) fn job(id: u32, submit: Time, processors: u32, estimate: Time) -> JobRequest {
    JobRequest {
        array_task: Default::default(),
        reservation: Default::default(),
        shape: Default::default(),
        id: JobId(id),
        submit,
        processors,
        estimate,
        user: 0,
        group: -1,
        partition: -1,
        queue: -1,
        extra: crate::Extra::NONE,
    }
}

fn ids(started: &[Started]) -> Vec<u32> {
    started.iter().map(|s| s.id.0).collect()
}

/// A cluster with the given jobs already running (all started at time 0).
fn busy(scheduler: Scheduler, machine: u32, running: &[(u32, u32, Time)]) -> Cluster {
    let mut c = Cluster::new(machine, scheduler);
    for &(id, processors, estimate) in running {
        c.submit(job(id, 0, processors, estimate)).unwrap();
    }
    assert_eq!(c.schedule(0).len(), running.len());
    c
}

#[test]
fn shadow_time_is_when_enough_processors_return() {
    // A: 6 procs until 100, B: 2 procs until 50; 2 free. C needs 5: B's release gives 4, A's
    // gives 10 -> shadow 100, extra 10 - 5 = 5.
    let mut c = busy(Scheduler::easy(), 10, &[(1, 6, 100), (2, 2, 50)]);
    c.submit(job(3, 0, 5, 10)).unwrap();
    assert!(c.schedule(0).is_empty());
    let r = c.last_reservation().unwrap();
    assert_eq!(
        (r.job, r.shadow_time, r.extra_processors),
        (JobId(3), 100, 5)
    );
}

#[test]
fn job_ending_by_shadow_backfills_without_using_extra() {
    let mut c = busy(Scheduler::easy(), 10, &[(1, 6, 100), (2, 2, 50)]);
    c.submit(job(3, 0, 5, 10)).unwrap(); // blocked head, shadow 100, extra 5
    c.submit(job(4, 0, 1, 100)).unwrap(); // ends exactly at the shadow time
    c.submit(job(5, 0, 1, 1000)).unwrap(); // runs past it: uses one extra processor
    let started = c.schedule(0).to_vec();
    assert_eq!(ids(&started), vec![4, 5]);
    assert!(started.iter().all(|s| s.backfilled));
    // Only job 5 consumed an extra processor.
    assert_eq!(c.last_reservation().unwrap().extra_processors, 4);
    assert_eq!(c.free_processors(), 0);
}

#[test]
fn long_jobs_may_use_only_the_extra_processors() {
    // A: 8 procs until 100; 2 free. C needs 9 -> shadow 100, extra 1.
    let mut c = busy(Scheduler::easy(), 10, &[(1, 8, 100)]);
    c.submit(job(3, 0, 9, 10)).unwrap();
    c.submit(job(4, 0, 2, 1000)).unwrap(); // fits now but needs 2 > 1 extra: waits
    c.submit(job(5, 0, 1, 1000)).unwrap(); // takes the one extra processor
    c.submit(job(6, 0, 1, 101)).unwrap(); // ends after the shadow, no extra left: waits
    c.submit(job(7, 0, 1, 50)).unwrap(); // ends by the shadow: starts with extra = 0
    assert_eq!(ids(c.schedule(0)), vec![5, 7]);
    let r = c.last_reservation().unwrap();
    assert_eq!((r.shadow_time, r.extra_processors), (100, 0));
    assert_eq!(c.waiting(), 3);
}

#[test]
fn shadow_counts_releases_only_until_the_size_is_reached() {
    // Three jobs of 3 end together at 100; 1 free. C needs 4: the first release (lowest id)
    // already reaches 4, so the extra is 0 even though 9 processors return at 100.
    let mut c = busy(
        Scheduler::easy(),
        10,
        &[(1, 3, 100), (2, 3, 100), (3, 3, 100)],
    );
    c.submit(job(4, 0, 4, 10)).unwrap();
    c.submit(job(5, 0, 1, 1000)).unwrap();
    assert!(c.schedule(0).is_empty());
    let r = c.last_reservation().unwrap();
    assert_eq!((r.shadow_time, r.extra_processors), (100, 0));
}

#[test]
fn shadow_uses_estimates_relative_to_start_times() {
    // A started at 0 with estimate 500; B started at 100 with estimate 100 (ends by 200);
    // 2 of 12 free. C needs 4: B's release at 200 gives 7 -> shadow 200, extra 3.
    let mut c = Cluster::new(12, Scheduler::easy());
    c.submit(job(1, 0, 5, 500)).unwrap();
    c.schedule(0);
    c.submit(job(2, 100, 5, 100)).unwrap();
    c.schedule(100);
    c.submit(job(3, 150, 4, 10)).unwrap();
    c.schedule(150);
    let r = c.last_reservation().unwrap();
    assert_eq!((r.shadow_time, r.extra_processors), (200, 3));
}

#[test]
fn head_jobs_start_in_order_until_one_does_not_fit() {
    let mut c = Cluster::new(10, Scheduler::fcfs());
    c.submit(job(1, 0, 4, 10)).unwrap();
    c.submit(job(2, 1, 4, 10)).unwrap();
    c.submit(job(3, 2, 4, 10)).unwrap();
    c.submit(job(4, 3, 1, 10)).unwrap();
    // FCFS: 1 and 2 start; 3 does not fit and 4 may not pass it.
    assert_eq!(ids(c.schedule(3)), vec![1, 2]);
    assert!(c.last_reservation().is_none());
    assert_eq!(c.waiting(), 2);
    c.finish(JobId(1), 0).unwrap();
    assert_eq!(ids(c.schedule(13)), vec![3, 4]);
}

#[test]
fn easy_backfills_what_fcfs_holds_back() {
    let mut c = Cluster::new(10, Scheduler::easy());
    for (id, submit, p) in [(1, 0, 4), (2, 1, 4), (3, 2, 4), (4, 3, 1)] {
        c.submit(job(id, submit, p, 10)).unwrap();
    }
    let started = c.schedule(3).to_vec();
    assert_eq!(ids(&started), vec![1, 2, 4]);
    assert_eq!(
        started.iter().map(|s| s.backfilled).collect::<Vec<_>>(),
        vec![false, false, true]
    );
}

#[test]
fn kill_time_is_start_plus_estimate() {
    let mut c = Cluster::new(4, Scheduler::easy());
    c.submit(job(1, 5, 2, 300)).unwrap();
    let s = c.schedule(20)[0];
    assert_eq!((s.start, s.kill_time), (20, 320));
}

#[test]
fn finishing_returns_processors() {
    let mut c = busy(Scheduler::easy(), 10, &[(1, 6, 100), (2, 2, 50)]);
    assert_eq!(c.free_processors(), 2);
    c.finish(JobId(1), 0).unwrap();
    assert_eq!(c.free_processors(), 8);
    assert_eq!(c.running(), 1);
    assert_eq!(
        c.finish(JobId(1), 0),
        Err(ClusterError::NotRunning(JobId(1)))
    );
}

#[test]
fn jobs_that_cannot_run_are_refused() {
    let mut c = Cluster::new(10, Scheduler::easy());
    assert!(matches!(
        c.submit(job(1, 0, 11, 10)),
        Err(ClusterError::BadSize { .. })
    ));
    assert!(matches!(
        c.submit(job(2, 0, 0, 10)),
        Err(ClusterError::BadSize { .. })
    ));
    assert!(matches!(
        c.submit(job(3, 0, 1, -1)),
        Err(ClusterError::NegativeEstimate { .. })
    ));
}

#[test]
fn creasy_runs_critical_jobs_first() {
    // The machine is full until 1000. Job 2 (submitted at 0, estimate 10 h) and job 3
    // (submitted at 500, estimate 1 min) both need the whole machine. At 1000, EASY runs the
    // older job 2; CREASY with alpha 6000 runs the critical job 3 first.
    for (scheduler, first) in [(Scheduler::easy(), 2), (Scheduler::creasy(6000.0), 3)] {
        let mut c = busy(scheduler, 10, &[(1, 10, 1000)]);
        c.submit(job(2, 0, 10, 36_000)).unwrap();
        c.submit(job(3, 500, 10, 60)).unwrap();
        c.schedule(500);
        c.finish(JobId(1), 0).unwrap();
        assert_eq!(ids(c.schedule(1000)), vec![first]);
    }
}

#[test]
fn creasy_reserves_for_its_highest_priority_job() {
    let mut c = busy(Scheduler::creasy(6000.0), 10, &[(1, 8, 1000)]);
    c.submit(job(2, 0, 10, 36_000)).unwrap(); // old, long: low criticality
    c.submit(job(3, 0, 9, 60)).unwrap(); // short: critical
    c.schedule(0);
    assert_eq!(c.last_reservation().unwrap().job, JobId(3));
}

// Conservative backfilling.

fn conservative() -> Scheduler {
    Scheduler::conservative(crate::ListOrder::Fcfs)
}

#[test]
fn conservative_gives_every_waiting_job_a_reservation() {
    // A: 6 procs until 100, B: 2 until 50; 2 free.
    let mut c = busy(conservative(), 10, &[(1, 6, 100), (2, 2, 50)]);
    c.submit(job(3, 0, 5, 10)).unwrap(); // 4 free from 50, 10 from 100 -> reserved at 100
    c.submit(job(4, 0, 4, 60)).unwrap(); // 4 free over [50, 100), 5 beside job 3 after -> 50
    c.submit(job(5, 0, 2, 50)).unwrap(); // fits now and ends by 50
    let started = ids(c.schedule(0));
    assert_eq!(started, vec![5]);
    assert_eq!(c.planned_start(JobId(3)), Some(100));
    assert_eq!(c.planned_start(JobId(4)), Some(50));
    assert!(c.last_started()[0].backfilled);
}

#[test]
fn conservative_backfills_only_what_delays_no_reservation() {
    // A: 8 procs until 100; 2 free. Job 3 (9 procs) reserved at 100; job 4 (2 procs, 500 s)
    // would fit now, but over [100, 600) it would leave 8 for job 3: it waits until 200.
    let mut c = busy(conservative(), 10, &[(1, 8, 100)]);
    c.submit(job(3, 0, 9, 100)).unwrap();
    c.submit(job(4, 0, 2, 500)).unwrap();
    assert!(c.schedule(0).is_empty());
    assert_eq!(c.planned_start(JobId(3)), Some(100));
    assert_eq!(c.planned_start(JobId(4)), Some(200));
    // A 1-wide long job fits beside job 3 (9 + 1 = 10) and job 4 (2 + 1): it starts now.
    c.submit(job(5, 0, 1, 500)).unwrap();
    assert_eq!(ids(c.schedule(0)), vec![5]);
}

#[test]
fn conservative_protects_later_reservations_that_easy_does_not() {
    // A: 5 procs until 100; 5 free. Job 3 (8 procs, 100 s) -> [100, 200), leaving 2 extra at
    // EASY's shadow time. Job 4 (9 procs, 300 s) -> [200, 500), leaving 1. Job 5 (2 procs,
    // 1000 s) fits now and in EASY's extra, but would leave job 4 one processor short.
    let jobs = [job(3, 0, 8, 100), job(4, 0, 9, 300), job(5, 0, 2, 1000)];
    let mut c = busy(conservative(), 10, &[(1, 5, 100)]);
    for j in jobs {
        c.submit(j).unwrap();
    }
    assert!(c.schedule(0).is_empty());
    assert_eq!(c.planned_start(JobId(3)), Some(100));
    assert_eq!(c.planned_start(JobId(4)), Some(200));
    assert_eq!(c.planned_start(JobId(5)), Some(500));
    let mut easy = busy(Scheduler::easy(), 10, &[(1, 5, 100)]);
    for j in jobs {
        easy.submit(j).unwrap();
    }
    assert_eq!(ids(easy.schedule(0)), vec![5]);
}

#[test]
fn conservative_compresses_when_a_job_ends_early() {
    // A: 6 procs until 100 (estimate), B: 4 until 300. Job 3 needs 10 -> 300. Job 4: 6 procs,
    // 150 s: [100, 250) has 6 free -> 100.
    let mut c = busy(conservative(), 10, &[(1, 6, 100), (2, 4, 300)]);
    c.submit(job(3, 0, 10, 50)).unwrap();
    c.submit(job(4, 0, 6, 150)).unwrap();
    assert!(c.schedule(0).is_empty());
    assert_eq!(c.planned_start(JobId(3)), Some(300));
    assert_eq!(c.planned_start(JobId(4)), Some(100));
    // A ends at 40: job 4 moves to 40 and starts; job 3 keeps 300 (B still runs).
    c.finish(JobId(1), 0).unwrap();
    assert_eq!(ids(c.schedule(40)), vec![4]);
    assert_eq!(c.planned_start(JobId(3)), Some(300));
    // B ends at 120: job 4 (estimate to 190) still holds 6, so job 3 moves to 190 only.
    c.finish(JobId(2), 0).unwrap();
    assert!(c.schedule(120).is_empty());
    assert_eq!(c.planned_start(JobId(3)), Some(190));
    c.finish(JobId(4), 0).unwrap();
    assert_eq!(ids(c.schedule(150)), vec![3]);
}

#[test]
fn compression_never_lets_an_earlier_job_take_a_later_ones_slot() {
    // The case where rebuilding the schedule from scratch would delay job 4: A (2 procs) until
    // 10, S (2 procs) until 100 on 4 processors. Job 3 (4 procs, 10 s) -> 100; job 4 (2 procs,
    // 50 s) -> [10, 60). S ends at 5: from scratch, job 3 would take 10 and push job 4 to 20.
    // Compression keeps job 4 at 10 (or earlier) and puts job 3 after it.
    let mut c = busy(conservative(), 4, &[(1, 2, 10), (2, 2, 100)]);
    c.submit(job(3, 0, 4, 10)).unwrap();
    c.submit(job(4, 0, 2, 50)).unwrap();
    assert!(c.schedule(0).is_empty());
    assert_eq!(c.planned_start(JobId(3)), Some(100));
    assert_eq!(c.planned_start(JobId(4)), Some(10));
    c.finish(JobId(2), 0).unwrap();
    // Job 3 re-placed first: with job 4 held over [10, 60) it fits only at 60. Job 4 then moves
    // to 5: [5, 55) has 2 free beside A until 10 and job 3 from 60.
    assert_eq!(ids(c.schedule(5)), vec![4]);
    assert_eq!(c.planned_start(JobId(3)), Some(60));
}

#[test]
fn shortest_first_order_decides_who_gets_freed_processors() {
    // A: 10 procs until 100. Jobs 2 (long) and 3 (short), both 10 wide and submitted together:
    // the order places one of them first, at 100, and the other after it.
    for (order, first) in [(crate::ListOrder::Fcfs, 2), (crate::ListOrder::Sjf, 3)] {
        let mut c = busy(Scheduler::conservative(order), 10, &[(1, 10, 100)]);
        c.submit(job(2, 0, 10, 500)).unwrap();
        c.submit(job(3, 0, 10, 50)).unwrap();
        assert!(c.schedule(0).is_empty());
        assert_eq!(c.planned_start(JobId(first)), Some(100), "{order:?}");
    }
}

/// A job of `user`.
fn job_of(user: i64, id: u32, submit: Time, processors: u32, estimate: Time) -> JobRequest {
    JobRequest {
        user,
        group: -1,
        ..job(id, submit, processors, estimate)
    }
}

/// An EASY+ cluster of 10 processors where user 7 has finished two 10-second jobs (ids 1, 2),
/// so the user's next jobs are predicted to run 10 s. Time is 100.
fn easy_plus_with_history() -> Cluster {
    let mut c = Cluster::new(
        10,
        Scheduler::easy_with(Predictor::RecentUserRuntimes, BackfillOrder::Queue),
    );
    c.submit(job_of(7, 1, 0, 1, 1000)).unwrap();
    c.submit(job_of(7, 2, 0, 1, 1000)).unwrap();
    assert_eq!(c.schedule(0).len(), 2);
    c.finish(JobId(1), 10).unwrap();
    c.finish(JobId(2), 10).unwrap();
    c
}

#[test]
fn predictions_replace_estimates_for_backfilling_but_not_for_killing() {
    let mut c = easy_plus_with_history();
    // A (8 procs, estimate 100) runs 100-200; B (10 procs) waits: shadow 200. User 7's job C
    // (2 procs, estimate 1000, predicted 10 s) ends by the shadow by its prediction.
    c.submit(job_of(1, 3, 100, 8, 100)).unwrap();
    assert_eq!(ids(c.schedule(100)), vec![3]);
    c.submit(job_of(1, 4, 100, 10, 100)).unwrap();
    c.submit(job_of(7, 5, 100, 2, 1000)).unwrap();
    assert_eq!(c.prediction(JobId(5)), Some(10));
    let started = c.schedule(100).to_vec();
    assert_eq!(ids(&started), vec![5]);
    assert_eq!(
        started[0].kill_time, 1100,
        "killed at the user estimate only"
    );
    // Plain EASY would not backfill it: it ends after the shadow and there are no extras.
    let mut easy = busy(Scheduler::easy(), 10, &[(3, 8, 100)]);
    easy.submit(job(4, 0, 10, 100)).unwrap();
    easy.submit(job(5, 0, 2, 1000)).unwrap();
    assert!(easy.schedule(0).is_empty());
}

#[test]
fn an_expired_prediction_is_corrected_to_the_estimate_and_the_reservation_moves() {
    let mut c = easy_plus_with_history();
    // User 7's job C (8 procs, estimate 1000, predicted 10 s) starts at 100.
    c.submit(job_of(7, 3, 100, 8, 1000)).unwrap();
    assert_eq!(ids(c.schedule(100)), vec![3]);
    assert_eq!(c.next_prediction_expiry(), Some(110));
    // D (10 procs) waits with its reservation at 110 (C's predicted end); nothing corrected yet.
    c.submit(job_of(1, 4, 105, 10, 50)).unwrap();
    assert!(c.schedule(105).is_empty());
    assert_eq!(c.last_reservation().unwrap().shadow_time, 110);
    assert_eq!(c.correct_expired_predictions(109), 0);
    // At 110 C still runs: its prediction becomes its estimate, and D's shadow time 1100.
    assert_eq!(c.correct_expired_predictions(110), 1);
    assert_eq!(c.prediction(JobId(3)), Some(1000));
    assert_eq!(c.next_prediction_expiry(), Some(1100));
    assert!(c.schedule(110).is_empty());
    assert_eq!(c.last_reservation().unwrap().shadow_time, 1100);
    // C ends at 400: accuracy 10/300 from submit (100) to 110, then 300/1000 until 400.
    let finished = c.finish(JobId(3), 400).unwrap();
    assert_eq!(finished.corrections, 1);
    let expected = (10.0 / 300.0 * 10.0 + 0.3 * 290.0) / 300.0;
    assert!((finished.accuracy - expected).abs() < 1e-12);
}

#[test]
fn sjbf_backfills_the_shortest_candidate_first_and_keeps_the_fcfs_reservation() {
    // A (8 procs until 100) runs; B (10 procs) is reserved at 100; C (2 procs, 90 s) and
    // D (2 procs, 20 s) both end by the shadow time, but only one fits the 2 free processors.
    let run = |order| {
        let mut c = busy(
            Scheduler::easy_with(Predictor::UserEstimate, order),
            10,
            &[(1, 8, 100)],
        );
        c.submit(job(2, 0, 10, 100)).unwrap();
        c.submit(job(3, 0, 2, 90)).unwrap();
        c.submit(job(4, 0, 2, 20)).unwrap();
        let started = ids(c.schedule(0));
        (started, c.last_reservation().unwrap().job)
    };
    assert_eq!(run(BackfillOrder::Queue), (vec![3], JobId(2)));
    assert_eq!(run(BackfillOrder::ShortestFirst), (vec![4], JobId(2)));
}

#[test]
fn basic_dynp_switches_by_the_mean_estimate_of_at_least_five_waiting_jobs() {
    use crate::dynp::DynP;
    let dynp = Scheduler::dynp(DynP::Basic {
        lower: 100,
        upper: 200,
    });
    // The machine is full until 1000; jobs wait.
    let mut c = busy(dynp, 4, &[(1, 4, 1000)]);
    for id in 2..=5 {
        c.submit(job(id, 0, 1, 50)).unwrap();
    }
    c.schedule(0);
    let usage = c.policy_usage().unwrap().clone();
    assert_eq!(usage.decisions, 0, "four waiting jobs: no decision");
    // A fifth short job: AERT 50 <= 100 -> SJF.
    c.submit(job(6, 1, 1, 50)).unwrap();
    c.schedule(1);
    let usage = c.policy_usage().unwrap().clone();
    assert_eq!((usage.decisions, usage.switches_to), (1, [0, 1, 0]));
    // Long jobs raise AERT above 200: LJF, and the queue is in LJF order.
    for id in 7..=12 {
        c.submit(job(id, 2, 1, 900)).unwrap();
    }
    c.schedule(2);
    let usage = c.policy_usage().unwrap().clone();
    assert_eq!((usage.decisions, usage.switches_to), (2, [0, 1, 1]));
    assert_eq!(c.queue().next().unwrap().estimate, 900);
    // No submission: no decision.
    c.schedule(3);
    assert_eq!(c.policy_usage().unwrap().decisions, 2);
}

#[test]
fn self_tuning_dynp_adopts_the_best_virtual_schedule() {
    use crate::dynp::{Decider, DynP, Quality};
    // 2 processors, one busy until 100. Waiting: a long job (1 proc, 1000 s) and then three
    // short ones (1 proc, 10 s). SJF puts the short ones first: better ART than FCFS and LJF.
    let dynp = Scheduler::dynp(DynP::SelfTuning {
        quality: Quality::ResponseTime,
        decider: Decider::Advanced,
    });
    let mut c = busy(dynp, 2, &[(1, 2, 100)]);
    c.submit(job(2, 0, 1, 1000)).unwrap();
    for id in 3..=5 {
        c.submit(job(id, 1, 1, 10)).unwrap();
    }
    c.schedule(1);
    let usage = c.policy_usage().unwrap();
    // The first pass (job 1 starts at once) decided nothing; this one is case 2.
    assert_eq!(usage.decisions, 1);
    assert_eq!(usage.switches_to, [0, 1, 0]);
    assert_eq!(usage.cases[crate::dynp::Case::C2 as usize], 1);
    let order: Vec<u32> = c.queue().map(|j| j.id.0).collect();
    assert_eq!(order, vec![3, 4, 5, 2]);
    // The plan is adopted: at 100 the SJF schedule starts two short jobs.
    c.finish(JobId(1), 100).unwrap();
    assert_eq!(ids(c.schedule(100)), vec![3, 4]);
}

/// Self-tuning dynP on one processor, busy until 100 with job 1: job 2 (1000 s) waits, job 3
/// (10 s) arrives and SJF is strictly best (case 2); at 100 job 3 starts. At 101 job 4 (2000 s)
/// arrives behind job 2: FCFS and SJF give the same schedule, LJF a worse one, and the policy
/// is SJF: Table 1's case 6b, where the simple decider takes FCFS and the advanced one keeps SJF.
/// Returns the cluster after that decision.
fn case_6b(decider: crate::dynp::Decider) -> Cluster {
    use crate::dynp::{DynP, Quality};
    let dynp = Scheduler::dynp(DynP::SelfTuning {
        quality: Quality::WidthWeightedResponseTime,
        decider,
    });
    let mut c = busy(dynp, 1, &[(1, 1, 100)]);
    c.submit(job(2, 0, 1, 1000)).unwrap();
    c.submit(job(3, 1, 1, 10)).unwrap();
    assert!(c.schedule(1).is_empty());
    c.finish(JobId(1), 100).unwrap();
    assert_eq!(ids(c.schedule(100)), vec![3]);
    c.submit(job(4, 101, 1, 2000)).unwrap();
    assert!(c.schedule(101).is_empty());
    c
}

#[test]
fn table_1_case_6b_separates_the_deciders_only_by_their_tie_rule() {
    use crate::dynp::{Case, Decider};
    let simple = case_6b(Decider::Simple);
    let advanced = case_6b(Decider::Advanced);
    for c in [&simple, &advanced] {
        let usage = c.policy_usage().unwrap();
        // Decisions at 1 (case 2), 100 (case 2: job 3 before job 2) and 101; none at 0, where
        // job 1 started at once.
        assert_eq!(usage.decisions, 3);
        assert_eq!(usage.cases[Case::C1 as usize], 0);
        assert_eq!(usage.cases[Case::C2 as usize], 2);
        assert_eq!(usage.cases[Case::C6b as usize], 1);
    }
    // The simple decider switched to FCFS at the tie; the advanced one kept SJF.
    assert_eq!(simple.policy_usage().unwrap().switches_to, [1, 1, 0]);
    assert_eq!(advanced.policy_usage().unwrap().switches_to, [0, 1, 0]);
    // Both adopted schedules are the same (that is what the tie says): job 2, then job 4.
    for mut c in [simple, advanced] {
        let order: Vec<u32> = c.queue().map(|j| j.id.0).collect();
        assert_eq!(order, vec![2, 4]);
        // A short job arrives: SJF is strictly best again for both, and both start it first.
        c.submit(job(5, 102, 1, 5)).unwrap();
        c.schedule(102);
        c.finish(JobId(3), 110).unwrap();
        assert_eq!(ids(c.schedule(110)), vec![5]);
    }
}

#[test]
fn the_simple_decider_takes_fcfs_with_a_single_waiting_job() {
    use crate::dynp::{Case, Decider, DynP, Quality};
    // One processor, busy until 100. Job 2 (1000 s) and job 3 (10 s) wait: SJF (case 2). At
    // 100 job 3 starts; at 105 job 2 waits alone: the three schedules are equal, case 1, where
    // the simple decider takes FCFS and the advanced one keeps SJF.
    for (decider, fcfs_switches) in [(Decider::Simple, 1), (Decider::Advanced, 0)] {
        let dynp = Scheduler::dynp(DynP::SelfTuning {
            quality: Quality::WidthWeightedResponseTime,
            decider,
        });
        let mut c = busy(dynp, 1, &[(1, 1, 100)]);
        c.submit(job(2, 0, 1, 1000)).unwrap();
        c.submit(job(3, 1, 1, 10)).unwrap();
        c.schedule(1);
        c.finish(JobId(1), 100).unwrap();
        assert_eq!(ids(c.schedule(100)), vec![3]);
        assert!(c.schedule(105).is_empty());
        let usage = c.policy_usage().unwrap();
        assert_eq!(usage.decisions, 3, "{decider:?}");
        assert_eq!(usage.cases[Case::C1 as usize], 1, "{decider:?}");
        assert_eq!(usage.switches_to, [fcfs_switches, 1, 0], "{decider:?}");
    }
}

#[test]
fn the_makespan_quality_counts_the_running_jobs() {
    use crate::dynp::{Case, Decider, DynP, Quality};
    // 4 processors; job 1 (2 processors) runs until 1000. Waiting: X (2 processors, 100 s),
    // Y (1, 300 s), Z (1, 50 s). Over the waiting jobs alone FCFS and LJF end at 400 and SJF at
    // 450 (case 8a), but job 1 ends last in every schedule: the makespans tie (case 1).
    let dynp = Scheduler::dynp(DynP::SelfTuning {
        quality: Quality::Makespan,
        decider: Decider::Advanced,
    });
    let mut c = busy(dynp, 4, &[(1, 2, 1000)]);
    c.submit(job(2, 1, 2, 100)).unwrap();
    c.submit(job(3, 1, 1, 300)).unwrap();
    c.submit(job(4, 1, 1, 50)).unwrap();
    c.schedule(1);
    let usage = c.policy_usage().unwrap();
    assert_eq!(
        usage.decisions, 1,
        "job 1 started at once: no decision then"
    );
    assert_eq!(usage.cases[Case::C1 as usize], 1);
    assert_eq!(usage.cases[Case::C8a as usize], 0);
}

#[test]
fn keeping_the_placed_jobs_makes_a_submission_a_tie_that_a_rebuild_is_not() {
    use crate::dynp::{Case, Decider, DynP, Quality};
    // One processor, busy until 100. At 1 job 2 (1000 s) and job 3 (10 s) arrive: SJF is
    // strictly best (case 2; job 3 at 100, job 2 at 110). At 2 job 4 (5 s) arrives.
    // Rebuilt from scratch, SJF puts job 4 first and beats FCFS = LJF (2, 3, 4): case 2 again.
    // Under the experimental `artww-keep`, jobs 2 and 3 keep their starts in every schedule and
    // job 4 goes after job 2 (1110) in all three: case 1, where the simple decider takes FCFS.
    // At the job end (100) both rebuild: SJF is strictly best and job 4 starts first.
    for (quality, cases_at_2, switches_at_2, switches_at_100) in [
        (
            Quality::WidthWeightedResponseTime,
            [(Case::C2, 2), (Case::C1, 0)],
            [0, 1, 0],
            [0, 1, 0],
        ),
        (
            Quality::WidthWeightedResponseTimeKeepPlaced,
            [(Case::C2, 1), (Case::C1, 1)],
            [1, 1, 0],
            [1, 2, 0],
        ),
    ] {
        let dynp = Scheduler::dynp(DynP::SelfTuning {
            quality,
            decider: Decider::Simple,
        });
        let mut c = busy(dynp, 1, &[(1, 1, 100)]);
        c.submit(job(2, 1, 1, 1000)).unwrap();
        c.submit(job(3, 1, 1, 10)).unwrap();
        assert!(c.schedule(1).is_empty());
        c.submit(job(4, 2, 1, 5)).unwrap();
        assert!(c.schedule(2).is_empty());
        let usage = c.policy_usage().unwrap();
        assert_eq!(usage.decisions, 2, "{quality:?}");
        for (case, count) in cases_at_2 {
            assert_eq!(usage.cases[case as usize], count, "{quality:?} {case:?}");
        }
        assert_eq!(usage.switches_to, switches_at_2, "{quality:?}");
        c.finish(JobId(1), 100).unwrap();
        assert_eq!(ids(c.schedule(100)), vec![4], "{quality:?}");
        let usage = c.policy_usage().unwrap();
        assert_eq!(usage.decisions, 3, "{quality:?}");
        assert_eq!(usage.switches_to, switches_at_100, "{quality:?}");
    }
}

/// One processor, busy until 100. At 1 job 2 (1000 s) and job 3 (10 s) arrive: SJF is strictly
/// best (case 2) and the queue is left in SJF order, job 3 before job 2. At 50 a pass with
/// nothing new: under `quality`, returns the cluster, the queue's order after that pass and
/// after job 4 (2000 s) arrives at 60 and a pass runs.
fn queue_left_in_sjf_order(quality: crate::dynp::Quality) -> (Cluster, Vec<u32>, Vec<u32>) {
    use crate::dynp::{Decider, DynP};
    let dynp = Scheduler::dynp(DynP::SelfTuning {
        quality,
        decider: Decider::Simple,
    });
    let mut c = busy(dynp, 1, &[(1, 1, 100)]);
    c.submit(job(2, 1, 1, 1000)).unwrap();
    c.submit(job(3, 1, 1, 10)).unwrap();
    assert!(c.schedule(1).is_empty());
    let order = |c: &Cluster| -> Vec<u32> { c.queue().map(|j| j.id.0).collect() };
    assert_eq!(order(&c), vec![3, 2], "{quality:?}");
    assert!(c.schedule(50).is_empty());
    let at_50 = order(&c);
    c.submit(job(4, 60, 1, 2000)).unwrap();
    assert!(c.schedule(60).is_empty());
    let at_60 = order(&c);
    (c, at_50, at_60)
}

#[test]
fn the_queue_order_reading_builds_fcfs_in_the_order_the_previous_policy_left() {
    use crate::dynp::{Case, Quality};
    // Default: the FCFS schedule re-sorts by submit time (2, 3), as LJF's does, and SJF's
    // (3, 2) is strictly better at 50 (case 2, Table 1's row 7): the policy stays SJF.
    let (c, at_50, at_60) = queue_left_in_sjf_order(Quality::WidthWeightedResponseTime);
    let usage = c.policy_usage().unwrap();
    assert_eq!(usage.decisions, 3);
    assert_eq!(usage.cases[Case::C2 as usize], 3);
    assert_eq!(usage.switches_to, [0, 1, 0]);
    assert_eq!((at_50, at_60), (vec![3, 2], vec![3, 2, 4]));
    // Issue 32's `artww-queue`: the FCFS schedule keeps the queue's order (3, 2), the SJF
    // order, so FCFS = SJF < LJF with SJF in use: case 6b, where the simple decider takes
    // FCFS; the adopted FCFS schedule is in SJF order. At 60 job 4 goes behind them (the
    // queue's order, then arrivals): FCFS = SJF again, now with FCFS in use (case 6a).
    let (c, at_50, at_60) = queue_left_in_sjf_order(Quality::WidthWeightedResponseTimeQueueOrder);
    let usage = c.policy_usage().unwrap();
    assert_eq!(usage.decisions, 3);
    assert_eq!(usage.cases[Case::C2 as usize], 1);
    assert_eq!(usage.cases[Case::C6b as usize], 1);
    assert_eq!(usage.cases[Case::C6a as usize], 1);
    assert_eq!(usage.switches_to, [1, 1, 0]);
    assert_eq!(c.policy_usage().map(|u| u.jobs_started), Some([1, 0, 0]));
    assert_eq!((at_50, at_60), (vec![3, 2], vec![3, 2, 4]));
}

#[test]
fn start_job_starts_a_waiting_job_that_fits_and_refuses_others() {
    // A: 6 procs until 100; 4 free. Waiting: B (5 procs), C (3), D (1).
    let mut c = busy(Scheduler::easy(), 10, &[(1, 6, 100)]);
    for (id, p) in [(2, 5), (3, 3), (4, 1)] {
        c.submit(job(id, 0, p, 50)).unwrap();
    }
    assert!(c.fits_now(&Resources::processors(4)) && !c.fits_now(&Resources::processors(5)));
    assert_eq!(
        c.start_job(10, JobId(2)).unwrap_err(),
        ClusterError::DoesNotFit(JobId(2))
    );
    assert_eq!(c.waiting(), 3, "a refused start changes nothing");
    // C starts out of order, at 10, killed at its estimate.
    let started = c.start_job(10, JobId(3)).unwrap().to_vec();
    assert_eq!(ids(&started), vec![3]);
    assert_eq!((started[0].start, started[0].kill_time), (10, 60));
    assert_eq!((c.waiting(), c.running(), c.free_processors()), (2, 2, 1));
    assert_eq!(
        c.start_job(10, JobId(3)).unwrap_err(),
        ClusterError::NotWaiting(JobId(3))
    );
    assert_eq!(
        c.start_job(10, JobId(9)).unwrap_err(),
        ClusterError::NotWaiting(JobId(9))
    );
    // The rule's next pass sees the machine as it is: B blocked, D backfills.
    assert_eq!(ids(c.schedule(10)), vec![4]);
}
