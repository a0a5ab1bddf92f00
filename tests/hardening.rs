//! Hardening (issue 16): what every command leaves on disk.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

mod common;

use std::path::Path;
use std::process::Command;

use common::{scratch, trace};

/// Runs the binary under `umask 022`, as a shell user would.
fn sitesim_with_umask(args: &[&str]) -> std::process::Output {
    let mut command = Command::new("sh");
    command
        .arg("-c")
        .arg("umask 022; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_sitesim"))
        .args(args);
    command.output().unwrap()
}

/// Every regular file under `dir`, recursively.
fn files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(files(&path));
        } else {
            out.push(path);
        }
    }
    out
}

#[cfg(unix)]
#[test]
fn every_command_writes_files_readable_by_others_under_umask_022() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, out) = scratch();
    let kth = trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let sweep = dir.path().join("sweep.toml");
    std::fs::write(
        &sweep,
        "seeds = [1, 2]\n[[axes]]\nname = \"users\"\nkey = \"groups.0.users\"\nvalues = [5]\n[[axes]]\nname = \"weeks\"\nkey = \"run.weeks\"\nvalues = [1]\n",
    )
    .unwrap();
    let o = |name: &str| out.join(name).to_str().unwrap().to_string();
    let commands: Vec<Vec<String>> = vec![
        vec![
            "run".into(),
            "--users".into(),
            "5".into(),
            "--weeks".into(),
            "1".into(),
            "--out".into(),
            o("run"),
            "--swf".into(),
            o("run.swf"),
        ],
        vec![
            "replay".into(),
            kth.clone(),
            "--first-jobs".into(),
            "500".into(),
            "--out".into(),
            o("replay"),
        ],
        vec![
            "synth".into(),
            kth.clone(),
            "--jobs".into(),
            "200".into(),
            "--out".into(),
            o("synth.swf"),
        ],
        vec!["fit".into(), kth, "--out".into(), o("fit")],
        vec![
            "sweep".into(),
            sweep.to_str().unwrap().into(),
            "--out".into(),
            o("sweep"),
        ],
    ];
    for args in &commands {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let done = sitesim_with_umask(&args);
        assert!(
            done.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&done.stderr)
        );
    }
    let written = files(&out);
    assert!(written.len() >= 10, "{written:?}");
    for path in written {
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o644, "{} has mode {mode:o}", path.display());
    }
}
