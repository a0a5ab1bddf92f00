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
        .headroom(args.switch("headroom"))
        .fairness(args.switch("fairness"))
        .output_limit(Some(config::options::output_limit(&args.values)?));
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
    let c = &r.closed;
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
    t.push_str(&format!(
        "  throughput   {:.2} jobs/hour submitted, {:.2} completed\n",
        c.submitted_per_hour, c.completed_per_hour
    ));
    t.push_str(&format!(
        "  sessions     {} sessions, {:.2} jobs per session (median {}); ended by abort {}, by the activity cycle {}, by the end of the run {}\n",
        c.sessions, c.mean_session_jobs, c.median_session_jobs, c.ended_by_abort, c.ended_by_cycle, c.ended_by_end_of_run
    ));
    let trials = if c.mean_continue_probability.is_nan() {
        "no continue trials".to_string()
    } else {
        format!(
            "mean continue probability {:.3}",
            c.mean_continue_probability
        )
    };
    t.push_str(&format!(
        "  decisions    {:.1} % of deciding jobs waited (the last job of each batch); {trials}\n",
        100.0 * c.deciding_jobs_waited_share,
    ));
    if let Some(h) = &c.headroom {
        t.push_str(&format!(
            "  headroom     {:.1} % (uncontended {:.2} jobs/hour; EASY {:.2}); capture {}\n",
            100.0 * h.headroom,
            h.uncontended_submitted_per_hour,
            h.easy_submitted_per_hour,
            if h.capture.is_finite() {
                format!("{:.1} % of EASY's headroom", 100.0 * h.capture)
            } else {
                "- (EASY has no headroom)".to_string()
            }
        ));
    }
    if let Some(line) = r.slurm.as_ref().and_then(|s| s.never_started_line()) {
        t.push_str(&line);
    }
    t.push_str(&report::summary_table("", &r.summary));
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
