//! The association tree of a Slurm site (`sacctmgr --parsable2 show assoc`): accounts under
//! their parents, users under their accounts, with their fair-share shares and QOS. Kept for
//! fair-share; without the file, [`AssocTree::derived`] builds root -> account -> user with
//! equal shares from a dump's jobs.

use std::collections::BTreeSet;
use std::io::{BufRead, Read};
use std::path::Path;

use crate::error::SacctError;
use crate::log::SacctLog;

/// A node's fair-share shares (`Share`, set with `sacctmgr ... fairshare=`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shares {
    /// A number of shares among its siblings.
    Count(u32),
    /// `parent`: the node counts as its parent for fair-share.
    Parent,
}

/// One association: an account (no user) or a user in an account.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Association {
    /// The account.
    pub account: String,
    /// The user, for a user association.
    pub user: Option<String>,
    /// The parent account of an account association (`None` for root); a user's parent is its
    /// account.
    pub parent: Option<String>,
    /// Its shares.
    pub shares: Shares,
    /// The QOS it may use (comma-separated in sacctmgr's output).
    pub qos: Vec<String>,
}

/// A site's associations, in file order (or derived).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AssocTree {
    /// Every association.
    pub associations: Vec<Association>,
    /// Whether it was derived from a log rather than read from sacctmgr.
    pub derived: bool,
}

impl AssocTree {
    /// Reads `sacctmgr -P show assoc format=Cluster,Account,ParentName,User,Share,QOS` output
    /// (columns by their header names: `Account`, `Par Name`, `User`, `Share`, `QOS`; others
    /// ignored). Errors name file, line and column.
    pub fn read(path: &Path) -> Result<AssocTree, SacctError> {
        let input = swf::Input::open(path)?;
        let name = input.name().to_string();
        AssocTree::read_from(input, &name)
    }

    /// [`AssocTree::read`] from `input`; `source_name` names it in errors.
    pub fn read_from(input: impl BufRead, source_name: &str) -> Result<AssocTree, SacctError> {
        let mut columns: Option<[Option<usize>; 5]> = None;
        let mut associations = Vec::new();
        let mut input = input;
        let mut bytes = Vec::new();
        let mut line_number = 0u64;
        loop {
            line_number += 1;
            bytes.clear();
            let read = (&mut input)
                .take(crate::MAX_LINE_BYTES as u64 + 1)
                .read_until(b'\n', &mut bytes)
                .map_err(|error| SacctError::Read {
                    source_name: source_name.to_string(),
                    line: line_number,
                    error,
                })?;
            if read == 0 {
                break;
            }
            if bytes.len() > crate::MAX_LINE_BYTES {
                return Err(SacctError::LineTooLong {
                    source_name: source_name.to_string(),
                    line: line_number,
                    limit: crate::MAX_LINE_BYTES,
                });
            }
            let Ok(text) = std::str::from_utf8(&bytes) else {
                return Err(SacctError::field(
                    source_name,
                    line_number,
                    "(line)",
                    &String::from_utf8_lossy(&bytes),
                    "text (UTF-8)",
                ));
            };
            let text = text.trim_end_matches(['\n', '\r']);
            if text.trim().is_empty() {
                continue;
            }
            if associations.len() == crate::MAX_ASSOCIATIONS {
                return Err(SacctError::TooLarge {
                    source_name: source_name.to_string(),
                    line: line_number,
                    limit: crate::MAX_ASSOCIATIONS as u64,
                    what: "associations",
                });
            }
            let fields: Vec<&str> = text.split('|').collect();
            let Some(found) = columns else {
                let key = |f: &str| f.to_ascii_lowercase().replace([' ', '_'], "");
                let find =
                    |names: &[&str]| fields.iter().position(|f| names.contains(&key(f).as_str()));
                let found = [
                    find(&["account"]),
                    find(&["parname", "parentname", "parent"]),
                    find(&["user"]),
                    find(&["share", "shares", "fairshare"]),
                    find(&["qos"]),
                ];
                for (i, name) in ["Account", "Par Name (ParentName)", "User", "Share"]
                    .iter()
                    .enumerate()
                {
                    if found[i].is_none() {
                        return Err(SacctError::MissingField {
                            source_name: source_name.to_string(),
                            line: line_number,
                            field: name,
                        });
                    }
                }
                columns = Some(found);
                continue;
            };
            let get = |i: usize| {
                found[i]
                    .and_then(|c| fields.get(c))
                    .map_or("", |f| f.trim())
            };
            if fields.len() < found.iter().flatten().max().map_or(0, |m| m + 1) {
                return Err(SacctError::FieldCount {
                    source_name: source_name.to_string(),
                    line: line_number,
                    found: fields.len(),
                    expected: found.iter().flatten().max().map_or(0, |m| m + 1),
                    hint: " (run sacctmgr with --parsable2)",
                });
            }
            let account = get(0);
            if account.is_empty() {
                return Err(SacctError::field(
                    source_name,
                    line_number,
                    "Account",
                    account,
                    "an account name",
                ));
            }
            let user = Some(get(2)).filter(|u| !u.is_empty()).map(str::to_string);
            let share_text = get(3);
            let shares = match share_text {
                "parent" => Shares::Parent,
                "" => Shares::Count(1),
                text => Shares::Count(text.parse().map_err(|_| {
                    SacctError::field(
                        source_name,
                        line_number,
                        "Share",
                        text,
                        "a whole number of shares or `parent`",
                    )
                })?),
            };
            let parent = match &user {
                Some(_) => Some(account.to_string()),
                None => Some(get(1)).filter(|p| !p.is_empty()).map(str::to_string),
            };
            let qos = get(4)
                .split(',')
                .filter(|q| !q.is_empty())
                .map(str::to_string)
                .collect();
            associations.push(Association {
                account: account.to_string(),
                user,
                parent,
                shares,
                qos,
            });
        }
        if columns.is_none() {
            return Err(SacctError::NoJobs {
                source_name: source_name.to_string(),
            });
        }
        Ok(AssocTree {
            associations,
            derived: false,
        })
    }

    /// root -> each account of the log -> each user seen under it, every node with 1 share.
    pub fn derived(log: &SacctLog) -> AssocTree {
        let mut pairs = BTreeSet::new();
        for job in &log.jobs {
            pairs.insert((job.account, job.user));
        }
        let mut associations = vec![Association {
            account: "root".to_string(),
            user: None,
            parent: None,
            shares: Shares::Count(1),
            qos: Vec::new(),
        }];
        let accounts: BTreeSet<u32> = pairs.iter().map(|(a, _)| *a).collect();
        let account_name = |a: u32| match log.names.accounts.name(a) {
            "" => "(none)".to_string(),
            name => name.to_string(),
        };
        for &account in &accounts {
            if account_name(account) == "root" {
                continue;
            }
            associations.push(Association {
                account: account_name(account),
                user: None,
                parent: Some("root".to_string()),
                shares: Shares::Count(1),
                qos: Vec::new(),
            });
        }
        for (account, user) in pairs {
            associations.push(Association {
                account: account_name(account),
                user: Some(log.names.users.name(user).to_string()),
                parent: Some(account_name(account)),
                shares: Shares::Count(1),
                qos: Vec::new(),
            });
        }
        AssocTree {
            associations,
            derived: true,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_accounts_users_shares_and_qos() {
        let text = "Cluster|Account|Par Name|User|Share|QOS|Def QOS\n\
                    c|root||||normal|\n\
                    c|root||root|1|normal|\n\
                    c|physics|root||40|normal|\n\
                    c|theory|physics||parent|normal|\n\
                    c|theory||alice|3|high,normal|\n";
        let tree = AssocTree::read_from(text.as_bytes(), "assoc.txt").unwrap();
        assert_eq!(tree.associations.len(), 5);
        let physics = &tree.associations[2];
        assert_eq!(physics.parent.as_deref(), Some("root"));
        assert_eq!(physics.shares, Shares::Count(40));
        assert_eq!(tree.associations[3].shares, Shares::Parent);
        let alice = &tree.associations[4];
        assert_eq!(alice.user.as_deref(), Some("alice"));
        assert_eq!(alice.parent.as_deref(), Some("theory"));
        assert_eq!(alice.qos, vec!["high", "normal"]);
    }

    #[test]
    fn a_bad_share_names_line_and_column() {
        let text = "Account|Par Name|User|Share\nroot|||1\nphys|root||many\n";
        let err = AssocTree::read_from(text.as_bytes(), "assoc.txt").unwrap_err();
        assert_eq!(
            err.to_string(),
            "assoc.txt:3: field Share: \"many\" is not a whole number of shares or `parent`"
        );
        let err = AssocTree::read_from("Account|User\n".as_bytes(), "a.txt").unwrap_err();
        assert!(err.to_string().contains("Par Name"), "{err}");
    }
}
