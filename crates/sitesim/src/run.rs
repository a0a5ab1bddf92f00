//! `sitesim run`: site-level simulation of a population file.

use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use scenario::run::{
    Fairness, SiteRun, measure_headroom_observed, simulate_observed, simulate_streamed,
};

use crate::cli::RunArgs;
use crate::console;
use crate::output::OutputDir;
use crate::progress::Progress;
use crate::report;

/// Runs the command.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let clock = Instant::now();
    if let Some(path) = &args.swf {
        crate::output::check_target(path).context("--swf")?;
    }
    let site = args.site.resolve()?;
    let default_model = Arc::new(
        scenario::models::default_model().context("the embedded default model is invalid")?,
    );
    let fairness = if args.fairness {
        Fairness::Measure
    } else {
        Fairness::Skip
    };
    tracing::info!(
        "{}: {} in {}, {}, {} on {} processors, seed {}",
        site.origin,
        scenario::count(
            site.file
                .groups
                .iter()
                .map(|g| u64::from(g.users))
                .sum::<u64>(),
            "user"
        ),
        scenario::count(site.file.groups.len() as u64, "group"),
        scenario::count(site.file.run.weeks, "week"),
        site.file.scheduler.policy,
        site.file.site.processors,
        site.file.run.seed
    );
    // Every file is written to a temporary name first and all are renamed into place together,
    // so a failure (of the simulation or of the SWF, say) leaves none of them behind.
    let mut out = match &args.out {
        Some(dir) => OutputDir::create(dir)?,
        None => OutputDir::detached(),
    };
    // The run keeps nothing but its measures, and writes its tables into the directory as it
    // goes (its memory follows the jobs in flight), unless an output needs the whole run: fair
    // start times, the SWF export or Batsim's processor ids.
    let streamed = !args.fairness && args.swf.is_none() && !args.batsim_jobs;
    let mut progress = Progress::new("simulating");
    let mut result = if streamed && args.out.is_none() {
        simulate_streamed(site, &default_model, &mut |t| progress.tick(t), None)?
    } else if streamed {
        let tables = ["jobs.csv", "sessions.csv", "batches.csv"];
        let [jobs, sessions, batches] = tables.map(|name| out.open(name));
        let (mut jobs, mut sessions, mut batches) = (jobs?, sessions?, batches?);
        let result = simulate_streamed(
            site,
            &default_model,
            &mut |t| progress.tick(t),
            Some(scenario::stream::RunFiles {
                jobs: &mut jobs.writer,
                sessions: &mut sessions.writer,
                batches: &mut batches.writer,
                scratch: out.dir(),
            }),
        )?;
        for file in [jobs, sessions, batches] {
            out.keep(file)?;
        }
        result
    } else {
        simulate_observed(site, &default_model, fairness, &mut |t| progress.tick(t))?
    };
    if args.headroom {
        tracing::info!("measuring headroom: two more simulations (uncontended, EASY)");
        measure_headroom_observed(&mut result, &default_model, &mut |t| progress.tick(t))?;
    }
    progress.finish();
    tracing::info!(
        seconds = clock.elapsed().as_secs_f64(),
        jobs = result.summary.jobs_simulated,
        "simulated"
    );
    console::say(&table(&result))?;

    if streamed && args.out.is_some() {
        let summary_json = scenario::output::render_json(&result.report())?;
        out.write_format(
            &scenario::output::SummaryJson,
            &scenario::output::RunOutput {
                records: &[],
                sessions: None,
                batches: None,
                owners: None,
                summary_json: &summary_json,
                placements: None,
            },
        )?;
    } else if args.out.is_some() {
        let summary_json = scenario::output::render_json(&result.report())?;
        let (group_names, jobs) = (result.group_names(), result.job_owners());
        out.write_formats(
            &scenario::output::RunOutput {
                records: &result.run.records,
                sessions: Some(&result.run.sessions),
                batches: Some(&result.run.batches),
                owners: Some(scenario::output::JobOwners {
                    group_names: &group_names,
                    jobs: &jobs,
                }),
                summary_json: &summary_json,
                placements: result.placements.as_deref(),
            },
            requested_formats(args.batsim_jobs),
        )?;
    }
    if let Some(path) = &args.swf {
        let (header, records) = result.swf();
        out.write_path(path, |w| {
            Ok(scenario::output::write_swf(&header, &records, w)?)
        })
        .context("--swf")?;
    }
    out.commit_and_list()?;
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
        scenario::count(r.user_groups.len() as u64, "user"),
        scenario::count(file.groups.len() as u64, "group"),
        scenario::count(file.run.weeks, "week"),
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

/// The formats written only on request that the flags ask for.
pub fn requested_formats(batsim_jobs: bool) -> &'static [&'static str] {
    if batsim_jobs {
        &["batsim_jobs.csv"]
    } else {
        &[]
    }
}
