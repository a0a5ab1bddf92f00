//! The registry of named scheduling policies: what the CLI, population files and sweeps can
//! ask for, with their parameters, defaults and validation.
//!
//! A new queue order or backfilling rule becomes selectable by name with one entry in
//! [`POLICIES`]; the CLI's `--scheduler` values, `sitesim schedulers`, the labels in output
//! files and the property tests all iterate over it.

use crate::backfill::BackfillOrder;
use crate::dynp::{self, Decider, DynP, Quality};
use crate::predict::Predictor;
use crate::{ListOrder, Scheduler, Time};

/// A parameter a policy may take.
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

    /// The command-line flag: `--alpha`, `--dynp-lower`, `--dynp-upper`, `--quality`.
    pub fn flag(self) -> &'static str {
        match self {
            Param::Alpha => "--alpha",
            Param::DynpLower => "--dynp-lower",
            Param::DynpUpper => "--dynp-upper",
            Param::Quality => "--quality",
        }
    }

    /// The key in population and sweep files: `alpha`, `dynp_lower`, `dynp_upper`, `quality`.
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
}

/// The parameters given for a policy; `None` means "not given" (the default applies, and a
/// policy that does not take the parameter does not complain).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PolicyParams {
    /// CREASY's alpha.
    pub alpha: Option<f64>,
    /// Basic dynP's lower bound, seconds.
    pub dynp_lower: Option<Time>,
    /// Basic dynP's upper bound, seconds.
    pub dynp_upper: Option<Time>,
    /// Self-tuning dynP's quality.
    pub quality: Option<Quality>,
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
}

/// A named scheduling policy: an entry of [`POLICIES`].
#[derive(Debug)]
pub struct Policy {
    /// The name the CLI and population files use (`easy-sjbf`); labels start with it.
    pub name: &'static str,
    /// Other accepted names (`easy+` for `easy-plus`).
    pub aliases: &'static [&'static str],
    /// One line on what it does (shown by `--help` and `sitesim schedulers`).
    pub help: &'static str,
    /// The parameters it takes, in the order its label writes them.
    pub params: &'static [Param],
    /// Builds a fresh scheduler; parameters not given take their defaults.
    pub build: fn(&PolicyParams) -> Scheduler,
}

impl Policy {
    /// Whether the policy takes `param`.
    pub fn takes(&self, param: Param) -> bool {
        self.params.contains(&param)
    }

    /// Whether `name` names this policy (its name or an alias).
    pub fn is_named(&self, name: &str) -> bool {
        self.name == name || self.aliases.contains(&name)
    }
}

/// Every policy, in the order `sitesim schedulers` and `--help` list them.
pub static POLICIES: &[Policy] = &[
    Policy {
        name: "fcfs",
        aliases: &[],
        help: "First come, first served, no backfilling",
        params: &[],
        build: |_| Scheduler::fcfs(),
    },
    Policy {
        name: "easy",
        aliases: &[],
        help: "EASY backfilling (arrival order, one reservation)",
        params: &[],
        build: |_| Scheduler::easy(),
    },
    Policy {
        name: "creasy",
        aliases: &[],
        help: "CREASY: EASY backfilling over criticality (weight --alpha) plus seniority",
        params: &[Param::Alpha],
        build: |p| Scheduler::creasy(p.alpha()),
    },
    Policy {
        name: "conservative",
        aliases: &[],
        help: "Conservative backfilling: every waiting job holds a reservation; arrival order",
        params: &[],
        build: |_| Scheduler::conservative(ListOrder::Fcfs),
    },
    Policy {
        name: "conservative-sjf",
        aliases: &[],
        help: "Conservative backfilling, shortest estimate first",
        params: &[],
        build: |_| Scheduler::conservative(ListOrder::Sjf),
    },
    Policy {
        name: "conservative-ljf",
        aliases: &[],
        help: "Conservative backfilling, longest estimate first",
        params: &[],
        build: |_| Scheduler::conservative(ListOrder::Ljf),
    },
    Policy {
        name: "easy-sjbf",
        aliases: &[],
        help: "EASY, backfilling the shortest (estimated) candidates first; FCFS reservation",
        params: &[],
        build: |_| Scheduler::easy_with(Predictor::UserEstimate, BackfillOrder::ShortestFirst),
    },
    Policy {
        name: "easy-sjf",
        aliases: &[],
        help: "EASY over shortest-estimate-first order: the reservation goes to the shortest job (Guim's SJF-backfilling)",
        params: &[],
        build: |_| Scheduler {
            order: ListOrder::Sjf.build(),
            ..Scheduler::easy()
        },
    },
    Policy {
        name: "easy-plus",
        aliases: &["easy+"],
        help: "EASY+: plans with per-user predictions (mean of the last two runtimes), corrected when they expire",
        params: &[],
        build: |_| Scheduler::easy_with(Predictor::RecentUserRuntimes, BackfillOrder::Queue),
    },
    Policy {
        name: "easy-plus-plus",
        aliases: &["easy++"],
        help: "EASY++: EASY+ with shortest-prediction-first backfilling",
        params: &[],
        build: |_| {
            Scheduler::easy_with(Predictor::RecentUserRuntimes, BackfillOrder::ShortestFirst)
        },
    },
    Policy {
        name: "dynp",
        aliases: &[],
        help: "Basic dynP: SJF/FCFS/LJF by the queue's mean estimate (--dynp-lower, --dynp-upper)",
        params: &[Param::DynpLower, Param::DynpUpper],
        build: |p| {
            Scheduler::dynp(DynP::Basic {
                lower: p.dynp_lower(),
                upper: p.dynp_upper(),
            })
        },
    },
    Policy {
        name: "dynp-simple",
        aliases: &[],
        help: "Self-tuning dynP, simple decider: the best of three full schedules by --quality",
        params: &[Param::Quality],
        build: |p| {
            Scheduler::dynp(DynP::SelfTuning {
                quality: p.quality(),
                decider: Decider::Simple,
            })
        },
    },
    Policy {
        name: "dynp-advanced",
        aliases: &[],
        help: "Self-tuning dynP, advanced decider (keeps the current policy on ties)",
        params: &[Param::Quality],
        build: |p| {
            Scheduler::dynp(DynP::SelfTuning {
                quality: p.quality(),
                decider: Decider::Advanced,
            })
        },
    },
];

/// The policy named `name` (its name or an alias).
pub fn find_policy(name: &str) -> Option<&'static Policy> {
    POLICIES.iter().find(|p| p.is_named(name))
}

/// Why a policy cannot be built from a name and parameters.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PolicyError {
    /// No policy has this name.
    #[error("unknown scheduler \"{name}\"; known: {known}")]
    Unknown {
        /// The name asked for.
        name: String,
        /// The known names, comma-separated.
        known: String,
    },
    /// A parameter was given to a policy that does not take it (an error, not silently
    /// ignored).
    #[error("{flag} applies only to --scheduler {takers}")]
    NotTaken {
        /// The parameter's flag (`--alpha`).
        flag: &'static str,
        /// The policies that take it, joined by " or ".
        takers: String,
    },
    /// Alpha is not a finite number >= 0.
    #[error("--alpha must be a finite number >= 0, got {0}")]
    BadAlpha(f64),
    /// The dynP bounds are not 0 <= lower <= upper.
    #[error("dynP bounds must satisfy 0 <= --dynp-lower <= --dynp-upper, got {lower} and {upper}")]
    BadBounds {
        /// The lower bound, seconds.
        lower: Time,
        /// The upper bound, seconds.
        upper: Time,
    },
}

/// A scheduler named by the user (CLI, population files, sweeps), validated, before it is
/// built: a policy of [`POLICIES`] and its parameters (those it takes, defaults filled in).
#[derive(Debug, Clone, Copy)]
pub struct SchedulerSpec {
    policy: &'static Policy,
    params: PolicyParams,
}

impl PartialEq for SchedulerSpec {
    fn eq(&self, other: &SchedulerSpec) -> bool {
        self.policy.name == other.policy.name && self.params == other.params
    }
}

impl SchedulerSpec {
    /// The policy `name` (a name or alias of [`POLICIES`]) with `params`. Errors: an unknown
    /// name; a parameter the policy does not take (checked in [`Param::ALL`]'s order); an
    /// invalid value (alpha not finite or negative; dynP bounds not 0 <= lower <= upper).
    pub fn new(name: &str, params: PolicyParams) -> Result<SchedulerSpec, PolicyError> {
        let policy = find_policy(name).ok_or_else(|| PolicyError::Unknown {
            name: name.to_string(),
            known: POLICIES
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        })?;
        for param in Param::ALL {
            if param.given(&params) && !policy.takes(param) {
                return Err(PolicyError::NotTaken {
                    flag: param.flag(),
                    takers: POLICIES
                        .iter()
                        .filter(|p| p.takes(param))
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(" or "),
                });
            }
        }
        // Keep the parameters the policy takes, with their defaults, so specs compare and
        // label by what they build.
        let resolved = PolicyParams {
            alpha: policy.takes(Param::Alpha).then(|| params.alpha()),
            dynp_lower: policy.takes(Param::DynpLower).then(|| params.dynp_lower()),
            dynp_upper: policy.takes(Param::DynpUpper).then(|| params.dynp_upper()),
            quality: policy.takes(Param::Quality).then(|| params.quality()),
        };
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
            policy,
            params: resolved,
        })
    }

    /// The spec whose [`SchedulerSpec::label`] is `label` (`creasy-6000`, `dynp-7200-9000`,
    /// `dynp-advanced-artww`, `easy`), as read back from output files.
    pub fn from_label(label: &str) -> Result<SchedulerSpec, PolicyError> {
        let unknown = || PolicyError::Unknown {
            name: label.to_string(),
            known: POLICIES
                .iter()
                .map(|p| p.name)
                .collect::<Vec<_>>()
                .join(", "),
        };
        for policy in POLICIES {
            let values: Vec<&str> = match label.strip_prefix(policy.name) {
                Some("") => Vec::new(),
                Some(rest) => match rest.strip_prefix('-') {
                    Some(rest) => rest.split('-').collect(),
                    None => continue,
                },
                None => continue,
            };
            if values.len() != policy.params.len() {
                continue;
            }
            let mut params = PolicyParams::default();
            let parsed = policy
                .params
                .iter()
                .zip(&values)
                .all(|(param, text)| param.parse(text, &mut params).is_some());
            if !parsed {
                continue;
            }
            if let Ok(spec) = SchedulerSpec::new(policy.name, params) {
                if spec.label() == label {
                    return Ok(spec);
                }
            }
        }
        Err(unknown())
    }

    /// Builds a fresh scheduler (its backfilling rule starts with no state).
    pub fn build(&self) -> Scheduler {
        (self.policy.build)(&self.params)
    }

    /// A short label for tables and file names: the policy's name, then each parameter it
    /// takes: `fcfs`, `easy`, `creasy-6000`, `conservative`, `conservative-sjf`,
    /// `easy-plus-plus`, `dynp-7200-9000`, `dynp-advanced-artww`.
    pub fn label(&self) -> String {
        let mut label = self.policy.name.to_string();
        for param in self.policy.params {
            label.push('-');
            label.push_str(&param.label(&self.params));
        }
        label
    }

    /// The policy's name (never an alias).
    pub fn name(&self) -> &'static str {
        self.policy.name
    }

    /// The policy.
    pub fn policy(&self) -> &'static Policy {
        self.policy
    }

    /// The parameters: those the policy takes, with defaults filled in; the others `None`.
    pub fn params(&self) -> &PolicyParams {
        &self.params
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)] // a failed test should panic

    use super::*;

    fn spec(name: &str, params: PolicyParams) -> SchedulerSpec {
        SchedulerSpec::new(name, params).unwrap()
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
            assert_eq!(spec(name, none).label(), label);
        }
        let alpha = PolicyParams {
            alpha: Some(1500.5),
            ..none
        };
        assert_eq!(spec("creasy", alpha).label(), "creasy-1500.5");
        let bounds = PolicyParams {
            dynp_lower: Some(3600),
            dynp_upper: Some(5000),
            ..none
        };
        assert_eq!(spec("dynp", bounds).label(), "dynp-3600-5000");
        let art = PolicyParams {
            quality: Some(Quality::ResponseTime),
            ..none
        };
        assert_eq!(spec("dynp-advanced", art).label(), "dynp-advanced-art");
        assert_eq!(spec("easy++", none).label(), "easy-plus-plus");
        assert_eq!(spec("easy+", none).name(), "easy-plus");
    }

    #[test]
    fn every_policys_label_round_trips() {
        for policy in POLICIES {
            let mut variants = vec![PolicyParams::default()];
            if policy.takes(Param::Alpha) {
                variants.push(PolicyParams {
                    alpha: Some(0.25),
                    ..Default::default()
                });
            }
            if policy.takes(Param::DynpLower) {
                variants.push(PolicyParams {
                    dynp_lower: Some(0),
                    dynp_upper: Some(60),
                    ..Default::default()
                });
            }
            if policy.takes(Param::Quality) {
                for quality in Quality::ALL {
                    variants.push(PolicyParams {
                        quality: Some(quality),
                        ..Default::default()
                    });
                }
            }
            for params in variants {
                let spec = spec(policy.name, params);
                let label = spec.label();
                assert!(label.starts_with(policy.name), "{label}");
                assert_eq!(SchedulerSpec::from_label(&label), Ok(spec), "{label}");
                // The name and resolved parameters give the same spec again.
                assert_eq!(SchedulerSpec::new(spec.name(), *spec.params()), Ok(spec));
                for alias in policy.aliases {
                    assert_eq!(SchedulerSpec::new(alias, params), Ok(spec), "{alias}");
                }
            }
        }
        assert!(SchedulerSpec::from_label("creasy").is_err());
        assert!(SchedulerSpec::from_label("easy-7").is_err());
        assert!(SchedulerSpec::from_label("magic").is_err());
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut names: Vec<&str> = POLICIES
            .iter()
            .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()))
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
    }

    #[test]
    fn parameters_go_only_to_policies_that_take_them() {
        let err = |name: &str, params| SchedulerSpec::new(name, params).unwrap_err().to_string();
        let alpha = PolicyParams {
            alpha: Some(3.0),
            ..Default::default()
        };
        assert_eq!(
            err("easy", alpha),
            "--alpha applies only to --scheduler creasy"
        );
        let lower = PolicyParams {
            dynp_lower: Some(3),
            ..Default::default()
        };
        assert_eq!(
            err("dynp-simple", lower),
            "--dynp-lower applies only to --scheduler dynp"
        );
        let quality = PolicyParams {
            quality: Some(Quality::Makespan),
            ..Default::default()
        };
        assert_eq!(
            err("easy+", quality),
            "--quality applies only to --scheduler dynp-simple or dynp-advanced"
        );
        assert_eq!(
            err(
                "creasy",
                PolicyParams {
                    alpha: Some(-5.0),
                    ..Default::default()
                }
            ),
            "--alpha must be a finite number >= 0, got -5"
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
            "dynP bounds must satisfy 0 <= --dynp-lower <= --dynp-upper, got 5 and 3"
        );
        assert!(err("magic", PolicyParams::default()).starts_with("unknown scheduler \"magic\""));
    }
}
