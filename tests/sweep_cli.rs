#![allow(clippy::unwrap_used, clippy::expect_used)]
//! End-to-end tests of `sitesim sweep` and `sitesim plot`: the table, resuming an interrupted
//! sweep, figures, and a real Slurm job array.

use crate::common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{assert_fails, scratch, sitesim, sitesim_in, stderr, stdout, write_file};

/// A small grid: 2 schedulers x 2 site sizes x 3 seeds, 2 weeks each.
const SMALL: &str = r#"
seeds = { first = 1, count = 3 }
baseline = "easy"

[[axes]]
name = "scheduler"
key = "scheduler"
values = [{ policy = "easy" }, { policy = "creasy", alpha = 6000 }]

[[axes]]
name = "users"
key = "groups.0.users"
values = [20, 40]

[[axes]]
name = "weeks"
key = "run.weeks"
values = [2]
"#;

fn sweep_file(dir: &Path, text: &str) -> String {
    write_file(dir, "sweep.toml", text.as_bytes())
}

fn run_ok(args: &[&str]) -> String {
    let out = sitesim(args);
    assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    stdout(&out)
}

/// The measures a sweep without a power model tabulates: every measure but a power model's
/// (`metrics::Condition::Power`), which its files do not have.
fn measures_without_power() -> impl Iterator<Item = &'static metrics::Measure> {
    metrics::MEASURES
        .iter()
        .filter(|m| m.only_with != Some(metrics::Condition::Power))
}

/// The parsed table: one map per row.
fn table(path: &Path) -> Vec<BTreeMap<String, String>> {
    let mut reader = csv::Reader::from_path(path).unwrap();
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .zip(r.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect()
        })
        .collect()
}

/// The complete rows of the sweep's result files (`runs/results-*.csv`), by run id: each a map
/// of column to value. A partial last line (a process killed while writing it) is not a row.
fn result_rows(out: &Path) -> BTreeMap<String, BTreeMap<String, String>> {
    let mut rows = BTreeMap::new();
    for file in result_files(out) {
        let bytes = std::fs::read(&file).unwrap();
        let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let mut reader = csv::Reader::from_reader(&bytes[..complete]);
        let header = reader.headers().unwrap().clone();
        for record in reader.records() {
            let record = record.unwrap();
            let row: BTreeMap<String, String> = header
                .iter()
                .zip(record.iter())
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect();
            rows.entry(row["run"].clone()).or_insert(row);
        }
    }
    rows
}

/// The sweep's result files.
fn result_files(out: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            let name = p.file_name().unwrap().to_string_lossy();
            name.starts_with("results-") && name.ends_with(".csv")
        })
        .collect();
    files.sort();
    files
}

#[test]
fn the_table_holds_means_intervals_and_paired_differences() {
    let (dir, out) = scratch();
    let sweep = sweep_file(dir.path(), SMALL);
    let printed = run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    assert!(
        printed.contains("12 runs (4 configurations x 3 seeds)"),
        "{printed}"
    );
    assert!(printed.contains("creasy-6000"), "{printed}");
    assert_eq!(result_rows(&out).len(), 12);
    assert_eq!(result_files(&out).len(), 1, "one result file per process");

    let rows = table(&out.join("results.csv"));
    // One row per configuration and measure of the catalogue (but a power model's: no run has
    // one).
    assert_eq!(rows.len(), 4 * measures_without_power().count());
    // The mean in the table is the mean of the result rows' values.
    let runs = result_rows(&out);
    for row in &rows {
        let n: usize = row["n"].parse().unwrap();
        let prefix = format!(
            "scheduler={},users={},weeks={},",
            row["scheduler"], row["users"], row["weeks"]
        );
        let values: Vec<f64> = runs
            .iter()
            .filter(|(id, _)| id.starts_with(&prefix))
            .filter_map(|(_, r)| r[row["metric"].as_str()].parse().ok())
            .collect();
        assert_eq!(values.len(), n, "{row:?}");
        if n == 0 {
            continue;
        }
        let mean: f64 = row["mean"].parse().unwrap();
        let expected = values.iter().sum::<f64>() / n as f64;
        assert!(
            (mean - expected).abs() <= 1e-9 * expected.abs().max(1.0),
            "{row:?}"
        );
        if n > 1 {
            let low: f64 = row["ci95_low"].parse().unwrap();
            let high: f64 = row["ci95_high"].parse().unwrap();
            assert!(low <= mean && mean <= high, "{row:?}");
        }
        // Quantiles over the runs: with 3 seeds the median is the middle value, and the 2.5 %
        // and 97.5 % quantiles lie between the smallest and the largest.
        let mut sorted = values.clone();
        sorted.sort_by(f64::total_cmp);
        let quantile = |name: &str| row[name].parse::<f64>().unwrap();
        if n == 3 {
            assert!((quantile("median") - sorted[1]).abs() <= 1e-9 * sorted[1].abs().max(1.0));
        }
        assert!(
            sorted[0] <= quantile("q025") && quantile("q975") <= sorted[n - 1],
            "{row:?}"
        );
        // The baseline has no difference with itself; CREASY has one against EASY.
        let is_baseline = row["scheduler"] == "easy";
        assert_eq!(row["diff_mean"].is_empty(), is_baseline, "{row:?}");
    }
    // Paired difference: mean of per-seed differences equals the difference of the means.
    let find = |scheduler: &str, metric: &str| {
        rows.iter()
            .find(|r| r["scheduler"] == scheduler && r["users"] == "40" && r["metric"] == metric)
            .unwrap()
            .clone()
    };
    let creasy = find("creasy-6000", "throughput_submitted_per_hour");
    let easy = find("easy", "throughput_submitted_per_hour");
    let difference: f64 = creasy["diff_mean"].parse().unwrap();
    let means: f64 = creasy["mean"].parse::<f64>().unwrap() - easy["mean"].parse::<f64>().unwrap();
    assert!((difference - means).abs() < 1e-9, "{difference} vs {means}");

    // A column empty in every run is a measure that needs what these runs lack (its
    // `only_with`, the measures page's "only with" column: --fairness, --headroom, the sharing
    // model, dynP, the Slurm model); every other measure has a value in some run.
    let conditional = measures_without_power()
        .filter(|m| m.only_with.is_some())
        .count();
    assert_eq!(conditional, 20);
    for m in measures_without_power() {
        let empty = runs.values().all(|r| r[m.name].is_empty());
        assert_eq!(
            empty,
            m.only_with.is_some(),
            "{}: empty in every run of a default sweep: {empty}",
            m.name
        );
    }
    // A power model's measures have no column at all: no run has one.
    for m in metrics::MEASURES
        .iter()
        .filter(|m| m.only_with == Some(metrics::Condition::Power))
    {
        assert!(runs.values().all(|r| !r.contains_key(m.name)), "{}", m.name);
    }

    // Running it again redoes nothing and gives the same table.
    let before = std::fs::read(out.join("results.csv")).unwrap();
    let again = run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    assert!(again.contains("12 already done, 0 to run"), "{again}");
    assert_eq!(std::fs::read(out.join("results.csv")).unwrap(), before);
}

#[test]
fn an_interrupted_sweep_resumes_without_redoing_finished_runs() {
    // Big enough that one thread takes a few seconds: it is killed after its second result.
    let grid = SMALL
        .replace("count = 3", "count = 8")
        .replace("values = [20, 40]", "values = [60, 80]")
        .replace("values = [2]", "values = [6]");
    let (dir, out) = scratch();
    let sweep = sweep_file(dir.path(), &grid);
    let out_arg = out.to_str().unwrap().to_string();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sitesim"))
        .args(["sweep", &sweep, "--out", &out_arg, "--jobs", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let clock = Instant::now();
    while !out.join("runs").is_dir() || result_rows(&out).len() < 2 {
        assert!(
            clock.elapsed() < Duration::from_secs(120),
            "no results after 2 minutes"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let finished = result_rows(&out);
    assert!(
        finished.len() < 32,
        "the sweep finished before it could be killed; make it bigger"
    );
    assert!(!out.join("results.csv").exists());
    // Every complete row has every column.
    for (id, row) in &finished {
        assert_eq!(row.len(), 3 + measures_without_power().count(), "{id}");
    }

    let resumed = run_ok(&["sweep", &sweep, "--out", &out_arg]);
    let expected = format!(
        "{} already done, {} to run",
        finished.len(),
        32 - finished.len()
    );
    assert!(resumed.contains(&expected), "{resumed}");
    let after = result_rows(&out);
    assert_eq!(after.len(), 32);
    // The resumed process wrote the other runs into a file of its own.
    assert_eq!(result_files(&out).len(), 2);
    let second = std::fs::read_to_string(&result_files(&out)[1]).unwrap();
    for id in finished.keys() {
        assert!(!second.contains(&format!("{id}\"")), "{id} was redone");
    }

    // The resumed sweep's table equals that of an uninterrupted one.
    let (_whole_dir, whole) = scratch();
    run_ok(&["sweep", &sweep, "--out", whole.to_str().unwrap()]);
    assert_eq!(
        std::fs::read(out.join("results.csv")).unwrap(),
        std::fs::read(whole.join("results.csv")).unwrap()
    );
}

#[test]
fn bad_sweep_files_are_refused_before_anything_runs() {
    let (dir, _) = scratch();
    let cases = [
        (SMALL.replace("groups.0.users", "groups.0.usres"), "usres"),
        (
            SMALL.replace("baseline = \"easy\"", "baseline = \"sjf\""),
            "baseline \"sjf\" is not a value",
        ),
        (
            SMALL.replace("values = [20, 40]", "values = []"),
            "no values",
        ),
        (
            SMALL.replace("{ policy = \"easy\" }", "{ policy = \"easyy\" }"),
            "easyy",
        ),
        (
            SMALL.replace("values = [20, 40]", "values = [20, -4]"),
            "users",
        ),
        ("seeds = 3".to_string(), "seeds"),
        (
            SMALL.replace(
                "seeds = { first = 1, count = 3 }",
                "seeds = { first = 9223372036854775806, count = 3 }",
            ),
            "seeds: seed 9223372036854775808 is past 9223372036854775807",
        ),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let path = write_file(dir.path(), &format!("bad{i}.toml"), text.as_bytes());
        assert_fails(&["sweep", &path], expected);
    }
    assert_fails(&["sweep", "no/such/sweep.toml"], "cannot read");
}

#[test]
fn bad_replay_tables_are_refused_before_anything_runs() {
    // values a replay checks only once it reads its trace used to fail run by run ("N runs
    // failed", partial outputs); now the sweep refuses them naming the key, writing nothing
    let (dir, _) = scratch();
    let kth = common::trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let empty = dir.path().to_str().unwrap().to_string();
    let table = |trace: &str, extra: &str| {
        format!(
            "seeds = [1]\n[replay]\ntrace = {trace:?}\n{extra}\n[[axes]]\nname = \"s\"\nkey = \"scheduler\"\nvalues = [{{ policy = \"easy\" }}]\n"
        )
    };
    let cases = [
        (
            table(&kth, "load_factor = 0"),
            "replay: load_factor must be a number > 0",
        ),
        (
            table(&kth, "first_jobs = 0"),
            "replay: first_jobs = 0: replay at least one job",
        ),
        (
            table(&kth, "estimates = \"f\""),
            "replay: estimates = f needs estimate_f",
        ),
        (
            table(&kth, "feedback_abandon = true"),
            "replay: feedback_abandon needs feedback",
        ),
        (table(&empty, ""), "is a directory, not a trace file"),
        // an empty path is the sweep file's directory
        (table("", ""), "is a directory, not a trace file"),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let path = write_file(dir.path(), &format!("bad{i}.toml"), text.as_bytes());
        assert_fails(&["sweep", &path], expected);
    }
}

#[test]
fn a_results_directory_of_another_sweep_is_refused() {
    let (dir, out) = scratch();
    let sweep = sweep_file(dir.path(), SMALL);
    run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    let other = write_file(
        dir.path(),
        "other.toml",
        SMALL.replace("count = 3", "count = 2").as_bytes(),
    );
    let result = sitesim(&["sweep", &other, "--out", out.to_str().unwrap()]);
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("different sweep"),
        "{}",
        stderr(&result)
    );
}

#[test]
fn a_sweep_of_one_axis_is_plotted_along_it() {
    // one axis (the site size): drawn along x as one series, whatever --series says
    let (dir, out) = scratch();
    let sweep = sweep_file(
        dir.path(),
        "seeds = [1]\n[[axes]]\nname = \"users\"\nkey = \"groups.0.users\"\nvalues = [5, 10]\n[[axes]]\nname = \"weeks\"\nkey = \"run.weeks\"\nvalues = [1]\n",
    );
    run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    // (two axes: weeks has one value, but scheduler is missing: the series axis is required)
    let result = sitesim(&[
        "plot",
        out.to_str().unwrap(),
        "--out",
        dir.path().join("two").to_str().unwrap(),
    ]);
    assert!(
        stderr(&result).contains("no axis \"scheduler\""),
        "{}",
        stderr(&result)
    );
    let one = dir.path().join("one.toml");
    std::fs::write(
        &one,
        "seeds = [1]\n[[axes]]\nname = \"users\"\nkey = \"groups.0.users\"\nvalues = [5, 10]\n",
    )
    .unwrap();
    let out_one = dir.path().join("one-out");
    run_ok(&[
        "sweep",
        one.to_str().unwrap(),
        "--out",
        out_one.to_str().unwrap(),
    ]);
    let figures = dir.path().join("one-figures");
    run_ok(&[
        "plot",
        out_one.to_str().unwrap(),
        "--out",
        figures.to_str().unwrap(),
    ]);
    let csv = std::fs::read_to_string(figures.join("fig10a_throughput.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 2, "{csv}");
    assert!(csv.contains("all runs,5,"), "{csv}");
}

#[test]
fn plot_draws_every_figure_as_png_and_svg() {
    let (dir, out) = scratch();
    let sweep = sweep_file(dir.path(), SMALL);
    run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    let figures = dir.path().join("figures");
    run_ok(&[
        "plot",
        out.to_str().unwrap(),
        "--out",
        figures.to_str().unwrap(),
    ]);
    for stem in [
        "fig10a_throughput",
        "fig10b_session_length",
        "fig11a_response",
        "fig11b_slowdown",
        "fig12a_class_response",
        "fig12b_class_slowdown",
        "fig13_relative",
    ] {
        let png = std::fs::read(figures.join(format!("{stem}.png"))).unwrap();
        assert!(png.starts_with(b"\x89PNG"), "{stem}.png");
        let svg = std::fs::read_to_string(figures.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.contains("<svg"), "{stem}.svg");
        assert!(svg.contains("easy"), "{stem}.svg has no legend");
        let pdf = std::fs::read(figures.join(format!("{stem}.pdf"))).unwrap();
        assert!(pdf.starts_with(b"%PDF"), "{stem}.pdf");
        let csv = std::fs::read_to_string(figures.join(format!("{stem}.csv"))).unwrap();
        assert!(
            csv.starts_with("series,x,y,low,high\n"),
            "{stem}.csv: {csv}"
        );
    }
    // the CSV has a row per point drawn: 2 schedulers x 2 site sizes
    let csv = std::fs::read_to_string(figures.join("fig10a_throughput.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 4, "{csv}");
    let svg = std::fs::read_to_string(figures.join("fig10a_throughput.svg")).unwrap();
    assert!(svg.contains("site size (users)"), "x axis label missing");
    assert!(
        svg.contains("jobs submitted per hour"),
        "y axis label missing"
    );

    // Drawing into the same folder again is refused, naming it and --force, and changes nothing;
    // with --force it redraws, here at a column's width.
    let before = std::fs::read(figures.join("fig13_relative.svg")).unwrap();
    let again = sitesim(&[
        "plot",
        out.to_str().unwrap(),
        "--out",
        figures.to_str().unwrap(),
        "--width",
        "column",
    ]);
    assert!(!again.status.success());
    let message = stderr(&again);
    assert!(
        message.contains(&format!("{} already holds figures", figures.display()))
            && message.contains("--force"),
        "{message}"
    );
    assert_eq!(
        std::fs::read(figures.join("fig13_relative.svg")).unwrap(),
        before
    );
    run_ok(&[
        "plot",
        out.to_str().unwrap(),
        "--out",
        figures.to_str().unwrap(),
        "--width",
        "column",
        "--force",
    ]);
    let svg = std::fs::read_to_string(figures.join("fig13_relative.svg")).unwrap();
    assert!(svg.starts_with("<svg width=\"495\""), "{}", &svg[..60]);
    // one CREASY alpha against EASY: points, no line drawn across the alphas between
    assert!(
        !svg.contains(
            "<polyline fill=\"none\" opacity=\"1\" stroke=\"#0072B2\" stroke-width=\"2\""
        )
    );
    // bad widths name the option
    for (width, expected) in [
        ("0", "--width must be a number of inches > 0"),
        ("-2", "--width must be a number of inches > 0"),
        ("1", "--width must be from 2 to 20 inches, got 1"),
        (
            "wide",
            "--width \"wide\" is neither a number of inches nor a preset",
        ),
    ] {
        let r = sitesim(&[
            "plot",
            out.to_str().unwrap(),
            "--out",
            dir.path().join("bad").to_str().unwrap(),
            "--width",
            width,
        ]);
        assert!(!r.status.success(), "--width {width}");
        assert!(stderr(&r).contains(expected), "{}", stderr(&r));
        assert!(!dir.path().join("bad").exists());
    }

    // An axis with two values left is a clear error.
    let two = SMALL.replace("values = [2]", "values = [1, 2]");
    let (dir2, out2) = scratch();
    let sweep2 = sweep_file(dir2.path(), &two);
    run_ok(&["sweep", &sweep2, "--out", out2.to_str().unwrap()]);
    let result = sitesim(&[
        "plot",
        out2.to_str().unwrap(),
        "--out",
        dir2.path().join("f").to_str().unwrap(),
    ]);
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("--where weeks=VALUE"),
        "{}",
        stderr(&result)
    );
    run_ok(&[
        "plot",
        out2.to_str().unwrap(),
        "--out",
        dir2.path().join("f").to_str().unwrap(),
        "--where",
        "weeks=1",
    ]);
    let f = dir2.path().join("f");
    assert!(
        f.join("fig10a_throughput_weeks-1.svg").exists(),
        "the filter is not in the file name"
    );
    let svg = std::fs::read_to_string(f.join("fig10a_throughput_weeks-1.svg")).unwrap();
    assert!(
        svg.contains("Throughput (weeks = 1)"),
        "the filter is not in the title"
    );

    // A chosen measure, on a categorical x axis (scheduler labels): one dot and error bar per
    // value, no joining lines or bands.
    run_ok(&[
        "plot",
        out2.to_str().unwrap(),
        "--out",
        f.to_str().unwrap(),
        "--where",
        "weeks=2",
        "--x",
        "scheduler",
        "--series",
        "users",
        "--measure",
        "wait_p95",
        "--measure",
        "bounded_slowdown_mean",
    ]);
    for stem in ["wait_p95_weeks-2", "bounded_slowdown_mean_weeks-2"] {
        let svg = std::fs::read_to_string(f.join(format!("{stem}.svg"))).unwrap();
        assert!(svg.contains("creasy-6000"), "{stem}: no category label");
        assert!(
            !svg.contains("opacity=\"0.1\""),
            "{stem}: a band on a categorical axis"
        );
        assert!(svg.contains("<circle"), "{stem}: no markers");
        // the CSV names the categories, not their positions
        let csv = std::fs::read_to_string(f.join(format!("{stem}.csv"))).unwrap();
        assert!(csv.contains(",creasy-6000,"), "{stem}.csv: {csv}");
    }
    // titles and labels in the catalogue's words and printed unit, not the metric's key
    let svg = std::fs::read_to_string(f.join("wait_p95_weeks-2.svg")).unwrap();
    assert!(
        svg.contains("95th percentile of the wait time (min) (weeks = 2)"),
        "the title is not the catalogue's"
    );
    assert!(!svg.contains("wait_p95"), "a raw metric key in the figure");
    // no interval of the bounded slowdown below its floor of 1
    let csv = std::fs::read_to_string(f.join("bounded_slowdown_mean_weeks-2.csv")).unwrap();
    for line in csv.lines().skip(1) {
        if let Some(Ok(low)) = line.split(',').nth(3).map(str::parse::<f64>) {
            assert!(low >= 1.0, "{line}");
        }
    }
    // the paired relative difference against the baseline, at 300 dpi
    run_ok(&[
        "plot",
        out2.to_str().unwrap(),
        "--out",
        f.to_str().unwrap(),
        "--where",
        "weeks=2",
        "--measure",
        "throughput_submitted_per_hour",
        "--relative",
        "--dpi",
        "300",
    ]);
    let svg = std::fs::read_to_string(f.join("throughput_submitted_per_hour_relative_weeks-2.svg"))
        .unwrap();
    assert!(svg.contains("change against easy (%)"), "relative title");
    let png = std::fs::read(f.join("throughput_submitted_per_hour_relative_weeks-2.png")).unwrap();
    assert_eq!(
        u32::from_be_bytes([png[16], png[17], png[18], png[19]]),
        1920
    );
    let result = sitesim(&[
        "plot",
        out2.to_str().unwrap(),
        "--out",
        f.to_str().unwrap(),
        "--where",
        "weeks=2",
        "--measure",
        "wait_p96",
    ]);
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("--measure \"wait_p96\" is not a measure"),
        "{}",
        stderr(&result)
    );
}

/// Whether a Slurm cluster answers here.
fn slurm_available() -> Result<(), String> {
    let sinfo = Command::new("sinfo").args(["-h", "-o", "%T"]).output();
    match sinfo {
        Err(e) => Err(format!("sinfo cannot run ({e})")),
        Ok(o) if !o.status.success() => Err(format!(
            "sinfo failed: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(o) => {
            let states = String::from_utf8_lossy(&o.stdout).to_string();
            if ["idle", "mixed", "allocated"]
                .iter()
                .any(|s| states.contains(s))
            {
                Ok(())
            } else {
                Err(format!("no Slurm node is up (states: {:?})", states.trim()))
            }
        }
    }
}

/// Submits with `--slurm`, returns the job id from what sitesim printed.
fn submit(dir: &Path, sweep: &str, out: &Path) -> String {
    let result = sitesim_in(
        dir,
        &[
            "sweep",
            sweep,
            "--out",
            out.to_str().unwrap(),
            "--slurm",
            "--chunk",
            "5",
        ],
    );
    assert!(result.status.success(), "{}", stderr(&result));
    let printed = stdout(&result);
    printed
        .split_whitespace()
        .skip_while(|w| *w != "array")
        .nth(1)
        .map(|id| id.trim_end_matches(':').to_string())
        .unwrap_or_else(|| panic!("no job id in {printed:?}"))
}

/// Waits until Slurm no longer lists the job.
fn wait_for(job: &str) {
    let clock = Instant::now();
    loop {
        let queue = Command::new("squeue")
            .args(["-h", "-j", job])
            .output()
            .unwrap();
        let listed = String::from_utf8_lossy(&queue.stdout).trim().to_string();
        if queue.status.success() && listed.is_empty() {
            return;
        }
        // squeue refuses an id it has forgotten: the job is long done.
        if !queue.status.success()
            && String::from_utf8_lossy(&queue.stderr).contains("Invalid job id")
        {
            return;
        }
        assert!(
            clock.elapsed() < Duration::from_secs(300),
            "job {job} still queued after 5 minutes: {listed}"
        );
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn slurm_job_array_gives_the_same_table_as_a_local_run_or_is_skipped() {
    let _slurm = crate::common::slurm_lock();
    if let Err(why) = slurm_available() {
        assert!(
            std::env::var_os("SITESIM_REQUIRE_SLURM").is_none(),
            "SITESIM_REQUIRE_SLURM is set but Slurm is not usable: {why}"
        );
        // Written past the test harness's capture, so the skip is visible in every run.
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED slurm_job_array_gives_the_same_table_as_a_local_run: {why} \
             (scripts/ci/start-slurm.sh starts a one-node cluster; .ci/run does so)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let sweep = sweep_file(dir.path(), SMALL);
    let on_slurm: PathBuf = dir.path().join("slurm-out");
    let job = submit(dir.path(), &sweep, &on_slurm);
    wait_for(&job);
    let logs: Vec<_> = std::fs::read_dir(on_slurm.join("slurm/logs"))
        .unwrap()
        .collect();
    assert_eq!(logs.len(), 3, "12 runs in chunks of 5 are 3 array tasks");
    run_ok(&[
        "sweep",
        &sweep,
        "--out",
        on_slurm.to_str().unwrap(),
        "--merge",
    ]);

    let local = dir.path().join("local-out");
    run_ok(&["sweep", &sweep, "--out", local.to_str().unwrap()]);
    let table_slurm = std::fs::read(on_slurm.join("results.csv")).unwrap();
    assert_eq!(
        table_slurm,
        std::fs::read(local.join("results.csv")).unwrap()
    );

    // One result file per array task.
    assert_eq!(result_files(&on_slurm).len(), 3);
    // A lost result (a failed task) is resubmitted by the same command, and only that run.
    let lost = "scheduler=easy,users=40,weeks=2,seed=2";
    for file in result_files(&on_slurm) {
        let text = std::fs::read_to_string(&file).unwrap();
        let kept: String = text
            .lines()
            .filter(|l| !l.starts_with(&format!("\"{lost}\"")))
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(&file, kept).unwrap();
    }
    assert!(!result_rows(&on_slurm).contains_key(lost));
    let merge = sitesim(&[
        "sweep",
        &sweep,
        "--out",
        on_slurm.to_str().unwrap(),
        "--merge",
    ]);
    assert!(!merge.status.success(), "merged with a run missing");
    assert!(
        stderr(&merge).contains("1 of 12 runs have no result"),
        "{}",
        stderr(&merge)
    );
    let job = submit(dir.path(), &sweep, &on_slurm);
    let manifest = std::fs::read_to_string(on_slurm.join("slurm/manifest-2.txt")).unwrap();
    assert!(
        manifest.trim().ends_with(&format!("\t{lost}")),
        "{manifest}"
    );
    wait_for(&job);
    assert!(
        result_rows(&on_slurm).contains_key(lost),
        "the resubmitted task did not write its result"
    );
    run_ok(&[
        "sweep",
        &sweep,
        "--out",
        on_slurm.to_str().unwrap(),
        "--merge",
    ]);
    assert_eq!(
        std::fs::read(on_slurm.join("results.csv")).unwrap(),
        table_slurm
    );
}

#[test]
fn slurm_dry_run_writes_the_job_array_script() {
    let (dir, out) = scratch();
    let sweep = sweep_file(dir.path(), SMALL);
    let printed = run_ok(&[
        "sweep",
        &sweep,
        "--out",
        out.to_str().unwrap(),
        "--slurm",
        "--dry-run",
        "--chunk",
        "4",
        "--partition",
        "short",
        "--time",
        "00:10:00",
    ]);
    assert!(printed.contains("12 runs in 3 array tasks"), "{printed}");
    let script = std::fs::read_to_string(out.join("slurm/sweep-1.sbatch")).unwrap();
    for line in [
        "#SBATCH --array=0-2",
        "#SBATCH --partition=short",
        "#SBATCH --time=00:10:00",
        "--worker",
        "--task \"$((SLURM_ARRAY_TASK_ID + 0))\" --chunk 4",
    ] {
        assert!(script.contains(line), "{line:?} missing from\n{script}");
    }
    let manifest = std::fs::read_to_string(out.join("slurm/manifest-1.txt")).unwrap();
    assert_eq!(manifest.lines().count(), 12);

    // What an array task does: task 2 runs lines 8..12 of the manifest.
    let exe = env!("CARGO_BIN_EXE_sitesim");
    let task = Command::new(exe)
        .args([
            "sweep",
            &sweep,
            "--out",
            out.to_str().unwrap(),
            "--worker",
            out.join("slurm/manifest-1.txt").to_str().unwrap(),
            "--task",
            "2",
            "--chunk",
            "4",
        ])
        .output()
        .unwrap();
    assert!(task.status.success(), "{}", stderr(&task));
    let done: Vec<String> = result_rows(&out).into_keys().collect();
    let mut expected: Vec<String> = manifest
        .lines()
        .skip(8)
        .map(|line| line.split_once('\t').unwrap().1.to_string())
        .collect();
    expected.sort();
    assert_eq!(done, expected);
    assert_eq!(
        result_files(&out),
        [out.join("runs/results-task-manifest-1-2.csv")],
        "a task writes a file of its own"
    );
}

#[test]
fn a_plan_of_100000_runs_is_split_into_arrays_the_cluster_takes() {
    let (dir, out) = scratch();
    let sweep = sweep_file(
        dir.path(),
        &SMALL.replace(
            "seeds = { first = 1, count = 3 }",
            "seeds = { first = 1, count = 25000 }",
        ),
    );
    let printed = run_ok(&[
        "sweep",
        &sweep,
        "--out",
        out.to_str().unwrap(),
        "--slurm",
        "--dry-run",
        "--max-array-size",
        "1001",
        "--chunk",
        "10",
    ]);
    assert!(
        printed.contains(
            "100000 runs in 10000 array tasks of 10 runs at most, 10 arrays of at most 1001 tasks"
        ),
        "{printed}"
    );
    let manifest = std::fs::read_to_string(out.join("slurm/manifest-1.txt")).unwrap();
    assert_eq!(manifest.lines().count(), 100_000);
    // Ten scripts whose arrays have at most 1001 tasks (indexes 0 to 1000) and cover the
    // 10,000 tasks once each, in order.
    let mut next = 0;
    for part in 1..=10 {
        let script =
            std::fs::read_to_string(out.join(format!("slurm/sweep-1-{part}.sbatch"))).unwrap();
        let last: usize = script
            .lines()
            .find_map(|l| l.strip_prefix("#SBATCH --array=0-"))
            .unwrap()
            .parse()
            .unwrap();
        assert!(last <= 1000, "{script}");
        assert!(
            script.contains(&format!("--task \"$((SLURM_ARRAY_TASK_ID + {next}))\"")),
            "{script}"
        );
        next += last + 1;
    }
    assert_eq!(next, 10_000);
    assert!(!out.join("slurm/sweep-1-11.sbatch").exists());
    // Without --chunk: as few runs per task as fit one array (100 runs in each of 1000 tasks),
    // not 10,000 tasks of 10.
    let auto = dir.path().join("auto");
    let printed = run_ok(&[
        "sweep",
        &sweep,
        "--out",
        auto.to_str().unwrap(),
        "--slurm",
        "--dry-run",
        "--max-array-size",
        "1001",
    ]);
    assert!(
        printed.contains(
            "100000 runs in 1000 array tasks of 100 runs at most, 1 array of at most 1001 tasks"
        ),
        "{printed}"
    );
    let script = std::fs::read_to_string(auto.join("slurm/sweep-1.sbatch")).unwrap();
    assert!(
        script.contains("#SBATCH --array=0-999") && script.contains("--chunk 100"),
        "{script}"
    );
}

#[test]
fn the_report_section_chooses_quantiles_and_measures() {
    let (dir, out) = scratch();
    let text = format!(
        "{SMALL}\n[report]\nstatistic = \"quantiles\"\nmeasures = [\"response_mean\", \"awrt\", \"mean_wait\"]\n"
    );
    let sweep = sweep_file(dir.path(), &text);
    let printed = run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    // Each measure is printed with its catalogue title, in its printed unit (minutes); an
    // alias (mean_wait) is its measure (wait_mean).
    assert!(
        printed.contains("resp min")
            && printed.contains("AWRT min")
            && printed.contains("wait min"),
        "{printed}"
    );
    assert!(
        printed.contains("(2.5 % quantile / median / 97.5 % quantile over the seeds)"),
        "{printed}"
    );
    // Each cell is "q2.5 / median / q97.5", as in results.csv.
    let rows = table(&out.join("results.csv"));
    let row = rows
        .iter()
        .find(|r| r["scheduler"] == "easy" && r["users"] == "40" && r["metric"] == "awrt")
        .unwrap();
    let cell = |name: &str| format!("{:.2}", row[name].parse::<f64>().unwrap() / 60.0);
    let expected = format!("{} / {} / {}", cell("q025"), cell("median"), cell("q975"));
    assert!(printed.contains(&expected), "{expected} in {printed}");

    let bad = sweep_file(
        dir.path(),
        &format!("{SMALL}\n[report]\nmeasures = [\"response_average\"]\n"),
    );
    let result = sitesim(&["sweep", &bad, "--out", out.to_str().unwrap()]);
    assert!(!result.status.success());
    assert!(
        stderr(&result).contains("report.measures: \"response_average\" is not a measure"),
        "{}",
        stderr(&result)
    );
}

#[test]
fn a_sweep_can_report_headroom_and_capture() {
    let (dir, out) = scratch();
    let text = SMALL.replace(
        "[[axes]]\nname = \"scheduler\"",
        "headroom = true\n\n[[axes]]\nname = \"scheduler\"",
    );
    assert!(text.contains("headroom = true"));
    let text = format!("{text}\n[report]\nmeasures = [\"headroom\", \"capture\"]\n");
    let sweep = sweep_file(dir.path(), &text);
    let printed = run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    assert!(
        printed.contains("headroom %") && printed.contains("capture %"),
        "{printed}"
    );
    let rows = table(&out.join("results.csv"));
    let value = |scheduler: &str, metric: &str| -> String {
        rows.iter()
            .find(|r| r["scheduler"] == scheduler && r["users"] == "40" && r["metric"] == metric)
            .map(|r| r["mean"].clone())
            .unwrap()
    };
    assert!(value("easy", "headroom").parse::<f64>().unwrap() >= 0.0);
    assert_eq!(
        value("easy", "capture")
            .parse::<f64>()
            .ok()
            .filter(|c| *c != 0.0),
        None
    );
    assert!(!value("creasy-6000", "throughput_uncontended_per_hour").is_empty());
    // A wrong type is an error naming the key.
    let bad = sweep_file(
        dir.path(),
        &text.replace("headroom = true", "headroom = \"yes\""),
    );
    let failed = sitesim(&["sweep", &bad, "--out", out.join("bad").to_str().unwrap()]);
    assert!(!failed.status.success());
    assert!(stderr(&failed).contains("headroom"), "{}", stderr(&failed));
    assert!(!out.join("bad").join("results.csv").exists());
}

/// A replay sweep over two traces and two schedulers: each run is what `sitesim replay` with
/// the same options gives.
#[test]
fn a_replay_sweep_replays_each_trace_as_the_replay_command_does() {
    let (dir, out) = scratch();
    let kth = common::trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let sdsc = common::trace("SDSC-SP2-1998-4.2-cln.swf.gz");
    let text = format!(
        r#"
seeds = [3, 4]
baseline = "easy"
[replay]
first_jobs = 3000
shake = true
[[axes]]
name = "trace"
key = "trace"
values = [{kth:?}, {sdsc:?}]
[[axes]]
name = "scheduler"
key = "scheduler"
values = [{{ policy = "easy" }}, {{ policy = "creasy", alpha = 6000 }}]
"#
    );
    let sweep = sweep_file(dir.path(), &text);
    run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    assert!(
        !out.join("site.toml").exists(),
        "a replay sweep has no site"
    );
    let rows = table(&out.join("results.csv"));
    let row = |trace: &str, scheduler: &str, metric: &str| {
        rows.iter()
            .find(|r| r["trace"] == trace && r["scheduler"] == scheduler && r["metric"] == metric)
            .unwrap_or_else(|| panic!("no row {trace} {scheduler} {metric}"))
            .clone()
    };
    // The mean over seeds 3 and 4 equals the mean of the two replays' summaries.
    let mut waits = Vec::new();
    for seed in ["3", "4"] {
        let replay_out = dir.path().join(format!("replay-{seed}"));
        run_ok(&[
            "replay",
            &sdsc,
            "--scheduler",
            "creasy",
            "--alpha",
            "6000",
            "--first-jobs",
            "3000",
            "--shake",
            "--seed",
            seed,
            "--out",
            replay_out.to_str().unwrap(),
        ]);
        let summary: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(replay_out.join("summary.json")).unwrap(),
        )
        .unwrap();
        waits.push(summary["summary"]["wait_seconds"]["mean"].as_f64().unwrap());
    }
    let wait = row("SDSC-SP2-1998-4.2-cln", "creasy-6000", "wait_mean");
    let mean: f64 = wait["mean"].parse().unwrap();
    let expected = (waits[0] + waits[1]) / 2.0;
    assert!(
        (mean - expected).abs() <= 1e-9 * expected,
        "sweep {mean} vs replays {expected}"
    );
    assert_eq!(wait["n"], "2");
    assert!(!wait["rel_diff_mean"].is_empty(), "no paired difference");
    // Shaking moves arrivals, so the two seeds differ and the interval has a width.
    assert_ne!(waits[0], waits[1]);
    // Closed-loop measures are undefined without feedback.
    assert_eq!(
        row(
            "KTH-SP2-1996-2.1-cln",
            "easy",
            "throughput_submitted_per_hour"
        )["mean"],
        ""
    );

    // A trace that cannot be read stops the sweep before any run, naming the configuration.
    let (dir2, out2) = scratch();
    let bad = text.replace(&sdsc, "no/such/trace.swf");
    let sweep2 = sweep_file(dir2.path(), &bad);
    let result = sitesim(&["sweep", &sweep2, "--out", out2.to_str().unwrap()]);
    assert!(!result.status.success());
    let message = stderr(&result);
    assert!(
        message.contains("configuration trace=trace, scheduler=easy")
            && message.contains("cannot read"),
        "{message}"
    );
    assert!(!out2.join("results.csv").exists());
    // A sweep is either site runs or replays.
    let both = format!("site = \"x.toml\"\n{text}");
    let sweep3 = sweep_file(dir2.path(), &both);
    let result = sitesim(&["sweep", &sweep3, "--out", out2.to_str().unwrap()]);
    assert!(stderr(&result).contains("not both"), "{}", stderr(&result));
}

#[test]
fn a_sweeps_runs_write_their_outputs_like_the_run_command() {
    let (dir, out) = scratch();
    let text = format!(
        "outputs = [\"jobs.csv\", \"summary.json\"]\n{}",
        SMALL
            .replace("count = 3", "count = 1")
            .replace("[20, 40]", "[20]")
    );
    let path = sweep_file(dir.path(), &text);
    run_ok(&[
        "sweep",
        &path,
        "--out",
        out.to_str().unwrap(),
        "--jobs",
        "2",
    ]);
    // Each run's files, as `run --out` writes them for the same site and seed.
    let runs: Vec<PathBuf> = std::fs::read_dir(out.join("runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    assert_eq!(runs.len(), 2, "{runs:?}");
    let easy = runs
        .iter()
        .find(|p| p.file_name().unwrap().to_string_lossy().contains("easy"))
        .unwrap();
    let mut names: Vec<String> = std::fs::read_dir(easy)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    crate::common::assert_run_files(&names, &["jobs.csv", "summary.json"]);
    let single = dir.path().join("single");
    run_ok(&[
        "run",
        "--users",
        "20",
        "--weeks",
        "2",
        "--seed",
        "1",
        "--out",
        single.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(easy.join("jobs.csv")).unwrap(),
        std::fs::read(single.join("jobs.csv")).unwrap()
    );
    // An unknown output file is refused before anything runs.
    let bad = sweep_file(dir.path(), &format!("outputs = [\"jobs.txt\"]\n{SMALL}"));
    assert_fails(
        &["sweep", &bad],
        "outputs: \"jobs.txt\" is not an output file; choose among jobs.csv",
    );
}

#[test]
fn the_per_seed_table_is_written_only_when_asked() {
    let (dir, out) = scratch();
    let sweep = sweep_file(dir.path(), SMALL);
    let printed = run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    assert!(out.join("results.csv").exists());
    assert!(
        !out.join("runs.csv").exists() && !printed.contains("runs.csv"),
        "runs.csv written unasked: {printed}"
    );
    // --merge --per-seed adds it from the same results: a row per run and measure.
    run_ok(&[
        "sweep",
        &sweep,
        "--out",
        out.to_str().unwrap(),
        "--merge",
        "--per-seed",
    ]);
    let rows = table(&out.join("runs.csv"));
    assert_eq!(rows.len(), 12 * measures_without_power().count());
    assert!(
        rows.iter()
            .all(|r| r.contains_key("seed") && r.contains_key("value"))
    );
}

#[test]
fn a_failing_merge_leaves_nothing_behind() {
    let (dir, out) = scratch();
    let sweep = sweep_file(dir.path(), SMALL);
    // Nothing was run into the directory: refused, and none made that looks like a sweep's.
    assert_fails(
        &["sweep", &sweep, "--merge"],
        "holds no results of this sweep (no sweep.toml): run the sweep first",
    );
    // A sweep with runs missing: the merge fails naming them, and writes no table.
    run_ok(&["sweep", &sweep, "--out", out.to_str().unwrap()]);
    std::fs::remove_file(out.join("results.csv")).unwrap();
    for file in std::fs::read_dir(out.join("runs")).unwrap() {
        let path = file.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let kept: Vec<&str> = text.lines().take(3).collect();
        std::fs::write(&path, kept.join("\n") + "\n").unwrap();
    }
    let before = common::files_below(&out);
    let done = sitesim(&["sweep", &sweep, "--out", out.to_str().unwrap(), "--merge"]);
    assert!(!done.status.success());
    assert!(
        stderr(&done).contains("runs have no result"),
        "{}",
        stderr(&done)
    );
    assert_eq!(
        common::files_below(&out),
        before,
        "a failed merge wrote files"
    );
}
