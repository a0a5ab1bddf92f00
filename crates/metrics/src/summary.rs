use serde::Serialize;

use crate::{JobRecord, RuntimeClass, Time};

/// Which jobs the averages leave out to avoid warm-up and cool-down effects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind")]
pub enum Warmup {
    /// Every job counts; the utilization window runs from the first submit to the last end.
    #[default]
    None,
    /// Tsafrir's thesis, section 2.4: leave out the first 1 % of terminated jobs and the jobs
    /// that terminate after the last arrival. The utilization window (section 2.5) runs from the
    /// last termination among that 1 % to the last arrival, and every job contributes the part
    /// of its run inside the window.
    Tsafrir,
    /// Measure the jobs submitted in [start, end) and utilization over [start, end] (the closed
    /// loop: a warm-up period, then the simulated weeks; jobs still running at the end count
    /// only their part inside).
    Interval {
        /// Start of the measurement, seconds.
        start: Time,
        /// End of the measurement, seconds.
        end: Time,
        /// Which of the jobs submitted inside are measured (all by default).
        #[serde(skip_serializing_if = "Counted::is_submitted")]
        counted: Counted,
    },
}

/// Which of the jobs submitted in a [`Warmup::Interval`] are measured.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Counted {
    /// Every job submitted in [start, end), however late it starts or ends (the simulation runs
    /// on until they end): the default.
    #[default]
    Submitted,
    /// Only those that started before `end` (as if the simulation stopped at `end` and a job's
    /// response were known once it started).
    Started,
    /// Only those that ended by `end` (as if the simulation stopped at `end`).
    Ended,
}

impl Counted {
    /// Whether this is the default, [`Counted::Submitted`].
    pub fn is_submitted(&self) -> bool {
        *self == Counted::Submitted
    }

    /// Whether a job submitted inside the interval that starts at `start` and ends at `end` is
    /// measured when the interval ends at `until`.
    pub fn keeps(self, start: Time, end: Time, until: Time) -> bool {
        match self {
            Counted::Submitted => true,
            Counted::Started => start < until,
            Counted::Ended => end <= until,
        }
    }
}

/// How to summarize.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SummaryOptions {
    /// Processors in the machine (the utilization's denominator).
    pub processors: u32,
    /// Warm-up exclusion.
    pub warmup: Warmup,
}

/// What happened to the input before simulation (replay): jobs read, and jobs left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct InputCounts {
    /// Job lines read from the trace.
    pub read: u64,
    /// Skipped: submit time < 0.
    pub skipped_negative_submit: u64,
    /// Skipped: runtime < 0 (unknown).
    pub skipped_negative_runtime: u64,
    /// Skipped: neither allocated nor requested processors > 0.
    pub skipped_no_processors: u64,
    /// Rejected: the job needs more processors than the machine has.
    pub rejected_too_wide: u64,
}

impl InputCounts {
    /// All skipped jobs.
    pub fn skipped(&self) -> u64 {
        self.skipped_negative_submit + self.skipped_negative_runtime + self.skipped_no_processors
    }
}

/// A time window in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Window {
    /// Start (inclusive).
    pub start: Time,
    /// End.
    pub end: Time,
}

/// Mean and percentiles of one measure. Empty sets give NaN (`null` in JSON). Percentiles use
/// the median-unbiased estimator (Hyndman & Fan type 8, the one statrs implements).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// Arithmetic mean.
    pub mean: f64,
    /// Median.
    pub p50: f64,
    /// 95th percentile.
    pub p95: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest value.
    pub max: f64,
}

impl Stats {
    /// Stats of `values` (sorted in place once, so every percentile is a lookup).
    pub fn of(mut values: Vec<f64>) -> Stats {
        if values.is_empty() {
            return Stats {
                mean: f64::NAN,
                p50: f64::NAN,
                p95: f64::NAN,
                p99: f64::NAN,
                max: f64::NAN,
            };
        }
        values.sort_unstable_by(f64::total_cmp);
        Stats::of_sorted(&values)
    }

    /// Stats of values already sorted by `f64::total_cmp` (the mean sums them in that order).
    fn of_sorted(values: &[f64]) -> Stats {
        if values.is_empty() {
            return Stats::of(Vec::new());
        }
        Stats {
            mean: values.iter().sum::<f64>() / values.len() as f64,
            p50: quantile_sorted(values, 0.5),
            p95: quantile_sorted(values, 0.95),
            p99: quantile_sorted(values, 0.99),
            max: values[values.len() - 1],
        }
    }
}

/// Where the type-8 quantile of `n` sorted values lies (0-based): at one value, or between a
/// value and the next with the given weight of the next.
enum QuantilePosition {
    At(usize),
    Between(usize, f64),
}

fn quantile_position(n: usize, tau: f64) -> QuantilePosition {
    let len = n as f64;
    let h = (len + 1.0 / 3.0) * tau + 1.0 / 3.0;
    if h <= 1.0 {
        return QuantilePosition::At(0);
    }
    if h >= len {
        return QuantilePosition::At(n - 1);
    }
    let below = h.floor();
    QuantilePosition::Between(below as usize - 1, h - below)
}

/// The `tau` quantile of sorted, non-empty `x` by Hyndman & Fan's type 8 (median-unbiased):
/// position h = (n + 1/3) tau + 1/3 (1-based), interpolated linearly and clamped to the ends.
/// This is statrs's `OrderStatistics::quantile` (tested against it), without its selection pass
/// per call.
pub(crate) fn quantile_sorted(x: &[f64], tau: f64) -> f64 {
    match quantile_position(x.len(), tau) {
        QuantilePosition::At(i) => x[i],
        QuantilePosition::Between(i, fraction) => x[i] + fraction * (x[i + 1] - x[i]),
    }
}

/// The measures of the jobs of one runtime class.
#[derive(Debug, Clone, Serialize)]
pub struct ClassSummary {
    /// The class.
    pub class: RuntimeClass,
    /// Its label (`<=1min`, `1-10min`, `>10min`).
    pub label: &'static str,
    /// Measured jobs in it.
    pub jobs: u64,
    /// Wait time, seconds.
    pub wait_seconds: Stats,
    /// Response time, seconds.
    pub response_seconds: Stats,
    /// Slowdown.
    pub slowdown: Stats,
    /// Bounded slowdown (10 s).
    pub bounded_slowdown: Stats,
}

/// A run's summary. Averages are over the measured jobs (all jobs unless warm-up is excluded).
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// Processors in the machine.
    pub processors: u32,
    /// The warm-up exclusion applied.
    pub warmup: Warmup,
    /// What happened to the input before simulation.
    pub input: InputCounts,
    /// Jobs that ran.
    pub jobs_simulated: u64,
    /// Jobs the averages are over.
    pub jobs_measured: u64,
    /// Jobs killed at their estimate (all simulated jobs).
    pub jobs_killed: u64,
    /// First submit to last end, seconds.
    pub makespan: Window,
    /// The window utilization is measured over.
    pub utilization_window: Window,
    /// Fraction of processor time in the window used by jobs (0..1).
    pub utilization: f64,
    /// Processor-seconds used inside the utilization window.
    pub processed_work: f64,
    /// Wait time, seconds.
    pub wait_seconds: Stats,
    /// Response time, seconds.
    pub response_seconds: Stats,
    /// Slowdown (response / runtime, runtime at least 1 s).
    pub slowdown: Stats,
    /// Bounded slowdown (10 s).
    pub bounded_slowdown: Stats,
    /// Response time weighted by width, seconds: sum(processors * response) / sum(processors)
    /// (Streit's ARTwW, paper 002 section 5.1).
    pub artww_seconds: f64,
    /// Response time weighted by area, seconds: sum(processors * runtime * response) /
    /// sum(processors * runtime) (Schwiegelshohn's AWRT, which Schlagkamp reports, paper 004
    /// section 3; its printed denominator lacks the runtime, which would not give seconds).
    pub awrt_seconds: f64,
    /// Slowdown weighted by width and bounded by 60 s: sum(processors * max(response, 60) /
    /// max(runtime, 60)) / sum(processors) (paper 002, section 5.1).
    pub sldww_60: f64,
    /// Loss of capacity: the share of the window's processor time that was idle while at least
    /// one job waited (paper 002, section 5.2; equals 1 - utilization when the queue never
    /// empties).
    pub loss_of_capacity: f64,
    /// Mean queue length: the jobs waiting (submitted, not yet started; measured or not),
    /// integrated over the utilization window and divided by its length (0 for an empty
    /// window). By Little's law, the arrival rate times the mean wait when every job of the
    /// window is measured. Not in summary.json ([`crate::catalogue::EXTRA_MEASURES`]).
    #[serde(skip)]
    pub queue_length_mean: f64,
    /// Mean accuracy of the runtimes the scheduler planned with, in [0, 1] (Tsafrir's thesis,
    /// section 4.1; with user estimates: runtime / estimate).
    pub prediction_accuracy: f64,
    /// Mean number of prediction corrections per job (thesis, section 4.2.2).
    pub prediction_corrections: f64,
    /// SJFness: the share of jobs that were the shortest waiting job (by true runtime) when
    /// they were chosen to start (thesis, section 3.5), in [0, 1].
    pub sjfness: f64,
    /// Mean share of a job's run that the memory-bandwidth sharing model added, in percent:
    /// 100 * penalty / (end - start) over the measured jobs that ran (paper 001's "% PRT"; 0
    /// without the model).
    pub penalized_runtime_percent: f64,
    /// Measured jobs that sharing stretched (those it stretched past their estimate, killed
    /// there, included).
    pub jobs_penalized: u64,
    /// Measured jobs killed only because sharing stretched them past their estimate (counted in
    /// `jobs_killed` too).
    pub jobs_killed_by_sharing: u64,
    /// The sharing model's view of where jobs ran (means over the measured jobs it saw; NaN
    /// without the model): nodes per job.
    pub nodes_per_job: f64,
    /// Distinct other jobs sharing one of a job's nodes during its run, per job.
    pub neighbours_per_job: f64,
    /// Mean share of busy processors on a job's nodes over its process-seconds, percent.
    pub node_busy_percent: f64,
    /// Mean share of a job's process-seconds on full nodes, percent.
    pub node_full_percent: f64,
    /// Unfairness: the mean delay beyond the fair start time, max(0, start - FST), seconds
    /// (thesis, section 3.7); `None` when fair start times were not computed.
    pub unfairness_seconds: Option<f64>,
    /// The same per runtime class.
    pub classes: Vec<ClassSummary>,
}

impl Summary {
    /// Summarizes `records` (every job that ran, in any order).
    pub fn compute(records: &[JobRecord], options: &SummaryOptions, input: InputCounts) -> Summary {
        let first_submit = records.iter().map(|r| r.submit).min().unwrap_or(0);
        let last_submit = records.iter().map(|r| r.submit).max().unwrap_or(0);
        let last_end = records.iter().map(|r| r.end).max().unwrap_or(0);
        let makespan = Window {
            start: first_submit,
            end: last_end,
        };

        let (measured, window): (Vec<&JobRecord>, Window) = match options.warmup {
            Warmup::None => (records.iter().collect(), makespan),
            Warmup::Tsafrir => {
                // Sorted by (end, job id), ties in record order: the keys are sorted with the
                // record's index, without following a pointer per comparison.
                let mut keys: Vec<(Time, i64, usize)> = records
                    .iter()
                    .enumerate()
                    .map(|(i, r)| (r.end, r.job_id, i))
                    .collect();
                keys.sort_unstable();
                let by_end: Vec<&JobRecord> = keys.iter().map(|k| &records[k.2]).collect();
                let warm = by_end.len() / 100;
                let start = if warm > 0 {
                    by_end[warm - 1].end
                } else {
                    first_submit
                };
                let kept = by_end[warm..]
                    .iter()
                    .copied()
                    .filter(|r| r.end <= last_submit)
                    .collect();
                (
                    kept,
                    Window {
                        start,
                        end: last_submit,
                    },
                )
            }
            Warmup::Interval { start, end, .. } => (
                records
                    .iter()
                    .filter(|r| options.warmup.interval_keeps(r))
                    .collect(),
                Window { start, end },
            ),
        };

        // Records in submission order (as the engine returns them) are swept for the loss of
        // capacity as they come; others by sorting every instant.
        let in_submission_order = records.windows(2).all(|w| w[0].submit <= w[1].submit);
        let mut all = AllJobs::new(window, options.processors, in_submission_order);
        for r in records {
            all.add(r);
        }
        let waiting = if in_submission_order {
            None
        } else {
            Some(waiting_sorted(records, window, options.processors))
        };
        let mut jobs = MeasuredJobs::default();
        for r in &measured {
            jobs.add(r);
        }
        assemble(options, input, makespan, all, jobs, waiting)
    }
}

impl Warmup {
    /// Whether an [`Warmup::Interval`] measures `r` (submitted inside, and counted); true for
    /// the other kinds, which choose their jobs from the whole run.
    fn interval_keeps(&self, r: &JobRecord) -> bool {
        match *self {
            Warmup::Interval {
                start,
                end,
                counted,
            } => r.submit >= start && r.submit < end && counted.keeps(r.start, r.end, end),
            Warmup::None | Warmup::Tsafrir => true,
        }
    }
}

/// A [`Summary`] of records handed in one at a time, in submission order (submit times never
/// decreasing, as the engine hands them out), without keeping them: 8 bytes per measured job
/// (its wait and runtime, for the exact percentiles) instead of the records. Gives the same
/// numbers, bit for bit, as [`Summary::compute`] over the same records (a property test checks
/// it). Needs a window known before the run ([`Warmup::Interval`]) or none at all
/// ([`Warmup::None`]: the makespan, found at the end; then every record must have
/// submit <= start <= end, as the engine's do, so no job reaches outside it).
#[derive(Debug)]
pub struct SummaryBuilder {
    options: SummaryOptions,
    first_submit: Option<Time>,
    last_end: Option<Time>,
    /// With [`Warmup::None`]: whether every record so far had submit <= start <= end.
    inside_makespan: bool,
    all: AllJobs,
    jobs: MeasuredJobs,
}

impl SummaryBuilder {
    /// A builder for `options`; `None` for [`Warmup::Tsafrir`] (which finds the jobs it
    /// measures only once every job is known).
    pub fn new(options: &SummaryOptions) -> Option<SummaryBuilder> {
        let window = match options.warmup {
            Warmup::Interval { start, end, .. } => Window { start, end },
            // The makespan, unknown until the end: no job reaches outside it, so nothing is
            // clipped until then.
            Warmup::None => Window {
                start: Time::MIN,
                end: Time::MAX,
            },
            Warmup::Tsafrir => return None,
        };
        Some(SummaryBuilder {
            options: *options,
            first_submit: None,
            last_end: None,
            inside_makespan: true,
            all: AllJobs::new(window, options.processors, true),
            jobs: MeasuredJobs::default(),
        })
    }

    /// Adds the next job: its submit time must not be earlier than the previous job's.
    pub fn add(&mut self, r: &JobRecord) {
        let measured = self.options.warmup.interval_keeps(r);
        self.add_measured(r, measured);
    }

    /// Adds the next job (in submission order, as [`SummaryBuilder::add`]), measured when
    /// `measured` says so instead of by the warm-up rule: for a caller that chooses the jobs it
    /// measures by other means (an episode of the Gymnasium environment measures its own jobs,
    /// by identity). The window is still the warm-up's.
    pub fn add_measured(&mut self, r: &JobRecord, measured: bool) {
        self.first_submit = Some(self.first_submit.map_or(r.submit, |t| t.min(r.submit)));
        self.last_end = Some(self.last_end.map_or(r.end, |t| t.max(r.end)));
        self.inside_makespan &= r.submit <= r.start && r.start <= r.end;
        self.all.add(r);
        if measured {
            self.jobs.add(r);
        }
    }

    /// Adds the next job (in submission order) when it was submitted at `submit` and had not
    /// started when the measurement stopped (a job still waiting at the end of an episode of
    /// the Gymnasium environment): it waits from `submit` through the rest of the window (the
    /// queue length and the loss of capacity count it), and is neither simulated nor measured.
    pub fn add_waiting(&mut self, submit: Time) {
        self.all.loss.add_waiting(submit);
    }

    /// The summary of every job added; `None` when a record of a [`Warmup::None`] builder
    /// reached outside the makespan (summarize the records with [`Summary::compute`] then).
    pub fn finish(mut self, input: InputCounts) -> Option<Summary> {
        let makespan = Window {
            start: self.first_submit.unwrap_or(0),
            end: self.last_end.unwrap_or(0),
        };
        if self.options.warmup == Warmup::None {
            if !self.inside_makespan {
                return None;
            }
            self.all.window = makespan;
            self.all.loss.window = makespan;
        }
        Some(assemble(
            &self.options,
            input,
            makespan,
            self.all,
            self.jobs,
            None,
        ))
    }
}

/// What every job (measured or not) adds to a summary, in record order.
#[derive(Debug)]
struct AllJobs {
    window: Window,
    jobs: u64,
    killed: u64,
    /// Processor-seconds inside the window, summed in record order.
    processed_work: f64,
    /// The sweep of the waiting jobs (records in submission order only).
    loss: WaitingSweep,
    sweep: bool,
}

impl AllJobs {
    fn new(window: Window, processors: u32, sweep: bool) -> AllJobs {
        AllJobs {
            window,
            jobs: 0,
            killed: 0,
            processed_work: 0.0,
            loss: WaitingSweep::new(window, processors),
            sweep,
        }
    }

    fn add(&mut self, r: &JobRecord) {
        self.jobs += 1;
        self.killed += u64::from(r.killed);
        let overlap = r.end.min(self.window.end) - r.start.max(self.window.start);
        self.processed_work += f64::from(r.processors) * overlap.max(0) as f64;
        if self.sweep {
            self.loss.add(r);
        }
    }
}

/// Each measured job's wait and runtime by runtime class (the four distributions follow from
/// them: response = wait + runtime exactly), and the means, in the order the jobs come.
#[derive(Debug, Default)]
struct MeasuredJobs {
    jobs: u64,
    compact: [Pairs; 3],
    means: JobMeans,
}

impl MeasuredJobs {
    fn add(&mut self, r: &JobRecord) {
        self.jobs += 1;
        self.compact[r.class() as usize].push(r.wait(), r.runtime());
        self.means.add(r);
    }
}

/// (wait, runtime) pairs, 8 bytes each while both fit in a `u32` (always, unless a job waits
/// or runs 136 years or has negative times), else 16.
#[derive(Debug)]
enum Pairs {
    Narrow(Vec<(u32, u32)>),
    Wide(Vec<(Time, Time)>),
}

impl Default for Pairs {
    fn default() -> Pairs {
        Pairs::Narrow(Vec::new())
    }
}

impl Pairs {
    fn push(&mut self, a: Time, b: Time) {
        match self {
            Pairs::Narrow(pairs) => match (u32::try_from(a), u32::try_from(b)) {
                (Ok(a), Ok(b)) => pairs.push((a, b)),
                _ => {
                    let mut wide: Vec<(Time, Time)> = pairs
                        .iter()
                        .map(|&(a, b)| (Time::from(a), Time::from(b)))
                        .collect();
                    wide.push((a, b));
                    *self = Pairs::Wide(wide);
                }
            },
            Pairs::Wide(pairs) => pairs.push((a, b)),
        }
    }

    fn len(&self) -> usize {
        match self {
            Pairs::Narrow(p) => p.len(),
            Pairs::Wide(p) => p.len(),
        }
    }

    /// `value(wait, runtime)` of every pair, in order, appended to `out`.
    fn map_into<T>(&self, value: &dyn Fn(Time, Time) -> T, out: &mut Vec<T>) {
        match self {
            Pairs::Narrow(p) => {
                out.extend(p.iter().map(|&(a, b)| value(Time::from(a), Time::from(b))))
            }
            Pairs::Wide(p) => out.extend(p.iter().map(|&(a, b)| value(a, b))),
        }
    }
}

/// The summary from its parts; `waiting` when it was not swept.
fn assemble(
    options: &SummaryOptions,
    input: InputCounts,
    makespan: Window,
    all: AllJobs,
    jobs: MeasuredJobs,
    waiting: Option<Waiting>,
) -> Summary {
    let window = all.window;
    let processed_work = all.processed_work;
    let capacity = f64::from(options.processors) * (window.end - window.start) as f64;
    let utilization = if capacity > 0.0 {
        processed_work / capacity
    } else {
        0.0
    };
    let waiting = waiting.unwrap_or_else(|| all.loss.finish());

    // One measure at a time, split by runtime class: integers (wait, response) by selection,
    // ratios by sorting each class and merging the sorted classes, instead of one sort per
    // measure and class.
    let compact = &jobs.compact;
    let (wait_seconds, wait_by_class) = integer_measure(compact, &|wait, _| wait);
    let (response_seconds, response_by_class) =
        integer_measure(compact, &|wait, runtime| wait + runtime);
    // As JobRecord::slowdown and JobRecord::bounded_slowdown compute them.
    let (slowdown, slowdown_by_class) = ratio_measure(compact, &|wait, runtime| {
        (wait + runtime) as f64 / runtime.max(1) as f64
    });
    let (bounded_slowdown, bounded_by_class) = ratio_measure(compact, &|wait, runtime| {
        ((wait + runtime) as f64 / runtime.max(crate::record::BOUNDED_SLOWDOWN_THRESHOLD) as f64)
            .max(1.0)
    });
    let classes = RuntimeClass::ALL
        .iter()
        .map(|&class| {
            let c = class as usize;
            ClassSummary {
                class,
                label: class.label(),
                jobs: compact[c].len() as u64,
                wait_seconds: wait_by_class[c],
                response_seconds: response_by_class[c],
                slowdown: slowdown_by_class[c],
                bounded_slowdown: bounded_by_class[c],
            }
        })
        .collect();
    let means = &jobs.means;

    Summary {
        processors: options.processors,
        warmup: options.warmup,
        input,
        jobs_simulated: all.jobs,
        jobs_measured: jobs.jobs,
        jobs_killed: all.killed,
        makespan,
        utilization_window: window,
        utilization,
        processed_work,
        wait_seconds,
        response_seconds,
        slowdown,
        bounded_slowdown,
        artww_seconds: means.artww.value(),
        awrt_seconds: means.awrt.value(),
        penalized_runtime_percent: means.penalized_percent.value(),
        jobs_penalized: means.jobs_penalized,
        jobs_killed_by_sharing: means.jobs_killed_by_sharing,
        nodes_per_job: means.nodes.value(),
        neighbours_per_job: means.neighbours.value(),
        node_busy_percent: means.node_busy_percent.value(),
        node_full_percent: means.node_full_percent.value(),
        sldww_60: means.sldww_60.value(),
        loss_of_capacity: waiting.loss_of_capacity,
        queue_length_mean: waiting.queue_length_mean,
        prediction_accuracy: means.prediction_accuracy.value(),
        prediction_corrections: means.prediction_corrections.value(),
        sjfness: means.sjfness.value(),
        unfairness_seconds: means.unfairness.then(|| means.unfair_delay.value()),
        classes,
    }
}

/// A running mean of the values that are numbers (NaN for none), summed in the order given.
#[derive(Debug, Default)]
struct Mean {
    sum: f64,
    n: u64,
}

impl Mean {
    fn add(&mut self, value: f64) {
        if !value.is_nan() {
            self.sum += value;
            self.n += 1;
        }
    }

    fn value(&self) -> f64 {
        if self.n == 0 {
            f64::NAN
        } else {
            self.sum / self.n as f64
        }
    }
}

/// A running weighted mean: sum(weight * value) / sum(weight), NaN without weight.
#[derive(Debug, Default)]
struct WeightedMean {
    weighted: f64,
    weight: f64,
}

impl WeightedMean {
    fn add(&mut self, weight: f64, value: f64) {
        self.weighted += weight * value;
        self.weight += weight;
    }

    fn value(&self) -> f64 {
        if self.weight > 0.0 {
            self.weighted / self.weight
        } else {
            f64::NAN
        }
    }
}

/// Every per-job mean and count of the summary, accumulated in one pass over the measured jobs
/// (each sum in the jobs' order, so the results do not depend on how many passes there are).
#[derive(Debug)]
struct JobMeans {
    /// Width-weighted response (Streit's ARTwW, paper 002 section 5.1).
    artww: WeightedMean,
    /// Area-weighted response (AWRT, paper 004 section 3).
    awrt: WeightedMean,
    /// Width-weighted slowdown bounded at 60 s (SLDwW_60, paper 002 section 5.1).
    sldww_60: WeightedMean,
    penalized_percent: Mean,
    jobs_penalized: u64,
    jobs_killed_by_sharing: u64,
    nodes: Mean,
    neighbours: Mean,
    node_busy_percent: Mean,
    node_full_percent: Mean,
    prediction_accuracy: Mean,
    prediction_corrections: Mean,
    sjfness: Mean,
    unfair_delay: Mean,
    /// Whether every job has a fair start time (else unfairness is not reported; with no jobs
    /// it is, as NaN).
    unfairness: bool,
}

impl Default for JobMeans {
    fn default() -> JobMeans {
        JobMeans {
            artww: WeightedMean::default(),
            awrt: WeightedMean::default(),
            sldww_60: WeightedMean::default(),
            penalized_percent: Mean::default(),
            jobs_penalized: 0,
            jobs_killed_by_sharing: 0,
            nodes: Mean::default(),
            neighbours: Mean::default(),
            node_busy_percent: Mean::default(),
            node_full_percent: Mean::default(),
            prediction_accuracy: Mean::default(),
            prediction_corrections: Mean::default(),
            sjfness: Mean::default(),
            unfair_delay: Mean::default(),
            unfairness: true,
        }
    }
}

impl JobMeans {
    fn add(&mut self, r: &JobRecord) {
        let width = f64::from(r.processors);
        let response = r.response();
        self.artww.add(width, response as f64);
        self.awrt.add(width * r.runtime() as f64, response as f64);
        self.sldww_60
            .add(width, response.max(60) as f64 / r.runtime().max(60) as f64);
        if r.end > r.start {
            self.penalized_percent
                .add(100.0 * r.penalty as f64 / (r.end - r.start) as f64);
        }
        if r.penalty > 0 || r.killed_by_sharing {
            self.jobs_penalized += 1;
        }
        if r.killed_by_sharing {
            self.jobs_killed_by_sharing += 1;
        }
        if let Some(n) = r.neighbourhood {
            self.nodes.add(f64::from(n.nodes));
            self.neighbours.add(f64::from(n.neighbours));
            self.node_busy_percent.add(100.0 * n.busy);
            self.node_full_percent.add(100.0 * n.full);
        }
        self.prediction_accuracy.add(r.prediction_accuracy);
        self.prediction_corrections
            .add(f64::from(r.prediction_corrections));
        self.sjfness.add(if r.shortest_waiting { 1.0 } else { 0.0 });
        match r.unfair_delay() {
            Some(delay) => self.unfair_delay.add(delay as f64),
            None => self.unfairness = false,
        }
    }
}

/// What the jobs' waiting did over the window: the loss of capacity and the mean queue length.
#[derive(Debug, Clone, Copy)]
struct Waiting {
    /// The share of the window's processor time that was idle while some job waited.
    loss_of_capacity: f64,
    /// The jobs waiting, integrated over the window, over its length.
    queue_length_mean: f64,
}

impl Waiting {
    /// From the integrals over `window`: idle processor-seconds while jobs waited, and
    /// job-seconds waited (both 0 for an empty window).
    fn of(lost: f64, queued: f64, window: Window, processors: u32) -> Waiting {
        let length = (window.end - window.start) as f64;
        let capacity = f64::from(processors) * length;
        Waiting {
            loss_of_capacity: if capacity > 0.0 { lost / capacity } else { 0.0 },
            queue_length_mean: if length > 0.0 { queued / length } else { 0.0 },
        }
    }
}

/// The loss of capacity and the mean queue length: a sweep over the submit, start and end
/// instants of every job, in time order. Records in submission order (as the engine returns
/// them) are swept with a heap of the pending starts and ends, O(n log k) for k jobs in flight
/// ([`WaitingSweep`]); others by sorting every instant ([`waiting_sorted`]). Both sum the same
/// segments in the same order, so they give the same bits (a property test checks it).
#[cfg(test)]
fn waiting(records: &[JobRecord], window: Window, processors: u32) -> Waiting {
    if !records.windows(2).all(|w| w[0].submit <= w[1].submit) {
        return waiting_sorted(records, window, processors);
    }
    let mut sweep = WaitingSweep::new(window, processors);
    for r in records {
        sweep.add(r);
    }
    sweep.finish()
}

/// The sweep of the waiting jobs over records handed in submission order: the instants up to a
/// record's submit time are swept when it comes (no later record can add events before it), so
/// only the pending starts and ends of the jobs in flight are kept.
#[derive(Debug)]
struct WaitingSweep {
    window: Window,
    processors: u32,
    /// Pending (time, change in waiting jobs, change in busy processors), earliest first.
    pending: std::collections::BinaryHeap<std::cmp::Reverse<(Time, i64, i64)>>,
    /// The instant whose records are being added (its pending events not yet applied).
    current: Option<Time>,
    waiting: i64,
    busy: i64,
    /// Idle processor-seconds while jobs waited, inside the window.
    lost: f64,
    /// Job-seconds waited, inside the window.
    queued: f64,
}

impl WaitingSweep {
    fn new(window: Window, processors: u32) -> WaitingSweep {
        WaitingSweep {
            window,
            processors,
            pending: std::collections::BinaryHeap::new(),
            current: None,
            waiting: 0,
            busy: 0,
            lost: 0.0,
            queued: 0.0,
        }
    }

    /// Moves the sweep to `submit`, the next job's submit time.
    fn reach(&mut self, submit: Time) {
        if self.current != Some(submit) {
            self.sweep_before(Some(submit));
            self.current = Some(submit);
        }
    }

    fn add(&mut self, r: &JobRecord) {
        self.reach(r.submit);
        // The record brings its events (all at or after its submit).
        if r.start > r.submit {
            self.waiting += 1;
            self.pending.push(std::cmp::Reverse((r.start, -1, 0)));
        }
        if r.end > r.start {
            let processors = i64::from(r.processors);
            self.pending
                .push(std::cmp::Reverse((r.start, 0, processors)));
            self.pending
                .push(std::cmp::Reverse((r.end, 0, -processors)));
        }
    }

    /// A job submitted at `submit` that never starts (within the sweep): it waits to the end of
    /// time, so through the rest of the window.
    fn add_waiting(&mut self, submit: Time) {
        self.reach(submit);
        self.waiting += 1;
        self.pending.push(std::cmp::Reverse((Time::MAX, -1, 0)));
    }

    /// Applies the current instant's events and every pending instant before `until` (`None`:
    /// all of them), adding each segment's idle time while jobs waited and the jobs waiting.
    fn sweep_before(&mut self, until: Option<Time>) {
        let mut at = self.current;
        while let Some(now) = at {
            while let Some(&std::cmp::Reverse((t, dw, db))) = self.pending.peek() {
                if t != now {
                    break;
                }
                self.pending.pop();
                self.waiting += dw;
                self.busy += db;
            }
            let from_heap = self.pending.peek().map(|e| e.0.0);
            let next = match (from_heap, until) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
            let (from, to) = (
                now.max(self.window.start),
                next.unwrap_or(now).min(self.window.end),
            );
            if self.waiting > 0 && to > from {
                let idle = (i64::from(self.processors) - self.busy).max(0);
                self.lost += idle as f64 * (to - from) as f64;
                self.queued += self.waiting as f64 * (to - from) as f64;
            }
            // The next instant to apply is the heap's, if it comes before `until`.
            at = from_heap.filter(|&t| until.is_none_or(|u| t < u));
        }
    }

    fn finish(mut self) -> Waiting {
        if self.window.end > self.window.start {
            self.sweep_before(None);
        }
        Waiting::of(self.lost, self.queued, self.window, self.processors)
    }
}

/// [`waiting`] for records in any order: every instant sorted.
fn waiting_sorted(records: &[JobRecord], window: Window, processors: u32) -> Waiting {
    if window.end <= window.start {
        return Waiting::of(0.0, 0.0, window, processors);
    }
    // (time, change in waiting jobs, change in busy processors)
    let mut events: Vec<(Time, i64, i64)> = Vec::with_capacity(records.len() * 3);
    for r in records {
        if r.start > r.submit {
            events.push((r.submit, 1, 0));
            events.push((r.start, -1, 0));
        }
        if r.end > r.start {
            events.push((r.start, 0, i64::from(r.processors)));
            events.push((r.end, 0, -i64::from(r.processors)));
        }
    }
    events.sort_unstable_by_key(|e| e.0);
    let (mut waiting, mut busy) = (0i64, 0i64);
    let (mut lost, mut queued) = (0.0, 0.0);
    let mut i = 0;
    while i < events.len() {
        let at = events[i].0;
        while i < events.len() && events[i].0 == at {
            waiting += events[i].1;
            busy += events[i].2;
            i += 1;
        }
        let next = events.get(i).map_or(at, |e| e.0);
        let (from, to) = (at.max(window.start), next.min(window.end));
        if waiting > 0 && to > from {
            let idle = (i64::from(processors) - busy).max(0);
            lost += idle as f64 * (to - from) as f64;
            queued += waiting as f64 * (to - from) as f64;
        }
    }
    Waiting::of(lost, queued, window, processors)
}

/// Stats of an integer measure (seconds) over all jobs and per runtime class, from each class's
/// (wait, runtime) pairs: the values in one vector, class after class, so each class is a slice
/// of it.
fn integer_measure(
    classes: &[Pairs; 3],
    value: &dyn Fn(Time, Time) -> Time,
) -> (Stats, [Stats; 3]) {
    let mut values = Vec::with_capacity(classes.iter().map(Pairs::len).sum());
    let mut bounds = [0usize; 4];
    for (c, pairs) in classes.iter().enumerate() {
        pairs.map_into(value, &mut values);
        bounds[c + 1] = values.len();
    }
    let per_class = [0, 1, 2].map(|c| integer_stats(&mut values[bounds[c]..bounds[c + 1]]));
    (integer_stats(&mut values), per_class)
}

/// Stats of a ratio over all jobs and per runtime class, from each class's (wait, runtime)
/// pairs: each class sorted, and all the values as the merge of the sorted classes (so the mean
/// sums them in sorted order, as [`Stats::of`] does), merged on the fly.
fn ratio_measure(classes: &[Pairs; 3], value: &dyn Fn(Time, Time) -> f64) -> (Stats, [Stats; 3]) {
    let mut values = Vec::with_capacity(classes.iter().map(Pairs::len).sum());
    let mut bounds = [0usize; 4];
    for (c, pairs) in classes.iter().enumerate() {
        pairs.map_into(value, &mut values);
        bounds[c + 1] = values.len();
        values[bounds[c]..].sort_unstable_by(f64::total_cmp);
    }
    let class = |c: usize| &values[bounds[c]..bounds[c + 1]];
    let all = stats_of_merged([class(0), class(1), class(2)]);
    (all, [0, 1, 2].map(|c| Stats::of_sorted(class(c))))
}

/// [`Stats::of_sorted`] of the merge of three sorted slices, without building it.
fn stats_of_merged(sorted: [&[f64]; 3]) -> Stats {
    let n: usize = sorted.iter().map(|s| s.len()).sum();
    if n == 0 {
        return Stats::of(Vec::new());
    }
    // The merged positions the percentiles read.
    let taus = [0.5, 0.95, 0.99];
    let wanted: Vec<usize> = taus
        .iter()
        .flat_map(|&tau| match quantile_position(n, tau) {
            QuantilePosition::At(i) => [i, i],
            QuantilePosition::Between(i, _) => [i, i + 1],
        })
        .collect();
    let mut seen = vec![f64::NAN; wanted.len()];
    let mut last = f64::NAN;
    let mut next = [0usize; 3];
    let merged = std::iter::from_fn(|| {
        // The smallest head among the classes (ties: any, they are the same bits).
        let c = (0..3)
            .filter(|&c| next[c] < sorted[c].len())
            .min_by(|&a, &b| sorted[a][next[a]].total_cmp(&sorted[b][next[b]]))?;
        next[c] += 1;
        Some(sorted[c][next[c] - 1])
    });
    // Summed as `Stats::of_sorted` sums the merged vector.
    let sum: f64 = merged
        .enumerate()
        .inspect(|&(k, x)| {
            last = x;
            for (slot, &w) in seen.iter_mut().zip(&wanted) {
                if w == k {
                    *slot = x;
                }
            }
        })
        .map(|(_, x)| x)
        .sum();
    let quantile = |q: usize| match quantile_position(n, taus[q]) {
        QuantilePosition::At(_) => seen[2 * q],
        QuantilePosition::Between(_, fraction) => {
            seen[2 * q] + fraction * (seen[2 * q + 1] - seen[2 * q])
        }
    };
    Stats {
        mean: sum / n as f64,
        p50: quantile(0),
        p95: quantile(1),
        p99: quantile(2),
        max: last,
    }
}

/// [`Stats::of`] for integer values (seconds) in O(n): percentiles by selection instead of a
/// sort, and the mean from the exact integer sum. The result is bit-identical to
/// [`Stats::of`] of the same values as `f64`: that sums the sorted values in `f64`, which is
/// exact (and so equals the integer sum) while every partial sum stays below 2^53 in
/// magnitude, guaranteed when the sum of magnitudes does; otherwise this falls back to
/// [`Stats::of`].
fn integer_stats(values: &mut [Time]) -> Stats {
    let magnitude: u128 = values.iter().map(|v| u128::from(v.unsigned_abs())).sum();
    if values.is_empty() || magnitude >= 1u128 << 53 {
        return Stats::of(values.iter().map(|&v| v as f64).collect());
    }
    let sum: i128 = values.iter().map(|&v| i128::from(v)).sum();
    let n = values.len();
    let max = values.iter().copied().max().unwrap_or(0);
    let mut quantile = |tau: f64| -> f64 {
        match quantile_position(n, tau) {
            QuantilePosition::At(i) => *values.select_nth_unstable(i).1 as f64,
            QuantilePosition::Between(i, fraction) => {
                let (_, &mut below, above) = values.select_nth_unstable(i);
                let next = above.iter().copied().min().unwrap_or(below);
                let (below, next) = (below as f64, next as f64);
                below + fraction * (next - below)
            }
        }
    };
    let (p50, p95, p99) = (quantile(0.5), quantile(0.95), quantile(0.99));
    Stats {
        mean: sum as f64 / n as f64,
        p50,
        p95,
        p99,
        max: max as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(job_id: i64, submit: Time, start: Time, end: Time, processors: u32) -> JobRecord {
        JobRecord {
            job: crate::Job {
                job_id,
                user: 0,
                submit,
                processors,
                estimate: end - start,
                ..crate::Job::default()
            },
            start,
            end,
            killed: false,
            ..JobRecord::default()
        }
    }

    const OPTIONS: SummaryOptions = SummaryOptions {
        processors: 10,
        warmup: Warmup::None,
    };

    #[test]
    fn utilization_over_the_makespan() {
        // Job 1 alone: 5 of 10 procs for the whole makespan [0, 100] -> 0.5. With job 2 (all 10
        // procs for the last 50 s, after waiting 50 s) the machine is oversubscribed on paper,
        // which the summary does not check: 500 + 500 = 1000 processor-seconds of 1000.
        let records = [record(1, 0, 0, 100, 5), record(2, 0, 50, 100, 10)];
        let s = Summary::compute(&records[..1], &OPTIONS, InputCounts::default());
        assert_eq!(s.utilization, 0.5);
        assert_eq!(s.processed_work, 500.0);
        let s = Summary::compute(&records, &OPTIONS, InputCounts::default());
        assert_eq!(s.utilization, 1.0);
        assert_eq!(s.wait_seconds.mean, 25.0);
        assert_eq!(s.jobs_measured, 2);
    }

    #[test]
    fn streit_and_tsafrir_measures_by_hand() {
        // 10 processors over [0, 100]. A: 2 procs, runs 0-100. B: 8 procs, submitted 0,
        // waits until 50, runs 50-80 (the 8 processors idle for 50 s while B waits: but A holds
        // 2, so 8 idle for 50 s = 400 lost processor-seconds of 1000).
        let mut a = record(1, 0, 0, 100, 2);
        let mut b = record(2, 0, 50, 80, 8);
        a.prediction_accuracy = 1.0;
        b.prediction_accuracy = 0.5;
        a.shortest_waiting = true;
        let s = Summary::compute(&[a.clone(), b.clone()], &OPTIONS, InputCounts::default());
        // ARTwW = (2 * 100 + 8 * 80) / 10 = 84.
        assert_eq!(s.artww_seconds, 84.0);
        // AWRT = (2 * 100 * 100 + 8 * 30 * 80) / (2 * 100 + 8 * 30) = 39200 / 440.
        assert!((s.awrt_seconds - 39_200.0 / 440.0).abs() < 1e-12);
        assert_eq!((s.penalized_runtime_percent, s.jobs_penalized), (0.0, 0));
        // B's 30 s run held 10 s of penalty: 33.3 % for B, 0 % for A.
        let mut penalized = b.clone();
        penalized.penalty = 10;
        let s = Summary::compute(&[a.clone(), penalized], &OPTIONS, InputCounts::default());
        assert!((s.penalized_runtime_percent - 100.0 / 6.0).abs() < 1e-9);
        assert_eq!(s.jobs_penalized, 1);
        // SLDwW_60 = (2 * 100/100 + 8 * 80/60) / 10 = (2 + 10.666..) / 10.
        assert!((s.sldww_60 - (2.0 + 8.0 * 80.0 / 60.0) / 10.0).abs() < 1e-12);
        assert_eq!(s.loss_of_capacity, 0.4);
        // B waited 50 of the window's 100 s: half a job waiting on average.
        assert_eq!(s.queue_length_mean, 0.5);
        assert_eq!(s.prediction_accuracy, 0.75);
        assert_eq!(s.sjfness, 0.5);
        assert_eq!(s.unfairness_seconds, None);
        // Fair starts: A at 0, B at 20 -> B delayed 30 s; mean 15 s.
        a.fair_start = Some(0);
        b.fair_start = Some(20);
        let s = Summary::compute(&[a, b], &OPTIONS, InputCounts::default());
        assert_eq!(s.unfairness_seconds, Some(15.0));
    }

    #[test]
    fn quantiles_match_statrs() {
        use statrs::statistics::{Data, OrderStatistics};
        let samples: [&[f64]; 4] = [
            &[3.0],
            &[2.0, 1.0],
            &[1.0, 5.0, 3.0, 4.0, 10.0, 9.0],
            &[0.5, 0.5, 7.0, 2.0, 2.0],
        ];
        for sample in samples {
            let mut sorted = sample.to_vec();
            sorted.sort_by(f64::total_cmp);
            for tau in [0.0, 0.01, 0.25, 0.5, 0.95, 0.99, 1.0] {
                let expected = Data::new(sample.to_vec()).quantile(tau);
                let got = quantile_sorted(&sorted, tau);
                assert!(
                    (got - expected).abs() < 1e-12,
                    "{sample:?} tau={tau}: {got} vs {expected}"
                );
            }
        }
    }

    #[test]
    fn stats_of_known_values() {
        let s = Stats::of((1..=100).map(f64::from).collect());
        assert_eq!(s.mean, 50.5);
        assert_eq!(s.p50, 50.5);
        assert_eq!(s.max, 100.0);
        assert!(Stats::of(vec![]).mean.is_nan());
    }

    /// Bitwise equality of two stats (NaN equal to NaN).
    fn same_bits(a: &Stats, b: &Stats) -> bool {
        [
            (a.mean, b.mean),
            (a.p50, b.p50),
            (a.p95, b.p95),
            (a.p99, b.p99),
            (a.max, b.max),
        ]
        .iter()
        .all(|(x, y)| x.to_bits() == y.to_bits())
    }

    proptest::proptest! {
        /// The heap sweep over records in submission order gives the bits of the sort, and the
        /// mean queue length is each job's wait inside the window, summed, over its length.
        #[test]
        fn the_waiting_sweep_is_bit_identical_to_sorting(
            jobs in proptest::collection::vec((0i64..500, 0i64..300, 0i64..400, 1u32..8), 0..120),
            window_start in 0i64..300,
            window_length in 1i64..2000,
        ) {
            let mut submit = 0;
            let records: Vec<JobRecord> = jobs
                .iter()
                .enumerate()
                .map(|(i, &(gap, wait, run, processors))| {
                    submit += gap / 5;
                    record(i as i64, submit, submit + wait, submit + wait + run, processors)
                })
                .collect();
            let window = Window { start: window_start, end: window_start + window_length };
            let swept = waiting(&records, window, 16);
            let sorted = waiting_sorted(&records, window, 16);
            proptest::prop_assert_eq!(swept.loss_of_capacity.to_bits(), sorted.loss_of_capacity.to_bits());
            proptest::prop_assert_eq!(swept.queue_length_mean.to_bits(), sorted.queue_length_mean.to_bits());
            let waited: i64 = records
                .iter()
                .map(|r| (r.start.min(window.end) - r.submit.max(window.start)).max(0))
                .sum();
            proptest::prop_assert_eq!(swept.queue_length_mean, waited as f64 / window_length as f64);
        }

        /// Selection and the integer sum give exactly the bits of the sort-and-sum path, for
        /// small and huge values (the latter take the fallback).
        #[test]
        fn integer_stats_are_bit_identical_to_sorting(
            values in proptest::collection::vec(-1_000_000i64..100_000_000, 0..400),
            huge in proptest::bool::ANY,
        ) {
            let values: Vec<Time> = if huge {
                values.iter().map(|v| v * 1_000_000_000).collect()
            } else {
                values
            };
            let sorted = Stats::of(values.iter().map(|&v| v as f64).collect());
            let mut values = values;
            let selected = integer_stats(&mut values);
            proptest::prop_assert!(same_bits(&sorted, &selected), "{sorted:?} vs {selected:?}");
        }
    }

    /// Random records in submission order, as the engine hands them out.
    fn random_records(jobs: &[(i64, i64, i64, u32, bool)]) -> Vec<JobRecord> {
        let mut submit = 0;
        jobs.iter()
            .enumerate()
            .map(|(i, &(gap, wait, runtime, processors, killed))| {
                submit += gap;
                JobRecord {
                    killed,
                    prediction_accuracy: if i % 3 == 0 { f64::NAN } else { 0.5 },
                    shortest_waiting: i % 2 == 0,
                    ..record(
                        i as i64,
                        submit,
                        submit + wait,
                        submit + wait + runtime,
                        processors,
                    )
                }
            })
            .collect()
    }

    proptest::proptest! {
        /// The builder, fed one record at a time, gives the bits of `Summary::compute`, and
        /// every distribution those of sorting its values (`Stats::of`) overall and per class.
        #[test]
        fn streamed_summary_is_bit_identical_to_the_whole_run(
            jobs in proptest::collection::vec(
                (0i64..200, 0i64..5_000, 0i64..2_000, 1u32..8, proptest::bool::ANY), 0..150),
            start in 0i64..3_000,
            length in 0i64..20_000,
            counted in 0usize..3,
        ) {
            let records = random_records(&jobs);
            let counted = [Counted::Submitted, Counted::Started, Counted::Ended][counted];
            let options = SummaryOptions {
                processors: 16,
                warmup: Warmup::Interval { start, end: start + length, counted },
            };
            let mut builder = SummaryBuilder::new(&options).unwrap();
            for r in &records {
                builder.add(r);
            }
            let streamed = builder.finish(InputCounts::default()).unwrap();
            let whole = Summary::compute(&records, &options, InputCounts::default());
            let json = |s: &Summary| serde_json::to_string(s).unwrap();
            proptest::prop_assert_eq!(json(&streamed), json(&whole));
            proptest::prop_assert_eq!(streamed.loss_of_capacity.to_bits(), whole.loss_of_capacity.to_bits());
            // Every distribution against the plain sort of its values.
            let measured: Vec<&JobRecord> = records
                .iter()
                .filter(|r| options.warmup.interval_keeps(r))
                .collect();
            let of = |class: Option<RuntimeClass>, value: &dyn Fn(&JobRecord) -> f64| {
                Stats::of(
                    measured
                        .iter()
                        .filter(|r| class.is_none_or(|c| r.class() == c))
                        .map(|r| value(r))
                        .collect(),
                )
            };
            type Measure<'a> = (&'a dyn Fn(&JobRecord) -> f64, fn(&Summary) -> Stats, fn(&ClassSummary) -> Stats);
            let measures: [Measure; 4] = [
                (&|r| r.wait() as f64, |s| s.wait_seconds, |c| c.wait_seconds),
                (&|r| r.response() as f64, |s| s.response_seconds, |c| c.response_seconds),
                (&|r| r.slowdown(), |s| s.slowdown, |c| c.slowdown),
                (&|r| r.bounded_slowdown(), |s| s.bounded_slowdown, |c| c.bounded_slowdown),
            ];
            for (value, overall, per_class) in measures {
                let reference = of(None, value);
                proptest::prop_assert!(same_bits(&overall(&streamed), &reference), "{:?} vs {reference:?}", overall(&streamed));
                for c in &streamed.classes {
                    let reference = of(Some(c.class), value);
                    proptest::prop_assert!(same_bits(&per_class(c), &reference), "{:?} vs {reference:?}", per_class(c));
                }
            }
        }
    }

    proptest::proptest! {
        /// Without warm-up the window is the makespan, found at the end: the builder gives the
        /// bits of `Summary::compute` for records inside it (as the engine's are), and asks for
        /// the whole records otherwise.
        #[test]
        fn streamed_summary_over_the_makespan_is_bit_identical(
            jobs in proptest::collection::vec(
                (0i64..200, 0i64..5_000, 0i64..2_000, 1u32..8, proptest::bool::ANY), 0..150),
            early_start in proptest::option::of(0usize..150),
        ) {
            let mut records = random_records(&jobs);
            let options = SummaryOptions { processors: 16, warmup: Warmup::None };
            if let Some(i) = early_start.filter(|&i| i < records.len()) {
                records[i].start = records[i].submit - 1; // started before it was submitted
            }
            let mut builder = SummaryBuilder::new(&options).unwrap();
            for r in &records {
                builder.add(r);
            }
            let whole = Summary::compute(&records, &options, InputCounts::default());
            match builder.finish(InputCounts::default()) {
                Some(streamed) => {
                    let json = |s: &Summary| serde_json::to_string(s).unwrap();
                    proptest::prop_assert_eq!(json(&streamed), json(&whole));
                    proptest::prop_assert_eq!(streamed.loss_of_capacity.to_bits(), whole.loss_of_capacity.to_bits());
                    proptest::prop_assert_eq!(streamed.utilization.to_bits(), whole.utilization.to_bits());
                }
                None => proptest::prop_assert!(records.iter().any(|r| r.start < r.submit)),
            }
        }
    }

    #[test]
    fn a_builder_measures_the_jobs_it_is_told_and_counts_jobs_still_waiting() {
        // 10 processors over [100, 300]. A (warm-up, not measured) runs 0-200 on 10 processors;
        // B (measured) waits 120-200 and runs to 260 on 4; C, submitted at 150, never starts.
        let options = SummaryOptions {
            processors: 10,
            warmup: Warmup::Interval {
                start: 100,
                end: 300,
                counted: Counted::Started,
            },
        };
        let mut builder = SummaryBuilder::new(&options).unwrap();
        builder.add_measured(&record(1, 0, 0, 200, 10), false);
        builder.add_measured(&record(2, 120, 200, 260, 4), true);
        builder.add_waiting(150);
        let s = builder.finish(InputCounts::default()).unwrap();
        assert_eq!((s.jobs_simulated, s.jobs_measured), (2, 1));
        assert_eq!(s.wait_seconds.mean, 80.0);
        // Busy: 10 x 100 s (A) + 4 x 60 s (B) of 10 x 200 s.
        assert_eq!(s.utilization, 1240.0 / 2000.0);
        // Waiting: B 80 s, C 150 s (150-300): 230 job-seconds over 200 s.
        assert_eq!(s.queue_length_mean, 230.0 / 200.0);
        // Idle while jobs waited: 200-260, 6 processors; 260-300, 10: 760 of 2000.
        assert_eq!(s.loss_of_capacity, 760.0 / 2000.0);
    }

    #[test]
    fn the_builder_does_not_take_tsafrirs_warmup() {
        let options = SummaryOptions {
            processors: 4,
            warmup: Warmup::Tsafrir,
        };
        assert!(SummaryBuilder::new(&options).is_none());
    }

    #[test]
    fn tsafrir_warmup_drops_first_percent_and_late_jobs() {
        // 200 jobs, one per 10 s, each runs 5 s; plus one that ends after the last arrival.
        let mut records: Vec<JobRecord> = (0..200)
            .map(|i| record(i, i as Time * 10, i as Time * 10, i as Time * 10 + 5, 1))
            .collect();
        records.push(record(200, 1990, 1990, 5000, 1));
        let options = SummaryOptions {
            processors: 1,
            warmup: Warmup::Tsafrir,
        };
        let s = Summary::compute(&records, &options, InputCounts::default());
        // 201 jobs: the first 2 terminated are out (201 / 100 = 2), and so are the jobs ending
        // after the last arrival at 1990: job 199 (ends 1995) and job 200.
        assert_eq!(s.jobs_measured, 201 - 2 - 2);
        assert_eq!(
            s.utilization_window,
            Window {
                start: 15,
                end: 1990
            }
        );
        // Inside [15, 1990]: jobs 2..=198 run 5 s each (197 x 5) and job 200 its first 0 s.
        assert_eq!(s.processed_work, 197.0 * 5.0);
    }

    #[test]
    fn interval_measures_jobs_submitted_inside() {
        let records = [
            record(1, 0, 0, 100, 1),
            record(2, 50, 60, 200, 1),
            record(3, 150, 150, 300, 1),
        ];
        let options = SummaryOptions {
            processors: 1,
            warmup: Warmup::Interval {
                start: 50,
                end: 150,
                counted: Counted::Submitted,
            },
        };
        let s = Summary::compute(&records, &options, InputCounts::default());
        assert_eq!(s.jobs_measured, 1);
        assert_eq!(s.wait_seconds.mean, 10.0);
        // Busy inside [50, 150]: job 1 until 100 (50 s) and job 2 from 60 (90 s).
        assert_eq!(s.processed_work, 140.0);
        // The default is left out of the JSON.
        let json = serde_json::to_string(&options.warmup).unwrap();
        assert_eq!(json, r#"{"kind":"interval","start":50,"end":150}"#);
    }

    #[test]
    fn an_interval_can_count_only_the_jobs_started_or_ended_inside() {
        // Submitted in [0, 100): job 1 ends inside, job 2 starts inside and ends after, job 3
        // starts after; job 4 is submitted after.
        let records = [
            record(1, 0, 10, 50, 1),
            record(2, 20, 60, 200, 1),
            record(3, 30, 120, 130, 1),
            record(4, 100, 130, 140, 1),
        ];
        let measured = |counted| {
            let options = SummaryOptions {
                processors: 1,
                warmup: Warmup::Interval {
                    start: 0,
                    end: 100,
                    counted,
                },
            };
            let s = Summary::compute(&records, &options, InputCounts::default());
            (s.jobs_measured, s.response_seconds.mean, s.processed_work)
        };
        // Utilization counts the same work inside [0, 100] whichever jobs are measured: job 1's
        // 40 s and job 2's first 40 s.
        assert_eq!(
            measured(Counted::Submitted),
            (3, (50.0 + 180.0 + 100.0) / 3.0, 80.0)
        );
        assert_eq!(measured(Counted::Started), (2, (50.0 + 180.0) / 2.0, 80.0));
        assert_eq!(measured(Counted::Ended), (1, 50.0, 80.0));
        let json = serde_json::to_string(&Warmup::Interval {
            start: 0,
            end: 100,
            counted: Counted::Ended,
        })
        .unwrap();
        assert_eq!(
            json,
            r#"{"kind":"interval","start":0,"end":100,"counted":"ended"}"#
        );
    }

    #[test]
    fn classes_split_by_runtime() {
        let records = [
            record(1, 0, 0, 30, 1),
            record(2, 0, 0, 300, 1),
            record(3, 0, 0, 3000, 1),
        ];
        let s = Summary::compute(&records, &OPTIONS, InputCounts::default());
        let jobs: Vec<u64> = s.classes.iter().map(|c| c.jobs).collect();
        assert_eq!(jobs, vec![1, 1, 1]);
        assert_eq!(s.classes[2].response_seconds.mean, 3000.0);
    }
}
