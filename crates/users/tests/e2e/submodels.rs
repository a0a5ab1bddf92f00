//! Each sub-model on its own, driving a population by hand (no scheduler): batch release, session
//! dynamics, activity cycles, two-level sampling, the horizon, profiles, common random numbers.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::sync::Arc;

use metrics::SessionEnd;
use usermodel::{Ecdf, Model};
use users::cycle::{DAY, WEEK};
use users::{
    BatchGaps, Calendar, Completion, DayPart, Days, EstimateModelSpec, EstimateSpec, Feedback,
    Group, GroupParams, Population, SchlagkampParams, ShmueliParams, SizeClass, Submission,
    UserFactory,
};

const H: i64 = 3600;
const OPEN: i64 = 7 * H + 30 * 60; // Monday 07:30

fn constant(v: i64) -> Ecdf {
    Ecdf::from_values(&[v], 10).unwrap()
}

/// A model where every draw is known: batches of `width` jobs of `runtime` s, repeated `repeat`
/// times, think time 300 s, break 3600 s, gaps of 60 s.
fn model(width: i64, repeat: i64, sizes: &[i64], runtime: i64) -> Model {
    Model {
        think_time: constant(0),
        think_short: constant(300),
        think_break: constant(3600),
        continuation: Vec::new(),
        size: Ecdf::from_values(sizes, 2000).unwrap(),
        runtime: constant(runtime),
        size_repetition: constant(repeat),
        batch_width: constant(width),
        batch_gap: Some(constant(60)),
        session_length: constant(1),
        estimate: None,
        daily: None,
        weekly: None,
    }
}

/// Day users on weekdays, no shift; continue with probability `a / (b r + 1)`.
fn params(a: f64, b: f64) -> ShmueliParams {
    ShmueliParams {
        feedback: Feedback::Response,
        continue_a: a,
        continue_b: b,
        day_probability: 1.0,
        weekday_probability: 1.0,
        day_start: OPEN,
        day_end: 17 * H + 30 * 60,
        shift_minutes: 0,
        repeat_jobs: true,
        batch_gaps: BatchGaps::None,
    }
}

/// A group's parameters of `kind`, with fitted estimates and no bandwidth demands.
fn group(kind: impl UserFactory + 'static) -> GroupParams {
    GroupParams::new(kind)
}

fn population(users: u32, params: GroupParams, model: Model, horizon: i64) -> Population {
    let group = Group {
        name: "g".into(),
        users,
        params,
        model: Arc::new(model),
    };
    Population::new(vec![group], 7, Calendar::monday_midnight(), horizon, 4096).unwrap()
}

fn take(p: &mut Population, now: i64) -> Vec<Submission> {
    let mut out = Vec::new();
    p.take_submissions(now, &mut out);
    out
}

fn end(p: &mut Population, s: &Submission, at: i64) {
    p.job_ended(&Completion {
        job_id: s.job_id,
        user: s.user,
        submit: s.submit,
        start: s.submit,
        end: at,
        lost: None,
    });
}

#[test]
fn a_batch_is_released_at_once_and_the_next_waits_for_all_of_it() {
    let mut p = population(1, group(params(1.0, 0.0)), model(3, 1, &[4], 600), WEEK);
    assert_eq!(p.next_submission(), Some(OPEN)); // arrives at work at 07:30 sharp
    let batch = take(&mut p, OPEN);
    assert_eq!(batch.len(), 3);
    assert!(
        batch
            .iter()
            .all(|s| s.submit == OPEN && s.preceding.is_none())
    );
    assert_eq!(
        p.next_submission(),
        None,
        "no new batch while the batch runs"
    );
    end(&mut p, &batch[0], OPEN + 600);
    end(&mut p, &batch[2], OPEN + 900);
    assert_eq!(p.next_submission(), None, "one job of the batch still runs");
    end(&mut p, &batch[1], OPEN + 700);
    // Complete at OPEN + 900 (the latest end, job 3); always continue; think 300 s.
    assert_eq!(p.next_submission(), Some(OPEN + 1200));
    let next = take(&mut p, OPEN + 1200);
    assert_eq!(next.len(), 3);
    assert_eq!(next[0].preceding, Some((batch[2].job_id, 300)));
}

#[test]
fn a_job_lost_to_a_failure_is_resubmitted_after_the_think_time_within_its_batch() {
    let mut p = population(1, group(params(1.0, 0.0)), model(2, 1, &[4], 600), WEEK);
    let batch = take(&mut p, OPEN);
    assert_eq!(batch.len(), 2);
    end(&mut p, &batch[0], OPEN + 600);
    // the second job is lost to a node failure 100 s into its run
    let lost = &batch[1];
    p.job_ended(&Completion {
        job_id: lost.job_id,
        user: lost.user,
        submit: lost.submit,
        start: lost.submit,
        end: OPEN + 100,
        lost: Some(users::submission::JobAttributes {
            processors: lost.processors,
            runtime: lost.runtime,
            estimate: lost.estimate,
        }),
    });
    // resubmitted after the short think time (300 s), as a new job of the same batch, with
    // the same attributes; the batch is not complete meanwhile
    assert_eq!(p.next_submission(), Some(OPEN + 400));
    let again = take(&mut p, OPEN + 400);
    assert_eq!(again.len(), 1);
    let again = &again[0];
    assert_ne!(again.job_id, lost.job_id);
    assert_eq!(
        (again.processors, again.runtime, again.estimate, again.batch),
        (lost.processors, lost.runtime, lost.estimate, lost.batch)
    );
    assert_eq!(
        p.next_submission(),
        None,
        "the batch waits for the resubmitted job"
    );
    end(&mut p, again, OPEN + 1000);
    // complete at OPEN + 1000; think 300 s
    assert_eq!(p.next_submission(), Some(OPEN + 1300));
    let batches = p.take_batches();
    assert_eq!(batches.len(), 1);
    assert_eq!(
        batches[0].jobs, 3,
        "the resubmission counts as a job of its batch"
    );
}

#[test]
fn a_failed_continue_trial_is_a_break_that_ends_the_session() {
    let mut p = population(1, group(params(0.0, 0.0)), model(2, 1, &[4], 60), WEEK);
    let batch = take(&mut p, OPEN);
    for s in &batch {
        end(&mut p, s, OPEN + 60);
    }
    assert_eq!(p.next_submission(), Some(OPEN + 60 + 3600));
    let sessions = p.finish();
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(
        (s.jobs, s.start, s.end, s.ended_by),
        (2, OPEN, OPEN + 60, SessionEnd::Abort)
    );
}

#[test]
fn the_continue_probability_follows_the_response() {
    // p = 0.8 / (0.05 r + 1): after a 1-minute response about 0.76 continue, after 60 minutes 0.2.
    let share = |runtime: i64| {
        let mut p = population(
            2000,
            group(params(0.8, 0.05)),
            model(1, 1, &[1], runtime),
            WEEK,
        );
        let jobs = take(&mut p, OPEN);
        for s in &jobs {
            end(&mut p, s, OPEN + runtime);
        }
        let think = OPEN + runtime + 300;
        let continued = take(&mut p, think).len();
        continued as f64 / jobs.len() as f64
    };
    let short = share(60);
    let long = share(3600);
    assert!((short - 0.8 / 1.05).abs() < 0.03, "{short}");
    assert!((long - 0.2).abs() < 0.03, "{long}");
}

#[test]
fn the_activity_cycle_suspends_the_user_until_the_window_opens() {
    // The batch ends at 17:40 on Monday, after the window: the session ends by the cycle and the
    // user comes back on Tuesday at 07:30.
    let mut p = population(1, group(params(1.0, 0.0)), model(1, 1, &[4], 60), 2 * WEEK);
    let first = take(&mut p, OPEN);
    end(&mut p, &first[0], 17 * H + 40 * 60);
    assert_eq!(p.next_submission(), Some(DAY + OPEN));
    // Friday: a think time that would end after 17:30 sends the user home until Monday.
    let tuesday = take(&mut p, DAY + OPEN);
    let friday_late = 4 * DAY + 17 * H + 28 * 60;
    end(&mut p, &tuesday[0], friday_late);
    assert_eq!(p.next_submission(), Some(friday_late + 300));
    assert!(take(&mut p, friday_late + 300).is_empty());
    assert_eq!(p.next_submission(), Some(WEEK + OPEN));
    let sessions = p.finish();
    let ends: Vec<SessionEnd> = sessions.iter().map(|s| s.ended_by).collect();
    assert_eq!(ends, [SessionEnd::Cycle, SessionEnd::Cycle]);
    assert_eq!(sessions[1].end, friday_late + 300);
}

#[test]
fn two_level_sampling_repeats_attributes_the_drawn_number_of_times() {
    let sizes: Vec<i64> = (1..=1000).collect();
    let drawn = |repeat: bool| -> Vec<u32> {
        let mut params = params(1.0, 0.0);
        params.repeat_jobs = repeat;
        let mut p = population(1, group(params), model(12, 3, &sizes, 60), WEEK);
        take(&mut p, OPEN).iter().map(|s| s.processors).collect()
    };
    let repeated = drawn(true);
    for triple in repeated.chunks(3) {
        assert!(triple.iter().all(|&s| s == triple[0]), "{repeated:?}");
    }
    assert!(
        repeated
            .chunks(3)
            .zip(repeated.chunks(3).skip(1))
            .any(|(a, b)| a[0] != b[0])
    );
    let fresh = drawn(false);
    assert!(
        fresh.windows(2).filter(|w| w[0] == w[1]).count() < 3,
        "{fresh:?}"
    );
}

#[test]
fn fitted_gaps_spread_a_batch() {
    let mut params = params(1.0, 0.0);
    params.batch_gaps = BatchGaps::Fitted;
    let mut p = population(1, group(params), model(3, 1, &[4], 600), WEEK);
    assert_eq!(take(&mut p, OPEN).len(), 1);
    assert_eq!(p.next_submission(), Some(OPEN + 60));
    assert_eq!(take(&mut p, OPEN + 60).len(), 1);
    assert_eq!(take(&mut p, OPEN + 120).len(), 1);
    assert_eq!(p.next_submission(), None);
}

#[test]
fn nothing_starts_at_or_after_the_horizon_and_open_sessions_end_with_the_run() {
    let horizon = OPEN + 500;
    let mut p = population(1, group(params(1.0, 0.0)), model(1, 1, &[4], 100), horizon);
    let first = take(&mut p, OPEN);
    end(&mut p, &first[0], OPEN + 100);
    // Think time 300 s: the next batch would start at OPEN + 400, before the horizon.
    let second = take(&mut p, OPEN + 400);
    end(&mut p, &second[0], OPEN + 500);
    assert_eq!(p.next_submission(), None);
    let sessions = p.finish();
    assert_eq!(
        (sessions[0].jobs, sessions[0].end, sessions[0].ended_by),
        (2, horizon, SessionEnd::EndOfRun)
    );
}

#[test]
fn user_classes_and_shifts_follow_their_probabilities() {
    let mut params = params(1.0, 0.0);
    params.day_probability = 0.7;
    params.weekday_probability = 0.8;
    params.shift_minutes = 60;
    let p = population(20_000, group(params), model(1, 1, &[1], 1), WEEK);
    let profiles = p.profiles();
    let share = |f: &dyn Fn(&users::Profile) -> bool| {
        profiles.iter().filter(|x| f(x)).count() as f64 / profiles.len() as f64
    };
    let cycles: Vec<(DayPart, Days, i64)> = profiles.iter().filter_map(|x| x.cycle).collect();
    assert_eq!(cycles.len(), profiles.len());
    assert!((share(&|x| x.cycle.is_some_and(|c| c.0 == DayPart::Day)) - 0.7).abs() < 0.015);
    assert!((share(&|x| x.cycle.is_some_and(|c| c.1 == Days::Weekdays)) - 0.8).abs() < 0.015);
    assert!(cycles.iter().all(|c| c.2 % 60 == 0 && c.2.abs() <= 3600));
    assert!(cycles.iter().any(|c| c.2 == -3600) && cycles.iter().any(|c| c.2 == 3600));
}

#[test]
fn a_model_wider_than_the_machine_is_refused() {
    let group = Group {
        name: "big".into(),
        users: 1,
        params: group(params(1.0, 0.0)),
        model: Arc::new(model(1, 1, &[8, 5000], 60)),
    };
    let err = Population::new(vec![group], 1, Calendar::monday_midnight(), WEEK, 4096).unwrap_err();
    assert_eq!(
        err.to_string(),
        "group \"big\": its model has jobs of 5000 processors, but the machine has 4096; use a larger machine, a model without such jobs, or site.job_sizes = \"clip\" or \"scale\" (run --job-sizes)"
    );
}

#[test]
fn job_attributes_do_not_depend_on_the_users_decisions() {
    // Common random numbers: the same seed gives each user the same sequence of jobs, whether
    // its jobs come back fast (it keeps working) or slowly (it takes breaks).
    let sizes: Vec<i64> = (1..=64).collect();
    let sequence = |runtime_seen: i64| -> Vec<u32> {
        let mut p = population(
            1,
            group(params(0.8, 0.05)),
            model(2, 1, &sizes, 60),
            4 * WEEK,
        );
        let mut jobs = Vec::new();
        let mut now = OPEN;
        while jobs.len() < 40 {
            let batch = take(&mut p, now);
            jobs.extend(batch.iter().map(|s| s.processors));
            for s in &batch {
                end(&mut p, s, now + runtime_seen);
            }
            match p.next_submission() {
                Some(t) => now = t,
                None => break,
            }
        }
        jobs.truncate(40);
        jobs
    };
    assert_eq!(sequence(30), sequence(5000));
}

#[test]
fn estimate_models_do_not_shift_the_job_sequence() {
    let mut m = model(20, 1, &(1..=64).collect::<Vec<_>>(), 0);
    m.runtime = Ecdf::from_values(&(1..=5000).collect::<Vec<_>>(), 2000).unwrap();
    // Every runtime class estimates 10 hours.
    m.estimate = Some(usermodel::EstimatesByRuntime {
        classes: vec![(0, 1 << 40, constant(36_000))],
    });
    let jobs = |estimates: EstimateSpec| {
        let mut params = group(params(1.0, 0.0));
        params.estimates = estimates;
        let mut p = population(1, params, m.clone(), WEEK);
        take(&mut p, OPEN)
    };
    let fitted = jobs(EstimateSpec::Fitted);
    let exact = jobs(EstimateSpec::Model(EstimateModelSpec::Exact));
    let f = jobs(EstimateSpec::Model(EstimateModelSpec::F {
        f: 3.0,
        deterministic: true,
        max: 12_000,
    }));
    let modal = jobs(EstimateSpec::Model(EstimateModelSpec::Modal(
        users::estimate::ModalParams {
            jobs: 10_000,
            max: 18 * H,
            given: vec![],
        },
    )));
    assert!(fitted.iter().all(|s| s.estimate == 36_000));
    assert!(exact.iter().all(|s| s.estimate == s.runtime));
    assert!(f.iter().all(|s| s.estimate == (4 * s.runtime).min(12_000)));
    assert!(
        modal
            .iter()
            .all(|s| s.estimate >= s.runtime && s.estimate <= 18 * H)
    );
    let attributes = |v: &[Submission]| {
        v.iter()
            .map(|s| (s.processors, s.runtime))
            .collect::<Vec<_>>()
    };
    assert_eq!(attributes(&fitted), attributes(&exact));
    assert_eq!(attributes(&fitted), attributes(&f));
    assert_eq!(attributes(&fitted), attributes(&modal));
}

/// A Schlagkamp user who works every weekday, 09:00-17:00, with jobs of 8 processors and
/// 600 s (no spread), think time `slope` r + `constant`.
fn schlagkamp(slope: f64, constant: f64) -> SchlagkampParams {
    SchlagkampParams {
        activity_ratio: 1.0,
        sizes: vec![SizeClass {
            processors: 8,
            probability: 1.0,
            runtime_mean: 600.0,
            runtime_sd: 0.0,
        }],
        think_slope: slope,
        think_constant: constant,
        ..SchlagkampParams::artificial()
    }
}

/// A Schlagkamp group: exact estimates, as its kind defaults to.
fn schlagkamp_group(k: SchlagkampParams) -> GroupParams {
    let mut p = GroupParams::new(k);
    p.estimates = EstimateSpec::Model(EstimateModelSpec::Exact);
    p
}

#[test]
fn a_schlagkamp_user_submits_one_job_a_think_time_after_the_last_response() {
    let nine = 9 * H;
    let mut p = population(
        1,
        schlagkamp_group(schlagkamp(0.5, 1200.0)),
        model(5, 1, &[4], 1),
        2 * WEEK,
    );
    assert_eq!(p.next_submission(), Some(nine), "Monday 09:00");
    let first = take(&mut p, nine);
    assert_eq!(first.len(), 1, "one job at a time");
    assert_eq!(
        (first[0].processors, first[0].runtime, first[0].estimate),
        (8, 600, 600)
    );
    assert_eq!(p.next_submission(), None, "waits for its job");
    // Response 1000 s (it waited 400 s): think 0.5 * 1000 + 1200 = 1700 s after the end.
    end(&mut p, &first[0], nine + 1000);
    assert_eq!(p.next_submission(), Some(nine + 1000 + 1700));
    let second = take(&mut p, nine + 2700);
    // Submitted 09:45, ends 16:50: response 25500 s, think 0.5 * 25500 + 1200 = 13950 s, so
    // the next job would come at 20:42:30, after hours: it is delayed to Tuesday 09:00.
    let ends = 16 * H + 50 * 60;
    end(&mut p, &second[0], ends);
    assert_eq!(
        p.next_submission(),
        Some(ends + (ends - second[0].submit) / 2 + 1200)
    );
    let t = p.next_submission().unwrap();
    assert!(take(&mut p, t).is_empty(), "after hours: no job");
    assert_eq!(p.next_submission(), Some(users::cycle::DAY + nine));
    let sessions = p.finish();
    assert_eq!(sessions[0].jobs, 2);
    assert_eq!(sessions[0].ended_by, SessionEnd::Cycle);
}

#[test]
fn a_schlagkamp_think_time_from_the_submission_still_waits_for_the_job() {
    let nine = 9 * H;
    let mut params = schlagkamp(0.5, 1200.0);
    params.think_from = users::kinds::schlagkamp::ThinkFrom::Submit;
    let mut p = population(1, schlagkamp_group(params), model(5, 1, &[4], 1), 2 * WEEK);
    let first = take(&mut p, nine);
    // Response 1000 s: tt = 0.5 * 1000 + 1200 = 1700 s after the submission (700 s after the end).
    end(&mut p, &first[0], nine + 1000);
    assert_eq!(p.next_submission(), Some(nine + 1700));
    let second = take(&mut p, nine + 1700);
    // Response 5000 s: tt = 3700 s < 5000 s, so the next job comes as this one ends.
    end(&mut p, &second[0], nine + 6700);
    assert_eq!(p.next_submission(), Some(nine + 6700));
}

#[test]
fn schlagkamp_jobs_are_capped_at_the_machine_and_weekends_are_free() {
    let mut params = schlagkamp(0.0, 60.0);
    params.sizes[0].processors = 10_000;
    let mut p = population(1, schlagkamp_group(params), model(1, 1, &[1], 1), 2 * WEEK);
    let mut now = p.next_submission().unwrap();
    let mut days = std::collections::BTreeSet::new();
    while now < WEEK {
        for s in take(&mut p, now) {
            assert_eq!(s.processors, 4096, "capped at the machine");
            days.insert(s.submit / users::cycle::DAY);
            end(&mut p, &s, s.submit + s.runtime);
        }
        match p.next_submission() {
            Some(t) => now = t,
            None => break,
        }
    }
    assert_eq!(days.into_iter().collect::<Vec<_>>(), vec![0, 1, 2, 3, 4]);
}

#[test]
fn each_completed_batch_is_recorded_with_its_deciding_job_and_decision() {
    // The wait model with a = 1, b = 0.5 per minute: a deciding job that did not wait gives
    // p = 1 (the response model would give 1 / (0.5 * 100 / 60 + 1)).
    let mut params = params(1.0, 0.5);
    params.feedback = Feedback::Wait;
    let horizon = DAY + OPEN + 50;
    let mut p = population(1, group(params), model(2, 1, &[4], 60), horizon);
    let ended = |p: &mut Population, s: &Submission, start: i64, at: i64| {
        p.job_ended(&Completion {
            job_id: s.job_id,
            user: s.user,
            submit: s.submit,
            start,
            end: at,
            lost: None,
        });
    };
    let first = take(&mut p, OPEN);
    ended(&mut p, &first[0], OPEN + 10, OPEN + 70);
    ended(&mut p, &first[1], OPEN, OPEN + 100); // the deciding job: ends last, did not wait
    // Think time 300 s; the next batch ends after 17:30: no trial, the session ends by the cycle.
    let second = take(&mut p, OPEN + 400);
    ended(&mut p, &second[0], OPEN + 400, OPEN + 460);
    ended(&mut p, &second[1], 17 * H, 17 * H + 40 * 60);
    // Tuesday's batch ends after the horizon: no trial.
    let third = take(&mut p, DAY + OPEN);
    ended(&mut p, &third[1], DAY + OPEN, DAY + OPEN + 60);
    ended(&mut p, &third[0], DAY + OPEN, DAY + OPEN + 60);
    let batches = p.take_batches();
    let summary: Vec<_> = batches
        .iter()
        .map(|b| {
            (
                b.session,
                b.batch,
                b.jobs,
                b.job_id,
                b.end,
                b.wait,
                b.runtime,
                b.response,
                b.continue_probability,
                b.decision.label(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                1,
                1,
                2,
                first[1].job_id,
                OPEN + 100,
                0,
                100,
                100,
                Some(1.0),
                "continue"
            ),
            (
                1,
                2,
                2,
                second[1].job_id,
                17 * H + 2400,
                17 * H - OPEN - 400,
                2400,
                17 * H + 2400 - OPEN - 400,
                None,
                "cycle"
            ),
            (
                2,
                1,
                2,
                third[0].job_id,
                DAY + OPEN + 60,
                0,
                60,
                60,
                None,
                "end"
            ),
        ]
    );
    assert!(batches.iter().all(|b| b.user == 1 && b.group == "g")); // users numbered from 1
    let sessions = p.finish();
    assert_eq!(sessions.len(), 2);
    assert_eq!(sessions[1].ended_by, SessionEnd::EndOfRun);
}

#[test]
fn a_schlagkamp_think_time_carried_over_counts_only_working_hours() {
    let nine = 9 * H;
    let mut params = schlagkamp(0.5, 1200.0);
    params.think_across_days = users::kinds::schlagkamp::ThinkAcrossDays::Carry;
    let mut p = population(1, schlagkamp_group(params), model(5, 1, &[4], 1), 2 * WEEK);
    let first = take(&mut p, nine);
    // Ends 16:30: response 27000 s, think 0.5 * 27000 + 1200 = 14700 s; 1800 s of it on
    // Monday, the other 12900 s from Tuesday 09:00 (restart would submit at 09:00).
    let ends = 16 * H + 30 * 60;
    end(&mut p, &first[0], ends);
    assert_eq!(
        p.next_submission(),
        Some(users::cycle::DAY + nine + 14_700 - 1800)
    );
    let t = p.next_submission().unwrap();
    assert_eq!(take(&mut p, t).len(), 1, "submitted inside working hours");
}

#[test]
fn a_schlagkamp_response_in_minutes_divides_the_slope_by_60() {
    let nine = 9 * H;
    let mut params = schlagkamp(0.5, 1200.0);
    params.think_response_unit = users::kinds::schlagkamp::ResponseUnit::Minutes;
    let mut p = population(1, schlagkamp_group(params), model(5, 1, &[4], 1), 2 * WEEK);
    let first = take(&mut p, nine);
    // Response 1200 s = 20 min: think 0.5 * 20 + 1200 = 1210 s.
    end(&mut p, &first[0], nine + 1200);
    assert_eq!(p.next_submission(), Some(nine + 1200 + 1210));
}

#[test]
fn a_schlagkamp_think_time_from_the_response_known_at_submit_is_one_job_behind() {
    let nine = 9 * H;
    let mut params = schlagkamp(0.5, 1200.0);
    params.think_response = users::kinds::schlagkamp::ThinkResponse::KnownAtSubmit;
    let mut p = population(1, schlagkamp_group(params), model(5, 1, &[4], 1), 2 * WEEK);
    let first = take(&mut p, nine);
    // Nothing had ended when the first job was submitted: r = 0, think b = 1200 s.
    end(&mut p, &first[0], nine + 1000);
    assert_eq!(p.next_submission(), Some(nine + 1000 + 1200));
    let second = take(&mut p, nine + 2200);
    // Response 3000 s, but the user submitted it knowing the first's 1000 s:
    // think 0.5 * 1000 + 1200 = 1700 s.
    end(&mut p, &second[0], nine + 5200);
    assert_eq!(p.next_submission(), Some(nine + 5200 + 1700));
    let third = take(&mut p, nine + 6900);
    // The third ends at 18:00, outside working hours: no think time, Tuesday 09:00 instead.
    end(&mut p, &third[0], 18 * H);
    assert_eq!(p.next_submission(), Some(DAY + nine));
    let fourth = take(&mut p, DAY + nine);
    // The fourth's think time uses the third's response, although no think time followed it.
    end(&mut p, &fourth[0], DAY + nine + 600);
    let third_response = 18 * H - third[0].submit;
    assert_eq!(
        p.next_submission(),
        Some(DAY + nine + 600 + (third_response as f64 * 0.5 + 1200.0).round() as i64)
    );
}
