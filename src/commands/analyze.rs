//! The `analyze` command: read every input in one streaming pass, analyse, and print the
//! summary or the JSON report.

use std::io;

use super::exit::{Failure, Outcome};
use super::refuse_input;
use super::reporting::{self, Reporting};
use super::saved_run::{resume, run_so_far, save_state};
use super::time_source;
use crate::analyze::frame::FrameSummary;
use crate::analyze::{Analyzer, SavedRun, assemble};
use crate::capture::{Frame as InputFrame, Inputs};
use crate::cli::{AnalyzeArgs, report_damage, report_undecoded, report_unreadable};
use crate::decode::Decoder;
use crate::display_filter::Selection;
use crate::ordered::InOrder;
use crate::output::atomic::Written;
#[cfg(feature = "tables")]
use crate::output::packet_table::PacketTable;
#[cfg(not(feature = "tables"))]
use crate::output::packet_table_absent::PacketTable;
use crate::pipeline::{self, Analyse, Raw};
use crate::progress::Progress;

pub fn run(args: &AnalyzeArgs) -> Outcome {
    if args.choice.chooses() && (args.state.is_some() || args.resume.is_some()) {
        return Err(Failure::Usage(
            "--qp, --ip and --opcode cannot choose the frames of a saved analysis, which records -Y only: say it with -Y (infiniband.bth.destqp == 0x12a, ip.addr == 10.0.0.1, infiniband.bth.opcode == 10)".into(),
        ));
    }
    let mut config = args.analysis.config().map_err(Failure::Usage)?;
    let decoder = Decoder::new(&args.analysis.roce_ports);
    config.time_source = time_source::choose(&args.files, args.times.time_source, &decoder)?;
    let decoder = decoder.with_time_source(config.time_source);
    let resumed = args
        .resume
        .as_deref()
        .map(|path| resume(path, config, args.display_filter.as_deref(), &args.files))
        .transpose()?;
    reporting::check_build(&reporting_of(args))?;
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 2);
    report_unreadable(&unreadable);
    if let Some(frames) = args.count {
        inputs.stop_after(frames);
    }
    reporting::prepare(&reporting_of(args), &args.files)
        .and_then(|()| {
            args.state.as_deref().map_or(Ok(()), |state| refuse_input(state, &args.files, "the saved analysis"))
        })
        .map_err(Failure::Output)?;
    let packet_table = packet_table(args)?;
    let mut selection =
        Selection::new(args.display_filter.as_deref()).map_err(Failure::Usage)?.choosing(args.choice.filter(None));
    let (analyzer, mut input_reports) = match resumed {
        Some(saved) => {
            inputs.number_from(saved.frames_read.saturating_add(1));
            selection = selection.continuing(saved.first_ts_ns);
            // an export's analysis gives each frame's verdict, which analyze does not take
            (saved.analyzer.without_verdicts(), saved.inputs)
        }
        None if packet_table.is_some() => (Analyzer::with_verdicts(config), Vec::new()),
        // a part analysed on its own keeps its first frames for a merge (`rocescope merge`)
        None if args.state.is_some() => (Analyzer::new(config).keeping_head(args.keep_frames), Vec::new()),
        None => (Analyzer::new(config), Vec::new()),
    };
    let table = packet_table.map(|t| TableFeed { ordered: InOrder::new(t, None, None), decoder: decoder.clone() });
    let mut analysis = Analysis { analyzer, table, goes_on: args.state.is_some() };
    let progress = Progress::new(inputs.size(), !args.quiet);
    let threads = args.threads as usize;
    let ran =
        pipeline::analyse(&mut inputs, &decoder, &mut selection, &mut analysis, threads, &|bytes| progress.set(bytes));
    progress.finish();
    let damage = ran.damage;
    let packet_table_failed = |e: io::Error| Failure::Output(format!("cannot write the packet table: {e}"));
    ran.result.map_err(packet_table_failed)?;
    input_reports.extend(assemble::input_reports(inputs.readers(), &damage));
    let run = run_so_far(analysis.analyzer, &inputs, &selection, args.display_filter.as_ref(), input_reports);
    if let Some(path) = &args.state {
        save_state(path, &run)?;
    }
    let SavedRun { analyzer, inputs: input_reports, .. } = run;
    analysis.analyzer = analyzer;
    let Analysis { analyzer, table, .. } = analysis.finish().map_err(packet_table_failed)?;
    report_damage(&damage);
    report_undecoded(analyzer.undecoded_links());
    if analyzer.frames() == 0 && (!unreadable.is_empty() || !damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    let files = table.map_or(Ok(Written::default()), |t| t.ordered.sink.finish());
    reporting::report(&analyzer, input_reports, &reporting_of(args), files)
}

/// The per-packet table `--out DIR --packets` writes.
#[cfg(feature = "tables")]
fn packet_table(args: &AnalyzeArgs) -> Result<Option<PacketTable>, Failure> {
    let create = |dir: &std::path::Path| {
        PacketTable::create(dir)
            .map_err(|e| Failure::Output(format!("cannot write the packet table into {}: {e}", dir.display())))
    };
    args.out.as_deref().filter(|_| args.packets).map(create).transpose()
}

/// A build without tables has no per-packet table (and refuses `--out`).
#[cfg(not(feature = "tables"))]
fn packet_table(_: &AnalyzeArgs) -> Result<Option<PacketTable>, Failure> {
    Ok(None)
}

/// Where `analyze` reports.
fn reporting_of(args: &AnalyzeArgs) -> Reporting<'_> {
    Reporting {
        json: args.json,
        color: args.color.enabled(),
        out: args.out.as_deref(),
        html: args.html.as_deref(),
        fail_on: args.fail_on,
    }
}

/// The analysis and the per-packet table, which consume frames in order.
struct Analysis {
    analyzer: Analyzer,
    table: Option<TableFeed>,
    /// The analysis is saved once the inputs end, to go on later.
    goes_on: bool,
}

/// The per-packet table, fed each frame once its verdict is final; its decoder computes the
/// ICRC while decoding (the analysis thread's frames are decoded again for the table).
struct TableFeed {
    ordered: InOrder<PacketTable>,
    decoder: Decoder,
}

impl Analyse for Analysis {
    fn analyzer(&mut self) -> &mut Analyzer {
        &mut self.analyzer
    }

    fn wants_bytes(&self) -> bool {
        self.table.is_some()
    }

    fn goes_on(&self) -> bool {
        self.goes_on
    }

    /// A frame's bytes, for the table.
    fn bytes(&mut self, frame: &FrameSummary, raw: Raw<'_>) -> io::Result<()> {
        let Some(t) = &mut self.table else { return Ok(()) };
        let packet = t.decoder.decode(&raw.record);
        let input = InputFrame { number: frame.number, file: raw.file, record: raw.record };
        t.ordered.take(&mut self.analyzer, &input, &packet, true, &t.decoder)
    }
}

impl Analysis {
    /// Ends the analysis and writes the last rows.
    fn finish(mut self) -> io::Result<Analysis> {
        match &mut self.table {
            Some(t) => t.ordered.finish(&mut self.analyzer, &t.decoder)?,
            None => self.analyzer.finish(),
        }
        Ok(self)
    }
}
