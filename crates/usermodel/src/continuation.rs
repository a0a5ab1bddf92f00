//! The response-time -> continue-probability table (paper 000, Fig. 3) as stored in
//! `continue.csv`, and the curve `p = a / (b * r + 1)` with r in minutes (paper 000, equation 1:
//! a = 0.8, b = 0.05). Building the table and fitting the curve are `fit`'s.

use crate::ModelError;

/// One response-time class.
#[derive(Debug, Clone, PartialEq)]
pub struct ContinueBin {
    /// Lower edge, minutes (inclusive).
    pub from_minutes: f64,
    /// Upper edge, minutes (exclusive; infinite for the last bin).
    pub to_minutes: f64,
    /// Weighted mean response of the batch-closing jobs in the bin, minutes.
    pub mean_response_minutes: f64,
    /// Batch-closing jobs in the bin (unweighted count).
    pub closing_jobs: u64,
    /// The bin's share of the total weight (sums to 1 over the table).
    pub weight: f64,
    /// Weighted fraction of them followed by a think time within the session threshold.
    pub continued_fraction: f64,
}

/// The fitted curve.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ContinueFit {
    /// Continue probability at zero response.
    pub a: f64,
    /// Decay per minute of response.
    pub b: f64,
}

impl ContinueFit {
    /// The paper's curve: 0.8 / (0.05 r + 1).
    pub const PAPER: ContinueFit = ContinueFit { a: 0.8, b: 0.05 };

    /// The continue probability after a response of `minutes`.
    pub fn probability(&self, minutes: f64) -> f64 {
        self.a / (self.b * minutes + 1.0)
    }
}

/// The table as CSV.
pub fn to_csv(bins: &[ContinueBin]) -> String {
    let mut out = String::from(
        "response_from_min,response_to_min,mean_response_min,closing_jobs,weight,continued_fraction\n",
    );
    for b in bins {
        out.push_str(&format!(
            "{},{},{:.6},{},{:.9},{:.9}\n",
            b.from_minutes,
            b.to_minutes,
            b.mean_response_minutes,
            b.closing_jobs,
            b.weight,
            b.continued_fraction
        ));
    }
    out
}

/// Parses what [`to_csv`] wrote.
pub fn from_csv(name: &str, text: &str) -> Result<Vec<ContinueBin>, ModelError> {
    crate::csvtext::rows(name, text, 6)?
        .iter()
        .map(|row| {
            Ok(ContinueBin {
                from_minutes: row
                    .text(0)
                    .parse()
                    .map_err(|_| row_error(name, row.text(0)))?,
                to_minutes: row
                    .text(1)
                    .parse()
                    .map_err(|_| row_error(name, row.text(1)))?,
                mean_response_minutes: row.float(2)?,
                closing_jobs: u64::try_from(row.int(3)?)
                    .map_err(|_| row_error(name, row.text(3)))?,
                weight: row.float(4)?,
                continued_fraction: row.float(5)?,
            })
        })
        .collect()
}

fn row_error(name: &str, value: &str) -> ModelError {
    ModelError::Invalid {
        file: name.to_string(),
        reason: format!("{value:?} is not a valid number here"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_round_trip() {
        let bin = |from: f64, to: f64, mean: f64| ContinueBin {
            from_minutes: from,
            to_minutes: to,
            mean_response_minutes: mean,
            closing_jobs: 3,
            weight: 0.25,
            continued_fraction: 0.5,
        };
        let t = vec![
            bin(0.0, 1.0, 0.5),
            bin(40.0, 50.0, 41.25),
            bin(1440.0, f64::INFINITY, 3000.0),
        ];
        let again = from_csv("continue.csv", &to_csv(&t)).unwrap();
        assert_eq!(again.len(), t.len());
        assert_eq!(again[2].to_minutes, f64::INFINITY);
        assert!((again[1].mean_response_minutes - t[1].mean_response_minutes).abs() < 1e-6);
        let err = from_csv("continue.csv", "a,b,c,d,e,f\nx,1,1,1,1,1\n").unwrap_err();
        assert!(err.to_string().contains("continue.csv"), "{err}");
    }

    #[test]
    fn the_papers_curve() {
        assert_eq!(ContinueFit::PAPER.probability(0.0), 0.8);
        assert!((ContinueFit::PAPER.probability(20.0) - 0.4).abs() < 1e-12);
    }
}
