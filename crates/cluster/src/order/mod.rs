//! Queue orders: which waiting job comes first. Each is a priority function; the backfilling
//! rules in [`crate::backfill`] are shared by all of them.

mod arrival;
mod creasy;
mod length;

pub use arrival::Arrival;
pub use creasy::{Creasy, CreasyParams};
pub use length::{LongestFirst, ShortestFirst};

use crate::JobRequest;
use crate::params::Params;
use crate::policy::{OrderPart, Part};
use crate::view::View;

/// Arrival order: earlier submit first, then lower job id.
pub static FCFS: OrderPart = Part {
    name: "fcfs",
    help: "arrival order: the earliest submitted job first",
    params: Params::NONE,
    build: |_| Box::new(Arrival),
};

/// Shortest user estimate first (paper 002's SJF).
pub static SJF: OrderPart = Part {
    name: "sjf",
    help: "shortest user estimate first",
    params: Params::NONE,
    build: |_| Box::new(ShortestFirst),
};

/// Longest user estimate first (paper 002's LJF).
pub static LJF: OrderPart = Part {
    name: "ljf",
    help: "longest user estimate first",
    params: Params::NONE,
    build: |_| Box::new(LongestFirst),
};

/// CREASY's priority, alpha * criticality + seniority (paper 000, section IV-A).
pub static CREASY: OrderPart = Part {
    name: "creasy",
    help: "CREASY: alpha * criticality (how likely the owner still waits for the job) + minutes waited",
    params: Params::of::<CreasyParams>(),
    build: |p| {
        Box::new(Creasy {
            alpha: p.get::<CreasyParams>().alpha,
        })
    },
};

/// Every queue order `--order` and `[scheduler] order` can name. A new order: its module in
/// this directory and one entry here.
pub static ORDERS: &[&OrderPart] = &[&FCFS, &SJF, &LJF, &CREASY];

/// A priority function over waiting jobs. Larger priorities are served first; equal priorities
/// fall back to arrival order (earlier submit, then lower [`crate::JobId`]).
pub trait QueueOrder: std::fmt::Debug + Send + Sync {
    /// A short name for tables and logs (`"easy"`, `"creasy(alpha=6000)"`).
    fn name(&self) -> String;

    /// The priority of `job` as the cluster is in `view` (the pass's instant, the machine, what
    /// runs and by whom); recomputed at every scheduling pass.
    fn priority(&self, job: &JobRequest, view: &View<'_>) -> f64;

    /// Appends the priority of every job of `jobs` in `view` to `out`, in the order of `jobs`:
    /// exactly `priority(job, view)` for each (the same bits), so an implementation may only
    /// make it cheaper. The cluster calls this once per pass for the whole queue, so an order
    /// whose priority is cheap arithmetic (CREASY) pays one dynamic call per pass instead of
    /// one per job. The default calls [`QueueOrder::priority`] for each job in turn.
    fn priorities(&self, jobs: &[JobRequest], view: &View<'_>, out: &mut Vec<f64>) {
        out.extend(jobs.iter().map(|job| self.priority(job, view)));
    }

    /// True when the order reads the users' recent runtimes ([`View::recent_runtimes`]): the
    /// cluster then keeps them as jobs end (they cost a map update per job otherwise spared).
    fn reads_history(&self) -> bool {
        false
    }

    /// True when the order is plain arrival order at every instant. The cluster then keeps the
    /// queue sorted as jobs arrive and skips computing priorities (EASY's common case).
    fn is_arrival_order(&self) -> bool {
        false
    }

    /// True when, at this moment, every job has the same priority, so the order is arrival
    /// order until it changes (an order whose priorities are set from outside between passes:
    /// the Gymnasium environment's, with no score set). A pass then leaves a queue that is in
    /// arrival order as it is instead of sorting it. The default: [`QueueOrder::is_arrival_order`].
    fn arrival_order_now(&self) -> bool {
        self.is_arrival_order()
    }

    /// The order as CREASY's priority, if it is exactly that function ([`Creasy`] returns
    /// itself; the default is `None`). Why: CREASY's priority is bounded by the wait and the
    /// estimate ([`Creasy`]'s bounds), so the cluster can keep the queue in arrival order and
    /// search the priority order there instead of re-sorting every waiting job at every pass,
    /// with the same decisions. The search computes priorities with the returned value, so an
    /// order may return `Some` only if its own priority is the same function.
    fn as_creasy(&self) -> Option<Creasy> {
        None
    }

    /// The order as `Any`, so that its owner can reach its own type between passes
    /// ([`crate::Cluster::order_mut`]; the Gymnasium environment writes an agent's scores into
    /// its order this way). The default is `None`: the built-in orders hold no state to change.
    fn as_any_mut(&mut self) -> Option<&mut dyn std::any::Any> {
        None
    }
}
