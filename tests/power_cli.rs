//! End-to-end tests of the power model's measures: a replay with `--power` reports them in
//! summary.json's `power` section and on the console; a replay sweep whose `[replay]` table
//! names a power file tabulates them, and a sweep without one has none of their rows or columns.

use crate::common;

use std::collections::BTreeMap;
use std::path::Path;

use common::{scratch, sitesim, stderr, stdout, write_file};

/// One node per processor, 60 W idle and 180 W busy, a PUE of 1.2, and (with `series`) a daily
/// carbon intensity and a price series.
fn power_file(dir: &Path, series: bool) -> String {
    let mut text = String::from("[power]\ncores = 1\nidle_w = 60\nbusy_w = 180\npue = 1.2\n");
    if series {
        write_file(
            dir,
            "ci.csv",
            b"time_s,gco2_per_kwh\n0,300\n28800,150\n64800,300\n",
        );
        write_file(dir, "p.csv", b"time_s,eur_per_mwh\n0,80\n43200,120\n");
        text.push_str("carbon = \"ci.csv\"\nprice = \"p.csv\"\nrepeat = true\n");
    }
    write_file(dir, "power.toml", text.as_bytes())
}

fn power_measures() -> impl Iterator<Item = &'static metrics::Measure> {
    metrics::MEASURES
        .iter()
        .filter(|m| m.only_with == Some(metrics::Condition::Power))
}

/// Follows a dotted path through JSON.
fn at<'a>(json: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
    path.split('.').try_fold(json, |v, key| v.get(key))
}

/// The value the console's line titled `title` prints, if it has one.
fn console_value(console: &str, title: &str) -> Option<f64> {
    console.lines().find_map(|line| {
        let rest = line.strip_prefix("  ")?.strip_prefix(title)?;
        // a longer title that starts with this one is another line
        rest.starts_with("  ")
            .then(|| rest.trim().parse().ok())
            .flatten()
    })
}

#[test]
fn a_replay_with_a_power_model_reports_its_measures_in_summary_json_and_on_the_console() {
    let (dir, out) = scratch();
    let power = power_file(dir.path(), true);
    let kth = common::trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let args = ["replay", &kth, "--first-jobs", "2000", "--out"];
    let result = sitesim(&[&args[..], &[out.to_str().unwrap(), "--power", &power]].concat());
    assert!(result.status.success(), "{}", stderr(&result));
    let console = stdout(&result);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    let section = &summary["power"];
    assert!(section.is_object(), "no power section: {summary}");
    let facility = section["facility_kwh"].as_f64().unwrap();
    let it = section["it_kwh"].as_f64().unwrap();
    assert!(it > 0.0 && (facility - 1.2 * it).abs() <= 1e-9 * facility);
    assert!(section["peak_kw"].as_f64().unwrap() >= section["mean_kw"].as_f64().unwrap());
    // 100 processors: at most 100 x 180 W busy.
    assert!(section["peak_kw"].as_f64().unwrap() <= 18.0 + 1e-9);
    assert!(section["carbon_kg"].as_f64().unwrap() > 0.0);
    assert!(section["cost"].as_f64().unwrap() > 0.0);
    // Every power measure is where its json path says, and printed with its title.
    for m in power_measures() {
        let path = m.json_path.unwrap();
        let value = at(&summary, path)
            .and_then(|v| v.as_f64())
            .unwrap_or_else(|| panic!("{}: no number at {path}", m.name));
        let printed = console_value(&console, m.title)
            .unwrap_or_else(|| panic!("{}: no console line {:?}: {console}", m.name, m.title));
        assert!(
            (printed - value * m.print_scale).abs() <= 0.01 + 1e-4 * value.abs(),
            "{}: printed {printed}, summary.json {value}",
            m.name
        );
    }
    assert!(console.contains("\n  energy kWh  "), "{console}");

    // Without carbon and price series, carbon and cost are null and not printed.
    let (dir, out) = scratch();
    let power = power_file(dir.path(), false);
    let result = sitesim(&[&args[..], &[out.to_str().unwrap(), "--power", &power]].concat());
    assert!(result.status.success(), "{}", stderr(&result));
    let console = stdout(&result);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(summary["power"]["carbon_kg"].is_null() && summary["power"]["cost"].is_null());
    assert!(console_value(&console, "energy kWh").is_some(), "{console}");
    assert!(
        console_value(&console, "carbon kgCO2").is_none(),
        "{console}"
    );
    assert!(console_value(&console, "cost").is_none(), "{console}");

    // Without a power model: no section, no power line.
    let (_dir, out) = scratch();
    let result = sitesim(&[&args[..], &[out.to_str().unwrap()]].concat());
    assert!(result.status.success(), "{}", stderr(&result));
    let console = stdout(&result);
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(
        summary.get("power").is_none_or(|p| p.is_null()),
        "{summary}"
    );
    for m in power_measures() {
        assert!(
            console_value(&console, m.title).is_none(),
            "{}: {console}",
            m.name
        );
    }
}

/// The rows of a CSV file, one map per row.
fn rows(path: &Path) -> Vec<BTreeMap<String, String>> {
    let (header, rows) = common::table(path);
    rows.into_iter()
        .map(|r| header.iter().cloned().zip(r).collect())
        .collect()
}

/// A replay sweep of KTH's first 1,500 jobs: 2 schedulers x 2 seeds (shaken arrivals);
/// `replay_extra` goes in its `[replay]` table.
fn replay_sweep(dir: &Path, replay_extra: &str) -> String {
    let kth = common::trace("KTH-SP2-1996-2.1-cln.swf.gz");
    let text = format!(
        r#"
seeds = [1, 2]
baseline = "easy"
[replay]
trace = {kth:?}
first_jobs = 1500
shake = true
{replay_extra}
[[axes]]
name = "scheduler"
key = "scheduler"
values = [{{ policy = "easy" }}, {{ policy = "fcfs" }}]
"#
    );
    write_file(dir, "sweep.toml", text.as_bytes())
}

#[test]
fn a_replay_sweep_with_a_power_model_tabulates_its_measures_and_one_without_does_not() {
    let (dir, out) = scratch();
    power_file(dir.path(), false);
    let sweep = replay_sweep(dir.path(), "power = \"power.toml\"");
    let result = sitesim(&[
        "sweep",
        &sweep,
        "--out",
        out.to_str().unwrap(),
        "--per-seed",
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let table = rows(&out.join("results.csv"));
    let per_measure = table.len() / 2;
    assert_eq!(
        per_measure,
        metrics::MEASURES.len(),
        "every measure, power's too"
    );
    let energy: Vec<_> = table
        .iter()
        .filter(|r| r["metric"] == "energy_kwh")
        .collect();
    assert_eq!(energy.len(), 2, "a row per configuration");
    let runs: usize = energy
        .iter()
        .map(|r| r["n"].parse::<usize>().unwrap())
        .sum();
    assert_eq!(runs, 4, "every run has its energy");
    for row in &energy {
        assert_eq!(row["n"], "2");
        assert_eq!(row["unit"], "kWh");
        assert!(row["mean"].parse::<f64>().unwrap() > 0.0);
    }
    // No carbon series: its row is there, undefined in every run.
    let carbon: Vec<_> = table
        .iter()
        .filter(|r| r["metric"] == "carbon_kg")
        .collect();
    assert!(carbon.len() == 2 && carbon.iter().all(|r| r["n"] == "0" && r["mean"].is_empty()));
    // The per-run result files and the per-seed table have them too.
    let per_run = rows(&out.join("runs").join("results-1.csv"));
    assert_eq!(per_run.len(), 4);
    assert!(per_run.iter().all(|r| !r["energy_kwh"].is_empty()));
    let per_seed = rows(&out.join("runs.csv"));
    assert_eq!(per_seed.len(), 4 * metrics::MEASURES.len());

    // The same sweep without a power model: no power row or column anywhere.
    let (dir, out) = scratch();
    let sweep = replay_sweep(dir.path(), "");
    let result = sitesim(&[
        "sweep",
        &sweep,
        "--out",
        out.to_str().unwrap(),
        "--per-seed",
    ]);
    assert!(result.status.success(), "{}", stderr(&result));
    let without = power_measures().count();
    assert_eq!(without, 8);
    let table = rows(&out.join("results.csv"));
    assert_eq!(table.len(), 2 * (metrics::MEASURES.len() - without));
    let per_run = rows(&out.join("runs").join("results-1.csv"));
    let per_seed = rows(&out.join("runs.csv"));
    assert_eq!(per_seed.len(), 4 * (metrics::MEASURES.len() - without));
    for m in power_measures() {
        assert!(table.iter().all(|r| r["metric"] != m.name), "{}", m.name);
        assert!(per_seed.iter().all(|r| r["metric"] != m.name), "{}", m.name);
        assert!(
            per_run.iter().all(|r| !r.contains_key(m.name)),
            "{}",
            m.name
        );
    }
}
