use crate::backfill::{Backfill, BackfillOrder, Conservative, DynPRule, Easy, NoBackfill};
use crate::dynp::DynP;
use crate::order::{Arrival, Creasy, LongestFirst, QueueOrder, ShortestFirst};
use crate::predict::Predictor;

/// A scheduling policy: a queue order plus a backfilling rule (which carries its own state, so
/// a `Scheduler` is built fresh for each [`crate::Cluster`]).
#[derive(Debug)]
pub struct Scheduler {
    /// The priority function ordering the waiting queue.
    pub order: Box<dyn QueueOrder>,
    /// The backfilling rule applied after the head of the queue is blocked.
    pub backfill: Box<dyn Backfill>,
    /// Where planning runtimes come from (the kill time is always the user estimate). Only
    /// rules that use predictions ([`Backfill::uses_predictions`]) see them.
    pub predictor: Predictor,
}

impl Scheduler {
    /// A scheduler of `order` and `backfill`, planning with user estimates. The rule is told
    /// whether the order is arrival order ([`Backfill::queue_in_arrival_order`]).
    pub fn new(order: Box<dyn QueueOrder>, mut backfill: Box<dyn Backfill>) -> Scheduler {
        if order.is_arrival_order() {
            backfill.queue_in_arrival_order();
        }
        Scheduler {
            order,
            backfill,
            predictor: Predictor::UserEstimate,
        }
    }

    /// First come, first served without backfilling.
    pub fn fcfs() -> Scheduler {
        Scheduler::new(Box::new(Arrival), Box::new(NoBackfill))
    }

    /// EASY backfilling over arrival order.
    pub fn easy() -> Scheduler {
        Scheduler::new(Box::new(Arrival), Box::new(Easy::new(BackfillOrder::Queue)))
    }

    /// Tsafrir's EASY variants (thesis, chapter 4): EASY over arrival order with `predictor`
    /// planning runtimes (corrected when they expire) and `backfill_order` for candidates.
    /// EASY-SJBF = (user estimates, shortest first); EASY+ = (recent user runtimes, queue
    /// order); EASY++ = (recent user runtimes, shortest first).
    pub fn easy_with(predictor: Predictor, backfill_order: BackfillOrder) -> Scheduler {
        Scheduler {
            predictor,
            ..Scheduler::new(Box::new(Arrival), Box::new(Easy::new(backfill_order)))
        }
    }

    /// Conservative backfilling over `order`.
    pub fn conservative(order: ListOrder) -> Scheduler {
        Scheduler::new(order.build(), Box::new(Conservative::new()))
    }

    /// Streit's dynP with conservative backfilling; the initial policy is FCFS.
    pub fn dynp(dynp: DynP) -> Scheduler {
        Scheduler::new(Box::new(Arrival), Box::new(DynPRule::new(dynp)))
    }

    /// CREASY: EASY backfilling over the criticality/seniority priority with weight `alpha`.
    pub fn creasy(alpha: f64) -> Scheduler {
        Scheduler::new(
            Box::new(Creasy { alpha }),
            Box::new(Easy::new(BackfillOrder::Queue)),
        )
    }
}

/// The queue orders of Streit's CCS (paper 002, section 3.1), by the user estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ListOrder {
    /// First come, first served (dynP's initial policy).
    #[default]
    Fcfs,
    /// Shortest (estimate) job first.
    Sjf,
    /// Longest (estimate) job first.
    Ljf,
}

impl ListOrder {
    /// The priority function.
    pub fn build(self) -> Box<dyn QueueOrder> {
        match self {
            ListOrder::Fcfs => Box::new(Arrival),
            ListOrder::Sjf => Box::new(ShortestFirst),
            ListOrder::Ljf => Box::new(LongestFirst),
        }
    }

    /// `fcfs`, `sjf` or `ljf`.
    pub fn name(self) -> &'static str {
        match self {
            ListOrder::Fcfs => "fcfs",
            ListOrder::Sjf => "sjf",
            ListOrder::Ljf => "ljf",
        }
    }
}
