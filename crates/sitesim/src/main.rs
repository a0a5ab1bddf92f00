//! `sitesim`: the command-line tool. Thin: it parses arguments, calls the library crates, prints
//! tables and writes output files.

mod calibrate;
mod cli;
mod console;
mod convert;
mod figures;
mod fit;
mod import_slurm_conf;
mod models;
mod options;
mod output;
mod progress;
mod replay;
mod report;
mod run;
mod shell;
mod sweep;
mod synth;
mod validate;
mod whatif;

use std::process::ExitCode;

use crate::cli::{Cli, Command};

/// The version `--version` prints: the crate's, the commit it was built from and the hash of
/// the embedded models (see build.rs), so two binaries that give different numbers can be told
/// apart.
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("SITESIM_COMMIT"),
    ", models ",
    env!("SITESIM_MODELS"),
    ")"
);

fn main() -> ExitCode {
    let cli = Cli::parse_checked();
    init_logging(cli.verbose);
    console::set_quiet(cli.quiet);
    let command = cli.into_command();
    let clock = std::time::Instant::now();
    let words: Vec<String> = std::env::args().skip(1).collect();
    tracing::debug!("sitesim {}", words.join(" "));
    let result = match &command {
        Command::Replay(args) => replay::run(args),
        Command::Fit(args) => fit::run(args),
        Command::Models(args) => models::run(args),
        Command::Run(args) => run::run(args),
        Command::Validate(args) => validate::run(args),
        Command::Calibrate(args) => calibrate::run(args),
        Command::Sweep(args) => sweep::run(args),
        Command::Plot(args) => figures::plot(args),
        Command::PlotRun(args) => figures::plot_run(args),
        Command::Schedulers => cli::list_schedulers(),
        Command::Synth(args) => synth::run(args),
        Command::Convert(args) => convert::run(args),
        Command::ImportSlurmConf(args) => import_slurm_conf::run(args),
        Command::Whatif(args) => whatif::run(args),
        Command::Completions(args) => cli::completions(args),
        Command::Man(args) => cli::man(args),
        Command::Reference(args) => cli::reference(args),
    };
    tracing::info!("finished in {:.2} s", clock.elapsed().as_secs_f64());
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("error: {}", describe(&error));
            ExitCode::FAILURE
        }
    }
}

/// The error and its causes joined by ": " (anyhow's `{:#}`), with the options the library's
/// messages name said as flags.
fn describe(error: &anyhow::Error) -> String {
    error
        .chain()
        .map(
            |cause| match cause.downcast_ref::<config::ScenarioError>() {
                Some(e) => e.message(config::naming::Style::Flags(config::options::flag_of)),
                None => cause.to_string(),
            },
        )
        .collect::<Vec<_>>()
        .join(": ")
}

/// Logs go to stderr: warnings by default, more with `-v`/`-vv`, or whatever `RUST_LOG` says.
fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(false)
        .init();
}
