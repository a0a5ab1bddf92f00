//! `sitesim models`: what a user model holds.

use anyhow::Context;
use config::models::{default_model, load_model};
use usermodel::{Ecdf, Model};

use crate::cli::ModelsArgs;
use crate::console;

/// Runs `sitesim models`.
pub fn run(args: &ModelsArgs) -> anyhow::Result<()> {
    tracing::info!(
        "reading the model {}",
        args.dir
            .as_ref()
            .map_or("embedded in the binary".to_string(), |d| d
                .display()
                .to_string())
    );
    let (label, model) = match &args.dir {
        Some(dir) => match config::models::embedded_name(&dir.to_string_lossy()) {
            Some(name) => (
                format!("embedded:{name}"),
                config::models::embedded_model(name)?,
            ),
            None => (dir.display().to_string(), load_model(dir)?),
        },
        None => (
            "the embedded default (models/combined)".to_string(),
            default_model().context("the embedded default model is invalid")?,
        ),
    };
    let mut text = describe(&label, &model);
    let models = args
        .dir
        .as_ref()
        .map_or("embedded".to_string(), |d| d.to_string_lossy().into_owned());
    match config::models::fitted_parameters(&models, None)? {
        Some(p) => {
            text.push_str(&format!(
                "  fitted parameters (parameters.csv; a group drawing from this model takes them unless it sets its own): continue_a {}, continue_b {}",
                p.continue_a, p.continue_b
            ));
            if let (Some(day), Some(weekday)) = (p.day_fraction, p.weekday_fraction) {
                text.push_str(&format!(
                    ", day_probability {day}, weekday_probability {weekday}"
                ));
            }
            text.push('\n');
        }
        None if models == "embedded" => text.push_str(
            "  groups with models = \"embedded\" use the paper's continue_a, continue_b, day_probability and weekday_probability unless they set their own\n",
        ),
        None => {}
    }
    console::say(&text)?;
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
