//! A node type's power in each state, and what a job draws.

use simtime::Time;

/// A node type's power values are wrong (negative, not finite, or a busy power below idle).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{key}: {message}")]
pub struct ModelError {
    /// The key at fault (`idle_w`, `busy_w`, ...).
    pub key: String,
    /// What is wrong.
    pub message: String,
}

/// A change of power state that takes time: booting or shutting down a node.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Transition {
    /// How long it takes, seconds.
    pub seconds: Time,
    /// The node's power meanwhile, W.
    pub watts: f64,
}

impl Transition {
    /// The energy of one transition, J: its power times its length.
    pub fn energy(&self) -> f64 {
        self.watts * self.seconds as f64
    }
}

/// One node type's power (module docs of the crate: the linear model).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NodePower {
    /// Cores (processors) per node: a job's share of the idle power is its cores over these.
    pub cores: u32,
    /// Power of a node that is on with nothing running, W.
    pub idle_w: f64,
    /// Power each busy core adds, W.
    pub core_w: f64,
    /// Power each busy GPU adds, W.
    pub gpu_w: f64,
    /// Power each GiB of memory held adds, W.
    pub memory_w_per_gib: f64,
    /// Power of a node that is off, W (a BMC's standby draw).
    pub off_w: f64,
    /// Booting a node that is off.
    pub boot: Transition,
    /// Shutting a node down.
    pub shutdown: Transition,
}

/// What a job holds on nodes of one type.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Used {
    /// Cores (processors).
    pub cores: u32,
    /// GPUs.
    pub gpus: u32,
    /// Memory, MiB.
    pub memory_mib: u64,
    /// Whole nodes it holds exclusively (0: it shares its nodes, and is charged the idle power
    /// of its cores' share).
    pub whole_nodes: u32,
}

/// The power a job is charged while it runs, W.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Draw {
    /// Its share of its nodes' idle power: the nodes' idle power x its cores over theirs
    /// (all of it for whole nodes).
    pub idle_share_w: f64,
    /// Its dynamic power: busy cores, GPUs and memory times their watts.
    pub dynamic_w: f64,
}

impl Draw {
    /// The whole draw, W.
    pub fn total_w(&self) -> f64 {
        self.idle_share_w + self.dynamic_w
    }

    /// Two draws added (a job on nodes of several types).
    pub fn plus(&self, other: &Draw) -> Draw {
        Draw {
            idle_share_w: self.idle_share_w + other.idle_share_w,
            dynamic_w: self.dynamic_w + other.dynamic_w,
        }
    }
}

impl NodePower {
    /// A node type from its idle power and its power with every core busy (`busy_w`, no GPU):
    /// each busy core adds `(busy_w - idle_w) / cores`.
    pub fn from_busy(cores: u32, idle_w: f64, busy_w: f64) -> Result<NodePower, ModelError> {
        let node = NodePower {
            cores,
            idle_w,
            core_w: if cores == 0 {
                0.0
            } else {
                (busy_w - idle_w) / cores as f64
            },
            ..NodePower::default()
        };
        check("busy_w", busy_w)?;
        if busy_w < idle_w {
            return Err(ModelError {
                key: "busy_w".into(),
                message: format!("{busy_w} W is below the idle power ({idle_w} W)"),
            });
        }
        node.check()?;
        Ok(node)
    }

    /// Checks every value: finite and at least 0, cores at least 1.
    pub fn check(&self) -> Result<(), ModelError> {
        if self.cores == 0 {
            return Err(ModelError {
                key: "cores".into(),
                message: "a node has at least one core".into(),
            });
        }
        check("idle_w", self.idle_w)?;
        check("core_w", self.core_w)?;
        check("gpu_w", self.gpu_w)?;
        check("memory_w_per_gib", self.memory_w_per_gib)?;
        check("off_w", self.off_w)?;
        check("boot_w", self.boot.watts)?;
        check("shutdown_w", self.shutdown.watts)?;
        if self.boot.seconds < 0 || self.shutdown.seconds < 0 {
            return Err(ModelError {
                key: if self.boot.seconds < 0 {
                    "boot_s"
                } else {
                    "shutdown_s"
                }
                .into(),
                message: "a negative time".into(),
            });
        }
        Ok(())
    }

    /// The power of a node that is on and holds `used` (its whole-node count ignored), W.
    pub fn node_power(&self, used: &Used) -> f64 {
        self.idle_w + self.dynamic(used)
    }

    /// The dynamic power of `used`, W.
    fn dynamic(&self, used: &Used) -> f64 {
        self.core_w * used.cores as f64
            + self.gpu_w * used.gpus as f64
            + self.memory_w_per_gib * used.memory_mib as f64 / 1024.0
    }

    /// What a job holding `used` on nodes of this type draws.
    pub fn draw(&self, used: &Used) -> Draw {
        let idle_share_w = if used.whole_nodes > 0 {
            self.idle_w * used.whole_nodes as f64
        } else {
            self.idle_w * used.cores as f64 / self.cores.max(1) as f64
        };
        Draw {
            idle_share_w,
            dynamic_w: self.dynamic(used),
        }
    }
}

fn check(key: &str, value: f64) -> Result<(), ModelError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ModelError {
            key: key.into(),
            message: format!("{value} W is not a finite power at least 0"),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_draws_idle_plus_its_busy_resources() {
        // 32 cores, 100 W idle, 420 W busy: 10 W a core; 4 GPUs at 250 W; 0.5 W a GiB.
        let node = NodePower {
            gpu_w: 250.0,
            memory_w_per_gib: 0.5,
            ..NodePower::from_busy(32, 100.0, 420.0).unwrap()
        };
        assert_eq!(node.core_w, 10.0);
        let used = Used {
            cores: 8,
            gpus: 2,
            memory_mib: 64 * 1024,
            whole_nodes: 0,
        };
        assert_eq!(node.node_power(&used), 100.0 + 80.0 + 500.0 + 32.0);
        let draw = node.draw(&used);
        assert_eq!(draw.idle_share_w, 25.0); // 8 of 32 cores of 100 W
        assert_eq!(draw.dynamic_w, 612.0);
        // whole nodes pay all their idle power
        let whole = node.draw(&Used {
            whole_nodes: 2,
            cores: 64,
            ..Used::default()
        });
        assert_eq!(whole.idle_share_w, 200.0);
        assert_eq!(whole.dynamic_w, 640.0);
    }

    #[test]
    fn boot_energy_is_its_power_times_its_time() {
        let boot = Transition {
            seconds: 300,
            watts: 180.0,
        };
        assert_eq!(boot.energy(), 54_000.0);
    }

    #[test]
    fn bad_values_are_named() {
        let err = NodePower::from_busy(32, 100.0, 90.0).unwrap_err();
        assert_eq!(err.key, "busy_w");
        let err = NodePower {
            cores: 4,
            idle_w: -1.0,
            ..NodePower::default()
        }
        .check()
        .unwrap_err();
        assert_eq!(err.key, "idle_w");
        let err = NodePower {
            cores: 0,
            ..NodePower::default()
        }
        .check()
        .unwrap_err();
        assert_eq!(err.key, "cores");
    }
}
