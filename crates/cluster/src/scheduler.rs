use crate::dynp::DynP;
use crate::order::{Arrival, Creasy, LongestFirst, QueueOrder, ShortestFirst};
use crate::predict::Predictor;

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
    /// Streit's dynP (paper 002, section 3): conservative backfilling rebuilt at every pass in an
    /// order (FCFS, SJF, LJF) that a decider switches; the scheduler's `order` is not used.
    DynP(DynP),
}

/// The order in which EASY scans the jobs behind the reservation for backfilling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackfillOrder {
    /// Queue (priority) order.
    #[default]
    Queue,
    /// Shortest predicted runtime first (Tsafrir's SJBF, thesis section 4.2.3); the reservation
    /// still goes to the head of the queue.
    ShortestFirst,
}

/// A scheduling policy: a queue order plus a backfilling rule.
#[derive(Debug)]
pub struct Scheduler {
    /// The priority function ordering the waiting queue.
    pub order: Box<dyn QueueOrder>,
    /// The backfilling rule applied after the head of the queue is blocked.
    pub backfilling: Backfilling,
    /// Where planning runtimes come from (the kill time is always the user estimate).
    pub predictor: Predictor,
    /// EASY's scan order for backfill candidates.
    pub backfill_order: BackfillOrder,
}

impl Scheduler {
    /// First come, first served without backfilling.
    pub fn fcfs() -> Scheduler {
        Scheduler {
            order: Box::new(Arrival),
            backfilling: Backfilling::None,
            predictor: Predictor::UserEstimate,
            backfill_order: BackfillOrder::Queue,
        }
    }

    /// EASY backfilling over arrival order.
    pub fn easy() -> Scheduler {
        Scheduler {
            order: Box::new(Arrival),
            backfilling: Backfilling::Easy,
            predictor: Predictor::UserEstimate,
            backfill_order: BackfillOrder::Queue,
        }
    }

    /// Tsafrir's EASY variants (thesis, chapter 4): EASY over arrival order with `predictor`
    /// planning runtimes (corrected when they expire) and `backfill_order` for candidates.
    /// EASY-SJBF = (user estimates, shortest first); EASY+ = (recent user runtimes, queue
    /// order); EASY++ = (recent user runtimes, shortest first).
    pub fn easy_with(predictor: Predictor, backfill_order: BackfillOrder) -> Scheduler {
        Scheduler {
            predictor,
            backfill_order,
            ..Scheduler::easy()
        }
    }

    /// Conservative backfilling over `order`.
    pub fn conservative(order: ListOrder) -> Scheduler {
        Scheduler {
            order: order.build(),
            backfilling: Backfilling::Conservative,
            predictor: Predictor::UserEstimate,
            backfill_order: BackfillOrder::Queue,
        }
    }

    /// Streit's dynP with conservative backfilling; the initial policy is FCFS.
    pub fn dynp(dynp: DynP) -> Scheduler {
        Scheduler {
            order: Box::new(Arrival),
            backfilling: Backfilling::DynP(dynp),
            predictor: Predictor::UserEstimate,
            backfill_order: BackfillOrder::Queue,
        }
    }

    /// CREASY: EASY backfilling over the criticality/seniority priority with weight `alpha`.
    pub fn creasy(alpha: f64) -> Scheduler {
        Scheduler {
            order: Box::new(Creasy { alpha }),
            backfilling: Backfilling::Easy,
            predictor: Predictor::UserEstimate,
            backfill_order: BackfillOrder::Queue,
        }
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
    /// EASY with shortest-job-backfilled-first (user estimates).
    EasySjbf,
    /// EASY over shortest-estimate-first order (the SJF-backfilling of paper 001).
    EasySjf,
    /// EASY+: predictions from the user's recent runtimes, with correction.
    EasyPlus,
    /// EASY++: EASY+ and SJBF.
    EasyPlusPlus,
    /// [`Scheduler::dynp`].
    DynP(DynP),
}

impl SchedulerSpec {
    /// Builds the scheduler.
    pub fn build(&self) -> Scheduler {
        match *self {
            SchedulerSpec::Fcfs => Scheduler::fcfs(),
            SchedulerSpec::Easy => Scheduler::easy(),
            SchedulerSpec::Creasy { alpha } => Scheduler::creasy(alpha),
            SchedulerSpec::Conservative { order } => Scheduler::conservative(order),
            SchedulerSpec::EasySjbf => {
                Scheduler::easy_with(Predictor::UserEstimate, BackfillOrder::ShortestFirst)
            }
            SchedulerSpec::EasySjf => Scheduler {
                order: ListOrder::Sjf.build(),
                ..Scheduler::easy()
            },
            SchedulerSpec::EasyPlus => {
                Scheduler::easy_with(Predictor::RecentUserRuntimes, BackfillOrder::Queue)
            }
            SchedulerSpec::EasyPlusPlus => {
                Scheduler::easy_with(Predictor::RecentUserRuntimes, BackfillOrder::ShortestFirst)
            }
            SchedulerSpec::DynP(dynp) => Scheduler::dynp(dynp),
        }
    }

    /// A short label for tables and file names: `fcfs`, `easy`, `creasy-6000`,
    /// `conservative`, `conservative-sjf`, `easy-plus-plus`, `dynp-7200-9000`,
    /// `dynp-advanced-artww`.
    pub fn label(&self) -> String {
        match *self {
            SchedulerSpec::Fcfs => "fcfs".to_string(),
            SchedulerSpec::Easy => "easy".to_string(),
            SchedulerSpec::Creasy { alpha } => format!("creasy-{alpha}"),
            SchedulerSpec::Conservative {
                order: ListOrder::Fcfs,
            } => "conservative".to_string(),
            SchedulerSpec::Conservative { order } => format!("conservative-{}", order.name()),
            SchedulerSpec::EasySjbf => "easy-sjbf".to_string(),
            SchedulerSpec::EasySjf => "easy-sjf".to_string(),
            SchedulerSpec::EasyPlus => "easy-plus".to_string(),
            SchedulerSpec::EasyPlusPlus => "easy-plus-plus".to_string(),
            SchedulerSpec::DynP(DynP::Basic { lower, upper }) => format!("dynp-{lower}-{upper}"),
            SchedulerSpec::DynP(DynP::SelfTuning { quality, decider }) => {
                format!("dynp-{}-{}", decider.name(), quality.name())
            }
        }
    }
}
