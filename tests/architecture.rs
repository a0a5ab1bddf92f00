//! Architecture invariants (ARCHITECTURE.md), checked on the crates' manifests so a change that
//! breaks the layering fails a test instead of a review:
//!
//! - only the binary (`sitesim`) depends on clap, indicatif, anyhow and tracing-subscriber:
//!   library crates take plain values and return typed errors;
//! - only `plots` depends on plotters: every figure is drawn there, from the tables
//!   `scenario::tables` reads; it sits over the scenario layer, beside the front ends;
//! - the binary stays wiring: its sources are at most [`BINARY_MAX_LINES`] lines;
//! - `cluster` is pure: its only dependencies are the time type, the job value, thiserror and
//!   the serde family its parts' parameter structs are read with (no I/O, no randomness, no
//!   clock); the Slurm model (`slurm-model`) is a crate over it, as pure, and
//!   `cluster` never depends on it (every part is listed together above both, in `schedulers`);
//! - `users` and `usermodel` do not depend on the trace analyser (`fit`);
//! - each crate depends only on the workspace crates [`ALLOWED`] lists for it, the layers
//!   bottom up: the scenario layer is `config` (what a run is made of and how it is named), then
//!   `scenario` (how a run is carried out), then `sweep`; `plots` and `gym` sit over `scenario`,
//!   the front ends over everything; and no crate cycle, dev-dependencies included;
//! - the Python bindings (`sitesim-py`) sit beside the binary: over the scenario layer, with
//!   none of the binary's presentation crates, and nothing depends on them.

#![allow(clippy::expect_used)] // a test helper: a broken manifest should fail loudly

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Every workspace crate's name and its normal (not dev) dependencies.
fn crates() -> BTreeMap<String, Vec<String>> {
    crates_with(&["dependencies"])
}

/// Every workspace crate's name and its dependencies of the manifest's `tables`.
fn crates_with(tables: &[&str]) -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let workspace: toml::Value = toml::from_str(
        &std::fs::read_to_string(root.join("../Cargo.toml")).expect("the workspace's manifest"),
    )
    .expect("a valid manifest");
    let keys: BTreeMap<String, String> = workspace["workspace"]["dependencies"]
        .as_table()
        .expect("workspace dependencies")
        .iter()
        .filter_map(|(key, dep)| Some((dep.get("package")?.as_str()?.to_string(), key.clone())))
        .collect();
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&root).expect("crates/ is readable") {
        let manifest = entry.expect("a directory entry").path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let value: toml::Value = toml::from_str(&text).expect("a valid manifest");
        // A library crate goes by its key in the workspace's dependencies (its package is
        // published as sitesim-KEY), the front ends by their package names.
        let package = value["package"]["name"].as_str().expect("a package name");
        let name = keys
            .get(package)
            .cloned()
            .unwrap_or_else(|| package.to_string());
        let deps = tables
            .iter()
            .filter_map(|table| value.get(table).and_then(|d| d.as_table()))
            .flat_map(|t| t.keys().cloned())
            .collect();
        out.insert(name, deps);
    }
    out
}

/// The crates at the top: the binary and the Python bindings.
const FRONT_ENDS: [&str; 2] = ["sitesim", "sitesim-py"];

/// The figures: a library crate over the scenario layer, the only one that draws.
const FIGURES: &str = "plots";

/// The Gymnasium environment's core: a library crate over the scenario layer (its episodes are
/// prepared traces and sites), under the Python bindings that wrap it.
const GYM: &str = "gym";

/// The scenario layer under the front ends, bottom up: what a run is made of and how it is
/// named (`config`), how a run is carried out (`scenario`), sweeps of runs (`sweep`).
const SCENARIO_LAYER: [&str; 3] = ["config", "scenario", "sweep"];

/// Each workspace crate and the workspace crates it may depend on (normal dependencies), bottom
/// up. A crate missing here fails [`crates_depend_only_on_the_crates_below_them`]: a new crate or
/// edge is a decision, recorded here and in ARCHITECTURE.md.
const ALLOWED: &[(&str, &[&str])] = &[
    ("simtime", &[]),
    ("swf", &[]),
    ("usermodel", &[]),
    ("job", &["simtime"]),
    ("cluster", &["job", "simtime"]),
    // the Slurm model: a backfilling rule over cluster, which never learns of it
    ("slurm-model", &["cluster"]),
    // every scheduler part in one registry: cluster's, then the Slurm model's
    ("schedulers", &["cluster", "slurm-model"]),
    ("metrics", &["job", "simtime"]),
    // power, energy, carbon: arithmetic over values (a series is parsed from text)
    ("power", &["simtime"]),
    ("sacct", &["job", "swf"]),
    // the modern public traces: read into sacct's jobs, so every reader gives one job value
    ("traces", &["job", "sacct", "swf"]),
    ("fit", &["swf", "usermodel"]),
    ("users", &["job", "metrics", "simtime", "usermodel"]),
    (
        "engine",
        &["cluster", "job", "metrics", "simtime", "swf", "users"],
    ),
    // the scenario layer: no simulation in config; sweeps over scenario, never under it
    (
        "config",
        &[
            "cluster",
            "schedulers",
            "slurm-model",
            "engine",
            "job",
            "metrics",
            "power",
            "sacct",
            "simtime",
            "swf",
            "traces",
            "usermodel",
            "users",
        ],
    ),
    (
        "scenario",
        &[
            "config",
            "cluster",
            "schedulers",
            "slurm-model",
            "engine",
            "fit",
            "job",
            "metrics",
            "power",
            "sacct",
            "simtime",
            "swf",
            "traces",
            "usermodel",
            "users",
        ],
    ),
    (
        "sweep",
        &[
            "config",
            "scenario",
            "cluster",
            "metrics",
            "simtime",
            "usermodel",
        ],
    ),
    // over the scenario layer: figures from its tables, the RL environment from its runs
    (
        "plots",
        &["config", "scenario", "fit", "metrics", "usermodel"],
    ),
    (
        "gym",
        &[
            "config",
            "scenario",
            "cluster",
            "engine",
            "fit",
            "metrics",
            "simtime",
            "usermodel",
            "users",
        ],
    ),
    // the front ends
    (
        "sitesim",
        &[
            "plots",
            "sweep",
            "scenario",
            "config",
            "cluster",
            "schedulers",
            "engine",
            "fit",
            "metrics",
            "sacct",
            "simtime",
            "swf",
            "usermodel",
            "users",
        ],
    ),
    (
        "sitesim-py",
        &[
            "gym",
            "sweep",
            "scenario",
            "config",
            "cluster",
            "schedulers",
            "engine",
            "fit",
            "metrics",
            "sacct",
            "simtime",
            "swf",
            "usermodel",
            "users",
        ],
    ),
];

/// The most lines the binary's sources (crates/sitesim/src, every .rs file) may have together:
/// the binary parses flags, calls the library crates, prints and writes files; figures,
/// simulation and file formats live in the libraries. Raised from 2,600 with `calibrate` (its
/// flags and its table printed as the search goes: the search is `scenario::calibrate`) and
/// `whatif` (flags, a progress bar and printing, about 90 lines; its work is `scenario::whatif`).
const BINARY_MAX_LINES: usize = 2_850;

#[test]
fn nothing_depends_on_a_front_end() {
    for (name, deps) in &crates() {
        for front in FRONT_ENDS {
            assert!(
                !deps.iter().any(|d| d == front),
                "{name} depends on {front}, a front end"
            );
        }
    }
}

#[test]
fn only_the_binary_uses_command_line_and_presentation_crates() {
    let crates = crates();
    assert!(crates.len() >= 10, "found only {:?}", crates.keys());
    for (name, deps) in &crates {
        if name == "sitesim" {
            continue;
        }
        if name == FRONT_ENDS[1] {
            // the bindings: a front end like the binary, but without its presentation crates
            for edge in ["clap", "indicatif", "tracing-subscriber", "sitesim"] {
                assert!(
                    !deps.iter().any(|d| d == edge),
                    "{name} depends on {edge}: the bindings call the scenario layer, not the binary"
                );
            }
            continue;
        }
        for edge in ["clap", "indicatif", "anyhow", "tracing-subscriber"] {
            assert!(
                !deps.iter().any(|d| d == edge),
                "library crate {name} depends on {edge}; only the binary may"
            );
        }
    }
}

#[test]
fn crates_depend_only_on_the_crates_below_them() {
    let crates = crates();
    for (name, deps) in &crates {
        let Some((_, allowed)) = ALLOWED.iter().find(|(crate_name, _)| crate_name == name) else {
            panic!("{name} is not in ALLOWED: say which workspace crates it may depend on");
        };
        for dep in deps.iter().filter(|d| crates.contains_key(*d)) {
            assert!(
                allowed.contains(&dep.as_str()),
                "{name} depends on {dep}, which ALLOWED does not list for it (a layer above it, \
                 or beside it)"
            );
        }
    }
    // the scenario layer, bottom up: nothing in it depends on a crate over it
    for (i, lower) in SCENARIO_LAYER.iter().enumerate() {
        for upper in SCENARIO_LAYER[i + 1..].iter().chain([&FIGURES, &GYM]) {
            assert!(
                !crates[*lower].iter().any(|d| d == upper),
                "{lower} depends on {upper}, which is above it"
            );
        }
    }
}

#[test]
fn no_crate_depends_on_itself_through_others() {
    // dev-dependencies included: a test of a lower crate may not use a crate over it either
    let crates = crates_with(&["dependencies", "dev-dependencies"]);
    let ours = |deps: &Vec<String>| -> Vec<String> {
        deps.iter()
            .filter(|d| crates.contains_key(*d))
            .cloned()
            .collect()
    };
    // Kahn's algorithm: take crates whose workspace dependencies are all taken; what is left
    // over lies on a cycle.
    let mut left: BTreeMap<&String, Vec<String>> = crates
        .iter()
        .map(|(name, deps)| (name, ours(deps)))
        .collect();
    loop {
        let ready: Vec<String> = left
            .iter()
            .filter(|(_, deps)| deps.iter().all(|d| !left.contains_key(d)))
            .map(|(name, _)| (*name).clone())
            .collect();
        if ready.is_empty() {
            break;
        }
        for name in &ready {
            left.remove(name);
        }
    }
    assert!(
        left.is_empty(),
        "these crates depend on each other in a cycle (or on one that does): {:?}",
        left.keys().collect::<Vec<_>>()
    );
}

#[test]
fn cluster_is_pure() {
    let crates = crates();
    let deps = &crates["cluster"];
    for dep in deps {
        assert!(
            // rustc-hash: a deterministic hasher (std's HashMap seeds itself at random)
            // job: the resource vector, plain values like simtime's
            // serde, serde-aux, toml, schemars, serde_json: each part's parameter struct is
            // read from the values given (a table of keys) and documents its keys; parsing
            // and describing values, no I/O
            // smallvec: a vector kept in place while short (a job's nodes), a plain container
            [
                "job",
                "simtime",
                "thiserror",
                "rustc-hash",
                "smallvec",
                "serde",
                "serde-aux",
                "toml",
                "schemars",
                "serde_json",
            ]
            .contains(&dep.as_str()),
            "cluster depends on {dep}: it must stay free of I/O, randomness and clocks"
        );
    }
}

#[test]
fn the_slurm_model_sits_over_cluster_and_is_as_pure() {
    let crates = crates();
    for dep in &crates["slurm-model"] {
        assert!(
            // rustc-hash: a deterministic hasher, as cluster's; serde and schemars: its
            // parameter struct (`[scheduler.slurm]`), read from values the front end hands over
            // thiserror: the errors of its TRES weights' parser
            ["cluster", "rustc-hash", "serde", "schemars", "thiserror"].contains(&dep.as_str()),
            "slurm-model depends on {dep}: it must stay free of I/O, randomness and clocks"
        );
    }
    // cluster never learns of the model, not even in its tests
    for dep in crates_with(&["dependencies", "dev-dependencies"])["cluster"].iter() {
        assert!(
            dep != "slurm-model" && dep != "schedulers",
            "cluster depends on {dep}: the Slurm model is a rule over cluster, not in it"
        );
    }
}

#[test]
fn users_do_not_depend_on_the_trace_analyser() {
    let crates = crates();
    for name in ["users", "usermodel"] {
        assert!(
            !crates[name].iter().any(|d| d == "fit"),
            "{name} depends on fit; the model's types live in usermodel"
        );
    }
}

#[test]
fn only_the_figures_crate_draws() {
    let crates = crates();
    // plotters draws; usvg, resvg and svg2pdf render its SVG as PNG and PDF
    let drawing = [
        "plotters",
        "plotters-backend",
        "usvg",
        "resvg",
        "svg2pdf",
        "png",
    ];
    assert!(
        crates[FIGURES].iter().any(|d| d == "plotters"),
        "{FIGURES} draws with plotters"
    );
    for (name, deps) in &crates {
        for library in drawing {
            assert!(
                name == FIGURES || !deps.iter().any(|d| d == library),
                "{name} depends on {library}; figures are drawn by the {FIGURES} crate"
            );
        }
    }
}

/// Every `.rs` file under `dir`, at any depth.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).expect("a readable source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_binary_stays_wiring() {
    let sources = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let files = rust_files(&sources);
    assert!(
        files.iter().any(|f| f.ends_with("main.rs")),
        "no main.rs under {}",
        sources.display()
    );
    let lines: usize = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .expect("a readable source file")
                .lines()
                .count()
        })
        .sum();
    assert!(
        lines <= BINARY_MAX_LINES,
        "the binary's sources ({}) have {lines} lines, more than {BINARY_MAX_LINES}: move what is \
         not flags, printing or files into a library crate (figures into plots)",
        sources.display()
    );
}
