//! The environment's equivalences: with FCFS decisions an episode is exactly a run of the
//! built-in scheduler (same records), in both action modes, on random workloads, on real traces
//! and on a closed-loop site; and the same seed gives the same episode.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::path::{Path, PathBuf};

use cluster::{Cluster, SchedulerSpec};
use config::replay::ReplayOptions;
use engine::{Job, Replay};
use gym::{ActionMode, Env, EnvConfig, GymError, Source, Until};
use metrics::JobRecord;
use proptest::prelude::*;

mod random;

fn shared_trace(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

fn spec(name: &str) -> SchedulerSpec {
    schedulers::REGISTRY
        .spec(name, &Default::default())
        .unwrap()
}

fn options(trace: &str, first_jobs: Option<usize>) -> ReplayOptions {
    ReplayOptions {
        first_jobs,
        ..ReplayOptions::new(shared_trace(trace))
    }
}

/// The built-in scheduler's records over `jobs`, as a replay simulates them.
fn builtin(spec: &SchedulerSpec, processors: u32, jobs: Vec<Job>) -> Vec<JobRecord> {
    let mut replay = Replay::from_jobs(processors, jobs);
    let mut cluster = Cluster::new(processors, spec.build());
    engine::simulate(&mut cluster, &mut replay, &mut ()).unwrap()
}

/// FCFS decisions: scores falling with the slot, or always slot 0.
fn fcfs_episode(env: &mut Env, mode: ActionMode, start: i64) -> (Vec<JobRecord>, u64) {
    let mut obs = vec![0.0; env.observation_size()];
    let mut mask = vec![false; env.mask_size()];
    let k = env.config().window;
    let scores: Vec<f32> = (0..k).map(|i| 1.0 - 2.0 * i as f32 / k as f32).collect();
    let mut steps = 0;
    if env
        .reset(Some(0), Some(start), &mut obs, &mut mask)
        .unwrap()
    {
        loop {
            steps += 1;
            let (terminated, truncated) = match mode {
                ActionMode::Pick => {
                    assert!(mask[0], "slot 0 holds the oldest waiting job, always valid");
                    let (_, te, tr, invalid) = env.step_pick(0, &mut obs, &mut mask).unwrap();
                    assert!(!invalid);
                    (te, tr)
                }
                ActionMode::Score => {
                    let (_, te, tr) = env.step_score(&scores, &mut obs, &mut mask).unwrap();
                    (te, tr)
                }
            };
            if terminated || truncated {
                break;
            }
        }
    }
    (env.records(true).unwrap(), steps)
}

fn whole(mode: ActionMode, window: usize) -> EnvConfig {
    EnvConfig {
        mode,
        window,
        episode_jobs: None,
        warm_jobs: 0,
        ..EnvConfig::default()
    }
}

fn job(id: i64, submit: i64, processors: u32, estimate: i64, runtime: i64, user: i64) -> Job {
    Job {
        array_task: Default::default(),
        reservation: Default::default(),
        shape: Default::default(),
        job_id: id,
        user,
        group: -1,
        submit,
        processors,
        estimate,
        runtime,
        bandwidth: 0,
        partition: -1,
        queue: -1,
        extra: engine::Extra::NONE,
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random small workloads (equal submit times, zero runtimes, runtimes past the estimate,
    /// machine-wide jobs): FCFS decisions in either mode give the built-in scheduler's records,
    /// under EASY and under no backfilling, with any window.
    #[test]
    fn fcfs_decisions_are_the_builtin_scheduler(
        raw in prop::collection::vec((0i64..4, 1u32..=8, 0i64..50, 0i64..60, 0i64..3), 1..60),
        window in 1usize..6,
        rule in 0usize..3,
    ) {
        let mut submit = 0;
        let jobs: Vec<Job> = raw
            .iter()
            .enumerate()
            .map(|(i, &(gap, p, est, run, user))| {
                submit += gap * 10;
                job(i as i64 + 1, submit, p, est, run, user)
            })
            .collect();
        let name = ["easy", "fcfs", "easy-sjbf"][rule];
        let expected = builtin(&spec(name), 8, jobs.clone());
        for mode in [ActionMode::Score, ActionMode::Pick] {
            let source = Source::from_jobs(spec(name), 8, jobs.clone()).unwrap();
            let mut env = Env::new(source, whole(mode, window)).unwrap();
            let (records, _) = fcfs_episode(&mut env, mode, 0);
            prop_assert_eq!(&records, &expected, "{:?} under {}", mode, name);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Scores that are not arrival order go through the queue order's sort: shortest estimate
    /// first over a window holding every waiting job is EASY-SJF (`-estimate`, ties by arrival),
    /// record for record.
    #[test]
    fn sjf_scores_over_the_whole_queue_are_easy_sjf(
        raw in prop::collection::vec((0i64..4, 1u32..=8, 0i64..50, 0i64..60), 1..60),
    ) {
        let mut submit = 0;
        let jobs: Vec<Job> = raw
            .iter()
            .enumerate()
            .map(|(i, &(gap, p, est, run))| {
                submit += gap * 10;
                job(i as i64 + 1, submit, p, est, run, 0)
            })
            .collect();
        let expected = builtin(&spec("easy-sjf"), 8, jobs.clone());
        let source = Source::from_jobs(spec("easy"), 8, jobs.clone()).unwrap();
        let mut env = Env::new(source, whole(ActionMode::Score, 64)).unwrap();
        let mut obs = vec![0.0; env.observation_size()];
        let mut mask = vec![false; env.mask_size()];
        // Estimates are below 64 s: -estimate / 64 is in the action space, exactly.
        let estimates: Vec<f32> = jobs.iter().map(|j| j.estimate as f32 / 64.0).collect();
        if env.reset(Some(0), Some(0), &mut obs, &mut mask).unwrap() {
            loop {
                // The window is the waiting jobs, oldest first; the features hold their
                // estimates only log-scaled, so read them back from the trace by arrival.
                let mut scores = vec![0.0f32; 64];
                let waiting = env.waiting_jobs();
                for (slot, id) in waiting.iter().take(64).enumerate() {
                    scores[slot] = -estimates[*id as usize];
                }
                let (_, te, tr) = env.step_score(&scores, &mut obs, &mut mask).unwrap();
                if te || tr {
                    break;
                }
            }
        }
        let records = env.records(true).unwrap();
        prop_assert_eq!(&records, &expected);
    }
}

#[test]
fn whole_traces_under_fcfs_decisions_are_sitesim_replay() {
    for (trace, first) in [
        ("KTH-SP2-1996-2.1-cln.swf.gz", None),
        ("lublin_256.swf.gz", None),
        ("SDSC-SP2-1998-4.2-cln.swf.gz", Some(10_000)),
    ] {
        let options = options(trace, first);
        let prepared = scenario::replay::prepare(&options).unwrap();
        let stopped = prepared.stopped_at_limit.clone();
        let mut expected = builtin(
            &spec("easy"),
            prepared.replay.processors,
            prepared.replay.jobs.clone(),
        );
        for r in &mut expected {
            Replay::mark_killed_at_limit(&stopped, r);
        }
        for mode in [ActionMode::Score, ActionMode::Pick] {
            let source = Source::replay(spec("easy"), &options).unwrap();
            let mut env = Env::new(source, whole(mode, 128)).unwrap();
            let (records, steps) = fcfs_episode(&mut env, mode, 0);
            assert!(steps > 100, "{trace}: only {steps} decisions");
            assert_eq!(records.len(), expected.len(), "{trace} {mode:?}");
            assert!(records == expected, "{trace} {mode:?}: schedules differ");
        }
    }
}

#[test]
fn a_warm_episode_measures_its_own_jobs_and_its_baseline_is_easy_on_the_same_slice() {
    let source = Source::replay(
        spec("easy"),
        &options("SDSC-SP2-1998-4.2-cln.swf.gz", Some(5_000)),
    )
    .unwrap();
    let config = EnvConfig {
        mode: ActionMode::Score,
        window: 64,
        episode_jobs: Some(256),
        warm_jobs: 512,
        ..EnvConfig::default()
    };
    let mut env = Env::new(source, config).unwrap();
    let (_, steps) = fcfs_episode(&mut env, ActionMode::Score, 2_000);
    assert!(steps > 0);
    let summary = env.summary().unwrap();
    assert_eq!(summary.jobs, 256, "every episode job started");
    // FCFS scores are EASY: the baseline under EASY measures the same.
    let baseline = env.baseline(&spec("easy")).unwrap();
    assert_eq!(baseline.jobs, 256);
    assert!((baseline.bounded_slowdown_mean - summary.bounded_slowdown_mean).abs() < 1e-9);
    assert!((baseline.wait_mean - summary.wait_mean).abs() < 1e-6);
    // Another scheduler on the same slice differs.
    let sjf = env.baseline(&spec("easy-sjf")).unwrap();
    assert_eq!(sjf.jobs, 256);
    assert!(sjf.bounded_slowdown_mean != summary.bounded_slowdown_mean);
}

fn default_site(users: u32, weeks: u32, seed: u64) -> config::site::Site {
    let table: Vec<_> = config::options::run_options().collect();
    let value = |key: &str, v: toml::Value| {
        let option = table.iter().find(|o| o.key == key).copied().unwrap();
        (option, v)
    };
    let values = vec![
        value("users", toml::Value::Integer(users.into())),
        value("weeks", toml::Value::Integer(weeks.into())),
        value("seed", toml::Value::Integer(seed as i64)),
        value("scheduler", toml::Value::String("easy".into())),
    ];
    config::options::site(config::options::SiteSource::Default, &values).unwrap()
}

fn model() -> std::sync::Arc<usermodel::Model> {
    std::sync::Arc::new(config::models::default_model().unwrap())
}

#[test]
fn a_drained_site_under_fcfs_decisions_is_sitesim_run() {
    let site = default_site(40, 2, 3);
    let (population, mut cluster, _) = scenario::run::prepare_site(&site, &model(), None).unwrap();
    let expected = engine::run_population(&mut cluster, population, &mut ()).unwrap();
    for mode in [ActionMode::Score, ActionMode::Pick] {
        let source = Source::site(site.clone(), model()).unwrap();
        let config = EnvConfig {
            mode,
            window: 32,
            warm_days: 2,
            until: Until::Drained,
            ..EnvConfig::default()
        };
        let mut env = Env::new(source, config).unwrap();
        let mut obs = vec![0.0; env.observation_size()];
        let mut mask = vec![false; env.mask_size()];
        // The first episode uses the site's own seed (3), as `sitesim run --seed 3`.
        let k = env.config().window;
        let scores: Vec<f32> = (0..k).map(|i| 1.0 - 2.0 * i as f32 / k as f32).collect();
        let mut steps = 0;
        assert!(env.reset(None, None, &mut obs, &mut mask).unwrap());
        loop {
            steps += 1;
            let (te, tr) = match mode {
                ActionMode::Pick => {
                    let (_, te, tr, _) = env.step_pick(0, &mut obs, &mut mask).unwrap();
                    (te, tr)
                }
                ActionMode::Score => {
                    let (_, te, tr) = env.step_score(&scores, &mut obs, &mut mask).unwrap();
                    (te, tr)
                }
            };
            if te || tr {
                assert!(te, "a drained site terminates");
                break;
            }
        }
        assert!(steps > 10, "{mode:?}: {steps} decisions");
        let records = env.records(true).unwrap();
        assert_eq!(records.len(), expected.records.len(), "{mode:?}");
        assert!(records == expected.records, "{mode:?}: the runs differ");
        let summary = env.summary().unwrap();
        assert!(summary.submitted > 0 && summary.sessions > 0, "{summary:?}");
    }
}

#[test]
fn the_same_seed_gives_the_same_episode() {
    let source = Source::replay(
        spec("easy"),
        &options("SDSC-SP2-1998-4.2-cln.swf.gz", Some(5_000)),
    )
    .unwrap();
    let config = EnvConfig::default();
    let run = |seed: u64| {
        let mut env = Env::new(source.clone(), config.clone()).unwrap();
        let mut obs = vec![0.0; env.observation_size()];
        let mut mask = vec![false; env.mask_size()];
        let mut seen = Vec::new();
        env.reset(Some(seed), None, &mut obs, &mut mask).unwrap();
        for step in 0..1000 {
            seen.extend(obs.iter().map(|x| x.to_bits()));
            // A fixed, seed-independent rule: the last valid slot, every third step a wait.
            let last = mask.iter().rposition(|&m| m).unwrap_or(0) as i64;
            let action = if step % 3 == 0 && mask[config.window] {
                config.window as i64
            } else {
                last
            };
            let (_, te, tr, _) = env.step_pick(action, &mut obs, &mut mask).unwrap();
            if te || tr {
                env.reset(None, None, &mut obs, &mut mask).unwrap();
            }
        }
        seen
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7), run(8));
}

#[test]
fn bad_settings_and_actions_are_refused_with_their_reason() {
    let source = Source::replay(
        spec("easy"),
        &options("KTH-SP2-1996-2.1-cln.swf.gz", Some(2_000)),
    )
    .unwrap();
    let err = |config: EnvConfig| match Env::new(source.clone(), config) {
        Err(GymError::Invalid(m)) => m,
        other => panic!("expected an error, got {:?}", other.map(|_| ())),
    };
    assert!(
        err(EnvConfig {
            window: 0,
            ..EnvConfig::default()
        })
        .contains("window=0")
    );
    assert!(
        err(EnvConfig {
            reward: gym::RewardKind::Throughput,
            ..EnvConfig::default()
        })
        .contains("throughput")
    );
    match Source::replay(
        spec("conservative"),
        &options("KTH-SP2-1996-2.1-cln.swf.gz", None),
    ) {
        Err(GymError::Invalid(m)) => assert!(m.contains("conservative"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    let mut env = Env::new(source, EnvConfig::default()).unwrap();
    let mut obs = vec![0.0; env.observation_size()];
    let mut mask = vec![false; env.mask_size()];
    assert!(matches!(
        env.step_pick(0, &mut obs, &mut mask),
        Err(GymError::ResetNeeded(_))
    ));
    env.reset(Some(1), None, &mut obs, &mut mask).unwrap();
    assert!(matches!(
        env.step_pick(129, &mut obs, &mut mask),
        Err(GymError::InvalidAction(_))
    ));
    let empty = mask.iter().position(|&m| !m).unwrap() as i64;
    match env.step_pick(empty, &mut obs, &mut mask) {
        Err(GymError::InvalidAction(m)) => assert!(m.contains("empty"), "{m}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        env.step_score(&[0.0; 128], &mut obs, &mut mask),
        Err(GymError::InvalidAction(_))
    ));
    // Scores outside the action space Box(-1, 1) are refused, not clipped (issue 41).
    let config = EnvConfig {
        mode: ActionMode::Score,
        ..EnvConfig::default()
    };
    let source = Source::replay(
        spec("easy"),
        &options("KTH-SP2-1996-2.1-cln.swf.gz", Some(2_000)),
    )
    .unwrap();
    let mut env = Env::new(source, config).unwrap();
    let mut obs = vec![0.0; env.observation_size()];
    let mut mask = vec![false; env.mask_size()];
    env.reset(Some(1), None, &mut obs, &mut mask).unwrap();
    for bad in [1.5f32, -1.0001, f32::INFINITY] {
        let mut scores = vec![0.0f32; 128];
        scores[7] = bad;
        match env.step_score(&scores, &mut obs, &mut mask) {
            Err(GymError::InvalidAction(m)) => assert!(m.contains("score 7"), "{m}"),
            other => panic!("{bad}: {other:?}"),
        }
    }
    let edge: Vec<f32> = (0..128)
        .map(|i| if i % 2 == 0 { 1.0 } else { -1.0 })
        .collect();
    env.step_score(&edge, &mut obs, &mut mask).unwrap();
}

#[test]
fn an_episode_ends_at_the_pass_that_starts_its_last_job() {
    // Newest first: the episode's jobs jump the warm-up jobs still waiting, so its last job
    // starts at a decision's own pass while others wait.
    let source = Source::replay(
        spec("easy"),
        &options("SDSC-SP2-1998-4.2-cln.swf.gz", Some(8_000)),
    )
    .unwrap();
    let config = EnvConfig {
        mode: ActionMode::Score,
        window: 128,
        episode_jobs: Some(32),
        warm_jobs: 1024,
        ..EnvConfig::default()
    };
    let scores: Vec<f32> = (0..128).map(|i| i as f32 / 128.0).collect();
    let mut waiting_at_end = 0;
    for start in (2_000..7_000).step_by(500) {
        let mut env = Env::new(source.clone(), config.clone()).unwrap();
        let mut obs = vec![0.0; env.observation_size()];
        let mut mask = vec![false; env.mask_size()];
        if !env
            .reset(Some(3), Some(start), &mut obs, &mut mask)
            .unwrap()
        {
            continue;
        }
        loop {
            let (_, te, tr) = env.step_score(&scores, &mut obs, &mut mask).unwrap();
            if te || tr {
                assert!(te);
                break;
            }
        }
        waiting_at_end += usize::from(env.waiting_jobs().len() > 1);
        let summary = env.summary().unwrap();
        let records = env.records(true).unwrap();
        let from = (start as usize).saturating_sub(1024);
        let own = &records[start as usize - from..start as usize - from + 32];
        let last_start = own.iter().map(|r| r.start).max().unwrap();
        assert_eq!(summary.jobs, 32);
        assert_eq!(
            summary.end, last_start,
            "start {start}: the episode ends when its last job starts"
        );
    }
    assert!(
        waiting_at_end > 0,
        "some episode ended with jobs still waiting"
    );
}

#[test]
fn edge_settings_do_not_panic_and_vectors_without_a_seed_differ() {
    let source = Source::replay(
        spec("easy"),
        &options("KTH-SP2-1996-2.1-cln.swf.gz", Some(3_000)),
    )
    .unwrap();
    for (a, b, jobs) in [
        (1.0, 1.0, Some(256)),
        (0.0, 0.0, Some(usize::MAX)),
        (0.99, 1.0, None),
    ] {
        let config = EnvConfig {
            start_range: (a, b),
            episode_jobs: jobs,
            ..EnvConfig::default()
        };
        let mut env = Env::new(source.clone(), config).unwrap();
        let mut obs = vec![0.0; env.observation_size()];
        let mut mask = vec![false; env.mask_size()];
        env.reset(None, None, &mut obs, &mut mask).unwrap();
    }
    // A vector far beyond any batch is refused with its reason, not an aborted allocation.
    for n in [0, gym::MAX_ENVS + 1, 10_000_000, usize::MAX] {
        match gym::VecEnv::new(source.clone(), EnvConfig::default(), n, false) {
            Err(GymError::Invalid(m)) => assert!(m.contains("num_envs"), "{m}"),
            other => panic!("{n}: {:?}", other.map(|_| ())),
        }
    }
    let mut vec = gym::VecEnv::new(source, EnvConfig::default(), 2, false).unwrap();
    let d = vec.envs()[0].observation_size();
    let m = vec.envs()[0].mask_size();
    let mut obs = vec![0.0; 2 * d];
    let mut masks = vec![false; 2 * m];
    vec.reset(None, &mut obs, &mut masks).unwrap();
    assert_ne!(
        obs[..d],
        obs[d..],
        "env 0 and env 1 draw different episodes"
    );
}

/// Plays an episode of `env` with FCFS scores to its end; its summary.
fn fcfs_scores_to_the_end(env: &mut Env, seed: Option<u64>) -> gym::EpisodeSummary {
    let mut obs = vec![0.0; env.observation_size()];
    let mut mask = vec![false; env.mask_size()];
    let k = env.config().window;
    let scores: Vec<f32> = (0..k).map(|i| 1.0 - 2.0 * i as f32 / k as f32).collect();
    assert!(env.reset(seed, None, &mut obs, &mut mask).unwrap());
    loop {
        let (_, te, tr) = env.step_score(&scores, &mut obs, &mut mask).unwrap();
        if te || tr {
            return env.summary().unwrap();
        }
    }
}

/// One definition per name: the episode's own measures (kept as the episode runs) are what the
/// catalogue computes from a run's summaries of the same episode ([`gym::RewardKind::Measure`]),
/// on a truncated site episode (sessions still open, jobs still waiting and running) and a
/// feedback replay.
#[test]
fn the_episode_measures_are_the_catalogues() {
    // 40 users on 64 processors: jobs wait.
    let table: Vec<_> = config::options::run_options().collect();
    let value = |key: &str, v: toml::Value| {
        let option = table.iter().find(|o| o.key == key).copied().unwrap();
        (option, v)
    };
    let values = vec![
        value("users", toml::Value::Integer(40)),
        value("weeks", toml::Value::Integer(2)),
        value("seed", toml::Value::Integer(3)),
        value("scheduler", toml::Value::String("easy".into())),
        value("processors", toml::Value::Integer(64)),
        value("job_sizes", toml::Value::String("clip".into())),
    ];
    let loaded = config::options::site(config::options::SiteSource::Default, &values).unwrap();
    let site = Source::site(loaded, model()).unwrap();
    let feedback = Source::feedback(
        spec("easy"),
        &ReplayOptions {
            feedback: true,
            ..options("KTH-SP2-1996-2.1-cln.swf.gz", None)
        },
    )
    .unwrap();
    let cases = [
        (
            site,
            EnvConfig {
                mode: ActionMode::Score,
                window: 32,
                warm_days: 2,
                ..EnvConfig::default()
            },
            None,
        ),
        (
            feedback,
            EnvConfig {
                mode: ActionMode::Score,
                window: 32,
                warm_days: 1,
                episode_days: 2,
                ..EnvConfig::default()
            },
            Some(3),
        ),
    ];
    for (source, config, seed) in cases {
        for name in gym::EpisodeSummary::MEASURES {
            let k = gym::catalogue().position(|m| m.name == name).unwrap();
            let config = EnvConfig {
                reward: gym::RewardKind::Measure(u16::try_from(k).unwrap()),
                reward_mode: gym::RewardMode::Episodic,
                ..config.clone()
            };
            let mut env = Env::new(source.clone(), config).unwrap();
            let summary = fcfs_scores_to_the_end(&mut env, seed);
            let own = summary.measure(name).unwrap();
            let (other, catalogue) = summary.other.unwrap();
            assert_eq!(other, name);
            // Utilization: the same when the episode measures busy time to its end (sites and
            // feedback; replays stop at their last submit).
            assert!(
                (own - catalogue).abs() <= 1e-9 * own.abs().max(1.0),
                "{name}: the episode's {own}, the catalogue's {catalogue}"
            );
            assert!(own.is_finite() && own > 0.0, "{name}: {own}");
        }
    }
}

/// On a machine of node types (a replay's slurm.conf nodes), FCFS decisions give the schedule
/// of `sitesim replay` under EASY on those nodes, in both action modes; a site's `[[nodes]]`
/// runs an episode too.
#[test]
fn a_machine_of_node_types_under_fcfs_decisions_is_sitesim_replay_on_its_nodes() {
    let workspace = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let capture = workspace.join("tests/fixtures/slurm-gpu/run1");
    let table: toml::Value = toml::from_str(&format!(
        "trace = {:?}\n[scheduler]\npolicy = \"easy\"\nslurm_conf = {:?}\n",
        capture.join("sacct.txt").display().to_string(),
        capture.join("slurm.conf").display().to_string()
    ))
    .unwrap();
    let (easy, options) =
        config::replay_table::replay_of(table, std::path::Path::new(""), 1, None).unwrap();
    let (kept, handle) = scenario::sink::Kept::new();
    scenario::Simulation::replay(easy.clone(), options.clone())
        .sink(Box::new(kept))
        .execute()
        .unwrap();
    let starts = |records: &[JobRecord]| -> Vec<(i64, i64, i64)> {
        let mut s: Vec<_> = records.iter().map(|r| (r.job_id, r.start, r.end)).collect();
        s.sort_unstable();
        s
    };
    let expected = starts(&handle.lock().unwrap().take().unwrap().records);
    assert_eq!(expected.len(), 150);
    for mode in [ActionMode::Score, ActionMode::Pick] {
        let source = Source::replay(easy.clone(), &options).unwrap();
        let mut env = Env::new(source, whole(mode, 32)).unwrap();
        let (records, steps) = fcfs_episode(&mut env, mode, 0);
        assert!(steps > 10, "{mode:?}: only {steps} decisions");
        assert_eq!(starts(&records), expected, "{mode:?}: schedules differ");
    }
    let config = workspace.join("configs/gpu-site.toml");
    let loaded =
        config::options::site(config::options::SiteSource::File(&config), &Vec::new()).unwrap();
    let mut env = Env::new(
        Source::site(loaded, model()).unwrap(),
        whole(ActionMode::Score, 32),
    )
    .unwrap();
    let summary = fcfs_scores_to_the_end(&mut env, Some(1));
    assert!(summary.jobs > 0, "{summary:?}");
}

#[test]
fn a_site_with_a_power_model_is_refused_with_its_reason() {
    let mut site = default_site(10, 1, 1);
    site.file.power = Some(config::power::PowerChoice::Table(Box::default()));
    let Err(err) = Source::site(site, model()) else {
        panic!("a site with [power] was accepted");
    };
    assert!(err.to_string().contains("power"), "{err}");
}
