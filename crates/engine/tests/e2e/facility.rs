//! The facility hook ([`engine::Facility`]) over random workloads: a power cap that follows a
//! schedule is never exceeded at any start, held jobs enter the queue at their release and keep
//! their submit time, a run without a facility is unchanged by the hook, and starts delayed by
//! booting nodes ([`engine::NodeStates`]) hold their processors from the pass that started them
//! without the machine ever holding more than it has.

use std::sync::Arc;

use cluster::Cluster;
use engine::{Extra, Facility, Job, NodeStates, Replay, SimOptions, Time, simulate_with};
use proptest::prelude::*;

use crate::common::{spec, workload};

/// A cap on one machine-wide resource (kind 0, "watts") that steps through `schedule`
/// ((from, amount), sorted), and a hold of every job whose id is a multiple of `hold_every`
/// for `hold` seconds. Each job asks `watts_per_processor` per processor.
struct TestFacility {
    schedule: Vec<(Time, u32)>,
    watts_per_processor: u32,
    hold_every: i64,
    hold: Time,
}

impl TestFacility {
    fn cap_at(&self, t: Time) -> u32 {
        let i = self.schedule.partition_point(|&(from, _)| from <= t);
        self.schedule[i.saturating_sub(1)].1
    }
}

impl Facility for TestFacility {
    fn admit(&self, job: &mut Job, now: Time) -> Time {
        job.extra = Extra::NONE.with(0, job.processors * self.watts_per_processor);
        if job.job_id % self.hold_every == 0 {
            now + self.hold
        } else {
            now
        }
    }

    fn next_change(&self, after: Time) -> Option<Time> {
        self.schedule.iter().map(|&(t, _)| t).find(|&t| t > after)
    }

    fn apply(&self, now: Time, cluster: &mut Cluster) {
        cluster.set_available_extra(0, self.cap_at(now));
    }
}

fn schedule() -> impl Strategy<Value = Vec<(Time, u32)>> {
    // amounts in whole processors' watts (10 W each): from 1 processor to 16
    proptest::collection::vec((0i64..20_000, 1u32..=16), 0..6).prop_map(|mut steps| {
        // the cap starts and ends at its highest: a job that fits it starts in the end
        steps.push((0, 16));
        steps.push((30_000, 16));
        steps.sort_unstable();
        steps.dedup_by_key(|s| s.0);
        steps.into_iter().map(|(t, p)| (t, p * 10)).collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_scheduled_cap_is_never_exceeded_at_a_start(
        (machine, jobs) in workload(0..2000),
        steps in schedule(),
        hold_every in 1i64..5,
        hold in 0i64..3000,
        policy in prop_oneof![Just("fcfs"), Just("easy"), Just("slurm")],
    ) {
        let most = steps.iter().map(|s| s.1).max().unwrap_or(0);
        // every job fits the highest cap: one of 16 processors at most at 10 W each
        let facility = TestFacility { schedule: steps, watts_per_processor: 10, hold_every, hold };
        // the Slurm model tests the cap at its starts without planning it (a guard)
        let mut cluster = Cluster::new(machine, spec(policy).build())
            .with_guard(0, most)
            .unwrap();
        let facility = Arc::new(facility);
        let options = SimOptions {
            facility: Some(facility.clone()),
            ..Default::default()
        };
        let mut replay = Replay::from_jobs(machine, jobs.clone());
        let records = simulate_with(&mut cluster, &mut replay, &mut (), &options);
        let records = match records {
            Ok(r) => r,
            // a job wider than every cap's watts is refused, as any resource
            Err(e) => {
                prop_assert!(e.to_string().contains("other resources"), "{e}");
                return Ok(());
            }
        };
        prop_assert_eq!(records.len(), jobs.len());
        for r in &records {
            let original = jobs.iter().find(|j| j.job_id == r.job_id).unwrap();
            // the record keeps the user's submit time; a held job starts after its release
            prop_assert_eq!(r.submit, original.submit);
            let release = if r.job_id % hold_every == 0 { r.submit + hold } else { r.submit };
            prop_assert!(r.start >= release, "job {} started {} before its release {}", r.job_id, r.start, release);
            if r.end == r.start {
                continue;
            }
            let cap = facility.cap_at(r.start);
            // what runs after this instant's starts fits the cap in force (jobs that kept
            // running when the cap fell under them block every start until it fits again)
            let before: u32 = records
                .iter()
                .filter(|o| o.start < r.start && r.start < o.end)
                .map(|o| o.extra.get(0))
                .sum();
            // (a job of no length ends at its start, and the engine passes again at that
            // instant: only the jobs still running after it count)
            let now_started: u32 = records
                .iter()
                .filter(|o| o.start == r.start && o.end > o.start)
                .map(|o| o.extra.get(0))
                .sum();
            prop_assert!(
                before + now_started <= cap,
                "at {}: {} W running before and {} W started, cap {}",
                r.start, before, now_started, cap
            );
        }
    }

    #[test]
    fn a_facility_that_does_nothing_changes_nothing(
        (machine, jobs) in workload(0..2000),
        easy in any::<bool>(),
    ) {
        struct Nothing;
        impl Facility for Nothing {
            fn admit(&self, _job: &mut Job, now: Time) -> Time { now }
        }
        let spec = spec(if easy { "easy" } else { "conservative" });
        let run = |facility: Option<Arc<dyn Facility>>| {
            let mut cluster = Cluster::new(machine, spec.build());
            let options = SimOptions { facility, ..Default::default() };
            let mut replay = Replay::from_jobs(machine, jobs.clone());
            simulate_with(&mut cluster, &mut replay, &mut (), &options).unwrap()
        };
        prop_assert_eq!(run(None), run(Some(Arc::new(Nothing))));
    }
}

/// Nodes that make each job wait `delay_of(job id)` seconds for a boot.
struct Booting;

fn delay_of(job_id: i64) -> Time {
    (job_id * 7919) % 7 * 60
}

impl Facility for Booting {
    fn admit(&self, _job: &mut Job, now: Time) -> Time {
        now
    }

    fn node_states(&self) -> Option<Box<dyn NodeStates>> {
        Some(Box::new(Booting))
    }
}

impl NodeStates for Booting {
    fn job_started(
        &mut self,
        _now: Time,
        _id: cluster::JobId,
        job: &Job,
        _allocation: Option<&[(u32, cluster::Amounts)]>,
    ) -> Time {
        delay_of(job.job_id)
    }

    fn job_ended(&mut self, _now: Time, _id: cluster::JobId) {}

    fn next_change(&self) -> Option<Time> {
        None
    }

    fn apply(&mut self, _now: Time) {}
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn a_start_delayed_by_a_boot_holds_its_processors_from_its_pass(
        (machine, jobs) in workload(0..2000),
        policy in prop_oneof![Just("fcfs"), Just("easy"), Just("easy-sjbf"), Just("slurm")],
    ) {
        let mut cluster = Cluster::new(machine, spec(policy).build());
        let options = SimOptions { facility: Some(Arc::new(Booting)), ..Default::default() };
        let mut replay = Replay::from_jobs(machine, jobs.clone());
        let records = simulate_with(&mut cluster, &mut replay, &mut (), &options).unwrap();
        prop_assert_eq!(records.len(), jobs.len());
        for r in &records {
            let original = jobs.iter().find(|j| j.job_id == r.job_id).unwrap();
            let held_from = r.start - delay_of(r.job_id);
            prop_assert!(held_from >= r.submit, "job {} held from {} before its submission", r.job_id, held_from);
            // it runs its runtime (or is killed at its estimate) from its delayed start
            prop_assert!(r.end - r.start <= original.runtime.max(0));
            // the processors held just after the instant it was started, by every job holding
            // them from its pass to its end (a job that holds nothing past its instant ends
            // there, and the engine passes again at that instant: it counts for no later one)
            if r.end <= held_from {
                continue;
            }
            let held: u32 = records
                .iter()
                .filter(|o| o.start - delay_of(o.job_id) <= held_from && held_from < o.end)
                .map(|o| o.processors)
                .sum();
            prop_assert!(held <= machine, "at {}: {} processors held on a machine of {}", held_from, held, machine);
        }
    }

    #[test]
    fn rules_that_plan_running_jobs_ends_refuse_delayed_starts(
        policy in prop_oneof![Just("conservative"), Just("dynp")],
    ) {
        let cluster = Cluster::new(4, spec(policy).build());
        let options = SimOptions { facility: Some(Arc::new(Booting)), ..Default::default() };
        let error = engine::Stepper::new(&cluster, &options).err();
        prop_assert!(matches!(error, Some(engine::EngineError::StartDelays(_))));
    }
}
