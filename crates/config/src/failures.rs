//! A site file's node failures (`[failures]`): nodes that fail at random while up and come
//! back after a repair, each failure killing the job it strikes (docs/guide/outages.md).
//!
//! ```toml
//! [failures]
//! node_processors = 128    # processors one failure takes out of service (a node's; not on
//!                          # a machine of node types, whose nodes fail one by one)
//! mtbf_hours = 8760        # mean time between failures of one node, hours
//! repair_hours = 24        # mean repair time, hours
//! requeue = true           # a killed job goes back to the queue (Slurm's JobRequeue=1), or is lost
//! requeue_delay_s = 121    # seconds after the failure at which it may start again
//! ```

use serde::{Deserialize, Serialize};

use crate::error::{Result, invalid};

/// Slurm's delay before a requeued job is eligible again, seconds: `begin_time = now +
/// requeue_delay + 1` (`_job_requeue_op`, `src/slurmctld/job_mgr.c`), the delay being
/// `SchedulerParameters=requeue_delay`, by default the job credential's lifetime, 120 s.
pub const SLURM_REQUEUE_DELAY_S: i64 = 121;

/// `[failures]`, as written: nodes that fail at random while up and come back after a repair;
/// each failure kills the running job it strikes (docs/guide/outages.md).
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FailureSection {
    /// Processors one node failure takes out of service: a node's. The machine counts
    /// `processors / node_processors` nodes (at least 1), each failing on its own. Needed on
    /// a machine of counted processors; left out on a machine of node types (`[[nodes]]`),
    /// whose own nodes fail, each on its own, killing every job on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_processors: Option<u32>,
    /// Mean time between failures of one node while it is up, hours: each up node fails as a
    /// Poisson process of rate 1 / mtbf.
    pub mtbf_hours: f64,
    /// Mean repair time of a failed node, hours (exponentially distributed).
    pub repair_hours: f64,
    /// Whether a job a failure kills goes back to the queue (default `true`: Slurm's
    /// `JobRequeue=1`, its default) or is lost (its record ends at the failure).
    #[serde(default = "requeue_default")]
    pub requeue: bool,
    /// Seconds after the failure at which a requeued job may start again (default 121:
    /// Slurm's `requeue_delay` of 120 s, plus 1).
    #[serde(default = "requeue_delay_default")]
    pub requeue_delay_s: i64,
}

fn requeue_default() -> bool {
    true
}

fn requeue_delay_default() -> i64 {
    SLURM_REQUEUE_DELAY_S
}

/// Node failures, checked, in the simulation's units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NodeFailures {
    /// Processors one failure takes out of service (0 on a machine of node types: the failed
    /// node's).
    pub node_processors: u32,
    /// Nodes that may fail.
    pub nodes: u32,
    /// Mean time between failures of one node, seconds.
    pub mtbf_s: f64,
    /// Mean repair time, seconds.
    pub repair_s: f64,
    /// Seconds after the failure at which a killed job enters the queue again; `None`: lost.
    pub requeue_delay: Option<i64>,
}

impl FailureSection {
    /// The failures on a machine of `processors` counted processors. Errors name the key.
    pub fn resolve(&self, processors: u32) -> Result<NodeFailures> {
        let Some(node_processors) = self.node_processors else {
            return Err(invalid!(
                "failures.node_processors: missing; a machine of counted processors needs the processors one failure takes out of service (a node's)"
            ));
        };
        if node_processors == 0 || node_processors > processors {
            return Err(invalid!(
                "failures.node_processors = {node_processors}: must be between 1 and the machine's {processors} processors"
            ));
        }
        let mut failures = self.resolve_rates(processors / node_processors)?;
        failures.node_processors = node_processors;
        Ok(failures)
    }

    /// The failures on a machine of node types of `nodes` nodes: each fails on its own and
    /// takes itself out of service. Errors name the key.
    pub fn resolve_on_nodes(&self, nodes: u32) -> Result<NodeFailures> {
        if let Some(n) = self.node_processors {
            return Err(invalid!(
                "failures.node_processors = {n}: a machine of node types fails node by node, each failure taking its own node; leave the key out"
            ));
        }
        self.resolve_rates(nodes)
    }

    /// The rates and the requeue, on a machine of `nodes` nodes (at least 1).
    fn resolve_rates(&self, nodes: u32) -> Result<NodeFailures> {
        for (key, value) in [
            ("mtbf_hours", self.mtbf_hours),
            ("repair_hours", self.repair_hours),
        ] {
            if !(value.is_finite() && value > 0.0) {
                return Err(invalid!(
                    "failures.{key} = {value}: must be a positive number of hours"
                ));
            }
        }
        if self.requeue_delay_s < 0 {
            return Err(invalid!(
                "failures.requeue_delay_s = {}: must be 0 or more seconds",
                self.requeue_delay_s
            ));
        }
        Ok(NodeFailures {
            node_processors: 0,
            nodes: nodes.max(1),
            mtbf_s: self.mtbf_hours * 3600.0,
            repair_s: self.repair_hours * 3600.0,
            requeue_delay: self.requeue.then_some(self.requeue_delay_s),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn section(text: &str) -> FailureSection {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn defaults_are_slurms_requeue() {
        let f = section("node_processors = 4\nmtbf_hours = 100\nrepair_hours = 2")
            .resolve(10)
            .unwrap();
        assert_eq!(f.nodes, 2);
        assert_eq!(f.requeue_delay, Some(121));
        assert!((f.mtbf_s - 360_000.0).abs() < 1e-9);
        let lost =
            section("node_processors = 4\nmtbf_hours = 100\nrepair_hours = 2\nrequeue = false")
                .resolve(10)
                .unwrap();
        assert_eq!(lost.requeue_delay, None);
    }

    #[test]
    fn bad_values_are_named_by_key() {
        for (text, key) in [
            (
                "node_processors = 0\nmtbf_hours = 1\nrepair_hours = 1",
                "failures.node_processors",
            ),
            (
                "node_processors = 20\nmtbf_hours = 1\nrepair_hours = 1",
                "failures.node_processors",
            ),
            (
                "node_processors = 2\nmtbf_hours = 0\nrepair_hours = 1",
                "failures.mtbf_hours",
            ),
            (
                "node_processors = 2\nmtbf_hours = 1\nrepair_hours = -1",
                "failures.repair_hours",
            ),
            (
                "node_processors = 2\nmtbf_hours = 1\nrepair_hours = 1\nrequeue_delay_s = -5",
                "failures.requeue_delay_s",
            ),
        ] {
            let e = section(text).resolve(10).unwrap_err().to_string();
            assert!(e.contains(key), "{text}: {e}");
        }
        assert!(toml::from_str::<FailureSection>("node_processors = 2\nmtbf = 1").is_err());
    }
}
