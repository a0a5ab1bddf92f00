//! The figures of a sweep's results table (`sitesim plot`), laid out like Figs. 10-13 of paper 000
//! (section IV-B), each as PNG, SVG and PDF with the CSV of its points beside it, every value
//! with its 95 % confidence interval:
//!
//! - `fig10a_throughput`, `fig10b_session_length`, `fig11a_response`, `fig11b_slowdown`: the
//!   measure against the x axis (users by default), one line per series (scheduler by default);
//! - `fig12a_class_response`, `fig12b_class_slowdown`: per runtime class (<= 1 min, 1-10 min,
//!   > 10 min) at the largest x, one bar per series;
//! - `fig13_relative`: the paired relative difference against the sweep's baseline at the largest
//!   x, signed so that up is better, against CREASY's alpha (or per series when the series are not
//!   CREASY variants).
//!
//! With measures chosen ([`SweepFigureOptions::measures`], `--measure NAME`) it draws each of
//! them against x instead, in a file named after the measure and titled with the catalogue's
//! words and printed unit ([`measure_title`]); with [`SweepFigureOptions::relative`]
//! (`--relative`) their paired relative difference against the sweep's baseline instead of
//! their mean.
//!
//! The table must leave one value on every other axis (choose one with a filter, `--where AXIS=VALUE`);
//! the filters are named in every title and file name, so figures of different slices of one
//! sweep do not overwrite each other. An x axis whose labels are not all numbers (traces,
//! scheduler names) is categorical: one marker with an error bar per value, no joining lines,
//! the series side by side. On a numeric axis the intervals are light bands, or error bars side
//! by side where the bands of two series would overlap. Every interval, band or error bar, is
//! cut at its measure's floor ([`metrics::Measure::floor`]): a mean minus a t quantile can fall
//! below zero (or a bounded slowdown below 1), no run can; a relative difference of a measure
//! with a floor of 0 or more is cut at -100 %.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use plotters::prelude::SeriesLabelPosition;
use scenario::tables::ResultsTable;

use crate::chart::{Axis, BarChart, BarGroup, Chart, ClearLegend, Figure, Mark, Series};
use crate::error::{PlotError, create_dir, ensure, refuse_overwrite};
use crate::output::Print;

/// The choices of the sweep figures (the command line's `plot` flags).
#[derive(Debug, Clone)]
pub struct SweepFigureOptions {
    /// The axis drawn as one line (or bar) per value (`--series`).
    pub series: String,
    /// The axis along x (`--x`): numbers are drawn to scale and joined by lines; any other
    /// labels as categories, one dot with its interval each.
    pub x: String,
    /// Measures to draw against x, one figure each named after the measure, instead of the
    /// paper's Figs. 10-13 (`--measure`, see [`find_measure`]); empty: the paper's figures.
    pub measures: Vec<&'static metrics::Measure>,
    /// Keep only rows where an axis (first) has a value (second) (`--where AXIS=VALUE`); named
    /// in every title and file name.
    pub filters: Vec<(String, String)>,
    /// Draw the chosen measures' paired relative difference against the baseline (results.csv's
    /// `rel_diff_*` columns, in %) instead of their mean (`--relative`; needs `measures`).
    pub relative: bool,
    /// The PNG's resolution, dots per inch (`--dpi`; 150 gives 960 x 640 pixels).
    pub dpi: u32,
    /// The print width, inches (`--width`; [`crate::output::DEFAULT_WIDTH`] gives 960 x 640
    /// SVG pixels); every text is at least [`crate::output::MIN_FONT_PT`] at this width.
    pub width: f64,
    /// Overwrite the figures of an earlier call in `out` (`--force`); without it, a folder
    /// holding any of the files this call would write is refused.
    pub force: bool,
}

/// The paper's figures of a sweep, by file stem (before the filters are appended), in the
/// order they are written; the last, `fig13_relative`, needs a baseline.
const PAPER_FIGURES: [&str; 7] = [
    "fig10a_throughput",
    "fig10b_session_length",
    "fig11a_response",
    "fig11b_slowdown",
    "fig12a_class_response",
    "fig12b_class_slowdown",
    "fig13_relative",
];

/// What [`draw_sweep_figures`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SweepFigures {
    /// The files written, in order (each figure as PNG, SVG, PDF, then the CSV of its points).
    pub files: Vec<PathBuf>,
    /// A line for each figure of the set that was left out, saying why.
    pub left_out: Vec<String>,
}

/// The catalogue's measure named `name` (a `metric` of results.csv), or an error listing the
/// measures.
pub fn find_measure(name: &str) -> Result<&'static metrics::Measure, PlotError> {
    metrics::find_measure(name).ok_or_else(|| {
        PlotError::Invalid(format!(
            "--measure {name:?} is not a measure; the measures are the metric names of results.csv: {}",
            metrics::measure_names().collect::<Vec<_>>().join(", ")
        ))
    })
}

/// Draws the figures of a results table into `out` (created if missing): the paper's Figs.
/// 10-13, or the chosen measures against x. The table must leave one value on every axis other
/// than the series and x axes once filtered.
pub fn draw_sweep_figures(
    table: &ResultsTable,
    options: &SweepFigureOptions,
    out: &Path,
) -> Result<SweepFigures, PlotError> {
    let print = Print::new(options.width, options.dpi)?;
    ensure!(
        !options.relative || !options.measures.is_empty(),
        "--relative draws the chosen measures (--measure NAME) against the baseline"
    );
    let results = Results::select(table, options)?;
    let stems: Vec<String> = if options.measures.is_empty() {
        let drawn = if results.baseline().is_some() { 7 } else { 6 };
        PAPER_FIGURES[..drawn]
            .iter()
            .map(|stem| results.file_stem(stem))
            .collect()
    } else {
        options
            .measures
            .iter()
            .map(|m| match options.relative {
                true => results.file_stem(&format!("{}_relative", m.name)),
                false => results.file_stem(m.name),
            })
            .collect()
    };
    refuse_overwrite(out, &stems, options.force)?;
    create_dir(out)?;
    if options.measures.is_empty() {
        results.draw_all(out, print)
    } else {
        Ok(SweepFigures {
            files: results.draw_measures(out, &options.measures, options.relative, print)?,
            left_out: Vec::new(),
        })
    }
}

/// The numbers of one row of results.csv (NaN where the table has none).
#[derive(Debug, Clone, Copy)]
struct Cell {
    mean: f64,
    low: f64,
    high: f64,
    rel_mean: f64,
    rel_low: f64,
    rel_high: f64,
}

/// results.csv, reduced to a series axis and a numeric x axis.
struct Results {
    series_axis: String,
    x_axis: String,
    /// Series labels in table order.
    series: Vec<String>,
    /// X positions, ascending: the values of a numeric axis, 0, 1, ... of a categorical one.
    xs: Vec<f64>,
    /// The x labels as written in the table, by x value's index.
    x_labels: Vec<String>,
    /// Whether the x axis is categorical (some label is not a number): then the x labels keep
    /// the table's order and are drawn as categories.
    categorical: bool,
    /// The filters, (axis, value), as given.
    filters: Vec<(String, String)>,
    /// (series, x label, metric) -> numbers.
    cells: BTreeMap<(String, String, String), Cell>,
}

impl Results {
    /// The rows of `table` that pass the filters, by series and x.
    fn select(table: &ResultsTable, options: &SweepFigureOptions) -> Result<Results, PlotError> {
        let origin = &table.origin;
        let axes = &table.axes;
        let axis_index = |name: &str| {
            axes.iter().position(|a| a == name).ok_or_else(|| {
                PlotError::Invalid(format!(
                    "{origin}: no axis {name:?}; the table's axes are {}",
                    axes.join(", ")
                ))
            })
        };
        // A sweep of one axis has no series axis: its axis goes along x, as one series,
        // whatever --series and --x say.
        let single = axes.len() == 1;
        let (series_axis, x_axis) = if single {
            ("", axes[0].as_str())
        } else {
            (options.series.as_str(), options.x.as_str())
        };
        let series_column = if single {
            None
        } else {
            Some(axis_index(series_axis)?)
        };
        let x_column = axis_index(x_axis)?;
        ensure!(
            series_column != Some(x_column),
            "--series and --x name the same axis"
        );
        let given = options.filters.clone();
        let filters: Vec<(usize, &str)> = options
            .filters
            .iter()
            .map(|(a, v)| Ok((axis_index(a)?, v.as_str())))
            .collect::<Result<_, PlotError>>()?;

        let mut series = Vec::new();
        // (value if numeric, label), in table order.
        let mut x_values: Vec<(Option<f64>, String)> = Vec::new();
        let mut others: BTreeMap<usize, Vec<String>> = BTreeMap::new();
        let mut cells = BTreeMap::new();
        for row in &table.rows {
            let field = |i: usize| row.labels.get(i).map_or("", String::as_str);
            if filters.iter().any(|&(i, v)| field(i) != v) {
                continue;
            }
            for i in (0..axes.len()).filter(|&i| Some(i) != series_column && i != x_column) {
                let seen = others.entry(i).or_default();
                if !seen.iter().any(|s| s == field(i)) {
                    seen.push(field(i).to_string());
                }
            }
            // the one series of a single-axis sweep is named after its measure's runs
            let name =
                series_column.map_or_else(|| "all runs".to_string(), |c| field(c).to_string());
            if !series.contains(&name) {
                series.push(name.clone());
            }
            let x_label = field(x_column).to_string();
            if !x_values.iter().any(|(_, l)| *l == x_label) {
                let x = x_label.parse::<f64>().ok().filter(|x| x.is_finite());
                x_values.push((x, x_label.clone()));
            }
            let number = |value: Option<f64>| value.unwrap_or(f64::NAN);
            cells.insert(
                (name, x_label, row.metric.clone()),
                Cell {
                    mean: number(row.mean),
                    low: number(row.ci95_low),
                    high: number(row.ci95_high),
                    rel_mean: number(row.rel_diff_mean),
                    rel_low: number(row.rel_diff_ci95_low),
                    rel_high: number(row.rel_diff_ci95_high),
                },
            );
        }
        ensure!(
            !cells.is_empty(),
            "{origin}: no rows{}",
            if filters.is_empty() {
                ""
            } else {
                " match the --where filters"
            }
        );
        for (i, values) in &others {
            ensure!(
                values.len() == 1,
                "{origin}: the axis {:?} has {} values ({}); choose one with --where {}=VALUE",
                axes[*i],
                values.len(),
                values.join(", "),
                axes[*i]
            );
        }
        let numeric: Option<Vec<(f64, String)>> = x_values
            .iter()
            .map(|(x, label)| Some(((*x)?, label.clone())))
            .collect();
        let (xs, x_labels, categorical) = match numeric {
            Some(mut numeric) => {
                numeric.sort_by(|a, b| a.0.total_cmp(&b.0));
                let (xs, labels) = numeric.into_iter().unzip();
                (xs, labels, false)
            }
            None => (
                (0..x_values.len()).map(|i| i as f64).collect(),
                x_values.into_iter().map(|(_, l)| l).collect(),
                true,
            ),
        };
        Ok(Results {
            series_axis: series_axis.to_string(),
            x_axis: x_axis.to_string(),
            series,
            xs,
            x_labels,
            categorical,
            filters: given,
            cells,
        })
    }

    fn cell(&self, series: &str, x: usize, metric: &str) -> Option<Cell> {
        self.cells
            .get(&(
                series.to_string(),
                self.x_labels.get(x)?.clone(),
                metric.to_string(),
            ))
            .copied()
    }

    /// The x axis label with its unit.
    fn x_title(&self) -> String {
        match self.x_axis.as_str() {
            "users" => "site size (users)".to_string(),
            "weeks" => "simulated time (weeks)".to_string(),
            other => other.to_string(),
        }
    }

    /// The filters for a title: ` (load = 0.8)`, or nothing.
    fn where_title(&self) -> String {
        if self.filters.is_empty() {
            return String::new();
        }
        let named: Vec<String> = self
            .filters
            .iter()
            .map(|(axis, value)| format!("{axis} = {value}"))
            .collect();
        format!(" ({})", named.join(", "))
    }

    /// `stem` with the filters appended for a file name (`fig10a_throughput_load-0.8`); only
    /// letters, digits, `.`, `-` and `_` are kept, so any label makes a valid name.
    fn file_stem(&self, stem: &str) -> String {
        let mut out = stem.to_string();
        for (axis, value) in &self.filters {
            out.push('_');
            out.push_str(&safe_name(axis));
            out.push('-');
            out.push_str(&safe_name(value));
        }
        out
    }

    /// A measure against x, one series per value of the series axis: lines with their
    /// confidence bands (or error bars) on a numeric x axis, markers with error bars on a
    /// categorical one. With `relative`, the paired relative difference against the baseline in
    /// % (the baseline itself has none and is left out).
    fn line_chart(
        &self,
        title: &str,
        y_label: &str,
        metric: &str,
        relative: bool,
    ) -> Result<ClearLegend, PlotError> {
        let measure = catalogued(metric)?;
        let mut series = Vec::new();
        let (mut bottom, mut top) = (0.0_f64, 0.0_f64);
        for (i, name) in self.series.iter().enumerate() {
            let cells: Vec<(f64, (f64, f64, f64))> = (0..self.xs.len())
                .filter_map(|x| {
                    let c = self.cell(name, x, metric)?;
                    let shown = if relative {
                        relative_interval(measure, c.rel_mean, c.rel_low, c.rel_high)
                    } else {
                        interval(measure, measure.print_scale, c.mean, c.low, c.high)
                    };
                    Some((self.xs[x], shown))
                })
                .filter(|(_, (mean, _, _))| mean.is_finite())
                .collect();
            if relative && cells.is_empty() {
                continue;
            }
            let band: Vec<(f64, f64, f64)> = cells
                .iter()
                .filter(|(_, (_, low, high))| low.is_finite() && high.is_finite())
                .map(|&(x, (_, low, high))| (x, low, high))
                .collect();
            for &(_, (mean, low, high)) in &cells {
                for v in [mean, low, high] {
                    if v.is_finite() {
                        bottom = bottom.min(v);
                        top = top.max(v);
                    }
                }
            }
            series.push(Series {
                label: name.clone(),
                points: cells.iter().map(|&(x, (mean, _, _))| (x, mean)).collect(),
                mark: if self.categorical {
                    Mark::Points
                } else {
                    Mark::LinePoints
                },
                style: i,
                band: (!band.is_empty()).then_some(band),
            });
        }
        let (from, to) = if self.categorical {
            (-0.5, self.xs.len() as f64 - 0.5)
        } else {
            padded(&self.xs)
        };
        let span = top - bottom;
        Ok(Chart {
            title: format!("{title}{}", self.where_title()),
            x_label: self.x_title(),
            y_label: y_label.to_string(),
            x: Axis {
                from,
                to,
                log: false,
            },
            y: if span > 0.0 {
                (
                    if bottom < 0.0 {
                        bottom - 0.08 * span
                    } else {
                        0.0
                    },
                    top + 0.12 * span.max(top),
                )
            } else {
                (0.0, 1.0)
            },
            series,
            legend: SeriesLabelPosition::UpperLeft,
            categories: self.categorical.then(|| self.x_labels.clone()),
        }
        .with_clear_legend())
    }

    /// Per runtime class at the largest x: one bar (with its interval) per series.
    fn class_chart(&self, title: &str, y_label: &str, measure: &str, scale: f64) -> BarChart {
        let last = self.xs.len().saturating_sub(1);
        let classes = ["short", "medium", "long"];
        let groups = self
            .series
            .iter()
            .map(|name| BarGroup {
                label: name.clone(),
                values: classes
                    .iter()
                    .map(|class| {
                        let metric = format!("{class}_{measure}_mean");
                        match (
                            metrics::find_measure(&metric),
                            self.cell(name, last, &metric),
                        ) {
                            (Some(m), Some(c)) => interval(m, scale, c.mean, c.low, c.high),
                            _ => (f64::NAN, f64::NAN, f64::NAN),
                        }
                    })
                    .collect(),
            })
            .collect();
        BarChart {
            title: format!(
                "{title}, {} = {}{}",
                self.x_axis,
                self.x_labels.get(last).map_or("", String::as_str),
                self.where_title()
            ),
            x_label: "runtime class".to_string(),
            y_label: y_label.to_string(),
            categories: vec![
                "short (<= 1 min)".to_string(),
                "medium (1-10 min)".to_string(),
                "long (> 10 min)".to_string(),
            ],
            groups,
        }
    }

    /// The series with no paired difference: the sweep's baseline.
    fn baseline(&self) -> Option<&str> {
        let last = self.xs.len().checked_sub(1)?;
        let has_difference = |name: &str| {
            self.cell(name, last, "throughput_submitted_per_hour")
                .is_some_and(|c| c.rel_mean.is_finite())
        };
        let baselines: Vec<&String> = self.series.iter().filter(|s| !has_difference(s)).collect();
        (baselines.len() == 1 && baselines.len() < self.series.len()).then(|| baselines[0].as_str())
    }

    /// The one series without paired differences of `metric` while others have them: the
    /// baseline of `--relative`.
    fn baseline_of(&self, metric: &str) -> Option<&str> {
        let has_difference = |name: &str| {
            (0..self.xs.len()).any(|x| {
                self.cell(name, x, metric)
                    .is_some_and(|c| c.rel_mean.is_finite())
            })
        };
        let baselines: Vec<&String> = self.series.iter().filter(|s| !has_difference(s)).collect();
        (baselines.len() == 1 && baselines.len() < self.series.len()).then(|| baselines[0].as_str())
    }

    /// Improvements relative to the baseline at the largest x, up = better (Fig. 13). Against
    /// CREASY's alpha, each measure's points are joined by a line, as in the paper, only when
    /// the sweep has two alphas or more besides the baseline's 0: a line from EASY's 0 to a
    /// single CREASY's 6000 would draw a trend over alphas no run measured, so one CREASY
    /// variant is drawn as points with their intervals. The baseline's 0 (no difference with
    /// itself by construction) has no interval.
    fn relative_chart(&self, baseline: &str) -> ClearLegend {
        let last = self.xs.len().saturating_sub(1);
        // Position of each series on x: CREASY's alpha when every series is EASY or CREASY,
        // otherwise the series' order.
        let alphas: Option<Vec<f64>> = self.series.iter().map(|s| alpha_of(s)).collect();
        let compared = self.series.len().saturating_sub(1);
        let (positions, categories, x_label) = match alphas {
            Some(a) => (a, None, "CREASY alpha (0 = EASY)".to_string()),
            None => (
                (0..self.series.len()).map(|i| i as f64).collect(),
                Some(self.series.clone()),
                self.series_axis.clone(),
            ),
        };
        let measures = [
            ("throughput", "throughput_submitted_per_hour", 1.0),
            ("session length", "session_length_mean", 1.0),
            ("slowdown (lower)", "slowdown_mean", -1.0),
            ("response time (lower)", "response_mean", -1.0),
        ];
        let floor = |metric: &str| {
            metrics::find_measure(metric)
                .and_then(relative_floor)
                .unwrap_or(f64::NEG_INFINITY)
        };
        let mut series = Vec::new();
        let (mut low, mut high) = (0.0_f64, 0.0_f64);
        for (i, (label, metric, sign)) in measures.into_iter().enumerate() {
            let mut rows: Vec<(f64, f64, f64, f64)> = Vec::new();
            for (s, name) in self.series.iter().enumerate() {
                if name == baseline {
                    rows.push((positions[s], 0.0, f64::NAN, f64::NAN));
                } else if let Some(c) = self.cell(name, last, metric) {
                    // cut at the floor before the sign: a measure that cannot fall below 0
                    // cannot fall by more than 100 %
                    let cut = |v: f64| v.max(floor(metric));
                    let (a, b) = (
                        sign * cut(c.rel_low) * 100.0,
                        sign * cut(c.rel_high) * 100.0,
                    );
                    rows.push((positions[s], sign * c.rel_mean * 100.0, a.min(b), a.max(b)));
                }
            }
            rows.retain(|r| r.1.is_finite());
            rows.sort_by(|a, b| a.0.total_cmp(&b.0));
            for r in &rows {
                low = low.min(r.1);
                high = high.max(r.1);
                if r.2.is_finite() && r.3.is_finite() {
                    low = low.min(r.2);
                    high = high.max(r.3);
                }
            }
            series.push(Series {
                label: label.to_string(),
                points: rows.iter().map(|r| (r.0, r.1)).collect(),
                mark: if categories.is_some() || compared < 2 {
                    Mark::Points
                } else {
                    Mark::LinePoints
                },
                style: i,
                band: Some(
                    rows.iter()
                        .filter(|r| r.2.is_finite() && r.3.is_finite())
                        .map(|r| (r.0, r.2, r.3))
                        .collect(),
                ),
            });
        }
        let span = (high - low).max(1.0);
        let (from, to) = padded(&positions);
        Chart {
            title: format!(
                "Improvement over {baseline}, {} = {} (paired, 95 % CI){}",
                self.x_axis,
                self.x_labels.get(last).map_or("", String::as_str),
                self.where_title()
            ),
            x_label,
            y_label: format!("improvement over {baseline} (%)"),
            x: Axis {
                from,
                to,
                log: false,
            },
            y: (low - 0.08 * span, high + 0.08 * span),
            series,
            legend: SeriesLabelPosition::UpperLeft,
            categories,
        }
        .with_clear_legend()
    }

    /// Draws every figure as PNG, SVG, PDF and CSV, printed at `print`, into `dir`.
    fn draw_all(&self, dir: &Path, print: Print) -> Result<SweepFigures, PlotError> {
        for name in PLOTTED {
            catalogued(name)?;
        }
        let charts = [
            (
                "fig10a_throughput",
                self.line_chart(
                    "Throughput",
                    "throughput (jobs submitted per hour)",
                    "throughput_submitted_per_hour",
                    false,
                )?,
            ),
            (
                "fig10b_session_length",
                self.line_chart(
                    "Session length",
                    "mean session length (jobs per session)",
                    "session_length_mean",
                    false,
                )?,
            ),
            (
                "fig11a_response",
                self.line_chart(
                    "Average response time",
                    "mean response time (minutes)",
                    "response_mean",
                    false,
                )?,
            ),
            (
                "fig11b_slowdown",
                self.line_chart(
                    "Average slowdown",
                    "mean slowdown (response / runtime)",
                    "slowdown_mean",
                    false,
                )?,
            ),
        ];
        let mut written = Vec::new();
        for (stem, chart) in &charts {
            written.extend(chart.save(dir, &self.file_stem(stem), print)?);
        }
        let bars = [
            (
                "fig12a_class_response",
                self.class_chart(
                    "Response time per class",
                    "mean response time (minutes)",
                    "response",
                    1.0 / 60.0,
                ),
            ),
            (
                "fig12b_class_slowdown",
                self.class_chart(
                    "Slowdown per class",
                    "mean slowdown (response / runtime)",
                    "slowdown",
                    1.0,
                ),
            ),
        ];
        for (stem, chart) in &bars {
            written.extend(chart.save(dir, &self.file_stem(stem), print)?);
        }
        let mut left_out = Vec::new();
        match self.baseline() {
            Some(baseline) => written.extend(
                self.relative_chart(baseline)
                    .save(dir, &self.file_stem("fig13_relative"), print)?,
            ),
            None => left_out.push(
                "no fig13_relative: the table has no paired differences against one baseline series (set `baseline` in the sweep file)"
                    .to_string(),
            ),
        }
        Ok(SweepFigures {
            files: written,
            left_out,
        })
    }
}

impl Results {
    /// Draws each of `measures` against x (PNG, SVG, PDF and CSV, named after the measure, with
    /// `_relative` when `relative`) into `dir`.
    fn draw_measures(
        &self,
        dir: &Path,
        measures: &[&'static metrics::Measure],
        relative: bool,
        print: Print,
    ) -> Result<Vec<PathBuf>, PlotError> {
        let mut written = Vec::new();
        for measure in measures {
            ensure!(
                self.cells
                    .keys()
                    .any(|(_, _, metric)| metric == measure.name),
                "--measure {}: the table has no rows of this measure",
                measure.name
            );
            let (title, y_label, stem) = if relative {
                let baseline = self.baseline_of(measure.name).ok_or_else(|| {
                    PlotError::Invalid(format!(
                        "--relative: the table has no paired differences of {} against one baseline series (set `baseline` in the sweep file)",
                        measure.name
                    ))
                })?;
                let words = measure_words(measure);
                (
                    format!("{}: change against {baseline} (%)", capitalized(&words)),
                    format!("change against {baseline} (%)"),
                    format!("{}_relative", measure.name),
                )
            } else {
                (
                    measure_title(measure),
                    measure_axis(measure),
                    measure.name.to_string(),
                )
            };
            let chart = self.line_chart(&title, &y_label, measure.name, relative)?;
            written.extend(chart.save(dir, &self.file_stem(&stem), print)?);
        }
        Ok(written)
    }
}

/// The unit a measure is drawn in: its unit after [`metrics::Measure::print_scale`] (minutes
/// for seconds scaled by 1/60, % for fractions scaled by 100); empty for a ratio.
fn printed_unit(measure: &metrics::Measure) -> &'static str {
    match (measure.unit, measure.print_scale) {
        (metrics::Unit::Seconds, s) if (s - 1.0 / 60.0).abs() < 1e-12 => "min",
        (metrics::Unit::Fraction, s) if (s - 100.0).abs() < 1e-12 => "%",
        (unit, _) => unit.symbol(),
    }
}

/// A measure's value interval in its printed unit: (mean, low, high) times `scale`, the ends cut
/// at the measure's floor ([`metrics::Measure::floor`], also in the printed unit). Every band,
/// error bar and bar whisker of the sweep figures goes through here.
fn interval(
    measure: &metrics::Measure,
    scale: f64,
    mean: f64,
    low: f64,
    high: f64,
) -> (f64, f64, f64) {
    let floor = measure.floor.map_or(f64::NEG_INFINITY, |f| f * scale);
    (
        mean * scale,
        (low * scale).max(floor),
        (high * scale).max(floor),
    )
}

/// The least relative difference against a baseline a measure can have: -1 (-100 %) for a
/// measure that cannot fall below 0; none for a measure unbounded below.
fn relative_floor(measure: &metrics::Measure) -> Option<f64> {
    measure.floor.filter(|&f| f >= 0.0).map(|_| -1.0)
}

/// A paired relative difference in %, the ends cut at [`relative_floor`].
fn relative_interval(
    measure: &metrics::Measure,
    mean: f64,
    low: f64,
    high: f64,
) -> (f64, f64, f64) {
    let floor = relative_floor(measure).unwrap_or(f64::NEG_INFINITY);
    let cut = |v: f64| v.max(floor) * 100.0;
    (mean * 100.0, cut(low), cut(high))
}

/// What a measure is, in the catalogue's words ([`metrics::Measure::about`]) without its
/// references: the trailing parentheses go (`(paper 000, section IV-B)`), and of a formula
/// (`(throughput - EASY's) / ...: the share of ...`) only the words after the colon stay.
pub fn measure_words(measure: &metrics::Measure) -> String {
    let mut words = measure.about.trim().to_string();
    // drop trailing parenthesised groups
    while words.ends_with(')') {
        let mut depth = 0;
        let mut open = None;
        for (i, c) in words.char_indices().rev() {
            match c {
                ')' => depth += 1,
                '(' => {
                    depth -= 1;
                    if depth == 0 {
                        open = Some(i);
                        break;
                    }
                }
                _ => {}
            }
        }
        match open {
            Some(0) | None => break,
            Some(i) => words = words[..i].trim_end().to_string(),
        }
    }
    if let Some((_, after)) = words.rsplit_once(": ") {
        words = after.trim().to_string();
    }
    words
}

/// A measure's title for a figure: [`measure_words`], capitalized, with the printed unit, e.g.
/// `Mean wait time (min)`.
pub fn measure_title(measure: &metrics::Measure) -> String {
    let words = capitalized(&measure_words(measure));
    match printed_unit(measure) {
        "" => words,
        unit => format!("{words} ({unit})"),
    }
}

/// A measure's y axis label: [`measure_words`] with the printed unit while that fits beside
/// the axis (48 characters), else the catalogue's short column title with the unit.
fn measure_axis(measure: &metrics::Measure) -> String {
    let words = measure_words(measure);
    let unit = printed_unit(measure);
    let with_unit = |text: &str| match unit {
        "" => text.to_string(),
        unit if text.ends_with(unit) => text.to_string(),
        unit => format!("{text} ({unit})"),
    };
    let long = with_unit(&words);
    if long.chars().count() <= 48 {
        long
    } else {
        with_unit(measure.title)
    }
}

/// `text` with its first letter upper case.
fn capitalized(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// `text` with every character other than letters, digits, `.`, `-` and `_` made `_`.
fn safe_name(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Every measure the figures read from results.csv (names of the catalogue,
/// [`metrics::MEASURES`]).
const PLOTTED: [&str; 10] = [
    "throughput_submitted_per_hour",
    "session_length_mean",
    "response_mean",
    "slowdown_mean",
    "short_response_mean",
    "medium_response_mean",
    "long_response_mean",
    "short_slowdown_mean",
    "medium_slowdown_mean",
    "long_slowdown_mean",
];

/// The catalogue's entry for a measure the figures plot.
fn catalogued(name: &str) -> Result<&'static metrics::Measure, PlotError> {
    metrics::find_measure(name).ok_or_else(|| {
        PlotError::Invalid(format!(
            "the figures plot {name:?}, which is not in the measure catalogue"
        ))
    })
}

/// CREASY's alpha from a scheduler label: `easy` is 0, `creasy-6000` is 6000.
fn alpha_of(label: &str) -> Option<f64> {
    if label == "easy" {
        return Some(0.0);
    }
    label.strip_prefix("creasy-")?.parse().ok()
}

/// The range of `values` with 5 % of room on each side (a unit around a single value).
fn padded(values: &[f64]) -> (f64, f64) {
    let low = values.iter().copied().fold(f64::INFINITY, f64::min);
    let high = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    if !low.is_finite() || !high.is_finite() {
        return (0.0, 1.0);
    }
    let room = if high > low {
        (high - low) * 0.05
    } else {
        0.5_f64.max(low.abs() * 0.1)
    };
    (low - room, high + room)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_plotted_measure_is_catalogued() {
        for name in PLOTTED {
            assert!(catalogued(name).is_ok(), "{name}");
        }
    }

    /// Two series over a categorical x axis, every interval reaching below zero.
    fn wide_intervals(categorical: bool) -> Results {
        let mut cells = BTreeMap::new();
        for series in ["easy", "creasy-6000"] {
            for x in ["KTH", "SDSC"] {
                for metric in ["response_mean", "bounded_slowdown_mean", "capture"] {
                    let cell = Cell {
                        mean: 0.5,
                        low: -2.0,
                        high: 3.0,
                        rel_mean: f64::NAN,
                        rel_low: f64::NAN,
                        rel_high: f64::NAN,
                    };
                    cells.insert((series.into(), x.into(), metric.into()), cell);
                }
            }
        }
        Results {
            series_axis: "scheduler".into(),
            x_axis: "trace".into(),
            series: vec!["easy".into(), "creasy-6000".into()],
            xs: vec![0.0, 1.0],
            x_labels: vec!["KTH".into(), "SDSC".into()],
            categorical,
            filters: vec![("load".into(), "0.8 x".into())],
            cells,
        }
    }

    #[test]
    fn intervals_stop_at_the_measure_floor() {
        let results = wide_intervals(true);
        let lowest = |metric: &str| {
            let chart = results.line_chart("t", "y", metric, false).unwrap();
            chart
                .series
                .iter()
                .flat_map(|s| s.band.iter().flatten())
                .map(|&(_, low, _)| low)
                .fold(f64::INFINITY, f64::min)
        };
        assert_eq!(lowest("response_mean"), 0.0);
        assert_eq!(lowest("bounded_slowdown_mean"), 1.0);
        // Capture has no floor: a run may do worse than EASY.
        assert_eq!(lowest("capture"), -200.0);
    }

    #[test]
    fn every_interval_of_every_figure_stops_at_its_floor() {
        // results whose every interval reaches far below any floor
        let mut wide = table(&["2"], true);
        for row in &mut wide.rows {
            row.ci95_low = Some(-50.0);
            row.rel_diff_ci95_low = row.rel_diff_ci95_low.map(|_| -3.0);
            row.rel_diff_ci95_high = row.rel_diff_ci95_high.map(|_| 2.0);
        }
        let mut chosen = options(&[("weeks", "2")], &[]);
        let results = Results::select(&wide, &chosen).unwrap();
        // lines: the floor of every measure, in its printed unit
        for metric in PLOTTED {
            let floor = catalogued(metric).unwrap().floor.unwrap();
            let chart = results.line_chart("t", "y", metric, false).unwrap();
            for band in chart.series.iter().flat_map(|s| s.band.iter().flatten()) {
                assert_eq!(band.1, floor, "{metric}: {band:?}");
            }
        }
        // bars per class: no whisker below 0
        for (measure, scale) in [("response", 1.0 / 60.0), ("slowdown", 1.0)] {
            let bars = results.class_chart("t", "y", measure, scale);
            for &(_, low, _) in bars.groups.iter().flat_map(|g| g.values.iter()) {
                assert!(low >= 0.0, "{measure}: {low}");
            }
        }
        // the paired improvement: no measure can fall by more than 100 %
        let relative = results.relative_chart("easy");
        for series in &relative.series {
            for &(_, low, high) in series.band.iter().flatten() {
                if series.label.ends_with("(lower)") {
                    assert!(high <= 100.0, "{}: {high}", series.label);
                } else {
                    assert!(low >= -100.0, "{}: {low}", series.label);
                }
            }
        }
        // --relative of a chosen measure likewise
        chosen.measures = vec![find_measure("response_mean").unwrap()];
        chosen.relative = true;
        let chart = results.line_chart("t", "y", "response_mean", true).unwrap();
        assert_eq!(chart.series.len(), 1, "the baseline has no differences");
        for band in chart.series.iter().flat_map(|s| s.band.iter().flatten()) {
            assert_eq!(band.1, -100.0);
        }
        let dir = tempfile::tempdir().unwrap();
        let drawn = draw_sweep_figures(&wide, &chosen, dir.path()).unwrap();
        assert_eq!(
            drawn.files[0],
            dir.path().join("response_mean_relative_weeks-2.png")
        );
    }

    #[test]
    fn measure_titles_are_the_catalogues_words() {
        let title = |name: &str| measure_title(find_measure(name).unwrap());
        assert_eq!(title("wait_mean"), "Mean wait time (min)");
        assert_eq!(title("bounded_slowdown_mean"), "Mean bounded slowdown");
        assert_eq!(
            title("throughput_submitted_per_hour"),
            "Jobs submitted in the measurement window per hour (jobs/h)"
        );
        assert_eq!(
            title("capture"),
            "The share of EASY's headroom captured (%)"
        );
        assert_eq!(
            title("sessions_per_user"),
            "Sessions / simulated users (sessions/user)"
        );
        assert_eq!(
            title("utilization"),
            "Share of the window's processor time used by jobs (%)"
        );
        // every measure gets words, none of them its key
        for measure in metrics::MEASURES {
            let words = measure_words(measure);
            assert!(
                words.len() > 3 && !words.contains('_'),
                "{}: {words}",
                measure.name
            );
        }
    }

    #[test]
    fn categorical_axes_get_dots_and_filters_get_named() {
        let chart = wide_intervals(true)
            .line_chart("Response", "y", "response_mean", false)
            .unwrap();
        assert!(chart.series.iter().all(|s| s.mark == Mark::Points));
        assert_eq!(
            chart.categories,
            Some(vec!["KTH".to_string(), "SDSC".to_string()])
        );
        // The series sit side by side with error bars, not on top of each other.
        assert!(chart.error_bars());
        // each series its own style
        assert_eq!(
            chart.series.iter().map(|s| s.style).collect::<Vec<_>>(),
            [0, 1]
        );
        assert_eq!(chart.title, "Response (load = 0.8 x)");
        assert_eq!(
            wide_intervals(true).file_stem("fig10a_throughput"),
            "fig10a_throughput_load-0.8_x"
        );
        let numeric = wide_intervals(false)
            .line_chart("Response", "y", "response_mean", false)
            .unwrap();
        assert!(numeric.series.iter().all(|s| s.mark == Mark::LinePoints));
        assert_eq!(numeric.categories, None);
    }

    /// A table of schedulers x users x weeks with every plotted measure; with `baseline`, easy
    /// is the baseline of the paired differences.
    fn table(weeks: &[&str], baseline: bool) -> ResultsTable {
        let mut rows = Vec::new();
        for scheduler in ["easy", "creasy-6000"] {
            for users in ["20", "40"] {
                for &week in weeks {
                    for metric in PLOTTED {
                        let differs = baseline && scheduler != "easy";
                        rows.push(scenario::tables::ResultRow {
                            labels: vec![scheduler.into(), users.into(), week.into()],
                            metric: metric.into(),
                            unit: None,
                            n: 3,
                            mean: Some(2.0),
                            std: Some(0.5),
                            ci95_low: Some(1.0),
                            ci95_high: Some(3.0),
                            diff_mean: None,
                            diff_ci95_low: None,
                            diff_ci95_high: None,
                            rel_diff_mean: differs.then_some(0.1),
                            rel_diff_ci95_low: differs.then_some(0.05),
                            rel_diff_ci95_high: differs.then_some(0.15),
                            q025: None,
                            median: None,
                            q975: None,
                        });
                    }
                }
            }
        }
        ResultsTable {
            origin: "results.csv".into(),
            axes: vec!["scheduler".into(), "users".into(), "weeks".into()],
            rows,
        }
    }

    fn options(filters: &[(&str, &str)], measures: &[&str]) -> SweepFigureOptions {
        SweepFigureOptions {
            series: "scheduler".into(),
            x: "users".into(),
            measures: measures.iter().map(|m| find_measure(m).unwrap()).collect(),
            filters: filters
                .iter()
                .map(|&(a, v)| (a.to_string(), v.to_string()))
                .collect(),
            relative: false,
            dpi: 150,
            width: 6.4,
            force: false,
        }
    }

    fn refusal(table: &ResultsTable, options: &SweepFigureOptions) -> String {
        match Results::select(table, options) {
            Ok(_) => panic!("{options:?} accepted"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn the_table_must_leave_one_value_on_every_other_axis() {
        let two_weeks = table(&["1", "2"], true);
        assert_eq!(
            refusal(&two_weeks, &options(&[], &[])),
            "results.csv: the axis \"weeks\" has 2 values (1, 2); choose one with --where weeks=VALUE"
        );
        let chosen = Results::select(&two_weeks, &options(&[("weeks", "2")], &[])).unwrap();
        assert_eq!(chosen.xs, vec![20.0, 40.0]);
        assert_eq!(chosen.series, vec!["easy", "creasy-6000"]);
        assert!(!chosen.categorical);
        assert_eq!(
            refusal(&two_weeks, &options(&[("weeks", "3")], &[])),
            "results.csv: no rows match the --where filters"
        );
        assert_eq!(
            refusal(&two_weeks, &options(&[("load", "1")], &[])),
            "results.csv: no axis \"load\"; the table's axes are scheduler, users, weeks"
        );
        let mut same = options(&[("weeks", "2")], &[]);
        same.x = "scheduler".into();
        assert_eq!(
            refusal(&two_weeks, &same),
            "--series and --x name the same axis"
        );
        assert!(find_measure("wait_p96").is_err());
    }

    #[test]
    fn draws_the_paper_figures_and_says_which_it_left_out() {
        let dir = tempfile::tempdir().unwrap();
        let drawn =
            draw_sweep_figures(&table(&["2"], true), &options(&[], &[]), dir.path()).unwrap();
        assert_eq!(drawn.files.len(), 28);
        assert!(drawn.left_out.is_empty());
        assert!(drawn.files.iter().all(|p| p.is_file()));
        // each figure as PNG, SVG, PDF and the CSV of its points
        let extensions: Vec<String> = drawn.files[..4]
            .iter()
            .map(|p| p.extension().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(extensions, ["png", "svg", "pdf", "csv"]);
        // a second call into the same folder is refused, and allowed with force
        let again = draw_sweep_figures(&table(&["2"], true), &options(&[], &[]), dir.path())
            .unwrap_err()
            .to_string();
        assert_eq!(
            again,
            format!(
                "{} already holds figures (fig10a_throughput.png, fig10a_throughput.svg, fig10a_throughput.pdf and 25 more); pass --force to overwrite them, or choose another folder with --out",
                dir.path().display()
            )
        );
        let forced = SweepFigureOptions {
            force: true,
            ..options(&[], &[])
        };
        let without = draw_sweep_figures(&table(&["2"], false), &forced, dir.path()).unwrap();
        assert_eq!(without.files.len(), 24);
        assert_eq!(without.left_out.len(), 1);
        assert!(without.left_out[0].starts_with("no fig13_relative"));
        let chosen = options(&[("weeks", "2")], &["response_mean"]);
        let measures = draw_sweep_figures(&table(&["2"], true), &chosen, dir.path()).unwrap();
        assert_eq!(
            measures.files,
            [
                dir.path().join("response_mean_weeks-2.png"),
                dir.path().join("response_mean_weeks-2.svg"),
                dir.path().join("response_mean_weeks-2.pdf"),
                dir.path().join("response_mean_weeks-2.csv")
            ]
        );
        let svg = std::fs::read_to_string(dir.path().join("response_mean_weeks-2.svg")).unwrap();
        assert!(
            svg.contains("Mean response time (min) (weeks = 2)"),
            "the title is the catalogue's words and unit"
        );
        let missing = options(&[], &["wait_p95"]);
        let err = draw_sweep_figures(&table(&["2"], true), &missing, dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "--measure wait_p95: the table has no rows of this measure"
        );
    }

    #[test]
    fn every_text_is_at_least_7_points_at_every_width() {
        let dir = tempfile::tempdir().unwrap();
        // long category names (wrapped under the axis) and the paper's figures
        let mut categories = table(&["2"], true);
        for row in &mut categories.rows {
            row.labels[1] = format!("a long site name {}", row.labels[1]);
        }
        for width in [3.3, 6.4, 6.8, 2.0, 4.5, 12.0] {
            let out = dir.path().join(width.to_string());
            let chosen = SweepFigureOptions {
                width,
                ..options(&[], &[])
            };
            let mut files = draw_sweep_figures(&table(&["2"], true), &chosen, &out)
                .unwrap()
                .files;
            let measures = SweepFigureOptions {
                width,
                ..options(&[], &["response_mean", "slowdown_mean"])
            };
            files.extend(
                draw_sweep_figures(&categories, &measures, &out)
                    .unwrap()
                    .files,
            );
            let svgs: Vec<&PathBuf> = files
                .iter()
                .filter(|p| p.extension().is_some_and(|e| e == "svg"))
                .collect();
            assert_eq!(svgs.len(), 9);
            for path in svgs {
                let svg = std::fs::read_to_string(path).unwrap();
                let (pixels, points) = crate::output::font_points(&svg, width);
                assert_eq!(pixels, (width * 150.0).round(), "{}", path.display());
                assert!(points.len() >= 5, "{}: {points:?}", path.display());
                let smallest = points.iter().copied().fold(f64::INFINITY, f64::min);
                assert!(
                    smallest >= crate::output::MIN_FONT_PT,
                    "{}: a text of {smallest:.2} pt",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn one_creasy_against_easy_is_not_joined_across_the_alphas_between() {
        // easy and creasy-6000 only: points with intervals, no line from 0 to 6000
        let two = Results::select(&table(&["2"], true), &options(&[("weeks", "2")], &[])).unwrap();
        let chart = two.relative_chart("easy");
        assert!(chart.series.iter().all(|s| s.mark == Mark::Points));
        assert_eq!(chart.series[0].points, [(0.0, 0.0), (6000.0, 10.0)]);
        // the baseline's zero has no interval: only creasy-6000's is drawn
        let band = chart.series[0].band.as_ref().unwrap();
        assert_eq!(band.len(), 1);
        assert_eq!(band[0].0, 6000.0);
        // with two alphas or more the measured ones are joined, as in the paper's Fig. 13
        let mut three = table(&["2"], true);
        let more: Vec<_> = three
            .rows
            .iter()
            .filter(|r| r.labels[0] == "creasy-6000")
            .map(|r| {
                let mut r = r.clone();
                r.labels[0] = "creasy-1500".into();
                r
            })
            .collect();
        three.rows.extend(more);
        let three = Results::select(&three, &options(&[("weeks", "2")], &[])).unwrap();
        let chart = three.relative_chart("easy");
        assert!(chart.series.iter().all(|s| s.mark == Mark::LinePoints));
        assert_eq!(
            chart.series[0]
                .points
                .iter()
                .map(|p| p.0)
                .collect::<Vec<_>>(),
            [0.0, 1500.0, 6000.0]
        );
    }

    #[test]
    fn alpha_from_labels() {
        assert_eq!(alpha_of("easy"), Some(0.0));
        assert_eq!(alpha_of("creasy-6000"), Some(6000.0));
        assert_eq!(alpha_of("conservative"), None);
    }
}
