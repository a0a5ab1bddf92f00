//! Per-run result files and the results table.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Context;
use metrics::{SeedStats, Stats, paired};
use serde::{Deserialize, Serialize};

use super::plan::{Plan, Run, Statistic};
use crate::run::SiteRun;

/// The measures kept from every run, in table order (times in seconds).
pub const METRICS: [&str; 42] = [
    "throughput_submitted_per_hour",
    "throughput_completed_per_hour",
    "sessions",
    "session_length_mean",
    "session_length_median",
    "sessions_ended_by_abort",
    "sessions_ended_by_cycle",
    "sessions_ended_by_end_of_run",
    "utilization",
    "jobs_measured",
    "jobs_killed",
    "processed_work",
    "wait_mean",
    "wait_p50",
    "wait_p95",
    "wait_p99",
    "response_mean",
    "response_p50",
    "response_p95",
    "response_p99",
    "slowdown_mean",
    "slowdown_p50",
    "slowdown_p95",
    "slowdown_p99",
    "bounded_slowdown_mean",
    "bounded_slowdown_p50",
    "bounded_slowdown_p95",
    "bounded_slowdown_p99",
    "short_jobs",
    "short_wait_mean",
    "short_response_mean",
    "short_slowdown_mean",
    "medium_jobs",
    "medium_wait_mean",
    "medium_response_mean",
    "medium_slowdown_mean",
    "long_jobs",
    "long_wait_mean",
    "long_response_mean",
    "long_slowdown_mean",
    "sessions_per_user",
    "awrt",
];

/// What a finished run leaves behind (`runs/<file>.json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunResult {
    /// The run's id.
    pub run: String,
    /// The axis labels.
    pub labels: Vec<String>,
    /// The seed.
    pub seed: u64,
    /// Every measure of [`METRICS`]; `null` where undefined (no job of a class, say).
    pub metrics: BTreeMap<String, Option<f64>>,
}

/// The measures of a finished run, named as in [`METRICS`].
pub fn measure(run: &Run, r: &SiteRun) -> RunResult {
    let s = &r.summary;
    let c = &r.closed;
    let mut m: Vec<(&str, f64)> = vec![
        ("throughput_submitted_per_hour", c.submitted_per_hour),
        ("throughput_completed_per_hour", c.completed_per_hour),
        ("sessions", c.sessions as f64),
        ("session_length_mean", c.mean_session_jobs),
        ("session_length_median", c.median_session_jobs),
        ("sessions_ended_by_abort", c.ended_by_abort as f64),
        ("sessions_ended_by_cycle", c.ended_by_cycle as f64),
        ("sessions_ended_by_end_of_run", c.ended_by_end_of_run as f64),
        ("utilization", s.utilization),
        ("jobs_measured", s.jobs_measured as f64),
        ("jobs_killed", s.jobs_killed as f64),
        ("processed_work", s.processed_work),
        ("awrt", s.awrt_seconds),
        (
            "sessions_per_user",
            c.sessions as f64 / r.user_groups.len().max(1) as f64,
        ),
    ];
    let four = |names: [&'static str; 4], st: &Stats| {
        [
            (names[0], st.mean),
            (names[1], st.p50),
            (names[2], st.p95),
            (names[3], st.p99),
        ]
    };
    m.extend(four(
        ["wait_mean", "wait_p50", "wait_p95", "wait_p99"],
        &s.wait_seconds,
    ));
    m.extend(four(
        [
            "response_mean",
            "response_p50",
            "response_p95",
            "response_p99",
        ],
        &s.response_seconds,
    ));
    m.extend(four(
        [
            "slowdown_mean",
            "slowdown_p50",
            "slowdown_p95",
            "slowdown_p99",
        ],
        &s.slowdown,
    ));
    m.extend(four(
        [
            "bounded_slowdown_mean",
            "bounded_slowdown_p50",
            "bounded_slowdown_p95",
            "bounded_slowdown_p99",
        ],
        &s.bounded_slowdown,
    ));
    let class_names = [
        [
            "short_jobs",
            "short_wait_mean",
            "short_response_mean",
            "short_slowdown_mean",
        ],
        [
            "medium_jobs",
            "medium_wait_mean",
            "medium_response_mean",
            "medium_slowdown_mean",
        ],
        [
            "long_jobs",
            "long_wait_mean",
            "long_response_mean",
            "long_slowdown_mean",
        ],
    ];
    for (class, names) in s.classes.iter().zip(class_names) {
        m.extend([
            (names[0], class.jobs as f64),
            (names[1], class.wait_seconds.mean),
            (names[2], class.response_seconds.mean),
            (names[3], class.slowdown.mean),
        ]);
    }
    RunResult {
        run: run.id.clone(),
        labels: run.labels.clone(),
        seed: run.seed,
        metrics: m
            .into_iter()
            .map(|(name, v)| (name.to_string(), v.is_finite().then_some(v)))
            .collect(),
    }
}

/// Where a run's result goes.
pub fn result_path(dir: &Path, run: &Run) -> PathBuf {
    dir.join("runs").join(&run.file)
}

/// Reads a run's result if it is there and complete.
pub fn read_result(dir: &Path, run: &Run) -> Option<RunResult> {
    let text = std::fs::read_to_string(result_path(dir, run)).ok()?;
    let result: RunResult = serde_json::from_str(&text).ok()?;
    (result.run == run.id).then_some(result)
}

/// One row of results.csv.
struct Row {
    point: usize,
    metric: &'static str,
    stats: SeedStats,
    difference: Option<(SeedStats, SeedStats)>,
}

/// The results table: for every configuration and measure, the mean and 95 % confidence interval
/// over the seeds and, against the baseline on the same seeds, the paired difference (absolute
/// and relative). Fails if a run has no result.
pub fn table(plan: &Plan, dir: &Path) -> anyhow::Result<String> {
    let mut results: BTreeMap<(usize, u64), RunResult> = BTreeMap::new();
    let mut missing = Vec::new();
    for run in &plan.runs {
        match read_result(dir, run) {
            Some(r) => {
                results.insert((run.point, run.seed), r);
            }
            None => missing.push(run.id.as_str()),
        }
    }
    if !missing.is_empty() {
        anyhow::bail!(
            "{} of {} runs have no result in {} (first: {}); run the sweep again to complete it",
            missing.len(),
            plan.runs.len(),
            dir.join("runs").display(),
            missing[0]
        );
    }
    let values = |point: usize, metric: &str| -> Vec<f64> {
        plan.seeds
            .iter()
            .map(|&seed| {
                results
                    .get(&(point, seed))
                    .and_then(|r| r.metrics.get(metric).copied().flatten())
                    .unwrap_or(f64::NAN)
            })
            .collect()
    };
    let mut rows = Vec::new();
    for point in 0..plan.points() {
        let baseline_point = plan.baseline.as_ref().and_then(|(axis, label)| {
            let other = plan.point_with(point, *axis, label)?;
            (other != point).then_some(other)
        });
        for metric in METRICS {
            let mine = values(point, metric);
            rows.push(Row {
                point,
                metric,
                stats: SeedStats::of(&mine),
                difference: baseline_point.map(|b| paired(&mine, &values(b, metric))),
            });
        }
    }

    let mut csv = String::new();
    for axis in &plan.axes {
        csv.push_str(&axis.name);
        csv.push(',');
    }
    csv.push_str(
        "metric,n,mean,std,ci95_low,ci95_high,diff_mean,diff_ci95_low,diff_ci95_high,rel_diff_mean,rel_diff_ci95_low,rel_diff_ci95_high,q025,median,q975\n",
    );
    for row in rows {
        for label in plan.labels(row.point) {
            csv.push_str(&quote(&label));
            csv.push(',');
        }
        let s = row.stats;
        let _ = write!(
            csv,
            "{},{},{},{},{},{}",
            row.metric,
            s.n,
            num(s.mean),
            num(s.std),
            num(s.ci95_low),
            num(s.ci95_high)
        );
        match row.difference {
            Some((d, r)) => {
                let _ = write!(
                    csv,
                    ",{},{},{},{},{},{}",
                    num(d.mean),
                    num(d.ci95_low),
                    num(d.ci95_high),
                    num(r.mean),
                    num(r.ci95_low),
                    num(r.ci95_high)
                );
            }
            None => csv.push_str(",,,,,,"),
        }
        let _ = writeln!(csv, ",{},{},{}", num(s.q025), num(s.median), num(s.q975));
    }
    Ok(csv)
}

/// Shortest exact text of a number; empty for NaN.
fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

fn quote(text: &str) -> String {
    if text.contains([',', '"', '\n']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// A short table of the headline measures for the terminal: the sweep file's `[report]` measures
/// (by default throughput, session length, utilization, mean response and slowdown) as the mean
/// with the half width of its 95 % interval, or as 2.5 % / median / 97.5 % quantiles.
pub fn headline(plan: &Plan, csv: &str) -> anyhow::Result<String> {
    let mut reader = csv::Reader::from_reader(csv.as_bytes());
    let axes = plan.axes.len();
    let headers = reader
        .headers()
        .context("reading the results table")?
        .clone();
    let column = |name: &str| headers.iter().position(|h| h == name);
    let columns = ["mean", "ci95_high", "q025", "median", "q975"].map(column);
    let wanted = &plan.report.measures;
    let quantiles = plan.report.statistic == Statistic::Quantiles;
    let mut by_point: BTreeMap<Vec<String>, BTreeMap<String, [f64; 5]>> = BTreeMap::new();
    let mut order = Vec::new();
    for record in reader.records() {
        let record = record.context("reading the results table")?;
        let labels: Vec<String> = record.iter().take(axes).map(String::from).collect();
        let metric = record.get(axes).unwrap_or_default().to_string();
        let values = columns.map(|c| {
            c.and_then(|c| record.get(c))
                .and_then(|v| v.parse().ok())
                .unwrap_or(f64::NAN)
        });
        if !by_point.contains_key(&labels) {
            order.push(labels.clone());
        }
        by_point.entry(labels).or_default().insert(metric, values);
    }
    let cell = |labels: &Vec<String>, metric: &str, scale: f64| {
        let [mean, high, q025, median, q975] = by_point[labels]
            .get(metric)
            .copied()
            .unwrap_or([f64::NAN; 5]);
        if quantiles {
            format!(
                "{:.2} / {:.2} / {:.2}",
                q025 * scale,
                median * scale,
                q975 * scale
            )
        } else if (high - mean).is_finite() {
            format!("{:.2} ± {:.2}", mean * scale, (high - mean) * scale)
        } else {
            format!("{:.2}", mean * scale)
        }
    };
    // Each column is as wide as its longest entry (scheduler labels such as
    // `dynp-advanced-artww` are long), plus two spaces.
    let widths: Vec<usize> = plan
        .axes
        .iter()
        .enumerate()
        .map(|(i, axis)| {
            order
                .iter()
                .filter_map(|labels| labels.get(i))
                .map(|l| l.chars().count())
                .chain([axis.name.chars().count(), 12])
                .max()
                .unwrap_or(12)
                + 2
        })
        .collect();
    let measure_widths: Vec<usize> = wanted
        .iter()
        .map(|(metric, title, scale)| {
            order
                .iter()
                .map(|labels| cell(labels, metric, *scale).chars().count())
                .chain([title.chars().count(), 16])
                .max()
                .unwrap_or(16)
                + 2
        })
        .collect();
    let mut t = String::new();
    for (axis, width) in plan.axes.iter().zip(&widths) {
        let _ = write!(t, "{:<width$}", axis.name);
    }
    for ((_, title, _), width) in wanted.iter().zip(&measure_widths) {
        let _ = write!(t, "{title:>width$}");
    }
    t.push('\n');
    for labels in &order {
        for (l, width) in labels.iter().zip(&widths) {
            let _ = write!(t, "{l:<width$}");
        }
        for ((metric, _, scale), width) in wanted.iter().zip(&measure_widths) {
            let _ = write!(t, "{:>width$}", cell(labels, metric, *scale));
        }
        t.push('\n');
    }
    t.push_str(if quantiles {
        "(2.5 % quantile / median / 97.5 % quantile over the seeds)\n"
    } else {
        "(mean ± half width of the 95 % confidence interval over the seeds)\n"
    });
    Ok(t)
}
