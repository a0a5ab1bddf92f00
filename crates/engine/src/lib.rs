//! The discrete-event loop, the only place where simulated time advances.
//!
//! [`simulate`] drives a [`cluster::Cluster`] with jobs from a [`Workload`]. The workload is
//! where jobs come from: a trace in open-loop replay ([`Replay`]), a trace's sessions replayed
//! with feedback ([`FeedbackReplay`]), simulated users in the closed loop ([`ClosedLoop`]). All
//! go through the same loop and the same scheduler code.
//!
//! # Event order
//! Events at one timestamp are applied as a group: first the jobs that end at that time (in the
//! order their end events were created), then the submissions, then the correction of runtime
//! predictions that expired while their jobs still run (schedulers with predictions only), then
//! the scheduler runs once. A
//! job whose effective runtime is 0 ends at the instant it starts; its end forms a new group at
//! the same instant, after which the scheduler runs again. An instant at which no job ended or
//! arrived (a simulated user woke up and went back to sleep) has no scheduling pass.
//!
//! A job runs for its true runtime, or is killed at its user estimate if that comes first
//! (effective runtime = min(runtime, estimate)). With node failures ([`Failures`]), a failure
//! at an instant is applied after that instant's ends and before its submissions: the jobs it
//! strikes end (lost) or go back to the queue later (requeued).

mod closed;
mod failures;
mod fairness;
mod feedback;
mod replay;
mod sharing;
mod simulate;

pub use closed::{
    ClosedLoop, ClosedRun, ClosedSink, run_population, run_population_into, run_population_with,
};
pub use failures::{FailureStep, Failures};
pub use fairness::{add_fair_start_times, add_fair_start_times_observed};
pub use feedback::{
    Abandon, FeedbackCounts, FeedbackJob, FeedbackOptions, FeedbackReplay, FeedbackSession,
};
pub use replay::{
    MAX_JOBS, MAX_TIME, Records, Replay, ReplayError, ReplayReader, StreamLimits, StreamMessage,
    StreamedJobs, Streaming,
};
pub use sharing::{MemoryBandwidth, OverNodes};
pub use simulate::{
    Advance, EngineError, Extra, Facility, Interference, Job, NodeStates, Observer, SimOptions,
    Stepper, Workload, simulate, simulate_into, simulate_with,
};

pub use simtime::Time;
