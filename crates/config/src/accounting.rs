//! A Slurm site's accounting as the Slurm model's keys: the association tree of `sacctmgr show
//! assoc` ([`tree_section`]) and the QOS of `sacctmgr show qos` ([`qos_sections`]), and, for a
//! replay of the site's sacct dump, both read before the dump ([`SiteAccounting::read`]) with
//! the names its reader is to number first, so that the keys select the dump's jobs by number.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::{Result, invalid};
use crate::slurm::{AccountSection, MemberSection, QosSection, SharesValue};

/// The association tree as `[scheduler.slurm]` keys ([`TreeKeys`]).
pub fn tree_section(
    tree: &sacct::AssocTree,
    account_id: impl Fn(&str) -> Option<i64>,
    user_id: impl Fn(&str) -> Option<i64>,
) -> Result<TreeKeys> {
    let mut accounts: Vec<AccountSection> = Vec::new();
    let mut placed: BTreeSet<String> = ["root".to_string()].into();
    let mut left: Vec<&sacct::Association> = tree
        .associations
        .iter()
        .filter(|a| a.user.is_none() && a.account != "root")
        .collect();
    while !left.is_empty() {
        let before = left.len();
        let (ready, rest): (Vec<_>, Vec<_>) = left.into_iter().partition(|a| {
            a.parent
                .as_ref()
                .is_none_or(|p| placed.contains(p.as_str()))
        });
        for a in ready {
            placed.insert(a.account.clone());
            accounts.push(AccountSection {
                name: a.account.clone(),
                parent: a.parent.clone().filter(|p| p != "root"),
                shares: Some(match a.shares {
                    sacct::Shares::Count(n) => SharesValue::Count(n),
                    sacct::Shares::Parent => SharesValue::Word("parent".into()),
                }),
                groups: Some(account_id(&a.account).into_iter().collect()),
            });
        }
        left = rest;
        if left.len() == before {
            let orphans: Vec<&str> = left.iter().map(|a| a.account.as_str()).collect();
            return Err(invalid!(
                "the association tree's accounts {} have no parent in it",
                orphans.join(", ")
            ));
        }
    }
    let mut user_shares = BTreeMap::new();
    let mut members = Vec::new();
    for a in &tree.associations {
        let (Some(uid), Some(group)) =
            (a.user.as_deref().and_then(&user_id), account_id(&a.account))
        else {
            continue;
        };
        let shares = match a.shares {
            sacct::Shares::Count(n) => n,
            // a user's `parent` shares: the model gives a user a number
            sacct::Shares::Parent => 1,
        };
        user_shares.entry(uid.to_string()).or_insert(shares);
        if !members
            .iter()
            .any(|m: &MemberSection| m.user == uid && m.group == group)
        {
            members.push(MemberSection {
                user: uid,
                group,
                shares: Some(shares),
            });
        }
    }
    Ok(TreeKeys {
        tree: accounts,
        user_shares,
        members,
    })
}

/// An association tree as the Slurm model's keys ([`tree_section`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TreeKeys {
    /// An account section per account (parents first, whatever the file's order; root left
    /// out), each taking the jobs of the group the account's name has as its id.
    pub tree: Vec<AccountSection>,
    /// Each user's first association's shares, by user id (for a job of the user under an
    /// account where the tree has no association of it).
    pub user_shares: BTreeMap<String, u32>,
    /// Every user association, by user and group id, with its shares: present from the start.
    pub members: Vec<MemberSection>,
}

/// The QOS of `sacctmgr show qos` as `[[scheduler.slurm.qos]]` sections, QOS i taking the jobs
/// of queue number `queue_of(i)`; and each limit the model does not apply, as `QOS: Column=value`.
pub fn qos_sections(
    table: &sacct::QosTable,
    queue_of: impl Fn(usize) -> i64,
) -> (Vec<QosSection>, Vec<String>) {
    let mut not_modelled = Vec::new();
    let sections = (table.rows.iter().enumerate())
        .map(|(i, row)| {
            not_modelled.extend(
                row.not_modelled
                    .iter()
                    .map(|c| format!("{}: {c}", row.name)),
            );
            QosSection {
                name: row.name.clone(),
                priority: Some(row.priority),
                usage_factor: Some(row.usage_factor),
                max_jobs_per_user: row.max_jobs_per_user,
                max_submit_per_user: row.max_submit_per_user,
                grp_cpus: None,
                grp_tres: row.grp_tres.clone(),
                max_tres_per_user: row.max_tres_per_user.clone(),
                max_tres_per_job: row.max_tres_per_job.clone(),
                groups: None,
                swf_queues: Some(vec![queue_of(i)]),
            }
        })
        .collect();
    (sections, not_modelled)
}

/// A site's accounting read before its sacct dump is replayed: the tree and QOS as the model's
/// keys, and the names the dump's reader numbers first ([`sacct::FirstNames`]) so that those
/// keys select the dump's jobs: the tree's accounts and users in file order, the QOS in file
/// order, and the machine's partitions.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SiteAccounting {
    /// The tree's accounts (`None` without a tree file).
    pub tree: Option<Vec<AccountSection>>,
    /// The tree's users' shares, by user id.
    pub user_shares: Option<BTreeMap<String, u32>>,
    /// The tree's user associations.
    pub members: Option<Vec<MemberSection>>,
    /// The QOS (`None` without a QOS file).
    pub qos: Option<Vec<QosSection>>,
    /// The names the dump's reader numbers first.
    pub first_names: sacct::FirstNames,
    /// The QOS limits read that the model does not apply (`QOS: Column=value`).
    pub not_modelled: Vec<String>,
}

impl SiteAccounting {
    /// Reads the tree (`sacctmgr -P show assoc`) and the QOS (`sacctmgr -P show qos`) files
    /// given, for a dump whose partitions are to be numbered as `partitions` (the machine's,
    /// in order).
    pub fn read(
        assoc: Option<&Path>,
        qos: Option<&Path>,
        partitions: &[String],
    ) -> Result<SiteAccounting> {
        let mut accounting = SiteAccounting {
            first_names: sacct::FirstNames {
                partitions: partitions.to_vec(),
                ..Default::default()
            },
            ..Default::default()
        };
        if let Some(path) = assoc {
            let tree = sacct::AssocTree::read(path).map_err(|e| invalid!("{e}"))?;
            let names = &mut accounting.first_names;
            for a in &tree.associations {
                let list = match &a.user {
                    Some(user) => (&mut names.users, user),
                    None if a.account != "root" => (&mut names.accounts, &a.account),
                    None => continue,
                };
                if !list.0.contains(list.1) {
                    list.0.push(list.1.clone());
                }
            }
            let id = |list: &[String], name: &str| {
                (list.iter().position(|n| n == name)).map(|i| i as i64 + 1)
            };
            let (accounts, users) = (&names.accounts, &names.users);
            let keys = tree_section(&tree, |a| id(accounts, a), |u| id(users, u))
                .map_err(|e| invalid!("{}: {e}", path.display()))?;
            accounting.set_tree(keys);
        }
        if let Some(path) = qos {
            let table = sacct::QosTable::read(path).map_err(|e| invalid!("{e}"))?;
            if table.rows.is_empty() {
                return Err(invalid!("{}: no QOS in the file", path.display()));
            }
            accounting.first_names.qos = table.rows.iter().map(|r| r.name.clone()).collect();
            let (sections, not_modelled) = qos_sections(&table, |i| i as i64 + 1);
            accounting.qos = Some(sections);
            accounting.not_modelled = (not_modelled.into_iter())
                .map(|c| format!("{}: {c}", path.display()))
                .collect();
        }
        Ok(accounting)
    }
}

impl SiteAccounting {
    fn set_tree(&mut self, keys: TreeKeys) {
        self.tree = Some(keys.tree);
        self.user_shares = (!keys.user_shares.is_empty()).then_some(keys.user_shares);
        self.members = (!keys.members.is_empty()).then_some(keys.members);
    }

    /// What the site's files did not give, from the dump `log` itself (read with the names
    /// given first): without a tree, the dump's accounts under root and their users, one share
    /// each (the tree `sacct::AssocTree::derived` builds), so that accounts are named and every
    /// user is in the tree from the start, as in Slurm's database; without QOS, the dump's QOS
    /// with Slurm's defaults (priority 0, usage factor 1, no limits). Ids follow the dump's
    /// tables, which number the names given first as they are given.
    pub fn add_dump_defaults(&mut self, log: &sacct::SacctLog) -> Result<()> {
        let id = |table: &sacct::Names, name: &str| {
            (table.iter().find(|(_, n)| *n == name)).map(|(id, _)| i64::from(id))
        };
        let names = &log.names;
        if self.tree.is_none() {
            let derived = sacct::AssocTree::derived(log);
            let keys = tree_section(
                &derived,
                |a| id(&names.accounts, a),
                |u| id(&names.users, u),
            )?;
            self.set_tree(keys);
            self.first_names.accounts = names.accounts.iter().map(|(_, n)| n.to_string()).collect();
            self.first_names.users = names.users.iter().map(|(_, n)| n.to_string()).collect();
        }
        if self.qos.is_none() && !names.qos.is_empty() {
            let table = sacct::QosTable {
                rows: (names.qos.iter())
                    .map(|(_, name)| sacct::QosRow {
                        name: name.to_string(),
                        usage_factor: 1.0,
                        ..Default::default()
                    })
                    .collect(),
            };
            let ids: Vec<i64> = names.qos.iter().map(|(id, _)| i64::from(id)).collect();
            self.qos = Some(qos_sections(&table, |i| ids[i]).0);
            self.first_names.qos = names.qos.iter().map(|(_, n)| n.to_string()).collect();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn the_tree_and_qos_select_jobs_by_the_numbers_read_first() {
        let dir = tempfile::tempdir().unwrap();
        let assoc = write(
            dir.path(),
            "assoc.txt",
            "Cluster|Account|Par Name|User|Share\n\
             c|root||||\n\
             c|physics|root||60\n\
             c|theory|physics||20\n\
             c|physics||alice|3\n\
             c|theory||carol|4\n\
             c|theory||alice|1\n",
        );
        let qos = write(
            dir.path(),
            "qos.txt",
            "Name|Priority|UsageFactor|GrpTRES|MaxJobsPU|GrpJobs\n\
             normal|0|1.0|||\n\
             high|100|1.0||2|5\n",
        );
        let site =
            SiteAccounting::read(Some(&assoc), Some(&qos), &["cpu".into(), "gpu".into()]).unwrap();
        assert_eq!(site.first_names.accounts, ["physics", "theory"]);
        assert_eq!(site.first_names.users, ["alice", "carol"]);
        assert_eq!(site.first_names.qos, ["normal", "high"]);
        assert_eq!(site.first_names.partitions, ["cpu", "gpu"]);
        let tree = site.tree.unwrap();
        assert_eq!(tree[1].name, "theory");
        assert_eq!(tree[1].parent.as_deref(), Some("physics"));
        assert_eq!(tree[1].groups, Some(vec![2]));
        // alice's first association's shares
        assert_eq!(
            site.user_shares.unwrap(),
            BTreeMap::from([("1".to_string(), 3), ("2".to_string(), 4)])
        );
        let qos_sections = site.qos.unwrap();
        assert_eq!(qos_sections[1].swf_queues, Some(vec![2]));
        assert_eq!(qos_sections[1].max_jobs_per_user, Some(2));
        assert_eq!(site.not_modelled.len(), 1);
        assert!(site.not_modelled[0].ends_with("high: GrpJobs=5"));
    }

    #[test]
    fn a_bad_file_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let qos = write(dir.path(), "qos.txt", "Name|Priority\nhigh|x\n");
        let error = SiteAccounting::read(None, Some(&qos), &[])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("qos.txt:2") && error.contains("Priority"),
            "{error}"
        );
        let assoc = write(
            dir.path(),
            "assoc.txt",
            "Account|Par Name|User|Share\nx|nowhere||1\n",
        );
        let error = SiteAccounting::read(Some(&assoc), None, &[])
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("assoc.txt") && error.contains("no parent"),
            "{error}"
        );
    }
}
