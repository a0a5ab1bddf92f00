//! Simulated time, shared by every crate of sitesim so that there is one `Time` type.
//!
//! Time is whole seconds since the run's epoch (DESIGN.md, "Time and determinism"): a trace's
//! first submit in replay, the calendar start of a site-level run (by default a Monday 00:00).
//! It is a plain `i64` so that arithmetic stays cheap and explicit; the constants below name
//! its units. Which calendar date time 0 is lives with the users (`users::Calendar`), the only
//! part of the simulation that cares about time of day and day of week.

/// Simulated time or a duration: whole seconds since the run's epoch.
pub type Time = i64;

/// One minute, seconds.
pub const MINUTE: Time = 60;
/// One hour, seconds.
pub const HOUR: Time = 60 * MINUTE;
/// One day, seconds.
pub const DAY: Time = 24 * HOUR;
/// One week, seconds.
pub const WEEK: Time = 7 * DAY;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units() {
        assert_eq!(HOUR, 3_600);
        assert_eq!(DAY, 86_400);
        assert_eq!(WEEK, 604_800);
    }
}
