//! The population: every user's state machine and the schedule of their next actions. The state
//! machine is the same for every kind of user; what differs (the window, the next batch, the
//! decision after a batch) is the user's [`UserBehaviour`].

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
use std::sync::Arc;

use metrics::{BatchDecision, BatchRecord, SessionEnd, SessionRecord};
use rand::Rng;
use rand_pcg::Pcg64;
use usermodel::Model;

use crate::config::{EstimateSpec, GroupParams};
use crate::cycle::{Calendar, DayPart, Days};
use crate::estimate::EstimateModel;
use crate::kinds::{AfterBatch, ClosingJob, Draws, UserBehaviour};
use crate::rng::{Purpose, Streams, stream};
use crate::submission::JobAttributes;
use crate::{Completion, Submission, Time};

/// A group of users sharing parameters and a model.
#[derive(Debug, Clone)]
pub struct Group {
    /// Its name.
    pub name: String,
    /// How many users.
    pub users: u32,
    /// Its checked parameters.
    pub params: GroupParams,
    /// Its distributions.
    pub model: Arc<Model>,
}

/// Why a population cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PopulationError {
    /// A model has jobs wider than the machine.
    #[error(
        "group {group:?}: its model has jobs of {size} processors, but the machine has {processors}; use a larger machine, a model without such jobs, or site.job_sizes = \"clip\" or \"scale\" (run --job-sizes)"
    )]
    TooWide {
        /// The group.
        group: String,
        /// The widest job in the model.
        size: i64,
        /// The machine.
        processors: u32,
    },
    /// A model distribution holds values a user cannot use.
    #[error(
        "group {group:?}: its model's {what} has a value of {value}, which is not allowed here"
    )]
    BadModel {
        /// The group.
        group: String,
        /// Which distribution.
        what: &'static str,
        /// The offending value.
        value: i64,
    },
    /// No users at all.
    #[error("the population has no users")]
    Empty,
    /// A group's estimate model cannot be built.
    #[error("group {group:?}: its estimate model: {problem}")]
    BadEstimates {
        /// The group.
        group: String,
        /// What is wrong.
        problem: String,
    },
}

/// What a user waits for when it wakes up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wake {
    /// Start a new batch (after a think time, a break, or sleep).
    NewBatch,
    /// Submit the next job of the current batch (batch gaps).
    NextInBatch,
}

/// The batch in flight.
#[derive(Debug, Default)]
struct Batch {
    /// Jobs submitted and not yet ended.
    running: u32,
    /// Jobs still to submit: (time, attributes).
    pending: VecDeque<(Time, JobAttributes)>,
    /// The latest end so far, and that job (the closing job).
    closing: Option<(Time, ClosingJob)>,
    /// The session's number and the batch's number in it (both from 1).
    session: u32,
    index: u32,
    /// Jobs submitted.
    jobs: u32,
}

#[derive(Debug)]
struct OpenSession {
    number: u32,
    jobs: u32,
    /// Batches started in it.
    batches: u32,
    start: Time,
}

#[derive(Debug)]
struct User {
    group: usize,
    /// The group id its jobs carry (its group's position from 1, or the account its group's
    /// `accounts` gave it).
    job_group: i64,
    /// What its kind makes it do.
    behaviour: Box<dyn UserBehaviour>,
    streams: Streams,
    bandwidth_rng: Pcg64,
    /// Its resource profile and the stream its jobs' resources are drawn from, if its group
    /// has a resource mix.
    resources: Option<(usize, Pcg64)>,
    batch: Option<Batch>,
    wake: Option<(Time, Wake)>,
    session: Option<OpenSession>,
    sessions_started: u32,
    /// The previous batch's closing job (id, end): the "preceding job" of the next batch (SWF 17).
    previous_closing: Option<(i64, Time)>,
}

/// A user's class and shift, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    /// Group index.
    pub group: usize,
    /// Users with Shmueli's activity cycle: day or night, weekdays or weekends, and the window's
    /// shift in seconds. `None` for other kinds (Schlagkamp users' windows are their working
    /// hours on the days drawn week by week).
    pub cycle: Option<(DayPart, Days, Time)>,
}

/// What a user is doing now, as an observer sees it (the Gymnasium environment's user
/// features): its session and the batch in flight.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UserState {
    /// The open session's start, seconds (`None`: the user is between sessions).
    pub session_start: Option<Time>,
    /// Jobs the user submitted in the open session so far.
    pub session_jobs: u32,
    /// Jobs of the batch in flight submitted so far (0: no batch in flight).
    pub batch_jobs: u32,
    /// Jobs of the batch in flight submitted and not yet ended.
    pub batch_running: u32,
    /// Jobs of the batch in flight still to be submitted.
    pub batch_pending: u32,
}

/// All simulated users of a run. The engine asks when the next submission is due
/// ([`Population::next_submission`]), collects submissions ([`Population::take_submissions`]) and
/// reports ends ([`Population::job_ended`]); users stop starting batches at the horizon.
#[derive(Debug)]
pub struct Population {
    groups: Vec<Group>,
    /// Each group's estimate model (`None`: the fitted one).
    estimate_models: Vec<Option<EstimateModel>>,
    processors: u32,
    users: Vec<User>,
    wakes: BinaryHeap<Reverse<(Time, u32)>>,
    horizon: Time,
    next_job_id: i64,
    sessions: Vec<SessionRecord>,
    batches: Vec<BatchRecord>,
}

impl Population {
    /// Builds the users of `groups` (numbered in group order) for a run with `seed` that starts at
    /// `calendar` and lasts until `horizon` seconds, on a machine of `processors` processors.
    pub fn new(
        groups: Vec<Group>,
        seed: u64,
        calendar: Calendar,
        horizon: Time,
        processors: u32,
    ) -> Result<Population, PopulationError> {
        let mut estimate_models = Vec::with_capacity(groups.len());
        for (index, g) in groups.iter().enumerate() {
            g.params.kind.check_model(g, processors)?;
            estimate_models.push(estimate_model(g, seed, index as u32)?);
        }
        let mut users = Vec::new();
        let mut wakes = BinaryHeap::new();
        for (group_index, group) in groups.iter().enumerate() {
            for place in 0..group.users as usize {
                let index = users.len() as u32;
                let job_group = match &group.params.job_groups {
                    Some(ids) => ids.get(place).copied().unwrap_or(group_index as i64 + 1),
                    None => group_index as i64 + 1,
                };
                let profile = stream(seed, index, Purpose::Profile);
                let mut behaviour = group.params.kind.user(calendar, profile);
                let first = behaviour.next_opening(0);
                let wake = (first < horizon).then_some((first, Wake::NewBatch));
                if let Some((t, _)) = wake {
                    wakes.push(Reverse((t, index)));
                }
                users.push(User {
                    group: group_index,
                    job_group,
                    behaviour,
                    streams: Streams::new(seed, index),
                    bandwidth_rng: stream(seed, index, Purpose::Bandwidth),
                    resources: group.params.resources.as_ref().map(|mix| {
                        let mut rng = stream(seed, index, Purpose::Resources);
                        (mix.profile_of(rng.random()), rng)
                    }),
                    batch: None,
                    wake,
                    session: None,
                    sessions_started: 0,
                    previous_closing: None,
                });
            }
        }
        if users.is_empty() {
            return Err(PopulationError::Empty);
        }
        Ok(Population {
            groups,
            estimate_models,
            processors,
            users,
            wakes,
            horizon,
            next_job_id: 1,
            sessions: Vec::new(),
            batches: Vec::new(),
        })
    }

    /// Number of users.
    pub fn len(&self) -> usize {
        self.users.len()
    }

    /// Whether there are no users (never true for a built population).
    pub fn is_empty(&self) -> bool {
        self.users.is_empty()
    }

    /// What user `user` (an index, from 0) is doing now: its open session and the batch in
    /// flight. `None` for an unknown user.
    pub fn user_state(&self, user: u32) -> Option<UserState> {
        let u = self.users.get(user as usize)?;
        let (batch_jobs, batch_running, batch_pending) = u
            .batch
            .as_ref()
            .map_or((0, 0, 0), |b| (b.jobs, b.running, b.pending.len() as u32));
        Some(UserState {
            session_start: u.session.as_ref().map(|s| s.start),
            session_jobs: u.session.as_ref().map_or(0, |s| s.jobs),
            batch_jobs,
            batch_running,
            batch_pending,
        })
    }

    /// The sessions that ended and have not been drained ([`Population::drain_records`]): all of
    /// them, for a run that never drains.
    pub fn sessions_so_far(&self) -> &[SessionRecord] {
        &self.sessions
    }

    /// The index of the group of user `user` (an index), if there is such a user.
    pub fn group_of(&self, user: u32) -> Option<usize> {
        self.users.get(user as usize).map(|u| u.group)
    }

    /// The groups.
    pub fn groups(&self) -> &[Group] {
        &self.groups
    }

    /// Each user's class and shift.
    pub fn profiles(&self) -> Vec<Profile> {
        self.users
            .iter()
            .map(|u| Profile {
                group: u.group,
                cycle: u.behaviour.cycle(),
            })
            .collect()
    }

    /// The end of the simulated period, seconds.
    pub fn horizon(&self) -> Time {
        self.horizon
    }

    /// When the next submission is due, if any user will submit again.
    pub fn next_submission(&self) -> Option<Time> {
        self.wakes.peek().map(|Reverse((t, _))| *t)
    }

    /// Appends every job submitted at `now` to `out`: users whose wake-up is due start a batch (or
    /// find their window closed and go to sleep) or submit the next job of their batch.
    pub fn take_submissions(&mut self, now: Time, out: &mut Vec<Submission>) {
        while let Some(&Reverse((t, index))) = self.wakes.peek() {
            if t != now {
                break;
            }
            self.wakes.pop();
            let user = index as usize;
            match self.users[user].wake.take() {
                Some((due, Wake::NewBatch)) if due == now => self.start_batch(user, now, out),
                Some((due, Wake::NextInBatch)) if due == now => self.submit_pending(user, now, out),
                other => self.users[user].wake = other, // not this wake-up (never expected)
            }
        }
    }

    /// A job ended: the owner's batch may be complete, and the owner decides what to do next.
    /// A job a node failure lost ([`Completion::lost`]) is resubmitted by its owner as part of
    /// the same batch, after its kind's think time ([`UserBehaviour::resubmit_delay`]), or when
    /// its window opens if it is closed; not if that falls at or after the horizon.
    pub fn job_ended(&mut self, done: &Completion) {
        let user = done.user as usize;
        if let Some(attributes) = done.lost
            && self.resubmit(user, done, attributes)
        {
            return;
        }
        let Some(batch) = self.users.get_mut(user).and_then(|u| u.batch.as_mut()) else {
            return;
        };
        batch.running = batch.running.saturating_sub(1);
        if batch.closing.is_none_or(|(end, _)| done.end >= end) {
            let job = ClosingJob {
                job_id: done.job_id,
                wait: done.start - done.submit,
                runtime: done.end - done.start,
            };
            batch.closing = Some((done.end, job));
        }
        if batch.running == 0 && batch.pending.is_empty() {
            if let Some(batch) = self.users[user].batch.take() {
                if let Some((end, job)) = batch.closing {
                    self.users[user].previous_closing = Some((job.job_id, end));
                    self.batch_complete(user, end, &batch, job);
                }
            }
        }
    }

    /// Puts a lost job back among its batch's jobs to submit (see [`Population::job_ended`]);
    /// false when it is not resubmitted (no batch open, or due at or after the horizon).
    fn resubmit(&mut self, user: usize, done: &Completion, attributes: JobAttributes) -> bool {
        let horizon = self.horizon;
        let Some(u) = self.users.get_mut(user) else {
            return false;
        };
        if u.batch.is_none() {
            return false;
        }
        let job = ClosingJob {
            job_id: done.job_id,
            wait: done.start - done.submit,
            runtime: done.end - done.start,
        };
        let at = if u.behaviour.is_active(done.end) {
            let group = u.group;
            let model = Arc::clone(&self.groups[group].model);
            let mut draws = Draws {
                model: &model,
                estimates: self.estimate_models[group].as_ref(),
                processors: self.processors,
                streams: &mut u.streams,
            };
            done.end
                .saturating_add(u.behaviour.resubmit_delay(&job, &mut draws).max(0))
        } else {
            u.behaviour.next_opening(done.end)
        };
        if at >= horizon {
            return false;
        }
        let Some(batch) = u.batch.as_mut() else {
            return false;
        };
        batch.running = batch.running.saturating_sub(1);
        let place = batch.pending.partition_point(|&(t, _)| t <= at);
        batch.pending.insert(place, (at, attributes));
        // wake for it unless an earlier wake-up of the batch comes first
        if u.wake.is_none_or(|(due, _)| due > at) {
            u.wake = Some((at, Wake::NextInBatch));
            self.wakes.push(Reverse((at, user as u32)));
        }
        true
    }

    /// Moves the sessions that ended and the batches completed since the last call onto `sessions`
    /// and `batches`, in the order they ended (so each user's come in session and batch order),
    /// so a long run need not keep them.
    pub fn drain_records(
        &mut self,
        sessions: &mut Vec<SessionRecord>,
        batches: &mut Vec<BatchRecord>,
    ) {
        sessions.append(&mut self.sessions);
        batches.append(&mut self.batches);
    }

    /// Takes the record of every batch completed so far (one per batch, with the decision it
    /// led to), ordered by user, session and batch number. Call before [`Population::finish`].
    pub fn take_batches(&mut self) -> Vec<BatchRecord> {
        let mut batches = std::mem::take(&mut self.batches);
        batches.sort_by_key(|b| (b.user, b.session, b.batch));
        batches
    }

    /// Ends the run: sessions still open end at the horizon. Returns every session, ordered by
    /// user and session number.
    pub fn finish(mut self) -> Vec<SessionRecord> {
        let horizon = self.horizon;
        for user in 0..self.users.len() {
            self.close_session(user, horizon, SessionEnd::EndOfRun);
        }
        self.sessions.sort_by_key(|s| (s.user, s.session));
        self.sessions
    }

    /// Session dynamics after `job`, the last job of `batch`, ended at `now`: the activity
    /// window comes first (paper 000, section III-B.3), then the user's kind decides (Shmueli's
    /// continue trial, III-B.1; Schlagkamp's think time). Records the batch and the decision:
    /// `end` at or after the horizon (no more batches), `cycle` when the window had closed (no
    /// trial in either case), else the kind's `continue` or `break`.
    fn batch_complete(&mut self, user: usize, now: Time, batch: &Batch, job: ClosingJob) {
        self.users[user].behaviour.batch_ended(&job);
        let group = self.users[user].group;
        let mut record = BatchRecord {
            user: user as u32 + 1,
            group: self.groups[group].name.clone(),
            session: batch.session,
            batch: batch.index,
            jobs: batch.jobs,
            job_id: job.job_id,
            end: now,
            wait: job.wait,
            runtime: job.runtime,
            response: job.response(),
            continue_probability: None,
            decision: BatchDecision::End,
        };
        if now >= self.horizon {
            self.batches.push(record);
            return;
        }
        if self.sleep_if_off_hours(user, now) {
            record.decision = BatchDecision::Cycle;
            self.batches.push(record);
            return;
        }
        let model = Arc::clone(&self.groups[group].model);
        let u = &mut self.users[user];
        let mut draws = Draws {
            model: &model,
            estimates: self.estimate_models[group].as_ref(),
            processors: self.processors,
            streams: &mut u.streams,
        };
        let decision = u.behaviour.batch_complete(&job, &mut draws);
        record.continue_probability = decision.continue_probability;
        match decision.next {
            AfterBatch::Continue { think } => {
                record.decision = BatchDecision::Continue;
                self.schedule(user, now.saturating_add(think), Wake::NewBatch);
            }
            AfterBatch::Break { pause } => {
                record.decision = BatchDecision::Break;
                self.close_session(user, now, SessionEnd::Abort);
                self.schedule(user, now.saturating_add(pause), Wake::NewBatch);
            }
        }
        self.batches.push(record);
    }

    /// A user wakes to start a batch at `now`: asleep if outside its window, else it opens a
    /// session if needed, its kind draws the batch, and the jobs due now are submitted.
    fn start_batch(&mut self, user: usize, now: Time, out: &mut Vec<Submission>) {
        if self.sleep_if_off_hours(user, now) {
            return;
        }
        let group = self.users[user].group;
        let model = Arc::clone(&self.groups[group].model);
        let u = &mut self.users[user];
        let session = u.session.get_or_insert_with(|| {
            u.sessions_started += 1;
            OpenSession {
                number: u.sessions_started,
                jobs: 0,
                batches: 0,
                start: now,
            }
        });
        session.batches += 1;
        let mut batch = Batch {
            session: session.number,
            index: session.batches,
            ..Batch::default()
        };
        let mut draws = Draws {
            model: &model,
            estimates: self.estimate_models[group].as_ref(),
            processors: self.processors,
            streams: &mut u.streams,
        };
        u.behaviour.next_batch(now, &mut draws, &mut batch.pending);
        u.batch = Some(batch);
        self.submit_pending(user, now, out);
    }

    /// Submits the jobs of the user's batch due at `now`, then waits for the next one.
    fn submit_pending(&mut self, user: usize, now: Time, out: &mut Vec<Submission>) {
        let horizon = self.horizon;
        let mix = self.groups[self.users[user].group].params.bandwidth;
        let resources = self.groups[self.users[user].group].params.resources.clone();
        let u = &mut self.users[user];
        let Some(batch) = u.batch.as_mut() else {
            return;
        };
        while let Some(&(at, attributes)) = batch.pending.front() {
            if at > now {
                break;
            }
            batch.pending.pop_front();
            batch.running += 1;
            batch.jobs += 1;
            if let Some(session) = u.session.as_mut() {
                session.jobs += 1;
            }
            out.push(Submission {
                job_id: self.next_job_id,
                user: user as u32,
                group: u.job_group,
                session: u.session.as_ref().map_or(0, |s| s.number),
                batch: batch.index,
                submit: now,
                processors: attributes.processors,
                runtime: attributes.runtime,
                estimate: attributes.estimate,
                preceding: u.previous_closing.map(|(job, end)| (job, now - end)),
                bandwidth: mix.map_or(0, |m| m.demand(u.bandwidth_rng.random())),
                request: match (&resources, u.resources.as_mut()) {
                    (Some(mix), Some((profile, rng))) => {
                        mix.request(*profile, attributes.processors, rng)
                    }
                    _ => crate::resources::Request::default(),
                },
            });
            self.next_job_id += 1;
        }
        match batch.pending.front() {
            // The run ends before the rest of the batch is due: drop it.
            Some(&(at, _)) if at >= horizon => batch.pending.clear(),
            Some(&(at, _)) => {
                u.wake = Some((at, Wake::NextInBatch));
                self.wakes.push(Reverse((at, user as u32)));
            }
            None => {}
        }
    }

    /// The activity window (section III-B.3 for Shmueli's users): outside its window at `now`,
    /// the user's session ends and it sleeps until the window opens again. Returns whether it
    /// went to sleep.
    fn sleep_if_off_hours(&mut self, user: usize, now: Time) -> bool {
        let behaviour = &mut self.users[user].behaviour;
        if behaviour.is_active(now) {
            return false;
        }
        let opening = behaviour.next_opening(now);
        self.close_session(user, now, SessionEnd::Cycle);
        self.schedule(user, opening, Wake::NewBatch);
        true
    }

    fn schedule(&mut self, user: usize, at: Time, wake: Wake) {
        if at < self.horizon {
            self.users[user].wake = Some((at, wake));
            self.wakes.push(Reverse((at, user as u32)));
        }
    }

    fn close_session(&mut self, user: usize, at: Time, why: SessionEnd) {
        if let Some(s) = self.users[user].session.take() {
            self.sessions.push(SessionRecord {
                user: user as u32 + 1,
                group: self.groups[self.users[user].group].name.clone(),
                session: s.number,
                jobs: s.jobs,
                start: s.start,
                end: at.max(s.start),
                ended_by: why,
            });
        }
    }
}

/// A group's estimate model; the modal model's modes are drawn from the group's own stream.
fn estimate_model(
    group: &Group,
    seed: u64,
    index: u32,
) -> Result<Option<EstimateModel>, PopulationError> {
    let spec = match &group.params.estimates {
        EstimateSpec::Fitted => return Ok(None),
        EstimateSpec::Model(spec) => spec,
    };
    let mut rng = stream(seed, index, Purpose::EstimateModes);
    spec.build(&mut rng)
        .map(Some)
        .map_err(|e| PopulationError::BadEstimates {
            group: group.name.clone(),
            problem: e.to_string(),
        })
}
