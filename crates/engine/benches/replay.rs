//! Replay benchmarks on real traces: reading (inflate + parse) and simulating.
//!
//! `cargo bench -p sitesim-engine` — the traces are read from `../shared/traces` beside the workspace.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark without its trace cannot run
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::path::PathBuf;
use std::time::Duration;

use cluster::{Cluster, ParamValues};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use engine::{Replay, simulate};

fn trace(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

fn read(c: &mut Criterion) {
    let path = trace("SDSC-BLUE-2000-4.2-cln.swf.gz");
    let jobs = Replay::read(&path, None).unwrap().input.read;
    let mut group = c.benchmark_group("read");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    group.throughput(Throughput::Elements(jobs));
    group.bench_function("SDSC-BLUE", |b| {
        b.iter(|| Replay::read(&path, None).unwrap())
    });
    group.finish();
}

fn schedule(c: &mut Criterion) {
    let mut group = c.benchmark_group("simulate");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(10));
    for name in [
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "KTH-SP2-1996-2.1-cln.swf.gz",
    ] {
        let replay = Replay::read(trace(name), None).unwrap();
        group.throughput(Throughput::Elements(replay.jobs.len() as u64));
        let label = name.split("-cln").next().unwrap_or(name);
        for policy in ["easy", "creasy"] {
            let spec = schedulers::REGISTRY
                .spec(policy, &ParamValues::new())
                .unwrap();
            group.bench_with_input(
                BenchmarkId::new(spec.label(), label),
                &replay,
                |b, replay| {
                    b.iter(|| {
                        let mut cluster = Cluster::new(replay.processors, spec.build());
                        simulate(&mut cluster, &mut replay.clone(), &mut ()).unwrap()
                    })
                },
            );
        }
    }
    group.finish();
}

criterion_group!(benches, read, schedule);
criterion_main!(benches);
