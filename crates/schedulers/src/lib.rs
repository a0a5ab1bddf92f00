//! Every scheduler part of the workspace in one registry ([`REGISTRY`]): cluster's own queue
//! orders, backfilling rules, predictors and presets ([`cluster::CORE`]), then the Slurm
//! model's ([`slurm_model::PARTS`]). Whoever names a scheduler (population and sweep files,
//! the command line, Python, the gym, tests) looks it up here, so a part registered in either
//! crate is selectable by name everywhere; `cluster` itself does not know the Slurm model.
//!
//! A crate of new parts adds its set of parts ([`cluster::Parts`]) to [`REGISTRY`]'s list.

pub use cluster::{Composition, ParamValues, PolicyError, Registry, SchedulerSpec};

/// Every registered part, cluster's first (the order `sitesim schedulers`, `--help` and
/// messages list them in).
pub static REGISTRY: Registry = Registry {
    sets: &[&cluster::CORE, &slurm_model::PARTS],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_across_the_sets() {
        let mut names: Vec<&str> = REGISTRY
            .policies()
            .flat_map(|p| std::iter::once(p.name).chain(p.aliases.iter().copied()))
            .collect();
        let all = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), all);
        for kind in [
            REGISTRY.orders().map(|p| p.name).collect::<Vec<_>>(),
            REGISTRY.rules().map(|p| p.name).collect(),
            REGISTRY.predictors().map(|p| p.name).collect(),
        ] {
            let mut unique = kind.clone();
            unique.sort_unstable();
            unique.dedup();
            assert_eq!(unique.len(), kind.len(), "{kind:?}");
        }
        assert!(REGISTRY.find_policy("slurm-site").is_some());
        assert!(REGISTRY.find_policy("easy+").is_some());
    }
}
