//! Python bindings of sitesim: the native module `sitesim._sitesim` behind the `sitesim`
//! package (`python/sitesim/__init__.py` turns what these functions return into pandas
//! DataFrames and result objects).
//!
//! Every function resolves its options with the scenario layer, exactly as the command line
//! does, releases the GIL while it simulates (so Python threads can run several simulations at
//! once), and returns the run's files as the command line would write them: `summary.json`'s
//! text and the CSV files' bytes, written by `scenario::output`'s writers. Errors become
//! Python exceptions with the command line's message (the error and its causes joined by ": ",
//! as `sitesim` prints them after `error: `): `ValueError` for bad values, `OSError` (or
//! `FileNotFoundError`) when a file cannot be read or written.
//!
//! A queue order written in Python ([`PyOrder`]) implements `cluster::QueueOrder`: the
//! scheduler's backfilling rule is kept and only the priority function is replaced. It takes
//! the GIL for each call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cluster::{JobRequest, QueueOrder, SchedulerSpec, Time};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use scenario::estimates::EstimateOptions;
use scenario::machine::MachineOptions;
use scenario::output;
use scenario::replay::ReplayOptions;
use scenario::run::SiteOverrides;
use scenario::site::{SchedulerOverrides, Site};
use scenario::sweep::plan::Plan;
use scenario::sweep::results::{self, RunResult};
use scenario::{
    Choice, EstimateChoice, QualityChoice, ScenarioError, SelectionChoice, WarmupChoice,
};

/// The error's message as the command line prints it (its causes joined by ": "), as the
/// Python exception of its kind.
fn py_error(error: &(dyn std::error::Error + 'static)) -> PyErr {
    let mut message = error.to_string();
    let mut io_kind = None;
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if io_kind.is_none() {
            io_kind = io_kind_of(e);
        }
        if !std::ptr::eq(e, error) {
            message.push_str(": ");
            message.push_str(&e.to_string());
        }
        cause = e.source();
    }
    match io_kind {
        Some(std::io::ErrorKind::NotFound) => PyFileNotFoundError::new_err(message),
        Some(_) => PyOSError::new_err(message),
        None => PyValueError::new_err(message),
    }
}

/// The kind of I/O error `e` is, if it is one: an `io::Error`, or a trace that cannot be opened
/// (wrapped transparently, so not reached through `source()`).
fn io_kind_of(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        return Some(io.kind());
    }
    let swf = match e.downcast_ref::<ScenarioError>() {
        Some(ScenarioError::Trace(engine::ReplayError::Swf(swf))) => Some(swf),
        _ => e.downcast_ref::<swf::SwfError>(),
    };
    match swf {
        Some(swf::SwfError::Open { error, .. }) => Some(error.kind()),
        _ => None,
    }
}

fn scenario_error(error: ScenarioError) -> PyErr {
    py_error(&error)
}

/// A named choice (`--selection`, `--estimates`, ...) from its name, or a `ValueError` listing
/// the names.
fn choice<C: Choice>(name: &str) -> PyResult<C> {
    C::parse_name(name).map_err(PyValueError::new_err)
}

/// A waiting job as a queue order written in Python sees it: what the scheduler knows (never
/// the true runtime).
#[pyclass(frozen, get_all, module = "sitesim")]
#[derive(Debug, Clone, Copy)]
pub struct Job {
    /// The job's number in the simulation (assigned in submission order).
    pub id: u32,
    /// Submit time, seconds.
    pub submit: i64,
    /// Processors it needs.
    pub processors: u32,
    /// The user's runtime estimate, seconds (the job is killed when it is reached).
    pub estimate: i64,
    /// The owner (-1 when unknown).
    pub user: i64,
}

#[pymethods]
impl Job {
    fn __repr__(&self) -> String {
        format!(
            "Job(id={}, submit={}, processors={}, estimate={}, user={})",
            self.id, self.submit, self.processors, self.estimate, self.user
        )
    }
}

/// How often a Python order checks for signals (Ctrl-C), in calls.
const SIGNAL_CHECK_CALLS: usize = 4096;

/// A priority function written in Python: `callable(job, now) -> float`, larger first, ties
/// by arrival (as every queue order). The first exception it raises (or a KeyboardInterrupt,
/// checked every [`SIGNAL_CHECK_CALLS`] calls) stops further calls (every job then gets
/// priority 0, so the rest of the run is quick) and is raised once the simulation returns.
pub struct PyOrder {
    callable: Py<PyAny>,
    name: String,
    failed: AtomicBool,
    error: Arc<Mutex<Option<PyErr>>>,
    calls: Arc<AtomicUsize>,
}

impl std::fmt::Debug for PyOrder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PyOrder({})", self.name)
    }
}

impl QueueOrder for PyOrder {
    fn name(&self) -> String {
        format!("python:{}", self.name)
    }

    fn priority(&self, job: &JobRequest, now: Time) -> f64 {
        if self.failed.load(Ordering::Relaxed) {
            return 0.0;
        }
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let view = Job {
            id: job.id.0,
            submit: job.submit,
            processors: job.processors,
            estimate: job.estimate,
            user: job.user,
        };
        Python::attach(|py| {
            // Ctrl-C (in the main thread) stops a long run with KeyboardInterrupt.
            let signals = if call % SIGNAL_CHECK_CALLS == 0 {
                py.check_signals()
            } else {
                Ok(())
            };
            let value = signals
                .and_then(|()| self.callable.bind(py).call1((view, now)))
                .and_then(|v| v.extract::<f64>());
            match value {
                Ok(priority) => priority,
                Err(error) => {
                    self.failed.store(true, Ordering::Relaxed);
                    if let Ok(mut slot) = self.error.lock() {
                        slot.get_or_insert(error);
                    }
                    0.0
                }
            }
        })
    }
}

/// What a Python order leaves to look at after the run: its first error and its call count.
struct OrderWatch {
    error: Arc<Mutex<Option<PyErr>>>,
    calls: Arc<AtomicUsize>,
}

impl OrderWatch {
    /// The first error the order raised, if any.
    fn check(&self) -> PyResult<()> {
        match self.error.lock().ok().and_then(|mut e| e.take()) {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

fn python_order(
    py: Python<'_>,
    order: Option<Py<PyAny>>,
) -> PyResult<Option<(PyOrder, OrderWatch)>> {
    let Some(callable) = order else {
        return Ok(None);
    };
    let bound = callable.bind(py);
    if !bound.is_callable() {
        return Err(PyValueError::new_err(
            "order must be a callable (job, now) -> priority",
        ));
    }
    let name = bound
        .getattr("__name__")
        .and_then(|n| n.extract::<String>())
        .unwrap_or_else(|_| "order".to_string());
    let error = Arc::new(Mutex::new(None));
    let calls = Arc::new(AtomicUsize::new(0));
    let watch = OrderWatch {
        error: Arc::clone(&error),
        calls: Arc::clone(&calls),
    };
    Ok(Some((
        PyOrder {
            callable,
            name,
            failed: AtomicBool::new(false),
            error,
            calls,
        },
        watch,
    )))
}

/// What a finished run returns to Python: every output file the command line's `--out` writes
/// (by the registered output formats, `scenario::output::FORMATS`), summary.json's text, the
/// title and the scheduler's label.
struct Files {
    files: Vec<(String, Vec<u8>)>,
    summary_json: String,
    title: String,
    scheduler: String,
}

impl Files {
    /// What `executed` wrote into `store`, and its summary.
    fn of(executed: &scenario::Executed, store: scenario::store::MemoryStore) -> Files {
        Files {
            files: store.into_files(),
            summary_json: executed.summary_json().to_string(),
            title: executed.title(),
            scheduler: executed.scheduler(),
        }
    }

    fn into_dict(self, py: Python<'_>, watch: Option<&OrderWatch>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        d.set_item("summary_json", self.summary_json)?;
        let files = PyDict::new(py);
        for (name, bytes) in &self.files {
            files.set_item(name, PyBytes::new(py, bytes))?;
        }
        d.set_item("files", files)?;
        d.set_item("title", self.title)?;
        d.set_item("scheduler", self.scheduler)?;
        d.set_item(
            "order_calls",
            watch.map(|w| w.calls.load(Ordering::Relaxed)),
        )?;
        Ok(d.unbind())
    }
}

/// A site-level run (`sitesim run`): `config` a population file's path, or `config_text` its
/// text; the keyword arguments are the command line's flags.
#[pyfunction]
#[pyo3(signature = (config=None, config_text=None, *, users=None, weeks=None, scheduler=None,
    order_name=None, backfill=None, predictor=None, alpha=None, dynp_lower=None, dynp_upper=None, quality=None, seed=None, processors=None,
    fairness=false, headroom=false, swf=false, order=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    config: Option<PathBuf>,
    config_text: Option<String>,
    users: Option<u32>,
    weeks: Option<u32>,
    scheduler: Option<String>,
    order_name: Option<String>,
    backfill: Option<String>,
    predictor: Option<String>,
    alpha: Option<f64>,
    dynp_lower: Option<i64>,
    dynp_upper: Option<i64>,
    quality: Option<String>,
    seed: Option<u64>,
    processors: Option<u32>,
    fairness: bool,
    headroom: bool,
    swf: bool,
    order: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let overrides = SiteOverrides {
        users,
        weeks,
        seed,
        processors,
        policy: scheduler,
        scheduler: SchedulerOverrides {
            order: order_name,
            backfill,
            predictor,
            alpha,
            dynp_lower,
            dynp_upper,
            quality: quality
                .as_deref()
                .map(choice::<QualityChoice>)
                .transpose()?,
        },
    };
    let (order, watch) = python_order(py, order)?.unzip();
    let files = py
        .detach(move || -> Result<Files, ScenarioError> {
            let site = match (&config, &config_text) {
                (Some(path), _) => Site::load(path)?,
                (None, Some(text)) => {
                    Site::from_text(text, "the population text", Some(PathBuf::from(".")))?
                }
                (None, None) => Site::default_site()?,
            };
            let site = scenario::run::resolve_site(site, &overrides)?;
            let model = Arc::new(scenario::models::default_model().map_err(|e| {
                ScenarioError::Invalid(format!("the embedded default model is invalid: {e}"))
            })?);
            let requested: &[&str] = if swf { &["workload.swf"] } else { &[] };
            let formats = output::formats(requested);
            let mut store = scenario::store::MemoryStore::new();
            let mut simulation = scenario::Simulation::site(site, model)
                .headroom(headroom)
                .fairness(fairness)
                .outputs(&formats, &mut store);
            if let Some(order) = order {
                simulation = simulation.order(Box::new(order));
            }
            let executed = simulation.execute()?;
            Ok(Files::of(&executed, store))
        })
        .map_err(scenario_error)?;
    if let Some(w) = &watch {
        w.check()?;
    }
    files.into_dict(py, watch.as_ref())
}

/// A replay of a trace (`sitesim replay`); the keyword arguments are the command line's flags.
#[pyfunction]
#[pyo3(signature = (trace, *, scheduler="easy".to_string(), order_name=None, backfill=None,
    predictor=None, alpha=None, dynp_lower=None,
    dynp_upper=None, quality=None, load_factor=1.0, fairness=false, feedback=false,
    feedback_abandon=false, shake=false, processors=None, estimates="trace".to_string(),
    estimate_f=None, estimate_phi=None, estimate_max=None, estimate_max_share=None,
    estimate_modes=Vec::new(), seed=1, node_processors=None,
    selection="first-fit".to_string(), bandwidth_mix=None,
    bandwidth_demands="500,1000,2000".to_string(), node_bandwidth=6000.0,
    node_penalty="max".to_string(), placement=None, node_offset=0, first_jobs=None,
    warmup="none".to_string(), order=None))]
#[allow(clippy::too_many_arguments)]
fn replay(
    py: Python<'_>,
    trace: PathBuf,
    scheduler: String,
    order_name: Option<String>,
    backfill: Option<String>,
    predictor: Option<String>,
    alpha: Option<f64>,
    dynp_lower: Option<i64>,
    dynp_upper: Option<i64>,
    quality: Option<String>,
    load_factor: f64,
    fairness: bool,
    feedback: bool,
    feedback_abandon: bool,
    shake: bool,
    processors: Option<u32>,
    estimates: String,
    estimate_f: Option<f64>,
    estimate_phi: Option<f64>,
    estimate_max: Option<i64>,
    estimate_max_share: Option<f64>,
    estimate_modes: Vec<(i64, f64)>,
    seed: u64,
    node_processors: Option<u32>,
    selection: String,
    bandwidth_mix: Option<String>,
    bandwidth_demands: String,
    node_bandwidth: f64,
    node_penalty: String,
    placement: Option<String>,
    node_offset: u32,
    first_jobs: Option<usize>,
    warmup: String,
    order: Option<Py<PyAny>>,
) -> PyResult<Py<PyDict>> {
    let params = cluster::PolicyParams {
        alpha,
        dynp_lower,
        dynp_upper,
        quality: quality
            .as_deref()
            .map(choice::<QualityChoice>)
            .transpose()?
            .map(QualityChoice::quality),
    };
    let composition = cluster::Composition {
        policy: Some(&scheduler),
        order: order_name.as_deref(),
        backfill: backfill.as_deref(),
        predictor: predictor.as_deref(),
    };
    let spec = SchedulerSpec::compose(composition, params).map_err(|e| {
        PyValueError::new_err(scenario::naming::render(
            &scenario::naming::policy_error(&e),
            scenario::naming::Style::Keywords,
        ))
    })?;
    let options = ReplayOptions {
        trace,
        processors,
        first_jobs,
        load_factor,
        estimates: EstimateOptions {
            estimates: choice::<EstimateChoice>(&estimates)?,
            estimate_f,
            estimate_phi,
            estimate_max,
            estimate_max_share,
            estimate_modes,
            seed,
        },
        machine: MachineOptions {
            node_processors,
            selection: choice::<SelectionChoice>(&selection)?,
            bandwidth_mix,
            bandwidth_demands,
            node_bandwidth,
            node_penalty,
            placement: placement
                .as_deref()
                .map(choice::<SelectionChoice>)
                .transpose()?,
            node_offset,
        },
        warmup: choice::<WarmupChoice>(&warmup)?,
        fairness,
        feedback,
        feedback_abandon,
        shake,
    };
    let (order, watch) = python_order(py, order)?.unzip();
    let files = py
        .detach(move || -> Result<Files, ScenarioError> {
            let formats = output::formats(&[]);
            let mut store = scenario::store::MemoryStore::new();
            let mut simulation =
                scenario::Simulation::replay(spec, options).outputs(&formats, &mut store);
            if let Some(order) = order {
                simulation = simulation.order(Box::new(order));
            }
            let executed = simulation.execute()?;
            Ok(Files::of(&executed, store))
        })
        .map_err(scenario_error)?;
    if let Some(w) = &watch {
        w.check()?;
    }
    files.into_dict(py, watch.as_ref())
}

/// Runs a sweep (`sitesim sweep`) here, `jobs` runs at a time, and returns results.csv's text.
/// `sweep` is the sweep file's path, or `sweep_text` its text (a relative `site` path then
/// starts in the working directory).
#[pyfunction]
#[pyo3(signature = (sweep=None, sweep_text=None, *, jobs=None))]
fn sweep(
    py: Python<'_>,
    sweep: Option<PathBuf>,
    sweep_text: Option<String>,
    jobs: Option<usize>,
) -> PyResult<String> {
    if jobs == Some(0) {
        return Err(PyValueError::new_err(
            "--jobs must be at least 1 (runs at a time)",
        ));
    }
    py.detach(move || -> Result<String, ScenarioError> {
        let plan = match (&sweep, sweep_text) {
            (Some(path), _) => Plan::load(path)?,
            (None, Some(text)) => Plan::from_text(text, "the sweep text", Path::new("."))?,
            (None, None) => {
                return Err(ScenarioError::Invalid(
                    "give a sweep file or its text".into(),
                ));
            }
        };
        let model = Arc::new(scenario::models::default_model().map_err(|e| {
            ScenarioError::Invalid(format!("the embedded default model is invalid: {e}"))
        })?);
        scenario::sweep::execute::check(&plan, &model)?;
        let threads = jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
            .min(plan.runs.len())
            .max(1);
        let next = AtomicUsize::new(0);
        let done: Mutex<BTreeMap<(usize, u64), RunResult>> = Mutex::new(BTreeMap::new());
        let failures: Mutex<Vec<ScenarioError>> = Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..threads {
                scope.spawn(|| {
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(run) = plan.runs.get(i) else { break };
                        let outcome = scenario::sweep::execute::execute(&plan, run, &model);
                        match outcome {
                            Ok(result) => {
                                if let Ok(mut d) = done.lock() {
                                    d.insert((run.point, run.seed), result);
                                }
                            }
                            Err(e) => {
                                if let Ok(mut f) = failures.lock() {
                                    f.push(e);
                                }
                            }
                        }
                    }
                });
            }
        });
        let failures = failures.into_inner().unwrap_or_default();
        if let Some(first) = failures.into_iter().next() {
            return Err(first);
        }
        let done = done.into_inner().unwrap_or_default();
        results::table_of(&plan, &done)
    })
    .map_err(scenario_error)
}

/// Fits the user models of traces (`sitesim fit`): returns the files `--out` writes (path in
/// the models directory, text), the warnings, and summary.toml as JSON text. `command` is the
/// command line recorded in PROVENANCE.md.
#[pyfunction]
#[pyo3(signature = (traces, *, session_threshold=1200, max_break=28800,
    weighting="traces".to_string(), command=String::new()))]
#[pyo3(name = "fit")]
fn fit_models(
    py: Python<'_>,
    traces: Vec<PathBuf>,
    session_threshold: i64,
    max_break: i64,
    weighting: String,
    command: String,
) -> PyResult<Py<PyDict>> {
    let weighting = match weighting.as_str() {
        "traces" => ::fit::Weighting::Traces,
        "jobs" => ::fit::Weighting::Jobs,
        other => {
            return Err(PyValueError::new_err(format!(
                "{other:?} is not a weighting; choose one of traces, jobs"
            )));
        }
    };
    let options = scenario::fitting::fit_options(session_threshold, max_break, weighting)
        .map_err(scenario_error)?;
    let (files, warnings) = py.detach(move || -> Result<_, PyErr> {
        let fitted = ::fit::fit(&traces, &options).map_err(|e| py_error(&e))?;
        let files = fitted
            .files(&command)
            .map_err(|e| PyValueError::new_err(format!("cannot render summary.toml: {e}")))?;
        Ok((files, fitted.warnings))
    })?;
    let summary = files
        .iter()
        .find(|(name, _)| name == "summary.toml")
        .map(|(_, text)| text.as_str())
        .unwrap_or_default();
    let value: toml::Value = toml::from_str(summary)
        .map_err(|e| PyValueError::new_err(format!("cannot read summary.toml back: {e}")))?;
    let summary_json = serde_json::to_string(&value)
        .map_err(|e| PyValueError::new_err(format!("cannot render summary.toml as JSON: {e}")))?;
    let d = PyDict::new(py);
    d.set_item("files", files)?;
    d.set_item("warnings", warnings)?;
    d.set_item("summary_json", summary_json)?;
    Ok(d.unbind())
}

/// The scheduling policies: (name, one-line help), as `sitesim schedulers` lists them.
#[pyfunction]
fn schedulers() -> Vec<(&'static str, &'static str)> {
    cluster::POLICIES.iter().map(|p| (p.name, p.help)).collect()
}

/// The column names of jobs.csv, sessions.csv and batches.csv.
#[pyfunction]
fn columns() -> (Vec<&'static str>, Vec<&'static str>, Vec<&'static str>) {
    (
        output::JOB_COLUMNS.to_vec(),
        output::SESSION_COLUMNS.to_vec(),
        output::BATCH_COLUMNS.to_vec(),
    )
}

/// The native module.
#[pymodule]
fn _sitesim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Job>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(sweep, m)?)?;
    m.add_function(wrap_pyfunction!(fit_models, m)?)?;
    m.add_function(wrap_pyfunction!(schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
