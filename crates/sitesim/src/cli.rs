//! The command line, declared with clap's derive API.

use std::path::PathBuf;

use clap::builder::TypedValueParser as _;
use clap::builder::{PossibleValue, PossibleValuesParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use scenario::estimates::EstimateOptions;
use scenario::machine::MachineOptions;
use scenario::run::SiteOverrides;
use scenario::site::{MoreOverrides, SchedulerOverrides};
use scenario::{
    Choice, EstimateChoice, JobSizesChoice, QualityChoice, SelectionChoice, WarmupChoice,
};
use serde::Deserialize as _;

/// Site-level simulation of parallel-job schedulers: users who react to the scheduler, and
/// conventional open-loop trace replay.
///
/// Without a subcommand, the options are `run`'s: `sitesim --users 250 --weeks 26` is
/// `sitesim run --users 250 --weeks 26` (the paper's site; the summary goes to stdout, files
/// only with --out).
#[derive(Debug, Parser)]
#[command(
    name = "sitesim",
    version,
    about,
    propagate_version = true,
    arg_required_else_help = true
)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug); RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

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
                .filter(|id| id.as_str() != "verbose")
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
    /// Replay an SWF trace open-loop (the conventional method) under a scheduler, or with
    /// feedback (--feedback).
    Replay(ReplayArgs),
    /// Derive the user models (think times, sessions, batches, sizes, runtimes, estimates,
    /// daily and weekly cycles) from SWF traces.
    Fit(FitArgs),
    /// Show what a user model holds: the embedded default, or a models directory.
    Models(ModelsArgs),
    /// Site-level simulation: simulated users submit jobs, react to response times and follow
    /// daily and weekly cycles (the default site is the paper's experiment).
    Run(RunArgs),
    /// Run a site and compare the generated workload with the models it was built from
    /// (Kolmogorov-Smirnov distance per distribution).
    Validate(ValidateArgs),
    /// Run a grid of site runs or trace replays (schedulers x parameters x seeds) in parallel or
    /// on Slurm, and build a table of means, 95 % confidence intervals and paired differences.
    Sweep(SweepArgs),
    /// List the scheduling policies, with one line each.
    Schedulers,
    /// Fit Streit's synthetic job-set model to a trace (Weibull inter-arrival times and the
    /// matrix of width, estimate and runtime) and write a job set of any size as SWF.
    Synth(SynthArgs),
    /// Draw the figures of a sweep's results table (PNG and SVG, like Figs. 10-13 of the paper).
    Plot(PlotArgs),
    /// Draw the figures of one run or replay from its output directory (PNG and SVG):
    /// utilization and queue length over time, a Gantt chart of a time window, and the
    /// distributions of wait and response per runtime class.
    PlotRun(PlotRunArgs),
}

/// `sitesim plot-run`.
#[derive(Debug, Args)]
pub struct PlotRunArgs {
    /// The output directory of `run --out` or `replay --out` (its jobs.csv and summary.json).
    pub dir: PathBuf,

    /// Where the figures go. Default: DIR/figures.
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// The Gantt chart's first day (days since time 0 of the run or trace). Default: the middle
    /// of the run, rounded down to a whole day.
    #[arg(long, value_name = "DAY")]
    pub from: Option<f64>,

    /// The Gantt chart's length in days.
    #[arg(long, default_value_t = 1.0)]
    pub days: f64,
}

/// `sitesim synth`.
#[derive(Debug, Args)]
pub struct SynthArgs {
    /// The trace to analyse (SWF, plain or gzip-compressed); jobs are read as replay reads them.
    pub trace: PathBuf,

    /// Where the job set goes (an SWF file).
    #[arg(long)]
    pub out: PathBuf,

    /// Number of jobs to generate (Streit: 10,000).
    #[arg(long, default_value_t = 10_000)]
    pub jobs: usize,

    /// Shrinking factor: every inter-arrival time is multiplied by it (below 1 raises the load).
    #[arg(long, default_value_t = 1.0)]
    pub shrink: f64,

    /// The random seed.
    #[arg(long, default_value_t = 1)]
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

    /// Where the figures go.
    #[arg(long)]
    pub out: PathBuf,

    /// The axis drawn as one line (or bar) per value.
    #[arg(long, default_value = "scheduler")]
    pub series: String,

    /// The axis along x: numbers are drawn to scale and joined by lines; any other labels
    /// (traces, scheduler names) as categories, one dot with its interval each.
    #[arg(long, default_value = "users")]
    pub x: String,

    /// Draw this measure against x instead of the paper's figures (a name of results.csv's
    /// `metric` column, as the README's table of measures lists them; repeatable: one figure each, named
    /// after the measure). Default: the paper's Figs. 10-13.
    #[arg(long = "measure", value_name = "NAME")]
    pub measures: Vec<String>,

    /// Keep only rows where an axis has this value (AXIS=VALUE; repeatable). Every axis other
    /// than --series and --x must be left with one value. The filters are named in every
    /// figure's title and file name (`fig10a_throughput_load-0.8.png`). Default: no filter.
    #[arg(long = "where", value_name = "AXIS=VALUE")]
    pub r#where: Vec<String>,
}

/// `sitesim sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The sweep file (TOML; see configs/sweeps/paper.toml, and configs/sweeps/traces.toml for
    /// a replay sweep).
    pub sweep: PathBuf,

    /// The results directory (default: results/<sweep file name>).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Runs at a time, at least 1 (default: the number of processors).
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..))]
    pub jobs: Option<u16>,

    /// Submit the runs without results to Slurm as a job array instead of running them here.
    #[arg(long)]
    pub slurm: bool,

    /// With --slurm: write the sbatch script but do not submit it.
    #[arg(long, requires = "slurm")]
    pub dry_run: bool,

    /// Runs per Slurm array task.
    #[arg(long, default_value_t = 10)]
    pub chunk: usize,

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

/// What `run` and `validate` simulate: a population file and overrides. Every option left out
/// keeps the population file's value (shown for the default site, configs/paper.toml); the
/// machine and estimate options have the names `replay` gives the same things.
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// A population file (TOML). Default: the paper's experiment (configs/paper.toml, embedded).
    #[arg(long)]
    pub config: Option<PathBuf>,

    /// Number of users (the population must have a single group). Default: the file's (250).
    #[arg(long)]
    pub users: Option<u32>,

    /// Simulated weeks. Default: the file's run.weeks (26).
    #[arg(long)]
    pub weeks: Option<u32>,

    /// The scheduling policy. Default: the file's scheduler.policy (easy).
    #[arg(long, value_parser = scheduler_names())]
    pub scheduler: Option<String>,

    /// The scheduler's parameters (replace the population file's).
    #[command(flatten)]
    pub params: SchedulerParams,

    /// The run's random seed. Default: the file's run.seed (1).
    #[arg(long)]
    pub seed: Option<u64>,

    /// Machine size in processors. Default: the file's site.processors (3968).
    #[arg(long)]
    pub processors: Option<u32>,

    /// Processors per node: a machine of nodes whose jobs get specific processors
    /// (site.node_processors). Default: the file's (none: processors are only counted).
    #[arg(long, value_name = "K")]
    pub node_processors: Option<u32>,

    /// How a job's processors are chosen on a machine of nodes (site.selection). Default: the
    /// file's (first-fit).
    #[arg(long, value_parser = choice::<SelectionChoice>())]
    pub selection: Option<SelectionChoice>,

    /// Memory bandwidth of a node, MB/s (site.node_bandwidth). Default: the file's (6000).
    #[arg(long, value_name = "MB/S")]
    pub node_bandwidth: Option<f64>,

    /// Every group's runtime estimates (groups[].estimates): fitted, exact, f,
    /// f-deterministic, phi, modal. Default: each group's (fitted).
    #[arg(long, value_name = "NAME", value_parser = group_estimates)]
    pub estimates: Option<users::config::Estimates>,

    /// Every group's f of the f-models (groups[].estimate_f). Default: each group's.
    #[arg(long)]
    pub estimate_f: Option<f64>,

    /// Every group's Phi of the Phi-model (groups[].estimate_phi). Default: each group's.
    #[arg(long)]
    pub estimate_phi: Option<f64>,

    /// Days at the start left out of the measurements (run.warmup_days). Default: the file's
    /// (0).
    #[arg(long, value_name = "DAYS")]
    pub warmup_days: Option<u32>,

    /// What to do with jobs wider than the machine (site.job_sizes): reject (refuse the site),
    /// clip (to the machine) or scale (every size by machine / widest). Default: the file's
    /// (reject).
    #[arg(long, value_parser = choice::<JobSizesChoice>())]
    pub job_sizes: Option<JobSizesChoice>,
}

/// `--estimates` of `run`: a group's estimate model, by the name population files use.
fn group_estimates(name: &str) -> Result<users::config::Estimates, String> {
    users::config::Estimates::deserialize(toml::Value::String(name.to_string())).map_err(|_| {
        format!("{name:?}: expected one of fitted, exact, f, f-deterministic, phi, modal")
    })
}

/// `sitesim run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// The site.
    #[command(flatten)]
    pub site: SiteArgs,

    /// Write jobs.csv, sessions.csv, batches.csv and summary.json into this directory (created
    /// if missing). Default: none (the summary goes to stdout, no files are written).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Also write the generated workload as an SWF file (fields 17-18: preceding job, think
    /// time). Default: none.
    #[arg(long)]
    pub swf: Option<PathBuf>,

    /// Also report unfairness (Tsafrir's thesis, section 3.7): compute every job's fair start
    /// time with one more simulation of the generated jobs (conservative backfilling with exact
    /// runtimes); about 6 s more for 250 users and 26 weeks.
    #[arg(long)]
    pub fairness: bool,

    /// Also measure headroom and capture: simulate the same users (same seed) on an uncontended
    /// machine where nothing waits, and under EASY, and report uncontended / actual throughput
    /// - 1 and (throughput - EASY's) / (uncontended - EASY's). Two more simulations.
    #[arg(long)]
    pub headroom: bool,

    /// With --out: also write batsim_jobs.csv, Batsim's jobs file with the processors each job
    /// held (an interval set such as "0-3 8-9"), which evalys's JobSet.from_csv loads.
    #[arg(long, requires = "out")]
    pub batsim_jobs: bool,
}

/// `sitesim validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The site.
    #[command(flatten)]
    pub site: SiteArgs,
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
    /// The traces: SWF files, plain or gzip-compressed.
    #[arg(required = true)]
    pub traces: Vec<PathBuf>,

    /// Write the models here: one CSV per distribution (combined/ and traces/<name>/),
    /// summary.toml, PROVENANCE.md and README.md. Default: none (the summary is printed).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// Draw the figures of the paper's section III (PNG) into this directory. Default: none.
    #[arg(long)]
    pub plot: Option<PathBuf>,

    /// Think times up to this many seconds continue a session (the paper's 20 minutes).
    #[arg(long, default_value_t = 1200)]
    pub session_threshold: i64,

    /// Breaks longer than this many seconds are dropped (the paper's 8 hours).
    #[arg(long, default_value_t = 28800)]
    pub max_break: i64,

    /// How the combined model weighs the traces.
    #[arg(long, value_enum, default_value_t = WeightingName::Traces)]
    pub weighting: WeightingName,
}

/// The values of `--order`, `--backfill` or `--predictor`: the parts of a registry, with their
/// one-line help.
fn part_names<B>(registry: &'static [&'static cluster::Part<B>]) -> PossibleValuesParser {
    PossibleValuesParser::new(
        registry
            .iter()
            .map(|part| PossibleValue::new(part.name).help(part.help)),
    )
}

/// `--scheduler`'s values: the policies registered in `cluster::POLICIES`, with their
/// one-line help (listed by `--help`) and their aliases (accepted, not listed).
fn scheduler_names() -> PossibleValuesParser {
    PossibleValuesParser::new(cluster::POLICIES.iter().map(|policy| {
        PossibleValue::new(policy.name)
            .help(policy.help)
            .aliases(policy.aliases.iter().copied())
    }))
}

/// The scheduler's parts (each replacing the one of --scheduler's preset) and the parameters
/// of the parts that take any; each parameter applies to named parts only.
#[derive(Debug, Clone, Default, PartialEq, Args)]
pub struct SchedulerParams {
    /// The queue order, replacing the scheduler's (`sitesim schedulers` lists them). Default:
    /// the scheduler's.
    #[arg(long, value_parser = part_names(cluster::order::ORDERS))]
    pub order: Option<String>,

    /// The backfilling rule, replacing the scheduler's. Default: the scheduler's.
    #[arg(long, value_parser = part_names(cluster::backfill::RULES))]
    pub backfill: Option<String>,

    /// The runtime predictor the backfilling rule plans with, replacing the scheduler's.
    /// Default: the scheduler's.
    #[arg(long, value_parser = part_names(cluster::predict::PREDICTORS))]
    pub predictor: Option<String>,

    /// CREASY's weight of criticality against seniority (creasy; the paper uses 1500 to 6000).
    /// Default 6000.
    #[arg(long)]
    pub alpha: Option<f64>,

    /// Basic dynP's lower bound on the waiting jobs' mean estimate, seconds (dynp). Default
    /// 7200 (Streit).
    #[arg(long)]
    pub dynp_lower: Option<i64>,

    /// Basic dynP's upper bound, seconds (dynp). Default 9000 (Streit).
    #[arg(long)]
    pub dynp_upper: Option<i64>,

    /// The quality of a self-tuning dynP's virtual schedules (dynp-simple, dynp-advanced).
    /// Default artww.
    #[arg(long, value_parser = choice::<QualityChoice>())]
    pub quality: Option<QualityChoice>,
}

/// `--estimates` and its parameters.
#[derive(Debug, Args)]
pub struct EstimateArgs {
    /// Replace the trace's runtime estimates by this model's.
    #[arg(long, value_parser = choice::<EstimateChoice>(), default_value = "trace")]
    pub estimates: EstimateChoice,

    /// The f of the f-models (>= 0). Default: none (required by f and f-deterministic).
    #[arg(long)]
    pub estimate_f: Option<f64>,

    /// The Phi of the Phi-model (in [0, 1]). Default: none (required by phi).
    #[arg(long)]
    pub estimate_phi: Option<f64>,

    /// E_max, seconds (f, phi, modal). Default: the largest estimate that at least 1 % of the
    /// trace's jobs use (18 h on SDSC-SP2 and CTC-SP2, 36 h on SDSC-BLUE).
    #[arg(long)]
    pub estimate_max: Option<i64>,

    /// The modal model's share of jobs using E_max. Default: the trace's share.
    #[arg(long)]
    pub estimate_max_share: Option<f64>,

    /// A mode the modal model must hold, SECONDS:SHARE (repeatable; Tsafrir's "improved"
    /// setting, e.g. --estimate-mode 7200:0.27 for SDSC-BLUE's 2-hour limit). Default: none.
    #[arg(long = "estimate-mode", value_name = "SECONDS:SHARE", value_parser = parse_mode)]
    pub estimate_modes: Vec<(i64, f64)>,

    /// The seed of the random draws of estimate models and bandwidth demands.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
}

impl EstimateArgs {
    /// The library's estimate options.
    pub fn options(&self) -> EstimateOptions {
        EstimateOptions {
            estimates: self.estimates,
            estimate_f: self.estimate_f,
            estimate_phi: self.estimate_phi,
            estimate_max: self.estimate_max,
            estimate_max_share: self.estimate_max_share,
            estimate_modes: self.estimate_modes.clone(),
            seed: self.seed,
        }
    }
}

impl MachineArgs {
    /// The library's machine options.
    pub fn options(&self) -> MachineOptions {
        MachineOptions {
            node_processors: self.node_processors,
            selection: self.selection,
            bandwidth_mix: self.bandwidth_mix.clone(),
            bandwidth_demands: self.bandwidth_demands.clone(),
            node_bandwidth: self.node_bandwidth,
            node_penalty: self.node_penalty.clone(),
            placement: self.placement,
            node_offset: self.node_offset,
        }
    }
}

/// A clap parser for one of the library's named choices: lists the names (with their help) in
/// `--help` and parses through the choice's own `FromStr`, so flags and files accept the same
/// names.
fn choice<C: Choice + Clone + Send + Sync>() -> impl clap::builder::TypedValueParser<Value = C> {
    clap::builder::PossibleValuesParser::new(
        C::ALL
            .iter()
            .map(|(name, help, _)| clap::builder::PossibleValue::new(*name).help(*help)),
    )
    .try_map(|name: String| C::parse_name(&name))
}

fn parse_mode(text: &str) -> Result<(i64, f64), String> {
    let (t, p) = text
        .split_once(':')
        .ok_or_else(|| format!("{text:?}: expected SECONDS:SHARE, e.g. 7200:0.27"))?;
    let t: i64 = t
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: {t:?} is not a whole number of seconds"))?;
    let p: f64 = p
        .trim()
        .parse()
        .map_err(|_| format!("{text:?}: {p:?} is not a share (a number in (0, 1])"))?;
    Ok((t, p))
}

/// The machine model of paper 001: nodes, processor selection, memory bandwidth.
#[derive(Debug, Args)]
pub struct MachineArgs {
    /// Processors per node: a machine of nodes whose jobs get specific processors (default:
    /// processors are only counted).
    #[arg(long, value_name = "K")]
    pub node_processors: Option<u32>,

    /// How a job's processors are chosen (needs --node-processors).
    #[arg(long, value_parser = choice::<SelectionChoice>(), default_value = "first-fit")]
    pub selection: SelectionChoice,

    /// Give the jobs memory-bandwidth demands and stretch the runtimes of jobs that share an
    /// oversubscribed node (Guim's shared-shadow penalty): the shares of high, medium and low
    /// demand jobs, as `high` (0.8,0.1,0.1), `med` (0.5,0.1,0.4), `low` (0.1,0.1,0.8) or three
    /// numbers HIGH,MEDIUM,LOW summing to 1. Needs --node-processors. Default: none (no
    /// sharing).
    #[arg(long, value_name = "MIX")]
    pub bandwidth_mix: Option<String>,

    /// Memory bandwidth a process of a low, medium and high demand job uses, MB/s.
    #[arg(long, value_name = "LOW,MEDIUM,HIGH", default_value = "500,1000,2000")]
    pub bandwidth_demands: String,

    /// Memory bandwidth of a node, MB/s.
    #[arg(long, value_name = "MB/S", default_value_t = 6000.0)]
    pub node_bandwidth: f64,

    /// How a job's penalties on its nodes make its penalty: `max` (the paper's: the job ends
    /// with its slowest node) or `process-mean` (the mean over its processes; an experiment).
    #[arg(long, value_name = "RULE", default_value = "max")]
    pub node_penalty: String,

    /// Place jobs on the processors this policy would choose, while the scheduler still decides
    /// by --selection (an experiment, not the paper's: FC's decisions on FF's nodes). Default:
    /// place by --selection.
    #[arg(long, value_parser = choice::<SelectionChoice>())]
    pub placement: Option<SelectionChoice>,

    /// For the sharing model, processor p is on node (p + OFFSET) / K (an experiment; the paper
    /// gives no numbering). Default 0: nodes aligned with processor ids.
    #[arg(long, value_name = "OFFSET", default_value_t = 0)]
    pub node_offset: u32,
}

/// `sitesim replay`.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace: a Standard Workload Format file, plain or gzip-compressed (.swf, .swf.gz).
    pub trace: PathBuf,

    /// The scheduling policy (`sitesim schedulers` lists them).
    #[arg(long, value_parser = scheduler_names(), default_value = "easy")]
    pub scheduler: String,

    /// The scheduler's parameters.
    #[command(flatten)]
    pub params: SchedulerParams,

    /// Multiply every arrival time (relative to the first) by this factor: Streit's shrinking
    /// factor and Tsafrir's load scaling. Below 1 packs the same jobs into less time (0.8
    /// raises the offered load by 1/0.8); above 1 spreads them out.
    #[arg(long, default_value_t = 1.0)]
    pub load_factor: f64,

    /// Also report unfairness (Tsafrir's thesis, section 3.7): compute every job's fair start
    /// time with one more simulation (conservative backfilling with exact runtimes); about
    /// 0.4 s more on SDSC-SP2.
    #[arg(long)]
    pub fairness: bool,

    /// Replay with feedback (Zakay & Feitelson, MASCOTS 2014): each user's sessions, batches
    /// and think times are kept, but a batch that followed earlier work is submitted its logged
    /// think time after that work's simulated end; a session starts at its logged time, or later
    /// if the user's previous session ran late (then after the logged break). Adds throughput
    /// and sessions to the summary, and writes sessions.csv.
    #[arg(long)]
    pub feedback: bool,

    /// With --feedback: after each batch, users continue the session with the paper's
    /// probability 0.8 / (0.05 r + 1), r the response time in minutes, else drop the rest of
    /// it (drawn with --seed).
    #[arg(long)]
    pub feedback_abandon: bool,

    /// Input shaking (Tsafrir's thesis, section 6.5.5): move the arrival of 10 % of the jobs,
    /// chosen at random, by up to 60 s earlier or later (drawn with --seed). Replay with several
    /// seeds to see how sensitive a result is to negligible changes of the log.
    #[arg(long)]
    pub shake: bool,

    /// Machine size in processors; default: the header's MaxProcs, else MaxNodes.
    #[arg(long)]
    pub processors: Option<u32>,

    /// Replace the trace's runtime estimates by a model's.
    #[command(flatten)]
    pub estimates: EstimateArgs,

    /// A machine of nodes with memory bandwidth (paper 001).
    #[command(flatten)]
    pub machine: MachineArgs,

    /// Replay only the first N jobs (in submission order), as paper 001 replays the first
    /// 10,000 jobs of its traces. Default: every job.
    #[arg(long, value_name = "N")]
    pub first_jobs: Option<usize>,

    /// Which jobs the averages leave out.
    #[arg(long, value_parser = choice::<WarmupChoice>(), default_value = "none")]
    pub warmup: WarmupChoice,

    /// Write jobs.csv and summary.json into this directory (created if missing). Default: none
    /// (the summary goes to stdout, no files are written).
    #[arg(long)]
    pub out: Option<PathBuf>,

    /// With --out: also write batsim_jobs.csv, Batsim's jobs file with the processors each job
    /// held (an interval set such as "0-3 8-9"), which evalys's JobSet.from_csv loads.
    #[arg(long, requires = "out")]
    pub batsim_jobs: bool,
}

impl SiteArgs {
    /// The site the flags describe: the file (or the default site) with the flags' values.
    pub fn resolve(&self) -> anyhow::Result<scenario::site::Site> {
        let mut site = scenario::run::resolve(self.config.as_deref(), &self.overrides())?;
        self.more_overrides().apply(&mut site);
        Ok(site)
    }

    /// The machine, estimate and warm-up flags as overrides of the site file.
    fn more_overrides(&self) -> MoreOverrides {
        MoreOverrides {
            node_processors: self.node_processors,
            selection: self.selection,
            node_bandwidth: self.node_bandwidth,
            estimates: self.estimates,
            estimate_f: self.estimate_f,
            estimate_phi: self.estimate_phi,
            warmup_days: self.warmup_days,
            job_sizes: self.job_sizes,
        }
    }

    /// The flags as overrides of the site file.
    pub fn overrides(&self) -> SiteOverrides {
        SiteOverrides {
            users: self.users,
            weeks: self.weeks,
            seed: self.seed,
            processors: self.processors,
            policy: self.scheduler.clone(),
            scheduler: SchedulerOverrides {
                order: self.params.order.clone(),
                backfill: self.params.backfill.clone(),
                predictor: self.params.predictor.clone(),
                alpha: self.params.alpha,
                dynp_lower: self.params.dynp_lower,
                dynp_upper: self.params.dynp_upper,
                quality: self.params.quality,
            },
        }
    }
}

impl SchedulerParams {
    /// The parameters as the policy registry takes them.
    pub fn policy_params(&self) -> cluster::PolicyParams {
        cluster::PolicyParams {
            alpha: self.alpha,
            dynp_lower: self.dynp_lower,
            dynp_upper: self.dynp_upper,
            quality: self.quality.map(QualityChoice::quality),
        }
    }
}

/// The scheduler the policy `name` (a name or alias of `cluster::POLICIES`), the parts and
/// `params` select. A parameter given to a scheduler that does not take it is an error, not
/// silently ignored (the registry checks).
pub fn spec(name: &str, params: &SchedulerParams) -> anyhow::Result<cluster::SchedulerSpec> {
    let choice = cluster::Composition {
        policy: Some(name),
        order: params.order.as_deref(),
        backfill: params.backfill.as_deref(),
        predictor: params.predictor.as_deref(),
    };
    cluster::SchedulerSpec::compose(choice, params.policy_params())
        .map_err(|e| scenario::ScenarioError::Invalid(scenario::naming::policy_error(&e)).into())
}

/// `sitesim schedulers`: every policy's name and what it does, from the same documentation
/// `--help` shows.
pub fn list_schedulers() -> anyhow::Result<()> {
    let mut text = String::new();
    for policy in cluster::POLICIES {
        text.push_str(&format!("{:<18} {}\n", policy.name, policy.help));
    }
    text.push_str(
        "\nA scheduler is a queue order, a backfilling rule and a runtime predictor; each preset above is one such composition, and --order, --backfill and --predictor replace its parts:\n",
    );
    fn parts<B>(text: &mut String, flag: &str, registry: &[&cluster::Part<B>]) {
        text.push_str(&format!("\n{flag}\n"));
        for part in registry {
            text.push_str(&format!("  {:<16} {}\n", part.name, part.help));
        }
    }
    parts(&mut text, "--order", cluster::order::ORDERS);
    parts(&mut text, "--backfill", cluster::backfill::RULES);
    parts(&mut text, "--predictor", cluster::predict::PREDICTORS);
    text.push_str(concat!(
        "\nParameters: creasy takes --alpha (default 6000); dynp takes --dynp-lower and ",
        "--dynp-upper (seconds, default 7200 and 9000); dynp-simple and dynp-advanced take ",
        "--quality makespan|art|artww (default artww).\n",
        "In population and sweep files: [scheduler] policy = \"NAME\", order, backfill and ",
        "predictor, with the same parameters as keys (alpha, dynp_lower, dynp_upper, quality).\n"
    ));
    crate::console::say(&text)
}
