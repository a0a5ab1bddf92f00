//! Carrying out a sweep's runs, the same for every front end (the command line runs them in a
//! thread pool or as Slurm tasks, the Python package in threads): [`check`] every configuration
//! before anything runs, [`execute`] one run into its [`RunResult`].

use std::sync::Arc;

use super::plan::{Plan, Run};
use super::results::{self, RunResult};
use crate::error::{Result, invalid};
use crate::{Outcome, Simulation};

/// Checks every configuration of `plan` as its first seed's run would start (a site's users and
/// machine; a replay's scheduler, options and that its trace is a readable file), so that a bad
/// value stops the sweep before any run. `default_model` is what `models = "embedded"` means.
pub fn check(plan: &Plan, default_model: &Arc<usermodel::Model>) -> Result<()> {
    for point in 0..plan.points() {
        let checked = if plan.is_replay() {
            plan.replay(point, plan.seeds[0]).and_then(|(_, options)| {
                std::fs::File::open(&options.trace)
                    .map(|_| ())
                    .map_err(|e| {
                        invalid!("replay.trace: cannot read {}: {e}", options.trace.display())
                    })
            })
        } else {
            plan.site(point, plan.seeds[0])
                .and_then(|site| crate::run::check(&site, default_model))
        };
        checked.map_err(|e| e.within(format!("configuration {}", plan.describe(point))))?;
    }
    Ok(())
}

/// Simulates `run` (a site run, measured as it goes and keeping no records, with its headroom
/// when the sweep asks; or a replay) and measures it. Errors name the run.
pub fn execute(plan: &Plan, run: &Run, default_model: &Arc<usermodel::Model>) -> Result<RunResult> {
    let within = |e: crate::ScenarioError| e.within(format!("run {}", run.id));
    let simulation = if plan.is_replay() {
        let (scheduler, options) = plan.replay(run.point, run.seed)?;
        Simulation::replay(scheduler, options)
    } else {
        let site = plan.site(run.point, run.seed)?;
        Simulation::site(site, Arc::clone(default_model)).headroom(plan.headroom)
    };
    let executed = simulation.execute().map_err(within)?;
    Ok(match &executed.outcome {
        Outcome::Site(site) => results::measure(run, site),
        Outcome::Replay(replay) => results::measure_replay(run, replay, &replay.summary()),
    })
}
