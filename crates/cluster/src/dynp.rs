//! Streit's dynP: conservative backfilling whose queue order (FCFS, SJF or LJF) switches while
//! the machine runs (paper 002, section 3).
//!
//! Every pass rebuilds the whole plan from scratch in the current order (Streit's full schedules:
//! "reorder waiting queue according to new policy"), so unlike [`crate::backfill::Conservative`]
//! a reservation may move later when the order changes or a higher-priority job arrives. The
//! deciders are pure functions here; the rule ([`crate::backfill::DynPRule`]) calls them and
//! keeps the [`PolicyUsage`].

use crate::{ListOrder, Time};

/// The dynP variants.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DynP {
    /// Section 3.1: at each submission, with at least 5 waiting jobs, the average estimated
    /// runtime (AERT) of the waiting queue picks SJF (0 < AERT <= lower), FCFS (lower < AERT <=
    /// upper) or LJF (upper < AERT). Bounds in seconds.
    Basic {
        /// Lower bound, seconds (Streit: 7200).
        lower: Time,
        /// Upper bound, seconds (Streit: 9000).
        upper: Time,
    },
    /// Section 3.2: at each pass (a submission or a job end) where a job has to wait, build the
    /// full schedule for FCFS, SJF and LJF, measure each by `quality` and let `decider` pick;
    /// the pass then runs the chosen schedule.
    SelfTuning {
        /// How a virtual schedule is judged (lower is better).
        quality: Quality,
        /// Which decider of Table 1.
        decider: Decider,
    },
}

/// Streit's bounds for basic dynP (section 5: "7200s for the lower and 9000s for the upper
/// bound", the best setting of his earlier study).
pub const STREIT_BOUNDS: (Time, Time) = (7200, 9000);

/// Basic dynP's parameters (the `dynp` rule's keys of `[scheduler]`, flags of `run` and
/// `replay`): bounds on the waiting jobs' mean estimate, seconds.
#[derive(
    Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(default, deny_unknown_fields)]
pub struct DynpBounds {
    /// The lower bound, seconds: below it the decider picks SJF. Default 7200 (Streit).
    pub dynp_lower: Time,
    /// The upper bound, seconds (at least the lower): above it the decider picks LJF.
    /// Default 9000 (Streit).
    pub dynp_upper: Time,
}

impl Default for DynpBounds {
    fn default() -> Self {
        DynpBounds {
            dynp_lower: STREIT_BOUNDS.0,
            dynp_upper: STREIT_BOUNDS.1,
        }
    }
}

impl crate::params::PartParams for DynpBounds {
    fn check(&mut self, _part: &str) -> Result<(), crate::params::BadValue> {
        let (lower, upper) = (self.dynp_lower, self.dynp_upper);
        if 0 <= lower && lower <= upper {
            Ok(())
        } else {
            Err(crate::params::BadValue::new(
                format!(
                    "dynP bounds must satisfy 0 <= dynp_lower <= dynp_upper, got {lower} and {upper}"
                ),
                &["dynp_lower", "dynp_upper"],
            ))
        }
    }
}

/// Self-tuning dynP's parameters (the `dynp-simple` and `dynp-advanced` rules' keys).
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(default, deny_unknown_fields)]
pub struct DynpQuality {
    /// The quality the decider judges its virtual schedules by: `makespan`, `art` or `artww`
    /// (and experimental variants). Default `artww`, Streit's best.
    pub quality: Quality,
}

impl crate::params::PartParams for DynpQuality {}

/// The quality of a virtual schedule (section 3.2), over its jobs (running and waiting) with
/// end = planned start + estimate. Lower is better.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quality {
    /// MS: the latest planned end.
    Makespan,
    /// ART: the mean response time (end - submit).
    ResponseTime,
    /// ARTwW: the response time weighted by the job's width (processors).
    WidthWeightedResponseTime,
    /// Experiment (issue 15, mechanism (a); not in [`Quality::ALL`], never a default): ARTwW
    /// of the waiting jobs as a mean (sum of width x response over sum of widths), truncated to
    /// whole minutes, so that schedules within a minute of each other tie.
    WidthWeightedResponseTimeMinutes,
    /// As [`Quality::WidthWeightedResponseTimeMinutes`], truncated to 10 minutes.
    WidthWeightedResponseTimeTenMinutes,
    /// As [`Quality::WidthWeightedResponseTimeMinutes`], truncated to hours.
    WidthWeightedResponseTimeHours,
    /// Experiment (issue 15, mechanism (d); not in [`Quality::ALL`], never a default): exact
    /// ARTwW, judged on [`Generation::KeepPlaced`] schedules (at a pass with no job end since
    /// the last one, the jobs placed before keep their planned starts and only the new jobs
    /// are placed in each policy's order; a job end rebuilds every schedule from scratch).
    WidthWeightedResponseTimeKeepPlaced,
    /// Experiment (issue 32; not in [`Quality::ALL`], never a default): exact ARTwW, judged on
    /// schedules whose FCFS schedule places the waiting jobs in the queue's current order
    /// ([`FcfsOrder::Queue`]: the order the last pass's chosen schedule left, the jobs
    /// submitted since then behind it in arrival order) instead of re-sorting them by submit
    /// time.
    WidthWeightedResponseTimeQueueOrder,
}

/// The order a self-tuning dynP's FCFS schedule places the waiting jobs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FcfsOrder {
    /// By submit time, then id: first come, first served (the default).
    Submit,
    /// Experiment (issue 32), one reading of Streit's section 3: the waiting queue as it stands,
    /// in the order the previous policy left it ("reorder waiting queue according to new
    /// policy" in basic dynP; `JobQueue.generateSchedule("FCFS")` in self-tuning dynP). After
    /// SJF or LJF was in use, the FCFS schedule keeps that order for the jobs it ordered and
    /// puts the jobs submitted since behind them, in arrival order.
    Queue,
}

/// How a self-tuning dynP generates its three virtual schedules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// Every pass (a submission or a job end) places every waiting job anew in the policy's
    /// order (the default).
    Rebuild,
    /// Experiment (issue 15, mechanism (d)), one reading of Streit's section 5: "A rescheduling
    /// process is done every time a job ends" (rebuild from scratch, as [`Generation::Rebuild`])
    /// while "Proposed start times are assigned to jobs right after their submission as they
    /// are directly placed in the schedule": at a pass with no job end since the last pass,
    /// the waiting jobs placed by the last pass keep their planned starts in all three
    /// schedules, and only the jobs new since then are placed, in the policy's order.
    KeepPlaced,
}

impl Quality {
    /// Every quality.
    pub const ALL: [Quality; 3] = [
        Quality::Makespan,
        Quality::ResponseTime,
        Quality::WidthWeightedResponseTime,
    ];

    /// The experimental coarse qualities (issue 15): ARTwW truncated to 60, 600 and 3600 s.
    pub const COARSE: [Quality; 3] = [
        Quality::WidthWeightedResponseTimeMinutes,
        Quality::WidthWeightedResponseTimeTenMinutes,
        Quality::WidthWeightedResponseTimeHours,
    ];

    /// Every quality a name selects: [`Quality::ALL`], then the experiments.
    pub const NAMED: [Quality; 8] = [
        Quality::Makespan,
        Quality::ResponseTime,
        Quality::WidthWeightedResponseTime,
        Quality::WidthWeightedResponseTimeMinutes,
        Quality::WidthWeightedResponseTimeTenMinutes,
        Quality::WidthWeightedResponseTimeHours,
        Quality::WidthWeightedResponseTimeKeepPlaced,
        Quality::WidthWeightedResponseTimeQueueOrder,
    ];

    /// The quality named `name` (`makespan`, `art`, `artww`, or an experimental
    /// `artww-60s`, `artww-600s`, `artww-3600s`, `artww-keep`, `artww-queue`).
    pub fn from_name(name: &str) -> Option<Quality> {
        Quality::NAMED.into_iter().find(|q| q.name() == name)
    }

    /// What the quality measures, one line (help texts and the reference list it).
    pub fn help(self) -> &'static str {
        match self {
            Quality::Makespan => "makespan: the latest planned end",
            Quality::ResponseTime => "average response time",
            Quality::WidthWeightedResponseTime => {
                "average response time weighted by width (Streit's best)"
            }
            Quality::WidthWeightedResponseTimeMinutes => {
                "experiment: the waiting jobs' ARTwW mean truncated to minutes"
            }
            Quality::WidthWeightedResponseTimeTenMinutes => "experiment: truncated to 10 minutes",
            Quality::WidthWeightedResponseTimeHours => "experiment: truncated to hours",
            Quality::WidthWeightedResponseTimeKeepPlaced => {
                "experiment: artww; between job ends the placed jobs keep their starts"
            }
            Quality::WidthWeightedResponseTimeQueueOrder => {
                "experiment: artww; the FCFS schedule keeps the queue's current order (the previous policy's)"
            }
        }
    }

    /// How the virtual schedules this quality judges are generated: [`Generation::Rebuild`]
    /// but for the experimental `artww-keep`.
    pub fn generation(self) -> Generation {
        match self {
            Quality::WidthWeightedResponseTimeKeepPlaced => Generation::KeepPlaced,
            _ => Generation::Rebuild,
        }
    }

    /// The order the FCFS schedule places the waiting jobs in: [`FcfsOrder::Submit`] but for
    /// the experimental `artww-queue`.
    pub fn fcfs_order(self) -> FcfsOrder {
        match self {
            Quality::WidthWeightedResponseTimeQueueOrder => FcfsOrder::Queue,
            _ => FcfsOrder::Submit,
        }
    }

    /// The resolution, seconds, a coarse quality truncates its mean to (`None`: exact sums).
    pub fn resolution(self) -> Option<i128> {
        match self {
            Quality::WidthWeightedResponseTimeMinutes => Some(60),
            Quality::WidthWeightedResponseTimeTenMinutes => Some(600),
            Quality::WidthWeightedResponseTimeHours => Some(3600),
            _ => None,
        }
    }

    /// `makespan`, `art` or `artww`.
    pub fn name(self) -> &'static str {
        match self {
            Quality::Makespan => "makespan",
            Quality::ResponseTime => "art",
            Quality::WidthWeightedResponseTime => "artww",
            Quality::WidthWeightedResponseTimeMinutes => "artww-60s",
            Quality::WidthWeightedResponseTimeTenMinutes => "artww-600s",
            Quality::WidthWeightedResponseTimeHours => "artww-3600s",
            Quality::WidthWeightedResponseTimeKeepPlaced => "artww-keep",
            Quality::WidthWeightedResponseTimeQueueOrder => "artww-queue",
        }
    }
}

impl Default for Quality {
    /// ARTwW, Streit's best.
    fn default() -> Self {
        Quality::WidthWeightedResponseTime
    }
}

impl serde::Serialize for Quality {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for Quality {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        const NAMES: [&str; 8] = [
            "makespan",
            "art",
            "artww",
            "artww-60s",
            "artww-600s",
            "artww-3600s",
            "artww-keep",
            "artww-queue",
        ];
        let name = String::deserialize(deserializer)?;
        Quality::from_name(&name).ok_or_else(|| serde::de::Error::unknown_variant(&name, &NAMES))
    }
}

impl schemars::JsonSchema for Quality {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Quality".into()
    }

    /// One of the names, each with its help (the reference lists them).
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<serde_json::Value> = Quality::NAMED
            .iter()
            .map(|q| serde_json::json!({"const": q.name(), "description": q.help()}))
            .collect();
        schemars::json_schema!({"type": "string", "oneOf": names})
    }
}

/// The deciders of section 3.2 (Table 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decider {
    /// The first decider: prefers FCFS on ties.
    Simple,
    /// The advanced decider: keeps the current policy where the qualities cannot tell.
    Advanced,
}

impl Decider {
    /// `simple` or `advanced`.
    pub fn name(self) -> &'static str {
        match self {
            Decider::Simple => "simple",
            Decider::Advanced => "advanced",
        }
    }
}

/// The rows of Table 1: how the three qualities compare (and, where it matters, the current
/// policy). Some rows of the table overlap (7 lies inside 2, 9 inside 3, and 5 is the same
/// comparison as 4b); like Table 6, which counts them together, each pair is one case here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[allow(missing_docs)] // the names are Table 1's row labels
pub enum Case {
    C1,
    C2,
    C3,
    C4a,
    C4b,
    C4c,
    C6a,
    C6b,
    C6c,
    C8a,
    C8b,
    C8c,
    C10a,
    C10b,
    C10c,
}

impl Case {
    /// Every case, in Table 1's order.
    pub const ALL: [Case; 15] = [
        Case::C1,
        Case::C2,
        Case::C3,
        Case::C4a,
        Case::C4b,
        Case::C4c,
        Case::C6a,
        Case::C6b,
        Case::C6c,
        Case::C8a,
        Case::C8b,
        Case::C8c,
        Case::C10a,
        Case::C10b,
        Case::C10c,
    ];

    /// Table 1's label: `1`, `2/7`, `4a`, `4b/5`, `10c`.
    pub fn label(self) -> &'static str {
        const LABELS: [&str; 15] = [
            "1", "2/7", "3/9", "4a", "4b/5", "4c", "6a", "6b", "6c", "8a", "8b", "8c", "10a",
            "10b", "10c",
        ];
        LABELS[self as usize]
    }

    /// Which row of Table 1 the qualities (FCFS, SJF, LJF; lower is better) fall in, given the
    /// current policy.
    pub fn classify(fcfs: i128, sjf: i128, ljf: i128, current: ListOrder) -> Case {
        let (f, s, l) = (fcfs, sjf, ljf);
        let by_current = |on_fcfs, on_sjf, on_ljf| match current {
            ListOrder::Fcfs => on_fcfs,
            ListOrder::Sjf => on_sjf,
            ListOrder::Ljf => on_ljf,
        };
        if f == s && s == l {
            Case::C1
        } else if s < f && s < l {
            Case::C2 // and 7 (F = L)
        } else if f < s && f < l {
            Case::C3 // and 9 (S = L)
        } else if l < f && l < s {
            match f.cmp(&s) {
                std::cmp::Ordering::Less => Case::C4a,
                std::cmp::Ordering::Equal => Case::C4b, // and 5
                std::cmp::Ordering::Greater => Case::C4c,
            }
        } else if f == s {
            by_current(Case::C6a, Case::C6b, Case::C6c) // F = S < L
        } else if f == l {
            by_current(Case::C8a, Case::C8b, Case::C8c) // F = L < S
        } else {
            by_current(Case::C10a, Case::C10b, Case::C10c) // S = L < F
        }
    }

    /// The policy Table 1 prescribes for this case under `decider`.
    pub fn decision(self, decider: Decider, current: ListOrder) -> ListOrder {
        use ListOrder::{Fcfs, Ljf, Sjf};
        let advanced = decider == Decider::Advanced;
        match self {
            Case::C1 => {
                if advanced {
                    current
                } else {
                    Fcfs
                }
            }
            Case::C2 => Sjf,
            Case::C3 => Fcfs,
            Case::C4a | Case::C4b | Case::C4c => Ljf,
            Case::C6a | Case::C8a | Case::C10b => current,
            Case::C6b => {
                if advanced {
                    current
                } else {
                    Fcfs
                }
            }
            Case::C6c | Case::C8b => Fcfs,
            Case::C8c => {
                if advanced {
                    current
                } else {
                    Fcfs
                }
            }
            Case::C10a => Sjf,
            Case::C10c => {
                if advanced {
                    current
                } else {
                    Sjf
                }
            }
        }
    }
}

/// The simple decider exactly as section 3.2's pseudocode writes it (Table 1's middle column).
pub fn simple_decider(fcfs: i128, sjf: i128, ljf: i128) -> ListOrder {
    if sjf <= ljf {
        if fcfs <= sjf {
            ListOrder::Fcfs
        } else {
            ListOrder::Sjf
        }
    } else if fcfs <= ljf {
        ListOrder::Fcfs
    } else {
        ListOrder::Ljf
    }
}

/// Basic dynP's choice (section 3.1) for a waiting queue of `waiting` jobs whose estimates sum
/// to `estimate_sum` seconds; `None` keeps the current policy (fewer than 5 jobs, AERT = 0).
pub fn basic_decision(
    waiting: usize,
    estimate_sum: i128,
    lower: Time,
    upper: Time,
) -> Option<ListOrder> {
    if waiting < 5 {
        return None;
    }
    let n = waiting as i128;
    // AERT = sum / n compared with the bounds without rounding: AERT <= x  <=>  sum <= x * n.
    let at_most = |bound: Time| estimate_sum <= i128::from(bound) * n;
    if estimate_sum <= 0 {
        None
    } else if at_most(lower) {
        Some(ListOrder::Sjf)
    } else if at_most(upper) {
        Some(ListOrder::Fcfs)
    } else {
        Some(ListOrder::Ljf)
    }
}

/// How dynP used its policies over a run: what section 5 reports (Tables 4-6).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyUsage {
    /// Jobs started under each policy: FCFS, SJF, LJF.
    pub jobs_started: [u64; 3],
    /// Decisions taken ("total tries of switches").
    pub decisions: u64,
    /// Decisions that switched to FCFS, SJF, LJF.
    pub switches_to: [u64; 3],
    /// Decisions that kept the policy.
    pub kept: u64,
    /// Self-tuning only: how often each case of Table 1 occurred (indexed like [`Case::ALL`]).
    pub cases: [u64; 15],
    /// Sum over decisions of the waiting jobs at the decision ("average backlog").
    pub backlog_sum: u64,
}

impl PolicyUsage {
    /// Records one decision from `from` to `to` with `backlog` jobs waiting.
    pub(crate) fn decided(
        &mut self,
        from: ListOrder,
        to: ListOrder,
        backlog: usize,
        case: Option<Case>,
    ) {
        self.decisions += 1;
        self.backlog_sum += backlog as u64;
        if from == to {
            self.kept += 1;
        } else {
            self.switches_to[to as usize] += 1;
        }
        if let Some(case) = case {
            self.cases[case as usize] += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ListOrder::{Fcfs, Ljf, Sjf};

    #[test]
    fn coarse_qualities_are_named_but_never_defaults() {
        for (name, seconds) in [
            ("artww-60s", 60),
            ("artww-600s", 600),
            ("artww-3600s", 3600),
        ] {
            let q = Quality::from_name(name).unwrap();
            assert_eq!(q.name(), name);
            assert_eq!(q.resolution(), Some(seconds));
            assert!(!Quality::ALL.contains(&q));
        }
        assert!(Quality::ALL.iter().all(|q| q.resolution().is_none()));
    }

    #[test]
    fn only_the_experimental_queue_quality_keeps_the_queue_order_for_fcfs() {
        let q = Quality::from_name("artww-queue").unwrap();
        assert_eq!(q.name(), "artww-queue");
        assert_eq!(q.fcfs_order(), FcfsOrder::Queue);
        assert_eq!(q.generation(), Generation::Rebuild);
        assert_eq!(q.resolution(), None);
        assert!(!Quality::ALL.contains(&q));
        assert!(
            Quality::ALL
                .into_iter()
                .chain(Quality::COARSE)
                .chain([Quality::WidthWeightedResponseTimeKeepPlaced])
                .all(|q| q.fcfs_order() == FcfsOrder::Submit)
        );
    }

    /// One example of every row of Table 1: (F, S, L, current, case, simple, advanced).
    const TABLE_1: [(i128, i128, i128, ListOrder, Case, ListOrder, ListOrder); 20] = [
        (5, 5, 5, Sjf, Case::C1, Fcfs, Sjf),
        (5, 5, 5, Ljf, Case::C1, Fcfs, Ljf),
        (5, 3, 4, Fcfs, Case::C2, Sjf, Sjf),
        (3, 5, 4, Ljf, Case::C3, Fcfs, Fcfs),
        (3, 5, 1, Fcfs, Case::C4a, Ljf, Ljf),
        (3, 3, 1, Fcfs, Case::C4b, Ljf, Ljf), // also case 5
        (5, 3, 1, Sjf, Case::C4c, Ljf, Ljf),
        (3, 3, 5, Fcfs, Case::C6a, Fcfs, Fcfs),
        (3, 3, 5, Sjf, Case::C6b, Fcfs, Sjf),
        (3, 3, 5, Ljf, Case::C6c, Fcfs, Fcfs),
        (5, 3, 5, Ljf, Case::C2, Sjf, Sjf), // row 7
        (3, 5, 3, Fcfs, Case::C8a, Fcfs, Fcfs),
        (3, 5, 3, Sjf, Case::C8b, Fcfs, Fcfs),
        (3, 5, 3, Ljf, Case::C8c, Fcfs, Ljf),
        (3, 5, 5, Sjf, Case::C3, Fcfs, Fcfs), // row 9
        (5, 3, 3, Fcfs, Case::C10a, Sjf, Sjf),
        (5, 3, 3, Sjf, Case::C10b, Sjf, Sjf),
        (5, 3, 3, Ljf, Case::C10c, Sjf, Ljf),
        (3, 3, 1, Ljf, Case::C4b, Ljf, Ljf),
        (1, 1, 1, Fcfs, Case::C1, Fcfs, Fcfs),
    ];

    #[test]
    fn every_case_of_table_1_for_both_deciders() {
        for (f, s, l, current, case, simple, advanced) in TABLE_1 {
            assert_eq!(
                Case::classify(f, s, l, current),
                case,
                "{f} {s} {l} {current:?}"
            );
            assert_eq!(
                case.decision(Decider::Simple, current),
                simple,
                "{case:?} simple"
            );
            assert_eq!(
                case.decision(Decider::Advanced, current),
                advanced,
                "{case:?} advanced"
            );
            assert_eq!(simple_decider(f, s, l), simple, "pseudocode, {case:?}");
        }
        // Every case is covered.
        for case in Case::ALL {
            assert!(TABLE_1.iter().any(|row| row.4 == case), "{case:?} untested");
        }
    }

    #[test]
    fn the_simple_decider_is_table_1s_middle_column_on_all_orderings() {
        for f in 0..3 {
            for s in 0..3 {
                for l in 0..3 {
                    for current in [Fcfs, Sjf, Ljf] {
                        let case = Case::classify(f, s, l, current);
                        assert_eq!(
                            case.decision(Decider::Simple, current),
                            simple_decider(f, s, l),
                            "{f} {s} {l} {current:?} {case:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn basic_dynp_compares_the_mean_estimate_with_the_bounds() {
        let (lo, hi) = STREIT_BOUNDS;
        assert_eq!(
            basic_decision(4, 4 * 100, lo, hi),
            None,
            "fewer than 5 jobs"
        );
        assert_eq!(basic_decision(5, 0, lo, hi), None, "AERT 0");
        assert_eq!(basic_decision(5, 5 * 7200, lo, hi), Some(Sjf));
        assert_eq!(basic_decision(5, 5 * 7200 + 1, lo, hi), Some(Fcfs));
        assert_eq!(basic_decision(5, 5 * 9000, lo, hi), Some(Fcfs));
        assert_eq!(basic_decision(5, 5 * 9000 + 1, lo, hi), Some(Ljf));
    }
}
