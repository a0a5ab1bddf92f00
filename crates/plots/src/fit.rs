//! The figures of paper 000's section III from fitted user models (`sitesim fit --plot`): the
//! distributions of think times, breaks, sizes, runtimes, repetitions, batch widths and session
//! lengths per trace and combined, the continue probability against response time with the
//! fitted and the paper's curves, and the daily and weekly submission profiles. PNG, SVG and
//! PDF, each with the CSV of what it draws.

use std::path::{Path, PathBuf};

use fit::Fit;
use plotters::prelude::SeriesLabelPosition;
use usermodel::{Ecdf, Model};

use crate::chart::{Axis, Chart, Figure, Mark, Series, ecdf_steps};
use crate::error::{PlotError, create_dir};
use crate::output::{DEFAULT_DPI, DEFAULT_WIDTH, Print};

/// The choices of the fit figures (`sitesim fit --plot`'s flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FitFigureOptions {
    /// The PNG's resolution, dots per inch (`--dpi`; 150 gives 960 x 640 pixels).
    pub dpi: u32,
}

impl Default for FitFigureOptions {
    fn default() -> FitFigureOptions {
        FitFigureOptions { dpi: DEFAULT_DPI }
    }
}

/// The curves of every trace plus the combined one.
fn per_trace(fit: &Fit) -> Vec<(String, &Model, usize)> {
    let mut all: Vec<(String, &Model, usize)> = fit
        .traces
        .iter()
        .enumerate()
        .map(|(i, t)| (t.trace.name.clone(), &t.model, i))
        .collect();
    all.push(("combined".to_string(), &fit.combined, usize::MAX));
    all
}

fn ecdf_series(
    fit: &Fit,
    pick: impl Fn(&Model) -> Option<&Ecdf>,
    x_of: impl Fn(f64) -> f64,
) -> Vec<Series> {
    per_trace(fit)
        .into_iter()
        .filter_map(|(label, model, i)| {
            pick(model).map(|e| Series {
                label,
                points: ecdf_steps(e.values(), e.cumulative(), &x_of),
                mark: if i == usize::MAX {
                    Mark::Bold
                } else {
                    Mark::Line
                },
                style: i,
                band: None,
            })
        })
        .collect()
}

fn cdf_chart(title: &str, x_label: &str, x: Axis, series: Vec<Series>) -> Chart {
    Chart {
        title: title.to_string(),
        x_label: x_label.to_string(),
        y_label: "cumulative fraction".to_string(),
        x,
        y: (0.0, 1.0),
        series,
        legend: SeriesLabelPosition::LowerRight,
        categories: None,
    }
}

/// Draws the figures of paper 000, section III, from the fitted models into `dir` (created if
/// missing) and returns the files written, in order: each figure as PNG, SVG, PDF and the CSV
/// of what it draws.
pub fn draw_fit_figures(
    fit: &Fit,
    options: &FitFigureOptions,
    dir: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let print = Print::new(DEFAULT_WIDTH, options.dpi)?;
    create_dir(dir)?;
    let minutes = |s: f64| s / 60.0;
    let log10 = |v: f64| v.max(1.0).log10();
    let rules = fit.options.rules;
    let mut charts: Vec<(&str, Chart)> = vec![
        (
            "fig2_think_times",
            cdf_chart(
                "Think times (negative: submitted before earlier jobs ended)",
                "think time (minutes)",
                Axis {
                    from: -240.0,
                    to: 240.0,
                    log: false,
                },
                ecdf_series(fit, |m| Some(&m.think_time), minutes),
            ),
        ),
        (
            "fig4a_think_short",
            cdf_chart(
                "Think times within a session",
                "think time (minutes)",
                Axis {
                    from: 0.0,
                    to: rules.session_threshold as f64 / 60.0,
                    log: false,
                },
                ecdf_series(fit, |m| Some(&m.think_short), minutes),
            ),
        ),
        (
            "fig4b_breaks",
            cdf_chart(
                "Breaks between sessions",
                "break (hours)",
                Axis {
                    from: rules.session_threshold as f64 / 3600.0,
                    to: rules.max_break as f64 / 3600.0,
                    log: false,
                },
                ecdf_series(fit, |m| Some(&m.think_break), |s| s / 3600.0),
            ),
        ),
        (
            "fig5a_sizes",
            cdf_chart(
                "Job sizes",
                "processors (log scale)",
                Axis {
                    from: 0.0,
                    to: 4.0,
                    log: true,
                },
                ecdf_series(fit, |m| Some(&m.size), log10),
            ),
        ),
        (
            "fig5b_runtimes",
            cdf_chart(
                "Job runtimes",
                "runtime (seconds, log scale)",
                Axis {
                    from: 0.0,
                    to: 6.0,
                    log: true,
                },
                ecdf_series(fit, |m| Some(&m.runtime), log10),
            ),
        ),
        (
            "fig6a_size_repetitions",
            cdf_chart(
                "Successive jobs of a user with the same size",
                "jobs in a run of equal size (log scale)",
                Axis {
                    from: 0.0,
                    to: 3.0,
                    log: true,
                },
                ecdf_series(fit, |m| Some(&m.size_repetition), log10),
            ),
        ),
        (
            "fig6b_batch_widths",
            cdf_chart(
                "Batch widths",
                "jobs per batch (log scale)",
                Axis {
                    from: 0.0,
                    to: 3.0,
                    log: true,
                },
                ecdf_series(fit, |m| Some(&m.batch_width), log10),
            ),
        ),
        (
            "session_lengths",
            cdf_chart(
                "Session lengths",
                "jobs per session (log scale)",
                Axis {
                    from: 0.0,
                    to: 3.0,
                    log: true,
                },
                ecdf_series(fit, |m| Some(&m.session_length), log10),
            ),
        ),
    ];
    charts.push(("fig3_continue", continue_chart(fit)));
    charts.push(("fig8a_daily", profile_chart(fit, true)));
    charts.push(("fig8b_weekly", profile_chart(fit, false)));

    let mut drawn = Vec::new();
    for (stem, chart) in charts {
        drawn.extend(chart.save(dir, stem, print)?);
    }
    Ok(drawn)
}

/// Fig. 3: continue fraction against response time, per trace, with the fitted and the paper's
/// curves.
fn continue_chart(fit: &Fit) -> Chart {
    let max_minutes = 360.0;
    let mut series: Vec<Series> = per_trace(fit)
        .into_iter()
        .filter(|(_, _, i)| *i != usize::MAX)
        .map(|(label, model, i)| Series {
            label,
            points: model
                .continuation
                .iter()
                .filter(|b| b.mean_response_minutes <= max_minutes)
                .map(|b| (b.mean_response_minutes, b.continued_fraction))
                .collect(),
            mark: Mark::LinePoints,
            style: i,
            band: None,
        })
        .collect();
    let curve = |f: usermodel::ContinueFit| -> Vec<(f64, f64)> {
        (0..=360)
            .map(|m| (f64::from(m), f.probability(f64::from(m))))
            .collect()
    };
    if let Some(f) = fit::continue_fit(&fit.combined) {
        series.push(Series {
            label: format!("combined fit: {:.2} / ({:.3} r + 1)", f.a, f.b),
            points: curve(f),
            mark: Mark::Bold,
            style: 0,
            band: None,
        });
    }
    series.push(Series {
        label: "paper: 0.8 / (0.05 r + 1)".to_string(),
        points: curve(usermodel::ContinueFit::PAPER),
        mark: Mark::Reference,
        style: 0,
        band: None,
    });
    Chart {
        title: "Probability to continue the session after a batch".to_string(),
        x_label: "response time of the batch's last job (minutes)".to_string(),
        y_label: "fraction followed by a think time under the threshold".to_string(),
        x: Axis {
            from: 0.0,
            to: max_minutes,
            log: false,
        },
        y: (0.0, 1.0),
        series,
        legend: SeriesLabelPosition::UpperRight,
        categories: None,
    }
}

/// Fig. 8: submissions per local hour (daily) or per day of the week (weekly).
fn profile_chart(fit: &Fit, daily: bool) -> Chart {
    let series = per_trace(fit)
        .into_iter()
        .filter_map(|(label, model, i)| {
            let points: Vec<(f64, f64)> = if daily {
                model
                    .daily?
                    .iter()
                    .enumerate()
                    .map(|(h, &f)| (h as f64 + 0.5, f))
                    .collect()
            } else {
                model
                    .weekly?
                    .iter()
                    .enumerate()
                    .map(|(d, &f)| (d as f64 + 1.0, f))
                    .collect()
            };
            Some(Series {
                label,
                points,
                mark: if i == usize::MAX {
                    Mark::Bold
                } else {
                    Mark::LinePoints
                },
                style: i,
                band: None,
            })
        })
        .collect();
    let (title, x_label, x, top) = if daily {
        (
            "Submissions by local hour (day: 07:30-17:30)",
            "hour of the day (local time)",
            Axis {
                from: 0.0,
                to: 24.0,
                log: false,
            },
            0.12,
        )
    } else {
        (
            "Submissions by day of the week",
            "day of the week (1 = Monday)",
            Axis {
                from: 1.0,
                to: 7.0,
                log: false,
            },
            0.3,
        )
    };
    Chart {
        title: title.to_string(),
        x_label: x_label.to_string(),
        y_label: "fraction of submissions".to_string(),
        x,
        y: (0.0, top),
        series,
        legend: SeriesLabelPosition::UpperRight,
        categories: None,
    }
}
