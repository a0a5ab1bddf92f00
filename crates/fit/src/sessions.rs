//! Sessions, batches and think times of one trace (Shmueli & Feitelson 2009, section III; the
//! definitions of the fit issue).
//!
//! Per user, jobs in submit order. A job's *think time* is its submit time minus the latest end
//! (submit + wait + runtime) of the user's earlier jobs. A negative think time (submitted before
//! the earlier work ended) puts the job in the current *batch*. A think time from 0 up to the
//! session threshold (20 min) starts a new batch in the same *session*; a longer one starts a new
//! session. The job whose end was the latest end *closes* the batch; whether the next think time
//! is under the threshold is the observation behind the continue probability (Fig. 3): every
//! batch-closing job followed by another job of its user counts, however long the pause. Think
//! times above the longest break (8 h) are dropped from the break distribution only, as in the
//! paper ("we limited the breaks to a maximum of eight hours by filtering-out longer think
//! times"; section III-B.1). Leaving them out of the continue table as well would raise the
//! fitted curve (for the five traces: a = 0.85, b = 0.016 instead of a = 0.81, b = 0.033).

use crate::trace::{Job, TraceJobs};

/// Thresholds of the analysis, in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct SessionRules {
    /// Think times up to this continue the session (the paper's 20 min).
    pub session_threshold: i64,
    /// Breaks longer than this are dropped (the paper's 8 h).
    pub max_break: i64,
}

/// Where a job's think time puts it: the one definition of batches and sessions, shared by
/// [`analyze`] (the model's samples) and [`split`] (the structure replay with feedback keeps).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Negative think time: submitted while the user's earlier work still ran.
    SameBatch,
    /// Think time from 0 up to the session threshold: a new batch of the same session.
    NewBatch,
    /// A longer think time (a break): a new session.
    NewSession,
}

impl SessionRules {
    /// Where a think time of `think` seconds puts a job.
    pub fn step(&self, think: i64) -> Step {
        if think < 0 {
            Step::SameBatch
        } else if think <= self.session_threshold {
            Step::NewBatch
        } else {
            Step::NewSession
        }
    }
}

impl Default for SessionRules {
    fn default() -> Self {
        SessionRules {
            session_threshold: 20 * 60,
            max_break: 8 * 3600,
        }
    }
}

/// Minutes since midnight where the paper's daytime starts (07:30) and ends (17:30).
pub const DAY_START_MINUTE: u32 = 7 * 60 + 30;
/// See [`DAY_START_MINUTE`].
pub const DAY_END_MINUTE: u32 = 17 * 60 + 30;

/// A batch-closing job and what its owner did next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closing {
    /// Its response time in seconds (wait + runtime).
    pub response: i64,
    /// True when the next think time was within the session threshold.
    pub continued: bool,
}

/// Everything one trace contributes to the models: raw samples, not yet weighted.
#[derive(Debug, Clone, Default)]
pub struct TraceSamples {
    /// Usable jobs.
    pub jobs: u64,
    /// Distinct users among them.
    pub users: u64,
    /// Every think time (seconds), negative ones included (Fig. 2).
    pub think_all: Vec<i64>,
    /// Think times in [0, threshold] (Fig. 4a).
    pub think_short: Vec<i64>,
    /// Think times in (threshold, max break] (Fig. 4b).
    pub breaks: Vec<i64>,
    /// Think times above the max break (dropped).
    pub long_breaks: u64,
    /// Negative think times.
    pub negative_think: u64,
    /// Batch-closing jobs followed by another job of their user (Fig. 3).
    pub closings: Vec<Closing>,
    /// Job sizes in processors (Fig. 5a).
    pub sizes: Vec<i64>,
    /// Job runtimes in seconds (Fig. 5b).
    pub runtimes: Vec<i64>,
    /// Lengths of runs of equal size by one user (Fig. 6a).
    pub repetitions: Vec<i64>,
    /// Jobs per batch (Fig. 6b).
    pub batch_widths: Vec<i64>,
    /// Seconds between consecutive submissions inside a batch.
    pub batch_gaps: Vec<i64>,
    /// Jobs per session.
    pub session_lengths: Vec<i64>,
    /// (runtime, estimate) of jobs with an estimate, in seconds.
    pub estimates: Vec<(i64, i64)>,
    /// Submissions per local hour of day.
    pub hourly: [u64; 24],
    /// Submissions per local day of week, Monday first.
    pub weekly: [u64; 7],
    /// Submissions with a local time (all, when the trace has a calendar).
    pub located: u64,
    /// Submissions in the daytime window 07:30-17:30.
    pub daytime: u64,
    /// Submissions Monday to Friday.
    pub weekdays: u64,
}

/// Analyzes one trace.
pub fn analyze(trace: &TraceJobs, rules: &SessionRules) -> TraceSamples {
    let mut s = TraceSamples {
        jobs: trace.jobs.len() as u64,
        ..TraceSamples::default()
    };
    for job in &trace.jobs {
        s.sizes.push(job.processors);
        s.runtimes.push(job.runtime);
        if let Some(estimate) = job.estimate {
            s.estimates.push((job.runtime, estimate));
        }
        if let Some(local) = trace.calendar.and_then(|c| c.local(job.submit)) {
            s.located += 1;
            s.hourly[(local.minute_of_day / 60) as usize] += 1;
            s.weekly[local.weekday as usize] += 1;
            s.daytime +=
                u64::from((DAY_START_MINUTE..DAY_END_MINUTE).contains(&local.minute_of_day));
            s.weekdays += u64::from(local.weekday < 5);
        }
    }

    let mut order: Vec<&Job> = trace.jobs.iter().collect();
    order.sort_by_key(|j| (j.user, j.submit, j.number));
    for user_jobs in order.chunk_by(|a, b| a.user == b.user) {
        s.users += 1;
        walk_user(user_jobs, rules, &mut s);
    }
    s
}

/// One user's jobs in submit order.
fn walk_user(jobs: &[&Job], rules: &SessionRules, s: &mut TraceSamples) {
    let first = jobs[0];
    let mut latest_end = first.end();
    let mut closing_response = first.response();
    let mut batch_width = 1;
    let mut session_length = 1;
    let mut run_length = 1;
    for pair in jobs.windows(2) {
        let (previous, job) = (pair[0], pair[1]);
        if job.processors == previous.processors {
            run_length += 1;
        } else {
            s.repetitions.push(run_length);
            run_length = 1;
        }

        let think = job.submit - latest_end;
        s.think_all.push(think);
        let step = rules.step(think);
        if step == Step::SameBatch {
            // Same batch: submitted while earlier work was still running.
            s.negative_think += 1;
            s.batch_gaps.push(job.submit - previous.submit);
            batch_width += 1;
            session_length += 1;
        } else {
            s.batch_widths.push(batch_width);
            batch_width = 1;
            if step == Step::NewBatch {
                s.think_short.push(think);
                s.closings.push(Closing {
                    response: closing_response,
                    continued: true,
                });
                session_length += 1;
            } else {
                s.closings.push(Closing {
                    response: closing_response,
                    continued: false,
                });
                if think <= rules.max_break {
                    s.breaks.push(think);
                } else {
                    s.long_breaks += 1;
                }
                s.session_lengths.push(session_length);
                session_length = 1;
            }
        }
        if job.end() >= latest_end {
            latest_end = job.end();
            closing_response = job.response();
        }
    }
    s.repetitions.push(run_length);
    s.batch_widths.push(batch_width);
    s.session_lengths.push(session_length);
}

/// One batch of a user's session: jobs submitted while the user's earlier work still ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Batch {
    /// Its jobs, as indices into the slice given to [`split`], in submit order.
    pub jobs: Vec<usize>,
    /// The latest logged end (submit + wait + runtime) of its jobs, seconds: the end of all the
    /// user's work so far (every earlier batch ended before this one began).
    pub end: i64,
    /// The job whose end is `end` (the last of them in submit order on a tie): the batch's
    /// closing job, whose response the user reacts to.
    pub closing: usize,
}

/// One session of one user: batches separated by think times up to the session threshold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Its batches, in order; never empty.
    pub batches: Vec<Batch>,
}

impl Session {
    /// The logged submit time of its first job, seconds.
    pub fn start(&self, jobs: &[Job]) -> i64 {
        jobs[self.batches[0].jobs[0]].submit
    }

    /// The latest logged end of its jobs, seconds (its last batch's end).
    pub fn end(&self) -> i64 {
        self.batches.last().map_or(i64::MIN, |b| b.end)
    }
}

/// One user's jobs split into sessions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserSessions {
    /// The user (SWF field 12).
    pub user: i64,
    /// Its sessions in order; never empty.
    pub sessions: Vec<Session>,
}

/// Splits every user's jobs into sessions and batches by the rules of [`analyze`] (per user,
/// jobs in (submit, job number) order; a job's think time is its submit time minus the latest
/// end of the user's earlier jobs; [`SessionRules::step`] decides). Users come in increasing
/// order. Replay with feedback keeps this structure (Zakay & Feitelson, MASCOTS 2014).
pub fn split(jobs: &[Job], rules: &SessionRules) -> Vec<UserSessions> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&i| (jobs[i].user, jobs[i].submit, jobs[i].number, i));
    let mut users = Vec::new();
    for user_jobs in order.chunk_by(|&a, &b| jobs[a].user == jobs[b].user) {
        let mut sessions: Vec<Session> = Vec::new();
        for &i in user_jobs {
            let job = &jobs[i];
            let step = match sessions.last() {
                None => Step::NewSession,
                Some(session) => rules.step(job.submit - session.end()),
            };
            let batch = match (step, sessions.last_mut()) {
                (Step::SameBatch, Some(session)) => session.batches.last_mut(),
                _ => None,
            };
            match batch {
                Some(batch) => {
                    batch.jobs.push(i);
                    if job.end() >= batch.end {
                        batch.end = job.end();
                        batch.closing = i;
                    }
                }
                None => {
                    let batch = Batch {
                        jobs: vec![i],
                        end: job.end(),
                        closing: i,
                    };
                    match (step, sessions.last_mut()) {
                        (Step::NewBatch, Some(session)) => session.batches.push(batch),
                        _ => sessions.push(Session {
                            batches: vec![batch],
                        }),
                    }
                }
            }
        }
        users.push(UserSessions {
            user: jobs[user_jobs[0]].user,
            sessions,
        });
    }
    users
}
