//! Slurm's scheduler through the binary: the presets on the default site and on replays, a
//! real slurm.conf (`--slurm-conf`, `import-slurm-conf`), `[scheduler.slurm]` keys in
//! population and sweep files, and every new key's bad input refused naming it, with nothing
//! written.

use std::fs;

use crate::common::{
    assert_fails, column, scratch, sitesim, stderr, stdout, table, trace, write_file,
};

const CONF: &str = "\
ClusterName=site
PriorityType=priority/multifactor
PriorityWeightFairshare=10000
PriorityWeightAge=1000
PriorityDecayHalfLife=1-0
SchedulerParameters=bf_max_job_test=50,bf_continue
PartitionName=batch Nodes=ALL Default=YES
";

fn jobs_csv(dir: &std::path::Path) -> String {
    fs::read_to_string(dir.join("jobs.csv")).unwrap()
}

#[test]
fn the_presets_run_the_default_site_and_a_replay() {
    for scheduler in ["slurm", "slurm-site"] {
        let (_dir, out) = scratch();
        let run = sitesim(&[
            "run",
            "--scheduler",
            scheduler,
            "--users",
            "40",
            "--weeks",
            "2",
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(run.status.success(), "{}", stderr(&run));
        let summary = fs::read_to_string(out.join("summary.json")).unwrap();
        assert!(
            summary.contains(&format!("\"scheduler\": \"{scheduler}\"")),
            "{summary}"
        );
        assert!(jobs_csv(&out).lines().count() > 100);
        let (_dir, out) = scratch();
        let replay = sitesim(&[
            "replay",
            &trace("KTH-SP2-1996-2.1-cln.swf.gz"),
            "--first-jobs",
            "3000",
            "--scheduler",
            scheduler,
            "--out",
            out.to_str().unwrap(),
        ]);
        assert!(replay.status.success(), "{}", stderr(&replay));
        assert_eq!(jobs_csv(&out).lines().count(), 3001);
    }
}

#[test]
fn a_slurm_conf_configures_the_model_and_its_import_says_what_it_left_out() {
    let (dir, _) = scratch();
    let conf = write_file(dir.path(), "slurm.conf", CONF.as_bytes());
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let replay = |extra: &[&str]| {
        let out = dir.path().join(format!("out{}", extra.len()));
        let mut args = vec![
            "replay",
            kth.as_str(),
            "--first-jobs",
            "3000",
            "--scheduler",
            "slurm",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let result = sitesim(&args);
        assert!(result.status.success(), "{}", stderr(&result));
        jobs_csv(&out)
    };
    let defaults = replay(&[]);
    let configured = replay(&["--slurm-conf", &conf]);
    assert_ne!(
        defaults, configured,
        "the fair-share weight changed nothing"
    );
    // the imported table, in a population file, runs the same configuration
    let imported = sitesim(&["import-slurm-conf", &conf]);
    assert!(imported.status.success(), "{}", stderr(&imported));
    let text = stdout(&imported);
    for expected in [
        "policy = \"slurm\"",
        "weight_fairshare = 10000",
        "decay_half_life = 86400",
        "bf_max_job_test = 50",
        "line 1: ClusterName is not used by the model",
        "SchedulerParameters bf_continue is not modelled",
        "[[scheduler.slurm.partitions]]\nname = \"batch\"",
    ] {
        assert!(text.contains(expected), "{expected:?} not in {text}");
    }
    let site = format!(
        "[site]\nprocessors = 1152\n[run]\nweeks = 1\n[[groups]]\nname = \"a\"\nusers = 20\n\n{text}"
    );
    let site = write_file(dir.path(), "site.toml", site.as_bytes());
    let out = dir.path().join("site-out");
    let run = sitesim(&["run", "--config", &site, "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    // into a folder (created) as slurm.toml, refused over an earlier one without --force
    let folder = dir.path().join("imported").join("site");
    let folder = folder.to_str().unwrap();
    let into = sitesim(&["import-slurm-conf", &conf, "-o", folder]);
    assert!(into.status.success(), "{}", stderr(&into));
    let written = std::fs::read_to_string(dir.path().join("imported/site/slurm.toml")).unwrap();
    assert_eq!(written, text);
    assert!(!stderr(&into).contains("deprecated"), "{}", stderr(&into));
    let again = sitesim(&["import-slurm-conf", &conf, "-o", folder]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("slurm.toml exists; give --force"),
        "{}",
        stderr(&again)
    );
    let forced = sitesim(&["import-slurm-conf", &conf, "-o", folder, "--force"]);
    assert!(forced.status.success(), "{}", stderr(&forced));
    // a file named as before (a .toml path): written, with a deprecation note
    let file = dir.path().join("scheduler.toml");
    let file = file.to_str().unwrap();
    let old = sitesim(&["import-slurm-conf", &conf, "-o", file]);
    assert!(old.status.success(), "{}", stderr(&old));
    assert!(
        stderr(&old).contains("names a file, which is deprecated"),
        "{}",
        stderr(&old)
    );
    assert_eq!(std::fs::read_to_string(file).unwrap(), text);
    let again = sitesim(&["import-slurm-conf", &conf, "-o", file]);
    assert!(!again.status.success());
    assert!(
        stderr(&again).contains("exists; give --force"),
        "{}",
        stderr(&again)
    );
}

#[test]
fn bad_slurm_keys_are_refused_naming_them() {
    let (dir, _) = scratch();
    let site = |slurm: &str| {
        let text = format!(
            "[site]\nprocessors = 1152\n[scheduler]\npolicy = \"slurm\"\n[scheduler.slurm]\n{slurm}\n[run]\nweeks = 1\n[[groups]]\nname = \"a\"\nusers = 5\n"
        );
        write_file(dir.path(), "bad.toml", text.as_bytes())
    };
    for (slurm, expected) in [
        ("bf_windw = 60", "unknown field `bf_windw`"),
        ("bf_resolution = 0", "scheduler.slurm.bf_resolution = 0"),
        ("bf_interval = 20000", "scheduler.slurm.bf_interval = 20000"),
        ("calc_period = 10", "scheduler.slurm.calc_period = 10"),
        (
            "fairshare = \"fairest\"",
            "scheduler.slurm.fairshare = \"fairest\"",
        ),
        ("weight_age = -1", "weight_age"),
        ("dampening = 0", "dampening = 0"),
        ("max_age = 0", "max_age = 0"),
        ("bf_max_job_test = 0", "bf_max_job_test = 0"),
        ("decay_half_life = -5", "decay_half_life = -5"),
        ("over_time_limit = \"soon\"", "over_time_limit"),
        ("cpus_per_node = 0", "cpus_per_node = 0"),
        ("shares_every = 0", "scheduler.slurm.shares_every = 0"),
        ("bf_max_job_part = -1", "bf_max_job_part"),
        (
            "[[scheduler.slurm.partitions]]\nname = \"a\"\npriority_tier = -1",
            "priority_tier",
        ),
        (
            "[[scheduler.slurm.partitions]]\nname = \"a\"\nswf_partitions = \"x\"",
            "swf_partitions",
        ),
        (
            "[[scheduler.slurm.qos]]\nname = \"q\"\nmax_submit_per_user = 0",
            "scheduler.slurm.qos[0].max_submit_per_user = 0",
        ),
        (
            "[[scheduler.slurm.qos]]\nname = \"q\"\npriority = -5",
            "priority",
        ),
        (
            "[[scheduler.slurm.qos]]\nname = \"q\"\n[[scheduler.slurm.qos]]\nname = \"q\"",
            "scheduler.slurm.qos[1].name = \"q\": a QOS needs a name of its own",
        ),
        (
            "[[scheduler.slurm.tree]]\nname = \"x\"\ngroups = [1.5]",
            "groups",
        ),
        (
            "[[scheduler.slurm.tree]]\nname = \"x\"\nparent = \"y\"",
            "scheduler.slurm.tree[0].parent = \"y\": no such account before it",
        ),
        (
            "[[scheduler.slurm.tree]]\nname = \"root\"",
            "scheduler.slurm.tree[0].name = \"root\"",
        ),
        (
            "[[scheduler.slurm.tree]]\nname = \"x\"\ngroups = [1]\n[[scheduler.slurm.tree]]\nname = \"y\"\ngroups = [1]",
            "scheduler.slurm.tree[1].groups: group 1 is already under account x",
        ),
        (
            "[[scheduler.slurm.tree]]\nname = \"x\"\nshares = \"half\"",
            "scheduler.slurm.tree[0].shares = \"half\"",
        ),
        (
            "[[scheduler.slurm.partitions]]\nname = \"a\"\n[[scheduler.slurm.partitions]]\nname = \"a\"",
            "scheduler.slurm.partitions[1].name = \"a\": a partition needs a name of its own",
        ),
        (
            "[[scheduler.slurm.partitions]]\nname = \"a\"\nprocessors = 0",
            "scheduler.slurm.partitions[0].processors = 0",
        ),
        (
            "[[scheduler.slurm.partitions]]\nname = \"a\"\nmax_time = -60",
            "scheduler.slurm.partitions[0].max_time = -60",
        ),
        (
            "[[scheduler.slurm.partitions]]\nname = \"a\"\nnodes = 4",
            "unknown field `nodes`",
        ),
        (
            "[[scheduler.slurm.partitions]]\nprocessors = 4",
            "missing field `name`",
        ),
        (
            "[[scheduler.slurm.qos]]\nname = \"q\"\nusage_factor = -1.0",
            "scheduler.slurm.qos[0].usage_factor = -1",
        ),
        (
            "[[scheduler.slurm.qos]]\nname = \"q\"\nmax_jobs_per_user = 0",
            "scheduler.slurm.qos[0].max_jobs_per_user = 0",
        ),
        (
            "[[scheduler.slurm.qos]]\nname = \"q\"\ngrp_cpus = 0",
            "scheduler.slurm.qos[0].grp_cpus = 0",
        ),
        (
            "[[scheduler.slurm.qos]]\nname = \"q\"\ngroups = [\"a\"]",
            "groups",
        ),
        ("shares_every = 1.5", "shares_every"),
        (
            "accounts = \"users\"",
            "scheduler.slurm.accounts = \"users\"",
        ),
        (
            "group_shares = { x = 2 }",
            "scheduler.slurm.group_shares.\"x\": expected a group id",
        ),
        ("group_shares = { \"1\" = -2 }", "group_shares"),
        (
            "user_shares = { \"u1\" = 2 }",
            "scheduler.slurm.user_shares.\"u1\": expected a user id",
        ),
        (
            "accounts = \"none\"\ngroup_shares = { \"1\" = 2 }",
            "scheduler.slurm.group_shares: the derived tree has no group accounts",
        ),
        // a tree `sitesim convert` wrote takes the dump's account ids, which a population's
        // groups are not: refused, saying how, rather than left empty
        (
            "[[scheduler.slurm.tree]]\nname = \"x\"\ngroups = [17]",
            "scheduler.slurm.tree: account \"x\" takes group 17, which no population group is",
        ),
        (
            "[[scheduler.slurm.members]]\nuser = 1\ngroup = 9",
            "scheduler.slurm.members: user 1 is in group 9, which no population group is",
        ),
    ] {
        assert_fails(&["run", "--config", &site(slurm)], expected);
    }
    // Slurm's keys under another scheduler
    let easy = write_file(
        dir.path(),
        "easy.toml",
        b"[site]\nprocessors = 1152\n[scheduler]\npolicy = \"easy\"\n[scheduler.slurm]\nbf_interval = 60\n[[groups]]\nname = \"a\"\nusers = 5\n",
    );
    assert_fails(
        &["run", "--config", &easy],
        "apply only to the Slurm schedulers",
    );
    // --slurm-conf: missing, bad value, bad line, under another scheduler
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let missing = dir.path().join("missing.conf");
    let refused = |scheduler: &str, conf: &str, expected: &str| {
        assert_fails(
            &[
                "replay",
                &kth,
                "--scheduler",
                scheduler,
                "--slurm-conf",
                conf,
            ],
            expected,
        )
    };
    refused(
        "slurm",
        missing.to_str().unwrap(),
        "missing.conf: cannot read it",
    );
    for (conf, expected) in [
        (
            "PriorityWeightAge=lots\n",
            "line 1, PriorityWeightAge: `lots` is not a whole number",
        ),
        ("ClusterName=x\nPriorityCalcPeriod=0\n", "calc_period = 0"),
        ("PriorityFavorSmall=maybe\n", "YES or NO"),
        (
            "SchedulerParameters=bf_window=wide\n",
            "`bf_window=wide` needs a whole number",
        ),
        (
            "# comment\nno equals sign\n",
            "line 2: `no equals sign` is not KEY=VALUE",
        ),
        (
            "PartitionName=debug MaxTime=forever\n",
            "line 1, PartitionName=debug MaxTime: `forever` is not a time (minutes",
        ),
    ] {
        let path = write_file(dir.path(), "bad.conf", conf.as_bytes());
        refused("slurm", &path, expected);
        let import = sitesim(&["import-slurm-conf", &path]);
        assert!(!import.status.success());
        assert!(stderr(&import).contains(expected), "{}", stderr(&import));
    }
    // not a slurm.conf: endless, or not text
    refused("slurm", "/dev/zero", "not a slurm.conf");
    let binary = write_file(dir.path(), "binary.conf", &[0xff, 0xfe, 0x00, 0x12]);
    refused("slurm", &binary, "cannot read it");
    let good = write_file(dir.path(), "good.conf", CONF.as_bytes());
    refused("easy", &good, "apply only to the Slurm schedulers");
}

#[test]
fn a_sweep_varies_a_slurm_key() {
    let (dir, out) = scratch();
    let site = write_file(
        dir.path(),
        "site.toml",
        b"[site]\nprocessors = 1152\n[scheduler]\npolicy = \"slurm-site\"\n[run]\nweeks = 1\n[[groups]]\nname = \"a\"\nusers = 20\n",
    );
    let sweep = format!(
        "site = \"{site}\"\nseeds = [1]\n[[axes]]\nname = \"half_life\"\nkey = \"scheduler.slurm.decay_half_life\"\nvalues = [3600, 1209600]\n"
    );
    let sweep = write_file(dir.path(), "sweep.toml", sweep.as_bytes());
    let result = sitesim(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    assert!(result.status.success(), "{}", stderr(&result));
    let results = fs::read_to_string(out.join("results.csv")).unwrap();
    assert!(results.contains("half_life"), "{results}");
    // the share measures have a value for each configuration
    let (h, rows) = table(&out.join("results.csv"));
    let (metric, mean) = (column(&h, "metric"), column(&h, "mean"));
    for name in ["slurm_fairness_index", "slurm_share_error"] {
        let values: Vec<f64> = rows
            .iter()
            .filter(|r| r[metric] == name)
            .map(|r| r[mean].parse().unwrap())
            .collect();
        assert_eq!(values.len(), 2, "{name}");
        assert!(
            values.iter().all(|v| (0.0..=1.0).contains(v)),
            "{name}: {values:?}"
        );
    }
}

#[test]
fn a_slurm_run_records_priorities_pending_reasons_and_shares() {
    // the documented site's weights, two groups: every job's priority is the truncated
    // weighted sum of its factors, its wait splits into the two pending reasons, and the
    // samples of the tree come once a day
    let (dir, out) = scratch();
    let site = write_file(
        dir.path(),
        "site.toml",
        b"[site]\nprocessors = 1152\n[scheduler]\npolicy = \"slurm-site\"\n[run]\nweeks = 1\n[[groups]]\nname = \"a\"\nusers = 15\n[[groups]]\nname = \"b\"\nusers = 15\n",
    );
    let run = sitesim(&["run", "--config", &site, "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (h, jobs) = table(&out.join("jobs.csv"));
    let at = |name: &str| column(&h, name);
    let number = |row: &[String], name: &str| -> f64 { row[at(name)].parse().unwrap() };
    let mut accounts = std::collections::BTreeSet::new();
    let mut waited_for_resources = 0.0;
    for job in &jobs {
        let weighted = 1000.0 * number(job, "age_factor")
            + 10_000.0 * number(job, "fairshare_factor")
            + 1000.0 * number(job, "job_size_factor")
            + 1000.0 * number(job, "partition_factor");
        assert_eq!(
            number(job, "priority"),
            weighted.max(1.0).trunc(),
            "{job:?}"
        );
        assert_eq!(
            number(job, "pending_resources") + number(job, "pending_priority"),
            number(job, "wait"),
            "{job:?}"
        );
        waited_for_resources += number(job, "pending_resources");
        // group a's jobs run under group1, b's under group2
        let expected = if job[at("group")] == "a" {
            "group1"
        } else {
            "group2"
        };
        assert_eq!(job[at("account")], expected);
        accounts.insert(job[at("account")].clone());
    }
    assert_eq!(accounts.len(), 2);
    assert!(waited_for_resources > 0.0, "no job waited for resources");
    // shares.csv: root, two accounts and their users at each daily sample
    let (sh, shares) = table(&out.join("shares.csv"));
    let times: std::collections::BTreeSet<i64> = shares
        .iter()
        .map(|r| r[column(&sh, "time")].parse().unwrap())
        .collect();
    assert!(times.len() >= 7, "{times:?}");
    assert!(
        times
            .iter()
            .zip(times.iter().skip(1))
            .all(|(a, b)| b - a >= 86_400)
    );
    for row in shares.iter().filter(|r| !r[column(&sh, "user")].is_empty()) {
        let fs: f64 = row[column(&sh, "fairshare")].parse().unwrap();
        assert!((0.0..=1.0).contains(&fs), "{row:?}");
    }
    // summary.json's slurm section
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let slurm = &summary["slurm"];
    assert_eq!(slurm["users"], 30, "{slurm}");
    let jobs_by_account: u64 = ["group1", "group2"]
        .iter()
        .map(|a| slurm["accounts"][a]["jobs"].as_u64().unwrap())
        .sum();
    assert_eq!(jobs_by_account, jobs.len() as u64);
    let index = slurm["fairness_index"].as_f64().unwrap();
    assert!(index > 0.0 && index <= 1.0, "{slurm}");
    // under EASY neither the columns nor shares.csv nor the section exist
    let (_easy_dir, easy) = scratch();
    let run = sitesim(&[
        "run",
        "--config",
        &site,
        "--scheduler",
        "easy",
        "--out",
        easy.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", stderr(&run));
    assert!(!easy.join("shares.csv").exists());
    assert!(!jobs_csv(&easy).lines().next().unwrap().contains("priority"));
    assert!(
        !fs::read_to_string(easy.join("summary.json"))
            .unwrap()
            .contains("\"slurm\"")
    );
}

#[test]
fn group_shares_change_who_fair_share_favours() {
    let (dir, _) = scratch();
    let site = |extra: &str| {
        let text = format!(
            "[site]\nprocessors = 1152\n[scheduler]\npolicy = \"slurm\"\n[scheduler.slurm]\nweight_fairshare = 10000\n{extra}\n[run]\nweeks = 2\n[[groups]]\nname = \"a\"\nusers = 30\n[[groups]]\nname = \"b\"\nusers = 30\n"
        );
        write_file(
            dir.path(),
            &format!("site{}.toml", extra.len()),
            text.as_bytes(),
        )
    };
    let jobs = |config: &str| {
        let (_dir, out) = scratch();
        let run = sitesim(&["run", "--config", config, "--out", out.to_str().unwrap()]);
        assert!(run.status.success(), "{}", stderr(&run));
        jobs_csv(&out)
    };
    let equal = jobs(&site(""));
    let favoured = jobs(&site(
        "group_shares = { \"1\" = 20 }\nuser_shares = { \"3\" = 5 }",
    ));
    assert_ne!(equal, favoured, "the shares changed no start");
}

#[test]
fn partitions_and_qos_route_hold_and_are_recorded() {
    // group a's users run in a partition of 64 processors at tier 2 under a QOS that lets each
    // run one job at a time; group b's everywhere, under `normal`
    let (dir, out) = scratch();
    let site = write_file(
        dir.path(),
        "site.toml",
        b"[site]\nprocessors = 1152\n[scheduler]\npolicy = \"slurm\"\n[scheduler.slurm]\nweight_qos = 1000\n[[scheduler.slurm.partitions]]\nname = \"small\"\nprocessors = 64\npriority_tier = 2\ngroups = [1]\n[[scheduler.slurm.partitions]]\nname = \"batch\"\n[[scheduler.slurm.qos]]\nname = \"one\"\npriority = 10\nmax_jobs_per_user = 1\ngroups = [1]\n[[scheduler.slurm.qos]]\nname = \"normal\"\n[run]\nweeks = 1\n[[groups]]\nname = \"a\"\nusers = 10\n[[groups]]\nname = \"b\"\nusers = 20\n",
    );
    let run = sitesim(&["run", "--config", &site, "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (h, jobs) = table(&out.join("jobs.csv"));
    let at = |name: &str| column(&h, name);
    let number = |row: &[String], name: &str| -> i64 { row[at(name)].parse().unwrap() };
    let mut events: Vec<(i64, i64, usize)> = Vec::new(); // (time, +/- processors, job)
    for (i, job) in jobs.iter().enumerate() {
        let a = job[at("group")] == "a";
        // jobs wider than `small` go to the next partition that takes them
        let small = a && number(job, "processors") <= 64;
        assert_eq!(
            job[at("partition")],
            if small { "small" } else { "batch" },
            "{job:?}"
        );
        assert_eq!(job[at("qos")], if a { "one" } else { "normal" }, "{job:?}");
        assert_eq!(
            job[at("qos_factor")],
            if a { "1.0" } else { "0.0" },
            "{job:?}"
        );
        assert_eq!(
            number(job, "pending_resources")
                + number(job, "pending_limits")
                + number(job, "pending_priority"),
            number(job, "wait")
        );
        if small {
            events.push((number(job, "start"), number(job, "processors"), i));
            events.push((number(job, "end"), -number(job, "processors"), i));
        }
    }
    // the small partition never holds more than 64 processors, and each of group a's users
    // runs one job at a time
    events.sort();
    let mut held = 0;
    for (t, delta, _) in &events {
        held += delta;
        assert!(held <= 64, "{held} processors in `small` at {t}");
    }
    let mut by_user: std::collections::BTreeMap<&str, Vec<(i64, i64)>> = Default::default();
    for job in jobs.iter().filter(|j| j[at("group")] == "a") {
        by_user
            .entry(&job[at("user")])
            .or_default()
            .push((number(job, "start"), number(job, "end")));
    }
    for (user, mut runs) in by_user {
        runs.sort();
        assert!(
            runs.windows(2).all(|w| w[1].0 >= w[0].1),
            "user {user} ran two at once"
        );
    }
    let held_by_limits: i64 = jobs.iter().map(|j| number(j, "pending_limits")).sum();
    assert!(held_by_limits > 0, "no job was held by its QOS");
    // summary.json: waits by partition and QOS
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let slurm = &summary["slurm"];
    let jobs_in = |kind: &str, name: &str| slurm[kind][name]["jobs"].as_u64().unwrap();
    assert_eq!(
        jobs_in("partitions", "small") + jobs_in("partitions", "batch"),
        jobs.len() as u64
    );
    assert_eq!(
        jobs_in("qos", "one") + jobs_in("qos", "normal"),
        jobs.len() as u64
    );
}

#[test]
fn a_slurm_conf_brings_its_partitions() {
    // a replay of KTH-SP2 with a debug partition of 16 nodes, 30 minutes, tier 2: the short
    // jobs go there and jump the queue
    let (dir, out) = scratch();
    let conf = write_file(
        dir.path(),
        "slurm.conf",
        b"NodeName=n[1-100] CPUs=1\nPartitionName=debug Nodes=n[1-16] MaxTime=30 PriorityTier=2\nPartitionName=batch Nodes=ALL Default=YES\n",
    );
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let result = sitesim(&[
        "replay",
        &kth,
        "--scheduler",
        "slurm",
        "--slurm-conf",
        &conf,
        "--first-jobs",
        "2000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (h, jobs) = table(&out.join("jobs.csv"));
    let (partition, estimate, processors) = (
        column(&h, "partition"),
        column(&h, "estimate"),
        column(&h, "processors"),
    );
    // the default partition comes first and takes every job (it spans the machine, with no
    // MaxTime): the debug partition gets none
    assert!(jobs.iter().all(|j| j[partition] == "batch"));
    // with debug first, the short narrow jobs go there
    let conf = write_file(
        dir.path(),
        "slurm2.conf",
        b"NodeName=n[1-100] CPUs=1\nPartitionName=debug Nodes=n[1-16] MaxTime=30 PriorityTier=2\nPartitionName=batch Nodes=ALL\n",
    );
    let (_dir2, out2) = scratch();
    let result = sitesim(&[
        "replay",
        &kth,
        "--scheduler",
        "slurm",
        "--slurm-conf",
        &conf,
        "--first-jobs",
        "2000",
        "--out",
        out2.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (_, jobs) = table(&out2.join("jobs.csv"));
    for job in &jobs {
        let short = job[estimate].parse::<i64>().unwrap() <= 1800
            && job[processors].parse::<u32>().unwrap() <= 16;
        assert_eq!(
            job[partition],
            if short { "debug" } else { "batch" },
            "{job:?}"
        );
    }
    assert!(jobs.iter().any(|j| j[partition] == "debug"));
}

#[test]
fn a_site_tree_of_named_accounts_runs_its_groups_under_them() {
    // physics (60 shares) with theory under it (20), chemistry (40): group a under theory,
    // b under chemistry, c derived (group3)
    let (dir, out) = scratch();
    let site = write_file(
        dir.path(),
        "site.toml",
        b"[site]\nprocessors = 1152\n[scheduler]\npolicy = \"slurm-site\"\n[[scheduler.slurm.tree]]\nname = \"physics\"\nshares = 60\n[[scheduler.slurm.tree]]\nname = \"theory\"\nparent = \"physics\"\nshares = 20\ngroups = [1]\n[[scheduler.slurm.tree]]\nname = \"chemistry\"\nshares = 40\ngroups = [2]\n[run]\nweeks = 1\n[[groups]]\nname = \"a\"\nusers = 5\n[[groups]]\nname = \"b\"\nusers = 5\n[[groups]]\nname = \"c\"\nusers = 5\n",
    );
    let run = sitesim(&["run", "--config", &site, "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (h, jobs) = table(&out.join("jobs.csv"));
    let (group, account) = (column(&h, "group"), column(&h, "account"));
    for job in &jobs {
        let expected = match job[group].as_str() {
            "a" => "theory",
            "b" => "chemistry",
            _ => "group3",
        };
        assert_eq!(job[account], expected, "{job:?}");
    }
    // shares.csv: theory's users under theory, theory under physics with its 20 shares
    let (sh, shares) = table(&out.join("shares.csv"));
    let (acc, user, raw) = (
        column(&sh, "account"),
        column(&sh, "user"),
        column(&sh, "raw_shares"),
    );
    assert!(
        shares
            .iter()
            .any(|r| r[acc] == "theory" && r[user].is_empty() && r[raw] == "20")
    );
    assert!(
        shares
            .iter()
            .any(|r| r[acc] == "theory" && !r[user].is_empty())
    );
}

/// The most processors the rows of jobs.csv (`jobs`, columns `h`) hold at once.
fn peak_processors(h: &[String], jobs: &[Vec<String>]) -> i64 {
    let number = |row: &[String], name: &str| -> i64 { row[column(h, name)].parse().unwrap() };
    let mut events: Vec<(i64, i64)> = Vec::new();
    for job in jobs {
        events.push((number(job, "start"), number(job, "processors")));
        events.push((number(job, "end"), -number(job, "processors")));
    }
    events.sort(); // ends before starts at the same second
    let (mut held, mut peak) = (0, 0);
    for (_, delta) in events {
        held += delta;
        peak = peak.max(held);
    }
    peak
}

#[test]
fn jobs_a_partition_or_qos_can_never_allow_are_held_and_reported() {
    // issue 41: a 64-processor partition ran 775 processors at once. KTH-SP2's machine has 100
    // processors; the slurm.conf's only partition has 8 nodes of 8 CPUs: its jobs wider than
    // 64 never start (Slurm: pending with reason PartitionConfig), the run ends normally and
    // reports them, and the partition never holds more than 64 processors
    let (dir, out) = scratch();
    let conf = write_file(
        dir.path(),
        "slurm.conf",
        b"NodeName=n[1-8] CPUs=8\nPartitionName=small Nodes=n[1-8] Default=YES\n",
    );
    let result = sitesim(&[
        "replay",
        &trace("KTH-SP2-1996-2.1-cln.swf.gz"),
        "--scheduler",
        "slurm",
        "--slurm-conf",
        &conf,
        "--first-jobs",
        "3000",
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let (h, jobs) = table(&out.join("jobs.csv"));
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let slurm = &summary["slurm"];
    let held = slurm["never_started"]["PartitionConfig"].as_u64().unwrap();
    assert!(held > 0, "{slurm}");
    assert_eq!(held + jobs.len() as u64, 3000, "{slurm}");
    assert_eq!(slurm["partitions"]["small"]["never_started"], held);
    assert!(
        jobs.iter()
            .all(|j| j[column(&h, "processors")].parse::<u32>().unwrap() <= 64)
    );
    assert!(peak_processors(&h, &jobs) <= 64);
    let console = stdout(&result);
    assert!(
        console.contains(&format!("held         {held} jobs never started")),
        "{console}"
    );
    // a QOS of one CPU (GrpTRES=cpu=1) in a site run: only one-processor jobs run, one at a
    // time; the wider ones never start (reason QOSGrpCpuLimit) and the run still ends
    let site = write_file(
        dir.path(),
        "site.toml",
        b"[site]\nprocessors = 1152\n[scheduler]\npolicy = \"slurm\"\n[[scheduler.slurm.qos]]\nname = \"tiny\"\ngrp_cpus = 1\n[run]\nweeks = 1\n[[groups]]\nname = \"a\"\nusers = 30\n",
    );
    let (_dir, out) = scratch();
    let run = sitesim(&["run", "--config", &site, "--out", out.to_str().unwrap()]);
    assert!(run.status.success(), "{}", stderr(&run));
    let (h, jobs) = table(&out.join("jobs.csv"));
    assert!(!jobs.is_empty());
    assert!(jobs.iter().all(|j| j[column(&h, "processors")] == "1"));
    assert!(peak_processors(&h, &jobs) <= 1);
    let summary: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let held = summary["slurm"]["never_started"]["QOSGrpCpuLimit"]
        .as_u64()
        .unwrap();
    assert!(held > 0, "{}", summary["slurm"]);
    assert_eq!(summary["slurm"]["qos"]["tiny"]["never_started"], held);
}

#[test]
fn import_slurm_conf_follows_include_reads_a_bom_and_checks_nodes_and_times() {
    let (dir, _) = scratch();
    let d = dir.path();
    fs::create_dir_all(d.join("etc")).unwrap();
    write_file(
        &d.join("etc"),
        "nodes.conf",
        b"NodeName=n[1-4] CPUs=16\nPriorityWeightAge=5\n",
    );
    write_file(
        &d.join("etc"),
        "parts-alpha.conf",
        b"PartitionName=small Nodes=n[1-2] MaxTime=1-00:00:00\nOverSubscribe=NO\n",
    );
    // a byte-order mark before the first key, Include relative to the file's directory and
    // with %c (the ClusterName, lower case), the key given again in an included file
    let mut main = vec![0xef, 0xbb, 0xbf];
    main.extend_from_slice(
        b"PriorityWeightAge=1000\nClusterName=Alpha\nInclude nodes.conf\ninclude parts-%c.conf\n",
    );
    let conf = write_file(&d.join("etc"), "slurm.conf", &main);
    let import = sitesim(&["import-slurm-conf", &conf]);
    assert!(import.status.success(), "{}", stderr(&import));
    let text = stdout(&import);
    for expected in [
        "weight_age = 5",
        "line 1: PriorityWeightAge is given again at ",
        "nodes.conf, line 2; the later value is used",
        "name = \"small\"\nprocessors = 32\nmax_time = 86400",
        "parts-alpha.conf, line 2: OverSubscribe is not used by the model",
    ] {
        assert!(text.contains(expected), "{expected:?} not in {text}");
    }
    assert!(!text.contains('\u{feff}'), "{text}");
    // refused, naming the file, line and key
    for (name, conf, expected) in [
        (
            "missing.conf",
            "Include none.conf\n",
            "missing.conf, line 1, Include none.conf:",
        ),
        (
            "self.conf",
            "Include self.conf\n",
            "more than 16 nested Includes",
        ),
        (
            "glob.conf",
            "Include conf.d/*.conf\n",
            "a wildcard Include is not read",
        ),
        (
            "nodes.conf",
            "NodeName=n[1-4] CPUs=32\nPartitionName=p Nodes=n[1-8]\n",
            "line 2, PartitionName=p Nodes: node n5 is defined by no NodeName line",
        ),
        (
            "time.conf",
            "PartitionName=p MaxTime=1-99:99:99\n",
            "line 1, PartitionName=p MaxTime: `1-99:99:99` is not a time",
        ),
    ] {
        let path = write_file(d, name, conf.as_bytes());
        let import = sitesim(&["import-slurm-conf", &path]);
        assert!(!import.status.success(), "{name}");
        assert!(
            stderr(&import).contains(expected),
            "{name}: {}",
            stderr(&import)
        );
    }
}

#[test]
fn headroom_gives_the_share_measures_of_the_uncontended_machine() {
    // the share error of the same users where nothing waits: the baseline the scheduler's own
    // share error is read against (null without --headroom)
    let summary = |extra: &[&str]| -> serde_json::Value {
        let (_dir, out) = scratch();
        let mut args = vec![
            "run",
            "--scheduler",
            "slurm",
            "--users",
            "30",
            "--weeks",
            "2",
        ];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["--out", out.to_str().unwrap()]);
        let run = sitesim(&args);
        assert!(run.status.success(), "{}", stderr(&run));
        serde_json::from_str(&fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
    };
    let plain = summary(&[]);
    assert!(
        plain["slurm"]["share_error_uncontended"].is_null(),
        "{}",
        plain["slurm"]
    );
    let measured = summary(&["--headroom"]);
    let slurm = &measured["slurm"];
    let uncontended = slurm["share_error_uncontended"].as_f64().unwrap();
    let index = slurm["fairness_index_uncontended"].as_f64().unwrap();
    assert!(uncontended > 0.0 && uncontended < 1.0, "{slurm}");
    assert!(index > 0.0 && index <= 1.0, "{slurm}");
    // the run itself is the same with or without the baseline
    assert_eq!(slurm["share_error"], plain["slurm"]["share_error"]);
}

#[test]
fn a_dump_replays_in_its_own_partitions_qos_and_tree() {
    // Two partitions over the same nodes (long, the default, listed first; debug), two QOS and
    // two accounts of unequal shares. The one-line replay puts each job in the partition and
    // QOS the dump names; with --assoc and --qos the accounts and QOS carry sacctmgr's shares,
    // priorities and limits.
    let (dir, _) = scratch();
    let conf = write_file(
        dir.path(),
        "slurm.conf",
        b"NodeName=n[1-4] CPUs=4\nPartitionName=long Nodes=ALL Default=YES\nPartitionName=debug Nodes=ALL MaxTime=30\n",
    );
    let mut dump = String::from(
        "JobID|JobIDRaw|User|Account|Partition|QOS|Submit|Eligible|Start|End|ElapsedRaw|TimelimitRaw|NCPUS|NNodes|ReqCPUS|ReqNodes|State\n",
    );
    let jobs = [
        // (id, user, account, partition, qos, submit minute, CPUs, minutes)
        (10, "alice", "physics", "long", "normal", 0, 16, 30),
        (11, "bob", "chemistry", "debug", "high", 1, 4, 10),
        (12, "alice", "physics", "debug", "high", 1, 4, 10),
        (13, "bob", "chemistry", "long", "normal", 2, 8, 20),
        (14, "alice", "physics", "long", "high", 3, 2, 5),
        (15, "bob", "chemistry", "debug", "normal", 3, 2, 5),
    ];
    for (id, user, account, partition, qos, minute, cpus, minutes) in jobs {
        let at = |m: i64| format!("2024-01-11T08:{m:02}:00");
        dump += &format!(
            "{id}|{id}|{user}|{account}|{partition}|{qos}|{s}|{s}|{s}|{e}|{secs}|{minutes}|{cpus}|1|{cpus}|1|COMPLETED\n",
            s = at(minute),
            e = at(minute + minutes),
            secs = minutes * 60,
        );
    }
    let dump = write_file(dir.path(), "dump.txt", dump.as_bytes());
    let assoc = write_file(
        dir.path(),
        "assoc.txt",
        b"Cluster|Account|Par Name|User|Share\nc|root||||1\nc|physics|root||60\nc|chemistry|root||40\nc|physics||alice|3\nc|chemistry||bob|1\n",
    );
    let qos = write_file(
        dir.path(),
        "qos.txt",
        b"Name|Priority|UsageFactor|GrpTRES|MaxTRES|MaxTRESPU|MaxJobsPU|Flags\nnormal|0|1.000000|||||\nhigh|100|1.000000||||1|\n",
    );
    let replay = |extra: &[&str]| {
        let (_keep, out) = scratch();
        let mut args = vec![
            "-q",
            "replay",
            &dump,
            "--scheduler",
            "slurm",
            "--slurm-conf",
            &conf,
        ];
        args.extend_from_slice(extra);
        let out_arg = out.display().to_string();
        args.extend_from_slice(&["--out", &out_arg]);
        let result = sitesim(&args);
        assert!(result.status.success(), "{}", stderr(&result));
        let (h, rows) = table(&out.join("jobs.csv"));
        let (_, shares) = table(&out.join("shares.csv"));
        (_keep, h, rows, shares)
    };
    for extra in [&[][..], &["--assoc", &assoc, "--qos", &qos][..]] {
        let (_keep, h, rows, shares) = replay(extra);
        let col = |name: &str| column(&h, name);
        assert_eq!(rows.len(), jobs.len());
        for (id, _, account, partition, qos_name, ..) in jobs {
            let row = rows
                .iter()
                .find(|r| r[col("job_id")] == id.to_string())
                .unwrap_or_else(|| panic!("job {id} not in jobs.csv"));
            assert_eq!(row[col("partition")], partition, "{extra:?} job {id}");
            assert_eq!(row[col("qos")], qos_name, "{extra:?} job {id}");
            assert_eq!(row[col("account")], account, "{extra:?} job {id}");
            // QOS high allows a user one running job (MaxJobsPU=1) in the QOS file: alice's
            // job 14 waits for her job 12 to end; without the file no limit holds a job
            let held: i64 = row[col("pending_limits")].parse().unwrap();
            let limited = id == 14 && !extra.is_empty();
            assert_eq!(held > 0, limited, "{extra:?} job {id}: held {held} s");
        }
        // shares.csv at the first calculation: account,user,raw_shares
        let raw = |account: &str, user: &str| -> String {
            shares
                .iter()
                .find(|r| r[1] == account && r[2] == user)
                .map(|r| r[3].clone())
                .unwrap_or_else(|| panic!("no {account}/{user} in shares.csv: {shares:?}"))
        };
        let (physics, chemistry) = if extra.is_empty() {
            ("1", "1")
        } else {
            ("60", "40")
        };
        assert_eq!(raw("physics", ""), physics, "{extra:?}");
        assert_eq!(raw("chemistry", ""), chemistry, "{extra:?}");
        if !extra.is_empty() {
            // alice is the tree's first user (user1), bob its second
            assert_eq!(raw("physics", "user1"), "3");
            assert_eq!(raw("chemistry", "user2"), "1");
        }
    }
    // the tree and QOS files name a dump's users, accounts and QOS: an SWF trace is refused
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let result = sitesim(&["replay", &kth, "--scheduler", "slurm", "--qos", &qos]);
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("is not a Slurm accounting dump"),
        "{}",
        stderr(&result)
    );
    // and under another scheduler they do not apply
    let result = sitesim(&["replay", &dump, "--scheduler", "easy", "--assoc", &assoc]);
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("configure the Slurm schedulers"),
        "{}",
        stderr(&result)
    );
}
