//! N environments stepped in one call, writing into flat buffers (the Python bindings pass NumPy
//! arrays' memory and release the GIL meanwhile). Episodes that ended are reset at the next step
//! (Gymnasium's NEXT_STEP autoreset): that step ignores the env's action and returns the new
//! episode's first observation with reward 0.

use rayon::prelude::*;

use crate::{ActionMode, Env, EnvConfig, GymError, InvalidActionRule, Result, Source};

/// The actions of a vector step: one pick per env, or K scores per env (row after row).
#[derive(Debug, Clone, Copy)]
pub enum Actions<'a> {
    /// One pick per env.
    Pick(&'a [i64]),
    /// K scores per env, env after env.
    Score(&'a [f32]),
}

/// Where a vector step writes: N observations (row after row), rewards, terminated and
/// truncated flags, N masks (row after row), and whether each env's pick was masked and taken
/// as a wait.
pub struct VecOutput<'a> {
    /// N × observation size.
    pub obs: &'a mut [f32],
    /// N rewards.
    pub rewards: &'a mut [f64],
    /// N flags.
    pub terminated: &'a mut [bool],
    /// N flags.
    pub truncated: &'a mut [bool],
    /// N × mask size.
    pub masks: &'a mut [bool],
    /// N flags.
    pub invalid: &'a mut [bool],
}

/// N environments over the same source (its trace read once) and settings.
pub struct VecEnv {
    envs: Vec<Env>,
    threads: bool,
}

/// The most environments one vector holds. Each holds a simulation (a site's users, a trace's
/// episode) and its observation buffers (window 128: 6.7 kB per env on the Python side), so a
/// vector far larger than any batch a policy steps would only exhaust memory: 10^7 envs
/// aborted the interpreter when their allocation failed (issue 41).
pub const MAX_ENVS: usize = 65_536;

impl VecEnv {
    /// `n` environments (1 ..= [`MAX_ENVS`]); `threads` steps them on rayon's threads (each env
    /// stays sequential, so results do not depend on it).
    pub fn new(source: Source, config: EnvConfig, n: usize, threads: bool) -> Result<VecEnv> {
        if n == 0 || n > MAX_ENVS {
            return Err(GymError::Invalid(format!(
                "num_envs={n}: a vector holds 1 to {MAX_ENVS} environments"
            )));
        }
        let mut envs = Vec::new();
        envs.try_reserve_exact(n).map_err(|_| {
            GymError::Invalid(format!(
                "num_envs={n}: not enough memory for {n} environments"
            ))
        })?;
        for i in 0..n {
            let mut env = Env::new(source.clone(), config.clone())?;
            env.set_index(i as u64);
            envs.push(env);
        }
        Ok(VecEnv { envs, threads })
    }

    /// The environments.
    pub fn envs(&self) -> &[Env] {
        &self.envs
    }

    /// The environments, mutable (for per-env baselines and records).
    pub fn envs_mut(&mut self) -> &mut [Env] {
        &mut self.envs
    }

    fn sizes(&self) -> (usize, usize) {
        let first = &self.envs[0];
        (first.observation_size(), first.mask_size())
    }

    /// Resets every env; env i gets `seed + i` when a seed is given (as Gymnasium's vector
    /// environments seed theirs).
    pub fn reset(&mut self, seed: Option<u64>, obs: &mut [f32], masks: &mut [bool]) -> Result<()> {
        let (d, m) = self.sizes();
        let n = self.envs.len();
        if obs.len() != n * d || masks.len() != n * m {
            return Err(GymError::Invalid(format!(
                "buffers of {} floats and {} mask entries, expected {} and {}",
                obs.len(),
                masks.len(),
                n * d,
                n * m
            )));
        }
        let work = |(i, ((env, o), k)): ResetItem<'_>| {
            env.reset(seed.map(|s| s.wrapping_add(i as u64)), None, o, k)
                .map(|_| ())
        };
        let items = self
            .envs
            .iter_mut()
            .zip(obs.chunks_mut(d))
            .zip(masks.chunks_mut(m))
            .enumerate();
        if self.threads {
            items
                .collect::<Vec<_>>()
                .into_par_iter()
                .map(work)
                .collect::<Result<()>>()
        } else {
            {
                let mut items = items;
                items.try_for_each(work)
            }
        }
    }

    /// Resets now every env whose episode ended (as the next step would, with the same draw),
    /// writing its new episode's first observation and mask into its rows and `true` into
    /// `reset`; the other envs and rows are left as they are. For callers whose convention
    /// resets an env in the step that ended its episode (Stable-Baselines3's `VecEnv`); the
    /// next step then steps it with its action.
    pub fn reset_ended(
        &mut self,
        obs: &mut [f32],
        masks: &mut [bool],
        reset: &mut [bool],
    ) -> Result<()> {
        let (d, m) = self.sizes();
        let n = self.envs.len();
        if obs.len() != n * d || masks.len() != n * m || reset.len() != n {
            return Err(GymError::Invalid("output buffers of the wrong size".into()));
        }
        for (((env, o), k), r) in self
            .envs
            .iter_mut()
            .zip(obs.chunks_mut(d))
            .zip(masks.chunks_mut(m))
            .zip(reset.iter_mut())
        {
            *r = env.needs_reset();
            if *r {
                env.reset(None, None, o, k)?;
            }
        }
        Ok(())
    }

    /// Steps every env with its action; checks every action first, so that a bad one leaves
    /// every env as it was.
    pub fn step(&mut self, actions: Actions<'_>, out: VecOutput<'_>) -> Result<()> {
        let (d, m) = self.sizes();
        let n = self.envs.len();
        let window = self.envs[0].config().window;
        let mode = self.envs[0].config().mode;
        let rule = self.envs[0].config().invalid_action;
        match (mode, actions) {
            (ActionMode::Pick, Actions::Pick(a)) if a.len() == n => {
                for (i, (env, &a)) in self.envs.iter_mut().zip(a).enumerate() {
                    if env.needs_reset() {
                        continue;
                    }
                    let valid = env.pick_is_valid(a).map_err(|e| in_env(i, e))?;
                    if !valid && rule == InvalidActionRule::Raise {
                        return Err(GymError::InvalidAction(format!(
                            "env {i}: action {a} is masked (an empty window slot, or a wait with nothing to wait for)"
                        )));
                    }
                }
            }
            (ActionMode::Score, Actions::Score(s)) if s.len() == n * window => {
                for (i, (env, s)) in self.envs.iter_mut().zip(s.chunks(window)).enumerate() {
                    if env.needs_reset() {
                        continue;
                    }
                    env.scores_are_valid(s).map_err(|e| in_env(i, e))?;
                }
            }
            _ => {
                return Err(GymError::InvalidAction(format!(
                    "expected {} for {n} environments",
                    match mode {
                        ActionMode::Pick => format!("{n} picks"),
                        ActionMode::Score => format!("{n} x {window} scores"),
                    }
                )));
            }
        }
        if out.obs.len() != n * d
            || out.masks.len() != n * m
            || out.rewards.len() != n
            || out.terminated.len() != n
            || out.truncated.len() != n
            || out.invalid.len() != n
        {
            return Err(GymError::Invalid("output buffers of the wrong size".into()));
        }
        let work = |(i, env, o, k, r, te, tr, inv): StepItem<'_>| -> Result<()> {
            *r = 0.0;
            *te = false;
            *tr = false;
            *inv = false;
            if env.needs_reset() {
                return env.reset(None, None, o, k).map(|_| ());
            }
            match actions {
                Actions::Pick(a) => {
                    let (reward, terminated, truncated, invalid) = env.step_pick(a[i], o, k)?;
                    (*r, *te, *tr, *inv) = (reward, terminated, truncated, invalid);
                }
                Actions::Score(s) => {
                    let (reward, terminated, truncated) =
                        env.step_score(&s[i * window..(i + 1) * window], o, k)?;
                    (*r, *te, *tr) = (reward, terminated, truncated);
                }
            }
            Ok(())
        };
        let items: Vec<StepItem<'_>> = self
            .envs
            .iter_mut()
            .zip(out.obs.chunks_mut(d))
            .zip(out.masks.chunks_mut(m))
            .zip(out.rewards.iter_mut())
            .zip(out.terminated.iter_mut())
            .zip(out.truncated.iter_mut())
            .zip(out.invalid.iter_mut())
            .enumerate()
            .map(|(i, ((((((env, o), k), r), te), tr), inv))| (i, env, o, k, r, te, tr, inv))
            .collect();
        if self.threads {
            items.into_par_iter().map(work).collect::<Result<()>>()
        } else {
            items.into_iter().try_for_each(work)
        }
    }
}

/// An env's error, saying which env.
fn in_env(i: usize, error: GymError) -> GymError {
    match error {
        GymError::InvalidAction(m) => GymError::InvalidAction(format!("env {i}: {m}")),
        GymError::Invalid(m) => GymError::Invalid(format!("env {i}: {m}")),
        GymError::ResetNeeded(m) => GymError::ResetNeeded(format!("env {i}: {m}")),
        other => other,
    }
}

/// One env's share of a vector reset.
type ResetItem<'a> = (usize, ((&'a mut Env, &'a mut [f32]), &'a mut [bool]));

/// One env's share of a vector step.
type StepItem<'a> = (
    usize,
    &'a mut Env,
    &'a mut [f32],
    &'a mut [bool],
    &'a mut f64,
    &'a mut bool,
    &'a mut bool,
    &'a mut bool,
);
