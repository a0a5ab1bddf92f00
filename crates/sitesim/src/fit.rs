//! `sitesim fit`: derive the user models from traces, write `models/`, draw the figures (the
//! `plots` crate).

use std::time::Instant;

use anyhow::Context;
use fit::{Fit, Weighting};

use crate::cli::{FitArgs, WeightingName};
use crate::console;
use crate::output::OutputDir;
use crate::say;
use crate::shell;

/// What marks a folder as holding a fit's models: the files every fit writes there.
const MODEL_FILES: [&str; 3] = ["summary.toml", "PROVENANCE.md", "combined"];

/// The figure files `--plot` writes (with the CSV each is drawn from).
const FIGURE_EXTENSIONS: [&str; 4] = ["png", "svg", "pdf", "csv"];

/// Refuses `--out` if it holds models and `--plot` if it holds figures, unless `--force`:
/// before anything is read, so that a refused command costs nothing.
fn refuse_earlier(args: &FitArgs) -> anyhow::Result<()> {
    if args.force {
        return Ok(());
    }
    if let Some(dir) = &args.out {
        let held: Vec<&str> = (MODEL_FILES.iter().copied())
            .filter(|name| dir.join(name).exists())
            .collect();
        if !held.is_empty() {
            anyhow::bail!(
                "{} already holds fitted models ({}); give --force to replace them, or another --out",
                dir.display(),
                held.join(", ")
            );
        }
    }
    if let Some(dir) = &args.plot {
        let figures = std::fs::read_dir(dir)
            .map(|entries| {
                entries
                    .filter_map(Result::ok)
                    .filter(|e| {
                        let path = e.path();
                        path.extension()
                            .and_then(|x| x.to_str())
                            .is_some_and(|x| FIGURE_EXTENSIONS.contains(&x))
                    })
                    .count()
            })
            .unwrap_or(0);
        if figures > 0 {
            anyhow::bail!(
                "{} already holds {figures} figure files (PNG, SVG, PDF or CSV); give --force to replace them, or another --plot",
                dir.display()
            );
        }
    }
    Ok(())
}

/// Runs the command.
pub fn run(args: &FitArgs) -> anyhow::Result<()> {
    // Refused before fitting, rather than after writing the models, without the `plots` feature.
    if cfg!(not(feature = "plots")) && args.plot.is_some() {
        return Err(crate::figures::no_plots("sitesim fit --plot"));
    }
    refuse_earlier(args)?;
    let options = scenario::fitting::fit_options(
        args.session_threshold,
        args.max_break,
        match args.weighting {
            WeightingName::Traces => Weighting::Traces,
            WeightingName::Jobs => Weighting::Jobs,
        },
    )?;
    let clock = Instant::now();
    tracing::info!(
        "fitting {} trace(s): sessions split at {} s, breaks over {} s dropped",
        args.traces.len(),
        args.session_threshold,
        args.max_break
    );
    for trace in &args.traces {
        tracing::debug!("trace {}", trace.display());
    }
    let input = config::options::trace_input(&args.input.values)?;
    let fit = fit::fit_with(&args.traces, &options, &scenario::trace::fit_reader(&input))?;
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "fitted");
    for warning in &fit.warnings {
        eprintln!("warning: {warning}");
    }
    console::say(&table(&fit))?;

    if let Some(dir) = &args.out {
        let mut files = fit
            .files(&command(args))
            .context("cannot render summary.toml")?;
        // The resource mix of sacct dumps with GPUs or memory (a population file's group reads
        // it with `resources`).
        let rows = scenario::fitting::resource_rows(&args.traces, &input)?;
        if !rows.is_empty() {
            let mut text = Vec::new();
            usermodel::resources::write_resources(&rows, &mut text)?;
            files.push((
                usermodel::resources::RESOURCES_FILE.to_string(),
                String::from_utf8_lossy(&text).into_owned(),
            ));
        }
        let mut out = OutputDir::create(dir)?;
        for (name, text) in &files {
            out.write(name, text.as_bytes())?;
        }
        let written = out.commit()?;
        say!("wrote {} files into {}", written.len(), dir.display())?;
    }
    #[cfg(feature = "plots")]
    if let Some(dir) = &args.plot {
        let options = plots::FitFigureOptions { dpi: args.dpi };
        let drawn = plots::draw_fit_figures(&fit, &options, dir)?;
        let figures = drawn
            .iter()
            .filter(|p| p.extension().is_some_and(|e| e == "png"));
        say!(
            "drew {} figures into {} (each as PNG, SVG, PDF and the CSV it was drawn from)",
            figures.count(),
            dir.display()
        )?;
    }
    tracing::info!(seconds = clock.elapsed().as_secs_f64(), "done");
    Ok(())
}

/// The command line that reproduces the models, as recorded in PROVENANCE.md: the traces and
/// output as given (with `--force`, so that it replaces the models it made), and every option
/// that differs from its default.
fn command(args: &FitArgs) -> String {
    let mut words = vec!["fit".to_string()];
    words.extend(
        args.traces
            .iter()
            .map(|p| shell::quote(&p.display().to_string())),
    );
    if let Some(out) = &args.out {
        words.push("--out".into());
        words.push(shell::quote(&out.display().to_string()));
        // the recorded command regenerates the models in place
        words.push("--force".into());
    }
    if args.session_threshold != 1200 {
        words.push(format!("--session-threshold {}", args.session_threshold));
    }
    if args.max_break != 28800 {
        words.push(format!("--max-break {}", args.max_break));
    }
    if args.weighting == WeightingName::Jobs {
        words.push("--weighting jobs".into());
    }
    for (option, value) in &args.input.values {
        let text = match value {
            toml::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        words.push(format!("--{} {}", option.flag_name(), shell::quote(&text)));
    }
    words.join(" ")
}

/// The scalars per trace and combined, beside the paper's values.
fn table(fit: &Fit) -> String {
    let mut t = format!(
        "{:<26}{:>9}{:>7}{:>8}{:>8}{:>8}{:>9}{:>9}{:>10}\n",
        "trace", "jobs", "users", "a", "b", "day", "weekday", "neg.think", "session"
    );
    let percent = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{:.1}%", 100.0 * v));
    let mut row = |name: &str, s: &fit::Scalars| {
        t.push_str(&format!(
            "{:<26}{:>9}{:>7}{:>8.3}{:>8.4}{:>8}{:>9}{:>9}{:>10}\n",
            name,
            s.jobs,
            s.users,
            s.continue_a,
            s.continue_b,
            percent(s.day_fraction),
            percent(s.weekday_fraction),
            percent(Some(s.negative_think_share)),
            s.median_session_jobs
        ));
    };
    for trace in &fit.traces {
        row(&trace.trace.name, &trace.scalars);
    }
    row("combined", &fit.combined_scalars);
    t.push_str(&format!(
        "{:<26}{:>9}{:>7}{:>8.3}{:>8.4}{:>8}{:>9}\n",
        "paper (section III)", "", "", 0.8, 0.05, "70.0%", "80.0%"
    ));
    t.push_str("(a, b: fitted p = a / (b r + 1), r in minutes; day: 07:30-17:30 local; session: median jobs)\n");
    t
}
