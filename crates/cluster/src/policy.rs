//! What a user can ask for: a scheduler composed of three registered parts, a queue order
//! ([`crate::order::ORDERS`]), a backfilling rule ([`crate::backfill::RULES`]) and a runtime
//! predictor ([`crate::predict::PREDICTORS`]), with their parameters, defaults and validation.
//! The papers' schedulers are named presets of such compositions ([`POLICIES`]).
//!
//! A new queue order, backfilling rule or predictor becomes selectable by name with one entry
//! in its registry; the CLI's `--order`, `--backfill` and `--predictor`, population files,
//! labels and the property tests all iterate over the registries. A new preset is one entry in
//! [`POLICIES`].

use crate::backfill::{self, Backfill};
use crate::dynp::{self, Quality};
use crate::order::{self, QueueOrder};
use crate::predict::{self, Predictor};
use crate::{Scheduler, Time};

/// A parameter a scheduler part may take.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Param {
    /// CREASY's weight of criticality against seniority (a finite number >= 0; default 6000).
    Alpha,
    /// Basic dynP's lower bound on the waiting jobs' mean estimate, seconds (default 7200).
    DynpLower,
    /// Basic dynP's upper bound, seconds (default 9000; at least the lower bound).
    DynpUpper,
    /// The quality a self-tuning dynP judges its virtual schedules by (default ARTwW).
    Quality,
}

impl Param {
    /// Every parameter, in the order they are checked and appear in labels.
    pub const ALL: [Param; 4] = [
        Param::Alpha,
        Param::DynpLower,
        Param::DynpUpper,
        Param::Quality,
    ];

    /// The parameter's key (in population and sweep files; the front ends name it from this):
    /// `alpha`, `dynp_lower`, `dynp_upper`, `quality`.
    pub fn key(self) -> &'static str {
        match self {
            Param::Alpha => "alpha",
            Param::DynpLower => "dynp_lower",
            Param::DynpUpper => "dynp_upper",
            Param::Quality => "quality",
        }
    }

    /// Whether `params` gives this parameter.
    fn given(self, params: &PolicyParams) -> bool {
        match self {
            Param::Alpha => params.alpha.is_some(),
            Param::DynpLower => params.dynp_lower.is_some(),
            Param::DynpUpper => params.dynp_upper.is_some(),
            Param::Quality => params.quality.is_some(),
        }
    }

    /// This parameter's value in `params` (its default when not given), as labels write it.
    fn label(self, params: &PolicyParams) -> String {
        match self {
            Param::Alpha => params.alpha().to_string(),
            Param::DynpLower => params.dynp_lower().to_string(),
            Param::DynpUpper => params.dynp_upper().to_string(),
            Param::Quality => params.quality().name().to_string(),
        }
    }

    /// Sets this parameter in `params` from its label text.
    fn parse(self, text: &str, params: &mut PolicyParams) -> Option<()> {
        match self {
            Param::Alpha => params.alpha = Some(text.parse().ok()?),
            Param::DynpLower => params.dynp_lower = Some(text.parse().ok()?),
            Param::DynpUpper => params.dynp_upper = Some(text.parse().ok()?),
            Param::Quality => params.quality = Some(Quality::from_name(text)?),
        }
        Some(())
    }

    /// Keeps this parameter of `from` (with its default filled in) in `to`.
    fn resolve(self, from: &PolicyParams, to: &mut PolicyParams) {
        match self {
            Param::Alpha => to.alpha = Some(from.alpha()),
            Param::DynpLower => to.dynp_lower = Some(from.dynp_lower()),
            Param::DynpUpper => to.dynp_upper = Some(from.dynp_upper()),
            Param::Quality => to.quality = Some(from.quality()),
        }
    }
}

/// A part's configuration beyond [`Param`]s: a whole section that a front end reads for the
/// part that knows it (the Slurm model's `[scheduler.slurm]`) and hands to the part's `build`
/// as is. Any comparable value is one.
pub trait PartConfig: std::any::Any + std::fmt::Debug + Send + Sync {
    /// The configuration as [`std::any::Any`], for the part that knows its type.
    fn as_any(&self) -> &dyn std::any::Any;

    /// Whether `other` is the same configuration.
    fn same(&self, other: &dyn PartConfig) -> bool;
}

impl<T: std::any::Any + std::fmt::Debug + PartialEq + Send + Sync> PartConfig for T {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }

    fn same(&self, other: &dyn PartConfig) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

/// The parameters given for a scheduler; `None` means "not given" (the default applies, and a
/// scheduler none of whose parts takes the parameter does not complain).
#[derive(Debug, Clone, Default)]
pub struct PolicyParams {
    /// CREASY's alpha.
    pub alpha: Option<f64>,
    /// Basic dynP's lower bound, seconds.
    pub dynp_lower: Option<Time>,
    /// Basic dynP's upper bound, seconds.
    pub dynp_upper: Option<Time>,
    /// Self-tuning dynP's quality.
    pub quality: Option<Quality>,
    /// The backfilling rule's own configuration (`None`: the rule's default), as its part
    /// reads it (the Slurm model's: `slurm_model::SlurmConfig`; the scenario layer gives it
    /// only to the part that reads it).
    pub config: Option<std::sync::Arc<dyn PartConfig>>,
}

impl PartialEq for PolicyParams {
    fn eq(&self, other: &PolicyParams) -> bool {
        self.alpha == other.alpha
            && self.dynp_lower == other.dynp_lower
            && self.dynp_upper == other.dynp_upper
            && self.quality == other.quality
            && match (&self.config, &other.config) {
                (None, None) => true,
                (Some(a), Some(b)) => a.same(b.as_ref()),
                _ => false,
            }
    }
}

impl PolicyParams {
    /// CREASY's alpha when none is given: the paper's strongest setting (section IV-B).
    pub const DEFAULT_ALPHA: f64 = 6000.0;
    /// Self-tuning dynP's quality when none is given: ARTwW (Streit's best).
    pub const DEFAULT_QUALITY: Quality = Quality::WidthWeightedResponseTime;

    /// Alpha, or its default.
    pub fn alpha(&self) -> f64 {
        self.alpha.unwrap_or(Self::DEFAULT_ALPHA)
    }

    /// The lower dynP bound, or Streit's (7200 s).
    pub fn dynp_lower(&self) -> Time {
        self.dynp_lower.unwrap_or(dynp::STREIT_BOUNDS.0)
    }

    /// The upper dynP bound, or Streit's (9000 s).
    pub fn dynp_upper(&self) -> Time {
        self.dynp_upper.unwrap_or(dynp::STREIT_BOUNDS.1)
    }

    /// The quality, or ARTwW.
    pub fn quality(&self) -> Quality {
        self.quality.unwrap_or(Self::DEFAULT_QUALITY)
    }

    /// The rule's own configuration, if one of type `T` is given.
    pub fn config<T: 'static>(&self) -> Option<&T> {
        self.config.as_deref()?.as_any().downcast_ref()
    }
}

/// One registered part of a scheduler: a queue order, a backfilling rule or a runtime predictor,
/// with what `build` makes of it.
#[derive(Debug)]
pub struct Part<B: 'static> {
    /// The name files and flags use (`sjf`, `easy-sjbf`, `user-last-two`); labels start with it.
    pub name: &'static str,
    /// One line on what it does (shown by `--help` and `sitesim schedulers`).
    pub help: &'static str,
    /// The parameters it takes, in the order its label writes them.
    pub params: &'static [Param],
    /// What it is built from: a constructor taking the parameters (their defaults filled in),
    /// or, for a predictor, the [`Predictor`] itself.
    pub build: B,
}

impl<B> Part<B> {
    /// Whether the part takes `param`.
    pub fn takes(&self, param: Param) -> bool {
        self.params.contains(&param)
    }

    /// The part's label: its name, then each parameter it takes (`creasy-6000`).
    fn label(&self, params: &PolicyParams) -> String {
        let mut label = self.name.to_string();
        for param in self.params {
            label.push('-');
            label.push_str(&param.label(params));
        }
        label
    }
}

/// A registered queue order ([`crate::order::ORDERS`]).
pub type OrderPart = Part<fn(&PolicyParams) -> Box<dyn QueueOrder>>;
/// A registered backfilling rule ([`crate::backfill::RULES`]).
pub type RulePart = Part<fn(&PolicyParams) -> Box<dyn Backfill>>;
/// A registered runtime predictor ([`crate::predict::PREDICTORS`]).
pub type PredictorPart = Part<Predictor>;

/// Which kind of part (or a preset) a name is looked up as: what messages call it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartKind {
    /// A preset of [`POLICIES`] (`scheduler`).
    Scheduler,
    /// A queue order (`order`).
    Order,
    /// A backfilling rule (`backfill`).
    Backfill,
    /// A runtime predictor (`predictor`).
    Predictor,
}

impl PartKind {
    /// The key that names a part of this kind: `scheduler`, `order`, `backfill`, `predictor`.
    pub fn key(self) -> &'static str {
        match self {
            PartKind::Scheduler => "scheduler",
            PartKind::Order => "order",
            PartKind::Backfill => "backfill",
            PartKind::Predictor => "predictor",
        }
    }
}

/// A named scheduler: a preset composition of a queue order, a backfilling rule and a
/// predictor (an entry of [`POLICIES`]).
#[derive(Debug)]
pub struct Policy {
    /// The name the CLI and population files use (`easy-sjbf`); its labels start with it.
    pub name: &'static str,
    /// Other accepted names (`easy+` for `easy-plus`).
    pub aliases: &'static [&'static str],
    /// One line on what it does (shown by `--help` and `sitesim schedulers`).
    pub help: &'static str,
    /// Its queue order.
    pub order: &'static OrderPart,
    /// Its backfilling rule.
    pub backfill: &'static RulePart,
    /// Its runtime predictor.
    pub predictor: &'static PredictorPart,
}

impl Policy {
    /// Whether one of the policy's parts takes `param`.
    pub fn takes(&self, param: Param) -> bool {
        self.order.takes(param) || self.backfill.takes(param) || self.predictor.takes(param)
    }

    /// The parameters its parts take, in label order (order's, rule's, predictor's).
    pub fn params(&self) -> Vec<Param> {
        parts_params(self.order, self.backfill, self.predictor)
    }

    /// Whether `name` names this policy (its name or an alias).
    pub fn is_named(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

fn parts_params(order: &OrderPart, backfill: &RulePart, predictor: &PredictorPart) -> Vec<Param> {
    order
        .params
        .iter()
        .chain(backfill.params)
        .chain(predictor.params)
        .copied()
        .collect()
}

/// One crate's scheduler parts: its presets and its queue orders, backfilling rules and
/// predictors, each list in the order front ends show it.
#[derive(Debug)]
pub struct Parts {
    /// Its presets.
    pub policies: &'static [Policy],
    /// Its queue orders.
    pub orders: &'static [&'static OrderPart],
    /// Its backfilling rules.
    pub rules: &'static [&'static RulePart],
    /// Its runtime predictors.
    pub predictors: &'static [&'static PredictorPart],
}

/// This crate's parts: [`POLICIES`], [`crate::order::ORDERS`], [`crate::backfill::RULES`],
/// [`crate::predict::PREDICTORS`].
pub static CORE: Parts = Parts {
    policies: POLICIES,
    orders: order::ORDERS,
    rules: backfill::RULES,
    predictors: predict::PREDICTORS,
};

/// Every part front ends may name: the sets of parts of the crates that register them, in
/// order (this crate's [`CORE`] first). Schedulers are named, composed and read back from
/// labels through a registry ([`Registry::spec`], [`Registry::compose`],
/// [`Registry::from_label`]); the workspace's registry of every part (the Slurm model's too)
/// is `schedulers::REGISTRY`, above this crate.
#[derive(Debug)]
pub struct Registry {
    /// The sets of parts, in the order their parts are listed.
    pub sets: &'static [&'static Parts],
}

/// A registry of this crate's own parts only ([`CORE`]).
pub static CORE_REGISTRY: Registry = Registry { sets: &[&CORE] };

impl Registry {
    /// Every preset, in order.
    pub fn policies(&self) -> impl Iterator<Item = &'static Policy> + Clone + use<> {
        let sets: &'static [&'static Parts] = self.sets;
        sets.iter().flat_map(|p| p.policies.iter())
    }

    /// Every queue order, in order.
    pub fn orders(&self) -> impl Iterator<Item = &'static OrderPart> + Clone + use<> {
        let sets: &'static [&'static Parts] = self.sets;
        sets.iter().flat_map(|p| p.orders.iter().copied())
    }

    /// Every backfilling rule, in order.
    pub fn rules(&self) -> impl Iterator<Item = &'static RulePart> + Clone + use<> {
        let sets: &'static [&'static Parts] = self.sets;
        sets.iter().flat_map(|p| p.rules.iter().copied())
    }

    /// Every runtime predictor, in order.
    pub fn predictors(&self) -> impl Iterator<Item = &'static PredictorPart> + Clone + use<> {
        let sets: &'static [&'static Parts] = self.sets;
        sets.iter().flat_map(|p| p.predictors.iter().copied())
    }

    /// The preset named `name` (its name or an alias).
    pub fn find_policy(&self, name: &str) -> Option<&'static Policy> {
        self.policies().find(|p| p.is_named(name))
    }

    /// The preset `name` with `params` ([`SchedulerSpec::new`]).
    pub fn spec(
        &'static self,
        name: &str,
        params: PolicyParams,
    ) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::new(self, name, params)
    }

    /// The scheduler `choice` names ([`SchedulerSpec::compose`]).
    pub fn compose(
        &'static self,
        choice: Composition<'_>,
        params: PolicyParams,
    ) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::compose(self, choice, params)
    }

    /// The scheduler a label names ([`SchedulerSpec::from_label`]).
    pub fn from_label(&'static self, label: &str) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::from_label(self, label)
    }

    /// The presets' names, joined by ", ".
    fn policy_names(&self) -> String {
        self.policies()
            .map(|p| p.name)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// This crate's presets, in the order `sitesim schedulers` and `--help` list them: the
/// schedulers of the source papers (the Slurm model's follow in its own crate).
pub static POLICIES: &[Policy] = &[
    Policy {
        name: "fcfs",
        aliases: &[],
        help: "First come, first served, no backfilling",
        order: &order::FCFS,
        backfill: &backfill::NONE,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "easy",
        aliases: &[],
        help: "EASY backfilling (arrival order, one reservation)",
        order: &order::FCFS,
        backfill: &backfill::EASY,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "creasy",
        aliases: &[],
        help: "CREASY: EASY backfilling over criticality (weight --alpha) plus seniority",
        order: &order::CREASY,
        backfill: &backfill::EASY,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "conservative",
        aliases: &[],
        help: "Conservative backfilling: every waiting job holds a reservation; arrival order",
        order: &order::FCFS,
        backfill: &backfill::CONSERVATIVE,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "conservative-sjf",
        aliases: &[],
        help: "Conservative backfilling, shortest estimate first",
        order: &order::SJF,
        backfill: &backfill::CONSERVATIVE,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "conservative-ljf",
        aliases: &[],
        help: "Conservative backfilling, longest estimate first",
        order: &order::LJF,
        backfill: &backfill::CONSERVATIVE,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "easy-sjbf",
        aliases: &[],
        help: "EASY, backfilling the shortest (estimated) candidates first; FCFS reservation",
        order: &order::FCFS,
        backfill: &backfill::EASY_SJBF,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "easy-sjf",
        aliases: &[],
        help: "EASY over shortest-estimate-first order: the reservation goes to the shortest job (Guim's SJF-backfilling)",
        order: &order::SJF,
        backfill: &backfill::EASY,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "easy-plus",
        aliases: &["easy+"],
        help: "EASY+: plans with per-user predictions (mean of the last two runtimes), corrected when they expire",
        order: &order::FCFS,
        backfill: &backfill::EASY,
        predictor: &predict::USER_LAST_TWO,
    },
    Policy {
        name: "easy-plus-plus",
        aliases: &["easy++"],
        help: "EASY++: EASY+ with shortest-prediction-first backfilling",
        order: &order::FCFS,
        backfill: &backfill::EASY_SJBF,
        predictor: &predict::USER_LAST_TWO,
    },
    Policy {
        name: "dynp",
        aliases: &[],
        help: "Basic dynP: SJF/FCFS/LJF by the queue's mean estimate (--dynp-lower, --dynp-upper)",
        order: &order::FCFS,
        backfill: &backfill::DYNP,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "dynp-simple",
        aliases: &[],
        help: "Self-tuning dynP, simple decider: the best of three full schedules by --quality",
        order: &order::FCFS,
        backfill: &backfill::DYNP_SIMPLE,
        predictor: &predict::ESTIMATE,
    },
    Policy {
        name: "dynp-advanced",
        aliases: &[],
        help: "Self-tuning dynP, advanced decider (keeps the current policy on ties)",
        order: &order::FCFS,
        backfill: &backfill::DYNP_ADVANCED,
        predictor: &predict::ESTIMATE,
    },
];

/// Why a scheduler cannot be built from names and parameters. Messages name parts and
/// parameters by their keys (`alpha`, `order`); front ends say them in their own words.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    /// No preset or part of this kind has this name.
    #[error("unknown {} \"{name}\"; known: {known}", kind.key())]
    Unknown {
        /// What was looked up.
        kind: PartKind,
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A parameter was given to a scheduler none of whose parts takes it (an error, not
    /// silently ignored).
    #[error("{} applies only to {} {takers}", param.key(), kind.key())]
    NotTaken {
        /// The parameter.
        param: Param,
        /// How the scheduler was named (by a preset, or by the part that would take it).
        kind: PartKind,
        /// The presets or parts that take it, joined by " or ".
        takers: String,
    },
    /// Alpha is not a finite number >= 0.
    #[error("alpha must be a finite number >= 0, got {0}")]
    BadAlpha(f64),
    /// The dynP bounds are not 0 <= lower <= upper.
    #[error("dynP bounds must satisfy 0 <= dynp_lower <= dynp_upper, got {lower} and {upper}")]
    BadBounds {
        /// The lower bound, seconds.
        lower: Time,
        /// The upper bound, seconds.
        upper: Time,
    },
    /// A predictor other than the user estimate with a rule that plans with estimates only.
    #[error(
        "predictor {predictor} needs a backfilling rule that plans with predictions ({takers}); backfill {backfill} plans with user estimates, the only runtimes its reservations can rely on"
    )]
    PredictorUnused {
        /// The predictor asked for.
        predictor: &'static str,
        /// The rule.
        backfill: &'static str,
        /// The rules that plan with predictions, joined by ", ".
        takers: String,
    },
    /// A queue order other than arrival with a rule that orders the queue itself (dynP).
    #[error(
        "backfill {backfill} orders the queue itself (its decider switches between FCFS, SJF and LJF); it cannot take order {order}"
    )]
    OrderUnused {
        /// The order asked for.
        order: &'static str,
        /// The rule.
        backfill: &'static str,
    },
}

/// What a user names: a preset and/or parts. Parts given replace the preset's; parts left out
/// come from the preset, or without one from `easy` (arrival order, EASY backfilling, user
/// estimates).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Composition<'a> {
    /// A preset of [`POLICIES`] (a name or alias).
    pub policy: Option<&'a str>,
    /// A queue order of [`crate::order::ORDERS`].
    pub order: Option<&'a str>,
    /// A backfilling rule of [`crate::backfill::RULES`].
    pub backfill: Option<&'a str>,
    /// A predictor of [`crate::predict::PREDICTORS`].
    pub predictor: Option<&'a str>,
}

impl Composition<'_> {
    /// Whether a part is named (the scheduler is composed, not only a preset).
    fn names_parts(&self) -> bool {
        self.order.is_some() || self.backfill.is_some() || self.predictor.is_some()
    }
}

/// A scheduler named by the user (CLI, population files, sweeps), validated, before it is
/// built: a queue order, a backfilling rule and a predictor, and the parameters its parts take
/// (defaults filled in).
#[derive(Debug, Clone)]
pub struct SchedulerSpec {
    registry: &'static Registry,
    order: &'static OrderPart,
    backfill: &'static RulePart,
    predictor: &'static PredictorPart,
    params: PolicyParams,
}

impl PartialEq for SchedulerSpec {
    fn eq(&self, other: &SchedulerSpec) -> bool {
        self.order.name == other.order.name
            && self.backfill.name == other.backfill.name
            && self.predictor.name == other.predictor.name
            && self.params == other.params
    }
}

/// The part of `registry` called `name`.
fn find<B: 'static>(
    registry: impl Iterator<Item = &'static Part<B>> + Clone,
    kind: PartKind,
    name: &str,
) -> Result<&'static Part<B>, PolicyError> {
    registry
        .clone()
        .find(|p| p.name == name)
        .ok_or_else(|| PolicyError::Unknown {
            kind,
            name: name.to_string(),
            known: registry.map(|p| p.name).collect::<Vec<_>>().join(", "),
        })
}

impl SchedulerSpec {
    /// The preset `name` (a name or alias of [`POLICIES`]) with `params`. Errors: an unknown
    /// name; a parameter the preset does not take (checked in [`Param::ALL`]'s order); an
    /// invalid value (alpha not finite or negative; dynP bounds not 0 <= lower <= upper).
    pub fn new(
        registry: &'static Registry,
        name: &str,
        params: PolicyParams,
    ) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::compose(
            registry,
            Composition {
                policy: Some(name),
                ..Composition::default()
            },
            params,
        )
    }

    /// The scheduler `choice` names, with `params`. Beyond [`SchedulerSpec::new`]'s errors: an
    /// unknown part; a predictor other than the user estimate under a rule that plans with
    /// estimates only; a queue order other than arrival under a rule that orders the queue
    /// itself (dynP).
    pub fn compose(
        registry: &'static Registry,
        choice: Composition<'_>,
        params: PolicyParams,
    ) -> Result<SchedulerSpec, PolicyError> {
        let preset = match choice.policy {
            Some(name) => Some(
                registry
                    .find_policy(name)
                    .ok_or_else(|| PolicyError::Unknown {
                        kind: PartKind::Scheduler,
                        name: name.to_string(),
                        known: registry.policy_names(),
                    })?,
            ),
            None => None,
        };
        // Without a preset, the parts of EASY.
        let (base_order, base_backfill, base_predictor) = match preset {
            Some(p) => (p.order, p.backfill, p.predictor),
            None => (&order::FCFS, &backfill::EASY, &predict::ESTIMATE),
        };
        let order = match choice.order {
            Some(name) => find(registry.orders(), PartKind::Order, name)?,
            None => base_order,
        };
        let backfill = match choice.backfill {
            Some(name) => find(registry.rules(), PartKind::Backfill, name)?,
            None => base_backfill,
        };
        let predictor = match choice.predictor {
            Some(name) => find(registry.predictors(), PartKind::Predictor, name)?,
            None => base_predictor,
        };
        let taken = parts_params(order, backfill, predictor);
        for param in Param::ALL {
            if param.given(&params) && !taken.contains(&param) {
                return Err(not_taken(registry, param, &choice));
            }
        }
        let rule = (backfill.build)(&params);
        if predictor.build != Predictor::UserEstimate && !rule.uses_predictions() {
            return Err(PolicyError::PredictorUnused {
                predictor: predictor.name,
                backfill: backfill.name,
                takers: registry
                    .rules()
                    .filter(|r| (r.build)(&PolicyParams::default()).uses_predictions())
                    .map(|r| r.name)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        }
        if rule.orders_queue_itself() && order.name != order::FCFS.name {
            return Err(PolicyError::OrderUnused {
                order: order.name,
                backfill: backfill.name,
            });
        }
        // Keep the parameters the parts take, with their defaults, so specs compare and label
        // by what they build.
        let mut resolved = PolicyParams::default();
        for param in &taken {
            param.resolve(&params, &mut resolved);
        }
        // The rule's own configuration goes with it (the scenario layer gives it only to the
        // rule that reads it, and refuses it for the others, naming its keys)
        resolved.config = params.config.clone();
        if let Some(alpha) = resolved.alpha {
            if !(alpha.is_finite() && alpha >= 0.0) {
                return Err(PolicyError::BadAlpha(alpha));
            }
        }
        if let (Some(lower), Some(upper)) = (resolved.dynp_lower, resolved.dynp_upper) {
            if !(0 <= lower && lower <= upper) {
                return Err(PolicyError::BadBounds { lower, upper });
            }
        }
        Ok(SchedulerSpec {
            registry,
            order,
            backfill,
            predictor,
            params: resolved,
        })
    }

    /// The spec whose [`SchedulerSpec::label`] is `label` (`creasy-6000`, `dynp-7200-9000`,
    /// `dynp-advanced-artww`, `easy`, `sjf+easy-sjbf+exact`), as read back from output files.
    pub fn from_label(
        registry: &'static Registry,
        label: &str,
    ) -> Result<SchedulerSpec, PolicyError> {
        let unknown = || PolicyError::Unknown {
            kind: PartKind::Scheduler,
            name: label.to_string(),
            known: registry.policy_names(),
        };
        let found = if let [order, rule, predictor] = label.split('+').collect::<Vec<_>>()[..] {
            let mut params = PolicyParams::default();
            let parts = (
                parse_part(registry.orders(), order, &mut params),
                parse_part(registry.rules(), rule, &mut params),
                parse_part(registry.predictors(), predictor, &mut params),
            );
            match parts {
                (Some(order), Some(backfill), Some(predictor)) => SchedulerSpec::compose(
                    registry,
                    Composition {
                        policy: None,
                        order: Some(order),
                        backfill: Some(backfill),
                        predictor: Some(predictor),
                    },
                    params,
                )
                .ok(),
                _ => None,
            }
        } else {
            registry.policies().find_map(|policy| {
                let mut params = PolicyParams::default();
                let values = param_values(policy.name, label)?;
                let taken = policy.params();
                if values.len() != taken.len() {
                    return None;
                }
                for (param, text) in taken.iter().zip(&values) {
                    param.parse(text, &mut params)?;
                }
                SchedulerSpec::new(registry, policy.name, params).ok()
            })
        };
        found
            .filter(|spec| spec.label() == label)
            .ok_or_else(unknown)
    }

    /// Builds a fresh scheduler (its backfilling rule starts with no state, told whether the
    /// order is arrival order: [`crate::Backfill::queue_in_arrival_order`]).
    pub fn build(&self) -> Scheduler {
        Scheduler {
            predictor: self.predictor.build,
            ..Scheduler::new(
                (self.order.build)(&self.params),
                (self.backfill.build)(&self.params),
            )
        }
    }

    /// The preset these parts make, if any (the first of its registry's with these parts).
    pub fn preset(&self) -> Option<&'static Policy> {
        self.registry.policies().find(|p| {
            p.order.name == self.order.name
                && p.backfill.name == self.backfill.name
                && p.predictor.name == self.predictor.name
        })
    }

    /// A short label for tables and file names. A preset's: its name, then each parameter it
    /// takes: `fcfs`, `easy`, `creasy-6000`, `conservative-sjf`, `easy-plus-plus`,
    /// `dynp-7200-9000`, `dynp-advanced-artww`. Any other composition: its order, rule and
    /// predictor joined by `+`, each with its parameters: `sjf+easy-sjbf+exact`,
    /// `creasy-3000+conservative+estimate`.
    pub fn label(&self) -> String {
        match self.preset() {
            Some(policy) => {
                let mut label = policy.name.to_string();
                for param in policy.params() {
                    label.push('-');
                    label.push_str(&param.label(&self.params));
                }
                label
            }
            None => format!(
                "{}+{}+{}",
                self.order.label(&self.params),
                self.backfill.label(&self.params),
                self.predictor.label(&self.params)
            ),
        }
    }

    /// The queue order.
    pub fn order(&self) -> &'static OrderPart {
        self.order
    }

    /// The backfilling rule.
    pub fn backfill(&self) -> &'static RulePart {
        self.backfill
    }

    /// The runtime predictor.
    pub fn predictor(&self) -> &'static PredictorPart {
        self.predictor
    }

    /// Whether the backfilling rule orders the queue itself (dynP), so a queue order from
    /// outside the registry would not be used.
    pub fn orders_queue_itself(&self) -> bool {
        (self.backfill.build)(&self.params).orders_queue_itself()
    }

    /// A fresh backfilling rule of this spec, for a caller that reads what the rule says of
    /// itself before a run ([`crate::Backfill::columns`], [`crate::Backfill::as_any`]).
    pub fn build_rule(&self) -> Box<dyn Backfill> {
        (self.backfill.build)(&self.params)
    }

    /// How the rule's per-job annotations are written, if it makes any
    /// ([`crate::Backfill::columns`]).
    pub fn columns(&self) -> Option<std::sync::Arc<dyn crate::Columns>> {
        self.build_rule().columns()
    }

    /// The registry the spec was named in.
    pub fn registry(&self) -> &'static Registry {
        self.registry
    }

    /// The parameters: those the parts take, with defaults filled in; the others `None`.
    pub fn params(&self) -> &PolicyParams {
        &self.params
    }
}

/// The parameter values of `label` if it starts with `name` (`creasy-6000` with `creasy`:
/// `["6000"]`; `easy` with `easy`: none).
fn param_values<'l>(name: &str, label: &'l str) -> Option<Vec<&'l str>> {
    match label.strip_prefix(name)? {
        "" => Some(Vec::new()),
        rest => Some(rest.strip_prefix('-')?.split('-').collect()),
    }
}

/// The part of `registry` whose label `text` is (its name, then its parameters), its
/// parameters set in `params`; the longest matching name wins (`easy-sjbf` over `easy`).
fn parse_part<B: 'static>(
    registry: impl Iterator<Item = &'static Part<B>>,
    text: &str,
    params: &mut PolicyParams,
) -> Option<&'static str> {
    let mut candidates: Vec<&Part<B>> = registry.collect();
    candidates.sort_by_key(|p| std::cmp::Reverse(p.name.len()));
    candidates.into_iter().find_map(|part| {
        let values = param_values(part.name, text)?;
        if values.len() != part.params.len() {
            return None;
        }
        for (param, value) in part.params.iter().zip(&values) {
            param.parse(value, params)?;
        }
        Some(part.name)
    })
}

/// The error for `param` given to a scheduler that does not take it: the presets that take it
/// when the scheduler was named by a preset alone, else the parts.
fn not_taken(registry: &Registry, param: Param, choice: &Composition<'_>) -> PolicyError {
    let join = |names: Vec<&str>| names.join(" or ");
    if !choice.names_parts() {
        return PolicyError::NotTaken {
            param,
            kind: PartKind::Scheduler,
            takers: join(
                registry
                    .policies()
                    .filter(|p| p.takes(param))
                    .map(|p| p.name)
                    .collect(),
            ),
        };
    }
    let orders: Vec<&str> = registry
        .orders()
        .filter(|p| p.takes(param))
        .map(|p| p.name)
        .collect();
    let (kind, takers) = if orders.is_empty() {
        (
            PartKind::Backfill,
            registry
                .rules()
                .filter(|p| p.takes(param))
                .map(|p| p.name)
                .collect(),
        )
    } else {
        (PartKind::Order, orders)
    };
    PolicyError::NotTaken {
        param,
        kind,
        takers: join(takers),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed test should panic

    use super::*;

    fn spec(name: &str, params: PolicyParams) -> SchedulerSpec {
        SchedulerSpec::new(&CORE_REGISTRY, name, params).unwrap()
    }

    fn composed(
        order: &str,
        backfill: &str,
        predictor: &str,
    ) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::compose(
            &CORE_REGISTRY,
            Composition {
                policy: None,
                order: Some(order),
                backfill: Some(backfill),
                predictor: Some(predictor),
            },
            PolicyParams::default(),
        )
    }

    #[test]
    fn labels_are_todays_strings() {
        // Labels appear in output files: today's policies keep theirs (a new policy may be
        // registered anywhere in the list without touching this test).
        let none = PolicyParams::default();
        for (name, label) in [
            ("fcfs", "fcfs"),
            ("easy", "easy"),
            ("creasy", "creasy-6000"),
            ("conservative", "conservative"),
            ("conservative-sjf", "conservative-sjf"),
            ("conservative-ljf", "conservative-ljf"),
            ("easy-sjbf", "easy-sjbf"),
            ("easy-sjf", "easy-sjf"),
            ("easy-plus", "easy-plus"),
            ("easy-plus-plus", "easy-plus-plus"),
            ("dynp", "dynp-7200-9000"),
            ("dynp-simple", "dynp-simple-artww"),
            ("dynp-advanced", "dynp-advanced-artww"),
        ] {
            assert_eq!(spec(name, none.clone()).label(), label);
        }
        let alpha = PolicyParams {
            alpha: Some(1500.5),
            ..none.clone()
        };
        assert_eq!(spec("creasy", alpha).label(), "creasy-1500.5");
        let bounds = PolicyParams {
            dynp_lower: Some(3600),
            dynp_upper: Some(5000),
            ..none.clone()
        };
        assert_eq!(spec("dynp", bounds).label(), "dynp-3600-5000");
        let art = PolicyParams {
            quality: Some(Quality::ResponseTime),
            ..none.clone()
        };
        assert_eq!(spec("dynp-advanced", art).label(), "dynp-advanced-art");
        assert_eq!(spec("easy++", none.clone()).label(), "easy-plus-plus");
        assert_eq!(spec("easy+", none).preset().unwrap().name, "easy-plus");
    }

    #[test]
    fn a_composition_of_a_presets_parts_is_that_preset() {
        for policy in POLICIES {
            let spec = composed(
                policy.order.name,
                policy.backfill.name,
                policy.predictor.name,
            )
            .unwrap();
            assert_eq!(
                spec,
                SchedulerSpec::new(&CORE_REGISTRY, policy.name, PolicyParams::default()).unwrap()
            );
            assert_eq!(spec.preset().map(|p| p.name), Some(policy.name));
        }
        // A preset with a part replaced: EASY over SJF is easy-sjf.
        let spec = SchedulerSpec::compose(
            &CORE_REGISTRY,
            Composition {
                policy: Some("easy"),
                order: Some("sjf"),
                ..Composition::default()
            },
            PolicyParams::default(),
        )
        .unwrap();
        assert_eq!(spec.label(), "easy-sjf");
    }

    #[test]
    fn other_compositions_are_labelled_by_their_parts() {
        assert_eq!(
            composed("sjf", "easy-sjbf", "exact").unwrap().label(),
            "sjf+easy-sjbf+exact"
        );
        let creasy = SchedulerSpec::compose(
            &CORE_REGISTRY,
            Composition {
                order: Some("creasy"),
                backfill: Some("conservative"),
                ..Composition::default()
            },
            PolicyParams {
                alpha: Some(3000.0),
                ..PolicyParams::default()
            },
        )
        .unwrap();
        assert_eq!(creasy.label(), "creasy-3000+conservative+estimate");
    }

    /// Every valid composition of the registries' parts, with each parameter variant.
    fn every_spec() -> Vec<SchedulerSpec> {
        let mut specs = Vec::new();
        for order in order::ORDERS {
            for rule in backfill::RULES {
                for predictor in predict::PREDICTORS {
                    let mut variants = vec![PolicyParams::default()];
                    let taken = parts_params(order, rule, predictor);
                    if taken.contains(&Param::Alpha) {
                        variants.push(PolicyParams {
                            alpha: Some(0.25),
                            ..Default::default()
                        });
                    }
                    if taken.contains(&Param::DynpLower) {
                        variants.push(PolicyParams {
                            dynp_lower: Some(0),
                            dynp_upper: Some(60),
                            ..Default::default()
                        });
                    }
                    if taken.contains(&Param::Quality) {
                        for quality in Quality::ALL {
                            variants.push(PolicyParams {
                                quality: Some(quality),
                                ..Default::default()
                            });
                        }
                    }
                    for params in variants {
                        let choice = Composition {
                            policy: None,
                            order: Some(order.name),
                            backfill: Some(rule.name),
                            predictor: Some(predictor.name),
                        };
                        if let Ok(spec) = CORE_REGISTRY.compose(choice, params) {
                            specs.push(spec);
                        }
                    }
                }
            }
        }
        specs
    }

    #[test]
    fn every_label_round_trips() {
        let specs = every_spec();
        assert!(specs.len() > 30, "{}", specs.len());
        for spec in specs {
            let label = spec.label();
            assert_eq!(
                SchedulerSpec::from_label(&CORE_REGISTRY, &label),
                Ok(spec.clone()),
                "{label}"
            );
            if let Some(policy) = spec.preset() {
                assert!(label.starts_with(policy.name), "{label}");
                assert_eq!(
                    SchedulerSpec::new(&CORE_REGISTRY, policy.name, spec.params().clone()),
                    Ok(spec.clone())
                );
                for alias in policy.aliases {
                    assert_eq!(
                        SchedulerSpec::new(&CORE_REGISTRY, alias, spec.params().clone()),
                        Ok(spec.clone()),
                        "{alias}"
                    );
                }
            }
        }
        assert!(SchedulerSpec::from_label(&CORE_REGISTRY, "creasy").is_err());
        assert!(SchedulerSpec::from_label(&CORE_REGISTRY, "easy-7").is_err());
        assert!(SchedulerSpec::from_label(&CORE_REGISTRY, "magic").is_err());
        assert!(SchedulerSpec::from_label(&CORE_REGISTRY, "sjf+easy").is_err());
        assert!(
            SchedulerSpec::from_label(&CORE_REGISTRY, "fcfs+easy+estimate").is_err(),
            "a preset's label is its name"
        );
    }

    #[test]
    fn names_are_unique_in_each_registry() {
        fn unique(mut names: Vec<&str>) {
            let all = names.len();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), all);
        }
        unique(
            POLICIES
                .iter()
                .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()))
                .collect(),
        );
        unique(order::ORDERS.iter().map(|p| p.name).collect());
        unique(backfill::RULES.iter().map(|p| p.name).collect());
        unique(predict::PREDICTORS.iter().map(|p| p.name).collect());
        for registry in [
            order::ORDERS.iter().map(|p| p.name).collect::<Vec<_>>(),
            backfill::RULES.iter().map(|p| p.name).collect(),
            predict::PREDICTORS.iter().map(|p| p.name).collect(),
        ] {
            assert!(registry.iter().all(|n| !n.contains('+')), "{registry:?}");
        }
    }

    #[test]
    fn parameters_go_only_to_policies_that_take_them() {
        let err = |name: &str, params| {
            SchedulerSpec::new(&CORE_REGISTRY, name, params)
                .unwrap_err()
                .to_string()
        };
        let alpha = PolicyParams {
            alpha: Some(3.0),
            ..Default::default()
        };
        assert_eq!(
            err("easy", alpha.clone()),
            "alpha applies only to scheduler creasy"
        );
        let lower = PolicyParams {
            dynp_lower: Some(3),
            ..Default::default()
        };
        assert_eq!(
            err("dynp-simple", lower),
            "dynp_lower applies only to scheduler dynp"
        );
        let quality = PolicyParams {
            quality: Some(Quality::Makespan),
            ..Default::default()
        };
        assert_eq!(
            err("easy+", quality),
            "quality applies only to scheduler dynp-simple or dynp-advanced"
        );
        assert_eq!(
            err(
                "creasy",
                PolicyParams {
                    alpha: Some(-5.0),
                    ..Default::default()
                }
            ),
            "alpha must be a finite number >= 0, got -5"
        );
        assert_eq!(
            err(
                "dynp",
                PolicyParams {
                    dynp_lower: Some(5),
                    dynp_upper: Some(3),
                    ..Default::default()
                }
            ),
            "dynP bounds must satisfy 0 <= dynp_lower <= dynp_upper, got 5 and 3"
        );
        assert!(err("magic", PolicyParams::default()).starts_with("unknown scheduler \"magic\""));
        // Named by parts: the parts that take it.
        let e = SchedulerSpec::compose(
            &CORE_REGISTRY,
            Composition {
                order: Some("sjf"),
                ..Composition::default()
            },
            alpha,
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "alpha applies only to order creasy");
    }

    #[test]
    fn parts_that_cannot_work_together_are_refused() {
        let e = composed("fcfs", "conservative", "user-last-two").unwrap_err();
        assert!(
            matches!(e, PolicyError::PredictorUnused { ref takers, .. } if takers == "easy, easy-sjbf"),
            "{e}"
        );
        let e = composed("sjf", "dynp", "estimate").unwrap_err();
        assert!(matches!(e, PolicyError::OrderUnused { .. }), "{e}");
        let e = composed("random", "easy", "estimate").unwrap_err();
        let known: Vec<&str> = crate::order::ORDERS.iter().map(|p| p.name).collect();
        assert_eq!(
            e.to_string(),
            format!("unknown order \"random\"; known: {}", known.join(", "))
        );
        assert!(known.starts_with(&["fcfs", "sjf", "ljf", "creasy"]));
    }
}
