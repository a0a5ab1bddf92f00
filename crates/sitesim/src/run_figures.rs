//! `sitesim plot-run DIR`: figures of one run or replay from its output directory (jobs.csv and
//! summary.json): utilization and queue length over time, a Gantt chart of a time window (the
//! processors each job held, assigned as in batsim_jobs.csv), and the distributions of wait and
//! response per runtime class. PNG and SVG, drawn with plotters like the sweep figures.

use std::path::{Path, PathBuf};

use anyhow::Context;
use metrics::JobRecord;
use plotters::coord::Shift;
use plotters::prelude::*;

use crate::cli::PlotRunArgs;
use crate::plot::{
    Axis, Chart, Figure, Mark, Series, ecdf_steps, format_number, plot_error, titled_chart,
};
use crate::say;

const DAY: f64 = 86_400.0;

/// A job as jobs.csv gives it.
struct Job {
    id: i64,
    submit: i64,
    start: i64,
    end: i64,
    processors: u32,
}

/// Runs the command.
pub fn run(args: &PlotRunArgs) -> anyhow::Result<()> {
    let jobs = read_jobs(&args.dir.join("jobs.csv"))?;
    anyhow::ensure!(
        !jobs.is_empty(),
        "{}: no jobs",
        args.dir.join("jobs.csv").display()
    );
    let machine = read_machine(&args.dir.join("summary.json"))?;
    let out = args.out.clone().unwrap_or_else(|| args.dir.join("figures"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    tracing::info!(jobs = jobs.len(), machine, "drawing into {}", out.display());
    let mut written = Vec::new();
    written.extend(over_time(&jobs, machine, &out)?);
    written.extend(gantt(&jobs, args, &out)?);
    written.extend(distributions(&jobs, &out)?);
    for path in &written {
        say!("wrote {}", path.display())?;
    }
    Ok(())
}

fn read_jobs(path: &Path) -> anyhow::Result<Vec<Job>> {
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let header = reader.headers()?.clone();
    let column = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .with_context(|| format!("{}: no column {name}", path.display()))
    };
    let [id, submit, start, end, processors] =
        ["job_id", "submit", "start", "end", "processors"].map(column);
    let (id, submit, start, end, processors) = (id?, submit?, start?, end?, processors?);
    let mut jobs = Vec::new();
    for (line, row) in reader.records().enumerate() {
        let row = row.with_context(|| format!("cannot read {}", path.display()))?;
        let int = |i: usize| {
            row[i].parse::<i64>().with_context(|| {
                format!(
                    "{}:{}: {:?} is not a whole number",
                    path.display(),
                    line + 2,
                    &row[i]
                )
            })
        };
        jobs.push(Job {
            id: int(id)?,
            submit: int(submit)?,
            start: int(start)?,
            end: int(end)?,
            processors: u32::try_from(int(processors)?).context("processors")?,
        });
    }
    Ok(jobs)
}

fn read_machine(path: &Path) -> anyhow::Result<u32> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("{}: not JSON", path.display()))?;
    value["summary"]["processors"]
        .as_u64()
        .and_then(|p| u32::try_from(p).ok())
        .filter(|&p| p > 0)
        .with_context(|| format!("{}: no summary.processors", path.display()))
}

/// The mean of a step function (`changes`: time and change, summed) over `bins` equal bins.
fn binned_mean(mut changes: Vec<(i64, f64)>, from: i64, to: i64, bins: usize) -> Vec<(f64, f64)> {
    changes.sort_unstable_by_key(|a| a.0);
    let width = ((to - from) as f64 / bins as f64).max(1.0);
    let mut area = vec![0.0; bins];
    let (mut level, mut at) = (0.0, from);
    let mut add = |from_t: i64, to_t: i64, level: f64| {
        // spread level over [from_t, to_t) into the bins
        let mut t = from_t as f64;
        let end = to_t as f64;
        while t < end {
            let b = (((t - from as f64) / width) as usize).min(bins - 1);
            let bin_end = (from as f64 + (b + 1) as f64 * width).min(end);
            let step = if b == bins - 1 { end - t } else { bin_end - t };
            area[b] += level * step;
            t += step.max(1e-9);
        }
    };
    for (t, change) in changes {
        let t = t.clamp(from, to);
        if t > at {
            add(at, t, level);
            at = t;
        }
        level += change;
    }
    (0..bins)
        .map(|b| {
            let mid = from as f64 + (b as f64 + 0.5) * width;
            (mid / DAY, area[b] / width)
        })
        .collect()
}

fn over_time(jobs: &[Job], machine: u32, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let from = jobs.iter().map(|j| j.submit).min().unwrap_or(0);
    let to = jobs
        .iter()
        .map(|j| j.end)
        .max()
        .unwrap_or(from)
        .max(from + 1);
    let bins = 400;
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
    let bin_width =
        format_number(((to - from) as f64 / bins as f64 / 3600.0 * 10.0).round() / 10.0);
    let utilization = binned_mean(busy, from, to, bins);
    let queue = binned_mean(waiting, from, to, bins);
    let top = |points: &[(f64, f64)]| points.iter().map(|p| p.1).fold(1.0, f64::max) * 1.05;
    let mut written = Chart {
        title: format!("Utilization (mean over {bin_width} h bins; {machine} processors)"),
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
            title: format!("Queue length (mean over {bin_width} h bins)"),
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
    fn draw<DB: DrawingBackend>(&self, root: DrawingArea<DB, Shift>) -> anyhow::Result<()>
    where
        DB::ErrorType: 'static,
    {
        root.fill(&WHITE).map_err(plot_error)?;
        let mut chart = titled_chart(&root, &self.title)
            .build_cartesian_2d(
                0.0..(self.to - self.from) * 24.0,
                0.0..f64::from(self.machine),
            )
            .map_err(plot_error)?;
        chart
            .configure_mesh()
            .x_desc(format!("hours since day {}", self.from))
            .y_desc("processor")
            .axis_desc_style(("sans-serif", 20))
            .label_style(("sans-serif", 16))
            .x_label_formatter(&|v| format_number(*v))
            .y_label_formatter(&|v| format_number(*v))
            .disable_mesh()
            .draw()
            .map_err(plot_error)?;
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
        chart
            .draw_series(self.boxes.iter().map(|&(id, s, e, a, b)| {
                let color = palette[id.unsigned_abs() as usize % palette.len()];
                Rectangle::new(corners(s, e, a, b), color.filled())
            }))
            .map_err(plot_error)?;
        // outlines only while they do not hide the boxes
        if self.boxes.len() <= 600 {
            chart
                .draw_series(self.boxes.iter().map(|&(_, s, e, a, b)| {
                    Rectangle::new(corners(s, e, a, b), RGBColor(90, 90, 90).stroke_width(1))
                }))
                .map_err(plot_error)?;
        }
        root.present().map_err(plot_error)?;
        Ok(())
    }
}

fn gantt(jobs: &[Job], args: &PlotRunArgs, out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let records: Vec<JobRecord> = jobs
        .iter()
        .map(|j| JobRecord {
            job_id: j.id,
            submit: j.submit,
            start: j.start,
            end: j.end,
            processors: j.processors,
            ..JobRecord::default()
        })
        .collect();
    let held = match read_placements(&args.dir.join("batsim_jobs.csv"), jobs.len())? {
        Some(held) => held,
        None => scenario::batsim::allocate(&records),
    };
    let machine = held
        .iter()
        .flatten()
        .map(|&(_, b)| b + 1)
        .max()
        .unwrap_or(1)
        .max(read_machine(&args.dir.join("summary.json")).unwrap_or(1));
    let first = jobs.iter().map(|j| j.start).min().unwrap_or(0) as f64 / DAY;
    let last = jobs.iter().map(|j| j.end).max().unwrap_or(0) as f64 / DAY;
    let from = args.from.unwrap_or(((first + last) / 2.0).floor());
    let to = from + args.days;
    anyhow::ensure!(
        args.days > 0.0,
        "--days must be a number > 0, got {}",
        args.days
    );
    let mut boxes = Vec::new();
    for (j, set) in jobs.iter().zip(&held) {
        let (s, e) = (j.start as f64 / DAY, j.end as f64 / DAY);
        if e > from && s < to && e > s {
            boxes.extend(set.iter().map(|&(a, b)| (j.id, s, e, a, b)));
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

/// The `allocated_resources` of batsim_jobs.csv, if the directory has one for these jobs (a
/// replay on nodes: the cluster's placement).
fn read_placements(
    path: &Path,
    jobs: usize,
) -> anyhow::Result<Option<Vec<scenario::batsim::Intervals>>> {
    if !path.exists() {
        return Ok(None);
    }
    let mut reader =
        csv::Reader::from_path(path).with_context(|| format!("cannot read {}", path.display()))?;
    let column = reader
        .headers()?
        .iter()
        .position(|h| h == "allocated_resources")
        .with_context(|| format!("{}: no column allocated_resources", path.display()))?;
    let mut held = Vec::new();
    for row in reader.records() {
        let row = row.with_context(|| format!("cannot read {}", path.display()))?;
        let mut set = Vec::new();
        for part in row[column].split_whitespace() {
            let (a, b) = part.split_once('-').unwrap_or((part, part));
            let id = |t: &str| {
                t.parse::<u32>()
                    .with_context(|| format!("{}: bad processor id {t:?}", path.display()))
            };
            set.push((id(a)?, id(b)?));
        }
        held.push(set);
    }
    Ok((held.len() == jobs).then_some(held))
}

/// The runtime classes of the summary: at most 1 min, 1-10 min, over 10 min.
const CLASSES: [(&str, i64, i64); 3] = [
    ("runtime <= 1 min", 0, 60),
    ("1-10 min", 61, 600),
    ("> 10 min", 601, i64::MAX),
];

fn distributions(jobs: &[Job], out: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let mut written = Vec::new();
    for (stem, what, value) in [
        (
            "wait_cdf",
            "wait",
            (|j: &Job| j.start - j.submit) as fn(&Job) -> i64,
        ),
        ("response_cdf", "response", |j: &Job| j.end - j.submit),
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
