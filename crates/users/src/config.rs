//! A user group as the population file describes it, and its validated parameters.

use serde::{Deserialize, Serialize};

use crate::Time;
use crate::cycle::parse_clock;

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

/// Where a job's runtime estimate (its kill time) comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Estimates {
    /// Drawn from the fitted estimate model: the estimates users gave jobs of the same runtime
    /// class (powers of two) in the traces. Most are far above the runtime; some are below it
    /// and those jobs are killed.
    #[default]
    Fitted,
    /// The exact runtime (perfect estimates).
    Exact,
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

/// One `[[groups]]` table of a population file. Every parameter defaults to the value of
/// Shmueli & Feitelson (2009), section III-B; distributions come from `models`.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct GroupConfig {
    /// The group's name (sessions.csv, summaries).
    pub name: String,
    /// How many users it has.
    pub users: u32,
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
    /// Where runtime estimates come from.
    #[serde(default)]
    pub estimates: Estimates,
}

/// A parameter value out of range, named by its key path (`groups[1].day_probability`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key} = {value}: {problem}")]
pub struct ConfigError {
    /// The key path.
    pub key: String,
    /// The value as given.
    pub value: String,
    /// What is wrong with it.
    pub problem: String,
}

/// The checked parameters of a group, in simulation units (seconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GroupParams {
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
    /// Estimate source.
    pub estimates: Estimates,
}

impl GroupConfig {
    /// Checks the values; `prefix` is the group's key path (`groups[0]`).
    pub fn params(&self, prefix: &str) -> Result<GroupParams, ConfigError> {
        let error = |key: &str, value: String, problem: &str| ConfigError {
            key: format!("{prefix}.{key}"),
            value,
            problem: problem.to_string(),
        };
        if self.name.trim().is_empty() {
            return Err(error(
                "name",
                format!("{:?}", self.name),
                "a group needs a name",
            ));
        }
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
        Ok(GroupParams {
            continue_a,
            continue_b: self.continue_b,
            day_probability,
            weekday_probability,
            day_start,
            day_end,
            shift_minutes: i64::from(self.shift_minutes),
            repeat_jobs: self.repeat_jobs,
            batch_gaps: self.batch_gaps,
            estimates: self.estimates,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(extra: &str) -> Result<GroupConfig, toml::de::Error> {
        toml::from_str(&format!("name = \"g\"\nusers = 10\n{extra}"))
    }

    #[test]
    fn defaults_are_the_papers() {
        let p = group("").unwrap().params("groups[0]").unwrap();
        assert_eq!((p.continue_a, p.continue_b), (0.8, 0.05));
        assert_eq!((p.day_probability, p.weekday_probability), (0.7, 0.8));
        assert_eq!(
            (p.day_start, p.day_end, p.shift_minutes),
            (27_000, 63_000, 60)
        );
        assert!(p.repeat_jobs);
        assert_eq!(p.batch_gaps, BatchGaps::None);
    }

    #[test]
    fn bad_values_name_their_key() {
        let err = group("day_probability = 1.5")
            .unwrap()
            .params("groups[2]")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "groups[2].day_probability = 1.5: a probability must lie in [0, 1]"
        );
        let err = group("day_start = \"18:00\"")
            .unwrap()
            .params("groups[0]")
            .unwrap_err();
        assert!(err.to_string().starts_with("groups[0].day_end"), "{err}");
        let err = group("continue_b = -1.0")
            .unwrap()
            .params("groups[0]")
            .unwrap_err();
        assert!(err.to_string().contains("continue_b"), "{err}");
    }

    #[test]
    fn unknown_keys_and_negative_counts_are_rejected_by_the_parser() {
        let err = group("dya_probability = 0.5").unwrap_err().to_string();
        assert!(err.contains("unknown field `dya_probability`"), "{err}");
        let err = toml::from_str::<GroupConfig>("name = \"g\"\nusers = -3\n")
            .unwrap_err()
            .to_string();
        assert!(err.contains("users") || err.contains("-3"), "{err}");
    }
}
