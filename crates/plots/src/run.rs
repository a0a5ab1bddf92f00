//! The figures of one run or replay (`sitesim plot-run`) from its output directory's tables
//! ([`RunTables`]: its jobs, its machine and, when batsim_jobs.csv is there, the processors each
//! job held): utilization and queue length over time, a Gantt chart of a time window (the
//! processors each job held), and the distributions of wait and response per runtime class.
//! PNG and SVG, like the sweep figures.

use std::path::{Path, PathBuf};

use metrics::JobRecord;
use plotters::coord::Shift;
use plotters::prelude::*;
use scenario::batsim::Intervals;
use scenario::tables::{JobRow, Placement, RunSummary, RunTables};

use crate::chart::{
    Axis, Chart, DrawError, Figure, Mark, Series, ecdf_steps, format_number, titled_chart,
};
use crate::error::{PlotError, create_dir, ensure};

const DAY: f64 = 86_400.0;

/// The choices of the run figures (the command line's `plot-run` flags).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFigureOptions {
    /// The Gantt chart's first day (days since time 0 of the run or trace); `None`: the middle
    /// of the run, rounded down to a whole day.
    pub from_day: Option<f64>,
    /// The Gantt chart's length in days (more than 0).
    pub days: f64,
    /// The width of the utilization and queue figures' bins, seconds; `None`: the smallest
    /// divisor of a day (or whole number of days) giving at most 2000 bins.
    pub bin_seconds: Option<i64>,
}

/// Draws the figures of one run into `out` (created if missing) and returns the files written,
/// in order: utilization, queue, gantt, wait_cdf and response_cdf, each as PNG and SVG. The
/// Gantt chart shows the placements when there is one per job (batsim_jobs.csv; on a machine of
/// nodes it holds the cluster's own placement); otherwise processors are assigned as
/// [`scenario::batsim::allocate`] does.
pub fn draw_run_figures(
    run: &RunTables,
    options: &RunFigureOptions,
    out: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let jobs = &run.jobs;
    ensure!(!jobs.is_empty(), "the run has no jobs to draw");
    // Every option is checked before the first figure is drawn, so a bad one leaves none.
    ensure!(
        options.days.is_finite() && options.days > 0.0,
        "--days must be a number > 0, got {}",
        options.days
    );
    if let Some(from) = options.from_day {
        ensure!(
            from.is_finite(),
            "--from must be a number of days, got {from}"
        );
    }
    if let Some(bin) = options.bin_seconds {
        ensure!(
            bin > 0,
            "--bin must be a whole number of seconds > 0, got {bin}"
        );
    }
    create_dir(out)?;
    let mut written = Vec::new();
    written.extend(over_time(
        jobs,
        run.summary.processors,
        options.bin_seconds,
        out,
    )?);
    written.extend(gantt(
        jobs,
        &run.summary,
        run.placements.as_deref(),
        options,
        out,
    )?);
    written.extend(distributions(jobs, out)?);
    Ok(written)
}

/// Bin widths that divide a day, seconds, then whole days: the binned figures use the first that
/// keeps a run under [`MAX_BINS`] bins, so bins never straddle the daily cycle unevenly.
const BIN_CHOICES: [i64; 16] = [
    60,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10_800,
    21_600,
    43_200,
    86_400,
    172_800,
    604_800,
    2_419_200,
    31_536_000,
    315_360_000,
];

/// The most bins a binned figure draws by default.
const MAX_BINS: i64 = 2000;

/// The default bin width for a run spanning `from..to` seconds: the smallest of
/// [`BIN_CHOICES`] giving at most [`MAX_BINS`] bins.
pub fn default_bin(from: i64, to: i64) -> i64 {
    let span = to.saturating_sub(from).max(1);
    BIN_CHOICES
        .into_iter()
        .find(|&b| span / b < MAX_BINS)
        .unwrap_or(BIN_CHOICES[BIN_CHOICES.len() - 1])
}

/// The mean of a step function (`changes`: time and change, summed) over bins of `bin` seconds
/// aligned to multiples of `bin` (from time 0), covering `from..to`: (bin middle in days, mean).
/// Exact integer arithmetic: the time of every change is a whole second, so each piece of the
/// function is added to the bins it covers by whole seconds, however long the run.
fn binned_mean(mut changes: Vec<(i64, f64)>, from: i64, to: i64, bin: i64) -> Vec<(f64, f64)> {
    changes.sort_unstable_by_key(|a| a.0);
    let bin = bin.max(1);
    let first = from.div_euclid(bin);
    let last = (to.max(from + 1) - 1).div_euclid(bin);
    let count = usize::try_from(last - first + 1).unwrap_or(0);
    let mut area = vec![0.0; count];
    let mut add = |a: i64, e: i64, level: f64| {
        // spread level over [a, e) into the bins it covers
        let mut t = a;
        while t < e {
            let b = t.div_euclid(bin);
            let bin_end = ((b + 1) * bin).min(e);
            if let Some(slot) = usize::try_from(b - first)
                .ok()
                .and_then(|k| area.get_mut(k))
            {
                *slot += level * (bin_end - t) as f64;
            }
            t = bin_end;
        }
    };
    let (mut level, mut at) = (0.0, from);
    for (t, change) in changes {
        let t = t.clamp(from, to);
        if t > at {
            add(at, t, level);
            at = t;
        }
        level += change;
    }
    area.iter()
        .enumerate()
        .map(|(k, a)| {
            let start = (first + k as i64) * bin;
            // the covered part of the bin (the first and last may be cut by from..to)
            let covered = ((start + bin).min(to) - start.max(from)).max(1);
            ((start as f64 + bin as f64 / 2.0) / DAY, a / covered as f64)
        })
        .collect()
}

fn over_time(
    jobs: &[JobRow],
    machine: u32,
    bin: Option<i64>,
    out: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let from = jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    let to = jobs
        .iter()
        .map(|j| j.end)
        .max()
        .unwrap_or(from)
        .max(from + 1);
    let bin = bin.unwrap_or_else(|| default_bin(from, to));
    let busy: Vec<(i64, f64)> = jobs
        .iter()
        .flat_map(|j| {
            let p = f64::from(j.processors) * 100.0 / f64::from(machine);
            [(j.start, p), (j.end, -p)]
        })
        .collect();
    let waiting: Vec<(i64, f64)> = jobs
        .iter()
        .flat_map(|j| [(j.submit, 1.0), (j.start, -1.0)])
        .collect();
    let x = Axis {
        from: from as f64 / DAY,
        to: to as f64 / DAY,
        log: false,
    };
    let bin_width = bin_words(bin);
    let utilization = binned_mean(busy, from, to, bin);
    let queue = binned_mean(waiting, from, to, bin);
    let top = |points: &[(f64, f64)]| points.iter().map(|p| p.1).fold(1.0, f64::max) * 1.05;
    let mut written = Chart {
        title: format!("Utilization (mean over {bin_width} bins; {machine} processors)"),
        x_label: "time (days)".into(),
        y_label: "utilization (%)".into(),
        x,
        y: (0.0, 105.0),
        series: vec![Series {
            label: "busy processors".into(),
            points: utilization,
            mark: Mark::Line,
            color: 0,
            band: None,
        }],
        legend: SeriesLabelPosition::LowerRight,
        categories: None,
    }
    .with_clear_legend()
    .save_png_and_svg(out, "utilization")?;
    written.extend(
        Chart {
            title: format!("Queue length (mean over {bin_width} bins)"),
            x_label: "time (days)".into(),
            y_label: "waiting jobs".into(),
            x,
            y: (0.0, top(&queue)),
            series: vec![Series {
                label: "waiting jobs".into(),
                points: queue,
                mark: Mark::Line,
                color: 3,
                band: None,
            }],
            legend: SeriesLabelPosition::UpperRight,
            categories: None,
        }
        .with_clear_legend()
        .save_png_and_svg(out, "queue")?,
    );
    Ok(written)
}

/// A bin width in words: `1 h`, `10 min`, `2 d`.
fn bin_words(bin: i64) -> String {
    if bin % 86_400 == 0 {
        format!("{} d", bin / 86_400)
    } else if bin % 3600 == 0 {
        format!("{} h", bin / 3600)
    } else if bin % 60 == 0 {
        format!("{} min", bin / 60)
    } else {
        format!("{bin} s")
    }
}

/// A Gantt chart: one rectangle per (job, run of processors) in a time window.
struct Gantt {
    title: String,
    from: f64,
    to: f64,
    machine: u32,
    /// (job id, start day, end day, first processor, last processor)
    boxes: Vec<(i64, f64, f64, u32, u32)>,
}

impl Figure for Gantt {
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let mut chart = titled_chart(&root, &self.title).build_cartesian_2d(
            0.0..(self.to - self.from) * 24.0,
            0.0..f64::from(self.machine),
        )?;
        chart
            .configure_mesh()
            .x_desc(format!("hours since day {}", self.from))
            .y_desc("processor")
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .x_label_formatter(&|v| format_number(*v))
            .y_label_formatter(&|v| format_number(*v))
            .disable_mesh()
            .draw()?;
        let palette = [
            RGBColor(0x8d, 0xd3, 0xc7),
            RGBColor(0xff, 0xff, 0xb3),
            RGBColor(0xbe, 0xba, 0xda),
            RGBColor(0xfb, 0x80, 0x72),
            RGBColor(0x80, 0xb1, 0xd3),
            RGBColor(0xfd, 0xb4, 0x62),
            RGBColor(0xb3, 0xde, 0x69),
            RGBColor(0xfc, 0xcd, 0xe5),
        ];
        let clip = |t: f64| (t.clamp(self.from, self.to) - self.from) * 24.0;
        let corners = |s: f64, e: f64, a: u32, b: u32| {
            [(clip(s), f64::from(a)), (clip(e), f64::from(b) + 1.0)]
        };
        chart.draw_series(self.boxes.iter().map(|&(id, s, e, a, b)| {
            let color = palette[id.unsigned_abs() as usize % palette.len()];
            Rectangle::new(corners(s, e, a, b), color.filled())
        }))?;
        // outlines only while they do not hide the boxes
        if self.boxes.len() <= 600 {
            chart.draw_series(self.boxes.iter().map(|&(_, s, e, a, b)| {
                Rectangle::new(corners(s, e, a, b), RGBColor(90, 90, 90).stroke_width(1))
            }))?;
        }
        root.present()?;
        Ok(())
    }
}

/// The processors each job held: the placements when there is one per job, otherwise as
/// [`scenario::batsim::allocate`] assigns them.
fn held_processors(jobs: &[JobRow], placements: Option<&[Placement]>) -> Vec<Intervals> {
    if let Some(placed) = placements.filter(|p| p.len() == jobs.len()) {
        return placed.iter().map(|p| p.processors.clone()).collect();
    }
    let records: Vec<JobRecord> = jobs
        .iter()
        .map(|j| JobRecord {
            job_id: j.job_id,
            submit: j.submit,
            start: j.start,
            end: j.end,
            processors: j.processors,
            ..JobRecord::default()
        })
        .collect();
    scenario::batsim::allocate(&records)
}

fn gantt(
    jobs: &[JobRow],
    summary: &RunSummary,
    placements: Option<&[Placement]>,
    options: &RunFigureOptions,
    out: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let held = held_processors(jobs, placements);
    let machine = held
        .iter()
        .flatten()
        .map(|&(_, b)| b + 1)
        .max()
        .unwrap_or(1)
        .max(summary.processors);
    let first = jobs.iter().map(|j| j.start).min().unwrap_or(0) as f64 / DAY;
    let last = jobs.iter().map(|j| j.end).max().unwrap_or(0) as f64 / DAY;
    let from = options.from_day.unwrap_or(((first + last) / 2.0).floor());
    let to = from + options.days;
    let mut boxes = Vec::new();
    for (j, set) in jobs.iter().zip(&held) {
        let (s, e) = (j.start as f64 / DAY, j.end as f64 / DAY);
        if e > from && s < to && e > s {
            boxes.extend(set.iter().map(|&(a, b)| (j.job_id, s, e, a, b)));
        }
    }
    let shown = boxes
        .iter()
        .map(|b| b.0)
        .collect::<std::collections::BTreeSet<_>>();
    Gantt {
        title: format!("Gantt chart, days {from} to {to} ({} jobs)", shown.len()),
        from,
        to,
        machine,
        boxes,
    }
    .save_png_and_svg(out, "gantt")
}

/// The runtime classes of the summary: at most 1 min, 1-10 min, over 10 min.
const CLASSES: [(&str, i64, i64); 3] = [
    ("runtime <= 1 min", 0, 60),
    ("1-10 min", 61, 600),
    ("> 10 min", 601, i64::MAX),
];

fn distributions(jobs: &[JobRow], out: &Path) -> Result<Vec<PathBuf>, PlotError> {
    let mut written = Vec::new();
    for (stem, what, value) in [
        (
            "wait_cdf",
            "wait",
            (|j: &JobRow| j.start - j.submit) as fn(&JobRow) -> i64,
        ),
        ("response_cdf", "response", |j: &JobRow| j.end - j.submit),
    ] {
        let mut series = Vec::new();
        let mut top: f64 = 1.0;
        for (color, &(label, lo, hi)) in CLASSES.iter().enumerate() {
            let mut values: Vec<i64> = jobs
                .iter()
                .filter(|j| (lo..=hi).contains(&(j.end - j.start)))
                .map(|j| value(j).max(1))
                .collect();
            if values.is_empty() {
                continue;
            }
            values.sort_unstable();
            let n = values.len() as f64;
            let mut distinct = Vec::new();
            let mut cumulative = Vec::new();
            for (i, &v) in values.iter().enumerate() {
                if values.get(i + 1) != Some(&v) {
                    distinct.push(v);
                    cumulative.push((i + 1) as f64 / n);
                }
            }
            top = top.max(*values.last().unwrap_or(&1) as f64);
            series.push(Series {
                label: format!("{label} ({} jobs)", values.len()),
                points: ecdf_steps(&distinct, &cumulative, f64::log10),
                mark: Mark::Line,
                color,
                band: None,
            });
        }
        written.extend(
            Chart {
                title: format!("Distribution of {what} per runtime class"),
                x_label: format!("{what} (s, log scale; below 1 s drawn at 1 s)"),
                y_label: "share of jobs (cumulative)".into(),
                x: Axis {
                    from: 0.0,
                    to: top.log10().ceil().max(1.0),
                    log: true,
                },
                y: (0.0, 1.0),
                series,
                legend: SeriesLabelPosition::LowerRight,
                categories: None,
            }
            .with_clear_legend()
            .save_png_and_svg(out, stem)?,
        );
    }
    Ok(written)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(job_id: i64, submit: i64, start: i64, end: i64, processors: u32) -> JobRow {
        JobRow {
            job_id,
            user: 1,
            group: None,
            session: None,
            batch: None,
            submit,
            start,
            end,
            processors,
            runtime: end - start,
            estimate: end - start,
            killed: false,
            wait: start - submit,
            response: end - submit,
            slowdown: 1.0,
            bounded_slowdown: 1.0,
        }
    }

    fn run(jobs: Vec<JobRow>, placements: Option<Vec<Placement>>) -> RunTables {
        RunTables {
            jobs,
            summary: RunSummary { processors: 8 },
            placements,
        }
    }

    #[test]
    fn the_mean_of_a_step_function_per_bin() {
        // 4 busy over [0, 50), 2 over [50, 100): bins of 50 s
        let changes = vec![(0, 4.0), (50, -2.0), (100, -2.0)];
        let bins = binned_mean(changes, 0, 100, 50);
        assert_eq!(bins, vec![(25.0 / DAY, 4.0), (75.0 / DAY, 2.0)]);
        // a change inside a bin is weighted by its share of the bin (the steps end at `to`, as
        // every job's end is a change)
        let bins = binned_mean(vec![(0, 1.0), (25, 1.0), (100, -2.0)], 0, 100, 100);
        assert_eq!(bins, vec![(50.0 / DAY, 1.75)]);
        // bins are aligned to multiples of their width; a cut bin is a mean over its part
        let bins = binned_mean(vec![(30, 2.0), (150, -2.0)], 30, 150, 100);
        assert_eq!(bins, vec![(50.0 / DAY, 2.0), (150.0 / DAY, 2.0)]);
    }

    #[test]
    fn a_run_longer_than_two_to_the_24_seconds_is_binned() {
        // A float clock stops moving past 2^24 s in steps of a fraction of a second; whole
        // seconds do not. 20 years of one job after another.
        let year = 365 * 86_400;
        let changes: Vec<(i64, f64)> = (0..20)
            .flat_map(|y| [(y * year, 1.0), (y * year + year / 2, -1.0)])
            .collect();
        let bin = default_bin(0, 20 * year);
        assert_eq!(bin % 86_400, 0, "whole days: {bin}");
        assert_eq!(86_400 % default_bin(0, year), 0, "a divisor of a day");
        let bins = binned_mean(changes, 0, 20 * year, bin);
        assert!(bins.len() <= 2 * MAX_BINS as usize, "{}", bins.len());
        let mean: f64 = bins.iter().map(|b| b.1).sum::<f64>() / bins.len() as f64;
        assert!((mean - 0.5).abs() < 0.01, "{mean}");
        assert_eq!(default_bin(0, 86_400), 60);
        assert_eq!(bin_words(3600), "1 h");
        assert_eq!(bin_words(86_400), "1 d");
    }

    #[test]
    fn placements_are_used_only_when_there_is_one_per_job() {
        let jobs = vec![job(1, 0, 0, 100, 2), job(2, 0, 0, 100, 1)];
        let placed = vec![
            Placement {
                job_id: 1,
                processors: vec![(4, 5)],
            },
            Placement {
                job_id: 2,
                processors: vec![(7, 7)],
            },
        ];
        assert_eq!(
            held_processors(&jobs, Some(&placed)),
            vec![vec![(4, 5)], vec![(7, 7)]]
        );
        let allocated = vec![vec![(0, 1)], vec![(2, 2)]];
        assert_eq!(held_processors(&jobs, Some(&placed[..1])), allocated);
        assert_eq!(held_processors(&jobs, None), allocated);
    }

    #[test]
    fn every_figure_is_written_as_png_and_svg() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("figures");
        let jobs = vec![
            job(1, 0, 30, 4000, 4),
            job(2, 10, 4000, 9000, 8),
            job(3, 20, 60, 90, 1),
        ];
        let options = RunFigureOptions {
            from_day: None,
            days: 1.0,
            bin_seconds: None,
        };
        let written = draw_run_figures(&run(jobs, None), &options, &out).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            names,
            [
                "utilization.png",
                "utilization.svg",
                "queue.png",
                "queue.svg",
                "gantt.png",
                "gantt.svg",
                "wait_cdf.png",
                "wait_cdf.svg",
                "response_cdf.png",
                "response_cdf.svg"
            ]
        );
        assert!(written.iter().all(|p| p.starts_with(&out) && p.is_file()));
        let gantt = std::fs::read_to_string(out.join("gantt.svg")).unwrap();
        assert!(
            gantt.contains("Gantt chart, days 0 to 1 (3 jobs)"),
            "{gantt}"
        );
    }

    #[test]
    fn an_empty_run_or_window_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let options = RunFigureOptions {
            from_day: Some(0.0),
            days: 0.0,
            bin_seconds: None,
        };
        let one = || run(vec![job(1, 0, 0, 10, 1)], None);
        let err = draw_run_figures(&one(), &options, dir.path()).unwrap_err();
        assert_eq!(err.to_string(), "--days must be a number > 0, got 0");
        // Nothing drawn: every option is checked first.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        for bad in [
            RunFigureOptions {
                days: f64::NAN,
                ..options
            },
            RunFigureOptions {
                from_day: Some(f64::NAN),
                days: 1.0,
                ..options
            },
            RunFigureOptions {
                days: 1.0,
                bin_seconds: Some(0),
                ..options
            },
        ] {
            assert!(draw_run_figures(&one(), &bad, dir.path()).is_err());
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let err = draw_run_figures(&run(Vec::new(), None), &options, dir.path()).unwrap_err();
        assert_eq!(err.to_string(), "the run has no jobs to draw");
    }
}
