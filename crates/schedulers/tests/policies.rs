//! Properties every scheduler must have, over random workloads (proptest). The tests iterate
//! over every valid composition of the workspace's registry (`schedulers::REGISTRY`: cluster's
//! orders, rules and predictors, then the Slurm model's), which includes every preset, so a
//! newly registered order, rule or predictor is tested here with no further change: a scheduler never uses more processors than the machine, its reservations
//! are kept by its own backfilling, and every job eventually runs.
//!
//! The event loop here is a small copy of the engine's (the cluster crate cannot depend on
//! it): at each instant, the jobs ending then finish, the jobs submitted then arrive, expired
//! predictions are corrected, and one scheduling pass runs. A job runs for its runtime, killed
//! at its estimate.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::collections::BTreeMap;

use cluster::{
    Amounts, Cluster, Composition, Extra, JobId, JobRequest, NodeType, ParamValues, PoolPartition,
    PoolSpec, Predictor, Resources, SchedulerSpec, Shape, Time,
};
use proptest::prelude::*;
use schedulers::REGISTRY;

/// A job of a workload: what the user submits, and how long it really runs (seconds).
#[derive(Debug, Clone, Copy)]
struct Job {
    submit: Time,
    processors: u32,
    runtime: Time,
    estimate: Time,
    user: i64,
    /// Amounts of the machine's other resources (two kinds here).
    extra: Extra,
}

/// A machine: its processors and its other resources ([`Extra::NONE`]: processors only).
#[derive(Debug, Clone, Copy)]
struct Machine {
    processors: u32,
    extra: Extra,
}

impl From<u32> for Machine {
    fn from(processors: u32) -> Machine {
        Machine {
            processors,
            extra: Extra::NONE,
        }
    }
}

/// A random machine and workload: bursts of jobs at equal times, zero runtimes, estimates both
/// above and below the runtime (so some jobs are killed), a few users (for predictions).
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
                        submit,
                        processors,
                        runtime,
                        estimate: estimate.unwrap_or(runtime),
                        user: (i % 5) as i64,
                        extra: Extra::NONE,
                    }
                })
                .collect();
            (machine, jobs)
        })
    })
}

/// A run of one policy on one workload.
struct Run {
    /// What the run violated (empty: nothing).
    problems: Vec<String>,
    /// When each job started.
    starts: Vec<Option<Time>>,
    /// Reservations made (time of the pass, reserved job, shadow time).
    reservations: Vec<(Time, JobId, Time)>,
}

/// Every valid composition of the registered parts (default parameters).
fn schedulers() -> Vec<SchedulerSpec> {
    let mut specs = Vec::new();
    for order in REGISTRY.orders() {
        for rule in REGISTRY.rules() {
            for predictor in REGISTRY.predictors() {
                let choice = Composition {
                    policy: None,
                    order: Some(order.name),
                    backfill: Some(rule.name),
                    predictor: Some(predictor.name),
                };
                if let Ok(spec) = REGISTRY.compose(choice, &ParamValues::new()) {
                    specs.push(spec);
                }
            }
        }
    }
    specs
}

/// A random machine with two other resources (say licences and GPUs) and a workload asking for
/// some of them (many jobs for none), as [`workload`] otherwise.
fn workload_with_extra() -> impl Strategy<Value = (Machine, Vec<Job>)> {
    (workload(), 1u32..=6, 1u32..=4).prop_flat_map(|((processors, jobs), a, b)| {
        let n = jobs.len();
        let amounts = proptest::collection::vec(
            (
                prop_oneof![2 => Just(0u32), 1 => 1..=a],
                prop_oneof![3 => Just(0u32), 1 => 1..=b],
            ),
            n,
        );
        (Just((processors, jobs, a, b)), amounts).prop_map(|((processors, jobs, a, b), amounts)| {
            let machine = Machine {
                processors,
                extra: Extra::NONE.with(0, a).with(1, b),
            };
            let jobs = jobs
                .into_iter()
                .zip(amounts)
                .map(|(job, (x, y))| Job {
                    extra: Extra::NONE.with(0, x).with(1, y),
                    ..job
                })
                .collect();
            (machine, jobs)
        })
    })
}

/// Whether the rule of `spec` counts resources besides processors.
fn schedules_extra(spec: &SchedulerSpec) -> bool {
    spec.build().backfill.schedules_extra()
}

fn run(spec: SchedulerSpec, machine: impl Into<Machine>, jobs: &[Job]) -> Run {
    let Machine {
        processors: machine,
        extra: capacity,
    } = machine.into();
    let mut cluster = Cluster::new(machine, spec.build())
        .with_extra(capacity)
        .unwrap();
    // A reservation is a promise only when the reserved job stays at the head (arrival order)
    // and the running jobs end by the plan (user estimates are upper bounds; predictions are
    // not, and a new priority may hand the reservation to another job).
    let scheduler = cluster.scheduler();
    let promises = scheduler.order.is_arrival_order()
        && matches!(
            scheduler.predictor,
            Predictor::UserEstimate | Predictor::Exact
        );
    let mut problems = Vec::new();
    let mut ends: BTreeMap<(Time, usize), JobId> = BTreeMap::new();
    let mut starts: Vec<Option<Time>> = vec![None; jobs.len()];
    let mut reservations: Vec<(Time, JobId, Time)> = Vec::new();
    let mut used = 0u32;
    let mut used_extra = Extra::NONE;
    let mut next_job = 0;
    let mut sequence = 0; // end events at one instant apply in the order they were created
    let mut instants = 0;
    loop {
        let next = [
            ends.keys().next().map(|k| k.0),
            jobs.get(next_job).map(|j| j.submit),
            cluster.next_prediction_expiry(),
            cluster.next_wakeup(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = next else { break };
        instants += 1;
        if instants > 100 * jobs.len() + 100 {
            problems.push(format!("no progress at {now}"));
            break;
        }
        while let Some((&(end, sequence), &id)) = ends.first_key_value() {
            if end != now {
                break;
            }
            ends.remove(&(end, sequence));
            cluster.finish(id, now).unwrap();
            used -= jobs[id.0 as usize].processors;
            used_extra = used_extra.minus(&jobs[id.0 as usize].extra);
        }
        while let Some(job) = jobs.get(next_job).filter(|j| j.submit == now) {
            let request = JobRequest {
                array_task: Default::default(),
                reservation: Default::default(),
                shape: Default::default(),
                id: JobId(next_job as u32),
                submit: job.submit,
                processors: job.processors,
                estimate: job.estimate,
                user: job.user,
                group: -1,
                partition: -1,
                queue: -1,
                extra: job.extra,
            };
            cluster.submit_with_runtime(request, job.runtime).unwrap();
            next_job += 1;
        }
        cluster.correct_expired_predictions(now);
        let started = cluster.schedule(now).to_vec();
        for s in started {
            let index = s.id.0 as usize;
            let job = jobs[index];
            if starts[index].replace(now).is_some() {
                problems.push(format!("{:?} started twice", s.id));
            }
            if now < job.submit || s.start != now || s.kill_time != now + job.estimate {
                problems.push(format!("{s:?} of {job:?} at {now}"));
            }
            used += job.processors;
            used_extra = used_extra.plus(&job.extra);
            ends.insert((now + job.runtime.min(job.estimate), sequence), s.id);
            sequence += 1;
        }
        if used > machine || used + cluster.free_processors() != machine {
            problems.push(format!(
                "{now}: {used} processors in use, {} free, on {machine}",
                cluster.free_processors()
            ));
        }
        if !used_extra.fits_in(&capacity) || used_extra.plus(&cluster.free_extra()) != capacity {
            problems.push(format!(
                "{now}: {used_extra:?} of the other resources in use, {:?} free, of {capacity:?}",
                cluster.free_extra()
            ));
        }
        if let Some(r) = cluster.last_reservation() {
            // Whatever the pass backfilled left the reserved job its processors at the shadow
            // time, by the plan (the running jobs' expected ends).
            match cluster.queue().find(|j| j.id == r.job) {
                None => problems.push(format!("{now}: reserved {:?} is not waiting", r.job)),
                Some(reserved) => {
                    // What the running jobs give back by the shadow time (their resources:
                    // each running job's, from the jobs that have started and not ended).
                    let mut back = Resources {
                        processors: cluster.free_processors(),
                        extra: cluster.free_extra(),
                    };
                    for (_, resources) in cluster
                        .expected_resource_releases()
                        .take_while(|&(end, _)| end <= r.shadow_time)
                    {
                        back = back.plus(&resources);
                    }
                    if !reserved.resources().fits_in(&back) {
                        problems.push(format!("{now}: backfilling took {r:?}'s resources"));
                    }
                }
            }
            reservations.push((now, r.job, r.shadow_time));
        }
    }
    for (index, start) in starts.iter().enumerate() {
        if start.is_none() {
            problems.push(format!("job {index} never ran"));
        }
    }
    if cluster.waiting() + cluster.running() != 0 {
        problems.push("jobs left in the machine".to_string());
    }
    if promises {
        for &(at, job, shadow) in &reservations {
            let start = starts[job.0 as usize].unwrap_or(Time::MAX);
            if start > shadow {
                problems.push(format!(
                    "{job:?} reserved at {at} for {shadow} started at {start}"
                ));
            }
        }
    }
    if let Some(usage) = cluster.policy_usage() {
        let counted: u64 = usage.jobs_started.iter().sum();
        if counted != jobs.len() as u64 {
            problems.push(format!(
                "policy usage counts {counted} starts of {}",
                jobs.len()
            ));
        }
    }
    Run {
        problems,
        starts,
        reservations,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    /// Every composition: never more processors than the machine, every job runs once after
    /// its submission, EASY-style reservations are never delayed by backfilling.
    #[test]
    fn every_scheduler_keeps_the_machine_and_its_promises((machine, jobs) in workload()) {
        for spec in schedulers() {
            let problems = run(spec.clone(), machine, &jobs).problems;
            prop_assert!(problems.is_empty(), "{}: {:?}", spec.label(), problems);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// On a machine with other resources, every composition whose rule counts them keeps every
    /// resource within the machine, runs every job and keeps its reservations; the others are
    /// refused such a machine.
    #[test]
    fn every_scheduler_of_other_resources_keeps_them((machine, jobs) in workload_with_extra()) {
        for spec in schedulers() {
            if !schedules_extra(&spec) {
                let refused = Cluster::new(machine.processors, spec.build()).with_extra(machine.extra);
                prop_assert!(refused.is_err(), "{} took other resources", spec.label());
                continue;
            }
            let problems = run(spec.clone(), machine, &jobs).problems;
            prop_assert!(problems.is_empty(), "{}: {:?}", spec.label(), problems);
        }
    }

    /// The vector path decides as the processor fast path where no job asks for another
    /// resource: the same workload on a machine with other resources (which no job uses)
    /// starts every job at the same instant, under every composition that counts them.
    #[test]
    fn the_vector_path_decides_as_the_processor_path((machine, jobs) in workload()) {
        let with_extra = Machine { processors: machine, extra: Extra::NONE.with(0, 3) };
        for spec in schedulers().into_iter().filter(schedules_extra) {
            let plain = run(spec.clone(), machine, &jobs);
            let vector = run(spec.clone(), with_extra, &jobs);
            prop_assert!(vector.problems.is_empty(), "{}: {:?}", spec.label(), vector.problems);
            prop_assert_eq!(&plain.starts, &vector.starts, "{}", spec.label());
            prop_assert_eq!(&plain.reservations, &vector.reservations, "{}", spec.label());
        }
    }
}

#[test]
fn a_job_waits_for_another_resource_while_processors_are_free() {
    // Two licences; job 0 holds both for 100 s; job 1 needs one licence and waits although
    // processors are free. Job 2 needs none: under FCFS it waits behind job 1, under EASY it
    // backfills at once (it ends by job 1's shadow time). Job 3 needs a licence: it waits for
    // one under both, although it would end by the shadow time.
    let machine = Machine {
        processors: 8,
        extra: Extra::NONE.with(0, 2),
    };
    let job = |submit, processors, runtime, licences| Job {
        submit,
        processors,
        runtime,
        estimate: runtime,
        user: 0,
        extra: Extra::NONE.with(0, licences),
    };
    let jobs = [
        job(0, 1, 100, 2),
        job(1, 1, 10, 1),
        job(2, 1, 10, 0),
        job(3, 1, 5, 1),
    ];
    for name in ["fcfs", "easy"] {
        let spec = REGISTRY.spec(name, &ParamValues::new()).unwrap();
        let run = run(spec, machine, &jobs);
        assert!(run.problems.is_empty(), "{name}: {:?}", run.problems);
        let expected: [Option<Time>; 4] = match name {
            // FCFS: job 2 waits behind job 1, which waits for a licence.
            "fcfs" => [Some(0), Some(100), Some(100), Some(100)],
            // EASY: job 2 backfills at once; job 3 waits for a licence too.
            _ => [Some(0), Some(100), Some(2), Some(100)],
        };
        assert_eq!(run.starts, expected, "{name}");
    }
}

#[test]
fn reservations_are_made_and_checked() {
    // The property above must not pass vacuously: the EASY family reserves on this workload
    // (job 1 waits for job 0; job 2 backfills).
    let job = |submit, processors, runtime| Job {
        submit,
        processors,
        runtime,
        estimate: runtime,
        user: 0,
        extra: Extra::NONE,
    };
    let jobs = [job(0, 3, 100), job(1, 4, 10), job(2, 1, 50)];
    let all = schedulers();
    // Every preset is among the compositions tested.
    for policy in REGISTRY.policies() {
        assert!(
            all.iter()
                .any(|s| s.preset().is_some_and(|p| p.name == policy.name)),
            "{}",
            policy.name
        );
    }
    for spec in all {
        let run = run(spec.clone(), 4, &jobs);
        assert!(
            run.problems.is_empty(),
            "{}: {:?}",
            spec.label(),
            run.problems
        );
        if spec.label() == "easy" {
            let times: Vec<Time> = run.reservations.iter().map(|r| r.0).collect();
            assert_eq!(times, [1, 2, 52]);
            assert!(
                run.reservations
                    .iter()
                    .all(|r| (r.1, r.2) == (JobId(1), 100))
            );
        }
    }
}

/// A random machine of node types (one to three types of one to three nodes; CPUs, memory in
/// MiB, GPUs of one of two types, two features, weights) with up to two partitions over
/// random node sets (some whole-node, some with a node limit or a default memory), and a
/// workload asking for CPUs, memory and GPUs, a node count, a GPU type, features, whole nodes
/// and a partition, as [`workload`] otherwise.
fn workload_on_nodes() -> impl Strategy<Value = (PoolSpec, Vec<(Job, i64, Shape)>)> {
    let node_type = (
        1u32..=8,
        1u32..=16,
        prop_oneof![2 => Just(0u32), 1 => 1u32..=4],
        1u8..=2,
        0u32..=3,
        0u32..=2,
        1usize..=3,
    );
    let types = proptest::collection::vec(node_type, 1..=3);
    (types, workload()).prop_flat_map(|(types, (_, jobs))| {
        let mut spec = PoolSpec {
            gpu_types: vec!["a100".into(), "v100".into()],
            features: vec!["fast".into(), "ib".into()],
            memory_kind: Some(0),
            gpu_kind: Some(1),
            ..PoolSpec::default()
        };
        for (index, &(cpus, memory, gpus, gpu_type, features, weight, count)) in
            types.iter().enumerate()
        {
            spec.types.push(NodeType {
                name: format!("t{index}"),
                capacity: Amounts { cpus, memory, gpus },
                gpu_type: if gpus > 0 { gpu_type } else { 0 },
                features,
                weight,
            });
            for k in 0..count {
                spec.nodes.push((format!("t{index}n{k}"), index as u16));
            }
        }
        let nodes = spec.nodes.len();
        let partition = (
            proptest::collection::vec(any::<bool>(), nodes),
            prop_oneof![4 => Just(false), 1 => Just(true)],
            prop_oneof![3 => Just(0u32), 1 => 1u32..=2],
            prop_oneof![2 => Just(0u32), 1 => 1u32..=2],
        );
        let partitions = proptest::collection::vec(partition, 0..=2);
        let shapes = proptest::collection::vec(
            (
                0u32..=20,
                prop_oneof![3 => Just(0u32), 1 => 1u32..=5],
                prop_oneof![3 => Just(0u16), 1 => 1u16..=3],
                0u8..=2,
                prop_oneof![3 => Just(0u32), 1 => 0u32..=3],
                prop_oneof![6 => Just(false), 1 => Just(true)],
                -1i64..=2,
            ),
            jobs.len(),
        );
        (Just((spec, jobs)), partitions, shapes).prop_map(
            |((mut spec, jobs), partitions, shapes)| {
                for (index, (members, exclusive, max_nodes, default_memory_per_cpu)) in
                    partitions.into_iter().enumerate()
                {
                    let mut nodes: Vec<u32> = (0..members.len() as u32)
                        .filter(|&n| members[n as usize])
                        .collect();
                    if nodes.is_empty() {
                        nodes.push(0);
                    }
                    spec.partitions.push(PoolPartition {
                        name: format!("p{index}"),
                        number: index as i64,
                        nodes,
                        exclusive,
                        max_nodes,
                        default_memory_per_cpu,
                        default: index == 1,
                    });
                }
                let jobs = jobs
                    .into_iter()
                    .zip(shapes)
                    .map(
                        |(job, (memory, gpus, nodes, gpu_type, features, exclusive, partition))| {
                            let job = Job {
                                processors: job.processors.min(12),
                                extra: Extra::NONE.with(0, memory).with(1, gpus),
                                ..job
                            };
                            (
                                job,
                                partition,
                                Shape {
                                    nodes,
                                    gpu_type,
                                    exclusive,
                                    features,
                                },
                            )
                        },
                    )
                    .collect();
                (spec, jobs)
            },
        )
    })
}

/// Runs `jobs` on the machine of node types `spec` under `spec`'s scheduler and lists what went
/// wrong: a node holding more than it has, a whole-node job sharing its node, the free amounts
/// not the rest, a job the machine accepted that never ran or ran twice, a reservation (in
/// arrival order, by estimates) delayed.
fn run_on_nodes(
    spec: SchedulerSpec,
    machine: &PoolSpec,
    jobs: &[(Job, i64, Shape)],
) -> Vec<String> {
    let mut cluster = Cluster::new(1, spec.build())
        .with_pool(machine.clone())
        .unwrap();
    let scheduler = cluster.scheduler();
    let promises = scheduler.order.is_arrival_order()
        && matches!(
            scheduler.predictor,
            Predictor::UserEstimate | Predictor::Exact
        );
    let mut problems = Vec::new();
    let mut ends: BTreeMap<(Time, usize), JobId> = BTreeMap::new();
    let mut starts: Vec<Option<Time>> = vec![None; jobs.len()];
    let mut reservations: Vec<(Time, JobId, Time)> = Vec::new();
    let mut running: Vec<JobId> = Vec::new();
    let mut next_job = 0;
    let mut sequence = 0;
    let mut instants = 0;
    // conservative backfilling's planned starts: a job never starts after one it was given
    let mut plans: Vec<(Time, JobId, Time)> = Vec::new();
    let capacity: Vec<Amounts> = cluster.pool().unwrap().capacity().to_vec();
    loop {
        let next = [
            ends.keys().next().map(|k| k.0),
            jobs.get(next_job).map(|j| j.0.submit),
            cluster.next_prediction_expiry(),
            cluster.next_wakeup(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = next else { break };
        instants += 1;
        if instants > 100 * jobs.len() + 100 {
            problems.push(format!("no progress at {now}"));
            break;
        }
        while let Some((&(end, sequence), &id)) = ends.first_key_value() {
            if end != now {
                break;
            }
            ends.remove(&(end, sequence));
            cluster.finish(id, now).unwrap();
            running.retain(|&r| r != id);
        }
        while let Some((job, partition, shape)) = jobs.get(next_job).filter(|j| j.0.submit == now) {
            let request = JobRequest {
                array_task: Default::default(),
                reservation: Default::default(),
                id: JobId(next_job as u32),
                submit: job.submit,
                processors: job.processors,
                estimate: job.estimate,
                user: job.user,
                group: -1,
                partition: *partition,
                queue: -1,
                extra: job.extra,
                shape: *shape,
            };
            cluster.submit_with_runtime(request, job.runtime).unwrap();
            next_job += 1;
        }
        cluster.correct_expired_predictions(now);
        for s in cluster.schedule(now).to_vec() {
            let index = s.id.0 as usize;
            if starts[index].replace(now).is_some() {
                problems.push(format!("{:?} started twice", s.id));
            }
            let job = jobs[index].0;
            ends.insert((now + job.runtime.min(job.estimate), sequence), s.id);
            sequence += 1;
            running.push(s.id);
        }
        // Node by node: what the running jobs hold is within the node, and free is the rest.
        let mut used = vec![Amounts::default(); capacity.len()];
        let mut holders = vec![0u32; capacity.len()];
        let mut whole = vec![false; capacity.len()];
        for &id in &running {
            let Some(held) = cluster.node_allocation(id) else {
                problems.push(format!("{now}: running {id:?} holds no node"));
                continue;
            };
            let (_, _, shape) = jobs[id.0 as usize];
            let exclusive = shape.exclusive
                || machine
                    .partitions
                    .iter()
                    .any(|p| p.exclusive && p.number == jobs[id.0 as usize].1);
            for &(n, share) in held {
                let n = n as usize;
                used[n] = Amounts {
                    cpus: used[n].cpus + share.cpus,
                    memory: used[n].memory + share.memory,
                    gpus: used[n].gpus + share.gpus,
                };
                holders[n] += 1;
                whole[n] |= exclusive
                    && machine
                        .partitions
                        .iter()
                        .any(|p| p.number == jobs[id.0 as usize].1)
                    || shape.exclusive;
            }
        }
        let free = cluster.pool().unwrap().free();
        for n in 0..capacity.len() {
            if !used[n].fits_in(&capacity[n]) {
                problems.push(format!(
                    "{now}: node {n} holds {:?} of {:?}",
                    used[n], capacity[n]
                ));
            }
            if whole[n] && holders[n] > 1 {
                problems.push(format!("{now}: node {n} shares a whole-node job"));
            }
            let rest = Amounts {
                cpus: capacity[n].cpus - used[n].cpus.min(capacity[n].cpus),
                memory: capacity[n].memory - used[n].memory.min(capacity[n].memory),
                gpus: capacity[n].gpus - used[n].gpus.min(capacity[n].gpus),
            };
            if free[n] != rest {
                problems.push(format!(
                    "{now}: node {n} has {:?} free, not {rest:?}",
                    free[n]
                ));
            }
        }
        if let Some(r) = cluster.last_reservation() {
            reservations.push((now, r.job, r.shadow_time));
        }
        for (index, start) in starts.iter().enumerate().take(next_job) {
            let id = JobId(index as u32);
            if start.is_none()
                && let Some(planned) = cluster.planned_start(id)
            {
                plans.push((now, id, planned));
            }
        }
    }
    for &(at, job, planned) in &plans {
        let start = starts[job.0 as usize].unwrap_or(Time::MAX);
        if start > planned {
            problems.push(format!(
                "{job:?} planned at {at} for {planned} started at {start}"
            ));
        }
    }
    for (index, start) in starts.iter().enumerate() {
        let held = cluster.is_held(JobId(index as u32));
        if start.is_none() != held {
            problems.push(format!("job {index}: held {held}, started {start:?}"));
        }
    }
    if cluster.waiting() + cluster.running() != 0 {
        problems.push("jobs left in the machine".to_string());
    }
    let held: u64 = cluster.never_fits().map(|(_, n)| n).sum();
    if held != cluster.held() as u64 {
        problems.push(format!("{held} never fit, {} held", cluster.held()));
    }
    if promises {
        for &(at, job, shadow) in &reservations {
            let start = starts[job.0 as usize].unwrap_or(Time::MAX);
            if start > shadow {
                problems.push(format!(
                    "{job:?} reserved at {at} for {shadow} started at {start}"
                ));
            }
        }
    }
    problems
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// On a machine of node types, every composition whose rule runs one (it counts other
    /// resources, or plans on nodes: the Slurm model) keeps
    /// every node within what it has (whole-node jobs alone on theirs), runs every job the
    /// machine can ever hold once and holds the others for good, and keeps its reservations;
    /// the others are refused such a machine.
    #[test]
    fn every_scheduler_on_node_types_keeps_every_node((machine, jobs) in workload_on_nodes()) {
        for spec in schedulers() {
            if !spec.build().backfill.schedules_nodes() {
                let refused = Cluster::new(1, spec.build()).with_pool(machine.clone());
                prop_assert!(refused.is_err(), "{} took node types", spec.label());
                continue;
            }
            let problems = run_on_nodes(spec.clone(), &machine, &jobs);
            prop_assert!(problems.is_empty(), "{}: {:?}", spec.label(), problems);
        }
    }
}
