//! The Slurm model on a machine of node types ([`SlurmRule::node_machine`]): node capacity,
//! QOS TRES limits, partitions over shared nodes, and every job run or held for good.

use cluster::order::Arrival;
use cluster::{
    Amounts, Cluster, Extra, JobId, JobRequest, NodeType, PoolPartition, PoolSpec, Scheduler, Shape,
};
use proptest::prelude::*;

use super::*;

/// Two CPU nodes (8 cores, 32000 MiB) and a GPU node (16 cores, 64000 MiB, 4 GPUs); partition
/// `cpu` (number 1, default) holds all three, `gpu` (number 2) the GPU node: partitions over
/// shared nodes. Kinds: 0 memory, 1 GPUs.
fn machine() -> PoolSpec {
    let node = |cpus, memory, gpus| NodeType {
        name: String::new(),
        capacity: Amounts { cpus, memory, gpus },
        gpu_type: 0,
        features: 0,
        weight: 1,
    };
    let partition = |name: &str, number, nodes: Vec<u32>| PoolPartition {
        name: name.to_string(),
        number,
        nodes,
        exclusive: false,
        max_nodes: 0,
        default_memory_per_cpu: 0,
        default: number == 1,
    };
    PoolSpec {
        types: vec![node(8, 32000, 0), node(16, 64000, 4)],
        nodes: vec![("c1".into(), 0), ("c2".into(), 0), ("g1".into(), 1)],
        gpu_types: Vec::new(),
        features: Vec::new(),
        partitions: vec![
            partition("cpu", 1, vec![0, 1, 2]),
            partition("gpu", 2, vec![2]),
        ],
        memory_kind: Some(0),
        gpu_kind: Some(1),
    }
}

/// A job: submit, CPUs, memory per CPU (MiB), GPUs, estimate, runtime, user, partition
/// number, QOS (queue number 1 normal, 2 gpu).
type Spec = (Time, u32, u32, u32, Time, Time, i64, i64, i64);

fn config(grp_gpus: u64, user_gpus: Option<u64>, job_gpus: Option<u64>) -> SlurmConfig {
    let select = |n: i64| Selector {
        groups: Vec::new(),
        swf_numbers: vec![n],
    };
    let named = |name: &str| Partition {
        jobs: Selector::default(),
        ..Partition::whole_machine(name)
    };
    SlurmConfig {
        partitions: vec![named("cpu"), named("gpu")],
        qos: vec![
            Qos {
                jobs: select(1),
                ..Qos::normal()
            },
            Qos {
                name: "gpu".to_string(),
                grp_tres: TresLimit {
                    gpus: Some(grp_gpus),
                    ..TresLimit::default()
                },
                max_tres_per_user: TresLimit {
                    gpus: user_gpus,
                    ..TresLimit::default()
                },
                max_tres_per_job: TresLimit {
                    gpus: job_gpus,
                    ..TresLimit::default()
                },
                jobs: select(2),
                ..Qos::normal()
            },
        ],
        bf_interval: 10,
        weights: Weights {
            age: 1000,
            ..Weights::default()
        },
        ..SlurmConfig::default()
    }
}

/// Runs `jobs` (by submit) under the model on [`machine`]; each job's start (`None`: never),
/// and every problem seen: a node over its capacity, a QOS or user over a GPU limit.
fn run(config: SlurmConfig, jobs: &[Spec]) -> (Vec<Option<Time>>, Vec<String>, Cluster) {
    let qos = config.qos.clone();
    let mut cluster = Cluster::new(
        1,
        Scheduler::new(Box::new(Arrival), Box::new(SlurmRule::new(config))),
    )
    .with_extra(Extra::NONE.with(0, 0).with(1, 0))
    .and_then(|c| c.with_pool(machine()))
    .expect("the model runs node types");
    let capacity = cluster.pool().expect("a pool").capacity().to_vec();
    let mut starts = vec![None; jobs.len()];
    let mut problems = Vec::new();
    let mut ends: Vec<(Time, usize)> = Vec::new();
    let mut running: Vec<usize> = Vec::new();
    let mut next = 0;
    for _ in 0..200_000 {
        let now = [
            ends.iter().map(|e| e.0).min(),
            jobs.get(next).map(|j| j.0),
            cluster.next_wakeup(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(now) = now else { break };
        ends.sort_unstable();
        while ends.first().is_some_and(|e| e.0 == now) {
            let (_, i) = ends.remove(0);
            cluster.finish(JobId(i as u32), now).expect("running");
            running.retain(|&r| r != i);
        }
        while let Some(&(submit, cpus, memory, gpus, estimate, _, user, partition, queue)) =
            jobs.get(next).filter(|j| j.0 == now)
        {
            let request = JobRequest {
                array_task: Default::default(),
                reservation: Default::default(),
                id: JobId(next as u32),
                submit,
                processors: cpus,
                estimate,
                user,
                group: user,
                partition,
                queue,
                extra: Extra::NONE.with(0, cpus * memory).with(1, gpus),
                shape: Shape::default(),
            };
            cluster.submit(request).expect("submitted");
            next += 1;
        }
        for s in cluster.schedule(now).to_vec() {
            let i = s.id.0 as usize;
            starts[i] = Some(now);
            ends.push((now + jobs[i].5.min(jobs[i].4), i));
            running.push(i);
        }
        let mut used = vec![Amounts::default(); capacity.len()];
        for &i in &running {
            for &(n, share) in cluster.node_allocation(JobId(i as u32)).unwrap_or_default() {
                let u = &mut used[n as usize];
                *u = Amounts {
                    cpus: u.cpus + share.cpus,
                    memory: u.memory + share.memory,
                    gpus: u.gpus + share.gpus,
                };
            }
        }
        for (n, u) in used.iter().enumerate() {
            if !u.fits_in(&capacity[n]) {
                problems.push(format!("{now}: node {n} holds {u:?}"));
            }
        }
        let gpu_jobs = || running.iter().filter(|&&i| jobs[i].8 == 2);
        let gpus: u64 = gpu_jobs().map(|&i| u64::from(jobs[i].3)).sum();
        if qos[1].grp_tres.gpus.is_some_and(|cap| gpus > cap) {
            problems.push(format!("{now}: QOS gpu holds {gpus} GPUs"));
        }
        if let Some(cap) = qos[1].max_tres_per_user.gpus {
            for user in 0..3 {
                let held: u64 = gpu_jobs()
                    .filter(|&&i| jobs[i].6 == user)
                    .map(|&i| u64::from(jobs[i].3))
                    .sum();
                if held > cap {
                    problems.push(format!("{now}: user {user} holds {held} GPUs"));
                }
            }
        }
    }
    (starts, problems, cluster)
}

fn workload() -> impl Strategy<Value = Vec<Spec>> {
    proptest::collection::vec(
        (
            0i64..3000,
            1u32..=16,
            prop_oneof![Just(0u32), 500u32..=4000],
            0u32..=5,
            1i64..1500,
            1i64..1500,
            0i64..3,
            1i64..=2,
        ),
        1..60,
    )
    .prop_map(|mut jobs| {
        jobs.sort_by_key(|j| j.0);
        jobs.into_iter()
            .map(
                |(submit, cpus, memory, gpus, estimate, runtime, user, partition)| {
                    // GPU jobs go to the gpu partition and QOS
                    let (partition, queue) = if gpus > 0 { (2, 2) } else { (partition, 1) };
                    (
                        submit, cpus, memory, gpus, estimate, runtime, user, partition, queue,
                    )
                },
            )
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    /// No node ever holds more than it has; the gpu QOS's jobs never hold more GPUs than its
    /// `GrpTRES` nor one user's more than its `MaxTRESPerUser`; every job starts unless it is
    /// held for good, and exactly the jobs over a limit they can never meet (more GPUs than
    /// `GrpTRES`, `MaxTRESPerUser` or `MaxTRESPerJob`, or than any node set of their
    /// partition holds) are.
    #[test]
    fn the_model_on_nodes_keeps_nodes_and_tres_limits(
        jobs in workload(),
        grp in 1u64..=4,
        per_user in proptest::option::of(1u64..=4),
        per_job in proptest::option::of(1u64..=4),
    ) {
        let (starts, problems, cluster) = run(config(grp, per_user, per_job), &jobs);
        prop_assert!(problems.is_empty(), "{:?}", problems);
        for (i, job) in jobs.iter().enumerate() {
            let (cpus, memory, gpus) = (job.1, job.2, u64::from(job.3));
            // the GPU node holds 16 cores, 64000 MiB, 4 GPUs; a CPU job of the cpu partition
            // may spread over the three nodes
            let never_fits = if job.7 == 2 {
                gpus > 4 || cpus > 16 || u64::from(cpus) * u64::from(memory) > 64000
            } else {
                false
            };
            let over = gpus > grp
                || per_job.is_some_and(|m| gpus > m)
                || per_user.is_some_and(|m| gpus > m);
            let held = cluster.is_held(JobId(i as u32));
            if !never_fits && job.8 == 2 {
                prop_assert_eq!(held, over, "job {} {:?}", i, job);
            }
            if never_fits {
                prop_assert!(held, "job {} {:?} can never fit", i, job);
            }
            prop_assert_eq!(starts[i].is_none(), held, "job {} {:?}", i, job);
        }
    }
}

#[test]
fn a_blocked_partition_takes_its_nodes_from_the_others() {
    // Partitions cpu (all nodes) and gpu (the GPU node) share the GPU node: a CPU job that
    // needs the whole GPU node waits there; the GPU job after it (lower priority, submitted
    // later) may not take the GPU node's cores in the main loop, as Slurm's `_schedule` takes
    // a blocked partition's nodes away.
    let jobs: Vec<Spec> = vec![
        // 8 cores on each node until 1000 (the CPU nodes first, then the GPU node)
        (0, 8, 0, 0, 1000, 1000, 0, 1, 1),
        (0, 8, 0, 0, 1000, 1000, 0, 1, 1),
        (0, 8, 0, 0, 1000, 1000, 0, 1, 1),
        // 16 cores: only the GPU node holds them, when the job there ends
        (10, 16, 0, 0, 100, 100, 1, 1, 1),
        // one GPU and 4 cores: they are free on the GPU node now, but the wide job blocks
        // its partition's nodes in the main loop, and backfill may not delay it
        (20, 4, 0, 1, 2000, 2000, 2, 2, 2),
    ];
    let (starts, problems, _) = run(config(4, None, None), &jobs);
    assert!(problems.is_empty(), "{problems:?}");
    let wide = starts[3].expect("the wide job runs");
    let gpu = starts[4].expect("the GPU job runs");
    assert!(
        gpu >= wide,
        "the GPU job ({gpu}) jumped the blocked wide job ({wide})"
    );
}

/// Runs one job of 1 CPU and 8 GiB (and `gpus` GPUs on the GPU partition when asked) for
/// 1000 s under `config` with usage kept, and returns the root's usage at the end.
fn usage_of_one_job(config: SlurmConfig, gpus: u32) -> f64 {
    let job: Spec = if gpus > 0 {
        (0, 1, 8192, gpus, 1000, 1000, 0, 2, 2)
    } else {
        (0, 1, 8192, 0, 1000, 1000, 0, 1, 1)
    };
    let config = SlurmConfig {
        weights: Weights {
            fairshare: 1000,
            ..Weights::default()
        },
        calc_period: 60,
        enforce_limits: true,
        ..config
    };
    let (starts, problems, cluster) = run(config, &[job]);
    assert!(problems.is_empty() && starts[0].is_some(), "{problems:?}");
    SlurmRule::of(&cluster)
        .expect("the model")
        .tree()
        .usage(AssocTree::ROOT)
}

#[test]
fn usage_is_charged_at_the_billing_of_the_tres_held() {
    // tres.shtml's worked example: CPU=1.0,Mem=0.25G,GRES/gpu=2.0 bills 1 CPU and 8 GiB as
    // 3.0, so such a job is charged three times the usage of the same job billed by its CPU
    let plain = usage_of_one_job(config(4, None, None), 0);
    let weighted = SlurmConfig {
        billing_weights: BillingWeights::parse("CPU=1.0,Mem=0.25G,GRES/gpu=2.0").expect("valid"),
        ..config(4, None, None)
    };
    let billed = usage_of_one_job(weighted.clone(), 0);
    assert!(plain > 0.0);
    assert!((billed / plain - 3.0).abs() < 1e-9, "{billed} / {plain}");
    // one GPU more: 1 + 2 + 2 = 5; under MAX_TRES the largest node TRES, here 2.0 (the GPU
    // counts among them without MAX_TRES_GRES): max(1, 2, 2) = 2
    let gpu = usage_of_one_job(weighted.clone(), 1);
    assert!((gpu / plain - 5.0).abs() < 1e-9, "{gpu} / {plain}");
    let max = SlurmConfig {
        billing_mode: BillingMode::MaxTres,
        ..weighted
    };
    let gpu_max = usage_of_one_job(max, 1);
    assert!((gpu_max / plain - 2.0).abs() < 1e-9, "{gpu_max} / {plain}");
}

#[test]
fn the_tres_factor_adds_each_tres_over_its_partitions_total() {
    // PriorityWeightTRES=GRES/gpu=1000: a job of 2 GPUs on the gpu partition (4 GPUs) gets
    // 2/4 * 1000 = 500 more priority than the same job without the weight
    let mut jobs = Vec::new();
    for weights in ["", "GRES/gpu=1000"] {
        let config = SlurmConfig {
            weight_tres: PriorityWeightsTres::parse(weights).expect("valid"),
            ..config(4, None, None)
        };
        let mut rule = SlurmRule::new(config);
        rule.node_machine(&machine());
        let request = JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            id: JobId(1),
            submit: 0,
            processors: 2,
            estimate: 100,
            user: 0,
            group: 0,
            partition: 2,
            queue: 2,
            extra: Extra::NONE.with(0, 4096).with(1, 2),
            shape: Shape::default(),
        };
        rule.submitted(&request);
        jobs.push(rule.priority_of(JobId(1)).expect("pending"));
    }
    let (plain, weighted) = (jobs[0], jobs[1]);
    // every other weight is 0: the plain job's priority is Slurm's floor of 1
    assert_eq!(plain.0, 1);
    assert_eq!(weighted.1.tres, 500.0);
    assert_eq!(weighted.0, 500);
}
