//! The environment's native cost per step, Python excluded: 10,000 steps of a fixed FCFS
//! policy (slot 0, or scores falling with the slot), episode resets included where episodes
//! end, on Lublin-256 and SDSC-SP2 at the defaults (window 128, 256-job episodes after 1024
//! warm jobs). `scripts/gym-bench.py` measures the same through Python.
//!
//! `cargo bench -p sitesim-gym` — the traces are read from `../shared/traces` beside the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark without its trace cannot run
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::path::PathBuf;
use std::time::Duration;

use config::replay::ReplayOptions;
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use gym::{ActionMode, Env, EnvConfig, Source};

const STEPS: u64 = 10_000;

fn source(name: &str) -> Source {
    let trace = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name);
    let options = ReplayOptions::new(trace);
    Source::replay(
        schedulers::REGISTRY
            .spec("easy", &Default::default())
            .unwrap(),
        &options,
    )
    .unwrap()
}

fn steps(c: &mut Criterion) {
    let mut group = c.benchmark_group("steps");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(5));
    group.throughput(Throughput::Elements(STEPS));
    for (label, file) in [
        ("lublin-256", "lublin_256.swf.gz"),
        ("SDSC-SP2", "SDSC-SP2-1998-4.2-cln.swf.gz"),
    ] {
        let source = source(file);
        for mode in [ActionMode::Pick, ActionMode::Score] {
            let config = EnvConfig {
                mode,
                ..EnvConfig::default()
            };
            let mut env = Env::new(source.clone(), config).unwrap();
            let mut obs = vec![0.0; env.observation_size()];
            let mut mask = vec![false; env.mask_size()];
            let k = env.config().window;
            let scores: Vec<f32> = (0..k).map(|i| 1.0 - 2.0 * i as f32 / k as f32).collect();
            env.reset(Some(0), None, &mut obs, &mut mask).unwrap();
            let id = BenchmarkId::new(label, format!("{mode:?}").to_lowercase());
            group.bench_function(id, |b| {
                b.iter(|| {
                    for _ in 0..STEPS {
                        let over = match mode {
                            ActionMode::Pick => {
                                let (_, te, tr, _) = env.step_pick(0, &mut obs, &mut mask).unwrap();
                                te || tr
                            }
                            ActionMode::Score => {
                                let (_, te, tr) =
                                    env.step_score(&scores, &mut obs, &mut mask).unwrap();
                                te || tr
                            }
                        };
                        if over {
                            env.reset(None, None, &mut obs, &mut mask).unwrap();
                        }
                    }
                })
            });
        }
    }
    group.finish();
}

criterion_group!(benches, steps);
criterion_main!(benches);
