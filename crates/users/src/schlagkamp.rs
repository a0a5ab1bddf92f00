//! Schlagkamp's user model (paper 004, section 2): weekly activity, day-of-week weights, fixed
//! working hours, and per-user job profiles over sizes with normal runtimes per size.
//!
//! The session dynamics (one job at a time, the next submitted a think time tt = m r + b after
//! the last one ended, delayed to the next working day when that falls outside the working
//! hours) run in the population's state machine like the Shmueli model's, with batches of one
//! job and no break; sessions are the runs of jobs within one working day.

use rand::Rng;
use rand_pcg::Pcg64;
use statrs::distribution::{ContinuousCDF, Normal};

use crate::Time;
use crate::config::{SchlagkampParams, SizeClass};
use crate::cycle::Calendar;

/// When a Schlagkamp user works. Each week (Monday to Sunday) the user is active with
/// probability p_a (eq. 1); in an active week, it works on day d with probability
/// p_d / max(p) (eq. 2 read as the spread of its working time over the week: the busiest days
/// are always worked, and the expected share of working days on day d is p_d); on a working day
/// from t_b to t_e (eqs. 3-4). Weeks are drawn lazily, in order, from the user's own stream, so
/// they do not depend on the scheduler.
#[derive(Debug)]
pub struct WeeklyWindow {
    calendar: Calendar,
    start: Time,
    end: Time,
    activity_ratio: f64,
    day_probability: [f64; 7],
    rng: Pcg64,
    /// Working days of each week drawn so far (bit d = day d), from the run's first week.
    weeks: Vec<u8>,
    first_week: i64,
}

/// How far ahead a window looks for its next opening before it gives up (a user who is never
/// active): 100 years of days.
const LOOKAHEAD_DAYS: i64 = 36_525;

impl WeeklyWindow {
    /// A user's window from its group's parameters and its activity stream.
    pub fn new(params: &SchlagkampParams, calendar: Calendar, rng: Pcg64) -> WeeklyWindow {
        let busiest = params.day_weights.iter().cloned().fold(0.0, f64::max);
        let day_probability = params
            .day_weights
            .map(|w| if busiest > 0.0 { w / busiest } else { 0.0 });
        WeeklyWindow {
            first_week: calendar.day(0).div_euclid(7),
            calendar,
            start: params.work_start,
            end: params.work_end,
            activity_ratio: params.activity_ratio,
            day_probability,
            rng,
            weeks: Vec::new(),
        }
    }

    /// Whether the user works on calendar day `day`.
    fn works_on(&mut self, day: i64) -> bool {
        let week = day.div_euclid(7) - self.first_week;
        if week < 0 {
            return false;
        }
        while self.weeks.len() <= week as usize {
            // Eight draws a week whatever they decide, so every week uses the same numbers.
            let active = self.rng.random::<f64>() < self.activity_ratio;
            let mut days = 0u8;
            for (d, p) in self.day_probability.iter().enumerate() {
                if self.rng.random::<f64>() < *p && active {
                    days |= 1 << d;
                }
            }
            self.weeks.push(days);
        }
        self.weeks[week as usize] & (1 << day.rem_euclid(7)) != 0
    }

    /// Whether `t` lies in working hours of a working day.
    pub fn is_active(&mut self, t: Time) -> bool {
        let second = self.calendar.second_of_day(t);
        (self.start..self.end).contains(&second) && self.works_on(self.calendar.day(t))
    }

    /// The next start of working hours at or after `t` (`Time::MAX` if the user never works).
    pub fn next_opening(&mut self, t: Time) -> Time {
        let today = self.calendar.day(t);
        for day in today..today + LOOKAHEAD_DAYS {
            let opening = self.calendar.time_of(day, self.start);
            if opening >= t && self.works_on(day) {
                return opening;
            }
        }
        Time::MAX
    }
}

/// A job drawn from a Schlagkamp profile: its size (at most `processors`, the machine's: "the
/// job size is reduced to system size") and a runtime from the size's normal distribution,
/// truncated to positive values and rounded to whole seconds (at least 1 s).
pub fn draw_job(sizes: &[SizeClass], processors: u32, rng: &mut Pcg64) -> (u32, Time) {
    let u: f64 = rng.random();
    let mut cumulative = 0.0;
    let class = sizes
        .iter()
        .find(|c| {
            cumulative += c.probability;
            u < cumulative
        })
        .or_else(|| sizes.iter().rev().find(|c| c.probability > 0.0))
        .copied()
        .unwrap_or(SizeClass {
            processors: 1,
            probability: 1.0,
            runtime_mean: 0.0,
            runtime_sd: 0.0,
        });
    let v: f64 = rng.random();
    let runtime = match Normal::new(class.runtime_mean, class.runtime_sd) {
        Ok(normal) if class.runtime_sd > 0.0 => {
            // Inverse transform on (0, inf): u in [F(0), 1).
            let below = normal.cdf(0.0);
            normal.inverse_cdf(below + v * (1.0 - below))
        }
        _ => class.runtime_mean,
    };
    let runtime = if runtime.is_finite() {
        (runtime.round() as Time).max(1)
    } else {
        1
    };
    (class.processors.min(processors).max(1), runtime)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cycle::{DAY, WEEK};
    use rand::SeedableRng;

    fn window(p: &SchlagkampParams, seed: u64) -> WeeklyWindow {
        WeeklyWindow::new(p, Calendar::monday_midnight(), Pcg64::seed_from_u64(seed))
    }

    #[test]
    fn a_week_is_all_or_nothing_and_weekends_are_free() {
        let p = SchlagkampParams::artificial();
        let mut w = window(&p, 3);
        let mut active_weeks = 0;
        for week in 0..2000 {
            let worked: Vec<bool> = (0..7)
                .map(|d| w.is_active(week * WEEK + d * DAY + 10 * 3600))
                .collect();
            // Fig. 6: p_d = 0.2 Monday to Friday, so all five weekdays or none.
            assert!(worked[..5].iter().all(|&x| x == worked[0]), "{worked:?}");
            assert!(!worked[5] && !worked[6]);
            active_weeks += usize::from(worked[0]);
        }
        // p_a = 0.5.
        assert!(
            (active_weeks as f64 / 2000.0 - 0.5).abs() < 0.04,
            "{active_weeks}"
        );
        // Hours: 09:00-17:00.
        let mut always = SchlagkampParams::artificial();
        always.activity_ratio = 1.0;
        let mut w = window(&always, 1);
        assert!(!w.is_active(9 * 3600 - 1) && w.is_active(9 * 3600) && !w.is_active(17 * 3600));
        // Friday 17:00 -> Monday 09:00.
        assert_eq!(w.next_opening(4 * DAY + 17 * 3600), WEEK + 9 * 3600);
        assert_eq!(w.next_opening(DAY + 3600), DAY + 9 * 3600);
    }

    #[test]
    fn day_weights_spread_the_work() {
        let mut p = SchlagkampParams::artificial();
        p.activity_ratio = 1.0;
        // Monday twice as busy as Tuesday: Monday always, Tuesday half the weeks.
        p.day_weights = [2.0 / 3.0, 1.0 / 3.0, 0.0, 0.0, 0.0, 0.0, 0.0];
        let mut w = window(&p, 5);
        let (mut mon, mut tue) = (0, 0);
        for week in 0..4000 {
            mon += usize::from(w.is_active(week * WEEK + 10 * 3600));
            tue += usize::from(w.is_active(week * WEEK + DAY + 10 * 3600));
        }
        assert_eq!(mon, 4000);
        assert!((tue as f64 / 4000.0 - 0.5).abs() < 0.03, "{tue}");
        let never = SchlagkampParams {
            activity_ratio: 0.0,
            ..SchlagkampParams::artificial()
        };
        assert_eq!(window(&never, 1).next_opening(0), Time::MAX);
    }

    #[test]
    fn jobs_follow_the_profile_and_fit_the_machine() {
        let p = SchlagkampParams::artificial();
        let mut rng = Pcg64::seed_from_u64(9);
        let n = 40_000;
        let jobs: Vec<(u32, Time)> = (0..n).map(|_| draw_job(&p.sizes, 1024, &mut rng)).collect();
        let share = |size: u32| jobs.iter().filter(|j| j.0 == size).count() as f64 / n as f64;
        assert!((share(64) - 0.3).abs() < 0.01);
        assert_eq!(share(1) + share(2), 0.0);
        // 1024-processor jobs: N(4 h, 2 h) truncated at 0, whose mean is
        // mu + sigma phi(2) / Phi(2) = 14400 + 7200 * 0.05399 / 0.97725 = 14797.8 s.
        let long: Vec<f64> = jobs
            .iter()
            .filter(|j| j.0 == 1024)
            .map(|j| j.1 as f64)
            .collect();
        let mean = long.iter().sum::<f64>() / long.len() as f64;
        assert!((mean - 14_797.8).abs() < 200.0, "{mean}");
        assert!(jobs.iter().all(|j| j.1 >= 1));
        // On 128 processors, the larger sizes become 128.
        let small: Vec<u32> = (0..2000)
            .map(|_| draw_job(&p.sizes, 128, &mut rng).0)
            .collect();
        assert!(small.iter().all(|&s| s <= 128));
        assert!(small.iter().filter(|&&s| s == 128).count() > 2000 * 3 / 10);
    }

    #[test]
    fn think_time_is_linear_in_the_response() {
        let p = SchlagkampParams::artificial();
        assert_eq!(p.think_time(0), 1779);
        assert_eq!(p.think_time(1000), 1779 + 483); // 0.4826 * 1000 = 482.6
    }
}
