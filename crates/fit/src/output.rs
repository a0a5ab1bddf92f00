//! The scalars of a fit and the files of `models/`.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::sessions::TraceSamples;
use crate::trace::TraceJobs;
use crate::{Fit, TraceFit, Weighting};
use usermodel::{
    ContinueFit, FittedParameters, MODEL_FILES, Model, PARAMETERS_FILE, PARAMETERS_HELP,
};

/// The numbers that summarize a model (written to `summary.toml`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Scalars {
    /// Usable jobs.
    pub jobs: u64,
    /// Users with usable jobs.
    pub users: u64,
    /// Sessions.
    pub sessions: u64,
    /// Batches.
    pub batches: u64,
    /// Fitted `a` of p = a / (b r + 1) (paper: 0.8).
    pub continue_a: f64,
    /// Fitted `b`, per minute (paper: 0.05).
    pub continue_b: f64,
    /// Share of think times that are negative (a job submitted while earlier ones still ran).
    pub negative_think_share: f64,
    /// Median jobs per session.
    pub median_session_jobs: i64,
    /// Mean jobs per session.
    pub mean_session_jobs: f64,
    /// Mean jobs per batch.
    pub mean_batch_width: f64,
    /// Think times above the longest break, left out of the break distribution.
    pub long_breaks_dropped: u64,
    /// Share of submissions in the local daytime 07:30-17:30 (paper: 70 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub day_fraction: Option<f64>,
    /// Share of submissions Monday to Friday (paper: 80 %).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weekday_fraction: Option<f64>,
    /// Share of jobs with an estimate whose runtime exceeds it (killed at the estimate in
    /// simulation).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runtime_over_estimate_share: Option<f64>,
}

impl Scalars {
    /// The scalars a model directory carries in `parameters.csv`.
    pub fn parameters(&self) -> FittedParameters {
        FittedParameters {
            continue_a: self.continue_a,
            continue_b: self.continue_b,
            day_fraction: self.day_fraction,
            weekday_fraction: self.weekday_fraction,
        }
    }
}

/// Six decimals: enough for every scalar here, and stable text.
fn round(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

fn ratio(part: u64, whole: u64) -> Option<f64> {
    (whole > 0).then(|| part as f64 / whole as f64)
}

fn over_estimate(samples: &TraceSamples) -> (u64, u64) {
    let over = samples.estimates.iter().filter(|(r, e)| r > e).count() as u64;
    (over, samples.estimates.len() as u64)
}

impl Scalars {
    pub(crate) fn of_trace(_trace: &TraceJobs, s: &TraceSamples, model: &Model) -> Scalars {
        let fit = crate::continue_fit(model).unwrap_or(ContinueFit {
            a: f64::NAN,
            b: f64::NAN,
        });
        let (over, with_estimate) = over_estimate(s);
        Scalars {
            jobs: s.jobs,
            users: s.users,
            sessions: s.session_lengths.len() as u64,
            batches: s.batch_widths.len() as u64,
            continue_a: round(fit.a),
            continue_b: round(fit.b),
            negative_think_share: round(
                ratio(s.negative_think, s.think_all.len() as u64).unwrap_or(0.0),
            ),
            median_session_jobs: model.session_length.median(),
            mean_session_jobs: round(model.session_length.mean()),
            mean_batch_width: round(model.batch_width.mean()),
            long_breaks_dropped: s.long_breaks,
            day_fraction: ratio(s.daytime, s.located).map(round),
            weekday_fraction: ratio(s.weekdays, s.located).map(round),
            runtime_over_estimate_share: ratio(over, with_estimate).map(round),
        }
    }

    /// Combined scalars: shares are averaged over traces (traces weighting) or pooled (jobs).
    pub(crate) fn combine(traces: &[TraceFit], model: &Model, weighting: Weighting) -> Scalars {
        let fit = crate::continue_fit(model).unwrap_or(ContinueFit {
            a: f64::NAN,
            b: f64::NAN,
        });
        let sum =
            |f: &dyn Fn(&TraceSamples) -> u64| traces.iter().map(|t| f(&t.samples)).sum::<u64>();
        // A share: the mean of per-trace shares, or the pooled share.
        let share = |part: &dyn Fn(&TraceSamples) -> u64,
                     whole: &dyn Fn(&TraceSamples) -> u64|
         -> Option<f64> {
            match weighting {
                Weighting::Traces => {
                    let shares: Vec<f64> = traces
                        .iter()
                        .filter_map(|t| ratio(part(&t.samples), whole(&t.samples)))
                        .collect();
                    (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64)
                }
                Weighting::Jobs => ratio(sum(part), sum(whole)),
            }
        };
        Scalars {
            jobs: sum(&|s| s.jobs),
            users: sum(&|s| s.users),
            sessions: sum(&|s| s.session_lengths.len() as u64),
            batches: sum(&|s| s.batch_widths.len() as u64),
            continue_a: round(fit.a),
            continue_b: round(fit.b),
            negative_think_share: round(
                share(&|s| s.negative_think, &|s| s.think_all.len() as u64).unwrap_or(0.0),
            ),
            median_session_jobs: model.session_length.median(),
            mean_session_jobs: round(model.session_length.mean()),
            mean_batch_width: round(model.batch_width.mean()),
            long_breaks_dropped: sum(&|s| s.long_breaks),
            day_fraction: share(&|s| s.daytime, &|s| s.located).map(round),
            weekday_fraction: share(&|s| s.weekdays, &|s| s.located).map(round),
            runtime_over_estimate_share: share(&|s| over_estimate(s).0, &|s| over_estimate(s).1)
                .map(round),
        }
    }
}

#[derive(Serialize)]
struct Rules {
    session_threshold_seconds: i64,
    max_break_seconds: i64,
    weighting: Weighting,
}

#[derive(Serialize)]
struct Paper {
    continue_a: f64,
    continue_b: f64,
    day_fraction: f64,
    weekday_fraction: f64,
}

#[derive(Serialize)]
struct SummaryFile<'a> {
    rules: Rules,
    paper: Paper,
    combined: &'a Scalars,
    traces: BTreeMap<&'a str, TraceSummary<'a>>,
}

/// One trace's line of `summary.toml`: the zone its daily and weekly cycles were read in, and
/// its scalars.
#[derive(Serialize)]
struct TraceSummary<'a> {
    /// A tz database name (`America/Los_Angeles`) or a fixed offset (`UTC-08:00`); absent for a
    /// trace without a calendar.
    #[serde(skip_serializing_if = "Option::is_none")]
    zone: Option<String>,
    #[serde(flatten)]
    scalars: &'a Scalars,
}

impl Fit {
    /// Every file of `models/`: (path relative to the models directory, contents). `command`
    /// is the command line that reproduces them, recorded in `PROVENANCE.md`.
    pub fn files(&self, command: &str) -> Result<Vec<(String, String)>, toml::ser::Error> {
        let mut files = vec![
            ("README.md".to_string(), self.readme()),
            ("PROVENANCE.md".to_string(), self.provenance(command)),
            ("summary.toml".to_string(), self.summary_toml()?),
        ];
        for (name, text) in self.combined.files() {
            files.push((format!("combined/{name}"), text));
        }
        files.push((
            format!("combined/{PARAMETERS_FILE}"),
            self.combined_scalars.parameters().to_csv(),
        ));
        for t in &self.traces {
            for (name, text) in t.model.files() {
                files.push((format!("traces/{}/{name}", t.trace.name), text));
            }
            files.push((
                format!("traces/{}/{PARAMETERS_FILE}", t.trace.name),
                t.scalars.parameters().to_csv(),
            ));
        }
        Ok(files)
    }

    fn summary_toml(&self) -> Result<String, toml::ser::Error> {
        let rules = self.options.rules;
        let file = SummaryFile {
            rules: Rules {
                session_threshold_seconds: rules.session_threshold,
                max_break_seconds: rules.max_break,
                weighting: self.options.weighting,
            },
            paper: Paper {
                continue_a: ContinueFit::PAPER.a,
                continue_b: ContinueFit::PAPER.b,
                day_fraction: 0.7,
                weekday_fraction: 0.8,
            },
            combined: &self.combined_scalars,
            traces: self
                .traces
                .iter()
                .map(|t| {
                    let summary = TraceSummary {
                        zone: t.trace.calendar.map(|c| c.zone_name()),
                        scalars: &t.scalars,
                    };
                    (t.trace.name.as_str(), summary)
                })
                .collect(),
        };
        Ok(format!(
            "# Scalars of the fitted user models, generated by `sitesim fit` (see PROVENANCE.md).\n\
             # Shares are fractions (0..1); continue_a and continue_b fit p = a / (b * r + 1), r in minutes.\n\n{}",
            toml::to_string(&file)?
        ))
    }

    fn provenance(&self, command: &str) -> String {
        let rules = self.options.rules;
        let mut md = String::from("# Provenance of models/\n\n");
        md.push_str(
            "Generated by `sitesim fit` from the Parallel Workloads Archive traces below \
             (`../shared/traces`, see its SOURCES.md). To regenerate byte-identical files, run \
             from the repository root with `../shared` beside the checkout:\n\n",
        );
        md.push_str(&format!(
            "```sh\ncargo run --release -p sitesim -- {command}\n```\n\n"
        ));
        md.push_str(
            "| trace | file | sha256 of the file as stored | jobs read | jobs used | users |\n",
        );
        md.push_str("|---|---|---|---:|---:|---:|\n");
        for t in &self.traces {
            md.push_str(&format!(
                "| {} | `{}` | `{}` | {} | {} | {} |\n",
                t.trace.name,
                t.trace.path,
                t.trace.sha256,
                t.trace.read,
                t.samples.jobs,
                t.samples.users
            ));
        }
        md.push_str(&format!(
            "\nRules: a think time up to {} s continues the session; breaks longer than {} s are \
             dropped; combined distributions weight {}.\n",
            rules.session_threshold,
            rules.max_break,
            match self.options.weighting {
                Weighting::Traces => "each trace equally",
                Weighting::Jobs => "each job equally",
            }
        ));
        if !self.warnings.is_empty() {
            md.push_str("\nWarnings of the fit:\n\n");
            for w in &self.warnings {
                md.push_str(&format!("- {w}\n"));
            }
        }
        md
    }

    fn readme(&self) -> String {
        let mut md = String::from(
            "# models/\n\n\
             Empirical user models derived from real traces by `sitesim fit` (Shmueli & Feitelson \
             2009, section III). `combined/` is the model the simulator uses by default (embedded \
             in the binary); `traces/<name>/` holds each trace's own model. `summary.toml` has the \
             scalars (fitted continue curve, day and weekday shares, session lengths) per trace \
             and combined; `PROVENANCE.md` says which traces, their hashes and the exact command.\n\n\
             Every distribution file is CSV with a header row. A `cumulative` column is the \
             probability of a value at most the row's value (the last row is 1); sampling takes \
             the first row whose cumulative probability reaches a uniform random number. \
             To stay small, a distribution keeps the values where the cumulative probability \
             crosses each 1/2000 step and, between those, every value more than 1 % away from the \
             last kept one: the stored distribution is within 1/2000 of the data \
             (Kolmogorov-Smirnov distance) and every value is sampled within 1 % of itself, so \
             heavy tails and means are kept.\n\n\
             | file | contents |\n|---|---|\n",
        );
        for (name, what) in MODEL_FILES {
            md.push_str(&format!("| `{name}` | {what} |\n"));
        }
        md.push_str(&format!("| `{PARAMETERS_FILE}` | {PARAMETERS_HELP} |\n"));
        md.push_str(
            "\nDefinitions (per user, jobs in submit order): think time = submit minus the latest \
             end (submit + wait + runtime) of the user's earlier jobs; a negative think time keeps \
             the job in the current batch; a think time up to the session threshold starts a new \
             batch in the same session; a longer one starts a new session. The job with the latest \
             end closes its batch; `continue.csv` bins those jobs by response time.\n",
        );
        md
    }
}
