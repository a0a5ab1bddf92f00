//! End-to-end tests of issue 18's everyday use: `sitesim` without a subcommand, progress and
//! logs, models and sites that work anywhere, and option names and defaults.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use std::fs;

use common::{scratch, sitesim, sitesim_in, stderr, stdout, workspace};

#[test]
fn site_options_without_a_subcommand_run_the_default_site_as_run_does() {
    let (dir, _) = scratch();
    let bare = dir.path().join("bare");
    let run = dir.path().join("run");
    let args = ["--users", "30", "--weeks", "2", "--seed", "3"];
    let a = sitesim(&[&args[..], &["--out", bare.to_str().unwrap()]].concat());
    let b = sitesim(&[&["run"], &args[..], &["--out", run.to_str().unwrap()]].concat());
    assert!(a.status.success(), "{}", stderr(&a));
    assert!(b.status.success(), "{}", stderr(&b));
    assert_eq!(
        stdout(&a),
        stdout(&b).replace(run.to_str().unwrap(), bare.to_str().unwrap())
    );
    for name in ["jobs.csv", "sessions.csv", "batches.csv", "summary.json"] {
        assert!(
            fs::read(bare.join(name)).unwrap() == fs::read(run.join(name)).unwrap(),
            "{name} differs between `sitesim ...` and `sitesim run ...`"
        );
    }
    // Without --out, as `run`: the summary on stdout, no files.
    let c = sitesim(&["--users", "5", "--weeks", "1"]);
    assert!(c.status.success(), "{}", stderr(&c));
    assert!(stdout(&c).contains("5 users"), "{}", stdout(&c));
    // --help still lists the subcommands; a bare `sitesim` shows help instead of running.
    let help = stdout(&sitesim(&["--help"]));
    for command in [
        "replay", "fit", "run", "validate", "sweep", "plot", "--users",
    ] {
        assert!(
            help.contains(command),
            "{command} missing from --help: {help}"
        );
    }
    let bare = sitesim(&[]);
    assert!(!bare.status.success());
    assert!(stderr(&bare).contains("Commands:"), "{}", stderr(&bare));
    // Site options and a subcommand do not mix.
    let mixed = sitesim(&["--users", "5", "replay", "x.swf"]);
    assert!(!mixed.status.success());
    assert!(
        stderr(&mixed).contains("cannot be used with"),
        "{}",
        stderr(&mixed)
    );
}

#[test]
fn a_site_chooses_what_happens_to_jobs_wider_than_its_machine() {
    // The paper's models have jobs of 1152 processors: on 1024, reject (the default) refuses.
    let small = [
        "run",
        "--users",
        "30",
        "--weeks",
        "2",
        "--processors",
        "1024",
    ];
    let refused = sitesim(&small);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("jobs of 1152 processors")
            && stderr(&refused).contains("site.job_sizes"),
        "{}",
        stderr(&refused)
    );
    let (dir, _) = scratch();
    let mut widest = Vec::new();
    for rule in ["clip", "scale"] {
        let out = dir.path().join(rule);
        let r = sitesim(
            &[
                &small[..],
                &["--job-sizes", rule, "--out", out.to_str().unwrap()],
            ]
            .concat(),
        );
        assert!(r.status.success(), "{rule}: {}", stderr(&r));
        let jobs = fs::read_to_string(out.join("jobs.csv")).unwrap();
        let mut lines = jobs.lines();
        let header: Vec<&str> = lines.next().unwrap().split(',').collect();
        let column = header.iter().position(|c| *c == "processors").unwrap();
        let sizes: Vec<u32> = lines
            .map(|l| l.split(',').nth(column).unwrap().parse().unwrap())
            .collect();
        assert!(sizes.iter().all(|&s| (1..=1024).contains(&s)), "{rule}");
        widest.push(*sizes.iter().max().unwrap());
        let summary = fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(
            summary.contains(&format!("\"job_sizes\": \"{rule}\"")),
            "{summary}"
        );
    }
    // The same key in a population file; an unknown rule is refused naming the key.
    let file = dir.path().join("site.toml");
    fs::write(
        &file,
        "[site]\nprocessors = 1000\njob_sizes = \"scale\"\n[run]\nweeks = 1\n[[groups]]\nname = \"u\"\nusers = 10\n",
    )
    .unwrap();
    let r = sitesim(&["run", "--config", file.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    fs::write(
        &file,
        "[site]\nprocessors = 1000\njob_sizes = \"shrink\"\n[[groups]]\nname = \"u\"\nusers = 10\n",
    )
    .unwrap();
    let r = sitesim(&["run", "--config", file.to_str().unwrap()]);
    assert!(!r.status.success());
    assert!(stderr(&r).contains("job_sizes"), "{}", stderr(&r));
}

#[test]
fn the_mixed_site_runs_outside_the_checkout_on_embedded_trace_models() {
    let (dir, _) = scratch();
    fs::copy(
        workspace().join("configs/mixed.toml"),
        dir.path().join("mixed.toml"),
    )
    .unwrap();
    let r = sitesim_in(
        dir.path(),
        &[
            "run",
            "--config",
            "mixed.toml",
            "--weeks",
            "1",
            "--out",
            "out",
        ],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(dir.path().join("out/jobs.csv").exists());
    // An unknown embedded model is refused with the names there are.
    fs::write(
        dir.path().join("bad.toml"),
        "[site]\nprocessors = 4000\n[[groups]]\nname = \"u\"\nusers = 3\nmodels = \"embedded:KTH\"\n",
    )
    .unwrap();
    let r = sitesim_in(dir.path(), &["run", "--config", "bad.toml"]);
    assert!(!r.status.success());
    assert!(
        stderr(&r).contains("no such embedded model")
            && stderr(&r).contains("KTH-SP2-1996-2.1-cln"),
        "{}",
        stderr(&r)
    );
}

#[test]
fn run_takes_replays_names_for_nodes_estimates_and_warm_up() {
    let (dir, out) = scratch();
    let r = sitesim(&[
        "run",
        "--users",
        "20",
        "--weeks",
        "2",
        "--node-processors",
        "8",
        "--selection",
        "first-continuous",
        "--estimates",
        "exact",
        "--warmup-days",
        "3",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert!(
        stdout(&r).contains("0 killed at their estimate"),
        "{}",
        stdout(&r)
    );
    assert!(stdout(&r).contains("from day 3.0"), "{}", stdout(&r));
    let summary = fs::read_to_string(out.join("summary.json")).unwrap();
    for expected in [
        "\"node_processors\": 8",
        "\"selection\": \"first-continuous\"",
        "\"estimates\": \"exact\"",
        "\"warmup_days\": 3",
    ] {
        assert!(summary.contains(expected), "{expected} missing: {summary}");
    }
    let r = sitesim(&["run", "--estimates", "trace"]);
    assert!(!r.status.success());
    assert!(stderr(&r).contains("fitted, exact"), "{}", stderr(&r));
    drop(dir);
}

#[test]
fn every_option_shows_its_default_in_help() {
    for command in [
        "run", "replay", "validate", "sweep", "fit", "synth", "plot", "models",
    ] {
        let help = stdout(&sitesim(&[command, "--help"]));
        // Required options (named in the usage line) have no default.
        let usage = help
            .lines()
            .find(|l| l.starts_with("Usage:"))
            .unwrap_or("")
            .to_string();
        // One option per paragraph of the long help: its first line starts with "  -".
        let mut option = String::new();
        let mut options = Vec::new();
        for line in help.lines() {
            if line.trim_start().starts_with('-')
                && line.starts_with("  ")
                && !line.starts_with("          ")
            {
                options.push(std::mem::take(&mut option));
            }
            option.push_str(line);
            option.push('\n');
        }
        options.push(option);
        for text in options.iter().skip(1) {
            // the long flag (`-o, --out <OUT>`: `--out`)
            let flag = text
                .split_whitespace()
                .find(|w| w.starts_with("--"))
                .unwrap_or_else(|| text.split_whitespace().next().unwrap_or(""));
            let is_switch = !text.lines().next().unwrap_or("").contains('<');
            if is_switch
                || ["--help", "--version", "--verbose", "--quiet"].contains(&flag)
                || usage.contains(&format!("{flag} "))
            {
                continue;
            }
            assert!(
                text.contains("[default:") || text.contains("Default") || text.contains("default:"),
                "`sitesim {command} --help`: {flag} shows no default:\n{text}"
            );
        }
    }
}

#[test]
fn long_work_is_quiet_off_a_terminal_and_says_what_it_does_with_v() {
    // stderr is a pipe here: no progress bar, no logs by default.
    let quiet = sitesim(&["run", "--users", "300", "--weeks", "8"]);
    assert!(quiet.status.success(), "{}", stderr(&quiet));
    assert_eq!(stderr(&quiet), "", "a pipe gets no progress bar");
    // -v says what runs; -vv adds the progress as log lines and the files written.
    let (_dir, out) = scratch();
    let v = sitesim(&["-v", "run", "--users", "300", "--weeks", "8"]);
    let v = stderr(&v);
    assert!(v.contains("300 users in 1 group, 8 weeks, easy"), "{v}");
    assert!(v.contains("finished in"), "{v}");
    assert!(!v.contains("DEBUG"), "{v}");
    let vv = sitesim(&[
        "-vv",
        "run",
        "--users",
        "300",
        "--weeks",
        "8",
        "--out",
        out.to_str().unwrap(),
    ]);
    let vv = stderr(&vv);
    assert!(
        vv.contains("simulating: simulated day") && vv.contains("(90 %)"),
        "{vv}"
    );
    assert!(vv.contains("writing jobs.csv"), "{vv}");
    // The fair start times and the headroom are simulations too, each with its own progress.
    let more = sitesim(&[
        "-vv",
        "run",
        "--users",
        "100",
        "--weeks",
        "8",
        "--scheduler",
        "creasy",
        "--fairness",
        "--headroom",
    ]);
    let more = stderr(&more);
    for what in [
        "simulating",
        "fair start times",
        "headroom: uncontended machine",
        "headroom: EASY",
    ] {
        assert!(
            more.contains(&format!("{what}: simulated day"))
                && more.contains(&format!("{what}: done in")),
            "no progress of {what}: {more}"
        );
    }
    assert!(
        !vv.contains('\u{2588}'),
        "no bar drawn beside the log lines"
    );
    // Every command says something with -v.
    let kth = common::trace("KTH-SP2-1996-2.1-cln.swf.gz");
    for args in [
        vec!["-vv", "replay", kth.as_str(), "--first-jobs", "20000"],
        vec!["-v", "validate", "--users", "20", "--weeks", "2"],
        vec!["-v", "models"],
        vec!["-v", "schedulers"],
    ] {
        let r = sitesim(&args);
        let log = stderr(&r);
        assert!(
            log.contains("INFO") && log.contains("finished in"),
            "{args:?}: {log}"
        );
        if args[0] == "-vv" {
            assert!(log.contains("replaying: simulated day"), "{log}");
        }
    }
}

#[test]
fn a_fitted_model_directory_brings_its_continue_curve_and_shares() {
    let (dir, _) = scratch();
    // A copy of a fitted directory, as `sitesim fit --out` writes it.
    let kth = workspace().join("models/traces/KTH-SP2-1996-2.1-cln");
    let copy = dir.path().join("kth");
    fs::create_dir(&copy).unwrap();
    for entry in fs::read_dir(&kth).unwrap() {
        let entry = entry.unwrap();
        fs::copy(entry.path(), copy.join(entry.file_name())).unwrap();
    }
    let parameters = fs::read_to_string(copy.join("parameters.csv")).unwrap();
    assert!(
        parameters.starts_with("name,value\ncontinue_a,"),
        "{parameters}"
    );
    let group = |name: &str, models: &str, extra: &str| {
        format!("[[groups]]\nname = \"{name}\"\nusers = 5\nmodels = \"{models}\"\n{extra}")
    };
    let site = format!(
        "[site]\nprocessors = 4000\n[run]\nweeks = 1\n{}{}{}{}",
        group("dir", "kth", ""),
        group("embedded-trace", "embedded:KTH-SP2-1996-2.1-cln", ""),
        group("own", "kth", "day_probability = 0.5\ncontinue_b = 0.1\n"),
        group("wait", "kth", "feedback = \"wait\"\n"),
    ) + &group("paper", "embedded", "");
    fs::write(dir.path().join("site.toml"), site).unwrap();
    let r = sitesim_in(
        dir.path(),
        &["run", "--config", "site.toml", "--out", "out"],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(dir.path().join("out/summary.json")).unwrap())
            .unwrap();
    let groups = summary["site"]["groups"].as_array().expect("site.groups");
    let value = |g: usize, key: &str| groups[g][key].as_f64();
    // KTH's fitted values (models/summary.toml): a = 0.743532, b = 0.025733, day 0.721475,
    // weekday 0.859912.
    for g in [0, 1] {
        assert_eq!(value(g, "continue_a"), Some(0.743532), "{}", groups[g]);
        assert_eq!(value(g, "continue_b"), Some(0.025733));
        assert_eq!(value(g, "day_probability"), Some(0.721475));
        assert_eq!(value(g, "weekday_probability"), Some(0.859912));
    }
    // The population's own values win.
    assert_eq!(value(2, "day_probability"), Some(0.5));
    assert_eq!(value(2, "continue_b"), Some(0.1));
    assert_eq!(value(2, "continue_a"), Some(0.743532));
    // The continue curve is the response model's: another feedback model keeps its own.
    assert_eq!(value(3, "continue_a"), None);
    assert_eq!(value(3, "day_probability"), Some(0.721475));
    // `embedded` is the paper's experiment: the paper's values.
    assert_eq!(value(4, "continue_a"), None);
    assert_eq!(value(4, "day_probability"), Some(0.7));
    // A directory fitted before parameters.csv existed keeps the paper's values.
    fs::remove_file(copy.join("parameters.csv")).unwrap();
    let r = sitesim_in(
        dir.path(),
        &["run", "--config", "site.toml", "--out", "out2"],
    );
    assert!(r.status.success(), "{}", stderr(&r));
    let text = fs::read_to_string(dir.path().join("out2/summary.json")).unwrap();
    let summary: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        summary["site"]["groups"][0]["day_probability"].as_f64(),
        Some(0.7)
    );
}

#[test]
fn completions_man_quiet_short_flags_and_a_version_naming_the_commit() {
    for shell in ["bash", "zsh", "fish"] {
        let r = sitesim(&["completions", shell]);
        assert!(r.status.success(), "{}", stderr(&r));
        assert!(stdout(&r).contains("sitesim"), "{shell}");
    }
    let man = stdout(&sitesim(&["man"]));
    assert!(man.contains(".TH sitesim 1"), "{man}");
    assert!(man.contains("replay"), "the man page lists the subcommands");
    // every page the main page names, written with --out
    let (_pages_dir, pages) = scratch();
    let r = sitesim(&["man", "--out", pages.to_str().unwrap()]);
    assert!(r.status.success(), "{}", stderr(&r));
    for page in [
        "sitesim.1",
        "sitesim-run.1",
        "sitesim-replay.1",
        "sitesim-fit.1",
        "sitesim-sweep.1",
    ] {
        let text = std::fs::read_to_string(pages.join(page)).unwrap_or_default();
        assert!(text.contains(".TH"), "{page} missing or empty");
    }
    let fit = std::fs::read_to_string(pages.join("sitesim-fit.1")).unwrap_or_default();
    assert!(
        fit.contains("site\\-tz"),
        "sitesim-fit.1 lists fit's options"
    );
    let version = stdout(&sitesim(&["--version"]));
    assert!(
        version.starts_with("sitesim 0.")
            && version.contains("commit ")
            && version.contains("models "),
        "{version}"
    );
    // -q: nothing on stdout, files written all the same; short flags for the frequent options
    let (_dir, out) = scratch();
    let o = out.to_str().unwrap();
    let r = sitesim(&["run", "-q", "-u", "10", "-w", "1", "-s", "easy", "-o", o]);
    assert!(r.status.success(), "{}", stderr(&r));
    assert_eq!(stdout(&r), "");
    assert!(out.join("jobs.csv").exists());
    // -vv logs the command line, not a Rust structure
    let r = sitesim(&["-vv", "schedulers"]);
    assert!(
        stderr(&r).contains("sitesim -vv schedulers"),
        "{}",
        stderr(&r)
    );
    assert!(!stderr(&r).contains("Schedulers {") && !stderr(&r).contains("Command::"));
}

#[test]
fn calibrate_picks_the_users_that_reach_a_utilization_and_says_how_to_run_them() {
    let (dir, _) = scratch();
    let found = sitesim(&[
        "calibrate",
        "--utilization",
        "0.5",
        "--users",
        "40",
        "--weeks",
        "2",
        "--seeds",
        "2",
    ]);
    assert!(found.status.success(), "{}", stderr(&found));
    let text = stdout(&found);
    let users: u32 = text
        .lines()
        .find_map(|l| l.strip_prefix("run it with --users "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    let reported: f64 = text
        .lines()
        .find(|l| l.starts_with("picked "))
        .and_then(|l| l.split("utilization ").nth(1))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("{text}"));
    assert!((reported - 0.5).abs() < 0.05, "{text}");
    // the picked number, run with the calibration's seeds (1 and 2), gives the value reported
    let mut values = Vec::new();
    for seed in ["1", "2"] {
        let out = dir.path().join(seed);
        let run = sitesim(&[
            "run",
            "--users",
            &users.to_string(),
            "--weeks",
            "2",
            "--seed",
            seed,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        let summary: serde_json::Value =
            serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
        values.push(summary["summary"]["utilization"].as_f64().unwrap());
    }
    let mean = values.iter().sum::<f64>() / 2.0;
    assert!((mean - reported).abs() < 5e-5, "{mean} {text}");
    // bad targets are named
    let bad = sitesim(&["calibrate", "--utilization", "1.5", "--weeks", "1"]);
    assert!(!bad.status.success());
    assert!(
        stderr(&bad).contains("target utilization = 1.5"),
        "{}",
        stderr(&bad)
    );
    let none = sitesim(&["calibrate", "--weeks", "1"]);
    assert!(!none.status.success());
    assert!(stderr(&none).contains("--utilization"), "{}", stderr(&none));
}
