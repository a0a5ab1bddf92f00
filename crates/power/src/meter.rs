//! The meter: a run's jobs in, its energy, peak power, carbon and cost out.

use std::collections::HashMap;
use std::sync::Arc;

use serde::Serialize;
use simtime::Time;

use crate::{Draw, JOULES_PER_KWH, PowerError, SavingReport, Series, StateSpan};

/// What one job cost.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct JobEnergy {
    /// IT energy charged to it, J: its draw times its run, or what the trace logged.
    pub it_joules: f64,
    /// Its facility energy (IT x PUE), J.
    pub facility_joules: f64,
    /// The carbon of its facility energy, g (NaN without a carbon series).
    pub carbon_g: f64,
    /// The cost of its facility energy, in the price series' currency (NaN without one).
    pub cost: f64,
}

/// Mean and maximum of a per-user amount.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    /// Mean over the users who ran a job.
    pub mean: f64,
    /// The largest.
    pub max: f64,
}

/// A run's power, energy, carbon and cost (summary.json's `power`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PowerReport {
    /// The span metered, seconds of simulated time (the makespan: first submission to last end).
    pub span_seconds: Time,
    /// IT energy over the span, J: the unused nodes' idle power plus every job's charge.
    pub it_joules: f64,
    /// IT energy, kWh.
    pub it_kwh: f64,
    /// Facility energy (IT x PUE), kWh.
    pub facility_kwh: f64,
    /// The power usage effectiveness applied.
    pub pue: f64,
    /// The machine's idle IT power (every node on, nothing running), kW.
    pub idle_kw: f64,
    /// Mean IT power over the span, kW.
    pub mean_kw: f64,
    /// Peak IT power, kW: the most the machine drew at any instant.
    pub peak_kw: f64,
    /// Peak facility power (peak IT x PUE), kW.
    pub peak_facility_kw: f64,
    /// Carbon of the facility energy, kg CO2 (with a carbon series).
    pub carbon_kg: Option<f64>,
    /// Cost of the facility energy (with a price series).
    pub cost: Option<f64>,
    /// The price series' currency.
    pub currency: Option<String>,
    /// Jobs metered.
    pub jobs: u64,
    /// Of them, jobs charged the energy their trace logged.
    pub jobs_logged: u64,
    /// The jobs' charges, kWh (IT).
    pub jobs_kwh: f64,
    /// Mean IT energy per job, kWh.
    pub energy_per_job_kwh: f64,
    /// IT energy per user who ran a job, kWh.
    pub user_kwh: Option<Spread>,
    /// What idle nodes powering down did, when they do ([`crate::NodeSaving`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub saving: Option<SavingReport>,
}

/// Integrates a run's power over its event timeline (crate docs): each job is added when its
/// record is final, in any order; [`Meter::finish`] sorts the power changes once to find the
/// peak. Memory: two changes per job that ran for a time.
#[derive(Debug, Clone)]
pub struct Meter {
    /// The machine's idle IT power with every node on, W.
    idle_w: f64,
    /// Power usage effectiveness: facility power over IT power.
    pue: f64,
    /// Carbon intensity, gCO2/kWh.
    carbon: Option<Arc<Series>>,
    /// Electricity price per kWh.
    price: Option<Arc<Series>>,
    /// Jobs added, and of them those charged a logged energy.
    jobs: u64,
    logged: u64,
    /// The jobs' charges, J.
    jobs_joules: f64,
    /// The jobs' shares of idle power times their runs, J (counted in the idle term already).
    idle_share_joules: f64,
    /// The same weighted by carbon intensity and by price (W x s x value).
    carbon_weighted: f64,
    price_weighted: f64,
    /// IT power changes above the idle level: (time, W).
    changes: Vec<(Time, f64)>,
    /// IT energy by user, J.
    users: HashMap<i64, f64>,
    /// Spans nodes spent off, booting or shutting down ([`Meter::add_spans`]).
    spans: Vec<StateSpan>,
}

impl Meter {
    /// A meter for a machine whose nodes draw `idle_w` W in all when idle, with `pue`
    /// (at least 1), carbon intensity and price series when given.
    pub fn new(
        idle_w: f64,
        pue: f64,
        carbon: Option<Arc<Series>>,
        price: Option<Arc<Series>>,
    ) -> Meter {
        Meter {
            idle_w,
            pue,
            carbon,
            price,
            jobs: 0,
            logged: 0,
            jobs_joules: 0.0,
            idle_share_joules: 0.0,
            carbon_weighted: 0.0,
            price_weighted: 0.0,
            changes: Vec::new(),
            users: HashMap::new(),
            spans: Vec::new(),
        }
    }

    /// Adds spans nodes spent off, booting or shutting down: over each, the node draws its
    /// state's power instead of its idle power (`delta_w` more). Spans are cut to the metered
    /// span at [`Meter::finish`]. No job's charge changes: a job waiting for a boot is not yet
    /// running.
    pub fn add_spans(&mut self, spans: &[StateSpan]) {
        self.spans.extend_from_slice(spans);
    }

    /// The integral of `series` over a job's run, weighted as its energy is spread: its power
    /// over `[start, end]`, or its whole energy at `start` for a job of no length.
    fn weighted(series: &Series, start: Time, end: Time, joules: f64) -> Result<f64, PowerError> {
        if end > start {
            Ok(joules / (end - start) as f64 * series.integral(start, end)?)
        } else {
            Ok(joules * series.value_at(start)?)
        }
    }

    /// Adds a job of `user` that ran from `start` to `end` (seconds) drawing `draw`, or, when
    /// the trace logged it, charged `logged_joules` instead (its idle share still leaves the
    /// unused nodes' term: the logged energy is its nodes' while it ran). Returns its charge.
    pub fn add(
        &mut self,
        user: i64,
        start: Time,
        end: Time,
        draw: Draw,
        logged_joules: Option<f64>,
    ) -> Result<JobEnergy, PowerError> {
        let seconds = (end - start).max(0);
        let joules = logged_joules.unwrap_or(draw.total_w() * seconds as f64);
        self.jobs += 1;
        self.logged += u64::from(logged_joules.is_some());
        self.jobs_joules += joules;
        *self.users.entry(user).or_insert(0.0) += joules;
        let idle_share_joules = draw.idle_share_w * seconds as f64;
        self.idle_share_joules += idle_share_joules;
        if seconds > 0 {
            let above = joules / seconds as f64 - draw.idle_share_w;
            self.changes.push((start, above));
            self.changes.push((end, -above));
        }
        let mut charge = JobEnergy {
            it_joules: joules,
            facility_joules: joules * self.pue,
            carbon_g: f64::NAN,
            cost: f64::NAN,
        };
        if let Some(series) = &self.carbon {
            let own = Self::weighted(series, start, end, joules)?;
            let idle = Self::weighted(series, start, end, idle_share_joules)?;
            self.carbon_weighted += own - idle;
            charge.carbon_g = own * self.pue / JOULES_PER_KWH;
        }
        if let Some(series) = &self.price {
            let own = Self::weighted(series, start, end, joules)?;
            let idle = Self::weighted(series, start, end, idle_share_joules)?;
            self.price_weighted += own - idle;
            charge.cost = own * self.pue / JOULES_PER_KWH;
        }
        Ok(charge)
    }

    /// The run's report over `[from, to]` (seconds; every job added ran inside it).
    pub fn finish(mut self, from: Time, to: Time) -> Result<PowerReport, PowerError> {
        let span = (to - from).max(0);
        let mut it_joules = self.idle_w * span as f64 - self.idle_share_joules + self.jobs_joules;
        for state in std::mem::take(&mut self.spans) {
            let (a, b) = (state.from.max(from), state.to.min(to));
            if b <= a {
                continue;
            }
            it_joules += state.delta_w * (b - a) as f64;
            self.changes.push((a, state.delta_w));
            self.changes.push((b, -state.delta_w));
            if let Some(series) = &self.carbon {
                self.carbon_weighted += state.delta_w * series.integral(a, b)?;
            }
            if let Some(series) = &self.price {
                self.price_weighted += state.delta_w * series.integral(a, b)?;
            }
        }
        // the peak: every change of an instant applied before the instant's power is read
        self.changes
            .sort_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
        let mut above = 0.0_f64;
        let mut peak_above = 0.0_f64;
        let mut i = 0;
        while i < self.changes.len() {
            let instant = self.changes[i].0;
            while i < self.changes.len() && self.changes[i].0 == instant {
                above += self.changes[i].1;
                i += 1;
            }
            peak_above = peak_above.max(above);
        }
        let idle_part = |series: &Option<Arc<Series>>| -> Result<Option<f64>, PowerError> {
            series
                .as_ref()
                .map(|s| Ok(self.idle_w * s.integral(from, to)?))
                .transpose()
        };
        let carbon_kg = idle_part(&self.carbon)?
            .map(|idle| (idle + self.carbon_weighted) * self.pue / JOULES_PER_KWH / 1000.0);
        let cost = idle_part(&self.price)?
            .map(|idle| (idle + self.price_weighted) * self.pue / JOULES_PER_KWH);
        let peak_w = self.idle_w + peak_above;
        let users = self.users.len();
        let user_kwh = (users > 0).then(|| Spread {
            mean: self.users.values().sum::<f64>() / users as f64 / JOULES_PER_KWH,
            max: self.users.values().copied().fold(0.0, f64::max) / JOULES_PER_KWH,
        });
        Ok(PowerReport {
            span_seconds: span,
            it_joules,
            it_kwh: it_joules / JOULES_PER_KWH,
            facility_kwh: it_joules * self.pue / JOULES_PER_KWH,
            pue: self.pue,
            idle_kw: self.idle_w / 1e3,
            mean_kw: if span > 0 {
                it_joules / span as f64 / 1e3
            } else {
                0.0
            },
            peak_kw: peak_w / 1e3,
            peak_facility_kw: peak_w * self.pue / 1e3,
            carbon_kg,
            cost,
            currency: self
                .price
                .as_ref()
                .and_then(|p| p.currency().map(str::to_string)),
            jobs: self.jobs,
            jobs_logged: self.logged,
            jobs_kwh: self.jobs_joules / JOULES_PER_KWH,
            energy_per_job_kwh: if self.jobs > 0 {
                self.jobs_joules / self.jobs as f64 / JOULES_PER_KWH
            } else {
                0.0
            },
            user_kwh,
            saving: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{NodePower, Quantity, Used};

    /// Two nodes of 4 cores, 100 W idle, 25 W a busy core.
    fn node() -> NodePower {
        NodePower::from_busy(4, 100.0, 200.0).unwrap()
    }

    fn cores(n: u32) -> Used {
        Used {
            cores: n,
            ..Used::default()
        }
    }

    #[test]
    fn spans_off_booting_and_shutting_down_replace_idle_power() {
        // two nodes of 100 W idle (200 W), nothing running from 0 to 330 s; a node shuts down
        // (120 W) 100-110 s, is off (5 W) 110-200 s and boots (150 W) 200-230 s
        let span = |state, from, to, w: f64| StateSpan {
            state,
            from,
            to,
            delta_w: w - 100.0,
        };
        let mut meter = Meter::new(200.0, 1.0, None, None);
        meter.add_spans(&[
            span(crate::NodeState::Shutdown, 100, 110, 120.0),
            span(crate::NodeState::Off, 110, 200, 5.0),
            span(crate::NodeState::Boot, 200, 230, 150.0),
            // still off when the run ends: cut at 330
            span(crate::NodeState::Off, 300, Time::MAX, 5.0),
        ]);
        let report = meter.finish(0, 330).unwrap();
        // 200 x 330 + 20 x 10 - 95 x 90 + 50 x 30 - 95 x 30
        let joules = 66_000.0 + 200.0 - 8_550.0 + 1_500.0 - 2_850.0;
        assert!(
            (report.it_joules - joules).abs() < 1e-9,
            "{}",
            report.it_joules
        );
        // the peak: both on, one booting
        assert!((report.peak_kw - 0.25).abs() < 1e-12);
    }

    #[test]
    fn energy_over_a_known_timeline() {
        // Machine: 2 nodes, 200 W idle. Job A: 4 cores 0-100 s; job B: 2 cores 50-150 s.
        // Power: 0-50: 200 + 100 = 300 W; 50-100: 200 + 150 = 350 W; 100-150: 200 + 50 = 250 W;
        // 150-200 (the span runs to 200): 200 W. Energy 15,000 + 17,500 + 12,500 + 10,000 J.
        let mut meter = Meter::new(200.0, 1.5, None, None);
        let a = meter.add(1, 0, 100, node().draw(&cores(4)), None).unwrap();
        let b = meter.add(2, 50, 150, node().draw(&cores(2)), None).unwrap();
        // A is charged its 4 cores' idle share (100 W) and their 100 W: 20,000 J
        assert_eq!(a.it_joules, 20_000.0);
        assert_eq!(a.facility_joules, 30_000.0); // PUE 1.5
        assert_eq!(b.it_joules, (50.0 + 50.0) * 100.0);
        assert!(a.carbon_g.is_nan());
        let report = meter.finish(0, 200).unwrap();
        assert_eq!(report.it_joules, 55_000.0);
        assert_eq!(report.facility_kwh, 55_000.0 * 1.5 / 3.6e6);
        assert_eq!(report.peak_kw, 0.35);
        assert_eq!(report.peak_facility_kw, 350.0 * 1.5 / 1e3);
        assert_eq!(report.mean_kw, 55_000.0 / 200.0 / 1000.0);
        assert_eq!(report.jobs, 2);
        assert_eq!(report.user_kwh.unwrap().max, 20_000.0 / 3.6e6);
        assert_eq!(report.carbon_kg, None);
    }

    #[test]
    fn an_instant_s_ends_come_before_its_peak() {
        // Job A ends at 100 as job B starts: the power never holds both.
        let mut meter = Meter::new(0.0, 1.0, None, None);
        meter
            .add(
                1,
                0,
                100,
                Draw {
                    idle_share_w: 0.0,
                    dynamic_w: 1000.0,
                },
                None,
            )
            .unwrap();
        meter
            .add(
                1,
                100,
                200,
                Draw {
                    idle_share_w: 0.0,
                    dynamic_w: 1000.0,
                },
                None,
            )
            .unwrap();
        assert_eq!(meter.finish(0, 200).unwrap().peak_kw, 1.0);
    }

    #[test]
    fn carbon_and_cost_with_step_series() {
        // 100 g/kWh for the first 100 s, then 500. Idle 0 W; one job of 3,600 W from 50 to 150:
        // 50 s at 100 and 50 s at 500 -> 3600 W x (5,000 + 25,000) g.s/kWh / 3.6e6 = 30 g;
        // PUE 2 doubles it.
        let carbon = Arc::new(
            Series::parse(
                Quantity::Carbon,
                "c.csv",
                "time_s,gco2_per_kwh\n0,100\n100,500\n",
                None,
                false,
            )
            .unwrap(),
        );
        let price = Arc::new(
            Series::parse(
                Quantity::Price,
                "p.csv",
                "time_s,eur_per_kwh\n0,0.2\n100,0.2\n",
                None,
                false,
            )
            .unwrap(),
        );
        let mut meter = Meter::new(0.0, 2.0, Some(carbon), Some(price));
        let job = meter
            .add(
                7,
                50,
                150,
                Draw {
                    idle_share_w: 0.0,
                    dynamic_w: 3600.0,
                },
                None,
            )
            .unwrap();
        assert!((job.carbon_g - 60.0).abs() < 1e-9, "{}", job.carbon_g);
        // 0.1 kWh IT, 0.2 kWh facility at 0.2 a kWh
        assert!((job.cost - 0.04).abs() < 1e-12, "{}", job.cost);
        let report = meter.finish(0, 200).unwrap();
        assert!((report.carbon_kg.unwrap() - 0.06).abs() < 1e-12);
        assert!((report.cost.unwrap() - 0.04).abs() < 1e-12);
        assert_eq!(report.currency.as_deref(), Some("eur"));
    }

    #[test]
    fn idle_power_is_charged_at_the_intensity_of_its_time() {
        // Idle 1,000 W over 0-200 s: 100 s at 100 g/kWh and 100 s at 500: 1000 x 60,000 / 3.6e6.
        let carbon = Arc::new(
            Series::parse(
                Quantity::Carbon,
                "c.csv",
                "time_s,gco2_per_kwh\n0,100\n100,500\n",
                None,
                false,
            )
            .unwrap(),
        );
        let meter = Meter::new(1000.0, 1.0, Some(carbon), None);
        let report = meter.finish(0, 200).unwrap();
        assert!((report.carbon_kg.unwrap() - 1000.0 * 60_000.0 / 3.6e6 / 1000.0).abs() < 1e-15);
    }

    #[test]
    fn logged_energies_add_up_exactly() {
        // a machine whose power is only what its jobs logged: no idle power
        let as_logged = NodePower {
            cores: 4,
            ..NodePower::default()
        };
        let mut meter = Meter::new(0.0, 1.0, None, None);
        let logged = [123_456_789.0, 987.0, 31_415_926.0, 0.0];
        for (i, &joules) in logged.iter().enumerate() {
            let i = i as Time;
            meter
                .add(
                    i,
                    i * 10,
                    i * 10 + 7,
                    as_logged.draw(&cores(3)),
                    Some(joules),
                )
                .unwrap();
        }
        let report = meter.finish(0, 100).unwrap();
        assert_eq!(report.it_joules, logged.iter().sum::<f64>());
        assert_eq!(report.jobs_logged, 4);
    }

    #[test]
    fn an_uncovered_time_is_an_error() {
        let carbon = Arc::new(
            Series::parse(
                Quantity::Carbon,
                "c.csv",
                "time_s,gco2_per_kwh\n0,100\n",
                None,
                false,
            )
            .unwrap(),
        );
        let mut meter = Meter::new(0.0, 1.0, Some(carbon), None);
        let err = meter
            .add(
                1,
                0,
                10,
                Draw {
                    idle_share_w: 0.0,
                    dynamic_w: 1.0,
                },
                None,
            )
            .unwrap_err()
            .to_string();
        assert!(err.contains("c.csv") && err.contains("10 s"), "{err}");
    }
}
