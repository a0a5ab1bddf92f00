//! The analysis on small hand-made SWF files whose sessions, batches and think times are known.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::path::{Path, PathBuf};

use fit::sessions::{Closing, SessionRules, analyze};
use fit::{FitError, FitOptions, read_trace};

/// An SWF job line: number, submit, wait, runtime, processors, estimate, user.
fn line(
    number: i64,
    submit: i64,
    wait: i64,
    runtime: i64,
    processors: i64,
    estimate: i64,
    user: i64,
) -> String {
    format!(
        "{number} {submit} {wait} {runtime} {processors} -1 -1 {processors} {estimate} -1 1 {user} 1 -1 -1 -1 -1 -1\n"
    )
}

fn write(dir: &Path, name: &str, header: &str, lines: &[String]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{header}{}", lines.concat())).unwrap();
    path
}

/// User 1: a batch of two overlapping jobs, a short think time, a 1 h break, a 27.8 h pause.
/// User 2: a single job.
fn two_users() -> Vec<String> {
    vec![
        line(1, 0, 0, 100, 4, 200, 1),      // ends 100
        line(2, 50, 0, 100, 4, 200, 1),     // think 50 - 100 = -50: same batch; ends 150
        line(3, 10, 0, 5, 4, 60, 2),        // user 2's only job
        line(4, 450, 10, 20, 4, 60, 1),     // think 450 - 150 = 300: new batch, same session
        line(5, 4080, 0, 60, 8, 30, 1),     // think 4080 - 480 = 3600: break, new session
        line(6, 104_140, 0, 60, 8, 120, 1), // think 100000 > 8 h: dropped from breaks
    ]
}

#[test]
fn sessions_batches_and_think_times() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "hand.swf", "; MaxProcs: 16\n", &two_users());
    let trace = read_trace(&path).unwrap();
    assert_eq!(trace.jobs.len(), 6);
    let s = analyze(&trace, &SessionRules::default());
    assert_eq!((s.jobs, s.users), (6, 2));
    assert_eq!(s.think_all, vec![-50, 300, 3600, 100_000]);
    assert_eq!(s.negative_think, 1);
    assert_eq!(s.think_short, vec![300]);
    assert_eq!(s.breaks, vec![3600]);
    assert_eq!(s.long_breaks, 1);
    // Closing jobs: job 2 (response 100) continued; job 4 (response 30) and job 5 (60) did not.
    assert_eq!(
        s.closings,
        vec![
            Closing {
                response: 100,
                continued: true
            },
            Closing {
                response: 30,
                continued: false
            },
            Closing {
                response: 60,
                continued: false
            },
        ]
    );
    assert_eq!(s.batch_widths, vec![2, 1, 1, 1, 1]);
    assert_eq!(s.batch_gaps, vec![50]);
    assert_eq!(s.session_lengths, vec![3, 1, 1, 1]);
    assert_eq!(s.repetitions, vec![3, 2, 1]);
    assert_eq!(s.sizes.len(), 6);
    // Job 5 ran 60 s against an estimate of 30 s.
    assert_eq!(s.estimates.iter().filter(|(r, e)| r > e).count(), 1);
}

#[test]
fn the_latest_end_closes_the_batch_even_from_an_earlier_job() {
    // A long job and a short one submitted together: the long one ends last and closes the
    // batch, so the next think time counts from its end.
    let lines = vec![
        line(1, 0, 0, 1000, 1, -1, 7),
        line(2, 10, 0, 10, 1, -1, 7),
        line(3, 1100, 0, 10, 1, -1, 7),
    ];
    let dir = tempfile::tempdir().unwrap();
    let trace = read_trace(&write(dir.path(), "t.swf", "", &lines)).unwrap();
    let s = analyze(&trace, &SessionRules::default());
    assert_eq!(s.think_all, vec![10 - 1000, 100]);
    assert_eq!(
        s.closings,
        vec![Closing {
            response: 1000,
            continued: true
        }]
    );
    assert_eq!(s.batch_widths, vec![2, 1]);
}

#[test]
fn local_time_uses_the_time_zone_name_with_daylight_saving() {
    // UnixStartTime 1000000000 is Sat 2001-09-08 18:46:40 PDT.
    let header = "; UnixStartTime: 1000000000\n; TimeZone: -28800\n; TimeZoneString: US/Pacific\n";
    let lines = vec![
        line(1, 0, 0, 10, 1, -1, 1),      // Sat 18:46 PDT: night, weekend
        line(2, 46_000, 0, 10, 1, -1, 1), // Sun 07:33:20 PDT: day, weekend
        line(3, 46_000 + 86_400, 0, 10, 1, -1, 1), // Mon 07:33:20: day, weekday
    ];
    let dir = tempfile::tempdir().unwrap();
    let trace = read_trace(&write(dir.path(), "tz.swf", header, &lines)).unwrap();
    let s = analyze(&trace, &SessionRules::default());
    assert_eq!((s.located, s.daytime, s.weekdays), (3, 2, 1));
    assert_eq!(s.hourly[18], 1);
    assert_eq!(s.hourly[7], 2);
    assert_eq!(s.weekly, [1, 0, 0, 0, 0, 1, 1]);
    // With only the deprecated fixed offset (-8 h, no daylight saving) the first job is at 17:46.
    let header = "; UnixStartTime: 1000000000\n; TimeZone: -28800\n";
    let trace = read_trace(&write(dir.path(), "fixed.swf", header, &lines)).unwrap();
    let s = analyze(&trace, &SessionRules::default());
    assert_eq!(s.hourly[17], 1);
}

#[test]
fn no_calendar_means_no_profiles_and_a_warning() {
    let dir = tempfile::tempdir().unwrap();
    let trace = read_trace(&write(dir.path(), "nocal.swf", "", &two_users())).unwrap();
    assert!(trace.calendar.is_none());
    assert!(
        trace
            .warnings
            .iter()
            .any(|w| w.contains("nocal.swf") && w.contains("UnixStartTime")),
        "{:?}",
        trace.warnings
    );
}

#[test]
fn bad_traces_are_errors_naming_the_trace() {
    let dir = tempfile::tempdir().unwrap();
    let no_users: Vec<String> = (1..5).map(|i| line(i, i * 10, 0, 5, 1, -1, -1)).collect();
    let path = write(dir.path(), "anonymous.swf", "", &no_users);
    let err = read_trace(&path).unwrap_err();
    assert!(matches!(err, FitError::NoUsers { .. }));
    assert!(
        err.to_string().contains("anonymous.swf") && err.to_string().contains("user ID"),
        "{err}"
    );

    let no_runtimes: Vec<String> = (1..5).map(|i| line(i, i * 10, 0, -1, 1, -1, 3)).collect();
    let err = read_trace(&write(dir.path(), "blind.swf", "", &no_runtimes)).unwrap_err();
    assert!(matches!(err, FitError::NoRuntimes { jobs: 4, .. }), "{err}");
    assert!(err.to_string().contains("blind.swf"));

    let err = read_trace(&dir.path().join("missing.swf")).unwrap_err();
    assert!(
        err.to_string().contains("missing.swf") && err.to_string().contains("cannot open"),
        "{err}"
    );

    let err = read_trace(&write(dir.path(), "empty.swf", "; MaxProcs: 4\n", &[])).unwrap_err();
    assert!(matches!(err, FitError::NoJobs { .. }));
}

#[test]
fn a_fit_of_the_same_traces_gives_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines = two_users();
    // Enough variety for every distribution of the model.
    for i in 0..40 {
        let t = 200_000 + i * 5000;
        lines.push(line(
            100 + i,
            t,
            i % 7,
            30 + i * 11,
            1 << (i % 4),
            600,
            3 + i % 3,
        ));
        lines.push(line(200 + i, t + 5, 0, 10, 1, 60, 3 + i % 3));
    }
    let path = write(
        dir.path(),
        "x.swf",
        "; UnixStartTime: 1000000000\n; TimeZoneString: UTC\n",
        &lines,
    );
    let first = fit::fit(std::slice::from_ref(&path), &FitOptions::default()).unwrap();
    let second = fit::fit(&[path], &FitOptions::default()).unwrap();
    assert_eq!(
        first.files("fit x.swf").unwrap(),
        second.files("fit x.swf").unwrap()
    );
    // And the combined model reads back from its files.
    let files = first.combined.files();
    let back = usermodel::Model::from_files("combined", |name| {
        files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, text)| text.clone())
    })
    .unwrap();
    assert_eq!(back.files(), files);
}

#[test]
fn split_gives_the_sessions_and_batches_analyze_counts() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "hand.swf", "; MaxProcs: 16\n", &two_users());
    let trace = read_trace(&path).unwrap();
    let users = fit::sessions::split(&trace.jobs, &SessionRules::default());
    let number = |i: usize| trace.jobs[i].number;
    let shape: Vec<(i64, Vec<Vec<Vec<i64>>>)> = users
        .iter()
        .map(|u| {
            let sessions = u
                .sessions
                .iter()
                .map(|s| {
                    s.batches
                        .iter()
                        .map(|b| b.jobs.iter().map(|&i| number(i)).collect())
                        .collect()
                })
                .collect();
            (u.user, sessions)
        })
        .collect();
    assert_eq!(
        shape,
        vec![
            (
                1,
                vec![vec![vec![1, 2], vec![4]], vec![vec![5]], vec![vec![6]]]
            ),
            (2, vec![vec![vec![3]]]),
        ]
    );
    // Batch ends and closing jobs: job 2 closes the first batch (ends 150).
    let first = &users[0].sessions[0].batches[0];
    assert_eq!((first.end, number(first.closing)), (150, 2));
    assert_eq!(users[0].sessions[0].end(), 480);
    assert_eq!(users[0].sessions[1].start(&trace.jobs), 4080);

    // The same counts as the model's samples, on a real trace.
    let kth = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/traces/KTH-SP2-1996-2.1-cln.swf.gz");
    {
        let trace = read_trace(&kth).unwrap();
        let rules = SessionRules::default();
        let samples = analyze(&trace, &rules);
        let users = fit::sessions::split(&trace.jobs, &rules);
        let sessions: Vec<i64> = users
            .iter()
            .flat_map(|u| &u.sessions)
            .map(|s| s.batches.iter().map(|b| b.jobs.len() as i64).sum())
            .collect();
        let widths: Vec<i64> = users
            .iter()
            .flat_map(|u| &u.sessions)
            .flat_map(|s| &s.batches)
            .map(|b| b.jobs.len() as i64)
            .collect();
        assert_eq!(sessions, samples.session_lengths);
        assert_eq!(widths, samples.batch_widths);
    }
}
