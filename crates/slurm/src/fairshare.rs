//! Slurm's association tree, its usage and its two fair-share algorithms.
//!
//! Ported from Slurm 26.05.3 (tag `slurm-26-05-3-1`): usage charging and decay from
//! `src/plugins/priority/multifactor/priority_multifactor.c` (`_apply_new_usage`,
//! `_apply_decay`, `_init_decay_vars`), Fair Tree from
//! `src/plugins/priority/multifactor/fair_tree.c` (`_calc_assoc_fs`, `_cmp_level_fs`,
//! `_calc_tree_fs`), classic fair-share from `src/common/assoc_mgr.c`
//! (`_normalize_assoc_shares_traditional`, `set_assoc_usage_norm`, `_set_usage_efctv`,
//! `_set_assoc_fs_factor`) and `priority_multifactor.c` (`_depth_oblivious_set_usage_efctv`).
//! Floating-point operations follow Slurm's order, because Fair Tree compares level values for
//! exact equality (Slurm's test24.4 has two users whose values are equal in rationals and not
//! in floating point, and ranks them apart).

/// An association's shares (`sacctmgr ... fairshare=`): a number, or `parent` (the association
/// competes as if it were its parent account's).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shares {
    /// Raw shares (may be 0: the association then always ranks last).
    Raw(u32),
    /// `FairShare=parent`.
    Parent,
}

/// Slurm's `NO_VAL` as a level fair-share value: what a `parent` account gets (it sorts first
/// and has no children of its own, since they are re-parented).
const NO_VAL: f64 = 4_294_967_294.0;

#[derive(Debug, Clone)]
struct Node {
    name: String,
    /// The direct parent (`None` for root).
    parent: Option<usize>,
    shares: Shares,
    user: bool,
}

/// What `sshare -l` shows of one association, after a fair-share computation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ShareRow {
    /// NormShares: Fair Tree: the association's shares over its level's; classic: the product
    /// of those ratios down the tree. A `parent` association shows its fair-share parent's.
    pub norm_shares: f64,
    /// RawUsage: decayed billing-seconds (CPU-seconds unless billing weights are given).
    pub raw_usage: f64,
    /// NormUsage: raw usage over root's (at most 1).
    pub norm_usage: f64,
    /// EffectvUsage: Fair Tree: raw usage over its fair-share parent's; classic: the
    /// effective usage `U_E`.
    pub effective_usage: f64,
    /// LevelFS (Fair Tree only): shares over usage at its level; infinite without usage;
    /// `None` for root and `parent` associations.
    pub level_fs: Option<f64>,
    /// FairShare: the fair-share factor in [0, 1], users only.
    pub fair_share: Option<f64>,
}

/// The association tree: root, accounts and users, with their shares and usage. Index 0 is
/// root.
#[derive(Debug, Clone)]
pub struct AssocTree {
    nodes: Vec<Node>,
    /// The fair-share children of each association (children lists built on
    /// `fs_assoc_ptr`: the children of a `parent` account are listed under its nearest
    /// non-parent ancestor, beside it), in the order they were added, and the sum of each
    /// list's raw shares: they change only when an association is added, so they are kept
    /// rather than recomputed at every calculation.
    children: Vec<Vec<usize>>,
    level_sums: Vec<u64>,
    /// Each association's decayed billing-seconds, charged to it and its descendants (apart
    /// from the nodes: the decay at every calculation walks only these).
    usage: Vec<f64>,
    /// Each association's fair-share children in the order Fair Tree ranked them last
    /// ([`AssocTree::fair_tree`]): usage moves little between two calculations, so the next
    /// ranking starts from it and the sort has little to move (the same order as a stable
    /// sort of the children: the order is total, value, users first, index).
    ranked: std::cell::RefCell<Vec<Vec<usize>>>,
    /// Each association's fair-share parent (root for root), and the number of user
    /// associations: kept as associations are added.
    fs_parents: Vec<usize>,
    user_count: usize,
    /// Each association's normalised shares at its level (Fair Tree's `S`), computed at the
    /// first calculation after an association is added (empty until then).
    norm_shares: std::cell::RefCell<Vec<f64>>,
}

impl Default for AssocTree {
    fn default() -> Self {
        AssocTree::new()
    }
}

/// The per-second usage decay factor for a half-life in seconds, as Slurm computes it
/// (`_init_decay_vars`): `1 - 0.693 / half_life`, a first-order approximation (usage falls to
/// 0.50007, not 0.5, in one half-life); 1 (no decay) for a half-life of 0.
pub fn decay_per_second(half_life: f64) -> f64 {
    if half_life > 0.0 {
        1.0 - 0.693 / half_life
    } else {
        1.0
    }
}

impl AssocTree {
    /// Root's index.
    pub const ROOT: usize = 0;

    /// A tree holding only root.
    pub fn new() -> AssocTree {
        AssocTree {
            nodes: vec![Node {
                name: "root".to_string(),
                parent: None,
                shares: Shares::Raw(1),
                user: false,
            }],
            children: vec![Vec::new()],
            level_sums: vec![0],
            usage: vec![0.0],
            ranked: Default::default(),
            fs_parents: vec![Self::ROOT],
            user_count: 0,
            norm_shares: Default::default(),
        }
    }

    /// Adds an account under `parent` (an account's index) and returns its index.
    pub fn add_account(&mut self, parent: usize, name: &str, shares: Shares) -> usize {
        self.add(parent, name, shares, false)
    }

    /// Adds a user association under `parent` (an account's index) and returns its index.
    pub fn add_user(&mut self, parent: usize, name: &str, shares: Shares) -> usize {
        self.add(parent, name, shares, true)
    }

    fn add(&mut self, parent: usize, name: &str, shares: Shares, user: bool) -> usize {
        let parent = parent.min(self.nodes.len() - 1);
        self.nodes.push(Node {
            name: name.to_string(),
            parent: Some(parent),
            shares,
            user,
        });
        self.usage.push(0.0);
        // An association's fair-share parent is fixed when it is added (its ancestors are),
        // and it has no children yet: it joins the end of its fair-share parent's list (index
        // order, as `fs_children` builds them) and that level's sum.
        let index = self.nodes.len() - 1;
        let fs_parent = self.fs_parent(index).unwrap_or(Self::ROOT);
        self.children.push(Vec::new());
        self.children[fs_parent].push(index);
        self.level_sums.push(0);
        self.level_sums[fs_parent] += match shares {
            Shares::Raw(s) => u64::from(s),
            Shares::Parent => 0,
        };
        // the last ranking stays a starting order (any order sorts to the same)
        let ranked = self.ranked.get_mut();
        if ranked.len() == index {
            ranked.push(Vec::new());
            if !ranked[fs_parent].is_empty() {
                ranked[fs_parent].push(index);
            }
        }
        self.fs_parents.push(fs_parent);
        self.user_count += usize::from(user);
        self.norm_shares.get_mut().clear();
        self.nodes.len() - 1
    }

    /// How many associations, root included.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree holds root only.
    pub fn is_empty(&self) -> bool {
        self.nodes.len() == 1
    }

    /// The association's name.
    pub fn name(&self, index: usize) -> &str {
        self.nodes.get(index).map_or("", |n| n.name.as_str())
    }

    /// Whether the association is a user's.
    pub fn is_user(&self, index: usize) -> bool {
        self.nodes.get(index).is_some_and(|n| n.user)
    }

    /// The association's direct parent (`None` for root).
    pub fn parent(&self, index: usize) -> Option<usize> {
        self.nodes.get(index).and_then(|n| n.parent)
    }

    /// The association's shares.
    pub fn shares(&self, index: usize) -> Shares {
        self.nodes.get(index).map_or(Shares::Raw(0), |n| n.shares)
    }

    /// The association's decayed usage, billing-seconds.
    pub fn usage(&self, index: usize) -> f64 {
        self.usage.get(index).copied().unwrap_or(0.0)
    }

    /// The number of user associations, active or not (Fair Tree's N).
    pub fn users(&self) -> usize {
        self.nodes.iter().filter(|n| n.user).count()
    }

    /// Adds `amount` billing-seconds to the association and every ancestor up to root
    /// (`_apply_new_usage`).
    pub fn charge(&mut self, index: usize, amount: f64) {
        let mut at = Some(index.min(self.nodes.len() - 1));
        while let Some(i) = at {
            self.usage[i] += amount;
            at = self.nodes[i].parent;
        }
    }

    /// Multiplies every association's usage by `factor` (`_apply_decay`, with
    /// `factor = decay_per_second^elapsed`).
    pub fn decay(&mut self, factor: f64) {
        for usage in &mut self.usage {
            *usage *= factor;
        }
    }

    /// Zeroes every association's usage (`PriorityUsageResetPeriod`).
    pub fn reset_usage(&mut self) {
        self.usage.fill(0.0);
    }

    /// The fair-share parent (`fs_assoc_ptr`): the nearest ancestor whose shares are not
    /// `parent` (root counts as such).
    fn fs_parent(&self, index: usize) -> Option<usize> {
        let mut at = self.nodes[index].parent;
        while let Some(p) = at {
            if p == Self::ROOT || self.nodes[p].shares != Shares::Parent {
                return Some(p);
            }
            at = self.nodes[p].parent;
        }
        None
    }

    /// `level_shares` of an association: the raw shares of its fair-share siblings (`parent`
    /// ones not counted), summed; 0 for root.
    fn level(&self, index: usize) -> u64 {
        if index == Self::ROOT {
            0
        } else {
            self.level_sums[self.fs_parents[index]]
        }
    }

    fn raw_shares(&self, index: usize) -> f64 {
        match self.nodes[index].shares {
            Shares::Raw(s) => f64::from(s),
            Shares::Parent => 0.0,
        }
    }

    fn norm_usage(&self, index: usize) -> f64 {
        let root = self.usage[Self::ROOT];
        if root > 0.0 {
            (self.usage[index] / root).min(1.0)
        } else {
            0.0
        }
    }

    /// Fair Tree (Slurm's default since 19.05; `fair_tree.c`): at each level the siblings are
    /// ordered by level fair-share `LF = S / U` (S their shares over the level's, U their usage
    /// over their fair-share parent's; infinite without usage, 0 without shares), users before
    /// accounts at equal LF, and walked depth-first; users are ranked in that order over every
    /// user association (active or not) and get `rank / N`. Tied users share a rank; an
    /// account tied with its previous sibling passes the tie to its first child (Slurm's
    /// `_count_tied_accounts` never merges accounts, and neither does this port).
    pub fn fair_tree(&self) -> Vec<ShareRow> {
        let mut rows = vec![
            ShareRow {
                norm_shares: 0.0,
                raw_usage: 0.0,
                norm_usage: 0.0,
                effective_usage: 0.0,
                level_fs: None,
                fair_share: None,
            };
            self.nodes.len()
        ];
        rows[Self::ROOT].effective_usage = 1.0;
        rows[Self::ROOT].raw_usage = self.usage[Self::ROOT];
        let mut level_fs = Vec::new();
        self.level_values(&mut level_fs, |i, s, u, lf| {
            rows[i] = ShareRow {
                norm_shares: s,
                raw_usage: self.usage[i],
                norm_usage: self.norm_usage(i),
                effective_usage: u,
                level_fs: (self.nodes[i].shares != Shares::Parent).then_some(lf),
                fair_share: None,
            };
        });
        self.rank(&level_fs, |i, factor| rows[i].fair_share = Some(factor));
        rows
    }

    /// [`AssocTree::fair_tree`]'s fair-share factors alone, by association (0 for root and the
    /// accounts), into `factors`; `level_fs` is scratch space. What a priority calculation
    /// needs, without the rest of sshare's columns.
    pub fn fair_tree_factors(&self, factors: &mut Vec<f64>, level_fs: &mut Vec<f64>) {
        self.level_values(level_fs, |_, _, _, _| {});
        factors.clear();
        factors.resize(self.nodes.len(), 0.0);
        self.rank(level_fs, |i, factor| factors[i] = factor);
    }

    /// Fair Tree's level values: for every association but root, its normalised shares `S`
    /// (a `parent` association shows its fair-share parent's, as
    /// `_normalize_assoc_shares_fair_tree` does), its usage `U` over its fair-share parent's,
    /// and `LF = S / U` (infinite without usage, 0 without shares; [`NO_VAL`] for a `parent`
    /// account, infinite for a `parent` user), handed to `row`; the LF values into `level_fs`.
    fn level_values(&self, level_fs: &mut Vec<f64>, mut row: impl FnMut(usize, f64, f64, f64)) {
        // Every value but root's is written below.
        level_fs.resize(self.nodes.len(), 0.0);
        if let Some(root) = level_fs.first_mut() {
            *root = 0.0;
        }
        let mut norm_shares = self.norm_shares.borrow_mut();
        if norm_shares.len() != self.nodes.len() {
            *norm_shares = (0..self.nodes.len())
                .map(|i| {
                    // `_normalize_assoc_shares_fair_tree`: a `parent` association shows its
                    // fair-share parent's shares
                    let of = if self.nodes[i].shares == Shares::Parent {
                        self.fs_parents[i]
                    } else {
                        i
                    };
                    if self.level(of) > 0 {
                        self.raw_shares(of) / self.level(of) as f64
                    } else {
                        0.0
                    }
                })
                .collect();
        }
        for (i, value) in level_fs.iter_mut().enumerate().skip(1) {
            let node = &self.nodes[i];
            let fs_parent = self.fs_parents[i];
            let s = norm_shares[i];
            let parent_usage = self.usage[fs_parent];
            let u = if parent_usage != 0.0 {
                self.usage[i] / parent_usage
            } else {
                0.0
            };
            let lf = match node.shares {
                Shares::Parent if node.user => f64::INFINITY,
                Shares::Parent => NO_VAL,
                Shares::Raw(_) if s == 0.0 => 0.0,
                Shares::Raw(_) => s / u, // U == 0: +inf, as Slurm intends
            };
            *value = lf;
            row(i, s, u, lf);
        }
    }

    /// Ranks the users by the level values, depth-first from root, handing each user its
    /// factor `rank / N` (N: every user association).
    fn rank(&self, level_fs: &[f64], mut factor: impl FnMut(usize, f64)) {
        let n = self.user_count;
        let mut ranking = Ranking {
            rank: n,
            remaining: n,
            users: n as f64,
        };
        self.rank_level(Self::ROOT, level_fs, false, &mut ranking, &mut factor);
    }

    /// `_calc_tree_fs`: one level of siblings (`parent`'s fair-share children), sorted and
    /// walked.
    fn rank_level(
        &self,
        parent: usize,
        level_fs: &[f64],
        account_tied: bool,
        ranking: &mut Ranking,
        factor: &mut impl FnMut(usize, f64),
    ) {
        let children = &self.children;
        let siblings = &children[parent];
        let mut sorted = {
            let mut ranked = self.ranked.borrow_mut();
            if ranked.len() != children.len() {
                *ranked = children.to_vec();
            }
            std::mem::take(&mut ranked[parent])
        };
        if sorted.len() != siblings.len() {
            sorted.clone_from(siblings);
        }
        // `_cmp_level_fs`: level value descending, users first at equal values; otherwise the
        // children-list order (a stable sort; the list is in index order, so the index breaks
        // the ties and the order is total, and any starting order sorts to the same). Sorted
        // from the last ranking, which mostly still holds: an insertion sort while it moves
        // little (a few times the level's size), else the library's merge sort from where the
        // insertion sort left it.
        let before = |a: usize, b: usize| {
            level_fs[b]
                .total_cmp(&level_fs[a])
                .then_with(|| self.nodes[b].user.cmp(&self.nodes[a].user))
                .then_with(|| a.cmp(&b))
        };
        let mut budget = 4 * sorted.len();
        let mut finished = true;
        for i in 1..sorted.len() {
            let node = sorted[i];
            let mut j = i;
            while j > 0 && before(node, sorted[j - 1]).is_lt() {
                sorted[j] = sorted[j - 1];
                j -= 1;
            }
            sorted[j] = node;
            budget = budget.saturating_sub(i - j);
            if budget == 0 {
                finished = false;
                break;
            }
        }
        if !finished {
            sorted.sort_by(|&a, &b| before(a, b));
        }
        let mut previous = NO_VAL;
        for (i, &assoc) in sorted.iter().enumerate() {
            let lf = level_fs[assoc];
            let tied = if i == 0 && account_tied {
                true
            } else {
                previous == lf
            };
            if self.nodes[assoc].user {
                if !tied {
                    ranking.rank = ranking.remaining;
                }
                factor(assoc, ranking.rank as f64 / ranking.users);
                ranking.remaining = ranking.remaining.saturating_sub(1);
            } else {
                self.rank_level(assoc, level_fs, tied, ranking, factor);
            }
            previous = lf;
        }
        self.ranked.borrow_mut()[parent] = sorted;
    }

    /// Classic fair-share (`PriorityFlags=NO_FAIR_TREE`): normalised shares
    /// `S = Π S_self / S_level` down the tree, normalised usage `U_N = U / U_root`, effective
    /// usage `U_E = U_N + (U_E,parent − U_N) · S_raw / S_level` (`U_N` at the first tier) and
    /// the factor `2^(−U_E / S / damping)` (`damping`: FairShareDampeningFactor). With
    /// `depth_oblivious` (`PriorityFlags=DEPTH_OBLIVIOUS`) the effective usage is
    /// `R_p · r_l^k · S` instead (`_depth_oblivious_set_usage_efctv`).
    pub fn classic(&self, damping: f64, depth_oblivious: bool) -> Vec<ShareRow> {
        let children = &self.children;
        let count = self.nodes.len();
        let mut norm_shares = vec![0.0f64; count];
        let mut effective = vec![0.0f64; count];
        effective[Self::ROOT] = 1.0;
        // `_normalize_assoc_shares_traditional`, bottom-up product (Slurm's order)
        for (i, share) in norm_shares.iter_mut().enumerate().skip(1) {
            if self.nodes[i].shares == Shares::Parent {
                continue; // set below, from its fair-share parent
            }
            let mut s = 1.0f64;
            let mut at = i;
            while let Some(parent) = self.nodes[at].parent {
                if self.nodes[at].shares != Shares::Parent {
                    s = if self.level(at) > 0 {
                        s * self.raw_shares(at) / self.level(at) as f64
                    } else {
                        0.0
                    };
                }
                at = parent;
            }
            *share = s;
        }
        // parents come before their children in index order (an association is added under
        // an existing one), so one pass in index order is top-down
        for i in 1..count {
            let fs_parent = self.fs_parent(i).unwrap_or(Self::ROOT);
            if self.nodes[i].shares == Shares::Parent {
                norm_shares[i] = norm_shares[fs_parent];
            }
            let u_n = self.norm_usage(i);
            effective[i] = if fs_parent == Self::ROOT {
                u_n
            } else if self.nodes[i].shares == Shares::Parent {
                effective[fs_parent]
            } else if depth_oblivious {
                let (s, s_p, ue_p) = (norm_shares[i], norm_shares[fs_parent], effective[fs_parent]);
                if s != 0.0 && s_p != 0.0 && ue_p != 0.0 && u_n != 0.0 {
                    let r_p = ue_p / s_p;
                    let siblings: f64 = children[fs_parent]
                        .iter()
                        .filter(|&&c| self.nodes[c].shares != Shares::Parent)
                        .map(|&c| self.norm_usage(c))
                        .sum();
                    let r_s = siblings / s_p;
                    let r_l = (u_n / s) / r_s;
                    let k = if r_p == 0.0 || r_l == 0.0 || r_p.ln() * r_l.ln() >= 0.0 {
                        1.0
                    } else {
                        1.0 / (1.0 + (5.0 * r_p.ln()).powi(2))
                    };
                    r_p * r_l.powf(k) * s
                } else {
                    u_n
                }
            } else if self.level(i) == 0 {
                effective[fs_parent]
            } else {
                u_n + (effective[fs_parent] - u_n) * (self.raw_shares(i) / self.level(i) as f64)
            };
        }
        (0..count)
            .map(|i| {
                let node = &self.nodes[i];
                let (s, ue) = (norm_shares[i], effective[i]);
                let factor = if s <= 0.0 {
                    0.0
                } else {
                    2f64.powf(-((ue / s) / damping))
                };
                ShareRow {
                    norm_shares: s,
                    raw_usage: self.usage[i],
                    norm_usage: if i == Self::ROOT {
                        0.0
                    } else {
                        self.norm_usage(i)
                    },
                    effective_usage: ue,
                    level_fs: None,
                    fair_share: node.user.then_some(factor),
                }
            })
            .collect()
    }
}

/// Fair Tree's ranking state: the rank last given, the ranks left, N.
struct Ranking {
    rank: usize,
    remaining: usize,
    users: f64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    enum Spec {
        Account(&'static str, Shares, Vec<Spec>),
        User(&'static str, Shares, f64),
    }
    use Shares::{Parent, Raw};
    use Spec::{Account, User};

    fn build(specs: Vec<Spec>) -> (AssocTree, HashMap<&'static str, usize>) {
        fn add(
            tree: &mut AssocTree,
            names: &mut HashMap<&'static str, usize>,
            parent: usize,
            spec: Spec,
        ) {
            match spec {
                Account(name, shares, children) => {
                    let i = tree.add_account(parent, name, shares);
                    names.insert(name, i);
                    for c in children {
                        add(tree, names, i, c);
                    }
                }
                User(name, shares, usage) => {
                    let i = tree.add_user(parent, name, shares);
                    names.insert(name, i);
                    tree.charge(i, usage);
                }
            }
        }
        let mut tree = AssocTree::new();
        let mut names = HashMap::new();
        for spec in specs {
            add(&mut tree, &mut names, AssocTree::ROOT, spec);
        }
        (tree, names)
    }

    /// Slurm's own Fair Tree test (`testsuite/expect/test24.4`, master 284c3b95f0): 21 user
    /// associations with `parent` shares, zero shares, zero usage and ties; every FairShare
    /// and LevelFS value it expects.
    #[test]
    fn fair_tree_reproduces_slurm_test24_4() {
        let (tree, names) = build(vec![
            Account(
                "aA",
                Raw(40),
                vec![
                    Account("aAA", Raw(30), vec![User("uAA1", Raw(1), 20.0)]),
                    Account(
                        "aAB",
                        Raw(10),
                        vec![User("uAB1", Raw(1), 25.0), User("uAB2", Raw(1), 0.0)],
                    ),
                ],
            ),
            Account(
                "aB",
                Raw(60),
                vec![
                    Account("aBA", Raw(25), vec![User("uBA1", Raw(1), 25.0)]),
                    Account("aBB", Raw(35), vec![User("uBB1", Raw(1), 0.0)]),
                ],
            ),
            Account("aC", Raw(0), vec![User("uC1", Raw(0), 30.0)]),
            Account(
                "aD",
                Raw(50),
                vec![
                    Account(
                        "aDA",
                        Parent,
                        vec![
                            User("uDA1", Parent, 10.0),
                            User("uDA2", Raw(30), 10.0),
                            User("uDA3", Raw(50), 25.0),
                        ],
                    ),
                    User("uD1", Parent, 20.0),
                    User("uD2", Raw(40), 20.0),
                    User("uD3", Raw(50), 25.0),
                ],
            ),
            Account(
                "aE",
                Raw(10),
                vec![User("aE1", Raw(10), 0.0), User("aE2", Raw(10), 0.0)],
            ),
            Account(
                "aF",
                Raw(20),
                vec![User("uF1", Raw(10), 0.0), User("uF2", Raw(20), 0.0)],
            ),
            Account(
                "aG",
                Raw(8),
                vec![
                    User("uG1", Raw(10), 10.0),
                    Account(
                        "aGA",
                        Raw(10),
                        vec![User("uGA1", Raw(20), 4.0), User("uGA2", Raw(20), 6.0)],
                    ),
                ],
            ),
            User("u1", Raw(10), 0.0),
            User("u2", Raw(10), 10.0),
        ]);
        assert_eq!(tree.users(), 21);
        assert_eq!(tree.usage(AssocTree::ROOT), 240.0);
        let rows = tree.fair_tree();
        // (name, FairShare, LevelFS) from test24.4's expected sshare -l rows
        let expected: &[(&str, f64, Option<f64>)] = &[
            ("u1", 1.000000, Some(f64::INFINITY)),
            ("u2", 0.666667, Some(1.153846)),
            ("uAA1", 0.619048, Some(1.000000)),
            ("uAB1", 0.523810, Some(0.500000)),
            ("uAB2", 0.571429, Some(f64::INFINITY)),
            ("uBA1", 0.714286, Some(1.000000)),
            ("uBB1", 0.761905, Some(f64::INFINITY)),
            ("uC1", 0.047619, Some(0.000000)),
            ("uD1", 0.476190, None),
            ("uD2", 0.238095, Some(1.294118)),
            ("uD3", 0.333333, Some(1.294118)),
            ("uDA1", 0.476190, None),
            ("uDA2", 0.380952, Some(1.941176)),
            ("uDA3", 0.333333, Some(1.294118)),
            ("aE1", 1.000000, Some(f64::INFINITY)),
            ("aE2", 1.000000, Some(f64::INFINITY)),
            ("uF1", 1.000000, Some(f64::INFINITY)),
            ("uF2", 1.000000, Some(f64::INFINITY)),
            ("uG1", 0.190476, Some(1.000000)),
            ("uGA1", 0.190476, Some(1.250000)),
            ("uGA2", 0.095238, Some(0.833333)),
        ];
        for &(name, fair_share, level_fs) in expected {
            let row = rows[names[name]];
            let got = row.fair_share.unwrap_or(f64::NAN);
            assert!(
                (got - fair_share).abs() < 5e-7,
                "{name}: FairShare {got}, Slurm {fair_share}"
            );
            match (row.level_fs, level_fs) {
                (None, None) => {}
                (Some(a), Some(b)) if a.is_infinite() && b.is_infinite() => {}
                (Some(a), Some(b)) => {
                    assert!((a - b).abs() < 5e-7, "{name}: LevelFS {a}, Slurm {b}")
                }
                (a, b) => panic!("{name}: LevelFS {a:?}, Slurm {b:?}"),
            }
        }
        // account rows too: NormShares, EffectvUsage and LevelFS
        for (name, norm_shares, effective, level_fs) in [
            ("aA", 0.192308, 0.187500, 1.025641),
            ("aAA", 0.750000, 0.444444, 1.687500),
            ("aD", 0.240385, 0.458333, 0.524476),
            ("aG", 0.038462, 0.083333, 0.461538),
        ] {
            let row = rows[names[name]];
            assert!(
                (row.norm_shares - norm_shares).abs() < 5e-7,
                "{name} NormShares"
            );
            assert!(
                (row.effective_usage - effective).abs() < 5e-7,
                "{name} EffectvUsage"
            );
            assert!(
                (row.level_fs.unwrap_or(f64::NAN) - level_fs).abs() < 5e-7,
                "{name} LevelFS"
            );
        }
    }

    fn classic_doc_tree(filler: bool) -> (AssocTree, HashMap<&'static str, usize>) {
        let mut specs = vec![
            Account(
                "A",
                Raw(40),
                vec![
                    Account("B", Raw(30), vec![User("user1", Raw(1), 20.0)]),
                    Account(
                        "C",
                        Raw(10),
                        vec![User("user2", Raw(1), 25.0), User("user3", Raw(1), 0.0)],
                    ),
                ],
            ),
            Account(
                "D",
                Raw(60),
                vec![
                    Account("E", Raw(25), vec![User("user4", Raw(1), 25.0)]),
                    Account("F", Raw(35), vec![User("user5", Raw(1), 0.0)]),
                ],
            ),
        ];
        if filler {
            specs.push(Account("Z", Raw(0), vec![User("zuser", Raw(1), 30.0)]));
        }
        build(specs)
    }

    /// The worked example of Slurm's classic fair-share documentation
    /// (`doc/html/classic_fair_share.shtml`): user factors 0.408479, 0.022097, 0.125, 0.5 and
    /// 0.749154. The page's normalised usages (0.2, 0.25, 0.25) leave 0.3 of root's usage
    /// unaccounted for, so it sits in a zero-share account (which changes no share).
    #[test]
    fn classic_reproduces_the_documentation_example() {
        let (tree, names) = classic_doc_tree(true);
        let rows = tree.classic(1.0, false);
        for (name, factor) in [
            ("user1", 0.408479),
            ("user2", 0.022097),
            ("user3", 0.125000),
            ("user4", 0.500000),
            ("user5", 0.749154),
        ] {
            let got = rows[names[name]].fair_share.unwrap_or(f64::NAN);
            assert!(
                (got - factor).abs() < 5e-7,
                "{name}: {got}, the docs {factor}"
            );
        }
        for (name, s, ue) in [
            ("B", 0.3, 0.3875),
            ("user2", 0.05, 0.275),
            ("F", 0.35, 0.145833),
        ] {
            let row = rows[names[name]];
            assert!((row.norm_shares - s).abs() < 5e-7, "{name} S");
            assert!((row.effective_usage - ue).abs() < 5e-6, "{name} UE");
        }
        // without the filler, root's usage is 70 and every factor moves (what Slurm computes)
        let (tree, names) = classic_doc_tree(false);
        let rows = tree.classic(1.0, false);
        for (name, factor) in [
            ("user1", 0.278309),
            ("user2", 0.004313),
            ("user3", 0.051271),
            ("user4", 0.371499),
            ("user5", 0.661935),
        ] {
            let got = rows[names[name]].fair_share.unwrap_or(f64::NAN);
            assert!(
                (got - factor).abs() < 5e-7,
                "{name}: {got}, expected {factor}"
            );
        }
    }

    /// Fair Tree on the documentation's tree: D's level value beats A's, user5 has no usage.
    #[test]
    fn fair_tree_on_the_documentation_tree() {
        let (tree, names) = classic_doc_tree(false);
        let rows = tree.fair_tree();
        for (name, factor) in [
            ("user5", 1.0),
            ("user4", 0.8),
            ("user1", 0.6),
            ("user3", 0.4),
            ("user2", 0.2),
        ] {
            assert_eq!(rows[names[name]].fair_share, Some(factor), "{name}");
        }
    }

    /// Usage charged to a user reaches every ancestor; one half-life of Slurm's per-second
    /// factor leaves 0.50007 of it (its first-order approximation of 2^-1).
    #[test]
    fn usage_climbs_the_tree_and_halves_in_one_half_life() {
        let (mut tree, names) = classic_doc_tree(false);
        assert_eq!(tree.usage(names["A"]), 45.0);
        assert_eq!(tree.usage(AssocTree::ROOT), 70.0);
        let half_life = 7.0 * 86400.0;
        let d = decay_per_second(half_life);
        tree.decay(d.powf(half_life));
        let left = tree.usage(AssocTree::ROOT) / 70.0;
        assert!((left - 0.5000733971527376).abs() < 1e-12, "{left}");
        assert_eq!(decay_per_second(0.0), 1.0);
        tree.reset_usage();
        assert_eq!(tree.usage(names["user1"]), 0.0);
    }

    proptest::proptest! {
        /// Fair Tree's ranking from the last calculation's order (the sorts from it) gives
        /// what a ranking from scratch gives, calculation after calculation: random trees
        /// (accounts with `parent` shares and ties of usage included), random charges and
        /// decays between calculations, users added between them.
        #[test]
        fn ranking_from_the_last_order_is_ranking_from_scratch(
            shape in proptest::collection::vec((0usize..8, 0u32..4, proptest::bool::ANY), 1..40),
            rounds in proptest::collection::vec(
                (proptest::collection::vec((0usize..64, 0u32..4), 0..12), 0u32..3, proptest::bool::ANY),
                1..8,
            ),
        ) {
            let mut tree = AssocTree::new();
            let mut accounts = vec![AssocTree::ROOT];
            let add = |tree: &mut AssocTree, accounts: &mut Vec<usize>, (parent, shares, user): (usize, u32, bool)| {
                let parent = accounts[parent % accounts.len()];
                let shares = if shares == 0 && !user { Shares::Parent } else { Shares::Raw(shares.max(1)) };
                if user {
                    tree.add_user(parent, "u", shares);
                } else {
                    let a = tree.add_account(parent, "a", shares);
                    accounts.push(a);
                }
            };
            for &node in &shape {
                add(&mut tree, &mut accounts, node);
            }
            for (charges, decay, grow) in rounds {
                for (node, amount) in charges {
                    let node = 1 + node % (tree.len() - 1).max(1);
                    if node < tree.len() {
                        tree.charge(node, f64::from(amount) * 10.0);
                    }
                }
                if decay > 0 {
                    tree.decay(1.0 / f64::from(decay + 1));
                }
                if grow {
                    add(&mut tree, &mut accounts, (shape.len(), 1, true));
                }
                let mut fresh = tree.clone();
                fresh.ranked.get_mut().clear();
                let (cached, scratch) = (tree.fair_tree(), fresh.fair_tree());
                proptest::prop_assert_eq!(&cached, &scratch);
                // the factors alone, as a priority calculation computes them
                let (mut factors, mut level_fs) = (Vec::new(), Vec::new());
                tree.fair_tree_factors(&mut factors, &mut level_fs);
                let from_rows: Vec<f64> =
                    cached.iter().map(|r| r.fair_share.unwrap_or(0.0)).collect();
                proptest::prop_assert_eq!(factors, from_rows);
            }
        }
    }

    /// Depth-oblivious fair-share gives factors within [0, 1] on the documentation's tree.
    #[test]
    fn depth_oblivious_stays_a_factor() {
        let (tree, _) = classic_doc_tree(true);
        for row in tree.classic(1.0, true) {
            if let Some(f) = row.fair_share {
                assert!((0.0..=1.0).contains(&f), "{f}");
            }
        }
    }
}
