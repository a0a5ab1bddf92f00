use crate::order::{Arrival, Creasy, LongestFirst, QueueOrder, ShortestFirst};

/// How jobs may jump ahead of the queue order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backfilling {
    /// Start jobs strictly in queue order; stop at the first that does not fit (plain FCFS).
    None,
    /// EASY (Lifka 1995; the exact rules of Tsafrir's thesis, section 2.3): the first job that
    /// does not fit gets a reservation at its shadow time; a later job may start now if it fits and
    /// either ends (by its estimate) by the shadow time or uses only the extra processors.
    Easy,
    /// Conservative backfilling (Mu'alem & Feitelson 2001; the backfilling of Streit's CCS, paper
    /// 002, section 3): every waiting job holds a reservation in the profile of free processors.
    /// A new job gets the earliest slot that delays no reservation; when a job ends before its
    /// estimate, the waiting jobs are re-placed one by one in queue order, each at its earliest
    /// slot with every other reservation held, so a reservation only ever moves earlier. The
    /// queue order decides who gets freed processors first.
    Conservative,
}

/// A scheduling policy: a queue order plus a backfilling rule.
#[derive(Debug)]
pub struct Scheduler {
    /// The priority function ordering the waiting queue.
    pub order: Box<dyn QueueOrder>,
    /// The backfilling rule applied after the head of the queue is blocked.
    pub backfilling: Backfilling,
}

impl Scheduler {
    /// First come, first served without backfilling.
    pub fn fcfs() -> Scheduler {
        Scheduler {
            order: Box::new(Arrival),
            backfilling: Backfilling::None,
        }
    }

    /// EASY backfilling over arrival order.
    pub fn easy() -> Scheduler {
        Scheduler {
            order: Box::new(Arrival),
            backfilling: Backfilling::Easy,
        }
    }

    /// Conservative backfilling over `order`.
    pub fn conservative(order: ListOrder) -> Scheduler {
        Scheduler {
            order: order.build(),
            backfilling: Backfilling::Conservative,
        }
    }

    /// CREASY: EASY backfilling over the criticality/seniority priority with weight `alpha`.
    pub fn creasy(alpha: f64) -> Scheduler {
        Scheduler {
            order: Box::new(Creasy { alpha }),
            backfilling: Backfilling::Easy,
        }
    }
}

/// The queue orders of Streit's CCS (paper 002, section 3.1), by the user estimate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOrder {
    /// First come, first served.
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

/// A scheduler named by the user (CLI, config files), before it is built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SchedulerSpec {
    /// [`Scheduler::fcfs`].
    Fcfs,
    /// [`Scheduler::easy`].
    Easy,
    /// [`Scheduler::creasy`] with this alpha.
    Creasy {
        /// Weight of criticality against seniority.
        alpha: f64,
    },
    /// [`Scheduler::conservative`] over this order.
    Conservative {
        /// The queue order.
        order: ListOrder,
    },
}

impl SchedulerSpec {
    /// Builds the scheduler.
    pub fn build(&self) -> Scheduler {
        match *self {
            SchedulerSpec::Fcfs => Scheduler::fcfs(),
            SchedulerSpec::Easy => Scheduler::easy(),
            SchedulerSpec::Creasy { alpha } => Scheduler::creasy(alpha),
            SchedulerSpec::Conservative { order } => Scheduler::conservative(order),
        }
    }

    /// A short label for tables and file names: `fcfs`, `easy`, `creasy-6000`,
    /// `conservative`, `conservative-sjf`.
    pub fn label(&self) -> String {
        match *self {
            SchedulerSpec::Fcfs => "fcfs".to_string(),
            SchedulerSpec::Easy => "easy".to_string(),
            SchedulerSpec::Creasy { alpha } => format!("creasy-{alpha}"),
            SchedulerSpec::Conservative {
                order: ListOrder::Fcfs,
            } => "conservative".to_string(),
            SchedulerSpec::Conservative { order } => format!("conservative-{}", order.name()),
        }
    }
}
