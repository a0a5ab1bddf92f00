//! Reading a million jobs as a sacct dump against reading the same jobs as SWF.
//!
//! `cargo bench -p sitesim-sacct`. The jobs are the archive traces in `../shared/traces` one after
//! another (SDSC-BLUE twice), renumbered and shifted in time so they follow each other: 1.01
//! million jobs, written once into a temporary directory as plain SWF (`SwfWriter`) and as the
//! sacct dump a Slurm site would have of them (`sacct::write_dump`). Three measurements: the
//! SWF read whole (`swf::Trace::read`), the dump read (`sacct::read`: parsing, placing the
//! times, the pitfall pass), and the dump read and converted to SWF records (what `replay` and
//! `fit` do with a dump).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark without its traces cannot run
#![allow(missing_docs)] // criterion_group! generates an undocumented function

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn trace(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces")
        .join(name)
}

/// About a million jobs of real traces, back to back.
fn million_jobs() -> Vec<swf::Record> {
    let names = [
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
        "HPC2N-2002-2.2-cln.swf.gz",
        "LANL-CM5-1994-4.1-cln.swf.gz",
        "CTC-SP2-1996-3.1-cln.swf.gz",
        "SDSC-SP2-1998-4.2-cln.swf.gz",
        "SDSC-Par-1996-3.1-cln.swf.gz",
        "KTH-SP2-1996-2.1-cln.swf.gz",
        "SDSC-BLUE-2000-4.2-cln.swf.gz",
    ];
    let mut all = Vec::new();
    let (mut offset, mut number) = (0i64, 0i64);
    for name in names {
        let t = swf::Trace::read(trace(name)).unwrap();
        let mut last = 0;
        for mut r in t.records {
            number += 1;
            r.job_number = number;
            r.submit_time += offset;
            last = last.max(r.submit_time + r.wait_time.max(0) + r.run_time.max(0));
            all.push(r);
        }
        offset = last + 3600;
    }
    all
}

fn write_inputs(dir: &Path) -> (PathBuf, PathBuf, u64) {
    let jobs = million_jobs();
    let swf_path = dir.join("jobs.swf");
    let mut header = swf::Header::new();
    header.push_field("MaxProcs", 1152);
    let file = std::io::BufWriter::new(std::fs::File::create(&swf_path).unwrap());
    let mut w = swf::SwfWriter::new(file, &header).unwrap();
    for r in &jobs {
        w.write_record(r).unwrap();
    }
    w.finish().unwrap();
    let dump = dir.join("jobs.sacct");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&dump).unwrap());
    sacct::write_dump(&jobs, 1_700_000_000, &mut file).unwrap();
    drop(file);
    (swf_path, dump, jobs.len() as u64)
}

fn read(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let (swf_path, dump, jobs) = write_inputs(dir.path());
    let options = sacct::SacctOptions::default();
    let mut group = c.benchmark_group("million jobs");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(jobs));
    group.bench_function("SWF read", |b| {
        b.iter(|| swf::Trace::read(&swf_path).unwrap())
    });
    group.bench_function("sacct read", |b| {
        b.iter(|| sacct::read(&dump, &options).unwrap())
    });
    group.bench_function("sacct read and convert", |b| {
        b.iter(|| {
            let log = sacct::read(&dump, &options).unwrap();
            sacct::convert(&log, sacct::Unit::Cpus)
        })
    });
    group.finish();
}

criterion_group!(benches, read);
criterion_main!(benches);
