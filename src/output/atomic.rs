//! Files that appear whole or not at all: each is written under a temporary name in its
//! directory and renamed once complete; dropped before then, it is removed. A failed run (a full
//! disk, say) leaves neither a half-written file nor a partial set.

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

    /// Starts the file `target` under the temporary name `.NAME.partial` beside it.
    pub fn create_at(target: &Path) -> io::Result<(AtomicFile, File)> {
        let name = target.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let partial = target.with_file_name(format!(".{name}.partial"));
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
