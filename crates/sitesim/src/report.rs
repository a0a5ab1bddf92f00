//! Human-readable summary tables for the terminal.

use std::fmt::Write;

use metrics::MeasureInput;

/// The jobs' part of the terminal summary, laid out by [`metrics::console`] from the measure
/// catalogue (what was read and measured, utilization, the measures of papers 001-003, the
/// percentiles and the runtime classes), then the catalogue's measures that layout does not
/// place (a new measure reaches the terminal with its catalogue entry alone).
pub fn summary_table(input: &MeasureInput) -> String {
    let mut t = metrics::console::job_lines(input);
    t.push_str(&metrics::console::more_catalogue_measures(input));
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

/// Two decimals, or `-` when there is no value.
fn number(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.2}")
    } else {
        "-".to_string()
    }
}
