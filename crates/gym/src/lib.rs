//! The simulator as a reinforcement-learning environment (issue 33): the engine's resumable
//! loop ([`engine::Stepper`]) stopped wherever the scheduler has a choice to make, so that an
//! agent decides and the engine goes on. The Python bindings wrap [`Env`] and [`VecEnv`] as
//! Gymnasium environments (`sitesim.gym`); this crate holds everything but the Python glue, so
//! its equivalence with `sitesim replay` and `sitesim run` is tested here, in Rust.
//!
//! Three sources of episodes ([`Source`]): a replayed trace (open loop), a trace's sessions
//! replayed with feedback, and a closed-loop site of simulated users (no other scheduling
//! environment has one). Two action modes ([`ActionMode`]): pick one job of the window to start
//! now, or wait; or score the window and let the rule (EASY, or none) order the queue by the
//! scores. Both run the rule's own code: the agent's decisions reach it as a queue order
//! ([`ScoreOrder`]), so with FCFS decisions an episode is exactly a run of the built-in
//! scheduler.
//!
//! The observation, action and reward layouts are documented in `docs/guide/gym.md`; the
//! feature names are [`JOB_FEATURES`] and [`MACHINE_FEATURES`].

mod env;
mod observe;
mod order;
mod source;
mod vector;

pub use env::{Env, EnvState, EpisodeStart, EpisodeSummary, Status};
pub use observe::{JOB_FEATURES, MACHINE_FEATURES, observation_size};
pub use order::ScoreOrder;
pub use source::{Source, SourceKind};
pub use vector::{Actions, MAX_ENVS, VecEnv, VecOutput};

/// What went wrong in the environment. The Python bindings raise `ValueError` for
/// [`GymError::Invalid`] and [`GymError::InvalidAction`] (as `sitesim.gym.InvalidAction`), and
/// `gymnasium.error.ResetNeeded` for [`GymError::ResetNeeded`].
#[derive(Debug, thiserror::Error)]
pub enum GymError {
    /// A keyword of the environment has a bad value; the message names it.
    #[error("{0}")]
    Invalid(String),
    /// An action the environment cannot take now; the message says why.
    #[error("invalid action: {0}")]
    InvalidAction(String),
    /// `step` before `reset`, or after the episode ended.
    #[error("{0}")]
    ResetNeeded(String),
    /// Reading or preparing the trace or the site failed.
    #[error(transparent)]
    Scenario(#[from] config::ScenarioError),
    /// The simulation failed (a bug; never expected).
    #[error("the simulation failed: {0}")]
    Engine(#[from] engine::EngineError),
}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, GymError>;

/// What an action is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ActionMode {
    /// `Discrete(K + 1)`: slot i < K starts window job i now if it fits, or reserves it (the
    /// rule backfills behind it until it starts) if it does not; K waits for the next event.
    /// One decision per start.
    Pick,
    /// `Box(K)`: a score per window slot, larger first; the rule orders the queue by the scores
    /// and starts and backfills as it would. One decision per scheduling pass.
    Score,
}

/// What a masked (invalid) pick does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidActionRule {
    /// Raise [`GymError::InvalidAction`] (the default).
    Raise,
    /// Wait instead (`info["invalid_action"]` says so), for checkers that sample unmasked
    /// actions.
    Wait,
}

/// What the reward measures: a measure of the catalogue ([`metrics::MEASURES`],
/// [`metrics::EXTRA_MEASURES`]) by its name, the same definition a run reports under that name,
/// over the episode's measured jobs and measured time ([`EpisodeSummary`]). Costs (the
/// catalogue's [`metrics::Better::Lower`]) are rewarded negatively.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewardKind {
    /// `bounded_slowdown_mean`: bounded slowdown of the measured jobs (10 s threshold; credited
    /// when a job starts: its end is known then).
    Bsld,
    /// `wait_mean`: wait of the measured jobs, seconds (credited at start).
    Wait,
    /// `queue_length_mean`: jobs waiting (every one, warm-up jobs included), integrated over
    /// the measured time (dense: job-hours per step; episodic: over its length, jobs).
    Queue,
    /// `utilization`: busy processors integrated over the measured time (dense:
    /// machine-hours per step; episodic: the busy share).
    Utilization,
    /// `throughput_submitted_per_hour`: measured jobs submitted (dense: per step; episodic: per
    /// hour of measured time). Sites and feedback replays.
    Throughput,
    /// `session_length_mean`: mean jobs per session of the sessions that started in the
    /// measured time (episodic only). Sites and feedback replays.
    SessionLength,
    /// Any other measure of the catalogue that says which way is better, by its index in
    /// [`catalogue`] (episodic only): computed by the catalogue's own code over a run's
    /// summaries of the episode ([`EpisodeSummary::other`]), so that a new measure is a reward
    /// with its catalogue entry alone.
    Measure(u16),
}

/// Every measure of the catalogue, reported ([`metrics::MEASURES`]) or not
/// ([`metrics::EXTRA_MEASURES`]), in that order.
pub fn catalogue() -> impl Iterator<Item = &'static metrics::Measure> {
    metrics::MEASURES.iter().chain(metrics::EXTRA_MEASURES)
}

impl RewardKind {
    /// The names `reward=` takes: the catalogue's names of the measures, in the order of the
    /// kinds.
    pub const NAMES: [&'static str; 6] = [
        "bounded_slowdown_mean",
        "wait_mean",
        "queue_length_mean",
        "utilization",
        "throughput_submitted_per_hour",
        "session_length_mean",
    ];

    /// The names the rewards had before they took the catalogue's (issue 42), with the new
    /// name: refused with a hint, since `wait` was in hours and `session_length` counted only
    /// the sessions that ended in the episode.
    const FORMER_NAMES: [(&'static str, &'static str); 6] = [
        ("bsld", "bounded_slowdown_mean"),
        ("wait", "wait_mean (seconds; it was hours)"),
        ("queue", "queue_length_mean"),
        ("utilization", "utilization"),
        ("throughput", "throughput_submitted_per_hour"),
        (
            "session_length",
            "session_length_mean (every session that started in the episode; it counted those that also ended in it)",
        ),
    ];

    /// The kind of the measure called `name`: one of [`RewardKind::NAMES`], else any measure of
    /// the catalogue that says which way is better.
    pub fn named(name: &str) -> Result<RewardKind> {
        // An alias of a measure ([`metrics::MEASURE_ALIASES`]) rewards the measure.
        let name = metrics::canonical_name(name);
        const KINDS: [RewardKind; 6] = [
            RewardKind::Bsld,
            RewardKind::Wait,
            RewardKind::Queue,
            RewardKind::Utilization,
            RewardKind::Throughput,
            RewardKind::SessionLength,
        ];
        if let Some(k) = RewardKind::NAMES.iter().position(|n| *n == name) {
            return Ok(KINDS[k]);
        }
        if let Some((k, measure)) = catalogue().enumerate().find(|(_, m)| m.name == name) {
            if measure.better.is_none() {
                return Err(GymError::Invalid(format!(
                    "reward={name:?}: the catalogue does not say whether more {name} is better (a count or a diagnostic), so it is no reward"
                )));
            }
            if let Ok(k) = u16::try_from(k) {
                return Ok(RewardKind::Measure(k));
            }
        }
        let hint = RewardKind::FORMER_NAMES
            .iter()
            .find(|(former, _)| *former == name)
            .map_or(String::new(), |(_, now)| {
                format!(" (rewards are named as the catalogue's measures now: {now})")
            });
        Err(GymError::Invalid(format!(
            "reward={name:?}: expected one of {} or another measure of the catalogue (docs/reference/measures.md){hint}",
            RewardKind::NAMES.join(", ")
        )))
    }

    /// The catalogue's name of the measure rewarded.
    pub fn name(self) -> &'static str {
        match self {
            RewardKind::Bsld => RewardKind::NAMES[0],
            RewardKind::Wait => RewardKind::NAMES[1],
            RewardKind::Queue => RewardKind::NAMES[2],
            RewardKind::Utilization => RewardKind::NAMES[3],
            RewardKind::Throughput => RewardKind::NAMES[4],
            RewardKind::SessionLength => RewardKind::NAMES[5],
            RewardKind::Measure(k) => catalogue().nth(usize::from(k)).map_or("", |m| m.name),
        }
    }

    /// The catalogue's entry of the measure rewarded (`None` only if the catalogue lost it, which
    /// a test rules out).
    pub fn measure(self) -> Option<&'static metrics::Measure> {
        metrics::find_measure(self.name())
    }

    /// Whether more is better, as the catalogue says ([`metrics::Measure::better`]).
    fn is_benefit(self) -> bool {
        self.measure()
            .is_some_and(|m| m.better == Some(metrics::Better::Higher))
    }
}

/// When the reward comes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewardMode {
    /// At every step, for what happened since the last one (the first step also gets what
    /// happened between t0 and the first decision); the sum over an episode is the episode's
    /// total. In replays, whose episodes have a known number of jobs (`episode_jobs`, fewer at
    /// the trace's end), bsld, wait and queue are divided by it: the bsld and wait sums are
    /// minus their means over the episode's jobs, and the queue sum is minus the job-hours
    /// waited after t0 by every waiting job (warm-up jobs included) per episode job.
    Dense,
    /// Only at the last step: the episode's measure ([`EpisodeSummary`]), signed so that more is
    /// better, or relative to a baseline ([`EnvConfig::relative_to`]).
    Episodic,
}

/// When a site's episode ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Until {
    /// Truncated at the users' horizon (`weeks`).
    Horizon,
    /// Terminated when the simulation ends: the users stopped and every job ended (as
    /// `sitesim run` simulates).
    Drained,
}

/// The environment's own settings (the trace's or site's options are the source's).
#[derive(Debug, Clone, PartialEq)]
pub struct EnvConfig {
    /// What an action is.
    pub mode: ActionMode,
    /// K: the waiting jobs the agent sees and chooses among, oldest first (1..=4096).
    pub window: usize,
    /// What the reward measures.
    pub reward: RewardKind,
    /// When it comes.
    pub reward_mode: RewardMode,
    /// Episodic reward relative to this built-in scheduler on the same episode (same jobs, same
    /// warm start, same users): (B - A) / B for costs, A / B - 1 for benefits.
    pub relative_to: Option<cluster::SchedulerSpec>,
    /// What a masked pick does.
    pub invalid_action: InvalidActionRule,
    /// Replays: jobs per episode (`None`: from the start to the end of the trace).
    pub episode_jobs: Option<usize>,
    /// Replays: jobs before the episode's first, simulated under the rule in FCFS order so the
    /// episode starts on a busy machine (0: an empty machine).
    pub warm_jobs: usize,
    /// Replays and feedback: where episodes start, as fractions of the trace (its jobs, or its
    /// logged time), drawn uniformly; e.g. (0, 0.8) to train and (0.8, 1) to test.
    pub start_range: (f64, f64),
    /// Sites and feedback: days simulated under the rule in FCFS order before the agent takes
    /// over.
    pub warm_days: u32,
    /// Feedback: days per episode (truncated then).
    pub episode_days: u32,
    /// Sites: when the episode ends.
    pub until: Until,
}

impl Default for EnvConfig {
    fn default() -> EnvConfig {
        EnvConfig {
            mode: ActionMode::Pick,
            window: 128,
            reward: RewardKind::Bsld,
            reward_mode: RewardMode::Dense,
            relative_to: None,
            invalid_action: InvalidActionRule::Raise,
            episode_jobs: Some(256),
            warm_jobs: 1024,
            start_range: (0.0, 1.0),
            warm_days: 7,
            episode_days: 7,
            until: Until::Horizon,
        }
    }
}

/// The largest window.
pub const MAX_WINDOW: usize = 4096;

impl EnvConfig {
    /// Checks the settings against the source's kind; errors name the keyword.
    pub fn check(&self, kind: SourceKind) -> Result<()> {
        let bad = |m: String| Err(GymError::Invalid(m));
        if self.window == 0 || self.window > MAX_WINDOW {
            return bad(format!(
                "window={}: the window holds 1 to {MAX_WINDOW} jobs",
                self.window
            ));
        }
        if self.episode_jobs == Some(0) {
            return bad("episode_jobs=0: an episode needs at least one job".into());
        }
        let (a, b) = self.start_range;
        if !(a.is_finite() && b.is_finite() && 0.0 <= a && a <= b && b <= 1.0) {
            return bad(format!(
                "start_range=({a}, {b}): expected two fractions 0 <= a <= b <= 1"
            ));
        }
        if kind == SourceKind::Feedback && self.episode_days == 0 {
            return bad("episode_days=0: an episode lasts at least one day".into());
        }
        let closed = matches!(kind, SourceKind::Site | SourceKind::Feedback);
        if matches!(
            self.reward,
            RewardKind::Throughput | RewardKind::SessionLength
        ) && !closed
        {
            return bad(format!(
                "reward={:?}: throughput and session length need users who react (Site or ReplayFeedback); a replay's submissions are fixed",
                self.reward.name()
            ));
        }
        if matches!(
            self.reward,
            RewardKind::SessionLength | RewardKind::Measure(_)
        ) && self.reward_mode == RewardMode::Dense
        {
            return bad(format!(
                "reward={:?} is known only when the episode ends: use reward_mode='episodic'",
                self.reward.name()
            ));
        }
        if self.relative_to.is_some() && self.reward_mode == RewardMode::Dense {
            return bad("relative_to compares whole episodes: use reward_mode='episodic'".into());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_reward_is_a_catalogue_measure_the_episode_measures() {
        for name in RewardKind::NAMES {
            let kind = RewardKind::named(name).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(kind.name(), name);
            let measure = kind
                .measure()
                .unwrap_or_else(|| panic!("reward {name} is no measure of the catalogue"));
            assert!(measure.better.is_some(), "{name} has no direction");
            assert!(
                EpisodeSummary::MEASURES.contains(&name),
                "the episode does not measure {name}"
            );
        }
        for name in EpisodeSummary::MEASURES {
            assert!(
                metrics::find_measure(name).is_some(),
                "the episode's {name} is no measure of the catalogue"
            );
            assert!(EpisodeSummary::default().measure(name).is_some(), "{name}");
        }
    }

    #[test]
    fn an_alias_of_a_measure_rewards_the_measure() {
        assert_eq!(RewardKind::named("mean_wait").unwrap(), RewardKind::Wait);
        assert_eq!(RewardKind::named("mean_wait").unwrap().name(), "wait_mean");
    }

    #[test]
    fn rewards_take_their_sign_from_the_catalogue_and_former_names_are_refused_with_a_hint() {
        let s = EpisodeSummary {
            wait_mean: 120.0,
            utilization: 0.5,
            ..EpisodeSummary::default()
        };
        assert_eq!(s.reward(RewardKind::Wait, None), -120.0);
        assert_eq!(s.reward(RewardKind::Utilization, None), 0.5);
        let b = EpisodeSummary {
            wait_mean: 240.0,
            utilization: 0.25,
            ..EpisodeSummary::default()
        };
        assert_eq!(s.reward(RewardKind::Wait, Some(&b)), 0.5);
        assert_eq!(s.reward(RewardKind::Utilization, Some(&b)), 1.0);
        // Undefined (no session): 0.
        let none = EpisodeSummary {
            session_length_mean: f64::NAN,
            ..EpisodeSummary::default()
        };
        assert_eq!(none.reward(RewardKind::SessionLength, None), 0.0);
        let Err(GymError::Invalid(message)) = RewardKind::named("wait") else {
            panic!("the former name wait is taken");
        };
        assert!(message.contains("wait_mean (seconds"), "{message}");
    }
}
