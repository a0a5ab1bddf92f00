//! Random streams. Each user draws from its own streams, derived from (run seed, user index,
//! purpose), so users do not disturb each other, and two runs with the same seed give every user
//! the same profile and the same sequence of job attributes whatever the scheduler does (common
//! random numbers: paired comparisons need it). Decisions (continue or break, think times) have
//! their own stream, so a different decision does not shift the job sequence.

use rand_pcg::Pcg64;

/// What a stream is used for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The user's class and shift, drawn once.
    Profile = 1,
    /// Job attributes, repetitions, estimates, batch widths and gaps.
    Jobs = 2,
    /// Continue or break, think times and breaks.
    Decisions = 3,
    /// Runtime estimates of estimate models other than the fitted one (per user).
    Estimates = 4,
    /// A group's modal estimate modes (the stream's "user" is the group's index).
    EstimateModes = 5,
    /// Memory-bandwidth demand classes of the user's jobs.
    Bandwidth = 6,
    /// The user's resource profile and its jobs' GPUs ([`crate::resources::ResourceMix`]).
    Resources = 7,
}

/// The streams a user's behaviour draws from (its profile stream is handed to the behaviour
/// once, when the user is built). Each is [`stream`] of the run's seed, the user's index and its
/// purpose.
#[derive(Debug)]
pub struct Streams {
    /// [`Purpose::Jobs`]: job attributes, repetitions, batch widths and gaps.
    pub jobs: Pcg64,
    /// [`Purpose::Decisions`]: continue or break, think times and breaks.
    pub decisions: Pcg64,
    /// [`Purpose::Estimates`]: estimates of estimate models other than the fitted one.
    pub estimates: Pcg64,
}

impl Streams {
    /// The streams of `user` in a run with `seed`.
    pub fn new(seed: u64, user: u32) -> Streams {
        Streams {
            jobs: stream(seed, user, Purpose::Jobs),
            decisions: stream(seed, user, Purpose::Decisions),
            estimates: stream(seed, user, Purpose::Estimates),
        }
    }
}

/// SplitMix64 (Steele, Lea & Flood 2014): spreads nearby seeds over the whole state space.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The stream of `user` for `purpose` in a run with `seed`: a PCG-64 generator whose state comes
/// from the seed and the user, and whose stream id (PCG's increment) separates users and purposes.
pub fn stream(seed: u64, user: u32, purpose: Purpose) -> Pcg64 {
    let key = splitmix64(seed ^ splitmix64(u64::from(user) << 8 | purpose as u64));
    let state =
        u128::from(splitmix64(key)) << 64 | u128::from(splitmix64(key ^ 0x5851_f42d_4c95_7f2d));
    Pcg64::new(state, u128::from(user) << 8 | purpose as u128)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn streams_are_reproducible_and_distinct() {
        let draw = |seed, user, purpose| -> Vec<u64> {
            let mut rng = stream(seed, user, purpose);
            (0..4).map(|_| rng.random()).collect()
        };
        assert_eq!(draw(1, 7, Purpose::Jobs), draw(1, 7, Purpose::Jobs));
        assert_ne!(draw(1, 7, Purpose::Jobs), draw(2, 7, Purpose::Jobs));
        assert_ne!(draw(1, 7, Purpose::Jobs), draw(1, 8, Purpose::Jobs));
        assert_ne!(draw(1, 7, Purpose::Jobs), draw(1, 7, Purpose::Decisions));
    }
}
