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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, serde::Deserialize)]
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
            Warmup::Interval {
                start,
                end,
                counted,
            } => (
                records
                    .iter()
                    .filter(|r| {
                        r.submit >= start && r.submit < end && counted.keeps(r.start, r.end, end)
                    })
                    .collect(),
                Window { start, end },
            ),
        };

        let processed_work: f64 = records
            .iter()
            .map(|r| {
                let overlap = r.end.min(window.end) - r.start.max(window.start);
                f64::from(r.processors) * overlap.max(0) as f64
            })
            .sum();
        let capacity = f64::from(options.processors) * (window.end - window.start) as f64;
        let utilization = if capacity > 0.0 {
            processed_work / capacity
        } else {
            0.0
        };

        // One measure at a time, split by runtime class: integers (wait, response) by
        // selection, ratios by sorting each class and merging the sorted classes, instead of
        // one sort per measure and class.
        // One pass over the measured jobs: the means, and each job's (wait, runtime) by class,
        // from which the four distributions are computed (response = wait + runtime exactly).
        let mut jobs_by_class = [0u64; 3];
        let mut means = JobMeans::new();
        let mut compact: [Vec<(Time, Time)>; 3] = Default::default();
        for r in &measured {
            let class = r.class() as usize;
            jobs_by_class[class] += 1;
            compact[class].push((r.wait(), r.runtime()));
            means.add(r);
        }
        let per_class = |value: &dyn Fn(Time, Time) -> Time| -> [Vec<Time>; 3] {
            compact
                .each_ref()
                .map(|jobs| jobs.iter().map(|&(w, rt)| value(w, rt)).collect())
        };
        let ratio_per_class = |value: &dyn Fn(Time, Time) -> f64| -> [Vec<f64>; 3] {
            compact
                .each_ref()
                .map(|jobs| jobs.iter().map(|&(w, rt)| value(w, rt)).collect())
        };
        let (wait_seconds, wait_by_class) = integer_measure(per_class(&|wait, _| wait));
        let (response_seconds, response_by_class) =
            integer_measure(per_class(&|wait, runtime| wait + runtime));
        // As JobRecord::slowdown and JobRecord::bounded_slowdown compute them.
        let (slowdown, slowdown_by_class) = ratio_measure(ratio_per_class(&|wait, runtime| {
            (wait + runtime) as f64 / runtime.max(1) as f64
        }));
        let (bounded_slowdown, bounded_by_class) =
            ratio_measure(ratio_per_class(&|wait, runtime| {
                ((wait + runtime) as f64
                    / runtime.max(crate::record::BOUNDED_SLOWDOWN_THRESHOLD) as f64)
                    .max(1.0)
            }));
        drop(compact);
        let classes = RuntimeClass::ALL
            .iter()
            .map(|&class| {
                let c = class as usize;
                ClassSummary {
                    class,
                    label: class.label(),
                    jobs: jobs_by_class[c],
                    wait_seconds: wait_by_class[c],
                    response_seconds: response_by_class[c],
                    slowdown: slowdown_by_class[c],
                    bounded_slowdown: bounded_by_class[c],
                }
            })
            .collect();

        Summary {
            processors: options.processors,
            warmup: options.warmup,
            input,
            jobs_simulated: records.len() as u64,
            jobs_measured: measured.len() as u64,
            jobs_killed: records.iter().filter(|r| r.killed).count() as u64,
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
            loss_of_capacity: loss_of_capacity(records, window, options.processors),
            prediction_accuracy: means.prediction_accuracy.value(),
            prediction_corrections: means.prediction_corrections.value(),
            sjfness: means.sjfness.value(),
            unfairness_seconds: means.unfairness.then(|| means.unfair_delay.value()),
            classes,
        }
    }
}

/// A running mean of the values that are numbers (NaN for none), summed in the order given.
#[derive(Default)]
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
#[derive(Default)]
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

impl JobMeans {
    fn new() -> JobMeans {
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

/// The share of the window's processor time that was idle while some job waited: a sweep over
/// the submit, start and end instants of every job, in time order. Records in submission order
/// (as the engine returns them) are swept with a heap of the pending starts and ends, O(n log k)
/// for k jobs in flight; others by sorting every instant ([`loss_of_capacity_sorted`]). Both sum
/// the same segments in the same order, so they give the same bits (a property test checks it).
fn loss_of_capacity(records: &[JobRecord], window: Window, processors: u32) -> f64 {
    let capacity = f64::from(processors) * (window.end - window.start) as f64;
    if capacity <= 0.0 {
        return 0.0;
    }
    if !records.windows(2).all(|w| w[0].submit <= w[1].submit) {
        return loss_of_capacity_sorted(records, window, processors);
    }
    // Pending (time, change in waiting jobs, change in busy processors), earliest first.
    let mut pending: std::collections::BinaryHeap<std::cmp::Reverse<(Time, i64, i64)>> =
        std::collections::BinaryHeap::new();
    let (mut waiting, mut busy) = (0i64, 0i64);
    let mut lost = 0.0;
    let mut next_record = 0;
    let next_time =
        |pending: &std::collections::BinaryHeap<std::cmp::Reverse<(Time, i64, i64)>>,
         next_record: usize| {
            let from_heap = pending.peek().map(|e| e.0.0);
            let from_records = records.get(next_record).map(|r| r.submit);
            match (from_heap, from_records) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
    while let Some(at) = next_time(&pending, next_record) {
        // Every job submitted at `at` brings its events (all at or after `at`).
        while let Some(r) = records.get(next_record).filter(|r| r.submit == at) {
            if r.start > r.submit {
                waiting += 1;
                pending.push(std::cmp::Reverse((r.start, -1, 0)));
            }
            if r.end > r.start {
                pending.push(std::cmp::Reverse((r.start, 0, i64::from(r.processors))));
                pending.push(std::cmp::Reverse((r.end, 0, -i64::from(r.processors))));
            }
            next_record += 1;
        }
        while let Some(&std::cmp::Reverse((t, dw, db))) = pending.peek() {
            if t != at {
                break;
            }
            pending.pop();
            waiting += dw;
            busy += db;
        }
        let next = next_time(&pending, next_record).unwrap_or(at);
        let (from, to) = (at.max(window.start), next.min(window.end));
        if waiting > 0 && to > from {
            let idle = (i64::from(processors) - busy).max(0);
            lost += idle as f64 * (to - from) as f64;
        }
    }
    lost / capacity
}

/// [`loss_of_capacity`] for records in any order: every instant sorted.
fn loss_of_capacity_sorted(records: &[JobRecord], window: Window, processors: u32) -> f64 {
    let capacity = f64::from(processors) * (window.end - window.start) as f64;
    if capacity <= 0.0 {
        return 0.0;
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
    let mut lost = 0.0;
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
        }
    }
    lost / capacity
}

/// Stats of an integer measure (seconds) over all jobs and per runtime class, from its values
/// split by class.
fn integer_measure(classes: [Vec<Time>; 3]) -> (Stats, [Stats; 3]) {
    let all = integer_stats(classes.concat());
    (all, classes.map(integer_stats))
}

/// Stats of a ratio over all jobs and per runtime class, from its values split by class: each
/// class sorted, and all the values as the merge of the sorted classes (so the mean sums them
/// in sorted order, as [`Stats::of`] does).
fn ratio_measure(mut classes: [Vec<f64>; 3]) -> (Stats, [Stats; 3]) {
    for values in &mut classes {
        values.sort_unstable_by(f64::total_cmp);
    }
    let mut all = Vec::with_capacity(classes.iter().map(Vec::len).sum());
    let mut next = [0usize; 3];
    loop {
        // The smallest head among the classes (ties: any, they are the same bits).
        let smallest = (0..3)
            .filter(|&c| next[c] < classes[c].len())
            .min_by(|&a, &b| classes[a][next[a]].total_cmp(&classes[b][next[b]]));
        let Some(c) = smallest else { break };
        all.push(classes[c][next[c]]);
        next[c] += 1;
    }
    let all = Stats::of_sorted(&all);
    (all, classes.map(|values| Stats::of_sorted(&values)))
}

/// [`Stats::of`] for integer values (seconds) in O(n): percentiles by selection instead of a
/// sort, and the mean from the exact integer sum. The result is bit-identical to
/// [`Stats::of`] of the same values as `f64`: that sums the sorted values in `f64`, which is
/// exact (and so equals the integer sum) while every partial sum stays below 2^53 in
/// magnitude, guaranteed when the sum of magnitudes does; otherwise this falls back to
/// [`Stats::of`].
fn integer_stats(mut values: Vec<Time>) -> Stats {
    let magnitude: u128 = values.iter().map(|v| u128::from(v.unsigned_abs())).sum();
    if values.is_empty() || magnitude >= 1u128 << 53 {
        return Stats::of(values.into_iter().map(|v| v as f64).collect());
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
            job_id,
            user: 0,
            submit,
            start,
            end,
            processors,
            estimate: end - start,
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
        let s = Summary::compute(&[a, b], &OPTIONS, InputCounts::default());
        // ARTwW = (2 * 100 + 8 * 80) / 10 = 84.
        assert_eq!(s.artww_seconds, 84.0);
        // AWRT = (2 * 100 * 100 + 8 * 30 * 80) / (2 * 100 + 8 * 30) = 39200 / 440.
        assert!((s.awrt_seconds - 39_200.0 / 440.0).abs() < 1e-12);
        assert_eq!((s.penalized_runtime_percent, s.jobs_penalized), (0.0, 0));
        // B's 30 s run held 10 s of penalty: 33.3 % for B, 0 % for A.
        let mut penalized = b;
        penalized.penalty = 10;
        let s = Summary::compute(&[a, penalized], &OPTIONS, InputCounts::default());
        assert!((s.penalized_runtime_percent - 100.0 / 6.0).abs() < 1e-9);
        assert_eq!(s.jobs_penalized, 1);
        // SLDwW_60 = (2 * 100/100 + 8 * 80/60) / 10 = (2 + 10.666..) / 10.
        assert!((s.sldww_60 - (2.0 + 8.0 * 80.0 / 60.0) / 10.0).abs() < 1e-12);
        assert_eq!(s.loss_of_capacity, 0.4);
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
        /// The heap sweep over records in submission order gives the bits of the sort.
        #[test]
        fn loss_of_capacity_sweep_is_bit_identical_to_sorting(
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
            let swept = loss_of_capacity(&records, window, 16);
            let sorted = loss_of_capacity_sorted(&records, window, 16);
            proptest::prop_assert_eq!(swept.to_bits(), sorted.to_bits());
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
            let selected = integer_stats(values);
            proptest::prop_assert!(same_bits(&sorted, &selected), "{sorted:?} vs {selected:?}");
        }
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
