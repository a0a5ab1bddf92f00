//! The association tree of a Slurm site (`sacctmgr --parsable2 show assoc`): accounts under
//! their parents, users under their accounts, with their fair-share shares and QOS. Kept for
//! fair-share; without the file, [`AssocTree::derived`] builds root -> account -> user with
//! equal shares from a dump's jobs.

use std::collections::BTreeSet;
use std::io::BufRead;
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
        use crate::table::{check_width, column, read_rows};
        let mut associations = Vec::new();
        read_rows(
            input,
            source_name,
            crate::MAX_ASSOCIATIONS,
            "associations",
            |header| {
                let columns = [
                    column(header, &["account"]),
                    column(header, &["parname", "parentname", "parent"]),
                    column(header, &["user"]),
                    column(header, &["share", "shares", "fairshare"]),
                    column(header, &["qos"]),
                ];
                for (i, name) in ["Account", "Par Name (ParentName)", "User", "Share"]
                    .iter()
                    .enumerate()
                {
                    if columns[i].is_none() {
                        return Err(SacctError::MissingField {
                            source_name: source_name.to_string(),
                            line: header.line,
                            field: name,
                        });
                    }
                }
                Ok(columns)
            },
            |columns: &[Option<usize>; 5], row| {
                let line_number = row.line;
                let get = |i: usize| {
                    columns[i]
                        .and_then(|c| row.fields.get(c))
                        .map_or("", |f| f.trim())
                };
                check_width(row, source_name, columns)?;
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
                Ok(())
            },
        )?;
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
