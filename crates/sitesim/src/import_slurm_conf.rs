//! `sitesim import-slurm-conf`: a real slurm.conf's scheduling lines as the `[scheduler]` table
//! of a population file (the work is `config::slurm`).

use std::io::Write;

use crate::cli::ImportSlurmConfArgs;
use crate::say;

/// Runs the command.
pub fn run(args: &ImportSlurmConfArgs) -> anyhow::Result<()> {
    let imported = config::slurm::import_slurm_conf_file(&args.conf)?;
    let text = imported.scheduler_toml(&args.conf.display().to_string())?;
    match &args.out {
        None => {
            std::io::stdout().write_all(text.as_bytes())?;
        }
        Some(path) => {
            if path.exists() && !args.force {
                anyhow::bail!(
                    "{} exists; give --force to replace it, or another --out",
                    path.display()
                );
            }
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
