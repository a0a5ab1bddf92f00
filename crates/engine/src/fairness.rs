//! Fair start times (Sabin & Sadayappan; Tsafrir's thesis, section 3.7).
//!
//! A job's fair start time (FST) is when it would start under a hypothetical scheduler that runs
//! conservative backfilling with exact runtimes and, at the instant the job arrives, switches to
//! strict FCFS without backfilling: then no job that arrives later can delay it, and it waits
//! only for the jobs that were there first. Unfairness is the mean of max(0, start - FST).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use cluster::{Cluster, ListOrder, Scheduler};
use metrics::JobRecord;

use crate::{EngineError, Job, Observer, Replay, Time, simulate};

/// Computes every job's fair start time on a machine of `processors` processors and stores it in
/// [`JobRecord::fair_start`]. The workload is the records' jobs as they ran (submit, size, and
/// the effective runtime end - start as an exact estimate), so it serves replay and closed loop
/// alike. Costs one conservative simulation plus, per arrival instant, a strict-FCFS sweep of
/// the queue.
pub fn add_fair_start_times(processors: u32, records: &mut [JobRecord]) -> Result<(), EngineError> {
    add_fair_start_times_observed(processors, records, &mut ())
}

/// [`add_fair_start_times`], with `observer` seeing every pass of the hypothetical simulation
/// (a front end's progress: it is a whole second simulation of the jobs).
pub fn add_fair_start_times_observed(
    processors: u32,
    records: &mut [JobRecord],
    observer: &mut dyn Observer,
) -> Result<(), EngineError> {
    // The hypothetical simulation numbers jobs in (submit, index) order.
    let mut order: Vec<usize> = (0..records.len()).collect();
    order.sort_by_key(|&i| (records[i].submit, i));
    let jobs: Vec<Job> = order
        .iter()
        .map(|&i| {
            let r = &records[i];
            let runtime = r.runtime();
            Job {
                array_task: Default::default(),
                reservation: Default::default(),
                shape: Default::default(),
                job_id: i as i64,
                user: r.user,
                group: -1,
                submit: r.submit,
                processors: r.processors,
                estimate: runtime,
                runtime,
                bandwidth: 0,
                partition: -1,
                queue: -1,
                extra: job::Extra::NONE,
            }
        })
        .collect();
    let mut cluster = Cluster::new(processors, Scheduler::conservative(ListOrder::Fcfs));
    let mut observer = FairStarts {
        fair: vec![None; jobs.len()],
        releases: BinaryHeap::new(),
        runtimes: jobs.iter().map(|j| j.runtime).collect(),
        outer: observer,
    };
    simulate(
        &mut cluster,
        &mut Replay::from_jobs(processors, jobs),
        &mut observer,
    )?;
    for (k, fair) in observer.fair.into_iter().enumerate() {
        records[order[k]].fair_start = fair;
    }
    Ok(())
}

/// At each pass, the jobs that arrived now get their start under strict FCFS from the current
/// state (running jobs end at their exact runtimes; the queue is in arrival order).
struct FairStarts<'o> {
    fair: Vec<Option<Time>>,
    releases: BinaryHeap<Reverse<(Time, u32)>>,
    runtimes: Vec<Time>,
    /// The caller's observer, told of every pass.
    outer: &'o mut dyn Observer,
}

impl Observer for FairStarts<'_> {
    fn after_pass(&mut self, now: Time, cluster: &Cluster) {
        self.outer.after_pass(now, cluster);
    }

    fn before_pass(&mut self, now: Time, cluster: &Cluster) {
        self.outer.before_pass(now, cluster);
        if !cluster.queue().any(|job| job.submit == now) {
            return;
        }
        self.releases.clear();
        self.releases.extend(
            cluster
                .expected_releases()
                .map(|(end, procs)| Reverse((end, procs))),
        );
        let mut free = cluster.free_processors();
        let mut at = now;
        for job in cluster.queue() {
            while free < job.processors {
                let Some(Reverse((end, procs))) = self.releases.pop() else {
                    break; // unreachable: the whole machine frees up eventually
                };
                at = at.max(end);
                free += procs;
            }
            free -= job.processors.min(free);
            let runtime = self.runtimes[job.id.0 as usize];
            self.releases
                .push(Reverse((at + runtime.max(0), job.processors)));
            if job.submit == now {
                self.fair[job.id.0 as usize] = Some(at);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(submit: Time, start: Time, runtime: Time, processors: u32) -> JobRecord {
        JobRecord {
            job: metrics::Job {
                submit,
                processors,
                estimate: runtime,
                ..metrics::Job::default()
            },
            start,
            end: start + runtime,
            ..JobRecord::default()
        }
    }

    #[test]
    fn fair_start_waits_only_for_earlier_jobs() {
        // 4 processors. A (4 procs, 100 s) at 0; B (4 procs, 100 s) at 10; C (1 proc, 10 s) at
        // 20. Under FCFS from C's arrival, C waits for A and B: FST 200. D (4 procs) at 30
        // comes after C: FST 210.
        let mut records = vec![
            record(0, 0, 100, 4),
            record(10, 100, 100, 4),
            record(20, 100, 10, 1), // an EASY-like schedule backfilled... or not: starts at 100
            record(30, 210, 50, 4),
        ];
        add_fair_start_times(4, &mut records).unwrap();
        let fair: Vec<Option<Time>> = records.iter().map(|r| r.fair_start).collect();
        assert_eq!(fair, vec![Some(0), Some(100), Some(200), Some(210)]);
        // C started at 100, before its fair start: no unfairness; B on time.
        let delays: Vec<Time> = records.iter().map(|r| r.unfair_delay().unwrap()).collect();
        assert_eq!(delays, vec![0, 0, 0, 0]);
        // Had D jumped ahead of B, B would have been delayed beyond its fair start.
        records[1].start = 160;
        assert_eq!(records[1].unfair_delay(), Some(60));
    }

    #[test]
    fn conservative_backfilling_before_the_arrival_counts() {
        // 4 processors. A (2 procs, 100 s), B (4 procs, 50 s) and C (2 procs, 100 s) at 0.
        // C's own fair start is behind B (strict FCFS from its arrival): 150. But the
        // hypothetical scheduler is conservative until D arrives, so C backfills at 0 there.
        // D (3 procs, 10 s) at 5 then finds A and C running until 100 and B waiting: strict
        // FCFS from 5 starts B at 100 and D at 150 (had C still waited, D would start at 250).
        let mut records = vec![
            record(0, 0, 100, 2),
            record(0, 100, 50, 4),
            record(0, 0, 100, 2),
            record(5, 150, 10, 3),
        ];
        add_fair_start_times(4, &mut records).unwrap();
        let fair: Vec<Option<Time>> = records.iter().map(|r| r.fair_start).collect();
        assert_eq!(fair, vec![Some(0), Some(100), Some(150), Some(150)]);
    }
}
