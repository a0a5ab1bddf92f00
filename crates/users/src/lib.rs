//! The simulated users of site-level simulation (Shmueli & Feitelson 2009, section III-B).
//!
//! Each user combines three sub-models:
//! * **session dynamics** ([`Population`]): after the last job of a batch ends with response r
//!   (minutes), the user continues with probability `a / (b r + 1)` (a Bernoulli trial) after a
//!   short think time, or takes a break;
//! * **job submission** ([`submission`]): batches of a drawn width, submitted without waiting for
//!   each other; two-level sampling of size, runtime and estimate;
//! * **activity cycles** ([`cycle`]): day or night, weekdays or weekends, a personal shift; outside
//!   its window a user sleeps until the window opens again.
//!
//! These are the Shmueli kind's sub-models ([`kinds::shmueli`]); a group may follow another kind
//! instead ([`kinds::schlagkamp`], paper 004): what differs between kinds is a [`UserBehaviour`],
//! found by the group's `kind` in the registry [`KINDS`]; the population's state machine is the
//! same for all.
//!
//! Every parameter comes from the population file ([`GroupConfig`]) with the paper's value as
//! default; distributions come from a fitted [`usermodel::Model`]. Each user draws from its own random
//! streams ([`rng`]). This crate never knows which scheduler runs: the engine gives it
//! [`Completion`]s and takes [`Submission`]s.

pub mod config;
pub mod cycle;
pub mod estimate;
pub mod kinds;
mod population;
pub mod resources;
pub mod rng;
pub mod submission;

pub use config::{
    BandwidthMix, ConfigError, EstimateModelSpec, EstimateSpec, Estimates, GroupConfig, GroupParams,
};
pub use cycle::{ActivityWindow, Calendar, DayPart, Days};
pub use kinds::schlagkamp::{SchlagkampConfig, SchlagkampParams, SizeClass, ThinkPreset};
pub use kinds::shmueli::{BatchGaps, Feedback, ShmueliConfig, ShmueliParams};
pub use kinds::{
    AfterBatch, ClosingJob, Decision, Draws, KINDS, Kind, KindConfig, UserBehaviour, UserFactory,
};
pub use population::{Group, Population, PopulationError, Profile, UserState};

pub use simtime::Time;

/// A job a user submits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Submission {
    /// Its id, unique in the run, from 1 in submission order.
    pub job_id: i64,
    /// The user (index in the population; the outputs number users from 1, this + 1).
    pub user: u32,
    /// The group id its job carries (the scheduler's and the SWF's group): the user's group's
    /// position from 1, or the tree account the group's `accounts` gave the user.
    pub group: i64,
    /// The user's session it belongs to (numbered from 1 per user, as in sessions.csv).
    pub session: u32,
    /// Its batch's number in the session (from 1, as in batches.csv).
    pub batch: u32,
    /// Submit time.
    pub submit: Time,
    /// Processors.
    pub processors: u32,
    /// True runtime, seconds.
    pub runtime: Time,
    /// The user's runtime estimate, seconds.
    pub estimate: Time,
    /// The job whose end the user waited for before this batch (the previous batch's last job),
    /// and the think time since that end: SWF fields 17 and 18.
    pub preceding: Option<(i64, Time)>,
    /// Memory bandwidth per process, MB/s (0 unless the group has a bandwidth mix).
    pub bandwidth: u32,
    /// What it asks of a machine of node types besides processors (nothing unless the group
    /// has a resource mix: [`resources::ResourceMix`]).
    pub request: resources::Request,
}

/// A job of a user ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completion {
    /// The job.
    pub job_id: i64,
    /// Its user.
    pub user: u32,
    /// When it was submitted.
    pub submit: Time,
    /// When it started.
    pub start: Time,
    /// When it ended.
    pub end: Time,
    /// A node failure killed it and it was lost (not requeued): its user resubmits these
    /// attributes ([`Population::job_ended`]). `None`: it ended by itself (or by its estimate).
    pub lost: Option<submission::JobAttributes>,
}
