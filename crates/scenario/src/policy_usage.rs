//! dynP's policy usage as summary.json holds it and the terminal shows it (Streit's Tables 5
//! and 6, paper 002).

use std::fmt::Write;

/// dynP's policy usage as `summary.json` holds it (Streit's Tables 5 and 6).
#[derive(Debug, serde::Serialize)]
pub struct PolicyUsageReport {
    /// Jobs started under each policy.
    pub jobs_started: std::collections::BTreeMap<&'static str, u64>,
    /// Decisions taken.
    pub decisions: u64,
    /// Decisions that switched, by target policy.
    pub switches_to: std::collections::BTreeMap<&'static str, u64>,
    /// Decisions that kept the policy.
    pub kept: u64,
    /// Mean number of waiting jobs at a decision.
    pub average_backlog: f64,
    /// Self-tuning: occurrences of each case of Table 1 (by its label).
    pub cases: std::collections::BTreeMap<&'static str, u64>,
}

impl PolicyUsageReport {
    /// From the cluster's counts.
    pub fn new(usage: &cluster::PolicyUsage) -> PolicyUsageReport {
        const POLICIES: [&str; 3] = ["fcfs", "sjf", "ljf"];
        let by_policy = |counts: &[u64; 3]| {
            POLICIES
                .iter()
                .copied()
                .zip(counts.iter().copied())
                .collect()
        };
        PolicyUsageReport {
            jobs_started: by_policy(&usage.jobs_started),
            decisions: usage.decisions,
            switches_to: by_policy(&usage.switches_to),
            kept: usage.kept,
            average_backlog: if usage.decisions > 0 {
                usage.backlog_sum as f64 / usage.decisions as f64
            } else {
                0.0
            },
            cases: cluster::dynp::Case::ALL
                .iter()
                .map(|case| (case.label(), usage.cases[*case as usize]))
                .filter(|(_, n)| *n > 0)
                .collect(),
        }
    }

    /// The counts the measure catalogue reads (`metrics::MEASURES`' `dynp_*`).
    pub fn measured(&self) -> metrics::PolicyUse {
        let by_policy = |counts: &std::collections::BTreeMap<&'static str, u64>| {
            ["fcfs", "sjf", "ljf"].map(|p| counts.get(p).copied().unwrap_or(0))
        };
        metrics::PolicyUse {
            jobs_started: by_policy(&self.jobs_started),
            switches_to: by_policy(&self.switches_to),
            decisions: self.decisions,
            kept: self.kept,
            average_backlog: self.average_backlog,
        }
    }

    /// A few lines for the terminal.
    pub fn table(&self) -> String {
        let mut t = String::new();
        let total: u64 = self.jobs_started.values().sum();
        let share = |n: u64| {
            if total > 0 {
                100.0 * n as f64 / total as f64
            } else {
                0.0
            }
        };
        let _ = write!(t, "  dynP policy usage: jobs started with");
        for (policy, n) in &self.jobs_started {
            let _ = write!(t, " {policy} {n} ({:.1} %)", share(*n));
        }
        let _ = writeln!(t);
        let _ = write!(
            t,
            "  {} decisions (average backlog {:.1}): kept {}, switched to",
            self.decisions, self.average_backlog, self.kept
        );
        for (policy, n) in &self.switches_to {
            let _ = write!(t, " {policy} {n}");
        }
        let _ = writeln!(t);
        if !self.cases.is_empty() {
            let _ = write!(t, "  Table 1 cases:");
            for (case, n) in &self.cases {
                let _ = write!(t, " {case}: {n}");
            }
            let _ = writeln!(t);
        }
        t
    }
}
