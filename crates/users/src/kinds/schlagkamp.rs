//! Schlagkamp's user model (paper 004, section 2): weekly activity, day-of-week weights, fixed
//! working hours, and per-user job profiles over sizes with normal runtimes per size.
//!
//! `kind = "schlagkamp"`. The session dynamics: one job at a time (batches of one job), the next
//! submitted a think time tt = m r + b after the last one ended (eq. 8), delayed to the next
//! working day when that falls outside the working hours; no break, so sessions are the runs of
//! jobs within one working day.
//!
//! Draws: the profile stream gives each week's activity and days (eight draws a week, lazily in
//! week order); the jobs stream each job's size, then its runtime; the estimates stream the
//! estimate (when the group's estimate model is not the fitted one); the decisions stream nothing.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::Arc;

use rand::Rng;
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, Normal};

use super::{
    AfterBatch, ClosingJob, Decision, Draws, KindConfig, Prefix, UserBehaviour, UserFactory,
};
use crate::Time;
use crate::config::{ConfigError, Estimates, check_distribution};
use crate::cycle::{Calendar, parse_clock};
use crate::submission::JobAttributes;

/// Schlagkamp's think-time functions (paper 004, section 3.1 and Fig. 6): tt = m r + b.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
pub enum ThinkPreset {
    /// Constant 20 minutes (m = 0, b = 1200 s).
    #[serde(rename = "c20")]
    C20,
    /// Constant 120 minutes (m = 0, b = 7200 s).
    #[serde(rename = "c120")]
    C120,
    /// Constant 240 minutes (m = 0, b = 14400 s).
    #[serde(rename = "c240")]
    C240,
    /// Linear, fitted by least squares to four traces (section 2; Fig. 6): m = 0.4826,
    /// b = 1779 s.
    #[serde(rename = "lin")]
    Lin,
    /// Linear with the values in section 3.1's text: m = 1.051, b = 1361 s.
    #[serde(rename = "lin-steep")]
    LinSteep,
}

impl ThinkPreset {
    /// (m, b seconds).
    pub fn coefficients(self) -> (f64, f64) {
        match self {
            ThinkPreset::C20 => (0.0, 1200.0),
            ThinkPreset::C120 => (0.0, 7200.0),
            ThinkPreset::C240 => (0.0, 14_400.0),
            ThinkPreset::Lin => (0.4826, 1779.0),
            ThinkPreset::LinSteep => (1.051, 1361.0),
        }
    }
}

/// A preset's name in a population file (`c120`).
fn preset_name(preset: ThinkPreset) -> &'static str {
    match preset {
        ThinkPreset::C20 => "c20",
        ThinkPreset::C120 => "c120",
        ThinkPreset::C240 => "c240",
        ThinkPreset::Lin => "lin",
        ThinkPreset::LinSteep => "lin-steep",
    }
}

/// How a runtime is drawn from its size's normal distribution, whose left tail lies below 0
/// (2.3 % of the mass for the artificial user's sd = mean / 2). The paper does not say.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
pub enum RuntimeDraw {
    /// The normal truncated to positive values (inverse transform on (0, inf)), rounded, at
    /// least 1 s: ours, the default.
    #[default]
    #[serde(rename = "truncated")]
    Truncated,
    /// The full normal, rounded, with every draw below 1 s set to 1 s: the left tail becomes a
    /// point mass of 1 s jobs (an experiment, `scripts/schlagkamp-experiments.sh`).
    #[serde(rename = "clamped")]
    Clamped,
}

/// Where the think time tt = m r + b is counted from.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
pub enum ThinkFrom {
    /// From the end of the last job (section 2: think time is the interval between response
    /// and submission): the default.
    #[default]
    #[serde(rename = "end")]
    End,
    /// From the submission of the last job, but not before it ended (the user still waits for
    /// its result): the next job max(end, submit + tt) (an experiment).
    #[serde(rename = "submit")]
    Submit,
}

/// The unit of the response r in tt = m r + b (b stays in seconds).
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
pub enum ResponseUnit {
    /// Seconds, as the paper states (section 2: think times "< 28,800 seconds"; Fig. 6's b of
    /// c120 is 7200): the default.
    #[default]
    #[serde(rename = "seconds")]
    Seconds,
    /// Minutes: tt = m (r / 60) + b (a unit mismatch the paper does not state; an experiment).
    #[serde(rename = "minutes")]
    Minutes,
}

/// Whose response r enters the think time tt = m r + b that follows a job's end (eq. 8).
///
/// Eq. 8 reads tt_u(r_j) = m r_{j-1} + b, "the think time according to the response time of
/// the last job j_{i-1} submitted by user u". With one job at a time the last job a user had seen
/// end when it submits its next job is always the job whose end started the think time (it ended
/// before that submission, every earlier job before it), so reading "the last job ended at the
/// next submission" literally gives the default. The other reading is the response the user knew
/// when it submitted the job that has just ended: the think time is fixed at that submission, one
/// job behind.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
pub enum ThinkResponse {
    /// The response of the job that has just ended, whose end starts the think time (also the
    /// last job ended when the next is submitted): the default.
    #[default]
    #[serde(rename = "just_ended")]
    JustEnded,
    /// The response the user knew when it submitted the job that has just ended: that of the
    /// last of its jobs that had ended by then, the job before (one job at a time), even when
    /// that job ended outside working hours; after a user's first job, when none had ended,
    /// r = 0 (tt = b) (eq. 8's r_{j-1} read as one job behind; an experiment).
    #[serde(rename = "known_at_submit")]
    KnownAtSubmit,
}

/// What happens to a think time that runs past the end of the working day.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
pub enum ThinkAcrossDays {
    /// The submission is delayed to the start of the next working day (section 2: "In case the
    /// submit time of a new job is not between t_b and t_e, it is delayed until the next day
    /// begins"): the default.
    #[default]
    #[serde(rename = "restart")]
    Restart,
    /// The user thinks only in working hours: the part of the think time left at t_e carries
    /// over to the next working day's t_b (not stated by the paper; an experiment). A job that
    /// ends outside working hours still leads to a submission at the next opening.
    #[serde(rename = "carry")]
    Carry,
}

/// How the working days are drawn.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema,
)]
pub enum ActivityDraws {
    /// One draw a week decides whether the user is active that week (eq. 1), then each day
    /// p_d / max p: the default.
    #[default]
    #[serde(rename = "week")]
    Week,
    /// Each day on its own: worked with probability p_a p_d / max p (the same expected working
    /// days, no weekly correlation; an experiment).
    #[serde(rename = "day")]
    Day,
}

/// One size of Schlagkamp's per-user job profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SizeClass {
    /// Processors (capped at the machine size when the population is built).
    pub processors: u32,
    /// Probability of this size.
    pub probability: f64,
    /// Mean runtime, seconds.
    pub runtime_mean: f64,
    /// Standard deviation of the runtime, seconds.
    pub runtime_sd: f64,
}

/// Schlagkamp's user model (paper 004, section 2), checked.
#[derive(Debug, Clone, PartialEq)]
pub struct SchlagkampParams {
    /// p_a: probability of being active in a week.
    pub activity_ratio: f64,
    /// p_d for Monday..Sunday, summing to 1.
    pub day_weights: [f64; 7],
    /// t_b, seconds after midnight.
    pub work_start: Time,
    /// t_e, seconds after midnight.
    pub work_end: Time,
    /// The job profile.
    pub sizes: Vec<SizeClass>,
    /// m of the think time tt = m r + b.
    pub think_slope: f64,
    /// b of the think time, seconds.
    pub think_constant: f64,
    /// How runtimes are drawn below 0.
    pub runtime_draw: RuntimeDraw,
    /// Where the think time is counted from.
    pub think_from: ThinkFrom,
    /// Weekly or daily activity draws.
    pub activity_draws: ActivityDraws,
    /// A think time past the end of the day: restart next day or carry over.
    pub think_across_days: ThinkAcrossDays,
    /// The unit of r in tt = m r + b.
    pub think_response_unit: ResponseUnit,
    /// Whose response r is in tt = m r + b.
    pub think_response: ThinkResponse,
}

impl SchlagkampParams {
    /// Fig. 6 of paper 004: the artificial setup's user.
    pub fn artificial() -> SchlagkampParams {
        const SIZES: [u32; 11] = [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024];
        const P: [f64; 11] = [0.0, 0.0, 0.05, 0.05, 0.1, 0.15, 0.3, 0.15, 0.1, 0.05, 0.05];
        const MEAN: [f64; 11] = [
            0.0, 20.0, 38.0, 75.0, 150.0, 300.0, 600.0, 1200.0, 3600.0, 7200.0, 14400.0,
        ];
        const SD: [f64; 11] = [
            0.0, 10.0, 20.0, 38.0, 75.0, 150.0, 300.0, 600.0, 1200.0, 3600.0, 7200.0,
        ];
        let (think_slope, think_constant) = ThinkPreset::Lin.coefficients();
        SchlagkampParams {
            activity_ratio: 0.5,
            day_weights: [0.2, 0.2, 0.2, 0.2, 0.2, 0.0, 0.0],
            work_start: 9 * 3600,
            work_end: 17 * 3600,
            sizes: (0..SIZES.len())
                .map(|i| SizeClass {
                    processors: SIZES[i],
                    probability: P[i],
                    runtime_mean: MEAN[i],
                    runtime_sd: SD[i],
                })
                .collect(),
            think_slope,
            think_constant,
            runtime_draw: RuntimeDraw::Truncated,
            think_from: ThinkFrom::End,
            activity_draws: ActivityDraws::Week,
            think_across_days: ThinkAcrossDays::Restart,
            think_response_unit: ResponseUnit::Seconds,
            think_response: ThinkResponse::JustEnded,
        }
    }

    /// The think time after a response of `response` seconds: m r + b, whole seconds.
    pub fn think_time(&self, response: Time) -> Time {
        think_time(self.think_slope, self.think_constant, response)
    }
}

/// The keys of a `kind = "schlagkamp"` group; each one given replaces the value of Fig. 6's
/// artificial user.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SchlagkampConfig {
    /// the probability that a user is active in a given week (p_a; default 0.5).
    #[serde(default)]
    pub activity_ratio: Option<f64>,
    /// how the user's work spreads over Monday..Sunday (p_d, 7 values summing to 1;
    /// default 0.2 on each weekday).
    #[serde(default)]
    pub day_weights: Option<Vec<f64>>,
    /// start of the working day, `HH:MM` (t_b; default 09:00).
    #[serde(default)]
    pub work_start: Option<String>,
    /// end of the working day, `HH:MM` (t_e; default 17:00).
    #[serde(default)]
    pub work_end: Option<String>,
    /// the job sizes (processors; default 1, 2, 4, ..., 1024).
    #[serde(default)]
    pub job_sizes: Option<Vec<u32>>,
    /// the probability of each size (summing to 1; default Fig. 6's).
    #[serde(default)]
    pub size_probabilities: Option<Vec<f64>>,
    /// the mean runtime of each size, seconds (default Fig. 6's).
    #[serde(default)]
    pub runtime_means: Option<Vec<f64>>,
    /// the standard deviation of each size's runtime, seconds (default Fig. 6's).
    #[serde(default)]
    pub runtime_sds: Option<Vec<f64>>,
    /// the think-time function (default `lin`).
    #[serde(default)]
    pub think: Option<ThinkPreset>,
    /// m of tt = m r + b (not with `think`, which sets m and b; without either, `lin`'s).
    #[serde(default)]
    pub think_slope: Option<f64>,
    /// b of tt = m r + b, seconds (not with `think`; without either, `lin`'s).
    #[serde(default)]
    pub think_constant: Option<f64>,
    /// `truncated` (default) or `clamped`: how the normal's negative tail is handled.
    #[serde(default)]
    pub runtime_draw: Option<RuntimeDraw>,
    /// `end` (default) or `submit`: where the think time is counted from.
    #[serde(default)]
    pub think_from: Option<ThinkFrom>,
    /// `week` (default) or `day`: how the working days are drawn.
    #[serde(default)]
    pub activity_draws: Option<ActivityDraws>,
    /// `restart` (default) or `carry`: a think time past the end of the working day.
    #[serde(default)]
    pub think_across_days: Option<ThinkAcrossDays>,
    /// `seconds` (default) or `minutes`: the unit of r in tt = m r + b.
    #[serde(default)]
    pub think_response_unit: Option<ResponseUnit>,
    /// `just_ended` (default) or `known_at_submit`: whose response r is in tt = m r + b (the
    /// job that has just ended, or the last one ended when that job was submitted).
    #[serde(default)]
    pub think_response: Option<ThinkResponse>,
}

impl KindConfig for SchlagkampConfig {
    const NAME: &'static str = "schlagkamp";
    const HELP: &'static str = "Schlagkamp (paper 004, section 2): one job at a time, a think time that is a constant or a linear function of the last response, weekly activity, day-of-week weights and fixed working hours, sizes over powers of two with normal runtimes per size";

    /// Exact runtimes: "EASY has an optimal working environment" (paper 004, section 3.1).
    fn default_estimates(&self) -> Estimates {
        Estimates::Exact
    }

    fn check(&self, prefix: &Prefix<'_>) -> Result<Arc<dyn UserFactory>, ConfigError> {
        Ok(Arc::new(self.params(prefix)?))
    }
}

impl SchlagkampConfig {
    /// The checked parameters: Fig. 6's artificial user, with the keys given replacing its
    /// values; errors name `prefix` and the key.
    pub fn params(&self, prefix: &Prefix<'_>) -> Result<SchlagkampParams, ConfigError> {
        let error = |key: &str, value: String, problem: &str| prefix.error(key, value, problem);
        let mut p = SchlagkampParams::artificial();
        if let Some(a) = self.activity_ratio {
            if !(0.0..=1.0).contains(&a) {
                return Err(error(
                    "activity_ratio",
                    a.to_string(),
                    "a probability must lie in [0, 1]",
                ));
            }
            p.activity_ratio = a;
        }
        if let Some(w) = &self.day_weights {
            let text = format!("{w:?}");
            let weights: [f64; 7] = w.as_slice().try_into().map_err(|_| {
                error(
                    "day_weights",
                    text.clone(),
                    "give 7 weights, Monday to Sunday",
                )
            })?;
            check_distribution(&weights).map_err(|problem| error("day_weights", text, &problem))?;
            p.day_weights = weights;
        }
        let clock = |key: &str, text: &str| {
            parse_clock(text)
                .ok_or_else(|| error(key, format!("{text:?}"), "expected a time of day HH:MM"))
        };
        if let Some(t) = &self.work_start {
            p.work_start = clock("work_start", t)?;
        }
        if let Some(t) = &self.work_end {
            p.work_end = clock("work_end", t)?;
        }
        if p.work_start >= p.work_end {
            return Err(error(
                "work_end",
                format!("{:?}", self.work_end.as_deref().unwrap_or("17:00")),
                "the working day must end after it starts (work_start)",
            ));
        }
        // The job profile: every list replaces the default's, and all must have one entry a size.
        let sizes: Vec<u32> = self
            .job_sizes
            .clone()
            .unwrap_or_else(|| p.sizes.iter().map(|c| c.processors).collect());
        if let Some(&bad) = sizes.iter().find(|&&s| s == 0) {
            return Err(error(
                "job_sizes",
                bad.to_string(),
                "a job needs at least one processor",
            ));
        }
        let column = |key: &str, given: &Option<Vec<f64>>, default: Vec<f64>| {
            let values = given.clone().unwrap_or(default);
            if values.len() != sizes.len() {
                return Err(error(
                    key,
                    format!("{values:?}"),
                    &format!("give one value for each of the {} job_sizes", sizes.len()),
                ));
            }
            Ok(values)
        };
        let probabilities = column(
            "size_probabilities",
            &self.size_probabilities,
            p.sizes.iter().map(|c| c.probability).collect(),
        )?;
        check_distribution(&probabilities).map_err(|problem| {
            error("size_probabilities", format!("{probabilities:?}"), &problem)
        })?;
        let means = column(
            "runtime_means",
            &self.runtime_means,
            p.sizes.iter().map(|c| c.runtime_mean).collect(),
        )?;
        let sds = column(
            "runtime_sds",
            &self.runtime_sds,
            p.sizes.iter().map(|c| c.runtime_sd).collect(),
        )?;
        for (key, values) in [("runtime_means", &means), ("runtime_sds", &sds)] {
            if let Some(bad) = values.iter().find(|v| !(v.is_finite() && **v >= 0.0)) {
                return Err(error(key, bad.to_string(), "runtimes are seconds >= 0"));
            }
        }
        p.sizes = (0..sizes.len())
            .map(|i| SizeClass {
                processors: sizes[i],
                probability: probabilities[i],
                runtime_mean: means[i],
                runtime_sd: sds[i],
            })
            .collect();
        if let Some(preset) = self.think {
            // A preset names both m and b: with think_slope or think_constant as well, one of
            // the two would be silently ignored.
            for (key, given) in [
                ("think_slope", self.think_slope),
                ("think_constant", self.think_constant),
            ] {
                if let Some(value) = given {
                    let (m, b) = preset.coefficients();
                    return Err(error(
                        key,
                        value.to_string(),
                        &format!(
                            "cannot be combined with think = {:?}, which sets m = {m} and b = {b} s: give either a preset (think) or think_slope and think_constant",
                            preset_name(preset)
                        ),
                    ));
                }
            }
            (p.think_slope, p.think_constant) = preset.coefficients();
        }
        if let Some(m) = self.think_slope {
            p.think_slope = m;
        }
        if let Some(b) = self.think_constant {
            p.think_constant = b;
        }
        for (key, v) in [
            ("think_slope", p.think_slope),
            ("think_constant", p.think_constant),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(error(key, v.to_string(), "must be a finite number >= 0"));
            }
        }
        if let Some(d) = self.runtime_draw {
            p.runtime_draw = d;
        }
        if let Some(f) = self.think_from {
            p.think_from = f;
        }
        if let Some(a) = self.activity_draws {
            p.activity_draws = a;
        }
        if let Some(c) = self.think_across_days {
            p.think_across_days = c;
        }
        if let Some(u) = self.think_response_unit {
            p.think_response_unit = u;
        }
        if let Some(r) = self.think_response {
            p.think_response = r;
        }
        Ok(p)
    }
}

/// When a Schlagkamp user works. Each week (Monday to Sunday) the user is active with
/// probability p_a (eq. 1); in an active week, it works on day d with probability
/// p_d / max(p) (eq. 2 read as the spread of its working time over the week: the busiest days
/// are always worked, and the expected share of working days on day d is p_d); on a working day
/// from t_b to t_e (eqs. 3-4). Weeks are drawn lazily, in order, from the user's own stream, so
/// they do not depend on the scheduler.
#[derive(Debug)]
pub struct WeeklyWindow {
    calendar: Calendar,
    start: Time,
    end: Time,
    activity_ratio: f64,
    day_probability: [f64; 7],
    activity_draws: ActivityDraws,
    rng: Pcg64,
    /// Working days of each week drawn so far (bit d = day d), from the run's first week.
    weeks: Vec<u8>,
    first_week: i64,
}

/// How far ahead a window looks for its next opening before it gives up (a user who is never
/// active): 100 years of days.
const LOOKAHEAD_DAYS: i64 = 36_525;

impl WeeklyWindow {
    /// A user's window from its group's parameters and its activity stream.
    pub fn new(params: &SchlagkampParams, calendar: Calendar, rng: Pcg64) -> WeeklyWindow {
        let busiest = params.day_weights.iter().cloned().fold(0.0, f64::max);
        let day_probability = params
            .day_weights
            .map(|w| if busiest > 0.0 { w / busiest } else { 0.0 });
        WeeklyWindow {
            first_week: calendar.day(0).div_euclid(7),
            calendar,
            start: params.work_start,
            end: params.work_end,
            activity_ratio: params.activity_ratio,
            day_probability,
            activity_draws: params.activity_draws,
            rng,
            weeks: Vec::new(),
        }
    }

    /// Whether the user works on calendar day `day`.
    fn works_on(&mut self, day: i64) -> bool {
        let week = day.div_euclid(7) - self.first_week;
        if week < 0 {
            return false;
        }
        while self.weeks.len() <= week as usize {
            // Eight draws a week whatever they decide, so every week uses the same numbers.
            let week_draw = self.rng.random::<f64>();
            let mut days = 0u8;
            for (d, p) in self.day_probability.iter().enumerate() {
                let day_draw = self.rng.random::<f64>();
                let works = match self.activity_draws {
                    ActivityDraws::Week => day_draw < *p && week_draw < self.activity_ratio,
                    ActivityDraws::Day => day_draw < *p * self.activity_ratio,
                };
                if works {
                    days |= 1 << d;
                }
            }
            self.weeks.push(days);
        }
        self.weeks[week as usize] & (1 << day.rem_euclid(7)) != 0
    }

    /// Whether `t` lies in working hours of a working day.
    pub fn is_active(&mut self, t: Time) -> bool {
        let second = self.calendar.second_of_day(t);
        (self.start..self.end).contains(&second) && self.works_on(self.calendar.day(t))
    }

    /// The next start of working hours at or after `t` (`Time::MAX` if the user never works).
    pub fn next_opening(&mut self, t: Time) -> Time {
        let today = self.calendar.day(t);
        for day in today..today + LOOKAHEAD_DAYS {
            let opening = self.calendar.time_of(day, self.start);
            if opening >= t && self.works_on(day) {
                return opening;
            }
        }
        Time::MAX
    }

    /// The time at which `think` seconds of working hours have passed since `from`, counting
    /// only working hours of working days (`Time::MAX` if the user never works again).
    pub fn after_working_time(&mut self, from: Time, think: Time) -> Time {
        let mut t = from;
        let mut left = think.max(0);
        for _ in 0..LOOKAHEAD_DAYS {
            if !self.is_active(t) {
                t = self.next_opening(t);
                if t == Time::MAX {
                    return t;
                }
            }
            let closing = self.calendar.time_of(self.calendar.day(t), self.end);
            if t + left < closing {
                return t + left;
            }
            left -= closing - t;
            t = closing;
        }
        Time::MAX
    }
}

/// A job drawn from a Schlagkamp profile: its size (at most `processors`, the machine's: "the
/// job size is reduced to system size") and a runtime from the size's normal distribution,
/// truncated to positive values (`RuntimeDraw::Truncated`) or clamped (`Clamped`: draws below
/// 1 s become 1 s), rounded to whole seconds (at least 1 s). Two draws either way.
pub fn draw_job(
    sizes: &[SizeClass],
    processors: u32,
    runtime_draw: RuntimeDraw,
    rng: &mut Pcg64,
) -> (u32, Time) {
    let u: f64 = rng.random();
    let mut cumulative = 0.0;
    let class = sizes
        .iter()
        .find(|c| {
            cumulative += c.probability;
            u < cumulative
        })
        .or_else(|| sizes.iter().rev().find(|c| c.probability > 0.0))
        .copied()
        .unwrap_or(SizeClass {
            processors: 1,
            probability: 1.0,
            runtime_mean: 0.0,
            runtime_sd: 0.0,
        });
    let v: f64 = rng.random();
    let runtime = match Normal::new(class.runtime_mean, class.runtime_sd) {
        Ok(normal) if class.runtime_sd > 0.0 => match runtime_draw {
            RuntimeDraw::Truncated => {
                // Inverse transform on (0, inf): u in [F(0), 1).
                let below = normal.cdf(0.0);
                normal.inverse_cdf(below + v * (1.0 - below))
            }
            RuntimeDraw::Clamped => normal.inverse_cdf(v),
        },
        _ => class.runtime_mean,
    };
    let runtime = if runtime.is_finite() {
        (runtime.round() as Time).max(1)
    } else {
        1
    };
    (class.processors.min(processors).max(1), runtime)
}

impl UserFactory for SchlagkampParams {
    fn kind(&self) -> &'static str {
        SchlagkampConfig::NAME
    }

    fn user(&self, calendar: Calendar, profile: Pcg64) -> Box<dyn UserBehaviour> {
        Box::new(SchlagkampUser {
            window: WeeklyWindow::new(self, calendar, profile),
            sizes: self.sizes.clone(),
            think_constant: self.think_constant,
            runtime_draw: self.runtime_draw,
            think_from: self.think_from,
            think_across_days: self.think_across_days,
            think_slope: match self.think_response_unit {
                ResponseUnit::Seconds => self.think_slope,
                ResponseUnit::Minutes => self.think_slope / 60.0,
            },
            responses: Responses::new(self.think_response),
            last_submit: 0,
        })
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One Schlagkamp user: its weekly window and its job profile.
#[derive(Debug)]
struct SchlagkampUser {
    window: WeeklyWindow,
    sizes: Vec<SizeClass>,
    think_slope: f64,
    think_constant: f64,
    runtime_draw: RuntimeDraw,
    think_from: ThinkFrom,
    think_across_days: ThinkAcrossDays,
    /// The responses it has seen, for the think time's r.
    responses: Responses,
    /// When the user's current job was submitted.
    last_submit: Time,
}

/// What a user knows of its responses: the last one seen, and the last one seen when it
/// submitted its current job; which of them enters the think time ([`ThinkResponse`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Responses {
    reading: ThinkResponse,
    /// The response of its last job that ended, seconds (none before its first ended).
    last: Option<Time>,
    /// `last` when it submitted its current job.
    at_submit: Option<Time>,
}

impl Responses {
    fn new(reading: ThinkResponse) -> Responses {
        Responses {
            reading,
            last: None,
            at_submit: None,
        }
    }

    /// The user submits a job: remember what it knows now.
    fn submitted(&mut self) {
        self.at_submit = self.last;
    }

    /// The user's job ended with `response` seconds.
    fn ended(&mut self, response: Time) {
        self.last = Some(response);
    }

    /// The r of the think time after the current job, which ended with `response` seconds:
    /// that response, or the one known when the job was submitted (0 when none was; whether
    /// [`Responses::ended`] has recorded `response` yet does not matter).
    fn for_think(&self, response: Time) -> Time {
        match self.reading {
            ThinkResponse::JustEnded => response,
            ThinkResponse::KnownAtSubmit => self.at_submit.unwrap_or(0),
        }
    }
}

impl UserBehaviour for SchlagkampUser {
    fn is_active(&mut self, t: Time) -> bool {
        self.window.is_active(t)
    }

    fn next_opening(&mut self, t: Time) -> Time {
        self.window.next_opening(t)
    }

    /// Every response is remembered, also of a job that ended outside working hours.
    fn batch_ended(&mut self, job: &ClosingJob) {
        self.responses.ended(job.response());
    }

    /// One job at a time (paper 004, section 2), from the user's size profile.
    fn next_batch(
        &mut self,
        now: Time,
        draws: &mut Draws<'_>,
        batch: &mut VecDeque<(Time, JobAttributes)>,
    ) {
        let (processors, runtime) = draw_job(
            &self.sizes,
            draws.processors,
            self.runtime_draw,
            &mut draws.streams.jobs,
        );
        let estimate = draws.estimate_or_runtime(runtime);
        self.last_submit = now;
        self.responses.submitted();
        batch.push_back((
            now,
            JobAttributes {
                processors,
                runtime,
                estimate,
            },
        ));
    }

    /// Paper 004, eq. 8: the next job a think time m r + b after this one ended (r its
    /// response, or with `think_response = "known_at_submit"` the one known when it was
    /// submitted; with `think_from = "submit"`, m r + b after it was submitted, but not before it
    /// ended); no trial, so no continue probability.
    fn batch_complete(&mut self, job: &ClosingJob, _draws: &mut Draws<'_>) -> Decision {
        let response = job.response();
        // `batch_ended` has recorded this response already: `at_submit` is still the one known
        // at this job's submission.
        let think = think_time(
            self.think_slope,
            self.think_constant,
            self.responses.for_think(response),
        );
        let think = match self.think_from {
            ThinkFrom::End => think,
            ThinkFrom::Submit => (think - response).max(0),
        };
        let think = match self.think_across_days {
            ThinkAcrossDays::Restart => think,
            ThinkAcrossDays::Carry => {
                // Called at the job's end, which lies in working hours (else the population
                // puts the user to sleep first).
                let end = self.last_submit + response;
                let at = self.window.after_working_time(end, think);
                at.saturating_sub(end)
            }
        };
        Decision {
            next: AfterBatch::Continue { think },
            continue_probability: None,
        }
    }
}

/// The think time after a response of `response` seconds: m r + b, whole seconds.
fn think_time(slope: f64, constant: f64, response: Time) -> Time {
    (slope * response.max(0) as f64 + constant).round() as Time
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::GroupConfig;
    use crate::cycle::{DAY, WEEK};
    use rand::SeedableRng;

    fn group(extra: &str) -> Result<GroupConfig, String> {
        toml::from_str(&format!(
            "name = \"g\"\nusers = 3\nkind = \"schlagkamp\"\n{extra}"
        ))
        .map_err(|e| e.to_string())
    }

    #[test]
    fn a_shmueli_key_is_refused_even_at_its_default() {
        for extra in [
            "continue_a = 0.8",
            "day_end = \"17:30\"",
            "models = \"embedded\"",
        ] {
            let err = group(extra).unwrap_err();
            let key = extra.split(' ').next().unwrap_or_default();
            assert!(
                err.contains(&format!("group \"g\".{key} = "))
                    && err.contains("applies to kind = \"shmueli\" groups only"),
                "{err}"
            );
        }
    }

    #[test]
    fn its_config_round_trips() {
        let config = SchlagkampConfig {
            activity_ratio: Some(1.0),
            day_weights: Some(vec![0.0, 0.0, 0.0, 0.0, 0.0, 0.5, 0.5]),
            work_start: Some("10:00".into()),
            work_end: None,
            job_sizes: Some(vec![2, 8]),
            size_probabilities: Some(vec![0.5, 0.5]),
            runtime_means: Some(vec![100.0, 1000.0]),
            runtime_sds: Some(vec![10.0, 100.0]),
            think: None,
            think_slope: Some(1.051),
            think_constant: Some(60.0),
            runtime_draw: Some(RuntimeDraw::Clamped),
            think_from: Some(ThinkFrom::Submit),
            activity_draws: Some(ActivityDraws::Day),
            think_across_days: Some(ThinkAcrossDays::Carry),
            think_response_unit: Some(ResponseUnit::Minutes),
            think_response: Some(ThinkResponse::KnownAtSubmit),
        };
        let text = toml::to_string(&config).unwrap();
        assert_eq!(toml::from_str::<SchlagkampConfig>(&text).unwrap(), config);
        let p = config.params(&Prefix("g")).unwrap();
        assert_eq!((p.think_slope, p.think_constant), (1.051, 60.0));
        assert_eq!((p.work_start, p.work_end), (10 * 3600, 17 * 3600));
        assert_eq!(
            SchlagkampConfig::default().params(&Prefix("g")).unwrap(),
            SchlagkampParams::artificial()
        );
    }

    fn window(p: &SchlagkampParams, seed: u64) -> WeeklyWindow {
        WeeklyWindow::new(p, Calendar::monday_midnight(), Pcg64::seed_from_u64(seed))
    }

    #[test]
    fn a_week_is_all_or_nothing_and_weekends_are_free() {
        let p = SchlagkampParams::artificial();
        let mut w = window(&p, 3);
        let mut active_weeks = 0;
        for week in 0..2000 {
            let worked: Vec<bool> = (0..7)
                .map(|d| w.is_active(week * WEEK + d * DAY + 10 * 3600))
                .collect();
            // Fig. 6: p_d = 0.2 Monday to Friday, so all five weekdays or none.
            assert!(worked[..5].iter().all(|&x| x == worked[0]), "{worked:?}");
            assert!(!worked[5] && !worked[6]);
            active_weeks += usize::from(worked[0]);
        }
        // p_a = 0.5.
        assert!(
            (active_weeks as f64 / 2000.0 - 0.5).abs() < 0.04,
            "{active_weeks}"
        );
        // Hours: 09:00-17:00.
        let mut always = SchlagkampParams::artificial();
        always.activity_ratio = 1.0;
        let mut w = window(&always, 1);
        assert!(!w.is_active(9 * 3600 - 1) && w.is_active(9 * 3600) && !w.is_active(17 * 3600));
        // Friday 17:00 -> Monday 09:00.
        assert_eq!(w.next_opening(4 * DAY + 17 * 3600), WEEK + 9 * 3600);
        assert_eq!(w.next_opening(DAY + 3600), DAY + 9 * 3600);
    }

    #[test]
    fn day_weights_spread_the_work() {
        let mut p = SchlagkampParams::artificial();
        p.activity_ratio = 1.0;
        // Monday twice as busy as Tuesday: Monday always, Tuesday half the weeks.
        p.day_weights = [2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let mut w = window(&p, 5);
        let (mut mon, mut tue) = (0, 0);
        for week in 0..4000 {
            mon += usize::from(w.is_active(week * WEEK + 10 * 3600));
            tue += usize::from(w.is_active(week * WEEK + DAY + 10 * 3600));
        }
        assert_eq!(mon, 4000);
        assert!((tue as f64 / 4000.0 - 0.5).abs() < 0.03, "{tue}");
        let never = SchlagkampParams {
            activity_ratio: 0.0,
            ..SchlagkampParams::artificial()
        };
        assert_eq!(window(&never, 1).next_opening(0), Time::MAX);
    }

    #[test]
    fn jobs_follow_the_profile_and_fit_the_machine() {
        let p = SchlagkampParams::artificial();
        let mut rng = Pcg64::seed_from_u64(9);
        let n = 40_000;
        let jobs: Vec<(u32, Time)> = (0..n)
            .map(|_| draw_job(&p.sizes, 1024, RuntimeDraw::Truncated, &mut rng))
            .collect();
        let share = |size: u32| jobs.iter().filter(|j| j.0 == size).count() as f64 / n as f64;
        assert!((share(64) - 0.3).abs() < 0.01);
        assert_eq!(share(1) + share(2), 0.0);
        // 1024-processor jobs: N(4 h, 2 h) truncated at 0, whose mean is
        // mu + sigma phi(2) / Phi(2) = 14400 + 7200 * 0.05399 / 0.97725 = 14797.8 s.
        let long: Vec<f64> = jobs
            .iter()
            .filter(|j| j.0 == 1024)
            .map(|j| j.1 as f64)
            .collect();
        let mean = long.iter().sum::<f64>() / long.len() as f64;
        assert!((mean - 14_797.8).abs() < 200.0, "{mean}");
        assert!(jobs.iter().all(|j| j.1 >= 1));
        // On 128 processors, the larger sizes become 128.
        let small: Vec<u32> = (0..2000)
            .map(|_| draw_job(&p.sizes, 128, RuntimeDraw::Truncated, &mut rng).0)
            .collect();
        assert!(small.iter().all(|&s| s <= 128));
        assert!(small.iter().filter(|&&s| s == 128).count() > 2000 * 3 / 10);
    }

    #[test]
    fn clamped_runtimes_put_the_normals_negative_tail_on_1_s() {
        let p = SchlagkampParams::artificial();
        let n = 100_000;
        let ones = |draw: RuntimeDraw, seed: u64| {
            let mut rng = Pcg64::seed_from_u64(seed);
            let jobs: Vec<(u32, Time)> = (0..n)
                .map(|_| draw_job(&p.sizes, 1024, draw, &mut rng))
                .collect();
            assert!(jobs.iter().all(|j| j.1 >= 1));
            jobs.iter().filter(|j| j.1 == 1).count() as f64 / n as f64
        };
        // sd = mean / 2 for every size: P(X < 1 s) is about Phi(-2) = 2.28 % of all jobs.
        let clamped = ones(RuntimeDraw::Clamped, 4);
        assert!((clamped - 0.0228).abs() < 0.002, "{clamped}");
        // Truncated, 1 s jobs are the density near 0 only: about 0.03 % (4-processor jobs).
        let truncated = ones(RuntimeDraw::Truncated, 4);
        assert!(truncated < 0.001, "{truncated}");
        // The same draws: the sizes agree job by job.
        let sizes = |draw| {
            let mut rng = Pcg64::seed_from_u64(8);
            (0..1000)
                .map(|_| draw_job(&p.sizes, 1024, draw, &mut rng).0)
                .collect::<Vec<_>>()
        };
        assert_eq!(sizes(RuntimeDraw::Clamped), sizes(RuntimeDraw::Truncated));
    }

    #[test]
    fn daily_activity_draws_keep_the_expected_days_without_weekly_correlation() {
        let mut p = SchlagkampParams::artificial();
        p.activity_draws = ActivityDraws::Day;
        let mut w = window(&p, 3);
        let (mut days, mut mixed) = (0, 0);
        for week in 0..2000 {
            let worked: Vec<bool> = (0..7)
                .map(|d| w.is_active(week * WEEK + d * DAY + 10 * 3600))
                .collect();
            assert!(!worked[5] && !worked[6]);
            days += worked.iter().filter(|&&x| x).count();
            mixed += usize::from(worked[..5].iter().any(|&x| x != worked[0]));
        }
        // p_a p_d / max p = 0.5 on each weekday, independently.
        assert!((days as f64 / 10_000.0 - 0.5).abs() < 0.02, "{days}");
        assert!(mixed > 1800, "{mixed}");
    }

    #[test]
    fn think_time_is_linear_in_the_response() {
        let p = SchlagkampParams::artificial();
        assert_eq!(p.think_time(0), 1779);
        assert_eq!(p.think_time(1000), 1779 + 483); // 0.4826 * 1000 = 482.6
    }

    #[test]
    fn the_response_known_at_submit_is_one_job_behind() {
        let mut known = Responses::new(ThinkResponse::KnownAtSubmit);
        let mut just = Responses::new(ThinkResponse::JustEnded);
        // Job 1: nothing had ended at its submission, so r = 0 (tt = b) after it.
        for r in [&mut known, &mut just] {
            r.submitted();
            r.ended(500);
        }
        assert_eq!((known.for_think(500), just.for_think(500)), (0, 500));
        // Job 2 (response 9000 s) follows: after it, r is job 1's 500 s.
        for r in [&mut known, &mut just] {
            r.submitted();
            r.ended(9000);
        }
        assert_eq!((known.for_think(9000), just.for_think(9000)), (500, 9000));
        // Job 3: job 2's response, also if job 2 ended outside working hours (its end is
        // recorded whether or not a think time followed it).
        known.submitted();
        known.ended(40);
        assert_eq!(known.for_think(40), 9000);
        assert_eq!(
            SchlagkampParams::artificial().think_response,
            ThinkResponse::JustEnded
        );
    }

    #[test]
    fn a_think_response_key_is_checked_by_name() {
        let p = |extra: &str| group(extra).map(|_| ());
        assert!(p("think_response = \"known_at_submit\"").is_ok());
        assert!(p("think_response = \"just_ended\"").is_ok());
        let err = p("think_response = \"previous\"").unwrap_err();
        assert!(
            err.contains("think_response")
                && err.contains("just_ended")
                && err.contains("known_at_submit"),
            "{err}"
        );
    }

    #[test]
    fn a_carried_think_time_counts_only_working_hours() {
        let mut p = SchlagkampParams::artificial();
        p.activity_ratio = 1.0;
        let mut w = window(&p, 3);
        let h = 3600;
        const DAY: Time = crate::cycle::DAY;
        // Monday 16:00 + 3 h of thinking: 1 h on Monday, 2 h from Tuesday 09:00.
        assert_eq!(w.after_working_time(16 * h, 3 * h), DAY + 11 * h);
        // Within the day: plain addition.
        assert_eq!(w.after_working_time(10 * h, 2 * h), 12 * h);
        // Friday 16:30 + 1 h: 30 min on Friday, 30 min on Monday.
        assert_eq!(
            w.after_working_time(4 * DAY + 16 * h + 1800, h),
            7 * DAY + 9 * h + 1800
        );
        // Ending off hours: from the next opening.
        assert_eq!(w.after_working_time(20 * h, 600), DAY + 9 * h + 600);
    }
}
