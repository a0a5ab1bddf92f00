//! The structure replay with feedback keeps (`sitesim replay --feedback`): each user's sessions
//! and batches, found by the trace analysis of the user models (`fit::sessions::split`: a job's
//! think time is its submit time minus the latest end of its user's earlier jobs; negative: same
//! batch; up to 20 minutes: next batch; longer: next session; Shmueli & Feitelson 2009, section
//! III-A), turned into the engine's [`FeedbackSession`]s. The rules of the replay itself are in
//! `engine::FeedbackReplay` (Zakay & Feitelson, MASCOTS 2014).
//!
//! SWF fields 17 and 18 (preceding job, think time) are not read: none of the archive traces
//! this tool is used with fills them (all hold -1), and a single preceding job names no sessions,
//! so it could not give the session starts, the session records and the throughput window that
//! the analysis gives. One definition of sessions serves `fit`, `validate` and replay with
//! feedback.

use std::collections::HashMap;

use config::Result;
use engine::{FeedbackJob, FeedbackSession};
use fit::Job;
use fit::sessions::{SessionRules, split};

/// The logged wait (SWF field 3) and user (field 12) of every job of a trace, by (job number,
/// submit time), noted as the trace is read ([`Logged::note`]). A key seen twice with
/// different values maps to `None`: such a job cannot be placed.
#[derive(Debug, Clone, Default)]
pub struct Logged(HashMap<(i64, i64), Option<(i64, i64)>>);

impl Logged {
    /// Notes one record of the trace.
    pub(crate) fn note(&mut self, r: &swf::Record) {
        let value = Some((r.wait_time, r.user_id));
        self.0
            .entry((r.job_number, r.submit_time))
            .and_modify(|v: &mut Option<(i64, i64)>| {
                if *v != value {
                    *v = None;
                }
            })
            .or_insert(value);
    }
}

/// The sessions of the jobs to replay (`jobs`, read from `trace`, estimates and demands already
/// set), and the jobs outside them (unknown user or wait), submitted at their logged times.
pub(crate) fn sessions(
    waits: &Logged,
    jobs: &[engine::Job],
) -> Result<(Vec<FeedbackSession>, Vec<engine::Job>)> {
    let waits = &waits.0;
    let mut analysed: Vec<Job> = Vec::with_capacity(jobs.len());
    let mut specs: Vec<engine::Job> = Vec::with_capacity(jobs.len());
    let mut independent = Vec::new();
    for spec in jobs {
        match waits.get(&(spec.job_id, spec.submit)).copied().flatten() {
            Some((wait, user)) if wait >= 0 && user >= 0 => {
                analysed.push(Job {
                    number: spec.job_id,
                    user,
                    submit: spec.submit,
                    wait,
                    runtime: spec.runtime,
                    processors: i64::from(spec.processors),
                    estimate: Some(spec.estimate),
                });
                specs.push(*spec);
            }
            _ => independent.push(*spec),
        }
    }
    let mut sessions = Vec::new();
    for user in split(&analysed, &SessionRules::default()) {
        for session in user.sessions {
            let start = session.start(&analysed);
            let mut previous_end = None;
            let batches = session
                .batches
                .iter()
                .map(|batch| {
                    let from = previous_end.unwrap_or(start);
                    previous_end = Some(batch.end);
                    batch
                        .jobs
                        .iter()
                        .map(|&i| FeedbackJob {
                            spec: specs[i],
                            delay: (analysed[i].submit - from).max(0),
                        })
                        .collect()
                })
                .collect();
            sessions.push(FeedbackSession {
                user: user.user,
                batches,
            });
        }
    }
    Ok((sessions, independent))
}
