//! The named choices of a scenario, each parsed in one place whether it comes from a file (serde)
//! or a flag (`FromStr`): how processors are selected on a machine of nodes, where a replay's
//! runtime estimates come from, and which jobs the measurements leave out.
//!
//! Each choice lists its names and a one-line help ([`Choice::ALL`]) so the command line can
//! offer them without the library knowing about it.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A closed set of named options.
pub trait Choice: Copy + PartialEq + 'static {
    /// What the choice is called in messages (`selection`, `estimates`, ...).
    const WHAT: &'static str;
    /// Every option: (name, help, value).
    const ALL: &'static [(&'static str, &'static str, Self)];
    /// The names of [`Choice::ALL`], in order (for serde's "expected one of" message).
    const NAMES: &'static [&'static str];

    /// The option's name.
    fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, _, v)| *v == self)
            .map_or("?", |(n, _, _)| n)
    }

    /// The option called `text`, or an error listing the names.
    fn parse_name(text: &str) -> Result<Self, String> {
        Self::ALL
            .iter()
            .find(|(n, _, _)| *n == text)
            .map(|(_, _, v)| *v)
            .ok_or_else(|| {
                let names: Vec<&str> = Self::ALL.iter().map(|(n, _, _)| *n).collect();
                format!(
                    "{text:?} is not a {}; choose one of {}",
                    Self::WHAT,
                    names.join(", ")
                )
            })
    }
}

/// Implements `FromStr`, `Display` and serde by name for a [`Choice`].
macro_rules! by_name {
    ($t:ty) => {
        impl FromStr for $t {
            type Err = String;
            fn from_str(text: &str) -> Result<Self, String> {
                <$t as Choice>::parse_name(text)
            }
        }
        impl fmt::Display for $t {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }
        impl Serialize for $t {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }
        impl<'de> Deserialize<'de> for $t {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let text = String::deserialize(d)?;
                <$t as Choice>::parse_name(&text)
                    .map_err(|_| serde::de::Error::unknown_variant(&text, <$t as Choice>::NAMES))
            }
        }
        impl schemars::JsonSchema for $t {
            fn schema_name() -> std::borrow::Cow<'static, str> {
                stringify!($t).into()
            }
            /// One of the names, each with its help (the reference lists them).
            fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
                let names: Vec<serde_json::Value> = <$t as Choice>::ALL
                    .iter()
                    .map(|(name, help, _)| serde_json::json!({"const": name, "description": help}))
                    .collect();
                schemars::json_schema!({"type": "string", "oneOf": names})
            }
        }
    };
}

/// How a job's processors are chosen on a machine of nodes (paper 001, section IV).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SelectionChoice {
    /// The lowest-numbered free processors (FF).
    #[default]
    FirstFit,
    /// The lowest-starting run of consecutive free processors (FC).
    FirstContinuous,
}

impl Choice for SelectionChoice {
    const WHAT: &'static str = "processor selection";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        (
            "first-fit",
            "the lowest-numbered free processors (FF)",
            SelectionChoice::FirstFit,
        ),
        (
            "first-continuous",
            "the lowest-starting run of consecutive free processors (FC)",
            SelectionChoice::FirstContinuous,
        ),
    ];
    const NAMES: &'static [&'static str] = &["first-fit", "first-continuous"];
}
by_name!(SelectionChoice);

impl SelectionChoice {
    /// The cluster's selection rule.
    pub fn selection(self) -> cluster::Selection {
        match self {
            SelectionChoice::FirstFit => cluster::Selection::FirstFit,
            SelectionChoice::FirstContinuous => cluster::Selection::FirstContinuous,
        }
    }

    /// In words, for reports: `first fit`, `first continuous`.
    pub fn words(self) -> &'static str {
        match self {
            SelectionChoice::FirstFit => "first fit",
            SelectionChoice::FirstContinuous => "first continuous",
        }
    }
}

/// What a site does with jobs its models draw wider than the machine (`site.job_sizes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobSizesChoice {
    /// Refuse the site, naming the group and its widest job (the behaviour before the choice).
    #[default]
    Reject,
    /// Clip every size to the machine: the wider jobs become jobs of the whole machine.
    Clip,
    /// Scale every size by machine / widest (rounded, at least 1): the widest job fills the
    /// machine and the shape of the distribution is kept.
    Scale,
}

impl Choice for JobSizesChoice {
    const WHAT: &'static str = "rule for jobs wider than the machine";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        (
            "reject",
            "refuse a site whose models have jobs wider than the machine",
            JobSizesChoice::Reject,
        ),
        (
            "clip",
            "clip wider jobs to the machine's size",
            JobSizesChoice::Clip,
        ),
        (
            "scale",
            "scale every job size by machine / widest job (rounded, at least 1)",
            JobSizesChoice::Scale,
        ),
    ];
    const NAMES: &'static [&'static str] = &["reject", "clip", "scale"];
}
by_name!(JobSizesChoice);

impl JobSizesChoice {
    /// Whether this is the default (`reject`), which population files need not echo.
    pub fn is_reject(&self) -> bool {
        *self == JobSizesChoice::Reject
    }
}

/// Where replayed jobs' runtime estimates come from (Tsafrir's thesis, chapters 3 and 5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum EstimateChoice {
    /// The trace's own (field 9; the runtime where it has none).
    #[default]
    Trace,
    /// The runtime (perfect estimates).
    Exact,
    /// The random f-model: uniform in [r, (f + 1) r], truncated at E_max (thesis, section 3.8).
    F,
    /// The deterministic f-model: (f + 1) r, truncated at E_max.
    FDeterministic,
    /// The Phi-model (thesis, section 1.2.2).
    Phi,
    /// Tsafrir's modal model (thesis, chapter 5).
    Modal,
}

impl Choice for EstimateChoice {
    const WHAT: &'static str = "estimate model";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        (
            "trace",
            "the trace's own (field 9; the runtime where it has none)",
            EstimateChoice::Trace,
        ),
        (
            "exact",
            "the runtime (perfect estimates)",
            EstimateChoice::Exact,
        ),
        (
            "f",
            "the random f-model: uniform in [r, (f + 1) r], truncated at E_max",
            EstimateChoice::F,
        ),
        (
            "f-deterministic",
            "the deterministic f-model: (f + 1) r, truncated at E_max",
            EstimateChoice::FDeterministic,
        ),
        (
            "phi",
            "the Phi-model: the runtime with probability Phi, else r / u (u uniform in (0, 1]; x10 below 90 s), truncated at E_max",
            EstimateChoice::Phi,
        ),
        (
            "modal",
            "Tsafrir's modal model: about 20 popular values holding 89 % of the jobs and a power-law tail, assigned by random shuffle (never below the runtime)",
            EstimateChoice::Modal,
        ),
    ];
    const NAMES: &'static [&'static str] =
        &["trace", "exact", "f", "f-deterministic", "phi", "modal"];
}
by_name!(EstimateChoice);

/// Which jobs the averages leave out (see [`metrics::Warmup`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WarmupChoice {
    /// Every job counts.
    #[default]
    None,
    /// Leave out the first 1 % of terminated jobs and those ending after the last arrival
    /// (Tsafrir's thesis, section 2.4).
    Tsafrir,
}

impl Choice for WarmupChoice {
    const WHAT: &'static str = "warm-up exclusion";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        ("none", "every job counts", WarmupChoice::None),
        (
            "tsafrir",
            "leave out the first 1 % of terminated jobs and those ending after the last arrival",
            WarmupChoice::Tsafrir,
        ),
    ];
    const NAMES: &'static [&'static str] = &["none", "tsafrir"];
}
by_name!(WarmupChoice);

impl WarmupChoice {
    /// The metrics setting.
    pub fn warmup(self) -> metrics::Warmup {
        match self {
            WarmupChoice::None => metrics::Warmup::None,
            WarmupChoice::Tsafrir => metrics::Warmup::Tsafrir,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<C: Choice + FromStr<Err = String> + fmt::Debug + Serialize>() {
        for (name, help, value) in C::ALL {
            assert!(!help.is_empty());
            assert_eq!(name.parse::<C>().as_ref(), Ok(value));
            assert_eq!(value.name(), *name);
            let json = serde_json::to_string(value).unwrap_or_default();
            assert_eq!(json, format!("{name:?}"));
        }
        let names: Vec<&str> = C::ALL.iter().map(|(n, _, _)| *n).collect();
        assert_eq!(names, C::NAMES);
        let err = "no-such".parse::<C>().err().unwrap_or_default();
        assert!(
            err.contains("no-such") && err.contains(C::ALL[0].0),
            "{err}"
        );
    }

    #[test]
    fn every_choice_round_trips_by_name() {
        round_trip::<SelectionChoice>();
        round_trip::<EstimateChoice>();
        round_trip::<WarmupChoice>();
    }

    #[test]
    fn serde_reads_names_and_rejects_others() {
        #[derive(Deserialize)]
        struct File {
            selection: SelectionChoice,
        }
        let ok: Result<File, _> = toml::from_str("selection = \"first-continuous\"");
        assert!(ok.is_ok_and(|f| f.selection == SelectionChoice::FirstContinuous));
        let bad = toml::from_str::<File>("selection = \"best-fit\"")
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            bad.contains("best-fit") && bad.contains("first-fit"),
            "{bad}"
        );
    }
}

/// What a trace file is (`--format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FormatChoice {
    /// Told from the first line: a sacct header row (`JobID|...`), a header row that only one
    /// modern trace format has (Helios, Acme, Supercloud), or SWF.
    #[default]
    Auto,
    /// Standard Workload Format.
    Swf,
    /// A `sacct --parsable2` dump.
    Sacct,
    /// A modern public trace, read natively ([`traces::Format`]).
    Trace(traces::Format),
}

impl Choice for FormatChoice {
    const WHAT: &'static str = "trace format";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        (
            "auto",
            "told from the first line: a sacct --parsable2 header row, a Helios, Acme or Supercloud header row, else SWF",
            FormatChoice::Auto,
        ),
        ("swf", "Standard Workload Format", FormatChoice::Swf),
        (
            "sacct",
            "a Slurm accounting dump (sacct --parsable2 with a header row)",
            FormatChoice::Sacct,
        ),
        (
            "helios",
            "SenseTime's Helios (cluster_log.csv)",
            FormatChoice::Trace(traces::Format::Helios),
        ),
        (
            "philly",
            "Microsoft's Philly (cluster_job_log, JSON)",
            FormatChoice::Trace(traces::Format::Philly),
        ),
        (
            "alibaba-pai",
            "Alibaba's PAI GPU trace 2020 (pai_task_table.csv with pai_job_table.csv beside it)",
            FormatChoice::Trace(traces::Format::AlibabaPai),
        ),
        (
            "acme",
            "Shanghai AI Lab's Acme (trace_seren.csv, trace_kalos.csv)",
            FormatChoice::Trace(traces::Format::Acme),
        ),
        (
            "supercloud",
            "MIT Supercloud's Slurm scheduler log (slurm-log.csv)",
            FormatChoice::Trace(traces::Format::Supercloud),
        ),
    ];
    const NAMES: &'static [&'static str] = &[
        "auto",
        "swf",
        "sacct",
        "helios",
        "philly",
        "alibaba-pai",
        "acme",
        "supercloud",
    ];
}
by_name!(FormatChoice);

/// Which time starts a sacct job's wait (`--wait-from`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WaitFromChoice {
    /// Submit: the user's view.
    #[default]
    Submit,
    /// Eligible: after holds, --begin and dependencies.
    Eligible,
}

impl Choice for WaitFromChoice {
    const WHAT: &'static str = "start of the wait";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        (
            "submit",
            "Submit: when the user submitted the job (the user's view; SWF's submit time)",
            WaitFromChoice::Submit,
        ),
        (
            "eligible",
            "Eligible: when it could first start, after holds, --begin and dependencies (Slurm's age factor counts from here); the replay submits it then",
            WaitFromChoice::Eligible,
        ),
    ];
    const NAMES: &'static [&'static str] = &["submit", "eligible"];
}
by_name!(WaitFromChoice);

impl WaitFromChoice {
    /// The reader's setting.
    pub fn wait_from(self) -> sacct::WaitFrom {
        match self {
            WaitFromChoice::Submit => sacct::WaitFrom::Submit,
            WaitFromChoice::Eligible => sacct::WaitFrom::Eligible,
        }
    }
}

/// The submit time of a requeued sacct job (`--requeued`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RequeuedChoice {
    /// Its first run's submit time.
    #[default]
    FirstSubmit,
    /// Its last run's (reset) submit time.
    LastSubmit,
}

impl Choice for RequeuedChoice {
    const WHAT: &'static str = "requeue policy";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        (
            "first-submit",
            "the last run is the job, its wait counted from the first run's submit (Slurm resets Submit at a requeue; needs sacct --duplicates)",
            RequeuedChoice::FirstSubmit,
        ),
        (
            "last-submit",
            "the last run is the job, with its own (reset) submit time",
            RequeuedChoice::LastSubmit,
        ),
    ];
    const NAMES: &'static [&'static str] = &["first-submit", "last-submit"];
}
by_name!(RequeuedChoice);

impl RequeuedChoice {
    /// The reader's setting.
    pub fn requeued(self) -> sacct::Requeued {
        match self {
            RequeuedChoice::FirstSubmit => sacct::Requeued::FirstSubmit,
            RequeuedChoice::LastSubmit => sacct::Requeued::LastSubmit,
        }
    }
}

/// What a sacct job's processors count (`--processor-unit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum UnitChoice {
    /// CPUs.
    #[default]
    Cpus,
    /// Whole nodes.
    Nodes,
}

impl Choice for UnitChoice {
    const WHAT: &'static str = "processor unit";
    const ALL: &'static [(&'static str, &'static str, Self)] = &[
        (
            "cpus",
            "CPUs: NCPUS allocated (whole nodes for exclusive jobs), ReqCPUS requested",
            UnitChoice::Cpus,
        ),
        (
            "nodes",
            "nodes: NNodes allocated, ReqNodes requested (a site that allocates whole nodes)",
            UnitChoice::Nodes,
        ),
    ];
    const NAMES: &'static [&'static str] = &["cpus", "nodes"];
}
by_name!(UnitChoice);

impl UnitChoice {
    /// The converter's unit.
    pub fn unit(self) -> sacct::Unit {
        match self {
            UnitChoice::Cpus => sacct::Unit::Cpus,
            UnitChoice::Nodes => sacct::Unit::Nodes,
        }
    }
}
