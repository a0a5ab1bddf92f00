//! What a scheduler part recorded of a job, carried from the scheduler to the outputs.
//!
//! A backfilling rule may annotate each job it starts (`cluster::Backfill::annotation`): the
//! Slurm model records the job's priority and factors as they were at its start, its account,
//! partition and QOS, and how its wait divided among Slurm's pending reasons. The engine keeps
//! the annotation with the job's record, and an output writes it as columns whose names and
//! texts the rule gives (`cluster::Columns`), so neither the engine nor the outputs know which
//! rule annotated.
//!
//! An annotation is a short row of 64-bit words (whole numbers, or numbers as their bits) whose
//! meaning is the annotating part's to say. It is `Copy` like the record that carries it, and
//! no bigger than the Slurm model's record was when the record held it by name, so records
//! cost what they did.

use std::num::NonZeroU8;

/// A part's words for one job (1 to [`Annotation::MAX`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Annotation {
    words: [u64; Annotation::MAX],
    len: NonZeroU8,
}

impl Annotation {
    /// The most words an annotation holds (a part packs more values into them).
    pub const MAX: usize = 11;

    /// The annotation of `words`; `None` when there are none or more than [`Annotation::MAX`].
    pub fn new(words: &[u64]) -> Option<Annotation> {
        if words.len() > Annotation::MAX {
            return None;
        }
        let len = NonZeroU8::new(u8::try_from(words.len()).ok()?)?;
        let mut all = [0; Annotation::MAX];
        all[..words.len()].copy_from_slice(words);
        Some(Annotation { words: all, len })
    }

    /// The annotation of `N` words, 1 to [`Annotation::MAX`] (checked when compiled).
    pub fn from_array<const N: usize>(words: [u64; N]) -> Annotation {
        const { assert!(N >= 1 && N <= Annotation::MAX) };
        let mut all = [0; Annotation::MAX];
        all[..N].copy_from_slice(&words);
        let len = match NonZeroU8::new(N as u8) {
            Some(len) => len,
            None => NonZeroU8::MIN, // N >= 1, checked above
        };
        Annotation { words: all, len }
    }

    /// The words, in the part's order.
    pub fn words(&self) -> &[u64] {
        &self.words[..usize::from(self.len.get())]
    }

    /// Word `index` (0 past the end).
    pub fn word(&self, index: usize) -> u64 {
        self.words().get(index).copied().unwrap_or(0)
    }

    /// Word `index` as a whole number (written by [`Annotation::int_word`]).
    pub fn int(&self, index: usize) -> i64 {
        i64::from_ne_bytes(self.word(index).to_ne_bytes())
    }

    /// Word `index` as a number (written by [`Annotation::float_word`]).
    pub fn float(&self, index: usize) -> f64 {
        f64::from_bits(self.word(index))
    }

    /// The word of a whole number.
    pub fn int_word(value: i64) -> u64 {
        u64::from_ne_bytes(value.to_ne_bytes())
    }

    /// The word of a number (its bits, so it reads back exactly).
    pub fn float_word(value: f64) -> u64 {
        value.to_bits()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_read_back_as_written() {
        let a =
            Annotation::new(&[Annotation::int_word(-3), Annotation::float_word(0.1), 7]).unwrap();
        assert_eq!(a.words().len(), 3);
        assert_eq!(a.int(0), -3);
        assert_eq!(a.float(1), 0.1);
        assert_eq!(a.word(2), 7);
        assert_eq!(a.word(9), 0);
        assert!(Annotation::new(&[]).is_none());
        assert_eq!(Annotation::from_array([5, 6]).words(), &[5, 6]);
        assert!(Annotation::new(&[1; 12]).is_none());
        assert_eq!(
            std::mem::size_of::<Option<Annotation>>(),
            8 * (Annotation::MAX + 1)
        );
    }
}
