//! Shmueli & Feitelson's user (paper 000, section III-B; `kind = "shmueli"`, the default).
//!
//! * **Session dynamics** (III-B.1): after the last job of a batch ends with response r minutes,
//!   the user continues with probability `a / (b r + 1)` (eq. 1; a = 0.8, b = 0.05) after a
//!   short think time drawn from the fitted `think_short`, or closes its session and takes a
//!   break drawn from `think_break`. The key `feedback` swaps the response for the job's wait or
//!   its bounded slowdown in the same form ([`Feedback`]; the paper's model is the default).
//! * **Job submission** (III-B.2): a batch's width from the fitted `batch_width`; its jobs
//!   submitted at once (or spread by the fitted gaps); each job's size, runtime and estimate by
//!   two-level sampling ([`JobSource`]).
//! * **Activity cycles** (III-B.3): each user is a day (p = 0.7) or night worker, on weekdays
//!   (p = 0.8) or weekends, with a personal shift uniform in [-60, 60] minutes
//!   ([`ActivityWindow`]).
//!
//! Draws: the profile stream gives the class, then the days, then the shift; the jobs stream the
//! width, then per job its gap (from the second job on) and attributes; the decisions stream the
//! continue trial, then the think time or break.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

use rand::Rng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

use super::{
    AfterBatch, ClosingJob, Decision, Draws, KindConfig, Prefix, UserBehaviour, UserFactory,
};
use crate::Time;
use crate::config::ConfigError;
use crate::cycle::{ActivityWindow, Calendar, DayPart, Days, parse_clock};
use crate::population::{Group, PopulationError};
use crate::submission::{JobAttributes, JobSource};

/// How the jobs of a batch are spread in time.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum BatchGaps {
    /// All jobs of a batch are submitted at once (they do not wait for each other; DESIGN.md).
    #[default]
    None,
    /// Consecutive jobs of a batch are separated by gaps drawn from the fitted gap distribution.
    /// Note that a job submitted after the earlier ones ended looks like a new batch to the trace
    /// analysis (its think time is not negative).
    Fitted,
}

/// What the continue decision after a batch reacts to (section III-B.1), always in the form
/// p = a / (b x + 1) with x = 0 for a job that ran at once under the wait and slowdown models.
/// `x` is a property of the batch's deciding job (its last job to end):
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Feedback {
    /// The paper's model (eq. 1): x = the response (submit to end) in minutes; parameters
    /// `continue_a` (0.8) and `continue_b` (0.05 per minute).
    #[default]
    Response,
    /// x = the wait (submit to start) in minutes: a user who reacts to the queue only, not to
    /// how long its own job ran. Parameters `feedback_a` and `feedback_b`, by default the
    /// paper's a = 0.8 and b = 0.05 per minute (the same minutes scale as eq. 1).
    Wait,
    /// x = bsld - 1, bsld the bounded slowdown `max(1, response / max(10 s, runtime))` (the
    /// 10 s threshold of the job measures): p = a / (b (bsld - 1) + 1), so p = a when the job did
    /// not wait, as under the wait model, and the wait counts relative to the job's runtime.
    /// Parameters `feedback_a` (0.8) and `feedback_b` (0.34, dimensionless): 0.34 = 0.05 per
    /// minute x 6.8 minutes, the median runtime (408 s) of the fitted model `models/combined`,
    /// so for a job of that runtime p = a / (0.05 w + 1), w its wait in minutes: the same p as
    /// the wait model, and the same fall of p per minute waited as the response model (which
    /// also counts the runtime itself, so no b gives exactly its p at every wait).
    Slowdown,
}

impl Feedback {
    /// The name in the population file.
    pub fn name(self) -> &'static str {
        match self {
            Feedback::Response => "response",
            Feedback::Wait => "wait",
            Feedback::Slowdown => "slowdown",
        }
    }

    /// The value x of the continue probability a / (b x + 1) for `job`.
    pub fn x(self, job: &ClosingJob) -> f64 {
        match self {
            Feedback::Response => job.response() as f64 / 60.0,
            Feedback::Wait => job.wait as f64 / 60.0,
            Feedback::Slowdown => job.bounded_slowdown() - 1.0,
        }
    }

    /// The default `b` of this model (`continue_b` for the response model, `feedback_b` for
    /// the others).
    pub fn default_b(self) -> f64 {
        match self {
            Feedback::Response | Feedback::Wait => default_continue_b(),
            Feedback::Slowdown => SLOWDOWN_B,
        }
    }
}

/// The default `feedback_b` of the slowdown model: 0.05 per minute x 6.8 minutes (the median
/// runtime of `models/combined`), see [`Feedback::Slowdown`].
pub const SLOWDOWN_B: f64 = 0.34;

fn default_models() -> String {
    "embedded".to_string()
}
/// The paper's a of p = a / (b r + 1) (paper 000, section III-B.1).
pub const PAPER_CONTINUE_A: f64 = 0.8;
/// The paper's b, per minute of response (paper 000, section III-B.1).
pub const PAPER_CONTINUE_B: f64 = 0.05;

fn default_continue_a() -> f64 {
    PAPER_CONTINUE_A
}
fn default_continue_b() -> f64 {
    PAPER_CONTINUE_B
}
fn default_day_probability() -> f64 {
    0.7
}
fn default_weekday_probability() -> f64 {
    0.8
}
fn default_day_start() -> String {
    "07:30".to_string()
}
fn default_day_end() -> String {
    "17:30".to_string()
}
fn default_shift_minutes() -> u32 {
    60
}
fn default_true() -> bool {
    true
}

/// The keys of a `kind = "shmueli"` group. Every parameter defaults to the paper's value;
/// distributions come from `models`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShmueliConfig {
    /// Where its distributions come from: `embedded` (the models/combined the binary was built
    /// with), `embedded:NAME` (a model embedded in the binary: `combined` or a trace of
    /// models/traces), or a model directory, relative to the population file. A fitted model
    /// (`embedded:NAME` or a directory with parameters.csv) also brings its fitted `continue_a`,
    /// `continue_b`, `day_probability` and `weekday_probability` for the keys not set.
    #[serde(default = "default_models")]
    pub models: String,
    /// `a` of the continue probability a / (b r + 1), r the response in minutes (section III-B.1,
    /// eq. 1); 0.8 when not given. Only with `feedback = "response"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_a: Option<f64>,
    /// `b` of the continue probability, per minute; 0.05 when not given. Only with
    /// `feedback = "response"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continue_b: Option<f64>,
    /// What the continue probability reacts to: `response` (the paper), `wait` or `slowdown`
    /// ([`Feedback`]).
    #[serde(default)]
    pub feedback: Feedback,
    /// `a` of the continue probability a / (b x + 1) of the `wait` and `slowdown` models (a
    /// probability; 0.8 when not given). Not with `feedback = "response"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_a: Option<f64>,
    /// `b` of the `wait` model (per minute; 0.05 when not given) or of the `slowdown` model
    /// (dimensionless; 0.34 when not given). Not with `feedback = "response"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback_b: Option<f64>,
    /// Probability that a user works in the day rather than at night (section III-B.3).
    #[serde(default = "default_day_probability")]
    pub day_probability: f64,
    /// Probability that a user works on weekdays rather than weekends.
    #[serde(default = "default_weekday_probability")]
    pub weekday_probability: f64,
    /// Start of the day window, `HH:MM`.
    #[serde(default = "default_day_start")]
    pub day_start: String,
    /// End of the day window, `HH:MM`; the night runs from here to the next day start.
    #[serde(default = "default_day_end")]
    pub day_end: String,
    /// Each user's window is shifted by a whole number of minutes drawn uniformly in
    /// [-shift_minutes, shift_minutes].
    #[serde(default = "default_shift_minutes")]
    pub shift_minutes: u32,
    /// Two-level sampling (section III-B.2): repeat each drawn (size, runtime, estimate) a number
    /// of times drawn from the size-repetition distribution. `false` draws every job afresh.
    #[serde(default = "default_true")]
    pub repeat_jobs: bool,
    /// How the jobs of a batch are spread in time.
    #[serde(default)]
    pub batch_gaps: BatchGaps,
}

impl Default for ShmueliConfig {
    fn default() -> Self {
        ShmueliConfig {
            models: default_models(),
            continue_a: None,
            continue_b: None,
            feedback: Feedback::Response,
            feedback_a: None,
            feedback_b: None,
            day_probability: default_day_probability(),
            weekday_probability: default_weekday_probability(),
            day_start: default_day_start(),
            day_end: default_day_end(),
            shift_minutes: default_shift_minutes(),
            repeat_jobs: true,
            batch_gaps: BatchGaps::None,
        }
    }
}

impl KindConfig for ShmueliConfig {
    const NAME: &'static str = "shmueli";
    const HELP: &'static str = "Shmueli & Feitelson (paper 000, section III-B): sessions of batches, a continue probability after each batch, day/night and weekday/weekend activity cycles, job attributes from the fitted model";

    fn models(&self) -> &str {
        &self.models
    }

    fn check(&self, prefix: &Prefix<'_>) -> Result<Arc<dyn UserFactory>, ConfigError> {
        Ok(Arc::new(self.params(prefix)?))
    }
}

impl ShmueliConfig {
    /// The checked parameters; errors name `prefix` and the key.
    pub fn params(&self, prefix: &Prefix<'_>) -> Result<ShmueliParams, ConfigError> {
        let error = |key: &str, value: String, problem: &str| prefix.error(key, value, problem);
        let probability = |key: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(v)
            } else {
                Err(error(
                    key,
                    v.to_string(),
                    "a probability must lie in [0, 1]",
                ))
            }
        };
        let (feedback, (a_key, a), (b_key, b)) = self.feedback_parameters(prefix)?;
        let continue_a = probability(a_key, a)?;
        if !(b.is_finite() && b >= 0.0) {
            let unit = match feedback {
                Feedback::Slowdown => "dimensionless",
                Feedback::Response | Feedback::Wait => "per minute",
            };
            return Err(error(
                b_key,
                b.to_string(),
                &format!("must be a finite number >= 0 ({unit})"),
            ));
        }
        let day_probability = probability("day_probability", self.day_probability)?;
        let weekday_probability = probability("weekday_probability", self.weekday_probability)?;
        let clock = |key: &str, text: &str| {
            parse_clock(text)
                .ok_or_else(|| error(key, format!("{text:?}"), "expected a time of day HH:MM"))
        };
        let day_start = clock("day_start", &self.day_start)?;
        let day_end = clock("day_end", &self.day_end)?;
        if day_start >= day_end {
            return Err(error(
                "day_end",
                format!("{:?}", self.day_end),
                "the day must end after it starts (day_start)",
            ));
        }
        if self.shift_minutes > 720 {
            return Err(error(
                "shift_minutes",
                self.shift_minutes.to_string(),
                "at most 720 minutes",
            ));
        }
        Ok(ShmueliParams {
            feedback,
            continue_a,
            continue_b: b,
            day_probability,
            weekday_probability,
            day_start,
            day_end,
            shift_minutes: i64::from(self.shift_minutes),
            repeat_jobs: self.repeat_jobs,
            batch_gaps: self.batch_gaps,
        })
    }
}

/// A pair of keys and the value each names (its default when not given).
type Keyed = (&'static str, f64);

impl ShmueliConfig {
    /// The feedback model and its (a, b) with the keys they come from: `continue_a` and
    /// `continue_b` for the response model, `feedback_a` and `feedback_b` for the others. A key
    /// of another model than the chosen one is an error naming it.
    fn feedback_parameters(
        &self,
        prefix: &Prefix<'_>,
    ) -> Result<(Feedback, Keyed, Keyed), ConfigError> {
        let feedback = self.feedback;
        let foreign = |key: &str, value: Option<f64>, only: &str| {
            match value {
            Some(v) => Err(prefix.error(
                key,
                v.to_string(),
                &format!(
                    "applies to {only} only (this group has feedback = {:?}, whose parameters are {})",
                    feedback.name(),
                    match feedback {
                        Feedback::Response => "continue_a and continue_b",
                        Feedback::Wait | Feedback::Slowdown => "feedback_a and feedback_b",
                    }
                ),
            )),
            None => Ok(()),
        }
        };
        match feedback {
            Feedback::Response => {
                let only = "feedback = \"wait\" or \"slowdown\"";
                foreign("feedback_a", self.feedback_a, only)?;
                foreign("feedback_b", self.feedback_b, only)?;
                Ok((
                    feedback,
                    (
                        "continue_a",
                        self.continue_a.unwrap_or_else(default_continue_a),
                    ),
                    (
                        "continue_b",
                        self.continue_b.unwrap_or_else(default_continue_b),
                    ),
                ))
            }
            Feedback::Wait | Feedback::Slowdown => {
                let only = "feedback = \"response\" (the default)";
                foreign("continue_a", self.continue_a, only)?;
                foreign("continue_b", self.continue_b, only)?;
                Ok((
                    feedback,
                    (
                        "feedback_a",
                        self.feedback_a.unwrap_or_else(default_continue_a),
                    ),
                    (
                        "feedback_b",
                        self.feedback_b.unwrap_or(feedback.default_b()),
                    ),
                ))
            }
        }
    }
}

/// The checked parameters of a Shmueli group, in simulation units (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShmueliParams {
    /// What the continue probability a / (b x + 1) reacts to.
    pub feedback: Feedback,
    /// `a` of the continue probability (of the `feedback` model: `continue_a` or `feedback_a`).
    pub continue_a: f64,
    /// `b` of the continue probability (of the `feedback` model: `continue_b` or `feedback_b`),
    /// per minute, or per unit of slowdown for [`Feedback::Slowdown`].
    pub continue_b: f64,
    /// Probability of being a day user.
    pub day_probability: f64,
    /// Probability of being a weekday user.
    pub weekday_probability: f64,
    /// Day window start, seconds after midnight.
    pub day_start: Time,
    /// Day window end, seconds after midnight.
    pub day_end: Time,
    /// Largest shift, minutes.
    pub shift_minutes: i64,
    /// Two-level sampling on or off.
    pub repeat_jobs: bool,
    /// Batch spreading.
    pub batch_gaps: BatchGaps,
}

impl Default for ShmueliParams {
    /// The paper's values.
    fn default() -> Self {
        // The defaults are valid.
        ShmueliParams {
            feedback: Feedback::Response,
            continue_a: default_continue_a(),
            continue_b: default_continue_b(),
            day_probability: default_day_probability(),
            weekday_probability: default_weekday_probability(),
            day_start: 7 * 3600 + 30 * 60,
            day_end: 17 * 3600 + 30 * 60,
            shift_minutes: i64::from(default_shift_minutes()),
            repeat_jobs: true,
            batch_gaps: BatchGaps::None,
        }
    }
}

impl ShmueliParams {
    /// A user's activity window: its class and shift drawn from its profile stream (class, then
    /// days, then shift).
    pub fn window(&self, calendar: Calendar, mut profile: Pcg64) -> ActivityWindow {
        let part = if profile.random::<f64>() < self.day_probability {
            DayPart::Day
        } else {
            DayPart::Night
        };
        let days = if profile.random::<f64>() < self.weekday_probability {
            Days::Weekdays
        } else {
            Days::Weekends
        };
        let shift = profile.random_range(-self.shift_minutes..=self.shift_minutes) * 60;
        ActivityWindow {
            part,
            days,
            shift,
            day_start: self.day_start,
            day_end: self.day_end,
            calendar,
        }
    }
}

impl UserFactory for ShmueliParams {
    fn kind(&self) -> &'static str {
        ShmueliConfig::NAME
    }

    fn check_model(&self, group: &Group, processors: u32) -> Result<(), PopulationError> {
        check_model(group, processors)
    }

    fn user(&self, calendar: Calendar, profile: Pcg64) -> Box<dyn UserBehaviour> {
        Box::new(ShmueliUser {
            window: self.window(calendar, profile),
            params: *self,
            source: JobSource::default(),
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One Shmueli user: its activity window and its two-level job source.
#[derive(Debug)]
struct ShmueliUser {
    window: ActivityWindow,
    params: ShmueliParams,
    source: JobSource,
}

impl UserBehaviour for ShmueliUser {
    fn is_active(&mut self, t: Time) -> bool {
        self.window.is_active(t)
    }

    fn next_opening(&mut self, t: Time) -> Time {
        self.window.next_opening(t)
    }

    /// Section III-B.2: the width from the fitted batch widths, every job due at `now` (or
    /// spread by the fitted gaps), attributes by two-level sampling.
    fn next_batch(
        &mut self,
        now: Time,
        draws: &mut Draws<'_>,
        batch: &mut VecDeque<(Time, JobAttributes)>,
    ) {
        let model = draws.model;
        let streams = &mut *draws.streams;
        let width = model.batch_width.quantile(streams.jobs.random()).max(1);
        let mut at = now;
        for i in 0..width {
            if i > 0 && self.params.batch_gaps == BatchGaps::Fitted {
                if let Some(gaps) = &model.batch_gap {
                    at += gaps.quantile(streams.jobs.random()).max(0);
                }
            }
            let attributes = self.source.next(
                model,
                self.params.repeat_jobs,
                draws.estimates,
                &mut streams.jobs,
                &mut streams.estimates,
            );
            batch.push_back((at, attributes));
        }
    }

    /// Section III-B.1: a Bernoulli trial on a / (b x + 1), x the deciding job's response in
    /// minutes (or its wait, or its bounded slowdown - 1: [`Feedback`]); continue after a short
    /// think time, or break.
    fn batch_complete(&mut self, job: &ClosingJob, draws: &mut Draws<'_>) -> Decision {
        let x = self.params.feedback.x(job);
        let p_continue = self.params.continue_a / (self.params.continue_b * x + 1.0);
        let rng = &mut draws.streams.decisions;
        let next = if rng.random::<f64>() < p_continue {
            AfterBatch::Continue {
                think: draws.model.think_short.quantile(rng.random()),
            }
        } else {
            AfterBatch::Break {
                pause: draws.model.think_break.quantile(rng.random()),
            }
        };
        Decision {
            next,
            continue_probability: Some(p_continue),
        }
    }

    /// A lost job is resubmitted after a short think time (the model's `think_short`), with
    /// no continue trial: the user is still at work on this batch.
    fn resubmit_delay(&mut self, _job: &ClosingJob, draws: &mut Draws<'_>) -> Time {
        draws
            .model
            .think_short
            .quantile(draws.streams.decisions.random())
    }

    fn cycle(&self) -> Option<(DayPart, Days, Time)> {
        Some((self.window.part, self.window.days, self.window.shift))
    }
}

/// Checks that every value a Shmueli user will draw from the group's model is usable.
fn check_model(group: &Group, processors: u32) -> Result<(), PopulationError> {
    let m = &group.model;
    let bad = |what: &'static str, value: i64| PopulationError::BadModel {
        group: group.name.clone(),
        what,
        value,
    };
    let widest = m.size.values().last().copied().unwrap_or(0);
    if widest > i64::from(processors) {
        return Err(PopulationError::TooWide {
            group: group.name.clone(),
            size: widest,
            processors,
        });
    }
    let checks: [(&'static str, &usermodel::Ecdf, i64); 5] = [
        ("job sizes", &m.size, 1),
        ("runtimes", &m.runtime, 0),
        ("think times", &m.think_short, 0),
        ("breaks", &m.think_break, 0),
        ("batch widths", &m.batch_width, 1),
    ];
    for (what, e, least) in checks {
        if let Some(&v) = e.values().first().filter(|&&v| v < least) {
            return Err(bad(what, v));
        }
    }
    if let Some(&v) = m.size_repetition.values().first().filter(|&&v| v < 1) {
        return Err(bad("size repetitions", v));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GroupConfig;

    fn group(extra: &str) -> Result<GroupConfig, String> {
        toml::from_str(&format!("name = \"g\"\nusers = 3\n{extra}")).map_err(|e| e.to_string())
    }

    #[test]
    fn a_schlagkamp_key_is_refused_even_at_its_default() {
        let err = group("think = \"lin\"").unwrap_err();
        assert!(
            err.contains(
                "group \"g\".think = \"lin\": applies to kind = \"schlagkamp\" groups only"
            ),
            "{err}"
        );
        let err = group("kind = \"shmueli\"\nactivity_ratio = 0.5").unwrap_err();
        assert!(err.contains("group \"g\".activity_ratio = 0.5"), "{err}");
    }

    fn params_of(extra: &str) -> Result<ShmueliParams, String> {
        toml::from_str::<ShmueliConfig>(extra)
            .map_err(|e| e.to_string())?
            .params(&Prefix("groups[1]"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn feedback_models_and_their_defaults() {
        let p = params_of("").unwrap();
        assert_eq!(
            (p.feedback, p.continue_a, p.continue_b),
            (Feedback::Response, 0.8, 0.05)
        );
        let p = params_of("feedback = \"wait\"").unwrap();
        assert_eq!(
            (p.feedback, p.continue_a, p.continue_b),
            (Feedback::Wait, 0.8, 0.05)
        );
        let p = params_of("feedback = \"slowdown\"\nfeedback_a = 0.9").unwrap();
        assert_eq!(
            (p.feedback, p.continue_a, p.continue_b),
            (Feedback::Slowdown, 0.9, SLOWDOWN_B)
        );
        let p = params_of("feedback = \"wait\"\nfeedback_b = 0.2").unwrap();
        assert_eq!(p.continue_b, 0.2);
    }

    #[test]
    fn a_key_of_another_feedback_model_is_refused() {
        let err = params_of("feedback_b = 0.1").unwrap_err();
        assert!(
            err.starts_with(
                "groups[1].feedback_b = 0.1: applies to feedback = \"wait\" or \"slowdown\" only"
            ),
            "{err}"
        );
        let err = params_of("feedback = \"response\"\nfeedback_a = 0.5").unwrap_err();
        assert!(err.starts_with("groups[1].feedback_a = 0.5"), "{err}");
        let err = params_of("feedback = \"slowdown\"\ncontinue_a = 0.8").unwrap_err();
        assert!(
            err.starts_with("groups[1].continue_a = 0.8: applies to feedback = \"response\""),
            "{err}"
        );
        assert!(err.contains("feedback_a and feedback_b"), "{err}");
        let err = params_of("feedback = \"wait\"\nfeedback_a = 1.5").unwrap_err();
        assert!(
            err.starts_with("groups[1].feedback_a = 1.5: a probability"),
            "{err}"
        );
        let err = params_of("feedback = \"slowdown\"\nfeedback_b = -1.0").unwrap_err();
        assert!(
            err.starts_with(
                "groups[1].feedback_b = -1: must be a finite number >= 0 (dimensionless)"
            ),
            "{err}"
        );
        let err = params_of("feedback = \"queue\"").unwrap_err();
        assert!(err.contains("unknown variant `queue`"), "{err}");
    }

    #[test]
    fn each_model_reads_its_own_property_of_the_deciding_job() {
        let job = |wait, runtime| ClosingJob {
            job_id: 1,
            wait,
            runtime,
        };
        // 30 min wait, 60 min run.
        let j = job(1800, 3600);
        assert_eq!(Feedback::Response.x(&j), 90.0);
        assert_eq!(Feedback::Wait.x(&j), 30.0);
        assert_eq!(Feedback::Slowdown.x(&j), 0.5);
        // A job that did not wait: x = 0 for wait and slowdown, so p = a.
        assert_eq!(Feedback::Wait.x(&job(0, 5)), 0.0);
        assert_eq!(Feedback::Slowdown.x(&job(0, 5)), 0.0);
        // A 2 s job that waited 38 s: bsld = 40 / 10 = 4.
        assert_eq!(Feedback::Slowdown.x(&job(38, 2)), 3.0);
        // The slowdown default: a job of the median runtime (408 s) gets the wait model's p.
        let median = job(1200, 408);
        let wait = 0.8 / (0.05 * Feedback::Wait.x(&median) + 1.0);
        let slowdown = 0.8 / (SLOWDOWN_B * Feedback::Slowdown.x(&median) + 1.0);
        assert!((wait - slowdown).abs() < 1e-12, "{wait} {slowdown}");
    }

    #[test]
    fn its_config_round_trips() {
        let config = ShmueliConfig {
            models: "../models/traces/x".into(),
            continue_a: Some(1.0),
            continue_b: Some(0.0),
            feedback: Feedback::Response,
            feedback_a: None,
            feedback_b: None,
            day_probability: 0.0,
            weekday_probability: 0.9,
            day_start: "08:15".into(),
            day_end: "16:45".into(),
            shift_minutes: 0,
            repeat_jobs: false,
            batch_gaps: BatchGaps::Fitted,
        };
        let text = toml::to_string(&config).unwrap();
        assert_eq!(toml::from_str::<ShmueliConfig>(&text).unwrap(), config);
        assert_eq!(
            toml::from_str::<ShmueliConfig>("").unwrap(),
            ShmueliConfig::default()
        );
        let p = config.params(&Prefix("g")).unwrap();
        assert_eq!((p.day_start, p.day_end), (8 * 3600 + 900, 16 * 3600 + 2700));
        assert_eq!(
            ShmueliConfig::default().params(&Prefix("g")).unwrap(),
            ShmueliParams::default()
        );
    }
}
