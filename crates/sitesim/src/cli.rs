//! The command line, declared with clap's derive API; `run`'s, `validate`'s and `replay`'s
//! options come from the scenario layer's option tables ([`crate::options`]).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::options::TableArgs;

/// `sitesim run`'s options (`config::options::SITE` and `RUN`).
pub type RunArgs = TableArgs<crate::options::Run>;
/// `sitesim validate`'s options (`config::options::SITE`).
pub type ValidateArgs = TableArgs<crate::options::Site>;
/// `sitesim replay`'s options (`config::options::REPLAY`).
pub type ReplayArgs = TableArgs<crate::options::Replay>;

/// Site-level simulation of parallel-job schedulers: users who react to the scheduler, and
/// conventional open-loop trace replay.
///
/// Without a subcommand, the options are `run`'s: `sitesim --users 250 --weeks 26` is
/// `sitesim run --users 250 --weeks 26` (the paper's site; the summary goes to stdout, files
/// only with --out).
#[derive(Debug, Parser)]
#[command(
    name = "sitesim",
    version = crate::VERSION,
    about,
    propagate_version = true,
    arg_required_else_help = true
)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// Print nothing on stdout (no summary, no "wrote" lines); files are written all the same
    /// and errors still go to stderr.
    #[arg(short, long, global = true)]
    pub quiet: bool,

    /// What to do (default: run).
    #[command(subcommand)]
    pub command: Option<Command>,

    /// `run`'s options, for `sitesim [OPTIONS]` without a subcommand.
    #[command(flatten)]
    pub run: RunArgs,
}

impl Cli {
    /// Parses the command line; exits with clap's message on an error, as `Parser::parse`
    /// does. `run`'s options before a subcommand are an error (clap's
    /// `args_conflicts_with_subcommands` would also refuse the global `-v` there).
    pub fn parse_checked() -> Cli {
        use clap::{CommandFactory as _, FromArgMatches as _};
        let mut command = Cli::command();
        let matches = command.get_matches_mut();
        if let Some((name, _)) = matches.subcommand() {
            let given: Vec<String> = matches
                .ids()
                .filter(|id| !["verbose", "quiet"].contains(&id.as_str()))
                .filter(|id| {
                    matches.value_source(id.as_str())
                        == Some(clap::parser::ValueSource::CommandLine)
                })
                .map(|id| format!("--{}", id.as_str().replace('_', "-")))
                .collect();
            if !given.is_empty() {
                command
                    .error(
                        clap::error::ErrorKind::ArgumentConflict,
                        format!(
                            "the subcommand '{name}' cannot be used with {} (`run`'s options without a subcommand; put them after `{name}` if it takes them)",
                            given.join(", ")
                        ),
                    )
                    .exit();
            }
        }
        Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.format(&mut command).exit())
    }

    /// The command to carry out: the subcommand, or `run` with the top-level options.
    pub fn into_command(self) -> Command {
        self.command.unwrap_or(Command::Run(self.run))
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Replay a trace (SWF, or a Slurm accounting dump: sacct --parsable2; plain or gzip, a
    /// file or a pipe) open-loop (the conventional method) under a scheduler, or with feedback
    /// (--feedback).
    Replay(ReplayArgs),
    /// Derive the user models (think times, sessions, batches, sizes, runtimes, estimates,
    /// daily and weekly cycles) from traces (SWF or sacct dumps).
    Fit(FitArgs),
    /// Show what a user model holds: the embedded default, or a models directory.
    Models(ModelsArgs),
    /// Site-level simulation: simulated users submit jobs, react to response times and follow
    /// daily and weekly cycles (the default site is the paper's experiment).
    Run(RunArgs),
    /// Run a site and compare the generated workload with the models it was built from
    /// (Kolmogorov-Smirnov distance per distribution).
    Validate(ValidateArgs),
    /// Find how many simulated users stand for a site: the number at which its runs reach a
    /// target utilisation (--utilization 0.7) or mean wait (--mean-wait SECONDS), keeping its
    /// groups' proportions, measured over several seeds.
    Calibrate(CalibrateArgs),
    /// Run a grid of site runs or trace replays (schedulers x parameters x seeds) in parallel or
    /// on Slurm, and build a table of means, 95 % confidence intervals and paired differences.
    Sweep(SweepArgs),
    /// List the scheduling policies, with one line each.
    Schedulers,
    /// Fit Streit's synthetic job-set model to a trace (Weibull inter-arrival times and the
    /// matrix of width, estimate and runtime) and write a job set of any size as SWF.
    Synth(SynthArgs),
    /// Draw the figures of a sweep's results table (PNG, SVG, PDF and the CSV of each, like Figs. 10-13 of the paper).
    Plot(PlotArgs),
    /// Draw the figures of one run or replay from its output directory (PNG, SVG, PDF and CSV):
    /// utilization and queue length over time, a Gantt chart of a time window, and the
    /// distributions of wait and response per runtime class.
    PlotRun(PlotRunArgs),
    /// Convert a Slurm accounting dump (sacct --parsable2) to SWF, with the id tables of its
    /// users, accounts, partitions and QOS, its association tree, and what was dropped or
    /// altered and why.
    Convert(ConvertArgs),
    /// Read a real slurm.conf's scheduling lines (PriorityWeight*, PriorityDecayHalfLife,
    /// PriorityCalcPeriod, PriorityMaxAge, PriorityFavorSmall, PriorityFlags,
    /// FairShareDampeningFactor, OverTimeLimit, SchedulerParameters, NodeName and NodeSet
    /// nodes and CPUs, PartitionName; Include followed) into the `[scheduler]` table of a
    /// population file for the Slurm model, and list every key it ignores or that is given
    /// twice.
    ImportSlurmConf(ImportSlurmConfArgs),
    /// A what-if report: one self-contained HTML page comparing the current slurm.conf with a
    /// proposed one on a site's accounting (replayed, and with simulated users fitted from it),
    /// with paired differences, 95 % intervals and a verdict in plain words.
    Whatif(WhatifArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout, e.g.
    /// `sitesim completions bash > ~/.local/share/bash-completion/completions/sitesim`.
    Completions(CompletionsArgs),
    /// Print the manual page (roff) to stdout, e.g. `sitesim man > sitesim.1; man ./sitesim.1`;
    /// with --out, write it and a page per subcommand (sitesim-run.1, ...) into a folder.
    Man(ManArgs),
    /// Write the generated pages of the docs' reference (the command line, the population
    /// file's keys, the measures, the scheduler registry) into a directory.
    #[command(hide = true)]
    Reference(ReferenceArgs),
}

/// `sitesim reference`.
#[derive(Debug, Args)]
pub struct ReferenceArgs {
    /// The directory the pages go into (docs/reference in the checkout).
    #[arg(short, long)]
    pub out: PathBuf,
}

/// The generated pages of the reference, by file name: `cli.md` from the same declarations as
/// `--help`, the others from the library ([`scenario::reference`]).
pub fn reference_pages() -> Vec<(&'static str, String)> {
    let options = clap_markdown::MarkdownOptions::new()
        .title("Command line".to_string())
        .show_footer(false);
    let cli = clap_markdown::help_markdown_custom::<Cli>(&options);
    vec![
        (
            "cli.md",
            format!("{}\n\n{cli}", scenario::reference::GENERATED),
        ),
        ("site-file.md", scenario::reference::site_file()),
        ("measures.md", scenario::reference::measures()),
        ("registry.md", scenario::reference::registry()),
    ]
}

/// `sitesim reference --out DIR`: writes [`reference_pages`].
pub fn reference(args: &ReferenceArgs) -> anyhow::Result<()> {
    use anyhow::Context as _;
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("{}: cannot create", args.out.display()))?;
    for (name, text) in reference_pages() {
        let path = args.out.join(name);
        std::fs::write(&path, text).with_context(|| format!("{}: cannot write", path.display()))?;
        crate::console::say(&format!("wrote {}\n", path.display()))?;
    }
    Ok(())
}

/// `sitesim calibrate`.
#[derive(Debug, Args)]
pub struct CalibrateArgs {
    /// The site: a population file and the options of `run` that change it (its number of
    /// users is where the search starts).
    #[command(flatten)]
    pub site: ValidateArgs,

    /// The utilisation to reach, a share (0.7 for 70 %).
    #[arg(
        long,
        value_name = "SHARE",
        required_unless_present = "mean_wait",
        conflicts_with = "mean_wait"
    )]
    pub utilization: Option<f64>,

    /// The mean wait to reach, seconds.
    #[arg(long, value_name = "SECONDS")]
    pub mean_wait: Option<f64>,

    /// Seeds each number of users is run with (the site's seed and the next ones); the
    /// search follows their mean.
    #[arg(long, value_name = "N", default_value_t = 5)]
    pub seeds: u32,
}

/// `sitesim import-slurm-conf`.
#[derive(Debug, Args)]
pub struct ImportSlurmConfArgs {
    /// The slurm.conf file.
    pub conf: PathBuf,

    /// The folder to write the `[scheduler]` table into, as slurm.toml (created if missing),
    /// instead of the standard output. A path ending in .toml, or an existing file, is taken as
    /// the file to write, as before (deprecated: a note on the standard error says so).
    #[arg(short, long, value_name = "DIR")]
    pub out: Option<PathBuf>,

    /// Replace the slurm.toml already there (or the file given).
    #[arg(long)]
    pub force: bool,
}

/// `sitesim convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// The dump: `sacct --parsable2` output with its header row, plain or gzip-compressed (the
    /// docs' "Slurm accounting" page gives the command line).
    pub dump: PathBuf,

    /// The directory to write trace.swf, users.csv, accounts.csv, partitions.csv, qos.csv,
    /// associations.csv, slurm-tree.toml (the tree as the Slurm model's keys), conversion.csv
    /// and requests.csv (each job's memory, GPUs, nodes, GPU type, constraint and partition,
    /// read back by a replay of trace.swf on a machine with them) into (created if missing).
    #[arg(short, long)]
    pub out: PathBuf,

    /// The site's association tree: `sacctmgr --parsable2 show assoc
    /// format=Cluster,Account,ParentName,User,Share,QOS` output. Default: root -> each account
    /// -> each of its users, with equal shares, derived from the dump.
    #[arg(long, value_name = "FILE")]
    pub assoc: Option<PathBuf>,

    /// Replace an earlier conversion in that directory; without it, such a directory is
    /// refused.
    #[arg(long)]
    pub force: bool,

    /// How the dump is read.
    #[command(flatten)]
    pub input: TableArgs<crate::options::TraceInput>,
}

/// `sitesim whatif`.
#[derive(Debug, Args)]
pub struct WhatifArgs {
    /// The site's accounting: `sacct --parsable2` output with its header row (plain or gzip).
    #[arg(long, value_name = "DUMP")]
    pub sacct: PathBuf,
    /// The association tree (`sacctmgr --parsable2 show assoc`). Default: the dump's accounts
    /// under root, one share each.
    #[arg(long, value_name = "FILE")]
    pub assoc: Option<PathBuf>,
    /// The QOS (`sacctmgr --parsable2 show qos`). Default: the dump's QOS, Slurm's defaults.
    #[arg(long, value_name = "FILE")]
    pub qos: Option<PathBuf>,
    /// Given twice: the current slurm.conf, then the proposed one.
    #[arg(long = "slurm-conf", value_name = "FILE", required = true)]
    pub slurm_conf: Vec<PathBuf>,
    /// Closed-loop seeds and open-loop replicas, each run under both configurations (paired);
    /// at least 2 for an interval, 10 or more recommended.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    pub seeds: u32,
    /// Length of each closed-loop run, weeks.
    #[arg(short, long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=520))]
    pub weeks: u32,
    /// Simulated users of the closed loop. Default: the dump's distinct users.
    #[arg(short, long, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub users: Option<u32>,
    /// The machine's size in processors where the slurm.conf files have no node lines.
    /// Default: the most the dump's jobs held at once (sacct does not record the size).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub processors: Option<u32>,
    /// The page to write.
    #[arg(short, long, value_name = "FILE", default_value = "whatif.html")]
    pub out: PathBuf,
    /// Replace an existing page; without it, an existing file is refused and left untouched.
    #[arg(long)]
    pub force: bool,
    /// How the dump is read.
    #[command(flatten)]
    pub input: TableArgs<crate::options::TraceInput>,
}

/// `sitesim completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// `sitesim completions SHELL`: the completion script of the whole command line.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<()> {
    use clap::CommandFactory as _;
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "sitesim", &mut script);
    crate::console::say(&String::from_utf8_lossy(&script))
}

/// `sitesim man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// Write the manual pages into this folder (created if missing): sitesim.1 and one page
    /// per subcommand (sitesim-run.1, sitesim-replay.1, ...), which the main page's SEE ALSO
    /// names. Default: print the main page to stdout.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
}

/// `sitesim man`: the manual pages, from the same declarations as `--help`.
pub fn man(args: &ManArgs) -> anyhow::Result<()> {
    use anyhow::Context as _;
    use clap::CommandFactory as _;
    let Some(dir) = &args.out else {
        let mut page = Vec::new();
        clap_mangen::Man::new(Cli::command()).render(&mut page)?;
        return crate::console::say(&String::from_utf8_lossy(&page));
    };
    std::fs::create_dir_all(dir).with_context(|| format!("{}: cannot create it", dir.display()))?;
    clap_mangen::generate_to(Cli::command(), dir)
        .with_context(|| format!("{}: cannot write the manual pages", dir.display()))?;
    let pages = std::fs::read_dir(dir)?
        .filter_map(Result::ok)
        .filter(|e| e.path().extension().is_some_and(|x| x == "1"))
        .count();
    crate::say!("wrote {pages} manual pages into {}", dir.display())
}

/// `sitesim plot-run`.
#[derive(Debug, Args)]
pub struct PlotRunArgs {
    /// The output directory of `run --out` or `replay --out` (its jobs.csv and summary.json).
    pub dir: PathBuf,

    /// Where the figures go. Default: DIR/figures.
    #[arg(short, long)]
    pub out: Option<PathBuf>,

    /// The Gantt chart's first day (days since time 0 of the run or trace). Default: the middle
    /// of the run, rounded down to a whole day.
    #[arg(long, value_name = "DAY")]
    pub from: Option<f64>,

    /// The Gantt chart's length in days. Default: 1.
    #[arg(long, default_value_t = 1.0, hide_default_value = true)]
    pub days: f64,

    /// The width of the utilization and queue figures' bins, seconds. Default: the smallest of
    /// 1, 5, 10, 15, 30 min, 1, 2, 3, 4 h, 1 day, 1 week, 4 weeks, 1 and 10 years that gives at
    /// most 400 bins, so the series stays a line: a day is 5-min bins, a week 30-min ones, 26
    /// weeks one bin a day (the weekly cycle shows), over 400 days a week.
    #[arg(long, value_name = "SECONDS")]
    pub bin: Option<i64>,

    /// The PNGs' resolution in dots per inch (30 to 1200): at the default width the figures are
    /// 6.4 x 4.27 inches, 960 x 640 pixels at 150; a publication wants 300. The SVG and PDF are
    /// vector graphics. Default: 150.
    #[arg(long, default_value_t = 150, hide_default_value = true)]
    pub dpi: u32,

    /// The width the figures are printed at: inches (2 to 20) or `column` (3.3 in, one column
    /// of a two-column journal page) or `page` (6.8 in, its text width); the height is 2/3 of
    /// it, a little more below 6.4 in (3.3 x 2.59 in). Every text (ticks, labels, legends,
    /// titles) is at least 7 pt at that width. Default: 6.4.
    #[arg(long, value_name = "INCHES|PRESET", allow_negative_numbers = true)]
    pub width: Option<String>,

    /// Overwrite the figures already in the output folder. Without it, a folder holding any of
    /// the files this call would write is refused.
    #[arg(long)]
    pub force: bool,
}

/// `sitesim synth`.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// The trace to analyse (SWF, plain or gzip-compressed); jobs are read as replay reads them.
    pub trace: PathBuf,

    /// Where the job set goes (an SWF file; `--swf` as in `run`: `--out` is a directory in every
    /// command).
    #[arg(long, value_name = "FILE")]
    pub swf: PathBuf,

    /// Number of jobs to generate. Default: 10000 (Streit's).
    #[arg(long, default_value_t = 10_000, hide_default_value = true)]
    pub count: usize,

    /// Shrinking factor: every inter-arrival time is multiplied by it (below 1 raises the load).
    /// Default: 1.
    #[arg(long, default_value_t = 1.0, hide_default_value = true)]
    pub shrink: f64,

    /// The random seed. Default: 1.
    #[arg(short = 'S', long, default_value_t = 1, hide_default_value = true)]
    pub seed: u64,

    /// Machine size written to the header. Default: the trace's.
    #[arg(long)]
    pub processors: Option<u32>,

    /// Use this Weibull inter-arrival distribution instead of the fitted one, ALPHA,BETA
    /// (BETA in seconds; Streit's Table 2: CTC 0.35,60, KTH 0.35,200, SDSC 0.4,290). Default:
    /// the fitted one.
    #[arg(long, value_name = "ALPHA,BETA")]
    pub weibull: Option<String>,
}

/// `sitesim plot`.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The results table (results.csv) or the sweep's results directory holding it.
    pub results: PathBuf,

    /// Where the figures go (a directory, created if missing).
    #[arg(short, long)]
    pub out: PathBuf,

    /// The axis drawn as one line (or bar) per value (a sweep of one axis is drawn along it as
    /// one series, whatever --series and --x say). Default: scheduler.
    #[arg(long, default_value = "scheduler", hide_default_value = true)]
    pub series: String,

    /// The axis along x: numbers are drawn to scale and joined by lines; any other labels
    /// (traces, scheduler names) as categories, one dot with its interval each. Default: users.
    #[arg(long, default_value = "users", hide_default_value = true)]
    pub x: String,

    /// Draw this measure against x instead of the paper's figures (a name of results.csv's
    /// `metric` column, as the docs' Measures page lists them; repeatable: one figure each, named
    /// after the measure). Default: the paper's Figs. 10-13.
    #[arg(long = "measure", value_name = "NAME")]
    pub measures: Vec<String>,

    /// Keep only rows where an axis has this value (AXIS=VALUE; repeatable). Every axis other
    /// than --series and --x must be left with one value. The filters are named in every
    /// figure's title and file name (`fig10a_throughput_load-0.8.png`). Default: no filter.
    #[arg(long = "where", value_name = "AXIS=VALUE")]
    pub r#where: Vec<String>,

    /// With --measure: draw each measure's paired relative difference against the sweep's
    /// baseline (results.csv's rel_diff columns, in %, with their 95 % intervals) instead of its
    /// mean, in NAME_relative.png. Default: the mean.
    #[arg(long, requires = "measures")]
    pub relative: bool,

    /// The PNGs' resolution in dots per inch (30 to 1200): at the default width the figures are
    /// 6.4 x 4.27 inches, 960 x 640 pixels at 150; a publication wants 300. The SVG and PDF are
    /// vector graphics. Default: 150.
    #[arg(long, default_value_t = 150, hide_default_value = true)]
    pub dpi: u32,

    /// The width the figures are printed at: inches (2 to 20) or `column` (3.3 in, one column
    /// of a two-column journal page) or `page` (6.8 in, its text width); the height is 2/3 of
    /// it, a little more below 6.4 in (3.3 x 2.59 in). Every text (ticks, labels, legends,
    /// titles) is at least 7 pt at that width. Default: 6.4.
    #[arg(long, value_name = "INCHES|PRESET", allow_negative_numbers = true)]
    pub width: Option<String>,

    /// Overwrite the figures already in the output folder. Without it, a folder holding any of
    /// the files this call would write is refused.
    #[arg(long)]
    pub force: bool,
}

/// `sitesim sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The sweep file (TOML; see configs/sweeps/paper.toml, and configs/sweeps/traces.toml for
    /// a replay sweep).
    pub sweep: PathBuf,

    /// The results directory. Default: results/NAME, NAME the sweep file's name without .toml.
    #[arg(short, long)]
    pub out: Option<PathBuf>,

    /// Runs at a time, at least 1. Default: the number of processors.
    #[arg(short, long, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Submit the runs without results to Slurm as a job array instead of running them here.
    #[arg(long)]
    pub slurm: bool,

    /// With --slurm: write the sbatch script but do not submit it.
    #[arg(long, requires = "slurm")]
    pub dry_run: bool,

    /// Runs per Slurm array task, at least 1. Default: as few as fit the runs into one job
    /// array of the cluster's MaxArraySize tasks (1 run per task for a sweep of up to that many
    /// runs; 1000 runs in each of 1000 tasks for a million runs and arrays of 1001).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub chunk: Option<u64>,

    /// Also write OUT/runs.csv, the per-seed table: one row per run and measure (127 rows a
    /// run; 6.4 GB for a million runs, so not written unless asked).
    #[arg(long)]
    pub per_seed: bool,

    /// With --slurm: the most tasks one job array may have (Slurm's MaxArraySize); more tasks
    /// are split into several arrays. Default: the cluster's (`scontrol show config`), or
    /// Slurm's default, 1001, when it cannot be read.
    #[arg(long, requires = "slurm", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_array_size: Option<u32>,

    /// With --slurm: the partition (sbatch --partition). Default: the cluster's.
    #[arg(long, requires = "slurm")]
    pub partition: Option<String>,

    /// With --slurm: the time limit of each array task (sbatch --time, e.g. 01:00:00). Default:
    /// the partition's.
    #[arg(long, requires = "slurm")]
    pub time: Option<String>,

    /// Build results.csv from the runs' results (after the Slurm tasks finished).
    #[arg(long, conflicts_with = "slurm")]
    pub merge: bool,

    /// Internal: run one chunk of this manifest (what a Slurm array task does).
    #[arg(long, hide = true)]
    pub worker: Option<PathBuf>,

    /// Internal: the array task number for --worker.
    #[arg(long, hide = true)]
    pub task: Option<usize>,
}

/// `sitesim models`.
#[derive(Debug, Args)]
pub struct ModelsArgs {
    /// A model directory (for example models/traces/KTH-SP2-1996-2.1-cln) or an embedded model,
    /// embedded:NAME (combined, or a trace of models/traces when the binary was built). Default:
    /// the model embedded as the default (models/combined).
    #[arg(long)]
    pub dir: Option<PathBuf>,
}

/// How `sitesim fit` combines traces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum WeightingName {
    /// Each trace weighs the same.
    Traces,
    /// Each job weighs the same.
    Jobs,
}

/// `sitesim fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// The traces: SWF files or Slurm accounting dumps (sacct --parsable2), plain or
    /// gzip-compressed.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,

    /// How the traces are read (a sacct dump's zone, wait start, requeues, unit, window).
    #[command(flatten)]
    pub input: TableArgs<crate::options::TraceInput>,

    /// Write the models here: one CSV per distribution (combined/ and traces/TRACE/),
    /// summary.toml, PROVENANCE.md and README.md. Default: none (the summary is printed).
    #[arg(short, long)]
    pub out: Option<PathBuf>,

    /// Draw the figures of the paper's section III into this directory (PNG, SVG, PDF and the
    /// CSV each is drawn from). Default: none.
    #[arg(long)]
    pub plot: Option<PathBuf>,

    /// The PNGs' resolution with --plot, dots per inch (30 to 1200; 150 gives 960 x 640
    /// pixels, a publication wants 300). Default: 150.
    #[arg(
        long,
        default_value_t = 150,
        hide_default_value = true,
        requires = "plot"
    )]
    pub dpi: u32,

    /// Think times up to this many seconds continue a session. Default: 1200 (the paper's 20
    /// minutes).
    #[arg(long, default_value_t = 1200, hide_default_value = true)]
    pub session_threshold: i64,

    /// Breaks longer than this many seconds are dropped. Default: 28800 (the paper's 8 hours).
    #[arg(long, default_value_t = 28800, hide_default_value = true)]
    pub max_break: i64,

    /// How the combined model weighs the traces. Default: traces.
    #[arg(long, value_enum, default_value_t = WeightingName::Traces, hide_default_value = true)]
    pub weighting: WeightingName,

    /// Replace the models in --out, or the figures in --plot, if the folder already holds
    /// them; without it such a folder is refused (the checkout's own models/ among them).
    #[arg(long)]
    pub force: bool,
}

/// `sitesim schedulers`: every policy's name and what it does, from the same documentation
/// `--help` shows.
pub fn list_schedulers() -> anyhow::Result<()> {
    let mut text = String::new();
    for policy in schedulers::REGISTRY.policies() {
        text.push_str(&format!("{:<18} {}\n", policy.name, policy.help));
    }
    text.push_str(
        "\nA scheduler is a queue order, a backfilling rule and a runtime predictor; each preset above is one such composition, and --order, --backfill and --predictor replace its parts:\n",
    );
    fn parts<'a, B: 'static>(
        text: &mut String,
        flag: &str,
        registry: impl Iterator<Item = &'a cluster::Part<B>>,
    ) {
        text.push_str(&format!("\n{flag}\n"));
        for part in registry {
            text.push_str(&format!("  {:<16} {}\n", part.name, part.help));
        }
    }
    parts(&mut text, "--order", schedulers::REGISTRY.orders());
    parts(&mut text, "--backfill", schedulers::REGISTRY.rules());
    parts(&mut text, "--predictor", schedulers::REGISTRY.predictors());
    text.push_str(concat!(
        "\nParameters: creasy takes --alpha (default 6000); dynp takes --dynp-lower and ",
        "--dynp-upper (seconds, default 7200 and 9000); dynp-simple and dynp-advanced take ",
        "--quality makespan|art|artww (default artww).\n",
        "In population and sweep files: [scheduler] policy = \"NAME\", order, backfill and ",
        "predictor, with the same parameters as keys (alpha, dynp_lower, dynp_upper, quality).\n"
    ));
    crate::console::say(&text)
}
