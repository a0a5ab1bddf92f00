//! `sitesim import-slurm-conf`: a real slurm.conf's scheduling lines as the `[scheduler]` table
//! of a population file (the work is `config::slurm`).
//!
//! `--out` names a folder, as it does for `convert` and `fit`: the table is written into it as
//! [`OUT_FILE`], the folder created if missing, and an earlier table there is refused without
//! `--force`. A path ending in `.toml`, or an existing file, is still accepted as the file to
//! write (what `--out` meant before), with a deprecation note on the standard error.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cli::ImportSlurmConfArgs;
use crate::say;

/// The file `--out DIR` writes into DIR.
pub const OUT_FILE: &str = "slurm.toml";

/// Where `--out` sends the table: the file to write, and whether `out` named that file itself
/// (the deprecated form) rather than its folder.
fn target(out: &Path) -> (PathBuf, bool) {
    let names_a_file = out.is_file()
        || out
            .extension()
            .and_then(|x| x.to_str())
            .is_some_and(|x| x.eq_ignore_ascii_case("toml"));
    if names_a_file {
        (out.to_path_buf(), true)
    } else {
        (out.join(OUT_FILE), false)
    }
}

/// Runs the command.
pub fn run(args: &ImportSlurmConfArgs) -> anyhow::Result<()> {
    // Refused before the slurm.conf is read, so that a refused command costs nothing.
    let target = args.out.as_deref().map(target);
    if let Some((path, deprecated)) = &target {
        if *deprecated {
            eprintln!(
                "note: --out {} names a file, which is deprecated: --out takes a folder and writes {OUT_FILE} into it (as convert and fit do)",
                path.display()
            );
        }
        if path.exists() && !args.force {
            anyhow::bail!(
                "{} exists; give --force to replace it, or another --out",
                path.display()
            );
        }
        scenario::store::check_target(path)?;
    }
    let imported = config::slurm::import_slurm_conf_file(&args.conf)?;
    let text = imported.scheduler_toml(&args.conf.display().to_string())?;
    match &target {
        None => {
            std::io::stdout().write_all(text.as_bytes())?;
        }
        Some((path, _)) => {
            let mut out = crate::output::OutputDir::detached();
            out.write_path(path, |w| w.write_all(text.as_bytes()))?;
            out.commit()?;
            say!(
                "wrote {} ({} lines of {} not modelled, listed in it)",
                path.display(),
                imported.ignored.len(),
                args.conf.display()
            )?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_is_a_folder_unless_it_names_a_toml_file_or_an_existing_one() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            target(&dir.path().join("site")),
            (dir.path().join("site").join(OUT_FILE), false)
        );
        assert_eq!(target(dir.path()), (dir.path().join(OUT_FILE), false));
        let toml = dir.path().join("scheduler.TOML");
        assert_eq!(target(&toml), (toml.clone(), true));
        let existing = dir.path().join("scheduler.conf");
        std::fs::write(&existing, "").unwrap();
        assert_eq!(target(&existing), (existing.clone(), true));
    }
}
