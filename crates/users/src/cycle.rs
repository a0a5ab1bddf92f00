//! The activity-cycles model (paper 000, section III-B.3): each user is active during the day
//! (07:30-17:30) or the night (17:30-07:30), on weekdays (Monday-Friday) or weekends, with a
//! personal shift of the window; outside it the user sleeps until the window opens again.
//!
//! Simulated time has no daylight saving: the site runs on its local wall clock.

use chrono::{Datelike, NaiveDateTime, Timelike};

use crate::Time;
pub use simtime::{DAY, WEEK};

/// Where the run's time 0 falls in the week.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calendar {
    /// Seconds from the Monday 00:00 at or before the start to the start.
    offset: Time,
}

impl Calendar {
    /// Time 0 is Monday 00:00 (the default).
    pub fn monday_midnight() -> Calendar {
        Calendar { offset: 0 }
    }

    /// Time 0 is `start` (its weekday and time of day matter, not its date).
    pub fn starting_at(start: NaiveDateTime) -> Calendar {
        let weekday = Time::from(start.weekday().num_days_from_monday());
        let second = Time::from(start.num_seconds_from_midnight());
        Calendar {
            offset: weekday * DAY + second,
        }
    }

    /// Seconds since a Monday 00:00 at simulated time `t`.
    fn local(&self, t: Time) -> Time {
        t + self.offset
    }

    /// 0 = Monday .. 6 = Sunday at time `t`.
    pub fn weekday(&self, t: Time) -> u32 {
        self.local(t).div_euclid(DAY).rem_euclid(7) as u32
    }

    /// Seconds since local midnight at time `t`.
    pub fn second_of_day(&self, t: Time) -> Time {
        self.local(t).rem_euclid(DAY)
    }

    /// The calendar day at time `t`: whole days since the Monday 00:00 at or before time 0
    /// (day 0 is that Monday).
    pub fn day(&self, t: Time) -> i64 {
        self.local(t).div_euclid(DAY)
    }

    /// The simulated time of `second` seconds after midnight on calendar day `day`.
    pub fn time_of(&self, day: i64, second: Time) -> Time {
        day * DAY + second - self.offset
    }
}

/// Which part of the day a user works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DayPart {
    /// From the day start to the day end.
    Day,
    /// From the day end to the next day's start.
    Night,
}

/// Which days a user works. A night window belongs to the day on which it opens: a weekday-night
/// user works from Monday to Friday evening (until Saturday morning).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Days {
    /// Monday to Friday.
    Weekdays,
    /// Saturday and Sunday.
    Weekends,
}

/// One user's activity window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ActivityWindow {
    /// Day or night.
    pub part: DayPart,
    /// Weekdays or weekends.
    pub days: Days,
    /// The personal shift of the window, seconds (the paper draws minutes in [-60, 60]).
    pub shift: Time,
    /// Start of the day, seconds after midnight (07:30 = 27000).
    pub day_start: Time,
    /// End of the day, seconds after midnight (17:30 = 63000).
    pub day_end: Time,
    /// The calendar.
    pub calendar: Calendar,
}

impl ActivityWindow {
    fn works_on(&self, day: Time) -> bool {
        let weekday = day.rem_euclid(7);
        match self.days {
            Days::Weekdays => weekday < 5,
            Days::Weekends => weekday >= 5,
        }
    }

    /// Whether the user is active at time `t`.
    pub fn is_active(&self, t: Time) -> bool {
        // Shifting the clock back by the shift is shifting the window forward.
        let local = self.calendar.local(t) - self.shift;
        let day = local.div_euclid(DAY);
        let second = local.rem_euclid(DAY);
        match self.part {
            DayPart::Day => (self.day_start..self.day_end).contains(&second) && self.works_on(day),
            DayPart::Night if second >= self.day_end => self.works_on(day),
            DayPart::Night if second < self.day_start => self.works_on(day - 1),
            DayPart::Night => false,
        }
    }

    /// The earliest time at or after `t` at which the user is active.
    pub fn next_opening(&self, t: Time) -> Time {
        if self.is_active(t) {
            return t;
        }
        let local = self.calendar.local(t) - self.shift;
        let opens_at = match self.part {
            DayPart::Day => self.day_start,
            DayPart::Night => self.day_end,
        };
        let today = local.div_euclid(DAY);
        // Some day of the next eight opens a window: each kind of day occurs at least twice a week.
        (today..today + 9)
            .map(|day| day * DAY + opens_at)
            .find(|&opening| opening >= local && self.works_on(opening.div_euclid(DAY)))
            .map_or(t + WEEK, |opening| {
                opening + self.shift - self.calendar.offset
            })
    }
}

/// Parses `HH:MM` into seconds after midnight.
pub fn parse_clock(text: &str) -> Option<Time> {
    let (h, m) = text.trim().split_once(':')?;
    let (h, m): (Time, Time) = (h.parse().ok()?, m.parse().ok()?);
    ((0..24).contains(&h) && (0..60).contains(&m)).then_some(h * 3600 + m * 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    const H: Time = 3600;
    const M: Time = 60;

    fn window(part: DayPart, days: Days, shift_minutes: Time) -> ActivityWindow {
        ActivityWindow {
            part,
            days,
            shift: shift_minutes * M,
            day_start: 7 * H + 30 * M,
            day_end: 17 * H + 30 * M,
            calendar: Calendar::monday_midnight(),
        }
    }

    /// Simulated time of weekday `d` (0 = Monday of week 0) at hh:mm.
    fn at(d: Time, hh: Time, mm: Time) -> Time {
        d * DAY + hh * H + mm * M
    }

    #[test]
    fn day_window_boundaries() {
        let w = window(DayPart::Day, Days::Weekdays, 0);
        assert!(!w.is_active(at(0, 7, 29)));
        assert!(w.is_active(at(0, 7, 30)));
        assert!(w.is_active(at(0, 17, 29)));
        assert!(!w.is_active(at(0, 17, 30)));
        assert!(w.is_active(at(4, 12, 0))); // Friday
        assert!(!w.is_active(at(5, 12, 0))); // Saturday
        assert_eq!(w.next_opening(at(0, 3, 0)), at(0, 7, 30));
        assert_eq!(w.next_opening(at(0, 17, 30)), at(1, 7, 30));
        // Friday evening: sleeps until Monday morning.
        assert_eq!(w.next_opening(at(4, 18, 0)), at(7, 7, 30));
        assert_eq!(w.next_opening(at(0, 9, 0)), at(0, 9, 0));
    }

    #[test]
    fn night_windows_cross_midnight_and_belong_to_the_opening_day() {
        let w = window(DayPart::Night, Days::Weekdays, 0);
        assert!(w.is_active(at(0, 17, 30))); // Monday evening
        assert!(w.is_active(at(1, 2, 0))); // Tuesday 02:00: Monday's night
        assert!(!w.is_active(at(1, 7, 30)));
        assert!(!w.is_active(at(0, 2, 0))); // Monday 02:00: Sunday's night, not a weekday's
        assert!(w.is_active(at(5, 6, 0))); // Saturday 06:00: Friday's night
        assert!(!w.is_active(at(5, 20, 0))); // Saturday evening
        assert_eq!(w.next_opening(at(5, 8, 0)), at(7, 17, 30)); // Saturday -> Monday evening

        let weekend = window(DayPart::Night, Days::Weekends, 0);
        assert!(weekend.is_active(at(0, 2, 0))); // Monday 02:00: Sunday's night
        assert!(weekend.is_active(at(5, 20, 0)));
        assert!(!weekend.is_active(at(5, 6, 0)));
        assert_eq!(weekend.next_opening(at(1, 12, 0)), at(5, 17, 30));
    }

    #[test]
    fn weekend_day_users_work_saturday_and_sunday() {
        let w = window(DayPart::Day, Days::Weekends, 0);
        assert!(w.is_active(at(5, 10, 0)) && w.is_active(at(6, 10, 0)));
        assert!(!w.is_active(at(0, 10, 0)));
        assert_eq!(w.next_opening(at(6, 18, 0)), at(12, 7, 30)); // Sunday evening -> next Saturday
    }

    #[test]
    fn shifts_move_the_window() {
        let late = window(DayPart::Day, Days::Weekdays, 20);
        assert!(!late.is_active(at(0, 7, 45)));
        assert!(late.is_active(at(0, 7, 50)));
        assert!(late.is_active(at(0, 17, 45)));
        assert!(!late.is_active(at(0, 17, 50)));
        let early = window(DayPart::Night, Days::Weekdays, -60);
        assert!(early.is_active(at(0, 16, 30)));
        assert_eq!(early.next_opening(at(0, 12, 0)), at(0, 16, 30));
        assert!(!early.is_active(at(1, 6, 30)));
        // A shift can carry a night window of Friday past Saturday's midnight and no further.
        assert!(early.is_active(at(5, 6, 29)));
    }

    #[test]
    fn the_calendar_start_sets_weekday_and_hour() {
        let start = chrono::NaiveDate::from_ymd_opt(2024, 1, 6) // a Saturday
            .unwrap()
            .and_hms_opt(12, 0, 0)
            .unwrap();
        let calendar = Calendar::starting_at(start);
        assert_eq!(calendar.weekday(0), 5);
        assert_eq!(calendar.second_of_day(0), 12 * H);
        let w = ActivityWindow {
            calendar,
            ..window(DayPart::Day, Days::Weekdays, 0)
        };
        assert!(!w.is_active(0));
        // Saturday noon -> Monday 07:30 is 1 day 19.5 hours later.
        assert_eq!(w.next_opening(0), DAY + 19 * H + 30 * M);
    }

    #[test]
    fn clock_parsing() {
        assert_eq!(parse_clock("07:30"), Some(27_000));
        assert_eq!(parse_clock("24:00"), None);
        assert_eq!(parse_clock("7h30"), None);
    }

    proptest::proptest! {
        /// next_opening is active, no earlier active second exists within the searched span
        /// (checked at minute resolution), and it is within a week.
        #[test]
        fn next_opening_is_the_first_active_moment(
            t in 0i64..4 * WEEK, night in proptest::bool::ANY, weekend in proptest::bool::ANY, shift in -60i64..=60,
        ) {
            let w = window(
                if night { DayPart::Night } else { DayPart::Day },
                if weekend { Days::Weekends } else { Days::Weekdays },
                shift,
            );
            let open = w.next_opening(t);
            proptest::prop_assert!(open >= t && open - t < WEEK);
            proptest::prop_assert!(w.is_active(open));
            let mut probe = t;
            while probe < open {
                proptest::prop_assert!(!w.is_active(probe), "active at {} before {}", probe, open);
                probe += 60;
            }
        }
    }
}
