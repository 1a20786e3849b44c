//! Files that appear whole or not at all: each is written under a temporary name in its
//! directory and renamed once complete; dropped before then, it is removed. A failed run (a full
//! disk, say) leaves neither a half-written file nor a partial set.
//!
//! The temporary name holds the writer's process id (`.report.json.4242.partial`): runs
//! writing into one directory at once never share one, and a run killed before it could
//! remove its own (`kill -9`, a power cut) leaves files that the next run writing there
//! removes, once no process of that id is running.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// A file being written under a temporary name in the output directory; removed when dropped
/// before [`AtomicFile::commit`] gives it its name.
pub struct AtomicFile {
    partial: PathBuf,
    target: PathBuf,
    committed: bool,
}

impl AtomicFile {
    /// Starts `dir/name` as `dir/.name.partial`.
    pub fn create(dir: &Path, name: &str) -> io::Result<(AtomicFile, File)> {
        Self::create_at(&dir.join(name))
    }

    /// Starts the file `target` under the temporary name `.NAME.PID.partial` beside it,
    /// removing those a killed run left for it.
    pub fn create_at(target: &Path) -> io::Result<(AtomicFile, File)> {
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let dir = target.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
        remove_stale(dir, &[&name]);
        let partial = target.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        let file = File::create(&partial)?;
        Ok((AtomicFile { partial, target: target.to_path_buf(), committed: false }, file))
    }

    pub fn commit(mut self) -> io::Result<()> {
        std::fs::rename(&self.partial, &self.target)?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.partial);
        }
    }
}

/// Removes the temporary files of `names` in `dir` whose writers are gone: a process id no
/// process has (where `/proc` says), or no id (an earlier release's name). Returns how many
/// bytes it freed.
pub fn remove_stale(dir: &Path, names: &[&str]) -> u64 {
    let Ok(entries) = std::fs::read_dir(dir) else { return 0 };
    let mut freed = 0;
    for entry in entries.flatten() {
        let file_name = entry.file_name();
        let Some(writer) = file_name.to_str().and_then(|n| partial_of(n, names)) else { continue };
        let gone = match writer {
            Some(pid) => pid != std::process::id() && process_is_gone(pid),
            None => true,
        };
        let size = entry.metadata().map_or(0, |m| m.len());
        if gone && std::fs::remove_file(entry.path()).is_ok() {
            freed += size;
        }
    }
    freed
}

/// Is `file_name` the temporary file of one of `names`? Then with its writer's process id,
/// where it has one.
fn partial_of(file_name: &str, names: &[&str]) -> Option<Option<u32>> {
    let middle = file_name.strip_prefix('.')?.strip_suffix(".partial")?;
    names.iter().find_map(|name| {
        let rest = middle.strip_prefix(name)?;
        match rest.strip_prefix('.') {
            None if rest.is_empty() => Some(None),
            Some(pid) => pid.parse().ok().map(Some),
            None => None,
        }
    })
}

/// Does no process have the id `pid`? False where the system does not say (no `/proc`).
fn process_is_gone(pid: u32) -> bool {
    let proc = Path::new("/proc");
    proc.join("self").exists() && !proc.join(pid.to_string()).exists()
}

/// Complete files still under their temporary names; [`Written::commit`] names them all,
/// dropping them removes them.
#[derive(Default)]
#[must_use = "the files are removed unless committed"]
pub struct Written(pub Vec<AtomicFile>);

impl Written {
    pub fn append(&mut self, mut other: Written) {
        self.0.append(&mut other.0);
    }

    pub fn commit(self) -> io::Result<()> {
        self.0.into_iter().try_for_each(AtomicFile::commit)
    }
}

/// Writes `text` as `dir/name`, to be committed with the run's other files.
pub fn write_text(dir: &Path, name: &str, text: &str) -> io::Result<Written> {
    let (atomic, mut file) = AtomicFile::create(dir, name)?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    Ok(Written(vec![atomic]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn temporary_names_are_told_from_others() {
        let names = ["report.json", "flows.csv"];
        assert_eq!(partial_of(".report.json.partial", &names), Some(None));
        assert_eq!(partial_of(".report.json.4242.partial", &names), Some(Some(4242)));
        assert_eq!(partial_of(".flows.csv.1.partial", &names), Some(Some(1)));
        assert_eq!(partial_of("report.json", &names), None);
        assert_eq!(partial_of(".report.jsonx.partial", &names), None);
        assert_eq!(partial_of(".report.json.x1.partial", &names), None);
        assert_eq!(partial_of(".pfc.csv.1.partial", &names), None);
    }

    #[test]
    fn a_killed_run_s_files_are_removed_and_a_running_one_s_kept() {
        let dir = tempfile::tempdir().expect("temp dir");
        let at = |name: &str| dir.path().join(name);
        // process ids stop at 4,194,304 (Linux's pid_max): none has this one
        let own = format!(".report.json.{}.partial", std::process::id());
        for name in [".report.json.partial", ".report.json.999999999.partial", ".report.json.1.partial", &own] {
            std::fs::write(at(name), b"half").expect("write");
        }
        assert_eq!(remove_stale(dir.path(), &["report.json"]), 8);
        assert!(!at(".report.json.partial").exists() && !at(".report.json.999999999.partial").exists());
        assert!(at(".report.json.1.partial").exists(), "process 1 is running");
        assert!(at(&own).exists(), "this run's own");
    }
}
