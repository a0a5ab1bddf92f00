//! Human-readable summary tables for the terminal.

use std::fmt::Write;

use metrics::{Counted, Summary, Warmup, find_measure};

/// The summary as a plain-text table: counts, utilization, then mean and percentiles of each
/// measure (times in minutes), then the means per runtime class.
pub fn summary_table(title: &str, s: &Summary) -> String {
    let mut t = String::new();
    if !title.is_empty() {
        let _ = writeln!(t, "{title}");
    }
    let input = &s.input;
    if input.read > 0 {
        let _ = writeln!(
            t,
            "  jobs         {} read, {} simulated ({} skipped: {} negative submit, {} negative runtime, {} no processors; {} rejected: wider than the machine)",
            input.read,
            s.jobs_simulated,
            input.skipped(),
            input.skipped_negative_submit,
            input.skipped_negative_runtime,
            input.skipped_no_processors,
            input.rejected_too_wide
        );
    }
    let warmup = match s.warmup {
        Warmup::None => "all jobs".to_string(),
        Warmup::Tsafrir => "Tsafrir warm-up exclusion".to_string(),
        Warmup::Interval {
            start,
            end,
            counted,
        } => format!(
            "submitted from day {:.1} to day {:.1}{}",
            start as f64 / 86_400.0,
            end as f64 / 86_400.0,
            match counted {
                Counted::Submitted => "",
                Counted::Started => ", started by then",
                Counted::Ended => ", ended by then",
            }
        ),
    };
    let _ = writeln!(
        t,
        "  measured     {} jobs ({warmup}); {} killed at their estimate",
        s.jobs_measured, s.jobs_killed
    );
    let days = (s.utilization_window.end - s.utilization_window.start) as f64 / 86_400.0;
    let _ = writeln!(
        t,
        "  utilization  {:.1} % over {:.1} days ({:.3e} processor-seconds)",
        100.0 * s.utilization,
        days,
        s.processed_work
    );
    let _ = writeln!(
        t,
        "  loss of capacity {:.3}; ARTwW {} min; SLDwW_60 {}",
        s.loss_of_capacity,
        number(s.artww_seconds / 60.0),
        number(s.sldww_60)
    );
    if s.jobs_penalized > 0 {
        let _ = writeln!(
            t,
            "  sharing      {} jobs stretched by memory-bandwidth sharing, {} of them past their estimate and killed; {:.2} % penalized runtime",
            s.jobs_penalized, s.jobs_killed_by_sharing, s.penalized_runtime_percent
        );
    }
    let unfairness = s
        .unfairness_seconds
        .map_or("not computed (--fairness)".to_string(), |u| {
            format!("{} min", number(u / 60.0))
        });
    let _ = writeln!(
        t,
        "  accuracy {:.1} % ({} corrections/job); SJFness {:.1} %; unfairness {unfairness}",
        100.0 * s.prediction_accuracy,
        number(s.prediction_corrections),
        100.0 * s.sjfness,
    );
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "  {:<24}{:>12}{:>12}{:>12}{:>12}",
        "", "mean", "p50", "p95", "p99"
    );
    // One row per measure family, its columns the catalogue's measures of that family, printed
    // at the catalogue's scale.
    let input = metrics::MeasureInput {
        summary: s,
        closed_loop: None,
        users: 0,
        policy_usage: None,
        slurm: None,
    };
    for family in ["wait", "response", "slowdown", "bounded_slowdown"] {
        stats_row(&mut t, family, &input);
    }
    let _ = writeln!(t);
    let _ = writeln!(
        t,
        "  {:<24}{:>12}{:>12}{:>12}{:>12}{:>12}",
        "runtime class (means)", "jobs", "wait min", "resp min", "slowdown", "bsld"
    );
    for c in &s.classes {
        let _ = writeln!(
            t,
            "  {:<24}{:>12}{:>12}{:>12}{:>12}{:>12}",
            c.label,
            c.jobs,
            number(c.wait_seconds.mean / 60.0),
            number(c.response_seconds.mean / 60.0),
            number(c.slowdown.mean),
            number(c.bounded_slowdown.mean)
        );
    }
    t
}

/// One row per group of a multi-group site: users, throughput, sessions and its jobs' means.
pub fn groups_table(groups: &[scenario::run::GroupRun]) -> String {
    let mut t = String::new();
    if groups.is_empty() {
        return t;
    }
    let _ = writeln!(
        t,
        "  {:<24}{:>8}{:>12}{:>10}{:>10}{:>12}{:>12}{:>12}",
        "group", "users", "jobs/hour", "sessions", "jobs", "wait min", "resp min", "bsld"
    );
    for g in groups {
        let _ = writeln!(
            t,
            "  {:<24}{:>8}{:>12}{:>10}{:>10}{:>12}{:>12}{:>12}",
            g.name,
            g.users,
            number(g.closed_loop.submitted_per_hour),
            g.closed_loop.sessions,
            g.summary.jobs_measured,
            number(g.summary.wait_seconds.mean / 60.0),
            number(g.summary.response_seconds.mean / 60.0),
            number(g.summary.bounded_slowdown.mean)
        );
    }
    t
}

/// The row of a measure family (`wait`): its mean, p50, p95 and p99 from the measure
/// catalogue, labelled by the family and the printed unit (`wait (min)`).
fn stats_row(t: &mut String, family: &str, input: &metrics::MeasureInput) {
    let columns = ["mean", "p50", "p95", "p99"].map(|c| find_measure(&format!("{family}_{c}")));
    let minutes = columns
        .iter()
        .flatten()
        .any(|m| m.print_scale == 1.0 / 60.0);
    let label = format!(
        "{}{}",
        family.replace('_', " "),
        if minutes { " (min)" } else { "" }
    );
    let cell = |m: Option<&metrics::Measure>| {
        number(m.map_or(f64::NAN, |m| m.value(input) * m.print_scale))
    };
    let _ = writeln!(
        t,
        "  {:<24}{:>12}{:>12}{:>12}{:>12}",
        label,
        cell(columns[0]),
        cell(columns[1]),
        cell(columns[2]),
        cell(columns[3])
    );
}

/// Two decimals, or `-` when there is no value.
fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".to_string()
    }
}
