//! Integration tests of `sweep`, one test binary for all of them (one link instead of one per
//! file).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

mod parsers_never_panic;
