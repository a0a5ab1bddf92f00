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

mod finalize;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use cluster::{JobRequest, QueueOrder};
use config::ScenarioError;
use config::naming::Style;
use config::options::{self, Kind, OptionSpec, Values};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict};
use sweep::plan::Plan;
use sweep::runner;

mod gym;

/// The error and its causes joined by ": " (as the command line prints them after `error: `),
/// with the options the messages name said in `style`.
fn chain_message(error: &(dyn std::error::Error + 'static), style: Style) -> String {
    let mut parts = Vec::new();
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        parts.push(match e.downcast_ref::<ScenarioError>() {
            Some(scenario) => scenario.message(style),
            None => e.to_string(),
        });
        cause = e.source();
    }
    parts.join(": ")
}

/// The error as the Python exception of its kind, its message naming options as Python
/// keywords; the exception's `command_line_message` attribute holds the command line's words
/// for the same message (what the tests compare with `sitesim`'s).
fn py_error(error: &(dyn std::error::Error + 'static)) -> PyErr {
    let mut io_kind = None;
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = cause {
        if io_kind.is_none() {
            io_kind = io_kind_of(e);
        }
        cause = e.source();
    }
    let message = chain_message(error, Style::Keywords);
    let err = match io_kind {
        Some(std::io::ErrorKind::NotFound) => PyFileNotFoundError::new_err(message),
        Some(_) => PyOSError::new_err(message),
        None => PyValueError::new_err(message),
    };
    let flags = chain_message(error, Style::Flags(options::flag_of));
    finalize::attach(|py| {
        let _ = err.value(py).setattr("command_line_message", flags);
    });
    err
}

/// The kind of I/O error `e` is, if it is one: an `io::Error`, or a trace that cannot be opened
/// (wrapped transparently, so not reached through `source()`).
fn io_kind_of(e: &(dyn std::error::Error + 'static)) -> Option<std::io::ErrorKind> {
    if let Some(io) = e.downcast_ref::<std::io::Error>() {
        return Some(io.kind());
    }
    let swf = match e.downcast_ref::<ScenarioError>() {
        Some(ScenarioError::Trace(engine::ReplayError::Swf(swf))) => Some(swf),
        Some(ScenarioError::Sacct(sacct::SacctError::Input(swf))) => Some(swf),
        _ => match e.downcast_ref::<sacct::SacctError>() {
            Some(sacct::SacctError::Input(swf)) => Some(swf),
            _ => match e.downcast_ref::<::fit::FitError>() {
                Some(::fit::FitError::Swf(swf)) => Some(swf),
                Some(::fit::FitError::Unreadable { kind, .. }) => return *kind,
                _ => e.downcast_ref::<swf::SwfError>(),
            },
        },
    };
    match swf {
        Some(swf::SwfError::Open { error, .. }) => Some(error.kind()),
        _ => None,
    }
}

fn scenario_error(error: ScenarioError) -> PyErr {
    py_error(&error)
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
/// checked every `SIGNAL_CHECK_CALLS` calls) stops further calls (every job then gets
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

    fn priority(&self, job: &JobRequest, cluster_view: &cluster::View<'_>) -> f64 {
        let now = cluster_view.now();
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
        finalize::attach(|py| {
            // Ctrl-C (in the main thread) stops a long run with KeyboardInterrupt.
            let signals = if call % SIGNAL_CHECK_CALLS == 0 {
                py.check_signals()
            } else {
                Ok(())
            };
            let value = signals
                .and_then(|()| self.callable.bind(py).call1((view, now)))
                .and_then(|v| v.extract::<f64>())
                .and_then(|priority| {
                    // NaN has no place in an order: every comparison with it is false.
                    if priority.is_nan() {
                        Err(PyValueError::new_err(format!(
                            "the order {} gave NaN for job {} at {now} s: a priority must be a number",
                            self.name, view.id
                        )))
                    } else {
                        Ok(priority)
                    }
                });
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

/// The options `kwargs` give for `table` (the command's option table), checked with the
/// table's own checks (the command line's flags pass the same ones). `None` means "not given".
/// A keyword that is no option of the command is a `TypeError`; a bad value a `ValueError`
/// naming the keyword.
fn option_values(
    table: &[&'static OptionSpec],
    kwargs: Option<&Bound<'_, PyDict>>,
    skip: &[&str],
) -> PyResult<Values> {
    let mut values = Values::new();
    let Some(kwargs) = kwargs else {
        return Ok(values);
    };
    for (name, value) in kwargs.iter() {
        let name: String = name.extract()?;
        if skip.contains(&name.as_str()) || value.is_none() {
            continue;
        }
        let option = table.iter().find(|o| o.key == name).ok_or_else(|| {
            pyo3::exceptions::PyTypeError::new_err(format!(
                "unexpected keyword argument {name:?}; the options are {}",
                table.iter().map(|o| o.key).collect::<Vec<_>>().join(", ")
            ))
        })?;
        let shown = value.repr().map(|r| r.to_string()).unwrap_or_default();
        let bad = |problem: String| PyValueError::new_err(format!("{name}={shown}: {problem}"));
        let converted = to_toml(option, &value).map_err(bad)?;
        // A switch given as False is not given.
        if converted == toml::Value::Boolean(false) && matches!(option.kind, Kind::Switch) {
            continue;
        }
        values.push((*option, converted));
    }
    Ok(values)
}

/// A Python value as the option's value, checked by the option (whole numbers through the
/// same parser as a flag's text, so Python's big integers get the flag's message).
fn to_toml(option: &OptionSpec, value: &Bound<'_, PyAny>) -> Result<toml::Value, String> {
    if matches!(option.kind, Kind::Modes) {
        let pairs = value.extract::<Vec<(i64, f64)>>().map_err(|_| {
            "expected a list of pairs (SECONDS, SHARE), e.g. [(7200, 0.27)]".to_string()
        })?;
        return option.check(toml::Value::Array(
            pairs
                .into_iter()
                .map(|(t, p)| toml::Value::Array(vec![t.into(), p.into()]))
                .collect(),
        ));
    }
    if let Ok(b) = value.cast::<pyo3::types::PyBool>() {
        return option.check(toml::Value::Boolean(b.is_true()));
    }
    if value.is_instance_of::<pyo3::types::PyInt>() {
        let text = value.str().map(|s| s.to_string()).unwrap_or_default();
        return match option.kind {
            Kind::Whole { .. } => option.parse_text(&text),
            _ => option
                .check(toml::Value::Integer(text.parse().map_err(|_| {
                    format!("{text} is not {}", "a number this option takes")
                })?)),
        };
    }
    if let Ok(f) = value.extract::<f64>() {
        return option.check(toml::Value::Float(f));
    }
    if let Ok(text) = value.extract::<String>() {
        return option.check(toml::Value::String(text));
    }
    if let Ok(path) = value.extract::<PathBuf>() {
        return option.check(toml::Value::String(path.display().to_string()));
    }
    let type_name = value
        .get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_default();
    Err(format!(
        "a value of type {type_name} is not one of this option's"
    ))
}

/// Where a run's files go: an output directory (`out=`), or memory.
enum Files {
    Dir(scenario::store::OutputDir),
    Memory(scenario::store::MemoryStore),
}

impl Files {
    fn store(&mut self) -> &mut dyn scenario::store::Store {
        match self {
            Files::Dir(dir) => dir,
            Files::Memory(memory) => memory,
        }
    }
}

/// What a finished run returns to Python: every output file the command line's `--out` writes
/// (the registered output formats, `scenario::output::FORMATS`), as bytes (in memory) or as
/// paths (with `out=`), summary.json's text, the title and the scheduler's label.
struct Returned {
    files: Vec<(String, Vec<u8>)>,
    paths: Vec<(String, PathBuf)>,
    summary_json: String,
    title: String,
    scheduler: String,
}

/// Runs `simulation` writing `requested` on-request formats and every default one into
/// `files`; `swf` (a path) also gets the generated workload when the files stay in memory.
fn execute<'a>(
    simulation: scenario::Simulation<'a>,
    files: &'a mut Files,
    formats: &[&'static dyn scenario::output::OutputFormat],
) -> Result<scenario::Executed, ScenarioError> {
    simulation.outputs(formats, files.store()).execute()
}

impl Returned {
    fn of(
        executed: &scenario::Executed,
        files: Files,
        swf: Option<&Path>,
    ) -> Result<Returned, ScenarioError> {
        let (files, paths) = match files {
            Files::Memory(memory) => {
                let files = memory.into_files();
                if let (Some(path), Some((_, bytes))) =
                    (swf, files.iter().find(|(n, _)| n == "workload.swf"))
                {
                    let mut out = scenario::store::OutputDir::detached();
                    out.write_path(path, |w| w.write_all(bytes))?;
                    out.commit()?;
                }
                (files, Vec::new())
            }
            Files::Dir(dir) => {
                let placed = dir.commit()?;
                let paths = placed
                    .into_iter()
                    .map(|p| {
                        let name = p
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default();
                        let name = if Some(p.as_path()) == swf {
                            "workload.swf".to_string()
                        } else {
                            name
                        };
                        (name, p)
                    })
                    .collect();
                (Vec::new(), paths)
            }
        };
        Ok(Returned {
            files,
            paths,
            summary_json: executed.summary_json().to_string(),
            title: executed.title(),
            scheduler: executed.scheduler(),
        })
    }

    fn into_dict(self, py: Python<'_>, watch: Option<&OrderWatch>) -> PyResult<Py<PyDict>> {
        let d = PyDict::new(py);
        d.set_item("summary_json", self.summary_json)?;
        let files = PyDict::new(py);
        for (name, bytes) in &self.files {
            files.set_item(name, PyBytes::new(py, bytes))?;
        }
        d.set_item("files", files)?;
        let paths = PyDict::new(py);
        for (name, path) in &self.paths {
            paths.set_item(name, path)?;
        }
        d.set_item("paths", paths)?;
        d.set_item("title", self.title)?;
        d.set_item("scheduler", self.scheduler)?;
        d.set_item(
            "order_calls",
            watch.map(|w| w.calls.load(Ordering::Relaxed)),
        )?;
        Ok(d.unbind())
    }
}

/// `order=`: a queue order's name (an option), or a Python callable (a priority function).
fn split_order(
    py: Python<'_>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Option<(PyOrder, OrderWatch)>> {
    let order = match kwargs {
        Some(kwargs) => kwargs.get_item("order")?,
        None => None,
    };
    match order {
        Some(order) if order.is_callable() => python_order(py, Some(order.unbind())),
        _ => Ok(None),
    }
}

/// Where a run's files go, the formats it writes, and where the generated workload goes.
type Outputs = (
    Files,
    Vec<&'static dyn scenario::output::OutputFormat>,
    Option<PathBuf>,
);

/// Where the files go and which formats are written, from the output options.
fn outputs(values: &Values, swf_wanted: bool) -> Result<Outputs, ScenarioError> {
    let swf = options::path(values, "swf");
    let mut requested = Vec::new();
    if options::switch(values, "batsim_jobs") {
        requested.push("batsim_jobs.csv");
    }
    if swf_wanted || swf.is_some() {
        requested.push("workload.swf");
    }
    let files = match options::path(values, "out") {
        Some(dir) => {
            let mut out =
                scenario::store::OutputDir::for_outputs(&dir, options::switch(values, "force"))?;
            if let Some(path) = &swf {
                out.redirect("workload.swf", path)?;
            }
            Files::Dir(out)
        }
        None => {
            if let Some(path) = &swf {
                scenario::store::check_target(path)?;
            }
            Files::Memory(scenario::store::MemoryStore::new())
        }
    };
    Ok((files, scenario::output::formats(&requested), swf))
}

/// The site of `config` (a population file's path) or `config_text` (its text), else the
/// default site, with the site options of `values` on top; and the embedded default model.
fn site_and_model(
    config: Option<&Path>,
    config_text: Option<&str>,
    values: &Values,
) -> Result<(config::site::Site, Arc<usermodel::Model>), ScenarioError> {
    let source = match (config, config_text) {
        (Some(path), _) => options::SiteSource::File(path),
        (None, Some(text)) => options::SiteSource::Text(text),
        (None, None) => options::SiteSource::Default,
    };
    let site = options::site(source, values)?;
    let model = Arc::new(config::models::default_model().map_err(|e| {
        ScenarioError::Invalid(format!("the embedded default model is invalid: {e}"))
    })?);
    Ok((site, model))
}

/// A site-level run (`sitesim run`): `config` a population file's path, or `config_text` its
/// text; the keyword arguments are `sitesim run`'s options (`options("run")` lists them);
/// `order` may also be a Python priority function, `swf` also `True` (the generated workload
/// returned, not written).
#[pyfunction]
#[pyo3(signature = (config=None, config_text=None, **kwargs))]
fn run(
    py: Python<'_>,
    config: Option<PathBuf>,
    config_text: Option<String>,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    let table: Vec<&'static OptionSpec> = options::run_options().collect();
    let pair = split_order(py, kwargs)?;
    let swf_true = match kwargs {
        Some(k) => k
            .get_item("swf")?
            .is_some_and(|v| v.cast::<pyo3::types::PyBool>().is_ok_and(|b| b.is_true())),
        None => false,
    };
    let mut skip = vec!["config", "progress"];
    if pair.is_some() {
        skip.push("order");
    }
    if swf_true {
        skip.push("swf");
    }
    let values = option_values(&table, kwargs, &skip)?;
    let mut progress = PyProgress::new(progress_callback(kwargs)?);
    let (order, watch) = pair.unzip();
    let (returned, progress) = finalize::detach(py, move || {
        let returned = (|| -> Result<Returned, ScenarioError> {
            let (site, model) = site_and_model(config.as_deref(), config_text.as_deref(), &values)?;
            let (mut files, formats, swf) = outputs(&values, swf_true)?;
            let mut simulation = scenario::Simulation::site(site, model)
                .measure_options(&values)?
                .progress(&mut progress);
            if let Some(order) = order {
                simulation = simulation.order(Box::new(order));
            }
            let executed = execute(simulation, &mut files, &formats)?;
            Returned::of(&executed, files, swf.as_deref())
        })();
        (returned, progress)
    });
    let returned = progress.outcome(returned)?;
    if let Some(w) = &watch {
        w.check()?;
    }
    returned.into_dict(py, watch.as_ref())
}

/// The number of users at which a site reaches a target (`sitesim calibrate`): `config` a
/// population file's path, or `config_text` its text; `utilization` (a share) or `mean_wait`
/// (seconds); `seeds` runs per number of users; the keyword arguments are the site's options
/// (`options("validate")` lists them). Returns the calibration as JSON text.
#[pyfunction]
#[pyo3(signature = (config=None, config_text=None, utilization=None, mean_wait=None, seeds=5, **kwargs))]
fn calibrate(
    py: Python<'_>,
    config: Option<PathBuf>,
    config_text: Option<String>,
    utilization: Option<f64>,
    mean_wait: Option<f64>,
    seeds: u32,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<String> {
    use scenario::calibrate::Target;
    let target = match (utilization, mean_wait) {
        (Some(share), None) => Target::Utilization(share),
        (None, Some(seconds)) => Target::MeanWait(seconds),
        _ => {
            return Err(PyValueError::new_err(
                "give one target: utilization=SHARE (0.7 for 70 %) or mean_wait=SECONDS",
            ));
        }
    };
    let table: Vec<&'static OptionSpec> = options::SITE.iter().collect();
    let values = option_values(&table, kwargs, &["config"])?;
    let found = finalize::detach(py, move || {
        let (site, model) = site_and_model(config.as_deref(), config_text.as_deref(), &values)?;
        scenario::calibrate::calibrate(&site, &model, target, seeds, &mut |_| {})
    })
    .map_err(scenario_error)?;
    serde_json::to_string(&found).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// A replay of a trace (`sitesim replay`); the keyword arguments are `sitesim replay`'s options
/// (`options("replay")` lists them); `order` may also be a Python priority function.
#[pyfunction]
#[pyo3(signature = (trace, **kwargs))]
fn replay(
    py: Python<'_>,
    trace: PathBuf,
    kwargs: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    let table: Vec<&'static OptionSpec> = options::REPLAY.iter().collect();
    let pair = split_order(py, kwargs)?;
    let skip: &[&str] = if pair.is_some() {
        &["order", "trace", "progress"]
    } else {
        &["trace", "progress"]
    };
    let mut values = option_values(&table, kwargs, skip)?;
    let mut progress = PyProgress::new(progress_callback(kwargs)?);
    if let Some(option) = options::REPLAY.iter().find(|o| o.key == "trace") {
        values.insert(
            0,
            (option, toml::Value::String(trace.display().to_string())),
        );
    }
    let (order, watch) = pair.unzip();
    let (returned, progress) = finalize::detach(py, move || {
        let returned = (|| -> Result<Returned, ScenarioError> {
            let (spec, replay_options) = options::replay(&values)?;
            let (mut files, formats, swf) = outputs(&values, false)?;
            let mut simulation = scenario::Simulation::replay(spec, replay_options)
                .measure_options(&values)?
                .progress(&mut progress);
            if let Some(order) = order {
                simulation = simulation.order(Box::new(order));
            }
            let executed = execute(simulation, &mut files, &formats)?;
            Returned::of(&executed, files, swf.as_deref())
        })();
        (returned, progress)
    });
    let returned = progress.outcome(returned)?;
    if let Some(w) = &watch {
        w.check()?;
    }
    returned.into_dict(py, watch.as_ref())
}

/// A simulation's progress as Python follows it: every few thousand scheduling passes it checks
/// for signals (Ctrl-C raises KeyboardInterrupt in the main thread's run) and calls the user's
/// `progress(what, now, end)` (simulated seconds) if given; an exception from either stops the
/// simulation and is raised when it returns.
struct PyProgress {
    callback: Option<Py<PyAny>>,
    error: Option<PyErr>,
}

impl PyProgress {
    fn new(callback: Option<Py<PyAny>>) -> PyProgress {
        PyProgress {
            callback,
            error: None,
        }
    }

    /// The simulation's result, or the exception that stopped it.
    fn outcome<T>(self, result: Result<T, ScenarioError>) -> PyResult<T> {
        match (self.error, result) {
            (Some(error), _) => Err(error),
            (None, result) => result.map_err(scenario_error),
        }
    }
}

impl scenario::progress::Progress for PyProgress {
    fn tick(&mut self, tick: scenario::progress::Tick) {
        if self.error.is_some() {
            return;
        }
        let callback = self.callback.as_ref();
        let outcome = finalize::attach(|py| {
            py.check_signals()?;
            if let Some(callback) = callback {
                callback.call1(py, (tick.what, tick.now, tick.end))?;
            }
            Ok::<(), PyErr>(())
        });
        if let Err(error) = outcome {
            self.error = Some(error);
        }
    }

    fn stop_requested(&self) -> bool {
        self.error.is_some()
    }
}

/// The `progress` keyword: a callable, or nothing.
fn progress_callback(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<Option<Py<PyAny>>> {
    let Some(value) = kwargs
        .map(|k| k.get_item("progress"))
        .transpose()?
        .flatten()
    else {
        return Ok(None);
    };
    if value.is_none() {
        return Ok(None);
    }
    if !value.is_callable() {
        return Err(PyValueError::new_err(
            "progress must be a callable (what, now, end) -> None",
        ));
    }
    Ok(Some(value.unbind()))
}

/// One option as Python sees it: (key, kind, help, default text, the names a choice takes,
/// the smallest and largest whole number it takes).
type OptionRow = (
    &'static str,
    &'static str,
    &'static str,
    Option<String>,
    Vec<&'static str>,
    Option<(i64, i64)>,
);

/// The options of `command` (`run` or `replay`), as [`OptionRow`]s, in the table's order; what the Python wrappers' keywords are checked against.
#[pyfunction]
fn option_table(command: &str) -> PyResult<Vec<OptionRow>> {
    let table: Vec<&'static OptionSpec> = match command {
        "run" => options::run_options().collect(),
        "replay" => options::REPLAY.iter().collect(),
        other => {
            return Err(PyValueError::new_err(format!(
                "{other:?} has no option table; choose run or replay"
            )));
        }
    };
    Ok(table
        .into_iter()
        .map(|o| {
            let kind = match o.kind {
                Kind::Switch => "switch",
                Kind::Whole { .. } => "whole",
                Kind::Number => "number",
                Kind::Text => "text",
                Kind::Path => "path",
                Kind::Choice(_) => "choice",
                Kind::Modes => "modes",
            };
            let names = o
                .names()
                .iter()
                .filter(|n| n.listed)
                .map(|n| n.name)
                .collect();
            let range = match o.kind {
                Kind::Whole { min, max } => Some((min, max)),
                _ => None,
            };
            (o.key, kind, o.help, options::default_text(o), names, range)
        })
        .collect())
}

/// The command line's message for `value` of option `key` of `command` as a flag's text:
/// the option's own check (what the tests compare Python's messages with).
#[pyfunction]
fn check_text(command: &str, key: &str, text: &str) -> PyResult<Option<String>> {
    let table: Vec<&'static OptionSpec> = match command {
        "run" => options::run_options().collect(),
        _ => options::REPLAY.iter().collect(),
    };
    let option = table
        .into_iter()
        .find(|o| o.key == key)
        .ok_or_else(|| PyValueError::new_err(format!("no option {key:?}")))?;
    Ok(option.parse_text(text).err())
}

/// Runs a sweep (`sitesim sweep`) here, `jobs` runs at a time (longest first, as the command
/// line runs them), and returns results.csv's text and the per-seed table's. `sweep` is the
/// sweep file's path, or `sweep_text` its text (a relative `site` path then starts in the
/// working directory). With `out`, the results go into that results directory as the command
/// line writes them (a file per run, so a sweep run again resumes; the sweep's `outputs`
/// written per run), else they stay in memory. `progress(done, total)` is called (in the
/// calling thread) as runs finish; Ctrl-C stops the sweep within a fraction of a second (the
/// finished runs of a results directory are kept).
#[pyfunction]
#[pyo3(signature = (sweep=None, sweep_text=None, *, jobs=None, out=None, progress=None, per_seed=false))]
#[pyo3(name = "sweep")]
fn run_sweep(
    py: Python<'_>,
    sweep: Option<PathBuf>,
    sweep_text: Option<String>,
    jobs: Option<usize>,
    out: Option<PathBuf>,
    progress: Option<Py<PyAny>>,
    per_seed: bool,
) -> PyResult<(String, Option<String>)> {
    if jobs == Some(0) {
        return Err(PyValueError::new_err(
            "jobs must be at least 1 (runs at a time)",
        ));
    }
    if progress.as_ref().is_some_and(|p| !p.bind(py).is_callable()) {
        return Err(PyValueError::new_err(
            "progress must be a callable (done, total) -> None",
        ));
    }
    let mut interrupted: Option<PyErr> = None;
    let result = finalize::detach(py, || -> Result<(String, Option<String>), ScenarioError> {
        let plan = match (&sweep, sweep_text) {
            (Some(path), _) => Plan::load(path)?,
            (None, Some(text)) => Plan::from_text(text, "the sweep text", Path::new("."))?,
            (None, None) => {
                return Err(ScenarioError::Invalid(
                    "give a sweep file or its text".into(),
                ));
            }
        };
        let model = Arc::new(config::models::default_model().map_err(|e| {
            ScenarioError::Invalid(format!("the embedded default model is invalid: {e}"))
        })?);
        runner::check(&plan, &model)?;
        let threads =
            jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()));
        let store: Box<dyn runner::ResultStore> = match &out {
            Some(dir) => Box::new(runner::Directory::prepare(&plan, dir)?),
            None => Box::new(runner::Memory::default()),
        };
        let total = runner::missing(&plan, store.as_ref()).len();
        let done = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let finished = AtomicBool::new(false);
        let ran = std::thread::scope(|scope| {
            let worker = scope.spawn(|| {
                let ran = runner::run_missing(
                    &plan,
                    store.as_ref(),
                    &model,
                    threads,
                    &|| {
                        done.fetch_add(1, Ordering::Relaxed);
                    },
                    Some(&stop),
                );
                finished.store(true, Ordering::Release);
                ran
            });
            // The calling thread watches for Ctrl-C and reports progress while the runs go on.
            let mut reported = usize::MAX;
            while !finished.load(Ordering::Acquire) {
                std::thread::sleep(std::time::Duration::from_millis(50));
                let now_done = done.load(Ordering::Relaxed);
                let watched = finalize::attach(|py| -> PyResult<()> {
                    py.check_signals()?;
                    if let Some(callback) = &progress {
                        if now_done != reported {
                            callback.call1(py, (now_done, total))?;
                        }
                    }
                    Ok(())
                });
                reported = now_done;
                if let Err(error) = watched {
                    interrupted.get_or_insert(error);
                    stop.store(true, Ordering::Relaxed);
                }
            }
            worker
                .join()
                .map_err(|_| ScenarioError::Invalid("a sweep thread failed unexpectedly".into()))?
        });
        ran?;
        if let Some(callback) = &progress {
            let _ = finalize::attach(|py| callback.call1(py, (total, total)).map(|_| ()));
        }
        let csv = runner::table(&plan, store.as_ref())?;
        // The per-seed table only when asked: 127 rows a run (6.4 GB for a million runs).
        let runs = per_seed
            .then(|| runner::per_seed_table(&plan, store.as_ref()))
            .transpose()?;
        if let Some(dir) = &out {
            let mut files = scenario::store::OutputDir::create(dir)?;
            files.write("results.csv", csv.as_bytes())?;
            if let Some(runs) = &runs {
                files.write("runs.csv", runs.as_bytes())?;
            }
            files.commit()?;
        }
        Ok((csv, runs))
    });
    match interrupted {
        Some(error) => Err(error),
        None => result.map_err(scenario_error),
    }
}

/// Fits the user models of traces (`sitesim fit`): returns the files `--out` writes (path in
/// the models directory, text), the warnings, and summary.toml as JSON text. `command` is the
/// command line recorded in PROVENANCE.md.
#[pyfunction]
#[pyo3(signature = (traces, *, session_threshold=1200, max_break=28800,
    weighting="traces".to_string(), command=String::new(), **input))]
#[pyo3(name = "fit")]
fn fit_models(
    py: Python<'_>,
    traces: Vec<PathBuf>,
    session_threshold: i64,
    max_break: i64,
    weighting: String,
    command: String,
    input: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    let input = trace_input(input)?;
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
    let (files, warnings) = finalize::detach(py, move || -> Result<_, PyErr> {
        let fitted = ::fit::fit_with(&traces, &options, &scenario::trace::fit_reader(&input))
            .map_err(|e| py_error(&e))?;
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

/// How trace files are read, from the keywords of `replay`'s trace-input options (`tz`,
/// `wait_from`, ...), checked as the command line checks its flags.
fn trace_input(kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<config::trace::TraceOptions> {
    let table: Vec<&'static OptionSpec> = options::trace_input_options().collect();
    let values = option_values(&table, kwargs, &[])?;
    options::trace_input(&values).map_err(scenario_error)
}

/// The what-if report (`sitesim whatif`): compares the slurm.conf files `slurm_conf` (current,
/// proposed) on the sacct dump `sacct` and writes the page to `out` (refused over an existing
/// file unless `force`); the `input` keywords are `replay`'s trace-input options (`tz`, ...).
/// Returns the verdict's sentences.
#[pyfunction]
#[pyo3(signature = (sacct, slurm_conf, *, out, assoc=None, qos=None, seeds=10, weeks=4, users=None, processors=None,
    force=false, **input))]
#[allow(clippy::too_many_arguments)]
fn whatif(
    py: Python<'_>,
    sacct: PathBuf,
    slurm_conf: Vec<PathBuf>,
    out: PathBuf,
    assoc: Option<PathBuf>,
    qos: Option<PathBuf>,
    seeds: u32,
    weeks: u32,
    users: Option<u32>,
    processors: Option<u32>,
    force: bool,
    input: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<String>> {
    let (current, proposed) = scenario::whatif::current_and_proposed(&slurm_conf, "slurm_conf")
        .map_err(scenario_error)?;
    let table: Vec<&'static OptionSpec> = options::trace_input_options().collect();
    let trace_values = option_values(&table, input, &[])?;
    let inputs = scenario::whatif::Inputs {
        sacct,
        assoc,
        qos,
        current,
        proposed,
        seeds,
        weeks,
        users,
        processors,
        trace_values,
    };
    let result = finalize::detach(py, move || -> Result<Vec<String>, ScenarioError> {
        scenario::whatif::check_output(&out, force)?;
        let report = scenario::whatif::compare(&inputs, &mut |_| {})?;
        scenario::whatif::write_page(&out, &report.html(), force)?;
        Ok(report.verdict())
    });
    result.map_err(scenario_error)
}

/// A sacct dump read as `replay` reads it (`tz`, `wait_from`, `requeued`, `since`, `until`
/// keywords): one list per column, and the report (reason key, action, count, text).
#[pyfunction]
#[pyo3(signature = (path, **input))]
fn read_sacct(
    py: Python<'_>,
    path: PathBuf,
    input: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    let input = trace_input(input)?;
    let sacct_options = input.sacct_options().map_err(scenario_error)?;
    let log =
        finalize::detach(py, || sacct::read(&path, &sacct_options)).map_err(|e| py_error(&e))?;
    log_columns(py, &log)
}

/// A modern public trace (or a sacct dump) read as `replay` reads it in its `format` (a
/// `--format` name, or told from its header), with the trace-input keywords (`tz`, `since`,
/// ...): the columns of [`read_sacct`], and the report.
#[pyfunction]
#[pyo3(signature = (path, **input))]
fn read_trace(
    py: Python<'_>,
    path: PathBuf,
    input: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyDict>> {
    let input = trace_input(input)?;
    let log = finalize::detach(py, || -> Result<sacct::SacctLog, ScenarioError> {
        let mut file = swf::Input::open(&path).map_err(sacct::SacctError::from)?;
        let format = config::trace::resolve(input.format, &mut file)?;
        if format == config::choices::FormatChoice::Swf {
            return Err(config::invalid!(
                "{}: an SWF file, or a trace whose format is not told by its first line: give format= (helios, philly, alibaba-pai, acme, supercloud, sacct); read SWF with read_swf",
                path.display()
            ));
        }
        config::trace::read_log(file, format, &input)
    })
    .map_err(scenario_error)?;
    log_columns(py, &log)
}

/// A log's jobs, one list per column, with its report and zone.
#[allow(clippy::type_complexity)]
fn log_columns(py: Python<'_>, log: &sacct::SacctLog) -> PyResult<Py<PyDict>> {
    let jobs = &log.jobs;
    let names = &log.names;
    let d = PyDict::new(py);
    let ints = |f: &dyn Fn(&sacct::Job) -> Option<i64>| -> Vec<Option<i64>> {
        jobs.iter().map(f).collect()
    };
    let texts = |f: &dyn Fn(&sacct::Job) -> String| -> Vec<String> { jobs.iter().map(f).collect() };
    d.set_item("job_id", ints(&|j| Some(j.id as i64)))?;
    d.set_item("array_job", ints(&|j| j.array.map(|a| a.0 as i64)))?;
    d.set_item("array_task", ints(&|j| j.array.map(|a| i64::from(a.1))))?;
    d.set_item("user", texts(&|j| names.users.name(j.user).to_string()))?;
    d.set_item(
        "account",
        texts(&|j| names.accounts.name(j.account).to_string()),
    )?;
    d.set_item(
        "partition",
        texts(&|j| names.partitions.name(j.partition).to_string()),
    )?;
    d.set_item("qos", texts(&|j| names.qos.name(j.qos).to_string()))?;
    d.set_item("submit", ints(&|j| Some(j.submit)))?;
    d.set_item("eligible", ints(&|j| j.eligible))?;
    d.set_item("start", ints(&|j| j.start))?;
    d.set_item("end", ints(&|j| j.end))?;
    d.set_item("elapsed", ints(&|j| j.elapsed))?;
    d.set_item("time_limit", ints(&|j| j.time_limit))?;
    d.set_item("cpus", ints(&|j| Some(i64::from(j.cpus))))?;
    d.set_item("nodes", ints(&|j| Some(i64::from(j.nodes))))?;
    d.set_item("req_cpus", ints(&|j| Some(i64::from(j.req_cpus))))?;
    d.set_item("req_nodes", ints(&|j| Some(i64::from(j.req_nodes))))?;
    let memory: Vec<Option<f64>> = jobs.iter().map(|j| j.memory_per_cpu).collect();
    d.set_item("memory_per_cpu", memory)?;
    d.set_item("gpus", ints(&|j| Some(i64::from(j.gpus))))?;
    d.set_item(
        "gpu_type",
        texts(&|j| names.gpu_types.name(j.gpu_type).to_string()),
    )?;
    d.set_item("state", texts(&|j| j.state.name().to_string()))?;
    d.set_item("restarts", ints(&|j| Some(i64::from(j.restarts))))?;
    d.set_item("priority", ints(&|j| j.priority))?;
    d.set_item(
        "reason",
        texts(&|j| names.reasons.name(j.reason).to_string()),
    )?;
    d.set_item("flags", texts(&|j| names.flags.name(j.flags).to_string()))?;
    d.set_item("dependency", ints(&|j| j.dependency.map(|x| x as i64)))?;
    d.set_item("line", ints(&|j| Some(j.line as i64)))?;
    let mut report: Vec<(String, String, u64, String)> = vec![
        (
            "lines".into(),
            "read".into(),
            log.report.lines,
            "job lines read after the header".into(),
        ),
        (
            "jobs".into(),
            "kept".into(),
            log.report.jobs,
            "jobs kept".into(),
        ),
    ];
    for (reason, count) in &log.report.counts {
        report.push((
            reason.key().into(),
            reason.action().into(),
            *count,
            reason.text().into(),
        ));
    }
    let out = PyDict::new(py);
    out.set_item("columns", d)?;
    out.set_item("report", report)?;
    out.set_item("time_zone", log.options.clock.name())?;
    Ok(out.unbind())
}

/// The scheduling policies: (name, one-line help), as `sitesim schedulers` lists them.
#[pyfunction]
fn schedulers() -> Vec<(&'static str, &'static str)> {
    ::schedulers::REGISTRY
        .policies()
        .map(|p| (p.name, p.help))
        .collect()
}

/// An SWF file (plain or gzip) read by sitesim's own reader (the one `replay` uses, so the same
/// errors, naming file and line): the header as (key, value) pairs of its `; Key: value` lines,
/// the other comment lines, and the 18 fields as columns (whole-number fields as int64 lists,
/// fields 6, 7 and 10 as floats), in file order.
#[pyfunction]
#[allow(clippy::type_complexity)]
fn read_swf(
    path: PathBuf,
) -> PyResult<(
    Vec<(String, String)>,
    Vec<String>,
    Vec<Vec<i64>>,
    Vec<Vec<f64>>,
)> {
    let trace = swf::Trace::read(&path).map_err(|e| py_error(&e))?;
    let mut fields = Vec::new();
    let mut comments = Vec::new();
    for line in trace.header.lines() {
        match line {
            swf::HeaderLine::Field { key, value } => fields.push((key.clone(), value.clone())),
            swf::HeaderLine::Text(text) => comments.push(text.clone()),
        }
    }
    let whole: [fn(&swf::Record) -> i64; 15] = [
        |r| r.job_number,
        |r| r.submit_time,
        |r| r.wait_time,
        |r| r.run_time,
        |r| r.allocated_processors,
        |r| r.requested_processors,
        |r| r.requested_time,
        |r| r.status,
        |r| r.user_id,
        |r| r.group_id,
        |r| r.executable,
        |r| r.queue,
        |r| r.partition,
        |r| r.preceding_job,
        |r| r.think_time,
    ];
    let fractional: [fn(&swf::Record) -> f64; 3] = [
        |r| r.average_cpu_time,
        |r| r.used_memory,
        |r| r.requested_memory,
    ];
    let ints = whole
        .iter()
        .map(|field| trace.records.iter().map(field).collect())
        .collect();
    let floats = fractional
        .iter()
        .map(|field| trace.records.iter().map(field).collect())
        .collect();
    Ok((fields, comments, ints, floats))
}

/// The column names of jobs.csv, sessions.csv and batches.csv.
#[pyfunction]
fn columns() -> (Vec<&'static str>, Vec<&'static str>, Vec<&'static str>) {
    (
        scenario::output::JOB_COLUMNS.to_vec(),
        scenario::output::SESSION_COLUMNS.to_vec(),
        scenario::output::BATCH_COLUMNS.to_vec(),
    )
}

/// The native module.
#[pymodule]
fn _sitesim(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // Threads that simulate park instead of taking the GIL once the interpreter finalizes.
    m.py()
        .import("atexit")?
        .call_method1("register", (wrap_pyfunction!(finalize::_finalizing, m)?,))?;
    m.add_class::<Job>()?;
    m.add_class::<gym::GymSource>()?;
    m.add_class::<gym::GymConfig>()?;
    m.add_class::<gym::GymCore>()?;
    m.add_class::<gym::GymVector>()?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(replay, m)?)?;
    m.add_function(wrap_pyfunction!(calibrate, m)?)?;
    m.add_function(wrap_pyfunction!(run_sweep, m)?)?;
    m.add_function(wrap_pyfunction!(fit_models, m)?)?;
    m.add_function(wrap_pyfunction!(whatif, m)?)?;
    m.add_function(wrap_pyfunction!(crate::schedulers, m)?)?;
    m.add_function(wrap_pyfunction!(columns, m)?)?;
    m.add_function(wrap_pyfunction!(read_swf, m)?)?;
    m.add_function(wrap_pyfunction!(read_sacct, m)?)?;
    m.add_function(wrap_pyfunction!(read_trace, m)?)?;
    m.add_function(wrap_pyfunction!(option_table, m)?)?;
    m.add_function(wrap_pyfunction!(check_text, m)?)?;
    m.add("GYM_JOB_FEATURES", ::gym::JOB_FEATURES.to_vec())?;
    m.add("GYM_MACHINE_FEATURES", ::gym::MACHINE_FEATURES.to_vec())?;
    m.add("GYM_MAX_ENVS", ::gym::MAX_ENVS)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
