//! The what-if report (`sitesim whatif`, `sitesim.whatif`): a site's Slurm accounting dump
//! replayed, and simulated users run, under its current slurm.conf and a proposed one, with the
//! paired differences and their 95 % intervals, written as one self-contained HTML page for the
//! site's staff.
//!
//! - **Open loop**: the dump replayed under each configuration ([`crate::replay`], the Slurm
//!   model), replicated over the one input the log does not fix, the jitter of arrivals (input
//!   shaking, `replay --shake`, seeds 1..N); replica `i` under both configurations gets the same
//!   shaken log, so the replicas are pairs.
//! - **Closed loop**: the default site's single group of users (dealt over the association
//!   tree's accounts when one is given: `accounts = "tree"`, [`config::tree_accounts`]), their
//!   model fitted from the same dump ([`fit::fit_with`]; the embedded default model when the dump is too small to fit, and
//!   the page says which), on the replay's machine size (job sizes scaled to it), run under each
//!   configuration for seeds 1..N; the same seed is the same users (common random numbers), so
//!   the seeds are pairs.
//! - The statistics are the sweeps' ([`metrics::paired`], Student's t over pairs).
//! - The page ([`Report::html`]): inline CSS and inline SVG figures written as plain SVG
//!   elements (a page of tables and three small figures needs no plotting library, and so the
//!   report stays available from Python and in builds without the plotting stack); no script,
//!   no reference to anything outside the page. Every text that comes from an input (account,
//!   partition and QOS names, file names) is escaped.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use config::options::{self, OptionSpec, SiteSource, Values};
use config::{Result, ScenarioError, ensure, invalid};
use metrics::SeedStats;
use serde_json::Value as Json;
use sha2::Digest as _;

use crate::Simulation;

/// Seeds (and open-loop replicas) below which the page warns that the intervals are unreliable.
pub const RECOMMENDED_SEEDS: u32 = 10;

/// What a what-if report compares.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// The Slurm accounting dump (`sacct --parsable2`, plain or gzip).
    pub sacct: PathBuf,
    /// The association tree (`sacctmgr --parsable2 show assoc`), if given.
    pub assoc: Option<PathBuf>,
    /// The site's QOS (`sacctmgr --parsable2 show qos`), if given.
    pub qos: Option<PathBuf>,
    /// The slurm.conf in use.
    pub current: PathBuf,
    /// The slurm.conf proposed.
    pub proposed: PathBuf,
    /// Seeds of the closed loop and replicas of the open loop (each run under both
    /// configurations); at least 2 for an interval, [`RECOMMENDED_SEEDS`] recommended.
    pub seeds: u32,
    /// Length of each closed-loop run, weeks.
    pub weeks: u32,
    /// Simulated users of the closed loop; `None`: the number of distinct users in the dump.
    pub users: Option<u32>,
    /// The machine's size, processors (both loops); `None`: the slurm.conf's nodes, else the
    /// most the dump's jobs held at once (sacct does not record the machine's size).
    pub processors: Option<u32>,
    /// How the dump is read (`replay`'s trace-input options: `tz`, `wait_from`, ...).
    pub trace_values: Values,
}

/// Where the closed loop's user model came from.
#[derive(Debug, Clone, PartialEq)]
pub enum UserModel {
    /// Fitted from the dump: its jobs.
    Fitted {
        /// Jobs the fit read.
        jobs: u64,
    },
    /// The embedded default model, because the fit failed (the reason).
    Embedded(String),
}

/// One measure compared: per configuration over the pairs, and the paired differences.
#[derive(Debug, Clone)]
pub struct Compared {
    /// The current configuration's values, one per pair.
    pub current: Vec<f64>,
    /// The proposed configuration's values, same pairs.
    pub proposed: Vec<f64>,
}

impl Compared {
    /// The current configuration's statistics.
    pub fn current_stats(&self) -> SeedStats {
        SeedStats::of(&self.current)
    }

    /// The proposed configuration's statistics.
    pub fn proposed_stats(&self) -> SeedStats {
        SeedStats::of(&self.proposed)
    }

    /// The paired differences (proposed - current) and relative differences (proposed /
    /// current - 1).
    pub fn differences(&self) -> (SeedStats, SeedStats) {
        metrics::paired(&self.proposed, &self.current)
    }
}

/// A measure of the summary table.
#[derive(Debug, Clone, Copy)]
pub struct Measure {
    /// Its name on the page.
    pub name: &'static str,
    /// Its unit on the page.
    pub unit: &'static str,
    /// Whether more is better (`None`: neither).
    pub higher_is_better: Option<bool>,
    /// Factor from the stored unit to the page's (seconds -> minutes: 1/60).
    pub scale: f64,
}

/// The measures of the summary table, in order.
pub const MEASURES: [Measure; 5] = [
    Measure {
        name: "throughput",
        unit: "jobs/h",
        higher_is_better: Some(true),
        scale: 1.0,
    },
    Measure {
        name: "session length",
        unit: "jobs/session",
        higher_is_better: Some(true),
        scale: 1.0,
    },
    Measure {
        name: "mean wait",
        unit: "min",
        higher_is_better: Some(false),
        scale: 1.0 / 60.0,
    },
    Measure {
        name: "utilisation",
        unit: "%",
        higher_is_better: Some(true),
        scale: 100.0,
    },
    Measure {
        name: "share error",
        unit: "",
        higher_is_better: Some(false),
        scale: 1.0,
    },
];

/// One loop's results: each measure of [`MEASURES`] (`None` where the loop has no such
/// measure), and the mean waits by account, partition and QOS.
#[derive(Debug, Clone, Default)]
pub struct LoopResult {
    /// By measure, in the order of [`MEASURES`].
    pub measures: Vec<Option<Compared>>,
    /// Mean wait (seconds) by account, per pair.
    pub accounts: BTreeMap<String, Compared>,
    /// Mean wait (seconds) by partition, per pair.
    pub partitions: BTreeMap<String, Compared>,
    /// Mean wait (seconds) by QOS, per pair.
    pub qos: BTreeMap<String, Compared>,
}

/// An input file as the page lists it.
#[derive(Debug, Clone)]
pub struct FileInfo {
    /// What it is.
    pub role: &'static str,
    /// Its path as given.
    pub path: PathBuf,
    /// Its size, bytes.
    pub bytes: u64,
    /// Its SHA-256, hex.
    pub sha256: String,
}

/// A finished comparison, ready to be written as a page.
#[derive(Debug, Clone)]
pub struct Report {
    /// The inputs.
    pub files: Vec<FileInfo>,
    /// Seeds and replicas.
    pub seeds: u32,
    /// Closed-loop run length, weeks.
    pub weeks: u32,
    /// Simulated users.
    pub users: u32,
    /// Whether `users` was given (else the dump's distinct users).
    pub users_given: bool,
    /// Jobs in the dump (kept by the reader).
    pub dump_jobs: u64,
    /// Machine size of the replay and the closed loop, processors.
    pub processors: u64,
    /// Whether `processors` was given (else the slurm.conf's nodes or the dump's peak).
    pub processors_given: bool,
    /// Where the users' model came from.
    pub model: UserModel,
    /// Whether the closed loop's users were dealt over the association tree's accounts (with
    /// `--assoc`).
    pub tree_accounts: bool,
    /// The open loop (replays).
    pub open: LoopResult,
    /// The closed loop (simulated users).
    pub closed: LoopResult,
}

/// The option `key` of `table`.
fn option(
    mut table: impl Iterator<Item = &'static OptionSpec>,
    key: &str,
) -> Result<&'static OptionSpec> {
    table
        .find(|o| o.key == key)
        .ok_or_else(|| invalid!("internal: no option {key}"))
}

/// Adds `key = value` (checked as the command line checks it) to `values`.
fn push(
    values: &mut Values,
    table: impl Iterator<Item = &'static OptionSpec>,
    key: &str,
    value: toml::Value,
) -> Result<()> {
    let spec = option(table, key)?;
    let value = spec
        .check(value)
        .map_err(|e| invalid!("{}: {e}", config::naming::key(key)))?;
    values.push((spec, value));
    Ok(())
}

fn path_text(path: &Path) -> toml::Value {
    toml::Value::String(path.display().to_string())
}

/// The size and SHA-256 of `path`, or an error naming it.
fn file_info(role: &'static str, path: &Path) -> Result<FileInfo> {
    let bytes = std::fs::read(path).map_err(|source| ScenarioError::Io {
        what: format!("cannot read the {role} {}", path.display()),
        source,
    })?;
    let digest = sha2::Sha256::digest(&bytes);
    let sha256 = digest.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    });
    Ok(FileInfo {
        role,
        path: path.to_path_buf(),
        bytes: bytes.len() as u64,
        sha256,
    })
}

fn number(json: &Json, path: &[&str]) -> f64 {
    path.iter()
        .try_fold(json, |v, k| v.get(k))
        .and_then(Json::as_f64)
        .unwrap_or(f64::NAN)
}

/// One run's measures, by [`MEASURES`], and its waits by account, partition and QOS.
struct Measured {
    measures: Vec<Option<f64>>,
    waits: [BTreeMap<String, f64>; 3],
}

fn measured(json: &Json, closed: bool) -> Measured {
    let throughput = if closed {
        number(json, &["closed_loop", "submitted_per_hour"])
    } else {
        // jobs measured over the makespan, per hour
        let jobs = number(json, &["summary", "jobs_measured"]);
        let span = number(json, &["summary", "makespan", "end"])
            - number(json, &["summary", "makespan", "start"]);
        if span > 0.0 {
            jobs / (span / 3600.0)
        } else {
            f64::NAN
        }
    };
    let sessions = closed.then(|| number(json, &["closed_loop", "mean_session_jobs"]));
    let waits = ["accounts", "partitions", "qos"].map(|section| {
        json.get("slurm")
            .and_then(|s| s.get(section))
            .and_then(Json::as_object)
            .map(|m| {
                m.iter()
                    .filter(|(_, v)| number(v, &["jobs"]) > 0.0)
                    .map(|(k, v)| (k.clone(), number(v, &["wait_mean"])))
                    .collect()
            })
            .unwrap_or_default()
    });
    Measured {
        measures: vec![
            Some(throughput),
            sessions,
            Some(number(json, &["summary", "wait_seconds", "mean"])),
            Some(number(json, &["summary", "utilization"])),
            Some(number(json, &["slurm", "share_error"])),
        ],
        waits,
    }
}

/// Pairs of runs (current, proposed) into a loop's result.
fn combine(pairs: &[(Measured, Measured)]) -> LoopResult {
    let mut result = LoopResult::default();
    for m in 0..MEASURES.len() {
        let mut compared = Compared {
            current: Vec::new(),
            proposed: Vec::new(),
        };
        let mut any = false;
        for (c, p) in pairs {
            if let (Some(c), Some(p)) = (c.measures[m], p.measures[m]) {
                compared.current.push(c);
                compared.proposed.push(p);
                any = true;
            }
        }
        result.measures.push(any.then_some(compared));
    }
    let tables = [
        &mut result.accounts,
        &mut result.partitions,
        &mut result.qos,
    ];
    for (i, table) in tables.into_iter().enumerate() {
        let names: BTreeSet<&String> = pairs
            .iter()
            .flat_map(|(c, p)| c.waits[i].keys().chain(p.waits[i].keys()))
            .collect();
        for name in names {
            let value = |m: &Measured| m.waits[i].get(name).copied().unwrap_or(f64::NAN);
            table.insert(
                name.clone(),
                Compared {
                    current: pairs.iter().map(|(c, _)| value(c)).collect(),
                    proposed: pairs.iter().map(|(_, p)| value(p)).collect(),
                },
            );
        }
    }
    result
}

/// Runs the comparison: `2 * seeds` replays and `2 * seeds` closed-loop runs; `say` gets one
/// line per stage (for a console).
pub fn compare(inputs: &Inputs, say: &mut dyn FnMut(&str)) -> Result<Report> {
    ensure!(
        inputs.seeds >= 1,
        "{} must be at least 1 (at least 2 for an interval, {RECOMMENDED_SEEDS} recommended)",
        config::naming::key("seeds")
    );
    ensure!(
        inputs.weeks >= 1,
        "{} must be at least 1",
        config::naming::key("weeks")
    );
    let mut files = vec![file_info("sacct dump", &inputs.sacct)?];
    if let Some(assoc) = &inputs.assoc {
        files.push(file_info("association tree", assoc)?);
    }
    if let Some(qos) = &inputs.qos {
        files.push(file_info("QOS table", qos)?);
    }
    files.push(file_info("current slurm.conf", &inputs.current)?);
    files.push(file_info("proposed slurm.conf", &inputs.proposed)?);
    // both configurations read before anything runs: a bad line is named at once
    for conf in [&inputs.current, &inputs.proposed] {
        config::slurm::import_slurm_conf_file(conf)?;
    }

    // the dump: its users
    let trace_options = options::trace_input(&inputs.trace_values)?;
    let (dump_jobs, dump_users, site_text) = match crate::trace::open(
        &inputs.sacct,
        &trace_options,
    )? {
        crate::trace::Opened::Sacct(trace) => {
            let users: BTreeSet<u32> = trace.log.jobs.iter().map(|j| j.user).collect();
            // with the site's tree, the closed loop's users are dealt over its accounts
            let site_text = match &inputs.assoc {
                Some(path) => {
                    let tree = sacct::AssocTree::read(path)?;
                    let keys = crate::trace::slurm_tree(&tree, &trace.log.names)?;
                    // the default site under the Slurm model (set here: the `scheduler`
                    // option would replace the whole [scheduler] table, the tree with it)
                    let text = config::site::DEFAULT_SITE.replacen(
                        "policy = \"easy\"",
                        "policy = \"slurm\"",
                        1,
                    );
                    Some(format!("{}\naccounts = \"tree\"\n{keys}", text.trim_end()))
                }
                None => None,
            };
            (trace.log.jobs.len() as u64, users.len() as u32, site_text)
        }
        crate::trace::Opened::Swf(_) => {
            return Err(invalid!(
                "{}: not a sacct dump (sacct --parsable2 with its header row): whatif compares Slurm configurations on a site's accounting",
                inputs.sacct.display()
            ));
        }
    };

    // open loop: replicas 1..=seeds, shaken arrivals, paired by replica
    let mut processors = 0u64;
    let mut open_pairs = Vec::new();
    for seed in 1..=inputs.seeds {
        say(&format!(
            "open loop: replica {seed} of {} (both configurations)",
            inputs.seeds
        ));
        let mut pair = Vec::new();
        for conf in [&inputs.current, &inputs.proposed] {
            let json = replay_once(inputs, conf, seed)?;
            processors = number(&json, &["summary", "processors"]) as u64;
            pair.push(measured(&json, false));
        }
        let proposed = pair.pop();
        let current = pair.pop();
        if let (Some(c), Some(p)) = (current, proposed) {
            open_pairs.push((c, p));
        }
    }

    // closed loop: the users' model, then seeds 1..=seeds, paired by seed
    let (model, user_model) = user_model(inputs, &trace_options, dump_jobs);
    let users = inputs.users.unwrap_or(dump_users).max(1);
    let model = Arc::new(model?);
    let mut closed_pairs = Vec::new();
    for seed in 1..=inputs.seeds {
        say(&format!(
            "closed loop: seed {seed} of {} (both configurations)",
            inputs.seeds
        ));
        let mut pair = Vec::new();
        for conf in [&inputs.current, &inputs.proposed] {
            let json = run_once(
                inputs,
                conf,
                seed,
                users,
                processors,
                &model,
                site_text.as_deref(),
            )?;
            pair.push(measured(&json, true));
        }
        let proposed = pair.pop();
        let current = pair.pop();
        if let (Some(c), Some(p)) = (current, proposed) {
            closed_pairs.push((c, p));
        }
    }
    Ok(Report {
        files,
        seeds: inputs.seeds,
        weeks: inputs.weeks,
        users,
        users_given: inputs.users.is_some(),
        dump_jobs,
        processors,
        processors_given: inputs.processors.is_some(),
        model: user_model,
        tree_accounts: site_text.is_some(),
        open: combine(&open_pairs),
        closed: combine(&closed_pairs),
    })
}

/// The model of the closed loop's users: fitted from the dump, else the embedded default (with
/// the reason).
fn user_model(
    inputs: &Inputs,
    trace_options: &config::trace::TraceOptions,
    dump_jobs: u64,
) -> (Result<usermodel::Model>, UserModel) {
    let embedded = || {
        config::models::default_model()
            .map_err(|e| invalid!("the embedded default model is invalid: {e}"))
    };
    let fit_options = match crate::fitting::fit_options(1200, 28_800, fit::Weighting::Traces) {
        Ok(o) => o,
        Err(e) => return (embedded(), UserModel::Embedded(e.to_string())),
    };
    let fitted = fit::fit_with(
        std::slice::from_ref(&inputs.sacct),
        &fit_options,
        &crate::trace::fit_reader(trace_options),
    );
    match fitted {
        Ok(fitted) => (Ok(fitted.combined), UserModel::Fitted { jobs: dump_jobs }),
        Err(e) => (embedded(), UserModel::Embedded(e.to_string())),
    }
}

/// One replay of the dump under `conf`, replica `seed`: its summary.json.
fn replay_once(inputs: &Inputs, conf: &Path, seed: u32) -> Result<Json> {
    let table = || options::REPLAY.iter();
    let mut values: Values = inputs
        .trace_values
        .iter()
        .filter(|(o, _)| options::TRACE_INPUT_KEYS.contains(&o.key))
        .cloned()
        .collect();
    push(&mut values, table(), "trace", path_text(&inputs.sacct))?;
    push(
        &mut values,
        table(),
        "scheduler",
        toml::Value::String("slurm".into()),
    )?;
    push(&mut values, table(), "slurm_conf", path_text(conf))?;
    if let Some(assoc) = &inputs.assoc {
        push(&mut values, table(), "assoc", path_text(assoc))?;
    }
    if let Some(qos) = &inputs.qos {
        push(&mut values, table(), "qos", path_text(qos))?;
    }
    if let Some(processors) = inputs.processors {
        push(
            &mut values,
            table(),
            "processors",
            toml::Value::Integer(i64::from(processors)),
        )?;
    }
    push(&mut values, table(), "shake", toml::Value::Boolean(true))?;
    push(
        &mut values,
        table(),
        "seed",
        toml::Value::Integer(i64::from(seed)),
    )?;
    let (spec, replay_options) = options::replay(&values)?;
    let executed = Simulation::replay(spec, replay_options).execute()?;
    parse_summary(executed.summary_json(), conf)
}

/// One closed-loop run under `conf` with `seed`: its summary.json. `site_text` is the
/// population (the default site with its users dealt over the dump's tree), if not the default.
fn run_once(
    inputs: &Inputs,
    conf: &Path,
    seed: u32,
    users: u32,
    processors: u64,
    model: &Arc<usermodel::Model>,
    site_text: Option<&str>,
) -> Result<Json> {
    let table = options::run_options;
    let mut values = Values::new();
    if site_text.is_none() {
        push(
            &mut values,
            table(),
            "scheduler",
            toml::Value::String("slurm".into()),
        )?;
    }
    push(&mut values, table(), "slurm_conf", path_text(conf))?;
    push(
        &mut values,
        table(),
        "users",
        toml::Value::Integer(i64::from(users)),
    )?;
    push(
        &mut values,
        table(),
        "weeks",
        toml::Value::Integer(i64::from(inputs.weeks)),
    )?;
    push(
        &mut values,
        table(),
        "seed",
        toml::Value::Integer(i64::from(seed)),
    )?;
    if processors > 0 {
        push(
            &mut values,
            table(),
            "processors",
            toml::Value::Integer(i64::try_from(processors).unwrap_or(i64::MAX)),
        )?;
    }
    push(
        &mut values,
        table(),
        "job_sizes",
        toml::Value::String("scale".into()),
    )?;
    let source = match site_text {
        Some(text) => SiteSource::Text(text),
        None => SiteSource::Default,
    };
    let site = options::site(source, &values)?;
    let executed = Simulation::site(site, Arc::clone(model)).execute()?;
    parse_summary(executed.summary_json(), conf)
}

fn parse_summary(text: &str, conf: &Path) -> Result<Json> {
    serde_json::from_str(text).map_err(|e| {
        invalid!(
            "internal: the summary of a run under {} is not JSON: {e}",
            conf.display()
        )
    })
}

/// The two configurations of `confs` (current, proposed), or an error saying that exactly two
/// are needed (`flag`: how the front end names them).
pub fn current_and_proposed(confs: &[PathBuf], flag: &str) -> Result<(PathBuf, PathBuf)> {
    match confs {
        [current, proposed] => Ok((current.clone(), proposed.clone())),
        _ => Err(invalid!(
            "{flag}: {} given; give exactly two: first the current slurm.conf, then the proposed one",
            confs.len()
        )),
    }
}

/// Refuses `out` if it exists and `force` is not given, or if its folder does not exist:
/// checked before the work starts, so a mistake costs nothing.
pub fn check_output(out: &Path, force: bool) -> Result<()> {
    ensure!(
        force || !out.exists(),
        "{} exists; give --force (force=True) to replace it",
        out.display()
    );
    ensure!(
        !out.is_dir(),
        "{} is a directory; give the path of the page to write",
        out.display()
    );
    let dir = parent_dir(out);
    ensure!(
        dir.is_dir(),
        "{}: its folder {} does not exist",
        out.display(),
        dir.display()
    );
    Ok(())
}

fn parent_dir(out: &Path) -> PathBuf {
    match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `html` to `out` through a temporary file in the same folder renamed into place, so
/// that no partial page is ever left; an existing `out` is replaced only with `force`.
pub fn write_page(out: &Path, html: &str, force: bool) -> Result<()> {
    check_output(out, force)?;
    let io = |what: String| move |source| ScenarioError::Io { what, source };
    let dir = parent_dir(out);
    // mode 0666 less the umask, named as sitesim's other temporary outputs (cleaned up if left)
    let mut file = crate::store::new_temp_file(&dir)
        .map_err(io(format!("cannot create a file in {}", dir.display())))?;
    file.write_all(html.as_bytes())
        .and_then(|()| file.flush())
        .map_err(io(format!("cannot write {}", out.display())))?;
    if force {
        file.persist(out)
            .map_err(|e| e.error)
            .map_err(io(format!("cannot write {}", out.display())))?;
    } else {
        file.persist_noclobber(out)
            .map_err(|e| e.error)
            .map_err(io(format!(
                "cannot write {} (without --force an existing file is kept)",
                out.display()
            )))?;
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The page.

/// `text` with `&`, `<`, `>`, `"` and `'` escaped for HTML text and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// A number for the page: `-` for NaN, else with `digits` decimals.
fn fmt(value: f64, digits: usize) -> String {
    if value.is_finite() {
        format!("{value:.digits$}")
    } else {
        "–".to_string()
    }
}

fn signed(value: f64, digits: usize) -> String {
    if value.is_finite() {
        format!("{value:+.digits$}")
    } else {
        "–".to_string()
    }
}

/// Digits that suit a measure's magnitude.
fn digits_for(value: f64) -> usize {
    let a = value.abs();
    if !a.is_finite() || a >= 100.0 {
        1
    } else if a >= 1.0 {
        2
    } else {
        3
    }
}

/// What an interval says: an increase, a decrease, or no detectable difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// The whole interval is above 0.
    Up,
    /// The whole interval is below 0.
    Down,
    /// The interval holds 0 (or every pair gave the same value).
    None,
    /// No interval (fewer than two pairs).
    Unknown,
}

/// The direction the paired differences' interval shows.
pub fn direction(diff: &SeedStats) -> Direction {
    if diff.n < 2 || diff.ci95_low.is_nan() || diff.ci95_high.is_nan() {
        Direction::Unknown
    } else if diff.ci95_low > 0.0 {
        Direction::Up
    } else if diff.ci95_high < 0.0 {
        Direction::Down
    } else {
        Direction::None
    }
}

const STYLE: &str = "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:2em auto;max-width:72em;padding:0 1em;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6em;margin-bottom:.2em}h2{font-size:1.25em;margin-top:1.8em;border-bottom:1px solid #ccc}h3{font-size:1.05em}
table{border-collapse:collapse;margin:.6em 0;font-size:.92em}table.inputs td{text-align:left}th,td{padding:.25em .6em;border-bottom:1px solid #e3e3e3;text-align:right}
th{background:#f3f4f6}td:first-child,th:first-child{text-align:left}
.verdict{background:#eef6ee;border-left:4px solid #2e7d32;padding:.6em 1em}.caveats{background:#fff8e6;border-left:4px solid #b7791f;padding:.6em 1em}
.better{color:#1b6e20;font-weight:600}.worse{color:#b42318;font-weight:600}.small{font-size:.85em;color:#555}
.side{display:flex;flex-wrap:wrap;gap:2em}.side>div{flex:1 1 30em}figure{margin:1em 0}figcaption{font-size:.88em;color:#444}
code{background:#f3f4f6;padding:0 .2em}";

impl Report {
    /// The page: one self-contained HTML document.
    pub fn html(&self) -> String {
        let mut h = String::new();
        let _ = write!(
            h,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>What if: {} vs {}</title>\n<style>\n{STYLE}\n</style>\n</head>\n<body>\n",
            escape(&file_name(&self.files, "current slurm.conf")),
            escape(&file_name(&self.files, "proposed slurm.conf"))
        );
        let _ = writeln!(
            h,
            "<h1>What if the site changed its slurm.conf?</h1>\n<p class=\"small\">Written by sitesim {} (<code>sitesim whatif</code>): the current configuration against the proposed one, on this site's own accounting.</p>",
            escape(env!("CARGO_PKG_VERSION"))
        );
        h.push_str("<h2 id=\"verdict\">Verdict</h2>\n");
        h.push_str(&self.verdict_html());
        h.push_str(&self.caveats_html());
        h.push_str(&self.inputs_html());
        h.push_str(&self.summary_html());
        h.push_str("<h2 id=\"figures\">Figures</h2>\n");
        h.push_str(&self.difference_figure());
        h.push_str(&self.waits_figure());
        h.push_str(&self.seeds_figure());
        h.push_str(&self.waits_html());
        h.push_str(&self.method_html());
        h.push_str("</body>\n</html>\n");
        h
    }

    fn measure(&self, closed: bool, name: &str) -> Option<&Compared> {
        let result = if closed { &self.closed } else { &self.open };
        let i = MEASURES.iter().position(|m| m.name == name)?;
        result.measures.get(i)?.as_ref()
    }

    /// The plain-words verdict.
    pub fn verdict(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let pairs = |closed: bool| {
            if closed {
                format!("{} paired seeds", self.seeds)
            } else {
                format!("{} paired replicas", self.seeds)
            }
        };
        let sentence = |closed: bool, name: &str, what: &str| -> Option<String> {
            let m = self.measure(closed, name)?;
            let measure = MEASURES.iter().find(|x| x.name == name)?;
            let (abs, rel) = m.differences();
            let c = m.current_stats().mean * measure.scale;
            let p = m.proposed_stats().mean * measure.scale;
            let d = digits_for(c);
            let unit = if measure.unit == "%" {
                " %".to_string()
            } else if measure.unit.is_empty() {
                String::new()
            } else {
                format!(" {}", measure.unit)
            };
            let relative = rel.n >= 2 && !rel.ci95_low.is_nan();
            // an interval as text, its signs flipped for a decrease ("lowers by 5 % [2, 8]")
            let interval = |sign: f64, signs: bool| {
                let show = |v: f64, digits| {
                    if signs {
                        signed(v * sign, digits)
                    } else {
                        fmt(v * sign, digits)
                    }
                };
                let (lo, hi) = if sign < 0.0 { (1, 0) } else { (0, 1) };
                if relative {
                    let ends = [rel.ci95_low * 100.0, rel.ci95_high * 100.0];
                    format!(
                        "{} % [{}, {}]",
                        show(rel.mean * 100.0, 1),
                        show(ends[lo], 1),
                        show(ends[hi], 1)
                    )
                } else {
                    let ends = [abs.ci95_low * measure.scale, abs.ci95_high * measure.scale];
                    format!(
                        "{}{unit} [{}, {}]",
                        show(abs.mean * measure.scale, d),
                        show(ends[lo], d),
                        show(ends[hi], d)
                    )
                }
            };
            // whether a detected change is for the better
            let judged = |up: bool| match measure.higher_is_better {
                Some(higher) if higher == up => ", better",
                Some(_) => ", worse",
                None => "",
            };
            let text = match direction(&abs) {
                Direction::Up => format!(
                    "raises {what} by {} ({}{unit} → {}{unit}{})",
                    interval(1.0, false),
                    fmt(c, d),
                    fmt(p, d),
                    judged(true)
                ),
                Direction::Down => format!(
                    "lowers {what} by {} ({}{unit} → {}{unit}{})",
                    interval(-1.0, false),
                    fmt(c, d),
                    fmt(p, d),
                    judged(false)
                ),
                Direction::None if abs.std == 0.0 && abs.mean == 0.0 => format!(
                    "makes no detectable difference to {what}: identical in every pair ({}{unit})",
                    fmt(c, d)
                ),
                Direction::None => format!(
                    "makes no detectable difference to {what} (the interval {} contains 0)",
                    interval(1.0, true)
                ),
                Direction::Unknown => format!(
                    "changes {what} from {}{unit} to {}{unit} (one pair: no interval)",
                    fmt(c, d),
                    fmt(p, d)
                ),
            };
            Some(text)
        };
        let mut closed = Vec::new();
        for (name, what) in [
            ("throughput", "throughput"),
            ("session length", "session length"),
            ("mean wait", "the mean wait"),
            ("share error", "the share error"),
        ] {
            if let Some(s) = sentence(true, name, what) {
                closed.push(s);
            }
        }
        if !closed.is_empty() {
            lines.push(format!(
                "In the closed loop (simulated users who react to their waits, {}), the proposed configuration {}.",
                pairs(true),
                join_words(&closed)
            ));
        }
        let mut open = Vec::new();
        for (name, what) in [
            ("mean wait", "the mean wait"),
            ("share error", "the share error"),
        ] {
            if let Some(s) = sentence(false, name, what) {
                open.push(s);
            }
        }
        if !open.is_empty() {
            lines.push(format!(
                "Replaying the dump's own jobs (open loop, {}), it {}.",
                pairs(false),
                join_words(&open)
            ));
        }
        // the accounts whose wait moved detectably
        let moved: Vec<String> = self
            .open
            .accounts
            .iter()
            .filter_map(|(name, m)| {
                let (abs, _) = m.differences();
                match direction(&abs) {
                    Direction::Up => Some(format!("{name} waits longer")),
                    Direction::Down => Some(format!("{name} waits less")),
                    _ => None,
                }
            })
            .collect();
        if !self.open.accounts.is_empty() {
            if moved.is_empty() {
                lines.push("No account's mean wait changes detectably in the replay.".to_string());
            } else {
                lines.push(format!("By account (replay): {}.", join_words(&moved)));
            }
        }
        lines
    }

    fn verdict_html(&self) -> String {
        let mut h = String::from("<div class=\"verdict\">\n");
        for line in self.verdict() {
            let _ = writeln!(h, "<p>{}</p>", escape(&line));
        }
        h.push_str("<p class=\"small\">Differences are proposed minus current, with 95 % confidence intervals (Student's t over the pairs); “no detectable difference” means the interval contains 0.</p>\n</div>\n");
        h
    }

    fn caveats_html(&self) -> String {
        let mut items = vec![
            "The open loop (replay) cannot change the submitted work: the same jobs arrive at the same times (up to the shaking of 10 % of them by a minute) whatever the configuration, so its throughput and each user's total CPU time (hence its share error over the whole log) are fixed by the log; only when jobs run, and so the waits, can move. How users would react to different waits shows in the closed loop only.".to_string(),
        ];
        items.push(match &self.model {
            UserModel::Fitted { jobs } => format!(
                "The closed loop's users are a model fitted from {jobs} jobs of this dump (sessions, think times, sizes, runtimes), {} of them{}: they react to waits as the model says, not as this site's people would.",
                self.users,
                if self.users_given { " (--users)" } else { " (the dump's distinct users)" }
            ),
            UserModel::Embedded(reason) => format!(
                "The closed loop's users follow sitesim's embedded default model (fitted from public archive traces), not this site's: fitting the dump failed ({reason}). {} users{}.",
                self.users,
                if self.users_given { " (--users)" } else { " (the dump's distinct users)" }
            ),
        });
        items.push(if self.tree_accounts {
            "The closed loop's users are dealt over the association tree's accounts in proportion to each account's users in it (accounts = \"tree\"), one account per simulated user, each with one share: the tree's shares hold, but the dump's own users' shares do not.".to_string()
        } else {
            "The closed loop's users are in one account (no --assoc): differences between accounts (fair-share across the tree) show in the open loop only.".to_string()
        });
        items.push("The phase of Slurm's periodic work (the priority calculation every PriorityCalcPeriod, the backfill and main scheduler cycles) relative to the arrivals is not in the accounting; the replicas shake arrival times instead, so the intervals cover that kind of chance only roughly.".to_string());
        if !self.processors_given {
            items.push(format!(
                "sacct does not record the machine's size; both loops use {} processors (the slurm.conf's nodes, else the most the dump's jobs held at once: a guess; --processors sets it), with the closed loop's job sizes scaled to it.",
                self.processors
            ));
        }
        if self.seeds < RECOMMENDED_SEEDS {
            items.push(format!(
                "Only {} seeds: intervals from fewer than {RECOMMENDED_SEEDS} pairs are wide and rough (--seeds).",
                self.seeds
            ));
        }
        items.push("The model covers the scheduling options sitesim lists (docs: the Slurm model); slurm.conf lines it does not model are ignored (sitesim import-slurm-conf lists them).".to_string());
        let mut h = String::from("<h3>Caveats</h3>\n<div class=\"caveats\"><ul>\n");
        for item in items {
            let _ = writeln!(h, "<li>{}</li>", escape(&item));
        }
        h.push_str("</ul></div>\n");
        h
    }

    fn inputs_html(&self) -> String {
        let mut h = String::from(
            "<h2 id=\"inputs\">Inputs</h2>\n<table class=\"inputs\">\n<tr><th>input</th><th>file</th><th>bytes</th><th>SHA-256</th></tr>\n",
        );
        for f in &self.files {
            let _ = writeln!(
                h,
                "<tr><td>{}</td><td><code>{}</code></td><td>{}</td><td><code class=\"small\">{}</code></td></tr>",
                escape(f.role),
                escape(&f.path.display().to_string()),
                f.bytes,
                escape(&f.sha256)
            );
        }
        h.push_str("</table>\n<table>\n");
        let model = match &self.model {
            UserModel::Fitted { jobs } => format!("fitted from the dump ({jobs} jobs)"),
            UserModel::Embedded(_) => {
                "the embedded default (the dump could not be fitted; see the caveats)".to_string()
            }
        };
        for (k, v) in [
            ("jobs in the dump", self.dump_jobs.to_string()),
            (
                "seeds (closed loop) = replicas (open loop)",
                self.seeds.to_string(),
            ),
            ("closed-loop run length", format!("{} weeks", self.weeks)),
            (
                "simulated users",
                format!(
                    "{} ({})",
                    self.users,
                    if self.users_given {
                        "--users"
                    } else {
                        "the dump's distinct users; --users sets it"
                    }
                ),
            ),
            ("users' model", model),
            (
                "machine",
                format!(
                    "{} processors ({})",
                    self.processors,
                    if self.processors_given {
                        "--processors"
                    } else {
                        "the slurm.conf's nodes, else the dump's peak; --processors sets it"
                    }
                ),
            ),
        ] {
            let _ = writeln!(h, "<tr><td>{}</td><td>{}</td></tr>", escape(k), escape(&v));
        }
        h.push_str("</table>\n");
        h
    }

    fn summary_html(&self) -> String {
        let mut h = String::from(
            "<h2 id=\"summary\">Summary: open loop and closed loop side by side</h2>\n<div class=\"side\">\n",
        );
        for closed in [false, true] {
            let title = if closed {
                "Closed loop (simulated users)"
            } else {
                "Open loop (replay of the dump)"
            };
            let _ = writeln!(
                h,
                "<div><h3>{title}</h3>\n<table class=\"summary\">\n<tr><th>measure</th><th>current</th><th>proposed</th><th>difference [95 % CI]</th><th>relative</th></tr>"
            );
            for (i, measure) in MEASURES.iter().enumerate() {
                let result = if closed { &self.closed } else { &self.open };
                let unit = if measure.unit.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", measure.unit)
                };
                let Some(Some(m)) = result.measures.get(i) else {
                    let _ = writeln!(
                        h,
                        "<tr><td>{}{}</td><td colspan=\"4\" class=\"small\">not measured in this loop</td></tr>",
                        measure.name,
                        escape(&unit)
                    );
                    continue;
                };
                h.push_str(&compared_row(
                    &format!("{}{unit}", measure.name),
                    m,
                    measure,
                ));
            }
            h.push_str("</table></div>\n");
        }
        h.push_str("</div>\n<p class=\"small\">Open-loop throughput is the jobs over the makespan of the replay (fixed by the log's arrivals); closed-loop throughput is jobs submitted per hour. Share error: the share of the delivered CPU time that would have to change users for each to get its fair share (0 is perfect).</p>\n");
        h
    }

    fn waits_html(&self) -> String {
        let mut h = String::from(
            "<h2 id=\"waits\">Mean waits by account, partition and QOS</h2>\n<p class=\"small\">Open loop (the dump's jobs under each configuration), minutes, over the replicas.</p>\n",
        );
        let minutes = Measure {
            name: "",
            unit: "min",
            higher_is_better: Some(false),
            scale: 1.0 / 60.0,
        };
        for (title, table) in [
            ("account", &self.open.accounts),
            ("partition", &self.open.partitions),
            ("QOS", &self.open.qos),
        ] {
            let _ = writeln!(
                h,
                "<h3>By {title}</h3>\n<table class=\"waits\">\n<tr><th>{title}</th><th>current</th><th>proposed</th><th>difference [95 % CI]</th><th>relative</th></tr>"
            );
            if table.is_empty() {
                h.push_str("<tr><td colspan=\"5\" class=\"small\">none</td></tr>\n");
            }
            for (name, m) in table {
                h.push_str(&compared_row(name, m, &minutes));
            }
            h.push_str("</table>\n");
        }
        h
    }

    fn method_html(&self) -> String {
        let mut h = String::from("<h2 id=\"method\">How this was computed</h2>\n<ul>\n");
        for item in [
            format!(
                "Open loop: the dump replayed under the Slurm model with each slurm.conf (sitesim replay DUMP --scheduler slurm --slurm-conf CONF{}{} --shake --seed i, i = 1..{}); replica i has the same shaken arrivals under both.",
                if self.files.iter().any(|f| f.role == "association tree") { " --assoc ASSOC" } else { "" },
                if self.files.iter().any(|f| f.role == "QOS table") { " --qos QOS" } else { "" },
                self.seeds
            ),
            format!("Closed loop: {} simulated users for {} weeks on {} processors under each slurm.conf (sitesim run --scheduler slurm --slurm-conf CONF --users {} --weeks {} --processors {} --job-sizes scale --seed i, with the users' model as above); seed i is the same users under both.", self.users, self.weeks, self.processors, self.users, self.weeks, self.processors),
            "Intervals: the mean of the paired differences ± t(0.975, n−1) · s / √n, as sitesim sweep computes them; relative differences are the mean of proposed / current − 1 over the pairs.".to_string(),
        ] {
            let _ = writeln!(h, "<li>{}</li>", escape(&item));
        }
        h.push_str("</ul>\n");
        h
    }

    /// Relative paired differences with their intervals, open and closed loop, one row per
    /// measure.
    fn difference_figure(&self) -> String {
        let mut rows: Vec<(String, SeedStats)> = Vec::new();
        for closed in [true, false] {
            for measure in &MEASURES {
                if let Some(m) = self.measure(closed, measure.name) {
                    let (_, rel) = m.differences();
                    if rel.n > 0 && rel.mean.is_finite() {
                        let lp = if closed { "closed" } else { "open" };
                        rows.push((format!("{} ({lp})", measure.name), rel));
                    }
                }
            }
        }
        let extent = rows
            .iter()
            .flat_map(|(_, s)| [s.mean, s.ci95_low, s.ci95_high])
            .filter(|v| v.is_finite())
            .fold(0.01_f64, |a, v| a.max(v.abs()))
            * 100.0;
        let extent = nice_ceiling(extent);
        let (w, left, right, row_h, top) = (720.0, 190.0, 30.0, 26.0, 34.0);
        let height = top + row_h * rows.len().max(1) as f64 + 30.0;
        let x = |v: f64| left + (v / extent + 1.0) / 2.0 * (w - left - right);
        let mut s = svg_open(
            w,
            height,
            "Paired relative differences, proposed vs current, with 95 % intervals",
        );
        // axis
        for tick in [-1.0, -0.5, 0.0, 0.5, 1.0] {
            let v = tick * extent;
            let _ = write!(
                s,
                "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\" stroke=\"{3}\" stroke-width=\"1\"/><text x=\"{0:.1}\" y=\"{4:.1}\" font-size=\"11\" text-anchor=\"middle\">{5} %</text>",
                x(v),
                top - 6.0,
                height - 26.0,
                if tick == 0.0 { "#444" } else { "#ddd" },
                height - 10.0,
                signed_trim(v)
            );
        }
        for (i, (label, st)) in rows.iter().enumerate() {
            let y = top + row_h * (i as f64 + 0.5);
            let colour = match direction(st) {
                Direction::Up | Direction::Down => "#1f5fa8",
                _ => "#888",
            };
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
                left - 8.0,
                y + 4.0,
                escape(label)
            );
            if st.ci95_low.is_finite() && st.ci95_high.is_finite() {
                let _ = write!(
                    s,
                    "<line x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{colour}\" stroke-width=\"2\"/>",
                    x((st.ci95_low * 100.0).clamp(-extent, extent)),
                    x((st.ci95_high * 100.0).clamp(-extent, extent))
                );
            }
            let _ = write!(
                s,
                "<circle cx=\"{:.1}\" cy=\"{y:.1}\" r=\"4.5\" fill=\"{colour}\"><title>{}: {} %</title></circle>",
                x((st.mean * 100.0).clamp(-extent, extent)),
                escape(label),
                signed(st.mean * 100.0, 2)
            );
        }
        s.push_str("</svg>");
        figure(
            &s,
            "Figure 1. Paired relative differences (proposed / current − 1, per cent) with their 95 % intervals; blue: the interval excludes 0, grey: no detectable difference.",
        )
    }

    /// Mean wait by account, current vs proposed (open loop).
    fn waits_figure(&self) -> String {
        let rows: Vec<(&String, f64, f64)> = self
            .open
            .accounts
            .iter()
            .map(|(name, m)| {
                (
                    name,
                    m.current_stats().mean / 60.0,
                    m.proposed_stats().mean / 60.0,
                )
            })
            .collect();
        let max = rows
            .iter()
            .flat_map(|(_, c, p)| [*c, *p])
            .filter(|v| v.is_finite())
            .fold(0.0_f64, f64::max);
        let max = nice_ceiling(max.max(0.1));
        let (w, left, right, top) = (720.0, 150.0, 70.0, 34.0);
        let bar = 11.0;
        let group = 2.0 * bar + 10.0;
        let height = top + group * rows.len().max(1) as f64 + 30.0;
        let x = |v: f64| left + v / max * (w - left - right);
        let mut s = svg_open(
            w,
            height,
            "Mean wait by account, current vs proposed (open loop)",
        );
        for tick in [0.0, 0.25, 0.5, 0.75, 1.0] {
            let v = tick * max;
            let _ = write!(
                s,
                "<line x1=\"{0:.1}\" x2=\"{0:.1}\" y1=\"{1:.1}\" y2=\"{2:.1}\" stroke=\"#ddd\"/><text x=\"{0:.1}\" y=\"{3:.1}\" font-size=\"11\" text-anchor=\"middle\">{4}</text>",
                x(v),
                top - 4.0,
                height - 26.0,
                height - 10.0,
                trim(v)
            );
        }
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">min</text>",
            w - 4.0,
            height - 10.0
        );
        let legend = [("#9aa5b1", "current"), ("#1f5fa8", "proposed")];
        for (i, (colour, label)) in legend.iter().enumerate() {
            let lx = left + 110.0 * i as f64;
            let _ = write!(
                s,
                "<rect x=\"{lx:.1}\" y=\"8\" width=\"12\" height=\"12\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"18\" font-size=\"12\">{label}</text>",
                lx + 16.0
            );
        }
        for (i, (name, c, p)) in rows.iter().enumerate() {
            let y = top + group * i as f64;
            let _ = write!(
                s,
                "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"end\">{}</text>",
                left - 8.0,
                y + bar + 4.0,
                escape(name)
            );
            for (j, (v, (colour, _))) in [*c, *p].iter().zip(legend).enumerate() {
                let v = if v.is_finite() { *v } else { 0.0 };
                let yy = y + bar * j as f64;
                let _ = write!(
                    s,
                    "<rect x=\"{left:.1}\" y=\"{yy:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{colour}\"/><text x=\"{:.1}\" y=\"{:.1}\" font-size=\"10\">{}</text>",
                    (x(v) - left).max(0.5),
                    bar - 1.0,
                    x(v) + 4.0,
                    yy + bar - 2.0,
                    fmt(v, 1)
                );
            }
        }
        s.push_str("</svg>");
        figure(
            &s,
            "Figure 2. Mean wait by account (minutes), replaying the dump under the current and the proposed configuration (mean over the replicas).",
        )
    }

    /// Closed-loop throughput per seed, current and proposed, joined by seed.
    fn seeds_figure(&self) -> String {
        let Some(m) = self.measure(true, "throughput") else {
            return String::new();
        };
        let values: Vec<f64> = m
            .current
            .iter()
            .chain(&m.proposed)
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        let (lo, hi) = if lo.is_finite() && hi > lo {
            let pad = (hi - lo) * 0.1;
            (lo - pad, hi + pad)
        } else if lo.is_finite() {
            (lo * 0.9 - 0.1, hi * 1.1 + 0.1)
        } else {
            (0.0, 1.0)
        };
        let (w, h, top, bottom) = (360.0, 260.0, 20.0, 30.0);
        let (xc, xp) = (110.0, 250.0);
        let y = |v: f64| top + (hi - v) / (hi - lo) * (h - top - bottom);
        let mut s = svg_open(w, h, "Closed-loop throughput by seed, current and proposed");
        for (xx, label) in [(xc, "current"), (xp, "proposed")] {
            let _ = write!(
                s,
                "<line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{top:.1}\" y2=\"{:.1}\" stroke=\"#ddd\"/><text x=\"{xx:.1}\" y=\"{:.1}\" font-size=\"12\" text-anchor=\"middle\">{label}</text>",
                h - bottom,
                h - 10.0
            );
        }
        for v in [lo, (lo + hi) / 2.0, hi] {
            let _ = write!(
                s,
                "<text x=\"60\" y=\"{:.1}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
                y(v) + 4.0,
                fmt(v, 2)
            );
        }
        let _ = write!(
            s,
            "<text x=\"14\" y=\"{:.1}\" font-size=\"11\" transform=\"rotate(-90 14 {:.1})\" text-anchor=\"middle\">jobs/h</text>",
            h / 2.0,
            h / 2.0
        );
        for (c, p) in m.current.iter().zip(&m.proposed) {
            if !(c.is_finite() && p.is_finite()) {
                continue;
            }
            let colour = if p > c {
                "#1b6e20"
            } else if p < c {
                "#b42318"
            } else {
                "#888"
            };
            let _ = write!(
                s,
                "<line x1=\"{xc:.1}\" x2=\"{xp:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"{colour}\" stroke-opacity=\"0.7\"/><circle cx=\"{xc:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#9aa5b1\"/><circle cx=\"{xp:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"#1f5fa8\"/>",
                y(*c),
                y(*p),
                y(*c),
                y(*p)
            );
        }
        s.push_str("</svg>");
        figure(
            &s,
            "Figure 3. Closed-loop throughput (jobs submitted per hour) of each seed under both configurations; a line joins the same users (seed).",
        )
    }
}

/// A table row: name, current mean, proposed mean, difference [CI], relative difference.
fn compared_row(name: &str, m: &Compared, measure: &Measure) -> String {
    let (abs, rel) = m.differences();
    let c = m.current_stats().mean * measure.scale;
    let p = m.proposed_stats().mean * measure.scale;
    let d = digits_for(c.abs().max(p.abs()));
    let class = match (direction(&abs), measure.higher_is_better) {
        (Direction::Up, Some(true)) | (Direction::Down, Some(false)) => " class=\"better\"",
        (Direction::Up, Some(false)) | (Direction::Down, Some(true)) => " class=\"worse\"",
        _ => "",
    };
    let interval = if abs.n >= 2 && abs.ci95_low.is_finite() {
        format!(
            " [{}, {}]",
            signed(abs.ci95_low * measure.scale, d),
            signed(abs.ci95_high * measure.scale, d)
        )
    } else {
        String::new()
    };
    let relative = if rel.n > 0 && rel.mean.is_finite() {
        format!("{} %", signed(rel.mean * 100.0, 1))
    } else {
        "–".to_string()
    };
    format!(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td{class}>{}{}</td><td>{}</td></tr>\n",
        escape(name),
        fmt(c, d),
        fmt(p, d),
        signed(abs.mean * measure.scale, d),
        interval,
        relative
    )
}

fn file_name(files: &[FileInfo], role: &str) -> String {
    files
        .iter()
        .find(|f| f.role == role)
        .and_then(|f| f.path.file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn join_words(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{}, and {last}", rest.join(", ")),
    }
}

fn svg_open(width: f64, height: f64, title: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" role=\"img\" width=\"{width:.0}\" height=\"{height:.0}\" viewBox=\"0 0 {width:.0} {height:.0}\" font-family=\"system-ui, sans-serif\"><title>{}</title>",
        escape(title)
    )
}

fn figure(svg: &str, caption: &str) -> String {
    format!(
        "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>\n",
        escape(caption)
    )
}

/// The smallest of 1, 2, 2.5, 5 times a power of ten at or above `v` (`v` > 0).
fn nice_ceiling(v: f64) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return 1.0;
    }
    let power = 10f64.powf(v.log10().floor());
    for step in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if step * power >= v * (1.0 - 1e-12) {
            return step * power;
        }
    }
    10.0 * power
}

fn trim(v: f64) -> String {
    let s = format!("{v:.2}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s.is_empty() || s == "-0" {
        "0".to_string()
    } else {
        s.to_string()
    }
}

fn signed_trim(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", trim(v))
    } else {
        trim(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn directions_follow_the_interval() {
        let up = metrics::paired(&[2.0, 2.1, 2.2], &[1.0, 1.0, 1.0]).0;
        assert_eq!(direction(&up), Direction::Up);
        let none = metrics::paired(&[2.0, 0.0, 1.0], &[1.0, 1.0, 1.0]).0;
        assert_eq!(direction(&none), Direction::None);
        let one = metrics::paired(&[2.0], &[1.0]).0;
        assert_eq!(direction(&one), Direction::Unknown);
    }

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceiling(3.2), 5.0);
        assert_eq!(nice_ceiling(0.011), 0.02);
        assert_eq!(nice_ceiling(100.0), 100.0);
    }
}
