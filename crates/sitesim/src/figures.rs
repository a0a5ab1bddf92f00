//! `sitesim plot` and `sitesim plot-run`: the flags turned into the `plots` crate's options, the
//! tables read by `scenario::tables`, and a line per file written. Built without the `plots`
//! feature (`--no-default-features`: no plotting stack), every command that draws fails with
//! [`no_plots`]'s message instead.

#[cfg(feature = "plots")]
use anyhow::Context;
#[cfg(feature = "plots")]
use plots::{RunFigureOptions, SweepFigureOptions};
#[cfg(feature = "plots")]
use scenario::tables;

use crate::cli::{PlotArgs, PlotRunArgs};
#[cfg(feature = "plots")]
use crate::say;

/// The print width of `--width` (inches or a preset), or the default.
#[cfg(feature = "plots")]
fn width(given: Option<&str>) -> Result<f64, plots::PlotError> {
    given.map_or(Ok(plots::output::DEFAULT_WIDTH), plots::output::parse_width)
}

/// The error of a command that draws (`what`) in a binary built without the `plots` feature.
#[cfg_attr(feature = "plots", allow(dead_code))]
pub fn no_plots(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "{what} draws figures, but this sitesim was built without the `plots` feature; \
         rebuild it with the feature (on by default), e.g. \
         `cargo install --locked --path crates/sitesim`"
    )
}

/// `sitesim plot RESULTS` without the `plots` feature: an error naming it.
#[cfg(not(feature = "plots"))]
pub fn plot(_args: &PlotArgs) -> anyhow::Result<()> {
    Err(no_plots("sitesim plot"))
}

/// `sitesim plot-run DIR` without the `plots` feature: an error naming it.
#[cfg(not(feature = "plots"))]
pub fn plot_run(_args: &PlotRunArgs) -> anyhow::Result<()> {
    Err(no_plots("sitesim plot-run"))
}

/// `sitesim plot RESULTS`: the figures of a sweep's results table.
#[cfg(feature = "plots")]
pub fn plot(args: &PlotArgs) -> anyhow::Result<()> {
    let width = width(args.width.as_deref())?;
    let table = if args.results.is_dir() {
        args.results.join("results.csv")
    } else {
        args.results.clone()
    };
    let filters = args
        .r#where
        .iter()
        .map(|w| {
            w.split_once('=')
                .map(|(a, v)| (a.trim().to_string(), v.trim().to_string()))
                .with_context(|| format!("--where {w:?}: expected AXIS=VALUE"))
        })
        .collect::<anyhow::Result<_>>()?;
    let measures = args.measures.iter().map(|name| plots::find_measure(name));
    let options = SweepFigureOptions {
        series: args.series.clone(),
        x: args.x.clone(),
        measures: measures.collect::<Result<_, _>>()?,
        filters,
        relative: args.relative,
        dpi: args.dpi,
        width,
        force: args.force,
    };
    tracing::info!("reading {}", table.display());
    let results = tables::read_results(&table)?;
    tracing::info!("drawing into {}", args.out.display());
    let drawn = plots::draw_sweep_figures(&results, &options, &args.out)?;
    for line in &drawn.left_out {
        say!("{line}")?;
    }
    for path in &drawn.files {
        say!("wrote {}", path.display())?;
    }
    Ok(())
}

/// `sitesim plot-run DIR`: the figures of one run or replay from its output directory.
#[cfg(feature = "plots")]
pub fn plot_run(args: &PlotRunArgs) -> anyhow::Result<()> {
    let width = width(args.width.as_deref())?;
    let run = tables::read_run(&args.dir)?;
    let jobs_csv = args.dir.join("jobs.csv");
    anyhow::ensure!(!run.jobs.is_empty(), "{}: no jobs", jobs_csv.display());
    let out = args.out.clone().unwrap_or_else(|| args.dir.join("figures"));
    let (jobs, machine) = (run.jobs.len(), run.summary.processors);
    tracing::info!(jobs, machine, "drawing into {}", out.display());
    let options = RunFigureOptions {
        from_day: args.from,
        days: args.days,
        bin_seconds: args.bin,
        dpi: args.dpi,
        width,
        force: args.force,
    };
    for path in plots::draw_run_figures(&run, &options, &out)? {
        say!("wrote {}", path.display())?;
    }
    Ok(())
}
