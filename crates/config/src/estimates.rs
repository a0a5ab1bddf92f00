//! A replay's runtime estimates: keep the trace's or replace them by an estimate model's
//! (Tsafrir's thesis, chapters 3 and 5). Messages name the options by key.

use std::collections::HashMap;

use engine::Job;
use rand::SeedableRng;
use rand_pcg::Pcg64;
use users::EstimateModelSpec;
use users::estimate::{self, EstimateModel, ModalParams};

use crate::choices::{Choice, EstimateChoice};
use crate::error::{Result, ensure, invalid};
use crate::naming::{key, key_value};

/// The estimate options of a replay (`--estimates` and its parameters).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EstimateOptions {
    /// The model.
    pub estimates: EstimateChoice,
    /// The f of the f-models (>= 0).
    pub estimate_f: Option<f64>,
    /// The Phi of the Phi-model, in [0, 1].
    pub estimate_phi: Option<f64>,
    /// E_max, seconds (f, phi, modal); default: the largest estimate at least 1 % of the jobs use.
    pub estimate_max: Option<i64>,
    /// The modal model's share of jobs at E_max; default: the trace's share.
    pub estimate_max_share: Option<f64>,
    /// Modes the modal model must hold: (seconds, share).
    pub estimate_modes: Vec<(i64, f64)>,
    /// The seed of the estimate draws (and of bandwidth demands).
    pub seed: u64,
}

/// The default E_max of a trace: the largest estimate that at least 1 % of its jobs use (a
/// site's administrative limit is popular; the rare larger values are exceptions), or the
/// largest estimate if none reaches 1 %.
pub fn default_max(jobs: &[Job]) -> Option<(i64, f64)> {
    let mut counts: HashMap<i64, usize> = HashMap::new();
    for j in jobs {
        *counts.entry(j.estimate).or_default() += 1;
    }
    let n = jobs.len() as f64;
    let share = |c: usize| c as f64 / n;
    counts
        .iter()
        .filter(|&(_, &c)| share(c) >= 0.01)
        .max_by_key(|&(&t, _)| t)
        .or_else(|| counts.iter().max_by_key(|&(&t, _)| t))
        .map(|(&t, &c)| (t, share(c)))
}

/// Checks `args` without a trace: each parameter given only to the model that takes it, the
/// model's own parameter given (`f` needs `estimate_f`, `phi` `estimate_phi`) and in range, and
/// `estimate_max` at least 60 s. A sweep checks every configuration so before its first run.
pub fn check(args: &EstimateOptions) -> Result<()> {
    let given = |flag: &str, set: bool, applies: bool| {
        ensure!(
            !set || applies,
            "{} does not apply to {}",
            key(flag),
            key_value("estimates", args.estimates.name())
        );
        Ok(())
    };
    let (f, phi, modal) = (
        matches!(
            args.estimates,
            EstimateChoice::F | EstimateChoice::FDeterministic
        ),
        args.estimates == EstimateChoice::Phi,
        args.estimates == EstimateChoice::Modal,
    );
    given("estimate_f", args.estimate_f.is_some(), f)?;
    given("estimate_phi", args.estimate_phi.is_some(), phi)?;
    given(
        "estimate_max",
        args.estimate_max.is_some(),
        f || phi || modal,
    )?;
    given(
        "estimate_max_share",
        args.estimate_max_share.is_some(),
        modal,
    )?;
    given("estimate_modes", !args.estimate_modes.is_empty(), modal)?;
    let required = |flag: &str, v: Option<f64>| {
        v.ok_or_else(|| {
            invalid!(
                "{} needs {}",
                key_value("estimates", args.estimates.name()),
                key(flag)
            )
        })
    };
    match args.estimates {
        EstimateChoice::F | EstimateChoice::FDeterministic => {
            estimate::check_f(required("estimate_f", args.estimate_f)?)
                .map_err(|e| invalid!("{}: {e}", key("estimate_f")))?;
        }
        EstimateChoice::Phi => {
            estimate::check_phi(required("estimate_phi", args.estimate_phi)?)
                .map_err(|e| invalid!("{}: {e}", key("estimate_phi")))?;
        }
        _ => {}
    }
    if let Some(max) = args.estimate_max {
        ensure!(
            max >= 60,
            "{}: E_max must be at least 60 seconds",
            key_value("estimate_max", max)
        );
    }
    Ok(())
}

/// Replaces the jobs' estimates as `args` says ([`check`]ed first). Returns a description for
/// reports, or `None` when the trace's estimates stay.
pub fn apply(args: &EstimateOptions, jobs: &mut [Job]) -> Result<Option<String>> {
    check(args)?;
    if args.estimates == EstimateChoice::Trace {
        return Ok(None);
    }
    let trace_max = default_max(jobs);
    let max = match (args.estimate_max, trace_max) {
        (Some(m), _) => m,
        (None, Some((m, _))) => m,
        (None, None) => return Ok(None), // no jobs
    };
    ensure!(
        max >= 60,
        "{}: E_max must be at least 60 seconds",
        key_value("estimate_max", max)
    );
    let required = |flag: &str, v: Option<f64>| {
        v.ok_or_else(|| {
            invalid!(
                "{} needs {}",
                key_value("estimates", args.estimates.name()),
                key(flag)
            )
        })
    };
    let (spec, description) = match args.estimates {
        EstimateChoice::Trace => return Ok(None),
        EstimateChoice::Exact => (EstimateModelSpec::Exact, "exact".to_string()),
        EstimateChoice::F | EstimateChoice::FDeterministic => {
            let f = estimate::check_f(required("estimate_f", args.estimate_f)?)
                .map_err(|e| invalid!("{}: {e}", key("estimate_f")))?;
            let deterministic = args.estimates == EstimateChoice::FDeterministic;
            (
                EstimateModelSpec::F {
                    f,
                    deterministic,
                    max,
                },
                format!("{} f = {f}, E_max {max} s", args.estimates.name()),
            )
        }
        EstimateChoice::Phi => {
            let phi = estimate::check_phi(required("estimate_phi", args.estimate_phi)?)
                .map_err(|e| invalid!("{}: {e}", key("estimate_phi")))?;
            (
                EstimateModelSpec::Phi { phi, max },
                format!("phi Phi = {phi}, E_max {max} s"),
            )
        }
        EstimateChoice::Modal => {
            let mut given = args.estimate_modes.clone();
            // E_max's share: as given, else the trace's share of that value (Tsafrir's
            // "semi-mandatory" third parameter).
            let share = args.estimate_max_share.or_else(|| {
                let n = jobs.iter().filter(|j| j.estimate == max).count();
                (n > 0).then(|| n as f64 / jobs.len() as f64)
            });
            if let Some(share) = share.filter(|_| !given.iter().any(|&(t, _)| t == max)) {
                given.push((max, share));
            }
            let description = format!(
                "modal, E_max {max} s{}",
                share.map_or(String::new(), |s| format!(" at {:.1} %", 100.0 * s))
            );
            let params = ModalParams {
                jobs: jobs.len(),
                max,
                given,
            };
            (EstimateModelSpec::Modal(params), description)
        }
    };
    let mut modes_rng = Pcg64::seed_from_u64(args.seed ^ 0x6d6f_6461_6c00);
    let model = spec
        .build(&mut modes_rng)
        .map_err(|e| invalid!("{}: {e}", key_value("estimates", args.estimates.name())))?;
    let description = match &model {
        EstimateModel::Modal(modes) => format!("{description}, {} modes", modes.modes().len()),
        _ => description,
    };
    let runtimes: Vec<i64> = jobs.iter().map(|j| j.runtime).collect();
    let mut rng = Pcg64::seed_from_u64(args.seed);
    let estimates = model.assign(&runtimes, &mut rng);
    for (job, e) in jobs.iter_mut().zip(estimates) {
        job.estimate = e;
    }
    Ok(Some(description))
}
