//! Per-job annotations of a backfilling rule, and how an output writes them.
//!
//! A rule that knows more of a job than the record holds (the Slurm model: the priority and
//! factors at its start, its account, partition and QOS, its wait by pending reason) hands it
//! out as an [`Annotation`] ([`crate::Backfill::annotation`], asked by the engine as each job
//! starts) and says how to write it with its [`Columns`] ([`crate::Backfill::columns`]). The
//! engine and the outputs (jobs.csv) carry and write annotations without knowing the rule.

use std::fmt::Debug;

pub use job::annotation::Annotation;

/// One annotation value as an output writes it (a CSV field).
#[derive(Debug, Clone, PartialEq)]
pub enum Cell<'a> {
    /// An empty field.
    Empty,
    /// A whole number.
    Int(i64),
    /// A number, written as the shortest decimal that reads back exactly.
    Float(f64),
    /// A text (a name of the rule's configuration), quoted as CSV needs.
    Text(std::borrow::Cow<'a, str>),
}

/// The columns of a rule's annotations: their names, and each value as an output writes it.
pub trait Columns: Debug + Send + Sync {
    /// The columns' names, in order (jobs.csv's header after its own columns).
    fn names(&self) -> &[&'static str];

    /// Column `column` of `annotation` as a field (names are looked up in the rule's own
    /// configuration).
    fn cell(&self, annotation: &Annotation, column: usize) -> Cell<'_>;
}
