//! `sitesim run`: site-level simulation of a population file.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use scenario::Simulation;
use scenario::run::SiteRun;

use crate::cli::RunArgs;
use crate::console;
use crate::output::OutputDir;
use crate::progress::Progress;
use crate::report;

/// The site `values` describe: `--config`'s file (or the default site) with the other site
/// options set on top of it.
pub fn site(values: &config::options::Values) -> anyhow::Result<config::site::Site> {
    let config = config::options::path(values, "config");
    let source = match &config {
        Some(path) => config::options::SiteSource::File(path),
        None => config::options::SiteSource::Default,
    };
    Ok(config::options::site(source, values)?)
}

/// Runs the command.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let clock = Instant::now();
    let site = site(&args.values)?;
    let default_model =
        Arc::new(config::models::default_model().context("the embedded default model is invalid")?);
    tracing::info!(
        "{}: {} in {}, {}, {} on {} processors, seed {}",
        site.origin,
        config::count(
            site.file
                .groups
                .iter()
                .map(|g| u64::from(g.users))
                .sum::<u64>(),
            "user"
        ),
        config::count(site.file.groups.len() as u64, "group"),
        config::count(site.file.run.weeks, "week"),
        site.file.scheduler.policy,
        site.file.site.processors,
        site.file.run.seed
    );
    // Every file is written to a temporary name first and all are renamed into place together,
    // so a failure (of the simulation or of the SWF, say) leaves none of them behind.
    let out_dir = args.path("out");
    let mut out = match &out_dir {
        Some(dir) => OutputDir::for_outputs(dir, args.switch("force"))?,
        None => OutputDir::detached(),
    };
    let mut requested = Vec::new();
    if args.switch("batsim_jobs") {
        requested.push("batsim_jobs.csv");
    }
    if let Some(path) = args.path("swf") {
        out.redirect("workload.swf", &path).context("--swf")?;
        requested.push("workload.swf");
    }
    // Without --out, only the SWF file (if asked for) is written.
    let formats = match &out_dir {
        Some(_) => scenario::output::formats(&requested),
        None => scenario::output::formats(&requested)
            .into_iter()
            .filter(|f| f.on_request() && requested.contains(&f.file_name()))
            .collect(),
    };
    let mut progress = Progress::new("simulating");
    let mut tick = |t| progress.tick(t);
    let mut simulation = Simulation::site(site, default_model)
        .progress(&mut tick)
        .measure_options(&args.values)?;
    if !formats.is_empty() {
        simulation = simulation.outputs(&formats, &mut out);
    }
    let executed = simulation.execute()?;
    progress.finish();
    let result = executed
        .site()
        .context("a site run gave no site-run measures")?;
    tracing::info!(
        seconds = clock.elapsed().as_secs_f64(),
        jobs = result.summary.jobs_simulated,
        "simulated"
    );
    console::say(&table(result))?;
    crate::output::commit_and_list(out)?;
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "done");
    Ok(())
}

/// The summary for the terminal: the closed loop's measures, then the job measures.
fn table(r: &SiteRun) -> String {
    let file = &r.site.file;
    let mut t = format!(
        "site-level run of {}: {} in {}, {}, {} on {} processors, seed {}\n",
        r.site.origin,
        config::count(r.user_groups.len() as u64, "user"),
        config::count(file.groups.len() as u64, "group"),
        config::count(file.run.weeks, "week"),
        r.scheduler.label(),
        file.site.processors,
        file.run.seed
    );
    let policy_usage = r.policy_usage.as_ref().map(|p| p.measured());
    let slurm = r.slurm.as_ref().map(|s| s.measured());
    let power = r.measured_power();
    let input = metrics::MeasureInput {
        summary: &r.summary,
        closed_loop: Some(&r.closed),
        users: r.user_groups.len(),
        policy_usage: policy_usage.as_ref(),
        slurm: slurm.as_ref(),
        power: power.as_ref(),
    };
    t.push_str(&metrics::console::closed_loop_lines(&input));
    if let Some(line) = r.slurm.as_ref().and_then(|s| s.never_started_line()) {
        t.push_str(&line);
    }
    t.push_str(&r.outage_lines());
    if let Some(nodes) = &r.nodes {
        t.push_str(&format!("  {:<12} {}\n", "nodes", nodes.machine));
        if let Some(line) = nodes.held_line() {
            t.push_str(&line);
        }
    }
    t.push_str(&report::summary_table(&input));
    if !r.groups.is_empty() {
        t.push('\n');
        t.push_str(&report::groups_table(&r.groups));
    }
    if let Some(usage) = &r.policy_usage {
        t.push('\n');
        t.push_str(&usage.table());
    }
    t
}
