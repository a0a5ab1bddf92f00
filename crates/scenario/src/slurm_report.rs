//! The Slurm model's own outputs: summary.json's `slurm` section (how the CPU time divided
//! among users against their shares, the waits by account) and `shares.csv` (the association
//! tree's fair-share columns as `sshare -l` shows them, sampled every `shares_every`).

use std::collections::BTreeMap;
use std::io::Write;

use cluster::Cluster;
use config::{Result, ScenarioError};
use serde::Serialize;
use slurm_model::{AccountWaits, ShareSample, Shares, SlurmConfig, SlurmRule};

use crate::output::OutputFormat;
use crate::sink::{JobEvent, RunEnd, RunHeader, Sink};

/// summary.json's `slurm` section, with the shares.csv samples beside it.
#[derive(Debug, Serialize)]
pub struct SlurmReport {
    /// Users who ran a job.
    pub users: usize,
    /// Jain's index over users of (share of the CPU-seconds delivered) / (normalised share):
    /// 1 when CPU time went in proportion to shares (`null` before any job ended).
    pub fairness_index: Option<f64>,
    /// The share of the delivered CPU-seconds that would have to change users for each to get
    /// its normalised share, in [0, 1].
    pub share_error: Option<f64>,
    /// The same two measures for the same users on an uncontended machine, where nothing waits
    /// (the headroom's run: FCFS on 2^30 processors, the same seed; measured with `--headroom`
    /// only, else `null`), over the same association tree as this run's: what the users'
    /// demand alone gives, so that `share_error - share_error_uncontended` is what the
    /// scheduler moved.
    pub fairness_index_uncontended: Option<f64>,
    /// See [`SlurmReport::fairness_index_uncontended`].
    pub share_error_uncontended: Option<f64>,
    /// Jobs held for good, never started, by Slurm's pending reason (`PartitionConfig`,
    /// `PartitionTimeLimit`, `QOSGrpCpuLimit`): jobs their partition or QOS can never allow,
    /// which Slurm leaves pending for ever. They are in no other table and in no measure.
    pub never_started: BTreeMap<String, u64>,
    /// Jobs and their mean wait (seconds) by account.
    pub accounts: BTreeMap<String, AccountReport>,
    /// Jobs and their mean wait by partition, with the jobs held for good in it.
    pub partitions: BTreeMap<String, HeldReport>,
    /// Jobs and their mean wait by QOS, with its jobs held for good.
    pub qos: BTreeMap<String, HeldReport>,
    /// The association tree's samples, for shares.csv.
    #[serde(skip)]
    pub shares: SharesTable,
    /// The model's configuration (for the uncontended share measures).
    #[serde(skip)]
    pub config: SlurmConfig,
}

/// One account's (or QOS's) jobs and waits.
#[derive(Debug, Serialize)]
pub struct AccountReport {
    /// Jobs started under it.
    pub jobs: u64,
    /// Their mean wait, seconds.
    pub wait_mean: f64,
}

impl AccountReport {
    fn new(waits: AccountWaits) -> AccountReport {
        AccountReport {
            jobs: waits.jobs,
            wait_mean: if waits.jobs > 0 {
                waits.wait_sum / waits.jobs as f64
            } else {
                0.0
            },
        }
    }
}

/// One partition's (or QOS's) jobs and waits, and the jobs held for good in it.
#[derive(Debug, Serialize)]
pub struct HeldReport {
    /// Jobs started in it, and their mean wait.
    #[serde(flatten)]
    pub waits: AccountReport,
    /// Jobs held for good in it, never started (see [`SlurmReport::never_started`]).
    pub never_started: u64,
}

/// shares.csv's rows: each association's names and shares, and its columns at every sample.
#[derive(Debug, Default)]
pub struct SharesTable {
    /// By association index: its account (its parent's name for a user), its user name
    /// (empty for an account) and its raw shares (`parent` for `fairshare=parent`).
    associations: Vec<(String, String, String)>,
    samples: Vec<ShareSample>,
}

impl SlurmReport {
    /// The report of a run under the Slurm model (`None` under other schedulers).
    pub fn new(cluster: &Cluster) -> Option<SlurmReport> {
        let rule = SlurmRule::of(cluster)?;
        let fairness = rule.share_fairness();
        let tree = rule.tree();
        let associations = (0..tree.len())
            .map(|i| {
                let raw = match tree.shares(i) {
                    Shares::Raw(n) => n.to_string(),
                    Shares::Parent => "parent".to_string(),
                };
                if tree.is_user(i) {
                    let account = tree.parent(i).map_or("", |p| tree.name(p));
                    (account.to_string(), tree.name(i).to_string(), raw)
                } else {
                    (tree.name(i).to_string(), String::new(), raw)
                }
            })
            .collect();
        let held = |(name, w, never_started): (&str, AccountWaits, u64)| {
            let report = HeldReport {
                waits: AccountReport::new(w),
                never_started,
            };
            (name.to_string(), report)
        };
        Some(SlurmReport {
            users: fairness.map_or(0, |f| f.users),
            fairness_index: fairness.map(|f| f.fairness_index),
            share_error: fairness.map(|f| f.share_error),
            fairness_index_uncontended: None,
            share_error_uncontended: None,
            never_started: rule
                .never_started_by_reason()
                .into_iter()
                .map(|(reason, n)| (reason.name().to_string(), n))
                .collect(),
            accounts: rule
                .account_waits()
                .map(|(name, w)| (name.to_string(), AccountReport::new(w)))
                .collect(),
            partitions: rule.partition_waits().map(held).collect(),
            qos: rule.qos_waits().map(held).collect(),
            shares: SharesTable {
                associations,
                samples: rule.share_samples().to_vec(),
            },
            config: rule.config().clone(),
        })
    }

    /// Jobs held for good, never started (all reasons).
    pub fn never_started_total(&self) -> u64 {
        self.never_started.values().sum()
    }

    /// The console's line on the jobs held for good (`None` when there are none): how many,
    /// by reason.
    pub fn never_started_line(&self) -> Option<String> {
        let total = self.never_started_total();
        (total > 0).then(|| {
            let reasons: Vec<String> = (self.never_started.iter())
                .filter(|(_, n)| **n > 0)
                .map(|(reason, n)| format!("{n} {reason}"))
                .collect();
            format!(
                "  held         {total} jobs never started: their partition or QOS can never allow them, and Slurm leaves them pending ({}); in no measure\n",
                reasons.join(", ")
            )
        })
    }

    /// Sets the uncontended share measures ([`SlurmReport::share_error_uncontended`]) from the
    /// CPU-seconds each user's jobs got on the uncontended machine: (group, user, CPU-seconds)
    /// of every job, in submission order.
    pub fn set_uncontended(&mut self, delivered: &[(i64, i64, f64)]) {
        let fairness = slurm_model::share_fairness_of(&self.config, delivered);
        self.fairness_index_uncontended = fairness.map(|f| f.fairness_index);
        self.share_error_uncontended = fairness.map(|f| f.share_error);
    }

    /// The values the measure catalogue reads (`metrics::MEASURES`' `slurm_*`; NaN where
    /// undefined).
    pub fn measured(&self) -> metrics::SlurmUse {
        metrics::SlurmUse {
            fairness_index: self.fairness_index.unwrap_or(f64::NAN),
            share_error: self.share_error.unwrap_or(f64::NAN),
        }
    }
}

/// Asks the cluster's rule to keep its periodic samples ([`Cluster::keep_samples`]; the Slurm
/// model: its association tree every `shares_every` of its configuration) when a sink writes
/// them (shares.csv).
pub fn sample_shares_if_wanted(cluster: &mut Cluster, sinks: &[Box<dyn Sink>]) {
    if !sinks.iter().any(|s| s.wants_share_samples()) {
        return;
    }
    cluster.keep_samples();
}

/// The columns of `shares.csv`, in order.
pub const SHARE_COLUMNS: [&str; 10] = [
    "time",
    "account",
    "user",
    "raw_shares",
    "norm_shares",
    "raw_usage",
    "norm_usage",
    "effective_usage",
    "level_fs",
    "fairshare",
];

/// `shares.csv`: the Slurm model's association tree at sampled priority calculations, one
/// row per association and sample, with `sshare -l`'s columns.
#[derive(Debug, Clone, Copy)]
pub struct SharesCsv;

impl OutputFormat for SharesCsv {
    fn file_name(&self) -> &'static str {
        "shares.csv"
    }
    fn about(&self) -> &'static str {
        "Slurm model only: the association tree's shares, usage and fair-share factor (sshare -l's columns) every shares_every seconds"
    }
    fn applies(&self, run: &RunHeader) -> bool {
        run.slurm.is_some()
    }
    fn sink(&self, _run: &RunHeader, out: Box<dyn Write + Send>) -> Result<Box<dyn Sink>> {
        Ok(Box::new(SharesSink(out)))
    }
}

struct SharesSink(Box<dyn Write + Send>);

fn csv_error(source: csv::Error) -> ScenarioError {
    crate::output::csv_error("shares.csv", source)
}

impl Sink for SharesSink {
    fn job(&mut self, _job: JobEvent<'_>) -> Result<()> {
        Ok(())
    }

    fn wants_share_samples(&self) -> bool {
        true
    }

    fn finish(self: Box<Self>, end: &RunEnd<'_>) -> Result<()> {
        let mut w = csv::Writer::from_writer(self.0);
        w.write_record(SHARE_COLUMNS).map_err(csv_error)?;
        if let Some(table) = end.shares {
            // Each field written as it is formatted (no string a field), into one buffer.
            let mut floats = ryu::Buffer::new();
            let mut ints = itoa::Buffer::new();
            let mut number = |w: &mut csv::Writer<_>, x: f64| {
                if x.is_infinite() {
                    w.write_field("inf") // as sshare prints a LevelFS without usage
                } else {
                    w.write_field(floats.format(x))
                }
            };
            for sample in &table.samples {
                for (row, (account, user, raw)) in sample.rows.iter().zip(&table.associations) {
                    w.write_field(ints.format(sample.time)).map_err(csv_error)?;
                    for text in [account, user, raw] {
                        w.write_field(text).map_err(csv_error)?;
                    }
                    for x in [
                        row.norm_shares,
                        row.raw_usage,
                        row.norm_usage,
                        row.effective_usage,
                    ] {
                        number(&mut w, x).map_err(csv_error)?;
                    }
                    for x in [row.level_fs, row.fair_share] {
                        match x {
                            Some(x) => number(&mut w, x),
                            None => w.write_field(""),
                        }
                        .map_err(csv_error)?;
                    }
                    w.write_record(None::<&[u8]>).map_err(csv_error)?;
                }
            }
        }
        w.flush()
            .map_err(|source| crate::output::io_error("shares.csv", source))
    }
}
