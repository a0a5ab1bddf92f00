//! What a scheduler part recorded of a job, carried from the scheduler to the outputs.
//!
//! A backfilling rule may annotate each job it starts (`cluster::Backfill::annotation`): the
//! Slurm model records the job's priority and factors as they were at its start, its account,
//! partition and QOS, and how its wait divided among Slurm's pending reasons. The engine keeps
//! the annotation with the job's record, and an output writes it as columns whose names and
//! texts the rule gives (`cluster::Columns`), so neither the engine nor the outputs know which
//! rule annotated. An annotation is a short row of plain values, `Copy` like the record that
//! carries it.

/// One value of an [`Annotation`]: what its column means is the annotating part's to say.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Value {
    /// No value (an empty field).
    #[default]
    None,
    /// A whole number (a count, seconds, an index in one of the part's tables).
    Int(i64),
    /// A number.
    Float(f64),
}

impl Value {
    /// The whole number, if it is one.
    pub fn int(self) -> Option<i64> {
        match self {
            Value::Int(v) => Some(v),
            _ => None,
        }
    }

    /// The number, if it is a [`Value::Float`].
    pub fn float(self) -> Option<f64> {
        match self {
            Value::Float(v) => Some(v),
            _ => None,
        }
    }
}

/// A part's values for one job, in the order of its columns (at most [`Annotation::MAX`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Annotation {
    values: [Value; Annotation::MAX],
    len: u8,
}

impl Annotation {
    /// The most values an annotation holds.
    pub const MAX: usize = 14;

    /// The annotation of `values` (those past [`Annotation::MAX`] are dropped: a part declares
    /// at most that many columns).
    pub fn new(values: &[Value]) -> Annotation {
        let mut annotation = Annotation::default();
        let len = values.len().min(Annotation::MAX);
        annotation.values[..len].copy_from_slice(&values[..len]);
        annotation.len = len as u8;
        annotation
    }

    /// The values, in column order.
    pub fn values(&self) -> &[Value] {
        &self.values[..usize::from(self.len)]
    }

    /// The value of column `index` ([`Value::None`] past the end).
    pub fn get(&self, index: usize) -> Value {
        self.values().get(index).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_keep_their_order_and_missing_ones_are_none() {
        let a = Annotation::new(&[Value::Int(3), Value::Float(0.5), Value::None]);
        assert_eq!(a.values().len(), 3);
        assert_eq!(a.get(0).int(), Some(3));
        assert_eq!(a.get(1).float(), Some(0.5));
        assert_eq!(a.get(2), Value::None);
        assert_eq!(a.get(7), Value::None);
        let long = [Value::Int(1); 20];
        assert_eq!(Annotation::new(&long).values().len(), Annotation::MAX);
    }
}
