//! One environment: an episode is a simulation held by an [`engine::Stepper`], advanced with the
//! rule's own passes (in FCFS order) until the agent has a choice to make, then stopped.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use cluster::{Cluster, JobId, Scheduler, SchedulerSpec};
use engine::{Advance, ClosedLoop, FeedbackReplay, Job, Stepper, Time, Workload};
use metrics::JobRecord;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

use crate::observe::{HORIZONS, JOB_FEATURES, MACHINE_FEATURES, WEEK, log_scaled, log_scaled_f32};
use crate::source::{SourceKind, Trace};
use crate::{
    ActionMode, EnvConfig, GymError, InvalidActionRule, Result, RewardKind, RewardMode, ScoreOrder,
    Source, Until,
};

const DAY: Time = 86_400;

/// Where the simulation stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// The agent has a choice to make.
    Decision,
    /// The episode is over: every measured job started (replays), or the simulation ended.
    Terminated,
    /// The episode was cut at its time limit (sites at their horizon, feedback episodes).
    Truncated,
}

/// What an episode measured, over its measured jobs (a replay's episode jobs; the jobs submitted
/// after the warm start in sites and feedback replays) and its measured time (from the first
/// decision's instant, t0, to the episode's end). The fields named as a measure of the catalogue
/// ([`metrics::find_measure`]) are that measure, defined as a run defines it, with the measured
/// time as the window and the measured jobs as the jobs measured (NaN where the run's would be
/// undefined: no job, no session); [`EpisodeSummary::MEASURES`] lists them and
/// [`EpisodeSummary::measure`] reads them by name. The others are the episode's own counts.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct EpisodeSummary {
    /// Measured jobs that started.
    pub jobs: u64,
    /// `bounded_slowdown_mean`: their mean bounded slowdown (10 s threshold).
    pub bounded_slowdown_mean: f64,
    /// `wait_mean`: their mean wait, seconds.
    pub wait_mean: f64,
    /// Jobs waiting (every one, warm-up jobs included), integrated over the measured time,
    /// job-hours.
    pub queue_job_hours: f64,
    /// `queue_length_mean`: the same over the measured time, jobs (0 for an empty time).
    pub queue_length_mean: f64,
    /// Busy processors integrated over the measured time, machine-hours.
    pub busy_machine_hours: f64,
    /// The measured time, hours.
    pub hours: f64,
    /// `utilization`: busy share of the machine over the measured time (replays: until the
    /// episode's last submit, the same instant under every scheduler).
    pub utilization: f64,
    /// Measured jobs submitted.
    pub submitted: u64,
    /// `throughput_submitted_per_hour`: measured jobs submitted per hour of measured time (0
    /// for an empty time).
    pub throughput_submitted_per_hour: f64,
    /// `sessions`: sessions that started in the measured time (sites and feedback replays).
    pub sessions: u64,
    /// `session_length_mean`: their mean jobs (those submitted by the episode's end; NaN with
    /// no session).
    pub session_length_mean: f64,
    /// The rewarded measure when it is none of the above ([`RewardKind::Measure`]): its name
    /// and its value, computed by the catalogue ([`metrics::Measure::value`]) over a run's
    /// summaries of the episode: every job submitted so far (warm-up jobs measured or not as
    /// the episode measures them; those still waiting counted as waiting to the end), the
    /// measured time as the window, and the sessions started in it (batches are not kept: their
    /// measures are undefined). Jobs still running at the end carry no scheduler annotations.
    pub other: Option<(&'static str, f64)>,
    /// Decisions the agent made.
    pub decisions: u64,
    /// t0 and the episode's end, seconds.
    pub start: Time,
    /// The episode's end, seconds.
    pub end: Time,
}

impl EpisodeSummary {
    /// The catalogue's measures an episode measures: the names [`EpisodeSummary::measure`]
    /// knows.
    pub const MEASURES: [&'static str; 7] = [
        "bounded_slowdown_mean",
        "wait_mean",
        "queue_length_mean",
        "utilization",
        "throughput_submitted_per_hour",
        "sessions",
        "session_length_mean",
    ];

    /// The measure of the catalogue called `name`, in its catalogue unit; `None` for a name
    /// the episode does not measure.
    pub fn measure(&self, name: &str) -> Option<f64> {
        Some(match name {
            "bounded_slowdown_mean" => self.bounded_slowdown_mean,
            "wait_mean" => self.wait_mean,
            "queue_length_mean" => self.queue_length_mean,
            "utilization" => self.utilization,
            "throughput_submitted_per_hour" => self.throughput_submitted_per_hour,
            "sessions" => self.sessions as f64,
            "session_length_mean" => self.session_length_mean,
            _ => {
                return self
                    .other
                    .filter(|(other, _)| *other == name)
                    .map(|(_, v)| v);
            }
        })
    }

    /// The episodic reward of `kind`: its measure signed so that more is better (the
    /// catalogue's [`metrics::Measure::better`]), or relative to `baseline`'s ((B - A) / B for
    /// costs, A / B - 1 for benefits; 0 when B is 0). An undefined measure (NaN: no job or no
    /// session) rewards 0.
    pub fn reward(&self, kind: RewardKind, baseline: Option<&EpisodeSummary>) -> f64 {
        let defined = |x: Option<f64>| x.filter(|x| x.is_finite());
        let Some(a) = defined(self.measure(kind.name())) else {
            return 0.0;
        };
        match baseline {
            None if kind.is_benefit() => a,
            None => -a,
            Some(b) => match defined(b.measure(kind.name())) {
                None => 0.0,
                Some(0.0) => 0.0,
                Some(b) if kind.is_benefit() => a / b - 1.0,
                Some(b) => (b - a) / b,
            },
        }
    }
}

/// A job as the environment knows it (by the engine's job id: submission order).
#[derive(Debug, Clone, Copy)]
struct JobInfo {
    user: i64,
    /// The user's index in [`Tracked::user_stats`].
    user_index: u32,
    /// The estimate's feature, computed once.
    estimate_feature: f32,
    submit: Time,
    processors: u32,
    /// Its other resources (memory and GPUs on a machine of node types).
    extra: cluster::Extra,
    estimate: Time,
    runtime: Time,
    measured: bool,
    /// Its start and end (min(start + runtime, kill time)) once it started, seconds.
    started: Option<(Time, Time)>,
}

/// Which jobs an episode measures.
#[derive(Debug, Clone, Copy)]
enum Measure {
    /// The engine's ids in [from, to).
    Ids(u32, u32),
    /// Jobs submitted in [from, to), seconds.
    Times(Time, Time),
}

/// The workload behind an episode.
enum Inner {
    /// Jobs `next..end` of a trace.
    Slice {
        trace: Arc<Trace>,
        next: usize,
        end: usize,
    },
    /// A replay with feedback of the sessions around the episode.
    Feedback(Box<FeedbackReplay>),
    /// Simulated users.
    Site(Box<ClosedLoop>),
}

/// The workload, and what the environment tracks of its jobs: the waiting ones in arrival order
/// (the window), their sizes, each user's waiting jobs and recent bounded slowdown.
struct Tracked {
    inner: Inner,
    jobs: Vec<JobInfo>,
    waiting: BTreeSet<u32>,
    sizes: BTreeMap<u32, u32>,
    /// Each user's index in `user_stats` (looked up once per job, not per observation).
    users: HashMap<i64, u32>,
    user_stats: Vec<UserStats>,
    measure: Measure,
    submitted_measured: u64,
    submitted_in_step: u64,
}

/// Weight of a user's newest bounded slowdown in its running average.
const BSLD_WEIGHT: f64 = 0.3;

impl Workload for Tracked {
    fn next_arrival(&self) -> Option<Time> {
        match &self.inner {
            Inner::Slice { trace, next, end } => (*next < *end).then(|| trace.jobs[*next].submit),
            Inner::Feedback(w) => w.next_arrival(),
            Inner::Site(w) => w.next_arrival(),
        }
    }

    fn arrivals(&mut self, now: Time, out: &mut Vec<Job>) {
        let from = out.len();
        match &mut self.inner {
            Inner::Slice { trace, next, end } => {
                while *next < *end && trace.jobs[*next].submit == now {
                    out.push(trace.jobs[*next]);
                    *next += 1;
                }
            }
            Inner::Feedback(w) => w.arrivals(now, out),
            Inner::Site(w) => w.arrivals(now, out),
        }
        for spec in &out[from..] {
            let id = self.jobs.len() as u32;
            let measured = match self.measure {
                Measure::Ids(lo, hi) => (lo..hi).contains(&id),
                Measure::Times(lo, hi) => (lo..hi).contains(&now),
            };
            if measured {
                self.submitted_measured += 1;
                self.submitted_in_step += 1;
            }
            let next = self.user_stats.len() as u32;
            let user_index = *self.users.entry(spec.user).or_insert(next);
            if user_index == next {
                self.user_stats.push(UserStats::default());
            }
            self.user_stats[user_index as usize].waiting += 1;
            self.jobs.push(JobInfo {
                user: spec.user,
                user_index,
                estimate_feature: log_scaled(spec.estimate as f64, WEEK),
                submit: spec.submit,
                processors: spec.processors,
                extra: spec.extra,
                estimate: spec.estimate,
                runtime: spec.runtime,
                measured,
                started: None,
            });
            self.waiting.insert(id);
            *self.sizes.entry(spec.processors).or_insert(0) += 1;
        }
    }

    fn job_ended(&mut self, record: &JobRecord, now: Time) {
        let b = record.bounded_slowdown();
        if let Some(stats) = self
            .users
            .get(&record.user)
            .and_then(|&u| self.user_stats.get_mut(u as usize))
        {
            let average = match stats.bsld {
                Some(e) => (1.0 - BSLD_WEIGHT) * e + BSLD_WEIGHT * b,
                None => b,
            };
            stats.bsld = Some(average);
            stats.bsld_feature = ((average.max(1.0).ln() / 1000f64.ln()).min(1.0)) as f32;
        }
        match &mut self.inner {
            Inner::Slice { .. } => {}
            Inner::Feedback(w) => w.job_ended(record, now),
            Inner::Site(w) => w.job_ended(record, now),
        }
    }
}

impl Tracked {
    fn new(inner: Inner, measure: Measure) -> Tracked {
        Tracked {
            inner,
            jobs: Vec::new(),
            waiting: BTreeSet::new(),
            sizes: BTreeMap::new(),
            users: HashMap::new(),
            user_stats: Vec::new(),
            measure,
            submitted_measured: 0,
            submitted_in_step: 0,
        }
    }

    /// A job left the queue (it started).
    fn started(&mut self, id: u32) -> Option<JobInfo> {
        if !self.waiting.remove(&id) {
            return None;
        }
        let info = self.jobs.get(id as usize).copied()?;
        if let Some(n) = self.sizes.get_mut(&info.processors) {
            *n -= 1;
            if *n == 0 {
                self.sizes.remove(&info.processors);
            }
        }
        if let Some(stats) = self.user_stats.get_mut(info.user_index as usize) {
            stats.waiting = stats.waiting.saturating_sub(1);
        }
        Some(info)
    }

    fn smallest_waiting(&self) -> Option<u32> {
        self.sizes.keys().next().copied()
    }
}

/// What the environment keeps of a user for the observation.
#[derive(Debug, Clone, Copy, Default)]
struct UserStats {
    /// Jobs waiting now.
    waiting: u32,
    /// Running average of the bounded slowdowns of its ended jobs.
    bsld: Option<f64>,
    /// Its feature: min(1, ln(bsld) / ln(1000)).
    bsld_feature: f32,
}

/// What a step accumulates for the dense reward.
#[derive(Debug, Clone, Copy, Default)]
struct StepSums {
    bsld: f64,
    wait: f64,
    queue: f64,
    busy: f64,
}

/// How an episode starts: what its draw gave (or the start given to `reset`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EpisodeStart {
    /// A replay from job `start`.
    Replay {
        /// The episode's first job, an index in the trace.
        start: usize,
    },
    /// A feedback replay whose measured time starts at `t0`, seconds.
    Feedback {
        /// The first decision's instant bound, seconds on the trace's clock.
        t0: Time,
    },
    /// A site whose users are drawn from `seed`.
    Site {
        /// The population's seed (`sitesim run --seed`).
        seed: u64,
    },
}

/// What an environment's future depends on besides its settings and the actions since its
/// last reset, so that a copy of it can be rebuilt ([`Env::state`], [`Env::restore`]): the
/// episode draws are the only use of its random stream, and they depend only on the seeding
/// and on how many draws came since, never on the actions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EnvState {
    /// The stream's seed at its last seeding (construction, `set_index` or `reset(seed)`).
    pub rng_seed: u64,
    /// The site seed the next draw would take at that seeding.
    pub site_seed: Option<u64>,
    /// Episode draws since that seeding.
    pub draws: u64,
    /// The current episode's start (none before the first reset).
    pub start: Option<EpisodeStart>,
}

/// A simulation in progress.
struct Episode {
    cluster: Cluster,
    stepper: Option<Stepper>,
    load: Tracked,
    records: Vec<JobRecord>,
    stopped_at_limit: Option<Arc<Trace>>,
    /// The instant of the pass under way (its events applied, its decisions not all made).
    open: Option<Time>,
    /// Pick mode: the job picked that did not fit, reserved until it starts.
    pending: Option<u32>,
    /// The agent decides from this instant on.
    t0: Time,
    /// Truncated at this instant.
    end_time: Option<Time>,
    /// Busy processors are measured until this instant (replays: the episode's last submit, the
    /// same for every scheduler, so that utilization compares schedules).
    busy_until: Option<Time>,
    /// Terminated once this many measured jobs started.
    measured_total: Option<u64>,
    /// Every pass is the rule's own (a baseline, or draining).
    builtin: bool,
    mode: ActionMode,
    /// The scheduler predicts runtimes (the predicted-runtime feature asks the cluster).
    predicts: bool,
    processors: u32,
    // accounting
    last_t: Time,
    held_waiting: usize,
    held_busy: u32,
    started_measured: u64,
    bsld_sum: f64,
    wait_sum: f64,
    queue_integral: f64,
    busy_integral: f64,
    step: StepSums,
    /// The rewarded measure when the episode's own do not include it ([`RewardKind::Measure`]).
    other: Option<&'static metrics::Measure>,
    decisions: u64,
    finished: bool,
    ended_at: Option<Time>,
    /// Time of week at `clock.0` was `clock.1`, seconds.
    clock: (Time, Time),
    /// Scratch of [`Episode::observe`]: the expected releases, cumulative.
    releases: Vec<(Time, u32)>,
    /// Scratch of [`Env::step_score`]: the window's (job, score) pairs.
    scores: Vec<(u32, f64)>,
}

impl Episode {
    fn now(&self) -> Time {
        self.open
            .or_else(|| self.stepper.as_ref().map(Stepper::now))
            .unwrap_or(self.last_t.max(self.t0))
    }

    /// Integrates the queue and the busy processors held since the last instant, over the part
    /// after t0.
    fn integrate(&mut self, now: Time) {
        let from = self.last_t.max(self.t0);
        if now > from {
            let dt = (now - from) as f64;
            let queue = self.held_waiting as f64 * dt;
            let busy_to = self.busy_until.map_or(now, |t| t.min(now));
            let busy = f64::from(self.held_busy) * (busy_to - from).max(0) as f64;
            self.queue_integral += queue;
            self.busy_integral += busy;
            self.step.queue += queue;
            self.step.busy += busy;
        }
        self.last_t = self.last_t.max(now);
    }

    /// Books what the cluster's last call started.
    fn book(&mut self) -> Result<()> {
        if let Some(stepper) = self.stepper.as_mut() {
            stepper.started(&mut self.cluster)?;
        }
        for s in self.cluster.last_started() {
            let id = s.id.0;
            if self.pending == Some(id) {
                self.pending = None;
            }
            let Some(info) = self.load.started(id) else {
                continue;
            };
            let end = s.start.saturating_add(info.runtime).min(s.kill_time);
            if let Some(job) = self.load.jobs.get_mut(id as usize) {
                job.started = Some((s.start, end));
            }
            if info.measured {
                let run = (end - s.start).max(metrics::BOUNDED_SLOWDOWN_THRESHOLD);
                let bsld = ((end - info.submit) as f64 / run as f64).max(1.0);
                let wait = (s.start - info.submit) as f64;
                self.started_measured += 1;
                self.bsld_sum += bsld;
                self.wait_sum += wait;
                self.step.bsld += bsld;
                self.step.wait += wait;
            }
        }
        self.held_waiting = self.load.waiting.len();
        self.held_busy = self.processors - self.cluster.free_processors();
        Ok(())
    }

    fn score_order(&mut self) -> Option<&mut ScoreOrder> {
        self.cluster
            .order_mut()
            .as_any_mut()
            .and_then(|o| o.downcast_mut::<ScoreOrder>())
    }

    /// A pass of the rule at `now` with these scores (none: arrival order). Scores that give
    /// the oldest waiting jobs priorities that never increase with age order the queue as
    /// arrival order does (ties fall back to arrival), so the pass runs without them and the
    /// queue stays unsorted: an FCFS decision costs no sort.
    fn pass(&mut self, now: Time, scores: &[(u32, f64)]) -> Result<()> {
        let arrival = scores
            .iter()
            .zip(self.load.waiting.iter())
            .all(|(&(id, _), &oldest)| id == oldest)
            && scores.windows(2).all(|w| w[0].1 >= w[1].1);
        let scores = if arrival { &[] } else { scores };
        if !scores.is_empty() {
            if let Some(order) = self.score_order() {
                order.set(scores.iter().copied());
            }
        }
        self.cluster.schedule(now);
        self.book()?;
        if !scores.is_empty() {
            if let Some(order) = self.score_order() {
                order.clear();
            }
        }
        Ok(())
    }

    /// Starts job `id` now (it fits).
    fn start_one(&mut self, now: Time, id: u32) -> Result<()> {
        self.cluster
            .start_job(now, JobId(id))
            .map_err(|e| GymError::InvalidAction(e.to_string()))?;
        self.book()
    }

    fn some_waiting_fits(&self) -> bool {
        if self.cluster.pool().is_some() {
            // on nodes, the smallest job by processors may not be the one that fits
            return self.load.waiting.iter().any(|&id| self.fits(id));
        }
        self.load
            .smallest_waiting()
            .is_some_and(|p| self.cluster.fits_now(&cluster::Resources::processors(p)))
    }

    /// Whether job `id` (waiting) fits now: its processors, and on a machine of node types
    /// its memory and GPUs on its nodes.
    fn fits(&self, id: u32) -> bool {
        self.load.jobs.get(id as usize).is_some_and(|info| {
            if self.cluster.pool().is_some() {
                let resources = cluster::Resources {
                    processors: info.processors,
                    extra: info.extra,
                };
                self.cluster.job_fits_now(JobId(id), &resources)
            } else {
                self.cluster
                    .fits_now(&cluster::Resources::processors(info.processors))
            }
        })
    }

    fn measured_all_started(&self) -> bool {
        self.measured_total
            .is_some_and(|n| self.started_measured >= n)
    }

    fn end(&mut self, status: Status) -> Result<Status> {
        if self.ended_at.is_none() {
            let now = match (status, self.end_time) {
                (Status::Truncated, Some(t)) => t,
                _ => self.now(),
            };
            self.ended_at = Some(now.max(self.t0));
        }
        Ok(status)
    }

    /// Advances to the next decision, or to the episode's end.
    fn run_until_decision(&mut self) -> Result<Status> {
        loop {
            if let Some(now) = self.open {
                if !self.builtin && now >= self.t0 {
                    if self.mode == ActionMode::Pick {
                        if let Some(j) = self.pending {
                            let fits = self.fits(j);
                            if fits {
                                self.start_one(now, j)?;
                                self.pending = None;
                            } else {
                                self.pass(now, &[(j, f64::INFINITY)])?;
                                self.open = None;
                                if self.measured_all_started() {
                                    return self.end(Status::Terminated);
                                }
                                continue;
                            }
                        }
                        if self.measured_all_started() {
                            return self.end(Status::Terminated);
                        }
                        if self.some_waiting_fits() {
                            return Ok(Status::Decision);
                        }
                    } else if self.load.waiting.len() >= 2 && self.some_waiting_fits() {
                        return Ok(Status::Decision);
                    }
                }
                self.pass(now, &[])?;
                self.open = None;
                if self.measured_all_started() {
                    return self.end(Status::Terminated);
                }
                continue;
            }
            if self.finished || self.measured_all_started() {
                // Every measured job started (at the pass just made, whichever made it).
                return self.end(Status::Terminated);
            }
            let Episode {
                cluster,
                stepper,
                load,
                records,
                stopped_at_limit,
                ..
            } = self;
            let Some(step) = stepper.as_mut() else {
                return self.end(Status::Terminated);
            };
            let mut sink = |load: &mut Tracked, mut record: JobRecord| {
                if let Inner::Site(w) = &mut load.inner {
                    // Records come in submission order: drop the submission this one pairs
                    // with, so the closed loop keeps only the jobs in flight.
                    w.pair_next();
                }
                if let Some(trace) = stopped_at_limit {
                    engine::Replay::mark_killed_at_limit(&trace.stopped_at_limit, &mut record);
                }
                records.push(record);
            };
            match step.advance(cluster, load, &mut sink)? {
                Advance::Pass(now) => {
                    if let Some(end) = self.end_time {
                        if now >= end {
                            self.integrate(end);
                            // The instant's events are applied; its pass is left open, for
                            // `drain` to make under the rule.
                            self.open = Some(now);
                            return self.end(Status::Truncated);
                        }
                    }
                    self.integrate(now);
                    self.open = Some(now);
                }
                Advance::Finished => {
                    if let Some(step) = stepper.take() {
                        step.finish(cluster, load, &mut sink)?;
                    }
                    self.finished = true;
                    return self.end(Status::Terminated);
                }
            }
        }
    }

    /// Goes on with the rule's own passes (no decision) until the simulation ends, so that every
    /// record is final.
    fn drain(&mut self) -> Result<()> {
        self.builtin = true;
        self.end_time = None;
        self.measured_total = None;
        self.pending = None;
        while !self.finished {
            self.run_until_decision()?;
        }
        Ok(())
    }

    fn summary(&self) -> EpisodeSummary {
        let end = self.ended_at.unwrap_or_else(|| self.now()).max(self.t0);
        let hours = (end - self.t0) as f64 / 3600.0;
        let busy_hours =
            (self.busy_until.map_or(end, |t| t.min(end)) - self.t0).max(0) as f64 / 3600.0;
        let jobs = self.started_measured;
        // As the catalogue's means: undefined without a job.
        let mean = |sum: f64| {
            if jobs > 0 {
                sum / jobs as f64
            } else {
                f64::NAN
            }
        };
        let queue_job_hours = self.queue_integral / 3600.0;
        let (sessions, session_length_mean) = self.sessions(end);
        EpisodeSummary {
            jobs,
            bounded_slowdown_mean: mean(self.bsld_sum),
            wait_mean: mean(self.wait_sum),
            queue_job_hours,
            queue_length_mean: if hours > 0.0 {
                queue_job_hours / hours
            } else {
                0.0
            },
            busy_machine_hours: self.busy_integral / 3600.0 / f64::from(self.processors),
            hours,
            utilization: if busy_hours > 0.0 {
                self.busy_integral / (f64::from(self.processors) * busy_hours * 3600.0)
            } else {
                0.0
            },
            submitted: self.load.submitted_measured,
            throughput_submitted_per_hour: if hours > 0.0 {
                self.load.submitted_measured as f64 / hours
            } else {
                0.0
            },
            sessions,
            session_length_mean,
            other: self.other.map(|m| (m.name, self.catalogue_measure(m, end))),
            decisions: self.decisions,
            start: self.t0,
            end,
        }
    }

    /// `measure` over the episode up to `end`, computed by the catalogue from a run's summaries
    /// of it ([`EpisodeSummary::other`]); NaN where undefined.
    fn catalogue_measure(&self, measure: &metrics::Measure, end: Time) -> f64 {
        let window = metrics::Window {
            start: self.t0,
            end,
        };
        let options = metrics::SummaryOptions {
            processors: self.processors,
            warmup: metrics::Warmup::Interval {
                start: self.t0,
                end,
                counted: metrics::Counted::Submitted,
            },
        };
        let Some(mut jobs) = metrics::SummaryBuilder::new(&options) else {
            return f64::NAN;
        };
        let mut closed = metrics::ClosedLoopBuilder::new(window);
        // Every job in submission order (the engine's ids): its final record if it has one,
        // else one from its start and known end, else (waiting) its submit time.
        for (id, info) in self.load.jobs.iter().enumerate() {
            let record = match (self.records.get(id), info.started) {
                (Some(r), _) => r.clone(),
                (None, Some((start, job_end))) => JobRecord {
                    job: metrics::Job {
                        job_id: id as i64,
                        user: info.user,
                        submit: info.submit,
                        processors: info.processors,
                        estimate: info.estimate,
                        runtime: info.runtime,
                        ..metrics::Job::default()
                    },
                    start,
                    end: job_end,
                    killed: job_end < start.saturating_add(info.runtime),
                    ..JobRecord::default()
                },
                (None, None) => {
                    jobs.add_waiting(info.submit);
                    closed.waiting_job(info.submit);
                    continue;
                }
            };
            jobs.add_measured(&record, info.measured);
            closed.job(&record);
        }
        let users = self.for_each_session(|start, session_jobs| {
            closed.session(&metrics::SessionRecord {
                user: 0,
                group: String::new(),
                session: 0,
                jobs: session_jobs,
                start,
                end,
                ended_by: metrics::SessionEnd::EndOfRun,
            });
        });
        let Some(summary) = jobs.finish(metrics::InputCounts::default()) else {
            return f64::NAN;
        };
        let closed = users.map(|_| closed.finish());
        measure.value(&metrics::MeasureInput {
            summary: &summary,
            closed_loop: closed.as_ref(),
            users: users.unwrap_or(0),
            policy_usage: None,
            slurm: None,
            // an episode is not metered for power: its power measures are undefined
            power: None,
        })
    }

    /// Calls `f(start, jobs)` for every session so far (ended, or open with the jobs it
    /// submitted so far); the number of users, `None` for a replay (no sessions).
    fn for_each_session(&self, mut f: impl FnMut(Time, u32)) -> Option<usize> {
        match &self.load.inner {
            Inner::Slice { .. } => None,
            Inner::Feedback(w) => {
                let sessions = w.sessions();
                for s in &sessions {
                    f(s.start, s.jobs);
                }
                let mut users: Vec<u32> = sessions.iter().map(|s| s.user).collect();
                users.sort_unstable();
                users.dedup();
                Some(users.len())
            }
            Inner::Site(w) => {
                let population = w.population();
                for s in population.sessions_so_far() {
                    f(s.start, s.jobs);
                }
                for u in 0..population.len() as u32 {
                    if let Some(start) = population.user_state(u).and_then(|s| s.session_start) {
                        f(
                            start,
                            population.user_state(u).map_or(0, |s| s.session_jobs),
                        );
                    }
                }
                Some(population.len())
            }
        }
    }

    /// The sessions that started in the measured time [t0, `end`), as the catalogue counts a
    /// run's sessions in its window (by their start, whether they ended or not; a session
    /// still open counts the jobs it submitted by `end`, as a run's last sessions end with
    /// the run): how many, and their mean jobs (NaN with none).
    fn sessions(&self, end: Time) -> (u64, f64) {
        let (mut n, mut jobs) = (0u64, 0u64);
        self.for_each_session(|start, session_jobs| {
            if start >= self.t0 && start < end {
                n += 1;
                jobs += u64::from(session_jobs);
            }
        });
        (
            n,
            if n > 0 {
                jobs as f64 / n as f64
            } else {
                f64::NAN
            },
        )
    }

    /// Time of day and of week at `t`, seconds.
    fn clock(&self, t: Time) -> (Time, Time) {
        let week = (self.clock.1 + t - self.clock.0).rem_euclid(7 * DAY);
        (week % DAY, week)
    }

    /// Writes the observation and the action mask (pick: K + 1 entries; score: K).
    fn observe(&mut self, window: usize, obs: &mut [f32], mask: &mut [bool]) {
        obs.fill(0.0);
        mask.fill(false);
        let now = self.now();
        let p_all = f64::from(self.processors);
        let free = self.cluster.free_processors();
        // The expected releases: (time, processors free by then), cumulative.
        let mut releases = std::mem::take(&mut self.releases);
        releases.clear();
        let mut available = free;
        for (t, p) in self.cluster.expected_releases() {
            available += p;
            releases.push((t, available));
        }
        let site = match &self.load.inner {
            Inner::Site(w) => Some(w.population()),
            _ => None,
        };
        let nf = JOB_FEATURES.len();
        let week = (1.0 / WEEK.ln_1p()) as f32;
        for (slot, &id) in self.load.waiting.iter().take(window).enumerate() {
            let Some(info) = self.load.jobs.get(id as usize) else {
                continue;
            };
            let f = &mut obs[slot * nf..(slot + 1) * nf];
            f[0] = 1.0;
            f[1] = log_scaled_f32((now - info.submit) as f32, week);
            f[2] = info.estimate_feature;
            f[3] = if self.predicts {
                let predicted = self.cluster.prediction(JobId(id)).unwrap_or(info.estimate);
                log_scaled(predicted as f64, WEEK)
            } else {
                info.estimate_feature
            };
            f[4] = (f64::from(info.processors) / p_all) as f32;
            let fits = self.fits(id);
            f[5] = if fits { 1.0 } else { 0.0 };
            if !fits {
                // The cumulative free processors only grow: the first release with enough.
                let k = releases.partition_point(|&(_, a)| a < info.processors);
                let at = releases.get(k).map_or(now + WEEK as Time, |&(t, _)| t);
                f[6] = log_scaled_f32((at - now) as f32, week);
            }
            if let Some(stats) = self.load.user_stats.get(info.user_index as usize) {
                f[7] = stats.bsld_feature;
                f[8] = (stats.waiting as f32 / 16.0).min(1.0);
            }
            if let Some(state) = site.and_then(|p| {
                u32::try_from(info.user - 1)
                    .ok()
                    .and_then(|u| p.user_state(u))
            }) {
                if let Some(start) = state.session_start {
                    f[9] = 1.0;
                    f[11] = log_scaled((now - start) as f64, DAY as f64);
                }
                if state.batch_jobs + state.batch_pending > 0 {
                    f[10] = (f64::from(state.batch_running + state.batch_pending)
                        / f64::from(state.batch_jobs + state.batch_pending))
                        as f32;
                }
                f[12] = log_scaled(f64::from(state.session_jobs), 100.0);
            }
            mask[slot] = true;
        }
        if self.mode == ActionMode::Pick && mask.len() > window {
            mask[window] = self.cluster.running() > 0 || self.load.next_arrival().is_some();
        }
        let m = &mut obs[window * nf..window * nf + MACHINE_FEATURES.len()];
        m[0] = (f64::from(free) / p_all) as f32;
        m[1] = (self.cluster.running() as f64 / p_all).min(1.0) as f32;
        let waiting = self.load.waiting.len();
        m[2] = log_scaled(waiting as f64, 10_000.0);
        m[3] = if waiting > window {
            ((waiting - window) as f64 / waiting as f64) as f32
        } else {
            0.0
        };
        for (k, h) in HORIZONS.iter().enumerate() {
            let released = releases.partition_point(|&(t, _)| t <= now + h);
            let by = if released == 0 {
                free
            } else {
                releases[released - 1].1
            };
            m[4 + k] = (f64::from(by) / p_all) as f32;
        }
        let (day, week) = self.clock(now);
        let tau = std::f64::consts::TAU;
        let d = tau * day as f64 / DAY as f64;
        let w = tau * week as f64 / (7 * DAY) as f64;
        m[10] = d.sin() as f32;
        m[11] = d.cos() as f32;
        m[12] = w.sin() as f32;
        m[13] = w.cos() as f32;
        if let Some(p) = site {
            let n = p.len().max(1) as f64;
            let (mut in_session, mut with_batch) = (0u32, 0u32);
            for u in 0..p.len() as u32 {
                if let Some(s) = p.user_state(u) {
                    in_session += u32::from(s.session_start.is_some());
                    with_batch += u32::from(s.batch_jobs + s.batch_pending > 0);
                }
            }
            m[14] = (f64::from(in_session) / n) as f32;
            m[15] = (f64::from(with_batch) / n) as f32;
        }
        self.releases = releases;
    }
}

/// An environment: a source of episodes, the settings, the random stream that draws episodes,
/// and the episode under way.
pub struct Env {
    source: Source,
    config: EnvConfig,
    rng: Pcg64,
    /// The site seed of the next episode when it is not drawn (after `reset(seed)`, or the
    /// site's own seed at first).
    next_site_seed: Option<u64>,
    /// The stream's last seeding (its seed and `next_site_seed` then) and the draws since:
    /// what [`EnvState`] records.
    origin: (u64, Option<u64>),
    draws: u64,
    start: Option<EpisodeStart>,
    episode: Option<Episode>,
    done: bool,
    baseline: Option<EpisodeSummary>,
}

/// Tries of a random start before giving up on an episode with no decision.
const START_TRIES: usize = 64;

impl Env {
    /// An environment over `source` with `config` (checked; errors name the keyword).
    pub fn new(source: Source, config: EnvConfig) -> Result<Env> {
        config.check(source.kind())?;
        if source.kind() == SourceKind::Site {
            if let Some(site) = &source.site {
                let horizon = i64::from(site.site.file.run.weeks) * users::cycle::WEEK;
                if i64::from(config.warm_days) * DAY >= horizon {
                    return Err(GymError::Invalid(format!(
                        "warm_days={}: the warm start must end before the run does (weeks={})",
                        config.warm_days, site.site.file.run.weeks
                    )));
                }
            }
        }
        Ok(Env {
            next_site_seed: source.site_seed(),
            origin: (0, source.site_seed()),
            draws: 0,
            source,
            config,
            rng: Pcg64::seed_from_u64(0),
            start: None,
            episode: None,
            done: true,
            baseline: None,
        })
    }

    /// Makes this env the `i`-th of a vector: its stream starts from seed `i` (not 0) and its
    /// first site episode uses the site's seed + `i`, so that N envs reset without a seed run
    /// N different episodes (as `reset(seed=S)` gives env i seed S + i).
    pub fn set_index(&mut self, i: u64) {
        self.rng = Pcg64::seed_from_u64(i);
        self.next_site_seed = self.source.site_seed().map(|s| s.wrapping_add(i));
        self.origin = (i, self.next_site_seed);
        self.draws = 0;
    }

    /// The settings.
    pub fn config(&self) -> &EnvConfig {
        &self.config
    }

    /// The source.
    pub fn source(&self) -> &Source {
        &self.source
    }

    /// Floats in an observation.
    pub fn observation_size(&self) -> usize {
        crate::observation_size(self.config.window)
    }

    /// Entries of the action mask: K + 1 in pick mode (the last is "wait"), K in score mode.
    pub fn mask_size(&self) -> usize {
        match self.config.mode {
            ActionMode::Pick => self.config.window + 1,
            ActionMode::Score => self.config.window,
        }
    }

    /// Whether the episode is over (or none started): `step` needs a `reset` first.
    pub fn needs_reset(&self) -> bool {
        self.done
    }

    /// Starts an episode. `seed` reseeds the environment's stream (and is a site's population
    /// seed exactly); `start` fixes a replay's first job (an index in the trace) or a feedback
    /// replay's t0 (seconds after the trace's first submit) instead of drawing it. Writes the
    /// first observation and mask. Returns whether the agent has a decision to make: a drawn
    /// start is drawn again (up to 64 times) while its episode has none; a fixed one is kept, and
    /// `false` says it ended without a decision (its records are there; `step` needs a reset).
    pub fn reset(
        &mut self,
        seed: Option<u64>,
        start: Option<i64>,
        obs: &mut [f32],
        mask: &mut [bool],
    ) -> Result<bool> {
        if let Some(seed) = seed {
            self.rng = Pcg64::seed_from_u64(seed);
            if self.source.kind() == SourceKind::Site {
                self.next_site_seed = Some(seed);
            }
            self.origin = (seed, self.next_site_seed);
            self.draws = 0;
        }
        self.check_buffers(obs, mask)?;
        // A fixed start, or a site's given seed, is kept even without a decision.
        let fixed = start.is_some() || (seed.is_some() && self.source.kind() == SourceKind::Site);
        let tries = if fixed { 1 } else { START_TRIES };
        for _ in 0..tries {
            let drawn = self.draw_start(start)?;
            let mut episode = self.build(drawn, None)?;
            let status = episode.run_until_decision()?;
            self.start = Some(drawn);
            self.baseline = None;
            // What happened between t0 and the first decision is the first step's reward.
            episode.observe(self.config.window, obs, mask);
            self.episode = Some(episode);
            self.done = status != Status::Decision;
            if !self.done {
                return Ok(true);
            }
        }
        if fixed {
            return Ok(false);
        }
        Err(GymError::Invalid(format!(
            "{START_TRIES} episodes in a row had no decision to make (every job could start at once): the trace or site is too lightly loaded for this window and episode length"
        )))
    }

    /// What a copy of this environment needs besides its settings and the actions since the
    /// last reset ([`Env::restore`]).
    pub fn state(&self) -> EnvState {
        EnvState {
            rng_seed: self.origin.0,
            site_seed: self.origin.1,
            draws: self.draws,
            start: self.start,
        }
    }

    /// Makes this environment (new, with the same source and settings as the one `state` came
    /// from) that one as it was right after its last reset: the random stream where it was,
    /// and the same episode up to its first decision, whose observation and mask are written.
    /// Stepping it with the same actions then gives the same steps. Returns whether the
    /// episode has a decision to make (false: it needs a reset, or none was started).
    pub fn restore(
        &mut self,
        state: &EnvState,
        obs: &mut [f32],
        mask: &mut [bool],
    ) -> Result<bool> {
        self.check_buffers(obs, mask)?;
        self.rng = Pcg64::seed_from_u64(state.rng_seed);
        self.next_site_seed = state.site_seed;
        self.origin = (state.rng_seed, state.site_seed);
        self.draws = 0;
        for _ in 0..state.draws {
            self.draw_start(None)?;
        }
        self.start = state.start;
        self.baseline = None;
        self.episode = None;
        self.done = true;
        let Some(start) = state.start else {
            return Ok(false);
        };
        let mut episode = self.build(start, None)?;
        let status = episode.run_until_decision()?;
        episode.observe(self.config.window, obs, mask);
        self.episode = Some(episode);
        self.done = status != Status::Decision;
        Ok(!self.done)
    }

    fn check_buffers(&self, obs: &[f32], mask: &[bool]) -> Result<()> {
        if obs.len() != self.observation_size() || mask.len() != self.mask_size() {
            return Err(GymError::Invalid(format!(
                "buffers of {} floats and {} mask entries, expected {} and {}",
                obs.len(),
                mask.len(),
                self.observation_size(),
                self.mask_size()
            )));
        }
        Ok(())
    }

    /// Draws (or takes) the next episode's start.
    fn draw_start(&mut self, start: Option<i64>) -> Result<EpisodeStart> {
        if start.is_none() {
            self.draws += 1;
        }
        let (a, b) = self.config.start_range;
        Ok(match self.source.kind() {
            SourceKind::Replay => {
                let n = self.source.jobs();
                let length = self.config.episode_jobs.unwrap_or(n).min(n);
                let start = match start {
                    Some(s) => usize::try_from(s).ok().filter(|&s| s < n).ok_or_else(|| {
                        GymError::Invalid(format!(
                            "options={{'start': {s}}}: the trace has jobs 0 to {}",
                            n - 1
                        ))
                    })?,
                    None if self.config.episode_jobs.is_none() => 0,
                    None => {
                        let lo = ((a * n as f64).floor() as usize).min(n - 1);
                        let hi = ((b * n as f64).floor() as usize)
                            .saturating_sub(length)
                            .min(n - 1)
                            .max(lo);
                        self.rng.random_range(lo..=hi)
                    }
                };
                EpisodeStart::Replay { start }
            }
            SourceKind::Feedback => {
                let (first, last) = self.source.trace_span();
                let span = i64::from(self.config.episode_days) * DAY;
                let t0 = match start {
                    Some(s) if (0..=last - first).contains(&s) => first + s,
                    Some(s) => {
                        return Err(GymError::Invalid(format!(
                            "options={{'start': {s}}}: a feedback episode starts 0 to {} s after the trace's first submit",
                            last - first
                        )));
                    }
                    None => {
                        let total = (last - first) as f64;
                        let lo = first + (a * total) as Time;
                        let hi = (first + (b * total) as Time - span).max(lo);
                        self.rng.random_range(lo..=hi)
                    }
                };
                EpisodeStart::Feedback { t0 }
            }
            SourceKind::Site => {
                if start.is_some() {
                    return Err(GymError::Invalid(
                        "options={'start': ...}: a site's episode starts after warm_days; choose its users with reset(seed=...)".into(),
                    ));
                }
                let seed = match self.next_site_seed.take() {
                    Some(seed) => seed,
                    None => self.rng.random(),
                };
                EpisodeStart::Site { seed }
            }
        })
    }

    /// Builds the episode `start` under the agent (`baseline` none) or under a built-in
    /// scheduler.
    fn build(&self, start: EpisodeStart, baseline: Option<&SchedulerSpec>) -> Result<Episode> {
        let spec = self.source.scheduler();
        let scheduler = match baseline {
            Some(b) => b.build(),
            None => Scheduler {
                predictor: spec.predictor().build,
                ..Scheduler::new(Box::new(ScoreOrder::default()), spec.build_rule())
            },
        };
        let processors = self.source.processors();
        let mut cluster = Cluster::new(processors, scheduler);
        if let Some((extra, spec)) = &self.source.pool {
            cluster = cluster
                .with_extra(*extra)
                .and_then(|c| c.with_pool(spec.clone()))
                .map_err(|e| GymError::Invalid(e.to_string()))?;
        }
        let predicts = cluster.scheduler().predictor != cluster::Predictor::UserEstimate;
        let cfg = &self.config;
        let (inner, measure, t0, end_time, measured_total, clock, stopped, busy_until) = match start
        {
            EpisodeStart::Replay { start } => {
                let trace = self.source.trace.clone().ok_or_else(no_trace)?;
                let n = trace.jobs.len();
                let end = match cfg.episode_jobs {
                    Some(l) => start.saturating_add(l).min(n),
                    None => n,
                };
                let from = start.saturating_sub(cfg.warm_jobs);
                let t0 = trace.jobs[start].submit;
                let measure = Measure::Ids((start - from) as u32, (end - from) as u32);
                let clock = match trace.calendar.and_then(|c| c.local(t0)) {
                    Some(l) => (
                        t0,
                        i64::from(l.weekday) * DAY + i64::from(l.minute_of_day) * 60,
                    ),
                    None => (0, 0),
                };
                let inner = Inner::Slice {
                    trace: trace.clone(),
                    next: from,
                    end,
                };
                let total = (end - start) as u64;
                let last_submit = trace.jobs[end - 1].submit;
                (
                    inner,
                    measure,
                    t0,
                    None,
                    Some(total),
                    clock,
                    Some(trace),
                    Some(last_submit),
                )
            }
            EpisodeStart::Feedback { t0 } => {
                let trace = self.source.trace.clone().ok_or_else(no_trace)?;
                let Some((sessions, independent, options)) = &trace.feedback else {
                    return Err(no_trace());
                };
                let span = i64::from(cfg.episode_days) * DAY;
                let from = t0 - i64::from(cfg.warm_days) * DAY;
                let within = |t: Time| (from..t0 + span).contains(&t);
                let sessions: Vec<_> = sessions
                    .iter()
                    .filter(|s| within(s.logged_start()))
                    .cloned()
                    .collect();
                let independent: Vec<_> = independent
                    .iter()
                    .filter(|j| within(j.submit))
                    .copied()
                    .collect();
                let replay = FeedbackReplay::new(sessions, independent, *options);
                let clock = match trace.calendar.and_then(|c| c.local(t0)) {
                    Some(l) => (
                        t0,
                        i64::from(l.weekday) * DAY + i64::from(l.minute_of_day) * 60,
                    ),
                    None => (0, 0),
                };
                (
                    Inner::Feedback(Box::new(replay)),
                    Measure::Times(t0, t0 + span),
                    t0,
                    Some(t0 + span),
                    None,
                    clock,
                    Some(trace),
                    None,
                )
            }
            EpisodeStart::Site { seed } => {
                let source = self.source.site.clone().ok_or_else(no_trace)?;
                let mut site = source.site.clone();
                site.file.run.seed = seed;
                let (population, _, _) = scenario::run::prepare_site(&site, &source.model, None)?;
                let horizon = i64::from(site.file.run.weeks) * users::cycle::WEEK;
                let t0 = i64::from(cfg.warm_days) * DAY;
                let calendar = site.calendar()?;
                let clock = (
                    0,
                    i64::from(calendar.weekday(0)) * DAY + calendar.second_of_day(0),
                );
                let end_time = match cfg.until {
                    Until::Horizon => Some(horizon),
                    Until::Drained => None,
                };
                (
                    Inner::Site(Box::new(ClosedLoop::new(population))),
                    Measure::Times(t0, horizon),
                    t0,
                    end_time,
                    None,
                    clock,
                    None,
                    None,
                )
            }
        };
        let mut stepper = Stepper::new(&cluster, &engine::SimOptions::default())?;
        // An agent's wait can leave jobs waiting on an idle machine for an arrival that
        // submits nothing (a user who wakes up and goes back to sleep): the agent is then asked
        // again at that instant. Baselines run the rule alone, exactly as the built-in runs.
        stepper.pass_when_idle(baseline.is_none());
        Ok(Episode {
            cluster,
            stepper: Some(stepper),
            load: Tracked::new(inner, measure),
            records: Vec::new(),
            stopped_at_limit: stopped,
            open: None,
            pending: None,
            t0,
            end_time,
            busy_until,
            measured_total,
            builtin: baseline.is_some(),
            mode: cfg.mode,
            predicts,
            processors,
            last_t: Time::MIN,
            held_waiting: 0,
            held_busy: 0,
            started_measured: 0,
            bsld_sum: 0.0,
            wait_sum: 0.0,
            queue_integral: 0.0,
            busy_integral: 0.0,
            step: StepSums::default(),
            other: match cfg.reward {
                RewardKind::Measure(_) => cfg.reward.measure(),
                _ => None,
            },
            decisions: 0,
            finished: false,
            ended_at: None,
            clock,
            releases: Vec::new(),
            scores: Vec::new(),
        })
    }

    fn episode(&mut self) -> Result<&mut Episode> {
        if self.done {
            return Err(GymError::ResetNeeded(if self.episode.is_some() {
                "step() after the episode ended: call reset()".into()
            } else {
                "step() before reset(): call reset() first".into()
            }));
        }
        self.episode.as_mut().ok_or_else(|| {
            GymError::ResetNeeded("step() before reset(): call reset() first".into())
        })
    }

    /// Checks a pick without taking it: `Ok(true)` when it is valid, `Ok(false)` when it is
    /// masked (an empty slot, or waiting with nothing to wait for), an error when it is outside
    /// the action space or the episode needs a reset.
    pub fn pick_is_valid(&mut self, action: i64) -> Result<bool> {
        let window = self.config.window;
        if self.config.mode != ActionMode::Pick {
            return Err(GymError::InvalidAction(
                "this environment takes scores (action_mode='score'), not a pick".into(),
            ));
        }
        let episode = self.episode()?;
        let Ok(a) = usize::try_from(action) else {
            return Err(GymError::InvalidAction(format!(
                "action {action} is outside 0..={window}"
            )));
        };
        if a > window {
            return Err(GymError::InvalidAction(format!(
                "action {action} is outside 0..={window}"
            )));
        }
        Ok(if a == window {
            episode.cluster.running() > 0 || episode.load.next_arrival().is_some()
        } else {
            a < episode.load.waiting.len()
        })
    }

    /// Checks scores without applying them: one per window slot, each finite and in [-1, 1].
    pub fn scores_are_valid(&mut self, scores: &[f32]) -> Result<()> {
        let window = self.config.window;
        if self.config.mode != ActionMode::Score {
            return Err(GymError::InvalidAction(
                "this environment takes a pick (action_mode='pick'), not scores".into(),
            ));
        }
        self.episode()?;
        if scores.len() != window {
            return Err(GymError::InvalidAction(format!(
                "{} scores for a window of {window}",
                scores.len()
            )));
        }
        if let Some(i) = scores.iter().position(|s| !s.is_finite()) {
            return Err(GymError::InvalidAction(format!(
                "score {i} is {}: scores must be finite numbers",
                scores[i]
            )));
        }
        // The action space is Box(-1, 1): a score outside it is refused, not clipped (a
        // policy whose scores leave the box learns from actions it did not take otherwise).
        if let Some(i) = scores.iter().position(|s| !(-1.0..=1.0).contains(s)) {
            return Err(GymError::InvalidAction(format!(
                "score {i} is {}: scores lie in [-1, 1] (the action space is Box(-1, 1))",
                scores[i]
            )));
        }
        Ok(())
    }

    /// Pick mode: takes `action` (slot i < K: start or reserve window job i; K: wait), goes on
    /// to the next decision, writes its observation and mask. Returns (reward, terminated,
    /// truncated, whether the action was masked and taken as a wait).
    pub fn step_pick(
        &mut self,
        action: i64,
        obs: &mut [f32],
        mask: &mut [bool],
    ) -> Result<(f64, bool, bool, bool)> {
        self.check_buffers(obs, mask)?;
        let valid = self.pick_is_valid(action)?;
        if !valid && self.config.invalid_action == InvalidActionRule::Raise {
            let window = self.config.window;
            return Err(GymError::InvalidAction(if action as usize == window {
                format!(
                    "wait (action {window}) with nothing running and nothing to come: start a job"
                )
            } else {
                format!("action {action} picks an empty window slot (see the action mask)")
            }));
        }
        let window = self.config.window;
        let episode = self.episode()?;
        episode.decisions += 1;
        let now = episode.open.unwrap_or_else(|| episode.now());
        let can_wait = episode.cluster.running() > 0 || episode.load.next_arrival().is_some();
        let a = action as usize;
        // A masked pick taken as a wait, when there is nothing to wait for, starts the oldest
        // job that fits instead (at a decision one does), so that the simulation goes on.
        let substitute = if !valid && !can_wait {
            episode.load.waiting.iter().position(|&id| episode.fits(id))
        } else {
            None
        };
        let pick = if valid && a < window {
            Some(a)
        } else {
            substitute
        };
        if let Some(a) = pick {
            let id = episode.load.waiting.iter().nth(a).copied().ok_or_else(|| {
                GymError::InvalidAction(format!("action {action} picks an empty window slot"))
            })?;
            if episode.fits(id) {
                episode.start_one(now, id)?;
            } else {
                episode.pending = Some(id);
                episode.pass(now, &[(id, f64::INFINITY)])?;
                episode.open = None;
            }
        } else {
            episode.open = None; // wait
        }
        let (reward, terminated, truncated) = self.finish_step(obs, mask)?;
        Ok((reward, terminated, truncated, !valid))
    }

    /// Score mode: orders the queue by `scores` (one per window slot, larger first; empty slots
    /// ignored), runs the rule's pass, goes on to the next decision, writes its observation and
    /// mask. Returns (reward, terminated, truncated).
    pub fn step_score(
        &mut self,
        scores: &[f32],
        obs: &mut [f32],
        mask: &mut [bool],
    ) -> Result<(f64, bool, bool)> {
        self.check_buffers(obs, mask)?;
        self.scores_are_valid(scores)?;
        let episode = self.episode()?;
        episode.decisions += 1;
        let now = episode.open.unwrap_or_else(|| episode.now());
        let mut pairs = std::mem::take(&mut episode.scores);
        pairs.clear();
        pairs.extend(
            episode
                .load
                .waiting
                .iter()
                .zip(scores)
                .map(|(&id, &s)| (id, f64::from(s))),
        );
        let passed = episode.pass(now, &pairs);
        episode.scores = pairs;
        passed?;
        episode.open = None;
        self.finish_step(obs, mask)
    }

    fn finish_step(&mut self, obs: &mut [f32], mask: &mut [bool]) -> Result<(f64, bool, bool)> {
        let (reward_mode, reward_kind, window) = (
            self.config.reward_mode,
            self.config.reward,
            self.config.window,
        );
        let episode = self.episode()?;
        let status = episode.run_until_decision()?;
        let over = status != Status::Decision;
        let scale = episode.measured_total.map_or(1.0, |n| n.max(1) as f64);
        let mut reward = match (reward_mode, reward_kind) {
            (RewardMode::Episodic, _) => 0.0,
            (RewardMode::Dense, RewardKind::Bsld) => -episode.step.bsld / scale,
            (RewardMode::Dense, RewardKind::Wait) => -episode.step.wait / scale,
            (RewardMode::Dense, RewardKind::Queue) => -episode.step.queue / 3600.0 / scale,
            (RewardMode::Dense, RewardKind::Utilization) => {
                episode.step.busy / (3600.0 * f64::from(episode.processors))
            }
            (RewardMode::Dense, RewardKind::Throughput) => episode.load.submitted_in_step as f64,
            (RewardMode::Dense, RewardKind::SessionLength | RewardKind::Measure(_)) => 0.0,
        };
        // The next step's reward starts from here.
        episode.step = StepSums::default();
        episode.load.submitted_in_step = 0;
        episode.observe(window, obs, mask);
        if over {
            self.done = true;
            if reward_mode == RewardMode::Episodic {
                let summary = self.summary().unwrap_or_default();
                let baseline = match self.config.relative_to.clone() {
                    Some(spec) => Some(self.baseline(&spec)?),
                    None => None,
                };
                reward = summary.reward(reward_kind, baseline.as_ref());
            }
        }
        Ok((
            reward,
            status == Status::Terminated,
            status == Status::Truncated,
        ))
    }

    /// The engine's ids of the waiting jobs, oldest first (the window is the first K): an id
    /// is the job's index in submission order within the episode (warm-up jobs included).
    pub fn waiting_jobs(&self) -> Vec<u32> {
        self.episode
            .as_ref()
            .map(|e| e.load.waiting.iter().copied().collect())
            .unwrap_or_default()
    }

    /// The episode's measures so far (final once it ended).
    pub fn summary(&self) -> Option<EpisodeSummary> {
        self.episode.as_ref().map(Episode::summary)
    }

    /// The same episode (same jobs and warm start, or the same users) under the built-in
    /// scheduler `spec`, measured the same way. Cached for the episode's `relative_to`.
    pub fn baseline(&mut self, spec: &SchedulerSpec) -> Result<EpisodeSummary> {
        let start = self
            .start
            .ok_or_else(|| GymError::ResetNeeded("baseline() before reset()".into()))?;
        if self.config.relative_to.as_ref() == Some(spec) {
            if let Some(b) = self.baseline {
                return Ok(b);
            }
        }
        let mut episode = self.build(start, Some(spec))?;
        while episode.run_until_decision()? == Status::Decision {}
        let summary = episode.summary();
        if self.config.relative_to.as_ref() == Some(spec) {
            self.baseline = Some(summary);
        }
        Ok(summary)
    }

    /// The records of the episode's jobs that are final (ended, and every earlier job too); with
    /// `drain`, the simulation first goes on with the rule's own passes until it ends, so that
    /// every job's record is final (then the episode is over). Warm-up jobs included, in
    /// submission order.
    pub fn records(&mut self, drain: bool) -> Result<Vec<JobRecord>> {
        let episode = self
            .episode
            .as_mut()
            .ok_or_else(|| GymError::ResetNeeded("records() before reset()".into()))?;
        if drain {
            episode.drain()?;
            self.done = true;
        }
        Ok(episode.records.clone())
    }

    /// A few lines on the state: time, machine, queue, the episode's measures.
    pub fn render(&self) -> String {
        let Some(e) = &self.episode else {
            return "no episode (call reset())\n".into();
        };
        let s = e.summary();
        let window: Vec<String> = e
            .load
            .waiting
            .iter()
            .take(8)
            .filter_map(|&id| e.load.jobs.get(id as usize).map(|j| (id, j)))
            .map(|(id, j)| format!("#{id}:{}p/{}s", j.processors, j.estimate))
            .collect();
        format!(
            "t={} s  free {}/{}  running {}  waiting {}  decisions {}\nqueue head: {}\nmeasured jobs started {}  mean bsld {:.3}  mean wait {:.3} h\n",
            e.now(),
            e.cluster.free_processors(),
            e.processors,
            e.cluster.running(),
            e.load.waiting.len(),
            s.decisions,
            window.join(" "),
            s.jobs,
            s.bounded_slowdown_mean,
            s.wait_mean / 3600.0
        )
    }
}

fn no_trace() -> GymError {
    GymError::Invalid("the source has no data for this kind of episode".into())
}
