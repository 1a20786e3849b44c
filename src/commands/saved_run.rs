//! `--state` and `--resume`: an analysis saved unfinished for a later run to go on from with
//! the capture's next files (docs/scale.md).

use std::fs::File;
use std::io::{self, BufReader, BufWriter, Write};
use std::path::Path;

use super::exit::Failure;
use crate::analyze::report::InputReport;
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

/// The analysis the state `path` saved, to go on with: its settings must be `config` and its
/// display filter `filter`, or the two parts would not make one analysis.
pub fn resume(path: &Path, config: Config, filter: Option<&str>) -> Result<SavedRun, Failure> {
    let unreadable = |e: io::Error| Failure::NoInput(format!("cannot read the saved analysis {}: {e}", path.display()));
    let saved = File::open(path).and_then(|f| SavedRun::load(BufReader::new(f))).map_err(unreadable)?;
    if saved.analyzer.config() != config {
        return Err(Failure::Usage(format!(
            "{} was saved with other analysis options (or another --time-source choice): --resume takes the options it was saved with",
            path.display()
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

/// Writes `saved` into `path`, whole or not at all.
pub fn save_state(path: &Path, saved: &SavedRun) -> Result<(), Failure> {
    let failed = |e: io::Error| Failure::Output(format!("cannot save the analysis into {}: {e}", path.display()));
    let (file, out) = AtomicFile::create_at(path).map_err(failed)?;
    let mut out = BufWriter::new(out);
    saved.save(&mut out).and_then(|()| out.flush()).and_then(|()| file.commit()).map_err(failed)
}
