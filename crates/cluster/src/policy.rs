//! What a user can ask for: a scheduler composed of three registered parts, a queue order
//! ([`crate::order::ORDERS`]), a backfilling rule ([`crate::backfill::RULES`]) and a runtime
//! predictor ([`crate::predict::PREDICTORS`]), with their parameters, defaults and validation.
//! The papers' schedulers are named presets of such compositions ([`POLICIES`]).
//!
//! A new queue order, backfilling rule or predictor becomes selectable by name with one entry
//! in its registry; the CLI's `--order`, `--backfill` and `--predictor`, population files,
//! labels and the property tests all iterate over the registries. A new preset is one entry in
//! [`POLICIES`].

use crate::Scheduler;
use crate::backfill::{self, Backfill};
use crate::order::{self, QueueOrder};
use crate::params::{AnyParams, BadValue, ParamValues, Params};
use crate::predict::{self, Predictor};

/// One registered part of a scheduler: a queue order, a backfilling rule or a runtime predictor,
/// with what `build` makes of it.
#[derive(Debug)]
pub struct Part<B: 'static> {
    /// The name files and flags use (`sjf`, `easy-sjbf`, `user-last-two`); labels start with it.
    pub name: &'static str,
    /// One line on what it does (shown by `--help` and `sitesim schedulers`).
    pub help: &'static str,
    /// The parameters it takes: the keys of its own serde struct
    /// ([`crate::params::PartParams`]), or [`Params::NONE`].
    pub params: Params,
    /// What it is built from: a constructor taking its checked parameters (their defaults
    /// filled in; `get` on them gives its struct), or, for a predictor, the
    /// [`Predictor`] itself.
    pub build: B,
}

impl<B> Part<B> {
    /// Whether the part takes the parameter `key`.
    pub fn takes(&self, key: &str) -> bool {
        self.params.takes(key)
    }

    /// The part's label: its name, then the value of each parameter its label writes
    /// (`creasy-6000`).
    fn label(&self, params: &dyn AnyParams) -> String {
        let values = params.values();
        let mut label = self.name.to_string();
        for key in (self.params.labelled)() {
            label.push('-');
            label.push_str(
                &values
                    .get(*key)
                    .map_or_else(String::new, crate::params::label_of_value),
            );
        }
        label
    }

    /// The part's checked parameters from the values given (defaults for the keys left out).
    fn parse(&self, given: &ParamValues) -> Result<Box<dyn AnyParams>, PolicyError> {
        self.params
            .parse(given, self.name)
            .map_err(PolicyError::BadValue)
    }
}

/// A registered queue order ([`crate::order::ORDERS`]).
pub type OrderPart = Part<fn(&dyn AnyParams) -> Box<dyn QueueOrder>>;
/// A registered backfilling rule ([`crate::backfill::RULES`]).
pub type RulePart = Part<fn(&dyn AnyParams) -> Box<dyn Backfill>>;
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
    /// Whether one of the policy's parts takes the parameter `key`.
    pub fn takes(&self, key: &str) -> bool {
        self.order.takes(key) || self.backfill.takes(key) || self.predictor.takes(key)
    }

    /// The keys its parts' labels write, in label order (order's, rule's, predictor's).
    fn labelled(&self) -> Vec<&'static str> {
        [
            self.order.params,
            self.backfill.params,
            self.predictor.params,
        ]
        .iter()
        .flat_map(|p| (p.labelled)().iter().copied())
        .collect()
    }

    /// Whether `name` names this policy (its name or an alias).
    pub fn is_named(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
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

    /// The preset `name` with the parameter values `given` ([`SchedulerSpec::new`]).
    pub fn spec(
        &'static self,
        name: &str,
        given: &ParamValues,
    ) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::new(self, name, given)
    }

    /// The scheduler `choice` names ([`SchedulerSpec::compose`]).
    pub fn compose(
        &'static self,
        choice: Composition<'_>,
        given: &ParamValues,
    ) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::compose(self, choice, given)
    }

    /// The scheduler a label names ([`SchedulerSpec::from_label`]).
    pub fn from_label(&'static self, label: &str) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::from_label(self, label)
    }

    /// Every part's parameters, in registry order (orders', rules', predictors').
    fn all_params(&self) -> impl Iterator<Item = Params> {
        self.orders()
            .map(|p| p.params)
            .chain(self.rules().map(|p| p.params))
            .chain(self.predictors().map(|p| p.params))
    }

    /// Every parameter key a registered part takes, each once, in registry order (orders',
    /// rules', predictors').
    pub fn param_keys(&self) -> Vec<&'static str> {
        self.param_keys_shown()
            .into_iter()
            .map(|(key, _)| key)
            .collect()
    }

    /// Every parameter key a registered part takes, each once, in registry order, with whether
    /// it shows as `null` where the site is written back when left out
    /// ([`crate::params::PartParams::SHOWN_WHEN_NOT_GIVEN`], of the first part that takes it).
    pub fn param_keys_shown(&self) -> Vec<(&'static str, bool)> {
        let mut keys: Vec<(&'static str, bool)> = Vec::new();
        for params in self.all_params() {
            for key in (params.keys)() {
                if !keys.iter().any(|(k, _)| k == key) {
                    keys.push((key, params.shown_when_not_given));
                }
            }
        }
        keys
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
    #[error("{param} applies only to {} {takers}", kind.key())]
    NotTaken {
        /// The parameter's key.
        param: String,
        /// How the scheduler was named (by a preset, or by the part that would take it).
        kind: PartKind,
        /// The presets or parts that take it, joined by " or ".
        takers: String,
    },
    /// No registered part takes a parameter of this key.
    #[error("unknown scheduler parameter \"{key}\"; known: {known}")]
    UnknownParam {
        /// The key given.
        key: String,
        /// Every registered part's keys, comma-separated.
        known: String,
    },
    /// A value its part refuses (alpha negative, dynP bounds the wrong way round).
    #[error("{}", .0.message)]
    BadValue(BadValue),
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
/// built: a queue order, a backfilling rule and a predictor, each with its checked parameters
/// (defaults filled in).
#[derive(Debug, Clone)]
pub struct SchedulerSpec {
    registry: &'static Registry,
    order: &'static OrderPart,
    backfill: &'static RulePart,
    predictor: &'static PredictorPart,
    /// The order's, the rule's and the predictor's parameters.
    params: [Box<dyn AnyParams>; 3],
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
    /// The preset `name` (a name or alias of [`POLICIES`]) with the parameter values `given`.
    /// Errors: an unknown name; a parameter the preset does not take (checked in key order); a
    /// value its part refuses (alpha not finite or negative; dynP bounds not 0 <= lower <=
    /// upper).
    pub fn new(
        registry: &'static Registry,
        name: &str,
        given: &ParamValues,
    ) -> Result<SchedulerSpec, PolicyError> {
        SchedulerSpec::compose(
            registry,
            Composition {
                policy: Some(name),
                ..Composition::default()
            },
            given,
        )
    }

    /// The scheduler `choice` names, with the parameter values `given`. Beyond
    /// [`SchedulerSpec::new`]'s errors: an unknown part; a predictor other than the user
    /// estimate under a rule that plans with estimates only; a queue order other than arrival
    /// under a rule that orders the queue itself (dynP).
    pub fn compose(
        registry: &'static Registry,
        choice: Composition<'_>,
        given: &ParamValues,
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
        for key in given.keys() {
            if !(order.takes(key) || backfill.takes(key) || predictor.takes(key)) {
                return Err(not_taken(registry, key, &choice));
            }
        }
        let params = [
            order.parse(given)?,
            backfill.parse(given)?,
            predictor.parse(given)?,
        ];
        let rule = (backfill.build)(params[1].as_ref());
        if predictor.build != Predictor::UserEstimate && !rule.uses_predictions() {
            return Err(PolicyError::PredictorUnused {
                predictor: predictor.name,
                backfill: backfill.name,
                takers: registry
                    .rules()
                    .filter(|r| {
                        r.parse(&ParamValues::new())
                            .is_ok_and(|p| (r.build)(p.as_ref()).uses_predictions())
                    })
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
        Ok(SchedulerSpec {
            registry,
            order,
            backfill,
            predictor,
            params,
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
            let mut given = ParamValues::new();
            let parts = (
                parse_part(registry.orders(), order, &mut given),
                parse_part(registry.rules(), rule, &mut given),
                parse_part(registry.predictors(), predictor, &mut given),
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
                    &given,
                )
                .ok(),
                _ => None,
            }
        } else {
            registry.policies().find_map(|policy| {
                let values = param_values(policy.name, label)?;
                let given = labelled_values(&policy.labelled(), &values)?;
                SchedulerSpec::new(registry, policy.name, &given).ok()
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
                (self.order.build)(self.params[0].as_ref()),
                self.build_rule(),
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

    /// A short label for tables and file names. A preset's: its name, then the value of each
    /// parameter its parts' labels write: `fcfs`, `easy`, `creasy-6000`, `conservative-sjf`,
    /// `easy-plus-plus`, `dynp-7200-9000`, `dynp-advanced-artww`. Other compositions: each
    /// part's label, joined by `+` (`sjf+easy-sjbf+exact`, `creasy-3000+conservative+estimate`).
    pub fn label(&self) -> String {
        match self.preset() {
            Some(policy) => {
                let values = self.values();
                let mut label = policy.name.to_string();
                for key in policy.labelled() {
                    label.push('-');
                    label.push_str(
                        &values
                            .get(key)
                            .map_or_else(String::new, crate::params::label_of_value),
                    );
                }
                label
            }
            None => format!(
                "{}+{}+{}",
                self.order.label(self.params[0].as_ref()),
                self.backfill.label(self.params[1].as_ref()),
                self.predictor.label(self.params[2].as_ref())
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
        self.build_rule().orders_queue_itself()
    }

    /// A fresh backfilling rule of this spec, with its parameters (for a caller that replaces
    /// the queue order, or reads what the rule says of itself before a run:
    /// [`crate::Backfill::columns`], [`crate::Backfill::as_any`]).
    pub fn build_rule(&self) -> Box<dyn Backfill> {
        (self.backfill.build)(self.params[1].as_ref())
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

    /// The parameter values the parts are built with (defaults filled in), by key: given
    /// again to [`SchedulerSpec::compose`] with the same parts, they name this spec.
    pub fn values(&self) -> ParamValues {
        let mut values = ParamValues::new();
        for params in &self.params {
            values.extend(params.values());
        }
        values
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

/// The values a label writes, by the keys it writes them for (`None` if the counts differ).
fn labelled_values(keys: &[&str], values: &[&str]) -> Option<ParamValues> {
    if keys.len() != values.len() {
        return None;
    }
    Some(
        keys.iter()
            .zip(values)
            .map(|(key, text)| (key.to_string(), crate::params::value_of_label(text)))
            .collect(),
    )
}

/// The part of `registry` whose label `text` is (its name, then its parameters), its
/// parameters added to `given`; the longest matching name wins (`easy-sjbf` over `easy`).
fn parse_part<B: 'static>(
    registry: impl Iterator<Item = &'static Part<B>>,
    text: &str,
    given: &mut ParamValues,
) -> Option<&'static str> {
    let mut candidates: Vec<&Part<B>> = registry.collect();
    candidates.sort_by_key(|p| std::cmp::Reverse(p.name.len()));
    candidates.into_iter().find_map(|part| {
        let values = param_values(part.name, text)?;
        let own = labelled_values((part.params.labelled)(), &values)?;
        given.extend(own);
        Some(part.name)
    })
}

/// The names of the parts that take the parameter `key`.
fn takers<B: 'static>(
    parts: impl Iterator<Item = &'static Part<B>>,
    key: &str,
) -> Vec<&'static str> {
    parts.filter(|p| p.takes(key)).map(|p| p.name).collect()
}

/// The error for the parameter `key` given to a scheduler that does not take it: the presets
/// that take it when the scheduler was named by a preset alone, else the parts; a key no
/// registered part takes is unknown.
fn not_taken(registry: &Registry, key: &str, choice: &Composition<'_>) -> PolicyError {
    let join = |names: Vec<&str>| names.join(" or ");
    let known = registry.param_keys();
    if !known.contains(&key) {
        return PolicyError::UnknownParam {
            key: key.to_string(),
            known: known.join(", "),
        };
    }
    let presets: Vec<&str> = registry
        .policies()
        .filter(|p| p.takes(key))
        .map(|p| p.name)
        .collect();
    // Named by a preset alone: the presets that take it (if any preset does; else the parts)
    if !choice.names_parts() && !presets.is_empty() {
        return PolicyError::NotTaken {
            param: key.to_string(),
            kind: PartKind::Scheduler,
            takers: join(presets),
        };
    }
    // Else the parts that take it: orders', else rules', else predictors'.
    let (kind, takers) = [
        (PartKind::Order, takers(registry.orders(), key)),
        (PartKind::Backfill, takers(registry.rules(), key)),
        (PartKind::Predictor, takers(registry.predictors(), key)),
    ]
    .into_iter()
    .find(|(_, names)| !names.is_empty())
    .unwrap_or((PartKind::Predictor, Vec::new()));
    PolicyError::NotTaken {
        param: key.to_string(),
        kind,
        takers: join(takers),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed test should panic

    use super::*;

    fn spec(name: &str, given: &ParamValues) -> SchedulerSpec {
        SchedulerSpec::new(&CORE_REGISTRY, name, given).unwrap()
    }

    /// Parameter values as given (`alpha = 3`).
    fn given(pairs: &[(&str, toml::Value)]) -> ParamValues {
        pairs
            .iter()
            .map(|(key, value)| (key.to_string(), value.clone()))
            .collect()
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
            &ParamValues::new(),
        )
    }

    #[test]
    fn labels_are_todays_strings() {
        // Labels appear in output files: today's policies keep theirs (a new policy may be
        // registered anywhere in the list without touching this test).
        let none = ParamValues::new();
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
            assert_eq!(spec(name, &none).label(), label);
        }
        let alpha = given(&[("alpha", 1500.5.into())]);
        assert_eq!(spec("creasy", &alpha).label(), "creasy-1500.5");
        let bounds = given(&[("dynp_lower", 3600.into()), ("dynp_upper", 5000.into())]);
        assert_eq!(spec("dynp", &bounds).label(), "dynp-3600-5000");
        let art = given(&[("quality", "art".into())]);
        assert_eq!(spec("dynp-advanced", &art).label(), "dynp-advanced-art");
        assert_eq!(spec("easy++", &none).label(), "easy-plus-plus");
        assert_eq!(spec("easy+", &none).preset().unwrap().name, "easy-plus");
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
                SchedulerSpec::new(&CORE_REGISTRY, policy.name, &ParamValues::new()).unwrap()
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
            &ParamValues::new(),
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
            &given(&[("alpha", 3000.0.into())]),
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
                    let mut variants = vec![ParamValues::new()];
                    let takes = |key| order.takes(key) || rule.takes(key) || predictor.takes(key);
                    if takes("alpha") {
                        variants.push(given(&[("alpha", 0.25.into())]));
                    }
                    if takes("dynp_lower") {
                        variants.push(given(&[
                            ("dynp_lower", 0.into()),
                            ("dynp_upper", 60.into()),
                        ]));
                    }
                    if takes("quality") {
                        for quality in crate::Quality::ALL {
                            variants.push(given(&[("quality", quality.name().into())]));
                        }
                    }
                    for params in variants {
                        let choice = Composition {
                            policy: None,
                            order: Some(order.name),
                            backfill: Some(rule.name),
                            predictor: Some(predictor.name),
                        };
                        if let Ok(spec) = CORE_REGISTRY.compose(choice, &params) {
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
                    SchedulerSpec::new(&CORE_REGISTRY, policy.name, &spec.values()),
                    Ok(spec.clone())
                );
                for alias in policy.aliases {
                    assert_eq!(
                        SchedulerSpec::new(&CORE_REGISTRY, alias, &spec.values()),
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
        let err = |name: &str, given: ParamValues| {
            SchedulerSpec::new(&CORE_REGISTRY, name, &given)
                .unwrap_err()
                .to_string()
        };
        let alpha = given(&[("alpha", 3.0.into())]);
        assert_eq!(
            err("easy", alpha.clone()),
            "alpha applies only to scheduler creasy"
        );
        assert_eq!(
            err("dynp-simple", given(&[("dynp_lower", 3.into())])),
            "dynp_lower applies only to scheduler dynp"
        );
        assert_eq!(
            err("easy+", given(&[("quality", "makespan".into())])),
            "quality applies only to scheduler dynp-simple or dynp-advanced"
        );
        assert_eq!(
            err("creasy", given(&[("alpha", (-5.0).into())])),
            "alpha must be a finite number >= 0, got -5"
        );
        assert_eq!(
            err(
                "dynp",
                given(&[("dynp_lower", 5.into()), ("dynp_upper", 3.into())])
            ),
            "dynP bounds must satisfy 0 <= dynp_lower <= dynp_upper, got 5 and 3"
        );
        assert_eq!(
            err("creasy", given(&[("alpha", "high".into())])),
            "alpha: invalid type: string \"high\", expected f64"
        );
        assert_eq!(
            err("easy", given(&[("alphaa", 3.into())])),
            format!(
                "unknown scheduler parameter \"alphaa\"; known: {}",
                CORE_REGISTRY.param_keys().join(", ")
            )
        );
        let keys = CORE_REGISTRY.param_keys();
        for key in ["alpha", "dynp_lower", "dynp_upper", "quality"] {
            assert!(keys.contains(&key), "{keys:?}");
        }
        assert!(err("magic", ParamValues::new()).starts_with("unknown scheduler \"magic\""));
        // Named by parts: the parts that take it.
        let e = SchedulerSpec::compose(
            &CORE_REGISTRY,
            Composition {
                order: Some("sjf"),
                ..Composition::default()
            },
            &alpha,
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
