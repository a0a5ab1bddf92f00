//! Models of user runtime estimates (Tsafrir's thesis, chapters 3 and 5).
//!
//! An estimate is the job's kill time; schedulers plan with it. Four models give estimates to
//! jobs whose runtimes are known:
//!
//! * [`EstimateModel::Exact`]: the runtime itself (perfect estimates, f = 0).
//! * [`EstimateModel::F`]: the f-model (Feitelson & Mu'alem Weil; thesis section 5.2): random,
//!   uniform in [r, (f + 1) r], or deterministic, (f + 1) r; truncated at E_max when one is given
//!   (the "truncated f-model" of section 3.8: min(e, E_max)).
//! * [`EstimateModel::Phi`]: the Phi-model (Mu'alem & Feitelson; thesis section 1.2.2): with
//!   probability Phi the runtime; otherwise r / u with u uniform in (0, 1], times 10 when
//!   r < 90 s, truncated at E_max.
//! * [`EstimateModel::Modal`]: Tsafrir's modal model (chapter 5): the estimates of a whole
//!   workload as a series of modes (value, share of jobs), about twenty "head" values holding
//!   89 % of the jobs (E_max the most popular) and a power-law tail ([`Modes::generate`]).
//!
//! Two ways to apply a model: [`EstimateModel::assign`] gives a whole job set its estimates at
//! once (replay; for the modal model by the random-shuffle algorithm of section 5.12.2, so every
//! mode gets its share of jobs), and [`EstimateModel::for_runtime`] gives one job its estimate
//! when it is generated (the closed loop, where jobs are not known in advance; for the modal
//! model a mode drawn by share among the modes not shorter than the runtime).
//!
//! Estimates below the runtime are possible only through truncation at E_max (or when no mode
//! is long enough); such jobs are killed at their estimate, as Tsafrir truncated runtimes above
//! E_max.

use rand::Rng;

use crate::Time;

/// Seconds in a minute and an hour.
const MINUTE: Time = 60;
const HOUR: Time = 3600;

/// An estimate model with its parameters (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub enum EstimateModel {
    /// The estimate is the runtime.
    Exact,
    /// The f-model.
    F {
        /// The badness factor f >= 0.
        f: f64,
        /// `true`: (f + 1) r; `false`: uniform in [r, (f + 1) r].
        deterministic: bool,
        /// E_max, seconds: estimates above it are truncated to it. `None`: no truncation.
        max: Option<Time>,
    },
    /// The Phi-model.
    Phi {
        /// Probability that the estimate equals the runtime, in [0, 1].
        phi: f64,
        /// E_max, seconds ("outrageous" estimates are truncated to it).
        max: Time,
    },
    /// Tsafrir's modal model: a fixed series of modes.
    Modal(Modes),
}

impl EstimateModel {
    /// One job's estimate, given its runtime (seconds), drawn independently of other jobs.
    pub fn for_runtime<R: Rng + ?Sized>(&self, runtime: Time, rng: &mut R) -> Time {
        let runtime = runtime.max(0);
        match self {
            EstimateModel::Exact => runtime,
            EstimateModel::F {
                f,
                deterministic,
                max,
            } => {
                let factor = if *deterministic {
                    1.0 + f
                } else {
                    1.0 + f * rng.random::<f64>()
                };
                let estimate = seconds_at_least(runtime as f64 * factor, runtime);
                max.map_or(estimate, |m| estimate.min(m))
            }
            EstimateModel::Phi { phi, max } => {
                if rng.random::<f64>() < *phi {
                    return runtime.min(*max);
                }
                // u in (0, 1]: 1 - [0, 1).
                let u = 1.0 - rng.random::<f64>();
                let mut estimate = runtime as f64 / u;
                if runtime < 90 {
                    estimate *= 10.0;
                }
                seconds_at_least(estimate.min(*max as f64), runtime).min(*max)
            }
            EstimateModel::Modal(modes) => modes.draw_at_least(runtime, rng),
        }
    }

    /// Estimates for a whole job set with these `runtimes` (seconds), in the same order. The
    /// f- and Phi-models draw each job independently; the modal model gives each mode its share
    /// of the jobs (rounded by largest remainders) and pairs estimates with runtimes by the
    /// random-shuffle algorithm ([`random_shuffle`]).
    pub fn assign<R: Rng + ?Sized>(&self, runtimes: &[Time], rng: &mut R) -> Vec<Time> {
        match self {
            EstimateModel::Modal(modes) => {
                let pool = modes.estimates_for(runtimes.len());
                random_shuffle(runtimes, pool, rng)
            }
            _ => runtimes.iter().map(|&r| self.for_runtime(r, rng)).collect(),
        }
    }
}

/// `x` seconds rounded up to a whole second, and never below `least`.
fn seconds_at_least(x: f64, least: Time) -> Time {
    if !x.is_finite() || x >= Time::MAX as f64 {
        return Time::MAX;
    }
    (x.ceil() as Time).max(least)
}

/// The random-shuffle algorithm (thesis, section 5.12.2): pairs the `estimates` (one per job)
/// with the jobs' `runtimes` so that every estimate is at least its runtime. Runtimes are taken
/// from the longest down; each gets an estimate drawn uniformly from those still unused and not
/// shorter than it. A runtime longer than every unused estimate gets the longest unused one (the
/// job will be killed there). Returns the estimates in the order of `runtimes`. O(N log N).
pub fn random_shuffle<R: Rng + ?Sized>(
    runtimes: &[Time],
    mut estimates: Vec<Time>,
    rng: &mut R,
) -> Vec<Time> {
    debug_assert_eq!(runtimes.len(), estimates.len());
    estimates.sort_unstable();
    let mut order: Vec<usize> = (0..runtimes.len()).collect();
    // Longest runtime first; ties in job order, so the result does not depend on the sort.
    order.sort_by_key(|&i| (std::cmp::Reverse(runtimes[i]), i));
    let mut result = vec![0; runtimes.len()];
    // Unused estimates not shorter than the current runtime (they stay eligible as runtimes
    // shrink), and the shorter ones still in `estimates[..unseen]`.
    let mut eligible: Vec<Time> = Vec::new();
    let mut unseen = estimates.len();
    for i in order {
        let runtime = runtimes[i];
        while unseen > 0 && estimates[unseen - 1] >= runtime {
            unseen -= 1;
            eligible.push(estimates[unseen]);
        }
        result[i] = if eligible.is_empty() {
            match unseen.checked_sub(1) {
                Some(last) => {
                    unseen = last;
                    estimates[last]
                }
                None => runtime, // more runtimes than estimates (never, by contract)
            }
        } else {
            let pick = rng.random_range(0..eligible.len());
            eligible.swap_remove(pick)
        };
    }
    result
}

/// A bad parameter of an estimate model.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EstimateError {
    /// E_max must be positive.
    #[error("the maximal estimate E_max must be at least 60 s, got {0} s")]
    BadMax(Time),
    /// A share is not in (0, 1].
    #[error("the share of a mode must lie in (0, 1], got {0}")]
    BadShare(f64),
    /// The given modes hold more than every job.
    #[error("the given modes hold {0:.3} of the jobs together; at most 1")]
    SharesAboveOne(f64),
    /// A given mode is not a positive estimate up to E_max.
    #[error("a given mode of {time} s lies outside (0, E_max = {max} s]")]
    BadModeTime {
        /// The mode's time.
        time: Time,
        /// E_max.
        max: Time,
    },
    /// Two given modes have the same time.
    #[error("the mode {0} s is given twice")]
    DuplicateMode(Time),
    /// The f of the f-model must be a number >= 0.
    #[error("f must be a finite number >= 0, got {0}")]
    BadF(f64),
    /// Phi must be a probability.
    #[error("Phi must lie in [0, 1], got {0}")]
    BadPhi(f64),
    /// More given modes than the head holds.
    #[error("at most 20 modes can be given, got {0}")]
    TooManyModes(usize),
}

/// Checks the f-model's f.
pub fn check_f(f: f64) -> Result<f64, EstimateError> {
    if f.is_finite() && f >= 0.0 {
        Ok(f)
    } else {
        Err(EstimateError::BadF(f))
    }
}

/// Checks the Phi-model's Phi.
pub fn check_phi(phi: f64) -> Result<f64, EstimateError> {
    if (0.0..=1.0).contains(&phi) {
        Ok(phi)
    } else {
        Err(EstimateError::BadPhi(phi))
    }
}

/// The inputs of the modal model (thesis, section 5.11).
#[derive(Debug, Clone, PartialEq)]
pub struct ModalParams {
    /// N: how many jobs the estimates are for (it sets K, the number of distinct estimates).
    pub jobs: usize,
    /// E_max, the largest estimate allowed (seconds); by default the most popular one.
    pub max: Time,
    /// Modes the user knows (section 5.10.4): (estimate in seconds, share of the jobs). A mode at
    /// E_max sets its share (the "semi-mandatory" third parameter).
    pub given: Vec<(Time, f64)>,
}

/// The jobs' estimates as modes: (estimate in seconds, share of the jobs), ascending by estimate;
/// the shares sum to 1.
#[derive(Debug, Clone, PartialEq)]
pub struct Modes {
    modes: Vec<(Time, f64)>,
    /// Cumulative shares, for drawing.
    cumulative: Vec<f64>,
}

/// Times every population uses (Table 5.5: the 15 "joint" head values of the four traces).
const JOINT_TIMES: [Time; 15] = [
    5 * MINUTE,
    10 * MINUTE,
    15 * MINUTE,
    20 * MINUTE,
    30 * MINUTE,
    HOUR,
    2 * HOUR,
    3 * HOUR,
    4 * HOUR,
    5 * HOUR,
    6 * HOUR,
    8 * HOUR,
    10 * HOUR,
    12 * HOUR,
    18 * HOUR,
];

/// Section 5.10.2, step 3: the round units whose multiples complete the head, largest first.
const ROUND_UNITS: [Time; 10] = [
    200 * HOUR,
    100 * HOUR,
    50 * HOUR,
    10 * HOUR,
    5 * HOUR,
    2 * HOUR,
    HOUR,
    20 * MINUTE,
    10 * MINUTE,
    5 * MINUTE,
];

/// How many head modes there are (section 5.6: about 20 values hold 89 % of the jobs).
const HEAD: usize = 20;
/// The head's share of the jobs (section 5.9).
const HEAD_MASS: f64 = 0.89;

/// Table 5.6 (reconstructed from the thesis's text extraction; each column is a permutation of
/// 1..20): for top-20 time rank `ttr` (row), the popularity rank of that estimate in SDSC-106,
/// CTC, KTH4H and BLUE.
const F_LOG: [[usize; 4]; 20] = [
    [3, 1, 1, 1],
    [1, 3, 4, 6],
    [4, 4, 10, 5],
    [17, 2, 14, 3],
    [13, 12, 20, 7],
    [7, 9, 2, 2],
    [8, 8, 3, 18],
    [18, 18, 7, 19],
    [2, 6, 12, 4],
    [6, 7, 6, 11],
    [16, 11, 19, 20],
    [10, 20, 5, 9],
    [5, 16, 18, 10],
    [15, 5, 16, 14],
    [14, 14, 9, 13],
    [19, 13, 17, 16],
    [11, 10, 15, 15],
    [12, 15, 13, 17],
    [9, 17, 8, 8],
    [20, 19, 11, 12],
];

/// Section 5.7, Table 5.3: K (distinct estimates) against N (jobs), linear between the points
/// and with the last slope beyond them.
fn distinct_estimates(jobs: usize) -> usize {
    const POINTS: [(f64, f64); 7] = [
        (0.0, 0.0),
        (20.0, 10.0),
        (200.0, 20.0),
        (1_000.0, 35.0),
        (10_000.0, 90.0),
        (70_000.0, 340.0),
        (250_000.0, 565.0),
    ];
    let n = jobs as f64;
    let k = POINTS
        .windows(2)
        .find(|w| n <= w[1].0)
        .map(|w| w[0].1 + (n - w[0].0) * (w[1].1 - w[0].1) / (w[1].0 - w[0].0))
        .unwrap_or(565.0 + (n - 250_000.0) / 800.0);
    // At least the head and one tail value.
    (k.round() as usize).max(HEAD + 1)
}

/// Section 5.8: F_tim(i) = E_max (a - 1) x / (a - x), x = i / K, with a = 1 + 12.1 K^-0.6
/// (Fig. 5.6); values rounded to whole minutes unless that collides with an earlier one.
fn time_values(k: usize, max: Time) -> Vec<Time> {
    let a = 1.0 + 12.1 * (k as f64).powf(-0.6);
    let mut times: Vec<Time> = Vec::with_capacity(k);
    let mut used = std::collections::HashSet::new();
    for i in 1..=k {
        let x = i as f64 / k as f64;
        let exact = max as f64 * (a - 1.0) * x / (a - x);
        let mut t = if i == k {
            max
        } else {
            let rounded = ((exact / 60.0).round() as Time) * 60;
            if rounded > 0 && !used.contains(&rounded) {
                rounded
            } else {
                (exact.ceil() as Time).max(1)
            }
        };
        while used.contains(&t) {
            t += 1;
        }
        used.insert(t);
        times.push(t);
    }
    times.sort_unstable();
    times
}

/// Section 5.10.2: the head times: E_max, the joint times below it, then multiples of the round
/// units below it, largest unit first and each in descending order, until there are 20.
fn head_times(max: Time) -> Vec<Time> {
    let mut head = vec![max];
    let push = |t: Time, head: &mut Vec<Time>| {
        if head.len() < HEAD && t > 0 && t < max && !head.contains(&t) {
            head.push(t);
        }
    };
    for t in JOINT_TIMES {
        push(t, &mut head);
    }
    for unit in ROUND_UNITS {
        let mut multiple = (max - 1) / unit * unit;
        while multiple > 0 && head.len() < HEAD {
            push(multiple, &mut head);
            multiple -= unit;
        }
    }
    head
}

/// Section 5.9: F_pop for ranks 1..=K, as shares of the jobs (descending). The head follows
/// alpha e^(beta i) + gamma (alpha 14.05, beta -0.18, gamma 0.46; percent) for ranks 2..20,
/// rank 1 takes the rest of the head's 89 %, and the tail follows omega i^rho (omega 795.6,
/// rho -2.27) scaled to the remaining 11 %.
fn popularity(k: usize) -> Vec<f64> {
    let head = |i: usize| 14.05 * (-0.18 * i as f64).exp() + 0.46;
    let rest: f64 = (2..=HEAD).map(head).sum();
    let mut sizes = vec![(89.0 - rest) / 100.0];
    sizes.extend((2..=HEAD).map(|i| head(i) / 100.0));
    let tail: Vec<f64> = (HEAD + 1..=k)
        .map(|i| 795.6 * (i as f64).powf(-2.27))
        .collect();
    let lambda: f64 = tail.iter().sum();
    sizes.extend(tail.iter().map(|t| t * (1.0 - HEAD_MASS) / lambda));
    sizes
}

impl Modes {
    /// Modes from explicit (estimate, share) pairs, e.g. a trace's own. Shares are normalized
    /// to sum to 1; pairs with a share of 0 are dropped.
    pub fn from_pairs(mut pairs: Vec<(Time, f64)>) -> Modes {
        pairs.retain(|&(_, p)| p > 0.0);
        pairs.sort_by_key(|&(t, _)| t);
        let total: f64 = pairs.iter().map(|&(_, p)| p).sum();
        let modes: Vec<(Time, f64)> = pairs.into_iter().map(|(t, p)| (t, p / total)).collect();
        let cumulative = modes
            .iter()
            .scan(0.0, |sum, &(_, p)| {
                *sum += p;
                Some(*sum)
            })
            .collect();
        Modes { modes, cumulative }
    }

    /// Generates the modes of the modal model (section 5.11): K from N; K time values by F_tim;
    /// the 20 head times (E_max, the joint times, round multiples) replace the nearest of them;
    /// K shares by F_pop; given modes replace the nearest head time and head share (E_max and
    /// the largest share only by a mode at E_max), the other head shares are scaled to keep the
    /// head at 89 %; head times are mapped to head shares by the pool algorithm (E_max to the
    /// largest share unless given), tail times to tail shares uniformly at random.
    pub fn generate<R: Rng + ?Sized>(
        params: &ModalParams,
        rng: &mut R,
    ) -> Result<Modes, EstimateError> {
        let max = params.max;
        if max < MINUTE {
            return Err(EstimateError::BadMax(max));
        }
        if params.given.len() > HEAD {
            return Err(EstimateError::TooManyModes(params.given.len()));
        }
        let mut given_total = 0.0;
        for (i, &(t, p)) in params.given.iter().enumerate() {
            if !(p > 0.0 && p <= 1.0) {
                return Err(EstimateError::BadShare(p));
            }
            if t <= 0 || t > max {
                return Err(EstimateError::BadModeTime { time: t, max });
            }
            if params.given[..i].iter().any(|&(u, _)| u == t) {
                return Err(EstimateError::DuplicateMode(t));
            }
            given_total += p;
        }
        if given_total > 1.0 + 1e-9 {
            return Err(EstimateError::SharesAboveOne(given_total));
        }
        let k = distinct_estimates(params.jobs);

        // Times: F_tim, with the head times replacing the nearest values.
        let mut times = time_values(k, max);
        let mut head = head_times(max);
        // Given times replace the nearest head time (never E_max unless given at E_max).
        let mut given_at: Vec<Option<usize>> = vec![None; head.len()];
        for (g, &(t, _)) in params.given.iter().enumerate() {
            let slot = if t == max {
                Some(0)
            } else {
                (1..head.len())
                    .filter(|&h| given_at[h].is_none())
                    .min_by_key(|&h| (head[h] - t).abs())
            };
            match slot {
                Some(h) => {
                    head[h] = t;
                    given_at[h] = Some(g);
                }
                None => {
                    // More given modes than head slots: add one.
                    head.push(t);
                    given_at.push(Some(g));
                }
            }
        }
        replace_nearest(&mut times, &head);

        // Shares: F_pop for K ranks; the head is the first `head.len()` of them.
        let mut shares = popularity(times.len());
        let head_count = head.len().min(shares.len());
        let emax_given = given_at[0].is_some();
        // Given shares replace the nearest default head share (rank 1 only for E_max's mode).
        let mut rank_of_given: Vec<Option<usize>> = vec![None; params.given.len()];
        let mut taken = vec![false; head_count];
        if let Some(g) = given_at[0] {
            rank_of_given[g] = Some(0);
            taken[0] = true;
        }
        for (g, &(_, p)) in params.given.iter().enumerate() {
            if rank_of_given[g].is_some() {
                continue;
            }
            let first = if emax_given { 0 } else { 1 };
            if let Some(r) = (first..head_count)
                .filter(|&r| !taken[r])
                .min_by(|&a, &b| (shares[a] - p).abs().total_cmp(&(shares[b] - p).abs()))
            {
                taken[r] = true;
                rank_of_given[g] = Some(r);
            }
        }
        for (g, rank) in rank_of_given.iter().enumerate() {
            if let Some(r) = *rank {
                shares[r] = params.given[g].1;
            }
        }
        // The other head shares keep the head at 89 % (or vanish if the given ones exceed it).
        let others: f64 = (0..head_count)
            .filter(|&r| !taken[r])
            .map(|r| shares[r])
            .sum();
        let room = HEAD_MASS - given_total;
        let scale = if room > 0.0 && others > 0.0 {
            room / others
        } else {
            0.0
        };
        for r in (0..head_count).filter(|&r| !taken[r]) {
            shares[r] *= scale;
        }

        // Map head times to head ranks: E_max (ttr 0) to rank 1 unless given, the given modes to
        // their shares, the rest by the pool algorithm.
        let mut head_sorted: Vec<(Time, Option<usize>)> = head
            .iter()
            .zip(&given_at)
            .skip(1)
            .map(|(&t, &g)| (t, g))
            .collect();
        head_sorted.sort_by_key(|&(t, _)| t);
        let mut rank_of_ttr: Vec<usize> = Vec::with_capacity(head_count);
        let mut mapped = vec![false; head_count];
        let emax_rank = given_at[0].and_then(|g| rank_of_given[g]).unwrap_or(0);
        mapped[emax_rank] = true;
        for &r in rank_of_given.iter().flatten() {
            mapped[r] = true;
        }
        rank_of_ttr.push(emax_rank);
        pool_algorithm(
            &head_sorted,
            &rank_of_given,
            &mut mapped,
            &mut rank_of_ttr,
            rng,
        );

        let mut modes: Vec<(Time, f64)> = Vec::with_capacity(times.len());
        modes.push((max, shares[rank_of_ttr[0]]));
        for (ttr, &(t, _)) in head_sorted.iter().enumerate() {
            modes.push((t, shares[rank_of_ttr[ttr + 1]]));
        }
        // Tail: the remaining times and the tail shares, matched uniformly at random.
        let head_set: std::collections::HashSet<Time> = modes.iter().map(|&(t, _)| t).collect();
        let tail_times: Vec<Time> = times
            .into_iter()
            .filter(|t| !head_set.contains(t))
            .collect();
        let mut tail_shares: Vec<f64> = shares[head_count..].to_vec();
        tail_shares.truncate(tail_times.len());
        shuffle(&mut tail_shares, rng);
        modes.extend(tail_times.into_iter().zip(tail_shares));
        // Head shares that were scaled to zero disappear; the rest is normalized to 1.
        Ok(Modes::from_pairs(modes))
    }

    /// The modes: (estimate in seconds, share of the jobs), ascending by estimate.
    pub fn modes(&self) -> &[(Time, f64)] {
        &self.modes
    }

    /// The share of the jobs on the `n` most popular modes.
    pub fn top_share(&self, n: usize) -> f64 {
        let mut shares: Vec<f64> = self.modes.iter().map(|&(_, p)| p).collect();
        shares.sort_by(|a, b| b.total_cmp(a));
        shares.iter().take(n).sum()
    }

    /// One estimate per job for `jobs` jobs: each mode gets round(share x jobs) of them, the
    /// rounding done by largest remainders so that the counts add up to `jobs`.
    pub fn estimates_for(&self, jobs: usize) -> Vec<Time> {
        let exact: Vec<f64> = self.modes.iter().map(|&(_, p)| p * jobs as f64).collect();
        let mut counts: Vec<usize> = exact.iter().map(|x| x.floor() as usize).collect();
        let assigned: usize = counts.iter().sum();
        let mut by_remainder: Vec<usize> = (0..counts.len()).collect();
        by_remainder.sort_by(|&a, &b| {
            let (ra, rb) = (exact[a] - exact[a].floor(), exact[b] - exact[b].floor());
            rb.total_cmp(&ra).then(a.cmp(&b))
        });
        for &i in by_remainder.iter().take(jobs.saturating_sub(assigned)) {
            counts[i] += 1;
        }
        self.modes
            .iter()
            .zip(counts)
            .flat_map(|(&(t, _), n)| std::iter::repeat_n(t, n))
            .collect()
    }

    /// One estimate for a job of `runtime` seconds: a mode drawn by share among those not
    /// shorter than the runtime; the longest mode if none is.
    pub fn draw_at_least<R: Rng + ?Sized>(&self, runtime: Time, rng: &mut R) -> Time {
        let first = self.modes.partition_point(|&(t, _)| t < runtime);
        let Some(&(longest, _)) = self.modes.last() else {
            return runtime;
        };
        if first == self.modes.len() {
            return longest;
        }
        let below = if first == 0 {
            0.0
        } else {
            self.cumulative[first - 1]
        };
        let total = self.cumulative[self.modes.len() - 1];
        let x = below + rng.random::<f64>() * (total - below);
        let i = self.cumulative[first..].partition_point(|&c| c <= x) + first;
        self.modes[i.min(self.modes.len() - 1)].0
    }
}

/// Replaces, for each head time (longest first), the nearest value of `times` not replaced yet.
fn replace_nearest(times: &mut Vec<Time>, head: &[Time]) {
    let mut replaced = vec![false; times.len()];
    let mut by_length: Vec<Time> = head.to_vec();
    by_length.sort_unstable_by(|a, b| b.cmp(a));
    for h in by_length {
        if let Some(i) = (0..times.len())
            .filter(|&i| !replaced[i])
            .min_by_key(|&i| ((times[i] - h).abs(), std::cmp::Reverse(times[i])))
        {
            times[i] = h;
            replaced[i] = true;
        }
    }
    times.sort_unstable();
    times.dedup();
}

/// The pool algorithm (section 5.10.3): for each head time in ascending order (top-20 time rank
/// 1, 2, ...; given modes skipped), Table 5.6's popularity ranks for that row that are not mapped
/// yet join the pool; a rank that has reached four occurrences is taken at once (the smallest
/// such), otherwise two entries are drawn and the smaller (more popular) rank is taken; the
/// taken rank leaves the pool.
fn pool_algorithm<R: Rng + ?Sized>(
    head_sorted: &[(Time, Option<usize>)],
    rank_of_given: &[Option<usize>],
    mapped: &mut [bool],
    rank_of_ttr: &mut Vec<usize>,
    rng: &mut R,
) {
    let ranks = mapped.len();
    let mut pool: Vec<usize> = Vec::new();
    for (i, &(_, given)) in head_sorted.iter().enumerate() {
        let ttr = i + 1;
        if let Some(g) = given {
            rank_of_ttr.push(rank_of_given[g].unwrap_or(0));
            continue;
        }
        if let Some(row) = F_LOG.get(ttr) {
            for &rank in row {
                let r = rank - 1; // 0-based
                if r < ranks && !mapped[r] {
                    pool.push(r);
                }
            }
        }
        let four = (0..ranks)
            .filter(|&r| !mapped[r] && pool.iter().filter(|&&p| p == r).count() >= 4)
            .min();
        let choice = match four {
            Some(r) => Some(r),
            None if !pool.is_empty() => {
                let a = pool[rng.random_range(0..pool.len())];
                let b = pool[rng.random_range(0..pool.len())];
                Some(a.min(b))
            }
            // An empty pool (only with given modes or a short head): the most popular rank left.
            None => (0..ranks).find(|&r| !mapped[r]),
        };
        let r = choice.unwrap_or(0);
        mapped[r] = true;
        pool.retain(|&p| p != r);
        rank_of_ttr.push(r);
    }
}

/// Fisher-Yates.
fn shuffle<T, R: Rng + ?Sized>(items: &mut [T], rng: &mut R) {
    for i in (1..items.len()).rev() {
        let j = rng.random_range(0..=i);
        items.swap(i, j);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_pcg::Pcg64;

    fn rng() -> Pcg64 {
        Pcg64::seed_from_u64(7)
    }

    #[test]
    fn f_model_by_hand() {
        let det = EstimateModel::F {
            f: 3.0,
            deterministic: true,
            max: None,
        };
        assert_eq!(det.for_runtime(100, &mut rng()), 400);
        let truncated = EstimateModel::F {
            f: 3.0,
            deterministic: true,
            max: Some(300),
        };
        assert_eq!(truncated.for_runtime(100, &mut rng()), 300);
        assert_eq!(
            truncated.for_runtime(500, &mut rng()),
            300,
            "killed at E_max"
        );
        let random = EstimateModel::F {
            f: 1.0,
            deterministic: false,
            max: None,
        };
        let mut r = rng();
        let draws: Vec<Time> = (0..2000)
            .map(|_| random.for_runtime(1000, &mut r))
            .collect();
        assert!(draws.iter().all(|&e| (1000..=2000).contains(&e)));
        let mean = draws.iter().sum::<Time>() as f64 / draws.len() as f64;
        assert!(
            (mean - 1500.0).abs() < 20.0,
            "uniform in [r, 2r]: mean {mean}"
        );
        assert_eq!(EstimateModel::Exact.for_runtime(42, &mut r), 42);
    }

    #[test]
    fn phi_model_by_hand() {
        let all_exact = EstimateModel::Phi {
            phi: 1.0,
            max: 10_000,
        };
        assert_eq!(all_exact.for_runtime(500, &mut rng()), 500);
        let never = EstimateModel::Phi {
            phi: 0.0,
            max: 1_000_000,
        };
        let mut r = rng();
        // r / u >= r; short jobs (< 90 s) get 10 times that.
        for _ in 0..1000 {
            assert!(never.for_runtime(500, &mut r) >= 500);
            assert!(never.for_runtime(60, &mut r) >= 600);
        }
        // Median of r / u is 2r.
        let mut draws: Vec<Time> = (0..4001).map(|_| never.for_runtime(1000, &mut r)).collect();
        draws.sort_unstable();
        assert!((draws[2000] - 2000).abs() < 150, "median {}", draws[2000]);
        let truncated = EstimateModel::Phi {
            phi: 0.0,
            max: 1500,
        };
        assert!((0..1000).all(|_| truncated.for_runtime(1000, &mut r) <= 1500));
        // A third of r / u (u uniform) lies above 3r.
        let share = draws.iter().filter(|&&e| e > 3000).count() as f64 / draws.len() as f64;
        assert!((share - 1.0 / 3.0).abs() < 0.03, "{share}");
    }

    #[test]
    fn k_follows_table_5_3() {
        assert_eq!(distinct_estimates(1_000), 35);
        assert_eq!(distinct_estimates(10_000), 90);
        assert_eq!(distinct_estimates(40_000), 215); // halfway from 90 to 340
        assert_eq!(distinct_estimates(250_000), 565);
        assert_eq!(distinct_estimates(330_000), 665);
        assert_eq!(
            distinct_estimates(5),
            21,
            "at least the head and one tail value"
        );
    }

    #[test]
    fn popularity_is_section_5_9s() {
        let p = popularity(100);
        let head: f64 = p[..20].iter().sum();
        assert!((head - 0.89).abs() < 1e-12);
        assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Rank 2: 14.05 e^-0.36 + 0.46 = 10.26 %.
        assert!((p[1] - (14.05 * (-0.36f64).exp() + 0.46) / 100.0).abs() < 1e-12);
        // Rank 1 is "a bit more than 20 %".
        assert!(p[0] > 0.20 && p[0] < 0.23, "{}", p[0]);
        assert!(p.windows(2).all(|w| w[0] >= w[1]));
    }

    #[test]
    fn head_times_of_ctc_are_those_of_table_5_5() {
        let head = head_times(18 * HOUR);
        assert_eq!(head.len(), 20);
        // E_max, the 14 joint times below 18 h, then 15 h (5 h unit), 16 h and 14 h (2 h), 17 h
        // and 13 h (1 h). CTC's real top 20 also holds 15, 16 and 17 h.
        for t in [15, 16, 14, 17, 13] {
            assert!(head.contains(&(t * HOUR)), "{t} h");
        }
        assert!(head.iter().all(|&t| t <= 18 * HOUR));
        // A 4-hour maximum (KTH4H): 4 h and the joint times below it, then multiples of 1 h,
        // 20, 10 and 5 minutes.
        let kth = head_times(4 * HOUR);
        assert_eq!(kth.len(), 20);
        assert!(kth.contains(&(3 * HOUR + 40 * MINUTE)) && kth.contains(&(3 * HOUR + 20 * MINUTE)));
    }

    #[test]
    fn time_values_follow_the_fractional_function() {
        let t = time_values(100, 18 * HOUR);
        assert_eq!(t.len(), 100);
        assert_eq!(*t.last().unwrap(), 18 * HOUR);
        // a = 1 + 12.1 * 100^-0.6 = 1.7638; F_tim(50) = E_max * 0.7638 * 0.5 / 1.2638.
        let a: f64 = 1.0 + 12.1 * 100f64.powf(-0.6);
        let expected = 64_800.0 * (a - 1.0) * 0.5 / (a - 0.5);
        assert!(
            (t[49] as f64 - expected).abs() <= 30.0,
            "{} vs {expected}",
            t[49]
        );
        assert!(t.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn modal_model_has_a_head_of_89_percent_and_emax_most_popular() {
        let params = ModalParams {
            jobs: 77_222,
            max: 18 * HOUR,
            given: vec![],
        };
        for seed in 0..20 {
            let modes = Modes::generate(&params, &mut Pcg64::seed_from_u64(seed)).unwrap();
            let m = modes.modes();
            assert!((m.iter().map(|x| x.1).sum::<f64>() - 1.0).abs() < 1e-9);
            assert!(
                (modes.top_share(20) - 0.89).abs() < 1e-9,
                "{}",
                modes.top_share(20)
            );
            let (t, p) = *m.last().unwrap();
            assert_eq!(t, 18 * HOUR);
            assert!(
                (p - modes.top_share(1)).abs() < 1e-12,
                "E_max is the most popular"
            );
            // K from Table 5.3 for 77,222 jobs: 340 + 7222 / 800.
            assert_eq!(m.len(), 349);
            assert!(m.windows(2).all(|w| w[0].0 < w[1].0));
        }
    }

    #[test]
    fn given_modes_are_embedded() {
        // BLUE's "improved" setting: E_max 36 h at 1 %, 2 h at 27 %, 15 and 30 min.
        let params = ModalParams {
            jobs: 50_000,
            max: 36 * HOUR,
            given: vec![
                (36 * HOUR, 0.01),
                (2 * HOUR, 0.27),
                (15 * MINUTE, 0.16),
                (30 * MINUTE, 0.18),
            ],
        };
        let modes = Modes::generate(&params, &mut rng()).unwrap();
        let share = |t: Time| modes.modes().iter().find(|m| m.0 == t).map(|m| m.1);
        assert!((share(2 * HOUR).unwrap() - 0.27).abs() < 1e-9);
        assert!((share(36 * HOUR).unwrap() - 0.01).abs() < 1e-9);
        assert!((share(15 * MINUTE).unwrap() - 0.16).abs() < 1e-9);
        // The head holds 89 %; once the given modes take most of it, the other head shares are
        // small and the largest tail modes may overtake them, so the top 20 hold a bit more.
        let top = modes.top_share(20);
        assert!((0.89 - 1e-9..0.93).contains(&top), "{top}");
        assert!((modes.top_share(1) - 0.27).abs() < 1e-9);
    }

    #[test]
    fn bad_modal_parameters_are_refused() {
        let mut p = ModalParams {
            jobs: 1000,
            max: 0,
            given: vec![],
        };
        assert_eq!(
            Modes::generate(&p, &mut rng()),
            Err(EstimateError::BadMax(0))
        );
        p.max = HOUR;
        p.given = vec![(2 * HOUR, 0.1)];
        assert!(matches!(
            Modes::generate(&p, &mut rng()),
            Err(EstimateError::BadModeTime { .. })
        ));
        p.given = vec![(600, 0.7), (1200, 0.6)];
        assert!(matches!(
            Modes::generate(&p, &mut rng()),
            Err(EstimateError::SharesAboveOne(_))
        ));
        p.given = vec![(600, -0.1)];
        assert!(matches!(
            Modes::generate(&p, &mut rng()),
            Err(EstimateError::BadShare(_))
        ));
        assert!(check_f(-1.0).is_err() && check_f(f64::NAN).is_err());
        assert!(check_phi(1.5).is_err());
    }

    #[test]
    fn random_shuffle_respects_runtimes_and_keeps_the_estimates() {
        let runtimes = vec![10, 500, 3000, 0, 3600, 20, 7000];
        let estimates = vec![3600, 60, 600, 7200, 3600, 60, 7200];
        let mut r = rng();
        for _ in 0..50 {
            let got = random_shuffle(&runtimes, estimates.clone(), &mut r);
            assert!(got.iter().zip(&runtimes).all(|(e, rt)| e >= rt), "{got:?}");
            let (mut a, mut b) = (got.clone(), estimates.clone());
            a.sort_unstable();
            b.sort_unstable();
            assert_eq!(a, b, "a permutation of the estimates");
        }
        // A runtime longer than every estimate gets the longest one.
        assert_eq!(
            random_shuffle(&[100, 5], vec![50, 10], &mut r),
            vec![50, 10]
        );
    }

    #[test]
    fn counts_add_up_and_draws_respect_the_runtime() {
        let modes = Modes::from_pairs(vec![(60, 0.5), (600, 0.3), (3600, 0.2)]);
        let e = modes.estimates_for(7);
        assert_eq!(e.len(), 7);
        assert_eq!(e.iter().filter(|&&t| t == 60).count(), 4); // 3.5, 2.1, 1.4 -> 4, 2, 1
        let mut r = rng();
        for _ in 0..500 {
            assert!(modes.draw_at_least(100, &mut r) >= 600);
        }
        assert_eq!(modes.draw_at_least(10_000, &mut r), 3600);
        // 600 and 3600 in proportion 3:2 among runtimes above 60 s.
        let long = (0..10_000)
            .filter(|_| modes.draw_at_least(61, &mut r) == 3600)
            .count();
        assert!((long as f64 / 10_000.0 - 0.4).abs() < 0.02, "{long}");
    }
}
