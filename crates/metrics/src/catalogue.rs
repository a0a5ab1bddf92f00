//! The measure catalogue: every measure a run reports, in one place.
//!
//! A [`Measure`] says what it is called (its name in results.csv, in `[report]` of a sweep file,
//! in the plots and as a reward of the Gymnasium environment), its unit, where it lives in a
//! run's `summary.json`, how to get its value from a run's summaries, how to print it (a short
//! column title and the scale from its unit to the printed one, e.g. seconds to minutes),
//! whether the terminal summary prints it and which way is better. The sweep's results table,
//! its `[report]` validation and terminal table, the plots, the terminal summary of `sitesim run`
//! and `sitesim replay` ([`crate::console`]) and the Gymnasium environment's rewards and episode
//! measures all read [`MEASURES`], so a new measure is one entry here and cannot be missing from
//! one of them; the tests check that every entry's `summary.json` path holds the value it
//! extracts.
//!
//! The order of [`MEASURES`] is the row order of results.csv.

use serde::Serialize;

use crate::{ClassSummary, ClosedLoopSummary, Summary};

/// What measures are computed from: one run's job summary and, in a closed-loop run, its
/// session summary and its number of users.
#[derive(Debug, Clone, Copy)]
pub struct MeasureInput<'a> {
    /// The summary of the jobs.
    pub summary: &'a Summary,
    /// The closed-loop summary (`None` for a replay: closed-loop measures are then undefined).
    pub closed_loop: Option<&'a ClosedLoopSummary>,
    /// Simulated users (0 for a replay).
    pub users: usize,
    /// dynP's policy usage (`None` under other schedulers: its measures are then undefined).
    pub policy_usage: Option<&'a PolicyUse>,
    /// The Slurm model's division of CPU time against shares (`None` under other schedulers).
    pub slurm: Option<&'a SlurmUse>,
    /// The run's energy, power, carbon and cost (`None` without a power model: its measures
    /// are then undefined).
    pub power: Option<&'a PowerUse>,
}

/// A run's energy, power, carbon and cost as its measures read them (summary.json's `power`,
/// written by a run with a power model: `--power FILE`, a site's `[power]`). Plain numbers, so
/// that the catalogue need not know the meter (crate `power`) that computes them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PowerUse {
    /// IT energy over the run's span (the nodes' idle power plus every job's charge), kWh.
    pub it_kwh: f64,
    /// Facility energy (IT energy x PUE), kWh.
    pub facility_kwh: f64,
    /// Mean IT power over the span, kW.
    pub mean_kw: f64,
    /// Peak IT power (the most the machine drew at any instant), kW.
    pub peak_kw: f64,
    /// Peak facility power (peak IT power x PUE), kW.
    pub peak_facility_kw: f64,
    /// Carbon of the facility energy, kg CO2 (`None` without a carbon-intensity series).
    pub carbon_kg: Option<f64>,
    /// Cost of the facility energy, in the price series' currency (`None` without a price
    /// series).
    pub cost: Option<f64>,
    /// Mean IT energy per job metered, kWh.
    pub energy_per_job_kwh: f64,
}

/// How the CPU time a run delivered divided among users against their fair-share shares, under
/// the Slurm model (summary.json's `slurm`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SlurmUse {
    /// Jain's index over users of (share of the CPU-seconds delivered) / (normalised share).
    pub fairness_index: f64,
    /// Half the summed absolute difference between users' shares of the CPU-seconds and their
    /// normalised shares.
    pub share_error: f64,
}

/// dynP's policy usage as its measures read it (summary.json's `policy_usage`; Streit's Tables 5
/// and 6), by policy in the order FCFS, SJF, LJF.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PolicyUse {
    /// Jobs started under each policy.
    pub jobs_started: [u64; 3],
    /// Decisions that switched to each policy.
    pub switches_to: [u64; 3],
    /// Decisions taken.
    pub decisions: u64,
    /// Decisions that kept the policy.
    pub kept: u64,
    /// Mean number of waiting jobs at a decision.
    pub average_backlog: f64,
}

/// The unit of a measure's value as results.csv and `summary.json` hold it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Seconds.
    Seconds,
    /// Jobs per hour.
    JobsPerHour,
    /// A number of jobs.
    Jobs,
    /// A number of sessions.
    Sessions,
    /// Sessions per user.
    SessionsPerUser,
    /// Processor-seconds.
    ProcessorSeconds,
    /// A share in [0, 1].
    Fraction,
    /// A percentage (0..100).
    Percent,
    /// A dimensionless ratio (slowdowns, corrections per job).
    Ratio,
    /// A number of scheduling decisions (dynP's).
    Decisions,
    /// Kilowatt-hours of energy.
    KilowattHours,
    /// Kilowatts of power.
    Kilowatts,
    /// Kilograms of CO2 emitted.
    KgCo2,
    /// Money, in the currency of the power model's price series.
    Cost,
}

impl Unit {
    /// Its name in results.csv's `unit` column and the docs' measures page (docs/reference/measures.md): the symbol,
    /// `ratio` for dimensionless ratios.
    pub fn name(self) -> &'static str {
        match self.symbol() {
            "" => "ratio",
            symbol => symbol,
        }
    }

    /// A short symbol for tables and axis labels (empty for dimensionless ratios).
    pub fn symbol(self) -> &'static str {
        match self {
            Unit::Seconds => "s",
            Unit::JobsPerHour => "jobs/h",
            Unit::Jobs => "jobs",
            Unit::Sessions => "sessions",
            Unit::SessionsPerUser => "sessions/user",
            Unit::ProcessorSeconds => "processor-s",
            Unit::Fraction => "fraction",
            Unit::Percent => "%",
            Unit::Ratio => "",
            Unit::Decisions => "decisions",
            Unit::KilowattHours => "kWh",
            Unit::Kilowatts => "kW",
            Unit::KgCo2 => "kgCO2",
            Unit::Cost => "cost",
        }
    }
}

/// One measure of a run.
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    /// Its name: the `metric` column of results.csv, `[report] measures`, the plots.
    pub name: &'static str,
    /// The unit of its value.
    pub unit: Unit,
    /// One line on what it is (and where it is defined).
    pub about: &'static str,
    /// Where `summary.json` holds it, as dot-separated keys (array indices as numbers); `None`
    /// for a measure derived from others (its `about` gives the formula).
    pub json_path: Option<&'static str>,
    /// A short column title for terminal tables, in the printed unit.
    pub title: &'static str,
    /// Multiplies the value for printing (1/60 prints seconds as minutes, 100 a fraction as %).
    pub print_scale: f64,
    /// The least value a run can have (`None`: unbounded below), so that a confidence interval
    /// over seeds can be cut at it: 0 for times, counts, shares and slowdowns, 1 for bounded
    /// slowdowns (`max(1, ...)`), none for headroom and capture (a run may beat its reference).
    pub floor: Option<f64>,
    /// Whether the terminal summary of `sitesim run` and `sitesim replay` prints it: where the
    /// layout of [`crate::console`] places it, else among the lines after the summary, when
    /// the run defines it. True by default, so that a new measure is printed; false for the
    /// measures only summary.json and results.csv hold (`Measure::not_on_console`).
    pub console: bool,
    /// What a run needs for the measure to have a value (`None`: every run has one, as long
    /// as it has jobs of its class or a closed loop where it says so). A run without it leaves
    /// the measure undefined: an empty cell in a sweep's per-run files, `n` = 0 in results.csv.
    /// The columns stay, so that every sweep's files have the same columns; except those of a
    /// condition that is tabulated only when met ([`Condition::tabulated_when_unmet`] false:
    /// a power model), which a sweep's files have only when some run of it meets it.
    pub only_with: Option<Condition>,
    /// Which way is better for a scheduler (`None`: a count or a diagnostic with no direction),
    /// so that whoever optimises a measure knows its sign: the Gymnasium environment rewards
    /// a cost negatively and a benefit positively, and asks for a sign where there is none.
    pub better: Option<Better>,
    /// Gets the value; NaN when undefined (no closed loop, no job of a class, not computed).
    pub(crate) value: fn(&MeasureInput) -> f64,
}

/// What a run needs for a conditional measure (`Measure::only_with`) to have a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Condition {
    /// Fair start times computed (`--fairness`).
    Fairness,
    /// The uncontended and EASY runs of a closed loop (`--headroom`).
    Headroom,
    /// The memory-bandwidth sharing model: a machine of nodes whose jobs have bandwidth
    /// demands.
    Sharing,
    /// A dynP scheduler.
    Dynp,
    /// The Slurm model.
    Slurm,
    /// A power model (`power`, a site's `[power]`).
    Power,
}

impl Condition {
    /// What the run needs, for the measures page and messages.
    pub fn describe(self) -> &'static str {
        match self {
            Condition::Fairness => "`--fairness` (`fairness = true`)",
            Condition::Headroom => "`--headroom` (a closed-loop run)",
            Condition::Sharing => {
                "the sharing model (`--node-processors` with `--bandwidth-mix`, or groups' `bandwidth_mix`)"
            }
            Condition::Dynp => "a dynP scheduler (`dynp`, `dynp-simple`, `dynp-advanced`)",
            Condition::Slurm => "the Slurm model (`slurm`, `slurm-site`)",
            Condition::Power => "a power model (`power`, a site's `[power]`)",
        }
    }

    /// Whether the tables of runs (a sweep's results.csv, per-run and per-seed files) have the
    /// condition's measures when no run meets it: true for the conditions measures had before
    /// the power model, so that those files keep their columns; false for a power model, whose
    /// measures a sweep without one does not tabulate (its files stay as they were).
    pub fn tabulated_when_unmet(self) -> bool {
        !matches!(self, Condition::Power)
    }
}

/// Which way a measure is better for a scheduler.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Better {
    /// A cost: less is better (waits, slowdowns, lost capacity).
    Lower,
    /// A benefit: more is better (throughput, utilization, session length).
    Higher,
}

impl Measure {
    /// The measure's value in a run; NaN when it is undefined there.
    pub fn value(&self, input: &MeasureInput) -> f64 {
        (self.value)(input)
    }

    /// Whether a table of runs has this measure, given `met`: whether some run of it meets a
    /// condition. Always, unless its condition is tabulated only when met
    /// ([`Condition::tabulated_when_unmet`]) and no run meets it.
    pub fn tabulated(&self, met: impl Fn(Condition) -> bool) -> bool {
        match self.only_with {
            Some(condition) if !condition.tabulated_when_unmet() => met(condition),
            _ => true,
        }
    }
}

/// Other names a measure goes by, each with the catalogue's name, which every output uses. A
/// name here is accepted wherever a measure is named (`sitesim plot --measure`, a sweep's
/// `[report] measures`, the Gymnasium environment's `reward=`), so that a script written with
/// it keeps working.
///
/// `mean_wait`: the mean wait is `wait_mean` in the catalogue, results.csv and summary.json's
/// `slurm.accounts`, `summary.wait_seconds.mean` in summary.json's job summary, and
/// `mean_wait` in its `nodes` section (`nodes.waits_by_partition.NAME.mean_wait`), which
/// keeps that key so that summary.json files stay as they were.
pub const MEASURE_ALIASES: [(&str, &str); 1] = [("mean_wait", "wait_mean")];

/// The catalogue's name for `name`: the measure an alias ([`MEASURE_ALIASES`]) stands for,
/// else `name` itself.
pub fn canonical_name(name: &str) -> &str {
    MEASURE_ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, canonical)| canonical)
}

/// The measure called `name` (or an alias of it, [`MEASURE_ALIASES`]).
pub fn find_measure(name: &str) -> Option<&'static Measure> {
    let name = canonical_name(name);
    MEASURES
        .iter()
        .chain(EXTRA_MEASURES)
        .find(|m| m.name == name)
}

/// The names of every measure of [`MEASURES`] (the reported ones), in catalogue order.
pub fn measure_names() -> impl Iterator<Item = &'static str> {
    MEASURES.iter().map(|m| m.name)
}

fn closed(input: &MeasureInput, value: fn(&ClosedLoopSummary) -> f64) -> f64 {
    input.closed_loop.map_or(f64::NAN, value)
}

fn headroom(input: &MeasureInput, value: fn(&crate::Headroom) -> f64) -> f64 {
    input
        .closed_loop
        .and_then(|c| c.headroom.as_ref())
        .map_or(f64::NAN, value)
}

fn policy(input: &MeasureInput, value: fn(&PolicyUse) -> f64) -> f64 {
    input.policy_usage.map_or(f64::NAN, value)
}

fn slurm(input: &MeasureInput, value: fn(&SlurmUse) -> f64) -> f64 {
    input.slurm.map_or(f64::NAN, value)
}

fn power(input: &MeasureInput, value: fn(&PowerUse) -> f64) -> f64 {
    input.power.map_or(f64::NAN, value)
}

fn class(input: &MeasureInput, index: usize, value: fn(&ClassSummary) -> f64) -> f64 {
    input.summary.classes.get(index).map_or(f64::NAN, value)
}

/// Shorthand for catalogue entries.
const fn measure(
    name: &'static str,
    unit: Unit,
    about: &'static str,
    json_path: Option<&'static str>,
    title: &'static str,
    print_scale: f64,
    value: fn(&MeasureInput) -> f64,
) -> Measure {
    Measure {
        name,
        unit,
        about,
        json_path,
        title,
        print_scale,
        floor: Some(0.0),
        console: true,
        only_with: None,
        better: None,
        value,
    }
}

impl Measure {
    /// The same measure with another [`Measure::floor`].
    const fn with_floor(self, floor: Option<f64>) -> Measure {
        Measure { floor, ..self }
    }

    /// The same measure, left off the terminal summary ([`Measure::console`]).
    const fn not_on_console(self) -> Measure {
        Measure {
            console: false,
            ..self
        }
    }

    /// The same measure, defined only in a run that meets `condition` ([`Measure::only_with`]).
    const fn only_with(self, condition: Condition) -> Measure {
        Measure {
            only_with: Some(condition),
            ..self
        }
    }

    /// The same measure as a cost ([`Better::Lower`]).
    const fn lower_is_better(self) -> Measure {
        Measure {
            better: Some(Better::Lower),
            ..self
        }
    }

    /// The same measure as a benefit ([`Better::Higher`]).
    const fn higher_is_better(self) -> Measure {
        Measure {
            better: Some(Better::Higher),
            ..self
        }
    }
}

const MINUTES: f64 = 1.0 / 60.0;

/// Every measure, in results.csv's row order. The first 42 are the measures results.csv has
/// always had, in their old order; later ones were added when the catalogue was introduced.
pub static MEASURES: &[Measure] = &[
    measure(
        "throughput_submitted_per_hour",
        Unit::JobsPerHour,
        "jobs submitted in the measurement window per hour (paper 000, section IV-B)",
        Some("closed_loop.submitted_per_hour"),
        "jobs/h",
        1.0,
        |m| closed(m, |c| c.submitted_per_hour),
    )
    .higher_is_better(),
    measure(
        "throughput_completed_per_hour",
        Unit::JobsPerHour,
        "jobs that ended in the measurement window per hour",
        Some("closed_loop.completed_per_hour"),
        "done/h",
        1.0,
        |m| closed(m, |c| c.completed_per_hour),
    )
    .higher_is_better(),
    measure(
        "sessions",
        Unit::Sessions,
        "sessions that started in the measurement window",
        Some("closed_loop.sessions"),
        "sessions",
        1.0,
        |m| closed(m, |c| c.sessions as f64),
    ),
    measure(
        "session_length_mean",
        Unit::Jobs,
        "mean jobs per session (paper 000, section IV-B)",
        Some("closed_loop.mean_session_jobs"),
        "session",
        1.0,
        |m| closed(m, |c| c.mean_session_jobs),
    )
    .higher_is_better(),
    measure(
        "session_length_median",
        Unit::Jobs,
        "median jobs per session",
        Some("closed_loop.median_session_jobs"),
        "session p50",
        1.0,
        |m| closed(m, |c| c.median_session_jobs),
    )
    .higher_is_better(),
    measure(
        "sessions_ended_by_abort",
        Unit::Sessions,
        "sessions that ended with a break after a batch",
        Some("closed_loop.ended_by_abort"),
        "by abort",
        1.0,
        |m| closed(m, |c| c.ended_by_abort as f64),
    ),
    measure(
        "sessions_ended_by_cycle",
        Unit::Sessions,
        "sessions that ended because the activity window closed",
        Some("closed_loop.ended_by_cycle"),
        "by cycle",
        1.0,
        |m| closed(m, |c| c.ended_by_cycle as f64),
    ),
    measure(
        "sessions_ended_by_end_of_run",
        Unit::Sessions,
        "sessions still open at the end of the run",
        Some("closed_loop.ended_by_end_of_run"),
        "by end",
        1.0,
        |m| closed(m, |c| c.ended_by_end_of_run as f64),
    ),
    measure(
        "utilization",
        Unit::Fraction,
        "share of the window's processor time used by jobs",
        Some("summary.utilization"),
        "util %",
        100.0,
        |m| m.summary.utilization,
    )
    .higher_is_better(),
    measure(
        "jobs_measured",
        Unit::Jobs,
        "jobs the averages are over",
        Some("summary.jobs_measured"),
        "measured",
        1.0,
        |m| m.summary.jobs_measured as f64,
    ),
    measure(
        "jobs_killed",
        Unit::Jobs,
        "jobs killed at their estimate",
        Some("summary.jobs_killed"),
        "killed",
        1.0,
        |m| m.summary.jobs_killed as f64,
    )
    .lower_is_better(),
    measure(
        "processed_work",
        Unit::ProcessorSeconds,
        "processor-seconds used inside the utilization window (paper 004's processed workload)",
        Some("summary.processed_work"),
        "work",
        1.0,
        |m| m.summary.processed_work,
    )
    .higher_is_better(),
    measure(
        "wait_mean",
        Unit::Seconds,
        "mean wait time",
        Some("summary.wait_seconds.mean"),
        "wait min",
        MINUTES,
        |m| m.summary.wait_seconds.mean,
    )
    .lower_is_better(),
    measure(
        "wait_p50",
        Unit::Seconds,
        "median wait time",
        Some("summary.wait_seconds.p50"),
        "wait p50 min",
        MINUTES,
        |m| m.summary.wait_seconds.p50,
    )
    .lower_is_better(),
    measure(
        "wait_p95",
        Unit::Seconds,
        "95th percentile of the wait time",
        Some("summary.wait_seconds.p95"),
        "wait p95 min",
        MINUTES,
        |m| m.summary.wait_seconds.p95,
    )
    .lower_is_better(),
    measure(
        "wait_p99",
        Unit::Seconds,
        "99th percentile of the wait time",
        Some("summary.wait_seconds.p99"),
        "wait p99 min",
        MINUTES,
        |m| m.summary.wait_seconds.p99,
    )
    .lower_is_better(),
    measure(
        "response_mean",
        Unit::Seconds,
        "mean response time (wait + run)",
        Some("summary.response_seconds.mean"),
        "resp min",
        MINUTES,
        |m| m.summary.response_seconds.mean,
    )
    .lower_is_better(),
    measure(
        "response_p50",
        Unit::Seconds,
        "median response time",
        Some("summary.response_seconds.p50"),
        "resp p50 min",
        MINUTES,
        |m| m.summary.response_seconds.p50,
    )
    .lower_is_better(),
    measure(
        "response_p95",
        Unit::Seconds,
        "95th percentile of the response time",
        Some("summary.response_seconds.p95"),
        "resp p95 min",
        MINUTES,
        |m| m.summary.response_seconds.p95,
    )
    .lower_is_better(),
    measure(
        "response_p99",
        Unit::Seconds,
        "99th percentile of the response time",
        Some("summary.response_seconds.p99"),
        "resp p99 min",
        MINUTES,
        |m| m.summary.response_seconds.p99,
    )
    .lower_is_better(),
    measure(
        "slowdown_mean",
        Unit::Ratio,
        "mean slowdown (response / runtime, runtime at least 1 s)",
        Some("summary.slowdown.mean"),
        "slowdown",
        1.0,
        |m| m.summary.slowdown.mean,
    )
    .lower_is_better(),
    measure(
        "slowdown_p50",
        Unit::Ratio,
        "median slowdown",
        Some("summary.slowdown.p50"),
        "sld p50",
        1.0,
        |m| m.summary.slowdown.p50,
    )
    .lower_is_better(),
    measure(
        "slowdown_p95",
        Unit::Ratio,
        "95th percentile of the slowdown",
        Some("summary.slowdown.p95"),
        "sld p95",
        1.0,
        |m| m.summary.slowdown.p95,
    )
    .lower_is_better(),
    measure(
        "slowdown_p99",
        Unit::Ratio,
        "99th percentile of the slowdown",
        Some("summary.slowdown.p99"),
        "sld p99",
        1.0,
        |m| m.summary.slowdown.p99,
    )
    .lower_is_better(),
    measure(
        "bounded_slowdown_mean",
        Unit::Ratio,
        "mean bounded slowdown (runtime at least 10 s)",
        Some("summary.bounded_slowdown.mean"),
        "bsld",
        1.0,
        |m| m.summary.bounded_slowdown.mean,
    )
    .with_floor(Some(1.0))
    .lower_is_better(),
    measure(
        "bounded_slowdown_p50",
        Unit::Ratio,
        "median bounded slowdown",
        Some("summary.bounded_slowdown.p50"),
        "bsld p50",
        1.0,
        |m| m.summary.bounded_slowdown.p50,
    )
    .with_floor(Some(1.0))
    .lower_is_better(),
    measure(
        "bounded_slowdown_p95",
        Unit::Ratio,
        "95th percentile of the bounded slowdown",
        Some("summary.bounded_slowdown.p95"),
        "bsld p95",
        1.0,
        |m| m.summary.bounded_slowdown.p95,
    )
    .with_floor(Some(1.0))
    .lower_is_better(),
    measure(
        "bounded_slowdown_p99",
        Unit::Ratio,
        "99th percentile of the bounded slowdown",
        Some("summary.bounded_slowdown.p99"),
        "bsld p99",
        1.0,
        |m| m.summary.bounded_slowdown.p99,
    )
    .with_floor(Some(1.0))
    .lower_is_better(),
    measure(
        "short_jobs",
        Unit::Jobs,
        "measured jobs of runtime up to 1 minute",
        Some("summary.classes.0.jobs"),
        "short jobs",
        1.0,
        |m| class(m, 0, |c| c.jobs as f64),
    ),
    measure(
        "short_wait_mean",
        Unit::Seconds,
        "mean wait of jobs of runtime up to 1 minute",
        Some("summary.classes.0.wait_seconds.mean"),
        "short wait min",
        MINUTES,
        |m| class(m, 0, |c| c.wait_seconds.mean),
    )
    .lower_is_better(),
    measure(
        "short_response_mean",
        Unit::Seconds,
        "mean response of jobs of runtime up to 1 minute (paper 000, Fig. 12)",
        Some("summary.classes.0.response_seconds.mean"),
        "short resp min",
        MINUTES,
        |m| class(m, 0, |c| c.response_seconds.mean),
    )
    .lower_is_better(),
    measure(
        "short_slowdown_mean",
        Unit::Ratio,
        "mean slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.slowdown.mean"),
        "short sld",
        1.0,
        |m| class(m, 0, |c| c.slowdown.mean),
    )
    .lower_is_better(),
    measure(
        "medium_jobs",
        Unit::Jobs,
        "measured jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.jobs"),
        "medium jobs",
        1.0,
        |m| class(m, 1, |c| c.jobs as f64),
    ),
    measure(
        "medium_wait_mean",
        Unit::Seconds,
        "mean wait of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.wait_seconds.mean"),
        "medium wait min",
        MINUTES,
        |m| class(m, 1, |c| c.wait_seconds.mean),
    )
    .lower_is_better(),
    measure(
        "medium_response_mean",
        Unit::Seconds,
        "mean response of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.response_seconds.mean"),
        "medium resp min",
        MINUTES,
        |m| class(m, 1, |c| c.response_seconds.mean),
    )
    .lower_is_better(),
    measure(
        "medium_slowdown_mean",
        Unit::Ratio,
        "mean slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.slowdown.mean"),
        "medium sld",
        1.0,
        |m| class(m, 1, |c| c.slowdown.mean),
    )
    .lower_is_better(),
    measure(
        "long_jobs",
        Unit::Jobs,
        "measured jobs of runtime over 10 minutes",
        Some("summary.classes.2.jobs"),
        "long jobs",
        1.0,
        |m| class(m, 2, |c| c.jobs as f64),
    ),
    measure(
        "long_wait_mean",
        Unit::Seconds,
        "mean wait of jobs of runtime over 10 minutes",
        Some("summary.classes.2.wait_seconds.mean"),
        "long wait min",
        MINUTES,
        |m| class(m, 2, |c| c.wait_seconds.mean),
    )
    .lower_is_better(),
    measure(
        "long_response_mean",
        Unit::Seconds,
        "mean response of jobs of runtime over 10 minutes",
        Some("summary.classes.2.response_seconds.mean"),
        "long resp min",
        MINUTES,
        |m| class(m, 2, |c| c.response_seconds.mean),
    )
    .lower_is_better(),
    measure(
        "long_slowdown_mean",
        Unit::Ratio,
        "mean slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.slowdown.mean"),
        "long sld",
        1.0,
        |m| class(m, 2, |c| c.slowdown.mean),
    )
    .lower_is_better(),
    measure(
        "sessions_per_user",
        Unit::SessionsPerUser,
        "sessions / simulated users (derived: closed_loop.sessions over the users)",
        None,
        "sess/user",
        1.0,
        |m| closed(m, |c| c.sessions as f64) / m.users.max(1) as f64,
    )
    .not_on_console(),
    measure(
        "awrt",
        Unit::Seconds,
        "response time weighted by area (Schwiegelshohn's AWRT, paper 004 section 3)",
        Some("summary.awrt_seconds"),
        "AWRT min",
        MINUTES,
        |m| m.summary.awrt_seconds,
    )
    .lower_is_better()
    .not_on_console(),
    // Added with the catalogue: measures the summary always had but results.csv did not.
    measure(
        "jobs_simulated",
        Unit::Jobs,
        "jobs that ran (measured or not)",
        Some("summary.jobs_simulated"),
        "simulated",
        1.0,
        |m| m.summary.jobs_simulated as f64,
    ),
    measure(
        "bounded_slowdown_max",
        Unit::Ratio,
        "largest bounded slowdown",
        Some("summary.bounded_slowdown.max"),
        "bsld max",
        1.0,
        |m| m.summary.bounded_slowdown.max,
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "wait_max",
        Unit::Seconds,
        "largest wait time",
        Some("summary.wait_seconds.max"),
        "wait max min",
        MINUTES,
        |m| m.summary.wait_seconds.max,
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "artww",
        Unit::Seconds,
        "response time weighted by width (Streit's ARTwW, paper 002 section 5.1)",
        Some("summary.artww_seconds"),
        "ARTwW min",
        MINUTES,
        |m| m.summary.artww_seconds,
    )
    .lower_is_better(),
    measure(
        "sldww_60",
        Unit::Ratio,
        "slowdown weighted by width, bounded by 60 s (paper 002, section 5.1)",
        Some("summary.sldww_60"),
        "SLDwW",
        1.0,
        |m| m.summary.sldww_60,
    )
    .lower_is_better(),
    measure(
        "loss_of_capacity",
        Unit::Fraction,
        "share of processor time idle while a job waited (paper 002, section 5.2)",
        Some("summary.loss_of_capacity"),
        "LoC",
        1.0,
        |m| m.summary.loss_of_capacity,
    )
    .lower_is_better(),
    measure(
        "prediction_accuracy",
        Unit::Fraction,
        "mean accuracy of the planned runtimes (Tsafrir's thesis, section 4.1)",
        Some("summary.prediction_accuracy"),
        "accuracy %",
        100.0,
        |m| m.summary.prediction_accuracy,
    )
    .higher_is_better(),
    measure(
        "prediction_corrections",
        Unit::Ratio,
        "mean prediction corrections per job (thesis, section 4.2.2)",
        Some("summary.prediction_corrections"),
        "corr/job",
        1.0,
        |m| m.summary.prediction_corrections,
    )
    .lower_is_better(),
    measure(
        "sjfness",
        Unit::Fraction,
        "share of jobs that were the shortest waiting one when started (thesis, section 3.5)",
        Some("summary.sjfness"),
        "SJFness %",
        100.0,
        |m| m.summary.sjfness,
    ),
    measure(
        "penalized_runtime_percent",
        Unit::Percent,
        "mean share of a run added by memory-bandwidth sharing (paper 001's % PRT)",
        Some("summary.penalized_runtime_percent"),
        "% PRT",
        1.0,
        |m| m.summary.penalized_runtime_percent,
    )
    .lower_is_better(),
    measure(
        "jobs_penalized",
        Unit::Jobs,
        "jobs stretched by memory-bandwidth sharing",
        Some("summary.jobs_penalized"),
        "penalized",
        1.0,
        |m| m.summary.jobs_penalized as f64,
    )
    .lower_is_better(),
    measure(
        "jobs_killed_by_sharing",
        Unit::Jobs,
        "jobs stretched past their estimate by sharing and killed",
        Some("summary.jobs_killed_by_sharing"),
        "killed (sharing)",
        1.0,
        |m| m.summary.jobs_killed_by_sharing as f64,
    )
    .lower_is_better(),
    measure(
        "unfairness",
        Unit::Seconds,
        "Sabin's unfairness: mean delay against a fair start (only with --fairness)",
        Some("summary.unfairness_seconds"),
        "unfair min",
        MINUTES,
        |m| m.summary.unfairness_seconds.unwrap_or(f64::NAN),
    )
    .only_with(Condition::Fairness)
    .lower_is_better(),
    measure(
        "headroom",
        Unit::Fraction,
        "uncontended throughput / this run's - 1: the most any scheduler could add, on average over seeds (a seed can go below 0) (--headroom)",
        Some("closed_loop.headroom.headroom"),
        "headroom %",
        100.0,
        |m| headroom(m, |h| h.headroom),
    )
    .only_with(Condition::Headroom)
    .with_floor(None)
    .lower_is_better(),
    measure(
        "capture",
        Unit::Fraction,
        "(throughput - EASY's) / (uncontended - EASY's): the share of EASY's headroom captured (undefined when EASY's room is not positive; a seed can exceed 1)",
        Some("closed_loop.headroom.capture"),
        "capture %",
        100.0,
        |m| headroom(m, |h| h.capture),
    )
    .only_with(Condition::Headroom)
    .with_floor(None)
    .higher_is_better(),
    measure(
        "throughput_uncontended_per_hour",
        Unit::JobsPerHour,
        "jobs the same users submit per hour when nothing waits (--headroom)",
        Some("closed_loop.headroom.uncontended_submitted_per_hour"),
        "uncont. jobs/h",
        1.0,
        |m| headroom(m, |h| h.uncontended_submitted_per_hour),
    )
    .only_with(Condition::Headroom),
    measure(
        "deciding_jobs_waited_share",
        Unit::Fraction,
        "share of the batches decided in the measurement window whose deciding job (the batch's last to end) waited",
        Some("closed_loop.deciding_jobs_waited_share"),
        "waited %",
        100.0,
        |m| closed(m, |c| c.deciding_jobs_waited_share),
    )
    .lower_is_better(),
    measure(
        "mean_continue_probability",
        Unit::Fraction,
        "mean continue probability of the continue trials made in the measurement window (paper 000, section III-B.1)",
        Some("closed_loop.mean_continue_probability"),
        "p continue",
        1.0,
        |m| closed(m, |c| c.mean_continue_probability),
    )
    .higher_is_better(),
    measure(
        "response_max",
        Unit::Seconds,
        "largest response time",
        Some("summary.response_seconds.max"),
        "resp max min",
        MINUTES,
        |m| m.summary.response_seconds.max,
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "slowdown_max",
        Unit::Ratio,
        "largest slowdown",
        Some("summary.slowdown.max"),
        "sld max",
        1.0,
        |m| m.summary.slowdown.max,
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_wait_p50",
        Unit::Seconds,
        "median wait of jobs of runtime up to 1 minute",
        Some("summary.classes.0.wait_seconds.p50"),
        "short wait p50 min",
        MINUTES,
        |m| class(m, 0, |c| c.wait_seconds.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_wait_p95",
        Unit::Seconds,
        "95th percentile of the wait of jobs of runtime up to 1 minute",
        Some("summary.classes.0.wait_seconds.p95"),
        "short wait p95 min",
        MINUTES,
        |m| class(m, 0, |c| c.wait_seconds.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_wait_p99",
        Unit::Seconds,
        "99th percentile of the wait of jobs of runtime up to 1 minute",
        Some("summary.classes.0.wait_seconds.p99"),
        "short wait p99 min",
        MINUTES,
        |m| class(m, 0, |c| c.wait_seconds.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_wait_max",
        Unit::Seconds,
        "largest wait of jobs of runtime up to 1 minute",
        Some("summary.classes.0.wait_seconds.max"),
        "short wait max min",
        MINUTES,
        |m| class(m, 0, |c| c.wait_seconds.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_response_p50",
        Unit::Seconds,
        "median response of jobs of runtime up to 1 minute",
        Some("summary.classes.0.response_seconds.p50"),
        "short resp p50 min",
        MINUTES,
        |m| class(m, 0, |c| c.response_seconds.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_response_p95",
        Unit::Seconds,
        "95th percentile of the response of jobs of runtime up to 1 minute",
        Some("summary.classes.0.response_seconds.p95"),
        "short resp p95 min",
        MINUTES,
        |m| class(m, 0, |c| c.response_seconds.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_response_p99",
        Unit::Seconds,
        "99th percentile of the response of jobs of runtime up to 1 minute",
        Some("summary.classes.0.response_seconds.p99"),
        "short resp p99 min",
        MINUTES,
        |m| class(m, 0, |c| c.response_seconds.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_response_max",
        Unit::Seconds,
        "largest response of jobs of runtime up to 1 minute",
        Some("summary.classes.0.response_seconds.max"),
        "short resp max min",
        MINUTES,
        |m| class(m, 0, |c| c.response_seconds.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_slowdown_p50",
        Unit::Ratio,
        "median slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.slowdown.p50"),
        "short sld p50",
        1.0,
        |m| class(m, 0, |c| c.slowdown.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_slowdown_p95",
        Unit::Ratio,
        "95th percentile of the slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.slowdown.p95"),
        "short sld p95",
        1.0,
        |m| class(m, 0, |c| c.slowdown.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_slowdown_p99",
        Unit::Ratio,
        "99th percentile of the slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.slowdown.p99"),
        "short sld p99",
        1.0,
        |m| class(m, 0, |c| c.slowdown.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_slowdown_max",
        Unit::Ratio,
        "largest slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.slowdown.max"),
        "short sld max",
        1.0,
        |m| class(m, 0, |c| c.slowdown.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_bounded_slowdown_mean",
        Unit::Ratio,
        "mean bounded slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.bounded_slowdown.mean"),
        "short bsld",
        1.0,
        |m| class(m, 0, |c| c.bounded_slowdown.mean),
    )
    .with_floor(Some(1.0))
    .lower_is_better(),
    measure(
        "short_bounded_slowdown_p50",
        Unit::Ratio,
        "median bounded slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.bounded_slowdown.p50"),
        "short bsld p50",
        1.0,
        |m| class(m, 0, |c| c.bounded_slowdown.p50),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_bounded_slowdown_p95",
        Unit::Ratio,
        "95th percentile of the bounded slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.bounded_slowdown.p95"),
        "short bsld p95",
        1.0,
        |m| class(m, 0, |c| c.bounded_slowdown.p95),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_bounded_slowdown_p99",
        Unit::Ratio,
        "99th percentile of the bounded slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.bounded_slowdown.p99"),
        "short bsld p99",
        1.0,
        |m| class(m, 0, |c| c.bounded_slowdown.p99),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "short_bounded_slowdown_max",
        Unit::Ratio,
        "largest bounded slowdown of jobs of runtime up to 1 minute",
        Some("summary.classes.0.bounded_slowdown.max"),
        "short bsld max",
        1.0,
        |m| class(m, 0, |c| c.bounded_slowdown.max),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_wait_p50",
        Unit::Seconds,
        "median wait of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.wait_seconds.p50"),
        "medium wait p50 min",
        MINUTES,
        |m| class(m, 1, |c| c.wait_seconds.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_wait_p95",
        Unit::Seconds,
        "95th percentile of the wait of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.wait_seconds.p95"),
        "medium wait p95 min",
        MINUTES,
        |m| class(m, 1, |c| c.wait_seconds.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_wait_p99",
        Unit::Seconds,
        "99th percentile of the wait of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.wait_seconds.p99"),
        "medium wait p99 min",
        MINUTES,
        |m| class(m, 1, |c| c.wait_seconds.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_wait_max",
        Unit::Seconds,
        "largest wait of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.wait_seconds.max"),
        "medium wait max min",
        MINUTES,
        |m| class(m, 1, |c| c.wait_seconds.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_response_p50",
        Unit::Seconds,
        "median response of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.response_seconds.p50"),
        "medium resp p50 min",
        MINUTES,
        |m| class(m, 1, |c| c.response_seconds.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_response_p95",
        Unit::Seconds,
        "95th percentile of the response of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.response_seconds.p95"),
        "medium resp p95 min",
        MINUTES,
        |m| class(m, 1, |c| c.response_seconds.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_response_p99",
        Unit::Seconds,
        "99th percentile of the response of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.response_seconds.p99"),
        "medium resp p99 min",
        MINUTES,
        |m| class(m, 1, |c| c.response_seconds.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_response_max",
        Unit::Seconds,
        "largest response of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.response_seconds.max"),
        "medium resp max min",
        MINUTES,
        |m| class(m, 1, |c| c.response_seconds.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_slowdown_p50",
        Unit::Ratio,
        "median slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.slowdown.p50"),
        "medium sld p50",
        1.0,
        |m| class(m, 1, |c| c.slowdown.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_slowdown_p95",
        Unit::Ratio,
        "95th percentile of the slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.slowdown.p95"),
        "medium sld p95",
        1.0,
        |m| class(m, 1, |c| c.slowdown.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_slowdown_p99",
        Unit::Ratio,
        "99th percentile of the slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.slowdown.p99"),
        "medium sld p99",
        1.0,
        |m| class(m, 1, |c| c.slowdown.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_slowdown_max",
        Unit::Ratio,
        "largest slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.slowdown.max"),
        "medium sld max",
        1.0,
        |m| class(m, 1, |c| c.slowdown.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_bounded_slowdown_mean",
        Unit::Ratio,
        "mean bounded slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.bounded_slowdown.mean"),
        "medium bsld",
        1.0,
        |m| class(m, 1, |c| c.bounded_slowdown.mean),
    )
    .with_floor(Some(1.0))
    .lower_is_better(),
    measure(
        "medium_bounded_slowdown_p50",
        Unit::Ratio,
        "median bounded slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.bounded_slowdown.p50"),
        "medium bsld p50",
        1.0,
        |m| class(m, 1, |c| c.bounded_slowdown.p50),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_bounded_slowdown_p95",
        Unit::Ratio,
        "95th percentile of the bounded slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.bounded_slowdown.p95"),
        "medium bsld p95",
        1.0,
        |m| class(m, 1, |c| c.bounded_slowdown.p95),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_bounded_slowdown_p99",
        Unit::Ratio,
        "99th percentile of the bounded slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.bounded_slowdown.p99"),
        "medium bsld p99",
        1.0,
        |m| class(m, 1, |c| c.bounded_slowdown.p99),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "medium_bounded_slowdown_max",
        Unit::Ratio,
        "largest bounded slowdown of jobs of runtime over 1 and up to 10 minutes",
        Some("summary.classes.1.bounded_slowdown.max"),
        "medium bsld max",
        1.0,
        |m| class(m, 1, |c| c.bounded_slowdown.max),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_wait_p50",
        Unit::Seconds,
        "median wait of jobs of runtime over 10 minutes",
        Some("summary.classes.2.wait_seconds.p50"),
        "long wait p50 min",
        MINUTES,
        |m| class(m, 2, |c| c.wait_seconds.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_wait_p95",
        Unit::Seconds,
        "95th percentile of the wait of jobs of runtime over 10 minutes",
        Some("summary.classes.2.wait_seconds.p95"),
        "long wait p95 min",
        MINUTES,
        |m| class(m, 2, |c| c.wait_seconds.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_wait_p99",
        Unit::Seconds,
        "99th percentile of the wait of jobs of runtime over 10 minutes",
        Some("summary.classes.2.wait_seconds.p99"),
        "long wait p99 min",
        MINUTES,
        |m| class(m, 2, |c| c.wait_seconds.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_wait_max",
        Unit::Seconds,
        "largest wait of jobs of runtime over 10 minutes",
        Some("summary.classes.2.wait_seconds.max"),
        "long wait max min",
        MINUTES,
        |m| class(m, 2, |c| c.wait_seconds.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_response_p50",
        Unit::Seconds,
        "median response of jobs of runtime over 10 minutes",
        Some("summary.classes.2.response_seconds.p50"),
        "long resp p50 min",
        MINUTES,
        |m| class(m, 2, |c| c.response_seconds.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_response_p95",
        Unit::Seconds,
        "95th percentile of the response of jobs of runtime over 10 minutes",
        Some("summary.classes.2.response_seconds.p95"),
        "long resp p95 min",
        MINUTES,
        |m| class(m, 2, |c| c.response_seconds.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_response_p99",
        Unit::Seconds,
        "99th percentile of the response of jobs of runtime over 10 minutes",
        Some("summary.classes.2.response_seconds.p99"),
        "long resp p99 min",
        MINUTES,
        |m| class(m, 2, |c| c.response_seconds.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_response_max",
        Unit::Seconds,
        "largest response of jobs of runtime over 10 minutes",
        Some("summary.classes.2.response_seconds.max"),
        "long resp max min",
        MINUTES,
        |m| class(m, 2, |c| c.response_seconds.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_slowdown_p50",
        Unit::Ratio,
        "median slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.slowdown.p50"),
        "long sld p50",
        1.0,
        |m| class(m, 2, |c| c.slowdown.p50),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_slowdown_p95",
        Unit::Ratio,
        "95th percentile of the slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.slowdown.p95"),
        "long sld p95",
        1.0,
        |m| class(m, 2, |c| c.slowdown.p95),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_slowdown_p99",
        Unit::Ratio,
        "99th percentile of the slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.slowdown.p99"),
        "long sld p99",
        1.0,
        |m| class(m, 2, |c| c.slowdown.p99),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_slowdown_max",
        Unit::Ratio,
        "largest slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.slowdown.max"),
        "long sld max",
        1.0,
        |m| class(m, 2, |c| c.slowdown.max),
    )
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_bounded_slowdown_mean",
        Unit::Ratio,
        "mean bounded slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.bounded_slowdown.mean"),
        "long bsld",
        1.0,
        |m| class(m, 2, |c| c.bounded_slowdown.mean),
    )
    .with_floor(Some(1.0))
    .lower_is_better(),
    measure(
        "long_bounded_slowdown_p50",
        Unit::Ratio,
        "median bounded slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.bounded_slowdown.p50"),
        "long bsld p50",
        1.0,
        |m| class(m, 2, |c| c.bounded_slowdown.p50),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_bounded_slowdown_p95",
        Unit::Ratio,
        "95th percentile of the bounded slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.bounded_slowdown.p95"),
        "long bsld p95",
        1.0,
        |m| class(m, 2, |c| c.bounded_slowdown.p95),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_bounded_slowdown_p99",
        Unit::Ratio,
        "99th percentile of the bounded slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.bounded_slowdown.p99"),
        "long bsld p99",
        1.0,
        |m| class(m, 2, |c| c.bounded_slowdown.p99),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "long_bounded_slowdown_max",
        Unit::Ratio,
        "largest bounded slowdown of jobs of runtime over 10 minutes",
        Some("summary.classes.2.bounded_slowdown.max"),
        "long bsld max",
        1.0,
        |m| class(m, 2, |c| c.bounded_slowdown.max),
    )
    .with_floor(Some(1.0))
    .lower_is_better()
    .not_on_console(),
    measure(
        "throughput_easy_per_hour",
        Unit::JobsPerHour,
        "jobs the same users submit per hour under EASY on the same machine (--headroom)",
        Some("closed_loop.headroom.easy_submitted_per_hour"),
        "EASY jobs/h",
        1.0,
        |m| headroom(m, |h| h.easy_submitted_per_hour),
    )
    .only_with(Condition::Headroom),
    measure(
        "nodes_per_job",
        Unit::Ratio,
        "distinct nodes a job ran on, mean over the jobs the sharing model saw (machine of nodes with sharing)",
        Some("summary.nodes_per_job"),
        "nodes/job",
        1.0,
        |m| m.summary.nodes_per_job,
    )
    .only_with(Condition::Sharing)
    .not_on_console(),
    measure(
        "neighbours_per_job",
        Unit::Ratio,
        "distinct other jobs sharing one of a job's nodes during its run, mean per job (sharing model)",
        Some("summary.neighbours_per_job"),
        "neighbours/job",
        1.0,
        |m| m.summary.neighbours_per_job,
    )
    .only_with(Condition::Sharing)
    .not_on_console(),
    measure(
        "node_busy_percent",
        Unit::Percent,
        "mean share of busy processors on a job's nodes over its process-seconds (sharing model)",
        Some("summary.node_busy_percent"),
        "node busy %",
        1.0,
        |m| m.summary.node_busy_percent,
    )
    .only_with(Condition::Sharing)
    .not_on_console(),
    measure(
        "node_full_percent",
        Unit::Percent,
        "mean share of a job's process-seconds on full nodes (sharing model)",
        Some("summary.node_full_percent"),
        "node full %",
        1.0,
        |m| m.summary.node_full_percent,
    )
    .only_with(Condition::Sharing)
    .not_on_console(),
    measure(
        "dynp_jobs_fcfs",
        Unit::Jobs,
        "jobs dynP started under FCFS (paper 002, Table 5)",
        Some("policy_usage.jobs_started.fcfs"),
        "dynP FCFS jobs",
        1.0,
        |m| policy(m, |p| p.jobs_started[0] as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_jobs_sjf",
        Unit::Jobs,
        "jobs dynP started under SJF (paper 002, Table 5)",
        Some("policy_usage.jobs_started.sjf"),
        "dynP SJF jobs",
        1.0,
        |m| policy(m, |p| p.jobs_started[1] as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_jobs_ljf",
        Unit::Jobs,
        "jobs dynP started under LJF (paper 002, Table 5)",
        Some("policy_usage.jobs_started.ljf"),
        "dynP LJF jobs",
        1.0,
        |m| policy(m, |p| p.jobs_started[2] as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_switches_to_fcfs",
        Unit::Decisions,
        "dynP decisions that switched to FCFS (paper 002, Table 6)",
        Some("policy_usage.switches_to.fcfs"),
        "to FCFS",
        1.0,
        |m| policy(m, |p| p.switches_to[0] as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_switches_to_sjf",
        Unit::Decisions,
        "dynP decisions that switched to SJF (paper 002, Table 6)",
        Some("policy_usage.switches_to.sjf"),
        "to SJF",
        1.0,
        |m| policy(m, |p| p.switches_to[1] as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_switches_to_ljf",
        Unit::Decisions,
        "dynP decisions that switched to LJF (paper 002, Table 6)",
        Some("policy_usage.switches_to.ljf"),
        "to LJF",
        1.0,
        |m| policy(m, |p| p.switches_to[2] as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_decisions",
        Unit::Decisions,
        "dynP's policy decisions",
        Some("policy_usage.decisions"),
        "decisions",
        1.0,
        |m| policy(m, |p| p.decisions as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_kept",
        Unit::Decisions,
        "dynP decisions that kept the policy",
        Some("policy_usage.kept"),
        "kept",
        1.0,
        |m| policy(m, |p| p.kept as f64),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "dynp_average_backlog",
        Unit::Jobs,
        "mean waiting jobs at a dynP decision",
        Some("policy_usage.average_backlog"),
        "backlog",
        1.0,
        |m| policy(m, |p| p.average_backlog),
    )
    .only_with(Condition::Dynp)
    .not_on_console(),
    measure(
        "slurm_fairness_index",
        Unit::Ratio,
        "Slurm model: Jain's index over users of their share of the CPU-seconds delivered over their normalised fair-share share (1: CPU time in proportion to shares)",
        Some("slurm.fairness_index"),
        "share fairness",
        1.0,
        |m| slurm(m, |s| s.fairness_index),
    )
    .only_with(Condition::Slurm)
    .higher_is_better()
    .not_on_console(),
    measure(
        "slurm_share_error",
        Unit::Fraction,
        "Slurm model: the share of the CPU-seconds delivered that would have to change users for each to get its normalised fair-share share",
        Some("slurm.share_error"),
        "share error",
        1.0,
        |m| slurm(m, |s| s.share_error),
    )
    .only_with(Condition::Slurm)
    .lower_is_better()
    .not_on_console(),
    measure(
        "energy_kwh",
        Unit::KilowattHours,
        "facility energy over the run's span: IT energy (the nodes' idle power plus every job's charge) times the PUE (power model)",
        Some("power.facility_kwh"),
        "energy kWh",
        1.0,
        |m| power(m, |p| p.facility_kwh),
    )
    .only_with(Condition::Power)
    .lower_is_better(),
    measure(
        "energy_it_kwh",
        Unit::KilowattHours,
        "IT energy over the run's span: the nodes' idle power plus every job's charge, before the PUE (power model)",
        Some("power.it_kwh"),
        "IT energy kWh",
        1.0,
        |m| power(m, |p| p.it_kwh),
    )
    .only_with(Condition::Power)
    .lower_is_better(),
    measure(
        "peak_kw",
        Unit::Kilowatts,
        "peak IT power: the most the machine drew at any instant of the run (power model)",
        Some("power.peak_kw"),
        "peak kW",
        1.0,
        |m| power(m, |p| p.peak_kw),
    )
    .only_with(Condition::Power)
    .lower_is_better(),
    measure(
        "peak_facility_kw",
        Unit::Kilowatts,
        "peak facility power: the peak IT power times the PUE (power model)",
        Some("power.peak_facility_kw"),
        "peak facility kW",
        1.0,
        |m| power(m, |p| p.peak_facility_kw),
    )
    .only_with(Condition::Power)
    .lower_is_better(),
    measure(
        "mean_kw",
        Unit::Kilowatts,
        "mean IT power over the run's span (power model)",
        Some("power.mean_kw"),
        "mean kW",
        1.0,
        |m| power(m, |p| p.mean_kw),
    )
    .only_with(Condition::Power),
    measure(
        "carbon_kg",
        Unit::KgCo2,
        "carbon of the facility energy under the carbon-intensity series (power model with `carbon`)",
        Some("power.carbon_kg"),
        "carbon kgCO2",
        1.0,
        |m| power(m, |p| p.carbon_kg.unwrap_or(f64::NAN)),
    )
    .only_with(Condition::Power)
    .lower_is_better(),
    measure(
        "cost",
        Unit::Cost,
        "cost of the facility energy under the price series, in its currency (power model with `price`)",
        Some("power.cost"),
        "cost",
        1.0,
        |m| power(m, |p| p.cost.unwrap_or(f64::NAN)),
    )
    .only_with(Condition::Power)
    .lower_is_better(),
    measure(
        "energy_per_job_kwh",
        Unit::KilowattHours,
        "mean IT energy charged per job metered (power model)",
        Some("power.energy_per_job_kwh"),
        "kWh/job",
        1.0,
        |m| power(m, |p| p.energy_per_job_kwh),
    )
    .only_with(Condition::Power)
    .lower_is_better(),
];

/// Measures the catalogue defines that no default output reports (neither summary.json nor
/// results.csv, so that adding one changes no existing output): the mean queue length, which
/// the Gymnasium environment rewards. [`find_measure`] finds them with [`MEASURES`]; the
/// terminal summary prints them only where its layout places them.
pub static EXTRA_MEASURES: &[Measure] = &[
    measure(
        "queue_length_mean",
        Unit::Jobs,
        "mean jobs waiting over the utilization window (measured or not): job-seconds waited in it over its length",
        None,
        "queue",
        1.0,
        |m| m.summary.queue_length_mean,
    )
    .lower_is_better()
    .not_on_console(),
];

/// A measure of a run on a machine of node types (summary.json's `nodes` section: a replay
/// with a slurm.conf's nodes, a site of `[[nodes]]`): one value per resource, GPU type,
/// partition or reason the machine has, so its path holds a placeholder in capitals (`TYPE`,
/// `PARTITION`, `REASON`) for the machine's names. These are not rows of results.csv, whose
/// rows are the same for every run; the terminal summary prints the jobs held for good.
#[derive(Debug, Clone, Copy)]
pub struct NodeMeasure {
    /// Its name (with the placeholder of its path).
    pub name: &'static str,
    /// The unit of its value.
    pub unit: Unit,
    /// Where summary.json holds it: dot-separated keys, the placeholder standing for each of
    /// the machine's names.
    pub json_path: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    /// Where else it is written or drawn.
    pub elsewhere: &'static str,
}

impl NodeMeasure {
    /// Whether `path` (dot-separated keys of summary.json) is this measure's for one of the
    /// machine's names: its path with any text (without a dot) for the placeholder.
    pub fn matches(&self, path: &str) -> bool {
        let Some(at) = self.json_path.find(|c: char| c.is_ascii_uppercase()) else {
            return path == self.json_path;
        };
        let end = self.json_path[at..]
            .find(|c: char| !c.is_ascii_uppercase())
            .map_or(self.json_path.len(), |e| at + e);
        let (prefix, suffix) = (&self.json_path[..at], &self.json_path[end..]);
        path.len() > prefix.len() + suffix.len()
            && path.starts_with(prefix)
            && path.ends_with(suffix)
            && !path[prefix.len()..path.len() - suffix.len()].contains('.')
    }
}

/// The measures of a run on a machine of node types ([`NodeMeasure`]), in summary.json's
/// order. summary.json's `nodes.capacity` (what the machine has of each resource: CPUs, MiB,
/// GPUs) and `nodes.machine` describe the machine and are not measures.
pub static NODE_MEASURES: &[NodeMeasure] = &[
    NodeMeasure {
        name: "nodes_utilization_cpus",
        unit: Unit::Fraction,
        json_path: "nodes.utilization.cpus",
        about: "share of the machine's CPUs held by jobs, over the run from its first scheduling pass to its last (the first arrival to the last end)",
        elsewhere: "plot-run's utilization figure (its CPUs line, from nodes.csv)",
    },
    NodeMeasure {
        name: "nodes_utilization_memory",
        unit: Unit::Fraction,
        json_path: "nodes.utilization.memory",
        about: "share of the nodes' memory held by jobs over the same span (0 where memory is not scheduled)",
        elsewhere: "plot-run's utilization figure (its memory line); per job and node in nodes.csv's memory_mib",
    },
    NodeMeasure {
        name: "nodes_utilization_gpus",
        unit: Unit::Fraction,
        json_path: "nodes.utilization.gpus",
        about: "share of the machine's GPUs (of every type) held by jobs over the same span",
        elsewhere: "plot-run's utilization figure (its GPUs line); per job and node in nodes.csv's gpus",
    },
    NodeMeasure {
        name: "nodes_utilization_gpus:TYPE",
        unit: Unit::Fraction,
        json_path: "nodes.utilization.gpus:TYPE",
        about: "share of the GPUs of type TYPE (slurm.conf's Gres=gpu:TYPE:N, a site's gpu_type) held by jobs over the same span",
        elsewhere: "Python: summary[\"nodes\"][\"utilization\"]",
    },
    NodeMeasure {
        name: "nodes_wait_by_partition_PARTITION",
        unit: Unit::Seconds,
        json_path: "nodes.waits_by_partition.PARTITION.mean_wait",
        about: "mean wait of the jobs that started in partition PARTITION (`-` on a machine without partitions)",
        elsewhere: "per job: jobs.csv's wait",
    },
    NodeMeasure {
        name: "nodes_jobs_by_partition_PARTITION",
        unit: Unit::Jobs,
        json_path: "nodes.waits_by_partition.PARTITION.jobs",
        about: "jobs that started in partition PARTITION",
        elsewhere: "",
    },
    NodeMeasure {
        name: "nodes_wait_by_gpu_type_TYPE",
        unit: Unit::Seconds,
        json_path: "nodes.waits_by_gpu_type.TYPE.mean_wait",
        about: "mean wait of the jobs that started on GPUs of type TYPE (`none`: jobs without GPUs; `untyped`: GPUs of nodes that declare no type)",
        elsewhere: "per job: jobs.csv's wait and gres/gpu, nodes.csv's gpus",
    },
    NodeMeasure {
        name: "nodes_jobs_by_gpu_type_TYPE",
        unit: Unit::Jobs,
        json_path: "nodes.waits_by_gpu_type.TYPE.jobs",
        about: "jobs that started on GPUs of type TYPE (`none`, `untyped` as above)",
        elsewhere: "",
    },
    NodeMeasure {
        name: "nodes_held_never_fit_REASON",
        unit: Unit::Jobs,
        json_path: "nodes.held_never_fit.REASON",
        about: "jobs held for good because no set of their partition's nodes can ever hold them, by reason (`nodes`: more nodes than the partition has or allows; `constraint`: a GPU type or feature no node of it has; `resources`: more CPUs, memory or GPUs than any set of its nodes holds; `other_resources`: more of a machine-wide resource, such as licences, than the machine has); they have no record and are in no other measure",
        elsewhere: "the console's `held` line of replay and run",
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{JobRecord, SessionRecord, SummaryOptions, Warmup, Window};

    #[test]
    fn an_alias_finds_its_measure_and_no_alias_is_a_name() {
        assert_eq!(find_measure("mean_wait").map(|m| m.name), Some("wait_mean"));
        assert_eq!(canonical_name("mean_wait"), "wait_mean");
        assert_eq!(canonical_name("wait_p95"), "wait_p95");
        for (alias, canonical) in MEASURE_ALIASES {
            assert!(find_measure(canonical).is_some(), "{alias}: {canonical}");
            assert!(
                MEASURES
                    .iter()
                    .chain(EXTRA_MEASURES)
                    .all(|m| m.name != alias),
                "{alias} is a measure's own name"
            );
        }
    }

    #[test]
    fn conditional_measures_are_undefined_without_their_condition() {
        // A replay's summary, no closed loop, no dynP, no Slurm model, no fair start times, no
        // sharing model: every measure with a condition is undefined.
        let summary = Summary::compute(
            &[job(1, 0, 10, 100, 2), job(2, 5, 20, 200, 4)],
            &SummaryOptions {
                processors: 8,
                warmup: Warmup::None,
            },
            Default::default(),
        );
        let input = MeasureInput {
            summary: &summary,
            closed_loop: None,
            users: 0,
            policy_usage: None,
            slurm: None,
            power: None,
        };
        for m in MEASURES.iter().filter(|m| m.only_with.is_some()) {
            assert!(m.value(&input).is_nan(), "{}", m.name);
        }
    }

    fn job(id: i64, submit: i64, start: i64, end: i64, processors: u32) -> JobRecord {
        JobRecord {
            job: crate::Job {
                job_id: id,
                submit,
                processors,
                estimate: end - start + 100,
                user: 1,
                ..crate::Job::default()
            },
            start,
            end,
            killed: false,
            ..JobRecord::default()
        }
    }

    fn sample() -> (Summary, ClosedLoopSummary) {
        let jobs: Vec<JobRecord> = (0..30)
            .map(|i| {
                job(
                    i,
                    i * 50,
                    i * 50 + i * 7,
                    i * 50 + i * 7 + 20 + i * 40,
                    1 + (i % 4) as u32,
                )
            })
            .collect();
        let options = SummaryOptions {
            processors: 8,
            warmup: Warmup::None,
        };
        let summary = Summary::compute(&jobs, &options, Default::default());
        let sessions: Vec<SessionRecord> = Vec::new();
        let mut closed = ClosedLoopSummary::compute(
            &jobs,
            &sessions,
            &[],
            Window {
                start: 0,
                end: 7200,
            },
        );
        closed.headroom = Some(crate::Headroom::new(3.0, 2.5, 4.0));
        (summary, closed)
    }

    const SLURM_USE: SlurmUse = SlurmUse {
        fairness_index: 0.75,
        share_error: 0.125,
    };

    const POLICY_USE: PolicyUse = PolicyUse {
        jobs_started: [10, 20, 30],
        switches_to: [1, 2, 3],
        decisions: 9,
        kept: 3,
        average_backlog: 4.5,
    };

    const POWER_USE: PowerUse = PowerUse {
        it_kwh: 120.5,
        facility_kwh: 144.6,
        mean_kw: 5.25,
        peak_kw: 9.5,
        peak_facility_kw: 11.4,
        carbon_kg: Some(43.375),
        cost: Some(17.25),
        energy_per_job_kwh: 0.875,
    };

    /// summary.json's sections the measures read: as `sitesim run` writes them (`policy_usage`
    /// as scenario's `PolicyUsageReport` renders it, without Table 1's cases).
    fn summary_json(summary: &Summary, closed: &ClosedLoopSummary) -> serde_json::Value {
        let p = POLICY_USE;
        let by_policy = |n: [u64; 3]| serde_json::json!({ "fcfs": n[0], "ljf": n[2], "sjf": n[1] });
        serde_json::json!({
            "summary": summary,
            "closed_loop": closed,
            "policy_usage": {
                "jobs_started": by_policy(p.jobs_started),
                "decisions": p.decisions,
                "switches_to": by_policy(p.switches_to),
                "kept": p.kept,
                "average_backlog": p.average_backlog,
            },
            "slurm": {
                "users": 4,
                "fairness_index": SLURM_USE.fairness_index,
                "share_error": SLURM_USE.share_error,
                "accounts": { "group1": { "jobs": 3, "wait_mean": 60.0 } },
            },
            // as scenario writes power::PowerReport
            "power": {
                "span_seconds": 82_800,
                "it_joules": POWER_USE.it_kwh * 3.6e6,
                "it_kwh": POWER_USE.it_kwh,
                "facility_kwh": POWER_USE.facility_kwh,
                "pue": 1.2,
                "idle_kw": 2.0,
                "mean_kw": POWER_USE.mean_kw,
                "peak_kw": POWER_USE.peak_kw,
                "peak_facility_kw": POWER_USE.peak_facility_kw,
                "carbon_kg": POWER_USE.carbon_kg,
                "cost": POWER_USE.cost,
                "currency": "eur",
                "jobs": 30,
                "jobs_logged": 0,
                "jobs_kwh": 26.25,
                "energy_per_job_kwh": POWER_USE.energy_per_job_kwh,
                "user_kwh": { "mean": 26.25, "max": 26.25 },
            },
        })
    }

    /// Follows a dotted path through JSON.
    fn at<'a>(json: &'a serde_json::Value, path: &str) -> Option<&'a serde_json::Value> {
        path.split('.')
            .try_fold(json, |v, key| match key.parse::<usize>() {
                Ok(i) => v.get(i),
                Err(_) => v.get(key),
            })
    }

    #[test]
    fn no_measure_falls_below_its_floor() {
        // The sample, and jobs that ran 0 s right away (slowdown 0 with the 1 s denominator).
        let (summary, closed) = sample();
        let instant: Vec<JobRecord> = (0..10).map(|i| job(i, i * 5, i * 5, i * 5, 1)).collect();
        let options = SummaryOptions {
            processors: 4,
            warmup: Warmup::None,
        };
        let instant = Summary::compute(&instant, &options, Default::default());
        for summary in [&summary, &instant] {
            let input = MeasureInput {
                summary,
                closed_loop: Some(&closed),
                users: 3,
                policy_usage: Some(&POLICY_USE),
                slurm: Some(&SLURM_USE),
                power: Some(&POWER_USE),
            };
            for m in MEASURES {
                let value = m.value(&input);
                if let (Some(floor), false) = (m.floor, value.is_nan()) {
                    assert!(
                        value >= floor,
                        "{}: {value} below its floor {floor}",
                        m.name
                    );
                }
            }
        }
        assert_eq!(
            find_measure("bounded_slowdown_mean").and_then(|m| m.floor),
            Some(1.0)
        );
        assert_eq!(find_measure("capture").and_then(|m| m.floor), None);
    }

    #[test]
    fn names_are_unique_and_titles_given() {
        let mut names: Vec<&str> = measure_names().collect();
        let n = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), n, "a measure name appears twice");
        for m in MEASURES {
            assert!(!m.title.is_empty() && !m.about.is_empty(), "{}", m.name);
            assert!(m.print_scale > 0.0, "{}", m.name);
            assert_eq!(find_measure(m.name).map(|f| f.name), Some(m.name));
        }
    }

    #[test]
    fn every_measure_is_where_summary_json_says() {
        let (summary, closed) = sample();
        let json = summary_json(&summary, &closed);
        let input = MeasureInput {
            summary: &summary,
            closed_loop: Some(&closed),
            users: 3,
            policy_usage: Some(&POLICY_USE),
            slurm: Some(&SLURM_USE),
            power: Some(&POWER_USE),
        };
        for m in MEASURES {
            let value = m.value(&input);
            let Some(path) = m.json_path else {
                continue;
            };
            let found = at(&json, path)
                .unwrap_or_else(|| panic!("{}: {path} is not in summary.json", m.name));
            match found.as_f64() {
                Some(x) => assert_eq!(x, value, "{}: {path}", m.name),
                None => assert!(found.is_null() && value.is_nan(), "{}: {path}", m.name),
            }
        }
    }

    /// What summary.json's `summary` and `closed_loop` hold that is not a measure: the run's
    /// settings, what was read, and time windows (seconds since the epoch).
    /// Table 1's case counts of self-tuning dynP (`policy_usage.cases`) are not measures either,
    /// nor the Slurm model's counts of jobs held for good and its uncontended share baselines
    /// (Slurm runs only; a measure would add a column to every run's results), nor the power
    /// model's settings (PUE, idle power), its span, joules, job counts and per-user spread.
    const NOT_MEASURES: [&str; 20] = [
        "power.span_seconds",
        "power.it_joules",
        "power.pue",
        "power.idle_kw",
        "power.jobs",
        "power.user_kwh.",
        "policy_usage.cases.",
        "slurm.users",
        "slurm.never_started.",
        "slurm.fairness_index_uncontended",
        "slurm.share_error_uncontended",
        "slurm.accounts.",
        "slurm.partitions.",
        "slurm.qos.",
        "summary.processors",
        "summary.warmup",
        "summary.input.",
        "summary.makespan.",
        "summary.utilization_window.",
        "closed_loop.window.",
    ];

    fn numeric_leaves(json: &serde_json::Value, path: &str, out: &mut Vec<String>) {
        match json {
            serde_json::Value::Object(map) => {
                for (key, value) in map {
                    let next = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    numeric_leaves(value, &next, out);
                }
            }
            serde_json::Value::Array(items) => {
                for (i, value) in items.iter().enumerate() {
                    numeric_leaves(value, &format!("{path}.{i}"), out);
                }
            }
            serde_json::Value::Number(_) | serde_json::Value::Null => out.push(path.to_string()),
            _ => {}
        }
    }

    #[test]
    fn every_number_of_the_summary_is_a_measure() {
        let (summary, closed) = sample();
        let json = summary_json(&summary, &closed);
        let mut leaves = Vec::new();
        numeric_leaves(&json, "", &mut leaves);
        assert!(leaves.len() > 50);
        let paths: Vec<&str> = MEASURES.iter().filter_map(|m| m.json_path).collect();
        for leaf in leaves {
            if NOT_MEASURES.iter().any(|p| leaf.starts_with(p)) {
                continue;
            }
            assert!(
                paths.contains(&leaf.as_str()),
                "summary.json's {leaf} is not in MEASURES"
            );
        }
    }

    #[test]
    fn node_measures_match_their_paths_for_any_name() {
        let find = |path: &str| {
            NODE_MEASURES
                .iter()
                .filter(|m| m.matches(path))
                .map(|m| m.name)
                .collect::<Vec<_>>()
        };
        assert_eq!(find("nodes.utilization.cpus"), ["nodes_utilization_cpus"]);
        assert_eq!(
            find("nodes.utilization.gpus:a100"),
            ["nodes_utilization_gpus:TYPE"]
        );
        assert_eq!(
            find("nodes.waits_by_partition.gpu.mean_wait"),
            ["nodes_wait_by_partition_PARTITION"]
        );
        assert_eq!(
            find("nodes.waits_by_gpu_type.none.jobs"),
            ["nodes_jobs_by_gpu_type_TYPE"]
        );
        assert_eq!(
            find("nodes.held_never_fit.resources"),
            ["nodes_held_never_fit_REASON"]
        );
        assert!(find("nodes.capacity.cpus").is_empty());
        assert!(find("nodes.waits_by_partition.a.b.jobs").is_empty());
        let mut names: Vec<&str> = NODE_MEASURES.iter().map(|m| m.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), NODE_MEASURES.len());
        assert!(
            NODE_MEASURES
                .iter()
                .all(|m| m.json_path.starts_with("nodes.") && !m.about.is_empty())
        );
    }

    #[test]
    fn power_measures_read_the_power_model_and_are_tabulated_only_with_one() {
        let (summary, _) = sample();
        let mut input = MeasureInput {
            summary: &summary,
            closed_loop: None,
            users: 0,
            policy_usage: None,
            slurm: None,
            power: Some(&POWER_USE),
        };
        let value = |input: &MeasureInput, name: &str| {
            find_measure(name).map_or(f64::NAN, |m| m.value(input))
        };
        for (name, expected) in [
            ("energy_kwh", 144.6),
            ("energy_it_kwh", 120.5),
            ("peak_kw", 9.5),
            ("peak_facility_kw", 11.4),
            ("mean_kw", 5.25),
            ("carbon_kg", 43.375),
            ("cost", 17.25),
            ("energy_per_job_kwh", 0.875),
        ] {
            assert_eq!(value(&input, name), expected, "{name}");
            let m = find_measure(name).unwrap();
            assert_eq!(m.only_with, Some(Condition::Power), "{name}");
            assert!(!m.tabulated(|_| false) && m.tabulated(|c| c == Condition::Power));
        }
        for name in [
            "energy_kwh",
            "peak_kw",
            "carbon_kg",
            "cost",
            "energy_per_job_kwh",
        ] {
            assert_eq!(
                find_measure(name).unwrap().better,
                Some(Better::Lower),
                "{name}"
            );
        }
        // Without a carbon or price series, carbon and cost are undefined; the energy is not.
        let partial = PowerUse {
            carbon_kg: None,
            cost: None,
            ..POWER_USE
        };
        input.power = Some(&partial);
        assert!(value(&input, "carbon_kg").is_nan() && value(&input, "cost").is_nan());
        assert_eq!(value(&input, "energy_kwh"), 144.6);
        // Without a power model, none; the other conditions' measures are always tabulated.
        input.power = None;
        assert!(value(&input, "energy_kwh").is_nan());
        for m in MEASURES
            .iter()
            .filter(|m| m.only_with != Some(Condition::Power))
        {
            assert!(m.tabulated(|_| false), "{}", m.name);
        }
        assert_eq!(Unit::KilowattHours.name(), "kWh");
        assert_eq!(Unit::KgCo2.symbol(), "kgCO2");
    }

    #[test]
    fn closed_loop_measures_are_undefined_in_a_replay() {
        let (summary, _) = sample();
        let input = MeasureInput {
            summary: &summary,
            closed_loop: None,
            users: 0,
            policy_usage: None,
            slurm: None,
            power: None,
        };
        for m in MEASURES {
            let closed_only = m.json_path.is_some_and(|p| p.starts_with("closed_loop."))
                || m.name == "sessions_per_user";
            if closed_only {
                assert!(m.value(&input).is_nan(), "{}", m.name);
            }
        }
        assert!(find_measure("utilization").is_some_and(|m| m.value(&input).is_finite()));
        assert!(
            find_measure("throughput_submitted_per_hour").is_some_and(|m| m.value(&input).is_nan())
        );
    }
}
