#!/usr/bin/env python3
"""Applies ARCHITECTURE.md's recipes to a copy of the checkout: a toy queue order, backfilling
rule, runtime predictor, user kind, measure (in summary.json, the console and the gym), output
format and option, each added exactly as the recipe says (a module and its registration).
scripts/recipes.sh builds the copy, runs the workspace's tests in it and checks that every toy is
reachable; a recipe that stopped being true fails there.

A recipe is a list item of ARCHITECTURE.md or of a page under docs/development/ whose bold title
is followed by a parenthesis saying "checked", as in `- **A new queue order** (checked): ...`;
its toy here begins with `recipe("A new queue order")`. Every checked recipe must have a toy and
every toy a checked recipe: this script fails otherwise, naming them.

    scripts/recipes/apply.py COPY
"""

import re
import sys
from pathlib import Path

root = Path(sys.argv[1])
applied = []


def recipe(title):
    """Begins the toy of the recipe whose bold title is `title`."""
    applied.append(title)
    print(f"recipe: {title}")


def checked_recipes():
    """The titles of the recipes marked checked in ARCHITECTURE.md and docs/development/."""
    pages = [root / "ARCHITECTURE.md", *sorted((root / "docs" / "development").glob("*.md"))]
    titles = set()
    for page in pages:
        for title, note in re.findall(r"^- \*\*([^*]+)\*\*\s*\(([^()]*)\)", page.read_text(), re.M):
            if re.search(r"\bchecked\b", note):
                titles.add(" ".join(title.split()))
    return titles


def edit(path, old, new, count=1):
    p = root / path
    text = p.read_text()
    if old not in text:
        sys.exit(f"recipe failed: {path} no longer holds {old!r}")
    p.write_text(text.replace(old, new, count))


def write(path, text):
    (root / path).write_text(text)


recipe('A new queue order')
# A new queue order that reads the cluster's state through the View: a file in
# cluster/src/order/ and one entry in ORDERS.
write("crates/cluster/src/order/fewest_running.rs", '''//! Toy order: the jobs of the users with the fewest running jobs first.
use super::QueueOrder;
use crate::params::Params;
use crate::policy::{OrderPart, Part};
use crate::{JobRequest, View};

/// The waiting jobs of users who run the fewest jobs now come first (arrival order among
/// equals).
#[derive(Debug)]
pub struct FewestRunning;

impl QueueOrder for FewestRunning {
    fn name(&self) -> String {
        "fewest-running".to_string()
    }
    fn priority(&self, job: &JobRequest, view: &View<'_>) -> f64 {
        -f64::from(view.running_of_user(job.user).jobs)
    }
}

/// The registry entry.
pub static FEWEST_RUNNING: OrderPart = Part {
    name: "fewest-running",
    help: "toy: the jobs of the users running the fewest jobs first",
    params: Params::NONE,
    build: |_| Box::new(FewestRunning),
};
''')
edit("crates/cluster/src/order/mod.rs", "mod length;\n", "mod length;\npub mod fewest_running;\n")
edit("crates/cluster/src/order/mod.rs", "&[&FCFS, &SJF, &LJF, &CREASY]", "&[&FCFS, &SJF, &LJF, &CREASY, &fewest_running::FEWEST_RUNNING]")

recipe('A new scheduler parameter struct')
# A part with parameters: its serde struct (the keys, their defaults, their check) in the part's
# file, named in its registry entry. Here a toy order with one parameter, `age_weight`.
write("crates/cluster/src/order/aged.rs", '''//! Toy order with a parameter: minutes waited times `age_weight`, less the estimate in minutes.
use super::QueueOrder;
use crate::params::{BadValue, Params, PartParams};
use crate::policy::{OrderPart, Part};
use crate::{JobRequest, View};

/// The `aged` order's keys of `[scheduler]`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AgedParams {
    /// Toy: the weight of a minute waited against a minute of estimate (>= 0). Default 2.
    pub age_weight: f64,
}

impl Default for AgedParams {
    fn default() -> Self {
        AgedParams { age_weight: 2.0 }
    }
}

impl PartParams for AgedParams {
    fn check(&mut self, _part: &str) -> Result<(), BadValue> {
        if self.age_weight >= 0.0 {
            Ok(())
        } else {
            Err(BadValue::new(
                format!("age_weight must be >= 0, got {}", self.age_weight),
                &["age_weight"],
            ))
        }
    }
}

/// Minutes waited times the weight, less the estimate in minutes.
#[derive(Debug)]
pub struct Aged {
    age_weight: f64,
}

impl QueueOrder for Aged {
    fn name(&self) -> String {
        format!("aged({})", self.age_weight)
    }
    fn priority(&self, job: &JobRequest, view: &View<'_>) -> f64 {
        let waited = (view.now() - job.submit) as f64 / 60.0;
        self.age_weight * waited - job.estimate as f64 / 60.0
    }
}

/// The registry entry.
pub static AGED: OrderPart = Part {
    name: "aged",
    help: "toy: minutes waited times age_weight, less the estimate in minutes",
    params: Params::of::<AgedParams>(),
    build: |p| {
        Box::new(Aged {
            age_weight: p.get::<AgedParams>().age_weight,
        })
    },
};
''')
edit("crates/cluster/src/order/mod.rs", "mod length;\n", "mod length;\npub mod aged;\n")
edit("crates/cluster/src/order/mod.rs", "&[&FCFS, &SJF, &LJF, &CREASY", "&[&FCFS, &SJF, &LJF, &CREASY, &aged::AGED")

recipe('A new backfilling rule')
# A new backfilling rule: a module in cluster/src/backfill/ and one entry in RULES.
write("crates/cluster/src/backfill/head_only.rs", '''//! Toy rule: jobs start from the head of the queue while they fit (no backfilling).
use super::{Backfill, Pass};
use crate::params::Params;
use crate::policy::{Part, RulePart};

/// Starts jobs from the head while they fit.
#[derive(Debug, Default)]
pub struct HeadOnly;

impl Backfill for HeadOnly {
    fn name(&self) -> &'static str {
        "head-only"
    }
    fn schedule(&mut self, pass: &mut Pass<'_>) {
        pass.sort_queue();
        pass.start_head();
    }
}

/// The registry entry.
pub static HEAD_ONLY: RulePart = Part {
    name: "head-only",
    help: "toy: start jobs from the head while they fit, no backfilling",
    params: Params::NONE,
    build: |_| Box::new(HeadOnly),
};
''')
edit("crates/cluster/src/backfill/mod.rs", "mod easy;\n", "mod easy;\npub mod head_only;\n")
edit("crates/cluster/src/backfill/mod.rs", "    &DYNP_ADVANCED,\n];", "    &DYNP_ADVANCED,\n    &head_only::HEAD_ONLY,\n];")

recipe('A new runtime predictor')
# A new runtime predictor: a variant of Predictor, its prediction in Cluster::submit, and one
# entry in PREDICTORS.
edit("crates/cluster/src/predict.rs", "    Exact,\n}", "    Exact,\n    /// Toy: half the user estimate.\n    HalfEstimate,\n}")
edit("crates/cluster/src/predict.rs", "pub static PREDICTORS: &[&PredictorPart] = &[&ESTIMATE, &USER_LAST_TWO, &EXACT];",
     '''pub static PREDICTORS: &[&PredictorPart] = &[&ESTIMATE, &USER_LAST_TWO, &EXACT, &HALF];

/// Toy: half the estimate.
pub static HALF: PredictorPart = Part {
    name: "half",
    help: "toy: half the user estimate",
    params: crate::params::Params::NONE,
    build: Predictor::HalfEstimate,
};''')
edit("crates/cluster/src/cluster/mod.rs", "            Predictor::Exact => match runtime {",
     "            Predictor::HalfEstimate => job.estimate / 2,\n            Predictor::Exact => match runtime {")

recipe('A new kind of user model')
# A new kind of user model: a module in users/src/kinds/ and one line in KINDS.
write("crates/users/src/kinds/steady.rs", '''//! Toy kind: a user who submits one one-processor job of `runtime` seconds, waits for it,
//! thinks a minute and submits the next, around the clock.
use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use super::{
    AfterBatch, ClosingJob, Decision, Draws, KindConfig, Prefix, UserBehaviour, UserFactory,
};
use crate::Time;
use crate::config::ConfigError;
use crate::cycle::Calendar;
use crate::submission::JobAttributes;

/// `kind = "steady"`'s keys.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct SteadyConfig {
    /// Each job's runtime, seconds.
    pub runtime: Time,
}

impl Default for SteadyConfig {
    fn default() -> Self {
        SteadyConfig { runtime: 600 }
    }
}

impl KindConfig for SteadyConfig {
    const NAME: &'static str = "steady";
    const HELP: &'static str = "toy: one job at a time, around the clock";
    fn check(&self, prefix: &Prefix<'_>) -> Result<Arc<dyn UserFactory>, ConfigError> {
        if self.runtime <= 0 {
            return Err(prefix.error("runtime", self.runtime.to_string(), "must be > 0"));
        }
        Ok(Arc::new(self.clone()))
    }
}

impl UserFactory for SteadyConfig {
    fn kind(&self) -> &'static str {
        Self::NAME
    }
    fn user(&self, _calendar: Calendar, _profile: Pcg64) -> Box<dyn UserBehaviour> {
        Box::new(Steady { runtime: self.runtime })
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One steady user.
#[derive(Debug)]
struct Steady {
    runtime: Time,
}

impl UserBehaviour for Steady {
    fn is_active(&mut self, _t: Time) -> bool {
        true
    }
    fn next_opening(&mut self, t: Time) -> Time {
        t
    }
    fn next_batch(&mut self, now: Time, _draws: &mut Draws<'_>, batch: &mut VecDeque<(Time, JobAttributes)>) {
        batch.push_back((now, JobAttributes { processors: 1, runtime: self.runtime, estimate: 2 * self.runtime }));
    }
    fn batch_complete(&mut self, _job: &ClosingJob, _draws: &mut Draws<'_>) -> Decision {
        Decision { next: AfterBatch::Continue { think: 60 }, continue_probability: None }
    }
}
''')
edit("crates/users/src/kinds/mod.rs", "pub mod shmueli;\n", "pub mod shmueli;\npub mod steady;\n")
edit("crates/users/src/kinds/mod.rs", "    Kind::of::<schlagkamp::SchlagkampConfig>(),\n];",
     "    Kind::of::<schlagkamp::SchlagkampConfig>(),\n    Kind::of::<steady::SteadyConfig>(),\n];")

recipe('A new measure')
# A new measure: a field of Summary (metrics/src/summary.rs) and one entry in metrics::MEASURES
# (metrics/src/catalogue.rs) with its direction; results.csv, summary.json, the run console
# (after the summary, under its title) and the gym (an episodic reward by its name) follow.
edit("crates/metrics/src/summary.rs", "    pub loss_of_capacity: f64,\n",
     """    pub loss_of_capacity: f64,
    /// Toy: twice the jobs measured.
    pub toy_jobs_doubled: f64,
""")
edit("crates/metrics/src/summary.rs", "        loss_of_capacity: waiting.loss_of_capacity,\n",
     """        loss_of_capacity: waiting.loss_of_capacity,
        toy_jobs_doubled: 2.0 * jobs.jobs as f64,
""")
edit("crates/metrics/src/catalogue.rs", "pub static MEASURES: &[Measure] = &[\n",
     '''pub static MEASURES: &[Measure] = &[
    measure(
        "toy_jobs_doubled",
        Unit::Jobs,
        "toy: twice the jobs measured",
        Some("summary.toy_jobs_doubled"),
        "toy jobs x2",
        1.0,
        |m| m.summary.toy_jobs_doubled,
    )
    .higher_is_better(),
''')
# The recipe's check in the gym: the toy is accepted as a reward and measured by name.
write("crates/gym/tests/toy_measure.rs", """//! Toy check of the recipe "a new measure": the gym takes it as an episodic reward.
#![allow(clippy::unwrap_used)]
use gym::{ActionMode, Env, EnvConfig, RewardKind, RewardMode, Source};

#[test]
fn the_toy_measure_is_a_reward() {
    let kind = RewardKind::named("toy_jobs_doubled").unwrap();
    assert!(matches!(kind, RewardKind::Measure(_)));
    let table: Vec<_> = config::options::run_options().collect();
    let value = |key: &str, v: toml::Value| (table.iter().find(|o| o.key == key).copied().unwrap(), v);
    let values = vec![
        value("users", toml::Value::Integer(10)),
        value("weeks", toml::Value::Integer(1)),
    ];
    let site = config::options::site(config::options::SiteSource::Default, &values).unwrap();
    let model = std::sync::Arc::new(config::models::default_model().unwrap());
    let config = EnvConfig {
        mode: ActionMode::Score,
        window: 8,
        warm_days: 1,
        reward: kind,
        reward_mode: RewardMode::Episodic,
        ..EnvConfig::default()
    };
    let mut env = Env::new(Source::site(site, model).unwrap(), config).unwrap();
    let mut obs = vec![0.0; env.observation_size()];
    let mut mask = vec![false; env.mask_size()];
    let scores = vec![0.0; 8];
    assert!(env.reset(None, None, &mut obs, &mut mask).unwrap());
    let last = loop {
        let (reward, te, tr) = env.step_score(&scores, &mut obs, &mut mask).unwrap();
        if te || tr {
            break reward;
        }
    };
    let summary = env.summary().unwrap();
    let (name, value) = summary.other.unwrap();
    assert_eq!(name, "toy_jobs_doubled");
    assert!(value > 0.0 && last == value, "{value} {last}");
}
""")

recipe('A new output format')
# A new output format: a type implementing OutputFormat and one entry in FORMATS.
write("crates/scenario/src/toy_format.rs", '''//! Toy output format: `toy.txt`, the number of jobs.
use std::io::Write;

use config::Result;

use crate::output::{OutputFormat, io_error};
use crate::sink::{JobEvent, RunEnd, RunHeader, Sink};

/// `toy.txt`.
#[derive(Debug, Clone, Copy)]
pub struct ToyText;

impl OutputFormat for ToyText {
    fn file_name(&self) -> &'static str {
        "toy.txt"
    }
    fn about(&self) -> &'static str {
        "toy: the number of jobs"
    }
    fn sink(&self, _run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(Count { jobs: 0, out }))
    }
}

struct Count {
    jobs: u64,
    out: Box<dyn Write + Send>,
}

impl Sink for Count {
    fn job(&mut self, _job: JobEvent<'_>) -> Result<()> {
        self.jobs += 1;
        Ok(())
    }
    fn finish(mut self: Box<Self>, _end: &RunEnd<'_>) -> Result<()> {
        writeln!(self.out, "{} jobs", self.jobs)
            .and_then(|()| self.out.flush())
            .map_err(|e| io_error("toy.txt", e))
    }
}
''')
edit("crates/scenario/src/lib.rs", "pub mod synth;\n", "pub mod synth;\npub mod toy_format;\n")
edit("crates/scenario/src/output.rs", "    &crate::outages::OutagesCsv,\n];", "    &crate::outages::OutagesCsv,\n    &crate::toy_format::ToyText,\n];")

recipe('A new option of `run` or `replay`')
# A new option of run: one entry in the option table (and its keyword in the Python wrapper).
edit("crates/config/src/options.rs", '''        site_option(
            "job_sizes",''', '''        site_option(
            "start",
            Some("TIME"),
            "toy: the run's time 0 (site.start)",
            Kind::Text,
            Target::Site("site.start"),
        ),
        site_option(
            "job_sizes",''')
edit("crates/sitesim-py/python/sitesim/__init__.py", "    job_sizes: Optional[str] = None,\n    power: Optional[PathLike] = None,\n    out: Optional[PathLike] = None,",
     "    start: Optional[str] = None,\n    job_sizes: Optional[str] = None,\n    power: Optional[PathLike] = None,\n    out: Optional[PathLike] = None,")
recipe('A new resource')
# A new resource: the machine names it (`--resources licences=N`); sacct's `Licenses` column
# (`matlab:2,ansys:1`) gives each job's count of it, summed; EASY and jobs.csv need nothing.
edit("crates/sacct/src/log.rs", "    Constraints,\n    ConsumedEnergyRaw,\n    Reservation,\n    SubmitLine,\n}", "    Constraints,\n    ConsumedEnergyRaw,\n    Reservation,\n    Licenses,\n    SubmitLine,\n}")
edit("crates/sacct/src/log.rs", '            "reason" => Column::Reason,\n', '            "reason" => Column::Reason,\n            "licenses" => Column::Licenses,\n')
edit("crates/sacct/src/log.rs", """        let mut extra = job::Extra::NONE;
        if self.options.resources.is_empty() {
            return Ok(extra);
        }""", """        let mut extra = job::Extra::NONE;
        if self.options.resources.is_empty() {
            return Ok(extra);
        }
        // toy: the licences of the Licenses column (NAME:COUNT,...), summed
        if let Some(index) = self.options.resources.iter().position(|n| n == "licences") {
            let list = layout.get(fields, Column::Licenses).unwrap_or("");
            let mut count = 0u32;
            for item in list.split(',').filter(|i| !i.is_empty()) {
                let amount = item.rsplit(':').next().unwrap_or("1");
                count += amount.parse::<u32>().map_err(|_| {
                    self.error(line, layout, Column::Licenses, list, "NAME:COUNT,...")
                })?;
            }
            extra = extra.with(index, count);
        }""")

checked = checked_recipes()
if not checked:
    sys.exit("recipe failed: no recipe of ARCHITECTURE.md or docs/development/ is marked checked")
untoyed = sorted(checked - set(applied))
unmarked = sorted(set(applied) - checked)
if untoyed or unmarked:
    sys.exit(
        "recipes and toys differ:"
        + "".join(f"\n  {t!r} is marked checked but has no toy in scripts/recipes/apply.py" for t in untoyed)
        + "".join(f"\n  the toy of {t!r} has no recipe marked checked" for t in unmarked)
    )
print(f"recipes applied: {len(applied)}")
