//! Queue orders: which waiting job comes first. Each is a priority function; the backfilling
//! rules in [`crate::backfill`] are shared by all of them.

mod arrival;
mod creasy;
mod length;

pub use arrival::Arrival;
pub use creasy::Creasy;
pub use length::{LongestFirst, ShortestFirst};

use crate::{JobRequest, Time};

/// A priority function over waiting jobs. Larger priorities are served first; equal priorities
/// fall back to arrival order (earlier submit, then lower [`crate::JobId`]).
pub trait QueueOrder: std::fmt::Debug + Send + Sync {
    /// A short name for tables and logs (`"easy"`, `"creasy(alpha=6000)"`).
    fn name(&self) -> String;

    /// The priority of `job` at time `now`; recomputed at every scheduling pass.
    fn priority(&self, job: &JobRequest, now: Time) -> f64;

    /// True when the order is plain arrival order at every instant. The cluster then keeps the
    /// queue sorted as jobs arrive and skips computing priorities (EASY's common case).
    fn is_arrival_order(&self) -> bool {
        false
    }
}
