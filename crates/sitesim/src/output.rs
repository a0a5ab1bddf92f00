//! Output files, written so that a failed run leaves nothing that looks complete: every file is
//! written to a temporary file in the output directory and renamed into place only once all of
//! them were written.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use tempfile::NamedTempFile;

use scenario::output::{OutputFormat, RunOutput};

use crate::say;

/// A set of files to place in one directory together.
pub struct OutputDir {
    dir: PathBuf,
    pending: Vec<(NamedTempFile, PathBuf)>,
    /// Whether [`OutputDir::create`] made the directory: dropped without a commit (a failed
    /// command), it removes it again if it is empty.
    created: bool,
    committed: bool,
}

impl OutputDir {
    /// Prepares `dir`, creating it if missing.
    pub fn create(dir: &Path) -> anyhow::Result<OutputDir> {
        let created = !dir.exists();
        fs::create_dir_all(dir)
            .with_context(|| format!("cannot create output directory {}", dir.display()))?;
        Ok(OutputDir {
            dir: dir.to_path_buf(),
            pending: Vec::new(),
            created,
            committed: false,
        })
    }

    /// A set of files with no common directory (each written with [`OutputDir::write_path`]).
    pub fn detached() -> OutputDir {
        OutputDir {
            dir: PathBuf::from("."),
            pending: Vec::new(),
            created: false,
            committed: false,
        }
    }

    /// Writes `name`, a path relative to the directory (subdirectories are created), into a
    /// temporary file until [`OutputDir::commit`].
    pub fn write(
        &mut self,
        name: &str,
        fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        let target = self.dir.join(name);
        self.write_path(&target, fill)
    }

    /// Writes the file at `target` (anywhere; its directory is created) into a temporary file
    /// beside it until [`OutputDir::commit`], so it lands together with the others or not at all.
    pub fn write_path(
        &mut self,
        target: &Path,
        fill: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
    ) -> anyhow::Result<()> {
        check_target(target)?;
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        fs::create_dir_all(&parent)
            .with_context(|| format!("cannot create directory {}", parent.display()))?;
        let temp = new_temp_file(&parent)
            .with_context(|| format!("cannot create a file in {}", parent.display()))?;
        let mut writer = BufWriter::with_capacity(1 << 20, temp);
        fill(&mut writer).with_context(|| format!("cannot write {}", target.display()))?;
        let temp = writer
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {}", target.display()))?;
        self.pending.push((temp, target.to_path_buf()));
        Ok(())
    }

    /// Opens `name` (a path relative to the directory) for writing as something else runs: a
    /// temporary file, placed with the others by [`OutputDir::commit`] once given back with
    /// [`OutputDir::keep`] (dropped instead, it is deleted).
    pub fn open(&self, name: &str) -> anyhow::Result<OpenFile> {
        tracing::debug!("writing {name}");
        let target = self.dir.join(name);
        check_target(&target)?;
        let temp = new_temp_file(&self.dir)
            .with_context(|| format!("cannot create a file in {}", self.dir.display()))?;
        Ok(OpenFile {
            writer: BufWriter::with_capacity(1 << 20, temp),
            target,
        })
    }

    /// Takes back a file from [`OutputDir::open`], complete: it is placed at the next commit.
    pub fn keep(&mut self, file: OpenFile) -> anyhow::Result<()> {
        let target = file.target;
        let temp = file
            .writer
            .into_inner()
            .map_err(|e| e.into_error())
            .with_context(|| format!("cannot write {}", target.display()))?;
        self.pending.push((temp, target));
        Ok(())
    }

    /// The directory the files go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `name` as pretty-printed JSON with a final newline.
    pub fn write_json(&mut self, name: &str, value: &impl serde::Serialize) -> anyhow::Result<()> {
        self.write(name, |w| {
            serde_json::to_writer_pretty(&mut *w, value)?;
            writeln!(w)?;
            Ok(())
        })
    }

    /// Writes one output format of a run.
    pub fn write_format(
        &mut self,
        format: &dyn OutputFormat,
        run: &RunOutput,
    ) -> anyhow::Result<()> {
        tracing::debug!("writing {}", format.file_name());
        self.write(format.file_name(), |w| Ok(format.write(run, w)?))
    }

    /// Writes every registered output format that applies to the run
    /// ([`scenario::output::FORMATS`]), in their order; those written only on request
    /// ([`OutputFormat::on_request`]) when `requested` names them.
    pub fn write_formats(&mut self, run: &RunOutput, requested: &[&str]) -> anyhow::Result<()> {
        for format in scenario::output::FORMATS {
            if format.applies(run)
                && (!format.on_request() || requested.contains(&format.file_name()))
            {
                self.write_format(*format, run)?;
            }
        }
        Ok(())
    }

    /// Moves every written file into place and says so on stdout.
    pub fn commit_and_list(self) -> anyhow::Result<()> {
        for path in self.commit()? {
            say!("wrote {}", path.display())?;
        }
        Ok(())
    }

    /// Moves every written file into place.
    pub fn commit(mut self) -> anyhow::Result<Vec<PathBuf>> {
        self.committed = true;
        let mut placed = Vec::new();
        for (temp, target) in std::mem::take(&mut self.pending) {
            temp.persist(&target)
                .with_context(|| format!("cannot move output into {}", target.display()))?;
            placed.push(target);
        }
        Ok(placed)
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        if !self.committed {
            self.pending.clear(); // deletes the temporary files
            if self.created {
                // Only if empty: the directory of a command that failed before writing.
                let _ = fs::remove_dir(&self.dir);
            }
        }
    }
}

/// A file being written into an [`OutputDir`] (a temporary file until committed).
pub struct OpenFile {
    /// Where the bytes go.
    pub writer: BufWriter<NamedTempFile>,
    target: PathBuf,
}

/// Fails when `target` cannot become a file: it is an existing directory, or has no file name.
/// Commands call it for their output paths before they start working.
pub fn check_target(target: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(
        !target.is_dir(),
        "{} is a directory; give a file name",
        target.display()
    );
    anyhow::ensure!(
        target.file_name().is_some(),
        "{}: needs a file name",
        target.display()
    );
    Ok(())
}

/// A temporary file in `dir` created with mode 0666 less the umask, like any file a program
/// creates (so 0644 under the usual umask 022): once renamed into place it is readable by
/// colleagues on a shared file system, unlike the 0600 of a default temporary file.
fn new_temp_file(dir: &Path) -> std::io::Result<NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.prefix(".sitesim-").tempfile_in(dir)
}

/// Writes an SWF file (header and records) under a temporary name and renames it into place
/// when complete.
pub fn write_swf_file(
    path: &Path,
    header: &swf::Header,
    records: &[swf::Record],
) -> anyhow::Result<()> {
    let mut out = OutputDir::detached();
    out.write_path(path, |w| {
        Ok(scenario::output::write_swf(header, records, w)?)
    })?;
    out.commit()?;
    Ok(())
}
