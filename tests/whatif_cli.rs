//! End-to-end tests of `sitesim whatif`: the what-if report on the fixture dump
//! (tests/fixtures/slurm-gpu/run1) with the two configurations of tests/fixtures/whatif.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use crate::common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{scratch, sitesim, stderr, stdout, workspace, write_file};

fn fixture(path: &str) -> String {
    workspace()
        .join("tests/fixtures")
        .join(path)
        .display()
        .to_string()
}

/// The fixture dump and tree, with the account `biology` renamed to a name full of markup.
fn marked_up_inputs(dir: &Path) -> (String, String) {
    let rename = |text: String| text.replace("biology", "bio<script>&'\"");
    let dump = fs::read_to_string(fixture("slurm-gpu/run1/sacct.txt")).unwrap();
    let assoc = fs::read_to_string(fixture("slurm-gpu/run1/assoc.txt")).unwrap();
    (
        write_file(dir, "sacct.txt", rename(dump).as_bytes()),
        write_file(dir, "assoc.txt", rename(assoc).as_bytes()),
    )
}

fn whatif(dump: &str, assoc: &str, out: &Path, extra: &[&str]) -> std::process::Output {
    let current = fixture("whatif/current.conf");
    let proposed = fixture("whatif/proposed.conf");
    let mut args = vec![
        "whatif",
        "--sacct",
        dump,
        "--assoc",
        assoc,
        "--slurm-conf",
        &current,
        "--slurm-conf",
        &proposed,
        "--seeds",
        "3",
        "--weeks",
        "1",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    sitesim(&args)
}

#[test]
fn whatif_writes_one_self_contained_page_with_tables_figures_and_a_verdict() {
    let (dir, _) = scratch();
    let (dump, assoc) = marked_up_inputs(dir.path());
    let out = dir.path().join("report.html");
    let result = whatif(&dump, &assoc, &out, &[]);
    assert!(result.status.success(), "{}", stderr(&result));
    assert!(
        stdout(&result).contains("In the closed loop"),
        "{}",
        stdout(&result)
    );
    // one file, nothing beside it (no figure files, no temporary file left)
    let mut names: Vec<PathBuf> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            dir.path().join("assoc.txt"),
            dir.path().join("report.html"),
            dir.path().join("sacct.txt")
        ]
    );
    let page = fs::read_to_string(&out).unwrap();
    assert!(page.starts_with("<!DOCTYPE html>"));
    assert!(page.trim_end().ends_with("</html>"));
    // nothing fetched from anywhere: no script, no link, no network reference in src/href
    for forbidden in [
        "<script",
        "<link",
        "src=\"http",
        "href=\"http",
        "url(http",
        "@import",
    ] {
        assert!(!page.contains(forbidden), "the page holds {forbidden}");
    }
    for attr in ["src=", "href="] {
        assert!(
            !page.contains(attr),
            "the page refers to another resource: {attr}"
        );
    }
    // the account with markup in its name is escaped everywhere
    assert!(
        page.contains("bio&lt;script&gt;&amp;&#39;&quot;"),
        "no escaped account name"
    );
    assert!(!page.contains("bio<script>"));
    // the sections
    for expected in [
        "<h2 id=\"verdict\">Verdict</h2>",
        "In the closed loop (simulated users who react to their waits, 3 paired seeds)",
        "Replaying the dump&#39;s own jobs (open loop, 3 paired replicas)",
        "Caveats",
        "The open loop (replay) cannot change the submitted work",
        "Open loop (replay of the dump)",
        "Closed loop (simulated users)",
        "difference [95 % CI]",
        "<h3>By account</h3>",
        "<h3>By partition</h3>",
        "<h3>By QOS</h3>",
        "<td>gpu</td>",
        "Only 3 seeds",
        "SHA-256",
        "the dump&#39;s distinct users",
        // with --assoc, the closed loop's users run in the tree's accounts
        "dealt over the association tree&#39;s accounts",
    ] {
        assert!(page.contains(expected), "the page lacks {expected:?}");
    }
    // three inline figures, each with a size
    assert_eq!(page.matches("<svg ").count(), 3);
    for svg in page.split("<svg ").skip(1) {
        let head = &svg[..svg.find('>').unwrap()];
        assert!(
            head.contains("width=\"") && head.contains("height=\""),
            "{head}"
        );
    }
    // same inputs, same page (the seeds fix everything)
    let again = dir.path().join("again.html");
    let result = whatif(&dump, &assoc, &again, &[]);
    assert!(result.status.success(), "{}", stderr(&result));
    assert_eq!(fs::read_to_string(&again).unwrap(), page);
}

#[test]
fn whatif_names_bad_input_and_keeps_an_existing_page() {
    let (dir, _) = scratch();
    let dump = fixture("slurm-gpu/run1/sacct.txt");
    let assoc = fixture("slurm-gpu/run1/assoc.txt");
    let out = dir.path().join("report.html");
    let fails = |args: &[&str], expected: &str| {
        let result = sitesim(args);
        let message = stderr(&result);
        assert!(!result.status.success(), "{args:?} succeeded");
        assert!(message.contains(expected), "{args:?}: {message}");
        assert!(!message.contains("panicked"), "{message}");
    };
    let current = fixture("whatif/current.conf");
    let out_text = out.to_str().unwrap();
    // one --slurm-conf
    fails(
        &[
            "whatif",
            "--sacct",
            &dump,
            "--slurm-conf",
            &current,
            "-o",
            out_text,
        ],
        "--slurm-conf: 1 given; give exactly two",
    );
    assert!(!out.exists());
    // a missing dump, named
    let missing = dir.path().join("no-such-dump.txt");
    let missing_text = missing.to_str().unwrap();
    fails(
        &[
            "whatif",
            "--sacct",
            missing_text,
            "--slurm-conf",
            &current,
            "--slurm-conf",
            &current,
            "-o",
            out_text,
        ],
        "no-such-dump.txt",
    );
    assert!(!out.exists());
    // a missing slurm.conf, named
    fails(
        &[
            "whatif",
            "--sacct",
            &dump,
            "--slurm-conf",
            &current,
            "--slurm-conf",
            "no-such.conf",
            "-o",
            out_text,
        ],
        "no-such.conf",
    );
    assert!(!out.exists());
    // a bad line in a slurm.conf, named with its line
    let bad = write_file(dir.path(), "bad.conf", b"PriorityWeightAge=lots\n");
    fails(
        &[
            "whatif",
            "--sacct",
            &dump,
            "--slurm-conf",
            &current,
            "--slurm-conf",
            &bad,
            "-o",
            out_text,
        ],
        "bad.conf",
    );
    assert!(!out.exists());
    // an existing page is refused without --force, and left as it was
    fs::write(&out, "an earlier report").unwrap();
    let result = whatif(&dump, &assoc, &out, &[]);
    assert!(!result.status.success());
    assert!(stderr(&result).contains("--force"), "{}", stderr(&result));
    assert_eq!(fs::read_to_string(&out).unwrap(), "an earlier report");
    // with --force it is replaced
    let result = whatif(&dump, &assoc, &out, &["--force"]);
    assert!(result.status.success(), "{}", stderr(&result));
    assert!(
        fs::read_to_string(&out)
            .unwrap()
            .starts_with("<!DOCTYPE html>")
    );
    // nothing else left in the folder
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 2);
}

#[test]
fn whatif_takes_the_machine_size_and_says_where_it_came_from() {
    let (dir, _) = scratch();
    let dump = fixture("slurm-gpu/run1/sacct.txt");
    let assoc = fixture("slurm-gpu/run1/assoc.txt");
    // the configurations without their nodes: the machine is a processor count
    let without_nodes = |name: &str| {
        let text = fs::read_to_string(fixture(&format!("whatif/{name}"))).unwrap();
        let kept: Vec<&str> = text
            .lines()
            .filter(|l| !l.starts_with("NodeName") && !l.starts_with("PartitionName"))
            .collect();
        write_file(dir.path(), name, kept.join("\n").as_bytes())
    };
    let (current, proposed) = (
        without_nodes("current.conf"),
        without_nodes("proposed.conf"),
    );
    let run = |out: &Path, extra: &[&str]| {
        let mut args = vec![
            "whatif",
            "--sacct",
            &dump,
            "--assoc",
            &assoc,
            "--slurm-conf",
            &current,
            "--slurm-conf",
            &proposed,
            "--seeds",
            "2",
            "--weeks",
            "1",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        sitesim(&args)
    };
    let out = dir.path().join("report.html");
    let result = run(&out, &["--processors", "32", "--users", "3"]);
    assert!(result.status.success(), "{}", stderr(&result));
    let page = fs::read_to_string(&out).unwrap();
    assert!(
        page.contains("32 processors (--processors)"),
        "no machine size"
    );
    assert!(page.contains("3 (--users)"), "no users given");
    assert!(!page.contains("sacct does not record the machine"));
    // without it, the page says the size is a guess
    let guessed = dir.path().join("guessed.html");
    let result = run(&guessed, &[]);
    assert!(result.status.success(), "{}", stderr(&result));
    let page = fs::read_to_string(&guessed).unwrap();
    assert!(page.contains("sacct does not record the machine"));
    assert!(page.contains("--processors sets it"));
    // with the conf's nodes, --processors is refused (the nodes are the machine)
    let result = whatif(
        &dump,
        &assoc,
        &dir.path().join("nodes.html"),
        &["--processors", "32"],
    );
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("current.conf"),
        "{}",
        stderr(&result)
    );
    // zero seeds is refused by the flag's range
    let result = whatif(
        &dump,
        &assoc,
        &dir.path().join("zero.html"),
        &["--seeds", "0"],
    );
    assert!(!result.status.success());
    assert!(stderr(&result).contains("--seeds"), "{}", stderr(&result));
    assert!(!dir.path().join("nodes.html").exists() && !dir.path().join("zero.html").exists());
}
