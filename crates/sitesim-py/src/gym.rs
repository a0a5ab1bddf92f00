//! The Gymnasium environment's native side (`sitesim.gym` wraps it): a source of episodes read
//! once ([`GymSource`]), one environment ([`GymCore`]) and N environments stepped in one call
//! with the GIL released ([`GymVector`]). Observations, masks, rewards and flags are written
//! into NumPy arrays the Python side allocated, so a step allocates nothing here.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use config::ScenarioError;
use config::options::{self, OptionSpec};
use gym::{
    ActionMode, Actions, Env, EnvConfig, EnvState, EpisodeStart, EpisodeSummary, GymError,
    InvalidActionRule, RewardKind, RewardMode, Source, Until, VecEnv, VecOutput,
};
use numpy::{PyReadonlyArray1, PyReadwriteArray1};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};

/// A [`GymError`] as a Python exception: `ValueError` for bad keywords and actions (the Python
/// side raises `sitesim.gym.InvalidAction` for the latter, whose message starts with "invalid
/// action"), `RuntimeError` starting with "reset needed" when a step needs a reset (raised as
/// `gymnasium.error.ResetNeeded`), and the scenario layer's errors as the other functions raise
/// them (`FileNotFoundError` for a missing trace).
fn gym_error(error: GymError) -> PyErr {
    match error {
        GymError::Scenario(e) => crate::scenario_error(e),
        GymError::ResetNeeded(m) => PyRuntimeError::new_err(format!("reset needed: {m}")),
        e @ (GymError::Invalid(_) | GymError::InvalidAction(_)) => {
            PyValueError::new_err(e.to_string())
        }
        e @ GymError::Engine(_) => PyRuntimeError::new_err(e.to_string()),
    }
}

/// Where episodes come from: a trace (`kind` "replay" or "feedback", `trace` its path, the
/// keyword arguments `sitesim replay`'s options) or a site (`kind` "site", `config` or
/// `config_text`, the keyword arguments `sitesim run`'s options), prepared once and shared by
/// every environment made from it.
#[pyclass(frozen, module = "sitesim._sitesim")]
pub struct GymSource {
    source: Source,
}

#[pymethods]
impl GymSource {
    #[new]
    #[pyo3(signature = (kind, trace=None, config=None, config_text=None, **kwargs))]
    fn new(
        py: Python<'_>,
        kind: &str,
        trace: Option<PathBuf>,
        config: Option<PathBuf>,
        config_text: Option<String>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<GymSource> {
        let source = match kind {
            "replay" | "feedback" => {
                let table: Vec<&'static OptionSpec> = options::REPLAY.iter().collect();
                let mut values = crate::option_values(&table, kwargs, &["trace"])?;
                let trace = trace.ok_or_else(|| PyValueError::new_err("trace: give a trace"))?;
                if let Some(option) = options::REPLAY.iter().find(|o| o.key == "trace") {
                    values.insert(
                        0,
                        (option, toml::Value::String(trace.display().to_string())),
                    );
                }
                crate::finalize::detach(py, || {
                    let (spec, replay) = options::replay(&values).map_err(GymError::from)?;
                    if kind == "replay" {
                        Source::replay(spec, &replay)
                    } else {
                        Source::feedback(spec, &replay)
                    }
                })
                .map_err(gym_error)?
            }
            "site" => {
                let table: Vec<&'static OptionSpec> = options::run_options().collect();
                let values = crate::option_values(&table, kwargs, &[])?;
                crate::finalize::detach(py, || {
                    let site_source = match (&config, &config_text) {
                        (Some(path), _) => options::SiteSource::File(path),
                        (None, Some(text)) => options::SiteSource::Text(text),
                        (None, None) => options::SiteSource::Default,
                    };
                    let site = options::site(site_source, &values)?;
                    let model = Arc::new(config::models::default_model().map_err(|e| {
                        ScenarioError::Invalid(format!(
                            "the embedded default model is invalid: {e}"
                        ))
                    })?);
                    Ok::<_, ScenarioError>((site, model))
                })
                .map_err(crate::scenario_error)
                .and_then(|(site, model)| Source::site(site, model).map_err(gym_error))?
            }
            _ => {
                return Err(PyValueError::new_err(format!(
                    "kind={kind:?}: expected 'replay', 'feedback' or 'site'"
                )));
            }
        };
        Ok(GymSource { source })
    }

    /// Processors in the machine.
    #[getter]
    fn processors(&self) -> u32 {
        self.source.processors()
    }

    /// Jobs in the trace (0 for a site).
    #[getter]
    fn jobs(&self) -> usize {
        self.source.jobs()
    }

    /// The scheduler whose rule runs the episodes.
    #[getter]
    fn scheduler(&self) -> String {
        self.source.scheduler().label()
    }
}

/// The environment's own keywords, checked once (messages name the keyword), for
/// [`GymCore`] and [`GymVector`].
#[pyclass(frozen, module = "sitesim._sitesim")]
pub struct GymConfig {
    config: EnvConfig,
}

#[pymethods]
impl GymConfig {
    #[new]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (action_mode, window, reward, reward_mode, relative_to, invalid_action, episode_jobs, warm_jobs, start_range, warm_days, episode_days, until))]
    fn new(
        action_mode: &str,
        window: usize,
        reward: &str,
        reward_mode: &str,
        relative_to: Option<&str>,
        invalid_action: &str,
        episode_jobs: Option<usize>,
        warm_jobs: usize,
        start_range: (f64, f64),
        warm_days: u32,
        episode_days: u32,
        until: &str,
    ) -> PyResult<GymConfig> {
        let bad = |key: &str, value: &str, expected: &str| {
            gym_error(GymError::Invalid(format!(
                "{key}={value:?}: expected {expected}"
            )))
        };
        let config =
            EnvConfig {
                mode: match action_mode {
                    "pick" => ActionMode::Pick,
                    "score" => ActionMode::Score,
                    other => return Err(bad("action_mode", other, "'pick' or 'score'")),
                },
                window,
                reward: RewardKind::named(reward).map_err(gym_error)?,
                reward_mode: match reward_mode {
                    "dense" => RewardMode::Dense,
                    "episodic" => RewardMode::Episodic,
                    other => return Err(bad("reward_mode", other, "'dense' or 'episodic'")),
                },
                relative_to: match relative_to {
                    None => None,
                    Some(name) => Some(::schedulers::REGISTRY.from_label(name).map_err(|e| {
                        PyValueError::new_err(format!("relative_to={name:?}: {e}"))
                    })?),
                },
                invalid_action: match invalid_action {
                    "raise" => InvalidActionRule::Raise,
                    "wait" => InvalidActionRule::Wait,
                    other => return Err(bad("invalid_action", other, "'raise' or 'wait'")),
                },
                episode_jobs,
                warm_jobs,
                start_range,
                warm_days,
                episode_days,
                until: match until {
                    "horizon" => Until::Horizon,
                    "drained" => Until::Drained,
                    other => return Err(bad("until", other, "'horizon' or 'drained'")),
                },
            };
        Ok(GymConfig { config })
    }
}

/// An episode's measures as a dict: its counts, and each catalogue measure it measures
/// ([`EpisodeSummary::MEASURES`], and the rewarded one if it is another) under the catalogue's
/// name, `None` where it is undefined (no
/// job started, no session), so that two dicts of the same episode compare equal.
fn summary_dict<'py>(py: Python<'py>, s: &EpisodeSummary) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("jobs", s.jobs)?;
    d.set_item("queue_job_hours", s.queue_job_hours)?;
    d.set_item("busy_machine_hours", s.busy_machine_hours)?;
    d.set_item("hours", s.hours)?;
    d.set_item("submitted", s.submitted)?;
    for name in EpisodeSummary::MEASURES {
        match name {
            "sessions" => d.set_item(name, s.sessions)?,
            _ => d.set_item(name, s.measure(name).filter(|v| v.is_finite()))?,
        }
    }
    // The rewarded measure when it is another of the catalogue's.
    if let Some((name, value)) = s.other {
        d.set_item(name, Some(value).filter(|v| v.is_finite()))?;
    }
    d.set_item("decisions", s.decisions)?;
    d.set_item("start", s.start)?;
    d.set_item("end", s.end)?;
    Ok(d)
}

/// An environment's [`EnvState`] as plain Python values, for pickling: `(rng_seed, site_seed,
/// draws, start)`, `start` None or `(kind, value)` with kind "replay" (the first job),
/// "feedback" (t0, seconds) or "site" (the population's seed).
type StateTuple = (u64, Option<u64>, u64, Option<(String, i128)>);

fn state_tuple(state: EnvState) -> StateTuple {
    let start = state.start.map(|s| match s {
        EpisodeStart::Replay { start } => ("replay".to_string(), start as i128),
        EpisodeStart::Feedback { t0 } => ("feedback".to_string(), i128::from(t0)),
        EpisodeStart::Site { seed } => ("site".to_string(), i128::from(seed)),
    });
    (state.rng_seed, state.site_seed, state.draws, start)
}

fn env_state(tuple: StateTuple) -> PyResult<EnvState> {
    let (rng_seed, site_seed, draws, start) = tuple;
    let bad = |what: &str| PyValueError::new_err(format!("state: {what}"));
    let start = match start {
        None => None,
        Some((kind, value)) => Some(match kind.as_str() {
            "replay" => EpisodeStart::Replay {
                start: usize::try_from(value).map_err(|_| bad("a replay start out of range"))?,
            },
            "feedback" => EpisodeStart::Feedback {
                t0: i64::try_from(value).map_err(|_| bad("a feedback t0 out of range"))?,
            },
            "site" => EpisodeStart::Site {
                seed: u64::try_from(value).map_err(|_| bad("a site seed out of range"))?,
            },
            other => return Err(bad(&format!("unknown episode kind {other:?}"))),
        }),
    };
    Ok(EnvState {
        rng_seed,
        site_seed,
        draws,
        start,
    })
}

fn slice_mut<'a, T: numpy::Element>(
    array: &'a mut PyReadwriteArray1<'_, T>,
    what: &str,
) -> PyResult<&'a mut [T]> {
    array
        .as_slice_mut()
        .map_err(|_| PyValueError::new_err(format!("{what}: a contiguous array is needed")))
}

/// One environment.
#[pyclass(module = "sitesim._sitesim")]
pub struct GymCore {
    /// In a mutex because Python classes must be shareable between threads (an uncontended
    /// lock per call; Python's wrapper steps one env from one thread).
    env: Mutex<Env>,
}

impl GymCore {
    fn env(&self) -> std::sync::MutexGuard<'_, Env> {
        self.env
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl GymCore {
    #[new]
    fn new(source: &GymSource, config: &GymConfig) -> PyResult<GymCore> {
        let env = Env::new(source.source.clone(), config.config.clone()).map_err(gym_error)?;
        Ok(GymCore {
            env: Mutex::new(env),
        })
    }

    /// Floats in an observation.
    #[getter]
    fn obs_size(&self) -> usize {
        self.env().observation_size()
    }

    /// Entries of the action mask.
    #[getter]
    fn mask_size(&self) -> usize {
        self.env().mask_size()
    }

    /// Starts an episode, writing its first observation and mask; `False` when a fixed start's
    /// episode has no decision to make.
    #[pyo3(signature = (seed, start, obs, mask))]
    fn reset(
        &mut self,
        seed: Option<u64>,
        start: Option<i64>,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut mask: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<bool> {
        let obs = slice_mut(&mut obs, "obs")?;
        let mask = slice_mut(&mut mask, "mask")?;
        self.env().reset(seed, start, obs, mask).map_err(gym_error)
    }

    /// Pick mode: (reward, terminated, truncated, masked and taken as a wait).
    fn step_pick(
        &mut self,
        action: i64,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut mask: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<(f64, bool, bool, bool)> {
        let obs = slice_mut(&mut obs, "obs")?;
        let mask = slice_mut(&mut mask, "mask")?;
        self.env().step_pick(action, obs, mask).map_err(gym_error)
    }

    /// Score mode: (reward, terminated, truncated).
    fn step_score(
        &mut self,
        scores: PyReadonlyArray1<'_, f32>,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut mask: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<(f64, bool, bool)> {
        let scores = scores
            .as_slice()
            .map_err(|_| PyValueError::new_err("scores: a contiguous array is needed"))?;
        let obs = slice_mut(&mut obs, "obs")?;
        let mask = slice_mut(&mut mask, "mask")?;
        self.env().step_score(scores, obs, mask).map_err(gym_error)
    }

    /// The episode's measures so far (final once it ended), or None before the first reset.
    fn summary<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        self.env()
            .summary()
            .map(|s| summary_dict(py, &s))
            .transpose()
    }

    /// The same episode under the built-in scheduler `scheduler` (a name or label, e.g. "easy",
    /// "easy-sjf"), measured the same way.
    fn baseline<'py>(&mut self, py: Python<'py>, scheduler: &str) -> PyResult<Bound<'py, PyDict>> {
        let spec = ::schedulers::REGISTRY
            .from_label(scheduler)
            .map_err(|e| PyValueError::new_err(format!("scheduler={scheduler:?}: {e}")))?;
        let mut guard = self.env();
        let env = &mut *guard;
        let summary = crate::finalize::detach(py, || env.baseline(&spec)).map_err(gym_error)?;
        summary_dict(py, &summary)
    }

    /// The final records of the episode's jobs as jobs.csv's bytes (the writer of `sitesim
    /// replay`); `drain` first finishes the simulation with the rule's own passes.
    fn jobs_csv<'py>(&mut self, py: Python<'py>, drain: bool) -> PyResult<Bound<'py, PyBytes>> {
        let mut guard = self.env();
        let env = &mut *guard;
        let bytes = crate::finalize::detach(py, || {
            let records = env.records(drain)?;
            let columns = env.source().scheduler().columns();
            let mut out = Vec::new();
            scenario::output::write_jobs_csv(&records, columns, &mut out)?;
            Ok::<_, GymError>(out)
        })
        .map_err(gym_error)?;
        Ok(PyBytes::new(py, &bytes))
    }

    /// A few lines on the state.
    fn render(&self) -> String {
        self.env().render()
    }

    /// What a copy needs besides the settings and the actions since the last reset (pickling).
    fn state(&self) -> StateTuple {
        state_tuple(self.env().state())
    }

    /// Makes this new environment the one `state` came from, right after its last reset,
    /// writing that observation and mask; whether it has a decision to make.
    fn restore(
        &mut self,
        py: Python<'_>,
        state: StateTuple,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut mask: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<bool> {
        let state = env_state(state)?;
        let obs = slice_mut(&mut obs, "obs")?;
        let mask = slice_mut(&mut mask, "mask")?;
        let mut guard = self.env();
        let env = &mut *guard;
        crate::finalize::detach(py, || env.restore(&state, obs, mask)).map_err(gym_error)
    }
}

/// N environments stepped in one call, the GIL released.
#[pyclass(module = "sitesim._sitesim")]
pub struct GymVector {
    /// In a mutex, as [`GymCore`]'s.
    envs: Mutex<VecEnv>,
}

impl GymVector {
    fn envs(&self) -> std::sync::MutexGuard<'_, VecEnv> {
        self.envs
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[pymethods]
impl GymVector {
    #[new]
    fn new(
        source: &GymSource,
        config: &GymConfig,
        num_envs: usize,
        threads: bool,
    ) -> PyResult<GymVector> {
        let envs = VecEnv::new(
            source.source.clone(),
            config.config.clone(),
            num_envs,
            threads,
        )
        .map_err(gym_error)?;
        Ok(GymVector {
            envs: Mutex::new(envs),
        })
    }

    /// Resets every env (env i with `seed + i`), writing N observations and masks.
    fn reset(
        &mut self,
        py: Python<'_>,
        seed: Option<u64>,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut masks: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<()> {
        let obs = slice_mut(&mut obs, "obs")?;
        let masks = slice_mut(&mut masks, "masks")?;
        let mut guard = self.envs();
        let envs = &mut *guard;
        crate::finalize::detach(py, || envs.reset(seed, obs, masks)).map_err(gym_error)
    }

    /// Steps every env: `picks` (N int64) in pick mode or `scores` (N × K float32, flat) in
    /// score mode; writes the outputs (flat arrays).
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (picks, scores, obs, rewards, terminated, truncated, masks, invalid))]
    fn step(
        &mut self,
        py: Python<'_>,
        picks: Option<PyReadonlyArray1<'_, i64>>,
        scores: Option<PyReadonlyArray1<'_, f32>>,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut rewards: PyReadwriteArray1<'_, f64>,
        mut terminated: PyReadwriteArray1<'_, bool>,
        mut truncated: PyReadwriteArray1<'_, bool>,
        mut masks: PyReadwriteArray1<'_, bool>,
        mut invalid: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<()> {
        let contiguous = |_| PyValueError::new_err("actions: a contiguous array is needed");
        let actions = match (&picks, &scores) {
            (Some(p), _) => Actions::Pick(p.as_slice().map_err(contiguous)?),
            (None, Some(s)) => Actions::Score(s.as_slice().map_err(contiguous)?),
            (None, None) => return Err(PyValueError::new_err("no actions given")),
        };
        let out = VecOutput {
            obs: slice_mut(&mut obs, "obs")?,
            rewards: slice_mut(&mut rewards, "rewards")?,
            terminated: slice_mut(&mut terminated, "terminated")?,
            truncated: slice_mut(&mut truncated, "truncated")?,
            masks: slice_mut(&mut masks, "masks")?,
            invalid: slice_mut(&mut invalid, "invalid")?,
        };
        let mut guard = self.envs();
        let envs = &mut *guard;
        crate::finalize::detach(py, || envs.step(actions, out)).map_err(gym_error)
    }

    /// Resets now the envs whose episode ended (as the next step would), writing their rows
    /// and `True` in `reset`; for Stable-Baselines3's same-step autoreset.
    fn reset_ended(
        &mut self,
        py: Python<'_>,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut masks: PyReadwriteArray1<'_, bool>,
        mut reset: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<()> {
        let obs = slice_mut(&mut obs, "obs")?;
        let masks = slice_mut(&mut masks, "masks")?;
        let reset = slice_mut(&mut reset, "reset")?;
        let mut guard = self.envs();
        let envs = &mut *guard;
        crate::finalize::detach(py, || envs.reset_ended(obs, masks, reset)).map_err(gym_error)
    }

    /// Env i's state for a copy ([`GymCore::state`]).
    fn state(&self, i: usize) -> PyResult<StateTuple> {
        let guard = self.envs();
        let env = guard
            .envs()
            .get(i)
            .ok_or_else(|| PyValueError::new_err(format!("env {i}: no such env")))?;
        Ok(state_tuple(env.state()))
    }

    /// Makes env i of this new vector the one `state` came from, right after its last reset,
    /// writing its observation and mask into `obs` and `mask` (its rows).
    fn restore_env(
        &mut self,
        py: Python<'_>,
        i: usize,
        state: StateTuple,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut mask: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<bool> {
        let state = env_state(state)?;
        let obs = slice_mut(&mut obs, "obs")?;
        let mask = slice_mut(&mut mask, "mask")?;
        let mut guard = self.envs();
        let env = guard
            .envs_mut()
            .get_mut(i)
            .ok_or_else(|| PyValueError::new_err(format!("env {i}: no such env")))?;
        crate::finalize::detach(py, || env.restore(&state, obs, mask)).map_err(gym_error)
    }

    /// Steps env i alone with `pick` or `scores` (replaying a copy's actions), writing its
    /// observation and mask into `obs` and `mask` (its rows).
    #[pyo3(signature = (i, pick, scores, obs, mask))]
    fn step_env(
        &mut self,
        i: usize,
        pick: Option<i64>,
        scores: Option<PyReadonlyArray1<'_, f32>>,
        mut obs: PyReadwriteArray1<'_, f32>,
        mut mask: PyReadwriteArray1<'_, bool>,
    ) -> PyResult<()> {
        let obs = slice_mut(&mut obs, "obs")?;
        let mask = slice_mut(&mut mask, "mask")?;
        let mut guard = self.envs();
        let env = guard
            .envs_mut()
            .get_mut(i)
            .ok_or_else(|| PyValueError::new_err(format!("env {i}: no such env")))?;
        match (pick, &scores) {
            (Some(a), _) => env.step_pick(a, obs, mask).map(|_| ()),
            (None, Some(s)) => {
                let s = s
                    .as_slice()
                    .map_err(|_| PyValueError::new_err("scores: a contiguous array is needed"))?;
                env.step_score(s, obs, mask).map(|_| ())
            }
            (None, None) => return Err(PyValueError::new_err("no action given")),
        }
        .map_err(gym_error)
    }

    /// Env i's episode measures so far.
    fn summary<'py>(&self, py: Python<'py>, i: usize) -> PyResult<Option<Bound<'py, PyDict>>> {
        let guard = self.envs();
        let env = guard
            .envs()
            .get(i)
            .ok_or_else(|| PyValueError::new_err(format!("env {i}: no such env")))?;
        env.summary().map(|s| summary_dict(py, &s)).transpose()
    }

    /// Env i's episode under the built-in scheduler `scheduler`.
    fn baseline<'py>(
        &mut self,
        py: Python<'py>,
        i: usize,
        scheduler: &str,
    ) -> PyResult<Bound<'py, PyDict>> {
        let spec = ::schedulers::REGISTRY
            .from_label(scheduler)
            .map_err(|e| PyValueError::new_err(format!("scheduler={scheduler:?}: {e}")))?;
        let mut guard = self.envs();
        let env = guard
            .envs_mut()
            .get_mut(i)
            .ok_or_else(|| PyValueError::new_err(format!("env {i}: no such env")))?;
        let summary = crate::finalize::detach(py, || env.baseline(&spec)).map_err(gym_error)?;
        summary_dict(py, &summary)
    }
}
