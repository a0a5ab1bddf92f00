//! Temporary: prints the episode measures and dense reward sums of four sample episodes.
#![allow(clippy::unwrap_used)]
use std::path::Path;
use cluster::SchedulerSpec;
use gym::{ActionMode, Env, EnvConfig, RewardKind, RewardMode, Source, Until};
use scenario::replay::ReplayOptions;

fn spec(n: &str) -> SchedulerSpec { SchedulerSpec::new(n, Default::default()).unwrap() }
fn trace(n: &str) -> std::path::PathBuf { Path::new("/work/shared/traces").join(n) }
fn site(users: u32, weeks: u32, seed: u64) -> scenario::site::Site {
    let table: Vec<_> = scenario::options::run_options().collect();
    let v = |k: &str, x: toml::Value| (table.iter().find(|o| o.key == k).copied().unwrap(), x);
    scenario::options::site(scenario::options::SiteSource::Default, &vec![
        v("users", toml::Value::Integer(users.into())), v("weeks", toml::Value::Integer(weeks.into())),
        v("seed", toml::Value::Integer(seed as i64)), v("scheduler", toml::Value::String("easy".into())),
        v("processors", toml::Value::Integer(64)), v("job_sizes", toml::Value::String("clip".into())),
    ]).unwrap()
}

fn play(source: &Source, config: EnvConfig, seed: u64, start: Option<i64>) -> (f64, Env) {
    let mut env = Env::new(source.clone(), config).unwrap();
    let mut obs = vec![0.0; env.observation_size()];
    let mut mask = vec![false; env.mask_size()];
    let k = env.config().window;
    let scores: Vec<f32> = (0..k).map(|i| 1.0 - 2.0 * i as f32 / k as f32).collect();
    let mut total = 0.0;
    if env.reset(Some(seed), start, &mut obs, &mut mask).unwrap() {
        loop {
            let (r, te, tr) = env.step_score(&scores, &mut obs, &mut mask).unwrap();
            total += r;
            if te || tr { break; }
        }
    }
    (total, env)
}

fn main() {
    let kinds = ["bsld", "wait", "queue", "utilization", "throughput", "session_length"];
    let lublin = Source::replay(spec("easy"), &ReplayOptions::new(trace("lublin_256.swf.gz"))).unwrap();
    let kth = Source::feedback(spec("easy"), &ReplayOptions { feedback: true, ..ReplayOptions::new(trace("KTH-SP2-1996-2.1-cln.swf.gz")) }).unwrap();
    let model = std::sync::Arc::new(scenario::models::default_model().unwrap());
    let s = Source::site(site(40, 2, 3), model).unwrap();
    let base = EnvConfig { mode: ActionMode::Score, window: 64, ..EnvConfig::default() };
    let cases: Vec<(&str, Source, EnvConfig, u64, Option<i64>)> = vec![
        ("replay lublin start 0", lublin.clone(), EnvConfig { episode_jobs: Some(256), warm_jobs: 512, ..base.clone() }, 0, Some(0)),
        ("replay lublin start 3000", lublin, EnvConfig { episode_jobs: Some(256), warm_jobs: 1024, ..base.clone() }, 0, Some(3000)),
        ("site 40u 64p truncated", s.clone(), EnvConfig { window: 32, warm_days: 2, ..base.clone() }, 3, None),
        ("site 40u 64p drained", s, EnvConfig { window: 32, warm_days: 2, until: Until::Drained, ..base.clone() }, 3, None),
        ("feedback KTH", kth, EnvConfig { window: 32, warm_days: 1, episode_days: 2, ..base.clone() }, 3, None),
    ];
    for (name, source, config, seed, start) in cases {
        let (_, env) = play(&source, config.clone(), seed, start);
        println!("== {name}\n{:?}", env.summary().unwrap());
        for k in kinds {
            let kind = RewardKind::named(k).unwrap();
            for mode in [RewardMode::Dense, RewardMode::Episodic] {
                let c = EnvConfig { reward: kind, reward_mode: mode, ..config.clone() };
                if Env::new(source.clone(), c.clone()).is_err() { continue; }
                let (total, _) = play(&source, c, seed, start);
                println!("  {k:>15} {mode:?}: {total:.10}");
            }
        }
    }
}
