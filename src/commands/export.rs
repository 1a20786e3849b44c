//! The `export` command: the analysis of `analyze`, with every frame and the report's tables
//! written into a Parquet dataset ([`crate::output::dataset`]).

use std::io;

use super::exit::{Failure, Outcome};
use super::time_source;
use crate::analyze::{Analyzer, assemble};
use crate::capture::Inputs;
use crate::cli::{ExportArgs, report_damage, report_undecoded, report_unreadable};
use crate::decode::Decoder;
use crate::display_filter::Selection;
use crate::fields::{self, Field};
use crate::output::dataset::{self, DEFAULT_FRAME_FIELDS, Dataset, VerdictRows};
use crate::pipeline::{self, Analyse};
use crate::progress::Progress;

pub fn run(args: &ExportArgs) -> Outcome {
    let mut config = args.analysis.config().map_err(Failure::Usage)?;
    let columns = frame_fields(&args.fields).map_err(Failure::Usage)?;
    let decoder = Decoder::new(&args.analysis.roce_ports);
    config.time_source = time_source::choose(&args.files, args.times.time_source, &decoder)?;
    let decoder = decoder.with_time_source(config.time_source);
    let mut selection = Selection::new(args.display_filter.as_deref()).map_err(Failure::Usage)?;
    let capture = match &args.capture_name {
        Some(name) => dataset::partition_value(name),
        None => dataset::capture_name(args.files.first().map_or(std::path::Path::new("-"), |f| f.as_path())),
    };
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 2);
    report_unreadable(&unreadable);
    let out = |e: io::Error| Failure::Output(format!("cannot write the dataset into {}: {e}", args.dataset.display()));
    let dataset = Dataset::create(&args.dataset, &capture).map_err(out)?;
    let (mut rows, frames) = dataset.frames(&columns);
    let mut analysis = Exporting { analyzer: Analyzer::with_verdicts(config), frames };
    let progress = Progress::new(inputs.size(), !args.quiet);
    let threads = args.threads as usize;
    let beside = Some(&mut rows as &mut dyn pipeline::Beside);
    let set_progress = |bytes| progress.set(bytes);
    let ran =
        pipeline::analyse_beside(&mut inputs, &decoder, &mut selection, &mut analysis, beside, threads, &set_progress);
    progress.finish();
    let damage = ran.damage;
    let Exporting { analyzer, frames } =
        ran.result.and_then(|()| rows.finish()).and_then(|()| analysis.finish()).map_err(out)?;
    report_damage(&damage);
    report_undecoded(analyzer.undecoded_links());
    if analyzer.frames() == 0 && (!unreadable.is_empty() || !damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    let report = assemble::report_of_files(&analyzer, inputs.readers(), &damage);
    dataset.finish(frames, &report).map_err(out)
}

/// The frames' columns: the fields named with `-e` (or the default set), frame.number and
/// frame.time_epoch first where they are not named; an unknown name is an error that
/// suggests the nearest.
fn frame_fields(names: &[String]) -> Result<Vec<&'static Field>, String> {
    let named: Vec<&str> = if names.is_empty() {
        DEFAULT_FRAME_FIELDS.to_vec()
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
