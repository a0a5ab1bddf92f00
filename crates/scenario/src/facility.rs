//! The power policies a run's `[power]` table asks for, as the engine's [`engine::Facility`]:
//! the power-cap guard and the carbon-aware delay of flexible jobs. Both work beside any
//! scheduler part, as rules the engine applies in time.
//!
//! **The power-cap guard.** The machine gets one more machine-wide resource, watts above
//! idle, whose amount available at any time is the cap less the machine's idle power; each
//! job asks for its dynamic power ([`power::Draw::dynamic_w`], rounded up; on a machine of
//! node types the most its request draws on any type, so the guard never undercounts). A
//! job then starts only if the machine's modelled IT power stays at or under the cap, by the
//! same test as any resource: under none and the EASY family, which schedule machine-wide
//! resources, and under the Slurm model, which tests them at every start of its main loop and
//! of backfilling without planning them (conservative backfilling and dynP are refused). When
//! a scheduled cap falls below what running jobs draw, they keep running and nothing starts
//! until their ends bring the power under it.
//! This is admission control, as Batsim's and FastSim's power-capping schedulers do it; Slurm's
//! own power capping (`power/cray`, `PowerParameters=cap_watts`, `power_mgmt.shtml`) instead
//! lowers the nodes' hardware caps, so jobs run slower, which is not modelled.
//!
//! **The carbon-aware delay.** A share of the jobs is flexible (drawn per job from the run's
//! seed, so the same jobs are flexible under every scheduler of a paired comparison). A
//! flexible job is held from its submission to a release chosen with a perfect forecast of
//! the carbon-intensity series: the first time the intensity is at or under a threshold (or
//! under a percentile of the coming window, computed at submission), or CATS's best window
//! (the start within the longest delay whose mean intensity over the job's estimate is least).
//! Never more than `max_delay_h`. Its wait counts the hold. The control policy `random` holds
//! each flexible job a uniform random delay up to `max_delay_h`, blind to the intensity: what a
//! carbon-aware policy saves beyond it is its own.
//!
//! **Idle nodes that power down** (`suspend_time_s`, Slurm's `SuspendTime`): a node with no
//! job for that long shuts down; a job given a node that is off holds its resources while the
//! node boots and runs from when it is ready ([`power::NodeSaving`]), under none, the EASY
//! family and the Slurm model (the rules that keep no plan of running jobs between passes, or
//! follow the delay; conservative backfilling and dynP are refused).

use std::sync::{Arc, Mutex};

use cluster::Cluster;
use config::power::{Cap, Delay, DelayPolicy, PowerSetup};
use engine::{Facility, Job, NodeStates};
use power::{NodePower, NodeSaving, Placement, Series, Used};
use simtime::Time;

/// The power policies of a run.
pub(crate) struct PowerFacility {
    /// The resource kind of the cap's watts, and the cap.
    cap: Option<(usize, Cap)>,
    /// The machine's idle power, W.
    idle_w: f64,
    /// The node types a job's demand is computed on (the most it draws on any).
    types: Vec<NodePower>,
    /// The kinds holding GPUs and memory (a machine of processors).
    gpu_kinds: Vec<usize>,
    memory_kind: Option<usize>,
    /// The carbon-aware delay, with each group's flexible share by group index (from 1).
    delay: Option<(Delay, Vec<f64>)>,
    /// The seed the flexible jobs are drawn with.
    seed: u64,
    /// Idle nodes power down: the model of a run's nodes as it starts, and the one the last
    /// run used, for the meter ([`PowerFacility::saving`]).
    saving: Option<(NodeSaving, SavingHandle)>,
}

/// Where a run's node power states are left for the meter.
pub(crate) type SavingHandle = Arc<Mutex<Option<NodeSaving>>>;

/// The engine's view of the nodes' power states: the model, shared with the handle.
struct SavingStates {
    model: NodeSaving,
    handle: SavingHandle,
}

impl NodeStates for SavingStates {
    fn job_started(
        &mut self,
        now: Time,
        id: cluster::JobId,
        job: &Job,
        allocation: Option<&[(u32, cluster::Amounts)]>,
    ) -> Time {
        match allocation {
            Some(nodes) => {
                let held: Vec<(u32, u32)> = nodes.iter().map(|(n, a)| (*n, a.cpus)).collect();
                self.model
                    .start(now, u64::from(id.0), Placement::Nodes(&held))
            }
            None => self
                .model
                .start(now, u64::from(id.0), Placement::Cores(job.processors)),
        }
    }

    fn job_ended(&mut self, now: Time, id: cluster::JobId) {
        self.model.end(now, u64::from(id.0));
    }

    fn next_change(&self) -> Option<Time> {
        self.model.next_change()
    }

    fn apply(&mut self, now: Time) {
        self.model.apply(now);
    }
}

impl Drop for SavingStates {
    /// The run is over: its states go to the handle, for the meter.
    fn drop(&mut self) {
        if let Ok(mut slot) = self.handle.lock() {
            *slot = Some(std::mem::replace(
                &mut self.model,
                NodeSaving::new(0, Vec::new(), &[]),
            ));
        }
    }
}

impl PowerFacility {
    /// The policies of `setup`, or `None` when it asks for none. `kinds`: the run's resource
    /// kinds before the cap's (its watts are kind `kinds.len()`); `groups`: the site's group
    /// names, by index (`None` for a replay, which takes one flexible share for every job).
    pub(crate) fn new(
        setup: &PowerSetup,
        kinds: &[String],
        groups: Option<&[String]>,
        seed: u64,
    ) -> config::Result<Option<PowerFacility>> {
        if setup.cap.is_none() && setup.delay.is_none() && setup.suspend_after.is_none() {
            return Ok(None);
        }
        if let Some(delay) = &setup.delay {
            let key = config::naming::key("power.delay.flexible");
            match groups {
                None if delay.share.is_none() => {
                    return Err(config::invalid!(
                        "{key}: shares by group apply to a site's groups; a replay takes one share for every job (flexible = 0.3)"
                    ));
                }
                Some(groups) => {
                    if let Some(name) = delay.by_group.keys().find(|g| !groups.contains(g)) {
                        return Err(config::invalid!(
                            "{key}: the site has no group {name:?} (its groups: {})",
                            groups.join(", ")
                        ));
                    }
                }
                None => {}
            }
        }
        let groups = groups.unwrap_or_default();
        let delay = setup.delay.clone().map(|d| {
            let shares = groups
                .iter()
                .map(|g| {
                    d.share
                        .unwrap_or_else(|| d.by_group.get(g).copied().unwrap_or(0.0))
                })
                .collect();
            (d, shares)
        });
        Ok(Some(PowerFacility {
            cap: setup.cap.clone().map(|c| (kinds.len(), c)),
            idle_w: setup.idle_w,
            types: setup.types.clone(),
            gpu_kinds: (kinds.iter().enumerate())
                .filter(|(_, name)| name.starts_with(config::nodes::GPU_KIND))
                .map(|(i, _)| i)
                .collect(),
            memory_kind: kinds.iter().position(|n| n == config::nodes::MEMORY_KIND),
            delay,
            seed,
            saving: setup.suspend_after.map(|after| {
                (
                    NodeSaving::new(after, setup.types.clone(), &setup.nodes),
                    SavingHandle::default(),
                )
            }),
        }))
    }

    /// Where the node power states of the run are left when it ends, if idle nodes power
    /// down.
    pub(crate) fn saving(&self) -> Option<SavingHandle> {
        self.saving.as_ref().map(|(_, handle)| handle.clone())
    }

    /// The machine-wide amount of the cap's kind (the most watts above idle it ever allows),
    /// for the cluster's resources, with its index.
    pub(crate) fn cap_capacity(&self) -> Option<(usize, u32)> {
        self.cap
            .as_ref()
            .map(|(kind, cap)| (*kind, watts(cap.max_w() - self.idle_w)))
    }

    /// A job's dynamic power, W (rounded up): the most its request draws on any node type.
    fn demand(&self, job: &Job) -> u32 {
        let used = Used {
            cores: job.processors,
            gpus: self.gpu_kinds.iter().map(|&k| job.extra.get(k)).sum(),
            memory_mib: self.memory_kind.map_or(0, |k| u64::from(job.extra.get(k))),
            whole_nodes: 0,
        };
        let most = self
            .types
            .iter()
            .map(|t| t.draw(&used).dynamic_w)
            .fold(0.0, f64::max);
        watts(most.ceil())
    }

    /// Whether `job` is flexible: a draw from the seed and the job's id under its group's share.
    fn flexible(&self, job: &Job, shares: &[f64], delay: &Delay) -> bool {
        let share = match delay.share {
            Some(share) => share,
            None => usize::try_from(job.group - 1)
                .ok()
                .and_then(|g| shares.get(g).copied())
                .unwrap_or(0.0),
        };
        share > 0.0 && unit_draw(self.seed, job.job_id) < share
    }
}

/// Watts as a whole amount of the cap's resource (0 .. u32::MAX).
fn watts(w: f64) -> u32 {
    if w.is_finite() {
        w.clamp(0.0, f64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    }
}

/// A number in [0, 1) from a seed and a job id (SplitMix64), the same for the same pair.
fn unit_draw(seed: u64, job_id: i64) -> f64 {
    let mut z = seed ^ (job_id as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

/// When a flexible job submitted at `now` with estimate `estimate` is released under `delay`.
/// A time the series does not cover releases it at once (the run's meter then reports the
/// series' gap).
pub(crate) fn release(delay: &Delay, now: Time, estimate: Time) -> Time {
    let latest = now.saturating_add(delay.max_delay);
    let series = &delay.carbon;
    match delay.policy {
        DelayPolicy::Threshold => first_at_or_under(series, now, latest, delay.threshold),
        DelayPolicy::Percentile => {
            let Some(limit) = percentile(series, now, now + delay.window, delay.percentile) else {
                return now;
            };
            first_at_or_under(series, now, latest, limit)
        }
        DelayPolicy::Random => now, // drawn per job: [`PowerFacility::admit`]
        DelayPolicy::BestWindow => {
            let length = estimate.max(1);
            let mut best = (f64::INFINITY, now);
            let mut candidate = Some(now);
            while let Some(s) = candidate.filter(|&s| s <= latest) {
                if let Ok(mean) = series.mean(s, s + length) {
                    if mean < best.0 {
                        best = (mean, s);
                    }
                }
                candidate = series.next_step_after(s);
            }
            best.1
        }
    }
}

/// The first time in [now, latest] at which the series is at or under `limit` (`latest` if
/// none; `now` where it is not covered).
fn first_at_or_under(series: &Series, now: Time, latest: Time, limit: f64) -> Time {
    let mut t = now;
    loop {
        match series.value_at(t) {
            Ok(v) if v <= limit => return t,
            Ok(_) => {}
            Err(_) => return now,
        }
        match series.next_step_after(t) {
            Some(next) if next <= latest => t = next,
            _ => return latest,
        }
    }
}

/// The time-weighted `p`-th percentile of the series over [from, to] (`None` where it is not
/// covered).
fn percentile(series: &Series, from: Time, to: Time, p: f64) -> Option<f64> {
    let mut pieces: Vec<(f64, Time)> = Vec::new();
    let mut t = from;
    while t < to {
        let next = series.next_step_after(t).map_or(to, |n| n.min(to));
        pieces.push((series.value_at(t).ok()?, next - t));
        t = next;
    }
    pieces.sort_by(|a, b| a.0.total_cmp(&b.0));
    let total: Time = pieces.iter().map(|p| p.1).sum();
    let wanted = p / 100.0 * total as f64;
    let mut seen = 0.0;
    for (value, length) in &pieces {
        seen += *length as f64;
        if seen >= wanted {
            return Some(*value);
        }
    }
    pieces.last().map(|p| p.0)
}

impl Facility for PowerFacility {
    fn admit(&self, job: &mut Job, now: Time) -> Time {
        if let Some((kind, _)) = &self.cap {
            job.extra = job.extra.with(*kind, self.demand(job));
        }
        match &self.delay {
            Some((delay, shares)) if self.flexible(job, shares, delay) => match delay.policy {
                DelayPolicy::Random => {
                    // a second draw of the job's, independent of the one that made it flexible
                    let u = unit_draw(self.seed ^ 0x5DEE_CE66_D1CE_5EED, job.job_id);
                    now + (u * (delay.max_delay + 1) as f64) as Time
                }
                _ => release(delay, now, job.estimate),
            },
            _ => now,
        }
    }

    fn next_change(&self, after: Time) -> Option<Time> {
        match &self.cap {
            Some((_, Cap::Schedule(series))) => {
                if after == Time::MIN {
                    Some(series.start().min(0))
                } else {
                    series.next_step_after(after)
                }
            }
            _ => None,
        }
    }

    fn apply(&self, now: Time, cluster: &mut Cluster) {
        if let Some((kind, Cap::Schedule(series))) = &self.cap {
            let cap = series.held_value_at(now.max(series.start()));
            cluster.set_available_extra(*kind, watts(cap - self.idle_w));
        }
    }

    fn node_states(&self) -> Option<Box<dyn NodeStates>> {
        self.saving.as_ref().map(|(model, handle)| {
            Box::new(SavingStates {
                model: model.clone(),
                handle: handle.clone(),
            }) as Box<dyn NodeStates>
        })
    }
}

/// `cluster` ready for `facility`: with the cap's watts as one more machine-wide resource,
/// when it has a cap (refused under the backfilling rules that plan processors only), and
/// checked to follow delayed starts when idle nodes power down.
pub(crate) fn prepare(cluster: Cluster, facility: &PowerFacility) -> config::Result<Cluster> {
    if facility.saving.is_some() && !cluster.follows_start_delays() {
        return Err(config::invalid!(
            "{}: `suspend_time_s`: idle nodes that power down delay the starts of jobs given nodes that are off, and the {} backfilling rule plans with running jobs' ends: use none, the EASY family or the Slurm model",
            config::naming::key("power"),
            cluster.scheduler().backfill.name()
        ));
    }
    let Some((kind, amount)) = facility.cap_capacity() else {
        return Ok(cluster);
    };
    if kind >= job::MAX_EXTRA_KINDS {
        return Err(config::invalid!(
            "{}: the power cap takes one of the machine's {} resource kinds, and the run already has {kind}",
            config::naming::key("power"),
            job::MAX_EXTRA_KINDS
        ));
    }
    cluster.with_guard(kind, amount).map_err(|e| {
        config::invalid!(
            "{}: the power cap is a machine-wide resource (watts above idle): {e}",
            config::naming::key("power")
        )
    })
}

/// The error of a job that asks for more watts than the cap ever allows (`cap`: the cap's
/// kind and its most watts above idle), in words; `None` for any other error.
pub(crate) fn cap_error(
    cap: Option<(usize, u32)>,
    error: &engine::EngineError,
) -> Option<config::ScenarioError> {
    let (kind, most) = cap?;
    match error {
        engine::EngineError::Cluster {
            job_id,
            source: cluster::ClusterError::BadExtra { needed, .. },
        } if needed.get(kind) > most => Some(config::invalid!(
            "{}: job {job_id} alone draws {:.3} kW above the machine's idle power, more than the power cap ever allows ({:.3} kW above idle): it could never start; raise the cap",
            config::naming::key("power"),
            f64::from(needed.get(kind)) / 1e3,
            f64::from(most) / 1e3
        )),
        engine::EngineError::Stuck { waiting } => Some(config::invalid!(
            "{}: {waiting} jobs were left waiting for power: the power cap's schedule ends below what they draw (its last value holds to the end of the run)",
            config::naming::key("power")
        )),
        _ => None,
    }
}

/// The facility of `setup` as the engine takes it.
pub(crate) fn engine_facility(facility: Option<PowerFacility>) -> Option<Arc<dyn Facility>> {
    facility.map(|f| Arc::new(f) as Arc<dyn Facility>)
}

/// Several facilities as one (the power policies and the outages): each admits a job in turn
/// (the latest release holds), capacities change at the earliest of their changes, where each
/// applies what is in force then; the first with node power states gives them, and the first
/// with node failures.
struct Facilities(Vec<Arc<dyn Facility>>);

impl Facility for Facilities {
    fn admit(&self, job: &mut Job, now: Time) -> Time {
        self.0
            .iter()
            .fold(now, |release, f| f.admit(job, now).max(release))
    }

    fn next_change(&self, after: Time) -> Option<Time> {
        self.0.iter().filter_map(|f| f.next_change(after)).min()
    }

    fn apply(&self, now: Time, cluster: &mut Cluster) {
        // each sets what is in force at `now`, so applying one whose change is not due is
        // harmless
        for f in &self.0 {
            f.apply(now, cluster);
        }
    }

    fn node_states(&self) -> Option<Box<dyn NodeStates>> {
        self.0.iter().find_map(|f| f.node_states())
    }

    fn failures(&self) -> Option<Box<dyn engine::Failures>> {
        self.0.iter().find_map(|f| f.failures())
    }
}

/// The run's facilities as the engine takes them: none, one, or [`Facilities`].
pub(crate) fn combined(mut facilities: Vec<Arc<dyn Facility>>) -> Option<Arc<dyn Facility>> {
    match facilities.len() {
        0 => None,
        1 => facilities.pop(),
        _ => Some(Arc::new(Facilities(facilities))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use power::Quantity;

    fn delay(policy: DelayPolicy, threshold: f64, percentile: f64) -> Delay {
        // 400 g/kWh from 0 to 6 h, 100 from 6 to 9 h, 300 after (to 24 h)
        let carbon = Series::parse(
            Quantity::Carbon,
            "c.csv",
            "time_s,gco2_per_kwh\n0,400\n21600,100\n32400,300\n",
            None,
            true,
        );
        let carbon = match carbon {
            Ok(c) => Arc::new(c),
            Err(e) => panic!("{e}"),
        };
        Delay {
            policy,
            threshold,
            percentile,
            window: 24 * 3600,
            max_delay: 12 * 3600,
            share: Some(1.0),
            by_group: Default::default(),
            carbon,
        }
    }

    #[test]
    fn a_threshold_holds_until_the_intensity_falls() {
        let d = delay(DelayPolicy::Threshold, 200.0, 0.0);
        assert_eq!(release(&d, 3600, 600), 21600);
        // already under: at once
        assert_eq!(release(&d, 22000, 600), 22000);
        // never under within 12 h: held the longest
        let d = delay(DelayPolicy::Threshold, 50.0, 0.0);
        assert_eq!(release(&d, 3600, 600), 3600 + 12 * 3600);
    }

    #[test]
    fn the_best_window_minimises_the_mean_over_the_estimate() {
        let d = delay(DelayPolicy::BestWindow, 0.0, 0.0);
        // a 3 h job submitted at 1 h: starting at 6 h gives 100 all along
        assert_eq!(release(&d, 3600, 3 * 3600), 21600);
        // a 10 h job submitted at 0: [0, 10 h] = 6x400 + 3x100 + 1x300 = 3000/10 = 300;
        // [6 h, 16 h] = 3x100 + 7x300 = 2400/10 = 240; [9 h, 19 h] = 300: 6 h is best
        assert_eq!(release(&d, 0, 10 * 3600), 21600);
    }

    #[test]
    fn a_percentile_of_the_coming_day_sets_the_threshold() {
        // over a day from 0: 6 h at 400, 3 h at 100, 15 h at 300; the 10th percentile is 100
        let d = delay(DelayPolicy::Percentile, 0.0, 10.0);
        assert_eq!(percentile(&d.carbon, 0, 86400, 10.0), Some(100.0));
        assert_eq!(percentile(&d.carbon, 0, 86400, 50.0), Some(300.0));
        assert_eq!(release(&d, 0, 600), 21600);
    }

    #[test]
    fn draws_are_uniform_and_repeatable() {
        let n = 100_000;
        let under = (0..n).filter(|&i| unit_draw(7, i) < 0.3).count();
        assert!((under as f64 / n as f64 - 0.3).abs() < 0.01, "{under}");
        assert_eq!(unit_draw(7, 42), unit_draw(7, 42));
        assert_ne!(unit_draw(7, 42), unit_draw(8, 42));
    }
}
