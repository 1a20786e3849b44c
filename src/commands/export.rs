//! The `export` command: the analysis of `analyze`, with every frame and the report's tables
//! written into a Parquet dataset ([`crate::output::dataset`]).

use std::io;
use std::path::Path;

use super::exit::{Failure, Outcome};
use super::passes;
use super::refuse_input;
use super::saved_run::{encode_state, resume, run_so_far, write_state};
use crate::analyze::{Analyzer, Config, SavedRun, assemble};
use crate::capture::Inputs;
use crate::cli::{ExportArgs, report_damage, report_undecoded, report_unreadable};
use crate::display_filter::Selection;
use crate::fields::{self, Field};
use crate::output::dataset::{self, Dataset, VerdictRows};
use crate::output::packet::columns::FRAME_COLUMNS;
use crate::pipeline::{self, Analyse};
use crate::progress::Progress;

pub fn run(args: &ExportArgs) -> Outcome {
    let mut config = args.analysis.config().map_err(Failure::Usage)?;
    let decoder = args.analysis.ports.decoder();
    config.time_source = passes::choose(&args.files, args.times.time_source, &decoder)?;
    let decoder = decoder.with_time_source(config.time_source);
    let resumed = args.resume.as_deref().map(|path| going_on(path, config, args)).transpose()?;
    let columns = match &resumed {
        Some((_, progress)) => progress.fields.iter().map(|name| fields::for_option("-e", name)).collect(),
        None => frame_fields(&args.fields),
    }
    .map_err(Failure::Usage)?;
    if let Some(state) = &args.state {
        refuse_input(state, &args.files, "the saved analysis").map_err(Failure::Output)?;
    }
    let mut selection = Selection::new(args.display_filter.as_deref()).map_err(Failure::Usage)?;
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 2);
    report_unreadable(&unreadable);
    let out = |e: io::Error| Failure::Output(format!("cannot write the dataset into {}: {e}", args.dataset.display()));
    let (dataset, analyzer, mut input_reports) = match resumed {
        Some((saved, progress)) => {
            inputs.number_from(saved.frames_read.saturating_add(1));
            selection = selection.continuing(saved.first_ts_ns);
            (Dataset::going_on(&args.dataset, &progress).map_err(out)?, saved.analyzer, saved.inputs)
        }
        None => (
            Dataset::create(&args.dataset, &capture_name(args)).map_err(out)?,
            Analyzer::with_verdicts(config),
            Vec::new(),
        ),
    };
    let (mut rows, frames) = dataset.frames(&columns).map_err(out)?;
    let mut analysis = Exporting { analyzer, frames };
    let progress = Progress::new(inputs.size(), !args.quiet);
    let threads = args.threads as usize;
    let beside = Some(&mut rows as &mut dyn pipeline::Beside);
    let set_progress = |bytes| progress.set(bytes);
    let ran =
        pipeline::analyse_beside(&mut inputs, &decoder, &mut selection, &mut analysis, beside, threads, &set_progress);
    progress.finish();
    let damage = ran.damage;
    ran.result.and_then(|()| rows.finish()).map_err(out)?;
    input_reports.extend(assemble::input_reports(inputs.readers(), &damage));
    let mut run = run_so_far(analysis.analyzer, &inputs, &selection, args.display_filter.as_ref(), input_reports);
    // the state is written once the dataset it describes is
    let state = match args.state.as_deref() {
        Some(path) => Some((path, state_bytes(path, &mut run, &mut analysis.frames, &dataset, &columns, &out)?)),
        None => None,
    };
    let SavedRun { analyzer, inputs: input_reports, .. } = run;
    analysis.analyzer = analyzer;
    let Exporting { analyzer, frames } = analysis.finish().map_err(out)?;
    report_damage(&damage);
    report_undecoded(analyzer.undecoded_links());
    if analyzer.frames() == 0 && (!unreadable.is_empty() || !damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    let report = assemble::report(&analyzer, input_reports, None);
    dataset.finish(frames, &report).map_err(out)?;
    state.map_or(Ok(()), |(path, bytes)| write_state(path, &bytes))
}

/// The state `path` is to hold: `run`, with where the capture's frames stand once every row
/// whose verdict is in is written (the others are provisional).
fn state_bytes(
    path: &Path,
    run: &mut SavedRun,
    frames: &mut VerdictRows,
    dataset: &Dataset,
    columns: &[&'static Field],
    out: &dyn Fn(io::Error) -> Failure,
) -> Result<Vec<u8>, Failure> {
    let (provisional_from, provisional_rows) = frames.suspend().map_err(out)?;
    let capture = dataset.capture().to_string();
    let fields = columns.iter().map(|f| f.name.to_string()).collect();
    let stands = dataset::Progress { capture, fields, provisional_from, provisional_rows };
    run.output = serde_json::to_vec(&stands).map_err(|e| out(e.into()))?;
    encode_state(path, run)
}

/// The capture's name: --capture-name, else the first file's.
fn capture_name(args: &ExportArgs) -> String {
    match &args.capture_name {
        Some(name) => dataset::partition_value(name),
        None => dataset::capture_name(args.files.first().map_or(Path::new("-"), |f| f.as_path())),
    }
}

/// The export the state `path` saved, to go on with, and where it left its capture's frames:
/// its options must be these, and a capture name or columns given must be its own.
fn going_on(path: &Path, config: Config, args: &ExportArgs) -> Result<(SavedRun, dataset::Progress), Failure> {
    let saved = resume(path, config, args.display_filter.as_deref(), &args.files)?;
    let progress: dataset::Progress = serde_json::from_slice(&saved.output).map_err(|_| {
        Failure::Usage(format!(
            "{} was not saved by export: export goes on only from a state an export saved",
            path.display()
        ))
    })?;
    if let Some(name) = args.capture_name.as_deref().map(dataset::partition_value).filter(|n| *n != progress.capture) {
        return Err(Failure::Usage(format!(
            "{} was saved exporting the capture {}: --resume goes on with it, not {name}",
            path.display(),
            progress.capture
        )));
    }
    let asked: Vec<String> =
        frame_fields(&args.fields).map_err(Failure::Usage)?.iter().map(|f| f.name.to_string()).collect();
    if !args.fields.is_empty() && asked != progress.fields {
        return Err(Failure::Usage(format!(
            "{} was saved with other columns (-e): --resume writes the ones it was saved with",
            path.display()
        )));
    }
    Ok((saved, progress))
}

/// The frames' columns: the fields named with `-e` (or the default set), frame.number and
/// frame.time_epoch first where they are not named; an unknown name is an error that
/// suggests the nearest.
fn frame_fields(names: &[String]) -> Result<Vec<&'static Field>, String> {
    let named: Vec<&str> = if names.is_empty() {
        FRAME_COLUMNS.to_vec()
    } else {
        let always = ["frame.number", "frame.time_epoch"].into_iter().filter(|a| !names.iter().any(|n| n == a));
        always.chain(names.iter().map(String::as_str)).collect()
    };
    named.into_iter().map(|name| fields::for_option("-e", name)).collect()
}

/// The analysis, each frame's verdict added to its row once final.
struct Exporting {
    analyzer: Analyzer,
    frames: VerdictRows,
}

impl Exporting {
    /// Adds the verdicts that are final.
    fn verdicts(&mut self) -> io::Result<()> {
        while let Some((_, verdict)) = self.analyzer.next_verdict() {
            self.frames.push(&verdict)?;
        }
        Ok(())
    }

    /// Ends the analysis: every verdict is final.
    fn finish(mut self) -> io::Result<Exporting> {
        self.analyzer.finish();
        self.verdicts()?;
        Ok(self)
    }
}

impl Analyse for Exporting {
    fn analyzer(&mut self) -> &mut Analyzer {
        &mut self.analyzer
    }

    fn observed(&mut self) -> io::Result<()> {
        self.verdicts()
    }
}
