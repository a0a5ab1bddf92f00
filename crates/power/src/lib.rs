//! Power, energy, carbon and cost of a simulated machine.
//!
//! A machine's IT power at any time is the sum over its nodes of their power in their state:
//! a node that is on draws its idle power plus, for what its jobs use, a linear term per busy
//! core, GPU and GiB of memory (`P = P_idle + sum_r w_r * used_r`, the linear server-power model
//! of Fan, Weber and Barroso, ISCA 2007, and Batsim's `watt_per_state` idle/full pstates). The
//! facility draws PUE times the IT power. Between two events (a job starting or ending) nothing
//! changes, so energy is the sum of power x interval over the event timeline, exact; carbon and
//! cost multiply that power by a step series of intensity or price ([`Series`]) and integrate
//! exactly over its steps.
//!
//! Each job is charged its *draw* ([`Draw`]): the idle power of the share of its nodes it holds
//! plus its dynamic power, so that the jobs' draws plus the unused nodes' idle power add up to
//! the machine's. A job whose energy the trace logged (sacct's `ConsumedEnergyRaw`) is charged
//! what was logged instead ([`Meter::add`]).
//!
//! Idle nodes may power down and boot again when a job needs them ([`NodeSaving`], Slurm's
//! power saving): the spans they spend off, booting or shutting down replace their idle power
//! by those states' ([`Meter::add_spans`]).
//!
//! The crate is arithmetic over values its callers give it: it reads no file (a series is
//! parsed from text) and knows no scheduler.

mod meter;
mod model;
pub mod saving;
pub mod series;

pub use meter::{JobEnergy, Meter, PowerReport, Spread};
pub use model::{Draw, ModelError, NodePower, Transition, Used};
pub use saving::{NodeSaving, NodeState, Placement, SavingReport, StateSpan, processor_nodes};
pub use series::{Quantity, Series};

use simtime::Time;

/// Joules in one kilowatt-hour.
pub const JOULES_PER_KWH: f64 = 3.6e6;

/// Why a power model or series cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PowerError {
    /// A series file's row or header is wrong.
    #[error("{file}: line {line}{}: {message}", column.as_ref().map(|c| format!(", column {c}")).unwrap_or_default())]
    Series {
        /// The file.
        file: String,
        /// Its line (1: the header).
        line: u64,
        /// The column, if one is at fault.
        column: Option<String>,
        /// What is wrong.
        message: String,
    },
    /// The run reached a time the series does not cover.
    #[error(
        "{file}: the {quantity} series covers {from} s to {to} s of simulated time, but the run needs it at {at} s (give a series that covers the run, or `repeat` it)"
    )]
    Uncovered {
        /// The file.
        file: String,
        /// What it measures.
        quantity: Quantity,
        /// The time needed, seconds.
        at: Time,
        /// Where the series starts, seconds.
        from: Time,
        /// Where it ends, seconds.
        to: Time,
    },
    /// A node type's power values are wrong.
    #[error("{0}")]
    Model(#[from] model::ModelError),
}
