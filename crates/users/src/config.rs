//! A user group as the population file describes it, and its validated parameters.

use serde::{Deserialize, Serialize};

use crate::Time;
use crate::cycle::parse_clock;
use crate::estimate::{self, ModalParams};

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

/// Where a job's runtime estimate (its kill time) comes from (`estimates` in a group).
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
    /// The random f-model: uniform in [r, (f + 1) r] (`estimate_f`), truncated at
    /// `estimate_max` (Tsafrir's thesis, sections 3.8 and 5.2).
    F,
    /// The deterministic f-model: (f + 1) r, truncated at `estimate_max`.
    #[serde(rename = "f-deterministic")]
    FDeterministic,
    /// The Phi-model (thesis, section 1.2.2): the runtime with probability `estimate_phi`, else
    /// r / u (u uniform in (0, 1]; times 10 below 90 s), truncated at `estimate_max`.
    Phi,
    /// Tsafrir's modal model (thesis, chapter 5) with E_max = `estimate_max`, optionally its share
    /// (`estimate_max_share`) and known modes (`estimate_modes`), for `estimate_jobs` jobs.
    Modal,
}

/// Which user model a group follows (`kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum UserKind {
    /// Shmueli & Feitelson (paper 000, section III-B): sessions of batches, a continue
    /// probability after each batch, day/night and weekday/weekend activity cycles, job
    /// attributes from the fitted model.
    #[default]
    Shmueli,
    /// Schlagkamp (paper 004, section 2): one job at a time, a think time that is a constant or
    /// a linear function of the last response, weekly activity, day-of-week weights and fixed
    /// working hours, sizes over powers of two with normal runtimes per size.
    Schlagkamp,
}

/// Schlagkamp's think-time functions (paper 004, section 3.1 and Fig. 6): tt = m r + b.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
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
    /// Where runtime estimates come from (default `fitted`; `exact` for `schlagkamp` groups).
    #[serde(default)]
    pub estimates: Option<Estimates>,
    /// The f of the f-models (`estimates = "f"` or `"f-deterministic"`).
    #[serde(default)]
    pub estimate_f: Option<f64>,
    /// The Phi of the Phi-model.
    #[serde(default)]
    pub estimate_phi: Option<f64>,
    /// E_max, seconds: the largest estimate users may give (f, Phi and modal models; default
    /// 64800, 18 h, "typically around 18h" in Tsafrir's thesis, section 5.6).
    #[serde(default)]
    pub estimate_max: Option<i64>,
    /// The modal model's share of jobs that use E_max (default: the model's own, about 21 %).
    #[serde(default)]
    pub estimate_max_share: Option<f64>,
    /// The modal model's known modes: `[[seconds, share], ...]`.
    #[serde(default)]
    pub estimate_modes: Option<Vec<(i64, f64)>>,
    /// The modal model's N, the workload size it sets the number of distinct estimates by
    /// (default 100000).
    #[serde(default)]
    pub estimate_jobs: Option<u64>,
    /// The user model: `shmueli` (default) or `schlagkamp`.
    #[serde(default)]
    pub kind: UserKind,
    /// Schlagkamp: the probability that a user is active in a given week (p_a; default 0.5).
    #[serde(default)]
    pub activity_ratio: Option<f64>,
    /// Schlagkamp: how the user's work spreads over Monday..Sunday (p_d, 7 values summing to 1;
    /// default 0.2 on each weekday).
    #[serde(default)]
    pub day_weights: Option<Vec<f64>>,
    /// Schlagkamp: start of the working day, `HH:MM` (t_b; default 09:00).
    #[serde(default)]
    pub work_start: Option<String>,
    /// Schlagkamp: end of the working day, `HH:MM` (t_e; default 17:00).
    #[serde(default)]
    pub work_end: Option<String>,
    /// Schlagkamp: the job sizes (processors; default 1, 2, 4, ..., 1024).
    #[serde(default)]
    pub job_sizes: Option<Vec<u32>>,
    /// Schlagkamp: the probability of each size (summing to 1; default Fig. 6's).
    #[serde(default)]
    pub size_probabilities: Option<Vec<f64>>,
    /// Schlagkamp: the mean runtime of each size, seconds (default Fig. 6's).
    #[serde(default)]
    pub runtime_means: Option<Vec<f64>>,
    /// Schlagkamp: the standard deviation of each size's runtime, seconds (default Fig. 6's).
    #[serde(default)]
    pub runtime_sds: Option<Vec<f64>>,
    /// Schlagkamp: the think-time function (default `lin`).
    #[serde(default)]
    pub think: Option<ThinkPreset>,
    /// Schlagkamp: m of tt = m r + b (overrides `think`'s).
    #[serde(default)]
    pub think_slope: Option<f64>,
    /// Schlagkamp: b of tt = m r + b, seconds (overrides `think`'s).
    #[serde(default)]
    pub think_constant: Option<f64>,
    /// Memory-bandwidth demand mix (paper 001): the shares of high, medium and low demand jobs,
    /// summing to 1 (`[0.8, 0.1, 0.1]` is the paper's HIGH). Needs a machine of nodes
    /// (`site.node_processors`). Default: no demand.
    #[serde(default)]
    pub bandwidth_mix: Option<Vec<f64>>,
    /// Memory bandwidth a process of a low, medium and high demand job uses, MB/s (default
    /// `[500, 1000, 2000]`).
    #[serde(default)]
    pub bandwidth_demands: Option<Vec<u32>>,
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
#[derive(Debug, Clone, PartialEq)]
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
    pub estimates: EstimateSpec,
    /// The user model and, for Schlagkamp's, its parameters. The fields above are the Shmueli
    /// model's; a Schlagkamp group ignores them but `estimates`.
    pub kind: KindParams,
    /// The jobs' memory-bandwidth demands, if the group has them.
    pub bandwidth: Option<BandwidthMix>,
}

/// How a group's jobs use memory bandwidth (paper 001, section V-A): each job is high, medium or
/// low demand with these probabilities, and each of its processes uses that class's bandwidth.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BandwidthMix {
    /// Probabilities of high, medium and low demand.
    pub shares: [f64; 3],
    /// MB/s per process of low, medium and high demand jobs.
    pub demands: [u32; 3],
}

impl BandwidthMix {
    /// Checks the shares (high, medium, low: probabilities summing to 1); `demands` are MB/s per
    /// process of low, medium and high demand jobs.
    pub fn new(shares: [f64; 3], demands: [u32; 3]) -> Result<BandwidthMix, String> {
        check_distribution(&shares)?;
        Ok(BandwidthMix { shares, demands })
    }

    /// The first demand above a node's `capacity` (MB/s), if any: a process cannot use more than
    /// its node has.
    pub fn above_capacity(&self, capacity: f64) -> Option<u32> {
        self.demands
            .iter()
            .copied()
            .find(|&d| f64::from(d) > capacity)
    }

    /// The demand (MB/s per process) for a uniform draw `u` in [0, 1).
    pub fn demand(&self, u: f64) -> u32 {
        let [high, medium, _] = self.shares;
        if u < high {
            self.demands[2]
        } else if u < high + medium {
            self.demands[1]
        } else {
            self.demands[0]
        }
    }
}

/// A checked estimate model of a group (see [`Estimates`]); the modal model's modes are drawn
/// when the population is built, from the run's seed.
#[derive(Debug, Clone, PartialEq)]
pub enum EstimateSpec {
    /// From the fitted model.
    Fitted,
    /// Any other model.
    Model(EstimateModelSpec),
}

/// The parameters of a non-fitted estimate model.
#[derive(Debug, Clone, PartialEq)]
pub enum EstimateModelSpec {
    /// The runtime.
    Exact,
    /// The f-model, truncated at `max`.
    F {
        /// f >= 0.
        f: f64,
        /// Deterministic or random.
        deterministic: bool,
        /// E_max, seconds.
        max: Time,
    },
    /// The Phi-model.
    Phi {
        /// Phi in [0, 1].
        phi: f64,
        /// E_max, seconds.
        max: Time,
    },
    /// The modal model.
    Modal(ModalParams),
}

impl EstimateModelSpec {
    /// The model; the modal model's modes are drawn from `rng`.
    pub fn build<R: rand::Rng + ?Sized>(
        &self,
        rng: &mut R,
    ) -> Result<estimate::EstimateModel, estimate::EstimateError> {
        use estimate::EstimateModel;
        Ok(match self {
            EstimateModelSpec::Exact => EstimateModel::Exact,
            &EstimateModelSpec::F {
                f,
                deterministic,
                max,
            } => EstimateModel::F {
                f,
                deterministic,
                max: Some(max),
            },
            &EstimateModelSpec::Phi { phi, max } => EstimateModel::Phi { phi, max },
            EstimateModelSpec::Modal(params) => {
                EstimateModel::Modal(estimate::Modes::generate(params, rng)?)
            }
        })
    }
}

/// The user model of a group with its own parameters.
#[derive(Debug, Clone, PartialEq)]
pub enum KindParams {
    /// Shmueli & Feitelson's (the fields of [`GroupParams`]).
    Shmueli,
    /// Schlagkamp's.
    Schlagkamp(SchlagkampParams),
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
        }
    }

    /// The think time after a response of `response` seconds: m r + b, whole seconds.
    pub fn think_time(&self, response: Time) -> Time {
        (self.think_slope * response.max(0) as f64 + self.think_constant).round() as Time
    }
}

impl GroupConfig {
    /// A group of `users` users with every parameter at its default (the paper's values).
    pub fn new(name: &str, users: u32) -> GroupConfig {
        GroupConfig {
            name: name.to_string(),
            users,
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
            estimates: None,
            estimate_f: None,
            estimate_phi: None,
            estimate_max: None,
            estimate_max_share: None,
            estimate_modes: None,
            estimate_jobs: None,
            kind: UserKind::Shmueli,
            activity_ratio: None,
            day_weights: None,
            work_start: None,
            work_end: None,
            job_sizes: None,
            size_probabilities: None,
            runtime_means: None,
            runtime_sds: None,
            think: None,
            think_slope: None,
            think_constant: None,
            bandwidth_mix: None,
            bandwidth_demands: None,
        }
    }

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
        let kind = match self.kind {
            UserKind::Shmueli => {
                self.only_for(UserKind::Schlagkamp, &error)?;
                KindParams::Shmueli
            }
            UserKind::Schlagkamp => {
                self.only_for(UserKind::Shmueli, &error)?;
                KindParams::Schlagkamp(self.schlagkamp(&error)?)
            }
        };
        let estimates = self.estimate_spec(&error)?;
        let bandwidth = match &self.bandwidth_mix {
            None => {
                if let Some(d) = &self.bandwidth_demands {
                    return Err(error(
                        "bandwidth_demands",
                        format!("{d:?}"),
                        "needs bandwidth_mix",
                    ));
                }
                None
            }
            Some(mix) => {
                let text = format!("{mix:?}");
                let shares: [f64; 3] = mix.as_slice().try_into().map_err(|_| {
                    error(
                        "bandwidth_mix",
                        text.clone(),
                        "give the shares of high, medium and low demand jobs",
                    )
                })?;
                let demands = match &self.bandwidth_demands {
                    None => [500, 1000, 2000],
                    Some(d) => d.as_slice().try_into().map_err(|_| {
                        error(
                            "bandwidth_demands",
                            format!("{d:?}"),
                            "give the MB/s per process of low, medium and high demand jobs",
                        )
                    })?,
                };
                Some(
                    BandwidthMix::new(shares, demands)
                        .map_err(|p| error("bandwidth_mix", text, &p))?,
                )
            }
        };
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
            estimates,
            kind,
            bandwidth,
        })
    }

    /// Refuses the keys that belong to the `other` user model only.
    fn only_for(
        &self,
        other: UserKind,
        error: &dyn Fn(&str, String, &str) -> ConfigError,
    ) -> Result<(), ConfigError> {
        let problem = match other {
            UserKind::Shmueli => "applies to kind = \"shmueli\" groups only",
            UserKind::Schlagkamp => "applies to kind = \"schlagkamp\" groups only",
        };
        let given: Vec<(&str, String)> = match other {
            UserKind::Schlagkamp => [
                ("activity_ratio", self.activity_ratio.map(|v| v.to_string())),
                (
                    "day_weights",
                    self.day_weights.as_ref().map(|v| format!("{v:?}")),
                ),
                ("work_start", self.work_start.clone()),
                ("work_end", self.work_end.clone()),
                (
                    "job_sizes",
                    self.job_sizes.as_ref().map(|v| format!("{v:?}")),
                ),
                (
                    "size_probabilities",
                    self.size_probabilities.as_ref().map(|v| format!("{v:?}")),
                ),
                (
                    "runtime_means",
                    self.runtime_means.as_ref().map(|v| format!("{v:?}")),
                ),
                (
                    "runtime_sds",
                    self.runtime_sds.as_ref().map(|v| format!("{v:?}")),
                ),
                ("think", self.think.map(|v| format!("{v:?}"))),
                ("think_slope", self.think_slope.map(|v| v.to_string())),
                ("think_constant", self.think_constant.map(|v| v.to_string())),
            ]
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, v)))
            .collect(),
            // The Shmueli keys have defaults; a value other than the default was given.
            UserKind::Shmueli => [
                (
                    "continue_a",
                    self.continue_a != default_continue_a(),
                    self.continue_a.to_string(),
                ),
                (
                    "continue_b",
                    self.continue_b != default_continue_b(),
                    self.continue_b.to_string(),
                ),
                (
                    "day_probability",
                    self.day_probability != default_day_probability(),
                    self.day_probability.to_string(),
                ),
                (
                    "weekday_probability",
                    self.weekday_probability != default_weekday_probability(),
                    self.weekday_probability.to_string(),
                ),
                (
                    "day_start",
                    self.day_start != default_day_start(),
                    self.day_start.clone(),
                ),
                (
                    "day_end",
                    self.day_end != default_day_end(),
                    self.day_end.clone(),
                ),
                (
                    "shift_minutes",
                    self.shift_minutes != default_shift_minutes(),
                    self.shift_minutes.to_string(),
                ),
                (
                    "repeat_jobs",
                    !self.repeat_jobs,
                    self.repeat_jobs.to_string(),
                ),
                (
                    "batch_gaps",
                    self.batch_gaps != BatchGaps::None,
                    format!("{:?}", self.batch_gaps),
                ),
                (
                    "models",
                    self.models != default_models(),
                    self.models.clone(),
                ),
            ]
            .into_iter()
            .filter(|(_, differs, _)| *differs)
            .map(|(k, _, v)| (k, v))
            .collect(),
        };
        match given.into_iter().next() {
            Some((key, value)) => Err(error(key, value, problem)),
            None => Ok(()),
        }
    }

    /// Schlagkamp's parameters: Fig. 6's artificial user, with the keys given replacing its
    /// values.
    fn schlagkamp(
        &self,
        error: &dyn Fn(&str, String, &str) -> ConfigError,
    ) -> Result<SchlagkampParams, ConfigError> {
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
        Ok(p)
    }

    /// The estimate model and its keys; keys of other models are refused.
    fn estimate_spec(
        &self,
        error: &dyn Fn(&str, String, &str) -> ConfigError,
    ) -> Result<EstimateSpec, ConfigError> {
        let model = self.estimates.unwrap_or(match self.kind {
            UserKind::Shmueli => Estimates::Fitted,
            UserKind::Schlagkamp => Estimates::Exact,
        });
        let uses = |key: &str| match key {
            "estimate_f" => matches!(model, Estimates::F | Estimates::FDeterministic),
            "estimate_phi" => model == Estimates::Phi,
            "estimate_max" => {
                matches!(
                    model,
                    Estimates::F | Estimates::FDeterministic | Estimates::Phi | Estimates::Modal
                )
            }
            _ => model == Estimates::Modal,
        };
        let given = [
            ("estimate_f", self.estimate_f.map(|v| v.to_string())),
            ("estimate_phi", self.estimate_phi.map(|v| v.to_string())),
            ("estimate_max", self.estimate_max.map(|v| v.to_string())),
            (
                "estimate_max_share",
                self.estimate_max_share.map(|v| v.to_string()),
            ),
            (
                "estimate_modes",
                self.estimate_modes.as_ref().map(|v| format!("{v:?}")),
            ),
            ("estimate_jobs", self.estimate_jobs.map(|v| v.to_string())),
        ];
        for (key, value) in given {
            if let Some(value) = value.filter(|_| !uses(key)) {
                return Err(error(
                    key,
                    value,
                    &format!("does not apply to estimates = {:?}", model_name(model)),
                ));
            }
        }
        let max = self.estimate_max.unwrap_or(DEFAULT_ESTIMATE_MAX);
        if max < 60 {
            return Err(error(
                "estimate_max",
                max.to_string(),
                "E_max must be at least 60 seconds",
            ));
        }
        let required = |key: &str, v: Option<f64>| {
            v.ok_or_else(|| {
                error(
                    "estimates",
                    format!("{:?}", model_name(model)),
                    &format!("needs {key}"),
                )
            })
        };
        let spec = match model {
            Estimates::Fitted => return Ok(EstimateSpec::Fitted),
            Estimates::Exact => EstimateModelSpec::Exact,
            Estimates::F | Estimates::FDeterministic => {
                let f = required("estimate_f", self.estimate_f)?;
                let f = estimate::check_f(f)
                    .map_err(|e| error("estimate_f", f.to_string(), &e.to_string()))?;
                EstimateModelSpec::F {
                    f,
                    deterministic: model == Estimates::FDeterministic,
                    max,
                }
            }
            Estimates::Phi => {
                let phi = required("estimate_phi", self.estimate_phi)?;
                let phi = estimate::check_phi(phi)
                    .map_err(|e| error("estimate_phi", phi.to_string(), &e.to_string()))?;
                EstimateModelSpec::Phi { phi, max }
            }
            Estimates::Modal => {
                let mut given: Vec<(Time, f64)> = self.estimate_modes.clone().unwrap_or_default();
                if let Some(share) = self.estimate_max_share {
                    if given.iter().any(|&(t, _)| t == max) {
                        return Err(error(
                            "estimate_max_share",
                            share.to_string(),
                            "E_max's share is also given in estimate_modes",
                        ));
                    }
                    given.push((max, share));
                }
                let params = ModalParams {
                    jobs: self.estimate_jobs.unwrap_or(100_000) as usize,
                    max,
                    given,
                };
                // Checked now (the modes are drawn when the population is built).
                estimate::Modes::generate(&params, &mut rand_pcg::Pcg64::new(0, 1)).map_err(
                    |e| {
                        error(
                            "estimate_modes",
                            format!("{:?}", self.estimate_modes.clone().unwrap_or_default()),
                            &e.to_string(),
                        )
                    },
                )?;
                EstimateModelSpec::Modal(params)
            }
        };
        Ok(EstimateSpec::Model(spec))
    }
}

/// E_max when a group gives none: 18 hours (Tsafrir's thesis, section 5.6: "typically around
/// 18h").
pub const DEFAULT_ESTIMATE_MAX: Time = 18 * 3600;

/// The name of an estimate model as the population file writes it.
fn model_name(model: Estimates) -> &'static str {
    match model {
        Estimates::Fitted => "fitted",
        Estimates::Exact => "exact",
        Estimates::F => "f",
        Estimates::FDeterministic => "f-deterministic",
        Estimates::Phi => "phi",
        Estimates::Modal => "modal",
    }
}

/// Probabilities: each in [0, 1], summing to 1 (within 1e-6).
fn check_distribution(values: &[f64]) -> Result<(), String> {
    if let Some(bad) = values.iter().find(|v| !(0.0..=1.0).contains(*v)) {
        return Err(format!("{bad} is not a probability in [0, 1]"));
    }
    let sum: f64 = values.iter().sum();
    if (sum - 1.0).abs() > 1e-6 {
        // Rounded, so that 0.8 + 0.8 + 0.1 reads 1.7.
        let shown = (sum * 1e6).round() / 1e6;
        return Err(format!("the probabilities sum to {shown}, not 1"));
    }
    Ok(())
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
        assert_eq!(p.estimates, EstimateSpec::Fitted);
        assert_eq!(p.kind, KindParams::Shmueli);
        assert_eq!(group("").unwrap(), GroupConfig::new("g", 10));
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

    fn error_of(extra: &str) -> String {
        group(extra)
            .unwrap()
            .params("groups[1]")
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn schlagkamp_groups_default_to_fig_6_and_check_their_keys() {
        let p = group("kind = \"schlagkamp\"").unwrap().params("g").unwrap();
        assert_eq!(
            p.kind,
            KindParams::Schlagkamp(SchlagkampParams::artificial())
        );
        assert_eq!(p.estimates, EstimateSpec::Model(EstimateModelSpec::Exact));
        let p = group("kind = \"schlagkamp\"\nthink = \"c120\"\nthink_constant = 600")
            .unwrap()
            .params("g")
            .unwrap();
        let KindParams::Schlagkamp(k) = p.kind else {
            panic!("not schlagkamp")
        };
        assert_eq!((k.think_slope, k.think_constant), (0.0, 600.0));
        for (extra, key, words) in [
            (
                "day_weights = [0.3, 0.3, 0.3, 0.3, 0.0, 0.0, 0.0]",
                "groups[1].day_weights",
                "sum to 1.2",
            ),
            ("day_weights = [1.0]", "groups[1].day_weights", "7 weights"),
            ("think_slope = -0.5", "groups[1].think_slope", ">= 0"),
            ("activity_ratio = 2.0", "groups[1].activity_ratio", "[0, 1]"),
            (
                "job_sizes = [1, 2]",
                "groups[1].size_probabilities",
                "each of the 2 job_sizes",
            ),
            (
                "job_sizes = [1, 2]\nsize_probabilities = [0.5, 0.5]\nruntime_means = [10.0, -1.0]\nruntime_sds = [1.0, 1.0]",
                "groups[1].runtime_means",
                ">= 0",
            ),
            ("continue_a = 0.5", "groups[1].continue_a", "shmueli"),
            (
                "work_start = \"18:00\"",
                "groups[1].work_end",
                "after it starts",
            ),
        ] {
            let err = error_of(&format!("kind = \"schlagkamp\"\n{extra}"));
            assert!(
                err.starts_with(key) && err.contains(words),
                "{extra}: {err}"
            );
        }
        let err = error_of("think = \"lin\"");
        assert!(
            err.starts_with("groups[1].think ") && err.contains("schlagkamp"),
            "{err}"
        );
    }

    #[test]
    fn estimate_models_need_their_keys_and_only_theirs() {
        let p = group("estimates = \"f\"\nestimate_f = 3.0\nestimate_max = 7200")
            .unwrap()
            .params("g")
            .unwrap();
        assert_eq!(
            p.estimates,
            EstimateSpec::Model(EstimateModelSpec::F {
                f: 3.0,
                deterministic: false,
                max: 7200
            })
        );
        let p = group("estimates = \"modal\"\nestimate_max_share = 0.3")
            .unwrap()
            .params("g")
            .unwrap();
        let EstimateSpec::Model(EstimateModelSpec::Modal(m)) = p.estimates else {
            panic!("not modal")
        };
        assert_eq!(
            (m.max, m.given.clone()),
            (DEFAULT_ESTIMATE_MAX, vec![(64_800, 0.3)])
        );
        for (extra, key, words) in [
            (
                "estimates = \"f\"",
                "groups[1].estimates",
                "needs estimate_f",
            ),
            (
                "estimates = \"f\"\nestimate_f = -2.0",
                "groups[1].estimate_f",
                ">= 0",
            ),
            (
                "estimates = \"phi\"\nestimate_phi = 1.5",
                "groups[1].estimate_phi",
                "[0, 1]",
            ),
            (
                "estimates = \"modal\"\nestimate_f = 1.0",
                "groups[1].estimate_f",
                "does not apply",
            ),
            (
                "estimate_max = 7200",
                "groups[1].estimate_max",
                "does not apply",
            ),
            (
                "estimates = \"modal\"\nestimate_modes = [[600, 0.7], [1200, 0.6]]",
                "groups[1].estimate_modes",
                "at most 1",
            ),
            (
                "estimates = \"modal\"\nestimate_max = 3600\nestimate_modes = [[7200, 0.1]]",
                "groups[1].estimate_modes",
                "outside",
            ),
            (
                "estimates = \"phi\"\nestimate_phi = 0.1\nestimate_max = 10",
                "groups[1].estimate_max",
                "at least 60",
            ),
        ] {
            let err = error_of(extra);
            assert!(
                err.starts_with(key) && err.contains(words),
                "{extra}: {err}"
            );
        }
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
