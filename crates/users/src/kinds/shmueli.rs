//! Shmueli & Feitelson's user (paper 000, section III-B; `kind = "shmueli"`, the default).
//!
//! * **Session dynamics** (III-B.1): after the last job of a batch ends with response r minutes,
//!   the user continues with probability `a / (b r + 1)` (eq. 1; a = 0.8, b = 0.05) after a
//!   short think time drawn from the fitted `think_short`, or closes its session and takes a
//!   break drawn from `think_break`.
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

use super::{AfterBatch, Draws, KindConfig, Prefix, UserBehaviour, UserFactory};
use crate::Time;
use crate::config::ConfigError;
use crate::cycle::{ActivityWindow, Calendar, DayPart, Days, parse_clock};
use crate::population::{Group, PopulationError};
use crate::submission::{JobAttributes, JobSource};

/// How the jobs of a batch are spread in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
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

fn default_models() -> String {
    "embedded".to_string()
}
fn default_continue_a() -> f64 {
    0.8
}
fn default_continue_b() -> f64 {
    0.05
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
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ShmueliConfig {
    /// Where its distributions come from: `embedded` (the models/combined the binary was built
    /// with) or a model directory, relative to the population file.
    #[serde(default = "default_models")]
    pub models: String,
    /// `a` of the continue probability a / (b r + 1), r in minutes (section III-B.1, eq. 1).
    #[serde(default = "default_continue_a")]
    pub continue_a: f64,
    /// `b` of the continue probability, per minute.
    #[serde(default = "default_continue_b")]
    pub continue_b: f64,
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
            continue_a: default_continue_a(),
            continue_b: default_continue_b(),
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
        let continue_a = probability("continue_a", self.continue_a)?;
        if !(self.continue_b.is_finite() && self.continue_b >= 0.0) {
            return Err(error(
                "continue_b",
                self.continue_b.to_string(),
                "must be a finite number >= 0 (per minute)",
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
            continue_a,
            continue_b: self.continue_b,
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

/// The checked parameters of a Shmueli group, in simulation units (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShmueliParams {
    /// `a` of the continue probability.
    pub continue_a: f64,
    /// `b` of the continue probability, per minute.
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

    /// Section III-B.1: a Bernoulli trial on a / (b r + 1), r in minutes; continue after a short
    /// think time, or break.
    fn batch_complete(&mut self, response: Time, draws: &mut Draws<'_>) -> AfterBatch {
        let minutes = response as f64 / 60.0;
        let p_continue = self.params.continue_a / (self.params.continue_b * minutes + 1.0);
        let rng = &mut draws.streams.decisions;
        if rng.random::<f64>() < p_continue {
            AfterBatch::Continue {
                think: draws.model.think_short.quantile(rng.random()),
            }
        } else {
            AfterBatch::Break {
                pause: draws.model.think_break.quantile(rng.random()),
            }
        }
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

    #[test]
    fn its_config_round_trips() {
        let config = ShmueliConfig {
            models: "../models/traces/x".into(),
            continue_a: 1.0,
            continue_b: 0.0,
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
