//! The resources a job holds while it runs, as every part of sitesim sees them.
//!
//! A job holds processors and, on a machine that has them, amounts of other resources
//! ([`Extra`]: memory, GPUs, licences, ...), each of a kind the machine names in its
//! [`ResourceKinds`] table. A job fits only if every amount fits ([`Resources::fits_in`]). A
//! machine of processors only has no extra kinds, and every amount of [`Extra`] is then 0:
//! the schedulers keep their one-resource fast paths exactly for such machines and take the
//! vector path only where an extra kind is in use.

pub mod annotation;

pub use annotation::Annotation;
pub use simtime::Time;

/// A job as every input makes it (a trace's line, a sacct dump's row, a simulated user's
/// submission, the gym's source) and every part of sitesim passes it on: what the scheduler is
/// told ([`Job::resources`], the estimate, the owner and where it was submitted) plus its true
/// runtime, which only the simulation knows. A new job attribute is one field here plus the
/// readers that fill it and the writers that show it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Job {
    /// The id reported in the results (the SWF job number in replay).
    pub job_id: i64,
    /// The owner (-1 when unknown).
    pub user: i64,
    /// The owner's group (-1 when unknown): the SWF group, or the simulated user's population
    /// group (numbered from 1). The Slurm model's account.
    pub group: i64,
    /// Submit time, seconds.
    pub submit: Time,
    /// Processors needed.
    pub processors: u32,
    /// The user's runtime estimate, seconds: the scheduler plans with it and kills the job there.
    pub estimate: Time,
    /// The true runtime, seconds (unknown to the scheduler).
    pub runtime: Time,
    /// Memory bandwidth each of its processes uses, MB/s (0: none). Only the memory-bandwidth
    /// sharing model looks at it.
    pub bandwidth: u32,
    /// Its partition number (a trace's SWF field 16; -1 when unknown): the Slurm model's
    /// partitions may select jobs by it.
    pub partition: i64,
    /// Its queue number (a trace's SWF field 15; -1 when unknown): the Slurm model's QOS may
    /// select jobs by it.
    pub queue: i64,
    /// What it needs of the machine's other resources, by the index of their kind in the run's
    /// [`ResourceKinds`] (all 0 on a machine of processors only).
    pub extra: Extra,
    /// How its resources must lie on a machine of node types: how many nodes, which GPU type,
    /// which node features, whole nodes or not ([`Shape::ANY`] elsewhere).
    pub shape: Shape,
    /// The job array it is a task of, and the array's throttle ([`ArrayTask::NONE`]: none).
    pub array_task: ArrayTask,
    /// The advance reservation it was submitted to (`sbatch --reservation`;
    /// [`ReservationId::NONE`]: none): it runs only in that reservation's processors.
    pub reservation: ReservationId,
}

/// An advance reservation for named users or accounts, by its number from 1 in the run's list
/// of reservations (0: none). A job that names one (`sbatch --reservation`; a sacct dump's
/// `Reservation` column; a site's `[[outages]]` of `kind = "reservation"`) runs only on the
/// reservation's processors, and only while it lasts; no other job runs there then.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ReservationId(pub u16);

impl ReservationId {
    /// No reservation.
    pub const NONE: ReservationId = ReservationId(0);

    /// Whether it names a reservation.
    pub fn is_some(self) -> bool {
        self.0 != 0
    }
}

/// A job's place in a job array (`sbatch --array=1-8%2`): which array, which task, and the
/// array's throttle, the most of its tasks that run at once (Slurm's pending reason
/// `JobArrayTaskLimit` for the others). Slurm keeps an array's tasks not yet started as one
/// queue record and splits them off in task order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct ArrayTask {
    /// The array, numbered from 1 within the trace (0: not an array's task).
    pub array: u32,
    /// The task's index in the array (`123_4`: 4).
    pub task: u32,
    /// Tasks of the array that may run at once (0: no throttle).
    pub limit: u32,
}

impl ArrayTask {
    /// Not an array's task.
    pub const NONE: ArrayTask = ArrayTask {
        array: 0,
        task: 0,
        limit: 0,
    };

    /// Whether it is an array's task.
    pub fn is_some(&self) -> bool {
        self.array != 0
    }

    /// Whether it is a task of an array with a throttle.
    pub fn is_throttled(&self) -> bool {
        self.array != 0 && self.limit > 0
    }
}

impl Default for Job {
    /// A job of which nothing is known: id 0, no owner, group, partition or queue (-1),
    /// submitted at 0, no resources, no runtime or estimate.
    fn default() -> Job {
        Job {
            job_id: 0,
            user: -1,
            group: -1,
            submit: 0,
            processors: 0,
            estimate: 0,
            runtime: 0,
            bandwidth: 0,
            partition: -1,
            queue: -1,
            extra: Extra::NONE,
            shape: Shape::ANY,
            array_task: ArrayTask::NONE,
            reservation: Default::default(),
        }
    }
}

impl Job {
    /// Everything it holds while it runs.
    #[inline]
    pub fn resources(&self) -> Resources {
        Resources {
            processors: self.processors,
            extra: self.extra,
        }
    }
}

/// How a job's resources must lie on a machine of node types (a site file's `[[nodes]]`, a
/// slurm.conf's `NodeName` lines): Slurm's `--nodes`, `--gres=gpu:TYPE`, `--constraint` and
/// `--exclusive`. The amounts themselves are the job's processors and [`Extra`] (totals over
/// its nodes, as sacct's `AllocTRES` gives them); a machine that only counts resources ignores
/// the shape.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Shape {
    /// Nodes it runs on (0: as few as hold it, chosen when it is submitted).
    pub nodes: u16,
    /// The GPU type its GPUs must be, as 1 + the index in the machine's GPU types (0: any).
    pub gpu_type: u8,
    /// Whole nodes: it shares its nodes with no other job, and holds all of each.
    pub exclusive: bool,
    /// The node features every node it gets must have, one bit per feature of the machine's
    /// feature table (0: none asked).
    pub features: u32,
}

impl Shape {
    /// No constraint: any nodes, any GPU type, shared.
    pub const ANY: Shape = Shape {
        nodes: 0,
        gpu_type: 0,
        exclusive: false,
        features: 0,
    };

    /// Whether it asks nothing of where it runs.
    pub fn is_any(&self) -> bool {
        *self == Shape::ANY
    }
}

/// The most kinds of resource a machine may have besides processors.
pub const MAX_EXTRA_KINDS: usize = 4;

/// Amounts of a machine's resources other than processors, by the index of their kind in the
/// machine's [`ResourceKinds`] (a kind the machine does not have is 0). Units are the kind's
/// (MiB of memory, GPUs, licences).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Extra(pub [u32; MAX_EXTRA_KINDS]);

impl Extra {
    /// No extra resource at all.
    pub const NONE: Extra = Extra([0; MAX_EXTRA_KINDS]);

    /// Whether every amount is 0.
    #[inline]
    pub fn is_none(&self) -> bool {
        self.0 == [0; MAX_EXTRA_KINDS]
    }

    /// The amount of kind `index` (0 past the table).
    #[inline]
    pub fn get(&self, index: usize) -> u32 {
        self.0.get(index).copied().unwrap_or(0)
    }

    /// These amounts with kind `index` set to `amount` (unchanged past the table).
    pub fn with(mut self, index: usize, amount: u32) -> Extra {
        if let Some(slot) = self.0.get_mut(index) {
            *slot = amount;
        }
        self
    }

    /// Whether every amount is at most `free`'s of the same kind.
    #[inline]
    pub fn fits_in(&self, free: &Extra) -> bool {
        self.0.iter().zip(&free.0).all(|(need, have)| need <= have)
    }

    /// The amounts added kind by kind (saturating).
    #[inline]
    pub fn plus(&self, other: &Extra) -> Extra {
        let mut sum = *self;
        for (a, b) in sum.0.iter_mut().zip(&other.0) {
            *a = a.saturating_add(*b);
        }
        sum
    }

    /// The amounts less `other`'s kind by kind, at least 0.
    #[inline]
    pub fn minus(&self, other: &Extra) -> Extra {
        let mut rest = *self;
        for (a, b) in rest.0.iter_mut().zip(&other.0) {
            *a = a.saturating_sub(*b);
        }
        rest
    }

    /// The amounts kind by kind, in table order.
    pub fn amounts(&self) -> &[u32; MAX_EXTRA_KINDS] {
        &self.0
    }
}

/// What a job holds while it runs: processors and the machine's other resources.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Resources {
    /// Processors (rigid: all at once for the whole run).
    pub processors: u32,
    /// Amounts of the machine's other resources.
    pub extra: Extra,
}

impl Resources {
    /// `processors` processors and nothing else.
    pub fn processors(processors: u32) -> Resources {
        Resources {
            processors,
            extra: Extra::NONE,
        }
    }

    /// Whether every amount is at most `free`'s.
    #[inline]
    pub fn fits_in(&self, free: &Resources) -> bool {
        self.processors <= free.processors && self.extra.fits_in(&free.extra)
    }

    /// The amounts added (saturating).
    #[inline]
    pub fn plus(&self, other: &Resources) -> Resources {
        Resources {
            processors: self.processors.saturating_add(other.processors),
            extra: self.extra.plus(&other.extra),
        }
    }

    /// The amounts less `other`'s, each at least 0.
    #[inline]
    pub fn minus(&self, other: &Resources) -> Resources {
        Resources {
            processors: self.processors.saturating_sub(other.processors),
            extra: self.extra.minus(&other.extra),
        }
    }
}

/// Why a table of resource kinds cannot take a kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KindError {
    /// The table already holds [`MAX_EXTRA_KINDS`] kinds.
    Full(String),
    /// A name that is empty or is `processors`.
    Name(String),
}

impl std::fmt::Display for KindError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KindError::Full(name) => write!(
                f,
                "resource {name:?}: a machine has at most {MAX_EXTRA_KINDS} kinds of resource besides processors"
            ),
            KindError::Name(name) => write!(
                f,
                "{name:?} is not a name for a resource kind (a non-empty name other than processors)"
            ),
        }
    }
}

impl std::error::Error for KindError {}

/// The kinds of resource a machine has besides processors, by name, in the order of the
/// amounts of [`Extra`] (the first kind is amount 0). Outputs name their columns after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceKinds {
    names: Vec<String>,
}

impl ResourceKinds {
    /// No extra kind: a machine of processors only.
    pub fn none() -> ResourceKinds {
        ResourceKinds::default()
    }

    /// The index of kind `name`, added at the end if the table lacks it.
    pub fn index_or_add(&mut self, name: &str) -> Result<usize, KindError> {
        if let Some(index) = self.index(name) {
            return Ok(index);
        }
        if name.is_empty() || name == "processors" {
            return Err(KindError::Name(name.to_string()));
        }
        if self.names.len() == MAX_EXTRA_KINDS {
            return Err(KindError::Full(name.to_string()));
        }
        self.names.push(name.to_string());
        Ok(self.names.len() - 1)
    }

    /// The index of kind `name`, if the table has it.
    pub fn index(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }

    /// The kinds' names, in index order.
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Whether the table holds no kind.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_fits_only_if_every_amount_fits() {
        let free = Resources {
            processors: 8,
            extra: Extra::NONE.with(0, 2).with(1, 100),
        };
        let job = |p, a, b| Resources {
            processors: p,
            extra: Extra::NONE.with(0, a).with(1, b),
        };
        assert!(job(8, 2, 100).fits_in(&free));
        assert!(!job(9, 0, 0).fits_in(&free));
        assert!(!job(1, 3, 0).fits_in(&free));
        assert!(!job(1, 0, 101).fits_in(&free));
        assert_eq!(free.minus(&job(3, 1, 40)), job(5, 1, 60));
        assert_eq!(job(5, 1, 60).plus(&job(3, 1, 40)), free);
        assert_eq!(job(1, 5, 0).minus(&free).extra, Extra::NONE.with(0, 3));
    }

    #[test]
    fn a_table_holds_at_most_four_named_kinds() {
        let mut kinds = ResourceKinds::none();
        assert_eq!(kinds.index_or_add("licences"), Ok(0));
        assert_eq!(kinds.index_or_add("gpu"), Ok(1));
        assert_eq!(kinds.index_or_add("licences"), Ok(0));
        assert!(kinds.index_or_add("processors").is_err());
        assert!(kinds.index_or_add("").is_err());
        kinds.index_or_add("mem").unwrap();
        kinds.index_or_add("power").unwrap();
        assert_eq!(
            kinds.index_or_add("more"),
            Err(KindError::Full("more".into()))
        );
        assert_eq!(kinds.names(), ["licences", "gpu", "mem", "power"]);
        assert_eq!(Extra::NONE.with(9, 1), Extra::NONE);
    }
}
