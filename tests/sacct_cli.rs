//! Slurm accounting dumps through the binary: `replay` of a dump equals `replay` of the SWF
//! that `convert` writes from it; `fit` of a dump gives models a site runs on and `validate`
//! compares with; bad dumps are refused naming file, line and field, with nothing written.

use std::fs;
use std::path::{Path, PathBuf};

use crate::common::{column, scratch, sitesim, stderr, stdout, trace, workspace};

fn fixture(name: &str) -> String {
    workspace()
        .join("tests/fixtures/sacct")
        .join(name)
        .display()
        .to_string()
}

/// A sacct dump of an archive trace's jobs (what the site's sacct would show), written into
/// `dir`: KTH-SP2's first `jobs` jobs.
fn dump_of_kth(dir: &Path, jobs: usize) -> PathBuf {
    let kth = swf::Trace::read(trace("KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
    let start = kth.header.unix_start_time().unwrap_or(0);
    let records: Vec<swf::Record> = kth.records.into_iter().take(jobs).collect();
    let path = dir.join("kth.sacct");
    let mut file = fs::File::create(&path).unwrap();
    sacct::write_dump(&records, start, &mut file).unwrap();
    path
}

/// summary.json as JSON without the trace's path (the one thing two inputs must differ in).
fn summary_without_trace(dir: &Path) -> serde_json::Value {
    let mut value: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap();
    value.as_object_mut().unwrap().remove("trace");
    value
}

#[test]
fn replaying_a_dump_is_replaying_its_conversion() {
    let (dir, _) = scratch();
    let dump = dump_of_kth(dir.path(), 3000);
    let converted = dir.path().join("converted");
    let out = sitesim(&[
        "convert",
        dump.to_str().unwrap(),
        "--out",
        converted.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("3000 lines read, 3000 jobs kept"),
        "{}",
        stdout(&out)
    );
    let swf = converted.join("trace.swf");
    for scheduler in ["easy", "creasy"] {
        let from_dump = dir.path().join(format!("dump-{scheduler}"));
        let from_swf = dir.path().join(format!("swf-{scheduler}"));
        for (input, out_dir) in [(&dump, &from_dump), (&swf, &from_swf)] {
            let run = sitesim(&[
                "replay",
                input.to_str().unwrap(),
                "-s",
                scheduler,
                "-o",
                out_dir.to_str().unwrap(),
            ]);
            assert!(run.status.success(), "{}", stderr(&run));
        }
        assert_eq!(
            fs::read(from_dump.join("jobs.csv")).unwrap(),
            fs::read(from_swf.join("jobs.csv")).unwrap(),
            "{scheduler}: the same schedule from the dump and from its SWF"
        );
        assert_eq!(
            summary_without_trace(&from_dump),
            summary_without_trace(&from_swf)
        );
    }
    // a second conversion writes the same bytes
    let again = dir.path().join("again");
    let out = sitesim(&[
        "convert",
        dump.to_str().unwrap(),
        "-o",
        again.to_str().unwrap(),
    ]);
    assert!(out.status.success());
    assert_eq!(
        fs::read(&swf).unwrap(),
        fs::read(again.join("trace.swf")).unwrap()
    );
}

#[test]
fn a_dump_keeps_the_jobs_of_its_trace() {
    let (dir, _) = scratch();
    let dump = dump_of_kth(dir.path(), 2000);
    let converted = dir.path().join("c");
    assert!(
        sitesim(&[
            "convert",
            dump.to_str().unwrap(),
            "-o",
            converted.to_str().unwrap()
        ])
        .status
        .success()
    );
    let original = swf::Trace::read(trace("KTH-SP2-1996-2.1-cln.swf.gz")).unwrap();
    let back = swf::Trace::read(converted.join("trace.swf")).unwrap();
    let first = original.records[0].submit_time;
    for (o, b) in original.records.iter().zip(&back.records).take(2000) {
        assert_eq!(b.job_number, o.job_number);
        assert_eq!(b.submit_time, o.submit_time - first);
        if o.run_time >= 0 && o.wait_time >= 0 {
            assert_eq!((b.wait_time, b.run_time), (o.wait_time, o.run_time));
            assert_eq!(b.allocated_processors, o.allocated_processors);
        }
        if o.requested_time > 0 {
            // Slurm keeps limits in minutes
            assert_eq!(b.requested_time, (o.requested_time + 59) / 60 * 60);
        }
    }
}

#[test]
fn a_site_runs_on_the_models_fitted_from_its_own_dump() {
    let (dir, _) = scratch();
    let dump = dump_of_kth(dir.path(), 28_475);
    let models = dir.path().join("models");
    let fit = sitesim(&[
        "fit",
        dump.to_str().unwrap(),
        "--out",
        models.to_str().unwrap(),
    ]);
    assert!(fit.status.success(), "{}", stderr(&fit));
    let combined = models.join("combined");
    assert!(combined.join("parameters.csv").exists());
    let site = dir.path().join("site.toml");
    fs::write(
        &site,
        "[site]\nprocessors = 100\n[run]\nweeks = 2\n[[groups]]\nname = \"kth\"\nusers = 40\nmodels = \"models/combined\"\n",
    )
    .unwrap();
    let run = sitesim(&["run", "-c", site.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(stdout(&run).contains("jobs/h"), "{}", stdout(&run));
    let validate = sitesim(&["validate", "-c", site.to_str().unwrap()]);
    assert!(validate.status.success(), "{}", stderr(&validate));
    assert!(
        stdout(&validate).contains("Kolmogorov") || stdout(&validate).contains("KS"),
        "{}",
        stdout(&validate)
    );
}

#[test]
fn bad_dumps_name_file_line_and_field_and_write_nothing() {
    for (name, expected) in [
        (
            "too_few_fields.txt",
            "too_few_fields.txt:3: 10 fields, the header has 26",
        ),
        (
            "impossible_time.txt",
            "impossible_time.txt:3: field Submit: \"2024-02-30T08:00:00\"",
        ),
        (
            "unknown_state.txt",
            "unknown_state.txt:3: field State: \"VAPORIZED\"",
        ),
        ("bad_header.txt", "bad_header.txt:1:"),
    ] {
        let (_dir, out) = scratch();
        let result = sitesim(&[
            "convert",
            &fixture(name),
            "--format",
            "sacct",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(!result.status.success(), "{name}");
        assert!(
            stderr(&result).contains(expected),
            "{name}: {}",
            stderr(&result)
        );
        assert!(!out.join("trace.swf").exists(), "{name}: nothing written");
        let replay = sitesim(&["replay", &fixture(name), "--format", "sacct"]);
        assert!(!replay.status.success());
        assert!(
            stderr(&replay).contains(expected),
            "{name}: {}",
            stderr(&replay)
        );
    }
    // sacct options on an SWF trace are refused
    let swf = sitesim(&[
        "replay",
        &trace("KTH-SP2-1996-2.1-cln.swf.gz"),
        "--tz",
        "UTC",
    ]);
    assert!(!swf.status.success());
    assert!(
        stderr(&swf).contains("applies to Slurm accounting dumps"),
        "{}",
        stderr(&swf)
    );
    let zone = sitesim(&["replay", &fixture("steps.txt"), "--tz", "Mars/Olympus"]);
    assert!(
        stderr(&zone).contains("not a time zone"),
        "{}",
        stderr(&zone)
    );
}

#[test]
fn a_replayed_dump_reports_what_it_dropped() {
    let (_dir, out) = scratch();
    let run = sitesim(&[
        "replay",
        &fixture("unknown_times.txt"),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(
        stdout(&run).contains("input        6 lines read, 4 jobs kept"),
        "{}",
        stdout(&run)
    );
    let summary = fs::read_to_string(out.join("summary.json")).unwrap();
    let value: serde_json::Value = serde_json::from_str(&summary).unwrap();
    assert_eq!(
        value["conversion"]["not_ended"],
        "2 dropped: not ended when the dump was made (pending, running, suspended)"
    );
}

/// Checks what sitesim reads from a real Slurm's dumps (`dir` holds sacct.txt,
/// sacct-steps.txt, assoc.txt and submitted.json, as scripts/ci/slurm-workload.sh writes them)
/// against what was submitted.
fn check_real_dumps(dir: &Path) {
    use sacct::{Reason, State};
    let submitted: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.join("submitted.json")).unwrap()).unwrap();
    let log = sacct::read(&dir.join("sacct.txt"), &sacct::SacctOptions::default()).unwrap();
    let text = fs::read_to_string(dir.join("sacct.txt")).unwrap();
    let name = |names: &sacct::Names, id: u32| names.name(id).to_string();
    let submissions = submitted["submissions"].as_array().unwrap();
    assert!(submissions.len() >= 10, "{submissions:?}");
    for s in submissions {
        let id = s["job_id"].as_u64().unwrap();
        let kind = s["kind"].as_str().unwrap();
        let jobs: Vec<&sacct::Job> = match kind {
            "array" => log
                .jobs
                .iter()
                .filter(|j| j.array.map(|a| a.0) == Some(id))
                .collect(),
            _ => log.jobs.iter().filter(|j| j.id == id).collect(),
        };
        match kind {
            "array" => {
                let tasks: std::collections::BTreeSet<u32> =
                    jobs.iter().map(|j| j.array.unwrap().1).collect();
                assert_eq!(tasks, (1..=6).collect(), "array {id}: its six tasks");
                let ids: std::collections::BTreeSet<u64> = jobs.iter().map(|j| j.id).collect();
                assert_eq!(ids.len(), 6, "each task its own id");
            }
            _ => assert_eq!(jobs.len(), 1, "{kind} job {id}: one job"),
        }
        for job in &jobs {
            assert_eq!(name(&log.names.users, job.user), s["user"], "{kind} {id}");
            assert_eq!(
                name(&log.names.accounts, job.account),
                s["account"],
                "{kind} {id}"
            );
            assert_eq!(name(&log.names.partitions, job.partition), s["partition"]);
            assert_eq!(name(&log.names.qos, job.qos), s["qos"], "{kind} {id}");
            assert_eq!(
                job.time_limit,
                Some(s["time_limit_min"].as_i64().unwrap() * 60),
                "{kind} {id}"
            );
            assert_eq!(
                i64::from(job.req_cpus),
                s["cpus"].as_i64().unwrap(),
                "{kind} {id}"
            );
        }
        let job = jobs[0];
        match kind {
            "requeued" => {
                assert_eq!(job.state, State::Completed);
                // its wait counts from the first run's submit, the earliest of its lines
                let first = text
                    .lines()
                    .filter(|l| l.starts_with(&format!("{id}|")))
                    .map(|l| l.split('|').nth(6).unwrap().to_string())
                    .min()
                    .unwrap();
                let first = sacct::values::parse_time(&first)
                    .unwrap()
                    .unwrap()
                    .and_utc()
                    .timestamp();
                assert_eq!(job.submit, first);
                assert!(
                    job.start.unwrap() > job.submit + 60,
                    "it waited across its runs"
                );
            }
            "timeout" => {
                assert_eq!(job.state, State::Timeout);
                assert!(job.elapsed.unwrap() >= 60, "{job:?}");
            }
            "cancelled-running" => {
                assert_eq!(job.state, State::Cancelled);
                assert!(job.start.is_some());
            }
            "cancelled-pending" => {
                assert_eq!(job.state, State::Cancelled);
                assert_eq!(job.start, None, "it never started: {job:?}");
                assert_eq!(job.elapsed, None);
            }
            "dependency" => {
                assert_eq!(job.dependency, s["depends_on"].as_u64());
                assert!(
                    job.eligible.unwrap() > job.submit,
                    "eligible when 111 ended"
                );
            }
            "mem" => assert_eq!(job.memory_per_cpu, Some(200.0 * 1024.0)),
            "exclusive" => assert!(job.cpus > job.req_cpus, "{job:?}"),
            "begin-later" => assert!(job.eligible.unwrap() >= job.submit + 20, "{job:?}"),
            "failed" => assert_eq!(job.state, State::Failed),
            _ => assert_eq!(job.state, State::Completed, "{kind} {id}"),
        }
    }
    assert!(log.report.get(Reason::RequeuedRun) >= 1);
    assert_eq!(log.report.get(Reason::CancelledBeforeStart), 1);
    // the dump with the steps gives the same jobs
    let steps = sacct::read(
        &dir.join("sacct-steps.txt"),
        &sacct::SacctOptions::default(),
    )
    .unwrap();
    assert!(steps.report.get(Reason::Step) > 10);
    assert_eq!(
        steps.jobs,
        log.jobs
            .iter()
            .map(|j| {
                // lines differ: each job is matched by everything else
                let mut j = j.clone();
                j.line = steps.jobs.iter().find(|s| s.id == j.id).unwrap().line;
                j
            })
            .collect::<Vec<_>>()
    );
    // the association tree
    let tree = sacct::AssocTree::read(&dir.join("assoc.txt")).unwrap();
    let theory = tree
        .associations
        .iter()
        .find(|a| a.account == "theory" && a.user.is_none())
        .unwrap();
    assert_eq!(theory.parent.as_deref(), Some("physics"));
    let alice = tree
        .associations
        .iter()
        .find(|a| a.account == "physics" && a.user.as_deref() == Some("alice"))
        .unwrap();
    assert_eq!(alice.shares, sacct::Shares::Count(3));
    // converted, and replayed, by the binary
    let out = dir.join("converted");
    let converted = sitesim(&[
        "convert",
        dir.join("sacct.txt").to_str().unwrap(),
        "--assoc",
        dir.join("assoc.txt").to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--force",
    ]);
    assert!(converted.status.success(), "{}", stderr(&converted));
    let swf = swf::Trace::read(out.join("trace.swf")).unwrap();
    assert_eq!(swf.records.len(), log.jobs.len());
    let associations = fs::read_to_string(out.join("associations.csv")).unwrap();
    assert!(
        associations.contains("theory,physics,,20,normal"),
        "{associations}"
    );
    // the tree as the Slurm model's keys: replayed with them, the jobs run under the site's
    // own accounts (theory under physics), as accounts.csv numbers them
    let tree = fs::read_to_string(out.join("slurm-tree.toml")).unwrap();
    assert!(
        tree.contains("name = \"theory\"\nparent = \"physics\"\nshares = 20"),
        "{tree}"
    );
    let table = format!(
        "trace = {:?}\n[scheduler]\npolicy = \"slurm-site\"\n{tree}",
        out.join("trace.swf").display().to_string()
    );
    let (spec, options) = config::replay_table::replay_of(
        toml::from_str(&table).unwrap(),
        std::path::Path::new(""),
        1,
        None,
    )
    .unwrap();
    let (kept, handle) = scenario::sink::Kept::new();
    scenario::Simulation::replay(spec, options)
        .sink(Box::new(kept))
        .execute()
        .unwrap();
    let records = handle.lock().unwrap().take().unwrap().records;
    let config = config::slurm::SlurmSection {
        tree: toml::from_str::<toml::Table>(&tree).unwrap()["scheduler"]["slurm"]
            .get("tree")
            .cloned()
            .map(|t| t.try_into().unwrap()),
        ..Default::default()
    }
    .apply(slurm_model::SlurmConfig::documented_site())
    .unwrap();
    let names: Vec<&str> = config.accounts.iter().map(|a| a.name.as_str()).collect();
    // the account column of jobs.csv, as the model's columns write it
    let columns = slurm_model::SlurmColumns::new(&config);
    let ran_under: std::collections::BTreeSet<String> = records
        .iter()
        .filter_map(
            |r| match cluster::Columns::cell(&columns, r.annotation.as_ref()?, 0) {
                cluster::Cell::Text(name) => Some(name.into_owned()),
                _ => None,
            },
        )
        .collect();
    assert!(ran_under.contains("theory"), "{ran_under:?} {names:?}");
    assert!(ran_under.contains("physics"), "{ran_under:?}");
    let replay = sitesim(&[
        "replay",
        dir.join("sacct.txt").to_str().unwrap(),
        "--processors",
        "2",
    ]);
    assert!(replay.status.success(), "{}", stderr(&replay));
    // the same tree pasted into a population file, its users dealt over the tree's accounts:
    // the closed loop's jobs run under the site's accounts, each user's under one
    let site = format!(
        "[site]\nprocessors = 128\njob_sizes = \"scale\"\n[scheduler]\npolicy = \"slurm-site\"\n[run]\nweeks = 1\n\
         [[groups]]\nname = \"site\"\nusers = 12\naccounts = \"tree\"\n{tree}"
    );
    fs::write(dir.join("site.toml"), site).unwrap();
    let run_out = dir.join("site-run");
    let run = sitesim(&[
        "run",
        "--config",
        dir.join("site.toml").to_str().unwrap(),
        "--out",
        run_out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (header, rows) = crate::common::table(&run_out.join("jobs.csv"));
    let (user, account) = (column(&header, "user"), column(&header, "account"));
    let mut account_of = std::collections::BTreeMap::new();
    for row in &rows {
        let earlier = account_of.insert(row[user].clone(), row[account].clone());
        assert!(
            earlier.is_none_or(|a| a == row[account]),
            "user {} ran under two accounts",
            row[user]
        );
    }
    let accounts: std::collections::BTreeSet<&str> =
        account_of.values().map(String::as_str).collect();
    // two members each in the dump: four of the twelve users each
    assert_eq!(
        accounts,
        ["chemistry", "physics", "theory"].into_iter().collect(),
        "{account_of:?}"
    );
    for name in accounts {
        assert_eq!(account_of.values().filter(|a| *a == name).count(), 4);
    }
}

#[test]
fn the_captured_output_of_a_real_slurm_reads_as_submitted() {
    let (dir, _) = scratch();
    for name in [
        "sacct.txt",
        "sacct-steps.txt",
        "assoc.txt",
        "submitted.json",
    ] {
        fs::copy(
            workspace().join("tests/fixtures/sacct/real").join(name),
            dir.path().join(name),
        )
        .unwrap();
    }
    check_real_dumps(dir.path());
}

/// Why a live Slurm with accounting cannot be used here, if it cannot.
fn slurm_accounting_unusable() -> Option<String> {
    let root = std::process::Command::new("id").arg("-u").output().ok()?;
    if String::from_utf8_lossy(&root.stdout).trim() != "0" {
        return Some("not root (the workload adds users and submits as them)".into());
    }
    match std::process::Command::new("sacctmgr")
        .args(["-n", "-P", "show", "cluster", "format=Cluster"])
        .output()
    {
        Ok(out) if out.status.success() && !out.stdout.is_empty() => None,
        Ok(out) => Some(format!(
            "sacctmgr show cluster failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        )),
        Err(e) => Some(format!("no sacctmgr: {e}")),
    }
}

/// Runs a known workload on the local Slurm cluster with accounting (scripts/ci/start-slurm.sh,
/// started by CI), dumps it with sacct and sacctmgr (scripts/ci/slurm-workload.sh), and checks
/// what sitesim reads against what was submitted. About three minutes. Under CI
/// (`SITESIM_REQUIRE_SLURM`) it must run; elsewhere it is skipped without such a cluster.
#[test]
fn a_real_slurm_workload_reads_as_submitted() {
    let _slurm = crate::common::slurm_lock();
    if let Some(why) = slurm_accounting_unusable() {
        assert!(
            std::env::var_os("SITESIM_REQUIRE_SLURM").is_none(),
            "SITESIM_REQUIRE_SLURM is set but Slurm accounting is not usable: {why}"
        );
        eprintln!("skipped: {why}");
        return;
    }
    let (dir, _) = scratch();
    let done = std::process::Command::new("bash")
        .arg(workspace().join("scripts/ci/slurm-workload.sh"))
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(
        done.status.success(),
        "slurm-workload.sh failed:\n{}\n{}",
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    );
    check_real_dumps(dir.path());
}

#[test]
fn a_dumps_machine_size_is_called_a_guess_unless_given() {
    let dump = fixture("window.txt");
    let (_keep, out) = scratch();
    let guessed = sitesim(&["replay", &dump, "--out", out.to_str().unwrap()]);
    assert!(guessed.status.success(), "{}", stderr(&guessed));
    assert!(
        stdout(&guessed).contains(
            "8 processors: the most the trace's jobs held at once, a guess (a sacct dump or GPU trace does not record the machine's size); --processors sets it"
        ),
        "{}",
        stdout(&guessed)
    );
    let (_keep2, out2) = scratch();
    let given = sitesim(&[
        "replay",
        &dump,
        "--processors",
        "64",
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert!(given.status.success(), "{}", stderr(&given));
    assert!(!stdout(&given).contains("a guess"), "{}", stdout(&given));
}
