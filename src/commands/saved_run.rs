//! `--state` and `--resume`: an analysis saved unfinished for a later run to go on from with
//! the capture's next files (docs/scale.md).

use std::fs::File;
use std::io::{self, BufReader, Write};
use std::path::{Path, PathBuf};

use super::exit::Failure;
use crate::analyze::combine::differences::differences;
use crate::analyze::roce::report::inputs::InputReport;
use crate::analyze::{Analyzer, Config, SavedRun};
use crate::capture::Inputs;
use crate::display_filter::Selection;
use crate::output::atomic::AtomicFile;

/// The run as it stands once `inputs` are read: `analyzer`, unfinished, and what the report
/// of the whole capture needs of the files (`reports`, every file read so far).
pub fn run_so_far(
    analyzer: Analyzer,
    inputs: &Inputs,
    selection: &Selection,
    display_filter: Option<&String>,
    reports: Vec<InputReport>,
) -> SavedRun {
    SavedRun {
        analyzer,
        frames_read: inputs.last_number(),
        first_ts_ns: selection.first_ts_ns(),
        display_filter: display_filter.cloned(),
        inputs: reports,
        output: Vec::new(),
    }
}

/// The analysis the state `path` saved, to go on with `files`: its settings must be `config`
/// and its display filter `filter`, and no file of `files` one it read already, or the two
/// parts would not make one analysis.
pub fn resume(path: &Path, config: Config, filter: Option<&str>, files: &[PathBuf]) -> Result<SavedRun, Failure> {
    let saved = load_state(path)?;
    if let Some(file) = files.iter().find(|f| saved.inputs.iter().any(|i| same_file(Path::new(&i.file), f))) {
        return Err(Failure::Usage(format!(
            "{} already holds {}: --resume goes on with the capture's next files, and would count its frames twice",
            path.display(),
            file.display()
        )));
    }
    if saved.analyzer.config() != config {
        let each: Vec<String> = differences(&saved.analyzer.config(), &config)
            .into_iter()
            .map(|(option, saved, now)| format!("{option} {saved} (this run: {now})"))
            .collect();
        return Err(Failure::Usage(format!(
            "{} was saved with {}: --resume takes the options it was saved with",
            path.display(),
            each.join(", ")
        )));
    }
    if saved.display_filter.as_deref() != filter {
        let shown = |f: Option<&str>| f.map_or("none".to_string(), |f| format!("\"{f}\""));
        return Err(Failure::Usage(format!(
            "{} was saved with the display filter {}: --resume takes the same -Y, not {}",
            path.display(),
            shown(saved.display_filter.as_deref()),
            shown(filter)
        )));
    }
    Ok(saved)
}

/// Are `a` and `b` one file (standard input never is: each run reads what it is given)?
fn same_file(a: &Path, b: &Path) -> bool {
    let stdin = Path::new("-");
    if a == stdin || b == stdin {
        return false;
    }
    a == b || matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// The analysis the state `path` saved.
pub fn load_state(path: &Path) -> Result<SavedRun, Failure> {
    let unreadable = |e: io::Error| Failure::NoInput(format!("cannot read the saved analysis {}: {e}", path.display()));
    let file = File::open(path).map_err(unreadable)?;
    let stored = file.metadata().map_err(unreadable)?.len();
    SavedRun::load(BufReader::new(file), stored).map_err(unreadable)
}

/// Writes `saved` into `path`, whole or not at all.
pub fn save_state(path: &Path, saved: &SavedRun) -> Result<(), Failure> {
    write_state(path, &encode_state(path, saved)?)
}

/// `saved` as the state file `path` will hold, to be written once what it says is true.
pub fn encode_state(path: &Path, saved: &SavedRun) -> Result<Vec<u8>, Failure> {
    let mut bytes = Vec::new();
    saved.save(&mut bytes).map_err(|e| cannot_save(path, e))?;
    Ok(bytes)
}

/// Writes a state's bytes into `path`, whole or not at all.
pub fn write_state(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let (file, mut out) = AtomicFile::create_at(path).map_err(|e| cannot_save(path, e))?;
    out.write_all(bytes).and_then(|()| file.commit()).map_err(|e| cannot_save(path, e))
}

fn cannot_save(path: &Path, e: io::Error) -> Failure {
    Failure::Output(format!("cannot save the analysis into {}: {e}", path.display()))
}
