//! Limits on what a file or flag can make large, so that a typo gives a clear error instead of
//! exhausting memory. Each is far above real work (the paper simulates 250 users for 26 weeks;
//! the largest archive traces have a few hundred thousand jobs) and is documented in docs/reference/limits.md.

/// Users in a site, all groups together.
pub const MAX_USERS: u64 = 100_000;
/// Simulated weeks (10 years).
pub const MAX_WEEKS: u32 = 520;
/// Processors of a machine.
pub const MAX_PROCESSORS: u32 = 1 << 24;
/// Seeds of a sweep.
pub const MAX_SEEDS: u64 = 100_000;
/// Runs of a sweep (configurations times seeds).
pub const MAX_RUNS: u64 = 1_000_000;
