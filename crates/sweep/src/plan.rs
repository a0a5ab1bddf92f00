//! A sweep file and the runs it stands for.
//!
//! ```toml
//! site = "../paper.toml"              # the population file every run starts from (relative to
//!                                     # this file); default: the embedded default site
//! seeds = { first = 1, count = 10 }   # or a list: seeds = [1, 2, 3]
//! baseline = "easy"                   # paired differences against this label ...
//! baseline_axis = "scheduler"         # ... of this axis (default "scheduler")
//! headroom = true                     # also measure headroom and capture (3 simulations a run)
//! outputs = ["jobs.csv", "summary.json"] # also write these files of every run into
//!                                     # OUT/runs/<run>/ (any registered output format)
//!
//! [[axes]]
//! name = "scheduler"                  # the column in results.csv
//! key = "scheduler"                   # what it sets in the population file (a dotted path)
//! values = [{ policy = "easy" }, { policy = "creasy", alpha = 6000 }]
//!
//! [[axes]]
//! name = "users"
//! key = "groups.0.users"
//! values = [50, 100, 150, 200, 250]
//!
//! [report]                            # optional: the table printed after the sweep
//! statistic = "quantiles"             # or "mean" (the default): mean ± 95 % interval
//! measures = ["response_mean", "awrt"] # names of results.csv's metric column
//! ```
//!
//! The grid is every combination of axis values (the first axis outermost) times every seed. Any
//! key of the population file can be an axis; scalar values are their own labels, scheduler
//! tables are labelled like `creasy-6000`, other tables need `labels = [...]`.
//!
//! A replay sweep has a `[replay]` table instead of `site` (see [`config::replay_table`]): every
//! run replays a trace, and the axes' keys are the table's (`trace`, `scheduler`, `load_factor`,
//! `estimates`, ...); traces are labelled by their file name without `.swf.gz`.

use std::path::{Path, PathBuf};

use config::site::{SchedulerSection, Site};
use config::{Result, ensure, invalid};
use serde::Deserialize;

/// Seeds: a list or a range.
#[derive(Debug, Clone)]
enum Seeds {
    List(Vec<u64>),
    Range { first: u64, count: u64 },
}

impl<'de> Deserialize<'de> for Seeds {
    /// A list of seeds, or `{ first = F, count = N }`; anything else is refused with what is
    /// expected (serde's untagged enums only say "data did not match any variant").
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Seeds, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Range {
            first: u64,
            count: u64,
        }
        let value = toml::Value::deserialize(d)?;
        let expected = "a list of seeds such as [1, 2, 3] or a range such as { first = 1, count = 10 } (whole numbers >= 0)";
        match value {
            toml::Value::Array(_) => value
                .try_into::<Vec<u64>>()
                .map(Seeds::List)
                .map_err(|e| serde::de::Error::custom(format!("expected {expected}: {e}"))),
            toml::Value::Table(_) => value
                .try_into::<Range>()
                .map(|r| Seeds::Range {
                    first: r.first,
                    count: r.count,
                })
                .map_err(|e| serde::de::Error::custom(format!("expected {expected}: {e}"))),
            other => Err(serde::de::Error::custom(format!(
                "expected {expected}, found {}",
                other.type_str()
            ))),
        }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct AxisFile {
    name: String,
    key: String,
    values: Vec<toml::Value>,
    #[serde(default)]
    labels: Option<Vec<String>>,
}

fn default_baseline_axis() -> String {
    "scheduler".to_string()
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct SweepFile {
    #[serde(default)]
    site: Option<String>,
    #[serde(default)]
    replay: Option<toml::Table>,
    seeds: Seeds,
    #[serde(default)]
    baseline: Option<String>,
    #[serde(default = "default_baseline_axis")]
    baseline_axis: String,
    axes: Vec<AxisFile>,
    #[serde(default)]
    headroom: bool,
    #[serde(default)]
    outputs: Vec<String>,
    #[serde(default)]
    report: Option<ReportFile>,
}

/// `[report]`: what the terminal table after a sweep shows (results.csv always has everything).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct ReportFile {
    #[serde(default)]
    statistic: Statistic,
    #[serde(default)]
    measures: Option<Vec<String>>,
}

/// How the terminal table summarizes a measure over the seeds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Statistic {
    /// Mean ± half width of the 95 % confidence interval.
    #[default]
    Mean,
    /// 2.5 % quantile / median / 97.5 % quantile (Schlagkamp, paper 004).
    Quantiles,
}

/// The terminal table: the statistic and the measures.
#[derive(Debug, Clone)]
pub struct Report {
    /// Mean or quantiles.
    pub statistic: Statistic,
    /// The measures, from the catalogue (each printed with its title and scale).
    pub measures: Vec<&'static metrics::Measure>,
}

impl Default for Report {
    fn default() -> Report {
        let measures = [
            "throughput_submitted_per_hour",
            "session_length_mean",
            "utilization",
            "response_mean",
            "slowdown_mean",
        ];
        Report {
            statistic: Statistic::Mean,
            measures: measures
                .into_iter()
                .filter_map(metrics::find_measure)
                .collect(),
        }
    }
}

/// One axis of the grid.
#[derive(Debug, Clone)]
pub struct Axis {
    /// Column name.
    pub name: String,
    /// Key path in the population file.
    pub key: String,
    /// (label, value) pairs.
    pub values: Vec<(String, toml::Value)>,
}

/// One run: a point of the grid and a seed. Runs are made on demand ([`Plan::run`]), so a
/// sweep of a million runs does not hold a million of them.
#[derive(Debug, Clone)]
pub struct Run {
    /// Index of the run in sweep order (grid order, then seeds): `point * seeds + seed index`.
    pub index: usize,
    /// Index of the point (configuration) in grid order.
    pub point: usize,
    /// The axis labels of the point, in axis order.
    pub labels: Vec<String>,
    /// The axes' names, in axis order (`labels[i]` is the value of axis `axes[i]`).
    pub axes: Vec<String>,
    /// The seed.
    pub seed: u64,
    /// A readable id: `scheduler=easy,users=50,seed=1`.
    pub id: String,
    /// The result file name: the id made safe for file systems.
    pub file: String,
}

/// A parsed sweep.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The sweep file's text (kept with the results).
    pub text: String,
    /// The population file text, its origin and base directory.
    pub site_text: String,
    /// Where the population file came from.
    pub site_origin: String,
    /// Its directory, for relative model paths.
    pub site_base: Option<PathBuf>,
    /// The axes.
    pub axes: Vec<Axis>,
    /// The seeds.
    pub seeds: Vec<u64>,
    /// The seeds sorted, each with its position in `seeds` (to find a run by its seed).
    seed_positions: Vec<(u64, usize)>,
    /// (axis index, label) of the baseline, if any.
    pub baseline: Option<(usize, String)>,
    /// The terminal table.
    pub report: Report,
    /// Whether each run also measures its headroom (`headroom = true`).
    pub headroom: bool,
    /// The output files every run writes (`outputs`; none by default: a sweep keeps only the
    /// measures).
    pub outputs: Vec<&'static dyn scenario::output::OutputFormat>,
    /// A replay sweep's `[replay]` table (`None`: a sweep of site runs, from the population
    /// file above).
    pub replay: Option<toml::Table>,
    /// The sweep file's directory, where a relative trace path starts.
    pub dir: PathBuf,
    /// Whether some run of the sweep has a power model (its site's `[power]`, its `[replay]`
    /// table's `power`, or an axis setting either): only then do the sweep's tables have the
    /// power measures ([`Plan::tabulates`]).
    pub power: bool,
}

impl Plan {
    /// Reads and checks a sweep file (every run's site is built once to catch bad values early).
    pub fn load(path: &Path) -> Result<Plan> {
        let origin = path.display().to_string();
        let text = config::files::read_text(path, config::files::MAX_TEXT_BYTES, "sweep file")?;
        Plan::from_text(text, &origin, path.parent().unwrap_or(Path::new(".")))
    }

    /// A plan from sweep-file text; `origin` names it in errors and `dir` is where a relative
    /// `site` path starts.
    pub fn from_text(text: String, origin: &str, dir: &Path) -> Result<Plan> {
        let origin = origin.to_string();
        let file: SweepFile = toml::from_str(&text).map_err(|e| invalid!("{origin}: {e}"))?;
        let (site_text, site_origin, site_base) = match &file.replay {
            None => Site::source(file.site.as_ref().map(|s| dir.join(s)).as_deref())?,
            Some(_) => {
                ensure!(
                    file.site.is_none(),
                    "{origin}: give either site (site runs) or [replay] (replays of traces), not both"
                );
                ensure!(
                    !file.headroom,
                    "{origin}: headroom = true: headroom is measured on site runs (the closed loop), not on replays"
                );
                (String::new(), origin.clone(), None)
            }
        };
        let replaying = file.replay.is_some();
        let count = match &file.seeds {
            Seeds::List(list) => list.len() as u64,
            Seeds::Range { count, .. } => *count,
        };
        ensure!(
            count <= config::limits::MAX_SEEDS,
            "{origin}: seeds: {count} seeds; at most {} per sweep",
            config::limits::MAX_SEEDS
        );
        let seeds = match file.seeds {
            Seeds::List(list) => list,
            Seeds::Range { first, count } => (first..first.saturating_add(count)).collect(),
        };
        ensure!(!seeds.is_empty(), "{origin}: seeds: give at least one seed");
        // a run's seed is a population file's (or replay's) `seed`, a TOML integer
        if let Some(big) = seeds.iter().find(|&&s| i64::try_from(s).is_err()) {
            return Err(invalid!(
                "{origin}: seeds: seed {big} is past {}, the largest seed a run takes",
                i64::MAX
            ));
        }
        let mut seed_positions: Vec<(u64, usize)> =
            seeds.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        seed_positions.sort_unstable();
        ensure!(
            seed_positions.windows(2).all(|w| w[0].0 != w[1].0),
            "{origin}: seeds: a seed is listed twice"
        );
        ensure!(
            !file.axes.is_empty(),
            "{origin}: no [[axes]]: a sweep needs at least one"
        );
        let mut axes = Vec::new();
        for (i, a) in file.axes.iter().enumerate() {
            ensure!(
                !a.values.is_empty(),
                "{origin}: axes[{i}] ({}): no values",
                a.name
            );
            ensure!(
                !axes.iter().any(|b: &Axis| b.name == a.name),
                "{origin}: axes[{i}]: the name {:?} is used twice",
                a.name
            );
            ensure!(
                !scenario::tables::COLUMNS.contains(&a.name.as_str()) && !a.name.is_empty(),
                "{origin}: axes[{i}].name = {:?}: results.csv already has a column of that name; choose another (the columns are {})",
                a.name,
                scenario::tables::COLUMNS.join(", ")
            );
            let labels = match &a.labels {
                Some(l) => {
                    ensure!(
                        l.len() == a.values.len(),
                        "{origin}: axes[{i}] ({}): {} labels for {} values",
                        a.name,
                        l.len(),
                        a.values.len()
                    );
                    l.clone()
                }
                None => a
                    .values
                    .iter()
                    .map(|v| label_of(&a.key, v, replaying))
                    .collect::<Result<_, _>>()
                    .map_err(|e| invalid!("{origin}: axes[{i}] ({}): {e}", a.name))?,
            };
            let mut unique = labels.clone();
            unique.sort();
            unique.dedup();
            ensure!(
                unique.len() == labels.len(),
                "{origin}: axes[{i}] ({}): two values have the same label",
                a.name
            );
            axes.push(Axis {
                name: a.name.clone(),
                key: a.key.clone(),
                values: labels.into_iter().zip(a.values.iter().cloned()).collect(),
            });
        }
        let baseline = match &file.baseline {
            None => None,
            Some(label) => {
                let axis = axes
                    .iter()
                    .position(|a| a.name == file.baseline_axis)
                    .ok_or_else(|| {
                        invalid!(
                            "{origin}: baseline_axis {:?} is not an axis",
                            file.baseline_axis
                        )
                    })?;
                ensure!(
                    axes[axis].values.iter().any(|(l, _)| l == label),
                    "{origin}: baseline {label:?} is not a value of axis {:?}",
                    file.baseline_axis
                );
                Some((axis, label.clone()))
            }
        };
        let report = match &file.report {
            None => Report::default(),
            Some(r) => {
                let measures = match &r.measures {
                    None => Report::default().measures,
                    Some(names) => {
                        ensure!(
                            !names.is_empty(),
                            "{origin}: report.measures: give at least one"
                        );
                        names
                            .iter()
                            .map(|name| {
                                metrics::find_measure(name).ok_or_else(|| {
                                    invalid!(
                                        "{origin}: report.measures: {name:?} is not a measure; the measures are the metric names of results.csv: {}",
                                        metrics::measure_names().collect::<Vec<_>>().join(", ")
                                    )
                                })
                            })
                            .collect::<Result<Vec<_>>>()?
                    }
                };
                Report {
                    statistic: r.statistic,
                    measures,
                }
            }
        };
        let mut plan =
            Plan {
                text,
                site_text,
                site_origin,
                site_base,
                axes,
                seeds,
                seed_positions,
                baseline,
                report,
                headroom: file.headroom,
                outputs: file
                    .outputs
                    .iter()
                    .map(|name| {
                        scenario::output::find_format(name).ok_or_else(|| {
                        let names: Vec<&str> =
                            scenario::output::FORMATS.iter().map(|f| f.file_name()).collect();
                        invalid!(
                            "{origin}: outputs: {name:?} is not an output file; choose among {}",
                            names.join(", ")
                        )
                    })
                    })
                    .collect::<Result<_>>()?,
                replay: file.replay.clone(),
                dir: dir.to_path_buf(),
                power: false,
            };
        // Checked before anything multiplies the axes: many long axes overflow any integer.
        let points = plan
            .axes
            .iter()
            .try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64))
            .filter(|&n| n <= config::limits::MAX_RUNS);
        let total = points.and_then(|p| p.checked_mul(plan.seeds.len() as u64));
        ensure!(
            total.is_some_and(|t| t <= config::limits::MAX_RUNS),
            "{origin}: the axes and seeds make more than {} runs (configurations x seeds); at most that many per sweep",
            config::limits::MAX_RUNS
        );
        // Distinct runs need distinct names (their output directories, their rows).
        let mut files: Vec<String> = plan.runs().map(|r| r.file).collect();
        files.sort_unstable();
        if let Some(w) = files.windows(2).find(|w| w[0] == w[1]) {
            return Err(invalid!(
                "{origin}: two runs would share the result file {}; make the labels differ",
                w[0]
            ));
        }
        let mut power = false;
        for point in 0..plan.points() {
            let checked = if replaying {
                plan.replay(point, plan.seeds[0])
                    .map(|(_, options)| options.power.is_some())
            } else {
                plan.site(point, plan.seeds[0])
                    .map(|site| site.file.power.is_some())
            };
            power |= checked.map_err(|e| {
                e.within(format!("{origin}: configuration {}", plan.describe(point)))
            })?;
        }
        plan.power = power;
        Ok(plan)
    }

    /// Number of configurations (grid points).
    pub fn points(&self) -> usize {
        self.axes.iter().map(|a| a.values.len()).product()
    }

    /// The value index of each axis at `point` (first axis outermost).
    pub fn coordinates(&self, point: usize) -> Vec<usize> {
        let mut rest = point;
        let mut out = vec![0; self.axes.len()];
        for (i, axis) in self.axes.iter().enumerate().rev() {
            out[i] = rest % axis.values.len();
            rest /= axis.values.len();
        }
        out
    }

    /// The labels of `point`.
    pub fn labels(&self, point: usize) -> Vec<String> {
        self.coordinates(point)
            .iter()
            .zip(&self.axes)
            .map(|(&i, a)| a.values[i].0.clone())
            .collect()
    }

    /// `scheduler=easy, users=50` for messages.
    pub fn describe(&self, point: usize) -> String {
        self.axes
            .iter()
            .zip(self.labels(point))
            .map(|(a, l)| format!("{}={l}", a.name))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// Whether the sweep's tables (results.csv, the per-run result files, the per-seed table)
    /// have `measure`: every measure, but those of a power model only when some run has one
    /// ([`metrics::Measure::tabulated`]), so that a sweep without one writes what it wrote
    /// before the power measures were catalogued.
    pub fn tabulates(&self, measure: &metrics::Measure) -> bool {
        measure.tabulated(|condition| match condition {
            metrics::Condition::Power => self.power,
            _ => true,
        })
    }

    /// The indices in [`metrics::MEASURES`] of the measures the sweep's tables have
    /// ([`Plan::tabulates`]), in catalogue order.
    pub fn tabulated(&self) -> Vec<usize> {
        (metrics::MEASURES.iter().enumerate())
            .filter(|(_, m)| self.tabulates(m))
            .map(|(k, _)| k)
            .collect()
    }

    /// Whether the sweep replays traces (a `[replay]` table) rather than running sites.
    pub fn is_replay(&self) -> bool {
        self.replay.is_some()
    }

    /// The axis values of `point` as (key, value) overrides.
    fn overrides(&self, point: usize) -> Vec<(String, toml::Value)> {
        self.coordinates(point)
            .iter()
            .zip(&self.axes)
            .map(|(&i, a)| (a.key.clone(), a.values[i].1.clone()))
            .collect()
    }

    /// The scheduler and replay options of one run of a replay sweep.
    pub fn replay(
        &self,
        point: usize,
        seed: u64,
    ) -> Result<(cluster::SchedulerSpec, config::replay::ReplayOptions)> {
        let table = self.replay.clone().ok_or_else(|| {
            invalid!(
                "{}: not a replay sweep (it has no [replay] table)",
                self.site_origin
            )
        })?;
        let mut value = toml::Value::Table(table);
        for (key, replacement) in self.overrides(point) {
            config::site::set_path(&mut value, &key, replacement)
                .map_err(|e| invalid!("{}: replay.{key}: {e}", self.site_origin))?;
        }
        config::replay_table::replay_of(value, &self.dir, seed, Some(&self.site_origin))
    }

    /// The site of one run.
    pub fn site(&self, point: usize, seed: u64) -> Result<Site> {
        ensure!(
            !self.is_replay(),
            "{}: a replay sweep has no site",
            self.site_origin
        );
        let mut overrides = self.overrides(point);
        let seed = i64::try_from(seed).map_err(|_| invalid!("seed {seed} is too large"))?;
        overrides.push(("run.seed".to_string(), toml::Value::Integer(seed)));
        Site::with_overrides(
            &self.site_text,
            &self.site_origin,
            self.site_base.clone(),
            &overrides,
        )
    }

    /// The point whose labels equal `point`'s except on `axis`, where it has `label`.
    pub fn point_with(&self, point: usize, axis: usize, label: &str) -> Option<usize> {
        let mut coordinates = self.coordinates(point);
        coordinates[axis] = self.axes[axis]
            .values
            .iter()
            .position(|(l, _)| l == label)?;
        Some(
            coordinates
                .iter()
                .zip(&self.axes)
                .fold(0, |acc, (&i, a)| acc * a.values.len() + i),
        )
    }

    /// Number of runs: configurations times seeds.
    pub fn run_count(&self) -> usize {
        self.points() * self.seeds.len()
    }

    /// Run `index` in sweep order (grid order, then seeds); `None` past the last.
    pub fn run(&self, index: usize) -> Option<Run> {
        let seeds = self.seeds.len();
        if seeds == 0 || index >= self.run_count() {
            return None;
        }
        let (point, seed) = (index / seeds, self.seeds[index % seeds]);
        let labels = self.labels(point);
        let mut id: Vec<String> = self
            .axes
            .iter()
            .zip(&labels)
            .map(|(a, l)| format!("{}={l}", a.name))
            .collect();
        id.push(format!("seed={seed}"));
        let id = id.join(",");
        let file = format!("{}.json", safe_name(&id));
        Some(Run {
            index,
            point,
            labels,
            axes: self.axes.iter().map(|a| a.name.clone()).collect(),
            seed,
            id,
            file,
        })
    }

    /// Every run in sweep order, made one at a time.
    pub fn runs(&self) -> impl Iterator<Item = Run> + '_ {
        (0..self.run_count()).filter_map(|k| self.run(k))
    }

    /// The index of the run of `point` and `seed`, if the sweep has it.
    pub fn index_of(&self, point: usize, seed: u64) -> Option<usize> {
        let found = self.seed_positions.binary_search_by_key(&seed, |&(s, _)| s);
        let position = self.seed_positions[found.ok()?].1;
        (point < self.points()).then(|| point * self.seeds.len() + position)
    }
}

/// The label of an axis value: scalars as written (a replay's trace as its file name without
/// `.swf.gz`), scheduler tables as `easy` or `creasy-6000`.
fn label_of(key: &str, value: &toml::Value, replaying: bool) -> Result<String, String> {
    match value {
        toml::Value::String(s) if replaying && key == "trace" => {
            Ok(config::replay_table::trace_label(s))
        }
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        toml::Value::Table(_) if key == "scheduler" => {
            let section: SchedulerSection = value
                .clone()
                .try_into()
                .map_err(|e: toml::de::Error| e.to_string())?;
            let spec = section.spec().map_err(|e| e.to_string())?;
            Ok(spec.label())
        }
        _ => Err(
            "give labels = [...] for values that are not numbers, strings or schedulers"
                .to_string(),
        ),
    }
}

/// `scheduler=creasy-1500,users=50,seed=1` -> `scheduler-creasy-1500_users-50_seed-1`.
fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| match c {
            '=' => '-',
            ',' => '_',
            c if c.is_ascii_alphanumeric() || c == '.' || c == '-' => c,
            _ => '_',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use config::ScenarioError;

    fn plan(text: &str) -> Result<Plan> {
        let io = |source| ScenarioError::Io {
            what: "scratch sweep file".into(),
            source,
        };
        let dir = tempfile::tempdir().map_err(io)?;
        let path = dir.path().join("s.toml");
        std::fs::write(&path, text).map_err(io)?;
        Plan::load(&path)
    }

    /// An error with its causes, as the command line prints it.
    fn chain(err: &ScenarioError) -> String {
        let mut chain = err.to_string();
        let mut cause = std::error::Error::source(err);
        while let Some(c) = cause {
            chain.push_str(&format!(": {c}"));
            cause = c.source();
        }
        chain
    }

    const GRID: &str = r#"
        seeds = { first = 3, count = 2 }
        baseline = "easy"
        [[axes]]
        name = "scheduler"
        key = "scheduler"
        values = [{ policy = "easy" }, { policy = "creasy", alpha = 1500 }]
        [[axes]]
        name = "users"
        key = "groups.0.users"
        values = [10, 20, 30]
    "#;

    #[test]
    fn the_grid_is_every_combination_times_every_seed() {
        let p = plan(GRID).unwrap();
        assert_eq!(p.points(), 6);
        assert_eq!(p.run_count(), 12);
        assert_eq!(p.run(0).unwrap().id, "scheduler=easy,users=10,seed=3");
        assert_eq!(
            p.run(0).unwrap().file,
            "scheduler-easy_users-10_seed-3.json"
        );
        assert_eq!(
            p.run(11).unwrap().id,
            "scheduler=creasy-1500,users=30,seed=4"
        );
        assert_eq!(p.labels(4), ["creasy-1500", "20"]);
        assert_eq!(p.point_with(4, 0, "easy"), Some(1));
        let site = p.site(4, 9).unwrap();
        assert_eq!(site.file.groups[0].users, 20);
        assert_eq!(site.file.run.seed, 9);
        assert_eq!(
            site.file.scheduler.params.get("alpha"),
            Some(&toml::Value::Integer(1500))
        );
    }

    #[test]
    fn mistakes_are_reported() {
        let err = plan(&GRID.replace("baseline = \"easy\"", "baseline = \"fcfs\""))
            .unwrap_err()
            .to_string();
        assert!(err.contains("baseline \"fcfs\" is not a value"), "{err}");
        let err = plan(&GRID.replace("groups.0.users", "groups.0.user")).unwrap_err();
        let chain = chain(&err);
        assert!(chain.contains("configuration scheduler=easy"), "{chain}");
        assert!(chain.contains("unknown field `user`"), "{chain}");
        let err = plan(&GRID.replace("values = [10, 20, 30]", "values = [10, 20, 10]"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("same label"), "{err}");
        let err = plan(&GRID.replace("seeds = { first = 3, count = 2 }", "seeds = [1, 1]"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("twice"), "{err}");
        let err = plan(&format!("{GRID}\ncolour = 1"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("unknown field `colour`"), "{err}");
    }

    #[test]
    fn a_replay_plan_sets_its_axes_in_the_replay_table() {
        let p = plan(
            r#"
            seeds = [5]
            [replay]
            trace = "a/KTH.swf.gz"
            load_factor = 0.9
            [[axes]]
            name = "trace"
            key = "trace"
            values = ["a/KTH.swf.gz", "/b/CTC.swf"]
            [[axes]]
            name = "scheduler"
            key = "scheduler"
            values = [{ policy = "easy" }, { policy = "conservative" }]
        "#,
        )
        .unwrap();
        assert!(p.is_replay());
        assert_eq!(
            p.run(3).unwrap().id,
            "trace=CTC,scheduler=conservative,seed=5"
        );
        let (spec, options) = p.replay(3, 5).unwrap();
        assert_eq!(spec.label(), "conservative");
        assert_eq!(options.trace, Path::new("/b/CTC.swf"));
        assert_eq!(options.load_factor, 0.9);
        assert_eq!(options.estimates.seed, 5);
        let (_, relative) = p.replay(0, 5).unwrap();
        assert_eq!(relative.trace, p.dir.join("a/KTH.swf.gz"));
        assert!(p.site(0, 5).is_err());
        let err = plan("seeds = [1]\nheadroom = true\n[replay]\ntrace = \"t\"\n[[axes]]\nname = \"s\"\nkey = \"scheduler\"\nvalues = [{ policy = \"easy\" }]")
            .unwrap_err()
            .to_string();
        assert!(err.contains("headroom"), "{err}");
        let err = plan("seeds = [1]\n[replay]\ntrace = \"t\"\n[[axes]]\nname = \"f\"\nkey = \"load_factr\"\nvalues = [1.0]")
            .unwrap_err();
        let chain = chain(&err);
        assert!(chain.contains("unknown field `load_factr`"), "{chain}");
    }
}
