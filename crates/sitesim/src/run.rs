//! `sitesim run`: site-level simulation of a population file.

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use anyhow::Context;
use cluster::{Cluster, SchedulerSpec};
use engine::ClosedRun;
use metrics::{ClosedLoopSummary, Summary, SummaryOptions, Warmup, Window};
use serde::Serialize;
use users::{Population, Submission};

use crate::cli::{RunArgs, SiteArgs};
use crate::console;
use crate::output::OutputDir;
use crate::report;
use crate::say;
use crate::site::{Site, SiteFile};

/// A simulated site and everything measured in it.
pub struct SiteRun {
    /// The resolved site (file plus command-line overrides).
    pub site: Site,
    /// The scheduler.
    pub scheduler: SchedulerSpec,
    /// Jobs, sessions and submissions.
    pub run: ClosedRun,
    /// Group index of each user.
    pub user_groups: Vec<usize>,
    /// Job measures over the measurement window.
    pub summary: Summary,
    /// Throughput and sessions over the measurement window.
    pub closed: ClosedLoopSummary,
    /// dynP's policy usage (dynP schedulers only).
    pub policy_usage: Option<report::PolicyUsageReport>,
}

/// What a run measures beyond the always-computed summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fairness {
    /// Compute every job's fair start time (one more, conservative, simulation of the generated
    /// jobs) so the summary reports unfairness.
    Measure,
    /// Leave unfairness out (sweeps: it would double their cost).
    Skip,
}

/// The site the arguments describe: the file (or the default) with the overrides applied.
pub fn resolve(args: &SiteArgs) -> anyhow::Result<Site> {
    let mut site = match &args.config {
        Some(path) => Site::load(path)?,
        None => Site::default_site()?,
    };
    let file = &mut site.file;
    if let Some(users) = args.users {
        anyhow::ensure!(
            file.groups.len() == 1,
            "--users needs a population with one group; {} has {} (set each group's users in the file)",
            site.origin,
            file.groups.len()
        );
        file.groups[0].users = users;
    }
    if let Some(weeks) = args.weeks {
        file.run.weeks = weeks;
    }
    if let Some(seed) = args.seed {
        file.run.seed = seed;
    }
    if let Some(processors) = args.processors {
        file.site.processors = processors;
    }
    file.scheduler
        .override_with(args.scheduler.as_deref(), &args.params);
    Ok(site)
}

/// Simulates `site`; `default_model` is what `models = "embedded"` means.
pub fn simulate(
    site: Site,
    default_model: &Arc<usermodel::Model>,
    fairness: Fairness,
) -> anyhow::Result<SiteRun> {
    let file: &SiteFile = &site.file;
    let scheduler = file.scheduler.spec().with_context(|| site.origin.clone())?;
    let calendar = site.calendar()?;
    let groups = site.groups(default_model)?;
    let processors = file.site.processors;
    let horizon = i64::from(file.run.weeks) * users::cycle::WEEK;
    let warmup = i64::from(file.run.warmup_days) * users::cycle::DAY;
    let population = Population::new(groups, file.run.seed, calendar, horizon, processors)
        .map_err(|e| anyhow::anyhow!("{}: {e}", site.origin))?;
    let user_groups = population.profiles().iter().map(|p| p.group).collect();
    let (nodes, sharing) = site.machine(population.groups())?;
    let mut cluster = match nodes {
        None => Cluster::new(processors, scheduler.build()),
        Some(nodes) => Cluster::with_nodes(processors, scheduler.build(), nodes)
            .map_err(|e| anyhow::anyhow!("{}: {e}", site.origin))?,
    };
    let options = engine::SimOptions { sharing };
    let mut run = engine::run_population_with(&mut cluster, population, &mut (), &options)
        .context("the simulation failed")?;
    if fairness == Fairness::Measure {
        engine::add_fair_start_times(processors, &mut run.records)
            .context("the fair-start simulation failed")?;
    }
    let policy_usage = cluster.policy_usage().map(report::PolicyUsageReport::new);
    let window = Window {
        start: warmup,
        end: horizon,
    };
    let options = SummaryOptions {
        processors,
        warmup: Warmup::Interval {
            start: warmup,
            end: horizon,
        },
    };
    let summary = Summary::compute(&run.records, &options, metrics::InputCounts::default());
    let closed = ClosedLoopSummary::compute(&run.records, &run.sessions, window);
    Ok(SiteRun {
        site,
        scheduler,
        run,
        user_groups,
        summary,
        closed,
        policy_usage,
    })
}

/// What summary.json holds for a run.
#[derive(Serialize)]
struct RunReport<'a> {
    tool: &'static str,
    version: &'static str,
    command: &'static str,
    origin: &'a str,
    site: &'a SiteFile,
    scheduler: String,
    users: u64,
    closed_loop: &'a ClosedLoopSummary,
    summary: &'a Summary,
    #[serde(skip_serializing_if = "Option::is_none")]
    policy_usage: Option<&'a report::PolicyUsageReport>,
}

/// Runs the command.
pub fn run(args: &RunArgs) -> anyhow::Result<()> {
    let clock = Instant::now();
    let site = resolve(&args.site)?;
    let default_model = Arc::new(crate::models::default_model()?);
    let fairness = if args.fairness {
        Fairness::Measure
    } else {
        Fairness::Skip
    };
    let result = simulate(site, &default_model, fairness)?;
    tracing::info!(
        seconds = clock.elapsed().as_secs_f64(),
        jobs = result.run.records.len(),
        "simulated"
    );
    console::say(&table(&result))?;

    if let Some(dir) = &args.out {
        let mut out = OutputDir::create(dir)?;
        let report = RunReport {
            tool: "sitesim",
            version: env!("CARGO_PKG_VERSION"),
            command: "run",
            origin: &result.site.origin,
            site: &result.site.file,
            scheduler: result.scheduler.label(),
            users: result.user_groups.len() as u64,
            closed_loop: &result.closed,
            summary: &result.summary,
            policy_usage: result.policy_usage.as_ref(),
        };
        let summary_json = scenario::output::render_json(&report)?;
        out.write_formats(&scenario::output::RunOutput {
            records: &result.run.records,
            sessions: Some(&result.run.sessions),
            summary_json: &summary_json,
        })?;
        out.commit_and_list()?;
    }
    if let Some(path) = &args.swf {
        write_swf(path, &result)?;
        say!("wrote {}", path.display())?;
    }
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "done");
    Ok(())
}

/// The summary for the terminal: the closed loop's measures, then the job measures.
fn table(r: &SiteRun) -> String {
    let file = &r.site.file;
    let c = &r.closed;
    let mut t = format!(
        "site-level run of {}: {} users in {} group(s), {} weeks, {} on {} processors, seed {}\n",
        r.site.origin,
        r.user_groups.len(),
        file.groups.len(),
        file.run.weeks,
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
    t.push_str(&report::summary_table("", &r.summary));
    if let Some(usage) = &r.policy_usage {
        t.push('\n');
        t.push_str(&usage.table());
    }
    t
}

/// Writes the generated workload as SWF: the jobs as they ran (wait, runtime, killed = status 0),
/// with the user's estimate as requested time, users and groups numbered from 1, and each batch's
/// dependency on the previous batch's last job (fields 17 and 18), so feedback-aware simulators
/// can replay the closed loop.
fn write_swf(path: &Path, r: &SiteRun) -> anyhow::Result<()> {
    let mut header = swf::Header::new();
    let file = &r.site.file;
    header.push_field("Version", "2.2");
    header.push_field("Computer", "sitesim site-level simulation");
    header.push_field("Installation", &r.site.origin);
    header.push_field(
        "Note",
        format!(
            "{} users, {} weeks, scheduler {}, seed {}; generated by sitesim {}",
            r.user_groups.len(),
            file.run.weeks,
            r.scheduler.label(),
            file.run.seed,
            env!("CARGO_PKG_VERSION")
        ),
    );
    header.push_field("MaxJobs", r.run.records.len());
    header.push_field("MaxRecords", r.run.records.len());
    header.push_field("MaxNodes", file.site.processors);
    header.push_field("MaxProcs", file.site.processors);
    header.push_field("UnixStartTime", r.site.unix_start());
    header.push_field("TimeZoneString", "UTC");
    header.push_field("StartTime", &file.site.start);
    crate::output::write_swf_file(path, &header, &swf_records(r)).context("--swf")
}

fn swf_records(r: &SiteRun) -> Vec<swf::Record> {
    r.run
        .records
        .iter()
        .zip(&r.run.submissions)
        .map(|(job, sub): (&metrics::JobRecord, &Submission)| {
            let group = r.user_groups.get(sub.user as usize).copied().unwrap_or(0);
            swf::Record {
                job_number: job.job_id,
                submit_time: job.submit,
                wait_time: job.wait(),
                run_time: job.runtime(),
                allocated_processors: i64::from(job.processors),
                requested_processors: i64::from(job.processors),
                requested_time: job.estimate,
                status: if job.killed { 0 } else { 1 },
                user_id: i64::from(sub.user) + 1,
                group_id: group as i64 + 1,
                preceding_job: sub.preceding.map_or(-1, |(id, _)| id),
                think_time: sub.preceding.map_or(-1, |(_, think)| think),
                ..swf::Record::default()
            }
        })
        .collect()
}
