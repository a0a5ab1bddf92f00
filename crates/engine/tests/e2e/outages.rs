//! Outages over random workloads ([`cluster::Cluster::with_windows`],
//! [`cluster::Cluster::set_drained`]): no job ever runs on processors while a maintenance window
//! holds them, none starts on drained processors, a reservation's processors run its members
//! alone and only while it lasts, every job runs, and the rules that plan with running jobs'
//! ends refuse outages.

use std::sync::Arc;

use cluster::{Cluster, ReservationId, Window};
use engine::{Facility, Job, Replay, SimOptions, Time, simulate_with};
use proptest::prelude::*;

use crate::common::{spec, workload};

/// Maintenance windows (told to the cluster at its start) and drains (applied as they come).
#[derive(Debug, Clone)]
struct Outages {
    windows: Vec<Window>,
    drains: Vec<(Time, Time, u32)>,
}

impl Outages {
    fn reserved_at(&self, t: Time) -> u32 {
        self.windows
            .iter()
            .filter(|w| w.from <= t && t < w.to)
            .map(|w| w.processors)
            .sum()
    }

    fn drained_at(&self, t: Time) -> u32 {
        self.drains
            .iter()
            .filter(|d| d.0 <= t && t < d.1)
            .map(|d| d.2)
            .sum()
    }
}

impl Facility for Outages {
    fn admit(&self, _job: &mut Job, now: Time) -> Time {
        now
    }

    fn next_change(&self, after: Time) -> Option<Time> {
        self.windows
            .iter()
            .flat_map(|w| [w.from, w.to])
            .chain(self.drains.iter().flat_map(|d| [d.0, d.1]))
            .filter(|&t| t > after)
            .min()
    }

    fn apply(&self, now: Time, cluster: &mut Cluster) {
        cluster.set_drained(now, self.drained_at(now));
    }
}

/// Up to three windows and three drains over the first 20,000 s, of 1 to `machine` processors;
/// a window is a reservation (numbered by its place from 1) or maintenance.
fn outages(machine: u32) -> impl Strategy<Value = Outages> {
    let period = (0i64..20_000, 1i64..5_000, 1..=machine);
    (
        proptest::collection::vec((period.clone(), any::<bool>()), 0..4),
        proptest::collection::vec(period, 0..4),
    )
        .prop_map(|(windows, drains)| Outages {
            windows: windows
                .into_iter()
                .enumerate()
                .map(|(i, ((from, length, processors), reserved))| Window {
                    from,
                    to: from + length,
                    processors,
                    reservation: if reserved {
                        ReservationId(i as u16 + 1)
                    } else {
                        ReservationId::NONE
                    },
                })
                .collect(),
            drains: drains
                .into_iter()
                .map(|(from, length, processors)| (from, from + length, processors))
                .collect(),
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn no_job_runs_where_an_outage_holds_the_machine(
        ((machine, jobs), outages) in workload(1..2000)
            .prop_flat_map(|(machine, jobs)| (Just((machine, jobs)), outages(machine))),
        policy in prop_oneof![
            Just("fcfs"), Just("easy"), Just("easy-sjbf"), Just("easy-plus"), Just("slurm")
        ],
    ) {
        let cluster = Cluster::new(machine, spec(policy).build())
            .with_windows(outages.windows.clone());
        let mut cluster = match cluster {
            Ok(c) => c,
            // windows are at most the machine: the only refusal is an empty one
            Err(e) => {
                prop_assert!(outages.windows.iter().any(|w| w.to <= w.from), "{e}");
                return Ok(());
            }
        };
        // every third job is submitted to a reservation, when there is one
        let reservations: Vec<ReservationId> = (outages.windows.iter())
            .map(|w| w.reservation)
            .filter(|r| r.is_some())
            .collect();
        let mut jobs = jobs;
        if !reservations.is_empty() {
            for (k, job) in jobs.iter_mut().enumerate().filter(|(k, _)| k % 3 == 0) {
                job.reservation = reservations[(k / 3) % reservations.len()];
            }
        }
        let outages = Arc::new(outages);
        let options = SimOptions {
            facility: Some(outages.clone()),
            ..Default::default()
        };
        let mut replay = Replay::from_jobs(machine, jobs.clone());
        let records = simulate_with(&mut cluster, &mut replay, &mut (), &options).unwrap();
        // every job runs
        prop_assert_eq!(records.len(), jobs.len());
        // a member that started in its window ran there, and ended by its end; one that
        // started after it (its window ended first) ran as any job
        let reservation_of = |job_id: i64| {
            jobs.iter()
                .find(|j| j.job_id == job_id)
                .map_or(ReservationId::NONE, |j| j.reservation)
        };
        let window_of = |r: &metrics::JobRecord| {
            let reservation = reservation_of(r.job_id);
            (outages.windows.iter())
                .position(|w| reservation.is_some() && w.reservation == reservation && w.from <= r.start && r.start < w.to)
        };
        for r in &records {
            let reservation = reservation_of(r.job_id);
            if let Some(w) = outages.windows.iter().find(|w| reservation.is_some() && w.reservation == reservation) {
                prop_assert!(
                    r.start >= w.from,
                    "{policy}: member {} of {reservation:?} started at {} before its window [{}, {})",
                    r.job_id, r.start, w.from, w.to
                );
                if r.start < w.to {
                    prop_assert!(r.end <= w.to, "{policy}: member {} ran past its window's end", r.job_id);
                }
            }
        }
        for (index, w) in outages.windows.iter().enumerate().filter(|(_, w)| w.reservation.is_some()) {
            for t in records.iter().map(|r| r.start).filter(|&t| w.from <= t && t < w.to) {
                let members: u32 = (records.iter())
                    .filter(|r| window_of(r) == Some(index) && r.start <= t && t < r.end)
                    .map(|r| r.processors)
                    .sum();
                prop_assert!(members <= w.processors, "{policy} at {t}: members hold {members} of {}", w.processors);
            }
        }
        // the load of every job but the members in their windows
        let running = |t: Time| -> u32 {
            records
                .iter()
                .filter(|r| r.start <= t && t < r.end && window_of(r).is_none())
                .map(|r| r.processors)
                .sum()
        };
        // within a window, the running jobs fit in what it leaves: checked at every instant
        // the load can grow (a window's start, a job's start)
        let instants = outages
            .windows
            .iter()
            .map(|w| w.from)
            .chain(records.iter().map(|r| r.start));
        for t in instants {
            let reserved = outages.reserved_at(t);
            if reserved > 0 {
                prop_assert!(
                    running(t) <= machine.saturating_sub(reserved),
                    "{policy} at {t}: {} processors run while windows hold {reserved} of {machine}",
                    running(t)
                );
            }
        }
        // a job starts only into processors in service: what runs after its start fits in the
        // machine less the windows and the drains in force (jobs running when a drain began
        // keep theirs, and block every start until they have ended)
        for r in records.iter().filter(|r| r.end > r.start && window_of(r).is_none()) {
            let in_service =
                machine.saturating_sub(outages.reserved_at(r.start) + outages.drained_at(r.start));
            prop_assert!(
                running(r.start) <= in_service,
                "{policy}: job {} started at {} with {} processors running, {in_service} in service",
                r.job_id, r.start, running(r.start)
            );
        }
    }

    #[test]
    fn rules_that_plan_running_jobs_ends_refuse_outages(
        policy in prop_oneof![Just("conservative"), Just("dynp")],
    ) {
        let window = Window { from: 10, to: 20, processors: 2, reservation: ReservationId::NONE };
        let refused = Cluster::new(4, spec(policy).build()).with_windows(vec![window]);
        prop_assert!(refused.is_err());
    }
}

/// Without outages the hook changes nothing: a facility that drains nothing gives the same
/// records as none.
#[test]
fn no_outage_changes_nothing() {
    let jobs: Vec<Job> = (0..40)
        .map(|i| Job {
            job_id: i + 1,
            submit: i * 37,
            processors: 1 + (i as u32 * 7) % 8,
            runtime: 100 + (i * 53) % 900,
            estimate: 1000,
            ..Job::default()
        })
        .collect();
    for policy in ["fcfs", "easy", "slurm"] {
        let run = |facility: Option<Arc<dyn Facility>>| {
            let mut cluster = Cluster::new(8, spec(policy).build())
                .with_windows(Vec::new())
                .unwrap();
            let options = SimOptions {
                facility,
                ..Default::default()
            };
            let mut replay = Replay::from_jobs(8, jobs.clone());
            simulate_with(&mut cluster, &mut replay, &mut (), &options).unwrap()
        };
        let nothing = Outages {
            windows: Vec::new(),
            drains: vec![(500, 900, 0)],
        };
        assert_eq!(run(None), run(Some(Arc::new(nothing))), "{policy}");
    }
}
