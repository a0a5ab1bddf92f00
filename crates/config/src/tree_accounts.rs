//! The site's Slurm tree in the closed loop: population groups whose users are dealt over the
//! tree's accounts (a group's `accounts`), so that a tree `sitesim convert --assoc` wrote from
//! a site's sacctmgr dump runs with simulated users in its accounts.
//!
//! A tree account takes jobs by group id (`groups = [ID]`, the dump's account id in a converted
//! tree). A population group without `accounts` gives its jobs its position (1, 2, ...); a
//! group with `accounts` gives each of its users one account, and every job of that user
//! carries the account's first group id. The users are dealt in proportion to the accounts'
//! members (`[[scheduler.slurm.members]]`, the dump's user associations: an account of many
//! users gets many simulated users), evenly when the accounts have no members, by the largest
//! remainder, in the tree's order, users in order. The dump's members and `user_shares` name
//! the dump's users, who are not simulated: the simulated users' associations replace them
//! (there from the start, one share each, as a site's database has its users).

use std::sync::Arc;

use users::config::AccountsChoice;

use crate::error::{Result, invalid};
use crate::slurm::{AccountSection, MemberSection, SlurmSection};

/// How a site's users are dealt over its tree's accounts.
#[derive(Debug, Clone, PartialEq)]
pub struct AccountPlan {
    /// Per population group, in `[[groups]]` order: the group id each of its users' jobs carry
    /// (by the user's place in the group), or `None` for a group without `accounts`.
    pub job_groups: Vec<Option<Arc<[i64]>>>,
    /// The simulated users' associations (user ids from 1, the account's group id), replacing
    /// the tree's members.
    pub members: Vec<MemberSection>,
}

/// An account that can take users: its name, the group id its users' jobs carry (its first),
/// and its members in the tree.
struct Candidate<'t> {
    name: &'t str,
    group: i64,
    members: usize,
}

/// The plan for `groups` (name, users, `accounts`) under `slurm`, or `None` when no group has
/// `accounts`. `origin` names the population file in errors.
pub fn plan(
    groups: &[(&str, u32, Option<&AccountsChoice>)],
    slurm: Option<&SlurmSection>,
    origin: &str,
) -> Result<Option<AccountPlan>> {
    let Some(first) = groups.iter().position(|g| g.2.is_some()) else {
        return Ok(None);
    };
    let tree: &[AccountSection] = slurm.and_then(|s| s.tree.as_deref()).unwrap_or(&[]);
    let candidates: Vec<Candidate<'_>> = tree
        .iter()
        .filter_map(|account| {
            let ids = account.groups.as_deref().unwrap_or(&[]);
            let group = *ids.first()?;
            let members = slurm
                .and_then(|s| s.members.as_deref())
                .unwrap_or(&[])
                .iter()
                .filter(|m| ids.contains(&m.group))
                .count();
            Some(Candidate {
                name: &account.name,
                group,
                members,
            })
        })
        .collect();
    if candidates.is_empty() {
        return Err(invalid!(
            "{origin}: groups[{first}].accounts: the site has no Slurm tree account that takes a group ([[scheduler.slurm.tree]] with `groups = [ID]`, as the slurm-tree.toml of `sitesim convert --assoc` has): add the tree, or leave `accounts` out"
        ));
    }
    // A group without `accounts` gives its jobs its position: a tree account taking that id
    // would hold those users beside the dealt ones, unseen.
    for (index, (name, _, accounts)) in groups.iter().enumerate() {
        let position = index as i64 + 1;
        if accounts.is_none()
            && let Some(account) = tree
                .iter()
                .find(|a| a.groups.as_deref().unwrap_or(&[]).contains(&position))
        {
            return Err(invalid!(
                "{origin}: groups[{index}] ({name:?}) has no `accounts`, so its jobs carry its position {position}, which tree account {:?} takes as well (groups[{first}] is dealt over the tree's accounts, whose ids are the dump's): give groups[{index}] `accounts` too (\"tree\" or a list of account names)",
                account.name
            ));
        }
    }
    let mut job_groups = Vec::with_capacity(groups.len());
    let mut members = Vec::new();
    let mut next_user: i64 = 1;
    for (index, (_, users, accounts)) in groups.iter().enumerate() {
        let Some(accounts) = accounts else {
            job_groups.push(None);
            next_user += i64::from(*users);
            continue;
        };
        let key = format!("{origin}: groups[{index}].accounts");
        let chosen: Vec<&Candidate<'_>> = match accounts {
            AccountsChoice::Word(word) if word == "tree" => candidates.iter().collect(),
            AccountsChoice::Word(word) => {
                return Err(invalid!(
                    "{key} = {word:?}: expected \"tree\" (every account of the tree that takes a group) or a list of account names"
                ));
            }
            AccountsChoice::Names(names) => {
                if names.is_empty() {
                    return Err(invalid!(
                        "{key} = []: name at least one account, or give \"tree\""
                    ));
                }
                let mut chosen = Vec::with_capacity(names.len());
                for name in names {
                    let Some(found) = candidates.iter().find(|c| c.name == name) else {
                        let problem = if tree.iter().any(|a| &a.name == name) {
                            "takes no group (`groups = [ID]`), so no job can run under it"
                        } else {
                            "is no account of [[scheduler.slurm.tree]]"
                        };
                        return Err(invalid!("{key}: account {name:?} {problem}"));
                    };
                    if chosen.iter().any(|c: &&Candidate<'_>| c.name == found.name) {
                        return Err(invalid!("{key}: account {name:?} is named twice"));
                    }
                    chosen.push(found);
                }
                chosen
            }
        };
        let weights: Vec<u64> = if chosen.iter().any(|c| c.members > 0) {
            chosen.iter().map(|c| c.members as u64).collect()
        } else {
            vec![1; chosen.len()]
        };
        let counts = largest_remainder(u64::from(*users), &weights);
        let mut ids = Vec::with_capacity(*users as usize);
        for (candidate, &count) in chosen.iter().zip(&counts) {
            for _ in 0..count {
                ids.push(candidate.group);
                members.push(MemberSection {
                    user: next_user,
                    group: candidate.group,
                    shares: None,
                });
                next_user += 1;
            }
        }
        job_groups.push(Some(Arc::from(ids)));
    }
    Ok(Some(AccountPlan {
        job_groups,
        members,
    }))
}

/// `total` dealt in proportion to `weights` (not all zero), whole numbers summing to `total`:
/// each its quota's whole part, the rest one each to the largest remainders (the first of
/// equal ones first). Hamilton's method.
pub fn largest_remainder(total: u64, weights: &[u64]) -> Vec<u64> {
    let sum: u64 = weights.iter().sum::<u64>().max(1);
    let mut counts: Vec<u64> = weights
        .iter()
        .map(|&w| (u128::from(total) * u128::from(w) / u128::from(sum)) as u64)
        .collect();
    let dealt: u64 = counts.iter().sum();
    // Remainders as numerators over `sum`, exact.
    let mut order: Vec<(u64, usize)> = weights
        .iter()
        .enumerate()
        .map(|(i, &w)| {
            (
                (u128::from(total) * u128::from(w) % u128::from(sum)) as u64,
                i,
            )
        })
        .collect();
    order.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    for &(_, i) in order.iter().take((total - dealt) as usize) {
        counts[i] += 1;
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::slurm::SharesValue;

    fn account(name: &str, parent: Option<&str>, groups: &[i64]) -> AccountSection {
        AccountSection {
            name: name.into(),
            parent: parent.map(String::from),
            shares: Some(SharesValue::Count(1)),
            groups: (!groups.is_empty()).then(|| groups.to_vec()),
        }
    }

    fn member(user: i64, group: i64) -> MemberSection {
        MemberSection {
            user,
            group,
            shares: None,
        }
    }

    /// A converted tree: a parent `science` (id 1) over `physics` (2, three users) and
    /// `chemistry` (3, one user), and `admin` (4) that takes no group.
    fn slurm() -> SlurmSection {
        SlurmSection {
            tree: Some(vec![
                account("science", None, &[1]),
                account("physics", Some("science"), &[2]),
                account("chemistry", Some("science"), &[3]),
                account("admin", None, &[]),
            ]),
            members: Some(vec![
                member(10, 2),
                member(11, 2),
                member(12, 2),
                member(13, 3),
            ]),
            ..Default::default()
        }
    }

    #[test]
    fn users_are_dealt_in_proportion_to_the_accounts_members() {
        let tree = AccountsChoice::Word("tree".into());
        let plan = plan(&[("all", 8, Some(&tree))], Some(&slurm()), "site.toml")
            .unwrap()
            .unwrap();
        // weights 0 (science), 3 (physics), 1 (chemistry): 6 and 2 of 8
        assert_eq!(
            plan.job_groups[0].as_deref(),
            Some(&[2, 2, 2, 2, 2, 2, 3, 3][..])
        );
        assert_eq!(plan.members.len(), 8);
        assert_eq!(plan.members[0], member(1, 2));
        assert_eq!(plan.members[7], member(8, 3));
    }

    #[test]
    fn named_accounts_without_members_share_evenly_and_users_number_across_groups() {
        let tree = AccountsChoice::Word("tree".into());
        let named = AccountsChoice::Names(vec!["chemistry".into(), "science".into()]);
        let mut section = slurm();
        section.members = None;
        let plan = plan(
            &[("a", 3, Some(&tree)), ("b", 3, Some(&named))],
            Some(&section),
            "site.toml",
        )
        .unwrap()
        .unwrap();
        assert_eq!(plan.job_groups[0].as_deref(), Some(&[1, 2, 3][..]));
        // 3 over two accounts: the first gets the remainder
        assert_eq!(plan.job_groups[1].as_deref(), Some(&[3, 3, 1][..]));
        assert_eq!(plan.members[3], member(4, 3));
    }

    #[test]
    fn bad_mappings_are_named() {
        let tree = AccountsChoice::Word("tree".into());
        let error = |groups: &[(&str, u32, Option<&AccountsChoice>)], s: Option<&SlurmSection>| {
            plan(groups, s, "site.toml").unwrap_err().to_string()
        };
        let e = error(&[("a", 1, Some(&tree))], None);
        assert!(
            e.contains("groups[0].accounts") && e.contains("convert"),
            "{e}"
        );
        let e = error(
            &[("a", 1, Some(&AccountsChoice::Word("all".into())))],
            Some(&slurm()),
        );
        assert!(e.contains("expected \"tree\""), "{e}");
        let e = error(
            &[("a", 1, Some(&AccountsChoice::Names(vec!["admin".into()])))],
            Some(&slurm()),
        );
        assert!(e.contains("\"admin\" takes no group"), "{e}");
        let e = error(
            &[("a", 1, Some(&AccountsChoice::Names(vec!["biology".into()])))],
            Some(&slurm()),
        );
        assert!(e.contains("\"biology\" is no account"), "{e}");
        // group 2 unmapped: its jobs would carry id 2, physics's
        let e = error(&[("a", 1, Some(&tree)), ("b", 1, None)], Some(&slurm()));
        assert!(
            e.contains("groups[1] (\"b\")") && e.contains("\"physics\""),
            "{e}"
        );
        assert_eq!(plan(&[("a", 1, None)], Some(&slurm()), "s").unwrap(), None);
    }

    #[test]
    fn the_largest_remainder_deals_every_unit() {
        assert_eq!(largest_remainder(10, &[1, 1, 1]), vec![4, 3, 3]);
        assert_eq!(largest_remainder(2, &[5, 0, 3]), vec![1, 0, 1]);
        assert_eq!(largest_remainder(0, &[5, 3]), vec![0, 0]);
        assert_eq!(largest_remainder(7, &[2, 5]), vec![2, 5]);
    }
}
