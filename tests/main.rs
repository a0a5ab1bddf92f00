//! End-to-end tests of the `sitesim` binary, one test binary for all of them (one link instead
//! of one per file): each module tests one command or concern.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

mod common;

mod architecture;
mod batsim_cli;
mod docs;
mod energy_cli;
mod everyday_cli;
mod failures_cli;
mod fit_cli;
mod hardening;
mod inputs_cli;
mod nodes_cli;
mod outages_cli;
mod outputs_cli;
mod power_cli;
mod replay_cli;
mod resources_cli;
mod run_cli;
mod sacct_cli;
mod slurm_cli;
mod slurm_gpu;
mod slurm_model;
mod slurm_outages;
mod slurm_start_order;
mod sweep_cli;
mod tour;
mod traces_cli;
mod whatif_cli;
