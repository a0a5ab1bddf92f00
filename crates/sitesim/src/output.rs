//! Output files: the scenario layer's [`OutputDir`] (every file written to a temporary file and
//! renamed into place only once all of them were written, so a failed run leaves nothing that
//! looks complete), and the lines that tell the person at the terminal what was written.

pub use scenario::store::OutputDir;

use crate::say;

/// Moves every written file into place and says so on stdout.
pub fn commit_and_list(out: OutputDir) -> anyhow::Result<()> {
    for path in out.commit()? {
        say!("wrote {}", path.display())?;
    }
    Ok(())
}
