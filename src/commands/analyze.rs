//! The `analyze` command: read every input in one streaming pass, analyse, and print the
//! summary or the JSON report.

use std::io::{self, BufWriter, Write};

use crate::analyze::assemble;
use std::sync::{Arc, mpsc};

use memmap2::Mmap;

use super::exit::{Failure, Outcome, fail_on, written};
use crate::analyze::Analyzer;
use crate::analyze::frame::FrameSummary;
use crate::capture::{CaptureError, Inputs, LinkType, Record, mapped};
use crate::cli::{AnalyzeArgs, report_damage, report_unreadable};
use crate::decode::Decoder;
use crate::display_filter::Selection;
use crate::ordered::InOrder;
use crate::output::atomic::{Written, write_text};
use crate::output::packet_table::PacketTable;
use crate::output::tables;
use crate::output::{analysis_text, html};
use crate::progress::{Progress, UPDATE_EVERY};

pub fn run(args: &AnalyzeArgs) -> Outcome {
    let config = args.analysis.config().map_err(Failure::Usage)?;
    let (mut inputs, unreadable) = Inputs::open(&args.files, args.threads > 2);
    report_unreadable(&unreadable);
    let prepared = args.out.as_deref().map_or(Ok(()), |dir| prepare_out_dir(dir, args));
    prepared
        .and_then(|()| args.html.as_deref().map_or(Ok(()), |page| refuse_input(page, args)))
        .map_err(Failure::Output)?;
    let packet_table = match (&args.out, args.packets) {
        (Some(dir), true) => Some(
            PacketTable::create(dir)
                .map_err(|e| Failure::Output(format!("cannot write the packet table into {}: {e}", dir.display())))?,
        ),
        _ => None,
    };
    let mut selection = Selection::new(args.display_filter.as_deref()).map_err(Failure::Usage)?;
    let decoder = Decoder::new(&args.analysis.roce_ports);
    let analyzer = if packet_table.is_some() { Analyzer::with_verdicts(config) } else { Analyzer::new(config) };
    let table = packet_table.map(|t| TableFeed { ordered: InOrder::new(t, None, None), decoder: decoder.clone() });
    let analysis = Analysis { analyzer, table };
    let progress = Progress::new(inputs.size(), !args.quiet);
    let (analysis, damage) = if args.threads > 1 {
        analyse_on_a_second_thread(&mut inputs, &decoder, &mut selection, analysis, &progress)
    } else {
        analyse_here(&mut inputs, &decoder, &mut selection, analysis, &progress)
    };
    progress.finish();
    let Analysis { analyzer, table } = analysis
        .and_then(Analysis::finish)
        .map_err(|e| Failure::Output(format!("cannot write the packet table: {e}")))?;
    report_damage(&damage);
    if analyzer.totals.frames.frames == 0 && (!unreadable.is_empty() || !damage.is_empty()) {
        return Err(Failure::NoInput(String::new()));
    }
    let report = assemble::report_of_files(&analyzer, inputs.readers(), &damage);
    let page = (args.out.is_some() || args.html.is_some()).then(|| html::render(&report, &analyzer));
    if let Some(dir) = &args.out {
        // every file of the run, or none: they are named together once all are complete
        table
            .map_or(Ok(Written::default()), |t| t.ordered.sink.finish())
            .and_then(|mut files| {
                files.append(tables::write_report(dir, &report)?);
                files.append(write_text(dir, "index.html", page.as_deref().unwrap_or_default())?);
                files.commit()
            })
            .map_err(|e| Failure::Output(format!("cannot write the report into {}: {e}", dir.display())))?;
    }
    if let (Some(path), Some(page)) = (&args.html, &page) {
        let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        write_text(dir, &name, page)
            .and_then(Written::commit)
            .map_err(|e| Failure::Output(format!("cannot write {}: {e}", path.display())))?;
    }
    let mut out = BufWriter::new(io::stdout().lock());
    let result = if args.json {
        serde_json::to_writer_pretty(&mut out, &report).map_err(io::Error::from).and_then(|()| out.write_all(b"\n"))
    } else {
        analysis_text::write_summary(&mut out, &report, args.color.enabled())
    };
    written(result.and_then(|()| out.flush()), |e| format!("cannot write the report: {e}"))?;
    fail_on(&report, args.fail_on)
}

/// The files `--out` writes.
const OUT_FILES: &[&str] = &[
    "report.json",
    "index.html",
    "flows.csv",
    "flows.parquet",
    "retransmit_episodes.csv",
    "retransmit_episodes.parquet",
    "findings.csv",
    "findings.parquet",
    "pfc.csv",
    "pfc.parquet",
    "packets.csv",
    "packets.parquet",
];

/// Creates the output directory and refuses to write over an input file.
fn prepare_out_dir(dir: &std::path::Path, args: &AnalyzeArgs) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    OUT_FILES.iter().try_for_each(|name| refuse_input(&dir.join(name), args))
}

/// An error when `target` is one of the input files.
fn refuse_input(target: &std::path::Path, args: &AnalyzeArgs) -> Result<(), String> {
    let existing = std::fs::canonicalize(target).ok();
    if existing.is_some_and(|e| args.files.iter().any(|f| std::fs::canonicalize(f).is_ok_and(|i| i == e))) {
        return Err(format!("refusing to overwrite the input {} with a report file", target.display()));
    }
    Ok(())
}

/// The analysis and the per-packet table, which consume frames in order.
struct Analysis {
    analyzer: Analyzer,
    table: Option<TableFeed>,
}

/// The per-packet table, fed each frame once its verdict is final; its decoder computes the
/// ICRC while decoding (the analysis thread's frames are decoded again for the table).
struct TableFeed {
    ordered: InOrder<PacketTable>,
    decoder: Decoder,
}

/// A frame's bytes as the table needs them, from the file it came from.
struct Raw<'a> {
    file: usize,
    record: Record<'a>,
}

impl Analysis {
    /// Takes a frame: its summary for the analysis, and its bytes when there is a table.
    fn consume(&mut self, frame: &FrameSummary, raw: Option<Raw<'_>>) -> io::Result<()> {
        self.analyzer.observe(frame);
        let (Some(t), Some(raw)) = (&mut self.table, raw) else { return Ok(()) };
        let packet = t.decoder.decode(&raw.record);
        t.ordered.take(&mut self.analyzer, frame.number, raw.file, &raw.record, &packet, true, &t.decoder)
    }

    /// Ends the analysis and writes the last rows.
    fn finish(mut self) -> io::Result<Analysis> {
        match &mut self.table {
            Some(t) => t.ordered.finish(&mut self.analyzer, &t.decoder)?,
            None => self.analyzer.finish(),
        }
        Ok(self)
    }
}

/// Frames handed to the analysis thread at a time.
const BATCH: usize = 1024;

/// Decodes and analyses every frame on this thread.
fn analyse_here(
    inputs: &mut Inputs,
    decoder: &Decoder,
    selection: &mut Selection,
    mut analysis: Analysis,
    progress: &Progress,
) -> (io::Result<Analysis>, Vec<CaptureError>) {
    let mut damage = Vec::new();
    while let Some(frame) = inputs.next_frame() {
        let packet = decoder.decode(&frame.record);
        let raw = analysis.table.is_some().then_some(Raw { file: frame.file, record: frame.record });
        if selection.keeps(frame.number, &packet)
            && let Err(e) = analysis.consume(&FrameSummary::of(frame.number, &packet), raw)
        {
            return (Err(e), damage);
        }
        if frame.number.is_multiple_of(UPDATE_EVERY) {
            progress.set(inputs.position());
        }
        if inputs.has_damage() {
            damage.append(&mut inputs.take_damage());
        }
    }
    damage.append(&mut inputs.take_damage());
    (Ok(analysis), damage)
}

/// A frame summary on its way to the analysis thread, with where its bytes lie in its file's
/// memory mapping when the ICRC is left to that thread.
struct Work {
    summary: FrameSummary,
    file: usize,
    at: usize,
    /// A copy of the frame, for the per-packet table.
    copy: Option<Copied>,
}

/// A frame's record with its own bytes.
struct Copied {
    ts_ns: i64,
    orig_len: u32,
    link_type: LinkType,
    offset: u64,
    data: Vec<u8>,
}

impl Copied {
    fn raw(&self, file: usize) -> Raw<'_> {
        let record = Record {
            ts_ns: self.ts_ns,
            orig_len: self.orig_len,
            data: &self.data,
            link_type: self.link_type,
            offset: self.offset,
        };
        Raw { file, record }
    }
}

/// Decodes on this thread and analyses on another, which receives the frame summaries in
/// order, in batches; the result is the same as [`analyse_here`]'s. When every input is
/// memory-mapped, the ICRCs (the work that reads every byte of every packet) are computed on
/// the analysis thread too, which balances the two threads, and that thread releases the
/// mapped pages behind it.
fn analyse_on_a_second_thread(
    inputs: &mut Inputs,
    decoder: &Decoder,
    selection: &mut Selection,
    mut analysis: Analysis,
    progress: &Progress,
) -> (io::Result<Analysis>, Vec<CaptureError>) {
    let mappings: Vec<_> = inputs.share_mappings();
    let defer = mappings.iter().all(Option::is_some) && !selection.reads_icrc();
    let copying = analysis.table.is_some();
    let decoder = if defer { decoder.clone().deferring_icrc() } else { decoder.clone() };
    let mut damage = Vec::new();
    let result = std::thread::scope(|scope| {
        let (batches, received) = mpsc::sync_channel::<Vec<Work>>(4);
        let (recycle, recycled) = mpsc::channel::<Vec<Work>>();
        let mappings = &mappings;
        let worker = scope.spawn(move || {
            let mut released = vec![0usize; mappings.len()];
            for mut batch in received {
                for i in 0..batch.len() {
                    if let Some(ahead) = batch.get(i + PREFETCH_AHEAD) {
                        prefetch_frame(mappings, ahead);
                    }
                    let work = &mut batch[i];
                    settle_deferred_icrc(mappings, work);
                    let raw = work.copy.as_ref().map(|c| c.raw(work.file));
                    analysis.consume(&work.summary, raw)?;
                }
                release_consumed(mappings, &batch, &mut released);
                batch.clear();
                let _ = recycle.send(batch);
            }
            Ok(analysis)
        });
        let mut batch = Vec::with_capacity(BATCH);
        while let Some(frame) = inputs.next_frame() {
            let packet = decoder.decode(&frame.record);
            let number = frame.number;
            if selection.keeps(number, &packet) {
                let at = mappings
                    .get(frame.file)
                    .and_then(Option::as_ref)
                    .map_or(0, |map| (frame.record.data.as_ptr() as usize).saturating_sub(map.as_ptr() as usize));
                let r = &frame.record;
                let copy = copying.then(|| Copied {
                    ts_ns: r.ts_ns,
                    orig_len: r.orig_len,
                    link_type: r.link_type,
                    offset: r.offset,
                    data: r.data.to_vec(),
                });
                batch.push(Work { summary: FrameSummary::of(number, &packet), file: frame.file, at, copy });
            }
            if number.is_multiple_of(UPDATE_EVERY) {
                progress.set(inputs.position());
            }
            if batch.len() == BATCH {
                let next = recycled.try_recv().unwrap_or_else(|_| Vec::with_capacity(BATCH));
                if batches.send(std::mem::replace(&mut batch, next)).is_err() {
                    break; // the analysis stopped on an error, which join reports
                }
            }
            if inputs.has_damage() {
                damage.append(&mut inputs.take_damage());
            }
        }
        let _ = batches.send(batch);
        drop(batches);
        worker.join().unwrap_or_else(|_| Err(io::Error::other("the analysis thread failed")))
    });
    damage.append(&mut inputs.take_damage());
    (result, damage)
}

/// How many frames ahead of its ICRC the analysis thread prefetches a frame's bytes.
const PREFETCH_AHEAD: usize = 4;

/// Starts loading the bytes of a frame whose ICRC is deferred into the cache.
fn prefetch_frame(mappings: &[Option<Arc<Mmap>>], work: &Work) {
    let deferred = work.summary.roce().is_some_and(|r| r.deferred_icrc.is_some());
    let frame = mappings
        .get(work.file)
        .and_then(Option::as_ref)
        .and_then(|map| map.get(work.at..work.at + work.summary.caplen as usize));
    if let (true, Some(bytes)) = (deferred, frame) {
        mapped::prefetch(bytes);
    }
}

/// Computes a deferred ICRC from the frame's bytes in its file's mapping.
fn settle_deferred_icrc(mappings: &[Option<Arc<Mmap>>], work: &mut Work) {
    let (file, at, caplen) = (work.file, work.at, work.summary.caplen as usize);
    let Some(roce) = work.summary.roce_mut() else { return };
    let Some(job) = roce.deferred_icrc else { return };
    let frame = mappings.get(file).and_then(Option::as_ref).and_then(|map| map.get(at..at + caplen));
    match frame.and_then(|bytes| job.compute(bytes)) {
        Some((status, computed)) => roce.settle_icrc(status, computed),
        None => roce.settle_icrc(crate::decode::IcrcStatus::Unverifiable, 0),
    }
}

/// Releases the mapped pages every file's frames have been analysed past.
fn release_consumed(mappings: &[Option<Arc<Mmap>>], batch: &[Work], released: &mut [usize]) {
    for (file, map) in mappings.iter().enumerate() {
        let Some(map) = map else { continue };
        let Some(end) = batch.iter().filter(|w| w.file == file).map(|w| w.at).max() else { continue };
        if let Some(done) = released.get_mut(file).filter(|done| end.saturating_sub(**done) >= mapped::RELEASE_EVERY) {
            *done = mapped::release(map, *done, end);
        }
    }
}
