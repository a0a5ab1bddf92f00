//! Where output files go. A [`Store`] hands out a writer per file; a run's sinks write into
//! them ([`crate::Simulation::outputs`]). Two stores: [`OutputDir`], a directory whose files
//! appear together or not at all (the command line), and [`MemoryStore`], bytes in memory
//! (Python).
//!
//! [`OutputDir`] writes every file to a temporary file beside its target and renames them all
//! into place only at [`OutputDir::commit`], so a failed command leaves nothing that looks
//! complete; dropped without a commit, it deletes its temporary files and the directory it
//! created if that is empty.

use std::fs;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use config::{Result, ScenarioError};
use tempfile::TempPath;

/// Where a run's output files go.
pub trait Store {
    /// A writer for the file `name` (`jobs.csv`); the file is complete once the sink writing it
    /// finished.
    fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>>;
    /// A directory for scratch files beside the outputs (`None`: the system's temporary
    /// directory).
    fn scratch(&self) -> Option<&Path>;
}

/// A set of files to place in one directory together (see the module's description).
pub struct OutputDir {
    dir: PathBuf,
    pending: Vec<(TempPath, PathBuf)>,
    /// Files whose target is not `dir/name` (the command line's `--swf PATH`).
    redirects: Vec<(String, PathBuf)>,
    /// Whether [`OutputDir::create`] made the directory: dropped without a commit (a failed
    /// command), it removes it again if it is empty.
    created: bool,
    committed: bool,
    /// The outputs of an earlier run found in the directory, replaced (`force`): removed at the
    /// commit unless written again.
    stale: Vec<PathBuf>,
}

fn io(what: String) -> impl FnOnce(std::io::Error) -> ScenarioError {
    move |source| ScenarioError::Io { what, source }
}

impl OutputDir {
    /// Prepares `dir`, creating it if missing.
    pub fn create(dir: &Path) -> Result<OutputDir> {
        let created = !dir.exists();
        fs::create_dir_all(dir).map_err(io(format!(
            "cannot create output directory {}",
            dir.display()
        )))?;
        Ok(OutputDir {
            dir: dir.to_path_buf(),
            pending: Vec::new(),
            redirects: Vec::new(),
            created,
            committed: false,
            stale: Vec::new(),
        })
    }

    /// [`OutputDir::create`] for a run's outputs: a directory that already holds the outputs of
    /// an earlier run or replay (any registered output file, or `figures/`) is refused, so two
    /// runs' files never end up side by side; with `force`, those are replaced: the ones the new
    /// run does not write are removed when it commits.
    pub fn for_outputs(dir: &Path, force: bool) -> Result<OutputDir> {
        let mut earlier: Vec<PathBuf> = crate::output::FORMATS
            .iter()
            .map(|f| dir.join(f.file_name()))
            .chain([dir.join("figures")])
            .filter(|p| p.exists())
            .collect();
        if !earlier.is_empty() && !force {
            let names: Vec<String> = earlier
                .iter()
                .filter_map(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .collect();
            return Err(ScenarioError::Invalid(format!(
                "{} already holds the outputs of a run ({}); give {} to replace them, or another {}",
                dir.display(),
                names.join(", "),
                config::naming::key("force"),
                config::naming::key("out")
            )));
        }
        let mut out = OutputDir::create(dir)?;
        out.stale.append(&mut earlier);
        Ok(out)
    }

    /// A set of files with no common directory (each written with [`OutputDir::write_path`] or
    /// redirected with [`OutputDir::redirect`]).
    pub fn detached() -> OutputDir {
        OutputDir {
            dir: PathBuf::from("."),
            pending: Vec::new(),
            redirects: Vec::new(),
            created: false,
            committed: false,
            stale: Vec::new(),
        }
    }

    /// Sends the file `name` to `target` instead of into the directory. Fails at once when
    /// `target` cannot become a file (a directory, or a file standing where its directory
    /// would be created), so a command finds out before it works.
    pub fn redirect(&mut self, name: &str, target: &Path) -> Result<()> {
        check_target(target)?;
        if let Some(blocking) = target
            .ancestors()
            .skip(1)
            .filter(|a| !a.as_os_str().is_empty())
            .find(|a| a.exists())
            .filter(|a| !a.is_dir())
        {
            return Err(ScenarioError::Invalid(format!(
                "cannot create directory {}: {} is a file",
                target.parent().unwrap_or(blocking).display(),
                blocking.display()
            )));
        }
        self.redirects
            .push((name.to_string(), target.to_path_buf()));
        Ok(())
    }

    /// The directory the files go to.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Where the file `name` goes.
    fn target(&self, name: &str) -> PathBuf {
        self.redirects
            .iter()
            .find(|(n, _)| n == name)
            .map_or_else(|| self.dir.join(name), |(_, t)| t.clone())
    }

    /// A temporary file beside `target` (its directory created), and its writer.
    fn open_beside(target: &Path) -> Result<(BufWriter<fs::File>, TempPath)> {
        check_target(target)?;
        let parent = target
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        fs::create_dir_all(&parent)
            .map_err(io(format!("cannot create directory {}", parent.display())))?;
        remove_abandoned_temp_files(&parent);
        let temp = new_temp_file(&parent)
            .map_err(io(format!("cannot create a file in {}", parent.display())))?;
        let (file, path) = temp.into_parts();
        Ok((BufWriter::with_capacity(1 << 20, file), path))
    }

    /// Writes `name` (a path relative to the directory; subdirectories are created) into a
    /// temporary file until [`OutputDir::commit`].
    pub fn write(&mut self, name: &str, bytes: &[u8]) -> Result<()> {
        let target = self.target(name);
        self.write_path(&target, |w| w.write_all(bytes))
    }

    /// Writes `value` as pretty-printed JSON with a final newline into `name`.
    pub fn write_json(&mut self, name: &str, value: &impl serde::Serialize) -> Result<()> {
        let mut text = crate::output::render_json(value)?;
        text.push('\n');
        self.write(name, text.as_bytes())
    }

    /// Writes the file at `target` (anywhere; its directory is created) into a temporary file
    /// beside it until [`OutputDir::commit`], so it lands together with the others or not at
    /// all.
    pub fn write_path(
        &mut self,
        target: &Path,
        fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
    ) -> Result<()> {
        let (mut writer, temp) = Self::open_beside(target)?;
        let written = fill(&mut writer).and_then(|()| writer.flush());
        written.map_err(io(format!("cannot write {}", target.display())))?;
        self.pending.push((temp, target.to_path_buf()));
        Ok(())
    }

    /// Moves every written file into place; returns their paths, in the order they were
    /// created.
    pub fn commit(mut self) -> Result<Vec<PathBuf>> {
        self.committed = true;
        let mut placed = Vec::new();
        for (temp, target) in std::mem::take(&mut self.pending) {
            temp.persist(&target).map_err(|e| ScenarioError::Io {
                what: format!("cannot move output into {}", target.display()),
                source: e.error,
            })?;
            placed.push(target);
        }
        for stale in std::mem::take(&mut self.stale) {
            if placed.contains(&stale) {
                continue;
            }
            let removed = if stale.is_dir() {
                fs::remove_dir_all(&stale)
            } else {
                fs::remove_file(&stale)
            };
            removed.map_err(|source| ScenarioError::Io {
                what: format!("cannot remove the earlier output {}", stale.display()),
                source,
            })?;
        }
        Ok(placed)
    }
}

impl Store for OutputDir {
    fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>> {
        tracing::debug!("writing {name}");
        let target = self.target(name);
        let (writer, temp) = Self::open_beside(&target)?;
        self.pending.push((temp, target));
        Ok(Box::new(writer))
    }

    fn scratch(&self) -> Option<&Path> {
        Some(&self.dir)
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

/// Fails when `target` cannot become a file: it is an existing directory, or has no file name.
/// Commands call it for their output paths before they start working.
pub fn check_target(target: &Path) -> Result<()> {
    if target.is_dir() {
        return Err(ScenarioError::Invalid(format!(
            "{} is a directory; give a file name",
            target.display()
        )));
    }
    if target.file_name().is_none() {
        return Err(ScenarioError::Invalid(format!(
            "{}: needs a file name",
            target.display()
        )));
    }
    Ok(())
}

/// A temporary file in `dir` created with mode 0666 less the umask, like any file a program
/// creates (so 0644 under the usual umask 022): once renamed into place it is readable by
/// colleagues on a shared file system, unlike the 0600 of a default temporary file.
pub(crate) fn new_temp_file(dir: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    let mut builder = tempfile::Builder::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(fs::Permissions::from_mode(0o666));
    }
    builder.prefix(&temp_prefix()).tempfile_in(dir)
}

/// The start of this process's temporary file names: `.sitesim-PID-`, so a later command can
/// tell the files of a process that is gone.
fn temp_prefix() -> String {
    format!("{TEMP_PREFIX}{}-", std::process::id())
}

/// What every temporary output file's name starts with.
const TEMP_PREFIX: &str = ".sitesim-";

/// Removes from `dir` the temporary output files a command left when it was killed before it
/// could clean up (Ctrl-C, a crash, an out-of-memory kill): those named after a process that
/// no longer runs (Linux's /proc tells), and those of the older unnamed form untouched for a
/// day. Files it cannot judge or remove are left alone. Each directory is looked at once per
/// process: a sweep opens a file per run, and listing a directory of many runs every time
/// made a sweep with one file per run in one directory quadratic in its runs.
fn remove_abandoned_temp_files(dir: &Path) {
    static LOOKED_AT: std::sync::Mutex<Option<std::collections::HashSet<PathBuf>>> =
        std::sync::Mutex::new(None);
    if let Ok(mut seen) = LOOKED_AT.lock() {
        if !seen
            .get_or_insert_with(Default::default)
            .insert(dir.to_path_buf())
        {
            return;
        }
    }
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    let proc = Path::new("/proc/self").exists();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(TEMP_PREFIX)) else {
            continue;
        };
        let owner = rest
            .split_once('-')
            .and_then(|(pid, _)| pid.parse::<u32>().ok());
        let abandoned = match owner {
            Some(pid) => {
                proc && pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists()
            }
            None => entry
                .metadata()
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok())
                .is_some_and(|age| age.as_secs() > 86_400),
        };
        if abandoned && entry.file_type().is_ok_and(|t| t.is_file()) {
            let path = entry.path();
            if fs::remove_file(&path).is_ok() {
                tracing::info!(
                    "removed {}, left by a command that was killed",
                    path.display()
                );
            }
        }
    }
}

/// Output files kept in memory, by name, in the order they were created (what the Python
/// package returns).
#[derive(Default)]
pub struct MemoryStore {
    files: Vec<(String, Arc<Mutex<Vec<u8>>>)>,
}

/// A writer appending to shared bytes.
struct SharedBytes(Arc<Mutex<Vec<u8>>>);

impl Write for SharedBytes {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.0.lock() {
            Ok(mut bytes) => {
                bytes.extend_from_slice(buf);
                Ok(buf.len())
            }
            Err(_) => Err(std::io::Error::other("an output buffer was poisoned")),
        }
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> MemoryStore {
        MemoryStore::default()
    }

    /// The files written, (name, bytes), in the order they were created.
    pub fn into_files(self) -> Vec<(String, Vec<u8>)> {
        self.files
            .into_iter()
            .map(|(name, bytes)| {
                let bytes = match Arc::try_unwrap(bytes) {
                    Ok(m) => m.into_inner().unwrap_or_default(),
                    Err(shared) => shared.lock().map(|b| b.clone()).unwrap_or_default(),
                };
                (name, bytes)
            })
            .collect()
    }
}

impl Store for MemoryStore {
    fn create(&mut self, name: &str) -> Result<Box<dyn Write + Send>> {
        let bytes = Arc::new(Mutex::new(Vec::new()));
        self.files.push((name.to_string(), Arc::clone(&bytes)));
        Ok(Box::new(SharedBytes(bytes)))
    }

    fn scratch(&self) -> Option<&Path> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_appear_at_commit_and_vanish_without_it() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("out");
        {
            let mut out = OutputDir::create(&dir).unwrap();
            let mut w = out.create("a.csv").unwrap();
            w.write_all(b"x\n").unwrap();
            w.flush().unwrap();
            assert!(!dir.join("a.csv").exists());
        }
        assert!(!dir.exists(), "a failed command leaves no directory");
        let mut out = OutputDir::create(&dir).unwrap();
        out.write("b/c.txt", b"y").unwrap();
        let redirected = root.path().join("w.swf");
        out.redirect("workload.swf", &redirected).unwrap();
        let mut w = out.create("workload.swf").unwrap();
        w.write_all(b"; swf\n").unwrap();
        drop(w);
        let placed = out.commit().unwrap();
        assert_eq!(placed, [dir.join("b/c.txt"), redirected.clone()]);
        assert_eq!(fs::read(&redirected).unwrap(), b"; swf\n");
        assert!(
            fs::read_dir(&dir).unwrap().all(|e| !e
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with('.')),
            "no temporary file left"
        );
    }

    #[test]
    fn memory_keeps_files_in_order() {
        let mut store = MemoryStore::new();
        store.create("b").unwrap().write_all(b"2").unwrap();
        store.create("a").unwrap().write_all(b"1").unwrap();
        assert_eq!(
            store.into_files(),
            [
                ("b".to_string(), b"2".to_vec()),
                ("a".to_string(), b"1".to_vec())
            ]
        );
    }
}
