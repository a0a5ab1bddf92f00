//! Integration tests of `scenario`, one test binary for all of them (one link instead of one
//! per file).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a failed test should panic

mod batches;
mod feedback;
mod streamed_replay;
