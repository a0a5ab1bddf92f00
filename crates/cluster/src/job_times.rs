//! A map from job to time (a planned start) for the rules that keep one for every waiting job
//! (conservative backfilling, dynP's kept placements), looked up for every waiting job at every
//! pass.
//!
//! Why not a `HashMap`: the engine numbers jobs 0, 1, 2, ... in submission order, so a vector
//! indexed by the id is both smaller per entry and much faster than hashing (the default hasher
//! cost conservative backfilling a fifth of its time). The cluster's API accepts any id,
//! though: an id far beyond the ids seen so far goes to a hash map instead of growing the
//! vector to it, so sparse ids cost memory in proportion to the jobs, not to the largest id.

use std::collections::HashMap;

use crate::{JobId, Time};

/// The vector's marker for "no entry" (no planned start is ever the beginning of time).
const NONE: Time = Time::MIN;

/// Job -> time: a vector indexed by id for dense ids, a hash map for the rest.
#[derive(Debug, Clone, Default)]
pub(crate) struct JobTimes {
    /// `dense[id]` for ids below its length; [`NONE`] where there is no entry.
    dense: Vec<Time>,
    /// Entries whose id was too far beyond `dense` to grow it when inserted (all ids at or
    /// beyond `dense.len()`).
    sparse: HashMap<JobId, Time>,
}

/// How far beyond its length the vector grows for a new id: ids in submission order arrive a
/// few at a time, so anything further is not dense.
const GROWTH: usize = 4096;

impl JobTimes {
    /// The time stored for `id`, if any.
    pub(crate) fn get(&self, id: JobId) -> Option<Time> {
        match self.dense.get(id.0 as usize) {
            Some(&time) => (time != NONE).then_some(time),
            None if self.sparse.is_empty() => None,
            None => self.sparse.get(&id).copied(),
        }
    }

    /// Stores `time` for `id` (replacing any earlier one). `time` is not `Time::MIN`.
    pub(crate) fn insert(&mut self, id: JobId, time: Time) {
        debug_assert_ne!(time, NONE, "Time::MIN cannot be stored");
        let index = id.0 as usize;
        if index >= self.dense.len() && index <= 2 * self.dense.len() + GROWTH {
            self.dense.resize(index + 1, NONE);
            if !self.sparse.is_empty() {
                // Entries the vector now covers move into it.
                let dense = &mut self.dense;
                self.sparse
                    .retain(|id, time| match dense.get_mut(id.0 as usize) {
                        Some(slot) => {
                            *slot = *time;
                            false
                        }
                        None => true,
                    });
            }
        }
        match self.dense.get_mut(index) {
            Some(slot) => *slot = time,
            None => {
                self.sparse.insert(id, time);
            }
        }
    }

    /// Removes the entry of `id`, if any.
    pub(crate) fn remove(&mut self, id: JobId) {
        match self.dense.get_mut(id.0 as usize) {
            Some(slot) => *slot = NONE,
            None => {
                self.sparse.remove(&id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dense_and_sparse_ids_agree_with_a_hash_map() {
        let mut map = JobTimes::default();
        let mut model = HashMap::new();
        let ids = [
            0, 5, 3, 100_000, 4, 9000, 50_000, 20_000, 1_000_000, 7, 100_001,
        ];
        for (n, &id) in ids.iter().enumerate() {
            let (id, time) = (JobId(id), n as Time * 10);
            map.insert(id, time);
            model.insert(id, time);
            if n % 3 == 2 {
                map.remove(JobId(ids[n - 1]));
                model.remove(&JobId(ids[n - 1]));
            }
            for probe in ids.iter().chain(&[1, 2, u32::MAX]) {
                let probe = JobId(*probe);
                assert_eq!(map.get(probe), model.get(&probe).copied(), "{probe:?}");
            }
        }
        assert!(
            map.dense.len() < 100_000,
            "sparse ids do not grow the vector"
        );
    }
}
