//! Output files. A regular file (or a new path) appears whole or not at all: it is written
//! under a temporary name in its directory and renamed once complete; dropped before then, it
//! is removed. A failed run (a full disk, say) leaves neither a half-written file nor a partial
//! set. Anything else is written straight through, never replaced: a character device
//! (`/dev/null`, `/dev/full`, a terminal), a FIFO, a socket, or a link into `/proc` such as
//! `/dev/stdout` (whose file, when it is this process's standard output, is written through
//! standard output itself, so that the two share one position). A block device is refused.
//! Every writer of the command opens its target here ([`AtomicFile::create_at`], or
//! [`create_streaming`] for a file read while it grows).
//!
//! The temporary name holds the writer's process id (`.report.json.4242.partial`): runs
//! writing into one directory at once never share one, and a run killed before it could
//! remove its own (`kill -9`, a power cut) leaves files that the next run writing there
//! removes, once no process of that id is running.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// How an output path is written.
#[derive(Debug, PartialEq, Eq)]
pub enum Target {
    /// A regular file or a new path, replaced whole by a rename: the path itself, or the file
    /// a link to a regular file ends at (the link is kept).
    Replaced(PathBuf),
    /// A device, FIFO, socket or `/proc` link: opened and written in place.
    Through,
}

impl Target {
    /// How `path` is written; an error for a block device or a directory.
    pub fn of(path: &Path) -> io::Result<Target> {
        let Ok(own) = std::fs::symlink_metadata(path) else { return Ok(Target::Replaced(path.to_path_buf())) };
        if own.file_type().is_symlink() && (links_into_proc(path) || std::fs::canonicalize(path).is_err()) {
            return Ok(Target::Through);
        }
        if in_proc(path) {
            return Ok(Target::Through);
        }
        let followed = std::fs::metadata(path)?;
        let kind = followed.file_type();
        if kind.is_file() {
            let real = if own.file_type().is_symlink() { std::fs::canonicalize(path)? } else { path.to_path_buf() };
            return Ok(Target::Replaced(real));
        }
        if kind.is_dir() {
            return Err(io::Error::new(io::ErrorKind::IsADirectory, "a directory is there"));
        }
        if kind.is_block_device() {
            return Err(io::Error::other("a block device is there: rocescope writes no report onto a disk"));
        }
        Ok(Target::Through)
    }
}

/// Does the link `path` point into `/proc` (`/dev/stdout` → `/proc/self/fd/1`)?
fn links_into_proc(path: &Path) -> bool {
    std::fs::read_link(path).is_ok_and(|to| to.starts_with("/proc"))
}

/// Is `path` inside `/proc` once its directory's links are followed (`/dev/fd/1`)?
fn in_proc(path: &Path) -> bool {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::canonicalize(dir).is_ok_and(|d| d.starts_with("/proc"))
}

/// Opens a target written straight through: this process's standard output where the target
/// is its file (a shared position), else the target itself, created if a link pointed at
/// nothing.
fn open_through(path: &Path) -> io::Result<File> {
    if let Some(stdout) = standard_output_if(path) {
        return Ok(stdout);
    }
    OpenOptions::new().write(true).create(true).truncate(false).open(path)
}

/// A handle on standard output when `path` is the file standard output writes to.
fn standard_output_if(path: &Path) -> Option<File> {
    use std::os::fd::AsFd;
    let stdout = File::from(io::stdout().as_fd().try_clone_to_owned().ok()?);
    let (target, ours) = (std::fs::metadata(path).ok()?, stdout.metadata().ok()?);
    (target.dev() == ours.dev() && target.ino() == ours.ino()).then_some(stdout)
}

/// Opens `path` for a file that is read while it grows (a live capture's `-w`): created or
/// truncated in place where it is a regular file, written straight through otherwise.
pub fn create_streaming(path: &Path) -> io::Result<File> {
    match Target::of(path)? {
        Target::Replaced(real) => File::create(real),
        Target::Through => open_through(path),
    }
}

/// The directory for scratch files that a write to `target` needs beside it: the target's own
/// where it is a regular file (a rename away), the system's temporary directory otherwise.
pub fn scratch_dir(target: &Path) -> io::Result<PathBuf> {
    Ok(match Target::of(target)? {
        Target::Replaced(real) => directory_of(&real).to_path_buf(),
        Target::Through => std::env::temp_dir(),
    })
}

/// The directory `path` stands in.
fn directory_of(path: &Path) -> &Path {
    path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."))
}

/// A file being written under a temporary name in the output directory; removed when dropped
/// before [`AtomicFile::commit`] gives it its name. A target written straight through has no
/// temporary name and nothing to rename.
pub struct AtomicFile {
    /// The temporary name and the name it gets, for a file replaced whole.
    renamed: Option<(PathBuf, PathBuf)>,
    committed: bool,
}

impl AtomicFile {
    /// Starts `dir/name` as `dir/.name.partial`.
    pub fn create(dir: &Path, name: &str) -> io::Result<(AtomicFile, File)> {
        Self::create_at(&dir.join(name))
    }

    /// Starts the file `target`: a regular file under the temporary name `.NAME.PID.partial`
    /// beside it (removing those a killed run left for it), anything else opened in place
    /// (see [`Target`]).
    pub fn create_at(target: &Path) -> io::Result<(AtomicFile, File)> {
        let real = match Target::of(target)? {
            Target::Through => return Ok((AtomicFile { renamed: None, committed: false }, open_through(target)?)),
            Target::Replaced(real) => real,
        };
        let name = real.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        remove_stale(directory_of(&real), &[&name]);
        let partial = real.with_file_name(format!(".{name}.{}.partial", std::process::id()));
        let file = File::create(&partial)?;
        Ok((AtomicFile { renamed: Some((partial, real)), committed: false }, file))
    }

    pub fn commit(mut self) -> io::Result<()> {
        if let Some((partial, target)) = &self.renamed {
            std::fs::rename(partial, target)?;
        }
        self.committed = true;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if let (Some((partial, _)), false) = (&self.renamed, self.committed) {
            let _ = std::fs::remove_file(partial);
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

/// Writes `value` as pretty JSON, a line, into the file `name` in `dir`, whole.
pub fn write_json(dir: &Path, name: &str, value: &impl serde::Serialize) -> io::Result<Written> {
    let (atomic, file) = AtomicFile::create(dir, name)?;
    let mut out = io::BufWriter::new(file);
    serde_json::to_writer_pretty(&mut out, value)?;
    out.write_all(b"\n")?;
    out.flush()?;
    drop(out);
    Ok(Written(vec![atomic]))
}

/// Writes `text` as the file `path`, whole (see [`AtomicFile`]).
pub fn write_whole(path: &Path, text: &str) -> io::Result<()> {
    let (atomic, mut file) = AtomicFile::create_at(path)?;
    file.write_all(text.as_bytes())?;
    file.flush()?;
    atomic.commit()
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
    fn regular_files_are_replaced_and_devices_fifos_and_proc_links_written_through() {
        let dir = tempfile::tempdir().expect("temp dir");
        let at = |name: &str| dir.path().join(name);
        std::fs::write(at("page.html"), b"old").expect("write");
        std::os::unix::fs::symlink(at("page.html"), at("link.html")).expect("symlink");
        std::os::unix::fs::symlink(at("absent.html"), at("dangling.html")).expect("symlink");
        let real = std::fs::canonicalize(at("page.html")).expect("canonical");
        assert_eq!(Target::of(&at("new.html")).expect("new"), Target::Replaced(at("new.html")));
        assert_eq!(Target::of(&at("page.html")).expect("file"), Target::Replaced(at("page.html")));
        assert_eq!(Target::of(&at("link.html")).expect("link"), Target::Replaced(real), "the link is kept");
        assert_eq!(Target::of(&at("dangling.html")).expect("dangling"), Target::Through);
        for device in ["/dev/null", "/dev/stdout", "/dev/fd/1", "/proc/self/fd/2"] {
            assert_eq!(Target::of(Path::new(device)).expect(device), Target::Through, "{device}");
        }
        assert!(Target::of(dir.path()).is_err(), "a directory");
        let fifo = at("fifo");
        if std::process::Command::new("mkfifo").arg(&fifo).status().is_ok_and(|s| s.success()) {
            assert_eq!(Target::of(&fifo).expect("fifo"), Target::Through);
        }
    }

    #[test]
    fn a_file_written_through_has_nothing_to_rename_or_remove() {
        let dir = tempfile::tempdir().expect("temp dir");
        let target = dir.path().join("dangling.html");
        std::os::unix::fs::symlink(dir.path().join("absent.html"), &target).expect("symlink");
        let (atomic, mut file) = AtomicFile::create_at(&target).expect("create");
        file.write_all(b"page").expect("write");
        atomic.commit().expect("commit");
        assert!(std::fs::symlink_metadata(&target).expect("link").file_type().is_symlink(), "the link is kept");
        assert_eq!(std::fs::read(dir.path().join("absent.html")).expect("read"), b"page");
        let leftovers = std::fs::read_dir(dir.path()).expect("dir").count();
        assert_eq!(leftovers, 2, "no temporary file beside");
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
