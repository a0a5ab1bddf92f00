//! The option tables: every option of `run` (and `validate`) and of `replay`, declared once
//! with its key (the Python keyword, and the flag with `-` for `_`), help, kind and where its
//! value goes. The command line builds its flags from these tables, the Python package its
//! keywords (checked against them by a test), and both hand the values they gathered to
//! [`site`] or [`replay`], which put them into the same document a file would give (the
//! population file, the `[replay]` table of a sweep) so that a value is checked on one path
//! whether it came from a file, a flag, a keyword or a sweep axis. Messages name options by
//! their keys ([`crate::naming`]); each front end says them its own way.

use std::path::{Path, PathBuf};

use cluster::SchedulerSpec;

use crate::choices::{Choice, EstimateChoice, JobSizesChoice, SelectionChoice};
use crate::error::{Result, ensure, invalid};
use crate::naming::{key, key_value};
use crate::replay::ReplayOptions;
use crate::site::{Site, set_path};

/// A name a choice accepts, with its help; aliases are accepted but not listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Named {
    /// The name.
    pub name: &'static str,
    /// One line on what it means.
    pub help: &'static str,
    /// Whether help texts list it (aliases are not listed).
    pub listed: bool,
}

/// What values an option takes, and how they are parsed from text (a flag) or checked as a
/// value (a Python keyword), with the same messages.
#[derive(Debug, Clone, Copy)]
pub enum Kind {
    /// A switch: given or not (`--fairness`, `fairness=True`).
    Switch,
    /// A whole number in `[min, max]`.
    Whole {
        /// The smallest value.
        min: i64,
        /// The largest value.
        max: i64,
    },
    /// A number (checked further where it is used).
    Number,
    /// Text (checked further where it is used).
    Text,
    /// A file or directory.
    Path,
    /// One of some names.
    Choice(fn() -> Vec<Named>),
    /// `SECONDS:SHARE`, repeatable (a list of pairs in Python and files).
    Modes,
}

/// Where an option's value goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// A key of the population file, by its dotted path (`site.node_processors`).
    Site(&'static str),
    /// A key of every group of the population file (`estimates`).
    AllGroups(&'static str),
    /// A key of the population's only group (`users`: a site of several groups sets each
    /// group's in the file).
    OnlyGroup(&'static str),
    /// The scheduler preset: replaces the file's `[scheduler]` (its parameters and parts
    /// included) by the preset.
    Preset,
    /// A key of the `[replay]` table, by its dotted path (`scheduler.policy`).
    Replay(&'static str),
    /// The replay's seed (a sweep's seed in a replay sweep).
    ReplaySeed,
    /// How the simulation runs (fair start times, headroom).
    Simulation,
    /// What the front end does with the run: which file to read, where outputs go.
    FrontEnd,
}

/// One option.
#[derive(Debug, Clone, Copy)]
pub struct OptionSpec {
    /// The key: the Python keyword, the flag with `-` for `_`, what messages name.
    pub key: &'static str,
    /// The flag's name when it is not the key's (`estimate-mode`, repeatable, for
    /// `estimate_modes`).
    pub flag: Option<&'static str>,
    /// The value's name in help texts (`K`, `MB/S`).
    pub value_name: Option<&'static str>,
    /// What it does (help texts and docstrings).
    pub help: &'static str,
    /// Its values.
    pub kind: Kind,
    /// Where its value goes.
    pub target: Target,
    /// A positional argument on the command line (`replay TRACE`), required.
    pub positional: bool,
}

/// The frequent options' short flags (`-u 250`), by key: the same letter in every command.
const SHORT_FLAGS: [(&str, char); 6] = [
    ("config", 'c'),
    ("users", 'u'),
    ("weeks", 'w'),
    ("scheduler", 's'),
    ("seed", 'S'),
    ("out", 'o'),
];

impl OptionSpec {
    /// The short flag, for the frequent options (`-u` for `--users`).
    pub fn short(&self) -> Option<char> {
        SHORT_FLAGS
            .iter()
            .find(|(key, _)| *key == self.key)
            .map(|&(_, c)| c)
    }

    /// The command-line flag's name, without dashes (`node-processors`).
    pub fn flag_name(&self) -> String {
        self.flag
            .map_or_else(|| self.key.replace('_', "-"), str::to_string)
    }

    /// The names a choice accepts (empty for other kinds).
    pub fn names(&self) -> Vec<Named> {
        match self.kind {
            Kind::Choice(names) => names(),
            _ => Vec::new(),
        }
    }

    /// The value of the text `text` (a flag's), or why it is not one (the same message as
    /// [`OptionSpec::check`] gives for the same value from Python).
    pub fn parse_text(&self, text: &str) -> std::result::Result<toml::Value, String> {
        match self.kind {
            Kind::Switch => match text {
                "true" => Ok(toml::Value::Boolean(true)),
                "false" => Ok(toml::Value::Boolean(false)),
                _ => Err(format!("{text:?} is neither true nor false")),
            },
            Kind::Whole { .. } => {
                let value: i128 = text
                    .trim()
                    .parse()
                    .map_err(|_| self.whole_problem(&format!("{text:?}")))?;
                self.whole(value)
            }
            Kind::Number => {
                let value: f64 = text
                    .trim()
                    .parse()
                    .map_err(|_| format!("{text:?} is not a number"))?;
                Ok(toml::Value::Float(value))
            }
            Kind::Text | Kind::Path => Ok(toml::Value::String(text.to_string())),
            Kind::Choice(_) => self.check(toml::Value::String(text.to_string())),
            Kind::Modes => {
                let (t, p) = text
                    .split_once(':')
                    .ok_or_else(|| format!("{text:?}: expected SECONDS:SHARE, e.g. 7200:0.27"))?;
                let t: i64 = t
                    .trim()
                    .parse()
                    .map_err(|_| format!("{text:?}: {t:?} is not a whole number of seconds"))?;
                let p: f64 = p
                    .trim()
                    .parse()
                    .map_err(|_| format!("{text:?}: {p:?} is not a share (a number in (0, 1])"))?;
                Ok(mode(t, p))
            }
        }
    }

    /// `value` (from Python, say) if it is one of this option's values, else why not: the same
    /// messages as [`OptionSpec::parse_text`]. Integers are accepted where numbers are.
    pub fn check(&self, value: toml::Value) -> std::result::Result<toml::Value, String> {
        use toml::Value as V;
        match (self.kind, value) {
            (Kind::Switch, V::Boolean(b)) => Ok(V::Boolean(b)),
            (Kind::Whole { .. }, V::Integer(i)) => self.whole(i128::from(i)),
            (Kind::Number, V::Float(f)) => Ok(V::Float(f)),
            (Kind::Number, V::Integer(i)) => Ok(V::Float(i as f64)),
            (Kind::Text | Kind::Path, V::String(s)) => Ok(V::String(s)),
            (Kind::Choice(names), V::String(s)) => {
                let names = names();
                if names.iter().any(|n| n.name == s) {
                    Ok(V::String(s))
                } else {
                    let listed: Vec<&str> =
                        names.iter().filter(|n| n.listed).map(|n| n.name).collect();
                    Err(format!("{s:?} is not one of {}", listed.join(", ")))
                }
            }
            (Kind::Modes, V::Array(modes)) => {
                for m in &modes {
                    let pair = m.as_array().filter(|p| p.len() == 2);
                    let ok = pair.is_some_and(|p| {
                        p[0].is_integer() && (p[1].is_float() || p[1].is_integer())
                    });
                    if !ok {
                        return Err(format!(
                            "{m}: expected a pair (SECONDS, SHARE), e.g. (7200, 0.27)"
                        ));
                    }
                }
                Ok(V::Array(
                    modes
                        .iter()
                        .filter_map(|m| m.as_array())
                        .map(|p| {
                            let share = p[1]
                                .as_float()
                                .or_else(|| p[1].as_integer().map(|i| i as f64))
                                .unwrap_or(f64::NAN);
                            mode(p[0].as_integer().unwrap_or(0), share)
                        })
                        .collect(),
                ))
            }
            (Kind::Whole { .. }, value) => Err(self.whole_problem(&value.to_string())),
            (kind, value) => Err(format!("{value} is not {}", kind.expected())),
        }
    }

    fn whole(&self, value: i128) -> std::result::Result<toml::Value, String> {
        match self.kind {
            Kind::Whole { min, max } if (i128::from(min)..=i128::from(max)).contains(&value) => {
                Ok(toml::Value::Integer(value as i64))
            }
            _ => Err(self.whole_problem(&value.to_string())),
        }
    }

    fn whole_problem(&self, shown: &str) -> String {
        match self.kind {
            Kind::Whole { min, max } => {
                format!("{shown} is not a whole number from {min} to {max}")
            }
            _ => format!("{shown} is not a whole number"),
        }
    }
}

impl Kind {
    /// What a value of this kind is, for messages.
    fn expected(self) -> &'static str {
        match self {
            Kind::Switch => "true or false",
            Kind::Whole { .. } => "a whole number",
            Kind::Number => "a number",
            Kind::Text => "text",
            Kind::Path => "a path",
            Kind::Choice(_) => "a name",
            Kind::Modes => "a list of (SECONDS, SHARE) pairs",
        }
    }
}

/// `[SECONDS, SHARE]` as the `[replay]` table writes a mode.
fn mode(seconds: i64, share: f64) -> toml::Value {
    toml::Value::Array(vec![
        toml::Value::Integer(seconds),
        toml::Value::Float(share),
    ])
}

const U32: Kind = Kind::Whole {
    min: 0,
    max: u32::MAX as i64,
};
/// Seeds: any whole number a TOML file can hold.
const SEED: Kind = Kind::Whole {
    min: 0,
    max: i64::MAX,
};

fn choice_names<C: Choice>() -> Vec<Named> {
    C::ALL
        .iter()
        .map(|(name, help, _)| Named {
            name,
            help,
            listed: true,
        })
        .collect()
}

fn presets() -> Vec<Named> {
    let mut names = Vec::new();
    for policy in schedulers::REGISTRY.policies() {
        names.push(Named {
            name: policy.name,
            help: policy.help,
            listed: true,
        });
        for alias in policy.aliases {
            names.push(Named {
                name: alias,
                help: policy.help,
                listed: false,
            });
        }
    }
    names
}

fn parts<B: 'static>(registry: impl Iterator<Item = &'static cluster::Part<B>>) -> Vec<Named> {
    registry
        .map(|p| Named {
            name: p.name,
            help: p.help,
            listed: true,
        })
        .collect()
}

/// Self-tuning dynP's qualities ([`cluster::Quality::NAMED`]).
fn qualities() -> Vec<Named> {
    cluster::Quality::NAMED
        .iter()
        .map(|quality| Named {
            name: quality.name(),
            help: quality.help(),
            listed: true,
        })
        .collect()
}
fn orders() -> Vec<Named> {
    parts(schedulers::REGISTRY.orders())
}
fn rules() -> Vec<Named> {
    parts(schedulers::REGISTRY.rules())
}
fn predictors() -> Vec<Named> {
    parts(schedulers::REGISTRY.predictors())
}
fn group_estimates() -> Vec<Named> {
    [
        (
            "fitted",
            "the estimates users gave jobs of the same runtime class in the traces",
        ),
        ("exact", "the runtime (perfect estimates)"),
        (
            "f",
            "the random f-model: uniform in [r, (f + 1) r], truncated at E_max",
        ),
        (
            "f-deterministic",
            "the deterministic f-model: (f + 1) r, truncated at E_max",
        ),
        ("phi", "the Phi-model (Tsafrir's thesis, section 1.2.2)"),
        ("modal", "Tsafrir's modal model (thesis, chapter 5)"),
    ]
    .into_iter()
    .map(|(name, help)| Named {
        name,
        help,
        listed: true,
    })
    .collect()
}
fn node_penalties() -> Vec<Named> {
    vec![
        Named {
            name: "max",
            help: "the paper's: the job ends with its slowest node",
            listed: true,
        },
        Named {
            name: "process-mean",
            help: "the mean over its processes (an experiment)",
            listed: true,
        },
    ]
}

/// An option of the scheduler, in both tables.
const fn scheduler_part(
    key: &'static str,
    help: &'static str,
    kind: Kind,
    site: &'static str,
    replay: &'static str,
    for_replay: bool,
) -> OptionSpec {
    OptionSpec {
        key,
        flag: None,
        value_name: None,
        help,
        kind,
        target: if for_replay {
            Target::Replay(replay)
        } else {
            Target::Site(site)
        },
        positional: false,
    }
}

/// The scheduler's options, for the site file (`for_replay` false) or the `[replay]` table.
macro_rules! scheduler_options {
    ($for_replay:expr, $preset:expr) => {
        [
            OptionSpec {
                key: "scheduler",
                flag: None,
                value_name: None,
                help: "The scheduler: a preset of a queue order, a backfilling rule and a predictor (`sitesim schedulers` lists them)",
                kind: Kind::Choice(presets),
                target: $preset,
                positional: false,
            },
            scheduler_part(
                "order",
                "The queue order, replacing the scheduler's",
                Kind::Choice(orders),
                "scheduler.order",
                "scheduler.order",
                $for_replay,
            ),
            scheduler_part(
                "backfill",
                "The backfilling rule, replacing the scheduler's",
                Kind::Choice(rules),
                "scheduler.backfill",
                "scheduler.backfill",
                $for_replay,
            ),
            scheduler_part(
                "predictor",
                "The runtime predictor the backfilling rule plans with, replacing the scheduler's",
                Kind::Choice(predictors),
                "scheduler.predictor",
                "scheduler.predictor",
                $for_replay,
            ),
            scheduler_part(
                "alpha",
                "CREASY's weight of criticality against seniority (order creasy; the paper uses 1500 to 6000). Default 6000",
                Kind::Number,
                "scheduler.alpha",
                "scheduler.alpha",
                $for_replay,
            ),
            scheduler_part(
                "dynp_lower",
                "Basic dynP's lower bound on the waiting jobs' mean estimate, seconds (backfill dynp). Default 7200 (Streit)",
                Kind::Whole {
                    min: i64::MIN,
                    max: i64::MAX,
                },
                "scheduler.dynp_lower",
                "scheduler.dynp_lower",
                $for_replay,
            ),
            scheduler_part(
                "dynp_upper",
                "Basic dynP's upper bound, seconds (backfill dynp). Default 9000 (Streit)",
                Kind::Whole {
                    min: i64::MIN,
                    max: i64::MAX,
                },
                "scheduler.dynp_upper",
                "scheduler.dynp_upper",
                $for_replay,
            ),
            scheduler_part(
                "quality",
                "The quality a self-tuning dynP judges its virtual schedules by (backfill dynp-simple, dynp-advanced). Default artww",
                Kind::Choice(qualities),
                "scheduler.quality",
                "scheduler.quality",
                $for_replay,
            ),
            scheduler_part(
                "slurm_conf",
                "A real slurm.conf configuring the Slurm model (schedulers slurm, slurm-site): its PriorityWeight*, PriorityDecayHalfLife, PriorityCalcPeriod, PriorityMaxAge, PriorityFavorSmall, PriorityFlags, FairShareDampeningFactor, OverTimeLimit, SchedulerParameters, NodeName and NodeSet nodes with their CPUs and PartitionName lines, following Include; the keys it ignores are listed by `sitesim import-slurm-conf`. Default: none (the scheduler's own values)",
                Kind::Path,
                "scheduler.slurm_conf",
                "scheduler.slurm_conf",
                $for_replay,
            ),
        ]
    };
}

const fn site_option(
    key: &'static str,
    value_name: Option<&'static str>,
    help: &'static str,
    kind: Kind,
    target: Target,
) -> OptionSpec {
    OptionSpec {
        key,
        flag: None,
        value_name,
        help,
        kind,
        target,
        positional: false,
    }
}

/// The options of a site: `run`'s and `validate`'s (a population file and values on top of
/// it). Each left out keeps the file's value.
pub static SITE: &[OptionSpec] = &{
    let [
        scheduler,
        order,
        backfill,
        predictor,
        alpha,
        dynp_lower,
        dynp_upper,
        quality,
        slurm_conf,
    ] = scheduler_options!(false, Target::Preset);
    [
        site_option(
            "config",
            Some("FILE"),
            "A population file (TOML). Default: the paper's experiment (configs/paper.toml, embedded)",
            Kind::Path,
            Target::FrontEnd,
        ),
        site_option(
            "users",
            None,
            "Number of users (the population must have a single group)",
            U32,
            Target::OnlyGroup("users"),
        ),
        site_option(
            "weeks",
            None,
            "Simulated weeks",
            U32,
            Target::Site("run.weeks"),
        ),
        scheduler,
        order,
        backfill,
        predictor,
        alpha,
        dynp_lower,
        dynp_upper,
        quality,
        slurm_conf,
        site_option(
            "seed",
            None,
            "The run's random seed",
            SEED,
            Target::Site("run.seed"),
        ),
        site_option(
            "processors",
            None,
            "Machine size in processors",
            U32,
            Target::Site("site.processors"),
        ),
        site_option(
            "node_processors",
            Some("K"),
            "Processors per node: a machine of nodes whose jobs get specific processors",
            U32,
            Target::Site("site.node_processors"),
        ),
        site_option(
            "selection",
            None,
            "How a job's processors are chosen on a machine of nodes",
            Kind::Choice(choice_names::<SelectionChoice>),
            Target::Site("site.selection"),
        ),
        site_option(
            "node_bandwidth",
            Some("MB/S"),
            "Memory bandwidth of a node, MB/s",
            Kind::Number,
            Target::Site("site.node_bandwidth"),
        ),
        site_option(
            "estimates",
            Some("NAME"),
            "Every group's runtime estimates",
            Kind::Choice(group_estimates),
            Target::AllGroups("estimates"),
        ),
        site_option(
            "estimate_f",
            None,
            "Every group's f of the f-models",
            Kind::Number,
            Target::AllGroups("estimate_f"),
        ),
        site_option(
            "estimate_phi",
            None,
            "Every group's Phi of the Phi-model",
            Kind::Number,
            Target::AllGroups("estimate_phi"),
        ),
        site_option(
            "warmup_days",
            Some("DAYS"),
            "Days at the start left out of the measurements",
            U32,
            Target::Site("run.warmup_days"),
        ),
        site_option(
            "job_sizes",
            None,
            "What to do with jobs wider than the machine: reject (refuse the site), clip (to the machine) or scale (every size by machine / widest)",
            Kind::Choice(choice_names::<JobSizesChoice>),
            Target::Site("site.job_sizes"),
        ),
        site_option(
            "power",
            Some("FILE"),
            POWER_HELP,
            Kind::Path,
            Target::Site("power"),
        ),
    ]
};

/// The help of `power`, the same for run and replay.
const POWER_HELP: &str = "Meter the run's power: a TOML file with a [power] table (the nodes' idle and busy power, PUE, carbon-intensity and price series; docs/guide/power.md). summary.json gets a power section (kWh, peak and mean kW, kgCO2, cost) and the measures energy_kwh, peak_kw, carbon_kg, cost. Replaces a site file's own [power]. Default: none (no power model)";

/// `run`'s options beyond the site's: what it measures and writes.
pub static RUN: &[OptionSpec] = &[
    site_option(
        "out",
        Some("DIR"),
        "Write jobs.csv, sessions.csv, batches.csv and summary.json into this directory (created if missing). Default: none (the summary goes to stdout, no files are written)",
        Kind::Path,
        Target::FrontEnd,
    ),
    site_option(
        "swf",
        Some("FILE"),
        "Also write the generated workload as an SWF file (fields 17-18: preceding job, think time). Default: none",
        Kind::Path,
        Target::FrontEnd,
    ),
    site_option(
        "fairness",
        None,
        "Also report unfairness (Tsafrir's thesis, section 3.7): compute every job's fair start time with one more simulation of the generated jobs (conservative backfilling with exact runtimes); about 6 s more for 250 users and 26 weeks",
        Kind::Switch,
        Target::Simulation,
    ),
    site_option(
        "headroom",
        None,
        "Also measure headroom and capture: simulate the same users (same seed) on an uncontended machine where nothing waits, and under EASY, and report uncontended / actual throughput - 1 and (throughput - EASY's) / (uncontended - EASY's). Two more simulations",
        Kind::Switch,
        Target::Simulation,
    ),
    site_option(
        "outage_costs",
        None,
        "Also measure what each outage and the node failures cost: for each `[[outages]]` table and for `[failures]`, simulate the same users (same seed, same scheduler) without it and report the mean wait it added and the throughput and session length it changed (summary.json's outages.outages[].cost and failures.cost). One more simulation each",
        Kind::Switch,
        Target::Simulation,
    ),
    site_option(
        "force",
        None,
        "With out: replace the outputs of an earlier run in that directory (its files this run does not write, figures/ included, are removed); without it, such a directory is refused",
        Kind::Switch,
        Target::FrontEnd,
    ),
    site_option(
        "output_limit",
        Some("GB"),
        "With out: the most gigabytes the run's files may take. The run projects what its files hold to its end as it goes (after a simulated week) and stops with an error, leaving nothing behind, once they would pass it. Default: 10",
        Kind::Number,
        Target::FrontEnd,
    ),
    site_option(
        "batsim_jobs",
        None,
        "With out: also write batsim_jobs.csv, Batsim's jobs file with the processors each job held (an interval set such as \"0-3 8-9\"), which evalys's JobSet.from_csv loads",
        Kind::Switch,
        Target::FrontEnd,
    ),
];

const fn replay_option(
    key: &'static str,
    value_name: Option<&'static str>,
    help: &'static str,
    kind: Kind,
    target: Target,
) -> OptionSpec {
    OptionSpec {
        key,
        flag: None,
        value_name,
        help,
        kind,
        target,
        positional: false,
    }
}

/// `replay`'s options. Each left out takes its default: that of the `[replay]` table of a sweep
/// file, where the same keys are read ([`crate::replay_table`]).
pub static REPLAY: &[OptionSpec] = &{
    let [
        scheduler,
        order,
        backfill,
        predictor,
        alpha,
        dynp_lower,
        dynp_upper,
        quality,
        slurm_conf,
    ] = scheduler_options!(true, Target::Replay("scheduler.policy"));
    [
        OptionSpec {
            key: "trace",
            flag: None,
            value_name: Some("TRACE"),
            help: "The trace: a Standard Workload Format file (.swf) or a Slurm accounting dump (sacct --parsable2 with its header row), plain or gzip-compressed",
            kind: Kind::Path,
            target: Target::Replay("trace"),
            positional: true,
        },
        replay_option(
            "format",
            None,
            "What the trace is",
            Kind::Choice(choice_names::<crate::choices::FormatChoice>),
            Target::Replay("format"),
        ),
        replay_option(
            "tz",
            Some("ZONE"),
            "A sacct dump's local times are in this zone of the tz database (Europe/Berlin; daylight saving included). Default: UTC (dump with TZ=UTC)",
            Kind::Text,
            Target::Replay("tz"),
        ),
        replay_option(
            "site_tz",
            Some("ZONE"),
            "The site's time zone (tz database, America/Los_Angeles), in which fit reads the daily and weekly cycles: a sacct dump's converted trace records it as its TimeZoneString, and it replaces an SWF header's. Default: the dump's zone (--tz), or the SWF header's. Schedules do not depend on it",
            Kind::Text,
            Target::Replay("site_tz"),
        ),
        replay_option(
            "wait_from",
            None,
            "Which time starts a sacct job's wait (and is its submit time in the replay)",
            Kind::Choice(choice_names::<crate::choices::WaitFromChoice>),
            Target::Replay("wait_from"),
        ),
        replay_option(
            "requeued",
            None,
            "A requeued sacct job's submit time",
            Kind::Choice(choice_names::<crate::choices::RequeuedChoice>),
            Target::Replay("requeued"),
        ),
        replay_option(
            "processor_unit",
            None,
            "What a sacct job's processors count",
            Kind::Choice(choice_names::<crate::choices::UnitChoice>),
            Target::Replay("processor_unit"),
        ),
        replay_option(
            "since",
            Some("TIME"),
            "Keep the sacct jobs submitted at or after this time (YYYY-MM-DDTHH:MM:SS or YYYY-MM-DD, in the dump's zone): sacct -S also lists jobs submitted earlier that ran in its window. Default: every job",
            Kind::Text,
            Target::Replay("since"),
        ),
        replay_option(
            "until",
            Some("TIME"),
            "Keep the sacct jobs submitted before this time (as since). Default: every job",
            Kind::Text,
            Target::Replay("until"),
        ),
        scheduler,
        order,
        backfill,
        predictor,
        alpha,
        dynp_lower,
        dynp_upper,
        quality,
        slurm_conf,
        replay_option(
            "assoc",
            Some("FILE"),
            "A sacct dump replayed under the Slurm model (slurm, slurm-site): the site's association tree, `sacctmgr --parsable2 show assoc` (accounts under their parents with their shares, users' shares), its accounts taking the dump's jobs of their names. Default: none (every account of the dump under root, one share each)",
            Kind::Path,
            Target::Replay("scheduler.slurm_assoc"),
        ),
        replay_option(
            "qos",
            Some("FILE"),
            "A sacct dump replayed under the Slurm model (slurm, slurm-site): the site's QOS, `sacctmgr --parsable2 show qos` (priority, usage factor, GrpTRES, MaxTRES, MaxTRESPU, MaxJobsPU, MaxSubmitPU; other limits are listed as left out), each taking the dump's jobs of its name. Default: none (every job in QOS normal)",
            Kind::Path,
            Target::Replay("scheduler.slurm_qos"),
        ),
        replay_option(
            "power",
            Some("FILE"),
            POWER_HELP,
            Kind::Path,
            Target::Replay("power"),
        ),
        replay_option(
            "outages",
            Some("FILE"),
            "Maintenance windows, drains and node failures during the replay: a TOML file with `start` (the calendar time of the trace's time 0, YYYY-MM-DDTHH:MM:SS), `[[outages]]` tables and a `[failures]` table as a site file's (failures drawn from --seed; docs/guide/outages.md). No job runs in a maintenance window or starts on drained or failed processors; summary.json gets an outages or failures section. Default: none (every processor always in service)",
            Kind::Path,
            Target::Replay("outages"),
        ),
        replay_option(
            "outage_costs",
            None,
            "Also measure what each outage and the node failures cost: for each outage (of --outages, --events and --reservations) and for the outages file's `[failures]`, replay the same jobs without it and report the mean wait it added (summary.json's outages.outages[].cost and failures.cost). One more replay each",
            Kind::Switch,
            Target::Simulation,
        ),
        replay_option(
            "events",
            Some("FILE"),
            "Slurm's node events during the replay, `sacctmgr --parsable2 show events format=Cluster,NodeName,TimeStart,TimeEnd,State,Reason,User,TRES` (times read in --tz): each node's down and drain periods take its CPUs out of service (docs/guide/outages.md). Needs a trace whose time 0 is known (a sacct dump, an SWF with UnixStartTime). Default: none",
            Kind::Path,
            Target::Replay("events"),
        ),
        replay_option(
            "reservations",
            Some("FILE"),
            "Slurm's reservations during the replay, `scontrol show reservation` or `sacctmgr --parsable2 show reservation` (times read in --tz): each maintenance (MAINT) reservation is a window no job runs in; the others are listed as left out (docs/guide/outages.md). Default: none",
            Kind::Path,
            Target::Replay("reservations"),
        ),
        replay_option(
            "load_factor",
            None,
            "Multiply every arrival time (relative to the first) by this factor: Streit's shrinking factor and Tsafrir's load scaling. Below 1 packs the same jobs into less time (0.8 raises the offered load by 1/0.8); above 1 spreads them out",
            Kind::Number,
            Target::Replay("load_factor"),
        ),
        replay_option(
            "fairness",
            None,
            "Also report unfairness (Tsafrir's thesis, section 3.7): compute every job's fair start time with one more simulation (conservative backfilling with exact runtimes); about 0.4 s more on SDSC-SP2",
            Kind::Switch,
            Target::Replay("fairness"),
        ),
        replay_option(
            "feedback",
            None,
            "Replay with feedback (Zakay & Feitelson, MASCOTS 2014): each user's sessions, batches and think times are kept, but a batch that followed earlier work is submitted its logged think time after that work's simulated end; a session starts at its logged time, or, if the user's previous session has not ended by then, 20 min + 1 s after its simulated end (the shortest break that separates sessions in the analysis), so one user's sessions never overlap. Adds throughput and sessions to the summary, and writes sessions.csv. Without warmup, the averages and the utilization are over the jobs submitted from the first to the last logged submit, the window throughput is measured over",
            Kind::Switch,
            Target::Replay("feedback"),
        ),
        replay_option(
            "feedback_abandon",
            None,
            "With feedback: after each batch, users continue the session with the paper's probability 0.8 / (0.05 r + 1), r the response time in minutes, else drop the rest of it (drawn with the seed)",
            Kind::Switch,
            Target::Replay("feedback_abandon"),
        ),
        replay_option(
            "shake",
            None,
            "Input shaking (Tsafrir's thesis, section 6.5.5): move the arrival of 10 % of the jobs, chosen at random, by up to 60 s earlier or later (drawn with the seed). Replay with several seeds to see how sensitive a result is to negligible changes of the log",
            Kind::Switch,
            Target::Replay("shake"),
        ),
        replay_option(
            "processors",
            None,
            "Machine size in processors; default: the header's MaxProcs, else MaxNodes",
            U32,
            Target::Replay("processors"),
        ),
        replay_option(
            "estimates",
            None,
            "Replace the trace's runtime estimates by this model's",
            Kind::Choice(choice_names::<EstimateChoice>),
            Target::Replay("estimates"),
        ),
        replay_option(
            "estimate_f",
            None,
            "The f of the f-models (>= 0; required by f and f-deterministic)",
            Kind::Number,
            Target::Replay("estimate_f"),
        ),
        replay_option(
            "estimate_phi",
            None,
            "The Phi of the Phi-model (in [0, 1]; required by phi)",
            Kind::Number,
            Target::Replay("estimate_phi"),
        ),
        replay_option(
            "estimate_max",
            None,
            "E_max, seconds (f, phi, modal); default: the largest estimate that at least 1 % of the trace's jobs use (18 h on SDSC-SP2 and CTC-SP2, 36 h on SDSC-BLUE)",
            Kind::Whole {
                min: i64::MIN,
                max: i64::MAX,
            },
            Target::Replay("estimate_max"),
        ),
        replay_option(
            "estimate_max_share",
            None,
            "The modal model's share of jobs using E_max; default: the trace's share",
            Kind::Number,
            Target::Replay("estimate_max_share"),
        ),
        OptionSpec {
            key: "estimate_modes",
            flag: Some("estimate-mode"),
            value_name: Some("SECONDS:SHARE"),
            help: "A mode the modal model must hold, SECONDS:SHARE (repeatable; in Python a list of (SECONDS, SHARE) pairs; Tsafrir's \"improved\" setting, e.g. 7200:0.27 for SDSC-BLUE's 2-hour limit)",
            kind: Kind::Modes,
            target: Target::Replay("estimate_modes"),
            positional: false,
        },
        replay_option(
            "seed",
            None,
            "The seed of the random draws of estimate models, bandwidth demands, shaking and abandonment",
            SEED,
            Target::ReplaySeed,
        ),
        replay_option(
            "node_processors",
            Some("K"),
            "Processors per node: a machine of nodes whose jobs get specific processors; default: processors are only counted",
            U32,
            Target::Replay("node_processors"),
        ),
        replay_option(
            "selection",
            None,
            "How a job's processors are chosen (needs node_processors)",
            Kind::Choice(choice_names::<SelectionChoice>),
            Target::Replay("selection"),
        ),
        replay_option(
            "resources",
            Some("NAME=COUNT,..."),
            "The machine's resources besides processors, by their Slurm TRES names, and how many it has: gres/gpu=16,license/matlab=4 (at most four kinds). A sacct dump's jobs ask for them in ReqTRES; a job starts only when every resource it asks for is free; jobs.csv gets a column of each. Runs under the none and EASY backfilling rules. Default: processors only",
            Kind::Text,
            Target::Replay("resources"),
        ),
        replay_option(
            "bandwidth_mix",
            Some("MIX"),
            "Give the jobs memory-bandwidth demands and stretch the runtimes of jobs that share an oversubscribed node (Guim's shared-shadow penalty): the shares of high, medium and low demand jobs, as high (0.8,0.1,0.1), med (0.5,0.1,0.4), low (0.1,0.1,0.8) or three numbers HIGH,MEDIUM,LOW summing to 1. Needs node_processors. Default: none (no sharing)",
            Kind::Text,
            Target::Replay("bandwidth_mix"),
        ),
        replay_option(
            "bandwidth_demands",
            Some("LOW,MEDIUM,HIGH"),
            "Memory bandwidth a process of a low, medium and high demand job uses, MB/s",
            Kind::Text,
            Target::Replay("bandwidth_demands"),
        ),
        replay_option(
            "node_bandwidth",
            Some("MB/S"),
            "Memory bandwidth of a node, MB/s",
            Kind::Number,
            Target::Replay("node_bandwidth"),
        ),
        replay_option(
            "node_penalty",
            Some("RULE"),
            "How a job's penalties on its nodes make its penalty: max (the paper's: the job ends with its slowest node) or process-mean (the mean over its processes; an experiment)",
            Kind::Choice(node_penalties),
            Target::Replay("node_penalty"),
        ),
        replay_option(
            "placement",
            None,
            "Place jobs on the processors this policy would choose, while the scheduler still decides by selection (an experiment, not the paper's: FC's decisions on FF's nodes). Default: place by selection",
            Kind::Choice(choice_names::<SelectionChoice>),
            Target::Replay("placement"),
        ),
        replay_option(
            "node_offset",
            Some("OFFSET"),
            "For the sharing model, processor p is on node (p + OFFSET) / K (an experiment; the paper gives no numbering); 0: nodes aligned with processor ids",
            U32,
            Target::Replay("node_offset"),
        ),
        replay_option(
            "first_jobs",
            Some("N"),
            "Replay only the first N jobs (in submission order), as paper 001 replays the first 10,000 jobs of its traces. Default: every job",
            Kind::Whole {
                min: 0,
                max: i64::MAX,
            },
            Target::Replay("first_jobs"),
        ),
        replay_option(
            "warmup",
            None,
            "Which jobs the averages leave out (none: every job, utilization from the first submit to the last end; with feedback, the jobs submitted in the logged submit period, utilization over it)",
            Kind::Choice(choice_names::<crate::choices::WarmupChoice>),
            Target::Replay("warmup"),
        ),
        replay_option(
            "out",
            Some("DIR"),
            "Write jobs.csv and summary.json into this directory (created if missing). Default: none (the summary goes to stdout, no files are written)",
            Kind::Path,
            Target::FrontEnd,
        ),
        replay_option(
            "force",
            None,
            "With out: replace the outputs of an earlier run in that directory (its files this replay does not write, figures/ included, are removed); without it, such a directory is refused",
            Kind::Switch,
            Target::FrontEnd,
        ),
        replay_option(
            "output_limit",
            Some("GB"),
            "With out: the most gigabytes the replay's files may take. The replay projects what its files hold to the last arrival as it goes and stops with an error, leaving nothing behind, once they would pass it. Default: 10",
            Kind::Number,
            Target::FrontEnd,
        ),
        replay_option(
            "batsim_jobs",
            None,
            "With out: also write batsim_jobs.csv, Batsim's jobs file with the processors each job held (an interval set such as \"0-3 8-9\"), which evalys's JobSet.from_csv loads",
            Kind::Switch,
            Target::FrontEnd,
        ),
    ]
};

/// `run`'s options: the site's, then what it measures and writes.
pub fn run_options() -> impl Iterator<Item = &'static OptionSpec> {
    SITE.iter().chain(RUN)
}

/// The option of `run` or `replay` called `key`.
pub fn find(key: &str) -> Option<&'static OptionSpec> {
    run_options().chain(REPLAY).find(|o| o.key == key)
}

/// The command-line flag of the option `key` (`--node-processors`; `--estimate-mode` for
/// `estimate_modes`), or `key`'s words with dashes for a key no table holds.
pub fn flag_of(key: &str) -> String {
    match find(key) {
        Some(o) => format!("--{}", o.flag_name()),
        // a part's parameter without a flag of its own: its key in a file
        None if schedulers::REGISTRY.param_keys().contains(&key) => format!("scheduler.{key}"),
        None => format!("--{}", key.replace('_', "-")),
    }
}

/// The default an option takes when it is not given, in words for help texts and docstrings:
/// `replay`'s from the `[replay]` table's defaults (`1`, `"first-fit"`), a site option's from
/// the file (with the default site's value). `None` for switches and for options whose help
/// says it (the parameters', and any help with a "Default:" of its own).
pub fn default_text(option: &OptionSpec) -> Option<String> {
    fn at<'v>(value: &'v toml::Value, path: &str) -> Option<&'v toml::Value> {
        path.split('.').try_fold(value, |v, part| v.get(part))
    }
    fn text(value: &toml::Value) -> String {
        match value {
            toml::Value::String(s) => s.clone(),
            toml::Value::Array(a) if a.is_empty() => "none".to_string(),
            other => other.to_string(),
        }
    }
    // The parameters' help says their defaults.
    let parameter =
        ["alpha", "dynp_lower", "dynp_upper", "quality", "slurm_conf"].contains(&option.key);
    if option.kind_is_switch() || option.positional || parameter || option.help.contains("Default:")
    {
        return None;
    }
    match option.target {
        Target::Replay(path) if path.starts_with("scheduler.") && path != "scheduler.policy" => {
            Some("the scheduler's".to_string())
        }
        Target::Replay(path) => {
            let defaults = toml::Value::Table(crate::replay_table::defaults());
            Some(at(&defaults, path).map_or_else(|| "none".to_string(), text))
        }
        Target::ReplaySeed => Some("1".to_string()),
        Target::Site(path) if path.starts_with("scheduler.") => Some("the scheduler's".to_string()),
        Target::Site(path) | Target::OnlyGroup(path) | Target::AllGroups(path) => {
            let site = Site::default_site().ok()?;
            let document = toml::Value::try_from(&site.file).ok()?;
            let (path, whose) = match option.target {
                Target::Site(_) => (path.to_string(), format!("the file's {path}")),
                Target::OnlyGroup(_) => (format!("groups.0.{path}"), "the file's".to_string()),
                _ => (format!("groups.0.{path}"), "each group's".to_string()),
            };
            Some(match at(&document, &path) {
                Some(value) => format!("{whose} ({} for the default site)", text(value)),
                None => format!("{whose} (none for the default site)"),
            })
        }
        Target::Preset => Some("the file's scheduler.policy (easy for the default site)".into()),
        Target::Simulation | Target::FrontEnd => None,
    }
}

impl OptionSpec {
    fn kind_is_switch(&self) -> bool {
        matches!(self.kind, Kind::Switch)
    }
}

/// Option values as a front end gathered them: each option given, with its value (checked by
/// [`OptionSpec::parse_text`] or [`OptionSpec::check`]).
pub type Values = Vec<(&'static OptionSpec, toml::Value)>;

/// The value given for `key`, if any.
pub fn value<'v>(values: &'v Values, key: &str) -> Option<&'v toml::Value> {
    values.iter().find(|(o, _)| o.key == key).map(|(_, v)| v)
}

/// Whether the switch `key` was given (and true).
pub fn switch(values: &Values, key: &str) -> bool {
    value(values, key).and_then(toml::Value::as_bool) == Some(true)
}

/// The path given for `key`, if any.
pub fn path(values: &Values, key: &str) -> Option<PathBuf> {
    value(values, key)
        .and_then(toml::Value::as_str)
        .map(PathBuf::from)
}

/// Gigabytes a run's output files may take unless `output_limit` says otherwise.
pub const DEFAULT_OUTPUT_LIMIT_GB: f64 = 10.0;

/// The most bytes a run's output files may take: `output_limit` (in GB) or
/// [`DEFAULT_OUTPUT_LIMIT_GB`]; an error naming the option for a value that is not a positive
/// number.
pub fn output_limit(values: &Values) -> Result<u64> {
    let gb = match value(values, "output_limit") {
        None => DEFAULT_OUTPUT_LIMIT_GB,
        Some(v) => v
            .as_float()
            .or_else(|| v.as_integer().map(|i| i as f64))
            .ok_or_else(|| invalid!("{}: not a number: {v}", key("output_limit")))?,
    };
    ensure!(
        gb.is_finite() && gb > 0.0 && gb <= 1e9,
        "{}: {gb} is not a size in gigabytes (a number above 0, at most 1e9)",
        key("output_limit")
    );
    Ok((gb * 1e9) as u64)
}

/// Where a site comes from.
#[derive(Debug, Clone, Copy)]
pub enum SiteSource<'a> {
    /// The embedded default site (configs/paper.toml).
    Default,
    /// A population file.
    File(&'a Path),
    /// Population-file text (what Python may give); relative model paths start in the working
    /// directory.
    Text(&'a str),
}

/// The site `source` describes, with the site options of `values` set on top of the file's
/// keys (then checked with the rest of the file when the site runs).
pub fn site(source: SiteSource<'_>, values: &Values) -> Result<Site> {
    let site = match source {
        SiteSource::Default => Site::default_site()?,
        SiteSource::File(path) => Site::load(path)?,
        SiteSource::Text(text) => {
            Site::from_text(text, "the population text", Some(PathBuf::from(".")))?
        }
    };
    if !values.iter().any(|(o, _)| {
        matches!(
            o.target,
            Target::Site(_) | Target::AllGroups(_) | Target::OnlyGroup(_) | Target::Preset
        )
    }) {
        return Ok(site);
    }
    let Site { file, origin, base } = site;
    let mut document = toml::Value::try_from(&file)
        .map_err(|e| invalid!("{origin}: cannot apply the options: {e}"))?;
    // The preset first: it replaces the whole [scheduler], then the parts and parameters given
    // go on top of it.
    let mut ordered: Vec<&(&OptionSpec, toml::Value)> = values.iter().collect();
    ordered.sort_by_key(|(o, _)| o.target != Target::Preset);
    for (option, value) in ordered {
        let set = |document: &mut toml::Value, path: &str| {
            set_path(document, path, value.clone())
                .map_err(|e| invalid!("{origin}: {}: {e}", key(option.key)))
        };
        match option.target {
            // a file given on the command line or in Python is relative to where it was
            // given, not to the site file
            Target::Site(path) if matches!(option.kind, Kind::Path) => {
                let given = PathBuf::from(value.as_str().unwrap_or_default());
                let absolute = std::path::absolute(&given).unwrap_or(given);
                let text = toml::Value::String(absolute.display().to_string());
                set_path(&mut document, path, text)
                    .map_err(|e| invalid!("{origin}: {}: {e}", key(option.key)))?
            }
            Target::Site(path) => set(&mut document, path)?,
            Target::Preset => {
                let mut table = toml::Table::new();
                table.insert("policy".to_string(), value.clone());
                document
                    .as_table_mut()
                    .map(|t| t.insert("scheduler".to_string(), toml::Value::Table(table)));
            }
            Target::AllGroups(group_key) => {
                for i in 0..file.groups.len() {
                    set(&mut document, &format!("groups.{i}.{group_key}"))?;
                }
            }
            Target::OnlyGroup(group_key) => {
                ensure!(
                    file.groups.len() == 1,
                    "{} needs a population with one group; {origin} has {} (set each group's {group_key} in the file)",
                    key(option.key),
                    file.groups.len()
                );
                set(&mut document, &format!("groups.0.{group_key}"))?;
            }
            Target::Replay(_) | Target::ReplaySeed | Target::Simulation | Target::FrontEnd => {}
        }
    }
    let file = document.try_into().map_err(|e: toml::de::Error| {
        invalid!(
            "{origin} with {}: {e}",
            values
                .iter()
                .map(|(o, v)| key_value(o.key, v))
                .collect::<Vec<_>>()
                .join(", ")
        )
    })?;
    Ok(Site { file, origin, base })
}

/// The scheduler and replay options `values` give (a replay's options: each left out takes
/// its default, as in a sweep's `[replay]` table).
pub fn replay(values: &Values) -> Result<(SchedulerSpec, ReplayOptions)> {
    let mut table = toml::Value::Table(toml::Table::new());
    let mut seed = 1;
    for (option, value) in values {
        match option.target {
            Target::Replay(path) => set_path(&mut table, path, value.clone())
                .map_err(|e| invalid!("{}: {e}", key(option.key)))?,
            Target::ReplaySeed => {
                seed = value
                    .as_integer()
                    .and_then(|s| u64::try_from(s).ok())
                    .ok_or_else(|| invalid!("{} {value}: not a seed", key(option.key)))?;
            }
            _ => {}
        }
    }
    crate::replay_table::replay_of(table, Path::new(""), seed, None)
}

/// The keys of the options that say how a trace file is read (its format; a sacct dump's zone,
/// wait start, requeues, processor unit and window): `replay`'s, also taken by `fit` and
/// `convert`.
pub const TRACE_INPUT_KEYS: [&str; 8] = [
    "format",
    "tz",
    "site_tz",
    "wait_from",
    "requeued",
    "processor_unit",
    "since",
    "until",
];

/// The options of [`TRACE_INPUT_KEYS`], as `replay` declares them.
pub fn trace_input_options() -> impl Iterator<Item = &'static OptionSpec> {
    REPLAY.iter().filter(|o| TRACE_INPUT_KEYS.contains(&o.key))
}

/// How to read trace files, from the values of [`trace_input_options`] given (the others take
/// their defaults); checked as `replay` checks them.
pub fn trace_input(values: &Values) -> Result<crate::trace::TraceOptions> {
    let mut table = toml::Table::new();
    table.insert("trace".into(), toml::Value::String(String::new()));
    for (option, value) in values {
        if TRACE_INPUT_KEYS.contains(&option.key) {
            table.insert(option.key.to_string(), value.clone());
        }
    }
    let (_, options) =
        crate::replay_table::replay_of(toml::Value::Table(table), Path::new(""), 1, None)?;
    // the zones and the window checked before any trace is read
    options.input.sacct_options()?;
    Ok(options.input)
}

/// The options a `[replay]` table of a sweep file may hold: every replay option that goes
/// there, by its path in the table.
pub fn replay_keys() -> impl Iterator<Item = &'static str> {
    REPLAY.iter().filter_map(|o| match o.target {
        Target::Replay(path) => Some(path),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_unique_and_flags_follow_keys() {
        for table in [run_options().collect::<Vec<_>>(), REPLAY.iter().collect()] {
            let mut keys: Vec<&str> = table.iter().map(|o| o.key).collect();
            let all = keys.len();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), all);
            for o in table {
                assert!(o.help.len() > 10, "{}", o.key);
                if o.flag.is_none() {
                    assert_eq!(o.flag_name(), o.key.replace('_', "-"));
                }
            }
        }
        assert_eq!(flag_of("estimate_modes"), "--estimate-mode");
        assert_eq!(flag_of("node_processors"), "--node-processors");
    }

    #[test]
    fn text_and_values_pass_the_same_checks() {
        let users = find("users").unwrap();
        assert_eq!(users.parse_text("7"), Ok(toml::Value::Integer(7)));
        assert_eq!(
            users.check(toml::Value::Integer(7)),
            Ok(toml::Value::Integer(7))
        );
        let text = users.parse_text("-1").unwrap_err();
        assert_eq!(text, users.check(toml::Value::Integer(-1)).unwrap_err());
        assert_eq!(text, "-1 is not a whole number from 0 to 4294967295");
        let selection = find("selection").unwrap();
        assert_eq!(
            selection.parse_text("best").unwrap_err(),
            selection
                .check(toml::Value::String("best".into()))
                .unwrap_err()
        );
        let scheduler = find("scheduler").unwrap();
        assert!(
            scheduler.parse_text("easy++").is_ok(),
            "aliases are accepted"
        );
        let modes = REPLAY.iter().find(|o| o.key == "estimate_modes").unwrap();
        assert_eq!(
            modes.parse_text("7200:0.27"),
            Ok(toml::Value::Array(vec![mode(7200, 0.27)])).map(|v| match v {
                toml::Value::Array(a) => a[0].clone(),
                other => other,
            })
        );
    }

    #[test]
    fn a_help_text_states_its_default_once() {
        for option in REPLAY.iter().chain(SITE).chain(RUN) {
            let help = match default_text(option) {
                Some(default) => format!("{}. Default: {default}.", option.help),
                None => option.help.to_string(),
            };
            assert!(
                help.matches("Default:").count() <= 1,
                "{}: {help}",
                option.key
            );
        }
    }

    #[test]
    fn every_replay_option_is_a_key_of_the_replay_table() {
        for key in replay_keys() {
            let mut table = toml::Value::Table(toml::Table::new());
            set_path(&mut table, "trace", toml::Value::String("t.swf".into())).unwrap();
            let option = REPLAY
                .iter()
                .find(|o| o.target == Target::Replay(key))
                .unwrap();
            let value = match option.kind {
                Kind::Switch => toml::Value::Boolean(false),
                Kind::Whole { .. } => toml::Value::Integer(1),
                Kind::Number => toml::Value::Float(1.0),
                Kind::Choice(names) => toml::Value::String(names()[0].name.to_string()),
                Kind::Modes => toml::Value::Array(Vec::new()),
                Kind::Text | Kind::Path => toml::Value::String("high".into()),
            };
            set_path(&mut table, key, value).unwrap();
            if let Err(e) = crate::replay_table::replay_of(table, Path::new(""), 1, Some("t")) {
                assert!(!e.to_string().contains("unknown field"), "{key}: {e}");
            }
        }
    }

    #[test]
    fn every_site_option_is_a_key_of_the_population_file() {
        for option in SITE {
            let value = match option.kind {
                Kind::Whole { .. } => toml::Value::Integer(1),
                Kind::Number => toml::Value::Float(1.0),
                Kind::Choice(names) => toml::Value::String(names()[0].name.to_string()),
                _ => continue,
            };
            let values: Values = vec![(option, value)];
            let site = site(SiteSource::Default, &values);
            if let Err(e) = site {
                assert!(
                    !e.to_string().contains("unknown field"),
                    "{}: {e}",
                    option.key
                );
            }
        }
    }
}
