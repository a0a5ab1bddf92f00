//! Building the response-time -> continue-probability table (paper 000, Fig. 3) and the
//! least-squares fit of `p = a / (b * r + 1)` with r in minutes (paper 000, equation 1: a = 0.8,
//! b = 0.05). The table's types and file format are `usermodel`'s.

use usermodel::{ContinueBin, ContinueFit};

/// Bin edges in minutes of response time: fine where the curve is steep, coarse in its tail.
pub const BIN_EDGES_MINUTES: [f64; 31] = [
    0.0,
    1.0,
    2.0,
    3.0,
    4.0,
    5.0,
    6.0,
    8.0,
    10.0,
    12.0,
    15.0,
    20.0,
    25.0,
    30.0,
    40.0,
    50.0,
    60.0,
    75.0,
    90.0,
    120.0,
    150.0,
    180.0,
    240.0,
    300.0,
    360.0,
    480.0,
    600.0,
    720.0,
    960.0,
    1440.0,
    f64::INFINITY,
];

/// Bins weighted observations `(response in seconds, continued, weight)`. Empty bins are left
/// out.
pub fn table(observations: impl IntoIterator<Item = (i64, bool, f64)>) -> Vec<ContinueBin> {
    let bins = BIN_EDGES_MINUTES.len() - 1;
    let mut count = vec![0u64; bins];
    let mut weight = vec![0.0; bins];
    let mut continued = vec![0.0; bins];
    let mut response = vec![0.0; bins];
    let mut total = 0.0;
    for (seconds, went_on, w) in observations {
        let minutes = seconds as f64 / 60.0;
        let bin = BIN_EDGES_MINUTES
            .partition_point(|&edge| edge <= minutes)
            .saturating_sub(1)
            .min(bins - 1);
        count[bin] += 1;
        weight[bin] += w;
        response[bin] += w * minutes;
        if went_on {
            continued[bin] += w;
        }
        total += w;
    }
    (0..bins)
        .filter(|&i| count[i] > 0 && weight[i] > 0.0)
        .map(|i| ContinueBin {
            from_minutes: BIN_EDGES_MINUTES[i],
            to_minutes: BIN_EDGES_MINUTES[i + 1],
            mean_response_minutes: response[i] / weight[i],
            closing_jobs: count[i],
            weight: weight[i] / total,
            continued_fraction: continued[i] / weight[i],
        })
        .collect()
}

/// Weighted least squares of `a / (b r + 1)` through the bins (x = mean response, y = continued
/// fraction, weight = the bin's weight): the same as least squares over the individual closing
/// jobs when the curve is flat within a bin. For a fixed b the best a has a closed form, so the
/// search is over b alone: a log-spaced scan of [1e-5, 100] then golden-section refinement.
pub fn fit(bins: &[ContinueBin]) -> Option<ContinueFit> {
    if bins.is_empty() {
        return None;
    }
    // Sum of squares and best a for a given b.
    let evaluate = |b: f64| -> (f64, f64) {
        let (mut wyg, mut wgg) = (0.0, 0.0);
        for bin in bins {
            let g = 1.0 / (b * bin.mean_response_minutes + 1.0);
            wyg += bin.weight * bin.continued_fraction * g;
            wgg += bin.weight * g * g;
        }
        let a = if wgg > 0.0 { wyg / wgg } else { 0.0 };
        let sse = bins
            .iter()
            .map(|bin| {
                let residual = bin.continued_fraction - a / (b * bin.mean_response_minutes + 1.0);
                bin.weight * residual * residual
            })
            .sum();
        (sse, a)
    };
    let (lo_exp, hi_exp, steps) = (-5.0f64, 2.0f64, 700);
    let grid: Vec<f64> = (0..=steps)
        .map(|i| 10f64.powf(lo_exp + (hi_exp - lo_exp) * f64::from(i) / f64::from(steps)))
        .collect();
    let sse: Vec<f64> = grid.iter().map(|&b| evaluate(b).0).collect();
    let best = (0..grid.len()).min_by(|&i, &j| sse[i].total_cmp(&sse[j]))?;
    let (mut lo, mut hi) = (
        grid[best.saturating_sub(1)].ln(),
        grid[(best + 1).min(grid.len() - 1)].ln(),
    );
    let ratio = (5f64.sqrt() - 1.0) / 2.0;
    for _ in 0..100 {
        let m1 = hi - ratio * (hi - lo);
        let m2 = lo + ratio * (hi - lo);
        if evaluate(m1.exp()).0 <= evaluate(m2.exp()).0 {
            hi = m2;
        } else {
            lo = m1;
        }
    }
    let b = ((lo + hi) / 2.0).exp();
    let (_, a) = evaluate(b);
    Some(ContinueFit { a, b })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binning_of_known_observations() {
        // 30 s and 90 s responses: bins [0, 1) and [1, 2) minutes.
        let t = table([(30, true, 1.0), (30, false, 1.0), (90, true, 2.0)]);
        assert_eq!(t.len(), 2);
        assert_eq!(
            (t[0].closing_jobs, t[0].continued_fraction, t[0].weight),
            (2, 0.5, 0.5)
        );
        assert_eq!(
            (
                t[1].from_minutes,
                t[1].mean_response_minutes,
                t[1].continued_fraction
            ),
            (1.0, 1.5, 1.0)
        );
        // Responses beyond the last finite edge land in the open last bin.
        let t = table([(10 * 86_400, false, 1.0)]);
        assert_eq!(t[0].to_minutes, f64::INFINITY);
    }

    #[test]
    fn recovers_the_curve_it_was_given() {
        let truth = ContinueFit { a: 0.8, b: 0.05 };
        let bins: Vec<ContinueBin> = (0..60)
            .map(|i| {
                let r = f64::from(i) * 7.0;
                ContinueBin {
                    from_minutes: r,
                    to_minutes: r + 7.0,
                    mean_response_minutes: r + 3.5,
                    closing_jobs: 100,
                    weight: 1.0 / 60.0,
                    continued_fraction: truth.probability(r + 3.5),
                }
            })
            .collect();
        let fitted = fit(&bins).unwrap();
        assert!((fitted.a - 0.8).abs() < 1e-6, "{fitted:?}");
        assert!((fitted.b - 0.05).abs() < 1e-6, "{fitted:?}");
    }
}
