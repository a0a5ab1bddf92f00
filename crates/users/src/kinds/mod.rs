//! User kinds: the behaviours a group's users can follow, behind one trait, and their registry.
//!
//! What every user does the same way lives in the population's state machine
//! ([`crate::Population`]): sessions (opened at the first batch, closed by the activity window, a
//! break or the end of the run), the batch in flight (its jobs submitted when due, complete when
//! the last one ends), the wake-up schedule, job ids, the preceding job of SWF fields 17-18, and
//! memory-bandwidth demands. What differs between kinds is a [`UserBehaviour`]:
//!
//! * **the activity window**: whether the user works at a time, and when its window opens next;
//! * **the next batch**: how many jobs, when each is due, and their attributes;
//! * **after a batch**: given the batch's last job to end (its wait, runtime and response),
//!   continue the session after a think time or take a break, and say with what probability.
//!
//! A kind has three parts, all in its own module:
//!
//! 1. a [`KindConfig`]: its keys of a `[[groups]]` table, deserialized with
//!    `#[serde(deny_unknown_fields)]` once the `kind` key is read, so a key of another kind is an
//!    error whatever its value;
//! 2. a [`UserFactory`]: the checked group parameters ([`KindConfig::check`]) that build each
//!    user's behaviour from the user's own profile stream;
//! 3. a [`UserBehaviour`]: one user's state (its window, its job source).
//!
//! and one line in [`KINDS`], the registry the population file's `kind` is looked up in. The
//! population never branches on the kind.

use std::any::Any;
use std::collections::VecDeque;
use std::fmt::Debug;
use std::sync::Arc;

use rand_pcg::Pcg64;
use serde::Serialize;
use serde::de::DeserializeOwned;
use usermodel::Model;

use crate::Time;
use crate::config::{ConfigError, Estimates};
use crate::cycle::{Calendar, DayPart, Days};
use crate::estimate::EstimateModel;
use crate::population::{Group, PopulationError};
use crate::rng::Streams;
use crate::submission::JobAttributes;

pub mod schlagkamp;
pub mod shmueli;

/// Every user kind a population file may name (`kind = "..."`). The first is the default.
/// Adding a kind: its module above and one line here.
pub static KINDS: &[Kind] = &[
    Kind::of::<shmueli::ShmueliConfig>(),
    Kind::of::<schlagkamp::SchlagkampConfig>(),
];

/// The kind of a group that gives no `kind`.
pub fn default_kind() -> &'static Kind {
    &KINDS[0]
}

/// The registered kind named `name`.
pub fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().find(|k| k.name == name)
}

/// Reads a kind's keys of a group table (see [`Kind::parse`]).
pub type ParseFn = fn(toml::Table, prefix: &str) -> Result<Box<dyn AnyKindConfig>, ConfigError>;

/// A registry entry: a kind's name, a line of help, and how to read its keys.
#[derive(Debug)]
pub struct Kind {
    /// The value of `kind` in a group.
    pub name: &'static str,
    /// What the kind models, and where from (one line).
    pub help: &'static str,
    /// Parses the group's keys that are not the common ones into the kind's configuration (its
    /// defaults filled in); `prefix` names the group in errors (`groups[1]`). The keys were
    /// already checked to be the kind's ([`Kind::keys`]).
    pub parse: ParseFn,
    /// The kind's keys, in declaration order.
    pub keys: fn() -> &'static [&'static str],
    /// The JSON schema of its keys (their types, defaults and doc comments), for the reference.
    pub schema: fn(&mut schemars::SchemaGenerator) -> schemars::Schema,
}

impl Kind {
    /// The registry entry of a [`KindConfig`].
    pub const fn of<C: KindConfig>() -> Kind {
        Kind {
            name: C::NAME,
            help: C::HELP,
            parse: parse::<C>,
            keys: struct_fields::<C>,
            schema: <C as schemars::JsonSchema>::json_schema,
        }
    }
}

/// A kind's own keys of a `[[groups]]` table, as written (unchecked). Implemented by a plain
/// serde struct with `#[serde(deny_unknown_fields)]` whose every field has a default.
pub trait KindConfig:
    Serialize
    + DeserializeOwned
    + schemars::JsonSchema
    + Clone
    + Debug
    + PartialEq
    + Send
    + Sync
    + 'static
{
    /// The value of `kind` that selects it.
    const NAME: &'static str;
    /// What it models, one line.
    const HELP: &'static str;

    /// The estimate model of a group that gives no `estimates`.
    fn default_estimates(&self) -> Estimates {
        Estimates::Fitted
    }

    /// The fitted model the group draws from (`embedded` or a directory relative to the
    /// population file); kinds that draw nothing from a fitted model keep `embedded`.
    fn models(&self) -> &str {
        "embedded"
    }

    /// Checks the values and returns the group's checked parameters. `prefix` names the group
    /// in errors ([`Prefix::error`]).
    fn check(&self, prefix: &Prefix<'_>) -> Result<Arc<dyn UserFactory>, ConfigError>;
}

/// The object-safe face of a [`KindConfig`], as a [`crate::GroupConfig`] holds it.
pub trait AnyKindConfig: Debug + Send + Sync {
    /// The kind's name.
    fn name(&self) -> &'static str;
    /// The kind's keys, in declaration order.
    fn keys(&self) -> &'static [&'static str];
    /// See [`KindConfig::default_estimates`].
    fn default_estimates(&self) -> Estimates;
    /// See [`KindConfig::models`].
    fn models(&self) -> &str;
    /// See [`KindConfig::check`].
    fn check(&self, prefix: &Prefix<'_>) -> Result<Arc<dyn UserFactory>, ConfigError>;
    /// The values of its keys (absent for keys not given that have no default).
    fn values(&self) -> toml::Table;
    /// A copy.
    fn clone_box(&self) -> Box<dyn AnyKindConfig>;
    /// Whether `other` is the same kind with the same values.
    fn same_as(&self, other: &dyn AnyKindConfig) -> bool;
    /// For downcasting to the concrete configuration.
    fn as_any(&self) -> &dyn Any;
}

impl<C: KindConfig> AnyKindConfig for C {
    fn name(&self) -> &'static str {
        C::NAME
    }
    fn keys(&self) -> &'static [&'static str] {
        struct_fields::<C>()
    }
    fn default_estimates(&self) -> Estimates {
        KindConfig::default_estimates(self)
    }
    fn models(&self) -> &str {
        KindConfig::models(self)
    }
    fn check(&self, prefix: &Prefix<'_>) -> Result<Arc<dyn UserFactory>, ConfigError> {
        KindConfig::check(self, prefix)
    }
    fn values(&self) -> toml::Table {
        match toml::Value::try_from(self) {
            Ok(toml::Value::Table(t)) => t,
            _ => toml::Table::new(),
        }
    }
    fn clone_box(&self) -> Box<dyn AnyKindConfig> {
        Box::new(self.clone())
    }
    fn same_as(&self, other: &dyn AnyKindConfig) -> bool {
        other.as_any().downcast_ref::<C>() == Some(self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Clone for Box<dyn AnyKindConfig> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// [`Kind::parse`] of a [`KindConfig`]: the table deserialized with the kind's own
/// `deny_unknown_fields`. A value of the wrong type is reported with its key.
fn parse<C: KindConfig>(
    table: toml::Table,
    prefix: &str,
) -> Result<Box<dyn AnyKindConfig>, ConfigError> {
    match C::deserialize(toml::Value::Table(table.clone())) {
        Ok(config) => Ok(Box::new(config)),
        Err(whole) => {
            // Every key has a default, so each key alone parses unless its own value is bad.
            for (key, value) in table {
                let alone = toml::Table::from_iter([(key.clone(), value.clone())]);
                if let Err(e) = C::deserialize(toml::Value::Table(alone)) {
                    return Err(ConfigError {
                        key: format!("{prefix}.{key}"),
                        value: value.to_string(),
                        problem: e.message().trim().to_string(),
                    });
                }
            }
            Err(ConfigError {
                key: prefix.to_string(),
                value: format!("kind = {:?}", C::NAME),
                problem: whole.message().trim().to_string(),
            })
        }
    }
}

/// Names a group's keys in errors: `groups[1]` and a key give `groups[1].key = value: problem`.
#[derive(Debug, Clone, Copy)]
pub struct Prefix<'a>(pub &'a str);

impl Prefix<'_> {
    /// The error for `key` of this group, whose `value` (as given) has `problem`.
    pub fn error(&self, key: &str, value: String, problem: &str) -> ConfigError {
        ConfigError {
            key: format!("{}.{key}", self.0),
            value,
            problem: problem.to_string(),
        }
    }
}

/// The checked parameters of a group's kind: they build each user's behaviour.
pub trait UserFactory: Debug + Send + Sync {
    /// The kind's name.
    fn kind(&self) -> &'static str;

    /// Checks that every value the users will draw from the group's fitted model is usable on a
    /// machine of `processors` (kinds that draw nothing from it accept any model).
    fn check_model(&self, _group: &Group, _processors: u32) -> Result<(), PopulationError> {
        Ok(())
    }

    /// A new user of the group. `profile` is the user's profile stream ([`crate::rng::Purpose::Profile`]):
    /// its class, shift or activity draws come from it, in the order the kind defines.
    fn user(&self, calendar: Calendar, profile: Pcg64) -> Box<dyn UserBehaviour>;

    /// For downcasting to the concrete parameters (tests, reports).
    fn as_any(&self) -> &dyn Any;
}

impl dyn UserFactory {
    /// The concrete parameters, if they are a `T`.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.as_any().downcast_ref::<T>()
    }
}

/// What a user draws a batch or a decision from: its group's fitted model and estimate model,
/// the machine, and the user's own random streams.
#[derive(Debug)]
pub struct Draws<'a> {
    /// The group's fitted model.
    pub model: &'a Model,
    /// The group's estimate model (`None`: the fitted estimates).
    pub estimates: Option<&'a EstimateModel>,
    /// Processors of the machine.
    pub processors: u32,
    /// The user's streams.
    pub streams: &'a mut Streams,
}

impl Draws<'_> {
    /// The estimate of a job of `runtime` seconds from the group's estimate model (drawn from the
    /// user's estimate stream), or the runtime itself when the group uses the fitted estimates.
    pub fn estimate_or_runtime(&mut self, runtime: Time) -> Time {
        match self.estimates {
            Some(m) => m.for_runtime(runtime, &mut self.streams.estimates),
            None => runtime,
        }
    }
}

/// What a user does when its batch is complete (and its window is still open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AfterBatch {
    /// Stay in the session: the next batch `think` seconds after the batch's last job ended.
    Continue {
        /// Think time, seconds.
        think: Time,
    },
    /// Close the session (ended by an abort) and start the next batch `pause` seconds later.
    Break {
        /// The break, seconds.
        pause: Time,
    },
}

/// The job whose end completed a batch (the batch's last job to end): what a user's decision
/// after the batch sees of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClosingJob {
    /// Its id.
    pub job_id: i64,
    /// Its wait (start - submit), seconds.
    pub wait: Time,
    /// Its runtime as it ran (end - start), seconds.
    pub runtime: Time,
}

impl ClosingJob {
    /// Its response (submit to end = wait + runtime), seconds.
    pub fn response(&self) -> Time {
        self.wait + self.runtime
    }

    /// Its bounded slowdown `max(1, response / max(10 s, runtime))`, as
    /// [`metrics::JobRecord::bounded_slowdown`] (threshold [`metrics::BOUNDED_SLOWDOWN_THRESHOLD`]).
    pub fn bounded_slowdown(&self) -> f64 {
        let denominator = self.runtime.max(metrics::BOUNDED_SLOWDOWN_THRESHOLD) as f64;
        (self.response() as f64 / denominator).max(1.0)
    }
}

/// A user's decision after a complete batch: what it does, and the continue probability its
/// trial used (`None` for kinds without a trial, such as Schlagkamp's, which always continue).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Decision {
    /// What the user does.
    pub next: AfterBatch,
    /// The probability of continuing the trial used, if the kind makes one.
    pub continue_probability: Option<f64>,
}

/// One user's behaviour: everything that differs between kinds. Calls come in time order, from
/// the population's state machine.
pub trait UserBehaviour: Debug + Send {
    /// Whether the user works at `t` (outside its window, its session ends and it sleeps).
    fn is_active(&mut self, t: Time) -> bool;

    /// The next opening of its window at or after `t` (`Time::MAX` if never).
    fn next_opening(&mut self, t: Time) -> Time;

    /// The next batch, started at `now`: appends `(submit time, attributes)` of each job in
    /// submission order, the first at `now`, none before.
    fn next_batch(
        &mut self,
        now: Time,
        draws: &mut Draws<'_>,
        batch: &mut VecDeque<(Time, JobAttributes)>,
    );

    /// The batch is complete: `job` is its last job to end (the deciding job). Called only while
    /// the user's window is open and before the horizon.
    fn batch_complete(&mut self, job: &ClosingJob, draws: &mut Draws<'_>) -> Decision;

    /// A batch's deciding job ended: called for every batch, before the horizon and the window
    /// are checked (so also when [`UserBehaviour::batch_complete`] is not called, the job having
    /// ended outside working hours or after the horizon), for kinds that remember responses.
    /// Draws nothing. Default: nothing.
    fn batch_ended(&mut self, _job: &ClosingJob) {}

    /// Seconds after `job` ended, lost to a node failure, at which the user resubmits it (its
    /// window being open). Default: the delay the kind's decision after a batch would give
    /// (its think time when it continues, its break when it breaks); kinds with a think-time
    /// model of their own give that.
    fn resubmit_delay(&mut self, job: &ClosingJob, draws: &mut Draws<'_>) -> Time {
        match self.batch_complete(job, draws).next {
            AfterBatch::Continue { think } => think,
            AfterBatch::Break { pause } => pause,
        }
    }

    /// Day or night, weekdays or weekends, and the shift in seconds, for kinds with Shmueli's
    /// activity cycle (reports); `None` otherwise.
    fn cycle(&self) -> Option<(DayPart, Days, Time)> {
        None
    }
}

/// The field names a serde-derived struct declares, in order (the `FIELDS` its `Deserialize`
/// passes to `deserialize_struct`); empty for anything else.
pub fn struct_fields<'de, T: serde::Deserialize<'de>>() -> &'static [&'static str] {
    serde_aux::serde_introspection::serde_introspect::<T>()
}
