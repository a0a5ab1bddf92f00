//! The figures of one run or replay (`sitesim plot-run`) from its output directory's tables
//! ([`RunTables`]: its jobs, its machine and, when batsim_jobs.csv is there, the processors each
//! job held; on a machine of node types, nodes.csv): utilization (on a machine of node types
//! with GPUs or memory, of each beside the CPUs) and queue length over time, a Gantt chart of a time window (the
//! processors each job held), and the distributions of wait and response per runtime class.
//! PNG and SVG, like the sweep figures.
//!
//! A run with outages or node failures (outages.csv) has them shaded: the utilization figure
//! shows the processors out of service as a grey area under its top, failures included; the
//! queue figure and the Gantt chart shade the hours an outage (maintenance, drain, down period)
//! was in effect. Failures are left out of those two: a node under repair is the common case on
//! a large machine, and shading each would grey most of the run.

use std::path::{Path, PathBuf};

use metrics::JobRecord;
use plotters::coord::Shift;
use plotters::prelude::*;
use scenario::batsim::Intervals;
use scenario::outages::{OutOfService, OutOfServiceKind};
use scenario::tables::{JobRow, NodeHeld, NodeTables, Placement, RunSummary, RunTables};

use crate::chart::{
    AXIS_PT, Axis, Chart, DrawError, Figure, Mark, Series, TICK_PT, char_width, ecdf_steps, font,
    format_number, frame, plot_area, ticks, titled_chart,
};
use crate::error::{PlotError, create_dir, ensure, refuse_overwrite};
use crate::output::{Print, Tidy, number};
use crate::style::{Block, Style};

const DAY: f64 = 86_400.0;

/// The choices of the run figures (the command line's `plot-run` flags).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunFigureOptions {
    /// The Gantt chart's first day (days since time 0 of the run or trace); `None`: the middle
    /// of the run, rounded down to a whole day.
    pub from_day: Option<f64>,
    /// The Gantt chart's length in days (more than 0).
    pub days: f64,
    /// The width of the utilization and queue figures' bins, seconds; `None`: [`default_bin`]
    /// (a divisor of a day, a day or a week, giving at most [`MAX_BINS`] bins).
    pub bin_seconds: Option<i64>,
    /// The PNG's resolution, dots per inch (`--dpi`; 150 gives 960 x 640 pixels).
    pub dpi: u32,
    /// The print width, inches (`--width`; [`crate::output::DEFAULT_WIDTH`] gives 960 x 640
    /// SVG pixels); every text is at least [`crate::output::MIN_FONT_PT`] at this width.
    pub width: f64,
    /// Overwrite the figures of an earlier call in `out` (`--force`); without it, a folder
    /// holding any of the files this call writes is refused.
    pub force: bool,
}

/// The figures `plot-run` draws, by file stem, in the order it writes them.
pub const RUN_FIGURES: [&str; 5] = ["utilization", "queue", "gantt", "wait_cdf", "response_cdf"];

/// Draws the figures of one run into `out` (created if missing) and returns the files written,
/// in order: utilization, queue, gantt, wait_cdf and response_cdf, each as PNG, SVG, PDF and
/// the CSV of what it draws. The
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
    let print = Print::new(options.width, options.dpi)?;
    refuse_overwrite(out, &RUN_FIGURES, options.force)?;
    create_dir(out)?;
    let mut written = Vec::new();
    let outages = run.outages.as_deref().unwrap_or_default();
    written.extend(over_time(
        jobs,
        run.summary.processors,
        run.nodes.as_ref(),
        outages,
        options,
        out,
    )?);
    written.extend(gantt(
        jobs,
        &run.summary,
        run.placements.as_deref(),
        outages,
        options,
        out,
    )?);
    written.extend(distributions(jobs, print, out)?);
    Ok(written)
}

/// Bin widths, seconds: divisors of a day of at most 4 hours (6 or more bins a day draw the
/// daily cycle as a curve; 6- and 12-hour bins would draw it as a zigzag of 4 or 2 bins, a band
/// across a long run), then a day (the daily cycle averaged out, the weekly one drawn), a week
/// (no 2-day bins straddling weeks unevenly) and longer. The binned figures use the first that
/// keeps a run to [`MAX_BINS`] bins.
const BIN_CHOICES: [i64; 14] = [
    60,
    300,
    600,
    900,
    1800,
    3600,
    7200,
    10_800,
    14_400,
    86_400,
    604_800,
    2_419_200,
    31_536_000,
    315_360_000,
];

/// The most bins a binned figure draws by default: about 2 SVG pixels per bin across a figure
/// of the default width, so that a series that swings from bin to bin is still a line, not a
/// solid band (26 weeks in 3-hour bins, 1,456 of them, were one), and a year fits in day bins.
pub const MAX_BINS: i64 = 400;

/// The default bin width for a run spanning `from..to` seconds: the smallest of
/// `BIN_CHOICES` giving at most [`MAX_BINS`] bins (aligned to multiples of the width). A day
/// is 5-minute bins, a week 30-minute ones, 4 weeks 2-hour ones; from 67 days to 400 days the
/// bin is a day (26 weeks: 182 bins, showing the weekly cycle), then a week. The same at every
/// `--width`, so the CSV beside the figure does not depend on it.
pub fn default_bin(from: i64, to: i64) -> i64 {
    BIN_CHOICES
        .into_iter()
        .find(|&b| to.max(from + 1).saturating_sub(1).div_euclid(b) - from.div_euclid(b) < MAX_BINS)
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

/// The utilization series of a run on a machine of node types with GPUs or memory: the share
/// of the machine's CPUs, memory and GPUs its jobs held (nodes.csv, at the jobs' start and end
/// of jobs.csv), binned as the CPU utilization is, each with its label; and the machine in
/// words for the title. `None` for a machine of neither (the figure is then the CPU one).
fn resource_series(
    jobs: &[JobRow],
    nodes: &NodeTables,
    from: i64,
    to: i64,
    bin: i64,
) -> Option<(Vec<Series>, String)> {
    let capacity = |name: &str| nodes.capacity.get(name).copied().unwrap_or(0);
    let (cpus, memory, gpus) = (capacity("cpus"), capacity("memory"), capacity("gpus"));
    let memory_held = nodes.held.iter().any(|h| h.memory_mib > 0);
    if cpus == 0 || (gpus == 0 && !memory_held) {
        return None;
    }
    let times: std::collections::HashMap<i64, (i64, i64)> =
        jobs.iter().map(|j| (j.job_id, (j.start, j.end))).collect();
    let changes = |amount: fn(&NodeHeld) -> u64, total: u64| -> Vec<(i64, f64)> {
        nodes
            .held
            .iter()
            .filter_map(|h| {
                let &(start, end) = times.get(&h.job_id)?;
                let p = amount(h) as f64 * 100.0 / total as f64;
                Some([(start, p), (end, -p)])
            })
            .flatten()
            .collect()
    };
    let mut series = Vec::new();
    let mut words = vec![format!("{cpus} CPUs")];
    let mut add = |label: &str, amount: fn(&NodeHeld) -> u64, total: u64| {
        series.push(Series {
            label: label.to_string(),
            points: binned_mean(changes(amount, total), from, to, bin),
            mark: Mark::Line,
            style: series.len(),
            band: None,
        });
    };
    add("CPUs", |h| h.cpus, cpus);
    if memory_held && memory > 0 {
        add("memory", |h| h.memory_mib, memory);
        words.push(format!("{} GiB", format_number(memory as f64 / 1024.0)));
    }
    if gpus > 0 {
        add("GPUs", |h| h.gpus, gpus);
        words.push(format!("{gpus} GPUs"));
    }
    Some((series, words.join(", ")))
}

/// The share of the machine out of service, percent, binned as the utilization is: every
/// period of outages.csv, failures included (overlapping ones add up, to at most the machine).
/// `None` when nothing was out of service within `from..to`.
fn out_of_service_series(
    outages: &[OutOfService],
    machine: u32,
    from: i64,
    to: i64,
    bin: i64,
) -> Option<Series> {
    let changes: Vec<(i64, f64)> = outages
        .iter()
        .filter(|o| o.to > from && o.from < to && o.processors > 0)
        .flat_map(|o| {
            let p = f64::from(o.processors) * 100.0 / f64::from(machine);
            [(o.from, p), (o.to, -p)]
        })
        .collect();
    if changes.is_empty() {
        return None;
    }
    let points: Vec<(f64, f64)> = binned_mean(changes, from, to, bin)
        .into_iter()
        .map(|(x, out)| (x, out.min(100.0)))
        .collect();
    Some(Series {
        label: "out of service".into(),
        band: Some(
            points
                .iter()
                .map(|&(x, out)| (x, 100.0 - out, 100.0))
                .collect(),
        ),
        points,
        mark: Mark::Shade,
        style: 0,
    })
}

/// The hours an outage (not a node failure: see the module) was in effect within `from..to`
/// days, overlapping ones merged: `(start, end)` in days, by start.
fn outage_spans(outages: &[OutOfService], from: f64, to: f64) -> Vec<(f64, f64)> {
    let mut spans: Vec<(f64, f64)> = outages
        .iter()
        .filter(|o| o.kind != OutOfServiceKind::Failure && o.processors > 0)
        .map(|o| {
            let a = (o.from as f64 / DAY).max(from);
            let b = (o.to as f64 / DAY).min(to);
            (a, b)
        })
        .filter(|(a, b)| b > a)
        .collect();
    spans.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut merged: Vec<(f64, f64)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// The queue figure's shade of `spans` (days) up to `top`: a band whose upper edge steps from
/// 0 to `top` over each span; its points are that edge.
fn outage_shade(spans: &[(f64, f64)], top: f64) -> Option<Series> {
    if spans.is_empty() {
        return None;
    }
    let band: Vec<(f64, f64, f64)> = spans
        .iter()
        .flat_map(|&(a, b)| [(a, 0.0, 0.0), (a, 0.0, top), (b, 0.0, top), (b, 0.0, 0.0)])
        .collect();
    Some(Series {
        label: "outage".into(),
        points: band.iter().map(|&(x, _, hi)| (x, hi)).collect(),
        band: Some(band),
        mark: Mark::Shade,
        style: 0,
    })
}

fn over_time(
    jobs: &[JobRow],
    machine: u32,
    nodes: Option<&NodeTables>,
    outages: &[OutOfService],
    options: &RunFigureOptions,
    out: &Path,
) -> Result<Vec<PathBuf>, PlotError> {
    let bin = options.bin_seconds;
    let print = Print::new(options.width, options.dpi)?;
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
    let out_of_service = out_of_service_series(outages, machine, from, to, bin);
    let (mut series, machine_words) =
        match nodes.and_then(|n| resource_series(jobs, n, from, to, bin)) {
            // a machine of node types with GPUs or memory: each beside the CPUs
            Some(resources) => resources,
            None => (
                vec![Series {
                    // the only series, the axis label names it; beside processors out of
                    // service, the legend does
                    label: if out_of_service.is_some() {
                        "held by jobs".into()
                    } else {
                        String::new()
                    },
                    points: utilization,
                    mark: Mark::Line,
                    style: 0,
                    band: None,
                }],
                format!("{machine} processors"),
            ),
        };
    series.extend(out_of_service);
    let queue_top = top(&queue);
    let mut queue_series = vec![Series {
        label: String::new(),
        points: queue,
        mark: Mark::Line,
        style: 0,
        band: None,
    }];
    if let Some(shade) = outage_shade(&outage_spans(outages, x.from, x.to), queue_top) {
        queue_series[0].label = "waiting jobs".into();
        queue_series.push(shade);
    }
    let mut written = Chart {
        title: format!("Utilization (mean over {bin_width} bins; {machine_words})"),
        x_label: "time (days)".into(),
        y_label: "utilization (%)".into(),
        x,
        y: (0.0, 105.0),
        series,
        legend: SeriesLabelPosition::LowerRight,
        categories: None,
    }
    .with_clear_legend()
    .save(out, "utilization", print)?;
    written.extend(
        Chart {
            title: format!("Queue length (mean over {bin_width} bins)"),
            x_label: "time (days)".into(),
            y_label: "waiting jobs".into(),
            x,
            y: (0.0, queue_top),
            series: queue_series,
            legend: SeriesLabelPosition::UpperRight,
            categories: None,
        }
        .with_clear_legend()
        .save(out, "queue", print)?,
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

/// A Gantt chart: one rectangle per (job, run of processors) in a time window, coloured by the
/// job's runtime class (the classes of the summary and of the distributions), in three shades so
/// that neighbouring jobs of a class stay apart; a key under the chart says what the colours mean.
struct Gantt {
    title: String,
    from: f64,
    to: f64,
    machine: u32,
    boxes: Vec<GanttBox>,
    /// The hours an outage was in effect, days since time 0 (within `from..to`), shaded over
    /// the boxes.
    outages: Vec<(f64, f64)>,
}

/// One run of processors a job held.
#[derive(Debug, Clone, Copy, PartialEq)]
struct GanttBox {
    job: i64,
    /// Start and end, days since time 0.
    start: f64,
    end: f64,
    /// The first and last processor of the run.
    first: u32,
    last: u32,
    /// Index into [`CLASSES`].
    class: usize,
}

/// The index into [`CLASSES`] of a job of `runtime` seconds.
fn class_of(runtime: i64) -> usize {
    CLASSES
        .iter()
        .position(|&(_, lo, hi)| (lo..=hi).contains(&runtime))
        .unwrap_or(0)
}

/// The fill of a job's box: its class's colour over white at one of three strengths.
fn gantt_fill(class: usize, job: i64) -> RGBColor {
    let RGBColor(r, g, b) = Style::nth(class).color;
    let strength = [0.85, 0.6, 0.38][job.unsigned_abs() as usize % 3];
    let blend = |c: u8| (255.0 - strength * (255.0 - f64::from(c))).round() as u8;
    RGBColor(blend(r), blend(g), blend(b))
}

/// One entry of the key under the Gantt chart: a text, with the three shades of a runtime class
/// before it when `class` is given.
struct KeyItem {
    text: &'static str,
    class: Option<usize>,
}

/// The key's entries laid out in rows across `width` pixels: each entry's left edge and row.
fn key_rows(items: &[KeyItem], width: i32) -> Vec<(i32, i32)> {
    let (left, gap) = (frame(18.0), frame(22.0));
    let (mut x, mut row) = (left, 0);
    items
        .iter()
        .map(|item| {
            let swatch = if item.class.is_some() { frame(38.0) } else { 0 };
            let wide = swatch + (char_width(TICK_PT) * item.text.chars().count() as f64) as i32;
            if x > left && x + wide > width - frame(18.0) {
                (x, row) = (left, row + 1);
            }
            let at = (x, row);
            x += wide + gap;
            at
        })
        .collect()
}

impl Figure for Gantt {
    fn draw<DB: DrawingBackend>(
        &self,
        root: DrawingArea<DB, Shift>,
        print: &Print,
    ) -> Result<(), DrawError>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE)?;
        let (width, height) = root.dim_in_pixel();
        // The key under the chart, in as many rows as the width needs.
        let mut items = vec![KeyItem {
            text: "colour: runtime class",
            class: None,
        }];
        items.extend(
            CLASSES
                .iter()
                .enumerate()
                .map(|(class, &(text, _, _))| KeyItem {
                    text,
                    class: Some(class),
                }),
        );
        items.push(KeyItem {
            text: "(3 shades: neighbours)",
            class: None,
        });
        if !self.outages.is_empty() {
            items.push(KeyItem {
                text: "grey: an outage in effect",
                class: None,
            });
        }
        let placed = key_rows(&items, width as i32);
        let row = (1.7 * Print::pixels(TICK_PT)).round() as i32;
        let rows = placed.iter().map(|p| p.1).max().unwrap_or(0) + 1;
        let key_height = (rows * row + frame(12.0)) as u32;
        let (upper, key) = root.split_vertically(height.saturating_sub(key_height));
        let (across, down) = plot_area(print);
        let mut chart = titled_chart(&upper, &self.title, print)?.build_cartesian_2d(
            0.0..(self.to - self.from) * 24.0,
            0.0..f64::from(self.machine),
        )?;
        chart
            .configure_mesh()
            .x_desc(format!("hours since day {}", self.from))
            .y_desc("processor")
            .axis_desc_style(("sans-serif", font(AXIS_PT)))
            .label_style(("sans-serif", font(TICK_PT)))
            .x_labels(ticks(across, 12.0 * char_width(TICK_PT)))
            .y_labels(ticks(
                down - key_height as f64,
                2.5 * Print::pixels(TICK_PT),
            ))
            .x_label_formatter(&|v| format_number(*v))
            .y_label_formatter(&|v| format_number(*v))
            .disable_mesh()
            .draw()?;
        let clip = |t: f64| (t.clamp(self.from, self.to) - self.from) * 24.0;
        let corners = |g: &GanttBox| {
            [
                (clip(g.start), f64::from(g.first)),
                (clip(g.end), f64::from(g.last) + 1.0),
            ]
        };
        chart.draw_series(
            self.boxes
                .iter()
                .map(|g| Block::new(corners(g), gantt_fill(g.class, g.job).filled())),
        )?;
        // white edges between boxes while there are few enough to see them
        if self.boxes.len() <= 600 {
            chart.draw_series(
                self.boxes
                    .iter()
                    .map(|g| Block::new(corners(g), WHITE.stroke_width(1))),
            )?;
        }
        // outages over the boxes, faint enough to show what ran in them
        chart.draw_series(self.outages.iter().map(|&(a, b)| {
            Rectangle::new(
                [(clip(a), 0.0), (clip(b), f64::from(self.machine))],
                Style::shade()
                    .color
                    .mix(crate::style::SHADE_OPACITY)
                    .filled(),
            )
        }))?;
        // The key: what the colours mean.
        let text = ("sans-serif", font(TICK_PT)).into_font();
        let shade = frame(10.0);
        for (item, &(x, r)) in items.iter().zip(&placed) {
            let top = frame(6.0) + r * row;
            let mut at = x;
            if let Some(class) = item.class {
                for (k, job) in [0_i64, 1, 2].into_iter().enumerate() {
                    let left = x + shade * k as i32;
                    key.draw(&Rectangle::new(
                        [(left, top), (left + shade, top + 2 * shade)],
                        gantt_fill(class, job).filled(),
                    ))?;
                }
                at += frame(38.0);
            }
            key.draw(&Text::new(item.text, (at, top + frame(3.0)), text.clone()))?;
        }
        root.present()?;
        Ok(())
    }

    fn tidy(&self) -> Tidy {
        let mut tidy = Tidy::new(&[
            "job",
            "start_day",
            "end_day",
            "first_processor",
            "last_processor",
            "runtime_class",
        ]);
        for g in &self.boxes {
            tidy.rows.push(vec![
                g.job.to_string(),
                number(g.start),
                number(g.end),
                g.first.to_string(),
                g.last.to_string(),
                CLASSES[g.class].0.to_string(),
            ]);
        }
        tidy
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
            job: metrics::Job {
                job_id: j.job_id,
                submit: j.submit,
                processors: j.processors,
                ..metrics::Job::default()
            },
            start: j.start,
            end: j.end,
            ..JobRecord::default()
        })
        .collect();
    scenario::batsim::allocate(&records)
}

fn gantt(
    jobs: &[JobRow],
    summary: &RunSummary,
    placements: Option<&[Placement]>,
    outages: &[OutOfService],
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
            let class = class_of(j.end - j.start);
            boxes.extend(set.iter().map(|&(first, last)| GanttBox {
                job: j.job_id,
                start: s,
                end: e,
                first,
                last,
                class,
            }));
        }
    }
    let shown = boxes
        .iter()
        .map(|b| b.job)
        .collect::<std::collections::BTreeSet<_>>();
    Gantt {
        title: format!("Gantt chart, days {from} to {to} ({} jobs)", shown.len()),
        from,
        to,
        machine,
        boxes,
        outages: outage_spans(outages, from, to),
    }
    .save(out, "gantt", Print::new(options.width, options.dpi)?)
}

/// The runtime classes of the summary: at most 1 min, 1-10 min, over 10 min.
const CLASSES: [(&str, i64, i64); 3] = [
    ("runtime <= 1 min", 0, 60),
    ("1-10 min", 61, 600),
    ("> 10 min", 601, i64::MAX),
];

fn distributions(jobs: &[JobRow], print: Print, out: &Path) -> Result<Vec<PathBuf>, PlotError> {
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
        for (class, &(label, lo, hi)) in CLASSES.iter().enumerate() {
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
                style: class,
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
            .save(out, stem, print)?,
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
            nodes: None,
            jobs,
            summary: RunSummary { processors: 8 },
            placements,
            outages: None,
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
        assert_eq!(default_bin(0, 86_400), 300);
        assert_eq!(default_bin(0, 7 * 86_400), 1800);
        assert_eq!(default_bin(0, 28 * 86_400), 7200);
        // 26 weeks: a day per bin (182), not 3 hours (1,456: a solid band)
        assert_eq!(default_bin(0, 182 * 86_400), 86_400);
        assert_eq!(default_bin(100, 182 * 86_400 + 100), 86_400);
        assert_eq!(default_bin(0, 66 * 86_400), 14_400);
        assert_eq!(default_bin(0, 67 * 86_400), 86_400);
        assert_eq!(default_bin(0, 365 * 86_400), 86_400);
        assert_eq!(default_bin(0, 401 * 86_400), 604_800);
        for days in [1, 3, 10, 11, 60, 182, 250, 400, 401, 2000] {
            let bin = default_bin(0, days * 86_400);
            assert!(days * 86_400 / bin <= MAX_BINS, "{days} days: {bin}");
            assert!(86_400 % bin == 0 || bin % 86_400 == 0, "{bin}");
        }
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
            dpi: 150,
            width: 6.4,
            force: false,
        };
        let written = draw_run_figures(&run(jobs, None), &options, &out).unwrap();
        let names: Vec<String> = written
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        let expected: Vec<String> = ["utilization", "queue", "gantt", "wait_cdf", "response_cdf"]
            .iter()
            .flat_map(|stem| ["png", "svg", "pdf", "csv"].map(|e| format!("{stem}.{e}")))
            .collect();
        assert_eq!(names, expected);
        assert!(written.iter().all(|p| p.starts_with(&out) && p.is_file()));
        let gantt = std::fs::read_to_string(out.join("gantt.svg")).unwrap();
        assert!(
            gantt.contains("Gantt chart, days 0 to 1 (3 jobs)"),
            "{gantt}"
        );
        // the key says what the colours mean
        for label in [
            "colour: runtime class",
            "runtime &lt;= 1 min",
            "1-10 min",
            "&gt; 10 min",
        ] {
            assert!(gantt.contains(label), "the key lacks {label}");
        }
        // the Gantt CSV: one row per box drawn, with its class
        let csv = std::fs::read_to_string(out.join("gantt.csv")).unwrap();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(
            lines,
            [
                "job,start_day,end_day,first_processor,last_processor,runtime_class",
                &format!(
                    "1,{},{},0,3,> 10 min",
                    number(30.0 / DAY),
                    number(4000.0 / DAY)
                ),
                &format!(
                    "2,{},{},0,7,> 10 min",
                    number(4000.0 / DAY),
                    number(9000.0 / DAY)
                ),
                &format!(
                    "3,{},{},4,4,runtime <= 1 min",
                    number(60.0 / DAY),
                    number(90.0 / DAY)
                ),
            ]
        );
        // a CDF's CSV: the points of the steps, x in seconds (not log10)
        let cdf = std::fs::read_to_string(out.join("wait_cdf.csv")).unwrap();
        assert!(cdf.starts_with("series,x,y\n"), "{cdf}");
        assert!(cdf.contains("runtime <= 1 min (1 jobs),40,1\n"), "{cdf}");
    }

    #[test]
    fn a_run_with_gpus_draws_their_utilization_beside_the_cpus_and_a_cpu_run_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let options = RunFigureOptions {
            from_day: None,
            days: 1.0,
            bin_seconds: Some(3600),
            dpi: 150,
            width: 6.4,
            force: false,
        };
        let jobs = vec![
            job(1, 0, 0, 7200, 8),
            job(2, 0, 3600, 7200, 4),
            job(3, 0, 3600, 10_800, 2),
        ];
        let held = |job_id, cpus, memory_mib, gpus| NodeHeld {
            job_id,
            cpus,
            memory_mib,
            gpus,
        };
        // two nodes of 8 CPUs, 32 GiB and 2 GPUs: job 1 holds a whole node, job 2 two GPUs
        // on the other (half its CPUs and memory), job 3 two CPUs there
        let nodes = NodeTables {
            held: vec![
                held(1, 8, 32768, 2),
                held(2, 4, 16384, 2),
                held(3, 2, 4096, 0),
            ],
            capacity: [
                ("cpus", 16),
                ("memory", 65536),
                ("gpus", 4),
                ("gpus:a100", 4),
            ]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
        };
        let cpu_only = dir.path().join("cpu");
        let mut plain = run(jobs.clone(), None);
        plain.summary.processors = 16;
        draw_run_figures(&plain, &options, &cpu_only).unwrap();
        let gpu = dir.path().join("gpu");
        let mut with_nodes = plain.clone();
        with_nodes.nodes = Some(nodes.clone());
        draw_run_figures(&with_nodes, &options, &gpu).unwrap();
        let svg = std::fs::read_to_string(gpu.join("utilization.svg")).unwrap();
        assert!(
            svg.contains("16 CPUs, 64 GiB, 4 GPUs"),
            "the title names the machine: {svg}"
        );
        for label in ["CPUs", "memory", "GPUs"] {
            assert!(
                svg.contains(&format!(">\n{label}\n<")),
                "no {label} in the legend"
            );
        }
        // the CSV: per series, the mean share held in each hour
        let csv = std::fs::read_to_string(gpu.join("utilization.csv")).unwrap();
        let rows: Vec<&str> = csv.lines().collect();
        let at =
            |series: &str, hour: f64| format!("{series},{},", number((hour + 0.5) * 3600.0 / DAY));
        let value = |series: &str, hour: f64| -> f64 {
            let prefix = at(series, hour);
            let row = rows.iter().find(|r| r.starts_with(&prefix)).unwrap();
            row[prefix.len()..].parse().unwrap()
        };
        assert_eq!(value("CPUs", 0.0), 50.0);
        assert_eq!(value("CPUs", 1.0), 87.5);
        assert_eq!(value("memory", 1.0), 81.25);
        assert_eq!(value("GPUs", 0.0), 50.0);
        assert_eq!(value("GPUs", 1.0), 100.0);
        assert_eq!(value("GPUs", 2.0), 0.0);
        // every other figure is the CPU run's; and nodes without GPUs or memory held draw the
        // CPU run's utilization too, byte for byte
        for name in ["queue.svg", "gantt.svg", "wait_cdf.svg", "response_cdf.svg"] {
            assert_eq!(
                std::fs::read(cpu_only.join(name)).unwrap(),
                std::fs::read(gpu.join(name)).unwrap(),
                "{name}"
            );
        }
        let cpus_only = dir.path().join("cpus-only-nodes");
        with_nodes.nodes = Some(NodeTables {
            held: nodes
                .held
                .iter()
                .map(|h| held(h.job_id, h.cpus, 0, 0))
                .collect(),
            capacity: [("cpus".to_string(), 16)].into_iter().collect(),
        });
        draw_run_figures(&with_nodes, &options, &cpus_only).unwrap();
        for name in ["utilization.svg", "utilization.png", "utilization.csv"] {
            assert_eq!(
                std::fs::read(cpu_only.join(name)).unwrap(),
                std::fs::read(cpus_only.join(name)).unwrap(),
                "{name}"
            );
        }
    }

    fn period(kind: OutOfServiceKind, from: i64, to: i64, processors: u32) -> OutOfService {
        OutOfService {
            name: "o".into(),
            kind,
            from,
            to,
            processors,
            node: None,
        }
    }

    #[test]
    fn outage_spans_merge_overlaps_clip_to_the_window_and_leave_failures_out() {
        let periods = [
            period(OutOfServiceKind::Drain, 0, 43_200, 2),
            period(OutOfServiceKind::Maintenance, 21_600, 64_800, 8),
            period(OutOfServiceKind::Failure, 86_400, 172_800, 4),
            period(OutOfServiceKind::Maintenance, 129_600, 300_000, 8),
            period(OutOfServiceKind::Drain, 200_000, 210_000, 0),
        ];
        assert_eq!(
            outage_spans(&periods, 0.1, 2.0),
            vec![(0.1, 0.75), (1.5, 2.0)]
        );
        assert!(outage_spans(&periods[2..3], 0.0, 3.0).is_empty());
    }

    #[test]
    fn outages_are_shaded_and_a_run_without_them_is_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let options = RunFigureOptions {
            from_day: Some(0.0),
            days: 1.0,
            bin_seconds: Some(3600),
            dpi: 150,
            width: 6.4,
            force: false,
        };
        // 8 processors, a job on 4 of them for 4 hours, another waiting 2 hours for all 8
        let jobs = vec![job(1, 0, 0, 14_400, 4), job(2, 3600, 14_400, 21_600, 8)];
        let plain = run(jobs, None);
        let before = dir.path().join("before");
        draw_run_figures(&plain, &options, &before).unwrap();
        // the same run under an empty outages.csv draws the same figures, byte for byte
        let mut empty = plain.clone();
        empty.outages = Some(Vec::new());
        let unchanged = dir.path().join("empty");
        draw_run_figures(&empty, &options, &unchanged).unwrap();
        for stem in RUN_FIGURES {
            for ext in ["svg", "csv"] {
                let name = format!("{stem}.{ext}");
                assert_eq!(
                    std::fs::read(before.join(&name)).unwrap(),
                    std::fs::read(unchanged.join(&name)).unwrap(),
                    "{name}"
                );
            }
        }
        // a drain of 4 processors over the second hour, a failure taking 2 over the first
        // half of the third
        let mut with = plain.clone();
        with.outages = Some(vec![
            period(OutOfServiceKind::Drain, 3600, 7200, 4),
            period(OutOfServiceKind::Failure, 7200, 9000, 2),
        ]);
        let shaded = dir.path().join("shaded");
        draw_run_figures(&with, &options, &shaded).unwrap();
        let csv = std::fs::read_to_string(shaded.join("utilization.csv")).unwrap();
        assert!(csv.starts_with("series,x,y,low,high\n"), "{csv}");
        let hour = |h: f64| number((h + 0.5) * 3600.0 / DAY);
        for (h, out) in [(0.0, 0.0), (1.0, 50.0), (2.0, 12.5), (3.0, 0.0)] {
            let row = format!(
                "out of service,{},{},{},100\n",
                hour(h),
                number(out),
                number(100.0 - out)
            );
            assert!(csv.contains(&row), "no {row} in {csv}");
        }
        assert!(
            csv.contains(&format!("held by jobs,{},50,,\n", hour(0.0))),
            "{csv}"
        );
        let svg = std::fs::read_to_string(shaded.join("utilization.svg")).unwrap();
        assert!(svg.contains(">\nout of service\n<"), "no legend entry");
        // the queue and the Gantt chart shade the drain's hour, not the failure
        let queue = std::fs::read_to_string(shaded.join("queue.csv")).unwrap();
        let start = number(3600.0 / DAY);
        let end = number(7200.0 / DAY);
        assert!(queue.contains(&format!("outage,{start},")), "{queue}");
        assert!(queue.contains(&format!("outage,{end},")), "{queue}");
        assert!(
            !queue.contains(&format!("outage,{},", number(9000.0 / DAY))),
            "{queue}"
        );
        let gantt = std::fs::read_to_string(shaded.join("gantt.svg")).unwrap();
        assert!(gantt.contains("grey: an outage in effect"), "the key");
        assert_ne!(
            gantt,
            std::fs::read_to_string(before.join("gantt.svg")).unwrap()
        );
    }

    #[test]
    fn every_text_is_at_least_7_points_at_every_width() {
        let jobs: Vec<JobRow> = (0..200)
            .map(|i| {
                let submit = i * 3000;
                let runtime = [30, 400, 5000][i as usize % 3];
                job(
                    i,
                    submit,
                    submit + 60 * (i % 7),
                    submit + 60 * (i % 7) + runtime,
                    1 + (i % 8) as u32,
                )
            })
            .collect();
        let dir = tempfile::tempdir().unwrap();
        // the presets, the default, the narrowest and a wide one
        for width in [3.3, 6.4, 6.8, 2.0, 4.5, 12.0] {
            let out = dir.path().join(width.to_string());
            let options = RunFigureOptions {
                from_day: None,
                days: 1.0,
                bin_seconds: None,
                dpi: 150,
                width,
                force: false,
            };
            draw_run_figures(&run(jobs.clone(), None), &options, &out).unwrap();
            for stem in RUN_FIGURES {
                let svg = std::fs::read_to_string(out.join(format!("{stem}.svg"))).unwrap();
                let (pixels, points) = crate::output::font_points(&svg, width);
                assert_eq!(pixels, (width * 150.0).round(), "{stem} at {width} in");
                assert!(points.len() >= 5, "{stem} at {width} in: {points:?}");
                let smallest = points.iter().copied().fold(f64::INFINITY, f64::min);
                assert!(
                    smallest >= crate::output::MIN_FONT_PT,
                    "{stem} at {width} in: a text of {smallest:.2} pt"
                );
            }
        }
    }

    #[test]
    fn a_folder_with_figures_is_refused_unless_forced() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = RunFigureOptions {
            from_day: None,
            days: 1.0,
            bin_seconds: None,
            dpi: 150,
            width: 6.4,
            force: false,
        };
        let one = run(vec![job(1, 0, 0, 100, 1)], None);
        // an empty or foreign folder is fine
        std::fs::write(dir.path().join("notes.txt"), "mine").unwrap();
        draw_run_figures(&one, &options, dir.path()).unwrap();
        let before = std::fs::read(dir.path().join("gantt.svg")).unwrap();
        options.width = 3.3;
        let err = draw_run_figures(&one, &options, dir.path())
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            format!(
                "{} already holds figures (utilization.png, utilization.svg, utilization.pdf and 17 more); pass --force to overwrite them, or choose another folder with --out",
                dir.path().display()
            )
        );
        assert_eq!(std::fs::read(dir.path().join("gantt.svg")).unwrap(), before);
        // one file of one figure is enough to refuse
        let lone = tempfile::tempdir().unwrap();
        std::fs::write(lone.path().join("queue.csv"), "x").unwrap();
        let err = draw_run_figures(&one, &options, lone.path())
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("(queue.csv)") && err.contains("--force"),
            "{err}"
        );
        options.force = true;
        draw_run_figures(&one, &options, dir.path()).unwrap();
        assert_ne!(std::fs::read(dir.path().join("gantt.svg")).unwrap(), before);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("notes.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn an_empty_run_or_window_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let options = RunFigureOptions {
            from_day: Some(0.0),
            days: 0.0,
            bin_seconds: None,
            dpi: 150,
            width: 6.4,
            force: false,
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
            RunFigureOptions {
                days: 1.0,
                dpi: 10_000,
                ..options
            },
            RunFigureOptions {
                days: 1.0,
                width: 0.0,
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
