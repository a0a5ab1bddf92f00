//! The sweep's headline table for the terminal.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use scenario::tables::{ResultRow, results_from_reader};
use sweep::plan::{Plan, Statistic};

/// A short table of the headline measures for the terminal: the sweep file's `[report]` measures
/// (by default throughput, session length, utilization, mean response and slowdown) as the mean
/// with the half width of its 95 % interval, or as 2.5 % / median / 97.5 % quantiles.
pub fn headline(plan: &Plan, csv: &str) -> anyhow::Result<String> {
    let table = results_from_reader("the results table", csv.as_bytes())?;
    let wanted = &plan.report.measures;
    let quantiles = plan.report.statistic == Statistic::Quantiles;
    let mut by_point: BTreeMap<&[String], BTreeMap<&str, &ResultRow>> = BTreeMap::new();
    let mut order: Vec<&[String]> = Vec::new();
    for row in &table.rows {
        if !by_point.contains_key(row.labels.as_slice()) {
            order.push(&row.labels);
        }
        by_point
            .entry(&row.labels)
            .or_default()
            .insert(&row.metric, row);
    }
    let cell = |labels: &[String], metric: &str, scale: f64| {
        let [mean, high, q025, median, q975] =
            by_point[labels].get(metric).map_or([f64::NAN; 5], |r| {
                [r.mean, r.ci95_high, r.q025, r.median, r.q975].map(|v| v.unwrap_or(f64::NAN))
            });
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
        .map(|m| {
            order
                .iter()
                .map(|labels| cell(labels, m.name, m.print_scale).chars().count())
                .chain([m.title.chars().count(), 16])
                .max()
                .unwrap_or(16)
                + 2
        })
        .collect();
    let mut t = String::new();
    for (axis, width) in plan.axes.iter().zip(&widths) {
        let _ = write!(t, "{:<width$}", axis.name);
    }
    for (m, width) in wanted.iter().zip(&measure_widths) {
        let _ = write!(t, "{:>width$}", m.title);
    }
    t.push('\n');
    for labels in &order {
        for (l, width) in labels.iter().zip(&widths) {
            let _ = write!(t, "{l:<width$}");
        }
        for (m, width) in wanted.iter().zip(&measure_widths) {
            let _ = write!(t, "{:>width$}", cell(labels, m.name, m.print_scale));
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
