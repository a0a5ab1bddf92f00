use crate::order::{Arrival, Creasy, QueueOrder};

/// How jobs may jump ahead of the queue order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backfilling {
    /// Start jobs strictly in queue order; stop at the first that does not fit (plain FCFS).
    None,
    /// EASY (Lifka 1995; the exact rules of Tsafrir's thesis, section 2.3): the first job that
    /// does not fit gets a reservation at its shadow time; a later job may start now if it fits and
    /// either ends (by its estimate) by the shadow time or uses only the extra processors.
    Easy,
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

    /// CREASY: EASY backfilling over the criticality/seniority priority with weight `alpha`.
    pub fn creasy(alpha: f64) -> Scheduler {
        Scheduler {
            order: Box::new(Creasy { alpha }),
            backfilling: Backfilling::Easy,
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
}

impl SchedulerSpec {
    /// Builds the scheduler.
    pub fn build(&self) -> Scheduler {
        match *self {
            SchedulerSpec::Fcfs => Scheduler::fcfs(),
            SchedulerSpec::Easy => Scheduler::easy(),
            SchedulerSpec::Creasy { alpha } => Scheduler::creasy(alpha),
        }
    }

    /// A short label for tables and file names: `fcfs`, `easy`, `creasy-6000`.
    pub fn label(&self) -> String {
        match *self {
            SchedulerSpec::Fcfs => "fcfs".to_string(),
            SchedulerSpec::Easy => "easy".to_string(),
            SchedulerSpec::Creasy { alpha } => format!("creasy-{alpha}"),
        }
    }
}
