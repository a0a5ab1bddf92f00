//! Architecture invariants (ARCHITECTURE.md), checked on the crates' manifests so a change that
//! breaks the layering fails a test instead of a review:
//!
//! - only the binary (`sitesim`) depends on clap, indicatif, plotters, anyhow and
//!   tracing-subscriber: library crates take plain values and return typed errors;
//! - `cluster` is pure: its only dependencies are the time type and thiserror (no I/O, no
//!   randomness, no clock);
//! - `users` and `usermodel` do not depend on the trace analyser (`fit`);
//! - no library crate depends on the binary or on the scenario layer above it;
//! - the Python bindings (`sitesim-py`) sit beside the binary: over the scenario layer, with
//!   none of the binary's presentation crates, and nothing depends on them.

#![allow(clippy::expect_used)] // a test helper: a broken manifest should fail loudly

use std::collections::BTreeMap;
use std::path::Path;

/// Every workspace crate's name and its normal (not dev) dependencies.
fn crates() -> BTreeMap<String, Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(&root).expect("crates/ is readable") {
        let manifest = entry.expect("a directory entry").path().join("Cargo.toml");
        let Ok(text) = std::fs::read_to_string(&manifest) else {
            continue;
        };
        let value: toml::Value = toml::from_str(&text).expect("a valid manifest");
        let name = value["package"]["name"]
            .as_str()
            .expect("a package name")
            .to_string();
        let deps = value
            .get("dependencies")
            .and_then(|d| d.as_table())
            .map(|t| t.keys().cloned().collect())
            .unwrap_or_default();
        out.insert(name, deps);
    }
    out
}

/// The crates at the top: the binary and the Python bindings.
const FRONT_ENDS: [&str; 2] = ["sitesim", "sitesim-py"];

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
            for edge in [
                "clap",
                "indicatif",
                "plotters",
                "tracing-subscriber",
                "sitesim",
            ] {
                assert!(
                    !deps.iter().any(|d| d == edge),
                    "{name} depends on {edge}: the bindings call the scenario layer, not the binary"
                );
            }
            continue;
        }
        for edge in [
            "clap",
            "indicatif",
            "plotters",
            "anyhow",
            "tracing-subscriber",
        ] {
            assert!(
                !deps.iter().any(|d| d == edge),
                "library crate {name} depends on {edge}; only the binary may"
            );
        }
        for upper in ["sitesim", "sitesim-py", "scenario"] {
            assert!(
                !deps.iter().any(|d| d == upper),
                "library crate {name} depends on {upper}, which is above it"
            );
        }
    }
}

#[test]
fn cluster_is_pure() {
    let crates = crates();
    let deps = &crates["cluster"];
    for dep in deps {
        assert!(
            ["simtime", "thiserror"].contains(&dep.as_str()),
            "cluster depends on {dep}: it must stay free of I/O, randomness and clocks"
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
