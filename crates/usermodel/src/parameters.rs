//! The fitted scalars a model directory carries beside its distributions (`parameters.csv`):
//! the continue curve a / (b r + 1) fitted through `continue.csv`, and the shares of day and
//! weekday submissions. A population's group that draws from the directory takes them unless it
//! sets its own `continue_a`, `continue_b`, `day_probability`, `weekday_probability`.

use crate::ModelError;

/// The name of the file in a model directory.
pub const PARAMETERS_FILE: &str = "parameters.csv";

/// What [`PARAMETERS_FILE`] holds.
pub const PARAMETERS_HELP: &str = "the fitted scalars a group drawing from this directory takes unless it sets its own: continue_a and continue_b of p = a / (b r + 1), r in minutes (the least-squares fit through continue.csv), day_fraction (share of submissions in 07:30-17:30) and weekday_fraction (Monday to Friday), the last two only for traces with a calendar: `name,value`";

/// The fitted scalars of a model directory.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FittedParameters {
    /// `a` of the continue curve.
    pub continue_a: f64,
    /// `b` of the continue curve, per minute.
    pub continue_b: f64,
    /// Share of submissions in the local daytime (07:30-17:30), if the traces have a calendar.
    pub day_fraction: Option<f64>,
    /// Share of submissions Monday to Friday, if the traces have a calendar.
    pub weekday_fraction: Option<f64>,
}

impl FittedParameters {
    /// The text of [`PARAMETERS_FILE`].
    pub fn to_csv(&self) -> String {
        let mut out = format!(
            "name,value\ncontinue_a,{}\ncontinue_b,{}\n",
            self.continue_a, self.continue_b
        );
        if let Some(day) = self.day_fraction {
            out.push_str(&format!("day_fraction,{day}\n"));
        }
        if let Some(weekday) = self.weekday_fraction {
            out.push_str(&format!("weekday_fraction,{weekday}\n"));
        }
        out
    }

    /// Parses what [`FittedParameters::to_csv`] wrote; `name` labels errors.
    pub fn from_csv(name: &str, text: &str) -> Result<FittedParameters, ModelError> {
        let rows = crate::csvtext::rows(name, text, 2)?;
        let mut values: [Option<f64>; 4] = [None; 4];
        const NAMES: [&str; 4] = [
            "continue_a",
            "continue_b",
            "day_fraction",
            "weekday_fraction",
        ];
        for row in rows.iter() {
            let key = row.text(0);
            let Some(index) = NAMES.iter().position(|n| *n == key) else {
                return Err(ModelError::Invalid {
                    file: name.into(),
                    reason: format!("unknown parameter {key:?}; expected {}", NAMES.join(", ")),
                });
            };
            let value = row.float(1)?;
            let valid = if index == 1 {
                value >= 0.0
            } else {
                (0.0..=1.0).contains(&value)
            };
            if !valid {
                return Err(ModelError::Invalid {
                    file: name.into(),
                    reason: format!("{key} = {value} is out of range"),
                });
            }
            values[index] = Some(value);
        }
        let required = |i: usize| {
            values[i].ok_or_else(|| ModelError::Invalid {
                file: name.into(),
                reason: format!("{} is missing", NAMES[i]),
            })
        };
        Ok(FittedParameters {
            continue_a: required(0)?,
            continue_b: required(1)?,
            day_fraction: values[2],
            weekday_fraction: values[3],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_round_trip_and_are_checked() {
        let p = FittedParameters {
            continue_a: 0.810572,
            continue_b: 0.032806,
            day_fraction: Some(0.62575),
            weekday_fraction: None,
        };
        let text = p.to_csv();
        assert_eq!(
            text,
            "name,value\ncontinue_a,0.810572\ncontinue_b,0.032806\nday_fraction,0.62575\n"
        );
        assert_eq!(FittedParameters::from_csv("p.csv", &text).unwrap(), p);
        let err = FittedParameters::from_csv("p.csv", "name,value\ncontinue_a,0.8\n").unwrap_err();
        assert!(err.to_string().contains("continue_b is missing"), "{err}");
        let err = FittedParameters::from_csv("p.csv", "name,value\ncontinue_a,1.5\ncontinue_b,0\n")
            .unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
        let err = FittedParameters::from_csv("p.csv", "name,value\nalpha,1\n").unwrap_err();
        assert!(err.to_string().contains("unknown parameter"), "{err}");
    }
}
