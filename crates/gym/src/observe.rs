//! The observation: a flat float32 vector of the window's jobs (oldest first) and the machine,
//! each value in [0, 1] except the clock's sines and cosines (in [-1, 1]). Durations are
//! log-scaled, L(x, m) = min(1, ln(1 + x) / ln(1 + m)), so that seconds and weeks both stay
//! visible. `docs/guide/gym.md` has the table.

/// Names of a window slot's features, in order (an empty slot is all zeros).
pub const JOB_FEATURES: [&str; 13] = [
    "present",
    "wait",
    "estimate",
    "predicted_runtime",
    "processors",
    "fits_now",
    "earliest_start",
    "user_recent_bsld",
    "user_jobs_waiting",
    "user_in_session",
    "user_batch_in_flight",
    "user_session_age",
    "user_session_jobs",
];

/// Names of the machine's features, in order, after the window's.
pub const MACHINE_FEATURES: [&str; 16] = [
    "free",
    "running_jobs",
    "waiting_jobs",
    "hidden_share",
    "free_in_10min",
    "free_in_1h",
    "free_in_4h",
    "free_in_12h",
    "free_in_1d",
    "free_in_3d",
    "day_sin",
    "day_cos",
    "week_sin",
    "week_cos",
    "users_in_session",
    "users_with_batch",
];

/// Floats in an observation for a window of `window` jobs.
pub fn observation_size(window: usize) -> usize {
    window * JOB_FEATURES.len() + MACHINE_FEATURES.len()
}

/// Durations' scale, seconds: a week.
pub(crate) const WEEK: f64 = 7.0 * 86_400.0;

/// The horizons of the `free_in_*` features, seconds.
pub(crate) const HORIZONS: [i64; 6] = [600, 3_600, 4 * 3_600, 12 * 3_600, 86_400, 3 * 86_400];

/// L(x, m) = min(1, ln(1 + x) / ln(1 + m)), 0 for x <= 0.
pub(crate) fn log_scaled(x: f64, m: f64) -> f32 {
    if x <= 0.0 {
        return 0.0;
    }
    ((x.ln_1p() / m.ln_1p()).min(1.0)) as f32
}

/// L(x, m) in single precision, for the features computed at every step: `inverse` is
/// 1 / ln(1 + m).
pub(crate) fn log_scaled_f32(x: f32, inverse: f32) -> f32 {
    if x <= 0.0 {
        return 0.0;
    }
    (x.ln_1p() * inverse).min(1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_scale_is_bounded_and_monotone() {
        assert_eq!(log_scaled(-5.0, WEEK), 0.0);
        assert_eq!(log_scaled(0.0, WEEK), 0.0);
        assert!(log_scaled(60.0, WEEK) < log_scaled(3600.0, WEEK));
        assert_eq!(log_scaled(WEEK, WEEK), 1.0);
        assert_eq!(log_scaled(10.0 * WEEK, WEEK), 1.0);
        assert_eq!(observation_size(128), 128 * 13 + 16);
        let inverse = (1.0 / WEEK.ln_1p()) as f32;
        for x in [1.0, 60.0, 3600.0, 86_400.0] {
            assert!((log_scaled_f32(x as f32, inverse) - log_scaled(x, WEEK)).abs() < 1e-6);
        }
    }
}
