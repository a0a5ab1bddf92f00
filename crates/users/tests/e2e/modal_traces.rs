//! Tsafrir's modal estimate model against the four traces it was built from (thesis, section
//! 5.12.1): SDSC-SP2, CTC-SP2, KTH-SP2's 4-hour daytime domain (KTH4H: the jobs estimated at
//! most 4 h) and SDSC-BLUE. Each trace's jobs get estimates from the model (N = its jobs, E_max
//! and E_max's share from the trace; for BLUE also its 2 h, 15 min and 30 min modes, the
//! "improved" setting of section 5.12.1, without which no general model fits it), assigned to
//! the trace's runtimes by random shuffle. KTH4H also gets its 5, 10 and 1 minute modes (its
//! large short modes are what Tsafrir's improved setting supplies). The generated popularity
//! must have the trace's
//! head/tail structure: the share on the 20 most popular values, the share of the most popular,
//! the number of distinct values, and the whole distribution (Kolmogorov-Smirnov distance).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

use std::collections::HashMap;
use std::path::PathBuf;

use rand::SeedableRng;
use rand_pcg::Pcg64;
use users::estimate::{ModalParams, Modes, random_shuffle};

fn trace(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../../shared/traces/{name}"))
}

/// (runtime, estimate) of the jobs replay would run (estimate = field 9, else the runtime).
fn jobs(name: &str, keep: impl Fn(i64) -> bool) -> Vec<(i64, i64)> {
    swf::SwfReader::open(trace(name))
        .unwrap()
        .map(|r| r.unwrap())
        .filter(|r| r.run_time >= 0 && r.submit_time >= 0)
        .filter(|r| r.allocated_processors > 0 || r.requested_processors > 0)
        .map(|r| {
            let estimate = if r.requested_time > 0 {
                r.requested_time
            } else {
                r.run_time
            };
            (r.run_time, estimate)
        })
        .filter(|&(_, e)| keep(e))
        .collect()
}

/// Shares of each value, most popular first.
fn popularity(values: &[i64]) -> Vec<(i64, f64)> {
    let mut counts: HashMap<i64, usize> = HashMap::new();
    for &v in values {
        *counts.entry(v).or_default() += 1;
    }
    let mut p: Vec<(i64, f64)> = counts
        .into_iter()
        .map(|(v, c)| (v, c as f64 / values.len() as f64))
        .collect();
    p.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    p
}

fn top(p: &[(i64, f64)], n: usize) -> f64 {
    p.iter().take(n).map(|x| x.1).sum()
}

fn ks(a: &[i64], b: &[i64]) -> f64 {
    let (mut a, mut b) = (a.to_vec(), b.to_vec());
    a.sort_unstable();
    b.sort_unstable();
    let (mut i, mut j, mut d) = (0, 0, 0.0f64);
    while i < a.len() && j < b.len() {
        let x = a[i].min(b[j]);
        while i < a.len() && a[i] == x {
            i += 1;
        }
        while j < b.len() && b[j] == x {
            j += 1;
        }
        d = d.max((i as f64 / a.len() as f64 - j as f64 / b.len() as f64).abs());
    }
    d
}

struct Case {
    name: &'static str,
    file: &'static str,
    max: i64,
    keep: fn(i64) -> bool,
    /// Modes taken from the trace and given to the model (besides E_max).
    given: &'static [i64],
    /// The largest KS distance allowed over seeds 1-8 (observed: SDSC-SP2
    /// 0.080-0.135, CTC-SP2 0.057-0.106, KTH4H 0.125-0.153, SDSC-BLUE 0.088-0.124).
    ks: f64,
}

#[test]
fn the_modal_model_has_the_head_and_tail_of_the_four_traces() {
    let cases = [
        Case {
            name: "SDSC-SP2",
            file: "SDSC-SP2-1998-4.2-cln.swf.gz",
            max: 18 * 3600,
            keep: |_| true,
            given: &[],
            ks: 0.14,
        },
        Case {
            name: "CTC-SP2",
            file: "CTC-SP2-1996-3.1-cln.swf.gz",
            max: 18 * 3600,
            keep: |_| true,
            given: &[],
            ks: 0.12,
        },
        Case {
            name: "KTH4H",
            file: "KTH-SP2-1996-2.1-cln.swf.gz",
            max: 4 * 3600,
            keep: |e| e <= 4 * 3600,
            given: &[300, 600, 60],
            ks: 0.17,
        },
        Case {
            name: "SDSC-BLUE",
            file: "SDSC-BLUE-2000-4.2-cln.swf.gz",
            max: 36 * 3600,
            keep: |_| true,
            given: &[7200, 900, 1800],
            ks: 0.14,
        },
    ];
    for case in cases {
        let jobs = jobs(case.file, case.keep);
        let estimates: Vec<i64> = jobs.iter().map(|j| j.1).collect();
        let runtimes: Vec<i64> = jobs.iter().map(|j| j.0).collect();
        let original = popularity(&estimates);
        let share_of = |t: i64| original.iter().find(|p| p.0 == t).map_or(0.0, |p| p.1);
        let mut given: Vec<(i64, f64)> = case.given.iter().map(|&t| (t, share_of(t))).collect();
        given.push((case.max, share_of(case.max)));
        let params = ModalParams {
            jobs: jobs.len(),
            max: case.max,
            given,
        };
        for seed in 1..=8 {
            let mut rng = Pcg64::seed_from_u64(seed);
            let modes = Modes::generate(&params, &mut rng).unwrap();
            let generated = random_shuffle(&runtimes, modes.estimates_for(jobs.len()), &mut rng);
            let model = popularity(&generated);
            let (t20, m20) = (top(&original, 20), top(&model, 20));
            let (t1, m1) = (top(&original, 1), top(&model, 1));
            let (tk, mk) = (original.len() as f64, model.len() as f64);
            let d = ks(&estimates, &generated);
            eprintln!(
                "{} seed {seed}: top-20 {t20:.3} vs {m20:.3}; top-1 {t1:.3} vs {m1:.3}; K {tk} vs {mk}; KS {d:.3}",
                case.name
            );
            assert!((t20 - m20).abs() <= 0.04, "{}: top-20 share", case.name);
            assert!((t1 - m1).abs() <= 0.02, "{}: top-1 share", case.name);
            assert!(
                mk / tk > 0.4 && mk / tk < 2.5,
                "{}: distinct values",
                case.name
            );
            assert!(d <= case.ks, "{}: KS {d}", case.name);
            // Never below the runtime, except for runtimes beyond E_max (killed there).
            for (e, r) in generated.iter().zip(&runtimes) {
                assert!(e >= r || *r > case.max, "{}: {e} < {r}", case.name);
            }
        }
    }
}
