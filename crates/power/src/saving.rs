//! Idle nodes that power down and boot again when a job needs them: Slurm's power saving
//! (`power_save.shtml`), node by node.
//!
//! A node with no job for `suspend_after` seconds (Slurm's `SuspendTime`) shuts down, taking
//! its type's shutdown time (`SuspendTimeout` bounds it in Slurm) at its shutdown power, then
//! draws its off power. A job given a node that is off waits while it boots (its type's boot
//! time at its boot power; `ResumeTimeout` bounds it in Slurm); a node still shutting down
//! first finishes, then boots. The job holds its resources from the moment it was started and
//! runs once its last node is ready, as slurmctld resets a job's start time when its powered-up
//! nodes are ready (`job_config_fini`, `job_mgr.c`). A node that is booting may take a second
//! job, which waits for the same boot.
//!
//! Where the machine is a count of processors, which processors a job holds is not known: it
//! is placed here on nodes of the power model's cores, by packing (the cores free on nodes that
//! run jobs first, then idle nodes, the most recently idle first, then nodes booting, shutting
//! down, off), the placement that powers the most nodes down. On a machine of node types the
//! scheduler's own placement is used, which does not avoid nodes that are off (Slurm's does
//! prefer powered-up nodes).
//!
//! The model logs every span a node spends booting, shutting down or off, for the meter
//! ([`crate::Meter::add_spans`]): each replaces the node's idle power by its state's.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};

use serde::Serialize;
use simtime::Time;

use crate::NodePower;

/// A node's power state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// On; with no job since the instant given (`None`: it runs jobs, or the run has not begun).
    On { idle_since: Option<Time> },
    /// Booting, ready at the instant given.
    Booting { ready: Time },
    /// Shutting down, off at the instant given.
    ShuttingDown { off_at: Time },
    /// Off since the instant given.
    Off { since: Time },
}

/// One node.
#[derive(Debug, Clone, Copy)]
struct Node {
    /// Its type, an index into the model's types.
    kind: usize,
    /// Its cores.
    cores: u32,
    /// Cores its jobs hold.
    used: u32,
    /// Jobs on it.
    jobs: u32,
    phase: Phase,
}

/// A node's state other than on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    /// Booting.
    Boot,
    /// Shutting down.
    Shutdown,
    /// Off.
    Off,
}

/// A span a node spent in a state other than on, for the meter: its power then replaces its
/// idle power.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StateSpan {
    /// The state.
    pub state: NodeState,
    /// From, seconds.
    pub from: Time,
    /// To, seconds (`Time::MAX`: the node was still in that state when the run ended).
    pub to: Time,
    /// The node's power in that state less its idle power, W (negative: less than idle).
    pub delta_w: f64,
}

/// What power saving did over a run (summary.json's `power.saving`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SavingReport {
    /// `SuspendTime`: seconds a node stays idle before it powers down.
    pub suspend_after_seconds: Time,
    /// Nodes the model powers.
    pub nodes: u64,
    /// Node shutdowns begun within the metered span.
    pub shutdowns: u64,
    /// Node boots begun within the metered span.
    pub boots: u64,
    /// Jobs that waited for a boot.
    pub jobs_delayed: u64,
    /// Their waits for boots, seconds in all.
    pub boot_wait_seconds: Time,
    /// Node-hours spent off within the metered span.
    pub off_node_hours: f64,
}

/// Where a starting job is placed.
#[derive(Debug, Clone, Copy)]
pub enum Placement<'a> {
    /// A count of cores, on a machine of processors: placed by packing.
    Cores(u32),
    /// The nodes the scheduler chose, with the cores held on each (node indexes).
    Nodes(&'a [(u32, u32)]),
}

/// The nodes of a machine of `processors` processors in nodes of `cores` (at least 1), as
/// (type 0, cores) pairs: the last node holds the rest when they do not divide.
pub fn processor_nodes(processors: u32, cores: u32) -> Vec<(usize, u32)> {
    let cores = cores.max(1);
    let mut nodes = vec![(0, cores); (processors / cores) as usize];
    if processors % cores > 0 {
        nodes.push((0, processors % cores));
    }
    nodes
}

/// The power states of a machine's nodes (module docs).
#[derive(Debug, Clone)]
pub struct NodeSaving {
    suspend_after: Time,
    types: Vec<NodePower>,
    nodes: Vec<Node>,
    /// Where each running job is: (node, cores), by the caller's job key.
    placed: HashMap<u64, Vec<(u32, u32)>>,
    /// Timers: (instant, node). Stale entries (the node changed since) are skipped.
    timers: BinaryHeap<Reverse<(Time, u32)>>,
    /// The first instant seen; nodes idle from the start count from it.
    origin: Option<Time>,
    spans: Vec<StateSpan>,
    /// Open spans by node: (index into `spans`) of the state the node is in now.
    open: Vec<Option<usize>>,
    /// When each shutdown and boot began, seconds.
    shutdowns: Vec<Time>,
    boots: Vec<Time>,
    jobs_delayed: u64,
    boot_wait: Time,
}

impl NodeSaving {
    /// Nodes of `types` (each node's type index and cores) that power down after
    /// `suspend_after` seconds idle (at least 0).
    pub fn new(suspend_after: Time, types: Vec<NodePower>, nodes: &[(usize, u32)]) -> NodeSaving {
        NodeSaving {
            suspend_after: suspend_after.max(0),
            types,
            nodes: nodes
                .iter()
                .map(|&(kind, cores)| Node {
                    kind,
                    cores,
                    used: 0,
                    jobs: 0,
                    phase: Phase::On { idle_since: None },
                })
                .collect(),
            placed: HashMap::new(),
            timers: BinaryHeap::new(),
            origin: None,
            spans: Vec::new(),
            open: vec![None; nodes.len()],
            shutdowns: Vec::new(),
            boots: Vec::new(),
            jobs_delayed: 0,
            boot_wait: 0,
        }
    }

    /// A machine of `processors` processors in nodes of the one type's cores
    /// ([`processor_nodes`]).
    pub fn of_processors(suspend_after: Time, node: NodePower, processors: u32) -> NodeSaving {
        NodeSaving::new(
            suspend_after,
            vec![node],
            &processor_nodes(processors, node.cores),
        )
    }

    /// The node's idle power, W (a partial node's share of its type's).
    fn idle_w(&self, node: usize) -> f64 {
        let n = &self.nodes[node];
        let t = &self.types[n.kind];
        t.idle_w * f64::from(n.cores) / f64::from(t.cores.max(1))
    }

    /// Closes the node's open span at `at` and opens one in `state` (or none: back on).
    fn enter(&mut self, node: usize, at: Time, state: Option<NodeState>) {
        if let Some(k) = self.open[node].take() {
            self.spans[k].to = at;
        }
        if let Some(state) = state {
            let t = &self.types[self.nodes[node].kind];
            let w = match state {
                NodeState::Boot => t.boot.watts,
                NodeState::Shutdown => t.shutdown.watts,
                NodeState::Off => t.off_w,
            };
            self.spans.push(StateSpan {
                state,
                from: at,
                to: Time::MAX,
                delta_w: w - self.idle_w(node),
            });
            self.open[node] = Some(self.spans.len() - 1);
        }
    }

    /// The first instant: every node idle since then gets its timer.
    fn begin(&mut self, now: Time) {
        if self.origin.is_some() {
            return;
        }
        self.origin = Some(now);
        for (k, node) in self.nodes.iter_mut().enumerate() {
            if node.jobs == 0 {
                node.phase = Phase::On {
                    idle_since: Some(now),
                };
                self.timers
                    .push(Reverse((now.saturating_add(self.suspend_after), k as u32)));
            }
        }
    }

    /// The node's phase as of `now` (a boot that finished is on).
    fn settle(&mut self, node: usize, now: Time) {
        if let Phase::Booting { ready } = self.nodes[node].phase
            && ready <= now
        {
            self.nodes[node].phase = Phase::On { idle_since: None };
            self.enter(node, ready, None);
        }
    }

    /// Gives `cores` of `node` to a job at `now`: returns when the node is ready.
    fn take(&mut self, node: usize, cores: u32, now: Time) -> Time {
        self.settle(node, now);
        let t = self.types[self.nodes[node].kind];
        let ready = match self.nodes[node].phase {
            Phase::On { .. } => now,
            Phase::Booting { ready } => ready,
            Phase::ShuttingDown { off_at } => {
                // it finishes shutting down, then boots
                let ready = off_at.saturating_add(t.boot.seconds);
                self.enter(node, off_at, Some(NodeState::Boot));
                self.boots.push(off_at);
                ready
            }
            Phase::Off { .. } => {
                self.enter(node, now, Some(NodeState::Boot));
                self.boots.push(now);
                now.saturating_add(t.boot.seconds)
            }
        };
        if ready <= now {
            self.enter(node, now, None);
        }
        let n = &mut self.nodes[node];
        n.phase = if ready > now {
            Phase::Booting { ready }
        } else {
            Phase::On { idle_since: None }
        };
        n.used += cores;
        n.jobs += 1;
        ready
    }

    /// Packs `cores` onto nodes (module docs): the chosen nodes and cores.
    fn pack(&self, mut cores: u32) -> Vec<(u32, u32)> {
        // rank: 0 on and running jobs, 1 on and idle (most recently idle first), 2 booting,
        // 3 shutting down, 4 off
        let mut candidates: Vec<(u8, Reverse<Time>, usize)> = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, n)| n.used < n.cores)
            .map(|(k, n)| {
                let (rank, since) = match n.phase {
                    Phase::On { .. } if n.jobs > 0 => (0, Time::MAX),
                    Phase::On { idle_since } => (1, idle_since.unwrap_or(Time::MIN)),
                    Phase::Booting { .. } => (2, 0),
                    Phase::ShuttingDown { .. } => (3, 0),
                    Phase::Off { since } => (4, since),
                };
                (rank, Reverse(since), k)
            })
            .collect();
        candidates.sort_unstable();
        let mut chosen = Vec::new();
        for (_, _, k) in candidates {
            if cores == 0 {
                break;
            }
            let n = &self.nodes[k];
            let here = (n.cores - n.used).min(cores);
            chosen.push((k as u32, here));
            cores -= here;
        }
        chosen
    }

    /// A job (`key`: the caller's, unique among running jobs) starts at `now`: returns how long
    /// it waits for its nodes to be ready, seconds.
    pub fn start(&mut self, now: Time, key: u64, placement: Placement<'_>) -> Time {
        self.begin(now);
        let chosen = match placement {
            Placement::Cores(cores) => self.pack(cores),
            Placement::Nodes(nodes) => nodes
                .iter()
                .filter(|&&(node, _)| (node as usize) < self.nodes.len())
                .copied()
                .collect(),
        };
        let mut ready = now;
        for &(node, cores) in &chosen {
            ready = ready.max(self.take(node as usize, cores, now));
        }
        self.placed.insert(key, chosen);
        self.prune();
        let delay = ready - now;
        if delay > 0 {
            self.jobs_delayed += 1;
            self.boot_wait += delay;
        }
        delay
    }

    /// The job `key` ended at `now`: its nodes with no other job are idle from now.
    pub fn end(&mut self, now: Time, key: u64) {
        self.begin(now);
        let Some(placed) = self.placed.remove(&key) else {
            return;
        };
        for (node, cores) in placed {
            let k = node as usize;
            self.settle(k, now);
            let n = &mut self.nodes[k];
            n.used = n.used.saturating_sub(cores);
            n.jobs = n.jobs.saturating_sub(1);
            if n.jobs == 0 {
                n.phase = Phase::On {
                    idle_since: Some(now),
                };
                self.timers
                    .push(Reverse((now.saturating_add(self.suspend_after), node)));
            }
        }
        self.prune();
    }

    /// Whether the timer of `node` at `at` still stands (the node did not change since it
    /// was set).
    fn stands(&self, at: Time, node: usize) -> bool {
        let n = &self.nodes[node];
        match n.phase {
            Phase::On {
                idle_since: Some(since),
            } => n.jobs == 0 && since.saturating_add(self.suspend_after) == at,
            Phase::ShuttingDown { off_at } => off_at == at,
            _ => false,
        }
    }

    /// Drops the timers that no longer stand from the top of the heap, so that
    /// [`NodeSaving::next_change`] is a change that will happen.
    fn prune(&mut self) {
        while let Some(&Reverse((at, node))) = self.timers.peek() {
            if self.stands(at, node as usize) {
                break;
            }
            self.timers.pop();
        }
    }

    /// The next instant a node changes state by itself, if any.
    pub fn next_change(&self) -> Option<Time> {
        self.timers.peek().map(|Reverse((t, _))| *t)
    }

    /// Applies the changes due by `now`: idle nodes power down, nodes done shutting down are
    /// off.
    pub fn apply(&mut self, now: Time) {
        while let Some(&Reverse((at, node))) = self.timers.peek() {
            if at > now {
                break;
            }
            self.timers.pop();
            let k = node as usize;
            let t = self.types[self.nodes[k].kind];
            match self.nodes[k].phase {
                Phase::On {
                    idle_since: Some(since),
                } if self.nodes[k].jobs == 0 && since.saturating_add(self.suspend_after) == at => {
                    let off_at = at.saturating_add(t.shutdown.seconds);
                    self.nodes[k].phase = Phase::ShuttingDown { off_at };
                    self.shutdowns.push(at);
                    if off_at > at {
                        self.enter(k, at, Some(NodeState::Shutdown));
                        self.timers.push(Reverse((off_at, node)));
                    } else {
                        self.nodes[k].phase = Phase::Off { since: at };
                        self.enter(k, at, Some(NodeState::Off));
                    }
                }
                Phase::ShuttingDown { off_at } if off_at == at => {
                    self.nodes[k].phase = Phase::Off { since: at };
                    self.enter(k, at, Some(NodeState::Off));
                }
                _ => {} // stale: the node took a job since
            }
        }
        self.prune();
    }

    /// Every span a node spent booting, shutting down or off (those still open end at
    /// `Time::MAX`).
    pub fn spans(&self) -> &[StateSpan] {
        &self.spans
    }

    /// What it did within `[from, to]` (the metered span: shutdowns and boots begun in it, the
    /// node-hours off in it; jobs delayed over the whole run).
    pub fn report(&self, from: Time, to: Time) -> SavingReport {
        let off_seconds: Time = self
            .spans
            .iter()
            .filter(|s| s.state == NodeState::Off)
            .map(|s| (s.to.min(to) - s.from.max(from)).max(0))
            .sum();
        let within = |times: &[Time]| times.iter().filter(|&&t| t >= from && t < to).count() as u64;
        SavingReport {
            suspend_after_seconds: self.suspend_after,
            nodes: self.nodes.len() as u64,
            shutdowns: within(&self.shutdowns),
            boots: within(&self.boots),
            jobs_delayed: self.jobs_delayed,
            boot_wait_seconds: self.boot_wait,
            off_node_hours: off_seconds as f64 / 3600.0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Transition;

    /// Nodes of 4 cores: 100 W idle, 5 W off, boot 30 s at 150 W, shutdown 10 s at 120 W.
    fn node() -> NodePower {
        NodePower {
            cores: 4,
            idle_w: 100.0,
            off_w: 5.0,
            boot: Transition {
                seconds: 30,
                watts: 150.0,
            },
            shutdown: Transition {
                seconds: 10,
                watts: 120.0,
            },
            ..NodePower::default()
        }
    }

    /// Two nodes, 100 s to power down: the timeline of the module's test (see each step).
    fn two_nodes() -> NodeSaving {
        let mut saving = NodeSaving::of_processors(100, node(), 8);
        // A (4 cores) at 0 on node 0; node 1 idle since 0
        assert_eq!(saving.start(0, 1, Placement::Cores(4)), 0);
        assert_eq!(saving.next_change(), Some(100));
        // A ends at 50: node 0 idle since 50
        saving.end(50, 1);
        // node 1 shuts down at 100 (off at 110); node 0 at 150 (off at 160)
        for t in [100, 110, 150, 160] {
            assert_eq!(saving.next_change(), Some(t));
            saving.apply(t);
        }
        assert_eq!(saving.next_change(), None);
        saving
    }

    #[test]
    fn idle_nodes_power_down_and_a_job_waits_for_their_boot() {
        let mut saving = two_nodes();
        // B (6 cores) at 200: both nodes off, both boot 200..230; it waits 30 s
        assert_eq!(saving.start(200, 2, Placement::Cores(6)), 30);
        // C (2 cores) at 210 takes node 1's two free cores: it waits for the same boot
        assert_eq!(saving.start(210, 3, Placement::Cores(2)), 20);
        saving.end(330, 2);
        saving.end(340, 3);
        let spans: Vec<(NodeState, Time, Time, f64)> = saving
            .spans()
            .iter()
            .map(|s| (s.state, s.from, s.to, s.delta_w))
            .collect();
        assert_eq!(
            spans,
            vec![
                (NodeState::Shutdown, 100, 110, 20.0),
                (NodeState::Off, 110, 200, -95.0),
                (NodeState::Shutdown, 150, 160, 20.0),
                (NodeState::Off, 160, 200, -95.0),
                // node 0 (off most recently) is packed first
                (NodeState::Boot, 200, 230, 50.0),
                (NodeState::Boot, 200, 230, 50.0),
            ]
        );
        let report = saving.report(0, 340);
        assert_eq!(report.shutdowns, 2);
        assert_eq!(report.boots, 2);
        assert_eq!(report.jobs_delayed, 2);
        assert_eq!(report.boot_wait_seconds, 50);
        assert!((report.off_node_hours - (90.0 + 40.0) / 3600.0).abs() < 1e-12);
        // cut to a window
        assert!((saving.report(120, 170).off_node_hours - (50.0 + 10.0) / 3600.0).abs() < 1e-12);
    }

    #[test]
    fn a_node_shutting_down_finishes_then_boots() {
        let mut saving = NodeSaving::of_processors(100, node(), 8);
        saving.start(0, 1, Placement::Cores(4));
        saving.apply(100); // node 1 shuts down, off at 110
        // D (4 cores) at 105: node 0 is full (A), node 1 is shutting down until 110: it
        // finishes, then boots, ready at 110 + 30
        assert_eq!(saving.start(105, 2, Placement::Cores(4)), 35);
        assert_eq!(saving.report(0, 200).boots, 1);
        // the shutdown completes at 110 and the boot follows
        let spans: Vec<(NodeState, Time, Time)> = saving
            .spans()
            .iter()
            .map(|s| (s.state, s.from, s.to))
            .collect();
        assert_eq!(
            spans,
            vec![
                (NodeState::Shutdown, 100, 110),
                (NodeState::Boot, 110, Time::MAX),
            ]
        );
        // a stale timer (node 1's off at 110) changes nothing
        saving.apply(110);
        saving.end(300, 2);
        assert_eq!(saving.spans()[1].to, 140);
    }

    #[test]
    fn packing_fills_running_nodes_then_the_most_recently_idle() {
        let mut saving = NodeSaving::of_processors(1000, node(), 12);
        assert_eq!(saving.start(0, 1, Placement::Cores(2)), 0); // node 0
        assert_eq!(saving.start(0, 2, Placement::Cores(2)), 0); // node 0 again
        assert_eq!(saving.start(0, 3, Placement::Cores(1)), 0); // node 1
        saving.end(10, 3); // node 1 idle since 10, node 2 since 0
        saving.start(20, 4, Placement::Cores(1));
        assert_eq!(saving.placed[&4], vec![(1, 1)]);
        // nodes chosen by the scheduler are taken as they are
        saving.start(30, 5, Placement::Nodes(&[(2, 4)]));
        assert_eq!(saving.placed[&5], vec![(2, 4)]);
    }

    #[test]
    fn a_partial_last_node_holds_the_rest() {
        let saving = NodeSaving::of_processors(0, node(), 10);
        assert_eq!(saving.nodes.len(), 3);
        assert_eq!(saving.nodes[2].cores, 2);
        assert!((saving.idle_w(2) - 50.0).abs() < 1e-12);
    }

    #[test]
    fn with_no_wait_idle_nodes_power_down_at_once() {
        let mut saving = NodeSaving::of_processors(0, node(), 4);
        saving.start(0, 1, Placement::Cores(4));
        saving.end(10, 1);
        assert_eq!(saving.next_change(), Some(10));
        saving.apply(10);
        saving.apply(20);
        assert_eq!(saving.start(50, 2, Placement::Cores(1)), 30);
    }
}
