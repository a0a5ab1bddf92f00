//! Which processors a job gets (paper 001, sections III and V-C): a machine of nodes of k
//! processors, numbered 0..P, node of processor p = p / k (a last node may be smaller when k
//! does not divide P), and a resource selection policy.
//!
//! * First Fit (FF): the lowest-numbered free processors, wherever they are.
//! * First Continuous fit (FC): the lowest-starting run of consecutive free processors; a job
//!   that finds no such run does not fit, however many processors are free.
//!
//! The scheduler's decisions depend on the selection only through "does it fit now" and, under
//! FC, through the block EASY reserves for the blocked job ([`NodeMap::contiguous_shadow`]).
//!
//! An experiment (not the paper's) can separate the two: with a placement
//! ([`NodeMap::place_by`]), the scheduler still decides by the selection's processors, but the
//! processors a job is reported to run on ([`NodeMap::allocation`]) are chosen by the placement
//! from a second map of the same jobs. FC decides and FF places: the same decisions, FF's nodes.

use std::collections::HashMap;
use std::ops::Range;

use crate::{JobId, Time};

/// How processors are chosen for a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Selection {
    /// The lowest-numbered free processors.
    FirstFit,
    /// The lowest-starting run of consecutive free processors.
    FirstContinuous,
}

/// A machine of nodes: processors per node and the selection policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nodes {
    /// Processors per node (k >= 1).
    pub processors_per_node: u32,
    /// FF or FC.
    pub selection: Selection,
}

/// The processors of the machine: which are free and which each running job holds.
#[derive(Debug, Clone)]
pub(crate) struct NodeMap {
    pub(crate) layout: Nodes,
    free: Vec<bool>,
    held: HashMap<JobId, Vec<u32>>,
    /// A placement apart from the decisions: its policy and its own map of the same jobs.
    placed: Option<(Selection, Box<NodeMap>)>,
}

impl NodeMap {
    pub(crate) fn new(processors: u32, layout: Nodes) -> NodeMap {
        NodeMap {
            layout,
            free: vec![true; processors as usize],
            held: HashMap::new(),
            placed: None,
        }
    }

    /// Jobs are still admitted by the layout's selection, but placed by `placement` on a map of
    /// their own: [`NodeMap::allocation`] reports those processors. A placement by First
    /// Continuous needs decisions by First Continuous (a run must exist), so `placement` FC
    /// with selection FF is refused (`false`).
    pub(crate) fn place_by(&mut self, placement: Selection) -> bool {
        if placement == Selection::FirstContinuous && !self.contiguous() {
            return false;
        }
        let layout = Nodes {
            processors_per_node: self.layout.processors_per_node,
            selection: placement,
        };
        self.placed = Some((
            placement,
            Box::new(NodeMap::new(self.free.len() as u32, layout)),
        ));
        true
    }

    /// The policy that chooses the processors jobs are reported on.
    pub(crate) fn placement(&self) -> Selection {
        self.placed
            .as_ref()
            .map_or(self.layout.selection, |(p, _)| *p)
    }

    pub(crate) fn contiguous(&self) -> bool {
        self.layout.selection == Selection::FirstContinuous
    }

    /// The first run of `n` consecutive free processors in `free` that does not meet `avoid`.
    fn first_run(free: &[bool], n: u32, avoid: Option<&Range<u32>>) -> Option<Range<u32>> {
        let n = n as usize;
        let mut start = 0;
        let mut length = 0;
        for (p, &is_free) in free.iter().enumerate() {
            let usable = is_free && avoid.is_none_or(|a| !a.contains(&(p as u32)));
            if usable {
                if length == 0 {
                    start = p;
                }
                length += 1;
                if length == n {
                    return Some(start as u32..(start + n) as u32);
                }
            } else {
                length = 0;
            }
        }
        None
    }

    /// Whether a job of `n` processors fits now (`free` free processors in all): FF needs the
    /// count, FC a run.
    pub(crate) fn fits(&self, n: u32, free: u32) -> bool {
        n <= free && (!self.contiguous() || Self::first_run(&self.free, n, None).is_some())
    }

    /// Whether a job of `n` processors fits now without touching `avoid` (FC only).
    pub(crate) fn fits_avoiding(&self, n: u32, avoid: &Range<u32>) -> bool {
        Self::first_run(&self.free, n, Some(avoid)).is_some()
    }

    /// Gives `job` `n` processors by the selection policy, away from `avoid` if given (FC).
    pub(crate) fn allocate(&mut self, job: JobId, n: u32, avoid: Option<&Range<u32>>) {
        let chosen: Vec<u32> = if self.contiguous() {
            match Self::first_run(&self.free, n, avoid) {
                Some(run) => run.collect(),
                None => Vec::new(), // never: the caller checked that it fits
            }
        } else {
            self.free
                .iter()
                .enumerate()
                .filter(|&(_, &f)| f)
                .map(|(p, _)| p as u32)
                .take(n as usize)
                .collect()
        };
        for &p in &chosen {
            self.free[p as usize] = false;
        }
        self.held.insert(job, chosen);
        if let Some((_, placed)) = self.placed.as_mut() {
            // The same count is free there, so FF always finds it; FC decisions imply FC
            // placements (the maps then agree).
            placed.allocate(job, n, None);
        }
    }

    /// Frees a job's processors.
    pub(crate) fn release(&mut self, job: JobId) {
        if let Some(held) = self.held.remove(&job) {
            for p in held {
                self.free[p as usize] = true;
            }
        }
        if let Some((_, placed)) = self.placed.as_mut() {
            placed.release(job);
        }
    }

    /// The processors a running job holds (by the placement, if one was set).
    pub(crate) fn allocation(&self, job: JobId) -> Option<&[u32]> {
        match &self.placed {
            Some((_, placed)) => placed.allocation(job),
            None => self.held.get(&job).map(Vec::as_slice),
        }
    }

    /// EASY's shadow under FC: release the running jobs in expected-end order (`releases`:
    /// (expected end, job)) until a run of `n` consecutive processors is free; that release's
    /// time is the shadow time and the first such run is the block reserved for the job.
    pub(crate) fn contiguous_shadow(
        &self,
        releases: impl Iterator<Item = (Time, JobId)>,
        n: u32,
    ) -> (Time, Range<u32>) {
        let mut free = self.free.clone();
        for (end, job) in releases {
            for &p in self.held.get(&job).map(Vec::as_slice).unwrap_or_default() {
                free[p as usize] = true;
            }
            if let Some(run) = Self::first_run(&free, n, None) {
                return (end, run);
            }
        }
        // Unreachable: with every job released the whole machine is free.
        (Time::MAX, 0..0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(selection: Selection) -> NodeMap {
        NodeMap::new(
            8,
            Nodes {
                processors_per_node: 4,
                selection,
            },
        )
    }

    #[test]
    fn first_fit_takes_the_lowest_free_processors_and_first_continuous_a_run() {
        let mut ff = map(Selection::FirstFit);
        ff.allocate(JobId(0), 2, None); // 0, 1
        ff.allocate(JobId(1), 2, None); // 2, 3
        ff.release(JobId(0));
        ff.allocate(JobId(2), 3, None);
        assert_eq!(ff.allocation(JobId(2)), Some(&[0, 1, 4][..]));

        let mut fc = map(Selection::FirstContinuous);
        fc.allocate(JobId(0), 2, None);
        fc.allocate(JobId(1), 2, None);
        fc.release(JobId(0));
        // 0-1 free, 2-3 held, 4-7 free: three in a row only at 4.
        assert!(fc.fits(3, 6));
        fc.allocate(JobId(2), 3, None);
        assert_eq!(fc.allocation(JobId(2)), Some(&[4, 5, 6][..]));
        // 0, 1 and 7 are free, but not three in a row.
        assert!(!fc.fits(3, 3));
        assert!(map(Selection::FirstFit).fits(3, 3));
        // Away from 4..8, a 2-run is found at 0.
        fc.release(JobId(2));
        fc.allocate(JobId(3), 2, Some(&(4..8)));
        assert_eq!(fc.allocation(JobId(3)), Some(&[0, 1][..]));
    }

    #[test]
    fn first_fit_spreads_where_first_continuous_packs() {
        // Three nodes of four (0-3, 4-7, 8-11). Jobs 0 (0-1), 1 (2-3) and 2 (4-7) start; 0 and
        // 2 end: 0, 1 and 4-11 are free. A four-process job: FF takes 0, 1, 4, 5 (two nodes, two
        // processes on each, beside job 1 on node 0); FC takes 4-7 (node 1 alone).
        for (selection, expected) in [
            (Selection::FirstFit, [0, 1, 4, 5]),
            (Selection::FirstContinuous, [4, 5, 6, 7]),
        ] {
            let mut m = NodeMap::new(
                12,
                Nodes {
                    processors_per_node: 4,
                    selection,
                },
            );
            m.allocate(JobId(0), 2, None);
            m.allocate(JobId(1), 2, None);
            m.allocate(JobId(2), 4, None);
            m.release(JobId(0));
            m.release(JobId(2));
            assert!(m.fits(4, 10));
            m.allocate(JobId(3), 4, None);
            assert_eq!(m.allocation(JobId(3)), Some(&expected[..]), "{selection:?}");
        }
    }

    #[test]
    fn a_placement_reports_other_processors_and_leaves_the_decisions_alone() {
        // FC decides, FF places. Jobs 0 (0-1), 1 (2-3), 2 (4-7) start; 0 and 2 end. A
        // three-processor job fits FC's run 4-6, and is reported on FF's 0, 1, 4.
        let mut m = NodeMap::new(
            12,
            Nodes {
                processors_per_node: 4,
                selection: Selection::FirstContinuous,
            },
        );
        assert!(m.place_by(Selection::FirstFit));
        assert_eq!(m.placement(), Selection::FirstFit);
        m.allocate(JobId(0), 2, None);
        m.allocate(JobId(1), 2, None);
        m.allocate(JobId(2), 4, None);
        m.release(JobId(0));
        m.release(JobId(2));
        m.allocate(JobId(3), 3, None);
        assert_eq!(m.allocation(JobId(3)), Some(&[0, 1, 4][..]));
        // The decisions still see FC's map: 0, 1 and 7-11 free, so a run of 6 does not fit
        // (FF's map has 5-11 free, a run of 7) but one of 5 does, at 7.
        assert!(!m.fits(6, 7));
        assert!(m.fits(5, 7));
        // The paper's FC placement by FF decisions is refused: a run may not exist.
        let mut ff = map(Selection::FirstFit);
        assert!(!ff.place_by(Selection::FirstContinuous));
        assert!(ff.place_by(Selection::FirstFit));
    }

    #[test]
    fn the_contiguous_shadow_waits_for_a_run() {
        let mut fc = map(Selection::FirstContinuous);
        for (job, n) in [(0, 2), (1, 2), (2, 2), (3, 2)] {
            fc.allocate(JobId(job), n, None);
        }
        // Releasing jobs 0 (at 10) and 2 (at 20) frees 4 processors, but not in a row; job 1
        // (at 30) makes 0-5 a run of six.
        let releases = [
            (10, JobId(0)),
            (20, JobId(2)),
            (30, JobId(1)),
            (40, JobId(3)),
        ];
        let (t, block) = fc.contiguous_shadow(releases.into_iter(), 4);
        assert_eq!((t, block), (30, 0..4));
    }
}
