//! EASY backfilling (Lifka 1995; the exact rules of Tsafrir's thesis, section 2.3), with
//! Tsafrir's variants: runtime predictions and shortest-first backfilling (chapter 4).

use std::ops::Range;

use super::node_scan::{ANY_PREDICTION, NodeClasses};
use super::{Backfill, Pass};
use crate::pool::{NodeShadow, PartitionSet};
use crate::{CandidateScan, Reservation, StateVersion, Time};

/// The order in which EASY scans the jobs behind the reservation for backfilling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackfillOrder {
    /// Queue (priority) order.
    #[default]
    Queue,
    /// Shortest predicted runtime first (Tsafrir's SJBF, thesis section 4.2.3); the reservation
    /// still goes to the head of the queue.
    ShortestFirst,
}

/// EASY: start jobs from the head of the queue while they fit; the first job that does not fit
/// gets a reservation at its shadow time; a later job may start now if it fits and either ends
/// (by its prediction) by the shadow time or uses only the extra processors.
#[derive(Debug, Clone, Default)]
pub struct Easy {
    /// The scan order of backfill candidates.
    backfill_order: BackfillOrder,
    /// The reservation of the last pass.
    reservation: Option<Reservation>,
    /// What the last queue-order backfilling scan established, so that the next pass can skip
    /// the positions it already ruled out.
    searched: Option<Searched>,
    /// The same for the last scan on a machine of node types, with its shadow.
    node_searched: Option<NodeSearched>,
    /// On a machine of node types, the waiting jobs by class, for the queue-order scan.
    node_classes: NodeClasses,
    /// That scan's buffers, kept from pass to pass (empty between passes): the classes that
    /// could fit, the classes' next jobs by position, the classes that may start only jobs
    /// that end by the shadow time.
    node_buffers: NodeBuffers,
    /// Scan every position behind the blocked job on a machine of node types, as SJBF does,
    /// instead of by classes (set only by the tests that compare the two).
    plain_node_walk: bool,
}

/// [`Easy::node_buffers`]' type.
type NodeBuffers = (
    Vec<u32>,
    std::collections::BinaryHeap<std::cmp::Reverse<(usize, u32, usize)>>,
    Vec<u32>,
);

/// What a scan on a machine of node types takes over from the last one
/// ([`Easy::backfill_node_classes`]).
#[derive(Debug, Default)]
struct Carried {
    /// A shadow of the blocked job that still holds, to use when one is first needed.
    shadow: Option<NodeShadow>,
    /// Whether a later pass may carry this pass's shadow ([`NodeSearched::carryable`]).
    carryable: bool,
    /// Where the last scan ended and the partitions whose nodes jobs left since, when only
    /// such ends came between ([`Pass::quiet_ends`]): the classes elsewhere start there.
    quiet: Option<(usize, PartitionSet)>,
}

/// The end of a backfilling scan on a machine of node types ([`Easy::backfill_nodes`]): at
/// `now`, with the cluster at `version`, no waiting job at a position before `end` started
/// behind the blocked job at `blocked`, with `shadow` (if one was worked out). A later pass that
/// sees the same version sees the same running jobs, free amounts and positions, so the same
/// blocked job, fits and shadow; with a later `now` every job it ruled out is still ruled out
/// (as for [`Searched`]), and it scans from `end` with the same shadow.
///
/// A later pass after other changes may still carry the shadow over
/// ([`Pass::carry_node_shadow`]): `blocked_id` is the blocked job; `spare` a shadow carried
/// into this scan that it did not need (this scan's result stays `None` then, as a scan that
/// works out none); `carryable` is false once a job started that ends exactly at the shadow
/// time (a shadow worked out later would count that job's release, which may come after the
/// shadow's last, so it could differ).
#[derive(Debug, Clone)]
struct NodeSearched {
    version: StateVersion,
    now: Time,
    blocked: usize,
    end: usize,
    shadow: Option<crate::pool::NodeShadow>,
    blocked_id: crate::JobId,
    spare: Option<crate::pool::NodeShadow>,
    carryable: bool,
}

/// The end of a queue-order backfilling scan: at the instant `now`, with the cluster at
/// `version`, no waiting job at positions before `end` passed the test (fits in `free`
/// processors, and ends by `shadow_time` or fits in `extra`, or, under a reserved `block`, only
/// the first) with the values the scan ended with. (The jobs before `blocked` in queue order
/// started; the blocked job is wider than the free processors; every other job the scan found
/// started, and the jobs it passed over failed a test that only narrowed since. This holds
/// whether positions are in priority order or, in search mode, in arrival order.)
///
/// Why it may be carried over: a later pass that sees the same version sees the same running
/// jobs, machine and positions (only jobs appended at `end` or later are new), so it computes
/// the same blocked job, free processors, shadow time and extra processors; with the same
/// values and a later `now` the test is at least as strict (`now + prediction <= shadow_time`
/// only gets harder), so every job it ruled out is still ruled out, and the scan may start at
/// `end`. Under saturation most passes follow an arrival and change nothing else, and this
/// turns their scan of thousands of waiting jobs into a look at the new ones.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Searched {
    version: StateVersion,
    now: Time,
    blocked: usize,
    free: u32,
    shadow_time: Time,
    extra: u32,
    block: Option<Range<u32>>,
    end: usize,
}

impl Easy {
    /// EASY scanning candidates in `backfill_order`.
    pub fn new(backfill_order: BackfillOrder) -> Easy {
        Easy {
            backfill_order,
            reservation: None,
            searched: None,
            node_searched: None,
            node_classes: NodeClasses::default(),
            node_buffers: NodeBuffers::default(),
            plain_node_walk: false,
        }
    }

    /// The scan order of backfill candidates.
    pub fn backfill_order(&self) -> BackfillOrder {
        self.backfill_order
    }

    /// EASY backfilling behind the blocked job at queue position `blocked` (section 2.3 of
    /// Tsafrir's thesis): reserve its shadow time, then start later jobs that fit now and
    /// either end by the shadow time or use only extra processors (the latter consume the
    /// extras). "Ends by" uses the candidate's prediction; candidates are scanned in queue
    /// order, or shortest prediction first under SJBF (thesis, section 4.2.3).
    fn backfill(&mut self, pass: &mut Pass<'_>, blocked: usize) {
        if pass.has_extra() {
            self.backfill_resources(pass, blocked);
            return;
        }
        let now: Time = pass.now();
        let reserved = *pass.job(blocked);
        let (mut shadow_time, mut extra) = pass.shadow(reserved.processors);
        // First Continuous (paper 001): the blocked job needs a run of processors, so its shadow
        // is when one becomes free, and that run is reserved: a candidate that does not end by
        // the shadow time must stay out of it (instead of counting extra processors).
        let block = pass
            .contiguous_shadow(reserved.processors)
            .map(|(time, run)| {
                shadow_time = time;
                extra = 0;
                run
            });
        match self.backfill_order {
            BackfillOrder::Queue => {
                // Jump from candidate to candidate: a job passes over only if it cannot start
                // (wider than the free processors, or, without a reserved block, ending after
                // the shadow time and wider than the extra processors). Free and extra only
                // shrink during the pass, so a job passed over stays passed over.
                // Skip what the last pass's scan ruled out, if nothing changed since (see
                // `Searched`).
                let min_position = match self.searched.take() {
                    Some(last)
                        if last.version == pass.version()
                            && last.blocked == blocked
                            && last.free == pass.free_processors()
                            && last.shadow_time == shadow_time
                            && last.extra == extra
                            && last.block == block
                            && last.now <= now =>
                    {
                        last.end
                    }
                    _ => 0,
                };
                // The scan goes on after the blocked job, then after each candidate, in queue
                // (priority) order.
                let mut after = blocked;
                // Free and extra processors only shrink during the scan: its tests narrow.
                let mut scan = CandidateScan::default();
                // "Ends by the shadow time" as a bound on the prediction, computed once: the test
                // runs at every tree node a search visits.
                let ends_by = longest_ending_by(now, shadow_time);
                let no_block = block.is_none();
                while pass.free_processors() > 0 {
                    let free = pass.free_processors();
                    let Some(candidate) = pass.next_in_order(
                        &mut scan,
                        after,
                        min_position,
                        |processors, prediction| {
                            processors <= free
                                && (!no_block || processors <= extra || prediction <= ends_by)
                        },
                    ) else {
                        break;
                    };
                    after = candidate;
                    self.try_backfill(pass, candidate, shadow_time, &mut extra, block.as_ref());
                }
                self.searched = Some(Searched {
                    version: pass.version(),
                    now,
                    blocked,
                    free: pass.free_processors(),
                    shadow_time,
                    extra,
                    block: block.clone(),
                    end: pass.positions(),
                });
            }
            BackfillOrder::ShortestFirst => {
                // Stable: equal predictions keep queue order.
                let mut candidates: Vec<usize> = (blocked + 1..pass.positions())
                    .filter(|&i| pass.is_waiting(i))
                    .collect();
                candidates.sort_by_key(|&i| pass.prediction(i));
                for candidate in candidates {
                    if pass.free_processors() == 0 {
                        break;
                    }
                    self.try_backfill(pass, candidate, shadow_time, &mut extra, block.as_ref());
                }
            }
        }
        self.reservation = Some(Reservation {
            job: reserved.id,
            shadow_time,
            extra_processors: extra,
        });
    }
}

/// The longest prediction, in seconds, with which a job started at `now` ends by `shadow_time`,
/// that is for which `now.saturating_add(prediction) <= shadow_time` (the test of
/// [`Easy::try_backfill`]), so that a search tests `prediction <= bound` at every node instead of
/// the sum: `Time::MAX` when every prediction does (the shadow time is the end of time, or lies
/// more than `Time::MAX` seconds after `now`), negative when none does (predictions are never
/// negative).
fn longest_ending_by(now: Time, shadow_time: Time) -> Time {
    if shadow_time == Time::MAX {
        return Time::MAX;
    }
    // A sum that saturates gives Time::MAX, after any shadow time short of it; one that does not
    // is at most the shadow time exactly when the prediction is at most the difference. A
    // difference beyond the range of Time is either above every prediction or below every one.
    match shadow_time.checked_sub(now) {
        Some(difference) => difference,
        None if shadow_time > now => Time::MAX,
        None => Time::MIN,
    }
}

impl Easy {
    /// Starts the waiting job at `candidate` if it fits now and either ends (by its prediction)
    /// by the shadow time or uses only extra processors (which it then consumes); under a
    /// reserved block (First Continuous), if it stays out of the block instead.
    fn try_backfill(
        &self,
        pass: &mut Pass<'_>,
        candidate: usize,
        shadow_time: Time,
        extra: &mut u32,
        block: Option<&Range<u32>>,
    ) {
        let now = pass.now();
        let job = *pass.job(candidate);
        let prediction = pass.prediction(candidate);
        if !pass.fits_now(job.processors) {
            return;
        }
        if now.saturating_add(prediction) <= shadow_time {
            pass.start(candidate, true);
        } else if let Some(block) = block {
            if pass.fits_avoiding(job.processors, block) {
                pass.start_avoiding(candidate, true, Some(block.clone()));
            }
        } else if job.processors <= *extra {
            *extra -= job.processors;
            pass.start(candidate, true);
        }
    }
}

impl Easy {
    /// [`Easy::backfill`] on a machine with other resources besides processors: the same rules
    /// with every resource counted (DESIGN.md's EASY, each test made for every resource): the
    /// shadow time is when every resource of the blocked job is free, the extra is what is free
    /// then beyond it, and a later job starts if it fits now and either ends by the shadow time
    /// or fits in the extra (which it then consumes). The plain walk: candidates one by one in
    /// queue order, or shortest prediction first under SJBF (the processor search and its
    /// carried-over scan count processors only).
    fn backfill_resources(&mut self, pass: &mut Pass<'_>, blocked: usize) {
        self.searched = None;
        let now = pass.now();
        let reserved = *pass.job(blocked);
        if pass.has_pool() {
            self.backfill_nodes(pass, blocked);
            return;
        }
        let mut candidates: Vec<usize> = (blocked + 1..pass.positions())
            .filter(|&i| pass.is_waiting(i))
            .collect();
        if self.backfill_order == BackfillOrder::ShortestFirst {
            // Stable: equal predictions keep queue order.
            candidates.sort_by_key(|&i| pass.prediction(i));
        }
        let (shadow_time, mut extra) = pass.shadow_of(blocked);
        for candidate in candidates {
            if !pass.fits(candidate) {
                continue;
            }
            let job = pass.job(candidate).resources();
            if now.saturating_add(pass.prediction(candidate)) <= shadow_time {
                pass.start(candidate, true);
            } else if job.fits_in(&extra) {
                extra = extra.minus(&job);
                pass.start(candidate, true);
            }
        }
        self.reservation = Some(Reservation {
            job: reserved.id,
            shadow_time,
            extra_processors: extra.processors,
        });
    }
}

impl Easy {
    /// [`Easy::backfill_resources`] on a machine of node types: the shadow time is when the
    /// blocked job fits on nodes of its partition as the running jobs end by their
    /// predictions, and those nodes are reserved with its shares; a later job starts if it fits
    /// now and either ends by the shadow time or fits, node by node and machine-wide, in what
    /// is left then beyond the reserved job (which it then consumes). So no job started now
    /// takes from the reserved job's nodes what it will need at the shadow time.
    fn backfill_nodes(&mut self, pass: &mut Pass<'_>, blocked: usize) {
        let now = pass.now();
        let reserved = *pass.job(blocked);
        // Skip what the last pass's scan ruled out, if nothing changed since (`NodeSearched`).
        // The shadow is worked out when a candidate first fits now: a pass in which none does
        // (most, on a busy machine) starts nothing, and reserves nothing either. Where the
        // last pass's shadow carries over, it is that shadow.
        let mut carry = Carried {
            carryable: true,
            ..Carried::default()
        };
        // With maintenance windows on nodes, whether a job fits depends on its estimate too:
        // alike requests do not fit alike, so every candidate is tested (the plain walk).
        let plain = self.plain_node_walk || pass.keeps_node_windows();
        let (from, mut shadow) = match self.node_searched.take() {
            Some(last)
                if last.version == pass.version() && last.blocked == blocked && last.now <= now =>
            {
                carry.shadow = last.spare;
                carry.carryable = last.carryable;
                (last.end, last.shadow)
            }
            // Only ends that leave the blocked job's shadow since the last pass: its shadow
            // carries over, and the classes on nodes none of those jobs held need be scanned
            // only from where that pass's scan ended (nothing changed for them, and with a
            // later `now` what it ruled out stays ruled out).
            Some(last) if last.carryable && last.blocked_id == reserved.id && !plain => {
                if let Some(touched) = pass.quiet_ends(blocked, last.version) {
                    carry.shadow = last.shadow.or(last.spare);
                    if let Some(s) = carry.shadow.as_mut() {
                        pass.carry_node_shadow(s);
                    }
                    if last.version.same_positions(&pass.version()) {
                        carry.quiet = Some((last.end, touched));
                    }
                }
                (0, None)
            }
            _ => (0, None),
        };
        let from = (blocked + 1).max(from);
        if self.backfill_order == BackfillOrder::Queue && !plain {
            shadow = match self.backfill_node_classes(pass, blocked, from, shadow, &mut carry) {
                Ok(shadow) => shadow,
                // Unreachable: a machine of node types always has a shadow (`Pass::node_shadow`).
                Err(()) => return,
            };
        } else {
            let mut candidates: Vec<usize> = (from..pass.positions())
                .filter(|&i| pass.is_waiting(i))
                .collect();
            if self.backfill_order == BackfillOrder::ShortestFirst {
                // Stable: equal predictions keep queue order.
                candidates.sort_by_key(|&i| pass.prediction(i));
            }
            for candidate in candidates {
                if !pass.fits(candidate) {
                    continue;
                }
                if shadow.is_none() {
                    match pass.node_shadow(blocked) {
                        Some(s) => shadow = Some(s),
                        // Unreachable: a machine of node types always has a shadow (`Pass::node_shadow`).
                        None => return,
                    }
                }
                let Some(shadow) = shadow.as_mut() else {
                    return;
                };
                if now.saturating_add(pass.prediction(candidate)) <= shadow.time {
                    pass.start(candidate, true);
                } else if pass.fits_within(candidate, shadow) {
                    pass.start_within(candidate, shadow);
                }
            }
        }
        if let Some(shadow) = &shadow {
            self.reservation = Some(Reservation {
                job: reserved.id,
                shadow_time: shadow.time,
                extra_processors: shadow.extra.processors,
            });
        }
        self.node_searched = Some(NodeSearched {
            version: pass.version(),
            now,
            blocked,
            end: pass.positions(),
            shadow,
            blocked_id: reserved.id,
            spare: carry.shadow,
            carryable: carry.carryable,
        });
    }
}

impl Easy {
    /// [`Easy::backfill_nodes`]' scan in queue order from position `from`, by classes of alike
    /// jobs ([`NodeClasses`]): each waiting job at or after `from` that fits now starts if it
    /// ends by the shadow time (worked out, if `shadow` is `None`, when a job first fits) or
    /// fits within what the shadow leaves, in queue order, as a walk over every position would
    /// start them; a job is tested only if its class could still start it. Returns the shadow
    /// (`Err` if it could not be worked out: never).
    fn backfill_node_classes(
        &mut self,
        pass: &mut Pass<'_>,
        blocked: usize,
        from: usize,
        mut shadow: Option<NodeShadow>,
        carry: &mut Carried,
    ) -> Result<Option<NodeShadow>, ()> {
        use std::cmp::Reverse;
        let now = pass.now();
        let classes = &mut self.node_classes;
        classes.sync(pass);
        // The first job of each class that fits now (the answer for its class), by position.
        // (The buffers are the last pass's, emptied.)
        let (mut fitting, mut heap, mut short_only) = std::mem::take(&mut self.node_buffers);
        fitting.clear();
        heap.clear();
        short_only.clear();
        classes.could_fit(pass, |c| fitting.push(c));
        // A class the last scan covered up to `end` (`Carried::quiet`) is visited from there;
        // whether a job of it behind the blocked one fits now still decides whether a shadow is
        // worked out (and so reported), as when every job is visited.
        let mut fits_behind = false;
        for &c in &fitting {
            let demand = classes.demand(c).copied();
            let Some((member, position)) = classes.first(pass, c, from, ANY_PREDICTION) else {
                continue;
            };
            if !pass.fits_as(position, demand.as_ref()) {
                continue;
            }
            match carry.quiet {
                Some((end, touched)) if end > position && classes.untouched(c, touched) => {
                    fits_behind = true;
                    if let Some((member, position)) = classes.first(pass, c, end, ANY_PREDICTION)
                        && pass.fits_as(position, demand.as_ref())
                    {
                        heap.push(Reverse((position, c, member)));
                    }
                }
                _ => heap.push(Reverse((position, c, member))),
            }
        }
        if fits_behind && shadow.is_none() {
            let Some(s) = carry.shadow.take().or_else(|| pass.node_shadow(blocked)) else {
                self.node_buffers = (fitting, heap, short_only);
                return Err(());
            };
            shadow = Some(s);
        }
        // The bound on the prediction of a job that ends by the shadow time (clamped as the
        // classes clamp predictions).
        let bound_of = |s: &NodeShadow| longest_ending_by(now, s.time).min(ANY_PREDICTION);
        let mut ends_by = shadow.as_ref().map_or(ANY_PREDICTION, bound_of);
        // The classes that fit now but not within the shadow: only their jobs that end by the
        // shadow time may start.
        while let Some(Reverse((candidate, c, member))) = heap.pop() {
            let demand = classes.demand(c).copied();
            // A class that no longer fits is done: what is free only shrinks during the pass.
            if !pass.fits_as(candidate, demand.as_ref()) {
                continue;
            }
            if shadow.is_none() {
                let Some(s) = carry.shadow.take().or_else(|| pass.node_shadow(blocked)) else {
                    self.node_buffers = (fitting, heap, short_only);
                    return Err(());
                };
                ends_by = bound_of(&s);
                shadow = Some(s);
            }
            let Some(s) = shadow.as_mut() else {
                return Err(());
            };
            let end = now.saturating_add(pass.prediction(candidate));
            if end <= s.time {
                carry.carryable &= end < s.time;
                pass.start(candidate, true);
                classes.started(c, member);
            } else if pass.fits_within_as(candidate, s, demand.as_ref()) {
                pass.start_within(candidate, s);
                classes.started(c, member);
            } else if !short_only.contains(&c) {
                short_only.push(c);
            }
            let bound = if short_only.contains(&c) {
                ends_by
            } else {
                ANY_PREDICTION
            };
            if bound < 0 {
                continue;
            }
            if let Some((member, position)) = classes.next(pass, c, member + 1, bound) {
                heap.push(Reverse((position, c, member)));
            }
        }
        self.node_buffers = (fitting, heap, short_only);
        Ok(shadow)
    }
}

impl Backfill for Easy {
    fn name(&self) -> &'static str {
        "easy"
    }

    fn schedules_extra(&self) -> bool {
        true
    }

    fn schedule(&mut self, pass: &mut Pass<'_>) {
        self.reservation = None;
        if pass.nothing_can_start() {
            return;
        }
        pass.sort_queue();
        let blocked = pass.start_head();
        if blocked < pass.positions() {
            self.backfill(pass, blocked);
        }
    }

    fn skips_started_positions(&self) -> bool {
        true
    }

    fn searches_in_order(&self) -> bool {
        self.backfill_order == BackfillOrder::Queue
    }

    fn uses_predictions(&self) -> bool {
        true
    }

    fn reservation(&self) -> Option<Reservation> {
        self.reservation
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pool::{Amounts, NodeType, PoolPartition, PoolSpec};
    use crate::{Cluster, Extra, JobId, JobRequest, Predictor, Scheduler};
    use job::Shape;
    use proptest::prelude::*;
    use std::collections::HashMap;

    /// A random machine of node types (two or three types, some of GPUs, in up to two
    /// partitions, one maybe exclusive) and a random stream of jobs on it: (submit, processors,
    /// MiB, GPUs, runtime, estimate, partition, shape).
    #[allow(clippy::type_complexity)]
    fn machine_and_jobs()
    -> impl Strategy<Value = (PoolSpec, Vec<(i64, u32, u32, u32, i64, i64, i64, Shape)>)> {
        let node_type = (
            1u32..=16,
            1u32..=8,
            prop_oneof![Just(0u32), 1u32..=4],
            1u32..=3,
        );
        (
            proptest::collection::vec(node_type, 2..=3),
            proptest::collection::vec(
                (
                    proptest::collection::vec(any::<bool>(), 16),
                    prop_oneof![4 => Just(false), 1 => Just(true)],
                ),
                0..=2,
            ),
            proptest::collection::vec(
                (
                    0i64..=30,
                    1u32..=24,
                    0u32..=16,
                    prop_oneof![2 => Just(0u32), 1 => 1u32..=5],
                    1i64..=60,
                    0i64..=40,
                    -1i64..=1,
                    0u16..=2,
                    prop_oneof![6 => Just(false), 1 => Just(true)],
                ),
                1..=80,
            ),
        )
            .prop_map(|(types, partitions, jobs)| {
                let mut spec = PoolSpec {
                    gpu_types: vec!["a100".into()],
                    memory_kind: Some(0),
                    gpu_kind: Some(1),
                    ..PoolSpec::default()
                };
                for (i, &(cpus, gib, gpus, count)) in types.iter().enumerate() {
                    spec.types.push(NodeType {
                        name: format!("t{i}"),
                        capacity: Amounts {
                            cpus,
                            memory: gib * 1024,
                            gpus,
                        },
                        gpu_type: u8::from(gpus > 0),
                        features: 0,
                        weight: i as u32,
                    });
                    for k in 0..count {
                        spec.nodes.push((format!("t{i}n{k}"), i as u16));
                    }
                }
                for (i, (members, exclusive)) in partitions.into_iter().enumerate() {
                    let mut nodes: Vec<u32> = (0..spec.nodes.len() as u32)
                        .filter(|&n| members[n as usize])
                        .collect();
                    if nodes.is_empty() {
                        nodes.push(0);
                    }
                    spec.partitions.push(PoolPartition {
                        name: format!("p{i}"),
                        number: i as i64,
                        nodes,
                        exclusive,
                        max_nodes: 0,
                        default_memory_per_cpu: 0,
                        default: i == 0,
                    });
                }
                let mut submit = 0;
                let jobs = jobs
                    .into_iter()
                    .map(
                        |(gap, cpus, gib, gpus, runtime, slack, partition, nodes, exclusive)| {
                            submit += gap;
                            (
                                submit,
                                cpus,
                                gib * 512,
                                gpus,
                                runtime,
                                runtime + slack,
                                partition,
                                Shape {
                                    nodes,
                                    exclusive,
                                    ..Shape::ANY
                                },
                            )
                        },
                    )
                    .collect();
                (spec, jobs)
            })
    }

    /// The request of the `index`-th of the generated jobs (see [`machine_and_jobs`]).
    fn request(index: usize, job: &(i64, u32, u32, u32, i64, i64, i64, Shape)) -> JobRequest {
        let &(submit, cpus, memory, gpus, _, estimate, partition, shape) = job;
        JobRequest {
            array_task: Default::default(),
            reservation: Default::default(),
            id: JobId(index as u32),
            submit,
            processors: cpus,
            extra: Extra::NONE.with(0, memory).with(1, gpus),
            estimate,
            user: 1,
            group: 1,
            partition,
            queue: -1,
            shape,
        }
    }

    /// Every start (time, job) and reservation after every pass of EASY on `spec` with `jobs`,
    /// each job running its runtime (the engine's order at an instant: ends, arrivals, a pass).
    #[allow(clippy::type_complexity)]
    fn run(
        plain: bool,
        spec: &PoolSpec,
        jobs: &[(i64, u32, u32, u32, i64, i64, i64, Shape)],
    ) -> Vec<(Time, u32, Option<Reservation>)> {
        let mut easy = Easy::new(BackfillOrder::Queue);
        easy.plain_node_walk = plain;
        let scheduler = Scheduler {
            order: Box::new(crate::Arrival),
            backfill: Box::new(easy),
            predictor: Predictor::UserEstimate,
        };
        let mut cluster = Cluster::new(1, scheduler).with_pool(spec.clone()).unwrap();
        let mut seen = Vec::new();
        let mut ends: std::collections::BTreeMap<(Time, u32), ()> = Default::default();
        let mut next = 0;
        while next < jobs.len() || !ends.is_empty() {
            let now = [ends.keys().next().map(|k| k.0), jobs.get(next).map(|j| j.0)]
                .into_iter()
                .flatten()
                .min()
                .unwrap();
            while let Some((&(end, id), _)) = ends.first_key_value() {
                if end != now {
                    break;
                }
                ends.remove(&(end, id));
                cluster.finish(JobId(id), now).unwrap();
            }
            while let Some(job) = jobs.get(next).filter(|j| j.0 == now) {
                cluster.submit(request(next, job)).unwrap();
                next += 1;
            }
            for s in cluster.schedule(now).to_vec() {
                let runtime = jobs[s.id.0 as usize].4.min(jobs[s.id.0 as usize].5);
                ends.insert((now + runtime, s.id.0), ());
                seen.push((now, s.id.0, None));
            }
            seen.push((now, u32::MAX, cluster.last_reservation()));
        }
        seen
    }

    proptest::proptest! {
        /// On a machine of node types, EASY's scan by classes of alike jobs starts the jobs a
        /// walk over every position behind the blocked job starts, at the same instants and in
        /// the same order, with the same reservations.
        #[test]
        fn the_class_scan_starts_what_the_plain_walk_starts((spec, jobs) in machine_and_jobs()) {
            proptest::prop_assert_eq!(run(false, &spec, &jobs), run(true, &spec, &jobs));
        }
    }

    /// EASY on `spec` with `jobs` (as [`run`], each running its runtime, estimates exact
    /// when the slack is 0) and maintenance `windows` on nodes, entered at their starts and
    /// ends: each start (time, job, end, nodes), and the least shadow time reported for each
    /// job while it was the reserved one.
    #[allow(clippy::type_complexity)]
    fn run_with_windows(
        spec: &PoolSpec,
        jobs: &[(i64, u32, u32, u32, i64, i64, i64, Shape)],
        windows: &[crate::NodeWindow],
    ) -> (Vec<(Time, u32, Time, Vec<u32>)>, HashMap<JobId, Time>) {
        let scheduler = Scheduler {
            order: Box::new(crate::Arrival),
            backfill: Box::new(Easy::new(BackfillOrder::Queue)),
            predictor: Predictor::UserEstimate,
        };
        let mut cluster = Cluster::new(1, scheduler)
            .with_pool(spec.clone())
            .unwrap()
            .with_node_windows(windows.to_vec())
            .unwrap();
        let mut changes: Vec<Time> = windows.iter().flat_map(|w| [w.from, w.to]).collect();
        changes.sort_unstable();
        let mut starts = Vec::new();
        let mut promised: HashMap<JobId, Time> = HashMap::default();
        let mut ends: std::collections::BTreeMap<(Time, u32), ()> = Default::default();
        let (mut next, mut change) = (0, 0);
        // a waiting job may start at a window's end with nothing running
        while next < jobs.len() || !ends.is_empty() || change < changes.len() {
            let now = [
                ends.keys().next().map(|k| k.0),
                jobs.get(next).map(|j| j.0),
                changes.get(change).copied(),
            ]
            .into_iter()
            .flatten()
            .min()
            .unwrap();
            while changes.get(change) == Some(&now) {
                change += 1;
            }
            while let Some((&(end, id), _)) = ends.first_key_value() {
                if end != now {
                    break;
                }
                ends.remove(&(end, id));
                cluster.finish(JobId(id), now).unwrap();
            }
            cluster.enter_node_windows(now);
            cluster.capacity_changed(now);
            while let Some(job) = jobs.get(next).filter(|j| j.0 == now) {
                cluster.submit(request(next, job)).unwrap();
                next += 1;
            }
            for s in cluster.schedule(now).to_vec() {
                let runtime = jobs[s.id.0 as usize].4.min(jobs[s.id.0 as usize].5);
                ends.insert((now + runtime, s.id.0), ());
                let nodes = (cluster.node_allocation(s.id).unwrap().iter())
                    .map(|&(n, _)| n)
                    .collect();
                starts.push((now, s.id.0, now + runtime, nodes));
            }
            if let Some(r) = cluster.last_reservation() {
                let least = promised.entry(r.job).or_insert(r.shadow_time);
                *least = (*least).min(r.shadow_time);
            }
        }
        (starts, promised)
    }

    #[test]
    fn a_job_reaching_into_a_window_is_reserved_after_it_and_the_others_backfill() {
        // two nodes of 8 CPUs, both in maintenance over [1_000, 2_000)
        let mut spec = PoolSpec {
            memory_kind: Some(0),
            gpu_kind: Some(1),
            ..PoolSpec::default()
        };
        spec.types.push(NodeType {
            name: "n".into(),
            capacity: Amounts {
                cpus: 8,
                memory: 16 * 1024,
                gpus: 0,
            },
            gpu_type: 0,
            features: 0,
            weight: 0,
        });
        spec.nodes = vec![("n1".into(), 0), ("n2".into(), 0)];
        let window = crate::NodeWindow {
            from: 1_000,
            to: 2_000,
            nodes: vec![0, 1],
        };
        let one = Shape {
            nodes: 1,
            ..Shape::ANY
        };
        let both = Shape {
            nodes: 2,
            ..Shape::ANY
        };
        // (submit, CPUs, MiB, GPUs, runtime, estimate, partition, shape)
        let jobs = [
            (0, 8, 0, 0, 500, 500, -1, one),   // 0 runs until 500
            (0, 16, 0, 0, 900, 900, -1, both), // 1 would reach into the window from 500
            (0, 8, 0, 0, 400, 400, -1, one),   // 2 ends before it: backfilled now
            (0, 8, 0, 0, 800, 800, -1, one),   // 3 would reach into it: waits
        ];
        let (starts, promised) = run_with_windows(&spec, &jobs, &[window]);
        let start_of = |id: u32| starts.iter().find(|s| s.1 == id).map(|s| s.0);
        assert_eq!(start_of(0), Some(0));
        assert_eq!(start_of(2), Some(0), "backfilled before the window");
        assert_eq!(
            promised.get(&JobId(1)),
            Some(&2_000),
            "reserved from the window's end"
        );
        assert_eq!(start_of(1), Some(2_000));
        assert_eq!(start_of(3), Some(2_900), "after the reserved job");
    }

    /// Up to three maintenance windows on nodes of a machine of `nodes` nodes, within the
    /// first 3,000 s.
    fn node_windows(nodes: usize) -> impl Strategy<Value = Vec<crate::NodeWindow>> {
        proptest::collection::vec(
            (
                0i64..=3_000,
                1i64..=300,
                proptest::collection::vec(any::<bool>(), nodes),
            ),
            0..=3,
        )
        .prop_map(|windows| {
            windows
                .into_iter()
                .map(|(from, length, members)| crate::NodeWindow {
                    from,
                    to: from + length,
                    nodes: (0..members.len() as u32)
                        .filter(|&n| members[n as usize])
                        .chain([0])
                        .collect(),
                })
                .collect()
        })
    }

    proptest::proptest! {
        /// With maintenance windows on nodes: no job runs on a node over a window of it, none
        /// runs twice, and with exact estimates no reserved job starts after a shadow time EASY
        /// gave it (backfilling around the windows never delays the reservation).
        #[test]
        fn easy_runs_nothing_in_a_node_window_and_never_delays_the_reservation(
            (spec, jobs, windows) in machine_and_jobs().prop_flat_map(|(spec, jobs)| {
                let nodes = spec.nodes.len();
                (Just(spec), Just(jobs), node_windows(nodes))
            }),
            exact in any::<bool>(),
        ) {
            let jobs: Vec<_> = if exact {
                jobs.into_iter().map(|mut j| { j.5 = j.4; j }).collect()
            } else {
                jobs
            };
            let (starts, promised) = run_with_windows(&spec, &jobs, &windows);
            let mut ran: Vec<u32> = starts.iter().map(|s| s.1).collect();
            ran.sort_unstable();
            // a job no node set of its partition holds is held for good, never run
            proptest::prop_assert!(ran.windows(2).all(|w| w[0] < w[1]));
            for (start, job, end, nodes) in &starts {
                for w in &windows {
                    let on = nodes.iter().any(|n| w.nodes.contains(n));
                    proptest::prop_assert!(
                        !(on && *start < w.to && w.from < *end),
                        "job {} ran over [{}, {}) on {:?}, in a window over [{}, {}) of {:?}",
                        job, start, end, nodes, w.from, w.to, w.nodes
                    );
                }
                if exact && let Some(&shadow) = promised.get(&JobId(*job)) {
                    proptest::prop_assert!(
                        *start <= shadow,
                        "job {} started at {} after its shadow time {}", job, start, shadow
                    );
                }
            }
        }
    }

    proptest::proptest! {
        /// The bound on the prediction gives the answer of the sum it replaces, extremes included.
        #[test]
        fn longest_ending_by_agrees_with_the_saturating_sum(
            now in proptest::prop_oneof![Time::MIN..Time::MIN + 10, -100i64..100_000, Time::MAX - 10..=Time::MAX],
            shadow_time in proptest::prop_oneof![Time::MIN..Time::MIN + 10, -100i64..200_000, Time::MAX - 10..=Time::MAX],
            prediction in proptest::prop_oneof![0i64..200_000, Time::MAX - 10..=Time::MAX],
        ) {
            proptest::prop_assert_eq!(
                prediction <= longest_ending_by(now, shadow_time),
                now.saturating_add(prediction) <= shadow_time
            );
        }
    }
}
