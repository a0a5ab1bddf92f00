//! Inputs read once and within bounds (issue 41): a trace from a pipe, `/dev/stdin` or
//! `<(...)` gives the same jobs as the file in every format and command that reads traces;
//! no reader given `/dev/zero` or an endless stream runs past its documented bound
//! (docs/reference/limits.md) or aborts; a byte-order mark is text, not a key or a format.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::{scratch, stderr, trace};

/// Runs the binary with `stdin` as its standard input (a pipe fed by another thread).
fn sitesim_fed(args: &[&str], stdin: &[u8]) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_sitesim"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        // A reader that stops early (an error) closes the pipe: not a test failure.
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    out
}

/// Runs `script` with bash, the binary as `$SITESIM` (for process substitution, `<(...)`).
fn bash(script: &str) -> std::process::Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("SITESIM", env!("CARGO_BIN_EXE_sitesim"))
        .output()
        .unwrap()
}

fn ok(out: &std::process::Output, what: &str) {
    assert!(out.status.success(), "{what}: {}", stderr(out));
}

/// A sacct dump of KTH-SP2's first `jobs` jobs, plain and gzip-compressed.
fn kth_dump(dir: &Path, jobs: usize) -> (PathBuf, PathBuf) {
    let kth = swf::Trace::read(trace("KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
    let start = kth.header.unix_start_time().unwrap_or(0);
    let records: Vec<swf::Record> = kth.records.into_iter().take(jobs).collect();
    let plain = dir.join("kth.sacct");
    sacct::write_dump(&records, start, &mut std::fs::File::create(&plain).unwrap()).unwrap();
    let gz = dir.join("kth.sacct.gz");
    let mut encoder = flate2::write::GzEncoder::new(
        std::fs::File::create(&gz).unwrap(),
        flate2::Compression::fast(),
    );
    encoder.write_all(&std::fs::read(&plain).unwrap()).unwrap();
    encoder.finish().unwrap();
    (plain, gz)
}

/// KTH-SP2 as plain SWF (28,476 job lines: far more than the 64 KiB a sniffer reads).
fn kth_plain(dir: &Path) -> PathBuf {
    let path = dir.join("kth.swf");
    let trace = swf::Trace::read(trace("KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
    let mut out = Vec::new();
    let mut writer = swf::SwfWriter::new(&mut out, &trace.header).unwrap();
    for r in &trace.records {
        writer.write_record(r).unwrap();
    }
    writer.finish().unwrap();
    std::fs::write(&path, out).unwrap();
    path
}

#[test]
fn a_trace_from_a_pipe_replays_the_same_jobs_as_the_file_in_every_format() {
    let (dir, out) = scratch();
    let (dump, dump_gz) = kth_dump(dir.path(), 3000);
    let swf_gz = PathBuf::from(trace("KTH-SP2-1996-2.1-cln.swf.gz"));
    let swf_plain = kth_plain(dir.path());
    for (name, file) in [
        ("swf", &swf_plain),
        ("swf.gz", &swf_gz),
        ("sacct", &dump),
        ("sacct.gz", &dump_gz),
    ] {
        let file_out = out.join(format!("{name}-file"));
        ok(
            &common::sitesim(&[
                "replay",
                file.to_str().unwrap(),
                "--out",
                file_out.to_str().unwrap(),
            ]),
            name,
        );
        let expected = std::fs::read(file_out.join("jobs.csv")).unwrap();
        assert!(expected.len() > 100_000, "{name}: a trace of many jobs");
        // /dev/stdin fed by a pipe
        let stdin_out = out.join(format!("{name}-stdin"));
        let bytes = std::fs::read(file).unwrap();
        let done = sitesim_fed(
            &["replay", "/dev/stdin", "--out", stdin_out.to_str().unwrap()],
            &bytes,
        );
        ok(&done, &format!("{name} from /dev/stdin"));
        assert!(
            std::fs::read(stdin_out.join("jobs.csv")).unwrap() == expected,
            "{name}: /dev/stdin replays other jobs than the file"
        );
        // process substitution (a pipe named /dev/fd/N)
        let fd_out = out.join(format!("{name}-fd"));
        let done = bash(&format!(
            "\"$SITESIM\" replay <(cat {:?}) --out {:?}",
            file, fd_out
        ));
        ok(&done, &format!("{name} from <(...)"));
        assert!(
            std::fs::read(fd_out.join("jobs.csv")).unwrap() == expected,
            "{name}: <(...) replays other jobs than the file"
        );
    }
    // `convert` from a pipe: the same trace (its jobs; the header names the input).
    let job_lines = |path: &Path| -> Vec<String> {
        std::fs::read_to_string(path)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with(';'))
            .map(str::to_string)
            .collect()
    };
    let from_file = out.join("convert-file");
    ok(
        &common::sitesim(&[
            "convert",
            dump.to_str().unwrap(),
            "--out",
            from_file.to_str().unwrap(),
        ]),
        "convert",
    );
    let from_pipe = out.join("convert-pipe");
    ok(
        &bash(&format!(
            "zcat {:?} | \"$SITESIM\" convert /dev/stdin --out {:?}",
            dump_gz, from_pipe
        )),
        "convert from a pipe",
    );
    let expected = job_lines(&from_file.join("trace.swf"));
    assert_eq!(expected.len(), 3000);
    assert!(job_lines(&from_pipe.join("trace.swf")) == expected);
    // `fit` from a pipe: the same models, and the provenance hash of the bytes read.
    let fit_file = out.join("fit-file");
    ok(
        &common::sitesim(&[
            "fit",
            swf_gz.to_str().unwrap(),
            "--out",
            fit_file.to_str().unwrap(),
        ]),
        "fit",
    );
    let fit_pipe = out.join("fit-pipe");
    ok(
        &bash(&format!(
            "cat {:?} | \"$SITESIM\" fit /dev/stdin --out {:?}",
            swf_gz, fit_pipe
        )),
        "fit from a pipe",
    );
    for model in [
        "runtime.csv",
        "batch_width.csv",
        "continue.csv",
        "daily.csv",
    ] {
        assert!(
            std::fs::read(fit_file.join("combined").join(model)).unwrap()
                == std::fs::read(fit_pipe.join("combined").join(model)).unwrap(),
            "fit from a pipe: {model} differs"
        );
    }
    let provenance = std::fs::read_to_string(fit_pipe.join("PROVENANCE.md")).unwrap();
    let hash = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(std::fs::read(&swf_gz).unwrap());
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert!(provenance.contains(&hash), "{provenance}");
}

#[test]
fn byte_order_marks_are_skipped_before_a_sacct_dump() {
    let (dir, out) = scratch();
    let (dump, _) = kth_dump(dir.path(), 500);
    let mut marked = b"\xEF\xBB\xBF".to_vec();
    marked.extend(std::fs::read(&dump).unwrap());
    let path = dir.path().join("bom.sacct");
    std::fs::write(&path, marked).unwrap();
    for (input, name) in [(&dump, "plain"), (&path, "bom")] {
        let done = common::sitesim(&[
            "replay",
            input.to_str().unwrap(),
            "--out",
            out.join(name).to_str().unwrap(),
        ]);
        ok(&done, name);
    }
    assert!(
        std::fs::read(out.join("bom").join("jobs.csv")).unwrap()
            == std::fs::read(out.join("plain").join("jobs.csv")).unwrap(),
        "a dump with a byte-order mark is read as the dump (not taken for SWF)"
    );
}

/// Runs the binary under a 2 GB address-space limit: a reader past its bound would abort.
fn sitesim_in_2gb(args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 2000000; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_sitesim"))
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn no_reader_runs_past_its_bound_on_dev_zero() {
    if !Path::new("/dev/zero").exists() {
        return;
    }
    let (dir, out) = scratch();
    let (dump, _) = kth_dump(dir.path(), 50);
    // A run directory whose jobs.csv is endless, and a sweep directory whose results are.
    let run_dir = dir.path().join("run");
    std::fs::create_dir_all(&run_dir).unwrap();
    std::os::unix::fs::symlink("/dev/zero", run_dir.join("jobs.csv")).unwrap();
    std::fs::write(
        run_dir.join("summary.json"),
        "{\"summary\": {\"processors\": 8}}",
    )
    .unwrap();
    let sweep_dir = dir.path().join("sweep");
    std::fs::create_dir_all(&sweep_dir).unwrap();
    std::os::unix::fs::symlink("/dev/zero", sweep_dir.join("results.csv")).unwrap();
    let o = |name: &str| out.join(name).to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec![
                "replay".into(),
                "/dev/zero".into(),
                "--processors".into(),
                "8".into(),
            ],
            "a line longer than 65536 bytes",
        ),
        (
            vec![
                "replay".into(),
                "/dev/zero".into(),
                "--format".into(),
                "sacct".into(),
            ],
            "a line longer than 1048576 bytes",
        ),
        (
            vec![
                "convert".into(),
                dump.to_str().unwrap().into(),
                "--assoc".into(),
                "/dev/zero".into(),
                "--out".into(),
                o("convert"),
            ],
            "a line longer than 1048576 bytes",
        ),
        (
            vec!["fit".into(), "/dev/zero".into(), "--out".into(), o("fit")],
            "a line longer than 65536 bytes",
        ),
        (
            vec!["run".into(), "--config".into(), "/dev/zero".into()],
            "/dev/zero: more than 16777216 bytes, the most a population file may have",
        ),
        (
            vec!["validate".into(), "--config".into(), "/dev/zero".into()],
            "/dev/zero: more than 16777216 bytes, the most a population file may have",
        ),
        (
            vec![
                "sweep".into(),
                "/dev/zero".into(),
                "--out".into(),
                o("sweep"),
            ],
            "/dev/zero: more than 16777216 bytes, the most a sweep file may have",
        ),
        (
            vec![
                "plot-run".into(),
                run_dir.to_str().unwrap().into(),
                "--out".into(),
                o("figures"),
            ],
            "a line longer than 1048576 bytes",
        ),
        (
            vec![
                "plot".into(),
                sweep_dir.to_str().unwrap().into(),
                "--out".into(),
                o("plots"),
            ],
            "a line longer than 1048576 bytes",
        ),
    ];
    for (args, wanted) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let done = sitesim_in_2gb(&args);
        assert_eq!(done.status.code(), Some(1), "{args:?}: {}", stderr(&done));
        assert!(
            stderr(&done).contains(wanted),
            "{args:?}: {wanted:?} not in {}",
            stderr(&done)
        );
    }
    if out.exists() {
        let written = common::files_below(&out);
        assert!(written.is_empty(), "left behind: {written:?}");
    }
}

#[test]
fn a_dump_of_only_steps_is_refused_not_converted_to_an_empty_trace() {
    let (dir, out) = scratch();
    let mut text = String::from("JobID|User|Account|Partition|QOS|Submit|Start|End|NCPUS|State\n");
    for i in 1..=300 {
        text.push_str(&format!(
            "{i}.batch|u|a|p|normal|2024-01-01T00:00:00|2024-01-01T00:00:00|2024-01-01T00:01:00|1|COMPLETED\n"
        ));
    }
    let path = dir.path().join("steps.sacct");
    std::fs::write(&path, text).unwrap();
    let convert = out.join("convert");
    for args in [
        vec![
            "convert",
            path.to_str().unwrap(),
            "--out",
            convert.to_str().unwrap(),
        ],
        vec!["replay", path.to_str().unwrap()],
    ] {
        let done = common::sitesim(&args);
        assert_eq!(done.status.code(), Some(1), "{args:?}: {}", stderr(&done));
        assert!(
            stderr(&done).contains("none of its 300 job lines is a job to keep")
                && stderr(&done).contains("300 dropped: job step"),
            "{args:?}: {}",
            stderr(&done)
        );
    }
    assert!(!convert.join("trace.swf").exists());
}

#[test]
fn a_conversion_writes_only_what_a_replay_reads_back() {
    // A placeholder year (9999) and a time limit of 10^14 minutes: the first job is dropped
    // and counted, the second keeps no estimate; the converted trace replays.
    let (dir, out) = scratch();
    let text = "JobID|User|Account|Partition|QOS|Submit|Start|End|NCPUS|TimelimitRaw|State\n\
        1|u|a|p|normal|2024-01-01T00:00:00|2024-01-01T00:00:10|9999-12-31T23:59:59|1|60|COMPLETED\n\
        2|u|a|p|normal|2024-01-01T00:00:00|2024-01-01T00:00:10|2024-01-01T00:01:00|1|100000000000000|COMPLETED\n\
        3|u|a|p|normal|2024-01-01T00:01:00|2024-01-01T00:01:10|2024-01-01T00:02:00|1|60|COMPLETED\n";
    let path = dir.path().join("dates.sacct");
    std::fs::write(&path, text).unwrap();
    let converted = out.join("converted");
    let done = common::sitesim(&[
        "convert",
        path.to_str().unwrap(),
        "--out",
        converted.to_str().unwrap(),
    ]);
    ok(&done, "convert");
    let said = common::stdout(&done);
    assert!(
        said.contains("1 dropped: a time before 1970 or 10^11 s after it")
            && said.contains("1 kept: a time limit of 10^11 s or more"),
        "{said}"
    );
    let trace = converted.join("trace.swf");
    let done = common::sitesim(&["replay", trace.to_str().unwrap(), "--processors", "4"]);
    ok(&done, "replay of the converted trace");
}

#[test]
fn a_replay_of_millions_of_jobs_runs_in_bounded_memory() {
    // 3,000,000 jobs at 76 % utilization (no job waits), written to a file. Held whole, they
    // took 1,056 MB (the reader's unbounded channel, the kept jobs and records); streamed,
    // about 200 MB, most of it the summary's 8 bytes per job for its exact percentiles. Under a
    // 700 MB address-space limit (two malloc arenas, so the limit counts memory, not the
    // arenas' reservations) the replay must succeed.
    let (dir, _) = scratch();
    let path = dir.path().join("big.swf");
    {
        let mut out = std::io::BufWriter::new(std::fs::File::create(&path).unwrap());
        writeln!(out, "; MaxProcs: 1024").unwrap();
        for i in 1..=3_000_000i64 {
            let (runtime, size) = (30 + (i * 37) % 900, 1 + (i * 5) % 64);
            writeln!(
                out,
                "{i} {} 0 {runtime} {size} -1 -1 {size} {} -1 1 {} 1 -1 1 -1 -1 -1",
                i * 20,
                runtime * 2,
                1 + i % 50
            )
            .unwrap();
        }
    }
    let done = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 700000; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_sitesim"))
        .args(["replay", path.to_str().unwrap()])
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .unwrap();
    ok(&done, "3,000,000 jobs under 700 MB");
    assert!(
        common::stdout(&done).contains("3000000 read, 3000000 simulated"),
        "{}",
        common::stdout(&done)
    );
}

#[test]
fn a_replayed_machine_is_bounded_like_a_site_s() {
    let (dir, _) = scratch();
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    // The flag: refused before anything is read or allocated (it aborted on 4 GiB of nodes).
    let done = common::sitesim(&[
        "replay",
        &kth,
        "--processors",
        "4294967295",
        "--node-processors",
        "1",
    ]);
    assert_eq!(done.status.code(), Some(1), "{}", stderr(&done));
    assert!(
        stderr(&done).contains("--processors 4294967295 must be at most 16777216"),
        "{}",
        stderr(&done)
    );
    // The header's size: refused naming the trace, and --processors says how to go on.
    let path = dir.path().join("huge.swf");
    std::fs::write(
        &path,
        "; MaxProcs: 4000000000\n1 0 0 10 1 -1 -1 1 10 -1 1 1 1 -1 1 -1 -1 -1\n",
    )
    .unwrap();
    let done = common::sitesim(&["replay", path.to_str().unwrap()]);
    assert_eq!(done.status.code(), Some(1), "{}", stderr(&done));
    assert!(
        stderr(&done).contains(
            "huge.swf: the header's machine size, 4000000000 processors, is more than 16777216"
        ),
        "{}",
        stderr(&done)
    );
    let done = common::sitesim(&["replay", path.to_str().unwrap(), "--processors", "64"]);
    ok(&done, "with --processors");
}
