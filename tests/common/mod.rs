//! Helpers shared by the end-to-end tests.
#![allow(dead_code)] // each test binary uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs the sitesim binary with `args` in the current directory.
pub fn sitesim(args: &[&str]) -> Output {
    sitesim_in(Path::new("."), args)
}

/// Runs the sitesim binary with `args` in `dir`.
pub fn sitesim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sitesim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the sitesim binary runs")
}

/// The shared folder beside the checkout.
pub fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .canonicalize()
        .expect("../shared exists beside the checkout")
}

/// A trace in ../shared/traces, as a string path.
pub fn trace(name: &str) -> String {
    shared().join("traces").join(name).display().to_string()
}

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace root")
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A fresh temporary directory; `out` inside it does not exist yet.
pub fn scratch() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temp dir");
    let out = dir.path().join("out");
    (dir, out)
}

/// Writes `bytes` to `dir/name` and returns the path as a string.
pub fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> String {
    let path = dir.join(name);
    std::fs::write(&path, bytes).expect("write test file");
    path.display().to_string()
}

/// Runs sitesim with `args` plus `--out <fresh dir>`; checks it fails with `expected` in its
/// message, does not panic, and leaves no output directory. Returns stderr.
pub fn assert_fails(args: &[&str], expected: &str) -> String {
    let (_dir, out) = scratch();
    let mut all = args.to_vec();
    all.extend_from_slice(&["--out", out.to_str().expect("utf-8 path")]);
    let result = sitesim(&all);
    let message = stderr(&result);
    assert!(!result.status.success(), "{args:?} succeeded");
    assert!(
        message.contains(expected),
        "{args:?}: expected {expected:?} in {message:?}"
    );
    assert!(!message.contains("panicked"), "{message}");
    assert!(!out.exists(), "{args:?} left an output directory behind");
    message
}

/// Every file below `root`, as sorted relative paths.
pub fn files_below(root: &Path) -> Vec<PathBuf> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).expect("readable directory") {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                walk(root, &path, out);
            } else {
                out.push(path.strip_prefix(root).expect("below root").to_path_buf());
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Holds the machine's Slurm cluster for one live test at a time: the tests that submit to it
/// (the sweep's job array, the sacct workload, the priority comparison) share its queue and its
/// usage, and the test binary runs tests in parallel.
pub fn slurm_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A CSV file as a header and rows of strings.
pub fn table(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let mut reader = csv::Reader::from_path(path).expect("a readable CSV file");
    let header = reader
        .headers()
        .expect("a header row")
        .iter()
        .map(String::from)
        .collect();
    let rows = reader
        .records()
        .map(|r| r.expect("a CSV row").iter().map(String::from).collect())
        .collect();
    (header, rows)
}

/// The index of the column `name` in `header` (panics naming the columns if there is none).
pub fn column(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no column {name} in {header:?}"))
}

/// Runs `script` (under scripts/ci/, given an output directory) on the local Slurm cluster,
/// holding [`slurm_lock`] until the returned guard is dropped: the fresh capture's directory,
/// or `None` where Slurm is not usable (`unusable` says why; under CI,
/// `SITESIM_REQUIRE_SLURM`, that is a failure).
pub fn live_slurm_capture(
    script: &str,
    unusable: Option<String>,
) -> Option<(std::sync::MutexGuard<'static, ()>, tempfile::TempDir)> {
    live_slurm_capture_with(script, &[], unusable)
}

/// [`live_slurm_capture`] with `args` after the output directory (`--short`).
pub fn live_slurm_capture_with(
    script: &str,
    args: &[&str],
    unusable: Option<String>,
) -> Option<(std::sync::MutexGuard<'static, ()>, tempfile::TempDir)> {
    let lock = slurm_lock();
    if let Some(why) = unusable {
        assert!(
            std::env::var_os("SITESIM_REQUIRE_SLURM").is_none(),
            "SITESIM_REQUIRE_SLURM is set but Slurm is not usable: {why}"
        );
        eprintln!("skipped: {why}");
        return None;
    }
    let (dir, _) = scratch();
    let done = Command::new("bash")
        .arg(workspace().join("scripts/ci").join(script))
        .arg(dir.path())
        .args(args)
        .output()
        .expect("bash runs");
    assert!(
        done.status.success(),
        "{script} failed:\n{}\n{}",
        String::from_utf8_lossy(&done.stdout),
        String::from_utf8_lossy(&done.stderr)
    );
    Some((lock, dir))
}

/// The files sitesim's own output formats write (`scenario::output::FORMATS` as shipped).
pub const BUILT_IN_FILES: [&str; 7] = [
    "jobs.csv",
    "sessions.csv",
    "batches.csv",
    "summary.json",
    "batsim_jobs.csv",
    "workload.swf",
    "shares.csv",
];

/// Asserts that a run's directory holds `expected` (sorted) and nothing else of sitesim's own
/// formats: a file beyond them must be of a format registered after these (a recipe's new
/// format writes its file into every run, as the recipe promises).
pub fn assert_run_files(names: &[String], expected: &[&str]) {
    for name in expected {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    for name in names {
        if expected.contains(&name.as_str()) {
            continue;
        }
        assert!(
            !BUILT_IN_FILES.contains(&name.as_str())
                && scenario::output::find_format(name).is_some(),
            "{name} written beside {expected:?}"
        );
    }
}

/// A site of node types (8 CPU nodes, 4 GPU nodes of 4 A100, in their partitions; the example
/// GPU site's resource mix) for two weeks, with `extra` (outages, failures) appended, written
/// as `dir/name`.
pub fn node_site(dir: &Path, name: &str, extra: &str) -> String {
    let mix = workspace().join("configs/gpu-site-resources.csv");
    let text = format!(
        "[site]\nstart = \"2024-01-01T00:00:00\"\njob_sizes = \"clip\"\n\n\
         [[nodes]]\nname = \"cpu\"\ncount = 8\ncores = 64\nmemory = \"256G\"\npartitions = [\"cpu\"]\n\n\
         [[nodes]]\nname = \"gpu\"\ncount = 4\ncores = 64\nmemory = \"512G\"\ngpus = 4\ngpu_type = \"a100\"\npartitions = [\"gpu\"]\n\n\
         [[partitions]]\nname = \"cpu\"\ndefault = true\n\n\
         [run]\nweeks = 2\nseed = 5\n\n\
         [[groups]]\nname = \"users\"\nusers = 30\nresources = {:?}\n\n{extra}",
        mix.display().to_string()
    );
    write_file(dir, name, text.as_bytes())
}
