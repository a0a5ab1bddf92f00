//! Machines of node types (`replay --slurm-conf` with `NodeName` lines): a sacct dump's jobs with
//! GPUs, memory, node counts and partitions replay on the slurm.conf's nodes under EASY and
//! FCFS. nodes.csv says what each job held on each node; the test checks from it that no node
//! ever holds more CPUs, memory or GPUs than it has, that a GPU job waits while CPUs are free
//! and GPUs are not, that CPU jobs run on GPU nodes only in the partition that has both, and
//! that a job no node can hold is held with its reason; and that bad input is refused with
//! file, line and field.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::common::{assert_fails, column, scratch, sitesim, stderr, table, write_file};

/// Two CPU nodes (8 cores, 32000 MiB) and two GPU nodes (16 cores, 64000 MiB, 4 a100), the GPU
/// nodes allocated last; partitions `cpu` (the CPU nodes, the default), `gpu` (the GPU nodes) and
/// `any` (all four).
const CONF: &str = "\
ClusterName=gpusite
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
GresTypes=gpu
NodeName=cpu[01-02] CPUs=8 RealMemory=32000 Features=cpu Weight=1
NodeName=gpu[01-02] CPUs=16 RealMemory=64000 Gres=gpu:a100:4 Features=gpu Weight=10
PartitionName=cpu Nodes=cpu[01-02] Default=YES MaxTime=UNLIMITED
PartitionName=gpu Nodes=gpu[01-02] MaxTime=UNLIMITED
PartitionName=any Nodes=ALL MaxTime=UNLIMITED
";

/// What each node has: CPUs, MiB, GPUs.
fn capacity() -> BTreeMap<&'static str, [i64; 3]> {
    BTreeMap::from([
        ("cpu01", [8, 32000, 0]),
        ("cpu02", [8, 32000, 0]),
        ("gpu01", [16, 64000, 4]),
        ("gpu02", [16, 64000, 4]),
    ])
}

const COLUMNS: &str = "JobID|JobIDRaw|User|Account|Partition|QOS|Submit|Eligible|Start|End|ElapsedRaw|TimelimitRaw|NCPUS|NNodes|ReqCPUS|ReqNodes|ReqMem|ReqTRES|AllocTRES|Constraints|State";

/// One dump line: job `id` submitted `at` seconds after 08:00, in `partition`, with `cpus` CPUs,
/// `gpus` a100 GPUs, `gib` GiB and `nodes` nodes, running `run` seconds of a limit of `limit`
/// minutes.
#[allow(clippy::too_many_arguments)]
fn line(
    id: u32,
    at: i64,
    partition: &str,
    cpus: u32,
    gpus: u32,
    gib: u32,
    nodes: u32,
    run: i64,
    limit: i64,
) -> String {
    let time = |s: i64| {
        let t = 8 * 3600 + s;
        format!(
            "2024-01-{:02}T{:02}:{:02}:{:02}",
            1 + t / 86400,
            (t / 3600) % 24,
            (t / 60) % 60,
            t % 60
        )
    };
    let gres = if gpus > 0 {
        format!(",gres/gpu={gpus},gres/gpu:a100={gpus}")
    } else {
        String::new()
    };
    let tres = format!("billing={cpus},cpu={cpus}{gres},mem={gib}G,node={nodes}");
    format!(
        "{id}|{id}|u{}|acct{}|{partition}|normal|{}|{}|{}|{}|{run}|{limit}|{cpus}|{nodes}|{cpus}|{nodes}|{gib}G|{tres}|{tres}||COMPLETED",
        id % 7,
        id % 3,
        time(at),
        time(at),
        time(at),
        time(at + run)
    )
}

/// A dump of 240 jobs (a fixed pseudo-random mix): half GPU jobs of the `gpu` partition (one
/// or two nodes, 1, 2 or 4 GPUs and 2 or 4 CPUs per node, 8 GiB per node), a third CPU jobs of
/// `cpu` (1 to 8 CPUs, 2 GiB each), the rest CPU jobs of `any`; a job every 30 s, so the
/// queue grows. Job 5000 asks for 5 GPUs on one node (no node has them).
fn dump() -> String {
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut out = format!("{COLUMNS}\n");
    for j in 0..240u32 {
        let kind = next(6);
        let run = 60 + next(1800) as i64;
        let limit = run / 60 + 1 + next(30) as i64;
        let at = i64::from(j) * 30;
        let text = if kind < 3 {
            let nodes = [1, 1, 2][next(3) as usize];
            let gpus = [1, 2, 4][next(3) as usize] * nodes;
            let cpus = [2, 4][next(2) as usize] * nodes;
            line(
                1000 + j,
                at,
                "gpu",
                cpus,
                gpus,
                8 * nodes,
                nodes,
                run,
                limit,
            )
        } else if kind < 5 {
            let cpus = [1, 2, 4, 8][next(4) as usize];
            line(1000 + j, at, "cpu", cpus, 0, 2 * cpus, 1, run, limit)
        } else {
            let cpus = [1, 2, 4][next(3) as usize];
            line(1000 + j, at, "any", cpus, 0, 2 * cpus, 1, run, limit)
        };
        out.push_str(&text);
        out.push('\n');
    }
    out.push_str(&line(5000, 240 * 30, "gpu", 1, 5, 1, 1, 60, 5));
    out.push('\n');
    out
}

/// A dump that `fit` can read sessions from: 7 users, each submitting 40 jobs one after
/// another (each 1 to 20 minutes after the previous one ended, now and then a break of hours),
/// about half of them GPU jobs of the `gpu` partition, the rest CPU jobs of `cpu`, as in
/// [`dump`].
fn user_sessions() -> String {
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut out = format!("{COLUMNS}\n");
    let mut id = 1000;
    let mut lines: Vec<(i64, String)> = Vec::new();
    for user in 0..7u32 {
        let mut at = i64::from(user) * 600;
        for _ in 0..40 {
            let run = 60 + next(1800) as i64;
            let limit = run / 60 + 1 + next(30) as i64;
            // the job ids' user is id % 7: pick the id so
            while id % 7 != user {
                id += 1;
            }
            let text = if next(2) == 0 {
                let nodes = [1, 1, 2][next(3) as usize];
                let gpus = [1, 2, 4][next(3) as usize] * nodes;
                let cpus = [2, 4][next(2) as usize] * nodes;
                line(id, at, "gpu", cpus, gpus, 8 * nodes, nodes, run, limit)
            } else {
                let cpus = [1, 2, 4, 8][next(4) as usize];
                line(id, at, "cpu", cpus, 0, 2 * cpus, 1, run, limit)
            };
            lines.push((at, text));
            id += 1;
            let think = if next(8) == 0 {
                4 * 3600
            } else {
                60 + next(1140) as i64
            };
            at += run + think;
        }
    }
    lines.sort();
    for (_, text) in lines {
        out.push_str(&text);
        out.push('\n');
    }
    out
}

/// (job id, partition) of the dump's jobs.
fn partitions(dump: &str) -> BTreeMap<String, String> {
    dump.lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('|').collect();
            (f[1].to_string(), f[4].to_string())
        })
        .collect()
}

/// Replays the dump under `scheduler` into `dir/NAME` and returns the output directory.
fn replay(dir: &Path, scheduler: &str, name: &str) -> std::path::PathBuf {
    let out = dir.join(name);
    let run = sitesim(&[
        "-q",
        "replay",
        &dir.join("dump.txt").display().to_string(),
        "--slurm-conf",
        &dir.join("slurm.conf").display().to_string(),
        "--scheduler",
        scheduler,
        "--out",
        &out.display().to_string(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    out
}

#[test]
fn gpu_and_memory_jobs_replay_on_the_nodes_they_fit() {
    let (tmp, _) = scratch();
    let dir = tmp.path().to_path_buf();
    let dump = dump();
    write_file(&dir, "dump.txt", dump.as_bytes());
    write_file(&dir, "slurm.conf", CONF.as_bytes());
    let capacity = capacity();
    let partition = partitions(&dump);
    for scheduler in ["easy", "fcfs"] {
        let out = replay(&dir, scheduler, scheduler);
        let (jh, jobs) = table(&out.join("jobs.csv"));
        let (nh, nodes) = table(&out.join("nodes.csv"));
        let (id, start, end) = (
            column(&jh, "job_id"),
            column(&jh, "start"),
            column(&jh, "end"),
        );
        let (cpus, gpus) = (column(&jh, "processors"), column(&jh, "gres/gpu"));
        let wait = column(&jh, "wait");
        let _memory_is_a_column = column(&jh, "mem");
        let times: BTreeMap<&str, (i64, i64, i64, i64)> = jobs
            .iter()
            .map(|r| {
                let n = |c: usize| r[c].parse::<i64>().unwrap();
                (r[id].as_str(), (n(start), n(end), n(cpus), n(gpus)))
            })
            .collect();
        let waited: BTreeMap<&str, bool> = jobs
            .iter()
            .map(|r| (r[id].as_str(), r[wait] != "0"))
            .collect();
        // Job 5000 (5 GPUs on one node) is held: no record, counted in summary.json.
        assert!(!times.contains_key("5000"), "{scheduler}: job 5000 ran");
        assert_eq!(times.len(), 240, "{scheduler}");
        let summary = fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(
            summary.contains("\"resources\": 1"),
            "{scheduler}: {summary}"
        );

        // Every node, at every instant, holds at most what it has.
        let (held_by, events) = nodes_within_capacity(&out, &|node| capacity[node]);
        assert_eq!(held_by.len(), 240, "{scheduler}: every job held nodes");
        // Each job's shares add up to what it asked for.
        for (job, (_, _, c, g)) in &times {
            let rows: Vec<&Vec<String>> = nodes
                .iter()
                .filter(|r| r[column(&nh, "job_id")] == *job)
                .collect();
            let sum = |name: &str| -> i64 {
                rows.iter()
                    .map(|r| r[column(&nh, name)].parse::<i64>().unwrap())
                    .sum()
            };
            assert_eq!(
                (sum("cpus"), sum("gpus")),
                (*c, *g),
                "{scheduler}: job {job}"
            );
        }

        // Partitions: `cpu` jobs never on GPU nodes, `gpu` jobs only there; `any` jobs may go
        // either way, and some ran on a GPU node.
        let mut any_on_gpu = 0;
        for (job, on) in &held_by {
            let p = partition[job.as_str()].as_str();
            let gpu_nodes = on.iter().filter(|n| n.starts_with("gpu")).count();
            match p {
                "cpu" => assert_eq!(gpu_nodes, 0, "{scheduler}: cpu job {job} on {on:?}"),
                "gpu" => assert_eq!(gpu_nodes, on.len(), "{scheduler}: gpu job {job} on {on:?}"),
                _ => any_on_gpu += usize::from(gpu_nodes > 0),
            }
        }
        assert!(
            any_on_gpu > 0,
            "{scheduler}: no `any` job ran on a GPU node"
        );

        // Some GPU job waited at an instant when the GPU nodes had the CPUs it asked for free
        // but not its GPUs.
        let mut gpu_bound = 0;
        for (job, &(s, _, c, g)) in &times {
            if g == 0 || partition[*job] != "gpu" || !waited[*job] {
                continue;
            }
            // the GPU nodes just before its start: the events up to s (exclusive)
            let mut free: BTreeMap<&str, [i64; 3]> = capacity
                .iter()
                .filter(|(n, _)| n.starts_with("gpu"))
                .map(|(n, c)| (*n, *c))
                .collect();
            for (t, starting, node, amounts) in &events {
                if *t >= s {
                    break;
                }
                if let Some(f) = free.get_mut(node.as_str()) {
                    for k in 0..3 {
                        f[k] -= if *starting == 1 {
                            amounts[k]
                        } else {
                            -amounts[k]
                        };
                    }
                }
            }
            let cpus_free: i64 = free.values().map(|f| f[0]).sum();
            let gpus_free: i64 = free.values().map(|f| f[2]).sum();
            if cpus_free >= c && gpus_free < g {
                gpu_bound += 1;
            }
        }
        assert!(
            gpu_bound > 0,
            "{scheduler}: no GPU job waited for GPUs alone"
        );
    }
    // The same replay gives the same bytes.
    let again = replay(&dir, "easy", "easy-again");
    for file in ["jobs.csv", "nodes.csv", "summary.json"] {
        assert_eq!(
            fs::read(dir.join("easy").join(file)).unwrap(),
            fs::read(again.join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn bad_node_machines_and_requests_name_the_file_line_and_field() {
    let (tmp, _) = scratch();
    let dir = tmp.path().to_path_buf();
    let conf = write_file(&dir, "slurm.conf", CONF.as_bytes());
    let one =
        |name: &str, body: &str| write_file(&dir, name, format!("{COLUMNS}\n{body}\n").as_bytes());
    let replay = |dump: &str, conf: &str| -> Vec<String> {
        ["replay", dump, "--slurm-conf", conf, "--scheduler", "easy"]
            .map(str::to_string)
            .to_vec()
    };
    let run = |args: Vec<String>, expected: &str| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        assert_fails(&args, expected);
    };
    // An unknown GPU type.
    let typed = line(1, 0, "gpu", 2, 1, 8, 1, 60, 5).replace("gres/gpu:a100", "gres/gpu:h100");
    let dump = one("h100.txt", &typed);
    run(replay(&dump, &conf), "h100.txt:2: field AllocTRES");
    run(replay(&dump, &conf), "gres/gpu:h100 is not: it has a100");
    // Memory in a unit Slurm does not know.
    let dump = one(
        "unit.txt",
        &line(1, 0, "cpu", 2, 0, 8, 1, 60, 5).replace("mem=8G", "mem=8X"),
    );
    run(replay(&dump, &conf), "unit.txt:2: field ReqTRES");
    // A feature no node has.
    let constrained =
        line(1, 0, "cpu", 2, 0, 8, 1, 60, 5).replace("||COMPLETED", "|fpga|COMPLETED");
    let dump = one("fpga.txt", &constrained);
    run(replay(&dump, &conf), "fpga.txt:2: field Constraints");
    // A node range that does not parse; a partition naming a node no line defines.
    let good = one("good.txt", &line(1, 0, "cpu", 2, 0, 8, 1, 60, 5));
    let bad = write_file(
        &dir,
        "range.conf",
        CONF.replace("cpu[01-02]", "cpu[01-x2]").as_bytes(),
    );
    run(
        replay(&good, &bad),
        "range.conf, line 5, NodeName: `cpu[01-x2]` is not a node list",
    );
    let bad = write_file(
        &dir,
        "unknown.conf",
        format!("{CONF}PartitionName=big Nodes=gpu[01-04]\n").as_bytes(),
    );
    run(
        replay(&good, &bad),
        "unknown.conf, line 10, PartitionName=big Nodes: node gpu03 is defined by no NodeName line",
    );
    // The rules that plan with processor counts are refused the machine.
    let args = [
        "replay",
        &good,
        "--slurm-conf",
        &conf,
        "--scheduler",
        "dynp",
    ];
    let error = assert_fails(
        &args,
        "the dynp backfilling rule plans with processor counts",
    );
    assert!(error.contains("machine of node types"), "{error}");
}

/// A node's share of a job starting (1) or ending (0): (time, 1 or 0, node, [CPUs, MiB, GPUs]).
type NodeEvent = (i64, i64, String, [i64; 3]);

/// Checks from `out`'s jobs.csv and nodes.csv that no node ever holds more CPUs, memory or GPUs
/// than `capacity` gives it, and returns the nodes each job held and the nodes' events in time
/// order.
pub(crate) fn nodes_within_capacity(
    out: &Path,
    capacity: &dyn Fn(&str) -> [i64; 3],
) -> (BTreeMap<String, Vec<String>>, Vec<NodeEvent>) {
    let (jh, jobs) = table(&out.join("jobs.csv"));
    let (nh, nodes) = table(&out.join("nodes.csv"));
    let times: BTreeMap<&str, (i64, i64)> = jobs
        .iter()
        .map(|r| {
            let n = |c: &str| r[column(&jh, c)].parse::<i64>().unwrap();
            (r[column(&jh, "job_id")].as_str(), (n("start"), n("end")))
        })
        .collect();
    let mut events: Vec<NodeEvent> = Vec::new();
    let mut held_by: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for row in &nodes {
        let job = row[column(&nh, "job_id")].clone();
        let (s, e) = times[job.as_str()];
        let node = row[column(&nh, "node")].clone();
        let amounts =
            ["cpus", "memory_mib", "gpus"].map(|c| row[column(&nh, c)].parse::<i64>().unwrap());
        events.push((s, 1, node.clone(), amounts));
        events.push((e, 0, node.clone(), amounts));
        held_by.entry(job).or_default().push(node);
    }
    events.sort();
    let mut used: BTreeMap<String, [i64; 3]> = BTreeMap::new();
    for (t, starting, node, amounts) in &events {
        let u = used.entry(node.clone()).or_default();
        let has = capacity(node);
        for k in 0..3 {
            u[k] += if *starting == 1 {
                amounts[k]
            } else {
                -amounts[k]
            };
            assert!(
                u[k] <= has[k],
                "{node} holds {u:?} at {t}, more than {has:?}"
            );
        }
    }
    (held_by, events)
}

#[test]
fn a_site_of_node_types_runs_its_cpu_and_gpu_users_on_their_partitions() {
    let (tmp, _) = scratch();
    let dir = tmp.path().to_path_buf();
    let config = crate::common::workspace().join("configs/gpu-site.toml");
    let run = |name: &str| {
        let out = dir.join(name);
        let result = sitesim(&[
            "-q",
            "run",
            "--config",
            &config.display().to_string(),
            "--users",
            "40",
            "--weeks",
            "1",
            "--out",
            &out.display().to_string(),
        ]);
        assert!(result.status.success(), "{}", stderr(&result));
        out
    };
    let out = run("a");
    // 48 CPU nodes of 64 cores and 256 GiB, 16 GPU nodes of 64 cores, 512 GiB and 4 GPUs.
    let capacity = |node: &str| {
        if node.starts_with("gpu") {
            [64, 512 * 1024, 4]
        } else {
            [64, 256 * 1024, 0]
        }
    };
    let (held_by, _) = nodes_within_capacity(&out, &capacity);
    let (jh, jobs) = table(&out.join("jobs.csv"));
    let mut gpu_jobs = 0;
    for row in &jobs {
        let job = &row[column(&jh, "job_id")];
        let gpus: i64 = row[column(&jh, "gres/gpu")].parse().unwrap();
        let on = &held_by[job];
        // GPU jobs in the GPU partition, CPU jobs in the CPU partition (the example's mix).
        let on_gpu_nodes = on.iter().all(|n| n.starts_with("gpu"));
        assert_eq!(gpus > 0, on_gpu_nodes, "job {job} ({gpus} GPUs) on {on:?}");
        gpu_jobs += usize::from(gpus > 0);
        let memory: i64 = row[column(&jh, "mem")].parse().unwrap();
        let processors: i64 = row[column(&jh, "processors")].parse().unwrap();
        assert!(
            memory == 2048 * processors || memory == 4096 * processors,
            "job {job}"
        );
    }
    assert!(
        gpu_jobs > 0 && gpu_jobs < jobs.len(),
        "{gpu_jobs} of {}",
        jobs.len()
    );
    let summary = fs::read_to_string(out.join("summary.json")).unwrap();
    assert!(summary.contains("\"gpus:a100\""), "{summary}");
    // The same seed gives the same bytes.
    let again = run("b");
    for file in ["jobs.csv", "nodes.csv", "summary.json", "sessions.csv"] {
        assert_eq!(
            fs::read(out.join(file)).unwrap(),
            fs::read(again.join(file)).unwrap(),
            "{file}"
        );
    }
}

#[test]
fn fit_writes_the_resource_mix_of_a_dump_and_a_site_with_it_matches_it() {
    let (tmp, _) = scratch();
    let dir = tmp.path().to_path_buf();
    let dump = write_file(&dir, "dump.txt", user_sessions().as_bytes());
    let models = dir.join("models");
    let fit = sitesim(&["-q", "fit", &dump, "--out", &models.display().to_string()]);
    assert!(fit.status.success(), "{}", stderr(&fit));
    let (rh, rows) = table(&models.join("resources.csv"));
    // 7 users (u0 .. u6); their GPU jobs in partition gpu, of type a100, 2 or 4 CPUs per GPU
    // (1, 2 or 4 GPUs and 2 or 4 CPUs per node), 1 GiB per CPU where they ran CPU jobs only
    // (2 GiB per CPU), 8 GiB per node for GPU jobs.
    assert_eq!(rows.len(), 7);
    for row in &rows {
        let share: f64 = row[column(&rh, "gpu_share")].parse().unwrap();
        assert!(share > 0.2 && share < 0.8, "{row:?}");
        assert_eq!(row[column(&rh, "gpu_partition")], "gpu");
        assert_eq!(row[column(&rh, "gpu_type")], "a100");
    }
    // A site of the dump's nodes whose users draw the fitted mix: validate checks its jobs
    // against it within the stated tolerance.
    let site = String::from(
        "[site]\nstart = \"2024-01-01T00:00:00\"\n\
         [[nodes]]\nname = \"cpu\"\ncount = 16\ncores = 64\nmemory = \"256G\"\npartitions = [\"cpu\", \"any\"]\n\
         [[nodes]]\nname = \"gpu\"\ncount = 8\ncores = 64\nmemory = \"512G\"\ngpus = 8\ngpu_type = \"a100\"\npartitions = [\"gpu\", \"any\"]\n\
         [[partitions]]\nname = \"cpu\"\ndefault = true\n\
         [run]\nweeks = 2\n\
         [[groups]]\nname = \"site\"\nusers = 60\nresources = \"models/resources.csv\"\n",
    );
    let config = write_file(&dir, "site.toml", site.as_bytes());
    let validate = sitesim(&["validate", "--config", &config]);
    let text = crate::common::stdout(&validate);
    assert!(validate.status.success(), "{text}\n{}", stderr(&validate));
    for line in [
        "GPU share of jobs",
        "GPU users (any GPU job)",
        "memory per CPU (relative)",
    ] {
        assert!(text.contains(line), "{text}");
    }
    // A partition or GPU type the nodes lack names the file and line.
    let other = fs::read_to_string(models.join("resources.csv"))
        .unwrap()
        .replace(",a100", ",h100");
    write_file(&models, "other.csv", other.as_bytes());
    let bad = site.replace("models/resources.csv", "models/other.csv");
    let config = write_file(&dir, "bad.toml", bad.as_bytes());
    let error = assert_fails(
        &["run", "--config", &config],
        "other.csv, line 2: GPU type \"h100\"",
    );
    assert!(error.contains("groups[0].resources"), "{error}");
}

#[test]
fn a_real_slurm_gpu_capture_replays_on_its_own_node() {
    // tests/fixtures/slurm-gpu/run1: 150 CPU and GPU jobs with memory requests and a GrpTRES
    // limit, run by a real Slurm 22.05 on a node of 16 CPUs, 64000 MiB and 4 a100
    // (scripts/ci/slurm-gpu-workload.sh). Replayed under EASY on that slurm.conf's node, every
    // job runs, and the node never holds more than it has.
    let run = crate::common::workspace().join("tests/fixtures/slurm-gpu/run1");
    let (tmp, _) = scratch();
    let out = tmp.path().join("out");
    let result = sitesim(&[
        "-q",
        "replay",
        &run.join("sacct.txt").display().to_string(),
        "--slurm-conf",
        &run.join("slurm.conf").display().to_string(),
        "--scheduler",
        "easy",
        "--out",
        &out.display().to_string(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (held, _) = nodes_within_capacity(&out, &|_| [16, 64000, 4]);
    let (jh, jobs) = table(&out.join("jobs.csv"));
    assert_eq!(jobs.len(), 150);
    assert_eq!(held.len(), 150);
    let gpu_jobs = jobs
        .iter()
        .filter(|r| r[column(&jh, "gres/gpu")] != "0")
        .count();
    assert_eq!(gpu_jobs, 48, "the capture's GPU jobs");
}

#[test]
fn a_converted_gpu_dump_replays_as_the_dump_itself_with_its_requests() {
    // tests/fixtures/slurm-gpu/run1 replayed under EASY on its own slurm.conf's node, and its
    // conversion (trace.swf with requests.csv beside it) replayed so: the same jobs on the same
    // node at the same times, byte for byte (summary.json's path of the trace aside).
    let run = crate::common::workspace().join("tests/fixtures/slurm-gpu/run1");
    let conf = run.join("slurm.conf").display().to_string();
    let (tmp, _) = scratch();
    let replay = |trace: &Path, out: &Path| {
        let result = sitesim(&[
            "replay",
            &trace.display().to_string(),
            "--slurm-conf",
            &conf,
            "--scheduler",
            "easy",
            "--out",
            &out.display().to_string(),
        ]);
        assert!(result.status.success(), "{}", stderr(&result));
        crate::common::stdout(&result)
    };
    let direct = tmp.path().join("direct");
    replay(&run.join("sacct.txt"), &direct);
    let converted = tmp.path().join("converted");
    let result = sitesim(&[
        "-q",
        "convert",
        &run.join("sacct.txt").display().to_string(),
        "-o",
        &converted.display().to_string(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    // pandas reads it: one row per job, the resources and the shape by name
    let (rh, rows) = table(&converted.join("requests.csv"));
    assert_eq!(
        rh,
        [
            "job_id",
            "mem",
            "gres/gpu",
            "nodes",
            "gpu_type",
            "features",
            "exclusive",
            "partition"
        ]
    );
    assert_eq!(rows.len(), 150);
    assert_eq!(rows.iter().filter(|r| r[2] != "0").count(), 48);
    assert!(rows.iter().any(|r| r[4] == "a100"), "{rows:?}");
    assert!(
        rows.iter().all(|r| r[1] != "0"),
        "every job asked for memory"
    );
    let again = tmp.path().join("again");
    let console = replay(&converted.join("trace.swf"), &again);
    assert!(
        console.contains("requests") && console.contains("requests.csv"),
        "{console}"
    );
    for name in ["jobs.csv", "nodes.csv"] {
        assert!(
            fs::read(direct.join(name)).unwrap() == fs::read(again.join(name)).unwrap(),
            "{name} differs"
        );
    }
    let summary = |dir: &Path, trace: &Path| {
        fs::read_to_string(dir.join("summary.json"))
            .unwrap()
            .replace(&format!("{:?}", trace.display().to_string()), "\"TRACE\"")
    };
    assert_eq!(
        summary(&direct, &run.join("sacct.txt")),
        summary(&again, &converted.join("trace.swf"))
    );
    // every number of summary.json's nodes section is a measure of the catalogue, or the
    // machine's capacity
    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(direct.join("summary.json")).unwrap()).unwrap();
    fn leaves(value: &serde_json::Value, path: String, out: &mut Vec<String>) {
        match value {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    leaves(value, format!("{path}.{key}"), out);
                }
            }
            serde_json::Value::Number(_) => out.push(path),
            _ => {}
        }
    }
    let mut numbers = Vec::new();
    leaves(&json["nodes"], "nodes".into(), &mut numbers);
    assert!(
        numbers.iter().any(|p| p == "nodes.utilization.gpus:a100"),
        "{numbers:?}"
    );
    for path in numbers {
        assert!(
            path.starts_with("nodes.capacity.")
                || metrics::NODE_MEASURES.iter().any(|m| m.matches(&path)),
            "summary.json's {path} is not in metrics::NODE_MEASURES"
        );
    }
    // without its side table the conversion loses the GPUs: every job is a CPU job
    fs::rename(
        converted.join("requests.csv"),
        tmp.path().join("requests.csv"),
    )
    .unwrap();
    let bare = tmp.path().join("bare");
    let console = replay(&converted.join("trace.swf"), &bare);
    assert!(!console.contains("requests.csv"), "{console}");
    let (jh, jobs) = table(&bare.join("jobs.csv"));
    assert!(jobs.iter().all(|r| r[column(&jh, "gres/gpu")] == "0"));

    // a side table that is not the trace's, or a bad row, is refused naming file, line, column
    let text = fs::read_to_string(tmp.path().join("requests.csv")).unwrap();
    let args = [
        "replay",
        &converted.join("trace.swf").display().to_string(),
        "--slurm-conf",
        &conf,
        "--scheduler",
        "easy",
    ]
    .map(String::from);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let bad = |lines: &[String], expected: &str| {
        fs::write(converted.join("requests.csv"), lines.join("\n") + "\n").unwrap();
        assert_fails(&args, expected);
    };
    let good = lines[3].clone();
    let mut fields: Vec<&str> = good.split(',').collect();
    fields[2] = "two";
    lines[3] = fields.join(",");
    bad(
        &lines,
        "requests.csv: line 4, column \"gres/gpu\": \"two\" is not a whole number",
    );
    lines[3] = good.clone();
    let gpu = lines.iter().position(|l| l.contains(",a100,")).unwrap();
    let typed = lines[gpu].clone();
    lines[gpu] = typed.replacen(",a100,", ",h100,", 1);
    bad(
        &lines,
        &format!(
            "requests.csv: line {}, column \"gpu_type\": \"h100\" is not a GPU type of the machine (it has a100)",
            gpu + 1
        ),
    );
    lines[gpu] = typed;
    lines[3] = good.clone();
    let mut fields: Vec<String> = good.split(',').map(String::from).collect();
    fields[6] = "yes".into();
    lines[3] = fields.join(",");
    bad(
        &lines,
        "requests.csv: line 4, column \"exclusive\": \"yes\" is not 0 or 1",
    );
    fields[6] = "0".into();
    fields[0] = "1".into();
    lines[3] = fields.join(",");
    bad(
        &lines,
        "requests.csv: line 4, column \"job_id\": job 1 where",
    );
    lines[3] = good;
    lines.pop();
    bad(&lines, "149 rows for the 150 jobs");
}
