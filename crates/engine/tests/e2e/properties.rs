//! Invariants of the scheduler and the event loop over random workloads (proptest).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::collections::BTreeMap;

use cluster::{
    Cluster, Generation, JobId, Nodes, ParamValue, ParamValues, Quality, Scheduler, SchedulerSpec,
    Selection,
};
use engine::{
    Job, MemoryBandwidth, Observer, OverNodes, Replay, SimOptions, Time, simulate, simulate_with,
};
use metrics::JobRecord;
use proptest::prelude::*;

/// A random machine and workload: bursts of jobs at equal times, zero runtimes, estimates both
/// above and below the runtime (so some jobs are killed).
fn workload() -> impl Strategy<Value = (u32, Vec<Job>)> {
    (1u32..=32).prop_flat_map(|machine| {
        let job = (
            prop_oneof![3 => Just(0i64), 2 => 1i64..600],
            1..=machine,
            prop_oneof![1 => Just(0i64), 6 => 1i64..2000],
            prop_oneof![2 => Just(None), 3 => (0i64..2500).prop_map(Some)],
        );
        (Just(machine), proptest::collection::vec(job, 1..80)).prop_map(|(machine, raw)| {
            let mut submit = 0;
            let jobs = raw
                .into_iter()
                .enumerate()
                .map(|(i, (gap, processors, runtime, estimate))| {
                    submit += gap;
                    Job {
                        array_task: Default::default(),
                        reservation: Default::default(),
                        shape: Default::default(),
                        job_id: i as i64 + 1,
                        user: (i % 5) as i64,
                        group: (i % 2) as i64,
                        submit,
                        processors,
                        estimate: estimate.unwrap_or(runtime),
                        runtime,
                        // Low, medium and high demands of paper 001 (MB/s per process).
                        bandwidth: [500, 1000, 2000][i % 3],
                        partition: -1,
                        queue: -1,
                        extra: engine::Extra::NONE,
                    }
                })
                .collect();
            (machine, jobs)
        })
    })
}

/// Same workloads with exact estimates (estimate = runtime).
fn exact_workload() -> impl Strategy<Value = (u32, Vec<Job>)> {
    workload().prop_map(|(machine, jobs)| {
        let jobs = jobs
            .into_iter()
            .map(|j| Job {
                estimate: j.runtime,
                ..j
            })
            .collect();
        (machine, jobs)
    })
}

/// Every reservation made: (time, reserved job, shadow time); plus head-of-queue checks.
#[derive(Default)]
struct Watch {
    reservations: Vec<(Time, JobId, Time)>,
    /// Passes after which the head of the queue would have fit (must never happen, except
    /// under conservative backfilling, where a later job's reservation may hold it back).
    idle_head: Vec<Time>,
    /// Whether the scheduler keeps reservations between passes as conservative backfilling
    /// does (dynP with issue 15's experimental `artww-keep`, between job ends).
    keeps_reservations: bool,
    /// Conservative backfilling: every planned start of every waiting job, pass by pass.
    planned: BTreeMap<JobId, Vec<(Time, Time)>>,
    /// Every start: (job, start, kill time).
    kill_times: Vec<(JobId, Time, Time)>,
    /// dynP: jobs started under each policy, summed over the run (from the cluster's usage).
    policy_starts: Option<u64>,
}

impl Observer for Watch {
    fn after_pass(&mut self, now: Time, cluster: &Cluster) {
        if let Some(r) = cluster.last_reservation() {
            self.reservations.push((now, r.job, r.shadow_time));
        }
        let conservative =
            cluster.scheduler().backfill.name() == "conservative" || self.keeps_reservations;
        for started in cluster.last_started() {
            self.kill_times
                .push((started.id, started.start, started.kill_time));
        }
        self.policy_starts = cluster
            .policy_usage()
            .map(|usage| usage.jobs_started.iter().sum());
        if let Some(head) = cluster.queue().next() {
            if head.processors <= cluster.free_processors() && !conservative {
                self.idle_head.push(now);
            }
        }
        for job in cluster.queue() {
            if let Some(start) = cluster.planned_start(job.id) {
                self.planned.entry(job.id).or_default().push((now, start));
            }
        }
    }
}

fn run(machine: u32, jobs: &[Job], spec: SchedulerSpec) -> (Vec<JobRecord>, Watch) {
    let mut cluster = Cluster::new(machine, spec.build());
    let mut watch = Watch {
        keeps_reservations: spec
            .values()
            .get("quality")
            .and_then(|q| q.as_str())
            .and_then(Quality::from_name)
            .is_some_and(|q| q.generation() == Generation::KeepPlaced),
        ..Watch::default()
    };
    let mut replay = Replay::from_jobs(machine, jobs.to_vec());
    let records = simulate(&mut cluster, &mut replay, &mut watch).expect("simulation runs");
    (records, watch)
}

/// Records in the same order as `Replay::from_jobs` submits the jobs.
fn submitted(jobs: &[Job]) -> Vec<Job> {
    let mut jobs = jobs.to_vec();
    jobs.sort_by_key(|j| (j.submit, j.job_id));
    jobs
}

/// The largest number of processors in use at any instant, from the records. A job holds its
/// processors over [start, end); jobs of zero length hold them only within their pass, where
/// the cluster's own accounting (checked arithmetic in tests) guards them.
fn peak_usage(records: &[JobRecord]) -> u32 {
    let mut events: Vec<(Time, i64)> = Vec::new();
    for r in records {
        if r.end > r.start {
            events.push((r.start, i64::from(r.processors)));
            events.push((r.end, -i64::from(r.processors)));
        }
    }
    events.sort(); // releases (negative) before acquisitions at the same time
    let mut used = 0i64;
    let mut peak = 0i64;
    for (_, delta) in events {
        used += delta;
        peak = peak.max(used);
    }
    peak as u32
}

/// The registered policy `name` with the parameter values `pairs`.
fn spec_with(name: &str, pairs: &[(&str, ParamValue)]) -> SchedulerSpec {
    let given: ParamValues = pairs
        .iter()
        .map(|(key, value)| (key.to_string(), value.clone()))
        .collect();
    schedulers::REGISTRY
        .spec(name, &given)
        .expect("a registered policy")
}

/// The registered policy `name` with its defaults.
fn spec(name: &str) -> SchedulerSpec {
    spec_with(name, &[])
}

fn specs(names: &[&str]) -> Vec<SchedulerSpec> {
    names.iter().map(|name| spec(name)).collect()
}

fn conservative() -> Vec<SchedulerSpec> {
    specs(&["conservative", "conservative-sjf", "conservative-ljf"])
}

/// Tsafrir's EASY variants with runtime predictions or shortest-first backfilling.
fn predicting() -> Vec<SchedulerSpec> {
    specs(&["easy-sjbf", "easy-plus", "easy-plus-plus"])
}

/// dynP: basic with bounds inside the random estimates' range (0-2500 s), so all three policies
/// occur, and self-tuning with each decider and each quality (and the experimental
/// `artww-keep` and `artww-queue`).
fn dynp() -> Vec<SchedulerSpec> {
    let quality = |q: Quality| [("quality", ParamValue::from(q.name()))];
    vec![
        spec_with(
            "dynp",
            &[("dynp_lower", 600.into()), ("dynp_upper", 1200.into())],
        ),
        spec_with(
            "dynp-advanced",
            &quality(Quality::WidthWeightedResponseTime),
        ),
        spec_with("dynp-simple", &quality(Quality::ResponseTime)),
        spec_with("dynp-advanced", &quality(Quality::Makespan)),
        // Issue 15's experimental generation: placed jobs keep their starts between job ends.
        spec_with(
            "dynp-simple",
            &quality(Quality::WidthWeightedResponseTimeKeepPlaced),
        ),
        // Issue 32's experimental FCFS schedule in the queue's current order.
        spec_with(
            "dynp-simple",
            &quality(Quality::WidthWeightedResponseTimeQueueOrder),
        ),
        spec_with(
            "dynp-advanced",
            &quality(Quality::WidthWeightedResponseTimeQueueOrder),
        ),
    ]
}

/// Every registered policy with its defaults, and the variants above (another alpha, dynP
/// bounds inside the workloads' range, each quality).
fn schedulers() -> impl Iterator<Item = SchedulerSpec> {
    schedulers::REGISTRY
        .policies()
        .map(|policy| spec(policy.name))
        .chain([spec_with("creasy", &[("alpha", 1500.0.into())])])
        .chain(dynp())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn never_more_processors_than_the_machine((machine, jobs) in workload()) {
        for spec in schedulers() {
            let (records, _) = run(machine, &jobs, spec.clone());
            prop_assert!(peak_usage(&records) <= machine, "{spec:?}");
        }
    }

    #[test]
    fn every_job_runs_once_after_its_submission_for_its_effective_runtime((machine, jobs) in workload()) {
        for spec in schedulers() {
            let (records, _) = run(machine, &jobs, spec.clone());
            let jobs = submitted(&jobs);
            prop_assert_eq!(records.len(), jobs.len());
            for (job, r) in jobs.iter().zip(&records) {
                prop_assert_eq!(r.job_id, job.job_id);
                prop_assert!(r.start >= job.submit, "{:?} started before it was submitted", r);
                prop_assert_eq!(r.end - r.start, job.runtime.min(job.estimate));
                prop_assert_eq!(r.killed, job.runtime > job.estimate);
            }
        }
    }

    #[test]
    fn the_head_of_the_queue_never_waits_while_it_fits((machine, jobs) in workload()) {
        // Not Slurm's model: Slurm starts nothing in the submission itself, but at its next
        // main-loop run (a second or batch_sched_delay later; slurm_model's tests)
        for spec in schedulers().filter(|s| !s.backfill().name.starts_with("slurm")) {
            let (_, watch) = run(machine, &jobs, spec.clone());
            prop_assert!(watch.idle_head.is_empty(), "{spec:?} left a fitting head at {:?}", watch.idle_head);
        }
    }

    #[test]
    fn easy_never_delays_the_reserved_job((machine, jobs) in workload()) {
        // With user estimates (upper bounds) only: predictions may be too short.
        for spec in specs(&["easy", "easy-sjbf"]) {
            let (records, watch) = run(machine, &jobs, spec.clone());
            for (now, job, shadow) in watch.reservations {
                let start = records[job.0 as usize].start;
                prop_assert!(start <= shadow, "{spec:?}: job {job:?} reserved at {now} for {shadow} started at {start}");
            }
        }
    }

    #[test]
    fn predictions_never_kill_a_job_before_its_user_estimate((machine, jobs) in workload()) {
        for spec in predicting() {
            let (records, watch) = run(machine, &jobs, spec.clone());
            let jobs = submitted(&jobs);
            for (id, start, kill_time) in &watch.kill_times {
                let job = &jobs[id.0 as usize];
                prop_assert_eq!(*kill_time, start + job.estimate, "{:?}: kill time of {:?}", spec, id);
            }
            for (job, r) in jobs.iter().zip(&records) {
                // A job runs to its end, or until exactly its estimate: never shorter.
                prop_assert_eq!(r.end - r.start, job.runtime.min(job.estimate), "{:?}: {:?}", spec, r);
                prop_assert!(r.prediction_accuracy.is_finite());
            }
        }
    }

    #[test]
    fn dynp_accounts_for_every_start((machine, jobs) in workload()) {
        for spec in dynp() {
            let (records, watch) = run(machine, &jobs, spec.clone());
            prop_assert_eq!(watch.policy_starts, Some(records.len() as u64), "{:?}", spec);
        }
    }

    #[test]
    fn conservative_never_delays_any_reservation((machine, jobs) in workload()) {
        for spec in conservative() {
            let (records, watch) = run(machine, &jobs, spec.clone());
            for (job, plans) in &watch.planned {
                let start = records[job.0 as usize].start;
                for pair in plans.windows(2) {
                    prop_assert!(
                        pair[1].1 <= pair[0].1,
                        "{spec:?}: job {job:?} planned for {} at {} was moved to {} at {}",
                        pair[0].1, pair[0].0, pair[1].1, pair[1].0
                    );
                }
                let (at, first) = plans[0];
                prop_assert!(start <= first, "{spec:?}: job {job:?} planned at {at} for {first} started at {start}");
            }
        }
    }

    #[test]
    fn with_exact_estimates_the_reserved_job_starts_at_its_shadow_time((machine, jobs) in exact_workload()) {
        let (records, watch) = run(machine, &jobs, spec("easy"));
        for (_, job, shadow) in watch.reservations {
            prop_assert_eq!(records[job.0 as usize].start, shadow);
        }
    }

    #[test]
    fn creasy_with_alpha_zero_is_easy((machine, jobs) in workload()) {
        let (easy, _) = run(machine, &jobs, spec("easy"));
        let (creasy, _) = run(machine, &jobs, spec_with("creasy", &[("alpha", 0.0.into())]));
        prop_assert_eq!(easy, creasy);
    }

    #[test]
    fn fcfs_starts_jobs_in_submission_order((machine, jobs) in workload()) {
        let (records, _) = run(machine, &jobs, spec("fcfs"));
        prop_assert!(records.windows(2).all(|w| w[0].start <= w[1].start));
    }

    #[test]
    fn same_input_same_schedule((machine, jobs) in workload()) {
        let alpha = [("alpha", ParamValue::from(3000.0))];
        let (first, _) = run(machine, &jobs, spec_with("creasy", &alpha));
        let (second, _) = run(machine, &jobs, spec_with("creasy", &alpha));
        prop_assert_eq!(first, second);
    }
}

/// On a machine of nodes: which processors each started job got, checked at every pass.
#[derive(Default)]
struct Allocations {
    /// Running jobs and their processors, as far as the observer can tell.
    running: BTreeMap<JobId, Vec<u32>>,
    /// Problems seen: overlapping, wrongly sized or (FC) non-contiguous allocations.
    problems: Vec<String>,
    reservations: Vec<(Time, JobId, Time)>,
}

impl Observer for Allocations {
    fn after_pass(&mut self, now: Time, cluster: &Cluster) {
        // Jobs that ended no longer hold processors.
        self.running
            .retain(|&id, _| cluster.allocation(id).is_some());
        let sizes: BTreeMap<JobId, u32> =
            cluster.last_started().iter().map(|s| (s.id, 0)).collect();
        for id in sizes.keys() {
            let got = cluster.allocation(*id).unwrap_or_default().to_vec();
            let contiguous = got.windows(2).all(|w| w[1] == w[0] + 1);
            if cluster.placement() == Some(Selection::FirstContinuous) && !contiguous {
                self.problems.push(format!("{now}: {id:?} got {got:?}"));
            }
            self.running.insert(*id, got);
        }
        let mut seen = std::collections::BTreeSet::new();
        for (id, processors) in &self.running {
            for p in processors {
                if *p >= cluster.processors() || !seen.insert(*p) {
                    self.problems
                        .push(format!("{now}: {id:?} shares or exceeds processor {p}"));
                }
            }
        }
        if seen.len() as u32 + cluster.free_processors() != cluster.processors() {
            self.problems
                .push(format!("{now}: held and free processors do not add up"));
        }
        if let Some(r) = cluster.last_reservation() {
            self.reservations.push((now, r.job, r.shadow_time));
        }
    }
}

/// The EASY family and FCFS, which run on both selections.
fn on_nodes() -> Vec<SchedulerSpec> {
    specs(&["fcfs", "easy", "easy-sjf", "easy-plus-plus"])
}

fn run_on_nodes(
    machine: u32,
    jobs: &[Job],
    spec: SchedulerSpec,
    selection: Selection,
    sharing: bool,
) -> (Vec<JobRecord>, Allocations) {
    run_placed(machine, jobs, spec, selection, None, sharing)
}

/// [`run_on_nodes`] with jobs placed by `placement` (when given) while `selection` decides.
fn run_placed(
    machine: u32,
    jobs: &[Job],
    spec: SchedulerSpec,
    selection: Selection,
    placement: Option<Selection>,
    sharing: bool,
) -> (Vec<JobRecord>, Allocations) {
    let nodes = Nodes {
        processors_per_node: 4,
        selection,
    };
    let mut cluster = Cluster::with_nodes(machine, spec.build(), nodes).unwrap();
    if let Some(placement) = placement {
        cluster.place_by(placement).unwrap();
    }
    let options = SimOptions {
        sharing: sharing.then_some(MemoryBandwidth {
            processors_per_node: 4,
            node_capacity: 6000.0,
            over_nodes: OverNodes::Max,
            node_offset: 0,
        }),
        ..Default::default()
    };
    let mut watch = Allocations::default();
    let mut replay = Replay::from_jobs(machine, jobs.to_vec());
    let records = simulate_with(&mut cluster, &mut replay, &mut watch, &options).unwrap();
    (records, watch)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn on_nodes_allocations_are_disjoint_and_every_job_runs((machine, jobs) in workload()) {
        for selection in [Selection::FirstFit, Selection::FirstContinuous] {
            for spec in on_nodes() {
                for sharing in [false, true] {
                    let (records, watch) = run_on_nodes(machine, &jobs, spec.clone(), selection, sharing);
                    prop_assert!(watch.problems.is_empty(), "{spec:?} {selection:?}: {:?}", watch.problems);
                    prop_assert_eq!(records.len(), jobs.len());
                    prop_assert!(peak_usage(&records) <= machine);
                    for (job, r) in submitted(&jobs).iter().zip(&records) {
                        prop_assert!(r.start >= job.submit);
                        prop_assert!(r.penalty >= 0);
                        prop_assert!(sharing || r.penalty == 0);
                        // The penalty (the time actually added) stretches the run; the estimate
                        // still kills.
                        let ran = r.end - r.start;
                        prop_assert_eq!(ran, (job.runtime + r.penalty).min(job.estimate), "{:?}", r);
                        prop_assert!(!r.killed_by_sharing || (sharing && r.killed && job.runtime <= job.estimate));
                        if r.killed {
                            prop_assert_eq!(ran, job.estimate, "{:?}", r);
                        } else {
                            prop_assert!(job.runtime <= job.estimate && ran == job.runtime + r.penalty, "{:?}", r);
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn first_fit_schedules_as_counting_does((machine, jobs) in workload()) {
        // Any free processors will do, so nodes with First Fit change nothing but the numbering.
        for spec in schedulers() {
            let (counted, _) = run(machine, &jobs, spec.clone());
            let nodes = Nodes { processors_per_node: 4, selection: Selection::FirstFit };
            let mut cluster = Cluster::with_nodes(machine, spec.build(), nodes).unwrap();
            let mut replay = Replay::from_jobs(machine, jobs.clone());
            let on_nodes = simulate(&mut cluster, &mut replay, &mut ()).unwrap();
            prop_assert_eq!(counted, on_nodes, "{:?}", spec);
        }
    }

    #[test]
    fn placing_by_first_fit_leaves_first_continuous_decisions_alone((machine, jobs) in workload()) {
        // FC decides, FF places: without sharing nothing but the reported processors changes;
        // with it, the placements stay disjoint and within the machine.
        for spec in on_nodes() {
            let (fc, _) = run_on_nodes(machine, &jobs, spec.clone(), Selection::FirstContinuous, false);
            let (placed, watch) = run_placed(
                machine, &jobs, spec.clone(), Selection::FirstContinuous, Some(Selection::FirstFit), false,
            );
            prop_assert!(watch.problems.is_empty(), "{spec:?}: {:?}", watch.problems);
            prop_assert_eq!(&fc, &placed, "{:?}", spec);
            let (_, watch) = run_placed(
                machine, &jobs, spec.clone(), Selection::FirstContinuous, Some(Selection::FirstFit), true,
            );
            prop_assert!(watch.problems.is_empty(), "{spec:?}: {:?}", watch.problems);
        }
    }

    #[test]
    fn easy_on_first_continuous_never_delays_the_reserved_block((machine, jobs) in workload()) {
        // Arrival order only: under SJF order a shorter newcomer takes the reservation over.
        for spec in specs(&["easy", "easy-sjbf"]) {
            let (records, watch) = run_on_nodes(machine, &jobs, spec.clone(), Selection::FirstContinuous, false);
            for (now, job, shadow) in watch.reservations {
                let start = records[job.0 as usize].start;
                prop_assert!(start <= shadow, "{spec:?}: job {job:?} reserved at {now} for {shadow} started at {start}");
            }
        }
    }
}

#[test]
fn first_continuous_refuses_schedulers_that_count_processors() {
    let nodes = Nodes {
        processors_per_node: 4,
        selection: Selection::FirstContinuous,
    };
    for spec in specs(&["conservative", "dynp"]) {
        let err = Cluster::with_nodes(64, spec.build(), nodes).unwrap_err();
        assert!(err.to_string().contains("First Continuous"), "{err}");
    }
    let mut cluster = Cluster::new(8, Scheduler::easy());
    let options = SimOptions {
        sharing: Some(MemoryBandwidth {
            processors_per_node: 4,
            node_capacity: 6000.0,
            over_nodes: OverNodes::Max,
            node_offset: 0,
        }),
        ..Default::default()
    };
    let mut replay = Replay::from_jobs(8, Vec::new());
    assert!(simulate_with(&mut cluster, &mut replay, &mut (), &options).is_err());
}

#[test]
fn creasy_alpha_zero_equals_easy_on_a_real_trace() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/SDSC-SP2-1998-4.2-cln.swf.gz");
    let replay = Replay::read(&path, None).expect("trace reads");
    let machine = replay.processors;
    let schedule = |scheduler: Scheduler| {
        let mut cluster = Cluster::new(machine, scheduler);
        simulate(&mut cluster, &mut replay.clone(), &mut ()).expect("replay runs")
    };
    let easy = schedule(Scheduler::easy());
    assert_eq!(easy, schedule(Scheduler::creasy(0.0)));
    assert_ne!(easy, schedule(Scheduler::creasy(6000.0)));
}
