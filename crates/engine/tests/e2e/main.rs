//! Integration tests of `engine`, one test binary for all of them (one link instead of one
//! per file).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

mod closed_loop;
mod common;
mod facility;
mod failures;
mod outages;
mod properties;
