//! The default user models, embedded from `models/combined/` at build time so the binary runs
//! with no files at hand; and `sitesim models`, which shows what a model holds.

use std::path::Path;

use anyhow::Context;
use usermodel::{Ecdf, Model};

use crate::cli::ModelsArgs;
use crate::console;

/// The text of an embedded model file, by name (the files of [`usermodel::MODEL_FILES`]).
fn embedded(name: &str) -> Option<&'static str> {
    Some(match name {
        "think_time.csv" => include_str!("../../../models/combined/think_time.csv"),
        "think_short.csv" => include_str!("../../../models/combined/think_short.csv"),
        "think_break.csv" => include_str!("../../../models/combined/think_break.csv"),
        "continue.csv" => include_str!("../../../models/combined/continue.csv"),
        "size.csv" => include_str!("../../../models/combined/size.csv"),
        "runtime.csv" => include_str!("../../../models/combined/runtime.csv"),
        "size_repetition.csv" => include_str!("../../../models/combined/size_repetition.csv"),
        "batch_width.csv" => include_str!("../../../models/combined/batch_width.csv"),
        "batch_gap.csv" => include_str!("../../../models/combined/batch_gap.csv"),
        "session_length.csv" => include_str!("../../../models/combined/session_length.csv"),
        "estimate.csv" => include_str!("../../../models/combined/estimate.csv"),
        "daily.csv" => include_str!("../../../models/combined/daily.csv"),
        "weekly.csv" => include_str!("../../../models/combined/weekly.csv"),
        _ => return None,
    })
}

/// The default model: `models/combined/` as it was when the binary was built.
pub fn default_model() -> anyhow::Result<Model> {
    Model::from_files("embedded models/combined", |name| {
        embedded(name).map(str::to_string)
    })
    .context("the embedded default model is invalid (rebuild after fixing models/)")
}

/// Reads a model directory (`models/combined`, `models/traces/<name>`, or one written by
/// `sitesim fit --out`).
pub fn load_model(dir: &Path) -> anyhow::Result<Model> {
    let label = dir.display().to_string();
    Ok(Model::from_files(&label, |name| {
        std::fs::read_to_string(dir.join(name)).ok()
    })?)
}

/// Runs `sitesim models`.
pub fn run(args: &ModelsArgs) -> anyhow::Result<()> {
    let (label, model) = match &args.dir {
        Some(dir) => (dir.display().to_string(), load_model(dir)?),
        None => (
            "the embedded default (models/combined)".to_string(),
            default_model()?,
        ),
    };
    console::say(&describe(&label, &model))?;
    Ok(())
}

/// A table of the model's distributions: points stored, median, mean, 90th percentile.
fn describe(label: &str, m: &Model) -> String {
    let mut t = format!("user model: {label}\n");
    t.push_str(&format!(
        "  {:<30}{:>8}{:>12}{:>12}{:>12}\n",
        "distribution", "points", "median", "mean", "p90"
    ));
    let mut row = |name: &str, e: &Ecdf| {
        t.push_str(&format!(
            "  {:<30}{:>8}{:>12}{:>12.1}{:>12}\n",
            name,
            e.values().len(),
            e.median(),
            e.mean(),
            e.quantile(0.9)
        ));
    };
    row("think time within session (s)", &m.think_short);
    row("break (s)", &m.think_break);
    row("job size (processors)", &m.size);
    row("runtime (s)", &m.runtime);
    row("size repetition (jobs)", &m.size_repetition);
    row("batch width (jobs)", &m.batch_width);
    if let Some(gap) = &m.batch_gap {
        row("gap inside a batch (s)", gap);
    }
    row("session length (jobs)", &m.session_length);
    if let Some(f) = fit::continue_fit(m) {
        t.push_str(&format!(
            "  continue probability: {:.3} / ({:.4} r + 1), r in minutes (paper: 0.8 / (0.05 r + 1))\n",
            f.a, f.b
        ));
    }
    if let Some(e) = &m.estimate {
        t.push_str(&format!(
            "  runtime estimates: {} runtime classes\n",
            e.classes.len()
        ));
    }
    if let Some(daily) = &m.daily {
        // Hours 8..17 hold 08:00-17:59; the paper's window is 07:30-17:30.
        let day: f64 = daily[8..18].iter().sum();
        t.push_str(&format!(
            "  submissions 08:00-18:00: {:.1} %\n",
            100.0 * day
        ));
    }
    if let Some(weekly) = &m.weekly {
        let weekdays: f64 = weekly[..5].iter().sum();
        t.push_str(&format!(
            "  submissions Monday-Friday: {:.1} %\n",
            100.0 * weekdays
        ));
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_model_is_models_combined() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../models/combined");
        let on_disk = load_model(&dir).unwrap();
        assert_eq!(default_model().unwrap(), on_disk);
        // Every file the fitter writes is embedded.
        for (name, _) in usermodel::MODEL_FILES {
            assert!(embedded(name).is_some(), "{name} is not embedded");
        }
    }
}
